// The IndexedDB lease, driven by hand: when another tab's record may be taken over, what a
// goodbye gives up, and a leader whose timers stopped (a tab frozen without warning).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/election.h"
#include "election_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

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

// Election `id` leads "ws" under the lease with the record its first transaction wrote at `now`.
LeaseRecord lease_lead(Election& election, double now) {
  election.step(event(EventKind::join, now, "ws"));
  LeaseRecord rec = lease_read(election, "ws", LeaseRecord{}, now, now);
  Event result = event(EventKind::lease_result, now + 1, "ws");
  result.lease = rec;
  REQUIRE(find(election.step(result), EffectKind::elected));
  return rec;
}

size_t count(const std::vector<Effect>& fx, EffectKind kind) {
  size_t n = 0;
  for (const auto& e : fx) n += e.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("lease: a record not renewed by its takeover time is taken over by compare-and-set, above its epoch") {
  Election b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  LeaseRecord theirs = record("a", 4, 0);
  CHECK(!lease_read(b, "ws", theirs, 2999, 2999).present);  // renewed in time, as far as b knows
  LeaseRecord taken = lease_read(b, "ws", theirs, 3000, 3000);
  REQUIRE(taken.present);
  CHECK(taken.owner == "b");
  CHECK(taken.epoch == 5);
  // The same record, renewed meanwhile: the compare-and-set fails.
  CHECK(!lease_read(b, "ws", record("a", 4, 2500), 3000, 3000).present);
}

TEST_CASE("lease: a new term goes above the epoch counter read beside the record, its own old record too") {
  // This tab's own record of an earlier term (epoch 1), expired; since then a Web Locks tab
  // of the origin moved the counter to 2, which no record and no floor of this tab shows.
  LeaseRecord mine = record("b", 1, -10000);
  Election b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  CHECK(lease_read(b, "ws", mine, 1, 1).epoch == 2);  // without the counter: the reissue
  Election again(config("b", Authority::lease));
  again.step(event(EventKind::join, 0, "ws"));
  LeaseRecord taken = lease_read(again, "ws", mine, 1, 1, 2);
  REQUIRE(taken.present);
  CHECK(taken.epoch == 3);
  // Another tab's record below the counter, and no record at all: above the counter too.
  Election c(config("c", Authority::lease));
  c.step(event(EventKind::join, 0, "ws"));
  CHECK(lease_read(c, "ws", record("a", 4, -10000), 1, 1, 7).epoch == 8);
  Election d(config("d", Authority::lease));
  d.step(event(EventKind::join, 0, "ws"));
  CHECK(lease_read(d, "ws", LeaseRecord{}, 1, 1, 7).epoch == 8);
}

TEST_CASE("lease: epochs end below 2^40; a new term on a store raised to the bound repeats the last, degraded") {
  const uint64_t last = (uint64_t{1} << 40) - 1;
  // An expired record at the last epoch (or a counter there), written by a store raised to it.
  for (bool by_record : {true, false}) {
    CAPTURE(by_record);
    Election b(config("b", Authority::lease));
    b.step(event(EventKind::join, 0, "ws"));
    LeaseRecord taken = lease_read(b, "ws", by_record ? record("a", last, -10000) : LeaseRecord{}, 1, 1, by_record ? 0 : last);
    REQUIRE(taken.present);
    CHECK(taken.epoch == last);
    Event result = event(EventKind::lease_result, 2, "ws");
    result.lease = taken;
    auto fx = b.step(result);
    const Effect* elected = find(fx, EffectKind::elected);
    REQUIRE(elected);
    CHECK(elected->epoch == last);
    CHECK(elected->degraded == Degraded::store_regressed);
    CHECK(b.degradation() == Degraded::store_regressed);
  }
}

TEST_CASE("lease: a renewal keeps its term's epoch, whatever the counter says") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  std::vector<Effect> fx;
  double renew_at = a.next_deadline();
  while (renew_at < 3000 && !find(fx = a.step(event(EventKind::tick, renew_at)), EffectKind::lease_try)) renew_at = a.next_deadline();
  REQUIRE(find(fx, EffectKind::lease_try));
  LeaseRecord renewed = lease_read(a, "ws", rec, renew_at, renew_at, rec.epoch + 5);
  REQUIRE(renewed.present);
  CHECK(renewed.epoch == rec.epoch);
}

