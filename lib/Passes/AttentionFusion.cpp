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
//    through Where with -inf (masked_fill), in either branch order, or
//    with the type's lowest value (finfo.min: an additive mask); a mask
//    that is provably the lower triangle of a square Q/K sequence (or, when
//    it says what to fill, the strict upper one) becomes is_causal = 1; a
//    mask of 1 along q_seq is expanded (Note [Attention mask shape]);
//  - the 4-D form (batch, heads, seq, head_size), with one K/V head
//    broadcast over Q's heads (multi-query); 3-D (batch * heads, seq,
//    head_size) scores as the 4-D Attention of the unfolded heads (Note
//    [Heads folded into the batch]) or of batch 1 through
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
// Before it, two patterns undo what hides the scores: Expand(mask,
// Shape(scores)) and ConstantOfShape(Shape(scores)) re-broadcast against
// them (`fuse-attention-shape-use`, Note [Scores read for their shape]) and
// a mask applied on a 4-D view of 3-D batched scores
// (`fuse-attention-mask-view`, Note [Masks on a 4-D view of 3-D scores];
// a mask whose [S, S] slices are all equal becomes that slice, Note [Masks
// with equal slices]);
// a bias under a boolean mask (BLOOM's ALiBi) becomes one float attn_mask
// (Note [A bias under a boolean mask]).
// A past (KV cache: K and V concatenated to the caches and returned) moves
// into Attention's past_key/past_value inputs by `fuse-attention-kv-cache`
// (AttentionCache.cpp, Note [KV caches]).
// Not fused (near-misses or no candidates): masks sliced from a fixed-size
// buffer (dims min(P, T), not provably T). A softcap c * tanh(scores / c)
// becomes the softcap attribute (Note [Softcap], AttentionMatch.cpp). Not peeled (the Attention reads the repeated K/V): a repeat in
// tile order [k0, k1, k0, k1] (Tile, or Unsqueeze at axis 1) or along
// another axis, K and V repeated differently. (torch 1.13 exports
// repeat_interleave(k, n, dim=1) with dynamic axes wrongly: that model fails
// on onnxruntime. At fixed shapes it is a Concat of per-head repeats, which
// is peeled.)
//
// The pattern `fuse-rotary-embedding` is described in AttentionRotary.cpp;
// AttentionMatch.h lists the files of the other forms.
//
// Note [Attention numerical contract]
//   Attention-23 computes softmax((Q*sqrt(s)) (K*sqrt(s))ᵀ + bias) V with s
//   the `scale` attribute, softmax in the input's precision (no
//   softmax_precision is set, so none is changed). Against the unfused
//   graph: (1) the scale is applied once, as the product of the matched
//   constants rounded once to float, where the graph divided or multiplied
//   (one or two roundings of each score): a relative difference of a few
//   ulps in each score before softmax; (2) a boolean mask means a bias of
//   -inf exactly where the graph filled -inf; a fill of the type's lowest
//   value L (finfo.min) becomes an additive mask of 0 and L/2, never a
//   boolean one (Note [Masks filled with finfo.min] in AttentionMasks.cpp:
//   the same result, fully masked rows included, within the bounds given
//   there; other fill values are not fused); an additive mask holding L
//   (a constant, or an integer times a scalar L) holds L/2 there instead,
//   and one computed otherwise from a constant holding L is not fused (the
//   same Note);
//   (3) a fully masked row, which is NaN in the graph (softmax of
//   all -inf), is a zero row in Attention: only NaN outputs change;
//   (4) is_causal is set only when the mask provably is the lower triangle
//   j <= i of a square sequence (no past), which is what is_causal means
//   then. An additive mask is added to the scaled scores as in the graph.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Fusions.h"

#include "AttentionCache.h"
#include "AttentionMatch.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include <cmath>
#include <functional>
#include <limits>
#include <cstring>
#include <optional>
#include <string>

namespace onnxir {

namespace attention {
namespace {

std::optional<std::vector<Dim>> broadcastDims(const std::vector<Value *> &vs);

bool attentionFloat(std::optional<DataType> t) {
  return t && (*t == DataType::Float || *t == DataType::Float16 || *t == DataType::Double ||
               *t == DataType::BFloat16);
}

/// The Softmax under the root MatMul (probabilities · V), its opset and its
/// axis: fills m.softmax and m.v, and the scores' rank.
bool matchSoftmax(Node &root, PatternRewriter &rw, AttentionMatch &m, int64_t &rank) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  Node *sm = rw.singleUseProducer(root, 0, "Softmax");
  if (!sm) {
    Node *d = root.operand(0) ? root.operand(0)->definingNode() : nullptr;
    if (d && d->is("Softmax") && d->getGraph() == root.getGraph())
      return miss(rw, "single-use", "Softmax " + q(d) + " has another use than MatMul " + q(&root));
    return false;
  }
  if (sm->numOperands() != 1) return false;
  m.softmax = sm;
  m.v = root.operand(1);
  // Opset: Attention's first version (Softmax's axis is per-axis by then).
  if (int64_t since = firstVersion("Attention"); rw.opsetVersion() < since)
    return miss(rw, "opset",
                "Softmax " + q(sm) + ", MatMul " + q(&root) + ": Attention needs opset " +
                    std::to_string(since) + ", the graph imports " + std::to_string(rw.opsetVersion()));
  Value *s = sm->operand(0);
  rank = rankOf(s);
  if (!plainAttributes(*sm)) return false;
  int64_t axis = NodeContext(*sm).getInt("axis", -1);
  if (rank < 0) return miss(rw, "rank", "scores " + q(s) + " of unknown rank");
  if (axis != -1 && axis != rank - 1)
    return miss(rw, "softmax-axis", "Softmax " + q(sm) + " over axis " + std::to_string(axis) +
                                        ", not the last of rank " + std::to_string(rank));
  return true;
}

// Note [A bias under a boolean mask]
//   BLOOM adds its ALiBi bias to the scores (baddbmm) and then fills the
//   masked positions: Where(c, fill, scores + bias), fill -inf or the
//   type's lowest value L (finfo.min). Attention takes one attn_mask, so
//   both become the float Where(c, bias, fill) added to the scores (fill
//   L/2 for L, as Note [Masks filled with finfo.min] says for a boolean
//   mask alone): where c attends, scores + bias as in the graph; where it
//   does not, -inf, or scores + L/2, whose softmax weight is 0 next to any
//   attended position and uniform over a fully masked row (L/2 absorbs the
//   scores as L does in the graph, within that Note's bounds). The mask is
//   never is_causal then (the bias must stay).

/// Where(c, fill, scores + bias) or Where(c, scores + bias, fill) with a
/// scalar fill of -inf or the lowest value, scores a (scaled) MatMul's
/// product, each a single use (Note [A bias under a boolean mask]): fills
/// m (mask, boolMask, maskNegated, lowestFill, bias) and returns the
/// scores; null if `s` is not of that form.
Value *peelBiasUnderMask(Value *s, PatternRewriter &rw, AttentionMatch &m) {
  Node *d = s ? s->definingNode() : nullptr;
  if (!d || !d->is("Where") || d->numOperands() != 3 || d->getGraph() != rw.root()->getGraph() ||
      !PatternRewriter::hasSingleLocalUse(s))
    return nullptr;
  for (unsigned i = 1; i < 3; ++i) {
    Node *add = rw.singleUseProducer(*d, i, "Add");
    auto fill = absorbedScalar(d->operand(3 - i), d->operand(i));
    if (!add || add->numOperands() != 2 || !fill) continue;
    DataType ft = PatternRewriter::constantTensor(d->operand(3 - i))->dataType();
    std::optional<double> lowest = lowestFinite(ft);
    bool negInf = std::isinf(*fill) && *fill < 0;
    if (!negInf && (!lowest || *fill != *lowest)) continue;
    for (unsigned j = 0; j < 2; ++j) {
      double unused = 1, cap = 0;
      std::vector<Node *> seen;
      Value *x = add->operand(j);
      Value *y = peelScale(peelSoftcap(x, rw, cap), rw, unused, seen);
      Node *mm = y ? y->definingNode() : nullptr;
      Node *bd = add->operand(1 - j) ? add->operand(1 - j)->definingNode() : nullptr;
      if (!mm || !mm->is("MatMul") || !PatternRewriter::hasSingleLocalUse(y) || !PatternRewriter::hasSingleLocalUse(x) ||
          (bd && bd->is("MatMul")))
        continue;
      m.mask = d->operand(0);
      m.boolMask = true;
      m.maskNegated = i == 2;
      if (!negInf) m.lowestFill = d->operand(3 - i);
      if (m.maskNegated)
        if (Node *n = m.mask->definingNode(); n && n->is("Not") && n->numOperands() == 1) {
          m.mask = n->operand(0);
          m.maskNegated = false;
        }
      m.bias = add->operand(1 - j);
      return x;
    }
  }
  return nullptr;
}

/// A MatMul computing `v` through elementwise broadcasting ops (Add,
/// Where, ...: the registry's, Note [Op facts]; up to `depth` levels), or
/// null.
Node *matMulUnder(Value *v, unsigned depth) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d) return nullptr;
  if (d->is("MatMul")) return d;
  const OpEntry *e = OpRegistry::get().lookup(*d);
  if (depth == 0 || !e || !e->elementwise || !e->broadcasting) return nullptr;
  for (unsigned i = 0; i < d->numOperands(); ++i)
    if (Node *n = matMulUnder(d->operand(i), depth - 1)) return n;
  return nullptr;
}

