// Wire codec: round trips, the exact byte layout, every DecodeError, robustness against
// truncated and mutated input, and the encoder's clamping.
//
// Invariant served: 6 (nothing another tab sends can crash a tab or wedge the election).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "core/types.h"
#include "core/wire.h"

using namespace baton;
using namespace baton::wire;

namespace {

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------
// An independent writer for the documented layout, so tests can build frames the encoder
// would never produce (over-long fields, bad enums, non-canonical varints).

void varint(Bytes& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

// A varint field: a value, or raw bytes standing in for its encoding.
struct V {
  Bytes bytes;
  V(uint64_t v) { varint(bytes, v); }  // NOLINT: implicit on purpose
  static V raw(Bytes b) {
    V x(0);
    x.bytes = std::move(b);
    return x;
  }
};

// A string field: its length prefix may lie about the body.
struct Str {
  V len;
  std::string body;
  Str(const char* s) : len(std::string(s).size()), body(s) {}  // NOLINT
  Str(std::string s) : len(s.size()), body(std::move(s)) {}    // NOLINT
  Str(V l, std::string b) : len(std::move(l)), body(std::move(b)) {}
};

struct RawClaim {
  Str resource;
  V epoch;
};

struct Raw {
  uint8_t magic = kMagic;
  uint8_t version = kProtocolVersion;
  uint8_t kind = static_cast<uint8_t>(Kind::heartbeat);
  Str sender = "tab-a";
  V generation = 1;
  uint8_t lifecycle = static_cast<uint8_t>(Lifecycle::active);
  Str app_version = "1.0";
  V start_ms = 1000;
  V tick_seq = 5;
  V refresh_ms = 1000;
  uint8_t flags = 0;
  std::optional<V> cap_count;  // default: caps.size()
  std::vector<Str> caps;
  std::optional<V> claim_count;  // default: claims.size()
  std::vector<RawClaim> claims;
  Str subject = "";
  Str target = "";
  Bytes trailing;
};

void put(Bytes& out, const V& v) { out.insert(out.end(), v.bytes.begin(), v.bytes.end()); }
void put(Bytes& out, const Str& s) {
  put(out, s.len);
  out.insert(out.end(), s.body.begin(), s.body.end());
}

Bytes build(const Raw& r) {
  Bytes out{r.magic, r.version, r.kind};
  put(out, r.sender);
  put(out, r.generation);
  out.push_back(r.lifecycle);
  put(out, r.app_version);
  put(out, r.start_ms);
  put(out, r.tick_seq);
  put(out, r.refresh_ms);
  out.push_back(r.flags);
  put(out, r.cap_count ? *r.cap_count : V(r.caps.size()));
  for (const auto& c : r.caps) put(out, c);
  put(out, r.claim_count ? *r.claim_count : V(r.claims.size()));
  for (const auto& c : r.claims) {
    put(out, c.resource);
    put(out, c.epoch);
  }
  put(out, r.subject);
  put(out, r.target);
  out.insert(out.end(), r.trailing.begin(), r.trailing.end());
  return out;
}

// Decodes from an exactly sized heap copy, so a sanitizer build catches any over-read.
DecodeError decode_copy(const Bytes& b, Frame& out) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[b.size() == 0 ? 1 : b.size()]);
  for (size_t i = 0; i < b.size(); ++i) copy[i] = b[i];
  return decode(b.empty() ? nullptr : copy.get(), b.size(), out);
}

DecodeError decode_bytes(const Bytes& b) {
  Frame f;
  return decode_copy(b, f);
}

// What the election counts as dropped_malformed (everything but ok, oversized, foreign).
bool is_malformed(DecodeError e) {
  return e != DecodeError::ok && e != DecodeError::oversized && e != DecodeError::foreign_version;
}

Bytes run(uint8_t b, size_t n) { return Bytes(n, b); }

