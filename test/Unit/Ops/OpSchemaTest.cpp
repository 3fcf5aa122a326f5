//===- OpSchemaTest.cpp - The compiled-in operator schemas ----------------===//
//
// The whole table is walked against the JSON it was generated from (one
// object per line: every (domain, name, since_version) must be reachable),
// then resolution through nodes, typed defaults and the op traits.
//
//===----------------------------------------------------------------------===//
#include "../TestEnv.h"
#include "../IR/TestUtil.h"

#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpSchema.h"

#include <fstream>
#include <regex>

using namespace onnxir;
using namespace onnxir::test;

namespace {

struct Key {
  std::string domain, name;
  int64_t since;
  std::string line;
};

std::vector<Key> keysFromJson() {
  std::ifstream in(ONNXIR_SHARED_DIR "/spec/onnx-op-schemas.json");
  std::vector<Key> keys;
  std::regex re("^\\{\"domain\":\"([^\"]*)\",\"name\":\"([^\"]*)\",\"since_version\":([0-9]+),");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch mt;
    if (std::regex_search(line, mt, re))
      keys.push_back({mt[1], mt[2], std::stoll(mt[3]), line});
  }
  return keys;
}

TEST(OpSchemaTest, EveryJsonSchemaIsReachable) {
  std::vector<Key> keys = keysFromJson();
  if (keys.empty()) {
    // Note [Missing data under CI]
    if (testenv::inCI()) FAIL() << "spec/onnx-op-schemas.json not found (CI=true: it must be)";
    GTEST_SKIP() << "spec/onnx-op-schemas.json not found";
  }
  ASSERT_EQ(keys.size(), allSchemas().size());
  for (const Key &k : keys) {
    SCOPED_TRACE(k.domain + "." + k.name + "-v" + std::to_string(k.since));
    const OpSchema *s = lookupSchema(k.domain, k.name, k.since);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->sinceVersion(), k.since);
    EXPECT_EQ(s->name(), k.name);
    EXPECT_EQ(s->domain(), k.domain);
    // In force until its last version; the one before is an older schema.
    EXPECT_EQ(lookupSchema(k.domain, k.name, s->lastVersion()), s);
    const OpSchema *before = lookupSchema(k.domain, k.name, k.since - 1);
    EXPECT_TRUE(before == nullptr || before->sinceVersion() < k.since);
    if (k.domain.empty()) {
      EXPECT_EQ(lookupSchema("ai.onnx", k.name, k.since), s);
    }
    // Counts agree with the JSON line.
    auto count = [&](const char *field, const char *stop) {
      size_t b = k.line.find(std::string("\"") + field + "\":[");
      size_t e = k.line.find(std::string("\"") + stop + "\":", b);
      std::string part = k.line.substr(b, e - b);
      size_t n = 0;
      for (size_t p = part.find("{\"name\""); p != std::string::npos; p = part.find("{\"name\"", p + 1)) ++n;
      return n;
    };
    EXPECT_EQ(s->inputs().size(), count("inputs", "outputs"));
    EXPECT_EQ(s->outputs().size(), count("outputs", "attributes"));
    EXPECT_EQ(s->attributes().size(), count("attributes", "type_constraints"));
    // Every formal parameter names a constraint or a concrete type.
    for (auto params : {s->inputs(), s->outputs()})
      for (const FormalParameter &p : params)
        EXPECT_TRUE(p.constraint || llvm::StringRef(p.typeStr).contains('('))
            << p.name.str() << ": " << p.typeStr.str();
    EXPECT_EQ(s->hasFunction(), k.line.find("\"has_function\":true") != std::string::npos);
    EXPECT_EQ(s->functionBodies().empty(), k.line.find("\"function_bodies\"") == std::string::npos);
  }
  EXPECT_EQ(latestOpsetVersion(""), 28);
  EXPECT_TRUE(isSchemaDomain("ai.onnx.ml"));
  EXPECT_TRUE(isSchemaDomain("ai.onnx"));
  EXPECT_FALSE(isSchemaDomain("com.microsoft"));
}

TEST(OpSchemaTest, ConvFacts) {
  const OpSchema *s = lookupSchema("", "Conv", 17);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->sinceVersion(), 11);
  EXPECT_EQ(s->lastVersion(), 21);
  EXPECT_EQ(s->minInputs(), 2);
  EXPECT_EQ(s->maxInputs(), 3);
  ASSERT_EQ(s->inputs().size(), 3u);
  EXPECT_TRUE(s->input("B")->isOptional());
  EXPECT_EQ(s->inputIndex("W"), 1);
  const AttributeSchema *g = s->attribute("group");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, AttrKind::Int);
  EXPECT_TRUE(g->hasDefault);
  EXPECT_EQ(g->defaultInt, 1);
  EXPECT_EQ(s->attribute("auto_pad")->defaultString, "NOTSET");
  EXPECT_FALSE(s->attribute("pads")->hasDefault);
  const TypeConstraint *t = s->typeConstraint("T");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->allows("tensor(float)"));
  EXPECT_FALSE(t->allows("tensor(int64)"));
  EXPECT_EQ(s->inputFor(0)->constraint, t);
  EXPECT_EQ(s->inputFor(3), nullptr);
  EXPECT_EQ(lookupSchema("", "Conv", 0), nullptr);
  EXPECT_EQ(lookupSchema("", "Relux", 17), nullptr);
  EXPECT_EQ(lookupSchema("", "Gelu", 19), nullptr); // introduced in 20
}

