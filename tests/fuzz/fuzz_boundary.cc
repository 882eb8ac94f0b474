// libFuzzer target: the byte protocol between the glue and the core (wasm/boundary.h).
// The input is a sequence of records, each a length byte, a byte choosing step, ask or a
// fence query (of a fence of its own), then the record's bytes (mutated freely). Checks: nothing crashes or trips a sanitizer;
// an accepted record answers with a versioned record; a record with one byte more is
// refused (no trailing bytes), and so is one with a byte less; after every step the views
// the glue was told are the core's (a step tells only those that may have changed).
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

enum class Entry { step, ask, fence };

// Feeds one record; returns the answer's length or -1.
int feed(Session& s, Fence& fence, Entry entry, const std::vector<uint8_t>& in) {
  switch (entry) {
    case Entry::step: return s.step(in.data(), in.size(), out.data(), out.size());
    case Entry::ask: return s.ask(in.data(), in.size(), out.data(), out.size());
    case Entry::fence: break;
  }
  return ask_fence(fence, in.data(), in.size(), out.data(), out.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Config config;
  config.id = "fuzz";
  Session session(config);
  Fence fence;
  size_t i = 0;
  while (i + 2 <= size) {
    size_t len = data[i];
    auto entry = static_cast<Entry>(data[i + 1] % 3);
    i += 2;
    if (len > size - i) len = size - i;
    std::vector<uint8_t> record(data + i, data + i + len);
    i += len;

    // Trailing or missing bytes are refused before anything changes, so these probes are
    // safe to make on the same session.
    std::vector<uint8_t> longer = record;
    longer.push_back(0);
    int refused_longer = feed(session, fence, entry, longer);
    int refused_shorter = record.empty() ? -1 : feed(session, fence, entry, std::vector<uint8_t>(record.begin(), record.end() - 1));
    int n = feed(session, fence, entry, record);
    if (n < 0) continue;
    require(n >= 2 && out[0] == kMagic && out[1] == kVersion, "an accepted record answered without the header");
    require(refused_longer < 0, "a record with a trailing byte was accepted");
    require(refused_shorter < 0, "a record missing its last byte was accepted");
    require(entry != Entry::step || session.views_told(), "a step left the glue a stale view");
  }
  return 0;
}
