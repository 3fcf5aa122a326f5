//===- Quantization.cpp - QuantizeLinear, DequantizeLinear, ... -----------===//
//
// Quantization: QuantizeLinear DequantizeLinear DynamicQuantizeLinear, and
// the kernels of MatMulInteger QLinearMatMul (their rule is MatMul's, in
// NN.cpp; ConvInteger and QLinearConv are the Conv family's).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

bool isFloat8(DataType t) {
  return t == DataType::Float8E4M3FN || t == DataType::Float8E4M3FNUZ ||
         t == DataType::Float8E5M2 || t == DataType::Float8E5M2FNUZ;
}

//===----------------------------------------------------------------------===//
// Kernel support: scale layouts, rounding, integer ranges
//===----------------------------------------------------------------------===//

std::string dimsStr(llvm::ArrayRef<int64_t> d) { return "[" + absl::StrJoin(d, ",") + "]"; }
std::string typeStr(DataType t) { return dataTypeName(t).str(); }

// Note [Quantization parameter layout]
//   A scale, and its zero point (which has the scale's shape), applies to x
//   in one of three ways: per tensor (a scalar or a one-element 1-D tensor),
//   per axis (1-D with x's dim `axis` elements; opset 13 on) or blocked
//   (opset 21 on, block_size B > 0: x's rank and dims except dim `axis`,
//   which is ceil(D / B), each parameter serving B consecutive elements
//   along the axis, the last block possibly shorter). Seen as [outer, D,
//   inner] around the axis, x's element (o, a, i) takes parameter a (per
//   axis) or o * ceil(D / B) * inner + (a / B) * inner + i (blocked). Any
//   other scale shape is refused: a 1-D scale of the wrong length, an N-D
//   one without block_size, a blocked one whose dims do not match.
struct QLayout {
  enum Kind { PerTensor, PerAxis, Blocked } kind = PerTensor;
  int64_t outer = 1, dim = 1, inner = 1, block = 0;
};

/// ceil(a / b) for a >= 0, b > 0, without overflow (block_size may be
/// INT64_MAX).
inline int64_t ceilDiv(int64_t a, int64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

/// Calls fn(x element, parameter index) for every element of x, in order.
template <typename Fn> void forEachParam(const QLayout &l, int64_t n, Fn &&fn) {
  if (l.kind == QLayout::PerTensor) {
    for (int64_t e = 0; e < n; ++e) fn(e, (int64_t)0);
    return;
  }
  int64_t blocks = l.kind == QLayout::Blocked ? ceilDiv(l.dim, l.block) : l.dim;
  int64_t e = 0;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t a = 0; a < l.dim; ++a) {
      if (l.kind == QLayout::PerAxis) {
        for (int64_t i = 0; i < l.inner; ++i) fn(e++, a);
      } else {
        int64_t p = (o * blocks + a / l.block) * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) fn(e++, p + i);
      }
    }
}

/// The layout of `scale` (and `zp`, when given) over x of dims `x`
/// (Note [Quantization parameter layout]); names the operands as `op` does.
StatusOr<QLayout> quantLayout(const KernelCall &c, llvm::ArrayRef<int64_t> x, const Arr &scale,
                              const Arr *zp, llvm::StringRef scaleName,
                              llvm::StringRef zpName) {
  std::string op = c.opType.str();
  if (zp && zp->dims != scale.dims)
    return invalid(absl::StrCat(op, ": ", zpName.str(), " has shape ", dimsStr(zp->dims),
                                ", not the shape of ", scaleName.str(), " ",
                                dimsStr(scale.dims)));
  int64_t block = c.getInt("block_size", 0);
  if (block < 0)
    return invalid(absl::StrCat(op, ": attribute 'block_size' is ", block, ", not >= 0"));
  QLayout l;
  if (scale.rank() <= 1 && scale.size() == 1) return l;
  int64_t rank = (int64_t)x.size();
  int64_t axisAttr = c.getInt("axis", 1);
  auto axis = normAxis(axisAttr, rank);
  if (!axis)
    return invalid(absl::StrCat(op, ": attribute 'axis' is ", axisAttr,
                                ", out of range for x of rank ", rank));
  if (block == 0) {
    if (scale.rank() != 1)
      return invalid(absl::StrCat(op, ": ", scaleName.str(), " has shape ",
                                  dimsStr(scale.dims),
                                  "; without block_size it is a scalar or 1-D"));
    if (c.opset > 0 && c.opset < 13)
      return invalid(absl::StrCat(op, "-", c.opset, ": ", scaleName.str(),
                                  " is 1-D; before opset 13 it is a scalar"));
    if (scale.dims[0] != x[*axis])
      return invalid(absl::StrCat(op, ": ", scaleName.str(), " has ", scale.dims[0],
                                  " elements, not x's dim ", *axis, " (", x[*axis], ")"));
    l.kind = QLayout::PerAxis;
  } else {
    bool ok = scale.rank() == rank;
    for (int64_t k = 0; ok && k < rank; ++k)
      ok = scale.dims[k] == (k == *axis ? ceilDiv(x[k], block) : x[k]);
    if (!ok)
      return invalid(absl::StrCat(op, ": ", scaleName.str(), " has shape ",
                                  dimsStr(scale.dims), "; blocks of ", block,
                                  " along axis ", *axis, " of x ", dimsStr(x),
                                  " need x's dims with ceil(",
                                  x[*axis], " / ", block, ") on the axis"));
    l.kind = QLayout::Blocked;
    l.block = block;
  }
  l.dim = x[*axis];
  l.outer = 1;
  l.inner = 1;
  for (int64_t k = 0; k < *axis; ++k) l.outer *= x[k];
  for (int64_t k = *axis + 1; k < rank; ++k) l.inner *= x[k];
  return l;
}

