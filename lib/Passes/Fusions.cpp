//===- Fusions.cpp - Operator fusions and inference-mode cleanups ---------===//
//
// Each pattern is one function with its numerical contract above it. The
// common rules are in Fusions.h. Arithmetic on folded constants is done in
// double and rounded once to float.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Passes/Fusions.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

namespace onnxir {

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// A float constant operand: its dims and values.
struct FloatConst {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

std::optional<FloatConst> floatConstant(const Value *v) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t || t->dataType() != DataType::Float) return std::nullopt;
  auto vals = t->values<float>();
  if (!vals.ok()) return std::nullopt;
  return FloatConst{t->dims(), std::move(*vals)};
}

/// 'name' of a value, for report lines.
std::string quoted(const Value *v) { return absl::StrCat("'", v->name().str(), "'"); }

// Note [Finite folds]
//   A fusion that folds constants (Conv+BN, Conv+Mul/Add, BN -> Mul+Add)
//   fires only when every constant it reads is finite and every constant it
//   writes is finite once rounded to float. Otherwise the fused graph can
//   differ in kind, not by rounding: W = 1e20 times a scale of 1e20 is +inf
//   in float where conv(x, W) * s is finite for small x; an inf scale over
//   mixed-sign weights makes +inf and -inf weights whose sum is NaN where
//   the original gives +-inf.

bool allFinite(llvm::ArrayRef<float> v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}
/// Finite as doubles and once rounded to float (see Note [Finite folds]).
bool allFiniteAsFloat(llvm::ArrayRef<double> v) {
  for (double x : v)
    if (!std::isfinite(x) || !std::isfinite((float)x)) return false;
  return true;
}

/// A constant `c` that, broadcast against an output of rank `rank` whose
/// channel axis is 1 with `channels` channels, holds one value per channel
/// (or one value for all) and does not change the output's shape: every dim
/// of c is 1 except possibly the channel one. Returns the per-channel values.
std::optional<std::vector<double>> perChannel(const FloatConst &c, int64_t rank,
                                              int64_t channels) {
  int64_t r = (int64_t)c.dims.size();
  if (r > rank) return std::nullopt;
  int64_t channelAxis = 1 - (rank - r); // index in c aligned to the right
  bool perCh = false;
  for (int64_t i = 0; i < r; ++i) {
    if (c.dims[i] == 1) continue;
    if (i == channelAxis && c.dims[i] == channels) perCh = true;
    else return std::nullopt;
  }
  std::vector<double> out(channels);
  for (int64_t m = 0; m < channels; ++m) out[m] = perCh ? c.values[m] : c.values[0];
  return out;
}

/// The per-channel values (perChannel) of the constant `c`, operand 1 - i
/// of `root`, against the result of `conv` (rank `rank`, `m` channels),
/// when `root`'s result can also be taken over by the Conv's; otherwise
/// nothing, with the refusal's report line.
std::optional<std::vector<double>> channelAddend(Node &root, unsigned i, Node &conv, const FloatConst &c,
                                                 int64_t rank, int64_t m, PatternRewriter &rw) {
  auto k = perChannel(c, rank, m);
  if (!k) {
    rw.rejected("per-channel", absl::StrCat(quoted(root.operand(1 - i)), " is not one value per output channel of ",
                                            quoted(conv.result(0)), " (nor one value), or broadcasts it up"));
    return std::nullopt;
  }
  if (!rw.canReplace(root.result(0), conv.result(0))) {
    rw.rejected("output", absl::StrCat("graph output ", quoted(root.result(0)), " cannot be taken over by ",
                                       quoted(conv.result(0)), " (its name or type)"));
    return std::nullopt;
  }
  return k;
}

/// Output channels of a Conv weight [M, C/g, k...] or ConvTranspose weight
/// [C, M/g, k...]; calls fn(element index, output channel) for every weight.
/// `conv` reads the node's attributes (one context for the pattern).
template <class Fn> bool forEachWeight(const NodeContext &conv, const FloatConst &w, Fn fn) {
  if (w.dims.size() < 3) return false;
  int64_t per = 1;
  for (size_t i = 2; i < w.dims.size(); ++i) per *= w.dims[i];
  if (conv.node.is("Conv")) {
    for (int64_t m = 0, k = 0; m < w.dims[0]; ++m)
      for (int64_t j = 0; j < w.dims[1] * per; ++j, ++k) fn(k, m);
    return true;
  }
  int64_t group = conv.getInt("group", 1);
  if (group <= 0 || w.dims[0] % group) return false;
  int64_t cPerGroup = w.dims[0] / group, mPerGroup = w.dims[1];
  for (int64_t c = 0, k = 0; c < w.dims[0]; ++c)
    for (int64_t j = 0; j < mPerGroup; ++j)
      for (int64_t s = 0; s < per; ++s, ++k) fn(k, (c / cPerGroup) * mPerGroup + j);
  return true;
}

int64_t outputChannels(const NodeContext &conv, const FloatConst &w) {
  if (w.dims.size() < 3) return -1;
  if (conv.node.is("Conv")) return w.dims[0];
  return w.dims[1] * conv.getInt("group", 1);
}

/// The Conv/ConvTranspose producing operand `i` of `n` (single local use)
/// with a float constant weight and a constant bias or none, and no
/// attribute reference (inside functions).
Node *fusableConv(const Node &n, unsigned i, PatternRewriter &rw, FloatConst &w,
                  std::optional<FloatConst> &b) {
  Node *conv = rw.singleUseProducer(n, i, "Conv");
  if (!conv) conv = rw.singleUseProducer(n, i, "ConvTranspose");
  if (!conv || conv->numOperands() < 2 || conv->numResults() != 1) return nullptr;
  for (unsigned a = 0; a < conv->numAttributes(); ++a)
    if (conv->attribute(a).isReference()) return nullptr;
  auto wc = floatConstant(conv->operand(1));
  if (!wc || !allFinite(wc->values)) return nullptr; // Note [Finite folds]
  w = std::move(*wc);
  b.reset();
  if (conv->numOperands() > 2 && conv->operand(2)) {
    b = floatConstant(conv->operand(2));
    if (!b || b->dims.size() != 1 || !allFinite(b->values)) return nullptr;
  }
  return conv;
}

/// When a Conv/ConvTranspose produces operand `i` of `n` (single local use)
/// but fusableConv declines it, says why (Note [Near-miss reports]).
void rejectConv(const Node &n, unsigned i, PatternRewriter &rw) {
  Node *conv = rw.singleUseProducer(n, i, "Conv");
  if (!conv) conv = rw.singleUseProducer(n, i, "ConvTranspose");
  if (conv && conv->numResults() == 1)
    rw.rejected("weights", absl::StrCat(quoted(conv->result(0)),
                                        " has no finite float constant weight with a finite float [M] "
                                        "constant bias or none (Note [Finite folds]), or reads a "
                                        "function attribute"));
}

