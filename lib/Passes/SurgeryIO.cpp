//===- SurgeryIO.cpp - Editing a model's inputs and outputs ---------------===//
//
// The interface edits of onnxir/Passes/Surgery.h and their passes:
//
//   add-outputs{names=a,b}  add-outputs{all}   intermediates become outputs
//   prune-outputs{keep=y}                       the other outputs go, then dce
//   edit-io{rename=old:new retype=x:float16}    flags --rename-io, --retype-io
//
// Every name is resolved and every new name checked before the first
// change, so an error leaves the model as it was.
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
#include "absl/strings/str_split.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <set>

namespace onnxir {

namespace {

/// The index of the first main-graph output named `name`, or -1.
int outputIndex(const Graph &g, llvm::StringRef name) {
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (g.output(i) && g.output(i)->name() == name) return (int)i;
  return -1;
}

/// The main-graph input named `name`, or null.
Value *inputNamed(const Graph &g, llvm::StringRef name) {
  for (Value *v : g.inputs())
    if (v->name() == name) return v;
  return nullptr;
}

std::string interfaceNames(const Graph &g) {
  std::string s;
  for (Value *v : g.inputs())
    if (!v->hasInitializer()) absl::StrAppend(&s, s.empty() ? "" : ", ", v->name().str());
  std::string o;
  for (Value *v : g.outputs())
    if (v) absl::StrAppend(&o, o.empty() ? "" : ", ", v->name().str());
  return absl::StrCat("inputs: ", s.empty() ? "none" : s, "; outputs: ", o.empty() ? "none" : o);
}

bool hasElemType(const Value *v) { return v->type() && v->type()->hasElemType(); }

} // namespace

absl::StatusOr<int64_t> addOutputs(Model &m, const std::vector<std::string> &names, bool all) {
  Graph &g = m.graph();
  llvm::DenseSet<Value *> outputs;
  for (Value *v : g.outputs()) outputs.insert(v);
  std::vector<Value *> add;
  llvm::DenseSet<Value *> seen;
  auto take = [&](Value *v) {
    if (!outputs.count(v) && seen.insert(v).second) add.push_back(v);
  };
  if (all) {
    for (Node &n : g.nodes())
      for (Value *r : n.results())
        if (r) take(r);
  }
  for (const std::string &name : names) {
    Value *v = g.lookupLocal(name);
    if (!v)
      return absl::NotFoundError(
          absl::StrCat("add-outputs: \"", name, "\" is no value of the main graph"));
    take(v);
  }
  bool untyped = false;
  for (Value *v : add) untyped |= !hasElemType(v);
  if (untyped) {
    ShapeInferenceOptions so;
    so.outputsOnly = true;
    if (auto r = inferShapes(m, so); !r.ok())
      return absl::Status(r.status().code(),
                          absl::StrCat("add-outputs: inferring the types: ", r.status().message()));
  }
  for (Value *v : add) {
    OutputInfo info;
    info.type = v->type();
    info.hasType = info.type != nullptr;
    g.addOutput(v, std::move(info));
  }
  return (int64_t)add.size();
}

absl::StatusOr<int64_t> pruneOutputs(Model &m, const std::vector<std::string> &keep) {
  Graph &g = m.graph();
  std::set<std::string> wanted;
  for (const std::string &name : keep) {
    if (outputIndex(g, name) < 0)
      return absl::NotFoundError(absl::StrCat("prune-outputs: \"", name,
                                              "\" is no output of the main graph (",
                                              interfaceNames(g), ")"));
    wanted.insert(name);
  }
  int64_t removed = 0;
  for (unsigned i = g.numOutputs(); i-- > 0;) {
    Value *v = g.output(i);
    if (v && wanted.count(v->name().str())) continue;
    g.removeOutput(i);
    ++removed;
  }
  if (removed)
    if (auto r = eliminateDeadCode(m); !r.ok()) return r.status();
  return removed;
}

absl::Status renameInterface(Model &m,
                             const std::vector<std::pair<std::string, std::string>> &renames) {
  Graph &g = m.graph();
  if (!m.trainingInfo.empty() && !renames.empty())
    return absl::UnimplementedError(
        "rename-io: the model has training_info, whose bindings name main-graph values; "
        "renaming them is not supported");
  std::vector<Value *> values;
  llvm::StringSet<> newNames, oldNames;
  for (const auto &[from, to] : renames) {
    Value *v = inputNamed(g, from);
    if (!v && outputIndex(g, from) >= 0) v = g.output((unsigned)outputIndex(g, from));
    if (!v)
      return absl::NotFoundError(absl::StrCat("rename-io: \"", from,
                                              "\" is no input or output of the main graph (",
                                              interfaceNames(g), ")"));
    if (to.empty())
      return absl::InvalidArgumentError(absl::StrCat("rename-io: \"", from, "\": empty new name"));
    if (!oldNames.insert(from).second)
      return absl::InvalidArgumentError(absl::StrCat("rename-io: \"", from, "\" is renamed twice"));
    if (!newNames.insert(to).second)
      return absl::InvalidArgumentError(
          absl::StrCat("rename-io: two values would be named \"", to, "\""));
    // Free in the main graph and every graph nested in it (a subgraph
    // defining the name would shadow the renamed value).
    if (!g.isNameFree(to)) {
      Value *clash = g.lookupLocal(to);
      return absl::AlreadyExistsError(absl::StrCat(
          "rename-io: \"", from, "\" -> \"", to, "\": the name is taken",
          clash ? absl::StrCat(" in graph \"", g.name, "\"") : " in a subgraph of the main graph"));
    }
    values.push_back(v);
  }
  for (size_t k = 0; k < renames.size(); ++k) {
    Value *v = values[k];
    if (absl::Status s = v->setName(renames[k].second); !s.ok())
      return absl::InternalError(absl::StrCat("rename-io: \"", renames[k].first, "\": ", s.message()));
    if (Tensor *t = v->initializer()) t->setName(renames[k].second);
    for (QuantizationAnnotation &q : g.quantizationAnnotations) {
      if (q.tensorName && *q.tensorName == renames[k].first) q.tensorName = renames[k].second;
      for (auto &kv : q.quantParameterTensorNames)
        if (kv.second == renames[k].first) kv.second = renames[k].second;
    }
  }
  return absl::OkStatus();
}

absl::Status retypeInterface(Model &m,
                             const std::vector<std::pair<std::string, DataType>> &types) {
  Graph &g = m.graph();
  Context &ctx = m.getContext();
  struct Step {
    Value *input = nullptr; // an input, or
    int output = -1;        // an output's index
    DataType to;
    const Type *old;        // its type now
  };
  std::vector<Step> steps;
  llvm::StringSet<> named;
  for (const auto &[name, to] : types) {
    if (!named.insert(name).second)
      return absl::InvalidArgumentError(absl::StrCat("retype-io: \"", name, "\" is given twice"));
    Value *in = inputNamed(g, name);
    int out = outputIndex(g, name);
    if (in && out >= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "retype-io: \"", name, "\" is both an input and an output of the main graph"));
    if (!in && out < 0)
      return absl::NotFoundError(absl::StrCat("retype-io: \"", name,
                                              "\" is no input or output of the main graph (",
                                              interfaceNames(g), ")"));
    Value *v = in ? in : g.output((unsigned)out);
    if (in && (in->hasInitializer() || in->sparseInitializer()))
      return absl::InvalidArgumentError(absl::StrCat(
          "retype-io: input \"", name, "\" has a default (an initializer of that name)"));
    if (!in && !v->definingNode())
      return absl::InvalidArgumentError(absl::StrCat(
          "retype-io: output \"", name, "\" is ",
          v->isGraphInput() ? "a graph input" : "an initializer", " itself, not a node result"));
    // An output's declaration counts when inference has not typed its value.
    const Type *t = v->type() ? v->type() : in ? nullptr : g.outputInfo((unsigned)out).type;
    if (!t || !t->isTensor() || !t->hasElemType() || t->elemType() == DataType::Undefined)
      return absl::InvalidArgumentError(absl::StrCat(
          "retype-io: ", in ? "input" : "output", " \"", name,
          "\" has no tensor element type to convert from (run infer-shapes first)"));
    if (t->elemType() == to) continue;
    steps.push_back({in, out, to, t});
  }
  for (const Step &s : steps) {
    Value *v = s.input ? s.input : g.output((unsigned)s.output);
    const Type *old = s.old;
    std::optional<llvm::ArrayRef<Dim>> dims;
    if (old->hasShape()) dims = old->dims();
    const Type *retyped = ctx.getTensorType(s.to, dims);
    if (s.input) {
      // x (new type) -> Cast(to=old) -> every former reader of x.
      Node *first = g.nodes().empty() ? nullptr : &g.nodes().front();
      std::string base = absl::StrCat(v->name().str(), "_", dataTypeName(old->elemType()).str());
      Node *cast = g.createNode("Cast", {v}, 1, first, "", base);
      cast->newAttr("to").setInt((int64_t)old->elemType());
      Value *c = cast->result(0);
      c->setType(old);
      v->replaceAllUsesWith(c);
      cast->setOperand(0, v);
      v->setType(retyped);
    } else {
      // The value that computed y gets a fresh name; Cast(to=new) is y.
      std::string name = v->name().str();
      v->setNameOrFresh(absl::StrCat(name, "_", dataTypeName(old->elemType()).str()));
      auto cast = g.createNodeWithNames("Cast", {v}, {llvm::StringRef(name)});
      if (!cast.ok()) return cast.status();
      (*cast)->newAttr("to").setInt((int64_t)s.to);
      Value *c = (*cast)->result(0);
      c->setType(retyped);
      for (unsigned i = 0; i < g.numOutputs(); ++i)
        if (g.output(i) == v) {
          g.setOutput(i, c);
          g.outputInfo(i).type = retyped;
          g.outputInfo(i).hasType = true;
        }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
parseRenameList(llvm::StringRef text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view e : absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                                            absl::SkipWhitespace())) {
    size_t colon = e.rfind(':');
    if (colon == absl::string_view::npos || colon == 0 || colon + 1 == e.size())
      return absl::InvalidArgumentError(
          absl::StrCat("expected OLD:NEW[,OLD:NEW...], got \"", e, "\""));
    out.emplace_back(std::string(e.substr(0, colon)), std::string(e.substr(colon + 1)));
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, DataType>>> parseRetypeList(llvm::StringRef text) {
  std::vector<std::pair<std::string, DataType>> out;
  for (absl::string_view e : absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                                            absl::SkipWhitespace())) {
    size_t colon = e.rfind(':');
    if (colon == absl::string_view::npos || colon == 0 || colon + 1 == e.size())
      return absl::InvalidArgumentError(
          absl::StrCat("expected NAME:TYPE[,NAME:TYPE...], got \"", e, "\""));
    std::string type(e.substr(colon + 1));
    std::optional<DataType> t = dataTypeFromName(type);
    if (!t || *t == DataType::Undefined)
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", type, "\" is no element type (float, float16, bfloat16, double, int8, int32, "
                      "int64, uint8, bool, ...)"));
    out.emplace_back(std::string(e.substr(0, colon)), *t);
  }
  return out;
}

