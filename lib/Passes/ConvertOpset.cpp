//===- ConvertOpset.cpp - Move the default domain to another opset --------===//
//
// convert-opset{target=N} (issue 27, first slice): rewrites every node of the
// default domain in the main graph and its subgraphs so that it is valid at
// opset N with the same meaning, then imports the default domain at N.
//
// A node walks from the schema it resolves to, to the schema in force at N,
// one since-version at a time (Note [Version adapters], OpRegistry.h). A step
// between two schemas that differ only in their type lists needs nothing
// (going down, the node's known operand and result types must be allowed by
// the older list); any other step needs the adapter of the newer entry, else
// the pass refuses. Every step of every node is checked before anything
// changes, so a refusal leaves the model untouched.
//
// An op that has no form at N (its first version is above N) is expanded
// into its function body (ExpandFunctions.cpp: a static body of the schema
// data converted to N, or a builder's nodes made for N); the expansion is
// checked with the rest before anything changes.
//
// Model-local functions (Note [Functions across opsets]): a function that
// reads the default domain's version from the model is converted with it; one
// importing its own version keeps it unless `functions` asks to convert it
// to N too.
//
// An op removed or deprecated between the versions is refused unless an
// adapter replaces it (Upsample <-> Resize, Scatter <-> ScatterElements) or
// it expands. Other domains (ai.onnx.ml, ...) are left as they are.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "OpsetSupport.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <iterator>

namespace onnxir {

namespace {

/// Going down to `older`: the node's known operand and result types must be
/// allowed there; the why of a refusal otherwise.
absl::Status typesAllowed(const Node &n, const OpSchema &older) {
  auto check = [&](const Value *v, const FormalParameter *p, const char *what,
                   unsigned i) -> absl::Status {
    if (!v || !p || !v->type() || !p->constraint) return absl::OkStatus();
    std::string ts = typeString(*v->type());
    if (ts.empty() || p->constraint->allows(ts)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(what, " #", i, " ('", v->name().str(),
                                                      "') has type ", ts, ", which ",
                                                      older.str(), " does not allow"));
  };
  for (unsigned i = 0; i < n.numOperands(); ++i)
    if (absl::Status s = check(n.operand(i), older.inputFor(i), "operand", i); !s.ok()) return s;
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (absl::Status s = check(n.result(i), older.outputFor(i), "result", i); !s.ok()) return s;
  return absl::OkStatus();
}

const OpEntry *entryOf(const OpSchema &s) {
  for (const OpEntry &e : OpRegistry::get().versions("", s.name()))
    if (e.schema == &s) return &e;
  return nullptr;
}

struct Step {
  Node *node;
  VersionAdapter fn;
  int64_t from, to, target;
  /// The node's op type before the conversion (a schema's name: stable).
  llvm::StringRef sourceOp;
};

/// Runs step `s` on `n` for real.
absl::Status applyStep(Node &n, const Step &s) {
  AdapterContext c;
  c.from = s.from;
  c.to = s.to;
  c.target = s.target;
  c.sourceOp = s.sourceOp;
  return s.fn(n, c);
}

// Note [Planning on the node as the steps leave it]
// A node's later steps are checked on the node as its earlier steps leave
// it: Upsample-7 -> Resize-11 is Upsample-9's step (the scales attribute
// becomes operand #1), the rename to Resize-10, then Resize-11's step, which
// needs that operand. Planning changes nothing, so the first adapter step of
// a node is checked on the node itself, and every later one on a trial copy
// of it: the copy (the same operands, attributes and result types) goes
// right before the node, its read results read by a placeholder node of a
// private domain (checks that ask whether a result is used see the node's
// answer), and the node's planned steps are applied to it for real as the
// planning goes. When the node's planning ends, the copy and whatever its
// steps made (the nodes between the node's predecessor and the node, new
// initializers) are erased. A node holding subgraphs has no copy (it would
// copy the bodies): its checks see the node as it was, and its adapters read
// only what the other steps keep (Note [Version adapters]).
class TrialCopy {
public:
  explicit TrialCopy(Node &n) : n_(n), g_(*n.getGraph()) {}
  TrialCopy(const TrialCopy &) = delete;
  TrialCopy &operator=(const TrialCopy &) = delete;
  ~TrialCopy() { discard(); }

