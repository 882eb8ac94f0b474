// Per-resource policy: who may lead (eligibility) and who should (ranking).
// Ranking is only a hint that keeps tabs from racing; the authority decides.
#pragma once
#include <string_view>

#include "types.h"
#include "wire.h"

namespace baton {

struct Policy {
  Capability required_capability;   // empty: any tab
  bool allow_hidden = true;         // false: a hidden tab may not lead
  bool prefer_visible = false;      // a visible tab takes over from a hidden leader
  bool requires_network = false;    // an offline tab may not lead
  bool newest_app_only = true;      // tabs running older app code yield to newer ones
  bool observe_only = false;        // this tab follows the election and never runs in it (the
                                    // rest of the policy still judges the other tabs)
};

// What eligibility and ranking need to know about one tab (this one or another).
struct CandidateView {
  std::string_view id;
  Lifecycle lifecycle;
  Liveness liveness;
  const Capabilities* capabilities;
  std::string_view app_version;
  double start_ms;
  bool online;
  // Another tab that only observes every resource it joined (wire::kObservesOnly): never
  // eligible, so it neither ranks, nor is named successor, nor vetoes by its app version.
  // This tab's own view leaves it false: its policy per resource says whether it observes.
  bool observes_only;
};

// Compares dotted versions ("1.10.2" > "1.9"): numeric parts as numbers, below textual
// parts, which compare as text; a pre-release ("2.0.0-rc.1") ranks below its release.
int compare_versions(std::string_view a, std::string_view b);

bool is_eligible(const CandidateView& c, const Policy& p, std::string_view resource,
                 std::string_view newest_app_version);

// Higher is better: lifecycle, a `<resource>.preferred` capability, a bounded age bonus
// (by the wall clock: start times come from the other tabs).
int rank_score(const CandidateView& c, std::string_view resource, double wall_ms);

// True when a ranks before b; ties broken by id so every tab agrees.
bool ranks_before(const CandidateView& a, const CandidateView& b, std::string_view resource, double wall_ms);

}  // namespace baton
