// The per-resource state machine, driven by hand: one event at a time, checking the
// effects each step asks for.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/node.h"

using namespace baton;

namespace {

Config config(const std::string& id, Authority a = Authority::web_locks) {
  Config c;
  c.id = id;
  c.authority = a;
  c.app_version = "1.0";
  c.capabilities = {"ws.owner.v1"};
  c.seed = 7;
  return c;
}

Event event(EventKind kind, double now, const std::string& resource = "") {
  Event e;
  e.kind = kind;
  e.now_ms = now;
  e.resource = resource;
  return e;
}

Event message(double now, const std::vector<uint8_t>& bytes) {
  Event e = event(EventKind::message, now);
  e.data = bytes.data();
  e.size = bytes.size();
  return e;
}

const Effect* find(const std::vector<Effect>& fx, EffectKind kind) {
  auto it = std::find_if(fx.begin(), fx.end(), [kind](const Effect& e) { return e.kind == kind; });
  return it == fx.end() ? nullptr : &*it;
}

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

// Asks `n` for a frame describing itself (its reply to a hello), claims included.
// The asker is a frozen tab, so it never counts as a candidate.
std::vector<uint8_t> presence_of(Node& n, double now) {
  wire::Frame hello;
  hello.kind = wire::Kind::hello;
  hello.sender = "zz-probe";
  hello.generation = 1;
  hello.lifecycle = Lifecycle::frozen;
  hello.app_version = "1.0";
  hello.refresh_ms = 1000;
  auto bytes = wire::encode(hello);
  return last_broadcast(n.step(message(now, bytes)));
}

void append(std::vector<Effect>& all, std::vector<Effect> more) {
  for (auto& e : more) all.push_back(std::move(e));
}

// Takes a Web Locks node from nothing to leader of `res` with `epoch`.
std::vector<Effect> lead(Node& n, const std::string& res, double now, uint64_t epoch) {
  n.step(event(EventKind::join, now, res));
  n.step(event(EventKind::lock_granted, now + 1, res));
  Event alloc = event(EventKind::epoch_allocated, now + 2, res);
  alloc.epoch = epoch;
  return n.step(alloc);
}

}  // namespace

TEST_CASE("web locks: join queues, grant allocates an epoch, the epoch makes a leader") {
  Node n(config("a"));
  auto fx = n.step(event(EventKind::join, 0, "ws"));
  const Effect* req = find(fx, EffectKind::lock_request);
  REQUIRE(req);
  CHECK(req->lock_mode == LockMode::queue);
  CHECK(frames(fx).at(0).kind == wire::Kind::hello);

  fx = n.step(event(EventKind::lock_granted, 5, "ws"));
  const Effect* alloc = find(fx, EffectKind::allocate_epoch);
  REQUIRE(alloc);
  CHECK(n.view("ws").role == Role::candidate);

  Event done = event(EventKind::epoch_allocated, 6, "ws");
  done.epoch = 41;
  fx = n.step(done);
  const Effect* elected = find(fx, EffectKind::elected);
  REQUIRE(elected);
  CHECK(elected->epoch == 41);
  CHECK(n.view("ws").role == Role::leader);
  CHECK(n.view("ws").leader == "a");
  // The new term is announced at once, in a frame that claims it.
  auto sent = frames(fx);
  REQUIRE(!sent.empty());
  REQUIRE(sent.back().claims.size() == 1);
  CHECK(sent.back().claims[0].epoch == 41);
  // The leader heartbeats every heartbeat_ms.
  CHECK(n.next_deadline() <= 6 + 1000);
}

