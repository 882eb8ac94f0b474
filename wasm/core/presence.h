// The table of other tabs, built from the frames they send. Liveness is judged by
// progress (a rising tick sequence, which only the sender's timers advance), never by
// replies: a frozen tab still answers messages but its timers are stopped.
//
// Bounds on what one sender can do here: a forged higher generation hides a real tab
// for at most the stale window (one suspect timeout), a made-up newer app version vetoes
// eligibility for at most one suspect timeout unless its tab leads (Node), and the table
// holds at most kMaxCandidates senders. The limit: frames carry no secret, so a sender
// that keeps forging a real tab's id with a rising tick sequence makes that id look alive
// for as long as it keeps sending. Under Web Locks and the lease this can delay taking
// over from a frozen leader, never depose a healthy one.
#pragma once
#include <cstdint>
#include <string_view>

#include "fixed.h"
#include "types.h"
#include "wire.h"

namespace baton {

struct Candidate {
  TabId id;
  uint32_t generation = 0;
  Lifecycle lifecycle = Lifecycle::active;
  Version app_version;
  uint64_t start_ms = 0;
  Capabilities capabilities;
  uint64_t tick_seq = 0;
  uint32_t refresh_ms = 1000;  // how often it promised to show progress
  double last_seen_ms = 0;     // local time of its last frame
  double last_progress_ms = 0; // local time its tick sequence last rose
  double first_seen_ms = 0;    // local time this tab was first heard of
  double generation_since_ms = 0;  // local time its current generation was first seen
  double last_request_ms = -1; // local time an abdicate request of it was last honoured
};

class Presence {
 public:
  // `max_refresh_ms` caps the refresh interval a sender announces, so that one frame
  // cannot keep a silent tab "alive" for days.
  // `stale_window_ms` bounds how long a higher generation hides frames of a lower one
  // (the suspect timeout): late frames of a tab restored from bfcache arrive within
  // milliseconds, while one forged frame with generation 2^32-1 and a real tab's id must
  // not blind the table to that tab for longer.
  explicit Presence(double max_refresh_ms = 60000, double stale_window_ms = 3000)
      : max_refresh_ms_(max_refresh_ms), stale_window_ms_(stale_window_ms) {}

  enum class Observed : uint8_t { unchanged, joined, changed, stale_generation, table_full };
  // A flood of frames with made-up sender ids must not grow the table without bound.
  static constexpr size_t kMaxCandidates = 256;

  // Records a frame's sender. `changed` means something ranking depends on changed.
  Observed observe(const wire::Frame& f, double now_ms);
  void remove(std::string_view id) {
    candidates_.erase(id);
    forgotten_.erase(id);
  }
  // Drops candidates silent long enough to count as removed; returns how many.
  size_t prune(double now_ms);
  // Shifts stored local times after the clock went backwards.
  void shift(double delta_ms);

  const Candidate* find(std::string_view id) const { return candidates_.find(id); }
  // When `id` last made progress, also after it was pruned (a silent leader is pruned
  // after six refresh intervals, which can be sooner than the takeover timeout);
  // `fallback` when this table never heard of it or has forgotten it.
  double last_progress_ms(std::string_view id, double fallback) const;
  // Rate limit for requests a sender makes (abdicate): true, and the request counts,
  // when `id` is known and none of its requests was honoured within `every_ms`.
  bool allow_request(std::string_view id, double now_ms, double every_ms);
  using Table = FixedMap<TabId, Candidate, kMaxCandidates>;
  const Table& all() const { return candidates_; }
  size_t size() const { return candidates_.size(); }

  // alive: progressed within 1.5 refresh intervals; suspect: within 3; expired: within 6.
  static Liveness liveness(const Candidate& c, double now_ms);

 private:
  // What is remembered of a pruned candidate: if it speaks again without progress (a
  // frozen tab answering a message), it must not come back as freshly alive.
  struct Forgotten {
    uint32_t generation = 0;
    uint64_t tick_seq = 0;
    double last_progress_ms = 0;
    double first_seen_ms = 0;
  };
  static constexpr size_t kMaxForgotten = 64;

  Table candidates_;
  FixedMap<TabId, Forgotten, kMaxForgotten> forgotten_;
  double max_refresh_ms_;
  double stale_window_ms_;
};

}  // namespace baton
