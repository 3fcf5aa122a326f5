//===- AttentionCache.cpp - KV caches into Attention's past inputs --------===//
//
// The pattern fuse-attention-kv-cache: an Attention whose K and V are the
// concatenation of a past cache and the step's K and V reads the caches as
// its own past_key/past_value inputs and gives the concatenations as its
// present_key/present_value outputs (Note [KV caches]). The pattern
// fuse-tensor-scatter: a preallocated (static) cache written at a ramp of
// positions by ScatterElements becomes TensorScatter-24 (Note [Static
// caches]).
//
//===----------------------------------------------------------------------===//
#include "AttentionCache.h"
#include "AttentionMatch.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

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

/// The one integer of a constant of one element.
std::optional<int64_t> scalarInt(const Value *v) {
  auto c = constantInts(v);
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0];
}

/// `v` through integer Casts and reshapes (Note [Op facts]) of one element.
Value *throughScalarMoves(Value *v) {
  for (int i = 0; i < 6 && v; ++i) {
    Node *d = v->definingNode();
    if (!d || !d->numOperands() || !d->operand(0) || !plainAttributes(*d)) break;
    const OpEntry *e = OpRegistry::get().lookup(*d);
    bool cast = d->is("Cast") && NodeContext(*d).getInt("to", 0) == (int64_t)DataType::Int64;
    if (!cast && !(e && e->reshapes)) break;
    v = d->operand(0);
  }
  return v;
}

/// `len` is dim `axis` of `upd`: read by Shape(x, start a, end a + 1) or
/// Gather(Shape(x), a) from a tensor x whose dim a is provably upd's.
bool axisLength(Value *len, const Value *upd, int64_t axis) {
  Node *d = len ? throughScalarMoves(len)->definingNode() : nullptr;
  if (!d || !plainAttributes(*d)) return false;
  const Value *x = nullptr;
  int64_t a = -1;
  if (d->is("Shape") && d->numOperands() == 1) {
    x = d->operand(0);
    int64_t r = rankOf(x), from = NodeContext(*d).getInt("start", 0), to = NodeContext(*d).getInt("end", r);
    if (r < 0) return false;
    if (from < 0) from += r;
    if (to < 0) to += r;
    if (to != from + 1) return false;
    a = from;
  } else if (d->is("Gather") && d->numOperands() == 2 && NodeContext(*d).getInt("axis", 0) == 0) {
    Node *sh = d->operand(0) ? d->operand(0)->definingNode() : nullptr;
    std::optional<int64_t> i = scalarInt(d->operand(1));
    if (!sh || !sh->is("Shape") || sh->numOperands() != 1 || sh->getAttr("start") || sh->getAttr("end") || !i)
      return false;
    x = sh->operand(0);
    a = *i < 0 ? *i + rankOf(x) : *i;
  } else {
    return false;
  }
  if (!x || a < 0 || a >= rankOf(x)) return false;
  return (x == upd && a == axis) || sameDim(dimOf(x, a), dimOf(upd, axis));
}

