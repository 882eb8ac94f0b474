// libFuzzer target: the byte protocol between the glue and the core (wasm/boundary.h).
// The input is a sequence of records, each a length byte, a byte choosing step or ask,
// then the record's bytes (mutated freely). Checks: nothing crashes or trips a sanitizer;
// an accepted record answers with a versioned record; a record with one byte more is
// refused (no trailing bytes), and so is one with a byte less.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "boundary.h"

using namespace baton;
using namespace baton::boundary;

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_boundary: %s\n", what);
    std::abort();
  }
}

std::vector<uint8_t> out(kBufferBytes);

// Feeds one record; returns the answer's length or -1.
int feed(Session& s, bool ask, const std::vector<uint8_t>& in) {
  return ask ? s.ask(in.data(), in.size(), out.data(), out.size()) : s.step(in.data(), in.size(), out.data(), out.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Config config;
  config.id = "fuzz";
  Session session(config);
  size_t i = 0;
  while (i + 2 <= size) {
    size_t len = data[i];
    bool ask = data[i + 1] & 1;
    i += 2;
    if (len > size - i) len = size - i;
    std::vector<uint8_t> record(data + i, data + i + len);
    i += len;

    // Trailing or missing bytes are refused before anything changes, so these probes are
    // safe to make on the same session.
    std::vector<uint8_t> longer = record;
    longer.push_back(0);
    int refused_longer = feed(session, ask, longer);
    int refused_shorter = record.empty() ? -1 : feed(session, ask, std::vector<uint8_t>(record.begin(), record.end() - 1));
    int n = feed(session, ask, record);
    if (n < 0) continue;
    require(n >= 2 && out[0] == kMagic && out[1] == kVersion, "an accepted record answered without the header");
    require(refused_longer < 0, "a record with a trailing byte was accepted");
    require(refused_shorter < 0, "a record missing its last byte was accepted");
  }
  return 0;
}
