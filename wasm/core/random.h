// Seeded randomness for jitter and backoff. The core never reads a global source:
// the glue passes a seed, so a simulation replays exactly.
#pragma once
#include <cstdint>

namespace baton {

// SplitMix64: tiny, fast, and good enough for jitter.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

  // Uniform in [0, max_ms).
  double jitter(double max_ms) { return max_ms <= 0 ? 0 : unit() * max_ms; }

 private:
  uint64_t state_;
};

// Exponential backoff with jitter: delay = min(max, base * 2^attempt) * [0.5, 1.5).
class Backoff {
 public:
  Backoff() = default;
  Backoff(double base_ms, double max_ms) : base_ms_(base_ms), max_ms_(max_ms) {}

  double next_delay(Random& rng) {
    double raw = base_ms_;
    for (uint32_t i = 0; i < attempt_ && raw < max_ms_; ++i) raw *= 2;
    if (raw > max_ms_) raw = max_ms_;
    ++attempt_;
    return raw * (0.5 + rng.unit());
  }
  void reset() { attempt_ = 0; }
  uint32_t attempt() const { return attempt_; }

 private:
  double base_ms_ = 0;
  double max_ms_ = 0;
  uint32_t attempt_ = 0;
};

}  // namespace baton
