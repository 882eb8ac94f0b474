// The glue's byte protocol (wasm/boundary.h) across a newer app version's veto that ends
// with time alone: the views the glue was told stay the core's whatever step comes next,
// since a view tells only state a step sets (boundary.cc, same_view). A view field that
// changed with a frame of no effect, or with time alone, would leave the glue a stale view
// (telling `eligible` fails both checks of views_told below).
#include <doctest/doctest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "boundary.h"
#include "core/election_helpers.h"

using namespace baton;
using namespace baton::test;

namespace {

// An event record as the glue encodes it: header, kind, both clocks, then its fields.
struct Record {
  std::vector<uint8_t> bytes{boundary::kMagic, boundary::kVersion};
  Record(EventKind kind, double now) {
    u8(static_cast<uint8_t>(kind));
    f64(now);
    f64(now);
  }
  void u8(uint8_t v) { bytes.push_back(v); }
  void u16(size_t v) {
    u8(static_cast<uint8_t>(v));
    u8(static_cast<uint8_t>(v >> 8));
  }
  void f64(double v) {
    uint8_t raw[8];
    std::memcpy(raw, &v, 8);
    bytes.insert(bytes.end(), raw, raw + 8);
  }
  void data(const uint8_t* p, size_t n) {
    u16(n);
    bytes.insert(bytes.end(), p, p + n);
  }
  void str(std::string_view s) { data(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
};

int step(boundary::Session& s, const Record& r) {
  static std::vector<uint8_t> out(boundary::kBufferBytes);
  return s.step(r.bytes.data(), r.bytes.size(), out.data(), out.size());
}

}  // namespace

TEST_CASE("boundary: a veto that ends with time alone leaves the glue no stale view") {
  boundary::Session a(config("a"));
  Record join(EventKind::join, 0);
  join.str("ws");
  join.str("");
  join.u8(static_cast<uint8_t>(boundary::JoinFlag::allow_hidden) |
          static_cast<uint8_t>(boundary::JoinFlag::newest_app_only));
  REQUIRE(step(a, join) > 0);

  // A newer app version that made progress of its own: it vetoes for one suspect timeout.
  wire::Frame newer = peer_frame("m");
  newer.app_version = "999";
  for (uint64_t tick = 1; tick <= 2; ++tick) {
    newer.tick_seq = tick;
    wire::FrameBytes frame = wire::encode(newer);
    Record message(EventKind::message, static_cast<double>(tick));
    message.data(frame.data(), frame.size());
    REQUIRE(step(a, message) > 0);
  }
  REQUIRE(!a.election().view("ws").eligible);
  CHECK(a.views_told());
  // A step that compares every view: the glue's copies are the core's as of the veto.
  REQUIRE(step(a, Record(EventKind::online, 3)) > 0);
  REQUIRE(a.views_told());

  // The veto ends with no frame; the next step is a fence check, which compares no view.
  Record check(EventKind::fence_check, 4 + a.election().config().suspect_ms);
  check.str("ws");
  check.f64(1);
  REQUIRE(step(a, check) > 0);
  CHECK(a.election().view("ws").eligible);
  CHECK(a.views_told());
}
