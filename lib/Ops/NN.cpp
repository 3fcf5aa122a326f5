//===- NN.cpp - MatMul, softmax, attention, ... ---------------------------===//
//
// NN (convolution and pooling are in Conv.cpp; Einsum Det in LinearAlgebra.cpp;
// Attention RotaryEmbedding in Attention.cpp; GridSample AffineGrid RoiAlign
// MaxRoiPool NonMaxSuppression in Image.cpp; the normalizations in
// Normalization.cpp; RNN GRU LSTM in Recurrent.cpp): MatMul Gemm, Softmax
// LogSoftmax Hardmax, Dropout, LinearAttention SwiGLU CausalConvWithState; the
// quantized MatMulInteger QLinearMatMul (they share the MatMul rule); and
// FlexAttention of ai.onnx.preview (registerPreviewOps).
// One section per op (or ops sharing one implementation): its rule, kernel,
// version adapters and registration (registerNNOps at the end calls them in
// turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"
#include "Products/Products.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

namespace {

using namespace infer;
using namespace kernels;

template <typename T> T madd(T acc, T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>)
    return (T)((uint64_t)acc + (uint64_t)x * (uint64_t)y);
  else return acc + x * y;
}

/// The matrix products of MatMul and Gemm: slice p of `out` ([M, N], p below
/// oa.size()) = op(A) op(B) of A's slice oa[p] and B's slice ob[p] (row-major
/// [M, K] and [K, N], or with `ta`, `tb` their transposes). Floats: one Eigen
/// product per slice (Note [Matrix products] in Conv.cpp); integers wrap, as
/// the loop below does.
Status matmulSlices(const Arr &a, const Arr &b, Arr &out, const std::vector<int64_t> &oa,
                    const std::vector<int64_t> &ob, int64_t M, int64_t K, int64_t N, bool ta,
                    bool tb, bool hostTuned) {
  return visitNumeric(a.kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &va = a.template vec<T>();
    const auto &vb = b.template vec<T>();
    auto &vo = out.template vec<T>();
    for (int64_t p = 0; p < (int64_t)oa.size(); ++p) {
      const T *pa = va.data() + oa[p] * M * K;
      const T *pb = vb.data() + ob[p] * K * N;
      T *po = vo.data() + p * M * N;
      if constexpr (std::is_floating_point_v<T>) {
        matProduct(hostTuned, pa, pb, po, M, K, N, ta, tb);
        continue;
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          T acc = T(0);
          for (int64_t k = 0; k < K; ++k)
            acc = madd(acc, pa[ta ? k * M + i : i * K + k], pb[tb ? j * K + k : k * N + j]);
          po[i * N + j] = acc;
        }
    }
    return absl::OkStatus();
  });
}

//===--- MatMul, MatMulInteger, QLinearMatMul ---===//

void matmulRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  llvm::StringRef op = c.node.opType();
  unsigned bIdx = 1;
  if (op == "MatMulInteger") el = static_cast<int32_t>(DataType::Int32);
  if (op == "QLinearMatMul") {
    el = c.inElem(7);
    bIdx = 3;
  }
  auto a = c.inShape(0), b = c.inShape(bIdx);
  if (!a || !b || a->empty() || b->empty()) return c.setTensor(0, el, std::nullopt);
  Dims aa = *a, bb = *b;
  bool aVec = aa.size() == 1, bVec = bb.size() == 1;
  if (aVec) aa.insert(aa.begin(), c.c(1));
  if (bVec) bb.push_back(c.c(1));
  // A's last dim and B's second-to-last (K) agree.
  size_t ka = a->size() - 1, kb = bVec ? 0 : b->size() - 2;
  auto kA = staticDim((*a)[ka]), kB = staticDim((*b)[kb]);
  if (kA && kB && *kA != *kB)
    c.disagree("A has K = " + std::to_string(*kA) + " (dim " + std::to_string(ka) +
               " of " + typeStr(c, 0) + ") but B has K = " + std::to_string(*kB) + " (dim " +
               std::to_string(kb) + " of " + typeStr(c, bIdx) + ")");
  Dims ab(aa.begin(), aa.end() - 2), bbat(bb.begin(), bb.end() - 2);
  auto batch = broadcast(c.ctx, ab, bbat);
  if (!batch) {
    if (auto k = broadcastClash(ab, bbat))
      c.disagree("the batch dims of A " + typeStr(c, 0) + " and B " +
                 typeStr(c, bIdx) + " do not broadcast: " +
                 std::to_string(ab[k->first]->value()) + " (dim " + std::to_string(k->first) +
                 " of A) against " + std::to_string(bbat[k->second]->value()) + " (dim " +
                 std::to_string(k->second) + " of B), neither is 1");
    return;
  }
  Dims out = *batch;
  if (!aVec) out.push_back(aa[aa.size() - 2]);
  if (!bVec) out.push_back(bb.back());
  c.setTensor(0, el, out);
}

/// MatMul's shapes, numpy's matmul: [.., M, K] x [.., K, N], a 1-D
/// operand promoted (and its dim dropped from the result), the batch dims
/// broadcast.
struct MatMulDims {
  int64_t M = 0, K = 0, N = 0;
  std::vector<int64_t> abatch, bbatch, batch, out;
};
StatusOr<MatMulDims> matmulDims(std::vector<int64_t> ad, std::vector<int64_t> bd) {
  if (ad.empty() || bd.empty()) return invalid("MatMul of a scalar");
  bool aVec = ad.size() == 1, bVec = bd.size() == 1;
  if (aVec) ad.insert(ad.begin(), 1);
  if (bVec) bd.push_back(1);
  MatMulDims d;
  d.M = ad[ad.size() - 2];
  d.K = ad.back();
  d.N = bd.back();
  if (bd[bd.size() - 2] != d.K) return invalid("MatMul inner dims differ");
  d.abatch.assign(ad.begin(), ad.end() - 2);
  d.bbatch.assign(bd.begin(), bd.end() - 2);
  auto batch = broadcastShapes(d.abatch, d.bbatch);
  if (!batch) return invalid("MatMul batch dims");
  d.batch = *batch;
  d.out = *batch;
  if (!aVec) d.out.push_back(d.M);
  if (!bVec) d.out.push_back(d.N);
  return d;
}