/// True if `v` is, or combines by Add, Where, Mul or Div (up to `depth`
/// levels), a MatMul's product or a scaled one that has another use; `why`
/// names it and its users (a silent miss otherwise: the scores' shape read
/// by expand_as, Note [Scores read for their shape]).
bool scoresWithOtherUse(Value *v, unsigned depth, std::string &why) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d) return false;
  Node *mm = d->is("MatMul") ? d : nullptr;
  if ((d->is("Mul") || d->is("Div")) && d->numOperands() == 2 && d->operand(0) && d->operand(0)->definingNode() &&
      d->operand(0)->definingNode()->is("MatMul") && PatternRewriter::hasSingleLocalUse(d->operand(0)))
    mm = d->operand(0)->definingNode();
  if (mm && !PatternRewriter::hasSingleLocalUse(v) && rankOf(v) >= 3) {
    why = "scores " + q(v) + " of MatMul " + q(mm) + " have another use:";
    for (auto &u : v->uses()) why += " " + u.getOwner()->opType().str() + " " + q(u.getOwner());
    if (v->isGraphOutput()) why += " (a graph output)";
    return true;
  }
  if (depth == 0 || !(d->is("Add") || d->is("Where") || d->is("Mul") || d->is("Div"))) return false;
  for (unsigned i = 0; i < d->numOperands(); ++i)
    if (scoresWithOtherUse(d->operand(i), depth - 1, why)) return true;
  return false;
}

/// Mask, scale and Q·Kᵀ under the Softmax: fills m.mask (peelMask), m.scale,
/// m.q and m.k; `scores` is what the mask is added to, `mm` the MatMul Q·Kᵀ
/// and `kt` its Kᵀ operand (scale factors peeled off).
bool matchProduct(Node &root, PatternRewriter &rw, AttentionMatch &m, Value *&scores, Node *&mm,
                  Value *&kt) {
  scores = peelBiasUnderMask(m.softmax->operand(0), rw, m);
  if (!scores) scores = peelMask(m.softmax->operand(0), rw, m);
  if (!scores) return false;
  std::vector<Node *> scaleNodes;
  Value *qk = peelScale(peelSoftcap(scores, rw, m.softcap), rw, m.scale, scaleNodes);
  mm = qk ? qk->definingNode() : nullptr;
  if (mm && mm->is("MatMul") && !PatternRewriter::hasSingleLocalUse(qk))
    return miss(rw, "single-use", "scores MatMul " + q(mm) + " have another use");
  if (mm && (mm->is("Mul") || mm->is("Div")) && mm->numOperands() == 2) {
    Node *below = mm->operand(0) ? mm->operand(0)->definingNode() : nullptr;
    if (below && below->is("MatMul"))
      return miss(rw, "scale", mm->opType().str() + " " + q(mm) + " scales the scores by " +
                                   q(mm->operand(1)) + ", not a scalar constant");
  }
  if (!mm || !mm->is("MatMul") || mm->numOperands() != 2 || mm->getGraph() != root.getGraph()) {
    // Scores under the mask or scale that another node reads too: say which.
    std::string why;
    if (scoresWithOtherUse(m.softmax->operand(0), 2, why)) return miss(rw, "single-use", why);
    // Still a product of Q and Kᵀ under the Softmax: say so.
    if (Node *under = matMulUnder(m.softmax->operand(0), 3); under && !m.mask)
      return miss(rw, "mask", "Softmax " + q(m.softmax) + " reads " + q(m.softmax->operand(0)) +
                                  ", computed from MatMul " + q(under) +
                                  " in a form fuse-attention does not take apart (a scale, then one additive "
                                  "or boolean mask, or a bias under a boolean mask filled with -inf or the "
                                  "lowest value)");
    return false; // not an attention
  }
  m.q = peelScale(mm->operand(0), rw, m.scale, scaleNodes);
  kt = peelScale(mm->operand(1), rw, m.scale, scaleNodes);
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
  return true;
}

// Note [Additive masks of 0 and the lowest value]
//   Hugging Face's older sliding-window mask (Mistral's
//   _make_sliding_window_causal_mask) is additive and built by masked_fill
//   over masked_fill: full((S, S), L) filled with 0 where causal, then with
//   L again where the window ends, Where(ctx, L, Where(causal, 0, full(L))).
//   Every value of such a chain of Wheres whose branches are 0, L (a
//   constant or a ConstantOfShape holding only that value) or another such
//   Where, one leaf at least per Where, is 0 or L: it is Where(attend, 0, L)
//   with attend read off the conditions (Where(c, 0, W) attends where c or
//   W does, Where(c, L, W) where not c and W does, and the mirror images).
//   Added to the scores it is the finfo.min fill of Note [Masks filled with
//   finfo.min] (s + 0 = s; s + L rounds to L within that Note's bounds, as
//   the fill writes L), so it is fused as that fill: attn_mask Where(attend,
//   0, L/2), and fuse-attention-window then reads attend's band. The
//   conditions' broadcast must be the mask's own shape (a leaf may not
//   widen it), float16 is refused as for the fill (a fully masked row), and
//   a chain with a leaf of any other value keeps the mask-min report.

/// A branch of a 0/L chain: a constant (or ConstantOfShape value) of type
/// `et` all 0 (returns 0) or all L (returns 1); -1 otherwise.
int zeroLowestLeaf(const Value *v, DataType et) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  Node *d = v ? v->definingNode() : nullptr;
  if (!t && d && d->is("ConstantOfShape") && plainAttributes(*d))
    if (const Attribute *a = d->getAttr("value"); a && a->kind() == AttrKind::Tensor && !a->tensors.empty())
      t = a->tensors.get()[0].get();
  std::optional<double> low = lowestFinite(et);
  if (!t || t->dataType() != et || !low) return -1;
  auto vals = t->values<double>();
  if (!vals.ok() || vals->empty()) return -1;
  bool zero = true, lowest = true;
  for (double x : *vals) {
    zero = zero && x == 0;
    lowest = lowest && x == *low;
  }
  return zero ? 0 : lowest ? 1 : -1;
}

/// `v` is a chain of Wheres over 0 and L (Note [Additive masks of 0 and the
/// lowest value]) in the root's graph; collects the conditions in `conds`.
bool zeroLowestChain(Value *v, DataType et, PatternRewriter &rw, std::vector<Value *> &conds, int depth = 0) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || !d->is("Where") || d->numOperands() != 3 || d->numResults() != 1 || depth > 4 ||
      !plainAttributes(*d) || d->getGraph() != rw.root()->getGraph() || !d->operand(0) ||
      elemOf(d->operand(0)) != DataType::Bool)
    return false;
  int a = zeroLowestLeaf(d->operand(1), et), b = zeroLowestLeaf(d->operand(2), et);
  conds.push_back(d->operand(0));
  if (a >= 0 && b >= 0) return a != b;
  if (a < 0 && b < 0) return false;
  return zeroLowestChain(d->operand(a < 0 ? 1 : 2), et, rw, conds, depth + 1);
}

/// The boolean where the 0/L chain `w` is 0 (attends), built of its
/// conditions with Not, And, Or (Note [Additive masks of 0 and the lowest
/// value]).
Value *attendOfChain(Value *w, DataType et, PatternRewriter &rw) {
  Node *d = w->definingNode();
  Value *c = d->operand(0);
  auto &ctx = rw.getModel().getContext();
  auto make = [&](const char *op, std::vector<Value *> ops) {
    Node *n = rw.create(op, ops);
    auto dims = broadcastDims(ops);
    n->result(0)->setType(ctx.getTensorType(DataType::Bool, llvm::ArrayRef<Dim>(*dims)));
    return n->result(0);
  };
  auto notOf = [&](Value *x) {
    Node *n = x->definingNode();
    if (n && n->is("Not") && n->numOperands() == 1) return n->operand(0);
    return make("Not", {x});
  };
  int a = zeroLowestLeaf(d->operand(1), et), b = zeroLowestLeaf(d->operand(2), et);
  if (a >= 0 && b >= 0) return a == 0 ? c : notOf(c);
  if (a < 0) { // Where(c, W, 0 or L)
    Value *sub = attendOfChain(d->operand(1), et, rw);
    return b == 1 ? make("And", {c, sub}) : make("Or", {notOf(c), sub});
  }
  Value *sub = attendOfChain(d->operand(2), et, rw); // Where(c, 0 or L, W)
  return a == 1 ? make("And", {notOf(c), sub}) : make("Or", {c, sub});
}

