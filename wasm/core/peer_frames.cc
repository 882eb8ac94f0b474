// What this tab makes of frames other tabs send, and how it answers. Nothing in a frame
// is trusted beyond its shape (wire.cc) and the bounds here: a claim is a hint the
// authority must confirm, a request to step down is honoured only when a rule allows it,
// and an answer never moves this tab's own timer.
#include <algorithm>

#include "authority.h"

namespace baton {
namespace {

// A claimed epoch at or above kPlausibleEpoch (types.h), or more than kMaxEpochJump above
// the confirmed floor (even a floor of 0, when nothing is known yet), is forged or corrupt.
// Measuring the jump from the confirmed floor, not from other claims, stops a stream of
// claims from ratcheting.
constexpr uint64_t kMaxEpochJump = uint64_t{1} << 20;
// Answers to frames (see Election::answer) are sent at most this often per heartbeat.
constexpr double kAnswersPerHeartbeat = 10;

}  // namespace

// A claim is a hint. Under Web Locks and the lease, nothing it says deposes the holder of
// the authority or moves the confirmed floor; the authority is asked to confirm instead.
// Broadcast-only has no authority, so there the newest claim decides: a forged claim can
// end the current term, and the next term starts above it (at most kMaxEpochJump above
// the floor), so the damage is that one term. The README's security model states this.
void Election::on_claim(const wire::Frame& f, const wire::Claim& c, double now, Effects& out) {
  Resource* found = resources_.find(c.resource);
  if (!found || found->left) return;
  Resource& r = *found;
  if (c.epoch >= kPlausibleEpoch || c.epoch > r.floor_epoch + kMaxEpochJump) {
    ++metrics_.dropped_forged_epoch;
    return;
  }
  r.max_epoch = std::max(r.max_epoch, c.epoch);
  if (claims_decide()) {
    r.floor_epoch = std::max(r.floor_epoch, c.epoch);
    fence_.observe(r.name, c.epoch);
  }

  if (c.epoch == wire::kPendingEpoch) {
    // A candidacy, not a term. Where an authority decides, the authority tells; in
    // broadcast-only, followers wait for the candidate and a leader answers it (below) as
    // any stale claim, so that the candidate learns that a leader exists.
    if (authority() != Authority::broadcast) return;
    if (r.role != Role::leader) {
      if (r.leader == f.sender) clear_leader(r, now, out);
      note_claimant(r, f.sender, false, now);
      return;
    }
  }
  if (r.role == Role::leader) leader_hears_claim(r, f, c, now, out);
  else follower_hears_claim(r, f, c, now, out);
}

// The first claimant heard of keeps its place until it claims, gives up, or its time runs
// out (claimant_due_ms). Its progress extends its time up to one suspect timeout after it
// was first heard, never further, also after it ran out, so that one sender's stream of
// announcements delays a takeover by one suspect timeout; only another id starts another wait.
void Election::note_claimant(Resource& r, std::string_view id, bool named, double now) {
  if (r.claimant != id) {
    bool expired = now >= claimant_due_ms(r);
    if (!r.claimant.empty() && !expired) return;
    r.claimant = id;
    r.claimant_since_ms = now;
    r.claimant_named = false;
    r.claimant_heard = false;
    trigger(r, now);
  }
  if (named) r.claimant_named = true;
  else r.claimant_heard = true;
}

bool Election::claimant_preferred(const Resource& r, double now) const {
  if (r.claimant.empty() || now >= claimant_due_ms(r)) return false;
  if (r.claimant_named) return true;
  const Candidate* rival = presence_.find(r.claimant);
  return rival && ranks_before(view_of(*rival, now), self_view(), r.name, wall_ms(now));
}

void Election::leader_hears_claim(Resource& r, const wire::Frame& f, const wire::Claim& c, double now, Effects& out) {
  bool newer = c.epoch > r.epoch;
  bool same = c.epoch == r.epoch;
  if (!newer && !same) {
    answer(now, out);  // tells the stale leader
    return;
  }
  if (claims_decide()) {
    const Candidate* rival = presence_.find(f.sender);
    bool rival_wins = newer || (rival && ranks_before(view_of(*rival, now), self_view(), r.name, wall_ms(now)));
    if (rival_wins) {
      step_down(r, newer ? Reason::newer_epoch : Reason::conflict, now, out, false);
      set_leader(r, f.sender, c.epoch, now, out);
    } else {
      answer(now, out);
    }
    return;
  }
  ++metrics_.epoch_conflicts;
  authority_->contest(*this, r, now, out);
}

// A follower keeps a leader that makes progress: another claimant is adopted only when
// none is known, the known one went silent, or (broadcast-only) it wins by the rule the
// leaders settle a conflict with (a newer term, or the same term and a better rank). With
// any same-term claimant adopted instead, followers of simultaneous leaders would follow
// whichever was heard last, lose it when it yields, and start a newer term over the winner.
// "Silent" here is one heartbeat short of the suspect timeout after which this tab would
// replace its leader itself (steal): the holder's next heartbeat comes within that
// heartbeat, so a tab that followed a leader now gone learns who holds the authority
// before it takes the authority from a healthy holder. A new leader must show progress
// within the suspect timeout: a replayed claim of a tab long silent or gone, adopted, would
// be found silent at once, and its lock stolen from whoever holds it.
void Election::follower_hears_claim(Resource& r, const wire::Frame& f, const wire::Claim& c, double now, Effects& out) {
  bool progressing = now - presence_.last_progress_ms(f.sender, -kNever) < config_.suspect_ms;
  bool adopt = f.sender == r.leader && c.epoch >= r.leader_epoch;
  if (!adopt && progressing) {
    adopt = r.leader.empty() || leader_silent(r, now, config_.suspect_ms - config_.heartbeat_ms) ||
            (f.sender != r.leader && claims_decide() && claim_wins(r, f, c, now));
  }
  if (adopt) set_leader(r, f.sender, c.epoch, now, out);
  else if (progressing && c.epoch > r.leader_epoch) r.newer_claim_ms = now;
}

bool Election::claim_wins(const Resource& r, const wire::Frame& f, const wire::Claim& c, double now) const {
  if (c.epoch != r.leader_epoch) return c.epoch > r.leader_epoch;
  const Candidate* rival = presence_.find(f.sender);
  const Candidate* known = presence_.find(r.leader);
  if (!rival) return false;
  return !known || ranks_before(view_of(*rival, now), view_of(*known, now), r.name, wall_ms(now));
}

void Election::on_goodbye(const wire::Frame& f, double now, Effects& out) {
  for (auto& [name, r] : resources_) {
    if (!f.subject.empty() && f.subject != name) continue;
    if (f.target == config_.id) {
      r.named_successor = true;
      r.departed = f.sender;
      r.departed_epoch = r.leader == f.sender ? r.leader_epoch : r.lease.owner == f.sender ? r.lease.epoch : 0;
      r.named_ms = now;
    }
    if (r.leader == f.sender) {
      // Lease: the successor starts its acquire at its next timer run, not in this handler;
      // the others wait a heartbeat for it (Lease::campaign).
      r.other_named = !f.target.empty() && f.target != config_.id;
      clear_leader(r, now, out);
    }
    // Broadcast-only: the others wait for the named successor's claim.
    if (!f.subject.empty() && !f.target.empty() && f.target != config_.id && authority() == Authority::broadcast) {
      note_claimant(r, f.target, true, now);
    }
    trigger(r, now, f.target == config_.id);
  }
  if (f.subject.empty()) {
    presence_.remove(f.sender);
    trigger_all(now);
  }
}

// Another tab asks this one to give up `subject`. Honoured only when a rule allows it:
// this tab's own timers stalled, or (preferVisible) this tab is hidden and the asker is a
// visible, alive, eligible tab, at most once per suspect timeout per resource (a visible
// tab asks for every resource it prefers at once, so a limit per asker would honour only
// the first of them). Otherwise the answer shows that this tab still leads.
void Election::on_abdicate_request(const wire::Frame& f, double now, Effects& out) {
  if (f.target != config_.id) {
    note_steal_announced(f, now);
    return;
  }
  Resource* found = resources_.find(f.subject);
  if (!found || found->role != Role::leader) {
    answer(now, out);  // tells the asker we do not lead it
    return;
  }
  Resource& r = *found;
  if (timers_stalled(now)) {
    // Our timers stopped (frozen or throttled): hand over while a handler still runs.
    step_down(r, Reason::stalled, now, out);
    return;
  }
  if (visible_asker_may_take_over(r, f.sender, now) && now - r.visible_handover_ms >= config_.suspect_ms) {
    r.visible_handover_ms = now;
    step_down(r, Reason::prefer_visible, now, out);
    r.backoff_until_ms = now + config_.heartbeat_ms;
    return;
  }
  answer(now, out);
}

// Under Web Locks a follower asks a silent leader to abdicate just before it steals the
// lock, and every tab hears the request. Stealing in turn from that tab while its epoch is
// being allocated would end its candidacy: on a slow store each steal ended the previous
// one, and no tab became leader. The others hold back for the time the stealer needs
// (WebLocks::campaign). Noted once per leader, and only while that leader is silent here
// too, so that a forged request delays a takeover once, by a bounded time.
void Election::note_steal_announced(const wire::Frame& f, double now) {
  Resource* found = resources_.find(f.subject);
  if (!found || authority_->kind() != Authority::web_locks) return;
  Resource& r = *found;
  if (r.role != Role::follower || r.steal_announced_ms >= 0 || r.leader.empty() || f.target != r.leader) return;
  if (!leader_silent(r, now, config_.suspect_ms / 2)) return;
  r.steal_announced_ms = now;
  trigger(r, now);
}

bool Election::visible_asker_may_take_over(const Resource& r, std::string_view asker_id, double now) const {
  if (!r.policy.prefer_visible || lifecycle_ != Lifecycle::hidden) return false;
  const Candidate* asker = presence_.find(asker_id);
  if (!asker || asker->lifecycle != Lifecycle::active) return false;
  return is_eligible(view_of(*asker, now), r.policy, r.name, newest_app_version(r, now));
}

void Election::answer(double now, Effects& out) {
  if (now - last_answer_ms_ < config_.heartbeat_ms / kAnswersPerHeartbeat) return;
  last_answer_ms_ = now;
  if (config_.mutations.answer_postpones_tick) {
    send_heartbeat(now, out);  // the old bug: the reply pushes the own timer back
    return;
  }
  send(frame(leads_anything() ? wire::Kind::heartbeat : wire::Kind::presence), out);
}

}  // namespace baton
