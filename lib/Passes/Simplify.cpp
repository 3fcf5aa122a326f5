//===- Simplify.cpp - Remove no-op nodes and collapse chains --------------===//
//
// Rewrite patterns that need only what is known for sure: constant operands
// (initializers, Constant nodes), attributes, and the element types and
// shapes that values declare (or that -infer-shapes gave them). A value's
// shape counts only where every dim needed is a known integer. Every
// pattern here is exact: the result is bit for bit the unsimplified one.
// Graph outputs keep their names and types (PatternRewriter::canReplace).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Passes/Simplify.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace onnxir {

namespace {

//===----------------------------------------------------------------------===//
// What is known
//===----------------------------------------------------------------------===//

/// The axes of `n` in its version's form (Note [Axes: attribute or
/// operand], Ops/OpFacts.h): empty when absent, nullopt when not known.
std::optional<std::vector<int64_t>> axesOf(const Node &n) {
  NodeAxes a = readAxes(n, PatternRewriter::constantTensor);
  if (a.kind == NodeAxes::Known) return std::move(a.values);
  if (a.kind == NodeAxes::Absent) return std::vector<int64_t>{};
  return std::nullopt;
}

bool hasRefs(const Node &n) { return PatternRewriter::hasAttributeReferences(n); }

/// Replaces the single result of `n` by `v` (the no-op case).
bool forward(Node &n, Value *v, PatternRewriter &rw) {
  if (n.numResults() != 1 || !n.result(0) || !v) return false;
  for (unsigned i = 1; i < n.numResults(); ++i)
    if (n.result(i) && !n.result(i)->useEmpty()) return false;
  // A value that is not used needs nothing from us (DCE's job).
  if (n.result(0)->useEmpty()) return false;
  return rw.replaceNode(&n, {v});
}

//===----------------------------------------------------------------------===//
// No-op removals. Each is exact: the node returns its input unchanged.
//===----------------------------------------------------------------------===//

/// True if `shape` is `Shape(x)` of the whole of `x` (no start/end).
bool isShapeOf(const Value *shape, const Value *x) {
  Node *d = shape ? shape->definingNode() : nullptr;
  return d && d->is("Shape") && d->numOperands() == 1 && d->operand(0) == x &&
         !d->getAttr("start") && !d->getAttr("end");
}

// Reshape to the input's own static shape (0 copies a dim unless allowzero,
// -1 is inferred), or to Shape(input) itself (no shape knowledge needed).
bool reshapeNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() < 2 || hasRefs(n)) return false;
  if (isShapeOf(n.operand(1), n.operand(0))) return forward(n, n.operand(0), rw);
  auto in = staticShape(n.operand(0));
  auto shape = constantInts(n.operand(1));
  if (!in || !shape || shape->size() != in->size()) return false;
  // Note [Reshape's target shape] (Ops/OpFacts.h). A -1 with a dim of 0 in
  // the input is ambiguous (any size fits): left alone.
  if (std::find(shape->begin(), shape->end(), -1) != shape->end() &&
      std::find(in->begin(), in->end(), 0) != in->end())
    return false;
  auto out = resolveReshape(*in, *shape, reshapeAllowsZero(n));
  return out.ok() && *out == *in && forward(n, n.operand(0), rw);
}

// Expand whose shape broadcasts to the input's own shape (or is Shape(input)).
bool expandNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2) return false;
  if (isShapeOf(n.operand(1), n.operand(0))) return forward(n, n.operand(0), rw);
  auto in = staticShape(n.operand(0));
  auto shape = constantInts(n.operand(1));
  if (!in || !shape || shape->size() > in->size()) return false;
  size_t off = in->size() - shape->size();
  for (size_t i = 0; i < shape->size(); ++i)
    if ((*shape)[i] != 1 && (*shape)[i] != (*in)[off + i]) return false;
  return forward(n, n.operand(0), rw);
}

// Tile by ones.
bool tileNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2) return false;
  auto reps = constantInts(n.operand(1));
  if (!reps || staticRankOf(n.operand(0)) != (int64_t)reps->size()) return false;
  for (int64_t r : *reps)
    if (r != 1) return false;
  return forward(n, n.operand(0), rw);
}

