//===- Reduce.cpp - Reductions and ArgMax/ArgMin --------------------------===//
//
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare: axes from the attribute
// (before opset 13 for ReduceSum, 18 for the others) or the optional input,
// keepdims, noop_with_empty_axes. Accumulation is in the compute kind.
//
//===----------------------------------------------------------------------===//
#include "KernelUtil.h"

#include <cmath>
#include <limits>

namespace onnxir {
namespace kernels {
namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

struct ReducePlan {
  std::vector<int64_t> keptDims; // keepdims shape (reduced axes are 1)
  std::vector<int64_t> outDims;  // final shape
  bool noop = false;
};

StatusOr<ReducePlan> planReduce(const KernelCall &c, const std::vector<int64_t> &dims,
                                int64_t inputSince) {
  int64_t r = (int64_t)dims.size();
  std::vector<int64_t> axes;
  bool haveAxes = false;
  if (c.opset >= inputSince) {
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
  if (!haveAxes && c.opset >= inputSince && c.getInt("noop_with_empty_axes", 0)) {
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

template <typename T> bool isNaNT(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

StatusOr<std::vector<Tensor>> reduce(const KernelCall &c, Red kind) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t since = kind == Red::Sum ? 13 : 18;
  auto plan = planReduce(c, a->dims, since);
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

#define REDUCE_KERNEL(NAME, KIND) \
  StatusOr<std::vector<Tensor>> NAME(const KernelCall &c) { return reduce(c, KIND); }
REDUCE_KERNEL(kReduceSum, Red::Sum)
REDUCE_KERNEL(kReduceMean, Red::Mean)
REDUCE_KERNEL(kReduceMax, Red::Max)
REDUCE_KERNEL(kReduceMin, Red::Min)
REDUCE_KERNEL(kReduceProd, Red::Prod)
REDUCE_KERNEL(kReduceL1, Red::L1)
REDUCE_KERNEL(kReduceL2, Red::L2)
REDUCE_KERNEL(kReduceLogSum, Red::LogSum)
REDUCE_KERNEL(kReduceLogSumExp, Red::LogSumExp)
REDUCE_KERNEL(kReduceSumSquare, Red::SumSquare)

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

} // namespace

void registerReduceKernels(OpRegistrar &t) {
  t["ReduceSum"] = kReduceSum; t["ReduceMean"] = kReduceMean; t["ReduceMax"] = kReduceMax;
  t["ReduceMin"] = kReduceMin; t["ReduceProd"] = kReduceProd; t["ReduceL1"] = kReduceL1;
  t["ReduceL2"] = kReduceL2; t["ReduceLogSum"] = kReduceLogSum;
  t["ReduceLogSumExp"] = kReduceLogSumExp; t["ReduceSumSquare"] = kReduceSumSquare;
  t["ArgMax"] = kArgMax; t["ArgMin"] = kArgMin;
}

} // namespace kernels
} // namespace onnxir