TEST_CASE("lease: the read is answered in its own step, by that step's clocks, and nothing else is done") {
  Election b(config("b", Authority::lease));
  REQUIRE(find(b.step(event(EventKind::join, 0, "ws")), EffectKind::lease_try));
  // The read comes when the try's storage timeout is due, with the wall clock 100 s ahead:
  // the record of "a" (written at wall 0) is past its takeover time by this reading.
  double due = b.next_deadline();
  uint64_t elections = b.metrics().elections;
  Event read = event(EventKind::lease_read, due, "ws");
  read.wall_ms = due + 100000;
  read.lease = record("a", 4, 0);
  std::vector<Effect> fx = b.step(read);
  REQUIRE(fx.size() == 1);  // the answer alone: the due work waits for the next event
  REQUIRE(fx[0].kind == EffectKind::lease_write);
  CHECK(!fx[0].unread);
  CHECK(fx[0].lease.owner == "b");
  CHECK(fx[0].lease.epoch == 5);
  CHECK(fx[0].lease.expires_ms == read.wall_ms + 5000);
  CHECK(fx[0].lease.takeover_ms == read.wall_ms + 3000);
  CHECK(b.metrics().elections == elections);
  CHECK(b.next_deadline() == due);
  // Without a transaction in flight there is nothing to decide: the answer writes nothing.
  Election c(config("c", Authority::lease));
  CHECK(c.step(read).empty());
}

TEST_CASE("lease: disposed, a tab still answers the read of its renewal in flight, with the release") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  double renew_at = a.next_deadline();
  std::vector<Effect> fx;
  while (!find(fx, EffectKind::lease_try)) {
    fx = a.step(event(EventKind::tick, renew_at));
    renew_at = a.next_deadline();
  }
  a.step(event(EventKind::dispose, renew_at));
  REQUIRE(a.disposed());
  LeaseRecord released = lease_read(a, "ws", rec, renew_at + 1, renew_at + 1);
  CHECK(released.present);
  CHECK(released.owner == "a");
  CHECK(released.epoch == rec.epoch);
  CHECK(released.expires_ms == 0);
  CHECK(a.step(event(EventKind::tick, renew_at + 2)).empty());  // nothing else is stepped
}

TEST_CASE("lease: a leader's term ends when others may take its record over, not when it expires") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  ResourceView v = a.view("ws");
  REQUIRE(v.role == Role::leader);
  // The transaction began at 0; the record says others may take over from its takeover time.
  CHECK(v.valid_until_ms <= rec.takeover_ms);
  CHECK(v.valid_until_ms < rec.expires_ms);
  // Under Web Locks the lock decides: no such end.
  Election w(config("w", Authority::web_locks));
  lead(w, "ws", 0, 3);
  CHECK(w.view("ws").valid_until_ms == kNever);
}

TEST_CASE("lease: a leader whose timers stopped starts no transaction from a message and hands over at the takeover time") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  std::vector<uint8_t> presence = wire::encode(peer_frame("b", wire::Kind::presence));
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
  CHECK(find(fx, EffectKind::deposed)->reason == Reason::stalled);
  CHECK(count(fx, EffectKind::lease_try) == 0);  // not even to release it: the goodbye names a successor
  CHECK(a.view("ws").role != Role::leader);
}

TEST_CASE("lease: a running leader renews on its timer before anyone may take over") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  std::vector<Effect> fx;
  double now = 0;
  for (int i = 0; i < 20 && !find(fx, EffectKind::lease_try); ++i) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
  }
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(now < rec.takeover_ms);
  LeaseRecord renewed = lease_read(a, "ws", rec, now + 1, now + 1);
  CHECK(renewed.epoch == rec.epoch);
  CHECK(renewed.takeover_ms > rec.takeover_ms);
}

