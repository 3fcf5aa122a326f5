//===- Opset.cpp - Which opset version governs a node ---------------------===//
//
// Note [Opset in force] in Opset.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Opset.h"

#include "onnxir/IR/Function.h"
#include "onnxir/IR/Model.h"

namespace onnxir {

bool isDefaultDomain(llvm::StringRef d) { return d.empty() || d == "ai.onnx"; }

llvm::StringRef canonicalDomain(llvm::StringRef d) { return isDefaultDomain(d) ? "" : d; }

int64_t opsetVersionIn(llvm::ArrayRef<OpsetImport> imports, llvm::StringRef domain) {
  llvm::StringRef d = canonicalDomain(domain);
  int64_t v = -1;
  for (const OpsetImport &o : imports)
    if (canonicalDomain(o.domain) == d) v = o.version; // the last entry wins
  return v;
}

static int64_t inForce(const Graph *g, const Model *m, llvm::StringRef domain) {
  if (const Function *f = g ? g->parentFunction() : nullptr) {
    int64_t v = opsetVersionIn(f->opsetImports, domain);
    if (v >= 0) return v;
  }
  return m ? opsetVersionIn(m->opsetImports, domain) : -1;
}

int64_t opsetInForce(const Graph &g, llvm::StringRef domain) {
  return inForce(&g, g.parentModel(), domain);
}

int64_t opsetInForce(const Node &n, llvm::StringRef domain) {
  const Graph *g = n.getGraph();
  return g ? opsetInForce(*g, domain) : -1;
}

int64_t opsetInForce(const Node &n) { return opsetInForce(n, n.domain()); }

int64_t opsetInForce(const Node &n, const Model &m) { return inForce(n.getGraph(), &m, n.domain()); }

} // namespace onnxir
