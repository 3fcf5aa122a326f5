//===- Fusions.h - Operator fusions and inference-mode cleanups -----------===//
//
// Rewrite patterns (PatternRewrite.h) that fold one node into another. Each
// states its numerical contract next to its code (lib/Passes/Fusions.cpp).
// Common rules:
//  - the intermediate value has exactly one use, in its own graph, and is
//    not a graph output (no other graph sees it);
//  - a graph output keeps its name and type;
//  - folded operands must be constants (initializers that are not graph
//    inputs, or Constant nodes) of element type float (fuse-conv-add-bias
//    also takes a bias that is not one and makes no arithmetic), with shapes that
//    the rule needs known from the tensor itself; ranks of other values come
//    from their declared types (or inferred ones, once -infer-shapes ran);
//  - a rule applies only at the opset versions it was written for.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_FUSIONS_H
#define ONNXIR_PASSES_FUSIONS_H

#include "onnxir/Passes/PatternRewrite.h"
#include "onnxir/Support/Export.h"

ONNXIR_API_BEGIN
namespace onnxir {

struct FusionOptions {
  /// Also turn a BatchNormalization that no Conv absorbs into Mul + Add
  /// (for targets without a BatchNormalization kernel). Off by default.
  bool batchNormToMulAdd = false;
  /// Patterns not to apply, comma-separated (`fuse-conv-mul,remove-dropout`).
  std::string disabledPatterns;
  /// Collect near-misses (Note [Near-miss reports], PatternRewrite.h) into
  /// RewriteStatistics::nearMisses.
  bool explain = false;
};

/// Adds the fusion patterns:
///   fuse-conv-bn            Conv/ConvTranspose + BatchNormalization (inference)
///   fuse-conv-add           Conv + Add of a per-channel constant -> bias
///   fuse-conv-mul           Conv + Mul by a per-channel constant -> weights
///   fuse-conv-add-bias      Conv (weight not a constant) + Add of a per-channel
///                           constant, or Conv without bias + Add of a
///                           per-channel value -> bias
///   fuse-pad-conv, fuse-pad-averagepool, fuse-pad-maxpool
///                           constant-mode Pad -> the consumer's pads (Note
///                           [Pad into pooling and Conv])
///   fuse-log-softmax        Log(Softmax) -> LogSoftmax (not bit-exact)
///   fuse-einsum-matmul      Einsum matrix product -> MatMul (+ Transpose)
///   fuse-matmul-add-gemm    MatMul + Add -> Gemm (2-D operands)
///   fuse-transpose-gemm     Transpose(perm=[1,0]) -> Gemm transA/transB
///   remove-dropout          Dropout in inference mode -> its input
///   remove-identity         Identity -> its input
///   bn-to-mul-add           BatchNormalization -> Mul + Add (if asked)
/// and those of populateNormFusionPatterns and populateAttentionPatterns.
void populateFusionPatterns(PatternSet &ps, const FusionOptions &opts = {});

/// The transformer normalisations and activations (NormFusions.cpp, issue
/// 28; guards in Note [Norm guards]):
///   fuse-layernorm          ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div
///                           [*scale] [+bias] -> LayerNormalization (>= 17)
///   fuse-rmsnorm            Pow/ReduceMean/Add/Sqrt/Div [*scale]
///                           -> RMSNormalization (>= 23)
///   fuse-gelu               x*0.5*(1+erf(x/sqrt2)) and the tanh form
///                           -> Gelu{approximate} (>= 20)
void populateNormFusionPatterns(PatternSet &ps);

/// Attention and rotary embedding (lib/Passes/Attention*.cpp, one file a
/// form, listed in AttentionMatch.h; issue 28; contract in Note [Attention
/// numerical contract]):
///   fuse-attention          softmax(Q·Kᵀ*scale [+mask])·V -> Attention (>= 23)
///   fuse-attention-heads    4-D Attention between a head split and merge
///                           -> the 3-D form (q_num_heads/kv_num_heads)
///   fuse-attention-gqa      4-D Attention over K and V repeated per head
///                           (HF repeat_kv) -> over the unrepeated K and V
///   fuse-rotary-embedding   x*cos + rotate_half(x)*sin -> RotaryEmbedding (>= 23)
void populateAttentionPatterns(PatternSet &ps);

/// Applies the fusion patterns greedily in every graph.
absl::StatusOr<bool> fuseOperators(Model &m, const FusionOptions &opts = {},
                                   RewriteStatistics *stats = nullptr);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_FUSIONS_H
