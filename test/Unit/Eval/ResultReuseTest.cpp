//===- ResultReuseTest.cpp - Results written into a dead input's bytes ----===//
//
// Note [Results in a dead input's buffer] (lib/Ops/KernelReuse.h): a kernel
// writes its result into an input the caller gave up only when the tensor
// allows it, the result equals the one computed into fresh bytes, and in a
// run a value still read later (itself, or through a view sharing its
// bytes) is never overwritten.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"
#include "KernelReuse.h"

#include "onnxir/Eval/Evaluator.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace onnxir;

namespace {

using evaltest::floats;
using evaltest::parse;

const char *bytesOf(const Tensor &t) {
  auto b = t.bytes();
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? b->data() : nullptr;
}

std::vector<float> valuesOf(const Tensor &t) {
  auto v = t.values<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

/// Runs `op` (opset 17) on `inputs`, giving up the inputs of `mask`.
Tensor run(const char *op, std::vector<const Tensor *> inputs, uint64_t mask) {
  KernelCall c("", op, 17);
  c.inputs = inputs;
  std::optional<kernels::ConsumableInputs> given;
  if (mask) given.emplace(c, mask);
  auto r = evaluateKernel(c);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() && !r->empty() ? (*r)[0] : Tensor();
}

TEST(ResultReuse, UnaryWritesIntoAGivenUpInput) {
  std::vector<float> x = {-1.5f, 2, -3, 4, 0.25f};
  for (const char *op : {"Relu", "Neg", "Exp", "Sigmoid"}) {
    Tensor fresh = floats({5}, x), given = floats({5}, x);
    const char *givenBytes = bytesOf(given);
    Tensor a = run(op, {&fresh}, 0), b = run(op, {&given}, 1);
    EXPECT_NE(bytesOf(a), bytesOf(fresh)) << op; // not given up: fresh bytes
    EXPECT_EQ(valuesOf(fresh), x) << op;         // and the input is unchanged
    EXPECT_EQ(bytesOf(b), givenBytes) << op;     // given up: its bytes
    EXPECT_EQ(valuesOf(b), valuesOf(a)) << op;   // the same values
    EXPECT_EQ(b.dims(), a.dims());
  }
}

TEST(ResultReuse, ReluIsItsFormulaBitForBit) {
  // Note [Relu without an exit per element]: the lanes and the tail, fresh
  // and in the input's bytes, on NaNs, signed zeros, infinities and a
  // subnormal, every length from 0 to 11.
  std::vector<float> pool = {-1.5f, std::nanf(""), -0.0f, 0.0f, 2.5f,
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::infinity(), 1e-40f, -1e-40f, 3.0f,
                             -std::nanf(""), 7.25f};
  auto bits = [](const Tensor &t) {
    auto b = t.bytes();
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? b->str() : std::string();
  };
  for (size_t n = 0; n <= pool.size(); ++n) {
    std::vector<float> x(pool.begin(), pool.begin() + n), want;
    for (float v : x) want.push_back(v > 0.0f ? v : 0.0f);
    Tensor expected = floats({(int64_t)n}, want);
    Tensor fresh = floats({(int64_t)n}, x), given = floats({(int64_t)n}, x);
    EXPECT_EQ(bits(run("Relu", {&fresh}, 0)), bits(expected)) << n;
    EXPECT_EQ(bits(run("Relu", {&given}, 1)), bits(expected)) << n;
  }
}

TEST(ResultReuse, SharedOrForeignBytesAreNotTaken) {
  std::vector<float> x = {-1, 2, -3, 4};
  // Another tensor shares the bytes (a Reshape or Identity result does).
  Tensor t = floats({4}, x), copy = t;
  Tensor r = run("Relu", {&t}, 1);
  EXPECT_NE(bytesOf(r), bytesOf(t));
  EXPECT_EQ(valuesOf(copy), x);
  // Bytes the run did not allocate as a StringBuffer (an external or
  // mapped window is another Buffer); a window of a larger buffer.
  auto big = std::make_shared<StringBuffer>(std::string(8 * sizeof(float), '\0'));
  Tensor w;
  w.setDataType(DataType::Float);
  w.setDims({4});
  w.setRaw(big, 0, 4 * sizeof(float));
  big.reset();
  Tensor r2 = run("Relu", {&w}, 1);
  EXPECT_NE(bytesOf(r2), bytesOf(w));
  struct Foreign final : Buffer {
    std::string s = std::string(4 * sizeof(float), '\0');
    llvm::StringRef data() const override { return s; }
  };
  Tensor f;
  f.setDataType(DataType::Float);
  f.setDims({4});
  f.setRaw(std::make_shared<Foreign>(), 0, 4 * sizeof(float));
  Tensor r3 = run("Relu", {&f}, 1);
  EXPECT_NE(bytesOf(r3), bytesOf(f));
}

TEST(ResultReuse, BinaryTakesAnOperandOfTheResultShapeOnly) {
  std::vector<float> row = {1, 2, 3, 4}, grid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  // b [3, 4] given up, a [4] broadcast: the result takes b's bytes.
  {
    Tensor a = floats({4}, row), b = floats({3, 4}, grid), b2 = floats({3, 4}, grid);
    const char *bb = bytesOf(b);
    Tensor fresh = run("Sub", {&a, &b2}, 0), r = run("Sub", {&a, &b}, 0b10);
    EXPECT_EQ(bytesOf(r), bb);
    EXPECT_EQ(valuesOf(r), valuesOf(fresh));
    EXPECT_EQ(valuesOf(a), row);
  }
  // a [4] given up but broadcast to [3, 4]: not taken (other size).
  {
    Tensor a = floats({4}, row), b = floats({3, 4}, grid);
    Tensor r = run("Mul", {&a, &b}, 0b01);
    EXPECT_NE(bytesOf(r), bytesOf(a));
    EXPECT_EQ(valuesOf(a), row);
    EXPECT_EQ(valuesOf(b), grid);
  }
  // a [1, 4] with a result [3, 4]: same count of one axis, not the shape.
  {
    Tensor a = floats({1, 4}, row), b = floats({3, 1}, {1, 2, 3});
    Tensor r = run("Add", {&a, &b}, 0b11);
    EXPECT_EQ(r.dims(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(valuesOf(r), (std::vector<float>{2, 3, 4, 5, 3, 4, 5, 6, 4, 5, 6, 7}));
    EXPECT_EQ(valuesOf(a), row);
  }
  // Both given up, same shape: the first operand's bytes.
  {
    Tensor a = floats({4}, row), b = floats({4}, {10, 20, 30, 40});
    const char *ab = bytesOf(a);
    Tensor r = run("Div", {&a, &b}, 0b11);
    EXPECT_EQ(bytesOf(r), ab);
    EXPECT_EQ(valuesOf(r), (std::vector<float>{0.1f, 0.1f, 0.1f, 0.1f}));
    EXPECT_EQ(valuesOf(b), (std::vector<float>{10, 20, 30, 40}));
  }
}

TEST(ResultReuse, MarkingIsForOneCallAndScoped) {
  std::vector<float> x = {-1, 2};
  Tensor t = floats({2}, x);
  KernelCall other("", "Relu", 17);
  {
    kernels::ConsumableInputs given(other, 1); // another call's inputs
    Tensor r = run("Relu", {&t}, 0);
    EXPECT_NE(bytesOf(r), bytesOf(t));
  }
  KernelCall c("", "Relu", 17);
  std::vector<const Tensor *> in = {&t};
  c.inputs = in;
  { kernels::ConsumableInputs given(c, 1); }
  auto r = evaluateKernel(c); // the marking ended with its scope
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(bytesOf((*r)[0]), bytesOf(t));
  EXPECT_EQ(valuesOf(t), x);
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_FLOAT_EQ(got[k], want[k]) << k;
}

std::vector<float> output(const EvalResult &r, const std::string &name) {
  auto it = r.outputs.find(name);
  EXPECT_NE(it, r.outputs.end()) << name;
  return it == r.outputs.end() ? std::vector<float>{} : valuesOf(it->second);
}

TEST(ResultReuse, ValuesStillReadLaterAreNeverOverwritten) {
  // a is read after Relu (itself by Add, and through the Reshape view v,
  // which shares its bytes); b dies at Exp, c at Add (given twice), e at
  // the last Sub. Every result is checked against its formula.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y, float[4] z, float[2, 2] w) <int64[2] s = {2, 2}>
{
  a = Neg (x)
  r = Relu (a)
  v = Reshape (a, s)
  q = Sigmoid (v)
  b = Add (a, r)
  c = Exp (b)
  d = Add (c, c)
  e = Sub (d, r)
  y = Sub (e, a)
  z = Identity (a)
  w = Relu (q)
})");
  ASSERT_TRUE(m);
  std::vector<float> x = {1.5f, -2, 0.5f, -0.25f};
  auto res = evaluateModel(*m, {{"x", floats({4}, x)}});
  ASSERT_TRUE(res.ok()) << res.status();
  std::vector<float> y, z, w;
  for (float xi : x) {
    float a = -xi, r = a > 0 ? a : 0;
    float q = a >= 0 ? 1 / (1 + std::exp(-a)) : std::exp(a) / (1 + std::exp(a));
    float c = std::exp(a + r), e = (c + c) - r;
    y.push_back(e - a);
    z.push_back(a);
    w.push_back(q);
  }
  EXPECT_EQ(output(*res, "z"), z);
  expectNear(output(*res, "w"), w);
  expectNear(output(*res, "y"), y);
  // The input given by the caller is never written.
  EXPECT_EQ(x, (std::vector<float>{1.5f, -2, 0.5f, -0.25f}));
}

TEST(ResultReuse, GivenInputsAndInitializersStayIntact) {
  // x (the caller's) and w (an initializer) die at their only use: neither
  // is the run's to give up.
  auto m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {1, -2}>
{
  a = Relu (x)
  y = Add (a, w)
})");
  ASSERT_TRUE(m);
  Tensor x = floats({2}, {-3, 4});
  auto res = evaluateModel(*m, {{"x", x}});
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(output(*res, "y"), (std::vector<float>{1, 2}));
  EXPECT_EQ(valuesOf(x), (std::vector<float>{-3, 4}));
  auto again = evaluateModel(*m, {{"x", x}}); // the initializer is unchanged
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(output(*again, "y"), (std::vector<float>{1, 2}));
}

} // namespace
