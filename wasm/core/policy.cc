#include "policy.h"

#include <algorithm>
#include <cstdlib>

namespace baton {
namespace {

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

namespace {

// Compares dot-separated parts: numbers as numbers, below text, text as text.
int compare_parts(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    size_t ie = a.find('.', i), je = b.find('.', j);
    if (ie == std::string::npos) ie = a.size();
    if (je == std::string::npos) je = b.size();
    std::string pa = i < a.size() ? a.substr(i, ie - i) : "0";
    std::string pb = j < b.size() ? b.substr(j, je - j) : "0";
    bool na = !pa.empty() && pa.find_first_not_of("0123456789") == std::string::npos;
    bool nb = !pb.empty() && pb.find_first_not_of("0123456789") == std::string::npos;
    // Numeric parts compare as numbers and rank below textual parts, which compare as
    // text. That keeps the order transitive.
    int c;
    if (na && nb) {
      unsigned long long x = std::strtoull(pa.c_str(), nullptr, 10);
      unsigned long long y = std::strtoull(pb.c_str(), nullptr, 10);
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
int compare_versions(const std::string& a, const std::string& b) {
  size_t da = a.find('-'), db = b.find('-');
  int core = compare_parts(a.substr(0, da), b.substr(0, db));
  if (core != 0) return core;
  bool pa = da != std::string::npos, pb = db != std::string::npos;
  if (pa != pb) return pa ? -1 : 1;
  return pa ? compare_parts(a.substr(da + 1), b.substr(db + 1)) : 0;
}

bool is_eligible(const CandidateView& c, const Policy& p, const std::string& resource,
                 const std::string& newest_app_version) {
  (void)resource;
  if (c.liveness != Liveness::alive) return false;
  if (c.lifecycle == Lifecycle::closing || c.lifecycle == Lifecycle::frozen) return false;
  if (!p.allow_hidden && c.lifecycle == Lifecycle::hidden) return false;
  if (p.requires_network && !c.online) return false;
  if (!p.required_capability.empty() && !has(*c.capabilities, p.required_capability)) return false;
  if (p.newest_app_only && compare_versions(*c.app_version, newest_app_version) < 0) return false;
  return true;
}

int rank_score(const CandidateView& c, const std::string& resource, double now_ms) {
  int score = 0;
  switch (c.lifecycle) {
    case Lifecycle::active: score += 100; break;
    case Lifecycle::hidden: score += 40; break;
    case Lifecycle::restored: score += 20; break;
    default: break;
  }
  if (has(*c.capabilities, resource + ".preferred")) score += 30;
  // Older tabs are slightly preferred (stable), but never over lifecycle.
  double age_minutes = (now_ms - c.start_ms) / 60000.0;
  if (age_minutes > 0) score += static_cast<int>(std::min(20.0, age_minutes));
  return score;
}

bool ranks_before(const CandidateView& a, const CandidateView& b, const std::string& resource,
                  double now_ms) {
  int sa = rank_score(a, resource, now_ms), sb = rank_score(b, resource, now_ms);
  if (sa != sb) return sa > sb;
  return *a.id < *b.id;
}

}  // namespace baton
