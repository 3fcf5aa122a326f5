//===- ProtoIO.h - Lift ONNX protobuf into the IR and lower it back -------===//
//
// Lift: file, byte buffer, or a generated ModelProto -> Model. Lower: Model ->
// file, byte buffer, or ModelProto. With no changes in between, lowering gives
// back the input field for field (protobuf MessageDifferencer equality).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_PROTOIO_H
#define ONNXIR_SERIALIZE_PROTOIO_H

#include "onnxir/IR/Limits.h" // kMaxGraphNesting, kMaxTypeNesting
#include "onnxir/IR/Model.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>

ONNXIR_API_BEGIN
namespace onnxir {
namespace proto {
class ModelProto;
} // namespace proto

struct LiftOptions {
  /// Directory that external data locations are relative to (default: the
  /// model file's directory; for byte buffers, none: external tensors then
  /// fail to load when read).
  std::string baseDir;
  /// Name used in error messages (default: the path, or "<buffer>").
  std::string sourceName;
  /// Follow links (of external data files or their directories) that leave
  /// the model's directory, as in the Hugging Face cache (`../../blobs`).
  /// Off: such a location is an error.
  bool allowExternalLinks = false;
};

struct LowerOptions {
  /// If non-empty: tensors whose data exceeds `externalThreshold` bytes are
  /// written to this file (relative to the output's directory) at 4096-aligned
  /// offsets and referenced from the model.
  std::string externalDataFile;
  uint64_t externalThreshold = 1024;
};

/// Reads and lifts a model file ("-" reads standard input).
absl::StatusOr<std::unique_ptr<Model>> loadModel(const std::string &path,
                                                 const LiftOptions &opts = {});
/// Lifts serialized ModelProto bytes.
absl::StatusOr<std::unique_ptr<Model>> liftModel(llvm::StringRef bytes,
                                                 const LiftOptions &opts = {});
/// Lifts a generated ModelProto (through its bytes).
absl::StatusOr<std::unique_ptr<Model>> liftModel(const proto::ModelProto &mp,
                                                 const LiftOptions &opts = {});

/// Lowers to serialized bytes.
absl::StatusOr<std::string> lowerModel(const Model &m, const LowerOptions &opts = {});
/// Lowers into a generated ModelProto (through bytes).
absl::Status lowerModel(const Model &m, proto::ModelProto *out,
                        const LowerOptions &opts = {});
/// Lowers and writes a binary model: saveModelFile (ModelFile.h) with the
/// binary format, so the same transaction and output-path rules apply.
absl::Status saveModel(const Model &m, const std::string &path,
                       const LowerOptions &opts = {});

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SERIALIZE_PROTOIO_H
