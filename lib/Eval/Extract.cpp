//===- Extract.cpp - Cut a model down to the subgraph between values ------===//
//
// Note [Extraction] in the header.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Eval/Extract.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseSet.h"

#include <vector>

namespace onnxir {

namespace {

absl::Status noValue(const std::string &what, const std::string &name) {
  return absl::NotFoundError(
      absl::StrCat("extract: ", what, " \"", name, "\" is no value of the main graph"));
}

/// The values of `g` that `n`'s subgraphs read from outside (at any depth).
void capturedFrom(const Graph &g, const Node &n, std::vector<Value *> &out) {
  for (Graph *sub : n.subgraphs())
    sub->walkGraphs([&](Graph *inner) {
      auto take = [&](Value *v) {
        if (v && v->getGraph() == &g) out.push_back(v);
      };
      for (Node &m : inner->nodes())
        for (Value *v : m.operands()) take(v);
      for (Value *v : inner->outputs()) take(v);
    });
}

} // namespace

absl::Status extractSubgraph(Model &m, llvm::ArrayRef<ExtractValue> cuts,
                             llvm::ArrayRef<ExtractValue> outputs) {
  Graph &g = m.graph();
  Context &ctx = m.getContext();
  auto declared = [&](const ExtractValue &e, Value *v) -> const Type * {
    if (!e.elemType) return v->type();
    if (e.dims) return ctx.getTensorType(*e.elemType, llvm::ArrayRef<int64_t>(*e.dims));
    return ctx.getTensorType(*e.elemType, std::optional<llvm::ArrayRef<Dim>>());
  };

  // Resolve every name before anything changes.
  llvm::DenseSet<Value *> cutSet;
  std::vector<Value *> cutValues;
  for (const ExtractValue &c : cuts) {
    Value *v = g.lookupLocal(c.name);
    if (!v) return noValue("cut", c.name);
    if (v->kind() == Value::Kind::Initializer || v->kind() == Value::Kind::SparseInitializer)
      return absl::InvalidArgumentError(
          absl::StrCat("extract: cut \"", c.name, "\" is an initializer, not a boundary"));
    cutSet.insert(v);
    cutValues.push_back(v);
  }
  std::vector<Value *> work;
  for (const ExtractValue &o : outputs) {
    Value *v = g.lookupLocal(o.name);
    if (!v) return noValue("output", o.name);
    work.push_back(v);
  }

  // The nodes the outputs depend on, stopping at the cuts.
  llvm::DenseSet<Node *> keep;
  while (!work.empty()) {
    Value *v = work.back();
    work.pop_back();
    if (cutSet.count(v)) continue;
    Node *d = v->definingNode();
    if (!d || d->getGraph() != &g || !keep.insert(d).second) continue;
    for (Value *o : d->operands())
      if (o) work.push_back(o);
    if (d->hasSubgraphs()) capturedFrom(g, *d, work);
  }

  // Cut node results become graph inputs of their names.
  for (size_t k = 0; k < cuts.size(); ++k) {
    Value *v = cutValues[k];
    const Type *t = declared(cuts[k], v);
    if (v->isGraphInput()) {
      v->setType(t);
      continue;
    }
    std::string name = v->name().str();
    v->setNameOrFresh(name + "_cut");
    auto in = g.addInput(name, t);
    if (!in.ok()) return in.status();
    v->replaceAllUsesWith(*in);
  }

  // The outputs asked for, in order.
  while (g.numOutputs()) g.removeOutput(g.numOutputs() - 1);
  for (const ExtractValue &o : outputs) {
    Value *v = g.lookupLocal(o.name);
    OutputInfo info;
    info.type = declared(o, v);
    info.hasType = info.type != nullptr;
    g.addOutput(v, std::move(info));
  }

  // Drop the rest, users before the values they use.
  std::vector<Node *> drop;
  for (Node &n : g.nodes())
    if (!keep.count(&n)) drop.push_back(&n);
  for (Node *n : drop) n->dropAllReferences();
  for (auto it = drop.rbegin(); it != drop.rend(); ++it)
    if (absl::Status s = (*it)->erase(); !s.ok())
      return absl::InternalError(absl::StrCat("extract: ", nodePath(*it), ": ", s.message()));
  for (unsigned i = g.numInputs(); i-- > 0;) {
    Value *in = g.input(i);
    if (in->numUses() || cutSet.count(in)) continue;
    bool isCut = false;
    for (const ExtractValue &c : cuts) isCut |= c.name == in->name();
    if (isCut) continue;
    if (in->hasInitializer() || in->sparseInitializer()) g.removeInputDefault(in);
    if (absl::Status s = g.removeInput(i); !s.ok()) return s;
  }
  g.removeInitializersIf([](Value *v) { return v->numUses() == 0; });
  return absl::OkStatus();
}

} // namespace onnxir
