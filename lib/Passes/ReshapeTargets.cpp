//===- ReshapeTargets.cpp - Computed Reshape/Expand targets to constants --===//
//
// Exporters write the target of a Reshape from the shape of a tensor:
// `x.view(*x.shape[:2], H, -1)` is Reshape(x, Concat(Slice(Shape(x)), H,
// -1)), `x.view(x.size(0), T, -1)` is Concat(Unsqueeze(Gather(Shape(x), 0)),
// ...). reshape-symbolic-shape (Simplify.cpp) replaces such a target when
// inference named every dim of the Reshape's result; the patterns here read
// the target's own structure instead, as onnxruntime's reshape fusion does,
// and so also work where inference cannot name a result dim (the -1 the
// model wrote itself, an input dim nothing names):
//   reshape-target-dims  Reshape(x, computed) -> Reshape(x, constant)
//   expand-target-dims   Expand(x, computed)  -> Expand(x, constant)
// The Shape/Gather/Unsqueeze/Concat chains left unused are then DCE's.
//
// Note [Dims of a computed target]
//  Each entry of the target is read through Concat, Unsqueeze and Squeeze
//  of one entry, Gather at constant indices, Slice with constant bounds and
//  step 1, and Shape(y) (with start/end) of a y of known rank: a constant,
//  dim j of some y, or unknown. Dim j of y becomes:
//   - its integer when y's type (or y, a constant) knows it;
//   - 0 in a Reshape without allowzero (copy the input's dim at that
//     position) when it is provably x's dim k at that position k: y is x
//     and j is k, or inference gave both the same symbol (a symbolic dim is
//     one value throughout the model at run time, IR/DimExpr.h);
//   - 1 in an Expand when it is provably x's dim aligned with it (from the
//     right): broadcasting x's dim d against d or against 1 gives d.
//  Either way the new target resolves to the very same dims at run time as
//  the computed one did: an entry that was 0 at run time copied the input's
//  dim, which was 0 too (allowzero = 0). Under allowzero = 1 a 0 is a
//  literal size, so no dim becomes a copy there.
//  A Reshape may keep one unknown entry as -1 (none of its own): then the
//  entry is the element count divided by the others, which is what it was
//  for any input the Reshape accepted, but only while the others multiply
//  to a positive count; so every other entry must be a known positive
//  integer (a copy may be 0 at run time, and -1 beside a 0 is ambiguous:
//  onnxruntime refuses it, where the computed target ran). A second unknown,
//  or an unknown beside the model's own -1, leaves the target as it is; so
//  does an unknown entry in an Expand.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Simplify.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxir {

namespace {

bool hasRefs(const Node &n) { return PatternRewriter::hasAttributeReferences(n); }

/// One entry of a computed 1-D integer tensor (Note [Dims of a computed
/// target]).
struct Entry {
  enum Kind : uint8_t { Constant, DimOf, Unknown } kind = Unknown;
  int64_t value = 0;           // Constant
  const Value *src = nullptr;  // DimOf: dim `dim` of `src`
  int64_t dim = -1;
};

/// The entries of an integer tensor of rank 0 or 1 (`rank`).
struct Entries {
  std::vector<Entry> e;
  int64_t rank = 1;
};

/// The single constant index or axis of `v`: its one integer.
std::optional<int64_t> oneInt(const Value *v) {
  auto c = v ? PatternRewriter::constantInts(v) : std::nullopt;
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0];
}

/// Entries of `v` known by its type only: each unknown.
std::optional<Entries> opaque(const Value *v) {
  int64_t r = staticRankOf(v);
  if (r == 0) return Entries{{Entry{}}, 0};
  int64_t len = r == 1 ? staticDimOf(v, 0) : -1;
  if (len < 0) return std::nullopt;
  return Entries{std::vector<Entry>(len), 1};
}

/// A bound of Shape's start/end or of a Slice on a length-`n` range: from
/// the end when negative, clamped into [0, n].
int64_t clampBound(int64_t b, int64_t n) {
  if (b < 0) b += n;
  return std::clamp<int64_t>(b, 0, n);
}