  /// The node to check the next step on: the copy with `done` (this node's
  /// planned steps) applied, or the node itself when nothing is planned yet
  /// or it holds subgraphs.
  absl::StatusOr<Node *> subject(llvm::ArrayRef<Step> done) {
    if (done.empty() || n_.hasSubgraphs()) return &n_;
    if (!copy_) make();
    for (; applied_ < done.size(); ++applied_)
      if (absl::Status s = applyStep(*copy_, done[applied_]); !s.ok())
        return absl::InternalError(absl::StrCat(
            "a step failed on the node as the earlier steps leave it, after its check passed: ",
            s.message()));
    return copy_;
  }

private:
  void make() {
    auto it = n_.getIterator();
    prev_ = it == g_.nodes().begin() ? nullptr : &*std::prev(it);
    inits_ = g_.initializers().size();
    copy_ = g_.createEmptyNode(n_.opType(), n_.domain(), &n_);
    for (unsigned i = 0; i < n_.numOperands(); ++i) copy_->addOperand(n_.operand(i));
    std::vector<Value *> read;
    for (unsigned i = 0; i < n_.numResults(); ++i) {
      Value *r = n_.result(i);
      auto v = r ? copy_->addResult(g_.freshName("convert_opset_trial"))
                 : absl::StatusOr<Value *>(nullptr);
      if (!v.ok() || !*v) {
        copy_->addEmptyResult();
        continue;
      }
      (*v)->setType(r->type());
      if (!r->useEmpty() || r->isGraphOutput()) read.push_back(*v);
    }
    for (unsigned i = 0; i < n_.numAttributes(); ++i) copy_->addAttr(n_.attribute(i).clone());
    if (!read.empty()) g_.createNode("Use", read, 0, &n_, "onnxir.convert-opset-trial");
  }
  void discard() {
    if (!copy_) return;
    std::vector<Node *> made;
    auto it = prev_ ? std::next(prev_->getIterator()) : g_.nodes().begin();
    for (; it != g_.nodes().end() && &*it != &n_; ++it) made.push_back(&*it);
    for (auto it = made.rbegin(); it != made.rend(); ++it) (void)(*it)->erase();
    llvm::ArrayRef<Value *> inits = g_.initializers();
    if (inits.size() > inits_) {
      llvm::DenseSet<Value *> fresh(inits.begin() + inits_, inits.end());
      g_.removeInitializersIf([&](Value *v) { return fresh.count(v) != 0; });
    }
  }

