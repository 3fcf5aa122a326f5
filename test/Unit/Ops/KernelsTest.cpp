//===- KernelsTest.cpp - The folding kernels, one operator at a time ------===//
#include "KernelTestUtil.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace onnxir;

namespace {

using kerneltest::Call;
using kerneltest::f32;
using kerneltest::i32;
using kerneltest::i64;
using kerneltest::i8;
using kerneltest::typed;
using kerneltest::u8;

std::vector<float> fv(const Tensor &t) { return *t.values<float>(); }
std::vector<int64_t> iv(const Tensor &t) { return *t.values<int64_t>(); }

TEST(Kernels, AddBroadcastsLikeNumpy) {
  Tensor r = Call("Add").in(f32({2, 1}, {1, 2})).in(f32({3}, {10, 20, 30})).one();
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(fv(r), (std::vector<float>{11, 21, 31, 12, 22, 32}));
}

TEST(Kernels, LegacyBroadcastWithAxis) {
  Tensor r = Call("Add", 6)
                 .in(f32({2, 3}, {0, 0, 0, 0, 0, 0}))
                 .in(f32({2}, {1, 2}))
                 .attr(intAttr("broadcast", 1))
                 .attr(intAttr("axis", 0))
                 .one();
  EXPECT_EQ(fv(r), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

TEST(Kernels, IntegerSemantics) {
  // int8 wraps, Div truncates toward zero, Mod follows the divisor's sign.
  EXPECT_EQ(iv(Call("Add").in(i8({1}, {127})).in(i8({1}, {1})).one()),
            (std::vector<int64_t>{-128}));
  EXPECT_EQ(iv(Call("Div").in(i32({2}, {-7, 7})).in(i32({2}, {2, -2})).one()),
            (std::vector<int64_t>{-3, -3}));
  EXPECT_EQ(iv(Call("Mod").in(i32({2}, {-7, 7})).in(i32({2}, {3, -3})).one()),
            (std::vector<int64_t>{2, -2}));
  EXPECT_EQ(iv(Call("Mod").in(i32({2}, {-7, 7})).in(i32({2}, {3, -3}))
                   .attr(intAttr("fmod", 1)).one()),
            (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(iv(Call("Sub").in(u8({1}, {0})).in(u8({1}, {1})).one()),
            (std::vector<int64_t>{255}));
  // Integer division by zero is not folded.
  EXPECT_FALSE(Call("Div").in(i32({1}, {1})).in(i32({1}, {0})).run().ok());
}

TEST(Kernels, FloatIsComputedInFloat) {
  // 16777216 + 1 is not representable in float: float math must drop it.
  Tensor r = Call("Add").in(f32({1}, {16777216.f})).in(f32({1}, {1.f})).one();
  EXPECT_EQ(fv(r)[0], 16777216.f);
}

TEST(Kernels, CastToHalfAndBack) {
  Tensor h = Call("Cast").in(f32({3}, {1.0f, 65504.f, 0.1f}))
                 .attr(intAttr("to", (int64_t)DataType::Float16)).one();
  EXPECT_EQ(h.dataType(), DataType::Float16);
  std::vector<float> back = fv(h);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], 65504.f);
  EXPECT_NEAR(back[2], 0.1f, 1e-4);
  Tensor b = Call("Cast").in(f32({1}, {1.5f}))
                 .attr(intAttr("to", (int64_t)DataType::BFloat16)).one();
  EXPECT_EQ(fv(b)[0], 1.5f);
  // Out-of-range float to int is undefined in ONNX: refused.
  EXPECT_FALSE(Call("Cast").in(f32({1}, {1e20f}))
                   .attr(intAttr("to", (int64_t)DataType::Int32)).run().ok());
  Tensor s = Call("Cast").in(f32({1}, {0.5f}))
                 .attr(intAttr("to", (int64_t)DataType::String)).one();
  EXPECT_EQ((*s.strings())[0], "0.5");
}

TEST(Kernels, ReshapeZeroAndMinusOne) {
  Tensor data = f32({2, 3, 4}, std::vector<float>(24, 1.f));
  Tensor r = Call("Reshape").in(data).in(i64({2}, {0, -1})).one();
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 12}));
  Tensor z = Call("Reshape", 14).in(f32({0, 3}, {})).in(i64({2}, {3, 0}))
                 .attr(intAttr("allowzero", 1)).one();
  EXPECT_EQ(z.dims(), (std::vector<int64_t>{3, 0}));
}

