//===- ScopeTest.cpp - Name scopes, fresh names, renaming -----------------===//
#include "TestUtil.h"
#include "onnxir/Support/LLVMCompat.h"

using namespace onnxir;
using namespace onnxir::testutil;

namespace {

// main { x; a = Relu(x); if = If(x) { then: t = Neg(a) ; else: e = Neg(x) } }
struct ScopeTest : ::testing::Test {
  Model m;
  Graph &g = m.graph();
  Value *x = nullptr, *a = nullptr, *t = nullptr, *e = nullptr;
  Node *ifn = nullptr;
  Graph *thenG = nullptr, *elseG = nullptr;
  void SetUp() override {
    g.name = "main";
    x = unwrap(g.addInput("x"));
    a = unwrap(g.createNodeWithNames("Relu", {x}, {"a"})) ->result(0);
    ifn = unwrap(g.createNodeWithNames("If", {x}, {"out"}));
    thenG = addSubgraph(ifn, "then_branch");
    elseG = addSubgraph(ifn, "else_branch");
    t = unwrap(thenG->createNodeWithNames("Neg", {a}, {"t"}))->result(0);
    e = unwrap(elseG->createNodeWithNames("Neg", {x}, {"e"}))->result(0);
    thenG->addOutput(t);
    elseG->addOutput(e);
    g.addOutput(ifn->result(0));
  }
};

TEST_F(ScopeTest, LookupWalksOutward) {
  EXPECT_EQ(thenG->lookup("x"), x);
  EXPECT_EQ(thenG->lookup("a"), a);
  EXPECT_EQ(thenG->lookupLocal("x"), nullptr);
  EXPECT_EQ(thenG->lookup("e"), nullptr); // sibling's value is not visible
  EXPECT_EQ(g.lookup("t"), nullptr);      // nested value is not visible outside
  EXPECT_EQ(g.lookupLocal("a"), a);
  EXPECT_EQ(thenG->parentGraph(), &g);
  EXPECT_EQ(thenG->parentNode(), ifn);
  EXPECT_EQ(thenG->depth(), 1u);
  EXPECT_TRUE(thenG->isNestedIn(&g));
  EXPECT_FALSE(g.isNestedIn(thenG));
  EXPECT_FALSE(thenG->isNestedIn(elseG));
  EXPECT_EQ(thenG->topLevel(), &g);
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(ScopeTest, IsNameFree) {
  EXPECT_FALSE(g.isNameFree("x"));      // defined here
  EXPECT_FALSE(g.isNameFree("t"));      // defined in a nested graph
  EXPECT_FALSE(thenG->isNameFree("x")); // visible from the parent
  EXPECT_FALSE(thenG->isNameFree("t")); // defined here
  EXPECT_TRUE(thenG->isNameFree("e"));  // sibling only
  EXPECT_TRUE(g.isNameFree("zzz"));
  EXPECT_FALSE(g.isNameFree(""));
}

TEST_F(ScopeTest, SiblingSubgraphsMayReuseNames) {
  auto r = elseG->createNodeWithNames("Relu", {x}, {"t"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(m.getContext().nameDefinitions("t"), 2u);
  EXPECT_EQ(elseG->lookupLocal("t"), (*r)->result(0));
  EXPECT_EQ(thenG->lookupLocal("t"), t);
  // Sibling inputs too.
  EXPECT_TRUE(thenG->addInput("same").ok());
  EXPECT_TRUE(elseG->addInput("same").ok());
  // A Value::setName into a sibling's name is also fine.
  EXPECT_TRUE(e->setName("t2").ok());
  EXPECT_TRUE(thenG->createNodeWithNames("Relu", {x}, {"t2"}).ok());
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // But the parent can no longer define a name its subgraphs use.
  EXPECT_FALSE(g.addInput("t").ok());
  EXPECT_FALSE(g.addInput("same").ok());
}

TEST_F(ScopeTest, DefinitionsRefusedOnClashOrShadowing) {
  // Duplicate in one graph.
  auto s1 = g.addInput("a");
  ASSERT_FALSE(s1.ok());
  EXPECT_EQ(s1.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(std::string(s1.status().message()).find("already defined in this graph"), std::string::npos)
      << s1.status();
  // Shadowing an enclosing definition.
  auto s2 = thenG->addInput("x");
  ASSERT_FALSE(s2.ok());
  EXPECT_NE(std::string(s2.status().message()).find("would shadow"), std::string::npos) << s2.status();
  // Defining in the parent what a nested graph defines.
  auto s3 = g.addInitializer("t", makeFloatTensor({1}, {1.f}));
  ASSERT_FALSE(s3.ok());
  EXPECT_NE(std::string(s3.status().message()).find("nested graph"), std::string::npos) << s3.status();
  // Node results.
  EXPECT_FALSE(thenG->createNodeWithNames("Relu", {x}, {"a"}).ok());
  EXPECT_FALSE(g.createNodeWithNames("Relu", {x}, {"e"}).ok());
  EXPECT_FALSE(g.createNodeWithNames("Split", {x}, {"p", "p"}).ok());
  EXPECT_FALSE(ifn->addResult("x").ok());
  EXPECT_TRUE(ifn->addResult("").ok()); // "" means a fresh name
  // Nothing changed by the refusals (besides the fresh result).
  EXPECT_EQ(g.lookup("p"), nullptr);
  EXPECT_EQ(g.numInputs(), 1u);
  EXPECT_TRUE(g.initializers().empty());
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(ScopeTest, SetNameRefusedWhenItWouldShadowOrClash) {
  // Clash in the same graph.
  absl::Status s = a->setName("x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(a->name(), "a");
  // Inner value renamed to an outer name: shadowing.
  s = t->setName("a");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("shadow"), std::string::npos) << s;
  EXPECT_EQ(t->name(), "t");
  // Outer value renamed to a nested name.
  s = a->setName("e");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("nested"), std::string::npos) << s;
  EXPECT_EQ(a->name(), "a");
  EXPECT_EQ(g.lookupLocal("a"), a);
  // Renaming to itself is fine.
  EXPECT_TRUE(a->setName("a").ok());
  // A legal rename moves the registration.
  EXPECT_TRUE(a->setName("a_renamed").ok());
  EXPECT_EQ(g.lookupLocal("a"), nullptr);
  EXPECT_EQ(g.lookupLocal("a_renamed"), a);
  EXPECT_EQ(thenG->lookup("a_renamed"), a);
  EXPECT_EQ(m.getContext().nameDefinitions("a"), 0u);
  EXPECT_EQ(m.getContext().nameDefinitions("a_renamed"), 1u);
  // The old name is free again everywhere.
  EXPECT_TRUE(thenG->addInput("a").ok());
  EXPECT_TRUE(verify(m).ok()) << verify(m);
  // setNameOrFresh picks a different name on a clash.
  e->setNameOrFresh("x");
  EXPECT_NE(e->name(), "x");
  EXPECT_TRUE(startsWith(e->name(), "x"));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(ScopeTest, FreshNamesNeverCollideInAnyScope) {
  // Pre-populate suffix-like names at every level.
  ASSERT_TRUE(g.addInput("v_1").ok());
  ASSERT_TRUE(thenG->createNodeWithNames("Relu", {x}, {"v_2"}).ok());
  ASSERT_TRUE(elseG->createNodeWithNames("Relu", {x}, {"v_3"}).ok());
  ASSERT_TRUE(thenG->createNodeWithNames("Relu", {x}, {"v"}).ok());
  Node *inner = thenG->createNode("If", {x}, 0);
  Graph *deep = addSubgraph(inner, "then_branch");
  ASSERT_TRUE(deep->createNodeWithNames("Relu", {x}, {"v_4"}).ok());
  std::set<std::string> seen;
  std::vector<Graph *> graphs = {&g, thenG, elseG, deep};
  for (int i = 0; i < 200; ++i) {
    Graph *where = graphs[i % graphs.size()];
    llvm::StringRef n = where->freshName("v");
    EXPECT_EQ(m.getContext().nameDefinitions(n), 0u) << n.str();
    for (Graph *other : graphs) EXPECT_EQ(other->lookupLocal(n), nullptr) << n.str();
    EXPECT_TRUE(where->isNameFree(n));
    EXPECT_TRUE(seen.insert(n.str()).second) << "minted twice: " << n.str();
    auto r = where->createNodeWithNames("Relu", {x}, {n});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  EXPECT_EQ(seen.count("v"), 0u);
  for (const char *taken : {"v_1", "v_2", "v_3", "v_4"}) EXPECT_EQ(seen.count(taken), 0u);
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

TEST_F(ScopeTest, FreshNameOfUnusedBaseIsTheBase) {
  EXPECT_EQ(g.freshName("brand_new"), "brand_new");
  EXPECT_EQ(g.freshName(""), "v");
  llvm::StringRef fa = thenG->freshName("a");
  EXPECT_NE(fa, "a");
  EXPECT_TRUE(g.isNameFree(fa));
}

TEST_F(ScopeTest, ErasingReleasesNames) {
  Node *n = unwrap(g.createNodeWithNames("Relu", {x}, {"gone"}));
  EXPECT_EQ(m.getContext().nameDefinitions("gone"), 1u);
  ASSERT_TRUE(n->erase().ok());
  EXPECT_EQ(m.getContext().nameDefinitions("gone"), 0u);
  EXPECT_TRUE(thenG->isNameFree("gone"));
  // Erasing a node with a subgraph releases the nested names too.
  ifn->removeAttr("then_branch");
  EXPECT_EQ(m.getContext().nameDefinitions("t"), 0u);
  g.removeOutput(0);
  ASSERT_TRUE(ifn->erase().ok());
  EXPECT_EQ(m.getContext().nameDefinitions("e"), 0u);
  EXPECT_EQ(m.getContext().nameDefinitions("out"), 0u);
  EXPECT_TRUE(checkUseLists(m));
}

TEST_F(ScopeTest, AllowShadowingImporterMode) {
  Context &ctx = m.getContext();
  ctx.allowShadowing = true;
  // A nested definition may shadow an outer one...
  auto inner = thenG->createNodeWithNames("Relu", {x}, {"a"});
  ASSERT_TRUE(inner.ok()) << inner.status();
  Value *innerA = (*inner)->result(0);
  auto innerX = elseG->addInput("x");
  ASSERT_TRUE(innerX.ok()) << innerX.status();
  // ...but duplicates in one graph still fail.
  EXPECT_FALSE(thenG->addInput("a").ok());
  EXPECT_FALSE(g.addInput("x").ok());
  ctx.allowShadowing = false;

  // Lookup resolves the innermost definition.
  EXPECT_EQ(thenG->lookup("a"), innerA);
  EXPECT_EQ(g.lookup("a"), a);
  EXPECT_EQ(elseG->lookup("x"), *innerX);
  EXPECT_EQ(ctx.nameDefinitions("a"), 2u);
  // Fresh names avoid both.
  EXPECT_NE(g.freshName("a"), "a");

  // The verifier reports the shadowing, with both paths.
  auto diags = verifyAll(m);
  auto sh = diagsOfKind(diags, Diagnostic::Kind::Shadowing);
  ASSERT_EQ(sh.size(), 2u) << dump(diags);
  EXPECT_EQ(diagsOfKind(diags, Diagnostic::Kind::DuplicateName).size(), 0u) << dump(diags);
  std::string all = dump(sh);
  EXPECT_NE(all.find("\"a\" shadows the value of the same name in graph \"main\""), std::string::npos)
      << all;
  EXPECT_NE(all.find("attribute \"then_branch\""), std::string::npos) << all;
  EXPECT_NE(all.find("\"x\" shadows"), std::string::npos) << all;

  // With shadowing off again, the same definitions are refused.
  EXPECT_FALSE(thenG->createNodeWithNames("Relu", {x}, {"out"}).ok());
  EXPECT_TRUE(checkUseLists(m));
}

// A name's record holds its only definition; a second one moves both into
// the scope tables of their graphs until the count is back to 0 (Note [Name
// records] in Context.h). Every answer must be the same in both states.
TEST_F(ScopeTest, NameRecordsThroughSharedAndBack) {
  Context &ctx = m.getContext();
  auto answers = [&] {
    return std::vector<bool>{thenG->lookupLocal("s") != nullptr, elseG->lookupLocal("s") != nullptr,
                             g.lookup("s") != nullptr,        thenG->isNameFree("s"),
                             elseG->isNameFree("s"),          g.isNameFree("s")};
  };
  Value *s1 = unwrap(thenG->createNodeWithNames("Relu", {x}, {"s"}))->result(0);
  EXPECT_EQ(ctx.nameDefinitions("s"), 1u);
  EXPECT_EQ(answers(), (std::vector<bool>{true, false, false, false, true, false}));
  EXPECT_EQ(thenG->lookup("s"), s1);
  // Shared by two siblings.
  Node *n2 = unwrap(elseG->createNodeWithNames("Relu", {x}, {"s"}));
  EXPECT_EQ(ctx.nameDefinitions("s"), 2u);
  EXPECT_EQ(answers(), (std::vector<bool>{true, true, false, false, false, false}));
  EXPECT_EQ(thenG->lookup("s"), s1);
  EXPECT_EQ(elseG->lookup("s"), n2->result(0));
  // Back to one (still in the tables): the same answers as with one.
  ASSERT_TRUE(n2->erase().ok());
  EXPECT_EQ(ctx.nameDefinitions("s"), 1u);
  EXPECT_EQ(answers(), (std::vector<bool>{true, false, false, false, true, false}));
  EXPECT_EQ(thenG->lookup("s"), s1);
  EXPECT_EQ(thenG->numDefinitions(), 2u); // t, s
  // To none, then one again in another graph.
  ASSERT_TRUE(s1->setName("s_renamed").ok());
  EXPECT_EQ(ctx.nameDefinitions("s"), 0u);
  EXPECT_EQ(answers(), (std::vector<bool>{false, false, false, true, true, true}));
  Value *s3 = unwrap(g.addInput("s"));
  EXPECT_EQ(answers(), (std::vector<bool>{false, false, true, false, false, false}));
  EXPECT_EQ(thenG->lookup("s"), s3);
  EXPECT_EQ(thenG->lookup("s_renamed"), s1);
  EXPECT_EQ(g.numDefinitions(), 4u); // x, a, out, s
  EXPECT_TRUE(checkUseLists(m));
  EXPECT_TRUE(verify(m).ok()) << verify(m);
}

} // namespace
