// The lease: a record in IndexedDB (owner, generation, epoch, expiry) decides, written
// only inside a read-write transaction that runs lease_decide. The leader renews at a
// third of the lease and steps down before it runs out; a follower takes over by rank
// when the record expires, at once when the leaving owner's goodbye names it, or by
// compare-and-set when the owner went silent. Three failed transactions in a row give the
// lease up for broadcast-only (every term then degraded).
#include <algorithm>
#include <utility>

#include "authority.h"
#include "node_internal.h"

namespace baton {
namespace {

using detail::make;

// Consecutive lease transaction failures before the lease is given up for broadcast-only.
constexpr uint32_t kLeaseFailuresBeforeFallback = 3;

bool same_record(const LeaseRecord& a, const LeaseRecord& b) {
  return a.present == b.present && a.owner == b.owner && a.generation == b.generation && a.epoch == b.epoch &&
         a.expires_ms == b.expires_ms;
}

}  // namespace

const Node::Lease Node::kLease{};

void Node::Lease::campaign(Node& n, Resource& r, double now, Effects& out) const {
  if (r.lease_op != LeaseOp::none) return;  // the result re-evaluates
  if (n.defer_while_stalled(r, now)) return;
  n.ask_hidden_leader(r, now, out);
  const Config& c = n.config_;
  if (r.named_successor && now - r.named_ms >= c.suspect_ms) r.named_successor = false;
  // Backing off after a lost race must not delay the successor a goodbye named.
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : n.rank_position(r, now, r.leader);
  if (pos < 0) return;
  // Take over by rank once the known lease runs out; with none known, try (the
  // transaction tells who holds it). A successor named in a goodbye does not wait for
  // the lease its predecessor is giving back: it retries until the release commits.
  bool held_by_other = r.lease.present && r.lease.owner != c.id && n.lease_expiry(r, r.lease) > now;
  double due;
  if (r.named_successor) {
    due = r.lease_started_ms > r.named_ms ? r.lease_started_ms + c.rank_stagger_ms : now;
  } else if (held_by_other) {
    // Come back when the record runs out, or sooner when its owner goes silent: then the
    // transaction compares-and-sets over the silent owner's record (lease_decide).
    // One compare-and-set per silence: if it fails, the record's expiry is next.
    double silent_at = n.lease_owner_progress(r, r.lease) + c.suspect_ms;
    bool tried_since = r.lease_started_ms >= silent_at;
    due = (tried_since ? n.lease_expiry(r, r.lease) : std::min(n.lease_expiry(r, r.lease), silent_at)) +
          pos * c.rank_stagger_ms;
  } else {
    due = r.leaderless_since_ms + pos * c.rank_stagger_ms;
  }
  if (now < due) {
    r.wake_ms = std::min(r.wake_ms, due);
    return;
  }
  n.set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::lease_acquired, now);
  n.start_lease(r, LeaseOp::acquire, now, out);
}

void Node::Lease::keep(Node& n, Resource& r, double now, Effects& out) const {
  // Checked even while a renewal is in flight: a hung transaction must not extend
  // a term past the lease it was granted.
  if (now >= r.lease_valid_until_ms) {
    n.step_down(r, Reason::lease_expired, now, out);
    return;
  }
  if (r.lease_op == LeaseOp::none && now >= r.renew_ms) n.start_lease(r, LeaseOp::renew, now, out);
  double next = r.lease_op == LeaseOp::none ? std::min(r.renew_ms, r.lease_valid_until_ms) : r.lease_valid_until_ms;
  r.wake_ms = std::min(r.wake_ms, next);
}

// The lease record decides: renew now (at most once a heartbeat) and step down if it
// names another owner.
void Node::Lease::contest(Node& n, Resource& r, double now, Effects& out) const {
  (void)out;
  if (r.lease_op == LeaseOp::none && now - r.lease_started_ms >= n.config_.heartbeat_ms) {
    r.renew_ms = now;
    n.trigger(r, now, true);
  }
}

