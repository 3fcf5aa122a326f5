//===- AttentionWindow.cpp - Sliding-window masks -> Attention-25 ---------===//
//
// The pattern fuse-attention-window: an Attention whose attn_mask is a
// diagonal band, the causal triangle cut to the last W keys (Mistral,
// Gemma-2), takes it as Attention-25's is_causal and left_window_size (and
// right_window_size) instead (Note [Sliding windows]). The band is read
// with the ramp and Trilu matchers of AttentionMasks.cpp.
//
//===----------------------------------------------------------------------===//
#include "AttentionCache.h"
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"

#include <string>

namespace onnxir {
namespace attention {

namespace {

/// The positions where a boolean is true, as a set of d = j - i:
/// lo <= d <= hi (a missing bound is unbounded), or its complement.
struct Band {
  std::optional<Affine> lo, hi;
  bool complement = false;
};

/// The complement of a half plane is the other half plane.
Band normalized(Band b) {
  if (!b.complement || (b.lo && b.hi)) return b;
  Band r;
  if (b.lo) r.hi = Affine{b.lo->c - 1, b.lo->p};
  else if (b.hi) r.lo = Affine{b.hi->c + 1, b.hi->p};
  else return b; // the complement of everything: not a band
  return r;
}

/// The intersection of two bands (not complements), each bound set once.
std::optional<Band> intersect(const Band &a, const Band &b) {
  if (a.complement || b.complement || (a.lo && b.lo) || (a.hi && b.hi)) return std::nullopt;
  Band r;
  r.lo = a.lo ? a.lo : b.lo;
  r.hi = a.hi ? a.hi : b.hi;
  return r;
}

/// The leading dims of `v` are known 1 and its last two are `sq`, `skv`.
bool overScores(const Value *v, const Dim &sq, const Dim &skv) {
  int64_t r = rankOf(v);
  if (r < 2 || !seqSame(dimOf(v, -2), sq) || !seqSame(dimOf(v, -1), skv)) return false;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (!isOne(dimOf(v, i))) return false;
  return true;
}

/// The set of d = j - i where the boolean `v` over [sq, skv] is true:
/// comparisons of ramps, Trilu of ones, and And, Or, Not of those. Each
/// leaf must itself be [.., sq, skv] (a ramp's length is its dim there).
std::optional<Band> bandOf(const Value *v, const PastCaches &past, const Dim &sq, const Dim &skv,
                           int depth = 0) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || depth > 6 || !plainAttributes(*d) || elemOf(v) != DataType::Bool) return std::nullopt;
  if (d->is("Not") && d->numOperands() == 1) {
    auto b = bandOf(d->operand(0), past, sq, skv, depth + 1);
    if (!b) return std::nullopt;
    b->complement = !b->complement;
    return normalized(*b);
  }
  if ((d->is("And") || d->is("Or")) && d->numOperands() == 2) {
    auto a = bandOf(d->operand(0), past, sq, skv, depth + 1);
    auto b = bandOf(d->operand(1), past, sq, skv, depth + 1);
    if (!a || !b) return std::nullopt;
    if (d->is("And")) return intersect(*a, *b);
    // x or y = not (not x and not y).
    a->complement = !a->complement;
    b->complement = !b->complement;
    auto r = intersect(normalized(*a), normalized(*b));
    if (!r) return std::nullopt;
    r->complement = true;
    return r;
  }
  if (!overScores(v, sq, skv)) return std::nullopt;
  std::optional<HalfPlane> h = d->is("Trilu") ? triluHalfPlane(*d, past) : rampHalfPlane(*d, past);
  if (!h) return std::nullopt;
  Band b;
  (h->upper ? b.hi : b.lo) = h->bound;
  return b;
}

/// The attended band of Attention's attn_mask `mask`: a boolean (true =
/// attend), or additive Where(c, 0, fill) / Where(c, fill, 0) with a
/// masking fill (what fuse-attention makes of masked_fill), through an
/// Expand of its leading dims.
std::optional<Band> attendedBand(const Value *mask, const PastCaches &past, const Dim &sq,
                                 const Dim &skv, DataType et) {
  mask = throughLeadingExpands(mask);
  if (!overScores(mask, sq, skv)) return std::nullopt;
  std::optional<Band> b;
  if (elemOf(mask) == DataType::Bool) {
    b = bandOf(mask, past, sq, skv);
  } else if (Node *w = mask->definingNode();
             elemOf(mask) == et && w && w->is("Where") && w->numOperands() == 3 && plainAttributes(*w)) {
    const Value *c = w->operand(0);
    if (isZeroScalar(w->operand(1), et) && isMaskFill(w->operand(2), et)) {
      b = bandOf(c, past, sq, skv);
    } else if (isMaskFill(w->operand(1), et) && isZeroScalar(w->operand(2), et)) {
      b = bandOf(c, past, sq, skv);
      if (b) {
        b->complement = !b->complement;
        b = normalized(*b);
      }
    }
  }
  if (!b || b->complement) return std::nullopt;
  return b;
}

} // namespace

