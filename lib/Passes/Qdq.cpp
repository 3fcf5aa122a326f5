//===- Qdq.cpp - Exact cleanups of QuantizeLinear/DequantizeLinear chains -===//
//
// simplify-qdq removes what a quantized (QDQ) model computes twice and
// nothing else: QuantizeLinear(DequantizeLinear(x, s, z), s, z) is x when
// both use the same parameters (Note [Exact Q/DQ round trips]), which also
// takes out the middle of Q -> DQ -> Q chains with equal parameters. A pair
// Q -> DQ (fake quantization, what runtimes fuse into integer kernels) is
// never removed: it rounds. -O2 runs it with the other rewrites; folding
// keeps DequantizeLinear of constant weights (Note [Dequantize stays],
// ConstantFolding.cpp), so the Q/DQ pairs of a QDQ model survive -O2.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PatternRewrite.h"

#include <cfloat>
#include <cmath>

namespace onnxir {

namespace {

// Note [Exact Q/DQ round trips]
// DequantizeLinear gives y = (x - z) * s in float; QuantizeLinear with the
// same s and z gives saturate(round(y / s) + z). For an integer x of 16 bits
// or fewer, |x - z| < 2^16 and y / s is (x - z) within a relative 2^-23
// (two roundings), so it rounds back to x - z exactly and the result is x,
// in range. That needs s a normal float (a subnormal product loses bits; 0
// divides by zero), y in float or double (float16 holds 11 bits), the same
// axis and block size, and Q's result of x's type. Equal parameters are the
// same values, or constants with equal type, dims and bytes.

bool sameConstant(const Value *a, const Value *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  const Tensor *ta = storedConstantOf(a), *tb = storedConstantOf(b);
  if (!ta || !tb || ta->dataType() != tb->dataType() || ta->dims() != tb->dims()) return false;
  auto ba = ta->bytes(), bb = tb->bytes();
  return ba.ok() && bb.ok() && *ba == *bb;
}

bool normalScales(const Value *s) {
  const Tensor *t = storedConstantOf(s);
  if (!t) return false;
  auto vals = t->values<double>();
  if (!vals.ok() || vals->empty()) return false;
  for (double v : *vals)
    if (!std::isfinite(v) || std::fabs(v) < FLT_MIN || std::fabs(v) > 1e30) return false;
  return true;
}

Value *operandOr(const Node &n, unsigned i) {
  return i < n.numOperands() ? n.operand(i) : nullptr;
}

// QuantizeLinear(DequantizeLinear(x, s, z), s, z) -> x. Contract: exact.
bool removeRoundTrip(Node &q, PatternRewriter &rw) {
  if (q.numResults() < 1 || !q.result(0) || !q.operand(0)) return false;
  Node *dq = q.operand(0)->definingNode();
  if (!dq || dq->opType() != "DequantizeLinear" || !dq->domain().empty() ||
      dq->getGraph() != q.getGraph() || !dq->operand(0))
    return false;
  Value *x = dq->operand(0);
  // x's type: its own, or the DQ's zero point's (they agree).
  auto xe = staticElemOf(x);
  if (!xe && operandOr(*dq, 2)) xe = staticElemOf(operandOr(*dq, 2));
  if (!xe || !(*xe == DataType::Int8 || *xe == DataType::Uint8 || *xe == DataType::Int16 ||
               *xe == DataType::Uint16 || *xe == DataType::Int4 || *xe == DataType::Uint4))
    return false;
  Value *s = operandOr(q, 1), *z = operandOr(q, 2);
  // The DQ's result type: output_dtype when set, else the scale's.
  auto ye = dq->getAttr("output_dtype") ? std::optional<DataType>(
                                              (DataType)NodeContext(*dq).getInt("output_dtype", 0))
                                        : staticElemOf(s);
  if (!ye || (*ye != DataType::Float && *ye != DataType::Double)) return false;
  if (!sameConstant(s, operandOr(*dq, 1)) || !normalScales(s)) return false;
  Value *dz = operandOr(*dq, 2);
  if ((z == nullptr) != (dz == nullptr) || (z && !sameConstant(z, dz))) return false;
  NodeContext qc(q), dc(*dq);
  if (qc.getInt("axis", 1) != dc.getInt("axis", 1) ||
      qc.getInt("block_size", 0) != dc.getInt("block_size", 0))
    return false;
  // Q's result has x's type: its inferred type says so, or its zero point
  // (then of x's type, as the DQ's) decides it.
  auto qe = elemOf(q.result(0));
  if (qe ? *qe != *xe : !z) return false;
  if (q.getAttr("output_dtype") && qc.getInt("output_dtype", 0) != (int64_t)*xe) return false;
  return rw.replaceNode(&q, {x});
}

void populateQdqPatterns(PatternSet &ps) {
  ps.add("qdq-round-trip", "QuantizeLinear", removeRoundTrip);
}

} // namespace

absl::StatusOr<bool> simplifyQdq(Model &m, RewriteStatistics *stats) {
  PatternSet ps;
  populateQdqPatterns(ps);
  return applyPatternsGreedily(m, ps, GreedyRewriteConfig(), stats);
}

namespace {
class SimplifyQdqPass : public NamedPass {
public:
  SimplifyQdqPass()
      : NamedPass("simplify-qdq",
                  "Remove exact QuantizeLinear(DequantizeLinear(x)) round trips with equal "
                  "parameters (Q/DQ pairs stay)") {}
  absl::StatusOr<bool> run(Model &m) override {
    RewriteStatistics s;
    auto r = simplifyQdq(m, &s);
    if (!r.ok()) return r;
    if (absl::Status b = reportPatternBugs(s, [this](std::string w) { warn(std::move(w)); });
        !b.ok())
      return b;
    for (auto &[name, n] : s.applications) addStat(name, n);
    return r;
  }
};
} // namespace

std::unique_ptr<Pass> createSimplifyQdqPass() { return std::make_unique<SimplifyQdqPass>(); }

} // namespace onnxir
