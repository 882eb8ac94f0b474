// The guarantees that must hold under hostile frames and storage faults (DESIGN.md and
// the README's security model), one fix per test.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/election.h"
#include "election_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

Event message(double now, const wire::Frame& f, std::vector<uint8_t>& keep) {
  keep = wire::encode(f);
  Event e = event(EventKind::message, now);
  e.data = keep.data();
  e.size = keep.size();
  return e;
}

std::vector<Effect> deliver(Election& election, double now, const wire::Frame& f) {
  std::vector<uint8_t> bytes;
  return election.step(message(now, f, bytes));
}

wire::Frame claim(const std::string& sender, const std::string& res, uint64_t epoch, uint64_t tick_seq = 1) {
  wire::Frame f = peer_frame(sender, wire::Kind::heartbeat);
  f.claims = {{res, epoch}};
  f.tick_seq = tick_seq;
  return f;
}

// Runs the election's own timer until `until`, delivering `frame` every `every_ms` between
// ticks, the way a hostile or merely chatty tab would.
struct Run {
  int heartbeats = 0;
  uint64_t ticks = 0;
  bool deposed = false;
};
Run run_with_frames(Election& election, double from, double until, const wire::Frame& frame, double every_ms) {
  Run r;
  double next_frame = from;
  uint64_t ticks_before = election.metrics().ticks;
  for (double now = from; now < until;) {
    double tick_at = election.next_deadline();
    std::vector<Effect> fx;
    if (next_frame < tick_at) {
      now = next_frame;
      next_frame += every_ms;
      fx = deliver(election, now, frame);
    } else {
      now = tick_at;
      fx = election.step(event(EventKind::tick, now));
      for (const auto& e : fx) {
        if (e.kind != EffectKind::broadcast) continue;
        wire::Frame sent;
        REQUIRE(wire::decode(e.bytes.data(), e.bytes.size(), sent) == wire::DecodeError::ok);
        if (sent.kind == wire::Kind::heartbeat) ++r.heartbeats;
      }
    }
    if (find(fx, EffectKind::deposed)) r.deposed = true;
  }
  r.ticks = election.metrics().ticks - ticks_before;
  return r;
}

}  // namespace

TEST_CASE("liveness: frames answered from a message handler never postpone the leader's own timer") {
  Election a(config("a"));
  lead(a, "ws", 0, 3);
  wire::Frame ask = peer_frame("b", wire::Kind::abdicate_request);
  ask.subject = "ws";
  ask.target = "a";
  // Two requests a second for 10 s: the timer still runs every heartbeat, so the tick
  // sequence rises and the leader keeps leading.
  Run r = run_with_frames(a, 10, 10000, ask, 500);
  CHECK(!r.deposed);
  CHECK(r.ticks >= 9);
  CHECK(r.heartbeats >= 9);
  CHECK(a.view("ws").role == Role::leader);
}

TEST_CASE("liveness mutation: a handler that postpones the timer starves the leader") {
  Config c = config("a");
  c.mutations.answer_postpones_tick = true;
  Election a(c);
  lead(a, "ws", 0, 3);
  wire::Frame ask = peer_frame("b", wire::Kind::abdicate_request);
  ask.subject = "ws";
  ask.target = "a";
  Run r = run_with_frames(a, 10, 10000, ask, 500);
  CHECK(r.deposed);  // the old bug: it judged itself stalled
}

TEST_CASE("liveness: stale claims and replays are answered at a bounded rate") {
  Election a(config("a"));
  lead(a, "ws", 0, 5);
  uint64_t sent_before = a.metrics().frames_sent;
  // A 20 000 frames/s burst for 100 ms of stale claims.
  for (int i = 0; i < 2000; ++i) deliver(a, 100 + i * 0.05, claim("old", "ws", 2));
  CHECK(a.metrics().frames_sent - sent_before <= 2);
  CHECK(a.view("ws").role == Role::leader);
}

