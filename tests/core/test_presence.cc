// Presence: the table of other tabs. Liveness is progress (a rising tick sequence), never
// replies: a frozen tab still answers messages, with the same tick sequence.
//
// Invariants served: 3 (a silent or frozen leader is noticed) and 4 (bounded stale
// ownership: it is judged suspect, then expired, then removed).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/presence.h"
#include "core/types.h"
#include "core/wire.h"

using namespace baton;
using Observed = Presence::Observed;

namespace {

wire::Frame frame(const std::string& sender, uint64_t tick_seq, uint32_t generation = 1,
                  uint32_t refresh_ms = 1000) {
  wire::Frame f;
  f.kind = wire::Kind::presence;
  f.sender = sender;
  f.generation = generation;
  f.lifecycle = Lifecycle::active;
  f.app_version = "1.0";
  f.start_ms = 500;
  f.tick_seq = tick_seq;
  f.refresh_ms = refresh_ms;
  f.capabilities = {"ws.owner.v1"};
  return f;
}

const char* name(Observed o) {
  switch (o) {
    case Observed::unchanged: return "unchanged";
    case Observed::joined: return "joined";
    case Observed::changed: return "changed";
    case Observed::stale_generation: return "stale_generation";
    case Observed::old_frame: return "old_frame";
  }
  return "?";
}

}  // namespace

// ---------------------------------------------------------------------------------------
// observe

TEST_CASE("presence: the first frame of a sender joins and records its fields") {
  Presence p;
  CHECK(p.size() == 0);
  CHECK(p.find("a") == nullptr);
  wire::Frame f = frame("a", 7, 3, 2000);
  f.lifecycle = Lifecycle::hidden;
  f.app_version = "2.1";
  f.start_ms = 12345;
  f.capabilities = {"x", "feed.preferred"};
  CHECK(p.observe(f, 1000) == Observed::joined);
  REQUIRE(p.size() == 1);
  const Candidate* c = p.find("a");
  REQUIRE(c != nullptr);
  CHECK(c->id == "a");
  CHECK(c->generation == 3);
  CHECK(c->lifecycle == Lifecycle::hidden);
  CHECK(c->app_version == "2.1");
  CHECK(c->start_ms == 12345);
  CHECK(c->capabilities == Capabilities{"x", "feed.preferred"});
  CHECK(c->tick_seq == 7);
  CHECK(c->refresh_ms == 2000);
  CHECK(c->last_seen_ms == 1000);
  CHECK(c->last_progress_ms == 1000);
  CHECK(p.all().find("a") != nullptr);
}

TEST_CASE("presence: several senders are tracked independently") {
  Presence p;
  CHECK(p.observe(frame("a", 1), 0) == Observed::joined);
  CHECK(p.observe(frame("b", 1), 10) == Observed::joined);
  CHECK(p.observe(frame("c", 1), 20) == Observed::joined);
  CHECK(p.size() == 3);
  CHECK(p.observe(frame("b", 2), 900) == Observed::changed);  // its first progress
  CHECK(p.find("a")->last_progress_ms == 0);
  CHECK(p.find("b")->last_progress_ms == 900);
  CHECK(p.find("c")->last_progress_ms == 20);
}

TEST_CASE("presence: a repeated frame is unchanged") {
  Presence p;
  REQUIRE(p.observe(frame("a", 1), 0) == Observed::joined);
  CHECK(p.observe(frame("a", 1), 100) == Observed::unchanged);
  CHECK(p.observe(frame("a", 2), 200) == Observed::changed);  // its first progress (app-version veto)
  CHECK(p.observe(frame("a", 3), 300) == Observed::unchanged);  // later progress is not a change
  CHECK(p.size() == 1);
}

TEST_CASE("presence: a change of what ranking depends on is reported as changed") {
  Presence p;
  REQUIRE(p.observe(frame("a", 1), 0) == Observed::joined);

  SUBCASE("lifecycle") {
    wire::Frame f = frame("a", 1);
    f.lifecycle = Lifecycle::hidden;
    CHECK(p.observe(f, 10) == Observed::changed);
    CHECK(p.find("a")->lifecycle == Lifecycle::hidden);
    CHECK(p.observe(f, 20) == Observed::unchanged);  // reported once
  }
  SUBCASE("app version") {
    wire::Frame f = frame("a", 1);
    f.app_version = "1.1";
    CHECK(p.observe(f, 10) == Observed::changed);
    CHECK(p.find("a")->app_version == "1.1");
  }
  SUBCASE("capabilities") {
    wire::Frame f = frame("a", 1);
    f.capabilities.push_back("feed.preferred");
    CHECK(p.observe(f, 10) == Observed::changed);
    CHECK(p.find("a")->capabilities.size() == 2);
    f.capabilities.clear();
    CHECK(p.observe(f, 20) == Observed::changed);
  }
}

