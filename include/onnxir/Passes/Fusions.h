//===- Fusions.h - Operator fusions and inference-mode cleanups -----------===//
//
// Rewrite patterns (PatternRewrite.h) that fold one node into another. Each
// states its numerical contract next to its code (lib/Passes/Fusions.cpp).
// Common rules:
//  - the intermediate value has exactly one use, in its own graph, and is
//    not a graph output (no other graph sees it);
//  - a graph output keeps its name and type;
//  - folded operands must be constants (initializers that are not graph
//    inputs, or Constant nodes) of element type float, with shapes that
//    the rule needs known from the tensor itself; ranks of other values come
//    from their declared types (or inferred ones, once -infer-shapes ran);
//  - a rule applies only at the opset versions it was written for.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_FUSIONS_H
#define ONNXIR_PASSES_FUSIONS_H

#include "onnxir/Passes/PatternRewrite.h"

namespace onnxir {

struct FusionOptions {
  /// Also turn a BatchNormalization that no Conv absorbs into Mul + Add
  /// (for targets without a BatchNormalization kernel). Off by default.
  bool batchNormToMulAdd = false;
  /// Patterns not to apply, comma-separated (`fuse-conv-mul,remove-dropout`).
  std::string disabledPatterns;
};

/// Adds the fusion patterns:
///   fuse-conv-bn            Conv/ConvTranspose + BatchNormalization (inference)
///   fuse-conv-add           Conv + Add of a per-channel constant -> bias
///   fuse-conv-mul           Conv + Mul by a per-channel constant -> weights
///   fuse-matmul-add-gemm    MatMul + Add -> Gemm (2-D operands)
///   fuse-transpose-gemm     Transpose(perm=[1,0]) -> Gemm transA/transB
///   remove-dropout          Dropout in inference mode -> its input
///   remove-identity         Identity -> its input
///   bn-to-mul-add           BatchNormalization -> Mul + Add (if asked)
///   fuse-attention          softmax(Q·Kᵀ*scale [+mask])·V -> Attention (opset >= 23)
void populateFusionPatterns(PatternSet &ps, const FusionOptions &opts = {});

/// Adds the attention patterns (lib/Passes/AttentionFusion.cpp).
void populateAttentionPatterns(PatternSet &ps);

/// Applies the fusion patterns greedily in every graph.
absl::StatusOr<bool> fuseOperators(Model &m, const FusionOptions &opts = {},
                                   RewriteStatistics *stats = nullptr);

} // namespace onnxir

#endif // ONNXIR_PASSES_FUSIONS_H
