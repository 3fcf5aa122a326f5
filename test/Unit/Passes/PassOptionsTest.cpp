//===- PassOptionsTest.cpp - Pass options and edge cases through the API --===//
//
// The option structs of the pass functions (DCEOptions, RenameOptions, size
// limits) and scope edge cases, on models built with the Builder API or
// parsed from text. After every pass the model must verify.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <set>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

using passtest::expectValid;
using passtest::parse;

int countOps(Model &m, llvm::StringRef op) {
  int n = 0;
  m.walkGraphs([&](Graph *g) {
    for (Node &k : g->nodes()) n += k.opType() == op;
  });
  return n;
}

std::vector<std::string> names(llvm::ArrayRef<Value *> vs) {
  std::vector<std::string> out;
  for (Value *v : vs) out.push_back(v->name().str());
  return out;
}

const char *kFunctions = R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1, "ai.onnx.ml" : 2]>
g (float[2] x) => (float[2] y)
{
  y = local.Used(x)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
Used (a) => (b)
{
  b = local.Helper(a)
}
<domain: "local", opset_import: ["" : 17]>
Helper (a) => (b)
{
  b = Neg(a)
}
<domain: "local", opset_import: ["" : 17]>
Unused (a) => (b)
{
  b = Relu(a)
}
)";

TEST(DeadCodeOptions, DefaultsKeepFunctionsAndOpsets) {
  auto m = parse(kFunctions);
  ASSERT_TRUE(m);
  DCEStatistics st;
  auto r = eliminateDeadCode(*m, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(*r);
  EXPECT_EQ(m->functions().size(), 3u);
  EXPECT_EQ(m->opsetImports.size(), 3u);
  EXPECT_EQ(st.functionsRemoved, 0);
  EXPECT_EQ(st.opsetsRemoved, 0);
}

TEST(DeadCodeOptions, UnusedFunctionsAndOpsetsGo) {
  auto m = parse(kFunctions);
  ASSERT_TRUE(m);
  DCEOptions o;
  o.removeUnusedFunctions = true;
  o.removeUnusedOpsets = true;
  DCEStatistics st;
  auto r = eliminateDeadCode(*m, o, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(st.functionsRemoved, 1);
  EXPECT_EQ(st.opsetsRemoved, 1);
  std::vector<std::string> fns;
  for (auto &f : m->functions()) fns.push_back(f->name);
  EXPECT_EQ(fns, (std::vector<std::string>{"Used", "Helper"})); // Helper: transitively used
  EXPECT_EQ(m->opsetVersion("ai.onnx.ml"), -1);
  EXPECT_EQ(m->opsetVersion("local"), 1);
  EXPECT_EQ(m->opsetVersion(""), 17);
  expectValid(*m);
}

TEST(DeadCodeOptions, DeadValueInfoRecordsGo) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
  <float[2] dead, float[2] y2>
{
  dead = Relu(x)
  y2 = Neg(x)
  y = Abs(y2)
}
)");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->graph().valueInfo().size(), 2u);
  DCEStatistics st;
  ASSERT_TRUE(*eliminateDeadCode(*m, {}, &st));
  EXPECT_EQ(st.nodesRemoved, 1);
  EXPECT_EQ(st.valueInfosRemoved, 1);
  ASSERT_EQ(m->graph().valueInfo().size(), 1u);
  EXPECT_EQ(m->graph().valueInfo().front().value, m->graph().lookup("y2"));
  expectValid(*m);
}

TEST(DeadCode, GraphInputWithDefaultIsInterfaceAndStays) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Value *bias = *g.addInput("bias");
  g.setInputDefault(bias, makeFloatTensor({2}, {0.f, 0.f}));
  Value *w = *g.addInitializer("w", makeFloatTensor({2}, {1.f, 2.f}));
  (void)w;
  Builder b(g);
  g.addOutput(b.createValue("Neg", {x}));
  DCEStatistics st;
  ASSERT_TRUE(*eliminateDeadCode(m, {}, &st));
  EXPECT_EQ(st.initializersRemoved, 1);
  EXPECT_EQ(g.lookup("w"), nullptr);
  ASSERT_NE(g.lookup("bias"), nullptr);
  EXPECT_TRUE(g.lookup("bias")->hasInitializer());
  EXPECT_EQ(g.numInputs(), 2u);
  expectValid(m);
}

