//===- ConvertOpsetTest.cpp - convertOpset through the C++ API ------------===//
//
// What the lit tests of test/Passes/convert-opset cannot see: a refusal
// leaves the model in memory exactly as it was (every node checked before
// any changes), and a conversion up and back down is schema-valid at each
// end and gives the model back.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace onnxir;

namespace {

using passtest::parse;
using passtest::schemaErrors;

TEST(ConvertOpset, RefusalLeavesModelUntouched) {
  // The Squeeze and the first ReduceMax could go to 13; the second cannot
  // (its axes are a graph input).
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[1,3] x, int64[1] ax) => (float[3] s, float[1] a, float[1] b)
<int64[1] zero = {0}>
{
  s = Squeeze(x, zero)
  a = ReduceMax<keepdims = 0>(x, zero)
  b = ReduceMax<keepdims = 0>(x, ax)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  OpsetCounts counts;
  auto r = convertOpset(*m, 13, {}, &counts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("node #2 (ReduceMax)"), std::string::npos)
      << r.status();
  EXPECT_TRUE(counts.adapted.empty());
  EXPECT_EQ(printModelText(*m), before);
}

TEST(ConvertOpset, UpAndDownAgainIsValidAndTheSame) {
  auto m = parse(R"(<ir_version: 10, opset_import: ["" : 11]>
g (float[1,3,1] x) => (float[3] y, float[1,1,3,1] z, float[1,1] r, float[3] s)
{
  y = Squeeze<axes = [0, 2]>(x)
  z = Unsqueeze<axes = [0]>(x)
  r = ReduceMean<axes = [1, 2]>(x)
  s = ReduceSum<keepdims = 0, axes = [0, 2]>(x)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  ASSERT_EQ(schemaErrors(*m), "");
  OpsetCounts counts;
  auto up = convertOpset(*m, 21, {}, &counts);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_TRUE(*up);
  int64_t adapted = 0;
  for (auto &[op, n] : counts.adapted) adapted += n;
  EXPECT_EQ(adapted, 4);
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_NE(printModelText(*m), before);
  auto down = convertOpset(*m, 11);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_EQ(printModelText(*m), before);
}

TEST(ExpandFunctions, RefusalLeavesModelUntouched) {
  // The first LayerNormalization could expand; the second needs the rank of
  // an input whose shape is unknown, so nothing changes, the temporary
  // function of the ReduceL2 body included.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3] x, float[3] s, int64[1] ax) => (float[2,3] k, float[2,3] l, float[2,1] n)
{
  k = LayerNormalization(x, s)
  n = ReduceL2(x, ax)
  r = Relu(x)
  l = LayerNormalization<axis = 1>(r, s)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  OpsetCounts counts;
  auto r = expandFunctions(*m, {"LayerNormalization", "ReduceL2"}, &counts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("node #3 (LayerNormalization)"),
            std::string::npos)
      << r.status();
  EXPECT_TRUE(counts.expanded.empty());
  EXPECT_TRUE(m->functions().empty());
  EXPECT_EQ(printModelText(*m), before);
}

TEST(ExpandFunctions, ExpandedModelIsSchemaValidAndCounted) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,3] x, float[3] s, int64[1] ax) => (float[2,3] k, float[2,1] n, float[2,1] o)
{
  k = LayerNormalization(x, s)
  n = ReduceL2(x, ax)
  o = ReduceL2(x, ax)
}
)");
  ASSERT_TRUE(m);
  OpsetCounts counts;
  std::vector<std::string> remarks;
  auto r = expandFunctions(*m, {}, &counts, &remarks);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(counts.expanded["LayerNormalization"], 1);
  EXPECT_EQ(counts.expanded["ReduceL2"], 2);
  EXPECT_TRUE(m->functions().empty()); // the parsed body is gone again
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  for (const Node &n : m->graph().nodes())
    EXPECT_TRUE(n.opType() != "LayerNormalization" && n.opType() != "ReduceL2");
}

