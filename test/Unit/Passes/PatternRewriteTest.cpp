//===- PatternRewriteTest.cpp - Patterns, rewriter and greedy driver ------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/PatternRewrite.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <map>
#include <string>

using namespace onnxir;

namespace {

using passtest::parse;

int64_t applications(const RewriteStatistics &s, llvm::StringRef name) {
  for (auto &[k, v] : s.applications)
    if (k == name) return v;
  return -1;
}

/// Neg(Neg(x)) -> x, written as one function.
bool negNeg(Node &outer, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(outer, 0, "Neg");
  if (!inner) return false;
  return rw.replaceNode(&outer, {inner->operand(0)});
}

TEST(GreedyDriver, ReachesAFixedPointInEveryGraph) {
  // Four Negs in a chain collapse pairwise; the inner graph's pair too. The
  // graph output keeps its name (its producer takes it) and dead nodes go.
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, bool c) => (float[2] y, float[2] z)
{
  a = Relu (x)
  n1 = Neg (a)
  n2 = Neg (n1)
  n3 = Neg (n2)
  y = Neg (n3)
  z = If (c) <then_branch = t () => (float[2] o) { p = Neg (y)
                                                    o = Neg (p) },
              else_branch = e () => (float[2] q) { q = Abs (x) }>
}
)");
  ASSERT_TRUE(m);
  PatternSet ps;
  ps.add("neg-neg", "Neg", negNeg);
  RewriteStatistics st;
  auto r = applyPatternsGreedily(*m, ps, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(applications(st, "neg-neg"), 2);
  EXPECT_TRUE(verify(*m).ok()) << verify(*m);
  Graph &g = m->graph();
  ASSERT_EQ(g.numNodes(), 2u); // Relu (now named y) and If
  EXPECT_EQ(g.output(0)->name(), "y");
  EXPECT_TRUE(g.output(0)->definingNode()->is("Relu"));
  // In the branch: o = Neg(Neg(y)) became y itself, which is not a value
  // of the branch, so the branch output cannot take it: the pair stays.
  Graph *t = g.nodes().back().getAttr("then_branch")->graph();
  EXPECT_EQ(t->numNodes(), 2u);
}

TEST(GreedyDriver, RequeuesWhatARewriteEnables) {
  // Each Neg pair only appears once the inner pair is gone: a single scan
  // must still finish (requeued users), not need one scan per pair.
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  a = Relu (x)
  n1 = Neg (a)
  n2 = Neg (n1)
  n3 = Neg (n2)
  n4 = Neg (n3)
  n5 = Neg (n4)
  y = Neg (n5)
}
)");
  ASSERT_TRUE(m);
  PatternSet ps;
  ps.add("neg-neg", "Neg", negNeg);
  RewriteStatistics st;
  ASSERT_TRUE(*applyPatternsGreedily(*m, ps, {}, &st));
  EXPECT_EQ(applications(st, "neg-neg"), 3);
  EXPECT_EQ(st.iterations, 2u); // one scan that changes, one that confirms
  EXPECT_EQ(m->graph().numNodes(), 1u);
}

TEST(GreedyDriver, StopsAtTheIterationCapWithPatternsThatUndoEachOther) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  y = Relu (x)
}
)");
  ASSERT_TRUE(m);
  PatternSet ps;
  ps.add("relu-to-abs", "Relu", [](Node &n, PatternRewriter &) {
    n.setOpType("Abs");
    return true;
  });
  ps.add("abs-to-relu", "Abs", [](Node &n, PatternRewriter &rw) {
    n.setOpType("Relu");
    rw.modified(&n);
    return true;
  });
  GreedyRewriteConfig cfg;
  cfg.maxIterations = 3;
  RewriteStatistics st;
  ASSERT_TRUE(*applyPatternsGreedily(*m, ps, cfg, &st));
  EXPECT_FALSE(st.converged);
  EXPECT_LE(st.iterations, 3u);
  EXPECT_GT(applications(st, "abs-to-relu"), 0);
}

TEST(GreedyDriver, HigherBenefitFirstAndRefusedReplacementsChangeNothing) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  y = Identity (x)
}
)");
  ASSERT_TRUE(m);
  std::vector<std::string> tried;
  PatternSet ps;
  ps.add("low", "Identity", [&](Node &, PatternRewriter &) {
    tried.push_back("low");
    return false;
  }, 1);
  ps.add("high", "Identity", [&](Node &n, PatternRewriter &rw) {
    tried.push_back("high");
    // y is a graph output and x a graph input: x cannot take y's name.
    EXPECT_FALSE(PatternRewriter::canReplace(n.result(0), n.operand(0)));
    return rw.replaceNode(&n, {n.operand(0)});
  }, 5);
  RewriteStatistics st;
  ASSERT_FALSE(*applyPatternsGreedily(*m, ps, {}, &st));
  EXPECT_EQ(tried, (std::vector<std::string>{"high", "low"}));
  EXPECT_EQ(m->graph().numNodes(), 1u);
  EXPECT_EQ(m->graph().output(0)->name(), "y");
}