/// `pos` = start + (0, 1, ..., len - 1): Range(start, Add(start, len), 1),
/// or Range(0, len, 1) plus a scalar start (`start` null: 0).
bool rampFrom(Value *pos, Value *&start, Value *&len) {
  Node *d = pos ? pos->definingNode() : nullptr;
  if (!d || !plainAttributes(*d)) return false;
  auto range = [&](Node *rg, Value *&s0, Value *&n) {
    if (!rg || !rg->is("Range") || rg->numOperands() != 3 || scalarInt(rg->operand(2)) != 1) return false;
    s0 = rg->operand(0);
    if (scalarInt(s0) == 0) {
      s0 = nullptr;
      n = rg->operand(1);
      return true;
    }
    Node *add = rg->operand(1) ? rg->operand(1)->definingNode() : nullptr;
    if (!add || !add->is("Add") || add->numOperands() != 2) return false;
    for (unsigned k = 0; k < 2; ++k)
      if (add->operand(k) == s0) {
        n = add->operand(1 - k);
        return true;
      }
    return false;
  };
  if (d->is("Range")) return range(d, start, len) && (!start || (rankOf(start) == 0 && elemOf(start) == DataType::Int64));
  if (!d->is("Add") || d->numOperands() != 2) return false;
  for (unsigned k = 0; k < 2; ++k) {
    Value *s0 = nullptr, *n = nullptr;
    Value *other = d->operand(1 - k);
    if (range(d->operand(k) ? d->operand(k)->definingNode() : nullptr, s0, n) && !s0 && other &&
        rankOf(other) == 0 && elemOf(other) == DataType::Int64) {
      start = other;
      len = n;
      return true;
    }
  }
  return false;
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
//  over the whole past + step length as the graph did. A mask that goes may
//  read the length of K's Concat (arange(present_key.shape[2])): its nodes
//  die with it, so they neither make the cycle that a kept mask reading the
//  Concat would (mask-reads-cache) nor count as a use that returns it.
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
  // Note [Past-length causal offset]: decided first, so that the nodes of
  // a mask that goes (which may read the length of K's Concat) are not
  // taken as readers of the Concat.
  bool causal = false;
  std::optional<DataType> et = elemOf(a.operand(0));
  llvm::DenseSet<const Node *> maskCone;
  if (ops[3] && et &&
      provablyCausalPast(ops[3], PastCaches{pk, pv}, dimOf(a.operand(0), 2), dimOf(a.operand(1), 2), *et)) {
    if (!producers({ops[3]}, g, maskCone, 100000))
      return miss(rw, "kv-cache", "the mask of " + q(&a) + " is computed by too many nodes to check");
    ops[3] = nullptr;
    causal = true;
  }
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
      if (u.getOwner() != &a && !maskCone.count(u.getOwner())) returned = true;
    }
    if (!returned)
      return miss(rw, "kv-cache", q(cat) + " is not returned: a past with no present_* is "
                                          "refused by onnxruntime 1.30");
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

