//===- Evaluator.cpp - Run a whole model on the operators' kernels --------===//
//
// Note [Evaluation] (Evaluator.h) says what a run does. Here: frames of
// values chained along subgraph nesting, a per-graph plan of last uses,
// the control-flow ops, and calls through function bodies.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Eval/Evaluator.h"

#include "EvalRun.h"
// The evaluator gives dying operands up to the kernels (Note [Results in a
// dead input's buffer]); the kernels' side of it is private to lib/Ops.
#include "../Ops/KernelReuse.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/FunctionBodies.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

namespace onnxir {
namespace evalrun {
namespace {

/// `node #3 (Conv) in graph "main"`.
std::string where(const Node &n) {
  return absl::StrCat("node #", n.indexInGraph(), " (", n.opType().str(), ") in ",
                      n.getGraph()->path());
}

/// Marks an error that already names its node (a failure inside a subgraph
/// or function body is reported where it happened, not again by its holder).
constexpr const char *kLocated = "onnxir.eval/located";

bool isLocated(const Status &s) { return s.GetPayload(kLocated).has_value(); }

Status located(const Node &n, const Status &s) {
  if (isLocated(s)) return s;
  // `file:line:col: ` first for a node of a text model.
  std::string loc = sourceLocation(&n);
  if (!loc.empty()) loc += ": ";
  Status r = s.code() == absl::StatusCode::kUnimplemented
                 ? absl::UnimplementedError(
                       absl::StrCat(loc, "not supported: ", where(n), ": ", s.message()))
                 : Status(s.code(), absl::StrCat(loc, where(n), ": ", s.message()));
  r.SetPayload(kLocated, absl::Cord("1"));
  return r;
}

// Note [Readers from use lists]
//   The plan needs, for each node, the nodes of its graph that read its
//   results, a read inside a subgraph counting for the node holding it. A
//   nested use is on the outer value's own use list (Note [Scopes]), so the
//   readers are the owners of the results' uses mapped to their ancestor in
//   the graph: work in the number of uses. Walking each holder's subgraphs
//   for the values they use instead cost, on every run, the size of every
//   nested graph once per level of nesting (silero_vad's Ifs in Ifs: about
//   a sixth of its run).

/// Calls `fn(j)` for the position j (in `pos`) of each node of `g` that
/// reads a result of `n`, once per use; graph outputs are not readers.
template <typename Fn>
void forEachReader(const Graph &g, const Node &n,
                   const llvm::DenseMap<const Node *, size_t> &pos, Fn &&fn) {
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (const Value *v = n.result(i))
      for (const Use *u = v->firstUse(); u; u = u->getNext()) {
        const Node *o = u->getOwner();
        auto it = pos.find(o ? o->ancestorIn(&g) : nullptr);
        if (it != pos.end()) fn(it->second);
      }
}

/// The nodes of `g` in an order that computes each node's operands (its
/// subgraphs' uses included) before it: the stored order when it does that
/// already, else Kahn's algorithm taking the lowest stored position ready,
/// so the result differs from the stored order only where it must. False
/// with `cycle` set when some nodes depend on each other.
bool runOrder(const Graph &g, std::vector<const Node *> &order, const Node *&cycle) {
  for (const Node &n : g.nodes()) order.push_back(&n);
  llvm::DenseMap<const Node *, size_t> pos;
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  // deps[k]: positions of the nodes of g whose results node k reads, from
  // the results' use lists (Note [Readers from use lists]).
  std::vector<std::vector<size_t>> deps(order.size());
  bool sorted = true;
  for (size_t k = 0; k < order.size(); ++k)
    forEachReader(g, *order[k], pos, [&](size_t j) {
      deps[j].push_back(k);
      sorted &= k < j;
    });
  if (sorted) return true;
  std::vector<std::vector<size_t>> users(order.size());
  std::vector<size_t> waiting(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    llvm::sort(deps[k]);
    deps[k].erase(std::unique(deps[k].begin(), deps[k].end()), deps[k].end());
    waiting[k] = deps[k].size();
    for (size_t j : deps[k]) users[j].push_back(k);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t k = 0; k < order.size(); ++k)
    if (waiting[k] == 0) ready.push(k);
  std::vector<const Node *> sortedOrder;
  while (!ready.empty()) {
    size_t k = ready.top();
    ready.pop();
    sortedOrder.push_back(order[k]);
    for (size_t u : users[k])
      if (--waiting[u] == 0) ready.push(u);
  }
  if (sortedOrder.size() != order.size()) {
    // Every node left waits on another node left; walking such waits
    // from any of them must come back to one it passed: that one is on a
    // cycle (the first left may only depend on one).
    size_t k = 0;
    while (waiting[k] == 0) ++k;
    std::vector<bool> seen(order.size(), false);
    while (!seen[k]) {
      seen[k] = true;
      for (size_t j : deps[k])
        if (waiting[j] != 0) {
          k = j;
          break;
        }
    }
    cycle = order[k];
    order.clear();
    return false;
  }
  order = std::move(sortedOrder);
  return true;
}

// Note [Constants computed where they are used]
//   Exports often compute every weight at the top of the graph (the light
//   model zoo's VGG-19 and ZFNet make each weight with a ConstantOfShape
//   there, 36 of them before the first Conv), and a Constant node may sit far
//   from its reader. Run in stored order, all those results are live at once
//   before the first product: for VGG-19 every weight, 0.57 GB, while one at
//   a time would do. So a node computed from constants alone (its operands
//   initializers or results of such nodes; deterministic; no subgraphs) runs
//   right before the first node that reads it (a read inside a subgraph
//   counting for the node holding it), not where it is stored; one no node
//   of the graph reads keeps its place. The others keep their order, and
//   moved nodes keep theirs among themselves, so the order still computes
//   every operand first. Values are the same (each such node reads only
//   constants); only a failing constant node may be reported after another
//   failure instead of before it.

/// Moves the constant-only nodes of `order` (a valid order of `g`) to just
/// before their first reader (Note [Constants computed where they are used]).
void deferConstantNodes(const Graph &g, std::vector<const Node *> &order) {
  size_t n = order.size();
  llvm::DenseMap<const Node *, size_t> pos;
  for (size_t k = 0; k < n; ++k) pos[order[k]] = k;
  // Whether each node is computed from constants alone (operands precede
  // their readers, so one forward pass decides).
  std::vector<bool> early(n, false);
  for (size_t k = 0; k < n; ++k) {
    const Node &nd = *order[k];
    if (!nd.subgraphs().empty() || isNondeterministic(nd)) continue;
    bool ok = true;
    for (unsigned i = 0; ok && i < nd.numOperands(); ++i) {
      const Value *v = nd.operand(i);
      if (!v) continue;
      if (const Node *d = v->definingNode(); d && d->getGraph() == &g) ok = early[pos.lookup(d)];
      else ok = v->getGraph() == &g && v->hasInitializer();
    }
    early[k] = ok;
  }
  // The step before which each node runs: its own for the others; for an
  // early one, the earliest such step of its readers (a use inside a
  // subgraph is on the value's use list, read by the node holding it), or
  // its own without readers. Readers come later in the order, so a
  // backward pass decides.
  std::vector<size_t> at(n);
  for (size_t k = n; k-- > 0;) at[k] = k;
  bool moved = false;
  for (size_t k = n; k-- > 0;) {
    if (!early[k]) continue;
    size_t t = n;
    for (unsigned i = 0; i < order[k]->numResults(); ++i) {
      const Value *v = order[k]->result(i);
      if (!v) continue;
      for (const Use *u = v->firstUse(); u; u = u->getNext()) {
        const Node *r = u->getOwner() ? u->getOwner()->ancestorIn(&g) : nullptr;
        if (!r || !pos.count(r)) continue; // a graph output
        t = std::min(t, at[pos.lookup(r)]);
      }
    }
    if (t != n && t > k) {
      at[k] = t;
      moved = true;
    }
  }
  if (!moved) return;
  std::vector<std::vector<size_t>> before(n);
  for (size_t k = 0; k < n; ++k) before[at[k]].push_back(k); // k ascending in each
  std::vector<const Node *> out;
  out.reserve(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j : before[k]) out.push_back(order[j]);
  order = std::move(out);
}

} // namespace

Held Held::sequence(std::vector<Held> elems, DataType elemType, bool nondet) {
  Held h;
  h.kind = EvalValue::Kind::Sequence;
  h.elems = std::make_shared<const std::vector<Held>>(std::move(elems));
  h.elemType = elemType;
  h.nondet = nondet;
  return h;
}

Held Held::optional(const Held &inner, bool nondet) {
  Held h;
  h.kind = EvalValue::Kind::Optional;
  std::vector<Held> e;
  if (inner.present()) e.push_back(inner);
  h.elems = std::make_shared<const std::vector<Held>>(std::move(e));
  h.nondet = nondet || inner.nondet;
  return h;
}

const char *kindName(const Held &h) {
  switch (h.kind) {
  case EvalValue::Kind::Sequence: return "a sequence";
  case EvalValue::Kind::Optional: return "an optional";
  case EvalValue::Kind::Map: return "a map";
  case EvalValue::Kind::Tensor: break;
  }
  return "a tensor";
}

namespace {
/// A tensor of the run with its place in the statistics; one allocation
/// holds both and the count (make_shared), uncounted when it dies.
struct Owned {
  Owned(Tensor t, EvalStatistics &s, uint64_t bytes) : t(std::move(t)), s(s), bytes(bytes) {}
  ~Owned() {
    --s.liveTensors;
    s.liveBytes -= bytes;
  }
  Tensor t;
  EvalStatistics &s;
  uint64_t bytes;
};
} // namespace

std::shared_ptr<const Tensor> Run::own(Tensor t) {
  uint64_t bytes = tensorDataBytes(t);
  EvalStatistics *s = &stats_;
  ++s->liveTensors;
  s->liveBytes += bytes;
  s->peakLiveTensors = std::max(s->peakLiveTensors, s->liveTensors);
  s->peakLiveBytes = std::max(s->peakLiveBytes, s->liveBytes);
  auto o = std::make_shared<Owned>(std::move(t), *s, bytes);
  return std::shared_ptr<const Tensor>(o, &o->t); // shares o's count
}

Status Run::checkBudget(const Tensor &t) const {
  uint64_t b = tensorDataBytes(t);
  if (b > opts_.maxBytes)
    return absl::ResourceExhaustedError(absl::StrCat("a result of ", b,
                                                     " bytes is over the limit of ",
                                                     opts_.maxBytes, " bytes"));
  return absl::OkStatus();
}

namespace {
/// A pointer to a tensor someone else keeps alive (the IR, the caller):
/// the aliasing constructor with no owner, so no control block is
/// allocated for each read of a weight.
std::shared_ptr<const Tensor> unowned(const Tensor *t) {
  return std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), t);
}
} // namespace

