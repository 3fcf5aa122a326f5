//===- Cast.cpp - Cast and CastLike between every element type ------------===//
//
// Numeric types convert through their compute kinds (float16, bfloat16,
// float8 and float4 via float). Float to integer truncates toward zero and is
// refused for NaN or out-of-range values (ONNX leaves them undefined). Float8
// targets honour `saturate` (opset 19). Strings parse like numpy (`INF`,
// `NaN`) and print like numpy's str() of a float32 (shortest round trip).
//
//===----------------------------------------------------------------------===//
#include "KernelUtil.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace onnxir {
namespace kernels {
namespace {

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
    bool saturate = attrInt(c, "saturate", 1) != 0;
    bool f8 = to == DataType::Float8E4M3FN || to == DataType::Float8E4M3FNUZ ||
              to == DataType::Float8E5M2 || to == DataType::Float8E5M2FNUZ;
    if (f8 && !saturate) {
      Tensor t;
      t.setDataType(to);
      t.setDims(r.dims);
      std::string raw(n, '\0');
      for (size_t k = 0; k < n; ++k) raw[k] = (char)floatToFloat8(r.f[k], to, false);
      t.setRaw(std::move(raw));
      std::vector<Tensor> out;
      out.push_back(std::move(t));
      return out;
    }
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
      if (std::isnan(v)) return invalid("Cast of NaN to an integer");
      double t = std::trunc(v);
      if (!(t > lo && t < hi) && !(isSignedInteger(to) && t == lo))
        return invalid("Cast out of the integer range");
      if (tk == CK::U64) r.u.push_back((uint64_t)t);
      else r.i.push_back((int64_t)t);
    }
    return one(r);
  }
  default:
    return unsupported("Cast target");
  }
}

StatusOr<std::vector<Tensor>> kCast(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
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
  return castTo(c, *a, dt);
}

StatusOr<std::vector<Tensor>> kCastLike(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  const Tensor *like = c.input(1);
  if (!like) return invalid("CastLike without target");
  return castTo(c, *a, like->dataType());
}

} // namespace

void registerCastKernels(KernelTable &t) {
  t["Cast"] = kCast;
  t["CastLike"] = kCastLike;
}

} // namespace kernels
} // namespace onnxir