// Note [Sliding windows]
//  Mistral and Gemma-2 attend query i (at position P + i, P the past
//  length, 0 without a cache) to the keys j with P + i - W < j <= P + i:
//  the causal triangle cut to the last W keys. Hugging Face builds it as
//  a masked set, (j > cache_position) | (j <= cache_position - W) of
//  ramps, or from two diagonals, tril(ones, P) & triu(ones, P - W + 1) (or
//  the older masked_fill of tril(ones, P - W - 1) over the causal mask).
//  Each comparison of ramps (Note [Causal mask forms], with P: Note
//  [Past-length causal offset]) and each Trilu of ones bounds d = j - i on
//  one side; And intersects, Not and Or (De Morgan) complement, so the
//  attended set is read as lo <= d <= hi, lo and hi each c + p * P. It is
//  Attention-25's window when both carry P as Attention aligns it (p = 1
//  with past inputs, 0 without, where the scores are square) and the band
//  holds the diagonal d = P: left_window_size = P - lo (the keys before
//  the query's own), hi = P is is_causal = 1, hi = P + r (r > 0) is
//  right_window_size = r with is_causal = 0, and an unbounded side stays
//  -1 (Attention-25 as onnx#8108 defines it: the query at position
//  p = P + i attends j iff p - left <= j <= p + right, each bound -1 for
//  none, composed with is_causal; our evaluator's reading too, Note
//  [Attention evaluation]). The mask goes; as it never masks
//  the diagonal no row is fully masked, so a finfo.min fill (Where(c, 0,
//  L/2) from fuse-attention) and -inf agree (Note [Masks filled with
//  finfo.min]). Only with a lower bound: the causal triangle alone is
//  Note [Causal mask forms]'s. Guards: the target opset has the window
//  (25; below it the mask stays and --fusion-report says so), the
//  Attention has no is_causal, window, nonpad_kv_seqlen or
//  qk_matmul_output yet, and a past comes with its present outputs (the
//  mask's last dim is their length). onnxruntime 1.30 refuses
//  left_window_size (its Attention stops at -24), so the outputs are
//  checked on our evaluator (-O2 --check-numerics).
bool attentionWindow(Node &a, PatternRewriter &rw) {
  if (a.numOperands() < 4 || !a.operand(3) || a.numResults() > 3 || !plainAttributes(a)) return false;
  if (a.numOperands() > 6 && a.operand(6)) return false;
  for (const char *attr : {"is_causal", "left_window_size", "right_window_size"})
    if (a.getAttr(attr)) return false;
  bool past = a.numOperands() > 5 && a.operand(4) && a.operand(5);
  if (past && a.numResults() < 2) return false;
  const Value *qv = a.operand(0), *kv = a.operand(1);
  int64_t r = rankOf(qv);
  if (r != 3 && r != 4) return false;
  Dim sq = dimOf(qv, r == 4 ? 2 : 1);
  Dim skv = past ? dimOf(a.result(1), 2) : dimOf(kv, r == 4 ? 2 : 1);
  if (!past && !sameDim(sq, skv)) return false;
  std::optional<DataType> et = elemOf(qv);
  if (!et) return false;
  PastCaches pc = past ? PastCaches{a.operand(4), a.operand(5)} : PastCaches{};
  std::optional<Band> b = attendedBand(a.operand(3), pc, sq, skv, *et);
  int64_t p = past ? 1 : 0;
  if (!b || !b->lo || b->lo->p != p || b->lo->c > 0 || (b->hi && (b->hi->p != p || b->hi->c < 0)))
    return false;
  // A window from here on: refusals are reported.
  int64_t since = firstVersionWithAttribute("Attention", "left_window_size");
  if (rw.opsetVersion() < since)
    return miss(rw, "window", "mask " + q(a.operand(3)) + " of " + q(&a) +
                                  " is a sliding window, which Attention takes from opset " +
                                  std::to_string(since) + "; the graph imports " +
                                  std::to_string(rw.opsetVersion()) + ": kept as the mask");
  std::vector<Value *> ops;
  for (unsigned i = 0; i < a.numOperands(); ++i) ops.push_back(i == 3 ? nullptr : a.operand(i));
  while (!ops.empty() && !ops.back()) ops.pop_back(); // no trailing empty operand
  rw.setInsertionPoint(&a);
  Node *n = rw.create("Attention", ops, a.numResults());
  for (unsigned i = 0; i < a.numAttributes(); ++i) n->setAttr(a.attribute(i).clone());
  if (b->hi && b->hi->c == 0) n->setAttr(intAttr("is_causal", 1));
  else if (b->hi) n->setAttr(intAttr("right_window_size", b->hi->c));
  n->setAttr(intAttr("left_window_size", -b->lo->c));
  PatternRewriter::copyNodeInfo(a, *n);
  std::vector<Value *> results;
  for (unsigned i = 0; i < a.numResults(); ++i) {
    n->result(i)->setType(a.result(i)->type());
    results.push_back(n->result(i));
  }
  return rw.replaceNode(&a, results);
}

} // namespace attention
} // namespace onnxir
