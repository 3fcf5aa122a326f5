//===- Type.h - Immutable, uniqued value types ----------------------------===//
//
// Types mirror TypeProto: tensor(elem, shape?), sparse_tensor(elem, shape?),
// seq(T), optional(T), map(K, V), opaque(domain, name), plus a denotation.
// They are created only by a Context, which uniques them, so two types are
// equal exactly when their pointers are equal.
//
// Note [Absent shape]: a tensor type without a shape (unknown rank) is
// distinct from a tensor type with rank 0 (a scalar). `hasShape()` tells
// which.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_TYPE_H
#define ONNXIR_IR_TYPE_H

#include "onnxir/IR/DataType.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Context;
class DimExpr;

/// One dimension of a shape: a known size, a symbol (dim_param), or unknown.
/// A symbolic dim's dim_param may stand for an expression over symbols (see
/// DimExpr.h, Note [Lossless dim_param]); `expr` then holds it. Dims made by
/// a Context (types, Context::dimOf) always have `expr` set when symbolic.
struct Dim {
  enum class Kind : uint8_t { Unknown, Known, Symbolic };
  Kind kind = Kind::Unknown;
  int64_t value = 0;          ///< valid when kind == Known
  llvm::StringRef param;      ///< valid when kind == Symbolic (interned)
  llvm::StringRef denotation; ///< optional dimension denotation (interned)
  /// The expression of a symbolic dim (uniqued; determined by `param`, so
  /// not part of equality). Null in dims not yet passed through a Context.
  const DimExpr *expr = nullptr;

  static Dim known(int64_t v) { Dim d; d.kind = Kind::Known; d.value = v; return d; }
  static Dim unknown() { return Dim(); }
  bool isKnown() const { return kind == Kind::Known; }
  bool isSymbolic() const { return kind == Kind::Symbolic; }
  bool operator==(const Dim &o) const {
    return kind == o.kind && value == o.value && param == o.param &&
           denotation == o.denotation;
  }
};

/// The dims of a tensor of unknown rank (Note [Absent shape]), for
/// Context::getTensorType: a bare std::nullopt is ambiguous there from LLVM 16
/// on, where ArrayRef converts from it too (Note [LLVM versions]).
inline constexpr std::optional<llvm::ArrayRef<Dim>> kUnknownRank = std::nullopt;

/// An immutable, uniqued type. Obtain instances from Context::get*Type.
class Type {
public:
  enum class Kind : uint8_t {
    Tensor,       ///< tensor_type
    SparseTensor, ///< sparse_tensor_type
    Sequence,     ///< sequence_type
    Map,          ///< map_type
    Optional,     ///< optional_type
    Opaque,       ///< opaque_type
    None,         ///< a TypeProto with no value set (only a denotation, say)
  };

  Kind kind() const { return kind_; }
  bool isTensor() const { return kind_ == Kind::Tensor; }

  /// Element type of a tensor or sparse tensor (may be Undefined), or the key
  /// type of a map. Kept as the raw number so unknown future types survive.
  int32_t elemTypeRaw() const { return elem_; }
  DataType elemType() const { return static_cast<DataType>(elem_); }
  /// False if the proto omitted elem_type (distinct from elem_type = 0).
  bool hasElemType() const { return hasElem_; }

  /// Tensor and sparse tensor types: whether a shape is present at all.
  bool hasShape() const { return hasShape_; }
  /// The dims; empty for rank 0 or when !hasShape().
  llvm::ArrayRef<Dim> dims() const { return dims_; }
  int64_t rank() const { return hasShape_ ? (int64_t)dims_.size() : -1; }
  /// True if every dim is known.
  bool isStatic() const;
  /// Product of the known dims; nullopt if a dim is not known, there is no
  /// shape, or the product overflows int64.
  std::optional<int64_t> numElements() const;

  /// Element type of a sequence or optional; value type of a map.
  const Type *elementType() const { return inner_; }
  /// False if the proto omitted the inner TypeProto of seq/optional/map.
  bool hasElementType() const { return inner_ != nullptr; }
  /// How many element types are nested inside this one (0 for a tensor).
  unsigned nestingDepth() const { return nesting_; }

  llvm::StringRef opaqueDomain() const { return opaqueDomain_; }
  llvm::StringRef opaqueName() const { return opaqueName_; }

  llvm::StringRef denotation() const { return denotation_; }

  /// Opaque bytes the serializer keeps for what the fields above cannot say
  /// (unknown fields, presence of defaulted fields). Part of the identity.
  llvm::StringRef extras() const { return extras_; }

  /// A human-readable form in ONNX text syntax, e.g. `float[N,3]`.
  std::string str() const;

private:
  friend class Context;
  Type() = default;
  Kind kind_ = Kind::None;
  bool hasElem_ = false;
  bool hasShape_ = false;
  int32_t elem_ = 0;
  std::vector<Dim> dims_;
  const Type *inner_ = nullptr;
  unsigned nesting_ = 0;
  unsigned hash_ = 0; ///< of its structure (Note [Structural uniquing], Context.h)
  llvm::StringRef opaqueDomain_, opaqueName_, denotation_, extras_;
};

/// Everything needed to create a Type; used with Context::getType.
struct TypeSpec {
  Type::Kind kind = Type::Kind::None;
  bool hasElem = false;
  int32_t elem = 0;
  bool hasShape = false;
  std::vector<Dim> dims;
  const Type *inner = nullptr;
  std::string opaqueDomain, opaqueName, denotation, extras;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_TYPE_H
