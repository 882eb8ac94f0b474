// Web Locks: the browser's lock manager decides. Every eligible tab queues for the lock,
// so the browser hands over on close or crash at once; a silent holder (frozen, hung) is
// asked to abdicate and then has its lock stolen by the best-ranked follower. A term's
// epoch comes from the durable counter once the lock is granted (epochs.cc).
#include <algorithm>
#include <utility>

#include "authority.h"
#include "election_internal.h"

namespace baton {

using detail::add;

const Election::WebLocks Election::kWebLocks{};

void Election::WebLocks::campaign(Election& election, Resource& r, double now, Effects& out) const {
  if (election.defer_while_stalled(r, now)) return;
  if (now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  if (r.lock == LockState::none) {
    // Every eligible tab queues, so the browser hands over on close or crash.
    add(out, EffectKind::lock_request, r.name, LockMode::queue);
    r.lock = LockState::queued;
    r.queued_ms = now;
    ++election.metrics_.lock_requests;
  }
  if (r.stealing) return;

  const Candidate* leader = r.leader.empty() ? nullptr : election.presence_.find(r.leader);
  int pos = election.rank_position(r, now, r.leader);
  if (pos < 0) return;
  // A hidden leader is replaced at once by the best visible tab, but only once it showed
  // progress since this tab began to follow it: one frame (a replay of a leader long
  // gone, heard by a tab that just opened) must not take the lock from whoever holds it.
  // Nor since another tab claimed a newer term: the lock may have moved (the leader
  // crashed, or lost it), and that claim is not trusted before the leader falls silent.
  bool hidden_leader = leader && leader->lifecycle == Lifecycle::hidden &&
                       leader->last_progress_ms > std::max(r.leader_since_ms, r.newer_claim_ms);
  if (hidden_leader && r.policy.prefer_visible && election.lifecycle_ == Lifecycle::active && pos == 0) {
    election.steal(r, out);
    return;
  }
  // Replace a leader that stopped making progress: ask first, then steal. With no leader
  // known (it said goodbye, or none was heard yet), the lock queue gets a full suspect
  // timeout to hand over before anyone steals.
  const Config& c = election.config_;
  double last_progress = leader ? std::max(election.leader_progress_ms(r), r.queued_ms) : election.waiting_since_ms(r);
  double steal_after = last_progress + c.suspect_ms + pos * c.rank_stagger_ms;
  // The silent leader this tab asked to abdicate stopped claiming after the ask: it
  // answered with a goodbye (its message handler gave the lock to the head of the queue),
  // or without its claim (it had stepped down before, and whoever got the lock then never
  // claimed it). A live holder claims as soon as its epoch is allocated; if none did by
  // the end of the grace, the holder is frozen or gone too, and waiting a second suspect
  // timeout for it would double the takeover: steal as planned (a holder still allocating
  // its epoch loses its candidacy).
  bool stopped_after_ask = r.leader.empty() && r.abdicate_asked_ms >= 0 && r.leaderless_since_ms >= r.abdicate_asked_ms;
  if (stopped_after_ask) steal_after = std::min(steal_after, r.abdicate_asked_ms);
  if (r.steal_announced_ms >= 0) {
    // Another tab announced its steal: it takes the grace, then up to the storage timeout
    // to start its term (see Election::note_steal_announced).
    double stealer_due = r.steal_announced_ms + c.steal_grace_ms + c.storage_timeout_ms + c.heartbeat_ms;
    steal_after = std::max(steal_after, stealer_due + pos * c.rank_stagger_ms);
  }
  if (now < steal_after) {
    if (!stopped_after_ask) r.abdicate_asked_ms = -1;
    r.wake_ms = std::min(r.wake_ms, steal_after);
    return;
  }
  if (r.abdicate_asked_ms < 0) {
    // Asked even when presence has forgotten the leader (silent for six of its refresh
    // intervals, which a suspect timeout may exceed): the request also announces the steal
    // to the others (Election::note_steal_announced). Unannounced, each follower stole in
    // turn while the previous stealer's epoch was being allocated, and none became leader.
    if (!r.leader.empty()) election.send_abdicate_request(r, out);
    r.abdicate_asked_ms = now;
  }
  double steal_at = r.abdicate_asked_ms + c.steal_grace_ms;
  if (now < steal_at) {
    r.wake_ms = std::min(r.wake_ms, steal_at);
    return;
  }
  election.steal(r, out);
}

// The lock decides: a thawed leader whose lock was stolen hears lock_lost. A leader whose
// own timers stalled steps down without waiting for it.
void Election::WebLocks::contest(Election& election, Resource& r, double now, Effects& out) const {
  if (election.timers_stalled(now)) election.step_down(r, Reason::stalled, now, out, false);
}

void Election::WebLocks::release(Election& election, Resource& r, double now, Effects& out) const {
  (void)now;
  election.release_lock(r, out);
}

void Election::release_lock(Resource& r, Effects& out) {
  if (r.lock == LockState::none) return;
  add(out, EffectKind::lock_release, r.name);
  r.lock = LockState::none;
}

void Election::steal(Resource& r, Effects& out) {
  add(out, EffectKind::lock_request, r.name, LockMode::steal);
  r.lock = LockState::queued;
  r.stealing = true;
  r.abdicate_asked_ms = -1;
  ++metrics_.steals;
  ++metrics_.lock_requests;
}

// The lock events, whichever authority is in use.

void Election::on_lock_granted(Resource& r, double now, Effects& out) {
  if (r.lock != LockState::queued || r.left) {
    // A grant we no longer want (released or superseded meanwhile): give it back.
    add(out, EffectKind::lock_release, r.name);
    return;
  }
  r.lock = LockState::held;
  set_role(r, Role::candidate, r.stealing ? Reason::steal : Reason::lock_granted, now);
  r.stealing = false;
  request_epoch(r, now, out);
}

void Election::on_lock_lost(Resource& r, double now, Effects& out) {
  r.lock = LockState::none;
  r.stealing = false;
  if (r.role == Role::leader || r.role == Role::candidate) {
    // The new holder announces itself; a goodbye from us would only add noise.
    step_down(r, Reason::lock_lost, now, out, false);
  }
  trigger(r, now);
}

void Election::on_lock_unavailable(Resource& r, double now) {
  if (r.lock != LockState::queued) return;
  r.lock = LockState::none;
  r.stealing = false;  // a refused steal may be tried again after the backoff
  fail_acquisition(r, now);
}

}  // namespace baton
