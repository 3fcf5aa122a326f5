//===- ExpandFunctions.cpp - Replace function ops by their bodies ---------===//
//
// expand-functions{ops=A,B,...} (issue 27, item 2): each default-domain node
// of the listed ops (without `ops`: of every op that has a body usable where
// the node is) in the main graph and its subgraphs is replaced by the op's
// function body:
//  - a static body of the schema data (OpSchema::functionBodies, ONNX text
//    syntax) is parsed once per run and opset (by lib/Ops, Note [Function
//    bodies where schemas live]) and run, as a model-local
//    function, through the opset converter to the version in force where the
//    node is (the body's key is the version of the ops it uses; a key above
//    it needs down-conversion, which may refuse), then inlined by the inliner
//    (InlineFunctions.cpp): attribute references take the node's attribute,
//    else the schema's default (ReduceL2's @keepdims), else are dropped;
//    values get fresh names, node names are `node/inner`;
//  - a context-dependent body comes from the op's builder (Note [Expansion
//    builders], OpRegistry.h; each in its op's section of the family file).
// Ops of an op library (Ops/OpLibrary.h) declared with a body expand the same
// way, their body converted to the default domain's version where the node is.
// The results of the node keep their names. Every node is checked before
// anything changes: a listed op that cannot be expanded is a located error
// and the model is untouched; without `ops`, such nodes stay (a remark each).
// Nodes an expansion creates are expanded in turn (Note [Expansion rounds]).
//
// convert-opset uses the same expansion (checkExpansion, expandNode) for ops
// that have no form at its target.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/FunctionBodies.h"
#include "onnxir/Ops/OpLibrary.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "OpsetSupport.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace onnxir {

namespace {

/// An op of an op library (Ops/OpLibrary.h), whose body expands like a
/// schema's: its nodes are of the default domain.
bool isLibraryNode(const Node &n) { return isLibraryDomain(n.domain()); }

/// The version of the default domain an expansion of `n` must be valid at:
/// the one in force where `n` is (for a library op, not its own domain's).
int64_t expansionVersion(const Node &n) {
  return isLibraryNode(n) ? opsetInForce(n, "") : opsetInForce(n);
}

/// The schema in force for `n`, if it is a default-domain (or op-library)
/// node with one.
const OpSchema *schemaOf(const Node &n) {
  if (isLibraryNode(n)) return lookupSchema(n.domain(), n.opType(), opsetInForce(n));
  if (!isDefaultDomain(n.domain())) return nullptr;
  return lookupSchema("", n.opType(), opsetInForce(n));
}

const OpEntry *entryOf(const Node &n) {
  const OpSchema *s = schemaOf(n);
  if (!s) return nullptr;
  for (const OpEntry &e : OpRegistry::get().versions(s->domain(), s->name()))
    if (e.schema == s) return &e;
  return nullptr;
}

/// The static body describing `s` for a model at `opset`: the greatest key
/// not above it, else the oldest (to be converted down).
const FunctionBody *bodyFor(const OpSchema &s, int64_t opset) {
  if (const FunctionBody *b = s.functionBodyFor(opset)) return b;
  return s.functionBodies().empty() ? nullptr : &s.functionBodies().front();
}

void removeFunction(Model &m, Function *f) {
  auto &fs = m.functions();
  fs.erase(std::remove_if(fs.begin(), fs.end(), [&](auto &p) { return p.get() == f; }), fs.end());
}

/// Replaces `n`'s results by `values` (keeping their names) and erases `n`.
absl::Status replaceResults(Node &n, const std::vector<Value *> &values) {
  std::vector<std::pair<Value *, std::string>> renames;
  for (unsigned i = 0; i < n.numResults(); ++i) {
    Value *r = n.result(i);
    if (!r) continue;
    Value *v = i < values.size() ? values[i] : nullptr;
    if (!v)
      return absl::InternalError(absl::StrCat("the expansion has no value for result #", i));
    r->replaceAllUsesWith(v);
    renames.emplace_back(v, r->name().str());
  }
  if (absl::Status s = n.erase(); !s.ok()) return s;
  for (auto &[v, name] : renames)
    if (absl::Status s = v->setName(name); !s.ok()) return s;
  return absl::OkStatus();
}

} // namespace

