//===- ProductsTest.cpp - The two builds of the matrix products -----------===//
//
// Note [Host-tuned products] (lib/Ops/KernelSupport.cpp): the evaluator may
// run Conv, ConvTranspose, MatMul and Gemm on the AVX2 + FMA build, constant
// folding never. Run twice by ctest: as part of EvalTests, and as
// eval-products-baseline with ONNXIR_BASELINE_PRODUCTS=1, which forces the
// baseline build (the path of a CPU without AVX2).
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace onnxir;

namespace {

bool baselineForced() {
  const char *e = std::getenv("ONNXIR_BASELINE_PRODUCTS");
  return e && *e && std::strcmp(e, "0") != 0;
}

/// Seeded values in [-1, 1), no library generator (the same on every libc).
std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float &x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
  }
  return v;
}

struct Case {
  const char *op;
  std::vector<Tensor> inputs;
  std::vector<std::unique_ptr<Attribute>> attrs;
  /// A tuned call runs it as another product shape (a batch as one
  /// product) or another loop: its sums may be reordered even on the
  /// baseline build.
  bool reshaped = false;
};

/// The kernel run as folding runs it (hostTuned false) or as the evaluator.
std::vector<float> run(const Case &k, bool hostTuned) {
  std::vector<const Attribute *> attrs;
  for (auto &a : k.attrs) attrs.push_back(a.get());
  KernelCall call("", k.op, 17, attrs);
  std::vector<const Tensor *> in;
  for (const Tensor &t : k.inputs) in.push_back(&t);
  call.inputs = in;
  call.hostTuned = hostTuned;
  auto r = evaluateKernel(call);
  EXPECT_TRUE(r.ok()) << k.op << ": " << r.status();
  if (!r.ok()) return {};
  return *(*r)[0].values<float>();
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({"MatMul", {}, {}});
  cs.back().inputs.push_back(evaltest::floats({2, 48, 200}, values(2 * 48 * 200, 1)));
  cs.back().inputs.push_back(evaltest::floats({200, 40}, values(200 * 40, 2)));
  cs.push_back({"MatMul", {}, {}}); // [seq, 1, d] x W: one product when tuned
  cs.back().inputs.push_back(evaltest::floats({16, 1, 64}, values(16 * 64, 11)));
  cs.back().inputs.push_back(evaltest::floats({64, 24}, values(64 * 24, 12)));
  cs.back().reshaped = true;
  cs.push_back({"Gemm", {}, {}});
  cs.back().inputs.push_back(evaltest::floats({200, 30}, values(200 * 30, 3)));
  cs.back().inputs.push_back(evaltest::floats({50, 200}, values(50 * 200, 4)));
  cs.back().attrs.push_back(intAttr("transA", 1));
  cs.back().attrs.push_back(intAttr("transB", 1));
  cs.push_back({"Conv", {}, {}});
  cs.back().inputs.push_back(evaltest::floats({1, 16, 12, 12}, values(16 * 144, 5)));
  cs.back().inputs.push_back(evaltest::floats({24, 16, 3, 3}, values(24 * 16 * 9, 6)));
  // Depthwise: folding's vector-matrix product, the evaluator's direct
  // planes (Note [Depthwise planes] in Conv.cpp), another order of the sums.
  cs.push_back({"Conv", {}, {}});
  cs.back().inputs.push_back(evaltest::floats({1, 8, 20, 20}, values(8 * 400, 7)));
  cs.back().inputs.push_back(evaltest::floats({8, 1, 5, 5}, values(8 * 25, 8)));
  cs.back().attrs.push_back(intAttr("group", 8));
  cs.back().reshaped = true;
  cs.push_back({"ConvTranspose", {}, {}});
  cs.back().inputs.push_back(evaltest::floats({1, 32, 6, 6}, values(32 * 36, 9)));
  cs.back().inputs.push_back(evaltest::floats({32, 8, 3, 3}, values(32 * 8 * 9, 10)));
  return cs;
}

TEST(Products, FoldingAlwaysRunsTheBaselineBuild) {
  EXPECT_STREQ(matrixProductsBuild(false), "baseline");
}

TEST(Products, EnvironmentForcesTheBaselineBuild) {
  if (!baselineForced()) GTEST_SKIP() << "ONNXIR_BASELINE_PRODUCTS is not set";
  EXPECT_STREQ(matrixProductsBuild(true), "baseline");
}

// Both builds agree to float rounding; the tuned one, where it runs, really
// is another build (FMA rounds differently somewhere in these sums), and
// where it does not, the two calls are the same code, bit for bit. A case
// the tuned call runs as another product shape or loop (reshaped: the
// depthwise planes) is held to the rounding bound only: whether its bits
// differ is the compiler's choice (clang -O1 gives the baseline's there).
TEST(Products, TunedBuildAgreesWithBaseline) {
  bool tuned = std::string(matrixProductsBuild(true)) == "avx2-fma";
  std::vector<Case> cs = cases();
  for (size_t ci = 0; ci < cs.size(); ++ci) {
    const Case &k = cs[ci];
    std::vector<float> base = run(k, false), host = run(k, true);
    ASSERT_EQ(base.size(), host.size()) << k.op;
    ASSERT_FALSE(base.empty()) << k.op;
    size_t differ = 0;
    for (size_t i = 0; i < base.size(); ++i) {
      EXPECT_NEAR(host[i], base[i], 1e-5f * (1.0f + std::fabs(base[i]))) << k.op << " " << i;
      differ += std::memcmp(&host[i], &base[i], sizeof(float)) != 0;
    }
    if (k.reshaped) continue; // another loop: its bits may or may not differ
    if (tuned) {
      EXPECT_GT(differ, 0u) << k.op << " (case " << ci << "): the tuned build gave the baseline's bits";
    } else {
      EXPECT_EQ(differ, 0u) << k.op << " (case " << ci << ")";
    }
  }
}

// The evaluator asks for the tuned build: a model's MatMul gives the
// hostTuned kernel's result.
TEST(Products, EvaluatorRunsTheTunedBuild) {
  auto m = evaltest::parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 48, 200] a, float[200, 40] b) => (float[2, 48, 40] y)
{
  y = MatMul (a, b)
}
)");
  ASSERT_TRUE(m);
  Case k = std::move(cases()[0]);
  auto r = evaluate(*m, {{"a", k.inputs[0]}, {"b", k.inputs[1]}});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> y = *r->at("y").values<float>(), host = run(k, true);
  ASSERT_EQ(y.size(), host.size());
  EXPECT_EQ(std::memcmp(y.data(), host.data(), y.size() * sizeof(float)), 0);
}

} // namespace
