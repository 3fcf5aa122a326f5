//===- AttentionMasks.cpp - Attention masks -------------------------------===//
//
// The mask of fuse-attention: an additive mask, or a boolean one through
// Where with -inf or with the type's lowest value (Note [Masks filled with
// finfo.min]); its shape against the scores (Note [Attention mask
// shape]); masks that are provably causal (is_causal).
//
//===----------------------------------------------------------------------===//
#include "AttentionCache.h"
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace onnxir {
namespace attention {

//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

// Note [Causal mask forms]
//  is_causal = 1 means: query i attends key j exactly when j <= i, on a
//  square [S, S] (no past). A mask is taken for it only when it provably is
//  that triangle, its last two dims being the scores' q and kv sequence
//  dims, proven equal, and any dims before them known 1:
//   - boolean (true = attend; `negated`: true = masked, the strict upper
//     triangle j > i): a constant of exactly that pattern; Trilu of an
//     all-true ConstantOfShape (lower with k = 0, or upper with k = 1 when
//     negated); or a comparison of two index ramps as written by
//     `arange(S)[None, :] <= arange(S)[:, None]` and Hugging Face's
//     `mask_cond < (mask_cond + 1).view(S, 1)`: Less, LessOrEqual, Greater
//     or GreaterOrEqual of a column ramp j + c1 and a row ramp i + c2,
//     each Range(0, n, 1) (constant start 0 and step 1), the row one made a
//     column vector by Unsqueeze(axes [1]) or Reshape([-1 or n, 1]), the
//     column one 1-D or Unsqueeze(axes [0]) / Reshape([1, -1 or n]), plus
//     or minus integer constants, through Casts (ramps below 2^24 are exact
//     in float). The ramps' lengths are the comparison's dims, which its
//     type says are the sequence dims. The relation must be j <= i (or
//     j > i when negated) for every i, j: the offsets must cancel.
//   - additive: 0 on and below the diagonal and F above it, F being -inf
//     or at most half the element type's lowest finite value (finfo.min,
//     float16's -65504): a constant of that pattern; torch's
//     triu(full(F), diagonal=1) = Trilu(ConstantOfShape(F), upper 1, k 1);
//     Where(causal, 0, F) and Where(strictly upper, F, 0) of a boolean
//     mask proven as above. A causal row always attends its diagonal, so
//     exp(s + F - max) is 0 in every type for scores within the bounds of
//     Note [Masks filled with finfo.min], as -inf gives: the same result.
//  Anything else (a ramp with another start or step, an offset by one
//  (j <= i + 1, a shifted window), a mask combined with padding) stays a
//  materialised mask. A triangle offset by a KV cache's past length is
//  not square: fuse-attention passes it on as the mask, and
//  fuse-attention-kv-cache, once the past is Attention's own, makes it
//  is_causal (Note [Past-length causal offset], AttentionCache.cpp, with
//  the same matchers: ramps and Trilu k may then hold the past length).

namespace {

/// The leading dims of `v` (all but the last two) are known 1, its rank at
/// least 2, and its last two dims are `sq` and `skv`, proven equal.
bool squareOverSequence(const Value *v, const Dim &sq, const Dim &skv) {
  int64_t r = rankOf(v);
  if (r < 2 || !sameDim(sq, skv) || !seqSame(dimOf(v, -2), sq) || !seqSame(dimOf(v, -1), skv))
    return false;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (!isOne(dimOf(v, i))) return false;
  return true;
}

/// The one integer of a constant (int64 or int32) of one element.
std::optional<int64_t> oneInt(const Value *v) {
  auto c = constantInts(v);
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0];
}

} // namespace

/// A one-element integer value as c + p * P: an integer constant; with a
/// past (`past.k`, `past.v`: the caches whose dim 2 is P), also P read as
/// Gather(Shape(cache), 2) or Shape(cache, start 2, end 3), and sums,
/// differences, integer Casts and reshapes of those.
std::optional<Affine> affineOf(const Value *v, const PastCaches &past, int depth) {
  if (std::optional<int64_t> c = oneInt(v)) return Affine{*c, 0};
  if (!past.k || !v || depth > 8) return std::nullopt;
  Node *d = v->definingNode();
  if (!d || !plainAttributes(*d) || d->numOperands() == 0 || !d->operand(0)) return std::nullopt;
  auto isCache = [&](const Value *x) { return x && (x == past.k || x == past.v) && rankOf(x) == 4; };
  // Shape's start and end (opset 15) against rank 4.
  auto shapeRange = [](const Node &s, int64_t &from, int64_t &to) {
    NodeContext c(s);
    from = c.getInt("start", 0);
    to = c.getInt("end", 4);
    if (from < 0) from += 4;
    if (to < 0) to += 4;
    to = std::min<int64_t>(to, 4);
  };
  if (d->is("Shape") && isCache(d->operand(0))) {
    int64_t from, to;
    shapeRange(*d, from, to);
    if (from == 2 && to == 3) return Affine{0, 1};
    return std::nullopt;
  }
  if (d->is("Gather") && d->numOperands() == 2 && NodeContext(*d).getInt("axis", 0) == 0) {
    Node *s = d->operand(0)->definingNode();
    std::optional<int64_t> i = oneInt(d->operand(1));
    if (!s || !s->is("Shape") || !plainAttributes(*s) || !isCache(s->operand(0)) || !i)
      return std::nullopt;
    int64_t from, to;
    shapeRange(*s, from, to);
    if (*i < 0) *i += to - from;
    if (from + *i == 2 && *i >= 0 && from + *i < to) return Affine{0, 1};
    return std::nullopt;
  }
  if ((d->is("Add") || d->is("Sub")) && d->numOperands() == 2) {
    auto a = affineOf(d->operand(0), past, depth + 1), b = affineOf(d->operand(1), past, depth + 1);
    if (!a || !b) return std::nullopt;
    int64_t s = d->is("Sub") ? -1 : 1;
    return Affine{a->c + s * b->c, a->p + s * b->p};
  }
  if (d->is("Cast")) {
    int64_t to = NodeContext(*d).getInt("to", 0);
    if (to != (int64_t)DataType::Int64 && to != (int64_t)DataType::Int32) return std::nullopt;
    return affineOf(d->operand(0), past, depth + 1);
  }
  // One element reshaped (Note [Op facts]) is that element.
  const OpEntry *e = OpRegistry::get().lookup(*d);
  if (e && e->reshapes) return affineOf(d->operand(0), past, depth + 1);
  return std::nullopt;
}

namespace {

/// Range(s, n, 1): the ramp s, s + 1, ...; s is 0 without a past, c + p * P
/// with one. Its start, or nullopt.
std::optional<Affine> rampStart(const Value *v, const PastCaches &past) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || !d->is("Range") || d->numOperands() != 3 || oneInt(d->operand(2)) != 1) return std::nullopt;
  std::optional<Affine> s = affineOf(d->operand(0), past);
  if (!s || (!past.k && !(*s == Affine{0, 0}))) return std::nullopt;
  return s;
}