/// What Attention needs of the matched operands: ranks, one float type
/// (`et`), batch and heads, a positive finite scale, a mask it takes (and
/// whether it is causal). `sq` is Q's sequence dim.
bool checkOperands(Node &root, PatternRewriter &rw, AttentionMatch &m, Value *scores, Node *mm,
                   Value *kt, int64_t rank, std::optional<DataType> &et, Dim &sq) {
  Node *sm = m.softmax;
  // Ranks: Q, Kᵀ, V and the scores all 4-D, or all 3-D.
  if ((rank != 4 && rank != 3) || rankOf(m.q) != rank || rankOf(kt) != rank || rankOf(m.v) != rank)
    return miss(rw, "rank",
                "MatMul " + q(mm) + ", Softmax " + q(sm) + ", MatMul " + q(&root) + ": ranks Q " +
                    std::to_string(rankOf(m.q)) + ", Kᵀ " + std::to_string(rankOf(kt)) + ", V " +
                    std::to_string(rankOf(m.v)) + ", scores " + std::to_string(rank) +
                    "; Attention takes 4-D (or 3-D batch*heads) operands");
  et = elemOf(m.q);
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
  sq = dimOf(m.q, -2);
  Dim skv = dimOf(kt, -1);

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
    if (m.boolMask ? provablyCausal(m.mask, sq, skv, m.maskNegated)
                   : provablyCausalAdditive(m.mask, sq, skv, *et))
      m.causal = true;
    if (m.bias) { // Note [A bias under a boolean mask]
      m.causal = false;
      bool biasExpandQ = false;
      if (elemOf(m.bias) != et) return miss(rw, "mask-type", "bias " + q(m.bias) + " is not of Q's type");
      if (!maskBroadcasts(m.bias, scores, biasExpandQ, why)) return miss(rw, "mask-shape", why);
      m.expandQ = m.expandQ && biasExpandQ;
      if (!broadcastDims({m.mask, m.bias}))
        return miss(rw, "mask-shape", "mask " + q(m.mask) + " and bias " + q(m.bias) + " do not broadcast together");
    }
    // Note [Additive masks of 0 and the lowest value]
    std::vector<Value *> conds;
    if (!m.boolMask && !m.causal && zeroLowestChain(m.mask, *et, rw, conds)) {
      auto dims = broadcastDims(conds);
      const Type *mt = tensorType(m.mask);
      bool same = dims && mt && mt->rank() == (int64_t)dims->size();
      for (size_t i = 0; same && i < dims->size(); ++i) same = sameDim((*dims)[i], mt->dims()[i]);
      if (same && *et == DataType::Float16)
        return miss(rw, "mask-min",
                    "additive mask " + q(m.mask) + " is 0 or float16's lowest -65504, and no float16 bias "
                    "absorbs the scores (a fully masked row would not stay uniform) (Note [Masks filled "
                    "with finfo.min])");
      if (same) m.zeroLowest = m.mask;
    }
    // Note [Masks filled with finfo.min]: an additive mask that may hold the
    // lowest value L gets L/2 for it, except in float16 (a causal one goes).
    if (!m.boolMask && !m.causal && !m.zeroLowest && !additiveLowest(m, *et, rw, why))
      return miss(rw, "mask-min", why);
    if (m.lowestConst && *et == DataType::Float16)
      return miss(rw, "mask-min",
                  "additive mask " + q(m.mask) + " holds float16's lowest -65504, and no float16 bias "
                  "absorbs the scores (a fully masked row would not stay uniform) (Note [Masks filled "
                  "with finfo.min])");
    if (m.lowestFill && PatternRewriter::constantTensor(m.lowestFill)->dataType() != *et)
      return miss(rw, "mask-type", "Where of mask " + q(m.mask) + " fills " + q(m.lowestFill) +
                                       ", not of Q's type");
    // Note [Masks filled with finfo.min]: no float16 bias absorbs the
    // scores, so only a causal mask (no fully masked row) is exact; one
    // offset by a past (K and V Concats of caches) becomes the -inf
    // boolean mask, which fuse-attention-kv-cache makes is_causal.
    if (m.lowestFill && !m.causal && *et == DataType::Float16 && rank == 4 && m.k.identity()) {
      auto past = [](Value *x) -> Value * {
        Node *c = x ? x->definingNode() : nullptr;
        if (!c || !c->is("Concat") || c->numOperands() != 2 || !plainAttributes(*c) || rankOf(x) != 4) return nullptr;
        int64_t axis = NodeContext(*c).getInt("axis", 0);
        return axis == 2 || axis == -2 ? c->operand(0) : nullptr;
      };
      Value *pk = past(m.k.src), *pv = past(m.v);
      if (pk && pv && provablyCausalPastBool(m.mask, m.maskNegated, PastCaches{pk, pv}, sq, skv))
        m.lowestFill = nullptr;
    }
    if (m.lowestFill && !m.causal && *et == DataType::Float16)
      return miss(rw, "mask-fill",
                  "Where of mask " + q(m.mask) + " fills float16's lowest -65504, and no float16 bias "
                  "absorbs the scores (a fully masked row would not stay uniform): fused only when the "
                  "mask is provably causal (Note [Masks filled with finfo.min])");
  }
  return true;
}

/// The 3-D form's pieces, when the head split of Q, K, V and the merge of
/// the result are all there (mergeR set).
struct HeadForms {
  Value *q3 = nullptr, *k3 = nullptr, *v3 = nullptr;
  Node *mergeR = nullptr;
  Value *packed = nullptr;                 // Q, K, V are the thirds of its last axis
  Node *qRope = nullptr, *kRope = nullptr; // rotary embeddings on split heads
  int64_t qHeads = 0, kvHeads = 0, vHeads = 0;
  bool seqFirst = false;
};

HeadForms findHeadForms(Node &root, PatternRewriter &rw, const AttentionMatch &m, int64_t rank) {
  HeadForms f;
  if (rank == 4) {
    Permuted vp = asPermuted(m.v, rw);
    f.q3 = headSplitThroughRope(asPermuted(m.q, rw), rw, f.qHeads, f.qRope);
    f.k3 = f.q3 ? headSplitThroughRope(m.k, rw, f.kvHeads, f.kRope) : nullptr;
    f.v3 = f.k3 ? headSplitSource(vp, rw, f.vHeads) : nullptr;
    if (!f.q3 && m.k.identity())
      if ((f.packed = packedHeadSplitSource(m.q, m.k.src, m.v, f.qHeads))) {
        f.q3 = f.k3 = f.v3 = f.packed;
        f.kvHeads = f.vHeads = f.qHeads;
      }
    if (f.v3 && f.vHeads == f.kvHeads && f.qHeads % f.kvHeads == 0)
      f.mergeR = headMerge(root.result(0), f.qHeads);
  }
  // 3-D scores of sequence-first head splits (Note [Sequence-first
  // heads]): one batch B and H heads for Q, K and V (the scores' B*H rows
  // pair them one to one), and a mask that broadcasts to [B, H, Sq, Skv]
  // as it did to [B*H, Sq, Skv] (at most its last two dims).
  if (rank == 3 && (!m.mask || rankOf(m.mask) <= 2 || (rankOf(m.mask) == 3 && isOne(dimOf(m.mask, 0))))) {
    Permuted kp = m.k.identity() ? asPermuted(m.k.src, rw) : m.k;
    f.q3 = seqFirstHeadSplit(asPermuted(m.q, rw), rw, f.qHeads);
    f.k3 = f.q3 ? seqFirstHeadSplit(kp, rw, f.kvHeads) : nullptr;
    f.v3 = f.k3 ? seqFirstHeadSplit(asPermuted(m.v, rw), rw, f.vHeads) : nullptr;
    if (f.v3 && f.qHeads == f.kvHeads && f.vHeads == f.kvHeads && sameDim(dimOf(f.q3, 1), dimOf(f.k3, 1)) &&
        sameDim(dimOf(f.q3, 1), dimOf(f.v3, 1)))
      f.mergeR = seqFirstHeadMerge(root.result(0), f.qHeads, dimOf(f.q3, 0), dimOf(f.q3, 1));
    f.seqFirst = f.mergeR != nullptr;
  }
  return f;
}