TEST_CASE("abdicate: a visible leader ignores requests; a hidden one honours a visible asker once") {
  Config c = config("a");
  Election a(c);
  Event join = event(EventKind::join, 0, "ws");
  join.policy.prefer_visible = true;
  a.step(join);
  a.step(event(EventKind::lock_granted, 1, "ws"));
  Event alloc = event(EventKind::epoch_allocated, 2, "ws");
  alloc.epoch = 1;
  a.step(alloc);
  REQUIRE(a.view("ws").role == Role::leader);

  wire::Frame ask = peer_frame("b", wire::Kind::abdicate_request);
  ask.subject = "ws";
  ask.target = "a";
  CHECK(!find(deliver(a, 100, ask), EffectKind::deposed));  // a is visible

  Event hide = event(EventKind::lifecycle, 200);
  hide.lifecycle = Lifecycle::hidden;
  a.step(hide);
  a.step(event(EventKind::tick, 300));
  wire::Frame hidden_asker = ask;
  hidden_asker.sender = "c";
  hidden_asker.lifecycle = Lifecycle::hidden;
  CHECK(!find(deliver(a, 400, hidden_asker), EffectKind::deposed));  // the asker is hidden too

  auto fx = deliver(a, 500, ask);  // b: visible, alive, eligible
  REQUIRE(find(fx, EffectKind::deposed));
  CHECK(find(fx, EffectKind::deposed)->reason == Reason::prefer_visible);

  // Leading again, b's next request within a suspect timeout is not honoured.
  a.step(event(EventKind::tick, 1550));  // after the backoff: queues for the lock again
  a.step(event(EventKind::lock_granted, 1600, "ws"));
  alloc.now_ms = 1601;
  alloc.wall_ms = 1601;
  alloc.epoch = 2;
  a.step(alloc);
  REQUIRE(a.view("ws").role == Role::leader);
  ask.tick_seq = 2;
  CHECK(!find(deliver(a, 1700, ask), EffectKind::deposed));
}

TEST_CASE("claims: the plausibility bound is inclusive and applies with no epoch known") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  deliver(a, 10, claim("m", "ws", uint64_t{1} << 40));
  CHECK(a.metrics().dropped_forged_epoch == 1);
  deliver(a, 20, claim("m", "ws", (uint64_t{1} << 20) + 1));  // nothing known: a jump
  CHECK(a.metrics().dropped_forged_epoch == 2);
  CHECK(a.view("ws").leader.empty());
  deliver(a, 30, claim("m", "ws", 7));
  CHECK(a.metrics().dropped_forged_epoch == 2);
  CHECK(a.view("ws").leader == "m");
}

TEST_CASE("claims: the counter read when joining is a confirmed floor; far above 0, the leader is followed") {
  // Epochs far above 0: a long-lived origin, or a counter a same-origin page raised once.
  const uint64_t top = uint64_t{5} << 20;
  Election f(config("f"));
  f.step(event(EventKind::join, 0, "ws"));
  Event read = event(EventKind::epoch_read, 1, "ws");
  read.epoch = top;
  f.step(read);
  deliver(f, 10, claim("a", "ws", top + 1));
  CHECK(f.metrics().dropped_forged_epoch == 0);
  CHECK(f.view("ws").leader == "a");
  // The bound now counts from the counter read, and 2^40 is still forged.
  deliver(f, 20, claim("m", "ws", top + (uint64_t{1} << 20) + 1));
  read.epoch = uint64_t{1} << 40;
  f.step(read);
  deliver(f, 30, claim("m", "ws", uint64_t{1} << 40));
  CHECK(f.metrics().dropped_forged_epoch == 2);
  CHECK(f.view("ws").leader == "a");
  // The floor the store is asked to exceed is the counter read.
  auto fx = f.step(event(EventKind::lock_granted, 40, "ws"));
  const Effect* alloc = find(fx, EffectKind::allocate_epoch);
  REQUIRE(alloc);
  CHECK(alloc->epoch == top);
}