TEST_CASE("lease: a goodbye gives up the record of the term it ends, not a later one") {
  Election b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  Event result = event(EventKind::lease_result, 1, "ws");
  result.lease = record("a", 4, 0);
  b.step(result);
  REQUIRE(b.view("ws").leader == "a");
  wire::Frame bye = peer_frame("a", wire::Kind::goodbye);
  bye.subject = "ws";
  bye.target = "b";
  auto fx = b.step(message(100, wire::encode(bye)));
  CHECK(!find(fx, EffectKind::lease_try));  // not from a message handler: the timer's next tick
  CHECK(b.next_deadline() == 100);          // is due at once, without waiting for the record
  fx = b.step(event(EventKind::tick, 101));
  REQUIRE(find(fx, EffectKind::lease_try));
  // Its record is still valid: the departed tab may not have sent the goodbye (a forgery
  // or a replay) and gets the hello window to renew, so it is not taken yet.
  CHECK(!lease_read(b, "ws", record("a", 4, 0), 101, 101).present);
  double after_window = 100 + config("b", Authority::lease).hello_window_ms;
  CHECK(lease_read(b, "ws", record("a", 4, 0), after_window, after_window).epoch == 5);
  // The departed tab came back with a newer term before this transaction ran.
  CHECK(!lease_read(b, "ws", record("a", 6, 90), after_window, after_window).present);
}

TEST_CASE("lease: a goodbye in the holder's name that it did not send hands nothing over") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  Election b(config("b", Authority::lease));
  b.step(event(EventKind::join, 0, "ws"));
  Event result = event(EventKind::lease_result, 1, "ws");
  result.lease = rec;
  b.step(result);
  wire::Frame bye = peer_frame("a", wire::Kind::goodbye);
  bye.subject = "ws";
  bye.target = "b";
  bye.tick_seq = 50;
  // The holder hears it too (the channel never echoes its own frames): its term is in
  // doubt at once, and it renews a little later than the named tab heard the goodbye.
  a.step(message(100, wire::encode(bye)));
  b.step(message(100, wire::encode(bye)));
  CHECK(a.view("ws").role == Role::leader);
  CHECK(a.view("ws").valid_until_ms <= 100);
  std::vector<Effect> fx;
  double now = 100;
  while (!find(fx, EffectKind::lease_try)) fx = a.step(event(EventKind::tick, now = std::max(now, a.next_deadline())));
  CHECK(now > 100);
  LeaseRecord renewed = lease_read(a, "ws", rec, now, now);
  Event committed = event(EventKind::lease_result, now, "ws");
  committed.lease = renewed;
  a.step(committed);
  CHECK(a.view("ws").valid_until_ms > now);  // the renewal re-asserted the term
  // The named tab finds the record renewed since the goodbye: nothing to take over.
  double after_window = 100 + config("b", Authority::lease).hello_window_ms;
  b.step(event(EventKind::tick, after_window));
  CHECK(!lease_read(b, "ws", renewed, after_window, after_window).present);
  CHECK(lease_read(b, "ws", rec, after_window, after_window).present);  // without the renewal, it would
}

TEST_CASE("lease: an owner whose heartbeats keep coming is not taken over before its record expires") {
  // b's first acquisition is in flight; the record it will read: takeover time 3000, expiry 5000.
  Config slow_store = config("b", Authority::lease);
  slow_store.storage_timeout_ms = 10000;  // still in flight when the record expires
  Election b(slow_store);
  b.step(event(EventKind::join, 0, "ws"));
  uint64_t tick = 1;
  auto heartbeat = [&](double now) {
    wire::Frame hb = peer_frame("a", wire::Kind::heartbeat, ++tick);
    hb.claims.push_back({"ws", 4});
    b.step(message(now, wire::encode(hb)));
  };
  for (double now = 0; now <= 4000; now += 1000) heartbeat(now);
  // Its renewal is late (a busy store), its timers run: the compare-and-set fails.
  CHECK(!lease_read(b, "ws", record("a", 4, 0), 3000, 3000).present);
  CHECK(!lease_read(b, "ws", record("a", 4, 0), 4999, 4999).present);
  CHECK(lease_read(b, "ws", record("a", 4, 0), 5000, 5000).present);  // expired

  // Heartbeats stop after 1000: silent for the suspect timeout and past its takeover time.
  Election c(config("c", Authority::lease));
  c.step(event(EventKind::join, 0, "ws"));
  tick = 1;
  for (double now = 0; now <= 1000; now += 1000) {
    wire::Frame hb = peer_frame("a", wire::Kind::heartbeat, ++tick);
    hb.claims.push_back({"ws", 4});
    c.step(message(now, wire::encode(hb)));
  }
  CHECK(!lease_read(c, "ws", record("a", 4, 0), 3999, 3999).present);
  LeaseRecord taken = lease_read(c, "ws", record("a", 4, 0), 4000, 4000);
  REQUIRE(taken.present);
  CHECK(taken.epoch == 5);
}

