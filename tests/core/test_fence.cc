// Fence: a guarded effect is admitted only from the newest term seen for its resource.
//
// Invariants served: 1 (at most one effective leader: a stale owner's effect is rejected)
// and 2 (epochs only go up).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "core/fence.h"
#include "core/types.h"

using namespace baton;

TEST_CASE("fence: a fresh fence knows nothing and admits the first epoch") {
  Fence f;
  CHECK(f.highest("feed") == 0);
  CHECK(f.accepted() == 0);
  CHECK(f.rejected() == 0);
  CHECK(f.admit("feed", 1) == FenceVerdict::accepted);
  CHECK(f.highest("feed") == 1);
  CHECK(f.accepted() == 1);
}

TEST_CASE("fence: epoch 0 is admitted on a fresh resource") {
  Fence f;
  CHECK(f.admit("feed", 0) == FenceVerdict::accepted);
  CHECK(f.highest("feed") == 0);
}

TEST_CASE("fence: equal epochs are accepted (a term may act many times)") {
  Fence f;
  REQUIRE(f.admit("feed", 7) == FenceVerdict::accepted);
  for (int i = 0; i < 5; ++i) CHECK(f.admit("feed", 7) == FenceVerdict::accepted);
  CHECK(f.accepted() == 6);
  CHECK(f.rejected() == 0);
  CHECK(f.highest("feed") == 7);
}

TEST_CASE("fence: higher epochs are accepted and raise the floor") {
  Fence f;
  CHECK(f.admit("feed", 3) == FenceVerdict::accepted);
  CHECK(f.admit("feed", 4) == FenceVerdict::accepted);
  CHECK(f.admit("feed", 100) == FenceVerdict::accepted);  // gaps are fine
  CHECK(f.highest("feed") == 100);
  CHECK(f.admit("feed", kMaxEpoch) == FenceVerdict::accepted);
  CHECK(f.highest("feed") == kMaxEpoch);
}

TEST_CASE("fence: a lower epoch is a stale owner and does not lower the floor") {
  Fence f;
  REQUIRE(f.admit("feed", 5) == FenceVerdict::accepted);
  CHECK(f.admit("feed", 4) == FenceVerdict::stale_owner);
  CHECK(f.admit("feed", 0) == FenceVerdict::stale_owner);
  CHECK(f.highest("feed") == 5);
  CHECK(f.rejected() == 2);
  CHECK(f.accepted() == 1);
  // the current term still acts
  CHECK(f.admit("feed", 5) == FenceVerdict::accepted);
}

TEST_CASE("fence: old leader and new leader interleaved (the freeze scenario)") {
  // Tab A leads with epoch 8 and freezes; tab B steals and gets epoch 9. A thaws and,
  // before it learns it was deposed, tries its side effect.
  Fence f;
  CHECK(f.admit("ws", 8) == FenceVerdict::accepted);  // A, before the freeze
  CHECK(f.admit("ws", 9) == FenceVerdict::accepted);  // B
  CHECK(f.admit("ws", 8) == FenceVerdict::stale_owner);  // A after thawing
  CHECK(f.admit("ws", 9) == FenceVerdict::accepted);  // B goes on
  CHECK(f.accepted() == 3);
  CHECK(f.rejected() == 1);
}

TEST_CASE("fence: observe raises the floor without counting an effect") {
  Fence f;
  REQUIRE(f.admit("feed", 3) == FenceVerdict::accepted);
  f.observe("feed", 6);  // a newer term was announced
  CHECK(f.highest("feed") == 6);
  CHECK(f.accepted() == 1);
  CHECK(f.rejected() == 0);
  CHECK(f.admit("feed", 3) == FenceVerdict::stale_owner);
  CHECK(f.admit("feed", 5) == FenceVerdict::stale_owner);
  CHECK(f.admit("feed", 6) == FenceVerdict::accepted);
}

TEST_CASE("fence: observe never lowers the floor") {
  Fence f;
  f.observe("feed", 10);
  f.observe("feed", 4);
  f.observe("feed", 0);
  CHECK(f.highest("feed") == 10);
  f.observe("feed", 10);
  CHECK(f.highest("feed") == 10);
  CHECK(f.admit("feed", 9) == FenceVerdict::stale_owner);
  CHECK(f.accepted() == 0);
  CHECK(f.rejected() == 1);
}

TEST_CASE("fence: resources are fenced independently") {
  Fence f;
  REQUIRE(f.admit("feed", 50) == FenceVerdict::accepted);
  f.observe("ws", 7);
  CHECK(f.admit("ws", 1) == FenceVerdict::stale_owner);
  CHECK(f.admit("sync", 1) == FenceVerdict::accepted);  // unaffected by feed's 50
  CHECK(f.admit("ws", 7) == FenceVerdict::accepted);
  CHECK(f.highest("feed") == 50);
  CHECK(f.highest("ws") == 7);
  CHECK(f.highest("sync") == 1);
  CHECK(f.highest("unknown") == 0);
  // names are exact: no prefix or case folding
  CHECK(f.highest("Feed") == 0);
  CHECK(f.admit("feed2", 1) == FenceVerdict::accepted);
  CHECK(f.admit("", 2) == FenceVerdict::accepted);
  CHECK(f.highest("feed") == 50);
}

TEST_CASE("fence: counters add up over a long run") {
  Fence f;
  uint64_t expect_accepted = 0, expect_rejected = 0;
  for (uint64_t epoch = 1; epoch <= 200; ++epoch) {
    // every term acts twice, and its predecessor tries once after it
    CHECK(f.admit("r", epoch) == FenceVerdict::accepted);
    CHECK(f.admit("r", epoch) == FenceVerdict::accepted);
    expect_accepted += 2;
    if (epoch > 1) {
      CHECK(f.admit("r", epoch - 1) == FenceVerdict::stale_owner);
      ++expect_rejected;
    }
  }
  CHECK(f.accepted() == expect_accepted);
  CHECK(f.rejected() == expect_rejected);
  CHECK(f.highest("r") == 200);
}