// Pad by zeros (any mode). pads is an attribute, then an operand.
bool padNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() < 1 || hasRefs(n)) return false;
  std::optional<std::vector<int64_t>> pads;
  if (rw.opsetVersion() < firstVersionWithInput("Pad", "pads")) {
    const Attribute *a = n.getAttr("pads");
    if (a) pads = a->ints;
  } else if (n.numOperands() > 1 && n.operand(1)) {
    pads = constantInts(n.operand(1));
  }
  if (!pads || pads->empty()) return false;
  for (int64_t p : *pads)
    if (p != 0) return false;
  return forward(n, n.operand(0), rw);
}

// Cast to the input's own element type.
bool castNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || hasRefs(n) || !n.getAttr("to")) return false;
  auto et = staticElemOf(n.operand(0));
  if (!et || (int64_t)*et != NodeContext(n).getInt("to", -1)) return false;
  return forward(n, n.operand(0), rw);
}

// Transpose by the identity permutation (needs the rank without `perm`:
// the default reverses the axes, the identity only for rank <= 1).
bool transposeNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || hasRefs(n)) return false;
  const Attribute *perm = n.getAttr("perm");
  if (!perm) {
    int64_t r = staticRankOf(n.operand(0));
    if (r < 0 || r > 1) return false;
  } else {
    for (size_t i = 0; i < perm->ints.size(); ++i)
      if (perm->ints[i] != (int64_t)i) return false;
  }
  return forward(n, n.operand(0), rw);
}

// Concat of one input; Split into one output (its whole input).
bool concatOne(Node &n, PatternRewriter &rw) {
  return n.numOperands() == 1 && forward(n, n.operand(0), rw);
}
bool splitOne(Node &n, PatternRewriter &rw) {
  if (n.numResults() != 1 || n.numOperands() < 1 || hasRefs(n)) return false;
  if (n.getAttr("num_outputs") && NodeContext(n).getInt("num_outputs", 0) != 1) return false;
  return forward(n, n.operand(0), rw);
}

// Slice that keeps everything: starts 0, steps 1, ends at or past the end
// (INT_MAX-like, or the static dim).
bool sliceNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() < 3 || rw.opsetVersion() < firstVersionWithInput("Slice", "starts") ||
      hasRefs(n))
    return false;
  auto starts = constantInts(n.operand(1)), ends = constantInts(n.operand(2));
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::optional<std::vector<int64_t>> axes, steps;
  if (n.numOperands() > 3 && n.operand(3)) {
    axes = constantInts(n.operand(3));
    if (!axes) return false;
  }
  if (n.numOperands() > 4 && n.operand(4)) {
    steps = constantInts(n.operand(4));
    if (!steps) return false;
  }
  if ((axes && axes->size() != starts->size()) || (steps && steps->size() != starts->size()))
    return false;
  auto in = staticShape(n.operand(0));
  int64_t rank = staticRankOf(n.operand(0));
  for (size_t i = 0; i < starts->size(); ++i) {
    if ((*starts)[i] != 0 || (steps && (*steps)[i] != 1)) return false;
    if ((*ends)[i] >= (int64_t)INT32_MAX) continue;
    int64_t ax = axes ? (*axes)[i] : (int64_t)i;
    if (ax < 0) ax += rank;
    if (!in || ax < 0 || ax >= (int64_t)in->size() || (*ends)[i] < (*in)[ax]) return false;
  }
  return forward(n, n.operand(0), rw);
}

// x - 0, x * 1, 1 * x, x / 1 -> x, for a constant whose every element is
// the neutral value and whose broadcast cannot change x's shape (rank at
// most x's known rank, each dim 1 or x's known dim where they align) or
// type (same element type). Exact, -0.0 included (x + 0 is not listed:
// -0.0 + 0 is +0.0; see addZero).
bool neutralOperand(Node &n, PatternRewriter &rw, double neutral, bool commutes,
                    bool negativeZero = false) {
  if (n.numOperands() != 2 || n.numResults() != 1) return false;
  for (unsigned i = commutes ? 0 : 1; i < 2; ++i) {
    Value *x = n.operand(1 - i);
    const Tensor *t = PatternRewriter::constantTensor(n.operand(i));
    if (!t || !x) continue;
    auto et = staticElemOf(x);
    int64_t rank = staticRankOf(x), tr = (int64_t)t->dims().size();
    if (!et || *et != t->dataType() || rank < tr) continue;
    bool covered = true;
    for (int64_t d = 0; d < tr; ++d) {
      int64_t td = t->dims()[d];
      covered &= td == 1 || (td >= 0 && td == staticDimOf(x, (unsigned)(rank - tr + d)));
    }
    auto vals = t->values<double>();
    if (!covered || !vals.ok() || vals->empty()) continue;
    bool all = true;
    for (double v : *vals) all &= v == neutral && (!negativeZero || std::signbit(v));
    if (all && forward(n, x, rw)) return true;
  }
  return false;
}

