//===- VerifierTest.cpp - One test per verifier diagnostic kind -----------===//
//
// Every broken IR here is built through the public API only. Where the API
// cannot break an invariant (BadParent, DuplicateName), a test shows that the
// mutators that could plausibly break it keep it.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

using K = Diagnostic::Kind;

struct VerifierTest : ::testing::Test, BasicModel {
  /// main { x, y; r = Relu(x) "n0"; a = Add(x, y) "n1"; if = If(x) "cond" {
  ///   then: t = Neg(r); else: e = Abs(y) } } -> (a, if)
  Node *relu, *add, *ifn;
  Graph *thenG, *elseG;
  Value *t, *e;
  VerifierTest() {
    relu = g.createNode("Relu", {x}, 1);
    relu->setName("n0");
    add = *g.createNodeWithNames("Add", {x, y}, {"a"});
    add->setName("n1");
    ifn = g.createNode("If", {x}, 1);
    ifn->setName("cond");
    thenG = addSubgraph(ifn, "then_branch", "then");
    elseG = addSubgraph(ifn, "else_branch", "else");
    t = thenG->createNodeWithNames("Neg", {relu->result(0)}, {"t"}).value()->result(0);
    e = elseG->createNodeWithNames("Abs", {y}, {"e"}).value()->result(0);
    thenG->addOutput(t);
    elseG->addOutput(e);
    g.addOutput(add->result(0));
    g.addOutput(ifn->result(0));
  }
  std::vector<Diagnostic> diags(VerifyOptions o = {}) { return verifyAll(m, o); }
};

TEST_F(VerifierTest, WellFormedModelHasNoDiagnostics) {
  EXPECT_IR_OK(m);
  EXPECT_TRUE(diags().empty()) << describe(diags());
  EXPECT_STREQ(diagnosticKindName(K::Cycle), "cycle");
  EXPECT_STREQ(diagnosticKindName(K::NotVisible), "not visible");
}

//===--- UseListMismatch --------------------------------------------------===//

// A subgraph taken out of its attribute keeps its uses of outer values
// (documented on Attribute::takeGraph): the outer value's use list then
// shows users that are not in the model.
TEST_F(VerifierTest, UseListMismatchFromDetachedSubgraph) {
  Attribute *attr = ifn->getAttr("then_branch");
  std::unique_ptr<Graph> detached = attr->takeGraph(0);
  EXPECT_EQ(detached->parentNode(), nullptr);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::UseListMismatch, "value \"relu\" has a use by a node not in the model"))
      << describe(d);
  EXPECT_FALSE(irConsistent(m));
  // Reattaching restores a well-formed model.
  attr->addGraph(std::move(detached));
  EXPECT_IR_OK(m);
}

// A Use linked through the public Use::set without an owning node.
TEST_F(VerifierTest, UseListMismatchFromStrayUse) {
  Use stray;
  stray.set(x);
  EXPECT_EQ(x->numUses(), 4u);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::UseListMismatch, "\"x\" has a use by a node not in the model"))
      << describe(d);
  stray.set(nullptr);
  EXPECT_IR_OK(m);
}

// Note [Use lists from the operand side]: the counts are exact for a nested
// graph verified alone too (its captures of outer values are left out), so
// a stray use of one of its own values is found there, and named.
TEST_F(VerifierTest, StrayUseFoundWhenANestedGraphIsVerifiedAlone) {
  EXPECT_TRUE(verifyAll(*thenG).empty()) << describe(verifyAll(*thenG));
  Use stray;
  stray.set(t);
  EXPECT_EQ(t->numUses(), 2u);
  auto d = verifyAll(*thenG);
  EXPECT_TRUE(hasDiag(d, K::UseListMismatch, "\"t\" has a use by a node not in the model"))
      << describe(d);
  stray.set(nullptr);
  EXPECT_EQ(t->numUses(), 1u);
  EXPECT_TRUE(verifyAll(*thenG).empty());
}