TEST(Kernels, SqueezeUnsqueezeAcrossOpsets) {
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(Call("Squeeze", 11).in(x).attr(intsAttr("axes", {0})).one().dims(),
            (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Call("Squeeze", 13).in(x).in(i64({1}, {-1})).one().dims(),
            (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Call("Squeeze", 13).in(x).one().dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Call("Unsqueeze", 11).in(f32({3}, {1, 2, 3})).attr(intsAttr("axes", {0, -1}))
                .one().dims(),
            (std::vector<int64_t>{1, 3, 1}));
  EXPECT_EQ(Call("Unsqueeze", 13).in(f32({3}, {1, 2, 3})).in(i64({1}, {1})).one().dims(),
            (std::vector<int64_t>{3, 1}));
}

TEST(Kernels, SliceNegativeStepsAndClamping) {
  Tensor x = i64({5}, {0, 1, 2, 3, 4});
  EXPECT_EQ(iv(Call("Slice").in(x).in(i64({1}, {-1})).in(i64({1}, {INT64_MIN}))
                   .in(i64({1}, {0})).in(i64({1}, {-2})).one()),
            (std::vector<int64_t>{4, 2, 0}));
  EXPECT_EQ(iv(Call("Slice").in(x).in(i64({1}, {1})).in(i64({1}, {1000})).one()),
            (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(iv(Call("Slice", 9).in(x).attr(intsAttr("starts", {-2}))
                   .attr(intsAttr("ends", {5})).one()),
            (std::vector<int64_t>{3, 4}));
}

TEST(Kernels, GatherTransposeConcatSplit) {
  Tensor x = i64({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(iv(Call("Gather").in(x).in(i64({2}, {-1, 0})).attr(intAttr("axis", 1)).one()),
            (std::vector<int64_t>{2, 0, 5, 3}));
  Tensor t = Call("Transpose").in(x).one();
  EXPECT_EQ(t.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(iv(t), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(iv(Call("Concat").in(x).in(x).attr(intAttr("axis", -1)).one()),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  Call split("Split", 13);
  split.in(x).in(i64({2}, {1, 2})).attr(intAttr("axis", 1));
  split.numOutputs = 2;
  auto parts = split.run();
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ(iv((*parts)[1]), (std::vector<int64_t>{1, 2, 4, 5}));
}

TEST(Kernels, ReduceAttributeAndInputAxes) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(fv(Call("ReduceSum", 11).in(x).attr(intsAttr("axes", {1})).one()),
            (std::vector<float>{3, 7}));
  Tensor r = Call("ReduceSum", 13).in(x).in(i64({1}, {0})).attr(intAttr("keepdims", 0)).one();
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(fv(r), (std::vector<float>{4, 6}));
  EXPECT_EQ(fv(Call("ReduceMean", 17).in(x).one()), (std::vector<float>{2.5}));
  Tensor noop = Call("ReduceSum", 13).in(x).in(i64({0}, {}))
                    .attr(intAttr("noop_with_empty_axes", 1)).one();
  EXPECT_EQ(noop.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(fv(Call("ReduceMax", 18).in(x).in(i64({1}, {1})).one()),
            (std::vector<float>{2, 4}));
}

TEST(Kernels, MatMulAndGemm) {
  Tensor a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2}, {1, 1});
  Tensor mv = Call("MatMul").in(a).in(b).one();
  EXPECT_EQ(mv.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(fv(mv), (std::vector<float>{3, 7}));
  Tensor g = Call("Gemm").in(a).in(a).in(f32({1}, {1}))
                 .attr(intAttr("transA", 1)).attr(floatAttr("alpha", 2.f)).one();
  // A^T A = [[10,14],[14,20]]; * 2 + 1.
  EXPECT_EQ(fv(g), (std::vector<float>{21, 29, 29, 41}));
}

TEST(Kernels, ConstantOfShapeRespectsSizeLimit) {
  Call c("ConstantOfShape");
  c.in(i64({1}, {1000}));
  c.maxBytes = 100;
  auto r = c.run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  Tensor ok = Call("ConstantOfShape").in(i64({2}, {2, 2}))
                  .attr(tensorAttr("value", i64({1}, {7}))).one();
  EXPECT_EQ(iv(ok), (std::vector<int64_t>{7, 7, 7, 7}));
}

TEST(Kernels, ConstantForms) {
  EXPECT_EQ(iv(Call("Constant").attr(intsAttr("value_ints", {1, 2})).one()),
            (std::vector<int64_t>{1, 2}));
  Tensor f = Call("Constant").attr(floatAttr("value_float", 2.5f)).one();
  EXPECT_TRUE(f.dims().empty());
  EXPECT_EQ(fv(f)[0], 2.5f);
}

TEST(Kernels, RangeExpandTileWhere) {
  EXPECT_EQ(iv(Call("Range").in(i64({}, {10})).in(i64({}, {4})).in(i64({}, {-3})).one()),
            (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(Call("Expand").in(f32({3, 1}, {1, 2, 3})).in(i64({2}, {2, 1, }))
                .run().ok(), false); // [3,1] vs [2,1] do not broadcast
  EXPECT_EQ(Call("Expand").in(f32({3, 1}, {1, 2, 3})).in(i64({3}, {2, 1, 4})).one().dims(),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(iv(Call("Tile").in(i64({2}, {1, 2})).in(i64({1}, {2})).one()),
            (std::vector<int64_t>{1, 2, 1, 2}));
  Tensor cond = typed<uint8_t>(DataType::Bool, {2}, {1, 0});
  EXPECT_EQ(iv(Call("Where").in(cond).in(i64({2}, {1, 2})).in(i64({1}, {9})).one()),
            (std::vector<int64_t>{1, 9}));
}

TEST(Kernels, UnknownOpIsUnsupported) {
  auto r = Call("NoSuchOperator").in(f32({1}, {1})).run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(hasKernel("com.microsoft", "Add"));
}

} // namespace
