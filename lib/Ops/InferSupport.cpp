//===- InferSupport.cpp - Helpers the type and shape rules share ----------===//
#include "InferSupport.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/Ops/InferCtx.h"


#include <algorithm>
#include <cstring>

namespace onnxir {
namespace infer {

//===----------------------------------------------------------------------===//
// InferCtx helpers
//===----------------------------------------------------------------------===//

int32_t InferCtx::inElem(unsigned i) const {
  const Type *t = inType(i);
  if (!t || !t->isTensor() || !t->hasElemType() || t->elemTypeRaw() == 0) return -1;
  return t->elemTypeRaw();
}

std::optional<Dims> InferCtx::inShape(unsigned i) const {
  const Type *t = inType(i);
  if (!t || !t->isTensor() || !t->hasShape()) return std::nullopt;
  std::optional<Dims> out(std::in_place); // returned as it is, not moved
  Dims &d = *out;
  d.reserve(t->dims().size());
  for (const Dim &x : t->dims()) d.push_back(ctx.exprOf(x));
  return out;
}

int64_t InferCtx::inRank(unsigned i) const {
  const Type *t = inType(i);
  return t && t->isTensor() ? t->rank() : -1;
}

std::optional<std::vector<int64_t>> InferCtx::inInts(unsigned i) const {
  const Dims *d = inData(i);
  if (!d) return std::nullopt;
  std::vector<int64_t> out;
  for (const DimExpr *e : *d) {
    if (!e || !e->isConstant()) return std::nullopt;
    out.push_back(e->value());
  }
  return out;
}

void InferCtx::setTensor(unsigned i, int32_t elem, const std::optional<Dims> &dims) {
  if (elem <= 0 || !hasOutput(i)) return;
  if (!dims) {
    setOutType(i, ctx.getTensorType(static_cast<DataType>(elem), kUnknownRank));
    return;
  }
  // Note [Types a shape gives back]: an operand's type, if the result has
  // it. The first few operands only: a result of many operands (Concat,
  // Sum) rarely has the type of a later one, and each try costs a walk of
  // the dims.
  llvm::ArrayRef<const DimExpr *> exprs(dims->data(), dims->size());
  for (unsigned j = 0, n = std::min(numInputs(), 4u); j < n; ++j)
    if (const Type *t = inType(j); t && ctx.isTensorTypeOf(t, static_cast<DataType>(elem), exprs)) {
      setOutType(i, t);
      return;
    }
  // Else the type of those dims, most often a recent answer (Note [Recent
  // tensor types] in IR/Context.cpp).
  setOutType(i, ctx.getTensorTypeOf(static_cast<DataType>(elem), exprs));
}

std::optional<int64_t> normAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<Dims> broadcast(Context &ctx, const Dims &a, const Dims &b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *x = i + a.size() >= n ? a[i + a.size() - n] : dimConst(ctx, 1);
    const DimExpr *y = i + b.size() >= n ? b[i + b.size() - n] : dimConst(ctx, 1);
    auto isOne = [](const DimExpr *e) { return e && e->isConstant() && e->value() == 1; };
    if (isOne(x)) out[i] = y;
    else if (isOne(y)) out[i] = x;
    else if (x && y && x == y) out[i] = x;
    // Note [Slices of fixed buffers] (IR/DimExpr.h): min(P, S) against S.
    else if (dimMinOfOnly(x, y)) out[i] = y;
    else if (dimMinOfOnly(y, x)) out[i] = x;
    else if (x && y && x->isConstant() && y->isConstant()) return std::nullopt;
    else if (x && x->isConstant()) out[i] = x; // y is 1 or equal to it
    else if (y && y->isConstant()) out[i] = y;
    else out[i] = nullptr;
  }
  return out;
}

std::optional<std::pair<size_t, size_t>> broadcastClash(const Dims &a, const Dims &b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t k = 1; k <= n; ++k) {
    auto x = staticDim(a[a.size() - k]), y = staticDim(b[b.size() - k]);
    if (x && y && *x != *y && *x != 1 && *y != 1)
      return std::make_pair(a.size() - k, b.size() - k);
  }
  return std::nullopt;
}

