//===- Elementwise.cpp - Unary, binary and variadic math, logic -----------===//
//
// Elementwise: Add Sub Mul Div Mod Pow PRelu, the comparisons (Equal Less Greater
// LessOrEqual GreaterOrEqual), logic (And Or Xor Not), the bitwise ops (BitShift
// BitwiseAnd BitwiseOr BitwiseXor BitwiseNot), Sum Max Min Mean, Where, Clip,
// IsNaN IsInf, the unary math (Abs Neg Sign Sqrt Exp Log Reciprocal Floor Ceil
// Round Erf and the trigonometric and hyperbolic functions) and the activations
// (Relu Sigmoid Tanh LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus
// Softsign Mish Gelu Swish ThresholdedRelu Shrink). Cast, CastLike and BitCast
// are in Cast.cpp. After the helpers several ops share, one section per op,
// or per group of ops that share one implementation and differ by a lambda
// or a table entry, in the order above: its type and shape rule, its kernel,
// its version adapters, its expansion builder (Gelu-20) and its
// registration (registerElementwiseOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "ExpandSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelReuse.h"
#include "KernelSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;
using namespace expansions;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// Operand `i` cannot broadcast with the ones before it (from `first`): a
/// constant dim of the accumulated shape comes from one earlier operand, so
/// some earlier operand clashes with it on its own; names that pair.
void reportClash(InferCtx &c, unsigned first, unsigned i) {
  auto b = c.inShape(i);
  if (!b) return;
  for (unsigned j = first; j < i; ++j) {
    auto a = c.hasInput(j) ? c.inShape(j) : std::nullopt;
    if (!a) continue;
    if (auto k = broadcastClash(*a, *b)) {
      c.disagree("input " + std::to_string(j) + " " + typeStr(c, j) +
                 " and input " + std::to_string(i) + " " + typeStr(c, i) +
                 " do not broadcast: " + std::to_string((*a)[k->first]->value()) + " (dim " +
                 std::to_string(k->first) + ") against " +
                 std::to_string((*b)[k->second]->value()) + " (dim " +
                 std::to_string(k->second) + "), neither is 1");
      return;
    }
  }
}

/// The broadcast shape of operands [first, first+count), nullopt if a rank is
/// unknown or they cannot broadcast.
std::optional<Dims> broadcastInputs(InferCtx &c, unsigned first, unsigned count) {
  std::optional<Dims> acc = Dims{};
  for (unsigned i = first; i < first + count; ++i) {
    if (!c.hasInput(i)) continue;
    auto s = c.inShape(i);
    if (!s) return std::nullopt;
    acc = broadcast(c.ctx, *acc, *s);
    if (!acc) {
      reportClash(c, first, i);
      return std::nullopt;
    }
  }
  return acc;
}

/// Elementwise data for Add/Sub/Mul/Div/Mod/Max/Min on shape tensors.
void propagateArith(InferCtx &c, llvm::StringRef op) {
  const Dims *a = c.inData(0), *b = c.inData(1);
  if (!a || !b) return;
  auto sa = c.inShape(0), sb = c.inShape(1);
  if (!sa || !sb || sa->size() > 1 || sb->size() > 1) return;
  size_t n = std::max(a->size(), b->size());
  if (a->size() != n && a->size() != 1) return;
  if (b->size() != n && b->size() != 1) return;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *x = (*a)[a->size() == 1 ? 0 : i], *y = (*b)[b->size() == 1 ? 0 : i];
    const DimExpr *r = nullptr;
    if (x && y) {
      if (op == "Add") r = dimAdd(c.ctx, x, y);
      else if (op == "Sub") r = dimSub(c.ctx, x, y);
      else if (op == "Mul") r = dimMul(c.ctx, x, y);
      else if (op == "Div") {
        // Integer Div truncates; floor is the same for non-negative values
        // (Note [Dims are non-negative]), not for a difference such as
        // 1 - N; only fold constants otherwise.
        if (x->isConstant() && y->isConstant() && y->value() != 0)
          r = dimConst(c.ctx, x->value() / y->value());
        else if (y->isConstant() && y->value() > 0 && c.inElem(0) == kInt64 && dimNonNegative(x))
          r = dimFloorDiv(c.ctx, x, y);
      } else if (op == "Mod") {
        if (c.getInt("fmod", 0) == 0) r = dimMod(c.ctx, x, y);
      } else if (op == "Max") r = dimMax(c.ctx, {x, y});
      else if (op == "Min") r = dimMin(c.ctx, {x, y});
    }
    out.push_back(r);
  }
  c.setOutData(0, std::move(out));
}

/// Comparisons and logic on shape data give 0/1 data (bool tensors).
void propagateCompare(InferCtx &c, llvm::StringRef op) {
  const Dims *a = c.inData(0), *b = c.inData(1);
  if (!a || !b) return;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *x = (*a)[a->size() == 1 ? 0 : i], *y = (*b)[b->size() == 1 ? 0 : i];
    const DimExpr *r = nullptr;
    if (x && y) {
      const DimExpr *d = dimSub(c.ctx, x, y);
      if (d && d->isConstant()) {
        int64_t v = d->value();
        bool t = op == "Equal" ? v == 0 : op == "Less" ? v < 0 : op == "Greater" ? v > 0
               : op == "LessOrEqual" ? v <= 0 : v >= 0;
        if (op == "And" || op == "Or" || op == "Xor") {
          if (!x->isConstant() || !y->isConstant()) {
            out.push_back(nullptr);
            continue;
          }
          bool p = x->value() != 0, q = y->value() != 0;
          t = op == "And" ? (p && q) : op == "Or" ? (p || q) : (p != q);
        }
        r = c.c(t ? 1 : 0);
      } else if (d && op != "And" && op != "Or" && op != "Xor") {
        // Note [Dims are non-negative]: the sign of a symbolic difference
        // may still be known (N vs -1, torch's "no change" in expand sizes:
        // N+1 >= 1, so N != -1).
        bool ge1 = dimNonNegative(dimSub(c.ctx, d, c.c(1)));
        bool le1 = dimNonNegative(dimSub(c.ctx, dimNeg(c.ctx, d), c.c(1)));
        bool ge0 = ge1 || dimNonNegative(d), le0 = le1 || dimNonNegative(dimNeg(c.ctx, d));
        // (holds, fails) of `d op 0`.
        std::pair<bool, bool> known = op == "Equal"         ? std::make_pair(false, ge1 || le1)
                                      : op == "Less"        ? std::make_pair(le1, ge0)
                                      : op == "Greater"     ? std::make_pair(ge1, le0)
                                      : op == "LessOrEqual" ? std::make_pair(le0, ge1)
                                                            : std::make_pair(ge0, le1);
        if (known.first || known.second) r = c.c(known.first ? 1 : 0);
      }
    }
    out.push_back(r);
  }
  c.setOutData(0, std::move(out));
}

void binary(InferCtx &c, int32_t outElem, llvm::StringRef op) {
  int32_t el = outElem ? outElem : c.inElem(0);
  if (el < 0) el = c.inElem(1);
  if (c.opset < 7 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
                      op == "And" || op == "Or" || op == "Xor" || op == "Equal" ||
                      op == "Less" || op == "Greater" || op == "PRelu")) {
    // The legacy form: B is broadcast onto A when `broadcast` is set,
    // otherwise both have A's shape.
    c.setTensor(0, el, c.inShape(0));
    return;
  }
  c.setTensor(0, el, broadcastInputs(c, 0, 2));
  if (op != "") propagateArith(c, op);
}

/// The rule of the arithmetic ops (Add Sub Mul Div Mod): the broadcast
/// shape, and `op` on shape data.
Rule arithRule(const char *op) {
  return [op](InferCtx &c) { binary(c, 0, op); };
}

/// The rule of the binary ops whose result has the first operand's element
/// type (Pow PRelu BitShift BitwiseAnd BitwiseOr BitwiseXor): nothing before
/// that type is known.
void firstOperandTypeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  if (el < 0) return;
  binary(c, el, "");
}

/// The rule of the comparisons and the logic ops (And Or Xor): a bool result
/// of the broadcast shape, and 0/1 on shape data.
Rule compareRule(const char *op) {
  return [op](InferCtx &c) {
    binary(c, kBool, "");
    propagateCompare(c, op);
  };
}

template <typename T> constexpr bool isFloat = std::is_floating_point_v<T>;

enum class FloatOnly { Yes, No };

