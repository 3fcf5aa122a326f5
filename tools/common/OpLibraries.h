//===- OpLibraries.h - The tools' reader of --op-library ------------------===//
//
// onnx-opt, onnxir-run and onnxir-text take --op-library=FILE, repeatable:
// each file's custom-domain operators are registered for the whole run,
// before the model is read (Note [Op libraries are process-wide],
// Ops/OpLibrary.h). Header-only: the tools share no library of their own.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TOOLS_COMMON_OPLIBRARIES_H
#define ONNXIR_TOOLS_COMMON_OPLIBRARIES_H

#include "onnxir/Ops/OpLibrary.h"

#include <optional>
#include <string>

namespace onnxir {
namespace tools {

/// Registers the op library at `path`; returns the message of a refusal
/// (`--op-library: FILE: ops[1] (dom.Op).inputs[0].type: ...`), after which
/// nothing of that file is registered.
inline std::optional<std::string> registerOpLibraryFlag(const std::string &path) {
  if (path.empty()) return std::string("--op-library needs a file name");
  auto r = registerOpLibraryFile(path);
  if (!r.ok()) return "--op-library: " + std::string(r.status().message());
  return std::nullopt;
}

} // namespace tools
} // namespace onnxir

#endif // ONNXIR_TOOLS_COMMON_OPLIBRARIES_H
