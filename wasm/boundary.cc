#include "boundary.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

namespace baton::boundary {
namespace {

// Strict reader: any overrun or bad value sets ok = false and reads zeros from then on.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && p_ == end_; }
  void fail() { ok_ = false; }

  bool take(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) return ok_ = false;
    return true;
  }
  uint8_t u8() {
    if (!take(1)) return 0;
    return *p_++;
  }
  uint8_t below(uint8_t limit) {
    uint8_t v = u8();
    if (v >= limit) fail();
    return v;
  }
  bool flag() { return below(2) != 0; }
  uint16_t u16() {
    if (!take(2)) return 0;
    uint16_t v = static_cast<uint16_t>(p_[0] | (p_[1] << 8));
    p_ += 2;
    return v;
  }
  uint32_t u32() {
    uint32_t lo = u16();
    return lo | (static_cast<uint32_t>(u16()) << 16);
  }
  double f64() {
    if (!take(8)) return 0;
    double v;
    std::memcpy(&v, p_, 8);
    p_ += 8;
    return v;
  }
  // A time: any number but NaN (Infinity is a valid "never").
  double time() {
    double v = f64();
    if (std::isnan(v)) fail();
    return v;
  }
  // An epoch: an integer that JS numbers hold exactly.
  uint64_t epoch() {
    double v = f64();
    if (!(v >= 0 && v <= static_cast<double>(kMaxEpoch) && v == std::floor(v))) {
      fail();
      return 0;
    }
    return static_cast<uint64_t>(v);
  }
  std::string_view str() {
    size_t n = u16();
    if (!take(n)) return {};
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  // An id, name or version: longer than the core's limit for it (wire.h) is malformed.
  template <typename Text>
  Text text() {
    std::string_view s = str();
    if (s.size() > Text::kCapacity) fail();
    return Text(s);
  }
  const uint8_t* bytes(size_t n) {
    if (!take(n)) return nullptr;
    const uint8_t* at = p_;
    p_ += n;
    return at;
  }
  bool header() { return u8() == kMagic && u8() == kVersion && ok_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

class Writer {
 public:
  Writer(uint8_t* p, size_t cap) : begin_(p), p_(p), end_(p + cap) {}
  int length() const { return ok_ ? static_cast<int>(p_ - begin_) : -1; }

  uint8_t* room(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      return nullptr;
    }
    uint8_t* at = p_;
    p_ += n;
    return at;
  }
  void u8(uint8_t v) {
    if (uint8_t* at = room(1)) *at = v;
  }
  void u16(size_t v) {
    if (v > 0xffff) ok_ = false;
    if (uint8_t* at = room(2)) {
      at[0] = static_cast<uint8_t>(v);
      at[1] = static_cast<uint8_t>(v >> 8);
    }
  }
  void u32(uint32_t v) {
    u16(v & 0xffff);
    u16(v >> 16);
  }
  void f64(double v) {
    if (uint8_t* at = room(8)) std::memcpy(at, &v, 8);
  }
  void bytes(const uint8_t* data, size_t n) {
    u16(n);
    if (uint8_t* at = room(n)) std::memcpy(at, data, n);
  }
  void str(std::string_view s) { bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  // A placeholder count, filled in later with `set_u8`/`set_u16`.
  uint8_t* mark(size_t n) { return room(n); }
  void header() {
    u8(kMagic);
    u8(kVersion);
  }

 private:
  uint8_t* begin_;
  uint8_t* p_;
  uint8_t* end_;
  bool ok_ = true;
};

constexpr uint8_t kEventKinds = static_cast<uint8_t>(EventKind::epoch_read) + 1;
constexpr uint8_t kAuthorities = 3;

LeaseRecord read_lease(Reader& r) {
  LeaseRecord rec;
  rec.present = r.flag();
  if (!rec.present) return rec;
  rec.owner = r.text<TabId>();
  rec.generation = r.u32();
  rec.epoch = r.epoch();
  rec.expires_ms = r.time();
  rec.takeover_ms = r.time();
  return rec;
}

void write_lease(Writer& w, const LeaseRecord& rec) {
  w.u8(rec.present ? 1 : 0);
  if (!rec.present) return;
  w.str(rec.owner);
  w.u32(rec.generation);
  w.f64(static_cast<double>(rec.epoch));
  w.f64(rec.expires_ms);
  w.f64(rec.takeover_ms);
}

bool read_event(Reader& r, Event& e) {
  if (!r.header()) return false;
  e.kind = static_cast<EventKind>(r.below(kEventKinds));
  e.now_ms = r.time();
  e.wall_ms = r.time();
  switch (e.kind) {
    case EventKind::message: {
      e.size = r.u16();
      e.data = r.bytes(e.size);
      break;
    }
    case EventKind::join: {
      e.resource = r.text<ResourceName>();
      e.policy.required_capability = r.text<Capability>();
      uint8_t flags = r.below(static_cast<uint8_t>(kLastJoinFlag) << 1);
      auto has = [flags](JoinFlag f) { return (flags & static_cast<uint8_t>(f)) != 0; };
      e.policy.allow_hidden = has(JoinFlag::allow_hidden);
      e.policy.prefer_visible = has(JoinFlag::prefer_visible);
      e.policy.requires_network = has(JoinFlag::requires_network);
      e.policy.newest_app_only = has(JoinFlag::newest_app_only);
      e.policy.observe_only = has(JoinFlag::observe_only);
      break;
    }
    case EventKind::leave:
    case EventKind::lock_granted:
    case EventKind::lock_lost:
    case EventKind::lock_unavailable:
    case EventKind::lease_failed:
    case EventKind::lease_aborted:
    case EventKind::abdicate:
    case EventKind::force_election:
      e.resource = r.text<ResourceName>();
      break;
    case EventKind::epoch_allocated:
      e.resource = r.text<ResourceName>();
      e.epoch = r.epoch();
      e.durable = r.flag();
      break;
    case EventKind::lease_read:
      e.resource = r.text<ResourceName>();
      e.lease = read_lease(r);
      e.epoch = r.epoch();
      break;
    case EventKind::lease_result:
      e.resource = r.text<ResourceName>();
      e.lease = read_lease(r);
      break;
    case EventKind::fence_check:
    case EventKind::epoch_read:
      e.resource = r.text<ResourceName>();
      e.epoch = r.epoch();
      break;
    case EventKind::lifecycle:
      e.lifecycle = static_cast<Lifecycle>(r.below(kLifecycleCount));
      break;
    case EventKind::tick:
    case EventKind::online:
    case EventKind::offline:
    case EventKind::session_changed:
    case EventKind::dispose:
      break;
  }
  return r.done();
}

void write_effect(Writer& w, const Effect& fx) {
  w.u8(static_cast<uint8_t>(fx.kind));
  w.str(fx.resource);
  switch (fx.kind) {
    case EffectKind::broadcast:
      w.bytes(fx.bytes.data(), fx.bytes.size());
      break;
    case EffectKind::lock_request:
      w.u8(static_cast<uint8_t>(fx.lock_mode));
      break;
    case EffectKind::allocate_epoch:
      w.f64(static_cast<double>(fx.epoch));
      break;
    case EffectKind::elected:
    case EffectKind::deposed:
      w.f64(static_cast<double>(fx.epoch));
      w.u8(static_cast<uint8_t>(fx.reason));
      w.u8(static_cast<uint8_t>(fx.degraded));
      break;
    case EffectKind::lease_write:
      w.u8(fx.unread ? 1 : 0);
      write_lease(w, fx.lease);
      break;
    case EffectKind::fence_verdict:
      w.u8(fx.verdict == FenceVerdict::accepted ? 1 : 0);
      w.f64(static_cast<double>(fx.epoch));
      break;
    case EffectKind::lease_try:
    case EffectKind::lock_release:
    case EffectKind::leader_changed:
      break;
  }
}

// The glue is told every field of a view but `eligible`, which the core computes from the
// time (a newer app version's veto ends with time alone, ranking.cc) and from frames that
// have no effect: every field told is state that only a step sets, so views_to_compare may
// skip the steps that cannot have set it (test_boundary_views.cc). Telling `eligible`
// would need a step at the moment a veto ends, and every frame's step to compare views.
bool same_view(const ResourceView& a, const ResourceView& b) {
  return a.role == b.role && a.reason == b.reason && a.epoch == b.epoch && a.leader == b.leader &&
         a.leader_epoch == b.leader_epoch && a.leader_since_ms == b.leader_since_ms &&
         a.degraded == b.degraded && a.valid_until_ms == b.valid_until_ms &&
         a.valid_until_wall_ms == b.valid_until_wall_ms;
}

void write_view(Writer& w, const ResourceView& v) {
  w.u8(static_cast<uint8_t>(v.role));
  w.u8(static_cast<uint8_t>(v.reason));
  w.f64(static_cast<double>(v.epoch));
  w.str(v.leader);
  w.f64(static_cast<double>(v.leader_epoch));
  w.f64(v.leader_since_ms);
  w.u8(static_cast<uint8_t>(v.degraded));
  w.f64(v.valid_until_ms);
  w.f64(v.valid_until_wall_ms);
}

// Which views a step may have changed. A view changes only with an effect (elected,
// deposed, leader-changed), a role change (a new transition in the log), or an event other
// than a frame or a tick. A fence check changes only the fence, and a lease read only
// decides the write it answers with (Election::step runs no due work for either): a fence
// check changes no view, a lease read at most its resource's. Any other event may change
// any view, and comparing them all costs a view per resource.
enum class Views { none, of_resource, all };

Views views_to_compare(EventKind kind, bool effects, bool role_changed) {
  if (role_changed) return Views::all;
  switch (kind) {
    case EventKind::message:
    case EventKind::tick: return effects ? Views::all : Views::none;
    case EventKind::fence_check: return Views::none;
    case EventKind::lease_read: return Views::of_resource;
    default: return Views::all;
  }
}

// The glue's copy of the view of `name` in `told` (a GrowingArray<ToldView>, const or not).
template <typename List>
auto find_told(List& told, const ResourceName& name) -> decltype(&told[0]) {
  for (auto& entry : told) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// The answer to a lease read: the view of its resource, which the glue holds (a join
// told it, and only a leave, which compares every view, makes it forget), if it changed.
uint8_t tell_one(Writer& w, const Election& election, GrowingArray<ToldView>& told, const ResourceName& name) {
  ToldView* before = find_told(told, name);
  if (!before) return 0;
  ResourceView view = election.view(name);
  if (same_view(before->view, view)) return 0;
  w.u8(1);
  w.str(name);
  write_view(w, view);
  before->view = view;
  return 1;
}

// Tells the glue every view that differs from its copy, and the resources it must forget.
uint8_t tell_all(Writer& w, const Election& election, GrowingArray<ToldView>& told) {
  uint8_t changed = 0;
  GrowingArray<ToldView> now;
  for (const ResourceName& name : election.resources()) now.push_back({name, election.view(name)});
  for (const ToldView& entry : now) {
    const ToldView* before = find_told(told, entry.name);
    if (before && same_view(before->view, entry.view)) continue;
    w.u8(1);
    w.str(entry.name);
    write_view(w, entry.view);
    ++changed;
  }
  for (const ToldView& entry : told) {
    if (find_told(now, entry.name)) continue;
    w.u8(0);
    w.str(entry.name);
    ++changed;
  }
  told = std::move(now);
  return changed;
}

}  // namespace

bool read_config(const uint8_t* in, size_t size, Config& c) {
  Reader r(in, size);
  if (!r.header()) return false;
  c.id = r.text<TabId>();
  c.generation = r.u32();
  c.app_version = r.text<Version>();
  uint8_t n = r.below(static_cast<uint8_t>(wire::kMaxCapabilities + 1));
  c.capabilities.clear();
  for (uint8_t i = 0; i < n && r.ok(); ++i) c.capabilities.push_back(r.text<Capability>());
  c.authority = static_cast<Authority>(r.below(kAuthorities));
  // NaN keeps the core's default (election.h); anything else must be a positive duration.
  for (double* ms : {&c.heartbeat_ms, &c.suspect_ms, &c.lease_ms}) {
    double v = r.f64();
    if (std::isnan(v)) continue;
    if (!(v > 0)) return false;
    *ms = v;
  }
  c.start_ms = r.time();
  c.seed = static_cast<uint64_t>(r.u32());
  return r.done();
}

int Session::step(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap) {
  Reader r(in, in_size);
  Event e;
  if (!read_event(r, e)) return -1;
  effects_.clear();
  election_.step(e, effects_);

  Writer w(out, out_cap);
  w.header();
  w.f64(election_.next_deadline());
  w.u8(static_cast<uint8_t>(election_.authority()));
  w.u8(static_cast<uint8_t>(election_.degradation()));
  w.u16(effects_.size());
  for (const Effect& fx : effects_) write_effect(w, fx);

  // Views that changed since the glue was last told, and resources it must forget.
  uint64_t transitions = election_.log().pushed();
  Views views = views_to_compare(e.kind, !effects_.empty(), transitions != transitions_told_);
  transitions_told_ = transitions;
  uint8_t* count = w.mark(1);
  uint8_t changed = 0;
  if (views == Views::of_resource) changed = tell_one(w, election_, told_, e.resource);
  if (views == Views::all) changed = tell_all(w, election_, told_);
  if (count) *count = changed;
  return w.length();
}

bool Session::views_told() const {
  GrowingArray<ResourceName> names = election_.resources();
  if (names.size() != told_.size()) return false;
  for (const ResourceName& name : names) {
    const ToldView* entry = find_told(told_, name);
    if (!entry || !same_view(entry->view, election_.view(name))) return false;
  }
  return true;
}

int Session::ask(const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap) {
  Reader r(in, in_size);
  if (!r.header()) return -1;
  auto query = static_cast<Query>(r.below(static_cast<uint8_t>(Query::log) + 1));
  if (!r.ok()) return -1;
  Writer w(out, out_cap);
  w.header();
  switch (query) {
    case Query::presence: {
      double now_ms = r.time();
      double wall_ms = r.time();
      if (!r.done()) return -1;
      const auto& all = election_.presence().all();
      w.u16(all.size());
      for (const auto& [id, c] : all) {
        w.str(id);
        w.u32(c.generation);
        w.u8(static_cast<uint8_t>(c.lifecycle));
        w.u8(static_cast<uint8_t>(Presence::liveness(c, now_ms)));
        w.str(c.app_version);
        w.u8(static_cast<uint8_t>(c.capabilities.size()));
        for (const Capability& cap : c.capabilities) w.str(cap);
        // On the wall clock, for the application.
        w.f64(c.last_seen_ms - now_ms + wall_ms);
        w.f64(c.last_progress_ms - now_ms + wall_ms);
      }
      break;
    }
    case Query::metrics: {
      if (!r.done()) return -1;
      const Metrics& m = election_.metrics();
#define BATON_VALUE(field, js) w.f64(static_cast<double>(m.field));
      BATON_COUNTERS(BATON_VALUE)
#undef BATON_VALUE
      for (uint64_t n : m.step_down_reasons) w.f64(static_cast<double>(n));
      break;
    }
    case Query::log: {
      if (!r.done()) return -1;
      const auto& log = election_.log();
      w.u16(log.size());
      for (const Transition& t : log) {
        w.f64(t.at_ms);
        w.str(t.resource);
        w.u8(static_cast<uint8_t>(t.from));
        w.u8(static_cast<uint8_t>(t.to));
        w.u8(static_cast<uint8_t>(t.reason));
        w.f64(static_cast<double>(t.epoch));
      }
      break;
    }
  }
  return w.length();
}

int ask_fence(Fence& fence, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_cap) {
  Reader r(in, in_size);
  if (!r.header()) return -1;
  auto query = static_cast<FenceQuery>(r.below(static_cast<uint8_t>(FenceQuery::highest) + 1));
  ResourceName resource = r.text<ResourceName>();
  uint64_t epoch = query == FenceQuery::admit ? r.epoch() : 0;
  if (!r.done()) return -1;
  Writer w(out, out_cap);
  w.header();
  if (query == FenceQuery::admit) {
    w.u8(fence.admit(resource, epoch) == FenceVerdict::accepted ? 1 : 0);
  } else {
    w.f64(static_cast<double>(fence.highest(resource)));
  }
  return w.length();
}

}  // namespace baton::boundary
