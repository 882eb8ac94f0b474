// Policy: version comparison, eligibility, ranking.
//
// Invariants served: 1 (ranking is a deterministic hint every tab agrees on) and 3
// (eligibility decides who may compete at all).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/policy.h"
#include "core/types.h"

using namespace baton;

namespace {

constexpr double kMinute = 60000.0;

// Owns what a CandidateView points to.
struct Tab {
  std::string id = "tab";
  Lifecycle lifecycle = Lifecycle::active;
  Liveness liveness = Liveness::alive;
  Capabilities capabilities;
  std::string app_version = "1.0";
  double start_ms = 0;
  bool online = true;
  bool observes_only = false;

  CandidateView view() const {
    return {id, lifecycle, liveness, &capabilities, app_version, start_ms, online, observes_only};
  }
};

int sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

// ---------------------------------------------------------------------------------------
// compare_versions

TEST_CASE("policy: compare_versions orders dotted numeric versions numerically") {
  CHECK(compare_versions("1.10", "1.9") > 0);
  CHECK(compare_versions("1.9", "1.10") < 0);
  CHECK(compare_versions("2", "1.99") > 0);
  CHECK(compare_versions("1.99", "2") < 0);
  CHECK(compare_versions("1.2.10", "1.2.9") > 0);
  CHECK(compare_versions("10.0", "9.9.9") > 0);
  CHECK(compare_versions("1.2.3", "1.2.3") == 0);
}

TEST_CASE("policy: compare_versions treats missing parts as zero") {
  CHECK(compare_versions("1.0", "1") == 0);
  CHECK(compare_versions("1", "1.0.0") == 0);
  CHECK(compare_versions("1.0.1", "1") > 0);
  CHECK(compare_versions("1", "1.0.1") < 0);
  CHECK(compare_versions("", "0") == 0);
  CHECK(compare_versions("", "") == 0);
  CHECK(compare_versions("0.1", "") > 0);
  CHECK(compare_versions("1.01", "1.1") == 0);  // leading zeros are numeric
}

TEST_CASE("policy: compare_versions compares non-numeric parts as text") {
  CHECK(compare_versions("1.beta", "1.alpha") > 0);
  CHECK(compare_versions("1.alpha", "1.beta") < 0);
  CHECK(compare_versions("1.rc", "1.rc") == 0);
  CHECK(compare_versions("abc", "abd") < 0);
  CHECK(compare_versions("2.0", "2.0.x") != 0);
}

TEST_CASE("policy: compare_versions ranks numeric parts below textual parts") {
  CHECK(compare_versions("1.10", "1.x") < 0);
  CHECK(compare_versions("1.x", "1.10") > 0);
  CHECK(compare_versions("1.2a", "1.10") > 0);  // "2a" is text, not the number 2
  CHECK(compare_versions("1.10a", "1.9") > 0);
  CHECK(compare_versions("2.0", "2.0.x") < 0);  // the missing part is "0", numeric
}

TEST_CASE("policy: compare_versions is reflexive and antisymmetric") {
  const std::vector<std::string> versions = {"",      "0",     "1",         "1.0",      "1.0.0",
                                             "1.9",   "1.10",  "1.10.2",    "2",        "1.99",
                                             "1.x",   "1.beta", "1.alpha",  "2.0.0-rc", "10",
                                             "1..2",  "01.1",  "999999.0",  "a.b.c"};
  for (const auto& a : versions) {
    CAPTURE(a);
    CHECK(compare_versions(a, a) == 0);
    for (const auto& b : versions) {
      CAPTURE(b);
      int ab = compare_versions(a, b);
      CHECK(ab >= -1);
      CHECK(ab <= 1);
      CHECK(sign(ab) == -sign(compare_versions(b, a)));
    }
  }
}

// Regression: comparing mixed numeric/text parts as text made the order cyclic
// ("1.10" > "1.9" > "1.10a" > "1.10"), so the newest version depended on scan order.
TEST_CASE("policy: compare_versions is transitive") {
  const std::vector<std::string> versions = {"1.9",  "1.10", "1.10a", "1.x", "1.2a", "2",   "10",
                                             "1.0",  "1",    "1.0.x", "",    "1..2", "1.b", "2.0-rc"};
  int chains = 0;
  for (const auto& a : versions)
    for (const auto& b : versions)
      for (const auto& c : versions) {
        if (compare_versions(a, b) > 0 && compare_versions(b, c) > 0) {
          CAPTURE(a);
          CAPTURE(b);
          CAPTURE(c);
          CHECK(compare_versions(a, c) > 0);
          ++chains;
        }
      }
  CHECK(chains > 50);  // the set exercises many chains
}

// ---------------------------------------------------------------------------------------
// is_eligible

TEST_CASE("policy: a live active tab is eligible under the default policy") {
  Tab t;
  CHECK(is_eligible(t.view(), Policy{}, "feed", "1.0"));
  CHECK(is_eligible(t.view(), Policy{}, "feed", ""));
}

TEST_CASE("policy: only alive candidates are eligible") {
  Tab t;
  Policy p;
  t.liveness = Liveness::alive;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));
  for (Liveness l : {Liveness::suspect, Liveness::expired, Liveness::removed}) {
    CAPTURE(to_string(l));
    t.liveness = l;
    CHECK_FALSE(is_eligible(t.view(), p, "feed", "1.0"));
  }
}