  Node &n_;
  Graph &g_;
  Node *copy_ = nullptr, *prev_ = nullptr;
  size_t inits_ = 0, applied_ = 0;
};

/// Plans the steps of `n` from opset `cur` to `target` (appended to `steps`),
/// checking each adapter; the why of a refusal otherwise. An adapter that
/// replaces the op (Note [Version adapters]) moves the walk to the other op's
/// versions.
absl::Status planNode(Node &n, int64_t cur, int64_t target, std::vector<Step> &steps) {
  std::string op = n.opType().str();
  // Note [Planning on the node as the steps leave it].
  size_t firstStep = steps.size();
  TrialCopy trial(n);
  const OpSchema *from0 = lookupSchema("", op, cur);
  if (!from0) return absl::FailedPreconditionError(absl::StrCat("no schema at opset ", cur));
  bool up = target > cur;
  for (int renames = 0;; ++renames) {
    if (renames > 4) return absl::InternalError("the op is renamed back and forth");
    const OpSchema *from = lookupSchema("", op, cur);
    if (!from) return absl::FailedPreconditionError(absl::StrCat("no schema at opset ", cur));
    llvm::ArrayRef<OpSchema> vs = schemaVersions("", op);
    auto indexOf = [&](const OpSchema *s) { return (size_t)(s - vs.data()); };
    const OpSchema *to = lookupSchema("", op, target);
    // Below the op's first version the walk goes to index 0, whose downgrade
    // may turn it into its predecessor op.
    const OpEntry *first = entryOf(vs.front());
    if (!to && !(first && first->downgrade))
      return absl::FailedPreconditionError(
          absl::StrCat("the op does not exist at opset ", target));
    const OpEntry *last = to ? entryOf(*to) : nullptr;
    if (to && to->deprecated() && !(up && last && last->upgrade))
      return absl::FailedPreconditionError(
          absl::StrCat(to->str(), " is deprecated at opset ", target));
    size_t i = indexOf(from), j = to ? indexOf(to) : 0;
    std::string newOp;
    // Each step between schemas vs[k-1] (older) and vs[k] (newer); k == 0
    // going down: out of the op's first version.
    auto stepImpl = [&](size_t k) -> absl::Status {
      const OpSchema *older = k ? &vs[k - 1] : nullptr, &newer = vs[k];
      int64_t olderVersion = older ? older->sinceVersion() : newer.sinceVersion() - 1;
      int64_t stepFrom = up ? olderVersion : newer.sinceVersion();
      int64_t stepTo = up ? newer.sinceVersion() : olderVersion;
      auto subject = trial.subject(llvm::ArrayRef<Step>(steps).drop_front(firstStep));
      if (!subject.ok()) return subject.status();
      Node &sn = **subject;
      if (!up && older)
        if (absl::Status s = typesAllowed(sn, *older); !s.ok()) return s;
      // Negative axes came without a signature change (Note [Negative axes
      // before 11], Ops/OpFacts.h).
      if (!up && older && crossesNegativeAxes(*older, newer) && hasNegativeAxes(n, *from0))
        return absl::FailedPreconditionError(
            absl::StrCat("a negative axis, which ", older->str(),
                         " may not accept (normalising it needs the rank; not done yet)"));
      const OpEntry *e = entryOf(newer);
      VersionAdapter fn = e ? (up ? e->upgrade : e->downgrade) : nullptr;
      // A registered adapter always runs: some steps change the meaning
      // without changing the signature (Softmax-13's axis).
      if (!fn && older && !newer.deprecated() && older->sameFormals(newer)) {
        if (!up || newer.allowsEveryTypeOf(*older)) return absl::OkStatus();
        // A narrowed type list going up (Erf-13 dropped the integer types):
        // the node's known types must fit the newer list.
        return typesAllowed(sn, newer);
      }
      if (!fn) {
        if (!older) return absl::FailedPreconditionError("the op does not exist there");
        if (newer.deprecated())
          return absl::FailedPreconditionError(absl::StrCat(newer.str(), " is deprecated"));
        return absl::UnimplementedError("no adapter");
      }
      AdapterContext c;
      c.checkOnly = true;
      c.from = stepFrom;
      c.to = stepTo;
      c.target = target;
      c.sourceOp = from0->name();
      if (absl::Status s = fn(sn, c); !s.ok()) return s;
      steps.push_back({&n, fn, stepFrom, stepTo, target, from0->name()});
      if (!c.newOpType.empty()) {
        newOp = c.newOpType.str();
        cur = stepTo;
      }
      return absl::OkStatus();
    };
    // Every refusal of a step names it: `Squeeze-v13 -> Squeeze-v11: why`.
    auto step = [&](size_t k) -> absl::Status {
      absl::Status s = stepImpl(k);
      if (s.ok()) return s;
      std::string older = k ? vs[k - 1].str() : absl::StrCat("opset ", vs[k].sinceVersion() - 1);
      std::string newer = vs[k].str();
      return absl::Status(s.code(), absl::StrCat(up ? older : newer, " -> ", up ? newer : older,
                                                 ": ", s.message()));
    };
    if (up) {
      for (size_t k = i + 1; k <= j && newOp.empty(); ++k)
        if (absl::Status s = step(k); !s.ok()) return s;
    } else {
      for (size_t k = i; (k > j || (!to && k == 0)) && newOp.empty(); --k) {
        if (absl::Status s = step(k); !s.ok()) return s;
        if (k == 0) break;
      }
    }
    if (newOp.empty()) return absl::OkStatus();
    op = std::move(newOp);
    if (cur == target) return absl::OkStatus();
  }
}

// Note [Functions across opsets]
// A model-local function's nodes mean what its own opset_import says, else
// what the model's says. Converting the model therefore converts the bodies
// of the functions that rely on the model's import (they would change meaning
// otherwise); if one of them cannot be converted, it keeps its meaning by
// importing the old version itself (a remark says why). A function with an
// import of its own already means the same thing in the converted model, so
// it is left alone, unless the `functions` option asks for every function
// at the target (one opset for a back end): then its refusal is an error.

/// Nodes counted per op type while planning.
struct Counts {
  llvm::StringMap<int64_t> adapted, expanded, unchanged;
  void addTo(OpsetCounts &c) const {
    for (auto &e : adapted) c.adapted[e.getKey().str()] += e.getValue();
    for (auto &e : expanded) c.expanded[e.getKey().str()] += e.getValue();
    for (auto &e : unchanged) c.unchanged[e.getKey().str()] += e.getValue();
  }
};

/// Everything a conversion will do, checked.
struct Plan {
  std::vector<Step> steps;
  std::vector<Node *> expansions;
  Counts counts;
  void append(Plan &&o) {
    steps.insert(steps.end(), o.steps.begin(), o.steps.end());
    expansions.insert(expansions.end(), o.expansions.begin(), o.expansions.end());
    for (auto &e : o.counts.adapted) counts.adapted[e.getKey()] += e.getValue();
    for (auto &e : o.counts.expanded) counts.expanded[e.getKey()] += e.getValue();
    for (auto &e : o.counts.unchanged) counts.unchanged[e.getKey()] += e.getValue();
  }
};

/// Plans the conversion of every default-domain node of `g` (nested graphs
/// included) to `target`; the located refusal otherwise.
absl::Status planGraph(Graph &g, int64_t target, Plan &p) {
  absl::Status err;
  g.walk([&](Node *n) {
    if (!err.ok() || !isDefaultDomain(n->domain())) return;
    int64_t cur = opsetInForce(*n);
    llvm::StringRef op = n->opType();
    if (cur == target) {
      ++p.counts.unchanged[op];
      return;
    }
    auto fail = [&](const absl::Status &s) {
      err = absl::Status(s.code(), absl::StrCat("convert-opset: ", nodePath(n), ": cannot convert ",
                                                op.str(), " from opset ", cur, " to opset ", target,
                                                ": ", s.message()));
    };
    // An op with no form at the target is expanded into its body, unless
    // its first version has a downgrade (GreaterOrEqual-12: its body is not
    // valid below 11, Note [Comparisons below opset 12] in Elementwise.cpp).
    const OpSchema *to = lookupSchema("", op, target);
    llvm::ArrayRef<OpSchema> vs = schemaVersions("", op);
    const OpEntry *first = to || vs.empty() ? nullptr : entryOf(vs.front());
    bool downgradesOut = first && first->downgrade;
    if ((!to || to->deprecated()) && !downgradesOut && lookupSchema("", op, cur) &&
        opset::hasExpansion(*n)) {
      if (absl::Status s = opset::checkExpansion(*n, target); !s.ok())
        return fail(absl::Status(s.code(), absl::StrCat(to ? to->str() + " is deprecated"
                                                           : "the op does not exist at opset " +
                                                                 std::to_string(target),
                                                        ", and its expansion is refused: ",
                                                        s.message())));
      p.expansions.push_back(n);
      ++p.counts.expanded[op];
      return;
    }
    size_t before = p.steps.size();
    if (absl::Status s = planNode(*n, cur, target, p.steps); !s.ok()) return fail(s);
    ++(p.steps.size() != before ? p.counts.adapted : p.counts.unchanged)[op];
  });
  return err;
}

/// Applies a checked plan (a failure now leaves a half-converted model).
absl::Status applyPlan(Model &m, const Plan &p, int64_t target) {
  for (const Step &s : p.steps) {
    if (absl::Status st = applyStep(*s.node, s); !st.ok())
      return absl::InternalError(absl::StrCat("convert-opset: ", nodePath(s.node),
                                              ": an adapter failed after its check passed "
                                              "(the model is half-converted): ",
                                              st.message()));
  }
  opset::ExpansionSession session(m);
  for (Node *n : p.expansions) {
    // (Not nodePath up front: it counts the node's position, O(graph).)
    std::string where = absl::StrCat(n->opType().str(), " node '", n->name().str(), "'");
    if (absl::Status st = opset::expandNode(session, *n, target); !st.ok())
      return absl::InternalError(absl::StrCat("convert-opset: ", where,
                                              ": an expansion failed after its check passed "
                                              "(the model is half-converted): ",
                                              st.message()));
  }
  return absl::OkStatus();
}

// Note [Converted nodes are checked]
// Adapters and expansions are knowledge written by hand; a form one of them
// makes may still be invalid at the target for a type it did not foresee
// (a static function body converted down checks the types it knows, and its
// inner values have none: Range's body at opset 10 subtracts int16 with
// Sub-7, which does not take it). So after the conversion every node it
// made or changed (a node not there before, of another op than before, or
// one it adapted) is checked against its schema at the target (the schema
// verifier, type constraints included), and a problem is an error naming
// that node and why: the pass fails and nothing is written, instead of a
// model that the verifier, onnx and onnxruntime refuse. (A new node in the
// memory of an erased Constant node, itself a Constant, is not checked; the
// adapters make Constants of the target's types.)

/// Every node of `m`'s graphs, nested and function bodies included, with
/// its op type (interned: compared as a pointer).
llvm::DenseMap<const Node *, const char *> nodesBefore(Model &m) {
  llvm::DenseMap<const Node *, const char *> r;
  auto add = [&](Node *n) { r[n] = n->opType().data(); };
  m.graph().walk(add);
  for (auto &f : m.functions()) f->body().walk(add);
  return r;
}

/// Note [Converted nodes are checked]: the located error for the first
/// invalid node the plan `p` made or changed.
absl::Status checkConverted(Model &m, const Plan &p,
                            const llvm::DenseMap<const Node *, const char *> &before,
                            int64_t from, int64_t target) {
  llvm::DenseSet<const Node *> stepped;
  for (const Step &s : p.steps) stepped.insert(s.node);
  std::vector<const Node *> changed;
  auto add = [&](Node *n) {
    auto it = before.find(n);
    if (it == before.end() || it->second != n->opType().data() || stepped.count(n))
      changed.push_back(n);
  };
  m.graph().walk(add);
  for (auto &f : m.functions()) f->body().walk(add);
  VerifyOptions opts;
  opts.maxDiagnostics = 4;
  std::vector<Diagnostic> ds = verifyNodeSchemas(m, changed, opts);
  if (ds.empty()) return absl::OkStatus();
  std::string more = ds.size() > 1 ? absl::StrCat(" (and ", ds.size() - 1, " more)") : "";
  return absl::FailedPreconditionError(
      absl::StrCat("convert-opset: ", ds.front().message, more,
                   ": a node the conversion from opset ", from, " to opset ", target,
                   " made or changed is not valid there (nothing is written)"));
}

/// Makes `imports` import the default domain at `version`.
void setDefaultImport(std::vector<OpsetImport> &imports, int64_t version) {
  bool found = false;
  for (OpsetImport &imp : imports)
    if (isDefaultDomain(imp.domain)) imp.version = version, found = true;
  if (!found) {
    OpsetImport imp;
    imp.version = version;
    imports.push_back(std::move(imp));
  }
}

} // namespace

absl::Status opset::convertFunction(Model &m, Function &f, int64_t target, OpsetCounts *counts,
                                    bool checkOnly) {
  Plan p;
  if (absl::Status s = planGraph(f.body(), target, p); !s.ok()) return s;
  if (checkOnly) return absl::OkStatus();
  if (absl::Status s = applyPlan(m, p, target); !s.ok()) return s;
  setDefaultImport(f.opsetImports, target);
  if (counts) p.counts.addTo(*counts);
  return absl::OkStatus();
}

PassStatistics opset::countsAsStats(const OpsetCounts &c) {
  PassStatistics r;
  for (auto &[op, n] : c.adapted) r.emplace_back("adapted " + op, n);
  for (auto &[op, n] : c.expanded) r.emplace_back("expanded " + op, n);
  for (auto &[op, n] : c.unchanged) r.emplace_back("unchanged " + op, n);
  return r;
}

absl::StatusOr<bool> convertOpset(Model &m, int64_t target, const ConvertOpsetOptions &opts,
                                  OpsetCounts *counts, std::vector<std::string> *remarks) {
  int64_t latest = latestOpsetVersion("");
  if (target < 1 || target > latest)
    return absl::InvalidArgumentError(absl::StrCat(
        "convert-opset: target opset ", target, " is outside 1..", latest,
        " (the default-domain versions onnxir knows); set it with target=N or --target-opset=N"));
  int64_t modelVersion = opsetVersionIn(m.opsetImports, "");
  if (modelVersion < 0)
    return absl::FailedPreconditionError(
        "convert-opset: the model does not import the default domain");
  // Plan and check everything first: a refusal changes nothing.
  Plan p;
  llvm::DenseMap<const Node *, const char *> before;
  if (absl::Status s = planGraph(m.graph(), target, p); !s.ok()) return s;
  std::vector<Function *> pinned, retargeted;
  for (auto &f : m.functions()) {
    int64_t own = opsetVersionIn(f->opsetImports, "");
    if (own >= 0 && (!opts.functions || own == target)) continue;
    Plan fp;
    if (absl::Status s = planGraph(f->body(), target, fp); !s.ok()) {
      if (own >= 0) return s;
      // Note [Functions across opsets]: it keeps the old version.
      if (remarks)
        remarks->push_back(absl::StrCat("function \"", f->qualifiedName(), "\" keeps opset ",
                                        modelVersion, " as its own import: ", s.message()));
      pinned.push_back(f.get());
      continue;
    }
    if (own >= 0) retargeted.push_back(f.get());
    p.append(std::move(fp));
  }
  bool check = !p.steps.empty() || !p.expansions.empty();
  if (check) before = nodesBefore(m);
  if (absl::Status s = applyPlan(m, p, target); !s.ok()) return s;
  bool changed = modelVersion != target || !p.steps.empty() || !p.expansions.empty() ||
                 !retargeted.empty();
  for (Function *f : pinned) setDefaultImport(f->opsetImports, modelVersion);
  for (Function *f : retargeted) setDefaultImport(f->opsetImports, target);
  for (OpsetImport &imp : m.opsetImports)
    if (isDefaultDomain(imp.domain)) imp.version = target;
  if (check)
    if (absl::Status s = checkConverted(m, p, before, modelVersion, target); !s.ok()) return s;
  if (counts) p.counts.addTo(*counts);
  return changed;
}

absl::StatusOr<bool> convertOpset(Model &m, int64_t target, int64_t *adapted) {
  OpsetCounts counts;
  auto r = convertOpset(m, target, ConvertOpsetOptions(), &counts);
  if (adapted)
    for (auto &[op, n] : counts.adapted) *adapted += n;
  return r;
}

namespace {
class ConvertOpsetPass : public OptionsPass<ConvertOpsetOptions> {
public:
  ConvertOpsetPass()
      : OptionsPass("convert-opset",
                    "Convert the default domain's nodes to another opset version and import it "
                    "(up or down; refuses, changing nothing, what it cannot convert)") {}
  absl::StatusOr<bool> run(Model &m) override {
    OpsetCounts counts;
    std::vector<std::string> remarks;
    auto r = convertOpset(m, *target_, optionValues(), &counts, &remarks);
    for (std::string &s : remarks) remark(std::move(s));
    for (auto &[name, n] : opset::countsAsStats(counts)) addStat(name, n);
    return r;
  }

private:
  Field<bool> functions_{*this, &ConvertOpsetOptions::functions, "functions",
                         "also convert model-local functions that import another version of the "
                         "default domain themselves"};
  Option<int64_t> target_{*this, "target", "the default-domain opset version to convert to", 0,
                          "target-opset"};
};
} // namespace

std::unique_ptr<Pass> createConvertOpsetPass() { return std::make_unique<ConvertOpsetPass>(); }

} // namespace onnxir
