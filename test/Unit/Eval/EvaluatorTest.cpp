//===- EvaluatorTest.cpp - evaluateModel on small models, one feature each ===//
#include "EvalTestUtil.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace onnxir;

namespace {

using evaltest::floats;
using evaltest::int64s;
using evaltest::parse;

Tensor boolean(bool b) {
  Tensor t;
  t.setDataType(DataType::Bool);
  t.setRaw(std::string(1, b ? 1 : 0));
  return t;
}

std::vector<float> fvals(const EvalResult &r, const std::string &name) {
  auto it = r.outputs.find(name);
  EXPECT_NE(it, r.outputs.end()) << name;
  if (it == r.outputs.end()) return {};
  auto v = it->second.values<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

TEST(Evaluator, ChainOfKernelsWithInitializerAndConstant) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {1, 2}>
{
  c = Constant <value = float[2] {10, 20}> ()
  a = Mul (x, w)
  b = Add (a, c)
  y = Neg (b)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({2}, {3, 4})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{-13, -28}));
  EXPECT_EQ(r->stats.nodesRun, 4);
  EXPECT_TRUE(r->nondeterministic.empty());
}

TEST(Evaluator, InputDefaultFromInitializer) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, float[2] d) => (float[2] y) <float[2] d = {1, 2}>
{
  y = Add (x, d)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({2}, {1, 1})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{2, 3}));
  r = evaluateModel(*m, {{"x", floats({2}, {1, 1})}, {"d", floats({2}, {5, 5})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{6, 6}));
}

// Each intermediate dies after its last use: a chain of 8 Negs never holds
// more than two of them (the one read and the one made).
TEST(Evaluator, IntermediatesFreedAfterLastUse) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    std::string next = i == 7 ? "y" : "t" + std::to_string(i);
    body += "  " + next + " = Neg (" + prev + ")\n";
    prev = next;
  }
  auto m = parse("<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y)\n{\n" +
                 body + "}");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({2}, {1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{1, 2}));
  EXPECT_LE(r->stats.peakLiveTensors, 2);
  EXPECT_EQ(r->stats.valuesFreed, 8); // x and t0..t6
  EXPECT_EQ(r->stats.liveTensors, 0);  // the run's tensors all died with it
}

// A value used twice, once inside a subgraph, lives until the later use.
TEST(Evaluator, UseInsideSubgraphKeepsValueAlive) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x, bool c) => (float[2] y)
{
  t = Neg (x)
  u = Abs (x)
  y = If (c) <
    then_branch = th () => (float[2] a) { a = Add (t, u) },
    else_branch = el () => (float[2] b) { b = Sub (t, u) }>
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({2}, {1, -2})}, {"c", boolean(true)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{0, 4}));
  r = evaluateModel(*m, {{"x", floats({2}, {1, -2})}, {"c", boolean(false)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{-2, 0}));
}

// Loop: a carried sum, a scan output of every iteration's value, and the
// outer value w read from the body.
TEST(Evaluator, LoopCarriedStateAndScanOutputs) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64 n, float[2] x) => (float[2] sum, float[3,2] all) <float[2] w = {1, 10}>
{
  t = Constant <value = bool {1}> ()
  sum, all = Loop (n, t, x) <body = body (int64 i, bool c, float[2] acc) => (bool co, float[2] next, float[2] seen)
    {
      co = Identity (c)
      next = Add (acc, w)
      seen = Identity (next)
    }>
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"n", int64s({}, {3})}, {"x", floats({2}, {0, 0})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "sum"), (std::vector<float>{3, 30}));
  EXPECT_EQ(fvals(*r, "all"), (std::vector<float>{1, 10, 2, 20, 3, 30}));
  EXPECT_EQ(r->outputs["all"].dims(), (std::vector<int64_t>{3, 2}));
}

// The body's condition ends the loop before the trip count.
TEST(Evaluator, LoopStopsOnCondition) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64 n) => (int64 last) <int64 lim = {2}>
{
  t = Constant <value = bool {1}> ()
  z = Constant <value = int64 {0}> ()
  last = Loop (n, t, z) <body = body (int64 i, bool c, int64 prev) => (bool co, int64 cur)
    {
      cur = Identity (i)
      co = Less (i, lim)
    }>
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"n", int64s({}, {10})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->outputs["last"].values<int64_t>(), (std::vector<int64_t>{2}));
}

