// Election: one tab's election for all the resources it joins, the core's sans-IO state
// machine with a single entry point.
//
//   effects = election.step(event)   // event carries both clocks; effects say what to do
//   election.next_deadline()         // when to send the next `tick` (monotonic)
//
// Two clocks: every local deadline and duration (timers, suspect and grace waits, rate
// limits, how long ago another tab was heard) is monotonic time, which no clock jump
// moves; wall time is read only where a time is shared with other tabs (the lease
// record's expiry and takeover time in IndexedDB, the start time that ranks tabs by age),
// and turned into monotonic time at the step that reads it (Election::local_ms).
//
// The election never reads a clock, never draws global randomness and never performs I/O.
// The glue (browser) or the simulation (tests) turns effects into calls to Web Locks,
// BroadcastChannel and storage, and reports what happened back as events.
//
// Election's implementation is split by concern: election.cc (dispatch and the per-role
// steps, how terms begin and end), authority.h with one file per authority (how the right
// to lead is asked for, kept and given back), peer_frames.cc (trust in other tabs' frames,
// answers), epochs.cc (where a term's epoch comes from, storage faults, degraded terms),
// ranking.cc (who may and who should lead), own_frames.cc (what this tab sends). Its
// vocabulary: config.h (what the glue configures), event.h and effect.h (what goes in and
// out of a step), view.h (what a resource looks like from this tab).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "config.h"
#include "effect.h"
#include "event.h"
#include "fence.h"
#include "fixed.h"
#include "metrics.h"
#include "policy.h"
#include "presence.h"
#include "random.h"
#include "types.h"
#include "view.h"
#include "wire.h"

namespace baton {

class Election {
 public:
  explicit Election(const Config& config);

  // Steps one event; appends the effects to `out`.
  void step(const Event& event, Effects& out);
  // The same, for callers outside the core that keep effects in a std::vector (tests, tools).
  std::vector<Effect> step(const Event& event) {
    Effects out;
    step(event, out);
    return out;
  }
  double next_deadline() const;

  // Queries.
  const Config& config() const { return config_; }
  // The authority in use: the configured one, or broadcast-only once the lease store failed.
  Authority authority() const;
  bool disposed() const { return disposed_; }
  bool joined(std::string_view resource) const { return resources_.find(resource) != nullptr; }
  ResourceView view(std::string_view resource) const;
  const Presence& presence() const { return presence_; }
  Lifecycle lifecycle() const { return lifecycle_; }
  const Metrics& metrics() const { return metrics_; }
  const TransitionLog& log() const { return log_; }
  // True once any storage failure was seen; `degradation()` says the latest cause.
  bool degraded() const { return degraded_ != Degraded::none; }
  Degraded degradation() const { return degraded_; }
  // The resources joined and not left, in name order.
  GrowingArray<ResourceName> resources() const;

 private:
  enum class LockState : uint8_t { none, queued, held };
  // release_unread: a closing page's release of a term still valid, written without a read
  // (see Lease::release).
  enum class LeaseOp : uint8_t { none, acquire, renew, release, release_unread };
  // The authorities' strategies (authority.h), one instance each.
  class Strategy;
  class WebLocks;
  class Lease;
  class BroadcastOnly;
  static const WebLocks kWebLocks;
  static const Lease kLease;
  static const BroadcastOnly kBroadcastOnly;
  static const Strategy& strategy_of(Authority a);

