// Prints js-glue/src/constants.js from the C++ core: every enum that crosses the
// boundary (values and names), the metrics' counter names, the wire limits and the timing
// defaults. The C++ headers are the one source; ctest's constants-js fails when the JS file
// drifts from them.
//
//   constants_js FILE            exits 1 (and says so) if FILE differs
//   constants_js --write FILE    writes FILE
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/election.h"
#include "core/wire.h"
#include "boundary.h"
#include "names.h"

using namespace baton;

namespace {

// An enum as one export per value, named after the enum and the enumerator
// (AUTHORITY_WEB_LOCKS = 0), then its names by value (the dashed spelling that traces,
// metrics and the public API use). One export each rather than an object: a bundler
// inlines the values the glue uses and drops the rest.
template <typename E>
std::string enumeration(const char* prefix, const char* comment) {
  std::string values, names;
  int last = -1;
  for (int v = 0; v < 256; ++v) {
    std::string name = to_string(static_cast<E>(v));
    if (name == "?") continue;
    std::string id = name;
    for (char& c : id) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    values += std::string("export const ") + prefix + "_" + id + " = " + std::to_string(v) + ";\n";
    for (int gap = last + 1; gap < v; ++gap) names += "  null,\n";
    names += "  '" + name + "',\n";
    last = v;
  }
  return std::string("/** ") + comment + " */\n" + values + "export const " + prefix + "_NAMES = [\n" + names +
         "];\n\n";
}

std::string number(const char* name, double value, const char* comment) {
  std::ostringstream s;
  s << "  " << name << ": " << value << ", // " << comment << "\n";
  return s.str();
}

std::string constant(const char* name, double value, const char* comment) {
  std::ostringstream s;
  s.precision(17);
  s << "export const " << name << " = " << value << "; // " << comment << "\n";
  return s.str();
}

std::string render() {
  std::string js =
      "// Generated from the C++ core by tests/constants/constants_js.cc: do not edit.\n"
      "// Regenerate: build/native/tests/constants_js --write js-glue/src/constants.js\n\n";
  js += enumeration<Authority>("AUTHORITY", "Authority in wasm/core/types.h.");
  js += enumeration<Lifecycle>("LIFECYCLE", "Lifecycle in wasm/core/types.h.");
  js += enumeration<Liveness>("LIVENESS", "Liveness in wasm/core/types.h.");
  js += enumeration<Role>("ROLE", "Role in wasm/core/types.h.");
  js += enumeration<Reason>("REASON", "Reason in wasm/core/types.h.");
  js += enumeration<Degraded>("DEGRADED", "Degraded in wasm/core/types.h.");
  js += enumeration<EventKind>("EVENT_KIND", "EventKind in wasm/core/election.h.");
  js += enumeration<EffectKind>("EFFECT_KIND", "EffectKind in wasm/core/election.h.");
  js += enumeration<LockMode>("LOCK_MODE", "LockMode in wasm/core/election.h.");
  js += enumeration<wire::Kind>("FRAME_KIND", "wire::Kind in wasm/core/wire.h.");

  js += "/** The counters of the core's metrics, in the order the boundary writes them (BATON_COUNTERS in wasm/boundary.h). */\n";
  js += "export const COUNTER_NAMES = [\n";
#define BATON_COUNTER_NAME(field, name) js += "  '" name "',\n";
  BATON_COUNTERS(BATON_COUNTER_NAME)
#undef BATON_COUNTER_NAME
  js += "];\n\n";

  js += "/** What the wire format carries (wasm/core/wire.h); longer names are rejected up front. */\n";
  js += "export const LIMITS = {\n";
  js += number("idBytes", wire::kMaxIdBytes, "kMaxIdBytes");
  js += number("resourceBytes", wire::kMaxResourceBytes, "kMaxResourceBytes");
  js += number("capabilityBytes", wire::kMaxCapabilityBytes, "kMaxCapabilityBytes");
  js += number("capabilities", wire::kMaxCapabilities, "kMaxCapabilities");
  js += number("versionBytes", wire::kMaxVersionBytes, "kMaxVersionBytes");
  js += number("claims", wire::kMaxClaims, "kMaxClaims: resources one tab can lead at once");
  js += "};\n";
  js += constant("PROTOCOL_VERSION", wire::kProtocolVersion, "wire::kProtocolVersion");
  js += constant("MAX_FRAME_BYTES", wire::kMaxFrameBytes, "wire::kMaxFrameBytes");
  js += constant("MAX_EPOCH", static_cast<double>(kMaxEpoch), "kMaxEpoch: the largest epoch exact as a double");
  js += constant("PLAUSIBLE_EPOCH", static_cast<double>(kPlausibleEpoch), "kPlausibleEpoch: claims at or above it are forged");

  // One export each, so that the bundle carries only the defaults the glue uses.
  Config c;
  js += "\n// Config's defaults in wasm/core/election.h.\n";
  js += constant("DEFAULT_HEARTBEAT_MS", c.heartbeat_ms, "heartbeat_ms");
  js += constant("DEFAULT_SUSPECT_MS", c.suspect_ms, "suspect_ms");
  js += constant("DEFAULT_LEASE_MS", c.lease_ms, "lease_ms");
  js += constant("DEFAULT_STEAL_GRACE_MS", c.steal_grace_ms, "steal_grace_ms");
  js += constant("DEFAULT_RANK_STAGGER_MS", c.rank_stagger_ms, "rank_stagger_ms");
  js += constant("DEFAULT_TRIGGER_JITTER_MS", c.trigger_jitter_ms, "trigger_jitter_ms");
  js += constant("DEFAULT_BACKOFF_BASE_MS", c.backoff_base_ms, "backoff_base_ms");
  js += constant("DEFAULT_BACKOFF_MAX_MS", c.backoff_max_ms, "backoff_max_ms");
  js += constant("DEFAULT_LOG_CAPACITY", static_cast<double>(kLogCapacity), "kLogCapacity");
  return js;
}

}  // namespace

int main(int argc, char** argv) {
  bool write = argc == 3 && !std::strcmp(argv[1], "--write");
  if (argc != 2 && !write) {
    std::fprintf(stderr, "usage: constants_js [--write] FILE\n");
    return 2;
  }
  const char* path = argv[argc - 1];
  std::string want = render();
  if (write) {
    std::ofstream(path, std::ios::binary) << want;
    return 0;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream have;
  have << in.rdbuf();
  if (have.str() == want) return 0;
  std::fprintf(stderr,
               "%s differs from the C++ core's enums, limits and defaults.\n"
               "Regenerate it: build/native/tests/constants_js --write %s\n",
               path, path);
  return 1;
}
