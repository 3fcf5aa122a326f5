//===- Text.h - The ONNX textual syntax of the IR: parse and print --------===//
//
// The standard syntax of ONNX's docs/Syntax.md (the one onnx.parser reads),
// plus a small documented extension for what it cannot say, so that text can
// be lossless (see docs/TextFormat.md). The library knows the IR and nothing
// of files or protobuf: external data of a parsed tensor is bound by the
// caller (lib/Serialize binds it to files, Note [The text layer]).
//
// Note [The text layer]
// The text syntax is a notation of the IR, as MLIR's assembly is: lib/Text
// sits right on lib/IR, below lib/Ops (which reads the schemas' function
// bodies, written in this syntax, FunctionBodies.h) and lib/Serialize (model
// files: text or protobuf, external data, Text.h of Serialize). Passes read
// function bodies through lib/Ops and never see a parser or a file format:
// IR <- Text <- Ops <- Passes <- tools, Text <- Serialize <- tools
// (scripts/check_layering.py checks the arrows against CMake).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEXT_TEXT_H
#define ONNXIR_TEXT_TEXT_H

#include "onnxir/IR/Model.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
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
  /// If set: the tensor to print in place of a tensor of the IR, or null for
  /// the tensor itself. A save prints what it writes this way: data it
  /// moved to a data file, or external data it writes inline (lib/Serialize,
  /// Note [Text output from the IR] in ModelFile.cpp).
  std::function<const Tensor *(const Tensor &)> tensorAs;
};

/// Binds the external data reference of the parsed tensor `tensorName`
/// (its `entries` as written) to the loader that reads it, checking it; an
/// error says what is wrong, without a place (the parser adds it).
using ExternalDataBinder =
    llvm::function_ref<absl::StatusOr<ExternalLoader>(ExternalDataRef &ref,
                                                      const std::string &tensorName)>;

/// Parses a model in text syntax; external data through `bind`. Errors read
/// `file:line:col: message`, then the offending line and a caret. (Model
/// files and the options of a binary lift: parseModelText in
/// onnxir/Serialize/Text.h.)
absl::StatusOr<std::unique_ptr<Model>> parseModelTextWith(llvm::StringRef text,
                                                          llvm::StringRef fileName,
                                                          ExternalDataBinder bind);
/// Parses one function in text syntax (`<domain: "", opset_import: [...]>
/// Name <attrs> (inputs) => (outputs) { ... }`) into `m` (its context, its
/// list of functions, where it is appended); errors as above, and then `m`
/// is unchanged. A function alone has no file: external data in it is an
/// error.
absl::StatusOr<Function *> parseFunctionText(Model &m, llvm::StringRef text,
                                             llvm::StringRef fileName = "<function>");
/// Prints a model; deterministic, and print(parse(print(m))) == print(m).
std::string printModelText(const Model &m, const PrintOptions &opts = {});
/// Prints one graph (for -print-ir-after).
std::string printGraphText(const Graph &g, const PrintOptions &opts = {});

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_TEXT_TEXT_H
