//===- MutationTest.cpp - Use lists stay consistent under every mutator ---===//
#include "TestUtil.h"

#include "llvm/ADT/STLExtras.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

struct MutationTest : ::testing::Test, BasicModel {};

// Note [Line-aligned objects]: every node and value starts on a cache line,
// whatever was carved between them (names, operand arrays, attributes) and
// when its memory is reused after an erase.
TEST_F(MutationTest, NodesAndValuesStartOnACacheLine) {
  auto aligned = [](const void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; };
  std::vector<Node *> made;
  Value *prev = x;
  for (int i = 0; i < 50; ++i) {
    Node *n = g.createNode(i % 2 ? "Add" : "Relu", i % 2 ? std::vector<Value *>{prev, x}
                                                         : std::vector<Value *>{prev}, 1);
    n->setName(std::string(size_t(i % 7 + 1), 'n')); // odd-sized names in between
    EXPECT_TRUE(aligned(n)) << i;
    EXPECT_TRUE(aligned(n->result(0))) << i;
    made.push_back(n);
    prev = n->result(0);
  }
  for (int i = 49; i >= 40; --i) ASSERT_TRUE(made[(size_t)i]->erase().ok());
  for (int i = 0; i < 10; ++i) { // reuses the freed memory (outside sanitizer builds)
    Node *n = g.createNode("Relu", {x}, 2);
    EXPECT_TRUE(aligned(n)) << i;
    EXPECT_TRUE(aligned(n->result(0)) && aligned(n->result(1))) << i;
  }
  Value *in = *g.addInput("aligned_input");
  EXPECT_TRUE(aligned(in));
  EXPECT_IR_OK(m);
}

TEST_F(MutationTest, AddAndEraseResults) {
  Node *n = g.createNode("Split", {x}, 1);
  auto r1 = n->addResult("second");
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ((*r1)->resultIndex(), 1u);
  EXPECT_EQ(g.lookupLocal("second"), *r1);
  n->addEmptyResult();
  EXPECT_EQ(n->numResults(), 3u);
  EXPECT_EQ(n->result(2), nullptr);
  auto clash = n->addResult("x");
  EXPECT_FALSE(clash.ok());
  EXPECT_EQ(n->numResults(), 3u);
  EXPECT_IR_OK(m);
  // A used result cannot be erased; an unused one leaves an empty slot.
  Node *user = g.createNode("Relu", {*r1}, 1);
  EXPECT_FALSE(n->eraseResult(1).ok());
  EXPECT_EQ(n->result(1), *r1);
  ASSERT_TRUE(user->erase().ok());
  ASSERT_TRUE(n->eraseResult(1).ok());
  EXPECT_EQ(n->result(1), nullptr);
  EXPECT_EQ(g.lookupLocal("second"), nullptr);
  EXPECT_EQ(m.getContext().nameDefinitions("second"), 0u);
  EXPECT_IR_OK(m);
  n->trimTrailingEmptyResults();
  EXPECT_EQ(n->numResults(), 1u);
  EXPECT_IR_OK(m);
}

// x (main) used in an If branch nested inside a Loop body.
struct NestedModel : BasicModel {
  Node *loop, *ifn;
  Graph *body, *thenG, *elseG;
  Node *deep;   // then-branch user of x
  Node *middle; // body user of x
  Node *top;    // main user of x
  NestedModel() {
    top = g.createNode("Relu", {x}, 1);
    loop = g.createNode("Loop", {nullptr, nullptr}, 1);
    body = addSubgraph(loop, "body", "body");
    Value *iter = *body->addInput("iter");
    Value *cond = *body->addInput("cond");
    (void)iter;
    middle = body->createNode("Neg", {x}, 1);
    ifn = body->createNode("If", {cond}, 1);
    thenG = addSubgraph(ifn, "then_branch", "then");
    elseG = addSubgraph(ifn, "else_branch", "else");
    deep = thenG->createNode("Abs", {x}, 1);
    thenG->addOutput(deep->result(0));
    elseG->addOutput(x);
    body->addOutput(cond);
    body->addOutput(ifn->result(0));
    g.addOutput(loop->result(0));
    g.addOutput(top->result(0));
  }
};