TEST_CASE("presence: an older generation of a known sender is stale and ignored") {
  Presence p;
  wire::Frame current = frame("a", 50, 5);
  REQUIRE(p.observe(current, 1000) == Observed::joined);
  wire::Frame old = frame("a", 999, 4);  // higher tick, but from an older page instance
  old.lifecycle = Lifecycle::closing;
  Observed o = p.observe(old, 2000);
  CAPTURE(name(o));
  CHECK(o == Observed::stale_generation);
  const Candidate* c = p.find("a");
  REQUIRE(c != nullptr);
  CHECK(c->generation == 5);
  CHECK(c->tick_seq == 50);
  CHECK(c->lifecycle == Lifecycle::active);
  CHECK(c->last_seen_ms == 1000);
  CHECK(c->last_progress_ms == 1000);
}

TEST_CASE("presence: a newer generation replaces the candidate and counts as progress") {
  Presence p;
  REQUIRE(p.observe(frame("a", 500, 1), 0) == Observed::joined);
  // Restored from bfcache: generation bumped, tick sequence may restart low.
  Observed o = p.observe(frame("a", 3, 2), 5000);
  CAPTURE(name(o));
  CHECK(o == Observed::joined);
  const Candidate* c = p.find("a");
  REQUIRE(c != nullptr);
  CHECK(c->generation == 2);
  CHECK(c->tick_seq == 3);
  CHECK(c->last_progress_ms == 5000);
  CHECK(p.size() == 1);
  // and the old generation is now stale
  CHECK(p.observe(frame("a", 501, 1), 5100) == Observed::stale_generation);
}

// ---------------------------------------------------------------------------------------
// progress

TEST_CASE("presence: only a rising tick sequence is progress") {
  Presence p;
  REQUIRE(p.observe(frame("a", 10), 0) == Observed::joined);
  p.observe(frame("a", 10), 400);
  CHECK(p.find("a")->last_seen_ms == 400);
  CHECK(p.find("a")->last_progress_ms == 0);
  p.observe(frame("a", 11), 800);
  CHECK(p.find("a")->last_seen_ms == 800);
  CHECK(p.find("a")->last_progress_ms == 800);
  CHECK(p.observe(frame("a", 9), 1200) == Observed::old_frame);  // going back changes nothing
  CHECK(p.find("a")->last_seen_ms == 800);
  CHECK(p.find("a")->last_progress_ms == 800);
}

TEST_CASE("presence: a frozen tab that still answers messages is not kept alive") {
  // The leader froze at tick 42. Its message handlers still run (BroadcastChannel), so it
  // keeps replying with frames, but its timers are stopped: the tick never rises.
  Presence p;
  REQUIRE(p.observe(frame("leader", 42), 0) == Observed::joined);
  std::vector<Liveness> seen;
  for (double t = 250; t <= 8000; t += 250) {
    p.observe(frame("leader", 42), t);  // a reply: seen, but no progress
    const Candidate* c = p.find("leader");
    REQUIRE(c != nullptr);
    CHECK(c->last_seen_ms == t);
    CHECK(c->last_progress_ms == 0);
    seen.push_back(Presence::liveness(*c, t));
  }
  CHECK(Presence::liveness(*p.find("leader"), 1500) == Liveness::alive);
  CHECK(Presence::liveness(*p.find("leader"), 2000) == Liveness::suspect);
  CHECK(Presence::liveness(*p.find("leader"), 4000) == Liveness::expired);
  CHECK(seen.back() == Liveness::removed);
  // and prune drops it although it replied a moment ago
  CHECK(p.prune(8000) == 1);
  CHECK(p.find("leader") == nullptr);
}