StatusOr<Held> Run::lookup(const Frame &f, const Value *v) const {
  for (const Frame *p = &f; p; p = p->parent) {
    auto it = p->vals.find(v);
    if (it != p->vals.end()) return it->second;
  }
  if (v->hasInitializer()) // constants are read where they are, not copied
    return Held::tensor(unowned(v->initializer()), false);
  if (v->sparseInitializer())
    return absl::UnimplementedError(
        absl::StrCat("sparse initializer \"", v->name().str(), "\""));
  return absl::InternalError(
      absl::StrCat("value \"", v->name().str(), "\" is used before it is computed"));
}

// Note [Per-node facts in the plan]
//   How a node runs (a function call, Constant, If, Loop, Scan, or a kernel
//   and which registry entry), the opset in force, whether it is random and
//   its attribute list do not change between its runs: finding them per run
//   cost several hash lookups and opset scans per node (the opset and the
//   registry entry each looked up two or three times, the model's functions
//   scanned), which is most of a run of a ms-sized model's small nodes. So
//   they are found once, with the plan, and runNode reads them. What stays
//   per run: attribute references inside a function body (resolved in the
//   caller's frame) and Dropout's determinism, which reads its operands'
//   values (Note [Op traits]); both are marked in the Step.

Step Run::stepOf(const Node &n) const {
  Step st;
  st.opset = opsetInForce(n);
  st.entry = OpRegistry::get().lookup(n.domain(), n.opType(), st.opset);
  bool defaultDomain = isDefaultDomain(n.domain());
  llvm::StringRef op = n.opType();
  if ((st.fn = model_.findFunction(n))) st.kind = Step::Kind::Function;
  else if (defaultDomain && op == "Constant") st.kind = Step::Kind::Constant;
  else if (defaultDomain && op == "If") st.kind = Step::Kind::If;
  else if (defaultDomain && op == "Loop") st.kind = Step::Kind::Loop;
  else if (defaultDomain && op == "Scan") st.kind = Step::Kind::Scan;
  st.determinismFromOperands = defaultDomain && op == "Dropout";
  st.nondet = !isDeterministic(n);
  st.attrsFixed = true;
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    if (n.attribute(i).isReference()) {
      st.attrsFixed = false;
      st.attrs.clear();
      break;
    }
    st.attrs.push_back(&n.attribute(i));
  }
  return st;
}

const Plan &Run::planOf(const Graph &g) {
  auto &slot = plans_[&g];
  if (slot) return *slot;
  slot = std::make_unique<Plan>();
  if (!runOrder(g, slot->order, slot->cycle)) return *slot;
  deferConstantNodes(g, slot->order);
  const std::vector<const Node *> &order = slot->order;
  slot->freeAfter.resize(order.size());
  llvm::DenseSet<const Value *> outputs;
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (Value *v = g.output(i)) outputs.insert(v);
  llvm::DenseMap<const Value *, size_t> last;
  auto defined = [&](const Value *v) {
    return v->getGraph() == &g && !outputs.count(v) && !v->isConstantInitializer();
  };
  llvm::DenseMap<const Node *, size_t> pos;
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  // The last reader of each value (Note [Readers from use lists]); a
  // result nobody reads is freed at once, an input read by none after the
  // first node.
  auto lastReader = [&](const Value *v, size_t from) {
    for (const Use *u = v->firstUse(); u; u = u->getNext()) {
      const Node *o = u->getOwner();
      auto it = pos.find(o ? o->ancestorIn(&g) : nullptr);
      if (it != pos.end()) from = std::max(from, it->second);
    }
    return from;
  };
  for (Value *v : g.inputs())
    if (defined(v)) last[v] = lastReader(v, 0);
  for (size_t k = 0; k < order.size(); ++k) {
    const Node &n = *order[k];
    for (unsigned i = 0; i < n.numResults(); ++i)
      if (Value *v = n.result(i); v && defined(v)) last[v] = lastReader(v, k);
  }
  for (auto &e : last) slot->freeAfter[e.second].push_back(e.first);
  slot->steps.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    Step st = stepOf(*order[k]);
    for (unsigned i = 0; i < order[k]->numOperands() && i < 64; ++i)
      if (const Value *v = order[k]->operand(i); v && defined(v) && last.lookup(v) == k)
        st.lastUse |= uint64_t(1) << i;
    slot->steps.push_back(std::move(st));
  }
  return *slot;
}