/// Sequence-first Q, K, V [S, B, E] transposed to [B, S, E] (each once).
void batchFirst(PatternRewriter &rw, HeadForms &f, DataType et) {
  auto transposed = [&](Value *t) {
    Node *tr = rw.create("Transpose", {t});
    tr->setAttr(intsAttr("perm", {1, 0, 2}));
    std::vector<Dim> dims{dimOf(t, 1), dimOf(t, 0), dimOf(t, 2)};
    tr->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims)));
    return tr->result(0);
  };
  Value *q0 = f.q3, *k0 = f.k3;
  f.q3 = transposed(f.q3);
  f.k3 = k0 == q0 ? f.q3 : transposed(f.k3);
  f.v3 = f.v3 == q0 ? f.q3 : f.v3 == k0 ? f.k3 : transposed(f.v3);
}

/// A scalar of float type `t` (float, double, float16, bfloat16) holding
/// `x`, rounded to `t`.
Tensor scalarOf(DataType t, double x) {
  std::string raw(dataTypeStorageBytes(t, 1), '\0');
  if (t == DataType::Double) {
    std::memcpy(raw.data(), &x, sizeof x);
  } else if (t == DataType::Float) {
    float f = (float)x;
    std::memcpy(raw.data(), &f, sizeof f);
  } else {
    uint16_t h = t == DataType::Float16 ? floatToHalf((float)x) : floatToBFloat16((float)x);
    std::memcpy(raw.data(), &h, sizeof h);
  }
  return makeTensor(t, {}, std::move(raw));
}

/// The attn_mask operand Attention reads: none for a causal mask, the
/// negation of a negated one, expanded along q_seq where it is 1 there
/// (Note [Attention mask shape]).
Value *attentionMask(Node &root, PatternRewriter &rw, const AttentionMatch &m, const HeadForms &f,
                     const Dim &sq) {
  Value *mask = m.causal ? nullptr : m.mask;
  if (mask && m.bias) {
    // Note [A bias under a boolean mask]: Where(mask, bias, fill), fill
    // -inf or L/2 (the branches swapped where the graph filled where the
    // mask is true).
    DataType et = *elemOf(m.bias);
    std::string base = root.result(0)->name().str();
    double fv = m.lowestFill ? *lowestFinite(et) / 2 : -std::numeric_limits<double>::infinity();
    Value *fill = rw.createConstant(base + "_mask_fill", scalarOf(et, fv));
    Node *w = rw.create("Where", m.maskNegated ? std::vector<Value *>{mask, fill, m.bias}
                                               : std::vector<Value *>{mask, m.bias, fill});
    auto dims = broadcastDims({mask, m.bias});
    w->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(*dims)));
    mask = w->result(0);
  } else if (mask && m.lowestFill) {
    // Note [Masks filled with finfo.min]: the additive Where(mask, 0, L/2),
    // or Where(mask, L/2, 0) where the graph filled where the mask is true.
    DataType et = PatternRewriter::constantTensor(m.lowestFill)->dataType();
    std::string base = root.result(0)->name().str();
    Value *zero = rw.createConstant(base + "_mask_zero", scalarOf(et, 0.0));
    Value *bias = rw.createConstant(base + "_mask_bias", scalarOf(et, *lowestFinite(et) / 2));
    Node *w = rw.create("Where", m.maskNegated ? std::vector<Value *>{mask, bias, zero}
                                               : std::vector<Value *>{mask, zero, bias});
    std::vector<Dim> dims(tensorType(mask)->dims().begin(), tensorType(mask)->dims().end());
    w->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims)));
    mask = w->result(0);
  } else if (mask && m.zeroLowest) {
    // Note [Additive masks of 0 and the lowest value]: Where(attend, 0, L/2).
    DataType et = *elemOf(m.zeroLowest);
    std::string base = root.result(0)->name().str();
    Value *attend = attendOfChain(m.zeroLowest, et, rw);
    Value *zero = rw.createConstant(base + "_mask_zero", scalarOf(et, 0.0));
    Value *bias = rw.createConstant(base + "_mask_bias", scalarOf(et, *lowestFinite(et) / 2));
    Node *w = rw.create("Where", {attend, zero, bias});
    w->result(0)->setType(m.zeroLowest->type());
    mask = w->result(0);
  } else if (mask && m.lowestConst) {
    // Note [Masks filled with finfo.min]: L/2 for L, in the constant mask
    // itself or in the scalar that multiplies an integer-valued factor.
    std::string base = root.result(0)->name().str();
    Value *half = rw.createConstant(base + (m.lowestFactor ? "_mask_bias" : "_mask"),
                                    halvedLowest(*PatternRewriter::constantTensor(m.lowestConst)));
    if (m.lowestFactor) {
      Node *mul = rw.create("Mul", {m.lowestFactor, half});
      mul->result(0)->setType(mask->type());
      half = mul->result(0);
    }
    mask = half;
  } else if (mask && m.maskNegated) {
    Node *n = rw.create("Not", {mask});
    n->result(0)->setType(mask->type());
    mask = n->result(0);
  }
  if (mask && m.expandQ) {
    // [.., 1, kv] -> [.., q_seq, kv]: Expand to Concat(Shape(Q)[-2], [1]);
    // every form's Q operand (4-D, 3-D [B, S, hidden], packed, batch*heads)
    // has q_seq as its last but one dim.
    Value *qv = f.mergeR ? (f.packed ? f.packed : f.q3) : m.q;
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
  return mask;
}

void setScaleAndCausal(Node *a, const AttentionMatch &m) {
  a->setAttr(floatAttr("scale", (float)m.scale));
  if (m.causal) a->setAttr(intAttr("is_causal", 1));
  if (m.softcap > 0) a->setAttr(floatAttr("softcap", (float)m.softcap));
}

/// The packed [B, S, 3*E] split into Q, K, V [B, S, E].
void splitPacked(Node &root, PatternRewriter &rw, HeadForms &f, DataType et) {
  int64_t e = dimOf(f.packed, 2).value / 3;
  Value *sizes = rw.createConstant(root.result(0)->name().str() + "_qkv_split",
                                   makeInt64Tensor({3}, {e, e, e}));
  Node *sp = rw.create("Split", {f.packed, sizes}, 3);
  sp->setAttr(intAttr("axis", 2));
  std::vector<Dim> dims(tensorType(f.packed)->dims().begin(), tensorType(f.packed)->dims().end());
  dims[2] = Dim::known(e);
  const Type *t = rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims));
  for (unsigned i = 0; i < 3; ++i) sp->result(i)->setType(t);
  f.q3 = sp->result(0);
  f.k3 = sp->result(1);
  f.v3 = sp->result(2);
}

/// The sequence-first Attention `a`'s result [B, Sq, Ev] back to the
/// merge's [Sq, B, Ev] or [Sq*B, Ev]; replaces the merge.
bool seqFirstResult(Node &root, PatternRewriter &rw, const HeadForms &f, Node *a, DataType et) {
  auto &ctx = rw.getModel().getContext();
  Node *mergeR = f.mergeR;
  Dim ev = dimOf(mergeR->result(0), -1);
  std::vector<Dim> dims{dimOf(f.q3, 0), dimOf(f.q3, 1), ev};
  a->result(0)->setType(ctx.getTensorType(et, llvm::ArrayRef<Dim>(dims)));
  Node *t = rw.create("Transpose", {a->result(0)});
  t->setAttr(intsAttr("perm", {1, 0, 2}));
  Value *out = t->result(0);
  if (rankOf(mergeR->result(0)) == 3) {
    PatternRewriter::copyNodeInfo(*mergeR, *t);
    out->setType(mergeR->result(0)->type());
  } else {
    std::vector<Dim> tdims{dims[1], dims[0], ev};
    out->setType(ctx.getTensorType(et, llvm::ArrayRef<Dim>(tdims)));
    Value *shape = rw.createConstant(root.result(0)->name().str() + "_merge",
                                     makeInt64Tensor({2}, {-1, ev.value}));
    Node *r = rw.create("Reshape", {out, shape});
    PatternRewriter::copyNodeInfo(*mergeR, *r);
    r->result(0)->setType(mergeR->result(0)->type());
    out = r->result(0);
  }
  return rw.replaceNode(mergeR, {out});
}

/// The 3-D form: Attention of the unsplit Q, K, V with q_num_heads and
/// kv_num_heads replaces the head merge.
bool rewriteHeads(Node &root, PatternRewriter &rw, const AttentionMatch &m, HeadForms &f, Value *mask,
                  DataType et) {
  if (f.packed) splitPacked(root, rw, f, et);
  // Note [Rotary before the head split]
  if (f.qRope) f.q3 = ropeOnHidden(f.qRope, f.q3, f.qHeads, rw);
  if (f.kRope) f.k3 = ropeOnHidden(f.kRope, f.k3, f.kvHeads, rw);
  std::vector<Value *> ops{f.q3, f.k3, f.v3};
  if (mask) ops.push_back(mask);
  Node *a = rw.create("Attention", ops);
  setScaleAndCausal(a, m);
  a->setAttr(intAttr("q_num_heads", f.qHeads));
  a->setAttr(intAttr("kv_num_heads", f.kvHeads));
  PatternRewriter::copyNodeInfo(root, *a);
  if (f.seqFirst) return seqFirstResult(root, rw, f, a, et);
  a->result(0)->setType(f.mergeR->result(0)->type());
  return rw.replaceNode(f.mergeR, {a->result(0)});
}