/// The range of an integer quantized type; nullopt for the others.
std::optional<std::pair<int64_t, int64_t>> intRange(DataType t) {
  switch (t) {
  case DataType::Uint8: return std::make_pair<int64_t, int64_t>(0, 255);
  case DataType::Int8: return std::make_pair<int64_t, int64_t>(-128, 127);
  case DataType::Uint16: return std::make_pair<int64_t, int64_t>(0, 65535);
  case DataType::Int16: return std::make_pair<int64_t, int64_t>(-32768, 32767);
  case DataType::Uint4: return std::make_pair<int64_t, int64_t>(0, 15);
  case DataType::Int4: return std::make_pair<int64_t, int64_t>(-8, 7);
  case DataType::Uint2: return std::make_pair<int64_t, int64_t>(0, 3);
  case DataType::Int2: return std::make_pair<int64_t, int64_t>(-2, 1);
  default: return std::nullopt;
  }
}

/// `v` rounded to the nearest `t` (float16 or bfloat16); others unchanged.
inline float roundTo(DataType t, float v) {
  if (t == DataType::Float16) return halfToFloat(floatToHalf(v));
  if (t == DataType::BFloat16) return bfloat16ToFloat(floatToBFloat16(v));
  return v;
}

/// rint(v) + zp saturated to [lo, hi]; NaN gives the zero point (Note
/// [Quantizing to integers]).
template <typename Q> int64_t saturateRound(Q v, int64_t zp, int64_t lo, int64_t hi) {
  if (std::isnan(v)) return zp;
  double r = (double)std::nearbyint(v) + (double)zp;
  return r <= (double)lo ? lo : r >= (double)hi ? hi : (int64_t)r;
}

/// A float8 tensor from float values, converted with `saturate` (toTensor
/// always saturates).
Tensor float8Tensor(DataType t, const std::vector<int64_t> &dims, const std::vector<float> &v,
                    bool saturate) {
  Tensor r;
  r.setDataType(t);
  r.setDims(dims);
  std::string raw(v.size(), '\0');
  for (size_t k = 0; k < v.size(); ++k) raw[k] = (char)floatToFloat8(v[k], t, saturate);
  r.setRaw(std::move(raw));
  return r;
}

/// True when every element of `a` is zero.
bool allZero(const Arr &a) {
  if (a.kind() == CK::F32)
    return std::all_of(a.f.begin(), a.f.end(), [](float v) { return v == 0; });
  return std::all_of(a.i.begin(), a.i.end(), [](int64_t v) { return v == 0; });
}

/// Optional input #i decoded, nullopt when absent.
StatusOr<std::optional<Arr>> optionalArr(const KernelCall &c, unsigned i) {
  if (!c.input(i)) return std::optional<Arr>();
  auto a = inputArr(c, i);
  if (!a.ok()) return a.status();
  return std::optional<Arr>(std::move(*a));
}

//===--- QuantizeLinear ----------------------------------------------------===//

/// y: the zero point's type, else output_dtype (opset 21), else uint8.
void quantizeRule(InferCtx &c) {
  int32_t el = c.hasInput(2) ? c.inElem(2) : static_cast<int32_t>(DataType::Uint8);
  if (int64_t od = c.getInt("output_dtype", 0)) el = (int32_t)od;
  c.setTensor(0, el, c.inShape(0));
}

