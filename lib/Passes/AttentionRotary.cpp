//===- AttentionRotary.cpp - Rotary embedding -----------------------------===//
//
// The pattern fuse-rotary-embedding: x * cos + rotate_half(x) * sin ->
// RotaryEmbedding, with cos and sin gathered from constant caches or
// computed in the graph (Note [Rotary caches computed in the graph]).
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include <cmath>

namespace onnxir {
namespace attention {

namespace {

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//


/// `s` slices the last axis of a rank-`rank` tensor whose last dim is `d`
/// with step `step` (positive): returns the clamped [begin, end) (Slice-10+ semantics), or
/// nullopt. Every operand must be a constant of one element.
std::optional<std::pair<int64_t, int64_t>> lastAxisSlice(const Node &s, int64_t rank, int64_t d,
                                                         int64_t step = 1) {
  if (s.numOperands() < 3) return std::nullopt;
  auto one = [&](unsigned i) -> std::optional<int64_t> {
    if (i >= s.numOperands() || !s.operand(i)) return std::nullopt;
    auto v = constantInts(s.operand(i));
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
    if (!st || *st != step) return std::nullopt;
  } else if (step != 1) {
    return std::nullopt;
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
  auto axes = constantInts(u->operand(1));
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
                 std::string &why);

/// equalHalves of a constant `v` holding `t`: each row's halves equal
/// (integers exactly, floats bit for bit but for NaN payloads).
bool constantHalves(const Value *v, const Tensor &t, int64_t d, std::vector<const Value *> &proven,
                    std::string &why) {
  auto holds = [&] {
    proven.push_back(v);
    return true;
  };
  auto unreadable = [&] {
    why = "constant " + q(v) + " cannot be read as [.., " + std::to_string(d) + "]";
    return false;
  };
  if (t.dims().empty() || t.dims().back() != d) return unreadable();
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
  DataType dt = t.dataType();
  if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16 &&
      dt != DataType::BFloat16) { // integers exactly (not through a double)
    auto ints = t.values<int64_t>();
    return ints.ok() ? halvesRepeat(*ints, [](int64_t a, int64_t b) { return a == b; }) : unreadable();
  }
  // Floats bit for bit but for NaN payloads: a NaN is unequal, -0 is not 0.
  auto vals = t.values<double>();
  return vals.ok() ? halvesRepeat(*vals, [](double a, double b) {
    return a == b && std::signbit(a) == std::signbit(b);
  })
                   : unreadable();
}

/// equalHalves of `v` made by `n` (Transpose, Gather, Slice, Expand,
/// Concat: ops that move elements without touching the last axis, or
/// join one value to itself along it); `r` is v's rank.
bool layoutHalves(Node *n, const Value *v, int64_t r, int64_t d, unsigned depth,
                  std::vector<const Value *> &proven, std::string &why) {
  std::string op = n->opType().str();
  auto holds = [&] {
    proven.push_back(v);
    return true;
  };
  auto below = [&](const Value *o) { return equalHalves(o, d, depth - 1, proven, why); };
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
    auto axes = n->numOperands() > 3 && n->operand(3) ? constantInts(n->operand(3)) : std::nullopt;
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
  if (const Tensor *t = PatternRewriter::constantTensor(v)) return constantHalves(v, *t, d, proven, why);
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
  return layoutHalves(n, v, r, d, depth, proven, why);
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
  auto axes = constantInts(u->operand(1));
  Node *g = u->operand(0) ? u->operand(0)->definingNode() : nullptr;
  return axes && *axes == std::vector<int64_t>{1} && g && g->is("Gather") && g->numOperands() == 2 &&
         plainAttributes(*g) && NodeContext(*g).getInt("axis", 0) == 0 &&
         PatternRewriter::constantTensor(g->operand(0));
}

/// [src's dim 0, 1, 1] computed from Shape(src): the Expand target that
/// repeats a cache over a batch not known when fusing.
Value *batchOnesShape(Value *src, PatternRewriter &rw, const std::string &base) {
  auto &ctx = rw.getModel().getContext();
  Node *sh = rw.create("Shape", {src});
  sh->setAttr(intAttr("start", 0));
  sh->setAttr(intAttr("end", 1));
  sh->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{1}));
  Value *ones = rw.createConstant(base + "_ones", makeInt64Tensor({2}, {1, 1}));
  Node *cc = rw.create("Concat", {sh->result(0), ones});
  cc->setAttr(intAttr("axis", 0));
  cc->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{3}));
  return cc->result(0);
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
      constantInts(u->operand(1)) == std::vector<int64_t>{1})
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
      batch = batchOnesShape(src, rw, base);
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

