//===- TransposeMotion.cpp - Layout rewrites of simplify ------------------===//
//
// Two exact simplify patterns (registered by populateSimplifyPatterns) that
// undo the layout changes exporters wrap around 2-D operators and
// sequence-first modules (nn.MultiheadAttention works on [S, B, E] and
// transposes its [B, S, E] input and output):
//
//  - reshape-gemm-matmul: Reshape(Gemm(Reshape(X [..., K] -> [N, K]), W, C)
//    -> X's leading dims + [M]) is Add(MatMul(X, W or Transpose(W)), C);
//  - transpose-cancel: a Transpose that keeps the last axis in place,
//    whose every use path runs through ops that act on the last axis only
//    and ends in the inverse Transpose, is removed with all those inverses
//    (the ops in between then work on the untransposed layout).
//
// Like the rest of simplify they use only what is known for sure:
// constants, attributes and the types values have (symbolic dims compared
// by name, one value throughout the model at run time).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Simplify.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>
#include <vector>

namespace onnxir {

namespace {

bool hasRefs(const Node &n) { return PatternRewriter::hasAttributeReferences(n); }

//===----------------------------------------------------------------------===//
// reshape-gemm-matmul
//===----------------------------------------------------------------------===//

/// The constant 2-D `t` transposed (element bytes moved, so exact for
/// every fixed-size element type), or nullopt.
std::optional<Tensor> transposed2D(const Tensor &t) {
  if (t.dims().size() != 2 || t.dims()[0] < 0 || t.dims()[1] < 0) return std::nullopt;
  auto bytes = t.bytes();
  if (!bytes.ok()) return std::nullopt;
  int64_t rows = t.dims()[0], cols = t.dims()[1], n = rows * cols;
  if (n == 0 || bytes->size() % (size_t)n) return std::nullopt;
  size_t es = bytes->size() / (size_t)n;
  if (es != 2 && es != 4 && es != 8) return std::nullopt;
  std::string out(bytes->size(), '\0');
  const char *in = bytes->data();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(&out[(size_t)(j * rows + i) * es], in + (size_t)(i * cols + j) * es, es);
  return makeTensor(t.dataType(), {cols, rows}, std::move(out));
}

// Reshape(Gemm(Reshape(X [d0..dk, K] -> [N, K]), W, C) -> [d0..dk, M]) ->
// Add(MatMul(X, W'), C), W' = W, or W's data transposed when transB = 1 (W
// then a constant that only this Gemm uses: a runtime Transpose of a big
// weight, which constant folding would not fold past its size limit, would
// cost more than the Reshapes), for alpha = beta = 1, transA = 0 and a C
// of rank 0 or 1 (or none: the MatMul alone). The inner Reshape
// flattens X's leading dims into rows (its result's dim 1 is X's last dim
// K, known and positive, so N is their product) and the outer one gives
// them back (its dims are X's leading dims, then M), so row n of the Gemm
// is element (d0..dk) of the MatMul, in the same order. Gemm computes
// A·B + C, MatMul and Add the same products and the same final addition
// (the contract of fuse-matmul-add, which makes Gemm of 2-D MatMul + Add:
// X here has rank 3 or more, so nothing turns it back). Exact.
bool reshapeGemmMatMul(Node &outer, PatternRewriter &rw) {
  // Gemm and Add without the legacy broadcast attribute.
  if (outer.numOperands() != 2 || outer.numResults() != 1 || hasRefs(outer) ||
      rw.opsetVersion() < firstVersionWithoutAttribute("Gemm", "broadcast"))
    return false;
  Node *gemm = rw.singleUseProducer(outer, 0, "Gemm");
  if (!gemm || hasRefs(*gemm) || gemm->numOperands() < 2 || gemm->numResults() != 1) return false;
  Node *inner = rw.singleUseProducer(*gemm, 0, "Reshape");
  if (!inner || inner->numOperands() != 2 || hasRefs(*inner)) return false;
  NodeContext g(*gemm);
  Value *c = gemm->numOperands() > 2 ? gemm->operand(2) : nullptr;
  if (g.getFloat("alpha", 1.0f) != 1.0f || (c && g.getFloat("beta", 1.0f) != 1.0f) ||
      g.getInt("transA", 0) != 0)
    return false;
  bool transB = g.getInt("transB", 0) != 0;
  Value *x = inner->operand(0), *w = gemm->operand(1), *y = outer.result(0);
  const Type *xt = tensorType(x), *yt = tensorType(y);
  int64_t r = staticRankOf(x);
  if (!xt || !yt || r < 3 || staticRankOf(inner->result(0)) != 2 || staticRankOf(w) != 2 || yt->rank() != r ||
      (c && (staticRankOf(c) < 0 || staticRankOf(c) > 1)) || !xt->hasElemType())
    return false;
  Dim k = dimOf(x, -1);
  if (!k.isKnown() || k.value <= 0 || !sameDim(dimOf(inner->result(0), 1), k)) return false;
  Dim m = dimOf(w, transB ? 0 : 1);
  for (int64_t i = 0; i + 1 < r; ++i)
    if (!sameDim(dimOf(y, i), dimOf(x, i))) return false;
  if (!sameDim(dimOf(y, -1), m)) return false;
  std::optional<Tensor> wt;
  if (transB) {
    const Tensor *t = PatternRewriter::constantTensor(w);
    if (!t || !PatternRewriter::hasSingleLocalUse(w) || !(wt = transposed2D(*t))) return false;
  }

  if (wt) w = rw.createConstant(w->name().str() + "_t", std::move(*wt));
  Node *mm = rw.create("MatMul", {x, w});
  PatternRewriter::copyNodeInfo(*gemm, *mm);
  mm->result(0)->setType(yt);
  Value *out = mm->result(0);
  if (c) {
    Node *add = rw.create("Add", {out, c});
    add->result(0)->setType(yt);
    out = add->result(0);
  }
  return rw.replaceNode(&outer, {out});
}

//===----------------------------------------------------------------------===//
// transpose-cancel
//===----------------------------------------------------------------------===//

/// The axis attribute of `n` normalized for rank `r` (nullopt if invalid);
/// absent, the schema's default (Softmax's moved from 1 to -1 at 13).
std::optional<int64_t> axisAttr(const Node &n, int64_t r) {
  int64_t a = NodeContext(n).getInt("axis", 0);
  if (a < 0) a += r;
  if (a < 0 || a >= r) return std::nullopt;
  return a;
}

/// True if `n`, with the operands in `moved` transposed by a permutation
/// of the leading axes (of rank `r`), computes its results transposed the
/// same way: it acts on the last axis only (Note [Transpose motion]). What
/// an op does comes from its registry entry (Note [Op facts]).
bool actsOnLastAxis(const Node &n, const llvm::DenseSet<const Value *> &moved, int64_t r) {
  if (hasRefs(n) || n.isReturn() || n.numResults() < 1) return false;
  const OpEntry *e = OpRegistry::get().lookup(n);
  if (!e) return false;
  auto isMoved = [&](unsigned i) { return i < n.numOperands() && n.operand(i) && moved.count(n.operand(i)); };
  if (e->elementwise) {
    // The legacy broadcast/axis attributes broadcast otherwise; an operand
    // that is not moved must broadcast along the last axis alone.
    if (n.numResults() != 1 || n.getAttr("broadcast") || n.getAttr("axis")) return false;
    for (unsigned i = 0; i < n.numOperands(); ++i) {
      const Value *o = n.operand(i);
      if (!o || moved.count(o)) continue;
      int64_t ro = staticRankOf(o);
      if (!e->broadcasting || ro < 0 || ro > 1) return false;
    }
    return true;
  }
  if (e->axis == AxisFact::None || !isMoved(0)) return false;
  // Only the data operand is moved; the others hold no leading axes: index
  // lists, scales and biases of rank <= 1 (their schemas say so), the
  // [K, M] matrix a last-axis op (MatMul) applies to each row, known to be
  // 2-D (a batched one would pair rows with matrices by the leading axes).
  bool lastAxis = e->axis == AxisFact::LastAxis;
  for (unsigned i = 1; i < n.numOperands(); ++i) {
    if (!n.operand(i)) continue;
    if (isMoved(i)) return false;
    int64_t ro = staticRankOf(n.operand(i));
    if (lastAxis ? ro != 2 : ro > 1) return false;
  }
  switch (e->axis) {
  case AxisFact::LastAxis:
    return true;
  case AxisFact::AxisAttribute: {
    auto a = axisAttr(n, r);
    return a && *a == r - 1;
  }
  case AxisFact::AxesList: { // only along explicit last-axis axes
    NodeAxes axes = readAxes(n, PatternRewriter::constantTensor);
    if (axes.kind != NodeAxes::Known || axes.values.empty()) return false;
    for (int64_t a : axes.values)
      if ((a < 0 ? a + r : a) != r - 1) return false;
    return true;
  }
  case AxisFact::None:
    break;
  }
  return false;
}

// Note [Transpose motion]
//   transpose-cancel: y = Transpose(x, Q) with Q[r-1] = r-1 (the last axis
//   stays; the leading ones are permuted). An op that acts on the last axis
//   only is equivariant under permutations of the leading ones:
//   f(Transpose(a, Q)) = Transpose(f(a), Q). The registry says which do
//   (Note [Op facts], OpRegistry.h): elementwise ops, whose other operands
//   then have rank 0 or 1 and broadcast along the last axis alone; ops along
//   operand 0's last axis (a MatMul by a 2-D matrix: each row on its own);
//   ops along their `axis` attribute or `axes` list when it names the last
//   axis (Split, Slice, the softmaxes, the normalizations; their other
//   operands of rank <= 1). So when every use path from y runs through such
//   ops and ends in Transpose(., P) with P the inverse of Q,
//   those ops may work on x directly: y and every inverse go away, and
//   the values in between are the same elements in x's layout (their
//   types' dims permuted by P). Exact: each op computes the same elements
//   from the same elements. A Shape of y or of a value between becomes
//   Gather(Shape(its new layout), Q[start:end]) (the old dims are the new
//   ones permuted by Q), which constant folding and the shape chains'
//   rules take from there. Any other use (a graph output, a use in a
//   subgraph) stops it; so does a path that ends in y's inverse directly
//   (transpose-chain's case).
bool transposeCancel(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 1 || root.numResults() != 1 || hasRefs(root)) return false;
  const Attribute *pa = root.getAttr("perm");
  if (!pa) return false;
  const std::vector<int64_t> &q = pa->ints;
  int64_t r = (int64_t)q.size();
  if (r < 3 || q[r - 1] != r - 1 || staticRankOf(root.operand(0)) != r) return false;
  std::vector<int64_t> p(r, -1); // p = q^-1
  for (int64_t i = 0; i < r; ++i) {
    if (q[i] < 0 || q[i] >= r || p[q[i]] != -1) return false;
    p[q[i]] = i;
  }
  bool identity = true;
  for (int64_t i = 0; i < r; ++i) identity &= q[i] == i;
  if (identity) return false;
  Value *x = root.operand(0), *y = root.result(0);
  Graph *graph = root.getGraph();