Status Run::runGraph(const Graph &g, Frame &f) {
  const Plan &plan = planOf(g);
  if (plan.cycle)
    return located(*plan.cycle, absl::InvalidArgumentError(
                                    "the node is on a dependency cycle: no order computes "
                                    "its operands before it"));
  for (size_t k = 0; k < plan.order.size(); ++k) {
    if (Status s = runNode(*plan.order[k], plan.steps[k], f); !s.ok()) return s;
    ++stats_.nodesRun;
    for (const Value *v : plan.freeAfter[k])
      if (f.vals.erase(v)) ++stats_.valuesFreed;
  }
  return absl::OkStatus();
}

StatusOr<std::vector<const Attribute *>>
Run::resolveAttrs(const Node &n, const Frame &f, std::vector<std::unique_ptr<Attribute>> &store) {
  std::vector<const Attribute *> out;
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    if (!a.isReference()) {
      out.push_back(&a);
      continue;
    }
    const Attribute *src = nullptr;
    if (f.attrs)
      if (auto it = f.attrs->find(a.refAttrName.str()); it != f.attrs->end()) src = it->second;
    if (!src) continue; // neither given nor defaulted: the attribute is absent
    if (src->numGraphs())
      return absl::UnimplementedError(absl::StrCat("graph attribute reference @",
                                                   a.refAttrName.str()));
    auto copy = std::make_unique<Attribute>(a.name());
    IRMapping m;
    copy->copyPayloadFrom(*src, m);
    out.push_back(copy.get());
    store.push_back(std::move(copy));
  }
  return out;
}

namespace {
/// A kernel call with the registry entry its Step holds: the kernel's
/// entry() and schema() (attribute defaults) then cost nothing.
struct PlannedCall : KernelCall {
  PlannedCall(const Node &n, const Step &st, llvm::ArrayRef<const Attribute *> attrs)
      : KernelCall(n.domain(), n.opType(), st.opset, attrs) {
    setEntry(st.entry);
  }
};
} // namespace

StatusOr<std::vector<Held>> Run::runKernel(const Node &n, const Step &st,
                                           llvm::ArrayRef<const Attribute *> attrs,
                                           const std::vector<Held> &in) {
  std::vector<const Tensor *> inputs;
  inputs.reserve(in.size());
  bool nondet = st.nondet;
  for (size_t i = 0; i < in.size(); ++i) {
    const Held &h = in[i];
    if (!h.isTensor() && h.present())
      return absl::InvalidArgumentError(absl::StrCat("operand #", i, " is ", kindName(h),
                                                     ", not a tensor"));
    inputs.push_back(h.t.get());
    nondet |= h.nondet;
  }
  if (st.determinismFromOperands) { // Note [Per-node facts in the plan]
    nondet = !isDeterministic(n, inputs);
    for (const Held &h : in) nondet |= h.nondet;
  }
  PlannedCall call(n, st, attrs);
  call.inputs = inputs;
  call.numOutputs = n.numResults();
  call.maxOutputBytes = opts_.maxBytes;
  // A run may use the products built for this CPU; folding may not (Note
  // [Host-tuned products], KernelSupport.cpp).
  call.hostTuned = true;
  call.defineUndefined = true;
  if (nondet) call.seed = opts_.seed;
  // Operands whose last use this is and that nothing but the frame and
  // `in` hold (a value given twice, kept in a sequence or a loop's state,
  // or a view of the caller's or the IR's tensor has other or no owners):
  // the kernel may write its result into their bytes.
  uint64_t giveUp = 0;
  for (size_t i = 0; i < in.size() && i < 64; ++i)
    if ((st.lastUse >> i & 1) && in[i].isTensor() && in[i].t.use_count() == 2)
      giveUp |= uint64_t(1) << i;
  std::optional<kernels::ConsumableInputs> given;
  if (giveUp) given.emplace(call, giveUp);
  auto r = st.entry->kernel(call);
  given.reset();
  if (!r.ok()) return r.status();
  for (unsigned i = (unsigned)r->size(); i < n.numResults(); ++i)
    if (n.result(i))
      return absl::UnimplementedError(
          absl::StrCat("the kernel does not compute optional result #", i));
  std::vector<Held> out;
  out.reserve(n.numResults());
  for (unsigned i = 0; i < n.numResults(); ++i) {
    if (Status s = checkBudget((*r)[i]); !s.ok()) return s;
    out.push_back(Held::tensor(own(std::move((*r)[i])), nondet));
  }
  return out;
}

StatusOr<std::vector<Held>> Run::runBody(const Node &n, const Function &fn,
                                         llvm::ArrayRef<const Attribute *> attrs,
                                         const std::vector<Held> &in) {
  const Graph &body = fn.body();
  AttrEnv env;
  for (const auto &d : fn.attributeDefaults) env[d->name()] = d.get();
  for (const Attribute *a : attrs) env[a->name()] = a;
  Frame f;
  f.attrs = &env;
  for (unsigned i = 0; i < body.numInputs(); ++i)
    if (i < in.size() && in[i].present()) f.vals[body.input(i)] = in[i];
  if (Status s = runGraph(body, f); !s.ok()) return s;
  std::vector<Held> out;
  for (unsigned i = 0; i < n.numResults(); ++i) {
    if (i >= body.numOutputs()) {
      out.push_back(Held{});
      continue;
    }
    auto h = lookup(f, body.output(i));
    if (!h.ok()) return h.status();
    out.push_back(*h);
  }
  return out;
}

StatusOr<const Function *> Run::schemaBody(const OpSchema &s, int64_t opset) {
  const FunctionBody *b = s.functionBodyFor(opset);
  if (!b) b = s.functionBodies().empty() ? nullptr : &s.functionBodies().front();
  if (!b) return nullptr;
  auto it = bodies_.find(b->text.data());
  if (it != bodies_.end()) return it->second;
  auto f = parseFunctionBody(scratch_, s, *b);
  if (!f.ok()) return f.status();
  bodies_[b->text.data()] = *f;
  return (const Function *)*f;
}

