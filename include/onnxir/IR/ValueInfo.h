//===- ValueInfo.h - What is known of a value: type, rank, dims, constant -===//
//
// The small readers that passes and expansions ask of a value, in one place
// (issue 39 item 4). Two families, by where they look:
//  - tensorType, rankOf, dimOf, elemOf read the value's type only;
//  - staticRankOf, staticDimOf, staticElemOf, staticShape read the tensor of
//    a constant value first (storedConstantOf: an initializer, or a Constant
//    node in the `value` form) and the type only for other values, so a
//    constant whose type is not declared still has a rank and dims.
// Unknown is -1 for ranks and integer dims, Dim::unknown() for Dims, nullopt
// or null otherwise. Everything here is a plain function of the IR.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_VALUEINFO_H
#define ONNXIR_IR_VALUEINFO_H

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace onnxir {

//===--- From the type ----------------------------------------------------===//

/// The type of `v` when it is a tensor type (shaped or not); null for no
/// value, no type, or a sequence, optional or map.
inline const Type *tensorType(const Value *v) {
  return v && v->type() && v->type()->isTensor() ? v->type() : nullptr;
}

/// tensorType(v) when it also names an element type; null otherwise.
inline const Type *typedTensorType(const Value *v) {
  const Type *t = tensorType(v);
  return t && t->hasElemType() ? t : nullptr;
}

/// The rank `v`'s type declares; -1 when it has none (or is not a tensor).
/// staticRankOf also reads a constant's tensor.
inline int64_t rankOf(const Value *v) {
  const Type *t = tensorType(v);
  return t ? t->rank() : -1;
}

/// Dim `i` of `v`'s type, counted from the end when negative; unknown when
/// the type has no such dim. staticDimOf gives a known integer instead.
inline Dim dimOf(const Value *v, int64_t i) {
  const Type *t = tensorType(v);
  if (!t || t->rank() < 0) return Dim::unknown();
  int64_t r = t->rank();
  if (i < 0) i += r;
  return i >= 0 && i < r ? t->dims()[i] : Dim::unknown();
}

/// The element type `v`'s type declares, if any. staticElemOf also reads a
/// constant's tensor.
inline std::optional<DataType> elemOf(const Value *v) {
  if (const Type *t = typedTensorType(v)) return t->elemType();
  return std::nullopt;
}

/// Provably equal dims: the same known value or the same symbol (two
/// unknown dims are not).
inline bool sameDim(const Dim &a, const Dim &b) {
  if (a.isKnown() && b.isKnown()) return a.value == b.value;
  return a.isSymbolic() && b.isSymbolic() && a.param == b.param;
}

//===--- From a constant's tensor first -----------------------------------===//

/// The tensor `v` holds without decoding anything: its initializer, or the
/// `value` of the well-formed Constant node (one attribute) defining it;
/// null otherwise (other values, the other Constant forms). What a pass
/// counts as a constant operand (PatternRewriter::constantTensor).
inline const Tensor *storedConstantOf(const Value *v) {
  if (!v) return nullptr;
  if (v->isConstantInitializer()) return v->initializer();
  Node *d = v->definingNode();
  if (!d || !isConstantNode(*d) || d->numAttributes() != 1) return nullptr;
  return storedConstantValue(*d);
}

/// The integers of a constant int64 or int32 `v` (storedConstantOf), if it
/// is one and they are readable.
inline std::optional<std::vector<int64_t>> constantInts(const Value *v) {
  const Tensor *t = storedConstantOf(v);
  if (!t || (t->dataType() != DataType::Int64 && t->dataType() != DataType::Int32))
    return std::nullopt;
  auto vals = t->values<int64_t>();
  if (!vals.ok()) return std::nullopt;
  return std::move(*vals);
}

/// The rank of `v`: a constant's number of dims, else what its type
/// declares (-1 when neither is known). rankOf reads the type only.
inline int64_t staticRankOf(const Value *v) {
  if (const Tensor *t = storedConstantOf(v)) return (int64_t)t->dims().size();
  return rankOf(v);
}

/// Dim `i` of `v` as a known integer: a constant's dim, else its type's when
/// known; -1 otherwise (also when `i` is past the rank). dimOf reads the type
/// only and keeps symbols.
inline int64_t staticDimOf(const Value *v, unsigned i) {
  if (const Tensor *t = storedConstantOf(v)) return i < t->dims().size() ? t->dims()[i] : -1;
  const Type *ty = tensorType(v);
  if (!ty || (int64_t)i >= ty->rank()) return -1;
  const Dim &d = ty->dims()[i];
  return d.isKnown() ? d.value : -1;
}

/// The element type of `v`: a constant's, else what its type declares.
/// elemOf reads the type only.
inline std::optional<DataType> staticElemOf(const Value *v) {
  if (const Tensor *t = storedConstantOf(v)) return t->dataType();
  return elemOf(v);
}

/// The static shape of `v` (every dim a known integer): a constant's dims,
/// else its type's when it has a shape and every dim is known.
inline std::optional<std::vector<int64_t>> staticShape(const Value *v) {
  if (!v) return std::nullopt;
  if (const Tensor *t = storedConstantOf(v)) return t->dims();
  const Type *ty = tensorType(v);
  if (!ty || !ty->hasShape()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim &d : ty->dims()) {
    if (!d.isKnown()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

} // namespace onnxir

#endif // ONNXIR_IR_VALUEINFO_H
