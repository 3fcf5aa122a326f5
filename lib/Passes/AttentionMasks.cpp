//===- AttentionMasks.cpp - Attention masks -------------------------------===//
//
// The mask of fuse-attention: an additive mask, or a boolean one through
// Where with -inf; its shape against the scores (Note [Attention mask
// shape]); masks that are provably causal (is_causal).
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"

#include <cmath>

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
      if (!(std::isinf(*fill) && *fill < 0)) {
        miss(rw, "mask-fill",
             "Where " + q(d) + " fills " + num(*fill) +
                 ", not -inf: Attention's boolean mask is a bias of -inf");
        return nullptr;
      }
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