bool opset::hasExpansion(const Node &n) {
  const OpEntry *e = entryOf(n);
  return e && (e->expand || !e->schema->functionBodies().empty());
}

// Checking a static body's conversion depends on the body and the opset only
// (its values are untyped), so the answer is kept for the process.
absl::Status checkBodyConversion(const OpSchema &s, const FunctionBody &b, int64_t version) {
  static std::mutex mu;
  static std::map<std::pair<const char *, int64_t>, absl::Status> cache;
  std::pair<const char *, int64_t> key{b.text.data(), version};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  Model scratch;
  absl::Status st;
  auto f = parseFunctionBody(scratch, s, b);
  if (!f.ok()) st = f.status();
  else if (absl::Status c = opset::convertFunction(scratch, **f, version, nullptr, true); !c.ok())
    st = absl::Status(c.code(), absl::StrCat("its function body (at opset ", b.opset,
                                             ") does not convert to opset ", version, ": ",
                                             c.message()));
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, st);
  return st;
}

absl::Status opset::checkExpansion(Node &n, int64_t version) {
  const OpEntry *e = entryOf(n);
  if (!e) return absl::FailedPreconditionError("no schema");
  if (e->expand) {
    ExpandContext c;
    c.checkOnly = true;
    c.opset = version;
    std::vector<Value *> unused;
    return e->expand(n, c, unused);
  }
  const OpSchema &s = *e->schema;
  const FunctionBody *b = bodyFor(s, opsetInForce(n));
  if (!b)
    return absl::FailedPreconditionError(
        s.hasContextDependentFunction()
            ? absl::StrCat(s.str(), " has a context-dependent function body, and onnxir has no "
                                    "builder for it")
            : absl::StrCat(s.str(), " has no function body"));
  if (b->opset == version) return absl::OkStatus();
  // The body's ops are at its key: they must convert to `version`.
  return checkBodyConversion(s, *b, version);
}

opset::ExpansionSession::~ExpansionSession() {
  for (auto &entry : fns_) removeFunction(m_, entry.second);
}

absl::StatusOr<Function *> opset::ExpansionSession::body(const OpSchema &s, const FunctionBody &b,
                                                         int64_t version) {
  std::pair<const void *, int64_t> key{b.text.data(), version};
  for (auto &entry : fns_)
    if (entry.first == key) return entry.second;
  auto f = parseFunctionBody(m_, s, b);
  if (!f.ok()) return f.status();
  if (b.opset != version)
    if (absl::Status st = convertFunction(m_, **f, version); !st.ok()) {
      removeFunction(m_, *f);
      return st;
    }
  fns_.emplace_back(key, *f);
  return *f;
}

absl::Status opset::expandNode(ExpansionSession &session, Node &n, int64_t version) {
  const OpEntry *e = entryOf(n);
  if (!e) return absl::InternalError("no schema");
  if (e->expand) {
    ExpandContext c;
    c.opset = version;
    std::vector<Value *> values;
    if (absl::Status s = e->expand(n, c, values); !s.ok()) return s;
    return replaceResults(n, values);
  }
  const OpSchema &s = *e->schema;
  const FunctionBody *b = bodyFor(s, opsetInForce(n));
  if (!b) return absl::InternalError(absl::StrCat(s.str(), " has no function body"));
  auto f = session.body(s, *b, version);
  if (!f.ok()) return f.status();
  return inlineBody(session.model(), &n, **f);
}

// Note [Expansion rounds]
// A body may use ops that are themselves to be expanded (HardSwish's body
// uses HardSigmoid, Mish's Softplus), so the pass repeats over the nodes the
// previous round made, up to kMaxRounds. The first round is checked as a
// whole before anything changes (a listed op that cannot be expanded is an
// error and nothing changed); later rounds only meet nodes the pass itself
// made, and one of those that cannot be expanded stays, with a remark.
constexpr int kMaxRounds = 8;

