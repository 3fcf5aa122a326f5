//===- AttentionMasks.cpp - Attention masks -------------------------------===//
//
// The mask of fuse-attention: an additive mask, or a boolean one through
// Where with -inf or with the type's lowest value (Note [Masks filled with
// finfo.min]); its shape against the scores (Note [Attention mask
// shape]); masks that are provably causal (is_causal).
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"

#include <cmath>
#include <limits>

namespace onnxir {
namespace attention {

//===----------------------------------------------------------------------===//
// Causal masks
//===----------------------------------------------------------------------===//

bool provablyCausal(const Value *attend, const Dim &sq, const Dim &skv, bool negated) {
  if (!sameDim(sq, skv) || rankOf(attend) != 2 || !sameDim(dimOf(attend, 0), sq) ||
      !sameDim(dimOf(attend, 1), skv))
    return false;
  if (const Tensor *t = PatternRewriter::constantTensor(attend)) {
    if (t->dataType() != DataType::Bool || t->dims().size() != 2) return false;
    auto vals = t->values<int64_t>();
    int64_t n = t->dims()[0];
    if (!vals.ok() || t->dims()[1] != n || (int64_t)vals->size() != n * n) return false;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (((*vals)[i * n + j] != 0) != (negated ? j > i : j <= i)) return false;
    return true;
  }
  Node *tr = attend->definingNode();
  if (!tr || !tr->is("Trilu") || !plainAttributes(*tr) ||
      NodeContext(*tr).getInt("upper", 1) != (negated ? 1 : 0))
    return false;
  int64_t k = 0;
  if (tr->numOperands() > 1 && tr->operand(1)) {
    const Tensor *kt = PatternRewriter::constantTensor(tr->operand(1));
    auto kv = kt ? kt->values<int64_t>() : absl::StatusOr<std::vector<int64_t>>(absl::UnknownError(""));
    if (!kv.ok() || kv->size() != 1) return false;
    k = (*kv)[0];
  }
  if (k != (negated ? 1 : 0)) return false;
  Node *ones = tr->operand(0) ? tr->operand(0)->definingNode() : nullptr;
  if (!ones || !ones->is("ConstantOfShape") || !plainAttributes(*ones)) return false;
  const Attribute *val = ones->getAttr("value");
  if (!val || val->kind() != AttrKind::Tensor || val->tensors.empty() || !val->tensors.get()[0])
    return false;
  const Tensor &vt = *val->tensors.get()[0];
  if (vt.dataType() != DataType::Bool) return false;
  auto vv = vt.values<int64_t>();
  return vv.ok() && vv->size() == 1 && (*vv)[0] != 0;
}

std::optional<double> lowestFinite(DataType t) {
  switch (t) {
  case DataType::Float: return -(double)std::numeric_limits<float>::max();
  case DataType::Double: return -std::numeric_limits<double>::max();
  case DataType::Float16: return -65504.0;               // -(2 - 2^-10) * 2^15
  case DataType::BFloat16: return -0x1.fep127;           // -(2 - 2^-7) * 2^127
  default: return std::nullopt;
  }
}

// Note [Masks filled with finfo.min]
//   Hugging Face masks the scores with torch.finfo(dtype).min, the lowest
//   finite value L of their type, instead of -inf: Where(c, S, L) (or
//   Where(c, L, S)) before the Softmax. Attention's boolean mask is a bias
//   of -inf, which differs on a fully masked row: softmax of all-L entries
//   is uniform (the mean of V), of all -inf entries NaN in the graph and 0
//   in Attention. So the fill never becomes a boolean attn_mask but the
//   additive Where(c, 0, M) (Where(c, M, 0) when the Where fills where c is
//   true) of the scores' type, M = L/2, which Attention adds to the scaled
//   scores s. An attended entry gets s + 0 = s exactly, as in the graph; a
//   masked one s + M rounded, which is M itself while |s| is below half
//   the spacing of the values next to M: 2^102 for float (M = -1.7e38,
//   spacing 2^103), the same for bfloat16 summed in its own or in float
//   precision, 2^969 for double. Then, with M for L:
//    - a partially masked row: exp(L - max) and exp(M - max) both
//      underflow to exactly 0 beside any attended maximum above M + 746
//      (exp(-746) is below double's smallest subnormal): the masked keys
//      get weight 0 in both, the attended ones the same softmax;
//    - a fully masked row: all entries L in the graph, all M in Attention:
//      uniform in both.
//   M is not L itself because onnxruntime 1.30's Attention returns a zero
//   row where every biased score is the type's lowest value (it treats L
//   as masked, like -inf); M is a plain finite bias there too (checked on
//   onnxruntime by ort-fuse-attention, whose all-false `keep` masks every
//   row of attention-finfo-min). Scores beyond 1e30 in magnitude are
//   outside the contract. float16 is not covered: M = -32752 has spacing
//   16, so s + M keeps s once |s| >= 8 in float16 (and always when the sum
//   is formed in float, as runtimes do for float16): a fully masked row
//   would be softmax(s), not uniform. A float16 finfo.min mask is fused
//   only when it is provably causal (checkOperands reports the others). A
//   causal mask never masks the diagonal, so no row is fully masked, and
//   is_causal (a bias of -inf above the diagonal) gives the partially
//   masked rows' result above, for any type. Other large negative fills
//   (-1e9, -10000, float16's lowest in a float graph) are not L: a masked
//   entry is then s + fill, not a constant, and a fully masked row is
//   softmax(s); they are reported. A constant c makes a constant Where,
//   which fold-constants folds (-O2).
Value *peelMask(Value *s, PatternRewriter &rw, AttentionMatch &m) {
  Node *d = s->definingNode();
  if (!d || d->getGraph() != rw.root()->getGraph() || !PatternRewriter::hasSingleLocalUse(s))
    return s;
  auto isScores = [&](Value *x) {
    double unused = 1;
    std::vector<Node *> seen;
    Value *y = peelScale(x, rw, unused, seen);
    Node *mm = y ? y->definingNode() : nullptr;
    return mm && mm->is("MatMul") && PatternRewriter::hasSingleLocalUse(y);
  };
  if (d->is("Add") && d->numOperands() == 2) {
    for (unsigned i = 0; i < 2; ++i)
      if (isScores(d->operand(i))) {
        m.mask = d->operand(1 - i);
        return d->operand(i);
      }
  } else if (d->is("Where") && d->numOperands() == 3) {
    for (unsigned i = 1; i < 3; ++i) {
      auto fill = absorbedScalar(d->operand(3 - i), d->operand(i));
      if (!fill || !isScores(d->operand(i))) continue;
      // Note [Masks filled with finfo.min]
      DataType ft = PatternRewriter::constantTensor(d->operand(3 - i))->dataType();
      std::optional<double> lowest = lowestFinite(ft);
      bool negInf = std::isinf(*fill) && *fill < 0;
      if (!negInf && (!lowest || *fill != *lowest)) {
        miss(rw, "mask-fill",
             "Where " + q(d) + " fills " + num(*fill) + ", neither -inf nor " +
                 (lowest ? num(*lowest) + ", the lowest " + dataTypeName(ft).str()
                         : std::string("the lowest value of ") + dataTypeName(ft).str()) +
                 ": Attention's boolean mask is a bias of -inf (Note [Masks filled with finfo.min])");
        return nullptr;
      }
      if (!negInf) m.lowestFill = d->operand(3 - i);
      m.mask = d->operand(0);
      m.boolMask = true;
      // Where(c, S, -inf) attends where c; Where(c, -inf, S) where !c.
      m.maskNegated = i == 2;
      if (m.maskNegated)
        if (Node *n = m.mask->definingNode(); n && n->is("Not") && n->numOperands() == 1) {
          m.mask = n->operand(0);
          m.maskNegated = false;
        }
      return d->operand(i);
    }
  }
  return s;
}

// Note [Attention mask shape]
//   Attention-23 says attn_mask broadcasts to (batch, q_heads, q_seq,
//   total_seq), but onnxruntime 1.30's CPU kernel requires its last two
//   dims to be q_seq and total_seq (a [B, 1, 1, T] key-padding mask is
//   refused at run time: "inconsistent q_sequence_length"). A fused model
//   that the main runtime cannot run is no gain: a mask with 1 for q_seq
//   (the key-padding masks of encoders) is expanded along it first
//   (Expand to [q_seq, 1], q_seq read by Shape from Q: exact, the same
//   values repeated); one with 1 for the kv sequence is not fused.
bool maskBroadcasts(const Value *mask, const Value *scores, bool &expandQ, std::string &why) {
  int64_t r = rankOf(mask), rs = rankOf(scores);
  expandQ = false;
  if (r >= 2 && (!sameDim(dimOf(mask, -1), dimOf(scores, -1)) ||
                 !(sameDim(dimOf(mask, -2), dimOf(scores, -2)) || isOne(dimOf(mask, -2))))) {
    why = "mask " + q(mask) + " is [.., " + dimStr(dimOf(mask, -2)) + ", " + dimStr(dimOf(mask, -1)) +
          "], not [.., q_seq or 1, kv_seq] = [.., " + dimStr(dimOf(scores, -2)) + ", " +
          dimStr(dimOf(scores, -1)) + "] (Note [Attention mask shape])";
    return false;
  }
  if (r < 2 || r > rs) {
    why = "mask " + q(mask) + " has " + (r < 0 ? std::string("unknown rank") : "rank " + std::to_string(r)) +
          " against scores of rank " + std::to_string(rs);
    return false;
  }
  for (int64_t i = 1; i <= r; ++i) {
    Dim a = dimOf(mask, -i), b = dimOf(scores, -i);
    if (!isOne(a) && !sameDim(a, b)) {
      why = "mask " + q(mask) + " dim " + dimStr(a) + " does not provably broadcast to scores dim " +
            dimStr(b);
      return false;
    }
  }
  expandQ = !sameDim(dimOf(mask, -2), dimOf(scores, -2));
  return true;
}

} // namespace attention
} // namespace onnxir
