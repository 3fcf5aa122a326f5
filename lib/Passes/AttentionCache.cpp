//===- AttentionCache.cpp - KV caches into Attention's past inputs --------===//
//
// The pattern fuse-attention-kv-cache: an Attention whose K and V are the
// concatenation of a past cache and the step's K and V reads the caches as
// its own past_key/past_value inputs and gives the concatenations as its
// present_key/present_value outputs (Note [KV caches]).
//
//===----------------------------------------------------------------------===//
#include "AttentionCache.h"
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"

#include "llvm/ADT/DenseSet.h"

#include <vector>

namespace onnxir {
namespace attention {

namespace {

/// The two operands of `v`'s Concat along the sequence axis of a 4-D
/// [B, H, S, D] tensor: {past, current}; nulls when it is not one.
std::pair<Value *, Value *> seqConcat(Value *v, const Graph *g) {
  Node *c = v ? v->definingNode() : nullptr;
  if (!c || !c->is("Concat") || c->getGraph() != g || c->numOperands() != 2 || !plainAttributes(*c) ||
      !c->operand(0) || !c->operand(1) || rankOf(v) != 4)
    return {nullptr, nullptr};
  int64_t axis = NodeContext(*c).getInt("axis", 0);
  if (axis != 2 && axis != -2) return {nullptr, nullptr};
  return {c->operand(0), c->operand(1)};
}

/// The nodes of `g` that the values `from` are computed from (themselves
/// included), up to `limit` nodes; false when the walk stopped at it.
bool producers(llvm::ArrayRef<Value *> from, const Graph *g, llvm::DenseSet<const Node *> &seen,
               size_t limit) {
  std::vector<const Node *> work;
  for (Value *v : from)
    if (Node *d = v ? v->definingNode() : nullptr)
      if (d->getGraph() == g && seen.insert(d).second) work.push_back(d);
  while (!work.empty()) {
    if (seen.size() > limit) return false;
    const Node *n = work.back();
    work.pop_back();
    for (Value *v : n->operands())
      if (Node *d = v ? v->definingNode() : nullptr)
        if (d->getGraph() == g && seen.insert(d).second) work.push_back(d);
  }
  return true;
}

} // namespace

// Note [KV caches]
//  A decoder step with a cache computes K = Concat(past_key, k, axis 2) and
//  V = Concat(past_value, v, axis 2) over [B, H, S, D], attends with them,
//  and returns them as the next step's cache (present_key/present_value
//  graph outputs). Attention-23 takes past_key/past_value and gives
//  present_key = Concat(past_key, K) and present_value likewise, so the
//  4-D Attention of (q, Concat(pk, k), Concat(pv, v)) becomes
//  Attention(q, k, v, mask, pk, pv) with three results: the same scores,
//  the same mask over the whole kv length (attn_mask's last dim is
//  past + current there too), and present_* equal to the Concats, which
//  take their place (graph outputs keep their names). Guards: a 4-D
//  Attention with no past or extra results yet (a softcap is kept), no
//  is_causal (with a past, is_causal aligns the triangle to the bottom
//  right; fuse-attention never sets it on a sequence it cannot prove
//  square, so one here came from elsewhere and is left alone); K and V
//  each a two-operand Concat on axis 2 whose past parts have one length
//  (past_key and past_value share it in Attention); each Concat returned
//  (a graph output or another use: onnxruntime refuses a past without
//  present_*, which dead-code elimination would drop) and read by nothing
//  the Attention depends on (a mask built from its Shape would make a
//  cycle); present_* then takes every use.
//  Exact: the same operator on the same elements. A mask that is the
//  causal triangle offset by the past length becomes is_causal (Note
//  [Past-length causal offset]).
//
// Note [Past-length causal offset]
//  A decoder step attends its S new queries to P cached keys and its own
//  S: query i (the token at position P + i) sees key j exactly when
//  j <= P + i, the causal triangle aligned to the bottom right of the
//  [S, P + S] scores. Hugging Face builds it from the past length P, read
//  as past_key.shape[2] (Gather(Shape(past), 2) or Shape(past, 2, 3)):
//   - comparing ramps: cache_position = arange(P, P + S) (Range from c + P,
//     or a ramp plus P) against arange(P + S) (Note [Causal mask forms]'s
//     ramps, whose offsets may now hold P: they must cancel to j <= i + P,
//     or j > i + P for the masked positions), through Where(m, 0, fill) or
//     masked_fill (fuse-attention passes it as attn_mask: Not(m), or
//     Where(m, L/2, 0) for a finfo.min fill);
//   - triu(full((S, P + S), fill), diagonal=P + 1): Trilu upper with k
//     = P + 1 (a boolean Trilu lower with k = P, or upper with P + 1 for the
//     masked positions);
//   - the older _make_causal_mask, cat([zeros(S, P), causal(S, S)], -1):
//     the square triangle of Note [Causal mask forms] after P zero columns;
//  any of them expanded over the leading dims ([B, 1, S, P + S]), and the
//  mask's last two dims S and P + S of the scores. ONNX's reference
//  (op_attention.py: j <= i + past_key's length) and onnxruntime 1.30's
//  Attention align is_causal with a past to the bottom right, and so does
//  our evaluator (Note [Attention evaluation]; checked against onnxruntime
//  with S = 2, P = 3: is_causal = 1 gives the outputs of that boolean
//  mask), while Attention-23's text speaks of the upper-left triangle of a
//  square: only that square has no past, where both agree. So with past
//  inputs the mask is dropped and is_causal = 1 set: the same -inf bias
//  (a finfo.min fill masks no full row, as the diagonal key j = P + i is
//  always seen: Note [Masks filled with finfo.min]). Anything else (another
//  offset: the top-left triangle, a window, a P read from another tensor,
//  a mask over the wrong dims) stays the attn_mask, which Attention applies
//  over the whole past + step length as the graph did.
bool attentionKVCache(Node &a, PatternRewriter &rw) {
  if (a.numOperands() < 3 || a.numOperands() > 4 || a.numResults() != 1 || !plainAttributes(a) ||
      rankOf(a.operand(0)) != 4)
    return false;
  const Graph *g = a.getGraph();
  auto [pk, k] = seqConcat(a.operand(1), g);
  auto [pv, v] = seqConcat(a.operand(2), g);
  if (!pk && !pv) return false;
  // A KV cache from here on: refusals are reported.
  if (!pk || !pv)
    return miss(rw, "kv-cache", "only one of K " + q(a.operand(1)) + " and V " + q(a.operand(2)) +
                                    " of " + q(&a) + " is a Concat along the sequence");
  if (a.operand(1) == a.operand(2))
    return miss(rw, "kv-cache", "K and V of " + q(&a) + " are one value " + q(a.operand(1)) +
                                    ": present_key and present_value would both take it");
  NodeContext c(a);
  for (unsigned i = 0; i < a.numAttributes(); ++i) {
    llvm::StringRef name = a.attribute(i).name();
    if (name != "scale" && name != "is_causal" && name != "softcap")
      return miss(rw, "kv-cache", q(&a) + " has attribute " + name.str());
  }
  if (c.getInt("is_causal", 0))
    return miss(rw, "kv-cache", q(&a) + " is causal: with a past the triangle is aligned "
                                        "bottom-right, which is not proven to be the graph's");
  if (rankOf(pk) != 4 || rankOf(pv) != 4 || !sameDim(dimOf(pk, 2), dimOf(pv, 2)))
    return miss(rw, "kv-cache", "past parts " + q(pk) + " and " + q(pv) +
                                    " are not 4-D of one provable length");
  std::vector<Value *> ops{a.operand(0), k, v, a.numOperands() > 3 ? a.operand(3) : nullptr, pk, pv};
  // Each Concat is returned (a graph output, or read after the step), and
  // nothing the Attention depends on reads it: present_* takes all its uses.
  llvm::DenseSet<const Node *> cone;
  if (!producers(ops, g, cone, 100000))
    return miss(rw, "kv-cache", "the operands of " + q(&a) + " are computed by too many nodes to check");
  for (unsigned i = 1; i <= 2; ++i) {
    Value *cat = a.operand(i);
    bool returned = cat->isGraphOutput();
    for (const Use &u : cat->uses()) {
      if (cone.count(u.getOwner()))
        return miss(rw, "kv-cache", q(cat) + " is read by " + q(u.getOwner()) + ", which " + q(&a) +
                                        " depends on: present_* cannot replace it");
      if (u.getOwner() != &a) returned = true;
    }
    if (!returned)
      return miss(rw, "kv-cache", q(cat) + " is not returned: a past with no present_* is "
                                          "refused by onnxruntime 1.30");
  }
  // Note [Past-length causal offset]
  bool causal = false;
  std::optional<DataType> et = elemOf(a.operand(0));
  if (ops[3] && et &&
      provablyCausalPast(ops[3], PastCaches{pk, pv}, dimOf(a.operand(0), 2), dimOf(a.operand(1), 2), *et)) {
    ops[3] = nullptr;
    causal = true;
  }
  rw.setInsertionPoint(&a);
  Node *n = rw.create("Attention", ops, 3);
  if (causal) n->setAttr(intAttr("is_causal", 1));
  if (a.getAttr("scale")) n->setAttr(floatAttr("scale", c.getFloat("scale", 1.0f)));
  if (a.getAttr("softcap")) n->setAttr(floatAttr("softcap", c.getFloat("softcap", 0.0f)));
  PatternRewriter::copyNodeInfo(a, *n);
  n->result(0)->setType(a.result(0)->type());
  n->result(1)->setType(a.operand(1)->type());
  n->result(2)->setType(a.operand(2)->type());
  // Each Concat goes at once, so that a graph output's name moves to
  // present_*.
  Value *cats[2] = {a.operand(1), a.operand(2)};
  for (unsigned i = 1; i <= 2; ++i) {
    Node *def = cats[i - 1]->definingNode();
    if (rw.replaceValue(cats[i - 1], n->result(i))) rw.eraseNode(def);
  }
  return rw.replaceNode(&a, {n->result(0)});
}

} // namespace attention
} // namespace onnxir
