//===- InferSupport.cpp - Helpers the type and shape rules share ----------===//
#include "InferSupport.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/Ops/InferCtx.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

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
  Dims d;
  d.reserve(t->dims().size());
  for (const Dim &x : t->dims()) d.push_back(ctx.exprOf(x));
  return d;
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
  llvm::SmallVector<Dim, 8> ds; // no allocation for the common ranks
  ds.reserve(dims->size());
  for (const DimExpr *e : *dims) ds.push_back(ctx.dimOf(e));
  setOutType(i, ctx.getTensorType(static_cast<DataType>(elem), llvm::ArrayRef<Dim>(ds)));
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

void sameAsInput(InferCtx &c) { c.setTensor(0, c.inElem(0), c.inShape(0)); }

std::optional<Dims> tensorData(Context &ctx, const Tensor &t) {
  DataType dt = t.dataType();
  if (dt != DataType::Int64 && dt != DataType::Int32) return std::nullopt;
  if (t.dims().size() > 1) return std::nullopt;
  auto n = t.numElements();
  if (!n || *n > 64) return std::nullopt;
  Dims d;
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
