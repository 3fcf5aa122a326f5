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

#include "AttentionMatch.h"

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

namespace attention {
namespace {

bool attentionFloat(std::optional<DataType> t) {
  return t && (*t == DataType::Float || *t == DataType::Float16 || *t == DataType::Double ||
               *t == DataType::BFloat16);
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

} // namespace
} // namespace attention

void populateAttentionPatterns(PatternSet &ps) {
  // (The census counts what each makes: Note [Fusion census]. The head
  // and GQA forms re-form Attentions and RotaryEmbeddings: net zero.)
  ps.add("fuse-attention", "MatMul", attention::fuseAttention, 3, {"Attention"});
  ps.add("fuse-attention-heads", "Attention", attention::attentionHeads, 3, {"Attention", "RotaryEmbedding"});
  ps.add("fuse-attention-gqa", "Attention", attention::attentionGroupedKV, 3, {"Attention"});
  ps.add("fuse-rotary-embedding", "Add", attention::fuseRotaryEmbedding, 3, {"RotaryEmbedding"});
}

} // namespace onnxir
