// The one file that knows about Emscripten: embind bindings over the core's small
// surface. Events go in through `_`-prefixed methods that return how many effects the
// step produced; the glue reads those effects through accessors. Members are raw and
// wrapped by js-glue; users never see this class.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <utility>
#include <vector>

#include "core/node.h"

using emscripten::val;

namespace baton {
namespace {

std::vector<std::string> string_list(const val& array) {
  std::vector<std::string> out;
  if (array.isUndefined() || array.isNull()) return out;
  unsigned n = array["length"].as<unsigned>();
  for (unsigned i = 0; i < n; ++i) out.push_back(array[i].as<std::string>());
  return out;
}

double number_or(const val& obj, const char* key, double fallback) {
  val v = obj[key];
  return v.isNumber() ? v.as<double>() : fallback;
}

Config config_from(const val& o) {
  Config c;
  c.id = o["id"].as<std::string>();
  c.generation = static_cast<uint32_t>(number_or(o, "generation", 1));
  c.app_version = o["appVersion"].as<std::string>();
  c.capabilities = string_list(o["capabilities"]);
  c.authority = static_cast<Authority>(static_cast<int>(number_or(o, "authority", 0)));
  c.heartbeat_ms = number_or(o, "heartbeatMs", c.heartbeat_ms);
  c.suspect_ms = number_or(o, "suspectMs", c.suspect_ms);
  c.lease_ms = number_or(o, "leaseMs", c.lease_ms);
  c.steal_grace_ms = number_or(o, "stealGraceMs", c.steal_grace_ms);
  c.rank_stagger_ms = number_or(o, "rankStaggerMs", c.rank_stagger_ms);
  c.trigger_jitter_ms = number_or(o, "triggerJitterMs", c.trigger_jitter_ms);
  c.start_ms = number_or(o, "startMs", 0);
  c.seed = static_cast<uint64_t>(number_or(o, "seed", 1));
  return c;
}

val transition_to_js(const Transition& t) {
  val o = val::object();
  o.set("at", t.at_ms);
  o.set("resource", t.resource);
  o.set("from", std::string(to_string(t.from)));
  o.set("to", std::string(to_string(t.to)));
  o.set("reason", std::string(to_string(t.reason)));
  o.set("epoch", static_cast<double>(t.epoch));
  return o;
}

class Core {
 public:
  explicit Core(val config) : node_(config_from(config)) {}

  // Events. Each returns the number of effects, read with the accessors below.
  int tick(double now) { return run(simple(EventKind::tick, now)); }
  int message(double now, const std::string& bytes) {
    Event e = simple(EventKind::message, now);
    e.data = reinterpret_cast<const uint8_t*>(bytes.data());
    e.size = bytes.size();
    return run(e);
  }
  int join(double now, const std::string& resource, val policy) {
    Event e = simple(EventKind::join, now, resource);
    val cap = policy["requiredCapability"];
    e.policy.required_capability = cap.isString() ? cap.as<std::string>() : "";
    e.policy.allow_hidden = policy["allowHidden"].as<bool>();
    e.policy.prefer_visible = policy["preferVisible"].as<bool>();
    e.policy.requires_network = policy["requiresNetwork"].as<bool>();
    e.policy.newest_app_only = policy["newestAppOnly"].as<bool>();
    return run(e);
  }
  int resource_event(int kind, double now, const std::string& resource) {
    return run(simple(static_cast<EventKind>(kind), now, resource));
  }
  int epoch_allocated(double now, const std::string& resource, double epoch, bool durable) {
    Event e = simple(EventKind::epoch_allocated, now, resource);
    e.epoch = static_cast<uint64_t>(epoch);
    e.durable = durable;
    return run(e);
  }
  int lease_result(double now, const std::string& resource, val record) {
    Event e = simple(EventKind::lease_result, now, resource);
    e.lease = lease_from(record);
    return run(e);
  }
  int lifecycle(double now, int state) {
    Event e = simple(EventKind::lifecycle, now);
    e.lifecycle = static_cast<Lifecycle>(state);
    return run(e);
  }
  int plain_event(int kind, double now) { return run(simple(static_cast<EventKind>(kind), now)); }

  // Effects of the last step.
  int effect_kind(int i) const { return static_cast<int>(effects_[i].kind); }
  std::string effect_resource(int i) const { return effects_[i].resource; }
  val effect_bytes(int i) const {
    const auto& b = effects_[i].bytes;
    return val(emscripten::typed_memory_view(b.size(), b.data()));
  }
  int effect_lock_mode(int i) const { return static_cast<int>(effects_[i].lock_mode); }
  double effect_epoch(int i) const { return static_cast<double>(effects_[i].epoch); }
  std::string effect_reason(int i) const { return to_string(effects_[i].reason); }

  double next_deadline() const { return node_.next_deadline(); }

  // Called inside the lease's read-write transaction; null means write nothing.
  val lease_decide(const std::string& resource, val current, double now) {
    LeaseRecord rec = node_.lease_decide(resource, lease_from(current), now);
    if (!rec.present) return val::null();
    val o = val::object();
    o.set("owner", rec.owner);
    o.set("generation", rec.generation);
    o.set("epoch", static_cast<double>(rec.epoch));
    o.set("expiresMs", rec.expires_ms);
    return o;
  }

