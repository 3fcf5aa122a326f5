//===- SimplifyChains.cpp - More exact chains for simplify ----------------===//
//
// The chains and no-ops onnxoptimizer removes that simplify did not
// (issue 47): Squeeze and Unsqueeze chains merged, Slices on disjoint axes
// merged, idempotent ops applied twice, nested Concats on one axis, a
// reduction without keepdims re-expanded by Unsqueeze, Where of a Not, a
// Flatten to the shape its input has. Like the patterns of Simplify.cpp,
// every one is exact: the result is bit for bit the unsimplified one, and
// only what is known for sure (constants, attributes, static ranks and
// shapes) is used. Graph outputs keep their names and types.
//
// Note [No monotone op before ArgMax]
//  onnxoptimizer drops an increasing op (Exp, Log, Sigmoid, Tanh, Softmax
//  on the same axis, ...) before ArgMax/ArgMin, which holds for real
//  numbers but not for their rounded results: distinct inputs close to the
//  maximum round to one output (exp(m - 1e-10) == exp(m) in float;
//  Sigmoid and Tanh saturate to 1, Exp to inf), and the tie then goes to
//  the first index, which need not be the maximum's. No such op is
//  injective on floats, so that rewrite is not exact and is not done.
//  Slices on one axis merge only with step 1 and the dim known
//  (slice-chain): a negative bound counts from the end of a different
//  length in each, and clamping needs the length.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Passes/Simplify.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpSchema.h"

#include <algorithm>
#include <optional>