struct NestedTest : ::testing::Test, NestedModel {};

TEST_F(NestedTest, EraseNodeWithCapturingSubgraphsUnlinksCaptures) {
  g.removeOutput(0);
  ASSERT_TRUE(loop->erase().ok());
  EXPECT_EQ(x->numUses(), 1u);
  EXPECT_EQ(m.getContext().nameDefinitions("iter"), 0u);
  EXPECT_IR_OK(m);
}

// Attributes made in the context's storage (newAttr, as the lift makes
// them) and on the heap (addAttr, setAttr) share one array: order, lookup,
// replacement, removal, growth past the reserved room and the subgraph
// counts hold for both, and erasing the node frees both kinds (ASan and
// LeakSanitizer check the frees in the sanitizer build).
TEST_F(MutationTest, AttributesInContextAndOnHeapMix) {
  Node *n = g.createNode("Loop", {x}, 1);
  n->reserveAttributes(2);
  n->newAttr("a").setInt(1);
  n->addAttr(intAttr("b", 2));
  Attribute &withGraph = n->newAttr("body");
  Graph *body = withGraph.addGraph(std::make_unique<Graph>(ctx));
  withGraph.setKind(AttrKind::Graph);
  Node *inner = body->createNode("Neg", {y}, 1); // captures y
  body->addOutput(inner->result(0));
  EXPECT_TRUE(n->hasSubgraphs());
  EXPECT_EQ(g.numNodesWithSubgraphs(), 1u);
  EXPECT_EQ(y->numUses(), 1u);
  for (int k = 0; k < 6; ++k) // past the reserved room, twice
    n->newAttr("n" + std::to_string(k)).setInts({k, k});
  ASSERT_EQ(n->numAttributes(), 9u);
  std::vector<std::string> names;
  for (unsigned i = 0; i < n->numAttributes(); ++i) names.push_back(n->attribute(i).name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "body", "n0", "n1", "n2", "n3", "n4",
                                             "n5"}));
  EXPECT_EQ(n->getAttr("n4")->ints, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(&n->attribute(2).getNode()->attribute(2), &withGraph);
  EXPECT_IR_OK(m);

  n->setAttr(intAttr("a", 10)); // a context attribute replaced by a heap one
  EXPECT_EQ(n->getAttr("a")->i, 10);
  EXPECT_EQ(n->attribute(0).getNode(), n);
  EXPECT_TRUE(n->removeAttr("n2"));
  EXPECT_FALSE(n->removeAttr("n2"));
  EXPECT_EQ(n->numAttributes(), 8u);
  EXPECT_EQ(n->attribute(5).name(), "n3");
  EXPECT_TRUE(n->removeAttr("body")); // its subgraph and capture go with it
  EXPECT_FALSE(n->hasSubgraphs());
  EXPECT_EQ(g.numNodesWithSubgraphs(), 0u);
  EXPECT_EQ(y->numUses(), 0u);
  EXPECT_IR_OK(m);

  // A context attribute holding a capturing subgraph, freed by erase.
  Attribute &second = n->newAttr("body");
  second.setKind(AttrKind::Graph);
  Graph *again = second.addGraph(std::make_unique<Graph>(ctx));
  again->addOutput(again->createNode("Neg", {y}, 1)->result(0));
  EXPECT_EQ(y->numUses(), 1u);
  EXPECT_EQ(g.numNodesWithSubgraphs(), 1u);
  EXPECT_TRUE(n->setAttr(stringAttr("b", "heap")).s == "heap");
  EXPECT_IR_OK(m);
  ASSERT_TRUE(n->erase().ok());
  EXPECT_EQ(y->numUses(), 0u);
  EXPECT_EQ(g.numNodesWithSubgraphs(), 0u);
  EXPECT_IR_OK(m);
}

