//===- CastTest.cpp - Cast folding to float8/float4/E8M0 ------------------===//
//
// One test per rule of Note [Cast to small floats] (lib/Ops/Cast.cpp).
// Expected codes are worked out by hand from the ONNX spec's
// tables and format definitions; each comment shows the arithmetic.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace onnxir;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct CastRun {
  DataType to;
  int64_t saturate = -1; // -1: attribute absent
  std::string roundMode; // empty: attribute absent
  Tensor input;

  absl::StatusOr<std::vector<Tensor>> run() const {
    std::vector<std::unique_ptr<Attribute>> owned;
    owned.push_back(intAttr("to", (int64_t)to));
    if (saturate >= 0) owned.push_back(intAttr("saturate", saturate));
    if (!roundMode.empty()) owned.push_back(stringAttr("round_mode", roundMode));
    std::vector<const Attribute *> attrs;
    for (auto &a : owned) attrs.push_back(a.get());
    std::vector<const Tensor *> ins = {&input};
    KernelCall c("", "Cast", 25, attrs);
    c.inputs = ins;
    return evaluateKernel(c);
  }
};

/// The output bytes of casting `v` (float32) to `to`, or "unfolded".
std::string codes(DataType to, std::vector<float> v, int64_t saturate = -1,
                  std::string mode = "") {
  CastRun r{to, saturate, mode, makeFloatTensor({(int64_t)v.size()}, v)};
  auto out = r.run();
  if (!out.ok()) {
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
    return "unfolded";
  }
  EXPECT_EQ((*out)[0].dataType(), to);
  return (*out)[0].rawData().str();
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back((char)x);
  return s;
}

constexpr DataType E4M3FN = DataType::Float8E4M3FN, E4M3FNUZ = DataType::Float8E4M3FNUZ,
                   E5M2 = DataType::Float8E5M2, E5M2FNUZ = DataType::Float8E5M2FNUZ,
                   E8M0 = DataType::Float8E8M0, E2M1 = DataType::Float4E2M1;

TEST(CastSmallFloat, Float8RoundsToNearestEven) {
  // E4M3FN 1.0 = 0.0111.000 = 0x38, 1.125 = 0x39, 1.25 = 0x3A.
  // 1.0625 is halfway between 0x38 and 0x39: the even code 0x38.
  // 1.1875 is halfway between 0x39 and 0x3A: the even code 0x3A.
  EXPECT_EQ(codes(E4M3FN, {1.0f, 1.0625f, 1.1875f}), bytes({0x38, 0x38, 0x3a}));
  // Subnormals: the smallest is 2^-9 = 0x01; 2^-10 is halfway to 0: even -> 0.
  EXPECT_EQ(codes(E4M3FN, {std::ldexp(1.f, -9), std::ldexp(1.f, -10)}), bytes({0x01, 0x00}));
  // E5M2 1.0 = 0.01111.00 = 0x3C; E5M2FNUZ (bias 16) 1.0 = 0.10000.00 = 0x40.
  EXPECT_EQ(codes(E5M2, {1.0f}), bytes({0x3c}));
  EXPECT_EQ(codes(E5M2FNUZ, {-1.0f}), bytes({0xc0}));
  // E4M3FNUZ (bias 8): -1.0 = 1.1000.000 = 0xC0 (the FNUZ types keep the sign
  // of nonzero values).
  EXPECT_EQ(codes(E4M3FNUZ, {-1.0f}), bytes({0xc0}));
}

TEST(CastSmallFloat, Float8OverflowComparesTheRoundedValue) {
  // E4M3FN: max 448 (0x7E); the next step would be 480. 460 rounds to 448 and
  // 464 (a tie) to the even 448: neither overflows, even without saturation.
  EXPECT_EQ(codes(E4M3FN, {460.f, 464.f}, 0), bytes({0x7e, 0x7e}));
  // 470 rounds to 480 > 448: NaN (sign kept) without saturation, max with.
  EXPECT_EQ(codes(E4M3FN, {470.f, -470.f}, 0), bytes({0x7f, 0xff}));
  EXPECT_EQ(codes(E4M3FN, {470.f, -470.f}, 1), bytes({0x7e, 0xfe}));
  // E5M2: max 57344 = 1.75 * 2^15 (0x7B); the next step would be 2^16 =
  // 65536. 61440 is the tie, and the even neighbour is 2^16 (mantissa 00):
  // overflow, so Inf (0x7C) or, saturating, 0x7B. 61000 rounds down.
  EXPECT_EQ(codes(E5M2, {61440.f, 61000.f}, 0), bytes({0x7c, 0x7b}));
  EXPECT_EQ(codes(E5M2, {61440.f}), bytes({0x7b}));
  // FNUZ without saturation: the single NaN 0x80 for either sign.
  EXPECT_EQ(codes(E4M3FNUZ, {300.f, -300.f}, 0), bytes({0x80, 0x80}));
  EXPECT_EQ(codes(E4M3FNUZ, {300.f, -300.f}, 1), bytes({0x7f, 0xff}));
}