/// MatMul on float or double operands, read in place and written into the
/// result's bytes (Note [Inputs read in place]): the same products as
/// matmulSlices.
template <typename T> StatusOr<std::vector<Tensor>> matmulFloat(const KernelCall &c) {
  auto a = viewTensor<T>(*c.input(0)), b = viewTensor<T>(*c.input(1));
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  auto md = matmulDims(a->dims, b->dims);
  if (!md.ok()) return md.status();
  const int64_t M = md->M, K = md->K, N = md->N;
  const std::vector<int64_t> &abatch = md->abatch, &bbatch = md->bbatch, &batch = md->batch,
                             &od = md->out;
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  OutBuf<T> out(a->dt, od);
  // A batch of A against one B is one product of [batch * M, K] rows (a
  // [seq, 1, d] activation against a weight would otherwise be `seq`
  // vector-matrix products, each reading all of B). Other sizes change
  // Eigen's blocking, hence the order of the sums: a run may (hostTuned,
  // Note [Host-tuned products]), folding keeps one product per slice.
  if (c.hostTuned && numElementsOf(bbatch) == 1 && abatch == batch) {
    int64_t P = numElementsOf(abatch);
    products::tunedMatProduct(true, a->data(), b->data(), out.data(), P * M, K, N, false, false);
    std::vector<Tensor> r;
    r.push_back(out.take());
    return r;
  }
  std::vector<int64_t> oa = broadcastOffsets(abatch, batch), ob = broadcastOffsets(bbatch, batch);
  for (size_t p = 0; p < oa.size(); ++p)
    products::tunedMatProduct(c.hostTuned, a->data() + oa[p] * M * K, b->data() + ob[p] * K * N,
               out.data() + (int64_t)p * M * N, M, K, N, false, false);
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

StatusOr<std::vector<Tensor>> kMatMul(const KernelCall &c) {
  if (c.input(0) && c.input(1) && c.input(0)->dataType() == c.input(1)->dataType()) {
    CK k = computeKind(c.input(0)->dataType());
    if (k == CK::F32) return matmulFloat<float>(c);
    if (k == CK::F64) return matmulFloat<double>(c);
  }
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->dt != b->dt) return invalid("MatMul types differ");
  auto md = matmulDims(a->dims, b->dims);
  if (!md.ok()) return md.status();
  const int64_t M = md->M, K = md->K, N = md->N;
  const std::vector<int64_t> &abatch = md->abatch, &bbatch = md->bbatch, &batch = md->batch,
                             &od = md->out;
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(a->dt, od);
  Status st = matmulSlices(*a, *b, out, broadcastOffsets(abatch, batch),
                           broadcastOffsets(bbatch, batch), M, K, N, false, false,
                           c.hostTuned);
  if (!st.ok()) return st;
  return one(out);
}

// QLinearMatMul-21 allows float16/bfloat16 scales (and float8 data); -10
// takes float scales.
absl::Status qlinearMatMulDown21(Node &n, AdapterContext &) {
  for (unsigned i : {1u, 4u, 6u}) {
    DataType t = adapters::operandElemType(n, i);
    if (i < n.numOperands() && n.operand(i) && t != DataType::Float)
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", i, " ('", n.operand(i)->name().str(), "') is ",
          t == DataType::Undefined ? std::string("of unknown type") : dataTypeName(t).str(),
          "; QLinearMatMul-10 takes float scales only"));
  }
  return absl::OkStatus();
}

void registerMatMul(OpRegistrar &r) {
  // [..., K] x [K, M]: row by row (Note [Op facts]).
  r["MatMul"].infer(matmulRule).kernel(kMatMul).axis(AxisFact::LastAxis);
  r["MatMulInteger"] = matmulRule;
  r["QLinearMatMul"] = matmulRule;
  // Type-list changes only; the pass checks the types going down.
  r["QLinearMatMul"].since(21).upgrade(adapters::noChange).downgrade(qlinearMatMulDown21);
}

//===--- Gemm ---===//

void gemmRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto a = c.inShape(0), b = c.inShape(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) return c.setTensor(0, el, std::nullopt);
  bool ta = c.getInt("transA", 0) != 0, tb = c.getInt("transB", 0) != 0;
  const DimExpr *m = ta ? (*a)[1] : (*a)[0];
  const DimExpr *n = tb ? (*b)[0] : (*b)[1];
  // K of op(A) and of op(B) agree.
  size_t ka = ta ? 0 : 1, kb = tb ? 1 : 0;
  auto kA = staticDim((*a)[ka]), kB = staticDim((*b)[kb]);
  if (kA && kB && *kA != *kB)
    c.disagree("A has K = " + std::to_string(*kA) + " (dim " + std::to_string(ka) + " of " +
               typeStr(c, 0) + (ta ? ", transA = 1" : "") + ") but B has K = " +
               std::to_string(*kB) + " (dim " + std::to_string(kb) + " of " + typeStr(c, 1) +
               (tb ? ", transB = 1" : "") + ")");
  // C broadcasts (one way) to (M, N).
  if (auto cs = c.hasInput(2) ? c.inShape(2) : std::nullopt) {
    Dims mn = {m, n};
    std::string why;
    if (cs->size() > 2) {
      why = "has rank " + std::to_string(cs->size());
    } else {
      for (size_t k = 1; k <= cs->size() && why.empty(); ++k) {
        auto x = staticDim((*cs)[cs->size() - k]), y = staticDim(mn[2 - k]);
        if (x && y && *x != 1 && *x != *y)
          why = "has " + std::to_string(*x) + " at dim " + std::to_string(cs->size() - k) +
                " where " + (k == 1 ? "N" : "M") + " is " + std::to_string(*y);
      }
    }
    if (!why.empty())
      c.disagree("C " + typeStr(c, 2) + " does not broadcast to the (M, N) result: it " + why);
  }
  c.setTensor(0, el, Dims{m, n});
}

/// Gemm's [M, K] x [K, N] from its 2-D operands and transposition flags.
struct GemmDims {
  int64_t M = 0, K = 0, N = 0;
};
StatusOr<GemmDims> gemmDims(const std::vector<int64_t> &ad, const std::vector<int64_t> &bd, bool ta,
                            bool tb) {
  GemmDims d;
  d.M = ta ? ad[1] : ad[0];
  d.K = ta ? ad[0] : ad[1];
  d.N = tb ? bd[0] : bd[1];
  if ((tb ? bd[1] : bd[0]) != d.K) return invalid("Gemm inner dims differ");
  return d;
}

