//===- ConvertOpsetLegacyTest.cpp - The version steps up to opset 9 -------===//
//
// What lit cannot see of the adapters of the steps up to opset 9: a model of
// legacy forms converted up and down again is schema-valid at each end and
// comes back as it was; an adapter's check changes nothing, even where its
// real run inserts nodes (legacy broadcast with an axis).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <string>

using namespace onnxir;

namespace {

using passtest::parse;
using passtest::schemaErrors;

TEST(ConvertOpsetLegacy, UpToNineAndDownAgainIsValidAndTheSame) {
  // Legacy forms each adapter gives back exactly (attributes an adapter adds
  // come last).
  auto m = parse(R"(<ir_version: 4, opset_import: ["" : 6]>
g (float[2,3] x, float[3] s, float[3,4] w, float[4] c, float[1,3,4,4] i, float[3] sc,
   float[3] b, float[3] mu, float[3] var)
  => (float[2,3] a, float[2,4] gm, float[1,3,4,4] bn, float[1,3,4,4] d,
      float[1,3,2,2] lp, float[1,3,3,3] ap, float[1,3,3,3] mp, float[1,3,8,8] up,
      float[4,3] k, int64[2,3] ct)
{
  a = Mul<broadcast = 1>(x, s)
  gm = Gemm<alpha = 0.5, broadcast = 1>(x, w, c)
  bn = BatchNormalization<epsilon = 0.001, is_test = 1>(i, sc, b, mu, var)
  d = Dropout<ratio = 0.25, is_test = 1>(bn)
  lp = LpPool<kernel_shape = [2, 2], strides = [2, 2], p = 3>(d)
  ap = AveragePool<kernel_shape = [2, 2]>(d)
  mp = MaxPool<kernel_shape = [2, 2]>(d)
  up = Upsample<mode = "bilinear", height_scale = 2.0, width_scale = 2.0>(d)
  k = Concat<axis = 0>(x, x)
  ct = Cast<to = 7>(x)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  ASSERT_EQ(schemaErrors(*m), "");
  int64_t adapted = 0;
  auto up = convertOpset(*m, 9, &adapted);
  ASSERT_TRUE(up.ok()) << up.status();
  // Every node with a step between 6 and 9: all but LpPool, Concat, Cast.
  EXPECT_EQ(adapted, 7);
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_EQ(printModelText(*m).find("broadcast"), std::string::npos) << printModelText(*m);
  EXPECT_EQ(printModelText(*m).find("is_test"), std::string::npos) << printModelText(*m);
  auto down = convertOpset(*m, 6);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_EQ(printModelText(*m), before);
}

TEST(ConvertOpsetLegacy, AdapterCheckChangesNothing) {
  // Mul-7's upgrade inserts a Reshape of c in its real run; its check, and
  // BatchNormalization-7's (which drops an unread result for real), must not.
  auto m = parse(R"(<ir_version: 4, opset_import: ["" : 6]>
g (float[2,3,4] x, float[3] c, float[1,3,2,2] i, float[3] s) => (float[2,3,4] y, float[1,3,2,2] bn)
{
  y = Mul<broadcast = 1, axis = 1>(x, c)
  bn = BatchNormalization<is_test = 1>(i, s, s, s, s)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  Node *mul = &m->graph().nodes().front();
  const OpEntry *e = OpRegistry::get().lookup("", "Mul", 7);
  ASSERT_TRUE(e && e->upgrade);
  AdapterContext c;
  c.checkOnly = true;
  c.from = 6;
  c.to = 7;
  ASSERT_TRUE(e->upgrade(*mul, c).ok());
  EXPECT_EQ(printModelText(*m), before);
  c.checkOnly = false;
  ASSERT_TRUE(e->upgrade(*mul, c).ok());
  std::string after = printModelText(*m);
  EXPECT_NE(after.find("Reshape (c,"), std::string::npos) << after;
  EXPECT_EQ(after.find("axis"), std::string::npos) << after;
}

TEST(ConvertOpsetLegacy, RefusedStepNamesIt) {
  // Down to 6, numpy broadcasting of a [3,1] value has no legacy form; the
  // pass refuses and the model stays as it was.
  auto m = parse(R"(<ir_version: 4, opset_import: ["" : 7]>
g (float[2,3,4] x, float[3,1] c) => (float[2,3,4] y, float[2,3,4] z)
{
  z = Relu(x)
  y = Add(x, c)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  auto r = convertOpset(*m, 6);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("Add-v7 -> Add-v6: operand #1 ('c')"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(printModelText(*m), before);
}

} // namespace