TEST(OpSchemaTest, VariadicAndFunctions) {
  const OpSchema *concat = lookupSchema("", "Concat", 13);
  ASSERT_NE(concat, nullptr);
  EXPECT_TRUE(concat->inputFor(7)->isVariadic());
  EXPECT_EQ(concat->inputFor(7), concat->inputFor(0));
  EXPECT_EQ(concat->maxInputs(), kUnboundedArity);
  const OpSchema *mvn = lookupSchema("", "MeanVarianceNormalization", 20);
  ASSERT_NE(mvn, nullptr);
  ASSERT_NE(mvn->functionBodyFor(17), nullptr);
  EXPECT_EQ(mvn->functionBodyFor(17)->opset, 13);
  EXPECT_EQ(mvn->functionBodyFor(18)->opset, 18);
  EXPECT_EQ(mvn->functionBodyFor(12), nullptr);
  EXPECT_TRUE(llvm::StringRef(mvn->functionBodyFor(18)->text).contains("ReduceMean"));
  // Equal signatures across versions (only the since_version moved).
  auto relu = schemaVersions("", "Relu");
  ASSERT_GE(relu.size(), 3u);
  EXPECT_FALSE(relu[0].sameSignature(relu[1])); // consumed_inputs went away
}

TEST(OpSchemaTest, NodeResolutionAndDefaults) {
  BasicModel bm;
  bm.m.opsetImports.push_back({"", 13, ""});
  Node *conv = bm.g.createNode("Conv", {bm.x, bm.y}, 1);
  const OpSchema *s = schemaFor(*conv);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->sinceVersion(), 11);
  EXPECT_EQ(schemaFor(*conv, bm.m), s);
  EXPECT_EQ(NodeContext(*conv).getInt("group", -1), 1);
  EXPECT_EQ(NodeContext(*conv).getString("auto_pad"), "NOTSET");
  EXPECT_EQ(NodeContext(*conv).getInt("nope", -7), -7);
  EXPECT_EQ(NodeContext(*conv).getInts("pads"), std::nullopt);
  conv->setAttr(intAttr("group", 4));
  EXPECT_EQ(NodeContext(*conv).getInt("group"), 4);
  // A node attribute of the wrong kind is not the default: the fallback
  // (Note [Attribute defaults]).
  conv->setAttr(floatAttr("group", 2.f));
  EXPECT_EQ(NodeContext(*conv).getInt("group", -1), -1);
  Node *lrelu = bm.g.createNode("LeakyRelu", {bm.x}, 1);
  EXPECT_FLOAT_EQ(NodeContext(*lrelu).getFloat("alpha"), 0.01f);
  // Not imported / custom domain.
  Node *custom = bm.g.createNode("Foo", {bm.x}, 1);
  custom->setDomain("com.example");
  EXPECT_EQ(schemaFor(*custom), nullptr);
  EXPECT_EQ(importedOpsetVersion(*custom), -1);
  // "ai.onnx" is the default domain.
  conv->setDomain("ai.onnx");
  EXPECT_EQ(schemaFor(*conv), s);
  EXPECT_EQ(operandConstraint(*conv, 1), s->typeConstraint("T"));
}

TEST(OpSchemaTest, FunctionBodiesUseTheirOwnImports) {
  Model m;
  m.opsetImports.push_back({"", 17, ""});
  Function &f = m.addFunction();
  f.name = "F";
  f.domain = "local";
  f.opsetImports.push_back({"", 11, ""});
  Value *in = *f.body().addInput("a");
  Node *n = f.body().createNode("Split", {in}, 2);
  EXPECT_EQ(importedOpsetVersion(*n), 11);
  ASSERT_NE(schemaFor(*n), nullptr);
  EXPECT_EQ(schemaFor(*n)->sinceVersion(), 11);
  // A domain the function does not list falls back to the model's import.
  m.opsetImports.push_back({"ai.onnx.ml", 3, ""});
  Node *ml = f.body().createNode("Normalizer", {in}, 1);
  ml->setDomain("ai.onnx.ml");
  EXPECT_EQ(importedOpsetVersion(*ml), 3);
}