// x + 0 -> x where that is exact: integer x, or a float zero constant whose
// every element is -0.0 (x + -0.0 is x for every x, +0.0 and -0.0
// included). The shape and type rules are neutralOperand's.
bool addZero(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2) return false;
  for (unsigned i = 0; i < 2; ++i) {
    auto et = staticElemOf(n.operand(1 - i));
    if (!et) continue;
    bool isInt = isSignedInteger(*et) || isUnsignedInteger(*et);
    if (!isInt && !isFloatingPoint(*et)) continue;
    if (neutralOperand(n, rw, 0.0, true, !isInt)) return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Chains
//===----------------------------------------------------------------------===//

// Reshape(Reshape(x, a), b) -> Reshape(x, b) when b has no 0 (a 0 would copy
// a dim of the inner result, which differs from x's). Exact.
bool reshapeChain(Node &n, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(n, 0, "Reshape");
  if (!inner || n.numOperands() < 2 || hasRefs(n)) return false;
  auto shape = constantInts(n.operand(1));
  if (!shape) return false;
  for (int64_t s : *shape)
    if (s == 0) return false;
  rw.setOperand(&n, 0, inner->operand(0));
  return true;
}

// Reshape whose shape is computed (Shape/Gather/Concat chains around
// attention with symbolic batch and sequence dims), when shape inference
// named every dim of its result: the shape becomes a constant, each dim
// written as its known integer, as 0 (copy) where it is the same symbol as
// the input's dim at that position, or as -1 for a single dim that is
// neither, and only when every other dim is a known positive integer (a
// symbolic dim may be 0 at run time, where -1 is ambiguous). A known 0 is
// not written (0 means copy with allowzero = 0). Exact: the result has the
// inferred shape either way (a symbolic dim, DimExpr.h, is one value
// throughout the model at run time).
bool reshapeSymbolicShape(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2 || hasRefs(n) ||
      rw.opsetVersion() < firstVersionWithInput("Reshape", "shape") || !n.operand(1) ||
      PatternRewriter::constantTensor(n.operand(1)) || reshapeAllowsZero(n))
    return false;
  const Value *x = n.operand(0), *y = n.result(0);
  const Type *xt = x ? x->type() : nullptr, *yt = y ? y->type() : nullptr;
  if (!xt || !yt || !xt->isTensor() || !yt->isTensor() || xt->rank() < 0 || yt->rank() < 0)
    return false;
  std::vector<int64_t> shape;
  int64_t minusAt = -1;
  bool symbolic = false;
  for (int64_t i = 0; i < yt->rank(); ++i) {
    const Dim &d = yt->dims()[i];
    if (d.isKnown()) {
      if (d.value <= 0) return false;
      shape.push_back(d.value);
    } else if (d.isSymbolic() && i < xt->rank() && xt->dims()[i].isSymbolic() &&
               xt->dims()[i].param == d.param) {
      shape.push_back(0);
      symbolic = true;
    } else {
      if (minusAt >= 0) return false;
      minusAt = i;
      shape.push_back(-1);
    }
  }
  if (minusAt >= 0 && symbolic) return false;
  Value *c = rw.createConstant(n.operand(1)->name().str().empty() ? "shape" : n.operand(1)->name().str(),
                               makeInt64Tensor({(int64_t)shape.size()}, shape));
  rw.setOperand(&n, 1, c);
  return true;
}

/// The permutation of Transpose `t`: its `perm` (checked to be one), or the
/// default reversal of its input's known rank.
std::optional<std::vector<int64_t>> permOf(const Node &t) {
  if (t.numOperands() != 1 || hasRefs(t)) return std::nullopt;
  std::vector<int64_t> p;
  if (const Attribute *a = t.getAttr("perm")) {
    p = a->ints;
  } else {
    int64_t r = staticRankOf(t.operand(0));
    if (r < 0) return std::nullopt;
    for (int64_t i = r - 1; i >= 0; --i) p.push_back(i);
  }
  std::vector<bool> seen(p.size());
  for (int64_t x : p) {
    if (x < 0 || x >= (int64_t)p.size() || seen[x]) return std::nullopt;
    seen[x] = true;
  }
  return p;
}

