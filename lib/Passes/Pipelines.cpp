//===- Pipelines.cpp - The composite pipelines -O1 and -O2 ----------------===//
//
// Composite passes are ordinary registered passes (CompositePass, Pass.h):
// a prologue, a body repeated to a fixed point, and an epilogue, each a
// textual pipeline. The pass manager runs every child as a pass of its own.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

namespace onnxir {

namespace {
const char *const kO1Body = "infer-shapes{outputs-only},eliminate-identity,dce,fold-constants,cse,dedup-initializers,dce";
// Inference keeps types in memory only (no value_info records: the output
// stays as small and as fast to load as the input) and runs every round,
// so that nodes the rewrites create are typed for the next patterns.
const char *const kO2Body = "infer-shapes{outputs-only},eliminate-identity,dce,fold-constants,"
                            "simplify,simplify-qdq,fuse,cse,dedup-initializers,dce";
} // namespace

/// -O1: sort first so that every later pass sees definitions before uses;
/// then the cleanup passes to a fixed point; then sort again.
std::unique_ptr<Pass> createO1Pass() {
  return std::make_unique<CompositePass>(
      "O1",
      "Standard pipeline (identity removal, DCE, constant folding, CSE, initializer dedup) to "
      "a fixed point, then topo",
      "topo", kO1Body, "topo");
}

/// -O2: Constant nodes become initializers first (as onnxruntime stores
/// them); then -O1's cleanups together with shape inference, the exact
/// simplifications and the fusions, all to one fixed point (a fusion can
/// expose a fold and the other way round), then topo.
std::unique_ptr<Pass> createO2Pass() {
  return std::make_unique<CompositePass>(
      "O2",
      "-O1 plus shape inference, simplification (no-op removal, chain collapsing) and fusions "
      "(Conv+BN/Add/Mul, MatMul+Add->Gemm, Transpose->Gemm, inference Dropout) to a fixed "
      "point, then topo",
      "topo,lift-constants", kO2Body, "topo", 8);
}

void registerPipelinePasses() {
  PassRegistry &r = PassRegistry::instance();
  r.registerPass(createO1Pass);
  r.registerPass(createO2Pass);
}

} // namespace onnxir