TEST_CASE("freeze and close step down at once, release the lock and name a successor") {
  Node a(config("a")), b(config("b"));
  lead(a, "ws", 0, 1);
  b.step(event(EventKind::join, 0, "ws"));
  // a learns about b from b's presence.
  auto bfx = b.step(event(EventKind::tick, 10));
  a.step(message(11, wire::encode([&] {
    wire::Frame f;
    f.kind = wire::Kind::presence;
    f.sender = "b";
    f.generation = 1;
    f.app_version = "1.0";
    f.capabilities = {"ws.owner.v1"};
    f.tick_seq = 5;
    f.refresh_ms = 2000;
    return f;
  }())));

  Event freeze = event(EventKind::lifecycle, 20);
  freeze.lifecycle = Lifecycle::frozen;
  auto fx = a.step(freeze);
  const Effect* deposed = find(fx, EffectKind::deposed);
  REQUIRE(deposed);
  CHECK(deposed->reason == Reason::frozen);
  CHECK(find(fx, EffectKind::lock_release));
  bool named_b = false;
  for (const auto& f : frames(fx)) {
    if (f.kind == wire::Kind::goodbye && f.subject == "ws") named_b = f.target == "b";
  }
  CHECK(named_b);
  CHECK(a.view("ws").role == Role::follower);
  CHECK(a.view("ws").reason == Reason::frozen);
  // A frozen tab does not queue for the lock again.
  CHECK(!find(a.step(event(EventKind::tick, 30)), EffectKind::lock_request));
}

TEST_CASE("a silent leader is asked to abdicate, then its lock is stolen") {
  Node a(config("a")), b(config("b"));
  auto afx = lead(a, "ws", 0, 3);
  b.step(event(EventKind::join, 0, "ws"));
  b.step(message(3, last_broadcast(afx)));  // b hears a's claim
  CHECK(b.view("ws").leader == "a");

  // a stops ticking (frozen without a freeze event). b waits out the suspect timeout.
  std::vector<Effect> fx;
  double now = 3;
  const Effect* steal = nullptr;
  bool asked = false;
  while (now < 10000 && !steal) {
    now = std::max(now + 1, b.next_deadline());
    fx = b.step(event(EventKind::tick, now));
    for (const auto& f : frames(fx)) asked |= f.kind == wire::Kind::abdicate_request && f.target == "a";
    for (const auto& e : fx) {
      if (e.kind == EffectKind::lock_request && e.lock_mode == LockMode::steal) steal = &e;
    }
  }
  CHECK(asked);
  REQUIRE(steal);
  CHECK(now >= 3000);  // not before the suspect timeout
  CHECK(now <= 3000 + 200 + 150 + 50);
  CHECK(b.metrics().steals == 1);
}

