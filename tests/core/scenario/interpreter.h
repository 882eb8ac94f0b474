// Runs scenario commands against the simulation's world (tests/sim/world.h), one line at
// a time, and returns what each printed: the world's named trace of everything that
// happened, or the state a query asked for. The commands are listed in README.md beside
// the testdata.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "script.h"
#include "world.h"

namespace baton::scenario {

class Interpreter {
 public:
  // Hand-written scenarios read exact times: no jitter unless `world jitter` asks.
  // `trace` false: commands print only what queries ask for (the fuzzer's speed).
  explicit Interpreter(bool trace = true) : trace_(trace) { options_.jitter = false; }

  // The command's output, "ok" if it printed nothing, or "error: ..." for a command
  // that cannot run (and then error() is true).
  std::string run(const std::string& line);
  // A deliberate bug in every tab's core (before the first command), to show that the
  // world's checks catch it.
  void set_mutations(const Mutations& m) { options_.mutations = m; }

  bool error() const { return error_; }
  // Invariant violations are failures, except where the scenario built in a deliberate
  // bug (no-fence, no-steal) to show that the checks catch it.
  bool violated() const { return world_ && !world_->report().violations.empty(); }
  const std::vector<std::string>& violations() const { return world_->report().violations; }
  bool deliberate_bug() const { return !options_.fence || !options_.steal; }

 private:
  sim::World& world();
  int tab(const std::string& name);
  void configure(Command& c);
  void add(Command& c);
  void join(Command& c);
  void hostile(Command& c);
  void replay(double every_ms);
  void print_state(const Command& c);
  void print_metrics(const Command& c);
  void fail(const std::string& why);

  bool trace_;
  sim::Options options_;
  std::unique_ptr<sim::World> world_;
  std::vector<std::string> out_;
  bool error_ = false;
};

// Durations are written with units: 250ms, 3s, 1.5s; a plain number is milliseconds.
bool parse_ms(const std::string& text, double& out);

}  // namespace baton::scenario
