// Seeded randomness and backoff: replayable jitter for the core.
//
// Serves determinism (a simulation replays exactly) and invariant 3 (failed acquisition
// retries with bounded, growing delays).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "core/random.h"

using namespace baton;

TEST_CASE("random: the same seed gives the same sequence") {
  Random a(42), b(42);
  for (int i = 0; i < 1000; ++i) {
    CAPTURE(i);
    REQUIRE(a.next() == b.next());
  }
  Random c(42), d(42);
  for (int i = 0; i < 100; ++i) CHECK(c.unit() == d.unit());
}

TEST_CASE("random: a copy continues the same sequence") {
  Random a(7);
  a.next();
  Random b = a;
  for (int i = 0; i < 100; ++i) CHECK(a.next() == b.next());
}

TEST_CASE("random: different seeds give different sequences") {
  Random a(1), b(2);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += a.next() == b.next();
  CHECK(same == 0);
}

TEST_CASE("random: matches the SplitMix64 reference output") {
  // Pins the algorithm, so native simulations and the WASM build replay identically.
  Random r(0);
  CHECK(r.next() == 0xE220A8397B1DCDAFull);
  CHECK(r.next() == 0x6E789E6AA1B965F4ull);
  CHECK(r.next() == 0x06C45D188009454Full);
}

TEST_CASE("random: outputs do not repeat in a short run, seed 0 included") {
  Random r(0);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(r.next());
  CHECK(seen.size() == 10000);
}

TEST_CASE("random: unit() is in [0, 1) and roughly uniform") {
  Random r(123);
  const int n = 100000;
  double sum = 0, lo = 1, hi = 0;
  int buckets[10] = {};
  for (int i = 0; i < n; ++i) {
    double u = r.unit();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    ++buckets[static_cast<int>(u * 10)];
  }
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.01));
  CHECK(lo < 0.001);
  CHECK(hi > 0.999);
  for (int b : buckets) {
    CHECK(b > n / 10 * 0.95);
    CHECK(b < n / 10 * 1.05);
  }
}

TEST_CASE("random: jitter is within [0, max] and 0 for a non-positive max") {
  Random r(9);
  for (double max : {1.0, 10.0, 250.0, 1e6}) {
    double hi = 0;
    for (int i = 0; i < 10000; ++i) {
      double j = r.jitter(max);
      REQUIRE(j >= 0.0);
      REQUIRE(j <= max);
      hi = std::max(hi, j);
    }
    CHECK(hi > max * 0.99);  // the whole range is used
  }
  CHECK(r.jitter(0) == 0.0);
  CHECK(r.jitter(-5) == 0.0);
}

TEST_CASE("random: jitter is the same for the same seed") {
  Random a(5), b(5);
  for (int i = 0; i < 100; ++i) CHECK(a.jitter(300) == b.jitter(300));
}

// ---------------------------------------------------------------------------------------
// Backoff

TEST_CASE("backoff: delays are [0.5, 1.5) x min(max, base * 2^attempt)") {
  const double base = 250, max = 10000;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Random rng(seed);
    Backoff b(base, max);
    for (uint32_t attempt = 0; attempt < 12; ++attempt) {
      CAPTURE(seed);
      CAPTURE(attempt);
      CHECK(b.attempt() == attempt);
      double raw = std::min(max, base * std::pow(2.0, attempt));
      double d = b.next_delay(rng);
      CHECK(d >= 0.5 * raw);
      CHECK(d < 1.5 * raw);
    }
    CHECK(b.attempt() == 12);
  }
}

TEST_CASE("backoff: the jitter factor is 0.5 + unit(), from the caller's random source") {
  Random rng(77);
  Random mirror = rng;
  Backoff b(100, 5000);
  const double raws[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000};
  for (double raw : raws) {
    double expected = raw * (0.5 + mirror.unit());
    CHECK(b.next_delay(rng) == expected);
  }
}

TEST_CASE("backoff: grows exponentially until it reaches the maximum") {
  // Compare medians over many seeds: each attempt roughly doubles until capped.
  const double base = 250, max = 10000;
  const int seeds = 400;
  std::vector<double> mean(10, 0.0);
  for (int s = 0; s < seeds; ++s) {
    Random rng(1000 + s);
    Backoff b(base, max);
    for (size_t a = 0; a < mean.size(); ++a) mean[a] += b.next_delay(rng) / seeds;
  }
  for (size_t a = 0; a + 1 < mean.size(); ++a) {
    double raw = std::min(max, base * std::pow(2.0, static_cast<double>(a)));
    CAPTURE(a);
    CHECK(mean[a] == doctest::Approx(raw).epsilon(0.06));
  }
  CHECK(mean[1] / mean[0] == doctest::Approx(2.0).epsilon(0.1));
  CHECK(mean[4] / mean[3] == doctest::Approx(2.0).epsilon(0.1));
  CHECK(mean[9] == doctest::Approx(max).epsilon(0.06));  // capped
}

TEST_CASE("backoff: the cap holds for very many attempts (no overflow)") {
  Random rng(3);
  Backoff b(250, 10000);
  for (int i = 0; i < 5000; ++i) {
    double d = b.next_delay(rng);
    CAPTURE(i);
    REQUIRE(std::isfinite(d));
    if (i < 6) continue;  // 250 * 2^6 = 16000 is the first raw delay over the cap
    REQUIRE(d >= 5000);
    REQUIRE(d < 15000);
  }
  CHECK(b.attempt() == 5000);
}

TEST_CASE("backoff: a base above the maximum is capped from the first attempt") {
  Random rng(4);
  Backoff b(50000, 10000);
  for (int i = 0; i < 20; ++i) {
    double d = b.next_delay(rng);
    CHECK(d >= 5000);
    CHECK(d < 15000);
  }
}

TEST_CASE("backoff: reset starts again from the base delay") {
  Random rng(11);
  Backoff b(250, 10000);
  for (int i = 0; i < 6; ++i) b.next_delay(rng);
  REQUIRE(b.attempt() == 6);
  b.reset();
  CHECK(b.attempt() == 0);
  double d = b.next_delay(rng);
  CHECK(d >= 125);
  CHECK(d < 375);
  CHECK(b.attempt() == 1);
  d = b.next_delay(rng);
  CHECK(d >= 250);
  CHECK(d < 750);
}
