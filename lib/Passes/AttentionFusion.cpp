//===- AttentionFusion.cpp - Scaled dot-product attention -> Attention ----===//
//
// The pattern `fuse-attention` (populateAttentionPatterns, Fusions.h) turns
// softmax(Q·Kᵀ * scale [+ mask]) · V into ONNX Attention (opset 23 and
// later), in the forms exporters produce:
//  - Kᵀ a Transpose of K (any perm that swaps the last two axes of the
//    tensor it reads, so a head split fused into it is seen through) or K
//    given already transposed (a Transpose is made for Attention);
//  - the scale a scalar constant multiplying or dividing the scores, or
//    split over Q and Kᵀ (each a Mul or Div by a scalar constant), or none;
//  - an additive mask (Add to the scores, either order), or a boolean mask
//    through Where with -inf (masked_fill), in either branch order; a mask
//    that is provably the lower triangle of a square Q/K sequence (or, when
//    it says what to fill, the strict upper one) becomes is_causal = 1; a
//    mask of 1 along q_seq is expanded (Note [Attention mask shape]);
//  - the 4-D form (batch, heads, seq, head_size), with one K/V head
//    broadcast over Q's heads (multi-query); 3-D (batch * heads, seq,
//    head_size) scores as a 4-D Attention of batch 1 through
//    Unsqueeze/Squeeze, or, when they are nn.MultiheadAttention's
//    sequence-first head split and merge, the 3-D form (Note
//    [Sequence-first heads]);
//  - the head split (Reshape [B,S,H*D] -> [B,S,H,D], Transpose [0,2,1,3],
//    or timm's packed Reshape [B,S,3,H,D] / Transpose / Split / Squeeze)
//    and merge (Transpose [0,2,1,3], Reshape -> [B,S,H*Dv]) absorbed into
//    the 3-D form with q_num_heads/kv_num_heads when all of them are there;
//  - grouped KV heads: K and V repeated per head (HF's repeat_kv,
//    Unsqueeze/Expand/Reshape) are peeled off a 4-D Attention by the pattern
//    `fuse-attention-gqa` (Note [Grouped KV heads]), so Attention reads
//    kv_num_heads < q_num_heads heads (and the head split under the repeat
//    joins the 3-D form).
// Not fused (near-misses or no candidates): masks sliced from a fixed-size
// buffer (dims min(P, T), not provably T), attention with a past (KV cache)
// or softcap. Not peeled (the Attention reads the repeated K/V): a repeat in
// tile order [k0, k1, k0, k1] (Tile, or Unsqueeze at axis 1) or along
// another axis, K and V repeated differently. (torch 1.13 exports
// repeat_interleave(k, n, dim=1) with dynamic axes wrongly: that model fails
// on onnxruntime. At fixed shapes it is a Concat of per-head repeats, which
// is peeled.)
//
// The pattern `fuse-rotary-embedding` is described above its code.
//
// Note [Attention numerical contract]
//   Attention-23 computes softmax((Q*sqrt(s)) (K*sqrt(s))ᵀ + bias) V with s
//   the `scale` attribute, softmax in the input's precision (no
//   softmax_precision is set, so none is changed). Against the unfused
//   graph: (1) the scale is applied once, as the product of the matched
//   constants rounded once to float, where the graph divided or multiplied
//   (one or two roundings of each score): a relative difference of a few
//   ulps in each score before softmax; (2) a boolean mask means a bias of
//   -inf exactly where the graph filled -inf (other fill values are not
//   fused); (3) a fully masked row, which is NaN in the graph (softmax of
//   all -inf), is a zero row in Attention: only NaN outputs change;
//   (4) is_causal is set only when the mask provably is the lower triangle
//   j <= i of a square sequence (no past), which is what is_causal means
//   then. An additive mask is added to the scaled scores as in the graph.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Fusions.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace onnxir {

namespace {

//===----------------------------------------------------------------------===//
// Guards and their reasons
//===----------------------------------------------------------------------===//

/// A candidate that a guard rejected (Note [Near-miss reports]): `guard`
/// names the guard (a short stable word), `why` names the nodes and values.
/// Returns false (nothing changed) so that `return miss(...)` ends a
/// pattern. Candidates are rare (a Softmax feeding a MatMul, an Add of two
/// Muls over a Concat), so the messages are built unconditionally.
bool miss(PatternRewriter &rw, llvm::StringRef guard, const std::string &why) {
  return rw.rejected(guard, why);
}

/// A node in a report: its name, or the value it makes (`-> 'p'`).
std::string q(const Node *n) {
  if (!n) return "''";
  if (!n->name().empty() || n->numResults() == 0 || !n->result(0)) return "'" + n->name().str() + "'";
  return "-> '" + n->result(0)->name().str() + "'";
}
std::string num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
std::string q(const Value *v) { return "'" + (v ? v->name().str() : std::string()) + "'"; }

bool isOne(const Dim &d) { return d.isKnown() && d.value == 1; }
std::string dimStr(const Dim &d) {
  if (d.isKnown()) return std::to_string(d.value);
  if (d.isSymbolic()) return d.param.str();
  return "?";
}
bool attentionFloat(std::optional<DataType> t) {
  return t && (*t == DataType::Float || *t == DataType::Float16 || *t == DataType::Double ||
               *t == DataType::BFloat16);
}

/// The value of a constant with exactly one element (a scalar or [1, ...]).
std::optional<double> scalarConstant(const Value *v) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t) return std::nullopt;
  for (int64_t d : t->dims())
    if (d != 1) return std::nullopt;
  DataType dt = t->dataType();
  if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16 &&
      dt != DataType::BFloat16)
    return std::nullopt;
  auto vals = t->values<double>();
  if (!vals.ok() || vals->size() != 1) return std::nullopt;
  return (*vals)[0];
}

/// scalarConstant(c) for a constant combined elementwise with `x`, which
/// the fused op absorbs: only when it cannot broadcast x up (rank <= x's
/// known rank) and has x's element type where that is known.
std::optional<double> absorbedScalar(const Value *c, const Value *x) {
  const Tensor *t = PatternRewriter::constantTensor(c);
  int64_t r = rankOf(x);
  if (!t || r < 0 || (int64_t)t->dims().size() > r) return std::nullopt;
  if (auto et = elemOf(x); et && *et != t->dataType()) return std::nullopt;
  return scalarConstant(c);
}

/// No attribute of `n` refers to a function attribute (we read their values).
bool plainAttributes(const Node &n) {
  for (unsigned a = 0; a < n.numAttributes(); ++a)
    if (n.attribute(a).isReference()) return false;
  return true;
}

/// Peels a Mul or Div of `v` by a scalar float constant (single local use):
/// returns the other operand and multiplies `scale` by the factor.
Value *peelScale(Value *v, PatternRewriter &rw, double &scale, std::vector<Node *> &seen) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || d->getGraph() != rw.root()->getGraph() || d->numOperands() != 2 ||
      !PatternRewriter::hasSingleLocalUse(v))
    return v;
  if (d->is("Mul")) {
    for (unsigned i = 0; i < 2; ++i)
      if (auto c = absorbedScalar(d->operand(1 - i), d->operand(i));
          c && !PatternRewriter::constantTensor(d->operand(i))) {
        scale *= *c;
        seen.push_back(d);
        return d->operand(i);
      }
  } else if (d->is("Div")) {
    if (auto c = absorbedScalar(d->operand(1), d->operand(0))) {
      scale /= *c;
      seen.push_back(d);
      return d->operand(0);
    }
  }
  return v;
}

/// A tensor seen as Transpose(src, perm) (perm empty: src itself).
struct Permuted {
  Value *src = nullptr;
  std::vector<int64_t> perm;
  bool identity() const {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != (int64_t)i) return false;
    return true;
  }
};