absl::StatusOr<bool> expandFunctions(Model &m, const std::vector<std::string> &ops,
                                     OpsetCounts *counts, std::vector<std::string> *remarks) {
  llvm::StringSet<> listed;
  for (const std::string &op : ops) listed.insert(op);
  // Nodes left as they are (never erased, so their addresses stay theirs).
  llvm::DenseSet<const Node *> kept;
  bool changed = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<Node *> todo;
    std::vector<std::string> unchanged; // nodes with a body that stay
    absl::Status err;
    m.graph().walk([&](Node *n) {
      if (!err.ok() || !(isDefaultDomain(n->domain()) || isLibraryNode(*n)) || kept.count(n))
        return;
      // A model-local function of the same name is what the node calls
      // (inference and the evaluator read it first too): not the library's.
      if (isLibraryNode(*n) && m.findFunction(*n)) return;
      bool isListed = listed.count(n->opType());
      if (!listed.empty() && !isListed) return;
      int64_t version = expansionVersion(*n);
      const OpSchema *s = schemaOf(*n);
      bool expandable = s && opset::hasExpansion(*n);
      if (!isListed && !expandable) return;
      absl::Status st;
      if (!s)
        st = absl::FailedPreconditionError(absl::StrCat("no schema at opset ", version));
      else if (!expandable)
        st = absl::FailedPreconditionError(
            s->hasContextDependentFunction()
                ? absl::StrCat(s->str(), " has a context-dependent function body, and onnxir "
                                         "has no builder for it")
                : absl::StrCat(s->str(), " has no function body"));
      else
        st = opset::checkExpansion(*n, version);
      if (st.ok()) {
        todo.push_back(n);
        return;
      }
      std::string why = absl::StrCat("expand-functions: ", nodePath(n), ": cannot expand ",
                                     n->opType().str(), " at opset ", version, ": ",
                                     st.message());
      if (isListed && round == 0) {
        err = absl::Status(st.code(), why);
        return;
      }
      if (remarks) remarks->push_back(why);
      unchanged.push_back(n->opType().str());
      kept.insert(n);
    });
    if (!err.ok()) return err;
    if (counts)
      for (const std::string &op : unchanged) ++counts->unchanged[op];
    if (todo.empty()) break;
    opset::ExpansionSession session(m);
    for (Node *n : todo) {
      // (Not nodePath up front: it counts the node's position, O(graph).)
      std::string op = n->opType().str(),
                  where = absl::StrCat(op, " node '", n->name().str(), "'");
      if (absl::Status s = opset::expandNode(session, *n, expansionVersion(*n)); !s.ok())
        return absl::InternalError(absl::StrCat("expand-functions: ", where,
                                                ": an expansion failed after its check passed "
                                                "(the model is half-expanded): ",
                                                s.message()));
      if (counts) ++counts->expanded[op];
    }
    changed = true;
  }
  return changed;
}

namespace {
class ExpandFunctionsPass : public NamedPass {
public:
  ExpandFunctionsPass()
      : NamedPass("expand-functions", "Replace nodes of function ops (ops=A,B,...; default: every "
                                      "op with a usable body) by their function bodies") {}
  absl::StatusOr<bool> run(Model &m) override {
    std::vector<std::string> ops;
    for (llvm::StringRef rest = *ops_; !rest.empty();) {
      auto [op, tail] = rest.split(',');
      if (!op.trim().empty()) ops.push_back(op.trim().str());
      rest = tail;
    }
    OpsetCounts counts;
    std::vector<std::string> remarks;
    auto r = expandFunctions(m, ops, &counts, &remarks);
    for (std::string &s : remarks) remark(std::move(s));
    for (auto &[name, n] : opset::countsAsStats(counts)) addStat(name, n);
    return r;
  }

private:
  Option<std::string> ops_{*this, "ops",
                           "comma-separated op types to expand (default: every op whose body is "
                           "usable at the model's opset)",
                           "", "expand-ops"};
};
} // namespace

std::unique_ptr<Pass> createExpandFunctionsPass() { return std::make_unique<ExpandFunctionsPass>(); }

} // namespace onnxir
