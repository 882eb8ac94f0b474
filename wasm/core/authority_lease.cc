// The lease: a record in IndexedDB (owner, generation, epoch, expiry, takeover time)
// decides, written only inside a read-write transaction: the glue steps lease_read with the
// record it read there, and writes the lease_write that step answers with. The leader
// renews at half the time others wait before a takeover, and acts on its term only
// until they may take over (a renewal still in flight then leaves the term in doubt until
// it commits). A follower takes over by rank when the record expires, at once when the
// leaving owner's goodbye names it, or by compare-and-set when the owner went silent: no
// renewal by the record's takeover time and no heartbeat for the suspect timeout.
// Transactions start neither from a message handler nor in a frozen or closing page (see
// may_start_lease), except a closing leader's release of a term still valid, which needs
// no read (Lease::release). Three failed transactions in a row give the lease up for
// broadcast-only (every term then degraded).
#include <algorithm>
#include <utility>

#include "authority.h"
#include "election_internal.h"

namespace baton {
namespace {

using detail::add;

// Consecutive lease transaction failures before the lease is given up for broadcast-only.
constexpr uint32_t kLeaseFailuresBeforeFallback = 3;
// A holder that hears a goodbye in its own name renews no sooner than this after it: the
// tab the goodbye names may handle the same frame up to this much later, and must still
// see the renewal as later than the goodbye (renewed_since_goodbye).
constexpr double kDisownDelayMs = 10;

bool same_record(const LeaseRecord& a, const LeaseRecord& b) {
  return a.present == b.present && a.owner == b.owner && a.generation == b.generation && a.epoch == b.epoch &&
         a.expires_ms == b.expires_ms && a.takeover_ms == b.takeover_ms;
}

}  // namespace

const Election::Lease Election::kLease{};

void Election::Lease::campaign(Election& election, Resource& r, double now, Effects& out) const {
  if (r.lease_op != LeaseOp::none) return;  // the result re-evaluates
  if (election.defer_while_stalled(r, now)) return;
  election.ask_hidden_leader(r, now, out);
  const Config& c = election.config_;
  if (r.named_successor && now - r.named_ms >= c.suspect_ms) r.named_successor = false;
  // Backing off after a lost race must not delay the successor a goodbye named.
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : election.rank_position(r, now, r.leader);
  if (pos < 0) return;
  // Take over by rank once another tab's record may be taken over; with none known, try
  // (the transaction tells who holds it). A successor named in a goodbye does not wait
  // for the record its predecessor gave up.
  bool others_record = r.lease.present && r.lease.owner != c.id;
  // A goodbye named another tab: it starts at its next timer run, which comes within a
  // heartbeat unless its timers stall. With one rank stagger of head start, a successor
  // whose timer ran 150 ms late lost the record to the next tab by rank.
  double leaderless_since = r.leaderless_since_ms + (r.other_named ? c.heartbeat_ms : 0);
  double due;
  if (r.named_successor) {
    due = r.lease_started_ms > r.named_ms ? r.lease_started_ms + c.rank_stagger_ms : now;
  } else if (others_record) {
    // Come back when the record may be taken over by compare-and-set (on_lease_read). While
    // its owner's heartbeats keep coming, that is not before they stop: the store is not
    // read meanwhile, not even when the copy read last expires (the owner renewed it).
    // After a goodbye (the leader known here left), by rank from then on: the successor
    // it named goes first, even where this tab's copy of the record is long overdue.
    double since = r.leader.empty() ? leaderless_since : 0;
    due = std::max(election.lease_takeover_due(r, r.lease), since) + pos * c.rank_stagger_ms;
  } else {
    due = leaderless_since + pos * c.rank_stagger_ms;
  }
  if (now < due || election.message_step_) {
    // A message made it due: the timer starts it, a tick away (see may_start_lease).
    r.wake_ms = std::min(r.wake_ms, std::max(now, due));
    return;
  }
  election.set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::lease_acquired, now);
  election.start_lease(r, LeaseOp::acquire, now, out);
}