  // Queries.
  val view(const std::string& resource) const {
    ResourceView v = node_.view(resource);
    val o = val::object();
    o.set("role", std::string(to_string(v.role)));
    o.set("reason", std::string(to_string(v.reason)));
    o.set("epoch", static_cast<double>(v.epoch));
    o.set("leader", v.leader);
    o.set("leaderEpoch", static_cast<double>(v.leader_epoch));
    o.set("leaderSince", v.leader_since_ms);
    o.set("eligible", v.eligible);
    o.set("degraded", std::string(to_string(v.degraded)));
    return o;
  }
  val presence(double now) const {
    val list = val::array();
    for (const auto& [id, c] : node_.presence().all()) {
      val o = val::object();
      o.set("id", id);
      o.set("generation", c.generation);
      o.set("lifecycle", std::string(to_string(c.lifecycle)));
      o.set("liveness", std::string(to_string(Presence::liveness(c, now))));
      o.set("appVersion", c.app_version);
      o.set("capabilities", val::array(c.capabilities.begin(), c.capabilities.end()));
      o.set("lastSeen", c.last_seen_ms);
      o.set("lastProgress", c.last_progress_ms);
      list.call<void>("push", o);
    }
    return list;
  }
  val metrics() const {
    const Metrics& m = node_.metrics();
    val o = val::object();
#define BATON_COUNTER(name, js) o.set(js, static_cast<double>(m.name))
    BATON_COUNTER(frames_sent, "framesSent");
    BATON_COUNTER(frames_received, "framesReceived");
    BATON_COUNTER(dropped_malformed, "droppedMalformed");
    BATON_COUNTER(dropped_oversized, "droppedOversized");
    BATON_COUNTER(dropped_foreign_version, "droppedForeignVersion");
    BATON_COUNTER(dropped_stale_generation, "droppedStaleGeneration");
    BATON_COUNTER(dropped_forged_epoch, "droppedForgedEpoch");
    BATON_COUNTER(dropped_table_full, "droppedTableFull");
    BATON_COUNTER(duplicate_id, "duplicateId");
    BATON_COUNTER(ticks, "ticks");
    BATON_COUNTER(elections, "elections");
    BATON_COUNTER(triggers, "triggers");
    BATON_COUNTER(terms_won, "termsWon");
    BATON_COUNTER(step_downs, "stepDowns");
    BATON_COUNTER(steals, "steals");
    BATON_COUNTER(abdicate_requests_sent, "abdicateRequestsSent");
    BATON_COUNTER(lock_requests, "lockRequests");
    BATON_COUNTER(lease_attempts, "leaseAttempts");
    BATON_COUNTER(backoffs, "backoffs");
    BATON_COUNTER(epoch_conflicts, "epochConflicts");
    BATON_COUNTER(clock_jumps, "clockJumps");
    BATON_COUNTER(storage_failures, "storageFailures");
#undef BATON_COUNTER
    val reasons = val::object();
    for (size_t i = 0; i < m.step_down_reasons.size(); ++i) {
      if (m.step_down_reasons[i]) reasons.set(to_string(static_cast<Reason>(i)), static_cast<double>(m.step_down_reasons[i]));
    }
    o.set("stepDownReasons", reasons);
    return o;
  }
  val log() const {
    val list = val::array();
    for (const auto& t : node_.log()) list.call<void>("push", transition_to_js(t));
    return list;
  }
  int authority() const { return static_cast<int>(node_.authority()); }
  bool degraded() const { return node_.degraded(); }
  bool fence_admit(const std::string& resource, double epoch) {
    return node_.fence().admit(resource, static_cast<uint64_t>(epoch)) == FenceVerdict::accepted;
  }
  double fence_highest(const std::string& resource) const {
    return static_cast<double>(const_cast<Node&>(node_).fence().highest(resource));
  }

 private:
  static Event simple(EventKind kind, double now, const std::string& resource = std::string()) {
    Event e;
    e.kind = kind;
    e.now_ms = now;
    e.resource = resource;
    return e;
  }
  static LeaseRecord lease_from(const val& o) {
    LeaseRecord r;
    if (o.isUndefined() || o.isNull()) return r;
    r.present = true;
    r.owner = o["owner"].as<std::string>();
    r.generation = static_cast<uint32_t>(number_or(o, "generation", 0));
    r.epoch = static_cast<uint64_t>(number_or(o, "epoch", 0));
    r.expires_ms = number_or(o, "expiresMs", 0);
    return r;
  }
  int run(const Event& e) {
    effects_ = node_.step(e);
    return static_cast<int>(effects_.size());
  }

  Node node_;
  std::vector<Effect> effects_;
};

}  // namespace
}  // namespace baton

EMSCRIPTEN_BINDINGS(baton) {
  using namespace emscripten;
  using baton::Core;
  class_<Core>("Core")
      .constructor<val>()
      .function("_tick", &Core::tick)
      .function("_message", &Core::message)
      .function("_join", &Core::join)
      .function("_resourceEvent", &Core::resource_event)
      .function("_epochAllocated", &Core::epoch_allocated)
      .function("_leaseResult", &Core::lease_result)
      .function("_lifecycle", &Core::lifecycle)
      .function("_plainEvent", &Core::plain_event)
      .function("_effectKind", &Core::effect_kind)
      .function("_effectResource", &Core::effect_resource)
      .function("_effectBytes", &Core::effect_bytes)
      .function("_effectLockMode", &Core::effect_lock_mode)
      .function("_effectEpoch", &Core::effect_epoch)
      .function("_effectReason", &Core::effect_reason)
      .function("_nextDeadline", &Core::next_deadline)
      .function("_leaseDecide", &Core::lease_decide)
      .function("_view", &Core::view)
      .function("_presence", &Core::presence)
      .function("_metrics", &Core::metrics)
      .function("_log", &Core::log)
      .function("_authority", &Core::authority)
      .function("_degraded", &Core::degraded)
      .function("_fenceAdmit", &Core::fence_admit)
      .function("_fenceHighest", &Core::fence_highest);
}
