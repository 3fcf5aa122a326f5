//===- KernelBudgetTest.cpp - Kernels validate sizes before allocating ----===//
//
// Hostile constants: each case would allocate gigabytes, loop ~2^40 times or
// overflow int64 if a kernel computed before validating. Each must end at
// once with a status (the test itself is the timing: a regression hangs or
// dies with bad_alloc, under the sanitizers too).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <limits>

using namespace onnxir;

namespace {

/// A kernel call under the folding pass's default output budget.
struct BudgetCall : kerneltest::Call {
  BudgetCall(std::string o, int64_t v = 17) : kerneltest::Call(std::move(o), v) { maxBytes = 1 << 20; }
};

using kerneltest::f32;
using kerneltest::f64;
using kerneltest::i64;

Tensor strs(std::vector<int64_t> d, std::vector<std::string> v) {
  Tensor t;
  t.setDataType(DataType::String);
  t.setDims(d);
  t.stringData = std::move(v);
  t.setTyped(Tensor::TypedField::String);
  return t;
}

constexpr int64_t kBig = int64_t(1) << 40;

TEST(KernelBudget, SplitNumOutputsIsCheckedBeforeAllocating) {
  // num_outputs = 2^31-1 on a one-result node: once 16 GB of split sizes.
  BudgetCall s("Split", 18);
  s.in(f32({0}, {})).attr(intAttr("num_outputs", 2147483647));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The opset < 18 path took num_outputs too and built 2^31 even sizes of
  // an empty axis; it must go by the node's result count.
  BudgetCall old("Split", 13);
  old.in(f32({0}, {})).attr(intAttr("num_outputs", 2147483647));
  auto r = old.run();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->size(), 1u);
  // Split sizes whose sum overflows int64.
  BudgetCall ov("Split", 13);
  ov.in(f32({2}, {1, 2})).in(i64({2}, {INT64_MAX, INT64_MAX}));
  ov.numOutputs = 2;
  EXPECT_EQ(ov.code(), absl::StatusCode::kInvalidArgument);
  // A normal uneven opset-18 split still folds.
  BudgetCall ok("Split", 18);
  ok.in(f32({5}, {1, 2, 3, 4, 5})).attr(intAttr("num_outputs", 2));
  ok.numOutputs = 2;
  auto parts = ok.run();
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ((*parts)[1].dims(), (std::vector<int64_t>{2}));
}

TEST(KernelBudget, ShapeFromValuesIsBounded) {
  EXPECT_EQ(BudgetCall("ConstantOfShape").in(i64({2}, {kBig, 4})).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_NE(BudgetCall("ConstantOfShape").in(i64({2}, {kBig, kBig})).code(), // overflows int64
            absl::StatusCode::kOk);
  EXPECT_EQ(BudgetCall("Expand").in(f32({1}, {1})).in(i64({2}, {kBig, 4})).code(),
            absl::StatusCode::kResourceExhausted);
  // Tile: 4 * 2^62 wraps to 0 in int64; must not be an empty "result".
  EXPECT_NE(BudgetCall("Tile").in(f32({4}, {1, 2, 3, 4})).in(i64({1}, {int64_t(1) << 62})).code(),
            absl::StatusCode::kOk);
  EXPECT_EQ(BudgetCall("Tile").in(f32({2}, {1, 2})).in(i64({1}, {kBig})).code(),
            absl::StatusCode::kResourceExhausted);
  // Range of 1e30 elements: past int64 before the size check.
  EXPECT_NE(BudgetCall("Range").in(f64({}, {0})).in(f64({}, {1e30})).in(f64({}, {1})).code(),
            absl::StatusCode::kOk);
  EXPECT_EQ(BudgetCall("Range").in(i64({}, {0})).in(i64({}, {kBig})).in(i64({}, {1})).code(),
            absl::StatusCode::kResourceExhausted);
  // OneHot depth 1e30 and NaN.
  EXPECT_NE(BudgetCall("OneHot", 11).in(i64({1}, {0})).in(f32({}, {1e30f})).in(f32({2}, {0, 1}))
                .code(),
            absl::StatusCode::kOk);
  EXPECT_NE(BudgetCall("OneHot", 11).in(i64({1}, {0})).in(f32({}, {NAN})).in(f32({2}, {0, 1}))
                .code(),
            absl::StatusCode::kOk);
  EXPECT_EQ(BudgetCall("OneHot", 11).in(i64({4}, {0, 1, 2, 3})).in(i64({}, {kBig}))
                .in(f32({2}, {0, 1})).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(KernelBudget, OutputsLargerThanInputs) {
  // String Equal broadcasts [N,1] x [1,N] into N^2 elements.
  std::vector<std::string> v(2048, "x");
  EXPECT_EQ(BudgetCall("Equal", 19).in(strs({2048, 1}, v)).in(strs({1, 2048}, v)).code(),
            absl::StatusCode::kResourceExhausted);
  // NonZero of a rank-4000 tensor of 400 ones: 4000 x 400 int64 indices.
  std::vector<int64_t> dims(3999, 1);
  dims.push_back(400);
  BudgetCall nz("NonZero");
  nz.in(f32(dims, std::vector<float>(400, 1.f)));
  nz.maxBytes = 1 << 20;
  EXPECT_EQ(nz.code(), absl::StatusCode::kResourceExhausted);
}

TEST(KernelBudget, EmptyInputsWithHugeDims) {
  // [2^40, 2^40, 0] holds no data; ReduceSum over the empty axis would
  // allocate 2^80 elements, Softmax/CumSum/Concat would loop 2^40 times.
  Tensor e = f32({kBig, kBig, 0}, {});
  EXPECT_EQ(BudgetCall("ReduceSum", 13).in(e).in(i64({1}, {2})).code(),
            absl::StatusCode::kResourceExhausted);
  Tensor e2 = f32({kBig, 0}, {});
  EXPECT_EQ(BudgetCall("Softmax", 13).in(e2).attr(intAttr("axis", 1)).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(BudgetCall("CumSum").in(e2).in(i64({}, {1})).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(BudgetCall("Concat").in(e2).in(e2).attr(intAttr("axis", 1)).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(BudgetCall("EyeLike").in(e2).code(), absl::StatusCode::kResourceExhausted);
  // Flatten/Reshape of dims whose products overflow int64.
  Tensor e3 = f32({int64_t(1) << 62, 8, 0}, {});
  EXPECT_NE(BudgetCall("Flatten").in(e3).attr(intAttr("axis", 2)).code(), absl::StatusCode::kOk);
  BudgetCall rs("Reshape");
  rs.maxBytes = UINT64_MAX;
  rs.in(f32({0}, {})).in(i64({3}, {int64_t(1) << 62, 8, 0}));
  EXPECT_NE(rs.code(), absl::StatusCode::kOk);
  // Small empty tensors still fold.
  auto ok = BudgetCall("ReduceSum", 13).in(f32({2, 0}, {})).in(i64({1}, {1})).run();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at(0).dims(), (std::vector<int64_t>{2, 1}));
}

TEST(KernelBudget, DepthToSpaceBlockSize) {
  BudgetCall d("DepthToSpace", 13);
  d.in(f32({1, 4, 1, 1}, {1, 2, 3, 4})).attr(intAttr("blocksize", int64_t(1) << 40));
  EXPECT_EQ(d.code(), absl::StatusCode::kInvalidArgument);
}

} // namespace