// A frame with every field set to a non-default value, multi-byte varints included.
Frame full_frame(Kind kind) {
  Frame f;
  f.kind = kind;
  f.sender = "9b2f61c4-tab";
  f.generation = 123456;
  f.lifecycle = Lifecycle::hidden;
  f.app_version = "1.10.2";
  f.start_ms = 1'732'900'000'000ull;
  f.tick_seq = 300;
  f.refresh_ms = 1500;
  f.observes_only = true;
  f.capabilities = {"ws.owner.v1", "feed.preferred"};
  f.claims = {{"feed", 42}, {"ws", kMaxEpoch}};
  f.subject = "feed";
  f.target = "tab-next";
  return f;
}

const Kind kAllKinds[] = {Kind::hello, Kind::presence, Kind::heartbeat, Kind::goodbye,
                          Kind::abdicate_request};

void check_same(const Frame& a, const Frame& b) {
  CHECK(a.version == b.version);
  CHECK(a.kind == b.kind);
  CHECK(a.sender == b.sender);
  CHECK(a.generation == b.generation);
  CHECK(a.lifecycle == b.lifecycle);
  CHECK(a.app_version == b.app_version);
  CHECK(a.start_ms == b.start_ms);
  CHECK(a.tick_seq == b.tick_seq);
  CHECK(a.refresh_ms == b.refresh_ms);
  CHECK(a.observes_only == b.observes_only);
  CHECK(a.capabilities == b.capabilities);
  REQUIRE(a.claims.size() == b.claims.size());
  for (size_t i = 0; i < a.claims.size(); ++i) {
    CAPTURE(i);
    CHECK(a.claims[i].resource == b.claims[i].resource);
    CHECK(a.claims[i].epoch == b.claims[i].epoch);
  }
  CHECK(a.subject == b.subject);
  CHECK(a.target == b.target);
}