/// The permutation of a Transpose node (its default reverses the axes).
std::optional<std::vector<int64_t>> transposePerm(const Node &t) {
  if (!plainAttributes(t) || t.numOperands() != 1) return std::nullopt;
  if (const Attribute *p = t.getAttr("perm")) return p->ints;
  int64_t r = rankOf(t.operand(0));
  if (r < 0) return std::nullopt;
  std::vector<int64_t> perm;
  for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

/// `v` as a permutation of another value: through a Transpose with a single
/// local use, or itself.
Permuted asPermuted(Value *v, PatternRewriter &rw) {
  Node *d = v ? v->definingNode() : nullptr;
  if (d && d->is("Transpose") && d->getGraph() == rw.root()->getGraph() &&
      PatternRewriter::hasSingleLocalUse(v))
    if (auto p = transposePerm(*d)) return {d->operand(0), *p};
  Permuted p{v, {}};
  for (int64_t i = 0, r = rankOf(v); i < r; ++i) p.perm.push_back(i);
  return p;
}

//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

/// True if the boolean `attend` (true = attend) is provably the lower
/// triangle j <= i of a [Sq, Skv] matrix with Sq = Skv the sequence dims of
/// the scores: Trilu(upper = 0, k = 0 or absent) of an all-true
/// ConstantOfShape, or a constant bool [n, n] tensor that is exactly that.
/// With `negated`, `attend` is the mask of what is NOT attended, and must
/// be the strict upper triangle: Trilu(upper = 1, k = 1) of all-true (torch's
/// triu(ones, 1) filled with -inf), or such a constant.
bool provablyCausal(const Value *attend, const Dim &sq, const Dim &skv, bool negated = false) {
  if (!sameDim(sq, skv) || rankOf(attend) != 2 || !sameDim(dimOf(attend, 0), sq) ||
      !sameDim(dimOf(attend, 1), skv))
    return false;
  if (const Tensor *t = PatternRewriter::constantTensor(attend)) {
    if (t->dataType() != DataType::Bool || t->dims().size() != 2) return false;
    auto vals = t->values<int64_t>();
    int64_t n = t->dims()[0];
    if (!vals.ok() || t->dims()[1] != n || (int64_t)vals->size() != n * n) return false;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (((*vals)[i * n + j] != 0) != (negated ? j > i : j <= i)) return false;
    return true;
  }
  Node *tr = attend->definingNode();
  if (!tr || !tr->is("Trilu") || !plainAttributes(*tr) ||
      NodeContext(*tr).getInt("upper", 1) != (negated ? 1 : 0))
    return false;
  int64_t k = 0;
  if (tr->numOperands() > 1 && tr->operand(1)) {
    const Tensor *kt = PatternRewriter::constantTensor(tr->operand(1));
    auto kv = kt ? kt->values<int64_t>() : absl::StatusOr<std::vector<int64_t>>(absl::UnknownError(""));
    if (!kv.ok() || kv->size() != 1) return false;
    k = (*kv)[0];
  }
  if (k != (negated ? 1 : 0)) return false;
  Node *ones = tr->operand(0) ? tr->operand(0)->definingNode() : nullptr;
  if (!ones || !ones->is("ConstantOfShape") || !plainAttributes(*ones)) return false;
  const Attribute *val = ones->getAttr("value");
  if (!val || val->kind() != AttrKind::Tensor || val->tensors.empty() || !val->tensors.get()[0])
    return false;
  const Tensor &vt = *val->tensors.get()[0];
  if (vt.dataType() != DataType::Bool) return false;
  auto vv = vt.values<int64_t>();
  return vv.ok() && vv->size() == 1 && (*vv)[0] != 0;
}

//===----------------------------------------------------------------------===//
// The pattern
//===----------------------------------------------------------------------===//

/// What matched, from the root MatMul (probabilities · V) up.
struct AttentionMatch {
  Node *softmax = nullptr;
  Value *q = nullptr;  ///< Q (scale factors peeled off)
  Permuted k;          ///< K = Transpose(k.src, k.perm) (the un-transposed Kᵀ)
  Value *v = nullptr;  ///< V
  double scale = 1.0;
  Value *mask = nullptr; ///< the attn_mask operand (bool: true = attend)
  bool boolMask = false;
  bool maskNegated = false; ///< attend = Not(mask)
  bool expandQ = false;     ///< the mask is 1 along q_seq (Note [Attention mask shape])
  bool causal = false;
};

/// Peels the mask off the softmax input `s`; returns the scores below it.
Value *peelMask(Value *s, PatternRewriter &rw, AttentionMatch &m) {
  Node *d = s->definingNode();
  if (!d || d->getGraph() != rw.root()->getGraph() || !PatternRewriter::hasSingleLocalUse(s))
    return s;
  auto isScores = [&](Value *x) {
    double unused = 1;
    std::vector<Node *> seen;
    Value *y = peelScale(x, rw, unused, seen);
    Node *mm = y ? y->definingNode() : nullptr;
    return mm && mm->is("MatMul") && PatternRewriter::hasSingleLocalUse(y);
  };
  if (d->is("Add") && d->numOperands() == 2) {
    for (unsigned i = 0; i < 2; ++i)
      if (isScores(d->operand(i))) {
        m.mask = d->operand(1 - i);
        return d->operand(i);
      }
  } else if (d->is("Where") && d->numOperands() == 3) {
    for (unsigned i = 1; i < 3; ++i) {
      auto fill = absorbedScalar(d->operand(3 - i), d->operand(i));
      if (!fill || !isScores(d->operand(i))) continue;
      if (!(std::isinf(*fill) && *fill < 0)) {
        miss(rw, "mask-fill",
             "Where " + q(d) + " fills " + num(*fill) +
                 ", not -inf: Attention's boolean mask is a bias of -inf");
        return nullptr;
      }
      m.mask = d->operand(0);
      m.boolMask = true;
      // Where(c, S, -inf) attends where c; Where(c, -inf, S) where !c.
      m.maskNegated = i == 2;
      if (m.maskNegated)
        if (Node *n = m.mask->definingNode(); n && n->is("Not") && n->numOperands() == 1) {
          m.mask = n->operand(0);
          m.maskNegated = false;
        }
      return d->operand(i);
    }
  }
  return s;
}

/// The mask's dims broadcast to `scores` (right-aligned, each 1 or equal)
/// without changing its shape, as Attention broadcasts attn_mask; its last
/// dim is the kv sequence length itself, its last but one the q sequence
/// length or 1 (`expandQ`: it must be expanded for onnxruntime).
// Note [Attention mask shape]
//   Attention-23 says attn_mask broadcasts to (batch, q_heads, q_seq,
//   total_seq), but onnxruntime 1.30's CPU kernel requires its last two
//   dims to be q_seq and total_seq (a [B, 1, 1, T] key-padding mask is
//   refused at run time: "inconsistent q_sequence_length"). A fused model
//   that the main runtime cannot run is no gain: a mask with 1 for q_seq
//   (the key-padding masks of encoders) is expanded along it first
//   (Expand to [q_seq, 1], q_seq read by Shape from Q: exact, the same
//   values repeated); one with 1 for the kv sequence is not fused.
bool maskBroadcasts(const Value *mask, const Value *scores, bool &expandQ, std::string &why) {
  int64_t r = rankOf(mask), rs = rankOf(scores);
  expandQ = false;
  if (r >= 2 && (!sameDim(dimOf(mask, -1), dimOf(scores, -1)) ||
                 !(sameDim(dimOf(mask, -2), dimOf(scores, -2)) || isOne(dimOf(mask, -2))))) {
    why = "mask " + q(mask) + " is [.., " + dimStr(dimOf(mask, -2)) + ", " + dimStr(dimOf(mask, -1)) +
          "], not [.., q_seq or 1, kv_seq] = [.., " + dimStr(dimOf(scores, -2)) + ", " +
          dimStr(dimOf(scores, -1)) + "] (Note [Attention mask shape])";
    return false;
  }
  if (r < 2 || r > rs) {
    why = "mask " + q(mask) + " has " + (r < 0 ? std::string("unknown rank") : "rank " + std::to_string(r)) +
          " against scores of rank " + std::to_string(rs);
    return false;
  }
  for (int64_t i = 1; i <= r; ++i) {
    Dim a = dimOf(mask, -i), b = dimOf(scores, -i);
    if (!isOne(a) && !sameDim(a, b)) {
      why = "mask " + q(mask) + " dim " + dimStr(a) + " does not provably broadcast to scores dim " +
            dimStr(b);
      return false;
    }
  }
  expandQ = !sameDim(dimOf(mask, -2), dimOf(scores, -2));
  return true;
}

/// The Reshape making `r`, in the root's graph, if `r` has no other use.
Node *singleUseReshape(Value *r, PatternRewriter &rw) {
  Node *rs = r ? r->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->getGraph() != rw.root()->getGraph() ||
      !PatternRewriter::hasSingleLocalUse(r) || rs->numOperands() < 1)
    return nullptr;
  return rs;
}

/// The head split `x` = Transpose(Reshape(x3, [B,S,H,D]), [0,2,1,3]) seen as
/// `p`: returns x3 ([B,S,H*D]) and H, or null.
Value *headSplitSource(const Permuted &p, PatternRewriter &rw, int64_t &heads) {
  if (p.perm != std::vector<int64_t>{0, 2, 1, 3}) return nullptr;
  Value *r = p.src;
  Node *rs = singleUseReshape(r, rw);
  if (!rs) return nullptr;
  Value *x3 = rs->operand(0);
  if (rankOf(x3) != 3 || rankOf(r) != 4) return nullptr;
  Dim h = dimOf(r, 2), d = dimOf(r, 3), e = dimOf(x3, 2);
  if (!sameDim(dimOf(x3, 0), dimOf(r, 0)) || !sameDim(dimOf(x3, 1), dimOf(r, 1)) || !h.isKnown() ||
      !d.isKnown() || !e.isKnown() || h.value * d.value != e.value)
    return nullptr;
  heads = h.value;
  return x3;
}

std::optional<std::vector<int64_t>> intConstant(const Value *v);

/// The packed head split of timm's ViT: Q, K, V the three Squeeze(axes 0)
/// of Split(axis 0) of Transpose(Reshape(x3 [B,S,3*H*D] -> [B,S,3,H,D]),
/// [2,0,3,1,4]), in that order, nothing else using any of them. Returns x3
/// and H: Q, K, V are then x3's three equal parts of its last axis.
Value *packedHeadSplitSource(Value *q, Value *k, Value *v, int64_t &heads) {
  Value *parts[3] = {q, k, v};
  Node *split = nullptr;
  for (unsigned i = 0; i < 3; ++i) {
    Node *sq = parts[i] ? parts[i]->definingNode() : nullptr;
    if (!sq || !sq->is("Squeeze") || sq->numOperands() != 2 || !PatternRewriter::hasSingleLocalUse(parts[i]))
      return nullptr;
    auto axes = intConstant(sq->operand(1));
    Value *part = sq->operand(0);
    Node *sp = part ? part->definingNode() : nullptr;
    if (!axes || *axes != std::vector<int64_t>{0} || !sp || !sp->is("Split") ||
        sp->numResults() != 3 || sp->result(i) != part || !PatternRewriter::hasSingleLocalUse(part) ||
        !isOne(dimOf(part, 0)) || (split && split != sp))
      return nullptr;
    split = sp;
  }
  if (!plainAttributes(*split) || NodeContext(*split).getInt("axis", 0) != 0 || split->numOperands() < 1)
    return nullptr;
  Node *tr = split->operand(0) ? split->operand(0)->definingNode() : nullptr;
  auto perm = tr && tr->is("Transpose") ? transposePerm(*tr) : std::nullopt;
  if (!perm || *perm != std::vector<int64_t>{2, 0, 3, 1, 4} ||
      !PatternRewriter::hasSingleLocalUse(split->operand(0)))
    return nullptr;
  Value *r = tr->operand(0);
  Node *rs = r ? r->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || !PatternRewriter::hasSingleLocalUse(r) || rs->numOperands() < 1)
    return nullptr;
  Value *x3 = rs->operand(0);
  Dim h = dimOf(r, 3), d = dimOf(r, 4), e = dimOf(x3, 2);
  if (rankOf(x3) != 3 || rankOf(r) != 5 || !sameDim(dimOf(x3, 0), dimOf(r, 0)) ||
      !sameDim(dimOf(x3, 1), dimOf(r, 1)) || !dimOf(r, 2).isKnown() || dimOf(r, 2).value != 3 ||
      !h.isKnown() || !d.isKnown() || !e.isKnown() || 3 * h.value * d.value != e.value)
    return nullptr;
  heads = h.value;
  return x3;
}

/// The head merge of a 4-D attention result `y` [B,H,S,Dv]: the Reshape
/// of its only use, Transpose [0,2,1,3], to [B,S,H*Dv] (H = `heads`).
Node *headMerge(Value *y, int64_t heads) {
  if (!PatternRewriter::hasSingleLocalUse(y)) return nullptr;
  Node *t = y->uses().begin()->getOwner();
  auto perm = t->is("Transpose") ? transposePerm(*t) : std::nullopt;
  if (!perm || *perm != std::vector<int64_t>{0, 2, 1, 3} || !PatternRewriter::hasSingleLocalUse(t->result(0)))
    return nullptr;
  Node *r = t->result(0)->uses().begin()->getOwner();
  if (!r->is("Reshape") || r->numResults() != 1) return nullptr;
  Value *out = r->result(0);
  Dim hd = dimOf(y, 3);
  if (r->operand(0) == t->result(0) && rankOf(out) == 3 &&
      sameDim(dimOf(out, 0), dimOf(y, 0)) && sameDim(dimOf(out, 1), dimOf(y, 2)) && hd.isKnown() &&
      dimOf(out, 2).isKnown() && dimOf(out, 2).value == heads * hd.value)
    return r;
  return nullptr;
}