/// Gemm on float or double operands in place (Note [Inputs read in
/// place]): the arithmetic of the general path below, C indexed through its
/// broadcast strides instead of an offset per element.
template <typename T> StatusOr<std::vector<Tensor>> gemmFloat(const KernelCall &c) {
  auto a = viewTensor<T>(*c.input(0)), b = viewTensor<T>(*c.input(1));
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->rank() != 2 || b->rank() != 2) return invalid("Gemm operands");
  bool ta = c.getInt("transA", 0), tb = c.getInt("transB", 0);
  float alpha = c.getFloat("alpha", 1.0f), beta = c.getFloat("beta", 1.0f);
  auto gd = gemmDims(a->dims, b->dims, ta, tb);
  if (!gd.ok()) return gd.status();
  const int64_t M = gd->M, K = gd->K, N = gd->N;
  std::vector<int64_t> od = {M, N};
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  std::optional<InView<T>> cc;
  int64_t sm = 0, sn = 0; // C's strides along M and N, 0 where broadcast
  if (const Tensor *ct = c.input(2)) {
    if (ct->dataType() != a->dt) return invalid("Gemm C type");
    auto x = viewTensor<T>(*ct);
    if (!x.ok()) return x.status();
    auto s = broadcastShapes(x->dims, od);
    if (!s || *s != od) return invalid("Gemm C does not broadcast");
    const std::vector<int64_t> &cd = x->dims;
    int64_t cN = cd.empty() ? 1 : cd.back(), cM = cd.size() == 2 ? cd[0] : 1;
    sn = cN == 1 ? 0 : 1;
    sm = cM == 1 ? 0 : cN;
    cc = std::move(*x);
  }
  OutBuf<T> out(a->dt, od);
  T *vo = out.data();
  products::tunedMatProduct(c.hostTuned, a->data(), b->data(), vo, M, K, N, ta, tb);
  const T *vc = cc ? cc->data() : nullptr;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T r = (T)alpha * vo[i * N + j];
      if (vc) r += (T)beta * vc[i * sm + j * sn];
      vo[i * N + j] = r;
    }
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