/// Where the dims of a Transpose, Reshape, Split or Slice result come from:
/// the operand `src` (of rank `srcRank`) and, per dim k of the result, the
/// dim of `src` that is provably the same value (-1 where none is).
struct DimSources {
  Value *src = nullptr;
  int64_t srcRank = -1;
  std::vector<int64_t> dim;
  bool transpose = false;
};

/// The rank that a Split or Slice result shares with its input `x`: x's,
/// else v's (-1 when neither is known or they differ).
int64_t sharedRank(const Value *x, const Value *v) {
  int64_t xr = staticRankOf(x), vr = staticRankOf(v);
  if (xr >= 0 && vr >= 0 && xr != vr) return -1;
  return xr >= 0 ? xr : vr;
}

/// An axis normalised against `rank` (-1 when out of range).
int64_t normAxis(int64_t a, int64_t rank) {
  if (a < 0) a += rank;
  return a >= 0 && a < rank ? a : -1;
}

/// The dims of Split result `v` of `d`: every dim of its input but the
/// split axis (whatever the sizes: each piece spans the others whole).
std::optional<DimSources> splitSources(Node &d, const Value *v) {
  Value *x = d.operand(0);
  int64_t r = sharedRank(x, v);
  if (r < 0) return std::nullopt;
  int64_t axis = normAxis(NodeContext(d).getInt("axis", 0), r);
  if (axis < 0) return std::nullopt;
  DimSources s{x, r, std::vector<int64_t>(r), false};
  for (int64_t k = 0; k < r; ++k) s.dim[k] = k == axis ? -1 : k;
  return s;
}

/// The dims of Slice result `v` of `d`: every dim of its input that the
/// Slice provably keeps whole. Slice-1 takes starts/ends/axes as
/// attributes, Slice-10+ as operands (axes and steps optional); axes absent
/// are 0 .. len(starts)-1, so the axes must be a constant or absent with
/// the length of starts known. An axis not listed is kept; a listed one
/// only when its range provably covers the dim: step 1, start 0 (or at most
/// minus a known dim), end INT64_MAX (or at least a known dim).
std::optional<DimSources> sliceSources(Node &d, const Value *v) {
  Value *x = d.operand(0);
  int64_t r = sharedRank(x, v);
  if (r < 0) return std::nullopt;
  NodeContext c(d);
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  int64_t n = -1;
  bool hasAxes;
  if (c.opset > 0 && c.opset < firstVersionWithInput("Slice", "starts")) {
    if (d.numOperands() != 1) return std::nullopt;
    starts = c.getInts("starts");
    ends = c.getInts("ends");
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    n = (int64_t)starts->size();
    hasAxes = d.getAttr("axes") != nullptr;
    if (hasAxes) axes = c.getInts("axes");
  } else {
    if (d.numOperands() < 3 || !d.operand(1) || !d.operand(2)) return std::nullopt;
    starts = constantInts(d.operand(1));
    ends = constantInts(d.operand(2));
    if (starts) n = (int64_t)starts->size();
    else if (const Type *t = d.operand(1)->type();
             t && t->isTensor() && t->rank() == 1 && t->dims()[0].isKnown())
      n = t->dims()[0].value;
    hasAxes = d.numOperands() > 3 && d.operand(3);
    if (hasAxes) axes = constantInts(d.operand(3));
    if (d.numOperands() > 4 && d.operand(4)) {
      steps = constantInts(d.operand(4));
      if (!steps) starts.reset();  // no range is provably whole
    }
  }
  if (hasAxes ? !axes : n < 0) return std::nullopt;
  if (!hasAxes) {
    axes.emplace();
    for (int64_t i = 0; i < n; ++i) axes->push_back(i);
  }
  size_t m = axes->size();
  bool known = starts && ends && starts->size() == m && ends->size() == m &&
               (!steps || steps->size() == m);
  const Type *xt = x->type();
  bool typed = xt && xt->isTensor() && xt->hasShape() && xt->rank() == r;
  DimSources s{x, r, std::vector<int64_t>(r), false};
  for (int64_t k = 0; k < r; ++k) s.dim[k] = k;
  for (size_t i = 0; i < m; ++i) {
    int64_t a = normAxis((*axes)[i], r);
    if (a < 0) return std::nullopt;
    if (known && (!steps || (*steps)[i] == 1)) {
      int64_t b = (*starts)[i], e = (*ends)[i];
      const Dim *xd = typed ? &xt->dims()[a] : nullptr;
      bool fromStart = b == 0 || (xd && xd->isKnown() && b < 0 && b <= -xd->value);
      bool toEnd = e == INT64_MAX || (xd && xd->isKnown() && e >= xd->value);
      if (fromStart && toEnd) continue;
    }
    s.dim[a] = -1;
  }
  return s;
}

