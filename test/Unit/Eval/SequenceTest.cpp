//===- SequenceTest.cpp - Sequences and optionals in the evaluator --------===//
//
// Note [Evaluator values] (Evaluator.h), Note [Sequence ops are evaluator
// built-ins] (lib/Eval/Sequences.cpp): one op or form per test, and the
// errors naming node and operand.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"
#include "onnxir/Eval/Compare.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

using evaltest::floats;
using evaltest::int64s;
using evaltest::parse;

std::vector<float> fv(const Tensor &t) {
  auto v = t.values<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

std::vector<int64_t> iv(const Tensor &t) {
  auto v = t.values<int64_t>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<int64_t>{};
}

/// The non-tensor output `name`.
const EvalValue &other(const EvalResult &r, const std::string &name) {
  static const EvalValue none;
  auto it = r.otherOutputs.find(name);
  EXPECT_NE(it, r.otherOutputs.end()) << name;
  return it == r.otherOutputs.end() ? none : it->second;
}

TEST(EvalSequence, ConstructInsertEraseAtLength) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[3] b) => (seq(float[]) s, float[] at, int64 len, seq(float[]) e)
{
  s0 = SequenceConstruct (a, b)
  p = Constant <value = int64 {0}> ()
  s = SequenceInsert (s0, b, p)
  m = Constant <value = int64 {-1}> ()
  at = SequenceAt (s, m)
  len = SequenceLength (s)
  e = SequenceErase (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}, {"b", floats({3}, {3, 4, 5})}});
  ASSERT_TRUE(r.ok()) << r.status();
  const EvalValue &s = other(*r, "s");
  ASSERT_TRUE(s.isSequence());
  ASSERT_EQ(s.elements.size(), 3u);
  EXPECT_EQ(s.elemType, DataType::Float);
  EXPECT_EQ(fv(s.elements[0].tensor), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(fv(s.elements[1].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(fv(r->outputs.at("at")), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(iv(r->outputs.at("len")), (std::vector<int64_t>{3}));
  const EvalValue &e = other(*r, "e");
  ASSERT_EQ(e.elements.size(), 2u);
  EXPECT_EQ(fv(e.elements[1].tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(s.str(), "seq(float[3], float[2], float[3])");
}

TEST(EvalSequence, EmptySequenceKeepsItsElementType) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (seq(int32[]) s, int64 n)
{
  s = SequenceEmpty <dtype = 6> ()
  n = SequenceLength (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, std::map<std::string, Tensor>{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(other(*r, "s").elemType, DataType::Int32);
  EXPECT_TRUE(other(*r, "s").elements.empty());
  EXPECT_EQ(iv(r->outputs.at("n")), (std::vector<int64_t>{0}));
}

TEST(EvalSequence, SequenceAtOutOfRangeNamesTheNode) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[] y)
{
  s = SequenceConstruct (a, a)
  p = Constant <value = int64 {2}> ()
  y = SequenceAt (s, p)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "<text>:6:7: node #2 (SequenceAt) in graph \"g\": position 2 "
                                  "is out of range for a sequence of 2 elements");
}

TEST(EvalSequence, InsertOfAnotherElementTypeIsRefused) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, int64[2] b) => (seq(float[]) y)
{
  s = SequenceConstruct (a)
  y = SequenceInsert (s, b)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}, {"b", int64s({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node #1 (SequenceInsert) in graph \"g\": tensor is int64, "
                                      "the sequence's elements float"),
            absl::string_view::npos)
      << r.status();
}

TEST(EvalSequence, TensorKernelGivenASequenceNamesTheOperand) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a) => (float[2] y)
{
  s = SequenceConstruct (a)
  y = Relu (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node #1 (Relu) in graph \"g\": operand #0 is a sequence, "
                                      "not a tensor"),
            absl::string_view::npos)
      << r.status();
}

TEST(EvalSequence, SplitToSequenceForms) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5,2] x) => (seq(float[]) even, seq(float[]) sizes, seq(float[]) ones, seq(float[]) squeezed)
{
  two = Constant <value = int64 {2}> ()
  even = SplitToSequence (x, two)
  parts = Constant <value = int64[2] {1, 4}> ()
  sizes = SplitToSequence (x, parts)
  ones = SplitToSequence <axis = -1> (x)
  squeezed = SplitToSequence <axis = 1, keepdims = 0> (x)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  ASSERT_TRUE(r.ok()) << r.status();
  const EvalValue &even = other(*r, "even");
  ASSERT_EQ(even.elements.size(), 3u); // 2 + 2 + 1
  EXPECT_EQ(even.elements[2].tensor.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(fv(even.elements[2].tensor), (std::vector<float>{8, 9}));
  const EvalValue &sizes = other(*r, "sizes");
  ASSERT_EQ(sizes.elements.size(), 2u);
  EXPECT_EQ(sizes.elements[1].tensor.dims(), (std::vector<int64_t>{4, 2}));
  const EvalValue &ones = other(*r, "ones");
  ASSERT_EQ(ones.elements.size(), 2u);
  EXPECT_EQ(ones.elements[1].tensor.dims(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(fv(ones.elements[1].tensor), (std::vector<float>{1, 3, 5, 7, 9}));
  const EvalValue &sq = other(*r, "squeezed");
  ASSERT_EQ(sq.elements.size(), 2u);
  EXPECT_EQ(sq.elements[0].tensor.dims(), (std::vector<int64_t>{5}));
  EXPECT_EQ(fv(sq.elements[0].tensor), (std::vector<float>{0, 2, 4, 6, 8}));
}

TEST(EvalSequence, SplitToSequenceBadSizesAreRefused) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5] x) => (seq(float[]) y)
{
  parts = Constant <value = int64[2] {1, 3}> ()
  y = SplitToSequence (x, parts)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({5}, {0, 1, 2, 3, 4})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(SplitToSequence) in graph \"g\": split sizes add up to 4, "
                                      "not dim 0 (5)"),
            absl::string_view::npos)
      << r.status();
}