TEST_CASE("a frozen leader's replies carry no progress, so they do not stop the steal") {
  Node a(config("a")), b(config("b"));
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

TEST_CASE("a leader whose own timers stalled abdicates when asked") {
  Node a(config("a"));
  lead(a, "ws", 0, 2);
  wire::Frame ask;
  ask.kind = wire::Kind::abdicate_request;
  ask.sender = "b";
  ask.generation = 1;
  ask.app_version = "1.0";
  ask.capabilities = {"ws.owner.v1"};
  ask.tick_seq = 9;
  ask.refresh_ms = 1000;
  ask.subject = "ws";
  ask.target = "a";
  // No tick for 5 s: the handler notices its timers stopped.
  auto fx = a.step(message(5000, wire::encode(ask)));
  const Effect* deposed = find(fx, EffectKind::deposed);
  REQUIRE(deposed);
  CHECK(deposed->reason == Reason::stalled);
  CHECK(find(fx, EffectKind::lock_release));
}

TEST_CASE("a healthy leader answers an abdicate request with a heartbeat") {
  Node a(config("a"));
  lead(a, "ws", 0, 2);
  a.step(event(EventKind::tick, 500));
  wire::Frame ask;
  ask.kind = wire::Kind::abdicate_request;
  ask.sender = "b";
  ask.generation = 1;
  ask.app_version = "1.0";
  ask.refresh_ms = 1000;
  ask.subject = "ws";
  ask.target = "a";
  auto fx = a.step(message(600, wire::encode(ask)));
  CHECK(!find(fx, EffectKind::deposed));
  auto sent = frames(fx);
  REQUIRE(!sent.empty());
  CHECK(sent.back().kind == wire::Kind::heartbeat);
  CHECK(a.view("ws").role == Role::leader);
}

TEST_CASE("web locks: a forged newer epoch does not depose the lock holder") {
  Node a(config("a"));
  lead(a, "ws", 0, 4);
  a.step(event(EventKind::tick, 100));
  wire::Frame forged;
  forged.kind = wire::Kind::heartbeat;
  forged.sender = "mallory";
  forged.generation = 1;
  forged.app_version = "1.0";
  forged.refresh_ms = 1000;
  forged.claims = {{"ws", 5}};
  auto fx = a.step(message(150, wire::encode(forged)));
  CHECK(!find(fx, EffectKind::deposed));
  CHECK(a.view("ws").role == Role::leader);
  CHECK(a.metrics().epoch_conflicts == 1);
  // An implausible epoch is dropped outright.
  forged.claims = {{"ws", uint64_t{1} << 50}};
  a.step(message(160, wire::encode(forged)));
  CHECK(a.metrics().dropped_forged_epoch == 1);
  CHECK(a.view("ws").role == Role::leader);
}

TEST_CASE("lock lost (stolen) steps down without waiting") {
  Node a(config("a"));
  lead(a, "ws", 0, 4);
  auto fx = a.step(event(EventKind::lock_lost, 50, "ws"));
  const Effect* deposed = find(fx, EffectKind::deposed);
  REQUIRE(deposed);
  CHECK(deposed->reason == Reason::lock_lost);
  // It queues again (still eligible), behind the new holder.
  bool requeued = find(fx, EffectKind::lock_request) != nullptr;
  if (!requeued) requeued = find(a.step(event(EventKind::tick, a.next_deadline())), EffectKind::lock_request);
  CHECK(requeued);
}

TEST_CASE("broadcast-only: an epoch answer below a term claimed meanwhile is allocated again") {
  Node a(config("a", Authority::broadcast));
  a.step(event(EventKind::join, 0, "ws"));
  // Broadcast-only waits a heartbeat to hear a leader, then takes over.
  std::vector<Effect> fx;
  for (int i = 0; i < 5 && !find(fx, EffectKind::allocate_epoch); ++i) fx = a.step(event(EventKind::tick, a.next_deadline()));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  wire::Frame claim;
  claim.kind = wire::Kind::goodbye;  // a leader that already left: its term still counts
  claim.sender = "b";
  claim.generation = 1;
  claim.app_version = "1.0";
  claim.refresh_ms = 1000;
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

TEST_CASE("degraded epoch storage: above every term seen, and reported") {
  Node a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  a.step(event(EventKind::lock_granted, 1, "ws"));
  Event done = event(EventKind::epoch_allocated, 3, "ws");
  done.epoch = 1;
  done.durable = false;
  auto fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::not_durable);
  CHECK(a.view("ws").degraded == Degraded::not_durable);
  CHECK(a.degraded());
  CHECK(a.degradation() == Degraded::not_durable);
  CHECK(a.metrics().storage_failures == 1);
}

TEST_CASE("lease: decide acquires with epoch + 1, respects a valid owner, renews, releases") {
  Node a(config("a", Authority::lease));
  auto fx = a.step(event(EventKind::join, 0, "sync"));
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(a.view("sync").role == Role::candidate);

  LeaseRecord theirs;
  theirs.present = true;
  theirs.owner = "b";
  theirs.generation = 1;
  theirs.epoch = 6;
  theirs.expires_ms = 4000;
  CHECK(!a.lease_decide("sync", theirs, 10).present);  // valid, someone else's

  LeaseRecord expired = theirs;
  expired.expires_ms = 5;
  LeaseRecord mine = a.lease_decide("sync", expired, 10);
  REQUIRE(mine.present);
  CHECK(mine.owner == "a");
  CHECK(mine.epoch == 7);
  CHECK(mine.expires_ms == 10 + 5000);

  Event result = event(EventKind::lease_result, 12, "sync");
  result.lease = mine;
  fx = a.step(result);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 7);

  // Renewal at a third of the lease keeps the epoch.
  double renew_at = a.next_deadline();
  while (renew_at < 1700) {
    fx = a.step(event(EventKind::tick, renew_at));
    if (find(fx, EffectKind::lease_try)) break;
    renew_at = a.next_deadline();
  }
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(renew_at >= 0 + 5000 / 3.0 - 1);
  LeaseRecord renewed = a.lease_decide("sync", mine, renew_at);
  CHECK(renewed.epoch == 7);
  CHECK(renewed.expires_ms == renew_at + 5000);

  // Abdicating writes the record expired, keeping the epoch for the next owner's + 1.
  result.now_ms = renew_at + 1;
  result.lease = renewed;
  a.step(result);
  fx = a.step(event(EventKind::abdicate, renew_at + 2, "sync"));
  REQUIRE(find(fx, EffectKind::lease_try));
  CHECK(a.view("sync").role == Role::stepping_down);
  LeaseRecord released = a.lease_decide("sync", renewed, renew_at + 3);
  REQUIRE(released.present);
  CHECK(released.expires_ms == 0);
  CHECK(released.epoch == 7);
}