// Note [Heads folded into the batch]
//   CLIP's text encoder (and older Hugging Face code) folds the heads into
//   the batch: Q, K, V [B, H, S, D] reshaped to [B*H, S, D], torch.bmm,
//   Softmax, bmm, and the result reshaped back to [B, H, S, Dv]. Merging
//   the first two axes and splitting them again are both row-major (row
//   n = b*H + h), so the 4-D Attention of the [B, H, S, D] sources, whose
//   result stands for the split back, computes the same elements.
//   fuse-attention makes that when each of Q, K, V is such a merge (a
//   Reshape whose last two dims are proven its source's, so the first is
//   B*H), all of one B and one H, K not transposed, the result's only use
//   is the split back to [B, H, Sq, Dv] with that B and H, and the mask
//   (and a bias under it) is absent, causal, or broadcasts alike to
//   [B*H, Sq, Skv] and to [B, H, Sq, Skv] (rank 2 or less, or [1, Sq,
//   Skv]), or is the [B*H, s, k] that fuse-attention-mask-view made of a
//   [B, 1, s, k] one (its Reshape(Expand(o, [1, H, 1, 1])): o itself, which
//   puts o[b] at [b, h] as the folded one put it at row b*H + h; a
//   key-padding mask). fuse-attention-heads
//   then takes the head split and merge around it (the 3-D form).
//   K may also come folded already transposed (BLOOM's k.permute(0, 2, 3,
//   1).reshape(B*H, D, S)): a Reshape of [B, H, D, S] to [B*H, D, S] is K
//   [B, H, S, D] transposed by [0, 1, 3, 2] and folded the same way.
//   Otherwise the 3-D scores fuse as a 4-D Attention of batch 1.
//
// Note [A bias folded from the heads]
//   BLOOM's ALiBi bias is one row per folded row, [B*H, 1, S], made as
//   Reshape(x [B, H, S], [B*H, 1, S]) (slopes[h] * positions[b] per head,
//   reshaped): element (b, h, j) of x sits at offset (b*H + h)*S + j, which
//   is row b*H + h of the reshape, the row of head h of batch b as Q's fold
//   numbers it. So with the heads unfolded the bias is Unsqueeze(x, 2),
//   [B, H, 1, S] (or x itself when x is [B, H, s, S] and the bias
//   [B*H, s, S]), broadcast over the queries as the folded one was. The
//   reshape's first dim is B*H by the element count (the other dims are
//   equal; an empty tensor has no element to misplace), and x's B and H
//   must be proven Q's. A bias not made so (a graph input, a head-major
//   [H, B, S] source) keeps the batch-1 form: its rows have no proven
//   [B, H, ..] place.

/// The 4-D source [B, H, S, D] of a Reshape `x3` to [B*H, S, D] in the
/// root's graph (Note [Heads folded into the batch]), or null.
Value *foldedHeadsSource(Value *x3, PatternRewriter &rw) {
  Node *rs = x3 ? x3->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->numOperands() != 2 || !plainAttributes(*rs) ||
      NodeContext(*rs).getInt("allowzero", 0) || rs->getGraph() != rw.root()->getGraph())
    return nullptr;
  Value *x4 = rs->operand(0);
  if (rankOf(x4) != 4 || rankOf(x3) != 3 || !sameDim(dimOf(x3, 1), dimOf(x4, 2)) ||
      !sameDim(dimOf(x3, 2), dimOf(x4, 3)))
    return nullptr;
  return x4;
}

/// The mask [B*H, s, k] that fuse-attention-mask-view made of o
/// [B, 1, s, k] on a view of the scores, Reshape(Expand(o, [1, H, 1, 1]),
/// [-1, s, k]) with B and H those of `q4` [B, H, ..]: o, whose broadcast
/// over [B, H, s, k] puts o[b] at [b, h] as the folded mask put it at row
/// b*H + h (Note [Heads folded into the batch]); or null.
Value *unfoldedMask(Value *mask, const Value *q4) {
  Node *rs = mask ? mask->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->numOperands() != 2 || !plainAttributes(*rs) ||
      NodeContext(*rs).getInt("allowzero", 0) || rankOf(mask) != 3)
    return nullptr;
  Node *ex = rs->operand(0) ? rs->operand(0)->definingNode() : nullptr;
  if (!ex || !ex->is("Expand") || ex->numOperands() != 2 || !plainAttributes(*ex)) return nullptr;
  auto heads = constantInts(ex->operand(1));
  Value *o = ex->operand(0);
  Dim h = dimOf(q4, 1);
  if (!heads || *heads != std::vector<int64_t>{1, h.isKnown() ? h.value : -1, 1, 1} || rankOf(o) != 4 ||
      !isOne(dimOf(o, 1)) || !sameDim(dimOf(o, 0), dimOf(q4, 0)) || !sameDim(dimOf(mask, 1), dimOf(o, 2)) ||
      !sameDim(dimOf(mask, 2), dimOf(o, 3)))
    return nullptr;
  return o;
}

/// The source x of a bias [B*H, s, k] folded from [B, H, k] (s = 1) or
/// [B, H, s, k] by a Reshape, B and H those of `q4` (Note [A bias folded
/// from the heads]), or null.
Value *foldedBiasSource(Value *bias, const Value *q4) {
  Node *rs = bias ? bias->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->numOperands() != 2 || !plainAttributes(*rs) ||
      NodeContext(*rs).getInt("allowzero", 0) || rankOf(bias) != 3)
    return nullptr;
  Value *x = rs->operand(0);
  int64_t r = rankOf(x);
  if ((r != 3 && r != 4) || !sameDim(dimOf(x, 0), dimOf(q4, 0)) || !sameDim(dimOf(x, 1), dimOf(q4, 1)) ||
      !sameDim(dimOf(x, -1), dimOf(bias, 2)) || !(r == 3 ? isOne(dimOf(bias, 1)) : sameDim(dimOf(x, 2), dimOf(bias, 1))))
    return nullptr;
  return x;
}

/// Q, K, V of 3-D scores as the 4-D sources of their head folds, and the
/// Reshape splitting the result back (Note [Heads folded into the
/// batch]): fills m and returns the Reshape, or null (m unchanged).
Node *unfoldHeads(Node &root, PatternRewriter &rw, AttentionMatch &m) {
  // K itself folded, or K folded already transposed ([B, H, D, S] to
  // [B*H, D, S]: Kᵀ is the Reshape, K its Transpose [0, 2, 1]).
  bool kFoldedT = m.k.perm == std::vector<int64_t>{0, 2, 1};
  if (!m.k.identity() && !kFoldedT) return nullptr;
  Value *q4 = foldedHeadsSource(m.q, rw), *k4 = foldedHeadsSource(m.k.src, rw), *v4 = foldedHeadsSource(m.v, rw);
  if (!q4 || !k4 || !v4) return nullptr;
  // A mask (or bias) broadcasts alike to [B*H, Sq, Skv] and [B, H, Sq,
  // Skv] when of rank 2 or less or [1, Sq, Skv].
  auto alike = [](const Value *x) {
    int64_t r = rankOf(x);
    return r >= 0 && (r <= 2 || (r == 3 && isOne(dimOf(x, 0))));
  };
  Value *mask4 = m.mask;
  if (m.mask && !m.causal && !alike(m.mask)) mask4 = unfoldedMask(m.mask, q4);
  // Note [A bias folded from the heads]
  Value *biasSrc = m.bias && !alike(m.bias) ? foldedBiasSource(m.bias, q4) : nullptr;
  if ((m.mask && !m.causal && !mask4) || (m.bias && !alike(m.bias) && !biasSrc)) return nullptr;
  for (int64_t i = 0; i < 2; ++i)
    if (!sameDim(dimOf(q4, i), dimOf(k4, i)) || !sameDim(dimOf(q4, i), dimOf(v4, i))) return nullptr;
  Value *y = root.result(0);
  if (!PatternRewriter::hasSingleLocalUse(y)) return nullptr;
  Node *r = y->firstUse()->getOwner();
  if (!r->is("Reshape") || r->numOperands() != 2 || r->operand(0) != y || r->numResults() != 1 ||
      !plainAttributes(*r) || NodeContext(*r).getInt("allowzero", 0))
    return nullptr;
  Value *out = r->result(0);
  if (rankOf(out) != 4 || !sameDim(dimOf(out, 0), dimOf(q4, 0)) || !sameDim(dimOf(out, 1), dimOf(q4, 1)) ||
      !sameDim(dimOf(out, 2), dimOf(y, 1)) || !sameDim(dimOf(out, 3), dimOf(y, 2)))
    return nullptr;
  m.q = q4;
  m.k = Permuted{k4, {0, 1, 2, 3}};
  if (kFoldedT) {
    // K = Transpose(k4, [0, 1, 3, 2]); through a Transpose under k4 (the
    // permute before the fold, whatever else reads it), one Transpose of
    // its source.
    m.k.perm = {0, 1, 3, 2};
    Node *t = k4->definingNode();
    auto inner = t && t->is("Transpose") && t->getGraph() == rw.root()->getGraph() && plainAttributes(*t)
                     ? transposePerm(*t)
                     : std::nullopt;
    if (inner && inner->size() == 4)
      m.k = Permuted{t->operand(0), {(*inner)[0], (*inner)[1], (*inner)[3], (*inner)[2]}};
  }
  m.v = v4;
  m.mask = mask4;
  if (biasSrc && rankOf(biasSrc) == 3) {
    // [B, H, k] -> [B, H, 1, k].
    Node *u = rw.create("Unsqueeze", {biasSrc, rw.createConstant(root.result(0)->name().str() + "_bias_axes",
                                                                   makeInt64Tensor({1}, {2}))});
    std::vector<Dim> dims{dimOf(biasSrc, 0), dimOf(biasSrc, 1), Dim::known(1), dimOf(biasSrc, 2)};
    u->result(0)->setType(rw.getModel().getContext().getTensorType(*elemOf(m.bias), llvm::ArrayRef<Dim>(dims)));
    m.bias = u->result(0);
  } else if (biasSrc) {
    m.bias = biasSrc;
  }
  return r;
}

