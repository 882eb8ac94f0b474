#include "presence.h"

#include <algorithm>

namespace baton {

Presence::Observed Presence::observe(const wire::Frame& f, double now_ms) {
  Candidate* known = candidates_.find(f.sender);
  // A frame continues its sender's entry when it has the same generation and a tick the
  // sender's timer can have reached. Any other frame (another generation: a page restored
  // from bfcache; a lower tick: the tab restarted; or a forgery) replaces the entry like a
  // new tab, but only once the entry's own sender stopped running.
  bool same_generation = known && f.generation == known->generation;
  // Frames carry no secret, so a forger may leap ahead of a real tab's tick sequence. The
  // real tab's frames then fall below the newest; once they rise above an earlier such
  // frame, they are a second sender under this id that runs, and count as its progress:
  // one forged leap cannot make a running tab's frames look old, and the tab silent. One
  // replayed frame, or the same one again, is never progress.
  bool below = same_generation && f.tick_seq < known->tick_seq;
  bool second_sender = below && known->below_seen && f.tick_seq > known->below_tick;
  if (below) {
    known->below_tick = std::max(known->below_tick, f.tick_seq);
    known->below_seen = true;
  }
  bool continues = same_generation && (second_sender || plausible_tick(*known, f.tick_seq, now_ms));
  if (known && !continues && holds(*known, now_ms)) {
    return f.generation != known->generation ? Observed::stale_generation : Observed::old_frame;
  }
  if (!known && candidates_.full()) return Observed::table_full;
  bool is_new = !continues;
  Candidate& c = known ? *known : *candidates_.insert(f.sender);
  if (!known) c.first_seen_ms = now_ms;
  if (is_new) {
    c.progressed = false;
    c.below_seen = false;
    c.below_tick = 0;
  }
  bool progress = !is_new ? f.tick_seq > c.tick_seq || second_sender : true;
  // Its first progress counts as a change: a newer app version vetoes only from then on.
  bool first_progress = progress && !is_new && !c.progressed;
  if (first_progress) c.progressed = true;
  bool changed = is_new || first_progress || c.lifecycle != f.lifecycle || c.app_version != f.app_version ||
                 c.capabilities != f.capabilities || c.observes_only != f.observes_only;
  if (is_new) {
    if (const Forgotten* old = forgotten_.find(f.sender)) {
      if (old->generation == f.generation && f.tick_seq <= old->tick_seq) {
        // Not above the newest tick it had: a frozen tab answering, unless frames below
        // it keep rising (a real tab a forger leapt ahead of, as above).
        bool second_sender_rises = old->below_seen && f.tick_seq > old->below_tick;
        if (!second_sender_rises) {
          progress = false;
          c.last_progress_ms = old->last_progress_ms;
        }
        c.tick_seq = old->tick_seq;
        c.below_seen = true;
        c.below_tick = std::max(old->below_tick, f.tick_seq);
        c.first_seen_ms = old->first_seen_ms;
      }
      forgotten_.erase(f.sender);
    }
  }
  if (progress) c.last_progress_ms = now_ms;
  c.id = f.sender;
  c.generation = f.generation;
  c.lifecycle = f.lifecycle;
  c.app_version = f.app_version;
  c.start_ms = f.start_ms;
  c.capabilities = f.capabilities;
  c.observes_only = f.observes_only;
  // Only a sequence above every one seen (or a second sender's, above its own) is
  // progress: a replayed or reordered frame must not revive a stalled sender.
  c.tick_seq = is_new && progress ? f.tick_seq : std::max(c.tick_seq, f.tick_seq);
  c.refresh_ms = static_cast<uint32_t>(std::min<double>(std::max<uint32_t>(f.refresh_ms, 1), max_refresh_ms_));
  c.last_seen_ms = now_ms;
  if (is_new) return Observed::joined;
  return changed ? Observed::changed : Observed::unchanged;
}

// One sender's frames arrive in order, so a lower tick is not from the sender as it is
// now: a replayed old state must not say it is frozen, hidden or newer. A tick far above
// what the sender's timer can have reached since its last progress is forged: taken as
// progress, it would make every later real frame look old.
bool Presence::plausible_tick(const Candidate& c, uint64_t tick_seq, double now_ms) {
  if (tick_seq < c.tick_seq) return false;
  double reachable = kTickSlack + std::max(0.0, now_ms - c.last_progress_ms) * kMaxTicksPerMs;
  return static_cast<double>(tick_seq - c.tick_seq) <= reachable;
}

bool Presence::holds(const Candidate& c, double now_ms) const {
  if (c.lifecycle == Lifecycle::frozen || c.lifecycle == Lifecycle::closing) return false;
  double window = c.progressed ? std::max(stale_window_ms_, 1.5 * c.refresh_ms) : stale_window_ms_;
  return now_ms - c.last_progress_ms < window;
}

Liveness Presence::liveness(const Candidate& c, double now_ms) {
  double silent = now_ms - c.last_progress_ms;
  double r = c.refresh_ms;
  if (silent <= 1.5 * r) return Liveness::alive;
  if (silent <= 3 * r) return Liveness::suspect;
  if (silent <= 6 * r) return Liveness::expired;
  return Liveness::removed;
}

size_t Presence::prune(double now_ms) {
  size_t removed = 0;
  for (auto* it = candidates_.begin(); it != candidates_.end();) {
    const Candidate& c = it->value;
    if (liveness(c, now_ms) == Liveness::removed) {
      // When full, the first id in order makes room.
      if (forgotten_.full()) forgotten_.erase(forgotten_.begin());
      *forgotten_.insert(it->key) = {c.generation, c.tick_seq, c.below_tick, c.below_seen, c.last_progress_ms, c.first_seen_ms};
      it = candidates_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

double Presence::last_progress_ms(std::string_view id, double fallback) const {
  if (const Candidate* c = find(id)) return c->last_progress_ms;
  const Forgotten* old = forgotten_.find(id);
  return old ? old->last_progress_ms : fallback;
}

}  // namespace baton
