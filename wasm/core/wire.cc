#include "wire.h"

#include <algorithm>

namespace baton::wire {
namespace {

void put_varint(FrameBytes& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void put_string(FrameBytes& out, std::string_view s, size_t limit) {
  size_t n = std::min(s.size(), limit);
  put_varint(out, n);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(s[i]));
}

// Bounds-checked reader; the first failure sticks and every later read is a no-op.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  DecodeError error() const { return error_; }
  bool ok() const { return error_ == DecodeError::ok; }
  bool at_end() const { return p_ == end_; }
  void fail(DecodeError e) {
    if (ok()) error_ = e;
  }

  uint8_t byte() {
    if (!ok()) return 0;
    if (p_ == end_) {
      fail(DecodeError::truncated);
      return 0;
    }
    return *p_++;
  }

  uint64_t varint(uint64_t max) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      if (!ok()) return 0;
      // Bits beyond 64 would be lost, and a trailing zero group is an overlong
      // encoding: both are malformed, so every number has exactly one encoding.
      if ((shift == 63 && b > 1) || (shift > 0 && b == 0)) {
        fail(DecodeError::bad_number);
        return 0;
      }
      v |= uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) {
        if (v > max) fail(DecodeError::bad_number);
        return v;
      }
    }
    fail(DecodeError::bad_number);
    return 0;
  }

  // A view into the decoded bytes, valid while they are.
  std::string_view string(size_t limit) {
    if (!ok()) return {};
    uint64_t n = varint(limit);
    if (!ok()) {
      if (error_ == DecodeError::bad_number) error_ = DecodeError::bad_length;
      return {};
    }
    if (static_cast<uint64_t>(end_ - p_) < n) {
      fail(DecodeError::truncated);
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  DecodeError error_ = DecodeError::ok;
};

}  // namespace

const char* to_string(DecodeError e) {
  switch (e) {
    case DecodeError::ok: return "ok";
    case DecodeError::oversized: return "oversized";
    case DecodeError::truncated: return "truncated";
    case DecodeError::bad_magic: return "bad-magic";
    case DecodeError::foreign_version: return "foreign-version";
    case DecodeError::bad_kind: return "bad-kind";
    case DecodeError::bad_enum: return "bad-enum";
    case DecodeError::bad_length: return "bad-length";
    case DecodeError::too_many: return "too-many";
    case DecodeError::bad_number: return "bad-number";
    case DecodeError::trailing_bytes: return "trailing-bytes";
  }
  return "?";
}

// The largest frame encode() can emit: every string and count at its limit, every number
// at its largest (a varint of 2^53 - 1 takes 8 bytes, of 2^32 - 1 five).
constexpr size_t kLargestFrame = 3 + (1 + kMaxIdBytes) + 5 + 1 + (1 + kMaxVersionBytes) + 8 + 8 + 5 + 1 +
                                  1 + kMaxCapabilities * (1 + kMaxCapabilityBytes) +
                                  1 + kMaxClaims * (1 + kMaxResourceBytes + 8) + (1 + kMaxResourceBytes) +
                                  (1 + kMaxIdBytes);
static_assert(kLargestFrame <= FrameBytes::kCapacity, "every frame the encoder emits fits its buffer");

FrameBytes encode(const Frame& f) {
  FrameBytes out;
  out.push_back(kMagic);
  out.push_back(f.version);
  out.push_back(static_cast<uint8_t>(f.kind));
  put_string(out, f.sender, kMaxIdBytes);
  put_varint(out, f.generation);
  out.push_back(static_cast<uint8_t>(f.lifecycle));
  put_string(out, f.app_version, kMaxVersionBytes);
  put_varint(out, std::min(f.start_ms, kMaxEpoch));
  put_varint(out, std::min(f.tick_seq, kMaxEpoch));
  put_varint(out, f.refresh_ms);
  out.push_back(f.observes_only ? kObservesOnly : 0);
  size_t caps = std::min(f.capabilities.size(), kMaxCapabilities);
  put_varint(out, caps);
  for (size_t i = 0; i < caps; ++i) put_string(out, f.capabilities[i], kMaxCapabilityBytes);
  size_t claims = std::min(f.claims.size(), kMaxClaims);
  put_varint(out, claims);
  for (size_t i = 0; i < claims; ++i) {
    put_string(out, f.claims[i].resource, kMaxResourceBytes);
    put_varint(out, std::min(f.claims[i].epoch, kMaxEpoch));
  }
  put_string(out, f.subject, kMaxResourceBytes);
  put_string(out, f.target, kMaxIdBytes);
  return out;
}

DecodeError decode(const uint8_t* data, size_t size, Frame& out) {
  if (size > kMaxFrameBytes) return DecodeError::oversized;
  Reader r(data, size);
  if (r.byte() != kMagic) {
    r.fail(DecodeError::bad_magic);
    return r.error();
  }
  out.version = r.byte();
  if (r.ok() && out.version != kProtocolVersion) return DecodeError::foreign_version;
  uint8_t kind = r.byte();
  if (r.ok() && (kind < 1 || kind > 5)) return DecodeError::bad_kind;
  out.kind = static_cast<Kind>(kind);
  out.sender = r.string(kMaxIdBytes);
  if (r.ok() && out.sender.empty()) r.fail(DecodeError::bad_length);
  out.generation = static_cast<uint32_t>(r.varint(UINT32_MAX));
  uint8_t lifecycle = r.byte();
  if (r.ok() && lifecycle >= kLifecycleCount) r.fail(DecodeError::bad_enum);
  out.lifecycle = static_cast<Lifecycle>(lifecycle);
  out.app_version = r.string(kMaxVersionBytes);
  out.start_ms = r.varint(kMaxEpoch);
  out.tick_seq = r.varint(kMaxEpoch);
  out.refresh_ms = static_cast<uint32_t>(r.varint(UINT32_MAX));
  uint8_t flags = r.byte();
  if (r.ok() && (flags & ~kKnownFlags) != 0) r.fail(DecodeError::bad_enum);
  out.observes_only = (flags & kObservesOnly) != 0;
  if (!r.ok()) return r.error();
  uint64_t caps = r.varint(kMaxCapabilities);
  if (r.error() == DecodeError::bad_number) return DecodeError::too_many;
  out.capabilities.clear();
  for (uint64_t i = 0; i < caps && r.ok(); ++i) out.capabilities.push_back(r.string(kMaxCapabilityBytes));
  if (!r.ok()) return r.error();
  uint64_t claims = r.varint(kMaxClaims);
  if (r.error() == DecodeError::bad_number) return DecodeError::too_many;
  out.claims.clear();
  for (uint64_t i = 0; i < claims && r.ok(); ++i) {
    Claim c;
    c.resource = r.string(kMaxResourceBytes);
    c.epoch = r.varint(kMaxEpoch);
    if (r.ok() && c.resource.empty()) r.fail(DecodeError::bad_length);
    out.claims.push_back(std::move(c));
  }
  out.subject = r.string(kMaxResourceBytes);
  out.target = r.string(kMaxIdBytes);
  if (r.ok() && !r.at_end()) r.fail(DecodeError::trailing_bytes);
  return r.error();
}

}  // namespace baton::wire
