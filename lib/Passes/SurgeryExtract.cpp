//===- SurgeryExtract.cpp - Cut a model down to the subgraph between values ===//
//
// Note [Extraction] in onnxir/Passes/Surgery.h. The pass:
//
//   extract{inputs=a,b outputs=c,d}     (flags --extract-inputs, --extract-outputs)
//
// With inputs named, they are the only graph inputs of the result (closed);
// without, the graph inputs the outputs need stay. Types are inferred first
// when a boundary has none; functions no kept node calls go.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Passes/Surgery.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/DenseMap.h"
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

bool hasElemType(const Value *v) { return v->type() && v->type()->hasElemType(); }

} // namespace

absl::Status extractSubgraph(Model &m, llvm::ArrayRef<ExtractValue> cuts,
                             llvm::ArrayRef<ExtractValue> outputs, const ExtractOptions &opts) {
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
    if (!v) return noValue("input", c.name);
    if (v->kind() == Value::Kind::Initializer || v->kind() == Value::Kind::SparseInitializer)
      return absl::InvalidArgumentError(
          absl::StrCat("extract: input \"", c.name, "\" is an initializer, not a boundary"));
    if (!cutSet.insert(v).second)
      return absl::InvalidArgumentError(
          absl::StrCat("extract: input \"", c.name, "\" is named twice"));
    cutValues.push_back(v);
  }
  // The walk remembers which output reached each value, for the message of
  // a missing input.
  std::vector<std::pair<Value *, unsigned>> work;
  for (unsigned k = 0; k < outputs.size(); ++k) {
    Value *v = g.lookupLocal(outputs[k].name);
    if (!v) return noValue("output", outputs[k].name);
    work.push_back({v, k});
  }

  // The nodes the outputs depend on, stopping at the cuts.
  llvm::DenseSet<Node *> keep;
  while (!work.empty()) {
    auto [v, from] = work.back();
    work.pop_back();
    if (cutSet.count(v)) continue;
    if (opts.closed && v->isGraphInput() && !v->hasInitializer() && !v->sparseInitializer()) {
      std::vector<std::string> names;
      for (const ExtractValue &c : cuts) names.push_back("\"" + c.name + "\"");
      return absl::InvalidArgumentError(absl::StrCat(
          "extract: output \"", outputs[from].name, "\" is not computable from the inputs (",
          absl::StrJoin(names, ", "), ") and initializers: it needs graph input \"",
          v->name().str(), "\"; add it to the inputs"));
    }
    Node *d = v->definingNode();
    if (!d || d->getGraph() != &g || !keep.insert(d).second) continue;
    for (Value *o : d->operands())
      if (o) work.push_back({o, from});
    if (d->hasSubgraphs()) {
      std::vector<Value *> captured;
      capturedFrom(g, *d, captured);
      for (Value *c : captured) work.push_back({c, from});
    }
  }

  // Types from inference (in memory, as the pipeline infers them) when a
  // boundary has none to declare.
  if (opts.inferTypes) {
    bool untyped = false;
    for (size_t k = 0; k < cuts.size(); ++k) untyped |= !cuts[k].elemType && !hasElemType(cutValues[k]);
    for (const ExtractValue &o : outputs)
      untyped |= !o.elemType && !hasElemType(g.lookupLocal(o.name));
    if (untyped) {
      ShapeInferenceOptions so;
      so.outputsOnly = true;
      if (auto r = inferShapes(m, so); !r.ok())
        return absl::Status(r.status().code(),
                            absl::StrCat("extract: inferring the boundary types: ", r.status().message()));
    }
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
  if (opts.removeUnusedFunctions) {
    DCEOptions d;
    d.removeUnusedFunctions = true;
    if (auto r = eliminateDeadCode(m, d); !r.ok()) return r.status();
  }
  return absl::OkStatus();
}

absl::Status extractModel(Model &m, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs) {
  std::vector<ExtractValue> cuts, outs;
  for (const std::string &n : inputs) cuts.push_back({n, {}, {}});
  for (const std::string &n : outputs) outs.push_back({n, {}, {}});
  if (outs.empty())
    return absl::InvalidArgumentError(
        "extract: no outputs given (extract{outputs=NAMES}, --extract-outputs=NAMES)");
  ExtractOptions o;
  o.closed = !cuts.empty();
  o.inferTypes = true;
  o.removeUnusedFunctions = true;
  return extractSubgraph(m, cuts, outs, o);
}

//===----------------------------------------------------------------------===//
// The extract pass
//===----------------------------------------------------------------------===//

namespace {

class ExtractPass : public NamedPass {
public:
  ExtractPass()
      : NamedPass("extract", "Keep the subgraph computing the given outputs from the given "
                             "inputs (Note [Extraction])") {}
  absl::StatusOr<bool> run(Model &m) override {
    size_t before = m.graph().numNodes();
    if (absl::Status s = extractModel(m, surgeryNameList(*inputs_), surgeryNameList(*outputs_)); !s.ok())
      return s;
    addStat("nodes removed", (int64_t)(before - m.graph().numNodes()));
    return true;
  }

private:
  Option<std::string> inputs_{*this, "inputs",
                              "the new graph inputs, comma-separated (none: the graph inputs "
                              "the outputs need)",
                              "", "extract-inputs"};
  Option<std::string> outputs_{*this, "outputs", "the new graph outputs, comma-separated", "",
                               "extract-outputs"};
};

} // namespace

std::unique_ptr<Pass> createExtractPass() { return std::make_unique<ExtractPass>(); }

} // namespace onnxir