/// Gives `conv` new constant weights and bias (bias per output channel).
void setWeights(PatternRewriter &rw, Node *conv, const FloatConst &w,
                const std::vector<double> &bias) {
  Value *oldW = conv->operand(1);
  rw.setInsertionPoint(conv); // Constant nodes (in functions) must come first
  std::vector<float> b(bias.begin(), bias.end());
  Value *nw = rw.createConstant(oldW->name(), makeFloatTensor(w.dims, w.values));
  std::string bname = conv->numOperands() > 2 && conv->operand(2)
                          ? conv->operand(2)->name().str()
                          : conv->result(0)->name().str() + "_bias";
  Value *nb = rw.createConstant(bname, makeFloatTensor({(int64_t)b.size()}, b));
  rw.setOperand(conv, 1, nw);
  rw.setOperand(conv, 2, nb);
}

std::vector<double> biasOrZero(const std::optional<FloatConst> &b, int64_t m) {
  std::vector<double> out(m, 0.0);
  if (b && (int64_t)b->values.size() == m)
    for (int64_t i = 0; i < m; ++i) out[i] = b->values[i];
  return out;
}

/// BatchNormalization in inference form: one result used, no training mode
/// (training_mode = 0 from opset 14; opset 7 to 13 are inference ops when
/// only Y is used; spatial = 1 where the attribute exists), epsilon, and the
/// four float [C] constants. Opset 6 and older (is_test, consumed_inputs) are
/// not handled.
struct BNConsts {
  std::vector<double> scale, shift; ///< y = x * scale[c] + shift[c]
};
std::optional<BNConsts> inferenceBN(const Node &bn, PatternRewriter &rw, int64_t channels) {
  if (rw.opsetVersion() < firstVersionWithoutAttribute("BatchNormalization", "is_test") ||
      bn.numOperands() != 5)
    return std::nullopt;
  for (unsigned i = 1; i < bn.numResults(); ++i)
    if (bn.result(i) && !bn.result(i)->useEmpty()) return std::nullopt;
  NodeContext attrs(bn);
  if (attrs.getInt("training_mode", 0) != 0 || attrs.getInt("spatial", 1) != 1)
    return std::nullopt;
  for (unsigned a = 0; a < bn.numAttributes(); ++a)
    if (bn.attribute(a).isReference()) return std::nullopt;
  std::optional<FloatConst> c[4];
  for (unsigned i = 0; i < 4; ++i) {
    c[i] = floatConstant(bn.operand(i + 1));
    if (!c[i] || c[i]->dims.size() != 1 || (channels >= 0 && c[i]->dims[0] != channels))
      return std::nullopt;
    if (c[i]->dims[0] != c[0]->dims[0] || !allFinite(c[i]->values)) return std::nullopt;
  }
  double eps = attrs.getFloat("epsilon", 1e-5f);
  BNConsts k;
  int64_t n = c[0]->dims[0];
  for (int64_t m = 0; m < n; ++m) {
    double s = c[0]->values[m] / std::sqrt((double)c[3]->values[m] + eps);
    k.scale.push_back(s);
    k.shift.push_back(c[1]->values[m] - c[2]->values[m] * s);
  }
  // var + eps <= 0, or a scale past float's range (Note [Finite folds]).
  if (!allFiniteAsFloat(k.scale) || !allFiniteAsFloat(k.shift)) return std::nullopt;
  return k;
}

//===----------------------------------------------------------------------===//
// The patterns
//===----------------------------------------------------------------------===//

// Conv/ConvTranspose + BatchNormalization (inference form).
// Contract: BN(conv(x, W) + b) = s * (conv(x, W) + b - mean) + B with
// s = scale / sqrt(var + eps), which equals conv(x, W * s) + ((b - mean) * s
// + B) in exact arithmetic. In float, per output element the result differs
// from the unfused one by the rounding of the folded weights and of the
// reassociated sums: relative error of a few ulps times the accumulation
// length, the same order as the unfused graph's own rounding.
bool fuseConvBN(Node &bn, PatternRewriter &rw) {
  FloatConst w;
  std::optional<FloatConst> b;
  Node *conv = fusableConv(bn, 0, rw, w, b);
  if (!conv) {
    rejectConv(bn, 0, rw);
    return false;
  }
  NodeContext cc(*conv);
  int64_t m = outputChannels(cc, w);
  auto k = inferenceBN(bn, rw, m);
  if (!k)
    return rw.rejected("batchnorm",
                       absl::StrCat(quoted(bn.result(0)), " is not an inference-mode "
                                    "BatchNormalization with finite constant parameters, one "
                                    "per output channel of ", quoted(conv->result(0)),
                                    ", and no use of its running statistics"));
  if (!rw.canReplace(bn.result(0), conv->result(0)))
    return rw.rejected("output", absl::StrCat("graph output ", quoted(bn.result(0)), " cannot be taken over by ",
                                              quoted(conv->result(0)), " (its name or type)"));
  if (!forEachWeight(cc, w,
                     [&](int64_t i, int64_t ch) { w.values[i] = (float)(w.values[i] * k->scale[ch]); }))
    return rw.rejected("group", absl::StrCat("the group of ", quoted(conv->result(0)),
                                             " does not divide its weight's channels"));
  std::vector<double> bias = biasOrZero(b, m);
  for (int64_t i = 0; i < m; ++i) bias[i] = bias[i] * k->scale[i] + k->shift[i];
  if (!allFinite(w.values) || !allFiniteAsFloat(bias)) // Note [Finite folds]
    return rw.rejected("finite", absl::StrCat("folding ", quoted(bn.result(0)), " into ",
                                              quoted(conv->result(0)),
                                              " gives a weight or bias that is not finite in "
                                              "float (Note [Finite folds])"));
  setWeights(rw, conv, w, bias);
  std::vector<Value *> by(bn.numResults(), nullptr);
  by[0] = conv->result(0);
  return rw.replaceNode(&bn, by);
}

