//===- ContextTest.cpp - Interning with hashes, the table's large blocks --===//
#include "TestUtil.h"

#include "onnxir/IR/LargePages.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

// Note [Prefetched names]: the hashed forms are the plain ones with the
// hash computed by the caller; the prefetches change nothing.
TEST(ContextTest, HashedInterningAgreesWithPlainInterning) {
  Context c;
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("name_" + std::to_string(i * 7919));
  names.push_back("");
  std::vector<llvm::StringRef> interned;
  for (size_t i = 0; i < names.size(); ++i) {
    uint32_t h = Context::nameHash(names[i]);
    c.prefetchSlot(h);
    c.prefetchInterned(names[i], h); // not interned yet: a hint on an absent name
    EXPECT_EQ(c.findInterned(names[i], h).data(), nullptr);
    // Every other name the hashed way: the table is shared (it grows
    // through both).
    interned.push_back(i % 2 ? c.intern(names[i], h) : c.intern(names[i]));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    uint32_t h = Context::nameHash(names[i]);
    c.prefetchSlot(h);
    c.prefetchInterned(names[i], h);
    EXPECT_EQ(c.findInterned(names[i], h).data(), interned[i].data()) << names[i];
    EXPECT_EQ(c.findInterned(names[i]).data(), interned[i].data()) << names[i];
    EXPECT_EQ(c.intern(std::string(names[i]), h).data(), interned[i].data()) << names[i];
    EXPECT_EQ(interned[i], names[i]);
  }
  std::string absent = "name_1";
  EXPECT_EQ(c.findInterned(absent, Context::nameHash(absent)).data(), nullptr);
}

TEST(ContextTest, LookupInternedIsLookup) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Context &c = m.getContext();
  EXPECT_EQ(g.lookupInterned(c.findInterned("x")), x);
  EXPECT_EQ(g.lookupInterned(c.findInterned("never")), nullptr);
  c.intern("interned_but_undefined");
  EXPECT_EQ(g.lookupInterned(c.findInterned("interned_but_undefined")), nullptr);
}

// The table grows from malloc'ed blocks into huge-page advised ones
// (200000 names need a table of 512Ki slots, 12 MB): every name still
// interns to its first copy.
TEST(ContextTest, TableGrowsPastLargeBlocks) {
  Context c;
  std::vector<llvm::StringRef> first;
  for (int i = 0; i < 200000; ++i) first.push_back(c.intern("v" + std::to_string(i)));
  for (int i = 0; i < 200000; i += 7) {
    std::string s = "v" + std::to_string(i);
    ASSERT_EQ(c.findInterned(s).data(), first[i].data()) << s;
    ASSERT_EQ(c.intern(s, Context::nameHash(s)).data(), first[i].data()) << s;
  }
}

// Note [Large pages]: big blocks are 2 MiB aligned, small ones are not
// forced to be; both are usable memory of the size asked.
TEST(ContextTest, LargeBlocksAreAlignedAndUsable) {
  for (size_t size : {size_t(24), size_t(4096), detail::kLargeBlockMin - 1, detail::kLargeBlockMin,
                      detail::kLargeBlockMin * 3 + 5}) {
    void *p = detail::allocateBlock(size, 16);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
    if (size >= detail::kLargeBlockMin) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u) << size;
    }
    auto *b = static_cast<unsigned char *>(p);
    b[0] = 1;
    b[size - 1] = 2;
    EXPECT_EQ(b[0] + b[size - 1], 3);
    detail::deallocateBlock(p, size, 16);
  }
}

} // namespace