void Election::Lease::keep(Election& election, Resource& r, double now, Effects& out) const {
  // Checked even while a renewal is in flight: a hung transaction must not extend a term
  // past the lease it was granted.
  if (now >= r.lease_held_until_ms) {
    election.step_down(r, Reason::lease_expired, now, out);
    return;
  }
  // The wall clock jumped forward past the record's takeover time: the others may take it
  // over now, so the term is in doubt (the view says so) until a renewal writes a new one
  // (see lapse_jumped_lease_terms).
  bool jumped = election.wall_ms(now) >= r.lease_valid_until_wall_ms;
  if (r.lease_op == LeaseOp::none && (now >= r.renew_ms || jumped)) {
    if (!election.message_step_ && election.may_start_lease(now)) {
      election.start_lease(r, LeaseOp::renew, now, out);
    } else if (!election.lease_term_valid(r, now) && election.timers_stalled(now)) {
      // Frozen without warning, past the takeover time: hand over from this message
      // handler (the goodbye names a successor), since no renewal can start here.
      election.step_down(r, Reason::stalled, now, out);
      return;
    }
  }
  // Past lease_valid_until_ms with a renewal in flight, the term is in doubt: the view says
  // so (the glue reports no leader and fenced() refuses) until the renewal commits.
  double next = r.lease_held_until_ms;
  if (r.lease_op == LeaseOp::none) next = std::min({next, r.renew_ms, election.local_ms(r.lease_valid_until_wall_ms)});
  r.wake_ms = std::min(r.wake_ms, std::max(now, next));
}

// The lease record decides: renew now (at most once a heartbeat) and step down if it
// names another owner.
void Election::Lease::contest(Election& election, Resource& r, double now, Effects& out) const {
  (void)out;
  if (r.lease_op == LeaseOp::none && now - r.lease_started_ms >= election.config_.heartbeat_ms) {
    r.renew_ms = now;
    election.trigger(r, now, true);
  }
}

// A freezing or frozen page starts no transaction, nor does a message handler (see
// may_start_lease): the goodbye names a successor, who takes the record over from the hello
// window on (lease_takeover_allowed); the others may once its takeover time has passed.
// A closing page (pagehide) cannot wait for a read either: a transaction that waits on the
// page would hold the store until the page is torn down. While its term is valid, no other
// tab can have taken the record (its takeover time is later by both clocks), so the record
// in the store is the one this term wrote: the release writes its expired copy without
// reading, and the successor takes it at once. It replaces a renewal in flight, which the
// glue's pagehide handler aborts (on_lease_aborted).
void Election::Lease::release(Election& election, Resource& r, double now, Effects& out) const {
  if (election.lifecycle_ == Lifecycle::closing && election.lease_term_valid(r, now)) {
    election.start_lease(r, LeaseOp::release_unread, now, out);
  } else if (r.lease_op != LeaseOp::none) {
    r.lease_op = LeaseOp::release;  // the in-flight one releases instead
  } else if (election.may_start_lease(now) && !election.message_step_) {
    election.start_lease(r, LeaseOp::release, now, out);
  }
}

void Election::start_lease(Resource& r, LeaseOp op, double now, Effects& out) {
  r.lease_op = op;
  r.lease_started_ms = now;
  r.wake_ms = std::min(r.wake_ms, now + config_.storage_timeout_ms);
  ++metrics_.lease_attempts;
  EffectKind kind = op == LeaseOp::release_unread ? EffectKind::lease_write : EffectKind::lease_try;
  Effect& e = add(out, kind, r.name);
  if (op == LeaseOp::release_unread) {
    // Not read (Lease::release): the record of this tab's valid term, expired.
    e.unread = true;
    e.lease.present = true;
    e.lease.owner = config_.id;
    e.lease.generation = config_.generation;
    e.lease.epoch = r.epoch;
  }
}

// Inside the transaction: the record read decides what this tab writes, by the clocks of
// this step (read there, so the freshest). `counter` is the epoch counter read in the same
// transaction, which Web Locks terms move too: a new term starts above it, whoever wrote the
// record (this tab's own abdicated record can be below an epoch another tab issued since).
void Election::on_lease_read(Resource& r, const LeaseRecord& current, uint64_t counter, double now, Effects& out) {
  bool same_owner = current.present && current.owner == config_.id && current.generation == config_.generation;
  LeaseRecord rec;
  switch (r.lease_op) {
    case LeaseOp::none:
    case LeaseOp::release_unread:  // written without a read
      return;
    case LeaseOp::release:
      if (!same_owner) return;
      rec = current;
      rec.expires_ms = 0;  // expired: the next owner takes it at once, the epoch stays
      rec.takeover_ms = 0;
      break;
    case LeaseOp::acquire:
    case LeaseOp::renew: {
      bool valid = current.present && lease_expiry(r, current) > now;
      bool takeover = r.lease_op == LeaseOp::acquire && lease_takeover_allowed(r, current, now);
      if (valid && !same_owner && !takeover) return;
      bool continuing = same_owner && r.role == Role::leader && current.epoch == r.epoch;
      rec.present = true;
      rec.owner = config_.id;
      rec.generation = config_.generation;
      uint64_t floor = std::max(config_.mutations.trust_claims ? r.max_epoch : r.floor_epoch, counter);
      // Epochs end below kPlausibleEpoch (see finish_candidacy): on a store raised to the
      // bound, a new term repeats the last epoch, and on_lease_result says that it may.
      rec.epoch = continuing ? current.epoch : std::min(std::max(current.epoch, floor) + 1, kPlausibleEpoch - 1);
      rec.expires_ms = last_wall_ms_ + config_.lease_ms;
      rec.takeover_ms = last_wall_ms_ + lease_silence_ms();
      break;
    }
  }
  add(out, EffectKind::lease_write, r.name).lease = rec;
}

