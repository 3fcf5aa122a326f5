//===- ConvertOpsetTest.cpp - convertOpset through the C++ API ------------===//
//
// What the lit tests of test/Passes/convert-opset cannot see: a refusal
// leaves the model in memory exactly as it was (every node checked before
// any changes), and a conversion up and back down is schema-valid at each
// end and gives the model back.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <string>

using namespace onnxir;

namespace {

std::unique_ptr<Model> parse(const char *text) {
  auto m = parseModelText(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string schemaErrors(const Model &m) {
  std::string out;
  for (const Diagnostic &d : verifySchemaAll(m)) out += d.message + "\n";
  return out;
}

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
  int64_t adapted = 0;
  auto r = convertOpset(*m, 13, &adapted);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("node #2 (ReduceMax)"), std::string::npos)
      << r.status();
  EXPECT_EQ(adapted, 0);
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
  int64_t adapted = 0;
  auto up = convertOpset(*m, 21, &adapted);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_TRUE(*up);
  EXPECT_EQ(adapted, 4);
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_NE(printModelText(*m), before);
  auto down = convertOpset(*m, 11);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(schemaErrors(*m), "") << printModelText(*m);
  EXPECT_EQ(printModelText(*m), before);
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
