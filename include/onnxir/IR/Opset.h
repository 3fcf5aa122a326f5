//===- Opset.h - Which opset version governs a node -----------------------===//
//
// The one answer to "which version of domain D is in force here", used by the
// schema lookup (and so the verifier), shape inference, constant folding and
// the rewriter. See Note [Opset in force].
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_OPSET_H
#define ONNXIR_IR_OPSET_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class Model;
class Node;
struct OpsetImport;

//===--- Note [Opset in force] --------------------------------------------===//
// The version of domain D in force for a node is read from the opset_import
// list of the node's top-level graph (through any nesting of subgraphs):
//  - in a model-local function body, the function's own opset_import; if it
//    does not list D, the model's;
//  - elsewhere, the model's opset_import.
// "" and "ai.onnx" are the same domain. A list that imports D more than once
// (the IR keeps such lists as they are, for a lossless round trip) resolves to
// the LAST entry for D: that is what ONNX's checker (1.12: a map filled in
// list order) and onnxruntime (Model's domain_to_version, "ai.onnx" folded
// into "") do, so a model means here what it means to them. -1: D is not
// imported (or the graph belongs to no model nor function).

/// True for "" and "ai.onnx", the two names of the default domain.
bool isDefaultDomain(llvm::StringRef domain);
/// "" for the default domain, else `domain` unchanged.
llvm::StringRef canonicalDomain(llvm::StringRef domain);

/// The version of `domain` in `imports`: the last entry for it, else -1.
int64_t opsetVersionIn(llvm::ArrayRef<OpsetImport> imports, llvm::StringRef domain);
/// The version of `domain` in force in graph `g` (at any nesting depth).
int64_t opsetInForce(const Graph &g, llvm::StringRef domain);
/// The version of `domain` in force for `n`; the one-domain form asks for the
/// node's own domain. A node in no graph: -1.
int64_t opsetInForce(const Node &n, llvm::StringRef domain);
int64_t opsetInForce(const Node &n);
/// As above for a node that `m` holds when its graph may not know its model
/// (the verifier's view): the function's imports, else `m`'s.
int64_t opsetInForce(const Node &n, const Model &m);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_OPSET_H
