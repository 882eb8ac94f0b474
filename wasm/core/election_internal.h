// Helpers shared by the files that implement Election. Not part of the core's interface.
#pragma once
#include <string_view>

#include "election.h"

namespace baton::detail {

// Followers announce their presence at most this many heartbeats apart (Election::refresh_ms):
// a minute by default. The others take an announced interval up to this cap, so it also
// bounds how long one frame (a made-up sender's too) keeps an entry alive: 1.5 intervals.
constexpr double kMaxRefreshHeartbeats = 60;
// Up to this many tabs a follower refreshes every heartbeat per tab; beyond, with the
// square of the tabs (Election::refresh_ms).
constexpr double kQuietFromTabs = 8;

// A new effect at the end of `out`, made in place (an Effect is large: its frame's bytes
// are in it). The reference is valid until the next effect is added.
inline Effect& add(Effects& out, EffectKind kind, std::string_view resource,
                   LockMode mode = LockMode::queue) {
  Effect& e = out.emplace_back();
  e.kind = kind;
  e.resource = resource;
  e.lock_mode = mode;
  return e;
}

}  // namespace baton::detail
