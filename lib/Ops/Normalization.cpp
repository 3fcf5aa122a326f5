//===- Normalization.cpp - BatchNormalization, LayerNormalization, ... ----===//
//
// Normalization: BatchNormalization (the consumed_inputs, is_test and spatial
// forms before 9, the training outputs of -9 and -14), InstanceNormalization,
// LayerNormalization, GroupNormalization (scale and bias per group at -18,
// per channel from -21), RMSNormalization, LpNormalization,
// MeanVarianceNormalization, LRN. One section per op, in this order: its
// type and shape rule, its kernel, its version adapters, its expansion
// builder (LayerNormalization-17, RMSNormalization-23: Note [Expansion
// builders], OpRegistry.h) and its registration (registerNormalizationOps at
// the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "ExpandSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>

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

using adapters::dropResultsFrom;
using adapters::refuse;
using adapters::resultRead;

/// True if a result slot from #first on is present (a non-empty slot).
bool hasResultsFrom(const Node &n, unsigned first) {
  for (unsigned i = first; i < n.numResults(); ++i)
    if (n.result(i)) return true;
  return false;
}

/// The 1-D per-channel operands [first, last] of a normalization have the
/// channel count (dim 1) of X.
void checkChannelOperands(InferCtx &c, unsigned first, unsigned last, const char *const *names) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return;
  auto ch = staticDim((*x)[1]);
  if (!ch) return;
  for (unsigned i = first; i <= last; ++i) {
    auto s = c.hasInput(i) ? c.inShape(i) : std::nullopt;
    if (!s || s->size() != 1) continue;
    if (auto v = staticDim((*s)[0]); v && *v != *ch) {
      c.disagree("input X " + typeStr(c, 0) + " has " +
                 std::to_string(*ch) + " channels (dim 1), but " + names[i - first] + " " +
                 typeStr(c, i) + " has " + std::to_string(*v));
      return;
    }
  }
}

/// Calls fn(T{}) with T float or double: the compute kinds of the float
/// element types these ops take.
template <typename Fn> Status visitFloat(CK k, llvm::StringRef what, Fn &&fn) {
  if (k == CK::F32) return fn(float{});
  if (k == CK::F64) return fn(double{});
  return invalid(absl::StrCat(what.str(), " is not of a float type"));
}

std::string dimsStr(llvm::ArrayRef<int64_t> d) {
  return absl::StrCat("[", absl::StrJoin(d, ", "), "]");
}

/// Operand #i, named `name`, of a float type, in the compute kind of `like`
/// (its element type stays `like` when the kinds differ).
StatusOr<Arr> floatOperand(const KernelCall &c, unsigned i, llvm::StringRef name,
                           DataType like) {
  const Tensor *t = c.input(i);
  if (!t) return invalid(absl::StrCat("operand #", i, " (", name.str(), ") is missing"));
  auto a = fromTensor(*t);
  if (!a.ok()) return a.status();
  if (a->kind() != CK::F32 && a->kind() != CK::F64)
    return invalid(absl::StrCat("operand #", i, " (", name.str(), ") is ",
                                dataTypeName(a->dt).str(), ", not a float type"));
  if (a->kind() != computeKind(like)) return convertArr(*a, like);
  return a;
}

/// Fails unless `a` (operand `name`) has the dims `want` (`what` says why).
Status expectDims(const Arr &a, llvm::StringRef name, llvm::ArrayRef<int64_t> want,
                  llvm::StringRef what) {
  if (llvm::ArrayRef<int64_t>(a.dims) == want) return absl::OkStatus();
  return invalid(absl::StrCat(name.str(), " has shape ", dimsStr(a.dims), "; expected ",
                              dimsStr(want), " (", what.str(), ")"));
}

/// The element type stash_type names, if a float type.
StatusOr<DataType> stashType(const KernelCall &c) {
  int64_t st = c.getInt("stash_type", 1);
  DataType dt = static_cast<DataType>(st);
  CK k = st > 0 && st < 64 ? computeKind(dt) : CK::None;
  if (k != CK::F32 && k != CK::F64)
    return invalid(absl::StrCat("attribute 'stash_type' is ", st, ", not a float type"));
  return dt;
}

/// The input (operand #0), when a result of its size is within the output
/// size budget: every op of the file gives results of X's size.
StatusOr<Arr> boundedInput(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (Status sz = checkOutputSize(c, x->dt, x->dims); !sz.ok()) return sz;
  return x;
}

/// X (operand #0), of a float type and within the output size budget.
StatusOr<Arr> floatX(const KernelCall &c) {
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return invalid(absl::StrCat("X is ", dataTypeName(x->dt).str(), ", not a float type"));
  return x;
}

/// `a` in the compute kind of `dt`: converted when the kinds differ (its
/// element type stays `a`'s otherwise).
StatusOr<Arr> inKindOf(Arr a, DataType dt) {
  if (a.kind() == computeKind(dt)) return a;
  return convertArr(a, dt);
}

/// `y`, computed in a stash type, as element type `dt`: relabelled when the
/// compute kinds agree, converted otherwise.
StatusOr<Arr> asElemType(Arr y, DataType dt) {
  if (computeKind(dt) == y.kind()) {
    y.dt = dt;
    return y;
  }
  return convertArr(y, dt);
}

// Note [Normalized-shape operands]
//   LayerNormalization's Scale and B, and RMSNormalization's scale, broadcast
//   (one way) to X. X is seen as rows x cols, cols the product of the dims from
//   `axis` on. When the operand does not vary along the dims before `axis`
//   (the usual [D_axis, ..., D_last]), one row of offsets serves every row;
//   otherwise the offsets cover all of X.
struct RowOffsets {
  std::vector<int64_t> off;
  bool perRow = true;
  const int64_t *row(int64_t r, int64_t cols) const {
    return perRow ? off.data() : off.data() + r * cols;
  }
};