/// Applies f to every element; the result has the input's type.
template <typename F>
StatusOr<std::vector<Tensor>> unaryMap(const KernelCall &c, FloatOnly fo, F f) {
  // A float or double input read in place (Note [Inputs read in place]).
  if (const Tensor *t = c.input(0)) {
    CK k = computeKind(t->dataType());
    if (k == CK::F32 || k == CK::F64) {
      std::vector<Tensor> r;
      Status st = visitFloat(k, [&](auto tag) -> Status {
        using T = decltype(tag);
        auto a = viewTensor<T>(*t);
        if (!a.ok()) return a.status();
        // y[i] reads x[i] alone: it may take x's bytes when x dies here
        // (Note [Results in a dead input's buffer]).
        auto d = donatedInput(c, 0, a->dt, a->dims, sizeof(T));
        std::optional<OutBuf<T>> out;
        if (!d) out.emplace(a->dt, a->dims);
        const T *x = a->data();
        T *y = d ? reinterpret_cast<T *>(d->data) : out->data();
        int64_t n = d ? (int64_t)(d->size / sizeof(T)) : out->size();
        for (int64_t i = 0; i < n; ++i) {
          auto v = f(x[i]);
          if (!v) return invalid("undefined result");
          y[i] = *v;
        }
        r.push_back(d ? d->take(a->dt, a->dims) : out->take());
        return absl::OkStatus();
      });
      if (!st.ok()) return st;
      return r;
    }
  }
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  CK k = a->kind();
  if (fo == FloatOnly::Yes && k != CK::F32 && k != CK::F64)
    return unsupported("operator needs a floating point input");
  Status st = visitNumeric(k, [&](auto tag) -> Status {
    using T = decltype(tag);
    for (T &v : a->template vec<T>()) {
      auto r = f(v);
      if (!r) return invalid("undefined result");
      v = *r;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*a);
}

/// Float-only unary op from an expression of x (T float or double) and the
/// attributes SETUP reads.
#define FLOAT_UNARY_ATTR(NAME, SETUP, EXPR)                                       \
  StatusOr<std::vector<Tensor>> NAME(const KernelCall &c) {                       \
    SETUP;                                                                        \
    return unaryMap(c, FloatOnly::Yes, [&](auto x) -> std::optional<decltype(x)> { \
      using T = decltype(x);                                                      \
      if constexpr (isFloat<T>) { return (T)(EXPR); }                             \
      else return std::nullopt;                                                   \
    });                                                                           \
  }
#define FLOAT_UNARY(NAME, EXPR) FLOAT_UNARY_ATTR(NAME, (void)0, EXPR)

/// Output shape of a binary op, honouring opset < 7 legacy broadcasting (the
/// second operand aligned at `axis`). Adjusts b's dims for that case.
template <typename A>
StatusOr<std::vector<int64_t>> binaryShape(const KernelCall &c, const A &a, A &b) {
  if (c.opset < 7 && c.opset > 0) {
    if (!c.getInt("broadcast", 0)) {
      if (a.dims != b.dims) return invalid("shapes differ without broadcast");
      return a.dims;
    }
    if (const Attribute *ax = c.attr("axis")) {
      auto axis = normAxis(ax->i, a.rank());
      if (!axis || *axis + b.rank() > a.rank()) return invalid("bad legacy axis");
      while (b.rank() < a.rank() - *axis) b.dims.push_back(1);
    }
    if (b.rank() > a.rank()) return invalid("legacy broadcast needs rank(B) <= rank(A)");
  }
  auto s = broadcastShapes(a.dims, b.dims);
  if (!s) return invalid("shapes do not broadcast");
  return *s;
}

// Note [Broadcasting by runs]
//   A binary op's output is walked in runs along its innermost (coalesced)
//   dim, each input stepping 1 or 0 (broadcast) per element, instead of
//   through a table of one input offset per output element (8 bytes per
//   element and input, written then read). Adjacent dims merge when they
//   are contiguous in both inputs, so same-shape operands are one run, a
//   scalar operand steps 0 over one run, and a per-channel bias over
//   [N, C, H, W] gives runs of H * W. The elements and their order of
//   evaluation are unchanged.

/// out[i] = f(a[ia], b[ib]) with broadcasting (Note [Broadcasting by runs]);
/// T is the input compute type, O the output compute type. f returns
/// std::optional<O>.
template <typename T, typename O, typename F>
Status broadcastRuns(const T *va, llvm::ArrayRef<int64_t> ad, const T *vb,
                     llvm::ArrayRef<int64_t> bd, O *vo, llvm::ArrayRef<int64_t> od, F f) {
  int64_t total = numElementsOf(od);
  if (total <= 0) return absl::OkStatus();
  size_t r = od.size();
  // Strides of each input aligned to the output's rank, 0 where broadcast.
  auto stridesIn = [&](llvm::ArrayRef<int64_t> in) {
    std::vector<int64_t> st(r, 0);
    int64_t s = 1;
    for (size_t k = in.size(); k-- > 0;) {
      st[k + (r - in.size())] = in[k] == 1 ? 0 : s;
      s *= in[k];
    }
    return st;
  };
  std::vector<int64_t> sa = stridesIn(ad), sb = stridesIn(bd);
  // Coalesce from the innermost dim out: dims, strides (outermost first).
  std::vector<int64_t> dims, as, bs;
  for (size_t k = r; k-- > 0;) {
    if (od[k] == 1) continue;
    if (!dims.empty() && sa[k] == as.back() * dims.back() && sb[k] == bs.back() * dims.back()) {
      dims.back() *= od[k];
      continue;
    }
    dims.push_back(od[k]);
    as.push_back(sa[k]);
    bs.push_back(sb[k]);
  }
  if (dims.empty()) { // every dim is 1: one element
    dims.push_back(1);
    as.push_back(0);
    bs.push_back(0);
  }
  std::reverse(dims.begin(), dims.end());
  std::reverse(as.begin(), as.end());
  std::reverse(bs.begin(), bs.end());
  size_t n = dims.size();
  int64_t L = dims[n - 1], stepA = as[n - 1], stepB = bs[n - 1];
  std::vector<int64_t> idx(n, 0);
  int64_t offA = 0, offB = 0;
  for (int64_t o = 0; o < total; o += L) {
    const T *pa = va + offA, *pb = vb + offB;
    O *po = vo + o;
    for (int64_t j = 0; j < L; ++j) {
      auto v = f(pa[j * stepA], pb[j * stepB]);
      if (!v) return invalid("undefined result");
      po[j] = *v;
    }
    for (size_t k = n - 1; k-- > 0;) {
      offA += as[k];
      offB += bs[k];
      if (++idx[k] < dims[k]) break;
      offA -= as[k] * dims[k];
      offB -= bs[k] * dims[k];
      idx[k] = 0;
    }
  }
  return absl::OkStatus();
}

/// broadcastRuns over decoded arrays.
template <typename T, typename O, typename F>
Status broadcastLoop(const Arr &a, const Arr &b, Arr &out, F f) {
  return broadcastRuns<T, O>(a.vec<T>().data(), a.dims, b.vec<T>().data(), b.dims,
                             out.vec<O>().data(), out.dims, f);
}

enum class BinKind { Arith, Compare, Logic };

/// A float or double binary op read in place and written into the result's
/// bytes (Note [Inputs read in place]); `f(T, T, DataType) -> optional<T>`.
template <typename T, typename F>
StatusOr<std::vector<Tensor>> binaryInPlace(const KernelCall &c, F f) {
  auto a = viewTensor<T>(*c.input(0));
  if (!a.ok()) return a.status();
  auto b = viewTensor<T>(*c.input(1));
  if (!b.ok()) return b.status();
  auto shape = binaryShape(c, *a, *b);
  if (!shape.ok()) return shape.status();
  Status sz = checkOutputSize(c, a->dt, *shape);
  if (!sz.ok()) return sz;
  // An operand of the result's shape is read at the output's own index:
  // the result may take its bytes when it dies here (Note [Results in a
  // dead input's buffer]); a broadcast one is not.
  auto d = donatedInput(c, 0, a->dt, *shape, sizeof(T));
  if (!d) d = donatedInput(c, 1, a->dt, *shape, sizeof(T));
  std::optional<OutBuf<T>> out;
  if (!d) out.emplace(a->dt, *shape);
  DataType dt = a->dt;
  T *o = d ? reinterpret_cast<T *>(d->data) : out->data();
  Status st = broadcastRuns<T, T>(a->data(), a->dims, b->data(), b->dims, o, *shape,
                                  [&](T x, T y) { return f(x, y, dt); });
  if (!st.ok()) return st;
  std::vector<Tensor> r;
  r.push_back(d ? d->take(dt, *shape) : out->take());
  return r;
}

/// The compute kind of a binary op's two operands when both are one float
/// type (the in-place path), else None.
CK floatOperands(const KernelCall &c) {
  const Tensor *a = c.input(0), *b = c.input(1);
  if (!a || !b || a->dataType() != b->dataType()) return CK::None;
  CK k = computeKind(a->dataType());
  return k == CK::F32 || k == CK::F64 ? k : CK::None;
}

/// A binary op over same-typed operands. `f(T, T) -> optional<T or bool>`.
template <typename F>
StatusOr<std::vector<Tensor>> binary(const KernelCall &c, BinKind bk, F f) {
  if (bk == BinKind::Arith) {
    auto g = [&](auto x, auto y, DataType) { return std::optional<decltype(x)>((decltype(x))f(x, y)); };
    if (CK k = floatOperands(c); k == CK::F32) return binaryInPlace<float>(c, g);
    else if (k == CK::F64) return binaryInPlace<double>(c, g);
  }
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto b = inputArr(c, 1);
  if (!b.ok()) return b.status();
  if (a->dt != b->dt) return invalid("operand types differ");
  if (bk == BinKind::Logic && a->dt != DataType::Bool) return invalid("logic op needs bool");
  auto shape = binaryShape(c, *a, *b);
  if (!shape.ok()) return shape.status();
  Status sz = checkOutputSize(c, a->dt, *shape);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(bk == BinKind::Compare ? DataType::Bool : a->dt, *shape);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if (bk == BinKind::Compare)
      return broadcastLoop<T, int64_t>(*a, *b, out, [&](T x, T y) -> std::optional<int64_t> {
        return f(x, y) ? 1 : 0;
      });
    return broadcastLoop<T, T>(*a, *b, out, [&](T x, T y) -> std::optional<T> {
      return (T)f(x, y);
    });
  });
  if (!st.ok()) return st;
  return one(out);
}