// Regression (test/Passes/dce/dead-subgraph-holder.onnxtxt): erasing a dead
// node whose subgraph holds a chain once read the nested values after they
// were freed. The sanitizer build (ONNXIR_SANITIZE) catches a relapse.
TEST(DeadCode, DeadHolderOfAChainGoesWithItsSubgraph) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y)
{
  dead = If(c) <then_branch = t () => (float[2] a) { r1 = Relu(x)
                                                     r2 = Neg(r1)
                                                     a = Abs(r2) },
                else_branch = e () => (float[2] b) { b = Abs(x) }>
  y = Neg(x)
}
)");
  ASSERT_TRUE(m);
  DCEStatistics st;
  auto r = eliminateDeadCode(*m, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(st.nodesRemoved, 1);
  EXPECT_EQ(m->graph().numNodes(), 1u);
  expectValid(*m);
}

const char *kRename = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] "x.in") => (float[2] "y-out")
  <float[2] "w/0" = {1, 2}>
{
  ["n 1"] "t:1" = Mul("x.in", "w/0")
  "y-out" = If(c) <then_branch = a () => (float[2] p) { "q q" = Relu("t:1")
                                                         p = Neg("q q") },
                    else_branch = b () => (float[2] r) { r = Abs("t:1") }>
}
)";

TEST(RenameOptions, PrefixKeepsInterfaceUnlessAsked) {
  for (bool iface : {false, true}) {
    auto m = parse(kRename);
    ASSERT_TRUE(m);
    RenameOptions o;
    o.mode = RenameOptions::Mode::Prefix;
    o.prefix = "m1_";
    o.renameInterface = iface;
    int64_t renamed = 0;
    ASSERT_TRUE(*renameValues(*m, o, &renamed));
    EXPECT_GT(renamed, 0);
    expectValid(*m);
    Graph &g = m->graph();
    if (iface) {
      EXPECT_EQ(names(g.inputs()), (std::vector<std::string>{"m1_c", "m1_x.in"}));
      EXPECT_EQ(g.output(0)->name(), "m1_y-out");
    } else {
      EXPECT_EQ(names(g.inputs()), (std::vector<std::string>{"c", "x.in"}));
      EXPECT_EQ(g.output(0)->name(), "y-out");
    }
    EXPECT_NE(g.lookup("m1_w/0"), nullptr);
    EXPECT_NE(g.lookup("m1_t:1"), nullptr);
    EXPECT_EQ(g.nodes().front().name(), "m1_n 1");
  }
}

TEST(RenameOptions, SanitizeMakesIdentifiersAndNodesCanBeKept) {
  auto m = parse(kRename);
  ASSERT_TRUE(m);
  RenameOptions o;
  o.mode = RenameOptions::Mode::Sanitize;
  o.renameNodes = false;
  ASSERT_TRUE(*renameValues(*m, o));
  expectValid(*m);
  Graph &g = m->graph();
  EXPECT_EQ(g.input(1)->name(), "x.in"); // interface kept
  EXPECT_NE(g.lookup("w_0"), nullptr);
  EXPECT_NE(g.lookup("t_1"), nullptr);
  EXPECT_EQ(g.nodes().front().name(), "n 1"); // renameNodes = false
  bool sawQ = false;
  m->walkGraphs([&](Graph *sg) {
    for (Node &n : sg->nodes())
      for (Value *r : n.results())
        if (r && r->name() == "q_q") sawQ = true;
  });
  EXPECT_TRUE(sawQ);
  // A second run finds nothing to do.
  int64_t again = 0;
  ASSERT_TRUE(renameValues(*m, o, &again).ok());
  EXPECT_EQ(again, 0);
}