StatusOr<RowOffsets> rowOffsets(const Arr &p, llvm::StringRef name,
                                llvm::ArrayRef<int64_t> xdims, int64_t axis) {
  auto b = broadcastShapes(p.dims, xdims);
  if (!b || *b != std::vector<int64_t>(xdims.begin(), xdims.end()))
    return invalid(absl::StrCat(name.str(), " of shape ", dimsStr(p.dims),
                                " does not broadcast to X's shape ", dimsStr(xdims)));
  int64_t tail = (int64_t)xdims.size() - axis, lead = p.rank() - tail;
  RowOffsets r;
  bool rowInvariant = true;
  for (int64_t k = 0; k < lead; ++k) rowInvariant &= p.dims[k] == 1;
  if (rowInvariant) {
    std::vector<int64_t> pd(p.dims.begin() + std::max<int64_t>(lead, 0), p.dims.end());
    r.off = broadcastOffsets(pd, xdims.drop_front(axis));
  } else {
    r.off = broadcastOffsets(p.dims, xdims);
    r.perRow = false;
  }
  return r;
}

/// What LayerNormalization and RMSNormalization start from: X (float) in
/// stash_type, seen as rows x cols, cols the product of the dims from `axis`
/// on (Note [Normalized-shape operands]).
struct StashedRows {
  Arr x;
  DataType stash;
  int64_t axis, rows, cols;
};

StatusOr<StashedRows> stashedRows(const KernelCall &c) {
  auto x0 = floatX(c);
  if (!x0.ok()) return x0.status();
  int64_t r = x0->rank();
  auto axis = normAxis(c.getInt("axis", -1), r);
  if (!axis)
    return invalid(absl::StrCat("attribute 'axis' is ", c.getInt("axis", -1),
                                ", out of range for X of rank ", r));
  auto sdt = stashType(c);
  if (!sdt.ok()) return sdt.status();
  auto x = inKindOf(std::move(*x0), *sdt);
  if (!x.ok()) return x.status();
  int64_t rows = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).take_front(*axis));
  int64_t cols = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(*axis));
  return StashedRows{std::move(*x), *sdt, *axis, rows, cols};
}

/// What the normalizations (LayerNormalization-17, RMSNormalization-23)
/// share: their attributes, T (the element type of X, known from X or from
/// values of the same constraint), U (stash_type) and the axes [axis, rank)
/// as the opset can say them.
struct NormalizationPlan {
  std::optional<DataType> t;
  DataType u = DataType::Float;
  float eps = 1e-5f;
  std::vector<int64_t> axes;

  bool sameType() const { return t && *t == u; }
  /// X in the stash type.
  Value *toStash(Emitter &e, Value *x) const { return sameType() ? x : e.cast(x, u); }
  /// `v` (of type U) back in T, X's type.
  Value *fromStash(Emitter &e, Value *v, Value *x) const {
    return sameType() ? v : t ? e.cast(v, *t) : e.op("CastLike", {v, x});
  }
};

