// What the glue configures a tab's election with, and the deliberate bugs the simulation
// can switch on.
#pragma once
#include <cstdint>

#include "types.h"
#include "wire.h"

namespace baton {

// Deliberate bugs the simulation switches on to prove that its checks fire. The glue
// never sets them; each one brings back a bug this core once had.
struct Mutations {
  bool answer_postpones_tick = false;  // a frame sent from a message handler delays the own timer
  bool answer_shows_tick = false;      // a frame sent from a message handler shows the timer's
                                       // latest run (a frozen leader's answer as progress)
  bool trust_claims = false;           // a claim deposes the authority's holder and moves the floor
  bool lease_term_to_expiry = false;   // a lease term outlives the record's takeover time
  bool trust_versions = false;         // any tab's newer app version vetoes, unbounded (the 93 s gap)
  bool claimant_waits_suspect = false; // broadcast-only: a candidacy holds the others back a whole
                                       // suspect timeout, however silent (the 2.3 s crash takeover)
};

struct Config {
  TabId id;
  uint32_t generation = 1;            // bumped by the glue when a page is restored from bfcache
  // "0", its length given: -Oz outlines string_view's constructor from a const char*, and
  // the wasm would carry a strlen for this literal alone.
  Version app_version = std::string_view("0", 1);
  Capabilities capabilities;
  Authority authority = Authority::web_locks;  // to start with; see Election::authority()
  double heartbeat_ms = 1000;         // leader heartbeat and presence cadence
  double suspect_ms = 3000;           // leader without progress this long is replaced (takeoverMs)
  double lease_ms = 5000;             // IndexedDB lease duration (renewed every min(suspect, lease) / 2)
  double steal_grace_ms = 200;        // after an abdicate request, before stealing
  double rank_stagger_ms = 150;       // each rank position waits this much longer
  double trigger_jitter_ms = 10;      // coalescing window for election triggers
  double hello_window_ms = 150;       // broadcast-only: a leader answers a hello within this
  double backoff_base_ms = 250;
  double backoff_max_ms = 10000;
  double storage_timeout_ms = 3000;   // an epoch or lease answer later than this counts as failed
  double start_ms = 0;                // wall time the tab started (age bonus, sent to the others)
  uint64_t seed = 1;
  Mutations mutations;
};

}  // namespace baton