/// Wrapping integer helpers over int64 (the narrow types wrap when stored).
inline int64_t wrapAdd(int64_t x, int64_t y) { return (int64_t)((uint64_t)x + (uint64_t)y); }
inline int64_t wrapSub(int64_t x, int64_t y) { return (int64_t)((uint64_t)x - (uint64_t)y); }
inline int64_t wrapMul(int64_t x, int64_t y) { return (int64_t)((uint64_t)x * (uint64_t)y); }

template <typename T> T addT(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>) return wrapAdd(x, y); else return x + y;
}
template <typename T> T subT(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>) return wrapSub(x, y); else return x - y;
}
template <typename T> T mulT(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>) return wrapMul(x, y); else return x * y;
}

/// Binary op whose f returns std::optional (may refuse).
template <typename F>
StatusOr<std::vector<Tensor>> binaryOpt(const KernelCall &c, F f) {
  if (CK k = floatOperands(c); k == CK::F32) return binaryInPlace<float>(c, f);
  else if (k == CK::F64) return binaryInPlace<double>(c, f);
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto b = inputArr(c, 1);
  if (!b.ok()) return b.status();
  if (a->dt != b->dt) return invalid("operand types differ");
  auto shape = binaryShape(c, *a, *b);
  if (!shape.ok()) return shape.status();
  Status sz = checkOutputSize(c, a->dt, *shape);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(a->dt, *shape);
  DataType dt = a->dt;
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    return broadcastLoop<T, T>(*a, *b, out, [&](T x, T y) { return f(x, y, dt); });
  });
  if (!st.ok()) return st;
  return one(out);
}

//===----------------------------------------------------------------------===//
// Facts and version adapters several sections set
//===----------------------------------------------------------------------===//
//
// Note [Op facts] (OpRegistry.h): the schemas do not say which ops work
// element by element, broadcast or commute; each section says it of its ops.
// The n-ary ops broadcast (numpy rules) from the version without the legacy
// `broadcast` attribute (Note [Legacy broadcast], AdapterSupport.h), Max,
// Min, Sum and Mean from 8 (their schemas did not change), PRelu's slope one
// way, and Clip's bounds (operands from 11) are scalars.
//
// Version adapters up to opset 9 (Note [Version adapters]). Opset 6 dropped
// consumed_inputs (Note [consumed_inputs], AdapterSupport.h); opset 7's numpy
// broadcasting replaced broadcast/axis (Note [Legacy broadcast],
// AdapterSupport.h): legacyBroadcastUp/Down.

//===--- Add, Sub, Mul ---===//

StatusOr<std::vector<Tensor>> kAdd(const KernelCall &c) {
  return binary(c, BinKind::Arith, [](auto x, auto y) { return addT(x, y); });
}

StatusOr<std::vector<Tensor>> kSub(const KernelCall &c) {
  return binary(c, BinKind::Arith, [](auto x, auto y) { return subT(x, y); });
}

StatusOr<std::vector<Tensor>> kMul(const KernelCall &c) {
  return binary(c, BinKind::Arith, [](auto x, auto y) { return mulT(x, y); });
}

void registerAddSubMul(OpRegistrar &r) {
  r["Add"].infer(arithRule("Add")).kernel(kAdd);
  r["Sub"].infer(arithRule("Sub")).kernel(kSub);
  r["Mul"].infer(arithRule("Mul")).kernel(kMul);
  for (const char *op : {"Add", "Sub", "Mul"}) {
    r[op].elementwise().since(firstVersionWithoutAttribute(op, "broadcast")).broadcasting();
    r[op].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
    r[op].since(7).upgrade(adapters::legacyBroadcastUp).downgrade(adapters::legacyBroadcastDown);
  }
  r["Add"].commutative();
  r["Mul"].commutative();
}

//===--- Div ---===//

/// Bit width of an integer type stored in int64.
unsigned intBits(DataType dt) { return dataTypeBits(dt); }

/// Sign-extends or zero-extends v to the element type's range.
int64_t wrapTo(int64_t v, DataType dt) {
  unsigned bits = intBits(dt);
  if (dt == DataType::Bool) return v != 0;
  if (bits >= 64 || bits == 0) return v;
  uint64_t mask = (1ULL << bits) - 1, u = (uint64_t)v & mask;
  if (isSignedInteger(dt) && (u >> (bits - 1))) return (int64_t)(u | ~mask);
  return (int64_t)u;
}

StatusOr<std::vector<Tensor>> kDiv(const KernelCall &c) {
  return binaryOpt(c, [](auto x, auto y, DataType dt) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) return x / y;
    else {
      if (y == 0) return std::nullopt;
      if constexpr (std::is_signed_v<T>) {
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return x;
        // Truncates toward zero; results wrap to the element type when stored.
        return wrapTo(x / y, dt);
      } else return x / y;
    }
  });
}

void registerDiv(OpRegistrar &r) {
  r["Div"].infer(arithRule("Div")).kernel(kDiv);
  r["Div"].elementwise().since(firstVersionWithoutAttribute("Div", "broadcast")).broadcasting();
  r["Div"].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
  r["Div"].since(7).upgrade(adapters::legacyBroadcastUp).downgrade(adapters::legacyBroadcastDown);
}

//===--- Mod ---===//

StatusOr<std::vector<Tensor>> kMod(const KernelCall &c) {
  bool fmodMode = c.getInt("fmod", 0);
  return binaryOpt(c, [&](auto x, auto y, DataType) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) {
      T r = std::fmod(x, y);
      if (!fmodMode && r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    } else {
      if (y == 0) return std::nullopt;
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return T(0);
        T r = x % y;
        if (!fmodMode && r != 0 && ((r < 0) != (y < 0))) r += y;
        return r;
      } else return x % y;
    }
  });
}

void registerMod(OpRegistrar &r) {
  r["Mod"].infer(arithRule("Mod")).kernel(kMod);
  r["Mod"].elementwise().broadcasting();
}

//===--- Pow ---===//

StatusOr<std::vector<Tensor>> kPow(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto b = inputArr(c, 1);
  if (!b.ok()) return b.status();
  CK ka = a->kind(), kb = b->kind();
  if (ka == CK::Str || kb == CK::Str || ka == CK::None || kb == CK::None)
    return unsupported("Pow types");
  auto shape = binaryShape(c, *a, *b);
  if (!shape.ok()) return shape.status();
  Status sz = checkOutputSize(c, a->dt, *shape);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(a->dt, *shape);
  bool intBase = ka == CK::I64 || ka == CK::U64;
  bool intExp = kb == CK::I64 || kb == CK::U64;
  if (intBase && intExp) {
    // Exact integer power with wraparound (numpy integer power).
    auto ea = convertArr(*a, DataType::Int64), eb = convertArr(*b, DataType::Int64);
    if (!ea.ok() || !eb.ok()) return unsupported("Pow conversion");
    Arr o64 = Arr::make(DataType::Int64, *shape);
    Status st = broadcastLoop<int64_t, int64_t>(*ea, *eb, o64, [](int64_t x, int64_t y)
                                                    -> std::optional<int64_t> {
      if (y < 0) return std::nullopt;
      int64_t r = 1;
      while (y) {
        if (y & 1) r = wrapMul(r, x);
        x = wrapMul(x, x);
        y >>= 1;
      }
      return r;
    });
    if (!st.ok()) return st;
    if (ka == CK::U64) for (size_t k = 0; k < out.u.size(); ++k) out.u[k] = (uint64_t)o64.i[k];
    else out.i = std::move(o64.i);
    return one(out);
  }
  if (ka == CK::F32 && (kb == CK::F32)) {
    Status st = broadcastLoop<float, float>(*a, *b, out, [](float x, float y)
                                               -> std::optional<float> { return std::pow(x, y); });
    if (!st.ok()) return st;
    return one(out);
  }
  // Mixed types: numpy promotes to double, then the result is cast back.
  auto da = convertArr(*a, DataType::Double), db = convertArr(*b, DataType::Double);
  if (!da.ok() || !db.ok()) return unsupported("Pow conversion");
  Arr od = Arr::make(DataType::Double, *shape);
  Status st = broadcastLoop<double, double>(*da, *db, od, [](double x, double y)
                                                -> std::optional<double> { return std::pow(x, y); });
  if (!st.ok()) return st;
  if (intBase)
    for (double v : od.d)
      if (!std::isfinite(v) || std::abs(v) > 9.2e18) return invalid("Pow overflow");
  auto back = convertArr(od, a->dt);
  if (!back.ok()) return back.status();
  return one(*back);
}

