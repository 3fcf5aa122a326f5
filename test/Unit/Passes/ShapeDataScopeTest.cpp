//===- ShapeDataScopeTest.cpp - Which values inferShapeData reports -------===//
//
// inferShapeData (what constant folding folds Shape arithmetic with) reports
// the values that nodes of the model's graphs compute, and only those:
// initializers and graph inputs are constants or inputs already, and the
// values of a function body depend on the call site (one body serves every
// call), so a value computed there is not one value. (The scope test written
// with && instead of || reported initializers and function-body values:
// docs/Mutation.md, #18.)
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

using passtest::valueNamed;

TEST(ShapeDataScope, OnlyValuesComputedInTheModelsGraphs) {
  auto mOr = parseModelText(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,3] x) => (int64[] k, int64[] f) <int64[1] one = {1}> {
  s = Shape(x)
  k = Gather<axis = 0>(s, one)
  f = local.Dims(x)
}
<domain: "local", opset_import: ["" : 17]>
Dims (t) => (u) {
  u = Shape(t)
})");
  ASSERT_TRUE(mOr.ok()) << mOr.status();
  Model &m = **mOr;
  auto d = inferShapeData(m);
  ASSERT_TRUE(d.ok()) << d.status();
  // Computed in the main graph: reported.
  for (const char *name : {"s", "k"}) {
    Value *v = valueNamed(m, name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(d->count(v), 1u) << name;
  }
  EXPECT_EQ(d->find(valueNamed(m, "k"))->second.values, std::vector<int64_t>{3});
  EXPECT_EQ(d->find(valueNamed(m, "s"))->second.values, (std::vector<int64_t>{2, 3}));
  // An initializer: not reported (it is a constant already).
  Value *one = valueNamed(m, "one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(d->count(one), 0u);
  // The function body's Shape(t): not reported, whatever a call makes it.
  ASSERT_EQ(m.functions().size(), 1u);
  Value *u = m.functions()[0]->body().nodes().front().result(0);
  EXPECT_EQ(d->count(u), 0u);
  for (auto &[v, k] : *d) {
    EXPECT_NE(v->definingNode(), nullptr) << v->name().str();
    EXPECT_EQ(v->getGraph()->parentFunction(), nullptr) << v->name().str();
  }
}

} // namespace