/// The 4-D form (3-D batch*heads scores through Unsqueeze/Squeeze as a
/// batch of 1): Attention of Q, K (transposed back if need be), V
/// replaces the root (or `split`, the split back of unfolded heads).
bool rewritePlain(Node &root, PatternRewriter &rw, const AttentionMatch &m, Value *mask, int64_t rank,
                  DataType et, Node *split = nullptr) {
  Value *k = m.k.src;
  if (!m.k.identity()) {
    Node *t = rw.create("Transpose", {k});
    t->setAttr(intsAttr("perm", m.k.perm));
    std::vector<Dim> dims;
    for (int64_t p : m.k.perm) dims.push_back(dimOf(k, p));
    t->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims)));
    k = t->result(0);
  }
  Value *qv = m.q, *vv = m.v;
  Value *axes0 = nullptr;
  auto unsqueeze = [&](Value *x) {
    Node *u = rw.create("Unsqueeze", {x, axes0});
    std::vector<Dim> dims{Dim::known(1)};
    for (const Dim &d : tensorType(x)->dims()) dims.push_back(d);
    u->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims)));
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
  setScaleAndCausal(a, m);
  if (rank == 4) {
    Node *r = split ? split : &root;
    PatternRewriter::copyNodeInfo(*r, *a);
    a->result(0)->setType(r->result(0)->type());
    return rw.replaceNode(r, {a->result(0)});
  }
  std::vector<Dim> dims{Dim::known(1)};
  for (const Dim &d : tensorType(root.result(0))->dims()) dims.push_back(d);
  a->result(0)->setType(rw.getModel().getContext().getTensorType(et, llvm::ArrayRef<Dim>(dims)));
  Node *sq0 = rw.create("Squeeze", {a->result(0), axes0});
  PatternRewriter::copyNodeInfo(root, *sq0);
  sq0->result(0)->setType(root.result(0)->type());
  return rw.replaceNode(&root, {sq0->result(0)});
}

/// fuse-attention, rooted at the MatMul probabilities · V.
bool fuseAttention(Node &root, PatternRewriter &rw) {
  AttentionMatch m;
  int64_t rank = -1;
  if (!matchSoftmax(root, rw, m, rank)) return false;
  Value *scores = nullptr, *kt = nullptr;
  Node *mm = nullptr;
  if (!matchProduct(root, rw, m, scores, mm, kt)) return false;
  std::optional<DataType> et;
  Dim sq;
  if (!checkOperands(root, rw, m, scores, mm, kt, rank, et, sq)) return false;
  HeadForms f = findHeadForms(root, rw, m, rank);
  // Rewrite.
  // Note [Heads folded into the batch]
  Node *split = rank == 3 && !f.mergeR ? unfoldHeads(root, rw, m) : nullptr;
  if (f.seqFirst) batchFirst(rw, f, *et); // [S, B, E] -> [B, S, E]
  Value *mask = attentionMask(root, rw, m, f, sq);
  if (f.mergeR) return rewriteHeads(root, rw, m, f, mask, *et);
  return rewritePlain(root, rw, m, mask, split ? 4 : rank, *et, split);
}


// Note [Scores read for their shape]
//   Hugging Face code often reads the scores' shape to build the mask it
//   adds: mask.expand_as(scores), exported Expand(mask, Shape(scores)), or
//   torch.zeros_like(scores).masked_fill(...), exported
//   ConstantOfShape(Shape(scores)). That second use of the scores blocks
//   the fusion (the MatMul must die with it). But the expanded value only
//   meets the scores again in an elementwise op (the Where of masked_fill,
//   the Add of the bias), which broadcasts to the scores' shape anyway: so
//   Expand(m, Shape(s)) there may be m itself, and ConstantOfShape(Shape(s))
//   its one-element value, with the same result element for element (the
//   broadcast of [m, s] is the broadcast of [expand(m, s), s]). The
//   pattern fuse-attention-shape-use does that where the path from the
//   Expand (or ConstantOfShape) to an elementwise op that reads s itself
//   is at most one other elementwise op (the Where of zeros_like's
//   masked_fill, retyped to its smaller broadcast), each a single use,
//   and s is scores (a MatMul, or a Mul/Div of one). Nothing is
//   recomputed: the Shape and the Expand die, and the fused model is
//   cheaper than one keeping the MatMul alive only for its shape or one
//   computing the shape from Q and K (whose head split would then have a
//   second use and block the 3-D form).

/// An op that broadcasts its operands (all ways: not PRelu's slope or
/// Clip's bounds, which broadcast to the input only) and computes each
/// element from theirs (its registry entry says so, Note [Op facts]), with
/// no attributes the rewrite must keep.
bool elementwiseBroadcast(const Node &n) {
  const OpEntry *e = OpRegistry::get().lookup(n);
  return e && e->elementwise && e->broadcasting && n.numAttributes() == 0 && !n.hasSubgraphs() &&
         !n.is("PRelu") && !n.is("Clip");
}

/// The numpy broadcast of the dims of `vs`, or nullopt where a pair of
/// dims is neither 1 nor provably equal (or a rank is unknown).
std::optional<std::vector<Dim>> broadcastDims(const std::vector<Value *> &vs) {
  std::vector<Dim> out;
  for (Value *v : vs) {
    const Type *t = tensorType(v);
    if (!t || t->rank() < 0) return std::nullopt;
    auto dims = t->dims();
    if (dims.size() > out.size()) out.insert(out.begin(), dims.size() - out.size(), Dim::known(1));
    for (size_t i = 0; i < dims.size(); ++i) {
      Dim &o = out[out.size() - dims.size() + i];
      if (isOne(dims[i])) continue;
      if (isOne(o) || sameDim(o, dims[i])) o = dims[i];
      else return std::nullopt;
    }
  }
  return out;
}

} // namespace

