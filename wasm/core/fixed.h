// Flat storage for the core's data. Fixed capacity, never allocating: a string, a vector,
// a sorted map and a ring buffer, for data with limits (wire.h: ids, names, versions,
// capabilities, claims; presence.h: tabs). A sorted map in one growing array (FlatMap)
// for the few tables the core does not bound. They keep libc++'s maps, strings and deques
// out of the wasm and allocations out of the frame path.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <new>
#include <string_view>
#include <type_traits>
#include <vector>

namespace baton {

// Room for N objects of T, none constructed up front: a node's table of 256 tabs costs
// nothing (no constructor, no page touched) until tabs arrive. T is plain data, moved
// with memmove.
template <typename T, size_t N>
class Slots {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "slots hold plain data");

 public:
  T* data() { return std::launder(reinterpret_cast<T*>(raw_)); }
  const T* data() const { return std::launder(reinterpret_cast<const T*>(raw_)); }

 private:
  alignas(T) unsigned char raw_[N * sizeof(T)];
};

// Up to N bytes of text. Longer input is cut at N: every producer checks the limit first
// (the wire decoder rejects, the glue throws a TypeError), so cutting only guards memory.
template <size_t N>
class FixedString {
  static_assert(N <= 255, "the length is kept in one byte");

 public:
  static constexpr size_t kCapacity = N;

  FixedString() = default;
  FixedString(std::string_view s) { assign(s); }  // NOLINT: implicit, like std::string
  FixedString(const char* s) { assign(s); }       // NOLINT
  FixedString(const std::string& s) { assign(s); }  // NOLINT

  void assign(std::string_view s) {
    size_ = static_cast<uint8_t>(std::min(s.size(), N));
    if (size_) std::memcpy(data_, s.data(), size_);
  }
  void clear() { size_ = 0; }

  std::string_view view() const { return {data_, size_}; }
  operator std::string_view() const { return view(); }  // NOLINT
  std::string str() const { return std::string(view()); }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // One pair of comparisons: the other side converts to a string_view (another
  // FixedString, a std::string, a literal), so no two overloads compete.
  friend bool operator==(const FixedString& a, std::string_view b) { return a.view() == b; }
  friend bool operator!=(const FixedString& a, std::string_view b) { return a.view() != b; }
  // For traces and messages built outside the core (tests, tools).
  friend std::string operator+(const std::string& a, const FixedString& b) { return a + b.str(); }
  friend std::string operator+(const char* a, const FixedString& b) { return a + b.str(); }
  friend std::string operator+(const FixedString& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const FixedString& a, const char* b) { return a.str() + b; }

 private:
  uint8_t size_ = 0;
  char data_[N];
};

// Up to N elements in place.
template <typename T, size_t N>
class FixedVector {
 public:
  static constexpr size_t kCapacity = N;

  FixedVector() = default;
  // Items past N are left out.
  FixedVector(std::initializer_list<T> items) {
    for (const T& v : items) push_back(v);
  }

  // False (and nothing added) when full.
  bool push_back(const T& v) {
    if (size_ == N) return false;
    new (items_.data() + size_++) T(v);
    return true;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == N; }
  T& operator[](size_t i) { return items_.data()[i]; }
  const T& operator[](size_t i) const { return items_.data()[i]; }
  const T& front() const { return (*this)[0]; }
  const T& back() const { return (*this)[size_ - 1]; }
  T* begin() { return items_.data(); }
  T* end() { return items_.data() + size_; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }

  friend bool operator==(const FixedVector& a, const FixedVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const FixedVector& a, const FixedVector& b) { return !(a == b); }

 private:
  size_t size_ = 0;
  Slots<T, N> items_;
};

// Up to N entries kept sorted by key in one array: lookups by binary search, iteration in
// key order (as std::map iterates, so every decision that walks the table sees the same
// order on every tab).
template <typename Key, typename Value, size_t N>
class FixedMap {
 public:
  struct Entry {
    Key key;
    Value value;
  };