namespace {

/// Note [Static caches], mode circular: `pos` = Mod(p, M), fmod 0, p 1-D.
/// Returns p and sets `wraps` when M is the cache's length along `axis` (a
/// constant equal to its known dim, or read by Shape from a tensor whose
/// dim is provably it); returns p with `wraps` false for another M (a
/// candidate to report), null when `pos` is no such Mod.
Value *wrappedPositions(Value *pos, const Value *cache, int64_t axis, bool &wraps) {
  wraps = false;
  Node *d = pos ? pos->definingNode() : nullptr;
  if (!d || !d->is("Mod") || d->numOperands() != 2 || !plainAttributes(*d) || NodeContext(*d).getInt("fmod", 0) ||
      !d->operand(0) || rankOf(d->operand(0)) != 1 || elemOf(d->operand(0)) != DataType::Int64)
    return nullptr;
  Value *m = d->operand(1);
  Dim len = dimOf(cache, axis);
  if (std::optional<int64_t> k = scalarInt(m)) wraps = len.isKnown() && len.value == *k && *k > 0;
  else wraps = axisLength(m, cache, axis);
  return d->operand(0);
}

/// The rest of both patterns (Note [Static caches]), once `pos` is a ramp
/// from `start` of length `len` (Mod'ed when `circular`, the modulus the
/// cache's length when `wraps`): the ramp spans the update's dim `axis`, a
/// wrap is the cache's, the update fits the cache (TensorScatter's rule),
/// the opset has TensorScatter; `s` becomes TensorScatter(cache, upd,
/// write_indices = start for every batch row). Each refusal is reported.
bool writeTensorScatter(Node &s, PatternRewriter &rw, Value *cache, Value *upd, Value *pos, Value *start,
                        Value *len, int64_t axis, bool circular, bool wraps) {
  if (!axisLength(len, upd, axis))
    return miss(rw, "static-cache", "positions " + q(pos) + " of " + q(&s) + " are a ramp of length " +
                                        q(len) + ", not provably the update's dim " + std::to_string(axis));
  if (circular && !wraps)
    return miss(rw, "static-cache", "positions " + q(pos) + " of " + q(&s) + " wrap modulo " +
                                        q(pos->definingNode()->operand(1)) + ", not provably cache " + q(cache) +
                                        "'s length " + dimStr(dimOf(cache, axis)) + " along axis " +
                                        std::to_string(axis) + " (TensorScatter's circular mode)");
  int64_t r = rankOf(cache);
  for (int64_t i = 0; i < r; ++i)
    if (i != axis && !sameDim(dimOf(upd, i), dimOf(cache, i)))
      return miss(rw, "static-cache", "update " + q(upd) + " of " + q(&s) + " dim " + dimStr(dimOf(upd, i)) +
                                          " is not provably the cache's " + dimStr(dimOf(cache, i)));
  int64_t since = firstVersion("TensorScatter");
  if (rw.opsetVersion() < since)
    return miss(rw, "static-cache", q(&s) + " writes a ramp of positions into cache " + q(cache) +
                                        ", which TensorScatter takes from opset " + std::to_string(since) +
                                        "; the graph imports " + std::to_string(rw.opsetVersion()));
  auto &ctx = rw.getModel().getContext();
  rw.setInsertionPoint(&s);
  std::string base = s.result(0)->name().str();
  Value *w1;
  if (start) {
    Value *axes0 = rw.createConstant(base + "_axes", makeInt64Tensor({1}, {0}));
    Node *un = rw.create("Unsqueeze", {start, axes0});
    un->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
    w1 = un->result(0);
  } else {
    w1 = rw.createConstant(base + "_start", makeInt64Tensor({1}, {0}));
  }
  Node *batch = rw.create("Shape", {cache});
  batch->setAttr(intAttr("start", 0));
  batch->setAttr(intAttr("end", 1));
  batch->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
  Node *w = rw.create("Expand", {w1, batch->result(0)});
  std::vector<Dim> wd{dimOf(cache, 0)};
  w->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<Dim>(wd)));
  Node *n = rw.create("TensorScatter", {cache, upd, w->result(0)});
  n->setAttr(intAttr("axis", axis));
  n->setAttr(stringAttr("mode", circular ? "circular" : "linear"));
  PatternRewriter::copyNodeInfo(s, *n);
  n->result(0)->setType(s.result(0)->type());
  return rw.replaceNode(&s, {n->result(0)});
}

} // namespace

