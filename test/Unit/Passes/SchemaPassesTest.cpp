//===- SchemaPassesTest.cpp - Passes and the operator schemas -------------===//
//
// verify-each with schema checks blames the pass that broke a schema rule;
// DCE, CSE and the inliner use the shared op traits of OpSchema.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <map>

using namespace onnxir;

namespace {

using passtest::parse;

/// Gives the first node an attribute its schema does not have.
class BadAttrPass : public Pass {
public:
  llvm::StringRef argument() const override { return "bad-attr"; }
  llvm::StringRef description() const override { return "adds an unknown attribute"; }
  absl::StatusOr<bool> run(Model &m) override {
    auto a = std::make_unique<Attribute>("bogus");
    a->setInt(1);
    m.graph().nodes().front().setAttr(std::move(a));
    return true;
  }
};

const char *kSmall = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  a = Neg(x)
  y = Abs(a)
}
)";

TEST(SchemaPasses, VerifyEachWithSchemaBlamesThePass) {
  auto m = parse(kSmall);
  ASSERT_TRUE(m);
  PassManagerOptions o;
  o.verify.schema = true;
  PassManager pm(o);
  pm.addPass(std::make_unique<BadAttrPass>());
  auto r = pm.run(*m);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("pass 'bad-attr' left the IR invalid"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown attribute \"bogus\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("[schema]"), std::string::npos) << msg;
}

TEST(SchemaPasses, StructuralVerifyEachIgnoresSchemas) {
  auto m = parse(kSmall);
  ASSERT_TRUE(m);
  PassManager pm;
  pm.addPass(std::make_unique<BadAttrPass>());
  EXPECT_TRUE(pm.run(*m).ok());
  EXPECT_TRUE(verify(*m).ok());
  VerifyOptions vo;
  vo.schema = true;
  EXPECT_FALSE(verify(*m, vo).ok());
}

TEST(SchemaPasses, DceDropsOptionalResultsBySchema) {
  // GRU's Y is optional (Y_h used); Split's outputs are variadic, not optional.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[1,1,2] x, float[1,3,2] w, float[1,3,1] r, float[4] s) => (float[1,1,1] h, float[2] p)
{
  seq, h = GRU <hidden_size = 1> (x, w, r)
  p, q = Split <num_outputs = 2> (s)
}
)");
  ASSERT_TRUE(m);
  ASSERT_TRUE(eliminateDeadCode(*m).ok());
  const Node &gru = m->graph().nodes().front();
  EXPECT_EQ(gru.result(0), nullptr);
  const Node &split = m->graph().nodes().back();
  EXPECT_NE(split.result(1), nullptr);
  VerifyOptions vo;
  vo.schema = true;
  EXPECT_TRUE(verify(*m, vo).ok());
}

TEST(SchemaPasses, CseKeepsNondeterministicOps) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2] x) => (float[2] s, float[2] t, float[2] u)
{
  a = RandomNormalLike(x)
  b = RandomNormalLike(x)
  s = Add(a, b)
  c = com.microsoft.RandomSomething(x)
  d = com.microsoft.RandomSomething(x)
  t = Add(c, d)
  e = Abs(x)
  f = Abs(x)
  u = Add(e, f)
}
)");
  ASSERT_TRUE(m);
  ASSERT_TRUE(eliminateCommonSubexpressions(*m).ok());
  std::map<std::string, int> count;
  for (const Node &n : m->graph().nodes()) ++count[n.opType().str()];
  EXPECT_EQ(count["RandomNormalLike"], 2);
  EXPECT_EQ(count["RandomSomething"], 2);
  EXPECT_EQ(count["Abs"], 1);
}

} // namespace