// Note [Quantizing to integers]
//   y = saturate(rint(x / y_scale) + y_zero_point), rint rounding half to
//   even. The quotient is computed as the reference does: in the precision
//   attribute's type (opset 23) when given, else in the operands' common
//   type (float16 / bfloat16 quotients rounded to it, float32 in float), and
//   in double when x or the scale is int32 (exact for every int32). A NaN
//   quotient has no rounded value; it gives the zero point. Float8 outputs
//   take x / y_scale converted with `saturate` (their zero point must be 0),
//   float4 outputs x / y_scale + y_zero_point converted saturating.
StatusOr<std::vector<Tensor>> kQuantizeLinear(const KernelCall &c) {
  auto x = inputArr(c, 0), s = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!s.ok()) return s.status();
  auto zp = optionalArr(c, 2);
  if (!zp.ok()) return zp.status();
  DataType out = DataType::Uint8;
  int64_t od = c.getInt("output_dtype", 0);
  if (*zp) {
    out = (*zp)->dt;
    if (od != 0 && (DataType)od != out)
      return invalid(absl::StrCat("QuantizeLinear: attribute 'output_dtype' (",
                                  typeStr((DataType)od), ") is not y_zero_point's type (",
                                  typeStr(out), ")"));
  } else if (od != 0) {
    out = (DataType)od;
  }
  auto range = intRange(out);
  if (!range && !isFloat8(out) && out != DataType::Float4E2M1)
    return invalid(absl::StrCat("QuantizeLinear: output type ", typeStr(out),
                                " is not a quantized type"));
  if (x->kind() != CK::F32 && x->dt != DataType::Int32)
    return invalid(absl::StrCat("QuantizeLinear: x is ", typeStr(x->dt)));
  if (s->kind() != CK::F32 && s->dt != DataType::Int32)
    return invalid(absl::StrCat("QuantizeLinear: y_scale is ", typeStr(s->dt)));
  auto l = quantLayout(c, x->dims, *s, *zp ? &**zp : nullptr, "y_scale", "y_zero_point");
  if (!l.ok()) return l.status();
  if (Status st = checkOutputSize(c, out, x->dims); !st.ok()) return st;
  if (*zp && !range && out != DataType::Float4E2M1 && !allZero(**zp))
    return invalid(absl::StrCat("QuantizeLinear: y_zero_point of ", typeStr(out),
                                " is not zero"));
  // The division's type and the rounding of its quotient.
  DataType prec = (DataType)c.getInt("precision", 0);
  bool inDouble = false;
  if (prec != DataType::Undefined) {
    if (prec != DataType::Float && prec != DataType::Float16 && prec != DataType::BFloat16)
      return unsupported(absl::StrCat("QuantizeLinear: precision ", typeStr(prec)));
  } else if (x->dt == DataType::Int32 || s->dt == DataType::Int32) {
    inDouble = true;
  } else {
    prec = x->dt == s->dt ? x->dt : DataType::Float;
  }
  int64_t n = x->size();
  Arr y = Arr::make(out, x->dims);
  std::vector<float> f8(isFloat8(out) ? (size_t)n : 0);
  auto run = [&](auto tag) {
    using Q = decltype(tag);
    std::vector<Q> xv(n), sv(s->size());
    for (int64_t k = 0; k < n; ++k)
      xv[k] = x->kind() == CK::F32 ? (Q)roundTo(prec, x->f[k]) : (Q)x->i[k];
    for (int64_t k = 0; k < s->size(); ++k)
      sv[k] = s->kind() == CK::F32 ? (Q)roundTo(prec, s->f[k]) : (Q)s->i[k];
    bool round = prec == DataType::Float16 || prec == DataType::BFloat16;
    auto quot = [&](int64_t e, int64_t p) -> Q {
      Q q = xv[e] / sv[p];
      if constexpr (std::is_same_v<Q, float>)
        if (round) q = roundTo(prec, q);
      return q;
    };
    if (range) {
      int64_t lo = range->first, hi = range->second;
      const int64_t *zv = *zp ? (*zp)->i.data() : nullptr;
      forEachParam(*l, n, [&](int64_t e, int64_t p) {
        y.i[e] = saturateRound(quot(e, p), zv ? zv[p] : 0, lo, hi);
      });
    } else if (isFloat8(out)) {
      forEachParam(*l, n, [&](int64_t e, int64_t p) { f8[e] = (float)quot(e, p); });
    } else {
      const float *zv = *zp ? (*zp)->f.data() : nullptr;
      forEachParam(*l, n, [&](int64_t e, int64_t p) {
        y.f[e] = (float)quot(e, p) + (zv ? zv[p] : 0.f);
      });
    }
  };
  if (inDouble) run(double{});
  else run(float{});
  std::vector<Tensor> r;
  if (isFloat8(out)) r.push_back(float8Tensor(out, x->dims, f8, c.getInt("saturate", 1) != 0));
  else r.push_back(toTensor(y));
  return r;
}

