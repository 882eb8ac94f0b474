/**
 * tab-baton: leader election for browser tabs, per named resource, with fencing tokens,
 * instant hand-over and frozen-leader recovery. The election logic is a C++ core compiled
 * to WebAssembly; this package connects it to the browser.
 *
 * Importing is synchronous and cheap. The core loads on first use (or on `load()`);
 * everything that needs it waits meanwhile, and `ready` settles when it is there. A failed
 * load rejects `ready` and shows in `support()` and `metrics()`; it never throws here.
 *
 * Every export of the subpath entries (`tab-baton/relay`, `tab-baton/awaforge`, ...) is
 * also here; an app that imports only what it uses from those pays for nothing else.
 *
 * @module tab-baton
 */
import { internals } from './core.js';
import { compatMetrics } from './compat/shared.js';

export { load, ready } from './core.js';
export { createBaton } from './baton.js';
export { enableTestHooks } from './test-hooks.js';
export { Fence } from './fence.js';
export { StaleOwnerError, DeposedError, EpochNotDurableError } from './errors.js';
export { leaderElection } from './compat/awaforge.js';
export { requestLeadership } from './compat/request-leadership.js';
export { createLeaderElection } from './compat/broadcast-channel.js';

/** Leak checks and metrics for this package's own tests; not part of the API. */
export const __internal = /* @__PURE__ */ Object.assign({ metricsOf: compatMetrics }, internals);
export { RequestError, NoLeaderError, RemoteError } from './requests-errors.js';
export { createRelay } from './relay.js';
export { eventSourceSource, webSocketSource } from './relay-sources.js';