  struct Resource {
    ResourceName name;
    Policy policy;
    Role role = Role::follower;
    Reason reason = Reason::startup;
    uint64_t epoch = 0;            // own term
    uint64_t max_epoch = 0;        // highest term heard of (own, plausible claims, lease records)
    // Highest term the authority confirmed: own terms and lease records (in broadcast-only
    // mode, where no authority exists, claims too). Only this floor reaches the store, so
    // that no frame can move the durable epoch floor.
    uint64_t floor_epoch = 0;
    Degraded degraded = Degraded::none;  // own term
    double wake_ms = 0;            // next evaluation (coalesced triggers land here)
    bool left = false;             // relinquished; kept only until a lease release commits
    bool named_successor = false;  // the last leader's goodbye named this tab
    TabId departed;                // that leader, whose lease release may still be committing
    uint64_t departed_epoch = 0;   // its term, the only record its goodbye gives up (0: unknown)
    double named_ms = 0;
    // Lease: the last leader's goodbye named another tab, which gets a heartbeat's head start.
    bool other_named = false;
    // Lease: when this tab, leading, heard a goodbye in its own name that it did not send
    // (see disown_goodbye). Its term stays in doubt until a renewal begun later commits.
    double disowned_ms = -kNever;
    double leaderless_since_ms = 0;
    // Broadcast-only: a tab about to claim a term, named by the last leader's goodbye or
    // announcing its candidacy (wire::kPendingEpoch); the others wait for it (see
    // BroadcastOnly::campaign). `claimant_heard`: its candidacy was announced, so a later
    // frame of it without the claim means it gave up.
    TabId claimant;
    double claimant_since_ms = 0;
    bool claimant_named = false;
    bool claimant_heard = false;
    // Known leader (another tab or this one).
    TabId leader;
    uint64_t leader_epoch = 0;
    double leader_since_ms = 0;
    double leader_since_wall_ms = 0;  // the same moment on the wall clock, for the view
    // When another tab that makes progress claimed a newer term than the known leader's,
    // and this tab did not follow it (WebLocks::campaign).
    double newer_claim_ms = -kNever;
    // Web Locks.
    LockState lock = LockState::none;
    double queued_ms = 0;
    double abdicate_asked_ms = -1;   // when we asked a silent leader to abdicate
    // When this tab, leading hidden, last handed the resource to a visible asker.
    double visible_handover_ms = -kNever;
    // When another tab asked the silent leader to abdicate (it steals next); once per leader.
    double steal_announced_ms = -1;
    bool stealing = false;           // a steal request is in flight
    bool allocating = false;         // an allocate_epoch effect awaits its answer
    double allocating_since_ms = 0;
    bool reallocated = false;        // broadcast-only: asked again above a newer claim
    // Lease.
    LeaseOp lease_op = LeaseOp::none;
    LeaseRecord lease;               // last record seen
    double lease_seen_ms = 0;        // when that record was first seen
    double lease_started_ms = -kNever;  // when the in-flight try (or the last one) began
    double lease_valid_until_ms = 0; // own term is safe until then (no other tab may take over)
    double lease_held_until_ms = 0;  // own term ends then even if a renewal is still in flight
    // The same on the wall clock, by which the others read the record: a wall clock that
    // jumped forward lets them take it over sooner.
    double lease_valid_until_wall_ms = 0;
    double renew_ms = kNever;
    Backoff backoff;
    double backoff_until_ms = 0;
  };

  // Event handlers. The lock and lease events are handled by the authority's file
  // whichever authority is in use: an answer may arrive after the lease fell back.
  void on_tick(double now, Effects& out);
  void on_message(const Event& e, Effects& out);
  void note_unseen_claims(const wire::Frame& f, double now);
  void on_join(const Event& e, Effects& out);
  void on_leave(std::string_view name, double now, Effects& out);
  void on_lock_granted(Resource& r, double now, Effects& out);
  void on_lock_lost(Resource& r, double now, Effects& out);
  void on_epoch_allocated(Resource& r, uint64_t epoch, bool durable, double now, Effects& out);
  void on_epoch_read(Resource& r, uint64_t epoch);
  void on_lease_read(Resource& r, const LeaseRecord& current, uint64_t counter, double now, Effects& out);
  void on_lease_result(Resource& r, const LeaseRecord& rec, double now, Effects& out);
  void on_lease_aborted(Resource& r, double now);
  void on_lock_unavailable(Resource& r, double now);
  void on_lifecycle(Lifecycle l, double now, Effects& out);
  void on_dispose(double now, Effects& out);
  void on_fence_check(std::string_view resource, uint64_t epoch, Effects& out);
  void run_due(double now, bool timer, Effects& out);

  // Frame handlers. A claim is handled by role, as a leader or as a follower hears it.
  void on_claim(const wire::Frame& f, const wire::Claim& c, double now, Effects& out);
  void leader_hears_claim(Resource& r, const wire::Frame& f, const wire::Claim& c, double now, Effects& out);
  void follower_hears_claim(Resource& r, const wire::Frame& f, const wire::Claim& c, double now, Effects& out);
  // Broadcast-only: a claim of another tab than the known leader wins over it (a newer
  // term, or the same term from a better-ranked tab).
  bool claim_wins(const Resource& r, const wire::Frame& f, const wire::Claim& c, double now) const;
  // Broadcast-only: a candidacy announced (wire::kPendingEpoch) or a successor named.
  void note_claimant(Resource& r, std::string_view id, bool named, double now);
  // True while a claimant other than this tab has its time to claim and should win over
  // this tab: the last leader named it, or it ranks before this tab.
  bool claimant_preferred(const Resource& r, double now) const;
  // Broadcast-only: until when the others wait for the claimant's claim
  // (authority_broadcast.cc).
  double claimant_due_ms(const Resource& r) const;
  // Broadcast-only: the claimant's time ran out and it showed no progress for the claim
  // window: it died or froze, and holds no rank position either.
  bool claimant_gone(const Resource& r, double now) const;
  double claimant_progress_ms(const Resource& r) const;
  // Broadcast-only: a candidate that showed no progress for this long counts as gone; it
  // shows progress twice within it while it waits for its epoch (presence_every_ms).
  double claim_window_ms() const { return config_.heartbeat_ms / 4; }
  // Broadcast-only: this tab announced its candidacy and waits for its epoch.
  bool claiming() const;
  void on_goodbye(const wire::Frame& f, double now, Effects& out);
  // Lease: a goodbye in this tab's own name, forged or replayed, names a successor that
  // may take this tab's record over: the term is in doubt until a renewal re-asserts it.
  void disown_goodbye(const wire::Frame& f, double now);
  void on_abdicate_request(const wire::Frame& f, double now, Effects& out);
  void note_steal_announced(const wire::Frame& f, double now);
  void lapse_jumped_lease_terms(double now);
  bool visible_asker_may_take_over(const Resource& r, std::string_view asker_id, double now) const;
  // True where no authority exists and the newest claim decides (broadcast-only).
  bool claims_decide() const;
  // True once the lease store failed and broadcast-only took over.
  bool fell_back() const;

