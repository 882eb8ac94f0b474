#include "presence.h"

#include <algorithm>

namespace baton {

Presence::Observed Presence::observe(const wire::Frame& f, double now_ms) {
  auto it = candidates_.find(f.sender);
  if (it != candidates_.end() && f.generation < it->second.generation &&
      now_ms - it->second.generation_since_ms < stale_window_ms_) {
    return Observed::stale_generation;
  }
  if (it == candidates_.end() && candidates_.size() >= kMaxCandidates) return Observed::table_full;
  // A lower generation still speaking after the stale window is a live tab: the higher
  // one was forged (or is gone), and the lower one replaces it like a new tab.
  bool is_new = it == candidates_.end() || f.generation != it->second.generation;
  Candidate& c = candidates_[f.sender];
  if (it == candidates_.end()) c.first_seen_ms = now_ms;
  if (is_new) c.generation_since_ms = now_ms;
  bool changed = is_new || c.lifecycle != f.lifecycle || c.app_version != f.app_version ||
                 c.capabilities != f.capabilities;
  bool progress = !is_new ? f.tick_seq > c.tick_seq : true;
  if (is_new) {
    auto old = forgotten_.find(f.sender);
    if (old != forgotten_.end()) {
      if (old->second.generation == f.generation && f.tick_seq <= old->second.tick_seq) {
        progress = false;
        c.last_progress_ms = old->second.last_progress_ms;
        c.tick_seq = old->second.tick_seq;
        c.first_seen_ms = old->second.first_seen_ms;
      }
      forgotten_.erase(old);
    }
  }
  if (progress) c.last_progress_ms = now_ms;
  c.id = f.sender;
  c.generation = f.generation;
  c.lifecycle = f.lifecycle;
  c.app_version = f.app_version;
  c.start_ms = f.start_ms;
  c.capabilities = f.capabilities;
  // Only a sequence above every one seen is progress: a replayed or reordered frame
  // must not revive a stalled sender.
  c.tick_seq = progress ? f.tick_seq : std::max(c.tick_seq, f.tick_seq);
  c.refresh_ms = static_cast<uint32_t>(std::min<double>(std::max<uint32_t>(f.refresh_ms, 1), max_refresh_ms_));
  c.last_seen_ms = now_ms;
  if (is_new) return Observed::joined;
  return changed ? Observed::changed : Observed::unchanged;
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
  for (auto it = candidates_.begin(); it != candidates_.end();) {
    if (liveness(it->second, now_ms) == Liveness::removed) {
      if (forgotten_.size() >= kMaxForgotten) forgotten_.erase(forgotten_.begin());
      forgotten_[it->first] = {it->second.generation, it->second.tick_seq, it->second.last_progress_ms,
                               it->second.first_seen_ms};
      it = candidates_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

void Presence::shift(double delta_ms) {
  for (auto& [id, c] : candidates_) {
    c.last_seen_ms += delta_ms;
    c.last_progress_ms += delta_ms;
    c.first_seen_ms += delta_ms;
    c.generation_since_ms += delta_ms;
    if (c.last_request_ms >= 0) c.last_request_ms += delta_ms;
  }
  for (auto& [id, f] : forgotten_) {
    f.last_progress_ms += delta_ms;
    f.first_seen_ms += delta_ms;
  }
}

bool Presence::allow_request(const std::string& id, double now_ms, double every_ms) {
  auto it = candidates_.find(id);
  if (it == candidates_.end()) return false;
  Candidate& c = it->second;
  if (c.last_request_ms >= 0 && now_ms - c.last_request_ms < every_ms) return false;
  c.last_request_ms = now_ms;
  return true;
}

const Candidate* Presence::find(const std::string& id) const {
  auto it = candidates_.find(id);
  return it == candidates_.end() ? nullptr : &it->second;
}

double Presence::last_progress_ms(const std::string& id, double fallback) const {
  if (const Candidate* c = find(id)) return c->last_progress_ms;
  auto old = forgotten_.find(id);
  return old == forgotten_.end() ? fallback : old->second.last_progress_ms;
}

}  // namespace baton
