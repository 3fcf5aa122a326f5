//===- AttentionHeads.cpp - Head split and merge --------------------------===//
//
// The head split of Q, K, V and the merge of the result in their forms
// (4-D Reshape/Transpose, timm's packed split, nn.MultiheadAttention's
// sequence-first split, through a rotation), which fuse-attention absorbs
// into the 3-D Attention; and fuse-attention-heads, which does the same
// for an Attention made before.
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"

namespace onnxir {
namespace attention {

namespace {

/// The Reshape making `r`, in the root's graph, if `r` has no other use.
Node *singleUseReshape(Value *r, PatternRewriter &rw) {
  Node *rs = r ? r->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->getGraph() != rw.root()->getGraph() ||
      !PatternRewriter::hasSingleLocalUse(r) || rs->numOperands() < 1)
    return nullptr;
  return rs;
}

} // namespace

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
    auto axes = constantInts(sq->operand(1));
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

// Note [One KV head split after the head split]
//   Multi-query code projects K and V together and splits them after the
//   head split: Split(Transpose(Reshape(kv [B,S,E] -> [B,S,1,E]), [0,2,1,3]),
//   last axis, [Dk, Dv]) gives K [B,1,S,Dk] and V [B,1,S,Dv]. With one
//   head, element [b,0,s,e] of the transposed view is kv[b,s,e], so part i
//   is Split(kv, axis 2, [Dk, Dv])'s part i seen as [B,1,S,D]: the 3-D form
//   reads those parts with kv_num_heads = 1 (K through its rotation, Note
//   [Rotary before the head split]). Exact: the same elements. More heads
//   interleave K and V per head, not a split of kv: not taken.

namespace {

struct OneHeadKV {
  Value *kv = nullptr, *sizes = nullptr;
  unsigned k = 0, v = 0; // the results of the Split read as K and V
  Node *rope = nullptr;  // a rotation of K
};

/// K (possibly rotated) and V of Attention `a` as the two parts of one
/// Split after a one-head split (Note [One KV head split after the head
/// split]); fills `out`.
bool oneHeadKV(Node &a, PatternRewriter &rw, OneHeadKV &out) {
  Value *kp = a.operand(1), *vp = a.operand(2);
  Node *rope = kp ? kp->definingNode() : nullptr;
  if (rope && rope->is("RotaryEmbedding")) {
    if (rope->numOperands() < 3 || rope->numResults() != 1 || !plainAttributes(*rope) ||
        rope->getAttr("num_heads") || !PatternRewriter::hasSingleLocalUse(kp) ||
        rope->getGraph() != rw.root()->getGraph())
      return false;
    for (unsigned i = 0; i < rope->numAttributes(); ++i)
      if (rope->attribute(i).name() != "interleaved" && rope->attribute(i).name() != "rotary_embedding_dim")
        return false;
    kp = rope->operand(0);
  } else {
    rope = nullptr;
  }
  Node *sp = kp ? kp->definingNode() : nullptr;
  if (!sp || !sp->is("Split") || !vp || vp->definingNode() != sp || kp == vp || sp->numResults() != 2 ||
      sp->numOperands() != 2 || !plainAttributes(*sp) || sp->getGraph() != rw.root()->getGraph() ||
      !PatternRewriter::hasSingleLocalUse(kp) || !PatternRewriter::hasSingleLocalUse(vp))
    return false;
  for (unsigned i = 0; i < sp->numAttributes(); ++i)
    if (sp->attribute(i).name() != "axis") return false;
  int64_t axis = NodeContext(*sp).getInt("axis", 0);
  auto sizes = constantInts(sp->operand(1));
  if ((axis != -1 && axis != 3) || !sizes || sizes->size() != 2) return false;
  Permuted t = asPermuted(sp->operand(0), rw);
  if (t.perm != std::vector<int64_t>{0, 2, 1, 3} || !PatternRewriter::hasSingleLocalUse(sp->operand(0)))
    return false;
  Node *rs = singleUseReshape(t.src, rw);
  Value *x3 = rs ? rs->operand(0) : nullptr;
  Dim e = dimOf(x3, 2);
  if (x3 && rankOf(t.src) == 4 && !isOne(dimOf(t.src, 2)))
    return miss(rw, "kv-heads",
                "K and V of Attention " + q(&a) + " are the parts of Split " + q(sp) + " after a head split into " +
                    dimStr(dimOf(t.src, 2)) + " heads, which interleaves K and V per head: the 3-D form takes "
                    "them only from one KV head (Note [One KV head split after the head split])");
  if (!x3 || rankOf(x3) != 3 || rankOf(t.src) != 4 || !isOne(dimOf(t.src, 2)) ||
      !sameDim(dimOf(x3, 0), dimOf(t.src, 0)) || !sameDim(dimOf(x3, 1), dimOf(t.src, 1)) || !e.isKnown() ||
      !sameDim(e, dimOf(t.src, 3)) || (*sizes)[0] < 0 || (*sizes)[1] < 0 || (*sizes)[0] + (*sizes)[1] != e.value)
    return false;
  out.kv = x3;
  out.sizes = sp->operand(1);
  out.k = sp->result(0) == kp ? 0 : 1;
  out.v = 1 - out.k;
  out.rope = rope;
  return true;
}

/// The parts of kv [B,S,E] split along its last axis as `o` says.
void splitOneHeadKV(const OneHeadKV &o, PatternRewriter &rw, Value *&k3, Value *&v3) {
  auto sizes = *constantInts(o.sizes);
  Node *sp = rw.create("Split", {o.kv, o.sizes}, 2);
  sp->setAttr(intAttr("axis", 2));
  auto &ctx = rw.getModel().getContext();
  DataType et = elemOf(o.kv).value_or(DataType::Float);
  for (unsigned i = 0; i < 2; ++i) {
    std::vector<Dim> dims{dimOf(o.kv, 0), dimOf(o.kv, 1), Dim::known(sizes[i])};
    sp->result(i)->setType(ctx.getTensorType(et, llvm::ArrayRef<Dim>(dims)));
  }
  k3 = sp->result(o.k);
  v3 = sp->result(o.v);
}

} // namespace

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
    if (a.attribute(i).name() != "scale" && a.attribute(i).name() != "is_causal" &&
        a.attribute(i).name() != "softcap")
      return false;
  int64_t qHeads = 0, kvHeads = 0, vHeads = 0;
  Node *qRope = nullptr, *kRope = nullptr, *vRope = nullptr;
  Value *q3 = headSplitThroughRope(asPermuted(a.operand(0), rw), rw, qHeads, qRope);
  Value *k3 = q3 ? headSplitThroughRope(asPermuted(a.operand(1), rw), rw, kvHeads, kRope) : nullptr;
  Value *v3 = k3 ? headSplitSource(asPermuted(a.operand(2), rw), rw, vHeads) : nullptr;
  (void)vRope;
  // Note [One KV head split after the head split]
  OneHeadKV one;
  bool oneHead = q3 && !v3 && oneHeadKV(a, rw, one);
  if (oneHead) kvHeads = vHeads = 1, kRope = one.rope;
  if ((!v3 && !oneHead) || vHeads != kvHeads || qHeads % kvHeads) return false;
  Node *merge = headMerge(a.result(0), qHeads);
  if (!merge) return false;
  rw.setInsertionPoint(&a);
  if (oneHead) splitOneHeadKV(one, rw, k3, v3);
  if (qRope) q3 = ropeOnHidden(qRope, q3, qHeads, rw);
  if (kRope) k3 = ropeOnHidden(kRope, k3, kvHeads, rw);
  std::vector<Value *> ops{q3, k3, v3};
  if (a.numOperands() == 4 && a.operand(3)) ops.push_back(a.operand(3));
  Node *n = rw.create("Attention", ops);
  NodeContext c(a);
  if (a.getAttr("scale")) n->setAttr(floatAttr("scale", c.getFloat("scale", 1.0f)));
  if (a.getAttr("is_causal")) n->setAttr(intAttr("is_causal", c.getInt("is_causal", 0)));
  if (a.getAttr("softcap")) n->setAttr(floatAttr("softcap", c.getFloat("softcap", 0.0f)));
  n->setAttr(intAttr("q_num_heads", qHeads));
  n->setAttr(intAttr("kv_num_heads", kvHeads));
  PatternRewriter::copyNodeInfo(a, *n);
  n->result(0)->setType(merge->result(0)->type());
  return rw.replaceNode(merge, {n->result(0)});
}

} // namespace attention
} // namespace onnxir
