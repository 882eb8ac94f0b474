#include "types.h"

namespace baton {

const char* to_string(Authority a) {
  switch (a) {
    case Authority::web_locks: return "web-locks";
    case Authority::lease: return "lease";
    case Authority::broadcast: return "broadcast";
  }
  return "?";
}

const char* to_string(Lifecycle l) {
  switch (l) {
    case Lifecycle::active: return "active";
    case Lifecycle::hidden: return "hidden";
    case Lifecycle::frozen: return "frozen";
    case Lifecycle::restored: return "restored";
    case Lifecycle::closing: return "closing";
  }
  return "?";
}

const char* to_string(Liveness l) {
  switch (l) {
    case Liveness::alive: return "alive";
    case Liveness::suspect: return "suspect";
    case Liveness::expired: return "expired";
    case Liveness::removed: return "removed";
  }
  return "?";
}

const char* to_string(Role r) {
  switch (r) {
    case Role::follower: return "follower";
    case Role::candidate: return "candidate";
    case Role::leader: return "leader";
    case Role::stepping_down: return "stepping-down";
  }
  return "?";
}

const char* to_string(Reason r) {
  switch (r) {
    case Reason::none: return "none";
    case Reason::startup: return "startup";
    case Reason::not_eligible: return "not-eligible";
    case Reason::lock_granted: return "lock-granted";
    case Reason::lock_lost: return "lock-lost";
    case Reason::lease_acquired: return "lease-acquired";
    case Reason::lease_lost: return "lease-lost";
    case Reason::lease_expired: return "lease-expired";
    case Reason::takeover: return "takeover";
    case Reason::steal: return "steal";
    case Reason::epoch_ready: return "epoch-ready";
    case Reason::frozen: return "frozen";
    case Reason::closing: return "closing";
    case Reason::hidden: return "hidden";
    case Reason::offline: return "offline";
    case Reason::app_version: return "app-version";
    case Reason::session_changed: return "session-changed";
    case Reason::newer_epoch: return "newer-epoch";
    case Reason::conflict: return "conflict";
    case Reason::stalled: return "stalled";
    case Reason::abdicate: return "abdicate";
    case Reason::prefer_visible: return "prefer-visible";
    case Reason::leader_goodbye: return "leader-goodbye";
    case Reason::dispose: return "dispose";
    case Reason::storage_failed: return "storage-failed";
    case Reason::count_: break;
  }
  return "?";
}

const char* to_string(Degraded d) {
  switch (d) {
    case Degraded::none: return "none";
    case Degraded::not_durable: return "not-durable";
    case Degraded::storage_timeout: return "storage-timeout";
    case Degraded::store_regressed: return "store-regressed";
    case Degraded::behind_claim: return "behind-claim";
    case Degraded::storage_failed: return "storage-failed";
  }
  return "?";
}

}  // namespace baton