/// A ramp seen along one axis of the compared matrix: entry (i, j) is
/// i + offset + past * P (`row`) or j + offset + past * P (column).
struct Ramp {
  bool row = false;
  int64_t offset = 0;
  int64_t past = 0;
};

std::optional<Ramp> rampOf(const Value *v, const PastCaches &past, int depth = 0) {
  if (!v || depth > 8) return std::nullopt;
  if (auto s = rampStart(v, past)) return Ramp{false, s->c, s->p}; // 1-D: broadcast as the last axis
  Node *d = v->definingNode();
  if (!d || !plainAttributes(*d)) return std::nullopt;
  if ((d->is("Add") || d->is("Sub")) && d->numOperands() == 2) {
    for (unsigned k = 0; k < 2; ++k) {
      if (k == 1 && d->is("Sub")) break; // c - x is a falling ramp
      std::optional<Affine> c = affineOf(d->operand(1 - k), past);
      if (!c || rankOf(d->operand(1 - k)) > 2) continue;
      auto r = rampOf(d->operand(k), past, depth + 1);
      if (!r) continue;
      r->offset += d->is("Sub") ? -c->c : c->c;
      r->past += d->is("Sub") ? -c->p : c->p;
      return r;
    }
    return std::nullopt;
  }
  if (d->is("Cast") && d->numOperands() == 1) {
    int64_t to = NodeContext(*d).getInt("to", 0);
    if (to != (int64_t)DataType::Int64 && to != (int64_t)DataType::Int32 &&
        to != (int64_t)DataType::Float && to != (int64_t)DataType::Double)
      return std::nullopt;
    return rampOf(d->operand(0), past, depth + 1);
  }
  // A 1-D ramp made a row (column vector) or a column (row vector).
  const Value *src = d->numOperands() ? d->operand(0) : nullptr;
  std::optional<Ramp> inner = rankOf(src) == 1 ? rampOf(src, past, depth + 1) : std::nullopt;
  if (!inner || inner->row) return std::nullopt;
  Ramp rowOf = *inner;
  rowOf.row = true;
  if (d->is("Unsqueeze")) {
    NodeAxes axes = readAxes(*d, PatternRewriter::constantTensor);
    if (axes.kind != NodeAxes::Known || axes.values.size() != 1) return std::nullopt;
    int64_t a = axes.values[0];
    if (a == 1 || a == -1) return rowOf;
    if (a == 0 || a == -2) return inner;
    return std::nullopt;
  }
  if (d->is("Reshape") && d->numOperands() == 2) {
    auto shape = constantInts(d->operand(1));
    if (!shape || shape->size() != 2) return std::nullopt;
    // -1 or the length itself (a 0 would copy a dim of the 1-D ramp).
    auto span = [](int64_t x) { return x == -1 || x > 1; };
    if ((*shape)[1] == 1 && span((*shape)[0])) return rowOf;
    if ((*shape)[0] == 1 && span((*shape)[1])) return inner;
  }
  return std::nullopt;
}