std::vector<std::string> surgeryNameList(llvm::StringRef text) {
  std::vector<std::string> out;
  for (absl::string_view s : absl::StrSplit(absl::string_view(text.data(), text.size()), ',',
                                            absl::SkipWhitespace()))
    out.emplace_back(s);
  return out;
}

//===----------------------------------------------------------------------===//
// The passes
//===----------------------------------------------------------------------===//

namespace {

class AddOutputsPass : public NamedPass {
public:
  AddOutputsPass()
      : NamedPass("add-outputs", "Make intermediate values graph outputs, typed (debugging)") {}
  absl::StatusOr<bool> run(Model &m) override {
    std::vector<std::string> names = surgeryNameList(*names_);
    if (names.empty() && !*all_)
      return absl::InvalidArgumentError(
          "add-outputs: no values given (add-outputs{names=a,b} or add-outputs{all})");
    auto n = addOutputs(m, names, *all_);
    if (!n.ok()) return n.status();
    addStat("outputs added", *n);
    return *n > 0;
  }

private:
  Option<std::string> names_{*this, "names", "the values to output, comma-separated", ""};
  Option<bool> all_{*this, "all", "every node result of the main graph", false};
};

class PruneOutputsPass : public NamedPass {
public:
  PruneOutputsPass()
      : NamedPass("prune-outputs", "Keep only the given graph outputs, then remove dead code") {}
  absl::StatusOr<bool> run(Model &m) override {
    std::vector<std::string> keep = surgeryNameList(*keep_);
    if (keep.empty())
      return absl::InvalidArgumentError(
          "prune-outputs: no outputs to keep given (prune-outputs{keep=a,b})");
    auto n = pruneOutputs(m, keep);
    if (!n.ok()) return n.status();
    addStat("outputs removed", *n);
    return *n > 0;
  }

private:
  Option<std::string> keep_{*this, "keep", "the outputs to keep, comma-separated", ""};
};

class EditIOPass : public NamedPass {
public:
  EditIOPass()
      : NamedPass("edit-io", "Rename main-graph inputs/outputs (scope-aware) and retype them "
                             "through a Cast (Note [Retyping the interface])") {}
  absl::StatusOr<bool> run(Model &m) override {
    auto renames = parseRenameList(*rename_);
    if (!renames.ok())
      return absl::InvalidArgumentError(absl::StrCat("rename-io: ", renames.status().message()));
    auto types = parseRetypeList(*retype_);
    if (!types.ok())
      return absl::InvalidArgumentError(absl::StrCat("retype-io: ", types.status().message()));
    if (renames->empty() && types->empty())
      return absl::InvalidArgumentError(
          "edit-io: nothing to do (edit-io{rename=OLD:NEW retype=NAME:TYPE}, --rename-io, "
          "--retype-io)");
    // Retyping names the interface as it is before the renames, so that
    // `--rename-io=x:y --retype-io=x:float16` reads as written.
    if (absl::Status s = retypeInterface(m, *types); !s.ok()) return s;
    if (absl::Status s = renameInterface(m, *renames); !s.ok()) return s;
    addStat("names changed", (int64_t)renames->size());
    addStat("types changed", (int64_t)types->size());
    return true;
  }

private:
  Option<std::string> rename_{*this, "rename", "OLD:NEW[,OLD:NEW...] inputs or outputs to rename",
                              "", "rename-io"};
  Option<std::string> retype_{*this, "retype",
                              "NAME:TYPE[,...] inputs or outputs to give another element type",
                              "", "retype-io"};
};

} // namespace

std::unique_ptr<Pass> createAddOutputsPass() { return std::make_unique<AddOutputsPass>(); }
std::unique_ptr<Pass> createPruneOutputsPass() { return std::make_unique<PruneOutputsPass>(); }
std::unique_ptr<Pass> createEditIOPass() { return std::make_unique<EditIOPass>(); }

} // namespace onnxir
