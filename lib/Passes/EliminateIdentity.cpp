//===- EliminateIdentity.cpp - Remove Identity nodes ----------------------===//
//
// Users of an Identity's result are pointed at its input. When the result is
// a graph output, the output must keep its name: if the input is a result of
// a node of the same graph that is not itself an output, the input takes the
// Identity's name; otherwise the Identity stays.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

namespace onnxir {

absl::StatusOr<bool> eliminateIdentity(Model &m, int64_t *removed) {
  bool changed = false;
  std::vector<Node *> identities;
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes())
      if (isIdentityNode(n) && n.numOperands() == 1 && n.operand(0) && n.numResults() == 1 &&
          n.result(0))
        identities.push_back(&n);
  });
  for (Node *n : identities) {
    Value *in = n->operand(0);
    Value *out = n->result(0);
    if (!out->isGraphOutput()) {
      out->replaceAllUsesWith(in);
      if (auto s = n->erase(); !s.ok()) return s;
    } else {
      bool renamable = in->definingNode() && in->getGraph() == out->getGraph() &&
                       !in->isGraphOutput() && in->getGraph()->returnNode() != nullptr;
      // The output slot's own type info stays with the slot.
      if (!renamable) continue;
      std::string name = out->name().str();
      if (!in->type() && out->type()) in->setType(out->type());
      out->replaceAllUsesWith(in);
      if (auto s = n->erase(); !s.ok()) return s;
      if (auto s = in->setName(name); !s.ok()) return s;
    }
    changed = true;
    if (removed) ++*removed;
  }
  return changed;
}

std::unique_ptr<Pass> createEliminateIdentityPass() {
  return makePass("eliminate-identity", "Remove Identity nodes (output names are kept)",
                  "identities removed", eliminateIdentity);
}

} // namespace onnxir