TEST(RenameOptions, CanonicalIsIdempotent) {
  auto m = parse(kRename);
  ASSERT_TRUE(m);
  RenameOptions o;
  ASSERT_TRUE(*renameValues(*m, o));
  expectValid(*m);
  std::string once = printModelText(*m);
  ASSERT_TRUE(renameValues(*m, o).ok());
  EXPECT_EQ(printModelText(*m), once);
}

// Sanitize promises C identifiers: keywords (kept as they are, or produced
// by replacing characters) get a trailing '_'.
TEST(RenameOptions, SanitizeAvoidsKeywords) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] "int") => (float[2] out)
{
  ["while"] "for" = Relu("int")
  "and.eq" = Neg("for")
  "_Bool" = Abs("and.eq")
  "int_" = Sin("_Bool")
  out = Cos("int_")
}
)");
  ASSERT_TRUE(m);
  RenameOptions o;
  o.mode = RenameOptions::Mode::Sanitize;
  ASSERT_TRUE(*renameValues(*m, o));
  expectValid(*m);
  Graph &g = m->graph();
  EXPECT_EQ(g.input(0)->name(), "int"); // the interface keeps its names
  std::vector<std::string> results;
  for (Node &n : g.nodes()) results.push_back(n.result(0)->name().str());
  // "for", "and.eq" (-> "and_eq") and "_Bool" get a '_'; "int_" is already
  // fine and stays.
  EXPECT_EQ(results, (std::vector<std::string>{"for_", "and_eq_", "_Bool_", "int_", "out"}));
  EXPECT_EQ(g.nodes().front().name(), "while_");
  int64_t again = 0;
  ASSERT_TRUE(renameValues(*m, o, &again).ok());
  EXPECT_EQ(again, 0);
  // With the interface renamed too, "int" wants "int_", which is taken: it
  // gets a fresh name derived from it.
  o.renameInterface = true;
  ASSERT_TRUE(*renameValues(*m, o));
  EXPECT_NE(g.input(0)->name(), "int");
  EXPECT_EQ(g.input(0)->name().substr(0, 4), "int_");
  expectValid(*m);
}

// rename-prefix implies prefix mode; with an explicit other mode it is an
// error naming both options, in either order.
TEST(RenameOptions, ConflictingPassOptionsAreAnError) {
  registerAllPasses();
  const PassInfo *info = PassRegistry::instance().lookup("rename");
  ASSERT_NE(info, nullptr);
  for (const char *mode : {"canonical", "sanitize"}) {
    auto p = info->factory();
    ASSERT_TRUE(p->setOption("mode", mode).ok());
    absl::Status s = p->setOption("prefix", "m1_");
    ASSERT_FALSE(s.ok()) << mode;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    std::string msg(s.message());
    EXPECT_NE(msg.find("'prefix'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'mode'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(mode), std::string::npos) << msg;
    auto q = info->factory();
    ASSERT_TRUE(q->setOption("prefix", "m1_").ok());
    s = q->setOption("mode", mode);
    ASSERT_FALSE(s.ok()) << mode;
    msg = std::string(s.message());
    EXPECT_NE(msg.find("'prefix'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'mode'"), std::string::npos) << msg;
  }
  // Agreeing options are fine in either order, and the prefix is used.
  auto m = parse(kRename);
  ASSERT_TRUE(m);
  auto p = info->factory();
  ASSERT_TRUE(p->setOption("prefix", "m1_").ok());
  ASSERT_TRUE(p->setOption("mode", "prefix").ok());
  ASSERT_TRUE(*p->run(*m));
  EXPECT_NE(m->graph().lookup("m1_w/0"), nullptr);
  auto p2 = info->factory();
  ASSERT_TRUE(p2->setOption("mode", "prefix").ok());
  ASSERT_TRUE(p2->setOption("prefix", "m2_").ok());
  ASSERT_TRUE(*p2->run(*m));
  EXPECT_NE(m->graph().lookup("m2_m1_w/0"), nullptr);
  // A prefix alone selects prefix mode.
  auto p3 = info->factory();
  ASSERT_TRUE(p3->setOption("prefix", "m3_").ok());
  ASSERT_TRUE(*p3->run(*m));
  EXPECT_NE(m->graph().lookup("m3_m2_m1_w/0"), nullptr);
}

TEST(EliminateIdentity, UsersInsideBranchesReadTheInput) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y)
{
  i = Identity(x)
  y = If(c) <then_branch = t () => (float[2] a) { j = Identity(i)
                                                  a = Neg(j) },
             else_branch = e () => (float[2] b) { b = Abs(i) }>
}
)");
  ASSERT_TRUE(m);
  int64_t removed = 0;
  ASSERT_TRUE(*eliminateIdentity(*m, &removed));
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(countOps(*m, "Identity"), 0);
  Value *x = m->graph().input(1);
  for (Use &u : x->uses()) EXPECT_FALSE(u.getOwner()->is("Identity"));
  EXPECT_EQ(x->numUses(), 2u); // the branches' Neg and Abs
  expectValid(*m);
}

