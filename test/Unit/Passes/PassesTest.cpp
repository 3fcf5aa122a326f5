//===- PassesTest.cpp - The pass algorithms as plain functions ------------===//
//
// Models are parsed from inline text (PyTorch's parseIR style) or built with
// the API; after each pass the IR must verify and the use lists must agree.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <set>

using namespace onnxir;

namespace {

using passtest::expectValid;
using passtest::parse;

std::set<std::string> opTypes(Graph &g) {
  std::set<std::string> ops;
  g.walk([&](Node *n) { ops.insert(n->opType().str()); });
  return ops;
}

Node *findNode(Model &m, llvm::StringRef op) {
  Node *found = nullptr;
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes())
      if (!found && n.opType() == op) found = &n;
  });
  return found;
}

TEST(DeadCode, NestedUseOfOuterInitializerDiesWithItsNode) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y) <float[2] w = {1, 2}>
{
  y = If(c) <then_branch = t () => (float[2] a) { dead = Mul(x, w)
                                                  a = Neg(x) },
             else_branch = e () => (float[2] b) { b = Abs(x) }>
}
)");
  ASSERT_TRUE(m);
  Value *w = m->graph().lookup("w");
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->useEmpty()); // the nested Mul is on w's use list
  DCEStatistics st;
  auto r = eliminateDeadCode(*m, {}, &st);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(st.nodesRemoved, 1);
  EXPECT_EQ(st.initializersRemoved, 1);
  EXPECT_EQ(m->graph().lookup("w"), nullptr);
  EXPECT_EQ(opTypes(m->graph()).count("Mul"), 0u);
  expectValid(*m);
  EXPECT_FALSE(*eliminateDeadCode(*m));
}

TEST(DeadCode, ValueUsedOnlyInLoopBodySurvives) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (int64 n, float[2] x) => (float[2] y)
{
  k = Neg(x)
  cond = Constant<value = bool {1}>()
  y = Loop(n, cond, x) <body = b (int64 i, bool ci, float[2] acc) => (bool co, float[2] out) {
    co = Identity(ci)
    out = Add(acc, k)
  }>
}
)");
  ASSERT_TRUE(m);
  auto r = eliminateDeadCode(*m);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_NE(m->graph().lookup("k"), nullptr);
}

TEST(TopologicalSort, HolderOfSubgraphDependsOnCaptures) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y)
{
  y = If(c) <then_branch = t () => (float[2] a) { a = Neg(k) },
             else_branch = e () => (float[2] b) { b = Abs(x) }>
  k = Relu(x)
}
)");
  ASSERT_TRUE(m);
  Node *relu = findNode(*m, "Relu");
  Node *iff = findNode(*m, "If");
  EXPECT_EQ(findNode(*m, "Neg")->ancestorIn(&m->graph()), iff);
  int64_t moved = 0;
  auto r = topologicalSort(*m, &moved);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_TRUE(relu->isBefore(iff));
  expectValid(*m);
  EXPECT_FALSE(*topologicalSort(*m));
}

TEST(TopologicalSort, CycleIsAnErrorListingItsNodes) {
  Model m;
  Graph &g = m.graph();
  g.name = "g";
  Value *x = *g.addInput("x");
  Node *a = g.createNode("Add", {x, x}, 1);
  Node *b = g.createNode("Relu", {a->result(0)}, 1);
  Node *c = g.createNode("Neg", {b->result(0)}, 1);
  Node *d = g.createNode("Abs", {c->result(0)}, 1);
  g.addOutput(d->result(0));
  a->setOperand(1, c->result(0)); // a -> b -> c -> a
  auto r = topologicalSort(m);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Relu)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(Neg)"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("(Abs)"), std::string::npos) << msg; // after the cycle, not on it
}

TEST(Rename, NeverCollidesInAnyScope) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] relu_0) => (float[2] neg_0)
{
  t = Relu(relu_0)
  neg_0 = If(c) <then_branch = a () => (float[2] p) { q = Relu(t)
                                                      p = Neg(q) },
                 else_branch = b () => (float[2] r) { s = Relu(t)
                                                      r = Neg(s) }>
}
)");
  ASSERT_TRUE(m);
  for (auto mode : {RenameOptions::Mode::Canonical, RenameOptions::Mode::Prefix,
                    RenameOptions::Mode::Sanitize}) {
    RenameOptions o;
    o.mode = mode;
    o.prefix = "p_";
    auto r = renameValues(*m, o);
    ASSERT_TRUE(r.ok()) << r.status();
    expectValid(*m);
    // The interface keeps its names.
    EXPECT_EQ(m->graph().input(1)->name(), "relu_0");
    EXPECT_EQ(m->graph().output(0)->name(), "neg_0");
  }
}

