//===- TextParserTest.cpp - Grammar, errors and robustness of the parser --===//
#include "onnxir/IR.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace onnxir;

namespace {

std::unique_ptr<Model> parseOK(const std::string &text) {
  auto m = parseModelText(text, "t.onnxtxt");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string parseErr(const std::string &text) {
  auto m = parseModelText(text, "t.onnxtxt");
  EXPECT_FALSE(m.ok()) << "expected an error for:\n" << text;
  return m.ok() ? std::string() : std::string(m.status().message());
}

Node *nodeAt(Graph &g, unsigned i) {
  for (Node &n : g.nodes())
    if (i-- == 0) return &n;
  return nullptr;
}

// A model that touches most of the grammar; used by several tests.
const char *kRich = R"(<
  ir_version: 9,
  opset_import: ["" : 18, "com.microsoft" : 1],
  producer_name: "p", producer_version: "1", domain: "d", model_version: 2,
  doc_string: "model doc", metadata_props: ["a": "b"]
>
main (float[N,3] x, float[2] w2 = {1.0, 2.5}, bool c, seq(float[N]) sq,
      map(int64, float) mp, optional(float[?]) op, sparse_tensor(float[2,3]) sp,
      float[] unk, float "odd name") => (float[N] y, float[N] t)
  <float[2] w = {1.0, 2.0}, int64[1] k = {3}, float[N] t, string[2] ss = {"a", "b\"c"},
   double[1] dd = {1e-300}, uint64[1] uu = {18446744073709551615},
   float16[1] h = {15360}, float[3] ext = ["location": "w.bin", "offset": "0", "length": "12"]>
{
  t = Relu(x)
  y, z = com.microsoft.Foo <alpha = 1.5, beta: float = 2, n = 3, ns = [1, 2, 3],
         fs = [1.0, 2.5], s = "str", ss = ["a", "b"], tt = float[2] {1, 2},
         tn = float[2] named {3, 4}, tp = float[N], e: ints = [],
         g = g1 () => (float o) { o = Constant<value = float {1}>() }> (x, , w)
  [mynode] r = Add(t, w)
  a, , b = Split(x)
  "", e2 = Dropout(x)
  u = If (c) <then_branch = th () => (float[N] r1) { r1 = Neg(t) },
              else_branch = el () => (float[N] r2) { r2 = Abs(x) }>
  v = Op:ov1 (x, "")
  ninf = Constant <value_floats = [-inf, nan, inf, 1e10]> ()
}
<domain: "local", opset_import: ["" : 18], doc_string: "fn doc">
myfun <a, b: float = 1.0, c = 2> (x, y) => (z) {
  z = Add <alpha = @a> (x, y)
}
)";

//===----------------------------------------------------------------------===//
// Grammar
//===----------------------------------------------------------------------===//

TEST(TextParser, ModelHeader) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->irVersion, 9);
  ASSERT_EQ(m->opsetImports.size(), 2u);
  EXPECT_EQ(m->opsetImports[1].domain, "com.microsoft");
  EXPECT_EQ(m->opsetImports[1].version, 1);
  EXPECT_EQ(m->producerName, "p");
  EXPECT_EQ(m->modelVersion, 2);
  EXPECT_EQ(m->docString, "model doc");
  ASSERT_EQ(m->metadata.size(), 1u);
  EXPECT_EQ(m->metadata[0].second, "b");
  ASSERT_EQ(m->functions().size(), 1u);
}