/// The dim sources of `v` when it is the result of a Transpose (dim k is dim
/// perm[k] of its input), a Reshape (dim k is dim k of its input where the
/// constant shape says 0 without allowzero, else a dim j of the input that
/// inference gave the same symbol or the same known size: a symbolic dim is
/// one value throughout the model, DimExpr.h), a Split (splitSources) or a
/// Slice (sliceSources) in graph `g`; none when no dim of v has a source.
std::optional<DimSources> dimSources(const Value *v, const Graph &g) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || d->getGraph() != &g || d->numOperands() < 1 || !d->operand(0) || hasRefs(*d))
    return std::nullopt;
  if (d->is("Split") || (d->is("Slice") && d->numResults() == 1)) {
    auto ks = d->is("Split") ? splitSources(*d, v) : sliceSources(*d, v);
    if (ks && std::all_of(ks->dim.begin(), ks->dim.end(), [](int64_t j) { return j < 0; }))
      return std::nullopt;
    return ks;
  }
  if (d->numResults() != 1) return std::nullopt;
  if (d->is("Transpose")) {
    auto p = permOf(*d);
    if (!p) return std::nullopt;
    return DimSources{d->operand(0), (int64_t)p->size(), *p, true};
  }
  if (!d->is("Reshape")) return std::nullopt;
  Value *x = d->operand(0);
  const Type *xt = x->type(), *vt = v->type();
  auto shape = d->numOperands() > 1 && d->operand(1) ? constantInts(d->operand(1)) : std::nullopt;
  bool typed = vt && vt->isTensor() && vt->hasShape() && xt && xt->isTensor() && xt->hasShape();
  int64_t xr = staticRankOf(x), vr = staticRankOf(v);
  if (vr < 0 && shape) vr = (int64_t)shape->size();
  if (xr < 0 || vr < 0 || (shape && (int64_t)shape->size() != vr)) return std::nullopt;
  bool allowZero = reshapeAllowsZero(*d);
  DimSources s{x, xr, std::vector<int64_t>(vr, -1), false};
  for (int64_t k = 0; k < vr; ++k) {
    if (shape && reshapeEntry((*shape)[k], allowZero) == ReshapeEntry::CopyInput) {
      if (k < xr) s.dim[k] = k;
      continue;
    }
    if (!typed) continue;
    const Dim &dk = vt->dims()[k];
    if (k < xr && sameDim(dk, xt->dims()[k])) {
      s.dim[k] = k;
      continue;
    }
    for (int64_t j = 0; j < xr && s.dim[k] < 0; ++j)
      if (sameDim(dk, xt->dims()[j])) s.dim[k] = j;
  }
  return s;
}

/// A use of Shape(v) (the dims [s0, e0) of v) by Gather(., constant
/// indices) each of which reads a dim of v that has a source: the Gather,
/// the dims and values of its indices into Shape(src) (`same`: they are the
/// ones it has).
struct DimRead {
  Node *gather;
  std::vector<int64_t> dims, at;
  bool same;
};

std::optional<DimRead> gatherRead(Use &u, const DimSources &ds, int64_t s0, int64_t e0,
                                  PatternRewriter &rw) {
  Node *g = u.getOwner();
  if (!g->is("Gather") || u.getOperandNo() != 0 || g->getGraph() != &rw.graph() ||
      g->numOperands() != 2 || hasRefs(*g))
    return std::nullopt;
  int64_t axis = NodeContext(*g).getInt("axis", 0), len = e0 - s0;
  const Tensor *t = PatternRewriter::constantTensor(g->operand(1));
  auto idx = constantInts(g->operand(1));
  if ((axis != 0 && axis != -1) || !t || !idx) return std::nullopt;
  DimRead rd{g, t->dims(), {}, true};
  for (int64_t at : *idx) {
    if (at < -len || at >= len) return std::nullopt;
    int64_t j = ds.dim[s0 + (at < 0 ? at + len : at)];
    if (j < 0) return std::nullopt;
    rd.at.push_back(j);
    rd.same &= j == at;
  }
  return rd;
}

