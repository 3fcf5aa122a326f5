//===- Text.h - The ONNX textual syntax: parse and print ------------------===//
//
// The standard syntax of ONNX's docs/Syntax.md (the one onnx.parser reads),
// plus a small documented extension for what it cannot say, so that text can
// be lossless (see docs/TextFormat.md).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_TEXT_H
#define ONNXIR_SERIALIZE_TEXT_H

#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

ONNXIR_API_BEGIN
namespace onnxir {

struct PrintOptions {
  /// Print every tensor in full and every extension field: parse(print(m))
  /// equals m field for field.
  bool lossless = false;
  /// Without `lossless`, tensors with more elements than this are elided.
  int64_t elideElementsAbove = 64;
  /// Only standard syntax (what onnx.parser accepts); drops what it cannot say.
  bool standardOnly = false;
};

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
/// Parses one function in text syntax (`<domain: "", opset_import: [...]>
/// Name <attrs> (inputs) => (outputs) { ... }`) into `m` (its context, its
/// list of functions, where it is appended); errors as above, and then `m`
/// is unchanged.
absl::StatusOr<Function *> parseFunctionText(Model &m, llvm::StringRef text,
                                             llvm::StringRef fileName = "<function>");
/// Prints a model; deterministic, and print(parse(print(m))) == print(m).
std::string printModelText(const Model &m, const PrintOptions &opts = {});
/// Prints one graph (for -print-ir-after).
std::string printGraphText(const Graph &g, const PrintOptions &opts = {});

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SERIALIZE_TEXT_H