// Adapters (Note [Version adapters]).
// QuantizeLinear-23's precision and DequantizeLinear-23's output_dtype name
// an element type (0: the scale's); the older form computes in the scale's
// type, so the attribute may go when it says that type (or 0).
absl::Status scaleTypedAttrDown(Node &n, AdapterContext &c, const char *op, const char *attr) {
  auto t = adapters::intAttrOr(n, attr, 0);
  if (!t.ok()) return t.status();
  return adapters::olderFormOnly(
      n, c, op, {{attr, AttrKind::Int, (DataType)*t == adapters::operandElemType(n, 1) ? *t : 0}});
}
// Q/DQ-13 added axis (per-axis scales); -10 takes a scalar scale only
// (DequantizeLinear-13 uses it too).
absl::Status qdqDown13(Node &n, AdapterContext &c) {
  int64_t r = adapters::operandRank(n, 1);
  if (r != 0)
    return absl::FailedPreconditionError(
        r < 0 ? std::string("the scale's rank is unknown, and opset 10 takes a scalar scale only "
                            "(infer shapes first)")
              : absl::StrCat("the scale is ", r, "-D (per-axis); opset 10 takes a scalar scale "
                             "only"));
  if (!c.checkOnly) n.removeAttr("axis");
  return absl::OkStatus();
}
// QuantizeLinear-19 added saturate (float8 outputs only).
absl::Status quantizeDown19(Node &n, AdapterContext &c) {
  if (!n.getAttr("saturate")) return absl::OkStatus();
  DataType zp = adapters::operandElemType(n, 2);
  if (n.numOperands() > 2 && n.operand(2) && (zp == DataType::Undefined || isFloat8(zp)))
    return absl::FailedPreconditionError("attribute 'saturate' applies: the output is float8 "
                                         "or of unknown type");
  if (!c.checkOnly) n.removeAttr("saturate");
  return absl::OkStatus();
}
// QuantizeLinear-21 added block_size (0: none) and output_dtype (0: the zero
// point's type, uint8 without one); -23 precision (0: the scale's type).
absl::Status quantizeDown21(Node &n, AdapterContext &c) {
  auto od = adapters::intAttrOr(n, "output_dtype", 0);
  if (!od.ok()) return od.status();
  bool hasZp = n.numOperands() > 2 && n.operand(2);
  DataType implied = hasZp ? adapters::operandElemType(n, 2) : DataType::Uint8;
  if (*od != 0 && (DataType)*od != implied)
    return absl::FailedPreconditionError(absl::StrCat(
        "output_dtype ", *od, " is not the type the zero point implies; opset ", c.to,
        " has no output_dtype"));
  if (absl::Status s = adapters::olderFormOnly(n, c, "QuantizeLinear",
                                               {{"block_size", AttrKind::Int, 0},
                                                {"output_dtype", AttrKind::Int, *od}});
      !s.ok())
    return s;
  return absl::OkStatus();
}
absl::Status quantizeDown23(Node &n, AdapterContext &c) {
  return scaleTypedAttrDown(n, c, "QuantizeLinear", "precision");
}

void registerQuantizeLinear(OpRegistrar &r) {
  using adapters::noChange;
  r["QuantizeLinear"].infer(quantizeRule).kernel(kQuantizeLinear);
  r["QuantizeLinear"].since(13).upgrade(noChange).downgrade(qdqDown13);
  r["QuantizeLinear"].since(19).upgrade(noChange).downgrade(quantizeDown19);
  r["QuantizeLinear"].since(21).upgrade(noChange).downgrade(quantizeDown21);
  r["QuantizeLinear"].since(23).upgrade(noChange).downgrade(quantizeDown23);
}

//===--- DequantizeLinear --------------------------------------------------===//

/// y: float before opset 19, then the scale's type, or output_dtype (23).
void dequantizeRule(InferCtx &c) {
  int32_t el = c.opset >= 19 ? c.inElem(1) : static_cast<int32_t>(DataType::Float);
  if (int64_t od = c.getInt("output_dtype", 0)) el = (int32_t)od;
  c.setTensor(0, el, c.inShape(0));
}

// Note [Dequantizing stored bytes]
//   DequantizeLinear's x is usually an 8-bit weight: decoding it into an
//   int64 Arr costs eight bytes per element, and the float result was built
//   in an Arr and then encoded (copied) once more. An integer x of 8, 16 or
//   32 bits whose bytes match its dims is read where it is stored (an
//   unaligned load per element: raw_data windows sit at any offset) and y
//   computed straight into its result's bytes (OutBuf; float16/bfloat16
//   through OutBuf's encode, as before). The same int64 difference and the
//   same float product: the same values. Other x (float8, 4-bit, typed
//   storage that does not hold the bytes, malformed data) take the decoding
//   path, which reports what is wrong.

/// y[e] = (x[e] - zv[p]) * sv[p] over the layout, x read as stored X.
template <typename X>
void dequantizeStored(const char *xb, const QLayout &l, int64_t n, const int64_t *zv,
                      const float *sv, float *y) {
  forEachParam(l, n, [&](int64_t e, int64_t p) {
    X v;
    std::memcpy(&v, xb + e * (int64_t)sizeof(X), sizeof(X));
    y[e] = (float)((int64_t)v - (zv ? zv[p] : 0)) * sv[p];
  });
}

