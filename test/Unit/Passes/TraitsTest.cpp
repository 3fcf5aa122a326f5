//===- TraitsTest.cpp - Passes ask the op traits, not op names ------------===//
//
// Note [Op traits] (OpSchema.h): CSE merges by isDeterministic and
// hasSideEffects, folding asks isDeterministic, so Dropout gets one answer
// (random only in training mode) from both.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

using passtest::parse;

int64_t cse(Model &m) {
  int64_t merged = 0;
  auto r = eliminateCommonSubexpressions(m, &merged);
  EXPECT_TRUE(r.ok()) << r.status();
  return merged;
}

TEST(Traits, CSEMergesInferenceDropoutsOnly) {
  // Inference-mode Dropouts are the identity: two equal ones merge. With a
  // training_mode that may be true they draw masks: never merged.
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, bool t) => (float[2] a, float[2] b)
{
  d1 = Dropout (x)
  d2 = Dropout (x)
  r1 = Dropout (x, , t)
  r2 = Dropout (x, , t)
  a = Add (d1, r1)
  b = Add (d2, r2)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(cse(*m), 1);
  unsigned dropouts = 0;
  for (Node &n : m->graph().nodes()) dropouts += n.is("Dropout");
  EXPECT_EQ(dropouts, 3u);
}

TEST(Traits, CustomDomainsAndLocalFunctionsAreNotMerged) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "my" : 1, "local" : 1]>
g (float[2] x) => (float[2] a, float[2] b, float[2] c, float[2] d)
{
  p1 = my.Print (x)
  p2 = my.Print (x)
  f1 = local.F (x)
  f2 = local.F (x)
  a = Neg (p1)
  b = Neg (p2)
  c = Neg (f1)
  d = Neg (f2)
}
<domain: "local", opset_import: ["" : 17]>
F (u) => (v)
{
  v = Relu (u)
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(cse(*m), 0);
}

TEST(Traits, FoldingSkipsTrainingDropout) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g () => (float[2] a, float[2] b)
{
  x = Constant <value = float[2] {1, 2}> ()
  y = Constant <value = float[2] {3, 4}> ()
  t = Constant <value = bool {1}> ()
  a = Dropout (x)
  b = Dropout (y, , t)
}
)");
  ASSERT_TRUE(m);
  auto f = foldConstants(*m);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(m->graph().output(0)->initializer()) << printModelText(*m);
  EXPECT_FALSE(m->graph().output(1)->initializer()) << printModelText(*m);
}

} // namespace
