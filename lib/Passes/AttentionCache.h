//===- AttentionCache.h - Masks of attention with a KV cache ---------------===//
//
// What AttentionCache.cpp (fuse-attention-kv-cache) asks of the mask
// matchers of AttentionMasks.cpp: whether an attn_mask over a past cache
// and the step's keys is the bottom-right causal triangle (Note
// [Past-length causal offset]). Private to lib/Passes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_PASSES_ATTENTIONCACHE_H
#define ONNXIR_LIB_PASSES_ATTENTIONCACHE_H

#include "onnxir/IR/Model.h"

namespace onnxir {
namespace attention {

/// The past caches of an Attention with a KV cache, [B, H, P, D] each: P,
/// their dim 2, is the past length that masks may read through Shape.
/// Both null: no past.
struct PastCaches {
  const Value *k = nullptr;
  const Value *v = nullptr;
};

/// True if the attn_mask `mask` (bool: true = attend, or Not of the masked
/// positions; else additive of type `et`) of scores [.., sq, skv], skv =
/// P + the step's keys, provably attends key j from query i exactly when
/// j <= i + P, P the length of `past` (Note [Past-length causal offset]).
bool provablyCausalPast(const Value *mask, const PastCaches &past, const Dim &sq, const Dim &skv,
                        DataType et);

} // namespace attention
} // namespace onnxir

#endif // ONNXIR_LIB_PASSES_ATTENTIONCACHE_H