// Pow-12 lets the exponent have its own type; Pow-7 has one type for both.
absl::Status powDown12(Node &n, AdapterContext &) {
  DataType x = adapters::operandElemType(n, 0), y = adapters::operandElemType(n, 1);
  if (x != DataType::Undefined && y != DataType::Undefined && x != y)
    return absl::FailedPreconditionError(absl::StrCat(
        "the base is ", dataTypeName(x).str(), " and the exponent ", dataTypeName(y).str(),
        "; Pow-7 needs one type"));
  return absl::OkStatus();
}

void registerPow(OpRegistrar &r) {
  r["Pow"].infer(firstOperandTypeRule).kernel(kPow);
  r["Pow"].elementwise().since(firstVersionWithoutAttribute("Pow", "broadcast")).broadcasting();
  r["Pow"].since(7).upgrade(adapters::legacyBroadcastUp).downgrade(adapters::legacyBroadcastDown);
  r["Pow"].since(12).upgrade(adapters::noChange).downgrade(powDown12);
}

//===--- PRelu ---===//

StatusOr<std::vector<Tensor>> kPRelu(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto b = inputArr(c, 1);
  if (!b.ok()) return b.status();
  if (a->dt != b->dt) return invalid("PRelu types differ");
  if (c.opset > 0 && c.opset < 7) return unsupported("legacy PRelu");
  auto s = broadcastShapes(a->dims, b->dims);
  if (!s || *s != a->dims) return invalid("PRelu slope does not broadcast");
  Arr out = Arr::make(a->dt, *s);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    return broadcastLoop<T, T>(*a, *b, out, [](T x, T y) -> std::optional<T> {
      return x < T(0) ? mulT(x, y) : x;
    });
  });
  if (!st.ok()) return st;
  return one(out);
}

// PRelu-7 broadcasts the slope to X the numpy way; PRelu-6 defines a slope of
// one element or (implicitly) of X's shape only (Caffe2 applied a [C] slope
// per channel of NCHW, which numpy broadcasting would put on the last axis).
// Both ways a node converts when its slope is one of those two.
absl::Status preluSlopeLegacy(Node &n, AdapterContext &) {
  const Type *tx = n.numOperands() > 0 && n.operand(0) ? n.operand(0)->type() : nullptr;
  const Type *ts = n.numOperands() > 1 && n.operand(1) ? n.operand(1)->type() : nullptr;
  Tensor scratch;
  const Tensor *k = n.numOperands() > 1 ? constantOf(n.operand(1), scratch) : nullptr;
  if ((k && k->numElements() == 1) || (ts && ts->hasShape() && ts->numElements() == 1))
    return absl::OkStatus();
  auto noUnknown = [](const Type *t) {
    return std::none_of(t->dims().begin(), t->dims().end(),
                        [](const Dim &d) { return d.kind == Dim::Kind::Unknown; });
  };
  if (tx && ts && tx->hasShape() && ts->hasShape() && noUnknown(tx) && tx->dims() == ts->dims())
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "PRelu-6 defines only a slope of one element or of X's shape, PRelu-7 broadcasts it the "
      "numpy way; the slope ",
      ts && ts->hasShape() ? "of type " + ts->str() : std::string("of unknown shape"),
      " with X ", tx && tx->hasShape() ? "of type " + tx->str() : std::string("of unknown shape"),
      " may mean otherwise (run infer-shapes first if the shapes are unknown)"));
}

// Up, a slope of X's channel count [C] (as Caffe2 and PyTorch's opset-6
// exports meant it: per channel of X's axis 1, which their reference outputs
// show) becomes the numpy form [C, 1, ..., 1]; for X of rank 2 the two
// readings agree already.
absl::Status preluUp7(Node &n, AdapterContext &c) {
  if (preluSlopeLegacy(n, c).ok()) return absl::OkStatus();
  const Type *tx = n.numOperands() > 0 && n.operand(0) ? n.operand(0)->type() : nullptr;
  const Type *ts = n.numOperands() > 1 && n.operand(1) ? n.operand(1)->type() : nullptr;
  Tensor scratch;
  const Tensor *k = n.numOperands() > 1 ? constantOf(n.operand(1), scratch) : nullptr;
  int64_t channels = k && k->dims().size() == 1 ? k->dims()[0]
                     : ts && ts->hasShape() && ts->rank() == 1 && ts->dims()[0].isKnown()
                         ? ts->dims()[0].value
                         : -1;
  if (tx && tx->hasShape() && tx->rank() >= 2 && tx->dims()[1].isKnown() && channels >= 0 &&
      channels == tx->dims()[1].value) {
    if (c.checkOnly || tx->rank() == 2) return absl::OkStatus();
    std::vector<int64_t> d{channels};
    d.resize(tx->rank() - 1, 1);
    Value *old = n.operand(1);
    if (k) { // a constant slope: a constant of the new shape
      Tensor t = *k;
      t.setDims(d);
      Value *v = adapters::newConstant(n, c, old->name().str() + "_per_channel", std::move(t));
      if (!v) return absl::InternalError("no constant for the per-channel slope");
      n.setOperand(1, v);
      adapters::eraseIfDeadConstant(old);
      return absl::OkStatus();
    }
    // A slope fed at run time (an input, or an initializer an input may
    // override): reshaped in the graph (Reshape-5 on: an operand shape).
    Tensor shape;
    shape.setDataType(DataType::Int64);
    shape.setDims({(int64_t)d.size()});
    shape.setTyped(Tensor::TypedField::Int64);
    shape.int64Data.mut() = d;
    Value *sv = adapters::newConstant(n, c, old->name().str() + "_per_channel_shape",
                                      std::move(shape));
    if (!sv) return absl::InternalError("no constant for the per-channel shape");
    Node *rs = n.getGraph()->createNode("Reshape", {old, sv}, 1, &n, "",
                                        old->name().str() + "_per_channel");
    n.setOperand(1, rs->result(0));
    return absl::OkStatus();
  }
  return preluSlopeLegacy(n, c);
}

void registerPRelu(OpRegistrar &r) {
  r["PRelu"].infer(firstOperandTypeRule).kernel(kPRelu);
  r["PRelu"].elementwise().since(7).broadcasting(); // PRelu-6: a slope of one element
  r["PRelu"].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
  r["PRelu"].since(7).upgrade(preluUp7).downgrade(preluSlopeLegacy);
}

//===--- Equal, Less, Greater, LessOrEqual, GreaterOrEqual ---===//

template <typename T> bool lt(T x, T y) { return x < y; }

StatusOr<std::vector<Tensor>> kEqual(const KernelCall &c) {
  // Strings (opset 19) compare by value.
  if (c.input(0) && c.input(0)->dataType() == DataType::String) {
    auto a = inputArr(c, 0), b = inputArr(c, 1);
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    auto s = broadcastShapes(a->dims, b->dims);
    if (!s || b->dt != DataType::String) return invalid("Equal shapes");
    Status sz = checkOutputSize(c, DataType::Bool, *s);
    if (!sz.ok()) return sz;
    Arr out = Arr::make(DataType::Bool, *s);
    auto oa = broadcastOffsets(a->dims, *s), ob = broadcastOffsets(b->dims, *s);
    for (size_t k = 0; k < out.i.size(); ++k) out.i[k] = a->s[oa[k]] == b->s[ob[k]];
    return one(out);
  }
  return binary(c, BinKind::Compare, [](auto x, auto y) { return x == y; });
}
StatusOr<std::vector<Tensor>> kLess(const KernelCall &c) {
  return binary(c, BinKind::Compare, [](auto x, auto y) { return x < y; });
}
StatusOr<std::vector<Tensor>> kGreater(const KernelCall &c) {
  return binary(c, BinKind::Compare, [](auto x, auto y) { return x > y; });
}
StatusOr<std::vector<Tensor>> kLessOrEqual(const KernelCall &c) {
  return binary(c, BinKind::Compare, [](auto x, auto y) { return x <= y; });
}
StatusOr<std::vector<Tensor>> kGreaterOrEqual(const KernelCall &c) {
  return binary(c, BinKind::Compare, [](auto x, auto y) { return x >= y; });
}

