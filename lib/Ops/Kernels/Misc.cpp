//===- Misc.cpp - Softmax family, Dropout (inference), EyeLike, Trilu, ... ===//
//
// Kernels beyond the core list that constant subgraphs of exported models and
// function expansions use: Softmax, LogSoftmax, Hardmax (opset < 13 coerce to
// 2-D, later along one axis), Dropout in inference mode, EyeLike, Trilu,
// CumSum, OneHot, NonZero, Compress, DepthToSpace, SpaceToDepth.
//
//===----------------------------------------------------------------------===//
#include "KernelUtil.h"

#include <cmath>
#include <limits>

namespace onnxir {
namespace kernels {

Arr takeElems(const Arr &a, std::vector<int64_t> dims, const std::vector<int64_t> &idx);

namespace {

enum class SM { Softmax, LogSoftmax, Hardmax };

StatusOr<std::vector<Tensor>> softmaxLike(const KernelCall &c, SM kind) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->kind() != CK::F32 && a->kind() != CK::F64) return unsupported("softmax of ints");
  int64_t r = a->rank();
  bool legacy = c.opset > 0 && c.opset < 13;
  auto axis = normAxis(c.getInt("axis", legacy ? 1 : -1), r);
  if (!axis) return invalid("softmax axis");
  // Legacy: [prod(d[:axis]), prod(d[axis:])] with the reduction over the
  // second; new: reduction over one axis.
  int64_t outer = 1, dim = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
  if (legacy) {
    for (int64_t k = *axis; k < r; ++k) dim *= a->dims[k];
  } else {
    dim = a->dims[*axis];
    for (int64_t k = *axis + 1; k < r; ++k) inner *= a->dims[k];
  }
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      auto &v = a->template vec<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          auto at = [&](int64_t j) -> T & { return v[(o * dim + j) * inner + i]; };
          T mx = -std::numeric_limits<T>::infinity();
          int64_t arg = 0;
          for (int64_t j = 0; j < dim; ++j)
            if (at(j) > mx) { mx = at(j); arg = j; }
          if (kind == SM::Hardmax) {
            for (int64_t j = 0; j < dim; ++j) at(j) = j == arg ? T(1) : T(0);
            continue;
          }
          T sum = 0;
          for (int64_t j = 0; j < dim; ++j) sum += std::exp(at(j) - mx);
          for (int64_t j = 0; j < dim; ++j)
            at(j) = kind == SM::Softmax ? std::exp(at(j) - mx) / sum
                                        : at(j) - mx - std::log(sum);
        }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*a);
}

StatusOr<std::vector<Tensor>> kSoftmax(const KernelCall &c) { return softmaxLike(c, SM::Softmax); }
StatusOr<std::vector<Tensor>> kLogSoftmax(const KernelCall &c) { return softmaxLike(c, SM::LogSoftmax); }
StatusOr<std::vector<Tensor>> kHardmax(const KernelCall &c) { return softmaxLike(c, SM::Hardmax); }

/// Dropout in inference mode: identity, and an all-true mask.
StatusOr<std::vector<Tensor>> kDropout(const KernelCall &c) {
  if (!c.input(0)) return invalid("Dropout without input");
  if (c.opset > 0 && c.opset < 7 && c.getInt("is_test", 0) == 0)
    return unsupported("Dropout in training mode");
  if (c.input(2)) {
    auto t = intValues(*c.input(2));
    if (!t.ok() || t->size() != 1) return invalid("training_mode");
    if ((*t)[0]) return unsupported("Dropout in training mode");
  }
  std::vector<Tensor> r;
  r.push_back(*c.input(0));
  r.back().setName("");
  if (c.numOutputs > 1) {
    Arr m = Arr::make(DataType::Bool, c.input(0)->dims());
    for (int64_t &v : m.i) v = 1;
    r.push_back(toTensor(m));
  }
  return r;
}

StatusOr<std::vector<Tensor>> kEyeLike(const KernelCall &c) {
  if (!c.input(0)) return invalid("EyeLike without input");
  const auto &d = c.input(0)->dims();
  if (d.size() != 2) return invalid("EyeLike needs 2-D");
  DataType dt = c.input(0)->dataType();
  if (const Attribute *a = c.attr("dtype")) dt = (DataType)a->i;
  int64_t k = c.getInt("k", 0);
  // `dtype` may widen the elements (int8 to double is 8x the input).
  Status sz = checkOutputSize(c, dt, d);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(dt, d);
  if (out.kind() == CK::None || out.kind() == CK::Str) return unsupported("EyeLike type");
  for (int64_t i = 0; i < d[0]; ++i) {
    // k can be anything (INT64_MAX): compare before adding.
    if (k >= d[1] - i || k < -i) continue;
    int64_t j = i + k;
    int64_t o = i * d[1] + j;
    switch (out.kind()) {
    case CK::F32: out.f[o] = 1; break;
    case CK::F64: out.d[o] = 1; break;
    case CK::I64: out.i[o] = 1; break;
    case CK::U64: out.u[o] = 1; break;
    default: break;
    }
  }
  return one(out);
}