// Note [Sequence-first heads]
//   nn.MultiheadAttention's export works on [S, B, E] tensors (sequence
//   first) and splits heads as Transpose(Reshape(t [S,B,E] -> [S,B*H,D]),
//   [1,0,2]) = [B*H, S, D], merging them back by Transpose [1,0,2] and a
//   Reshape to [S*B, E] or [S, B, E]. Row b*H + h of the reshape is head h
//   of batch b: element (s, b*H + h, d) sits at offset ((s*B + b)*H + h)*D
//   + d, which is element (s, b, h*D + d) of t. Attention's 3-D input
//   [B, S, H*D] reads its last axis as [H, D] per (b, s), so
//   Transpose(t, [1,0,2]) gives head h of batch b the same rows, and the
//   3-D result [B, S, H*Dv] transposed by [1,0,2] is the merge's [S, B, E]
//   (the same elements, the same order). B*H is proven from the types, not
//   from the shape operand: the reshape's dim 1 is the expression H * (t's
//   dim 1) (DimExpr.h), its dim 0 t's, its dim 2 D known with H*D = t's
//   dim 2, so the element counts agree for every value of the symbols.

/// The sequence-first head split `x` = Transpose(Reshape(t [S,B,E] ->
/// [S,B*H,D]), [1,0,2]) seen as `p` (Note [Sequence-first heads]): returns
/// t and H, or null.
Value *seqFirstHeadSplit(const Permuted &p, PatternRewriter &rw, int64_t &heads) {
  if (p.perm != std::vector<int64_t>{1, 0, 2}) return nullptr;
  Value *r = p.src;
  Node *rs = singleUseReshape(r, rw);
  if (!rs) return nullptr;
  Value *t = rs->operand(0);
  if (rankOf(t) != 3 || rankOf(r) != 3) return nullptr;
  Dim d = dimOf(r, 2), e = dimOf(t, 2);
  if (!sameDim(dimOf(t, 0), dimOf(r, 0)) || !d.isKnown() || !e.isKnown() || d.value <= 0 ||
      e.value % d.value || e.value / d.value < 1)
    return nullptr;
  int64_t h = e.value / d.value;
  Context &ctx = rw.getModel().getContext();
  const DimExpr *b = ctx.exprOf(dimOf(t, 1)), *bh = ctx.exprOf(dimOf(r, 1));
  if (!b || !bh || dimMul(ctx, dimConst(ctx, h), b) != bh) return nullptr;
  heads = h;
  return t;
}

/// The sequence-first head merge of a 3-D attention result `y` [B*H,S,Dv]
/// (Note [Sequence-first heads]): the Reshape of its only use, Transpose
/// [1,0,2], to [S*B, H*Dv] (rank 2) or [S, B, H*Dv] (`s`, `b` the dims of
/// Q's t).
Node *seqFirstHeadMerge(Value *y, int64_t heads, const Dim &s, const Dim &b) {
  if (!PatternRewriter::hasSingleLocalUse(y)) return nullptr;
  Node *t = y->uses().begin()->getOwner();
  auto perm = t->is("Transpose") ? transposePerm(*t) : std::nullopt;
  if (!perm || *perm != std::vector<int64_t>{1, 0, 2} || !PatternRewriter::hasSingleLocalUse(t->result(0)))
    return nullptr;
  Node *r = t->result(0)->uses().begin()->getOwner();
  if (!r->is("Reshape") || r->numResults() != 1 || r->operand(0) != t->result(0)) return nullptr;
  Value *out = r->result(0);
  Dim dv = dimOf(y, 2), e = dimOf(out, -1);
  if (!dv.isKnown() || !e.isKnown() || dv.value <= 0 || e.value != heads * dv.value) return nullptr;
  // Rank 2: dim 0 is S*B by the element count (E > 0).
  if (rankOf(out) == 2) return r;
  if (rankOf(out) == 3 && sameDim(dimOf(out, 0), s) && sameDim(dimOf(out, 1), b)) return r;
  return nullptr;
}

// Note [Rotary before the head split]
//   RotaryEmbedding of 4-D heads [B,H,S,D] = Transpose(Reshape(x3)) is
//   RotaryEmbedding of x3 [B,S,H*D] itself with num_heads = H, split after:
//   the operator reads a 4-D input as [B,H,S,D] transposed to [B,S,H,D] and
//   a 3-D one as [B,S,H*D] reshaped to [B,S,H,D], the same tensor, so the
//   rotation is the same arithmetic on the same elements (exact). So a Q or
//   K rotated after its head split (fuse-rotary-embedding on a LLaMA-style
//   export) does not stop the 3-D form: the rotation moves before the
//   split, which the 3-D Attention then absorbs.

/// headSplitSource, also through a RotaryEmbedding (4-D input, no
/// num_heads, single use) applied to the split heads: then `rope` is it.
Value *headSplitThroughRope(const Permuted &p, PatternRewriter &rw, int64_t &heads, Node *&rope) {
  rope = nullptr;
  Node *r = p.identity() && p.src ? p.src->definingNode() : nullptr;
  if (!r || !r->is("RotaryEmbedding")) return headSplitSource(p, rw, heads);
  if (r->numOperands() < 3 || r->numResults() != 1 || !plainAttributes(*r) || r->getAttr("num_heads") ||
      rankOf(p.src) != 4 || !PatternRewriter::hasSingleLocalUse(p.src) || r->getGraph() != rw.root()->getGraph())
    return nullptr;
  for (unsigned a = 0; a < r->numAttributes(); ++a)
    if (r->attribute(a).name() != "interleaved" && r->attribute(a).name() != "rotary_embedding_dim")
      return nullptr;
  Value *x3 = headSplitSource(asPermuted(r->operand(0), rw), rw, heads);
  if (x3) rope = r;
  return x3;
}

/// RotaryEmbedding `r` (of split heads) applied to x3 [B,S,H*D] instead.
Value *ropeOnHidden(Node *r, Value *x3, int64_t heads, PatternRewriter &rw) {
  std::vector<Value *> ops;
  ops.push_back(x3);
  for (unsigned i = 1; i < r->numOperands(); ++i) ops.push_back(r->operand(i));
  Node *n = rw.create("RotaryEmbedding", ops);
  NodeContext c(*r);
  if (r->getAttr("interleaved")) n->setAttr(intAttr("interleaved", c.getInt("interleaved", 0)));
  if (r->getAttr("rotary_embedding_dim"))
    n->setAttr(intAttr("rotary_embedding_dim", c.getInt("rotary_embedding_dim", 0)));
  n->setAttr(intAttr("num_heads", heads));
  PatternRewriter::copyNodeInfo(*r, *n);
  n->result(0)->setType(x3->type());
  return n->result(0);
}

