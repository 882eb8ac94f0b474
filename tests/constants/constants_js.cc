// Prints js-glue/src/constants.js from the C++ core: every enum that crosses the
// boundary (values and names), the numbers of the boundary's records (header, queries,
// join flags, field length), the metrics' counter names, the wire limits and the timing
// defaults. The C++ headers are the one source; ctest's constants-js fails when the JS file
// drifts from them.
//
//   constants_js FILE            exits 1 (and says so) if FILE or its sibling differs
//   constants_js --write FILE    writes FILE (constants.js) and, beside it,
//                                boundary-constants.js (the byte protocol's numbers)
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
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
// drops the values the glue does not use.
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

// Numbers of the boundary's protocol that have no names in C++ (to_string): one export per
// value, named here, valued by the C++ enum.
struct Value {
  const char* name;
  int value;
};
template <typename E>
Value value(const char* name, E v) {
  return {name, static_cast<int>(v)};
}
std::string values(const char* comment, std::initializer_list<Value> list) {
  std::string js = std::string("/** ") + comment + " */\n";
  for (const Value& v : list) js += std::string("export const ") + v.name + " = " + std::to_string(v.value) + ";\n";
  return js + "\n";
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

const char* const kHeader =
    "// Generated from the C++ core by tests/constants/constants_js.cc: do not edit.\n"
    "// Regenerate: build/native/tests/constants_js --write js-glue/src/constants.js\n\n";

// constants.js: what the core and the glue share.
std::string render_core() {
  std::string js = kHeader;
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
  js += constant("DEFAULT_STORAGE_TIMEOUT_MS", c.storage_timeout_ms, "storage_timeout_ms");
  js += constant("DEFAULT_LOG_CAPACITY", static_cast<double>(kLogCapacity), "kLogCapacity");
  // The glue scales the suspect timeout with a heartbeat given without one.
  js += constant("SUSPECT_HEARTBEATS", c.suspect_ms / c.heartbeat_ms,
                 "suspect_ms / heartbeat_ms: the suspect timeout in heartbeats");
  return js;
}

// boundary-constants.js, beside constants.js: the numbers of the byte protocol, which only
// core.js reads. A module of their own, so that a bundler that splits chunks keeps them in
// core.js's chunk rather than importing each one from a chunk the app's chunks share.
std::string render_boundary() {
  using boundary::FenceQuery;
  using boundary::JoinFlag;
  using boundary::Query;
  std::string js = kHeader;
  js += values("The record header in wasm/boundary.h (kMagic, kVersion), and its longest string or message (kMaxFieldBytes).",
               {value("RECORD_MAGIC", boundary::kMagic), value("RECORD_VERSION", boundary::kVersion),
                value("RECORD_FIELD_BYTES", boundary::kMaxFieldBytes)});
  js += values("Query in wasm/boundary.h.", {value("QUERY_PRESENCE", Query::presence), value("QUERY_METRICS", Query::metrics),
                                             value("QUERY_LOG", Query::log)});
  js += values("FenceQuery in wasm/boundary.h.",
               {value("FENCE_QUERY_ADMIT", FenceQuery::admit), value("FENCE_QUERY_HIGHEST", FenceQuery::highest)});
  js += values("JoinFlag in wasm/boundary.h: a join's policy, one bit each.",
               {value("JOIN_ALLOW_HIDDEN", JoinFlag::allow_hidden), value("JOIN_PREFER_VISIBLE", JoinFlag::prefer_visible),
                value("JOIN_REQUIRES_NETWORK", JoinFlag::requires_network),
                value("JOIN_NEWEST_APP_ONLY", JoinFlag::newest_app_only), value("JOIN_OBSERVE_ONLY", JoinFlag::observe_only)});
  js.pop_back();  // no blank line at the end
  return js;
}

// Writes `want` to `path`, or checks that `path` holds it; false when it differs.
bool output(const std::string& path, const std::string& want, bool write) {
  if (write) {
    std::ofstream(path, std::ios::binary) << want;
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream have;
  have << in.rdbuf();
  if (have.str() == want) return true;
  std::fprintf(stderr, "%s differs from the C++ core's enums, limits and defaults.\n", path.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool write = argc == 3 && !std::strcmp(argv[1], "--write");
  if (argc != 2 && !write) {
    std::fprintf(stderr, "usage: constants_js [--write] FILE\n");
    return 2;
  }
  // FILE is constants.js; boundary-constants.js is beside it.
  std::string path = argv[argc - 1];
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  bool same = output(path, render_core(), write);
  same = output(dir + "boundary-constants.js", render_boundary(), write) && same;
  if (same) return 0;
  std::fprintf(stderr, "Regenerate: build/native/tests/constants_js --write %s\n", path.c_str());
  return 1;
}