/// The checks shared by the normalizations, in this order: no attribute
/// refers to a function attribute; X and the scale operand (named `scale`
/// in the refusal) are given; stash_type is a float type; T is known (from X
/// or `sameType`) or CastLike exists; the axes can be said; `ops` exist.
absl::Status planNormalization(Node &n, const ExpandContext &c, const char *scale,
                               std::initializer_list<const Value *> sameType,
                               std::initializer_list<const char *> ops, NormalizationPlan &p) {
  if (absl::Status s = noReferences(n); !s.ok()) return s;
  if (n.numOperands() < 2 || !n.operand(0) || !n.operand(1))
    return refuse(absl::StrCat("X and ", scale, " are required"));
  NodeContext nc(n);
  int64_t axis = nc.getInt("axis", -1), stash = nc.getInt("stash_type", 1);
  p.eps = nc.getFloat("epsilon", 1e-5f);
  if (!isFloatType((DataType)stash))
    return refuse(absl::StrCat("stash_type ", stash, " is not a floating-point type"));
  p.u = (DataType)stash;
  p.t = elemOf(n.operand(0));
  if (!p.t) p.t = firstElemType(sameType);
  if (!p.t && c.opset < 15)
    return refuse(absl::StrCat("the element type of X ('", n.operand(0)->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  int64_t rank = rankOf(n.operand(0));
  if (axis < 0 && c.opset >= 11) {
    for (int64_t a = axis; a < 0; ++a) p.axes.push_back(a);
  } else {
    if (rank < 0)
      return refuse(absl::StrCat("axis ", axis, " needs the rank of X ('",
                                 n.operand(0)->name().str(), "'), which is unknown",
                                 axis < 0 ? " (negative axes need opset 11)" : ""));
    int64_t first = axis < 0 ? axis + rank : axis;
    if (first < 0 || first >= rank)
      return refuse(absl::StrCat("axis ", axis, " is outside the rank ", rank, " of X"));
    for (int64_t a = first; a < rank; ++a) p.axes.push_back(a);
  }
  return requireOps(c, ops);
}

//===--- BatchNormalization ---===//

void batchNormRule(InferCtx &c) {
  static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
  checkChannelOperands(c, 1, 4, names);
  sameAsInput(c);
  // Running statistics (training mode) have the shape of the scale.
  for (unsigned i = 1; i < c.numOutputs() && i < 5; ++i)
    if (c.opset >= 14 && i <= 2) c.setTensor(i, c.inElem(3), c.inShape(3));
}

/// BatchNormalization's arithmetic on [N, C, inner] data: y = (x - mean) *
/// scale / sqrt(var + eps) + bias per channel, shared by the in-place path
/// and the general one (so both give the same bits).
template <typename T>
void normalizeChannels(const T *xv, T *yv, int64_t N, int64_t C, int64_t inner, const T *sc,
                       const T *bb, const T *mean, const T *var, T eps) {
  for (int64_t ch = 0; ch < C; ++ch) {
    T a = sc[ch] / std::sqrt(var[ch] + eps), m = mean[ch], b = bb[ch];
    for (int64_t n = 0; n < N; ++n) {
      const T *px = xv + (n * C + ch) * inner;
      T *py = yv + (n * C + ch) * inner;
      for (int64_t k = 0; k < inner; ++k) py[k] = (px[k] - m) * a + b;
    }
  }
}

// Note [BatchNormalization modes]
//   Test mode normalizes with the running mean and variance (operands #3, #4),
//   training mode with the batch's own (over every axis but 1, the variance
//   without Bessel's correction) and also gives the updated running statistics
//   (running * momentum + batch * (1 - momentum)). The mode: from 14 the
//   training_mode attribute; 7 to 13, training when the node has more than Y
//   (the adapters' rule, batchNormUp7); before 7, is_test=0. Before 14 the
//   training results are mean, var (running), saved_mean, saved_var (the
//   batch's, as ONNX's reference). spatial=0 (before 9): statistics per
//   activation, the operands of X's dims after N.
/// Test mode over channels with X float or double: X read in place and Y
/// written into its bytes (Note [Inputs read in place]), the arithmetic of
/// the general path below. nullopt for anything else (training, spatial=0,
/// other types, a bad operand: the general path runs or reports it).
template <typename T>
std::optional<StatusOr<std::vector<Tensor>>> batchNormInPlace(const KernelCall &c, const Tensor &xt,
                                                              bool modern) {
  const std::vector<int64_t> &dims = xt.dims();
  if (dims.size() < 2) return std::nullopt;
  if (!checkOutputSize(c, xt.dataType(), dims).ok()) return std::nullopt;
  auto x = viewTensor<T>(xt);
  if (!x.ok()) return std::nullopt;
  int64_t N = dims[0], C = dims[1];
  int64_t inner = numElementsOf(llvm::ArrayRef<int64_t>(dims).drop_front(2));
  const char *names[] = {"scale", "B", modern ? "input_mean" : "mean",
                         modern ? "input_var" : "var"};
  std::vector<Arr> p;
  for (unsigned i = 1; i <= 4; ++i) {
    auto a = floatOperand(c, i, names[i - 1], xt.dataType());
    if (!a.ok() || !expectDims(*a, names[i - 1], {C}, "X's channels").ok()) return std::nullopt;
    p.push_back(std::move(*a));
  }
  float eps = c.getFloat("epsilon", 1e-5f);
  const auto &sc = p[0].template vec<T>(), &bb = p[1].template vec<T>();
  const auto &rm = p[2].template vec<T>(), &rv = p[3].template vec<T>();
  OutBuf<T> y(xt.dataType(), dims);
  const T *xv = x->data();
  T *yv = y.data();
  normalizeChannels(xv, yv, N, C, inner, sc.data(), bb.data(), rm.data(), rv.data(), T(eps));
  std::vector<Tensor> r;
  r.push_back(y.take());
  return StatusOr<std::vector<Tensor>>(std::move(r));
}

StatusOr<std::vector<Tensor>> kBatchNormalization(const KernelCall &c) {
  {
    bool modern = c.opset <= 0 || c.opset >= 14;
    bool perActivation = !modern && c.opset < 9 && c.getInt("spatial", 1) == 0;
    bool training = modern ? c.getInt("training_mode", 0) != 0
                    : c.opset < 7 ? c.getInt("is_test", 0) == 0
                                  : c.numOutputs > 1;
    const Tensor *xt = c.input(0);
    if (xt && !training && !perActivation) {
      std::optional<StatusOr<std::vector<Tensor>>> r;
      if (xt->dataType() == DataType::Float) r = batchNormInPlace<float>(c, *xt, modern);
      else if (xt->dataType() == DataType::Double) r = batchNormInPlace<double>(c, *xt, modern);
      if (r) return std::move(*r);
    }
  }
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  if (x->rank() < 2)
    return invalid(absl::StrCat("X has shape ", dimsStr(x->dims), "; expected [N, C, ...]"));
  bool modern = c.opset <= 0 || c.opset >= 14;
  bool perActivation = !modern && c.opset < 9 && c.getInt("spatial", 1) == 0;
  bool training = modern ? c.getInt("training_mode", 0) != 0
                  : c.opset < 7 ? c.getInt("is_test", 0) == 0
                                : c.numOutputs > 1;
  float eps = c.getFloat("epsilon", 1e-5f), momentum = c.getFloat("momentum", 0.9f);
  int64_t N = x->dims[0], C = x->dims[1], inner = 1;
  std::vector<int64_t> pdims = {C};
  if (perActivation) {
    pdims.assign(x->dims.begin() + 1, x->dims.end());
    C = numElementsOf(pdims);
  } else {
    inner = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(2));
  }
  const char *names[] = {"scale", "B", modern ? "input_mean" : "mean",
                         modern ? "input_var" : "var"};
  std::vector<Arr> p;
  for (unsigned i = 1; i <= 4; ++i) {
    auto a = floatOperand(c, i, names[i - 1], x->dt);
    if (!a.ok()) return a.status();
    if (Status s = expectDims(*a, names[i - 1], pdims,
                              perActivation ? "X's dims after N, spatial=0" : "X's channels");
        !s.ok())
      return s;
    p.push_back(std::move(*a));
  }
  DataType statDt = c.input(3)->dataType();
  unsigned nOut = training ? std::min(c.numOutputs, modern ? 3u : 5u) : 1;
  Arr y = Arr::make(x->dt, x->dims);
  std::vector<Arr> stats;
  for (unsigned i = 1; i < nOut; ++i) stats.push_back(Arr::make(statDt, pdims));
  Status st = visitFloat(x->kind(), "X", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    const auto &sc = p[0].template vec<T>(), &bb = p[1].template vec<T>();
    const auto &rm = p[2].template vec<T>(), &rv = p[3].template vec<T>();
    std::vector<T> mean(rm), var(rv);
    if (training) {
      T count = T(N) * T(inner);
      for (int64_t ch = 0; ch < C; ++ch) {
        T sum = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T *px = xv + (n * C + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) sum += px[k];
        }
        T m = sum / count, sq = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T *px = xv + (n * C + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) sq += (px[k] - m) * (px[k] - m);
        }
        mean[ch] = m;
        var[ch] = sq / count;
      }
    }
    normalizeChannels(xv, yv, N, C, inner, sc.data(), bb.data(), mean.data(), var.data(), T(eps));
    // The statistics results, in their own compute kind.
    const std::vector<T> *from[] = {nullptr, nullptr, &mean, &var};
    for (unsigned i = 1; i < nOut; ++i) {
      Arr &o = stats[i - 1];
      Status s2 = visitFloat(o.kind(), "the statistics type", [&](auto otag) -> Status {
        using O = decltype(otag);
        auto &ov = o.template vec<O>();
        for (int64_t ch = 0; ch < C; ++ch) {
          T v = i <= 2 ? (i == 1 ? rm[ch] : rv[ch]) * T(momentum) +
                             (i == 1 ? mean[ch] : var[ch]) * (T(1) - T(momentum))
                       : (*from[i - 1])[ch];
          ov[ch] = (O)v;
        }
        return absl::OkStatus();
      });
      if (!s2.ok()) return s2;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  std::vector<Tensor> r;
  r.push_back(toTensor(y));
  for (const Arr &a : stats) r.push_back(toTensor(a));
  return r;
}

// BatchNormalization-1 requires consumed_inputs: in training mode the running
// mean and variance (operands #3, #4) are updated in place.
absl::Status batchNormDown6(Node &n, AdapterContext &c) {
  if (c.checkOnly) return absl::OkStatus();
  bool training = hasResultsFrom(n, 1);
  n.newAttr("consumed_inputs").setInts({0, 0, 0, training ? 1 : 0, training ? 1 : 0});
  return absl::OkStatus();
}

// BatchNormalization-7 dropped is_test: the mode follows the results (Y alone:
// test mode, running statistics; more: training mode, batch statistics).
absl::Status batchNormUp7(Node &n, AdapterContext &c) {
  auto test = adapters::intAttrOr(n, "is_test", 0);
  if (!test.ok()) return test.status();
  if (*test) {
    for (unsigned i = 1; i < n.numResults(); ++i)
      if (resultRead(n, i))
        return refuse(absl::StrCat("is_test=1 leaves result #", i, " ('",
                                   n.result(i)->name().str(),
                                   "') unfilled; at opset 7 it would select training mode"));
  } else if (!hasResultsFrom(n, 1)) {
    return refuse("is_test=0 (the default) normalises with the batch's own statistics (training "
                  "mode); at opset 7 a node with result Y alone uses the running mean and "
                  "variance (test mode): set is_test=1 if the model is for inference");
  }
  if (c.checkOnly) return absl::OkStatus();
  if (*test) dropResultsFrom(n, 1);
  n.removeAttr("is_test");
  return absl::OkStatus();
}

absl::Status batchNormDown7(Node &n, AdapterContext &c) {
  if (!c.checkOnly && !hasResultsFrom(n, 1)) n.newAttr("is_test").setInt(1);
  return absl::OkStatus();
}

// BatchNormalization-9 dropped spatial: statistics are per channel (spatial=1).
absl::Status batchNormUp9(Node &n, AdapterContext &c) {
  auto spatial = adapters::intAttrOr(n, "spatial", 1);
  if (!spatial.ok()) return spatial.status();
  const Type *t = n.numOperands() && n.operand(0) ? n.operand(0)->type() : nullptr;
  bool rank2 = t && t->hasShape() && t->rank() == 2; // per activation = per channel
  if (!*spatial && !rank2)
    return refuse("spatial=0 (statistics per activation: scale, B, mean and var of shape C x D1 "
                  "x ...) has no form at opset 9, which normalises per channel (flattening the "
                  "input to N x C*D1*... first is not done); an input of rank 2 would do");
  if (!c.checkOnly) n.removeAttr("spatial");
  return absl::OkStatus();
}

// BatchNormalization-14 replaced the five training outputs of -9 (mean, var,
// saved_mean, saved_var, chosen by the runtime) by training_mode and two
// outputs; the inference form (one result) is the same.
absl::Status batchNormUp14(Node &n, AdapterContext &) {
  if (hasResultsFrom(n, 1))
    return absl::FailedPreconditionError(
        "the training outputs (mean, var, saved_mean, saved_var) of BatchNormalization-9 have "
        "no BatchNormalization-14 form");
  return absl::OkStatus();
}
absl::Status batchNormDown14(Node &n, AdapterContext &c) {
  if (hasResultsFrom(n, 1))
    return absl::FailedPreconditionError(
        "the outputs running_mean/running_var (training_mode) have no BatchNormalization-9 form");
  return adapters::olderFormOnly(n, c, "BatchNormalization", {{"training_mode", AttrKind::Int, 0}});
}
// BatchNormalization-15 lets scale/B and mean/var have their own types;
// -14 has one type for all five.
absl::Status batchNormDown15(Node &n, AdapterContext &) {
  DataType x = adapters::operandElemType(n, 0);
  for (unsigned i = 1; i < n.numOperands() && i < 5; ++i) {
    DataType t = adapters::operandElemType(n, i);
    if (x == DataType::Undefined || t == DataType::Undefined)
      return absl::FailedPreconditionError(
          "BatchNormalization-14 needs one element type for all operands, and some are unknown "
          "(infer shapes first)");
    if (t != x)
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", i, " ('", n.operand(i)->name().str(), "') is ", dataTypeName(t).str(),
          " and X is ", dataTypeName(x).str(), "; BatchNormalization-14 needs one type"));
  }
  return absl::OkStatus();
}

