//===- TensorFile.h - A serialized TensorProto as a tensor ----------------===//
//
// The backend tests' input_*.pb / output_*.pb files are bare TensorProtos.
// They are read through the model lift (the same decoding and checks as an
// initializer), not by a second decoder.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_TENSORFILE_H
#define ONNXIR_SERIALIZE_TENSORFILE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <string>

ONNXIR_API_BEGIN
namespace onnxir {

/// Decodes a serialized TensorProto (not its name); `sourceName` names it in
/// errors. The tensor owns its data.
absl::StatusOr<Tensor> liftTensorProto(llvm::StringRef bytes, const std::string &sourceName);
/// Reads and decodes a TensorProto file.
absl::StatusOr<Tensor> loadTensorProto(const std::string &path);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SERIALIZE_TENSORFILE_H