  Value* find(std::string_view key) {
    Entry* e = lower(key);
    return e != end() && e->key == key ? &e->value : nullptr;
  }
  const Value* find(std::string_view key) const { return const_cast<FixedMap*>(this)->find(key); }
  // The entry for `key`, added (value-initialised) if missing; nullptr when full.
  Value* insert(std::string_view key) {
    Entry* e = lower(key);
    if (e != end() && e->key == key) return &e->value;
    if (size_ == N) return nullptr;
    std::memmove(static_cast<void*>(e + 1), e, static_cast<size_t>(end() - e) * sizeof(Entry));
    new (e) Entry{Key(key), Value()};
    ++size_;
    return &e->value;
  }
  bool erase(std::string_view key) {
    Entry* e = lower(key);
    if (e == end() || e->key != key) return false;
    erase(e);
    return true;
  }
  // Removes the entry `e` points at; returns the one after it.
  Entry* erase(Entry* e) {
    std::memmove(static_cast<void*>(e), e + 1, static_cast<size_t>(end() - e - 1) * sizeof(Entry));
    --size_;
    return e;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == N; }
  Entry* begin() { return entries_.data(); }
  Entry* end() { return entries_.data() + size_; }
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + size_; }

 private:
  Entry* lower(std::string_view key) {
    return std::lower_bound(begin(), end(), key, [](const Entry& e, std::string_view k) { return e.key.view() < k; });
  }

  size_t size_ = 0;
  Slots<Entry, N> entries_;
};

// Entries kept sorted by key in one growing array, for tables the core does not bound
// itself (the resources a tab joined, the fence's floors): iteration in key order.
template <typename Key, typename Value>
class FlatMap {
 public:
  struct Entry {
    Key key;
    Value value;
  };

  Value* find(std::string_view key) {
    auto it = lower(key);
    return it != entries_.end() && it->key == key ? &it->value : nullptr;
  }
  const Value* find(std::string_view key) const { return const_cast<FlatMap*>(this)->find(key); }
  // The entry for `key`, added (value-initialised) if missing. Pointers to entries stay
  // valid until the next insert or erase.
  Value* insert(std::string_view key) {
    auto it = lower(key);
    if (it != entries_.end() && it->key == key) return &it->value;
    return &entries_.insert(it, Entry{Key(key), Value()})->value;
  }
  bool erase(std::string_view key) {
    auto it = lower(key);
    if (it == entries_.end() || it->key != key) return false;
    entries_.erase(it);
    return true;
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  Entry* begin() { return entries_.data(); }
  Entry* end() { return entries_.data() + entries_.size(); }
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + entries_.size(); }

 private:
  typename std::vector<Entry>::iterator lower(std::string_view key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const Entry& e, std::string_view k) { return e.key.view() < k; });
  }

  std::vector<Entry> entries_;
};

// The last N items pushed, oldest first; older ones are overwritten.
template <typename T, size_t N>
class Ring {
 public:
  class Iterator {
   public:
    Iterator(const Ring* ring, size_t i) : ring_(ring), i_(i) {}
    const T& operator*() const { return (*ring_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    const Ring* ring_;
    size_t i_;
  };

  void push_back(const T& v) {
    new (items_.data() + (start_ + size_) % N) T(v);
    if (size_ < N) ++size_;
    else start_ = (start_ + 1) % N;
    ++pushed_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return items_.data()[(start_ + i) % N]; }
  const T& back() const { return (*this)[size_ - 1]; }
  // How many items were ever pushed: tells a reader that something new arrived even
  // when the ring is full and its size stays the same.
  uint64_t pushed() const { return pushed_; }
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size_}; }

 private:
  size_t start_ = 0;
  size_t size_ = 0;
  uint64_t pushed_ = 0;
  Slots<T, N> items_;
};

}  // namespace baton