TEST_CASE("claims: a claim never moves the durable floor the store is asked for") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  // A stream of claims, each within the jump bound of the last, must not ratchet.
  for (uint64_t e = 1000; e < 5000; e += 1000) deliver(a, static_cast<double>(e) / 100, claim("m", "ws", e));
  auto fx = a.step(event(EventKind::lock_granted, 100, "ws"));
  const Effect* alloc = find(fx, EffectKind::allocate_epoch);
  REQUIRE(alloc);
  CHECK(alloc->epoch == 0);
  // The store answers below the claims: the term runs, but degraded.
  Event done = event(EventKind::epoch_allocated, 101, "ws");
  done.epoch = 1;
  fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::behind_claim);
  CHECK(a.view("ws").degraded == Degraded::behind_claim);
}

TEST_CASE("claims: under Web Locks a newer claim neither deposes the holder nor wins its followers") {
  Election a(config("a")), f(config("f"));
  lead(a, "ws", 0, 4);
  f.step(event(EventKind::join, 0, "ws"));
  deliver(f, 5, claim("a", "ws", 4, 2));
  REQUIRE(f.view("ws").leader == "a");
  for (int i = 0; i < 20; ++i) {
    double now = 100 + i * 100;
    auto fx = deliver(a, now, claim("mallory", "ws", 5 + i, 10 + i));
    CHECK(!find(fx, EffectKind::deposed));
    deliver(f, now, claim("mallory", "ws", 5 + i, 10 + i));
    if (i % 5 == 0) {
      a.step(event(EventKind::tick, now + 1));
      deliver(f, now + 2, claim("a", "ws", 4, 3 + i));
    }
  }
  CHECK(a.view("ws").role == Role::leader);
  CHECK(f.view("ws").leader == "a");
}

TEST_CASE("claims mutation: a trusting handler lets a forged claim depose the holder") {
  Config c = config("a");
  c.mutations.trust_claims = true;
  Election a(c);
  lead(a, "ws", 0, 4);
  auto fx = deliver(a, 100, claim("mallory", "ws", 5));
  CHECK(find(fx, EffectKind::deposed));
}

TEST_CASE("broadcast-only: a forged claim ends one term; the next starts above it") {
  Election a(config("a", Authority::broadcast));
  a.step(event(EventKind::join, 0, "ws"));
  std::vector<Effect> fx;
  for (int i = 0; i < 5 && !find(fx, EffectKind::allocate_epoch); ++i) fx = a.step(event(EventKind::tick, a.next_deadline()));
  Event done = event(EventKind::epoch_allocated, a.next_deadline(), "ws");
  done.epoch = 3;
  REQUIRE(find(a.step(done), EffectKind::elected));
  fx = deliver(a, done.now_ms + 10, claim("mallory", "ws", 100));
  REQUIRE(find(fx, EffectKind::deposed));
  // The forger goes silent: a takes over again, asking the store for more than 100.
  double now = done.now_ms + 10;
  const Effect* alloc = nullptr;
  for (int i = 0; i < 20 && !alloc; ++i) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
    alloc = find(fx, EffectKind::allocate_epoch);
  }
  REQUIRE(alloc);
  CHECK(alloc->epoch >= 100);
}

// A follower whose leader went silent, while a forger announces a candidacy (a claim of
// wire::kPendingEpoch) every 125 ms from one id that ranks first: returns when the follower
// became a candidate and whether it then led.
struct ForgedCandidacy {
  double candidate_at = -1;
  bool led = false;
};
static ForgedCandidacy takeover_under_forged_candidacy(double forged_from) {
  Election b(config("b", Authority::broadcast));
  b.step(event(EventKind::join, 0, "ws"));
  wire::Frame leader = claim("a", "ws", 1);
  double next_heartbeat = 100;  // the leader's last at 2100
  wire::Frame forged = claim("0-forger", "ws", wire::kPendingEpoch);
  ForgedCandidacy out;
  double next_forged = forged_from;
  for (double now = 0; now < 20000;) {
    double tick = b.next_deadline();
    std::vector<Effect> fx;
    if (next_heartbeat <= std::min(tick, next_forged)) {
      now = next_heartbeat;
      ++leader.tick_seq;
      fx = deliver(b, now, leader);
      next_heartbeat = now < 2100 ? now + 1000 : kNever;
    } else if (next_forged <= tick) {
      now = next_forged;
      ++forged.tick_seq;
      fx = deliver(b, now, forged);
      next_forged += 125;
    } else {
      now = tick;
      fx = b.step(event(EventKind::tick, now));
    }
    // A wake-up due when a frame arrives runs in that frame's step.
    if (find(fx, EffectKind::allocate_epoch)) {
      out.candidate_at = now;
      Event done = event(EventKind::epoch_allocated, now + 1, "ws");
      done.epoch = 2;
      out.led = find(b.step(done), EffectKind::elected) != nullptr;
      return out;
    }
  }
  return out;
}