  // Decisions: the step for the resource's role, then the authority's.
  void evaluate(Resource& r, double now, Effects& out);
  bool ensure_eligible(Resource& r, double now, Effects& out);
  void steal(Resource& r, Effects& out);
  void release_lock(Resource& r, Effects& out);
  bool defer_while_stalled(Resource& r, double now);
  void start_lease(Resource& r, LeaseOp op, double now, Effects& out);
  void ask_hidden_leader(Resource& r, double now, Effects& out);
  void request_epoch(Resource& r, double now, Effects& out);
  // Gives up on a store that did not answer in time (a hung IndexedDB open).
  void check_storage_timeouts(Resource& r, double now, Effects& out);
  void on_lease_failed(Resource& r, Degraded why, double now, Effects& out);
  void trigger(Resource& r, double now, bool immediate = false);
  void trigger_all(double now);
  // Ends an epoch allocation: leads with `epoch`, unless (broadcast-only) a live leader
  // appeared meanwhile.
  void finish_candidacy(Resource& r, uint64_t epoch, Degraded degraded, double now, Effects& out);
  void become_leader(Resource& r, uint64_t epoch, Reason why, Degraded degraded, double now, Effects& out);
  // Ends a term: gives the authority back and tells the others (goodbye names a successor).
  void step_down(Resource& r, Reason why, double now, Effects& out, bool announce = true);
  void set_role(Resource& r, Role to, Reason why, double now);
  void set_leader(Resource& r, std::string_view id, uint64_t epoch, double now, Effects& out);
  void clear_leader(Resource& r, double now, Effects& out);
  void fail_acquisition(Resource& r, double now);

  // Ranking helpers.
  CandidateView self_view() const;
  CandidateView view_of(const Candidate& c, double now) const;
  // Newest app version among tabs otherwise eligible for `r` (older code yields).
  Version newest_app_version(const Resource& r, double now) const;
  bool self_eligible(const Resource& r, double now) const;
  Reason why_not_eligible(const Resource& r, double now) const;
  // Position of this tab among eligible candidates (excluding `except` and `also_except`);
  // -1 if not eligible.
  int rank_position(const Resource& r, double now, std::string_view except, std::string_view also_except = {}) const;
  TabId best_successor(const Resource& r, double now) const;
  bool leader_silent(const Resource& r, double now, double limit) const;
  // When the known leader last made progress, as this tab may count it (see ranking.cc).
  double leader_progress_ms(const Resource& r) const;
  // Since when this tab has waited for a leader it may follow: it queued for the lock, or
  // the last leader's term ended.
  double waiting_since_ms(const Resource& r) const;
  // When a lease record stops being valid, as far as this tab can trust the clock.
  double lease_expiry(const Resource& r, const LeaseRecord& rec) const;
  // When another tab's record may be taken over by compare-and-set: its takeover time (or
  // expiry) passed and, while this tab hears the owner claim the resource, its heartbeats
  // stopped for the suspect timeout.
  double lease_takeover_due(const Resource& r, const LeaseRecord& rec) const;
  // True when a valid record of another tab may be taken over: its owner said goodbye naming
  // this tab (for the term it gave up), or it went silent (lease_takeover_due).
  bool lease_takeover_allowed(const Resource& r, const LeaseRecord& rec, double now) const;
  // True when the record's owner renewed it after this tab heard the goodbye that named
  // it: the goodbye was not the owner's (forged or replayed), and hands nothing over.
  bool renewed_since_goodbye(const Resource& r, const LeaseRecord& rec) const;
  // True while no other tab may take this tab's record over, by either clock.
  bool lease_term_valid(const Resource& r, double now) const {
    return now < r.lease_valid_until_ms && wall_ms(now) < r.lease_valid_until_wall_ms;
  }
  // How long a committed record keeps this tab's term safe, counted from the start of the
  // transaction that wrote it: other tabs may take it over no sooner.
  double lease_term_span() const { return std::min(config_.lease_ms * 5 / 6, lease_silence_ms()); }
  // After this long without a renewal the owner counts as silent (the record's takeover time).
  double lease_silence_ms() const { return std::min(config_.suspect_ms, config_.lease_ms); }
  // A tab whose timers stalled (frozen) starts no lease transaction: an uncommitted
  // read-write transaction of a frozen tab blocks every other tab's on the store until it
  // thaws. Nor does a closing page (its transaction would hold the store until teardown).
  // Acquisitions and renewals never start from a message either: a tab frozen without
  // warning still handles messages before its timers look stalled.
  bool may_start_lease(double now) const {
    return lifecycle_ != Lifecycle::frozen && lifecycle_ != Lifecycle::closing && !timers_stalled(now);
  }
  // True when the tick this election asked for is overdue by more than half the suspect
  // timeout (at least a heartbeat): its timers are stopped (frozen) or throttled hard.
  // A follower asks a silent leader to abdicate a full suspect timeout after its last
  // progress, so a frozen leader is sure to see itself stalled by then. Such a tab still
  // runs message handlers, and must not take leadership from one.
  bool timers_stalled(double now) const {
    return now - expected_tick_ms_ > std::max(config_.suspect_ms / 2, config_.heartbeat_ms);
  }