TEST_CASE("policy: frozen and closing tabs are never eligible") {
  Tab t;
  t.capabilities = {"ws.owner.v1"};
  Policy permissive;
  permissive.allow_hidden = true;
  permissive.requires_network = false;
  permissive.newest_app_only = false;
  Policy strict;
  strict.required_capability = "ws.owner.v1";
  strict.allow_hidden = false;
  strict.requires_network = true;
  for (const Policy& p : {permissive, strict}) {
    t.lifecycle = Lifecycle::frozen;
    CHECK_FALSE(is_eligible(t.view(), p, "ws", "1.0"));
    t.lifecycle = Lifecycle::closing;
    CHECK_FALSE(is_eligible(t.view(), p, "ws", "1.0"));
    t.lifecycle = Lifecycle::active;
    CHECK(is_eligible(t.view(), p, "ws", "1.0"));
  }
  t.lifecycle = Lifecycle::restored;
  CHECK(is_eligible(t.view(), permissive, "ws", "1.0"));
}

TEST_CASE("policy: allow_hidden=false excludes hidden tabs only") {
  Tab t;
  Policy p;
  t.lifecycle = Lifecycle::hidden;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));  // allowed by default
  p.allow_hidden = false;
  CHECK_FALSE(is_eligible(t.view(), p, "feed", "1.0"));
  t.lifecycle = Lifecycle::active;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));
  t.lifecycle = Lifecycle::restored;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));
}

TEST_CASE("policy: requires_network excludes offline tabs only when set") {
  Tab t;
  t.online = false;
  Policy p;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));
  p.requires_network = true;
  CHECK_FALSE(is_eligible(t.view(), p, "feed", "1.0"));
  t.online = true;
  CHECK(is_eligible(t.view(), p, "feed", "1.0"));
}

TEST_CASE("policy: a required capability must be present exactly") {
  Tab t;
  Policy p;
  p.required_capability = "ws.owner.v1";
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "1.0"));  // no capabilities at all
  t.capabilities = {"ws.owner.v2", "ws.owner", "ws.owner.v1x"};
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "1.0"));  // no prefix or near matches
  t.capabilities.push_back("ws.owner.v1");
  CHECK(is_eligible(t.view(), p, "ws", "1.0"));
}

TEST_CASE("policy: newest_app_only makes tabs on older app code yield") {
  Tab t;
  Policy p;  // newest_app_only defaults to true
  REQUIRE(p.newest_app_only);
  t.app_version = "1.9";
  CHECK_FALSE(is_eligible(t.view(), p, "feed", "1.10"));  // numeric, not textual
  t.app_version = "1.10";
  CHECK(is_eligible(t.view(), p, "feed", "1.10"));         // equal
  CHECK(is_eligible(t.view(), p, "feed", "1.10.0"));       // equal with padding
  t.app_version = "2.0";
  CHECK(is_eligible(t.view(), p, "feed", "1.10"));         // newer
  t.app_version = "1.9";
  p.newest_app_only = false;
  CHECK(is_eligible(t.view(), p, "feed", "1.10"));
}