// A freezing page must start no transaction: an uncommitted read-write transaction of a
// frozen tab blocks every other tab's on the store until it thaws. Its goodbye names a
// successor, who takes the record over at once (lease_takeover_allowed).
void Node::Lease::release(Node& n, Resource& r, double now, Effects& out) const {
  if (n.lifecycle_ == Lifecycle::frozen) return;
  if (r.lease_op == LeaseOp::none) n.start_lease(r, LeaseOp::release, now, out);
  else r.lease_op = LeaseOp::release;  // the in-flight transaction releases instead
}

void Node::start_lease(Resource& r, LeaseOp op, double now, Effects& out) {
  r.lease_op = op;
  r.lease_started_ms = now;
  r.wake_ms = std::min(r.wake_ms, now + config_.storage_timeout_ms);
  ++metrics_.lease_attempts;
  out.push_back(make(EffectKind::lease_try, r.name));
}

LeaseRecord Node::lease_decide(std::string_view resource, const LeaseRecord& current, double now) {
  LeaseRecord none;
  Resource* found = resources_.find(resource);
  if (!found) return none;
  Resource& r = *found;
  bool same_owner = current.present && current.owner == config_.id && current.generation == config_.generation;
  bool valid = current.present && lease_expiry(r, current) > now;
  switch (r.lease_op) {
    case LeaseOp::none: return none;
    case LeaseOp::release: {
      if (!same_owner) return none;
      LeaseRecord rec = current;
      rec.expires_ms = 0;  // expired: the next owner takes it at once, the epoch stays
      return rec;
    }
    case LeaseOp::acquire:
    case LeaseOp::renew: {
      bool takeover = r.lease_op == LeaseOp::acquire && lease_takeover_allowed(r, current, now);
      if (valid && !same_owner && !takeover) return none;
      bool continuing = same_owner && r.role == Role::leader && current.epoch == r.epoch;
      LeaseRecord rec;
      rec.present = true;
      rec.owner = config_.id;
      rec.generation = config_.generation;
      uint64_t floor = config_.mutations.trust_claims ? r.max_epoch : r.floor_epoch;
      rec.epoch = continuing ? current.epoch : std::max(current.epoch, floor) + 1;
      rec.expires_ms = now + config_.lease_ms;
      return rec;
    }
  }
  return none;
}

// A record's expiry is wall-clock time written by another tab. If the clock went back
// since, the record looks valid for too long: an unchanged record counts as expired at
// most one lease duration after this tab first saw it.
double Node::lease_expiry(const Resource& r, const LeaseRecord& rec) const {
  if (!same_record(rec, r.lease)) return rec.expires_ms;
  return std::min(rec.expires_ms, r.lease_seen_ms + config_.lease_ms);
}

double Node::lease_owner_progress(const Resource& r, const LeaseRecord& rec) const {
  const Candidate* owner = presence_.find(rec.owner);
  return owner && owner->generation == rec.generation ? owner->last_progress_ms : r.lease_seen_ms;
}

bool Node::lease_takeover_allowed(const Resource& r, const LeaseRecord& rec, double now) const {
  if (!rec.present || rec.owner == config_.id) return false;
  // A goodbye is a promise never to renew that record again.
  if (r.named_successor && rec.owner == r.departed) return true;
  // Compare-and-set over a silent owner: no progress for the suspect timeout, and the record
  // not renewed after its last progress (else the owner is alive somewhere). An owner this
  // tab does not know is judged by the record alone: unchanged since first seen.
  const Candidate* owner = presence_.find(rec.owner);
  bool known = owner && owner->generation == rec.generation;
  if (!known && !same_record(rec, r.lease)) return false;
  double progress = lease_owner_progress(r, rec);
  return now - progress >= config_.suspect_ms && rec.expires_ms <= progress + config_.lease_ms + config_.heartbeat_ms;
}