  // Frames.
  wire::Frame frame(wire::Kind kind) const;
  void send(const wire::Frame& f, Effects& out);
  // Sends this tab's frame of `kind` as it is (one copy of this code for its many callers).
  void send(wire::Kind kind, Effects& out);
  void send_heartbeat(double now, Effects& out);
  // Asks the known leader of `r` to abdicate (Web Locks: before a steal; a hidden leader:
  // to hand over to a visible tab).
  void send_abdicate_request(const Resource& r, Effects& out);
  // A frame sent from a message handler (a reply to a hello, an abdicate request or a
  // stale claim). It never moves the own timer: only the timer's heartbeat shows progress.
  // Rate-limited, since one hostile sender could otherwise make every frame an echo.
  void answer(double now, Effects& out);
  double refresh_ms() const;
  double presence_every_ms() const;
  bool leads_anything() const;
  // True when this tab joined resources and only observes every one of them. Its frames say
  // so (wire::kObservesOnly), so that no tab ranks it or names it as a leader's successor.
  // A tab that joined none yet says nothing of the kind: the glue may step it (a lifecycle
  // change) before its first join, and the frame saying otherwise would only cost one more.
  bool observes_only() const;
  // Tells the others at once when joining or leaving changed observes_only().
  void announce_observing(bool before, Effects& out);
  // Reads the event's clocks: the offset between them (which a wall clock jump moves) and
  // whether the wall clock went back.
  void read_clocks(const Event& e);
  // A wall time (a lease record's) as monotonic time, by the clocks of the latest reading.
  double local_ms(double wall) const { return wall - wall_offset_ms_; }
  double wall_ms(double now) const { return now + wall_offset_ms_; }

  Config config_;
  const Strategy* authority_;  // the authority in use
  Random rng_;
  Presence presence_;
  Metrics metrics_;
  Fence fence_;
  FlatMap<ResourceName, Resource> resources_;  // sorted by name, as every tab iterates them
  TransitionLog log_;
  Lifecycle lifecycle_ = Lifecycle::active;
  bool online_ = true;
  bool disposed_ = false;
  Degraded degraded_ = Degraded::none;
  uint64_t tick_seq_ = 1;  // the runs of this tab's timer
  // The tick sequence this tab's frames carry. Only a frame sent from the timer's own step
  // raises it to tick_seq_: the others take a rising sequence for progress made when the
  // frame arrives, so a frame sent from any other step (an answer from a frozen page's
  // message handler) must not show a tick that no earlier frame showed, such as the timer's
  // last run before a freeze, which sent nothing (a wake-up for an election).
  uint64_t shown_tick_seq_ = 1;
  double last_now_ms_ = 0;
  double last_wall_ms_ = 0;
  double wall_offset_ms_ = 0;  // wall minus monotonic time at the latest reading
  double expected_tick_ms_ = kNever;  // the deadline reported after the last step
  double heartbeat_due_ms_ = kNever;
  double presence_due_ms_ = 0;
  double last_answer_ms_ = -kNever;
  bool message_step_ = false;  // the step running handles a frame from the channel
  bool timer_step_ = false;    // the step running is the timer's (a tick)
  bool said_hello_ = false;
  bool started_ = false;
  uint32_t lease_failures_ = 0;
};

}  // namespace baton
