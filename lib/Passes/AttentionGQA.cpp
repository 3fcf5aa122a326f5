//===- AttentionGQA.cpp - Grouped KV heads --------------------------------===//
//
// The pattern fuse-attention-gqa: K and V repeated per head (HF's
// repeat_kv, Tile, per-head Concat) peeled off a 4-D Attention (Note
// [Grouped KV heads]).
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"

namespace onnxir {
namespace attention {

namespace {

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
HeadRepeat headRepeat(Value *x, PatternRewriter &rw);

/// A Concat or Split along the heads axis of [B, H, S, D].
bool headAxis(const Node &n) {
  int64_t axis = NodeContext(n).getInt("axis", 0);
  return axis == 1 || axis == -3;
}

/// headRepeat of the Concat `d` along the heads: the repeats (the same n)
/// of the parts of one Split of src along the heads, in order.
HeadRepeat concatRepeat(Node *d, PatternRewriter &rw) {
  HeadRepeat hr;
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

/// headRepeat of Tile(src, [1, n, 1, 1]) `d`: heads in place only when src
/// has one head.
HeadRepeat tileRepeat(Node *d) {
  HeadRepeat hr;
  auto reps = constantInts(d->operand(1));
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

/// headRepeat of Reshape(Expand(Unsqueeze(src, [a]))) `d` making `x`
/// (Note [Grouped KV heads]).
HeadRepeat expandRepeat(Node *d, Value *x) {
  HeadRepeat hr;
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
  auto axes = constantInts(un->operand(1));
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

HeadRepeat headRepeat(Value *x, PatternRewriter &rw) {
  Node *d = x ? x->definingNode() : nullptr;
  if (!d || d->getGraph() != rw.root()->getGraph() || !PatternRewriter::hasSingleLocalUse(x) ||
      rankOf(x) != 4)
    return HeadRepeat();
  if (d->is("Concat") && plainAttributes(*d) && headAxis(*d) && d->numOperands() >= 2)
    return concatRepeat(d, rw);
  if (d->is("Tile") && d->numOperands() == 2) return tileRepeat(d);
  if (!d->is("Reshape") || d->numOperands() < 1) return HeadRepeat();
  return expandRepeat(d, x);
}

} // namespace

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

} // namespace attention
} // namespace onnxir
