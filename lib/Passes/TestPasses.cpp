//===- TestPasses.cpp - Passes that exist to test the pass manager --------===//
//
// Registered by onnx-opt (not by registerAllPasses()), as MLIR's
// registerTestPasses: `-test-break-ir` deliberately leaves the IR invalid so
// that tests can check that --verify-each catches it and names the pass;
// `-test-pattern-type-bug` runs two deliberately wrong patterns so that
// tests can check that the rewriter's type check refuses them (Note
// [Replacement type check], PatternRewrite.h); `-test-change-numbers` makes
// a valid model that computes something else, for onnx-opt's
// --check-numerics (Note [Numeric check]).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PatternRewrite.h"

namespace onnxir {

namespace {

/// Points the first operand of the main graph's first node that has one at
/// the last node's first result: a use before its definition (or a cycle).
/// For the tests of --check-numerics: a wrong rewrite that the verifier and
/// the schema check cannot see.
absl::StatusOr<bool> changeNumbers(Model &m, PassReport &) {
  for (Node &n : m.graph().nodes())
    if (n.opType() == "Neg" && n.domain().empty()) {
      n.setOpType("Identity");
      return true;
    }
  return false;
}

absl::StatusOr<bool> breakIR(Model &m, PassReport &) {
  Graph &g = m.graph();
  if (g.nodes().empty() || !g.nodes().back().numResults()) return false;
  Value *late = g.nodes().back().result(0);
  for (Node &n : g.nodes())
    if (n.numOperands() && &n != &g.nodes().back()) {
      n.setOperand(0, late);
      return true;
    }
  return false;
}

/// Two patterns with the bug of a unit elimination that forgets the rank
/// check: Mul(a, constant) becomes Mul(a, a new scalar 1) that the pattern
/// gives the old Mul's type (a lie the check must see through), and
/// Div(a, constant) becomes a itself. Right only when the constant is a one-element 1 of a
/// rank <= a's; a [1,1] constant against a [3] `a` changes the result's
/// shape, and the rewriter must refuse.
class TestPatternTypeBugPass : public NamedPass {
public:
  TestPatternTypeBugPass()
      : NamedPass("test-pattern-type-bug",
                  "(test) Rewrite Mul/Div by a constant as if it were a scalar 1, ignoring "
                  "broadcasting") {}
  absl::StatusOr<bool> run(Model &m) override {
    PatternSet ps;
    ps.add("test-mul-to-scalar", "Mul", [](Node &n, PatternRewriter &rw) {
      const Tensor *k = PatternRewriter::constantTensor(n.operand(1));
      if (n.numOperands() != 2 || !k || k->dims().empty()) return false;
      Value *one = rw.createConstant("test_one", makeFloatTensor({}, {1.0f}));
      Node *mul = rw.create("Mul", {n.operand(0), one});
      mul->result(0)->setType(n.result(0)->type());
      return rw.replaceNode(&n, {mul->result(0)});
    });
    ps.add("test-div-to-operand", "Div", [](Node &n, PatternRewriter &rw) {
      if (n.numOperands() != 2 || !PatternRewriter::constantTensor(n.operand(1))) return false;
      return rw.replaceNode(&n, {n.operand(0)});
    });
    GreedyRewriteConfig cfg;
    RewriteStatistics s;
    auto r = applyPatternsGreedily(m, ps, cfg, &s);
    if (!r.ok()) return r;
    if (absl::Status b = reportPatternBugs(s, [this](std::string w) { warn(std::move(w)); });
        !b.ok())
      return b;
    for (auto &[name, n] : s.applications) addStat(name, n);
    return r;
  }
};

} // namespace

void registerTestPasses() {
  PassRegistry::instance().registerPass([] {
    return makePass("test-change-numbers",
                    "(test) Make the main graph's first Neg an Identity: a valid model that "
                    "computes something else",
                    changeNumbers);
  });
  PassRegistry::instance().registerPass([] {
    return makePass("test-break-ir",
                    "(test) Make the first node use the last node's result, breaking the IR",
                    breakIR);
  });
  PassRegistry::instance().registerPass([] { return std::make_unique<TestPatternTypeBugPass>(); });
}

} // namespace onnxir