StatusOr<std::vector<Held>> Run::runSubgraph(const Graph &g, Frame &f,
                                             const std::vector<Held> &in) {
  if (g.numInputs() != in.size())
    return absl::InvalidArgumentError(absl::StrCat("subgraph \"", g.name, "\" has ",
                                                   g.numInputs(), " inputs, not ", in.size()));
  Frame sub;
  sub.parent = &f;
  sub.attrs = f.attrs;
  for (unsigned i = 0; i < g.numInputs(); ++i) {
    // A sequence or tensor carried into an input declared optional (a Loop
    // state that starts empty) is held by one (Note [Evaluator values]).
    const Type *ty = g.input(i)->type();
    bool wrap = ty && ty->kind() == Type::Kind::Optional && in[i].present() && !in[i].isOptional();
    sub.vals[g.input(i)] = wrap ? Held::optional(in[i], false) : in[i];
  }
  if (Status s = runGraph(g, sub); !s.ok()) return s;
  std::vector<Held> out;
  for (unsigned i = 0; i < g.numOutputs(); ++i) {
    auto h = lookup(sub, g.output(i));
    if (!h.ok()) return h.status();
    out.push_back(*h);
  }
  return out;
}

Status Run::runNode(const Node &n, const Step &st, Frame &f) {
  std::vector<std::unique_ptr<Attribute>> store;
  llvm::ArrayRef<const Attribute *> attrs = st.attrs;
  StatusOr<std::vector<const Attribute *>> resolved;
  if (!st.attrsFixed) {
    resolved = resolveAttrs(n, f, store);
    if (!resolved.ok()) return located(n, resolved.status());
    attrs = *resolved;
  }
  std::vector<Held> in;
  in.reserve(n.numOperands());
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    const Value *v = n.operand(i);
    if (!v) {
      in.push_back(Held{});
      continue;
    }
    if (auto it = f.vals.find(v); it != f.vals.end()) { // most operands: this frame's
      in.push_back(it->second);
      continue;
    }
    auto h = lookup(f, v);
    if (!h.ok()) return located(n, h.status());
    in.push_back(std::move(*h));
  }
  StatusOr<std::vector<Held>> out = std::vector<Held>{};
  int64_t opset = st.opset;
  const OpEntry *e = st.entry;
  switch (st.kind) {
  case Step::Kind::Function: out = runBody(n, *st.fn, attrs, in); break;
  case Step::Kind::Constant: {
    Tensor scratch;
    auto t = constantValue(attrs, scratch);
    if (!t.ok()) return located(n, t.status());
    out = std::vector<Held>{Held::tensor(own(**t), false)};
    break;
  }
  case Step::Kind::If: out = runIf(n, f, in); break;
  case Step::Kind::Loop: out = runLoop(n, f, in); break;
  case Step::Kind::Scan: out = runScan(n, f, in, attrs); break;
  case Step::Kind::Other:
    if (bool handled = false;
        (isDefaultDomain(n.domain()) || n.domain() == "ai.onnx.ml") &&
        (out = runValueOp(n, f, attrs, in, opset, handled), handled))
      break; // a sequence, optional or map op (Sequences.cpp)
    bool ran = false;
    Status why; // the kernel's Unimplemented, if it has one
    if (e && e->kernel) {
      out = runKernel(n, st, attrs, in);
      if (out.ok() || out.status().code() != absl::StatusCode::kUnimplemented) ran = true;
      else why = out.status();
    }
    // No kernel for this op, version or type: the schema's body, if any.
    if (!ran && e && e->schema) {
      auto body = schemaBody(*e->schema, opset);
      if (!body.ok()) return located(n, body.status());
      if (*body) {
        out = runBody(n, **body, attrs, in);
        ran = true;
      }
    }
    if (!ran)
      return located(n, !why.ok() ? why
                                  : absl::UnimplementedError(absl::StrCat(
                                        "no kernel for ", n.opType().str(), "-",
                                        e && e->schema ? e->sinceVersion : opset)));
    break;
  }
  if (!out.ok()) return located(n, out.status());
  for (unsigned i = 0; i < n.numResults() && i < out->size(); ++i)
    if (const Value *r = n.result(i)) {
      if (!(*out)[i].present())
        return located(n, absl::InvalidArgumentError(
                              absl::StrCat("result #", i, " \"", r->name().str(),
                                           "\" was not computed")));
      f.vals[r] = std::move((*out)[i]);
    }
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

/// The truth of a one-element tensor.
StatusOr<bool> truthOf(const Tensor &t, llvm::StringRef what) {
  auto v = t.values<double>();
  if (!v.ok()) return v.status();
  if (v->size() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat(what.str(), " has ", v->size(), " elements, not one"));
  return (*v)[0] != 0;
}

const Graph *graphAttr(const Node &n, llvm::StringRef name) {
  const Attribute *a = n.getAttr(name);
  return a && a->numGraphs() == 1 ? a->graph(0) : nullptr;
}

/// Bytes of one element of a byte-aligned type; 0 for strings and packed
/// sub-byte types.
size_t elemBytes(DataType dt) {
  unsigned bits = dataTypeBits(dt);
  return bits && bits % 8 == 0 ? bits / 8 : 0;
}

/// Stacks `items` (equal shapes and types) along a new axis `axis`;
/// `items` in order.
StatusOr<Tensor> stack(const std::vector<const Tensor *> &items, int64_t axis) {
  const Tensor &first = *items.front();
  DataType dt = first.dataType();
  std::vector<int64_t> dims = first.dims();
  if (axis < 0 || axis > (int64_t)dims.size())
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range"));
  for (const Tensor *t : items)
    if (t->dataType() != dt || t->dims() != dims)
      return absl::InvalidArgumentError("the iterations' outputs differ in type or shape");
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < (int64_t)dims.size(); ++k) (k < axis ? outer : inner) *= dims[k];
  Tensor out;
  out.setDataType(dt);
  std::vector<int64_t> od = dims;
  od.insert(od.begin() + axis, (int64_t)items.size());
  out.setDims(od);
  if (dt == DataType::String) {
    std::vector<std::vector<std::string>> ss;
    for (const Tensor *t : items) {
      auto s = t->strings();
      if (!s.ok()) return s.status();
      ss.push_back(std::move(*s));
    }
    auto &o = out.stringData.mut();
    for (int64_t a = 0; a < outer; ++a)
      for (auto &s : ss) o.insert(o.end(), s.begin() + a * inner, s.begin() + (a + 1) * inner);
    out.setTyped(Tensor::TypedField::String);
    return out;
  }
  size_t eb = elemBytes(dt);
  if (!eb)
    return absl::UnimplementedError(
        absl::StrCat("stacking ", dataTypeName(dt).str(), " tensors"));
  std::vector<llvm::StringRef> raw;
  for (const Tensor *t : items) {
    auto b = t->bytes();
    if (!b.ok()) return b.status();
    raw.push_back(*b);
  }
  std::string bytes;
  bytes.reserve(raw.size() * (size_t)(outer * inner) * eb);
  size_t chunk = (size_t)inner * eb;
  for (int64_t a = 0; a < outer; ++a)
    for (llvm::StringRef r : raw) bytes.append(r.data() + a * chunk, chunk);
  out.setRaw(std::move(bytes));
  return out;
}

