//===- Cast.cpp - Cast, CastLike, BitCast ---------------------------------===//
//
// Elementwise, continued: the type conversions Cast, CastLike and BitCast
// (the float8/float4 and E8M0 encodings, string <-> number). One section per
// op (Cast and CastLike share theirs: one conversion, the same adapters):
// rule, kernel, version adapters and registration (registerCastOps at the
// end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/ascii.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===--- Cast, CastLike ---===//

/// Range of an integer element type as doubles.
std::pair<double, double> intRange(DataType dt) {
  if (dt == DataType::Bool) return {-INFINITY, INFINITY};
  unsigned bits = dataTypeBits(dt);
  if (isSignedInteger(dt)) return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1)};
  return {-1.0, std::ldexp(1.0, bits)};
}

/// numpy's str() of a float32: the shortest digits that read back to the
/// same float, positional for 1e-4 <= |v| < 1e16 (with at least ".0"),
/// scientific otherwise (`1e-05`, `1.5e+16`).
std::string floatToString(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  int prec = 1;
  for (; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)v);
    if (std::strtof(buf, nullptr) == v) break;
  }
  // buf is [-]d[.ddd]e[+-]XX: split into digits and exponent.
  std::string s = buf;
  bool neg = s[0] == '-';
  if (neg) s.erase(0, 1);
  size_t e = s.find('e');
  int exp10 = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t k = 0; k < e; ++k)
    if (s[k] != '.') digits.push_back(s[k]);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  double a = std::abs((double)v);
  if (a >= 1e-4 && a < 1e16) {
    if (exp10 < 0) {
      out = "0." + std::string((size_t)(-exp10 - 1), '0') + digits;
    } else if ((size_t)exp10 + 1 >= digits.size()) {
      out = digits + std::string((size_t)exp10 + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, (size_t)exp10 + 1) + "." + digits.substr((size_t)exp10 + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += eb;
  }
  return neg ? "-" + out : out;
}

/// A value for an error message.
std::string formatDoubleForMessage(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

//===--- Small float targets ---------------------------------------------===//
//
// Note [Cast to small floats]
//   The rules of ONNX Cast (Operators.md, Cast-25, and the float8/float4
//   technical notes) for the float8 and float4 targets, applied to the exact
//   source value (a float or double; never rounded through float first):
//   - E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ: round to nearest even in the
//     target's mantissa width with the exponent range extended upwards; a
//     result above the largest finite value is the largest finite value when
//     `saturate` (default 1), else NaN (E4M3FN keeps the sign, the FNUZ types
//     have one NaN, 0x80) or infinity (E5M2). -0 stays -0 except in the FNUZ
//     types. NaN is NaN (E5M2's quiet NaN is 0x7E/0xFE).
//   - FLOAT4E2M1 (no NaN, no infinity; `saturate` does not apply): round to
//     nearest even, beyond +-6 (infinities included) clamp to +-6, NaN is
//     0x8 (-0): ONNX's reference casts through ml_dtypes' float4_e2m1fn,
//     whose quiet_NaN() is 0b1000, and its backend data (test_cast_FLOAT_to_
//     FLOAT4E2M1 and the FLOAT16 and CastLike forms) holds 0x8 there.
//   - FLOAT8E8M0 (powers of two 2^-127..2^127, 0xFF is NaN): the float32
//     exponent, incremented by `round_mode` "up" when any mantissa bit is set,
//     "nearest" when the value is at least 1.5 times its power of two (ties
//     up), never by "down"; past 2^127 the result is 2^127 when saturating,
//     else NaN. NaN is NaN.
//   Where the sources disagree or the spec says "undefined"/"unspecified",
//   the node is not folded: infinities to the FNUZ types with saturation
//   (Operators.md: FLT_MAX; the float8 note: NaN), negative NaN to float4
//   (ml_dtypes releases give 0x8 or, negating its NaN, 0x0),
//   and for E8M0 negative values and -0, +0 and float32 subnormals except
//   0 with saturation, +Inf with saturation (table: max; reference: NaN),
//   sources not exact in float32 (the reference rounds to float32 first),
//   and strings.

/// The float8 types (E8M0 included) and float4e2m1: the targets of the Note.
bool isSmallFloat(DataType t) { return isFloatingPoint(t) && dataTypeBits(t) <= 8; }

enum class E8M0Round { Up, Down, Nearest };

struct SmallFormat {
  int manBits, bias;
  double maxVal;
  uint8_t maxCode, signBit;
  bool fnuz;
};

SmallFormat smallFormat(DataType t) {
  switch (t) {
  case DataType::Float8E4M3FN: return {3, 7, 448.0, 0x7e, 0x80, false};
  case DataType::Float8E4M3FNUZ: return {3, 8, 240.0, 0x7f, 0x80, true};
  case DataType::Float8E5M2: return {2, 15, 57344.0, 0x7b, 0x80, false};
  case DataType::Float8E5M2FNUZ: return {2, 16, 57344.0, 0x7f, 0x80, true};
  default: return {1, 1, 6.0, 0x7, 0x8, false}; // Float4E2M1
  }
}

/// The code of a representable magnitude `v` (0 <= v <= max) in format F.
uint8_t encodeMagnitude(double v, const SmallFormat &F) {
  if (v == 0) return 0;
  int e;
  std::frexp(v, &e);
  int E = e - 1, emin = 1 - F.bias;
  if (E < emin) return (uint8_t)std::ldexp(v, F.manBits - emin); // subnormal
  int mant = (int)std::ldexp(v, F.manBits - E) - (1 << F.manBits);
  return (uint8_t)(((E + F.bias) << F.manBits) | mant);
}

/// One value to a float8 (not E8M0) or float4 code; nullopt where the spec
/// is unclear (see the Note).
std::optional<uint8_t> castSmallFloat(double x, DataType to, bool saturate) {
  SmallFormat F = smallFormat(to);
  bool f4 = to == DataType::Float4E2M1, e5 = to == DataType::Float8E5M2;
  bool neg = std::signbit(x);
  uint8_t sign = neg ? F.signBit : 0;
  uint8_t zero = F.fnuz ? 0 : sign; // the FNUZ types have no -0 (0x80 is NaN)
  if (std::isnan(x)) {
    if (f4) return neg ? std::nullopt : std::optional<uint8_t>(0x8);
    if (F.fnuz) return 0x80;
    return (uint8_t)(sign | (e5 ? 0x7e : 0x7f));
  }
  // What a value beyond the largest finite one becomes.
  auto overflow = [&]() -> uint8_t {
    if (saturate || f4) return (uint8_t)(sign | F.maxCode);
    if (F.fnuz) return 0x80;
    return (uint8_t)(sign | (e5 ? 0x7c : 0x7f));
  };
  if (std::isinf(x)) {
    if (F.fnuz && saturate) return std::nullopt;
    return overflow();
  }
  double a = std::fabs(x);
  if (a == 0) return zero;
  // Round to nearest even at the target's precision, exponent unbounded above.
  int e;
  std::frexp(a, &e);
  int E = std::max(e - 1, 1 - F.bias);
  double q = std::ldexp(1.0, E - F.manBits);
  double r = std::nearbyint(a / q) * q;
  if (r > F.maxVal) return overflow();
  if (r == 0) return zero;
  return (uint8_t)(sign | encodeMagnitude(r, F));
}

/// One float32 value to FLOAT8E8M0; nullopt where the spec is unclear.
std::optional<uint8_t> castE8M0(float f, bool saturate, E8M0Round mode) {
  if (std::isnan(f)) return 0xff;
  if (std::signbit(f)) return std::nullopt;
  if (std::isinf(f)) return saturate ? std::nullopt : std::optional<uint8_t>(0xff);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t E = bits >> 23, M = bits & 0x7fffff;
  if (E == 0) return M == 0 && saturate ? std::optional<uint8_t>(0) : std::nullopt;
  uint32_t inc = 0;
  if (mode == E8M0Round::Up) inc = M != 0;
  else if (mode == E8M0Round::Nearest) inc = (M & 0x400000) != 0;
  if (E + inc > 254) return saturate ? 254 : 0xff;
  return (uint8_t)(E + inc);
}

/// Cast of every element of `a` to a small float type, packed; Unimplemented
/// when some element falls in a case the spec leaves unclear.
StatusOr<std::vector<Tensor>> castToSmallFloat(const KernelCall &c, const Arr &a,
                                               DataType to) {
  CK from = a.kind();
  if (from == CK::Str) return unsupported("Cast of strings to a float8/float4 type");
  bool saturate = c.getInt("saturate", 1) != 0;
  E8M0Round mode = E8M0Round::Up;
  if (to == DataType::Float8E8M0) {
    std::string m = c.getString("round_mode", "up");
    if (m == "down") mode = E8M0Round::Down;
    else if (m == "nearest") mode = E8M0Round::Nearest;
    else if (m != "up") return invalid("Cast round_mode must be up, down or nearest");
  }
  size_t n = (size_t)a.size();
  std::string raw((size_t)dataTypeStorageBytes(to, n), '\0');
  for (size_t k = 0; k < n; ++k) {
    // The exact source value (ints past 2^53 are not exact in a double).
    double x;
    bool exact = true;
    switch (from) {
    case CK::F32: x = a.f[k]; break;
    case CK::F64: x = a.d[k]; break;
    case CK::I64: x = (double)a.i[k]; exact = a.i[k] >= -(int64_t(1) << 53) && a.i[k] <= (int64_t(1) << 53); break;
    case CK::U64: x = (double)a.u[k]; exact = a.u[k] <= (uint64_t(1) << 53); break;
    default: return unsupported("Cast source type");
    }
    std::optional<uint8_t> code;
    if (to == DataType::Float8E8M0) {
      // The reference rounds to float32 first; only exact sources agree.
      float f = (float)x;
      if (exact && (std::isnan(x) || (double)f == x)) code = castE8M0(f, saturate, mode);
    } else if (exact || std::fabs(x) > 1e6) { // inexact ints overflow anyway
      code = castSmallFloat(x, to, saturate);
    }
    if (!code)
      return unsupported(absl::StrCat("Cast of ", formatDoubleForMessage(x), " to ",
                                      dataTypeName(to).str(),
                                      " is left unfolded: the ONNX spec is unclear there"));
    if (to == DataType::Float4E2M1)
      raw[k / 2] = (char)((uint8_t)raw[k / 2] | (k % 2 ? *code << 4 : *code));
    else
      raw[k] = (char)*code;
  }
  Tensor t;
  t.setDataType(to);
  t.setDims(a.dims);
  t.setRaw(std::move(raw));
  std::vector<Tensor> out;
  out.push_back(std::move(t));
  return out;
}

StatusOr<std::vector<Tensor>> castTo(const KernelCall &c, const Arr &a, DataType to) {
  CK from = a.kind(), tk = computeKind(to);
  if (from == CK::None || tk == CK::None) return unsupported("Cast types");
  Arr r;
  r.dt = to;
  r.dims = a.dims;
  size_t n = (size_t)a.size();
  if (from == CK::Str && tk == CK::Str) {
    r.s = a.s;
    return one(r);
  }
  if (tk == CK::Str) {
    r.s.resize(n);
    Status st = visitNumeric(from, [&](auto tag) -> Status {
      using T = decltype(tag);
      const auto &v = a.vec<T>();
      for (size_t k = 0; k < n; ++k) {
        if constexpr (std::is_floating_point_v<T>) r.s[k] = floatToString((float)v[k]);
        else if (a.dt == DataType::Bool) r.s[k] = v[k] ? "True" : "False";
        else r.s[k] = std::to_string(v[k]);
      }
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
    return one(r);
  }
  if (isSmallFloat(to)) return castToSmallFloat(c, a, to);
  // Source values as double (strings parsed), unless both sides are integers.
  if ((from == CK::I64 || from == CK::U64) && (tk == CK::I64 || tk == CK::U64)) {
    if (from == CK::I64 && tk == CK::I64) r.i = a.i;
    else if (from == CK::U64 && tk == CK::U64) r.u = a.u;
    else if (from == CK::I64) for (int64_t v : a.i) r.u.push_back((uint64_t)v);
    else for (uint64_t v : a.u) r.i.push_back((int64_t)v);
    if (to == DataType::Bool) for (int64_t &v : r.i) v = v != 0;
    return one(r);
  }
  std::vector<double> src;
  std::vector<float> srcF; // exact float source (avoids double rounding)
  if (from == CK::Str) {
    src.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const std::string &s = a.s[k];
      char *end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) return invalid("unparsable string");
      src[k] = v;
    }
    if (tk == CK::F32) {
      // numpy parses straight to float32.
      srcF.resize(n);
      for (size_t k = 0; k < n; ++k) srcF[k] = std::strtof(a.s[k].c_str(), nullptr);
    }
  } else if (from == CK::F32) {
    srcF = a.f;
  } else {
    Status st = visitNumeric(from, [&](auto tag) -> Status {
      using T = decltype(tag);
      for (T v : a.vec<T>()) src.push_back((double)v);
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
  }
  auto at = [&](size_t k) -> double { return srcF.empty() ? src[k] : (double)srcF[k]; };
  switch (tk) {
  case CK::F32: {
    r.f.resize(n);
    for (size_t k = 0; k < n; ++k) r.f[k] = srcF.empty() ? (float)src[k] : srcF[k];
    if ((to == DataType::Float16 || to == DataType::BFloat16) && from == CK::F64) {
      // Round double to half without double rounding: round to odd into
      // float first (float keeps > 11 + 2 bits), then to nearest half.
      for (size_t k = 0; k < n; ++k) {
        double d = src[k];
        float f = (float)d;
        if (std::isfinite(d) && std::isfinite(f) && (double)f != d) {
          if (std::abs((double)f) > std::abs(d)) f = std::nextafter(f, 0.0f);
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          if ((bits & 1) == 0) f = std::nextafter(f, d > 0 ? INFINITY : -INFINITY);
        }
        r.f[k] = f;
      }
    }
    return one(r);
  }
  case CK::F64:
    r.d.resize(n);
    for (size_t k = 0; k < n; ++k) r.d[k] = at(k);
    return one(r);
  case CK::I64: case CK::U64: {
    auto [lo, hi] = intRange(to);
    if (tk == CK::U64) { lo = -1.0; hi = 18446744073709551616.0; }
    for (size_t k = 0; k < n; ++k) {
      double v = at(k);
      if (to == DataType::Bool) { r.i.push_back(v != 0 ? 1 : 0); continue; }
      // Note [Undefined results when running]
      // ONNX leaves a float cast to an integer type undefined where the
      // value is NaN or outside the type's range. Folding declines (the
      // value would depend on whoever folded it). A run cannot: exporters
      // compute such values and drop them (T5's relative position buckets
      // cast log(0) = -inf to int64 on a branch Where discards), so the
      // evaluator asks for a defined value: NaN gives 0 and the rest
      // saturates to the type's bounds. A runtime may give other values
      // (x86's conversion gives the lowest one); they agree wherever the
      // value is discarded, which is where a sound model meets it.
      if (std::isnan(v)) {
        if (!c.defineUndefined) return invalid("Cast of NaN to an integer");
        if (tk == CK::U64) r.u.push_back(0);
        else r.i.push_back(0);
        continue;
      }
      double t = std::trunc(v);
      if (!(t > lo && t < hi) && !(isSignedInteger(to) && t == lo)) {
        if (!c.defineUndefined) return invalid("Cast out of the integer range");
        unsigned bits = dataTypeBits(to);
        bool low = t < 0;
        if (tk == CK::U64) {
          r.u.push_back(low ? 0 : UINT64_MAX);
        } else if (isSignedInteger(to)) {
          int64_t top = bits >= 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
          r.i.push_back(low ? -top - 1 : top);
        } else {
          r.i.push_back(low ? 0 : (int64_t(1) << bits) - 1);
        }
        continue;
      }
      if (tk == CK::U64) r.u.push_back((uint64_t)t);
      else r.i.push_back((int64_t)t);
    }
    return one(r);
  }
  default:
    return unsupported("Cast target");
  }
}

// Note [Casts without decoded copies]
//   A cast to the same type (the integers, float, double) copies the stored
//   bytes once, and float16/bfloat16 to float decodes each element straight
//   into the result's bytes (with the function every read of them uses), so
//   a float16 weight behind a Cast is no longer decoded into an Arr and
//   copied three more times (decoded, source, result, encoded). The same
//   bytes out as the general path. Float16 to float16 keeps that path: it
//   re-encodes, quietening a signalling NaN, and a cast must not change that.

std::optional<StatusOr<std::vector<Tensor>>> castInPlace(const Tensor &in, DataType to) {
  DataType from = in.dataType();
  bool halfToFloat32 =
      to == DataType::Float && (from == DataType::Float16 || from == DataType::BFloat16);
  bool same = from == to && from != DataType::Float16 && from != DataType::BFloat16;
  if (!halfToFloat32 && !same) return std::nullopt;
  auto v = byteView(in);
  if (!v) return std::nullopt;
  std::vector<Tensor> r;
  int64_t n = numElementsOf(in.dims());
  if (same) {
    r.push_back(makeTensor(to, in.dims(), std::string(v->data, (size_t)n * v->es)));
    return StatusOr<std::vector<Tensor>>(std::move(r));
  }
  OutBuf<float> out(DataType::Float, in.dims());
  float *o = out.data();
  const unsigned char *p = reinterpret_cast<const unsigned char *>(v->data);
  for (int64_t k = 0; k < n; ++k) {
    uint16_t h = (uint16_t)(p[2 * k] | (p[2 * k + 1] << 8)); // little-endian, as stored
    o[k] = from == DataType::Float16 ? halfToFloat(h) : bfloat16ToFloat(h);
  }
  r.push_back(out.take());
  return StatusOr<std::vector<Tensor>>(std::move(r));
}

StatusOr<std::vector<Tensor>> kCast(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("missing input #0");
  const Attribute *to = c.attr("to");
  if (!to) return invalid("Cast without 'to'");
  DataType dt;
  if (to->kind() == AttrKind::String) { // opset 1 spelled the type
    std::string s = to->s;
    for (char &ch : s) ch = (char)std::tolower((unsigned char)ch);
    auto d = dataTypeFromName(s);
    if (!d) return invalid("Cast 'to' unknown");
    dt = *d;
  } else {
    if (!isKnownDataType((int32_t)to->i)) return unsupported("Cast 'to' unknown");
    dt = (DataType)to->i;
  }
  if (auto r = castInPlace(*in, dt)) return std::move(*r);
  auto a = fromTensor(*in);
  if (!a.ok()) return a.status();
  return castTo(c, *a, dt);
}

StatusOr<std::vector<Tensor>> kCastLike(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  const Tensor *like = c.input(1);
  if (!like) return invalid("CastLike without target");
  return castTo(c, *a, like->dataType());
}

// Cast-6: `to` became the TensorProto data type number; Cast-1 named it
// ("FLOAT", "INT64", ...: TensorProto.DataType's names).
absl::Status castUp6(Node &n, AdapterContext &c) {
  Attribute *a = n.getAttr("to");
  if (!a) return absl::FailedPreconditionError("no attribute 'to'");
  if (a->isReference())
    return absl::FailedPreconditionError(
        absl::StrCat("attribute 'to' refers to the function attribute '", a->refAttrName.get(),
                     "'; opset 6 needs a type number"));
  if (a->kind() == AttrKind::Int) return absl::OkStatus(); // already a number
  std::optional<DataType> dt;
  if (a->kind() == AttrKind::String) dt = dataTypeFromName(absl::AsciiStrToLower(a->s));
  if (!dt)
    return absl::FailedPreconditionError(
        absl::StrCat("to='", a->kind() == AttrKind::String ? a->s : std::string("?"),
                     "' names no TensorProto data type"));
  if (!c.checkOnly) a->setInt((int64_t)*dt);
  return absl::OkStatus();
}
absl::Status castDown6(Node &n, AdapterContext &c) {
  Attribute *a = n.getAttr("to");
  if (!a) return absl::FailedPreconditionError("no attribute 'to'");
  auto to = adapters::intAttrOr(n, "to", 0);
  if (!to.ok()) return to.status();
  const OpSchema *older = lookupSchema("", "Cast", c.to);
  const FormalParameter *out = older ? older->outputFor(0) : nullptr;
  llvm::StringRef name = isKnownDataType((int32_t)*to) ? dataTypeName((DataType)*to) : "";
  if (name.empty() || !out || !out->constraint ||
      !out->constraint->allows(absl::StrCat("tensor(", name.str(), ")")))
    return absl::FailedPreconditionError(
        absl::StrCat("to=", *to, (name.empty() ? std::string() : " (" + name.str() + ")"),
                     " is not a type Cast-1 casts to"));
  if (!c.checkOnly) a->setString(absl::AsciiStrToUpper(name.str()));
  return absl::OkStatus();
}

/// Cast/CastLike-19 added saturate (float8 targets only), -24 round_mode
/// (float8e8m0 targets only): going down they go when the target type is
/// not one they apply to (the older versions cannot cast to it anyway).
absl::Status castDown(Node &n, AdapterContext &c, bool like, const char *attr) {
  if (!n.getAttr(attr)) return absl::OkStatus();
  DataType to = DataType::Undefined;
  if (like) {
    to = adapters::operandElemType(n, 1);
  } else {
    auto t = adapters::intAttrOr(n, "to", 0);
    if (!t.ok()) return t.status();
    to = (DataType)*t;
  }
  bool float8 = isFloatingPoint(to) && dataTypeBits(to) == 8; // E8M0 included
  bool applies = std::string(attr) == "saturate" ? float8 : to == DataType::Float8E8M0;
  if (to == DataType::Undefined || applies)
    return absl::FailedPreconditionError(absl::StrCat(
        "attribute '", attr, "' does not exist at opset ", c.to, " and the target type is ",
        to == DataType::Undefined ? std::string("unknown") : dataTypeName(to).str()));
  if (!c.checkOnly) n.removeAttr(attr);
  return absl::OkStatus();
}

void registerCastCastLike(OpRegistrar &r) {
  using adapters::noChange;
  r["Cast"] = [](InferCtx &c) {
    int64_t to = c.getInt("to", -1);
    if (to <= 0) return;
    c.setTensor(0, (int32_t)to, c.inShape(0));
    if (const Dims *d = c.inData(0)) {
      if (to == kInt64 || to == static_cast<int32_t>(DataType::Int32)) {
        c.setOutData(0, *d);
      } else if (to == kBool) {
        Dims o;
        for (const DimExpr *e : *d)
          o.push_back(e && e->isConstant() ? c.c(e->value() != 0) : nullptr);
        c.setOutData(0, o);
      }
    }
  };
  r["Cast"].kernel(kCast);
  r["Cast"].elementwise().shapePreserving(); // Note [Op facts]
  r["Cast"].since(6).upgrade(castUp6).downgrade(castDown6);
  r["Cast"].since(19).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return castDown(n, c, false, "saturate"); });
  r["Cast"].since(24).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return castDown(n, c, false, "round_mode"); });
  r["CastLike"] = [](InferCtx &c) {
    c.setTensor(0, c.inElem(1), c.inShape(0));
    if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
  };
  r["CastLike"].kernel(kCastLike);
  r["CastLike"].since(19).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return castDown(n, c, true, "saturate"); });
  r["CastLike"].since(24).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return castDown(n, c, true, "round_mode"); });
}