// Use counts follow every way a list changes.
TEST_F(VerifierTest, UseCountsFollowEveryListChange) {
  EXPECT_EQ(x->numUses(), 3u); // relu, add, if
  add->setOperand(1, x);
  EXPECT_EQ(x->numUses(), 4u);
  EXPECT_EQ(y->numUses(), 1u); // the else branch
  add->insertOperand(0, y);
  add->removeOperand(2);
  EXPECT_EQ(x->numUses(), 3u);
  EXPECT_EQ(y->numUses(), 2u);
  add->setOperands({x, y});
  x->replaceAllUsesWith(y);
  EXPECT_EQ(x->numUses(), 0u);
  EXPECT_EQ(y->numUses(), 5u);
  unsigned walked = 0;
  for (Use &u : y->uses()) {
    EXPECT_TRUE(u.linksConsistent());
    ++walked;
  }
  EXPECT_EQ(walked, 5u);
  EXPECT_IR_OK(m);
}

//===--- BadParent (not reachable through the API) ------------------------===//

// Parent pointers are set by the mutators themselves: moving nodes between
// graphs and moving subgraphs between nodes keeps them right.
TEST_F(VerifierTest, BadParentNotProducedByMovesOrReattachment) {
  Node *n = thenG->createNode("Sqrt", {x}, 1);
  ASSERT_TRUE(n->moveToEnd(elseG).ok());
  EXPECT_EQ(n->getGraph(), elseG);
  EXPECT_EQ(n->result(0)->getGraph(), elseG);
  std::unique_ptr<Graph> taken = ifn->getAttr("else_branch")->takeGraph(0);
  Node *other = g.createNode("If", {x}, 1);
  Attribute &a = other->setAttr(graphAttr("else_branch", std::move(taken)));
  EXPECT_EQ(a.graph(0)->parentNode(), other);
  EXPECT_EQ(a.graph(0)->parentGraph(), &g);
  EXPECT_EQ(n->ancestorIn(&g), other);
  auto d = diags();
  EXPECT_FALSE(hasDiag(d, K::BadParent)) << describe(d);
  EXPECT_TRUE(irConsistent(m));
}

//===--- NotVisible -------------------------------------------------------===//

TEST_F(VerifierTest, NotVisibleSiblingSubgraphValue) {
  Node *abs = e->definingNode();
  abs->setOperand(0, t); // else branch uses a then-branch value
  auto d = diags();
  const Diagnostic *nv = findDiag(d, K::NotVisible);
  ASSERT_NE(nv, nullptr) << describe(d);
  EXPECT_EQ(nv->message,
            "graph \"main\" > node #2 \"cond\" (If) > attribute \"else_branch\" > node #0 (Abs): "
            "input #0 \"t\" is defined in graph \"main\" > node #2 \"cond\" (If) > attribute "
            "\"then_branch\", which does not enclose this use");
  // The use list itself is consistent: only visibility is wrong.
  EXPECT_TRUE(irConsistent(m));
  abs->setOperand(0, y);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, NotVisibleInnerValueUsedOutside) {
  add->setOperand(1, t);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::NotVisible, "node #1 \"n1\" (Add): input #1 \"t\"")) << describe(d);
  add->setOperand(1, y);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, NotVisibleValueOfGraphOutsideTheModel) {
  Graph loose(ctx);
  loose.name = "loose";
  Value *q = *loose.addInput("q");
  add->setOperand(0, q);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::NotVisible, "is defined in a graph that is not in the model"))
      << describe(d);
  add->setOperand(0, x); // before `loose` dies
  EXPECT_IR_OK(m);
}

//===--- OrderViolation ---------------------------------------------------===//

