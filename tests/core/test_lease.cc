// The IndexedDB lease, driven by hand: when another tab's record may be taken over, what a
// goodbye gives up, and a leader whose timers stopped (a tab frozen without warning).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/node.h"
#include "node_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

Event message(double now, const std::vector<uint8_t>& bytes) {
  Event e = event(EventKind::message, now);
  e.data = bytes.data();
  e.size = bytes.size();
  return e;
}

LeaseRecord record(const std::string& owner, uint64_t epoch, double written_ms) {
  LeaseRecord rec;
  rec.present = true;
  rec.owner = owner;
  rec.generation = 1;
  rec.epoch = epoch;
  rec.expires_ms = written_ms + 5000;
  rec.takeover_ms = written_ms + 3000;
  return rec;
}

wire::Frame frame_from(const std::string& sender, wire::Kind kind) {
  wire::Frame f;
  f.kind = kind;
  f.sender = sender;
  f.generation = 1;
  f.app_version = "1.0";
  f.refresh_ms = 1000;
  f.capabilities = {"ws.owner.v1"};
  return f;
}

// Node `id` leads "ws" under the lease with the record its first transaction wrote at `now`.
LeaseRecord lease_lead(Node& n, double now) {
  n.step(event(EventKind::join, now, "ws"));
  LeaseRecord rec = n.lease_decide("ws", LeaseRecord{}, now);
  Event result = event(EventKind::lease_result, now + 1, "ws");
  result.lease = rec;
  REQUIRE(find(n.step(result), EffectKind::elected));
  return rec;
}

size_t count(const std::vector<Effect>& fx, EffectKind kind) {
  size_t n = 0;
  for (const auto& e : fx) n += e.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("lease: a record not renewed by its takeover time is taken over by compare-and-set, above its epoch") {
  Node b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  LeaseRecord theirs = record("a", 4, 0);
  CHECK(!b.lease_decide("ws", theirs, 2999).present);  // renewed in time, as far as b knows
  LeaseRecord taken = b.lease_decide("ws", theirs, 3000);
  REQUIRE(taken.present);
  CHECK(taken.owner == "b");
  CHECK(taken.epoch == 5);
  // The same record, renewed meanwhile: the compare-and-set fails.
  CHECK(!b.lease_decide("ws", record("a", 4, 2500), 3000).present);
}

TEST_CASE("lease: a leader's term ends when others may take its record over, not when it expires") {
  Node a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  ResourceView v = a.view("ws");
  REQUIRE(v.role == Role::leader);
  // The transaction began at 0; the record says others may take over from its takeover time.
  CHECK(v.valid_until_ms <= rec.takeover_ms);
  CHECK(v.valid_until_ms < rec.expires_ms);
  // Under Web Locks the lock decides: no such end.
  Node w(config("w", Authority::web_locks));
  lead(w, "ws", 0, 3);
  CHECK(w.view("ws").valid_until_ms == kNever);
}

TEST_CASE("lease: a leader whose timers stopped starts no transaction from a message and steps down at the takeover time") {
  Node a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  std::vector<uint8_t> presence = wire::encode(frame_from("b", wire::Kind::presence));
  // Frozen without warning after its first heartbeat: no tick any more, messages still come.
  a.step(event(EventKind::tick, a.next_deadline()));
  std::vector<Effect> all;
  double now = 0;
  for (now = 1200; now < rec.takeover_ms; now += 400) {
    auto fx = a.step(message(now, presence));
    all.insert(all.end(), fx.begin(), fx.end());
    CHECK(a.view("ws").role == Role::leader);
  }
  CHECK(count(all, EffectKind::lease_try) == 0);  // the renewal due at 1000 waits for a tick
  auto fx = a.step(message(rec.takeover_ms, presence));
  REQUIRE(find(fx, EffectKind::deposed));
  CHECK(find(fx, EffectKind::deposed)->reason == Reason::lease_expired);
  CHECK(count(fx, EffectKind::lease_try) == 0);  // not even to release it: the goodbye names a successor
  CHECK(a.view("ws").role != Role::leader);
}

TEST_CASE("lease: a running leader renews on its timer before anyone may take over") {
  Node a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  std::vector<Effect> fx;
  double now = 0;
  for (int i = 0; i < 20 && !find(fx, EffectKind::lease_try); ++i) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
  }
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(now < rec.takeover_ms);
  LeaseRecord renewed = a.lease_decide("ws", rec, now + 1);
  CHECK(renewed.epoch == rec.epoch);
  CHECK(renewed.takeover_ms > rec.takeover_ms);
}

TEST_CASE("lease: a goodbye gives up the record of the term it ends, not a later one") {
  Node b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  Event result = event(EventKind::lease_result, 1, "ws");
  result.lease = record("a", 4, 0);
  b.step(result);
  REQUIRE(b.view("ws").leader == "a");
  wire::Frame bye = frame_from("a", wire::Kind::goodbye);
  bye.subject = "ws";
  bye.target = "b";
  auto fx = b.step(message(100, wire::encode(bye)));
  CHECK(!find(fx, EffectKind::lease_try));  // not from a message handler: the timer's next tick
  CHECK(b.next_deadline() == 100);          // is due at once, without waiting for the record
  fx = b.step(event(EventKind::tick, 101));
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(b.lease_decide("ws", record("a", 4, 0), 101).epoch == 5);
  // The departed tab came back with a newer term before this transaction ran.
  CHECK(!b.lease_decide("ws", record("a", 6, 90), 101).present);
}