TEST(CastSmallFloat, Float8Infinities) {
  // saturate=1: E4M3FN and E5M2 give +-FLT_MAX.
  EXPECT_EQ(codes(E4M3FN, {kInf, -kInf}), bytes({0x7e, 0xfe}));
  EXPECT_EQ(codes(E5M2, {kInf, -kInf}), bytes({0x7b, 0xfb}));
  // saturate=0: E4M3FN NaN with the sign, E5M2 keeps the infinity, FNUZ NaN.
  EXPECT_EQ(codes(E4M3FN, {kInf, -kInf}, 0), bytes({0x7f, 0xff}));
  EXPECT_EQ(codes(E5M2, {kInf, -kInf}, 0), bytes({0x7c, 0xfc}));
  EXPECT_EQ(codes(E5M2FNUZ, {-kInf}, 0), bytes({0x80}));
  // saturate=1 to FNUZ: Operators.md says FLT_MAX, the float8 note says NaN.
  EXPECT_EQ(codes(E4M3FNUZ, {kInf}), "unfolded");
  EXPECT_EQ(codes(E5M2FNUZ, {-kInf}, 1), "unfolded");
}

TEST(CastSmallFloat, Float8ZerosAndNaN) {
  // -0 stays -0 (0x80) in E4M3FN and E5M2, is +0 in the FNUZ types, and so
  // is a negative value that rounds to zero (0x80 is their NaN).
  EXPECT_EQ(codes(E4M3FN, {-0.0f}), bytes({0x80}));
  EXPECT_EQ(codes(E5M2, {-0.0f}), bytes({0x80}));
  EXPECT_EQ(codes(E4M3FNUZ, {-0.0f, -std::ldexp(1.f, -12)}), bytes({0x00, 0x00}));
  EXPECT_EQ(codes(E5M2FNUZ, {-0.0f}), bytes({0x00}));
  // NaN: E4M3FN 0x7F (sign kept), E5M2 its quiet NaN 0x7E, FNUZ 0x80.
  EXPECT_EQ(codes(E4M3FN, {kNaN, -kNaN}), bytes({0x7f, 0xff}));
  EXPECT_EQ(codes(E5M2, {kNaN, -kNaN}, 0), bytes({0x7e, 0xfe}));
  EXPECT_EQ(codes(E4M3FNUZ, {kNaN, -kNaN}), bytes({0x80, 0x80}));
}

TEST(CastSmallFloat, Float8FromDoubleRoundsOnce) {
  // 1.0625 + 2^-40 is just above the tie between 1.0 and 1.125: 0x39. Going
  // through float32 first would drop the 2^-40 and give the even 0x38.
  double x = 1.0625 + std::ldexp(1.0, -40);
  std::string raw(8, '\0');
  std::memcpy(raw.data(), &x, 8);
  CastRun r{E4M3FN, -1, "", makeTensor(DataType::Double, {1}, raw)};
  auto out = r.run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rawData().str(), bytes({0x39}));
}

TEST(CastSmallFloat, Float4RulesAndPacking) {
  // E2M1 magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6 are codes 0..7; sign is 0x8.
  // Ties to even: 5 -> 4 (0x6), 0.25 -> 0, 0.75 -> 1 (0x2), 1.25 -> 1 (0x2).
  // Beyond 6 (and +-Inf) clamp to +-6: 0x7 / 0xF. -0 is 0x8, and so is NaN
  // (ONNX's reference and backend data; the float4 note's table says 6).
  // Two per byte, the first in the low nibble.
  EXPECT_EQ(codes(E2M1, {5.f, 0.25f}), bytes({0x06}));
  EXPECT_EQ(codes(E2M1, {0.75f, 1.25f}), bytes({0x22}));
  EXPECT_EQ(codes(E2M1, {7.f, -8.f}), bytes({0xf7}));
  EXPECT_EQ(codes(E2M1, {kInf, -kInf}), bytes({0xf7}));
  EXPECT_EQ(codes(E2M1, {kNaN, -0.0f}), bytes({0x88}));
  // `saturate` applies to float8 only: 7 still clamps to 6.
  EXPECT_EQ(codes(E2M1, {7.f}, 0), bytes({0x07}));
  // An odd count leaves the high nibble zero.
  EXPECT_EQ(codes(E2M1, {1.f}), bytes({0x02}));
  // A NaN with the sign bit: ml_dtypes releases give 0x8 or 0x0.
  EXPECT_EQ(codes(E2M1, {-kNaN}), "unfolded");
}

