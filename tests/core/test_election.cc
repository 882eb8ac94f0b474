// The per-resource state machine, driven by hand: one event at a time, checking the
// effects each step asks for. Only what a scenario cannot show reads better here; the
// hand-overs, faults and hostile frames are scenarios in testdata/.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/election.h"
#include "election_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

std::vector<wire::Frame> frames(const std::vector<Effect>& fx) {
  std::vector<wire::Frame> out;
  for (const auto& e : fx) {
    if (e.kind != EffectKind::broadcast) continue;
    wire::Frame f;
    REQUIRE(wire::decode(e.bytes.data(), e.bytes.size(), f) == wire::DecodeError::ok);
    out.push_back(f);
  }
  return out;
}

std::vector<uint8_t> last_broadcast(const std::vector<Effect>& fx) {
  for (auto it = fx.rbegin(); it != fx.rend(); ++it) {
    if (it->kind == EffectKind::broadcast) return it->bytes;
  }
  return {};
}

// Takes a Web Locks election from nothing to leader of `res` with `epoch`.
}  // namespace

TEST_CASE("a frozen leader's replies carry no progress, so they do not stop the steal") {
  Election a(config("a")), b(config("b"));
  auto afx = lead(a, "ws", 0, 3);
  b.step(event(EventKind::join, 0, "ws"));
  b.step(message(3, last_broadcast(afx)));
  // a's message handler still runs (frozen tabs answer), but its timers do not.
  double now = 3;
  bool stole = false;
  while (now < 10000 && !stole) {
    now += 250;
    auto reply = a.step(event(EventKind::force_election, now, "ws"));  // handler runs, no tick
    auto bytes = last_broadcast(reply);
    auto fx = b.step(bytes.empty() ? event(EventKind::tick, now) : message(now, bytes));
    for (const auto& e : fx) stole |= e.kind == EffectKind::lock_request && e.lock_mode == LockMode::steal;
  }
  CHECK(stole);
  CHECK(now < 4000);
}

TEST_CASE("a tab frozen by its freeze event gives up its place in the lock's queue; a grant then asks for no epoch") {
  Election b(config("b"));
  auto fx = b.step(event(EventKind::join, 0, "ws"));
  double now = 0;
  auto queued = [&] {
    const Effect* request = find(fx, EffectKind::lock_request);
    return request && request->lock_mode == LockMode::queue;
  };
  while (!queued() && now < 5000) {
    now = std::max(now + 1, b.next_deadline());
    fx = b.step(event(EventKind::tick, now));
  }
  REQUIRE(queued());
  // Its timers stop now: the release must come from the freeze event's own step.
  Event frozen = event(EventKind::lifecycle, now + 1);
  frozen.lifecycle = Lifecycle::frozen;
  CHECK(find(b.step(frozen), EffectKind::lock_release));
  // A grant already on its way goes back, and no epoch transaction begins in the frozen page.
  fx = b.step(event(EventKind::lock_granted, now + 2, "ws"));
  CHECK(find(fx, EffectKind::lock_release));
  CHECK_FALSE(find(fx, EffectKind::allocate_epoch));
  CHECK(b.view("ws").role == Role::follower);
}

TEST_CASE("broadcast-only: an epoch answer below a term claimed meanwhile is allocated again") {
  Election a(config("a", Authority::broadcast));
  a.step(event(EventKind::join, 0, "ws"));
  // Broadcast-only waits a heartbeat to hear a leader, then takes over.
  std::vector<Effect> fx;
  for (int i = 0; i < 5 && !find(fx, EffectKind::allocate_epoch); ++i) fx = a.step(event(EventKind::tick, a.next_deadline()));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  // A leader that already left: its term still counts.
  wire::Frame claim = sim::frame_from("b", wire::Kind::goodbye);
  claim.claims = {{"ws", 9}};
  double now = a.next_deadline() - 1;
  a.step(message(now, wire::encode(claim)));
  Event done = event(EventKind::epoch_allocated, now + 1, "ws");
  done.epoch = 8;
  fx = a.step(done);
  CHECK(!find(fx, EffectKind::elected));
  const Effect* again = find(fx, EffectKind::allocate_epoch);
  REQUIRE(again);
  CHECK(again->epoch == 9);
  done.epoch = 10;
  fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 10);
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::none);
}