// indexInGraph is cached; every change of the node list renumbers.
TEST_F(MutationTest, IndexInGraphFollowsEveryListChange) {
  auto expectIndices = [&] {
    unsigned i = 0;
    for (Node &n : g.nodes()) EXPECT_EQ(n.indexInGraph(), i++) << n.opType().str();
    EXPECT_EQ(g.returnNode()->indexInGraph(), (unsigned)g.numNodes());
  };
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {x}, 1);
  expectIndices();
  Node *c = g.createNode("Abs", {x}, 1, a); // inserted in front
  EXPECT_EQ(c->indexInGraph(), 0u);
  expectIndices();
  ASSERT_TRUE(b->moveBefore(c).ok());
  EXPECT_EQ(b->indexInGraph(), 0u);
  expectIndices();
  ASSERT_TRUE(c->erase().ok());
  EXPECT_EQ(a->indexInGraph(), 1u);
  expectIndices();
  g.reorderNodes({a, b});
  EXPECT_EQ(a->indexInGraph(), 0u);
  expectIndices();
}

// definitions() lists what a graph defines; renaming an initializer's value
// renames its tensor too (TensorProto.name is the value's name).
TEST_F(MutationTest, DefinitionsAndInitializerRenames) {
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({1});
  t.floatData = {1.0f};
  t.setTyped(Tensor::TypedField::Float);
  auto w = g.addInitializer("w", t);
  ASSERT_TRUE(w.ok()) << w.status();
  Node *n = g.createNode("Relu", {*w}, 1);
  std::vector<Value *> defs = g.definitions();
  ASSERT_FALSE(defs.empty());
  EXPECT_EQ(defs.back(), n->result(0));
  EXPECT_NE(std::find(defs.begin(), defs.end(), *w), defs.end());
  ASSERT_TRUE((*w)->setName("weights").ok());
  EXPECT_EQ((*w)->initializer()->name(), "weights");
  (*w)->setNameOrFresh("weights2");
  EXPECT_EQ((*w)->initializer()->name(), (*w)->name().str());
}

TEST_F(MutationTest, AddRemoveInputsAndInitializers) {
  auto z = g.addInput("z", nullptr, 0);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(g.input(0), *z);
  EXPECT_EQ(g.input(1), x);
  EXPECT_FALSE(g.addInput("x").ok()); // clash
  EXPECT_EQ(g.numInputs(), 3u);
  auto c = g.addInitializer("c", makeFloatTensor({2}, {1, 2}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->kind(), Value::Kind::Initializer);
  EXPECT_EQ((*c)->initializer()->name(), "c");
  EXPECT_FALSE(g.addInitializer("c", makeFloatTensor({1}, {1})).ok());
  EXPECT_IR_OK(m);
  Node *n = g.createNode("Add", {*z, *c}, 1);
  EXPECT_FALSE(g.removeInput(0).ok()); // used
  // Initializers in use are kept by removeInitializersIf.
  EXPECT_EQ(g.removeInitializersIf([](Value *) { return true; }), 0u);
  ASSERT_TRUE(n->erase().ok());
  ASSERT_TRUE(g.removeInput(0).ok());
  EXPECT_EQ(g.lookup("z"), nullptr);
  EXPECT_EQ(m.getContext().nameDefinitions("z"), 0u);
  EXPECT_EQ(g.removeInitializersIf([](Value *v) { return v->name() == "c"; }), 1u);
  EXPECT_TRUE(g.initializers().empty());
  EXPECT_EQ(g.lookup("c"), nullptr);
  EXPECT_IR_OK(m);
  // Sparse initializers.
  SparseTensor st;
  st.dims = {4};
  auto s = g.addSparseInitializer("s", std::move(st));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->kind(), Value::Kind::SparseInitializer);
  EXPECT_NE((*s)->sparseInitializer(), nullptr);
  EXPECT_IR_OK(m);
  EXPECT_EQ(g.removeInitializersIf([](Value *) { return true; }), 1u);
  EXPECT_IR_OK(m);
}

