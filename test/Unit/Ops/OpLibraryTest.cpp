//===- OpLibraryTest.cpp - Op libraries and their shape rules -------------===//
//
// The shape-rule language (Note [Shape rules], Ops/OpLibrary.h): what it
// accepts, the column of what it refuses, and what a rule gives through
// shape inference; then reading a library: located errors that register
// nothing, and registration replacing an op's earlier declaration.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpLibrary.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/Text/Text.h"

#include <gtest/gtest.h>

using namespace onnxir;

namespace {

ShapeRuleScope scope() {
  ShapeRuleScope s;
  s.inputs = {"X", "W"};
  s.inputTypes = {"T", "tensor(int64)"};
  s.outputs = {"Y", "Z"};
  s.outputTypes = {"T", "U"};
  s.intAttrs = {{"n", true, 7}, {"k", false, 0}};
  s.constraints = {{"T", {"tensor(float)", "tensor(double)"}}, {"U", {"tensor(int32)", "tensor(int8)"}}};
  return s;
}

std::string error(llvm::StringRef rule) {
  auto r = parseShapeRule(rule, scope());
  EXPECT_FALSE(r.ok()) << rule.str();
  return r.ok() ? "" : std::string(r.status().message());
}

/// The printed type of the main graph's value `name` after inferShapes.
std::string inferred(Model &m, llvm::StringRef name) {
  auto r = inferShapes(m);
  EXPECT_TRUE(r.ok()) << r.status();
  std::string printed = printModelText(m);
  for (Value *v : m.graph().outputs())
    if (v->name() == name) return v->type() ? v->type()->str() : "(none)";
  return "(no output " + name.str() + ")";
}

} // namespace

TEST(ShapeRuleTest, Forms) {
  auto r = parseShapeRule("out0: same as in0", scope());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->form, ShapeRule::Form::SameAs);
  EXPECT_EQ(r->elemInput, 0);

  r = parseShapeRule("Z: [X.0, W.-1, attr.n, 4, ?] of int32", scope());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->output, 1u);
  ASSERT_EQ(r->dims.size(), 5u);
  EXPECT_EQ(r->dims[0].kind, ShapeRuleDim::Kind::InputDim);
  EXPECT_EQ(r->dims[1].input, 1u);
  EXPECT_EQ(r->dims[1].value, -1);
  EXPECT_EQ(r->dims[2].kind, ShapeRuleDim::Kind::Attr);
  EXPECT_EQ(r->dims[2].attrDefault, 7);
  EXPECT_EQ(r->dims[3].value, 4);
  EXPECT_EQ(r->dims[4].kind, ShapeRuleDim::Kind::Unknown);
  EXPECT_EQ(r->elemFixed, (int32_t)DataType::Int32);

  // The element type from the output's constraint, shared with input 0.
  r = parseShapeRule("out0: []", scope());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->dims.empty());
  EXPECT_EQ(r->elemInput, 0);
  r = parseShapeRule("out1: ? of in1", scope());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->form, ShapeRule::Form::UnknownRank);
  EXPECT_EQ(r->elemInput, 1);
}

TEST(ShapeRuleTest, ErrorsNameTheColumn) {
  EXPECT_EQ(error("out2: same as in0"), "column 1: \"out2\" is not an output of the op");
  EXPECT_EQ(error("out0 same as in0"), "column 6: expected ':' after the output");
  EXPECT_EQ(error("out0: same as in5"), "column 15: \"in5\" is not an input (in0..in1 or an input's name)");
  EXPECT_EQ(error("out0: [in0.x]"), "column 12: expected a dim index after \"in0.\"");
  EXPECT_EQ(error("out0: [attr.m]"), "column 13: \"m\" is not an int attribute of the op");
  EXPECT_EQ(error("out0: [in0.0"), "column 13: expected ',' or ']'");
  EXPECT_EQ(error("out0: [-3]"), "column 8: expected a non-negative extent");
  EXPECT_EQ(error("out0: like in0"), "column 7: expected 'same as inN', '[...]' or '?'");
  EXPECT_EQ(error("out0: [1] of quux"), "column 14: \"quux\" is neither an input nor an element type");
  EXPECT_EQ(error("out0: [1] of in0 extra"), "column 18: expected the end of the rule");
  // U allows two types and no input has it: the rule must say.
  EXPECT_EQ(error("out1: [1]"), "column 10: the element type of output 1 is not implied by its "
                                "type \"U\": add 'of inN' or 'of TYPE'");
}

namespace {
const char *kLibrary = R"J({
  "ops": [
    {"domain": "test.oplib", "name": "Gather2",
     "inputs": [{"name": "X", "type": "T"}, {"name": "I", "type": "tensor(int64)"}],
     "outputs": [{"name": "Y", "type": "T"}],
     "attributes": [{"name": "width", "type": "int", "default": 5}],
     "type_constraints": [{"param": "T", "allowed": ["tensor(float)", "tensor(int32)"]}],
     "shape": ["out0: [I.0, X.-1, attr.width]"]}
  ]
})J";
} // namespace

