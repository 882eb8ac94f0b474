// Broadcast-only: no authority exists, so tabs agree by rank and the newest claim decides
// (peer_frames.cc). A tab that joins listens a short hello window for a leader; a
// follower takes over by rank when the leader goes silent for the suspect timeout, or at
// once when the leader's goodbye names it. A candidate announces itself before its epoch
// is allocated, and the others wait for it rather than compete. A term's epoch comes from
// the durable counter (epochs.cc), asked again when a newer term may have been claimed
// meanwhile.
#include <algorithm>

#include "authority.h"

namespace baton {
namespace {

// The takeover from a silent leader must fit in the suspect timeout and a heartbeat
// whatever the timings (awaforge documents takeoverMs + heartbeatMs), also when the
// best-ranked followers are gone too. Each rank position waits the rank stagger longer, but
// at most kStaggerPerHeartbeat of a heartbeat, and positions past kStaggerPositions wait as
// that one: 0.3 of a heartbeat at most. A candidate that died right after announcing itself
// adds a quarter heartbeat (Election::claim_window_ms). The rest is left for the epoch's
// transaction.
constexpr double kStaggerPerHeartbeat = 0.15;
constexpr int kStaggerPositions = 2;

double stagger_ms(const Config& c) { return std::min(c.rank_stagger_ms, c.heartbeat_ms * kStaggerPerHeartbeat); }

}  // namespace

const Election::BroadcastOnly Election::kBroadcastOnly{};

// A named successor has a suspect timeout to claim. A tab that announced its candidacy has
// claim_window_ms after its last progress (it shows progress twice within it while its
// epoch's transaction runs, see presence_every_ms), so that one that died after announcing
// holds the takeover back that long only; and a suspect timeout at most, however long it
// keeps showing progress, so that one sender's stream of announcements delays a takeover by
// one suspect timeout.
double Election::claimant_due_ms(const Resource& r) const {
  double limit = r.claimant_since_ms + config_.suspect_ms;
  if (r.claimant_named || config_.mutations.claimant_waits_suspect) return limit;
  return std::min(limit, claimant_progress_ms(r) + claim_window_ms());
}

bool Election::claimant_gone(const Resource& r, double now) const {
  return !r.claimant.empty() && now >= claimant_due_ms(r) && now >= claimant_progress_ms(r) + claim_window_ms();
}

double Election::claimant_progress_ms(const Resource& r) const {
  return std::max(r.claimant_since_ms, presence_.last_progress_ms(r.claimant, r.claimant_since_ms));
}

bool Election::claiming() const {
  return authority() == Authority::broadcast &&
         std::any_of(resources_.begin(), resources_.end(),
                     [](const auto& entry) { return entry.value.role == Role::candidate; });
}

// The hello asks who leads (a leader answers with its claims); a takeover waits for that
// answer. The other authorities are asked at once.
double Election::BroadcastOnly::join_wait_ms(const Election& election) const {
  return std::min(election.config_.hello_window_ms, election.config_.heartbeat_ms);
}

void Election::BroadcastOnly::campaign(Election& election, Resource& r, double now, Effects& out) const {
  if (election.defer_while_stalled(r, now)) return;
  election.ask_hidden_leader(r, now, out);
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : election.rank_position(r, now, r.leader, election.claimant_gone(r, now) ? r.claimant : TabId());
  if (pos < 0) return;
  if (!r.leader.empty()) pos = std::min(pos, kStaggerPositions);
  const Config& c = election.config_;
  double base;
  if (!r.leader.empty()) {
    base = election.leader_progress_ms(r) + c.suspect_ms;
  } else {
    base = r.named_successor ? now : r.leaderless_since_ms;
  }
  // A tab about to claim (named by the last leader, or announcing its candidacy) gets its
  // time to do so (Election::claimant_due_ms): its epoch's transaction may take longer than the
  // rank stagger, and competing with it would only start one more term that the newest wins.
  if (!r.named_successor && !r.claimant.empty()) base = std::max(base, election.claimant_due_ms(r));
  // The rank positions count when the wait ends, not before: a candidate that went silent
  // meanwhile no longer delays this tab by a stagger.
  double due = now < base ? base : base + pos * stagger_ms(c);
  if (now < due) {
    r.wake_ms = std::min(r.wake_ms, due);
    return;
  }
  election.set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::takeover, now);
  r.named_successor = false;
  // The epoch's transaction goes first: its trips to the store are most of a takeover, and
  // the glue begins it as it executes the effect, so that posting the frame below (a
  // fraction of a millisecond, more on a busy machine) does not delay it.
  election.request_epoch(r, now, out);
  // Announce the candidacy at once (the claim of wire::kPendingEpoch in this tab's frames
  // while it is a candidate), while the epoch's transaction runs, and again from the timer
  // until it ends (presence_every_ms), which shows the others that this candidate lives.
  election.send(wire::Kind::presence, out);
  election.presence_due_ms_ = std::min(election.presence_due_ms_, now + election.presence_every_ms());
}

}  // namespace baton