TEST(TextParser, Types) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  const Type *x = g.input(0)->type();
  ASSERT_TRUE(x && x->isTensor());
  EXPECT_EQ(x->rank(), 2);
  EXPECT_TRUE(x->dims()[0].isSymbolic());
  EXPECT_EQ(x->dims()[0].param, "N");
  EXPECT_EQ(x->dims()[1].value, 3);
  // `bool` is a scalar (rank 0); `float[]` has no shape at all.
  EXPECT_TRUE(g.input(2)->type()->hasShape());
  EXPECT_EQ(g.input(2)->type()->rank(), 0);
  EXPECT_FALSE(g.input(7)->type()->hasShape());
  EXPECT_EQ(g.input(3)->type()->kind(), Type::Kind::Sequence);
  EXPECT_EQ(g.input(4)->type()->kind(), Type::Kind::Map);
  EXPECT_EQ(g.input(4)->type()->elemType(), DataType::Int64);
  EXPECT_EQ(g.input(5)->type()->kind(), Type::Kind::Optional);
  EXPECT_FALSE(g.input(5)->type()->elementType()->dims()[0].isKnown());
  EXPECT_EQ(g.input(6)->type()->kind(), Type::Kind::SparseTensor);
  EXPECT_EQ(g.input(8)->name(), "odd name");
  // Types are uniqued: same text, same pointer.
  EXPECT_EQ(g.outputInfo(1).type, g.valueInfo().front().value->type());
  // A node result has a type only if value_info gives one.
  EXPECT_EQ(g.output(0)->type(), nullptr);
}

TEST(TextParser, InitializersAndDefaults) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  Value *w2 = g.input(1);
  ASSERT_TRUE(w2->hasInitializer());
  EXPECT_EQ(w2->initializer()->floatData, (std::vector<float>{1.0f, 2.5f}));
  // Input defaults come first, then the `<...>` list, in order.
  ASSERT_GE(g.initializers().size(), 2u);
  EXPECT_EQ(g.initializers()[0], w2);
  EXPECT_EQ(g.initializers()[1]->name(), "w");
  Value *ss = g.lookupLocal("ss");
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->initializer()->stringData, (std::vector<std::string>{"a", "b\"c"}));
  EXPECT_EQ(g.lookupLocal("dd")->initializer()->doubleData[0], 1e-300);
  EXPECT_EQ(g.lookupLocal("uu")->initializer()->uint64Data[0], 18446744073709551615ull);
  EXPECT_EQ(g.lookupLocal("h")->initializer()->int32Data[0], 15360);
  Tensor *ext = g.lookupLocal("ext")->initializer();
  ASSERT_TRUE(ext->isExternal());
  EXPECT_EQ(ext->external().location, "w.bin");
  EXPECT_EQ(ext->external().length, 12u);
  EXPECT_EQ(ext->dataLocation, 1);
  // value_info `float[N] t` types the node result t.
  Value *t = g.lookupLocal("t");
  ASSERT_TRUE(t && t->definingNode());
  ASSERT_TRUE(t->type());
  EXPECT_EQ(t->type()->str(), "float[N]");
}