// Note [Interleaved rotary]
//   GPT-J (and code ported from it: CodeGen, GPT-NeoX's Mesh TensorFlow
//   ancestors) rotates neighbouring pairs instead of halves:
//   rotate_every_two(x) = flatten(stack((-x[..., 1::2], x[..., ::2]), -1), -2)
//   and cos, sin repeat_interleave'd to the head size, so for each pair k
//   x*cos + rotate_every_two(x)*sin is x[2k]*c_k - x[2k+1]*s_k at 2k and
//   x[2k+1]*c_k + x[2k]*s_k at 2k+1: RotaryEmbedding's arithmetic with
//   interleaved = 1 and caches c and s, whatever c and s are. What makes it
//   so is only that cos and sin repeat each element twice along the last
//   axis; repeatedPairs proves that from how they are computed (a Reshape
//   that merges a new last axis expanded to 2, which is how torch exports
//   repeat_interleave; a Concat of such pieces on the last axis; a constant)
//   and finds the value before the repetition, which becomes the cache.
//   Where there is none (a constant, pieces of no one Split) the cache is
//   the even elements, a Slice with step 2: the values the graph multiplies
//   by, nothing recomputed.
//   GPT-J rotates before it moves the heads axis: x [B, S, H, D] with cos
//   [B or 1, S, 1, D]. RotaryEmbedding's 4-D input is [B, H, S, D], so that
//   rotation is wrapped in Transposes [0, 2, 1, 3]; the outer one cancels
//   with the head split's own permute(0, 2, 1, 3) after the rotation, and
//   fuse-rotary-partial sees through the pair (Note [Partial rotary]).

/// True if `c` provably repeats each element twice along its last axis,
/// c = repeat_interleave(y, 2, -1) (Note [Interleaved rotary]); `src` is
/// then y, or null when there is none to take.
bool repeatedPairs(Value *c, PatternRewriter &rw, Value *&src, unsigned depth = 4) {
  src = nullptr;
  int64_t r = rankOf(c);
  Dim last = r > 0 ? dimOf(c, -1) : Dim();
  if (r < 1 || !last.isKnown() || last.value % 2) return false;
  if (const Tensor *t = PatternRewriter::constantTensor(c)) {
    auto vals = t->values<double>();
    if (!vals.ok()) return false;
    for (size_t i = 1; i < vals->size(); i += 2)
      if (!((*vals)[i - 1] == (*vals)[i])) return false; // (a NaN pair is not proven)
    return true;
  }
  Node *n = c->definingNode();
  if (!n || depth == 0 || n->getGraph() != rw.root()->getGraph() || !plainAttributes(*n)) return false;
  if (n->is("Reshape") && n->numOperands() == 2) {
    Node *e = n->operand(0) ? n->operand(0)->definingNode() : nullptr;
    if (!e || !e->is("Expand") || e->numOperands() != 2) return false;
    Node *u = e->operand(0) ? e->operand(0)->definingNode() : nullptr;
    auto shape = constantInts(e->operand(1));
    if (!u || !u->is("Unsqueeze") || u->numOperands() != 2 || !shape || shape->empty() || shape->back() != 2)
      return false;
    for (size_t i = 0; i + 1 < shape->size(); ++i)
      if ((*shape)[i] != 1) return false;
    Value *y = u->operand(0);
    auto axes = constantInts(u->operand(1));
    if (!y || rankOf(y) != r || !axes || axes->size() != 1 || ((*axes)[0] != -1 && (*axes)[0] != r) ||
        (int64_t)shape->size() > r + 1)
      return false;
    // The Reshape merges the new axis into the last: leading dims kept,
    // the last doubled (row-major, so y[k] lands at 2k and 2k+1).
    for (int64_t i = 0; i + 1 < r; ++i)
      if (!sameDim(dimOf(y, i), dimOf(c, i))) return false;
    Dim yl = dimOf(y, -1);
    if (!yl.isKnown() || 2 * yl.value != last.value) return false;
    src = y;
    return true;
  }
  if (n->is("Concat") && n->numOperands() >= 1) {
    int64_t axis = NodeContext(*n).getInt("axis", 0);
    if (axis != -1 && axis != r - 1) return false;
    std::vector<Value *> parts;
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      Value *p = nullptr;
      if (!n->operand(i) || !repeatedPairs(n->operand(i), rw, p, depth - 1)) return false;
      parts.push_back(p);
    }
    // Every piece of one Split on the last axis, in order: its input.
    Node *sp = parts[0] ? parts[0]->definingNode() : nullptr;
    bool whole = sp && sp->is("Split") && sp->numResults() == parts.size() && plainAttributes(*sp) &&
                 sp->numOperands() >= 1 && rankOf(sp->operand(0)) == r;
    if (whole) {
      int64_t sa = NodeContext(*sp).getInt("axis", 0);
      whole = sa == -1 || sa == r - 1;
    }
    for (size_t i = 0; whole && i < parts.size(); ++i) whole = parts[i] == sp->result(i);
    if (whole)
      src = sp->operand(0);
    else if (parts.size() == 1)
      src = parts[0];
    return true;
  }
  return false;
}