// The lease events, whichever authority is in use: a transaction may answer after the
// lease fell back.

void Node::on_lease_result(Resource& r, const LeaseRecord& rec, double now, Effects& out) {
  LeaseOp op = r.lease_op;
  bool own_record = rec.present && rec.owner == config_.id && rec.generation == config_.generation;
  if (op == LeaseOp::acquire && r.role == Role::candidate && own_record && rec.epoch <= r.floor_epoch) {
    // An acquisition writes an epoch above every one this tab knew: an own record at or
    // below that is the late answer of a transaction that timed out. Wait for this one.
    return;
  }
  r.lease_op = LeaseOp::none;
  lease_failures_ = 0;
  if (!same_record(rec, r.lease)) r.lease_seen_ms = now;
  r.lease = rec;
  uint64_t claimed = r.max_epoch;  // before this record: what frames and older records said
  if (rec.present) {
    r.max_epoch = std::max(r.max_epoch, rec.epoch);
    r.floor_epoch = std::max(r.floor_epoch, rec.epoch);  // the lease store is the authority
    fence_.observe(r.name, rec.epoch);
  }
  bool mine = rec.present && rec.owner == config_.id && rec.generation == config_.generation &&
              rec.expires_ms > now;
  if (r.left) {
    ResourceName name = r.name;  // r is gone once erased
    resources_.erase(name);
    return;
  }
  if (op == LeaseOp::release || r.role == Role::stepping_down) {
    set_role(r, Role::follower, r.reason, now);
  } else if (mine && op != LeaseOp::none) {
    r.lease_valid_until_ms = r.lease_started_ms + config_.lease_ms * 5 / 6;
    r.renew_ms = r.lease_started_ms + config_.lease_ms / 3;
    if (r.role != Role::leader) {
      // A record at or below a claimed term: the lease store lost records (cleared) or
      // the claim is forged. The term runs, but says that its epoch may repeat.
      Degraded why = rec.epoch <= claimed && !claims_decide() ? Degraded::behind_claim : Degraded::none;
      become_leader(r, rec.epoch, Reason::lease_acquired, why, now, out);
    }
  } else {
    if (r.role == Role::leader) {
      step_down(r, Reason::lease_lost, now, out, false);
    } else if (r.role == Role::candidate) {
      set_role(r, Role::follower, Reason::lease_lost, now);
      // Still the departing leader's record: its release has not committed yet.
      bool release_pending = r.named_successor && rec.present && rec.owner == r.departed;
      if (!release_pending) r.named_successor = false;
      // Another tab's valid record says when to come back (its expiry, or its owner's
      // silence): backing off on top of that would only delay the takeover.
      bool held = rec.present && rec.owner != config_.id && lease_expiry(r, rec) > now;
      if (op == LeaseOp::acquire && !release_pending && !held) fail_acquisition(r, now);
    }
    if (rec.present && rec.expires_ms > now && rec.owner != config_.id) {
      set_leader(r, rec.owner, rec.epoch, now, out);
    }
  }
  trigger(r, now);
}

void Node::on_lease_failed(Resource& r, Degraded why, double now, Effects& out) {
  r.lease_op = LeaseOp::none;
  ++metrics_.storage_failures;
  degraded_ = why;
  if (r.role == Role::leader) {
    step_down(r, Reason::storage_failed, now, out);
  } else if (r.role != Role::follower) {
    set_role(r, Role::follower, Reason::storage_failed, now);  // nothing was acquired
  }
  if (++lease_failures_ >= kLeaseFailuresBeforeFallback && authority_ == &kLease) {
    authority_ = &kBroadcastOnly;  // the configuration still says what the glue asked for
    // Terms held under the lease end with it; they start again, degraded, without it.
    for (auto& [name, other] : resources_) {
      if (other.role == Role::leader) step_down(other, Reason::storage_failed, now, out);
    }
    trigger_all(now);
  }
  fail_acquisition(r, now);
}

}  // namespace baton
