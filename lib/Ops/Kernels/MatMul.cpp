//===- MatMul.cpp - MatMul (numpy semantics) and Gemm ---------------------===//
//
// Products accumulate in the compute kind (float32 in float), integers wrap.
// The size budget of the pass keeps these small.
//
//===----------------------------------------------------------------------===//
#include "KernelUtil.h"

namespace onnxir {
namespace kernels {
namespace {

template <typename T> T madd(T acc, T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return (T)((uint64_t)acc + (uint64_t)x * (uint64_t)y);
  else return acc + x * y;
}

StatusOr<std::vector<Tensor>> kMatMul(const KernelCall &c) {
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->dt != b->dt) return invalid("MatMul types differ");
  if (a->rank() == 0 || b->rank() == 0) return invalid("MatMul of a scalar");
  std::vector<int64_t> ad = a->dims, bd = b->dims;
  bool aVec = ad.size() == 1, bVec = bd.size() == 1;
  if (aVec) ad.insert(ad.begin(), 1);
  if (bVec) bd.push_back(1);
  int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  if (bd[bd.size() - 2] != K) return invalid("MatMul inner dims differ");
  std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
  auto batch = broadcastShapes(abatch, bbatch);
  if (!batch) return invalid("MatMul batch dims");
  std::vector<int64_t> od = *batch;
  if (!aVec) od.push_back(M);
  if (!bVec) od.push_back(N);
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  auto oa = broadcastOffsets(abatch, *batch), ob = broadcastOffsets(bbatch, *batch);
  int64_t nb = numElementsOf(*batch);
  Arr out = Arr::make(a->dt, od);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &va = a->template vec<T>();
    const auto &vb = b->template vec<T>();
    auto &vo = out.template vec<T>();
    for (int64_t p = 0; p < nb; ++p) {
      const T *pa = va.data() + oa[p] * M * K;
      const T *pb = vb.data() + ob[p] * K * N;
      T *po = vo.data() + p * M * N;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          T acc = T(0);
          for (int64_t k = 0; k < K; ++k) acc = madd(acc, pa[i * K + k], pb[k * N + j]);
          po[i * N + j] = acc;
        }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

StatusOr<std::vector<Tensor>> kGemm(const KernelCall &c) {
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->dt != b->dt || a->rank() != 2 || b->rank() != 2) return invalid("Gemm operands");
  bool ta = c.getInt("transA", 0), tb = c.getInt("transB", 0);
  float alpha = c.getFloat("alpha", 1.0f), beta = c.getFloat("beta", 1.0f);
  int64_t M = ta ? a->dims[1] : a->dims[0], K = ta ? a->dims[0] : a->dims[1];
  int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
  if (K != K2) return invalid("Gemm inner dims differ");
  std::vector<int64_t> od = {M, N};
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  std::optional<Arr> cc;
  std::vector<int64_t> co;
  if (c.input(2)) {
    auto x = inputArr(c, 2);
    if (!x.ok()) return x.status();
    if (x->dt != a->dt) return invalid("Gemm C type");
    auto s = broadcastShapes(x->dims, od);
    if (!s || *s != od) return invalid("Gemm C does not broadcast");
    co = broadcastOffsets(x->dims, od);
    cc = std::move(*x);
  }
  Arr out = Arr::make(a->dt, od);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &va = a->template vec<T>();
    const auto &vb = b->template vec<T>();
    auto &vo = out.template vec<T>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T acc = T(0);
        for (int64_t k = 0; k < K; ++k)
          acc = madd(acc, va[ta ? k * M + i : i * K + k], vb[tb ? j * K + k : k * N + j]);
        T r;
        if constexpr (std::is_floating_point_v<T>) {
          r = (T)alpha * acc;
          if (cc) r += (T)beta * cc->template vec<T>()[co[i * N + j]];
        } else {
          r = (T)((double)alpha * (double)acc);
          if (cc) r = (T)((double)r + (double)beta * (double)cc->template vec<T>()[co[i * N + j]]);
        }
        vo[i * N + j] = r;
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

} // namespace

void registerMatMulKernels(OpRegistrar &t) {
  t["MatMul"] = kMatMul;
  t["Gemm"] = kGemm;
}

} // namespace kernels
} // namespace onnxir