/// The interleaved RotaryEmbedding cache [B, S, d/2] of a cos or sin
/// operand `c` [b0, S, 1, d] (`headsAxis` 2) or [b0, 1, S, d] (1) that
/// repeatedPairs proved with source `src` (or null). `batch` is the shape
/// [B, 1, 1] to expand to, made on first need.
Value *pairCache(Value *c, Value *src, int64_t headsAxis, Value *x, int64_t seqAxis, int64_t d,
                 Value *&batch, PatternRewriter &rw, const std::string &base) {
  auto &ctx = rw.getModel().getContext();
  DataType et = *elemOf(c);
  Dim b0 = dimOf(c, 0), bx = dimOf(x, 0), s = dimOf(x, seqAxis), hd = Dim::known(d / 2);
  auto typed = [&](Node *n, std::vector<Dim> dims) {
    n->result(0)->setType(ctx.getTensorType(et, llvm::ArrayRef<Dim>(dims)));
    return n->result(0);
  };
  bool srcFits = src && rankOf(src) == 4 && elemOf(src) == et && dimOf(src, -1) == hd;
  for (int64_t i = 0; srcFits && i < 3; ++i) srcFits = sameDim(dimOf(src, i), dimOf(c, i));
  Value *h = src;
  if (!srcFits) {
    Node *sl = rw.create("Slice", {c, rw.createConstant(base + "_start", makeInt64Tensor({1}, {0})),
                                   rw.createConstant(base + "_end", makeInt64Tensor({1}, {d})),
                                   rw.createConstant(base + "_axes", makeInt64Tensor({1}, {-1})),
                                   rw.createConstant(base + "_steps", makeInt64Tensor({1}, {2}))});
    h = typed(sl, {dimOf(c, 0), dimOf(c, 1), dimOf(c, 2), hd});
  }
  h = typed(rw.create("Squeeze", {h, rw.createConstant(base + "_heads", makeInt64Tensor({1}, {headsAxis}))}),
            {b0, s, hd});
  if (sameDim(b0, bx)) return h;
  if (!batch) {
    if (bx.isKnown()) {
      batch = rw.createConstant(base + "_expand", makeInt64Tensor({3}, {bx.value, 1, 1}));
    } else {
      batch = batchOnesShape(x, rw, base);
    }
  }
  return typed(rw.create("Expand", {h, batch}), {bx, s, hd});
}