// A record's expiry is wall-clock time written by another tab, read here as monotonic time.
// If the wall clock went back since, the record looks valid for too long: an unchanged
// record counts as expired at most one lease duration after this tab first saw it.
double Election::lease_expiry(const Resource& r, const LeaseRecord& rec) const {
  double expires = local_ms(rec.expires_ms);
  if (!same_record(rec, r.lease)) return expires;
  return std::min(expires, r.lease_seen_ms + config_.lease_ms);
}

// The record's takeover time (its expiry if sooner), and while this tab hears the owner
// claim the resource, no sooner than the suspect timeout after its last progress: an
// owner whose heartbeats keep coming is not taken over, however late its renewal commits
// (on_lease_read still lets an expired record go; the campaign waits for the silence).
// Like lease_expiry, after a backward wall clock jump an unchanged record is due at most
// one silence span after this tab first saw it.
double Election::lease_takeover_due(const Resource& r, const LeaseRecord& rec) const {
  double due = std::min(local_ms(rec.takeover_ms), lease_expiry(r, rec));
  if (same_record(rec, r.lease)) due = std::min(due, r.lease_seen_ms + lease_silence_ms());
  const Candidate* owner = presence_.find(rec.owner);
  bool claims = r.leader == rec.owner && owner && owner->generation == rec.generation;
  if (claims) due = std::max(due, owner->last_progress_ms + config_.suspect_ms);
  return due;
}

bool Election::lease_takeover_allowed(const Resource& r, const LeaseRecord& rec, double now) const {
  if (!rec.present || rec.owner == config_.id) return false;
  // A goodbye is a promise never to renew the record of the term it ends. A later term of
  // the same tab is not given up by it. The goodbye may be forged or replayed while its
  // sender still leads: that tab hears it too and renews (disown_goodbye), so the record
  // is taken only once a live owner had time to renew, and only if it did not.
  if (r.named_successor && rec.owner == r.departed && rec.epoch <= r.departed_epoch &&
      now >= r.named_ms + config_.hello_window_ms && !renewed_since_goodbye(r, rec)) {
    return true;
  }
  // Compare-and-set over a silent owner: it did not renew before the record's takeover time,
  // after which it no longer acts as leader on that record (lease_term_span).
  return now >= lease_takeover_due(r, rec);
}

bool Election::renewed_since_goodbye(const Resource& r, const LeaseRecord& rec) const {
  return local_ms(rec.takeover_ms) - lease_silence_ms() >= r.named_ms;
}

// Every step, whatever its event: a term whose record's takeover time the wall clock has
// passed is in doubt on the monotonic clock too, until a renewal writes a new record. Else a
// jump of the wall clock back before that renewal made the term valid again while another
// tab, which saw the record expire, held it (the simulation, seed 202111: a jump forward by
// 13.8 s, another tab's takeover, a jump back by 13.1 s, and the old term acted 2 s more).
void Election::lapse_jumped_lease_terms(double now) {
  if (authority_ != &kLease) return;
  for (auto& [name, r] : resources_) {
    if (r.role == Role::leader && wall_ms(now) >= r.lease_valid_until_wall_ms) {
      r.lease_valid_until_ms = std::min(r.lease_valid_until_ms, now);
    }
  }
}

// Only the tab a goodbye names acts on it (lease_takeover_allowed), at the earliest
// hello_window_ms after hearing it, when the record was not renewed since. This tab,
// which did not send it, stops acting on its term at once and renews kDisownDelayMs
// later, so that its renewal is later than the goodbye for that tab too. Until the
// renewal commits, the term is in doubt (the view says so), as when a renewal is late.
void Election::disown_goodbye(const wire::Frame& f, double now) {
  if (authority_ != &kLease || f.target.empty()) return;
  for (auto& [name, r] : resources_) {
    if (r.role != Role::leader || (!f.subject.empty() && f.subject != name)) continue;
    r.disowned_ms = now;
    r.lease_valid_until_ms = std::min(r.lease_valid_until_ms, now);
    r.renew_ms = now + kDisownDelayMs;
    r.wake_ms = std::min(r.wake_ms, r.renew_ms);
  }
}

// The lease events, whichever authority is in use: a transaction may answer after the
// lease fell back.