TEST(EvalSequence, ConcatFromSequenceWithAndWithoutNewAxis) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[2] b) => (float[4] cat, float[2,2] stacked, float[2,2] last)
{
  s = SequenceConstruct (a, b)
  cat = ConcatFromSequence <axis = 0> (s)
  stacked = ConcatFromSequence <axis = 0, new_axis = 1> (s)
  last = ConcatFromSequence <axis = -1, new_axis = 1> (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}, {"b", floats({2}, {3, 4})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fv(r->outputs.at("cat")), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(r->outputs.at("stacked").dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(fv(r->outputs.at("stacked")), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(fv(r->outputs.at("last")), (std::vector<float>{1, 3, 2, 4}));
}

TEST(EvalSequence, ConcatFromEmptySequenceIsRefused) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[] y)
{
  s = SequenceEmpty ()
  y = ConcatFromSequence <axis = 0> (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, std::map<std::string, Tensor>{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("input_sequence is empty"), absl::string_view::npos)
      << r.status();
}

TEST(EvalSequence, SequenceMapRunsTheBodyPerElement) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (seq(float[]) xs, float[] k) => (seq(float[]) ys, seq(int64[]) shapes)
{
  ys, shapes = SequenceMap <body = b (float[] x, float kk) => (float[] y, int64[] sh) {
    y = Mul (x, kk)
    sh = Shape (x)
  }> (xs, k)
})");
  ASSERT_TRUE(m);
  EvalValue xs = EvalValue::sequence({floats({2}, {1, 2}), floats({3}, {3, 4, 5})});
  auto r = evaluateModelValues(*m, std::map<std::string, EvalValue>{{"xs", xs}, {"k", floats({}, {10})}});
  ASSERT_TRUE(r.ok()) << r.status();
  const EvalValue &ys = other(*r, "ys");
  ASSERT_EQ(ys.elements.size(), 2u);
  EXPECT_EQ(fv(ys.elements[1].tensor), (std::vector<float>{30, 40, 50}));
  const EvalValue &sh = other(*r, "shapes");
  ASSERT_EQ(sh.elements.size(), 2u);
  EXPECT_EQ(iv(sh.elements[1].tensor), (std::vector<int64_t>{3}));
  EXPECT_EQ(sh.elemType, DataType::Int64);
}

TEST(EvalOptional, HoldGetAndHasElement) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2] a) => (optional(float[2]) o, optional(seq(float[])) none, bool has, bool hasNone, float[2] got)
{
  o = Optional (a)
  none = Optional <type = seq(float[])> ()
  has = OptionalHasElement (o)
  hasNone = OptionalHasElement (none)
  got = OptionalGetElement (o)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  const EvalValue &o = other(*r, "o");
  ASSERT_TRUE(o.isOptional());
  ASSERT_EQ(o.elements.size(), 1u);
  EXPECT_EQ(fv(o.elements[0].tensor), (std::vector<float>{1, 2}));
  EXPECT_TRUE(other(*r, "none").isEmptyOptional());
  EXPECT_EQ(other(*r, "none").str(), "optional()");
  EXPECT_EQ(iv(r->outputs.at("has")), (std::vector<int64_t>{1}));
  EXPECT_EQ(iv(r->outputs.at("hasNone")), (std::vector<int64_t>{0}));
  EXPECT_EQ(fv(r->outputs.at("got")), (std::vector<float>{1, 2}));
}