TEST(EliminateIdentity, GraphOutputKeepsItsName) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Builder b(g);
  Value *t = b.createValue("Relu", {x});
  Node *id = b.create("Identity", {t});
  ASSERT_TRUE(id->result(0)->setName("out").ok());
  g.addOutput(id->result(0));
  int64_t removed = 0;
  auto r = eliminateIdentity(m, &removed);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(g.output(0), t);
  EXPECT_EQ(t->name(), "out");
  expectValid(m);
}

TEST(CSE, MergesWithinAndIntoEnclosingScopesButNotAcrossSiblings) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] x) => (float[2] y)
{
  p = Relu(x)
  y = If(c) <then_branch = t () => (float[2] a) { r1 = Relu(x)
                                                  s1 = Sigmoid(x)
                                                  a = Add(r1, s1) },
             else_branch = e () => (float[2] b) { s2 = Sigmoid(x)
                                                  s3 = Sigmoid(x)
                                                  b = Add(s2, s3) }>
}
)");
  ASSERT_TRUE(m);
  int64_t merged = 0;
  auto r = eliminateCommonSubexpressions(*m, &merged);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(merged, 2); // r1 -> p, s3 -> s2; s1 and s2 stay apart
  int sigmoids = 0;
  m->graph().walk([&](Node *n) { sigmoids += n->opType() == "Sigmoid"; });
  EXPECT_EQ(sigmoids, 2);
  expectValid(*m);
}

TEST(DeduplicateInitializers, EqualTensorsMerge) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Value *a = *g.addInitializer("a", makeFloatTensor({2}, {1.f, 2.f}));
  Value *b = *g.addInitializer("b", makeFloatTensor({2}, {1.f, 2.f}));
  Value *c = *g.addInitializer("c", makeFloatTensor({1, 2}, {1.f, 2.f}));
  Node *s = g.createNode("Sum", {x, a, b, c}, 1);
  g.addOutput(s->result(0));
  int64_t merged = 0;
  ASSERT_TRUE(*deduplicateInitializers(m, &merged));
  EXPECT_EQ(merged, 1);
  EXPECT_EQ(s->operand(2), a);
  EXPECT_EQ(s->operand(3), c);
  EXPECT_EQ(g.initializers().size(), 2u);
  expectValid(m);
}

// A float[1] tensor whose data lies in an external file: `bytes` as the
// loader's answer, or no file at all (bytes() fails) without them.
std::unique_ptr<Tensor> externalTensor(std::string location, std::optional<std::string> bytes) {
  auto t = std::make_unique<Tensor>();
  t->setDataType(DataType::Float);
  t->setDims({1});
  ExternalDataRef ref;
  ref.location = location;
  ref.entries = {{"location", location}};
  ExternalLoader load = nullptr;
  if (bytes)
    load = [b = *bytes](const ExternalDataRef &) -> absl::StatusOr<std::shared_ptr<const Buffer>> {
      return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(b));
    };
  t->setExternal(ref, load);
  return t;
}

Node *constantOf(Graph &g, std::unique_ptr<Tensor> t) {
  Node *n = g.createNode("Constant", {}, 1);
  n->newAttr("value").setTensor(std::move(t));
  return n;
}

// Note [CSE keys]: tensors compare by their data wherever it is stored. Two
// external tensors whose data cannot be read are not known to be equal (the
// old textual key wrote "<unreadable>" for both and merged them); readable
// ones merge exactly when their bytes are equal, whatever their files.
TEST(CSE, ExternalTensorAttributesCompareByData) {
  Model m;
  Graph &g = m.graph();
  std::string one("\x00\x00\x80\x3f", 4), two("\x00\x00\x00\x40", 4);
  Node *u1 = constantOf(g, externalTensor("a.bin", std::nullopt));
  Node *u2 = constantOf(g, externalTensor("b.bin", std::nullopt));
  Node *e1 = constantOf(g, externalTensor("c.bin", one));
  Node *e2 = constantOf(g, externalTensor("d.bin", one));
  Node *e3 = constantOf(g, externalTensor("e.bin", two));
  Node *s = g.createNode("Sum", {u1->result(0), u2->result(0), e1->result(0), e2->result(0),
                                 e3->result(0)}, 1);
  g.addOutput(s->result(0));
  int64_t merged = 0;
  ASSERT_TRUE(eliminateCommonSubexpressions(m, &merged).ok());
  EXPECT_EQ(merged, 1); // e2 -> e1
  EXPECT_EQ(s->operand(0), u1->result(0));
  EXPECT_EQ(s->operand(1), u2->result(0));
  EXPECT_EQ(s->operand(2), e1->result(0));
  EXPECT_EQ(s->operand(3), e1->result(0));
  EXPECT_EQ(s->operand(4), e3->result(0));
}