// Note [Static caches]
//  A static cache (Hugging Face's StaticCache) is preallocated at its
//  maximum length M, [B, H, M, D], and each step writes its S new keys at
//  cache_position: k_cache.index_copy_(2, cache_position, k), which torch
//  exports as ScatterElements(cache, Expand(Unsqueeze(cache_position, the
//  other axes), ...), k, axis 2). When cache_position is a ramp of step 1,
//  Range(w, w + n, 1) or Range(0, n, 1) + w, and n is read by Shape from
//  the update's own length along the axis (so the Expand does not repeat
//  one position), entry s of every row goes to w + s: TensorScatter
//  (mode linear, opset 24) of the cache, the update and write_indices w
//  for every batch row (Expand of w to [B]), along the same axis. Guards:
//  no reduction; the axis not the batch; the update's other dims the
//  cache's (TensorScatter's rule, which ScatterElements lacks); the
//  indices' dims other than the axis known 1 before the Expand; w a scalar
//  int64. Exact where both run: every update element lands at the same
//  index. A window past M is refused by both; a negative w, which
//  ScatterElements wraps around from the end, is refused by TensorScatter
//  (an error, not another result). A ring buffer writes the ramp taken
//  modulo M, Mod(ramp, M) (torch's % on integers: fmod 0, the result in
//  [0, M)): entry s goes to (w + s) mod M, which is TensorScatter's mode
//  circular, (w mod M + s) mod M, for w >= 0 (a negative w TensorScatter
//  refuses, as above; so is an update longer than M, where the Scatter
//  would write one position twice). M must be the cache's length along the
//  axis: a constant equal to its known dim, or read by Shape; a Mod by
//  anything else gets a report line. Below opset 24 a report line says why.
bool staticCacheScatter(Node &s, PatternRewriter &rw) {
  if (s.numOperands() != 3 || s.numResults() != 1 || !plainAttributes(s)) return false;
  NodeContext c(s);
  if (c.getString("reduction", "none") != "none") return false;
  Value *cache = s.operand(0), *idx = s.operand(1), *upd = s.operand(2);
  int64_t r = rankOf(cache);
  if (!cache || !idx || !upd || r < 2 || rankOf(upd) != r) return false;
  int64_t axis = c.getInt("axis", 0);
  if (axis < 0) axis += r;
  if (axis <= 0 || axis >= r) return false;
  // The positions along the axis, before the Expand to the update's shape.
  Value *placed = idx;
  if (Node *e = idx->definingNode(); e && e->is("Expand") && e->numOperands() == 2) placed = e->operand(0);
  Node *u = placed ? placed->definingNode() : nullptr;
  if (!u || rankOf(placed) != r || !u->numOperands() || !u->operand(0) || rankOf(u->operand(0)) != 1 ||
      !(u->is("Unsqueeze") || u->is("Reshape")))
    return false;
  for (int64_t i = 0; i < r; ++i)
    if (i != axis && !isOne(dimOf(placed, i))) return false;
  Value *pos = u->operand(0), *start = nullptr, *len = nullptr;
  bool wraps = false;
  Value *wrapped = wrappedPositions(pos, cache, axis, wraps);
  if (!rampFrom(wrapped ? wrapped : pos, start, len)) return false;
  // A cache write from here on: refusals are reported.
  return writeTensorScatter(s, rw, cache, upd, pos, start, len, axis, wrapped != nullptr, wraps);
}

namespace {

/// Part `axis` of a ScatterND index grid of rank `gridRank` (the indices
/// [.., gridRank] cut along the last axis): Unsqueeze(Expand(x), [-1]) with
/// x a ramp Range(0, n, 1) placed along `axis` by Reshape to [-1, 1, ...]
/// (right-aligned: ranks gridRank - axis), n read as `upd`'s dim `axis`,
/// or that ramp as a constant.
bool fullRampPart(Value *part, int64_t gridRank, int64_t axis, const Value *upd) {
  Node *un = part ? part->definingNode() : nullptr;
  if (!un || !un->is("Unsqueeze") || un->numOperands() != 2 || !un->operand(0)) return false;
  auto ax = constantInts(un->operand(1));
  if (!ax || ax->size() != 1 || ((*ax)[0] != -1 && (*ax)[0] != gridRank)) return false;
  Value *x = un->operand(0);
  if (Node *e = x->definingNode(); e && e->is("Expand") && e->numOperands() == 2) x = e->operand(0);
  // A constant ramp (a Range folded where the dim is fixed): [n, 1, ..],
  // 0 .. n - 1, n the update's dim.
  if (const Tensor *c = PatternRewriter::constantTensor(x)) {
    auto vals = constantInts(x);
    const auto &dims = c->dims();
    if (!vals || (int64_t)dims.size() != gridRank - axis || dims[0] != (int64_t)vals->size() ||
        !sameDim(Dim::known(dims[0]), dimOf(upd, axis)))
      return false;
    for (size_t i = 1; i < dims.size(); ++i)
      if (dims[i] != 1) return false;
    for (size_t i = 0; i < vals->size(); ++i)
      if ((*vals)[i] != (int64_t)i) return false;
    return true;
  }
  Node *rs = x ? x->definingNode() : nullptr;
  if (!rs || !rs->is("Reshape") || rs->numOperands() != 2 || !rs->operand(0)) return false;
  auto shape = constantInts(rs->operand(1));
  if (!shape || (int64_t)shape->size() != gridRank - axis || (*shape)[0] != -1) return false;
  for (size_t i = 1; i < shape->size(); ++i)
    if ((*shape)[i] != 1) return false;
  Value *start = nullptr, *len = nullptr;
  return rampFrom(rs->operand(0), start, len) && !start && axisLength(len, upd, axis);
}

/// The positions of a ScatterND index grid's last part: Unsqueeze(Expand(p),
/// [-1]) with p 1-D (broadcast along the grid's last axis).
Value *positionsPart(Value *part, int64_t gridRank) {
  Node *un = part ? part->definingNode() : nullptr;
  if (!un || !un->is("Unsqueeze") || un->numOperands() != 2 || !un->operand(0)) return nullptr;
  auto ax = constantInts(un->operand(1));
  if (!ax || ax->size() != 1 || ((*ax)[0] != -1 && (*ax)[0] != gridRank)) return nullptr;
  Value *x = un->operand(0);
  if (Node *e = x->definingNode(); e && e->is("Expand") && e->numOperands() == 2) x = e->operand(0);
  return rankOf(x) == 1 ? x : nullptr;
}

} // namespace

