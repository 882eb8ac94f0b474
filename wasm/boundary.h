// The byte protocol between the JavaScript glue and the core, without Emscripten: the glue
// writes one record into a shared buffer, calls one function, and reads one record back
// from the same buffer. Records are versioned and decoded as strictly as wire frames
// (lengths, enums, no trailing bytes); a malformed record changes nothing and answers -1.
//
// Every record starts with kMagic, kVersion. Integers are little-endian, numbers (times,
// epochs) are float64, a string is a u16 byte length then UTF-8.
//
//   open   in:  config   (id, generation u32, appVersion, u8 n + capabilities, authority u8,
//                          heartbeat, suspect, lease, start, seed: f64)
//   step   in:  event    (kind u8, now f64, then by kind; see boundary.cc `read_event`)
//          out: result   (next deadline f64, authority u8, degradation u8,
//                          u16 n + effects, u8 n + changed resource views)
//   ask    in:  query    (kind u8, then by kind) out: its answer
//
// The result carries every view that changed in the step (role, reason, epochs, leader),
// so the glue keeps them and never calls back to ask.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/node.h"

namespace baton::boundary {

constexpr uint8_t kMagic = 0xBB;
constexpr uint8_t kVersion = 1;
// Large enough for the biggest answer: presence of a full table (256 tabs with 8
// capabilities each) is under 100 KB.
constexpr size_t kBufferBytes = 256 * 1024;

enum class Query : uint8_t {
  names = 0,          // enum and counter names, in numeric order (no core needed)
  presence = 1,       // now f64
  metrics = 2,
  log = 3,
  fence_admit = 4,    // resource, epoch f64 -> u8
  fence_highest = 5,  // resource -> f64
  lease_decide = 6,   // resource, lease record, now f64 -> lease record
};

// One core and what the glue was last told about its resources.
class Session {
 public:
  explicit Session(const Config& config) : node_(config) {}
  Node& node() { return node_; }
  // Steps one encoded event from `in`; writes the result into `out`. Returns its length or -1.
  int step(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap);
  // Answers one encoded query. Returns the answer's length or -1.
  int ask(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap);

 private:
  Node node_;
  std::vector<std::pair<ResourceName, ResourceView>> told_;
  // Transitions logged as of the last step: a role change shows as a new one.
  uint64_t transitions_told_ = 0;
};

// Decodes a config record; false when malformed.
bool read_config(const uint8_t* in, size_t size, Config& config);
// The answer to Query::names (needs no core).
int write_names(uint8_t* out, size_t out_cap);

}  // namespace baton::boundary