StatusOr<std::vector<Tensor>> kGemm(const KernelCall &c) {
  if (c.input(0) && c.input(1) && c.input(0)->dataType() == c.input(1)->dataType()) {
    CK k = computeKind(c.input(0)->dataType());
    if (k == CK::F32) return gemmFloat<float>(c);
    if (k == CK::F64) return gemmFloat<double>(c);
  }
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->dt != b->dt || a->rank() != 2 || b->rank() != 2) return invalid("Gemm operands");
  bool ta = c.getInt("transA", 0), tb = c.getInt("transB", 0);
  float alpha = c.getFloat("alpha", 1.0f), beta = c.getFloat("beta", 1.0f);
  auto gd = gemmDims(a->dims, b->dims, ta, tb);
  if (!gd.ok()) return gd.status();
  const int64_t M = gd->M, K = gd->K, N = gd->N;
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
  Status st = matmulSlices(*a, *b, out, {0}, {0}, M, K, N, ta, tb, c.hostTuned);
  if (!st.ok()) return st;
  // alpha * op(A) op(B) + beta * C; integers scaled in double.
  st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &vo = out.template vec<T>();
    for (int64_t i = 0; i < M * N; ++i) {
      T r;
      if constexpr (std::is_floating_point_v<T>) {
        r = (T)alpha * vo[i];
        if (cc) r += (T)beta * cc->template vec<T>()[co[i]];
      } else {
        r = (T)((double)alpha * (double)vo[i]);
        if (cc) r = (T)((double)r + (double)beta * (double)cc->template vec<T>()[co[i]]);
      }
      vo[i] = r;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

// Gemm-11 made C optional; Gemm-9 needs it: a scalar zero of A's type.
absl::Status gemmDown11(Node &n, AdapterContext &c) {
  if (n.numOperands() > 2 && n.operand(2)) return absl::OkStatus();
  DataType dt = adapters::operandElemType(n, 0);
  if (dt == DataType::Undefined)
    return absl::FailedPreconditionError(
        "no operand C, which Gemm-9 needs: a zero of A's element type, which is unknown (infer "
        "shapes first)");
  if (c.checkOnly) return absl::OkStatus();
  Value *z = adapters::scalarConstant(n, c, "C", dt, 0);
  while (n.numOperands() < 2) n.addOperand(nullptr);
  if (n.numOperands() > 2)
    n.setOperand(2, z);
  else
    n.addOperand(z);
  return absl::OkStatus();
}

void registerGemm(OpRegistrar &r) {
  r["Gemm"].infer(gemmRule).kernel(kGemm);
  r["Gemm"].since(7).upgrade(adapters::gemmBroadcastUp).downgrade(adapters::gemmBroadcastDown);
  r["Gemm"].since(11).upgrade(adapters::noChange).downgrade(gemmDown11);
}

//===--- Softmax, LogSoftmax, Hardmax ---===//

enum class SM { Softmax, LogSoftmax, Hardmax };

/// softmaxLike for X stored as T (float, double): read in place, written
/// into the result's bytes (Note [Inputs read in place]); each exp computed
/// once and kept in the result (the general path below computes it twice,
/// the same value). The same arithmetic, element for element.
template <typename T>
StatusOr<std::vector<Tensor>> softmaxInPlace(const Tensor &xt, SM kind, int64_t outer,
                                             int64_t dim, int64_t inner) {
  auto x = viewTensor<T>(xt);
  if (!x.ok()) return x.status();
  OutBuf<T> out(xt.dataType(), xt.dims());
  const T *xv = x->data();
  T *yv = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *px = xv + o * dim * inner + i;
      T *py = yv + o * dim * inner + i;
      T mx = -std::numeric_limits<T>::infinity();
      int64_t arg = 0;
      for (int64_t j = 0; j < dim; ++j)
        if (px[j * inner] > mx) { mx = px[j * inner]; arg = j; }
      if (kind == SM::Hardmax) {
        for (int64_t j = 0; j < dim; ++j) py[j * inner] = j == arg ? T(1) : T(0);
        continue;
      }
      T sum = 0;
      if (kind == SM::Softmax) {
        for (int64_t j = 0; j < dim; ++j) {
          T e = std::exp(px[j * inner] - mx);
          py[j * inner] = e;
          sum += e;
        }
        for (int64_t j = 0; j < dim; ++j) py[j * inner] = py[j * inner] / sum;
      } else {
        for (int64_t j = 0; j < dim; ++j) sum += std::exp(px[j * inner] - mx);
        for (int64_t j = 0; j < dim; ++j) py[j * inner] = px[j * inner] - mx - std::log(sum);
      }
    }
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

StatusOr<std::vector<Tensor>> softmaxLike(const KernelCall &c, SM kind) {
  if (const Tensor *xt = c.input(0);
      xt && (xt->dataType() == DataType::Float || xt->dataType() == DataType::Double)) {
    const std::vector<int64_t> &d = xt->dims();
    int64_t r = (int64_t)d.size();
    bool legacy = c.opset > 0 && c.opset < 13;
    auto axis = normAxis(c.getInt("axis", legacy ? 1 : -1), r);
    if (!axis) return invalid("softmax axis");
    if (numElementsOf(d) < 0) return invalid("tensor has invalid dims");
    int64_t outer = 1, dim = 1, inner = 1;
    for (int64_t k = 0; k < *axis; ++k) outer *= d[k];
    if (legacy) {
      for (int64_t k = *axis; k < r; ++k) dim *= d[k];
    } else {
      dim = d[*axis];
      for (int64_t k = *axis + 1; k < r; ++k) inner *= d[k];
    }
    return xt->dataType() == DataType::Float ? softmaxInPlace<float>(*xt, kind, outer, dim, inner)
                                             : softmaxInPlace<double>(*xt, kind, outer, dim, inner);
  }
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

// Softmax, LogSoftmax, Hardmax-13: before, the input was coerced to 2-D at
// `axis` (default 1: [d0*..*d(axis-1), d(axis)*..*dn]) and the op ran over
// each row; from 13 it runs along the one axis `axis` (default -1). The two
// agree when the axis is the last: then only the default has to be written
// out. Up otherwise: Flatten(axis) -> op(axis=1) -> Reshape(Shape(x)), any
// rank. Down otherwise: Transpose the axis to the end and back (needs the
// rank).
template <const char *Op> absl::Status softmaxUp13(Node &n, AdapterContext &c) {
  auto a = adapters::intAttrOr(n, "axis", 1);
  if (!a.ok()) return a.status();
  int64_t r = adapters::operandRank(n, 0);
  if (c.checkOnly) return absl::OkStatus();
  if (*a == -1 || (r >= 0 && (*a == r - 1 || *a + r == r - 1))) {
    adapters::setIntAttr(n, "axis", *a);
    return absl::OkStatus();
  }
  Graph &g = *n.getGraph();
  Value *x = n.operand(0);
  Node *flat = g.createNode("Flatten", {x}, 1, &n);
  adapters::setIntAttr(*flat, "axis", *a);
  Node *shape = g.createNode("Shape", {x}, 1, &n);
  n.setOperand(0, flat->result(0));
  adapters::setIntAttr(n, "axis", 1);
  adapters::wrapResult(n, "Reshape", {shape->result(0)});
  (void)Op;
  return absl::OkStatus();
}
template <const char *Op> absl::Status softmaxDown13(Node &n, AdapterContext &c) {
  auto a = adapters::intAttrOr(n, "axis", -1);
  if (!a.ok()) return a.status();
  int64_t r = adapters::operandRank(n, 0);
  if (r < 0 && *a != -1)
    return absl::FailedPreconditionError(absl::StrCat(
        "axis ", *a, " may not be the last, and the input's rank is unknown (infer shapes first)"));
  // Note [Negative axes before 11]: the last axis by number needs the rank.
  if (r < 0 && c.target < 11)
    return absl::FailedPreconditionError(
        "the last axis must be written as a number below opset 11, and the input's rank is "
        "unknown (infer shapes first)");
  if (c.checkOnly) return absl::OkStatus();
  int64_t ax = *a < 0 && r >= 0 ? *a + r : *a;
  if (r < 0 || ax == r - 1) {
    adapters::setIntAttr(n, "axis", ax);
    return absl::OkStatus();
  }
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < r; ++k) perm.push_back(k);
  std::swap(perm[ax], perm[r - 1]);
  Graph &g = *n.getGraph();
  Node *t = g.createNode("Transpose", {n.operand(0)}, 1, &n);
  t->newAttr("perm").setInts(perm);
  n.setOperand(0, t->result(0));
  adapters::setIntAttr(n, "axis", r - 1);
  Node *back = adapters::wrapResult(n, "Transpose", {});
  back->newAttr("perm").setInts(perm);
  (void)Op;
  return absl::OkStatus();
}
constexpr char kSoftmaxName[] = "Softmax", kLogSoftmaxName[] = "LogSoftmax",
               kHardmaxName[] = "Hardmax";

void registerSoftmax(OpRegistrar &r) {
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"}) r[op] = sameAsInput;
  r["Softmax"] = kSoftmax; r["LogSoftmax"] = kLogSoftmax;
  r["Hardmax"] = kHardmax;
  // Note [Op facts]: along `axis` (before 13, the rows of the input coerced
  // to 2-D at `axis`: at the last axis, the same).
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"})
    r[op].shapePreserving().axis(AxisFact::AxisAttribute);
  r["Softmax"].since(13).upgrade(softmaxUp13<kSoftmaxName>).downgrade(
      softmaxDown13<kSoftmaxName>);
  r["LogSoftmax"].since(13).upgrade(softmaxUp13<kLogSoftmaxName>).downgrade(
      softmaxDown13<kLogSoftmaxName>);
  r["Hardmax"].since(13).upgrade(softmaxUp13<kHardmaxName>).downgrade(
      softmaxDown13<kHardmaxName>);
}

//===--- Dropout ---===//

// Note [Dropout in training mode]
//   Dropout-1/6 train when is_test is 0 (their ratio an attribute),
//   Dropout-12 on when the training_mode operand is true (ratio an operand,
//   default 0.5); Dropout-7 and -10 always infer. Training keeps each element
//   with probability 1 - ratio and scales it by 1 / (1 - ratio): a uniform
//   draw in [0, 1) per element from std::mt19937_64 seeded by the `seed`
//   attribute (the evaluator supplies its own when the node has none), kept
//   when >= ratio, as ONNX's reference does (its draws are numpy's, so the
//   kept set differs; the rule is the same). Ratio 0 keeps everything; a
//   ratio outside [0, 1) is refused. Inference, or training with ratio 0,
//   copies the input with an all-true mask. The mask is bool from opset 10,
//   of the data's type before.

/// The `seed` attribute as an integer (an int or a float); without one the
/// run's seed (KernelCall::seed), else 0.
uint64_t seedOf(const KernelCall &c) {
  const Attribute *a = c.attr("seed");
  if (!a) return c.seed.value_or(0);
  if (a->kind() == AttrKind::Int) return (uint64_t)a->i;
  if (a->kind() == AttrKind::Float && std::isfinite(a->f)) return (uint64_t)(int64_t)a->f;
  return 0;
}

StatusOr<std::vector<Tensor>> kDropout(const KernelCall &c) {
  if (!c.input(0)) return invalid("Dropout without input");
  bool training = false;
  double ratio = 0.5;
  if (c.opset > 0 && c.opset < 7) {
    training = c.getInt("is_test", 0) == 0;
    ratio = c.getFloat("ratio", 0.5f);
  } else if (c.opset <= 0 || c.opset >= 12) {
    if (c.input(2)) {
      auto t = intValues(*c.input(2));
      if (!t.ok() || t->size() != 1)
        return invalid("Dropout: input training_mode must be one bool");
      training = (*t)[0] != 0;
    }
    if (c.input(1)) {
      auto r = fromTensor(*c.input(1));
      if (!r.ok()) return r.status();
      auto rd = convertArr(*r, DataType::Double);
      if (!rd.ok() || rd->d.size() != 1) return invalid("Dropout: input ratio must be one float");
      ratio = rd->d[0];
    }
  }
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return unsupported("Dropout: only floating-point element types");
  if (training && !(ratio >= 0 && ratio < 1))
    return invalid(absl::StrCat("Dropout: ratio ", ratio, " is outside [0, 1)"));
  bool boolMask = c.opset <= 0 || c.opset >= 10;
  Arr mask = Arr::make(boolMask ? DataType::Bool : x->dt, x->dims);
  std::vector<char> keep(x->size(), 1);
  if (training && ratio > 0) {
    std::mt19937_64 gen(seedOf(c));
    for (char &k : keep) k = (double)(gen() >> 11) * 0x1.0p-53 >= ratio;
  }
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<T> &v = x->template vec<T>();
      T scale = training ? (T)(1.0 / (1.0 - ratio)) : T(1);
      for (size_t k = 0; k < v.size(); ++k) v[k] = keep[k] ? v[k] * scale : T(0);
      if (!boolMask)
        for (size_t k = 0; k < v.size(); ++k) mask.template vec<T>()[k] = keep[k] ? T(1) : T(0);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  if (boolMask)
    for (size_t k = 0; k < keep.size(); ++k) mask.i[k] = keep[k];
  std::vector<Tensor> r;
  r.push_back(toTensor(*x));
  if (c.numOutputs > 1) r.push_back(toTensor(mask));
  return r;
}

using adapters::dropResultsFrom;
using adapters::refuse;
using adapters::resultRead;

// Dropout-7 dropped is_test: the runtime's mode decides (an inference runtime
// copies the input). Down, is_test=1 keeps that meaning for opset-6 runtimes,
// which do not fill the mask then.
absl::Status dropoutUp7(Node &n, AdapterContext &c) {
  return adapters::dropIntAttr(n, c, "is_test");
}

absl::Status dropoutDown7(Node &n, AdapterContext &c) {
  if (resultRead(n, 1))
    return refuse(absl::StrCat("result #1 (mask, '", n.result(1)->name().str(),
                               "') is not filled at opset 6 in test mode (is_test=1), the "
                               "mode of an inference runtime"));
  if (c.checkOnly) return absl::OkStatus();
  dropResultsFrom(n, 1);
  n.newAttr("is_test").setInt(1);
  return absl::OkStatus();
}

// Dropout-10 made the mask output bool (it had the data's type).
absl::Status dropoutMask10(Node &n, AdapterContext &c) {
  if (n.numResults() > 1 && n.result(1) &&
      (!n.result(1)->useEmpty() || n.result(1)->isGraphOutput()))
    return absl::FailedPreconditionError(absl::StrCat(
        "the mask result ('", n.result(1)->name().str(), "') is used, and its type is ",
        c.to >= 10 ? "bool from opset 10" : "the data's before opset 10"));
  if (c.checkOnly) return absl::OkStatus();
  if (n.numResults() > 1 && n.result(1)) n.result(1)->setType(nullptr);
  return absl::OkStatus();
}
// Note [Dropout's mask across opset 12]
// In inference Dropout copies its input, and its mask says which elements
// were kept. Dropout-12 defines it: with training_mode false, every element
// is kept, the mask is all true (ONNX's reference). Dropout-10 leaves the
// inference mask to the runtime, and onnxruntime's Dropout-7 and -10 give
// all false. A read mask would flip across the step, so it is written out
// as what the source version gives: ConstantOfShape(Shape(data)) of false
// going up, of true going down, and the node loses its mask result. Below
// opset 9 (no ConstantOfShape) a read mask is refused (the mask step of
// opset 10 refuses one going up from there anyway).

/// True if the mask (result #1) of `n` is read: a use or a graph output.
bool dropoutMaskRead(const Node &n) {
  Value *m = n.numResults() > 1 ? n.result(1) : nullptr;
  return m && (!m->useEmpty() || m->isGraphOutput());
}
/// Note [Dropout's mask across opset 12]: the read mask of `n` becomes a
/// constant `value` of the data's shape (made before `n`, keeping the mask's
/// name and type), and `n` loses the mask result.
absl::Status dropoutMaskConstant(Node &n, AdapterContext &c, bool value) {
  if (!dropoutMaskRead(n)) return absl::OkStatus();
  if (c.target < 9)
    return absl::FailedPreconditionError(absl::StrCat(
        "the mask result ('", n.result(1)->name().str(), "') is used; in inference it is all ",
        value ? "true" : "false", " at opset ", c.from, " and all ", value ? "false" : "true",
        " at opset ", c.to, ", and its constant needs ConstantOfShape (opset 9)"));
  if (c.checkOnly) return absl::OkStatus();
  Graph &g = *n.getGraph();
  Value *mask = n.result(1);
  Node *shape = g.createNode("Shape", {n.operand(0)}, 1, &n);
  Node *fill = g.createNode("ConstantOfShape", {shape->result(0)}, 1, &n);
  auto t = std::make_unique<Tensor>();
  t->setDataType(DataType::Bool);
  t->setDims({1});
  t->setRaw(std::string(1, value ? '\1' : '\0'));
  fill->newAttr("value").setTensor(std::move(t));
  Value *r = fill->result(0);
  std::string name = mask->name().str();
  r->setType(mask->type());
  mask->replaceAllUsesWith(r);
  (void)n.eraseResult(1);
  n.trimTrailingEmptyResults();
  (void)r->setName(name);
  return absl::OkStatus();
}

// Dropout-12: ratio became operand #1 (a scalar of a float type),
// training_mode operand #2 (bool), seed an attribute.
absl::Status dropoutUp12(Node &n, AdapterContext &c) {
  auto ratio = n.getAttr("ratio");
  if (ratio && (ratio->isReference() || ratio->kind() != AttrKind::Float))
    return absl::FailedPreconditionError(
        "attribute 'ratio' is not a float (or refers to a function attribute)");
  if (absl::Status s = dropoutMaskConstant(n, c, false); !s.ok()) return s;
  if (c.checkOnly || !ratio) return absl::OkStatus();
  Value *v = adapters::scalarConstant(n, c, "ratio", DataType::Float, ratio->f);
  n.removeAttr("ratio");
  n.addOperand(v);
  return absl::OkStatus();
}
absl::Status dropoutDown12(Node &n, AdapterContext &c) {
  if (n.numOperands() > 2 && n.operand(2)) {
    auto tm = adapters::constantOperandValues(n, c, 2, "no training_mode (inference)");
    if (!tm.ok()) return tm.status();
    if (tm->size() != 1 || (*tm)[0] != 0)
      return absl::FailedPreconditionError(
          "training_mode is true; Dropout-10 has no training_mode operand");
  }
  float r = 0.5f;
  bool hasRatio = n.numOperands() > 1 && n.operand(1);
  if (hasRatio) {
    auto v = adapters::constantOperandValues(n, c, 1, "attribute 'ratio'");
    if (!v.ok()) return v.status();
    if (v->size() != 1)
      return absl::FailedPreconditionError("operand #1 (ratio) is not a scalar");
    r = (float)(*v)[0];
  }
  if (absl::Status s = dropoutMaskConstant(n, c, true); !s.ok()) return s;
  if (c.checkOnly) return absl::OkStatus();
  adapters::dropOperand(n, 2);
  if (hasRatio) {
    adapters::dropOperand(n, 1);
    n.removeAttr("ratio");
    n.newAttr("ratio").setFloat(r);
  }
  // The seed only matters in training, which Dropout-10 leaves to the
  // runtime.
  n.removeAttr("seed");
  return absl::OkStatus();
}

void registerDropout(OpRegistrar &r) {
  r["Dropout"] = [](InferCtx &c) {
    sameAsInput(c);
    if (c.hasOutput(1)) c.setTensor(1, c.opset >= 10 ? kBool : c.inElem(0), c.inShape(0));
  };
  r["Dropout"] = kDropout;
  r["Dropout"].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
  r["Dropout"].since(7).upgrade(dropoutUp7).downgrade(dropoutDown7);
  r["Dropout"].since(10).upgrade(dropoutMask10).downgrade(dropoutMask10);
  r["Dropout"].since(12).upgrade(dropoutUp12).downgrade(dropoutDown12);
}

//===--- SwiGLU ---===//

/// Y = A * sigmoid(alpha * A) * B, A and B of one shape (no broadcasting).
StatusOr<std::vector<Tensor>> kSwiGLU(const KernelCall &c) {
  auto a = inputArr(c, 0), b = inputArr(c, 1);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (a->dt != b->dt || a->dims != b->dims)
    return invalid("SwiGLU: inputs A and B must have one element type and one shape");
  double alpha = c.getFloat("alpha", 1.0f);
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<T> &av = a->template vec<T>();
      const std::vector<T> &bv = b->template vec<T>();
      for (size_t k = 0; k < av.size(); ++k)
        av[k] = av[k] / (T(1) + std::exp(-(T)alpha * av[k])) * bv[k];
      return absl::OkStatus();
    }
    return unsupported("SwiGLU: only floating-point element types");
  });
  if (!st.ok()) return st;
  return one(*a);
}

