//===- AttentionCache.h - Masks of attention with a KV cache ---------------===//
//
// What AttentionCache.cpp (fuse-attention-kv-cache) and AttentionWindow.cpp
// (fuse-attention-window) ask of the mask matchers of AttentionMasks.cpp:
// whether an attn_mask over a past cache and the step's keys is the
// bottom-right causal triangle (Note [Past-length causal offset]), and the
// diagonal band a comparison or Trilu keeps (Note [Sliding windows]).
// Private to lib/Passes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_PASSES_ATTENTIONCACHE_H
#define ONNXIR_LIB_PASSES_ATTENTIONCACHE_H

#include "onnxir/IR/Model.h"
#include "onnxir/Passes/PatternRewrite.h"

#include <cstdint>
#include <optional>

namespace onnxir {
namespace attention {

/// The past caches of an Attention with a KV cache, [B, H, P, D] each: P,
/// their dim 2, is the past length that masks may read through Shape.
/// Both null: no past.
struct PastCaches {
  const Value *k = nullptr;
  const Value *v = nullptr;
};

/// An integer c + p * P, P the past length of PastCaches (0 without).
struct Affine {
  int64_t c = 0, p = 0;
  bool operator==(const Affine &o) const { return c == o.c && p == o.p; }
};

/// A one-element integer value as c + p * P (an integer constant; with a
/// past, P read through Shape and Gather, sums, differences, casts,
/// reshapes), or nullopt.
std::optional<Affine> affineOf(const Value *v, const PastCaches &past, int depth = 0);

/// The positions (i, j) where a boolean is true, as a bound on d = j - i:
/// d <= bound (`upper`) or d >= bound.
struct HalfPlane {
  bool upper = true;
  Affine bound;
};

/// A comparison of a row ramp and a column ramp (Note [Causal mask forms],
/// with P: Note [Past-length causal offset]) as the half plane where it is
/// true, or nullopt.
std::optional<HalfPlane> rampHalfPlane(const Node &cmp, const PastCaches &past);

/// Trilu of an all-true ConstantOfShape (torch.tril/triu of ones) as the
/// half plane it keeps true: lower d <= k, upper d >= k; or nullopt.
std::optional<HalfPlane> triluHalfPlane(const Node &tr, const PastCaches &past);

/// A constant of one element that is -inf or at most half the lowest value
/// of `et` (or a ConstantOfShape of it): a masking fill.
/// `mask` without up to two Expands that only broadcast its leading dims
/// (its last two dims, and so every (i, j) entry, unchanged).
const Value *throughLeadingExpands(const Value *mask);
bool isMaskFill(const Value *v, DataType et);
/// A constant of one element of type `et` equal to zero.
bool isZeroScalar(const Value *v, DataType et);

/// fuse-tensor-scatter: ScatterElements of a ramp of positions into a
/// static cache -> TensorScatter (Note [Static caches], AttentionCache.cpp).
bool staticCacheScatter(Node &s, PatternRewriter &rw);
/// fuse-tensor-scatter-nd: the slice assignment form, ScatterND over the
/// grid (b, h, positions) (Note [Static caches] (ScatterND)).
bool staticCacheScatterND(Node &s, PatternRewriter &rw);

/// fuse-attention-window (Note [Sliding windows], AttentionWindow.cpp).
bool attentionWindow(Node &a, PatternRewriter &rw);
/// fuse-attention-nonpad: a static cache's causal mask over the whole
/// cache -> is_causal with nonpad_kv_seqlen (Note [Static-cache causal
/// masks], AttentionCache.cpp).
bool attentionNonpad(Node &a, PatternRewriter &rw);

/// True if the attn_mask `mask` (bool: true = attend, or Not of the masked
/// positions; else additive of type `et`) of scores [.., sq, skv], skv =
/// P + the step's keys, provably attends key j from query i exactly when
/// j <= i + P, P the length of `past` (Note [Past-length causal offset]).
bool provablyCausalPast(const Value *mask, const PastCaches &past, const Dim &sq, const Dim &skv,
                        DataType et);
/// The boolean `c` (true = attend; `negated`: true = masked) of scores
/// [.., sq, skv] (leading dims broadcast) is provably that causal triangle
/// offset by the length of `past`.
bool provablyCausalPastBool(const Value *c, bool negated, const PastCaches &past, const Dim &sq, const Dim &skv);

} // namespace attention
} // namespace onnxir

#endif // ONNXIR_LIB_PASSES_ATTENTIONCACHE_H