/// The entries of `v`, a 0-D or 1-D integer tensor, read through the nodes
/// that exporters build targets with; nullopt when even its length is not
/// known. `opset`: the graph's default-domain version.
std::optional<Entries> entriesOf(const Value *v, int64_t opset, int depth = 0) {
  if (!v) return std::nullopt;
  if (auto c = PatternRewriter::constantInts(v)) {
    int64_t r = staticRankOf(v);
    if (r > 1) return std::nullopt;
    Entries out{{}, r};
    for (int64_t x : *c) out.e.push_back(Entry{Entry::Constant, x, nullptr, -1});
    return out;
  }
  Node *d = v->definingNode();
  if (!d || depth > 16 || hasRefs(*d) || d->numResults() != 1) return opaque(v);
  auto inner = [&](unsigned i) {
    return i < d->numOperands() ? entriesOf(d->operand(i), opset, depth + 1) : std::nullopt;
  };

  if (d->is("Shape") && d->numOperands() == 1) {
    const Value *y = d->operand(0);
    int64_t r = staticRankOf(y);
    bool ranged = d->getAttr("start") || d->getAttr("end");
    if (r < 0 || (ranged && opset < firstVersionWithAttribute("Shape", "start"))) return opaque(v);
    NodeContext c(*d);
    int64_t s0 = clampBound(c.getInt("start", 0), r);
    int64_t e0 = d->getAttr("end") ? clampBound(c.getInt("end", r), r) : r;
    Entries out;
    for (int64_t j = s0; j < e0; ++j) out.e.push_back(Entry{Entry::DimOf, 0, y, j});
    return out;
  }

  // Slice(s, starts, ends[, axes[, steps]]): one range of a 1-D s.
  if (d->is("Slice") && opset >= firstVersionWithInput("Slice", "starts") &&
      d->numOperands() >= 3) {
    auto s = inner(0);
    auto b = oneInt(d->operand(1)), e = oneInt(d->operand(2));
    bool axis0 = d->numOperands() < 4 || !d->operand(3) ||
                 (oneInt(d->operand(3)) && (*oneInt(d->operand(3)) == 0 || *oneInt(d->operand(3)) == -1));
    bool step1 = d->numOperands() < 5 || !d->operand(4) || oneInt(d->operand(4)) == 1;
    if (s && s->rank == 1 && b && e && axis0 && step1) {
      int64_t n = (int64_t)s->e.size(), b0 = clampBound(*b, n), e0 = clampBound(*e, n);
      Entries out;
      for (int64_t k = b0; k < e0; ++k) out.e.push_back(s->e[k]);
      return out;
    }
    return opaque(v);
  }

  // Gather(s, constant indices) along s's only axis.
  if (d->is("Gather") && d->numOperands() == 2) {
    int64_t axis = NodeContext(*d).getInt("axis", 0);
    auto s = inner(0);
    auto idx = PatternRewriter::constantInts(d->operand(1));
    int64_t ir = staticRankOf(d->operand(1));
    if (s && s->rank == 1 && idx && ir <= 1 && (axis == 0 || axis == -1)) {
      int64_t n = (int64_t)s->e.size();
      Entries out{{}, ir};
      for (int64_t i : *idx) {
        if (i < -n || i >= n) return opaque(v);
        out.e.push_back(s->e[i < 0 ? i + n : i]);
      }
      return out;
    }
    return opaque(v);
  }

  // Unsqueeze of a scalar to [1], Squeeze of a [1] to a scalar.
  if (d->is("Unsqueeze") || d->is("Squeeze")) {
    bool unsq = d->is("Unsqueeze");
    NodeAxes a = readAxes(*d, PatternRewriter::constantTensor);
    bool axis0 = a.kind == NodeAxes::Known && a.values.size() == 1 &&
                 (a.values[0] == 0 || a.values[0] == -1);
    auto s = inner(0);
    if (s && s->e.size() == 1 && s->rank == (unsq ? 0 : 1) &&
        (axis0 || (!unsq && a.kind == NodeAxes::Absent)))
      return Entries{s->e, unsq ? 1 : 0};
    return opaque(v);
  }

  // Concat of 1-D pieces.
  if (d->is("Concat") && d->numOperands() >= 1) {
    int64_t axis = NodeContext(*d).getInt("axis", 1);
    if (axis != 0 && axis != -1) return opaque(v);
    Entries out;
    for (unsigned i = 0; i < d->numOperands(); ++i) {
      auto s = inner(i);
      if (!s || s->rank != 1) return opaque(v);
      out.e.insert(out.e.end(), s->e.begin(), s->e.end());
    }
    return out;
  }
  return opaque(v);
}

/// Dim `j` of `y` as a known integer (-1 when not known).
int64_t knownDim(const Value *y, int64_t j) { return staticDimOf(y, (unsigned)j); }