// Built with setOperand, which (unlike moves) never checks order.
TEST_F(VerifierTest, OrderViolationUseBeforeDefinition) {
  relu->setOperand(0, add->result(0)); // node #0 uses the result of node #1
  auto d = diags();
  ASSERT_EQ(d.size(), 1u) << describe(d);
  EXPECT_EQ(d[0].kind, K::OrderViolation);
  EXPECT_EQ(d[0].message,
            "graph \"main\" > node #0 \"n0\" (Relu): input #0 \"a\" is used before its "
            "definition at graph \"main\" > node #1 \"n1\" (Add)");
  EXPECT_TRUE(irConsistent(m)); // use lists are fine, only order is wrong
  // Unsorted graphs pass when order is not checked; a misorder without a
  // cycle is not a cycle.
  VerifyOptions noOrder;
  noOrder.checkOrder = false;
  EXPECT_TRUE(diags(noOrder).empty()) << describe(diags(noOrder));
  EXPECT_FALSE(hasDiag(d, K::Cycle));
  relu->setOperand(0, x);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, OrderViolationOfACaptureInASubgraph) {
  // The then-branch captures a value defined after the If.
  Node *late = g.createNode("Sin", {x}, 1);
  late->setName("late");
  t->definingNode()->setOperand(0, late->result(0));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::OrderViolation,
                      "graph \"main\" > node #2 \"cond\" (If) > attribute \"then_branch\" > node #0 "
                      "(Neg): input #0 \"sin\" is captured before its definition at graph \"main\" > "
                      "node #3 \"late\" (Sin) (the capturing node is graph \"main\" > node #2 \"cond\" (If))"))
      << describe(d);
  EXPECT_FALSE(hasDiag(d, K::Cycle));
  // Moving the definition first repairs it.
  ASSERT_TRUE(late->moveBefore(ifn).ok());
  EXPECT_IR_OK(m);
}

//===--- DuplicateName (not reachable through the API) --------------------===//

TEST_F(VerifierTest, DuplicateNameRefusedByEveryDefiningMutator) {
  ctx.allowShadowing = true; // even the lenient importer mode refuses duplicates
  EXPECT_FALSE(g.addInput("a").ok());
  EXPECT_FALSE(g.addInitializer("x", makeFloatTensor({1}, {0})).ok());
  EXPECT_FALSE(g.createNodeWithNames("Relu", {x}, {"r2", "r2"}).ok());
  EXPECT_FALSE(relu->addResult("a").ok());
  EXPECT_FALSE(relu->result(0)->setName("a").ok());
  ctx.allowShadowing = false;
  // Moving a node into a graph that defines its result's name is refused.
  Node *n = *elseG->createNodeWithNames("Exp", {y}, {"dup"});
  Node *m2 = *thenG->createNodeWithNames("Exp", {y}, {"dup"});
  EXPECT_FALSE(m2->moveToEnd(elseG).ok());
  EXPECT_EQ(m2->getGraph(), thenG);
  EXPECT_EQ(thenG->lookupLocal("dup"), m2->result(0));
  EXPECT_EQ(elseG->lookupLocal("dup"), n->result(0));
  auto d = diags();
  EXPECT_FALSE(hasDiag(d, K::DuplicateName)) << describe(d);
  EXPECT_IR_OK(m);
}

//===--- Shadowing --------------------------------------------------------===//

// A graph built detached (its own scope) and then attached under a scope
// that already defines one of its names.
TEST_F(VerifierTest, ShadowingFromAttachingADetachedGraph) {
  auto body = std::make_unique<Graph>(ctx);
  Value *inner = *body->addInput("x"); // fine while detached
  body->addOutput(body->createNode("Relu", {inner}, 1)->result(0));
  Node *loop = g.createNode("Loop", {}, 1);
  loop->setName("loop");
  loop->setAttr(graphAttr("body", std::move(body)));
  auto d = diags();
  const Diagnostic *sh = findDiag(d, K::Shadowing);
  ASSERT_NE(sh, nullptr) << describe(d);
  EXPECT_EQ(sh->message, "graph \"main\" > node #3 \"loop\" (Loop) > attribute \"body\": \"x\" "
                         "shadows the value of the same name in graph \"main\"");
  EXPECT_FALSE(hasDiag(d, K::DuplicateName));
  // Lookup resolves the innermost definition.
  Graph *b = loop->getAttr("body")->graph(0);
  EXPECT_EQ(b->lookup("x"), inner);
  // Renaming the inner value repairs it.
  ASSERT_TRUE(inner->setName("x_inner").ok());
  EXPECT_IR_OK(m);
}