void registerSwiGLU(OpRegistrar &r) {
  r["SwiGLU"] = [](InferCtx &c) {
    // A and B have identical shapes: take the more precise dim of each pair.
    auto a = c.inShape(0), b = c.inShape(1);
    if (a && b && a->size() == b->size())
      for (size_t i = 0; i < a->size(); ++i)
        if (!(*a)[i] || (!(*a)[i]->isConstant() && (*b)[i] && (*b)[i]->isConstant()))
          (*a)[i] = (*b)[i];
    c.setTensor(0, c.inElem(0), a ? a : b);
  };
  r["SwiGLU"] = kSwiGLU;
}

//===--- CausalConvWithState ---===//

/// A depthwise causal 1-D convolution over [B, C, T]: the past_state (or
/// k-1 zeros) before the input, weight [C, 1, k], optional bias [C], then
/// activation none or silu/swish (x * sigmoid(x)); present_state is the
/// last k-1 positions of state ++ input.
StatusOr<std::vector<Tensor>> kCausalConvWithState(const KernelCall &c) {
  auto x = inputArr(c, 0), w = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!w.ok()) return w.status();
  if (x->kind() != CK::F32 || w->kind() != CK::F32)
    return unsupported("CausalConvWithState: only float, float16 and bfloat16");
  std::string act = c.getString("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return invalid(absl::StrCat("CausalConvWithState: attribute activation '", act,
                                "' is not one of none, silu, swish"));
  if (x->rank() != 3) return invalid("CausalConvWithState: input must be [batch, channels, length]");
  int64_t B = x->dims[0], C = x->dims[1], T = x->dims[2];
  if (w->rank() != 3 || w->dims[0] != C || w->dims[1] != 1 || w->dims[2] < 1)
    return invalid("CausalConvWithState: weight must be [channels, 1, k] with k >= 1");
  int64_t K = w->dims[2];
  std::optional<Arr> bias, past;
  if (c.input(2)) {
    auto v = inputArr(c, 2);
    if (!v.ok()) return v.status();
    if (v->kind() != CK::F32 || v->dims != std::vector<int64_t>{C})
      return invalid("CausalConvWithState: bias must be [channels]");
    bias = std::move(*v);
  }
  if (c.input(3)) {
    auto v = inputArr(c, 3);
    if (!v.ok()) return v.status();
    if (v->kind() != CK::F32 || v->dims != std::vector<int64_t>{B, C, K - 1})
      return invalid("CausalConvWithState: past_state must be [batch, channels, k - 1]");
    past = std::move(*v);
  }
  Arr out = Arr::make(x->dt, x->dims), state = Arr::make(x->dt, {B, C, K - 1});
  std::vector<float> padded(K - 1 + T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t ch = 0; ch < C; ++ch) {
      for (int64_t j = 0; j < K - 1; ++j)
        padded[j] = past ? past->f[(b * C + ch) * (K - 1) + j] : 0.0f;
      std::copy_n(x->f.data() + (b * C + ch) * T, T, padded.data() + K - 1);
      const float *wc = w->f.data() + ch * K;
      float *o = out.f.data() + (b * C + ch) * T;
      for (int64_t t = 0; t < T; ++t) {
        float acc = bias ? bias->f[ch] : 0.0f;
        for (int64_t j = 0; j < K; ++j) acc += wc[j] * padded[t + j];
        o[t] = act == "none" ? acc : acc / (1.0f + std::exp(-acc));
      }
      std::copy_n(padded.data() + T, K - 1, state.f.data() + (b * C + ch) * (K - 1));
    }
  std::vector<Tensor> r;
  r.push_back(toTensor(out));
  if (c.numOutputs > 1) r.push_back(toTensor(state));
  return r;
}