//===--- BitCast ---===//

/// BitCast-26: the same bits read as the element type `to`. Both types
/// must have the same storage size (the output keeps the input's shape, as
/// the shape rule says); strings have no bits to reinterpret.
StatusOr<std::vector<Tensor>> kBitCast(const KernelCall &c) {
  const Tensor *x = c.input(0);
  if (!x) return invalid("BitCast without input");
  DataType from = x->dataType(), to = (DataType)c.getInt("to", 0);
  if (dataTypeName(to).empty() || to == DataType::Undefined)
    return invalid(absl::StrCat("BitCast: attribute 'to' is ", c.getInt("to", 0),
                                ", no element type"));
  if (from == DataType::String || to == DataType::String)
    return invalid("BitCast: string tensors have no fixed bit width");
  if (dataTypeBits(from) != dataTypeBits(to))
    return invalid(absl::StrCat("BitCast: ", dataTypeName(from).str(), " (", dataTypeBits(from),
                                " bits) and ", dataTypeName(to).str(), " (", dataTypeBits(to),
                                " bits) differ in size"));
  auto n = x->numElements();
  if (!n) return invalid("BitCast: invalid dims");
  if (Status s = checkOutputSize(c, to, x->dims()); !s.ok()) return s;
  auto bytes = x->bytes();
  if (!bytes.ok()) return bytes.status();
  Tensor out;
  out.setDataType(to);
  out.setDims(x->dims());
  out.setRaw(bytes->str());
  std::vector<Tensor> r;
  r.push_back(std::move(out));
  return r;
}

void registerBitCast(OpRegistrar &r) {
  r["BitCast"] = [](InferCtx &c) {
    int64_t to = c.getInt("to", 0);
    if (to > 0) c.setTensor(0, (int32_t)to, c.inShape(0));
  };
  r["BitCast"].kernel(kBitCast);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerCastOps(OpRegistrar &r) {
  for (auto *reg : {registerCastCastLike, registerBitCast})
    reg(r);
}

} // namespace onnxir
