// The versioned binary frame that tabs exchange over BroadcastChannel.
//
// Layout (all integers are unsigned LEB128 varints, strings are varint length + UTF-8):
//   magic 0xBA, protocol version, kind,
//   sender: id, generation, lifecycle, app version, start time (ms), tick sequence,
//           refresh interval (ms), flags (one byte: kObservesOnly), capabilities
//           (count + strings),
//   claims: count + (resource, epoch) pairs       -- terms the sender holds,
//   subject resource, target id                   -- for goodbye / abdicate request.
// Decoding checks every length, count and enum, rejects trailing bytes and frames over
// kMaxFrameBytes. Nothing in a frame is trusted beyond its shape.
#pragma once
#include <cstdint>

#include "fixed.h"
#include "types.h"

namespace baton::wire {

constexpr uint8_t kMagic = 0xBA;
// 2: the flags byte (observes only), so that no tab ranks or names a tab that never leads.
constexpr uint8_t kProtocolVersion = 2;
// The limits are chosen so that the largest frame the encoder can emit (965 bytes)
// fits kMaxFrameBytes; the glue rejects longer names with a TypeError up front.
constexpr size_t kMaxFrameBytes = 1024;
constexpr size_t kMaxIdBytes = 64;
constexpr size_t kMaxResourceBytes = 48;
constexpr size_t kMaxCapabilityBytes = 32;
constexpr size_t kMaxVersionBytes = 32;
constexpr size_t kMaxCapabilities = 8;
constexpr size_t kMaxClaims = 8;
}  // namespace baton::wire

namespace baton {

// The core's text, each at its limit above: no id, name or version is ever longer.
using TabId = FixedString<wire::kMaxIdBytes>;
using ResourceName = FixedString<wire::kMaxResourceBytes>;
using Version = FixedString<wire::kMaxVersionBytes>;
using Capability = FixedString<wire::kMaxCapabilityBytes>;
using Capabilities = FixedVector<Capability, wire::kMaxCapabilities>;

}  // namespace baton

namespace baton::wire {

enum class Kind : uint8_t {
  hello = 1,             // a new tab: everyone answers with presence
  presence = 2,          // sender's candidate fields (join, change, refresh)
  heartbeat = 3,         // leader: progress proof plus the terms it holds
  goodbye = 4,           // sender leaves `subject` (empty: everything); `target` = successor
  abdicate_request = 5,  // ask `target` to give up `subject` (silent or hidden leader)
};

struct Claim {
  ResourceName resource;
  uint64_t epoch = 0;
};
// Broadcast-only: a claim of epoch 0 announces a candidacy, the sender's epoch still being
// allocated (terms start at 1). The others give it time to claim instead of competing.
constexpr uint64_t kPendingEpoch = 0;

// The sender's flags byte; a bit not defined here is malformed.
// kObservesOnly: the sender only observes every resource it joined (it never leads), so
// the others neither rank it nor name it as a leader's successor.
constexpr uint8_t kObservesOnly = 1;
constexpr uint8_t kKnownFlags = kObservesOnly;

struct Frame {
  uint8_t version = kProtocolVersion;
  Kind kind = Kind::presence;
  TabId sender;
  uint32_t generation = 0;
  Lifecycle lifecycle = Lifecycle::active;
  Version app_version;
  uint64_t start_ms = 0;
  uint64_t tick_seq = 0;
  uint32_t refresh_ms = 0;
  bool observes_only = false;  // kObservesOnly
  Capabilities capabilities;
  FixedVector<Claim, kMaxClaims> claims;
  ResourceName subject;
  TabId target;
};

enum class DecodeError : uint8_t {
  ok = 0,
  oversized,
  truncated,
  bad_magic,
  foreign_version,
  bad_kind,
  bad_enum,
  bad_length,
  too_many,
  bad_number,
  trailing_bytes,
};
const char* to_string(DecodeError e);

// An encoded frame. Every frame the encoder emits fits (see kMaxFrameBytes).
using FrameBytes = FixedVector<uint8_t, kMaxFrameBytes>;

// Encodes a frame. Fields over their limits are a programming error of the sender and
// are clamped rather than producing a frame its peers would drop.
FrameBytes encode(const Frame& f);

// Decodes bytes into `out`; anything but ok leaves `out` unspecified.
DecodeError decode(const uint8_t* data, size_t size, Frame& out);

}  // namespace baton::wire