TEST(CSE, AttributesAndResultCountArePartOfTheKey) {
  Model m;
  m.opsetImports.push_back({"", 17, ""});
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Builder b(g);
  Node *t1 = b.create("Transpose", {x});
  t1->setAttr(intsAttr("perm", {1, 0}));
  Node *t2 = b.create("Transpose", {x});
  t2->setAttr(intsAttr("perm", {1, 0}));
  Node *t3 = b.create("Transpose", {x});
  t3->setAttr(intsAttr("perm", {0, 1}));
  Node *s1 = b.create("Split", {x}, 2);
  Node *s2 = b.create("Split", {x}, 3);
  Node *sum = b.create("Sum", {t1->result(0), t2->result(0), t3->result(0), s1->result(0),
                               s2->result(0)});
  g.addOutput(sum->result(0));
  int64_t merged = 0;
  ASSERT_TRUE(*eliminateCommonSubexpressions(m, &merged));
  EXPECT_EQ(merged, 1);
  EXPECT_EQ(sum->operand(1), t1->result(0));
  EXPECT_EQ(sum->operand(2), t3->result(0));
  EXPECT_EQ(sum->operand(4), s2->result(0));
  expectValid(m);
}

TEST(CSE, OuterNodeAfterTheHolderIsNotReused) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y, float[2] z)
{
  y = If(c) <then_branch = t () => (float[2] a) { r1 = Relu(x)
                                                  a = Neg(r1) },
             else_branch = e () => (float[2] b) { b = Abs(x) }>
  p = Relu(x)
  z = Neg(p)
}
)");
  ASSERT_TRUE(m);
  int64_t merged = 0;
  auto r = eliminateCommonSubexpressions(*m, &merged);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_EQ(countOps(*m, "Relu"), 2);
  expectValid(*m);
}

TEST(DeduplicateInitializers, GraphInputDefaultsAndSiblingsAreNotMerged) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x, float[2] d) => (float[2] y)
  <float[2] w = {1, 2}, float[2] d = {1, 2}>
{
  s = Add(w, d)
  y = If(c) <then_branch = t () => (float[2] a) <float[2] k = {5, 6}> { a = Add(s, k) },
             else_branch = e () => (float[2] b) <float[2] l = {5, 6}> { b = Sub(s, l) }>
}
)");
  ASSERT_TRUE(m);
  int64_t merged = 0;
  auto r = deduplicateInitializers(*m, &merged);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_EQ(merged, 0);
  expectValid(*m);
}

