//===- InlineVectorTest.cpp - InlineVector against std::vector ------------===//
//
// InlineVector (Support/InlineVector.h, Note [Inline vectors]) is infer::Dims,
// so every shape rule leans on it. Each test runs the same operations on an
// InlineVector and on a std::vector and compares them after each step, across
// the move from inline storage to the heap and back (a moved-from vector is
// inline again), with ranges of the vector itself as sources.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Support/InlineVector.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <random>
#include <vector>

using namespace onnxir;

namespace {

using IV = InlineVector<int64_t, 4>;

::testing::AssertionResult same(const IV &a, const std::vector<int64_t> &b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "size " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < b.size(); ++i)
    if (a[i] != b[i])
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  if (a.capacity() < a.size()) return ::testing::AssertionFailure() << "capacity below size";
  return ::testing::AssertionSuccess();
}

TEST(InlineVectorTest, ConstructorsAsStdVector) {
  EXPECT_TRUE(same(IV(), {}));
  EXPECT_TRUE(same(IV(3), {0, 0, 0}));
  EXPECT_TRUE(same(IV(6, 7), {7, 7, 7, 7, 7, 7}));
  EXPECT_TRUE(same(IV{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}));
  std::vector<int64_t> src = {9, 8, 7, 6, 5, 4};
  EXPECT_TRUE(same(IV(src.begin() + 1, src.end() - 1), {8, 7, 6, 5}));
  // Two integers are a count and a value, not an iterator range.
  EXPECT_TRUE(same(IV(2, 5), {5, 5}));
  // Pointers: as infer::Dims holds them; {nullptr} is one null element.
  InlineVector<const int *, 2> p{nullptr};
  EXPECT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], nullptr);
  InlineVector<const int *, 2> q(3, nullptr);
  EXPECT_EQ(q.size(), 3u);
}

TEST(InlineVectorTest, CopiesAndMovesInlineAndOnTheHeap) {
  for (size_t n : {0, 3, 4, 5, 17}) {
    std::vector<int64_t> ref;
    IV a;
    for (size_t i = 0; i < n; ++i) {
      a.push_back(int64_t(i * 3));
      ref.push_back(int64_t(i * 3));
    }
    IV copy(a);
    EXPECT_TRUE(same(copy, ref));
    IV moved(std::move(a));
    EXPECT_TRUE(same(moved, ref));
    EXPECT_TRUE(a.empty()); // moved from: empty and usable
    a.push_back(1);
    EXPECT_TRUE(same(a, {1}));
    IV assigned{42};
    assigned = moved;
    EXPECT_TRUE(same(assigned, ref));
    IV moveAssigned{1, 2, 3, 4, 5, 6};
    moveAssigned = std::move(moved);
    EXPECT_TRUE(same(moveAssigned, ref));
    IV &alias = moveAssigned;
    moveAssigned = alias; // self-assignment keeps the elements
    EXPECT_TRUE(same(moveAssigned, ref));
    IV s1{1, 2}, s2(ref.begin(), ref.end());
    s1.swap(s2);
    EXPECT_TRUE(same(s1, ref));
    EXPECT_TRUE(same(s2, {1, 2}));
  }
}

TEST(InlineVectorTest, RangesOfItself) {
  // Inserting the vector into itself, inline and past the inline room.
  IV a{1, 2, 3};
  a.insert(a.begin() + 1, a.begin(), a.end());
  EXPECT_TRUE(same(a, {1, 1, 2, 3, 2, 3}));
  a.insert(a.end(), a.begin(), a.end());
  EXPECT_TRUE(same(a, {1, 1, 2, 3, 2, 3, 1, 1, 2, 3, 2, 3}));
  // An element of itself as the value pushed or inserted while it grows.
  IV b{5, 6, 7, 8};
  b.push_back(b[0]);
  EXPECT_TRUE(same(b, {5, 6, 7, 8, 5}));
  IV c{5, 6, 7, 8};
  c.insert(c.begin(), c.back());
  EXPECT_TRUE(same(c, {8, 5, 6, 7, 8}));
  IV d{5, 6, 7, 8};
  d.insert(d.begin() + 2, 3, d[3]);
  EXPECT_TRUE(same(d, {5, 6, 8, 8, 8, 7, 8}));
  IV e{1, 2};
  e.resize(9, e[1]);
  EXPECT_TRUE(same(e, {1, 2, 2, 2, 2, 2, 2, 2, 2}));
  // Assigning a tail of itself.
  IV f{1, 2, 3, 4, 5, 6};
  f.assign(f.begin() + 2, f.end());
  EXPECT_TRUE(same(f, {3, 4, 5, 6}));
}

// Random operations, the same on both, compared after each one.
TEST(InlineVectorTest, RandomOperationsAsStdVector) {
  std::mt19937 rng(12345);
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  IV a;
  std::vector<int64_t> r;
  for (int step = 0; step < 20000; ++step) {
    int64_t v = int64_t(rng() % 1000);
    switch (rng() % 12) {
    case 0:
    case 1:
      a.push_back(v);
      r.push_back(v);
      break;
    case 2:
      if (!r.empty()) {
        a.pop_back();
        r.pop_back();
      }
      break;
    case 3: {
      size_t at = pick(r.size() + 1);
      a.insert(a.begin() + at, v);
      r.insert(r.begin() + at, v);
      break;
    }
    case 4: {
      size_t at = pick(r.size() + 1), n = pick(6);
      a.insert(a.begin() + at, n, v);
      r.insert(r.begin() + at, n, v);
      break;
    }
    case 5: {
      // A range of itself, inserted into itself.
      size_t lo = pick(r.size() + 1), hi = lo + pick(r.size() - lo + 1), at = pick(r.size() + 1);
      a.insert(a.begin() + at, a.begin() + lo, a.begin() + hi);
      std::vector<int64_t> part(r.begin() + lo, r.begin() + hi);
      r.insert(r.begin() + at, part.begin(), part.end());
      break;
    }
    case 6:
      if (!r.empty()) {
        size_t at = pick(r.size());
        a.erase(a.begin() + at);
        r.erase(r.begin() + at);
      }
      break;
    case 7: {
      size_t lo = pick(r.size() + 1), hi = lo + pick(r.size() - lo + 1);
      a.erase(a.begin() + lo, a.begin() + hi);
      r.erase(r.begin() + lo, r.begin() + hi);
      break;
    }
    case 8: {
      size_t n = pick(12);
      a.resize(n, v);
      r.resize(n, v);
      break;
    }
    case 9: {
      IV moved(std::move(a));
      a = moved;
      break;
    }
    case 10:
      if (rng() % 8 == 0) {
        a.clear();
        r.clear();
      }
      break;
    case 11: {
      size_t n = pick(10);
      a.reserve(n);
      break;
    }
    }
    ASSERT_TRUE(same(a, r)) << "after step " << step;
    // Keep it small enough to cross the inline limit often.
    if (r.size() > 40) {
      a.resize(2);
      r.resize(2);
    }
  }
}

TEST(InlineVectorTest, Comparisons) {
  EXPECT_EQ(IV({1, 2, 3}), IV({1, 2, 3}));
  EXPECT_NE(IV({1, 2, 3}), IV({1, 2}));
  EXPECT_NE(IV({1, 2, 3, 4, 5}), IV({1, 2, 3, 4, 6}));
  EXPECT_LT(IV({1, 2}), IV({1, 3}));
  EXPECT_LT(IV({1, 2}), IV({1, 2, 0}));
  EXPECT_FALSE(IV({1, 3}) < IV({1, 2, 9}));
}

} // namespace
