// How often an idle follower refreshes its presence among many tabs: the channel's idle
// traffic is the leader's heartbeat, delivered to every other tab, and the followers'
// refreshes together must stay a small, flat share of it as tabs are added.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/election.h"
#include "election_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

struct Refreshes {
  int sent = 0;                // presence frames the follower's timer sent in the window
  uint32_t announced_ms = 0;   // the refresh interval its last one announced
  uint64_t ticks = 0;          // how often its timer ran in the window
  Role role = Role::follower;
};

// A broadcast-only follower among `tabs` tabs: a leader that heartbeats every second and
// `tabs - 2` other followers that refresh every 50 s. Counted over `window_ms` after a
// minute of settling.
Refreshes idle_follower(int tabs, double window_ms) {
  Election follower(config("f", Authority::broadcast));
  follower.step(event(EventKind::join, 0, "ws"));
  Refreshes r;
  double now = 1, heartbeat_at = 2, peers_at = 1;
  uint64_t leader_tick = 1, peer_tick = 0;
  auto run = [&](double until, bool counted) {
    while (now < until) {
      if (peers_at <= std::min(heartbeat_at, follower.next_deadline())) {
        now = peers_at;
        peers_at += 50000;
        ++peer_tick;
        for (int i = 0; i < tabs - 2; ++i) {
          wire::Frame peer = peer_frame("p" + std::to_string(i), wire::Kind::presence, peer_tick);
          peer.refresh_ms = 60000;
          follower.step(message(now, wire::encode(peer)));
        }
        continue;
      }
      if (heartbeat_at <= follower.next_deadline()) {
        now = heartbeat_at;
        heartbeat_at += 1000;
        wire::Frame hb = peer_frame("leader", wire::Kind::heartbeat, ++leader_tick);
        hb.claims = {{"ws", 1}};
        follower.step(message(now, wire::encode(hb)));
        continue;
      }
      now = follower.next_deadline();
      for (const auto& e : follower.step(event(EventKind::tick, now))) {
        wire::Frame f;
        if (e.kind != EffectKind::broadcast) continue;
        REQUIRE(wire::decode(e.bytes.data(), e.bytes.size(), f) == wire::DecodeError::ok);
        if (f.kind != wire::Kind::presence) continue;
        r.announced_ms = f.refresh_ms;
        if (counted) ++r.sent;
      }
    }
  };
  run(60000, false);
  uint64_t ticks_before = follower.metrics().ticks;
  run(60000 + window_ms, true);
  r.ticks = follower.metrics().ticks - ticks_before;
  r.role = follower.view("ws").role;
  return r;
}

// The deliveries per second that all followers' refreshes cause together: each of the
// `tabs - 1` followers sends `sent` frames in the window, each delivered to `tabs - 1` tabs.
double follower_deliveries_per_s(const Refreshes& r, int tabs, double window_ms) {
  return r.sent * (tabs - 1.0) * (tabs - 1.0) / (window_ms / 1000);
}

}  // namespace

TEST_CASE("idle: up to eight tabs a follower refreshes every heartbeat per tab") {
  for (int tabs : {2, 3, 5, 8}) {
    Refreshes r = idle_follower(tabs, 120000);
    CHECK(r.role == Role::follower);
    CHECK(r.announced_ms == 1000u * tabs);
  }
}

TEST_CASE("idle: beyond eight tabs the followers' refreshes together cost the channel a small share") {
  const double window = 20 * 60000.0;
  double leader_16 = 15, leader_32 = 31;  // deliveries per second of the leader's heartbeat
  Refreshes r16 = idle_follower(16, window), r32 = idle_follower(32, window), r64 = idle_follower(64, window);
  for (const Refreshes* r : {&r16, &r32, &r64}) {
    CHECK(r->role == Role::follower);
    CHECK(r->ticks <= window / 1000);  // never more than one wake-up per heartbeat
  }
  CHECK(r16.announced_ms == 32000u);   // 16 * 16 / 8 heartbeats
  CHECK(r32.announced_ms == 60000u);   // 32 * 32 / 8 = 128, capped at a minute
  CHECK(r64.announced_ms == 60000u);   // the cap also bounds a forged frame's reach
  double f16 = follower_deliveries_per_s(r16, 16, window), f32 = follower_deliveries_per_s(r32, 32, window);
  // About eight per second at 16 tabs, about half the leader's at 32 past the cap (one
  // refresh per heartbeat per tab would make them as many as the leader's: 15 and 31).
  CHECK(f16 <= 8.5);
  CHECK(f16 <= 0.6 * leader_16);
  CHECK(f32 <= 0.6 * leader_32);
}