/// Note [Validity checks]: from version 9 on (no `spatial` attribute), scale,
/// B, input_mean and input_var are [C], rank 1 (before, spatial = 0 gave
/// them X's dims after N).
std::string batchNormValidity(const NodeContext &c) {
  static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
  for (unsigned i = 1; i < 5; ++i)
    if (auto d = declaredDims(c.node, i); d && d->size() != 1)
      return absl::StrCat("input #", i, " \"", names[i - 1], "\" has rank ", d->size(),
                          "; it must be [C], rank 1");
  return "";
}

void registerBatchNormalization(OpRegistrar &r) {
  using adapters::dropConsumedInputs;
  using adapters::noChange;
  r["BatchNormalization"].infer(batchNormRule).kernel(kBatchNormalization);
  r["BatchNormalization"].since(9).validate(batchNormValidity);
  // Version adapters (Note [Version adapters]).
  r["BatchNormalization"].since(6).upgrade(dropConsumedInputs).downgrade(batchNormDown6);
  r["BatchNormalization"].since(7).upgrade(batchNormUp7).downgrade(batchNormDown7);
  r["BatchNormalization"].since(9).upgrade(batchNormUp9).downgrade(noChange);
  r["BatchNormalization"].since(14).upgrade(batchNormUp14).downgrade(batchNormDown14);
  r["BatchNormalization"].since(15).upgrade(noChange).downgrade(batchNormDown15);
}