TEST(Constants, SizeLimitsAndFunctionBodies) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[4] x) => (float[4] y)
{
  small = Constant<value = float {2}>()
  big = Constant<value = float[4] {1, 2, 3, 4}>()
  t = Mul(x, small)
  u = Add(t, big)
  y = local.F(u)
}
<domain: "local", opset_import: ["" : 17]>
F (a) => (b)
{
  k = Constant<value = float {3}>()
  b = Mul(a, k)
}
)");
  ASSERT_TRUE(m);
  int64_t lifted = 0;
  ASSERT_TRUE(*liftConstantsToInitializers(*m, /*maxBytes=*/4, &lifted));
  EXPECT_EQ(lifted, 1); // `small` only: `big` is 16 bytes, F's body holds no initializers
  Graph &g = m->graph();
  ASSERT_NE(g.lookup("small"), nullptr);
  EXPECT_TRUE(g.lookup("small")->isConstantInitializer());
  EXPECT_EQ(countOps(*m, "Constant"), 2);
  expectValid(*m);

  int64_t lowered = 0;
  ASSERT_TRUE(*lowerInitializersToConstants(*m, /*maxBytes=*/4, &lowered));
  EXPECT_EQ(lowered, 1);
  EXPECT_TRUE(g.initializers().empty());
  EXPECT_EQ(g.nodes().front().opType(), "Constant"); // at the start of the graph
  EXPECT_EQ(g.nodes().front().result(0)->name(), "small");
  expectValid(*m);
}

// A cycle that closes through a capture (the then branch reads `k`, `k`
// reads the If) is an error of the sort naming both nodes.
TEST(TopologicalSort, CycleThroughACaptureIsAnError) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
capture_cycle (bool c, float[2] x) => (float[2] y)
{
  y = If(c) <then_branch = t () => (float[2] a) { a = Neg(k) },
             else_branch = e () => (float[2] b) { b = Abs(x) }>
  k = Relu(y)
}
)");
  ASSERT_TRUE(m);
  auto r = topologicalSort(*m);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #0 (If)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node #1 (Relu)"), std::string::npos) << msg;
}

TEST(TopologicalSort, StableAndCountsMoves) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  // p = Neg(x); b = Relu(a); q = Abs(x); a = Sigmoid(x); y = Sum(p, q, b)
  Node *p = g.createNode("Neg", {x}, 1);
  Node *b = g.createNode("Relu", {x}, 1); // operand fixed below
  Node *q = g.createNode("Abs", {x}, 1);
  Node *a = g.createNode("Sigmoid", {x}, 1);
  b->setOperand(0, a->result(0));
  Node *y = g.createNode("Sum", {p->result(0), q->result(0), b->result(0)}, 1);
  g.addOutput(y->result(0));
  EXPECT_FALSE(verify(g).ok()); // b is used before it is defined
  int64_t moved = 0;
  ASSERT_TRUE(*topologicalSort(g, &moved));
  EXPECT_GT(moved, 0);
  std::vector<Node *> order;
  for (Node &n : g.nodes()) order.push_back(&n);
  EXPECT_EQ(order, (std::vector<Node *>{p, q, a, b, y}));
  expectValid(m);
  int64_t again = 0;
  EXPECT_FALSE(*topologicalSort(g, &again));
  EXPECT_EQ(again, 0);
}

