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
#include "onnxir/Ops/OpRegistry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
//
//   Additive masks meet the same zeroing: Add(S, mask) where the mask holds
//   L (Hugging Face's extended mask (1 - m) * L, a constant with a fully
//   masked row) gives a zero row in Attention, uniform in the graph. So
//   Attention gets the mask with L/2 for L, which by the bounds above gives
//   the graph's result on every row:
//    - a constant mask holding L: folded, each L entry L/2;
//    - x * L, with L a scalar constant and x provably integer-valued (a
//      Cast from bool or an integer type, integer constants, and their
//      sums, differences, products and reshapes): x * L/2. x = 0 and 1
//      give 0 and L/2 as above; |x| >= 2 gives ±inf in the graph and a
//      bias of magnitude at least |L| in Attention, whose weight is 0 beside
//      any entry of bias 0 or L/2, so only rows of NaN in the graph (where
//      all are -inf) differ; x = -1 gives +L/2 for -L, absorbing s alike;
//    - a mask computed in any other way from a constant holding L (a float
//      factor x, whose x * L/2 is not x * L's meaning when 0 < |x| < 1;
//      Where(c, 0, L)) is reported (mask-min), not fused;
//    - float16: as above, no bias absorbs the scores: a float16 additive
//      mask holding -65504 is reported (an additive mask is never is_causal).
//   A mask with no constant holding L in the nodes computing it (a graph
//   input, -1e9 or -10000 fills) is passed on unchanged: a graph input that
//   holds L at run time is outside the contract.
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

//===----------------------------------------------------------------------===//
// Additive masks reaching the lowest value (Note [Masks filled with finfo.min])
//===----------------------------------------------------------------------===//

namespace {

/// True if the constant `t` holds its own type's lowest finite value.
bool holdsLowest(const Tensor &t) {
  std::optional<double> lowest = lowestFinite(t.dataType());
  if (!lowest) return false;
  auto vals = t.values<double>();
  if (!vals.ok()) return true; // unreadable: assume it may
  for (double x : *vals)
    if (x == *lowest) return true;
  return false;
}

/// True if every value of `v` is provably an integer (or ±inf or NaN):
/// a Cast from bool or an integer type, an integer constant, and sums,
/// differences, products and reshapes of those (an integer rounded to
/// float is still an integer).
bool integerValued(const Value *v, PatternRewriter &rw, int depth = 0) {
  if (const Tensor *t = PatternRewriter::constantTensor(v)) {
    auto vals = t->values<double>();
    if (!vals.ok()) return false;
    for (double x : *vals)
      if (std::isfinite(x) && x != std::trunc(x)) return false;
    return true;
  }
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || depth > 6 || d->getGraph() != rw.root()->getGraph()) return false;
  if (d->is("Cast") && d->numOperands() == 1) {
    auto from = elemOf(d->operand(0));
    return from && (*from == DataType::Bool || isSignedInteger(*from) || isUnsignedInteger(*from));
  }
  if ((d->is("Add") || d->is("Sub") || d->is("Mul")) && d->numOperands() == 2)
    return integerValued(d->operand(0), rw, depth + 1) && integerValued(d->operand(1), rw, depth + 1);
  // A reshape (Note [Op facts]) moves the same values.
  const OpEntry *e = OpRegistry::get().lookup(*d);
  if (e && e->reshapes && d->numOperands() >= 1) return integerValued(d->operand(0), rw, depth + 1);
  return false;
}

/// A constant of type `et` holding L among the operands of the nodes that
/// compute `v` in the root's graph (a bounded walk), or null.
const Value *lowestInCone(const Value *v, DataType et, PatternRewriter &rw) {
  std::vector<const Value *> work{v};
  std::vector<const Node *> seen;
  while (!work.empty() && seen.size() < 64) {
    const Value *x = work.back();
    work.pop_back();
    if (const Tensor *t = PatternRewriter::constantTensor(x)) {
      if (t->dataType() == et && holdsLowest(*t)) return x;
      continue;
    }
    Node *d = x->definingNode();
    if (!d || d->getGraph() != rw.root()->getGraph() ||
        std::find(seen.begin(), seen.end(), d) != seen.end())
      continue;
    seen.push_back(d);
    for (unsigned i = 0; i < d->numOperands(); ++i)
      if (d->operand(i)) work.push_back(d->operand(i));
  }
  return nullptr;
}

} // namespace

bool additiveLowest(AttentionMatch &m, DataType et, PatternRewriter &rw, std::string &why) {
  if (const Tensor *t = PatternRewriter::constantTensor(m.mask)) {
    if (holdsLowest(*t)) m.lowestConst = m.mask;
  } else if (Node *d = m.mask->definingNode(); d && d->is("Mul") && d->numOperands() == 2) {
    for (unsigned i = 0; i < 2 && !m.lowestConst; ++i) {
      // A scalar L (not broadcasting the product up) times an integer.
      std::optional<double> lowest = lowestFinite(et);
      if (lowest && absorbedScalar(d->operand(i), d->operand(1 - i)) == *lowest &&
          integerValued(d->operand(1 - i), rw)) {
        m.lowestConst = d->operand(i);
        m.lowestFactor = d->operand(1 - i);
      }
    }
  }
  if (m.lowestConst) return true;
  if (const Value *c = lowestInCone(m.mask, et, rw)) {
    why = "additive mask " + q(m.mask) + " is computed from " + q(c) + ", which holds the lowest " +
          dataTypeName(et).str() +
          ", not as a constant nor as an integer times it: a fully masked row may be all lowest, "
          "which Attention zeroes (Note [Masks filled with finfo.min])";
    return false;
  }
  return true;
}

Tensor halvedLowest(const Tensor &t) {
  DataType dt = t.dataType();
  auto bytes = t.bytes();
  std::string raw = bytes.ok() ? bytes->str() : std::string();
  auto replace = [&](auto lowest, auto half) {
    using T = decltype(lowest);
    for (size_t o = 0; o + sizeof(T) <= raw.size(); o += sizeof(T)) {
      T x;
      std::memcpy(&x, raw.data() + o, sizeof x);
      if (x == lowest) std::memcpy(raw.data() + o, &half, sizeof half);
    }
  };
  if (dt == DataType::Float)
    replace(-std::numeric_limits<float>::max(), -std::numeric_limits<float>::max() / 2);
  else if (dt == DataType::Double)
    replace(-std::numeric_limits<double>::max(), -std::numeric_limits<double>::max() / 2);
  else if (dt == DataType::BFloat16) // -(2 - 2^-7) * 2^127 and 2^126
    replace(uint16_t(0xFF7F), uint16_t(0xFEFF));
  return makeTensor(dt, t.dims(), std::move(raw));
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
