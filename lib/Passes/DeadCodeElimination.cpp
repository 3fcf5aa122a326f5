//===- DeadCodeElimination.cpp - Remove what nothing uses -----------------===//
//
// A worklist over every node of every graph: a node none of whose results is
// used (graph outputs are uses, and so are uses from nested graphs) is erased,
// and the producers of its operands and captured values are revisited. Linear
// in nodes + uses. Nodes with no results at all are kept: they can only exist
// for an effect.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace onnxir {

namespace {

bool isDead(const Node &n) { return n.numResults() > 0 && !n.hasUses(); }

// Note [Result sweep]
// A kept node may lose results: an optional one nothing uses becomes an
// empty slot, and empty slots at the end go. Looking at every node of the
// model for that was a second walk over all of them (and each result) after
// the erasing, as long as the first; on a model with nothing to remove it
// was half the pass. Only two kinds of kept node can have something to
// trim: one that had an unused result or a trailing empty slot when the
// pass began (the first walk, which reads the same results to find the dead
// nodes, notes them), and one whose result lost its last use to an erase
// (noted there). So only those are looked at after the erasing.
bool mayTrimResults(const Node &n) {
  const unsigned k = n.numResults();
  if (k == 0) return false;
  if (!n.result(k - 1)) return true;
  for (unsigned i = 0; i < k; ++i)
    if (Value *r = n.result(i); r && r->useEmpty()) return true;
  return false;
}

// Values used by `n` (operands, and captures of its subgraphs) that are
// defined outside n.
// True if `v` is defined inside one of `root`'s subgraphs (at any depth):
// such values die with root and must not be looked at after it is erased.
bool definedInside(const Node *root, const Value *v) {
  // Without subgraphs nothing is inside root, and the walk up from v's
  // graph (a miss on its defining node) is not needed.
  if (!root->hasSubgraphs()) return false;
  for (const Graph *g = v->getGraph(); g; g = g->parentGraph())
    if (g->parentNode() == root) return true;
  return false;
}

void collectInputs(Node *root, Node *n, std::vector<Value *> &out) {
  for (const Use &u : n->operandUses())
    if (Value *v = u.get())
      if (!definedInside(root, v)) out.push_back(v);
  for (Graph *g : n->subgraphs()) {
    for (Node &m : g->nodes()) collectInputs(root, &m, out);
    collectInputs(root, g->returnNode(), out);
  }
}

// Note [DCE lookahead]
// Erasing a node touches places all over memory: the node, its operand
// slots, each used value and the uses beside it in that value's list (the
// unlinking writes them), its results and their name records (unregistered),
// and then, to see whether they died, the array of results of each
// producer. In a shuffled graph each of them is a miss, and erasing node by
// node waits for them one after another. So the work list is a queue: the
// nodes an erase makes dead wait behind those already there (with a stack
// they were erased right after, too soon for a hint to help), and the
// entries a few places ahead are known. They get hints, in four steps that
// each need what the step before loaded: the node's lines (kLinesAhead
// entries ahead), its operand slots (kSlotsAhead), its operand values, their
// list neighbours and its results (kUsesAhead), the name records and the
// producers' result arrays (kNamesAhead). Hints only: the order of erasing
// is the queue's, whatever they do, and what is erased does not depend on
// the order. An entry may have been erased with the subgraphs of a node
// erased before it (erasedNested); the hints are skipped once that has
// happened. On the shuffled 10^6-node chain (375,000
// nodes erased) the erasing took 0.21-0.24 s with a stack and no hints,
// 0.18-0.24 s with hints on the stack, and takes 0.10-0.14 s as it is
// (CPU time of the loop alone, 6 runs each; bench/README.md).
constexpr size_t kLinesAhead = 16, kSlotsAhead = 12, kUsesAhead = 8, kNamesAhead = 4;

void prefetchUses(const Node &n) {
  n.prefetchOperandValues(); // the values, and the uses before these
  for (const Use &u : n.operandUses())
    if (const Use *next = u.getNext()) __builtin_prefetch(next, 1);
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (const Value *r = n.result(i)) __builtin_prefetch(r);
}

void prefetchNamesAndProducers(const Node &n) {
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (const Value *r = n.result(i)) Context::prefetchNameRecord(r->name());
  for (const Use &u : n.operandUses())
    if (const Value *v = u.get())
      if (const Node *d = v->definingNode()) d->prefetchResults();
}

} // namespace