TEST(PatternRewriter, OpsetOfAFunctionBodyIsItsOwn) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y)
{
  t = Relu (x)
  y = local.F (t)
}
<domain: "local", opset_import: ["" : 13]>
F (a) => (b)
{
  b = Neg (a)
}
)");
  ASSERT_TRUE(m);
  std::vector<int64_t> seen;
  PatternSet ps;
  ps.add("look", "", [&](Node &, PatternRewriter &rw) {
    seen.push_back(rw.opsetVersion());
    return false;
  });
  ASSERT_FALSE(*applyPatternsGreedily(*m, ps));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{13, 17}));
}

} // namespace

namespace {
/// Neg(Neg(x)) -> x unless the inner Neg is named "keep": then a near-miss.
bool negNegGuarded(Node &outer, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(outer, 0, "Neg");
  if (!inner) return false;
  if (inner->name() == "keep") return rw.rejected("name", "the inner Neg is named keep");
  return rw.replaceNode(&outer, {inner->operand(0)});
}
} // namespace

TEST(GreedyDriver, NearMissesLeftAtTheFixedPointAreReported) {
  // Note [Near-miss reports]: n2's pair is rejected and stays (reported);
  // y's pair is rejected first (its inner Neg is `keep` until the Relu
  // after it renames it), then applies: not reported.
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z, float[2] w)
{
  [keep] n1 = Neg (x)
  n2 = Neg (n1)
  a = Abs (x)
  [keep] n3 = Neg (a)
  y = Neg (n3)
  z = Relu (n2)
  [renamer] w = Relu (y)
}
)");
  ASSERT_TRUE(m);
  PatternSet ps;
  ps.add("neg-neg", "Neg", negNegGuarded);
  // The Relu named renamer renames the inner Neg of the pair it reads,
  // after neg-neg rejected that pair once (it comes later in the scan).
  ps.add("rename", "Relu", [](Node &relu, PatternRewriter &rw) {
    if (relu.name() != "renamer") return false;
    Node *outer = relu.operand(0)->definingNode();
    Node *inner = outer ? outer->operand(0)->definingNode() : nullptr;
    if (!inner || inner->name() != "keep") return false;
    inner->setName("free");
    rw.modified(outer);
    return true;
  });
  GreedyRewriteConfig cfg;
  cfg.explain = true;
  RewriteStatistics st;
  auto r = applyPatternsGreedily(*m, ps, cfg, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(st.nearMisses.size(), 1u);
  EXPECT_EQ(st.nearMisses[0].pattern, "neg-neg");
  EXPECT_EQ(st.nearMisses[0].guard, "name");
  EXPECT_EQ(st.nearMisses[0].why, "the inner Neg is named keep");
  EXPECT_NE(st.nearMisses[0].node.find("(Neg)"), std::string::npos) << st.nearMisses[0].node;
  EXPECT_EQ(applications(st, "neg-neg"), 1);
  EXPECT_EQ(applications(st, "rename"), 1);
  // Without explain nothing is collected.
  auto m2 = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  [keep] n1 = Neg (x)
  y = Neg (n1)
}
)");
  RewriteStatistics st2;
  ASSERT_TRUE(applyPatternsGreedily(*m2, ps, {}, &st2).ok());
  EXPECT_TRUE(st2.nearMisses.empty());
}

TEST(GreedyDriver, CountsTheOpsRewritesMakeNet) {
  // Note [Fusion census]: Log(Exp(x)) -> Identity makes one Identity (a
  // helper Neg pair it builds is not named in `makes`, so not counted); a
  // second pattern re-forms that Identity (erases one, makes one), which
  // must not count it twice; a pattern that names no op adds nothing.
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y, float[2] z)
{
  e = Exp (x)
  y = Log (e)
  r = Relu (x)
  z = Relu (r)
}
)");
  ASSERT_TRUE(m);
  PatternSet ps;
  ps.add("log-exp", "Log", [](Node &log, PatternRewriter &rw) {
    Node *exp = rw.singleUseProducer(log, 0, "Exp");
    if (!exp) return false;
    Node *n1 = rw.create("Neg", {exp->operand(0)});
    Node *n2 = rw.create("Neg", {n1->result(0)});
    Node *id = rw.create("Identity", {n2->result(0)});
    return rw.replaceNode(&log, {id->result(0)});
  }, 1, {"Identity"});
  ps.add("re-form", "Identity", [](Node &id, PatternRewriter &rw) {
    if (id.name() == "again") return false;
    Node *n = rw.create("Identity", {id.operand(0)});
    n->setName("again");
    return rw.replaceNode(&id, {n->result(0)});
  }, 1, {"Identity"});
  ps.add("relu-relu", "Relu", [](Node &outer, PatternRewriter &rw) {
    Node *inner = rw.singleUseProducer(outer, 0, "Relu");
    if (!inner) return false;
    Node *n = rw.create("Relu", {inner->operand(0)});
    return rw.replaceNode(&outer, {n->result(0)});
  });
  RewriteStatistics st;
  ASSERT_TRUE(applyPatternsGreedily(*m, ps, {}, &st).ok());
  std::map<std::string, int64_t> made(st.made.begin(), st.made.end());
  EXPECT_EQ(made, (std::map<std::string, int64_t>{{"Identity", 1}}));
}