TEST_CASE("policy: every rule must pass (a single failing rule excludes)") {
  Tab good;
  good.capabilities = {"ws.owner.v1"};
  good.app_version = "3.1";
  Policy p;
  p.required_capability = "ws.owner.v1";
  p.allow_hidden = false;
  p.requires_network = true;
  REQUIRE(is_eligible(good.view(), p, "ws", "3.1"));

  Tab t = good;
  t.liveness = Liveness::suspect;
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "3.1"));
  t = good;
  t.lifecycle = Lifecycle::hidden;
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "3.1"));
  t = good;
  t.online = false;
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "3.1"));
  t = good;
  t.capabilities.clear();
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "3.1"));
  t = good;
  t.app_version = "3.0.9";
  CHECK_FALSE(is_eligible(t.view(), p, "ws", "3.1"));
}

// ---------------------------------------------------------------------------------------
// rank_score

TEST_CASE("policy: rank_score by lifecycle: active 100, hidden 40, restored 20") {
  Tab t;
  t.start_ms = 5000;  // no age bonus at now == start
  t.lifecycle = Lifecycle::active;
  CHECK(rank_score(t.view(), "feed", 5000) == 100);
  t.lifecycle = Lifecycle::hidden;
  CHECK(rank_score(t.view(), "feed", 5000) == 40);
  t.lifecycle = Lifecycle::restored;
  CHECK(rank_score(t.view(), "feed", 5000) == 20);
  t.lifecycle = Lifecycle::frozen;
  CHECK(rank_score(t.view(), "feed", 5000) == 0);
  t.lifecycle = Lifecycle::closing;
  CHECK(rank_score(t.view(), "feed", 5000) == 0);
}

TEST_CASE("policy: `<resource>.preferred` adds 30 for that resource only") {
  Tab t;
  t.capabilities = {"feed.preferred"};
  CHECK(rank_score(t.view(), "feed", 0) == 130);
  CHECK(rank_score(t.view(), "ws", 0) == 100);
  t.capabilities = {"feed", "preferred", "feed.preferred.v2", "xfeed.preferred"};
  CHECK(rank_score(t.view(), "feed", 0) == 100);
  t.lifecycle = Lifecycle::hidden;
  t.capabilities = {"ws.preferred", "feed.preferred"};
  CHECK(rank_score(t.view(), "ws", 0) == 70);
}