TEST_F(MutationTest, InputWithDefaultIsNotAConstantInitializer) {
  auto c = g.addInitializer("k", makeFloatTensor({1}, {3}));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->isConstantInitializer());
  EXPECT_TRUE((*c)->hasInitializer());
  EXPECT_FALSE((*c)->isGraphInput());

  g.setInputDefault(x, makeFloatTensor({2}, {1, 2}));
  EXPECT_TRUE(x->hasInitializer());
  EXPECT_FALSE(x->isConstantInitializer());
  EXPECT_TRUE(x->isGraphInput());
  EXPECT_EQ(g.initializers().size(), 2u);
  // An input with a default cannot be removed until the default goes.
  EXPECT_FALSE(g.removeInput(0).ok());
  EXPECT_EQ(g.removeInitializersIf([](Value *) { return true; }), 1u); // only k
  EXPECT_EQ(g.initializers().size(), 1u);
  EXPECT_IR_OK(m);
  g.removeInputDefault(x);
  EXPECT_FALSE(x->hasInitializer());
  EXPECT_TRUE(g.initializers().empty());
  ASSERT_TRUE(g.removeInput(0).ok());
  EXPECT_IR_OK(m);
}

TEST_F(MutationTest, BuilderAndInsertionGuard) {
  Builder b(g);
  Node *a = b.create("Relu", {x});
  Node *c = b.create("Neg", {a->result(0)});
  EXPECT_EQ(&g.nodes().back(), c);
  b.setInsertionPointAfter(a);
  Value *mid = b.createValue("Abs", {a->result(0)});
  EXPECT_EQ(mid->definingNode()->getIterator(), std::next(a->getIterator()));
  {
    InsertionGuard guard(b);
    b.setInsertionPointToStart(g);
    Node *head = b.create("Const", {}, 1);
    EXPECT_EQ(&g.nodes().front(), head);
    Node *sub = b.create("If", {x}, 1);
    Graph *then = addSubgraph(sub, "then_branch");
    b.setInsertionPointToEnd(*then);
    Value *inner = b.createValue("Identity", {x});
    then->addOutput(inner);
    EXPECT_EQ(&b.getGraph(), then);
  }
  EXPECT_EQ(&b.getGraph(), &g);
  EXPECT_EQ(b.insertionPoint(), c);
  Node *d = b.create("Sqrt", {mid});
  EXPECT_EQ(std::next(d->getIterator())->opType(), "Neg");
  {
    InsertionGuard guard(b);
    b.setInsertionPointToEnd(g);
  }
  EXPECT_EQ(b.insertionPoint(), c);
  b.setInsertionPointToEnd(g);
  {
    InsertionGuard guard(b);
    b.setInsertionPoint(a);
  }
  EXPECT_EQ(b.insertionPoint(), nullptr);
  Value *k = b.createInitializer("k", makeFloatTensor({1}, {1}));
  EXPECT_TRUE(k->isConstantInitializer());
  Value *k2 = b.createInitializer("k", makeFloatTensor({1}, {1}));
  EXPECT_NE(k->name(), k2->name());
  // Attribute factories.
  a->setAttr(intAttr("i", 3));
  a->setAttr(floatAttr("f", 1.5f));
  a->setAttr(stringAttr("s", "hi"));
  a->setAttr(intsAttr("is", {1, 2}));
  a->setAttr(intAttr("i", 4)); // replaces
  EXPECT_EQ(a->numAttributes(), 4u);
  EXPECT_EQ(a->getAttr("i")->i, 4);
  EXPECT_EQ(a->getAttr("f")->f, 1.5f);
  EXPECT_EQ(a->getAttr("s")->s, "hi");
  EXPECT_EQ(a->getAttr("is")->ints, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a->getAttr("f")->kind(), AttrKind::Float);
  EXPECT_TRUE(a->removeAttr("f"));
  EXPECT_FALSE(a->removeAttr("f"));
  EXPECT_IR_OK(m);
}