/// A comparison of a row ramp and a column ramp that is j <= i + pc * P
/// (`negated`: j > i + pc * P) everywhere (Note [Causal mask forms], Note
/// [Past-length causal offset]); pc is 0 without a past.
bool causalComparison(const Node &cmp, bool negated, const PastCaches &past) {
  bool less = cmp.is("Less") || cmp.is("LessOrEqual");
  bool strict = cmp.is("Less") || cmp.is("Greater");
  if (!less && !cmp.is("Greater") && !cmp.is("GreaterOrEqual")) return false;
  if (cmp.numOperands() != 2) return false;
  auto a = rampOf(cmp.operand(0), past), b = rampOf(cmp.operand(1), past);
  if (!a || !b || a->row == b->row) return false;
  // lo < hi (strict) or lo <= hi: lo's index <= hi's index + k + kp * P.
  const Ramp &lo = less ? *a : *b, &hi = less ? *b : *a;
  int64_t k = hi.offset - lo.offset - (strict ? 1 : 0), kp = hi.past - lo.past;
  int64_t pc = past.k ? 1 : 0;
  if (!lo.row) return !negated && k == 0 && kp == pc; // j <= i + k + kp * P
  return negated && k == -1 && kp == -pc;             // i <= j + k + kp * P
}

/// The tensor of the `value` attribute of ConstantOfShape `n`, if plain.
const Tensor *constantOfShapeValue(const Node &n) {
  if (!n.is("ConstantOfShape") || !plainAttributes(n)) return nullptr;
  const Attribute *val = n.getAttr("value");
  if (!val || val->kind() != AttrKind::Tensor || val->tensors.empty()) return nullptr;
  return val->tensors.get()[0].get();
}

/// A constant of one element that is -inf or at most half of `et`'s lowest
/// finite value, or a ConstantOfShape of it (torch.full) (Note [Causal mask
/// forms]).
bool maskFill(const Value *v, DataType et) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t)
    if (Node *d = v ? v->definingNode() : nullptr) t = constantOfShapeValue(*d);
  if (!t || t->dataType() != et) return false;
  auto n = t->numElements();
  auto vals = t->values<double>();
  std::optional<double> low = lowestFinite(et);
  if (!n || *n != 1 || !vals.ok() || vals->size() != 1 || !low) return false;
  double x = (*vals)[0];
  return x == -std::numeric_limits<double>::infinity() || x <= *low / 2;
}

/// A constant of one element equal to zero.
bool isZeroConst(const Value *v, DataType et) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t || t->dataType() != et) return false;
  auto n = t->numElements();
  auto vals = t->values<double>();
  return n && *n == 1 && vals.ok() && vals->size() == 1 && (*vals)[0] == 0;
}