TEST(OpSchemaTest, Traits) {
  BasicModel bm;
  bm.m.opsetImports.push_back({"", 17, ""});
  Node *drop = bm.g.createNode("Dropout", {bm.x}, 2);
  // No training_mode operand: inference mode (Note [Op traits]).
  EXPECT_TRUE(isDeterministic(*drop));
  EXPECT_FALSE(isOptionalResult(*drop, 0));
  EXPECT_TRUE(isOptionalResult(*drop, 1));
  Node *add = bm.g.createNode("Add", {bm.x, bm.y}, 1);
  EXPECT_FALSE(isNondeterministic(*add));
  EXPECT_TRUE(isCommutative(*add));
  Node *sub = bm.g.createNode("Sub", {bm.x, bm.y}, 1);
  EXPECT_FALSE(isCommutative(*sub));
  Node *lstm = bm.g.createNode("LSTM", {bm.x, bm.y, bm.y}, 3);
  EXPECT_TRUE(isOptionalResult(*lstm, 0));
  EXPECT_TRUE(isOptionalResult(*lstm, 2));
  Node *ms = bm.g.createNode("RandomNormal", {}, 1);
  ms->setDomain("com.microsoft");
  EXPECT_TRUE(isNondeterministic(*ms));
  Node *split = bm.g.createNode("Split", {bm.x}, 2);
  EXPECT_FALSE(isOptionalResult(*split, 1)); // variadic, not optional
}

// Note [Op traits]: one predicate per trait, so the passes cannot disagree.
TEST(OpSchemaTest, DropoutIsRandomOnlyInTrainingMode) {
  BasicModel bm;
  bm.m.opsetImports.push_back({"", 17, ""});
  // training_mode from a graph input: may be true.
  Node *train = bm.g.createNode("Dropout", {bm.x, nullptr, bm.y}, 1);
  EXPECT_FALSE(isDeterministic(*train));
  EXPECT_TRUE(isNondeterministic(*train));
  // A constant false training_mode: inference.
  Node *f = bm.g.createNode("Constant", {}, 1);
  Tensor no;
  no.setDataType(DataType::Bool);
  no.setRaw(std::string(1, '\0'));
  f->setAttr(tensorAttr("value", no));
  Node *inf = bm.g.createNode("Dropout", {bm.x, nullptr, f->result(0)}, 1);
  EXPECT_TRUE(isDeterministic(*inf));
  // A constant true one: training.
  Node *t = bm.g.createNode("Constant", {}, 1);
  t->setAttr(intAttr("value_int", 1));
  EXPECT_FALSE(isDeterministic(*bm.g.createNode("Dropout", {bm.x, nullptr, t->result(0)}, 1)));
  // Before opset 7: is_test decides, and its default (0) is training.
  bm.m.opsetImports[0].version = 6;
  Node *old = bm.g.createNode("Dropout", {bm.x}, 1);
  EXPECT_FALSE(isDeterministic(*old));
  old->setAttr(intAttr("is_test", 1));
  EXPECT_TRUE(isDeterministic(*old));
  // Opsets 7-11 have no training mode.
  bm.m.opsetImports[0].version = 10;
  EXPECT_TRUE(isDeterministic(*bm.g.createNode("Dropout", {bm.x}, 1)));
  // The schema decides elsewhere.
  EXPECT_FALSE(isDeterministic(*bm.g.createNode("RandomUniformLike", {bm.x}, 1)));
}

TEST(OpSchemaTest, SideEffectsAndCommutativity) {
  BasicModel bm;
  bm.m.opsetImports.push_back({"", 17, ""});
  EXPECT_FALSE(hasSideEffects(*bm.g.createNode("Relu", {bm.x}, 1)));
  Node *ms = bm.g.createNode("FusedGemm", {bm.x, bm.y}, 1);
  ms->setDomain("com.microsoft");
  EXPECT_FALSE(hasSideEffects(*ms));
  Node *custom = bm.g.createNode("Print", {bm.x}, 1);
  custom->setDomain("my.domain");
  EXPECT_TRUE(hasSideEffects(*custom));
  // A call of a model-local function of a known domain name.
  Function &fn = bm.m.addFunction();
  fn.name = "Relu2";
  fn.domain = "ai.onnx.ml";
  Node *call = bm.g.createNode("Relu2", {bm.x}, 1);
  call->setDomain("ai.onnx.ml");
  EXPECT_TRUE(hasSideEffects(*call));
  EXPECT_TRUE(isCommutative(*bm.g.createNode("Max", {bm.x, bm.y, bm.x}, 1)));
  EXPECT_FALSE(isCommutative(*bm.g.createNode("Div", {bm.x, bm.y}, 1)));
  Node *msAdd = bm.g.createNode("Add", {bm.x, bm.y}, 1);
  msAdd->setDomain("com.microsoft");
  EXPECT_FALSE(isCommutative(*msAdd));
}

TEST(OpSchemaTest, TypeStrings) {
  Context ctx;
  const Type *f = ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2});
  EXPECT_EQ(typeString(*f), "tensor(float)");
  EXPECT_EQ(typeString(*ctx.getSequenceType(f)), "seq(tensor(float))");
  EXPECT_EQ(typeString(*ctx.getOptionalType(ctx.getSequenceType(f))), "optional(seq(tensor(float)))");
  EXPECT_EQ(typeString(*ctx.getMapType(DataType::Int64, f)), "map(int64, float)");
  EXPECT_EQ(typeString(*ctx.getTensorType(DataType::Undefined, llvm::ArrayRef<int64_t>{})), "");
}

} // namespace