bool fuseAttention(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  Node *sm = rw.singleUseProducer(root, 0, "Softmax");
  if (!sm) {
    Node *d = root.operand(0) ? root.operand(0)->definingNode() : nullptr;
    if (d && d->is("Softmax") && d->getGraph() == root.getGraph())
      return miss(rw, "single-use", "Softmax " + q(d) + " has another use than MatMul " + q(&root));
    return false;
  }
  if (sm->numOperands() != 1) return false;
  AttentionMatch m;
  m.softmax = sm;
  m.v = root.operand(1);
  // Opset: Attention's first version (Softmax's axis is per-axis by then).
  if (int64_t since = firstVersion("Attention"); rw.opsetVersion() < since)
    return miss(rw, "opset",
                "Softmax " + q(sm) + ", MatMul " + q(&root) + ": Attention needs opset " +
                    std::to_string(since) + ", the graph imports " + std::to_string(rw.opsetVersion()));
  Value *s = sm->operand(0);
  int64_t rank = rankOf(s);
  if (!plainAttributes(*sm)) return false;
  int64_t axis = NodeContext(*sm).getInt("axis", -1);
  if (rank < 0) return miss(rw, "rank", "scores " + q(s) + " of unknown rank");
  if (axis != -1 && axis != rank - 1)
    return miss(rw, "softmax-axis", "Softmax " + q(sm) + " over axis " + std::to_string(axis) +
                                        ", not the last of rank " + std::to_string(rank));

  // Mask, scale, Q·Kᵀ.
  Value *scores = peelMask(s, rw, m);
  if (!scores) return false;
  std::vector<Node *> scaleNodes;
  Value *qk = peelScale(scores, rw, m.scale, scaleNodes);
  Node *mm = qk ? qk->definingNode() : nullptr;
  if (mm && mm->is("MatMul") && !PatternRewriter::hasSingleLocalUse(qk))
    return miss(rw, "single-use", "scores MatMul " + q(mm) + " have another use");
  if (mm && (mm->is("Mul") || mm->is("Div")) && mm->numOperands() == 2) {
    Node *below = mm->operand(0) ? mm->operand(0)->definingNode() : nullptr;
    if (below && below->is("MatMul"))
      return miss(rw, "scale", mm->opType().str() + " " + q(mm) + " scales the scores by " +
                                   q(mm->operand(1)) + ", not a scalar constant");
  }
  if (!mm || !mm->is("MatMul") || mm->numOperands() != 2 || mm->getGraph() != root.getGraph())
    return false; // not an attention
  m.q = peelScale(mm->operand(0), rw, m.scale, scaleNodes);
  Value *kt = peelScale(mm->operand(1), rw, m.scale, scaleNodes);
  Permuted ktp = asPermuted(kt, rw);
  if (ktp.src != kt) { // a scale may sit under the Transpose too
    Value *inner = peelScale(ktp.src, rw, m.scale, scaleNodes);
    if (inner != ktp.src) ktp.src = inner;
  }
  if (ktp.perm.size() < 2) return miss(rw, "rank", "Kᵀ " + q(kt) + " of unknown rank");
  m.k = ktp;
  if (rankOf(m.k.src) != (int64_t)m.k.perm.size())
    return miss(rw, "rank", "K " + q(m.k.src) + " of unknown rank");
  std::swap(m.k.perm[m.k.perm.size() - 1], m.k.perm[m.k.perm.size() - 2]);

  // Ranks: Q, Kᵀ, V and the scores all 4-D, or all 3-D.
  if ((rank != 4 && rank != 3) || rankOf(m.q) != rank || rankOf(kt) != rank || rankOf(m.v) != rank)
    return miss(rw, "rank",
                "MatMul " + q(mm) + ", Softmax " + q(sm) + ", MatMul " + q(&root) + ": ranks Q " +
                    std::to_string(rankOf(m.q)) + ", Kᵀ " + std::to_string(rankOf(kt)) + ", V " +
                    std::to_string(rankOf(m.v)) + ", scores " + std::to_string(rank) +
                    "; Attention takes 4-D (or 3-D batch*heads) operands");
  auto et = elemOf(m.q);
  if (!attentionFloat(et) || elemOf(kt) != et || elemOf(m.v) != et)
    return miss(rw, "type", "Q, K, V of " + q(mm) + "/" + q(&root) +
                                " are not all of one of Attention's float types");

  // Shapes. 4-D: Q [b,hq,sq,d], Kᵀ [b,hk,d,skv], V [b,hk,skv,dv]; 3-D the
  // same without b (its batch is Attention's head axis).
  int64_t o = rank == 4 ? 1 : 0; // the heads axis
  if (rank == 4 && (!sameDim(dimOf(m.q, 0), dimOf(kt, 0)) || !sameDim(dimOf(m.q, 0), dimOf(m.v, 0))))
    return miss(rw, "batch", "batch dims of Q " + q(m.q) + ", Kᵀ " + q(kt) + ", V " + q(m.v) +
                                 " not provably equal");
  Dim hq = dimOf(m.q, o), hk = dimOf(kt, o), hv = dimOf(m.v, o);
  if (!sameDim(hk, hv) || !(sameDim(hq, hk) || isOne(hk)))
    return miss(rw, "heads", "heads of Q " + dimStr(hq) + ", K " + dimStr(hk) + ", V " + dimStr(hv) +
                                 ": not equal, nor K and V one head");
  // The kv sequence of Kᵀ and V need not be proven equal: the scores'
  // last dim is Kᵀ's (no broadcasting in a product's matrix dims; a mask
  // may not widen it, see maskBroadcasts), and P·V needs V's to be it.
  Dim sq = dimOf(m.q, -2), skv = dimOf(kt, -1);

  // The scale: positive and finite (Attention multiplies Q and K by its
  // square root).
  if (!(m.scale > 0) || !std::isfinite(m.scale) || !std::isfinite((float)m.scale))
    return miss(rw, "scale", "scale " + num(m.scale) + " of MatMul " + q(mm) +
                                 " is not a positive finite float");

  // The mask.
  if (m.mask) {
    auto mt = elemOf(m.mask);
    if (m.boolMask ? mt != DataType::Bool : mt != et)
      return miss(rw, "mask-type", "mask " + q(m.mask) + (m.boolMask ? " is not bool" : " is not of Q's type"));
    std::string why;
    if (!maskBroadcasts(m.mask, scores, m.expandQ, why)) return miss(rw, "mask-shape", why);
    if (m.boolMask && provablyCausal(m.mask, sq, skv, m.maskNegated)) m.causal = true;
  }

  // The 3-D form when the head split of Q, K, V and the merge of the
  // result are all there.
  Value *q3 = nullptr, *k3 = nullptr, *v3 = nullptr;
  Node *mergeR = nullptr;
  Value *packed = nullptr; // Q, K, V are the thirds of its last axis
  Node *qRope = nullptr, *kRope = nullptr; // rotary embeddings on split heads
  int64_t qHeads = 0, kvHeads = 0, vHeads = 0;
  if (rank == 4) {
    Permuted vp = asPermuted(m.v, rw);
    q3 = headSplitThroughRope(asPermuted(m.q, rw), rw, qHeads, qRope);
    k3 = q3 ? headSplitThroughRope(m.k, rw, kvHeads, kRope) : nullptr;
    v3 = k3 ? headSplitSource(vp, rw, vHeads) : nullptr;
    if (!q3 && m.k.identity())
      if ((packed = packedHeadSplitSource(m.q, m.k.src, m.v, qHeads))) {
        q3 = k3 = v3 = packed;
        kvHeads = vHeads = qHeads;
      }
    if (v3 && vHeads == kvHeads && qHeads % kvHeads == 0) mergeR = headMerge(root.result(0), qHeads);
  }
  // 3-D scores of sequence-first head splits (Note [Sequence-first
  // heads]): one batch B and H heads for Q, K and V (the scores' B*H rows
  // pair them one to one), and a mask that broadcasts to [B, H, Sq, Skv]
  // as it did to [B*H, Sq, Skv] (at most its last two dims).
  bool seqFirst = false;
  if (rank == 3 && (!m.mask || rankOf(m.mask) <= 2 || (rankOf(m.mask) == 3 && isOne(dimOf(m.mask, 0))))) {
    Permuted kp = m.k.identity() ? asPermuted(m.k.src, rw) : m.k;
    q3 = seqFirstHeadSplit(asPermuted(m.q, rw), rw, qHeads);
    k3 = q3 ? seqFirstHeadSplit(kp, rw, kvHeads) : nullptr;
    v3 = k3 ? seqFirstHeadSplit(asPermuted(m.v, rw), rw, vHeads) : nullptr;
    if (v3 && qHeads == kvHeads && vHeads == kvHeads && sameDim(dimOf(q3, 1), dimOf(k3, 1)) &&
        sameDim(dimOf(q3, 1), dimOf(v3, 1)))
      mergeR = seqFirstHeadMerge(root.result(0), qHeads, dimOf(q3, 0), dimOf(q3, 1));
    seqFirst = mergeR != nullptr;
  }

  // Rewrite.
  if (seqFirst) { // [S, B, E] -> [B, S, E]
    auto batchFirst = [&](Value *t) {
      Node *tr = rw.create("Transpose", {t});
      tr->setAttr(intsAttr("perm", {1, 0, 2}));
      std::vector<Dim> dims{dimOf(t, 1), dimOf(t, 0), dimOf(t, 2)};
      tr->result(0)->setType(rw.getModel().getContext().getTensorType(*et, llvm::ArrayRef<Dim>(dims)));
      return tr->result(0);
    };
    Value *q0 = q3, *k0 = k3;
    q3 = batchFirst(q3);
    k3 = k0 == q0 ? q3 : batchFirst(k3);
    v3 = v3 == q0 ? q3 : v3 == k0 ? k3 : batchFirst(v3);
  }
  Value *mask = m.causal ? nullptr : m.mask;
  if (mask && m.maskNegated) {
    Node *n = rw.create("Not", {mask});
    n->result(0)->setType(mask->type());
    mask = n->result(0);
  }
  if (mask && m.expandQ) {
    // [.., 1, kv] -> [.., q_seq, kv]: Expand to Concat(Shape(Q)[-2], [1]);
    // every form's Q operand (4-D, 3-D [B, S, hidden], packed, batch*heads)
    // has q_seq as its last but one dim.
    Value *qv = mergeR ? (packed ? packed : q3) : m.q;
    Node *sh = rw.create("Shape", {qv});
    sh->setAttr(intAttr("start", -2));
    sh->setAttr(intAttr("end", -1));
    auto &ctx = rw.getModel().getContext();
    sh->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
    Value *one = rw.createConstant(root.result(0)->name().str() + "_one", makeInt64Tensor({1}, {1}));
    Node *cat = rw.create("Concat", {sh->result(0), one});
    cat->setAttr(intAttr("axis", 0));
    cat->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{2}));
    Node *ex = rw.create("Expand", {mask, cat->result(0)});
    std::vector<Dim> dims(tensorType(mask)->dims().begin(), tensorType(mask)->dims().end());
    dims[dims.size() - 2] = sq;
    ex->result(0)->setType(ctx.getTensorType(*elemOf(mask), llvm::ArrayRef<Dim>(dims)));
    mask = ex->result(0);
  }
  auto setAttrs = [&](Node *a) {
    a->setAttr(floatAttr("scale", (float)m.scale));
    if (m.causal) a->setAttr(intAttr("is_causal", 1));
  };
  if (mergeR) {
    if (packed) {
      int64_t e = dimOf(packed, 2).value / 3;
      Value *sizes = rw.createConstant(root.result(0)->name().str() + "_qkv_split",
                                       makeInt64Tensor({3}, {e, e, e}));
      Node *sp = rw.create("Split", {packed, sizes}, 3);
      sp->setAttr(intAttr("axis", 2));
      std::vector<Dim> dims(tensorType(packed)->dims().begin(), tensorType(packed)->dims().end());
      dims[2] = Dim::known(e);
      const Type *t = rw.getModel().getContext().getTensorType(*et, llvm::ArrayRef<Dim>(dims));
      for (unsigned i = 0; i < 3; ++i) sp->result(i)->setType(t);
      q3 = sp->result(0);
      k3 = sp->result(1);
      v3 = sp->result(2);
    }
    // Note [Rotary before the head split]
    if (qRope) q3 = ropeOnHidden(qRope, q3, qHeads, rw);
    if (kRope) k3 = ropeOnHidden(kRope, k3, kvHeads, rw);
    std::vector<Value *> ops{q3, k3, v3};
    if (mask) ops.push_back(mask);
    Node *a = rw.create("Attention", ops);
    setAttrs(a);
    a->setAttr(intAttr("q_num_heads", qHeads));
    a->setAttr(intAttr("kv_num_heads", kvHeads));
    PatternRewriter::copyNodeInfo(root, *a);
    if (seqFirst) { // [B, Sq, Ev] back to the merge's [Sq, B, Ev] or [Sq*B, Ev]
      auto &ctx = rw.getModel().getContext();
      Dim ev = dimOf(mergeR->result(0), -1);
      std::vector<Dim> dims{dimOf(q3, 0), dimOf(q3, 1), ev};
      a->result(0)->setType(ctx.getTensorType(*et, llvm::ArrayRef<Dim>(dims)));
      Node *t = rw.create("Transpose", {a->result(0)});
      t->setAttr(intsAttr("perm", {1, 0, 2}));
      Value *out = t->result(0);
      if (rankOf(mergeR->result(0)) == 3) {
        PatternRewriter::copyNodeInfo(*mergeR, *t);
        out->setType(mergeR->result(0)->type());
      } else {
        std::vector<Dim> tdims{dims[1], dims[0], ev};
        out->setType(ctx.getTensorType(*et, llvm::ArrayRef<Dim>(tdims)));
        Value *shape = rw.createConstant(root.result(0)->name().str() + "_merge",
                                         makeInt64Tensor({2}, {-1, ev.value}));
        Node *r = rw.create("Reshape", {out, shape});
        PatternRewriter::copyNodeInfo(*mergeR, *r);
        r->result(0)->setType(mergeR->result(0)->type());
        out = r->result(0);
      }
      return rw.replaceNode(mergeR, {out});
    }
    a->result(0)->setType(mergeR->result(0)->type());
    return rw.replaceNode(mergeR, {a->result(0)});
  }
  Value *k = m.k.src;
  if (!m.k.identity()) {
    Node *t = rw.create("Transpose", {k});
    t->setAttr(intsAttr("perm", m.k.perm));
    std::vector<Dim> dims;
    for (int64_t p : m.k.perm) dims.push_back(dimOf(k, p));
    t->result(0)->setType(rw.getModel().getContext().getTensorType(*et, llvm::ArrayRef<Dim>(dims)));
    k = t->result(0);
  }
  Value *qv = m.q, *vv = m.v;
  Value *axes0 = nullptr;
  auto unsqueeze = [&](Value *x) {
    Node *u = rw.create("Unsqueeze", {x, axes0});
    std::vector<Dim> dims{Dim::known(1)};
    for (const Dim &d : tensorType(x)->dims()) dims.push_back(d);
    u->result(0)->setType(rw.getModel().getContext().getTensorType(*et, llvm::ArrayRef<Dim>(dims)));
    return u->result(0);
  };
  if (rank == 3) {
    axes0 = rw.createConstant(root.result(0)->name().str() + "_axes", makeInt64Tensor({1}, {0}));
    qv = unsqueeze(qv);
    k = unsqueeze(k);
    vv = unsqueeze(vv);
  }
  std::vector<Value *> ops{qv, k, vv};
  if (mask) ops.push_back(mask);
  Node *a = rw.create("Attention", ops);
  setAttrs(a);
  if (rank == 4) {
    PatternRewriter::copyNodeInfo(root, *a);
    a->result(0)->setType(root.result(0)->type());
    return rw.replaceNode(&root, {a->result(0)});
  }
  std::vector<Dim> dims{Dim::known(1)};
  for (const Dim &d : tensorType(root.result(0))->dims()) dims.push_back(d);
  a->result(0)->setType(rw.getModel().getContext().getTensorType(*et, llvm::ArrayRef<Dim>(dims)));
  Node *sq0 = rw.create("Squeeze", {a->result(0), axes0});
  PatternRewriter::copyNodeInfo(root, *sq0);
  sq0->result(0)->setType(root.result(0)->type());
  return rw.replaceNode(&root, {sq0->result(0)});
}