Frame round_trip(const Frame& in) {
  Bytes b = encode(in);
  Frame out;
  DecodeError e = decode_copy(b, out);
  CAPTURE(std::string(to_string(e)));
  REQUIRE(e == DecodeError::ok);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Round trips and layout.

TEST_CASE("wire: every kind round-trips with all fields set") {
  for (Kind k : kAllKinds) {
    CAPTURE(static_cast<int>(k));
    Frame in = full_frame(k);
    Frame out = round_trip(in);
    check_same(in, out);
  }
}

TEST_CASE("wire: every lifecycle round-trips") {
  for (uint8_t l = 0; l < kLifecycleCount; ++l) {
    CAPTURE(static_cast<int>(l));
    Frame in = full_frame(Kind::presence);
    in.lifecycle = static_cast<Lifecycle>(l);
    CHECK(round_trip(in).lifecycle == in.lifecycle);
  }
}

TEST_CASE("wire: minimal frame (only a sender) round-trips") {
  Frame in;
  in.kind = Kind::hello;
  in.sender = "x";
  Frame out = round_trip(in);
  check_same(in, out);
  CHECK(out.capabilities.empty());
  CHECK(out.claims.empty());
  CHECK(out.app_version.empty());
  CHECK(out.subject.empty());
  CHECK(out.target.empty());
}

TEST_CASE("wire: values and lengths exactly at their limits round-trip") {
  Frame in = full_frame(Kind::presence);
  in.sender = std::string(kMaxIdBytes, 's');
  in.app_version = std::string(kMaxVersionBytes, 'v');
  in.generation = UINT32_MAX;
  in.refresh_ms = UINT32_MAX;
  in.start_ms = kMaxEpoch;
  in.tick_seq = kMaxEpoch;
  in.capabilities = {std::string(kMaxCapabilityBytes, 'c')};
  in.claims = {{std::string(kMaxResourceBytes, 'r'), kMaxEpoch}, {"zero", 0}};
  in.subject = std::string(kMaxResourceBytes, 'u');
  in.target = std::string(kMaxIdBytes, 't');
  check_same(in, round_trip(in));
}

TEST_CASE("wire: the maximum counts of capabilities and claims round-trip") {
  Frame in = full_frame(Kind::heartbeat);
  in.capabilities.clear();
  in.claims.clear();
  for (size_t i = 0; i < kMaxCapabilities; ++i) in.capabilities.push_back("cap" + std::to_string(i));
  for (size_t i = 0; i < kMaxClaims; ++i) in.claims.push_back({"res" + std::to_string(i), 1000 + i});
  check_same(in, round_trip(in));
}

TEST_CASE("wire: strings are binary-safe (UTF-8, NUL bytes)") {
  Frame in = full_frame(Kind::goodbye);
  in.sender = std::string("t\0b", 3);
  in.app_version = "1.0-\xC3\xA9";  // é
  in.capabilities = {std::string("\0", 1), "\xF0\x9F\x94\x92"};
  in.subject = "\xE2\x9C\x93";
  Frame out = round_trip(in);
  check_same(in, out);
  CHECK(out.sender.size() == 3);
}

TEST_CASE("wire: the encoder writes exactly the documented layout") {
  Frame f;
  f.kind = Kind::heartbeat;
  f.sender = "tab-a";
  f.generation = 300;  // two-byte varint
  f.lifecycle = Lifecycle::restored;
  f.app_version = "1.0";
  f.start_ms = 1000;
  f.tick_seq = 5;
  f.refresh_ms = 1000;
  f.observes_only = true;
  f.capabilities = {"c1"};
  f.claims = {{"feed", 7}};
  f.subject = "s";
  f.target = "t";

  Raw r;
  r.generation = 300;
  r.lifecycle = static_cast<uint8_t>(Lifecycle::restored);
  r.flags = kObservesOnly;
  r.caps = {"c1"};
  r.claims = {{"feed", 7}};
  r.subject = "s";
  r.target = "t";

  Bytes enc = encode(f);
  CHECK(enc == build(r));
  REQUIRE(enc.size() >= 3);
  CHECK(enc[0] == 0xBA);
  CHECK(enc[1] == kProtocolVersion);
  CHECK(enc[2] == static_cast<uint8_t>(Kind::heartbeat));
  CHECK(Bytes(encode(f)) == enc);  // deterministic
}

TEST_CASE("wire: a typical heartbeat is small") {
  Frame f;
  f.kind = Kind::heartbeat;
  f.sender = "3f1c9a52-7d0e-4b8e-9c61-2a5b7e4d9f10";  // crypto.randomUUID()
  f.generation = 1;
  f.lifecycle = Lifecycle::active;
  f.app_version = "1.4.2";
  f.start_ms = 1'732'900'000'000ull;  // Date.now()
  f.tick_seq = 86'400;                // a day of 1 s ticks
  f.refresh_ms = 1000;
  f.capabilities = {"ws.owner.v1"};
  f.claims = {{"ws", 1234}};
  Bytes b = encode(f);
  MESSAGE("typical heartbeat frame: " << b.size() << " bytes");
  CHECK(b.size() < 128);
  check_same(f, round_trip(f));
}

// ---------------------------------------------------------------------------------------
// Every DecodeError.

TEST_CASE("wire: the hand-built default frame decodes") {
  Frame f;
  REQUIRE(decode_copy(build(Raw{}), f) == DecodeError::ok);
  CHECK(f.kind == Kind::heartbeat);
  CHECK(f.sender == "tab-a");
  CHECK(f.generation == 1);
  CHECK(f.app_version == "1.0");
  CHECK(f.start_ms == 1000);
  CHECK(f.tick_seq == 5);
  CHECK(f.refresh_ms == 1000);
  CHECK(!f.observes_only);
}

TEST_CASE("wire: empty input is truncated") {
  Frame f;
  CHECK(decode(nullptr, 0, f) == DecodeError::truncated);
  CHECK(decode_bytes({}) == DecodeError::truncated);
}

TEST_CASE("wire: the size limit: kMaxFrameBytes is read, one byte more is oversized") {
  // A valid frame padded to exactly the limit gets past the size check (and is then
  // rejected for its padding); one byte more is rejected before a byte is read.
  Bytes at_limit = encode(full_frame(Kind::presence));
  REQUIRE(at_limit.size() < kMaxFrameBytes);
  at_limit.resize(kMaxFrameBytes, 0);
  CHECK(decode_bytes(at_limit) == DecodeError::trailing_bytes);
  Bytes over = at_limit;
  over.push_back(0);
  CHECK(decode_bytes(over) == DecodeError::oversized);

  CHECK(decode_bytes(run(0xFF, kMaxFrameBytes + 1)) == DecodeError::oversized);
  CHECK(decode_bytes(run(0x00, 64 * 1024)) == DecodeError::oversized);
  Bytes foreign = {kMagic, kProtocolVersion + 1};
  foreign.resize(kMaxFrameBytes + 1, 0);
  CHECK(decode_bytes(foreign) == DecodeError::oversized);  // size is checked first
}

TEST_CASE("wire: every prefix of a valid frame is rejected as truncated") {
  for (Kind k : kAllKinds) {
    Bytes full = encode(full_frame(k));
    REQUIRE(decode_bytes(full) == DecodeError::ok);
    for (size_t n = 0; n < full.size(); ++n) {
      CAPTURE(static_cast<int>(k));
      CAPTURE(n);
      Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      CHECK(decode_bytes(prefix) == DecodeError::truncated);
    }
  }
}

TEST_CASE("wire: a string length beyond the end of the frame is truncated") {
  Raw r;
  r.target = Str(V(10), "abc");
  CHECK(decode_bytes(build(r)) == DecodeError::truncated);
  r = Raw{};
  r.caps = {Str(V(kMaxCapabilityBytes), "x")};
  CHECK(decode_bytes(build(r)) == DecodeError::truncated);
}

TEST_CASE("wire: bad magic") {
  for (uint8_t m : {uint8_t{0x00}, uint8_t{0xBB}, uint8_t{0xFF}, uint8_t{1}}) {
    CAPTURE(static_cast<int>(m));
    Raw r;
    r.magic = m;
    CHECK(decode_bytes(build(r)) == DecodeError::bad_magic);
  }
  CHECK(decode_bytes({0x00}) == DecodeError::bad_magic);
  CHECK(decode_bytes({'{', '"'}) == DecodeError::bad_magic);  // a JSON message on the channel
}

TEST_CASE("wire: foreign protocol version, whatever follows") {
  for (uint8_t v : {uint8_t{0}, uint8_t{1}, uint8_t{3}, uint8_t{255}}) {
    CAPTURE(static_cast<int>(v));
    Raw r;
    r.version = v;
    CHECK(decode_bytes(build(r)) == DecodeError::foreign_version);
    // A future version may change the layout: its body must not be judged as malformed.
    CHECK(decode_bytes({kMagic, v}) == DecodeError::foreign_version);
    CHECK(decode_bytes({kMagic, v, 0, 0xFF, 0xFF}) == DecodeError::foreign_version);
  }
}

TEST_CASE("wire: bad kind 0 and 6 (and 255)") {
  for (uint8_t k : {uint8_t{0}, uint8_t{6}, uint8_t{255}}) {
    CAPTURE(static_cast<int>(k));
    Raw r;
    r.kind = k;
    CHECK(decode_bytes(build(r)) == DecodeError::bad_kind);
  }
  for (Kind k : kAllKinds) {
    Raw r;
    r.kind = static_cast<uint8_t>(k);
    CHECK(decode_bytes(build(r)) == DecodeError::ok);
  }
}

TEST_CASE("wire: bad lifecycle enum") {
  for (uint8_t l : {kLifecycleCount, uint8_t{6}, uint8_t{0x80}, uint8_t{255}}) {
    CAPTURE(static_cast<int>(l));
    Raw r;
    r.lifecycle = l;
    CHECK(decode_bytes(build(r)) == DecodeError::bad_enum);
  }
}

TEST_CASE("wire: the flags byte: observes-only reads back, an undefined bit is a bad enum") {
  Raw r;
  r.flags = kObservesOnly;
  Frame f;
  REQUIRE(decode_copy(build(r), f) == DecodeError::ok);
  CHECK(f.observes_only);
  for (uint8_t flags : {uint8_t{2}, uint8_t{3}, uint8_t{0x80}, uint8_t{255}}) {
    CAPTURE(static_cast<int>(flags));
    r.flags = flags;
    CHECK(decode_bytes(build(r)) == DecodeError::bad_enum);
  }
}

TEST_CASE("wire: empty sender is a bad length") {
  Raw r;
  r.sender = "";
  CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
}

TEST_CASE("wire: empty claim resource is a bad length") {
  Raw r;
  r.claims = {{"", 5}};
  CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
}

TEST_CASE("wire: strings over their limits are bad lengths") {
  SUBCASE("sender") {
    Raw r;
    r.sender = std::string(kMaxIdBytes + 1, 's');
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("app version") {
    Raw r;
    r.app_version = std::string(kMaxVersionBytes + 1, 'v');
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("capability") {
    Raw r;
    r.caps = {"ok", std::string(kMaxCapabilityBytes + 1, 'c')};
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("claim resource") {
    Raw r;
    r.claims = {{std::string(kMaxResourceBytes + 1, 'r'), 1}};
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("subject") {
    Raw r;
    r.subject = std::string(kMaxResourceBytes + 1, 'u');
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("target") {
    Raw r;
    r.target = std::string(kMaxIdBytes + 1, 't');
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("a huge length is rejected before any allocation") {
    Raw r;
    r.target = Str(V(uint64_t{1} << 40), "");
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
  SUBCASE("a string length varint that never ends") {
    Raw r;
    r.sender = Str(V::raw(run(0x80, 11)), "");
    CHECK(decode_bytes(build(r)) == DecodeError::bad_length);
  }
}

TEST_CASE("wire: too many capabilities or claims") {
  SUBCASE("capabilities") {
    Raw r;
    for (size_t i = 0; i <= kMaxCapabilities; ++i) r.caps.push_back("c");
    CHECK(decode_bytes(build(r)) == DecodeError::too_many);
  }
  SUBCASE("claims") {
    Raw r;
    for (size_t i = 0; i <= kMaxClaims; ++i) r.claims.push_back({"r" + std::to_string(i), 1});
    CHECK(decode_bytes(build(r)) == DecodeError::too_many);
  }
  SUBCASE("a count far beyond the frame does not allocate") {
    Raw r;
    r.claim_count = V(uint64_t{1} << 50);
    CHECK(decode_bytes(build(r)) == DecodeError::too_many);
    r = Raw{};
    r.cap_count = V::raw(run(0xFF, 12));
    CHECK(decode_bytes(build(r)) == DecodeError::too_many);
  }
  SUBCASE("a count above what follows is truncated") {
    Raw r;
    r.cap_count = V(3);
    r.caps = {"a"};
    // the remaining bytes are read as capabilities, then the frame runs out
    CHECK(decode_bytes(build(r)) == DecodeError::truncated);
  }
}

// Which numeric field overflows, and how.
struct NumberCase {
  const char* name;
  void (*apply)(Raw&);
};

const NumberCase kNumberOverLimit[] = {
    {"generation > UINT32_MAX", [](Raw& r) { r.generation = uint64_t{UINT32_MAX} + 1; }},
    {"start_ms > kMaxEpoch", [](Raw& r) { r.start_ms = kMaxEpoch + 1; }},
    {"tick_seq > kMaxEpoch", [](Raw& r) { r.tick_seq = kMaxEpoch + 1; }},
    {"refresh_ms > UINT32_MAX", [](Raw& r) { r.refresh_ms = uint64_t{UINT32_MAX} + 1; }},
    {"claim epoch > kMaxEpoch", [](Raw& r) { r.claims = {{"feed", kMaxEpoch + 1}}; }},
    {"claim epoch = UINT64_MAX", [](Raw& r) { r.claims = {{"feed", UINT64_MAX}}; }},
};

const NumberCase kVarintOverflow[] = {
    {"generation: 10 continuation bytes", [](Raw& r) { r.generation = V::raw(run(0x80, 10)); }},
    {"start_ms: 10 continuation bytes + end", [](Raw& r) {
       Bytes b = run(0x80, 10);
       b.push_back(0x01);
       r.start_ms = V::raw(b);
     }},
    {"tick_seq: 11 x 0xFF + end", [](Raw& r) {
       Bytes b = run(0xFF, 11);
       b.push_back(0x7F);
       r.tick_seq = V::raw(b);
     }},
    {"refresh_ms: 10 continuation bytes + end", [](Raw& r) {
       Bytes b = run(0x80, 10);
       b.push_back(0x00);
       r.refresh_ms = V::raw(b);
     }},
    {"claim epoch: 10 continuation bytes + end", [](Raw& r) {
       Bytes b = run(0x81, 10);
       b.push_back(0x00);
       r.claims = {{"feed", V::raw(b)}};
     }},
};

TEST_CASE("wire: numbers above their limit are rejected") {
  for (const auto& c : kNumberOverLimit) {
    CAPTURE(std::string(c.name));
    Raw r;
    c.apply(r);
    DecodeError e = decode_bytes(build(r));
    CAPTURE(std::string(to_string(e)));
    CHECK(is_malformed(e));
  }
}

TEST_CASE("wire: varints with 10+ continuation bytes are rejected") {
  for (const auto& c : kVarintOverflow) {
    CAPTURE(std::string(c.name));
    Raw r;
    c.apply(r);
    Bytes b = build(r);
    DecodeError e = decode_bytes(b);
    CAPTURE(std::string(to_string(e)));
    CHECK(is_malformed(e));
  }
}

// Regression: an overflowing numeric field was reported as bad_length or too_many (a
// sticky bad_number was rewritten by the next string or count read).
TEST_CASE("wire: a number over its limit is reported as bad_number") {
  for (const auto& c : kNumberOverLimit) {
    CAPTURE(std::string(c.name));
    Raw r;
    c.apply(r);
    DecodeError e = decode_bytes(build(r));
    CAPTURE(std::string(to_string(e)));
    CHECK(e == DecodeError::bad_number);
  }
  for (const auto& c : kVarintOverflow) {
    CAPTURE(std::string(c.name));
    Raw r;
    c.apply(r);
    DecodeError e = decode_bytes(build(r));
    CAPTURE(std::string(to_string(e)));
    CHECK(e == DecodeError::bad_number);
  }
}

// At shift 63 only the lowest payload bit of the 10th byte fits: 9 x 0x80 + 0x02 (the
// value 2^64) must not wrap to 0. An overlong encoding (a trailing zero group) is
// rejected too, so every number has one encoding.
TEST_CASE("wire: a varint whose value does not fit 64 bits is rejected") {
  Bytes wraps_to_zero = run(0x80, 9);
  wraps_to_zero.push_back(0x02);
  Raw r;
  r.tick_seq = V::raw(wraps_to_zero);
  Frame f;
  DecodeError e = decode_copy(build(r), f);
  CAPTURE(std::string(to_string(e)));
  CAPTURE(f.tick_seq);
  CHECK(e == DecodeError::bad_number);
  Raw overlong;
  overlong.tick_seq = V::raw(Bytes{0x85, 0x00});
  CHECK(decode_bytes(build(overlong)) == DecodeError::bad_number);
}

TEST_CASE("wire: trailing bytes") {
  for (Kind k : kAllKinds) {
    Bytes b = encode(full_frame(k));
    b.push_back(0x00);
    CHECK(decode_bytes(b) == DecodeError::trailing_bytes);
    b.back() = 0xBA;
    CHECK(decode_bytes(b) == DecodeError::trailing_bytes);
  }
  Bytes twice = encode(full_frame(Kind::presence));
  Bytes second = twice;
  twice.insert(twice.end(), second.begin(), second.end());
  CHECK(decode_bytes(twice) == DecodeError::trailing_bytes);
}

TEST_CASE("wire: every DecodeError has a distinct name") {
  std::vector<std::string> names;
  for (int e = 0; e <= static_cast<int>(DecodeError::trailing_bytes); ++e) {
    std::string n = to_string(static_cast<DecodeError>(e));
    CHECK(n != "?");
    for (const auto& m : names) CHECK(m != n);
    names.push_back(n);
  }
  CHECK(std::string(to_string(DecodeError::ok)) == "ok");
}

// ---------------------------------------------------------------------------------------
// Robustness: mutated frames never crash, and whatever decodes re-encodes to itself.

TEST_CASE("wire: random mutations of valid frames never crash and stay consistent") {
  Random rng(0xBA70);
  size_t decoded = 0, rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    Bytes b = encode(full_frame(kAllKinds[round % 5]));
    int edits = 1 + static_cast<int>(rng.next() % 4);
    for (int i = 0; i < edits; ++i) {
      switch (rng.next() % 4) {
        case 0: b[rng.next() % b.size()] ^= static_cast<uint8_t>(1u << (rng.next() % 8)); break;
        case 1: b[rng.next() % b.size()] = static_cast<uint8_t>(rng.next()); break;
        case 2: b.insert(b.begin() + static_cast<std::ptrdiff_t>(rng.next() % b.size()),
                         static_cast<uint8_t>(rng.next())); break;
        case 3: if (b.size() > 1) b.erase(b.begin() + static_cast<std::ptrdiff_t>(rng.next() % b.size())); break;
      }
    }
    Frame f;
    DecodeError e = decode_copy(b, f);
    if (e != DecodeError::ok) {
      ++rejected;
      continue;
    }
    ++decoded;
    // Whatever is accepted is within limits, so it survives a re-encode unchanged.
    CHECK(!f.sender.empty());
    CHECK(f.sender.size() <= kMaxIdBytes);
    CHECK(static_cast<uint8_t>(f.lifecycle) < kLifecycleCount);
    CHECK(f.capabilities.size() <= kMaxCapabilities);
    CHECK(f.claims.size() <= kMaxClaims);
    for (const auto& c : f.claims) CHECK(c.epoch <= kMaxEpoch);
    Frame again;
    REQUIRE(decode_copy(encode(f), again) == DecodeError::ok);
    check_same(f, again);
  }
  MESSAGE("mutations: " << decoded << " decoded, " << rejected << " rejected");
  CHECK(rejected > 0);
  CHECK(decoded > 0);
}

// ---------------------------------------------------------------------------------------
// The encoder clamps fields over their limits instead of emitting frames peers drop.

TEST_CASE("wire: the encoder clamps over-long strings to their limits") {
  Frame in = full_frame(Kind::abdicate_request);
  in.sender = std::string(kMaxIdBytes, 's') + "EXTRA";
  in.app_version = std::string(kMaxVersionBytes, 'v') + "EXTRA";
  in.capabilities = {std::string(kMaxCapabilityBytes, 'c') + "EXTRA"};
  in.claims = {{std::string(kMaxResourceBytes, 'r') + "EXTRA", 9}};
  in.subject = std::string(kMaxResourceBytes, 'u') + "EXTRA";
  in.target = std::string(kMaxIdBytes, 't') + "EXTRA";
  Frame out = round_trip(in);
  CHECK(out.sender == std::string(kMaxIdBytes, 's'));
  CHECK(out.app_version == std::string(kMaxVersionBytes, 'v'));
  CHECK(out.capabilities == Capabilities{std::string(kMaxCapabilityBytes, 'c')});
  REQUIRE(out.claims.size() == 1);
  CHECK(out.claims[0].resource == std::string(kMaxResourceBytes, 'r'));
  CHECK(out.claims[0].epoch == 9);
  CHECK(out.subject == std::string(kMaxResourceBytes, 'u'));
  CHECK(out.target == std::string(kMaxIdBytes, 't'));
}

TEST_CASE("wire: the encoder clamps counts and claim epochs") {
  Frame in = full_frame(Kind::heartbeat);
  in.capabilities.clear();
  in.claims.clear();
  for (size_t i = 0; i < kMaxCapabilities + 4; ++i) in.capabilities.push_back("c" + std::to_string(i));
  for (size_t i = 0; i < kMaxClaims + 4; ++i) in.claims.push_back({"r" + std::to_string(i), i});
  in.claims[0].epoch = UINT64_MAX;
  in.claims[1].epoch = kMaxEpoch + 1;
  Frame out = round_trip(in);
  REQUIRE(out.capabilities.size() == kMaxCapabilities);
  CHECK(out.capabilities.front() == "c0");
  CHECK(out.capabilities.back() == "c" + std::to_string(kMaxCapabilities - 1));
  REQUIRE(out.claims.size() == kMaxClaims);
  CHECK(out.claims[0].epoch == kMaxEpoch);
  CHECK(out.claims[1].epoch == kMaxEpoch);
  CHECK(out.claims[2].epoch == 2);
  CHECK(out.claims.back().resource == "r" + std::to_string(kMaxClaims - 1));
}

// Regression: start_ms and tick_seq were written unclamped, so a sender with a bogus
// start time emitted frames every peer dropped.
TEST_CASE("wire: the encoder clamps start_ms and tick_seq to kMaxEpoch") {
  Frame in = full_frame(Kind::heartbeat);
  in.start_ms = kMaxEpoch + 1;
  in.tick_seq = UINT64_MAX;
  Bytes b = encode(in);
  Frame out;
  DecodeError e = decode_copy(b, out);
  CAPTURE(std::string(to_string(e)));
  REQUIRE(e == DecodeError::ok);
  CHECK(out.start_ms == kMaxEpoch);
  CHECK(out.tick_seq == kMaxEpoch);
}

// Regression: with the old limits the largest clamped frame was about 2.5 KB, so a tab
// with many capabilities or claims was invisible to its peers (frames dropped as
// oversized). Every field here is at (or clamped to) its limit.
TEST_CASE("wire: any frame the encoder emits fits kMaxFrameBytes") {
  Frame in = full_frame(Kind::heartbeat);
  in.sender = std::string(kMaxIdBytes + 10, 's');
  in.app_version = std::string(kMaxVersionBytes + 10, 'v');
  in.generation = UINT32_MAX;
  in.refresh_ms = UINT32_MAX;
  in.start_ms = UINT64_MAX;
  in.tick_seq = UINT64_MAX;
  in.capabilities.clear();
  for (size_t i = 0; i < kMaxCapabilities + 5; ++i)
    in.capabilities.push_back(std::string(kMaxCapabilityBytes + 10, static_cast<char>('a' + i)));
  in.claims.clear();
  for (size_t i = 0; i < kMaxClaims + 5; ++i)
    in.claims.push_back({std::string(kMaxResourceBytes + 10, static_cast<char>('a' + i)), UINT64_MAX});
  in.subject = std::string(kMaxResourceBytes + 10, 'u');
  in.target = std::string(kMaxIdBytes + 10, 't');
  Bytes b = encode(in);
  MESSAGE("worst-case clamped frame: " << b.size() << " bytes (limit " << kMaxFrameBytes << ")");
  CHECK(b.size() <= kMaxFrameBytes);
  Frame out;
  REQUIRE(decode_copy(b, out) == DecodeError::ok);
  CHECK(out.capabilities.size() == kMaxCapabilities);
  CHECK(out.claims.size() == kMaxClaims);
  CHECK(out.capabilities.front().size() == kMaxCapabilityBytes);
  CHECK(out.claims.front().resource.size() == kMaxResourceBytes);
  // Whatever was clamped, the result is a fixed point of the codec.
  CHECK(Bytes(encode(out)) == b);
}
