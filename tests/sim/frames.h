// A frame as another tab of the tests' app sends it: app version 1.0, first generation,
// refreshing every second, no capabilities, no claims. The unit tests, the scenarios and the
// simulation's hostile sender start from it and change what their case is about.
#pragma once

#include <string>

#include "core/wire.h"

namespace baton::sim {

inline wire::Frame frame_from(const std::string& sender, wire::Kind kind) {
  wire::Frame f;
  f.kind = kind;
  f.sender = sender;
  f.generation = 1;
  f.app_version = "1.0";
  f.refresh_ms = 1000;
  return f;
}

}  // namespace baton::sim