TEST(TextParser, NodesAndAttributes) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  Node *foo = nodeAt(g, 1);
  ASSERT_TRUE(foo);
  EXPECT_EQ(foo->domain(), "com.microsoft");
  EXPECT_EQ(foo->opType(), "Foo");
  ASSERT_EQ(foo->numOperands(), 3u);
  EXPECT_EQ(foo->operand(1), nullptr);
  EXPECT_EQ(foo->getAttr("alpha")->kind(), AttrKind::Float);
  EXPECT_EQ(foo->getAttr("beta")->kind(), AttrKind::Float); // `: float = 2`
  EXPECT_EQ(foo->getAttr("beta")->f, 2.0f);
  EXPECT_EQ(foo->getAttr("n")->kind(), AttrKind::Int);
  EXPECT_EQ(foo->getAttr("ns")->ints, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(foo->getAttr("fs")->kind(), AttrKind::Floats);
  EXPECT_EQ(foo->getAttr("s")->s, "str");
  EXPECT_EQ(foo->getAttr("ss")->kind(), AttrKind::Strings);
  EXPECT_EQ(foo->getAttr("tt")->kind(), AttrKind::Tensor);
  EXPECT_EQ(foo->getAttr("tn")->tensors[0]->name(), "named");
  EXPECT_EQ(foo->getAttr("tp")->kind(), AttrKind::TypeProto);
  EXPECT_EQ(foo->getAttr("e")->kind(), AttrKind::Ints);
  EXPECT_TRUE(foo->getAttr("e")->ints.empty());
  EXPECT_EQ(foo->getAttr("g")->kind(), AttrKind::Graph);
  // Attributes keep their order.
  EXPECT_EQ(foo->attribute(0).name(), "alpha");
  EXPECT_EQ(foo->attribute(foo->numAttributes() - 1).name(), "g");

  Node *add = nodeAt(g, 2);
  EXPECT_EQ(add->name(), "mynode");
  Node *split = nodeAt(g, 3);
  ASSERT_EQ(split->numResults(), 3u);
  EXPECT_EQ(split->result(1), nullptr);
  Node *drop = nodeAt(g, 4);
  EXPECT_EQ(drop->result(0), nullptr);
  Node *op = nodeAt(g, 6);
  EXPECT_EQ(op->overload(), "ov1");
  ASSERT_EQ(op->numOperands(), 2u);
  EXPECT_EQ(op->operand(1), nullptr);
  Node *c = nodeAt(g, 7);
  auto fl = c->getAttr("value_floats")->floats;
  ASSERT_EQ(fl.size(), 4u);
  EXPECT_TRUE(std::isinf(fl[0]) && fl[0] < 0);
  EXPECT_TRUE(std::isnan(fl[1]));
}

TEST(TextParser, EmptyNameRules) {
  // The rules of onnx.parser: `Op(,x)` is ["", x], `Op(x,)` is [x],
  // `Op(,)` is [""], `Op("")` is [""].
  auto m = parseOK("g (float x) => () { a = A(,x) b = B(x,) c = C(,) d = D(\"\") }");
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  EXPECT_EQ(nodeAt(g, 0)->numOperands(), 2u);
  EXPECT_EQ(nodeAt(g, 0)->operand(0), nullptr);
  EXPECT_EQ(nodeAt(g, 1)->numOperands(), 1u);
  EXPECT_EQ(nodeAt(g, 2)->numOperands(), 1u);
  EXPECT_EQ(nodeAt(g, 2)->operand(0), nullptr);
  EXPECT_EQ(nodeAt(g, 3)->numOperands(), 1u);
}

TEST(TextParser, AttributesAfterInputs) {
  auto m = parseOK("g (float x) => (float y) { y = LeakyRelu(x) <alpha = 0.5> }");
  ASSERT_TRUE(m);
  EXPECT_EQ(nodeAt(m->graph(), 0)->getAttr("alpha")->f, 0.5f);
}

TEST(TextParser, CapturesAreDirectUses) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  // `t` is used by Add in the main graph and by Neg inside then_branch.
  Value *t = g.lookupLocal("t");
  bool nested = false;
  for (Use &u : t->uses())
    nested |= u.getOwner()->getGraph() != &g;
  EXPECT_TRUE(nested);
  EXPECT_TRUE(verify(*m, VerifyOptions{}).ok()) << verify(*m).message();
}

TEST(TextParser, ForwardReferences) {
  // Real files are not always sorted; uses may come before definitions, also
  // from nested graphs.
  auto m = parseOK(R"(g (bool c) => (float y) {
    y = If (c) <then_branch = a () => (float o) { o = Neg(late) },
                else_branch = b () => (float o2) { o2 = Abs(late) }>
    late = Constant <value = float {1}> ()
  })");
  ASSERT_TRUE(m);
  Value *late = m->graph().lookupLocal("late");
  EXPECT_EQ(late->numUses(), 2u);
}