// Note [Static caches] (ScatterND)
//  Slice assignment, k_cache[:, :, cache_position] = k, exports as
//  ScatterND(cache, indices, k) whose indices [B, H, S, 3] are the grid
//  (b, h, cache_position[s]): three parts concatenated on the last axis,
//  each Unsqueeze(Expand(x), -1), x the ramp arange(B) as [-1, 1, 1],
//  arange(H) as [-1, 1] (a constant where H is fixed) and the positions.
//  With the first parts full ramps over the update's own dims (their
//  lengths read by Shape) and the positions a ramp as above, update[b, h,
//  s] goes to cache[b, h, w + s]: the same TensorScatter along the last
//  indexed axis.
bool staticCacheScatterND(Node &s, PatternRewriter &rw) {
  if (s.numOperands() != 3 || s.numResults() != 1 || !plainAttributes(s)) return false;
  if (NodeContext(s).getString("reduction", "none") != "none") return false;
  Value *cache = s.operand(0), *idx = s.operand(1), *upd = s.operand(2);
  int64_t r = rankOf(cache);
  Node *cat = idx ? idx->definingNode() : nullptr;
  if (!cache || !upd || r < 2 || rankOf(upd) != r || !cat || !cat->is("Concat") || !plainAttributes(*cat))
    return false;
  int64_t parts = cat->numOperands(), ir = rankOf(idx), caxis = NodeContext(*cat).getInt("axis", 0);
  // parts index the leading axes; the last one written, the rest copied.
  if (parts < 2 || parts >= r || ir != parts + 1 || (caxis != -1 && caxis != ir - 1)) return false;
  int64_t axis = parts - 1;
  Value *pos = positionsPart(cat->operand(parts - 1), parts);
  Value *start = nullptr, *len = nullptr;
  bool wraps = false;
  Value *wrapped = wrappedPositions(pos, cache, axis, wraps);
  if (!pos || !rampFrom(wrapped ? wrapped : pos, start, len)) return false;
  for (int64_t i = 0; i < axis; ++i)
    if (!fullRampPart(cat->operand(i), parts, i, upd)) return false;
  // A cache write from here on: refusals are reported.
  return writeTensorScatter(s, rw, cache, upd, pos, start, len, axis, wrapped != nullptr, wraps);
}