/// Slice #k of `t` along `axis`, that axis removed.
StatusOr<Tensor> sliceAt(const Tensor &t, int64_t axis, int64_t k) {
  const std::vector<int64_t> &dims = t.dims();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < (int64_t)dims.size(); ++d)
    if (d < axis) outer *= dims[d];
    else if (d > axis) inner *= dims[d];
  int64_t n = dims[axis];
  Tensor out;
  out.setDataType(t.dataType());
  std::vector<int64_t> od = dims;
  od.erase(od.begin() + axis);
  out.setDims(od);
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (!s.ok()) return s.status();
    auto &o = out.stringData.mut();
    for (int64_t a = 0; a < outer; ++a)
      o.insert(o.end(), s->begin() + (a * n + k) * inner, s->begin() + (a * n + k + 1) * inner);
    out.setTyped(Tensor::TypedField::String);
    return out;
  }
  size_t eb = elemBytes(t.dataType());
  if (!eb)
    return absl::UnimplementedError(
        absl::StrCat("slicing ", dataTypeName(t.dataType()).str(), " tensors"));
  auto b = t.bytes();
  if (!b.ok()) return b.status();
  std::string bytes;
  size_t chunk = (size_t)inner * eb;
  for (int64_t a = 0; a < outer; ++a) bytes.append(b->data() + (a * n + k) * chunk, chunk);
  out.setRaw(std::move(bytes));
  return out;
}

Tensor scalarTensor(DataType dt, int64_t v) {
  Tensor t;
  t.setDataType(dt);
  t.setDims({});
  if (dt == DataType::Bool) t.setRaw(std::string(1, v ? 1 : 0));
  else t.setRaw(std::string(reinterpret_cast<const char *>(&v), 8));
  return t;
}

/// An empty stack (no iteration ran) for a body output of declared type `t`.
StatusOr<Tensor> emptyStack(const Type *t, llvm::StringRef what) {
  if (!t || !t->isTensor() || !t->hasElemType() || !t->hasShape() || !t->isStatic())
    return absl::UnimplementedError(
        absl::StrCat("no iteration ran and the type of ", what.str(), " is not static"));
  Tensor out;
  out.setDataType(t->elemType());
  std::vector<int64_t> dims{0};
  for (const Dim &d : t->dims()) dims.push_back(d.value);
  out.setDims(dims);
  if (t->elemType() == DataType::String) out.setTyped(Tensor::TypedField::String);
  else out.setRaw(std::string());
  return out;
}

StatusOr<std::vector<Held>> Run::runIf(const Node &n, Frame &f, const std::vector<Held> &in) {
  if (in.empty() || !in[0].isTensor()) return absl::InvalidArgumentError("If has no condition");
  auto c = truthOf(*in[0].t, "the condition");
  if (!c.ok()) return c.status();
  const Graph *g = graphAttr(n, *c ? "then_branch" : "else_branch");
  if (!g) return absl::InvalidArgumentError("If has no branch graph");
  auto out = runSubgraph(*g, f, {});
  if (!out.ok()) return out.status();
  if (out->size() != n.numResults())
    return absl::InvalidArgumentError(absl::StrCat("the branch has ", out->size(),
                                                   " outputs for ", n.numResults(), " results"));
  for (Held &h : *out) h.nondet |= in[0].nondet;
  return out;
}

StatusOr<std::vector<Held>> Run::runLoop(const Node &n, Frame &f, const std::vector<Held> &in) {
  const Graph *body = graphAttr(n, "body");
  if (!body) return absl::InvalidArgumentError("Loop has no body");
  size_t nCarried = in.size() >= 2 ? in.size() - 2 : 0;
  if (body->numOutputs() < 1 + nCarried || body->numInputs() != 2 + nCarried)
    return absl::InvalidArgumentError("the Loop body's inputs and outputs do not match it");
  size_t nScan = body->numOutputs() - 1 - nCarried;
  bool nondet = false;
  std::optional<int64_t> trips;
  for (size_t k = 0; k < 2 && k < in.size(); ++k)
    if (in[k].present() && !in[k].isTensor())
      return absl::InvalidArgumentError(
          absl::StrCat(k ? "cond" : "M", " is ", kindName(in[k]), ", not a tensor"));
  if (in.size() > 0 && in[0].t) {
    auto v = in[0].t->values<int64_t>();
    if (!v.ok() || v->size() != 1) return absl::InvalidArgumentError("M is not a scalar");
    trips = (*v)[0];
    nondet |= in[0].nondet;
  }
  bool cond = true;
  if (in.size() > 1 && in[1].t) {
    auto c = truthOf(*in[1].t, "cond");
    if (!c.ok()) return c.status();
    cond = *c;
    nondet |= in[1].nondet;
  }
  std::vector<Held> carried(in.begin() + std::min<size_t>(2, in.size()), in.end());
  std::vector<std::vector<Held>> scans(nScan);
  uint64_t scanBytes = 0;
  int64_t i = 0;
  for (; cond && (!trips || i < *trips); ++i) {
    if (i >= opts_.maxLoopIterations)
      return absl::ResourceExhaustedError(
          absl::StrCat("Loop ran over ", opts_.maxLoopIterations, " iterations"));
    std::vector<Held> bin;
    bin.push_back(Held::tensor(own(scalarTensor(DataType::Int64, i)), false));
    bin.push_back(Held::tensor(own(scalarTensor(DataType::Bool, 1)), false));
    bin.insert(bin.end(), carried.begin(), carried.end());
    auto out = runSubgraph(*body, f, bin);
    if (!out.ok()) return out.status();
    if (!(*out)[0].isTensor())
      return absl::InvalidArgumentError("the body's condition is no tensor");
    auto c = truthOf(*(*out)[0].t, "the body's condition");
    if (!c.ok()) return c.status();
    cond = *c;
    nondet |= (*out)[0].nondet;
    for (size_t k = 0; k < nCarried; ++k) carried[k] = (*out)[1 + k];
    for (size_t k = 0; k < nScan; ++k)
      if (auto s = collectScanOutput(scans[k], (*out)[1 + nCarried + k], k, scanBytes); !s.ok())
        return s;
  }
  return loopResults(carried, nondet, scans, *body, 1 + nCarried,
                     [](size_t, std::vector<const Tensor *> &items) { return stack(items, 0); });
}

Status Run::collectScanOutput(std::vector<Held> &items, const Held &h, size_t k,
                              uint64_t &bytes) const {
  if (!h.isTensor())
    return absl::InvalidArgumentError(
        absl::StrCat("scan output #", k, " is ", kindName(h), ", not a tensor"));
  bytes += tensorDataBytes(*h.t);
  if (bytes > opts_.maxBytes)
    return absl::ResourceExhaustedError(
        absl::StrCat("the scan outputs are over the limit of ", opts_.maxBytes, " bytes"));
  items.push_back(h);
  return absl::OkStatus();
}

