//===- Simplify.h - Remove no-op nodes and collapse chains ----------------===//
//
// Exact rewrite patterns (lib/Passes/Simplify.cpp) that use constant
// operands, attributes and the static shapes and element types values
// declare or were given by -infer-shapes:
//   reshape-noop, expand-noop, tile-noop, pad-noop, cast-noop,
//   transpose-noop, concat-one, split-one, slice-noop,
//   sub-zero, mul-one, div-one, add-zero                 (the node is removed)
//   reshape-chain, transpose-chain, cast-chain           (two nodes become one)
//   squeeze-unsqueeze, unsqueeze-squeeze                 (a pair disappears)
//   reshape-symbolic-shape              (a computed Reshape shape -> constant)
// in lib/Passes/SimplifyChains.cpp (populateSimplifyChainPatterns):
//   squeeze-chain, unsqueeze-chain, slice-chain          (two nodes become one)
//   flatten-noop, idempotent-<op> (Relu, Floor, Ceil, Round, Sign, Abs twice)
//   where-not (Where(Not(c), a, b) -> Where(c, b, a)), concat-nested,
//   reduce-unsqueeze (ReduceX(keepdims = 0) + Unsqueeze -> keepdims = 1)
// and, in lib/Passes/TransposeMotion.cpp (populateTransposeMotionPatterns):
//   reshape-gemm-matmul          (Reshape/Gemm/Reshape -> MatMul + Add)
//   transpose-cancel             (a Transpose pair around last-axis ops goes)
// and, in lib/Passes/ReshapeTargets.cpp (populateReshapeTargetPatterns):
//   reshape-target-dims, expand-target-dims  (a target computed from Shape
//                                these dims -> a constant with 0/-1, 1)
// Folding Shape/Size and shape arithmetic to constants is fold-constants'
// job (it folds them once shapes are static).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_SIMPLIFY_H
#define ONNXIR_PASSES_SIMPLIFY_H

#include "onnxir/Passes/PatternRewrite.h"
#include "onnxir/Support/Export.h"

ONNXIR_API_BEGIN
namespace onnxir {

/// Adds the simplification patterns to `ps`.
void populateSimplifyPatterns(PatternSet &ps);
/// Adds the patterns of SimplifyChains.cpp; populateSimplifyPatterns calls it.
void populateSimplifyChainPatterns(PatternSet &ps);
/// Adds reshape-gemm-matmul and transpose-cancel (TransposeMotion.cpp);
/// populateSimplifyPatterns calls it.
void populateTransposeMotionPatterns(PatternSet &ps);
/// Adds reshape-target-dims and expand-target-dims (ReshapeTargets.cpp);
/// populateSimplifyPatterns calls it.
void populateReshapeTargetPatterns(PatternSet &ps);

/// Applies them greedily in every graph; true if anything changed.
/// `disabled`: pattern names not to apply, comma-separated.
absl::StatusOr<bool> simplify(Model &m, RewriteStatistics *stats = nullptr,
                              llvm::StringRef disabled = "");

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_SIMPLIFY_H
