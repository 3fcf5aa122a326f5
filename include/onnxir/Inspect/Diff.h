//===- Diff.h - A structural comparison of two models ----------------------===//
//
// diffModels matches the nodes of two models by structure, not by name
// (Note [Structural matching] in lib/Inspect/Diff.cpp), so a model and its
// renamed, reordered copy are equal. What differs is listed: nodes added,
// removed or changed (attributes with old and new values, inputs wired
// differently), initializers (element type, shape, max abs value
// difference), graph inputs and outputs (by name: added, removed, retyped),
// opset imports, ir_version and model-local functions.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_INSPECT_DIFF_H
#define ONNXIR_INSPECT_DIFF_H

#include "onnxir/Support/Export.h"

#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;

struct ModelDiff {
  /// One difference. `kind`: node_added, node_removed, node_changed,
  /// initializer_added, initializer_removed, initializer_changed,
  /// input_added, input_removed, input_changed, output_added,
  /// output_removed, output_changed, opset_changed, ir_version_changed,
  /// function_added, function_removed. Names are "" on the side that has
  /// no such thing.
  struct Entry {
    std::string kind;
    std::string graph;      ///< graph path ("" the main graph)
    std::string op;         ///< node entries: domain-qualified op type
    std::string nameA, nameB;
    /// Node entries: the name of each node's first result (nodes are often
    /// unnamed).
    std::string outputA, outputB;
    /// What changed, each "what: old -> new" (an attribute, an input's
    /// producer, a type, a value difference).
    std::vector<std::string> details;
    /// initializer_changed with comparable values: max |a - b|.
    std::optional<double> maxAbsDiff;
  };
  std::vector<Entry> entries;
  /// Nodes each side has and how many were matched.
  size_t nodesA = 0, nodesB = 0, matched = 0;
  bool equal() const { return entries.empty(); }
};

/// Compares `a` and `b`. Reads initializer data (external data too) to
/// compare the values of matched initializers.
ModelDiff diffModels(const Model &a, const Model &b);

/// One line per entry, then a line `N differences` (or `equal up to names`).
std::string formatDiffText(const ModelDiff &d);
/// {"equal": bool, "nodes": {...}, "differences": [...]} (docs/diff.schema.json).
std::string formatDiffJson(const ModelDiff &d, unsigned indent = 2);

} // namespace onnxir
ONNXIR_API_END

#endif