// Note [Comparisons below opset 12]
// GreaterOrEqual and LessOrEqual first exist at opset 12. Their function
// body, Or(Greater(a, b), Equal(a, b)), is exact for every type, NaN
// included (each comparison of a NaN is false), but valid only from opset
// 11: Equal-7 takes bool, int32 and int64, no float type. So going below 12
// the node turns into a form valid at the target (the first version's
// downgrade, which convert-opset prefers to the body):
//  - at 11 the body: the node becomes Greater (Less), Or'ed with a new
//    Equal(a, b);
//  - below 11, integer operands: a >= b is Not(Less(a, b)) (a <= b
//    Not(Greater(a, b))); Less and Greater take integers from opset 9, and
//    the type check of the walk refuses them at 7 and 8;
//  - below 11, float operands: Not(Less(a, b)) would be true where a or b is
//    NaN, so the NaNs are Or'ed in before the Not:
//    Not(Or(Or(Less(a, b), nan(a)), nan(b))), with nan(x) = IsNaN(x) from
//    opset 9 and Not(Or(Less(x, +inf), Greater(x, -inf))) at 7 and 8 (any
//    other x is below +inf or above -inf); a constant operand without NaN
//    needs no nan(x);
//  - below 11, an unknown element type is refused (the exact form depends
//    on it).
// Every form broadcasts as the op does: nan(x) has x's shape, which the Or
// broadcasts to that of the comparison.
template <bool GE> absl::Status orEqualDown12(Node &n, AdapterContext &c) {
  const char *strict = GE ? "Greater" : "Less", *inverse = GE ? "Less" : "Greater";
  if (n.numOperands() != 2 || !n.operand(0) || !n.operand(1) || n.numResults() != 1 ||
      !n.result(0))
    return absl::FailedPreconditionError("not two operands and one result");
  Value *a = n.operand(0), *b = n.operand(1);
  Graph &g = *n.getGraph();
  if (c.target >= 11) {
    c.newOpType = strict;
    if (c.checkOnly) return absl::OkStatus();
    Node *eq = g.createNode("Equal", {a, b}, 1, &n);
    n.setOpType(strict);
    adapters::wrapResult(n, "Or", {eq->result(0)});
    return absl::OkStatus();
  }
  DataType dt = adapters::operandElemType(n, 0);
  if (dt == DataType::Undefined) dt = adapters::operandElemType(n, 1);
  if (dt == DataType::Undefined)
    return absl::FailedPreconditionError(absl::StrCat(
        "the operands' element type is unknown, and the exact form below opset 11 depends on "
        "it (Not(", inverse, ") for integers, with the NaNs taken out for floats): run "
        "infer-shapes first"));
  bool isFloat = dt == DataType::Float || dt == DataType::Double || dt == DataType::Float16 ||
                 dt == DataType::BFloat16;
  c.newOpType = inverse;
  if (c.checkOnly) return absl::OkStatus();
  // nan(x), made before the node (a constant without NaN needs none).
  auto nanOf = [&](Value *x) -> Value * {
    Tensor scratch;
    if (const Tensor *t = constantOf(x, scratch))
      if (auto vs = t->values<double>();
          vs.ok() && std::none_of(vs->begin(), vs->end(), [](double v) { return std::isnan(v); }))
        return nullptr;
    if (c.target >= 9) return g.createNode("IsNaN", {x}, 1, &n)->result(0);
    double inf = std::numeric_limits<double>::infinity();
    Value *hi = adapters::scalarConstant(n, c, "plus_inf", dt, inf);
    Value *lo = adapters::scalarConstant(n, c, "minus_inf", dt, -inf);
    Value *below = g.createNode("Less", {x, hi}, 1, &n)->result(0);
    Value *above = g.createNode("Greater", {x, lo}, 1, &n)->result(0);
    Value *ordered = g.createNode("Or", {below, above}, 1, &n)->result(0);
    return g.createNode("Not", {ordered}, 1, &n)->result(0);
  };
  std::vector<Value *> nans;
  if (isFloat) {
    if (Value *v = nanOf(a)) nans.push_back(v);
    if (b != a) // one check for Op(x, x)
      if (Value *v = nanOf(b)) nans.push_back(v);
  }
  n.setOpType(inverse);
  Node *last = &n;
  for (Value *v : nans) last = adapters::wrapResult(*last, "Or", {v});
  adapters::wrapResult(*last, "Not", {});
  return absl::OkStatus();
}

void registerComparisons(OpRegistrar &r) {
  r["Equal"].infer(compareRule("Equal")).kernel(kEqual);
  r["Less"].infer(compareRule("Less")).kernel(kLess);
  r["Greater"].infer(compareRule("Greater")).kernel(kGreater);
  r["LessOrEqual"].infer(compareRule("LessOrEqual")).kernel(kLessOrEqual);
  r["GreaterOrEqual"].infer(compareRule("GreaterOrEqual")).kernel(kGreaterOrEqual);
  for (const char *op : {"Equal", "Greater", "Less"}) {
    r[op].elementwise().since(firstVersionWithoutAttribute(op, "broadcast")).broadcasting();
    r[op].since(7).upgrade(adapters::legacyBroadcastUp).downgrade(adapters::legacyBroadcastDown);
  }
  for (const char *op : {"GreaterOrEqual", "LessOrEqual"}) r[op].elementwise().broadcasting();
  r["Equal"].commutative();
  r["GreaterOrEqual"].since(12).downgrade(orEqualDown12<true>);
  r["LessOrEqual"].since(12).downgrade(orEqualDown12<false>);
}

//===--- And, Or, Xor ---===//

StatusOr<std::vector<Tensor>> kAnd(const KernelCall &c) {
  return binary(c, BinKind::Logic, [](auto x, auto y) { return (decltype(x))(x && y); });
}
StatusOr<std::vector<Tensor>> kOr(const KernelCall &c) {
  return binary(c, BinKind::Logic, [](auto x, auto y) { return (decltype(x))(x || y); });
}
StatusOr<std::vector<Tensor>> kXor(const KernelCall &c) {
  return binary(c, BinKind::Logic, [](auto x, auto y) { return (decltype(x))((x != 0) != (y != 0)); });
}

void registerLogic(OpRegistrar &r) {
  r["And"].infer(compareRule("And")).kernel(kAnd);
  r["Or"].infer(compareRule("Or")).kernel(kOr);
  r["Xor"].infer(compareRule("Xor")).kernel(kXor);
  for (const char *op : {"And", "Or", "Xor"}) {
    r[op].elementwise().since(firstVersionWithoutAttribute(op, "broadcast")).broadcasting();
    r[op].commutative();
    r[op].since(7).upgrade(adapters::legacyBroadcastUp).downgrade(adapters::legacyBroadcastDown);
  }
}

//===--- BitShift ---===//

StatusOr<std::vector<Tensor>> kBitShift(const KernelCall &c) {
  bool left = c.getString("direction", "") == "LEFT";
  if (c.input(0) && !isUnsignedInteger(c.input(0)->dataType()))
    return invalid("BitShift needs unsigned integers");
  return binaryOpt(c, [&](auto x, auto y, DataType dt) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) return std::nullopt;
    else {
      uint64_t u = (uint64_t)x, s = (uint64_t)y;
      if (s >= dataTypeBits(dt)) return T(0);
      return (T)(left ? u << s : u >> s);
    }
  });
}

void registerBitShift(OpRegistrar &r) {
  r["BitShift"].infer(firstOperandTypeRule).kernel(kBitShift);
  r["BitShift"].elementwise().broadcasting();
}

//===--- BitwiseAnd, BitwiseOr, BitwiseXor ---===//

/// Bitwise ops on integers (results wrap on store).
template <typename F> StatusOr<std::vector<Tensor>> bitwise(const KernelCall &c, F f) {
  if (c.input(0) && computeKind(c.input(0)->dataType()) != CK::I64 &&
      computeKind(c.input(0)->dataType()) != CK::U64)
    return invalid("bitwise op needs integers");
  return binaryOpt(c, [&](auto x, auto y, DataType) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) return std::nullopt;
    else return (T)f((uint64_t)x, (uint64_t)y);
  });
}
StatusOr<std::vector<Tensor>> kBitwiseAnd(const KernelCall &c) {
  return bitwise(c, [](uint64_t x, uint64_t y) { return x & y; });
}
StatusOr<std::vector<Tensor>> kBitwiseOr(const KernelCall &c) {
  return bitwise(c, [](uint64_t x, uint64_t y) { return x | y; });
}
StatusOr<std::vector<Tensor>> kBitwiseXor(const KernelCall &c) {
  return bitwise(c, [](uint64_t x, uint64_t y) { return x ^ y; });
}

void registerBitwise(OpRegistrar &r) {
  r["BitwiseAnd"].infer(firstOperandTypeRule).kernel(kBitwiseAnd);
  r["BitwiseOr"].infer(firstOperandTypeRule).kernel(kBitwiseOr);
  r["BitwiseXor"].infer(firstOperandTypeRule).kernel(kBitwiseXor);
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    r[op].elementwise().broadcasting().commutative();
}

//===--- BitwiseNot ---===//

StatusOr<std::vector<Tensor>> kBitwiseNot(const KernelCall &c) {
  return unaryMap(c, FloatOnly::No, [](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) return std::nullopt;
    else return (T)~(uint64_t)x;
  });
}

void registerBitwiseNot(OpRegistrar &r) {
  r["BitwiseNot"].infer(sameAsInput).kernel(kBitwiseNot);
  r["BitwiseNot"].elementwise().shapePreserving();
}

//===--- Not ---===//

StatusOr<std::vector<Tensor>> kNot(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->dt != DataType::Bool) return invalid("Not needs bool");
  for (int64_t &v : a->i) v = !v;
  return one(*a);
}

void registerNot(OpRegistrar &r) {
  r["Not"] = [](InferCtx &c) {
    sameAsInput(c);
    if (const Dims *d = c.inData(0)) {
      Dims o;
      for (const DimExpr *e : *d)
        o.push_back(e && e->isConstant() ? c.c(e->value() == 0) : nullptr);
      c.setOutData(0, o);
    }
  };
  r["Not"] = kNot;
  r["Not"].elementwise().shapePreserving();
}

