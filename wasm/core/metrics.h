// Counters for observability. Plain integers: the glue copies them into metrics().
#pragma once
#include <array>
#include <cstdint>

#include "types.h"

namespace baton {

struct Metrics {
  uint64_t frames_sent = 0;
  uint64_t frames_received = 0;
  uint64_t dropped_malformed = 0;      // truncated, bad enum, bad length, trailing bytes
  uint64_t dropped_oversized = 0;
  uint64_t dropped_foreign_version = 0;
  uint64_t dropped_stale_generation = 0;  // another generation of a tab that still runs
  uint64_t dropped_old_frame = 0;      // a tick below its sender's newest, or far above it
  uint64_t dropped_forged_epoch = 0;   // claims implausibly far above anything known
  uint64_t dropped_table_full = 0;     // a new sender while the presence table is full
  uint64_t duplicate_id = 0;           // frames from another tab using this tab's id
  uint64_t ticks = 0;
  uint64_t elections = 0;              // evaluations run (after coalescing)
  uint64_t triggers = 0;               // election triggers requested (before coalescing)
  uint64_t terms_won = 0;
  uint64_t step_downs = 0;
  uint64_t steals = 0;
  uint64_t abdicate_requests_sent = 0;
  uint64_t lock_requests = 0;
  uint64_t lease_attempts = 0;
  uint64_t backoffs = 0;
  uint64_t epoch_conflicts = 0;        // claims of a newer term while holding the authority
  uint64_t clock_jumps = 0;            // time went backwards
  uint64_t storage_failures = 0;
  std::array<uint64_t, static_cast<size_t>(Reason::count_)> step_down_reasons{};
};

}  // namespace baton
