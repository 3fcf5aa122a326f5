// The README's worked example ("Adding an operator"): a made-up operator in
// a test domain, declared with its schema, a type and shape rule and a
// kernel, and then seen by the schema verifier, shape inference and
// constant folding without any change to them.
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/Text.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

// test.example.Scale-1: Y = X * factor (float, default 2), elementwise.
absl::StatusOr<std::vector<Tensor>> scaleKernel(const KernelCall &c) {
  const Tensor *x = c.input(0);
  if (!x || x->dataType() != DataType::Float)
    return absl::UnimplementedError("Scale: float tensors only");
  auto v = x->values<float>();
  if (!v.ok()) return v.status();
  float factor = c.getFloat("factor", 2.0f);
  for (float &e : *v) e *= factor;
  std::vector<Tensor> out;
  out.push_back(makeFloatTensor(x->dims(), *v));
  return out;
}

void registerScale() {
  static const bool done = [] {
    registerSchema(OpSchemaBuilder("test.example", "Scale", 1)
                       .input("X", "T")
                       .output("Y", "T")
                       .attr("factor", AttrKind::Float)
                       .defaultFloat(2.0)
                       .typeConstraint("T", {"tensor(float)", "tensor(double)"}));
    OpRegistrar r = OpRegistry::get().registrar("test.example");
    r["Scale"]
        .infer([](infer::InferCtx &c) { c.setTensor(0, c.inElem(0), c.inShape(0)); })
        .kernel(scaleKernel);
    return true;
  }();
  (void)done;
}

std::unique_ptr<Model> parse(llvm::StringRef text) {
  auto m = parseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

const char *kModel = R"(
<ir_version: 10, opset_import: ["" : 21, "test.example" : 1]>
g (float[N,3] x) => (float[N,3] y, float[2] z)
  <float[2] k = {1, 2}>
{
  t = test.example.Scale <factor: float = 3> (x)
  y = Relu (t)
  z = test.example.Scale (k)
}
)";

} // namespace

TEST(CustomOpTest, RegistryHoldsSchemaRuleAndKernel) {
  registerScale();
  const OpEntry *e = OpRegistry::get().lookup("test.example", "Scale", 1);
  ASSERT_NE(e, nullptr);
  ASSERT_NE(e->schema, nullptr);
  EXPECT_EQ(e->schema->str(), "test.example.Scale-v1");
  EXPECT_TRUE(e->infer);
  EXPECT_EQ(e->kernel, &scaleKernel);
  EXPECT_EQ(lookupSchema("test.example", "Scale", 5), e->schema);
  EXPECT_EQ(OpRegistry::get().lookup("test.example", "Scale", 0)->schema, nullptr);
}

TEST(CustomOpTest, PassesUseIt) {
  registerScale();
  auto m = parse(kModel);
  ASSERT_TRUE(m);
  EXPECT_TRUE(verifySchemaAll(*m).empty());

  // Inference types t (the rule) before Relu can.
  ShapeInferenceStatistics st;
  ASSERT_TRUE(inferShapes(*m, {}, &st).ok());
  EXPECT_EQ(st.nodesNotInferred, 0);
  const Node &scale = *m->graph().nodes().begin();
  ASSERT_TRUE(scale.result(0)->type());
  EXPECT_EQ(scale.result(0)->type()->str(), "float[N,3]");

  // Folding evaluates the kernel on the constant operand, with the schema's
  // default factor 2.
  FoldStatistics fs;
  ASSERT_TRUE(foldConstants(*m, {}, &fs).ok());
  EXPECT_EQ(fs.nodesFolded, 1);
  Value *z = m->graph().output(1);
  ASSERT_NE(z->initializer(), nullptr);
  EXPECT_EQ(*z->initializer()->values<float>(), (std::vector<float>{2, 4}));
}

TEST(CustomOpTest, VerifierHoldsNodesToTheSchema) {
  registerScale();
  // A wrong attribute kind and a second operand: schema errors naming the node.
  auto m = parse(R"(
<ir_version: 10, opset_import: ["" : 21, "test.example" : 1]>
g (float[2] x) => (float[2] y)
{
  y = test.example.Scale <factor: int = 3> (x, x)
}
)");
  ASSERT_TRUE(m);
  std::vector<Diagnostic> d = verifySchemaAll(*m);
  ASSERT_GE(d.size(), 2u);
  std::string all;
  for (const Diagnostic &x : d) all += x.message + "\n";
  EXPECT_NE(all.find("factor"), std::string::npos) << all;
  EXPECT_NE(all.find("test.example.Scale"), std::string::npos) << all;
  // An op the registered domain does not have is unknown there.
  auto u = parse(R"(
<ir_version: 10, opset_import: ["" : 21, "test.example" : 1]>
g (float[2] x) => (float[2] y)
{
  y = test.example.Nope (x)
}
)");
  ASSERT_TRUE(u);
  EXPECT_FALSE(verifySchemaAll(*u).empty());
}