TEST_CASE("broadcast-only: a forged candidacy delays a takeover by one suspect timeout") {
  Config defaults;
  // Without the forger: the leader's last heartbeat at 2100, the suspect timeout after it.
  ForgedCandidacy honest = takeover_under_forged_candidacy(kNever);
  REQUIRE(honest.led);
  CHECK(honest.candidate_at == doctest::Approx(2100 + defaults.suspect_ms).epsilon(0.01));
  // The forger starts just before the takeover and never stops, showing progress: one
  // suspect timeout more (and the rank stagger behind the forger), then the follower leads
  // despite it.
  ForgedCandidacy forged = takeover_under_forged_candidacy(5000);
  REQUIRE(forged.candidate_at > 0);
  CHECK(forged.candidate_at >= 5000 + defaults.suspect_ms);
  CHECK(forged.candidate_at <= 5000 + defaults.suspect_ms + defaults.rank_stagger_ms + 50);
  CHECK(forged.led);
}

// A forged stream: presence under a real id, generation 2^32-1, every 125 ms, while the real
// tab refreshes every second. Returns how long the real tab was hidden (not generation 1).
static double hidden_ms_under_forged_generation(Election& a, double real_from, double until) {
  wire::Frame real = peer_frame("b");
  wire::Frame forged = peer_frame("b");
  forged.generation = UINT32_MAX;
  forged.lifecycle = Lifecycle::frozen;
  forged.app_version = "999";
  double hidden = 0;
  for (double now = 0; now < until; now += 125) {
    if (now >= real_from && static_cast<int>(now) % 1000 == 0) {
      ++real.tick_seq;
      deliver(a, now, real);
    }
    deliver(a, now + 1, forged);
    const Candidate* b = a.presence().find("b");
    if (!b || b->generation != 1) hidden += 125;
  }
  return hidden;
}

TEST_CASE("presence: a forged generation of a running tab is dropped, also while it keeps coming") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  CHECK(hidden_ms_under_forged_generation(a, 0, 20000) == 0);
  CHECK(a.metrics().dropped_stale_generation >= 150);
  CHECK(a.view("ws").eligible);  // the forged version 999 vetoes nothing either
}

TEST_CASE("presence: a forged generation heard before the real tab hides it for at most one suspect timeout") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  double hidden = hidden_ms_under_forged_generation(a, 500, 20000);
  CHECK(hidden > 0);
  CHECK(hidden <= a.config().suspect_ms + 1000);  // + the real tab's refresh interval
  CHECK(a.presence().find("b")->generation == 1);
}

TEST_CASE("presence: a page restored from bfcache takes its id at once") {
  Election a(config("a"));
  wire::Frame before = peer_frame("b");
  deliver(a, 0, before);
  before.lifecycle = Lifecycle::closing;  // pagehide
  deliver(a, 10, before);
  wire::Frame after = peer_frame("b");
  after.generation = 2;
  deliver(a, 20, after);
  CHECK(a.presence().find("b")->generation == 2);
  deliver(a, 30, before);  // a late frame of the old page
  CHECK(a.presence().find("b")->generation == 2);
  CHECK(a.metrics().dropped_stale_generation == 1);
}