//===--- InstanceNormalization ---===//

void instanceNormRule(InferCtx &c) {
  static const char *const names[] = {"scale", "B"};
  checkChannelOperands(c, 1, 2, names);
  sameAsInput(c);
}

/// Per sample and channel, over the spatial dims.
StatusOr<std::vector<Tensor>> kInstanceNormalization(const KernelCall &c) {
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  if (x->rank() < 2)
    return invalid(absl::StrCat("input has shape ", dimsStr(x->dims), "; expected [N, C, ...]"));
  int64_t N = x->dims[0], C = x->dims[1];
  int64_t inner = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(2));
  auto sc = floatOperand(c, 1, "scale", x->dt), bb = floatOperand(c, 2, "B", x->dt);
  if (!sc.ok()) return sc.status();
  if (!bb.ok()) return bb.status();
  for (const auto &[a, name] : {std::pair{&*sc, "scale"}, std::pair{&*bb, "B"}})
    if (Status s = expectDims(*a, name, {C}, "the input's channels"); !s.ok()) return s;
  float eps = c.getFloat("epsilon", 1e-5f);
  Arr y = Arr::make(x->dt, x->dims);
  Status st = visitFloat(x->kind(), "input", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    const auto &s = sc->template vec<T>(), &b = bb->template vec<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch) {
        const T *px = xv + (n * C + ch) * inner;
        T *py = yv + (n * C + ch) * inner;
        T sum = 0, sq = 0;
        for (int64_t k = 0; k < inner; ++k) sum += px[k];
        T m = sum / T(inner);
        for (int64_t k = 0; k < inner; ++k) sq += (px[k] - m) * (px[k] - m);
        T a = s[ch] / std::sqrt(sq / T(inner) + T(eps));
        for (int64_t k = 0; k < inner; ++k) py[k] = (px[k] - m) * a + b[ch];
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(y);
}

void registerInstanceNormalization(OpRegistrar &r) {
  r["InstanceNormalization"].infer(instanceNormRule).kernel(kInstanceNormalization);
  r["InstanceNormalization"].since(6).upgrade(adapters::dropConsumedInputs).downgrade(adapters::noChange);
}

//===--- LayerNormalization ---===//

void layerNormRule(InferCtx &c) {
  sameAsInput(c);
  auto s = c.inShape(0);
  if (!s) return;
  auto ax = normAxis(c.getInt("axis", -1), s->size());
  if (!ax) return;
  for (size_t i = *ax; i < s->size(); ++i) (*s)[i] = c.c(1);
  int32_t st = (int32_t)c.getInt("stash_type", 1);
  for (unsigned i = 1; i < 3; ++i) c.setTensor(i, st, s);
}

