/**
 * tab-baton: leader election for browser tabs, per named resource, with fencing tokens,
 * instant hand-over and frozen-leader recovery. The election logic is a C++ core compiled
 * to WebAssembly; this package connects it to the browser.
 *
 * The core loads once, here, with top-level await: after `import`, everything is
 * synchronous (`leaderElection.create`, `createBaton`, ...).
 *
 * @module tab-baton
 */
import { load, internals } from './core.js';
import { compatMetrics } from './compat/shared.js';

await load();

export { load };
export { createBaton } from './baton.js';
export { Fence } from './fence.js';
export { StaleOwnerError, DeposedError } from './errors.js';
export { leaderElection } from './compat/awaforge.js';
export { requestLeadership } from './compat/request-leadership.js';
export { createLeaderElection } from './compat/broadcast-channel.js';

/** Leak checks and metrics for this package's own tests; not part of the API. */
export const __internal = { ...internals, metricsOf: compatMetrics };
export { RequestError, NoLeaderError, RemoteError } from './requests-errors.js';
export { createRelay } from './relay.js';
export { eventSourceSource, webSocketSource } from './relay-sources.js';