  // The moved values, the ops between, the inverse Transposes.
  constexpr size_t kMaxMoved = 256;
  std::vector<Value *> moved{y};
  llvm::DenseSet<const Value *> movedSet{y};
  std::vector<Node *> between, ends, shapes;
  llvm::DenseSet<const Node *> seen;
  for (size_t i = 0; i < moved.size(); ++i) {
    Value *v = moved[i];
    if (v->isGraphOutput() || staticRankOf(v) != r || !tensorType(v)->hasElemType()) return false;
    for (const Use &u : v->uses()) {
      Node *n = u.getOwner();
      if (!n || n->isReturn() || n->getGraph() != graph) return false;
      if (!seen.insert(n).second) continue;
      if (n->is("Shape") && n->numOperands() == 1 && n->numResults() == 1 && !hasRefs(*n) &&
          !n->result(0)->isGraphOutput()) {
        shapes.push_back(n);
        continue;
      }
      if (n->is("Transpose") && n->numOperands() == 1 && !hasRefs(*n)) {
        const Attribute *e = n->getAttr("perm");
        if (!e || (int64_t)e->ints.size() != r) return false;
        bool inverse = true;
        for (int64_t j = 0; j < r; ++j) inverse &= e->ints[j] == p[j];
        if (!inverse || v == y) return false;
        ends.push_back(n);
        continue;
      }
      between.push_back(n);
      for (unsigned j = 0; j < n->numResults(); ++j)
        if (Value *res = n->result(j); res && movedSet.insert(res).second) moved.push_back(res);
      if (moved.size() > kMaxMoved) return false;
    }
  }
  if (ends.empty()) return false;
  for (Node *n : between)
    if (!actsOnLastAxis(*n, movedSet, r)) return false;

