// The entry point (step), the per-role steps, and how terms begin and end. What differs
// between authorities is in their strategies (authority.h).
#include "election.h"

#include <algorithm>

#include "authority.h"
#include "election_internal.h"

namespace baton {

using detail::kMaxRefreshHeartbeats;
using detail::add;

Election::Election(const Config& config)
    : config_(config),
      authority_(&strategy_of(config_.authority)),
      rng_(config_.seed),
      presence_(config_.heartbeat_ms * kMaxRefreshHeartbeats, config_.suspect_ms) {}

const Election::Strategy& Election::strategy_of(Authority a) {
  switch (a) {
    case Authority::lease: return kLease;
    case Authority::broadcast: return kBroadcastOnly;
    case Authority::web_locks: break;
  }
  return kWebLocks;
}

Authority Election::authority() const { return authority_->kind(); }

bool Election::claims_decide() const { return !authority_->exclusive() || config_.mutations.trust_claims; }

bool Election::fell_back() const { return authority_ != &strategy_of(config_.authority); }

// What a strategy does where its authority has nothing to do.
double Election::Strategy::join_wait_ms(const Election& election) const {
  (void)election;
  return 0;
}
void Election::Strategy::keep(Election& election, Resource& r, double now, Effects& out) const {
  (void)election, (void)r, (void)now, (void)out;
}
void Election::Strategy::contest(Election& election, Resource& r, double now, Effects& out) const {
  (void)election, (void)r, (void)now, (void)out;
}
void Election::Strategy::release(Election& election, Resource& r, double now, Effects& out) const {
  (void)election, (void)r, (void)now, (void)out;
}

// ---------------------------------------------------------------------------------------
// The entry point.

void Election::step(const Event& e, Effects& out) {
  // Disposed, it still answers the read of a lease transaction begun before: that one
  // writes the release of the term the dispose ended.
  if (disposed_ && e.kind != EventKind::lease_read) return;
  double now = e.now_ms;
  read_clocks(e);
  lapse_jumped_lease_terms(now);
  message_step_ = e.kind == EventKind::message;
  timer_step_ = e.kind == EventKind::tick;
  Resource* r = nullptr;
  if (!e.resource.empty()) {
    r = resources_.find(e.resource);
  }
  switch (e.kind) {
    case EventKind::tick: on_tick(now, out); break;
    case EventKind::message: on_message(e, out); break;
    case EventKind::join: on_join(e, out); break;
    case EventKind::leave: on_leave(e.resource, now, out); break;
    case EventKind::lock_granted:
      if (r) on_lock_granted(*r, now, out);
      else add(out, EffectKind::lock_release, e.resource);
      break;
    case EventKind::lock_lost:
      if (r) on_lock_lost(*r, now, out);
      break;
    case EventKind::lock_unavailable:
      if (r) on_lock_unavailable(*r, now);
      break;
    case EventKind::epoch_allocated:
      if (r) on_epoch_allocated(*r, e.epoch, e.durable, now, out);
      break;
    case EventKind::epoch_read:
      if (r) on_epoch_read(*r, e.epoch);
      break;
    case EventKind::lease_read:
      if (r) on_lease_read(*r, e.lease, e.epoch, now, out);
      break;
    case EventKind::lease_result:
      if (r) on_lease_result(*r, e.lease, now, out);
      break;
    case EventKind::lease_failed:
      if (r) on_lease_failed(*r, Degraded::storage_failed, now, out);
      break;
    case EventKind::lease_aborted:
      if (r) on_lease_aborted(*r, now);
      break;
    case EventKind::lifecycle: on_lifecycle(e.lifecycle, now, out); break;
    case EventKind::online:
      online_ = true;
      trigger_all(now);
      break;
    case EventKind::offline:
      online_ = false;
      trigger_all(now);
      break;
    case EventKind::session_changed:
      for (auto& [name, res] : resources_) step_down(res, Reason::session_changed, now, out);
      trigger_all(now);
      break;
    case EventKind::abdicate:
      if (r) {
        step_down(*r, Reason::abdicate, now, out);
        // Give the others the first chance: they act at once on the goodbye.
        r->backoff_until_ms = now + config_.heartbeat_ms;
      }
      break;
    case EventKind::force_election:
      if (r) trigger(*r, now, true);
      break;
    case EventKind::dispose: on_dispose(now, out); break;
    case EventKind::fence_check: on_fence_check(e.resource, e.epoch, out); break;
  }
  // A lease read and a fence check wait for their answer inside an operation in progress
  // (a transaction, a guarded effect): they change nothing else, and the work due waits
  // for the next event.
  bool answers = e.kind == EventKind::lease_read || e.kind == EventKind::fence_check;
  if (!disposed_ && !answers) run_due(now, e.kind == EventKind::tick, out);
  // Only a tick may move the expected tick later: a frozen tab keeps handling
  // messages, and those steps must not hide that its timers stopped.
  double deadline = next_deadline();
  expected_tick_ms_ = e.kind == EventKind::tick ? deadline : std::min(expected_tick_ms_, deadline);
}

double Election::next_deadline() const {
  if (disposed_) return kNever;
  double d = presence_due_ms_;
  if (leads_anything()) d = std::min(d, heartbeat_due_ms_);
  for (const auto& [name, r] : resources_) d = std::min(d, r.wake_ms);
  return d;
}

void Election::run_due(double now, bool timer, Effects& out) {
  if (!said_hello_) {
    said_hello_ = true;
    send(wire::Kind::hello, out);
    presence_due_ms_ = now + refresh_ms();
  }
  for (auto& [name, r] : resources_) {
    if (now >= r.wake_ms) {
      r.wake_ms = kNever;
      evaluate(r, now, out);
    }
  }
  // Heartbeats and presence refreshes are the timer's work alone: sent from any other
  // step, they would move the deadline later without a tick, so the tick sequence they
  // carry would stop rising while the timer kept being pushed back.
  if (!timer) return;
  if (leads_anything() && now >= heartbeat_due_ms_) {
    send_heartbeat(now, out);
  } else if (now >= presence_due_ms_) {
    send(wire::Kind::presence, out);
    presence_due_ms_ = now + presence_every_ms();
  }
}

void Election::read_clocks(const Event& e) {
  if (started_ && e.wall_ms < last_wall_ms_) ++metrics_.clock_jumps;
  started_ = true;
  last_now_ms_ = e.now_ms;
  last_wall_ms_ = e.wall_ms;
  wall_offset_ms_ = e.wall_ms - e.now_ms;
}

// ---------------------------------------------------------------------------------------
// Events.

void Election::on_tick(double now, Effects& out) {
  (void)out;
  ++metrics_.ticks;
  ++tick_seq_;
  // A timer fired, however late (a throttled hidden tab): this tab's timers run.
  expected_tick_ms_ = now;
  if (presence_.prune(now) > 0) trigger_all(now);
}

void Election::on_message(const Event& e, Effects& out) {
  ++metrics_.frames_received;
  wire::Frame f;
  switch (wire::decode(e.data, e.size, f)) {
    case wire::DecodeError::ok: break;
    case wire::DecodeError::oversized: ++metrics_.dropped_oversized; return;
    case wire::DecodeError::foreign_version: ++metrics_.dropped_foreign_version; return;
    default: ++metrics_.dropped_malformed; return;
  }
  double now = e.now_ms;
  if (f.sender == config_.id) {
    // The channel never echoes a tab's own frames: this one is another tab's, or forged.
    ++metrics_.duplicate_id;
    if (f.kind == wire::Kind::goodbye) disown_goodbye(f, now);
    return;
  }
  Presence::Observed seen = presence_.observe(f, now);
  if (seen == Presence::Observed::stale_generation) {
    ++metrics_.dropped_stale_generation;
    // Broadcast-only has no authority: a claim decides whoever sends it, so a claim in a
    // frame of the generation this table cannot see still ends an older term.
    if (claims_decide()) {
      for (const auto& c : f.claims) on_claim(f, c, now, out);
    } else {
      note_unseen_claims(f, now);
    }
    return;
  }
  if (seen == Presence::Observed::old_frame) {
    ++metrics_.dropped_old_frame;
    return;
  }
  if (seen == Presence::Observed::table_full) {
    ++metrics_.dropped_table_full;
    return;
  }
  if (seen != Presence::Observed::unchanged) trigger_all(now);

  // A frame without a claim on a resource ends what its sender had there: a known leader
  // stepped down, a claimant that announced its candidacy gave up.
  for (auto& entry : resources_) {
    Resource& r = entry.value;
    bool was_leader = r.leader == f.sender;
    bool was_claimant = r.claimant == f.sender && r.claimant_heard;
    if (!was_leader && !was_claimant) continue;
    const ResourceName& name = entry.key;
    bool still_claims = std::any_of(f.claims.begin(), f.claims.end(),
                                    [&name](const wire::Claim& c) { return c.resource == name; });
    if (still_claims) continue;
    if (was_leader) clear_leader(r, now, out);
    if (was_claimant) r.claimant.clear();
    trigger(r, now);
  }
  for (const auto& c : f.claims) on_claim(f, c, now, out);

  switch (f.kind) {
    case wire::Kind::hello: answer(now, out); break;
    case wire::Kind::goodbye: on_goodbye(f, now, out); break;
    case wire::Kind::abdicate_request: on_abdicate_request(f, now, out); break;
    case wire::Kind::presence:
    case wire::Kind::heartbeat: break;
  }
}

// Two generations contest the sender's id and this frame lost: its sender may be the
// real tab, which this table cannot see until the other generation goes quiet. A claim in
// it says the authority may be held by a tab that runs, so a tab that knows no leader
// there counts as leaderless from now: under Web Locks it waits a full suspect timeout
// before it steals the lock; under the lease the record in the store decides its try, as
// always. A forger can delay a takeover this way, as with claims of its own; it cannot
// make a holder lose it.
void Election::note_unseen_claims(const wire::Frame& f, double now) {
  for (const auto& c : f.claims) {
    Resource* r = resources_.find(c.resource);
    if (r && r->leader.empty() && r->role != Role::leader) r->leaderless_since_ms = std::max(r->leaderless_since_ms, now);
  }
}

void Election::on_join(const Event& e, Effects& out) {
  bool observed_only = observes_only();
  Resource* r = resources_.find(e.resource);
  if (!r) {
    r = resources_.insert(e.resource);
    r->name = e.resource;
    r->backoff = Backoff(config_.backoff_base_ms, config_.backoff_max_ms);
    r->leaderless_since_ms = e.now_ms + authority_->join_wait_ms(*this);
    set_role(*r, Role::follower, Reason::startup, e.now_ms);
  }
  r->policy = e.policy;
  r->left = false;
  trigger(*r, e.now_ms, true);
  announce_observing(observed_only, out);
}

void Election::on_leave(std::string_view name, double now, Effects& out) {
  Resource* found = resources_.find(name);
  if (!found) return;
  Resource& r = *found;
  bool observed_only = observes_only();
  step_down(r, Reason::abdicate, now, out);
  release_lock(r, out);
  // A lease release still in flight needs the resource for its lease_read.
  if (r.lease_op == LeaseOp::none) resources_.erase(name);
  else r.left = true;
  announce_observing(observed_only, out);
}

void Election::on_lifecycle(Lifecycle l, double now, Effects& out) {
  if (l == lifecycle_) return;
  lifecycle_ = l;
  if (l == Lifecycle::frozen || l == Lifecycle::closing) {
    Reason why = l == Lifecycle::frozen ? Reason::frozen : Reason::closing;
    for (auto& [name, r] : resources_) {
      step_down(r, why, now, out);
      // A frozen tab may not lead, and its timers, which would withdraw it (ensure_eligible),
      // stop: its place in the lock's queue is given up now. Kept, the lock went to the
      // frozen page when its holder left: a grant run there took an epoch and began its
      // transaction in the frozen page before giving the lock back; a grant held there until
      // the thaw would leave the lock with it until another tab stole it.
      if (l == Lifecycle::frozen) release_lock(r, out);
    }
  }
  // Tell the others at once: ranking and eligibility depend on it.
  send(wire::Kind::presence, out);
  trigger_all(now);
}

// The glue's fenced() asks before it runs a guarded effect: admitted only from the newest
// term this tab has seen for the resource. Epoch 0 (no term) is refused and changes nothing.
void Election::on_fence_check(std::string_view resource, uint64_t epoch, Effects& out) {
  Effect& e = add(out, EffectKind::fence_verdict, resource);
  e.verdict = epoch > 0 ? fence_.admit(resource, epoch) : FenceVerdict::stale_owner;
  e.epoch = fence_.highest(resource);
}

void Election::on_dispose(double now, Effects& out) {
  for (auto& [name, r] : resources_) {
    step_down(r, Reason::dispose, now, out);
    release_lock(r, out);
  }
  lifecycle_ = Lifecycle::closing;
  send(wire::Kind::goodbye, out);
  disposed_ = true;
}

// ---------------------------------------------------------------------------------------
// Per-role steps.

// The step for the resource's role, as raft steps a follower, a candidate and a leader
// differently. Eligibility comes first for every role: a tab that may not lead withdraws.
void Election::evaluate(Resource& r, double now, Effects& out) {
  if (r.left) return;
  ++metrics_.elections;
  check_storage_timeouts(r, now, out);
  if (!ensure_eligible(r, now, out)) return;
  switch (r.role) {
    case Role::follower: authority_->campaign(*this, r, now, out); break;
    case Role::leader: authority_->keep(*this, r, now, out); break;
    case Role::candidate:      // waits for the authority's or the store's answer
    case Role::stepping_down:  // waits for the authority's release to commit
      break;
  }
}

// Steps down (or withdraws) when this tab may not lead; true when it may.
bool Election::ensure_eligible(Resource& r, double now, Effects& out) {
  if (self_eligible(r, now)) return true;
  Reason why = why_not_eligible(r, now);
  if (r.role == Role::leader || r.role == Role::candidate) step_down(r, why, now, out);
  release_lock(r, out);
  // A newer app version's veto ends with time alone (newest_app_version), with no frame or
  // event to say so: look again a heartbeat later.
  if (why == Reason::app_version) r.wake_ms = std::min(r.wake_ms, now + config_.heartbeat_ms);
  return false;
}

// A tab whose timers are stalled (frozen, or late under heavy load) starts no
// acquisition from a message handler; it looks again one heartbeat later.
bool Election::defer_while_stalled(Resource& r, double now) {
  if (!timers_stalled(now)) return false;
  r.wake_ms = std::min(r.wake_ms, now + config_.heartbeat_ms);
  return true;
}

// Lease and broadcast-only: a visible follower that ranks first asks a hidden leader to
// hand over (the leader abdicates and names it in its goodbye). Asked once per leader term.
void Election::ask_hidden_leader(Resource& r, double now, Effects& out) {
  if (!r.policy.prefer_visible || lifecycle_ != Lifecycle::active || r.leader.empty()) return;
  const Candidate* leader = presence_.find(r.leader);
  if (!leader || leader->lifecycle != Lifecycle::hidden || r.abdicate_asked_ms >= 0) return;
  if (rank_position(r, now, r.leader) != 0) return;
  send_abdicate_request(r, out);
  r.abdicate_asked_ms = now;
}

// ---------------------------------------------------------------------------------------
// Terms.

void Election::become_leader(Resource& r, uint64_t epoch, Reason why, Degraded degraded, double now, Effects& out) {
  r.epoch = epoch;
  r.degraded = degraded;
  r.max_epoch = std::max(r.max_epoch, epoch);  // the caller raised the confirmed floor
  fence_.observe(r.name, epoch);
  set_role(r, Role::leader, why, now);
  set_leader(r, config_.id, epoch, now, out);
  r.backoff.reset();
  r.named_successor = false;
  ++metrics_.terms_won;
  Effect& e = add(out, EffectKind::elected, r.name);
  e.epoch = epoch;
  e.reason = why;
  e.degraded = degraded;
  heartbeat_due_ms_ = now;  // announce the new term right away
}

void Election::step_down(Resource& r, Reason why, double now, Effects& out, bool announce) {
  if (r.role != Role::leader && r.role != Role::candidate) return;
  bool was_leader = r.role == Role::leader;
  set_role(r, Role::stepping_down, why, now);
  ++metrics_.step_downs;
  ++metrics_.step_down_reasons[static_cast<size_t>(why)];
  if (was_leader) {
    Effect& e = add(out, EffectKind::deposed, r.name);
    e.epoch = r.epoch;
    e.reason = why;
  }
  if (r.leader == config_.id) clear_leader(r, now, out);
  authority_->release(*this, r, now, out);
  r.lease_valid_until_ms = 0;  // the term, and what its lease record vouched for, ended
  r.lease_valid_until_wall_ms = 0;
  if (announce && was_leader) {
    wire::Frame bye = frame(wire::Kind::goodbye);
    bye.subject = r.name;
    bye.target = best_successor(r, now);
    send(bye, out);
  } else if (was_leader) {
    // Followers keep a leader that makes progress over a new claimant: a frame without
    // the claim tells them at once that this term ended.
    send(wire::Kind::presence, out);
  }
  // A lease release completes when its transaction does.
  if (r.lease_op != LeaseOp::release) set_role(r, Role::follower, why, now);
  trigger(r, now);
}

void Election::fail_acquisition(Resource& r, double now) {
  ++metrics_.backoffs;
  r.backoff_until_ms = now + r.backoff.next_delay(rng_);
  r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
}

void Election::set_role(Resource& r, Role to, Reason why, double now) {
  if (r.role == to && r.reason == why) return;
  Transition t{wall_ms(now), r.name, r.role, to, why, r.epoch};
  log_.push_back(t);
  r.role = to;
  r.reason = why;
}

void Election::set_leader(Resource& r, std::string_view id, uint64_t epoch, double now, Effects& out) {
  if (r.leader == id && r.leader_epoch == epoch) return;
  r.leader = id;
  r.leader_epoch = epoch;
  r.leader_since_ms = now;
  r.leader_since_wall_ms = wall_ms(now);
  r.abdicate_asked_ms = -1;
  r.steal_announced_ms = -1;
  r.other_named = false;
  r.claimant.clear();
  add(out, EffectKind::leader_changed, r.name);
  trigger(r, now);
}

void Election::clear_leader(Resource& r, double now, Effects& out) {
  if (r.leader.empty()) return;
  r.leader.clear();
  r.leaderless_since_ms = now;
  r.steal_announced_ms = -1;
  add(out, EffectKind::leader_changed, r.name);
}

void Election::trigger(Resource& r, double now, bool immediate) {
  ++metrics_.triggers;
  double at = immediate ? now : now + rng_.jitter(config_.trigger_jitter_ms);
  r.wake_ms = std::min(r.wake_ms, at);
}

void Election::trigger_all(double now) {
  for (auto& [name, r] : resources_) trigger(r, now);
}

// ---------------------------------------------------------------------------------------
// Queries.

ResourceView Election::view(std::string_view resource) const {
  ResourceView v;
  const Resource* found = resources_.find(resource);
  if (!found || found->left) return v;
  const Resource& r = *found;
  v.role = r.role;
  v.reason = r.reason;
  v.epoch = r.epoch;
  v.leader = r.leader;
  v.leader_epoch = r.leader_epoch;
  v.leader_since_ms = r.leader_since_wall_ms;
  v.eligible = self_eligible(r, last_now_ms_);
  if (r.role == Role::leader) {
    v.degraded = r.degraded;
    if (authority_ == &kLease) {
      v.valid_until_ms = r.lease_valid_until_ms;
      v.valid_until_wall_ms = r.lease_valid_until_wall_ms;
    }
  }
  return v;
}

GrowingArray<ResourceName> Election::resources() const {
  GrowingArray<ResourceName> names;
  for (const auto& [name, r] : resources_) {
    if (!r.left) names.push_back(name);
  }
  return names;
}

}  // namespace baton