// fn may erase the node it is given, also one holding subgraphs: those are
// then not visited (they are gone).
TEST_F(MutationTest, WalkMayEraseTheVisitedNode) {
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *then = addSubgraph(ifn, "then_branch");
  then->addOutput(then->createNode("Relu", {x}, 1)->result(0));
  g.createNode("Relu", {x}, 1);
  unsigned visited = 0;
  g.walk([&](Node *n) {
    ++visited;
    if (n->getGraph() == &g && !n->hasUses()) {
      ASSERT_TRUE(n->erase().ok());
    }
  });
  EXPECT_TRUE(g.empty());
  EXPECT_IR_OK(m);
}

} // namespace

namespace {

TEST_F(MutationTest, WalkVisitsNestedNodesPreOrder) {
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *then = addSubgraph(ifn, "then_branch");
  Graph *els = addSubgraph(ifn, "else_branch");
  Node *a = then->createNode("A", {x}, 1);
  Node *b = els->createNode("B", {x}, 1);
  Node *inner = b->getGraph()->createNode("Loop", {}, 1);
  Graph *body = addSubgraph(inner, "body");
  Node *c = body->createNode("C", {x}, 1);
  Node *last = g.createNode("Z", {}, 1);
  std::vector<Node *> seen;
  g.walk([&](Node *n) { seen.push_back(n); });
  EXPECT_EQ(seen, (std::vector<Node *>{ifn, a, b, inner, c, last}));
  std::vector<Graph *> graphs;
  g.walkGraphs([&](Graph *sg) { graphs.push_back(sg); });
  EXPECT_EQ(graphs, (std::vector<Graph *>{&g, then, els, body}));
  std::vector<Graph *> all;
  m.walkGraphs([&](Graph *sg) { all.push_back(sg); });
  EXPECT_EQ(all.size(), 4u);
  // Erasing a visited node without subgraphs is fine.
  g.walk([&](Node *n) {
    if (n == last) {
      ASSERT_TRUE(n->erase().ok());
    }
  });
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_IR_OK(m);
}


} // namespace

namespace {

TEST_F(MutationTest, ValueInfoRecordsFollowTheirValues) {
  Node *n = g.createNode("Relu", {x}, 1);
  Value *r = n->result(0);
  r->setType(ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2}));
  ValueInfoRecord &rec = g.addValueInfo(r);
  EXPECT_EQ(rec.value, r);
  EXPECT_EQ(rec.type, r->type());
  EXPECT_TRUE(rec.hasType);
  EXPECT_EQ(r->valueInfo(), &rec);
  ValueInfoRecord &byName = g.addValueInfo("elsewhere", nullptr);
  EXPECT_EQ(byName.value, nullptr);
  EXPECT_FALSE(byName.hasType);
  // Erasing the value marks its record; removeValueInfoIf then drops it.
  ASSERT_TRUE(n->erase().ok());
  EXPECT_TRUE(rec.erased);
  EXPECT_EQ(rec.value, nullptr);
  g.removeValueInfoIf([](ValueInfoRecord &) { return false; });
  ASSERT_EQ(g.valueInfo().size(), 1u);
  EXPECT_EQ(g.valueInfo().front().name, "elsewhere");
  // Dropping a live record clears the value's back pointer.
  Node *n2 = g.createNode("Neg", {x}, 1);
  g.addValueInfo(n2->result(0));
  g.removeValueInfoIf([&](ValueInfoRecord &v) { return v.value == n2->result(0); });
  EXPECT_EQ(n2->result(0)->valueInfo(), nullptr);
  EXPECT_EQ(g.valueInfo().size(), 1u);
  EXPECT_IR_OK(m);
}