/// y = (x - x_zero_point) * x_scale, the difference taken exactly (in
/// int64) and the product in float; y is float before opset 19, then the
/// scale's type or output_dtype (opset 23). A float8 or float4 x takes no
/// zero point but zero.
StatusOr<std::vector<Tensor>> kDequantizeLinear(const KernelCall &c) {
  // Note [Dequantizing stored bytes]
  const Tensor *xt = c.input(0);
  std::optional<ByteView> xb;
  if (xt && (xt->dataType() == DataType::Int8 || xt->dataType() == DataType::Uint8 ||
             xt->dataType() == DataType::Int16 || xt->dataType() == DataType::Uint16 ||
             xt->dataType() == DataType::Int32))
    xb = byteView(*xt);
  std::optional<Arr> x;
  DataType xdt;
  std::vector<int64_t> xdims;
  if (xb) {
    xdt = xt->dataType();
    xdims = xt->dims();
  } else {
    auto xa = inputArr(c, 0);
    if (!xa.ok()) return xa.status();
    x = std::move(*xa);
    xdt = x->dt;
    xdims = x->dims;
  }
  auto s = inputArr(c, 1);
  if (!s.ok()) return s.status();
  auto zp = optionalArr(c, 2);
  if (!zp.ok()) return zp.status();
  bool xFloat = x && x->kind() == CK::F32;
  if (!intRange(xdt) && xdt != DataType::Int32 && !isFloat8(xdt) &&
      xdt != DataType::Float4E2M1)
    return invalid(absl::StrCat("DequantizeLinear: x is ", typeStr(xdt)));
  if (s->kind() != CK::F32)
    return invalid(absl::StrCat("DequantizeLinear: x_scale is ", typeStr(s->dt)));
  if (*zp && (*zp)->dt != xdt)
    return invalid(absl::StrCat("DequantizeLinear: x_zero_point is ", typeStr((*zp)->dt),
                                ", x is ", typeStr(xdt)));
  if (*zp && xFloat && !allZero(**zp))
    return invalid(absl::StrCat("DequantizeLinear: x_zero_point of ", typeStr(xdt),
                                " is not zero"));
  DataType out = c.opset > 0 && c.opset < 19 ? DataType::Float : s->dt;
  if (int64_t od = c.getInt("output_dtype", 0)) out = (DataType)od;
  if (out != DataType::Float && out != DataType::Float16 && out != DataType::BFloat16)
    return invalid(absl::StrCat("DequantizeLinear: output type ", typeStr(out),
                                " is not float, float16 or bfloat16"));
  auto l = quantLayout(c, xdims, *s, *zp ? &**zp : nullptr, "x_scale", "x_zero_point");
  if (!l.ok()) return l.status();
  if (Status st = checkOutputSize(c, out, xdims); !st.ok()) return st;
  int64_t n = numElementsOf(xdims);
  OutBuf<float> y(out, xdims);
  float *yv = y.data();
  const float *sv = s->f.data();
  const int64_t *zv = *zp ? (*zp)->i.data() : nullptr;
  if (xb) {
    switch (xdt) {
    case DataType::Int8: dequantizeStored<int8_t>(xb->data, *l, n, zv, sv, yv); break;
    case DataType::Uint8: dequantizeStored<uint8_t>(xb->data, *l, n, zv, sv, yv); break;
    case DataType::Int16: dequantizeStored<int16_t>(xb->data, *l, n, zv, sv, yv); break;
    case DataType::Uint16: dequantizeStored<uint16_t>(xb->data, *l, n, zv, sv, yv); break;
    default: dequantizeStored<int32_t>(xb->data, *l, n, zv, sv, yv); break;
    }
  } else if (xFloat) {
    forEachParam(*l, n, [&](int64_t e, int64_t p) { yv[e] = x->f[e] * sv[p]; });
  } else {
    forEachParam(*l, n, [&](int64_t e, int64_t p) {
      yv[e] = (float)(x->i[e] - (zv ? zv[p] : 0)) * sv[p];
    });
  }
  std::vector<Tensor> r;
  r.push_back(y.take());
  return r;
}

// Adapters (Note [Version adapters]).
// DequantizeLinear-19 allows float16/bfloat16 scales (and outputs); -13
// takes float only.
absl::Status dequantizeDown19(Node &n, AdapterContext &) {
  DataType t = adapters::operandElemType(n, 1);
  if (t != DataType::Float)
    return absl::FailedPreconditionError(absl::StrCat(
        "the scale is ", t == DataType::Undefined ? std::string("of unknown type")
                                                  : dataTypeName(t).str(),
        "; DequantizeLinear-13 takes a float scale only"));
  return absl::OkStatus();
}
absl::Status dequantizeDown21(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "DequantizeLinear", {{"block_size", AttrKind::Int, 0}});
}
absl::Status dequantizeDown23(Node &n, AdapterContext &c) {
  return scaleTypedAttrDown(n, c, "DequantizeLinear", "output_dtype");
}

