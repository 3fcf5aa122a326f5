//===- ShapeInference.h - Type and shape inference ------------------------===//
//
// inferShapes() gives every value it can an element type and a shape whose
// dims are integers, symbols or symbolic expressions (DimExpr.h), and writes
// them back: as the type of each Value, as value_info records of typed
// intermediate values, and as the declared types of graph outputs.
//
// Note [Merging inferred and declared types]
// Inference refines and never contradicts what a model declares: a dim goes
// unknown -> symbol -> expression -> integer, a missing shape or element
// type is filled in. When a declared type and an inferred one disagree (two
// different integers, ranks or element types) the declared one is kept and a
// warning names the value; in strict mode that is an error. An operator the
// engine does not know, or whose result depends on data it cannot see,
// leaves its results as they are: it never guesses.
//
// Shape-valued int64/int32 tensors (results of Shape, Size and arithmetic,
// Gather, Slice, Concat, ... on them) are tracked element by element as dim
// expressions, so a Reshape whose shape is computed in the graph still gets
// a shape (partial data propagation).
//
// Subgraphs: If results merge both branches (equal dims stay, different dims
// become a fresh symbol); Loop and Scan bodies get their input types from the
// outer operands, loop-carried types are iterated to a fixed point (dims that
// change between iterations are widened to unknown), scan outputs get the
// iteration dim. Calls of model-local functions are inferred per call site
// with the call's input types and attributes (the body itself is not
// annotated, since its types depend on the call).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_SHAPEINFERENCE_H
#define ONNXIR_PASSES_SHAPEINFERENCE_H

#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;
class Value;

/// Shape-valued data (the int64 contents inference tracks, see above) costs
/// memory per element, and Concat(v, v) doubles it per node: 30 nodes would
/// be 2^30 elements. A value's data is kept only up to this many elements,
/// more than any shape (ranks above 4096 are not believed from data) needs.
inline constexpr uint64_t kDefaultShapeDataLimit = 4096;

struct ShapeInferenceOptions {
  /// Only give graph outputs their inferred types; add no value_info records.
  bool outputsOnly = false;
  /// A contradiction between a declared and an inferred type is an error.
  bool strict = false;
  /// Shapes that replace those of main-graph inputs before inference:
  /// {name, "1,3,224,224"} or {name, "N,3,H,W"} (dims: integers, `?`, symbols
  /// or expressions). An unknown input name is an error.
  std::vector<std::pair<std::string, std::string>> inputShapes;
  /// Symbols fixed to integers before inference (every dim mentioning them
  /// is re-evaluated): {"batch", 1}.
  std::vector<std::pair<std::string, int64_t>> bindDims;
  /// Note [Shape data budget]: the most elements of tracked shape data one
  /// value may have; a value whose data would be longer has none (its type
  /// is still inferred).
  uint64_t dataLimit = kDefaultShapeDataLimit;
};

struct ShapeInferenceStatistics {
  int64_t valuesTyped = 0;       ///< values that had no type and got one
  int64_t valuesRefined = 0;     ///< values whose type became more precise
  int64_t valueInfosAdded = 0;   ///< value_info records written
  int64_t contradictions = 0;    ///< declared and inferred types disagreed
  int64_t nodesNotInferred = 0;  ///< nodes the engine had no rule for
  int64_t dataOverLimit = 0;     ///< values whose data exceeded dataLimit
  /// initializers that are graph inputs whose contents a rule asked for
  /// (not given: they are overridable defaults)
  int64_t inputDefaultsUnread = 0;
  /// The -stats names (Note [Pass definitions in one place], Pass.h).
  template <class F> void forEach(F &&f) const {
    f("values typed", valuesTyped);
    f("values refined", valuesRefined);
    f("value_info records added", valueInfosAdded);
    f("contradictions", contradictions);
    f("nodes without a rule", nodesNotInferred);
    f("values with shape data over the limit", dataOverLimit);
    f("initializers that are graph inputs, not read", inputDefaultsUnread);
  }
};

/// Infers types and shapes in the whole model (see the file comment).
/// Warnings (contradictions, in non-strict mode) are appended to `warnings`
/// when given. Returns whether any type changed.
absl::StatusOr<bool> inferShapes(Model &m, const ShapeInferenceOptions &opts = {},
                                 ShapeInferenceStatistics *stats = nullptr,
                                 std::vector<std::string> *warnings = nullptr);

/// A value whose contents inference knows: an int32/int64/bool tensor of
/// rank 0 or 1 computed from shapes (Shape, Size, arithmetic, Gather, ...).
struct KnownShapeData {
  int32_t elem = 0;    ///< DataType number
  bool scalar = false; ///< rank 0 (else rank 1 of values.size())
  std::vector<int64_t> values;
};
/// Runs inference without changing the model and returns the node results
/// (outside function bodies) whose contents it knows. fold-constants uses it
/// to fold shape computations.
absl::StatusOr<llvm::DenseMap<const Value *, KnownShapeData>>
inferShapeData(Model &m, uint64_t dataLimit = kDefaultShapeDataLimit);

/// Parses `--input-shape` text: `x:1,3,224,224;y:N,3` (entries separated by
/// ';'). Errors name the bad entry.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
parseInputShapes(const std::string &text);
/// Parses `--bind-dim` text: `N=1;H=224` (or ',' between entries).
absl::StatusOr<std::vector<std::pair<std::string, int64_t>>>
parseBindDims(const std::string &text);

/// Registers `infer-shapes` with options --input-shape, --bind-dim,
/// --infer-shapes-outputs-only, --infer-shapes-strict, --shape-data-limit.
void registerShapeInferencePass();

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_SHAPEINFERENCE_H
