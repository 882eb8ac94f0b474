// Helpers shared by the core's hand-driven tests: a tab's config, an event, a message
// event, another tab's frame, finding an effect, a lease transaction's read, and taking a
// resource's lead with a given epoch.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/election.h"
#include "frames.h"

namespace baton::test {

inline Config config(const std::string& id, Authority a = Authority::web_locks) {
  Config c;
  c.id = id;
  c.authority = a;
  c.app_version = "1.0";
  c.capabilities = {"ws.owner.v1"};
  c.seed = 7;
  return c;
}

inline Event event(EventKind kind, double now, std::string_view resource = "") {
  Event e;
  e.kind = kind;
  e.now_ms = now;  // both clocks agree here: no test of this kind jumps the wall clock
  e.wall_ms = now;
  e.resource = resource;
  return e;
}

// A message event over bytes the caller keeps alive while the election steps it.
inline Event message(double now, const std::vector<uint8_t>& bytes) {
  Event e = event(EventKind::message, now);
  e.data = bytes.data();
  e.size = bytes.size();
  return e;
}

// A frame from another tab of the same app version and capabilities as config().
inline wire::Frame peer_frame(const std::string& sender, wire::Kind kind = wire::Kind::presence,
                              uint64_t tick = 1) {
  wire::Frame f = sim::frame_from(sender, kind);
  f.capabilities = {"ws.owner.v1"};
  f.tick_seq = tick;
  return f;
}

inline const Effect* find(const std::vector<Effect>& fx, EffectKind kind) {
  auto it = std::find_if(fx.begin(), fx.end(), [kind](const Effect& e) { return e.kind == kind; });
  return it == fx.end() ? nullptr : &*it;
}

// Steps the lease transaction's read of `current` (present=false: no record) and of the epoch
// `counter` at `now` and `wall`; returns the record the step writes (present=false: nothing).
inline LeaseRecord lease_read(Election& election, std::string_view resource, const LeaseRecord& current, double now, double wall,
                              uint64_t counter = 0) {
  Event e = event(EventKind::lease_read, now, resource);
  e.wall_ms = wall;
  e.lease = current;
  e.epoch = counter;
  std::vector<Effect> fx = election.step(e);
  const Effect* write = find(fx, EffectKind::lease_write);
  return write ? write->lease : LeaseRecord{};
}

inline std::vector<Effect> lead(Election& election, const std::string& res, double now, uint64_t epoch) {
  election.step(event(EventKind::join, now, res));
  election.step(event(EventKind::lock_granted, now + 1, res));
  Event alloc = event(EventKind::epoch_allocated, now + 2, res);
  alloc.epoch = epoch;
  return election.step(alloc);
}

}  // namespace baton::test