//===----------------------------------------------------------------------===//
// Grouped KV heads
//===----------------------------------------------------------------------===//

// Note [Grouped KV heads]
//   Attention-23 given K and V with kv_num_heads heads, a divisor of Q's
//   q_num_heads, gives Q's head h the K/V head h / n (n = q_num_heads /
//   kv_num_heads): each K/V head is used by n consecutive Q heads, as the ONNX
//   reference repeats them, np.repeat [k0, k0, k1, k1] (np.tile before
//   onnx#7274), and as onnxruntime 1.30's CPU kernel does in the 4-D and the
//   3-D form (checked against numpy; the ctest ort-fuse-attention runs the lit
//   models attention-gqa*.onnxtxt, which a tile order would fail). HF's
//   repeat_kv, x[:, :, None].expand(B, Hkv, n, S, D).reshape(B, Hkv*n, S, D),
//   exported as Reshape(Expand(Unsqueeze(x, [2]))), builds exactly that: when
//   the types prove the Expand's result [B, Hkv, n, S, D] (only the new axis
//   grows) and the Reshape's [B, Hkv*n, S, D] (the row-major merge of axes 1
//   and 2), element (b, h*n + r, s, d) of the Reshape is (b, h, s, d) of x. So
//   does the Concat along the heads, in order, of such repeats (the same n) of
//   the parts of a Split of x along the heads (torch 1.13's
//   repeat_interleave(x, n, dim=1) at fixed shapes). So a 4-D Attention whose
//   K and V are both repeated so, by the same n, takes the unrepeated K and V
//   instead: exact, the same products and sums (the repeated tensors are no
//   longer materialised). Q's heads may be any multiple of Hkv*n (an Attention
//   that already groups the repeated heads groups the unrepeated ones by n
//   times more). Not peeled (`--fusion-report` says why; the Attention stays
//   as it is): the tile order [k0, k1, k0, k1] (Unsqueeze at axis 1, or Tile
//   along the heads, or per-head repeats joined out of order), which is not
//   Attention's grouping unless Hkv is 1; a repeat of another axis (K's
//   positions: no grouping of heads at all); K and V repeated by different
//   counts or only one of them; Q's heads not provably a multiple of the
//   repeated K's; an Attention with a past, or a present key/value or qk
//   output in use (their heads would change).

/// How K or V (4-D [B, H, S, D]) repeats the heads of a tensor: src has
/// heads / times of them, each repeated `times` times in place.
struct HeadRepeat {
  Value *src = nullptr;
  int64_t times = 0;
  std::string guard, why; ///< a repeat that is not Attention's grouping
};

/// `x` seen as a head repeat: Reshape(Expand(Unsqueeze(src, [a]))) of a
/// 4-D src whose types prove the repeat (Note [Grouped KV heads]), or
/// Tile(src, [1, n, 1, 1]), or the Concat along the heads of such repeats
/// (the same n) of the parts of Split(src) along the heads, in order
/// (torch 1.13's repeat_interleave(src, n, dim=1) at fixed shapes). `why`
/// set (and src null) for one that repeats in another order or along
/// another axis; nothing set if `x` is no repeat.
HeadRepeat headRepeat(Value *x, PatternRewriter &rw) {
  HeadRepeat hr;
  Node *d = x ? x->definingNode() : nullptr;
  if (!d || d->getGraph() != rw.root()->getGraph() || !PatternRewriter::hasSingleLocalUse(x) ||
      rankOf(x) != 4)
    return hr;
  auto headAxis = [](const Node &n) {
    int64_t axis = NodeContext(n).getInt("axis", 0);
    return axis == 1 || axis == -3;
  };
  if (d->is("Concat") && plainAttributes(*d) && headAxis(*d) && d->numOperands() >= 2) {
    Node *split = nullptr;
    int64_t times = 0;
    for (unsigned i = 0; i < d->numOperands(); ++i) {
      HeadRepeat part = headRepeat(d->operand(i), rw);
      if (!part.why.empty()) return part;
      Node *sp = part.src ? part.src->definingNode() : nullptr;
      if (!sp || !sp->is("Split") || (split && sp != split) || sp->numResults() != d->numOperands() ||
          (times && part.times != times) || !PatternRewriter::hasSingleLocalUse(part.src))
        return hr;
      if (sp->result(i) != part.src) {
        hr.guard = "repeat-order";
        hr.why = "Concat " + q(d) + " joins the repeated parts of Split " + q(sp) + " out of order";
        return hr;
      }
      split = sp;
      times = part.times;
    }
    if (!plainAttributes(*split) || !headAxis(*split) || split->numOperands() < 1 ||
        rankOf(split->operand(0)) != 4)
      return hr;
    hr.src = split->operand(0);
    hr.times = times;
    return hr;
  }
  if (d->is("Tile") && d->numOperands() == 2) {
    auto reps = intConstant(d->operand(1));
    Value *src = d->operand(0);
    if (!reps || reps->size() != 4 || (*reps)[0] != 1 || (*reps)[2] != 1 || (*reps)[3] != 1 ||
        (*reps)[1] < 2 || rankOf(src) != 4)
      return hr;
    if (!isOne(dimOf(src, 1))) {
      hr.guard = "repeat-order";
      hr.why = "Tile " + q(d) + " repeats the heads of " + q(src) + " in tile order (" +
               dimStr(dimOf(src, 1)) + " heads, " + std::to_string((*reps)[1]) +
               " times), not each head in place";
      return hr;
    }
    hr.src = src;
    hr.times = (*reps)[1];
    return hr;
  }
  if (!d->is("Reshape") || d->numOperands() < 1) return hr;
  Value *e = d->operand(0);
  Node *ex = e ? e->definingNode() : nullptr;
  if (!ex || !ex->is("Expand") || ex->numOperands() != 2 || !PatternRewriter::hasSingleLocalUse(e) ||
      rankOf(e) != 5)
    return hr;
  Value *u = ex->operand(0);
  Node *un = u ? u->definingNode() : nullptr;
  if (!un || !un->is("Unsqueeze") || un->numOperands() != 2 || !PatternRewriter::hasSingleLocalUse(u) ||
      rankOf(u) != 5)
    return hr;
  auto axes = intConstant(un->operand(1));
  Value *src = un->operand(0);
  if (!axes || axes->size() != 1 || rankOf(src) != 4) return hr;
  int64_t a = (*axes)[0] < 0 ? (*axes)[0] + 5 : (*axes)[0];
  // The Expand grows only the new axis: [.., 1 -> n, ..].
  Dim n = dimOf(e, a);
  for (int64_t i = 0; i < 5; ++i)
    if (i != a && !sameDim(dimOf(e, i), dimOf(src, i < a ? i : i - 1))) {
      hr.guard = "repeat-axis";
      hr.why = "Expand " + q(ex) + " of " + q(src) + " does not provably grow only its new axis " +
               std::to_string(a) + " (dim " + std::to_string(i) + " is " + dimStr(dimOf(e, i)) + ")";
      return hr;
    }
  if (!n.isKnown() || n.value < 2) {
    hr.guard = "repeat-axis";
    hr.why = "Expand " + q(ex) + " repeats " + q(src) + " " + dimStr(n) + " times along axis " +
             std::to_string(a) + ", not a known count";
    return hr;
  }
  // Heads, in place ([k0, k0, k1, k1]) for a = 2, in tile order for a = 1
  // (the same when there is one head); the Reshape merges them.
  Dim h = dimOf(src, 1), hn = dimOf(x, 1);
  bool merged = sameDim(dimOf(x, 0), dimOf(src, 0)) && sameDim(dimOf(x, 2), dimOf(src, 2)) &&
                sameDim(dimOf(x, 3), dimOf(src, 3)) && h.isKnown() && hn.isKnown() &&
                hn.value == h.value * n.value;
  if ((a == 1 || a == 2) && merged) {
    if (a == 1 && h.value != 1) {
      hr.guard = "repeat-order";
      hr.why = "Expand " + q(ex) + " repeats the " + dimStr(h) + " heads of " + q(src) +
               " in tile order (Unsqueeze at axis 1), not each head in place (axis 2)";
      return hr;
    }
    hr.src = src;
    hr.times = n.value;
    return hr;
  }
  hr.guard = "repeat-axis";
  hr.why = "Reshape " + q(d) + " of Expand " + q(ex) + " repeats " + q(src) + " along axis " +
           std::to_string(a) + ", not its heads [B, H, S, D] -> [B, H*n, S, D]";
  return hr;
}

