//===- InlineFunctions.cpp - Inline calls of model-local functions --------===//
//
// A call node is replaced by a copy of the function body: formal inputs map
// to the call's operands (missing optional inputs to empty slots), every
// copied value gets a fresh name, attribute references (`@name`) take the
// call's attribute or else the function's default (and are dropped when
// neither exists), and the call's results keep their names. Recursion
// (direct or through other functions) is an error naming the chain.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cassert>

namespace onnxir {

namespace {

// A graph that took the place of an attribute reference (a default graph of
// the function, or the caller's graph) now sits in a new scope: its
// definitions that would shadow a name visible there get fresh names.
void renameShadowing(Graph &sub) {
  Graph *outer = sub.parentGraph();
  if (!outer) return;
  std::vector<Value *> defs;
  sub.walkGraphs([&](Graph *g) {
    std::vector<Value *> d = g->definitions();
    defs.insert(defs.end(), d.begin(), d.end());
  });
  for (Value *v : defs)
    if (outer->lookup(v->name())) {
      std::string fresh = v->getGraph()->freshName(v->name()).str();
      [[maybe_unused]] absl::Status s = v->setName(fresh);
      assert(s.ok() && "a fresh name is free");
    }
}

// Copies `src`'s payload into `dst` (keeping dst's name and doc string).
void copyPayload(const Attribute &src, Attribute &dst) {
  IRMapping m;
  dst.copyPayloadFrom(src, m, renameShadowing);
  dst.hasKindField = true;
  dst.refAttrName.clear();
}

// Resolves attribute references in `n` and its subgraphs.
void substituteRefs(Node &n, const Node &call, const Function &f) {
  std::vector<std::string> drop;
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    Attribute &a = n.attribute(i);
    if (a.isReference()) {
      const Attribute *src = call.getAttr(a.refAttrName);
      if (!src)
        for (auto &d : f.attributeDefaults)
          if (d->name() == a.refAttrName) src = d.get();
      if (src) copyPayload(*src, a);
      else drop.push_back(a.name());
    }
    for (unsigned gi = 0; gi < a.numGraphs(); ++gi)
      for (Node &m : a.graph(gi)->nodes()) substituteRefs(m, call, f);
  }
  for (auto &d : drop) n.removeAttr(d);
}

absl::Status checkRecursion(Model &m) {
  llvm::DenseMap<Function *, int> state;
  std::vector<Function *> stack;
  std::function<absl::Status(Function *)> dfs = [&](Function *f) -> absl::Status {
    state[f] = 1;
    stack.push_back(f);
    absl::Status st = absl::OkStatus();
    f->body().walk([&](Node *n) {
      if (!st.ok()) return;
      Function *g = m.findFunction(*n);
      if (!g) return;
      if (state.lookup(g) == 1) {
        std::string chain;
        auto it = std::find(stack.begin(), stack.end(), g);
        for (; it != stack.end(); ++it) absl::StrAppend(&chain, (*it)->qualifiedName(), " -> ");
        chain += g->qualifiedName();
        st = absl::InvalidArgumentError("inline-functions: recursive function calls: " + chain);
        return;
      }
      if (state.lookup(g) == 0) st = dfs(g);
    });
    stack.pop_back();
    state[f] = 2;
    return st;
  };
  for (auto &f : m.functions())
    if (state.lookup(f.get()) == 0)
      if (auto s = dfs(f.get()); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status inlineCall(Model &m, Node *call, Function &f) {
  Graph &g = *call->getGraph();
  const Graph &body = f.body();
  IRMapping map;
  for (unsigned i = 0; i < body.numInputs(); ++i)
    map.map(body.input(i), i < call->numOperands() ? call->operand(i) : nullptr);
  auto callIt = call->getIterator();
  Node *prevBefore = callIt == g.nodes().begin() ? nullptr : &*std::prev(callIt);
  std::vector<Value *> outs = body.cloneNodesInto(g, call, map);
  // The copies sit between prevBefore and the call.
  auto it = prevBefore ? std::next(prevBefore->getIterator()) : g.nodes().begin();
  for (; &*it != call; ++it) {
    substituteRefs(*it, *call, f);
    // Node names: `call/inner`, so repeated inlining keeps them apart.
    if (!call->name().empty() && !it->name().empty())
      it->setName((call->name() + "/" + it->name()).str());
  }
  // Results keep their names.
  std::vector<std::pair<Value *, std::string>> renames;
  for (unsigned i = 0; i < call->numResults(); ++i) {
    Value *r = call->result(i);
    if (!r) continue;
    Value *o = i < outs.size() ? outs[i] : nullptr;
    if (!o)
      return absl::InvalidArgumentError(absl::StrCat(nodePath(call), ": function \"",
                                                     f.qualifiedName(), "\" has no output #", i));
    bool fresh = o->definingNode() && o->getGraph() == &g && !map.contains(o) &&
                 !o->isGraphOutput();
    bool alreadyRenamed = false;
    for (auto &rn : renames) alreadyRenamed |= rn.first == o;
    if (fresh && !alreadyRenamed) {
      std::string name = r->name().str();
      r->replaceAllUsesWith(o);
      renames.emplace_back(o, name);
    } else {
      // A pass-through output (or one used twice): an Identity keeps the name.
      Node *id = g.createNode("Identity", {o}, 1, call);
      r->replaceAllUsesWith(id->result(0));
      renames.emplace_back(id->result(0), r->name().str());
    }
  }
  if (auto s = call->erase(); !s.ok()) return s;
  for (auto &[v, name] : renames)
    if (auto s = v->setName(name); !s.ok()) return s;
  // Opsets the body uses must be imported by the model.
  for (const OpsetImport &o : f.opsetImports)
    if (m.opsetVersion(o.domain) < 0) m.opsetImports.push_back({o.domain, o.version, ""});
  return absl::OkStatus();
}

// A body's nodes mean what its opset imports say; inlined into the model they
// mean what the model's imports say. Refuse when the two disagree.
absl::Status checkOpsets(const Model &m, const Function &f) {
  for (const OpsetImport &o : f.opsetImports) {
    int64_t have = m.opsetVersion(o.domain);
    if (have >= 0 && have != o.version)
      return absl::FailedPreconditionError(absl::StrCat(
          "inline-functions: function \"", f.qualifiedName(), "\" imports opset \"", o.domain,
          "\" version ", o.version, " but the model imports version ", have,
          "; inlining would change what its nodes mean"));
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<bool> inlineFunctions(Model &m, int64_t *inlined) {
  if (m.functions().empty()) return false;
  if (auto s = checkRecursion(m); !s.ok()) return s;
  bool changed = false;
  for (;;) {
    std::vector<std::pair<Node *, Function *>> calls;
    m.graph().walk([&](Node *n) {
      if (Function *f = m.findFunction(*n)) calls.emplace_back(n, f);
    });
    if (calls.empty()) break;
    for (auto &[n, f] : calls) {
      if (auto s = checkOpsets(m, *f); !s.ok()) return s;
      if (auto s = inlineCall(m, n, *f); !s.ok()) return s;
      changed = true;
      if (inlined) ++*inlined;
    }
  }
  return changed;
}

namespace {
class InlinePass : public Pass {
public:
  llvm::StringRef argument() const override { return "inline-functions"; }
  llvm::StringRef description() const override {
    return "Inline calls of model-local functions";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = inlineFunctions(m, &n);
    addStat("calls inlined", n);
    return r;
  }
};
} // namespace

std::unique_ptr<Pass> createInlineFunctionsPass() { return std::make_unique<InlinePass>(); }

} // namespace onnxir
