// What a step asks the glue (or the simulation) to do, in order.
#pragma once
#include <cstdint>

#include "event.h"
#include "fence.h"
#include "fixed.h"
#include "types.h"
#include "wire.h"

namespace baton {

enum class EffectKind : uint8_t {
  broadcast = 0,   // post `bytes` on the channel
  lock_request,    // request the lock for `resource` in `lock_mode` (replaces any queued request)
  lock_release,    // release the held lock or abort the queued request for `resource`
  allocate_epoch,  // durable counter: next = max(stored, `epoch`) + 1, report epoch_allocated
  lease_try,       // run the lease transaction for `resource`: read the record, step lease_read
                   // inside the transaction, apply its lease_write, commit; then report
                   // lease_result (the record now in the store) or lease_failed
  elected,         // this tab now leads `resource` with `epoch`
  deposed,         // this tab no longer leads `resource`, because `reason`
  leader_changed,  // the known leader of `resource` changed (for onChange observers)
  lease_write,     // write `lease` as the record of `resource`: in the transaction whose
                   // lease_read this step answers, or, `unread`, in one of its own
  fence_verdict,   // answers fence_check: `verdict`, and `epoch` the highest term admitted
};

struct Effect {
  EffectKind kind = EffectKind::broadcast;
  ResourceName resource;
  wire::FrameBytes bytes;
  LockMode lock_mode = LockMode::queue;
  uint64_t epoch = 0;
  Reason reason = Reason::none;
  Degraded degraded = Degraded::none;  // elected: why this term's epoch may repeat an earlier one
  LeaseRecord lease;                   // lease_write
  // lease_write: in answer to no read, in a transaction of its own that reads nothing and
  // commits at once (a closing page cannot wait for a read to answer); then lease_result.
  bool unread = false;
  FenceVerdict verdict = FenceVerdict::accepted;  // fence_verdict
};

// What one step asks for, in order.
using Effects = GrowingArray<Effect>;

}  // namespace baton
