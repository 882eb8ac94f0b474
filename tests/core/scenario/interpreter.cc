#include "interpreter.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "frames.h"

namespace baton::scenario {
namespace {

// Thrown by a command that cannot run; becomes its "error: ..." output.
struct CommandError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Authority authority_named(const std::string& name) {
  for (Authority a : {Authority::web_locks, Authority::lease, Authority::broadcast}) {
    if (name == to_string(a)) return a;
  }
  throw CommandError("unknown authority " + name + " (web-locks, lease, broadcast)");
}

}  // namespace

bool parse_ms(const std::string& text, double& out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  std::string unit(end);
  if (unit == "s") v *= 1000;
  else if (unit != "ms" && !unit.empty()) return false;
  out = v;
  return true;
}

sim::World& Interpreter::world() {
  if (!world_) {
    options_.initial_tabs = 0;
    world_ = std::make_unique<sim::World>(options_);
    world_->set_network_faults(false);
    if (trace_) world_->set_trace([this](const std::string& line) { out_.push_back(line); });
  }
  return *world_;
}

int Interpreter::tab(const std::string& name) {
  int i = world().find_tab(name);
  if (i < 0) throw CommandError("no tab named " + name);
  return i;
}

void Interpreter::fail(const std::string& why) { throw CommandError(why); }

std::string Interpreter::run(const std::string& line) {
  out_.clear();
  Command c = split(line);
  auto needs = [&](size_t n) {
    if (c.args.size() < n) fail(c.name + " needs " + std::to_string(n) + " argument(s)");
  };
  auto duration = [&](const std::string& text) {
    double ms = 0;
    if (!parse_ms(text, ms)) fail("not a duration: " + text);
    return ms;
  };
  try {
    if (c.name == "world") configure(c);
    else if (c.name == "add") add(c);
    else if (c.name == "join") join(c);
    else if (c.name == "leave") { needs(2); world().leave(tab(c.args[0]), c.args[1]); }
    else if (c.name == "advance") { needs(1); world().run_until(world().now_ms() + duration(c.args[0])); }
    else if (c.name == "at") { needs(1); world().run_until(duration(c.args[0])); }
    else if (c.name == "crash") { needs(1); world().crash(tab(c.args[0])); }
    else if (c.name == "close") { needs(1); world().close(tab(c.args[0])); }
    else if (c.name == "freeze") {
      bool silent = c.flag("silent");
      needs(1);
      world().freeze(tab(c.args[0]), !silent);
    }
    else if (c.name == "thaw") { needs(1); world().thaw(tab(c.args[0])); }
    else if (c.name == "hide" || c.name == "show") { needs(1); world().set_visible(tab(c.args[0]), c.name == "show"); }
    else if (c.name == "offline" || c.name == "online" || c.name == "session-changed") {
      needs(1);
      Event e;
      e.kind = c.name == "offline" ? EventKind::offline : c.name == "online" ? EventKind::online : EventKind::session_changed;
      world().send(tab(c.args[0]), e);
    }
    else if (c.name == "abdicate") {
      needs(2);
      Event e;
      e.kind = EventKind::abdicate;
      e.resource = c.args[1];
      world().send(tab(c.args[0]), e);
    }
    else if (c.name == "storage") {
      needs(1);
      const std::string& m = c.args[0];
      if (c.has("delay")) world().set_storage_delay(duration(c.get("delay")));
      if (m == "works") world().set_storage(sim::StorageMode::works);
      else if (m == "broken") world().set_storage(sim::StorageMode::broken);
      else if (m == "hung") world().set_storage(sim::StorageMode::hung);
      else fail("storage is works, broken or hung");
    }
    else if (c.name == "clock-jump") { needs(1); world().jump_clock(duration(c.args[0])); }
    else if (c.name == "hold") world().hold(c.get("from"), c.get("to"));
    else if (c.name == "unhold") world().unhold();
    else if (c.name == "deliver" || c.name == "drop") {
      size_t n = c.name == "deliver" ? world().deliver(c.get("from"), c.get("to")) : world().drop(c.get("from"), c.get("to"));
      out_.push_back(std::string(c.name == "deliver" ? "delivers " : "drops ") + std::to_string(n) + " held frame(s)");
      world().run_until(world().now_ms());
    }
    else if (c.name == "hostile") hostile(c);
    else if (c.name == "record") { needs(1); tab(c.args[0]); world().record_frames(c.args[0]); }
    else if (c.name == "replay") replay(duration(c.get("every", "1s")));
    else if (c.name == "end-faults") world().end_faults();
    else if (c.name == "liveness") world().check_liveness();
    else if (c.name == "trace") {
      needs(1);
      if (c.args[0] != "frames" && c.args[0] != "quiet") fail("trace frames or trace quiet");
      world().trace_all_frames(c.args[0] == "frames");
    }
    else if (c.name == "state") print_state(c);
    else if (c.name == "metrics") print_metrics(c);
    else if (c.name == "locks" || c.name == "lease" || c.name == "fence") {
      for (const auto& res : world().resources()) {
        out_.push_back(c.name == "locks" ? world().lock_state(res)
                       : c.name == "lease" ? world().lease_state(res)
                                           : world().fence_state(res));
      }
    }
    else fail("unknown command " + c.name);
  } catch (const CommandError& e) {
    error_ = true;
    return std::string("error: ") + e.what();
  }
  std::string text;
  for (const auto& l : out_) text += (text.empty() ? "" : "\n") + l;
  return text.empty() ? "ok" : text;
}

// world [seed=N] [authority=web-locks|lease|broadcast] [max-tabs=N] [jitter]
//       [heartbeat=DURATION] [suspect=DURATION] [network-faults] [no-fence] [no-steal]:
//       before any tab.
void Interpreter::configure(Command& c) {
  if (world_) fail("world must come before every other command");
  options_.seed = std::strtoull(c.get("seed", "1").c_str(), nullptr, 10);
  options_.authority = authority_named(c.get("authority", "web-locks"));
  options_.max_tabs = std::atoi(c.get("max-tabs", "8").c_str());
  options_.jitter = c.flag("jitter");
  for (auto [key, ms] : {std::pair{"heartbeat", &options_.heartbeat_ms}, std::pair{"suspect", &options_.suspect_ms}}) {
    if (c.has(key) && !parse_ms(c.get(key), *ms)) fail(std::string("not a duration: ") + c.get(key));
  }
  bool faults = c.flag("network-faults");
  options_.fence = !c.flag("no-fence");
  options_.steal = !c.flag("no-steal");
  if (!c.args.empty()) fail("unknown world flag " + c.args[0]);
  world().set_network_faults(faults);
}

// add NAME... [caps=a,b] [version=V] [hidden] [join=ws,sync]: joins ws unless join= says.
void Interpreter::add(Command& c) {
  sim::TabSpec spec;
  spec.capabilities = list(c.get("caps"));
  spec.app_version = c.get("version", "1.0");
  spec.visible = !c.flag("hidden");
  std::vector<std::string> joins = list(c.get("join", "ws"));
  if (c.args.empty()) fail("add needs a tab name");
  for (const auto& name : c.args) {
    if (world().find_tab(name) >= 0) fail("a tab named " + name + " exists");
    spec.name = name;
    int i = world().open_tab(spec);
    for (const auto& res : joins) world().join(i, res, Policy{});
  }
}

// join NAME RES [cap=C] [prefer-visible] [visible-only] [needs-network] [any-version] [observe]
void Interpreter::join(Command& c) {
  Policy p;
  p.required_capability = c.get("cap");
  p.prefer_visible = c.flag("prefer-visible");
  p.allow_hidden = !c.flag("visible-only");
  p.requires_network = c.flag("needs-network");
  p.newest_app_only = !c.flag("any-version");
  p.observe_only = c.flag("observe");
  if (c.args.size() != 2) fail("join NAME RESOURCE [options]");
  world().join(tab(c.args[0]), c.args[1], p);
}

// hostile TO junk|oversized|foreign-version|claim|abdicate|goodbye|flood [from=S]
//         [claim=RES@EPOCH] [res=RES] [successor=NAME] [tick=N] [count=N]: frames no honest
//         tab sends, delivered to TO now (a goodbye names `successor`; a claim or a goodbye
//         carries tick `tick`).
// hostile all presence [from=S] [gen=N] [version=V] [tick=N] [rising] [frozen] [for=DURATION]:
//         a presence frame to every tab, sent again every 125 ms for DURATION (a steady
//         stream), its tick one higher each time with `rising` (forged liveness).
void Interpreter::hostile(Command& c) {
  bool rising = c.flag("rising");
  bool frozen = c.flag("frozen");
  bool hidden = c.flag("hidden");  // hostile NAME claim: the claimant says it is hidden
  if (c.args.size() != 2) fail("hostile TO KIND [options]");
  const std::string& kind = c.args[1];
  std::string sender = c.get("from", "mallory");
  if (kind == "presence") {
    if (c.args[0] != "all") fail("hostile all presence [options]");
    wire::Frame f = sim::frame_from(sender, wire::Kind::presence);
    f.generation = static_cast<uint32_t>(std::strtoul(c.get("gen", "1").c_str(), nullptr, 10));
    f.app_version = c.get("version", "1.0");
    f.tick_seq = std::strtoull(c.get("tick", "0").c_str(), nullptr, 10);
    if (frozen) f.lifecycle = Lifecycle::frozen;
    constexpr double kStreamEveryMs = 125;
    double stream_ms = 0;
    if (!c.get("for").empty() && !parse_ms(c.get("for"), stream_ms)) fail("not a duration: " + c.get("for"));
    double end = world().now_ms() + stream_ms;
    for (;; f.tick_seq += rising ? 1 : 0) {
      std::vector<uint8_t> bytes = wire::encode(f);
      for (size_t i = 0; i < world().tab_count(); ++i) world().inject(static_cast<int>(i), bytes);
      world().run_until(world().now_ms());
      // A violation stops the world's clock: the stream ends with it.
      if (!world().report().violations.empty() || world().now_ms() + kStreamEveryMs > end) break;
      world().run_until(world().now_ms() + kStreamEveryMs);
    }
    return;
  }
  if (rising || frozen) fail("rising and frozen are for hostile all presence");
  int to = tab(c.args[0]);
  uint64_t tick = std::strtoull(c.get("tick", "0").c_str(), nullptr, 10);
  if (kind == "junk") {
    world().inject(to, {1, 2, 3});
  } else if (kind == "oversized") {
    world().inject(to, std::vector<uint8_t>(wire::kMaxFrameBytes + 1, wire::kMagic));
  } else if (kind == "foreign-version") {
    wire::Frame f = sim::frame_from(sender, wire::Kind::presence);
    f.version = wire::kProtocolVersion + 1;
    world().inject(to, wire::encode(f));
  } else if (kind == "claim") {
    std::string claim = c.get("claim", "ws@1");
    auto at = claim.find('@');
    if (at == std::string::npos) fail("claim=RESOURCE@EPOCH");
    wire::Frame f = sim::frame_from(sender, wire::Kind::heartbeat);
    f.tick_seq = tick;
    if (hidden) f.lifecycle = Lifecycle::hidden;
    f.claims.push_back(wire::Claim{claim.substr(0, at), std::strtoull(claim.c_str() + at + 1, nullptr, 10)});
    world().inject(to, wire::encode(f));
  } else if (kind == "abdicate") {
    wire::Frame f = sim::frame_from(sender, wire::Kind::abdicate_request);
    f.subject = c.get("res", "ws");
    f.target = world().name(to);
    world().inject(to, wire::encode(f));
  } else if (kind == "goodbye") {
    wire::Frame f = sim::frame_from(sender, wire::Kind::goodbye);
    f.subject = c.get("res", "ws");
    f.target = c.get("successor");
    f.tick_seq = tick;
    world().inject(to, wire::encode(f));
  } else if (kind == "flood") {
    int count = std::atoi(c.get("count", "1000").c_str());
    for (int i = 0; i < count; ++i) world().inject(to, wire::encode(sim::frame_from(sender + "-" + std::to_string(i), wire::Kind::presence)));
  } else {
    fail("hostile kinds: junk, oversized, foreign-version, claim, abdicate, goodbye, flood, presence");
  }
  world().run_until(world().now_ms());
}

// replay [every=DURATION]: the frames `record` kept, sent again in their order to every
// tab, one every DURATION (default 1 s), as a hostile page that recorded the channel would.
void Interpreter::replay(double every_ms) {
  const auto recording = world().recording();
  out_.push_back("replays " + std::to_string(recording.size()) + " recorded frame(s)");
  for (size_t i = 0; i < recording.size(); ++i) {
    if (i > 0) world().run_until(world().now_ms() + every_ms);
    for (size_t t = 0; t < world().tab_count(); ++t) world().inject(static_cast<int>(t), recording[i]);
    world().run_until(world().now_ms());
  }
}

// state [NAME...]: each tab's view of each resource it joined.
void Interpreter::print_state(const Command& c) {
  sim::World& w = world();
  for (size_t i = 0; i < w.tab_count(); ++i) {
    int t = static_cast<int>(i);
    if (!c.args.empty() && std::find(c.args.begin(), c.args.end(), w.name(t)) == c.args.end()) continue;
    const Election& election = w.election(t);
    std::string head = w.name(t) + " (" + w.tab_state(t);
    if (election.authority() != options_.authority) head += std::string(", ") + to_string(election.authority());
    if (election.degraded()) head += ", degraded";
    head += ")";
    bool any = false;
    for (const auto& res : w.resources()) {
      if (!election.joined(res)) continue;
      any = true;
      ResourceView v = election.view(res);
      std::string line = head + " " + res + ": " + to_string(v.role) + " (" + to_string(v.reason) + ")";
      if (v.role == Role::leader) line += " epoch " + std::to_string(v.epoch);
      line += v.leader.empty() ? ", no leader known" : ", leader " + v.leader + " epoch " + std::to_string(v.leader_epoch);
      if (!v.eligible) line += ", not eligible";
      out_.push_back(line);
    }
    if (!any) out_.push_back(head);
  }
}

// metrics NAME: the counters that are not zero, by name.
void Interpreter::print_metrics(const Command& c) {
  if (c.args.size() != 1) fail("metrics NAME");
  const Metrics& m = world().election(tab(c.args[0])).metrics();
  const std::pair<const char*, uint64_t> counters[] = {
      {"frames-sent", m.frames_sent},
      {"frames-received", m.frames_received},
      {"dropped-malformed", m.dropped_malformed},
      {"dropped-oversized", m.dropped_oversized},
      {"dropped-foreign-version", m.dropped_foreign_version},
      {"dropped-stale-generation", m.dropped_stale_generation},
      {"dropped-old-frame", m.dropped_old_frame},
      {"dropped-forged-epoch", m.dropped_forged_epoch},
      {"dropped-table-full", m.dropped_table_full},
      {"duplicate-id", m.duplicate_id},
      {"terms-won", m.terms_won},
      {"step-downs", m.step_downs},
      {"steals", m.steals},
      {"abdicate-requests-sent", m.abdicate_requests_sent},
      {"lock-requests", m.lock_requests},
      {"lease-attempts", m.lease_attempts},
      {"backoffs", m.backoffs},
      {"epoch-conflicts", m.epoch_conflicts},
      {"clock-jumps", m.clock_jumps},
      {"storage-failures", m.storage_failures},
  };
  std::string line;
  for (const auto& [name, value] : counters) {
    // Frame and tick counts depend on every heartbeat: too brittle for a trace.
    if (value == 0 || name == std::string("frames-sent") || name == std::string("frames-received")) continue;
    line += (line.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  }
  for (size_t r = 0; r < m.step_down_reasons.size(); ++r) {
    if (m.step_down_reasons[r]) {
      line += std::string(line.empty() ? "" : " ") + "step-down:" + to_string(static_cast<Reason>(r)) + "=" +
              std::to_string(m.step_down_reasons[r]);
    }
  }
  out_.push_back(world().name(tab(c.args[0])) + ": " + (line.empty() ? "all zero" : line));
}

}  // namespace baton::scenario
