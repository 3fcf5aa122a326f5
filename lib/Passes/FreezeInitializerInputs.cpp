//===- FreezeInitializerInputs.cpp - Initializers that are inputs -> constants ===//
//
// An initializer that is also listed as a graph input is that input's
// default: a caller may feed another value, so folding and inference do not
// read it (constantOf, IR/ConstantValue.h). Exporters of IR version 3 list
// every weight that way, which leaves such models with nothing to fold.
// freeze-initializer-inputs removes those inputs from the main graph's
// interface: each keeps its name, tensor and uses and becomes a plain
// initializer (a constant). `names=a,b` freezes only the inputs named; a
// name that is not an input with an initializer is an error naming the
// candidates, and nothing changes. Sparse initializers stay inputs (no pass
// reads them as constants). Only the main graph has callers; nested graphs
// keep theirs.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/StringSet.h"

namespace onnxir {

absl::StatusOr<int64_t> freezeInitializerInputs(Model &m, const std::vector<std::string> &names) {
  Graph &g = m.graph();
  std::vector<Value *> candidates;
  for (Value *v : g.inputs())
    if (v->initializer()) candidates.push_back(v);
  llvm::StringSet<> wanted;
  for (const std::string &n : names) wanted.insert(n);
  for (const std::string &n : names) {
    bool found = false;
    for (Value *v : candidates) found |= v->name() == n;
    if (found) continue;
    std::vector<std::string> have;
    for (Value *v : candidates) have.push_back(v->name().str());
    return absl::InvalidArgumentError(absl::StrCat(
        "freeze-initializer-inputs: \"", n, "\" is not an input of graph \"", g.name,
        "\" with an initializer (",
        have.empty() ? std::string("it has none")
                     : absl::StrCat("those are: ", absl::StrJoin(have, ", ")),
        ")"));
  }
  int64_t frozen = 0;
  for (Value *v : candidates) {
    if (!wanted.empty() && !wanted.count(v->name())) continue;
    // The input is replaced by a new initializer value under a temporary
    // name (the name is taken until the input is gone), then renamed.
    std::string name = v->name().str();
    Tensor t = *v->initializer();
    std::string temp = name;
    for (unsigned k = 0; g.lookupLocal(temp) || temp == name; ++k)
      temp = absl::StrCat(name, ".frozen", k ? absl::StrCat(k) : std::string());
    auto c = g.addInitializer(temp, std::move(t));
    if (!c.ok()) return c.status();
    g.removeInputDefault(v);
    // Note [Frozen outputs]: an input that is also a graph output is
    // returned (and read) through an Identity that takes its name; the
    // initializer keeps the temporary one. onnxruntime refuses an initializer that is
    // a graph output and read by no node of the main graph ("Graph ctor
    // should have created NodeArg for initializer").
    bool output = v->isGraphOutput();
    v->replaceAllUsesWith(*c);
    unsigned index = 0;
    while (g.input(index) != v) ++index;
    if (auto s = g.removeInput(index); !s.ok()) return s;
    if (output) {
      Node *first = g.nodes().empty() ? nullptr : &*g.nodes().begin();
      Node *id = createIdentityNode(g, *c, first);
      id->result(0)->setType((*c)->type());
      // Every use reads the Identity (the name stays on what they read).
      (*c)->replaceAllUsesWith(id->result(0));
      id->setOperand(0, *c);
      if (auto s = id->result(0)->setName(name); !s.ok()) return s;
    } else if (auto s = (*c)->setName(name); !s.ok()) {
      return s;
    }
    ++frozen;
  }
  return frozen;
}

std::string inputDefaultsNote(const Model &m, const PassStatistics &stats) {
  int64_t folds = 0, reads = 0;
  for (auto &[key, n] : stats) {
    if (key == "fold-constants: declined (initializer is a graph input)") folds += n;
    if (key == "infer-shapes: initializers that are graph inputs, not read") reads += n;
  }
  int64_t defaults = 0;
  for (const Value *v : m.graph().inputs()) defaults += v->initializer() != nullptr;
  if ((!folds && !reads) || !defaults) return "";
  return absl::StrCat("initializers that are also graph inputs (", defaults,
                      " here: overridable defaults, never read as constants) kept ",
                      folds ? "nodes from folding" : "", folds && reads ? " and " : "",
                      reads ? "inference from their values" : "",
                      "; -freeze-initializer-inputs makes them constants (all, or "
                      "freeze-initializer-inputs{names=...})");
}

namespace {

class FreezeInitializerInputsPass : public NamedPass {
public:
  FreezeInitializerInputsPass()
      : NamedPass("freeze-initializer-inputs",
                  "Make initializers that are also main-graph inputs plain constants "
                  "(the inputs are removed)") {}
  absl::StatusOr<bool> run(Model &m) override {
    std::vector<std::string> names;
    for (absl::string_view s : absl::StrSplit(absl::string_view(names_->data(), names_->size()),
                                              ',', absl::SkipWhitespace()))
      names.emplace_back(s);
    auto n = freezeInitializerInputs(m, names);
    if (!n.ok()) return n.status();
    addStat("inputs frozen", *n);
    return *n > 0;
  }

private:
  Option<std::string> names_{*this, "names",
                             "the inputs to freeze, comma-separated (default: all)", ""};
};

} // namespace

std::unique_ptr<Pass> createFreezeInitializerInputsPass() {
  return std::make_unique<FreezeInitializerInputsPass>();
}

} // namespace onnxir
