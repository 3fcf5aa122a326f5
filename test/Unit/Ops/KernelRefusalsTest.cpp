//===- KernelRefusalsTest.cpp - Calls a kernel refuses ---------*- C++ -*-===//
//
// evaluateKernel is public: a caller may leave out an input the operator
// requires, give it a type the operator does not take, or a tensor whose
// dims the result cannot hold. Each such call is refused with an error that
// says why, next to the same call in an accepted form (seed 49 at 57a26ad7:
// #52 tested input #0 for Expand's shape instead of #1 and read the missing
// shape; #65 let Flatten's tail count overflow into an invalid result; #71
// let a string base into Pow).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

using kerneltest::call;

bool says(const absl::Status &s, const std::string &what) {
  return s.message().find(what) != std::string::npos;
}

// Ops whose second input is required: data x [2,3] and a second operand
// valid for each (a shape, repeats, indices or axes). Left out (null, or a
// shorter list), it is an error.
TEST(KernelRefusals, SecondInputRequired) {
  Tensor x = makeFloatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor shape = makeInt64Tensor({2}, {2, 3});
  Tensor reps = makeInt64Tensor({2}, {1, 2});
  Tensor idx = makeInt64Tensor({1}, {1});
  Tensor idx2 = makeInt64Tensor({2, 1}, {0, 1});
  Tensor axes = makeInt64Tensor({1}, {0});
  struct {
    const char *op;
    const Tensor *second;
  } cases[] = {{"Expand", &shape}, {"Reshape", &shape},       {"Tile", &reps},
               {"Gather", &idx},   {"GatherElements", &idx2}, {"Unsqueeze", &axes}};
  for (auto &k : cases) {
    SCOPED_TRACE(k.op);
    auto ok = call(k.op, 14, {&x, k.second});
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(ok->size(), 1u);
    EXPECT_FALSE(call(k.op, 14, {&x, nullptr}).ok());
    EXPECT_FALSE(call(k.op, 14, {&x}).ok());
  }
}

// Expand names what is missing.
TEST(KernelRefusals, ExpandWithoutShapeSaysSo) {
  Tensor x = makeFloatTensor({3}, {1, 2, 3});
  Tensor shape = makeInt64Tensor({2}, {2, 3});
  auto ok = call("Expand", 13, {&x, &shape});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].dims(), (std::vector<int64_t>{2, 3}));
  for (auto inputs : {std::vector<const Tensor *>{&x, nullptr}, std::vector<const Tensor *>{&x}}) {
    auto r = call("Expand", 13, inputs);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(says(r.status(), "Expand without shape")) << r.status();
  }
}

// Flatten of dims whose element count on one side of the axis overflows
// int64 (a tensor whose data cannot match its dims: only a caller of the API
// can make one; an empty one is bounded before any kernel, Note [Empty
// inputs with huge dims]) is refused as such, on either side of the axis.
// Dims that fit flatten to [head, tail].
TEST(KernelRefusals, FlattenCountOverflowOnEitherSide) {
  const int64_t huge = int64_t(1) << 62;
  struct {
    std::vector<int64_t> dims;
    int64_t axis;
    std::vector<int64_t> ok; // empty: refused
  } cases[] = {{{2, huge, 4}, 1, {}}, {{4, huge, 2}, 2, {}},
               {{2, 3, 4}, 1, {2, 12}}, {{2, 3, 4}, 2, {6, 4}}, {{2, 3, 4}, 0, {1, 24}}};
  for (auto &k : cases) {
    SCOPED_TRACE(::testing::PrintToString(k.dims) + " axis " + std::to_string(k.axis));
    Tensor t = makeTensor(DataType::Float, k.dims, std::string(24 * sizeof(float), '\0'));
    std::vector<std::unique_ptr<Attribute>> as;
    as.push_back(intAttr("axis", k.axis));
    auto r = call("Flatten", 13, {&t}, as);
    if (k.ok.empty()) {
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(says(r.status(), "Flatten dims overflow")) << r.status();
    } else {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].dims(), k.ok);
    }
  }
}

// Pow takes numbers: a string base or exponent is refused (not parsed as a
// number); float and int64 operands are computed.
TEST(KernelRefusals, PowRefusesStrings) {
  Tensor s;
  s.setDataType(DataType::String);
  s.setDims({2});
  s.stringData = {"2", "3"};
  s.setTyped(Tensor::TypedField::String);
  Tensor f = makeFloatTensor({2}, {2, 3});
  Tensor i = makeInt64Tensor({2}, {2, 3});
  auto ok = call("Pow", 15, {&f, &i});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*(*ok)[0].values<float>(), (std::vector<float>{4, 27}));
  for (auto inputs : {std::vector<const Tensor *>{&s, &f}, std::vector<const Tensor *>{&f, &s},
                      std::vector<const Tensor *>{&s, &i}, std::vector<const Tensor *>{&s, &s}}) {
    auto r = call("Pow", 15, inputs);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
    EXPECT_TRUE(says(r.status(), "Pow types")) << r.status();
  }
}

} // namespace
