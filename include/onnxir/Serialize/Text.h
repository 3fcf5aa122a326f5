//===- Text.h - Model files in the ONNX textual syntax --------------------===//
//
// The text syntax itself (parse, print) is lib/Text (onnxir/Text/Text.h,
// Note [The text layer]); this adds what a model file needs: external data
// locations resolved and checked as for binary models.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_TEXT_H
#define ONNXIR_SERIALIZE_TEXT_H

#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Support/Export.h"
#include "onnxir/Text/Text.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

ONNXIR_API_BEGIN
namespace onnxir {

/// Parses a model in text syntax. Errors read `file:line:col: message`, then
/// the offending line and a caret. External data locations are resolved (and
/// checked, as for binary models) relative to the directory of the model
/// file `fileName` (modelDirectory in ModelFile.h) if there is such a file;
/// a name that is no file (`<text>`, text made in memory) has none: they
/// stay unresolved and fail when read.
absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName = "<text>");
/// As above, resolving external data relative to `baseDir` ("" for none).
absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName,
                                                      const std::string &baseDir);
/// As above, with the options of a binary lift: `baseDir` ("" for none),
/// `sourceName` for messages (default `<text>`) and `allowExternalLinks`.
absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      const LiftOptions &opts);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SERIALIZE_TEXT_H
