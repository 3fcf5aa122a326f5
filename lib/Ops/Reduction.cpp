//===- Reduction.cpp - Reduce*, ArgMax/ArgMin, CumSum, CumProd ------------===//
//
// Reduction: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1
// ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare, ArgMax ArgMin, and the
// scans CumSum CumProd. The shared machinery comes first (the shape rule of
// every reduction and ArgMax/ArgMin, NaN handling); then one section per op
// group, each with its kernel, version adapters and registration
// (registerReductionOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// The shape rule of the Reduce* family (axes from the attribute or operand
/// #1, noop_with_empty_axes) and, with `argReduce`, of ArgMax/ArgMin (one
/// `axis`, int64 indices).
void reduceRule(InferCtx &c, bool argReduce) {
  int32_t el = argReduce ? kInt64 : c.inElem(0);
  auto shape = c.inShape(0);
  bool keep = c.getInt("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  bool axesUnknown = false;
  if (argReduce) {
    axes = std::vector<int64_t>{c.getInt("axis", 0)};
  } else {
    if (axesAsOperand(c)) { // Note [Axes: attribute or operand], OpFacts.h
      if (c.hasInput(1)) {
        axes = c.inInts(1);
        axesUnknown = !axes;
      }
    } else {
      axes = c.getInts("axes");
    }
    if (!axesUnknown && (!axes || axes->empty()) && c.getInt("noop_with_empty_axes", 0)) {
      c.setTensor(0, el, shape);
      return;
    }
  }
  if (!shape) return c.setTensor(0, el, std::nullopt);
  int64_t r = shape->size();
  if (axesUnknown) {
    if (keep) return c.setTensor(0, el, Dims(r, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  std::vector<bool> red(r, !axes || axes->empty());
  if (axes)
    for (int64_t a : *axes) {
      auto n = normAxis(a, r);
      if (!n) return;
      red[*n] = true;
    }
  Dims out;
  for (int64_t i = 0; i < r; ++i) {
    if (!red[i]) out.push_back((*shape)[i]);
    else if (keep) out.push_back(c.c(1));
  }
  c.setTensor(0, el, out);
}

/// std::isnan for any element type (integers are never NaN): Max/Min and
/// ArgMax/ArgMin let a NaN win.
template <typename T> bool isNaNT(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

//===--- Reduce*: Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare ---===//

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

struct ReducePlan {
  std::vector<int64_t> keptDims; // keepdims shape (reduced axes are 1)
  std::vector<int64_t> outDims;  // final shape
  bool noop = false;
};

StatusOr<ReducePlan> planReduce(const KernelCall &c, const std::vector<int64_t> &dims) {
  bool operand = axesAsOperand(c); // Note [Axes: attribute or operand], OpFacts.h
  int64_t r = (int64_t)dims.size();
  std::vector<int64_t> axes;
  bool haveAxes = false;
  if (operand) {
    if (c.input(1)) {
      auto v = intValues(*c.input(1));
      if (!v.ok()) return v.status();
      axes = *v;
      haveAxes = !axes.empty();
    }
  } else if (auto a = c.getInts("axes")) {
    axes = *a;
    haveAxes = true;
  }
  ReducePlan p;
  bool keep = c.getInt("keepdims", 1) != 0;
  if (!haveAxes && operand && c.getInt("noop_with_empty_axes", 0)) {
    p.noop = true;
    p.keptDims = p.outDims = dims;
    return p;
  }
  std::vector<bool> red(r, !haveAxes);
  for (int64_t a : axes) {
    auto n = normAxis(a, r);
    if (!n) return invalid("reduce axis out of range");
    red[*n] = true;
  }
  for (int64_t k = 0; k < r; ++k) {
    p.keptDims.push_back(red[k] ? 1 : dims[k]);
    if (!red[k]) p.outDims.push_back(dims[k]);
    else if (keep) p.outDims.push_back(1);
  }
  return p;
}

/// One element into its accumulator, as reduce()'s loop does for a float T.
template <Red K, typename T> inline void reduceStep(T &acc, T x) {
  if constexpr (K == Red::Sum || K == Red::Mean || K == Red::LogSum) acc += x;
  else if constexpr (K == Red::Prod) acc *= x;
  else if constexpr (K == Red::Max) {
    if (std::isnan(x) || std::isnan(acc)) acc = std::isnan(acc) ? acc : x;
    else if (x > acc) acc = x;
  } else if constexpr (K == Red::Min) {
    if (std::isnan(x) || std::isnan(acc)) acc = std::isnan(acc) ? acc : x;
    else if (x < acc) acc = x;
  } else if constexpr (K == Red::L1) acc = addWrap(acc, absWrap(x));
  else if constexpr (K == Red::L2 || K == Red::SumSquare) acc = addWrap(acc, mulWrap(x, x));
  else acc += std::exp(x); // LogSumExp
}

/// Every element of x (dims `d`, row-major; `x(e)` is element e as T) into
/// o at the offset its kept coordinates give (`st`: o's strides, 0 along a
/// reduced axis), in x's order: the order of reduce()'s loop over
/// broadcastOffsets, without an offset per element.
template <Red K, typename T, typename Load>
void reduceInto(Load x, T *o, const std::vector<int64_t> &d, const std::vector<int64_t> &st,
                int64_t inN) {
  int64_t r = (int64_t)d.size();
  int64_t last = r ? d[r - 1] : 1, ls = r ? st[r - 1] : 0, base = 0;
  std::vector<int64_t> idx(d.size(), 0);
  for (int64_t e = 0; e < inN; e += last) {
    for (int64_t j = 0; j < last; ++j) reduceStep<K, T>(o[base + j * ls], x(e + j));
    for (int64_t k = r - 2; k >= 0; --k) {
      base += st[k];
      if (++idx[k] < d[k]) break;
      base -= st[k] * d[k];
      idx[k] = 0;
    }
  }
}

// Note [Reductions in place]
//   A float or double X is read through its bytes and Y accumulated in the
//   bytes its tensor keeps (Note [Inputs read in place]); the output offset
//   of each element is carried along x's row-major walk instead of a table
//   of one int64 per input element (broadcastOffsets: twice a float input's
//   size). A float16 or bfloat16 X is read from its stored bytes too, each
//   element widened to float as it is accumulated (an unaligned load: a
//   raw_data window may start at any byte), into a float Y of the output's
//   size rounded once at the end: no decoded float copy of X (twice its
//   size). The elements meet their accumulators in the same order with the
//   same float operations, so the values are those of the decoding path,
//   which other types and noop_with_empty_axes (Y is X re-encoded) still
//   take, as do data that do not match their dims (it reports them).

/// reduce() of X (dims `dims`, element type `dt`) whose element e is
/// `load(e)` as T; Y in T, encoded to `dt` by OutBuf.
template <typename T, typename Load>
StatusOr<std::vector<Tensor>> reduceLoaded(const KernelCall &c, Red kind, DataType dt,
                                           const std::vector<int64_t> &dims,
                                           const ReducePlan &plan, Load load) {
  int64_t outN = numElementsOf(plan.keptDims), inN = numElementsOf(dims);
  if (inN == 0 && (kind == Red::Max || kind == Red::Min)) return unsupported("empty Max/Min reduction");
  int64_t groupSize = outN ? inN / outN : 0;
  if (Status sz = checkOutputSize(c, dt, plan.outDims); !sz.ok()) return sz;
  OutBuf<T> out(dt, plan.outDims);
  T *o = out.data();
  T init = T(0);
  if (kind == Red::Prod) init = T(1);
  if (kind == Red::Max) init = -std::numeric_limits<T>::infinity();
  if (kind == Red::Min) init = std::numeric_limits<T>::infinity();
  std::fill(o, o + outN, init);
  const std::vector<int64_t> &kd = plan.keptDims;
  std::vector<int64_t> st(kd.size(), 0);
  for (int64_t k = (int64_t)kd.size() - 1, s = 1; k >= 0; --k) {
    st[k] = kd[k] == 1 ? 0 : s;
    s *= kd[k];
  }
  switch (kind) {
  case Red::Sum: reduceInto<Red::Sum, T>(load, o, dims, st, inN); break;
  case Red::Mean: reduceInto<Red::Mean, T>(load, o, dims, st, inN); break;
  case Red::Max: reduceInto<Red::Max, T>(load, o, dims, st, inN); break;
  case Red::Min: reduceInto<Red::Min, T>(load, o, dims, st, inN); break;
  case Red::Prod: reduceInto<Red::Prod, T>(load, o, dims, st, inN); break;
  case Red::L1: reduceInto<Red::L1, T>(load, o, dims, st, inN); break;
  case Red::L2: reduceInto<Red::L2, T>(load, o, dims, st, inN); break;
  case Red::LogSum: reduceInto<Red::LogSum, T>(load, o, dims, st, inN); break;
  case Red::LogSumExp: reduceInto<Red::LogSumExp, T>(load, o, dims, st, inN); break;
  case Red::SumSquare: reduceInto<Red::SumSquare, T>(load, o, dims, st, inN); break;
  }
  for (int64_t q = 0; q < outN; ++q) {
    T &v = o[q];
    if (kind == Red::Mean) v = groupSize ? v / (T)groupSize : std::numeric_limits<T>::quiet_NaN();
    if (kind == Red::L2) v = std::sqrt(v);
    if (kind == Red::LogSum || kind == Red::LogSumExp) v = std::log(v);
  }
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

/// reduce() of a float or double X in place; nullopt: take the decoding path.
template <typename T>
std::optional<StatusOr<std::vector<Tensor>>> reduceInPlace(const KernelCall &c, Red kind,
                                                           const Tensor &xt) {
  auto x = viewTensor<T>(xt);
  if (!x.ok()) return StatusOr<std::vector<Tensor>>(x.status());
  auto plan = planReduce(c, x->dims);
  if (!plan.ok()) return StatusOr<std::vector<Tensor>>(plan.status());
  if (plan->noop) return std::nullopt;
  const T *xv = x->data();
  return reduceLoaded<T>(c, kind, x->dt, x->dims, *plan, [xv](int64_t e) { return xv[e]; });
}

/// reduce() of a float16 or bfloat16 X from its stored bytes (Note
/// [Reductions in place]); nullopt: take the decoding path.
std::optional<StatusOr<std::vector<Tensor>>> reduceHalfInPlace(const KernelCall &c, Red kind,
                                                               const Tensor &xt) {
  auto bv = byteView(xt);
  if (!bv || bv->es != 2) return std::nullopt;
  auto plan = planReduce(c, xt.dims());
  if (!plan.ok()) return StatusOr<std::vector<Tensor>>(plan.status());
  if (plan->noop) return std::nullopt;
  const char *p = bv->data;
  if (xt.dataType() == DataType::Float16)
    return reduceLoaded<float>(c, kind, DataType::Float16, xt.dims(), *plan, [p](int64_t e) {
      uint16_t h;
      std::memcpy(&h, p + 2 * e, 2);
      return halfToFloat(h);
    });
  return reduceLoaded<float>(c, kind, DataType::BFloat16, xt.dims(), *plan, [p](int64_t e) {
    uint16_t h;
    std::memcpy(&h, p + 2 * e, 2);
    return bfloat16ToFloat(h);
  });
}

StatusOr<std::vector<Tensor>> reduce(const KernelCall &c, Red kind) {
  if (const Tensor *xt = c.input(0); xt && xt->dataType() == DataType::Float) {
    if (auto r = reduceInPlace<float>(c, kind, *xt)) return std::move(*r);
  } else if (xt && xt->dataType() == DataType::Double) {
    if (auto r = reduceInPlace<double>(c, kind, *xt)) return std::move(*r);
  } else if (xt && (xt->dataType() == DataType::Float16 || xt->dataType() == DataType::BFloat16)) {
    if (auto r = reduceHalfInPlace(c, kind, *xt)) return std::move(*r);
  }
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto plan = planReduce(c, a->dims);
  if (!plan.ok()) return plan.status();
  if (plan->noop) {
    if (kind == Red::Sum || kind == Red::Mean || kind == Red::Max || kind == Red::Min ||
        kind == Red::Prod)
      return one(*a);
    return unsupported("noop_with_empty_axes for this reduction");
  }
  bool isF = a->kind() == CK::F32 || a->kind() == CK::F64;
  if (!isF && (kind == Red::Mean || kind == Red::L2 || kind == Red::LogSum ||
               kind == Red::LogSumExp))
    return unsupported("integer reduction needing floats");
  int64_t outN = numElementsOf(plan->keptDims);
  int64_t inN = a->size();
  if (inN == 0 && (kind == Red::Max || kind == Red::Min))
    return unsupported("empty Max/Min reduction");
  int64_t groupSize = outN ? inN / outN : 0;
  // Reducing an empty axis away can leave a big output of an empty input.
  Status sz = checkOutputSize(c, a->dt, plan->outDims);
  if (!sz.ok()) return sz;
  auto offs = broadcastOffsets(plan->keptDims, a->dims);
  Arr out = Arr::make(a->dt, plan->outDims);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    auto &o = out.template vec<T>();
    T init = T(0);
    if (kind == Red::Prod) init = T(1);
    if (kind == Red::Max) init = std::numeric_limits<T>::lowest();
    if (kind == Red::Min) init = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) {
      if (kind == Red::Max) init = -std::numeric_limits<T>::infinity();
      if (kind == Red::Min) init = std::numeric_limits<T>::infinity();
    }
    std::fill(o.begin(), o.end(), init);
    for (int64_t e = 0; e < inN; ++e) {
      T x = v[e];
      T &acc = o[offs[e]];
      switch (kind) {
      case Red::Sum: case Red::Mean: case Red::LogSum:
        if constexpr (std::is_same_v<T, int64_t>) acc = (T)((uint64_t)acc + (uint64_t)x);
        else acc += x;
        break;
      case Red::Prod:
        if constexpr (std::is_same_v<T, int64_t>) acc = (T)((uint64_t)acc * (uint64_t)x);
        else acc *= x;
        break;
      case Red::Max:
        if (isNaNT(x) || isNaNT(acc)) acc = isNaNT(acc) ? acc : x;
        else if (x > acc) acc = x;
        break;
      case Red::Min:
        if (isNaNT(x) || isNaNT(acc)) acc = isNaNT(acc) ? acc : x;
        else if (x < acc) acc = x;
        break;
      case Red::L1: acc = addWrap(acc, absWrap(x)); break;
      case Red::L2: case Red::SumSquare: acc = addWrap(acc, mulWrap(x, x)); break;
      case Red::LogSumExp:
        if constexpr (std::is_floating_point_v<T>) acc += std::exp(x);
        break;
      }
    }
    for (T &x : o) {
      if constexpr (std::is_floating_point_v<T>) {
        if (kind == Red::Mean) x = groupSize ? x / (T)groupSize : std::numeric_limits<T>::quiet_NaN();
        if (kind == Red::L2) x = std::sqrt(x);
        if (kind == Red::LogSum || kind == Red::LogSumExp) x = std::log(x);
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

template <Red Kind> StatusOr<std::vector<Tensor>> kReduce(const KernelCall &c) {
  return reduce(c, Kind);
}

// ReduceSum-13 and the other Reduce*-18: the attribute `axes` became the
// optional operand #1, and `noop_with_empty_axes` appeared (no axes, or an
// empty list, reduce every axis unless it is 1). Up: the attribute moves (an
// empty or absent list stays absent). Down: the operand must be a constant;
// noop_with_empty_axes=1 without axes (an Identity) has no older form.
absl::Status reduceAxesUp(Node &n, AdapterContext &c) {
  return adapters::intsAttrToOperand(n, c, "axes", 1, /*dropEmpty=*/true);
}
absl::Status reduceAxesDown(Node &n, AdapterContext &c) {
  if (const Attribute *a = n.getAttr("noop_with_empty_axes")) {
    if (a->isReference())
      return absl::FailedPreconditionError(
          "attribute 'noop_with_empty_axes' refers to a function attribute");
    if (a->i != 0) {
      Tensor scratch;
      const Tensor *t = n.numOperands() > 1 && n.operand(1) ? constantOf(n.operand(1), scratch)
                                                            : nullptr;
      bool noAxes = n.numOperands() < 2 || !n.operand(1) ||
                    (t && t->numElements() && *t->numElements() == 0);
      if (noAxes)
        return absl::FailedPreconditionError(absl::StrCat(
            "noop_with_empty_axes=1 without axes (no reduction) has no form at opset ", c.to));
    }
  }
  if (absl::Status s = adapters::operandToIntsAttr(n, c, 1, "axes", /*dropEmpty=*/true); !s.ok())
    return s;
  if (!c.checkOnly) n.removeAttr("noop_with_empty_axes");
  return absl::OkStatus();
}

void registerReduce(OpRegistrar &r) {
  auto rule = [](InferCtx &c) { reduceRule(c, false); };
  r["ReduceSum"].infer(rule).kernel(kReduce<Red::Sum>);
  r["ReduceMean"].infer(rule).kernel(kReduce<Red::Mean>);
  r["ReduceMax"].infer(rule).kernel(kReduce<Red::Max>);
  r["ReduceMin"].infer(rule).kernel(kReduce<Red::Min>);
  r["ReduceProd"].infer(rule).kernel(kReduce<Red::Prod>);
  r["ReduceL1"].infer(rule).kernel(kReduce<Red::L1>);
  r["ReduceL2"].infer(rule).kernel(kReduce<Red::L2>);
  r["ReduceLogSum"].infer(rule).kernel(kReduce<Red::LogSum>);
  r["ReduceLogSumExp"].infer(rule).kernel(kReduce<Red::LogSumExp>);
  r["ReduceSumSquare"].infer(rule).kernel(kReduce<Red::SumSquare>);
  r["ReduceSum"].since(13).upgrade(reduceAxesUp).downgrade(reduceAxesDown);
  for (const char *op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    r[op].since(18).upgrade(reduceAxesUp).downgrade(reduceAxesDown);
}

//===--- ArgMax, ArgMin ---===//

StatusOr<std::vector<Tensor>> argReduce(const KernelCall &c, bool isMax) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("ArgMax axis");
  bool keep = c.getInt("keepdims", 1) != 0, last = c.getInt("select_last_index", 0) != 0;
  int64_t dim = a->dims[*axis], outer = 1, inner = 1;
  if (dim == 0) return invalid("ArgMax over an empty axis");
  for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
  for (int64_t k = *axis + 1; k < r; ++k) inner *= a->dims[k];
  std::vector<int64_t> od;
  for (int64_t k = 0; k < r; ++k)
    if (k != *axis) od.push_back(a->dims[k]);
    else if (keep) od.push_back(1);
  Arr out = Arr::make(DataType::Int64, od);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        T bv = v[o * dim * inner + i];
        for (int64_t j = 1; j < dim; ++j) {
          T x = v[(o * dim + j) * inner + i];
          if (isNaNT(bv)) break;
          bool better = isNaNT(x) || (isMax ? (last ? x >= bv : x > bv) : (last ? x <= bv : x < bv));
          if (better) { best = j; bv = x; }
        }
        out.i[o * inner + i] = best;
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

StatusOr<std::vector<Tensor>> kArgMax(const KernelCall &c) { return argReduce(c, true); }
StatusOr<std::vector<Tensor>> kArgMin(const KernelCall &c) { return argReduce(c, false); }

void registerArgMaxMin(OpRegistrar &r) {
  r["ArgMax"] = [](InferCtx &c) { reduceRule(c, true); };
  r["ArgMax"].kernel(kArgMax);
  r["ArgMin"] = [](InferCtx &c) { reduceRule(c, true); };
  r["ArgMin"].kernel(kArgMin);
  // ArgMax/ArgMin-12 added select_last_index (0: the first index, as before).
  r["ArgMax"].since(12).upgrade(adapters::noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "ArgMax", {{"select_last_index", AttrKind::Int, 0}});
  });
  r["ArgMin"].since(12).upgrade(adapters::noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "ArgMin", {{"select_last_index", AttrKind::Int, 0}});
  });
}

//===--- CumSum, CumProd ---===//

/// CumSum and CumProd: the running sum or product along the operand axis,
/// `exclusive` (each element left out of its own result: the first is 0 or
/// 1) and `reverse` (from the end). Integers wrap.
StatusOr<std::vector<Tensor>> cumulative(const KernelCall &c, bool product) {
  const char *op = product ? "CumProd" : "CumSum";
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid(absl::StrCat(op, " without axis"));
  auto ax = intValues(*c.input(1));
  if (!ax.ok() || ax->size() != 1) return invalid(absl::StrCat(op, " axis"));
  auto axis = normAxis((*ax)[0], a->rank());
  if (!axis) return invalid(absl::StrCat(op, " axis"));
  bool excl = c.getInt("exclusive", 0), rev = c.getInt("reverse", 0);
  int64_t outer = 1, dim = a->dims[*axis], inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
  for (int64_t k = *axis + 1; k < a->rank(); ++k) inner *= a->dims[k];
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &v = a->template vec<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = product ? T(1) : T(0);
        for (int64_t s = 0; s < dim; ++s) {
          int64_t j = rev ? dim - 1 - s : s;
          T &x = v[(o * dim + j) * inner + i];
          T old = x;
          T next = product ? mulWrap(acc, old) : addWrap(acc, old);
          x = excl ? acc : next;
          acc = next;
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*a);
}

StatusOr<std::vector<Tensor>> kCumSum(const KernelCall &c) { return cumulative(c, false); }
StatusOr<std::vector<Tensor>> kCumProd(const KernelCall &c) { return cumulative(c, true); }

void registerCumulative(OpRegistrar &r) {
  r["CumSum"].infer(sameAsInput).kernel(kCumSum);
  r["CumProd"].infer(sameAsInput).kernel(kCumProd);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerReductionOps(OpRegistrar &r) {
  for (auto *reg : {registerReduce, registerArgMaxMin, registerCumulative})
    reg(r);
}

} // namespace onnxir
