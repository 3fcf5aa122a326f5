//===- AttributePayloadTest.cpp - One copy and one move of a payload ------===//
//
// Attribute::copyPayloadFrom / movePayloadFrom / clone carry every payload
// field (Note [Attribute payloads are copied in one place]); graph cloning
// goes through them, and value_info fields are copied as one.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

/// An attribute with every payload field set (whatever its kind says).
std::unique_ptr<Attribute> fullAttribute(Context &ctx) {
  auto a = std::make_unique<Attribute>("full");
  a->setKind(AttrKind::Floats);
  a->hasKindField = false;
  a->docString = "doc";
  a->extras = "xx";
  a->f = 1.5f;
  a->i = 7;
  a->s = "str";
  a->floats = {1, 2};
  a->ints = {3, 4};
  a->strings = {"a", "b"};
  a->tensors.push_back(std::make_unique<Tensor>(makeFloatTensor({2}, {5, 6})));
  auto sp = std::make_unique<SparseTensor>();
  sp->dims = {4};
  a->sparseTensors.push_back(std::move(sp));
  a->types.push_back(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{3}));
  return a;
}

void expectSamePayload(const Attribute &a, const Attribute &b) {
  EXPECT_EQ(a.kind(), b.kind());
  EXPECT_EQ(a.f, b.f);
  EXPECT_EQ(a.i, b.i);
  EXPECT_EQ(a.s, b.s);
  EXPECT_EQ(a.floats, b.floats);
  EXPECT_EQ(a.ints, b.ints);
  EXPECT_EQ(a.strings, b.strings);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  EXPECT_NE(a.tensors[0].get(), b.tensors[0].get()); // deep
  EXPECT_EQ(*a.tensors[0]->values<float>(), *b.tensors[0]->values<float>());
  ASSERT_EQ(a.sparseTensors.size(), b.sparseTensors.size());
  EXPECT_EQ(a.sparseTensors[0]->dims, b.sparseTensors[0]->dims);
  EXPECT_EQ(a.types, b.types);
  EXPECT_EQ(a.numGraphs(), b.numGraphs());
}

TEST(AttributePayload, CloneCopiesEveryField) {
  BasicModel bm;
  auto a = fullAttribute(bm.ctx);
  auto c = a->clone();
  expectSamePayload(*a, *c);
  EXPECT_EQ(c->name(), "full");
  EXPECT_EQ(c->docString, "doc");
  EXPECT_EQ(c->extras, "xx");
  EXPECT_FALSE(c->hasKindField);
}

TEST(AttributePayload, CopyKeepsTheHeaderMoveEmptiesTheSource) {
  BasicModel bm;
  auto a = fullAttribute(bm.ctx);
  Attribute ref("r");
  ref.refAttrName = "outer";
  ref.docString = "ref doc";
  IRMapping m;
  ref.copyPayloadFrom(*a, m);
  expectSamePayload(*a, ref);
  EXPECT_EQ(ref.name(), "r");
  EXPECT_EQ(ref.docString, "ref doc");
  EXPECT_EQ(ref.refAttrName, "outer");

  Attribute dst("d");
  dst.movePayloadFrom(*a);
  expectSamePayload(ref, dst);
  EXPECT_TRUE(a->tensors.empty());
  EXPECT_TRUE(a->floats.empty());
  EXPECT_EQ(a->name(), "full"); // the header stays with the source
}

TEST(AttributePayload, SubgraphsAreClonedThroughTheMappingOrMoved) {
  BasicModel bm;
  Node *n = bm.g.createNode("If", {bm.x}, 1);
  Graph *sub = addSubgraph(n, "then_branch", "then");
  Node *neg = sub->createNode("Neg", {bm.y}, 1);
  sub->addOutput(neg->result(0));
  Attribute &src = *n->getAttr("then_branch");

  // Cloned: the capture of y is remapped through the mapping.
  IRMapping m;
  m.map(bm.y, bm.x);
  int seen = 0;
  auto c = src.clone(m, [&](Graph &g) {
    ++seen;
    EXPECT_EQ(g.name, "then");
  });
  EXPECT_EQ(seen, 1);
  ASSERT_EQ(c->numGraphs(), 1u);
  EXPECT_EQ(c->graph(0)->nodes().front().operand(0), bm.x);
  EXPECT_EQ(c->graph(0)->parentAttribute(), c.get());
  c->graph(0)->nodes().front().dropAllReferences();

  // Moved: the graph changes owner and keeps its uses.
  Node *other = bm.g.createNode("If", {bm.x}, 1);
  Attribute &dst = other->setAttr(std::make_unique<Attribute>("then_branch"));
  dst.movePayloadFrom(src);
  EXPECT_EQ(src.numGraphs(), 0u);
  ASSERT_EQ(dst.numGraphs(), 1u);
  EXPECT_EQ(dst.graph(0), sub);
  EXPECT_EQ(sub->parentNode(), other);
  EXPECT_EQ(neg->operand(0), bm.y);
}

