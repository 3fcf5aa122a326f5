//===- ControlFlow.cpp - If, Loop, Scan, SequenceMap ----------------------===//
//
// The control-flow family: operators whose results come from subgraphs.
// Their type rules infer the subgraphs themselves, through InferCtx's
// subgraph calls (the engine in lib/Passes/ShapeInference.cpp runs the
// walks, keeps speculative runs apart and budgets them):
//  - If: both branches; the results merge them (equal dims stay, different
//    dims become a fresh symbol), or take the branch a known condition picks;
//  - Loop: the body's carried types iterated to a fixed point (dims that
//    change between iterations widen to unknown), scan outputs get the
//    iteration count in front;
//  - Scan (opset 9 on, and the batched form before 9): the body sees one
//    slice of each scan input, scan outputs get the sequence length back;
//  - SequenceMap: the body sees one element of each sequence operand.
// None has a kernel: the folder leaves nodes with subgraphs alone (a
// constant If condition is the fold-constants pass's own rewrite). One
// section per op: its rule, its version adapters and its registration
// (registerControlFlowOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "AdapterSupport.h"
#include "Families.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Context.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

namespace {

using namespace infer;

/// The type both `a` and `b` are instances of, dim by dim through
/// `dim(x, y)` (denotations dropped); null when their kinds or element
/// types differ.
template <typename DimFn>
const Type *join(Context &ctx, const Type *a, const Type *b, DimFn &&dim) {
  if (!a || !b) return nullptr;
  if (a == b) return a;
  if (a->kind() != b->kind()) return nullptr;
  TypeSpec s;
  s.kind = a->kind();
  switch (a->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (!a->hasElemType() || !b->hasElemType() || a->elemTypeRaw() != b->elemTypeRaw())
      return nullptr;
    s.hasElem = true;
    s.elem = a->elemTypeRaw();
    if (a->hasShape() && b->hasShape() && a->rank() == b->rank()) {
      s.hasShape = true;
      for (size_t k = 0; k < a->dims().size(); ++k) {
        Dim x = a->dims()[k], y = b->dims()[k];
        x.denotation = {};
        y.denotation = {};
        s.dims.push_back(dim(x, y));
        s.dims.back().denotation = {};
      }
    }
    return ctx.getType(s);
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    s.inner = join(ctx, a->elementType(), b->elementType(), dim);
    if (!s.inner) return nullptr;
    return ctx.getType(s);
  default:
    return nullptr;
  }
}

/// The subgraph `n` holds as attribute `name`; null when absent or a
/// reference to a function's attribute (bound at a call: nothing to infer
/// here, and no graph to read).
Graph *graphAttr(const Node &n, llvm::StringRef name) {
  const Attribute *a = n.getAttr(name);
  return a && !a->isReference() && a->kind() == AttrKind::Graph ? a->graph() : nullptr;
}

//===--- If ---===//

/// The type both branches of an If can produce: equal dims stay, differing
/// ones become a fresh symbol (one unknown dim, not a claim they agree).
const Type *mergeBranches(Context &ctx, const Type *a, const Type *b) {
  return join(ctx, a, b, [&](const Dim &x, const Dim &y) {
    if (x == y && !x.isSymbolic() ? x.isKnown() : (x.isSymbolic() && x.param == y.param)) return x;
    if (!x.isKnown() && !x.isSymbolic() && !y.isKnown() && !y.isSymbolic()) return Dim::unknown();
    return ctx.freshSymbolDim();
  });
}

void ifRule(InferCtx &c) {
  Node &n = c.node;
  Graph *a = graphAttr(n, "then_branch"), *b = graphAttr(n, "else_branch");
  if (!a || !b) return;
  if (!c.inferBody(*a) || !c.inferBody(*b)) return;
  // A condition whose value is known selects one branch.
  int taken = -1;
  if (const Dims *d = c.inData(0); d && d->size() == 1 && (*d)[0] && (*d)[0]->isConstant())
    taken = (*d)[0]->value() != 0 ? 0 : 1;
  for (unsigned i = 0; i < n.numResults() && i < a->numOutputs() && i < b->numOutputs(); ++i) {
    const Type *ta = c.typeOf(a->output(i)), *tb = c.typeOf(b->output(i));
    c.setOutType(i, taken == 0 ? ta : taken == 1 ? tb : mergeBranches(c.ctx, ta, tb));
    Value *src = taken == 0 ? a->output(i) : taken == 1 ? b->output(i) : nullptr;
    if (src)
      if (const Dims *d = c.dataOf(src)) c.setOutData(i, *d);
  }
}

void registerIf(OpRegistrar &r) { r["If"].infer(ifRule).infersSubgraphs(); }

//===--- Loop ---===//

/// The most precise type that both a and b are instances of, with unknown
/// where they differ (loop widening).
const Type *widen(Context &ctx, const Type *a, const Type *b) {
  return join(ctx, a, b, [](const Dim &x, const Dim &y) {
    bool same = (x.isKnown() && y.isKnown() && x.value == y.value) ||
                (x.isSymbolic() && y.isSymbolic() && x.param == y.param);
    return same ? x : Dim::unknown();
  });
}

/// Note [Sequences carried through a Loop]
/// A sequence (or an optional one) carried through a Loop may gain an
/// element of another shape on every iteration (SequenceInsert of a slice
/// whose length is the iteration count), and the body's own declarations
/// describe one iteration as its writer saw it: ONNX's test_loop16_seq_none
/// declares sequences of scalars where the body inserts 1-D slices, and a
/// declaration is believed where inference knows less (Note [Merging
/// inferred and declared types]), so the fixed point took the false
/// scalars as stable. The Loop's result keeps only the element type of a
/// carried sequence, as ONNX's Loop rule does; tensors carried through the
/// loop keep their fixed point.
const Type *shapelessElements(Context &ctx, const Type *t) {
  if (!t) return t;
  if (t->kind() == Type::Kind::Optional) {
    const Type *in = shapelessElements(ctx, t->elementType());
    return in ? ctx.getOptionalType(in) : nullptr;
  }
  if (t->kind() != Type::Kind::Sequence) return t;
  const Type *e = t->elementType();
  if (!e || !e->isTensor() || !e->hasElemType()) return t;
  return ctx.getSequenceType(ctx.getTensorType(e->elemType(), kUnknownRank));
}

/// widen for a loop-carried tensor whose body result has no element type
/// (a body that declares its state input untyped, as ONNX's test_loop does,
/// and passes it on): the state keeps the initial value's element type,
/// of unknown shape. (The result got no type at all.)
const Type *widenCarried(Context &ctx, const Type *init, const Type *out) {
  if (const Type *w = widen(ctx, init, out)) return w;
  bool untypedOut = !out || (out->isTensor() && (!out->hasElemType() || out->elemTypeRaw() == 0));
  if (init && init->isTensor() && init->hasElemType() && init->elemTypeRaw() != 0 && untypedOut)
    return ctx.getTensorType(init->elemType(), kUnknownRank);
  return nullptr;
}

void loopRule(InferCtx &c) {
  Node &n = c.node;
  Graph *bp = graphAttr(n, "body");
  if (!bp) return;
  Graph &body = *bp;
  Context &ctx = c.ctx;
  unsigned nCarried = n.numOperands() >= 2 ? n.numOperands() - 2 : 0;
  if (body.numInputs() != nCarried + 2 || body.numOutputs() < nCarried + 1) return;
  std::vector<const Type *> carried(nCarried);
  for (unsigned i = 0; i < nCarried; ++i) carried[i] = c.inType(2 + i);
  auto seed = [&](const std::vector<const Type *> &ts) {
    if (!c.seedInput(body.input(0), ctx.getTensorType(DataType::Int64, llvm::ArrayRef<int64_t>{})))
      return false;
    if (!c.seedInput(body.input(1), ctx.getTensorType(DataType::Bool, llvm::ArrayRef<int64_t>{})))
      return false;
    for (unsigned i = 0; i < nCarried; ++i)
      if (ts[i] && !c.seedInput(body.input(2 + i), ts[i])) return false;
    return true;
  };
  // Fixed point on the carried types, speculatively (nothing is written),
  // within Note [Speculation budget].
  bool iterate = c.canSpeculate();
  if (!iterate) std::fill(carried.begin(), carried.end(), nullptr);
  for (int round = 0; iterate && round < 4; ++round) {
    bool stable = true;
    std::vector<const Type *> next = carried;
    bool ok = c.speculate(body, [&] {
      if (!seed(carried) || !c.inferBody(body)) return false;
      for (unsigned i = 0; i < nCarried; ++i) {
        const Type *out = c.typeOf(body.output(1 + i));
        // An optional operand whose body result is its content (Loop-16 with
        // an optional sequence, None at first): the result takes the body's
        // type, and from the second iteration on the body input holds that
        // result, so the input widens to optional(operand content | result).
        // (It kept the operand's type: seq(float) of scalars, say, where the
        // body inserts 1-D slices.)
        const Type *w = nullptr;
        if (carried[i] && out && out->kind() != carried[i]->kind()) {
          if (carried[i]->kind() != Type::Kind::Optional) continue;
          const Type *inner = widen(ctx, carried[i]->elementType(), out);
          w = inner ? ctx.getOptionalType(inner) : nullptr;
        } else if (carried[i]) {
          w = widenCarried(ctx, carried[i], out);
        }
        if (w != carried[i]) {
          stable = false;
          next[i] = w;
        }
      }
      return true;
    });
    if (!ok) return;
    if (stable) break;
    carried = std::move(next);
    if (round == 3) std::fill(carried.begin(), carried.end(), nullptr);
  }
  c.forgetBody(body);
  if (!seed(carried) || !c.inferBody(body)) return;
  for (unsigned i = 0; i < nCarried; ++i) {
    const Type *out = c.typeOf(body.output(1 + i));
    // Note [Sequences carried through a Loop].
    if (carried[i] && out && out->kind() != carried[i]->kind())
      c.setOutType(i, shapelessElements(ctx, out));
    else if (carried[i])
      c.setOutType(i, shapelessElements(ctx, widenCarried(ctx, carried[i], out)));
  }
  // Scan outputs: the iteration count in front.
  const DimExpr *trip = nullptr;
  bool condGiven = n.numOperands() > 1 && n.operand(1);
  if (!condGiven) {
    // A negative M runs no iteration: max(M, 0) (M itself when it is
    // provably a dim, Note [Dims are non-negative]).
    if (const Dims *d = c.inData(0); d && d->size() == 1 && (*d)[0])
      trip = dimMax(ctx, {(*d)[0], dimConst(ctx, 0)});
  }
  // An unknown iteration count is still one count for every scan output: a
  // fresh symbol says they agree.
  if (!trip && body.numOutputs() > 1 + nCarried) trip = ctx.exprOf(ctx.freshSymbolDim());
  for (unsigned j = 1 + nCarried; j < body.numOutputs(); ++j) {
    unsigned r = j - 1;
    const Type *t = c.typeOf(body.output(j));
    if (!t || !t->isTensor() || !t->hasElemType()) continue;
    std::optional<Dims> dims;
    if (t->hasShape()) {
      dims = Dims{trip};
      for (const Dim &d : t->dims()) dims->push_back(ctx.exprOf(d));
    }
    c.setTensor(r, t->elemTypeRaw(), dims);
  }
}

// Adapters of the steps at opset 10 and later (Note [Version adapters]).
// Loop-11 allows a loop without loop-carried values (2 operands: M and
// cond); Loop-1 needs at least one. The meaning is the same otherwise.
absl::Status loopDown11(Node &n, AdapterContext &) {
  if (n.numOperands() < 3)
    return absl::FailedPreconditionError(
        "no loop-carried value; Loop-1 needs at least one");
  return absl::OkStatus();
}

void registerLoop(OpRegistrar &r) {
  r["Loop"].infer(loopRule).infersSubgraphs();
  r["Loop"].since(11).upgrade(adapters::noChange).downgrade(loopDown11);
}

//===--- Scan ---===//

/// A tensor type of `elem` and `dims` (dim expressions).
const Type *tensorOf(Context &ctx, int32_t elem, const Dims &dims) {
  std::vector<Dim> ds;
  for (const DimExpr *e : dims) ds.push_back(ctx.dimOf(e));
  return ctx.getTensorType(static_cast<DataType>(elem), llvm::ArrayRef<Dim>(ds));
}

/// Scan before opset 9: (sequence_lens?, states..., scan inputs...), every
/// operand with a batch axis 0, scan inputs with the sequence axis 1; the
/// body sees neither. States come out [batch, ...], scan outputs
/// [batch, sequence, ...].
void scan8Rule(InferCtx &c, Graph &body) {
  Node &n = c.node;
  Context &ctx = c.ctx;
  int64_t nScanIn = c.getInt("num_scan_inputs", -1);
  int64_t nIn = (int64_t)n.numOperands() - 1;
  if (nIn < 0 || nScanIn < 0 || nScanIn > nIn || (int64_t)body.numInputs() != nIn) return;
  int64_t nState = nIn - nScanIn;
  int64_t nScanOut = (int64_t)body.numOutputs() - nState;
  if (nScanOut < 0) return;
  const DimExpr *batch = nullptr, *seqLen = nullptr;
  bool batchSeen = false, seqSeen = false;
  auto unify = [](const DimExpr *&acc, bool &seen, const DimExpr *d) {
    if (!seen) acc = d;
    else if (acc != d) acc = nullptr;
    seen = true;
  };
  for (int64_t i = 0; i < nIn; ++i) {
    auto sh = c.inShape(1 + i);
    int32_t el = c.inElem(1 + i);
    bool scan = i >= nState;
    if (el >= 0 && !sh &&
        !c.seedInput(body.input(i), ctx.getTensorType(static_cast<DataType>(el), kUnknownRank)))
      return;
    if (!sh || el < 0 || sh->size() < (scan ? 2u : 1u)) continue;
    unify(batch, batchSeen, (*sh)[0]);
    if (scan) unify(seqLen, seqSeen, (*sh)[1]);
    Dims inner(sh->begin() + (scan ? 2 : 1), sh->end());
    if (!c.seedInput(body.input(i), tensorOf(ctx, el, inner))) return;
  }
  if (!c.inferBody(body)) return;
  for (int64_t j = 0; j < (int64_t)body.numOutputs() && j < (int64_t)n.numResults(); ++j) {
    const Type *t = c.typeOf(body.output(j));
    if (!t || !t->isTensor() || !t->hasElemType()) continue;
    if (!t->hasShape()) {
      c.setTensor(j, t->elemTypeRaw(), std::nullopt);
      continue;
    }
    Dims d{batch};
    if (j >= nState) d.push_back(seqLen);
    for (const Dim &x : t->dims()) d.push_back(ctx.exprOf(x));
    c.setTensor(j, t->elemTypeRaw(), d);
  }
}

void scanRule(InferCtx &c) {
  Node &n = c.node;
  Graph *bp = graphAttr(n, "body");
  if (!bp) return;
  if (c.opset < 9) return scan8Rule(c, *bp);
  Graph &body = *bp;
  Context &ctx = c.ctx;
  int64_t nScanIn = c.getInt("num_scan_inputs", -1);
  int64_t nIn = n.numOperands();
  if (nScanIn < 0 || nScanIn > nIn || body.numInputs() != nIn) return;
  int64_t nState = nIn - nScanIn;
  int64_t nScanOut = (int64_t)body.numOutputs() - nState;
  if (nScanOut < 0) return;
  auto inAxes = c.getInts("scan_input_axes").value_or(std::vector<int64_t>(nScanIn, 0));
  auto outAxes = c.getInts("scan_output_axes").value_or(std::vector<int64_t>(nScanOut, 0));
  if ((int64_t)inAxes.size() != nScanIn || (int64_t)outAxes.size() != nScanOut) return;
  const DimExpr *seqLen = nullptr;
  bool seqKnown = false;
  for (int64_t i = 0; i < nIn; ++i) {
    const Type *t = c.inType(i);
    if (i < nState) {
      if (t && !c.seedInput(body.input(i), t)) return;
      continue;
    }
    auto sh = c.inShape(i);
    int32_t el = c.inElem(i);
    if (!sh || el < 0) continue;
    auto ax = normAxis(inAxes[i - nState], sh->size());
    if (!ax) continue;
    if (!seqKnown) {
      seqLen = (*sh)[*ax];
      seqKnown = true;
    } else if (seqLen != (*sh)[*ax]) {
      seqLen = nullptr;
    }
    sh->erase(sh->begin() + *ax);
    if (!c.seedInput(body.input(i), tensorOf(ctx, el, *sh))) return;
  }
  if (!c.inferBody(body)) return;
  for (int64_t i = 0; i < nState && i < (int64_t)n.numResults(); ++i)
    c.setOutType(i, c.typeOf(body.output(i)));
  for (int64_t j = 0; j < nScanOut && nState + j < (int64_t)n.numResults(); ++j) {
    const Type *t = c.typeOf(body.output(nState + j));
    if (!t || !t->isTensor() || !t->hasElemType()) continue;
    if (!t->hasShape()) {
      c.setTensor(nState + j, t->elemTypeRaw(), std::nullopt);
      continue;
    }
    Dims d;
    for (const Dim &x : t->dims()) d.push_back(ctx.exprOf(x));
    auto ax = normAxis(outAxes[j], d.size() + 1);
    if (!ax) continue;
    d.insert(d.begin() + *ax, seqLen);
    c.setTensor(nState + j, t->elemTypeRaw(), d);
  }
}

// Scan-9 dropped Scan-8's batch axis (every scan input and output had a
// leading batch dimension, with optional per-batch sequence_lens) and added
// per-input and per-output scan axes; the body (one batch element) is the
// same. A batch of one without sequence_lens converts up: every operand
// loses its leading 1 (Squeeze), every result gets it back (Unsqueeze), and
// `directions` becomes `scan_input_directions`. A larger or unknown batch
// would need a loop over it: refused with that why, as is the way down.
absl::Status scanUp9(Node &n, AdapterContext &c) {
  const char *why = "Scan-8 scans a leading batch axis (with optional sequence_lens), which Scan-9 "
                    "does not have; ";
  if (n.numOperands() > 0 && n.operand(0))
    return absl::UnimplementedError(absl::StrCat(
        why, "per-batch sequence_lens ('", n.operand(0)->name().str(),
        "') have no Scan-9 form (only a batch of one without them converts)"));
  for (unsigned i = 1; i < n.numOperands(); ++i) {
    const Value *v = n.operand(i);
    const Type *t = v ? v->type() : nullptr;
    if (!t || !t->isTensor() || !t->hasShape() || t->rank() < 1 || !t->dims()[0].isKnown() ||
        t->dims()[0].value != 1)
      return absl::UnimplementedError(absl::StrCat(
          why, "operand #", i, " ('", v ? v->name().str() : std::string(),
          "') does not have a known batch of one (a larger batch needs a loop over it: not done; "
          "infer shapes first if the shape is unknown)"));
  }
  if (c.checkOnly) return absl::OkStatus();
  Graph &g = *n.getGraph();
  auto axesOperand = [&]() {
    Tensor t;
    t.setDataType(DataType::Int64);
    t.setDims({1});
    t.setTyped(Tensor::TypedField::Int64);
    t.int64Data.mut() = {0};
    return adapters::newConstant(n, c, "axes", std::move(t));
  };
  // Squeeze/Unsqueeze in the form of the target (axes an operand from 13,
  // one constant before the Scan and the Squeezes for all of them).
  Value *axes = c.target >= 13 ? axesOperand() : nullptr;
  auto batchOp = [&](Node &op) {
    if (axes)
      op.addOperand(axes);
    else
      op.newAttr("axes").setInts({0});
  };
  for (unsigned i = 1; i < n.numOperands(); ++i) {
    Value *v = n.operand(i);
    Node *sq = g.createNode("Squeeze", {v}, 1, &n, "", v->name().str() + "_unbatched");
    batchOp(*sq);
    n.setOperand(i, sq->result(0));
  }
  n.removeOperand(0);
  if (Attribute *d = n.getAttr("directions")) {
    std::vector<int64_t> dirs = d->ints;
    n.removeAttr("directions");
    n.newAttr("scan_input_directions").setInts(std::move(dirs));
  }
  for (unsigned r = 0; r < n.numResults(); ++r) {
    if (!n.result(r)) continue;
    Node *un = adapters::wrapResult(n, "Unsqueeze", {}, r);
    batchOp(*un);
  }
  return absl::OkStatus();
}
absl::Status scanDown9(Node &, AdapterContext &) {
  return absl::UnimplementedError(
      "Scan-8 needs a leading batch axis on every scan input and output, which Scan-9 does "
      "not have; adding it (Unsqueeze/Squeeze around the node) is not done");
}

void registerScan(OpRegistrar &r) {
  r["Scan"].infer(scanRule).infersSubgraphs();
  r["Scan"].since(9).upgrade(scanUp9).downgrade(scanDown9);
}

//===--- SequenceMap ---===//

/// SequenceMap: the body sees one element of each sequence operand (typed as
/// the sequence's element type) and the tensor operands as they are; each
/// result is the sequence of the matching body output.
void sequenceMapRule(InferCtx &c) {
  Node &n = c.node;
  Graph *bp = graphAttr(n, "body");
  if (!bp) return;
  Graph &body = *bp;
  if (body.numInputs() != n.numOperands()) return;
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    const Type *t = c.inType(i);
    if (!t) continue;
    if (t->kind() == Type::Kind::Sequence) t = t->elementType();
    else if (i == 0) continue; // the first operand is a sequence
    if (t && !c.seedInput(body.input(i), t)) return;
  }
  if (!c.inferBody(body)) return;
  for (unsigned j = 0; j < body.numOutputs() && j < n.numResults(); ++j)
    if (const Type *t = c.typeOf(body.output(j))) c.setOutType(j, c.ctx.getSequenceType(t));
}

void registerSequenceMap(OpRegistrar &r) {
  r["SequenceMap"].infer(sequenceMapRule).infersSubgraphs();
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerControlFlowOps(OpRegistrar &r) {
  for (auto *reg : {registerIf, registerLoop, registerScan, registerSequenceMap}) reg(r);
}

} // namespace onnxir
