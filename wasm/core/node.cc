#include "node.h"
#include "node_internal.h"

#include <algorithm>
#include <utility>

namespace baton {
namespace {

using detail::make;

constexpr double kMaxRefreshHeartbeats = 60;

bool same_record(const LeaseRecord& a, const LeaseRecord& b) {
  return a.present == b.present && a.owner == b.owner && a.generation == b.generation && a.epoch == b.epoch &&
         a.expires_ms == b.expires_ms;
}

}  // namespace

// Followers announce at most 60 heartbeats between refreshes (see refresh_ms()).
Node::Node(Config config)
    : config_(std::move(config)),
      rng_(config_.seed),
      presence_(config_.heartbeat_ms * kMaxRefreshHeartbeats, config_.suspect_ms) {}

// ---------------------------------------------------------------------------------------
// The entry point.

std::vector<Effect> Node::step(const Event& e) {
  Effects out;
  if (disposed_) return out;
  double now = e.now_ms;
  handle_clock(now);
  Resource* r = nullptr;
  if (!e.resource.empty()) {
    auto it = resources_.find(e.resource);
    if (it != resources_.end()) r = &it->second;
  }
  switch (e.kind) {
    case EventKind::tick: on_tick(now, out); break;
    case EventKind::message: on_message(e, out); break;
    case EventKind::join: on_join(e, out); break;
    case EventKind::leave: on_leave(e.resource, now, out); break;
    case EventKind::lock_granted:
      if (r) on_lock_granted(*r, now, out);
      else out.push_back(make(EffectKind::lock_release, e.resource));
      break;
    case EventKind::lock_lost:
      if (r) on_lock_lost(*r, now, out);
      break;
    case EventKind::lock_unavailable:
      if (r && r->lock == LockState::queued) {
        r->lock = LockState::none;
        r->stealing = false;  // a refused steal may be tried again after the backoff
        fail_acquisition(*r, now);
      }
      break;
    case EventKind::epoch_allocated:
      if (r) on_epoch_allocated(*r, e.epoch, e.durable, now, out);
      break;
    case EventKind::lease_result:
      if (r) on_lease_result(*r, e.lease, now, out);
      break;
    case EventKind::lease_failed:
      if (r) on_lease_failed(*r, Degraded::storage_failed, now, out);
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
  }
  if (!disposed_) run_due(now, e.kind == EventKind::tick, out);
  // Only a tick may move the expected tick later: a frozen tab keeps handling
  // messages, and those steps must not hide that its timers stopped.
  double deadline = next_deadline();
  expected_tick_ms_ = e.kind == EventKind::tick ? deadline : std::min(expected_tick_ms_, deadline);
  return out;
}

double Node::next_deadline() const {
  if (disposed_) return kNever;
  double d = presence_due_ms_;
  if (leads_anything()) d = std::min(d, heartbeat_due_ms_);
  for (const auto& [name, r] : resources_) d = std::min(d, r.wake_ms);
  return d;
}

void Node::run_due(double now, bool timer, Effects& out) {
  if (!said_hello_) {
    said_hello_ = true;
    send(frame(wire::Kind::hello), out);
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
    send(frame(wire::Kind::presence), out);
    presence_due_ms_ = now + refresh_ms();
  }
}

void Node::handle_clock(double now) {
  if (!started_) {
    started_ = true;
    last_now_ms_ = now;
    return;
  }
  if (now < last_now_ms_) {
    // The wall clock went backwards: move every stored local time with it, so that
    // deadlines keep their distance instead of lying far in the future.
    double delta = now - last_now_ms_;
    ++metrics_.clock_jumps;
    auto shift = [delta](double& t) {
      if (t != kNever) t += delta;
    };
    shift(expected_tick_ms_);
    shift(heartbeat_due_ms_);
    shift(presence_due_ms_);
    presence_.shift(delta);
    for (auto& [name, r] : resources_) {
      shift(r.wake_ms);
      shift(r.queued_ms);
      shift(r.leader_since_ms);
      shift(r.leaderless_since_ms);
      if (r.abdicate_asked_ms >= 0) shift(r.abdicate_asked_ms);
      shift(r.lease_started_ms);
      shift(r.allocating_since_ms);
      if (r.allocating) r.clock_went_back = true;
      shift(r.lease_seen_ms);
      shift(r.lease_valid_until_ms);
      shift(r.renew_ms);
      shift(r.backoff_until_ms);
    }
  }
  last_now_ms_ = now;
}

// ---------------------------------------------------------------------------------------
// Events.

void Node::on_tick(double now, Effects& out) {
  (void)out;
  ++metrics_.ticks;
  ++tick_seq_;
  // A timer fired, however late (a throttled hidden tab): this tab's timers run.
  expected_tick_ms_ = now;
  if (presence_.prune(now) > 0) trigger_all(now);
}

void Node::on_message(const Event& e, Effects& out) {
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
    ++metrics_.duplicate_id;
    return;
  }
  Presence::Observed seen = presence_.observe(f, now);
  if (seen == Presence::Observed::stale_generation) {
    ++metrics_.dropped_stale_generation;
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

  // A known leader whose frame no longer claims the resource has stepped down.
  for (auto& entry : resources_) {
    Resource& r = entry.second;
    if (r.leader != f.sender) continue;
    const std::string& name = entry.first;
    bool still_claims = std::any_of(f.claims.begin(), f.claims.end(),
                                    [&name](const wire::Claim& c) { return c.resource == name; });
    if (!still_claims) {
      clear_leader(r, now, out);
      trigger(r, now);
    }
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

void Node::on_join(const Event& e, Effects& out) {
  (void)out;
  auto it = resources_.find(e.resource);
  if (it == resources_.end()) {
    it = resources_.emplace(e.resource, Resource(config_.backoff_base_ms, config_.backoff_max_ms)).first;
    Resource& r = it->second;
    r.name = e.resource;
    // Broadcast-only has no authority to ask: the hello asks who leads (a leader answers
    // with its claims), and a short window for that answer precedes a takeover. The other
    // modes ask their authority at once.
    double wait = config_.authority == Authority::broadcast ? std::min(config_.hello_window_ms, config_.heartbeat_ms) : 0;
    r.leaderless_since_ms = e.now_ms + wait;
    set_role(r, Role::follower, Reason::startup, e.now_ms);
  }
  it->second.policy = e.policy;
  it->second.left = false;
  trigger(it->second, e.now_ms, true);
}

void Node::on_leave(const std::string& name, double now, Effects& out) {
  auto it = resources_.find(name);
  if (it == resources_.end()) return;
  Resource& r = it->second;
  step_down(r, Reason::abdicate, now, out);
  if (r.lock != LockState::none) {
    out.push_back(make(EffectKind::lock_release, r.name));
    r.lock = LockState::none;
  }
  // A lease release still in flight needs the resource for lease_decide.
  if (r.lease_op == LeaseOp::none) resources_.erase(it);
  else r.left = true;
}

void Node::on_lock_granted(Resource& r, double now, Effects& out) {
  if (r.lock != LockState::queued || r.left) {
    // A grant we no longer want (released or superseded meanwhile): give it back.
    out.push_back(make(EffectKind::lock_release, r.name));
    return;
  }
  r.lock = LockState::held;
  set_role(r, Role::candidate, r.stealing ? Reason::steal : Reason::lock_granted, now);
  r.stealing = false;
  request_epoch(r, now, out);
}

void Node::on_lock_lost(Resource& r, double now, Effects& out) {
  r.lock = LockState::none;
  r.stealing = false;
  if (r.role == Role::leader || r.role == Role::candidate) {
    // The new holder announces itself; a goodbye from us would only add noise.
    step_down(r, Reason::lock_lost, now, out, false);
  }
  trigger(r, now);
}

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
    resources_.erase(r.name);
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

void Node::on_lifecycle(Lifecycle l, double now, Effects& out) {
  if (l == lifecycle_) return;
  lifecycle_ = l;
  if (l == Lifecycle::frozen || l == Lifecycle::closing) {
    Reason why = l == Lifecycle::frozen ? Reason::frozen : Reason::closing;
    for (auto& [name, r] : resources_) step_down(r, why, now, out);
  }
  // Tell the others at once: ranking and eligibility depend on it.
  send(frame(wire::Kind::presence), out);
  trigger_all(now);
}

void Node::on_dispose(double now, Effects& out) {
  for (auto& [name, r] : resources_) {
    step_down(r, Reason::dispose, now, out);
    if (r.lock != LockState::none) {
      out.push_back(make(EffectKind::lock_release, r.name));
      r.lock = LockState::none;
    }
  }
  lifecycle_ = Lifecycle::closing;
  send(frame(wire::Kind::goodbye), out);
  disposed_ = true;
}

// ---------------------------------------------------------------------------------------
// Decisions.

void Node::evaluate(Resource& r, double now, Effects& out) {
  if (r.left) return;
  ++metrics_.elections;
  check_storage_timeouts(r, now, out);
  switch (config_.authority) {
    case Authority::web_locks: evaluate_web_locks(r, now, out); break;
    case Authority::lease: evaluate_lease(r, now, out); break;
    case Authority::broadcast: evaluate_broadcast(r, now, out); break;
  }
}

// Steps down (or withdraws) when this tab may not lead; true when it may.
bool Node::ensure_eligible(Resource& r, double now, Effects& out) {
  if (self_eligible(r, now)) return true;
  Reason why = why_not_eligible(r, now);
  if (r.role == Role::leader || r.role == Role::candidate) step_down(r, why, now, out);
  if (r.lock != LockState::none) {
    out.push_back(make(EffectKind::lock_release, r.name));
    r.lock = LockState::none;
  }
  // A newer app version's veto ends with time alone (newest_app_version), with no frame or
  // event to say so: look again a heartbeat later.
  if (why == Reason::app_version) r.wake_ms = std::min(r.wake_ms, now + config_.heartbeat_ms);
  return false;
}

void Node::evaluate_web_locks(Resource& r, double now, Effects& out) {
  if (!ensure_eligible(r, now, out)) return;
  if (r.role != Role::follower) return;  // leading, or waiting for the epoch
  if (defer_while_stalled(r, now)) return;
  if (now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  if (r.lock == LockState::none) {
    // Every eligible tab queues, so the browser hands over on close or crash.
    out.push_back(make(EffectKind::lock_request, r.name, LockMode::queue));
    r.lock = LockState::queued;
    r.queued_ms = now;
    ++metrics_.lock_requests;
  }
  if (r.stealing) return;

  const Candidate* leader = r.leader.empty() ? nullptr : presence_.find(r.leader);
  int pos = rank_position(r, now, r.leader);
  if (pos < 0) return;
  if (leader && r.policy.prefer_visible && leader->lifecycle == Lifecycle::hidden &&
      lifecycle_ == Lifecycle::active && pos == 0) {
    steal(r, Reason::prefer_visible, out);
    return;
  }
  // Replace a leader that stopped making progress: ask first, then steal. With no leader
  // known (it said goodbye, or none was heard yet), the lock queue gets a full suspect
  // timeout to hand over before anyone steals.
  double last_progress = leader ? std::max(leader->last_progress_ms, r.queued_ms)
                                : std::max(r.queued_ms, r.leaderless_since_ms);
  double steal_after = last_progress + config_.suspect_ms + pos * config_.rank_stagger_ms;
  if (now < steal_after) {
    r.abdicate_asked_ms = -1;
    r.wake_ms = std::min(r.wake_ms, steal_after);
    return;
  }
  if (r.abdicate_asked_ms < 0) {
    if (leader) {
      wire::Frame req = frame(wire::Kind::abdicate_request);
      req.subject = r.name;
      req.target = r.leader;
      send(std::move(req), out);
      ++metrics_.abdicate_requests_sent;
    }
    r.abdicate_asked_ms = now;
  }
  double steal_at = r.abdicate_asked_ms + config_.steal_grace_ms;
  if (now < steal_at) {
    r.wake_ms = std::min(r.wake_ms, steal_at);
    return;
  }
  steal(r, Reason::steal, out);
}

// A tab whose timers are stalled (frozen, or late under heavy load) starts no
// acquisition from a message handler; it looks again one heartbeat later.
bool Node::defer_while_stalled(Resource& r, double now) {
  if (!timers_stalled(now)) return false;
  r.wake_ms = std::min(r.wake_ms, now + config_.heartbeat_ms);
  return true;
}

void Node::steal(Resource& r, Reason why, Effects& out) {
  (void)why;
  out.push_back(make(EffectKind::lock_request, r.name, LockMode::steal));
  r.lock = LockState::queued;
  r.stealing = true;
  r.abdicate_asked_ms = -1;
  ++metrics_.steals;
  ++metrics_.lock_requests;
}

void Node::evaluate_lease(Resource& r, double now, Effects& out) {
  if (!ensure_eligible(r, now, out)) return;
  if (r.role == Role::leader) {
    // Checked even while a renewal is in flight: a hung transaction must not extend
    // a term past the lease it was granted.
    if (now >= r.lease_valid_until_ms) {
      step_down(r, Reason::lease_expired, now, out);
      return;
    }
    if (r.lease_op == LeaseOp::none && now >= r.renew_ms) start_lease(r, LeaseOp::renew, now, out);
    double next = r.lease_op == LeaseOp::none ? std::min(r.renew_ms, r.lease_valid_until_ms) : r.lease_valid_until_ms;
    r.wake_ms = std::min(r.wake_ms, next);
    return;
  }
  if (r.role != Role::follower || r.lease_op != LeaseOp::none) return;  // the result re-evaluates
  if (defer_while_stalled(r, now)) return;
  ask_hidden_leader(r, now, out);
  if (r.named_successor && now - r.named_ms >= config_.suspect_ms) r.named_successor = false;
  // Backing off after a lost race must not delay the successor a goodbye named.
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : rank_position(r, now, r.leader);
  if (pos < 0) return;
  // Take over by rank once the known lease runs out; with none known, try (the
  // transaction tells who holds it). A successor named in a goodbye does not wait for
  // the lease its predecessor is giving back: it retries until the release commits.
  bool held_by_other = r.lease.present && r.lease.owner != config_.id && lease_expiry(r, r.lease) > now;
  double due;
  if (r.named_successor) {
    due = r.lease_started_ms > r.named_ms ? r.lease_started_ms + config_.rank_stagger_ms : now;
  } else if (held_by_other) {
    // Come back when the record runs out, or sooner when its owner goes silent: then the
    // transaction compares-and-sets over the silent owner's record (lease_decide).
    // One compare-and-set per silence: if it fails, the record's expiry is next.
    double silent_at = lease_owner_progress(r, r.lease) + config_.suspect_ms;
    bool tried_since = r.lease_started_ms >= silent_at;
    due = (tried_since ? lease_expiry(r, r.lease) : std::min(lease_expiry(r, r.lease), silent_at)) +
          pos * config_.rank_stagger_ms;
  } else {
    due = r.leaderless_since_ms + pos * config_.rank_stagger_ms;
  }
  if (now < due) {
    r.wake_ms = std::min(r.wake_ms, due);
    return;
  }
  set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::lease_acquired, now);
  start_lease(r, LeaseOp::acquire, now, out);
}

// Lease and broadcast-only: a visible follower that ranks first asks a hidden leader to
// hand over (the leader abdicates and names it in its goodbye). Asked once per leader term.
void Node::ask_hidden_leader(Resource& r, double now, Effects& out) {
  if (!r.policy.prefer_visible || lifecycle_ != Lifecycle::active || r.leader.empty()) return;
  const Candidate* leader = presence_.find(r.leader);
  if (!leader || leader->lifecycle != Lifecycle::hidden || r.abdicate_asked_ms >= 0) return;
  if (rank_position(r, now, r.leader) != 0) return;
  wire::Frame req = frame(wire::Kind::abdicate_request);
  req.subject = r.name;
  req.target = r.leader;
  send(std::move(req), out);
  ++metrics_.abdicate_requests_sent;
  r.abdicate_asked_ms = now;
}

void Node::start_lease(Resource& r, LeaseOp op, double now, Effects& out) {
  r.lease_op = op;
  r.lease_started_ms = now;
  r.wake_ms = std::min(r.wake_ms, now + config_.storage_timeout_ms);
  ++metrics_.lease_attempts;
  out.push_back(make(EffectKind::lease_try, r.name));
}

void Node::evaluate_broadcast(Resource& r, double now, Effects& out) {
  if (!ensure_eligible(r, now, out)) return;
  if (r.role != Role::follower) return;
  if (defer_while_stalled(r, now)) return;
  ask_hidden_leader(r, now, out);
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : rank_position(r, now, r.leader);
  if (pos < 0) return;
  double base;
  if (!r.leader.empty()) {
    base = presence_.last_progress_ms(r.leader, r.leader_since_ms) + config_.suspect_ms;
  } else {
    base = r.named_successor ? now : r.leaderless_since_ms;
  }
  double due = base + pos * config_.rank_stagger_ms;
  if (now < due) {
    r.wake_ms = std::min(r.wake_ms, due);
    return;
  }
  set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::takeover, now);
  r.named_successor = false;
  request_epoch(r, now, out);
}

LeaseRecord Node::lease_decide(const std::string& resource, const LeaseRecord& current, double now) {
  LeaseRecord none;
  auto it = resources_.find(resource);
  if (it == resources_.end()) return none;
  Resource& r = it->second;
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

void Node::become_leader(Resource& r, uint64_t epoch, Reason why, Degraded degraded, double now, Effects& out) {
  r.epoch = epoch;
  r.degraded = degraded;
  r.max_epoch = std::max(r.max_epoch, epoch);  // the caller raised the confirmed floor
  fence_.observe(r.name, epoch);
  set_role(r, Role::leader, why, now);
  set_leader(r, config_.id, epoch, now, out);
  r.backoff.reset();
  r.named_successor = false;
  ++metrics_.terms_won;
  Effect e = make(EffectKind::elected, r.name);
  e.epoch = epoch;
  e.reason = why;
  e.degraded = degraded;
  out.push_back(std::move(e));
  heartbeat_due_ms_ = now;  // announce the new term right away
}

void Node::step_down(Resource& r, Reason why, double now, Effects& out, bool announce) {
  if (r.role != Role::leader && r.role != Role::candidate) return;
  bool was_leader = r.role == Role::leader;
  set_role(r, Role::stepping_down, why, now);
  ++metrics_.step_downs;
  ++metrics_.step_down_reasons[static_cast<size_t>(why)];
  if (was_leader) {
    Effect e = make(EffectKind::deposed, r.name);
    e.epoch = r.epoch;
    e.reason = why;
    out.push_back(std::move(e));
  }
  if (r.leader == config_.id) clear_leader(r, now, out);
  release_authority(r, now, out);
  if (announce && was_leader) {
    wire::Frame bye = frame(wire::Kind::goodbye);
    bye.subject = r.name;
    bye.target = best_successor(r, now);
    send(std::move(bye), out);
  } else if (was_leader) {
    // Followers keep a leader that makes progress over a new claimant: a frame without
    // the claim tells them at once that this term ended.
    send(frame(wire::Kind::presence), out);
  }
  // A lease release completes when its transaction does.
  if (r.lease_op != LeaseOp::release) set_role(r, Role::follower, why, now);
  trigger(r, now);
}

void Node::release_authority(Resource& r, double now, Effects& out) {
  switch (config_.authority) {
    case Authority::web_locks:
      if (r.lock != LockState::none) {
        out.push_back(make(EffectKind::lock_release, r.name));
        r.lock = LockState::none;
      }
      break;
    case Authority::lease:
      // A freezing page must start no transaction: an uncommitted read-write transaction of
      // a frozen tab blocks every other tab's on the store until it thaws. Its goodbye names
      // a successor, who takes the record over at once (lease_takeover_allowed).
      if (lifecycle_ == Lifecycle::frozen) break;
      if (r.lease_op == LeaseOp::none) start_lease(r, LeaseOp::release, now, out);
      else r.lease_op = LeaseOp::release;  // the in-flight transaction releases instead
      break;
    case Authority::broadcast: break;
  }
}

void Node::fail_acquisition(Resource& r, double now) {
  ++metrics_.backoffs;
  r.backoff_until_ms = now + r.backoff.next_delay(rng_);
  r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
}

void Node::set_role(Resource& r, Role to, Reason why, double now) {
  if (r.role == to && r.reason == why) return;
  Transition t{now, r.name, r.role, to, why, r.epoch};
  log_.push_back(std::move(t));
  while (log_.size() > config_.log_capacity) log_.pop_front();
  r.role = to;
  r.reason = why;
}

void Node::set_leader(Resource& r, const std::string& id, uint64_t epoch, double now, Effects& out) {
  if (r.leader == id && r.leader_epoch == epoch) return;
  r.leader = id;
  r.leader_epoch = epoch;
  r.leader_since_ms = now;
  r.abdicate_asked_ms = -1;
  out.push_back(make(EffectKind::leader_changed, r.name));
  trigger(r, now);
}

void Node::clear_leader(Resource& r, double now, Effects& out) {
  if (r.leader.empty()) return;
  r.leader.clear();
  r.leaderless_since_ms = now;
  out.push_back(make(EffectKind::leader_changed, r.name));
}

void Node::trigger(Resource& r, double now, bool immediate) {
  ++metrics_.triggers;
  double at = immediate ? now : now + rng_.jitter(config_.trigger_jitter_ms);
  r.wake_ms = std::min(r.wake_ms, at);
}

void Node::trigger_all(double now) {
  for (auto& [name, r] : resources_) trigger(r, now);
}

// ---------------------------------------------------------------------------------------
// Ranking.

CandidateView Node::self_view() const {
  return {&config_.id, lifecycle_, Liveness::alive, &config_.capabilities, &config_.app_version,
          config_.start_ms, online_};
}

CandidateView Node::view_of(const Candidate& c, double now) const {
  return {&c.id, c.lifecycle, Presence::liveness(c, now), &c.capabilities, &c.app_version,
          static_cast<double>(c.start_ms), true};
}

// A tab with newer code makes older ones yield while it leads, or for one suspect
// timeout after it first appeared (time to take over), once its own timer showed progress
// (a real tab's next refresh). A made-up version therefore vetoes nothing with one frame,
// and eligibility for at most one suspect timeout per sender with a stream of them.
std::string Node::newest_app_version(const Resource& r, double now) const {
  static const std::string kAny;
  std::string newest = config_.app_version;
  for (const auto& [id, c] : presence_.all()) {
    if (id != r.leader && (!c.progressed || now - c.first_seen_ms >= config_.suspect_ms)) continue;
    CandidateView v = view_of(c, now);
    Policy p = r.policy;
    p.newest_app_only = false;
    if (is_eligible(v, p, r.name, kAny) && compare_versions(c.app_version, newest) > 0) newest = c.app_version;
  }
  return newest;
}

bool Node::self_eligible(const Resource& r, double now) const {
  return is_eligible(self_view(), r.policy, r.name, newest_app_version(r, now));
}

Reason Node::why_not_eligible(const Resource& r, double now) const {
  if (lifecycle_ == Lifecycle::frozen) return Reason::frozen;
  if (lifecycle_ == Lifecycle::closing) return Reason::closing;
  if (!r.policy.allow_hidden && lifecycle_ == Lifecycle::hidden) return Reason::hidden;
  if (r.policy.requires_network && !online_) return Reason::offline;
  if (r.policy.newest_app_only && compare_versions(config_.app_version, newest_app_version(r, now)) < 0) {
    return Reason::app_version;
  }
  return Reason::not_eligible;
}

int Node::rank_position(const Resource& r, double now, const std::string& except) const {
  std::string newest = newest_app_version(r, now);
  CandidateView self = self_view();
  if (!is_eligible(self, r.policy, r.name, newest)) return -1;
  int pos = 0;
  for (const auto& [id, c] : presence_.all()) {
    if (id == except) continue;
    CandidateView v = view_of(c, now);
    if (is_eligible(v, r.policy, r.name, newest) && ranks_before(v, self, r.name, now)) ++pos;
  }
  return pos;
}

// The tab a goodbye names. Followers refresh rarely (see refresh_ms()), so one that is
// merely late (suspect) is still named when no alive one is eligible: if it is really
// gone, the others take over by rank as without a goodbye.
std::string Node::best_successor(const Resource& r, double now) const {
  std::string newest = newest_app_version(r, now);
  for (Liveness accept : {Liveness::alive, Liveness::suspect}) {
    const Candidate* best = nullptr;
    CandidateView best_view{};
    for (const auto& [id, c] : presence_.all()) {
      CandidateView v = view_of(c, now);
      if (v.liveness != accept) continue;
      v.liveness = Liveness::alive;
      if (!is_eligible(v, r.policy, r.name, newest)) continue;
      if (!best || ranks_before(v, best_view, r.name, now)) {
        best = &c;
        best_view = v;
      }
    }
    if (best) return best->id;
  }
  return std::string();
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

bool Node::leader_silent(const Resource& r, double now, double limit) const {
  double progress = presence_.last_progress_ms(r.leader, r.leader_since_ms);
  return now - progress >= limit;  // the same boundary evaluate_broadcast uses
}

// ---------------------------------------------------------------------------------------
// Frames.

wire::Frame Node::frame(wire::Kind kind) const {
  wire::Frame f;
  f.kind = kind;
  f.sender = config_.id;
  f.generation = config_.generation;
  f.lifecycle = lifecycle_;
  f.app_version = config_.app_version;
  f.start_ms = config_.start_ms > 0 ? static_cast<uint64_t>(config_.start_ms) : 0;
  f.tick_seq = tick_seq_;
  f.refresh_ms = static_cast<uint32_t>(refresh_ms());
  f.capabilities = config_.capabilities;
  for (const auto& [name, r] : resources_) {
    if (r.role == Role::leader) f.claims.push_back({name, r.epoch});
  }
  return f;
}

void Node::send(wire::Frame f, Effects& out) {
  ++metrics_.frames_sent;
  Effect e = make(EffectKind::broadcast, std::string());
  e.bytes = wire::encode(f);
  out.push_back(std::move(e));
}

void Node::send_heartbeat(double now, Effects& out) {
  send(frame(wire::Kind::heartbeat), out);
  heartbeat_due_ms_ = now + config_.heartbeat_ms;
  presence_due_ms_ = now + refresh_ms();
}

// Leaders show progress every heartbeat. Followers refresh their presence less often
// the more tabs there are, so the channel's total traffic grows linearly with tabs.
double Node::refresh_ms() const {
  if (leads_anything()) return config_.heartbeat_ms;
  double tabs = static_cast<double>(presence_.size() + 1);
  return config_.heartbeat_ms * std::min(kMaxRefreshHeartbeats, tabs);
}

bool Node::leads_anything() const {
  return std::any_of(resources_.begin(), resources_.end(),
                     [](const auto& kv) { return kv.second.role == Role::leader; });
}

// ---------------------------------------------------------------------------------------
// Queries.

ResourceView Node::view(const std::string& resource) const {
  ResourceView v;
  auto it = resources_.find(resource);
  if (it == resources_.end() || it->second.left) return v;
  const Resource& r = it->second;
  v.role = r.role;
  v.reason = r.reason;
  v.epoch = r.epoch;
  v.leader = r.leader;
  v.leader_epoch = r.leader_epoch;
  v.leader_since_ms = r.leader_since_ms;
  v.eligible = self_eligible(r, last_now_ms_);
  if (r.role == Role::leader) v.degraded = r.degraded;
  return v;
}

std::vector<std::string> Node::resources() const {
  std::vector<std::string> names;
  for (const auto& [name, r] : resources_) {
    if (!r.left) names.push_back(name);
  }
  return names;
}

}  // namespace baton