/// Computed in stash_type (X, Scale and B cast to it, as the function body
/// does); Y back in X's type, Mean and InvStdDev in stash_type, of X's dims
/// with those from `axis` on made 1.
StatusOr<std::vector<Tensor>> kLayerNormalization(const KernelCall &c) {
  auto sr = stashedRows(c);
  if (!sr.ok()) return sr.status();
  const Arr *x = &sr->x;
  DataType sdt = sr->stash;
  int64_t axis = sr->axis, rows = sr->rows, cols = sr->cols;
  DataType xdt = c.input(0)->dataType();
  auto sc = floatOperand(c, 1, "Scale", sdt);
  if (!sc.ok()) return sc.status();
  std::optional<Arr> bb;
  if (c.input(2)) {
    auto b = floatOperand(c, 2, "B", sdt);
    if (!b.ok()) return b.status();
    bb = std::move(*b);
  }
  auto so = rowOffsets(*sc, "Scale", x->dims, axis);
  if (!so.ok()) return so.status();
  RowOffsets bo;
  if (bb) {
    auto o = rowOffsets(*bb, "B", x->dims, axis);
    if (!o.ok()) return o.status();
    bo = std::move(*o);
  }
  std::vector<int64_t> sdims(x->dims.begin(), x->dims.begin() + axis);
  sdims.resize(x->rank(), 1);
  Arr y = Arr::make(sdt, x->dims), mean = Arr::make(sdt, sdims), inv = Arr::make(sdt, sdims);
  Status st = visitFloat(x->kind(), "stash_type", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    const T *sv = sc->template vec<T>().data();
    const T *bv = bb ? bb->template vec<T>().data() : nullptr;
    T eps = T(c.getFloat("epsilon", 1e-5f));
    for (int64_t i = 0; i < rows; ++i) {
      const T *px = xv + i * cols;
      T *py = yv + i * cols;
      T sum = 0, sq = 0;
      for (int64_t j = 0; j < cols; ++j) sum += px[j];
      T m = sum / T(cols);
      for (int64_t j = 0; j < cols; ++j) sq += (px[j] - m) * (px[j] - m);
      T is = T(1) / std::sqrt(sq / T(cols) + eps);
      mean.template vec<T>()[i] = m;
      inv.template vec<T>()[i] = is;
      const int64_t *os = so->row(i, cols);
      for (int64_t j = 0; j < cols; ++j) py[j] = (px[j] - m) * is * sv[os[j]];
      if (bv) {
        const int64_t *ob = bo.row(i, cols);
        for (int64_t j = 0; j < cols; ++j) py[j] += bv[ob[j]];
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  auto yc = asElemType(std::move(y), xdt);
  if (!yc.ok()) return yc.status();
  std::vector<Tensor> res;
  res.push_back(toTensor(*yc));
  if (c.numOutputs > 1) res.push_back(toTensor(mean));
  if (c.numOutputs > 2) res.push_back(toTensor(inv));
  return res;
}

// LayerNormalization-17's function body: U = stash_type; XU = Cast<U>(X);
// axes = [axis, rank); Mean = ReduceMean(XU); D = XU - Mean;
// Var = ReduceMean(D * D); InvStdDev = 1 / Sqrt(Var + epsilon);
// Y = Cast<T>(D * InvStdDev) * Scale (+ B when given); the optional results
// Mean and InvStdDev are of type U.
absl::Status expandLayerNormalization(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  NormalizationPlan p;
  // LayerNormalization-17: X, Scale, B and Y share T.
  if (absl::Status s = planNormalization(
          n, c, "Scale", {operandOr(n, 1), operandOr(n, 2), resultOr(n, 0)},
          {"ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Reciprocal", "Cast"}, p);
      !s.ok())
    return s;
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *xu = p.toStash(e, x);
  Value *mean = e.reduceMean(xu, p.axes);
  Value *d = e.op("Sub", {xu, mean});
  Value *var = e.reduceMean(e.op("Mul", {d, d}), p.axes);
  Value *varEps = e.op("Add", {var, e.scalar(p.eps, p.u, nullptr)});
  Value *invStdDev = e.op("Reciprocal", {e.op("Sqrt", {varEps})});
  Value *normalized = e.op("Mul", {d, invStdDev});
  Value *y = e.op("Mul", {p.fromStash(e, normalized, x), n.operand(1)});
  if (n.numOperands() > 2 && n.operand(2)) y = e.op("Add", {y, n.operand(2)});
  results = {y, mean, invStdDev};
  results.resize(n.numResults());
  return absl::OkStatus();
}

void registerLayerNormalization(OpRegistrar &r) {
  r["LayerNormalization"].infer(layerNormRule).kernel(kLayerNormalization);
  // Over the axes from `axis` on (Note [Op facts]).
  r["LayerNormalization"].shapePreserving().axis(AxisFact::AxisAttribute);
  r["LayerNormalization"].since(17).expand(expandLayerNormalization);
}

//===--- GroupNormalization ---===//

/// The channels split into num_groups groups, each normalized per sample;
/// scale and bias per group (-18) or per channel (-21, which also computes
/// in stash_type).
StatusOr<std::vector<Tensor>> kGroupNormalization(const KernelCall &c) {
  auto x0 = floatX(c);
  if (!x0.ok()) return x0.status();
  if (x0->rank() < 2)
    return invalid(absl::StrCat("X has shape ", dimsStr(x0->dims), "; expected [N, C, ...]"));
  bool perGroup = c.opset > 0 && c.opset < 21;
  DataType xdt = x0->dt, cdt = xdt;
  if (!perGroup) {
    auto sdt = stashType(c);
    if (!sdt.ok()) return sdt.status();
    cdt = *sdt;
  }
  auto x = inKindOf(std::move(*x0), cdt);
  if (!x.ok()) return x.status();
  int64_t N = x->dims[0], C = x->dims[1], G = c.getInt("num_groups", 0);
  if (G <= 0 || C % G != 0)
    return invalid(absl::StrCat("attribute 'num_groups' is ", G, "; it must divide X's ", C,
                                " channels"));
  int64_t inner = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(2));
  int64_t per = C / G, span = per * inner;
  auto sc = floatOperand(c, 1, "scale", cdt), bb = floatOperand(c, 2, "bias", cdt);
  if (!sc.ok()) return sc.status();
  if (!bb.ok()) return bb.status();
  for (const auto &[a, name] : {std::pair{&*sc, "scale"}, std::pair{&*bb, "bias"}})
    if (Status s = expectDims(*a, name, {perGroup ? G : C},
                              perGroup ? "one per group before opset 21"
                                       : "one per channel from opset 21");
        !s.ok())
      return s;
  Arr y = Arr::make(cdt, x->dims);
  Status st = visitFloat(x->kind(), "stash_type", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    const auto &s = sc->template vec<T>(), &b = bb->template vec<T>();
    T eps = T(c.getFloat("epsilon", 1e-5f));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < G; ++g) {
        const T *px = xv + (n * G + g) * span;
        T *py = yv + (n * G + g) * span;
        T sum = 0, sq = 0;
        for (int64_t k = 0; k < span; ++k) sum += px[k];
        T m = sum / T(span);
        for (int64_t k = 0; k < span; ++k) sq += (px[k] - m) * (px[k] - m);
        T is = T(1) / std::sqrt(sq / T(span) + eps);
        for (int64_t ch = 0; ch < per; ++ch) {
          int64_t pi = perGroup ? g : g * per + ch;
          T a = is * s[pi];
          for (int64_t k = 0; k < inner; ++k)
            py[ch * inner + k] = (px[ch * inner + k] - m) * a + b[pi];
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  auto yc = asElemType(std::move(y), xdt);
  if (!yc.ok()) return yc.status();
  return one(*yc);
}

// GroupNormalization-21: scale and bias have one entry per channel (C), in
// -18 one per group (num_groups); stash_type added (default 1). Only C ==
// num_groups converts without rewriting the operands.
absl::Status groupNormShapes(Node &n, AdapterContext &c) {
  auto g = adapters::intAttrOr(n, "num_groups", -1);
  if (!g.ok()) return g.status();
  const Type *t = n.numOperands() && n.operand(0) ? n.operand(0)->type() : nullptr;
  int64_t channels = -1;
  if (t && t->kind() == Type::Kind::Tensor && t->rank() >= 2 && t->dims()[1].isKnown())
    channels = t->dims()[1].value;
  if (channels < 0 || channels != *g)
    return absl::FailedPreconditionError(absl::StrCat(
        "scale and bias have one entry per ", c.to >= 21 ? "channel" : "group", " at opset ",
        c.to, " (per ", c.to >= 21 ? "group" : "channel", " before): converts only when the "
        "channel count (", channels < 0 ? std::string("unknown") : absl::StrCat(channels),
        ") equals num_groups (", *g, ")"));
  return absl::OkStatus();
}
absl::Status groupNormUp21(Node &n, AdapterContext &c) { return groupNormShapes(n, c); }
absl::Status groupNormDown21(Node &n, AdapterContext &c) {
  if (absl::Status s = groupNormShapes(n, c); !s.ok()) return s;
  return adapters::olderFormOnly(n, c, "GroupNormalization", {{"stash_type", AttrKind::Int, 1}});
}

void registerGroupNormalization(OpRegistrar &r) {
  r["GroupNormalization"].infer(sameAsInput).kernel(kGroupNormalization);
  r["GroupNormalization"].since(21).upgrade(groupNormUp21).downgrade(groupNormDown21);
}

//===--- RMSNormalization ---===//

/// Y has X's shape and the scale's element type (V).
void rmsNormRule(InferCtx &c) { c.setTensor(0, c.inElem(1), c.inShape(0)); }

/// X / sqrt(mean(X^2 over the dims from `axis` on) + epsilon) * scale,
/// computed in stash_type; Y of the scale's type.
StatusOr<std::vector<Tensor>> kRMSNormalization(const KernelCall &c) {
  auto sr = stashedRows(c);
  if (!sr.ok()) return sr.status();
  const Arr *x = &sr->x;
  int64_t rows = sr->rows, cols = sr->cols;
  auto sc = floatOperand(c, 1, "scale", sr->stash);
  if (!sc.ok()) return sc.status();
  DataType ydt = c.input(1)->dataType();
  auto so = rowOffsets(*sc, "scale", x->dims, sr->axis);
  if (!so.ok()) return so.status();
  Arr y = Arr::make(sr->stash, x->dims);
  Status st = visitFloat(x->kind(), "stash_type", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    const T *sv = sc->template vec<T>().data();
    T eps = T(c.getFloat("epsilon", 1e-5f));
    for (int64_t i = 0; i < rows; ++i) {
      const T *px = xv + i * cols;
      T *py = yv + i * cols;
      T sq = 0;
      for (int64_t j = 0; j < cols; ++j) sq += px[j] * px[j];
      T is = T(1) / std::sqrt(sq / T(cols) + eps);
      const int64_t *os = so->row(i, cols);
      for (int64_t j = 0; j < cols; ++j) py[j] = px[j] * is * sv[os[j]];
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  auto yc = asElemType(std::move(y), ydt);
  if (!yc.ok()) return yc.status();
  return one(*yc);
}

// RMSNormalization-23's function body: XU = Cast<U>(X);
// Y = Cast<T>(XU * 1 / Sqrt(ReduceMean(XU * XU) + epsilon)) * scale.
absl::Status expandRMSNormalization(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  NormalizationPlan p;
  // RMSNormalization-23: only X has T (scale and Y have V).
  if (absl::Status s = planNormalization(n, c, "scale", {},
                                         {"ReduceMean", "Mul", "Add", "Sqrt", "Reciprocal", "Cast"},
                                         p);
      !s.ok())
    return s;
  // The normalized X goes back to V, the scale's (and Y's) type, which may
  // differ from T (float16 X, float scale).
  Value *scale = n.operand(1);
  std::optional<DataType> v = firstElemType({scale, resultOr(n, 0)});
  if (!v && c.opset < 15)
    return refuse(absl::StrCat("the element type of scale ('", scale->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *xu = p.toStash(e, x);
  Value *meanSquare = e.reduceMean(e.op("Mul", {xu, xu}), p.axes);
  Value *rms = e.op("Sqrt", {e.op("Add", {meanSquare, e.scalar(p.eps, p.u, nullptr)})});
  Value *normalized = e.op("Mul", {xu, e.op("Reciprocal", {rms})});
  Value *inV = !v ? e.op("CastLike", {normalized, scale}) : *v == p.u ? normalized : e.cast(normalized, *v);
  results = {e.op("Mul", {inV, scale})};
  return absl::OkStatus();
}

void registerRMSNormalization(OpRegistrar &r) {
  r["RMSNormalization"].infer(rmsNormRule).kernel(kRMSNormalization);
  r["RMSNormalization"].shapePreserving().axis(AxisFact::AxisAttribute);
  r["RMSNormalization"].since(23).expand(expandRMSNormalization);
}

//===--- LpNormalization ---===//

/// Along `axis`: x / ||x||_p, p 1 or 2; a zero norm gives 0 (ONNX's
/// reference), not NaN.
StatusOr<std::vector<Tensor>> kLpNormalization(const KernelCall &c) {
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  int64_t r = x->rank();
  auto axis = normAxis(c.getInt("axis", -1), r);
  if (!axis)
    return invalid(absl::StrCat("attribute 'axis' is ", c.getInt("axis", -1),
                                ", out of range for the input of rank ", r));
  int64_t p = c.getInt("p", 2);
  if (p != 1 && p != 2) return invalid(absl::StrCat("attribute 'p' is ", p, "; it must be 1 or 2"));
  int64_t outer = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).take_front(*axis));
  int64_t dim = x->dims[*axis];
  int64_t inner = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(*axis + 1));
  Status st = visitFloat(x->kind(), "input", [&](auto tag) -> Status {
    using T = decltype(tag);
    T *v = x->template vec<T>().data();
    std::vector<T> norm(inner);
    for (int64_t o = 0; o < outer; ++o) {
      T *base = v + o * dim * inner;
      std::fill(norm.begin(), norm.end(), T(0));
      for (int64_t j = 0; j < dim; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          T e = base[j * inner + i];
          norm[i] += p == 1 ? std::abs(e) : e * e;
        }
      if (p == 2)
        for (T &n : norm) n = std::sqrt(n);
      for (int64_t j = 0; j < dim; ++j)
        for (int64_t i = 0; i < inner; ++i)
          base[j * inner + i] = norm[i] == T(0) ? T(0) : base[j * inner + i] / norm[i];
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*x);
}

void registerLpNormalization(OpRegistrar &r) {
  r["LpNormalization"].infer(sameAsInput).kernel(kLpNormalization);
}

//===--- MeanVarianceNormalization ---===//

/// (X - mean) / (sqrt(variance) + 1e-9) over `axes` (default [0, 2, 3]), as
/// the function body (which takes the variance as E[X^2] - E[X]^2; here it is
/// the mean squared deviation, the same up to rounding and never negative).
StatusOr<std::vector<Tensor>> kMeanVarianceNormalization(const KernelCall &c) {
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  int64_t r = x->rank();
  std::vector<int64_t> axes = c.getInts("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<int64_t> kept = x->dims;
  for (int64_t a : axes) {
    auto k = normAxis(a, r);
    if (!k)
      return invalid(
          absl::StrCat("attribute 'axes' holds ", a, ", out of range for X of rank ", r));
    if (kept[*k] == 1 && x->dims[*k] != 1)
      return invalid(absl::StrCat("attribute 'axes' names axis ", a, " twice"));
    kept[*k] = 1;
  }
  int64_t nk = numElementsOf(kept), total = x->size();
  std::vector<int64_t> idx = broadcastOffsets(kept, x->dims);
  Status st = visitFloat(x->kind(), "X", [&](auto tag) -> Status {
    using T = decltype(tag);
    T *v = x->template vec<T>().data();
    std::vector<T> mean(nk, T(0)), var(nk, T(0));
    T count = nk ? T(total) / T(nk) : T(0);
    for (int64_t e = 0; e < total; ++e) mean[idx[e]] += v[e];
    for (T &m : mean) m /= count;
    for (int64_t e = 0; e < total; ++e) {
      T d = v[e] - mean[idx[e]];
      var[idx[e]] += d * d;
    }
    for (T &s : var) s = std::sqrt(s / count) + T(1e-9);
    for (int64_t e = 0; e < total; ++e) v[e] = (v[e] - mean[idx[e]]) / var[idx[e]];
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(*x);
}

void registerMeanVarianceNormalization(OpRegistrar &r) {
  r["MeanVarianceNormalization"].infer(sameAsInput).kernel(kMeanVarianceNormalization);
}

//===--- LRN ---===//

/// Across channels: x / (bias + alpha / size * sum of x^2 over the channels
/// [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.
StatusOr<std::vector<Tensor>> kLRN(const KernelCall &c) {
  auto x = boundedInput(c);
  if (!x.ok()) return x.status();
  if (x->rank() < 2)
    return invalid(absl::StrCat("X has shape ", dimsStr(x->dims), "; expected [N, C, ...]"));
  int64_t size = c.getInt("size", 0);
  if (size <= 0)
    return invalid(absl::StrCat("attribute 'size' is ", size, "; it must be positive"));
  float alpha = c.getFloat("alpha", 1e-4f), beta = c.getFloat("beta", 0.75f),
        bias = c.getFloat("bias", 1.0f);
  int64_t N = x->dims[0], C = x->dims[1];
  int64_t inner = numElementsOf(llvm::ArrayRef<int64_t>(x->dims).drop_front(2));
  int64_t before = (size - 1) / 2, after = size / 2; // floor and ceil of (size-1)/2
  Arr y = Arr::make(x->dt, x->dims);
  Status st = visitFloat(x->kind(), "X", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *xv = x->template vec<T>().data();
    T *yv = y.template vec<T>().data();
    std::vector<T> sq(C * inner), sum(inner);
    T scale = T(alpha) / T(size);
    for (int64_t n = 0; n < N; ++n) {
      const T *px = xv + n * C * inner;
      T *py = yv + n * C * inner;
      for (int64_t k = 0; k < C * inner; ++k) sq[k] = px[k] * px[k];
      for (int64_t ch = 0; ch < C; ++ch) {
        std::fill(sum.begin(), sum.end(), T(0));
        for (int64_t j = std::max<int64_t>(0, ch - before); j <= std::min(C - 1, ch + after); ++j)
          for (int64_t k = 0; k < inner; ++k) sum[k] += sq[j * inner + k];
        for (int64_t k = 0; k < inner; ++k)
          py[ch * inner + k] =
              px[ch * inner + k] / std::pow(T(bias) + scale * sum[k], T(beta));
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(y);
}

void registerLRN(OpRegistrar &r) {
  r["LRN"].infer(sameAsInput).kernel(kLRN);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerNormalizationOps(OpRegistrar &r) {
  for (auto *reg : {registerBatchNormalization, registerInstanceNormalization,
                    registerLayerNormalization, registerGroupNormalization,
                    registerRMSNormalization, registerLpNormalization,
                    registerMeanVarianceNormalization, registerLRN})
    reg(r);
}

} // namespace onnxir