  // New types: dims permuted by p; a value taking a graph output's place
  // takes its type (the declared one).
  Context &ctx = rw.getModel().getContext();
  llvm::DenseMap<const Value *, const Type *> newType;
  for (Value *v : moved) {
    if (v == y) continue;
    const Type *t = tensorType(v);
    std::vector<Dim> dims;
    for (int64_t j = 0; j < r; ++j) dims.push_back(t->dims()[p[j]]);
    newType[v] = ctx.getTensorType(t->elemType(), llvm::ArrayRef<Dim>(dims));
  }
  llvm::DenseSet<const Value *> pinned;
  for (Node *e : ends) {
    Value *in = e->operand(0), *out = e->result(0);
    if (!out->isGraphOutput() || out->useEmpty()) continue;
    // `in` takes the output's place: two outputs cannot both be `in` (one
    // would keep the old layout's name on the new layout's value).
    if (!pinned.insert(in).second) return false;
    const Type *ot = out->type();
    if (!ot || newType[in] == ot) continue;
    const Type *it = tensorType(in);
    if (!ot->isTensor() || ot->rank() != r || !ot->hasElemType() || ot->elemType() != it->elemType())
      return false;
    for (int64_t j = 0; j < r; ++j) // the declared dims may name less, not differ
      if (ot->dims()[j].isKnown() && !sameDim(ot->dims()[j], it->dims()[p[j]]) &&
          it->dims()[p[j]].isKnown())
        return false;
    newType[in] = ot;
  }

