// libFuzzer target: whole sequences of events fed to three nodes sharing a simulated
// lock, a durable counter and a lease record. The input bytes choose the events, their
// timing and the frames (valid ones from the nodes, mutated or random ones). Checks:
// nothing crashes or trips a sanitizer, no deadline is NaN, and a term (resource,
// epoch) never belongs to two terms unless one of them is degraded (its epoch may repeat).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/node.h"

using namespace baton;

namespace {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  std::vector<uint8_t> bytes(size_t max) {
    size_t len = byte() % (max + 1);
    std::vector<uint8_t> out;
    while (len-- && i_ < n_) out.push_back(d_[i_++]);
    return out;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

const char* kRes[2] = {"ws", "sync"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Authority authority = static_cast<Authority>(in.byte() % 3);
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 3; ++i) {
    Config c;
    c.id = std::string("t") + char('0' + i);
    c.authority = authority;
    c.capabilities = {"ws.owner.v1"};
    c.seed = i + 1;
    nodes.push_back(std::make_unique<Node>(c));
  }
  std::vector<std::vector<uint8_t>> sent;     // frames seen on the channel
  std::map<std::string, int> lock_holder;     // resource -> node index
  std::map<std::string, uint64_t> counter;    // durable epoch counter
  std::map<std::string, LeaseRecord> lease;
  std::map<std::pair<std::string, uint64_t>, int> term_owner;
  double now = 1000;
  static const bool trace = std::getenv("BATON_FUZZ_TRACE") != nullptr;

  auto apply = [&](int who, const std::vector<Effect>& fx) {
    for (const Effect& e : fx) {
      switch (e.kind) {
        case EffectKind::broadcast:
          if (sent.size() < 64) sent.push_back(e.bytes);
          break;
        case EffectKind::lock_release: {
          std::string res = e.resource.str();
          if (lock_holder.count(res) && lock_holder[res] == who) lock_holder.erase(res);
          break;
        }
        case EffectKind::elected: {
          if (trace) std::fprintf(stderr, "  t%d elected %s epoch %llu\n", who, e.resource.str().c_str(), static_cast<unsigned long long>(e.epoch));
          // A degraded term says its epoch may repeat; every other term's is unique.
          if (e.degraded != Degraded::none) break;
          auto key = std::make_pair(e.resource.str(), e.epoch);
          auto it = term_owner.find(key);
          if (it != term_owner.end() && it->second != who) std::abort();
          term_owner[key] = who;
          break;
        }
        default: break;
      }
    }
  };

  while (!in.empty()) {
    uint8_t op = in.byte();
    int who = in.byte() % 3;
    Node& n = *nodes[who];
    const char* res = kRes[in.byte() & 1];
    now += in.byte() * (op & 0x80 ? 40 : 1);
    Event e;
    e.now_ms = now;
    e.resource = res;
    std::vector<uint8_t> frame;
    switch (op % 14) {
      case 0: e.kind = EventKind::tick; break;
      case 1: e.kind = EventKind::join; e.policy.prefer_visible = in.byte() & 1; break;
      case 2:
        if (sent.empty()) continue;
        frame = sent[in.byte() % sent.size()];
        if (!frame.empty() && (in.byte() & 3) == 0) frame[in.byte() % frame.size()] ^= in.byte();
        e.kind = EventKind::message;
        break;
      case 3: frame = in.bytes(80); e.kind = EventKind::message; break;
      case 4:
        // The simulated lock: grant only if free (or to the holder again).
        if (lock_holder.count(res) && lock_holder[res] != who) continue;
        lock_holder[res] = who;
        e.kind = EventKind::lock_granted;
        break;
      case 5:
        if (lock_holder.count(res) && lock_holder[res] == who) lock_holder.erase(res);
        e.kind = EventKind::lock_lost;
        break;
      case 6: {
        uint64_t& c = counter[res];
        c = c + 1;
        e.kind = EventKind::epoch_allocated;
        e.epoch = c;
        e.durable = in.byte() != 0;
        break;
      }
      case 7: {
        LeaseRecord& rec = lease[res];
        LeaseRecord w = n.lease_decide(res, rec, now);
        if (w.present) rec = w;
        e.kind = EventKind::lease_result;
        e.lease = rec;
        break;
      }
      case 8: e.kind = EventKind::lifecycle; e.lifecycle = static_cast<Lifecycle>(in.byte() % 5); break;
      case 9: e.kind = in.byte() & 1 ? EventKind::online : EventKind::offline; break;
      case 10: e.kind = EventKind::abdicate; break;
      case 11: e.kind = EventKind::leave; break;
      case 12: e.kind = EventKind::lease_failed; break;
      default: e.kind = in.byte() & 1 ? EventKind::session_changed : EventKind::lock_unavailable; break;
    }
    e.data = frame.data();
    e.size = frame.size();
    if (trace) std::fprintf(stderr, "%.0f t%d event %d %s\n", now, who, static_cast<int>(e.kind), res);
    apply(who, n.step(e));
    if (n.next_deadline() < now && n.next_deadline() != kNever && !n.disposed()) {
      // A deadline in the past is fine (the glue fires at once) but must not be NaN.
      if (n.next_deadline() != n.next_deadline()) std::abort();
    }
  }
  return 0;
}
