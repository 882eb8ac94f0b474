// Helpers shared by the files that implement Node. Not part of the core's interface.
#pragma once
#include <string_view>

#include "node.h"

namespace baton::detail {

// Followers announce their presence at most this many heartbeats apart (Node::refresh_ms).
constexpr double kMaxRefreshHeartbeats = 60;

inline Effect make(EffectKind kind, std::string_view resource, LockMode mode = LockMode::queue) {
  Effect e;
  e.kind = kind;
  e.resource = resource;
  e.lock_mode = mode;
  return e;
}

}  // namespace baton::detail
