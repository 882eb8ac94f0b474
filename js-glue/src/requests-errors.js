/**
 * Errors of `baton.request()`, recognisable by class (`instanceof`) and by `code`.
 *
 * @module tab-baton/requests-errors
 */

/**
 * A request that did not get its answer. `code`:
 * - 'NO_LEADER': no leader acknowledged it within `timeoutMs` (see NoLeaderError);
 * - 'TIMEOUT': a leader acknowledged it but no answer came within `timeoutMs`;
 * - 'REFUSED': the leader's `accept` filter refused it;
 * - 'TOO_LARGE': the message or the answer is over the size limit;
 * - 'TOO_MANY': this tab (this Baton) already has 64 requests waiting;
 * - 'DISPOSED': the Baton was disposed while the request waited.
 */
export class RequestError extends Error {
  constructor(code, message, details) {
    super(`${code}: ${message}`);
    this.name = 'RequestError';
    this.code = code;
    Object.assign(this, details);
  }
}

/** No leader answered the request within its `timeoutMs`: `code` 'NO_LEADER'. */
export class NoLeaderError extends RequestError {
  constructor(message, details) {
    super('NO_LEADER', message, details);
    this.name = 'NoLeaderError';
  }
}

/**
 * An error thrown (or a rejection) by the leader's `serve`, delivered to the caller: the
 * original `name`, `message` and `code` (when a string), plus `leader` and `epoch` of the
 * term that served it.
 */
export class RemoteError extends Error {
  constructor({ name, message, code }, details) {
    super(message);
    this.name = name;
    if (code !== undefined) this.code = code;
    Object.assign(this, details);
  }
}