// A clone of a branch attached inside that branch shadows every name.
TEST_F(VerifierTest, ShadowingFromACloneNestedInItsOriginal) {
  IRMapping map;
  std::unique_ptr<Graph> copy = thenG->clone(map);
  Node *holder = thenG->createNode("If", {x}, 1, &thenG->nodes().front());
  holder->setAttr(graphAttr("then_branch", std::move(copy)));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::Shadowing, "\"t\" shadows the value of the same name in graph \"main\" > "
                                       "node #2 \"cond\" (If) > attribute \"then_branch\""))
      << describe(d);
}

//===--- Cycle ------------------------------------------------------------===//

TEST_F(VerifierTest, CycleNamesItsNodes) {
  Node *a = g.createNode("Sin", {x}, 1);
  a->setName("A");
  Node *b = g.createNode("Cos", {a->result(0)}, 1);
  b->setName("B");
  Node *c = g.createNode("Tan", {b->result(0)}, 1);
  c->setName("C");
  g.addOutput(c->result(0));
  ASSERT_IR_OK(m);
  a->setOperand(0, c->result(0)); // A -> B -> C -> A
  auto d = diags();
  const Diagnostic *cy = findDiag(d, K::Cycle);
  ASSERT_NE(cy, nullptr) << describe(d);
  EXPECT_EQ(cy->message,
            "graph \"main\": dependency cycle through\n"
            "  graph \"main\" > node #3 \"A\" (Sin)\n"
            "  graph \"main\" > node #5 \"C\" (Tan)\n"
            "  graph \"main\" > node #4 \"B\" (Cos)");
  EXPECT_TRUE(irConsistent(m));
  // Not checking the order lets an unsorted graph pass, not a cyclic one:
  // the same cycle, and only it.
  VerifyOptions noOrder;
  noOrder.checkOrder = false;
  auto dn = diags(noOrder);
  ASSERT_EQ(dn.size(), 1u) << describe(dn);
  EXPECT_EQ(dn[0].message, cy->message);
  // Breaking the cycle leaves a valid graph.
  a->setOperand(0, x);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, CycleOfOneNode) {
  relu->setOperand(0, relu->result(0));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::Cycle, "graph \"main\" > node #0 \"n0\" (Relu): depends on its own result"))
      << describe(d);
  relu->setOperand(0, x);
  EXPECT_IR_OK(m);
}

// The search keeps a node's first dependency apart from the others (Note
// [Packed cycle search]): a self-use that is not the node's first
// dependency (Relu is) is found too.
TEST_F(VerifierTest, CycleOfOneNodeThroughItsSecondDependency) {
  add->setOperand(0, relu->result(0));
  add->setOperand(1, add->result(0));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::Cycle, "graph \"main\" > node #1 \"n1\" (Add): depends on its own result"))
      << describe(d);
  add->setOperand(0, x);
  add->setOperand(1, y);
  EXPECT_IR_OK(m);
}

// An unsorted diamond, each node listed before what it uses, is out of
// order but has no cycle: the search meets A again through D's second
// dependency, already searched.
TEST_F(VerifierTest, UnsortedDiamondIsNotACycle) {
  Node *dn = g.createNode("Add", {x, y}, 1);
  Node *b = g.createNode("Sin", {x}, 1);
  Node *c = g.createNode("Cos", {x}, 1);
  Node *a = g.createNode("Neg", {x}, 1);
  b->setOperand(0, a->result(0));
  c->setOperand(0, a->result(0));
  dn->setOperand(0, b->result(0));
  dn->setOperand(1, c->result(0));
  g.addOutput(dn->result(0));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::OrderViolation)) << describe(d);
  EXPECT_FALSE(hasDiag(d, K::Cycle)) << describe(d);
}