TEST(ConvertOpset, DownByExpansionIsSchemaValidAtTarget) {
  auto m = parse(R"(<ir_version: 10, opset_import: ["" : 23]>
g (float[2,3,4] x, float[4] s, float[4] b) => (float[2,3,4] y, float[2,3,4] z, float[2,3,4] w, float[2,3,4] v)
{
  y = LayerNormalization(x, s, b)
  z = Gelu<approximate = "tanh">(x)
  w = RMSNormalization<axis = 1>(x, s)
  v = Mish(x)
}
)");
  ASSERT_TRUE(m);
  for (int64_t target : {13, 17, 18, 22}) {
    auto c = parse(printModelText(*m).c_str());
    ASSERT_TRUE(c);
    OpsetCounts counts;
    auto r = convertOpset(*c, target, {}, &counts);
    ASSERT_TRUE(r.ok()) << target << ": " << r.status();
    EXPECT_EQ(schemaErrors(*c), "") << target << ":\n" << printModelText(*c);
    int64_t expanded = 0;
    for (auto &[op, n] : counts.expanded) expanded += n;
    // Below 17 all four expand; at 17 and 18 Gelu, RMSNormalization (and
    // Mish below 18); at 22 RMSNormalization only.
    EXPECT_EQ(expanded, target < 17 ? 4 : target == 17 ? 3 : target < 20 ? 2 : 1) << target;
  }
}

TEST(ConvertOpset, AdaptedCountOverload) {
  auto m = parse(R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[1,3] x) => (float[3] y, float[1,1,3] z)
{
  y = Squeeze<axes = [0]>(x)
  z = Unsqueeze<axes = [0]>(x)
}
)");
  ASSERT_TRUE(m);
  int64_t adapted = 0;
  auto r = convertOpset(*m, 13, &adapted);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(adapted, 2);
}

// Note [Version adapters]: an adapter may replace the op (Upsample-9 ->
// Resize-10, Scatter-9 -> ScatterElements-11); the walk goes on along the
// other op's versions and comes back the same way.
TEST(ConvertOpset, ReplacedOpsGoUpAndComeBack) {
  auto m = parse(R"(<ir_version: 4, opset_import: ["" : 9]>
g (float[1,1,2,2] x, float[2,3] d, int64[1,3] i, float[1,3] u) => (float[1,1,4,6] y, float[2,3] s)
<float[4] sc = {1.0, 1.0, 2.0, 3.0}>
{
  y = Upsample<mode = "linear">(x, sc)
  s = Scatter<axis = 1>(d, i, u)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  auto up = convertOpset(*m, 21);
  ASSERT_TRUE(up.ok()) << up.status();
  std::string text = printModelText(*m);
  EXPECT_EQ(schemaErrors(*m), "") << text;
  EXPECT_NE(text.find("y = Resize"), std::string::npos) << text;
  EXPECT_NE(text.find("s = ScatterElements"), std::string::npos) << text;
  auto down = convertOpset(*m, 9);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_EQ(printModelText(*m), before);
}

// The rename happens only in the real run: a refusal of a later node leaves
// the Upsample an Upsample.
TEST(ConvertOpset, RefusalAfterAReplacementLeavesModelUntouched) {
  // Pad-11's constant value must be of the data's type, unknown here (no
  // shape inference).
  auto m = parse(R"(<ir_version: 4, opset_import: ["" : 9]>
g (float[1,1,2,2] x, float[2,3] a) => (float[1,1,4,6] y, float[?,?] z)
<float[4] sc = {1.0, 1.0, 2.0, 3.0}>
{
  y = Upsample<mode = "nearest">(x, sc)
  r = Relu(a)
  z = Pad<pads = [1, 1, 1, 1], value = 2.0>(r)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  auto r = convertOpset(*m, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("node #2 (Pad)"), std::string::npos)
      << r.status();
  EXPECT_EQ(printModelText(*m), before);
}


} // namespace