// Conv + Add (or Mul) of a per-channel constant.
// Contract (Add): conv(x, W) + b + c = conv(x, W) + (b + c): the same sum
// reassociated; differs from the unfused result by at most one rounding of
// b + c (half an ulp of the bias) plus the reassociation.
// Contract (Mul): (conv(x, W) + b) * c = conv(x, W * c) + b * c for a
// per-channel c (distributivity): the products are rounded once more, so a
// relative error of about one ulp per product of the accumulation.
bool fuseConvAffine(Node &root, PatternRewriter &rw, bool isMul) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  for (unsigned i = 0; i < 2; ++i) {
    FloatConst w;
    std::optional<FloatConst> b;
    Node *conv = fusableConv(root, i, rw, w, b);
    auto c = floatConstant(root.operand(1 - i));
    // (An operand that is not a float constant: fuse-conv-add-bias's, or
    // not this structure.)
    if (!c) continue;
    if (!conv) {
      rejectConv(root, i, rw);
      continue;
    }
    if (!allFinite(c->values)) { // Note [Finite folds]
      rw.rejected("finite", absl::StrCat(quoted(root.operand(1 - i)), " holds a value that is not finite "
                                         "(Note [Finite folds])"));
      continue;
    }
    NodeContext cc(*conv);
    int64_t m = outputChannels(cc, w);
    auto k = channelAddend(root, i, *conv, *c, (int64_t)w.dims.size(), m, rw);
    if (!k) continue;
    std::vector<double> bias = biasOrZero(b, m);
    for (int64_t j = 0; j < m; ++j) bias[j] = isMul ? bias[j] * (*k)[j] : bias[j] + (*k)[j];
    if (isMul &&
        !forEachWeight(cc, w,
                       [&](int64_t e, int64_t ch) { w.values[e] = (float)(w.values[e] * (*k)[ch]); })) {
      rw.rejected("group", absl::StrCat("the group of ", quoted(conv->result(0)),
                                        " does not divide its weight's channels"));
      continue;
    }
    if (!allFinite(w.values) || !allFiniteAsFloat(bias)) { // Note [Finite folds]
      rw.rejected("finite", absl::StrCat("folding ", quoted(root.result(0)), " into ", quoted(conv->result(0)),
                                         " gives a weight or bias that is not finite in float (Note [Finite "
                                         "folds])"));
      continue;
    }
    setWeights(rw, conv, w, bias);
    return rw.replaceNode(&root, {conv->result(0)});
  }
  return false;
}

// MatMul + Add -> Gemm, when both MatMul operands are known to be 2-D and
// the addend broadcasts to the [M, N] product unidirectionally (so the Add
// does not change the shape). Float, double and float16 only (Gemm's types
// without int), opset 7 and later (Gemm 6 needed a `broadcast` attribute).
// Contract: Gemm computes A * B + C with alpha = beta = 1: the same products
// and the same final addition; an implementation may fuse the last multiply
// and add (one rounding fewer), well within the usual tolerance.
bool fuseMatMulAdd(Node &add, PatternRewriter &rw) {
  if (add.numOperands() != 2 || add.numResults() != 1 ||
      rw.opsetVersion() < firstVersionWithoutAttribute("Gemm", "broadcast"))
    return false;
  for (unsigned i = 0; i < (isCommutative(add) ? 2u : 1u); ++i) {
    Node *mm = rw.singleUseProducer(add, i, "MatMul");
    if (!mm || mm->numOperands() != 2) continue;
    Value *a = mm->operand(0), *b = mm->operand(1), *c = add.operand(1 - i);
    if (staticRankOf(a) != 2 || staticRankOf(b) != 2) continue;
    // A 2-D product plus an addend: each refusal from here is reported.
    auto et = staticElemOf(a);
    if (!et || staticElemOf(b) != et || staticElemOf(c) != et ||
        (*et != DataType::Float && *et != DataType::Double && *et != DataType::Float16)) {
      rw.rejected("type", absl::StrCat("the element types of ", quoted(a), ", ", quoted(b),
                                       " and the addend ", quoted(c),
                                       " are not known to be one of Gemm's (float, double, "
                                       "float16)"));
      continue;
    }
    int64_t M = staticDimOf(a, 0), N = staticDimOf(b, 1), rc = staticRankOf(c);
    bool ok = rc >= 0 && rc <= 2;
    for (int64_t d = 0; ok && d < rc; ++d) {
      int64_t cd = staticDimOf(c, (unsigned)d), target = (rc - d == 1) ? N : M;
      if (cd != 1 && (cd < 0 || cd != target)) ok = false;
    }
    if (!ok) {
      rw.rejected("addend", absl::StrCat("the addend ", quoted(c),
                                         " is not known to broadcast to the [", M, ", ", N,
                                         "] product unchanged (Gemm's C)"));
      continue;
    }
    if (!rw.canReplace(add.result(0), mm->result(0))) {
      rw.rejected("output", absl::StrCat("graph output ", quoted(add.result(0)), " cannot be taken over by ",
                                         "a Gemm of ", quoted(mm->result(0)), "'s operands (its name or type)"));
      continue;
    }
    Node *gemm = rw.create("Gemm", {a, b, c});
    PatternRewriter::copyNodeInfo(add, *gemm);
    gemm->result(0)->setType(add.result(0)->type());
    return rw.replaceNode(&add, {gemm->result(0)});
  }
  return false;
}

// Note [Row-wise chains on the 2-D view]
//   A Linear layer on [B, S, K] activations is MatMul(x, W [K, N]) + bias
//   [N]: two kernels on onnxruntime, the product and a broadcast Add over
//   the whole [B, S, N] result. Gemm takes the bias into the product (one
//   pass fewer over the result) but reads 2-D operands only. On the
//   [B*S, K] view of x the product is the same matrix product row by row
//   (MatMul with a 2-D right operand multiplies each row of the flattened
//   left operand by W), and so is every elementwise unary op between two
//   Linears (an MLP's activation). So a chain
//     x -> MatMul+bias -> (unary ops) -> MatMul+bias -> ... -> y
//   becomes Reshape(x, [-1, K]) -> Gemm -> unary ops -> Gemm -> ... ->
//   Reshape(., shape of y): measured on onnxruntime (bench/README.md,
//   2026-11-30 final census), an MLP of [4, 64, 16] runs 8-10% faster, the
//   Reshapes costing nothing measurable. The view costs nodes, though: the
//   Reshape in, the Reshape out and, when y's shape is not a constant, a
//   Shape of x (y has x's shape when the chain ends at x's width: the out
//   Reshape then reads Shape(x), with allowzero = 1 since a 0 in it is a
//   literal size). -O2 never grows a model, so the chain is taken only when
//   its bias Adds (one node fewer each) pay for the view: two Linears with a
//   static shape, three with a dynamic one; otherwise a report line.
//   The chain starts at the first Linear (a later Linear's anchor declines
//   silently when an earlier one heads its chain) and ends at the last;
//   every value inside has one use (no 3-D copy is kept). The bias must be
//   [N], [1], [1, N] or [1, 1] (Gemm's C broadcast to [M, N], the Add not
//   changing the shape); the types those of Gemm (float, double, float16).
//   Contract: MatMul + Add -> Gemm (fuse-matmul-add-gemm); Reshapes exact.

/// A unary elementwise op (the registry's, Note [Op facts]): a row-wise
/// chain passes through it (one operand, no shape change).
bool isRowwiseUnary(const Node &n) {
  if (n.numOperands() != 1 || n.numResults() != 1 || n.hasSubgraphs() ||
      PatternRewriter::hasAttributeReferences(n))
    return false;
  const OpEntry *e = OpRegistry::get().lookup(n);
  return e && e->elementwise;
}