namespace {

/// `v` = Unsqueeze(arange(n), 0) ([1, n], the key positions) with n
/// provably `kv`'s dim `axis` (read by Shape, or a constant equal to it),
/// or that ramp folded to a constant [1, n].
bool keyRamp(const Value *v, Value *kv, int64_t axis) {
  if (const Tensor *t = PatternRewriter::constantTensor(v)) {
    auto vals = constantInts(v);
    Dim len = dimOf(kv, axis);
    if (!vals || t->dims().size() != 2 || t->dims()[0] != 1 || !len.isKnown() || (int64_t)vals->size() != len.value)
      return false;
    for (size_t i = 0; i < vals->size(); ++i)
      if ((*vals)[i] != (int64_t)i) return false;
    return true;
  }
  Node *u = v ? v->definingNode() : nullptr;
  if (!u || !u->is("Unsqueeze") || u->numOperands() != 2 || !plainAttributes(*u) || rankOf(v) != 2) return false;
  auto ax = constantInts(u->operand(1));
  Value *start = nullptr, *n = nullptr;
  if (!ax || ax->size() != 1 || ((*ax)[0] != 0 && (*ax)[0] != -2) || !rampFrom(u->operand(0), start, n) || start)
    return false;
  Dim len = dimOf(kv, axis);
  if (std::optional<int64_t> k = scalarInt(n)) return len.isKnown() && len.value == *k;
  return axisLength(n, kv, axis);
}

/// `v` = arange(w, w + T) as a column ([T, 1], Reshape to [-1, 1] or
/// Unsqueeze at 1; the query positions), T provably `q`'s dim `axis`:
/// returns w (an int64 scalar) and sets `len` to T.
Value *queryRamp(const Value *v, Value *q, int64_t axis, Value *&len) {
  Node *u = v ? v->definingNode() : nullptr;
  if (!u || u->numOperands() != 2 || !plainAttributes(*u) || rankOf(v) != 2) return nullptr;
  auto shape = constantInts(u->operand(1));
  bool column = u->is("Reshape") ? shape && *shape == std::vector<int64_t>{-1, 1}
                                 : u->is("Unsqueeze") && shape && shape->size() == 1 &&
                                       ((*shape)[0] == 1 || (*shape)[0] == -1);
  Value *start = nullptr;
  if (!column || !rampFrom(u->operand(0), start, len) || !start || !axisLength(len, q, axis)) return nullptr;
  return start;
}

} // namespace

