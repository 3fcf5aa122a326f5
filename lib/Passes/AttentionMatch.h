//===- AttentionMatch.h - What the attention patterns share ---------------===//
//
// The attention fusions (populateAttentionPatterns, Fusions.h) are split by
// form, one file each:
//   AttentionFusion.cpp  fuse-attention: softmax(Q·Kᵀ * scale [+ mask]) · V
//                        -> Attention, fuse-attention-shape-use and
//                        fuse-attention-mask-view, and the pattern list;
//   AttentionMatch.cpp   the matchers every form uses (reports, scale
//                        placements, transposes), declared here;
//   AttentionMasks.cpp   additive and boolean masks, causal masks;
//   AttentionHeads.cpp   head split and merge (4-D, packed, sequence-first,
//                        through a rotation): the 3-D form, and the pattern
//                        fuse-attention-heads;
//   AttentionGQA.cpp     fuse-attention-gqa (Note [Grouped KV heads]);
//   AttentionRotary.cpp  fuse-rotary-embedding (rotate-half and
//                        interleaved) and fuse-rotary-partial.
// Private to lib/Passes.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_PASSES_ATTENTIONMATCH_H
#define ONNXIR_LIB_PASSES_ATTENTIONMATCH_H

#include "onnxir/IR/Model.h"
#include "onnxir/Passes/PatternRewrite.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxir {
namespace attention {

//===--- Reports ----------------------------------------------------------===//

/// A candidate that a guard rejected (Note [Near-miss reports]): `guard`
/// names the guard (a short stable word), `why` names the nodes and values.
/// Returns false (nothing changed) so that `return miss(...)` ends a
/// pattern. Candidates are rare (a Softmax feeding a MatMul, an Add of two
/// Muls over a Concat), so the messages are built unconditionally.
bool miss(PatternRewriter &rw, llvm::StringRef guard, const std::string &why);
/// A node in a report: its name, or the value it makes (`-> 'p'`).
std::string q(const Node *n);
/// A value in a report: its name, quoted.
std::string q(const Value *v);
/// A number in a report (ostream's default form).
std::string num(double x);
/// A dim in a report: its value, its symbol, or `?`.
std::string dimStr(const Dim &d);
/// A dim known to be 1.
bool isOne(const Dim &d);
/// `m` is `s` wherever the model runs: the same dim, or min(s, constants of
/// at least 2), a slice of a fixed buffer broadcast against s (Note [Slices
/// of fixed buffers], IR/DimExpr.h).
bool seqSame(const Dim &m, const Dim &s);

//===--- Shared matchers --------------------------------------------------===//

/// No attribute of `n` refers to a function attribute (we read their values).
bool plainAttributes(const Node &n);

/// The value of a float constant `c` of one element combined elementwise
/// with `x`, which the fused op absorbs: only when it cannot broadcast x up
/// (rank <= x's known rank) and has x's element type where that is known.
std::optional<double> absorbedScalar(const Value *c, const Value *x);

/// Peels a Mul or Div of `v` by a scalar float constant (single local use):
/// returns the other operand and multiplies `scale` by the factor.
Value *peelScale(Value *v, PatternRewriter &rw, double &scale, std::vector<Node *> &seen);

/// Peels c * tanh(v / c) off the scores `v` (Note [Softcap]): returns the
/// capped value and sets `cap` to c, or returns `v`.
Value *peelSoftcap(Value *v, PatternRewriter &rw, double &cap);

/// A tensor seen as Transpose(src, perm) (perm empty: src itself).
struct Permuted {
  Value *src = nullptr;
  std::vector<int64_t> perm;
  bool identity() const {
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != (int64_t)i) return false;
    return true;
  }
};

/// The permutation of a Transpose node (its default reverses the axes).
std::optional<std::vector<int64_t>> transposePerm(const Node &t);