/// A Linear layer ending at `add`: Add(MatMul(a, W), bias) in either order,
/// W a 2-D constant [K, N] with K > 0, bias a constant [N], [1], [1, N] or
/// [1, 1], all of one Gemm type, the MatMul's result used by the Add only.
struct Linear {
  Node *matmul = nullptr, *add = nullptr;
  Value *w = nullptr, *bias = nullptr;
  int64_t k = -1, n = -1;
};

std::optional<Linear> linearAt(Node &add, const PatternRewriter &rw) {
  if (!add.is("Add") || add.numOperands() != 2 || add.numResults() != 1) return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    Node *mm = rw.singleUseProducer(add, i, "MatMul");
    if (!mm || mm->numOperands() != 2 || mm->numResults() != 1) continue;
    Value *w = mm->operand(1), *c = add.operand(1 - i);
    if (!PatternRewriter::constantTensor(w) || !PatternRewriter::constantTensor(c) ||
        staticRankOf(w) != 2)
      continue;
    int64_t k = staticDimOf(w, 0), n = staticDimOf(w, 1), rc = staticRankOf(c);
    auto et = staticElemOf(w);
    // (MatMul's operands share one type: an untyped left operand is W's.)
    auto at = staticElemOf(mm->operand(0));
    if (k <= 0 || n <= 0 || !et || staticElemOf(c) != et || (at && at != et) ||
        (*et != DataType::Float && *et != DataType::Double && *et != DataType::Float16))
      continue;
    if (rc < 1 || rc > 2 || (rc == 2 && staticDimOf(c, 0) != 1)) continue;
    int64_t cn = staticDimOf(c, (unsigned)rc - 1);
    if (cn != 1 && cn != n) continue;
    return Linear{mm, &add, w, c, k, n};
  }
  return std::nullopt;
}

/// The Linear whose bias Add defines `v`, if `v` is used once (inside the
/// chain).
std::optional<Linear> linearDefining(Value *v, const PatternRewriter &rw) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || d->getGraph() != &rw.graph() || !PatternRewriter::hasSingleLocalUse(v))
    return std::nullopt;
  return linearAt(*d, rw);
}

bool fuseGemmRows(Node &add, PatternRewriter &rw) {
  auto head = linearAt(add, rw);
  if (!head) return false;
  Value *x = head->matmul->operand(0);
  int64_t rank = staticRankOf(x);
  if (rank == 2) return false; // fuse-matmul-add-gemm's
  // An earlier Linear of the same chain heads it (its anchor decides).
  for (Value *v = x;;) {
    Node *d = v->definingNode();
    if (!d || d->getGraph() != &rw.graph() || !PatternRewriter::hasSingleLocalUse(v)) break;
    if (isRowwiseUnary(*d)) {
      v = d->operand(0);
      continue;
    }
    if (linearDefining(v, rw)) return false;
    break;
  }
  if (rank < 3)
    return rw.rejected("rank", absl::StrCat("the rank of ", quoted(x), " is ",
                                            rank < 0 ? std::string("unknown") : std::to_string(rank),
                                            ", not 3 or more"));
  if (rw.opsetVersion() < firstVersionWithoutAttribute("Gemm", "broadcast"))
    return rw.rejected("opset", "Gemm before opset 7 broadcasts C only by its attribute");
  // The chain: Linears and the unary ops between them.
  std::vector<Node *> links{head->add};
  std::vector<Linear> linears{*head};
  size_t kept = 1; // links up to the last Linear
  for (Value *v = head->add->result(0); PatternRewriter::hasSingleLocalUse(v);) {
    Node *u = v->firstUse()->getOwner();
    if (isRowwiseUnary(*u)) {
      links.push_back(u);
      v = u->result(0);
      continue;
    }
    if (!u->is("MatMul") || u->operand(0) != v || !PatternRewriter::hasSingleLocalUse(u->result(0)))
      break;
    Node *next = u->result(0)->firstUse()->getOwner();
    auto l = linearAt(*next, rw);
    if (!l || l->matmul != u || l->k != linears.back().n) break;
    links.push_back(next);
    linears.push_back(*l);
    kept = links.size();
    v = next->result(0);
  }
  links.resize(kept);
  Value *y = links.back()->result(0);
  // The out Reshape's target: y's static shape, else Shape(x) when y is as
  // wide as x (the leading dims are x's in both).
  auto shape = staticShape(y);
  if (shape && std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d <= 0; }))
    shape.reset();
  bool viaShape = !shape;
  if (viaShape && linears.back().n != head->k)
    return rw.rejected("shape", absl::StrCat(quoted(y), " has no static shape and is ",
                                             linears.back().n, " wide, ", quoted(x), " ", head->k,
                                             ": no target for the Reshape back"));
  if (viaShape && rw.opsetVersion() < firstVersionWithAttribute("Reshape", "allowzero"))
    return rw.rejected("opset", "Reshape has no allowzero (needed for a computed target) before opset 14");
  int64_t view = viaShape ? 3 : 2;
  if ((int64_t)linears.size() < view)
    return rw.rejected(
        "size", absl::StrCat("the [rows, ", head->k, "] view of ", quoted(x), " costs ", view,
                             " nodes (Reshape in, ", viaShape ? "Shape, " : "",
                             "Reshape out) and the chain to ", quoted(y), " saves ", linears.size(),
                             " bias Add", linears.size() == 1 ? "" : "s",
                             " (Note [Row-wise chains on the 2-D view])"));
  Value *v = rw.create("Reshape", {x, rw.createConstant("rows_shape",
                                                        makeInt64Tensor({2}, {-1, head->k}))})
                 ->result(0);
  size_t li = 0;
  for (Node *l : links) {
    if (li < linears.size() && l == linears[li].add) {
      const Linear &lin = linears[li++];
      Node *g = rw.create("Gemm", {v, lin.w, lin.bias});
      PatternRewriter::copyNodeInfo(*lin.add, *g);
      v = g->result(0);
      continue;
    }
    Node *u = rw.create(l->opType(), {v}, 1, l->domain());
    for (unsigned i = 0; i < l->numAttributes(); ++i) u->setAttr(l->attribute(i).clone());
    PatternRewriter::copyNodeInfo(*l, *u);
    v = u->result(0);
  }
  Value *target =
      viaShape ? rw.create("Shape", {x})->result(0)
               : rw.createConstant("rows_back", makeInt64Tensor({(int64_t)shape->size()}, *shape));
  Node *back = rw.create("Reshape", {v, target});
  if (viaShape) back->setAttr(intAttr("allowzero", 1));
  back->result(0)->setType(y->type());
  if (!rw.replaceValue(y, back->result(0))) return false;
  rw.eraseNode(links.back()); // and the chain with it (y keeps its name)
  return true;
}

