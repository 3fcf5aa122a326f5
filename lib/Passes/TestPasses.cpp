//===- TestPasses.cpp - Passes that exist to test the pass manager --------===//
//
// Registered by onnx-opt (not by registerAllPasses()), as MLIR's
// registerTestPasses: `-test-break-ir` deliberately leaves the IR invalid so
// that tests can check that --verify-each catches it and names the pass.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

namespace onnxir {

namespace {

/// Points the first operand of the main graph's first node that has one at
/// the last node's first result: a use before its definition (or a cycle).
class TestBreakIRPass : public Pass {
public:
  llvm::StringRef argument() const override { return "test-break-ir"; }
  llvm::StringRef description() const override {
    return "(test) Make the first node use the last node's result, breaking the IR";
  }
  absl::StatusOr<bool> run(Model &m) override {
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
};

} // namespace

void registerTestPasses() {
  PassRegistry::instance().registerPass([] { return std::make_unique<TestBreakIRPass>(); });
}

} // namespace onnxir
