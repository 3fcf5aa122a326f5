//===- FunctionTest.cpp - Functions, Model properties, Context ------------===//
#include "TestUtil.h"

using namespace onnxir;
using namespace onnxir::test;

namespace {

TEST(FunctionTest, IdentityAndCallSites) {
  Model m;
  m.graph().name = "main";
  Function &f = m.addFunction();
  f.domain = "custom";
  f.name = "Gelu";
  Function &fo = m.addFunction();
  fo.domain = "custom";
  fo.name = "Gelu";
  fo.overload = "fast";
  EXPECT_EQ(f.qualifiedName(), "custom.Gelu");
  EXPECT_EQ(fo.qualifiedName(), "custom.Gelu:fast");
  Function &plain = m.addFunction();
  plain.name = "Local";
  EXPECT_EQ(plain.qualifiedName(), "Local");

  Graph &g = m.graph();
  Value *x = *g.addInput("x");
  Node *call = g.createNode("Gelu", {x}, 1, nullptr, "custom");
  Node *callFast = g.createNode("Gelu", {x}, 1, nullptr, "custom");
  callFast->setOverload("fast");
  Node *otherDomain = g.createNode("Gelu", {x}, 1, nullptr, "");
  Node *otherName = g.createNode("Relu", {x}, 1, nullptr, "custom");
  EXPECT_TRUE(f.isCalledBy(*call));
  EXPECT_FALSE(f.isCalledBy(*callFast));
  EXPECT_TRUE(fo.isCalledBy(*callFast));
  EXPECT_FALSE(fo.isCalledBy(*call));
  EXPECT_FALSE(f.isCalledBy(*otherDomain));
  EXPECT_FALSE(f.isCalledBy(*otherName));
  EXPECT_EQ(m.findFunction(*call), &f);
  EXPECT_EQ(m.findFunction(*callFast), &fo);
  EXPECT_EQ(m.findFunction(*otherDomain), nullptr);
  EXPECT_EQ(m.findFunction(*otherName), nullptr);
  // Call sites inside subgraphs are matched the same way.
  Node *ifn = g.createNode("If", {x}, 1);
  Graph *then = addSubgraph(ifn, "then_branch");
  Node *nested = then->createNode("Gelu", {x}, 1, nullptr, "custom");
  EXPECT_EQ(m.findFunction(*nested), &f);
}

TEST(FunctionTest, BodyIsItsOwnTopLevelScope) {
  Model m;
  m.graph().name = "main";
  Value *x = *m.graph().addInput("x");
  Function &f = m.addFunction();
  f.domain = "d";
  f.name = "F";
  Graph &b = f.body();
  EXPECT_EQ(b.parentFunction(), &f);
  EXPECT_EQ(b.parentNode(), nullptr);
  EXPECT_EQ(b.parentGraph(), nullptr);
  EXPECT_EQ(m.graph().parentFunction(), nullptr);
  // The body may define "x": the main graph's scope is not visible there.
  EXPECT_TRUE(b.isNameFree("x"));
  Value *fx = *b.addInput("x");
  EXPECT_EQ(b.lookup("x"), fx);
  EXPECT_EQ(m.graph().lookup("x"), x);
  // Fresh names are model-wide, so they avoid the body's names too.
  Node *n = b.createNode("Relu", {fx}, 1);
  EXPECT_NE(m.graph().freshName("relu"), n->result(0)->name());
  Node *ifn = b.createNode("If", {fx}, 1);
  Graph *then = addSubgraph(ifn, "then_branch");
  then->addOutput(then->createNode("Neg", {n->result(0)}, 1)->result(0));
  EXPECT_EQ(then->parentFunction(), &f);
  b.addOutput(ifn->result(0));
  EXPECT_EQ(nodePath(&then->nodes().front()),
            "function \"d.F\" > node #1 (If) > attribute \"then_branch\" > node #0 (Neg)");
  EXPECT_IR_OK(m);
  // The Model walk reaches function bodies and their subgraphs.
  std::vector<Graph *> graphs;
  m.walkGraphs([&](Graph *sg) { graphs.push_back(sg); });
  EXPECT_EQ(graphs, (std::vector<Graph *>{&m.graph(), &b, then}));
}

TEST(FunctionTest, AttributeDefaultsAndReferences) {
  Model m;
  Function &f = m.addFunction();
  f.name = "Scale";
  f.attributeNames = {"alpha"};
  f.attributeDefaults.push_back(floatAttr("beta", 2.0f));
  Value *in = *f.body().addInput("in");
  Node *mul = f.body().createNode("Mul", {in, in}, 1);
  auto ref = std::make_unique<Attribute>("alpha");
  ref->refAttrName = "alpha";
  ref->setKind(AttrKind::Float);
  mul->setAttr(std::move(ref));
  EXPECT_TRUE(mul->getAttr("alpha")->isReference());
  EXPECT_EQ(mul->getAttr("alpha")->kind(), AttrKind::Float);
  f.body().addOutput(mul->result(0));
  EXPECT_EQ(f.attributeDefaults[0]->f, 2.0f);
  EXPECT_IR_OK(m);
}

TEST(ModelTest, OpsetVersion) {
  Model m;
  EXPECT_EQ(m.opsetVersion(""), -1);
  m.opsetImports.push_back({"", 18, ""});
  m.opsetImports.push_back({"com.microsoft", 1, ""});
  EXPECT_EQ(m.opsetVersion(""), 18);
  EXPECT_EQ(m.opsetVersion("ai.onnx"), 18); // same domain
  EXPECT_EQ(m.opsetVersion("com.microsoft"), 1);
  EXPECT_EQ(m.opsetVersion("ai.onnx.ml"), -1);
  Model m2;
  m2.opsetImports.push_back({"ai.onnx.ml", 3, ""});
  m2.opsetImports.push_back({"ai.onnx", 21, ""});
  EXPECT_EQ(m2.opsetVersion(""), 21);
  EXPECT_EQ(m2.opsetVersion("ai.onnx"), 21);
  EXPECT_EQ(m2.opsetVersion("ai.onnx.ml"), 3);
}

TEST(ModelTest, DefaultsAndKnownVersions) {
  Model m;
  EXPECT_TRUE(m.hasGraph);
  EXPECT_FALSE(m.irVersion.has_value());
  EXPECT_TRUE(m.functions().empty());
  EXPECT_EQ(&m.graph().getContext(), &m.getContext());
  EXPECT_GE(kMaxIRVersion, 10);
  EXPECT_TRUE(verify(m).ok());
}

TEST(ModelTest, DestroyingAModelWithCapturesEverywhereIsClean) {
  // Destruction order must cope with uses in every direction (ASan/asserts).
  auto m = std::make_unique<Model>();
  Graph &g = m->graph();
  Value *x = *g.addInput("x");
  Value *k = *g.addInitializer("k", makeFloatTensor({1}, {1}));
  Node *loop = g.createNode("Loop", {x, k}, 1);
  Graph *body = addSubgraph(loop, "body");
  Node *ifn = body->createNode("If", {x}, 1);
  Graph *then = addSubgraph(ifn, "then_branch");
  Node *deep = then->createNode("Add", {x, k}, 1);
  then->addOutput(deep->result(0));
  then->addOutput(k);
  body->addOutput(ifn->result(0));
  g.addOutput(loop->result(0));
  g.addOutput(x);
  g.createNode("Dead", {loop->result(0)}, 1);
  g.addValueInfo(loop->result(0));
  ASSERT_IR_OK(*m);
  m.reset();
  SUCCEED();
}

TEST(ContextTest, InterningAndNameRegistry) {
  Model m;
  Context &ctx = m.getContext();
  llvm::StringRef a = ctx.intern(std::string("abc"));
  llvm::StringRef b = ctx.intern(std::string("abc"));
  EXPECT_EQ(a.data(), b.data());
  EXPECT_NE(ctx.intern("abd").data(), a.data());
  Graph &g = m.graph();
  EXPECT_EQ(ctx.nameDefinitions("v"), 0u);
  Value *v = *g.addInput("v");
  EXPECT_EQ(ctx.nameDefinitions("v"), 1u);
  // Op types and domains of nodes are interned: equal strings, same pointer.
  Node *n1 = g.createNode("Relu", {v}, 1, nullptr, "dom");
  Node *n2 = g.createNode("Relu", {v}, 1, nullptr, "dom");
  EXPECT_EQ(n1->opType().data(), n2->opType().data());
  EXPECT_EQ(n1->domain().data(), n2->domain().data());
  EXPECT_TRUE(n1->is("Relu") == false); // "dom" is not the default domain
  Node *n3 = g.createNode("Relu", {v}, 1, nullptr, "ai.onnx");
  EXPECT_TRUE(n3->is("Relu"));
  EXPECT_FALSE(n3->is("Neg"));
  // freshName of an empty base is "v"-derived, and never a defined name.
  llvm::StringRef f = ctx.freshName("");
  EXPECT_NE(f, "v");
  EXPECT_EQ(ctx.nameDefinitions(f), 0u);
  // A freed name becomes available again.
  ASSERT_TRUE(n3->erase().ok());
  ASSERT_TRUE(n2->erase().ok());
  ASSERT_TRUE(n1->erase().ok());
  ASSERT_TRUE(g.removeInput(0).ok());
  EXPECT_EQ(ctx.nameDefinitions("v"), 0u);
  EXPECT_EQ(ctx.freshName("v"), "v");
  EXPECT_IR_OK(m);
}

} // namespace