// Transpose(x, perm = [1, 0]) feeding Gemm's A or B -> transA/transB flipped.
// Contract: exact (the same products in the same order).
bool fuseTransposeGemm(Node &gemm, PatternRewriter &rw) {
  for (unsigned i = 0; i < 2 && i < gemm.numOperands(); ++i) {
    Node *t = rw.singleUseProducer(gemm, i, "Transpose");
    if (!t || t->numOperands() != 1 || !t->operand(0)) continue;
    const Attribute *perm = t->getAttr("perm");
    if (perm && (perm->isReference() || perm->ints != std::vector<int64_t>{1, 0})) continue;
    if (!perm && staticRankOf(t->operand(0)) != 2) {
      rw.rejected("rank", absl::StrCat("Transpose ", quoted(t->result(0)), " has no perm, and the rank of ",
                                       quoted(t->operand(0)), " is not known to be 2"));
      continue;
    }
    const char *attr = i == 0 ? "transA" : "transB";
    if (const Attribute *a = gemm.getAttr(attr); a && a->isReference()) continue;
    int64_t flag = NodeContext(gemm).getInt(attr, 0);
    gemm.setAttr(intAttr(attr, flag ? 0 : 1));
    rw.setOperand(&gemm, i, t->operand(0));
    return true;
  }
  return false;
}

// Dropout in inference mode -> its input. From opset 12 inference means no
// training_mode operand, or a constant false one; opset 7 to 11 have no
// training form in a model; opset 6 and older need is_test = 1. The mask
// result must be unused. Contract: exact (Dropout is the identity then).
bool removeDropout(Node &d, PatternRewriter &rw) {
  if (d.numOperands() < 1 || !d.operand(0) || d.numResults() < 1) return false;
  for (unsigned i = 1; i < d.numResults(); ++i)
    if (d.result(i) && !d.result(i)->useEmpty())
      return rw.rejected("mask", absl::StrCat("the mask ", quoted(d.result(i)), " of the Dropout is used"));
  int64_t v = rw.opsetVersion();
  if (v < firstVersionWithoutAttribute("Dropout", "is_test") &&
      NodeContext(d).getInt("is_test", 0) != 1)
    return rw.rejected("is_test", "the Dropout has no is_test = 1 (opset " + std::to_string(v) +
                                      ": a training op otherwise)");
  if (v >= firstVersionWithInput("Dropout", "training_mode") && d.numOperands() > 2 && d.operand(2)) {
    const Tensor *t = PatternRewriter::constantTensor(d.operand(2));
    auto vals = t ? t->values<int64_t>() : absl::StatusOr<std::vector<int64_t>>();
    if (!t || !vals.ok() || vals->size() != 1 || (*vals)[0] != 0)
      return rw.rejected("training_mode", absl::StrCat("the Dropout's training_mode ", quoted(d.operand(2)),
                                                       " is not a constant false"));
  }
  if (!d.result(0) || d.result(0)->useEmpty()) return false;
  if (!rw.canReplace(d.result(0), d.operand(0)))
    return rw.rejected("output", absl::StrCat("graph output ", quoted(d.result(0)), " cannot be taken over by ",
                                              quoted(d.operand(0)), " (its name or type)"));
  std::vector<Value *> by(d.numResults(), nullptr);
  by[0] = d.operand(0);
  return rw.replaceNode(&d, by);
}

// Identity -> its input. Contract: exact.
bool removeIdentity(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || !n.operand(0) || n.numResults() != 1 || !n.result(0)) return false;
  return rw.replaceNode(&n, {n.operand(0)});
}

// BatchNormalization -> Mul + Add (only when asked): y = x * s + t with s, t
// per channel, shaped [C, 1, ..., 1] for x of known rank >= 2.
// Contract: the same two roundings as BN's own formula in float
// (x * s then + t), with s and t folded in double: within an ulp or two.
bool bnToMulAdd(Node &bn, PatternRewriter &rw) {
  if (bn.numOperands() != 5 || !bn.operand(0)) return false;
  int64_t rank = staticRankOf(bn.operand(0));
  if (rank < 2 || staticElemOf(bn.operand(0)) != DataType::Float) return false;
  auto k = inferenceBN(bn, rw, -1);
  if (!k) return false;
  std::vector<int64_t> dims(rank - 1, 1);
  dims[0] = (int64_t)k->scale.size();
  std::vector<float> s(k->scale.begin(), k->scale.end()), t(k->shift.begin(), k->shift.end());
  std::string base = bn.result(0)->name().str();
  Value *sv = rw.createConstant(base + "_scale", makeFloatTensor(dims, s));
  Value *tv = rw.createConstant(base + "_shift", makeFloatTensor(dims, t));
  Node *mul = rw.create("Mul", {bn.operand(0), sv});
  Node *add = rw.create("Add", {mul->result(0), tv});
  PatternRewriter::copyNodeInfo(bn, *add);
  add->result(0)->setType(bn.result(0)->type());
  mul->result(0)->setType(bn.operand(0)->type());
  std::vector<Value *> by(bn.numResults(), nullptr);
  by[0] = add->result(0);
  if (!rw.replaceNode(&bn, by)) return false;
  return true;
}

/// fuse-conv-add-bias for an addend `a` that is not a constant: a Conv
/// without a bias whose result (rank `rank`, `m` channels) gets `a`, of a
/// static shape that is per channel (every dim 1 but the channel one, m)
/// or all ones, of the weight's element type, defined before the Conv (or
/// in an outer graph). The bias is Reshape(a, [m]), or for one value
/// Expand(Reshape(a, [1]), [m]) (a rank <= 1 `a` needs no Reshape), built
/// before the Conv.
bool addendAsBias(Node &add, Node &conv, unsigned i, int64_t rank, int64_t m,
                  PatternRewriter &rw) {
  Value *a = add.operand(1 - i);
  if (conv.numOperands() > 2 && conv.operand(2))
    return rw.rejected("bias", "the Conv has a bias and the addend is not a constant");
  Node *d = a->definingNode();
  if (d && d->getGraph() == conv.getGraph() && !d->isBefore(&conv))
    return rw.rejected("order", "the addend is computed after the Conv");
  auto shape = staticShape(a);
  if (!shape || staticElemOf(a) != staticElemOf(conv.operand(1)))
    return rw.rejected("addend", "the addend's shape or element type is not known to fit");
  int64_t r = (int64_t)shape->size();
  if (r > rank) return rw.rejected("addend", "the addend has a higher rank than the Conv");
  bool perCh = false;
  for (int64_t d2 = 0; d2 < r; ++d2) {
    int64_t s = (*shape)[d2];
    if (s == 1) continue;
    if (d2 == 1 - (rank - r) && s == m) perCh = true;
    else return rw.rejected("addend", "the addend is not one value per output channel");
  }
  if (!rw.canReplace(add.result(0), conv.result(0)))
    return rw.rejected("output", absl::StrCat("graph output ", quoted(add.result(0)), " cannot be taken over by ",
                                              quoted(conv.result(0)), " (its name or type)"));
  rw.setInsertionPoint(&conv);
  auto &ctx = rw.getModel().getContext();
  DataType et = *staticElemOf(a);
  Value *bias = a;
  if (perCh ? r != 1 : r > 1) {
    Value *s = rw.createConstant("bias_shape", makeInt64Tensor({1}, {perCh ? m : 1}));
    Node *rs = rw.create("Reshape", {a, s});
    rs->result(0)->setType(ctx.getTensorType(et, llvm::ArrayRef<int64_t>{perCh ? m : 1}));
    bias = rs->result(0);
  }
  if (!perCh && !(m == 1 && r >= 1)) {
    Value *s = rw.createConstant("bias_shape", makeInt64Tensor({1}, {m}));
    Node *ex = rw.create("Expand", {bias, s});
    ex->result(0)->setType(ctx.getTensorType(et, llvm::ArrayRef<int64_t>{m}));
    bias = ex->result(0);
  }
  rw.setOperand(&conv, 2, bias);
  return rw.replaceNode(&add, {conv.result(0)});
}