//===--- Sum, Max, Min, Mean ---===//

void variadicRule(InferCtx &c) {
  int32_t el = -1;
  for (unsigned i = 0; i < c.numInputs() && el < 0; ++i) el = c.inElem(i);
  if (c.opset < 8 && c.numInputs() > 1) {
    // Before opset 8 the inputs of Sum/Max/Min/Mean have equal shapes.
    for (unsigned i = 0; i < c.numInputs(); ++i)
      if (auto s = c.inShape(i)) return c.setTensor(0, el, s);
    return c.setTensor(0, el, std::nullopt);
  }
  c.setTensor(0, el, broadcastInputs(c, 0, c.numInputs()));
  if (c.numInputs() == 2 && (c.node.opType() == "Max" || c.node.opType() == "Min"))
    propagateArith(c, c.node.opType());
}

template <typename F>
StatusOr<std::vector<Tensor>> variadic(const KernelCall &c, F f, bool mean = false) {
  if (c.inputs.empty()) return invalid("no inputs");
  auto acc = inputArr(c, 0);
  if (!acc.ok()) return acc.status();
  if (mean && acc->kind() != CK::F32 && acc->kind() != CK::F64)
    return unsupported("Mean of integers");
  for (unsigned k = 1; k < c.inputs.size(); ++k) {
    auto b = inputArr(c, k);
    if (!b.ok()) return b.status();
    if (b->dt != acc->dt) return invalid("operand types differ");
    std::vector<int64_t> shape;
    if (c.opset > 0 && c.opset < 8) {
      if (b->dims != acc->dims) return invalid("shapes differ");
      shape = acc->dims;
    } else {
      auto s = broadcastShapes(acc->dims, b->dims);
      if (!s) return invalid("shapes do not broadcast");
      shape = *s;
    }
    Status sz = checkOutputSize(c, acc->dt, shape);
    if (!sz.ok()) return sz;
    Arr out = Arr::make(acc->dt, shape);
    Status st = visitNumeric(acc->kind(), [&](auto tag) -> Status {
      using T = decltype(tag);
      return broadcastLoop<T, T>(*acc, *b, out, [&](T x, T y) -> std::optional<T> {
        return f(x, y);
      });
    });
    if (!st.ok()) return st;
    *acc = std::move(out);
  }
  if (mean) {
    size_t n = c.inputs.size();
    for (float &v : acc->f) v /= (float)n;
    for (double &v : acc->d) v /= (double)n;
  }
  return one(*acc);
}

template <typename T> T maxT(T x, T y) {
  if constexpr (isFloat<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  }
  return x < y ? y : x;
}
template <typename T> T minT(T x, T y) {
  if constexpr (isFloat<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  }
  return y < x ? y : x;
}

StatusOr<std::vector<Tensor>> kMax(const KernelCall &c) {
  return variadic(c, [](auto x, auto y) { return maxT(x, y); });
}
StatusOr<std::vector<Tensor>> kMin(const KernelCall &c) {
  return variadic(c, [](auto x, auto y) { return minT(x, y); });
}
StatusOr<std::vector<Tensor>> kSum(const KernelCall &c) {
  return variadic(c, [](auto x, auto y) { return addT(x, y); });
}
StatusOr<std::vector<Tensor>> kMean(const KernelCall &c) {
  return variadic(c, [](auto x, auto y) { return addT(x, y); }, true);
}

void registerVariadic(OpRegistrar &r) {
  r["Sum"].infer(variadicRule).kernel(kSum);
  r["Max"].infer(variadicRule).kernel(kMax);
  r["Min"].infer(variadicRule).kernel(kMin);
  r["Mean"].infer(variadicRule).kernel(kMean);
  for (const char *op : {"Max", "Min", "Sum", "Mean"}) {
    r[op].elementwise().since(8).broadcasting();
    r[op].commutative();
    r[op].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
    // Opset 8 let them broadcast (their schemas did not change): going
    // down, every operand must have the same shape.
    r[op].since(8).upgrade(adapters::noChange).downgrade(adapters::sameShapesDown);
  }
}

//===--- Where ---===//

/// Where on shape data: each element chosen by a known condition (or equal
/// in both branches); torch's expand writes its sizes as Where(size == -1,
/// 1, size).
void propagateWhere(InferCtx &c) {
  const Dims *cond = c.inData(0), *x = c.inData(1), *y = c.inData(2);
  if (!cond || !x || !y) return;
  for (unsigned i = 0; i < 3; ++i) {
    auto s = c.inShape(i);
    if (!s || s->size() > 1) return;
  }
  size_t n = std::max({cond->size(), x->size(), y->size()});
  for (const Dims *d : {cond, x, y})
    if (d->size() != n && d->size() != 1) return;
  auto at = [&](const Dims *d, size_t i) { return (*d)[d->size() == 1 ? 0 : i]; };
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *k = at(cond, i), *a = at(x, i), *b = at(y, i);
    const DimExpr *r = nullptr;
    if (k && k->isConstant()) r = k->value() != 0 ? a : b;
    else if (a && a == b) r = a;
    out.push_back(r);
  }
  c.setOutData(0, std::move(out));
}

StatusOr<std::vector<Tensor>> kWhere(const KernelCall &c) {
  auto cond = inputArr(c, 0), x = inputArr(c, 1), y = inputArr(c, 2);
  if (!cond.ok()) return cond.status();
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  if (cond->dt != DataType::Bool || x->dt != y->dt) return invalid("Where types");
  auto s1 = broadcastShapes(cond->dims, x->dims);
  if (!s1) return invalid("Where shapes");
  auto s = broadcastShapes(*s1, y->dims);
  if (!s) return invalid("Where shapes");
  Status sz = checkOutputSize(c, x->dt, *s);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(x->dt, *s);
  auto oc = broadcastOffsets(cond->dims, *s), ox = broadcastOffsets(x->dims, *s),
       oy = broadcastOffsets(y->dims, *s);
  auto pick = [&](auto &dst, const auto &vx, const auto &vy) {
    for (size_t k = 0; k < dst.size(); ++k)
      dst[k] = cond->i[oc[k]] ? vx[ox[k]] : vy[oy[k]];
  };
  switch (x->kind()) {
  case CK::F32: pick(out.f, x->f, y->f); break;
  case CK::F64: pick(out.d, x->d, y->d); break;
  case CK::I64: pick(out.i, x->i, y->i); break;
  case CK::U64: pick(out.u, x->u, y->u); break;
  case CK::Str: pick(out.s, x->s, y->s); break;
  default: return unsupported("Where type");
  }
  return one(out);
}

void registerWhere(OpRegistrar &r) {
  r["Where"] = [](InferCtx &c) {
    int32_t el = c.inElem(1);
    if (el < 0) el = c.inElem(2);
    c.setTensor(0, el, broadcastInputs(c, 0, 3));
    propagateWhere(c);
  };
  r["Where"] = kWhere;
  r["Where"].elementwise().broadcasting();
}

//===--- Clip ---===//

StatusOr<std::vector<Tensor>> kClip(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  Arr lo, hi;
  bool hasLo = false, hasHi = false;
  if (c.opset > 0 && c.opset < 11) {
    if (a->kind() != CK::F32 && a->kind() != CK::F64) return invalid("Clip-6 needs floats");
    lo = Arr::make(a->dt, {});
    hi = Arr::make(a->dt, {});
    float l = c.getFloat("min", -std::numeric_limits<float>::infinity());
    float h = c.getFloat("max", std::numeric_limits<float>::infinity());
    if (a->kind() == CK::F32) { lo.f[0] = l; hi.f[0] = h; }
    else { lo.d[0] = l; hi.d[0] = h; }
    hasLo = hasHi = true;
  } else {
    if (c.input(1)) {
      auto x = inputArr(c, 1);
      if (!x.ok()) return x.status();
      if (x->size() != 1 || x->dt != a->dt) return invalid("Clip min must be a scalar");
      lo = std::move(*x);
      hasLo = true;
    }
    if (c.input(2)) {
      auto x = inputArr(c, 2);
      if (!x.ok()) return x.status();
      if (x->size() != 1 || x->dt != a->dt) return invalid("Clip max must be a scalar");
      hi = std::move(*x);
      hasHi = true;
    }
  }
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &v = a->template vec<T>();
    for (T &x : v) {
      if (hasLo && x < lo.vec<T>()[0]) x = lo.vec<T>()[0];
      if (hasHi && x > hi.vec<T>()[0]) x = hi.vec<T>()[0];
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*a);
}

// Clip-11: the float attributes min and max became the operands #1 and #2,
// of the input's type. Clip-6 without an attribute clamps at -FLT_MAX and
// FLT_MAX (so +-inf, and doubles beyond, change); Clip-11 without an operand
// does not clamp. Up: both bounds become operands (the defaults written out).
// Down: both must be constant scalars, and for a double input exactly
// representable as float; a missing bound is refused.
DataType clipElemType(const Node &n) {
  const Type *t = n.numOperands() && n.operand(0) ? n.operand(0)->type() : nullptr;
  return t && t->kind() == Type::Kind::Tensor ? t->elemType() : DataType::Undefined;
}