TEST_CASE("fence_check: the tab's fence answers in the step, from the newest term it saw; no term is refused") {
  Election a(config("a"));
  lead(a, "ws", 0, 5);
  auto check = [&a](std::string_view resource, uint64_t epoch) {
    Event e = event(EventKind::fence_check, 10, resource);
    e.epoch = epoch;
    std::vector<Effect> fx = a.step(e);
    REQUIRE(fx.size() == 1);  // the verdict alone: a check does no other work
    REQUIRE(fx[0].kind == EffectKind::fence_verdict);
    CHECK(fx[0].resource == resource);
    return fx[0];
  };
  uint64_t elections = a.metrics().elections;
  Effect v = check("ws", 5);
  CHECK(v.verdict == FenceVerdict::accepted);
  CHECK(v.epoch == 5);
  v = check("ws", 4);
  CHECK(v.verdict == FenceVerdict::stale_owner);
  CHECK(v.epoch == 5);
  // No term (a tab that does not lead): refused, and the highest term stays as it was.
  v = check("other", 0);
  CHECK(v.verdict == FenceVerdict::stale_owner);
  CHECK(v.epoch == 0);
  v = check("ws", 0);
  CHECK(v.verdict == FenceVerdict::stale_owner);
  CHECK(v.epoch == 5);
  CHECK(a.metrics().elections == elections);
}

TEST_CASE("lease: decide acquires with epoch + 1, respects a valid owner, renews, releases") {
  Election a(config("a", Authority::lease));
  auto fx = a.step(event(EventKind::join, 0, "sync"));
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(a.view("sync").role == Role::candidate);

  LeaseRecord theirs;
  theirs.present = true;
  theirs.owner = "b";
  theirs.generation = 1;
  theirs.epoch = 6;
  theirs.expires_ms = 4000;
  theirs.takeover_ms = 3000;
  CHECK(!lease_read(a, "sync", theirs, 10, 10).present);  // valid, someone else's

  LeaseRecord expired = theirs;
  expired.expires_ms = 5;
  expired.takeover_ms = 5;
  LeaseRecord mine = lease_read(a, "sync", expired, 10, 10);
  REQUIRE(mine.present);
  CHECK(mine.owner == "a");
  CHECK(mine.epoch == 7);
  CHECK(mine.expires_ms == 10 + 5000);
  CHECK(mine.takeover_ms == 10 + 3000);  // the suspect timeout: others may take it over then

  Event result = event(EventKind::lease_result, 12, "sync");
  result.lease = mine;
  fx = a.step(result);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 7);

  // Renewal at half the time others wait before a takeover keeps the epoch.
  double renew_at = a.next_deadline();
  while (renew_at < 1600) {
    fx = a.step(event(EventKind::tick, renew_at));
    if (find(fx, EffectKind::lease_try)) break;
    renew_at = a.next_deadline();
  }
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(renew_at >= 0 + 3000 / 2.0 - 1);
  LeaseRecord renewed = lease_read(a, "sync", mine, renew_at, renew_at);
  CHECK(renewed.epoch == 7);
  CHECK(renewed.expires_ms == renew_at + 5000);

  // Abdicating writes the record expired, keeping the epoch for the next owner's + 1.
  result.now_ms = renew_at + 1;
  result.wall_ms = renew_at + 1;
  result.lease = renewed;
  a.step(result);
  fx = a.step(event(EventKind::abdicate, renew_at + 2, "sync"));
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(a.view("sync").role == Role::stepping_down);
  LeaseRecord released = lease_read(a, "sync", renewed, renew_at + 3, renew_at + 3);
  REQUIRE(released.present);
  CHECK(released.expires_ms == 0);
  CHECK(released.epoch == 7);
}

TEST_CASE("triggers are coalesced into fewer evaluations") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  for (int i = 0; i < 20; ++i) {
    a.step(message(1 + i * 0.1, wire::encode(sim::frame_from("t" + std::to_string(i), wire::Kind::presence))));
  }
  a.step(event(EventKind::tick, a.next_deadline()));
  CHECK(a.metrics().triggers >= 20);
  CHECK(a.metrics().elections < a.metrics().triggers / 2);
}

TEST_CASE("the transition log is bounded and records reasons") {
  Election a(config("a"));
  // Terms until the ring has wrapped. Each starts with a tick, as a live tab's timer
  // runs: a tab whose timer is overdue counts as stalled and asks for no lock until its
  // next tick (defer_while_stalled). The bound stops the loop if terms stop coming.
  for (int terms = 0; a.log().pushed() <= kLogCapacity && terms < 2 * static_cast<int>(kLogCapacity); ++terms) {
    double t = terms * 100.0;
    a.step(event(EventKind::tick, t));
    lead(a, "ws", t, static_cast<uint64_t>(terms) + 1);
    a.step(event(EventKind::lock_lost, t + 50, "ws"));
  }
  CHECK(a.log().size() == kLogCapacity);
  CHECK(a.log().pushed() > kLogCapacity);
  CHECK(a.log().back().to == Role::follower);
  CHECK(a.log().back().reason == Reason::lock_lost);
  // Oldest first: the entries are in the order they happened.
  for (size_t i = 1; i < a.log().size(); ++i) CHECK(a.log()[i - 1].at_ms <= a.log()[i].at_ms);
}

