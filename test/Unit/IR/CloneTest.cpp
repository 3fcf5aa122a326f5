//===- CloneTest.cpp - Graph::clone, cloneNodesInto, Attribute::clone -----===//
#include "TestUtil.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

/// main { x, y; r = Relu(x); loop = Loop() { body(iter, cond):
///   m = Mul(r, iter); if = If(cond) { then: t = Add(m, x); else: out y } }
/// } -> loop
struct CloneTest : ::testing::Test, BasicModel {
  Node *relu, *loop, *mul, *ifn, *add;
  Graph *body, *thenG, *elseG;
  Value *iter, *cond;
  CloneTest() {
    relu = *g.createNodeWithNames("Relu", {x}, {"r"});
    loop = g.createNode("Loop", {nullptr, nullptr}, 1);
    loop->setName("loop");
    body = addSubgraph(loop, "body", "body");
    iter = *body->addInput("iter", ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{}));
    cond = *body->addInput("cond");
    mul = *body->createNodeWithNames("Mul", {relu->result(0), iter}, {"m"});
    mul->setName("the_mul");
    mul->docString = "doc";
    mul->metadata = {{"k", "v"}};
    mul->setAttr(intAttr("axis", 1));
    ifn = *body->createNodeWithNames("If", {cond}, {"ifout"});
    thenG = addSubgraph(ifn, "then_branch", "then");
    elseG = addSubgraph(ifn, "else_branch", "else");
    add = *thenG->createNodeWithNames("Add", {mul->result(0), x}, {"t"});
    thenG->addOutput(add->result(0));
    elseG->addOutput(y);
    body->addOutput(cond);
    OutputInfo info;
    info.docString = "out doc";
    body->addOutput(ifn->result(0), info);
    g.addOutput(loop->result(0));
  }
};

TEST_F(CloneTest, CloneKeepsNamesAndCapturesAndIsDetached) {
  ASSERT_IR_OK(m);
  IRMapping map;
  std::unique_ptr<Graph> c = body->clone(map);
  EXPECT_EQ(c->parentNode(), nullptr);
  EXPECT_EQ(c->name, "body");
  ASSERT_EQ(c->numInputs(), 2u);
  EXPECT_EQ(c->input(0)->name(), "iter");
  EXPECT_EQ(c->input(0)->type(), iter->type());
  EXPECT_EQ(map.lookupOrNull(iter), c->input(0));
  EXPECT_EQ(map.lookupOrNull(cond), c->input(1));
  ASSERT_EQ(c->numNodes(), 2u);
  Node &cm = c->nodes().front();
  EXPECT_NE(&cm, mul);
  EXPECT_EQ(cm.name(), "the_mul");
  EXPECT_EQ(cm.docString, "doc");
  EXPECT_EQ(cm.metadata, mul->metadata);
  EXPECT_EQ(cm.getAttr("axis")->i, 1);
  EXPECT_EQ(cm.result(0)->name(), "m");
  EXPECT_EQ(map.lookupOrNull(mul->result(0)), cm.result(0));
  // The outer value `r` is captured, not copied: it has a new use.
  EXPECT_EQ(cm.operand(0), relu->result(0));
  EXPECT_EQ(cm.operand(1), c->input(0));
  EXPECT_EQ(relu->result(0)->numUses(), 2u);
  // Nested graphs are cloned with the same mapping: `m` is remapped inside.
  Node &cif = c->nodes().back();
  ASSERT_EQ(cif.subgraphs().size(), 2u);
  Graph *cthen = cif.subgraphs()[0];
  EXPECT_EQ(cthen->parentNode(), &cif);
  EXPECT_EQ(cthen->parentGraph(), c.get());
  Node &cadd = cthen->nodes().front();
  EXPECT_EQ(cadd.operand(0), cm.result(0));
  EXPECT_EQ(cadd.operand(1), x); // captured from main, kept
  EXPECT_EQ(cif.subgraphs()[1]->output(0), y);
  // Outputs and their infos.
  EXPECT_EQ(c->outputs(), (std::vector<Value *>{c->input(1), cif.result(0)}));
  EXPECT_EQ(c->outputInfo(1).docString, "out doc");
  EXPECT_TRUE(irConsistent(*c));
  // The original is untouched, and attaching the clone as a sibling (a
  // second Loop in main) gives a valid model: sibling scopes may reuse names.
  Node *loop2 = g.createNode("Loop", {nullptr, nullptr}, 1);
  loop2->setAttr(graphAttr("body", std::move(c)));
  g.addOutput(loop2->result(0));
  EXPECT_IR_OK(m);
  EXPECT_EQ(body->lookupLocal("m"), mul->result(0));
}

