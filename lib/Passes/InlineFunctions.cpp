//===- InlineFunctions.cpp - Inline calls of model-local functions --------===//
//
// A call node is replaced by a copy of the function body: formal inputs map
// to the call's operands (missing optional inputs to empty slots), every
// copied value gets a fresh name, attribute references (`@name`) take the
// call's attribute or else the function's default (and are dropped when
// neither exists), and the call's results keep their names. Recursion
// (direct or through other functions) is an error naming the chain, and so
// is an expansion over the node budget (Note [Inlining budget]). A function
// importing another version of a domain than the model is inlined only when
// every op of the body resolves to the same schema at both versions, or,
// for the default domain, once the opset converter has converted the
// function's body to the model's version (convert-opset; the function is
// converted in place, so it keeps its meaning for any other caller);
// otherwise the call stays, with a remark (the pass manager prints it).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "OpsetSupport.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

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
      if (!src) {
        drop.push_back(a.name());
      } else {
        // Note [References through nested bodies]: a body inlined into
        // another body (convert-opset expanding an op inside a static
        // function body) meets calls whose attributes are themselves
        // references to the outer body's attributes. The reference must
        // carry through, naming the outer attribute: taking its payload
        // would fix the value to the placeholder a reference holds (the
        // SwiGLU body's Swish <alpha = @alpha> became alpha 0).
        std::string outer = src->isReference() ? src->refAttrName.str() : std::string();
        copyPayload(*src, a);
        if (!outer.empty()) a.refAttrName = outer;
      }
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

// Note [Inlining budget]
//   Inlining multiplies: 40 functions that each call the previous one twice
//   are a 3 KB model that expands to 2^40 nodes (the "billion laughs" of
//   XML entities). Before changing anything, the node count of the main
//   graph after full inlining is computed bottom-up (a function's expanded
//   size is memoized; the sum saturates), and inlining is refused with an
//   error when it exceeds the budget. The count is an upper bound: each
//   call also counts one Identity per result.
uint64_t addSat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/// Nodes of `g` (and its subgraphs) that call no function, plus the calls.
struct GraphCalls {
  uint64_t plain = 0;
  std::vector<std::pair<const Function *, unsigned>> calls; // callee, #results
};
GraphCalls scanCalls(const Model &m, const Graph &g) {
  GraphCalls r;
  const_cast<Graph &>(g).walk([&](Node *n) {
    if (const Function *f = const_cast<Model &>(m).findFunction(*n))
      r.calls.emplace_back(f, n->numResults());
    else
      ++r.plain;
  });
  return r;
}

/// The expanded size of the main graph; iterative post-order over the call
/// DAG (recursion was refused before), so a long chain of functions cannot
/// overflow the stack.
uint64_t expandedMainSize(const Model &m) {
  llvm::DenseMap<const Function *, GraphCalls> scans;
  llvm::DenseMap<const Function *, uint64_t> size;
  auto sizeOf = [&](const GraphCalls &gc) {
    uint64_t t = gc.plain;
    for (auto &[f, results] : gc.calls) t = addSat(t, addSat(size.lookup(f), results));
    return t;
  };
  GraphCalls main = scanCalls(m, m.graph());
  std::vector<std::pair<const Function *, size_t>> stack;
  for (auto &root : main.calls) {
    if (size.count(root.first)) continue;
    stack.emplace_back(root.first, 0);
    while (!stack.empty()) {
      auto &[f, next] = stack.back();
      auto it = scans.find(f);
      if (it == scans.end()) it = scans.try_emplace(f, scanCalls(m, f->body())).first;
      if (next < it->second.calls.size()) {
        const Function *callee = it->second.calls[next++].first;
        if (!size.count(callee) && callee != f) stack.emplace_back(callee, 0);
        continue;
      }
      size[f] = sizeOf(it->second);
      stack.pop_back();
    }
  }
  return sizeOf(main);
}