TEST(CastSmallFloat, E8M0RoundModes) {
  // E8M0 code = float32 exponent field: 1.0 -> 127, 2.0 -> 128, 0.5 -> 126.
  // up (the default): any mantissa bit rounds up: 1.1 -> 2 (128),
  // 0.75 -> 1 (127); exact powers stay.
  EXPECT_EQ(codes(E8M0, {1.1f, 0.75f, 1.0f}), bytes({128, 127, 127}));
  EXPECT_EQ(codes(E8M0, {1.1f}, -1, "up"), bytes({128}));
  // down: the exponent field: 1.9 -> 1 (127), 3.0 -> 2 (128).
  EXPECT_EQ(codes(E8M0, {1.9f, 3.0f}, -1, "down"), bytes({127, 128}));
  // nearest, ties up: 1.5 -> 2 (128), 1.4 -> 1 (127), 2.9 -> 2 (128),
  // 3.0 = 1.5 * 2 -> 4 (129).
  EXPECT_EQ(codes(E8M0, {1.5f, 1.4f, 2.9f, 3.0f}, -1, "nearest"),
            bytes({128, 127, 128, 129}));
  // An unknown round_mode is an invalid node, not a guess.
  CastRun bad{E8M0, -1, "sideways", makeFloatTensor({1}, {1.f})};
  EXPECT_EQ(bad.run().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CastSmallFloat, E8M0SaturationAndSpecials) {
  // 1.5 * 2^127 (exponent field 254) rounds up past the max 2^127 (254):
  // saturating it stays 254, otherwise NaN (255); down never overflows.
  float big = std::ldexp(1.5f, 127);
  EXPECT_EQ(codes(E8M0, {big}), bytes({254}));
  EXPECT_EQ(codes(E8M0, {big}, 0), bytes({255}));
  EXPECT_EQ(codes(E8M0, {big}, 0, "nearest"), bytes({255}));
  EXPECT_EQ(codes(E8M0, {big}, 0, "down"), bytes({254}));
  // NaN is 255; +0 saturates to the smallest code 0 (2^-127).
  EXPECT_EQ(codes(E8M0, {kNaN, 0.0f}), bytes({255, 0}));
  // +Inf without saturation: NaN in both the table and the reference.
  EXPECT_EQ(codes(E8M0, {kInf}, 0), bytes({255}));
}

TEST(CastSmallFloat, E8M0UnclearCasesAreNotFolded) {
  // Negative values and -0: "undefined"/"unspecified".
  EXPECT_EQ(codes(E8M0, {-2.0f}), "unfolded");
  EXPECT_EQ(codes(E8M0, {-0.0f}), "unfolded");
  // +Inf saturating: the table says max, the reference NaN.
  EXPECT_EQ(codes(E8M0, {kInf}), "unfolded");
  // +0 without saturation: the table says NaN (nearest), the reference 0.
  EXPECT_EQ(codes(E8M0, {0.0f}, 0), "unfolded");
  // float32 subnormals: the reference does not round them as the modes say.
  EXPECT_EQ(codes(E8M0, {std::ldexp(1.f, -130)}), "unfolded");
  // A double not exact in float32 (the reference rounds to float32 first).
  double x = 1.0 + std::ldexp(1.0, -40);
  std::string raw(8, '\0');
  std::memcpy(raw.data(), &x, 8);
  CastRun r{E8M0, -1, "", makeTensor(DataType::Double, {1}, raw)};
  EXPECT_EQ(r.run().status().code(), absl::StatusCode::kUnimplemented);
}

TEST(CastSmallFloat, StringsAndIntegers) {
  // Strings would be parsed to float32 and rounded again: not folded.
  Tensor s;
  s.setDataType(DataType::String);
  s.setDims({1});
  s.stringData = {"1.0"};
  s.setTyped(Tensor::TypedField::String);
  CastRun r{E4M3FN, -1, "", s};
  EXPECT_EQ(r.run().status().code(), absl::StatusCode::kUnimplemented);
  // Integers are exact: int64 3 -> E4M3FN 1.5 * 2 = 0.1000.100 = 0x44.
  CastRun i{E4M3FN, -1, "", makeInt64Tensor({1}, {3})};
  auto out = i.run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].rawData().str(), bytes({0x44}));
}

} // namespace
