// Vocabulary shared by every part of the core: authorities, lifecycle, liveness, roles,
// reasons. Plain enums, no behaviour beyond naming.
#pragma once
#include <cstdint>
#include <limits>

namespace baton {

// A deadline that never comes, and a time before every other.
constexpr double kNever = std::numeric_limits<double>::infinity();

// Who decides which tab leads. Chosen by the glue from what the browser offers.
enum class Authority : uint8_t { web_locks = 0, lease = 1, broadcast = 2 };

enum class Lifecycle : uint8_t { active = 0, hidden = 1, frozen = 2, restored = 3, closing = 4 };
constexpr uint8_t kLifecycleCount = 5;

// Derived from heartbeats: how recently a candidate made progress.
enum class Liveness : uint8_t { alive = 0, suspect = 1, expired = 2, removed = 3 };

enum class Role : uint8_t { follower = 0, candidate = 1, leader = 2, stepping_down = 3 };

// Why a resource changed role. Recorded in the transition log and counted.
enum class Reason : uint8_t {
  none = 0,
  startup,
  not_eligible,      // policy says this tab may not lead now
  lock_granted,
  lock_lost,         // the held lock was stolen or broken
  lease_acquired,
  lease_lost,        // the lease record names another owner
  lease_expired,     // could not renew before the lease ran out
  takeover,          // broadcast-only: leader silent for takeoverMs
  steal,             // Web Locks: took the lock from a silent leader
  epoch_ready,       // the term's epoch is allocated
  frozen,
  closing,
  hidden,
  offline,
  app_version,       // a tab with newer app code is eligible
  session_changed,
  newer_epoch,       // another leader holds a newer term
  conflict,          // broadcast-only: same epoch, better-ranked rival
  stalled,           // own timers stopped (frozen or throttled) while leading
  abdicate,
  prefer_visible,    // handed over to a visible tab
  leader_goodbye,
  dispose,
  storage_failed,
  count_             // number of reasons, keep last
};

// Why a term's epoch may not be above every earlier term's. A degraded term must not
// run fenced effects locally: the glue makes fenced() refuse while it is set.
enum class Degraded : uint8_t {
  none = 0,
  // not_durable and storage_timeout: no store vouched for the epoch, so the term starts
  // above every term this tab heard of; it may still repeat one the tab never heard of.
  not_durable,      // the store answered from a copy that cannot guarantee monotonicity
  storage_timeout,  // the store did not answer in time; the epoch was made up locally
  store_regressed,  // the store answered at or below an epoch this tab already used
  behind_claim,     // the store answered at or below a term another tab claims
  storage_failed,   // the lease store failed; this tab fell back to broadcast-only
};

const char* to_string(Authority a);
const char* to_string(Lifecycle l);
const char* to_string(Liveness l);
const char* to_string(Role r);
const char* to_string(Reason r);
const char* to_string(Degraded d);

// Largest integer that crosses the JS boundary exactly as a double.
constexpr uint64_t kMaxEpoch = (uint64_t{1} << 53) - 1;
// A claimed epoch at or above this is forged or corrupt: honouring it would let one
// message exhaust the epoch space (frames: peer_frames.cc; talk messages: the glue).
constexpr uint64_t kPlausibleEpoch = uint64_t{1} << 40;

}  // namespace baton
