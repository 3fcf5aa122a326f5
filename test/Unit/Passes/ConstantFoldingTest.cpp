//===- ConstantFoldingTest.cpp - foldConstants on small models ------------===//
#include "PassTestUtil.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

using passtest::parse;

unsigned countOps(Graph &g, llvm::StringRef op) {
  unsigned n = 0;
  g.walk([&](Node *x) { n += x->opType() == op; });
  return n;
}

TEST(FoldPass, ChainFoldsAndOutputKeepsItsName) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] c2) <float[2] w = {1, 2}>
{
  c1 = Neg(w)
  c2 = Mul(c1, w)
  y = Add(x, c2)
})");
  ASSERT_TRUE(m);
  auto r = foldConstants(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  Graph &g = m->graph();
  EXPECT_EQ(g.numNodes(), 1u);
  Value *c2 = g.output(1);
  ASSERT_TRUE(c2->isConstantInitializer());
  EXPECT_EQ(c2->name(), "c2");
  EXPECT_EQ(*c2->initializer()->values<float>(), (std::vector<float>{-1, -4}));
  // w died with its users.
  EXPECT_EQ(g.lookupLocal("w"), nullptr);
  EXPECT_TRUE(verify(*m).ok()) << verify(*m);
}

TEST(FoldPass, GraphInputWithDefaultIsNotConstant) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, float[2] d) => (float[2] y) <float[2] d = {1, 2}>
{
  y = Neg(d)
})");
  ASSERT_TRUE(m);
  auto r = foldConstants(*m);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_EQ(m->graph().numNodes(), 1u);
}

TEST(FoldPass, GrowthBudget) {
  const char *text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[64] x) => (float[64] y) <int64[1] s = {64}>
{
  z = ConstantOfShape(s)
  y = Add(x, z)
})";
  auto m = parse(text);
  ASSERT_TRUE(m);
  FoldStatistics st;
  ASSERT_TRUE(foldConstants(*m, {}, &st).ok());
  EXPECT_EQ(countOps(m->graph(), "ConstantOfShape"), 1u);
  EXPECT_GT(st.rejectedByBudget, 0);
  auto m2 = parse(text);
  FoldOptions o;
  o.growthLimit = 1024;
  ASSERT_TRUE(foldConstants(*m2, o).ok());
  EXPECT_EQ(countOps(m2->graph(), "ConstantOfShape"), 0u);
}

TEST(FoldPass, BigTensorThatShrinksFolds) {
  // ConstantOfShape -> ReduceSum: the big intermediate never lands in the IR.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1] y) <int64[1] s = {1000}>
{
  z = ConstantOfShape(s)
  r = ReduceSum(z)
  y = Add(x, r)
})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(foldConstants(*m).ok());
  EXPECT_EQ(m->graph().numNodes(), 1u);
}

TEST(FoldPass, ShapeFromStaticType) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (float[6] y)
{
  s = Shape(x)
  n = ReduceProd(s)
  n1 = Unsqueeze(n, zero)
  y = Reshape(x, n1)
  zero = Constant<value_ints = [0]>()
})");
  ASSERT_TRUE(m);
  FoldOptions o;
  o.growthLimit = 64;
  ASSERT_TRUE(foldConstants(*m, o).ok());
  EXPECT_EQ(countOps(m->graph(), "Shape"), 0u);
}

TEST(FoldPass, NestedGraphAndConstantIf) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <bool c = {1}, float[2] w = {1, 2}>
{
  y = If(c) <then_branch = t () => (float[2] a) { n = Neg(w)
                                                  a = Add(x, n) },
             else_branch = e () => (float[2] b) { b = Abs(x) }>
})");
  ASSERT_TRUE(m);
  FoldStatistics st;
  auto r = foldConstants(*m, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  Graph &g = m->graph();
  EXPECT_EQ(st.ifsInlined, 1);
  EXPECT_EQ(countOps(g, "If"), 0u);
  EXPECT_EQ(countOps(g, "Neg"), 0u);
  ASSERT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(g.output(0)->name(), "y");
  EXPECT_TRUE(verify(*m).ok()) << verify(*m);
}

TEST(FoldPass, NondeterministicNeverFolds) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[2] y)
{
  y = RandomUniform<shape = [2]>()
})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(foldConstants(*m).ok());
  EXPECT_EQ(m->graph().numNodes(), 1u);
}

} // namespace