TEST(OpLibraryTest, ShapeRuleFeedsInference) {
  auto lib = registerOpLibrary(kLibrary, "lib.json");
  ASSERT_TRUE(lib.ok()) << lib.status();
  ASSERT_EQ(lib->ops.size(), 1u);
  EXPECT_EQ(lib->ops[0], "test.oplib.Gather2-v1");
  EXPECT_TRUE(isLibraryDomain("test.oplib"));
  auto m = parseModelText(R"J(
<ir_version: 9, opset_import: ["" : 18, "test.oplib" : 1]>
g (int32[2,9] x, int64[4] i, float[N] f) => (a, b, c)
{
  a = test.oplib.Gather2 (x, i)
  b = test.oplib.Gather2 <width = 3> (f, i)
  c = test.oplib.Gather2 (i, i)
}
)J");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(inferred(**m, "a"), "int32[4,9,5]");
  EXPECT_EQ(inferred(**m, "b"), "float[4,N,3]");
}

TEST(OpLibraryTest, ErrorsAreLocatedAndRegisterNothing) {
  auto err = [](llvm::StringRef text) {
    auto r = registerOpLibrary(text, "bad.json");
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  // A JSON syntax error: LLVM's line and column.
  EXPECT_EQ(err("{\n  \"ops\": [\n    {,]\n}"), "bad.json: not JSON: [3:6, byte=19]: Expected object key");
  const char *head = R"J({"ops": [{"domain": "test.bad", "name": "Op", "outputs": [{"name": "Y", "type": "T"}], )J";
  auto op = [&](const std::string &rest) { return err(std::string(head) + rest + "}]}"); };
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}], "colour": 1)J"),
            "bad.json:1: ops[0] (test.bad.Op): unknown field \"colour\" (expected: domain, name, "
            "since_version, doc, inputs, outputs, attributes, type_constraints, shape, function)");
  EXPECT_EQ(op(R"J("type_constraints": [])J"),
            "bad.json:1: ops[0] (test.bad.Op).outputs[0].type: \"T\" is neither a type constraint of "
            "the op nor a type string such as \"tensor(float)\"");
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(floaty)"]}])J"),
            "bad.json:1: ops[0] (test.bad.Op).type_constraints[0].allowed[0]: expected a type string "
            "such as \"tensor(float)\" or \"seq(tensor(int64))\"");
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}],
                  "attributes": [{"name": "n", "type": "int", "default": 1.5}])J"),
            "bad.json:1: ops[0] (test.bad.Op).attributes[0].default: not a value of type int");
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}],
                  "shape": ["out0: [in0.0]"])J"),
            "bad.json:1: ops[0] (test.bad.Op).shape[0]: rule \"out0: [in0.0]\": column 8: \"in0\" is "
            "not an input (in0..in0 or an input's name)");
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}],
                  "function": "<domain: \"test.bad\", opset_import: [\"\" : 18]>\nOther (X) => (Y) { Y = Relu(X) }")J"),
            "bad.json:1: ops[0] (test.bad.Op).function: the body defines test.bad.Other, not test.bad.Op");
  EXPECT_EQ(op(R"J("type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}],
                  "function": "<domain: \"test.bad\", opset_import: [\"\" : 18]>\nOp (X) => (Y) { Y = Relu(X) }")J"),
            "bad.json:1: ops[0] (test.bad.Op).function: the body has 1 inputs and 1 outputs; the op "
            "declares 0 and 1");
  // ONNX's domains are not a library's to declare.
  EXPECT_EQ(err(R"J({"ops": [{"domain": "ai.onnx.ml", "name": "X", "outputs": []}]})J"),
            "bad.json:1: ops[0] (ai.onnx.ml.X).domain: \"ai.onnx.ml\" is a domain of ONNX's: a "
            "library declares operators of custom domains only");
  // Nothing of a refused library is registered, not even its good ops. The
  // line is the refused op's (braces inside strings do not count).
  auto half = registerOpLibrary(R"J({"ops": [
      {"domain": "test.half", "name": "Good", "doc": "{[ not JSON ]} \" {",
       "outputs": [{"name": "Y", "type": "tensor(float)"}]},
      {"domain": "test.half", "name": "Bad", "outputs": [{"name": "Y", "type": "nope"}]}]})J",
                                "half.json");
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.status().message().substr(0, 44), "half.json:4: ops[1] (test.half.Bad).outputs[");
  EXPECT_EQ(lookupSchema("test.half", "Good", 1), nullptr);
  EXPECT_FALSE(isLibraryDomain("test.half"));
}

TEST(OpLibraryTest, RegisteringAgainReplaces) {
  const char *v1 = R"J({"ops": [{"domain": "test.again", "name": "Op",
      "inputs": [{"name": "X", "type": "tensor(float)"}],
      "outputs": [{"name": "Y", "type": "tensor(float)"}], "shape": ["out0: [1, 2]"]}]})J";
  const char *v2 = R"J({"ops": [{"domain": "test.again", "name": "Op",
      "inputs": [{"name": "X", "type": "tensor(float)"}],
      "outputs": [{"name": "Y", "type": "tensor(float)"}], "shape": ["out0: same as in0"]}]})J";
  const char *model = R"J(
<ir_version: 9, opset_import: ["" : 18, "test.again" : 1]>
g (float[3] x) => (y)
{
  y = test.again.Op (x)
}
)J";
  ASSERT_TRUE(registerOpLibrary(v1, "v1.json").ok());
  auto m = parseModelText(model);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(inferred(**m, "y"), "float[1,2]");
  ASSERT_TRUE(registerOpLibrary(v2, "v2.json").ok());
  m = parseModelText(model);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(inferred(**m, "y"), "float[3]");
}