absl::Status clipUp11(Node &n, AdapterContext &c) {
  DataType dt = clipElemType(n);
  // An input of unknown type: at a target of 15 or later the float bounds
  // take its type through CastLike (Clip-6 takes float types only, and
  // compares with the float attributes cast to them).
  bool castLike = dt == DataType::Undefined && c.target >= 15;
  if (castLike) dt = DataType::Float;
  if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16)
    return absl::FailedPreconditionError(
        "the bounds become operands of the input's element type, which is unknown (infer shapes "
        "first, or convert to opset 15 or later, where CastLike gives them its type)");
  for (const char *name : {"min", "max"})
    if (const Attribute *a = n.getAttr(name); a && (a->isReference() || a->kind() != AttrKind::Float))
      return absl::FailedPreconditionError(
          absl::StrCat("attribute '", name, "' is not a float (or refers to a function attribute)"));
  if (n.numOperands() > 1)
    return absl::FailedPreconditionError("Clip-6 with more than one operand");
  if (c.checkOnly) return absl::OkStatus();
  Value *bounds[2];
  const char *names[2] = {"min", "max"};
  for (int k = 0; k < 2; ++k) {
    const Attribute *a = n.getAttr(names[k]);
    float v = a ? a->f : (k == 0 ? std::numeric_limits<float>::lowest()
                                 : std::numeric_limits<float>::max());
    std::string raw;
    if (dt == DataType::Float) {
      raw.resize(sizeof v);
      std::memcpy(raw.data(), &v, sizeof v);
    } else if (dt == DataType::Double) {
      double d = v;
      raw.resize(sizeof d);
      std::memcpy(raw.data(), &d, sizeof d);
    } else {
      uint16_t h = floatToHalf(v);
      raw = {(char)(h & 0xff), (char)(h >> 8)};
    }
    Tensor t;
    t.setDataType(dt);
    t.setRaw(std::move(raw));
    bounds[k] = c.constant(n, names[k], std::move(t));
    if (castLike)
      bounds[k] = n.getGraph()
                      ->createNode("CastLike", {bounds[k], n.operand(0)}, 1, &n, "",
                                   std::string(names[k]) + "_like")
                      ->result(0);
  }
  n.removeAttr("min");
  n.removeAttr("max");
  n.addOperand(bounds[0]);
  n.addOperand(bounds[1]);
  return absl::OkStatus();
}

absl::Status clipDown11(Node &n, AdapterContext &c) {
  DataType dt = clipElemType(n);
  float vals[2];
  const char *names[2] = {"min", "max"};
  for (unsigned k = 0; k < 2; ++k) {
    Value *v = n.numOperands() > k + 1 ? n.operand(k + 1) : nullptr;
    if (!v)
      return absl::FailedPreconditionError(absl::StrCat(
          "no '", names[k], "' operand: Clip-6 always clamps (at ", k ? "" : "-",
          "FLT_MAX), which changes infinities"));
    Tensor scratch;
    const Tensor *t = constantOf(v, scratch);
    auto d = t && t->numElements() == 1 ? t->values<double>()
                                        : absl::StatusOr<std::vector<double>>(absl::NotFoundError(""));
    if (!d.ok() || d->size() != 1)
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", k + 1, " ('", v->name().str(), "') is not a constant scalar; opset ", c.to,
          " needs it as attribute '", names[k], "'"));
    vals[k] = (float)(*d)[0];
    if (dt == DataType::Double && (double)vals[k] != (*d)[0])
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", k + 1, " ('", v->name().str(), "') = ", (*d)[0],
          " is not exactly a float, as attribute '", names[k], "' must be"));
  }
  if (c.checkOnly) return absl::OkStatus();
  Value *ops[2] = {n.operand(1), n.operand(2)};
  n.removeOperand(2);
  n.removeOperand(1);
  for (int k = 0, e = ops[0] == ops[1] ? 1 : 2; k < e; ++k) { // one value may be both
    Value *v = ops[k];
    if (Node *def = v->definingNode(); def && v->useEmpty() && !v->isGraphOutput() &&
                                        isConstantNode(*def) && !def->hasUses())
      (void)def->erase();
  }
  n.newAttr("min").setFloat(vals[0]);
  n.newAttr("max").setFloat(vals[1]);
  return absl::OkStatus();
}

void registerClip(OpRegistrar &r) {
  r["Clip"].infer(sameAsInput).kernel(kClip);
  r["Clip"].elementwise().since(firstVersionWithInput("Clip", "min")).broadcasting();
  r["Clip"].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
  r["Clip"].since(11).upgrade(clipUp11).downgrade(clipDown11);
}

//===--- IsNaN, IsInf ---===//

/// Unary predicate producing bool.
template <typename F>
StatusOr<std::vector<Tensor>> predicate(const KernelCall &c, F f) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  Arr r = Arr::make(DataType::Bool, a->dims);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    for (size_t k = 0; k < v.size(); ++k) r.i[k] = f(v[k]) ? 1 : 0;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(r);
}

StatusOr<std::vector<Tensor>> kIsNaN(const KernelCall &c) {
  return predicate(c, [](auto x) {
    if constexpr (isFloat<decltype(x)>) return std::isnan(x);
    else return false;
  });
}
StatusOr<std::vector<Tensor>> kIsInf(const KernelCall &c) {
  bool neg = c.getInt("detect_negative", 1), pos = c.getInt("detect_positive", 1);
  return predicate(c, [&](auto x) {
    if constexpr (isFloat<decltype(x)>)
      return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
    else return false;
  });
}

void registerIsNaNIsInf(OpRegistrar &r) {
  r["IsNaN"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["IsNaN"] = kIsNaN;
  r["IsInf"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["IsInf"] = kIsInf;
  for (const char *op : {"IsNaN", "IsInf"}) r[op].elementwise().shapePreserving();
}

//===--- Abs, Neg, Sign, Sqrt, Exp, Log, Reciprocal, Floor, Ceil, Round, Erf, Sin, Cos, Tan,
//      Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh ---===//

FLOAT_UNARY(kSqrt, std::sqrt(x))
FLOAT_UNARY(kExp, std::exp(x))
FLOAT_UNARY(kLog, std::log(x))
FLOAT_UNARY(kReciprocal, T(1) / x)
FLOAT_UNARY(kFloor, std::floor(x))
FLOAT_UNARY(kCeil, std::ceil(x))
FLOAT_UNARY(kRound, std::nearbyint(x))
FLOAT_UNARY(kErf, std::erf(x))
FLOAT_UNARY(kSin, std::sin(x))
FLOAT_UNARY(kCos, std::cos(x))
FLOAT_UNARY(kTan, std::tan(x))
FLOAT_UNARY(kAsin, std::asin(x))
FLOAT_UNARY(kAcos, std::acos(x))
FLOAT_UNARY(kAtan, std::atan(x))
FLOAT_UNARY(kSinh, std::sinh(x))
FLOAT_UNARY(kCosh, std::cosh(x))
FLOAT_UNARY(kAsinh, std::asinh(x))
FLOAT_UNARY(kAcosh, std::acosh(x))
FLOAT_UNARY(kAtanh, std::atanh(x))

StatusOr<std::vector<Tensor>> kNeg(const KernelCall &c) {
  return unaryMap(c, FloatOnly::No, [](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, int64_t>) return (T)(0ULL - (uint64_t)x);
    else return -x;
  });
}
StatusOr<std::vector<Tensor>> kAbs(const KernelCall &c) {
  return unaryMap(c, FloatOnly::No, [](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (isFloat<T>) return std::abs(x);
    else return x < 0 ? (T)(0ULL - (uint64_t)x) : x;
  });
}
StatusOr<std::vector<Tensor>> kSign(const KernelCall &c) {
  return unaryMap(c, FloatOnly::No, [](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>)
      if (std::isnan(x)) return x;
    return (T)(x > T(0) ? 1 : (x < T(0) ? -1 : 0));
  });
}

void registerUnaryMath(OpRegistrar &r) {
  r["Abs"] = kAbs; r["Neg"] = kNeg; r["Sign"] = kSign;
  r["Sqrt"] = kSqrt; r["Exp"] = kExp; r["Log"] = kLog;
  r["Reciprocal"] = kReciprocal; r["Floor"] = kFloor;
  r["Ceil"] = kCeil; r["Round"] = kRound; r["Erf"] = kErf;
  r["Sin"] = kSin; r["Cos"] = kCos; r["Tan"] = kTan;
  r["Asin"] = kAsin; r["Acos"] = kAcos; r["Atan"] = kAtan;
  r["Sinh"] = kSinh; r["Cosh"] = kCosh; r["Asinh"] = kAsinh;
  r["Acosh"] = kAcosh; r["Atanh"] = kAtanh;
  for (const char *op : {"Abs", "Neg", "Sign", "Sqrt", "Exp", "Log", "Reciprocal", "Floor", "Ceil",
                         "Round", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                         "Cosh", "Asinh", "Acosh", "Atanh"})
    r[op].infer(sameAsInput).elementwise().shapePreserving();
  for (const char *op : {"Abs", "Ceil", "Exp", "Floor", "Log", "Neg", "Reciprocal", "Sqrt"})
    r[op].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
}

