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
// Not yet: model-local function bodies are not converted (a function that
// relied on the model's import keeps its meaning: it is given its own import
// of the old version); ops that are added, removed or deprecated between the
// versions are refused unless an adapter replaces the op (Upsample <-> Resize,
// Scatter <-> ScatterElements); other domains are left as they are.
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
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"

#include <algorithm>

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

/// True if `n` has a negative `axis`/`axes` attribute, or a constant operand
/// bound to the formal `axes` of `s` with a negative value.
bool hasNegativeAxes(const Node &n, const OpSchema &s) {
  for (const char *name : {"axis", "axes"})
    if (const Attribute *a = n.getAttr(name); a && !a->isReference()) {
      if (a->kind() == AttrKind::Int && a->i < 0) return true;
      if (a->kind() == AttrKind::Ints)
        for (int64_t v : a->ints)
          if (v < 0) return true;
    }
  int i = s.inputIndex("axes");
  if (i >= 0 && (unsigned)i < n.numOperands() && n.operand(i)) {
    Tensor scratch;
    if (const Tensor *t = constantOf(n.operand(i), scratch))
      if (auto vals = t->values<int64_t>(); vals.ok())
        for (int64_t v : *vals)
          if (v < 0) return true;
  }
  return false;
}

const OpEntry *entryOf(const OpSchema &s) {
  for (const OpEntry &e : OpRegistry::get().versions("", s.name()))
    if (e.schema == &s) return &e;
  return nullptr;
}

// Note [Negative axes before 11]: ONNX 1.6 (opset 11) let Squeeze, Unsqueeze,
// the Reduce*, Split, Concat, Gather, Flatten, ArgMax, Softmax, ... count axes
// from the end, mostly without changing the schema's signature, so the steps
// across 11 look type-only. Going below 11, a node with a negative axis or
// axes (attribute, or the constant `axes` operand of its current form) is
// refused rather than converted into a model older runtimes reject or
// misread; ops that took negative axes before 11 are refused too (safe).

struct Step {
  Node *node;
  VersionAdapter fn;
  int64_t from, to, target;
  /// The node's op type before the conversion (a schema's name: stable).
  llvm::StringRef sourceOp;
};

/// Plans the steps of `n` from opset `cur` to `target` (appended to `steps`),
/// checking each adapter; the why of a refusal otherwise. An adapter that
/// replaces the op (Note [Version adapters]) moves the walk to the other op's
/// versions.
absl::Status planNode(Node &n, int64_t cur, int64_t target, std::vector<Step> &steps) {
  std::string op = n.opType().str();
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
      if (!up && older)
        if (absl::Status s = typesAllowed(n, *older); !s.ok()) return s;
      // Opset 11 allowed negative axes in many ops without a signature change
      // (Note [Negative axes before 11]).
      if (!up && older && older->sinceVersion() < 11 && newer.sinceVersion() >= 11 &&
          hasNegativeAxes(n, *from0))
        return absl::FailedPreconditionError(
            absl::StrCat("a negative axis, which ", older->str(),
                         " may not accept (normalising it needs the rank; not done yet)"));
      const OpEntry *e = entryOf(newer);
      VersionAdapter fn = e ? (up ? e->upgrade : e->downgrade) : nullptr;
      // A registered adapter always runs: some steps change the meaning
      // without changing the signature (Softmax-13's axis).
      if (!fn && older && !newer.deprecated() && older->sameFormals(newer) &&
          (!up || newer.allowsEveryTypeOf(*older)))
        return absl::OkStatus();
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
      if (absl::Status s = fn(n, c); !s.ok()) return s;
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

} // namespace

absl::StatusOr<bool> convertOpset(Model &m, int64_t target, int64_t *adapted) {
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
  std::vector<Step> steps;
  absl::Status err;
  int64_t nodesChanged = 0;
  m.graph().walk([&](Node *n) {
    if (!err.ok() || !isDefaultDomain(n->domain())) return;
    int64_t cur = opsetInForce(*n);
    if (cur == target) return;
    size_t before = steps.size();
    if (absl::Status s = planNode(*n, cur, target, steps); !s.ok()) {
      err = absl::Status(s.code(), absl::StrCat("convert-opset: ", nodePath(n), ": cannot convert ",
                                                n->opType().str(), " from opset ", cur,
                                                " to opset ", target, ": ", s.message()));
      return;
    }
    if (steps.size() != before) ++nodesChanged;
  });
  if (!err.ok()) return err;
  for (const Step &s : steps) {
    AdapterContext c;
    c.from = s.from;
    c.to = s.to;
    c.target = s.target;
    c.sourceOp = s.sourceOp;
    if (absl::Status st = s.fn(*s.node, c); !st.ok())
      return absl::InternalError(absl::StrCat("convert-opset: ", nodePath(s.node),
                                              ": an adapter failed after its check passed "
                                              "(the model is half-converted): ",
                                              st.message()));
  }
  bool changed = modelVersion != target || !steps.empty();
  // A function that read the default domain's version from the model keeps
  // the old one (its body is not converted yet).
  for (auto &f : m.functions())
    if (opsetVersionIn(f->opsetImports, "") < 0) {
      OpsetImport imp;
      imp.version = modelVersion;
      f->opsetImports.push_back(std::move(imp));
    }
  for (OpsetImport &imp : m.opsetImports)
    if (isDefaultDomain(imp.domain)) imp.version = target;
  if (adapted) *adapted += nodesChanged;
  return changed;
}

namespace {
class ConvertOpsetPass : public Pass {
public:
  llvm::StringRef argument() const override { return "convert-opset"; }
  llvm::StringRef description() const override {
    return "Convert the default domain's nodes to another opset version and import it (up or "
           "down; refuses, changing nothing, what it cannot convert)";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = convertOpset(m, *target_, &n);
    addStat("nodes adapted", n);
    return r;
  }

private:
  Option<int64_t> target_{*this, "target", "the default-domain opset version to convert to", 0,
                          "target-opset"};
};
} // namespace

std::unique_ptr<Pass> createConvertOpsetPass() { return std::make_unique<ConvertOpsetPass>(); }

} // namespace onnxir
