/**
 * The messages of requests and leader state on a resource's talk channel
 * (`baton/<namespace>/v<protocol>/talk/<resource>`, structured-clone objects), their
 * checks and their size estimate. Nothing received is trusted beyond its shape:
 * `check` names the counter a malformed, foreign-version or oversized message is
 * dropped under.
 *
 * Kinds (`k`): 'req' (a client asks, any leader may serve), 'ack' and 'res' (the leader
 * answers one client; an answer ready in the task that received the request is its own
 * acknowledgement, with no 'ack' before it), 'lead' (a term begins, or answers 'hello';
 * carries the term's state), 'state' (the leader's state changed), 'hello' (a new tab asks
 * who leads), 'bye' (a term ended).
 *
 * @module tab-baton/talk-wire
 */

import { PLAUSIBLE_EPOCH } from './constants.js';

export const TALK_PROTOCOL = 1;
/** Defaults and hard caps, one source for the adapter, the reducers and the checks. */
export const TALK_LIMITS = {
  maxMessageBytes: 64 * 1024, // size limit of a request, an answer, a state (sizeOf)
  maxPending: 64, // requests one tab (one Baton) may have waiting, all resources together
  maxServing: 256, // requests a leader serves at once; more are left unacknowledged (retried)
  repliesKept: 256, // answers a leader keeps to replay to a re-sent request of its term
  maxAskers: 8, // tabs one request id is answered to (the same app id sent from several tabs)
  idChars: 160,
  nameChars: 64,
  errorChars: 2048,
};
const KINDS = new Set(['req', 'ack', 'res', 'lead', 'state', 'hello', 'bye']);
/** Kinds of messages that speak for a term: they carry its epoch, and are believed only from its confirmed leader (talk-confirm.js). */
export const TERM_KINDS = new Set(['ack', 'res', 'lead', 'state', 'bye']);

/**
 * A size estimate of structured-clone data, in bytes: strings count 2 bytes a character,
 * binary its byteLength, numbers 8, every key and element its own. It stops counting past
 * `limit` (returns limit + 1), so a huge or deep value costs little to reject.
 * @param {unknown} value
 * @param {number} limit
 */
export function sizeOf(value, limit) {
  let total = 0;
  const stack = [value];
  const seen = new Set();
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += 2 * v.length + 8;
    else if (v === null || typeof v !== 'object') total += 8;
    else if (seen.has(v)) total += 8;
    else {
      seen.add(v);
      if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) total += v.byteLength + 16;
      else if (v instanceof Map) for (const [key, item] of v) stack.push(key, item);
      else if (v instanceof Set) for (const item of v) stack.push(item);
      else for (const key of Object.keys(v)) {
        total += 2 * key.length + 8;
        stack.push(v[key]);
      }
      total += 16;
    }
    if (total > limit) return limit + 1;
  }
  return total;
}

const isName = (s, max) => typeof s === 'string' && s !== '' && s.length <= max;
// Epochs at or above the core's plausibility bound are forgeries, as in its frame checks.
const isEpoch = (e) => Number.isSafeInteger(e) && e > 0 && e < PLAUSIBLE_EPOCH;

/**
 * @param {any} msg a received message
 * @param {number} maxBytes the size limit of its payload
 * @returns {string | null} the counter to drop it under, or null when well-formed
 */
export function check(msg, maxBytes) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return 'droppedMalformed';
  if (msg.v !== TALK_PROTOCOL) return typeof msg.v === 'number' ? 'droppedForeignVersion' : 'droppedMalformed';
  if (!KINDS.has(msg.k) || !isName(msg.from, TALK_LIMITS.nameChars)) return 'droppedMalformed';
  if (TERM_KINDS.has(msg.k) && !isEpoch(msg.epoch)) return 'droppedMalformed';
  if (msg.k === 'req' || msg.k === 'ack' || msg.k === 'res') {
    if (!isName(msg.id, TALK_LIMITS.idChars)) return 'droppedMalformed';
  }
  if (msg.k === 'ack' || msg.k === 'res') {
    if (!isName(msg.to, TALK_LIMITS.nameChars)) return 'droppedMalformed';
  }
  if (msg.k === 'res') {
    if (typeof msg.ok !== 'boolean') return 'droppedMalformed';
    if (!msg.ok && !isError(msg.error)) return 'droppedMalformed';
  }
  if ((msg.k === 'lead' || msg.k === 'state') && msg.seq !== undefined && !Number.isSafeInteger(msg.seq)) return 'droppedMalformed';
  const payload = msg.k === 'req' ? msg.body : msg.k === 'res' ? msg.value : msg.k === 'lead' || msg.k === 'state' ? msg.state : undefined;
  if (payload !== undefined && sizeOf(payload, maxBytes) > maxBytes) return 'droppedOversized';
  return null;
}

function isError(e) {
  return (
    e !== null &&
    typeof e === 'object' &&
    isName(e.name, TALK_LIMITS.nameChars) &&
    typeof e.message === 'string' &&
    e.message.length <= TALK_LIMITS.errorChars &&
    (e.code === undefined || (typeof e.code === 'string' && e.code.length <= TALK_LIMITS.nameChars))
  );
}

/** An error thrown by `serve` as plain data for the wire: name, message, code. */
export function errorData(error, code) {
  const e = error !== null && typeof error === 'object' ? error : { message: String(error) };
  const name = typeof e.name === 'string' && e.name !== '' ? e.name.slice(0, TALK_LIMITS.nameChars) : 'Error';
  const message = typeof e.message === 'string' ? e.message.slice(0, TALK_LIMITS.errorChars) : String(e.message);
  const c = code ?? e.code;
  return { name, message, ...(typeof c === 'string' ? { code: c.slice(0, TALK_LIMITS.nameChars) } : {}) };
}
