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
#include "onnxir/IR/NodeLookahead.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"

#include <queue>

namespace onnxir {

namespace {

// Appends the positions (Node::indexInGraph) of the nodes of `g` that `n`
// depends on, through operands or captures, to `out`; `root` is the node of
// `g` being looked at (its own subgraphs' values are not dependencies).
void dependencies(const Graph &g, const Node *root, const Node *n, std::vector<uint32_t> &out) {
  for (const Use &u : n->operandUses())
    if (Value *v = u.get())
      if (Node *d = v->definingNode()) {
        Node *a = d->getGraph() == &g ? d : d->ancestorIn(&g);
        if (a && a != root) out.push_back(a->indexInGraph());
      }
  if (!n->hasSubgraphs()) return;
  for (Graph *sg : n->subgraphs()) {
    for (const Node &m : sg->nodes()) dependencies(g, root, &m, out);
    dependencies(g, root, sg->returnNode(), out);
  }
}

} // namespace

// The dependencies are gathered once into flat arrays of positions (no map
// from nodes, no list per node): millions of nodes cost a few linear passes.
// A graph whose every dependency points backwards is already sorted and is
// left alone without running Kahn's algorithm.
absl::StatusOr<bool> topologicalSort(Graph &g, int64_t *nodesMoved) {
  bool changed = false;
  // Subgraphs first (they are independent scopes for ordering).
  if (g.numNodesWithSubgraphs())
    for (Node &n : g.nodes())
      for (Graph *sg : n.subgraphs()) {
        auto r = topologicalSort(*sg, nodesMoved);
        if (!r.ok()) return r;
        changed |= *r;
      }
  if (g.numNodes() > UINT32_MAX - 1)
    return absl::ResourceExhaustedError(g.path() + ": too many nodes to sort");
  std::vector<Node *> order;
  order.reserve(g.numNodes());
  for (Node &n : g.nodes()) order.push_back(&n);
  const size_t N = order.size();
  // predFirst[i]..predFirst[i+1]: the distinct nodes node i waits for.
  std::vector<uint32_t> predFirst(N + 1), preds;
  preds.reserve(N + N / 2);
  bool sorted = true;
  // Note [Topo lookahead]
  // Gathering reads, per operand, the used value and its defining node:
  // places anywhere in memory, and in an unsorted graph nowhere near the
  // node before. Walked one node at a time that is a wait on each miss, in
  // turn (most of -topo's time on the shuffled 10^6-node chain). So, as in
  // the verifier's walk (Note [Verifier lookahead]), the nodes ahead in
  // `order` are prefetched (a NodeLookahead over the array, Note [Node
  // lookahead]): their own lines 32 ahead, their operand slots 24 ahead
  // (Note [Operand slots ahead]), the values they use 16 ahead, those
  // values' definitions 8 ahead. Hints only.
  NodeLookahead ahead(
      llvm::ArrayRef<Node *>(order), 16, 8, [](const Node &n) { n.prefetchOperandValues(); },
      [](const Node &n) { n.prefetchOperandDefinitions(); }, /*slots=*/true);
  for (uint32_t i = 0; i < N; ++i) {
    ahead.step();
    size_t begin = preds.size();
    predFirst[i] = (uint32_t)begin;
    dependencies(g, order[i], order[i], preds);
    if (preds.size() - begin > 1) {
      std::sort(preds.begin() + begin, preds.end());
      preds.erase(std::unique(preds.begin() + begin, preds.end()), preds.end());
    }
    if (preds.size() > begin && preds.back() >= i) sorted = false;
  }
  predFirst[N] = (uint32_t)preds.size();
  if (sorted) return changed;
  // Successor lists, the same arrays turned around.
  std::vector<uint32_t> succFirst(N + 1, 0), succ(preds.size()), indeg(N);
  for (uint32_t p : preds) ++succFirst[p + 1];
  for (size_t i = 0; i < N; ++i) succFirst[i + 1] += succFirst[i];
  {
    std::vector<uint32_t> fill(succFirst.begin(), succFirst.end() - 1);
    for (uint32_t i = 0; i < N; ++i) {
      indeg[i] = predFirst[i + 1] - predFirst[i];
      for (uint32_t k = predFirst[i]; k < predFirst[i + 1]; ++k) succ[fill[preds[k]]++] = i;
    }
  }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready;
  for (uint32_t i = 0; i < N; ++i)
    if (!indeg[i]) ready.push(i);
  std::vector<uint32_t> out;
  out.reserve(N);
  while (!ready.empty()) {
    uint32_t i = ready.top();
    ready.pop();
    out.push_back(i);
    for (uint32_t k = succFirst[i]; k < succFirst[i + 1]; ++k)
      if (--indeg[succ[k]] == 0) ready.push(succ[k]);
  }
  if (out.size() != N) {
    // Walk predecessors among the unsorted nodes until one repeats: a cycle.
    uint32_t cur = 0;
    while (!indeg[cur]) ++cur;
    std::vector<int64_t> seenAt(N, -1);
    std::vector<uint32_t> path;
    while (seenAt[cur] < 0) {
      seenAt[cur] = (int64_t)path.size();
      path.push_back(cur);
      for (uint32_t k = predFirst[cur]; k < predFirst[cur + 1]; ++k)
        if (indeg[preds[k]]) {
          cur = preds[k];
          break;
        }
    }
    std::string msg = absl::StrCat(g.path(), ": the graph has a cycle through these nodes:");
    for (size_t k = (size_t)seenAt[cur]; k < path.size(); ++k)
      absl::StrAppend(&msg, "\n  ", nodePath(order[path[path.size() - 1 - (k - seenAt[cur])]]));
    return absl::InvalidArgumentError(msg);
  }
  int64_t moved = 0;
  for (uint32_t k = 0; k < N; ++k)
    if (out[k] != k) ++moved;
  if (moved) {
    // One permutation: moving nodes one at a time would pass through states
    // that Node::moveToEnd refuses (a user still before its definition).
    std::vector<Node *> newOrder;
    newOrder.reserve(N);
    for (uint32_t k : out) newOrder.push_back(order[k]);
    g.reorderNodes(std::move(newOrder)); // kept as the graph's nodeArray()
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

std::unique_ptr<Pass> createTopologicalSortPass() {
  return makePass("topo", "Stable topological sort of every graph (captures count as dependencies)",
                  "nodes moved", topologicalSort);
}

} // namespace onnxir
