// How a tab obtains, keeps and gives back the right to lead a resource: one strategy per
// authority (authority_web_locks.cc, authority_lease.cc, authority_broadcast.cc). The node
// holds the strategy in use as state, not configuration: a lease whose store keeps failing
// falls back to broadcast-only while the configuration stays what the glue asked for.
//
// Strategies hold no state of their own (what they track lives in the node's Resource),
// so there is one instance of each (Node::kWebLocks, kLease, kBroadcastOnly). Internal to
// the core; not part of its interface.
#pragma once
#include "node.h"

namespace baton {

class Node::Strategy {
 public:
  virtual Authority kind() const = 0;
  // True when the authority lets one tab lead at a time (a lock, a lease record). False
  // where no authority exists (broadcast-only): there the newest claim decides.
  virtual bool exclusive() const = 0;
  // How long a tab that joins listens for a leader before it may take over.
  virtual double join_wait_ms(const Node& n) const;
  // Follower: when to ask the authority for the resource, and how.
  virtual void campaign(Node& n, Resource& r, double now, Effects& out) const = 0;
  // Leader: keep the authority (the lease renews; a lock is held as it is).
  virtual void keep(Node& n, Resource& r, double now, Effects& out) const;
  // Leader of an exclusive authority hearing another tab claim its term or a newer one:
  // the authority decides, never the claim.
  virtual void contest(Node& n, Resource& r, double now, Effects& out) const;
  // The term ended: give the authority back.
  virtual void release(Node& n, Resource& r, double now, Effects& out) const;

 protected:
  ~Strategy() = default;
};

class Node::WebLocks final : public Node::Strategy {
 public:
  Authority kind() const override { return Authority::web_locks; }
  bool exclusive() const override { return true; }
  void campaign(Node& n, Resource& r, double now, Effects& out) const override;
  void contest(Node& n, Resource& r, double now, Effects& out) const override;
  void release(Node& n, Resource& r, double now, Effects& out) const override;
};

class Node::Lease final : public Node::Strategy {
 public:
  Authority kind() const override { return Authority::lease; }
  bool exclusive() const override { return true; }
  void campaign(Node& n, Resource& r, double now, Effects& out) const override;
  void keep(Node& n, Resource& r, double now, Effects& out) const override;
  void contest(Node& n, Resource& r, double now, Effects& out) const override;
  void release(Node& n, Resource& r, double now, Effects& out) const override;
};

class Node::BroadcastOnly final : public Node::Strategy {
 public:
  Authority kind() const override { return Authority::broadcast; }
  bool exclusive() const override { return false; }
  double join_wait_ms(const Node& n) const override;
  void campaign(Node& n, Resource& r, double now, Effects& out) const override;
};

}  // namespace baton