StatusOr<std::vector<Tensor>> kTrilu(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->rank() < 2) return invalid("Trilu rank");
  int64_t k = 0;
  if (c.input(1)) {
    auto v = intValues(*c.input(1));
    if (!v.ok() || v->size() != 1) return invalid("Trilu k");
    k = (*v)[0];
  }
  bool upper = c.getInt("upper", 1) != 0;
  int64_t R = a->dims[a->rank() - 2], C = a->dims.back();
  int64_t n = a->size();
  std::vector<int64_t> idx((size_t)n);
  Arr zero = Arr::make(a->dt, {1});
  // Index n points at the appended zero.
  for (int64_t e = 0; e < n; ++e) {
    int64_t j = e % C, i = (e / C) % R;
    bool keep = upper ? (j - i >= k) : (j - i <= k);
    idx[e] = keep ? e : n;
  }
  Arr ext = *a;
  switch (ext.kind()) {
  case CK::F32: ext.f.push_back(0); break;
  case CK::F64: ext.d.push_back(0); break;
  case CK::I64: ext.i.push_back(0); break;
  case CK::U64: ext.u.push_back(0); break;
  case CK::Str: ext.s.push_back(""); break;
  default: return unsupported("Trilu type");
  }
  return one(takeElems(ext, a->dims, idx));
}

StatusOr<std::vector<Tensor>> kCumSum(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("CumSum without axis");
  auto ax = intValues(*c.input(1));
  if (!ax.ok() || ax->size() != 1) return invalid("CumSum axis");
  auto axis = normAxis((*ax)[0], a->rank());
  if (!axis) return invalid("CumSum axis");
  bool excl = c.getInt("exclusive", 0), rev = c.getInt("reverse", 0);
  int64_t outer = 1, dim = a->dims[*axis], inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
  for (int64_t k = *axis + 1; k < a->rank(); ++k) inner *= a->dims[k];
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &v = a->template vec<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = T(0);
        for (int64_t s = 0; s < dim; ++s) {
          int64_t j = rev ? dim - 1 - s : s;
          T &x = v[(o * dim + j) * inner + i];
          T old = x;
          if (excl) { x = acc; acc = addWrap(acc, old); }
          else { acc = addWrap(acc, old); x = acc; }
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*a);
}

StatusOr<std::vector<Tensor>> kNonZero(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  std::vector<int64_t> hits;
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    for (size_t k = 0; k < v.size(); ++k) if (v[k] != T(0)) hits.push_back((int64_t)k);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  // A scalar counts as one element of a 1-D tensor (onnxruntime, and numpy's
  // nonzero, which the ONNX reference calls): [1, 1] when it is nonzero.
  int64_t r = std::max<int64_t>(a->rank(), 1), n = (int64_t)hits.size();
  // rank x hits can be far more than the input (a rank-1000 tensor of ones).
  Status sz = checkOutputSize(c, DataType::Int64, {r, n});
  if (!sz.ok()) return sz;
  Arr out = Arr::make(DataType::Int64, {r, n});
  auto strides = a->rank() ? stridesOf(a->dims) : std::vector<int64_t>{1};
  for (int64_t h = 0; h < n; ++h) {
    int64_t rem = hits[h];
    for (int64_t k = 0; k < r; ++k) {
      out.i[k * n + h] = rem / strides[k];
      rem %= strides[k];
    }
  }
  return one(out);
}

