//===- Inspect.h - Views of a model: JSON summary, DOT/Mermaid, diff -------===//
//
// Read-only views of a model for people and scripts (issue 42 items 5-7):
//
//   inspectModelJson   a summary as JSON (docs/inspect.schema.json): I/O with
//                      types, op histogram per domain, node and initializer
//                      counts, bytes per element type, opsets, functions,
//                      external data files and the fusion census of a run.
//   renderGraphView    the graph as Graphviz DOT or a Mermaid flowchart.
//   diffModels         a structural comparison of two models (Diff.h).
//
// onnx-opt's --emit=json/dot/mermaid/svg, onnxir-diff and the Python
// functions onnxir.inspect/view/diff all call these, so their outputs agree.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_INSPECT_INSPECT_H
#define ONNXIR_INSPECT_INSPECT_H

#include "onnxir/Passes/Pass.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <string>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;

/// The fusion census of a pipeline run: the fused ops its fusions made, per
/// op (the `fuse: made <Op>` counters, Note [Fusion census] in
/// Passes/PatternRewrite.h).
std::map<std::string, int64_t> fusionCensus(const PassStatistics &stats);

struct InspectOptions {
  /// The statistics of the pipeline that produced the model, if one ran:
  /// their census is the summary's `fusion_census` (else it is empty).
  const PassStatistics *statistics = nullptr;
  /// Indent the JSON by this many spaces per level (0: one line).
  unsigned indent = 2;
};

/// The summary of `m` as a JSON object (keys: docs/inspect.schema.json).
/// Reads no tensor data: external tensors are counted from their references.
std::string inspectModelJson(const Model &m, const InspectOptions &opts = {});

enum class ViewFormat { Dot, Mermaid };

struct ViewOptions {
  ViewFormat format = ViewFormat::Dot;
  /// 0: every node. N > 0: nodes of the main graph whose names (split on
  /// '/' and '.') have more than N parts are drawn as one box per group of
  /// their first N parts, with the group's node count (Note [Collapsed
  /// views] in lib/Inspect/View.cpp).
  unsigned collapseDepth = 0;
};

/// The main graph of `m` (subgraphs as clusters) as DOT or Mermaid text.
std::string renderGraphView(const Model &m, const ViewOptions &opts = {});

/// `dot -Tsvg` of `dotText`, through the Graphviz `dot` found on PATH; an
/// error saying so when there is none or it fails.
absl::StatusOr<std::string> renderSvgWithGraphviz(const std::string &dotText);

} // namespace onnxir
ONNXIR_API_END

#endif
