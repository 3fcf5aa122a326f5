//===- OutOfLineTest.cpp - Fields held out of line only when not empty ---===//
//
// Note [Out-of-line fields] (include/onnxir/IR/OutOfLine.h): reads never
// allocate, empty assignments free, copies are deep, and the IR objects
// that use it stay small.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

TEST(OutOfLine, ReadsOfAnEmptyFieldAllocateNothing) {
  OutOfLineString s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.get(), "");
  llvm::StringRef r = s;
  EXPECT_TRUE(r.empty());
  const std::string &cs = s;
  EXPECT_TRUE(cs.empty());
  EXPECT_TRUE(s == std::string());
  for (char c : s) ADD_FAILURE() << "unexpected element " << c;
  EXPECT_FALSE(s.allocated());

  OutOfLine<Metadata> md;
  EXPECT_EQ(md.begin(), md.end());
  EXPECT_FALSE(md.allocated());
}

TEST(OutOfLine, EmptyAssignmentFreesAndCopiesAreDeep) {
  OutOfLineString s;
  s = "doc";
  EXPECT_TRUE(s.allocated());
  EXPECT_EQ(s.get(), "doc");
  s += " more";
  EXPECT_EQ(s.get(), "doc more");
  OutOfLineString t = s;
  t.mut()[0] = 'D';
  EXPECT_EQ(s.get(), "doc more");
  EXPECT_EQ(t.get(), "Doc more");
  s = "";
  EXPECT_FALSE(s.allocated());
  t = s;
  EXPECT_FALSE(t.allocated());
  t = llvm::StringRef("ref");
  EXPECT_EQ(t.get(), "ref");
  OutOfLineString u = std::move(t);
  EXPECT_EQ(u.get(), "ref");

  OutOfLine<std::vector<int64_t>> v;
  v.assign(static_cast<int64_t *>(nullptr), static_cast<int64_t *>(nullptr));
  EXPECT_FALSE(v.allocated());
  v.push_back(3);
  v.emplace_back(4);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], 4);
  v = std::vector<int64_t>{};
  EXPECT_FALSE(v.allocated());
  v = {1, 2};
  EXPECT_EQ(v.back(), 2);
  v.clear();
  EXPECT_FALSE(v.allocated());
}

TEST(OutOfLine, IRObjectsWithoutRareFieldsHoldNoStorage) {
  test::BasicModel b;
  Node *n = b.g.createNode("Relu", {b.x}, 1);
  EXPECT_FALSE(n->docString.allocated());
  EXPECT_FALSE(n->metadata.allocated());
  EXPECT_FALSE(n->deviceConfigurations.allocated());
  EXPECT_FALSE(n->extras.allocated());
  EXPECT_FALSE(n->result(0)->docString.allocated());
  n->docString = "kept";
  EXPECT_EQ(n->docString.get(), "kept");
  Tensor t;
  EXPECT_TRUE(t.external().location.empty());
  EXPECT_FALSE(t.floatData.allocated());
  t.mutableExternal().location = "w.bin";
  Tensor copy = t;
  EXPECT_EQ(copy.external().location, "w.bin");
  // The sizes this note is about; a field added inline shows up here.
  EXPECT_LE(sizeof(Value), 128u);
  EXPECT_LE(sizeof(Node), 208u);
  EXPECT_LE(sizeof(Tensor), 240u);
  EXPECT_LE(sizeof(Attribute), 224u);
}

} // namespace
