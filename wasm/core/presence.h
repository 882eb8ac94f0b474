// The table of other tabs, built from the frames they send. Liveness is judged by
// progress (a rising tick sequence, which only the sender's timers advance), never by
// replies: a frozen tab still answers messages but its timers are stopped.
//
// Bounds on what one sender can do here: frames of another generation under a real tab's
// id are dropped while that tab shows it runs (see holds()), so they hide it for at most
// one suspect timeout even when they keep coming; a frame older than the newest one of its
// sender (a replay, or a forgery with a lower tick) changes nothing, unless such frames
// keep rising (a real tab a forger leapt ahead of; see observe); a made-up newer app
// version vetoes eligibility for at most one suspect timeout unless its tab leads (Election);
// the table holds at most kMaxCandidates senders. The limit: frames carry no secret, so a
// sender that keeps forging a real tab's id and generation with a rising tick sequence
// makes that id look alive, as it wishes, for as long as it keeps sending. Under Web
// Locks and the lease this can delay taking over from a frozen leader, never depose a
// healthy one. Replaying a tab's recorded frames in their order needs no forging and does
// the same, bounded: below the newest and rising, they cannot be told from the real tab's
// frames after a forger leapt ahead of it, so each recorded tick counts as progress once
// (a second pass rises above nothing new). A replayer that spaces the frames out keeps a
// silent tab alive for up to a suspect timeout per recorded frame that carries a tick of
// its own (scenario hostile_replayed_sequence.txt).
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
  bool observes_only = false;  // it never leads (wire::kObservesOnly)
  uint64_t tick_seq = 0;
  uint64_t below_tick = 0;     // the highest tick seen below tick_seq (see observe)
  bool below_seen = false;
  uint32_t refresh_ms = 1000;  // how often it promised to show progress
  double last_seen_ms = 0;     // monotonic time of its last frame
  double last_progress_ms = 0; // monotonic time its tick sequence last rose
  double first_seen_ms = 0;    // monotonic time this tab was first heard of
  bool progressed = false;     // its tick sequence rose under the current generation
};

class Presence {
 public:
  // `max_refresh_ms` caps the refresh interval a sender announces, so that one frame
  // cannot keep a silent tab "alive" for days.
  // `stale_window_ms` (the suspect timeout) bounds how long a generation that never
  // showed progress of its own keeps an id against frames of another generation: late
  // frames of a tab restored from bfcache arrive within milliseconds, while a forged frame
  // with generation 2^32-1 and a real tab's id must not blind the table to that tab for
  // longer.
  explicit Presence(double max_refresh_ms = 60000, double stale_window_ms = 3000)
      : max_refresh_ms_(max_refresh_ms), stale_window_ms_(stale_window_ms) {}

  // stale_generation: another generation of an id whose current one still runs, dropped.
  // old_frame: a tick below the newest seen from its sender (a replay) or far above what
  // its timer can have reached (forged): it changes nothing but when it was last seen.
  enum class Observed : uint8_t { unchanged, joined, changed, stale_generation, old_frame, table_full };
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

  const Candidate* find(std::string_view id) const { return candidates_.find(id); }
  // When `id` last made progress, also after it was pruned (a silent leader is pruned
  // after six refresh intervals, which can be sooner than the takeover timeout);
  // `fallback` when this table never heard of it or has forgotten it.
  double last_progress_ms(std::string_view id, double fallback) const;
  using Table = FixedMap<TabId, Candidate, kMaxCandidates>;
  const Table& all() const { return candidates_; }
  size_t size() const { return candidates_.size(); }

  // alive: progressed within 1.5 refresh intervals; suspect: within 3; expired: within 6.
  static Liveness liveness(const Candidate& c, double now_ms);

 private:
  // True while `c`'s generation keeps its id against frames of any other generation: it
  // is not frozen or closing, and it made progress within the stale window, or (once it
  // showed progress of its own) within its liveness window. A page restored from bfcache
  // said `closing` or went silent first, so its new generation takes the id at once.
  bool holds(const Candidate& c, double now_ms) const;
  // False for a tick below the newest seen from `c`, or above what its timer can reach.
  static bool plausible_tick(const Candidate& c, uint64_t tick_seq, double now_ms);
  // A tab's tick rises once per timer run; timers run at most about once a millisecond,
  // and a burst of triggers may run many within one.
  static constexpr double kMaxTicksPerMs = 1;
  static constexpr double kTickSlack = 1000;

  // What is remembered of a pruned candidate: if it speaks again without progress (a
  // frozen tab answering a message), it must not come back as freshly alive.
  struct Forgotten {
    uint32_t generation = 0;
    uint64_t tick_seq = 0;
    uint64_t below_tick = 0;  // see Candidate
    bool below_seen = false;
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
