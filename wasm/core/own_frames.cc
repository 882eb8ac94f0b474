// The frames this tab sends: its presence, the terms it holds, and when it sends them.
#include <algorithm>

#include "election.h"
#include "election_internal.h"

namespace baton {

using detail::kMaxRefreshHeartbeats;
using detail::kQuietFromTabs;
using detail::add;

wire::Frame Election::frame(wire::Kind kind) const {
  wire::Frame f;
  f.kind = kind;
  f.sender = config_.id;
  f.generation = config_.generation;
  f.lifecycle = lifecycle_;
  f.app_version = config_.app_version;
  f.start_ms = config_.start_ms > 0 ? static_cast<uint64_t>(config_.start_ms) : 0;
  f.tick_seq = timer_step_ || config_.mutations.answer_shows_tick ? tick_seq_ : shown_tick_seq_;
  f.refresh_ms = static_cast<uint32_t>(std::min<double>(refresh_ms(), UINT32_MAX));
  f.observes_only = observes_only();
  f.capabilities = config_.capabilities;
  for (const auto& [name, r] : resources_) {
    if (r.role == Role::leader) f.claims.push_back({name, r.epoch});
    // Broadcast-only: a candidacy (see BroadcastOnly::campaign).
    else if (r.role == Role::candidate && authority() == Authority::broadcast) f.claims.push_back({name, wire::kPendingEpoch});
  }
  return f;
}

void Election::send(const wire::Frame& f, Effects& out) {
  ++metrics_.frames_sent;
  if (timer_step_) shown_tick_seq_ = std::max(shown_tick_seq_, f.tick_seq);
  add(out, EffectKind::broadcast, {}).bytes = wire::encode(f);
}

void Election::send(wire::Kind kind, Effects& out) { send(frame(kind), out); }

void Election::send_abdicate_request(const Resource& r, Effects& out) {
  wire::Frame req = frame(wire::Kind::abdicate_request);
  req.subject = r.name;
  req.target = r.leader;
  send(req, out);
  ++metrics_.abdicate_requests_sent;
}

void Election::send_heartbeat(double now, Effects& out) {
  send(wire::Kind::heartbeat, out);
  heartbeat_due_ms_ = now + config_.heartbeat_ms;
  presence_due_ms_ = now + refresh_ms();
}

// Leaders show progress every heartbeat, and so promise broadcast-only candidates (which
// send more often, see presence_every_ms). Followers refresh their presence less often
// the more tabs there are: every heartbeat per tab up to kQuietFromTabs tabs, then with the
// square of the tabs, up to kMaxRefreshHeartbeats. Each follower's refresh reaches every
// other tab, so from 8 to about 20 tabs the deliveries the followers cause together stay
// flat (about kQuietFromTabs per heartbeat) while the leader's heartbeats grow linearly with
// the tabs; past the cap they grow with the square again, with a small constant (50 tabs:
// about 40 per heartbeat beside the leader's 49). The cap is kept low because it also bounds
// how long one frame keeps an entry alive in the others' tables. A follower's entry expires
// after the interval it announced (Presence::liveness), so a crashed follower is noticed
// later among many tabs.
double Election::refresh_ms() const {
  if (leads_anything() || claiming()) return config_.heartbeat_ms;
  double tabs = static_cast<double>(presence_.size() + 1);
  double heartbeats = std::max(tabs, tabs * tabs / kQuietFromTabs);
  return config_.heartbeat_ms * std::min(kMaxRefreshHeartbeats, heartbeats);
}

// A broadcast-only candidate repeats its claim twice per claim window, so that the others
// wait for it while it lives and not much longer (Election::claimant_due_ms). It promises no
// such interval: the others' table would drop it soon after a late frame of it, and take
// it for a new tab when it speaks again (a newer app version's veto would start over).
double Election::presence_every_ms() const { return claiming() ? claim_window_ms() / 2 : refresh_ms(); }

bool Election::leads_anything() const {
  return std::any_of(resources_.begin(), resources_.end(),
                     [](const auto& entry) { return entry.value.role == Role::leader; });
}

bool Election::observes_only() const {
  bool joined = false;
  for (const auto& [name, r] : resources_) {
    if (r.left) continue;
    if (!r.policy.observe_only) return false;
    joined = true;
  }
  return joined;
}

// Before its hello the tab has told nothing: the hello says it.
void Election::announce_observing(bool before, Effects& out) {
  if (said_hello_ && observes_only() != before) send(wire::Kind::presence, out);
}

}  // namespace baton
