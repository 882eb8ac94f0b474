// libFuzzer target: the simulation's world (tests/sim/world.h), driven by the input
// instead of by seeded random faults. The bytes become a scenario (the command language
// of tests/core/testdata/README.md): tabs opening, closing, crashing, freezing, hiding,
// going offline, abdicating; failing, hanging and slow storage; clock jumps; frames held
// for a while, then delivered or dropped; hostile frames. Then the faults end, a fresh tab opens,
// and the liveness bound is checked. Every invariant the world checks after each step is
// checked here too. On a violation the target prints the scenario, which
// `baton_scenarios --rewrite FILE` replays with its trace, and aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "interpreter.h"

using namespace baton;

namespace {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  template <size_t N>
  const char* pick(const char* const (&options)[N]) { return options[byte() % N]; }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

// What the generator knows of each tab, so that it only asks what a browser can do
// (a crashed tab never thaws, only a frozen one does).
enum class TabState : uint8_t { running, frozen, gone };

// Tabs open with the joins the simulation's tabs make; a later app version may appear.
constexpr int kMaxTabs = 6;
const char* const kResources[] = {"ws", "sync"};
const char* const kVersions[] = {"1.0", "1.1"};

class Fuzz {
 public:
  explicit Fuzz(Input& in) : in_(in) {}

  void run() {
    const char* const authorities[] = {"web-locks", "lease", "broadcast"};
    uint8_t flags = in_.byte();
    command(std::string("world seed=") + std::to_string(in_.byte()) + " authority=" + in_.pick(authorities) +
            (flags & 1 ? " jitter" : "") + (flags & 2 ? " network-faults" : ""));
    add(true);
    while (!in_.empty() && script_.size() < 200) step();
    command("storage works delay=0.05ms");  // the default: the liveness bound assumes it
    command("end-faults");
    add(true);  // like the simulation: someone eligible for every resource is alive
    command("advance 15s");  // twice the longest liveness bound (the lease's 7.2 s)
    command("liveness");
  }

 private:
  void step() {
    uint8_t op = in_.byte();
    int t = tab();
    std::string name = "t" + std::to_string(t);
    const char* res = in_.pick(kResources);
    switch (op % 16) {
      case 0: add(false); break;
      case 1: case 2: command("advance " + std::to_string(in_.byte() * (op & 0x80 ? 100 : 5)) + "ms"); break;
      case 3: if (state(t) == TabState::running) { command("crash " + name); states_[t] = TabState::gone; } break;
      case 4: if (state(t) == TabState::running) { command("close " + name); states_[t] = TabState::gone; } break;
      case 5:
        if (state(t) == TabState::running) { command("freeze " + name + (in_.byte() & 1 ? " silent" : "")); states_[t] = TabState::frozen; }
        break;
      case 6: if (state(t) == TabState::frozen) { command("thaw " + name); states_[t] = TabState::running; } break;
      case 7: {
        const char* const kinds[] = {"hide", "show", "offline", "online", "session-changed"};
        if (state(t) == TabState::running) command(std::string(in_.pick(kinds)) + " " + name);
        break;
      }
      case 8: if (state(t) == TabState::running) command("abdicate " + name + " " + res); break;
      case 9: {
        const char* const modes[] = {"works", "works", "broken", "hung"};
        command(std::string("storage ") + in_.pick(modes) + " delay=" + std::to_string(in_.byte() * 10) + "ms");
        break;
      }
      case 10: command("clock-jump " + std::to_string((static_cast<int>(in_.byte()) - 128) * 500) + "ms"); break;
      case 11: {
        // Frames held for less than a suspect timeout, then delivered late or lost: a
        // longer hold is a partition, which one browser's BroadcastChannel never has.
        std::string from = in_.byte() & 1 ? " from=" + name : "";
        std::string to = in_.byte() & 1 ? " to=t" + std::to_string(tab()) : "";
        command("hold" + from + to);
        command("advance " + std::to_string(in_.byte() * 8) + "ms");
        command((in_.byte() & 1 ? "deliver" : "drop") + from + to);
        command("unhold");
        break;
      }
      case 12:
        if (state(t) == TabState::running) command("leave " + name + " " + res);
        break;
      case 13:
        // A bit of the op left free by `op % 16` makes the join observe only.
        if (state(t) == TabState::running) {
          command(std::string("join ") + name + " " + res + (res == std::string("ws") ? " cap=ws.owner.v1 prefer-visible" : "") +
                  (op & 0x10 ? " observe" : ""));
        }
        break;
      case 14: hostile_to(name, t); break;
      default: hostile_presence(); break;
    }
  }