void registerDequantizeLinear(OpRegistrar &r) {
  using adapters::noChange;
  r["DequantizeLinear"].infer(dequantizeRule).kernel(kDequantizeLinear);
  r["DequantizeLinear"].since(13).upgrade(noChange).downgrade(qdqDown13);
  r["DequantizeLinear"].since(19).upgrade(noChange).downgrade(dequantizeDown19);
  r["DequantizeLinear"].since(21).upgrade(noChange).downgrade(dequantizeDown21);
  r["DequantizeLinear"].since(23).upgrade(noChange).downgrade(dequantizeDown23);
}

//===--- DynamicQuantizeLinear ---------------------------------------------===//

void dynamicQuantizeRule(InferCtx &c) {
  c.setTensor(0, static_cast<int32_t>(DataType::Uint8), c.inShape(0));
  c.setTensor(1, static_cast<int32_t>(DataType::Float), Dims{});
  c.setTensor(2, static_cast<int32_t>(DataType::Uint8), Dims{});
}

/// uint8 quantization of float x over [min(0, min x), max(0, max x)]:
/// y_scale = (max - min) / 255 (1 when max = min), y_zero_point =
/// rint(clamp(-min / y_scale, 0, 255)), y = saturate(rint(x / y_scale) +
/// y_zero_point); all in float, NaN elements left out of min and max.
StatusOr<std::vector<Tensor>> kDynamicQuantizeLinear(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->dt != DataType::Float)
    return invalid(absl::StrCat("DynamicQuantizeLinear: x is ", typeStr(x->dt)));
  if (Status st = checkOutputSize(c, DataType::Uint8, x->dims); !st.ok()) return st;
  float lo = 0.f, hi = 0.f;
  for (float v : x->f) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  float scale = (hi == lo ? 1.f : hi - lo) / 255.f;
  float z = 0.f - lo / scale;
  z = std::nearbyint(z < 0.f ? 0.f : z > 255.f ? 255.f : z);
  int64_t zp = (int64_t)z;
  Arr y = Arr::make(DataType::Uint8, x->dims);
  for (size_t k = 0; k < x->f.size(); ++k) y.i[k] = saturateRound(x->f[k] / scale, zp, 0, 255);
  Arr ys = Arr::make(DataType::Float, {}), yz = Arr::make(DataType::Uint8, {});
  ys.f[0] = scale;
  yz.i[0] = zp;
  std::vector<Tensor> r;
  r.push_back(toTensor(y));
  r.push_back(toTensor(ys));
  r.push_back(toTensor(yz));
  return r;
}

void registerDynamicQuantizeLinear(OpRegistrar &r) {
  r["DynamicQuantizeLinear"].infer(dynamicQuantizeRule)
      .kernel(kDynamicQuantizeLinear);
}

//===--- MatMulInteger, QLinearMatMul --------------------------------------===//

/// MatMul's shapes: 1-D operands promoted ([K] -> [1, K] for A, [K, 1] for
/// B), batch dims broadcast.
struct MatMulShape {
  std::vector<int64_t> out, batch, oa, ob;
  int64_t M = 0, K = 0, N = 0;
};

StatusOr<MatMulShape> matmulShape(const KernelCall &c, llvm::ArrayRef<int64_t> a,
                                  llvm::ArrayRef<int64_t> b, llvm::StringRef aName,
                                  llvm::StringRef bName) {
  std::string op = c.opType.str();
  if (a.empty() || b.empty())
    return invalid(absl::StrCat(op, ": ", (a.empty() ? aName : bName).str(), " is a scalar"));
  std::vector<int64_t> ad = a, bd = b;
  if (a.size() == 1) ad.insert(ad.begin(), 1);
  if (b.size() == 1) bd.push_back(1);
  MatMulShape m;
  m.M = ad[ad.size() - 2];
  m.K = ad.back();
  m.N = bd.back();
  if (bd[bd.size() - 2] != m.K)
    return invalid(absl::StrCat(op, ": ", aName.str(), " ", dimsStr(a), " and ", bName.str(),
                                " ", dimsStr(b), " differ in K"));
  std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  auto batch = broadcastShapes(ab, bb);
  if (!batch)
    return invalid(absl::StrCat(op, ": the batch dims of ", aName.str(), " ", dimsStr(a),
                                " and ", bName.str(), " ", dimsStr(b), " do not broadcast"));
  m.batch = *batch;
  m.out = *batch;
  if (a.size() > 1) m.out.push_back(m.M);
  if (b.size() > 1) m.out.push_back(m.N);
  m.oa = broadcastOffsets(ab, m.batch);
  m.ob = broadcastOffsets(bb, m.batch);
  return m;
}