// Shape(v) of v = Transpose(y, perm) or a Reshape of y reads dims of y
// (dimSources), so the read goes to y directly, which drops a use of v (a
// head split read for its sequence length by Shape then has the single use
// that the 3-D Attention needs):
//  - a Shape of a range of v's dims that are consecutive dims of y becomes
//    that range of y (in place: Shape(y, start, end); opset 15);
//  - otherwise, when every use of Shape(v) is a Gather at constant indices
//    (in range, negative ones normalised) of dims that have a source, each
//    becomes Gather(Shape(y), those dims of y), a Shape(y) that CSE shares
//    with y's others, and Shape(v) goes (one Shape for one);
//  - uses of another kind (a whole shape that Expand or Reshape reads, a
//    Gather at a computed index) of a Transpose's Shape get
//    Gather(Shape(y), perm), the Gathers as above, only when v is then dead
//    or used once: one node more, for a Transpose that goes or that a
//    fusion may now take (a head split). Else Shape(v) stays, as it does
//    for a Reshape (whose dims need not all be y's).
// Exact: the same integers either way.
bool shapeDimSource(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || n.numResults() != 1 || !n.result(0) || hasRefs(n)) return false;
  bool ranged = n.getAttr("start") || n.getAttr("end");
  int64_t rangedSince = firstVersionWithAttribute("Shape", "start");
  if (ranged && rw.opsetVersion() < rangedSince) return false;
  Value *v = n.operand(0);
  auto ds = dimSources(v, rw.graph());
  if (!ds) return false;
  int64_t r = (int64_t)ds->dim.size();
  NodeContext c(n);
  auto bound = [&](int64_t x) { return std::clamp<int64_t>(x < 0 ? x + r : x, 0, r); };
  int64_t s0 = bound(c.getInt("start", 0)), e0 = n.getAttr("end") ? bound(c.getInt("end", r)) : r;
  if (e0 <= s0) return false;
  Value *y = ds->src;

  // A range of consecutive dims of y.
  int64_t j0 = ds->dim[s0];
  bool consecutive = j0 >= 0;
  for (int64_t k = s0; k < e0; ++k) consecutive &= ds->dim[k] == j0 + (k - s0);
  if (consecutive && (ranged || rw.opsetVersion() >= rangedSince)) {
    rw.setOperand(&n, 0, y);
    if (j0 != 0 || e0 - s0 != ds->srcRank) {
      n.setAttr(intAttr("start", j0));
      n.setAttr(intAttr("end", j0 + (e0 - s0)));
    } else {
      n.removeAttr("start");
      n.removeAttr("end");
    }
    return true;
  }

  // Gathers at constant indices.
  std::vector<DimRead> reads;
  bool others = false;
  for (Use &u : n.result(0)->uses()) {
    auto rd = gatherRead(u, *ds, s0, e0, rw);
    if (rd) reads.push_back(std::move(*rd));
    else others = true;
  }
  if (others) {
    if (!ds->transpose || n.result(0)->isGraphOutput()) return false;
    unsigned left = 0;
    bool local = true;
    for (Use &u : v->uses())
      if (u.getOwner() != &n) {
        ++left;
        local &= !u.getOwner()->isReturn() && u.getOwner()->getGraph() == v->getGraph();
      }
    if (left > 1 || !local) return false;
  }
  if (reads.empty() && !others) return false;

  auto &ctx = rw.getModel().getContext();
  Node *sy = rw.create("Shape", {y});
  sy->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{ds->srcRank}));
  for (DimRead &rd : reads) {
    Value *idx = rd.same ? rd.gather->operand(1)
                         : rw.createConstant("index", makeInt64Tensor(rd.dims, rd.at));
    rw.setOperand(rd.gather, 0, sy->result(0));
    rw.setOperand(rd.gather, 1, idx);
  }
  if (!others) {
    rw.eraseNode(&n);
    return true;
  }
  std::vector<int64_t> dims(ds->dim.begin() + s0, ds->dim.begin() + e0);
  Value *at = rw.createConstant("perm", makeInt64Tensor({(int64_t)dims.size()}, dims));
  Node *g = rw.create("Gather", {sy->result(0), at});
  g->setAttr(intAttr("axis", 0));
  PatternRewriter::copyNodeInfo(n, *g);
  g->result(0)->setType(n.result(0)->type());
  return rw.replaceNode(&n, {g->result(0)});
}