// A function importing opset 13 in an opset 17 model: inlined when its ops
// resolve to the same schemas at both versions (Neg-13), else the call stays
// (Add is Add-13 at 13 but Add-14 at 17) and the run goes on.
TEST(InlineFunctions, OpsetMismatchConvertsTheFunctionOrLeavesTheCall) {
  const char *text = R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y)
{
  y = local.F(x)
}
<domain: "local", opset_import: ["" : 13]>
F (u) => (v)
{
  v = OP(u, u)
}
)";
  std::string same = std::string(text).replace(std::string(text).find("OP(u, u)"), 8, "Neg(u)");
  auto m = parse(same.c_str());
  ASSERT_TRUE(m);
  auto r = inlineFunctions(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(m->graph().nodes().front().opType(), "Neg");
  // Add-13 at 13, Add-14 at 17: the converter moves F to 17, then it inlines.
  std::string differ = std::string(text).replace(std::string(text).find("OP(u, u)"), 8, "Add(u, u)");
  m = parse(differ.c_str());
  ASSERT_TRUE(m);
  r = inlineFunctions(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(m->graph().nodes().front().opType(), "Add");
  EXPECT_EQ(opsetVersionIn(m->functions().front()->opsetImports, ""), 17);
  // A computed ReduceMax axes operand has no form at 17 (an attribute there):
  // the converter refuses and the call stays.
  m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[1] y)
{
  y = local.F(x)
}
<domain: "local", opset_import: ["" : 18]>
F (u) => (v)
{
  s = Shape(u)
  v = ReduceMax(u, s)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  std::vector<std::string> remarks;
  r = inlineFunctions(*m, nullptr, kDefaultInlineNodeBudget, &remarks);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(*r);
  EXPECT_EQ(printModelText(*m), before); // the call stays
  ASSERT_EQ(remarks.size(), 1u);
  EXPECT_NE(remarks[0].find("the opset converter refused"), std::string::npos) << remarks[0];
}

TEST(InlineFunctions, CallInsideLoopBodyGetsFreshNames) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (int64 n, float[2] x) => (float[2] y, float[2] t)
{
  t = Relu(x)
  cond = Constant<value = bool {1}>()
  y = Loop(n, cond, x) <body = body (int64 i, bool ci, float[2] acc) => (bool co, float[2] out)
  {
    co = Identity(ci)
    out = local.F(acc)
  }>
}
<domain: "local", opset_import: ["" : 17]>
F (u) => (v)
{
  t = Neg(u)
  v = Abs(t)
}
)");
  ASSERT_TRUE(m);
  int64_t n = 0;
  ASSERT_TRUE(*inlineFunctions(*m, &n));
  EXPECT_EQ(n, 1);
  expectValid(*m);
  Node *loop = nullptr;
  for (Node &k : m->graph().nodes())
    if (k.is("Loop")) loop = &k;
  ASSERT_NE(loop, nullptr);
  Graph *body = loop->subgraphs().front();
  Node *neg = nullptr;
  for (Node &k : body->nodes())
    if (k.is("Neg")) neg = &k;
  ASSERT_NE(neg, nullptr);
  EXPECT_NE(neg->result(0)->name(), "t"); // `t` is visible from the body
  EXPECT_EQ(body->output(1)->name(), "out");
  EXPECT_EQ(countOps(*m, "F"), 0);
}

} // namespace

//===----------------------------------------------------------------------===//
// Note [Pass definitions in one place]: options bound to the fields of an
// options struct, statistics named by the struct, passes made by makePass.
//===----------------------------------------------------------------------===//

namespace {

struct ToyOptions {
  bool flag = true;
  int64_t count = 7;
  std::string word = "left";
  int64_t budget = 5;
};

struct ToyStatistics {
  int64_t seen = 0, kept = 0;
  template <class F> void forEach(F &&f) const {
    f("nodes seen", seen);
    f("nodes kept", kept);
  }
};

class ToyPass : public OptionsPass<ToyOptions> {
public:
  ToyPass() : OptionsPass("toy", "a pass of the test") {}
  absl::StatusOr<bool> run(Model &m) override {
    last = optionValues();
    ToyStatistics s;
    s.seen = (int64_t)m.graph().numNodes();
    s.kept = last.count;
    addStats(s);
    addStats(s);
    return false;
  }
  ToyOptions last;

private:
  Field<bool> flag_{*this, &ToyOptions::flag, "flag", "a flag", "toy-flag"};
  Field<int64_t> count_{*this, &ToyOptions::count, "count", "a count"};
  Field<std::string> word_{*this, &ToyOptions::word, "word", "a word", "", {"left", "right"}};
  Field<ByteCount, int64_t> budget_{*this, &ToyOptions::budget, "budget", "a byte count"};
};

} // namespace