TEST_F(CloneTest, CloneRemapsCapturedValuesThatAreMapped) {
  IRMapping map;
  map.map(relu->result(0), y); // level 1 capture
  map.map(x, y);               // level 2 capture (inside the If)
  std::unique_ptr<Graph> c = body->clone(map);
  Node &cm = c->nodes().front();
  EXPECT_EQ(cm.operand(0), y);
  Graph *cthen = c->nodes().back().subgraphs()[0];
  EXPECT_EQ(cthen->nodes().front().operand(1), y);
  EXPECT_EQ(relu->result(0)->numUses(), 1u); // only the original
  EXPECT_EQ(x->numUses(), 2u);               // Relu + original Add
  EXPECT_TRUE(irConsistent(*c));
  Node *loop2 = g.createNode("Loop", {nullptr, nullptr}, 1);
  loop2->setAttr(graphAttr("body", std::move(c)));
  EXPECT_IR_OK(m);
}

TEST_F(CloneTest, CloneCopiesInitializersAndInputDefaults) {
  Value *k = *body->addInitializer("k", makeFloatTensor({2}, {1, 2}));
  body->setInputDefault(cond, makeTensor(DataType::Bool, {}, std::string(1, '\1')));
  mul->setOperand(1, k);
  IRMapping map;
  std::unique_ptr<Graph> c = body->clone(map);
  ASSERT_EQ(c->initializers().size(), 2u);
  Value *ck = map.lookupOrNull(k);
  ASSERT_NE(ck, nullptr);
  EXPECT_NE(ck, k);
  EXPECT_TRUE(ck->isConstantInitializer());
  EXPECT_EQ(ck->getGraph(), c.get());
  EXPECT_EQ(ck->initializer()->values<float>().value(), (std::vector<float>{1, 2}));
  Value *ccond = map.lookupOrNull(cond);
  EXPECT_TRUE(ccond->isGraphInput());
  EXPECT_TRUE(ccond->hasInitializer());
  EXPECT_FALSE(ccond->isConstantInitializer());
  EXPECT_EQ(c->nodes().front().operand(1), ck);
  EXPECT_TRUE(irConsistent(*c));
}

// A capture of a value defined later in the same graph (unsorted input) is
// still remapped: results are created before operands are wired.
TEST_F(CloneTest, CloneOfUnsortedGraphRemapsForwardReferences) {
  Graph &cg = *thenG;
  Node *late = *cg.createNodeWithNames("Neg", {x}, {"late"});
  Node *early = cg.createNode("Abs", {late->result(0)}, 1, &cg.nodes().front());
  (void)early;
  IRMapping map;
  std::unique_ptr<Graph> c = cg.clone(map);
  Node &cEarly = c->nodes().front();
  EXPECT_EQ(cEarly.operand(0), map.lookupOrNull(late->result(0)));
  EXPECT_EQ(cEarly.operand(0)->getGraph(), c.get());
  EXPECT_TRUE(irConsistent(*c));
}