TEST_CASE("lease: a renewal still in flight at the takeover time leaves the term in doubt until it commits") {
  Election a(config("a", Authority::lease));
  LeaseRecord rec = lease_lead(a, 0);
  ResourceView v = a.view("ws");
  double valid_until = v.valid_until_ms;
  std::vector<Effect> fx;
  double now = 0;
  while (!find(fx, EffectKind::lease_try)) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
  }
  double renewal_started = now;
  // The store is slow: past the takeover time the term is in doubt, not over.
  while (now < valid_until + 500) {
    now = std::min(a.next_deadline(), valid_until + 500);
    fx = a.step(event(EventKind::tick, now));
    CHECK(!find(fx, EffectKind::deposed));
  }
  v = a.view("ws");
  CHECK(v.role == Role::leader);
  CHECK(now >= v.valid_until_ms);  // the glue reports no leader and fenced() refuses
  // The renewal commits with the same term: safe again, nothing started or ended.
  Event renewed = event(EventKind::lease_result, now + 1, "ws");
  renewed.lease = lease_read(a, "ws", rec, now, now);
  REQUIRE(renewed.lease.epoch == rec.epoch);
  fx = a.step(renewed);
  CHECK(!find(fx, EffectKind::deposed));
  CHECK(!find(fx, EffectKind::elected));
  v = a.view("ws");
  CHECK(v.role == Role::leader);
  CHECK(v.valid_until_ms > now + 1);
  CHECK(v.valid_until_ms == renewal_started + 3000);

  // A renewal that never commits ends the term by the time the record would expire.
  Election b(config("b", Authority::lease));
  LeaseRecord theirs = lease_lead(b, 0);
  bool deposed = false;
  for (int i = 0; i < 50 && !deposed; ++i) {
    now = b.next_deadline();
    if (now >= theirs.expires_ms) break;
    deposed = find(b.step(event(EventKind::tick, now)), EffectKind::deposed) != nullptr;
  }
  CHECK(deposed);
  CHECK(now < theirs.expires_ms);
}

TEST_CASE("lease: a closing page releases a valid term's record unread, and one in doubt not at all") {
  Election a(config("a", Authority::lease));
  LeaseRecord mine = lease_lead(a, 0);
  Event closing = event(EventKind::lifecycle, 500);
  closing.lifecycle = Lifecycle::closing;
  auto fx = a.step(closing);
  REQUIRE(find(fx, EffectKind::deposed));
  // A read would wait on a page being torn down: the write comes at once, in no answer to one.
  CHECK(count(fx, EffectKind::lease_try) == 0);
  REQUIRE(count(fx, EffectKind::lease_write) == 1);
  CHECK(find(fx, EffectKind::lease_write)->unread);
  CHECK(find(fx, EffectKind::broadcast));  // the goodbye
  // The record of its term, expired.
  LeaseRecord released = find(fx, EffectKind::lease_write)->lease;
  CHECK(released.present);
  CHECK(released.owner == "a");
  CHECK(released.epoch == mine.epoch);
  CHECK(released.expires_ms == 0);
  CHECK(released.takeover_ms == 0);

  // Past the time others may take its record over (the term is in doubt), the record may be
  // another tab's: nothing is written.
  Election b(config("b", Authority::lease));
  lease_lead(b, 0);
  closing.now_ms = b.view("ws").valid_until_ms;
  closing.wall_ms = b.view("ws").valid_until_ms;
  fx = b.step(closing);
  REQUIRE(find(fx, EffectKind::deposed));
  CHECK(count(fx, EffectKind::lease_try) == 0);
  CHECK(count(fx, EffectKind::lease_write) == 0);

  // Stepping down while the page stays: the record is released, read first as usual.
  Election c(config("c", Authority::lease));
  lease_lead(c, 0);
  fx = c.step(event(EventKind::abdicate, 500, "ws"));
  REQUIRE(count(fx, EffectKind::lease_try) == 1);
  CHECK(count(fx, EffectKind::lease_write) == 0);
}
