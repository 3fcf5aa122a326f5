//===- ShapeInferenceTest.cpp - The inference engine through its C++ API --===//
#include "PassTestUtil.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/Support/LLVMCompat.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

using passtest::valueNamed;

using passtest::parse;

std::string typeOf(Model &m, llvm::StringRef name) {
  Value *v = valueNamed(m, name);
  return v && v->type() ? v->type()->str() : "<none>";
}

TEST(InferShapes, SymbolsAndExpressions) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,C] x, float[N,D] y) => (float[] z) {
  a = Relu(x)
  c = Concat<axis = 1>(a, y)
  z = Neg(c)
})");
  ASSERT_TRUE(m);
  ShapeInferenceStatistics st;
  auto r = inferShapes(*m, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(*r);
  EXPECT_EQ(typeOf(*m, "a"), "float[N,C]");
  EXPECT_EQ(typeOf(*m, "c"), "float[N,C+D]");
  // Equal dims share one uniqued expression.
  Value *a = valueNamed(*m, "a");
  Value *x = m->graph().input(0);
  EXPECT_EQ(a->type(), x->type());
  const Dim &d = valueNamed(*m, "c")->type()->dims()[1];
  ASSERT_NE(d.expr, nullptr);
  auto env = [](llvm::StringRef s) -> std::optional<int64_t> {
    return s == "C" ? 3 : s == "D" ? 4 : std::optional<int64_t>();
  };
  EXPECT_EQ(d.expr->evaluate(env), 7);
  EXPECT_EQ(st.contradictions, 0);
  EXPECT_GE(st.valueInfosAdded, 2);
  // A second run changes nothing.
  auto r2 = inferShapes(*m);
  ASSERT_TRUE(r2.ok());
  EXPECT_FALSE(*r2);
}

TEST(InferShapes, NeverGuessesAndKeepsDeclared) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x, int64[2] shp) => (float[] y, float[N,5] w) {
  y = Reshape(x, shp)
  w = Relu(x)
})");
  ASSERT_TRUE(m);
  std::vector<std::string> warnings;
  ShapeInferenceStatistics st;
  auto r = inferShapes(*m, {}, &st, &warnings);
  ASSERT_TRUE(r.ok());
  // The target shape is a graph input: rank 2 is known, the dims are not.
  EXPECT_EQ(typeOf(*m, "y"), "float[?,?]");
  EXPECT_EQ(st.contradictions, 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("value \"w\""), std::string::npos) << warnings[0];
  EXPECT_EQ(m->graph().outputInfo(1).type->str(), "float[N,5]");
  ShapeInferenceOptions strict;
  strict.strict = true;
  auto m2 = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4] x) => (float[N,5] w) { w = Relu(x) })");
  EXPECT_FALSE(inferShapes(*m2, strict).ok());
}

TEST(InferShapes, ShapeDataWithoutChangingTheModel) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,3] x) => (int64[1] k) <int64[1] one = {1}> {
  s = Shape(x)
  k = Gather<axis = 0>(s, one)
})");
  ASSERT_TRUE(m);
  auto d = inferShapeData(*m);
  ASSERT_TRUE(d.ok());
  Value *k = valueNamed(*m, "k");
  auto it = d->find(k);
  ASSERT_NE(it, d->end());
  EXPECT_EQ(it->second.values, std::vector<int64_t>{3});
  EXPECT_FALSE(it->second.scalar);
  EXPECT_EQ(d->count(valueNamed(*m, "s")), 0u); // [N,3] is not all known
  EXPECT_EQ(valueNamed(*m, "s")->type(), nullptr); // nothing was written
}

TEST(InferShapes, InputShapesAndBindings) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[?,?] x) => (float[] y) { y = Relu(x) })");
  ShapeInferenceOptions o;
  o.inputShapes = {{"x", "B,2*S"}};
  o.bindDims = {{"B", 8}};
  ASSERT_TRUE(inferShapes(*m, o).ok());
  EXPECT_EQ(typeOf(*m, "y"), "float[8,2*S]");
  auto p = parseInputShapes("x:1,3;y:N");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->size(), 2u);
  EXPECT_FALSE(parseInputShapes("nocolon").ok());
  EXPECT_FALSE(parseBindDims("N=-1").ok());
  auto b = parseBindDims("N=1,H=224");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[1].second, 224);
}

TEST(InferShapes, FunctionsPerCallSite) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,3] x, float[5] y) => (float[] a, float[] b) {
  a = local.Dbl(x)
  b = local.Dbl(y)
}
<domain: "local", opset_import: ["" : 17]>
Dbl (t) => (u) {
  u = Add(t, t)
})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(inferShapes(*m).ok());
  EXPECT_EQ(typeOf(*m, "a"), "float[2,3]");
  EXPECT_EQ(typeOf(*m, "b"), "float[5]");
  // The body is shared by both calls: it is not annotated.
  EXPECT_EQ(m->functions()[0]->body().nodes().front().result(0)->type(), nullptr);
}

