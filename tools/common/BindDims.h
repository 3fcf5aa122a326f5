//===- BindDims.h - The tools' reader of --bind-dim -----------------------===//
//
// onnxir-run and onnxir-reduce take --bind-dim the way onnx-opt does and
// may be given it more than once; they read it into one map the same way.
// Header-only: the tools share no library of their own.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TOOLS_COMMON_BINDDIMS_H
#define ONNXIR_TOOLS_COMMON_BINDDIMS_H

#include "onnxir/Passes/ShapeInference.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace onnxir {
namespace tools {

/// Adds the bindings of `--bind-dim` text (onnx-opt's syntax, read by
/// parseBindDims: SYM=V[;SYM=V...]) to `bind`. A symbol bound twice to
/// different values, here or by an earlier --bind-dim, is refused. Returns
/// the message of what it refuses.
inline std::optional<std::string> addBindDims(const std::string &text,
                                              std::map<std::string, int64_t> &bind) {
  auto b = parseBindDims(text);
  if (!b.ok()) return std::string(b.status().message());
  for (auto &[sym, v] : *b) {
    if (auto [at, fresh] = bind.emplace(sym, v); !fresh && at->second != v)
      return "--bind-dim: symbol \"" + sym + "\" is bound twice (" +
             std::to_string(at->second) + " and " + std::to_string(v) + ")";
  }
  return std::nullopt;
}

} // namespace tools
} // namespace onnxir

#endif
