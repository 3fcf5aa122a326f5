// Builds y = Relu(x + w) with the installed onnxir headers, verifies it and
// prints each node. Exits non-zero if anything is off.
#include <onnxir/IR.h>

#include <cstdio>

int main() {
  onnxir::Model m;
  onnxir::Graph &g = m.graph();
  g.name = "consumer";
  onnxir::Context &ctx = m.getContext();
  const onnxir::Type *t = ctx.getTensorType(onnxir::DataType::Float, llvm::ArrayRef<int64_t>{2});
  onnxir::Value *x = *g.addInput("x", t);
  onnxir::Value *w = *g.addInitializer("w", onnxir::makeFloatTensor({2}, {1.0f, 2.0f}));
  onnxir::Builder b(g);
  onnxir::Value *sum = b.createValue("Add", {x, w});
  onnxir::Value *y = b.createValue("Relu", {sum});
  g.addOutput(y);
  if (!onnxir::verify(m).ok()) return 1;
  for (onnxir::Node &n : g.nodes()) std::printf("%s -> %s\n", n.opType().str().c_str(),
                                                n.result(0)->name().str().c_str());
  return g.numNodes() == 2 ? 0 : 1;
}