TEST(EvalOptional, GetElementOfEmptyIsAnError) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 18]>
g (optional(float[2]) o) => (float[2] y)
{
  y = OptionalGetElement (o)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModelValues(*m, std::map<std::string, EvalValue>{{"o", EvalValue::optional()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("node #0 (OptionalGetElement) in graph \"g\": the optional "
                                      "input is empty"),
            absl::string_view::npos)
      << r.status();
  // An optional input given its element alone holds it.
  r = evaluateModel(*m, {{"o", floats({2}, {5, 6})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fv(r->outputs.at("y")), (std::vector<float>{5, 6}));
}

TEST(EvalOptional, OptionalOpsBefore18RefuseATensor) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[2] a) => (bool h)
{
  h = OptionalHasElement (a)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"a", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("input is a tensor, not an optional"),
            absl::string_view::npos)
      << r.status();
}

TEST(EvalValues, InputsAreCheckedAgainstTheirDeclaredKinds) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (seq(float[2]) s) => (int64 n)
{
  n = SequenceLength (s)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"s", floats({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input \"s\": a tensor given for seq(float[2])");
  r = evaluateModelValues(*m, std::map<std::string, EvalValue>{
                            {"s", EvalValue::sequence({floats({2}, {1, 2}), floats({3}, {1, 2, 3})})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "input \"s\", element #1: dim 0 is 3, expected 2 (float[2])");
  r = evaluateModelValues(*m, std::map<std::string, EvalValue>{{"s", EvalValue::sequence({})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(iv(r->outputs.at("n")), (std::vector<int64_t>{0}));
}

TEST(EvalValues, IfAndLoopCarrySequences) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (bool c, int64 n, float[1] x) => (seq(float[]) chosen, seq(float[]) grown)
{
  e = SequenceEmpty ()
  chosen = If (c) <then_branch = t () => (seq(float[]) r) {
    r = SequenceConstruct (x, x)
  }, else_branch = f () => (seq(float[]) r) {
    r = SequenceEmpty ()
  }>
  grown = Loop (n, , e) <body = b (int64 i, bool ci, seq(float[]) acc) => (bool co, seq(float[]) out) {
    co = Identity (ci)
    out = SequenceInsert (acc, x)
  }>
})");
  ASSERT_TRUE(m);
  Tensor yes;
  yes.setDataType(DataType::Bool);
  yes.setRaw(std::string(1, 1));
  auto r = evaluateModel(*m, {{"c", yes}, {"n", int64s({}, {3})}, {"x", floats({1}, {7})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(other(*r, "chosen").elements.size(), 2u);
  EXPECT_EQ(other(*r, "grown").elements.size(), 3u);
  // evaluate() gives tensors alone and refuses the rest.
  auto t = evaluate(*m, {{"c", yes}, {"n", int64s({}, {3})}, {"x", floats({1}, {7})}});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(EvalValues, LoopScanOutputOfASequenceIsRefused) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64 n, float[1] x) => (float[] ys)
{
  ys = Loop (n, ) <body = b (int64 i, bool ci) => (bool co, seq(float[]) s) {
    co = Identity (ci)
    s = SequenceConstruct (x)
  }>
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"n", int64s({}, {2})}, {"x", floats({1}, {7})}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(Loop) in graph \"g\": scan output #0 is a sequence, not "
                                      "a tensor"),
            absl::string_view::npos)
      << r.status();
}

TEST(EvalValues, Scan8WithABatchAxis) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 8]>
g (float[2,1] init, float[2,3,1] xs) => (float[2,1] sum, float[2,3,1] partial)
{
  sum, partial = Scan <num_scan_inputs = 1, directions = [1], body = b (float[1] acc, float[1] x) => (float[1] o, float[1] p) {
    o = Add (acc, x)
    p = Identity (o)
  }> (, init, xs)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"init", floats({2, 1}, {0, 100})},
                              {"xs", floats({2, 3, 1}, {1, 2, 3, 10, 20, 30})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fv(r->outputs.at("sum")), (std::vector<float>{6, 160}));
  // Scanned backwards (directions = [1]): 3, 3+2, 3+2+1.
  EXPECT_EQ(fv(r->outputs.at("partial")), (std::vector<float>{3, 5, 6, 130, 150, 160}));
  // A sequence_lens entry shorter than the scan axis is not supported.
  auto m2 = parse(R"(<ir_version: 8, opset_import: ["" : 8]>
g (int64[2] lens, float[2,1] init, float[2,3,1] xs) => (float[2,1] sum)
{
  sum = Scan <num_scan_inputs = 1, body = b (float[1] acc, float[1] x) => (float[1] o) {
    o = Add (acc, x)
  }> (lens, init, xs)
})");
  ASSERT_TRUE(m2);
  r = evaluateModel(*m2, {{"lens", int64s({2}, {3, 2})},
                          {"init", floats({2, 1}, {0, 100})},
                          {"xs", floats({2, 3, 1}, {1, 2, 3, 10, 20, 30})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  r = evaluateModel(*m2, {{"lens", int64s({2}, {3, 3})},
                          {"init", floats({2, 1}, {0, 100})},
                          {"xs", floats({2, 3, 1}, {1, 2, 3, 10, 20, 30})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fv(r->outputs.at("sum")), (std::vector<float>{6, 160}));
}

TEST(EvalValues, CompareGoesElementByElement) {
  EvalResult a, b;
  a.otherOutputs["s"] = EvalValue::sequence({floats({2}, {1, 2}), floats({1}, {3})});
  b.otherOutputs["s"] = EvalValue::sequence({floats({2}, {1, 2}), floats({1}, {3.5})});
  a.otherOutputs["o"] = EvalValue::optional();
  b.otherOutputs["o"] = EvalValue::optional(floats({1}, {1}));
  auto d = compareOutputs(a, b, 1e-3, 1e-7);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].name, "o");
  EXPECT_EQ((*d)[0].kind, OutputDiff::Kind::TypeMismatch);
  EXPECT_EQ((*d)[1].name, "s");
  EXPECT_EQ((*d)[1].kind, OutputDiff::Kind::Values);
  EXPECT_FALSE((*d)[1].ok);
  EXPECT_DOUBLE_EQ((*d)[1].maxAbs, 0.5);
  EXPECT_EQ(describeOutput(b, "o"), "optional(float[1])");
  b.otherOutputs["s"] = a.otherOutputs["s"];
  b.otherOutputs["o"] = EvalValue::optional();
  d = compareOutputs(a, b, 1e-3, 1e-7);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE((*d)[0].ok && (*d)[1].ok);
}

} // namespace
