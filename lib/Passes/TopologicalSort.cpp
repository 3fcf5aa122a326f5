//===- TopologicalSort.cpp - Stable topological order of every graph ------===//
//
// Kahn's algorithm with the original position as priority: among the nodes
// whose dependencies are met, the one listed first goes next, so a sorted
// graph is left exactly as it is and an unsorted one changes as little as
// possible. A node holding subgraphs depends on every value its subgraphs
// capture from this graph.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"

#include <queue>

namespace onnxir {

namespace {

// Nodes of `g` that `n` depends on (through operands or captures).
void dependencies(const Graph &g, Node *root, Node *n, std::vector<Node *> &out) {
  for (const Use &u : n->operandUses())
    if (Value *v = u.get())
      if (Node *d = v->definingNode())
        if (Node *a = d->ancestorIn(&g))
          if (a != root) out.push_back(a);
  for (Graph *sg : n->subgraphs()) {
    for (Node &m : sg->nodes()) dependencies(g, root, &m, out);
    dependencies(g, root, sg->returnNode(), out);
  }
}

} // namespace

absl::StatusOr<bool> topologicalSort(Graph &g, int64_t *nodesMoved) {
  bool changed = false;
  // Subgraphs first (they are independent scopes for ordering).
  for (Node &n : g.nodes())
    for (Graph *sg : n.subgraphs()) {
      auto r = topologicalSort(*sg, nodesMoved);
      if (!r.ok()) return r;
      changed |= *r;
    }
  std::vector<Node *> order;
  llvm::DenseMap<Node *, unsigned> index;
  for (Node &n : g.nodes()) {
    index[&n] = (unsigned)order.size();
    order.push_back(&n);
  }
  size_t N = order.size();
  std::vector<unsigned> indeg(N, 0);
  std::vector<std::vector<unsigned>> succ(N);
  std::vector<Node *> deps;
  for (unsigned i = 0; i < N; ++i) {
    deps.clear();
    dependencies(g, order[i], order[i], deps);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (Node *d : deps) {
      auto it = index.find(d);
      if (it == index.end()) continue;
      succ[it->second].push_back(i);
      ++indeg[i];
    }
  }
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>> ready;
  for (unsigned i = 0; i < N; ++i)
    if (!indeg[i]) ready.push(i);
  std::vector<unsigned> sorted;
  sorted.reserve(N);
  while (!ready.empty()) {
    unsigned i = ready.top();
    ready.pop();
    sorted.push_back(i);
    for (unsigned s : succ[i])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (sorted.size() != N) {
    // Walk predecessors among the unsorted nodes until one repeats: a cycle.
    std::vector<std::vector<unsigned>> pred(N);
    for (unsigned i = 0; i < N; ++i)
      for (unsigned s : succ[i]) pred[s].push_back(i);
    unsigned cur = 0;
    while (!indeg[cur]) ++cur;
    std::vector<int> seenAt(N, -1);
    std::vector<unsigned> path;
    while (seenAt[cur] < 0) {
      seenAt[cur] = (int)path.size();
      path.push_back(cur);
      for (unsigned p : pred[cur])
        if (indeg[p]) {
          cur = p;
          break;
        }
    }
    std::string msg = absl::StrCat(g.path(), ": the graph has a cycle through these nodes:");
    for (size_t k = (size_t)seenAt[cur]; k < path.size(); ++k)
      absl::StrAppend(&msg, "\n  ", nodePath(order[path[path.size() - 1 - (k - seenAt[cur])]]));
    return absl::InvalidArgumentError(msg);
  }
  int64_t moved = 0;
  for (unsigned k = 0; k < N; ++k)
    if (sorted[k] != k) ++moved;
  if (moved) {
    // One permutation: moving nodes one at a time would pass through states
    // that Node::moveToEnd refuses (a user still before its definition).
    std::vector<Node *> newOrder;
    newOrder.reserve(N);
    for (unsigned k : sorted) newOrder.push_back(order[k]);
    g.reorderNodes(newOrder);
    changed = true;
  }
  if (nodesMoved) *nodesMoved += moved;
  return changed;
}

absl::StatusOr<bool> topologicalSort(Model &m, int64_t *nodesMoved) {
  bool changed = false;
  auto r = topologicalSort(m.graph(), nodesMoved);
  if (!r.ok()) return r;
  changed |= *r;
  for (auto &f : m.functions()) {
    auto rf = topologicalSort(f->body(), nodesMoved);
    if (!rf.ok()) return rf;
    changed |= *rf;
  }
  return changed;
}

//===----------------------------------------------------------------------===//
// The topo pass
//===----------------------------------------------------------------------===//

namespace {
class TopoPass : public Pass {
public:
  llvm::StringRef argument() const override { return "topo"; }
  llvm::StringRef description() const override {
    return "Stable topological sort of every graph (captures count as dependencies)";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t moved = 0;
    auto r = topologicalSort(m, &moved);
    addStat("nodes moved", moved);
    return r;
  }
};
} // namespace

std::unique_ptr<Pass> createTopologicalSortPass() { return std::make_unique<TopoPass>(); }

} // namespace onnxir
