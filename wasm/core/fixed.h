// Flat storage for the core's data. Fixed capacity, never allocating: a string, a vector,
// a sorted map and a ring buffer, for data with limits (wire.h: ids, names, versions,
// capabilities, claims, frames; presence.h: tabs). A growing array of plain data
// (GrowingArray) and a sorted map in one (FlatMap) for the few lists the core does not
// bound (a step's effects, the resources a tab joined). They keep libc++'s containers out
// of the wasm and allocations out of the frame path.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <new>
#include <string_view>
#include <type_traits>
#include <vector>

namespace baton {

// Room for N objects of T, none constructed up front: an election's table of 256 tabs costs
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
  T* data() { return items_.data(); }
  const T* data() const { return items_.data(); }
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
  // A copy for code outside the core that keeps its data in a std::vector (tests, tools).
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

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

// A growing array of plain data, moved with memcpy: what the core needs of std::vector
// (append, insert and erase in place) in a fraction of its code. Never shrinks.
template <typename T>
class GrowingArray {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "a growing array holds plain data");

 public:
  GrowingArray() = default;
  GrowingArray(const GrowingArray& o) { append(o); }
  GrowingArray(GrowingArray&& o) noexcept : items_(o.items_), size_(o.size_), capacity_(o.capacity_) {
    o.items_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  GrowingArray& operator=(GrowingArray o) noexcept {
    std::swap(items_, o.items_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  ~GrowingArray() { std::free(items_); }

  // Inserts `v` before `at`; returns where it is now. `v` must not be an item of this
  // array (growing frees it and shifting moves it): unlike std::vector, no copy is made
  // first, which would cost code on every call for a case the core never has. The
  // debug builds (the sanitizer preset runs them) check it.
  T* insert(T* at, const T& v) {
    assert(!owns(&v));
    size_t i = static_cast<size_t>(at - items_);
    if (size_ == capacity_) grow();
    std::memmove(static_cast<void*>(items_ + i + 1), items_ + i, (size_ - i) * sizeof(T));
    std::memcpy(static_cast<void*>(items_ + i), &v, sizeof(T));
    ++size_;
    return items_ + i;
  }
  // As insert(end(), v), without the call to shift nothing.
  void push_back(const T& v) {
    assert(!owns(&v));
    if (size_ == capacity_) grow();
    std::memcpy(static_cast<void*>(items_ + size_++), &v, sizeof(T));
  }
  // A new value-initialised item at the end, made in place: no copy of a large T.
  T& emplace_back() {
    if (size_ == capacity_) grow();
    return *new (static_cast<void*>(items_ + size_++)) T();
  }
  void append(const GrowingArray& o) {
    for (const T& v : o) push_back(v);
  }
  // Removes the item `at` points at; returns the one after it.
  T* erase(T* at) {
    std::memmove(static_cast<void*>(at), at + 1, static_cast<size_t>(end() - at - 1) * sizeof(T));
    --size_;
    return at;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  T& back() { return items_[size_ - 1]; }
  const T& back() const { return items_[size_ - 1]; }
  T* begin() { return items_; }
  T* end() { return items_ + size_; }
  const T* begin() const { return items_; }
  const T* end() const { return items_ + size_; }
  // A copy for code outside the core that keeps its data in a std::vector (tests, tools).
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

 private:
  bool owns(const T* p) const {
    return std::less_equal<const T*>()(begin(), p) && std::less<const T*>()(p, end());
  }
  void grow() {
    size_t capacity = capacity_ ? 2 * capacity_ : 4;
    T* items = static_cast<T*>(std::malloc(capacity * sizeof(T)));
    if (!items) std::abort();  // as std::vector does without exceptions
    if (size_) std::memcpy(static_cast<void*>(items), items_, size_ * sizeof(T));
    std::free(items_);
    items_ = items;
    capacity_ = capacity;
  }

  T* items_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
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
    Entry* e = lower(key);
    return e != end() && e->key == key ? &e->value : nullptr;
  }
  const Value* find(std::string_view key) const { return const_cast<FlatMap*>(this)->find(key); }
  // The entry for `key`, added (value-initialised) if missing. Pointers to entries stay
  // valid until the next insert or erase.
  Value* insert(std::string_view key) {
    Entry* e = lower(key);
    if (e != end() && e->key == key) return &e->value;
    return &entries_.insert(e, Entry{Key(key), Value()})->value;
  }
  bool erase(std::string_view key) {
    Entry* e = lower(key);
    if (e == end() || e->key != key) return false;
    entries_.erase(e);
    return true;
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  Entry* begin() { return entries_.begin(); }
  Entry* end() { return entries_.end(); }
  const Entry* begin() const { return entries_.begin(); }
  const Entry* end() const { return entries_.end(); }

 private:
  Entry* lower(std::string_view key) {
    return std::lower_bound(begin(), end(), key, [](const Entry& e, std::string_view k) { return e.key.view() < k; });
  }

  GrowingArray<Entry> entries_;
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
