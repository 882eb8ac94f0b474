// A deterministic simulation of one browser profile: N tabs running the election core
// against simulated Web Locks, BroadcastChannel, localStorage and an IndexedDB lease
// store, driven by one seeded scheduler, with faults. After every step it checks the
// invariants of DESIGN.md; a failing seed replays exactly.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "core/fence.h"
#include "core/node.h"
#include "core/random.h"
#include "core/wire.h"

namespace baton::sim {

struct Options {
  uint64_t seed = 1;
  Authority authority = Authority::web_locks;
  int initial_tabs = 4;
  int max_tabs = 8;
  double fault_ms = 60000;   // faults happen during this much simulated time
  double quiet_ms = 30000;   // then no new faults: a leader must appear within the bound
  // Message faults (probabilities per delivery).
  double loss = 0.02;
  double duplicate = 0.01;
  double reorder = 0.05;     // a delivery delayed by up to 50 ms, overtaking later ones
  // Mean simulated time between tab faults (crash, freeze, close, join, hide, jump...).
  double fault_every_ms = 1500;
  bool storage_works = true;
  // An imperfect store: per operation, the chance of a lost write, a stale read, an
  // answer below the floor it was given (an epoch source going backwards), or a hang.
  double store_fault = 0.03;
  // Hostile same-origin frames (every kind of forgery) during the faults, mean gap.
  double hostile_every_ms = 400;
  // Deliberate bugs, to prove the checks catch them.
  bool fence = true;         // false: the effect receiver accepts stale epochs
  bool steal = true;         // false: the lock manager ignores steal requests
  bool honest_store = true;  // false: the glue reports lost writes and stale reads as durable
  Mutations mutations;       // deliberate bugs inside the core
  size_t max_steps = 0;      // 0: run to the end of fault_ms + quiet_ms
  bool trace = false;
};

struct Report {
  uint64_t steps = 0;
  std::vector<std::string> violations;
  double longest_leaderless_after_faults_ms = 0;  // per resource, from when faults stop
  double worst_stale_owner_ms = 0;                // a running tab leading without authority
  uint64_t handovers = 0;                         // terms won after the first per resource
  uint64_t effects_accepted = 0;
  uint64_t effects_rejected = 0;                  // stale owners stopped by the fence
  uint64_t messages_delivered = 0;
  uint64_t faults = 0;
  uint64_t hostile_frames = 0;
  uint64_t store_faults = 0;
  uint64_t degraded_terms = 0;
};

class World {
 public:
  explicit World(Options options);
  Report run();

  static constexpr const char* kResources[2] = {"ws", "sync"};

 private:
  enum class TabState : uint8_t { running, frozen, crashed, closed };

  struct Tab {
    int index = 0;
    uint64_t instance = 0;  // unique per tab lifetime (ids may repeat across runs, not here)
    std::string id;
    std::unique_ptr<Node> node;
    TabState state = TabState::running;
    bool announced_freeze = false;  // the glue saw `freeze` before the tab stopped
    bool visible = true;
    uint64_t timer_token = 0;      // bumps to cancel the previous timer
    std::map<std::string, uint64_t> lock_request;  // the glue's current request per resource
    double thawed_ms = -1e18;      // when it last thawed (its timers were stopped before)
    // Per resource: the store's last answer to this tab, and whether the monotonic
    // counter persisted it (not a lost write, a stale read or an answer below the floor).
    std::map<std::string, std::pair<uint64_t, bool>> last_answer;
  };

  enum class Kind : uint8_t { timer, deliver, callback, lease_txn, release_crashed, fault, end_faults, hostile };

  struct Scheduled {
    double at;
    uint64_t seq;
    Kind kind;
    int tab;
    uint64_t token;       // timer token or instance
    uint64_t request;     // lock request a lock callback belongs to (0: none)
    Event event;          // for callbacks
    std::vector<uint8_t> bytes;
    bool operator>(const Scheduled& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // Callbacks a frozen tab cannot run yet; they run, in order, when it thaws.
  std::map<int, std::vector<Scheduled>> deferred_;

  struct LockRequest {
    int tab = -1;
    uint64_t id = 0;
  };
  struct LockQueue {
    LockRequest holder;
    std::deque<LockRequest> waiting;
  };

  // Scheduling.
  void schedule(Scheduled s);
  void schedule_timer(Tab& t);
  void schedule_callback(Tab& t, Event e, double latency, uint64_t request = 0);
  double node_now() const { return clock_ms_ + clock_offset_ms_; }

  // Tabs.
  int open_tab();
  void deliver(Tab& t, const Event& e);
  void apply(Tab& t, const std::vector<Effect>& effects);
  void guarded_effects(Tab& t);
  void allocate_epoch(Tab& t, const Effect& fx);
  void on_elected(Tab& t, const Effect& fx);
  void on_deposed(Tab& t, const Effect& fx);
  void process(Scheduled& s);
  void run_lease_txn(Tab& t, const std::string& res);

  // Simulated browser parts.
  void lock_request(Tab& t, const std::string& res, LockMode mode);
  void lock_release(Tab& t, const std::string& res);
  void lock_drop_all(int tab);
  void grant_next(const std::string& res);
  void broadcast(Tab& from, const std::vector<uint8_t>& bytes);
  void lease_try(Tab& t, const std::string& res);

  // Faults.
  void random_fault();
  void freeze(Tab& t, bool announce);
  void thaw(Tab& t);
  void hostile_frame();
  void send_forged(const std::vector<uint8_t>& bytes);

  // Checks.
  void check(double now);
  bool holds_authority(const Tab& t, const std::string& res) const;
  void violation(const std::string& what);

  Options opt_;
  Random rng_;
  double clock_ms_ = 0;
  double clock_offset_ms_ = 1.7e12;  // node time = wall clock, jumps move it
  uint64_t seq_ = 0;
  uint64_t next_instance_ = 1;
  uint64_t next_request_ = 1;
  bool faults_on_ = true;
  double faults_end_ms_ = 0;
  std::priority_queue<Scheduled, std::vector<Scheduled>, std::greater<Scheduled>> queue_;
  std::vector<std::unique_ptr<Tab>> tabs_;
  std::map<std::string, LockQueue> locks_;
  std::map<std::string, uint64_t> epoch_store_;
  std::map<std::string, uint64_t> epoch_issued_;  // highest epoch the store ever answered
  std::map<std::string, uint64_t> clean_term_;    // highest epoch of a term not degraded
  double jumped_ms_ = -1e18;                      // last wall clock jump forwards
  uint64_t forged_seq_ = 1;
  std::vector<uint8_t> replay_;                   // a real frame, for replaying
  std::map<std::string, LeaseRecord> lease_store_;
  Fence receiver_;  // the guarded side effects' receiver (a server)
  std::map<std::string, uint64_t> highest_accepted_;  // what the receiver accepted (--no-fence)
  // (res, epoch) -> the instance that led a term not degraded with it
  std::map<std::pair<std::string, uint64_t>, uint64_t> term_owner_;
  std::map<std::string, uint64_t> terms_won_;
  std::map<std::string, double> leaderless_since_;
  std::map<std::pair<int, std::string>, double> stale_since_;
  Report report_;
};

const char* authority_name(Authority a);

}  // namespace baton::sim
