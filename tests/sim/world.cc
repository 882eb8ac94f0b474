#include "world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/policy.h"
#include "frames.h"
#include "names.h"

namespace baton::sim {
namespace {

bool alive(int state) { return state == 0 || state == 1; }  // running or frozen

// A leader whose timers stopped (a freeze) may rightly judge itself stalled for this long
// afterwards, and a lease leader may lose its term this long after the wall clock jumped
// (the record's expiry is wall time); a healthy one never does.
constexpr double kRecoveryMs = 5000;

// How long after a cause another tab may still act on it: it judges a leader silent (or
// hidden) after the suspect timeout, waits its rank's stagger and the steal grace, and
// the frame that shows otherwise comes at most a heartbeat later.
double cause_window_ms(const Options& o) {
  Config c = timings_of(o);
  return c.suspect_ms + o.max_tabs * c.rank_stagger_ms + c.steal_grace_ms + c.heartbeat_ms;
}

// Broadcast-only's takeover bound after a leader's crash or silent freeze (see
// World::watch_takeover), the one awaforge documents as takeoverMs + heartbeatMs.
double takeover_bound_ms(const Config& c) {
  return c.suspect_ms + c.heartbeat_ms;
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Exact, so that a recorded fault replays at the very time it happened.
std::string exact(double v) { return format("%.17g", v); }

}  // namespace

const char* to_string(StorageMode m) {
  switch (m) {
    case StorageMode::works: return "works";
    case StorageMode::broken: return "broken";
    case StorageMode::hung: return "hung";
  }
  return "?";
}

Config timings_of(const Options& o) {
  Config c;
  if (o.heartbeat_ms > 0) c.heartbeat_ms = o.heartbeat_ms;
  if (o.suspect_ms > 0) c.suspect_ms = o.suspect_ms;
  return c;
}

World::World(Options options)
    : opt_(options),
      timings_(timings_of(options)),
      fault_rng_(options.seed * 0x9E3779B97F4A7C15ull + 17),
      net_rng_(options.seed * 0xD1B54A32D192ED03ull + 29),
      hostile_rng_(options.seed * 0x94D049BB133111EBull + 41),
      store_rng_(options.seed * 0xBF58476D1CE4E5B9ull + 53),
      observer_rng_(options.seed * 0x2545F4914F6CDD1Dull + 67) {
  storage_ = opt_.storage_works ? StorageMode::works : StorageMode::broken;
}

// ---------------------------------------------------------------------------------------
// Scheduling.

void World::schedule(Scheduled s) {
  s.seq = seq_++;
  queue_.push(std::move(s));
}

void World::schedule_timer(Tab& t) {
  if (t.state != TabState::running) return;
  double deadline = t.election->next_deadline();
  ++t.timer_token;
  if (deadline == kNever) return;
  // Like setTimeout: a relative delay on the monotonic clock, which the deadline is in.
  // On a grid of a nanosecond, so that tabs whose clocks start apart (rounded apart) but
  // that set the same deadline fire in the order they set it.
  double delay = std::max(0.0, deadline - mono_now(t));
  Scheduled s{};
  s.at = std::round((clock_ms_ + delay + 0.01) * 1e6) / 1e6;
  s.kind = Kind::timer;
  s.tab = t.index;
  s.token = t.timer_token;
  schedule(std::move(s));
}

void World::schedule_callback(Tab& t, Event e, double latency, uint64_t request) {
  Scheduled s{};
  s.request = request;
  s.at = clock_ms_ + latency;
  s.kind = Kind::callback;
  s.tab = t.index;
  s.token = t.instance;
  s.event = std::move(e);
  schedule(std::move(s));
}

// ---------------------------------------------------------------------------------------
// The run.

Report World::run() {
  for (int i = 0; i < opt_.initial_tabs; ++i) open_random_tab();
  Scheduled first{};
  first.at = fault_rng_.unit() * 2 * opt_.fault_every_ms;
  first.kind = Kind::fault;
  schedule(first);
  if (opt_.hostile_every_ms > 0) {
    Scheduled hostile{};
    hostile.at = hostile_rng_.unit() * opt_.hostile_every_ms;
    hostile.kind = Kind::hostile;
    schedule(hostile);
  }
  Scheduled end{};
  end.at = opt_.fault_ms;
  end.kind = Kind::end_faults;
  schedule(end);

  double stop = opt_.fault_ms + opt_.quiet_ms;
  while (!queue_.empty()) {
    Scheduled s = queue_.top();
    queue_.pop();
    if (s.at > stop) break;
    step(s);
    if (!report_.violations.empty()) break;
    if (opt_.max_steps && report_.steps >= opt_.max_steps) break;
  }
  record("at " + exact(clock_ms_));
  if (report_.violations.empty() && (!opt_.max_steps || report_.steps < opt_.max_steps)) {
    record("liveness");
    check_liveness();
  }
  for (const auto& [res, n] : terms_won_) report_.handovers += n > 0 ? n - 1 : 0;
  return report_;
}

void World::step(Scheduled& s) {
  clock_ms_ = std::max(clock_ms_, s.at);
  ++report_.steps;
  process(s);
  check(clock_ms_);
}

void World::run_until(double until_ms) {
  while (!queue_.empty() && report_.violations.empty() && queue_.top().at <= until_ms) {
    Scheduled s = queue_.top();
    queue_.pop();
    step(s);
  }
  if (report_.violations.empty()) clock_ms_ = std::max(clock_ms_, until_ms);
}

void World::check_liveness() {
  for (const auto& res : resources_) {
    auto it = leaderless_since_.find(res);
    if (it != leaderless_since_.end()) {
      double gap = clock_ms_ - std::max(it->second, faults_end_ms_);
      report_.longest_leaderless_after_faults_ms = std::max(report_.longest_leaderless_after_faults_ms, gap);
    }
  }
  // The liveness bounds stated in the README (for the default timings: heartbeat 1 s,
  // suspect 3 s, lease 5 s, steal grace 0.2 s, rank stagger 0.15 s per position).
  double stagger = opt_.max_tabs * timings_.rank_stagger_ms;
  double bound = opt_.authority == Authority::lease
                     ? timings_.lease_ms + stagger + timings_.heartbeat_ms
                     : timings_.suspect_ms + timings_.steal_grace_ms + stagger + timings_.heartbeat_ms;
  if (report_.longest_leaderless_after_faults_ms > bound) {
    violation("liveness: no leader for " + std::to_string(report_.longest_leaderless_after_faults_ms) +
              " ms after faults stopped");
  }
}

void World::end_faults() {
  faults_on_ = false;
  faults_ended_ = true;
  faults_end_ms_ = clock_ms_;
  // A resource without a leader now is leaderless from now, not from the next step.
  check(clock_ms_);
}

void World::process(Scheduled& s) {
  Tab* t = s.tab >= 0 && s.tab < static_cast<int>(tabs_.size()) ? tabs_[s.tab].get() : nullptr;
  switch (s.kind) {
    case Kind::timer:
      if (t && t->state == TabState::running && s.token == t->timer_token) {
        Event e;
        e.kind = EventKind::tick;
        deliver(*t, e);
        guarded_effects(*t);
      }
      break;
    case Kind::deliver:
      // A frozen tab still handles channel messages (measured in Chromium).
      if (t && alive(static_cast<int>(t->state))) {
        ++report_.messages_delivered;
        if (trace_ && trace_all_frames_ && s.from >= 0) {
          trace_tab(*t, "<- " + tabs_[s.from]->id + " " + describe_frame(s.bytes));
        }
        note_sender(*t, s);
        Event e;
        e.kind = EventKind::message;
        e.data = s.bytes.data();
        e.size = s.bytes.size();
        deliver(*t, e);
      }
      break;
    case Kind::callback:
    case Kind::lease_txn:
      if (!t || t->instance != s.token || !alive(static_cast<int>(t->state))) break;
      if (s.kind == Kind::lease_txn && s.lease_aborts != t->lease_aborts) break;  // aborted at a freeze
      if (t->state == TabState::frozen) {
        deferred_[t->index].push_back(s);
        break;
      }
      if (s.kind == Kind::lease_txn && store_holder_ >= 0 && store_holder_ != t->index) {
        store_waiting_.push_back(s);
        break;
      }
    {
      std::string res = s.event.resource.str();
      if (s.request != 0 && t->lock_request[res] != s.request) {
        // A callback of a request the glue already replaced: a stale grant is given
        // back by the glue itself and never reaches the core.
        LockQueue& q = locks_[res];
        if (q.holder.tab == t->index && q.holder.id == s.request) {
          q.holder = LockRequest{};
          grant_next(res);
        }
        break;
      }
      if (s.kind == Kind::callback) {
        deliver(*t, s.event);
      } else {
        --t->leases_in_flight[res];
        run_lease_txn(*t, res);
      }
      break;
    }
    case Kind::release_crashed: lock_drop_all(s.tab); break;
    case Kind::takeover_due: break;
    case Kind::fault:
      if (!faults_on_) break;
      random_fault();
      {
        Scheduled next{};
        next.at = clock_ms_ - std::log(1 - fault_rng_.unit()) * opt_.fault_every_ms;
        next.kind = Kind::fault;
        schedule(next);
      }
      break;
    case Kind::hostile:
      if (!faults_on_) break;
      hostile_frame();
      {
        Scheduled next{};
        next.at = clock_ms_ - std::log(1 - hostile_rng_.unit()) * opt_.hostile_every_ms;
        next.kind = Kind::hostile;
        schedule(next);
      }
      break;
    case Kind::end_faults:
      record("at " + exact(clock_ms_));
      record("end-faults");
      end_faults();
      // A user opens a fresh tab: someone eligible for every resource is alive.
      open_random_tab();
      break;
  }
}

// ---------------------------------------------------------------------------------------
// Tabs.

int World::find_tab(const std::string& name) const {
  for (const auto& t : tabs_) {
    if (t->id == name) return t->index;
  }
  return -1;
}

int World::open_tab(const TabSpec& spec) {
  disturb();
  auto t = std::make_unique<Tab>();
  t->index = static_cast<int>(tabs_.size());
  t->instance = next_instance_++;
  t->id = spec.name;
  t->visible = spec.visible;
  // Its page loaded a while before it opens here, and no two tabs' monotonic clocks agree.
  t->mono_origin_ms = clock_ms_ - 100.0 * static_cast<double>(t->instance);
  Config c = timings_;
  c.id = t->id;
  c.authority = opt_.authority;
  c.start_ms = wall_now();
  // From the seed and the tab alone, so that a replayed scenario seeds the same election.
  c.seed = Random(opt_.seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(t->index)).next();
  for (const std::string& cap : spec.capabilities) c.capabilities.push_back(cap);
  c.app_version = spec.app_version;
  c.mutations = opt_.mutations;
  t->election = std::make_unique<Election>(c);
  t->app_version = spec.app_version;
  Tab& tab = *t;
  tabs_.push_back(std::move(t));
  if (!spec.visible) {
    Event e;
    e.kind = EventKind::lifecycle;
    e.lifecycle = Lifecycle::hidden;
    deliver(tab, e);
  }
  return tab.index;
}

void World::join(int tab, const std::string& resource, const Policy& policy) {
  disturb();
  if (std::find(resources_.begin(), resources_.end(), resource) == resources_.end()) resources_.push_back(resource);
  Event e;
  e.kind = EventKind::join;
  e.resource = resource;
  e.policy = policy;
  // The world remembers what the app asked for; the glue passes it on (but for the bug).
  if (policy.observe_only) tabs_[tab]->observed.insert(resource);
  else tabs_[tab]->observed.erase(resource);
  if (!opt_.pass_observe_only) e.policy.observe_only = false;
  deliver(*tabs_[tab], e);
}

void World::leave(int tab, const std::string& resource) {
  disturb();
  Event e;
  e.kind = EventKind::leave;
  e.resource = resource;
  deliver(*tabs_[tab], e);
}

// A tab as the simulation opens it: most can own the socket, later ones may run newer code.
int World::open_random_tab() {
  TabSpec spec;
  spec.name = "tab" + std::to_string(tabs_.size());
  // The fresh tab at the end of the faults can lead everything.
  bool capable = !faults_on_ || fault_rng_.unit() < 0.7;
  if (capable) spec.capabilities.push_back("ws.owner.v1");
  spec.app_version = faults_on_ && clock_ms_ > opt_.fault_ms / 2 && fault_rng_.unit() < 0.3 ? "1.1" : "1.0";
  if (!faults_on_) spec.app_version = "1.1";
  // Its own stream, so that observers leave every other random choice of a seed as it was.
  bool observer = faults_on_ && observer_rng_.unit() < opt_.observer;
  if (record_) {
    record("add " + spec.name + (capable ? " caps=ws.owner.v1" : "") + " version=" + spec.app_version + " join=");
    record("join " + spec.name + " ws cap=ws.owner.v1 prefer-visible" + (observer ? " observe" : ""));
    record("join " + spec.name + " sync");
  }
  int i = open_tab(spec);
  Policy ws;
  ws.required_capability = "ws.owner.v1";
  ws.prefer_visible = true;
  ws.observe_only = observer;
  join(i, kResources[0], ws);
  join(i, kResources[1], Policy{});
  return i;
}

void World::deliver(Tab& t, const Event& in) {
  Event e = in;
  e.now_ms = mono_now(t);
  e.wall_ms = wall_now();
  if (trace_ && e.kind != EventKind::tick && e.kind != EventKind::message) trace_tab(t, "<- " + describe(e));
  std::vector<Effect> effects = t.election->step(e);
  if (trace_) trace_roles(t);
  apply(t, effects);
  schedule_timer(t);
}

// What only a tab that runs in an election does: an observer never asks for the authority,
// an epoch or the lease, and never begins a term. (A leader told to observe steps down,
// and its lease transaction then hands the record back: that is leaving, not running.)
bool World::runs_in_election(const Tab& t, const Effect& fx) {
  switch (fx.kind) {
    case EffectKind::lock_request:
    case EffectKind::allocate_epoch:
    case EffectKind::elected: return true;
    case EffectKind::lease_try: return t.election->view(fx.resource).role != Role::stepping_down;
    default: return false;
  }
}

void World::apply(Tab& t, const std::vector<Effect>& effects) {
  for (const Effect& fx : effects) {
    if (trace_) {
      std::string what = describe(fx);
      if (fx.kind == EffectKind::leader_changed) {
        ResourceView v = t.election->view(fx.resource);
        what += v.leader.empty() ? " none" : " " + v.leader + " epoch " + std::to_string(v.leader_epoch);
      }
      if (!what.empty()) trace_tab(t, "-> " + what);
    }
    if (t.observed.count(fx.resource.str()) && runs_in_election(t, fx)) {
      std::string what = fx.kind == EffectKind::elected ? "elected" : describe(fx);
      violation("observe-only: " + t.id + " ran in the election of " + fx.resource.str() +
                ", which it only observes (" + what + ")");
    }
    switch (fx.kind) {
      case EffectKind::broadcast: broadcast(t, fx.bytes); break;
      case EffectKind::lock_request: lock_request(t, fx.resource.str(), fx.lock_mode); break;
      case EffectKind::lock_release: lock_release(t, fx.resource.str()); break;
      case EffectKind::allocate_epoch: allocate_epoch(t, fx); break;
      case EffectKind::lease_try: {
        if (storage_ == StorageMode::hung) {
          t.store_failed_ms = clock_ms_;
          break;
        }
        Scheduled s{};
        s.at = clock_ms_ + latency(0.5, 2.5);
        s.kind = Kind::lease_txn;
        s.tab = t.index;
        s.token = t.instance;
        s.event.resource = fx.resource;
        s.lease_aborts = t.lease_aborts;
        ++t.leases_in_flight[fx.resource.str()];
        if (t.state == TabState::frozen) {
          // Begun by a frozen tab (from a message handler): it cannot commit, and it holds
          // the store until the tab thaws. (One begun just before a freeze is not modelled:
          // the core cannot avoid it; the glue ends it past its deadline from the frozen
          // page's next message handler, tests/node/lease-silent-freeze.test.js.)
          if (store_holder_ < 0) store_holder_ = t.index;
          deferred_[t.index].push_back(s);
          break;
        }
        schedule(std::move(s));
        break;
      }
      case EffectKind::elected:
        on_elected(t, fx);
        // A new term's first act is a guarded side effect.
        guarded_effects(t);
        break;
      case EffectKind::deposed: on_deposed(t, fx); break;
      case EffectKind::lease_write:
        if (fx.unread) {
          write_unread(t, fx);
        } else if (lease_answer_) {
          *lease_answer_ = fx.lease;
        } else {
          violation("lease write outside its transaction: " + t.id + " " + fx.resource.str());
        }
        break;
      case EffectKind::leader_changed:
      case EffectKind::fence_verdict:  // guarded effects are fenced at the receiver here
        break;
    }
  }
}

// Every leader performs a fenced side effect (to a "server") on each timer tick.
void World::guarded_effects(Tab& t) {
  if (t.state != TabState::running) return;
  for (const auto& res : resources_) {
    ResourceView v = t.election->view(res);
    if (v.role != Role::leader) continue;
    if (v.degraded != Degraded::none) continue;  // fenced() refuses: the epoch may repeat
    bool accepted = !opt_.fence || receiver_.admit(res, v.epoch) == FenceVerdict::accepted;
    if (!accepted) {
      ++report_.effects_rejected;
      if (trace_) trace_tab(t, "effect on " + std::string(res) + " with epoch " + std::to_string(v.epoch) + " rejected: stale owner");
      continue;
    }
    ++report_.effects_accepted;
    uint64_t& highest = highest_accepted_[res];
    if (v.epoch < highest) {
      violation("safety: " + t.id + " performed an effect on " + res + " with stale epoch " +
                std::to_string(v.epoch) + " after epoch " + std::to_string(highest) + " was accepted");
    }
    highest = std::max(highest, v.epoch);
  }
}

// The epoch counter in IndexedDB: next = max(stored, floor) + 1. The imperfect store
// sometimes hangs, loses the write (answered, not persisted), reads a stale copy, or
// answers below the floor it was given (an epoch source going backwards). An honest glue
// reports lost writes and stale reads as not durable; it cannot know about the others.
void World::allocate_epoch(Tab& t, const Effect& fx) {
  const std::string res = fx.resource.str();
  uint64_t& stored = epoch_store_[res];
  uint64_t& issued = epoch_issued_[res];
  if (fx.epoch > issued && t.election->authority() != Authority::broadcast) {
    violation("durable floor: " + t.id + " asked the store for an epoch above " + std::to_string(fx.epoch) + " of " +
              res + ", but no epoch above " + std::to_string(issued) + " was ever used (a frame moved the floor)");
  }
  double fault = store_fault();
  if (fault < 1) {
    ++report_.store_faults;
    disturb();
  }
  if (storage_ != StorageMode::works || fault < 1) t.store_failed_ms = clock_ms_;
  if (storage_ == StorageMode::hung || fault < 0.25) return;  // the transaction never completes
  Event e;
  e.kind = EventKind::epoch_allocated;
  e.resource = res;
  // Persisted by the monotonic counter. A later term may reuse the epoch of a lost write
  // or a stale read, but only that of a degraded term, which ran no fenced effect.
  bool trusted = false;
  if (storage_ == StorageMode::broken) {
    e.epoch = fx.epoch + 1;
    e.durable = false;
  } else if (fault < 0.5) {
    e.epoch = std::max(stored, fx.epoch) + 1;  // lost write
    e.durable = !opt_.honest_store;
  } else if (fault < 0.75) {
    uint64_t stale = stored - std::min<uint64_t>(stored, 1 + store_rng_.next() % 3);  // stale read
    e.epoch = std::max(stale, fx.epoch) + 1;
    e.durable = !opt_.honest_store;
  } else if (fault < 1) {
    e.epoch = fx.epoch - std::min<uint64_t>(fx.epoch, store_rng_.next() % 3);  // below the floor
  } else {
    stored = std::max(stored, fx.epoch) + 1;
    e.epoch = stored;
    trusted = true;
  }
  issued = std::max(issued, e.epoch);
  auto [answer, fresh] = t.answers[res].emplace(e.epoch, trusted);
  if (!fresh) answer->second = answer->second || trusted;
  schedule_callback(t, e, epoch_delay_ms_);
}

double World::store_fault() {
  if (!faults_on_ || opt_.store_fault <= 0 || storage_ != StorageMode::works) return 1;
  return store_rng_.unit() / opt_.store_fault;
}

// Terms that are not degraded run fenced effects, so their epochs must be unique and
// rise in the order the terms begin, whatever the receiver's fence does.
void World::on_elected(Tab& t, const Effect& fx) {
  const std::string res = fx.resource.str();
  ++terms_won_[res];
  uint64_t& issued = epoch_issued_[res];
  issued = std::max(issued, fx.epoch);  // a made-up epoch of a degraded term becomes a floor too
  if (fx.degraded != Degraded::none) {
    ++report_.degraded_terms;
    return;
  }
  if (fx.reason != Reason::lease_acquired) {  // else the lease record's epoch
    const auto& answers = t.answers[res];
    auto it = answers.find(fx.epoch);
    bool trusted = it != answers.end() && it->second;
    if (!trusted) {
      violation("degraded: " + t.id + " led " + res + " with epoch " + std::to_string(fx.epoch) +
                " that the store could repeat, without saying so");
    }
  }
  auto [owner, inserted] = term_owner_.emplace(std::make_pair(res, fx.epoch), t.instance);
  if (!inserted && owner->second != t.instance) {
    violation("fencing: epoch " + std::to_string(fx.epoch) + " of " + res + " issued twice");
  }
  // A tab elected without the authority (its lock stolen meanwhile) is a stale owner,
  // bounded by the stale-ownership check; only holders define the order of terms.
  if (!holds_authority(t, res)) return;
  uint64_t& last = clean_term_[res];
  if (fx.epoch <= last) {
    violation("epochs: a term of " + res + " began with epoch " + std::to_string(fx.epoch) + " after term " +
              std::to_string(last));
  }
  last = std::max(last, fx.epoch);
}

// Nothing another tab says may end a healthy leader's term: every step-down has a cause
// in the world (what it did to this tab, to its frames or to its store), or it is a
// violation. A freeze or a clock jump may end a term for any reason shortly afterwards.
void World::on_deposed(Tab& t, const Effect& fx) {
  if (!healthy(t) || caused_by_world(t, fx)) return;
  violation("liveness: " + t.id + ", a healthy leader of " + fx.resource + " (epoch " + std::to_string(fx.epoch) +
            "), stepped down (" + to_string(fx.reason) + ") with no cause in the world");
}

bool World::healthy(const Tab& t) const {
  return t.state == TabState::running && clock_ms_ - t.thawed_ms > kRecoveryMs;
}

bool World::caused_by_world(const Tab& t, const Effect& fx) const {
  switch (fx.reason) {
    case Reason::frozen:
    case Reason::closing:
    case Reason::dispose:
    case Reason::abdicate:
    case Reason::session_changed: return true;  // only the world's own events say these
    case Reason::hidden:
    case Reason::prefer_visible: return recently_hidden(t);
    case Reason::offline: return !t.online;
    case Reason::app_version: return heard_newer_version(t);
    case Reason::lock_lost: return taken_for_cause(t, fx.resource.str());
    case Reason::lease_lost: return taken_for_cause(t, fx.resource.str()) || store_failed(t) || wall_clock_jumped();
    case Reason::lease_expired: return store_failed(t) || wall_clock_jumped();
    case Reason::storage_failed: return store_failed(t);
    // The app joined the resource again to observe only (the world remembers which).
    case Reason::not_eligible: return t.observed.count(fx.resource.str()) > 0;
    // Broadcast-only has no authority: a claim of a newer term ends this one (README).
    case Reason::newer_epoch:
    case Reason::conflict: return t.election->authority() == Authority::broadcast;
    default: return false;  // stalled: a healthy leader's timer runs; the rest end no term
  }
}

// Only the lease reads the wall clock (its record's expiry and takeover time): a jump may
// end its term, never a Web Locks or broadcast-only one, whose deadlines are monotonic.
bool World::wall_clock_jumped() const {
  return clock_ms_ - jumped_ms_ < kRecoveryMs;
}

bool World::recently_hidden(const Tab& t) const {
  return !t.visible || clock_ms_ - t.shown_ms < cause_window_ms(opt_);
}

// A made-up or real tab with newer code vetoes eligibility for one suspect timeout from
// when this tab first heard of it (README, security model).
bool World::heard_newer_version(const Tab& t) const {
  for (const auto& [id, seen] : t.sightings) {
    if (seen.newer_version && clock_ms_ - seen.first_ms <= timings_.suspect_ms) return true;
  }
  return false;
}

// The lock or lease was taken from a hidden leader (preferVisible), by a tab that lost
// the leader's frames long enough to judge it silent, or by a tab that stole at once with
// this one, for the same cause (neither can know of the other).
bool World::taken_for_cause(const Tab& t, const std::string& res) const {
  auto taken = t.taken.find(res);
  if (taken == t.taken.end()) return false;
  if (recently_hidden(t) || taken->second.race) return true;
  const auto& lost = tabs_[taken->second.by]->lost_from;
  auto it = lost.find(t.index);
  return it != lost.end() && clock_ms_ - it->second < cause_window_ms(opt_);
}

// The store failed this tab's operation recently: a renewal that never came back lets
// the lease run out.
bool World::store_failed(const Tab& t) const {
  return storage_ != StorageMode::works || clock_ms_ - t.store_failed_ms < timings_.lease_ms + timings_.storage_timeout_ms;
}

// Keeps what `t` heard of senders that may announce a newer app version: real tabs with
// newer code, and every forged sender. A tab's presence table forgets a sender that made
// no progress (a rising tick) for six refresh intervals, and then hears it anew; here a
// sighting starts anew after a suspect timeout without progress, which is sooner and so
// allows more, never less.
void World::note_sender(Tab& t, const Scheduled& delivery) {
  if (delivery.from >= 0 && compare_versions(tabs_[delivery.from]->app_version, t.app_version) <= 0) return;
  wire::Frame f;
  if (wire::decode(delivery.bytes.data(), delivery.bytes.size(), f) != wire::DecodeError::ok) return;
  // A full presence table drops the frames of senders it does not know: this tab has not
  // heard of this one yet (a flood of made-up ids filled it), and hears of it later.
  const Presence& table = t.election->presence();
  if (!table.find(f.sender) && table.size() >= Presence::kMaxCandidates) return;
  Sighting& seen = t.sightings[f.sender.str()];
  if (clock_ms_ - seen.progress_ms >= timings_.suspect_ms) {
    seen.first_ms = clock_ms_;
    seen.newer_version = false;
  }
  if (f.tick_seq > seen.tick_seq) {
    seen.tick_seq = f.tick_seq;
    seen.progress_ms = clock_ms_;
  }
  seen.newer_version = seen.newer_version || compare_versions(f.app_version, t.app_version) > 0;
}

// ---------------------------------------------------------------------------------------
// Hostile frames: a same-origin script that watches the channel and forges every kind of
// frame that once broke a guarantee.

void World::hostile_frame() {
  ++report_.hostile_frames;
  if (resources_.empty()) return;
  const std::string res = resources_[static_cast<size_t>(hostile_rng_.unit() * resources_.size())];
  uint64_t top = 0;
  std::string leader;
  std::vector<const Tab*> open;
  for (const auto& t : tabs_) {
    if (!alive(static_cast<int>(t->state))) continue;
    open.push_back(t.get());
    ResourceView v = t->election->view(res);
    top = std::max({top, v.epoch, v.leader_epoch});
    if (v.role == Role::leader) leader = t->id;
  }
  wire::Frame f = frame_from("mallory" + std::to_string(hostile_rng_.next() % 4), wire::Kind::heartbeat);
  f.tick_seq = forged_seq_++;  // forged liveness: always progressing
  f.capabilities = {"ws.owner.v1"};
  const Tab* victim = open.empty() ? nullptr : open[static_cast<size_t>(hostile_rng_.unit() * open.size())];
  switch (hostile_rng_.next() % 8) {
    case 0: f.claims = {{res, uint64_t{1} << 40}}; break;
    case 1:  // a newer term, sometimes in a real tab's name
      if (victim && hostile_rng_.unit() < 0.3) f.sender = victim->id;
      f.claims = {{res, top + 1}};
      break;
    case 2: f.claims = {{res, top > 1 ? top - 1 : 1}}; break;
    case 3:  // a real tab's id with the highest generation, or its own with an old or leaping tick
      if (!victim) return;
      f.kind = wire::Kind::presence;
      f.sender = victim->id;
      f.lifecycle = Lifecycle::frozen;
      f.app_version = "999";
      switch (hostile_rng_.next() % 3) {
        case 0: f.generation = UINT32_MAX; break;
        case 1: f.tick_seq = 0; break;
        case 2: f.tick_seq = uint64_t{1} << 40; break;
      }
      break;
    case 4:  // a made-up newer version, its liveness forged or not
      f.kind = wire::Kind::presence;
      f.app_version = "999";
      if (hostile_rng_.unit() < 0.5) f.tick_seq = 0;
      break;
    case 5:  // a visible tab asks the leader to step down
      if (leader.empty()) return;
      f.kind = wire::Kind::abdicate_request;
      f.subject = res;
      f.target = leader;
      break;
    case 6:
      if (replay_.empty()) return;
      send_forged(replay_);
      return;
    case 7: f.kind = wire::Kind::hello; break;
  }
  send_forged(wire::encode(f));
}

void World::send_forged(const std::vector<uint8_t>& bytes) {
  disturb();
  if (trace_) {
    wire::Frame f;
    bool decoded = wire::decode(bytes.data(), bytes.size(), f) == wire::DecodeError::ok;
    trace("hostile sends, as " + (decoded ? f.sender.str() + " tick " + std::to_string(f.tick_seq) : std::string("?")) +
          ": " + describe_frame(bytes));
  }
  for (auto& t : tabs_) {
    if (!alive(static_cast<int>(t->state))) continue;
    Scheduled s{};
    s.at = clock_ms_ + 0.05 + hostile_rng_.unit() * 0.5;  // a hostile sender is never held
    s.kind = Kind::deliver;
    s.tab = t->index;
    s.bytes = bytes;
    schedule(std::move(s));
  }
}

// ---------------------------------------------------------------------------------------
// Simulated Web Locks: one FIFO queue per name, steal, release on crash.

void World::lock_request(Tab& t, const std::string& res, LockMode mode) {
  LockQueue& q = locks_[res];
  // The glue keeps one request per resource: a new one replaces the queued one.
  auto mine = [&t](const LockRequest& r) { return r.tab == t.index; };
  q.waiting.erase(std::remove_if(q.waiting.begin(), q.waiting.end(), mine), q.waiting.end());
  LockRequest req{t.index, next_request_++};
  t.lock_request[res] = req.id;
  Event granted;
  granted.kind = EventKind::lock_granted;
  granted.resource = res;
  double after = latency(0.1, 0.5);
  if (mode == LockMode::steal && opt_.steal) {
    req.stolen_ms = clock_ms_;
    if (q.holder.tab >= 0) {
      tabs_[q.holder.tab]->taken[res] = {t.index, clock_ms_ - q.holder.stolen_ms < cause_window_ms(opt_)};
      Event lost;
      lost.kind = EventKind::lock_lost;
      lost.resource = res;
      schedule_callback(*tabs_[q.holder.tab], lost, after, q.holder.id);
    }
    q.holder = req;
    schedule_callback(t, granted, after, req.id);
    return;
  }
  q.waiting.push_back(req);
  grant_next(res);
}

void World::grant_next(const std::string& res) {
  LockQueue& q = locks_[res];
  while (q.holder.tab < 0 && !q.waiting.empty()) {
    LockRequest next = q.waiting.front();
    q.waiting.pop_front();
    if (!alive(static_cast<int>(tabs_[next.tab]->state))) continue;
    q.holder = next;
    Event granted;
    granted.kind = EventKind::lock_granted;
    granted.resource = res;
    schedule_callback(*tabs_[next.tab], granted, latency(0.1, 0.5), next.id);
  }
}

// Releases the held lock or aborts the queued request of the glue's current request.
void World::lock_release(Tab& t, const std::string& res) {
  LockQueue& q = locks_[res];
  uint64_t current = t.lock_request[res];
  t.lock_request[res] = 0;
  if (q.holder.tab == t.index && q.holder.id == current) {
    q.holder = LockRequest{};
    grant_next(res);
  } else {
    auto mine = [&](const LockRequest& r) { return r.tab == t.index && r.id == current; };
    q.waiting.erase(std::remove_if(q.waiting.begin(), q.waiting.end(), mine), q.waiting.end());
  }
}

void World::lock_drop_all(int tab) {
  for (auto& [res, q] : locks_) {
    auto of_tab = [tab](const LockRequest& r) { return r.tab == tab; };
    q.waiting.erase(std::remove_if(q.waiting.begin(), q.waiting.end(), of_tab), q.waiting.end());
    if (q.holder.tab == tab) {
      q.holder = LockRequest{};
      grant_next(res);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Simulated BroadcastChannel: to every other live tab, with loss, duplication, reordering.

void World::broadcast(Tab& from, const std::vector<uint8_t>& bytes) {
  if (opt_.hostile_every_ms > 0 && hostile_rng_.unit() < 0.01) replay_ = bytes;
  if (from.id == recorded_tab_) recording_.push_back(bytes);
  for (auto& other : tabs_) {
    if (other->index == from.index || !alive(static_cast<int>(other->state))) continue;
    if (faults_on_ && net_rng_.unit() < opt_.loss) {
      other->lost_from[from.index] = clock_ms_;
      continue;
    }
    auto held = [&](const HoldRule& h) {
      return (h.from.empty() || h.from == from.id) && (h.to.empty() || h.to == other->id);
    };
    if (std::any_of(holds_.begin(), holds_.end(), held)) {
      other->lost_from[from.index] = clock_ms_;
      held_.push_back(Held{from.index, other->index, bytes});
      continue;
    }
    double delay = latency(0.05, 0.5);
    if (faults_on_ && net_rng_.unit() < opt_.reorder) delay += net_rng_.unit() * 50;
    int copies = faults_on_ && net_rng_.unit() < opt_.duplicate ? 2 : 1;
    for (int c = 0; c < copies; ++c) {
      Scheduled s{};
      s.at = clock_ms_ + delay + c * net_rng_.unit() * 20;
      s.kind = Kind::deliver;
      s.tab = other->index;
      s.from = from.index;
      s.bytes = bytes;
      schedule(std::move(s));
    }
  }
}

void World::hold(const std::string& from, const std::string& to) {
  disturb();
  holds_.push_back(HoldRule{from, to});
}

void World::unhold() {
  disturb();
  holds_.clear();
}

void World::record_frames(const std::string& from) {
  recorded_tab_ = from;
  recording_.clear();
}

size_t World::deliver(const std::string& from, const std::string& to) {
  disturb();
  size_t n = 0;
  std::vector<Held> keep;
  for (Held& h : held_) {
    bool match = (from.empty() || tabs_[h.from]->id == from) && (to.empty() || tabs_[h.to]->id == to);
    if (!match) {
      keep.push_back(std::move(h));
      continue;
    }
    Scheduled s{};
    s.at = clock_ms_ + latency(0.05, 0.5);
    s.kind = Kind::deliver;
    s.tab = h.to;
    s.from = h.from;
    s.bytes = std::move(h.bytes);
    schedule(std::move(s));
    ++n;
  }
  held_.swap(keep);
  return n;
}

size_t World::drop(const std::string& from, const std::string& to) {
  disturb();
  size_t before = held_.size();
  auto match = [&](const Held& h) {
    return (from.empty() || tabs_[h.from]->id == from) && (to.empty() || tabs_[h.to]->id == to);
  };
  held_.erase(std::remove_if(held_.begin(), held_.end(), match), held_.end());
  return before - held_.size();
}

void World::inject(int tab, std::vector<uint8_t> bytes) {
  disturb();
  Scheduled s{};
  s.at = clock_ms_;
  s.kind = Kind::deliver;
  s.tab = tab;
  s.bytes = std::move(bytes);
  schedule(std::move(s));
}

// ---------------------------------------------------------------------------------------
// Simulated IndexedDB lease: the read-write transaction runs atomically in the tab.

void World::run_lease_txn(Tab& t, const std::string& res) {
  double fault = store_fault();
  if (fault < 0.5) ++report_.store_faults;
  if (storage_ != StorageMode::works || fault < 1) t.store_failed_ms = clock_ms_;
  if (storage_ == StorageMode::hung || fault < 0.5) return;  // the transaction never completes
  Event e;
  e.resource = res;
  if (storage_ != StorageMode::works || fault < 1) {
    e.kind = EventKind::lease_failed;
    schedule_callback(t, e, 0.2);
    return;
  }
  LeaseRecord& stored = lease_store_[res];
  LeaseRecord write = read_lease(t, res, stored);
  uint64_t& issued = epoch_issued_[res];
  if (write.present && write.epoch > std::max(stored.epoch, issued) + 1) {
    violation("durable floor: " + t.id + " wrote lease epoch " + std::to_string(write.epoch) + " of " + res +
              " above every epoch ever issued (a frame moved the floor)");
  }
  if (write.present && stored.present && stored.owner != write.owner) {
    int owner = find_tab(stored.owner.str());
    if (owner >= 0) tabs_[owner]->taken[res] = {t.index, false};
  }
  if (write.present) {
    stored = write;
    issued = std::max(issued, write.epoch);
  }
  e.kind = EventKind::lease_result;
  e.lease = stored;
  schedule_callback(t, e, latency(0.2, 1));
}

LeaseRecord World::read_lease(Tab& t, const std::string& res, const LeaseRecord& stored) {
  Event e;
  e.kind = EventKind::lease_read;
  e.now_ms = mono_now(t);
  e.wall_ms = wall_now();
  e.resource = res;
  e.lease = stored;
  if (trace_) trace_tab(t, "<- " + describe(e));
  LeaseRecord write;
  lease_answer_ = &write;
  // An answer does no due work, so the timer stands (as the glue keeps its own).
  apply(t, t.election->step(e));
  lease_answer_ = nullptr;
  return write;
}

// A closing page's release: written without a read and committed at once, before the page
// is torn down (nothing in it waits for the page); no answer comes back.
void World::write_unread(Tab& t, const Effect& fx) {
  if (storage_ == StorageMode::hung) {
    t.store_failed_ms = clock_ms_;
    return;
  }
  if (storage_ != StorageMode::works || store_holder_ >= 0) return;
  LeaseRecord& stored = lease_store_[fx.resource.str()];
  const LeaseRecord& write = fx.lease;
  if (stored.owner != write.owner || stored.generation != write.generation || stored.epoch != write.epoch) {
    violation("unread release: " + t.id + " overwrote the record of " + stored.owner.str() + " epoch " +
              std::to_string(stored.epoch) + " of " + fx.resource.str());
  }
  stored = write;
}

// ---------------------------------------------------------------------------------------
// Faults.

void World::random_fault() {
  ++report_.faults;
  std::vector<int> running, frozen;
  int open = 0;
  for (auto& t : tabs_) {
    if (t->state == TabState::running) running.push_back(t->index);
    if (t->state == TabState::frozen) frozen.push_back(t->index);
    if (alive(static_cast<int>(t->state))) ++open;
  }
  auto pick = [this](const std::vector<int>& v) { return v[static_cast<size_t>(fault_rng_.unit() * v.size())]; };
  auto named = [this](const char* command, int tab) { record(std::string(command) + " " + tabs_[tab]->id); };
  record("at " + exact(clock_ms_));
  double r = fault_rng_.unit();
  if (r < 0.10 && !running.empty()) {
    int t = pick(running);
    named("crash", t);
    crash(t);
  } else if (r < 0.25 && !running.empty()) {
    int t = pick(running);
    bool announce = fault_rng_.unit() < 0.5;
    record("freeze " + tabs_[t]->id + (announce ? "" : " silent"));
    freeze(t, announce);
  } else if (r < 0.45 && !frozen.empty()) {
    int t = pick(frozen);
    named("thaw", t);
    thaw(t);
  } else if (r < 0.53 && !running.empty()) {
    int t = pick(running);
    named("close", t);
    close(t);
  } else if (r < 0.68) {
    if (open < opt_.max_tabs) open_random_tab();
  } else if (r < 0.83 && !running.empty()) {
    int t = pick(running);
    named(tabs_[t]->visible ? "hide" : "show", t);
    set_visible(t, !tabs_[t]->visible);
  } else if (r < 0.88) {  // wall clock jump, backwards or forwards
    double jump = (fault_rng_.unit() - 0.5) * 60000;
    record("clock-jump " + exact(jump));
    jump_clock(jump);
  } else if (r < 0.93 && !running.empty()) {
    int t = pick(running);
    Event e;
    e.kind = fault_rng_.unit() < 0.5 ? EventKind::offline : EventKind::online;
    named(e.kind == EventKind::offline ? "offline" : "online", t);
    send(t, e);
  } else if (r < 0.96 && !running.empty()) {
    int t = pick(running);
    named("session-changed", t);
    Event e;
    e.kind = EventKind::session_changed;
    send(t, e);
  } else if (!running.empty()) {
    int t = pick(running);
    Event e;
    e.kind = EventKind::abdicate;
    e.resource = kResources[fault_rng_.unit() < 0.5 ? 0 : 1];
    record("abdicate " + tabs_[t]->id + " " + e.resource);
    send(t, e);
  }
}

// The browser frees a crashed tab's locks about 60 ms later.
void World::crash(int tab) {
  Tab& t = *tabs_[tab];
  watch_takeover(t);
  t.state = TabState::crashed;
  if (trace_) trace_tab(t, "crashes");
  Scheduled s{};
  s.at = clock_ms_ + 60;
  s.kind = Kind::release_crashed;
  s.tab = t.index;
  schedule(s);
}

// A graceful close: pagehide, then teardown.
// The glue's freeze and pagehide handlers abort the lease transactions in flight (none
// commits later) and say so, once the core has stepped the freeze or the close. An unread
// release is committed at once (see apply) and never in flight.
void World::abort_leases(Tab& t) {
  bool aborted = false;
  for (auto& [res, count] : t.leases_in_flight) {
    if (count == 0) continue;
    count = 0;
    aborted = true;
    Event abort;
    abort.kind = EventKind::lease_aborted;
    abort.resource = res;
    deliver(t, abort);
  }
  if (!aborted) return;
  ++t.lease_aborts;
  if (store_holder_ == t.index) free_store();
}

void World::close(int tab) {
  disturb();
  Tab& t = *tabs_[tab];
  Event e;
  e.kind = EventKind::lifecycle;
  e.lifecycle = Lifecycle::closing;
  deliver(t, e);
  abort_leases(t);
  e.kind = EventKind::dispose;
  deliver(t, e);
  t.state = TabState::closed;
  lock_drop_all(t.index);
}

void World::set_visible(int tab, bool visible) {
  disturb();
  Tab& t = *tabs_[tab];
  if (visible && !t.visible) t.shown_ms = clock_ms_;
  t.visible = visible;
  Event e;
  e.kind = EventKind::lifecycle;
  e.lifecycle = t.visible ? Lifecycle::active : Lifecycle::hidden;
  deliver(t, e);
}

void World::send(int tab, Event e) {
  disturb();
  Tab& t = *tabs_[tab];
  if (e.kind == EventKind::offline || e.kind == EventKind::online) t.online = e.kind == EventKind::online;
  deliver(t, e);
}

void World::jump_clock(double delta_ms) {
  disturb();
  clock_offset_ms_ += delta_ms;
  jumped_ms_ = clock_ms_;
  if (trace_) trace(format("clock jumps %+.0f ms", delta_ms));
}

// A tab that announces its freeze (the `freeze` event ran) steps down first; a silent
// freeze (hung or throttled to a stop) keeps its authority until it is taken.
void World::freeze(int tab, bool announce) {
  disturb();
  Tab& t = *tabs_[tab];
  if (!announce) watch_takeover(t);
  if (announce) {
    Event e;
    e.kind = EventKind::lifecycle;
    e.lifecycle = Lifecycle::frozen;
    deliver(t, e);
    abort_leases(t);  // a silent freeze cannot
  } else if (trace_) {
    trace_tab(t, "stops silently");
  }
  t.announced_freeze = announce;
  t.state = TabState::frozen;
}

void World::free_store() {
  store_holder_ = -1;
  std::vector<Scheduled> waiting;
  waiting.swap(store_waiting_);
  for (Scheduled& s : waiting) {
    s.at = clock_ms_ + 2 + latency(0, 2);
    schedule(std::move(s));
  }
}

void World::thaw(int tab) {
  disturb();
  Tab& t = *tabs_[tab];
  t.state = TabState::running;
  t.thawed_ms = clock_ms_;
  for (auto& other : tabs_) other->sightings.erase(t.id);
  if (trace_) trace_tab(t, "thaws");
  std::vector<Scheduled> held;
  held.swap(deferred_[t.index]);
  // Held callbacks and the first timer run in no fixed order after a thaw: a thawed
  // leader may act before it learns that its lock was stolen. The fence must catch that.
  for (Scheduled& s : held) {
    s.at = clock_ms_ + latency(0, 2);
    schedule(std::move(s));
  }
  // Its transaction commits first; the ones that waited for it run after.
  if (store_holder_ == t.index) free_store();
  if (t.announced_freeze) {
    Event e;
    e.kind = EventKind::lifecycle;
    e.lifecycle = t.visible ? Lifecycle::active : Lifecycle::hidden;
    deliver(t, e);
  }
  // The timer that came due while frozen fires right after the thaw.
  Scheduled timer{};
  timer.at = clock_ms_ + latency(0, 2);
  timer.kind = Kind::timer;
  timer.tab = t.index;
  timer.token = ++t.timer_token;
  schedule(timer);
}

const char* World::tab_state(int tab) const {
  switch (tabs_[tab]->state) {
    case TabState::running: return tabs_[tab]->visible ? "running" : "running hidden";
    case TabState::frozen: return "frozen";
    case TabState::crashed: return "crashed";
    case TabState::closed: return "closed";
  }
  return "?";
}

std::string World::lock_state(const std::string& resource) const {
  auto it = locks_.find(resource);
  std::string s = resource + " lock: ";
  if (it == locks_.end() || it->second.holder.tab < 0) s += "free";
  else s += "held by " + tabs_[it->second.holder.tab]->id;
  if (it != locks_.end() && !it->second.waiting.empty()) {
    s += ", queued";
    for (const auto& r : it->second.waiting) s += " " + tabs_[r.tab]->id;
  }
  return s;
}

std::string World::lease_state(const std::string& resource) const {
  auto it = lease_store_.find(resource);
  if (it == lease_store_.end() || !it->second.present) return resource + " lease: none";
  const LeaseRecord& r = it->second;
  double left = r.expires_ms - wall_now();
  return resource + " lease: " + r.owner + " epoch " + std::to_string(r.epoch) +
         (left > 0 ? format(", %.0f ms left", left) : std::string(", expired"));
}

std::string World::fence_state(const std::string& resource) const {
  return resource + " fence: highest epoch " + std::to_string(receiver_.highest(resource));
}

// ---------------------------------------------------------------------------------------
// Traces: names, never numbers.

void World::record(const std::string& command) {
  if (record_) record_(command);
}

void World::trace(const std::string& line) { trace_(format("%9.2f ", clock_ms_) + line); }

void World::trace_tab(const Tab& t, const std::string& what) { trace(t.id + " " + what); }

// One line per role change of each joined resource, with the reason the election gives.
void World::trace_roles(Tab& t) {
  for (const auto& res : resources_) {
    if (!t.election->joined(res) && !t.roles.count(res)) continue;
    ResourceView v = t.election->view(res);
    Role& last = t.roles[res];
    if (v.role == last) continue;
    std::string line = res + ": " + to_string(last) + " -> " + to_string(v.role) + " (" + to_string(v.reason) + ")";
    if (v.role == Role::leader) line += " epoch " + std::to_string(v.epoch);
    trace_tab(t, line);
    last = v.role;
  }
}

std::string World::describe(const Event& e) const {
  std::string s = to_string(e.kind);
  if (!e.resource.empty()) s += " " + e.resource;
  switch (e.kind) {
    case EventKind::epoch_allocated:
      s += " " + std::to_string(e.epoch) + (e.durable ? "" : " (not durable)");
      break;
    case EventKind::lease_read:
    case EventKind::lease_result: s += describe(e.lease); break;
    case EventKind::fence_check:
    case EventKind::epoch_read: s += " epoch " + std::to_string(e.epoch); break;
    case EventKind::lifecycle: s += std::string(" ") + to_string(e.lifecycle); break;
    default: break;
  }
  return s;
}

// Empty for what the trace leaves out: term changes show as role changes, and routine
// frames (hello, presence, heartbeat) only when every frame is traced.
std::string World::describe(const Effect& fx) const {
  switch (fx.kind) {
    case EffectKind::broadcast: {
      std::string frame = describe_frame(fx.bytes);
      bool routine = frame.rfind("goodbye", 0) != 0 && frame.rfind("abdicate-request", 0) != 0;
      return routine && !trace_all_frames_ ? std::string() : "sends " + frame;
    }
    case EffectKind::lock_request: return "lock-request " + fx.resource + " " + to_string(fx.lock_mode);
    case EffectKind::allocate_epoch: return "allocate-epoch " + fx.resource + " above " + std::to_string(fx.epoch);
    case EffectKind::lease_write: return "lease-write " + fx.resource + describe(fx.lease) + (fx.unread ? " unread" : "");
    case EffectKind::elected:
    case EffectKind::deposed: return std::string();
    default: return std::string(to_string(fx.kind)) + " " + fx.resource;
  }
}

std::string World::describe(const LeaseRecord& rec) const {
  if (!rec.present) return " empty";
  return " owner " + rec.owner + " epoch " + std::to_string(rec.epoch) +
         (rec.expires_ms > wall_now() ? format(" for %.0f ms", rec.expires_ms - wall_now()) : std::string(" expired"));
}

// ---------------------------------------------------------------------------------------
// Invariants.

bool World::holds_authority(const Tab& t, const std::string& res) const {
  // A tab whose lease storage failed has fallen back to broadcast-only by itself.
  switch (t.election->authority()) {
    case Authority::web_locks: {
      auto it = locks_.find(res);
      return it != locks_.end() && it->second.holder.tab == t.index;
    }
    case Authority::lease: {
      auto it = lease_store_.find(res);
      return it != lease_store_.end() && it->second.owner == t.id && it->second.expires_ms > wall_now();
    }
    case Authority::broadcast: {
      // No authority but the epoch: the running leader with the newest term holds it.
      uint64_t mine = t.election->view(res).epoch;
      for (const auto& o : tabs_) {
        if (o->index == t.index || o->state != TabState::running) continue;
        ResourceView v = o->election->view(res);
        if (v.role == Role::leader && v.epoch > mine) return false;
      }
      return true;
    }
  }
  return false;
}

void World::check(double now) {
  leading_.assign(tabs_.size(), false);
  for (const auto& res : resources_) {
    bool has_leader = false;
    for (const auto& t : tabs_) {
      auto key = std::make_pair(t->index, res);
      if (t->state != TabState::running) {
        stale_since_.erase(key);  // a frozen tab cannot act; its window restarts at thaw
        continue;
      }
      ResourceView view = t->election->view(res);
      bool leads = view.role == Role::leader;
      if (leads) leading_[t->index] = true;
      // A lease term in doubt (its renewal in flight past the takeover time) does not act.
      if (!term_valid(*t, view)) leads = false;
      // A tab whose lease storage failed runs broadcast-only, with that mode's bound.
      Authority a = t->election->authority();
      double stale_bound = a == Authority::web_locks ? 50 : a == Authority::lease ? 5000 / 3.0 + 50 : 3000 + 1000;
      bool authority = leads && holds_authority(*t, res);
      if (leads && a == Authority::lease) check_lease_term(*t, res);
      if (authority) has_leader = true;
      if (leads && !authority) {
        auto [it, inserted] = stale_since_.emplace(key, now);
        double window = now - it->second;
        report_.worst_stale_owner_ms = std::max(report_.worst_stale_owner_ms, window);
        if (window > stale_bound) {
          violation("bounded stale ownership: " + t->id + " led " + res + " without the authority for " +
                    std::to_string(window) + " ms");
        }
      } else {
        stale_since_.erase(key);
      }
    }
    check_takeover(res, has_leader, now);
    if (faults_ended_) {
      if (has_leader) {
        auto it = leaderless_since_.find(res);
        if (it != leaderless_since_.end()) {
          double gap = now - std::max(it->second, faults_end_ms_);
          report_.longest_leaderless_after_faults_ms = std::max(report_.longest_leaderless_after_faults_ms, gap);
          leaderless_since_.erase(it);
        }
      } else {
        leaderless_since_.emplace(res, now);
      }
    }
  }
  // Followers judge a leader by its tick sequence, which only its own timer advances: a
  // running leader's timer must keep firing, whatever frames it handles meanwhile.
  for (auto& t : tabs_) {
    uint64_t ticks = t->election->metrics().ticks;
    if (!leading_[t->index] || ticks != t->ticks) {
      t->ticks = ticks;
      t->timer_seen_ms = now;
    } else if (now - std::max(t->timer_seen_ms, t->thawed_ms) > 2.5 * timings_.heartbeat_ms) {
      violation("liveness: " + t->id + " leads, but its own timer has not run for " +
                std::to_string(now - std::max(t->timer_seen_ms, t->thawed_ms)) + " ms");
    }
  }
}

// Broadcast-only's takeover bound, the one awaforge documents (takeoverMs + heartbeatMs):
// the crash of a leader that held its resource is followed by a new leader within the suspect
// timeout and a heartbeat, while a running tab is eligible, however the other tabs ranked
// before it died meanwhile (a candidate right after announcing itself, see
// BroadcastOnly::campaign). So is its silent freeze: a frozen tab still answers frames, and
// no answer may count as its progress (its tick sequence shows only what its timer sent).
// The watch ends when anything else happens in the world (another freeze, a thaw, a hostile
// frame, a store fault...): those may delay a takeover longer. For the
// same reason there is no watch while the store is broken or hung, and a watch ends when the
// store fails an operation: a new term then waits for the storage timeout. A slow store
// (set_storage_delay) adds its answer delay to the bound: the new term begins once its epoch
// is committed.
void World::watch_takeover(const Tab& stopped) {
  if (opt_.authority != Authority::broadcast || stopped.state != TabState::running) return;
  if (storage_ != StorageMode::works) return;
  bool watched = false;
  for (const auto& res : resources_) {
    if (stopped.election->view(res).role != Role::leader || !holds_authority(stopped, res)) continue;
    takeover_watch_[res] = TakeoverWatch{clock_ms_, disturbances_, takeover_bound_ms(timings_) + epoch_delay_ms_};
    watched = true;
  }
  if (!watched) return;
  // The checks run at the deadline, even when nothing else happens then.
  Scheduled due{};
  due.at = clock_ms_ + takeover_bound_ms(timings_) + epoch_delay_ms_;
  due.kind = Kind::takeover_due;
  schedule(due);
}

void World::check_takeover(const std::string& res, bool has_leader, double now) {
  auto it = takeover_watch_.find(res);
  if (it == takeover_watch_.end()) return;
  double stopped_ms = it->second.stopped_ms;
  bool store_failed = std::any_of(tabs_.begin(), tabs_.end(), [stopped_ms](const std::unique_ptr<Tab>& t) {
    return t->store_failed_ms >= stopped_ms;
  });
  bool disturbed = it->second.disturbances != disturbances_ || store_failed;
  if (has_leader || disturbed) {
    if (has_leader && !disturbed) ++report_.takeovers_checked;
    takeover_watch_.erase(it);
    return;
  }
  double waited = now - stopped_ms;
  if (waited < it->second.bound_ms) return;
  bool eligible = std::any_of(tabs_.begin(), tabs_.end(), [&res](const std::unique_ptr<Tab>& t) {
    return t->state == TabState::running && t->election->view(res).eligible;
  });
  takeover_watch_.erase(it);
  if (eligible) violation("takeover bound: no leader of " + res + format(" %.1f ms after its leader stopped", waited));
}

// A lease leader acts on its term until the time its view gives (the glue refuses after
// it): by then another tab may have taken the record over. A newer term in the store while
// an older one is still in force would be two effective leaders.
bool World::term_valid(const Tab& t, const ResourceView& v) const {
  return mono_now(t) < v.valid_until_ms && wall_now() < v.valid_until_wall_ms;
}

void World::check_lease_term(const Tab& t, const std::string& res) {
  ResourceView v = t.election->view(res);
  auto it = lease_store_.find(res);
  if (it == lease_store_.end() || !term_valid(t, v) || it->second.epoch <= v.epoch) return;
  // Two crossing transactions of this tab (one had timed out): its next result switches terms.
  if (it->second.owner == t.id) return;
  violation("two effective leaders: " + t.id + " acts on " + res + " epoch " + std::to_string(v.epoch) + " for " +
            std::to_string(v.valid_until_ms - mono_now(t)) + " ms more, while " + it->second.owner + " holds epoch " +
            std::to_string(it->second.epoch));
}

void World::violation(const std::string& what) {
  report_.violations.push_back("seed " + std::to_string(opt_.seed) + ", step " + std::to_string(report_.steps) +
                               format(", t=%.2f ms: ", clock_ms_) + what);
  if (trace_) trace("VIOLATION " + what);
}

}  // namespace baton::sim