/// GPT-2's causal buffer sliced to the sequence, bias[:, :, 0:S, 0:S]:
/// Slices (opset 10 form) of a constant bool tensor whose leading dims are 1
/// and whose last two are a [P, P] triangle (j <= i; `negated`: j > i),
/// each cutting only its last two axes, from 0 with step 1, to any end.
/// The top-left block of a triangle is the triangle (Note [Causal mask
/// forms]); that it is square over the sequence the caller checks.
bool causalBufferSlice(const Value *v, bool negated) {
  for (int depth = 0; depth < 4; ++depth) {
    const Tensor *t = PatternRewriter::constantTensor(v);
    if (t) {
      size_t r = t->dims().size();
      if (t->dataType() != DataType::Bool || r < 2) return false;
      for (size_t i = 0; i + 2 < r; ++i)
        if (t->dims()[i] != 1) return false;
      int64_t n = t->dims()[r - 1];
      auto vals = t->values<int64_t>();
      if (!vals.ok() || t->dims()[r - 2] != n || (int64_t)vals->size() != n * n) return false;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (((*vals)[i * n + j] != 0) != (negated ? j > i : j <= i)) return false;
      return true;
    }
    Node *s = v ? v->definingNode() : nullptr;
    if (!s || !s->is("Slice") || s->numOperands() < 3 || !plainAttributes(*s) || !s->operand(0))
      return false;
    int64_t r = rankOf(s->operand(0));
    auto starts = constantInts(s->operand(1));
    if (r < 2 || !starts) return false;
    std::vector<int64_t> axes;
    if (s->numOperands() > 3 && s->operand(3)) {
      auto a = constantInts(s->operand(3));
      if (!a) return false;
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->size(); ++i) axes.push_back((int64_t)i);
    }
    std::vector<int64_t> steps(axes.size(), 1);
    if (s->numOperands() > 4 && s->operand(4)) {
      auto st = constantInts(s->operand(4));
      if (!st) return false;
      steps = *st;
    }
    if (axes.size() != starts->size() || steps.size() != axes.size()) return false;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < r - 2 || a >= r || (*starts)[i] != 0 || steps[i] != 1) return false;
    }
    v = s->operand(0);
  }
  return false;
}

} // namespace

namespace {

/// The leading dims of `v` are known 1, its rank at least 2, and its last
/// two dims are `sq` and `skv`.
bool overSequence(const Value *v, const Dim &sq, const Dim &skv) {
  int64_t r = rankOf(v);
  if (r < 2 || !seqSame(dimOf(v, -2), sq) || !seqSame(dimOf(v, -1), skv)) return false;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (!isOne(dimOf(v, i))) return false;
  return true;
}

/// The k of Trilu `tr` as c + p * P (0 without the operand).
std::optional<Affine> triluKOf(const Node &tr, const PastCaches &past) {
  if (tr.numOperands() < 2 || !tr.operand(1)) return Affine{0, 0};
  return affineOf(tr.operand(1), past);
}

/// The boolean `attend` is j <= i + pc * P (`negated`: its complement),
/// pc = 1 with a past, 0 without; its shape the callers check.
bool causalBoolForm(const Value *attend, bool negated, const PastCaches &past) {
  int64_t pc = past.k ? 1 : 0;
  if (const Tensor *t = PatternRewriter::constantTensor(attend)) {
    if (past.k || t->dataType() != DataType::Bool || t->dims().size() < 2) return false;
    auto vals = t->values<int64_t>();
    int64_t n = t->dims().back();
    if (!vals.ok() || t->dims()[t->dims().size() - 2] != n || (int64_t)vals->size() != n * n)
      return false;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (((*vals)[i * n + j] != 0) != (negated ? j > i : j <= i)) return false;
    return true;
  }
  Node *d = attend->definingNode();
  if (!d || !plainAttributes(*d)) return false;
  if (d->is("Slice")) return !past.k && causalBufferSlice(attend, negated);
  if (!d->is("Trilu")) return causalComparison(*d, negated, past);
  // Trilu keeps j <= i + k (lower) or j >= i + k (upper).
  std::optional<Affine> k = triluKOf(*d, past);
  if (NodeContext(*d).getInt("upper", 1) != (negated ? 1 : 0) || !k ||
      !(*k == Affine{negated ? 1 : 0, pc}))
    return false;
  Node *ones = d->operand(0) ? d->operand(0)->definingNode() : nullptr;
  const Tensor *vt = ones ? constantOfShapeValue(*ones) : nullptr;
  if (!vt || vt->dataType() != DataType::Bool) return false;
  auto vv = vt->values<int64_t>();
  return vv.ok() && vv->size() == 1 && (*vv)[0] != 0;
}

/// A ConstantOfShape of zeros of type `et` (torch.zeros).
bool zeroFill(const Value *v, DataType et) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || !d->is("ConstantOfShape") || !plainAttributes(*d)) return false;
  if (!d->getAttr("value")) return et == DataType::Float; // the default float 0
  const Tensor *t = constantOfShapeValue(*d);
  if (!t || t->dataType() != et) return false;
  auto vals = t->values<double>();
  return vals.ok() && vals->size() == 1 && (*vals)[0] == 0;
}