// A cycle closed through a node's third dependency, after its first two
// have been searched and found to lead nowhere back.
TEST_F(VerifierTest, CycleThroughALaterDependency) {
  Node *s = g.createNode("Sum", {relu->result(0), y, x}, 1);
  s->setName("S");
  Node *n = g.createNode("Neg", {s->result(0)}, 1);
  n->setName("N");
  g.addOutput(n->result(0));
  ASSERT_IR_OK(m);
  s->setOperand(2, n->result(0)); // S -> N -> S, through S's third input
  auto d = diags();
  const Diagnostic *cy = findDiag(d, K::Cycle);
  ASSERT_NE(cy, nullptr) << describe(d);
  EXPECT_EQ(cy->message, "graph \"main\": dependency cycle through\n"
                         "  graph \"main\" > node #3 \"S\" (Sum)\n"
                         "  graph \"main\" > node #4 \"N\" (Neg)");
  s->setOperand(2, x);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, CycleThroughASubgraphCaptureIsReported) {
  // The If's then-branch uses the result of a node that uses the If.
  Node *after = g.createNode("Neg", {ifn->result(0)}, 1);
  after->setName("after");
  t->definingNode()->setOperand(0, after->result(0));
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::OrderViolation, "is captured before its definition at graph \"main\" > "
                                            "node #3 \"after\" (Neg)"))
      << describe(d);
  t->definingNode()->setOperand(0, x);
  EXPECT_IR_OK(m);
}

// A cycle that closes through a subgraph capture (If -> then-branch uses
// `after`, `after` uses the If) is a Cycle, besides the order violation of
// the capture.
TEST_F(VerifierTest, CycleThroughASubgraphCaptureIsACycle) {
  Node *after = g.createNode("Neg", {ifn->result(0)}, 1);
  after->setName("after");
  t->definingNode()->setOperand(0, after->result(0));
  auto d = diags();
  const Diagnostic *cy = findDiag(d, K::Cycle);
  ASSERT_NE(cy, nullptr) << describe(d);
  EXPECT_NE(cy->message.find("\"cond\" (If)"), std::string::npos) << cy->message;
  EXPECT_NE(cy->message.find("\"after\" (Neg)"), std::string::npos) << cy->message;
  // Found through the capture when the order is not checked, too.
  VerifyOptions noOrder;
  noOrder.checkOrder = false;
  auto dn = diags(noOrder);
  ASSERT_EQ(dn.size(), 1u) << describe(dn);
  EXPECT_EQ(dn[0].message, cy->message);
  t->definingNode()->setOperand(0, x);
}

// Verifying a nested graph on its own accepts its captures of values of the
// enclosing graphs (then: relu of main; else: input y of main).
TEST_F(VerifierTest, VerifyANestedGraphAloneAcceptsCaptures) {
  EXPECT_TRUE(verifyAll(*thenG).empty()) << describe(verifyAll(*thenG));
  EXPECT_TRUE(verify(*elseG).ok()) << verify(*elseG);
}

// ... but still reports what is wrong inside it: a value of a sibling graph,
// and a capture of an enclosing value defined after the capturing node.
TEST_F(VerifierTest, VerifyANestedGraphAloneReportsItsOwnProblems) {
  Node *neg = t->definingNode();
  neg->setOperand(0, e); // the else branch's value
  auto d = verifyAll(*thenG);
  EXPECT_TRUE(hasDiag(d, K::NotVisible, "input #0 \"e\" is defined")) << describe(d);
  Node *late = g.createNode("Sin", {x}, 1);
  neg->setOperand(0, late->result(0));
  d = verifyAll(*thenG);
  EXPECT_TRUE(hasDiag(d, K::OrderViolation, "is captured before its definition")) << describe(d);
  EXPECT_FALSE(hasDiag(d, K::NotVisible)) << describe(d);
  neg->setOperand(0, relu->result(0));
  EXPECT_TRUE(verifyAll(*thenG).empty()) << describe(verifyAll(*thenG));
  EXPECT_IR_OK(m);
}

