//===- NN.cpp - MatMul, softmax, attention, ... ---------------------------===//
//
// NN (convolution and pooling are in Conv.cpp; Einsum Det in LinearAlgebra.cpp;
// Attention RotaryEmbedding in Attention.cpp; GridSample AffineGrid RoiAlign
// MaxRoiPool NonMaxSuppression in Image.cpp; the normalizations in
// Normalization.cpp; RNN GRU LSTM in Recurrent.cpp): MatMul Gemm, Softmax
// LogSoftmax Hardmax, Dropout, LinearAttention SwiGLU CausalConvWithState; the
// quantized MatMulInteger QLinearMatMul (they share the MatMul rule); and
// FlexAttention of ai.onnx.preview (registerPreviewOps).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Type and shape rules
//===----------------------------------------------------------------------===//

namespace infer {
namespace {

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

} // namespace
} // namespace infer

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

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
      // Floats: one Eigen product per batch slice (Note [Matrix products]
      // in Conv.cpp); integers wrap, as the loop below does.
      if constexpr (std::is_floating_point_v<T>) {
        using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
        Eigen::Map<Mat>(po, M, N).noalias() =
            Eigen::Map<const Mat>(pa, M, K) * Eigen::Map<const Mat>(pb, K, N);
        continue;
      }
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
    if constexpr (std::is_floating_point_v<T>) {
      // alpha * op(A) op(B) + beta * C with Eigen (Note [Matrix products]
      // in Conv.cpp).
      using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      Eigen::Map<const Mat> A(va.data(), a->dims[0], a->dims[1]), B(vb.data(), b->dims[0],
                                                                    b->dims[1]);
      Eigen::Map<Mat> O(vo.data(), M, N);
      if (!ta && !tb) O.noalias() = A * B;
      else if (ta && !tb) O.noalias() = A.transpose() * B;
      else if (!ta && tb) O.noalias() = A * B.transpose();
      else O.noalias() = A.transpose() * B.transpose();
      for (int64_t i = 0; i < M * N; ++i) {
        T r = (T)alpha * vo[i];
        if (cc) r += (T)beta * cc->template vec<T>()[co[i]];
        vo[i] = r;
      }
      return absl::OkStatus();
    }
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

/// The `seed` attribute as an integer (an int, or a float the evaluator
/// set); 0 when absent.
uint64_t seedOf(const KernelCall &c) {
  const Attribute *a = c.attr("seed");
  if (!a) return 0;
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

} // namespace
} // namespace kernels

//===----------------------------------------------------------------------===//
// Version adapters of the steps at opset 10 and later (Note [Version
// adapters], OpRegistry.h)
//===----------------------------------------------------------------------===//

namespace {
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
constexpr char kSoftmax[] = "Softmax", kLogSoftmax[] = "LogSoftmax", kHardmax[] = "Hardmax";

// RoiAlign-16 added coordinate_transformation_mode, default half_pixel; -10
// behaves as output_half_pixel, which up writes out and down requires.
absl::Status roiAlignUp16(Node &n, AdapterContext &c) {
  if (!c.checkOnly) adapters::setStringAttr(n, "coordinate_transformation_mode", "output_half_pixel");
  return absl::OkStatus();
}
absl::Status roiAlignDown16(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "coordinate_transformation_mode", "half_pixel");
  if (!m.ok()) return m.status();
  if (*m != "output_half_pixel")
    return absl::FailedPreconditionError(absl::StrCat(
        "coordinate_transformation_mode is ", *m,
        "; RoiAlign-10 behaves as output_half_pixel only"));
  if (!c.checkOnly) n.removeAttr("coordinate_transformation_mode");
  return absl::OkStatus();
}

// GridSample-20 renamed the modes bilinear/bicubic to linear/cubic and took
// any rank; -16 takes 4-D only.
absl::Status gridSampleUp20(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "mode", "bilinear");
  if (!m.ok()) return m.status();
  if (c.checkOnly || !n.getAttr("mode")) return absl::OkStatus();
  if (*m == "bilinear") adapters::setStringAttr(n, "mode", "linear");
  if (*m == "bicubic") adapters::setStringAttr(n, "mode", "cubic");
  return absl::OkStatus();
}
absl::Status gridSampleDown20(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "mode", "linear");
  if (!m.ok()) return m.status();
  int64_t r = adapters::operandRank(n, 0);
  if (r != 4)
    return absl::FailedPreconditionError(
        r < 0 ? "GridSample-16 takes 4-D input only, and the input's rank is unknown (infer "
                "shapes first)"
              : absl::StrCat("the input is ", r, "-D; GridSample-16 takes 4-D input only"));
  if (c.checkOnly || !n.getAttr("mode")) return absl::OkStatus();
  if (*m == "linear") adapters::setStringAttr(n, "mode", "bilinear");
  if (*m == "cubic") adapters::setStringAttr(n, "mode", "bicubic");
  return absl::OkStatus();
}

absl::Status attentionDown24(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "Attention", {});
}
absl::Status attentionDown25(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "Attention", {{"left_window_size", AttrKind::Int, -1},
                                                     {"right_window_size", AttrKind::Int, -1}});
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
} // namespace