// Conv + Add of a per-channel constant where the Conv's weight is not a
// constant (fuse-conv-add takes the constant case): the constant, shaped
// [M,1,..], [1,M,1,..] or a scalar, becomes the Conv's bias (b + c with a
// constant b; float). M is the weight's known dim 0 (Conv) or dim 1 times
// group (ConvTranspose). An addend that is not a constant becomes the bias
// of a Conv without one (addendAsBias; float, double, float16).
// Contract: conv(x, W) + b + c = conv(x, W) + (b + c): the sum reassociated,
// as fuse-conv-add's.
bool fuseConvAddBias(Node &add, PatternRewriter &rw) {
  if (add.numOperands() != 2 || add.numResults() != 1) return false;
  for (unsigned i = 0; i < 2; ++i) {
    Node *conv = rw.singleUseProducer(add, i, "Conv");
    if (!conv) conv = rw.singleUseProducer(add, i, "ConvTranspose");
    if (!conv || conv->numOperands() < 2 || conv->numResults() != 1 || !conv->operand(1) ||
        !add.operand(1 - i))
      continue;
    // A constant weight with a constant addend is fuse-conv-add's.
    bool constantAddend = PatternRewriter::constantTensor(add.operand(1 - i));
    if (constantAddend && PatternRewriter::constantTensor(conv->operand(1))) continue;
    bool refs = false;
    for (unsigned a = 0; a < conv->numAttributes(); ++a) refs |= conv->attribute(a).isReference();
    Value *w = conv->operand(1);
    auto wt = staticElemOf(w);
    if (refs) continue; // (inside a function: not read)
    if (!wt || (constantAddend ? *wt != DataType::Float
                               : *wt != DataType::Float && *wt != DataType::Double && *wt != DataType::Float16)) {
      rw.rejected("type", absl::StrCat("the weight ", quoted(w), " of ", quoted(conv->result(0)),
                                       constantAddend ? " is not known to be float (a constant addend)"
                                                      : " is not known to be float, double or float16"));
      continue;
    }
    int64_t rank = staticRankOf(w);
    NodeContext cc(*conv);
    int64_t group = cc.getInt("group", 1);
    int64_t m = conv->is("Conv") ? staticDimOf(w, 0)
                                 : (staticDimOf(w, 1) < 0 ? -1 : staticDimOf(w, 1) * group);
    if (rank < 3 || m <= 0) {
      rw.rejected("channels", absl::StrCat("the weight ", quoted(w), " of ", quoted(conv->result(0)),
                                           " has no known rank of 3 or more and output channel count"));
      continue;
    }
    std::optional<FloatConst> b;
    if (conv->numOperands() > 2 && conv->operand(2)) {
      b = floatConstant(conv->operand(2));
      if (!b || b->dims != std::vector<int64_t>{m} || !allFinite(b->values)) {
        rw.rejected("bias", absl::StrCat("the bias ", quoted(conv->operand(2)), " of ", quoted(conv->result(0)),
                                         " is not a finite float [", m, "] constant"));
        continue;
      }
    }
    if (!PatternRewriter::constantTensor(add.operand(1 - i))) {
      if (addendAsBias(add, *conv, i, rank, m, rw)) return true;
      continue;
    }
    auto c = floatConstant(add.operand(1 - i));
    if (!c || !allFinite(c->values)) { // Note [Finite folds]
      rw.rejected("finite", absl::StrCat(quoted(add.operand(1 - i)), " is not a float constant of finite values "
                                         "(Note [Finite folds])"));
      continue;
    }
    auto k = channelAddend(add, i, *conv, *c, rank, m, rw);
    if (!k) continue;
    std::vector<double> bias = biasOrZero(b, m);
    for (int64_t j = 0; j < m; ++j) bias[j] += (*k)[j];
    if (!allFiniteAsFloat(bias)) { // Note [Finite folds]
      rw.rejected("finite", absl::StrCat("the bias of ", quoted(conv->result(0)), " plus ", quoted(add.operand(1 - i)),
                                         " is not finite in float (Note [Finite folds])"));
      continue;
    }
    std::vector<float> bf(bias.begin(), bias.end());
    rw.setInsertionPoint(conv);
    std::string bname = b ? conv->operand(2)->name().str() : conv->result(0)->name().str() + "_bias";
    rw.setOperand(conv, 2, rw.createConstant(bname, makeFloatTensor({m}, bf)));
    return rw.replaceNode(&add, {conv->result(0)});
  }
  return false;
}