/// The additive `mask` of type `et` over [sq, skv] is 0 where j <= i + pc
/// * P and -inf or at most half the lowest value elsewhere; its own shape
/// the callers check.
bool causalAdditiveForm(const Value *mask, const Dim &sq, const Dim &skv, DataType et,
                        const PastCaches &past) {
  std::optional<double> low = lowestFinite(et);
  if (!low) return false;
  int64_t pc = past.k ? 1 : 0;
  if (const Tensor *t = PatternRewriter::constantTensor(mask)) {
    if (past.k || t->dataType() != et || t->dims().size() < 2) return false;
    auto vals = t->values<double>();
    int64_t n = t->dims().back();
    if (!vals.ok() || t->dims()[t->dims().size() - 2] != n || (int64_t)vals->size() != n * n)
      return false;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = (*vals)[i * n + j];
        bool fill = x == -std::numeric_limits<double>::infinity() || x <= *low / 2;
        if (j <= i ? x != 0 : !fill) return false;
      }
    return true;
  }
  Node *d = mask->definingNode();
  if (!d || !plainAttributes(*d)) return false;
  if (d->is("Trilu")) {
    std::optional<Affine> k = triluKOf(*d, past);
    if (NodeContext(*d).getInt("upper", 1) != 1 || !k || !(*k == Affine{1, pc})) return false;
    return maskFill(d->operand(0), et) && !PatternRewriter::constantTensor(d->operand(0));
  }
  if (d->is("Where") && d->numOperands() == 3) {
    const Value *c = d->operand(0);
    auto condition = [&](bool neg) {
      if (!past.k)
        return provablyCausal(c, dimOf(c, -2), dimOf(c, -1), neg) && sameDim(dimOf(c, -2), sq);
      return overSequence(c, sq, skv) && causalBoolForm(c, neg, past);
    };
    if (isZeroConst(d->operand(1), et) && maskFill(d->operand(2), et)) return condition(false);
    if (maskFill(d->operand(1), et) && isZeroConst(d->operand(2), et)) return condition(true);
  }
  // Note [Past-length causal offset]: Hugging Face's older
  // _make_causal_mask, cat([zeros(S, P), causal(S, S)], -1).
  if (past.k && d->is("Concat") && d->numOperands() == 2 && d->operand(0) && d->operand(1)) {
    int64_t r = rankOf(mask), axis = NodeContext(*d).getInt("axis", 0);
    const Value *z = d->operand(0), *tri = d->operand(1);
    return r >= 2 && (axis == -1 || axis == r - 1) && zeroFill(z, et) &&
           sameDim(dimOf(z, -1), dimOf(past.k, 2)) &&
           provablyCausalAdditive(tri, sq, dimOf(tri, -1), et);
  }
  return false;
}

} // namespace

bool provablyCausal(const Value *attend, const Dim &sq, const Dim &skv, bool negated) {
  return squareOverSequence(attend, sq, skv) && causalBoolForm(attend, negated, PastCaches{});
}

bool provablyCausalAdditive(const Value *mask, const Dim &sq, const Dim &skv, DataType et) {
  return squareOverSequence(mask, sq, skv) && causalAdditiveForm(mask, sq, skv, et, PastCaches{});
}

bool provablyCausalPast(const Value *mask, const PastCaches &past, const Dim &sq, const Dim &skv,
                        DataType et) {
  if (!mask || !past.k || !past.v) return false;
  mask = throughLeadingExpands(mask);
  if (!overSequence(mask, sq, skv)) return false;
  std::optional<DataType> mt = elemOf(mask);
  if (mt == DataType::Bool) {
    // fuse-attention gives Not(m) for a Where that fills where m is true.
    Node *n = mask->definingNode();
    if (n && n->is("Not") && n->numOperands() == 1 && n->operand(0))
      return overSequence(n->operand(0), sq, skv) && causalBoolForm(n->operand(0), true, past);
    return causalBoolForm(mask, false, past);
  }
  return mt == et && causalAdditiveForm(mask, sq, skv, et, past);
}

bool provablyCausalPastBool(const Value *c, bool negated, const PastCaches &past, const Dim &sq, const Dim &skv) {
  if (!c || !past.k || !past.v) return false;
  c = throughLeadingExpands(c);
  return overSequence(c, sq, skv) && causalBoolForm(c, negated, past);
}

std::optional<HalfPlane> rampHalfPlane(const Node &cmp, const PastCaches &past) {
  bool less = cmp.is("Less") || cmp.is("LessOrEqual");
  bool strict = cmp.is("Less") || cmp.is("Greater");
  if ((!less && !cmp.is("Greater") && !cmp.is("GreaterOrEqual")) || cmp.numOperands() != 2 ||
      !plainAttributes(cmp))
    return std::nullopt;
  auto a = rampOf(cmp.operand(0), past), b = rampOf(cmp.operand(1), past);
  if (!a || !b || a->row == b->row) return std::nullopt;
  // lo < hi (strict) or lo <= hi: lo's index <= hi's index + k.
  const Ramp &lo = less ? *a : *b, &hi = less ? *b : *a;
  Affine k{hi.offset - lo.offset - (strict ? 1 : 0), hi.past - lo.past};
  if (!lo.row) return HalfPlane{true, k};            // j <= i + k
  return HalfPlane{false, Affine{-k.c, -k.p}};        // i <= j + k: j - i >= -k
}