// Note [Static-cache causal masks]
//  A static cache attends its T new queries, at positions w .. w + T - 1
//  (cache_position = arange(w, w + T)), to the whole cache of M keys with
//  the mask key_position > cache_position[:, None] (arange(M)[None, :]
//  against the column of positions): query i sees key j <= w + i. That is
//  Attention-24's is_causal with nonpad_kv_seqlen = w + T for every batch
//  row: is_causal aligns the triangle to the end of the valid keys, j <= i
//  + (w + T) - T, and the keys from w + T on, masked by nonpad, are above
//  that diagonal anyway (ONNX's reference, onnxruntime 1.30 (checked: the
//  two forms give the same outputs) and our evaluator, Note [Attention
//  evaluation]). The mask is read as a boolean (true = attend, or Not of
//  the masked positions) or as fuse-attention's Where(c, 0, fill) /
//  Where(c, fill, 0), through Expands of its leading dims; the key ramp's
//  length must be K's sequence dim (a constant ramp where -O2 folded it)
//  and the query ramp's Q's. The diagonal
//  key w + i is always attended for w >= 0, so no row is fully masked and
//  a finfo.min fill agrees with -inf. Where the graph would run with w < 0
//  or w + T > M, nonpad_kv_seqlen is out of [0, M] and the runtimes refuse
//  it: an error, not another result (as Note [Static caches] takes it).
//  Below opset 24 a report line says why the mask stays.
bool attentionNonpad(Node &a, PatternRewriter &rw) {
  if (a.numOperands() != 4 || !a.operand(3) || a.numResults() != 1 || !plainAttributes(a)) return false;
  for (unsigned i = 0; i < a.numAttributes(); ++i) {
    llvm::StringRef n = a.attribute(i).name();
    if (n != "scale" && n != "softcap" && n != "q_num_heads" && n != "kv_num_heads") return false;
  }
  Value *qv = a.operand(0), *kv = a.operand(1);
  int64_t r = rankOf(qv), axis = r == 4 ? 2 : 1;
  std::optional<DataType> et = elemOf(qv);
  if ((r != 3 && r != 4) || !et) return false;
  const Value *mask = throughLeadingExpands(a.operand(3));
  const Value *c = nullptr;
  bool negated = false; // c is the masked positions
  Node *d = mask->definingNode();
  if (elemOf(mask) == DataType::Bool) {
    c = mask;
    if (d && d->is("Not") && d->numOperands() == 1) c = d->operand(0), negated = true;
  } else if (d && d->is("Where") && d->numOperands() == 3 && plainAttributes(*d)) {
    if (isZeroScalar(d->operand(1), *et) && isMaskFill(d->operand(2), *et)) c = d->operand(0);
    else if (isMaskFill(d->operand(1), *et) && isZeroScalar(d->operand(2), *et)) c = d->operand(0), negated = true;
  }
  Node *cmp = c ? c->definingNode() : nullptr;
  if (!cmp || cmp->numOperands() != 2 || !plainAttributes(*cmp) || rankOf(c) != 2) return false;
  // attend: j <= w + i, as kr <= cr or cr >= kr; masked: kr > cr or cr < kr.
  bool krFirst = keyRamp(cmp->operand(0), kv, axis);
  bool crFirst = !krFirst && keyRamp(cmp->operand(1), kv, axis);
  if (!krFirst && !crFirst) return false;
  Value *len = nullptr;
  Value *w = queryRamp(cmp->operand(krFirst ? 1 : 0), qv, axis, len);
  if (!w) return false;
  bool attends = krFirst ? cmp->is("LessOrEqual") : cmp->is("GreaterOrEqual");
  bool masks = krFirst ? cmp->is("Greater") : cmp->is("Less");
  if (!(negated ? masks : attends)) return false;
  // A static-cache causal mask from here on: refusals are reported.
  int64_t since = firstVersionWithInput("Attention", "nonpad_kv_seqlen");
  if (rw.opsetVersion() < since)
    return miss(rw, "nonpad", "mask " + q(a.operand(3)) + " of " + q(&a) +
                                  " is causal from the query positions " + q(w) + " on over the whole cache, "
                                  "which Attention takes as is_causal with nonpad_kv_seqlen from opset " +
                                  std::to_string(since) + "; the graph imports " +
                                  std::to_string(rw.opsetVersion()) + ": kept as the mask");
  auto &ctx = rw.getModel().getContext();
  rw.setInsertionPoint(&a);
  Node *total = rw.create("Add", {w, len});
  total->result(0)->setType(len->type());
  Node *batch = rw.create("Shape", {qv});
  batch->setAttr(intAttr("start", 0));
  batch->setAttr(intAttr("end", 1));
  batch->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
  Node *np = rw.create("Expand", {total->result(0), batch->result(0)});
  std::vector<Dim> nd{dimOf(qv, 0)};
  np->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<Dim>(nd)));
  Node *n = rw.create("Attention", {qv, kv, a.operand(2), nullptr, nullptr, nullptr, np->result(0)});
  for (unsigned i = 0; i < a.numAttributes(); ++i) n->setAttr(a.attribute(i).clone());
  n->setAttr(intAttr("is_causal", 1));
  PatternRewriter::copyNodeInfo(a, *n);
  n->result(0)->setType(a.result(0)->type());
  return rw.replaceNode(&a, {n->result(0)});
}

} // namespace attention
} // namespace onnxir