bool scoresShapeUse(Node &shape, PatternRewriter &rw) {
  if (shape.numOperands() != 1 || shape.numResults() != 1 || shape.numAttributes() != 0) return false;
  Value *s = shape.operand(0), *sh = shape.result(0);
  Node *sd = s ? s->definingNode() : nullptr;
  if (!sd || !(sd->is("MatMul") || sd->is("Mul") || sd->is("Div")) || sd->getGraph() != shape.getGraph())
    return false;
  if (sd->is("Mul") || sd->is("Div")) {
    Node *below = sd->operand(0) ? sd->operand(0)->definingNode() : nullptr;
    if (!below || !below->is("MatMul")) return false;
  }
  if (!PatternRewriter::hasSingleLocalUse(sh)) return false;
  Node *u = sh->firstUse()->getOwner();
  // The expanded value e and what stands for it: m, or the fill value
  // (a constant made once the rest matched).
  Value *e = nullptr, *by = nullptr;
  std::optional<Tensor> fill;
  if (u->is("Expand") && u->numOperands() == 2 && u->operand(1) == sh && u->operand(0) != sh) {
    e = u->result(0);
    by = u->operand(0);
    if (!tensorType(by) || rankOf(by) < 0) return false;
  } else if (u->is("ConstantOfShape") && u->numOperands() == 1) {
    Attribute *val = u->getAttr("value");
    if (u->numAttributes() > (val ? 1u : 0u) || (val && (val->kind() != AttrKind::Tensor || val->tensors.empty())))
      return false;
    fill = val ? Tensor(*val->tensors.get()[0]) : makeFloatTensor({1}, {0.0f});
    if (fill->numElements() != 1 || fill->dims().size() != 1) return false;
    e = u->result(0);
  } else {
    return false;
  }
  auto &ctx = rw.getModel().getContext();
  auto makeFill = [&] {
    Value *v = rw.createConstant(e->name().str() + "_value", *fill);
    v->setType(ctx.getTensorType(fill->dataType(), llvm::ArrayRef<int64_t>{1}));
    return v;
  };
  // e -> [x ->] c, each a single use; c reads s.
  Node *x = nullptr, *c = nullptr;
  Value *cur = e;
  for (unsigned step = 0; step < 2 && !c; ++step) {
    if (!PatternRewriter::hasSingleLocalUse(cur)) return false;
    Node *n = cur->firstUse()->getOwner();
    if (!elementwiseBroadcast(*n) || n->numResults() != 1) return false;
    bool readsS = false;
    for (unsigned i = 0; i < n->numOperands(); ++i) readsS |= n->operand(i) == s;
    if (readsS) c = n;
    else if (step == 0) x = n, cur = n->result(0);
  }
  if (!c) return false;
  Node *first = x ? x : c;
  unsigned slot = 0;
  while (slot < first->numOperands() && first->operand(slot) != e) ++slot;
  if (slot == first->numOperands()) return false;
  if (!x) {
    rw.setOperand(c, slot, fill ? makeFill() : by);
    return true;
  }
  // x gets its own smaller broadcast: a new node, typed so.
  std::vector<Value *> ops;
  for (unsigned i = 0; i < x->numOperands(); ++i) ops.push_back(i == slot ? by : x->operand(i));
  std::optional<std::vector<Dim>> dims;
  if (fill) {
    std::vector<Value *> others;
    for (unsigned i = 0; i < x->numOperands(); ++i)
      if (i != slot) others.push_back(x->operand(i));
    dims = broadcastDims(others); // (a [1] fill broadcasts to any)
    if (dims && dims->empty()) dims->push_back(Dim::known(1));
  } else {
    dims = broadcastDims(ops);
  }
  auto et = elemOf(x->result(0));
  if (!dims || !et) return false;
  if (fill) ops[slot] = makeFill();
  rw.setInsertionPoint(x);
  Node *nx = rw.create(x->opType(), ops);
  PatternRewriter::copyNodeInfo(*x, *nx);
  nx->result(0)->setType(ctx.getTensorType(*et, llvm::ArrayRef<Dim>(*dims)));
  unsigned xslot = 0;
  while (xslot < c->numOperands() && c->operand(xslot) != x->result(0)) ++xslot;
  rw.setOperand(c, xslot, nx->result(0));
  return true;
}

namespace {

// Note [Masks on a 4-D view of 3-D scores]
//   Code that computes the scores batched as [B*H, S, K] (torch.bmm,
//   baddbmm: nn.MultiheadAttention's functional path, older Hugging Face
//   models, BLOOM) views them as [B, H, S, K] to apply a [B, 1, 1, K] or
//   [B, 1, S, K] mask, and views the result back to [B*H, S, K], before or
//   after the Softmax. A view that only splits the first axis and the view
//   back that merges it commute with an elementwise op (and with a Softmax
//   over the last axis) once every other operand is seen the same way:
//   o [B, H or 1, s, k] becomes Reshape(Expand(o, [1, H, 1, 1]), [-1, s, k])
//   (row n = b*H + h of the 3-D view is element [b, h] of the 4-D one), o
//   [1, 1, s, k] becomes Squeeze(o, 0), o of rank 2 or less stays (it
//   aligns with the last axes either way). The pattern
//   fuse-attention-mask-view makes that move, so the mask is applied to the
//   3-D scores, which fuse-attention then fuses (as the Attention of the
//   unfolded heads, Note [Heads folded into the batch], which reads the
//   [B, 1, s, k] mask again, or as a 4-D Attention of batch 1). Exact: the
//   same elements, combined by the same op. Only the mask is expanded over
//   the heads (it is small next to the scores, which are no longer
//   materialised).
//
// Note [Masks with equal slices]
//   CLIP builds its causal mask per batch: torch.empty(B, S, S)
//   .fill_(finfo.min).triu_(1)[:, None], exported Unsqueeze(Trilu(
//   ConstantOfShape(shape), upper, k)) of [B, 1, S, S]. Every [S, S] slice
//   of a Trilu of a one-value ConstantOfShape is the same matrix (Trilu
//   works on the last two axes alone), and Unsqueezes before the last two
//   axes only add leading dims of 1. Such an operand o, whose leading dims
//   broadcast to the view's (checked as for any operand, and the op's
//   result is the view's shape), adds T[i, j] at [b, h, i, j] for every b
//   and h: on the 3-D scores it is T itself, rank 2, made as Trilu(
//   ConstantOfShape(shape[-2:]), upper, k) with the same value and k. So
//   the mask is not expanded over the heads, and fuse-attention sees the
//   triangle it knows (Note [Causal mask forms]: is_causal for finfo.min
//   above the diagonal); the buffer's nodes die with it.

/// The Trilu of a one-value ConstantOfShape under `o`, seen through
/// Unsqueezes that add only dims before the last two (Note [Masks with
/// equal slices]), or null.
Node *equalSlicesTrilu(const Value *o) {
  for (int depth = 0; depth < 3 && o; ++depth) {
    Node *d = o->definingNode();
    if (!d || !plainAttributes(*d) || d->numResults() != 1) return nullptr;
    if (d->is("Trilu")) {
      int64_t r = rankOf(o);
      Value *c = d->numOperands() >= 1 ? d->operand(0) : nullptr;
      Node *cs = c ? c->definingNode() : nullptr;
      if (r < 2 || !cs || !cs->is("ConstantOfShape") || cs->numOperands() != 1 || cs->numAttributes() != 1 ||
          !plainAttributes(*cs) || rankOf(cs->operand(0)) != 1 || elemOf(cs->operand(0)) != DataType::Int64)
        return nullptr;
      const Attribute *val = cs->getAttr("value");
      if (!val || val->kind() != AttrKind::Tensor || val->tensors.empty()) return nullptr;
      auto n = val->tensors.get()[0]->numElements();
      if (!n || *n != 1 || (d->numOperands() > 1 && d->operand(1) && !PatternRewriter::constantTensor(d->operand(1))))
        return nullptr;
      return d;
    }
    if (!d->is("Unsqueeze") || d->numOperands() < 1) return nullptr;
    int64_t r = rankOf(o);
    NodeAxes axes = readAxes(*d, PatternRewriter::constantTensor);
    if (r < 3 || axes.kind != NodeAxes::Known) return nullptr;
    for (int64_t a : axes.values)
      if ((a < 0 ? a + r : a) < 0 || (a < 0 ? a + r : a) >= r - 2) return nullptr;
    o = d->operand(0);
  }
  return nullptr;
}

} // namespace