TEST(TextParser, Functions) {
  auto m = parseOK(kRich);
  ASSERT_TRUE(m);
  Function &f = *m->functions()[0];
  EXPECT_EQ(f.name, "myfun");
  EXPECT_EQ(f.domain, "local");
  EXPECT_EQ(f.docString, "fn doc");
  EXPECT_EQ(f.attributeNames, (std::vector<std::string>{"a"}));
  ASSERT_EQ(f.attributeDefaults.size(), 2u);
  EXPECT_EQ(f.attributeDefaults[0]->kind(), AttrKind::Float);
  EXPECT_EQ(f.attributeDefaults[1]->kind(), AttrKind::Int);
  Node &add = f.body().nodes().front();
  EXPECT_EQ(add.getAttr("alpha")->refAttrName, "a");
  EXPECT_EQ(f.body().numInputs(), 2u);
  ASSERT_EQ(f.body().numOutputs(), 1u);
  EXPECT_EQ(f.body().output(0), add.result(0));
}

TEST(TextParser, NewerFunctionSyntax) {
  // Typed function inputs/outputs and a value_info list (ONNX >= 1.16).
  auto m = parseOK(R"(g () => () {}
<domain: "l", overload: "o1">
f (float[N] x, y) => (float z) <float[N] t> { t = Neg(x) z = Add(t, y) })");
  ASSERT_TRUE(m);
  Function &f = *m->functions()[0];
  EXPECT_EQ(f.overload, "o1");
  EXPECT_EQ(f.body().valueInfo().size(), 3u);
}

TEST(TextParser, OpaqueType) {
  auto m = parseOK("g (opaque(com.x, T) a, opaque(R) b, opaque() c) => () {}");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->graph().input(0)->type()->opaqueDomain(), "com.x");
  EXPECT_EQ(m->graph().input(0)->type()->opaqueName(), "T");
  EXPECT_EQ(m->graph().input(1)->type()->opaqueDomain(), "");
}

TEST(TextParser, Comments) {
  auto m = parseOK("# leading\ng (float x) => (float y) # trailing\n{ y = Neg(x) # why\n }");
  ASSERT_TRUE(m);
}

//===----------------------------------------------------------------------===//
// Errors: each class gives the right position and message.
//===----------------------------------------------------------------------===//

struct ErrCase {
  const char *text;
  const char *where; ///< "line:col"
  const char *message;
};

/// Each case fails to parse at `where` with `message` in its error.
template <size_t N> void expectErrors(const ErrCase (&cases)[N]) {
  for (const ErrCase &c : cases) {
    std::string e = parseErr(c.text);
    std::string prefix = std::string("t.onnxtxt:") + c.where + ": error: ";
    EXPECT_EQ(e.rfind(prefix, 0), 0u) << "for:\n" << c.text << "\ngot:\n" << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << "for:\n" << c.text << "\ngot:\n" << e;
  }
}

