//===- UseListTest.cpp - Operands, use lists, RAUW ------------------------===//
#include "TestUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <vector>

using namespace onnxir;
using namespace onnxir::testutil;

namespace {

struct Fixture : ::testing::Test {
  Model m;
  Graph &g = m.graph();
  Value *x = nullptr, *y = nullptr;
  void SetUp() override {
    g.name = "main";
    x = unwrap(g.addInput("x", floatTy(m.getContext(), {2})));
    y = unwrap(g.addInput("y", floatTy(m.getContext(), {2})));
  }
};

using UseListTest = Fixture;

TEST_F(UseListTest, CreateNodeLinksOperandsAndNamesResults) {
  Node *add = g.createNode("Add", {x, y}, 1);
  ASSERT_EQ(add->numOperands(), 2u);
  EXPECT_EQ(add->operand(0), x);
  EXPECT_EQ(add->operand(1), y);
  EXPECT_EQ(add->numResults(), 1u);
  Value *r = add->result(0);
  EXPECT_EQ(r->name(), "add");
  EXPECT_EQ(r->definingNode(), add);
  EXPECT_EQ(r->resultIndex(), 0u);
  EXPECT_EQ(r->getGraph(), &g);
  EXPECT_EQ(r->kind(), Value::Kind::NodeResult);
  EXPECT_TRUE(x->hasOneUse());
  EXPECT_EQ(x->firstUse()->getOwner(), add);
  EXPECT_TRUE(r->useEmpty());
  EXPECT_TRUE(checkUseLists(m));

  // A second node of the same op type gets a different fresh name.
  Node *add2 = g.createNode("Add", {r, r}, 2);
  EXPECT_NE(add2->result(0)->name(), "add");
  EXPECT_NE(add2->result(0)->name(), add2->result(1)->name());
  EXPECT_EQ(r->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));