// A long chain closed into a cycle is found without deep recursion.
TEST_F(VerifierTest, CycleInALongChain) {
  const unsigned kLen = 200000;
  Node *first = g.createNode("Neg", {x}, 1);
  Node *last = first;
  for (unsigned i = 1; i < kLen; ++i) last = g.createNode("Neg", {last->result(0)}, 1);
  first->setOperand(0, last->result(0));
  VerifyOptions o;
  o.maxDiagnostics = 2;
  auto d = verifyAll(g, o);
  EXPECT_TRUE(hasDiag(d, K::OrderViolation)) << describe(d);
  EXPECT_TRUE(hasDiag(d, K::Cycle, "... and 199984 more nodes")) << describe(d);
  first->setOperand(0, x);
}

//===--- Known acyclic graphs ---------------------------------------------===//
// Note [Known acyclic graphs]: a search's verdict is kept until the model
// may have gained a dependency.

// The unsorted diamond of UnsortedDiamondIsNotACycle, returned as its nodes
// (d, b, c, a): listed before what they use.
struct Diamond {
  Node *d, *b, *c, *a;
};
Diamond unsortedDiamond(Graph &g, Value *x, Value *y) {
  Diamond r;
  r.d = g.createNode("Add", {x, y}, 1);
  r.b = g.createNode("Sin", {x}, 1);
  r.c = g.createNode("Cos", {x}, 1);
  r.a = g.createNode("Neg", {x}, 1);
  r.b->setOperand(0, r.a->result(0));
  r.c->setOperand(0, r.a->result(0));
  r.d->setOperand(0, r.b->result(0));
  r.d->setOperand(1, r.c->result(0));
  g.addOutput(r.d->result(0));
  return r;
}

TEST_F(VerifierTest, AVerdictHoldsUntilAnEdgeIsAdded) {
  Diamond dm = unsortedDiamond(g, x, y);
  EXPECT_FALSE(g.isKnownAcyclic());
  auto d = diags();
  ASSERT_TRUE(hasDiag(d, K::OrderViolation)) << describe(d);
  ASSERT_FALSE(hasDiag(d, K::Cycle)) << describe(d);
  EXPECT_TRUE(g.isKnownAcyclic());
  // The verdict is the graph's own: its subgraphs, sorted, were not searched.
  EXPECT_FALSE(thenG->isKnownAcyclic());
  // A new edge, through any slot, forgets it, and the cycle it closes is
  // found: a -> d -> b -> a.
  dm.a->setOperand(0, dm.d->result(0));
  EXPECT_FALSE(g.isKnownAcyclic());
  d = diags();
  EXPECT_TRUE(hasDiag(d, K::Cycle)) << describe(d);
  EXPECT_FALSE(g.isKnownAcyclic());
  dm.a->setOperand(0, x);
  d = diags();
  EXPECT_FALSE(hasDiag(d, K::Cycle)) << describe(d);
  EXPECT_TRUE(g.isKnownAcyclic());
  // A graph output is a slot too.
  g.addOutput(dm.a->result(0));
  EXPECT_FALSE(g.isKnownAcyclic());
}

