// The byte protocol between the JavaScript glue and the core, without Emscripten: the glue
// writes one record into a shared buffer, calls one function, and reads one record back
// from the same buffer. Records are versioned and decoded as strictly as wire frames
// (lengths, enums, no trailing bytes); a malformed record changes nothing and answers -1.
//
// Every record starts with kMagic, kVersion. Integers are little-endian, numbers (times,
// epochs) are float64, a string or a message is a u16 byte length then its bytes.
//
//   open   in:  config   (id, generation u32, appVersion, u8 n + capabilities, authority u8,
//                          heartbeat, suspect, lease, start, seed: f64)
//   step   in:  event    (kind u8, now f64 (monotonic), wall f64, then by kind; see
//                          boundary.cc `read_event`)
//          out: result   (next deadline f64, authority u8, degradation u8,
//                          u16 n + effects, u8 n + changed resource views)
//   ask    in:  query    (kind u8, then by kind) out: its answer
//
// A fence of its own (tab-baton's Fence, for the receiver of guarded effects) is no
// election core: a Fence (core/fence.h) asked with fence queries (FenceQuery, ask_fence).
//
// The result carries every view that changed in the step (role, reason, epochs, leader),
// so the glue keeps them and never calls back to ask. What the glue must know at once
// comes from a step too: the lease transaction steps lease_read and applies the
// lease_write effect it answers with; fenced() steps fence_check and reads the
// fence_verdict effect. Queries only read. Enums cross as their numbers; the glue names
// them from js-glue/src/constants.js, generated from the same C++ headers
// (tests/constants/constants_js.cc), so the wasm carries no name tables. The numbers of
// this protocol (header, queries, join flags, field length) are generated there too.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/election.h"

namespace baton::boundary {

constexpr uint8_t kMagic = 0xBB;
constexpr uint8_t kVersion = 1;
// The longest string or message a record carries: its length is a u16.
constexpr size_t kMaxFieldBytes = UINT16_MAX;
// Large enough for the biggest answer: presence of a full table (256 tabs with 8
// capabilities each) is under 100 KB.
constexpr size_t kBufferBytes = 256 * 1024;

enum class Query : uint8_t {
  presence = 0,       // now f64 (monotonic), wall f64
  metrics = 1,        // -> BATON_COUNTERS, then step-downs by Reason: f64 each
  log = 2,
};

enum class FenceQuery : uint8_t {
  admit = 0,    // resource, epoch f64 -> u8 (1: admitted)
  highest = 1,  // resource -> f64
};

// The policy of a join event (Policy in core/election.h), one bit each in one byte; a bit
// above the last is malformed.
enum class JoinFlag : uint8_t {
  allow_hidden = 1,
  prefer_visible = 2,
  requires_network = 4,
  newest_app_only = 8,
  observe_only = 16,
};
constexpr JoinFlag kLastJoinFlag = JoinFlag::observe_only;

// The counters of Query::metrics in their order: Metrics field, name in JavaScript. The
// glue's COUNTER_NAMES (constants.js) is generated from this list.
#define BATON_COUNTERS(X)                               \
  X(frames_sent, "framesSent")                          \
  X(frames_received, "framesReceived")                  \
  X(dropped_malformed, "droppedMalformed")              \
  X(dropped_oversized, "droppedOversized")              \
  X(dropped_foreign_version, "droppedForeignVersion")   \
  X(dropped_stale_generation, "droppedStaleGeneration") \
  X(dropped_old_frame, "droppedOldFrame")               \
  X(dropped_forged_epoch, "droppedForgedEpoch")         \
  X(dropped_table_full, "droppedTableFull")             \
  X(duplicate_id, "duplicateId")                        \
  X(ticks, "ticks")                                     \
  X(elections, "elections")                             \
  X(triggers, "triggers")                               \
  X(terms_won, "termsWon")                              \
  X(step_downs, "stepDowns")                            \
  X(steals, "steals")                                   \
  X(abdicate_requests_sent, "abdicateRequestsSent")     \
  X(lock_requests, "lockRequests")                      \
  X(lease_attempts, "leaseAttempts")                    \
  X(backoffs, "backoffs")                               \
  X(epoch_conflicts, "epochConflicts")                  \
  X(clock_jumps, "clockJumps")                          \
  X(storage_failures, "storageFailures")

// The view of a resource as the glue was last told it.
struct ToldView {
  ResourceName name;
  ResourceView view;
};

// One core and what the glue was last told about its resources.
class Session {
 public:
  explicit Session(const Config& config) : election_(config) {}
  Election& election() { return election_; }
  // Steps one encoded event from `in`; writes the result into `out`. Returns its length or -1.
  int step(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap);
  // Answers one encoded query. Returns the answer's length or -1.
  int ask(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap);
  // Whether the glue's copies of the views are the core's, as they must be after every
  // step (the steps compare only the views that may have changed; fuzz_boundary checks).
  // Only the fuzz target calls it; it stays here because it reads the private copies and
  // the boundary's own view comparison, which a test helper would need exported.
  bool views_told() const;

 private:
  Election election_;
  // The step's effects, kept between steps so that their room is allocated once.
  Effects effects_;
  GrowingArray<ToldView> told_;
  // Transitions logged as of the last step: a role change shows as a new one.
  uint64_t transitions_told_ = 0;
};

// Answers one encoded fence query. Returns the answer's length or -1.
int ask_fence(Fence& fence, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap);

// Decodes a config record; false when malformed.
bool read_config(const uint8_t* in, size_t size, Config& config);

}  // namespace baton::boundary