absl::Status checkBudget(const Model &m, uint64_t maxNodes) {
  uint64_t n = expandedMainSize(m);
  if (n <= maxNodes) return absl::OkStatus();
  std::string count = n == UINT64_MAX ? std::string("more than 2^64") : std::to_string(n);
  return absl::ResourceExhaustedError(absl::StrCat(
      "inline-functions: inlining every call would grow the main graph to ", count,
      " nodes, over the budget of ", maxNodes,
      " (raise it with --inline-max-nodes=N if that is really wanted)"));
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
      Node *id = createIdentityNode(g, o, call);
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
// mean what the model's imports say. Where the versions differ, inlining is
// safe only if every op of the body that domain resolves to the same schema
// at both versions (OpSchema.h); otherwise "" and the reason.
std::string opsetMismatch(Model &m, Function &f) {
  for (const OpsetImport &o : f.opsetImports) {
    int64_t have = m.opsetVersion(o.domain);
    if (have < 0 || have == o.version) continue;
    std::string why;
    f.body().walk([&](Node *n) {
      if (!why.empty() || canonicalDomain(n->domain()) != canonicalDomain(o.domain)) return;
      const OpSchema *a = lookupSchema(n->domain(), n->opType(), o.version);
      const OpSchema *b = lookupSchema(n->domain(), n->opType(), have);
      if (!isSchemaDomain(o.domain) || !a || a != b)
        why = absl::StrCat("its ", n->opType().str(), " means ", a ? a->str() : "an unknown op",
                           " at its opset ", o.version, " but ", b ? b->str() : "an unknown op",
                           " at the model's ", have);
    });
    if (!why.empty())
      return absl::StrCat("function \"", f.qualifiedName(), "\" imports opset \"", o.domain,
                          "\" version ", o.version, ", the model version ", have, ": ", why);
  }
  return "";
}

/// Converts `f` to the model's version of the default domain when it imports
/// another one; "" or the converter's why.
std::string convertToModel(Model &m, Function &f) {
  int64_t have = m.opsetVersion("");
  int64_t own = opsetVersionIn(f.opsetImports, "");
  if (have < 0 || own < 0 || own == have) return "";
  absl::Status s = opset::convertFunction(m, f, have);
  return s.ok() ? "" : std::string(s.message());
}

} // namespace

absl::Status opset::inlineBody(Model &m, Node *call, Function &f) { return inlineCall(m, call, f); }

absl::StatusOr<bool> inlineFunctions(Model &m, int64_t *inlined, uint64_t maxNodes,
                                     std::vector<std::string> *remarks) {
  if (m.functions().empty()) return false;
  if (auto s = checkRecursion(m); !s.ok()) return s;
  if (auto s = checkBudget(m, maxNodes); !s.ok()) return s;
  bool changed = false;
  llvm::DenseSet<Node *> left; // calls kept because of an opset mismatch
  for (;;) {
    std::vector<std::pair<Node *, Function *>> calls;
    m.graph().walk([&](Node *n) {
      if (Function *f = m.findFunction(*n))
        if (!left.count(n)) calls.emplace_back(n, f);
    });
    if (calls.empty()) break;
    for (auto &[n, f] : calls) {
      std::string converted = convertToModel(m, *f);
      if (std::string why = opsetMismatch(m, *f); !why.empty()) {
        if (!converted.empty()) absl::StrAppend(&why, " (the opset converter refused: ", converted, ")");
        if (remarks) remarks->push_back("left the call " + nodePath(n) + ": " + why);
        left.insert(n);
        continue;
      }
      if (auto s = inlineCall(m, n, *f); !s.ok()) return s;
      changed = true;
      if (inlined) ++*inlined;
    }
  }
  return changed;
}

namespace {
class InlinePass : public NamedPass {
public:
  InlinePass() : NamedPass("inline-functions", "Inline calls of model-local functions") {}
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    std::vector<std::string> remarks;
    auto r = inlineFunctions(m, &n, *maxNodes_, &remarks);
    for (std::string &s : remarks) remark(std::move(s));
    addStat("calls inlined", n);
    return r;
  }

private:
  Option<uint64_t> maxNodes_{*this, "max-nodes",
                             "refuse to grow the main graph past this many nodes, counted "
                             "before any change (Note [Inlining budget])",
                             kDefaultInlineNodeBudget, "inline-max-nodes"};
};
} // namespace

std::unique_ptr<Pass> createInlineFunctionsPass() { return std::make_unique<InlinePass>(); }

} // namespace onnxir