/// out = a x b over the batch (out zeroed by the caller); i-k-j order, so
/// the inner loop runs over contiguous rows.
template <typename T>
void matmulBatched(const MatMulShape &m, const T *a, const T *b, T *out) {
  int64_t nb = (int64_t)m.oa.size(), M = m.M, K = m.K, N = m.N;
  for (int64_t p = 0; p < nb; ++p) {
    const T *pa = a + m.oa[p] * M * K, *pb = b + m.ob[p] * K * N;
    T *po = out + p * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        T av = pa[i * K + k];
        const T *rb = pb + k * N;
        T *ro = po + i * N;
        for (int64_t j = 0; j < N; ++j) ro[j] = addWrap(ro[j], mulWrap(av, rb[j]));
      }
  }
}

/// x - zp over x's elements, zp broadcast to x's shape: a scalar, a 1-D
/// zero point per row of A ([M] read as [M, 1]) or per column of B ([N]),
/// or an N-D one of x's rank ([.., M, 1] / [.., 1, N]).
StatusOr<std::vector<int64_t>> subtractZeroPoint(const KernelCall &c, const Arr &x,
                                                 const Arr *zp, bool rows,
                                                 llvm::StringRef name) {
  std::vector<int64_t> r = x.i;
  if (!zp) return r;
  std::vector<int64_t> zd = zp->dims;
  if (zp->size() == 1) zd.assign(x.rank(), 1);
  else if (zd.size() == 1 && rows && x.rank() >= 2) zd.push_back(1);
  auto b = broadcastShapes(zd, x.dims);
  if (zd.size() > x.dims.size() || !b || *b != x.dims)
    return invalid(absl::StrCat(c.opType.str(), ": ", name.str(), " has shape ",
                                dimsStr(zp->dims), ", which does not apply ",
                                rows ? "per row" : "per column",
                                " to ", dimsStr(x.dims)));
  std::vector<int64_t> off = broadcastOffsets(zd, x.dims);
  for (size_t k = 0; k < r.size(); ++k) r[k] -= zp->i[off[k]];
  return r;
}

StatusOr<std::vector<Tensor>> kMatMulInteger(const KernelCall &c) {
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  auto az = optionalArr(c, 2), bz = optionalArr(c, 3);
  if (!az.ok()) return az.status();
  if (!bz.ok()) return bz.status();
  for (auto [arr, zp, name] : {std::make_tuple(&*a, &*az, "A"), std::make_tuple(&*b, &*bz, "B")}) {
    if (arr->dt != DataType::Int8 && arr->dt != DataType::Uint8)
      return invalid(absl::StrCat("MatMulInteger: ", name, " is ", typeStr(arr->dt)));
    if (*zp && (*zp)->dt != arr->dt)
      return invalid(absl::StrCat("MatMulInteger: the zero point of ", name, " is ",
                                  typeStr((*zp)->dt), ", ", name, " is ", typeStr(arr->dt)));
  }
  auto m = matmulShape(c, a->dims, b->dims, "A", "B");
  if (!m.ok()) return m.status();
  if (Status st = checkOutputSize(c, DataType::Int32, m->out); !st.ok()) return st;
  auto av = subtractZeroPoint(c, *a, *az ? &**az : nullptr, true, "a_zero_point");
  if (!av.ok()) return av.status();
  auto bv = subtractZeroPoint(c, *b, *bz ? &**bz : nullptr, false, "b_zero_point");
  if (!bv.ok()) return bv.status();
  Arr y = Arr::make(DataType::Int32, m->out);
  matmulBatched(*m, av->data(), bv->data(), y.i.data());
  return one(y);
}

/// A per-tensor or per-row/column parameter of QLinearMatMul: a scalar (or
/// one element) or 1-D with `n` elements.
Status checkVectorParam(const Arr &p, int64_t n, llvm::StringRef name, llvm::StringRef per) {
  if ((p.rank() <= 1 && p.size() == 1) || (p.rank() == 1 && p.dims[0] == n))
    return absl::OkStatus();
  return invalid(absl::StrCat("QLinearMatMul: ", name.str(), " has shape ", dimsStr(p.dims),
                              "; it is a scalar or 1-D with ", n, " elements (one per ",
                              per.str(), ")"));
}