TEST(PassDefinitions, FieldsTakeTheStructDefaultsAndHandBackTheValuesSet) {
  ToyPass p;
  ASSERT_EQ(p.options().size(), 4u);
  EXPECT_EQ(p.options()[0]->defaultText(), "true");
  EXPECT_EQ(p.options()[1]->defaultText(), "7");
  EXPECT_EQ(p.options()[2]->defaultText(), "left");
  EXPECT_EQ(p.options()[0]->flag(), "toy-flag");
  ToyOptions o = p.optionValues();
  EXPECT_TRUE(o.flag);
  EXPECT_EQ(o.count, 7);
  EXPECT_EQ(o.word, "left");

  ASSERT_TRUE(p.setOption("flag", "false").ok());
  ASSERT_TRUE(p.setOption("count", "-3").ok());
  ASSERT_TRUE(p.setOption("word", "right").ok());
  EXPECT_FALSE(p.setOption("word", "up").ok()) << "choices are checked as for any option";
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Relu(x) }
  )");
  ASSERT_TRUE(p.run(*m).ok());
  EXPECT_FALSE(p.last.flag);
  EXPECT_EQ(p.last.count, -3);
  EXPECT_EQ(p.last.word, "right");
  // Every counter under its name, summed over the two reports.
  PassStatistics want = {{"nodes seen", 2}, {"nodes kept", -6}};
  EXPECT_EQ(p.statistics(), want);
}

TEST(PassDefinitions, ByteCountOptionsStandForIntegerFields) {
  ToyPass p;
  EXPECT_EQ(p.options()[3]->defaultText(), ToyPass().options()[3]->defaultText());
  EXPECT_EQ(p.optionValues().budget, 5);
  ASSERT_TRUE(p.setOption("budget", "2KiB").ok());
  EXPECT_EQ(p.optionValues().budget, 2048);
  // Past the field's range: its largest value, not a negative one.
  ASSERT_TRUE(p.setOption("budget", "18446744073709551615").ok());
  EXPECT_EQ(p.optionValues().budget, INT64_MAX);
}

TEST(PassDefinitions, GlobalFlagsReachBoundFields) {
  ToyPass p;
  std::set<std::string> used;
  ASSERT_TRUE(p.applyFlags({{"toy-flag", "false"}}, &used).ok());
  EXPECT_EQ(used, std::set<std::string>{"toy-flag"});
  EXPECT_FALSE(p.optionValues().flag);
}

TEST(PassDefinitions, DceOptionsDefaultsComeFromDCEOptions) {
  auto p = createDeadCodeEliminationPass();
  DCEOptions d;
  for (PassOptionBase *o : p->options()) {
    bool want = o->key() == "functions"  ? d.removeUnusedFunctions
                : o->key() == "opsets"   ? d.removeUnusedOpsets
                : o->key() == "value-info" ? d.removeDeadValueInfo
                                           : !d.removeDeadValueInfo;
    EXPECT_EQ(o->defaultText(), want ? "true" : "false") << o->key().str();
  }
}

TEST(PassDefinitions, MadePassesReportTheirCounters) {
  auto m = parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { t = Identity(x)  y = Identity(t) }
  )");
  auto p = createEliminateIdentityPass();
  EXPECT_EQ(p->argument(), "eliminate-identity");
  auto r = p->run(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  PassStatistics want = {{"identities removed", 1}};
  EXPECT_EQ(p->statistics(), want);

  auto made = makePass("made", "made by the test", [](Model &, PassReport &report) {
    report.stat("once", 1);
    report.warning("a warning");
    report.remark("a remark");
    return absl::StatusOr<bool>(true);
  });
  EXPECT_EQ(made->description(), "made by the test");
  ASSERT_TRUE(made->run(*m).ok());
  EXPECT_EQ(made->statistics(), (PassStatistics{{"once", 1}}));
  ASSERT_EQ(made->diagnostics().size(), 2u);
  EXPECT_EQ(made->diagnostics()[0].severity, PassDiagnostic::Severity::Warning);
  EXPECT_EQ(made->diagnostics()[1].message, "a remark");
}
