//===- MoveTest.cpp - Node positions: moves, refused moves, isBefore ------===//
#include "TestUtil.h"

#include "llvm/Support/Compiler.h"

using namespace onnxir;
using namespace onnxir::testutil;

namespace {

struct MoveTest : ::testing::Test {
  Model m;
  Graph &g = m.graph();
  Value *x = nullptr, *y = nullptr;
  void SetUp() override {
    g.name = "main";
    x = unwrap(g.addInput("x", floatTy(m.getContext(), {2})));
    y = unwrap(g.addInput("y", floatTy(m.getContext(), {2})));
  }
  std::vector<Node *> order(Graph &gr) {
    std::vector<Node *> out;
    for (Node &n : gr.nodes()) out.push_back(&n);
    return out;
  }
};

TEST_F(MoveTest, WithinOneGraph) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {y}, 1);
  Node *c = g.createNode("Abs", {x}, 1);
  ASSERT_TRUE(c->moveBefore(a).ok());
  EXPECT_EQ(order(g), (std::vector<Node *>{c, a, b}));
  EXPECT_TRUE(c->isBefore(a));
  ASSERT_TRUE(c->moveAfter(b).ok());
  EXPECT_EQ(order(g), (std::vector<Node *>{a, b, c}));
  EXPECT_TRUE(b->isBefore(c));
  ASSERT_TRUE(a->moveToEnd(&g).ok());
  EXPECT_EQ(order(g), (std::vector<Node *>{b, c, a}));
  // No-op moves.
  ASSERT_TRUE(a->moveBefore(a).ok());
  ASSERT_TRUE(b->moveAfter(a).ok()); // b to the end
  EXPECT_EQ(order(g), (std::vector<Node *>{c, a, b}));
  ASSERT_TRUE(b->moveAfter(a).ok()); // already right after a
  EXPECT_EQ(order(g), (std::vector<Node *>{c, a, b}));
  EXPECT_TRUE(c->isBefore(a) && a->isBefore(b) && c->isBefore(b));
  EXPECT_FALSE(b->isBefore(c));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // Names stay registered in the same graph.
  EXPECT_EQ(g.lookupLocal("relu"), a->result(0));
}