StatusOr<std::vector<Held>> Run::loopResults(
    std::vector<Held> &state, bool nondet, const std::vector<std::vector<Held>> &scans,
    const Graph &body, size_t firstScanOut,
    llvm::function_ref<StatusOr<Tensor>(size_t k, std::vector<const Tensor *> &items)>
        stackItems) {
  std::vector<Held> results;
  for (Held &h : state) {
    h.nondet |= nondet;
    results.push_back(h);
  }
  for (size_t k = 0; k < scans.size(); ++k) {
    StatusOr<Tensor> t = absl::UnknownError("");
    bool nd = nondet;
    if (scans[k].empty()) {
      t = emptyStack(body.output(firstScanOut + k)->type(), absl::StrCat("scan output #", k));
    } else {
      std::vector<const Tensor *> items;
      for (const Held &h : scans[k]) {
        items.push_back(h.t.get());
        nd |= h.nondet;
      }
      t = stackItems(k, items);
    }
    if (!t.ok()) return t.status();
    results.push_back(Held::tensor(own(std::move(*t)), nd));
  }
  return results;
}

StatusOr<std::vector<Held>> Run::runScan(const Node &n, Frame &f, const std::vector<Held> &in,
                                         llvm::ArrayRef<const Attribute *> attrs) {
  if (opsetInForce(n) < 9) return runScan8(n, f, in, attrs);
  const Graph *body = graphAttr(n, "body");
  if (!body) return absl::InvalidArgumentError("Scan has no body");
  auto attr = [&](llvm::StringRef name) -> const Attribute * {
    for (const Attribute *a : attrs)
      if (a->name() == name) return a;
    return nullptr;
  };
  const Attribute *nsa = attr("num_scan_inputs");
  if (!nsa) return absl::InvalidArgumentError("Scan has no num_scan_inputs");
  int64_t m = nsa->i;
  if (m < 1 || m > (int64_t)in.size())
    return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs is ", m));
  size_t nState = in.size() - (size_t)m;
  if (body->numInputs() != in.size() || body->numOutputs() < nState)
    return absl::InvalidArgumentError("the Scan body's inputs and outputs do not match it");
  size_t nScanOut = body->numOutputs() - nState;
  auto list = [&](llvm::StringRef name, size_t count) {
    std::vector<int64_t> v(count, 0);
    if (const Attribute *a = attr(name))
      for (size_t k = 0; k < count && k < a->ints.size(); ++k) v[k] = a->ints[k];
    return v;
  };
  std::vector<Held> state(in.begin(), in.begin() + nState);
  std::vector<Held> scanIn(in.begin() + nState, in.end());
  return scanLoop(*body, f, std::move(state), scanIn, list("scan_input_axes", (size_t)m),
                  list("scan_input_directions", (size_t)m), list("scan_output_axes", nScanOut),
                  list("scan_output_directions", nScanOut), false);
}

StatusOr<std::vector<Held>> Run::scanLoop(const Graph &body, Frame &f, std::vector<Held> state,
                                          const std::vector<Held> &scanIn,
                                          const std::vector<int64_t> &inAxesAttr,
                                          const std::vector<int64_t> &inDirs,
                                          const std::vector<int64_t> &outAxes,
                                          const std::vector<int64_t> &outDirs, bool nondet) {
  size_t nState = state.size(), m = scanIn.size();
  size_t nScanOut = body.numOutputs() - nState;
  std::vector<int64_t> inAxes = inAxesAttr;
  int64_t iters = -1;
  for (size_t k = 0; k < m; ++k) {
    const Held &h = scanIn[k];
    if (!h.isTensor())
      return absl::InvalidArgumentError(absl::StrCat("scan input #", k, " is ",
                                                     h.present() ? kindName(h) : "missing"));
    int64_t rank = (int64_t)h.t->dims().size();
    int64_t ax = inAxes[k] < 0 ? inAxes[k] + rank : inAxes[k];
    if (ax < 0 || ax >= rank)
      return absl::InvalidArgumentError(absl::StrCat("scan_input_axes[", k, "] is out of range"));
    inAxes[k] = ax;
    int64_t len = h.t->dims()[(size_t)ax];
    if (iters >= 0 && len != iters)
      return absl::InvalidArgumentError("the scan inputs differ in length");
    iters = len;
    nondet |= h.nondet;
  }
  std::vector<std::vector<Held>> scans(nScanOut);
  uint64_t scanBytes = 0;
  for (int64_t i = 0; i < iters; ++i) {
    std::vector<Held> bin = state;
    for (size_t k = 0; k < m; ++k) {
      int64_t at = inDirs[k] ? iters - 1 - i : i;
      auto s = sliceAt(*scanIn[k].t, inAxes[k], at);
      if (!s.ok()) return s.status();
      bin.push_back(Held::tensor(own(std::move(*s)), scanIn[k].nondet));
    }
    auto out = runSubgraph(body, f, bin);
    if (!out.ok()) return out.status();
    for (size_t k = 0; k < nState; ++k) state[k] = (*out)[k];
    for (size_t k = 0; k < nScanOut; ++k)
      if (auto s = collectScanOutput(scans[k], (*out)[nState + k], k, scanBytes); !s.ok())
        return s;
  }
  return loopResults(state, nondet, scans, body, nState,
                     [&](size_t k, std::vector<const Tensor *> &items) {
                       if (outDirs[k]) std::reverse(items.begin(), items.end());
                       int64_t rank = (int64_t)items.front()->dims().size() + 1;
                       int64_t ax = outAxes[k] < 0 ? outAxes[k] + rank : outAxes[k];
                       return stack(items, ax);
                     });
}