namespace onnxir {

namespace {

bool hasRefs(const Node &n) { return PatternRewriter::hasAttributeReferences(n); }

/// `axes` made non-negative against `rank` (-1: unknown, then negative axes
/// are not known), sorted; nullopt if one is out of range or repeated.
std::optional<std::vector<int64_t>> normAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes) {
    if (a < 0) {
      if (rank < 0) return std::nullopt;
      a += rank;
    }
    if (a < 0 || (rank >= 0 && a >= rank)) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

/// The explicit (non-empty, constant) axes of `n` (Note [Axes: attribute or
/// operand], Ops/OpFacts.h).
std::optional<NodeAxes> explicitAxes(const Node &n) {
  if (hasRefs(n)) return std::nullopt;
  NodeAxes a = readAxes(n, PatternRewriter::constantTensor);
  if (a.kind != NodeAxes::Known || a.values.empty()) return std::nullopt;
  return a;
}

/// Gives `n` the axes `axes` in the form `form` says it takes them.
void setAxes(Node &n, const NodeAxes &form, const std::vector<int64_t> &axes,
             PatternRewriter &rw) {
  if (form.fromOperand) {
    Value *c = rw.createConstant("axes", makeInt64Tensor({(int64_t)axes.size()}, axes));
    rw.setOperand(&n, (unsigned)form.operand, c);
  } else {
    n.setAttr(intsAttr("axes", axes));
    rw.modified(&n);
  }
}

/// Replaces the single result of `n` by `v`, erasing `n`.
bool forward(Node &n, Value *v, PatternRewriter &rw) {
  if (n.numResults() != 1 || !n.result(0) || !v || n.result(0)->useEmpty()) return false;
  return rw.replaceNode(&n, {v});
}

// Squeeze(Squeeze(x, a), b) -> Squeeze(x, a + b read in x's axes), and
// Unsqueeze(Unsqueeze(x, a), b) -> Unsqueeze(x, b + a read in the final
// axes). Both axes explicit; negative ones need the rank of x. Exact: the
// same dims of size 1 leave (or arrive) at the same places.
bool squeezeChain(Node &n, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(n, 0, "Squeeze");
  if (!inner) return false;
  auto oa = explicitAxes(n), ia = explicitAxes(*inner);
  if (!oa || !ia || !inner->operand(0)) return false;
  int64_t r = staticRankOf(inner->operand(0));
  auto a = normAxes(ia->values, r);
  if (!a) return false;
  auto b = normAxes(oa->values, r < 0 ? -1 : r - (int64_t)a->size());
  if (!b) return false;
  // Intermediate axis p is the p-th axis of x that the inner one kept.
  std::vector<int64_t> all = *a;
  for (int64_t p : *b) {
    int64_t kept = -1, x = 0;
    for (;; ++x)
      if (!std::binary_search(a->begin(), a->end(), x) && ++kept == p) break;
    all.push_back(x);
  }
  std::sort(all.begin(), all.end());
  if (r >= 0 && all.back() >= r) return false;
  setAxes(n, *oa, all, rw);
  rw.setOperand(&n, 0, inner->operand(0));
  return true;
}

bool unsqueezeChain(Node &n, PatternRewriter &rw) {
  Node *inner = rw.singleUseProducer(n, 0, "Unsqueeze");
  if (!inner) return false;
  auto oa = explicitAxes(n), ia = explicitAxes(*inner);
  if (!oa || !ia || !inner->operand(0)) return false;
  int64_t r = staticRankOf(inner->operand(0));
  int64_t mid = r < 0 ? -1 : r + (int64_t)ia->values.size();
  auto a = normAxes(ia->values, mid);
  auto b = normAxes(oa->values, mid < 0 ? -1 : mid + (int64_t)oa->values.size());
  if (!a || !b) return false;
  // Intermediate axis p lands on the p-th final axis the outer one did not
  // insert.
  std::vector<int64_t> all = *b;
  for (int64_t p : *a) {
    int64_t kept = -1, x = 0;
    for (;; ++x)
      if (!std::binary_search(b->begin(), b->end(), x) && ++kept == p) break;
    all.push_back(x);
  }
  std::sort(all.begin(), all.end());
  setAxes(n, *oa, all, rw);
  rw.setOperand(&n, 0, inner->operand(0));
  return true;
}

// Flatten(x, axis) of an x of rank 2 whose result has x's shape: axis 1
// always, axis 0 or 2 when the dim that gets a 1 beside it is 1 already.
// Exact (a Flatten only reshapes).
bool flattenNoop(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || !n.operand(0) || hasRefs(n)) return false;
  Value *x = n.operand(0);
  if (staticRankOf(x) != 2) return false;
  int64_t axis = NodeContext(n).getInt("axis", 1);
  if (axis < 0) axis += 2;
  bool same = axis == 1 || (axis == 0 && staticDimOf(x, 0) == 1) ||
              (axis == 2 && staticDimOf(x, 1) == 1);
  return same && forward(n, x, rw);
}

// f(f(x)) -> f(x) for an idempotent elementwise f: every value f gives is
// one f leaves as it is (Relu: >= 0; Floor, Ceil, Round: integers, infinities
// and NaN; Sign: -1, 0, 1; Abs: >= 0). Exact. The inner f may have other uses.
bool idempotent(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || !n.operand(0) || hasRefs(n)) return false;
  Node *inner = n.operand(0)->definingNode();
  if (!inner || inner->getGraph() != n.getGraph() || inner->opType() != n.opType() ||
      inner->domain() != n.domain() || inner->numResults() != 1 || hasRefs(*inner))
    return false;
  return forward(n, n.operand(0), rw);
}

// Where(Not(c), a, b) -> Where(c, b, a), the Not used once. Exact.
bool whereNot(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 3) return false;
  Node *no = rw.singleUseProducer(n, 0, "Not");
  if (!no || no->numOperands() != 1 || !no->operand(0)) return false;
  Value *c = no->operand(0), *a = n.operand(1), *b = n.operand(2);
  rw.setOperand(&n, 0, c);
  rw.setOperand(&n, 1, b);
  rw.setOperand(&n, 2, a);
  return true;
}

