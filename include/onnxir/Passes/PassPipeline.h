//===- PassPipeline.h - Textual pass pipelines ----------------------------===//
//
// A pipeline is written as MLIR writes one: pass arguments separated by
// commas, each with an optional brace-enclosed list of per-instance options
// separated by spaces:
//
//   dce,fold-constants{size-limit=1MiB growth-limit=0},topo,dce{functions}
//
// A bare key means `key=true`; a value may be quoted with '...' or "..." to
// hold spaces, commas or braces. The same pass may appear several times with
// different options. Composite passes (O1, O2) are passes like any other.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASSPIPELINE_H
#define ONNXIR_PASSES_PASSPIPELINE_H

#include "onnxir/Passes/Pass.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// Parses `text` into new pass instances (options set) from the registry.
/// Errors name the column and what was expected:
/// `pipeline:1:17: unknown pass 'dcx'`.
absl::StatusOr<std::vector<std::unique_ptr<Pass>>> parsePassPipeline(llvm::StringRef text);

/// The textual form of one instance: its argument and the options set on it
/// explicitly (`fold-constants{size-limit=1048576}`).
std::string printPassInstance(const Pass &p);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PASSPIPELINE_H
