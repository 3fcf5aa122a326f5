// Note [Op facts] (OpRegistry.h) and Ops/OpFacts.h: the facts passes ask of
// an op instead of listing it: elementwise, broadcasting, the axis it acts
// along, row-major reshapes; the versions forms changed, read from the
// schema table; the one axes reader; the one Reshape target-shape resolver.
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Serialize/Text.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

const OpEntry &entry(llvm::StringRef op, int64_t version) {
  const OpEntry *e = OpRegistry::get().lookup("", op, version);
  EXPECT_NE(e, nullptr) << op.str();
  static OpEntry none;
  return e ? *e : none;
}

std::unique_ptr<Model> parseFacts(llvm::StringRef text) {
  auto m = parseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const Node *nodeMaking(const Model &m, llvm::StringRef result) {
  for (const Node &n : m.graph().nodes())
    for (unsigned i = 0; i < n.numResults(); ++i)
      if (n.result(i) && n.result(i)->name() == result) return &n;
  return nullptr;
}

TEST(OpFacts, TransposeMotionsOldListIsElementwise) {
  // The 68 ops transpose-cancel listed before it asked the registry: none
  // is lost, at the newest version of each.
  const char *unary[] = {
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Cast", "Ceil",
      "Celu", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish",
      "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Not", "Reciprocal",
      "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
      "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu"};
  const char *nary[] = {"Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                        "Clip", "Div", "Equal", "Greater", "GreaterOrEqual", "Less",
                        "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow",
                        "PRelu", "Sub", "Sum", "Where", "Xor"};
  EXPECT_EQ(std::size(unary) + std::size(nary), 68u);
  for (const char *op : unary) {
    const OpEntry &e = entry(op, 24);
    EXPECT_TRUE(e.elementwise) << op;
    EXPECT_TRUE(e.shapePreserving) << op;
  }
  for (const char *op : nary) {
    const OpEntry &e = entry(op, 24);
    EXPECT_TRUE(e.elementwise) << op;
    EXPECT_TRUE(e.broadcasting) << op;
  }
}

TEST(OpFacts, BroadcastingFromTheVersionWithoutTheLegacyAttribute) {
  // Add-6 broadcast by its `broadcast` attribute, Add-7 by numpy's rules;
  // Max from 8 (its schema did not change).
  EXPECT_TRUE(entry("Add", 6).elementwise);
  EXPECT_FALSE(entry("Add", 6).broadcasting);
  EXPECT_TRUE(entry("Add", 7).broadcasting);
  EXPECT_FALSE(entry("Max", 7).broadcasting);
  EXPECT_TRUE(entry("Max", 8).broadcasting);
  // Clip's bounds became operands at 11.
  EXPECT_FALSE(entry("Clip", 6).broadcasting);
  EXPECT_TRUE(entry("Clip", 11).broadcasting);
  // Not elementwise: no claim.
  EXPECT_FALSE(entry("MatMul", 13).elementwise);
  EXPECT_FALSE(entry("Softmax", 13).elementwise);
  EXPECT_FALSE(entry("Reshape", 21).elementwise);
}

TEST(OpFacts, AxesAndReshapes) {
  EXPECT_EQ(entry("MatMul", 13).axis, AxisFact::LastAxis);
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax", "Split"})
    EXPECT_EQ(entry(op, 18).axis, AxisFact::AxisAttribute) << op;
  EXPECT_EQ(entry("LayerNormalization", 17).axis, AxisFact::AxisAttribute);
  EXPECT_EQ(entry("RMSNormalization", 23).axis, AxisFact::AxisAttribute);
  EXPECT_EQ(entry("Slice", 13).axis, AxisFact::AxesList);
  EXPECT_EQ(entry("Add", 14).axis, AxisFact::None);
  EXPECT_EQ(entry("Concat", 13).axis, AxisFact::None); // not described (yet)
  for (const char *op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    EXPECT_TRUE(entry(op, 21).reshapes) << op;
  EXPECT_FALSE(entry("Transpose", 21).reshapes);
}

TEST(OpFacts, VersionsComeFromTheSchemaTable) {
  EXPECT_EQ(firstVersionWithInput("ReduceSum", "axes"), 13);
  EXPECT_EQ(firstVersionWithInput("ReduceMean", "axes"), 18);
  EXPECT_EQ(firstVersionWithInput("Squeeze", "axes"), 13);
  EXPECT_EQ(firstVersionWithInput("Unsqueeze", "axes"), 13);
  EXPECT_EQ(firstVersionWithInput("Slice", "starts"), 10);
  EXPECT_EQ(firstVersionWithInput("Pad", "pads"), 11);
  EXPECT_EQ(firstVersionWithInput("Reshape", "shape"), 5);
  EXPECT_EQ(firstVersionWithInput("Dropout", "training_mode"), 12);
  EXPECT_EQ(firstVersionWithAttribute("Shape", "start"), 15);
  EXPECT_EQ(firstVersionWithoutAttribute("Gemm", "broadcast"), 7);
  EXPECT_EQ(firstVersionWithoutAttribute("BatchNormalization", "is_test"), 7);
  EXPECT_EQ(firstVersion("Attention"), 23);
  EXPECT_EQ(firstVersion("RotaryEmbedding"), 23);
  EXPECT_EQ(firstVersion("LayerNormalization"), 17);
  // Never: above every opset, so `opset < v` refuses.
  EXPECT_EQ(firstVersion("NoSuchOp"), kNoVersion);
  EXPECT_EQ(firstVersionWithInput("Relu", "axes"), kNoVersion);
}

TEST(OpFacts, ReadAxesFollowsTheVersionsForm) {
  // ReduceSum's axes are an operand from 13, ReduceMean's from 18: at opset
  // 17 one node of each form.
  auto m = parseFacts(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, int64[1] k) => (float[2,3,1] a, float[2,3,1] b, float[2,3,1] c, float d, float[2,3,1,1] e)
  <int64[1] axes = {-1}>
{
  a = ReduceSum <keepdims: int = 1> (x, axes)
  b = ReduceMean <axes: ints = [2]> (x)
  c = ReduceSum (x, k)
  d = ReduceMean <keepdims: int = 0> (x)
  e = Unsqueeze (a, axes)
}
)");
  ASSERT_TRUE(m);
  NodeAxes a = readAxes(*nodeMaking(*m, "a"));
  EXPECT_EQ(a.kind, NodeAxes::Known);
  EXPECT_TRUE(a.fromOperand);
  EXPECT_EQ(a.operand, 1);
  EXPECT_EQ(a.values, std::vector<int64_t>{-1});
  NodeAxes b = readAxes(*nodeMaking(*m, "b"));
  EXPECT_EQ(b.kind, NodeAxes::Known);
  EXPECT_FALSE(b.fromOperand);
  EXPECT_EQ(b.values, std::vector<int64_t>{2});
  EXPECT_EQ(readAxes(*nodeMaking(*m, "c")).kind, NodeAxes::NotConstant);
  EXPECT_EQ(readAxes(*nodeMaking(*m, "d")).kind, NodeAxes::Absent);
  NodeAxes e = readAxes(*nodeMaking(*m, "e"));
  EXPECT_EQ(e.kind, NodeAxes::Known);
  EXPECT_TRUE(e.fromOperand);
}

TEST(OpFacts, ReshapeTargetShape) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(*resolveReshape({2, 3, 4}, {0, -1}, false), (V{2, 12}));
  EXPECT_EQ(*resolveReshape({2, 3, 4}, {-1, 0, 4}, false), (V{2, 3, 4}));
  // allowzero: 0 is a dim of size 0.
  EXPECT_EQ(*resolveReshape({0, 3}, {0, 3}, true), (V{0, 3}));
  EXPECT_FALSE(resolveReshape({2, 3}, {0, 3}, true).ok());
  EXPECT_FALSE(resolveReshape({2, 3}, {-1, -1}, false).ok());
  EXPECT_FALSE(resolveReshape({2, 3}, {-2, 3}, false).ok());
  EXPECT_FALSE(resolveReshape({2, 3}, {4, -1}, false).ok());
  EXPECT_FALSE(resolveReshape({2}, {0, 0}, false).ok()); // 0 past the rank
  EXPECT_EQ(reshapeEntry(0, false), ReshapeEntry::CopyInput);
  EXPECT_EQ(reshapeEntry(0, true), ReshapeEntry::Dim);
  EXPECT_EQ(reshapeEntry(-1, true), ReshapeEntry::Inferred);
  EXPECT_EQ(reshapeEntry(-3, false), ReshapeEntry::Invalid);
}

TEST(OpFacts, NegativeAxesStep) {
  const OpSchema *s1 = lookupSchema("", "Squeeze", 1), *s11 = lookupSchema("", "Squeeze", 11),
                 *s13 = lookupSchema("", "Squeeze", 13);
  ASSERT_TRUE(s1 && s11 && s13);
  EXPECT_TRUE(crossesNegativeAxes(*s1, *s11));
  EXPECT_FALSE(crossesNegativeAxes(*s11, *s13));
}

} // namespace
