//===- ConstantFolding.h - Evaluate constant subgraphs at compile time ----===//
//
// foldConstants() evaluates every node whose inputs are all constants with
// our own kernels (Kernels.h) and replaces its results by initializers, in
// every graph: the main graph, nested subgraphs and function bodies (where
// results become Constant nodes, since a FunctionProto has no initializers).
//
// Note [What is constant]
//   An initializer that is not also a graph input (a graph input with a
//   default can be overridden by the caller), the result of a Constant node
//   (without attribute references), or a result folded earlier in the same
//   run. `Shape` and `Size` (and so shape-of-shape chains) also fold when
//   their input's type has a fully static shape. An `If` whose condition is
//   constant is replaced by the taken branch. Nondeterministic operators
//   (Random*, Bernoulli, Multinomial, Dropout in training mode) never fold.
//
// Note [Fold budget]
//   No produced tensor may exceed `sizeLimit` bytes. Folded nodes are grouped
//   into connected components; a component's cost is the estimated
//   serialized bytes it adds to the model: the tensors that must be kept
//   (used by unfolded nodes or graph outputs), minus the constants that die
//   with it (initializers, Constant nodes) and the folded nodes themselves
//   (a NodeProto's names and attributes). Components are accepted cheapest
//   first while the total growth stays within `growthLimit` (0: the model
//   never grows). So ConstantOfShape, Expand, Tile and Range fold only when
//   their results are small or feed a reduction, while a Cast of a scalar
//   Constant folds even though int64 is wider than int32.
//
// Note [Fold declines]
//   A node whose inputs are all constant is still left alone when its op has
//   no kernel, the kernel refuses (an error for these inputs), it is
//   nondeterministic or of another domain with side effects, a result it
//   uses is one the kernel does not compute, a result's declared element type
//   (its type, graph output declaration or value_info) differs from the
//   kernel's, or the size limit or growth budget is exceeded; and a node
//   whose inputs are constant but for initializers that are also graph
//   inputs (overridable defaults: freeze-initializer-inputs makes them
//   constants). Each is counted
//   in FoldStatistics and shown by -stats as "fold-constants: declined
//   (why) = N", for the last round. A node of a function body whose
//   attribute refers to the caller's (`@p`) is not counted: its value
//   differs per call, so it is no missed fold.
//
// Note [Names]
//   A folded result keeps its name: the new initializer takes the old name
//   once the node is gone, so graph outputs keep their names. Node
//   metadata_props move onto the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_CONSTANTFOLDING_H
#define ONNXIR_PASSES_CONSTANTFOLDING_H

#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

#include <cstdint>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;

/// Knobs of foldConstants (see Note [Fold budget]).
struct FoldOptions {
  /// Largest tensor (bytes) a fold may produce.
  uint64_t sizeLimit = 1u << 20;
  /// By how many bytes the model's constants may grow in total.
  int64_t growthLimit = 0;
  /// Fold Shape/Size from static value types.
  bool foldShapes = true;
  /// Replace If nodes with a constant condition by the taken branch.
  bool inlineConstantIf = true;
  /// Fold DequantizeLinear of constants too (Note [Dequantize stays], .cpp):
  /// off, a quantized weight stays quantized.
  bool foldDequantize = false;
  /// Rounds of fold + If inlining at most (each round can expose more).
  unsigned maxRounds = 8;
  /// Shape data the shape computations fold from (Note [Shape data budget]
  /// in ShapeInference.cpp): elements per value at most.
  uint64_t shapeDataLimit = kDefaultShapeDataLimit;
};

/// What a run did.
struct FoldStatistics {
  int64_t nodesFolded = 0;
  int64_t ifsInlined = 0;
  int64_t constantsMaterialized = 0;
  int64_t deadConstantsRemoved = 0;
  int64_t bytesAdded = 0;
  int64_t bytesFreed = 0;
  // Nodes with constant inputs left unfolded, by why (Note [Fold declines]).
  int64_t rejectedByBudget = 0;  ///< because of growthLimit
  int64_t rejectedBySize = 0;    ///< a result exceeded sizeLimit
  int64_t unsupported = 0;       ///< no kernel
  int64_t kernelFailed = 0;      ///< the kernel refused the inputs or attributes
  int64_t nondeterministic = 0;  ///< Note [What is constant]
  int64_t sideEffects = 0;       ///< an op of another domain that may have some
  int64_t resultNotComputed = 0; ///< a used optional result the kernel leaves out
  int64_t declaredTypeMismatch = 0; ///< Note [Declared element types] (.cpp)
  int64_t inputDefaults = 0;     ///< an operand is a graph input's initializer
  int64_t dequantizeKept = 0;    ///< Note [Dequantize stays] (.cpp)
  /// The -stats names (Note [Pass definitions in one place], Pass.h).
  template <class F> void forEach(F &&f) const {
    f("nodes folded", nodesFolded);
    f("If nodes inlined", ifsInlined);
    f("constants materialized", constantsMaterialized);
    f("dead constants removed", deadConstantsRemoved);
    f("bytes added", bytesAdded);
    f("bytes freed", bytesFreed);
    f("declined (growth budget)", rejectedByBudget);
    f("declined (size limit)", rejectedBySize);
    f("declined (no kernel)", unsupported);
    f("declined (kernel error)", kernelFailed);
    f("declined (nondeterministic)", nondeterministic);
    f("declined (side effects)", sideEffects);
    f("declined (result not computed)", resultNotComputed);
    f("declined (declared type)", declaredTypeMismatch);
    f("declined (initializer is a graph input)", inputDefaults);
    f("declined (dequantize, fold-dq=false)", dequantizeKept);
  }
};

/// Folds constants in `m`; true if anything changed. A folded result whose
/// shape contradicts the value's declared type is a warning appended to
/// `warnings` when given (Note [Folded shapes against declarations], .cpp).
absl::StatusOr<bool> foldConstants(Model &m, const FoldOptions &opts = {},
                                   FoldStatistics *stats = nullptr,
                                   std::vector<std::string> *warnings = nullptr);

/// The `fold-constants` pass is created by createConstantFoldingPass()
/// (Passes.h): options `size-limit` and `growth-limit` (byte counts; global
/// flags `--fold-size-limit`, `--fold-growth-limit`) and `shape-data-limit`
/// (global flag `--shape-data-limit`, shared with infer-shapes).

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_CONSTANTFOLDING_H