/// A 4-D Attention whose K and V repeat their heads by the same count
/// (Note [Grouped KV heads]) reads the unrepeated K and V.
bool attentionGroupedKV(Node &a, PatternRewriter &rw) {
  if (a.numOperands() < 3 || a.numOperands() > 4 || a.numResults() < 1 || !plainAttributes(a) ||
      a.getAttr("q_num_heads") || a.getAttr("kv_num_heads") || rankOf(a.operand(0)) != 4 ||
      rankOf(a.operand(1)) != 4 || rankOf(a.operand(2)) != 4)
    return false;
  HeadRepeat k = headRepeat(a.operand(1), rw), v = headRepeat(a.operand(2), rw);
  if (!k.src && !v.src && k.why.empty() && v.why.empty()) return false; // no repeat at all
  if (!k.why.empty()) return miss(rw, k.guard, k.why);
  if (!v.why.empty()) return miss(rw, v.guard, v.why);
  if (!k.src || !v.src || k.times != v.times)
    return miss(rw, "repeat-mismatch",
                "K " + q(a.operand(1)) + (k.src ? " repeats its heads " + std::to_string(k.times) + " times"
                                                     : " is not a head repeat") +
                    ", V " + q(a.operand(2)) +
                    (v.src ? " " + std::to_string(v.times) + " times" : " is not a head repeat") +
                    ": Attention groups K and V heads alike");
  Dim hq = dimOf(a.operand(0), 1), hk = dimOf(a.operand(1), 1);
  if (!sameDim(dimOf(k.src, 1), dimOf(v.src, 1)))
    return miss(rw, "repeat-mismatch", "K " + q(a.operand(1)) + " repeats " + dimStr(dimOf(k.src, 1)) +
                                           " heads, V " + q(a.operand(2)) + " " + dimStr(dimOf(v.src, 1)));
  if (!(sameDim(hq, hk) || (hq.isKnown() && hk.isKnown() && hk.value > 0 && hq.value % hk.value == 0)))
    return miss(rw, "heads", "Q " + q(a.operand(0)) + " has " + dimStr(hq) +
                                 " heads, not provably a multiple of the " + dimStr(hk) + " of K " +
                                 q(a.operand(1)) + " (its " + dimStr(dimOf(k.src, 1)) + " repeated " +
                                 std::to_string(k.times) + " times)");
  for (unsigned i = 1; i < a.numResults(); ++i)
    if (Value *r = a.result(i); r && (!r->useEmpty() || r->isGraphOutput()))
      return miss(rw, "present", "result " + q(r) + " is used (its heads would change)");
  rw.setInsertionPoint(&a);
  std::vector<Value *> ops{a.operand(0), k.src, v.src};
  if (a.numOperands() == 4 && a.operand(3)) ops.push_back(a.operand(3));
  Node *n = rw.create("Attention", ops);
  for (unsigned i = 0; i < a.numAttributes(); ++i) n->setAttr(a.attribute(i).clone());
  PatternRewriter::copyNodeInfo(a, *n);
  n->result(0)->setType(a.result(0)->type());
  std::vector<Value *> by(a.numResults(), nullptr);
  by[0] = n->result(0);
  return rw.replaceNode(&a, by);
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

/// The constant int64 values of `v` (null if not a constant).
std::optional<std::vector<int64_t>> intConstant(const Value *v) { return PatternRewriter::constantInts(v); }

/// `s` slices the last axis of a rank-`rank` tensor whose last dim is `d`
/// with step 1: returns the clamped [begin, end) (Slice-10+ semantics), or
/// nullopt. Every operand must be a constant of one element.
std::optional<std::pair<int64_t, int64_t>> lastAxisSlice(const Node &s, int64_t rank, int64_t d) {
  if (s.numOperands() < 3) return std::nullopt;
  auto one = [&](unsigned i) -> std::optional<int64_t> {
    if (i >= s.numOperands() || !s.operand(i)) return std::nullopt;
    auto v = intConstant(s.operand(i));
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  };
  auto b = one(1), e = one(2);
  if (!b || !e) return std::nullopt;
  auto ax = one(3);
  if (s.numOperands() > 3 && s.operand(3) && !ax) return std::nullopt;
  int64_t axis = ax ? *ax : 0;
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return std::nullopt;
  if (s.numOperands() > 4 && s.operand(4)) {
    auto st = one(4);
    if (!st || *st != 1) return std::nullopt;
  }
  auto clamp = [&](int64_t x) {
    if (x < 0) x += d;
    return x < 0 ? 0 : (x > d ? d : x);
  };
  return std::make_pair(clamp(*b), clamp(*e));
}

/// The cache operand: cos = Unsqueeze(Gather(C, pos, axis 0), axes [1])
/// with C a constant [P, D] whose two halves of each row are equal (the
/// rotate-half form repeats the frequencies). Returns C's first half as a
/// new constant's data, and pos.
struct RopeCache {
  Tensor half;
  Value *pos = nullptr;
};
std::optional<RopeCache> ropeCache(Value *c, int64_t d, PatternRewriter &rw, std::string &why) {
  Node *u = c ? c->definingNode() : nullptr;
  if (!u || !u->is("Unsqueeze") || u->numOperands() != 2 || u->getGraph() != rw.root()->getGraph()) {
    why = "cos/sin " + q(c) + " is not Unsqueeze(Gather(cache, position_ids), 1)";
    return std::nullopt;
  }
  auto axes = intConstant(u->operand(1));
  Node *g = u->operand(0) ? u->operand(0)->definingNode() : nullptr;
  if (!axes || *axes != std::vector<int64_t>{1} || !g || !g->is("Gather") || g->numOperands() != 2 ||
      !plainAttributes(*g) || NodeContext(*g).getInt("axis", 0) != 0) {
    why = "cos/sin " + q(c) + " is not Unsqueeze(Gather(cache, position_ids), 1)";
    return std::nullopt;
  }
  const Tensor *t = PatternRewriter::constantTensor(g->operand(0));
  if (!t || t->dims().size() != 2 || t->dims()[1] != d ||
      (t->dataType() != DataType::Float && t->dataType() != DataType::Float16)) {
    why = "cache of Gather " + q(g) + " is not a constant float [positions, " + std::to_string(d) + "]";
    return std::nullopt;
  }
  Value *pos = g->operand(1);
  if (elemOf(pos) != DataType::Int64 || rankOf(pos) != 2) {
    why = "position ids " + q(pos) + " are not int64 [batch, seq]";
    return std::nullopt;
  }
  auto vals = t->values<double>();
  if (!vals.ok()) return std::nullopt;
  int64_t rows = t->dims()[0], h = d / 2;
  std::vector<float> half;
  half.reserve((size_t)(rows * h));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < h; ++j) {
      if ((*vals)[r * d + j] != (*vals)[r * d + h + j]) {
        why = "cache of Gather " + q(g) + " row " + std::to_string(r) + " has unequal halves";
        return std::nullopt;
      }
      half.push_back((float)(*vals)[r * d + j]);
    }
  if (t->dataType() != DataType::Float) {
    why = "cache of Gather " + q(g) + " is not float";
    return std::nullopt;
  }
  return RopeCache{makeFloatTensor({rows, h}, half), pos};
}

// Note [Rotary caches computed in the graph]
//   Most exports do not gather cos and sin from constant caches: they
//   compute them. A LLaMA-style module writes cos = Concat(Cos(A), Cos(A))
//   with A = positions x inverse frequencies [S, D/2]; Hugging Face writes
//   emb = Concat(f, f), cos = Unsqueeze(Cos(emb) [* scaling] [Cast], 1)
//   [B, 1, S, D], usually one cos and one sin shared by every layer. What
//   makes x*C + rotate_half(x)*S a RotaryEmbedding is only that C and S
//   each repeat their first half along the last axis, C = [c, c] and
//   S = [s, s]: the first half of the result is then x1*c - x2*s and the
//   second x2*c + x1*s, RotaryEmbedding's arithmetic with cos_cache c and
//   sin_cache s, whatever c and s are. equalHalves proves the repetition
//   from how the value is computed (bounded depth); the caches are then
//   c and s themselves (the operand of Concat(c, c), else a Slice of the
//   first half: the values the graph computed, nothing recomputed). Without
//   position_ids RotaryEmbedding takes caches [batch, seq, D/2], and
//   onnxruntime 1.30 requires exactly that shape (batch and seq those of
//   x), so C must broadcast to x [B, H, S, D] as [b0, 1, S, D] (leading
//   dims may be absent, b0 is 1 or B, S provably x's sequence dim): its
//   half is brought to [b0, S, D/2] (Squeeze of the heads axis, Unsqueeze
//   of a batch axis) and expanded to B unless b0 provably is B. B is read
//   by Shape from the tensor furthest up the head split (through its
//   Transpose and Reshape) that provably has it, so that the split stays
//   single-use for Note [Rotary before the head split]; a constant when B
//   is known. That Note holds for these caches as for gathered ones: they
//   are indexed by batch and position, never by head, and the 3-D input
//   [B, S, H*D] has the same batch and positions.