bool attentionMaskView(Node &back, PatternRewriter &rw) {
  if (back.numOperands() != 2 || back.numResults() != 1 || rankOf(back.result(0)) != 3 ||
      !plainAttributes(back) || NodeContext(back).getInt("allowzero", 0))
    return false;
  Node *sm = rw.singleUseProducer(back, 0, "Softmax");
  Node *op = nullptr;
  if (sm) {
    if (sm->numOperands() != 1 || !plainAttributes(*sm) || rankOf(sm->result(0)) != 4) return false;
    int64_t axis = NodeContext(*sm).getInt("axis", -1);
    if (axis != -1 && axis != 3) return false;
    Value *in = sm->operand(0);
    op = in && PatternRewriter::hasSingleLocalUse(in) ? in->definingNode() : nullptr;
  } else {
    Value *in = back.operand(0);
    op = in && PatternRewriter::hasSingleLocalUse(in) ? in->definingNode() : nullptr;
  }
  if (!op || op->getGraph() != back.getGraph() || op->numResults() != 1 || !elementwiseBroadcast(*op))
    return false;
  // The view of the scores among op's operands.
  Node *view = nullptr;
  unsigned slot = 0;
  for (unsigned i = 0; i < op->numOperands() && !view; ++i) {
    Node *d = rw.singleUseProducer(*op, i, "Reshape");
    if (d && d->numOperands() == 2 && plainAttributes(*d) && !NodeContext(*d).getInt("allowzero", 0) &&
        rankOf(d->operand(0)) == 3 && rankOf(d->result(0)) == 4)
      view = d, slot = i;
  }
  if (!view) return false;
  Value *s3 = view->operand(0), *v4 = view->result(0);
  // Scores: a MatMul, or a scale or bias of one (baddbmm), two levels deep.
  std::function<bool(const Value *, unsigned)> fromMatMul = [&](const Value *v, unsigned depth) {
    Node *d = v ? v->definingNode() : nullptr;
    if (!d) return false;
    if (d->is("MatMul")) return true;
    if (depth == 0 || !(d->is("Mul") || d->is("Div") || d->is("Add")) || d->numOperands() != 2) return false;
    return fromMatMul(d->operand(0), depth - 1) || fromMatMul(d->operand(1), depth - 1);
  };
  if (!fromMatMul(s3, 2)) return false;
  Dim h = dimOf(v4, 1);
  auto et = elemOf(op->result(0));
  // The view splits axis 0 only; the view back merges it again.
  bool splits = h.isKnown() && et && sameDim(dimOf(v4, 2), dimOf(s3, 1)) && sameDim(dimOf(v4, 3), dimOf(s3, 2));
  for (int64_t i = 0; splits && i < 3; ++i) splits = sameDim(dimOf(back.result(0), i), dimOf(s3, i));
  const Type *ot = tensorType(op->result(0));
  for (int64_t i = 0; splits && i < 4; ++i) splits = ot && ot->rank() == 4 && sameDim(ot->dims()[i], dimOf(v4, i));
  // A candidate from here on: refusals are reported.
  if (!splits)
    return miss(rw, "mask-view", "Reshape " + q(view) + " of scores " + q(s3) + " and Reshape " + q(&back) +
                                     " are not a split of the first axis into [B, H, ...] (H known) and its "
                                     "merge back, around " + q(op));
  // Every other operand, seen on the 3-D scores (the Note); checked first.
  for (unsigned i = 0; i < op->numOperands(); ++i) {
    if (i == slot) continue;
    Value *o = op->operand(i);
    int64_t r = rankOf(o);
    bool fits = o && r >= 0 && r <= 4 && (r != 3 || isOne(dimOf(o, 0)) || equalSlicesTrilu(o));
    if (fits && r == 3 && !isOne(dimOf(o, 0))) fits = sameDim(dimOf(o, 0), h);
    if (fits && r == 4)
      fits = (isOne(dimOf(o, 0)) && isOne(dimOf(o, 1))) ||
             (sameDim(dimOf(o, 0), dimOf(v4, 0)) && (isOne(dimOf(o, 1)) || sameDim(dimOf(o, 1), h)));
    if (!fits)
      return miss(rw, "mask-view", "operand " + q(o) + " of " + q(op) + " on the view " + q(v4) +
                                       " is not [B, H or 1, s, k], [1, 1, s, k] or of rank 2 or less");
  }
  auto &ctx = rw.getModel().getContext();
  std::string base = back.result(0)->name().str();
  rw.setInsertionPoint(op);
  std::vector<Value *> ops;
  Value *heads = nullptr, *minus1 = nullptr;
  for (unsigned i = 0; i < op->numOperands(); ++i) {
    Value *o = op->operand(i);
    if (i == slot) {
      ops.push_back(s3);
      continue;
    }
    DataType ot = elemOf(o).value_or(DataType::Float);
    if (Node *tr = rankOf(o) >= 3 ? equalSlicesTrilu(o) : nullptr) {
      // Note [Masks with equal slices]: the one [s, k] slice.
      Node *cs = tr->operand(0)->definingNode();
      Node *last2 = rw.create("Slice", {cs->operand(0), rw.createConstant(base + "_last2", makeInt64Tensor({1}, {-2})),
                                        rw.createConstant(base + "_end", makeInt64Tensor({1}, {std::numeric_limits<int64_t>::max()}))});
      last2->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{2}));
      Node *fill = rw.create("ConstantOfShape", {last2->result(0)});
      fill->setAttr(tensorAttr("value", Tensor(*cs->getAttr("value")->tensors.get()[0])));
      std::vector<Dim> dims{dimOf(o, -2), dimOf(o, -1)};
      fill->result(0)->setType(ctx.getTensorType(ot, llvm::ArrayRef<Dim>(dims)));
      std::vector<Value *> tops{fill->result(0)};
      if (tr->numOperands() > 1 && tr->operand(1)) tops.push_back(tr->operand(1));
      Node *t = rw.create("Trilu", tops);
      t->setAttr(intAttr("upper", NodeContext(*tr).getInt("upper", 1)));
      t->result(0)->setType(fill->result(0)->type());
      ops.push_back(t->result(0));
      continue;
    }
    if (rankOf(o) != 4) {
      ops.push_back(o);
      continue;
    }
    if (isOne(dimOf(o, 0)) && isOne(dimOf(o, 1))) {
      Node *sq = rw.create("Squeeze", {o, rw.createConstant(base + "_batch", makeInt64Tensor({1}, {0}))});
      std::vector<Dim> dims{Dim::known(1), dimOf(o, 2), dimOf(o, 3)};
      sq->result(0)->setType(ctx.getTensorType(ot, llvm::ArrayRef<Dim>(dims)));
      ops.push_back(sq->result(0));
      continue;
    }
    Value *e = o;
    if (isOne(dimOf(o, 1))) {
      if (!heads) heads = rw.createConstant(base + "_heads", makeInt64Tensor({4}, {1, h.value, 1, 1}));
      Node *ex = rw.create("Expand", {o, heads});
      std::vector<Dim> dims{dimOf(o, 0), h, dimOf(o, 2), dimOf(o, 3)};
      ex->result(0)->setType(ctx.getTensorType(ot, llvm::ArrayRef<Dim>(dims)));
      e = ex->result(0);
    }
    Node *sh = rw.create("Shape", {e});
    sh->setAttr(intAttr("start", 2));
    sh->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{2}));
    if (!minus1) minus1 = rw.createConstant(base + "_rows", makeInt64Tensor({1}, {-1}));
    Node *cc = rw.create("Concat", {minus1, sh->result(0)});
    cc->setAttr(intAttr("axis", 0));
    cc->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{3}));
    Node *rs = rw.create("Reshape", {e, cc->result(0)});
    std::vector<Dim> dims{dimOf(s3, 0), dimOf(o, 2), dimOf(o, 3)};
    rs->result(0)->setType(ctx.getTensorType(ot, llvm::ArrayRef<Dim>(dims)));
    ops.push_back(rs->result(0));
  }
  Node *n = rw.create(op->opType(), ops);
  PatternRewriter::copyNodeInfo(*op, *n);
  n->result(0)->setType(ctx.getTensorType(*et, llvm::ArrayRef<Dim>(tensorType(s3)->dims())));
  Value *out = n->result(0);
  if (sm) {
    Node *s = rw.create("Softmax", {out});
    PatternRewriter::copyNodeInfo(*sm, *s);
    s->setAttr(intAttr("axis", -1));
    s->result(0)->setType(out->type());
    out = s->result(0);
  }
  return rw.replaceNode(&back, {out});
}

namespace {
} // namespace
} // namespace attention

void populateAttentionPatterns(PatternSet &ps) {
  // (The census counts what each makes: Note [Fusion census]. The head
  // and GQA forms re-form Attentions and RotaryEmbeddings: net zero.)
  ps.add("fuse-attention", "MatMul", attention::fuseAttention, 3, {"Attention"});
  ps.add("fuse-attention-heads", "Attention", attention::attentionHeads, 3, {"Attention", "RotaryEmbedding"});
  ps.add("fuse-attention-gqa", "Attention", attention::attentionGroupedKV, 3, {"Attention"});
  ps.add("fuse-attention-kv-cache", "Attention", attention::attentionKVCache, 3, {"Attention"});
  ps.add("fuse-attention-window", "Attention", attention::attentionWindow, 3, {"Attention"});
  ps.add("fuse-attention-nonpad", "Attention", attention::attentionNonpad, 3, {"Attention"});
  ps.add("fuse-tensor-scatter", "ScatterElements", attention::staticCacheScatter, 3, {"TensorScatter"});
  ps.add("fuse-tensor-scatter-nd", "ScatterND", attention::staticCacheScatterND, 3, {"TensorScatter"});
  ps.add("fuse-rotary-embedding", "Add", attention::fuseRotaryEmbedding, 3, {"RotaryEmbedding"});
  ps.add("fuse-rotary-partial", "Concat", attention::fuseRotaryPartial, 3, {"RotaryEmbedding"});
  ps.add("fuse-attention-shape-use", "Shape", attention::scoresShapeUse, 3);
  ps.add("fuse-attention-mask-view", "Reshape", attention::attentionMaskView, 3);
}

} // namespace onnxir