void registerNNAdapters(OpRegistrar &r) {
  using adapters::noChange;
  r["Gemm"].since(11).upgrade(noChange).downgrade(gemmDown11);
  r["Dropout"].since(10).upgrade(dropoutMask10).downgrade(dropoutMask10);
  r["Dropout"].since(12).upgrade(dropoutUp12).downgrade(dropoutDown12);
  r["Softmax"].since(13).upgrade(softmaxUp13<kSoftmax>).downgrade(softmaxDown13<kSoftmax>);
  r["LogSoftmax"].since(13).upgrade(softmaxUp13<kLogSoftmax>).downgrade(
      softmaxDown13<kLogSoftmax>);
  r["Hardmax"].since(13).upgrade(softmaxUp13<kHardmax>).downgrade(softmaxDown13<kHardmax>);
  r["RoiAlign"].since(16).upgrade(roiAlignUp16).downgrade(roiAlignDown16);
  r["GridSample"].since(20).upgrade(gridSampleUp20).downgrade(gridSampleDown20);
  r["Attention"].since(24).upgrade(noChange).downgrade(attentionDown24);
  r["Attention"].since(25).upgrade(noChange).downgrade(attentionDown25);
  // Type-list changes only; the pass checks the types going down.
  r["QLinearMatMul"].since(21).upgrade(noChange).downgrade(qlinearMatMulDown21);
}

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

namespace {
// Version adapters up to opset 9 (Note [Version adapters], OpRegistry.h).

absl::Status refuse(std::string why) { return absl::FailedPreconditionError(std::move(why)); }

/// True if result #i exists and is read (a use, or a graph output).
bool resultRead(const Node &n, unsigned i) {
  Value *v = i < n.numResults() ? n.result(i) : nullptr;
  return v && (!v->useEmpty() || v->isGraphOutput());
}

/// Empties the (unread) result slots from #first on.
void dropResultsFrom(Node &n, unsigned first) {
  for (unsigned i = first; i < n.numResults(); ++i)
    if (n.result(i)) (void)n.eraseResult(i);
  n.trimTrailingEmptyResults();
}

// Dropout-7 dropped is_test: the runtime's mode decides (an inference runtime
// copies the input). Down, is_test=1 keeps that meaning for opset-6 runtimes,
// which do not fill the mask then.
absl::Status dropoutUp7(Node &n, AdapterContext &c) {
  if (auto t = adapters::intAttrOr(n, "is_test", 0); !t.ok()) return t.status();
  if (!c.checkOnly) n.removeAttr("is_test");
  return absl::OkStatus();
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

} // namespace

void registerNNOps(OpRegistrar &r) {
  using namespace infer;
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"}) r[op] = sameAsInput;
  r["Softmax"] = kernels::kSoftmax; r["LogSoftmax"] = kernels::kLogSoftmax;
  r["Hardmax"] = kernels::kHardmax;
  // Note [Op facts]: along `axis` (before 13, the rows of the input coerced
  // to 2-D at `axis`: at the last axis, the same).
  for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"})
    r[op].shapePreserving().axis(AxisFact::AxisAttribute);
  r["Dropout"] = [](InferCtx &c) {
    sameAsInput(c);
    if (c.hasOutput(1)) c.setTensor(1, c.opset >= 10 ? kBool : c.inElem(0), c.inShape(0));
  };
  r["Dropout"] = kernels::kDropout;
  // [..., K] x [K, M]: row by row (Note [Op facts]).
  r["MatMul"].infer(matmulRule).kernel(kernels::kMatMul).axis(AxisFact::LastAxis);
  r["MatMulInteger"] = matmulRule;
  r["QLinearMatMul"] = matmulRule;
  r["Gemm"].infer(gemmRule).kernel(kernels::kGemm);
  r["SwiGLU"] = [](InferCtx &c) {
    // A and B have identical shapes: take the more precise dim of each pair.
    auto a = c.inShape(0), b = c.inShape(1);
    if (a && b && a->size() == b->size())
      for (size_t i = 0; i < a->size(); ++i)
        if (!(*a)[i] || (!(*a)[i]->isConstant() && (*b)[i] && (*b)[i]->isConstant()))
          (*a)[i] = (*b)[i];
    c.setTensor(0, c.inElem(0), a ? a : b);
  };
  r["CausalConvWithState"] = [](InferCtx &c) {
    auto x = c.inShape(0), w = c.inShape(1);
    c.setTensor(0, c.inElem(0), x);
    // The carried state holds the last k-1 positions: [B, C, k-1].
    if (x && x->size() == 3)
      c.setTensor(1, c.inElem(0),
                  Dims{(*x)[0], (*x)[1],
                       w && w->size() == 3 ? dimSub(c.ctx, (*w)[2], c.c(1)) : nullptr});
  };
  r["LinearAttention"] = linearAttentionRule;
  // Version adapters up to opset 9 (Note [Version adapters]).
  using adapters::dropConsumedInputs;
  using adapters::noChange;
  r["Dropout"].since(6).upgrade(dropConsumedInputs).downgrade(noChange);
  r["Dropout"].since(7).upgrade(dropoutUp7).downgrade(dropoutDown7);
  r["Gemm"].since(7).upgrade(adapters::gemmBroadcastUp).downgrade(adapters::gemmBroadcastDown);
  registerNNAdapters(r);
}

} // namespace onnxir