// Tensor bodies are read without tokens while they hold plain numbers
// (Note [Tensor bodies without tokens]); everything else in a body falls
// back to the token path mid-list: the values and the locations must not
// tell the two apart.
TEST(TextParser, TensorBodies) {
  auto m = parseOK("g () => () <float[6] f = {1, -2.5, # a comment\n"
                   "  3e2,\n\t 4E-1 , inf, -nan}, int64[4] i = {-9223372036854775808,\n"
                   "  9223372036854775807, 0, -0}, int32[2] j = { 7 ,-7 }, uint64[1] u = {18446744073709551615},\n"
                   "  double[2] d = {1e-300, -inf}, int64[0] e = {}> {}");
  ASSERT_TRUE(m);
  Graph &g = m->graph();
  const std::vector<float> &f = g.lookupLocal("f")->initializer()->floatData;
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.5f);
  EXPECT_EQ(f[2], 300.0f);
  EXPECT_EQ(f[3], 0.4f);
  EXPECT_TRUE(std::isinf(f[4]) && f[4] > 0);
  EXPECT_TRUE(std::isnan(f[5]));
  EXPECT_EQ(g.lookupLocal("i")->initializer()->int64Data,
            (std::vector<int64_t>{INT64_MIN, INT64_MAX, 0, 0}));
  EXPECT_EQ(g.lookupLocal("j")->initializer()->int32Data, (std::vector<int32_t>{7, -7}));
  EXPECT_EQ(g.lookupLocal("u")->initializer()->uint64Data[0], 18446744073709551615ull);
  EXPECT_EQ(g.lookupLocal("d")->initializer()->doubleData[0], 1e-300);
  EXPECT_EQ(g.lookupLocal("e")->initializer()->int64Data.size(), 0u);

  // Errors inside and after a multi-line body keep their line and column.
  const ErrCase cases[] = {
      {"g () => () <int64[3] k = {1,\n  2x, 3}> {}", "2:4", "expected ',' or '}', found 'x'"},
      {"g () => () <int64[3] k = {1,\n  2,\n  }> {}", "3:3", "expected a tensor element"},
      {"g () => () <int64[2] k = {1 2}> {}", "1:29", "expected ',' or '}', found number 2"},
      {"g () => () <int64[2] k = {1,\n 9223372036854775808}> {}", "1:26", "integer out of range"},
      {"g () => () <int64[2] k = {1, 2.}> {}", "1:26", "expected an integer, found '2.'"},
      {"g () => () <float[2] k = {1,\n 2}>\n{ y = Relu(q) }", "3:12", "use of undefined value 'q'"},
      {"g () => () <float[2] k = {1, 2 #@node doc_string: \"x\"\n}> {}", "1:34", "does not belong here"},
  };
  expectErrors(cases);
}

TEST(TextParser, Errors) {
  const ErrCase cases[] = {
      {"g (float x) => (float y) { y = Relu(x) $ }", "1:40", "unexpected character '$'"},
      {"g (float x) (float y) { }", "1:13", "expected '=>', found '('"},
      {"g (float x) => (float y) {\n  y = Relu(q)\n}", "2:12", "use of undefined value 'q'"},
      {"g (float x) => (float y) {\n  y = Relu(x)\n  y = Neg(x)\n}", "3:3", "'y' is already defined"},
      {"g (float x, float x) => () {}", "1:19", "'x' is already defined"},
      {"g () => (float nope) {}", "1:16", "graph output 'nope' is not defined"},
      {"<ir_version: 8, foo: 1> g () => () {}", "1:17", "unknown model property 'foo'"},
      {"<ir_version: \"8\"> g () => () {}", "1:14", "expected an integer"},
      {"<opset_import: [\"\" 17]> g () => () {}", "1:20", "expected ':'"},
      {"g (float[N] x) => () <float[N] w = {1}> {}", "1:23", "needs numeric dimensions"},
      {"g () => () <int64[1] k = {1.5}> {}", "1:26", "expected an integer, found '1.5'"},
      {"g () => () <int32[1] k = {3000000000}> {}", "1:26", "out of int32 range"},
      {"g () => () <float[1] k = {\"a\"}> {}", "1:26", "expected a number"},
      {"g () => () <seq(float) k = {1}> {}", "1:13", "expected a tensor type"},
      {"g () => () { y = Foo <a = []> () }", "1:23", "needs a type"},
      {"g () => () { y = Foo <a = [1, \"x\"]> () }", "1:31", "different kinds"},
      {"g () => () { y = Foo <a: int = 1.5> () }", "1:32", "expected a int"},
      {"g () => () { y = Foo <a: bogus = 1> () }", "1:26", "unknown attribute type 'bogus'"},
      {"g () => () { y = Foo <s = \"abc> () }", "1:27", "unterminated string"},
      {"g (float x) => (float y) { y = Relu(x) ", "1:40", "expected '}'"},
      {"g (floot[2] x) => () {}", "1:4", "unknown type 'floot'"},
      {"g (float[2 x) => () {}", "1:12", "expected ',' or ']'"},
      {"g (map(foo, float) m) => () {}", "1:8", "primitive type as map key"},
      {"g () => () { y = (x) }", "1:18", "expected an operator name"},
      {"g () => () { y = Foo(x }", "1:24", "expected ',' or ')'"},
      {"g () => () { y Foo(x) }", "1:16", "expected '=' after the node's outputs"},
      {"g () => () { y = a.(x) }", "1:20", "expected an operator name after '.'"},
      {"g () => () {}\nf (x) => (x) {} extra", "2:22", "expected '(', found end of input"},
      {"g () => () {}\nf (x) (x) {}", "2:7", "expected '=>'"},
      {"g () => () {}\n<bad: 1> f (x) => (y) {}", "2:2", "unknown function property 'bad'"},
      {"g () => () <float[1] w = [\"offset\": \"-1\"]> {}", "1:42", "non-negative integer"},
      // Text reads offsets and lengths as binary models do (digits only).
      {"g () => () <float[1] w = [\"offset\": \"+1\"]> {}", "1:42", "offset \"+1\" is not a non-negative integer"},
      {"g () => () <float[1] w = [\"length\": \" 4\"]> {}", "1:42", "length \" 4\" is not a non-negative integer"},
      {"g () => () { y = Foo <a = -bogus> () }", "1:27", "invalid number"},
      {"", "1:1", "expected a graph name, found end of input"},
      // Annotations (the extension).
      {"g () => () {\n  #@node doc: \"x\"\n  y = Foo()\n}", "2:5", "unknown field 'doc'"},
      {"g () => () {\n  y = Foo()\n  #@node doc_string: \"x\"\n}", "3:5", "does not belong here"},
      {"g () => () {\n  #@node doc_string: \"x\n  y = Foo()\n}", "2:24", "unterminated string in annotation"},
      {"g () => () {\n  #@node extras: \"zz\"\n  y = Foo()\n}", "2:5", "expected a hex string"},
      {"#@graph doc_string: \"d\"\n#@bogus x: 1\ng () => () {}", "2:3", "'#@bogus' does not belong here"},
  };
  expectErrors(cases);
}