/// `v` as a permutation of another value: through a Transpose with a single
/// local use, or itself.
Permuted asPermuted(Value *v, PatternRewriter &rw);

//===--- Masks (AttentionMasks.cpp) ---------------------------------------===//

/// What fuse-attention matched, from the root MatMul (probabilities · V) up.
struct AttentionMatch {
  Node *softmax = nullptr;
  Value *q = nullptr;  ///< Q (scale factors peeled off)
  Permuted k;          ///< K = Transpose(k.src, k.perm) (the un-transposed Kᵀ)
  Value *v = nullptr;  ///< V
  double scale = 1.0;
  double softcap = 0; ///< Note [Softcap]: 0 = none
  Value *mask = nullptr; ///< the attn_mask operand (bool: true = attend)
  bool boolMask = false;
  bool maskNegated = false; ///< attend = Not(mask)
  /// The Where filled the element type's lowest finite value (torch's
  /// finfo.min), not -inf: `lowestFill` is that constant, and attn_mask is
  /// the additive Where(mask, 0, lowest) (Note [Masks filled with finfo.min]).
  Value *lowestFill = nullptr;
  /// An additive mask built from a constant holding the element type's
  /// lowest value L (Note [Masks filled with finfo.min]): the mask itself
  /// (`lowestConst` = mask), or `lowestFactor` * `lowestConst` with an
  /// integer-valued factor and a scalar L. Attention gets L/2 for L.
  Value *lowestConst = nullptr;
  Value *lowestFactor = nullptr;
  /// An additive mask of Wheres over 0 and L only (Note [Additive masks of
  /// 0 and the lowest value]): the mask itself; attn_mask is Where(attend,
  /// 0, L/2), attend the boolean those Wheres read.
  Value *zeroLowest = nullptr;
  /// An additive bias under a boolean mask's Where, Where(c, fill,
  /// scores + bias) (ALiBi with a padding mask, Note [A bias under a
  /// boolean mask]): attn_mask is the float Where(c, bias, fill).
  Value *bias = nullptr;
  bool expandQ = false;     ///< the mask is 1 along q_seq (Note [Attention mask shape])
  bool causal = false;
};

/// Peels the mask off the softmax input `s` into `m`; returns the scores
/// below it (`s` when there is no mask), or null after reporting a mask
/// that cannot be fused.
Value *peelMask(Value *s, PatternRewriter &rw, AttentionMatch &m);

/// The lowest finite value of a float type (float16 -65504, float
/// -3.4028235e38, ...), or nullopt for another type.
std::optional<double> lowestFinite(DataType t);

/// Note [Masks filled with finfo.min], additive masks: sets m.lowestConst
/// (and m.lowestFactor) when the additive mask m.mask of type `et` is a
/// constant holding L or integer * L. Returns false, with `why`, when a
/// constant holding L feeds the mask in another form (it may reach L, and
/// halving it is not known to keep the meaning).
bool additiveLowest(AttentionMatch &m, DataType et, PatternRewriter &rw, std::string &why);

/// A copy of the float, double or bfloat16 constant `t` with each entry
/// equal to its type's lowest value L replaced by L/2.
Tensor halvedLowest(const Tensor &t);

/// The mask's dims broadcast to `scores` (right-aligned, each 1 or equal)
/// without changing its shape, as Attention broadcasts attn_mask; its last
/// dim is the kv sequence length itself, its last but one the q sequence
/// length or 1 (`expandQ`: it must be expanded for onnxruntime). Otherwise
/// `why` says which dim does not.
bool maskBroadcasts(const Value *mask, const Value *scores, bool &expandQ, std::string &why);