TEST_CASE("lease: a leader that cannot renew steps down before its lease runs out") {
  Node a(config("a", Authority::lease));
  a.step(event(EventKind::join, 0, "sync"));
  Event result = event(EventKind::lease_result, 2, "sync");
  result.lease = a.lease_decide("sync", LeaseRecord{}, 1);
  a.step(result);
  REQUIRE(a.view("sync").role == Role::leader);
  // The renewal transaction never completes (storage hung). Ticks keep coming.
  bool deposed = false;
  double now = 2;
  while (now < 6000 && !deposed) {
    now = std::max(now + 1, a.next_deadline());
    auto fx = a.step(event(EventKind::tick, now));
    if (const Effect* d = find(fx, EffectKind::deposed)) {
      deposed = d->reason == Reason::lease_expired || d->reason == Reason::storage_failed;
    }
  }
  // Renewal is in flight and never answered: the leader gives up before the lease ends
  // (the storage timeout usually comes first).
  CHECK(deposed);
  CHECK(now <= 1 + 5000 * 5 / 6.0 + 1);
  CHECK(a.view("sync").role != Role::leader);
}

TEST_CASE("broadcast-only: the worse-ranked of two same-epoch leaders steps down") {
  Node a(config("a", Authority::broadcast)), b(config("b", Authority::broadcast));
  // Both become leaders of epoch 1 (a partition healed).
  for (Node* n : {&a, &b}) {
    n->step(event(EventKind::join, 0, "sync"));
    double now = 0;
    while (n->view("sync").role == Role::follower && now < 5000) {
      now = std::max(now + 1, n->next_deadline());
      n->step(event(EventKind::tick, now));
    }
    Event done = event(EventKind::epoch_allocated, now + 1, "sync");
    done.epoch = 1;
    n->step(done);
    REQUIRE(n->view("sync").role == Role::leader);
  }
  // Same score: the id breaks the tie, "a" ranks first.
  auto a_says = presence_of(a, 2000);
  auto b_says = presence_of(b, 2000);
  auto fx = b.step(message(2001, a_says));
  const Effect* deposed = find(fx, EffectKind::deposed);
  REQUIRE(deposed);
  CHECK(deposed->reason == Reason::conflict);
  fx = a.step(message(2001, b_says));
  CHECK(!find(fx, EffectKind::deposed));
  CHECK(a.view("sync").role == Role::leader);
}

TEST_CASE("broadcast-only: a newer epoch deposes, the graceful goodbye hands over at once") {
  Node a(config("a", Authority::broadcast)), b(config("b", Authority::broadcast));
  a.step(event(EventKind::join, 0, "sync"));
  b.step(event(EventKind::join, 0, "sync"));
  // Each hears the other's presence, then a leads.
  b.step(message(1, presence_of(a, 1)));
  a.step(message(1, presence_of(b, 1)));
  double now = 1;
  while (a.view("sync").role == Role::follower && now < 5000) {
    now = std::max(now + 1, a.next_deadline());
    a.step(event(EventKind::tick, now));
  }
  Event done = event(EventKind::epoch_allocated, now, "sync");
  done.epoch = 3;
  auto fx = a.step(done);
  REQUIRE(a.view("sync").role == Role::leader);
  b.step(message(now, last_broadcast(fx)));
  CHECK(b.view("sync").leader == "a");

  // a disposes: its goodbye names b, which takes over without a timeout.
  fx = a.step(event(EventKind::dispose, now + 10));
  for (const auto& e : fx) {
    if (e.kind == EffectKind::broadcast) b.step(message(now + 11, e.bytes));
  }
  CHECK(b.view("sync").role == Role::candidate);
  CHECK(a.step(event(EventKind::tick, now + 20)).empty());  // nothing after dispose
}

