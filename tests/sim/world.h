// A deterministic simulation of one browser profile: N tabs running the election core
// against simulated Web Locks, BroadcastChannel, a durable epoch counter and an
// IndexedDB lease store, driven by one seeded scheduler, with faults. After every step
// it checks the invariants (check(): safety through the fence, bounded stale ownership;
// at the end, the liveness bound); a failing seed replays exactly.
//
// Two drivers share this world: `run()` injects seeded random faults (baton_sim), and
// the scenario interpreter (tests/core/scenario/) calls the fault and network methods
// below one command at a time. Random faults draw from their own stream, so a run
// written out as a scenario (the faults as commands) replays the same network jitter.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "core/fence.h"
#include "core/election.h"
#include "core/random.h"
#include "core/wire.h"
#include "names.h"

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
  // An imperfect store (run() only): per operation while faults last, the chance of a
  // hang, a lost write, a stale read or an answer below the floor it was given (an
  // epoch source going backwards). 0: off.
  double store_fault = 0;
  // Hostile same-origin frames of every kind while faults last (run() only), mean gap.
  // 0: off.
  double hostile_every_ms = 0;
  // The chance that a tab opened while faults last only observes "ws" (as the
  // compatibility APIs' observers do): it follows the election and must never run in it.
  double observer = 0.15;
  // Deliberate bugs, to prove the checks catch them.
  bool fence = true;         // false: the effect receiver accepts stale epochs
  bool steal = true;         // false: the lock manager ignores steal requests
  bool honest_store = true;  // false: the glue reports lost writes and stale reads as durable
  Mutations mutations;       // deliberate bugs inside the core
  bool pass_observe_only = true;  // false: the glue loses an observer's observe-only flag
  size_t max_steps = 0;      // 0: run to the end of fault_ms + quiet_ms
  // false: every latency is its fixed base (hand-written scenarios read exact times).
  bool jitter = true;
  // Every tab's heartbeat and suspect timeout; 0: the core's defaults (Config).
  double heartbeat_ms = 0;
  double suspect_ms = 0;
};

// The timings every tab of a world with `o` runs with: the core's defaults, but for what
// `o` sets.
Config timings_of(const Options& o);

// What a scenario or a replayed seed says about one tab it opens.
struct TabSpec {
  std::string name;
  std::vector<std::string> capabilities;
  std::string app_version = "1.0";
  bool visible = true;
};

// The storage behind epochs and leases: answering, failing, or never answering.
enum class StorageMode : uint8_t { works, broken, hung };
const char* to_string(StorageMode m);

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
  uint64_t takeovers_checked = 0;                 // crashed or silently frozen leaders replaced within the bound (see watch_takeover)
};

class World {
 public:
  explicit World(Options options);
  // Seeded random faults, then a quiet period, then the liveness bound.
  Report run();

  static constexpr const char* kResources[2] = {"ws", "sync"};

  // Named trace lines ("  1203.50 tab2 ws: leader -> follower (frozen)"); nothing is
  // formatted when no sink is set.
  using Sink = std::function<void(const std::string&)>;
  void set_trace(Sink sink) { trace_ = std::move(sink); }
  // Receives each random fault as the scenario command that repeats it.
  void set_recorder(Sink recorder) { record_ = std::move(recorder); }
  // true: every broadcast frame is traced, not only goodbyes and abdicate requests.
  void trace_all_frames(bool on) { trace_all_frames_ = on; }

