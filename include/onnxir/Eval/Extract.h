//===- Extract.h - Cut a model down to the subgraph between values --------===//
//
// extractSubgraph turns a model into the part of its main graph that
// computes chosen values (its new outputs) from other chosen values (cuts,
// its new graph inputs): onnxir-reduce builds its candidates with it, and an
// `extract` pass can. It works in place on a model the caller owns (a fresh
// copy, when the original is still needed): no file format here.
//
// Note [Extraction]
//  - Kept: the nodes of the main graph an output depends on, the walk
//    stopping at cut values, graph inputs and initializers. A node holding
//    subgraphs is kept whole, and the main-graph values its subgraphs
//    capture count as its operands.
//  - A cut that is a node result becomes a graph input of the same name
//    (its node goes unless an output needs it otherwise: then the cut wins,
//    every use reads the input). A cut that is a graph input stays one.
//    A cut on an initializer is an error: it is no boundary.
//  - The outputs are exactly the chosen values, in order; a chosen value
//    may be a cut itself.
//  - Graph inputs and initializers nothing uses any more are removed (a
//    cut is kept even when unused: it is part of the interface asked for).
//    Functions and opset imports stay as they are.
//  - Types: a cut or output given an element type (and dims) is declared
//    with that tensor type; otherwise it keeps the value's own type.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_EVAL_EXTRACT_H
#define ONNXIR_EVAL_EXTRACT_H

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// A value of the main graph by name, with the tensor type to declare for it
/// (unset: the value's own type).
struct ExtractValue {
  std::string name;
  std::optional<DataType> elemType;
  std::optional<std::vector<int64_t>> dims;
};

/// Cuts `m`'s main graph down to what computes `outputs` from `cuts`
/// (Note [Extraction]). Errors name the value; on an error `m` may be
/// partly changed (work on a copy).
absl::Status extractSubgraph(Model &m, llvm::ArrayRef<ExtractValue> cuts,
                             llvm::ArrayRef<ExtractValue> outputs);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_EVAL_EXTRACT_H