// Note [Pad into pooling and Conv]
//   A Pad of the spatial dims only (constant mode, pads >= 0, as the
//   attribute before the operand form, pads and constant_value operands
//   constant, no `axes`) feeding a Conv, AveragePool or MaxPool with
//   auto_pad NOTSET goes into the consumer's own pads, where the consumer
//   gives the padded cells the value the Pad wrote:
//    - Conv pads with +0.0: the Pad's value must be +0.0 (a -0.0 could
//      change the sign of a zero sum).
//    - AveragePool counts padded cells in its divisor with
//      count_include_pad = 1 only: then they are +0.0 cells of the window
//      as the Pad's were (value +0.0); with 0 they would leave the average.
//    - MaxPool never picks a padded cell: the Pad's value must be -inf
//      (float types), the Indices result unused (they count in the padded
//      tensor), every window must hold a real cell (dilations 1, ceil_mode
//      0, each total pad below the kernel) so that an all-padding window
//      never arises.
//   Pools need ceil_mode 0 (a partial last window is clipped against the
//   pads) and a total pad below the kernel (onnxruntime refuses more).
//   Exact: the consumer reads the same cells with the same values.
bool fusePadInto(Node &n, PatternRewriter &rw) {
  if (n.numOperands() < 1 || n.numResults() < 1) return false;
  Node *pad = rw.singleUseProducer(n, 0, "Pad");
  if (!pad || pad->numOperands() < 1 || !pad->operand(0)) return false;
  for (const Node *x : {(const Node *)&n, (const Node *)pad})
    for (unsigned a = 0; a < x->numAttributes(); ++a)
      if (x->attribute(a).isReference()) return false;
  int64_t v = rw.opsetVersion();
  if (v < firstVersionWithAttribute("Pad", "pads")) return false; // Pad-1: `paddings`
  NodeContext pc(*pad), nc(n);
  std::vector<int64_t> pads;
  double value = 0;
  if (v < firstVersionWithInput("Pad", "pads")) {
    auto p = pc.getInts("pads");
    if (!p || pad->numOperands() != 1) return false;
    pads = *p;
    value = pc.getFloat("value", 0.0f);
  } else {
    if (pad->numOperands() < 2 || !pad->operand(1))
      return rw.rejected("pads", "Pad has no pads operand");
    auto p = constantInts(pad->operand(1));
    if (!p) return rw.rejected("pads", "the pads of the Pad are not a constant");
    pads = *p;
    if (pad->numOperands() > 3 && pad->operand(3))
      return rw.rejected("axes", "the Pad has an axes operand");
    if (pad->numOperands() > 2 && pad->operand(2)) {
      const Tensor *t = PatternRewriter::constantTensor(pad->operand(2));
      auto vals = t ? t->values<double>() : absl::StatusOr<std::vector<double>>();
      if (!t || !vals.ok() || vals->size() != 1)
        return rw.rejected("value", "the Pad's constant_value is not a constant scalar");
      value = (*vals)[0];
    }
  }
  if (pc.getString("mode", "constant") != "constant")
    return rw.rejected("mode", "the Pad's mode is " + pc.getString("mode", "constant"));
  if (pads.size() < 6 || pads.size() % 2) return false;
  size_t rank = pads.size() / 2, k = rank - 2;
  if (pads[0] || pads[1] || pads[rank] || pads[rank + 1])
    return rw.rejected("spatial", "the Pad pads the batch or channel dim");
  for (int64_t p : pads)
    if (p < 0) return rw.rejected("negative", "the Pad crops (a negative pad)");
  std::string autoPad = nc.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET") return rw.rejected("auto_pad", n.opType().str() + " has auto_pad " + autoPad);
  std::vector<int64_t> np = nc.getInts("pads").value_or(std::vector<int64_t>(2 * k, 0));
  if (np.size() != 2 * k) return false;
  for (size_t i = 0; i < k; ++i) {
    np[i] += pads[2 + i];
    np[k + i] += pads[rank + 2 + i];
  }
  bool positiveZero = value == 0 && !std::signbit(value);
  if (n.is("Conv")) {
    if (!positiveZero) return rw.rejected("value", "the Pad's value is not +0.0");
  } else {
    bool isMax = n.is("MaxPool");
    if (nc.getInt("ceil_mode", 0) != 0) return rw.rejected("ceil_mode", "the pool has ceil_mode 1");
    auto kernel = nc.getInts("kernel_shape");
    if (!kernel || kernel->size() != k) return false;
    for (size_t i = 0; i < k; ++i)
      if (np[i] >= (*kernel)[i] || np[k + i] >= (*kernel)[i])
        return rw.rejected("kernel", "the pads would reach the kernel's size");
    if (!isMax) {
      if (nc.getInt("count_include_pad", 0) != 1)
        return rw.rejected("count_include_pad", "AveragePool has count_include_pad 0");
      if (!positiveZero) return rw.rejected("value", "the Pad's value is not +0.0");
    } else {
      auto et = staticElemOf(pad->operand(0));
      if (!et || !isFloatingPoint(*et) || !(std::isinf(value) && value < 0))
        return rw.rejected("value", "the Pad's value is not -inf");
      for (int64_t d : nc.getInts("dilations").value_or(std::vector<int64_t>(k, 1)))
        if (d != 1) return rw.rejected("dilations", "MaxPool has dilations");
      for (unsigned r = 1; r < n.numResults(); ++r)
        if (n.result(r) && !n.result(r)->useEmpty())
          return rw.rejected("indices", "MaxPool's Indices are used");
    }
  }
  n.setAttr(intsAttr("pads", np));
  if (n.getAttr("auto_pad")) n.removeAttr("auto_pad");
  rw.setOperand(&n, 0, pad->operand(0));
  return true;
}

// Log(Softmax(x, axis)) -> LogSoftmax(x, axis), the Softmax used once.
// Softmax and LogSoftmax changed at the same versions (1, 11: the input
// coerced to 2-D at axis; 13: one axis), so the axis means the same at any
// opset. Contract: not bit-exact: LogSoftmax computes x - max - log(sum
// exp(x - max)) in one op, within a few ulps of the two-op result where
// that is finite, and finite where Softmax underflows to 0 and the two-op
// graph gives -inf. Fewer ops and never less accurate: in -O2 (fuse), as
// onnxoptimizer does it.
bool fuseLogSoftmax(Node &log, PatternRewriter &rw) {
  if (log.numOperands() != 1 || log.numResults() != 1) return false;
  Node *sm = rw.singleUseProducer(log, 0, "Softmax");
  if (!sm || sm->numOperands() != 1 || !sm->operand(0) || sm->numResults() != 1) return false;
  const Attribute *axis = sm->getAttr("axis");
  if (axis && axis->isReference()) return false;
  if (!rw.canReplace(log.result(0), sm->result(0)))
    return rw.rejected("output", absl::StrCat("graph output ", quoted(log.result(0)),
                                              " cannot be taken over by a LogSoftmax (its name or type)"));
  Node *ls = rw.create("LogSoftmax", {sm->operand(0)});
  if (axis) ls->setAttr(intAttr("axis", NodeContext(*sm).getInt("axis", 0)));
  PatternRewriter::copyNodeInfo(log, *ls);
  ls->result(0)->setType(log.result(0)->type());
  return rw.replaceNode(&log, {ls->result(0)});
}