std::string typeStr(const InferCtx &c, unsigned i) {
  const Type *t = c.inType(i);
  return t ? t->str() : "?";
}

std::optional<int64_t> staticDim(const DimExpr *d) {
  if (d && d->isConstant()) return d->value();
  return std::nullopt;
}

/// The value of a known dim within [0, limit], else nullopt.
std::optional<int64_t> smallDim(const DimExpr *e, int64_t limit) {
  if (!e || !e->isConstant() || e->value() < 0 || e->value() > limit) return std::nullopt;
  return e->value();
}

/// Ints from an attribute (older opsets) or an input (newer ones).
std::optional<std::vector<int64_t>> intsFrom(InferCtx &c, bool fromInput, unsigned input,
                                             llvm::StringRef attr) {
  if (fromInput) return c.hasInput(input) ? c.inInts(input) : std::nullopt;
  return c.getInts(attr);
}

void InferCtx::setSameAs(unsigned i, unsigned j) {
  // Note [Types a shape gives back]: most types need no reading at all.
  if (const Type *t = inType(j); hasOutput(i) && ctx.remakesItself(t)) {
    setOutType(i, t);
    return;
  }
  setTensor(i, inElem(j), inShape(j));
}

void sameAsInput(InferCtx &c) { c.setSameAs(0, 0); }

std::optional<Dims> tensorData(Context &ctx, const Tensor &t) {
  DataType dt = t.dataType();
  if (dt != DataType::Int64 && dt != DataType::Int32) return std::nullopt;
  if (t.dims().size() > 1) return std::nullopt;
  auto n = t.numElements();
  if (!n || *n > 64) return std::nullopt;
  Dims d;
  // The values where they are stored: the typed field of the element type
  // or the raw bytes, read as values() reads them (the same checks: as many
  // values as the dims hold), without its vector and its conversion of a
  // typed field to bytes (a Constant node's `value` is read once per node).
  // Other storage (external data, a field of another type) goes through
  // values().
  bool i64 = dt == DataType::Int64;
  if (t.storage() == Tensor::Storage::Typed &&
      t.typedField() == (i64 ? Tensor::TypedField::Int64 : Tensor::TypedField::Int32)) {
    if (i64 ? (int64_t)t.int64Data.size() != *n : (int64_t)t.int32Data.size() != *n)
      return std::nullopt;
    for (int64_t k = 0; k < *n; ++k)
      d.push_back(dimConst(ctx, i64 ? t.int64Data[k] : int64_t(t.int32Data[k])));
    return d;
  }
  if (t.storage() == Tensor::Storage::Raw) {
    llvm::StringRef raw = t.rawData();
    size_t es = i64 ? 8 : 4;
    if (raw.size() != es * size_t(*n)) return std::nullopt;
    for (int64_t k = 0; k < *n; ++k) {
      int64_t x;
      if (i64) {
        std::memcpy(&x, raw.data() + 8 * k, 8);
      } else {
        int32_t y;
        std::memcpy(&y, raw.data() + 4 * k, 4);
        x = y;
      }
      d.push_back(dimConst(ctx, x));
    }
    return d;
  }
  if (dt == DataType::Int64) {
    auto vals = t.values<int64_t>();
    if (!vals.ok() || (int64_t)vals->size() != *n) return std::nullopt;
    for (int64_t x : *vals) d.push_back(dimConst(ctx, x));
  } else {
    auto vals = t.values<int32_t>();
    if (!vals.ok() || (int64_t)vals->size() != *n) return std::nullopt;
    for (int32_t x : *vals) d.push_back(dimConst(ctx, x));
  }
  return d;
}

std::optional<std::vector<int64_t>> declaredDims(const Node &n, unsigned i) {
  const Value *v = i < n.numOperands() ? n.operand(i) : nullptr;
  if (!v) return std::nullopt;
  if (const Type *t = v->type(); t && t->isTensor() && t->hasShape()) {
    std::vector<int64_t> out;
    for (const Dim &d : t->dims()) out.push_back(d.isKnown() ? d.value : -1);
    return out;
  }
  if (const Tensor *init = v->initializer()) return init->dims();
  return std::nullopt;
}

} // namespace infer
} // namespace onnxir