TEST_CASE("dispose says goodbye, releases everything, and ends the election") {
  Election a(config("a"));
  lead(a, "ws", 0, 1);
  a.step(event(EventKind::join, 3, "sync"));
  auto fx = a.step(event(EventKind::dispose, 10));
  CHECK(find(fx, EffectKind::deposed));
  CHECK(std::count_if(fx.begin(), fx.end(), [](const Effect& e) { return e.kind == EffectKind::lock_release; }) == 2);
  auto sent = frames(fx);
  REQUIRE(!sent.empty());
  CHECK(sent.back().kind == wire::Kind::goodbye);
  CHECK(sent.back().subject.empty());
  CHECK(a.disposed());
  CHECK(a.next_deadline() == kNever);
  CHECK(a.step(event(EventKind::dispose, 11)).empty());
}

namespace {

// Two broadcast-only tabs on one channel, run millisecond by millisecond: frames reach the
// other tab at once, the epoch counter answers at once, and a crashed tab does nothing.
struct Pair {
  Election* tabs[2];
  bool up[2] = {true, true};
  uint64_t counter = 0;
  double last_frame_ms[2] = {-1, -1};

  void handle(int i, const std::vector<Effect>& fx, double t) {
    for (const auto& e : fx) {
      if (e.kind == EffectKind::broadcast) {
        last_frame_ms[i] = t;
        if (up[1 - i]) handle(1 - i, tabs[1 - i]->step(message(t, e.bytes)), t);
      } else if (e.kind == EffectKind::allocate_epoch) {
        counter = std::max(counter, e.epoch) + 1;
        Event alloc = event(EventKind::epoch_allocated, t, e.resource);
        alloc.epoch = counter;
        handle(i, tabs[i]->step(alloc), t);
      }
    }
  }
  void run_until(double end, int watch = -1) {
    for (double t = now; t < end; ++t) {
      now = t;
      for (int i = 0; i < 2; ++i) {
        if (up[i] && tabs[i]->next_deadline() <= t) handle(i, tabs[i]->step(event(EventKind::tick, t)), t);
      }
      if (watch >= 0 && tabs[watch]->view("ws").role != Role::follower) return;
    }
    now = end;
  }
  double now = 0;
};

}  // namespace

TEST_CASE("broadcast-only: a silent leader is replaced after takeoverMs even when that is many heartbeats") {
  // Presence forgets a tab silent for six refresh intervals (3 s here); the takeover must
  // still wait for the full suspect timeout after the leader's last heartbeat.
  Config ca = config("a", Authority::broadcast), cb = config("b", Authority::broadcast);
  for (Config* c : {&ca, &cb}) {
    c->heartbeat_ms = 500;
    c->suspect_ms = 4000;
  }
  Election a(ca), b(cb);
  Pair world{{&a, &b}};
  world.handle(0, a.step(event(EventKind::join, 0, "ws")), 0);
  world.handle(1, b.step(event(EventKind::join, 0, "ws")), 0);
  world.run_until(10000);
  REQUIRE(a.view("ws").leader == b.view("ws").leader);
  int leader = a.view("ws").role == Role::leader ? 0 : 1;
  REQUIRE(world.tabs[leader]->view("ws").role == Role::leader);
  int follower = 1 - leader;

  world.up[leader] = false;  // crashes: no goodbye, no more heartbeats
  double silent_since = world.last_frame_ms[leader];
  world.run_until(30000, follower);
  Role role = world.tabs[follower]->view("ws").role;
  CHECK(role != Role::follower);
  CHECK(world.now >= silent_since + ca.suspect_ms);
  CHECK(world.now < silent_since + ca.suspect_ms + ca.heartbeat_ms);
}

TEST_CASE("frames say observes-only while every resource joined is only observed, and at once when that changes") {
  Election o(config("o", Authority::broadcast));
  // Stepped before any join (the glue reports a hidden page first): not an observer yet.
  Event hidden = event(EventKind::lifecycle, 0);
  hidden.lifecycle = Lifecycle::hidden;
  auto hello = frames(o.step(hidden));
  REQUIRE(hello.size() == 2);  // the lifecycle's presence, then the hello
  CHECK(!hello[1].observes_only);

  Event observe = event(EventKind::join, 1, "ws");
  observe.policy.observe_only = true;
  auto fx = frames(o.step(observe));
  REQUIRE(fx.size() == 1);
  CHECK(fx[0].observes_only);

  // Joining another resource only to observe it changes nothing, and sends nothing.
  Event observe_sync = observe;
  observe_sync.resource = "sync";
  CHECK(frames(o.step(observe_sync)).empty());

  // Competing for one of them (broadcast-channel's awaitLeadership) ends it.
  Event compete = event(EventKind::join, 2, "sync");
  fx = frames(o.step(compete));
  REQUIRE(!fx.empty());
  CHECK(!fx[0].observes_only);

  // Leaving the one it competes for brings it back.
  fx = frames(o.step(event(EventKind::leave, 3, "sync")));
  REQUIRE(!fx.empty());
  CHECK(fx.back().observes_only);
}