/// x * cos + rotate_every_two(x) * sin -> RotaryEmbedding interleaved = 1
/// (Note [Interleaved rotary]), x [B, H, S, D] or [B, S, H, D] (then
/// between Transposes).
bool interleavedRope(Node &add, PatternRewriter &rw, std::string &pending) {
  for (unsigned i = 0; i < 2; ++i) {
    Node *m1 = rw.singleUseProducer(add, i, "Mul"), *m2 = rw.singleUseProducer(add, 1 - i, "Mul");
    if (!m1 || !m2 || m1->numOperands() != 2 || m2->numOperands() != 2) continue;
    for (unsigned j = 0; j < 2; ++j) {
      // m2 = Reshape(Concat(Unsqueeze(Neg(x[..., 1::2])), Unsqueeze(x[..., ::2]))) * sin.
      Node *flat = rw.singleUseProducer(*m2, j, "Reshape");
      Node *st = flat ? rw.singleUseProducer(*flat, 0, "Concat") : nullptr;
      if (!st || st->numOperands() != 2 || !plainAttributes(*st)) continue;
      Node *un = rw.singleUseProducer(*st, 0, "Unsqueeze"), *ue = rw.singleUseProducer(*st, 1, "Unsqueeze");
      Node *neg = un ? rw.singleUseProducer(*un, 0, "Neg") : nullptr;
      Node *odd = neg && neg->operand(0) ? neg->operand(0)->definingNode() : nullptr;
      Node *even = ue && ue->operand(0) ? ue->operand(0)->definingNode() : nullptr;
      if (!odd || !even || !odd->is("Slice") || !even->is("Slice") || odd->operand(0) != even->operand(0))
        continue;
      Value *x = even->operand(0), *sin = m2->operand(1 - j);
      Value *cos = m1->operand(0) == x ? m1->operand(1) : m1->operand(1) == x ? m1->operand(0) : nullptr;
      if (!cos) {
        pending = "Mul " + q(m1) + " does not multiply " + q(x) + ", which Concat " + q(st) + " rotates by pairs";
        continue;
      }
      // A candidate from here on: refusals are reported.
      if (int64_t since = firstVersion("RotaryEmbedding"); rw.opsetVersion() < since)
        return miss(rw, "opset", "Concat " + q(st) + " rotates " + q(x) +
                                     " by pairs: RotaryEmbedding needs opset " + std::to_string(since) +
                                     ", the graph imports " + std::to_string(rw.opsetVersion()));
      Dim dd = dimOf(x, -1);
      if (rankOf(x) != 4 || !dd.isKnown() || dd.value % 2 || dd.value <= 0)
        return miss(rw, "rank", "rotary input " + q(x) + " is not 4-D with a known even head size");
      int64_t d = dd.value;
      auto a = lastAxisSlice(*even, 4, d, 2), b = lastAxisSlice(*odd, 4, d, 2);
      auto isLast = [](std::optional<std::vector<int64_t>> ax) {
        return ax && ax->size() == 1 && ((*ax)[0] == -1 || (*ax)[0] == 4);
      };
      int64_t axis = NodeContext(*st).getInt("axis", 0);
      bool pairs = a && b && *a == std::make_pair((int64_t)0, d) && *b == std::make_pair((int64_t)1, d) &&
                   un->numOperands() == 2 && ue->numOperands() == 2 && isLast(constantInts(un->operand(1))) &&
                   isLast(constantInts(ue->operand(1))) && (axis == -1 || axis == 4);
      const Type *xt = tensorType(x), *ft = tensorType(flat->result(0));
      for (int64_t k = 0; pairs && k < 4; ++k)
        pairs = ft && ft->rank() == 4 && sameDim(xt->dims()[k], ft->dims()[k]);
      if (!pairs)
        return miss(rw, "rotate-pairs", "Reshape " + q(flat) + " of Concat " + q(st) +
                                            " is not rotate_every_two of " + q(x) +
                                            " (stack(-x[..., 1::2], x[..., ::2]) flattened to its shape)");
      if (elemOf(x) != DataType::Float || elemOf(add.result(0)) != DataType::Float)
        return miss(rw, "type", "rotary input " + q(x) + " is not float");
      Value *srcs[2] = {nullptr, nullptr};
      int64_t headsAxis = 0;
      for (Value *c : {cos, sin}) {
        const char *what = c == cos ? "cos " : "sin ";
        Value *&src = srcs[c == cos ? 0 : 1];
        if (!repeatedPairs(c, rw, src))
          return miss(rw, "pairs", what + q(c) + " does not provably repeat each element twice on the last axis");
        // [b0, S, 1, D] for x [B, S, H, D], [b0, 1, S, D] for x [B, H, S, D].
        int64_t ha = 0;
        if (rankOf(c) == 4 && dimOf(c, -1) == dd && (isOne(dimOf(c, 0)) || sameDim(dimOf(c, 0), dimOf(x, 0)))) {
          if (isOne(dimOf(c, 2)) && sameDim(dimOf(c, 1), dimOf(x, 1)))
            ha = 2;
          else if (isOne(dimOf(c, 1)) && sameDim(dimOf(c, 2), dimOf(x, 2)))
            ha = 1;
        }
        if (!ha || (headsAxis && ha != headsAxis))
          return miss(rw, "cache-shape", what + q(c) + " is not [B or 1, S, 1, D] or [B or 1, 1, S, D] of " +
                                             q(x) + " (as cos and sin both)");
        headsAxis = ha;
        if (elemOf(c) != elemOf(x)) return miss(rw, "type", what + q(c) + " is not of " + q(x) + "'s type");
      }
      if (!resultKeepsShape(add, x, rw)) return false;
      auto &ctx = rw.getModel().getContext();
      std::string base = add.result(0)->name().str();
      Value *batch = nullptr, *in = x;
      int64_t seqAxis = headsAxis == 2 ? 1 : 2;
      Value *cc = pairCache(cos, srcs[0], headsAxis, x, seqAxis, d, batch, rw, base + "_cos");
      Value *sc = pairCache(sin, srcs[1], headsAxis, x, seqAxis, d, batch, rw, base + "_sin");
      std::vector<Dim> bhsd = {xt->dims()[0], xt->dims()[2], xt->dims()[1], xt->dims()[3]};
      if (headsAxis == 2) {
        Node *t = rw.create("Transpose", {x});
        t->setAttr(intsAttr("perm", {0, 2, 1, 3}));
        t->result(0)->setType(ctx.getTensorType(DataType::Float, llvm::ArrayRef<Dim>(bhsd)));
        in = t->result(0);
      }
      Node *r = rw.create("RotaryEmbedding", {in, cc, sc});
      PatternRewriter::copyNodeInfo(add, *r);
      r->setAttr(intAttr("interleaved", 1));
      if (headsAxis == 1) {
        r->result(0)->setType(add.result(0)->type());
        return rw.replaceNode(&add, {r->result(0)});
      }
      r->result(0)->setType(ctx.getTensorType(DataType::Float, llvm::ArrayRef<Dim>(bhsd)));
      Node *back = rw.create("Transpose", {r->result(0)});
      back->setAttr(intsAttr("perm", {0, 2, 1, 3}));
      back->result(0)->setType(add.result(0)->type());
      return rw.replaceNode(&add, {back->result(0)});
    }
  }
  return false;
}

} // namespace

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
// Failing that, x * cos + rotate_every_two(x) * sin -> RotaryEmbedding
// interleaved = 1 (Note [Interleaved rotary]).
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
  std::string pending; // a rotation whose x * cos is not there (reported last)
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
      if (!cos) {
        pending = "Mul " + q(m1) + " does not multiply " + q(x) + ", which Concat " + q(cat) + " rotates by half";
        continue;
      }
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
  if (interleavedRope(add, rw, pending)) return true;
  if (!pending.empty()) return miss(rw, "rotated-input", pending);
  return false;
}

