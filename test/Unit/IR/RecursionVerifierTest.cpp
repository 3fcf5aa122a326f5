//===- RecursionVerifierTest.cpp - Recursive functions, type nesting ------===//
//
// The verifier refuses model-local functions that call themselves (directly,
// through others, or from a subgraph of their body) with a located
// diagnostic, without deep recursion of its own; and types nested past
// onnxir::kMaxTypeNesting (Note [Nesting limits]).
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "onnxir/IR/Limits.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

using K = Diagnostic::Kind;

struct RecursionTest : ::testing::Test, BasicModel {
  /// A function local.NAME (u) => (v) whose body calls `callee` (or Neg).
  Function &fn(const std::string &name, const std::string &callee) {
    Function &f = m.addFunction();
    f.domain = "local";
    f.name = name;
    Graph &b = f.body();
    Value *u = *b.addInput("u", nullptr);
    Node *n = callee.empty() ? b.createNode("Neg", {u}, 1) : b.createNode(callee, {u}, 1);
    if (!callee.empty()) n->setDomain("local");
    n->setName("call_" + (callee.empty() ? std::string("neg") : callee));
    b.addOutput(n->result(0));
    return f;
  }
  std::vector<Diagnostic> recursion() {
    std::vector<Diagnostic> r;
    for (auto &d : verifyAll(m))
      if (d.kind == K::Recursion) r.push_back(d);
    return r;
  }
};

TEST_F(RecursionTest, DirectRecursion) {
  fn("F", "F");
  auto d = recursion();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("function \"local.F\""), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("call_F"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("(local.F -> local.F)"), std::string::npos) << d[0].message;
}

TEST_F(RecursionTest, MutualRecursionNamesTheChain) {
  fn("A", "B");
  fn("B", "C");
  fn("C", "A");
  auto d = recursion();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("(local.A -> local.B -> local.C -> local.A)"), std::string::npos)
      << d[0].message;
}

TEST_F(RecursionTest, CallsThatShareACalleeAreNotRecursion) {
  fn("Leaf", "");
  fn("L", "Leaf");
  fn("R", "Leaf");
  Function &top = fn("Top", "L");
  Graph &b = top.body();
  Node *r = b.createNode("R", {b.input(0)}, 1);
  r->setDomain("local");
  EXPECT_TRUE(recursion().empty());
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(RecursionTest, RecursionFromASubgraph) {
  Function &f = fn("F", "");
  Graph &b = f.body();
  Node *ifn = b.createNode("If", {b.input(0)}, 1);
  Graph *then = addSubgraph(ifn, "then_branch", "then");
  Node *call = then->createNode("F", {b.input(0)}, 1);
  call->setDomain("local");
  then->addOutput(call->result(0));
  auto d = recursion();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("(local.F -> local.F)"), std::string::npos) << d[0].message;
}

TEST_F(RecursionTest, LongChainNeedsNoDeepRecursion) {
  // 20,000 functions, each calling the next, the last calling the first:
  // a recursive search would need ~20,000 stack frames.
  const int n = 20000;
  for (int k = 0; k < n; ++k) fn("F" + std::to_string(k), "F" + std::to_string((k + 1) % n));
  auto d = recursion();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("local.F19999 -> local.F0)"), std::string::npos)
      << d[0].message.substr(0, 200);
}

TEST_F(RecursionTest, TypesNestedPastTheLimit) {
  auto nested = [&](unsigned levels) {
    const Type *t = ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2});
    for (unsigned k = 0; k < levels; ++k) {
      TypeSpec s;
      s.kind = Type::Kind::Sequence;
      s.inner = t;
      t = ctx.getType(s);
    }
    return t;
  };
  Value *ok = *g.addInput("ok", nested(kMaxTypeNesting));
  (void)ok;
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  *g.addInput("deep", nested(kMaxTypeNesting + 1));
  auto all = verifyAll(m);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_NE(all[0].message.find("value \"deep\": its type nests 201 levels deep"),
            std::string::npos)
      << all[0].message;
}

TEST_F(RecursionTest, GraphsNestedPastTheLimit) {
  // What a pass could build (inlining a function with subgraphs into a deep
  // branch): one level more than the readers accept is reported once.
  auto tooDeep = [&] {
    unsigned n = 0;
    for (auto &d : verifyAll(m))
      n += d.message.find("subgraphs nest deeper than 128 levels") != std::string::npos;
    return n;
  };
  Graph *cur = &g;
  for (unsigned k = 0; k <= kMaxGraphNesting; ++k) {
    Node *ifn = cur->createNode("If", {x}, 1);
    cur = addSubgraph(ifn, "then_branch", "b" + std::to_string(k));
    if (k + 1 == kMaxGraphNesting) {
      EXPECT_EQ(tooDeep(), 0u) << "at the limit";
    }
  }
  EXPECT_EQ(tooDeep(), 1u);
}

} // namespace