// Attribute names are compared as names, whatever characters they hold: a
// name that spells another attribute's key text and a separator (as the old
// textual key wrote them: "\x1e" name ":" kind ":" value) is not two
// attributes.
TEST(CSE, AttributeNamesAreNotParsedAsKeyText) {
  Model m;
  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Node *a = g.createNode("Relu", {x}, 1);
  a->newAttr("a").setInt(1);
  a->newAttr("b").setInt(2);
  Node *b = g.createNode("Relu", {x}, 1);
  b->newAttr("a:2:1\x1e" "b").setInt(2);
  Node *c = g.createNode("Relu", {x}, 1);
  c->newAttr("b").setInt(2);
  c->newAttr("a").setInt(1);
  Node *s = g.createNode("Sum", {a->result(0), b->result(0), c->result(0)}, 1);
  g.addOutput(s->result(0));
  int64_t merged = 0;
  ASSERT_TRUE(eliminateCommonSubexpressions(m, &merged).ok());
  EXPECT_EQ(merged, 1); // c -> a: the same attributes in another order
  EXPECT_EQ(s->operand(1), b->result(0));
  EXPECT_EQ(s->operand(2), a->result(0));
}

// dedup-initializers reads external data too: equal bytes in two files
// merge, data that cannot be read is never taken for equal.
TEST(DeduplicateInitializers, ExternalTensorsCompareByData) {
  Model m;
  Graph &g = m.graph();
  std::string one("\x00\x00\x80\x3f", 4);
  Value *u1 = *g.addInitializer("u1", std::move(*externalTensor("a.bin", std::nullopt)));
  Value *u2 = *g.addInitializer("u2", std::move(*externalTensor("b.bin", std::nullopt)));
  Value *e1 = *g.addInitializer("e1", std::move(*externalTensor("c.bin", one)));
  Value *e2 = *g.addInitializer("e2", std::move(*externalTensor("d.bin", one)));
  Node *s = g.createNode("Sum", {u1, u2, e1, e2}, 1);
  g.addOutput(s->result(0));
  int64_t merged = 0;
  ASSERT_TRUE(*deduplicateInitializers(m, &merged));
  EXPECT_EQ(merged, 1);
  EXPECT_EQ(s->operand(0), u1);
  EXPECT_EQ(s->operand(1), u2);
  EXPECT_EQ(s->operand(3), e1);
}

// test.fold.Pair-1: Y = X and an optional Z that the kernel never computes.
void registerPair() {
  static const bool done = [] {
    registerSchema(OpSchemaBuilder("test.fold", "Pair", 1)
                       .input("X", "T")
                       .output("Y", "T")
                       .output("Z", "T", ParamOption::Optional)
                       .typeConstraint("T", {"tensor(float)"}));
    OpRegistry::get().registrar("test.fold")["Pair"].kernel(
        [](const KernelCall &c) -> absl::StatusOr<std::vector<Tensor>> {
          std::vector<Tensor> out;
          out.push_back(*c.input(0));
          return out;
        });
    return true;
  }();
  (void)done;
}

// Note [Fold declines]: a node whose used optional result the kernel leaves
// out is not folded, and -stats counts it; the same node without that result
// folds.
TEST(ConstantFolding, ResultTheKernelDoesNotComputeDeclines) {
  registerPair();
  auto m = parse(R"(
<ir_version: 10, opset_import: ["" : 21, "test.fold" : 1]>
g (float[2] x) => (float[2] y, float[2] z, float[2] w)
  <float[2] a = {1, 2}, float[2] b = {3, 4}>
{
  y, z = test.fold.Pair(a)
  w = test.fold.Pair(b)
}
)");
  ASSERT_TRUE(m);
  FoldOptions o;
  o.growthLimit = 1000;
  FoldStatistics st;
  ASSERT_TRUE(foldConstants(*m, o, &st).ok());
  EXPECT_EQ(st.nodesFolded, 1);
  EXPECT_EQ(st.resultNotComputed, 1);
  EXPECT_EQ(opTypes(m->graph()), std::set<std::string>{"Pair"});
  EXPECT_NE(m->graph().output(2)->initializer(), nullptr);
  expectValid(*m);
}