/// y = saturate(rint((a - a_zero_point) x (b - b_zero_point) * a_scale *
/// b_scale / y_scale) + y_zero_point), the scales per tensor or per row of
/// a / column of b. Integer data multiply exactly (int64); float8 data
/// (opset 21) in double. The scale factor a_scale * b_scale / y_scale is
/// taken in float, as the reference does.
StatusOr<std::vector<Tensor>> kQLinearMatMul(const KernelCall &c) {
  std::vector<Arr> in;
  const char *names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                         "y_scale", "y_zero_point"};
  for (unsigned i = 0; i < 8; ++i) {
    if (!c.input(i))
      return invalid(absl::StrCat("QLinearMatMul: input '", names[i], "' is missing"));
    auto x = inputArr(c, i);
    if (!x.ok()) return x.status();
    in.push_back(std::move(*x));
  }
  const Arr &a = in[0], &as = in[1], &az = in[2], &b = in[3], &bs = in[4], &bz = in[5],
            &ys = in[6], &yz = in[7];
  auto dataOk = [](DataType t) {
    return t == DataType::Int8 || t == DataType::Uint8 || isFloat8(t);
  };
  for (unsigned i : {0u, 3u, 7u})
    if (!dataOk(in[i].dt))
      return invalid(absl::StrCat("QLinearMatMul: ", names[i], " is ", typeStr(in[i].dt)));
  for (unsigned i : {0u, 3u})
    if (in[i + 2].dt != in[i].dt)
      return invalid(absl::StrCat("QLinearMatMul: ", names[i + 2], " is ",
                                  typeStr(in[i + 2].dt), ", ", names[i], " is ",
                                  typeStr(in[i].dt)));
  for (unsigned i : {1u, 4u, 6u})
    if (in[i].kind() != CK::F32)
      return invalid(absl::StrCat("QLinearMatMul: ", names[i], " is ", typeStr(in[i].dt)));
  auto m = matmulShape(c, a.dims, b.dims, "a", "b");
  if (!m.ok()) return m.status();
  DataType out = yz.dt;
  if (Status st = checkOutputSize(c, out, m->out); !st.ok()) return st;
  int64_t M = a.rank() == 1 ? 1 : m->M, N = b.rank() == 1 ? 1 : m->N;
  struct Param {
    const Arr &p;
    int64_t n;
    const char *name, *per;
  } params[] = {{as, M, "a_scale", "row of a"},         {az, M, "a_zero_point", "row of a"},
                {bs, N, "b_scale", "column of b"},      {bz, N, "b_zero_point", "column of b"},
                {ys, 1, "y_scale", "tensor"},           {yz, 1, "y_zero_point", "tensor"}};
  for (const Param &p : params)
    if (Status st = checkVectorParam(p.p, p.n, p.name, p.per); !st.ok()) return st;
  // The product, per batch [M, N].
  int64_t cells = numElementsOf(m->out);
  std::vector<double> prod((size_t)cells);
  if (a.kind() == CK::I64 && b.kind() == CK::I64) {
    auto av = subtractZeroPoint(c, a, &az, true, "a_zero_point");
    if (!av.ok()) return av.status();
    auto bv = subtractZeroPoint(c, b, &bz, false, "b_zero_point");
    if (!bv.ok()) return bv.status();
    std::vector<int64_t> acc((size_t)cells, 0);
    matmulBatched(*m, av->data(), bv->data(), acc.data());
    for (int64_t k = 0; k < cells; ++k) prod[k] = (double)acc[k];
  } else {
    auto asDouble = [](const Arr &x, const Arr &zp, int64_t rows, bool perRow) {
      std::vector<double> r(x.size());
      int64_t cols = x.rank() >= 2 ? x.dims.back() : 1;
      auto val = [](const Arr &v, int64_t k) {
        return v.kind() == CK::F32 ? (double)v.f[k] : (double)v.i[k];
      };
      for (int64_t k = 0; k < x.size(); ++k) {
        int64_t p = zp.size() == 1 ? 0 : perRow ? (k / cols) % rows : k % cols;
        r[k] = val(x, k) - val(zp, p);
      }
      return r;
    };
    std::vector<double> av = asDouble(a, az, M, true), bv = asDouble(b, bz, N, false);
    matmulBatched(*m, av.data(), bv.data(), prod.data());
  }
  auto at = [](const Arr &p, int64_t k) { return p.f[p.size() == 1 ? 0 : k]; };
  auto range = intRange(out);
  Arr y = Arr::make(out, m->out);
  std::vector<float> f8(range ? 0 : (size_t)cells);
  for (int64_t k = 0; k < cells; ++k) {
    int64_t i = (k / N) % M, j = k % N;
    float factor = at(as, i) * at(bs, j) / ys.f[0];
    double v = prod[k] * (double)factor;
    if (range) {
      y.i[k] = saturateRound(v, yz.i[0], range->first, range->second);
    } else {
      f8[k] = (float)(v + (double)yz.f[0]);
    }
  }
  std::vector<Tensor> r;
  r.push_back(range ? toTensor(y) : float8Tensor(out, m->out, f8, true));
  return r;
}

void registerMatMulInteger(OpRegistrar &r) {
  // Their rule is MatMul's (NN.cpp); the registrar sets the kernel alone.
  r["MatMulInteger"].kernel(kMatMulInteger);
  r["QLinearMatMul"].kernel(kQLinearMatMul);
}

//===--- Registration ------------------------------------------------------===//

} // namespace

void registerQuantizationOps(OpRegistrar &r) {
  for (auto *reg : {registerQuantizeLinear, registerDequantizeLinear, registerDynamicQuantizeLinear,
                    registerMatMulInteger})
    reg(r);
}

} // namespace onnxir
