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

// Each rank position waits this much longer to take over from a silent leader: the rank
// stagger, but never more than a small part of a heartbeat, so that the takeover fits in
// the suspect timeout and a heartbeat (awaforge documents takeoverMs + heartbeatMs) also
// with short heartbeats, when the best-ranked followers are gone too.
constexpr double kStaggerPerHeartbeat = 0.15;

double stagger_ms(const Config& c) { return std::min(c.rank_stagger_ms, c.heartbeat_ms * kStaggerPerHeartbeat); }

}  // namespace

const Node::BroadcastOnly Node::kBroadcastOnly{};

// The hello asks who leads (a leader answers with its claims); a takeover waits for that
// answer. The other authorities are asked at once.
double Node::BroadcastOnly::join_wait_ms(const Node& n) const {
  return std::min(n.config_.hello_window_ms, n.config_.heartbeat_ms);
}

void Node::BroadcastOnly::campaign(Node& n, Resource& r, double now, Effects& out) const {
  if (n.defer_while_stalled(r, now)) return;
  n.ask_hidden_leader(r, now, out);
  if (!r.named_successor && now < r.backoff_until_ms) {
    r.wake_ms = std::min(r.wake_ms, r.backoff_until_ms);
    return;
  }
  int pos = r.named_successor ? 0 : n.rank_position(r, now, r.leader);
  if (pos < 0) return;
  const Config& c = n.config_;
  double base;
  if (!r.leader.empty()) {
    base = n.leader_progress_ms(r) + c.suspect_ms;
  } else {
    base = r.named_successor ? now : r.leaderless_since_ms;
  }
  // A tab about to claim (named by the last leader, or announcing its candidacy) gets a
  // suspect timeout to do so: its epoch's transaction may take longer than the rank
  // stagger, and competing with it would only start one more term that the newest wins.
  if (!r.named_successor && !r.claimant.empty()) {
    base = std::max(base, r.claimant_since_ms + c.suspect_ms);
  }
  double due = base + pos * stagger_ms(c);
  if (now < due) {
    r.wake_ms = std::min(r.wake_ms, due);
    return;
  }
  n.set_role(r, Role::candidate, r.named_successor ? Reason::leader_goodbye : Reason::takeover, now);
  r.named_successor = false;
  // Announce the candidacy at once (the claim of wire::kPendingEpoch in this tab's frames
  // while it is a candidate), before the epoch's transaction.
  n.send(n.frame(wire::Kind::presence), out);
  n.request_epoch(r, now, out);
}

}  // namespace baton