TEST(TextParser, ErrorShowsLineAndCaret) {
  std::string e = parseErr("g (float x) => (float y) {\n    y = Relu(q)\n}");
  EXPECT_EQ(e, "t.onnxtxt:2:14: error: use of undefined value 'q'\n"
               "    y = Relu(q)\n"
               "             ^");
}

//===----------------------------------------------------------------------===//
// Robustness: no input crashes the parser.
//===----------------------------------------------------------------------===//

TEST(TextParser, DeepNestingIsAnError) {
  std::string s = "g (bool c) => () { ";
  const int depth = 5000;
  for (int i = 0; i < depth; ++i) s += "y = If (c) <then_branch = b () => () { ";
  for (int i = 0; i < depth; ++i) s += "}> ";
  s += "}";
  std::string e = parseErr(s);
  EXPECT_NE(e.find("subgraphs nest deeper than 128 levels"), std::string::npos)
      << e.substr(0, 200);

  std::string t = "g (";
  for (int i = 0; i < depth; ++i) t += "seq(";
  t += "float";
  for (int i = 0; i < depth; ++i) t += ")";
  t += " x) => () {}";
  e = parseErr(t);
  EXPECT_NE(e.find("types nest deeper than 200 levels"), std::string::npos) << e.substr(0, 200);

  std::string a = "g () => () {\n#@node extras: ";
  for (int i = 0; i < depth; ++i) a += "[";
  a += "\ny = F()\n}";
  e = parseErr(a);
  EXPECT_NE(e.find("annotation lists and records nest deeper"), std::string::npos)
      << e.substr(0, 200);

  // Records count on the same counter as lists (each record used to
  // restart it: 100,000 nested records overflowed the stack).
  std::string r = "g () => () {\n#@node extras: ";
  for (int i = 0; i < 100000; ++i) r += "{a: [";
  r += "\ny = F()\n}";
  e = parseErr(r);
  EXPECT_NE(e.find("annotation lists and records nest deeper"), std::string::npos)
      << e.substr(0, 200);
  EXPECT_LT(e.size(), 1000u) << "the long line is not echoed whole";
}

