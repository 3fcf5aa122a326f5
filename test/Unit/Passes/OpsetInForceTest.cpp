//===- OpsetInForceTest.cpp - One rule for the opset version in force -----===//
//
// Note [Opset in force]: a duplicated import resolves to its last entry, in
// the model and in a function body, and every component (schema check,
// shape inference, constant folding, the rewriter) reads the same answer.
// Squeeze tells the versions apart: Squeeze-11 takes its axes as an
// attribute, Squeeze-13 as an input; without axes it squeezes every 1.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Passes/PatternRewrite.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <string>

using namespace onnxir;

namespace {

using passtest::parse;
using passtest::schemaErrorCount;

/// The model with the given opset_import list; y and z squeeze a [1,3,1]
/// tensor with axes [0] given as an input (Squeeze-13's form); z's operand
/// is a Constant, so folding evaluates it.
std::unique_ptr<Model> squeezeModel(const std::string &imports) {
  std::string text = "<ir_version: 8, opset_import: [" + imports + R"(]>
g (float[1,3,1] x) => (y, z)
{
  ax = Constant <value = int64[1] {0}> ()
  y = Squeeze (x, ax)
  c = Constant <value = float[1,3,1] {1, 2, 3}> ()
  z = Squeeze (c, ax)
}
)";
  return parse(text);
}

Node *squeezeNamed(Model &m, llvm::StringRef result) {
  for (Node &n : m.graph().nodes())
    if (n.is("Squeeze") && n.result(0)->name() == result) return &n;
  return nullptr;
}

/// The versions the rewriter reports while visiting Squeeze nodes.
std::vector<int64_t> rewriterVersions(Model &m) {
  std::vector<int64_t> seen;
  PatternSet ps;
  ps.add("probe", "Squeeze", [&](Node &, PatternRewriter &rw) {
    seen.push_back(rw.opsetVersion());
    return false;
  });
  auto r = applyPatternsGreedily(m, ps, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return seen;
}

std::string typeOf(const Value *v) { return v && v->type() ? v->type()->str() : "?"; }

TEST(OpsetInForce, DuplicatedImportLastEntryWinsEverywhere) {
  auto m = squeezeModel(R"("" : 11, "ai.onnx" : 13)");
  ASSERT_TRUE(m);
  Node *y = squeezeNamed(*m, "y");
  ASSERT_TRUE(y);
  EXPECT_EQ(opsetVersionIn(m->opsetImports, ""), 13);
  EXPECT_EQ(m->opsetVersion(""), 13);
  EXPECT_EQ(opsetInForce(*y), 13);
  EXPECT_EQ(importedOpsetVersion(*y), 13);
  // Schema check: Squeeze-13 takes (data, axes).
  EXPECT_EQ(schemaErrorCount(*m), 0u);
  // The rewriter.
  EXPECT_EQ(rewriterVersions(*m), std::vector<int64_t>({13, 13}));
  // Inference: axes [0] from the input, so [3,1] (Squeeze-11 would squeeze
  // both ones: [3]).
  auto inf = inferShapes(*m);
  ASSERT_TRUE(inf.ok()) << inf.status();
  EXPECT_EQ(typeOf(m->graph().output(0)), "float[3,1]");
  // Folding: the kernel squeezes as Squeeze-13 does.
  auto f = foldConstants(*m);
  ASSERT_TRUE(f.ok()) << f.status();
  // (A folded graph output becomes an initializer.)
  Value *z = m->graph().output(1);
  ASSERT_TRUE(z->initializer()) << printModelText(*m);
  EXPECT_EQ(z->initializer()->dims(), std::vector<int64_t>({3, 1}));
}

TEST(OpsetInForce, ReversedDuplicateGivesTheOtherVersionEverywhere) {
  // The same list reversed: 11 is in force, and every component agrees.
  auto m = squeezeModel(R"("ai.onnx" : 13, "" : 11)");
  ASSERT_TRUE(m);
  Node *y = squeezeNamed(*m, "y");
  ASSERT_TRUE(y);
  EXPECT_EQ(opsetInForce(*y), 11);
  EXPECT_EQ(m->opsetVersion("ai.onnx"), 11);
  // Squeeze-11 has one input: both Squeezes break the schema.
  EXPECT_EQ(schemaErrorCount(*m), 2u);
  EXPECT_EQ(rewriterVersions(*m), std::vector<int64_t>({11, 11}));
  auto inf = inferShapes(*m);
  ASSERT_TRUE(inf.ok()) << inf.status();
  EXPECT_NE(typeOf(m->graph().output(0)), "float[3,1]");
  // Folding: Squeeze-11 without an axes attribute squeezes every 1.
  auto f = foldConstants(*m);
  ASSERT_TRUE(f.ok()) << f.status();
  Value *z = m->graph().output(1);
  ASSERT_TRUE(z->initializer()) << printModelText(*m);
  EXPECT_EQ(z->initializer()->dims(), std::vector<int64_t>({3}));
}

TEST(OpsetInForce, FunctionBodyUsesItsOwnLastImportThenTheModels) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 13, "local" : 1, "local" : 2]>
g (float[1,3,1] x) => (y, w)
{
  y, w = local.F (x)
}
<domain: "local", opset_import: ["" : 13, "" : 11]>
F (a) => (b, t)
{
  b = Squeeze <axes = [0]> (a)
  c = Constant <value = bool {1}> ()
  t = If (c) <then_branch = t () => (o) { o = Squeeze <axes = [2]> (a) },
              else_branch = e () => (p) { p = Identity (a) }>
}
)");
  ASSERT_TRUE(m);
  Model &model = *m;
  ASSERT_EQ(model.functions().size(), 1u);
  Graph &body = model.functions()[0]->body();
  EXPECT_EQ(opsetInForce(body, ""), 11);
  // Not listed by the function: the model's import, its last entry.
  EXPECT_EQ(opsetInForce(body, "local"), 2);
  EXPECT_EQ(opsetInForce(model.graph(), "local"), 2);
  Node &sq = body.nodes().front();
  EXPECT_EQ(opsetInForce(sq), 11);
  EXPECT_EQ(opsetInForce(sq, model), 11);
  // A nested subgraph of the body answers as the body does.
  Node &iff = body.nodes().back();
  Graph *then = iff.getAttr("then_branch")->graph();
  EXPECT_EQ(opsetInForce(then->nodes().front()), 11);
  // Squeeze-11 with an axes attribute is valid there; the rewriter agrees.
  EXPECT_EQ(schemaErrorCount(model), 0u);
  EXPECT_EQ(rewriterVersions(model), std::vector<int64_t>({11, 11}));
}

} // namespace
