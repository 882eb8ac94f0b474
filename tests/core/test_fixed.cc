// The core's flat storage (fixed.h): the growing array behind a step's effects and the
// tables the core does not bound, and the fixed buffer an encoded frame lives in.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/fixed.h"

using namespace baton;

namespace {

std::vector<int> items(const GrowingArray<int>& a) { return a; }

}  // namespace

TEST_CASE("fixed: a growing array keeps order through growth, inserts and erases") {
  GrowingArray<int> a;
  CHECK(a.empty());
  for (int i = 0; i < 100; ++i) a.push_back(i);  // grows past its first capacity many times
  REQUIRE(a.size() == 100);
  for (int i = 0; i < 100; ++i) REQUIRE(a[i] == i);
  a.insert(a.begin() + 1, -1);
  CHECK(a[0] == 0);
  CHECK(a[1] == -1);
  CHECK(a[2] == 1);
  CHECK(a.back() == 99);
  int* next = a.erase(a.begin() + 1);
  CHECK(*next == 1);
  CHECK(a.size() == 100);
  a.erase(a.end() - 1);
  CHECK(a.back() == 98);
  a.clear();
  CHECK(a.empty());
  a.push_back(7);
  CHECK(items(a) == std::vector<int>{7});
}

TEST_CASE("fixed: a growing array's copies and moves are independent of the original") {
  GrowingArray<int> a;
  for (int i = 0; i < 10; ++i) a.push_back(i);
  GrowingArray<int> copy = a;
  copy.push_back(10);
  copy[0] = 42;
  CHECK(a.size() == 10);
  CHECK(a[0] == 0);
  GrowingArray<int> moved = std::move(copy);
  CHECK(moved.size() == 11);
  CHECK(moved[0] == 42);
  a = moved;
  moved[1] = -5;
  CHECK(a[1] == 1);
  CHECK(items(a).size() == 11);
}

TEST_CASE("fixed: a flat map stays sorted by key and finds, inserts and erases by name") {
  FlatMap<FixedString<8>, int> m;
  *m.insert("b") = 2;
  *m.insert("c") = 3;
  *m.insert("a") = 1;
  *m.insert("b") += 10;  // the existing entry
  REQUIRE(m.size() == 3);
  std::string order;
  for (const auto& e : m) order += e.key.str();
  CHECK(order == "abc");
  CHECK(*m.find("b") == 12);
  CHECK(m.find("d") == nullptr);
  CHECK(m.erase("a"));
  CHECK_FALSE(m.erase("a"));
  CHECK(m.begin()->key == "b");
}

TEST_CASE("fixed: a fixed vector refuses items past its capacity") {
  FixedVector<uint8_t, 3> v;
  CHECK(v.push_back(1));
  CHECK(v.push_back(2));
  CHECK(v.push_back(3));
  CHECK_FALSE(v.push_back(4));
  CHECK(v.size() == 3);
  CHECK(v.data()[2] == 3);
  CHECK(std::vector<uint8_t>(v) == std::vector<uint8_t>{1, 2, 3});
}