// Subgraphs nest up to kMaxGraphNesting levels; one more is an error that
// names the limit.
TEST(TextParser, GraphNestingLimit) {
  auto nested = [](unsigned depth) {
    std::string s = "g (bool c) => () { ";
    for (unsigned i = 0; i < depth; ++i)
      s += "y" + std::to_string(i) + " = If (c) <then_branch = b () => () { ";
    for (unsigned i = 0; i < depth; ++i) s += "}> ";
    return s + "}";
  };
  EXPECT_NE(parseOK(nested(kMaxGraphNesting)), nullptr) << "at the limit";
  std::string e = parseErr(nested(kMaxGraphNesting + 1));
  EXPECT_NE(e.find("subgraphs nest deeper than 128 levels"), std::string::npos)
      << e.substr(0, 200);
}

// Every strict prefix of kRich is refused with an error at a line and
// column inside the prefix (or just past its end), except the prefixes that
// end after the main graph's or the function's closing brace, which are
// whole models: the graph alone, then the graph and the function.
TEST(TextParser, EveryPrefixParsesOrFails) {
  std::string text = kRich;
  auto whole = parseOK(text);
  ASSERT_TRUE(whole);
  size_t graphEnd = text.find("\n}\n") + 2, fnEnd = text.rfind('}') + 1;
  unsigned refused = 0, complete = 0;
  for (size_t n = 0; n < text.size(); ++n) {
    llvm::StringRef prefix(text.data(), n);
    auto m = parseModelText(prefix, "prefix");
    auto endsAt = [&](size_t end) {
      return n >= end && llvm::StringRef(text).slice(end, n).trim().empty();
    };
    bool isModel = endsAt(graphEnd) || endsAt(fnEnd);
    if (isModel) {
      ASSERT_TRUE(m.ok()) << "prefix of " << n << " chars: " << m.status().message();
      EXPECT_EQ((*m)->functions().size(), n >= fnEnd ? 1u : 0u) << n;
      EXPECT_EQ((*m)->graph().nodes().size(), whole->graph().nodes().size()) << n;
      ++complete;
      continue;
    }
    ASSERT_FALSE(m.ok()) << "prefix of " << n << " chars parsed:\n" << prefix.str();
    std::string e(m.status().message());
    unsigned line = 0, col = 0;
    ASSERT_EQ(std::sscanf(e.c_str(), "prefix:%u:%u: error: ", &line, &col), 2) << e;
    unsigned lines = 1 + std::count(prefix.begin(), prefix.end(), '\n');
    EXPECT_GE(line, 1u) << e;
    EXPECT_LE(line, lines) << "prefix of " << n << " chars: " << e;
    ++refused;
  }
  EXPECT_GE(complete, 2u);
  EXPECT_EQ(refused + complete, text.size());
}

TEST(TextParser, MutationsDoNotCrash) {
  std::string base = kRich;
  std::mt19937 rng(1234);
  const char alphabet[] = "(){}[]<>,:=.@?\"#-+0123456789abcfxyzN_ \n\\";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = base;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 3) {
      case 0: s[pos] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
      case 1: s.erase(pos, 1 + rng() % 8); break;
      default: s.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
      }
    }
    auto m = parseModelText(s, "mutant");
    if (m.ok()) {
      // Whatever parses also prints and re-parses.
      PrintOptions po;
      po.lossless = true;
      std::string p1 = printModelText(**m, po);
      auto m2 = parseModelText(p1, "reprint");
      ASSERT_TRUE(m2.ok()) << m2.status().message() << "\n" << p1;
      EXPECT_EQ(printModelText(**m2, po), p1);
    }
  }
}

} // namespace