TEST(Constants, LiftAndLowerAreInverses) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  w = Constant<value = float[2] {1, 2}>()
  y = Add(x, w)
}
)");
  ASSERT_TRUE(m);
  std::string before = printModelText(*m);
  ASSERT_TRUE(*liftConstantsToInitializers(*m));
  EXPECT_EQ(m->graph().numNodes(), 1u);
  ASSERT_NE(m->graph().lookup("w"), nullptr);
  EXPECT_TRUE(m->graph().lookup("w")->isConstantInitializer());
  expectValid(*m);
  ASSERT_TRUE(*lowerInitializersToConstants(*m));
  EXPECT_EQ(m->graph().initializers().size(), 0u);
  expectValid(*m);
  EXPECT_EQ(printModelText(*m), before);
}

TEST(InlineFunctions, FreshNamesAndKeptResultNames) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[N] x) => (float[N] y, float[N] a)
{
  a = Relu(x)
  y = local.Scale <s = 2.0> (a)
}
<domain: "local", opset_import: ["" : 17]>
Scale <s> (x) => (y)
{
  a = Constant <value_float = @s> ()
  y = Mul(x, a)
}
)");
  ASSERT_TRUE(m);
  int64_t n = 0;
  auto r = inlineFunctions(*m, &n);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(n, 1);
  expectValid(*m);
  Node *mul = findNode(*m, "Mul");
  ASSERT_TRUE(mul && mul->getGraph() == &m->graph());
  EXPECT_EQ(mul->result(0)->name(), "y");
  EXPECT_EQ(mul->operand(0)->name(), "a");  // the main graph's a
  EXPECT_NE(mul->operand(1)->name(), "a"); // the copy got a fresh name
  Node *c = mul->operand(1)->definingNode();
  ASSERT_TRUE(c && c->getAttr("value_float"));
  EXPECT_FALSE(c->getAttr("value_float")->isReference());
  EXPECT_EQ(c->getAttr("value_float")->f, 2.0f);
}

TEST(InlineFunctions, RecursionIsRejected) {
  auto m = parse(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2] x) => (float[2] y)
{
  y = local.F(x)
}
<domain: "local", opset_import: ["" : 17, "local" : 1]>
F (u) => (v)
{
  v = local.F(u)
}
)");
  ASSERT_TRUE(m);
  auto r = inlineFunctions(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("recursive"), std::string::npos) << r.status();
}

} // namespace

namespace {
// Random graphs of Sum nodes whose operands are the input or any other
// node's result, so some are cyclic: the verifier's depth-first cycle
// search (Note [Packed cycle search]) and -topo's Kahn loop, two separate
// algorithms, must agree on which ones are.
TEST(TopologicalSort, AgreesWithTheVerifierOnCycles) {
  std::mt19937 rng(13);
  int cyclic = 0, acyclic = 0;
  for (int round = 0; round < 300; ++round) {
    Model m;
    Graph &g = m.graph();
    g.name = "g";
    Value *x = *g.addInput("x");
    const unsigned n = 1 + rng() % 30;
    // Mostly edges to earlier nodes (a graph that is often acyclic), some
    // to later ones (unsorted, or a cycle).
    const unsigned backPercent = rng() % 30;
    std::vector<Node *> nodes;
    for (unsigned i = 0; i < n; ++i) nodes.push_back(g.createNode("Sum", {x, x, x, x}, 1));
    for (unsigned i = 0; i < n; ++i) {
      const unsigned k = 1 + rng() % 4;
      for (unsigned s = 0; s < k; ++s) {
        unsigned j = rng() % n;
        bool later = rng() % 100 < backPercent;
        if (j == i || (j > i && !later) || (j < i && later)) continue; // stays x
        nodes[i]->setOperand(s, nodes[j]->result(0));
      }
    }
    g.addOutput(nodes.back()->result(0));
    std::vector<Diagnostic> d = verifyAll(m);
    bool verifierCycle = std::any_of(d.begin(), d.end(),
                                     [](const Diagnostic &x) { return x.kind == Diagnostic::Kind::Cycle; });
    auto r = topologicalSort(m);
    ASSERT_EQ(verifierCycle, !r.ok()) << "round " << round << ": " << (r.ok() ? "" : r.status().message());
    if (r.ok()) {
      ++acyclic;
      expectValid(m); // sorted: no order violation left
    } else {
      ++cyclic;
    }
  }
  // The rounds cover both answers, many times.
  EXPECT_GT(cyclic, 50);
  EXPECT_GT(acyclic, 50);
}
} // namespace
