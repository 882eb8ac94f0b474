// What a resource looks like from this tab, and the log of its role changes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "fixed.h"
#include "types.h"
#include "wire.h"

namespace baton {

struct Transition {
  double at_ms = 0;  // wall clock, for the application
  ResourceName resource;
  Role from = Role::follower;
  Role to = Role::follower;
  Reason reason = Reason::none;
  uint64_t epoch = 0;
};

// What a resource looks like from this tab.
struct ResourceView {
  Role role = Role::follower;
  Reason reason = Reason::none;
  uint64_t epoch = 0;            // own term when leading
  TabId leader;                  // known leader id (may be this tab), empty if none known
  uint64_t leader_epoch = 0;
  double leader_since_ms = 0;    // wall clock, for the application
  bool eligible = false;         // as of the last step's time; not told to the glue (boundary.cc)
  Degraded degraded = Degraded::none;  // own term when leading: fenced effects must be refused
  // Own term when leading: not a leader from this monotonic time on, nor from this wall
  // time on, unless a later step says otherwise. The lease term ends when another tab may
  // take the record over, which the others judge by the record's wall times and by how long
  // they saw it unchanged; a tab that was frozen, or whose wall clock jumped forward, must
  // not act on its term before the core has looked at it again.
  double valid_until_ms = kNever;
  double valid_until_wall_ms = kNever;
};

// The transition log keeps this many of the latest role changes.
constexpr size_t kLogCapacity = 128;
using TransitionLog = Ring<Transition, kLogCapacity>;

}  // namespace baton
