// Runs the simulation: many seeded runs across the three authorities, or one seed to
// replay. Prints a failing seed with the command that replays it.
//
//   baton_sim --steps 1000000            runs seeds until a million steps are done
//   baton_sim --seed 42 --mode lease     replays one run
//   baton_sim --no-fence --expect-violation   proves the checks catch a stale owner
//   baton_sim --trust-claims --expect "durable floor"   proves that check catches its bug
//   baton_sim --seed 26 --mode broadcast --no-fence --write-scenario FILE
//                                        writes the run as a scenario file (tests/core/testdata)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "interpreter.h"
#include "script.h"
#include "world.h"

using baton::Authority;
using baton::sim::Options;
using baton::sim::Report;
using baton::sim::World;

namespace {

struct Args {
  uint64_t steps = 300000;
  long seed = -1;
  uint64_t first_seed = 1;
  std::vector<Authority> modes{Authority::web_locks, Authority::lease, Authority::broadcast};
  bool fence = true;
  bool steal = true;
  bool storage_works = true;
  bool honest_store = true;
  bool hostile = true;
  bool store_faults = true;
  bool pass_observe_only = true;
  baton::Mutations mutations;
  bool expect_violation = false;
  std::string expect;  // with --expect: the violation must contain this text
  std::string flags;   // the flags that change the run, for the replay command
  bool trace = false;
  const char* scenario_file = nullptr;
};

bool parse_mode(const char* s, std::vector<Authority>& out) {
  if (!std::strcmp(s, "all")) return true;
  if (!std::strcmp(s, "locks")) out = {Authority::web_locks};
  else if (!std::strcmp(s, "lease")) out = {Authority::lease};
  else if (!std::strcmp(s, "broadcast")) out = {Authority::broadcast};
  else return false;
  return true;
}

const char* mode_flag(Authority a) {
  switch (a) {
    case Authority::web_locks: return "locks";
    case Authority::lease: return "lease";
    case Authority::broadcast: return "broadcast";
  }
  return "?";
}

// The run's random faults as scenario commands, each with the trace it prints.
bool write_scenario(const Args& a, Authority mode, const std::vector<std::string>& commands) {
  using namespace baton::scenario;
  std::string flags = std::string(a.fence ? "" : " no-fence") + (a.steal ? "" : " no-steal");
  Script script;
  Step world;
  world.preamble = "# Written by baton_sim --seed " + std::to_string(a.seed) + " --mode " + mode_flag(mode) +
                   (a.fence ? "" : " --no-fence") + (a.steal ? "" : " --no-steal") +
                   (a.storage_works ? "" : " --storage-broken") +
                   " --write-scenario\n"
                   "# (a run without hostile frames and store faults, as with --no-hostile --perfect-store):\n"
                   "# the run's random faults as commands, replayed with the same network jitter.\n";
  world.command = "world seed=" + std::to_string(a.seed) + " authority=" + baton::to_string(mode) +
                  " jitter network-faults" + flags;
  script.steps.push_back(world);
  if (!a.storage_works) script.steps.push_back(Step{"", "storage broken", 0, ""});
  for (const auto& c : commands) script.steps.push_back(Step{"", c, 0, ""});
  Interpreter interpreter;
  std::vector<std::string> outputs;
  for (const auto& step : script.steps) outputs.push_back(interpreter.run(step.command));
  std::ofstream(a.scenario_file, std::ios::binary) << render(script, outputs);
  std::printf("sim: wrote %s (%zu commands)%s\n", a.scenario_file, script.steps.size(),
              interpreter.error() ? ", but a command failed to replay" : "");
  return !interpreter.error();
}

int usage() {
  std::fprintf(stderr,
               "usage: baton_sim [--steps N] [--seed S] [--first-seed S] [--mode locks|lease|broadcast|all]\n"
               "                 [--no-hostile] [--perfect-store] [--storage-broken] [--trace]\n"
               "  deliberate bugs: [--no-fence] [--no-steal] [--broken-store] [--trust-claims] [--postpone-tick]\n"
               "                   [--lease-term-to-expiry]\n"
               "                   [--trust-versions] [--drop-observe-only]\n"
               "                   with [--expect-violation | --expect TEXT]\n"
               "                 [--write-scenario FILE]   (with --seed and one --mode)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (k == "--steps") { const char* v = value(); if (!v) return usage(); a.steps = std::strtoull(v, nullptr, 10); }
    else if (k == "--seed") { const char* v = value(); if (!v) return usage(); a.seed = std::strtol(v, nullptr, 10); }
    else if (k == "--first-seed") { const char* v = value(); if (!v) return usage(); a.first_seed = std::strtoull(v, nullptr, 10); }
    else if (k == "--mode") { const char* v = value(); if (!v || !parse_mode(v, a.modes)) return usage(); }
    else if (k == "--no-fence") a.fence = false;
    else if (k == "--no-steal") a.steal = false;
    else if (k == "--storage-broken") a.storage_works = false;
    else if (k == "--broken-store") a.honest_store = false;
    else if (k == "--trust-claims") a.mutations.trust_claims = true;
    else if (k == "--postpone-tick") a.mutations.answer_postpones_tick = true;
    else if (k == "--lease-term-to-expiry") a.mutations.lease_term_to_expiry = true;
    else if (k == "--trust-versions") a.mutations.trust_versions = true;
    else if (k == "--drop-observe-only") a.pass_observe_only = false;
    else if (k == "--no-hostile") a.hostile = false;
    else if (k == "--perfect-store") a.store_faults = false;
    else if (k == "--expect") { const char* v = value(); if (!v) return usage(); a.expect = v; a.expect_violation = true; }
    else if (k == "--expect-violation") a.expect_violation = true;
    else if (k == "--trace") a.trace = true;
    else if (k == "--write-scenario") { a.scenario_file = value(); if (!a.scenario_file) return usage(); }
    else return usage();
    bool changes_run = k != "--steps" && k != "--seed" && k != "--first-seed" && k != "--mode" && k != "--trace" &&
                       k != "--expect" && k != "--expect-violation" && k != "--write-scenario";
    if (changes_run) a.flags += " " + k;
  }
  if (a.scenario_file && (a.seed < 0 || a.modes.size() != 1)) return usage();
  // Scenario files have no commands for hostile frames and store faults yet: a run
  // written out as a scenario goes without them.
  if (a.scenario_file) a.hostile = a.store_faults = false;

  uint64_t total_steps = 0, runs = 0, violations = 0, expected_violations = 0, handovers = 0, rejected = 0;
  uint64_t hostile_frames = 0, store_faults = 0, degraded_terms = 0, takeovers_checked = 0;
  double worst_gap = 0, worst_stale = 0;
  auto started = std::chrono::steady_clock::now();
  uint64_t seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : a.first_seed;
  while (true) {
    for (Authority mode : a.modes) {
      Options o;
      o.seed = seed;
      o.authority = mode;
      o.fence = a.fence;
      o.steal = a.steal;
      o.storage_works = a.storage_works;
      o.honest_store = a.honest_store;
      o.mutations = a.mutations;
      o.pass_observe_only = a.pass_observe_only;
      if (a.hostile) o.hostile_every_ms = 400;
      if (a.store_faults) o.store_fault = 0.03;
      World world(o);
      if (a.trace) world.set_trace([](const std::string& line) { std::printf("%s\n", line.c_str()); });
      std::vector<std::string> commands;
      if (a.scenario_file) world.set_recorder([&commands](const std::string& c) { commands.push_back(c); });
      Report r = world.run();
      if (a.scenario_file && !write_scenario(a, mode, commands)) return 1;
      ++runs;
      total_steps += r.steps;
      handovers += r.handovers;
      rejected += r.effects_rejected;
      hostile_frames += r.hostile_frames;
      store_faults += r.store_faults;
      degraded_terms += r.degraded_terms;
      takeovers_checked += r.takeovers_checked;
      worst_gap = std::max(worst_gap, r.longest_leaderless_after_faults_ms);
      worst_stale = std::max(worst_stale, r.worst_stale_owner_ms);
      bool expected =
          a.expect_violation && !r.violations.empty() && r.violations.front().find(a.expect) != std::string::npos;
      if (!r.violations.empty()) {
        ++violations;
        if (expected) ++expected_violations;
        std::printf("VIOLATION seed=%llu mode=%s: %s\n  replay: baton_sim --seed %llu --mode %s%s\n",
                    static_cast<unsigned long long>(seed), mode_flag(mode), r.violations.front().c_str(),
                    static_cast<unsigned long long>(seed), mode_flag(mode), a.flags.c_str());
        if (expected) break;
      }
    }
    if (a.seed >= 0 || total_steps >= a.steps || expected_violations > 0) break;
    ++seed;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("sim: %llu runs, %llu steps in %.2f s (%.0f steps/s), %llu hand-overs, %llu stale effects fenced off\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(total_steps), secs,
              secs > 0 ? total_steps / secs : 0.0, static_cast<unsigned long long>(handovers),
              static_cast<unsigned long long>(rejected));
  std::printf("sim: longest leaderless gap after faults stop %.1f ms, worst stale-owner window %.1f ms\n", worst_gap,
              worst_stale);
  std::printf("sim: %llu hostile frames, %llu store faults, %llu degraded terms\n",
              static_cast<unsigned long long>(hostile_frames), static_cast<unsigned long long>(store_faults),
              static_cast<unsigned long long>(degraded_terms));
  std::printf("sim: %llu broadcast-only leaders' crashes and silent freezes replaced within the takeover bound, checked\n",
              static_cast<unsigned long long>(takeovers_checked));
  std::printf("sim: %llu runs with violations\n", static_cast<unsigned long long>(violations));
  if (a.expect_violation) {
    bool caught = expected_violations > 0;
    std::printf(caught ? "sim: the deliberate bug was caught\n" : "sim: the deliberate bug went UNNOTICED\n");
    return caught ? 0 : 1;
  }
  return violations == 0 ? 0 : 1;
}
