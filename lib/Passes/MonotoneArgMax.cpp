//===- MonotoneArgMax.cpp - Increasing ops before ArgMax/ArgMin ------------===//
//
// The pass monotone-argmax: onnxoptimizer's removal of an increasing op
// before ArgMax/ArgMin, offered as an explicit pass and kept out of -O1/-O2
// because it is not exact (Note [No monotone op before ArgMax],
// SimplifyChains.cpp; Note [Monotone ops before ArgMax] below).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PatternRewrite.h"

namespace onnxir {

namespace {

// Note [Monotone ops before ArgMax]
//  Exp, Log and Sqrt, and Softmax/LogSoftmax over the last axis when the
//  ArgMax/ArgMin is over it too, increase with their input, so over real
//  numbers the index of the largest (smallest) element is the same without
//  them: the op goes when its result has no other use. In floating point it
//  may differ: inputs near the maximum can round to one output (the first
//  index then wins), Exp overflows to inf, and Log/Sqrt of negative inputs
//  are NaN. That is why -O2 does not do it (Note [No monotone op before
//  ArgMax]); users who accept it, as onnxoptimizer's users do, ask for it.
//  Softmax only over the last axis: there every opset's form normalises
//  each row alone (before opset 13 it flattened the leading axes, which
//  leaves the last one's rows as they are).
bool monotoneArgMax(Node &n, PatternRewriter &rw) {
  if (n.numOperands() != 1 || !n.operand(0) || n.numResults() != 1) return false;
  for (llvm::StringRef op : {"Exp", "Log", "Sqrt", "Softmax", "LogSoftmax"}) {
    Node *p = rw.singleUseProducer(n, 0, op);
    if (!p || p->numOperands() != 1 || !p->operand(0)) continue;
    for (unsigned i = 0; i < p->numAttributes(); ++i)
      if (p->attribute(i).isReference()) return false;
    if (p->is("Softmax") || p->is("LogSoftmax")) {
      int64_t r = rankOf(p->operand(0));
      if (r < 1) return rw.rejected("rank", "the rank of the " + op.str() + " input is unknown");
      int64_t sa = NodeContext(*p).getInt("axis", -1), aa = NodeContext(n).getInt("axis", 0);
      if (sa < 0) sa += r;
      if (aa < 0) aa += r;
      if (sa != r - 1 || aa != r - 1)
        return rw.rejected("axis", op.str() + " over axis " + std::to_string(sa) + " and " +
                                       n.opType().str() + " over axis " + std::to_string(aa) +
                                       ": only the last axis of both");
    }
    rw.setOperand(&n, 0, p->operand(0));
    return true;
  }
  return false;
}

class MonotoneArgMaxPass : public NamedPass {
public:
  MonotoneArgMaxPass()
      : NamedPass("monotone-argmax",
                  "Remove Exp, Log, Sqrt, or last-axis Softmax/LogSoftmax before ArgMax/ArgMin "
                  "(onnxoptimizer's rewrite; not exact where rounding makes ties, not in -O2)") {}
  absl::StatusOr<bool> run(Model &m) override {
    PatternSet ps;
    ps.add("monotone-argmax", "ArgMax", monotoneArgMax);
    ps.add("monotone-argmax", "ArgMin", monotoneArgMax);
    RewriteStatistics s;
    auto r = applyPatternsGreedily(m, ps, {}, &s);
    if (!r.ok()) return r;
    for (auto &[name, n] : s.applications) addStat(name, n);
    return r;
  }
};

} // namespace

std::unique_ptr<Pass> createMonotoneArgMaxPass() { return std::make_unique<MonotoneArgMaxPass>(); }

} // namespace onnxir