// walk and walkGraphs keep no recursion: a deep chain of nested graphs is
// walked in pre-order, and erasing a nested visited node is fine too.
TEST_F(MutationTest, WalkIsIterativeOverDeepNesting) {
  const unsigned kDepth = 2000;
  Graph *cur = &g;
  std::vector<Node *> holders;
  for (unsigned i = 0; i < kDepth; ++i) {
    Node *n = cur->createNode("If", {x}, 0);
    holders.push_back(n);
    cur->createNode("Relu", {x}, 1); // a sibling after the holder
    cur = addSubgraph(n, "then_branch");
  }
  std::vector<Node *> seen;
  g.walk([&](Node *n) { seen.push_back(n); });
  ASSERT_EQ(seen.size(), 2 * kDepth);
  // Pre-order: every holder, then (deepest first) the siblings that follow.
  for (unsigned i = 0; i < kDepth; ++i) EXPECT_EQ(seen[i], holders[i]) << i;
  for (unsigned i = 0; i < kDepth; ++i)
    EXPECT_EQ(seen[kDepth + i]->getGraph(), holders[kDepth - 1 - i]->getGraph()) << i;
  unsigned graphs = 0;
  g.walkGraphs([&](Graph *) { ++graphs; });
  EXPECT_EQ(graphs, kDepth + 1);
  // Erase a holder from inside the walk: its subgraph (with two nodes) goes,
  // and is not visited.
  unsigned visited = 0;
  Node *victim = holders[kDepth - 2];
  Graph *victimGraph = victim->getGraph();
  g.walk([&](Node *n) {
    ++visited;
    if (n == victim) {
      ASSERT_TRUE(n->erase().ok());
    }
  });
  EXPECT_EQ(visited, 2 * kDepth - 2);
  EXPECT_EQ(victimGraph->numNodes(), 1u);
}

// removeValueInfoIf drops one of two records; the other still follows the
// value.
TEST_F(MutationTest, DroppingOneOfTwoValueInfoRecordsKeepsTheOther) {
  Node *n = g.createNode("Relu", {x}, 1);
  Value *r = n->result(0);
  ValueInfoRecord &a = g.addValueInfo(r);
  a.docString = "a";
  ValueInfoRecord &b = g.addValueInfo(r);
  b.docString = "b";
  EXPECT_EQ(r->numValueInfoRecords(), 2u);
  EXPECT_EQ(r->valueInfo(), &a);
  g.removeValueInfoIf([](ValueInfoRecord &v) { return v.docString == "a"; });
  EXPECT_EQ(r->numValueInfoRecords(), 1u);
  EXPECT_EQ(r->valueInfo(), &b);
  ASSERT_TRUE(n->erase().ok());
  EXPECT_TRUE(b.erased);
  EXPECT_EQ(b.value, nullptr);
  g.removeValueInfoIf([](ValueInfoRecord &) { return false; });
  EXPECT_TRUE(g.valueInfo().empty());
  EXPECT_IR_OK(m);
}

// Two records for one value (real files repeat value_info entries, and a
// lossless importer keeps both): erasing the value marks both, so none is
// left with a dangling `value`.
TEST_F(MutationTest, TwoValueInfoRecordsForOneValueSurviveErase) {
  Node *n = g.createNode("Relu", {x}, 1);
  g.addValueInfo(n->result(0));
  ValueInfoRecord &second = g.addValueInfo(n->result(0));
  ASSERT_TRUE(n->erase().ok());
  EXPECT_TRUE(second.erased);
  EXPECT_EQ(second.value, nullptr);
  g.removeValueInfoIf([](ValueInfoRecord &) { return false; });
  EXPECT_TRUE(g.valueInfo().empty());
}

} // namespace