// Note [Partial rotary]
//  GPT-NeoX (and Phi, StableLM) rotate only the first rd values of each
//  head: Concat(rope(x[..., :rd]), x[..., rd:], axis -1). Once
//  fuse-rotary-embedding has made the RotaryEmbedding of the slice, the
//  Concat and both Slices become one RotaryEmbedding of x with
//  rotary_embedding_dim = rd, which rotates the first rd values and passes
//  the rest through: the same values, moved by no arithmetic. Guards: x is
//  4-D with a known head size D > rd; the two Slices cut x's last axis at
//  [0, rd) and [rd, D) with step 1; the RotaryEmbedding is the rotate-half
//  or interleaved form (no rotary_embedding_dim or num_heads of its own)
//  and its result has no other use; the Concat is on the last axis. A
//  rotation between Transposes [0, 2, 1, 3] (x [B, S, H, D], Note
//  [Interleaved rotary]) stays between them.
bool fuseRotaryPartial(Node &cat, PatternRewriter &rw) {
  if (cat.numOperands() != 2 || cat.numResults() != 1 || !plainAttributes(cat)) return false;
  Node *rope = rw.singleUseProducer(cat, 0, "RotaryEmbedding");
  // The rotation of [B, S, H, D] between Transposes [0, 2, 1, 3] (Note
  // [Interleaved rotary]): x[..., :rd] -> Transpose -> rope -> Transpose.
  auto swap = [&](Node *t) {
    auto perm = t ? transposePerm(*t) : std::nullopt;
    return perm && *perm == std::vector<int64_t>{0, 2, 1, 3};
  };
  Node *inner = nullptr;
  if (!rope) {
    Node *outer = rw.singleUseProducer(cat, 0, "Transpose");
    Node *r = swap(outer) ? rw.singleUseProducer(*outer, 0, "RotaryEmbedding") : nullptr;
    Node *t = r && r->numOperands() >= 3 ? rw.singleUseProducer(*r, 0, "Transpose") : nullptr;
    if (swap(t)) rope = r, inner = t;
  }
  Node *pass = cat.operand(1) ? cat.operand(1)->definingNode() : nullptr;
  if (!rope || !pass || !pass->is("Slice") || rope->numOperands() < 3 || !rope->operand(0))
    return false;
  Node *rot = inner ? (inner->operand(0) ? inner->operand(0)->definingNode() : nullptr)
                    : rope->operand(0)->definingNode();
  if (!rot || !rot->is("Slice") || rot->operand(0) != pass->operand(0)) return false;
  Value *x = rot->operand(0);
  // A partial rotary from here on: refusals are reported.
  int64_t rank = rankOf(x);
  Dim dd = dimOf(x, -1);
  if (rank != 4 || !dd.isKnown())
    return miss(rw, "rank", "partial rotary input " + q(x) + " is not 4-D with a known head size");
  int64_t d = dd.value, axis = NodeContext(cat).getInt("axis", 0);
  auto a = lastAxisSlice(*rot, rank, d), b = lastAxisSlice(*pass, rank, d);
  if ((axis != -1 && axis != rank - 1) || !a || !b || a->first != 0 || b->first != a->second ||
      b->second != d || a->second <= 0 || a->second >= d)
    return miss(rw, "partial", "Concat " + q(&cat) + " of " + q(rope) + " and Slice " + q(pass) +
                                   " does not rotate x[..., :rd] and keep x[..., rd:] of " + q(x));
  NodeContext rc(*rope);
  if (!plainAttributes(*rope) || rc.getInt("rotary_embedding_dim", 0) || rc.getInt("num_heads", 0))
    return miss(rw, "partial", q(rope) + " has attributes of its own");
  const Type *yt = tensorType(cat.result(0)), *xt = tensorType(x);
  bool same = yt && xt && yt->rank() == 4 && elemOf(x) == elemOf(cat.result(0));
  for (int64_t k = 0; same && k < 4; ++k) same = sameDim(xt->dims()[k], yt->dims()[k]);
  if (!same) return miss(rw, "shape", "result of " + q(&cat) + " is not of " + q(x) + "'s type");
  std::vector<Value *> ops = {x};
  if (inner) {
    Node *t = rw.create("Transpose", {x});
    t->setAttr(intsAttr("perm", {0, 2, 1, 3}));
    std::vector<Dim> bhsd = {xt->dims()[0], xt->dims()[2], xt->dims()[1], xt->dims()[3]};
    t->result(0)->setType(rw.getModel().getContext().getTensorType(*elemOf(x), llvm::ArrayRef<Dim>(bhsd)));
    ops[0] = t->result(0);
  }
  for (unsigned i = 1; i < rope->numOperands(); ++i) ops.push_back(rope->operand(i));
  Node *r = rw.create("RotaryEmbedding", ops);
  PatternRewriter::copyNodeInfo(cat, *r);
  if (rc.getInt("interleaved", 0)) r->setAttr(intAttr("interleaved", 1));
  r->setAttr(intAttr("rotary_embedding_dim", a->second));
  if (!inner) {
    r->result(0)->setType(cat.result(0)->type());
    return rw.replaceNode(&cat, {r->result(0)});
  }
  r->result(0)->setType(ops[0]->type());
  Node *back = rw.create("Transpose", {r->result(0)});
  back->setAttr(intsAttr("perm", {0, 2, 1, 3}));
  back->result(0)->setType(cat.result(0)->type());
  return rw.replaceNode(&cat, {back->result(0)});
}

} // namespace attention
} // namespace onnxir
