//===- KernelGuardsTest.cpp - Kernel guards next to the calls they pass ---===//
//
// Each guard of a kernel that refuses (or accepts) a call is tested on a call
// that differs from an accepted one in that condition alone, so dropping or
// flipping the guard changes a result (docs/Mutation.md: the first report's
// #9 and #39; seed 48 at fe2c29d, #65).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

using kerneltest::attrs1;
using kerneltest::call;

// Gemm multiplies matrices: an A of rank 3 (or 1) is refused, not read as the
// matrix its first dims would make (#9 dropped `a->rank() != 2`: a [2,2,2] A
// gave the product of its first 2x2 block).
TEST(KernelGuards, GemmRefusesOperandsThatAreNotMatrices) {
  Tensor a2 = makeFloatTensor({2, 2}, {1, 2, 3, 4});
  Tensor a3 = makeFloatTensor({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor a1 = makeFloatTensor({2}, {1, 2});
  auto ok = call("Gemm", 17, {&a2, &a2});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*(*ok)[0].values<float>(), (std::vector<float>{7, 10, 15, 22}));
  for (const Tensor *bad : {&a3, &a1}) {
    auto r = call("Gemm", 17, {bad, &a2});
    ASSERT_FALSE(r.ok()) << "A of rank " << bad->dims().size();
    EXPECT_NE(r.status().message().find("Gemm operands"), std::string::npos) << r.status();
    auto rb = call("Gemm", 17, {&a2, bad});
    ASSERT_FALSE(rb.ok()) << "B of rank " << bad->dims().size();
    EXPECT_NE(rb.status().message().find("Gemm operands"), std::string::npos) << rb.status();
  }
}

// Dropout folds to its input in inference mode. Before opset 7 that needs
// is_test = 1; from 7 on (and at opset 0, which a caller passes when it does
// not know the opset: the newest) there is no is_test and it folds. #39
// dropped `c.opset > 0` and refused the unknown-opset call as training mode.
TEST(KernelGuards, DropoutTrainingModeOnlyBeforeOpset7WithoutIsTest) {
  Tensor x = makeFloatTensor({3}, {1, -2, 3});
  for (int64_t opset : {0, 7, 13}) {
    auto r = call("Dropout", opset, {&x});
    ASSERT_TRUE(r.ok()) << "opset " << opset << ": " << r.status();
    EXPECT_EQ(*(*r)[0].values<float>(), (std::vector<float>{1, -2, 3})) << "opset " << opset;
  }
  // Training mode (before 7 without is_test, from 12 with training_mode
  // true) drops each element or scales it by 1 / (1 - ratio), 2 at the
  // default ratio 0.5 (Note [Dropout in training mode]): never the input
  // unchanged, which inference gives.
  auto trained = [&](const absl::StatusOr<std::vector<Tensor>> &r) {
    if (!r.ok()) return false;
    std::vector<float> v = *(*r)[0].values<float>(), in = {1, -2, 3};
    for (size_t k = 0; k < in.size(); ++k)
      if (v[k] != 0 && v[k] != 2 * in[k]) return false;
    return true;
  };
  EXPECT_TRUE(trained(call("Dropout", 6, {&x})));
  auto test = call("Dropout", 6, {&x}, attrs1(intAttr("is_test", 1)));
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(*(*test)[0].values<float>(), (std::vector<float>{1, -2, 3}));
  // training_mode (opset 12) given as true is training mode at any opset.
  Tensor yes = makeTensor(DataType::Bool, {}, std::string(1, '\1'));
  Tensor no = makeTensor(DataType::Bool, {}, std::string(1, '\0'));
  EXPECT_TRUE(trained(call("Dropout", 13, {&x, nullptr, &yes})));
  auto inference = call("Dropout", 13, {&x, nullptr, &no});
  ASSERT_TRUE(inference.ok()) << inference.status();
  EXPECT_EQ(*(*inference)[0].values<float>(), (std::vector<float>{1, -2, 3}));
}

// PRelu before opset 7 (slope broadcast the legacy way) is not folded; at
// opset 0 (unknown: the newest) it is, as at 7 and 16. #65 made the test
// `opset >= 0` and refused the unknown-opset call.
TEST(KernelGuards, PReluLegacyOnlyBeforeOpset7) {
  Tensor x = makeFloatTensor({3}, {-2, 0.5, -1});
  Tensor slope = makeFloatTensor({1}, {0.25});
  for (int64_t opset : {0, 7, 16}) {
    auto r = call("PRelu", opset, {&x, &slope});
    ASSERT_TRUE(r.ok()) << "opset " << opset << ": " << r.status();
    EXPECT_EQ(*(*r)[0].values<float>(), (std::vector<float>{-0.5, 0.5, -0.25})) << "opset " << opset;
  }
  EXPECT_FALSE(call("PRelu", 6, {&x, &slope}).ok());
}

} // namespace