TEST(ValueInfoFields, GraphCloneCopiesRecordsAndOutputInfoAsOne) {
  BasicModel bm;
  Node *r = *bm.g.createNodeWithNames("Relu", {bm.x}, {"r"});
  ValueInfoRecord &rec = bm.g.addValueInfo(r->result(0));
  rec.docString = "rdoc";
  rec.metadata = {{"k", "v"}};
  rec.extras = "e";
  OutputInfo info;
  info.docString = "odoc";
  info.hasType = true;
  info.type = bm.x->type();
  bm.g.addOutput(r->result(0), info);
  IRMapping m;
  auto c = bm.g.clone(m);
  ASSERT_EQ(c->valueInfo().size(), 1u);
  const ValueInfoRecord &cr = c->valueInfo().front();
  EXPECT_EQ(cr.value, m.lookupOrNull(r->result(0)));
  EXPECT_EQ(cr.docString, "rdoc");
  EXPECT_EQ(cr.metadata, rec.metadata);
  EXPECT_EQ(cr.extras, "e");
  EXPECT_EQ(c->outputInfo(0).docString, "odoc");
  EXPECT_EQ(c->outputInfo(0).type, bm.x->type());
}

// Node::hasSubgraphs is a count the attributes keep up to date: every way a
// subgraph comes or goes through the API changes it, and the verifier (which
// skips the attributes of nodes without subgraphs) agrees.
TEST(AttributePayload, NodeCountsItsSubgraphs) {
  BasicModel bm;
  Node *n = bm.g.createNode("If", {bm.x}, 1);
  EXPECT_FALSE(n->hasSubgraphs());
  Graph *a = addSubgraph(n, "then_branch");
  EXPECT_EQ(n->numSubgraphs(), 1u);
  addSubgraph(n, "else_branch");
  EXPECT_EQ(n->numSubgraphs(), 2u);
  // A graph added to an attribute already attached counts too.
  Attribute &list = n->addAttr(std::make_unique<Attribute>("branches"));
  list.setKind(AttrKind::Graphs);
  list.addGraph(std::make_unique<Graph>(bm.ctx));
  list.addGraph(std::make_unique<Graph>(bm.ctx));
  EXPECT_EQ(n->numSubgraphs(), 4u);
  std::unique_ptr<Graph> taken = list.takeGraph(0);
  EXPECT_EQ(n->numSubgraphs(), 3u);
  // Replacing an attribute by name swaps its graphs for the new one's.
  n->setAttr(std::make_unique<Attribute>("then_branch"));
  EXPECT_EQ(n->numSubgraphs(), 2u);
  (void)a;
  // Moving a payload between attached attributes moves the counts.
  Node *m = bm.g.createNode("If", {bm.x}, 1);
  Attribute &dst = m->addAttr(std::make_unique<Attribute>("else_branch"));
  dst.movePayloadFrom(*n->getAttr("else_branch"));
  EXPECT_EQ(n->numSubgraphs(), 1u);
  EXPECT_EQ(m->numSubgraphs(), 1u);
  EXPECT_TRUE(n->removeAttr("branches"));
  EXPECT_FALSE(n->hasSubgraphs());
  EXPECT_TRUE(m->hasSubgraphs());
  // Copying a payload into an attached attribute.
  IRMapping map;
  n->getAttr("else_branch")->copyPayloadFrom(*m->getAttr("else_branch"), map);
  EXPECT_EQ(n->numSubgraphs(), 1u);
  // A node cloned with its graph keeps its count.
  IRMapping cm;
  auto copy = bm.g.clone(cm);
  unsigned total = 0;
  for (Node &c : copy->nodes()) total += c.numSubgraphs();
  EXPECT_EQ(total, 2u);
  EXPECT_EQ(bm.g.numNodesWithSubgraphs(), 2u);
  EXPECT_EQ(copy->numNodesWithSubgraphs(), 2u);
  // Erasing and moving nodes keeps the graph's count.
  Node *inner = bm.g.createNode("If", {bm.x}, 1);
  addSubgraph(inner, "then_branch");
  EXPECT_EQ(bm.g.numNodesWithSubgraphs(), 3u);
  Graph *holder = n->getAttr("else_branch")->graph(0);
  ASSERT_TRUE(inner->moveToEnd(holder).ok());
  EXPECT_EQ(bm.g.numNodesWithSubgraphs(), 2u);
  EXPECT_EQ(holder->numNodesWithSubgraphs(), 1u);
  ASSERT_TRUE(inner->erase().ok());
  EXPECT_EQ(holder->numNodesWithSubgraphs(), 0u);
  bm.g.addOutput(n->result(0));
  bm.g.addOutput(m->result(0));
  EXPECT_IR_OK(bm.m);
}

} // namespace