void Election::on_lease_result(Resource& r, const LeaseRecord& rec, double now, Effects& out) {
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
              local_ms(rec.expires_ms) > now;
  if (r.left) {
    ResourceName name = r.name;  // r is gone once erased
    resources_.erase(name);
    return;
  }
  if (op == LeaseOp::release || r.role == Role::stepping_down) {
    set_role(r, Role::follower, r.reason, now);
  } else if (mine && op != LeaseOp::none) {
    if (r.role == Role::leader && rec.epoch != r.epoch) {
      // Two of this tab's transactions crossed (one had timed out and answered late): the
      // record's term is the one in force, so the other one ends here.
      Effect& ended = add(out, EffectKind::deposed, r.name);
      ended.epoch = r.epoch;
      ended.reason = Reason::lease_lost;
      set_role(r, Role::candidate, Reason::lease_acquired, now);
    }
    r.lease_held_until_ms = r.lease_started_ms + config_.lease_ms * 5 / 6;
    r.lease_valid_until_ms =
        config_.mutations.lease_term_to_expiry ? r.lease_held_until_ms : r.lease_started_ms + lease_term_span();
    // The same span from when on_lease_read wrote the record, by the wall clock it wrote it
    // with (its takeover time is a silence span later).
    double written = rec.takeover_ms - lease_silence_ms();
    r.lease_valid_until_wall_ms =
        written + (config_.mutations.lease_term_to_expiry ? config_.lease_ms * 5 / 6 : lease_term_span());
    // Half the span leaves the other half for a renewal to commit on a busy store; more
    // often would only queue more read-write transactions, which the store runs one at a time.
    r.renew_ms = r.lease_started_ms + lease_silence_ms() / 2;
    if (r.lease_started_ms < r.disowned_ms + kDisownDelayMs) {
      // Begun before a goodbye in this tab's name was disowned: the tab it named may
      // still take this record over. The term stays in doubt; renew again.
      r.lease_valid_until_ms = std::min(r.lease_valid_until_ms, r.disowned_ms);
      r.renew_ms = std::min(r.renew_ms, r.disowned_ms + kDisownDelayMs);
    }
    if (r.role != Role::leader) {
      // A record at or below a claimed term: the lease store lost records (cleared) or
      // the claim is forged. The term runs, but says that its epoch may repeat.
      Degraded why = rec.epoch <= claimed && !claims_decide() ? Degraded::behind_claim : Degraded::none;
      if (why == Degraded::none && rec.epoch >= kPlausibleEpoch - 1) {
        why = degraded_ = Degraded::store_regressed;  // the last epoch: it may repeat
        ++metrics_.storage_failures;
      }
      become_leader(r, rec.epoch, Reason::lease_acquired, why, now, out);
    }
  } else {
    if (r.role == Role::leader) {
      step_down(r, Reason::lease_lost, now, out, false);
    } else if (r.role == Role::candidate) {
      set_role(r, Role::follower, Reason::lease_lost, now);
      // Still the departing leader's record: its release has not committed yet.
      bool release_pending =
          r.named_successor && rec.present && rec.owner == r.departed && !renewed_since_goodbye(r, rec);
      if (!release_pending) r.named_successor = false;
      // Another tab's valid record says when to come back (its expiry, or its owner's
      // silence): backing off on top of that would only delay the takeover.
      bool held = rec.present && rec.owner != config_.id && lease_expiry(r, rec) > now;
      if (op == LeaseOp::acquire && !release_pending && !held) fail_acquisition(r, now);
    }
    if (rec.present && local_ms(rec.expires_ms) > now && rec.owner != config_.id) {
      set_leader(r, rec.owner, rec.epoch, now, out);
    }
  }
  trigger(r, now);
}

// The glue aborted the transaction in the page's freeze or pagehide handler, after this
// election stepped the freeze or the close: an uncommitted read-write transaction of a frozen
// or closing page would hold the store, and no other tab could take over until it thaws or
// is torn down. An aborted transaction wrote nothing, and the store did not fail: the
// attempt just ends, with no backoff and nothing degraded. An unread release is never
// aborted (it waits for nothing): the abort was of the renewal it replaced.
void Election::on_lease_aborted(Resource& r, double now) {
  if (r.lease_op == LeaseOp::none || r.lease_op == LeaseOp::release_unread) return;
  r.lease_op = LeaseOp::none;
  if (r.left) {
    ResourceName name = r.name;  // r is gone once erased
    resources_.erase(name);
    return;
  }
  if (r.role == Role::candidate || r.role == Role::stepping_down) set_role(r, Role::follower, r.reason, now);
  trigger(r, now);
}

void Election::on_lease_failed(Resource& r, Degraded why, double now, Effects& out) {
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