// Scan: a running sum over the rows of x (state), the partial sums (scan
// output), and a reversed scan input.
TEST(Evaluator, ScanRunningSum) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] init, float[3,2] xs) => (float[2] total, float[3,2] partial, float[3,2] rev)
{
  total, partial, rev = Scan (init, xs, xs) <num_scan_inputs = 2, scan_input_directions = [0, 1],
    body = body (float[2] s, float[2] x, float[2] xr) => (float[2] s2, float[2] p, float[2] r)
    {
      s2 = Add (s, x)
      p = Identity (s2)
      r = Identity (xr)
    }>
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"init", floats({2}, {0, 0})},
                              {"xs", floats({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "total"), (std::vector<float>{9, 12}));
  EXPECT_EQ(fvals(*r, "partial"), (std::vector<float>{1, 2, 4, 6, 9, 12}));
  EXPECT_EQ(fvals(*r, "rev"), (std::vector<float>{5, 6, 3, 4, 1, 2}));
}

// A model-local function runs through its body; its attribute reference
// takes the call's attribute, else the function's default.
TEST(Evaluator, ModelLocalFunctionWithAttributeReference) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[3] x) => (float[3] y, float[3] z)
{
  y = local.Clamp <hi = 1.5> (x)
  z = local.Clamp (x)
}
<domain: "local", opset_import: ["" : 17]>
Clamp <hi: float = 2.5> (u) => (v)
{
  h = Constant <value_float: float = @hi> ()
  v = Min (u, h)
})");
  ASSERT_TRUE(m);
  auto r = evaluateModel(*m, {{"x", floats({3}, {1, 2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(fvals(*r, "y"), (std::vector<float>{1, 1.5, 1.5}));
  EXPECT_EQ(fvals(*r, "z"), (std::vector<float>{1, 2, 2.5}));
}

// An op without a kernel is a located "not supported", never a crash.
TEST(Evaluator, OpWithoutKernelIsLocatedError) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 11, "com.example" : 1]>
main (float[1,1,3,3] x, float[1,1,2,2] w) => (float[1,1,2,2] y)
{
  a = Identity (x)
  b = Identity (w)
  c = Identity (a)
  y = com.example.Blur (c, b)
})");
  ASSERT_TRUE(m);
  std::vector<float> z(9, 1);
  auto r = evaluateModel(*m, {{"x", floats({1, 1, 3, 3}, z)},
                              {"w", floats({1, 1, 2, 2}, {1, 1, 1, 1})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(r.status().message(),
            "<text>:7:7: not supported: node #3 (Blur) in graph \"main\": no kernel for Blur-1");
}

TEST(Evaluator, WrongInputTypeOrShapeNamesTheInput) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,2] x, float[N] v) => (float[N,2] y)
{
  y = Neg (x)
})");
  ASSERT_TRUE(m);
  Tensor v = floats({2}, {0, 0});
  auto r = evaluateModel(*m, {{"x", int64s({2, 2}, {1, 2, 3, 4})}, {"v", v}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "input \"x\": element type int64, expected float (float[N,2])");
  r = evaluateModel(*m, {{"x", floats({4}, {1, 2, 3, 4})}, {"v", v}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input \"x\": rank 1, expected 2 (float[N,2])");
  r = evaluateModel(*m, {{"x", floats({1, 4}, {1, 2, 3, 4})}, {"v", v}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input \"x\": dim 1 is 4, expected 2 (float[N,2])");
  r = evaluateModel(*m, {{"x", floats({2, 2}, {1, 2, 3, 4})}, {"v", floats({3}, {0, 0, 0})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input \"v\": dim 0 (N) is 3, but N is 2 in input \"x\"");
  r = evaluateModel(*m, {{"x", floats({2, 2}, {1, 2, 3, 4})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "input \"v\" is not given");
  r = evaluateModel(*m, {{"x", floats({2, 2}, {1, 2, 3, 4})}, {"v", v}, {"q", v}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "\"q\" is no input of the model (its inputs: x, v)");
}

// No result over maxBytes is made: Expand to 1000 floats is refused at 1 KB.
TEST(Evaluator, BudgetRefusesLargeResult) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1000] y) <int64[1] s = {1000}>
{
  y = Expand (x, s)
})");
  ASSERT_TRUE(m);
  EvalOptions o;
  o.maxBytes = 1024;
  auto r = evaluateModel(*m, {{"x", floats({1}, {1})}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("node #0 (Expand) in graph \"g\""), std::string::npos)
      << r.status();
  o.maxBytes = 4000;
  EXPECT_TRUE(evaluateModel(*m, {{"x", floats({1}, {1})}}, o).ok());
}

// Loop's stacked scan outputs are under the budget too.
TEST(Evaluator, BudgetRefusesLargeScanOutput) {
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64 n, float[4] x) => (float[N,4] all)
{
  t = Constant <value = bool {1}> ()
  all = Loop (n, t) <body = body (int64 i, bool c) => (bool co, float[4] seen)
    {
      co = Identity (c)
      seen = Identity (x)
    }>
})");
  ASSERT_TRUE(m);
  EvalOptions o;
  o.maxBytes = 100;
  auto r = evaluateModel(*m, {{"n", int64s({}, {10})}, {"x", floats({4}, {1, 2, 3, 4})}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  r = evaluateModel(*m, {{"n", int64s({}, {6})}, {"x", floats({4}, {1, 2, 3, 4})}}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outputs["all"].dims(), (std::vector<int64_t>{6, 4}));
}

} // namespace

// A random op without a `seed` attribute runs on the run's seed: the same
// stream as a node seed of that value where a float holds it (5), and one
// stream per 64-bit seed beyond that: 2^24 and 2^24 + 1 are one float, so
// passing the run's seed as a float attribute made them one stream; 2^63
// and 2^63 + 2^40 likewise. Dropout in training mode reads it too.
TEST(Evaluator, RunSeedKeepsEverySixtyFourBitSeedDistinct) {
  auto unseeded = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[16] y)
{
  y = RandomUniform <shape = [16]> ()
})");
  auto seeded = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g () => (float[16] y)
{
  y = RandomUniform <shape = [16], seed = 5.0> ()
})");
  ASSERT_TRUE(unseeded && seeded);
  auto run = [&](const Model &m, uint64_t seed) {
    EvalOptions o;
    o.seed = seed;
    auto r = evaluateModel(m, {}, o);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) {
      EXPECT_EQ(r->nondeterministic.count("y"), 1u);
    }
    return r.ok() ? fvals(*r, "y") : std::vector<float>{};
  };
  auto five = run(*unseeded, 5);
  ASSERT_EQ(five.size(), 16u);
  EXPECT_EQ(five, run(*seeded, 123)); // the attribute wins over the run's seed
  EXPECT_NE(five, run(*unseeded, 6));
  EXPECT_NE(run(*unseeded, 1u << 24), run(*unseeded, (1u << 24) + 1));
  EXPECT_NE(run(*unseeded, 1ull << 63), run(*unseeded, (1ull << 63) + (1ull << 40)));
  EXPECT_EQ(run(*unseeded, (1u << 24) + 1), run(*unseeded, (1u << 24) + 1));
  EXPECT_NE(run(*unseeded, UINT64_MAX), run(*unseeded, UINT64_MAX - 1)); // round to 2^64 as floats

  auto dropout = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[64] x) => (float[64] y, bool[64] mask) <float[64] x = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}>
{
  r = Constant <value = float {0.5}> ()
  t = Constant <value = bool {1}> ()
  y, mask = Dropout (x, r, t)
})");
  ASSERT_TRUE(dropout);
  auto drop = [&](uint64_t seed) {
    EvalOptions o;
    o.seed = seed;
    auto r = evaluateModel(*dropout, {}, o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? fvals(*r, "y") : std::vector<float>{};
  };
  EXPECT_NE(drop(1u << 24), drop((1u << 24) + 1));
  EXPECT_EQ(drop(7), drop(7));
}