TEST_F(MoveTest, IntoAndOutOfSubgraphs) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  Node *t = thenG->createNode("Neg", {x}, 1);
  thenG->addOutput(t->result(0));
  elseG->addOutput(x);
  g.addOutput(ifn->result(0));
  ASSERT_TRUE(verify(m).ok()) << verify(m);

  // a (unused) moves into then_branch, before t.
  ASSERT_TRUE(a->moveBefore(t).ok());
  EXPECT_EQ(a->getGraph(), thenG);
  EXPECT_EQ(g.lookupLocal("relu"), nullptr);
  EXPECT_EQ(thenG->lookupLocal("relu"), a->result(0));
  EXPECT_EQ(a->result(0)->getGraph(), thenG);
  EXPECT_EQ(order(*thenG), (std::vector<Node *>{a, t}));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);

  // Used inside then_branch, then moved to the sibling graph: refused (the
  // user would lose sight of it).
  t->setOperand(0, a->result(0));
  absl::Status s = a->moveToEnd(elseG);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("out of scope of its user"), std::string::npos) << s;
  EXPECT_EQ(a->getGraph(), thenG);
  EXPECT_EQ(thenG->lookupLocal("relu"), a->result(0));
  EXPECT_TRUE(checkUseLists(m));

  // Hoisting out to the main graph before the If keeps it visible.
  ASSERT_TRUE(a->moveBefore(ifn).ok());
  EXPECT_EQ(a->getGraph(), &g);
  EXPECT_EQ(g.lookupLocal("relu"), a->result(0));
  EXPECT_EQ(thenG->lookup("relu"), a->result(0));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);

  // moveAfter into the else branch's (empty) node list via moveToEnd, after
  // dropping the use.
  t->setOperand(0, x);
  ASSERT_TRUE(a->moveToEnd(elseG).ok());
  EXPECT_EQ(a->getGraph(), elseG);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(MoveTest, BetweenTopLevelGraphs) {
  // A node without operands may move from the main graph to a function body.
  Function &f = m.addFunction();
  f.name = "F";
  f.domain = "custom";
  Graph &body = f.body();
  Value *fx = unwrap(body.addInput("fx"));
  Node *k = g.createNode("Constant", {}, 1);
  ASSERT_TRUE(k->moveToEnd(&body).ok());
  EXPECT_EQ(k->getGraph(), &body);
  EXPECT_EQ(body.lookupLocal("constant"), k->result(0));
  EXPECT_EQ(g.lookupLocal("constant"), nullptr);
  // One with an operand from the main graph may not.
  Node *r = g.createNode("Relu", {x}, 1);
  EXPECT_FALSE(r->moveToEnd(&body).ok());
  EXPECT_EQ(r->getGraph(), &g);
  // And back: k's user in the body keeps it there.
  body.createNode("Add", {fx, k->result(0)}, 1);
  EXPECT_FALSE(k->moveToEnd(&g).ok());
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(MoveTest, RefusedIntoOwnSubgraph) {
  Node *loop = g.createNode("Loop", {nullptr, nullptr}, 1);
  Graph *body = addSubgraph(loop, "body");
  Node *inner = body->createNode("Relu", {x}, 1);
  Node *deeper = body->createNode("If", {x}, 0);
  Graph *deep = addSubgraph(deeper, "then_branch");
  absl::Status s = loop->moveBefore(inner);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("own subgraph"), std::string::npos) << s;
  EXPECT_FALSE(loop->moveToEnd(body).ok());
  EXPECT_FALSE(loop->moveToEnd(deep).ok()); // two levels down
  EXPECT_FALSE(loop->moveAfter(inner).ok());
  EXPECT_EQ(loop->getGraph(), &g);
  EXPECT_EQ(body->parentNode(), loop);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(MoveTest, RefusedWhenAnOperandWouldGoOutOfScope) {
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  Node *t = thenG->createNode("Neg", {x}, 1);
  Node *user = thenG->createNode("Relu", {t->result(0)}, 1);
  // user needs t's result, defined in then_branch: not into main, not into
  // the sibling.
  absl::Status s = user->moveToEnd(&g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("operand \"neg\" out of scope"), std::string::npos) << s;
  EXPECT_FALSE(user->moveToEnd(elseG).ok());
  EXPECT_EQ(user->getGraph(), thenG);
  // Captures of nested graphs count as operands too.
  Node *holder = thenG->createNode("If", {x}, 0);
  Graph *inner = addSubgraph(holder, "then_branch");
  inner->createNode("Abs", {t->result(0)}, 1);
  EXPECT_FALSE(holder->moveBefore(ifn).ok());
  EXPECT_EQ(holder->getGraph(), thenG);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(MoveTest, RefusedOnResultNameClash) {
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  Node *a = unwrap(thenG->createNodeWithNames("Relu", {x}, {"same"}));
  Node *b = unwrap(elseG->createNodeWithNames("Neg", {x}, {"same"}));
  (void)b;
  absl::Status s = a->moveToEnd(elseG);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(std::string(s.message()).find("\"same\""), std::string::npos) << s;
  // Nothing changed: still registered in then_branch.
  EXPECT_EQ(a->getGraph(), thenG);
  EXPECT_EQ(thenG->lookupLocal("same"), a->result(0));
  EXPECT_EQ(m.getContext().nameDefinitions("same"), 2u);
  // Hoisting to main is refused too (the name is defined in a nested graph).
  EXPECT_FALSE(a->moveBefore(ifn).ok());
  EXPECT_EQ(thenG->lookupLocal("same"), a->result(0));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// The header promises that a move is refused when a user of a result would
// then come first. Same graph: moving a producer after its consumer.
TEST_F(MoveTest, RefusedWhenAUserWouldComeFirst) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {a->result(0)}, 1);
  g.addOutput(b->result(0));
  EXPECT_FALSE(a->moveToEnd(&g).ok());
  EXPECT_TRUE(a->isBefore(b));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// Same as above, across graphs: hoisting a producer from a subgraph to after
// the node that holds its nested user would leave a capture before its
// definition.
TEST_F(MoveTest, RefusedWhenANestedUserWouldComeFirst) {
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Node *p = thenG->createNode("Relu", {x}, 1);
  thenG->addOutput(p->result(0));
  g.createNode("Abs", {x}, 1); // a node after the If
  EXPECT_FALSE(p->moveToEnd(&g).ok());
  EXPECT_EQ(p->getGraph(), thenG);
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// A node that holds a subgraph moves with it; the definitions inside the
// subgraph must not shadow names visible at the target (Note [Scopes]).
TEST_F(MoveTest, RefusedWhenNestedDefinitionWouldShadow) {
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  ASSERT_TRUE(elseG->createNodeWithNames("Relu", {x}, {"z"}).ok());
  Node *holder = thenG->createNode("If", {x}, 0);
  Graph *inner = addSubgraph(holder, "then_branch");
  ASSERT_TRUE(inner->createNodeWithNames("Neg", {x}, {"z"}).ok()); // sibling-legal
  absl::Status s = holder->moveToEnd(elseG);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// The mirror image: a node may not move before the definition of a value it
// uses, nor may a node whose subgraph captures a value move before it.
TEST_F(MoveTest, RefusedWhenAnOperandWouldBeDefinedLater) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {a->result(0)}, 1);
  absl::Status s = b->moveBefore(a);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("before the definition of operand \"relu\""),
            std::string::npos)
      << s;
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  thenG->addOutput(thenG->createNode("Abs", {b->result(0)}, 1)->result(0));
  EXPECT_FALSE(ifn->moveBefore(b).ok());
  EXPECT_FALSE(ifn->moveBefore(a).ok());
  // The If captures c, defined after it (built with setOperand): it may
  // not move before c, but c may move before it, which repairs the order.
  Node *c = g.createNode("Sin", {x}, 1);
  thenG->nodes().front().setOperand(0, c->result(0));
  EXPECT_FALSE(verify(m).ok());
  EXPECT_FALSE(ifn->moveBefore(c).ok());
  ASSERT_TRUE(c->moveBefore(ifn).ok());
  EXPECT_EQ(order(g), (std::vector<Node *>{a, b, c, ifn}));
  EXPECT_FALSE(c->moveToEnd(&g).ok()); // its capturing user would come first
  ASSERT_TRUE(ifn->moveToEnd(&g).ok()); // already last
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// Moves that repair an unsorted graph are accepted: the checks look at the
// position after the move, not at the order around it.
TEST_F(MoveTest, MovesThatRepairOrderAreAccepted) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {x}, 1);
  Node *c = g.createNode("Abs", {x}, 1);
  a->setOperand(0, c->result(0)); // a uses c, which comes later
  g.addOutput(a->result(0));
  EXPECT_FALSE(verify(m).ok());
  EXPECT_FALSE(a->moveBefore(c).ok()); // still before c
  ASSERT_TRUE(a->moveAfter(c).ok());
  EXPECT_EQ(order(g), (std::vector<Node *>{b, c, a}));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// value_info records of a moved result follow it to the target graph, so
// the old graph has no record of a value it no longer defines.
TEST_F(MoveTest, ValueInfoRecordsFollowACrossGraphMove) {
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Node *p = thenG->createNode("Relu", {x}, 1);
  thenG->addOutput(p->result(0));
  g.addOutput(ifn->result(0));
  ValueInfoRecord &first = thenG->addValueInfo(p->result(0));
  first.docString = "first";
  thenG->addValueInfo("by_name", nullptr);
  ValueInfoRecord &second = thenG->addValueInfo(p->result(0));
  second.docString = "second";
  g.addValueInfo(x);
  ASSERT_TRUE(p->moveBefore(ifn).ok());
  ASSERT_EQ(thenG->valueInfo().size(), 1u);
  EXPECT_EQ(thenG->valueInfo().front().name, "by_name");
  ASSERT_EQ(g.valueInfo().size(), 3u);
  auto it = g.valueInfo().begin();
  EXPECT_EQ(it->value, x);
  EXPECT_EQ(&*++it, &first); // the same records, moved in order to the end
  EXPECT_EQ(&*++it, &second);
  EXPECT_EQ(p->result(0)->valueInfo(), &first);
  EXPECT_EQ(p->result(0)->numValueInfoRecords(), 2u);
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // They keep following it: erasing the value marks both, in the new graph.
  thenG->setOutput(0, x);
  ASSERT_TRUE(p->erase().ok());
  EXPECT_TRUE(first.erased && second.erased);
  g.removeValueInfoIf([](ValueInfoRecord &) { return false; });
  EXPECT_EQ(g.valueInfo().size(), 1u);
  // A move within one graph leaves the list alone.
  Node *q = g.createNode("Neg", {x}, 1);
  g.addValueInfo(q->result(0));
  ASSERT_TRUE(q->moveBefore(ifn).ok());
  EXPECT_EQ(g.valueInfo().size(), 2u);
  EXPECT_TRUE(checkUseLists(m));
}

// Note [Pooled value_info records]: a graph's records come from its
// context's object storage and go back to it (not to malloc), so the record
// removeValueInfoIf drops is the next object of its size the context hands
// out (its free lists are last in, first out). Under AddressSanitizer freed
// objects are never reused.
TEST_F(MoveTest, ValueInfoRecordsLiveInTheContextStorage) {
#if LLVM_ADDRESS_SANITIZER_BUILD
  GTEST_SKIP() << "freed IR objects are never reused under AddressSanitizer";
#endif
  Node *n = g.createNode("Relu", {x}, 1);
  g.addOutput(n->result(0));
  ValueInfoRecord &r = g.addValueInfo(n->result(0));
  // A list node holds its two links, then the record.
  const size_t nodeSize = 2 * sizeof(void *) + sizeof(ValueInfoRecord);
  void *node = reinterpret_cast<char *>(&r) - 2 * sizeof(void *);
  g.removeValueInfoIf([](ValueInfoRecord &) { return true; });
  EXPECT_TRUE(g.valueInfo().empty());
  EXPECT_EQ(n->result(0)->valueInfo(), nullptr);
  Context &ctx = g.getContext();
  void *p = ctx.allocateObject(nodeSize);
  EXPECT_EQ(p, node);
  ctx.deallocateObject(p, nodeSize);
  // The storage serves the next record as well.
  EXPECT_EQ(reinterpret_cast<char *>(&g.addValueInfo(n->result(0))) - 2 * sizeof(void *),
            static_cast<char *>(node));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// A nested definition whose name is defined in a sibling scope only is not
// shadowing: such moves are accepted.
TEST_F(MoveTest, NestedDefinitionsMayReuseSiblingNames) {
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Graph *elseG = addSubgraph(ifn, "else_branch");
  ASSERT_TRUE(elseG->createNodeWithNames("Relu", {x}, {"z"}).ok());
  Node *holder = thenG->createNode("If", {x}, 0);
  Graph *inner = addSubgraph(holder, "then_branch");
  ASSERT_TRUE(inner->createNodeWithNames("Neg", {x}, {"z"}).ok());
  ASSERT_TRUE(holder->moveBefore(ifn).ok()); // to main: "z" is not visible there
  EXPECT_EQ(holder->getGraph(), &g);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// Graph::reorderNodes is the unchecked path for whole-graph reorderings.
TEST_F(MoveTest, ReorderNodesIsUnchecked) {
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {a->result(0)}, 1);
  Node *c = g.createNode("Abs", {b->result(0)}, 1);
  g.addOutput(c->result(0));
  g.reorderNodes({c, b, a});
  EXPECT_EQ(order(g), (std::vector<Node *>{c, b, a}));
  EXPECT_TRUE(c->isBefore(b) && b->isBefore(a) && !a->isBefore(c));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_FALSE(verify(m).ok()); // order violations, which -topo repairs
  g.reorderNodes({a, b, c});
  EXPECT_TRUE(a->isBefore(b) && b->isBefore(c));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

// Note [Reordering from the array]: with positions numbered, the list is
// rebuilt from the array (positions and order keys set on the way); without,
// each node is unlinked and appended. Both give the same list, positions and
// order, and later inserts still find room between the keys. Appends keep
// the positions numbered (Graph::insertNode): a list made by appends only
// takes the array path with no walk to number it first; an insert or an
// erase leaves it unnumbered.
TEST_F(MoveTest, ReorderNodesRebuildsTheListWithPositions) {
  for (bool numbered : {true, false}) {
    Model mm;
    Graph &gg = mm.graph();
    Value *in = *gg.addInput("in");
    std::vector<Node *> nodes;
    Value *prev = in;
    for (int i = 0; i < 40; ++i) {
      nodes.push_back(gg.createNode("Relu", {prev}, 1));
      prev = nodes.back()->result(0);
    }
    gg.addOutput(prev);
    if (!numbered) {
      ASSERT_TRUE(gg.createNode("Neg", {in}, 1, nodes[5])->erase().ok());
    }
    // A rotation by 7, then back.
    std::vector<Node *> rotated(nodes.begin() + 7, nodes.end());
    rotated.insert(rotated.end(), nodes.begin(), nodes.begin() + 7);
    gg.reorderNodes(rotated);
    EXPECT_EQ(order(gg), rotated) << "numbered " << numbered;
    for (unsigned k = 0; k < rotated.size(); ++k) EXPECT_EQ(rotated[k]->indexInGraph(), k);
    for (unsigned k = 0; k + 1 < rotated.size(); ++k)
      EXPECT_TRUE(rotated[k]->isBefore(rotated[k + 1]) && !rotated[k + 1]->isBefore(rotated[k]));
    EXPECT_TRUE(checkUseLists(mm));
    // Note [Node array]: held after the array path only.
    if (numbered) {
      EXPECT_EQ(gg.nodeArray().vec(), rotated);
    } else {
      EXPECT_TRUE(gg.nodeArray().empty());
    }
    EXPECT_FALSE(verify(mm).ok()); // node 0 now comes after its users
    gg.reorderNodes(nodes);
    EXPECT_EQ(order(gg), nodes);
    EXPECT_EQ(gg.nodeArray().vec(), nodes); // numbered by now either way
    EXPECT_EQ(nodes[0]->indexInGraph(), 0u);
    Node *mid = gg.createNode("Neg", {nodes[3]->result(0)}, 1, nodes[4]);
    EXPECT_TRUE(gg.nodeArray().empty()); // the list changed
    EXPECT_TRUE(nodes[3]->isBefore(mid) && mid->isBefore(nodes[4]));
    EXPECT_EQ(mid->indexInGraph(), 4u);
    EXPECT_EQ(nodes[4]->indexInGraph(), 5u);
    EXPECT_TRUE(verify(mm).ok()) << verify(mm);
  }
}

// Graph::numNodes is a count the graph keeps (O(1)); it follows every way
// the list changes, and the verifier reports a count that does not.
TEST_F(MoveTest, NodeCountFollowsTheList) {
  auto listed = [](Graph &gr) {
    return (size_t)std::distance(gr.nodes().begin(), gr.nodes().end());
  };
  Node *a = g.createNode("Relu", {x}, 1);
  Node *b = g.createNode("Neg", {a->result(0)}, 1);
  Node *c = g.createNode("Abs", {x}, 1, a); // inserted before a
  EXPECT_EQ(g.numNodes(), 3u);
  Node *ifn = g.createNode("If", {x}, 0);
  Graph *sub = addSubgraph(ifn, "then_branch");
  EXPECT_EQ(sub->numNodes(), 0u);
  ASSERT_TRUE(c->moveToEnd(sub).ok());
  EXPECT_EQ(g.numNodes(), 3u);
  EXPECT_EQ(sub->numNodes(), 1u);
  (void)a->indexInGraph();
  g.reorderNodes({ifn, a, b});
  EXPECT_EQ(g.numNodes(), 3u);
  EXPECT_EQ(g.nodeArray().size(), 3u);
  EXPECT_FALSE(b->moveBefore(a).ok()); // b uses a: refused, the list unchanged
  EXPECT_EQ(g.nodeArray().size(), 3u);
  ASSERT_TRUE(ifn->moveAfter(b).ok());
  EXPECT_TRUE(g.nodeArray().empty()); // the list changed
  EXPECT_EQ(order(g), (std::vector<Node *>{a, b, ifn}));
  g.addOutput(b->result(0));
  Node *dead = g.createNode("Relu", {x}, 1);
  ASSERT_TRUE(dead->erase().ok());
  EXPECT_EQ(g.numNodes(), listed(g));
  EXPECT_EQ(sub->numNodes(), listed(*sub));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // A node taken off the list behind the API's back: the count disagrees.
  g.nodes().remove(*a);
  absl::Status st = verify(m);
  EXPECT_NE(std::string(st.message())
                .find("count of its nodes (3) is not the length of its node list (2)"),
            std::string::npos)
      << st;
  g.nodes().push_front(*a); // back in place, for the model's destruction
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // The same with an order violation, so that the cycle search runs: b's
  // definition a is off the list, its position past the list's end.
  (void)a->indexInGraph();
  g.reorderNodes({b, ifn, a}); // positions 0, 1, 2
  g.nodes().remove(*a);        // a keeps position 2 of a list of 2
  st = verify(m);
  EXPECT_NE(std::string(st.message()).find("count of its nodes"), std::string::npos) << st;
  g.nodes().push_back(*a);
}

TEST_F(MoveTest, IsBeforeAfterManyInserts) {
  Node *first = g.createNode("Relu", {x}, 1);
  Node *last = g.createNode("Relu", {x}, 1);
  // Repeatedly insert right after `first` (between two adjacent nodes), which
  // halves the gap each time and forces renumbering.
  std::vector<Node *> inserted;
  for (int i = 0; i < 100; ++i) {
    auto it = std::next(first->getIterator());
    inserted.push_back(g.createNode("Neg", {x}, 1, &*it));
    EXPECT_TRUE(first->isBefore(inserted.back()));
    EXPECT_TRUE(inserted.back()->isBefore(last));
  }
  // Each new one went right after `first`, so they are in reverse order.
  for (size_t i = 1; i < inserted.size(); ++i) {
    EXPECT_TRUE(inserted[i]->isBefore(inserted[i - 1])) << i;
    EXPECT_FALSE(inserted[i - 1]->isBefore(inserted[i])) << i;
  }
  // Repeatedly insert before the current front.
  for (int i = 0; i < 50; ++i) g.createNode("Abs", {x}, 1, &g.nodes().front());
  // And between two adjacent nodes in the middle, alternating sides.
  // Each new node goes right before `hi`, then becomes the new `hi` every
  // other time, so insertions keep landing between adjacent nodes.
  Node *hi = inserted[49];
  for (int i = 0; i < 60; ++i) {
    Node *n = g.createNode("Sqrt", {x}, 1, hi);
    if (i % 2 == 0) hi = n;
  }
  // Full cross-check against list positions.
  std::vector<Node *> all = order(g);
  ASSERT_EQ(all.size(), 212u);
  for (size_t i = 0; i < all.size(); i += 7)
    for (size_t j = 0; j < all.size(); j += 5) {
      if (i == j) continue;
      EXPECT_EQ(all[i]->isBefore(all[j]), i < j) << i << " " << j;
    }
  for (size_t i = 0; i + 1 < all.size(); ++i) EXPECT_TRUE(all[i]->isBefore(all[i + 1])) << i;
  // Moves keep it right.
  ASSERT_TRUE(all[0]->moveAfter(all[100]).ok());
  EXPECT_TRUE(all[100]->isBefore(all[0]));
  EXPECT_TRUE(all[0]->isBefore(all[101]));
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(MoveTest, AncestorIn) {
  Node *loop = g.createNode("Loop", {nullptr, nullptr}, 0);
  Graph *body = addSubgraph(loop, "body");
  Node *ifn = body->createNode("If", {x}, 0);
  Graph *thenG = addSubgraph(ifn, "then_branch");
  Node *leaf = thenG->createNode("Relu", {x}, 1);
  EXPECT_EQ(leaf->ancestorIn(&g), loop);
  EXPECT_EQ(leaf->ancestorIn(body), ifn);
  EXPECT_EQ(leaf->ancestorIn(thenG), leaf);
  Node *other = g.createNode("Abs", {x}, 1);
  EXPECT_EQ(other->ancestorIn(body), nullptr);
  EXPECT_EQ(thenG->depth(), 2u);
  EXPECT_EQ(loop->indexInGraph(), 0u);
  EXPECT_EQ(other->indexInGraph(), 1u);
}

} // namespace
