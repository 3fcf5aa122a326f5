//===- DataTypeTest.cpp - Element types and reduced-precision floats -------===//
#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace onnxir;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(DataTypeTest, NameRoundTrip) {
  for (int32_t v = 1; v <= kMaxDataType; ++v) {
    DataType t = (DataType)v;
    EXPECT_TRUE(isKnownDataType(v));
    llvm::StringRef name = dataTypeName(t);
    ASSERT_FALSE(name.empty()) << v;
    auto back = dataTypeFromName(name);
    ASSERT_TRUE(back.has_value()) << name.str();
    EXPECT_EQ(*back, t) << name.str();
  }
  EXPECT_FALSE(isKnownDataType(0));
  EXPECT_FALSE(isKnownDataType(kMaxDataType + 1));
  EXPECT_FALSE(isKnownDataType(-1));
  EXPECT_EQ(dataTypeName((DataType)(kMaxDataType + 1)), "");
  EXPECT_EQ(dataTypeName((DataType)-3), "");
  EXPECT_EQ(dataTypeFromName("nosuchtype"), std::nullopt);
  EXPECT_EQ(dataTypeFromName(""), std::nullopt);
  EXPECT_EQ(dataTypeFromName("undefined"), std::nullopt);
  EXPECT_EQ(dataTypeFromName("Float"), std::nullopt); // names are lowercase
  EXPECT_EQ(dataTypeName(DataType::BFloat16), "bfloat16");
  EXPECT_EQ(dataTypeName(DataType::Float8E4M3FN), "float8e4m3fn");
  EXPECT_EQ(dataTypeName(DataType::Float4E2M1), "float4e2m1");
  EXPECT_EQ(dataTypeName(DataType::Int2), "int2");
}

TEST(DataTypeTest, BitsAndStorageBytes) {
  EXPECT_EQ(dataTypeBits(DataType::Float), 32u);
  EXPECT_EQ(dataTypeBits(DataType::Bool), 8u);
  EXPECT_EQ(dataTypeBits(DataType::Complex128), 128u);
  EXPECT_EQ(dataTypeBits(DataType::String), 0u);
  EXPECT_EQ(dataTypeBits(DataType::Undefined), 0u);
  EXPECT_EQ(dataTypeBits(DataType::Int4), 4u);
  EXPECT_EQ(dataTypeBits(DataType::Uint2), 2u);
  EXPECT_EQ(dataTypeBits(DataType::Float8E8M0), 8u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Float, 3), 12u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Int4, 3), 2u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Int4, 4), 2u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Float4E2M1, 1), 1u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Int2, 5), 2u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Uint2, 8), 2u);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Uint2, 0), 0u);
  // Sizes that do not fit in 64 bits saturate instead of wrapping to a small
  // number (a fuzzer found a fold whose size check passed that way).
  EXPECT_EQ(dataTypeStorageBytes(DataType::Float, uint64_t(1) << 62), UINT64_MAX);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Complex128, UINT64_MAX / 8), UINT64_MAX);
  EXPECT_EQ(dataTypeStorageBytes(DataType::Int4, uint64_t(1) << 62), uint64_t(1) << 61);
}

TEST(DataTypeTest, Classification) {
  int fp = 0, si = 0, ui = 0, cx = 0;
  for (int32_t v = 1; v <= kMaxDataType; ++v) {
    DataType t = (DataType)v;
    int n = isFloatingPoint(t) + isSignedInteger(t) + isUnsignedInteger(t) + isComplex(t);
    EXPECT_LE(n, 1) << dataTypeName(t).str();
    fp += isFloatingPoint(t);
    si += isSignedInteger(t);
    ui += isUnsignedInteger(t);
    cx += isComplex(t);
  }
  EXPECT_EQ(fp, 10); // float double float16 bfloat16 4 x float8 float8e8m0 float4
  EXPECT_EQ(si, 6);
  EXPECT_EQ(ui, 6);
  EXPECT_EQ(cx, 2);
  EXPECT_FALSE(isUnsignedInteger(DataType::Bool));
  EXPECT_FALSE(isFloatingPoint(DataType::String));
}

TEST(DataTypeTest, HalfRoundTripForAllBitPatterns) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = halfToFloat((uint16_t)h);
    uint16_t back = floatToHalf(f);
    bool nanPattern = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
    if (nanPattern) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(std::isnan(halfToFloat(back))) << std::hex << h;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h; // sign kept
    } else {
      ASSERT_FALSE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(back, (uint16_t)h) << std::hex << h;
    }
  }
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0xfc00), -INFINITY);
}