TEST_CASE("presence: a frame below or far above its sender's tick changes nothing") {
  Election a(config("a"));
  wire::Frame real = peer_frame("b");
  real.tick_seq = 50;
  real.lifecycle = Lifecycle::hidden;
  deliver(a, 0, real);
  wire::Frame replay = peer_frame("b");  // an old frame of b, or a forgery with a low tick
  replay.tick_seq = 3;
  deliver(a, 100, replay);
  wire::Frame leap = peer_frame("b");  // one frame that would make every later real one look old
  leap.tick_seq = 1'000'000;
  deliver(a, 200, leap);
  CHECK(a.metrics().dropped_old_frame == 2);
  const Candidate* b = a.presence().find("b");
  CHECK(b->lifecycle == Lifecycle::hidden);
  CHECK(b->tick_seq == 50);
  real.tick_seq = 51;
  deliver(a, 1000, real);
  CHECK(a.presence().find("b")->last_progress_ms == 1000);
}

TEST_CASE("presence: a tab that restarted with a lower tick takes its id once the old one went quiet") {
  Election a(config("a"));
  wire::Frame old = peer_frame("b");
  old.tick_seq = 500;
  deliver(a, 0, old);
  wire::Frame restarted = peer_frame("b");
  restarted.tick_seq = 1;
  deliver(a, a.config().suspect_ms + 1, restarted);
  CHECK(a.presence().find("b")->tick_seq == 1);
  CHECK(a.metrics().dropped_old_frame == 0);
}

TEST_CASE("presence: a newer app version vetoes eligibility for at most one suspect timeout") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  wire::Frame forged = peer_frame("m");
  forged.app_version = "999";
  for (int i = 0; i < 10; ++i) {
    forged.tick_seq = 1 + i;  // forged liveness
    deliver(a, 10 + i * 500, forged);
    if (i > 0 && i * 500 + 10 < a.config().suspect_ms) CHECK(!a.view("ws").eligible);
  }
  CHECK(a.view("ws").eligible);
}

TEST_CASE("presence: when the veto of a newer app version ends, the tab competes again on its own timer") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  wire::Frame forged = peer_frame("m");
  forged.app_version = "999";
  deliver(a, 1, forged);
  CHECK(a.view("ws").eligible);  // one frame vetoes nothing: no progress of its own yet
  forged.tick_seq = 2;
  deliver(a, 2, forged);
  REQUIRE(!a.view("ws").eligible);
  // No frame and no event arrives: only the tab's own timer.
  bool requested = false;
  double now = 1;
  while (!requested && now < 10 * a.config().suspect_ms) {
    now = a.next_deadline();
    for (const Effect& e : a.step(event(EventKind::tick, now))) requested |= e.kind == EffectKind::lock_request;
  }
  CHECK(requested);
  CHECK(now <= 1 + a.config().suspect_ms + a.config().heartbeat_ms);
}

TEST_CASE("storage: with no store, a term starts above every term heard of; the floor does not follow claims") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  deliver(a, 10, claim("b", "ws", 7));  // the last leader's term
  auto fx = a.step(event(EventKind::lock_granted, 100, "ws"));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  CHECK(find(fx, EffectKind::allocate_epoch)->epoch == 0);
  Event done = event(EventKind::epoch_allocated, 101, "ws");
  done.epoch = 1;
  done.durable = false;
  fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 8);
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::not_durable);
  // The next term asks the store to exceed only what this tab stood behind.
  a.step(event(EventKind::abdicate, 200, "ws"));
  double now = 200;
  const Effect* alloc = nullptr;
  std::vector<Effect> more;
  for (int i = 0; i < 50 && !alloc; ++i) {
    now = std::max(now + 1, a.next_deadline());
    more = a.step(event(EventKind::tick, now));
    if (find(more, EffectKind::lock_request)) more = a.step(event(EventKind::lock_granted, now, "ws"));
    alloc = find(more, EffectKind::allocate_epoch);
  }
  REQUIRE(alloc);
  CHECK(alloc->epoch == 1);
}

TEST_CASE("storage: a hung store's made-up term also starts above every term heard of") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  deliver(a, 10, claim("b", "ws", 7));
  a.step(event(EventKind::lock_granted, 100, "ws"));
  std::vector<Effect> fx;
  double now = 100;
  for (int i = 0; i < 50 && !find(fx, EffectKind::elected); ++i) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
  }
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 8);
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::storage_timeout);
}