// Note [Call inference memo]: 40 functions, each calling the one before
// twice, are 2^40 call sites; calls that agree on their operand types are
// inferred once, so the result is typed (without the memo the call work
// budget runs out first and `y` stays untyped).
TEST(InferShapes, CallsThatAgreeAreInferredOnce) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,N] x) => (float[] y) {
  y = local.F39(x)
}
<domain: "local", opset_import: ["" : 17]>
F0 (u) => (v) {
  v = Neg(u)
}
)";
  for (int i = 1; i < 40; ++i)
    text += "<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>\nF" + std::to_string(i) +
            " (u) => (v) {\n  w = local.F" + std::to_string(i - 1) + "(u)\n  v = local.F" +
            std::to_string(i - 1) + "(w)\n}\n";
  auto m = parse(text.c_str());
  ASSERT_TRUE(m);
  ASSERT_TRUE(inferShapes(*m).ok());
  EXPECT_EQ(typeOf(*m, "y"), "float[2,N]");
}

// A call that makes fresh symbols is not reused: two calls of a function
// whose If merges branches of other lengths have lengths that need not agree.
TEST(InferShapes, CallsWithFreshSymbolsAreInferredEachTime) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (bool c, float[2,3] x) => (float[] a, float[] b) {
  a = local.Pick(c, x)
  b = local.Pick(c, x)
}
<domain: "local", opset_import: ["" : 17]>
Pick (k, t) => (u) {
  u = If(k) <then_branch = g1 () => (float[] p) { p = Relu(t) },
             else_branch = g2 () => (float[] q) { q = Concat<axis = 0>(t, t) }>
})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(inferShapes(*m).ok());
  std::string a = typeOf(*m, "a"), b = typeOf(*m, "b");
  EXPECT_TRUE(startsWith(a, "float[unk__")) << a;
  EXPECT_TRUE(startsWith(b, "float[unk__")) << b;
  EXPECT_NE(a, b);
}

// What an attribute reference means is part of a call: equal operands with
// other attributes (given directly, or through an outer call's reference)
// infer again.
TEST(InferShapes, CallsWithOtherAttributesAreInferredEachTime) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,3,5] x) => (float[] a, float[] b, float[] c, float[] d, float[] e) {
  a = local.Tr<perm = [2, 0, 1]>(x)
  b = local.Tr<perm = [1, 2, 0]>(x)
  c = local.Outer<p = [2, 0, 1]>(x)
  d = local.Outer<p = [1, 0, 2]>(x)
  e = local.Tr<perm = [2, 0, 1]>(x)
}
<domain: "local", opset_import: ["" : 17]>
Tr <perm> (t) => (u) {
  u = Transpose<perm = @perm>(t)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
Outer <p> (t) => (u) {
  u = local.Tr<perm = @p>(t)
})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(inferShapes(*m).ok());
  EXPECT_EQ(typeOf(*m, "a"), "float[5,2,3]");
  EXPECT_EQ(typeOf(*m, "b"), "float[3,5,2]");
  EXPECT_EQ(typeOf(*m, "c"), "float[5,2,3]");
  EXPECT_EQ(typeOf(*m, "d"), "float[3,2,5]");
  EXPECT_EQ(typeOf(*m, "e"), "float[5,2,3]");
}

} // namespace

// Every operator version of the default domain, ai.onnx.ml and
// ai.onnx.preview has a rule: a node of it alone (one or three float
// operands, most of them the wrong kind for the op) is never counted as a
// node without a rule, and no rule crashes on operands it does not expect.
TEST(InferShapes, EveryOperatorHasARule) {
  std::vector<std::string> missing;
  for (const OpSchema &s : allSchemas()) {
    llvm::StringRef d = s.domain();
    if (d != "" && d != "ai.onnx.ml" && d != "ai.onnx.preview") continue;
    std::string prefix = d.empty() ? "" : d.str() + ".";
    for (const char *operands : {"x", "x, x, x"}) {
      std::string text = "<ir_version: 10, opset_import: [\"" + d.str() + "\" : " +
                         std::to_string(s.sinceVersion()) +
                         (d.empty() ? "" : ", \"\" : 21") + "]>\n" +
                         "g (float[2,3] x) => (float[] y) {\n  y = " + prefix + s.name().str() +
                         "(" + operands + ")\n}";
      auto m = parseModelText(text);
      ASSERT_TRUE(m.ok()) << text << "\n" << m.status().message();
      ShapeInferenceStatistics st;
      auto r = inferShapes(**m, {}, &st);
      ASSERT_TRUE(r.ok()) << text << "\n" << r.status().message();
      if (st.nodesNotInferred)
        missing.push_back(prefix + s.name().str() + "-" + std::to_string(s.sinceVersion()));
    }
  }
  EXPECT_TRUE(missing.empty()) << llvm::join(missing, " ");
}
