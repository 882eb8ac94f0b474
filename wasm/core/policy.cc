#include "policy.h"

#include <algorithm>

namespace baton {
namespace {

bool has(const Capabilities& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// True for "<resource>.preferred", without building that string on every comparison.
bool prefers(std::string_view capability, std::string_view resource) {
  constexpr std::string_view kSuffix = ".preferred";
  return capability.size() == resource.size() + kSuffix.size() && capability.substr(0, resource.size()) == resource &&
         capability.substr(resource.size()) == kSuffix;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// A run of digits as a number, saturating (as strtoull does) instead of wrapping.
unsigned long long number(std::string_view digits) {
  constexpr unsigned long long kMax = ~0ull;
  unsigned long long v = 0;
  for (char ch : digits) {
    unsigned d = static_cast<unsigned>(ch - '0');
    if (v > (kMax - d) / 10) return kMax;
    v = v * 10 + d;
  }
  return v;
}

// Where `ch` is in `s` from `from` on, else s.size(). A plain loop: string_view::find
// brings libc's word-at-a-time memchr into the wasm, 256 B for strings of a few bytes.
size_t position(std::string_view s, char ch, size_t from = 0) {
  while (from < s.size() && s[from] != ch) ++from;
  return from;
}

// A part one version has and the other has not compares as this ("1" == "1.0").
constexpr std::string_view kMissingPart = "0";

// Compares dot-separated parts: numbers as numbers, below text, text as text.
int compare_parts(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    size_t ie = position(a, '.', i), je = position(b, '.', j);
    std::string_view pa = i < a.size() ? a.substr(i, ie - i) : kMissingPart;
    std::string_view pb = j < b.size() ? b.substr(j, je - j) : kMissingPart;
    bool na = all_digits(pa);
    bool nb = all_digits(pb);
    // Numeric parts compare as numbers and rank below textual parts, which compare as
    // text. That keeps the order transitive.
    int c;
    if (na && nb) {
      unsigned long long x = number(pa), y = number(pb);
      c = x < y ? -1 : x > y ? 1 : 0;
    } else if (na != nb) {
      c = na ? -1 : 1;
    } else {
      c = pa.compare(pb) < 0 ? -1 : pa.compare(pb) > 0 ? 1 : 0;
    }
    if (c != 0) return c;
    i = ie + 1;
    j = je + 1;
  }
  return 0;
}

}  // namespace

// As in semver, a pre-release ("2.0.0-rc.1") ranks below its release ("2.0.0").
int compare_versions(std::string_view a, std::string_view b) {
  size_t da = position(a, '-'), db = position(b, '-');
  int core = compare_parts(a.substr(0, da), b.substr(0, db));
  if (core != 0) return core;
  bool pa = da < a.size(), pb = db < b.size();
  if (pa != pb) return pa ? -1 : 1;
  return pa ? compare_parts(a.substr(da + 1), b.substr(db + 1)) : 0;
}

bool is_eligible(const CandidateView& c, const Policy& p, std::string_view resource, std::string_view newest_app_version) {
  (void)resource;
  if (c.liveness != Liveness::alive || c.observes_only) return false;
  if (c.lifecycle == Lifecycle::closing || c.lifecycle == Lifecycle::frozen) return false;
  if (!p.allow_hidden && c.lifecycle == Lifecycle::hidden) return false;
  if (p.requires_network && !c.online) return false;
  if (!p.required_capability.empty() && !has(*c.capabilities, p.required_capability)) return false;
  if (p.newest_app_only && compare_versions(c.app_version, newest_app_version) < 0) return false;
  return true;
}

int rank_score(const CandidateView& c, std::string_view resource, double wall_ms) {
  int score = 0;
  switch (c.lifecycle) {
    case Lifecycle::active: score += 100; break;
    case Lifecycle::hidden: score += 40; break;
    case Lifecycle::restored: score += 20; break;
    default: break;
  }
  if (std::any_of(c.capabilities->begin(), c.capabilities->end(),
                  [resource](const Capability& cap) { return prefers(cap, resource); })) {
    score += 30;
  }
  // Older tabs are slightly preferred (stable), but never over lifecycle.
  double age_minutes = (wall_ms - c.start_ms) / 60000.0;
  if (age_minutes > 0) score += static_cast<int>(std::min(20.0, age_minutes));
  return score;
}

bool ranks_before(const CandidateView& a, const CandidateView& b, std::string_view resource, double wall_ms) {
  int sa = rank_score(a, resource, wall_ms), sb = rank_score(b, resource, wall_ms);
  if (sa != sb) return sa > sb;
  return a.id < b.id;
}

}  // namespace baton