  // Explicit result base and position.
  Node *first = g.createNode("Relu", {x}, 1, add, "", "pre");
  EXPECT_EQ(first->result(0)->name(), "pre");
  EXPECT_EQ(&g.nodes().front(), first);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(UseListTest, SameValueTwiceInOneNode) {
  Node *mul = g.createNode("Mul", {x, x}, 1);
  EXPECT_EQ(x->numUses(), 2u);
  std::set<unsigned> nos;
  for (Use &u : x->uses()) {
    EXPECT_EQ(u.getOwner(), mul);
    nos.insert(u.getOperandNo());
  }
  EXPECT_EQ(nos, (std::set<unsigned>{0, 1}));
  mul->setOperand(0, y);
  EXPECT_TRUE(x->hasOneUse());
  EXPECT_EQ(x->firstUse()->getOperandNo(), 1u);
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, InsertRemoveSetOperand) {
  Node *n = g.createNode("Concat", {x}, 1);
  n->insertOperand(0, y); // [y, x]
  EXPECT_EQ(n->operands(), (std::vector<Value *>{y, x}));
  EXPECT_TRUE(checkUseLists(m));
  n->insertOperand(1, y); // [y, y, x]
  EXPECT_EQ(n->operands(), (std::vector<Value *>{y, y, x}));
  EXPECT_EQ(y->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  n->addOperand(x); // [y, y, x, x]
  EXPECT_EQ(x->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  n->removeOperand(1); // [y, x, x]
  EXPECT_EQ(n->operands(), (std::vector<Value *>{y, x, x}));
  EXPECT_EQ(y->numUses(), 1u);
  EXPECT_TRUE(checkUseLists(m));
  n->setOperand(2, y); // [y, x, y]
  EXPECT_EQ(x->numUses(), 1u);
  EXPECT_EQ(y->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  n->setOperand(1, y); // setting to the same value twice is idempotent
  n->setOperand(1, y);
  EXPECT_TRUE(x->useEmpty());
  EXPECT_EQ(y->numUses(), 3u);
  EXPECT_TRUE(checkUseLists(m));
  while (n->numOperands()) {
    n->removeOperand(n->numOperands() - 1);
    EXPECT_TRUE(checkUseLists(m));
  }
  EXPECT_TRUE(y->useEmpty());
  EXPECT_EQ(n->numOperands(), 0u);
}

TEST_F(UseListTest, SetOperandsReplacesEverySlot) {
  Node *n = g.createNode("Concat", {x, y, x}, 1);
  EXPECT_EQ(x->numUses(), 2u);
  n->setOperands({y, nullptr, y, x});
  ASSERT_EQ(n->numOperands(), 4u);
  EXPECT_EQ(n->operand(0), y);
  EXPECT_EQ(n->operand(1), nullptr);
  EXPECT_EQ(n->operand(2), y);
  EXPECT_EQ(n->operand(3), x);
  EXPECT_EQ(x->numUses(), 1u);
  EXPECT_EQ(y->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  for (const Use &u : n->operandUses())
    if (u.get()) {
      EXPECT_EQ(&n->operandUses()[u.getOperandNo()], &u);
    }
  n->setOperands({});
  EXPECT_EQ(n->numOperands(), 0u);
  EXPECT_TRUE(x->useEmpty());
  EXPECT_TRUE(y->useEmpty());
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, EmptyOptionalSlotsInTheMiddleAndAtTheEnd) {
  // Clip(x, <empty>, y, <empty>): omitted optional inputs are null slots.
  Node *n = g.createNode("Clip", {x, nullptr, y, nullptr}, 1);
  ASSERT_EQ(n->numOperands(), 4u);
  EXPECT_EQ(n->operand(1), nullptr);
  EXPECT_EQ(n->operand(3), nullptr);
  EXPECT_EQ(n->operandUse(1).get(), nullptr);
  EXPECT_EQ(n->operandUse(1).getNext(), nullptr);
  EXPECT_EQ(n->operandUse(1).getOwner(), n);
  EXPECT_EQ(n->operandUse(3).getOperandNo(), 3u);
  EXPECT_EQ(y->firstUse()->getOperandNo(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);

  // Fill the middle slot, then empty it again.
  n->setOperand(1, x);
  EXPECT_EQ(x->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  n->setOperand(1, nullptr);
  EXPECT_EQ(x->numUses(), 1u);
  EXPECT_TRUE(checkUseLists(m));

  // Insert before an empty slot; indices of later slots shift.
  n->insertOperand(1, nullptr); // x, -, -, y, -
  EXPECT_EQ(n->numOperands(), 5u);
  EXPECT_EQ(y->firstUse()->getOperandNo(), 3u);
  EXPECT_TRUE(checkUseLists(m));
  // Remove the trailing empty slot and a middle one.
  n->removeOperand(4);
  n->removeOperand(1);
  EXPECT_EQ(n->operands(), (std::vector<Value *>{x, nullptr, y}));
  EXPECT_EQ(y->firstUse()->getOperandNo(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(UseListTest, GetOperandNoAfterManyInsertions) {
  Node *n = g.createNode("Sum", {}, 1);
  for (unsigned i = 0; i < 20; ++i) n->insertOperand(i / 2, (i % 2) ? x : y);
  for (unsigned i = 0; i < n->numOperands(); ++i)
    EXPECT_EQ(n->operandUse(i).getOperandNo(), i);
  for (Use &u : x->uses()) EXPECT_EQ(n->operand(u.getOperandNo()), x);
  for (Use &u : y->uses()) EXPECT_EQ(n->operand(u.getOperandNo()), y);
  EXPECT_EQ(x->numUses() + y->numUses(), 20u);
  EXPECT_TRUE(checkUseLists(m));
}

// Note [Operand capacity]: appending does not copy the slots before it each
// time (10^5 graph outputs took 48 s), and slots that move keep their place
// in their value's use list.
TEST_F(UseListTest, AppendingOutputsMovesSlotsRarely) {
  unsigned moves = 0;
  const Use *slots = nullptr;
  for (unsigned i = 0; i < 4096; ++i) {
    g.addOutput(i % 3 ? x : y);
    if (g.returnNode()->operandBegin() != slots) ++moves;
    slots = g.returnNode()->operandBegin();
  }
  EXPECT_LE(moves, 13u); // doubling: 2, 4, ..., 4096
  EXPECT_EQ(x->numUses() + y->numUses(), 4096u);
  for (unsigned i = 0; i < g.numOutputs(); ++i) {
    EXPECT_EQ(g.returnNode()->operandUse(i).getOperandNo(), i);
    EXPECT_EQ(g.output(i), i % 3 ? x : y);
  }
  EXPECT_TRUE(checkUseLists(m));
  // The order of x's uses: each move kept it (newest first).
  std::vector<unsigned> order;
  for (Use &u : x->uses()) order.push_back(u.getOperandNo());
  EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend()));
  // Removing from the front and the middle moves the rest down.
  g.removeOutput(0);
  g.removeOutput(100);
  EXPECT_EQ(g.numOutputs(), 4094u);
  EXPECT_EQ(x->numUses() + y->numUses(), 4094u);
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    EXPECT_EQ(g.returnNode()->operandUse(i).getOperandNo(), i);
  EXPECT_TRUE(checkUseLists(m));
  while (g.numOutputs()) g.removeOutput(g.numOutputs() - 1);
  EXPECT_TRUE(x->useEmpty());
  EXPECT_TRUE(y->useEmpty());
}

TEST_F(UseListTest, GraphOutputsAreUses) {
  Node *add = g.createNode("Add", {x, y}, 1);
  Value *r = add->result(0);
  EXPECT_TRUE(r->useEmpty()); // dead
  g.addOutput(r);
  EXPECT_FALSE(r->useEmpty()); // live: the output is a use
  EXPECT_TRUE(r->isGraphOutput());
  EXPECT_TRUE(r->firstUse()->getOwner()->isReturn());
  EXPECT_EQ(r->firstUse()->getOwner(), g.returnNode());
  EXPECT_EQ(r->firstUse()->getOperandNo(), 0u);
  EXPECT_EQ(g.numOutputs(), 1u);
  EXPECT_EQ(g.output(0), r);
  EXPECT_TRUE(checkUseLists(m));
  // The producer cannot be erased while it feeds an output.
  absl::Status s = add->erase();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("graph output"), std::string::npos) << s;
  // An input as output, then removal of the first output.
  g.addOutput(x);
  EXPECT_TRUE(x->isGraphOutput());
  g.removeOutput(0);
  EXPECT_TRUE(r->useEmpty());
  EXPECT_FALSE(r->isGraphOutput());
  EXPECT_EQ(g.output(0), x);
  EXPECT_EQ(x->firstUse()->getOperandNo(), 0u);
  EXPECT_TRUE(checkUseLists(m));
  g.setOutput(0, y);
  EXPECT_FALSE(x->isGraphOutput());
  EXPECT_EQ(x->numUses(), 1u); // only the Add operand
  EXPECT_TRUE(y->isGraphOutput());
  EXPECT_TRUE(add->erase().ok());
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, EraseRefusedWhileUsedThenOkAfterRAUW) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {a->result(0)}, 1);
  g.addOutput(b->result(0));
  absl::Status s = a->erase();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(s.message()).find("\"relu\""), std::string::npos) << s;
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  a->result(0)->replaceAllUsesWith(x);
  EXPECT_TRUE(a->result(0)->useEmpty());
  EXPECT_EQ(b->operand(0), x);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(a->erase().ok());
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_FALSE(g.isNameFree("neg")); // still defined
  EXPECT_TRUE(g.isNameFree("relu"));  // released by erase
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(UseListTest, IterateWhileErasing) {
  // A chain of 50 dead nodes plus some live ones; erase dead ones in reverse
  // (users first) while iterating with make_early_inc_range.
  Value *cur = x;
  std::vector<Node *> chain;
  for (int i = 0; i < 50; ++i) {
    Node *n = g.createNode(i % 3 ? "Relu" : "Neg", {cur}, 1);
    chain.push_back(n);
    cur = n->result(0);
  }
  Node *live = g.createNode("Add", {x, y}, 1);
  g.addOutput(live->result(0));
  unsigned erased = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node &n : llvm::make_early_inc_range(g.nodes()))
      if (!n.hasUses()) {
        ASSERT_TRUE(n.erase().ok());
        ++erased;
        changed = true;
        EXPECT_TRUE(checkUseLists(m));
      }
  }
  EXPECT_EQ(erased, 50u);
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(&g.nodes().front(), live);
  EXPECT_EQ(x->numUses(), 1u);

  // Erasing in list order (defs before users) fails for used nodes.
  Node *p = g.createNode("Relu", {x}, 1);
  Node *q = g.createNode("Relu", {p->result(0)}, 1);
  (void)q;
  unsigned refused = 0;
  for (Node &n : llvm::make_early_inc_range(g.nodes()))
    if (&n != live && !n.erase().ok()) ++refused;
  EXPECT_EQ(refused, 1u); // p was still used by q when visited
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, RAUWAcrossThreeNestingLevels) {
  // main: v = Relu(x); loop = Loop(...) { body: if = If(c) { then: Add(v, v) } }
  Node *relu = g.createNode("Relu", {x}, 1);
  Value *v = relu->result(0);
  Node *loop = g.createNode("Loop", {nullptr, nullptr}, 1);
  Graph *body = addSubgraph(loop, "body");
  Value *iter = unwrap(body->addInput("iter"));
  Value *cond = unwrap(body->addInput("cond"));
  (void)iter;
  Node *ifn = body->createNode("If", {cond}, 1);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  Node *inner = thenG->createNode("Add", {v, v}, 1);
  thenG->addOutput(inner->result(0));
  elseG->addOutput(v); // a nested graph output using the outer value
  body->addOutput(cond);
  body->addOutput(ifn->result(0));
  g.addOutput(v);
  g.addOutput(loop->result(0));

  EXPECT_EQ(v->numUses(), 4u); // two in then, one else output, one main output
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);

  Node *neg = g.createNode("Neg", {x}, 1, loop);
  Value *w = neg->result(0);
  v->replaceAllUsesWith(w);
  EXPECT_TRUE(v->useEmpty());
  EXPECT_EQ(w->numUses(), 4u);
  EXPECT_EQ(inner->operand(0), w);
  EXPECT_EQ(inner->operand(1), w);
  EXPECT_EQ(elseG->output(0), w);
  EXPECT_EQ(g.output(0), w);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  EXPECT_TRUE(relu->erase().ok());
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);

  // Erasing the loop (whose subgraphs capture w) unlinks the nested uses.
  g.removeOutput(1);
  EXPECT_TRUE(loop->erase().ok());
  EXPECT_EQ(w->numUses(), 1u); // only the main graph output remains
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, ReplaceUsesIf) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {x}, 1);
  Node *c = g.createNode("Add", {x, x}, 1);
  g.addOutput(x);
  ASSERT_EQ(x->numUses(), 5u);
  // Only the second operand of c and the graph output.
  x->replaceUsesIf(y, [&](Use &u) {
    return u.getOwner()->isReturn() || (u.getOwner() == c && u.getOperandNo() == 1);
  });
  EXPECT_EQ(a->operand(0), x);
  EXPECT_EQ(b->operand(0), x);
  EXPECT_EQ(c->operand(0), x);
  EXPECT_EQ(c->operand(1), y);
  EXPECT_EQ(g.output(0), y);
  EXPECT_EQ(x->numUses(), 3u);
  EXPECT_EQ(y->numUses(), 2u);
  EXPECT_TRUE(checkUseLists(m));
  // Replacing a value with itself is a no-op.
  x->replaceUsesIf(x, [](Use &) { return true; });
  EXPECT_EQ(x->numUses(), 3u);
  // Predicate false everywhere: no change.
  x->replaceUsesIf(y, [](Use &) { return false; });
  EXPECT_EQ(x->numUses(), 3u);
  // Everything.
  x->replaceUsesIf(y, [](Use &) { return true; });
  EXPECT_TRUE(x->useEmpty());
  EXPECT_EQ(y->numUses(), 5u);
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, UseSetDirectly) {
  Node *n = g.createNode("Add", {x, nullptr}, 1);
  n->operandUse(1).set(y);
  EXPECT_EQ(n->operand(1), y);
  n->operandUse(0).set(nullptr);
  EXPECT_TRUE(x->useEmpty());
  EXPECT_TRUE(checkUseLists(m));
  n->dropAllReferences();
  EXPECT_TRUE(y->useEmpty());
  EXPECT_EQ(n->numOperands(), 2u);
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(UseListTest, DropAllReferencesReachesNestedGraphs) {
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *t = addSubgraph(ifn, "then_branch");
  t->addOutput(t->createNode("Relu", {y}, 1)->result(0));
  EXPECT_EQ(y->numUses(), 1u);
  ifn->dropAllReferences();
  EXPECT_TRUE(x->useEmpty());
  EXPECT_TRUE(y->useEmpty());
  EXPECT_TRUE(checkUseLists(m));
}

} // namespace