TEST_CASE("storage: an answer below an epoch this tab used is a regressed store") {
  Election a(config("a"));
  lead(a, "ws", 0, 7);
  a.step(event(EventKind::abdicate, 10, "ws"));
  a.step(event(EventKind::tick, 1500));  // after the backoff: queues for the lock again
  auto fx = a.step(event(EventKind::lock_granted, 2000, "ws"));
  const Effect* alloc = find(fx, EffectKind::allocate_epoch);
  REQUIRE(alloc);
  CHECK(alloc->epoch == 7);  // the own floor
  Event done = event(EventKind::epoch_allocated, 2001, "ws");
  done.epoch = 3;  // the store went backwards
  fx = a.step(done);
  const Effect* elected = find(fx, EffectKind::elected);
  REQUIRE(elected);
  CHECK(elected->degraded == Degraded::store_regressed);
  CHECK(elected->epoch == 8);
  CHECK(a.degradation() == Degraded::store_regressed);
}

TEST_CASE("storage: epochs end below 2^40; a store at the bound starts degraded terms at 2^40 - 1") {
  const uint64_t last = (uint64_t{1} << 40) - 1;
  // A durable answer at the bound (a store raised there), and a made-up term above a claim of
  // the last epoch: both would be heard by no one.
  for (bool durable : {true, false}) {
    CAPTURE(durable);
    Election a(config("a"));
    a.step(event(EventKind::join, 0, "ws"));
    Event read = event(EventKind::epoch_read, 1, "ws");
    read.epoch = last;
    a.step(read);
    deliver(a, 2, claim("b", "ws", last));
    a.step(event(EventKind::lock_granted, 3, "ws"));
    Event done = event(EventKind::epoch_allocated, 4, "ws");
    done.epoch = durable ? last + 1 : 5;
    done.durable = durable;
    auto fx = a.step(done);
    const Effect* elected = find(fx, EffectKind::elected);
    REQUIRE(elected);
    CHECK(elected->epoch == last);
    CHECK(elected->degraded == (durable ? Degraded::store_regressed : Degraded::not_durable));
    CHECK(a.degradation() == elected->degraded);
  }
}

TEST_CASE("storage: a hung store degrades the term instead of wedging the lock holder") {
  Election a(config("a"));
  a.step(event(EventKind::join, 0, "ws"));
  a.step(event(EventKind::lock_granted, 1, "ws"));
  REQUIRE(a.view("ws").role == Role::candidate);
  CHECK(a.next_deadline() <= 1 + a.config().storage_timeout_ms);
  auto fx = a.step(event(EventKind::tick, 1 + a.config().storage_timeout_ms));
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::storage_timeout);
  uint64_t degraded_epoch = find(fx, EffectKind::elected)->epoch;
  // A late answer is ignored; after the store recovers the next term is above it.
  Event late = event(EventKind::epoch_allocated, 2000, "ws");
  late.epoch = 1;
  CHECK(!find(a.step(late), EffectKind::elected));
  a.step(event(EventKind::abdicate, 2100, "ws"));
  a.step(event(EventKind::tick, 3500));
  fx = a.step(event(EventKind::lock_granted, 4000, "ws"));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  CHECK(find(fx, EffectKind::allocate_epoch)->epoch == degraded_epoch);
  Event done = event(EventKind::epoch_allocated, 4001, "ws");
  done.epoch = degraded_epoch + 1;
  fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::none);
  CHECK(find(fx, EffectKind::elected)->epoch > degraded_epoch);
}

TEST_CASE("storage: a hung lease transaction counts as a storage failure") {
  Election a(config("a", Authority::lease));
  auto fx = a.step(event(EventKind::join, 0, "sync"));
  REQUIRE(find(fx, EffectKind::lease_try));
  a.step(event(EventKind::tick, a.config().storage_timeout_ms + 1));
  CHECK(a.metrics().storage_failures == 1);
  CHECK(a.degradation() == Degraded::storage_timeout);
  CHECK(a.view("sync").role == Role::follower);
}