TEST_CASE("policy: the age bonus is one point per whole minute, capped at 20") {
  Tab t;
  t.start_ms = 1'000'000;
  auto score_at = [&](double age_ms) { return rank_score(t.view(), "feed", t.start_ms + age_ms); };
  CHECK(score_at(0) == 100);
  CHECK(score_at(59'999) == 100);
  CHECK(score_at(kMinute) == 101);
  CHECK(score_at(5.5 * kMinute) == 105);
  CHECK(score_at(19.99 * kMinute) == 119);
  CHECK(score_at(20 * kMinute) == 120);
  CHECK(score_at(21 * kMinute) == 120);
  CHECK(score_at(1e9 * kMinute) == 120);
  // A start time in the future (clock skew) gives no bonus and no penalty.
  CHECK(score_at(-10 * kMinute) == 100);
  // The score never decreases with age.
  int prev = 0;
  for (double m = 0; m <= 30; m += 0.25) {
    int s = score_at(m * kMinute);
    CHECK(s >= prev);
    prev = s;
  }
}

TEST_CASE("policy: age and preference never lift a hidden tab over an active one") {
  Tab old_hidden;
  old_hidden.id = "a";
  old_hidden.lifecycle = Lifecycle::hidden;
  old_hidden.capabilities = {"feed.preferred"};
  old_hidden.start_ms = 0;
  Tab fresh_active;
  fresh_active.id = "z";
  fresh_active.start_ms = 100 * kMinute;
  double now = 100 * kMinute;
  CHECK(rank_score(old_hidden.view(), "feed", now) == 40 + 30 + 20);
  CHECK(rank_score(fresh_active.view(), "feed", now) == 100);
  CHECK(ranks_before(fresh_active.view(), old_hidden.view(), "feed", now));
  CHECK_FALSE(ranks_before(old_hidden.view(), fresh_active.view(), "feed", now));
}

// ---------------------------------------------------------------------------------------
// ranks_before

TEST_CASE("policy: ranks_before prefers the higher score") {
  Tab active, hidden;
  active.id = "zzz";  // loses the id tie-break, wins on score
  hidden.id = "aaa";
  hidden.lifecycle = Lifecycle::hidden;
  CHECK(ranks_before(active.view(), hidden.view(), "feed", 0));
  CHECK_FALSE(ranks_before(hidden.view(), active.view(), "feed", 0));

  Tab older, newer;  // same lifecycle: the older tab wins on its age bonus
  older.id = "z-older";
  older.start_ms = 0;
  newer.id = "a-newer";
  newer.start_ms = 9 * kMinute;
  CHECK(ranks_before(older.view(), newer.view(), "feed", 10 * kMinute));
  CHECK_FALSE(ranks_before(newer.view(), older.view(), "feed", 10 * kMinute));
}

TEST_CASE("policy: equal scores are broken by id, smaller first") {
  Tab a, b;
  a.id = "tab-1";
  b.id = "tab-2";
  CHECK(rank_score(a.view(), "feed", 0) == rank_score(b.view(), "feed", 0));
  CHECK(ranks_before(a.view(), b.view(), "feed", 0));
  CHECK_FALSE(ranks_before(b.view(), a.view(), "feed", 0));
  // Irreflexive: a tab never ranks before itself.
  CHECK_FALSE(ranks_before(a.view(), a.view(), "feed", 0));
}

TEST_CASE("policy: ranks_before is a strict total order every tab computes the same way") {
  std::vector<Tab> tabs;
  const Lifecycle lifecycles[] = {Lifecycle::active, Lifecycle::hidden, Lifecycle::restored,
                                  Lifecycle::frozen};
  int n = 0;
  for (Lifecycle l : lifecycles) {
    for (int pref = 0; pref < 2; ++pref) {
      for (double age : {0.0, 3.0, 25.0}) {
        Tab t;
        t.id = "tab-" + std::to_string(1000 - n++);  // ids unrelated to score
        t.lifecycle = l;
        if (pref) t.capabilities = {"feed.preferred"};
        t.start_ms = (30 - age) * kMinute;
        tabs.push_back(t);
        Tab twin = t;  // same score, different id
        twin.id = "twin-" + std::to_string(n);
        tabs.push_back(twin);
      }
    }
  }
  const double now = 30 * kMinute;
  auto before = [&](const Tab& x, const Tab& y) { return ranks_before(x.view(), y.view(), "feed", now); };

  for (const Tab& a : tabs) {
    CHECK_FALSE(before(a, a));
    for (const Tab& b : tabs) {
      if (&a == &b) continue;
      // Exactly one of a<b, b<a for distinct ids: antisymmetric and total.
      CHECK(before(a, b) != before(b, a));
      for (const Tab& c : tabs) {
        if (before(a, b) && before(b, c)) CHECK(before(a, c));
      }
    }
  }

  // Any input order sorts to the same ranking: every tab agrees on who is first.
  std::vector<size_t> idx(tabs.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto sorted_ids = [&](std::vector<size_t> order) {
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return before(tabs[x], tabs[y]); });
    std::vector<std::string> ids;
    for (size_t i : order) ids.push_back(tabs[i].id);
    return ids;
  };
  std::vector<std::string> reference = sorted_ids(idx);
  std::reverse(idx.begin(), idx.end());
  CHECK(sorted_ids(idx) == reference);
  std::rotate(idx.begin(), idx.begin() + 7, idx.end());
  CHECK(sorted_ids(idx) == reference);
  // The best is an active, preferred, old tab.
  const Tab* best = nullptr;
  for (const Tab& t : tabs)
    if (t.id == reference.front()) best = &t;
  REQUIRE(best != nullptr);
  CHECK(best->lifecycle == Lifecycle::active);
  CHECK(rank_score(best->view(), "feed", now) == 150);
}

TEST_CASE("policy: a pre-release ranks below its release") {
  CHECK(compare_versions("2.0.0-rc.1", "2.0.0") < 0);
  CHECK(compare_versions("2.0.0", "2.0.0-rc.1") > 0);
  CHECK(compare_versions("2.0.0-rc.2", "2.0.0-rc.10") < 0);
  CHECK(compare_versions("2.0.0-rc.1", "1.9.9") > 0);
}