TEST_F(CloneTest, CloneNodesIntoGivesFreshNames) {
  // Inline the loop body into main twice, mapping its inputs to main values.
  Value *k = *body->addInitializer("k", makeFloatTensor({1}, {5}));
  (void)k;
  std::vector<std::string> before;
  for (int round = 0; round < 2; ++round) {
    IRMapping map;
    map.map(iter, x);
    map.map(cond, y);
    std::vector<Value *> outs = body->cloneNodesInto(g, nullptr, map);
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(outs[0], y);
    Value *copiedIf = outs[1];
    ASSERT_NE(copiedIf, ifn->result(0));
    EXPECT_EQ(copiedIf->getGraph(), &g);
    EXPECT_NE(copiedIf->name(), "ifout");
    EXPECT_EQ(copiedIf->definingNode()->operand(0), y);
    Value *copiedMul = map.lookupOrNull(mul->result(0));
    ASSERT_NE(copiedMul, nullptr);
    EXPECT_NE(copiedMul->name(), "m");
    EXPECT_EQ(copiedMul->definingNode()->operand(0), relu->result(0));
    EXPECT_EQ(copiedMul->definingNode()->operand(1), x);
    // Source initializers are copied into the destination with fresh names.
    Value *copiedK = map.lookupOrNull(k);
    ASSERT_NE(copiedK, nullptr);
    EXPECT_EQ(copiedK->getGraph(), &g);
    EXPECT_NE(copiedK->name(), "k");
    EXPECT_EQ(copiedK->initializer()->name(), copiedK->name().str());
    // Values inside copied subgraphs are renamed too.
    Graph *cthen = copiedIf->definingNode()->subgraphs()[0];
    Value *ct = cthen->nodes().front().result(0);
    EXPECT_NE(ct->name(), "t");
    EXPECT_EQ(cthen->nodes().front().operand(0), copiedMul);
    for (const std::string &n : before) {
      EXPECT_NE(copiedIf->name(), n);
      EXPECT_NE(ct->name(), n);
    }
    before.push_back(copiedIf->name().str());
    before.push_back(ct->name().str());
    g.addOutput(copiedIf);
    ASSERT_IR_OK(m);
  }
  // No name is defined twice anywhere in the model (the fixture reuses none).
  std::set<std::string> seen;
  m.walkGraphs([&](Graph *sg) {
    for (Value *v : definitionsOf(*sg))
      EXPECT_TRUE(seen.insert(v->name().str()).second) << v->name().str();
  });
}

TEST_F(CloneTest, CloneNodesIntoBeforeAPosition) {
  Node *tail = g.createNode("Identity", {loop->result(0)}, 1);
  IRMapping map;
  map.map(iter, x);
  map.map(cond, y);
  body->cloneNodesInto(g, tail, map);
  std::vector<std::string> ops;
  for (Node &n : g.nodes()) ops.push_back(n.opType().str());
  EXPECT_EQ(ops, (std::vector<std::string>{"Relu", "Loop", "Mul", "If", "Identity"}));
  EXPECT_IR_OK(m);
}

TEST_F(CloneTest, AttributeCloneKeepsCaptures) {
  Attribute *a = ifn->getAttr("then_branch");
  std::unique_ptr<Attribute> c = a->clone();
  EXPECT_EQ(c->name(), "then_branch");
  EXPECT_EQ(c->kind(), AttrKind::Graph);
  ASSERT_EQ(c->numGraphs(), 1u);
  EXPECT_EQ(c->getNode(), nullptr);
  Node &cadd = c->graph(0)->nodes().front();
  EXPECT_EQ(cadd.operand(0), mul->result(0)); // kept, not remapped
  EXPECT_EQ(cadd.operand(1), x);
  // Give it to a sibling If in the same body: valid (sibling reuse).
  Node *if2 = body->createNode("If", {cond}, 1);
  if2->setAttr(std::move(c));
  if2->setAttr(ifn->getAttr("else_branch")->clone());
  EXPECT_EQ(if2->getAttr("then_branch")->getNode(), if2);
  EXPECT_EQ(if2->subgraphs()[0]->parentNode(), if2);
  EXPECT_IR_OK(m);
  // Non-graph payloads are copied too.
  auto t = tensorAttr("value", makeInt64Tensor({2}, {7, 8}));
  t->docString = "d";
  auto tc = t->clone();
  EXPECT_EQ(tc->kind(), AttrKind::Tensor);
  EXPECT_EQ(tc->docString, "d");
  ASSERT_EQ(tc->tensors.size(), 1u);
  EXPECT_NE(tc->tensors[0].get(), t->tensors[0].get());
  EXPECT_EQ(tc->tensors[0]->values<int64_t>().value(), (std::vector<int64_t>{7, 8}));
}

} // namespace
