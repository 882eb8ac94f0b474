// Who may lead a resource (eligibility) and who should (rank): this tab's view of itself
// and of the tabs in its presence table, under the resource's policy (policy.h).

#include <algorithm>

#include "election.h"

namespace baton {

CandidateView Election::self_view() const {
  return {config_.id, lifecycle_, Liveness::alive, &config_.capabilities, config_.app_version, config_.start_ms,
          online_, false};
}

CandidateView Election::view_of(const Candidate& c, double now) const {
  return {c.id, c.lifecycle, Presence::liveness(c, now), &c.capabilities, c.app_version,
          static_cast<double>(c.start_ms), true, c.observes_only};
}

// A tab with newer code makes older ones yield while it leads, or for one suspect
// timeout after it first appeared (time to take over), once its own timer showed progress
// (a real tab's next refresh). A made-up version therefore vetoes nothing with one frame,
// and eligibility for at most one suspect timeout per sender with a stream of them.
Version Election::newest_app_version(const Resource& r, double now) const {
  Version newest = config_.app_version;
  for (const auto& [id, c] : presence_.all()) {
    bool bounded = !config_.mutations.trust_versions;
    if (bounded && id != r.leader && (!c.progressed || now - c.first_seen_ms >= config_.suspect_ms)) continue;
    CandidateView v = view_of(c, now);
    Policy p = r.policy;
    p.newest_app_only = false;
    if (is_eligible(v, p, r.name, {}) && compare_versions(c.app_version, newest) > 0) newest = c.app_version;
  }
  return newest;
}

bool Election::self_eligible(const Resource& r, double now) const {
  return !r.policy.observe_only && is_eligible(self_view(), r.policy, r.name, newest_app_version(r, now));
}

Reason Election::why_not_eligible(const Resource& r, double now) const {
  if (lifecycle_ == Lifecycle::frozen) return Reason::frozen;
  if (lifecycle_ == Lifecycle::closing) return Reason::closing;
  if (!r.policy.allow_hidden && lifecycle_ == Lifecycle::hidden) return Reason::hidden;
  if (r.policy.requires_network && !online_) return Reason::offline;
  if (r.policy.newest_app_only && compare_versions(config_.app_version, newest_app_version(r, now)) < 0) {
    return Reason::app_version;
  }
  return Reason::not_eligible;
}

int Election::rank_position(const Resource& r, double now, std::string_view except, std::string_view also_except) const {
  Version newest = newest_app_version(r, now);
  CandidateView self = self_view();
  if (r.policy.observe_only || !is_eligible(self, r.policy, r.name, newest)) return -1;
  int pos = 0;
  for (const auto& [id, c] : presence_.all()) {
    if (id == except || (!also_except.empty() && id == also_except)) continue;
    CandidateView v = view_of(c, now);
    if (is_eligible(v, r.policy, r.name, newest) && ranks_before(v, self, r.name, wall_ms(now))) ++pos;
  }
  return pos;
}

// The tab a goodbye names. Followers refresh rarely (see refresh_ms()), so one that is
// merely late (suspect) is still named when no alive one is eligible: if it is really
// gone, the others take over by rank as without a goodbye.
TabId Election::best_successor(const Resource& r, double now) const {
  Version newest = newest_app_version(r, now);
  for (Liveness accept : {Liveness::alive, Liveness::suspect}) {
    const Candidate* best = nullptr;
    CandidateView best_view{};
    for (const auto& [id, c] : presence_.all()) {
      CandidateView v = view_of(c, now);
      if (v.liveness != accept) continue;
      v.liveness = Liveness::alive;
      if (!is_eligible(v, r.policy, r.name, newest)) continue;
      if (!best || ranks_before(v, best_view, r.name, wall_ms(now))) {
        best = &c;
        best_view = v;
      }
    }
    if (best) return best->id;
  }
  return TabId();
}

bool Election::leader_silent(const Resource& r, double now, double limit) const {
  return now - leader_progress_ms(r) >= limit;  // the same boundary BroadcastOnly::campaign uses
}

// A frame shows that its sender handles messages, not that its timer runs: a frozen tab
// still answers. So only a tick this tab saw rise is progress. A leader heard of but never
// seen to progress may have sent every frame so far from a message handler, however late
// this tab first heard of it (an answer lost or rate-limited, a goodbye for another
// resource): hearing of it does not restart the wait this tab was in. It gets as long from
// then as a leader that showed progress counts as alive (1.5 heartbeats, Presence::liveness),
// in which a leader whose timer runs heartbeats again.
double Election::leader_progress_ms(const Resource& r) const {
  const Candidate* c = presence_.find(r.leader);
  if (!c) return presence_.last_progress_ms(r.leader, r.leader_since_ms);
  if (c->progressed) return c->last_progress_ms;
  double heard = c->first_seen_ms + 1.5 * config_.heartbeat_ms - config_.suspect_ms;
  return std::min(c->last_progress_ms, std::max(waiting_since_ms(r), heard));
}

double Election::waiting_since_ms(const Resource& r) const { return std::max(r.queued_ms, r.leaderless_since_ms); }

}  // namespace baton