// Note [Scan-8]
// Scan before opset 9 has a batch axis: every state and scan input has it
// first (the scan axis of a scan input is axis 1), the optional operand 0
// (sequence_lens) gives each batch entry's length, and `directions` the
// scan inputs' directions. It runs as one Scan-9 loop per batch entry on
// the entry's slices (scan axis 0 there), its states and scan outputs
// stacked along a new axis 0. A sequence_lens shorter than the scan axis
// (its outputs padded) is not supported.
StatusOr<std::vector<Held>> Run::runScan8(const Node &n, Frame &f, const std::vector<Held> &in,
                                          llvm::ArrayRef<const Attribute *> attrs) {
  const Graph *body = graphAttr(n, "body");
  if (!body) return absl::InvalidArgumentError("Scan has no body");
  const Attribute *nsa = nullptr, *dirs = nullptr;
  for (const Attribute *a : attrs) {
    if (a->name() == "num_scan_inputs") nsa = a;
    if (a->name() == "directions") dirs = a;
  }
  if (!nsa) return absl::InvalidArgumentError("Scan has no num_scan_inputs");
  int64_t m = nsa->i;
  if (in.empty() || m < 1 || m > (int64_t)in.size() - 1)
    return absl::InvalidArgumentError(absl::StrCat("num_scan_inputs is ", m));
  size_t nState = in.size() - 1 - (size_t)m;
  if (body->numInputs() != in.size() - 1 || body->numOutputs() < nState)
    return absl::InvalidArgumentError("the Scan body's inputs and outputs do not match it");
  size_t nScanOut = body->numOutputs() - nState;
  int64_t batch = -1;
  bool nondet = false;
  for (size_t k = 1; k < in.size(); ++k) {
    const Held &h = in[k];
    std::string what = k <= nState ? absl::StrCat("state #", k - 1)
                                   : absl::StrCat("scan input #", k - 1 - nState);
    if (!h.isTensor())
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is ", h.present() ? kindName(h) : "missing"));
    size_t needRank = k <= nState ? 1 : 2;
    if (h.t->dims().size() < needRank)
      return absl::InvalidArgumentError(absl::StrCat(what, " has no batch axis"));
    if (batch >= 0 && h.t->dims()[0] != batch)
      return absl::InvalidArgumentError(absl::StrCat(what, " has batch size ", h.t->dims()[0],
                                                     ", the others ", batch));
    batch = h.t->dims()[0];
    nondet |= h.nondet;
  }
  if (in[0].present()) {
    if (!in[0].isTensor()) return absl::InvalidArgumentError("sequence_lens is no tensor");
    auto lens = in[0].t->values<int64_t>();
    if (!lens.ok()) return lens.status();
    int64_t full = in[1 + nState].t->dims()[1];
    if ((int64_t)lens->size() != batch)
      return absl::InvalidArgumentError(
          absl::StrCat("sequence_lens has ", lens->size(), " entries for batch size ", batch));
    for (int64_t l : *lens)
      if (l != full)
        return absl::UnimplementedError(absl::StrCat(
            "Scan-8 with a sequence_lens entry (", l, ") other than the scan axis' length (",
            full, ")"));
    nondet |= in[0].nondet;
  }
  std::vector<int64_t> inDirs((size_t)m, 0);
  if (dirs)
    for (size_t k = 0; k < (size_t)m && k < dirs->ints.size(); ++k) inDirs[k] = dirs->ints[k];
  std::vector<std::vector<Held>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Held> state, scanIn;
    for (size_t k = 1; k < in.size(); ++k) {
      auto s = sliceAt(*in[k].t, 0, b);
      if (!s.ok()) return s.status();
      (k <= nState ? state : scanIn).push_back(Held::tensor(own(std::move(*s)), in[k].nondet));
    }
    auto r = scanLoop(*body, f, std::move(state), scanIn, std::vector<int64_t>((size_t)m, 0),
                      inDirs, std::vector<int64_t>(nScanOut, 0),
                      std::vector<int64_t>(nScanOut, 0), nondet);
    if (!r.ok()) return r.status();
    perBatch.push_back(std::move(*r));
  }
  std::vector<Held> results;
  for (size_t k = 0; k < nState + nScanOut; ++k) {
    std::vector<const Tensor *> items;
    bool nd = nondet;
    for (const std::vector<Held> &r : perBatch) {
      if (!r[k].isTensor())
        return absl::InvalidArgumentError(
            absl::StrCat("body output #", k, " is ", kindName(r[k]), ", not a tensor"));
      items.push_back(r[k].t.get());
      nd |= r[k].nondet;
    }
    if (items.empty())
      return absl::UnimplementedError("Scan-8 with a batch of size 0");
    auto t = stack(items, 0);
    if (!t.ok()) return t.status();
    if (Status s = checkBudget(*t); !s.ok()) return s;
    results.push_back(Held::tensor(own(std::move(*t)), nd));
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

/// dim_param -> (size, the input that bound it).
using Symbols = std::map<std::string, std::pair<int64_t, std::string>>;

/// Checks tensor `t` given for `what` (`input "x"`, `input "s", element
/// #2`) against its declared type `ty` (Note [Evaluation]); `symbols` (null
/// for a sequence's elements, which may differ in size) binds each
/// dim_param to the first size seen.
Status checkTensor(const std::string &what, const std::string &input, const Type *ty,
                   const Tensor &t, Symbols *symbols) {
  if (ty && ty->hasElemType() && ty->elemTypeRaw() != 0 && ty->elemTypeRaw() != t.dataTypeRaw())
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": element type ", dataTypeName(t.dataType()).str(), ", expected ",
        dataTypeName(ty->elemType()).str(), " (", ty->str(), ")"));
  if (ty && ty->hasShape()) {
    if ((int64_t)t.dims().size() != ty->rank())
      return absl::InvalidArgumentError(absl::StrCat(what, ": rank ", t.dims().size(),
                                                     ", expected ", ty->rank(), " (", ty->str(),
                                                     ")"));
    for (size_t k = 0; k < t.dims().size(); ++k) {
      const Dim &d = ty->dims()[k];
      int64_t got = t.dims()[k];
      if (d.isKnown() && d.value != got)
        return absl::InvalidArgumentError(absl::StrCat(what, ": dim ", k, " is ", got,
                                                       ", expected ", d.value, " (", ty->str(),
                                                       ")"));
      if (d.isSymbolic() && symbols) {
        auto [it, fresh] = symbols->emplace(d.param.str(), std::make_pair(got, input));
        if (!fresh && it->second.first != got)
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": dim ", k, " (", d.param.str(), ") is ", got, ", but ", d.param.str(),
              " is ", it->second.first, " in input \"", it->second.second, "\""));
      }
    }
  }
  if (Status s = checkTensorData(t); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.message()));
  return absl::OkStatus();
}

std::shared_ptr<const Tensor> view(const Tensor &t) { return unowned(&t); }

/// `v` given for `what` as a value of the run, checked against its declared
/// type `ty` (null: not declared). Note [Evaluator values]: an optional
/// input may be given its element alone.
StatusOr<Held> bindInput(const std::string &what, const std::string &input, const Type *ty,
                         const EvalValue &v, Symbols *symbols) {
  using K = EvalValue::Kind;
  Type::Kind want = ty ? ty->kind() : Type::Kind::None;
  const Type *inner = ty ? ty->elementType() : nullptr;
  if (ty && want != Type::Kind::Tensor && want != Type::Kind::Sequence &&
      want != Type::Kind::Optional)
    return absl::UnimplementedError(
        absl::StrCat("not supported: ", what, " of type ", ty->str()));
  if (want == Type::Kind::Optional && !v.isOptional()) {
    auto h = bindInput(what, input, inner, v, symbols);
    if (!h.ok()) return h.status();
    return Held::optional(*h, false);
  }
  auto mismatch = [&](const char *given) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", given, " given for ", ty->str()));
  };
  switch (v.kind) {
  case K::Tensor:
    if (ty && want != Type::Kind::Tensor) return mismatch("a tensor");
    if (Status s = checkTensor(what, input, ty, v.tensor, symbols); !s.ok()) return s;
    return Held::tensor(view(v.tensor), false);
  case K::Sequence: {
    if (ty && want != Type::Kind::Sequence) return mismatch("a sequence");
    std::vector<Held> elems;
    DataType et = v.elemType;
    for (size_t k = 0; k < v.elements.size(); ++k) {
      auto h = bindInput(absl::StrCat(what, ", element #", k), input, inner, v.elements[k],
                         nullptr);
      if (!h.ok()) return h.status();
      DataType ek = h->isTensor() ? h->t->dataType() : h->elemType;
      if (et == DataType::Undefined) et = ek;
      else if (ek != DataType::Undefined && ek != et)
        return absl::InvalidArgumentError(
            absl::StrCat(what, ", element #", k, ": element type ", dataTypeName(ek).str(),
                         ", the sequence's ", dataTypeName(et).str()));
      elems.push_back(std::move(*h));
    }
    if (et == DataType::Undefined && inner && inner->hasElemType())
      et = inner->elemType(); // an empty sequence takes its declared type
    return Held::sequence(std::move(elems), et, false);
  }
  case K::Optional: {
    if (ty && want != Type::Kind::Optional) return mismatch("an optional");
    if (v.elements.size() > 1)
      return absl::InvalidArgumentError(absl::StrCat(what, ": an optional holds one value"));
    if (v.elements.empty()) return Held::optional(Held{}, false);
    auto h = bindInput(what, input, inner, v.elements[0], symbols);
    if (!h.ok()) return h.status();
    return Held::optional(*h, false);
  }
  case K::Map:
    return absl::UnimplementedError(absl::StrCat("not supported: ", what, ": a map"));
  }
  return absl::InternalError("unknown value kind");
}

