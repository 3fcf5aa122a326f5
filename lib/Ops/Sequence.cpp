//===- Sequence.cpp - Sequence and Optional -------------------------------===//
//
// Sequence: SequenceEmpty SequenceConstruct SequenceInsert SequenceErase
// SequenceAt SequenceLength SplitToSequence ConcatFromSequence, and Optional
// OptionalHasElement OptionalGetElement.
// One section per op: its rule, its version adapters and its registration
// (registerSequenceOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

namespace onnxir {

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

namespace {

using namespace infer;

const Type *tensorType(Context &ctx, int32_t elem, const std::optional<Dims> &d) {
  if (elem <= 0) return nullptr;
  if (!d) return ctx.getTensorType(static_cast<DataType>(elem), kUnknownRank);
  std::vector<Dim> ds;
  for (const DimExpr *e : *d) ds.push_back(ctx.dimOf(e));
  return ctx.getTensorType(static_cast<DataType>(elem), llvm::ArrayRef<Dim>(ds));
}

/// Element-wise join of two tensor types for a sequence: equal dims stay.
const Type *joinTensor(Context &ctx, const Type *a, const Type *b) {
  if (!a) return b;
  if (!b || a == b) return a;
  if (!a->isTensor() || !b->isTensor() || !a->hasElemType() || !b->hasElemType() ||
      a->elemTypeRaw() != b->elemTypeRaw())
    return nullptr;
  std::optional<Dims> d;
  if (a->hasShape() && b->hasShape() && a->rank() == b->rank()) {
    d = Dims{};
    for (size_t i = 0; i < a->dims().size(); ++i) {
      const DimExpr *x = ctx.exprOf(a->dims()[i]), *y = ctx.exprOf(b->dims()[i]);
      d->push_back(x == y ? x : nullptr);
    }
  }
  return tensorType(ctx, a->elemTypeRaw(), d);
}

const Type *seqElem(const Type *t) {
  return t && t->kind() == Type::Kind::Sequence ? t->elementType() : nullptr;
}

//===--- SequenceEmpty ---===//

void registerSequenceEmpty(OpRegistrar &r) {
  r["SequenceEmpty"] = [](InferCtx &c) {
    int32_t el = (int32_t)c.getInt("dtype", static_cast<int32_t>(DataType::Float));
    c.setOutType(0, c.ctx.getSequenceType(tensorType(c.ctx, el, std::nullopt)));
  };
}

//===--- SequenceConstruct ---===//

void registerSequenceConstruct(OpRegistrar &r) {
  r["SequenceConstruct"] = [](InferCtx &c) {
    const Type *acc = nullptr;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      const Type *t = c.inType(i);
      if (!t) return;
      acc = i == 0 ? t : joinTensor(c.ctx, acc, t);
      if (!acc) return;
    }
    if (acc) c.setOutType(0, c.ctx.getSequenceType(acc));
  };
}

//===--- SequenceInsert ---===//

void registerSequenceInsert(OpRegistrar &r) {
  r["SequenceInsert"] = [](InferCtx &c) {
    const Type *e = seqElem(c.inType(0)), *t = c.inType(1);
    const Type *j = e && t ? joinTensor(c.ctx, e, t) : nullptr;
    if (j) c.setOutType(0, c.ctx.getSequenceType(j));
  };
}

//===--- SequenceErase ---===//

void registerSequenceErase(OpRegistrar &r) {
  r["SequenceErase"] = [](InferCtx &c) {
    if (const Type *t = c.inType(0); t && t->kind() == Type::Kind::Sequence) c.setOutType(0, t);
  };
}

//===--- SequenceAt ---===//

void registerSequenceAt(OpRegistrar &r) {
  r["SequenceAt"] = [](InferCtx &c) {
    if (const Type *e = seqElem(c.inType(0))) c.setOutType(0, e);
  };
}

//===--- SequenceLength ---===//

void registerSequenceLength(OpRegistrar &r) {
  r["SequenceLength"] = [](InferCtx &c) { c.setTensor(0, kInt64, Dims{}); };
}

//===--- SplitToSequence ---===//

/// The split axis of every element when the sizes are constant: a list of
/// equal sizes (each element has that size; ONNX's inference gives it only
/// when the axis is known too), or a scalar size that divides a known axis
/// (otherwise the last piece is shorter). Null when the pieces may differ.
const DimExpr *splitPieceDim(InferCtx &c, const DimExpr *axisDim) {
  auto sizes = c.inInts(1);
  int64_t rank = c.inRank(1);
  if (!sizes || sizes->empty() || rank < 0 || rank > 1) return nullptr;
  int64_t first = sizes->front();
  if (first < 0) return nullptr;
  if (rank == 1) {
    for (int64_t s : *sizes)
      if (s != first) return nullptr;
    return c.c(first);
  }
  auto n = staticDim(axisDim);
  if (!n || first == 0 || *n % first != 0) return nullptr;
  return c.c(first);
}

void registerSplitToSequence(OpRegistrar &r) {
  r["SplitToSequence"] = [](InferCtx &c) {
    auto x = c.inShape(0);
    int32_t el = c.inElem(0);
    if (el < 0) return;
    std::optional<Dims> d;
    if (x) {
      auto ax = normAxis(c.getInt("axis", 0), x->size());
      if (!ax) return;
      d = *x;
      if (!c.hasInput(1) && !c.getInt("keepdims", 1)) d->erase(d->begin() + *ax);
      else if (!c.hasInput(1)) (*d)[*ax] = c.c(1);
      else (*d)[*ax] = splitPieceDim(c, (*d)[*ax]);
    }
    c.setOutType(0, c.ctx.getSequenceType(tensorType(c.ctx, el, d)));
  };
}

//===--- ConcatFromSequence ---===//

void registerConcatFromSequence(OpRegistrar &r) {
  r["ConcatFromSequence"] = [](InferCtx &c) {
    const Type *e = seqElem(c.inType(0));
    if (!e || !e->isTensor() || !e->hasElemType()) return;
    if (!e->hasShape()) return c.setTensor(0, e->elemTypeRaw(), std::nullopt);
    int64_t r = e->rank() + (c.getInt("new_axis", 0) ? 1 : 0);
    auto ax = normAxis(c.getInt("axis", 0), r);
    if (!ax) return;
    Dims d;
    for (const Dim &x : e->dims()) d.push_back(c.ctx.exprOf(x));
    if (c.getInt("new_axis", 0)) d.insert(d.begin() + *ax, nullptr);
    else d[*ax] = nullptr;
    c.setTensor(0, e->elemTypeRaw(), d);
  };
}

//===--- Optional ---===//

void registerOptional(OpRegistrar &r) {
  r["Optional"] = [](InferCtx &c) {
    const Type *t = c.hasInput(0) ? c.inType(0) : nullptr;
    if (!t)
      if (const Attribute *a = c.attr("type"); a && !a->types.empty()) t = a->types[0];
    if (t) c.setOutType(0, c.ctx.getOptionalType(t));
  };
}

//===--- OptionalHasElement ---===//

// Adapters of the steps at opset 10 and later (Note [Version adapters]).
// OptionalHasElement-18 made its operand optional (absent: false).
absl::Status optionalHasElementDown18(Node &n, AdapterContext &) {
  if (n.numOperands() == 0 || !n.operand(0))
    return absl::FailedPreconditionError("no operand, which OptionalHasElement-15 needs");
  return absl::OkStatus();
}

void registerOptionalHasElement(OpRegistrar &r) {
  r["OptionalHasElement"] = [](InferCtx &c) { c.setTensor(0, kBool, Dims{}); };
  r["OptionalHasElement"].since(18).upgrade(adapters::noChange).downgrade(
      optionalHasElementDown18);
}

//===--- OptionalGetElement ---===//

void registerOptionalGetElement(OpRegistrar &r) {
  r["OptionalGetElement"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (!t) return;
    c.setOutType(0, t->kind() == Type::Kind::Optional ? t->elementType() : t);
  };
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerSequenceOps(OpRegistrar &r) {
  for (auto *reg : {registerSequenceEmpty, registerSequenceConstruct, registerSequenceInsert,
                    registerSequenceErase, registerSequenceAt, registerSequenceLength,
                    registerSplitToSequence, registerConcatFromSequence, registerOptional,
                    registerOptionalHasElement, registerOptionalGetElement})
    reg(r);
}

} // namespace onnxir
