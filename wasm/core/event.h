// What happened, as the glue (or the simulation) reports it to Election::step: one event
// per step, carrying both clocks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "policy.h"
#include "types.h"
#include "wire.h"

namespace baton {

enum class LockMode : uint8_t { queue = 0, steal = 1 };

// The lease record kept in IndexedDB, one per resource. Times are wall-clock ms: every
// tab compares them with its own wall clock.
struct LeaseRecord {
  bool present = false;
  TabId owner;
  uint32_t generation = 0;
  uint64_t epoch = 0;
  double expires_ms = 0;
  // From then on the owner counts as silent: another tab may take the record over by
  // compare-and-set. The owner renews before it, and never acts as leader after it
  // without a newer record (see Election::lease_term_span).
  double takeover_ms = 0;
};

enum class EventKind : uint8_t {
  tick = 0,             // the timer set from next_deadline() fired
  message,              // bytes from the channel
  join,                 // start competing for `resource` under `policy`
  leave,                // stop competing for `resource` (relinquish)
  lock_granted,
  lock_lost,            // a held lock's request rejected (stolen)
  lock_unavailable,     // the browser rejected a queued request
  epoch_allocated,      // the counter answered `epoch`; `durable` false when the glue had to
                        // use a copy that cannot guarantee monotonicity (a fallback store,
                        // a failed or aborted write): the term then runs degraded
  lease_result,         // the lease transaction committed; `lease` is the record now
  lease_failed,         // the lease transaction failed (storage error)
  lifecycle,            // `lifecycle` changed
  online,
  offline,
  session_changed,      // logout or another session: every term ends
  abdicate,             // the app gives up `resource` for now
  force_election,       // test hook
  dispose,
  lease_aborted,        // the glue aborted the lease transaction as the page froze: nothing
                        // was written, and the store is not at fault (an open read-write
                        // transaction of a frozen page would block every other tab's)
  lease_read,           // inside the transaction of a lease_try: `lease` is the record read,
                        // `epoch` the epoch counter read beside it (0: none)
                        // (present=false: none). The step answers with the lease_write to
                        // apply to that transaction, or nothing to write: read, decision and
                        // write are one transaction, atomic against the other tabs'
  fence_check,          // a guarded effect of term `epoch` (0: no term) asks this tab's fence
                        // whether it may run on `resource`; the step answers with fence_verdict
  epoch_read,           // the epoch counter of `resource`, read outside an allocation (when
                        // joining, or on hearing of a newer term): `epoch`, the highest the
                        // store issued
};

struct Event {
  EventKind kind = EventKind::tick;
  double now_ms = 0;   // monotonic: every local deadline (performance.now() in a browser)
  double wall_ms = 0;  // wall clock: shared records only (Date.now())
  ResourceName resource;
  const uint8_t* data = nullptr;
  size_t size = 0;
  Policy policy;
  uint64_t epoch = 0;
  bool durable = true;
  Lifecycle lifecycle = Lifecycle::active;
  LeaseRecord lease;
};

}  // namespace baton