TEST_CASE("presence: a ticking tab stays alive indefinitely") {
  Presence p;
  uint64_t tick = 1;
  REQUIRE(p.observe(frame("a", tick), 0) == Observed::joined);
  for (double t = 1000; t <= 600'000; t += 1000) {
    p.observe(frame("a", ++tick), t);
    CHECK(Presence::liveness(*p.find("a"), t + 500) == Liveness::alive);
  }
  CHECK(p.prune(600'500) == 0);
  CHECK(p.size() == 1);
}

// Regression: a lower tick_seq used to overwrite the stored one, so the old, already
// seen sequence counted as progress again and kept a stalled sender alive.
TEST_CASE("presence: a tick sequence seen before is not progress again") {
  Presence p;
  REQUIRE(p.observe(frame("a", 10), 0) == Observed::joined);
  p.observe(frame("a", 5), 1000);   // lower: not progress
  p.observe(frame("a", 10), 2000);  // 10 was seen already: still no progress
  CHECK(p.find("a")->last_progress_ms == 0);
  CHECK(p.find("a")->tick_seq == 10);
}

// ---------------------------------------------------------------------------------------
// liveness thresholds

TEST_CASE("presence: liveness thresholds at 1.5x, 3x and 6x the refresh interval") {
  Candidate c;
  c.refresh_ms = 1000;
  c.last_progress_ms = 10'000;
  auto at = [&](double silent) { return Presence::liveness(c, c.last_progress_ms + silent); };
  CHECK(at(0) == Liveness::alive);
  CHECK(at(1500) == Liveness::alive);
  CHECK(at(1501) == Liveness::suspect);
  CHECK(at(3000) == Liveness::suspect);
  CHECK(at(3001) == Liveness::expired);
  CHECK(at(6000) == Liveness::expired);
  CHECK(at(6001) == Liveness::removed);
  CHECK(at(1e12) == Liveness::removed);
  // A clock that went backwards (negative silence) does not make a tab suspect.
  CHECK(at(-5000) == Liveness::alive);
}

TEST_CASE("presence: thresholds scale with the interval the sender announced") {
  Presence p;
  REQUIRE(p.observe(frame("slow", 1, 1, 10'000), 0) == Observed::joined);  // a follower in a big group
  REQUIRE(p.observe(frame("fast", 1, 1, 100), 0) == Observed::joined);
  const Candidate& slow = *p.find("slow");
  const Candidate& fast = *p.find("fast");
  CHECK(Presence::liveness(slow, 15'000) == Liveness::alive);
  CHECK(Presence::liveness(slow, 15'001) == Liveness::suspect);
  CHECK(Presence::liveness(slow, 60'000) == Liveness::expired);
  CHECK(Presence::liveness(slow, 60'001) == Liveness::removed);
  CHECK(Presence::liveness(fast, 150) == Liveness::alive);
  CHECK(Presence::liveness(fast, 151) == Liveness::suspect);
  CHECK(Presence::liveness(fast, 601) == Liveness::removed);
}

TEST_CASE("presence: a zero refresh interval is treated as 1 ms, not as never silent") {
  Presence p;
  REQUIRE(p.observe(frame("a", 1, 1, 0), 0) == Observed::joined);
  const Candidate& c = *p.find("a");
  CHECK(c.refresh_ms == 1);
  CHECK(Presence::liveness(c, 1) == Liveness::alive);
  CHECK(Presence::liveness(c, 2) == Liveness::suspect);
  CHECK(Presence::liveness(c, 7) == Liveness::removed);
}

// ---------------------------------------------------------------------------------------
// prune, remove

TEST_CASE("presence: prune removes only candidates silent past 6x refresh") {
  Presence p;
  p.observe(frame("gone", 1), 0);        // removed at t > 6000
  p.observe(frame("expired", 1), 2000);  // expired at 8000 - 2000 = 6000 silent
  p.observe(frame("suspect", 1), 5500);  // suspect at 2500 silent
  p.observe(frame("alive", 1), 7000);
  REQUIRE(p.size() == 4);
  CHECK(p.prune(8000) == 1);
  CHECK(p.size() == 3);
  CHECK(p.find("gone") == nullptr);
  CHECK(p.find("expired") != nullptr);
  CHECK(p.find("suspect") != nullptr);
  CHECK(p.find("alive") != nullptr);
  CHECK(p.prune(8000) == 0);  // idempotent
  CHECK(p.prune(100'000) == 3);
  CHECK(p.size() == 0);
  CHECK(p.prune(100'000) == 0);
}

TEST_CASE("presence: a pruned sender that reappears joins again, alive only with progress") {
  Presence p;
  p.observe(frame("a", 5), 0);
  REQUIRE(p.prune(10'000) == 1);
  // The same tick sequence: a frozen tab answering a message. Still not alive.
  CHECK(p.observe(frame("a", 5), 10'001) == Observed::joined);
  CHECK(Presence::liveness(*p.find("a"), 10'001) == Liveness::removed);
  REQUIRE(p.prune(10'002) == 1);
  // A higher one: its timers run again.
  CHECK(p.observe(frame("a", 6), 10'003) == Observed::joined);
  CHECK(Presence::liveness(*p.find("a"), 10'003) == Liveness::alive);
}

TEST_CASE("presence: remove forgets a sender at once") {
  Presence p;
  p.observe(frame("a", 1), 0);
  p.observe(frame("b", 1), 0);
  p.remove("a");
  CHECK(p.find("a") == nullptr);
  CHECK(p.size() == 1);
  p.remove("nobody");  // unknown ids are ignored
  CHECK(p.size() == 1);
  CHECK(p.observe(frame("a", 1), 10) == Observed::joined);
}

TEST_CASE("presence: an announced refresh interval is capped") {
  Presence p(60000);
  wire::Frame f = frame("a", 1);
  f.refresh_ms = UINT32_MAX;
  p.observe(f, 0);
  CHECK(p.find("a")->refresh_ms == 60000);
  CHECK(Presence::liveness(*p.find("a"), 6 * 60000 + 1) == Liveness::removed);
}