StatusOr<std::vector<Tensor>> kOneHot(const KernelCall &c) {
  if (!c.input(0) || !c.input(1) || !c.input(2)) return invalid("OneHot inputs");
  auto ind = c.input(0)->values<double>();
  auto depthV = c.input(1)->values<double>();
  auto vals = fromTensor(*c.input(2));
  if (!ind.ok()) return ind.status();
  if (!depthV.ok() || depthV->size() != 1) return invalid("OneHot depth");
  if (!vals.ok() || vals->size() != 2) return invalid("OneHot values");
  double depthD = (*depthV)[0];
  // Checked as a double: NaN or a value past 2^63 has no int64 value.
  if (!(depthD >= 1) || depthD > 9.0e18) return invalid("OneHot depth");
  int64_t depth = (int64_t)depthD;
  std::vector<int64_t> id = c.input(0)->dims();
  int64_t r = (int64_t)id.size() + 1;
  auto axis = normAxis(c.getInt("axis", -1), r);
  if (!axis) return invalid("OneHot axis");
  std::vector<int64_t> od = id;
  od.insert(od.begin() + *axis, depth);
  Status sz = checkOutputSize(c, vals->dt, od);
  if (!sz.ok()) return sz;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= id[k];
  for (int64_t k = *axis; k < (int64_t)id.size(); ++k) inner *= id[k];
  std::vector<int64_t> idx((size_t)numElementsOf(od), 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        double dv = (*ind)[o * inner + i];
        // Out-of-range (and NaN) indices select no position.
        int64_t v = std::isfinite(dv) && std::fabs(dv) < 9.0e18 ? (int64_t)dv : -1 - depth;
        if (v < 0) v += depth;
        idx[(o * depth + d) * inner + i] = v == d ? 1 : 0;
      }
  return one(takeElems(*vals, od, idx));
}

StatusOr<std::vector<Tensor>> kCompress(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("Compress without condition");
  auto cond = intValues(*c.input(1));
  if (!cond.ok()) return cond.status();
  std::vector<int64_t> idx, od;
  if (const Attribute *ax = c.attr("axis")) {
    auto axis = normAxis(ax->i, a->rank());
    if (!axis) return invalid("Compress axis");
    int64_t dim = a->dims[*axis], outer = 1, inner = 1;
    for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
    for (int64_t k = *axis + 1; k < a->rank(); ++k) inner *= a->dims[k];
    std::vector<int64_t> sel;
    for (int64_t j = 0; j < dim && j < (int64_t)cond->size(); ++j) if ((*cond)[j]) sel.push_back(j);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : sel)
        for (int64_t i = 0; i < inner; ++i) idx.push_back((o * dim + j) * inner + i);
    od = a->dims;
    od[*axis] = (int64_t)sel.size();
  } else {
    for (int64_t j = 0; j < a->size() && j < (int64_t)cond->size(); ++j)
      if ((*cond)[j]) idx.push_back(j);
    od = {(int64_t)idx.size()};
  }
  return one(takeElems(*a, od, idx));
}

StatusOr<std::vector<Tensor>> depthSpace(const KernelCall &c, bool toSpace) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->rank() != 4) return invalid("needs 4-D");
  int64_t b = c.getInt("blocksize", 0);
  // b*b and H*b below must not overflow; no real block is this big.
  if (b <= 0 || b > (int64_t(1) << 20)) return invalid("blocksize");
  int64_t N = a->dims[0], C = a->dims[1], H = a->dims[2], W = a->dims[3];
  bool crd = c.getString("mode", "DCR") == "CRD";
  std::vector<int64_t> od, idx;
  if (toSpace) {
    if (C % (b * b)) return invalid("channels");
    int64_t oc = C / (b * b);
    od = {N, oc, H * b, W * b};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t y = 0; y < H * b; ++y)
          for (int64_t x = 0; x < W * b; ++x) {
            int64_t by = y % b, bx = x % b;
            int64_t ic = crd ? ch * b * b + by * b + bx : (by * b + bx) * oc + ch;
            idx.push_back(((n * C + ic) * H + y / b) * W + x / b);
          }
  } else {
    if (H % b || W % b) return invalid("spatial dims");
    int64_t oh = H / b, ow = W / b, oc = C * b * b;
    od = {N, oc, oh, ow};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            int64_t ic = ch % C, blk = ch / C, by = blk / b, bx = blk % b;
            idx.push_back(((n * C + ic) * H + y * b + by) * W + x * b + bx);
          }
  }
  return one(takeElems(*a, od, idx));
}

StatusOr<std::vector<Tensor>> kDepthToSpace(const KernelCall &c) { return depthSpace(c, true); }
StatusOr<std::vector<Tensor>> kSpaceToDepth(const KernelCall &c) { return depthSpace(c, false); }

} // namespace

void registerMiscKernels(OpRegistrar &t) {
  t["Softmax"] = kSoftmax; t["LogSoftmax"] = kLogSoftmax; t["Hardmax"] = kHardmax;
  t["Dropout"] = kDropout; t["EyeLike"] = kEyeLike; t["Trilu"] = kTrilu;
  t["CumSum"] = kCumSum; t["NonZero"] = kNonZero; t["OneHot"] = kOneHot;
  t["Compress"] = kCompress; t["DepthToSpace"] = kDepthToSpace;
  t["SpaceToDepth"] = kSpaceToDepth;
}

} // namespace kernels
} // namespace onnxir
