// Helpers shared by the files that implement Node. Not part of the core's interface.
#pragma once
#include <string_view>

#include "node.h"

namespace baton::detail {

// Followers announce their presence at most this many heartbeats apart (Node::refresh_ms):
// five minutes by default, so that one frame cannot keep a silent tab alive for long.
constexpr double kMaxRefreshHeartbeats = 300;
// Up to this many tabs a follower refreshes every heartbeat per tab; beyond, with the
// square of the tabs (Node::refresh_ms).
constexpr double kQuietFromTabs = 8;

inline Effect make(EffectKind kind, std::string_view resource, LockMode mode = LockMode::queue) {
  Effect e;
  e.kind = kind;
  e.resource = resource;
  e.lock_mode = mode;
  return e;
}

}  // namespace baton::detail