// Squeeze(Unsqueeze(x, a), a) -> x, and Unsqueeze(Squeeze(x, a), a) -> x
// when x is known to be 1 at those axes (Squeeze requires it anyway). Axes
// must be explicit; they are compared as sets once normalised: both count
// in the rank of the Unsqueeze's result (x's for Unsqueeze(Squeeze)), which
// negative ones need known.
bool squeezePair(Node &n, PatternRewriter &rw, bool outerSqueeze) {
  Node *inner = rw.singleUseProducer(n, 0, outerSqueeze ? "Unsqueeze" : "Squeeze");
  if (!inner || hasRefs(*inner) || hasRefs(n) || !inner->operand(0)) return false;
  auto a = axesOf(n), b = axesOf(*inner);
  if (!a || !b || a->empty() || a->size() != b->size()) return false;
  int64_t r = staticRankOf(inner->operand(0));
  if (r >= 0 && outerSqueeze) r += (int64_t)b->size();
  for (auto *axes : {&*a, &*b}) {
    for (int64_t &x : *axes) {
      if (x < 0 && r < 0) return false;
      if (x < 0) x += r;
      if (x < 0 || (r >= 0 && x >= r)) return false;
    }
    std::sort(axes->begin(), axes->end());
  }
  if (*a != *b || std::adjacent_find(a->begin(), a->end()) != a->end()) return false;
  return forward(n, inner->operand(0), rw);
}

// Transpose(Transpose(x, p), q) -> Transpose(x, p o q), or x when that is
// the identity. A permutation not given is the reversal of the axes: two
// such cancel; one with the other explicit needs the rank. Exact.
bool transposeChain(Node &n, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(n, 0, "Transpose");
  if (!inner || hasRefs(*inner) || hasRefs(n) || inner->numOperands() != 1) return false;
  // Two without perm reverse the axes twice, whatever the rank.
  if (!inner->getAttr("perm") && !n.getAttr("perm")) return forward(n, inner->operand(0), rw);
  // Otherwise a missing perm is the reversal of the known rank (permOf).
  auto p = permOf(*inner), q = permOf(n);
  if (!p || !q || p->size() != q->size()) return false;
  std::vector<int64_t> c(q->size());
  for (size_t i = 0; i < c.size(); ++i) c[i] = (*p)[(*q)[i]];
  bool identity = true;
  for (size_t i = 0; i < c.size(); ++i) identity &= c[i] == (int64_t)i;
  if (identity) return forward(n, inner->operand(0), rw);
  n.setAttr(intsAttr("perm", c));
  rw.setOperand(&n, 0, inner->operand(0));
  return true;
}

/// True if every value of `from` is exactly representable in `to`.
bool widens(DataType from, DataType to) {
  using D = DataType;
  if (from == to) return true;
  auto in = [&](std::initializer_list<D> l) { return std::find(l.begin(), l.end(), to) != l.end(); };
  switch (from) {
  case D::Bool:
    return in({D::Int8, D::Uint8, D::Int16, D::Uint16, D::Int32, D::Uint32, D::Int64, D::Uint64,
               D::Float16, D::Float, D::Double});
  case D::Int8: return in({D::Int16, D::Int32, D::Int64, D::Float16, D::Float, D::Double});
  case D::Uint8:
    return in({D::Int16, D::Uint16, D::Int32, D::Uint32, D::Int64, D::Uint64, D::Float16,
               D::Float, D::Double});
  case D::Int16: return in({D::Int32, D::Int64, D::Float, D::Double});
  case D::Uint16: return in({D::Int32, D::Uint32, D::Int64, D::Uint64, D::Float, D::Double});
  case D::Int32: return in({D::Int64, D::Double});
  case D::Uint32: return in({D::Int64, D::Uint64, D::Double});
  case D::Float16: return in({D::Float, D::Double});
  case D::BFloat16: return in({D::Float, D::Double});
  case D::Float: return in({D::Double});
  default: return false;
  }
}