// Concat(.., Concat(p, q, axis = k), .., axis = k) -> Concat(.., p, q, ..),
// the inner one used once, the axes the same once normalised (negative ones
// against the known rank). Exact: the same pieces in the same order.
bool concatNested(Node &n, PatternRewriter &rw) {
  if (hasRefs(n) || !n.getAttr("axis") || n.numResults() != 1) return false;
  int64_t rank = staticRankOf(n.result(0));
  for (unsigned i = 0; i < n.numOperands() && rank < 0; ++i) rank = staticRankOf(n.operand(i));
  auto axisOf = [&](const Node &c) -> std::optional<int64_t> {
    int64_t a = NodeContext(c).getInt("axis", 0);
    if (a < 0) {
      if (rank < 0) return std::nullopt;
      a += rank;
    }
    return a;
  };
  auto axis = axisOf(n);
  if (!axis) return false;
  std::vector<Value *> ops;
  bool merged = false;
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    Node *in = rw.singleUseProducer(n, i, "Concat");
    if (in && !hasRefs(*in) && in->getAttr("axis") && in->numOperands() > 0 &&
        axisOf(*in) == axis) {
      for (unsigned j = 0; j < in->numOperands(); ++j) ops.push_back(in->operand(j));
      merged = true;
    } else {
      ops.push_back(n.operand(i));
    }
  }
  if (!merged) return false;
  for (Value *v : ops)
    if (!v) return false;
  for (unsigned i = 0; i < ops.size(); ++i) rw.setOperand(&n, i, ops[i]);
  return true;
}

// Unsqueeze(ReduceX(x, axes a, keepdims = 0), a) -> ReduceX(x, a,
// keepdims = 1), the reduction used once, the axes the same once
// normalised (both count in x's rank). Exact: the same values, the reduced
// dims kept as 1 where the Unsqueeze put them back.
bool reduceUnsqueeze(Node &n, PatternRewriter &rw) {
  if (n.numOperands() < 1 || !n.operand(0) || n.numResults() != 1 || !n.result(0)) return false;
  // A reduction: its schema has `keepdims` and `axes` (attribute or
  // operand), as the Reduce* ops have.
  Node *red = n.operand(0)->definingNode();
  const OpSchema *s = red ? schemaFor(*red) : nullptr;
  if (!s || !s->attribute("keepdims") || (!s->attribute("axes") && !s->input("axes")))
    return false;
  red = rw.singleUseProducer(n, 0, red->opType());
  if (!red || red->numResults() != 1 || !red->operand(0)) return false;
  auto ua = explicitAxes(n), ra = explicitAxes(*red);
  if (!ua || !ra || NodeContext(*red).getInt("keepdims", 1) != 0) return false;
  int64_t r = staticRankOf(red->operand(0));
  auto a = normAxes(ra->values, r), b = normAxes(ua->values, r);
  if (!a || !b || *a != *b) return false;
  // The reduction's result takes the Unsqueeze's type (its rank with
  // keepdims = 1): canReplace compares it with a graph output's.
  const Type *old = red->result(0)->type();
  red->result(0)->setType(n.result(0)->type());
  if (!rw.canReplace(n.result(0), red->result(0))) {
    red->result(0)->setType(old);
    return false;
  }
  red->setAttr(intAttr("keepdims", 1));
  rw.modified(red);
  return rw.replaceNode(&n, {red->result(0)});
}

/// The constant starts, ends, axes and steps of an operand-form Slice
/// (axes absent: 0 .. n-1, steps absent: ones).
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};
std::optional<SliceArgs> sliceArgs(const Node &s) {
  if (s.numOperands() < 3 || s.numOperands() > 5 || !s.operand(1) || !s.operand(2) ||
      hasRefs(s))
    return std::nullopt;
  auto st = constantInts(s.operand(1)), en = constantInts(s.operand(2));
  if (!st || !en || st->size() != en->size()) return std::nullopt;
  SliceArgs a{*st, *en, {}, std::vector<int64_t>(st->size(), 1)};
  if (s.numOperands() > 3 && s.operand(3)) {
    auto ax = constantInts(s.operand(3));
    if (!ax) return std::nullopt;
    a.axes = *ax;
  } else {
    for (size_t i = 0; i < st->size(); ++i) a.axes.push_back((int64_t)i);
  }
  if (s.numOperands() > 4 && s.operand(4)) {
    auto sp = constantInts(s.operand(4));
    if (!sp) return std::nullopt;
    a.steps = *sp;
  }
  if (a.axes.size() != st->size() || a.steps.size() != st->size()) return std::nullopt;
  return a;
}