TEST_F(VerifierTest, ErasingAndReorderingKeepTheVerdict) {
  Diamond dm = unsortedDiamond(g, x, y);
  Node *dead = g.createNode("Exp", {dm.a->result(0)}, 1);
  ASSERT_FALSE(hasDiag(diags(), K::Cycle));
  ASSERT_TRUE(g.isKnownAcyclic());
  ASSERT_TRUE(dead->erase().ok());
  EXPECT_TRUE(g.isKnownAcyclic());
  std::vector<Node *> order;
  for (Node &n : g.nodes()) order.push_back(&n);
  std::reverse(order.begin(), order.end());
  g.reorderNodes(std::move(order));
  EXPECT_TRUE(g.isKnownAcyclic());
  EXPECT_FALSE(hasDiag(diags(), K::Cycle));
}

// A node moved into a subgraph brings its dependencies to the node holding
// it, without a new use: P uses the If, B uses P, and B moved into the If's
// branch makes the If capture P. The verdict from before the move must not
// hide that cycle.
TEST_F(VerifierTest, AMoveIntoASubgraphForgetsTheVerdict) {
  Node *p = g.createNode("Neg", {ifn->result(0)}, 1);
  p->setName("P");
  Node *b = g.createNode("Sin", {p->result(0)}, 1);
  b->setName("B");
  // P before the If: out of order, not a cycle.
  std::vector<Node *> order = {relu, add, p, ifn, b};
  g.reorderNodes(std::move(order));
  auto d = diags();
  ASSERT_TRUE(hasDiag(d, K::OrderViolation)) << describe(d);
  ASSERT_FALSE(hasDiag(d, K::Cycle)) << describe(d);
  ASSERT_TRUE(g.isKnownAcyclic());
  ASSERT_TRUE(b->moveBefore(t->definingNode()).ok());
  EXPECT_FALSE(g.isKnownAcyclic());
  d = diags();
  EXPECT_TRUE(hasDiag(d, K::Cycle)) << describe(d);
}

// A subgraph moved to another node makes its captures that node's
// dependencies, again without a new use: H's result feeds n0, and the
// then-branch, which captures n0's result, moved from the If to H closes
// H -> n0 -> H.
TEST_F(VerifierTest, AttachingASubgraphForgetsTheVerdict) {
  Node *h = g.createNode("If", {x}, 1);
  h->setName("H");
  relu->setOperand(0, h->result(0));
  auto d = diags();
  ASSERT_TRUE(hasDiag(d, K::OrderViolation)) << describe(d);
  ASSERT_FALSE(hasDiag(d, K::Cycle)) << describe(d);
  ASSERT_TRUE(g.isKnownAcyclic());
  Attribute *branch = nullptr;
  for (unsigned i = 0; i < ifn->numAttributes(); ++i)
    if (ifn->attribute(i).name() == "then_branch") branch = &ifn->attribute(i);
  ASSERT_NE(branch, nullptr);
  std::unique_ptr<Graph> taken = branch->takeGraph(0);
  EXPECT_TRUE(g.isKnownAcyclic()); // taking away adds nothing
  h->setAttr(graphAttr("then_branch", std::move(taken)));
  EXPECT_FALSE(g.isKnownAcyclic());
  d = diags();
  EXPECT_TRUE(hasDiag(d, K::Cycle)) << describe(d);
}

// A graph with an error gets no verdict, even when the error was counted
// past the end of a full list of diagnostics: its gathered dependencies
// need not be its own.
TEST_F(VerifierTest, ABrokenGraphGetsNoVerdict) {
  unsortedDiamond(g, x, y);
  Node *late = g.createNode("Tan", {x}, 1);
  late->setOperand(0, e); // a value of the else branch: not visible here
  VerifyOptions o;
  o.maxDiagnostics = 1; // filled by the first order violation
  auto d = diags(o);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, K::OrderViolation);
  EXPECT_FALSE(g.isKnownAcyclic());
  late->setOperand(0, x);
  d = diags();
  EXPECT_FALSE(hasDiag(d, K::NotVisible)) << describe(d);
  EXPECT_TRUE(g.isKnownAcyclic());
}

//===--- BadOutput --------------------------------------------------------===//