//===--- Relu, Sigmoid, Tanh, LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, Softplus,
//      Softsign, Mish, Swish, ThresholdedRelu, Shrink ---===//

FLOAT_UNARY(kSigmoid, x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x)))
FLOAT_UNARY(kTanh, std::tanh(x))
FLOAT_UNARY(kSoftplus, std::log1p(std::exp(x)))
FLOAT_UNARY(kSoftsign, x / (T(1) + std::abs(x)))

FLOAT_UNARY_ATTR(kLeakyRelu, float alpha = c.getFloat("alpha", 0.01f),
                 x >= 0 ? x : x * (T)alpha)
FLOAT_UNARY_ATTR(kElu, float alpha = c.getFloat("alpha", 1.0f),
                 x >= 0 ? x : (T)alpha * (std::exp(x) - T(1)))
FLOAT_UNARY_ATTR(kSelu,
                 float alpha = c.getFloat("alpha", 1.67326319217681884765625f);
                 float gamma = c.getFloat("gamma", 1.05070102214813232421875f),
                 x > 0 ? (T)gamma * x : (T)gamma * ((T)alpha * std::exp(x) - (T)alpha))
FLOAT_UNARY_ATTR(kCelu, float alpha = c.getFloat("alpha", 1.0f),
                 std::max(T(0), x) +
                     std::min(T(0), (T)alpha * (std::exp(x / (T)alpha) - T(1))))
FLOAT_UNARY_ATTR(kHardSigmoid,
                 float alpha = c.getFloat("alpha", 0.2f);
                 float beta = c.getFloat("beta", 0.5f),
                 std::max(T(0), std::min(T(1), (T)alpha * x + (T)beta)))
FLOAT_UNARY_ATTR(kHardSwish, (void)0,
                 x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5))))
FLOAT_UNARY_ATTR(kThresholdedRelu, float alpha = c.getFloat("alpha", 1.0f),
                 x > (T)alpha ? x : T(0))
FLOAT_UNARY(kMish, x * std::tanh(x > T(20) ? x : std::log1p(std::exp(x))))
FLOAT_UNARY_ATTR(kSwish, float alpha = c.getFloat("alpha", 1.0f),
                 (T)alpha * x >= 0 ? x / (T(1) + std::exp(-(T)alpha * x))
                                   : x * std::exp((T)alpha * x) / (T(1) + std::exp((T)alpha * x)))

// Note [Relu without an exit per element]
//   unaryMap's loop may stop at any element ("undefined result"), so it
//   stays scalar, and Relu, which cannot fail, is 12% of a squeezenet run.
//   Its float path is a loop of its own: with SSE2 (every x86-64) four lanes
//   of maxps(x, 0), which gives exactly x > 0 ? x : 0 (maxps returns its
//   second operand, +0, for a NaN x and for x = -0), then the same scalar
//   expression for the tail and without SSE2. The result may take x's bytes
//   (Note [Results in a dead input's buffer]): each group of lanes is loaded
//   before it is stored.

/// y[i] = x[i] > 0 ? x[i] : 0 for i < n; x and y may be the same.
void reluFloats(const float *x, float *y, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128 zero = _mm_setzero_ps();
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_max_ps(_mm_loadu_ps(x + i), zero));
#endif
  for (; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

StatusOr<std::vector<Tensor>> kRelu(const KernelCall &c) {
  if (const Tensor *t = c.input(0); t && t->dataType() == DataType::Float) {
    auto a = viewTensor<float>(*t);
    if (!a.ok()) return a.status();
    auto d = donatedInput(c, 0, a->dt, a->dims, sizeof(float));
    std::optional<OutBuf<float>> out;
    if (!d) out.emplace(a->dt, a->dims);
    float *y = d ? reinterpret_cast<float *>(d->data) : out->data();
    reluFloats(a->data(), y, d ? (int64_t)(d->size / sizeof(float)) : out->size());
    std::vector<Tensor> r;
    r.push_back(d ? d->take(a->dt, a->dims) : out->take());
    return r;
  }
  return unaryMap(c, FloatOnly::No, [](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    return x > T(0) ? x : T(0);
  });
}
StatusOr<std::vector<Tensor>> kShrink(const KernelCall &c) {
  float bias = c.getFloat("bias", 0), lambd = c.getFloat("lambd", 0.5f);
  return unaryMap(c, FloatOnly::No, [&](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) {
      if (x < -(T)lambd) return x + (T)bias;
      if (x > (T)lambd) return x - (T)bias;
      return T(0);
    } else {
      double v = (double)x;
      if (v < -lambd) return (T)(v + bias);
      if (v > lambd) return (T)(v - bias);
      return T(0);
    }
  });
}

void registerActivations(OpRegistrar &r) {
  r["Relu"] = kRelu; r["Sigmoid"] = kSigmoid; r["Tanh"] = kTanh;
  r["LeakyRelu"] = kLeakyRelu; r["Elu"] = kElu; r["Selu"] = kSelu;
  r["Celu"] = kCelu; r["HardSigmoid"] = kHardSigmoid;
  r["HardSwish"] = kHardSwish; r["Softplus"] = kSoftplus;
  r["Softsign"] = kSoftsign; r["Mish"] = kMish; r["Swish"] = kSwish;
  r["ThresholdedRelu"] = kThresholdedRelu; r["Shrink"] = kShrink;
  for (const char *op : {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Selu", "Celu",
                         "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Mish", "Swish",
                         "ThresholdedRelu", "Shrink"})
    r[op].infer(sameAsInput).elementwise().shapePreserving();
  for (const char *op : {"Elu", "HardSigmoid", "LeakyRelu", "Relu", "Selu", "Sigmoid", "Tanh"})
    r[op].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
  // Binarizer is ai.onnx.ml's (ML.cpp); this rule in the default domain has
  // always been set here.
  r["Binarizer"] = sameAsInput;
}

//===--- Gelu ---===//

// Gelu-20: x * Phi(x) with the normal CDF written with erf, or with
// approximate="tanh" the tanh form; any other value is refused.
StatusOr<std::vector<Tensor>> kGelu(const KernelCall &c) {
  std::string approx = c.getString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return invalid("Gelu: attribute 'approximate' is \"" + approx + "\" (none or tanh)");
  bool useTanh = approx == "tanh";
  return unaryMap(c, FloatOnly::Yes, [&](auto x) -> std::optional<decltype(x)> {
    using T = decltype(x);
    if constexpr (isFloat<T>) {
      if (useTanh)
        return T(0.5) * x *
               (T(1) + std::tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
      return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
    } else {
      return std::nullopt;
    }
  });
}

// Gelu-20's function body: approximate="none": Y = 0.5 * X * (1 + Erf(X /
// sqrt(2))); "tanh": Y = 0.5 * X * (1 + Tanh(sqrt(2 / pi) * (X + 0.044715 *
// X^3))).
absl::Status expandGelu(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  if (absl::Status s = noReferences(n); !s.ok()) return s;
  if (n.numOperands() < 1 || !n.operand(0)) return refuse("X is required");
  NodeContext nc(n);
  std::string approximate = nc.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return refuse(absl::StrCat("approximate \"", approximate, "\" is neither \"none\" nor \"tanh\""));
  std::optional<DataType> t = firstElemType({n.operand(0), resultOr(n, 0)}); // X and Y: T
  if (!t && c.opset < 15)
    return refuse(absl::StrCat("the element type of X ('", n.operand(0)->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  if (t && !isFloatType(*t))
    return refuse(absl::StrCat("X has element type ", dataTypeName(*t).str(), ", not a float type"));
  absl::Status s = approximate == "none" ? requireOps(c, {"Div", "Erf", "Add", "Mul"})
                                         : requireOps(c, {"Tanh", "Add", "Mul"});
  if (!s.ok()) return s;
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *inner;
  if (approximate == "none") {
    inner = e.op("Erf", {e.op("Div", {x, e.scalar(std::sqrt(2.0), t, x)})});
  } else {
    Value *x3 = e.op("Mul", {e.op("Mul", {x, x}), x});
    Value *poly = e.op("Add", {x, e.op("Mul", {e.scalar(0.044715, t, x), x3})});
    inner = e.op("Tanh", {e.op("Mul", {e.scalar(std::sqrt(2.0 / M_PI), t, x), poly})});
  }
  Value *onePlus = e.op("Add", {e.scalar(1.0, t, x), inner});
  Value *halfX = e.op("Mul", {e.scalar(0.5, t, x), x});
  results = {e.op("Mul", {halfX, onePlus})};
  return absl::OkStatus();
}

void registerGelu(OpRegistrar &r) {
  r["Gelu"].infer(sameAsInput).kernel(kGelu);
  r["Gelu"].elementwise().shapePreserving();
  r["Gelu"].since(20).expand(expandGelu);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerElementwiseOps(OpRegistrar &r) {
  for (auto *reg : {registerAddSubMul, registerDiv, registerMod, registerPow, registerPRelu,
                    registerComparisons, registerLogic, registerBitShift, registerBitwise,
                    registerBitwiseNot, registerNot, registerVariadic, registerWhere, registerClip,
                    registerIsNaNIsInf, registerUnaryMath, registerActivations, registerGelu})
    reg(r);
}

} // namespace onnxir