void registerCausalConvWithState(OpRegistrar &r) {
  r["CausalConvWithState"] = [](InferCtx &c) {
    auto x = c.inShape(0), w = c.inShape(1);
    c.setTensor(0, c.inElem(0), x);
    // The carried state holds the last k-1 positions: [B, C, k-1].
    if (x && x->size() == 3)
      c.setTensor(1, c.inElem(0),
                  Dims{(*x)[0], (*x)[1],
                       w && w->size() == 3 ? dimSub(c.ctx, (*w)[2], c.c(1)) : nullptr});
  };
  r["CausalConvWithState"] = kCausalConvWithState;
}

//===--- LinearAttention ---===//

/// LinearAttention-27: packed [B, T, H*D] query/key/value; output
/// [B, T, Hq*Dv], present_state [B, Hkv, Dk, Dv].
void linearAttentionRule(InferCtx &c) {
  int64_t qh = c.getInt("q_num_heads", 0), kvh = c.getInt("kv_num_heads", 0);
  if (qh <= 0 || kvh <= 0 || qh > (1 << 20) || kvh > (1 << 20) || qh % kvh) return;
  auto q = c.inShape(0), k = c.inShape(1), v = c.inShape(2);
  auto dim = [&](const std::optional<Dims> &s, size_t i) -> const DimExpr * {
    return s && s->size() == 3 ? (*s)[i] : nullptr;
  };
  auto first = [](std::initializer_list<const DimExpr *> l) -> const DimExpr * {
    const DimExpr *best = nullptr;
    for (const DimExpr *e : l)
      if (e && (!best || (!best->isConstant() && e->isConstant()))) best = e;
    return best;
  };
  // The per-head size of a packed dim (exact division only).
  auto perHead = [&](const DimExpr *packed, int64_t heads) -> const DimExpr * {
    if (!packed) return nullptr;
    if (packed->isConstant()) return packed->value() % heads ? nullptr : c.c(packed->value() / heads);
    return dimFloorDiv(c.ctx, packed, c.c(heads));
  };
  const DimExpr *b = first({dim(q, 0), dim(k, 0), dim(v, 0)});
  const DimExpr *t = first({dim(q, 1), dim(k, 1), dim(v, 1)});
  const DimExpr *dk = first({perHead(dim(q, 2), qh), perHead(dim(k, 2), kvh)});
  const DimExpr *dv = perHead(dim(v, 2), kvh);
  c.setTensor(0, c.inElem(0), Dims{b, t, dimMul(c.ctx, dv, c.c(qh))});
  int32_t st = c.hasInput(3) ? c.inElem(3) : c.inElem(0);
  c.setTensor(1, st, Dims{b, c.c(kvh), dk, dv});
}