TEST_CASE("older app code yields to an eligible tab running newer code") {
  Node a(config("a"));
  lead(a, "ws", 0, 1);
  wire::Frame newer;
  newer.kind = wire::Kind::presence;
  newer.sender = "b";
  newer.generation = 1;
  newer.app_version = "1.1";
  newer.capabilities = {"ws.owner.v1"};
  newer.tick_seq = 3;
  newer.refresh_ms = 2000;
  auto fx = a.step(message(10, wire::encode(newer)));
  append(fx, a.step(event(EventKind::tick, a.next_deadline())));
  const Effect* deposed = find(fx, EffectKind::deposed);
  REQUIRE(deposed);
  CHECK(deposed->reason == Reason::app_version);
  CHECK(!a.view("ws").eligible);
}

TEST_CASE("malformed, oversized and foreign frames are dropped and counted") {
  Node a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  std::vector<uint8_t> junk{1, 2, 3};
  a.step(message(1, junk));
  std::vector<uint8_t> huge(wire::kMaxFrameBytes + 1, 0xBA);
  a.step(message(2, huge));
  wire::Frame f;
  f.sender = "b";
  f.version = 2;
  a.step(message(3, wire::encode(f)));
  CHECK(a.metrics().dropped_malformed == 1);
  CHECK(a.metrics().dropped_oversized == 1);
  CHECK(a.metrics().dropped_foreign_version == 1);
  CHECK(a.presence().size() == 0);
}

TEST_CASE("a backwards clock jump moves deadlines with it") {
  Node a(config("a"));
  lead(a, "ws", 100000, 1);
  a.step(event(EventKind::tick, 100100));
  double before = a.next_deadline();
  CHECK(before <= 100100 + 1000);
  a.step(event(EventKind::tick, 40000));  // the wall clock went back a minute
  CHECK(a.metrics().clock_jumps == 1);
  CHECK(a.next_deadline() <= 40000 + 1000);
}

TEST_CASE("triggers are coalesced into fewer evaluations") {
  Node a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  for (int i = 0; i < 20; ++i) {
    wire::Frame f;
    f.kind = wire::Kind::presence;
    f.sender = "t" + std::to_string(i);
    f.generation = 1;
    f.app_version = "1.0";
    f.refresh_ms = 1000;
    a.step(message(1 + i * 0.1, wire::encode(f)));
  }
  a.step(event(EventKind::tick, a.next_deadline()));
  CHECK(a.metrics().triggers >= 20);
  CHECK(a.metrics().elections < a.metrics().triggers / 2);
}

TEST_CASE("the transition log is bounded and records reasons") {
  Config c = config("a");
  c.log_capacity = 4;
  Node a(c);
  for (int i = 0; i < 5; ++i) {
    lead(a, "ws", i * 100.0, i + 1);
    a.step(event(EventKind::lock_lost, i * 100.0 + 50, "ws"));
  }
  CHECK(a.log().size() == 4);
  CHECK(a.log().back().to == Role::follower);
  CHECK(a.log().back().reason == Reason::lock_lost);
}

TEST_CASE("dispose says goodbye, releases everything, and ends the node") {
  Node a(config("a"));
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

TEST_CASE("a flood of made-up senders cannot grow the presence table without bound") {
  Node a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  for (int i = 0; i < 1000; ++i) {
    wire::Frame f;
    f.kind = wire::Kind::presence;
    f.sender = "forged-" + std::to_string(i);
    f.generation = 1;
    f.app_version = "1.0";
    f.refresh_ms = 1000;
    a.step(message(1 + i * 0.01, wire::encode(f)));
  }
  CHECK(a.presence().size() == Presence::kMaxCandidates);
  CHECK(a.metrics().dropped_table_full == 1000 - Presence::kMaxCandidates);
}