/// True if the boolean `attend` (true = attend) is provably the lower
/// triangle j <= i of a [Sq, Skv] matrix with Sq = Skv the sequence dims of
/// the scores (with `negated`, the strict upper triangle of what is not
/// attended).
bool provablyCausal(const Value *attend, const Dim &sq, const Dim &skv, bool negated = false);
/// True if the additive mask `mask` of element type `et` is provably 0 on
/// and below the diagonal of the [Sq, Skv] scores (Sq = Skv) and -inf or
/// the type's lowest (finfo.min) above it (Note [Causal mask forms]).
bool provablyCausalAdditive(const Value *mask, const Dim &sq, const Dim &skv, DataType et);

//===--- Head split and merge (AttentionHeads.cpp) ------------------------===//

/// The head split `x` = Transpose(Reshape(x3, [B,S,H,D]), [0,2,1,3]) seen as
/// `p`: returns x3 ([B,S,H*D]) and H, or null.
Value *headSplitSource(const Permuted &p, PatternRewriter &rw, int64_t &heads);
/// headSplitSource, also through a RotaryEmbedding (4-D input, no
/// num_heads, single use) applied to the split heads: then `rope` is it.
Value *headSplitThroughRope(const Permuted &p, PatternRewriter &rw, int64_t &heads, Node *&rope);
/// timm's packed head split of Q, K, V out of one x3 [B,S,3*H*D]: x3 and H.
Value *packedHeadSplitSource(Value *q, Value *k, Value *v, int64_t &heads);
/// The head merge of a 4-D attention result `y` [B,H,S,Dv]: the Reshape
/// of its only use, Transpose [0,2,1,3], to [B,S,H*Dv] (H = `heads`).
Node *headMerge(Value *y, int64_t heads);
/// The sequence-first head split (Note [Sequence-first heads]): t and H.
Value *seqFirstHeadSplit(const Permuted &p, PatternRewriter &rw, int64_t &heads);
/// The sequence-first head merge of a 3-D attention result `y` (Note
/// [Sequence-first heads]); `s`, `b` the dims of Q's t.
Node *seqFirstHeadMerge(Value *y, int64_t heads, const Dim &s, const Dim &b);
/// RotaryEmbedding `r` (of split heads) applied to x3 [B,S,H*D] instead
/// (Note [Rotary before the head split]).
Value *ropeOnHidden(Node *r, Value *x3, int64_t heads, PatternRewriter &rw);

//===--- The patterns -----------------------------------------------------===//

/// fuse-attention-heads: a 4-D Attention between a head split and merge
/// becomes the 3-D form (AttentionHeads.cpp).
bool attentionHeads(Node &a, PatternRewriter &rw);
/// fuse-attention-gqa (AttentionGQA.cpp).
bool attentionGroupedKV(Node &a, PatternRewriter &rw);
/// fuse-rotary-embedding (AttentionRotary.cpp).
bool fuseRotaryEmbedding(Node &add, PatternRewriter &rw);
/// A 4-D Attention of Concat(past, k) and Concat(past, v) along the
/// sequence -> past_key/past_value inputs, present_* outputs (Note [KV
/// caches], AttentionCache.cpp).
bool attentionKVCache(Node &a, PatternRewriter &rw);
/// Expand(m, Shape(scores)) or ConstantOfShape(Shape(scores)) re-broadcast
/// against the scores -> m or the fill value (Note [Scores read for their
/// shape], AttentionFusion.cpp).
bool scoresShapeUse(Node &shape, PatternRewriter &rw);
/// A mask applied on a 4-D view of 3-D scores, viewed back (before or after
/// the Softmax) -> the mask applied on the 3-D scores (Note [Masks on a 4-D
/// view of 3-D scores], AttentionFusion.cpp).
bool attentionMaskView(Node &back, PatternRewriter &rw);
/// Concat(RotaryEmbedding(x[..., :rd]), x[..., rd:]) -> RotaryEmbedding with
/// rotary_embedding_dim rd (Note [Partial rotary]).
bool fuseRotaryPartial(Node &cat, PatternRewriter &rw);

} // namespace attention
} // namespace onnxir

#endif // ONNXIR_LIB_PASSES_ATTENTIONMATCH_H