  // The scenario interpreter's commands. Tabs are named; -1 means no such tab.
  int find_tab(const std::string& name) const;
  int open_tab(const TabSpec& spec);
  void join(int tab, const std::string& resource, const Policy& policy);
  void leave(int tab, const std::string& resource);
  void crash(int tab);
  void close(int tab);
  void freeze(int tab, bool announce);
  void thaw(int tab);
  void set_visible(int tab, bool visible);
  void send(int tab, Event e);                      // online, offline, abdicate, ...
  void inject(int tab, std::vector<uint8_t> bytes);  // a frame from a hostile sender
  void jump_clock(double delta_ms);
  void set_storage(StorageMode mode) {
    disturb();
    storage_ = mode;
  }
  // How long the epoch counter takes to answer (a busy browser's IndexedDB).
  void set_storage_delay(double ms) {
    disturb();
    epoch_delay_ms_ = ms;
  }
  void set_network_faults(bool on) {
    disturb();
    faults_on_ = on;
  }
  void end_faults();
  // Runs every step due at or before `until_ms` (simulated time since the start).
  void run_until(double until_ms);
  // The liveness bound of run(): a leader within the stated time after faults stopped.
  void check_liveness();
  // Frames from `from` to `to` (empty: any) are held instead of delivered, until
  // deliver() sends them on or drop() loses them; unhold() ends every hold.
  void hold(const std::string& from, const std::string& to);
  size_t deliver(const std::string& from, const std::string& to);
  size_t drop(const std::string& from, const std::string& to);
  void unhold();
  // Keeps a copy of every frame `from` broadcasts from now on (a hostile page recording
  // the channel), for replay; recording another tab starts a new recording.
  void record_frames(const std::string& from);
  const std::vector<std::vector<uint8_t>>& recording() const { return recording_; }

  // What the interpreter prints.
  double now_ms() const { return clock_ms_; }
  const Election& election(int tab) const { return *tabs_[tab]->election; }
  const std::string& name(int tab) const { return tabs_[tab]->id; }
  const char* tab_state(int tab) const;
  size_t tab_count() const { return tabs_.size(); }
  const std::vector<std::string>& resources() const { return resources_; }
  std::string lock_state(const std::string& resource) const;
  std::string lease_state(const std::string& resource) const;
  std::string fence_state(const std::string& resource) const;
  const Report& report() const { return report_; }

 private:
  enum class TabState : uint8_t { running, frozen, crashed, closed };

  // One sender as one tab hears it: since when (see note_sender), the highest tick it
  // sent and when, and whether it announced a newer app version since then.
  struct Sighting {
    double first_ms = 0;
    double progress_ms = -1e18;
    uint64_t tick_seq = 0;
    bool newer_version = false;
  };

  struct Tab {
    int index = 0;
    uint64_t instance = 0;  // unique per tab lifetime (ids may repeat across runs, not here)
    double mono_origin_ms = 0;  // simulated time its monotonic clock reads 0
    std::string id;
    std::unique_ptr<Election> election;
    TabState state = TabState::running;
    bool announced_freeze = false;  // the glue saw `freeze` before the tab stopped
    bool visible = true;
    uint64_t timer_token = 0;      // bumps to cancel the previous timer
    std::map<std::string, uint64_t> lock_request;  // the glue's current request per resource
    std::map<std::string, Role> roles;             // as last traced
    double thawed_ms = -1e18;      // when it last thawed (its timers were stopped before)
    // Lease transactions begun and not run yet, per resource. The glue aborts them when the
    // page announces its freeze; the abort count tells an aborted one when it comes due.
    std::map<std::string, int> leases_in_flight;
    uint64_t lease_aborts = 0;
    uint64_t ticks = 0;            // the election's tick count when last checked
    double timer_seen_ms = 0;      // when its timer last ran while leading (or it led nothing)
    // What the world did to this tab that may rightly end its term (see on_deposed).
    std::string app_version;
    std::set<std::string> observed;  // resources it joined to observe only (as the app asked)
    bool online = true;
    double shown_ms = -1e18;       // when it last stopped being hidden (now while hidden)
    double store_failed_ms = -1e18;  // when the store last failed one of its operations
    std::map<int, double> lost_from;        // sender tab -> when a frame from it was lost
    // Per resource, who last took its lock or lease, and whether that displaced a tab that
    // had just taken it so (thieves that acted on one cause at once).
    struct Taken {
      int by = -1;
      bool race = false;
    };
    std::map<std::string, Taken> taken;
    // Real senders with a newer app version than this tab's, and every forged sender.
    std::map<std::string, Sighting> sightings;
    // Per resource, every epoch the store answered this tab (answers are not tied to
    // requests), and whether the monotonic counter persisted it (not a lost write, a
    // stale read or an answer below the floor).
    std::map<std::string, std::map<uint64_t, bool>> answers;
  };