std::optional<HalfPlane> triluHalfPlane(const Node &tr, const PastCaches &past) {
  if (!tr.is("Trilu") || !plainAttributes(tr) || tr.numOperands() < 1) return std::nullopt;
  std::optional<Affine> k = triluKOf(tr, past);
  Node *ones = tr.operand(0) ? tr.operand(0)->definingNode() : nullptr;
  const Tensor *vt = ones ? constantOfShapeValue(*ones) : nullptr;
  if (!k || !vt || vt->dataType() != DataType::Bool) return std::nullopt;
  auto vv = vt->values<int64_t>();
  if (!vv.ok() || vv->size() != 1 || (*vv)[0] == 0) return std::nullopt;
  return HalfPlane{NodeContext(tr).getInt("upper", 1) == 0, *k};
}

const Value *throughLeadingExpands(const Value *mask) {
  // An Expand over the leading dims keeps every (i, j) entry.
  for (int i = 0; i < 2; ++i) {
    Node *e = mask->definingNode();
    if (!e || !e->is("Expand") || e->numOperands() != 2 || !e->operand(0)) break;
    const Value *in = e->operand(0);
    if (rankOf(in) < 2 || !sameDim(dimOf(in, -1), dimOf(mask, -1)) ||
        !sameDim(dimOf(in, -2), dimOf(mask, -2)))
      break;
    mask = in;
  }
  return mask;
}

bool isMaskFill(const Value *v, DataType et) { return maskFill(v, et); }
bool isZeroScalar(const Value *v, DataType et) { return isZeroConst(v, et); }

std::optional<double> lowestFinite(DataType t) {
  switch (t) {
  case DataType::Float: return -(double)std::numeric_limits<float>::max();
  case DataType::Double: return -std::numeric_limits<double>::max();
  case DataType::Float16: return -65504.0;               // -(2 - 2^-10) * 2^15
  case DataType::BFloat16: return -0x1.fep127;           // -(2 - 2^-7) * 2^127
  default: return std::nullopt;
  }
}

