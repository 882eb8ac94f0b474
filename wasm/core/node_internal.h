// Helpers shared by the files that implement Node (node.cc, peer_frames.cc, epochs.cc).
// Not part of the core's interface.
#pragma once
#include <string>

#include "node.h"

namespace baton::detail {

inline Effect make(EffectKind kind, const std::string& resource, LockMode mode = LockMode::queue) {
  Effect e;
  e.kind = kind;
  e.resource = resource;
  e.lock_mode = mode;
  return e;
}

}  // namespace baton::detail