// Cast(Cast(x, T1), T2) -> Cast(x, T2), or x when T2 is x's type, only if
// T1 holds every value of x's type exactly (then the outer cast sees x's
// exact value and nothing can change).
bool castChain(Node &n, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(n, 0, "Cast");
  if (!inner || hasRefs(*inner) || hasRefs(n) || inner->numOperands() != 1) return false;
  auto et = staticElemOf(inner->operand(0));
  if (!et || !inner->getAttr("to") || !n.getAttr("to")) return false;
  auto t1 = (DataType)NodeContext(*inner).getInt("to", 0), t2 = (DataType)NodeContext(n).getInt("to", 0);
  if (!widens(*et, t1)) return false;
  if (t2 == *et) return forward(n, inner->operand(0), rw);
  rw.setOperand(&n, 0, inner->operand(0));
  return true;
}

} // namespace

void populateSimplifyPatterns(PatternSet &ps) {
  ps.add("reshape-noop", "Reshape", reshapeNoop);
  ps.add("expand-noop", "Expand", expandNoop);
  ps.add("tile-noop", "Tile", tileNoop);
  ps.add("pad-noop", "Pad", padNoop);
  ps.add("cast-noop", "Cast", castNoop);
  ps.add("transpose-noop", "Transpose", transposeNoop);
  ps.add("concat-one", "Concat", concatOne);
  ps.add("split-one", "Split", splitOne);
  ps.add("slice-noop", "Slice", sliceNoop);
  ps.add("sub-zero", "Sub", [](Node &n, PatternRewriter &rw) {
    return neutralOperand(n, rw, 0.0, isCommutative(n));
  });
  ps.add("mul-one", "Mul", [](Node &n, PatternRewriter &rw) {
    return neutralOperand(n, rw, 1.0, isCommutative(n));
  });
  ps.add("div-one", "Div", [](Node &n, PatternRewriter &rw) {
    return neutralOperand(n, rw, 1.0, isCommutative(n));
  });
  ps.add("reshape-chain", "Reshape", reshapeChain);
  ps.add("reshape-symbolic-shape", "Reshape", reshapeSymbolicShape);
  ps.add("shape-dim-source", "Shape", shapeDimSource);
  ps.add("squeeze-unsqueeze", "Squeeze",
         [](Node &n, PatternRewriter &rw) { return squeezePair(n, rw, true); });
  ps.add("unsqueeze-squeeze", "Unsqueeze",
         [](Node &n, PatternRewriter &rw) { return squeezePair(n, rw, false); });
  ps.add("transpose-chain", "Transpose", transposeChain);
  ps.add("cast-chain", "Cast", castChain);
  ps.add("add-zero", "Add", [](Node &n, PatternRewriter &rw) { return addZero(n, rw); });
  populateSimplifyChainPatterns(ps);
  populateTransposeMotionPatterns(ps);
  // After reshape-symbolic-shape: where inference names every dim, its
  // target stands as before.
  populateReshapeTargetPatterns(ps);
}

absl::StatusOr<bool> simplify(Model &m, RewriteStatistics *stats, llvm::StringRef disabled) {
  PatternSet ps;
  populateSimplifyPatterns(ps);
  if (!disabled.empty())
    if (absl::Status s = ps.disable(disabled); !s.ok()) return s;
  return applyPatternsGreedily(m, ps, {}, stats);
}

namespace {
class SimplifyPass : public NamedPass {
public:
  SimplifyPass()
      : NamedPass("simplify", "Remove no-op Reshape/Expand/Tile/Pad/Cast/Transpose/Slice/Concat/"
                              "Split/Flatten; collapse Reshape, Transpose, Cast, Squeeze/Unsqueeze, "
                              "Slice, idempotent and nested Concat chains; read Shape's dims "
                              "through Transpose/Reshape; Reshape/Expand targets computed from "
                              "Shape to constants (exact)") {}
  absl::StatusOr<bool> run(Model &m) override {
    RewriteStatistics s;
    auto r = simplify(m, &s, *disable_);
    if (!r.ok()) return r;
    if (absl::Status b = reportPatternBugs(s, [this](std::string w) { warn(std::move(w)); });
        !b.ok())
      return b;
    for (auto &[name, n] : s.applications) addStat(name, n);
    addStat("dead nodes erased", s.deadNodesErased);
    return r;
  }

private:
  Option<std::string> disable_{*this, "disable", "patterns not to apply (comma-separated names)",
                               "", "simplify-disable"};
};
} // namespace

std::unique_ptr<Pass> createSimplifyPass() { return std::make_unique<SimplifyPass>(); }

} // namespace onnxir