  // add tN: opens a tab as the simulation does (`fresh`: capable and of the newest version).
  void add(bool fresh) {
    if (!fresh && states_.size() >= kMaxTabs) return;
    int t = static_cast<int>(states_.size());
    std::string name = "t" + std::to_string(t);
    bool capable = fresh || in_.byte() % 4 != 0;
    const char* version = fresh ? newest_ : in_.pick(kVersions);
    if (std::string(version) == "1.1") newest_ = "1.1";
    command("add " + name + (capable ? " caps=ws.owner.v1" : "") + " version=" + version + (!fresh && in_.byte() & 1 ? " hidden" : "") + " join=");
    command("join " + name + " ws cap=ws.owner.v1 prefer-visible");
    command("join " + name + " sync");
    states_.push_back(TabState::running);
  }

  void hostile_to(const std::string& name, int t) {
    if (state(t) == TabState::gone) return;
    const char* const kinds[] = {"junk", "oversized", "foreign-version", "claim", "abdicate", "flood"};
    std::string kind = in_.pick(kinds);
    std::string line = "hostile " + name + " " + kind;
    if (in_.byte() & 1) line += " from=t" + std::to_string(tab());  // in a real tab's name
    if (kind == "claim") line += std::string(" claim=") + in_.pick(kResources) + "@" + std::to_string(in_.byte() % 8) + (in_.byte() & 1 ? " hidden" : "");
    if (kind == "abdicate") line += std::string(" res=") + in_.pick(kResources);
    if (kind == "flood") line += " count=" + std::to_string(in_.byte());
    command(line);
  }

  void hostile_presence() {
    std::string line = "hostile all presence";
    if (in_.byte() & 1) line += " from=t" + std::to_string(tab());
    uint8_t f = in_.byte();
    if (f & 1) line += " gen=4294967295";
    if (f & 2) line += " version=999";
    if (f & 4) line += " tick=" + std::to_string(uint64_t{1} << (in_.byte() % 41));
    if (f & 8) line += " rising";
    if (f & 16) line += " frozen";
    line += " for=" + std::to_string(in_.byte() * 20) + "ms";
    command(line);
  }

  int tab() { return states_.empty() ? 0 : in_.byte() % static_cast<int>(states_.size()); }
  TabState state(int t) const { return t < static_cast<int>(states_.size()) ? states_[t] : TabState::gone; }

  // Runs one command; a command the world refuses, or a broken invariant, ends the run
  // with the scenario so far.
  void command(const std::string& line) {
    script_.push_back(line);
    std::string out = interpreter_.run(line);
    if (interpreter_.error()) fail("the command was refused: " + out);
    if (interpreter_.violated()) fail(interpreter_.violations().front());
  }

  void fail(const std::string& why) {
    std::fprintf(stderr, "fuzz_world: %s. The scenario:\n", why.c_str());
    for (const auto& line : script_) std::fprintf(stderr, "%s\n----\nok\n\n", line.c_str());
    std::abort();
  }

  Input& in_;
  scenario::Interpreter interpreter_{false};
  std::vector<TabState> states_;
  std::vector<std::string> script_;
  const char* newest_ = "1.0";
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Fuzz(in).run();
  return 0;
}