/// True if `v` provably repeats its first half along its last axis, whose
/// dim must be `d` (known, even): v[..., j] == v[..., j + d/2], proven from
/// how `v` is computed, `depth` nodes deep at most (Note [Rotary caches
/// computed in the graph]). Otherwise `why` names the value where the proof
/// stops. `proven` memoizes values already proven.
bool equalHalves(const Value *v, int64_t d, unsigned depth, std::vector<const Value *> &proven,
                 std::string &why) {
  Dim last = dimOf(v, -1);
  if (!last.isKnown() || last.value != d) {
    why = q(v) + " has last dim " + dimStr(last) + ", not " + std::to_string(d);
    return false;
  }
  for (const Value *p : proven)
    if (p == v) return true;
  auto holds = [&] {
    proven.push_back(v);
    return true;
  };
  if (const Tensor *t = PatternRewriter::constantTensor(v)) {
    auto unreadable = [&] {
      why = "constant " + q(v) + " cannot be read as [.., " + std::to_string(d) + "]";
      return false;
    };
    if (t->dims().empty() || t->dims().back() != d) return unreadable();
    auto halvesRepeat = [&](const auto &vals, auto same) {
      size_t n = (size_t)d, h = n / 2;
      for (size_t r = 0; r + n <= vals.size(); r += n)
        for (size_t j = 0; j < h; ++j)
          if (!same(vals[r + j], vals[r + h + j])) {
            why = "constant " + q(v) + " row " + std::to_string(r / n) + " has unequal halves";
            return false;
          }
      return holds();
    };
    DataType dt = t->dataType();
    if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16 &&
        dt != DataType::BFloat16) { // integers exactly (not through a double)
      auto ints = t->values<int64_t>();
      return ints.ok() ? halvesRepeat(*ints, [](int64_t a, int64_t b) { return a == b; }) : unreadable();
    }
    // Floats bit for bit but for NaN payloads: a NaN is unequal, -0 is not 0.
    auto vals = t->values<double>();
    return vals.ok() ? halvesRepeat(*vals, [](double a, double b) {
      return a == b && std::signbit(a) == std::signbit(b);
    })
                     : unreadable();
  }
  Node *n = v->definingNode();
  if (!n) {
    why = q(v) + " is a graph input";
    return false;
  }
  if (depth == 0) {
    why = "the proof reaches " + q(v) + " too deep in the graph";
    return false;
  }
  std::string op = n->opType().str();
  if (n->numResults() != 1 || n->hasSubgraphs() || !plainAttributes(*n) || n->numOperands() < 1 ||
      !n->operand(0)) {
    why = q(v) + " is made by " + op + " " + q(n) + ", not known to keep equal halves";
    return false;
  }
  int64_t r = rankOf(v);
  auto below = [&](const Value *o) { return equalHalves(o, d, depth - 1, proven, why); };
  // What the op does comes from its registry entry (Note [Op facts]).
  const OpEntry *e = OpRegistry::get().lookup(*n);
  // Elementwise with broadcasting: each operand repeats its halves, or is
  // one value along the last axis (a scalar, a last dim of 1).
  if (e && e->elementwise && e->broadcasting) {
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      const Value *o = n->operand(i);
      if (!o) {
        why = op + " " + q(n) + " has an empty operand";
        return false;
      }
      if (rankOf(o) == 0 || (rankOf(o) > 0 && isOne(dimOf(o, -1)))) continue;
      if (!below(o)) return false;
    }
    return holds();
  }
  // Elementwise of one element: equal inputs give equal outputs.
  if (e && e->elementwise && n->numOperands() == 1) return below(n->operand(0)) && holds();
  // Row-major reshapes keep each element's index modulo the last dim when
  // the input's last dim is d too (checked below).
  if (e && e->reshapes) return below(n->operand(0)) && holds();
  if (n->is("Transpose")) {
    auto perm = transposePerm(*n);
    if (!perm || perm->empty() || perm->back() != (int64_t)perm->size() - 1) {
      why = "Transpose " + q(n) + " moves the last axis";
      return false;
    }
    return below(n->operand(0)) && holds();
  }
  if (n->is("Gather")) {
    int64_t ax = NodeContext(*n).getInt("axis", 0), rd = rankOf(n->operand(0));
    if (rd < 1 || ax == -1 || ax == rd - 1) {
      why = "Gather " + q(n) + " indexes the last axis";
      return false;
    }
    return below(n->operand(0)) && holds();
  }
  if (n->is("Slice")) {
    int64_t ri = rankOf(n->operand(0));
    auto axes = n->numOperands() > 3 && n->operand(3) ? intConstant(n->operand(3)) : std::nullopt;
    bool keeps = ri >= 1 && axes.has_value();
    if (axes)
      for (int64_t a : *axes) keeps = keeps && a != -1 && a != ri - 1;
    if (!keeps) {
      why = "Slice " + q(n) + " may cut the last axis";
      return false;
    }
    return below(n->operand(0)) && holds();
  }
  if (n->is("Expand")) {
    const Value *o = n->operand(0);
    if (rankOf(o) == 0 || (rankOf(o) > 0 && isOne(dimOf(o, -1)))) return holds();
    return below(o) && holds();
  }
  if (n->is("Concat")) {
    int64_t ax = NodeContext(*n).getInt("axis", 0);
    unsigned k = n->numOperands();
    bool twice = r >= 1 && (ax == -1 || ax == r - 1) && k % 2 == 0;
    for (unsigned i = 0; twice && i < k / 2; ++i)
      twice = n->operand(i) && n->operand(i) == n->operand(i + k / 2);
    if (!twice) {
      std::string ops;
      for (unsigned i = 0; i < k; ++i) ops += (i ? ", " : "") + q(n->operand(i));
      why = "Concat " + q(n) + " of " + ops + " does not join the same values twice on the last axis";
      return false;
    }
    return holds();
  }
  why = q(v) + " is made by " + op + " " + q(n) + ", not known to keep equal halves";
  return false;
}

/// C (a rotary cos or sin operand of x [B,H,S,D]) broadcasts to x as
/// [b0, 1, S, D] with leading dims possibly absent, b0 1 or B (Note [Rotary
/// caches computed in the graph]); else `why` says which dim does not.
bool cacheLayout(const Value *c, const Value *x, std::string &why) {
  int64_t r = rankOf(c);
  auto shape = [&] {
    std::string s = q(c) + " [";
    for (int64_t i = 0; i < r; ++i) s += (i ? "," : "") + dimStr(dimOf(c, i));
    return s + "]";
  };
  if (r < 2 || r > 4) {
    why = q(c) + " has rank " + std::to_string(r) + ", not 2 to 4 (a sequence axis and a head axis)";
    return false;
  }
  if (!sameDim(dimOf(c, -2), dimOf(x, 2))) {
    why = shape() + ": sequence dim " + dimStr(dimOf(c, -2)) + " is not provably " + dimStr(dimOf(x, 2)) +
          " of " + q(x);
    return false;
  }
  if (r >= 3 && !isOne(dimOf(c, -3))) {
    why = shape() + ": " + dimStr(dimOf(c, -3)) + " at the heads axis, not 1";
    return false;
  }
  if (r == 4 && !isOne(dimOf(c, 0)) && !sameDim(dimOf(c, 0), dimOf(x, 0))) {
    why = shape() + ": batch dim " + dimStr(dimOf(c, 0)) + " is neither 1 nor " + dimStr(dimOf(x, 0));
    return false;
  }
  return true;
}

/// True if `c` is Unsqueeze(Gather(constant, ·, axis 0), [1]): the
/// constant-cache form ropeCache reads.
bool gatheredCache(const Value *c) {
  Node *u = c ? c->definingNode() : nullptr;
  if (!u || !u->is("Unsqueeze") || u->numOperands() != 2) return false;
  auto axes = intConstant(u->operand(1));
  Node *g = u->operand(0) ? u->operand(0)->definingNode() : nullptr;
  return axes && *axes == std::vector<int64_t>{1} && g && g->is("Gather") && g->numOperands() == 2 &&
         plainAttributes(*g) && NodeContext(*g).getInt("axis", 0) == 0 &&
         PatternRewriter::constantTensor(g->operand(0));
}

/// The RotaryEmbedding cache [B, S, d/2] of a cos or sin operand `c` that
/// passed equalHalves and cacheLayout for x (Note [Rotary caches computed
/// in the graph]). `batch` is the shape [B, 1, 1] to expand to, made on
/// first need.
Value *computedCache(Value *c, Value *x, int64_t d, Value *&batch, PatternRewriter &rw,
                     const std::string &base) {
  auto &ctx = rw.getModel().getContext();
  DataType et = *elemOf(c);
  int64_t r = rankOf(c);
  Dim bx = dimOf(x, 0), s = dimOf(x, 2), hd = Dim::known(d / 2);
  auto typed = [&](Node *n, std::vector<Dim> dims) {
    n->result(0)->setType(ctx.getTensorType(et, llvm::ArrayRef<Dim>(dims)));
    return n->result(0);
  };
  // [b0, 1, S, D] made by Unsqueeze of [b0, S, D] at the heads axis: that.
  Value *src = c;
  Node *u = r == 4 ? c->definingNode() : nullptr;
  if (u && u->is("Unsqueeze") && u->numOperands() == 2 && rankOf(u->operand(0)) == 3 &&
      intConstant(u->operand(1)) == std::vector<int64_t>{1})
    src = u->operand(0);
  int64_t rs = rankOf(src);
  // The first half of the last axis.
  Value *h = nullptr;
  Node *cat = src->definingNode();
  if (cat && cat->is("Concat") && cat->numOperands() == 2 && cat->operand(0) == cat->operand(1) &&
      tensorType(cat->operand(0)))
    h = cat->operand(0); // (equalHalves checked the axis)
  else {
    Node *sl = rw.create("Slice", {src, rw.createConstant(base + "_start", makeInt64Tensor({1}, {0})),
                                   rw.createConstant(base + "_end", makeInt64Tensor({1}, {d / 2})),
                                   rw.createConstant(base + "_axes", makeInt64Tensor({1}, {-1}))});
    std::vector<Dim> dims;
    for (int64_t i = 0; i + 1 < rs; ++i) dims.push_back(dimOf(src, i));
    dims.push_back(hd);
    h = typed(sl, dims);
  }
  // [b0, S, d/2].
  Dim b0 = r == 4 ? dimOf(c, 0) : Dim::known(1);
  if (rs == 4)
    h = typed(rw.create("Squeeze", {h, rw.createConstant(base + "_heads", makeInt64Tensor({1}, {1}))}),
              {b0, s, hd});
  else if (rs == 2)
    h = typed(rw.create("Unsqueeze", {h, rw.createConstant(base + "_batch", makeInt64Tensor({1}, {0}))}),
              {b0, s, hd});
  if (sameDim(b0, bx)) return h;
  if (!batch) {
    if (bx.isKnown()) {
      batch = rw.createConstant(base + "_expand", makeInt64Tensor({3}, {bx.value, 1, 1}));
    } else {
      // The batch from furthest up the head split (the Note).
      Value *src = x;
      for (unsigned i = 0; i < 4; ++i) {
        Node *n = src->definingNode();
        if (!n || n->numOperands() < 1 || !n->operand(0) || n->getGraph() != rw.root()->getGraph()) break;
        auto perm = n->is("Transpose") ? transposePerm(*n) : std::nullopt;
        if (!(n->is("Reshape") || (perm && !perm->empty() && (*perm)[0] == 0))) break;
        if (rankOf(n->operand(0)) < 1 || !sameDim(dimOf(n->operand(0), 0), bx)) break;
        src = n->operand(0);
      }
      Node *sh = rw.create("Shape", {src});
      sh->setAttr(intAttr("start", 0));
      sh->setAttr(intAttr("end", 1));
      sh->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
      Value *ones = rw.createConstant(base + "_ones", makeInt64Tensor({2}, {1, 1}));
      Node *cc = rw.create("Concat", {sh->result(0), ones});
      cc->setAttr(intAttr("axis", 0));
      cc->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{3}));
      batch = cc->result(0);
    }
  }
  return typed(rw.create("Expand", {h, batch}), {bx, s, hd});
}

