//===- pattern.cpp - A new fusion in one function -------------------------===//
//
// Usage: onnxir-example-pattern [INPUT]   (.onnx or .onnxtxt; default: a
//                                          model written below)
//
// Fuses `Mul(x, HardSigmoid(x))` with alpha = 1/6 and beta = 0.5 into
// `HardSwish(x)` (opset 14 and later), in every graph, with the greedy
// pattern driver, then prints the model and how often the pattern applied.
// The fusion is the one function `fuseHardSwish`; everything else (the
// worklist, subgraphs, dead-node cleanup, graph output names) is the
// driver's job.
//
//===----------------------------------------------------------------------===//
#include <onnxir/IR.h>
#include <onnxir/Ops/OpContext.h>
#include <onnxir/Passes/PatternRewrite.h>
#include <onnxir/Serialize/ModelFile.h>
#include <onnxir/Serialize/Text.h>

#include <cmath>
#include <cstdio>

using namespace onnxir;

namespace {

/// Mul(x, HardSigmoid(x)) -> HardSwish(x). HardSwish(x) is defined as
/// x * max(0, min(1, x / 6 + 0.5)), exactly this product, so the results are
/// equal up to the rounding of alpha = 1/6 in the float attribute.
bool fuseHardSwish(Node &mul, PatternRewriter &rw) {
  if (rw.opsetVersion() < 14 || mul.numOperands() != 2) return false;
  for (unsigned i = 0; i < 2; ++i) {
    Node *hs = rw.singleUseProducer(mul, i, "HardSigmoid");
    Value *x = mul.operand(1 - i);
    if (!hs || hs->operand(0) != x) continue;
    NodeContext attrs(*hs); // its attributes, else the schema's defaults
    if (std::fabs(attrs.getFloat("alpha") - 1.0f / 6) > 1e-6f || attrs.getFloat("beta") != 0.5f)
      continue;
    Node *swish = rw.create("HardSwish", {x});
    PatternRewriter::copyNodeInfo(mul, *swish);
    return rw.replaceNode(&mul, {swish->result(0)});
  }
  return false;
}

const char *kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
act (float[4] x, bool c) => (float[4] y)
{
  h = HardSigmoid <alpha = 0.16666667> (x)
  y1 = Mul (x, h)
  y = If (c) <then_branch = then () => (float[4] t) {
                h2 = HardSigmoid <alpha = 0.16666667> (y1)
                t = Mul (h2, y1) },
              else_branch = else () => (float[4] e) { e = Relu (y1) }>
}
)";
} // namespace

int main(int argc, char **argv) {
  // A model file (binary or text, by extension or else by content), or the
  // one above.
  absl::StatusOr<std::unique_ptr<Model>> m =
      argc > 1 ? loadModelFile(argv[1]) : parseModelText(kModel, "<example>");
  if (!m.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  PatternSet patterns;
  patterns.add("fuse-hard-swish", "Mul", fuseHardSwish);
  RewriteStatistics stats;
  auto r = applyPatternsGreedily(**m, patterns, {}, &stats);
  if (!r.ok() || !verify(**m).ok()) {
    std::fprintf(stderr, "error: the rewrite failed\n");
    return 1;
  }
  std::printf("%s", printModelText(**m).c_str());
  for (auto &[name, n] : stats.applications)
    std::printf("pattern %s applied %lld time(s)\n", name.c_str(), (long long)n);
  std::printf("dead nodes erased: %lld\n", (long long)stats.deadNodesErased);
  return 0;
}