absl::StatusOr<bool> eliminateDeadCode(Model &m, const DCEOptions &opts, DCEStatistics *stats) {
  DCEStatistics local;
  DCEStatistics &st = stats ? *stats : local;
  // Each node enters the work list once: the dead ones at the start, and a
  // producer at the moment the erase of its last user makes it dead (it
  // had a use until then). So nothing taken from it has been erased,
  // except nodes that died inside the subgraphs of an erased node: only
  // those are remembered, not a set of every live node.
  std::vector<Node *> work;
  // Note [Result sweep]: the kept nodes whose results may need trimming
  // (an unused result, a trailing empty slot), found in the same walk as
  // the dead ones and as erasing makes results unused; `sweepSet` holds
  // those not erased since.
  std::vector<Node *> sweep;
  llvm::DenseSet<Node *> sweepSet;
  auto addSweep = [&](Node *n) {
    if (sweepSet.insert(n).second) sweep.push_back(n);
  };
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes()) {
      if (isDead(n)) work.push_back(&n);
      else if (mayTrimResults(n)) addSweep(&n);
    }
  });
  llvm::DenseSet<Node *> erasedNested;
  bool changed = false;
  std::vector<Value *> inputs;
  std::vector<Node *> producers;
  // A queue: work[next] is erased next, and what an erase makes dead is
  // erased after what is already waiting (Note [DCE lookahead]).
  for (size_t next = 0; next < work.size();) {
    const size_t w = work.size();
    if (erasedNested.empty()) {
      if (next + kLinesAhead < w) work[next + kLinesAhead]->prefetchLines();
      if (next + kSlotsAhead < w) work[next + kSlotsAhead]->prefetchOperandSlots();
      if (next + kUsesAhead < w) prefetchUses(*work[next + kUsesAhead]);
      if (next + kNamesAhead < w) prefetchNamesAndProducers(*work[next + kNamesAhead]);
    }
    Node *n = work[next++];
    if (!erasedNested.empty() && erasedNested.count(n)) continue;
    inputs.clear();
    collectInputs(n, n, inputs);
    if (n->hasSubgraphs())
      for (Graph *g : n->subgraphs())
        g->walk([&](Node *k) {
          erasedNested.insert(k);
          if (!sweepSet.empty()) sweepSet.erase(k);
        });
    if (!sweepSet.empty()) sweepSet.erase(n);
    auto s = n->erase();
    if (!s.ok()) return s;
    ++st.nodesRemoved;
    changed = true;
    producers.clear();
    for (Value *v : inputs)
      if (Node *d = v->definingNode()) {
        if (isDead(*d)) producers.push_back(d);
        else if (v->useEmpty()) addSweep(d);
      }
    if (producers.size() > 1) {
      std::sort(producers.begin(), producers.end());
      producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    }
    work.insert(work.end(), producers.begin(), producers.end());
  }
  // Unused optional results of kept nodes become empty slots, and trailing
  // empty slots go.
  for (Node *n : sweep) {
    if (!sweepSet.count(n)) continue; // erased after it was noted
    for (unsigned i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      // Optional in the op's schema (OpSchema.h): an unused one may go.
      if (r && r->useEmpty() && isOptionalResult(*n, i) && n->hasUses()) {
        (void)n->eraseResult(i);
        changed = true;
      }
    }
    n->trimTrailingEmptyResults();
  }
  m.walkGraphs([&](Graph *g) {
    unsigned r = g->removeInitializersIf([](Value *) { return true; });
    st.initializersRemoved += r;
    changed |= r > 0;
    if (opts.removeDeadValueInfo) {
      size_t before = g->valueInfo().size();
      g->removeValueInfoIf([](ValueInfoRecord &) { return false; });
      size_t removed = before - g->valueInfo().size();
      st.valueInfosRemoved += (int64_t)removed;
      changed |= removed > 0;
    }
  });
  if (opts.removeUnusedFunctions && !m.functions().empty()) {
    // Functions reachable from the main graph.
    llvm::DenseSet<Function *> used;
    std::vector<Function *> stack;
    auto visitGraph = [&](Graph &g) {
      g.walk([&](Node *n) {
        if (Function *f = m.findFunction(*n))
          if (used.insert(f).second) stack.push_back(f);
      });
    };
    visitGraph(m.graph());
    while (!stack.empty()) {
      Function *f = stack.back();
      stack.pop_back();
      visitGraph(f->body());
    }
    auto &fs = m.functions();
    size_t before = fs.size();
    fs.erase(std::remove_if(fs.begin(), fs.end(),
                            [&](const std::unique_ptr<Function> &f) { return !used.count(f.get()); }),
             fs.end());
    st.functionsRemoved += (int64_t)(before - fs.size());
    changed |= before != fs.size();
  }
  if (opts.removeUnusedOpsets) {
    llvm::StringSet<> domains;
    m.walkGraphs([&](Graph *g) {
      for (Node &n : g->nodes()) domains.insert(n.domain().empty() ? "" : n.domain());
    });
    auto &ops = m.opsetImports;
    size_t before = ops.size();
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [&](const OpsetImport &o) {
                               std::string d = canonicalDomain(o.domain).str();
                               // The default domain is always kept.
                               return !d.empty() && !domains.count(d);
                             }),
              ops.end());
    st.opsetsRemoved += (int64_t)(before - ops.size());
    changed |= before != ops.size();
  }
  return changed;
}

//===----------------------------------------------------------------------===//
// The dce pass
//===----------------------------------------------------------------------===//

namespace {
class DCEPass : public OptionsPass<DCEOptions> {
public:
  DCEPass()
      : OptionsPass("dce", "Remove unused nodes and initializers, in every graph and function") {}
  absl::StatusOr<bool> run(Model &m) override {
    DCEStatistics s;
    auto r = eliminateDeadCode(m, optionValues(), &s);
    addStats(s);
    return r;
  }

private:
  Field<bool> functions_{*this, &DCEOptions::removeUnusedFunctions, "functions",
                         "also remove model-local functions nobody calls", "dce-functions"};
  Field<bool> opsets_{*this, &DCEOptions::removeUnusedOpsets, "opsets",
                      "also remove opset imports of domains no node uses", "dce-opsets"};
  Field<bool> valueInfo_{*this, &DCEOptions::removeDeadValueInfo, "value-info",
                         "remove value_info of removed values", "dce-value-info"};
};
} // namespace

std::unique_ptr<Pass> createDeadCodeEliminationPass() { return std::make_unique<DCEPass>(); }

} // namespace onnxir