// Note [LinearAttention recurrence]
//   Per batch and key/value head, a state S [Dk, Dv] (past_state, else
//   zeros) runs over the time steps: gating (update_rule gated,
//   gated_delta) scales S's rows by exp(decay_t) (one per head, or per key
//   dim); the delta rule (delta, gated_delta) replaces v_t by
//   beta_t * (v_t - k_t S); then S += k_t^T v_t, and each query head of the
//   group reads out_t = scale * q_t S (scale 0: 1 / sqrt(Dk)). The inputs
//   are packed [B, T, H*D]; present_state is the final S. Computed in float,
//   as ONNX's reference does; chunk_size changes nothing.
StatusOr<std::vector<Tensor>> kLinearAttention(const KernelCall &c) {
  auto q = inputArr(c, 0), k = inputArr(c, 1), v = inputArr(c, 2);
  if (!q.ok()) return q.status();
  if (!k.ok()) return k.status();
  if (!v.ok()) return v.status();
  if (q->kind() != CK::F32 || k->kind() != CK::F32 || v->kind() != CK::F32)
    return unsupported("LinearAttention: only float, float16 and bfloat16");
  std::string rule = c.getString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return invalid(absl::StrCat("LinearAttention: attribute update_rule '", rule,
                                "' is not one of linear, gated, delta, gated_delta"));
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  int64_t qh = c.getInt("q_num_heads", 0), kvh = c.getInt("kv_num_heads", 0);
  if (qh <= 0 || kvh <= 0 || qh % kvh)
    return invalid("LinearAttention: q_num_heads must be a positive multiple of kv_num_heads");
  if (gating != (c.input(4) != nullptr))
    return invalid(absl::StrCat("LinearAttention: update_rule '", rule,
                                gating ? "' needs input decay" : "' takes no input decay"));
  if (delta != (c.input(5) != nullptr))
    return invalid(absl::StrCat("LinearAttention: update_rule '", rule,
                                delta ? "' needs input beta" : "' takes no input beta"));
  if (q->rank() != 3 || k->rank() != 3 || v->rank() != 3)
    return invalid("LinearAttention: query, key and value must be [batch, time, heads * size]");
  int64_t B = q->dims[0], T = q->dims[1];
  for (const Arr *a : {&*k, &*v})
    if (a->dims[0] != B || a->dims[1] != T)
      return invalid("LinearAttention: query, key and value differ in batch or time");
  if (q->dims[2] % qh || k->dims[2] % kvh || v->dims[2] % kvh)
    return invalid("LinearAttention: a hidden size is not a multiple of its number of heads");
  int64_t Dk = q->dims[2] / qh, Dv = v->dims[2] / kvh, group = qh / kvh;
  if (k->dims[2] / kvh != Dk) return invalid("LinearAttention: query and key differ in head size");
  std::optional<Arr> decay, beta;
  int64_t decayLast = 0, betaLast = 0;
  if (gating) {
    auto d = inputArr(c, 4);
    if (!d.ok()) return d.status();
    decayLast = d->rank() == 3 ? d->dims[2] : -1;
    if (d->kind() != CK::F32 || d->rank() != 3 || d->dims[0] != B || d->dims[1] != T ||
        (decayLast != kvh && decayLast != kvh * Dk))
      return invalid("LinearAttention: decay must be [batch, time, kv_num_heads (* head size)]");
    decay = std::move(*d);
  }
  if (delta) {
    auto d = inputArr(c, 5);
    if (!d.ok()) return d.status();
    betaLast = d->rank() == 3 ? d->dims[2] : -1;
    if (d->kind() != CK::F32 || d->rank() != 3 || d->dims[0] != B || d->dims[1] != T ||
        (betaLast != kvh && betaLast != 1))
      return invalid("LinearAttention: beta must be [batch, time, kv_num_heads or 1]");
    beta = std::move(*d);
  }
  DataType stateDt = q->dt;
  std::vector<float> S(B * kvh * Dk * Dv, 0.0f);
  if (c.input(3)) {
    auto p = inputArr(c, 3);
    if (!p.ok()) return p.status();
    if (p->kind() != CK::F32 || p->dims != std::vector<int64_t>{B, kvh, Dk, Dv})
      return invalid("LinearAttention: past_state must be [batch, kv_num_heads, key size, "
                     "value size]");
    S = p->f;
    stateDt = p->dt;
  }
  double sc = c.getFloat("scale", 0.0f);
  float scale = sc == 0 ? 1.0f / std::sqrt((float)Dk) : (float)sc;
  Arr out = Arr::make(q->dt, {B, T, qh * Dv});
  std::vector<float> vt(Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < kvh; ++h) {
      float *St = S.data() + (b * kvh + h) * Dk * Dv;
      for (int64_t t = 0; t < T; ++t) {
        const float *kt = k->f.data() + (b * T + t) * kvh * Dk + h * Dk;
        const float *vs = v->f.data() + (b * T + t) * kvh * Dv + h * Dv;
        if (gating) {
          const float *g = decay->f.data() + (b * T + t) * decayLast;
          for (int64_t d = 0; d < Dk; ++d) {
            float e = std::exp(decayLast == kvh ? g[h] : g[h * Dk + d]);
            for (int64_t m = 0; m < Dv; ++m) St[d * Dv + m] *= e;
          }
        }
        std::copy_n(vs, Dv, vt.data());
        if (delta) {
          float bt = beta->f[(b * T + t) * betaLast + (betaLast == 1 ? 0 : h)];
          for (int64_t m = 0; m < Dv; ++m) {
            float r = 0;
            for (int64_t d = 0; d < Dk; ++d) r += St[d * Dv + m] * kt[d];
            vt[m] = bt * (vt[m] - r);
          }
        }
        for (int64_t d = 0; d < Dk; ++d)
          for (int64_t m = 0; m < Dv; ++m) St[d * Dv + m] += kt[d] * vt[m];
        for (int64_t g = 0; g < group; ++g) {
          int64_t hq = h * group + g;
          const float *qt = q->f.data() + (b * T + t) * qh * Dk + hq * Dk;
          float *o = out.f.data() + (b * T + t) * qh * Dv + hq * Dv;
          for (int64_t m = 0; m < Dv; ++m) {
            float r = 0;
            for (int64_t d = 0; d < Dk; ++d) r += qt[d] * St[d * Dv + m];
            o[m] = scale * r;
          }
        }
      }
    }
  Arr state = Arr::make(stateDt, {B, kvh, Dk, Dv});
  state.f = std::move(S);
  std::vector<Tensor> r;
  r.push_back(toTensor(out));
  if (c.numOutputs > 1) r.push_back(toTensor(state));
  return r;
}

void registerLinearAttention(OpRegistrar &r) {
  r["LinearAttention"].infer(linearAttentionRule).kernel(kLinearAttention);
}

} // namespace

//===--- FlexAttention (ai.onnx.preview) ---===//

void registerPreviewOps(OpRegistrar &r) {
  using namespace infer;
  // FlexAttention: Q [B,Hq,Lq,E], K [B,Hkv,Lkv,E], V [B,Hkv,Lkv,Ev] ->
  // [B,Hq,Lq,Ev].
  r["FlexAttention"] = [](InferCtx &c) {
    auto q = c.inShape(0), v = c.inShape(2);
    if (!q || !v || q->size() != 4 || v->size() != 4)
      return c.setTensor(0, c.inElem(0), std::nullopt);
    const DimExpr *b = (*q)[0] ? (*q)[0] : (*v)[0];
    c.setTensor(0, c.inElem(0), Dims{b, (*q)[1], (*q)[2], (*v)[3]});
  };
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerNNOps(OpRegistrar &r) {
  for (auto *reg : {registerMatMul, registerGemm, registerSoftmax, registerDropout,
                    registerSwiGLU, registerCausalConvWithState, registerLinearAttention})
    reg(r);
}

} // namespace onnxir
