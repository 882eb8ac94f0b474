// How a tab obtains, keeps and gives back the right to lead a resource: one strategy per
// authority (authority_web_locks.cc, authority_lease.cc, authority_broadcast.cc). The election
// holds the strategy in use as state, not configuration: a lease whose store keeps failing
// falls back to broadcast-only while the configuration stays what the glue asked for.
//
// Strategies hold no state of their own (what they track lives in the election's Resource),
// so there is one instance of each (Election::kWebLocks, kLease, kBroadcastOnly). Internal to
// the core; not part of its interface.
#pragma once
#include "election.h"

namespace baton {

class Election::Strategy {
 public:
  virtual Authority kind() const = 0;
  // True when the authority lets one tab lead at a time (a lock, a lease record). False
  // where no authority exists (broadcast-only): there the newest claim decides.
  virtual bool exclusive() const = 0;
  // How long a tab that joins listens for a leader before it may take over.
  virtual double join_wait_ms(const Election& election) const;
  // Follower: when to ask the authority for the resource, and how.
  virtual void campaign(Election& election, Resource& r, double now, Effects& out) const = 0;
  // Leader: keep the authority (the lease renews; a lock is held as it is).
  virtual void keep(Election& election, Resource& r, double now, Effects& out) const;
  // Leader of an exclusive authority hearing another tab claim its term or a newer one:
  // the authority decides, never the claim.
  virtual void contest(Election& election, Resource& r, double now, Effects& out) const;
  // The term ended: give the authority back.
  virtual void release(Election& election, Resource& r, double now, Effects& out) const;

 protected:
  ~Strategy() = default;
};

class Election::WebLocks final : public Election::Strategy {
 public:
  Authority kind() const override { return Authority::web_locks; }
  bool exclusive() const override { return true; }
  void campaign(Election& election, Resource& r, double now, Effects& out) const override;
  void contest(Election& election, Resource& r, double now, Effects& out) const override;
  void release(Election& election, Resource& r, double now, Effects& out) const override;
};

class Election::Lease final : public Election::Strategy {
 public:
  Authority kind() const override { return Authority::lease; }
  bool exclusive() const override { return true; }
  void campaign(Election& election, Resource& r, double now, Effects& out) const override;
  void keep(Election& election, Resource& r, double now, Effects& out) const override;
  void contest(Election& election, Resource& r, double now, Effects& out) const override;
  void release(Election& election, Resource& r, double now, Effects& out) const override;
};

class Election::BroadcastOnly final : public Election::Strategy {
 public:
  Authority kind() const override { return Authority::broadcast; }
  bool exclusive() const override { return false; }
  double join_wait_ms(const Election& election) const override;
  void campaign(Election& election, Resource& r, double now, Effects& out) const override;
};

}  // namespace baton
