#include "names.h"

namespace baton {

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::tick: return "tick";
    case EventKind::message: return "message";
    case EventKind::join: return "join";
    case EventKind::leave: return "leave";
    case EventKind::lock_granted: return "lock-granted";
    case EventKind::lock_lost: return "lock-lost";
    case EventKind::lock_unavailable: return "lock-unavailable";
    case EventKind::epoch_allocated: return "epoch-allocated";
    case EventKind::lease_result: return "lease-result";
    case EventKind::lease_failed: return "lease-failed";
    case EventKind::lifecycle: return "lifecycle";
    case EventKind::online: return "online";
    case EventKind::offline: return "offline";
    case EventKind::session_changed: return "session-changed";
    case EventKind::abdicate: return "abdicate";
    case EventKind::force_election: return "force-election";
    case EventKind::dispose: return "dispose";
    case EventKind::lease_aborted: return "lease-aborted";
    case EventKind::lease_read: return "lease-read";
    case EventKind::fence_check: return "fence-check";
    case EventKind::epoch_read: return "epoch-read";
  }
  return "?";
}

const char* to_string(EffectKind k) {
  switch (k) {
    case EffectKind::broadcast: return "broadcast";
    case EffectKind::lock_request: return "lock-request";
    case EffectKind::lock_release: return "lock-release";
    case EffectKind::allocate_epoch: return "allocate-epoch";
    case EffectKind::lease_try: return "lease-try";
    case EffectKind::elected: return "elected";
    case EffectKind::deposed: return "deposed";
    case EffectKind::leader_changed: return "leader-changed";
    case EffectKind::lease_write: return "lease-write";
    case EffectKind::fence_verdict: return "fence-verdict";
  }
  return "?";
}

const char* to_string(LockMode m) {
  switch (m) {
    case LockMode::queue: return "queue";
    case LockMode::steal: return "steal";
  }
  return "?";
}

namespace wire {
const char* to_string(Kind k) {
  switch (k) {
    case Kind::hello: return "hello";
    case Kind::presence: return "presence";
    case Kind::heartbeat: return "heartbeat";
    case Kind::goodbye: return "goodbye";
    case Kind::abdicate_request: return "abdicate-request";
  }
  return "?";
}
}  // namespace wire

namespace sim {
std::string describe_frame(const std::vector<uint8_t>& bytes) {
  wire::Frame f;
  wire::DecodeError err = wire::decode(bytes.data(), bytes.size(), f);
  if (err != wire::DecodeError::ok) return std::string("undecodable: ") + wire::to_string(err);
  std::string s = to_string(f.kind);
  if (!f.claims.empty()) {
    s += " claims";
    for (const auto& c : f.claims) s += " " + c.resource + "@" + std::to_string(c.epoch);
  }
  if (f.kind == wire::Kind::goodbye) {
    s += f.subject.empty() ? " everything" : " " + f.subject;
    if (!f.target.empty()) s += " successor " + f.target;
  } else if (f.kind == wire::Kind::abdicate_request) {
    s += " " + f.subject + " to " + f.target;
  }
  return s;
}
}  // namespace sim

}  // namespace baton
