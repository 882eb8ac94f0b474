// A fence admits a side effect only from the newest term it has seen for a resource.
// The receiver of a guarded effect (a server, a worker, an IndexedDB transaction, the
// simulation's effect log) keeps one; a stale owner's effect gets STALE_OWNER.
#pragma once
#include <cstdint>
#include <string_view>

#include "fixed.h"
#include "wire.h"

namespace baton {

enum class FenceVerdict : uint8_t { accepted = 0, stale_owner = 1 };

class Fence {
 public:
  // Accepts epochs equal to or above the highest seen (a term may act many times).
  FenceVerdict admit(std::string_view resource, uint64_t epoch) {
    uint64_t& highest = *highest_.insert(resource);
    if (epoch < highest) {
      ++rejected_;
      return FenceVerdict::stale_owner;
    }
    highest = epoch;
    ++accepted_;
    return FenceVerdict::accepted;
  }

  // Raises the floor without an effect (a newer term was observed).
  void observe(std::string_view resource, uint64_t epoch) {
    uint64_t& highest = *highest_.insert(resource);
    if (epoch > highest) highest = epoch;
  }

  uint64_t highest(std::string_view resource) const {
    const uint64_t* h = highest_.find(resource);
    return h ? *h : 0;
  }
  uint64_t accepted() const { return accepted_; }
  uint64_t rejected() const { return rejected_; }

 private:
  // Every resource this fence heard of: the glue bounds how many a tab uses.
  FlatMap<ResourceName, uint64_t> highest_;
  uint64_t accepted_ = 0;
  uint64_t rejected_ = 0;
};

}  // namespace baton