/// The range [start, end) that a step-1 Slice entry keeps of a dim of size
/// `d`: negative bounds count from the end, then both are clamped to
/// [0, d]; end below start keeps nothing.
std::pair<int64_t, int64_t> unitRange(int64_t start, int64_t end, int64_t d) {
  auto clampTo = [d](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + d : v, 0, d); };
  int64_t b = clampTo(start), e = clampTo(end);
  return {b, std::max(b, e)};
}

// Slice(Slice(x, s1, e1, a1, p1), s2, e2, a2, p2) -> one Slice. Axes named
// by one of them only (negative ones against x's known rank) keep their
// entries: slicing one axis does not change the others. An axis both name
// is merged only with step 1 in both and x's dim there known: the inner
// range [b1, f1) of the dim, then the outer range [b2, f2) of its length,
// is [b1 + b2, b1 + f2). Operand form only (opset 10 on). Exact.
bool sliceChain(Node &n, PatternRewriter &rw) {
  if (rw.opsetVersion() < firstVersionWithInput("Slice", "starts")) return false;
  Node *inner = rw.singleUseProducer(n, 0, "Slice");
  if (!inner || !inner->operand(0)) return false;
  auto o = sliceArgs(n), i = sliceArgs(*inner);
  if (!o || !i) return false;
  Value *x = inner->operand(0);
  int64_t r = staticRankOf(x);
  if (!normAxes(i->axes, r) || !normAxes(o->axes, r)) return false; // repeats, range
  auto axisAt = [r](int64_t a) { return a < 0 ? a + r : a; };
  SliceArgs m = *i;
  for (size_t k = 0; k < o->axes.size(); ++k) {
    int64_t a = axisAt(o->axes[k]);
    size_t j = 0;
    while (j < m.axes.size() && axisAt(m.axes[j]) != a) ++j;
    if (j == m.axes.size()) {
      m.starts.push_back(o->starts[k]);
      m.ends.push_back(o->ends[k]);
      m.axes.push_back(o->axes[k]);
      m.steps.push_back(o->steps[k]);
      continue;
    }
    int64_t d = staticDimOf(x, (unsigned)a);
    if (d < 0 || m.steps[j] != 1 || o->steps[k] != 1) return false;
    auto [b1, f1] = unitRange(m.starts[j], m.ends[j], d);
    auto [b2, f2] = unitRange(o->starts[k], o->ends[k], f1 - b1);
    m.starts[j] = b1 + b2;
    m.ends[j] = b1 + f2;
  }
  std::vector<int64_t> *lists[4] = {&m.starts, &m.ends, &m.axes, &m.steps};
  static const char *const kNames[4] = {"starts", "ends", "axes", "steps"};
  std::vector<Value *> vals;
  for (unsigned k = 0; k < 4; ++k)
    vals.push_back(rw.createConstant(kNames[k], makeInt64Tensor({(int64_t)lists[k]->size()},
                                                                *lists[k])));
  rw.setOperand(&n, 0, x);
  for (unsigned k = 0; k < 4; ++k) rw.setOperand(&n, k + 1, vals[k]);
  return true;
}

} // namespace

void populateSimplifyChainPatterns(PatternSet &ps) {
  ps.add("squeeze-chain", "Squeeze", squeezeChain);
  ps.add("unsqueeze-chain", "Unsqueeze", unsqueezeChain);
  ps.add("flatten-noop", "Flatten", flattenNoop);
  // Idempotence is no registry fact: one pattern per op.
  ps.add("idempotent-relu", "Relu", idempotent);
  ps.add("idempotent-floor", "Floor", idempotent);
  ps.add("idempotent-ceil", "Ceil", idempotent);
  ps.add("idempotent-round", "Round", idempotent);
  ps.add("idempotent-sign", "Sign", idempotent);
  ps.add("idempotent-abs", "Abs", idempotent);
  ps.add("where-not", "Where", whereNot);
  ps.add("concat-nested", "Concat", concatNested);
  ps.add("reduce-unsqueeze", "Unsqueeze", reduceUnsqueeze);
  ps.add("slice-chain", "Slice", sliceChain);
}

} // namespace onnxir