  // takeover_due: nothing happens, but the checks run (see watch_takeover).
  enum class Kind : uint8_t { timer, deliver, callback, lease_txn, release_crashed, fault, end_faults, hostile, takeover_due };

  struct Scheduled {
    double at;
    uint64_t seq;
    Kind kind;
    int tab;
    int from = -1;        // sender of a delivery
    uint64_t token;       // timer token or instance
    uint64_t request;     // lock request a lock callback belongs to (0: none)
    Event event;          // for callbacks
    std::vector<uint8_t> bytes;
    uint64_t lease_aborts = 0;  // a lease transaction: the tab's abort count when it began
    bool operator>(const Scheduled& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // Callbacks a frozen tab cannot run yet; they run, in order, when it thaws.
  std::map<int, std::vector<Scheduled>> deferred_;
  // A lease transaction begun by a frozen tab holds the store (as IndexedDB's read-write
  // transactions do until they commit): every other tab's waits until that tab thaws.
  int store_holder_ = -1;
  std::vector<Scheduled> store_waiting_;
  // The holder's transaction ended: the ones that waited for it run.
  void free_store();
  // What the glue's freeze and pagehide handlers do first (see Runtime.lifecycle).
  void abort_leases(Tab& t);

  struct LockRequest {
    int tab = -1;
    uint64_t id = 0;
    double stolen_ms = -1e18;  // when it took the lock by stealing
  };
  struct LockQueue {
    LockRequest holder;
    std::deque<LockRequest> waiting;
  };

  // A frame held back by hold(), with its sender and recipient.
  struct Held {
    int from;
    int to;
    std::vector<uint8_t> bytes;
  };
  struct HoldRule {
    std::string from, to;
  };

  // Scheduling.
  void step(Scheduled& s);
  // A latency: its base, plus up to `spread` more when jitter is on.
  double latency(double base, double spread) { return opt_.jitter ? base + net_rng_.unit() * spread : base; }
  void schedule(Scheduled s);
  void schedule_timer(Tab& t);
  void schedule_callback(Tab& t, Event e, double latency, uint64_t request = 0);
  // The two clocks a tab reads: the wall clock, shared by every tab and moved by jumps, and
  // its own monotonic clock (performance.now()), which counts from its page's load.
  double wall_now() const { return clock_ms_ + clock_offset_ms_; }
  double mono_now(const Tab& t) const { return clock_ms_ - t.mono_origin_ms; }

  // Tabs.
  int open_random_tab();
  void deliver(Tab& t, const Event& e);
  void apply(Tab& t, const std::vector<Effect>& effects);
  static bool runs_in_election(const Tab& t, const Effect& fx);
  void guarded_effects(Tab& t);
  void allocate_epoch(Tab& t, const Effect& fx);
  void on_elected(Tab& t, const Effect& fx);
  void on_deposed(Tab& t, const Effect& fx);
  // The imperfect store: a fault number below 1 picks a fault, 1 or more means none.
  double store_fault();
  void process(Scheduled& s);
  void run_lease_txn(Tab& t, const std::string& res);
  // Steps lease_read inside the transaction; returns the lease_write it answers with
  // (present=false: nothing to write).
  LeaseRecord read_lease(Tab& t, const std::string& res, const LeaseRecord& stored);
  void write_unread(Tab& t, const Effect& fx);

  // Simulated browser parts.
  void lock_request(Tab& t, const std::string& res, LockMode mode);
  void lock_release(Tab& t, const std::string& res);
  void lock_drop_all(int tab);
  void grant_next(const std::string& res);
  void broadcast(Tab& from, const std::vector<uint8_t>& bytes);

  // Faults.
  void random_fault();
  void hostile_frame();
  void send_forged(const std::vector<uint8_t>& bytes);
  void record(const std::string& command);
  void trace(const std::string& line);
  void trace_tab(const Tab& t, const std::string& what);
  void trace_roles(Tab& t);
  std::string describe(const Event& e) const;
  std::string describe(const Effect& fx) const;
  std::string describe(const LeaseRecord& rec) const;

  // What the world did that may end a term (see on_deposed).
  void note_sender(Tab& t, const Scheduled& delivery);
  bool healthy(const Tab& t) const;
  bool caused_by_world(const Tab& t, const Effect& fx) const;
  bool wall_clock_jumped() const;
  bool recently_hidden(const Tab& t) const;
  bool heard_newer_version(const Tab& t) const;
  bool taken_for_cause(const Tab& t, const std::string& res) const;
  bool store_failed(const Tab& t) const;

  // Checks.
  void check(double now);
  // Broadcast-only's takeover bound (see check_takeover): a leader that crashed or froze
  // silently is watched from then while nothing else happens in the world but crashes.
  void watch_takeover(const Tab& stopped);
  void check_takeover(const std::string& res, bool has_leader, double now);
  void disturb() { ++disturbances_; }
  bool holds_authority(const Tab& t, const std::string& res) const;
  void check_lease_term(const Tab& t, const std::string& res);
  // The term's view says it may act now, by both clocks (as the glue's state() asks).
  bool term_valid(const Tab& t, const ResourceView& v) const;
  void violation(const std::string& what);

  Options opt_;
  Config timings_;  // timings_of(opt_)
  Random fault_rng_;  // which fault, which tab, what a new tab offers
  Random net_rng_;    // latencies, loss, duplication, reordering
  Random hostile_rng_;  // hostile frames: when, which kind, to whom
  Random store_rng_;    // the imperfect store's faults
  Random observer_rng_;  // which new tabs only observe
  double clock_ms_ = 0;
  double clock_offset_ms_ = 1.7e12;  // wall clock minus simulated time; jumps move it
  uint64_t seq_ = 0;
  uint64_t next_instance_ = 1;
  uint64_t next_request_ = 1;
  bool faults_on_ = true;      // network faults (set_network_faults) and random faults
  bool faults_ended_ = false;  // end_faults() ran: leaderless gaps count from then on
  double faults_end_ms_ = 0;
  std::priority_queue<Scheduled, std::vector<Scheduled>, std::greater<Scheduled>> queue_;
  std::vector<std::unique_ptr<Tab>> tabs_;
  std::map<std::string, LockQueue> locks_;
  std::map<std::string, uint64_t> epoch_store_;
  std::map<std::string, uint64_t> epoch_issued_;  // highest epoch the store or a term used
  std::map<std::string, uint64_t> clean_term_;    // highest epoch of a term not degraded
  double jumped_ms_ = -1e18;                      // last wall clock jump
  uint64_t forged_seq_ = 1;
  std::string recorded_tab_;
  std::vector<std::vector<uint8_t>> recording_;
  std::vector<uint8_t> replay_;                   // a real frame, for replaying
  std::map<std::string, LeaseRecord> lease_store_;
  LeaseRecord* lease_answer_ = nullptr;  // while a lease_read steps: where its lease_write goes
  StorageMode storage_ = StorageMode::works;
  double epoch_delay_ms_ = 0.05;
  std::vector<std::string> resources_;  // every resource a tab joined, in order
  std::vector<HoldRule> holds_;
  std::vector<Held> held_;
  Sink trace_;
  Sink record_;
  bool trace_all_frames_ = false;
  Fence receiver_;  // the guarded side effects' receiver (a server)
  std::map<std::string, uint64_t> highest_accepted_;
  // (res, epoch) -> the instance that led a term not degraded with it
  std::map<std::pair<std::string, uint64_t>, uint64_t> term_owner_;
  std::map<std::string, uint64_t> terms_won_;
  std::map<std::string, double> leaderless_since_;
  std::map<std::pair<int, std::string>, double> stale_since_;
  // Per resource, when its broadcast-only leader crashed or froze silently, and the count of
  // other world events then (a watch ends when another one happens, see check_takeover).
  struct TakeoverWatch {
    double stopped_ms = 0;
    uint64_t disturbances = 0;
    double bound_ms = 0;  // the takeover bound, plus the store's answer delay then
  };
  std::map<std::string, TakeoverWatch> takeover_watch_;
  uint64_t disturbances_ = 0;  // every world event but a crash: faults, hostile frames, holds
  std::vector<bool> leading_;  // per tab, during check(): leads some resource and runs
  Report report_;
};

}  // namespace baton::sim