TEST(DataTypeTest, HalfRoundingToNearestEven) {
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);       // below the halfway point
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);       // tie rounds to even: inf
  EXPECT_EQ(floatToHalf(1e9f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);     // tie to even (down)
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02); // tie to even (up)
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);     // tie between 0 and min subnormal
  EXPECT_EQ(floatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002); // tie: 1.5 -> 2
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(floatToHalf(-std::ldexp(1.0f, -30)), 0x8000);    // underflow keeps the sign
  EXPECT_EQ(floatToHalf(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into the normals
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
}

TEST(DataTypeTest, BFloat16RoundToNearestEven) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f808000)), 0x3f80); // tie, even stays
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f818000)), 0x3f82); // tie, odd rounds up
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f808001)), 0x3f81); // above the tie
  EXPECT_EQ(floatToBFloat16(floatOf(0x3f807fff)), 0x3f80); // below the tie
  EXPECT_EQ(floatToBFloat16(floatOf(0xbf818000)), 0xbf82); // negative
  EXPECT_EQ(floatToBFloat16(floatOf(0x7f7fffff)), 0x7f80); // max float rounds to inf
  EXPECT_EQ(floatToBFloat16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBFloat16(-INFINITY), 0xff80);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  uint16_t n = floatToBFloat16(floatOf(0x7f800001)); // NaN with a low payload
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(n)));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(-NAN))));
  // Exact round trip of every non-NaN bfloat16.
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = bfloat16ToFloat((uint16_t)b);
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToBFloat16(f), (uint16_t)b) << std::hex << b;
    ASSERT_EQ(bitsOf(f), b << 16);
  }
}

TEST(DataTypeTest, Float8AndFloat4RoundTripEveryCode) {
  for (DataType t : {DataType::Float8E4M3FN, DataType::Float8E4M3FNUZ, DataType::Float8E5M2,
                     DataType::Float8E5M2FNUZ, DataType::Float8E8M0, DataType::Float4E2M1}) {
    SCOPED_TRACE(dataTypeName(t).str());
    unsigned codes = t == DataType::Float4E2M1 ? 16 : 256;
    unsigned nans = 0;
    for (unsigned c = 0; c < codes; ++c) {
      float f = float8ToFloat((uint8_t)c, t);
      if (std::isnan(f)) {
        ++nans;
        EXPECT_TRUE(std::isnan(float8ToFloat(floatToFloat8(f, t), t))) << c;
        continue;
      }
      EXPECT_EQ(floatToFloat8(f, t, /*saturate=*/false), c) << c << " " << f;
    }
    unsigned wantNans = t == DataType::Float8E4M3FN     ? 2
                        : t == DataType::Float8E5M2     ? 6
                        : t == DataType::Float4E2M1     ? 0
                        : t == DataType::Float8E8M0     ? 1
                                                        : 1; // fnuz: 0x80 only
    EXPECT_EQ(nans, wantNans);
  }
}

TEST(DataTypeTest, Float8Saturation) {
  EXPECT_EQ(floatToFloat8(1e6f, DataType::Float8E4M3FN, true), 0x7e); // 448
  EXPECT_EQ(floatToFloat8(-1e6f, DataType::Float8E4M3FN, true), 0xfe);
  EXPECT_TRUE(std::isnan(float8ToFloat(floatToFloat8(1e6f, DataType::Float8E4M3FN, false),
                                       DataType::Float8E4M3FN)));
  EXPECT_EQ(floatToFloat8(INFINITY, DataType::Float8E5M2, false), 0x7c);
  EXPECT_EQ(floatToFloat8(INFINITY, DataType::Float8E5M2, true), 0x7b);
  EXPECT_EQ(floatToFloat8(-1e9f, DataType::Float8E5M2, false), 0xfc);
  EXPECT_EQ(floatToFloat8(100.f, DataType::Float4E2M1, false), 0x7); // no inf/NaN: clamps
  EXPECT_EQ(floatToFloat8(NAN, DataType::Float4E2M1), 0x8); // as ONNX's reference
  EXPECT_EQ(floatToFloat8(-0.0f, DataType::Float8E4M3FNUZ), 0x00); // no negative zero
  EXPECT_EQ(floatToFloat8(NAN, DataType::Float8E4M3FNUZ), 0x80);
  // Rounding between codes, ties to even: 1.0 (0x38) and 1.125 (0x39).
  EXPECT_EQ(floatToFloat8(1.0625f, DataType::Float8E4M3FN), 0x38);
  EXPECT_EQ(floatToFloat8(1.1875f, DataType::Float8E4M3FN), 0x3a); // tie 1.125/1.25 -> even
  // E8M0 holds powers of two only.
  EXPECT_EQ(floatToFloat8(1.0f, DataType::Float8E8M0), 127);
  EXPECT_EQ(floatToFloat8(0.25f, DataType::Float8E8M0), 125);
  EXPECT_EQ(floatToFloat8(-1.0f, DataType::Float8E8M0), 0xff); // no sign: NaN
}

} // namespace
