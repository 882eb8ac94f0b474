// Helpers shared by the core's hand-driven tests: a tab's config, an event, finding an
// effect, and taking a resource's lead with a given epoch.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/node.h"

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
  e.now_ms = now;
  e.resource = resource;
  return e;
}

inline const Effect* find(const std::vector<Effect>& fx, EffectKind kind) {
  auto it = std::find_if(fx.begin(), fx.end(), [kind](const Effect& e) { return e.kind == kind; });
  return it == fx.end() ? nullptr : &*it;
}

inline std::vector<Effect> lead(Node& n, const std::string& res, double now, uint64_t epoch) {
  n.step(event(EventKind::join, now, res));
  n.step(event(EventKind::lock_granted, now + 1, res));
  Event alloc = event(EventKind::epoch_allocated, now + 2, res);
  alloc.epoch = epoch;
  return n.step(alloc);
}

}  // namespace baton::test