/// True if dim `j` of `y` is provably dim `k` of `x`: the same dim, or dims
/// inference gave the same symbol.
bool sameAs(const Value *y, int64_t j, const Value *x, int64_t k) {
  if (k < 0) return false;
  if (y == x && j == k) return true;
  Dim a = dimOf(y, j), b = dimOf(x, k);
  return a.isSymbolic() && sameDim(a, b);
}

/// How a near-miss report names `n`: its result's name.
std::string nameOf(const Node &n) {
  return n.numResults() && n.result(0) ? n.result(0)->name().str() : std::string("?");
}

// Note [Dims of a computed target].
bool reshapeTargetDims(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2 || hasRefs(n) || !n.operand(0) || !n.operand(1) ||
      rw.opsetVersion() < firstVersionWithInput("Reshape", "shape") ||
      PatternRewriter::constantTensor(n.operand(1)))
    return false;
  auto es = entriesOf(n.operand(1), rw.opsetVersion());
  if (!es || es->rank != 1 || es->e.empty()) return false;
  const Value *x = n.operand(0);
  bool allowZero = reshapeAllowsZero(n);
  int64_t xr = staticRankOf(x);
  std::vector<int64_t> shape;
  int64_t unknownAt = -1;
  bool minus = false, othersPositive = true;
  for (size_t k = 0; k < es->e.size(); ++k) {
    const Entry &e = es->e[k];
    int64_t v = e.kind == Entry::Constant ? e.value : -2;
    if (e.kind == Entry::DimOf) {
      v = knownDim(e.src, e.dim);
      if (v < 0 && !allowZero && (int64_t)k < xr && sameAs(e.src, e.dim, x, (int64_t)k)) v = 0;
      if (v < 0) v = -2;  // not known: as an unknown entry
    }
    if (v == -2) {
      if (unknownAt >= 0)
        return rw.rejected("two-unknown", "Reshape '" + nameOf(n) +
                                              "': target entries " + std::to_string(unknownAt) +
                                              " and " + std::to_string(k) + " are not known");
      unknownAt = (int64_t)k;
      shape.push_back(-1);
      continue;
    }
    if (v == -1) {
      if (minus) return false;  // two -1: invalid; left for the runtime to refuse
      minus = true;
    } else if (v < -1) {
      return false;
    }
    othersPositive &= v > 0;
    shape.push_back(v);
  }
  // (The model's own -1 is not a positive entry either.)
  if (unknownAt >= 0 && !othersPositive)
    return rw.rejected("unknown-entry", "Reshape '" + nameOf(n) + "': target entry " +
                                            std::to_string(unknownAt) +
                                            " is not known and another entry is not a known "
                                            "positive integer (-1 would be ambiguous)");
  Value *c = rw.createConstant(n.operand(1)->name().empty() ? "shape" : n.operand(1)->name().str(),
                               makeInt64Tensor({(int64_t)shape.size()}, shape));
  rw.setOperand(&n, 1, c);
  return true;
}

// Note [Dims of a computed target]: Expand's entries that are x's own dims
// become 1.
bool expandTargetDims(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 2 || hasRefs(n) || !n.operand(0) || !n.operand(1) ||
      PatternRewriter::constantTensor(n.operand(1)))
    return false;
  auto es = entriesOf(n.operand(1), rw.opsetVersion());
  const Value *x = n.operand(0);
  int64_t xr = staticRankOf(x);
  if (!es || es->rank != 1 || xr < 0) return false;
  int64_t len = (int64_t)es->e.size();
  std::vector<int64_t> shape;
  for (int64_t k = 0; k < len; ++k) {
    const Entry &e = es->e[k];
    if (e.kind == Entry::Constant) {
      shape.push_back(e.value);
      continue;
    }
    int64_t v = e.kind == Entry::DimOf ? knownDim(e.src, e.dim) : -1;
    if (v < 0 && e.kind == Entry::DimOf && sameAs(e.src, e.dim, x, k - (len - xr))) v = 1;
    if (v < 0) return false;
    shape.push_back(v);
  }
  Value *c = rw.createConstant(n.operand(1)->name().empty() ? "shape" : n.operand(1)->name().str(),
                               makeInt64Tensor({len}, shape));
  rw.setOperand(&n, 1, c);
  return true;
}

} // namespace

void populateReshapeTargetPatterns(PatternSet &ps) {
  ps.add("reshape-target-dims", "Reshape", reshapeTargetDims);
  ps.add("expand-target-dims", "Expand", expandTargetDims);
}

} // namespace onnxir