TEST_CASE("liveness: a frame handled when the heartbeat is due leaves the heartbeat to the timer") {
  Election a(config("a"));
  lead(a, "ws", 0, 3);
  auto heartbeats = [](const std::vector<Effect>& fx) {
    std::vector<uint64_t> seqs;
    for (const auto& e : fx) {
      if (e.kind != EffectKind::broadcast) continue;
      wire::Frame f;
      REQUIRE(wire::decode(e.bytes.data(), e.bytes.size(), f) == wire::DecodeError::ok);
      if (f.kind == wire::Kind::heartbeat) seqs.push_back(f.tick_seq);
    }
    return seqs;
  };
  wire::Frame b = peer_frame("b");
  uint64_t last_seq = 0;
  int sent = 0;
  for (int i = 0; i < 20; ++i) {
    double due = a.next_deadline();
    // A frame lands exactly when the timer is due, before it fires: whatever is due,
    // the heartbeat waits for the timer.
    b.tick_seq = 2 + i;
    CHECK(heartbeats(deliver(a, due, b)).empty());
    for (uint64_t seq : heartbeats(a.step(event(EventKind::tick, due + 0.01)))) {
      CHECK(seq > last_seq);  // progress that followers can see
      last_seq = seq;
      ++sent;
    }
  }
  CHECK(sent >= 10);
  CHECK(a.view("ws").role == Role::leader);
}

TEST_CASE("storage: the late answer of a timed-out lease transaction does not start a term") {
  Election a(config("a", Authority::lease));
  a.step(event(EventKind::join, 0, "sync"));
  Event result = event(EventKind::lease_result, 2, "sync");
  result.lease = lease_read(a, "sync", LeaseRecord{}, 1, 1);
  a.step(result);
  REQUIRE(a.view("sync").role == Role::leader);
  LeaseRecord old = result.lease;
  a.step(event(EventKind::abdicate, 10, "sync"));  // the release transaction hangs
  double now = 10;
  std::vector<Effect> fx;
  for (int i = 0; i < 50 && !find(fx, EffectKind::lease_try); ++i) {
    now = a.next_deadline();
    fx = a.step(event(EventKind::tick, now));
  }
  REQUIRE(find(fx, EffectKind::lease_try));  // acquiring again, after the timeout
  REQUIRE(a.view("sync").role == Role::candidate);
  // The hung release finally answers, with the old record: not this acquisition's.
  result.now_ms = now + 1;
  result.wall_ms = now + 1;
  result.lease = old;
  result.lease.expires_ms = now + 3000;
  CHECK(!find(a.step(result), EffectKind::elected));
  CHECK(a.view("sync").role == Role::candidate);
  result.lease = lease_read(a, "sync", result.lease, now + 2, now + 2);
  result.now_ms = now + 3;
  result.wall_ms = now + 3;
  fx = a.step(result);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch > old.epoch);
}

TEST_CASE("broadcast-only: an epoch answer that outlived a freeze is asked again") {
  Election a(config("a", Authority::broadcast));
  a.step(event(EventKind::join, 0, "ws"));
  std::vector<Effect> fx;
  for (int i = 0; i < 5 && !find(fx, EffectKind::allocate_epoch); ++i) fx = a.step(event(EventKind::tick, a.next_deadline()));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  // Frozen with the question in flight (no tick ran): the answer (16), later than the
  // store's timeout, may predate a term 17 that began and ended unheard.
  Event done = event(EventKind::epoch_allocated, a.next_deadline() + 5000, "ws");
  done.epoch = 16;
  fx = a.step(done);
  CHECK(!find(fx, EffectKind::elected));
  REQUIRE(find(fx, EffectKind::allocate_epoch));
  done.now_ms += 1;
  done.wall_ms += 1;
  done.epoch = 18;
  fx = a.step(done);
  REQUIRE(find(fx, EffectKind::elected));
  CHECK(find(fx, EffectKind::elected)->epoch == 18);
  CHECK(find(fx, EffectKind::elected)->degraded == Degraded::none);
}