// Note [Masks filled with finfo.min]
//   Hugging Face masks the scores with torch.finfo(dtype).min, the lowest
//   finite value L of their type, instead of -inf: Where(c, S, L) (or
//   Where(c, L, S)) before the Softmax. Attention's boolean mask is a bias
//   of -inf, which differs on a fully masked row: softmax of all-L entries
//   is uniform (the mean of V), of all -inf entries NaN in the graph and 0
//   in Attention. So the fill never becomes a boolean attn_mask but the
//   additive Where(c, 0, M) (Where(c, M, 0) when the Where fills where c is
//   true) of the scores' type, M = L/2, which Attention adds to the scaled
//   scores s. An attended entry gets s + 0 = s exactly, as in the graph; a
//   masked one s + M rounded, which is M itself while |s| is below half
//   the spacing of the values next to M: 2^102 for float (M = -1.7e38,
//   spacing 2^103), the same for bfloat16 summed in its own or in float
//   precision, 2^969 for double. Then, with M for L:
//    - a partially masked row: exp(L - max) and exp(M - max) both
//      underflow to exactly 0 beside any attended maximum above M + 746
//      (exp(-746) is below double's smallest subnormal): the masked keys
//      get weight 0 in both, the attended ones the same softmax;
//    - a fully masked row: all entries L in the graph, all M in Attention:
//      uniform in both.
//   M is not L itself because onnxruntime 1.30's Attention returns a zero
//   row where every biased score is the type's lowest value (it treats L
//   as masked, like -inf); M is a plain finite bias there too (checked on
//   onnxruntime by ort-fuse-attention, whose all-false `keep` masks every
//   row of attention-finfo-min). Scores beyond 1e30 in magnitude are
//   outside the contract. float16 is not covered: M = -32752 has spacing
//   16, so s + M keeps s once |s| >= 8 in float16 (and always when the sum
//   is formed in float, as runtimes do for float16): a fully masked row
//   would be softmax(s), not uniform. A float16 finfo.min mask is fused
//   only when it is provably causal (checkOperands reports the others). A
//   causal mask never masks the diagonal, so no row is fully masked, and
//   is_causal (a bias of -inf above the diagonal) gives the partially
//   masked rows' result above, for any type. The same holds for the causal
//   triangle offset by a past (Note [Past-length causal offset]: query i
//   sees key P + i): with K and V Concats of past caches, such a float16
//   fill becomes the boolean -inf mask, which fuse-attention-kv-cache then
//   takes as is_causal with the past. Other large negative fills
//   (-1e9, -10000, float16's lowest in a float graph) are not L: a masked
//   entry is then s + fill, not a constant, and a fully masked row is
//   softmax(s); they are reported. A constant c makes a constant Where,
//   which fold-constants folds (-O2).
//
//   Additive masks meet the same zeroing: Add(S, mask) where the mask holds
//   L (Hugging Face's extended mask (1 - m) * L, a constant with a fully
//   masked row) gives a zero row in Attention, uniform in the graph. So
//   Attention gets the mask with L/2 for L, which by the bounds above gives
//   the graph's result on every row:
//    - a constant mask holding L: folded, each L entry L/2;
//    - x * L, with L a scalar constant and x provably integer-valued (a
//      Cast from bool or an integer type, integer constants, and their
//      sums, differences, products and reshapes): x * L/2. x = 0 and 1
//      give 0 and L/2 as above; |x| >= 2 gives ±inf in the graph and a
//      bias of magnitude at least |L| in Attention, whose weight is 0 beside
//      any entry of bias 0 or L/2, so only rows of NaN in the graph (where
//      all are -inf) differ; x = -1 gives +L/2 for -L, absorbing s alike;
//    - Wheres over 0 and L alone (Where(c, 0, L), masked_fill over such a
//      mask): the fill, Note [Additive masks of 0 and the lowest value];
//    - a mask computed in any other way from a constant holding L (a float
//      factor x, whose x * L/2 is not x * L's meaning when 0 < |x| < 1)
//      is reported (mask-min), not fused;
//    - float16: as above, no bias absorbs the scores: a float16 additive
//      mask holding -65504 is reported (an additive mask is never is_causal).
//   A mask with no constant holding L in the nodes computing it (a graph
//   input, -1e9 or -10000 fills) is passed on unchanged: a graph input that
//   holds L at run time is outside the contract.
Value *peelMask(Value *s, PatternRewriter &rw, AttentionMatch &m) {
  Node *d = s->definingNode();
  if (!d || d->getGraph() != rw.root()->getGraph() || !PatternRewriter::hasSingleLocalUse(s))
    return s;
  auto isScores = [&](Value *x) {
    double unused = 1, cap = 0;
    std::vector<Node *> seen;
    Value *y = peelScale(peelSoftcap(x, rw, cap), rw, unused, seen);
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
      // Note [Masks filled with finfo.min]
      DataType ft = PatternRewriter::constantTensor(d->operand(3 - i))->dataType();
      std::optional<double> lowest = lowestFinite(ft);
      bool negInf = std::isinf(*fill) && *fill < 0;
      if (!negInf && (!lowest || *fill != *lowest)) {
        miss(rw, "mask-fill",
             "Where " + q(d) + " fills " + num(*fill) + ", neither -inf nor " +
                 (lowest ? num(*lowest) + ", the lowest " + dataTypeName(ft).str()
                         : std::string("the lowest value of ") + dataTypeName(ft).str()) +
                 ": Attention's boolean mask is a bias of -inf (Note [Masks filled with finfo.min])");
        return nullptr;
      }
      if (!negInf) m.lowestFill = d->operand(3 - i);
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

//===----------------------------------------------------------------------===//
// Additive masks reaching the lowest value (Note [Masks filled with finfo.min])
//===----------------------------------------------------------------------===//

namespace {

/// True if the constant `t` holds its own type's lowest finite value.
bool holdsLowest(const Tensor &t) {
  std::optional<double> lowest = lowestFinite(t.dataType());
  if (!lowest) return false;
  auto vals = t.values<double>();
  if (!vals.ok()) return true; // unreadable: assume it may
  for (double x : *vals)
    if (x == *lowest) return true;
  return false;
}

/// True if every value of `v` is provably an integer (or ±inf or NaN):
/// a Cast from bool or an integer type, an integer constant, and sums,
/// differences, products and reshapes of those (an integer rounded to
/// float is still an integer).
bool integerValued(const Value *v, PatternRewriter &rw, int depth = 0) {
  if (const Tensor *t = PatternRewriter::constantTensor(v)) {
    auto vals = t->values<double>();
    if (!vals.ok()) return false;
    for (double x : *vals)
      if (std::isfinite(x) && x != std::trunc(x)) return false;
    return true;
  }
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || depth > 6 || d->getGraph() != rw.root()->getGraph()) return false;
  if (d->is("Cast") && d->numOperands() == 1) {
    auto from = elemOf(d->operand(0));
    return from && (*from == DataType::Bool || isSignedInteger(*from) || isUnsignedInteger(*from));
  }
  if ((d->is("Add") || d->is("Sub") || d->is("Mul")) && d->numOperands() == 2)
    return integerValued(d->operand(0), rw, depth + 1) && integerValued(d->operand(1), rw, depth + 1);
  // A reshape (Note [Op facts]) moves the same values.
  const OpEntry *e = OpRegistry::get().lookup(*d);
  if (e && e->reshapes && d->numOperands() >= 1) return integerValued(d->operand(0), rw, depth + 1);
  return false;
}

/// A constant of type `et` holding L among the operands of the nodes that
/// compute `v` in the root's graph (a bounded walk), or null.
const Value *lowestInCone(const Value *v, DataType et, PatternRewriter &rw) {
  std::vector<const Value *> work{v};
  std::vector<const Node *> seen;
  while (!work.empty() && seen.size() < 64) {
    const Value *x = work.back();
    work.pop_back();
    if (const Tensor *t = PatternRewriter::constantTensor(x)) {
      if (t->dataType() == et && holdsLowest(*t)) return x;
      continue;
    }
    Node *d = x->definingNode();
    if (!d || d->getGraph() != rw.root()->getGraph() ||
        std::find(seen.begin(), seen.end(), d) != seen.end())
      continue;
    seen.push_back(d);
    for (unsigned i = 0; i < d->numOperands(); ++i)
      if (d->operand(i)) work.push_back(d->operand(i));
  }
  return nullptr;
}

} // namespace

bool additiveLowest(AttentionMatch &m, DataType et, PatternRewriter &rw, std::string &why) {
  if (const Tensor *t = PatternRewriter::constantTensor(m.mask)) {
    if (holdsLowest(*t)) m.lowestConst = m.mask;
  } else if (Node *d = m.mask->definingNode(); d && d->is("Mul") && d->numOperands() == 2) {
    for (unsigned i = 0; i < 2 && !m.lowestConst; ++i) {
      // A scalar L (not broadcasting the product up) times an integer.
      std::optional<double> lowest = lowestFinite(et);
      if (lowest && absorbedScalar(d->operand(i), d->operand(1 - i)) == *lowest &&
          integerValued(d->operand(1 - i), rw)) {
        m.lowestConst = d->operand(i);
        m.lowestFactor = d->operand(1 - i);
      }
    }
  }
  if (m.lowestConst) return true;
  if (const Value *c = lowestInCone(m.mask, et, rw)) {
    why = "additive mask " + q(m.mask) + " is computed from " + q(c) + ", which holds the lowest " +
          dataTypeName(et).str() +
          ", not as a constant nor as an integer times it: a fully masked row may be all lowest, "
          "which Attention zeroes (Note [Masks filled with finfo.min])";
    return false;
  }
  return true;
}

Tensor halvedLowest(const Tensor &t) {
  DataType dt = t.dataType();
  auto bytes = t.bytes();
  std::string raw = bytes.ok() ? bytes->str() : std::string();
  auto replace = [&](auto lowest, auto half) {
    using T = decltype(lowest);
    for (size_t o = 0; o + sizeof(T) <= raw.size(); o += sizeof(T)) {
      T x;
      std::memcpy(&x, raw.data() + o, sizeof x);
      if (x == lowest) std::memcpy(raw.data() + o, &half, sizeof half);
    }
  };
  if (dt == DataType::Float)
    replace(-std::numeric_limits<float>::max(), -std::numeric_limits<float>::max() / 2);
  else if (dt == DataType::Double)
    replace(-std::numeric_limits<double>::max(), -std::numeric_limits<double>::max() / 2);
  else if (dt == DataType::BFloat16) // -(2 - 2^-7) * 2^127 and 2^126
    replace(uint16_t(0xFF7F), uint16_t(0xFEFF));
  return makeTensor(dt, t.dims(), std::move(raw));
}

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
  // (A mask sliced from a fixed buffer, min(P, S) against S, is S wherever
  // the model runs: Note [Slices of fixed buffers].)
  if (r >= 2 && (!seqSame(dimOf(mask, -1), dimOf(scores, -1)) ||
                 !(seqSame(dimOf(mask, -2), dimOf(scores, -2)) || isOne(dimOf(mask, -2))))) {
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
    if (!isOne(a) && !seqSame(a, b)) {
      why = "mask " + q(mask) + " dim " + dimStr(a) + " does not provably broadcast to scores dim " +
            dimStr(b);
      return false;
    }
  }
  expandQ = !seqSame(dimOf(mask, -2), dimOf(scores, -2));
  return true;
}

} // namespace attention
} // namespace onnxir
