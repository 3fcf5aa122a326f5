//===- ValueFile.h - Serialized SequenceProto and OptionalProto -----------===//
//
// The backend tests give inputs and outputs of sequence and optional type
// as bare SequenceProto / OptionalProto files (input_*.pb, output_*.pb).
// Their tensors are decoded by liftTensorProto (TensorFile.h); the messages
// around them here. Maps and sparse tensors are not supported.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_VALUEFILE_H
#define ONNXIR_SERIALIZE_VALUEFILE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// A decoded TensorProto, SequenceProto or OptionalProto.
struct ProtoValue {
  enum class Kind : uint8_t { Tensor, Sequence, Optional };
  Kind kind = Kind::Tensor;
  /// Kind::Tensor.
  Tensor tensor;
  /// Kind::Sequence: its elements; Kind::Optional: none (empty) or one.
  std::vector<ProtoValue> elements;
};

/// Decodes a serialized SequenceProto / OptionalProto (not their names);
/// `sourceName` names it in errors.
absl::StatusOr<ProtoValue> liftSequenceProto(llvm::StringRef bytes, const std::string &sourceName);
absl::StatusOr<ProtoValue> liftOptionalProto(llvm::StringRef bytes, const std::string &sourceName);

/// Reads the file of a value of kind `kind` (Tensor: a TensorProto,
/// Sequence: a SequenceProto, Optional: an OptionalProto); other kinds are
/// Unimplemented.
absl::StatusOr<ProtoValue> loadValueProto(const std::string &path, Type::Kind kind);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SERIALIZE_VALUEFILE_H