TEST_F(VerifierTest, BadOutputEmptySlot) {
  g.addOutput(nullptr);
  elseG->setOutput(0, nullptr);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::BadOutput, "graph \"main\": output #2 is empty")) << describe(d);
  EXPECT_TRUE(hasDiag(d, K::BadOutput, "attribute \"else_branch\": output #0 is empty"))
      << describe(d);
  g.removeOutput(2);
  elseG->setOutput(0, e);
  EXPECT_IR_OK(m);
}

// An output slot set to a value of a sibling subgraph: reported (as
// BadOutput), with the output's position.
TEST_F(VerifierTest, OutputOfASiblingSubgraphValueIsReported) {
  elseG->setOutput(0, t);
  auto d = diags();
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d[0].message.find("attribute \"else_branch\": output #0 \"t\" is defined in"),
            std::string::npos)
      << describe(d);
  elseG->setOutput(0, e);
  EXPECT_IR_OK(m);
}

// Verifier.h documents BadOutput as "a graph output is empty or its value
// is not in scope": an output that is not visible is a BadOutput, not a
// NotVisible.
TEST_F(VerifierTest, OutputNotVisibleIsBadOutput) {
  elseG->setOutput(0, t);
  auto d = diags();
  EXPECT_TRUE(hasDiag(d, K::BadOutput, "output #0")) << describe(d);
  EXPECT_FALSE(hasDiag(d, K::NotVisible)) << describe(d);
  elseG->setOutput(0, e);
}

//===--- Reporting --------------------------------------------------------===//

TEST_F(VerifierTest, StatusListsEveryProblemWithItsKind) {
  g.addOutput(nullptr);
  relu->setOperand(0, t);
  absl::Status s = verify(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::string msg(s.message());
  EXPECT_NE(msg.find("[not visible]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[bad output]"), std::string::npos) << msg;
  EXPECT_NE(msg.find('\n'), std::string::npos) << msg;
  VerifyOptions one;
  one.maxDiagnostics = 1;
  EXPECT_EQ(verifyAll(m, one).size(), 1u);
  g.removeOutput(2);
  relu->setOperand(0, x);
  EXPECT_IR_OK(m);
}

TEST_F(VerifierTest, PathsThroughGraphsAttributesAndFunctions) {
  EXPECT_EQ(nodePath(add), "graph \"main\" > node #1 \"n1\" (Add)");
  EXPECT_EQ(nodePath(t->definingNode()),
            "graph \"main\" > node #2 \"cond\" (If) > attribute \"then_branch\" > node #0 (Neg)");
  EXPECT_EQ(nodePath(thenG->returnNode()),
            "graph \"main\" > node #2 \"cond\" (If) > attribute \"then_branch\" > outputs");
  // A GRAPHS attribute names the index.
  Node *sw = g.createNode("Switch", {x}, 1);
  auto a = std::make_unique<Attribute>("branches");
  a->setKind(AttrKind::Graphs);
  a->addGraph(std::make_unique<Graph>(ctx));
  Graph *second = a->addGraph(std::make_unique<Graph>(ctx));
  sw->addAttr(std::move(a));
  Node *inner = second->createNode("Neg", {x}, 1);
  EXPECT_EQ(nodePath(inner),
            "graph \"main\" > node #3 (Switch) > attribute \"branches\"[1] > node #0 (Neg)");
  // Function bodies.
  Function &f = m.addFunction();
  f.domain = "my.dom";
  f.name = "F";
  Value *fin = *f.body().addInput("fx");
  Node *fn = f.body().createNode("Relu", {fin}, 1);
  f.body().addOutput(fn->result(0));
  EXPECT_EQ(nodePath(fn), "function \"my.dom.F\" > node #0 (Relu)");
  EXPECT_IR_OK(m);
  // A function body problem is reported by verify(Model).
  f.body().addOutput(nullptr);
  EXPECT_TRUE(hasDiag(diags(), K::BadOutput, "function \"my.dom.F\": output #1 is empty"))
      << describe(diags());
}

} // namespace