// Einsum("P i j, P j k -> P i k") -> MatMul for a batch prefix P of
// distinct letters (none or more) and distinct i, j, k outside P, and
// Einsum("P i j, P k j -> P i k") -> MatMul(x, Transpose(y)) (the last two
// axes of y swapped, as onnxoptimizer does for attention scores), operand
// ranks known to be the subscripts' lengths, batch dims known and equal
// (MatMul would broadcast a 1 that Einsum refuses), float types.
// Contract: the same products summed over j; the summation order is the
// implementation's in both, so not bit-exact in general.
bool fuseEinsumMatMul(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2 || n.numResults() != 1 || !n.operand(0) || !n.operand(1)) return false;
  const Attribute *eq = n.getAttr("equation");
  if (!eq || eq->isReference()) return false;
  std::string e;
  for (char ch : NodeContext(n).getString("equation")) if (ch != ' ') e.push_back(ch);
  size_t arrow = e.find("->"), comma = e.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return false;
  std::string a = e.substr(0, comma), b = e.substr(comma + 1, arrow - comma - 1),
              o = e.substr(arrow + 2);
  if (a.size() < 2 || a.size() != b.size() || a.size() != o.size()) return false;
  for (const std::string *t : {&a, &b, &o})
    for (char ch : *t)
      if (!std::isalpha((unsigned char)ch)) return false;
  size_t p = a.size() - 2;
  std::string batch = a.substr(0, p);
  char i = a[p], j = a[p + 1];
  // The second operand as [P, j, k], or transposed as [P, k, j].
  bool transposed = b[p] != j;
  char k = transposed ? b[p] : b[p + 1];
  if (b.compare(0, p, batch) || o.compare(0, p, batch) || (transposed ? b[p + 1] : b[p]) != j ||
      o[p] != i || o[p + 1] != k)
    return false;
  std::string letters = batch + i + j + k;
  std::string sorted = letters;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  Value *x = n.operand(0), *y = n.operand(1);
  if (staticRankOf(x) != (int64_t)a.size() || staticRankOf(y) != (int64_t)a.size())
    return rw.rejected("rank", "an operand's rank is not known to be " + std::to_string(a.size()));
  for (size_t d = 0; d < p; ++d)
    if (staticDimOf(x, (unsigned)d) < 0 || staticDimOf(x, (unsigned)d) != staticDimOf(y, (unsigned)d))
      return rw.rejected("batch", "batch dim " + std::to_string(d) + " not known equal");
  auto et = staticElemOf(x);
  if (!et || staticElemOf(y) != et ||
      (*et != DataType::Float && *et != DataType::Double && *et != DataType::Float16))
    return rw.rejected("type", "not a float, double or float16 product");
  if (transposed) {
    std::vector<int64_t> perm;
    for (size_t d = 0; d < p; ++d) perm.push_back((int64_t)d);
    perm.push_back((int64_t)p + 1);
    perm.push_back((int64_t)p);
    Node *t = rw.create("Transpose", {y});
    t->setAttr(intsAttr("perm", perm));
    y = t->result(0);
  }
  Node *mm = rw.create("MatMul", {x, y});
  PatternRewriter::copyNodeInfo(n, *mm);
  mm->result(0)->setType(n.result(0)->type());
  return rw.replaceNode(&n, {mm->result(0)});
}

} // namespace

void populateFusionPatterns(PatternSet &ps, const FusionOptions &opts) {
  // Conv absorbs BN before BN could become Mul + Add (higher benefit).
  ps.add("fuse-conv-bn", "BatchNormalization", fuseConvBN, 2);
  ps.add("fuse-conv-add", "Add", [](Node &n, PatternRewriter &rw) {
    return fuseConvAffine(n, rw, false);
  }, 2);
  ps.add("fuse-conv-mul", "Mul", [](Node &n, PatternRewriter &rw) {
    return fuseConvAffine(n, rw, true);
  }, 2);
  ps.add("fuse-conv-add-bias", "Add", fuseConvAddBias, 2);
  ps.add("fuse-matmul-add-gemm", "Add", fuseMatMulAdd, 1, {"Gemm"});
  ps.add("fuse-gemm-rows", "Add", fuseGemmRows, 1, {"Gemm"});
  ps.add("fuse-pad-conv", "Conv", fusePadInto);
  ps.add("fuse-pad-averagepool", "AveragePool", fusePadInto);
  ps.add("fuse-pad-maxpool", "MaxPool", fusePadInto);
  ps.add("fuse-log-softmax", "Log", fuseLogSoftmax, 1, {"LogSoftmax"});
  ps.add("fuse-einsum-matmul", "Einsum", fuseEinsumMatMul, 1, {"MatMul"});
  ps.add("fuse-transpose-gemm", "Gemm", fuseTransposeGemm);
  ps.add("remove-dropout", "Dropout", removeDropout);
  ps.add("remove-identity", "Identity", removeIdentity);
  if (opts.batchNormToMulAdd) ps.add("bn-to-mul-add", "BatchNormalization", bnToMulAdd);
  populateAttentionPatterns(ps);
  populateNormFusionPatterns(ps); // NormFusions.cpp
}

absl::StatusOr<bool> fuseOperators(Model &m, const FusionOptions &opts, RewriteStatistics *stats) {
  PatternSet ps;
  populateFusionPatterns(ps, opts);
  if (!opts.disabledPatterns.empty())
    if (absl::Status s = ps.disable(opts.disabledPatterns); !s.ok()) return s;
  GreedyRewriteConfig cfg;
  cfg.explain = opts.explain;
  return applyPatternsGreedily(m, ps, cfg, stats);
}

//===----------------------------------------------------------------------===//
// The fuse pass
//===----------------------------------------------------------------------===//

namespace {
class FusePass : public OptionsPass<FusionOptions> {
public:
  FusePass()
      : OptionsPass("fuse",
                    "Fuse Conv+BatchNormalization/Add/Mul, Pad into Conv/AveragePool/MaxPool, "
                    "MatMul+Add into Gemm, Einsum into MatMul, Log+Softmax into LogSoftmax, "
                    "Transpose into "
                    "Gemm, LayerNorm/RMSNorm/GELU chains into "
                    "LayerNormalization/RMSNormalization/Gelu; remove inference-mode Dropout and "
                    "Identity") {}
  absl::StatusOr<bool> run(Model &m) override {
    RewriteStatistics s;
    auto r = fuseOperators(m, optionValues(), &s);
    if (!r.ok()) return r;
    if (absl::Status b = reportPatternBugs(s, [this](std::string w) { warn(std::move(w)); });
        !b.ok())
      return b;
    for (auto &[name, n] : s.applications) addStat(name, n);
    // The census (Note [Fusion census]): `-stats` and `--summary` print it.
    for (auto &[op, n] : s.made) addStat("made " + op, n);
    addStat("dead nodes erased", s.deadNodesErased);
    // Each distinct line is printed once however many -O2 rounds repeat it.
    for (const NearMiss &nm : s.nearMisses)
      remark("fusion report: " + nm.pattern + " not applied at " + nm.node + ": " + nm.guard +
             ": " + nm.why);
    return r;
  }

private:
  Field<bool> bnToMulAdd_{*this, &FusionOptions::batchNormToMulAdd, "bn-to-mul-add",
                          "turn BatchNormalization that no Conv absorbs into Mul + Add",
                          "fuse-bn-to-mul-add"};
  Field<std::string> disable_{*this, &FusionOptions::disabledPatterns, "disable",
                              "patterns not to apply (comma-separated names)", "fuse-disable"};
  Field<bool> explain_{*this, &FusionOptions::explain, "explain",
                       "report each candidate a pattern matched partly and the guard that "
                       "rejected it (node and reason)",
                       "fusion-report"};
};
} // namespace

std::unique_ptr<Pass> createFusePass() { return std::make_unique<FusePass>(); }

} // namespace onnxir
