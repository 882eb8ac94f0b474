// Where a term's epoch comes from, and what happens when storage cannot vouch for it:
// the epoch counter (Web Locks, broadcast-only), its answer or its silence, the lease
// store's failures, and the degraded terms that follow. The lease record's own epoch is
// decided in Election::on_lease_read (authority_lease.cc).
#include <algorithm>

#include "authority.h"
#include "election_internal.h"

namespace baton {
namespace {

using detail::add;

}  // namespace

// Asks the durable counter for the next epoch above the confirmed floor. Claims are
// hints that must not reach the store, or one forged frame would move the floor for good.
void Election::request_epoch(Resource& r, double now, Effects& out) {
  Effect& alloc = add(out, EffectKind::allocate_epoch, r.name);
  alloc.epoch = config_.mutations.trust_claims ? r.max_epoch : r.floor_epoch;
  r.allocating = true;
  r.allocating_since_ms = now;
  r.wake_ms = std::min(r.wake_ms, now + config_.storage_timeout_ms);
}

void Election::check_storage_timeouts(Resource& r, double now, Effects& out) {
  if (r.allocating) {
    double due = r.allocating_since_ms + config_.storage_timeout_ms;
    if (now < due) {
      r.wake_ms = std::min(r.wake_ms, due);
    } else {
      // A hung store must not leave the lock holder a candidate for ever: lead on a
      // made-up epoch (above every term heard of, see finish_candidacy), and say that it
      // may repeat. A late answer is ignored.
      r.allocating = false;
      ++metrics_.storage_failures;
      degraded_ = Degraded::storage_timeout;
      if (r.role == Role::candidate) finish_candidacy(r, r.floor_epoch + 1, Degraded::storage_timeout, now, out);
    }
  }
  if (r.lease_op != LeaseOp::none) {
    double due = r.lease_started_ms + config_.storage_timeout_ms;
    if (now < due) r.wake_ms = std::min(r.wake_ms, due);
    else on_lease_failed(r, Degraded::storage_timeout, now, out);
  }
}


void Election::on_epoch_allocated(Resource& r, uint64_t epoch, bool durable, double now, Effects& out) {
  if (!r.allocating) return;  // nothing was asked (or it timed out): not an answer to us
  r.allocating = false;
  if (r.role != Role::candidate) return;  // the attempt ended meanwhile
  // An answer that arrives late, or to a tab whose timers stalled (frozen), is as old as
  // the question: terms may have been claimed and ended meanwhile without this tab
  // hearing them.
  bool late = now - r.allocating_since_ms > config_.storage_timeout_ms;
  bool maybe_stale = late || timers_stalled(now);
  Degraded why = Degraded::none;
  if (!durable) {
    why = Degraded::not_durable;
  } else if (claims_decide() && !r.reallocated && (epoch <= r.floor_epoch || maybe_stale)) {
    // Broadcast-only: a newer term was (or may have been) claimed while the counter
    // answered. Allocate again, above it (once: a store that ignores the floor, or a tab
    // that keeps freezing, is not asked for ever).
    request_epoch(r, now, out);
    r.reallocated = true;
    return;
  } else if (claims_decide() && late) {
    why = Degraded::storage_timeout;  // asked again, and again the answer came too late
  } else if (epoch <= r.floor_epoch) {
    why = Degraded::store_regressed;  // at or below an epoch this tab already used
  } else if (epoch <= r.max_epoch) {
    // Another tab claims a term at or above this one. Either the store lost epochs
    // (cleared, restored) or the claim is forged; the claim cannot move the floor, so
    // this term runs degraded instead.
    why = Degraded::behind_claim;
  } else if (fell_back()) {
    // The others' terms come from lease records this counter knows nothing of.
    why = Degraded::storage_failed;
  }
  if (why != Degraded::none) {
    degraded_ = why;
    if (why != Degraded::behind_claim) ++metrics_.storage_failures;
  }
  // Above every term this tab confirmed, whatever the store said.
  finish_candidacy(r, std::max(epoch, r.floor_epoch + 1), why, now, out);
}

// The counter read outside an allocation: an epoch the store issued, so a confirmed floor
// like one this tab committed. Without it a tab that joins where epochs are more than
// kMaxEpochJump above 0 (a long-lived origin, or a counter a same-origin page raised once)
// would drop the healthy leader's claims as forged, find no leader, and steal its lock; and
// so would every tab that joins after it.
void Election::on_epoch_read(Resource& r, uint64_t epoch) {
  if (epoch < kPlausibleEpoch) r.floor_epoch = std::max(r.floor_epoch, epoch);
}

void Election::finish_candidacy(Resource& r, uint64_t epoch, Degraded degraded, double now, Effects& out) {
  r.reallocated = false;
  // The epoch this tab stands behind becomes its confirmed floor. An epoch no store vouched
  // for (no answer, or one from a copy) would otherwise repeat the last leader's whenever
  // this tab never led: such a term starts above every term this tab heard of, claims
  // included, so that receivers still see a newer term. Claims are hints, so the floor
  // (what the store is asked to exceed) does not follow them.
  bool made_up = degraded == Degraded::not_durable || degraded == Degraded::storage_timeout;
  uint64_t term = made_up ? std::max(epoch, r.max_epoch + 1) : epoch;
  // Epochs end below kPlausibleEpoch: every tab takes a claim at or above it for forged, so
  // a term there would lead no one, and the others would steal the lock. Only a store moved
  // up to it (corrupt, or raised by same-origin code) gets here: the term repeats the last
  // epoch, and says that it may.
  if (term >= kPlausibleEpoch) {
    term = kPlausibleEpoch - 1;
    epoch = std::min(epoch, term);
    if (degraded == Degraded::none) {
      degraded = Degraded::store_regressed;
      ++metrics_.storage_failures;
    }
    degraded_ = degraded;
  }
  r.floor_epoch = std::max(r.floor_epoch, epoch);
  r.max_epoch = std::max(r.max_epoch, term);
  bool live_leader = !r.leader.empty() && r.leader != config_.id && !leader_silent(r, now, config_.suspect_ms);
  // A named successor does not yield to other candidates: the last leader chose it.
  bool better_candidate = r.reason != Reason::leader_goodbye && claimant_preferred(r, now);
  if (!authority_->exclusive() && (live_leader || better_candidate)) {
    // A live leader showed up while the epoch was being allocated, or a candidate that
    // wins over this one announced itself.
    set_role(r, Role::follower, Reason::conflict, now);
    fail_acquisition(r, now);
    return;
  }
  become_leader(r, term, r.reason == Reason::steal ? Reason::steal : Reason::epoch_ready, degraded, now, out);
}

}  // namespace baton