/// An owning copy of `h` for the caller.
EvalValue valueOf(const Held &h) {
  switch (h.kind) {
  case EvalValue::Kind::Tensor: return EvalValue(h.t ? *h.t : Tensor());
  case EvalValue::Kind::Sequence: {
    std::vector<EvalValue> elems;
    for (const Held &e : *h.elems) elems.push_back(valueOf(e));
    return EvalValue::sequence(std::move(elems), h.elemType);
  }
  case EvalValue::Kind::Optional:
    if (!h.size()) return EvalValue::optional();
    return EvalValue::optional(valueOf((*h.elems)[0]));
  case EvalValue::Kind::Map:
    return EvalValue::map(*(*h.elems)[0].t, *(*h.elems)[1].t);
  }
  return EvalValue();
}

/// Values made from the given ones that the run's views point into.
using Kept = std::vector<std::unique_ptr<EvalValue>>;

/// A value given for input `v` in a map of tensors or of values.
StatusOr<Held> bindGiven(const Value &v, const Tensor &t, Symbols &symbols, Kept &kept) {
  std::string what = absl::StrCat("input \"", v.name().str(), "\"");
  const Type *ty = v.type();
  if (ty && ty->isTensor()) {
    if (Status s = checkTensor(what, v.name().str(), ty, t, &symbols); !s.ok()) return s;
    return Held::tensor(view(t), false);
  }
  kept.push_back(std::make_unique<EvalValue>(t));
  return bindInput(what, v.name().str(), ty, *kept.back(), &symbols);
}

StatusOr<Held> bindGiven(const Value &v, const EvalValue &x, Symbols &symbols, Kept &) {
  return bindInput(absl::StrCat("input \"", v.name().str(), "\""), v.name().str(), v.type(), x,
                   &symbols);
}

/// evaluateModel on a map of tensors or of values. A tensor given for an
/// input that is no tensor is copied into a value the run keeps (`kept`).
template <typename Given>
absl::StatusOr<EvalResult> evaluateGiven(const Model &m, const std::map<std::string, Given> &inputs,
                                         const EvalOptions &opts) {
  EvalResult res;
  const Graph &g = m.graph();
  std::set<std::string> known;
  for (Value *v : g.inputs()) known.insert(v->name().str());
  for (const auto &e : inputs)
    if (!known.count(e.first)) {
      std::string names;
      for (Value *v : g.inputs())
        if (!v->hasInitializer()) absl::StrAppend(&names, names.empty() ? "" : ", ", v->name().str());
      return absl::InvalidArgumentError(absl::StrCat("\"", e.first,
                                                     "\" is no input of the model (its inputs: ",
                                                     names.empty() ? "none" : names, ")"));
    }
  {
    Run run(m, opts, res.stats);
    Frame top;
    Symbols symbols;
    Kept kept;
    for (Value *v : g.inputs()) {
      auto it = inputs.find(v->name().str());
      if (it == inputs.end()) {
        if (v->hasInitializer()) continue; // lookup reads the default
        return absl::InvalidArgumentError(
            absl::StrCat("input \"", v->name().str(), "\" is not given"));
      }
      auto h = bindGiven(*v, it->second, symbols, kept);
      if (!h.ok()) return h.status();
      top.vals[v] = std::move(*h);
    }
    if (Status s = run.runGraph(g, top); !s.ok()) return s;
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      const Value *v = g.output(i);
      if (!v) continue;
      auto h = run.lookup(top, v);
      if (!h.ok()) return h.status();
      std::string name = v->name().str();
      if (h->isTensor()) res.outputs[name] = *h->t;
      else res.otherOutputs[name] = valueOf(*h);
      if (h->nondet) res.nondeterministic.insert(name);
    }
  }
  return res;
}

} // namespace evalrun

EvalValue EvalValue::sequence(std::vector<EvalValue> elements, DataType elemType) {
  EvalValue v;
  v.kind = Kind::Sequence;
  v.elements = std::move(elements);
  v.elemType = elemType;
  if (v.elemType == DataType::Undefined && !v.elements.empty()) {
    const EvalValue &e = v.elements.front();
    v.elemType = e.isTensor() ? e.tensor.dataType() : e.elemType;
  }
  return v;
}

EvalValue EvalValue::optional(std::optional<EvalValue> element) {
  EvalValue v;
  v.kind = Kind::Optional;
  if (element) v.elements.push_back(std::move(*element));
  return v;
}

std::string EvalValue::str() const {
  switch (kind) {
  case Kind::Tensor: {
    std::string s = dataTypeName(tensor.dataType()).str() + "[";
    for (size_t k = 0; k < tensor.dims().size(); ++k)
      s += (k ? "," : "") + std::to_string(tensor.dims()[k]);
    return s + "]";
  }
  case Kind::Sequence: {
    std::string s = "seq(";
    for (size_t k = 0; k < elements.size(); ++k) s += (k ? ", " : "") + elements[k].str();
    if (elements.empty() && elemType != DataType::Undefined)
      s += dataTypeName(elemType).str();
    return s + ")";
  }
  case Kind::Optional: return "optional(" + (elements.empty() ? "" : elements[0].str()) + ")";
  case Kind::Map:
    return "map(" + elements[0].str() + " -> " + elements[1].str() + ")";
  }
  return "";
}

absl::StatusOr<EvalResult> evaluateModel(const Model &m,
                                         const std::map<std::string, Tensor> &inputs,
                                         const EvalOptions &opts) {
  return evalrun::evaluateGiven(m, inputs, opts);
}

absl::StatusOr<EvalResult> evaluateModelValues(const Model &m,
                                               const std::map<std::string, EvalValue> &inputs,
                                               const EvalOptions &opts) {
  return evalrun::evaluateGiven(m, inputs, opts);
}

absl::StatusOr<std::map<std::string, Tensor>> evaluate(const Model &m,
                                                       const std::map<std::string, Tensor> &inputs,
                                                       const EvalOptions &opts) {
  auto r = evaluateModel(m, inputs, opts);
  if (!r.ok()) return r.status();
  if (!r->otherOutputs.empty())
    return absl::UnimplementedError(
        absl::StrCat("output \"", r->otherOutputs.begin()->first, "\" is ",
                     r->otherOutputs.begin()->second.str(), ", not a tensor (evaluateModel "
                     "returns every kind)"));
  return std::move(r->outputs);
}

} // namespace onnxir
