//===- O2Bench.cpp - -O2 stays linear up to 10^6 nodes --------------------===//
//
// onnxir-o2-bench [--runs N] [--quick] [--cpu] [--blocks N]
//
// Builds, in memory, chains of blocks where every -O2 rule has work: per
// block `Dropout(Add(MatMul(h, W), b))` (MatMul + Add -> Gemm, Dropout
// removed), `Reshape(r, Shape(r))` (a no-op), a Transpose pair that cancels,
// a Cast through a wider type and back, an Identity, and a dead Neg; about
// 11 nodes per block, each block feeding the next. Then runs -O2 (without
// verification between passes, as a library user would) and prints, per
// size, the seconds, the seconds per node against the smallest size (1.00x
// is linear), and -O2's time against building the model in the same run.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace onnxir;
using namespace onnxir::bench;

namespace {

std::unique_ptr<Model> build(int blocks) {
  auto m = std::make_unique<Model>();
  m->irVersion = 8;
  m->opsetImports.push_back({"", 17, ""});
  Graph &g = m->graph();
  g.name = "o2bench";
  Context &ctx = m->getContext();
  const Type *mat = ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{4, 4});
  Value *h = *g.addInput("x", mat);
  Value *w = *g.addInitializer("W", makeFloatTensor({4, 4}, std::vector<float>(16, 0.25f)));
  Value *b = *g.addInitializer("b", makeFloatTensor({4}, {0, 1, 2, 3}));
  Builder bl(g);
  for (int i = 0; i < blocks; ++i) {
    Value *mm = bl.createValue("MatMul", {h, w});
    Value *a = bl.createValue("Add", {mm, b});
    Value *d = bl.createValue("Dropout", {a});
    Value *sh = bl.createValue("Shape", {d});
    Value *r = bl.createValue("Reshape", {d, sh});
    Node *t1 = bl.create("Transpose", {r});
    t1->setAttr(intsAttr("perm", {1, 0}));
    Node *t2 = bl.create("Transpose", {t1->result(0)});
    t2->setAttr(intsAttr("perm", {1, 0}));
    Node *c1 = bl.create("Cast", {t2->result(0)});
    c1->setAttr(intAttr("to", (int64_t)DataType::Double));
    Node *c2 = bl.create("Cast", {c1->result(0)});
    c2->setAttr(intAttr("to", (int64_t)DataType::Float));
    Value *id = bl.createValue("Identity", {c2->result(0)});
    bl.createValue("Neg", {id}); // dead
    h = id;
  }
  g.addOutput(h);
  g.outputInfo(0).type = mat;
  g.outputInfo(0).hasType = true;
  return m;
}

} // namespace

int main(int argc, char **argv) {
  int runs = 3;
  bool quick = false;
  int onlyBlocks = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--cpu")) bench::useCpuClock() = true;
    else if (!std::strcmp(argv[i], "--blocks") && i + 1 < argc) onlyBlocks = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: onnxir-o2-bench [--runs N] [--quick] [--cpu] [--blocks N]\n");
      return 2;
    }
  }
  registerAllPasses();
  std::vector<int> sizes = quick ? std::vector<int>{1000, 10000}
                                 : std::vector<int>{1000, 10000, 100000};
  if (onlyBlocks > 0) sizes = {onlyBlocks};
  std::printf("-O2 (no verification between passes) on chains of 11-node blocks; %s seconds,\n"
              "median of %d runs, each in its own process; baseline: building the same model\n",
              useCpuClock() ? "CPU (user+system)" : "wall", runs);
  std::printf("%10s %10s %10s %12s %12s %10s %9s\n", "blocks", "nodes", "build", "-O2",
              "us/node", "vs first", "O2/build");
  double firstPerNode = 0;
  for (int blocks : sizes) {
    int64_t nodes = 0, after = 0;
    Sample bld = median(runs, [&] {
      double t0 = now();
      auto m = build(blocks);
      return now() - t0;
    });
    Sample o2 = median(runs, [&] {
      auto m = build(blocks);
      std::string sink;
      llvm::raw_string_ostream log(sink);
      PassManagerOptions o;
      o.verifyEach = false;
      o.log = &log;
      PassManager pm(o);
      pm.addPass(createO2Pass());
      double t0 = now();
      auto r = pm.run(*m);
      double s = now() - t0;
      // Everything but one Gemm per block goes.
      if (!r.ok() || m->graph().numNodes() != (size_t)blocks) return -1.0;
      return s;
    });
    {
      auto m = build(blocks);
      nodes = (int64_t)m->graph().numNodes();
      PassManagerOptions o;
      o.verifyEach = false;
      std::string sink;
      llvm::raw_string_ostream log(sink);
      o.log = &log;
      PassManager pm(o);
      pm.addPass(createO2Pass());
      (void)pm.run(*m);
      after = (int64_t)m->graph().numNodes();
    }
    double perNode = o2.ok ? o2.seconds / (double)nodes * 1e6 : 0;
    if (firstPerNode == 0) firstPerNode = perNode;
    char vs[32];
    std::snprintf(vs, sizeof vs, "%.2fx", firstPerNode > 0 ? perNode / firstPerNode : 0.0);
    std::printf("%10d %10lld %10s %12s %12.3f %10s %9s   (-O2 leaves %lld nodes)\n", blocks,
                (long long)nodes, fmtT(bld).c_str(), fmtT(o2).c_str(), perNode, vs,
                ratio(o2, bld).c_str(), (long long)after);
  }
  return 0;
}