/// The rotation's result has x's 4-D shape (the Add must not broadcast it
/// up); reports the near-miss and returns false otherwise.
bool resultKeepsShape(Node &add, const Value *x, PatternRewriter &rw) {
  const Type *xt = tensorType(x), *yt = tensorType(add.result(0));
  if (!yt || yt->rank() != 4 || !xt || xt->rank() != 4)
    return miss(rw, "shape", "result of " + q(&add) + " has no known 4-D shape");
  for (int64_t k = 0; k < 4; ++k)
    if (!sameDim(xt->dims()[k], yt->dims()[k]))
      return miss(rw, "shape", "result of " + q(&add) + " is not of " + q(x) + "'s shape");
  return true;
}

/// The rest of fuseRotaryEmbedding for cos and sin computed in the graph
/// (Note [Rotary caches computed in the graph]): the rotation of x (4-D,
/// last dim d, float) matched at `add`, not yet rewritten.
bool computedRope(Node &add, Value *x, Value *cos, Value *sin, int64_t d, PatternRewriter &rw) {
  std::string why;
  for (Value *c : {cos, sin}) {
    const char *what = c == cos ? "cos " : "sin ";
    std::vector<const Value *> proven;
    if (!equalHalves(c, d, 16, proven, why))
      return miss(rw, "halves",
                  what + q(c) + " does not provably repeat its first half on the last axis: " + why);
    if (!cacheLayout(c, x, why))
      return miss(rw, "cache-shape",
                  what + why + " (RotaryEmbedding needs it as [B or 1, 1, S, D] of " + q(x) + ")");
    if (elemOf(c) != elemOf(x)) return miss(rw, "type", what + q(c) + " is not of " + q(x) + "'s type");
  }
  if (!resultKeepsShape(add, x, rw)) return false;
  std::string base = add.result(0)->name().str();
  Value *batch = nullptr;
  Value *cc = computedCache(cos, x, d, batch, rw, base + "_cos");
  Value *sc = computedCache(sin, x, d, batch, rw, base + "_sin");
  Node *r = rw.create("RotaryEmbedding", {x, cc, sc});
  PatternRewriter::copyNodeInfo(add, *r);
  r->result(0)->setType(add.result(0)->type());
  return rw.replaceNode(&add, {r->result(0)});
}

// x * cos + rotate_half(x) * sin -> RotaryEmbedding-23 (rotate-half form,
// interleaved = 0), x 4-D [B, H, S, D] with D known and even,
// rotate_half(x) = Concat(Neg(x[..., D/2:]), x[..., :D/2], axis -1),
// operands of Add and Mul in any order, cos and sin either
//  - Unsqueeze(Gather(cache, position_ids), 1) of constant [P, D] caches
//    whose row halves are equal: the caches' first halves with position_ids;
//  - or computed in the graph, each provably repeating its first half along
//    the last axis and broadcasting to x as [B or 1, 1, S, D]: their first
//    halves as [B, S, D/2] caches, no position_ids (Note [Rotary caches
//    computed in the graph]).
// Contract: RotaryEmbedding computes cos*x1 - sin*x2 and sin*x1 + cos*x2 on
// the halves; the graph computes x1*cos + (-x2)*sin and x2*cos + x1*sin:
// the same products and sums (a + (-b) is a - b exactly), so equal up to a
// runtime's choice of fused multiply-add. The caches hold the values the
// graph multiplies by (a constant's halves, or the computed cos and sin
// themselves, cut in half, not recomputed). A position id out of the
// cache's range is an error in both. (onnxruntime 1.30 also refuses a cache
// with fewer rows than the sequence length, which real caches, sized for
// the longest sequence, do not have; computed caches are [B, S, D/2] by
// construction.)
bool fuseRotaryEmbedding(Node &add, PatternRewriter &rw) {
  if (add.numOperands() != 2 || add.numResults() != 1) return false;
  for (unsigned i = 0; i < 2; ++i) {
    Node *m1 = rw.singleUseProducer(add, i, "Mul"), *m2 = rw.singleUseProducer(add, 1 - i, "Mul");
    if (!m1 || !m2 || m1->numOperands() != 2 || m2->numOperands() != 2) continue;
    // m2 = rotate_half(x) * sin.
    for (unsigned j = 0; j < 2; ++j) {
      Node *cat = rw.singleUseProducer(*m2, j, "Concat");
      if (!cat || cat->numOperands() != 2 || !plainAttributes(*cat)) continue;
      Value *sin = m2->operand(1 - j);
      Node *neg = rw.singleUseProducer(*cat, 0, "Neg");
      Node *lo = cat->operand(1) ? cat->operand(1)->definingNode() : nullptr;
      Node *hi = neg && neg->operand(0) ? neg->operand(0)->definingNode() : nullptr;
      if (!neg || !lo || !hi || !lo->is("Slice") || !hi->is("Slice") || lo->operand(0) != hi->operand(0))
        continue;
      Value *x = lo->operand(0);
      // m1 = x * cos.
      Value *cos = m1->operand(0) == x ? m1->operand(1) : m1->operand(1) == x ? m1->operand(0) : nullptr;
      if (!cos) continue;
      if (int64_t since = firstVersion("RotaryEmbedding"); rw.opsetVersion() < since)
        return miss(rw, "opset", "Concat " + q(cat) + " rotates " + q(x) +
                                     " by half: RotaryEmbedding needs opset " + std::to_string(since) +
                                     ", the graph imports " + std::to_string(rw.opsetVersion()));
      int64_t rank = rankOf(x);
      Dim dd = dimOf(x, -1);
      if (rank != 4 || !dd.isKnown() || dd.value % 2 || dd.value <= 0)
        return miss(rw, "rank", "rotary input " + q(x) + " is not 4-D with a known even head size");
      int64_t d = dd.value;
      int64_t axis = NodeContext(*cat).getInt("axis", 0);
      auto a = lastAxisSlice(*lo, rank, d), b = lastAxisSlice(*hi, rank, d);
      if ((axis != -1 && axis != rank - 1) || !a || !b || *a != std::make_pair((int64_t)0, d / 2) ||
          *b != std::make_pair(d / 2, d))
        return miss(rw, "rotate-half", "Concat " + q(cat) + " of Slices " + q(lo) + ", " + q(hi) +
                                           " is not rotate_half over the last axis");
      auto et = elemOf(x);
      if (et != DataType::Float || elemOf(add.result(0)) != et)
        return miss(rw, "type", "rotary input " + q(x) + " is not float");
      std::string why;
      if (!gatheredCache(cos) || !gatheredCache(sin)) return computedRope(add, x, cos, sin, d, rw);
      auto c = ropeCache(cos, d, rw, why);
      if (!c) return miss(rw, "cache", why);
      auto s = ropeCache(sin, d, rw, why);
      if (!s) return miss(rw, "cache", why);
      if (c->pos != s->pos) return miss(rw, "cache", "cos and sin gathered at different position ids");
      if (!sameDim(dimOf(c->pos, 0), dimOf(x, 0)) || !sameDim(dimOf(c->pos, 1), dimOf(x, 2)))
        return miss(rw, "cache", "position ids " + q(c->pos) + " are not [batch, seq] of " + q(x));
      if (!resultKeepsShape(add, x, rw)) return false;
      std::string base = add.result(0)->name().str();
      Value *cc = rw.createConstant(base + "_cos_cache", std::move(c->half));
      Value *sc = rw.createConstant(base + "_sin_cache", std::move(s->half));
      Node *r = rw.create("RotaryEmbedding", {x, cc, sc, c->pos});
      PatternRewriter::copyNodeInfo(add, *r);
      r->result(0)->setType(add.result(0)->type());
      return rw.replaceNode(&add, {r->result(0)});
    }
  }
  return false;
}

// A 4-D Attention (made before fuse-rotary-embedding rotated its Q and K,
// say: -O2 fuses again after simplify made the rotations' slices constant)
// whose Q, K, V are head splits (through rotations, Note [Rotary before the
// head split]) and whose result is merged: the 3-D form, as fuse-attention
// makes it when it sees all of them at once. Exact (the same operator on
// the same elements).
bool attentionHeads(Node &a, PatternRewriter &rw) {
  if (a.numOperands() < 3 || a.numOperands() > 4 || a.numResults() != 1 || !plainAttributes(a) ||
      a.getAttr("q_num_heads") || a.getAttr("kv_num_heads") || rankOf(a.operand(0)) != 4)
    return false;
  for (unsigned i = 0; i < a.numAttributes(); ++i)
    if (a.attribute(i).name() != "scale" && a.attribute(i).name() != "is_causal") return false;
  int64_t qHeads = 0, kvHeads = 0, vHeads = 0;
  Node *qRope = nullptr, *kRope = nullptr, *vRope = nullptr;
  Value *q3 = headSplitThroughRope(asPermuted(a.operand(0), rw), rw, qHeads, qRope);
  Value *k3 = q3 ? headSplitThroughRope(asPermuted(a.operand(1), rw), rw, kvHeads, kRope) : nullptr;
  Value *v3 = k3 ? headSplitSource(asPermuted(a.operand(2), rw), rw, vHeads) : nullptr;
  (void)vRope;
  if (!v3 || vHeads != kvHeads || qHeads % kvHeads) return false;
  Node *merge = headMerge(a.result(0), qHeads);
  if (!merge) return false;
  rw.setInsertionPoint(&a);
  if (qRope) q3 = ropeOnHidden(qRope, q3, qHeads, rw);
  if (kRope) k3 = ropeOnHidden(kRope, k3, kvHeads, rw);
  std::vector<Value *> ops{q3, k3, v3};
  if (a.numOperands() == 4 && a.operand(3)) ops.push_back(a.operand(3));
  Node *n = rw.create("Attention", ops);
  NodeContext c(a);
  if (a.getAttr("scale")) n->setAttr(floatAttr("scale", c.getFloat("scale", 1.0f)));
  if (a.getAttr("is_causal")) n->setAttr(intAttr("is_causal", c.getInt("is_causal", 0)));
  n->setAttr(intAttr("q_num_heads", qHeads));
  n->setAttr(intAttr("kv_num_heads", kvHeads));
  PatternRewriter::copyNodeInfo(a, *n);
  n->result(0)->setType(merge->result(0)->type());
  return rw.replaceNode(merge, {n->result(0)});
}

} // namespace

void populateAttentionPatterns(PatternSet &ps) {
  // (The census counts what each makes: Note [Fusion census]. The head
  // and GQA forms re-form Attentions and RotaryEmbeddings: net zero.)
  ps.add("fuse-attention", "MatMul", fuseAttention, 3, {"Attention"});
  ps.add("fuse-attention-heads", "Attention", attentionHeads, 3, {"Attention", "RotaryEmbedding"});
  ps.add("fuse-attention-gqa", "Attention", attentionGroupedKV, 3, {"Attention"});
  ps.add("fuse-rotary-embedding", "Add", fuseRotaryEmbedding, 3, {"RotaryEmbedding"});
}

} // namespace onnxir