  // Rewrite.
  for (Value *v : moved)
    if (v != y) v->setType(newType[v]);
  for (Node *n : between) rw.modified(n);
  std::vector<std::pair<Node *, unsigned>> uses;
  for (const Use &u : y->uses()) uses.push_back({u.getOwner(), u.getOperandNo()});
  for (auto &[n, i] : uses) rw.setOperand(n, i, x);
  for (Node *sh : shapes) { // Shape-15's start/end, clamped
    NodeContext c(*sh);
    auto clamp = [&](int64_t a) { return a < 0 ? std::max<int64_t>(a + r, 0) : std::min(a, r); };
    int64_t start = clamp(c.getInt("start", 0)), end = clamp(c.getInt("end", r));
    std::vector<int64_t> idx;
    for (int64_t i = start; i < end; ++i) idx.push_back(q[i]);
    rw.setInsertionPoint(sh);
    Node *whole = rw.create("Shape", {sh->operand(0)});
    whole->result(0)->setType(ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{r}));
    Value *at = rw.createConstant(sh->result(0)->name().str() + "_perm",
                                  makeInt64Tensor({(int64_t)idx.size()}, idx));
    Node *g = rw.create("Gather", {whole->result(0), at});
    g->setAttr(intAttr("axis", 0));
    PatternRewriter::copyNodeInfo(*sh, *g);
    g->result(0)->setType(
        ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{(int64_t)idx.size()}));
    bool ok = rw.replaceNode(sh, {g->result(0)});
    (void)ok;
    assert(ok && "not a graph output");
  }
  for (Node *e : ends) {
    bool ok = rw.replaceNode(e, {e->operand(0)});
    (void)ok;
    assert(ok && "checked: a graph output's replacement has its type");
  }
  rw.eraseNode(&root);
  return true;
}

} // namespace

void populateTransposeMotionPatterns(PatternSet &ps) {
  ps.add("reshape-gemm-matmul", "Reshape", reshapeGemmMatMul);
  ps.add("transpose-cancel", "Transpose", transposeCancel);
}

} // namespace onnxir
