//===- DataType.cpp - Element type facts and float conversions ------------===//
#include "onnxir/IR/DataType.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace onnxir {

namespace {
/// The number classes the is*() predicates ask about; anything else
/// (undefined, string, bool, complex) is Other.
enum class NumClass : uint8_t { Other, Floating, Signed, Unsigned };
struct TypeFacts {
  const char *name;
  unsigned bits;
  NumClass cls;
};
constexpr NumClass O = NumClass::Other, F = NumClass::Floating, S = NumClass::Signed,
                   U = NumClass::Unsigned;
// Indexed by DataType number.
constexpr TypeFacts kFacts[] = {
    {"undefined", 0, O}, {"float", 32, F},        {"uint8", 8, U},          {"int8", 8, S},
    {"uint16", 16, U},   {"int16", 16, S},        {"int32", 32, S},         {"int64", 64, S},
    {"string", 0, O},    {"bool", 8, O},          {"float16", 16, F},       {"double", 64, F},
    {"uint32", 32, U},   {"uint64", 64, U},       {"complex64", 64, O},     {"complex128", 128, O},
    {"bfloat16", 16, F}, {"float8e4m3fn", 8, F},  {"float8e4m3fnuz", 8, F}, {"float8e5m2", 8, F},
    {"float8e5m2fnuz", 8, F}, {"uint4", 4, U},    {"int4", 4, S},           {"float4e2m1", 4, F},
    {"float8e8m0", 8, F}, {"uint2", 2, U},        {"int2", 2, S},
};

NumClass numClass(DataType t) {
  int32_t v = static_cast<int32_t>(t);
  return v < 0 || v > kMaxDataType ? NumClass::Other : kFacts[v].cls;
}
static_assert(sizeof(kFacts) / sizeof(kFacts[0]) == kMaxDataType + 1, "table size");

uint32_t bitsOf(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float floatOf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
} // namespace

bool isKnownDataType(int32_t v) { return v > 0 && v <= kMaxDataType; }

llvm::StringRef dataTypeName(DataType t) {
  int32_t v = static_cast<int32_t>(t);
  if (v < 0 || v > kMaxDataType) return "";
  return kFacts[v].name;
}

std::optional<DataType> dataTypeFromName(llvm::StringRef name) {
  for (int32_t v = 1; v <= kMaxDataType; ++v)
    if (name == kFacts[v].name) return static_cast<DataType>(v);
  return std::nullopt;
}

unsigned dataTypeBits(DataType t) {
  int32_t v = static_cast<int32_t>(t);
  if (v < 0 || v > kMaxDataType) return 0;
  return kFacts[v].bits;
}

uint64_t dataTypeStorageBytes(DataType t, uint64_t n) {
  uint64_t bits = dataTypeBits(t);
  // Saturates: a count whose size does not fit in 64 bits is "too big", never
  // a small wrapped-around number.
  unsigned __int128 bytes = ((unsigned __int128)n * bits + 7) / 8;
  return bytes > UINT64_MAX ? UINT64_MAX : (uint64_t)bytes;
}

bool isFloatingPoint(DataType t) { return numClass(t) == NumClass::Floating; }

bool isSignedInteger(DataType t) { return numClass(t) == NumClass::Signed; }

bool isUnsignedInteger(DataType t) { return numClass(t) == NumClass::Unsigned; }

bool isComplex(DataType t) { return t == DataType::Complex64 || t == DataType::Complex128; }

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0) {
    if (man == 0) return floatOf(sign);
    // Subnormal: value = man * 2^-24.
    float v = std::ldexp((float)man, -24);
    return sign ? -v : v;
  }
  if (exp == 31) return floatOf(sign | 0x7f800000u | (man << 13));
  return floatOf(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t floatToHalf(float f) {
  uint32_t u = bitsOf(f);
  uint16_t sign = (u >> 16) & 0x8000;
  uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return sign | 0x7e00 | ((absu >> 13) & 0x3ff); // NaN
  if (absu >= 0x477ff000u) {
    // Rounds to >= 65520: infinity.
    return sign | 0x7c00;
  }
  if (absu < 0x38800000u) {
    // Subnormal or zero in half: round(value * 2^24) with ties to even.
    float a = floatOf(absu);
    float scaled = a * 16777216.0f; // 2^24, exact
    float r = std::nearbyint(scaled);  // default rounding mode: ties to even
    return sign | (uint16_t)r;
  }
  // Normal: rebias exponent and round mantissa to nearest even.
  uint32_t mant = absu & 0x7fffff;
  uint32_t exp = (absu >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return sign | (uint16_t)h;
}

float bfloat16ToFloat(uint16_t b) { return floatOf((uint32_t)b << 16); }

uint16_t floatToBFloat16(float f) {
  uint32_t u = bitsOf(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fff + lsb;
  return (uint16_t)(u >> 16);
}

namespace {
// Parameters of the small float formats.
struct SmallFloat {
  int expBits, manBits, bias;
  bool fnuz;      // no negative zero; 0x80 is NaN; no infinities
  bool fn;        // finite only: all-ones exponent+mantissa is NaN
  bool hasInf;    // IEEE-like infinities (e5m2)
};
SmallFloat formatOf(DataType t) {
  switch (t) {
  case DataType::Float8E4M3FN: return {4, 3, 7, false, true, false};
  case DataType::Float8E4M3FNUZ: return {4, 3, 8, true, false, false};
  case DataType::Float8E5M2: return {5, 2, 15, false, false, true};
  case DataType::Float8E5M2FNUZ: return {5, 2, 16, true, false, false};
  case DataType::Float4E2M1: return {2, 1, 1, false, false, false};
  default: return {0, 0, 0, false, false, false};
  }
}
} // namespace

float float8ToFloat(uint8_t v, DataType t) {
  if (t == DataType::Float8E8M0) {
    if (v == 0xff) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, (int)v - 127);
  }
  SmallFloat F = formatOf(t);
  int total = 1 + F.expBits + F.manBits;
  uint32_t bits = v & ((1u << total) - 1);
  bool neg = bits >> (total - 1);
  uint32_t e = (bits >> F.manBits) & ((1u << F.expBits) - 1);
  uint32_t m = bits & ((1u << F.manBits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (F.fnuz && bits == (1u << (total - 1))) return nan;
  if (F.fn && e == (1u << F.expBits) - 1 && m == (1u << F.manBits) - 1) return nan;
  if (F.hasInf && e == (1u << F.expBits) - 1)
    return m ? nan : (neg ? -INFINITY : INFINITY);
  float r;
  if (e == 0) r = std::ldexp((float)m, 1 - F.bias - F.manBits);
  else r = std::ldexp(1.0f + (float)m / (float)(1u << F.manBits), (int)e - F.bias);
  return neg ? -r : r;
}

uint8_t floatToFloat8(float f, DataType t, bool saturate) {
  if (t == DataType::Float8E8M0) {
    if (std::isnan(f) || f <= 0) return 0xff;
    int e;
    float m = std::frexp(f, &e); // f = m * 2^e, m in [0.5,1)
    int ex = e - 1 + 127;
    if (m > 0.75f) ++ex; // round to nearest power of two
    if (ex < 0) ex = 0;
    if (ex > 254) ex = saturate ? 254 : 255;
    return (uint8_t)ex;
  }
  SmallFloat F = formatOf(t);
  int total = 1 + F.expBits + F.manBits;
  uint32_t signBit = 1u << (total - 1);
  bool neg = std::signbit(f);
  // NaN encodings.
  auto nanCode = [&]() -> uint8_t {
    if (F.fnuz) return (uint8_t)signBit;
    if (F.fn) return (uint8_t)((neg ? signBit : 0) | ((1u << (total - 1)) - 1));
    if (F.hasInf) return (uint8_t)((neg ? signBit : 0) | (((1u << F.expBits) - 1) << F.manBits) | 1);
    return (uint8_t)signBit; // float4 has no NaN: 0x8, as ml_dtypes (ONNX's reference)
  };
  if (std::isnan(f)) return nanCode();
  // Largest finite value's code.
  uint32_t maxCode;
  if (F.fn) maxCode = ((1u << (total - 1)) - 1) - 1;
  else if (F.hasInf) maxCode = (((1u << F.expBits) - 1) << F.manBits) - 1;
  else maxCode = (1u << (total - 1)) - 1;
  float maxVal = float8ToFloat((uint8_t)maxCode, t);
  float a = std::fabs(f);
  uint8_t sign = neg ? (uint8_t)signBit : 0;
  if (std::isinf(f) || a > maxVal) {
    if (saturate || t == DataType::Float4E2M1) {
      // Values beyond the max round to the max only if within rounding range;
      // with saturation everything clamps.
      return sign | (uint8_t)maxCode;
    }
    if (F.hasInf) return sign | (uint8_t)(((1u << F.expBits) - 1) << F.manBits);
    return nanCode();
  }
  // Search the nearest code (formats are tiny: at most 128 magnitudes).
  uint32_t best = 0;
  float bestDiff = INFINITY;
  for (uint32_t c = 0; c <= maxCode; ++c) {
    float v = float8ToFloat((uint8_t)c, t);
    float d = std::fabs(v - a);
    if (d < bestDiff || (d == bestDiff && (c & 1) == 0 && (best & 1) == 1)) {
      best = c;
      bestDiff = d;
    }
  }
  if (best == 0 && F.fnuz) return 0; // no negative zero
  return sign | (uint8_t)best;
}

} // namespace onnxir
