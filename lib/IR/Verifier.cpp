//===- Verifier.cpp - Structural checks of the IR -------------------------===//
#include "onnxir/IR/Verifier.h"

#include "onnxir/IR/Limits.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/NodeLookahead.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <vector>

namespace onnxir {

const char *diagnosticKindName(Diagnostic::Kind k) {
  switch (k) {
  case Diagnostic::Kind::UseListMismatch: return "use-list mismatch";
  case Diagnostic::Kind::BadParent: return "bad parent";
  case Diagnostic::Kind::NotVisible: return "not visible";
  case Diagnostic::Kind::OrderViolation: return "order violation";
  case Diagnostic::Kind::DuplicateName: return "duplicate name";
  case Diagnostic::Kind::Shadowing: return "shadowing";
  case Diagnostic::Kind::Cycle: return "cycle";
  case Diagnostic::Kind::BadOutput: return "bad output";
  case Diagnostic::Kind::Recursion: return "recursion";
  case Diagnostic::Kind::Other: return "error";
  case Diagnostic::Kind::Schema: return "schema";
  case Diagnostic::Kind::SchemaWarning: return "schema warning";
  }
  return "error";
}

// Note [Known acyclic graphs]
// An unsorted graph is searched for dependency cycles: a chase through every
// node at random, a third or more of the verification of a shuffled graph. But
// only a new edge can close a cycle, and some passes add none (-dce only
// erases, -topo only reorders). So the search's verdict is kept: a graph the
// search found free of cycles stores the context's dependency epoch
// (Context::dependencyEpoch), and while the epoch is the same, later
// verifications skip the search (Graph::isKnownAcyclic). Every change that can
// add a dependency moves the epoch: an operand or output slot linked to a value
// (Use::link, the one place where uses are made), a node inserted into a graph
// (created, or moved from another graph with its operands and subgraphs), a
// subgraph attached to an attribute or an attribute with subgraphs to a node
// (their captures become the holder's dependencies). Erasing nodes, values or
// uses, and reordering a list, cannot make a cycle: they leave it. The epoch is
// the context's, not the graph's: a change in a nested graph (a new capture)
// moves it for all. A verdict is stored only when the graph and the graphs
// nested in it had no error other than order violations: a broken graph's
// gathered dependencies need not be its own.
namespace detail {
struct AcyclicMark {
  static void set(const Graph &g) { g.acyclicAt_ = g.getContext().dependencyEpoch(); }
};
} // namespace detail

namespace {

// Note [Verifier lookahead]
// Checking a node's operands reads, per slot, the used value, the use
// before it in the value's list and the defining node: places anywhere in
// memory, so verifying a big graph mostly waits for memory, one miss at a
// time. The walks over a node list (the operand checks, the gathering of
// the cycle search) therefore run a NodeLookahead beside them: kFar nodes
// ahead the used values and list neighbours are prefetched, kNear nodes
// ahead (by when those values have arrived) the defining nodes. Hints
// only: what is checked and reported is unchanged. On the shuffled 10^6-
// node chain it took a fifth to a quarter off each verification; on a
// sorted graph, whose neighbours are already near, nothing measurable.
// kFar = 16, kNear = 8 (Note [Node lookahead] in NodeLookahead.h), with the
// nodes' lines and operand slots asked for before (Note [Operand slots
// ahead]).
auto operandLookahead(const Graph &g) {
  return NodeLookahead(
      g, 16, 8, [](const Node &n) { n.prefetchOperandValues(); },
      [](const Node &n) { n.prefetchOperandDefinitions(); }, /*slots=*/true);
}

class Verifier {
public:
  Verifier(const VerifyOptions &o) : opts_(o) {}

  /// For a nested graph verified alone: its enclosing graphs, whose values
  /// it may capture. They are not verified themselves.
  void setEnclosing(const Graph &g) {
    for (const Graph *p = g.parentGraph(); p; p = p->parentGraph()) outer_.insert(p);
  }

  void collect(const Graph &g) {
    graphs_.insert(&g);
    if (g.numNodesWithSubgraphs() == 0) return;
    for (const Node &n : g.nodes())
      if (n.hasSubgraphs())
        for (Graph *sg : n.subgraphs()) collect(*sg);
  }

  // A node lives in the node list of the graph it points to (or is that
  // graph's return node) from creation to deletion: no API leaves one
  // elsewhere. So a node is in the model iff its graph is, which costs a
  // pointer comparison (`likely` is the graph most uses are in) instead of a
  // lookup in a set of every node.
  bool inModel(const Node *n, const Graph *likely) const {
    const Graph *ng = n->getGraph();
    return ng && (ng == likely || graphs_.count(ng));
  }

  bool full() const { return diags_.size() >= opts_.maxDiagnostics; }
  /// Whether a problem of kind `k` found is to be worded (the list is not
  /// full); an error is counted either way (Note [Known acyclic graphs]).
  bool wants(Diagnostic::Kind k) {
    if (k != Diagnostic::Kind::OrderViolation) ++errors_;
    return !full();
  }

  void verifyGraph(const Graph &g) {
    // Definitions of this graph, in scope order, each checked where it is
    // met (no list of them is built: 10^6 results are 10^6 pointers).
    const Graph *parent = g.parentGraph();
    Context &ctx = g.getContext();
    auto checkDef = [&](const Value *v) {
      // A name defined once in the whole model (the context counts every
      // registration, keyed by the interned pointer: no string hashing) is
      // neither a duplicate nor a shadow; only shared names are looked up.
      if (ctx.nameDefinitionsInterned(v->name()) != 1) checkName(g, parent, v);
      // Note [Use lists from the operand side]: the list's length here, its
      // links from each slot in checkOperands.
      listedUses_ += v->numUses();
      if ((v->firstUse() == nullptr) != (v->numUses() == 0) &&
          wants(Diagnostic::Kind::UseListMismatch))
        report(Diagnostic::Kind::UseListMismatch,
               absl::StrCat(g.path(), ": the use list of \"", v->name().str(),
                            "\" disagrees with its use count"));
    };
    for (const Value *v : g.inputs()) checkDef(v);
    for (Value *v : g.initializers())
      if (!v->isGraphInput()) checkDef(v);
    for (Value *v : g.sparseInitializers())
      if (!v->isGraphInput()) checkDef(v);
    for (Value *v : g.initializers())
      if (v->isGraphInput() && v->getGraph() != &g) report(Diagnostic::Kind::BadParent,
          absl::StrCat(g.path(), ": initializer \"", v->name().str(), "\" is an input of another graph"));
    verified_.push_back(&g);

    if (g.returnNode()->getGraph() != &g)
      report(Diagnostic::Kind::BadParent, g.path() + ": return node's graph pointer is wrong");

    // Note [Known acyclic graphs]
    const bool knownAcyclic = g.isKnownAcyclic();
    const uint64_t errorsBefore = errors_;
    bool orderProblem = false;
    size_t holders = 0; // nodes with subgraphs
    auto ahead = operandLookahead(g);
    CycleDeps cycle; // Note [Cycle search in the operand walk]
    size_t pos = 0;
    // One walk over the nodes: each node's results (definitions), then its
    // operands; a node's fields are read while they are in cache.
    for (const Node &n : g.nodes()) {
      ahead.step();
      if (n.getGraph() != &g)
        report(Diagnostic::Kind::BadParent, nodePath(&n) + ": node's graph pointer is wrong");
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (Value *r = n.result(i)) {
          if (r->definingNode() != &n || r->resultIndex() != i)
            report(Diagnostic::Kind::BadParent,
                   absl::StrCat(nodePath(&n), ": result #", i, " does not point back to its node"));
          checkDef(r);
        }
      checkOperands(g, n, orderProblem);
      if (orderProblem && !cycle.active && !knownAcyclic) gatherDeps(g, pos, cycle);
      if (cycle.active) addDeps(g, n, cycle);
      ++pos;
      holders += n.hasSubgraphs();
      // Only subgraphs make an attribute's parent link matter (Graph::
      // parentNode goes through it); a node without them is not looked at
      // further, so plain attributes cost nothing here.
      if (!n.hasSubgraphs()) continue;
      unsigned held = 0;
      for (unsigned ai = 0; ai < n.numAttributes(); ++ai) {
        const Attribute &a = n.attribute(ai);
        if (a.getNode() != &n)
          report(Diagnostic::Kind::BadParent,
                 absl::StrCat(nodePath(&n), ": attribute \"", a.name(), "\" has a wrong parent"));
        for (unsigned gi = 0; gi < a.numGraphs(); ++gi) {
          const Graph *sg = a.graph(gi);
          if (sg->parentAttribute() != &a || sg->parentNode() != &n)
            report(Diagnostic::Kind::BadParent,
                   absl::StrCat(nodePath(&n), ": subgraph of attribute \"", a.name(),
                                "\" has a wrong parent"));
          verifyGraph(*sg);
        }
        held += a.numGraphs();
      }
      if (held != n.numSubgraphs())
        report(Diagnostic::Kind::BadParent,
               nodePath(&n) + ": the node's count of its subgraphs is wrong");
    }
    if (pos != g.numNodes())
      report(Diagnostic::Kind::BadParent,
             absl::StrCat(g.path(), ": the graph's count of its nodes (", g.numNodes(),
                          ") is not the length of its node list (", pos, ")"));
    if (holders != g.numNodesWithSubgraphs())
      report(Diagnostic::Kind::BadParent,
             g.path() + ": the graph's count of nodes with subgraphs is wrong");
    const Node *ret = g.returnNode();
    for (unsigned i = 0; i < ret->numOperands(); ++i) {
      Value *v = ret->operand(i);
      checkSlot(g, *ret, i);
      if (!v) {
        report(Diagnostic::Kind::BadOutput, absl::StrCat(g.path(), ": output #", i, " is empty"));
        continue;
      }
      checkVisible(g, ret, v, i, orderProblem);
    }
    // A cycle shows up as an order violation: among this graph's own nodes,
    // or as a capture (in a nested graph) of a value defined here later.
    if ((orderProblem || cycleSuspects_.count(&g)) && !knownAcyclic) {
      if (!cycle.active) gatherDeps(g, g.numNodes(), cycle);
      // The search's verdict holds until a dependency is added, unless the
      // graph (or one nested in it) is broken so that the dependencies
      // gathered may not be the graph's.
      if (findCycle(g, cycle) && errors_ == errorsBefore) detail::AcyclicMark::set(g);
    }
  }

  void checkName(const Graph &g, const Graph *parent, const Value *v) {
      Value *local = g.lookupLocal(v->name());
      if (local != v)
        report(Diagnostic::Kind::DuplicateName,
               absl::StrCat(g.path(), ": \"", v->name().str(), "\" is defined more than once"));
      if (parent)
        if (Value *outer = parent->lookup(v->name()))
          report(Diagnostic::Kind::Shadowing,
                 absl::StrCat(g.path(), ": \"", v->name().str(),
                              "\" shadows the value of the same name in ",
                              outer->getGraph()->path()));
  }

  void checkOperands(const Graph &g, const Node &n, bool &orderProblem) {
    for (unsigned i = 0; i < n.numOperands(); ++i) {
      checkSlot(g, n, i);
      if (Value *v = n.operand(i)) checkVisible(g, &n, v, i, orderProblem);
    }
  }

  // Note [Use lists from the operand side]
  // Walking each value's use list visits every user node a second time, at
  // random places in memory: that cost about as much as the rest of the
  // verifier. Instead each slot checks, in O(1), that it is linked where it
  // claims (Use::linksConsistent), and each slot is counted against the
  // use counts the values keep (Value::numUses). Every slot of the model
  // is then in its value's list, and the lists hold nothing else exactly
  // when the counts add up; a use that is not a slot of the model (the uses
  // of a detached subgraph, a stray Use) makes them differ, and only then
  // are the lists walked (findStrayUses) to name the value.
  void checkSlot(const Graph &g, const Node &n, unsigned i) {
    const Use &u = n.operandUses()[i];
    if (Value *v = u.get()) {
      // Only uses of the values of the graphs verified count against their
      // lists (whose lengths are summed): not captures from enclosing
      // graphs verified alone, nor values outside the model (reported by
      // checkVisible).
      const Graph *dg = v->getGraph();
      if (dg == &g || graphs_.count(dg)) ++operandSlots_;
    }
    if ((u.getOwner() != &n || !u.linksConsistent()) && wants(Diagnostic::Kind::UseListMismatch))
      report(Diagnostic::Kind::UseListMismatch,
             n.isReturn() ? absl::StrCat(g.path(), ": the use-list links of output #", i,
                                         " are broken")
                          : absl::StrCat(nodePath(&n), ": the use-list links of input #", i,
                                         " are broken"));
  }

  void checkVisible(const Graph &g, const Node *user, Value *v, unsigned idx, bool &orderProblem) {
    Node *def = v->definingNode();
    const Graph *dg = v->getGraph();
    // The common case, a value of this very graph: visible (this graph is in
    // the model, so are its nodes); only its order is checked.
    // Without checkOrder an order violation is not reported, but it is
    // still noted: only the cycle search, which it starts, tells an unsorted
    // graph from a cyclic one.
    if (dg == &g) {
      if (!def || user->isReturn()) return;
      if (def == user || !def->isBefore(user)) {
        orderProblem = true;
        if (opts_.checkOrder && !full())
          report(Diagnostic::Kind::OrderViolation,
                 absl::StrCat(locatedNodePath(user), ": input #", idx, " \"", v->name().str(),
                              "\" is used before its definition at ", nodePath(def)));
      }
      return;
    }
    auto where = [&]() {
      return user->isReturn() ? absl::StrCat(g.path(), ": output #", idx, " \"", v->name().str(), "\"")
                              : absl::StrCat(locatedNodePath(user), ": input #", idx, " \"",
                                             v->name().str(), "\"");
    };
    // A graph output that is not visible is a bad output.
    const Diagnostic::Kind notVisible =
        user->isReturn() ? Diagnostic::Kind::BadOutput : Diagnostic::Kind::NotVisible;
    // Values of the graphs enclosing a nested graph verified alone are
    // captures: visible, subject to the order check below.
    const bool enclosing = outer_.count(dg);
    if (!enclosing && !graphs_.count(dg)) {
      if (wants(notVisible))
        report(notVisible, where() + (def ? " is defined by a node that is not in the model"
                                          : " is defined in a graph that is not in the model"));
      return;
    }
    if (!g.isNestedIn(dg)) {
      if (wants(notVisible))
        report(notVisible, absl::StrCat(where(), " is defined in ", dg->path(),
                                        ", which does not enclose this use"));
      return;
    }
    if (!def) return;
    Node *anc = user->isReturn() ? g.parentNode()->ancestorIn(dg) : user->ancestorIn(dg);
    if (anc && (def == anc || !def->isBefore(anc))) {
      cycleSuspects_.insert(dg);
      if (opts_.checkOrder && !full())
        report(Diagnostic::Kind::OrderViolation,
               absl::StrCat(where(), " is captured before its definition at ", nodePath(def),
                            " (the capturing node is ", nodePath(anc), ")"));
    }
  }

  // Walks the use list of `v` (only when the counts disagree).
  void checkUses(const Value *v) {
    const Graph *vg = v->getGraph();
    for (Use &u : v->uses()) {
      Node *owner = u.getOwner();
      if (!owner || !inModel(owner, vg)) {
        if (!full())
          report(Diagnostic::Kind::UseListMismatch,
                 absl::StrCat("value \"", v->name().str(), "\" has a use by a node not in the model"));
        continue;
      }
      unsigned no = u.getOperandNo();
      if ((no >= owner->numOperands() || &owner->operandUses()[no] != &u || u.get() != v) &&
          !full())
        report(Diagnostic::Kind::UseListMismatch,
               absl::StrCat(nodePath(owner), ": use list of \"", v->name().str(),
                            "\" disagrees with the operands"));
    }
  }

  // Appends to `out` the nodes of `g` that `n` depends on: through its
  // operands and the captures of its subgraphs (values defined inside them
  // are not deps; a use of its own result is). Iterative over nesting; the
  // work list is reused, so a node costs no allocation, and a node without
  // subgraphs (almost every node) does not use it.
  void dependencies(const Graph &g, const Node *n, std::vector<const Node *> &out) {
    auto operandDeps = [&](const Node *m) {
      for (const Use &u : m->operandUses())
        if (Value *v = u.get())
          if (Node *d = v->definingNode()) {
            Node *a = d->getGraph() == &g ? d : d->ancestorIn(&g);
            if (a && (a != n || d == n)) out.push_back(a);
          }
    };
    if (!n->hasSubgraphs()) {
      operandDeps(n);
      return;
    }
    std::vector<const Node *> &work = depWork_;
    work.clear();
    work.push_back(n);
    while (!work.empty()) {
      const Node *m = work.back();
      work.pop_back();
      operandDeps(m);
      if (!m->hasSubgraphs()) continue;
      // Pushed in reverse: the deps come out in pre-order, node list order.
      std::vector<Graph *> subs = m->subgraphs();
      for (auto sg = subs.rbegin(); sg != subs.rend(); ++sg) {
        work.push_back((*sg)->returnNode());
        for (auto k = (*sg)->nodes().rbegin(); k != (*sg)->nodes().rend(); ++k) work.push_back(&*k);
      }
    }
  }

  // Note [Cycle search in the operand walk]
  // The cycle search needs each node's dependencies as positions: the used
  // values' defining nodes (or, for captures, their ancestors in the
  // graph). Gathering them is a walk over the node list reading every used
  // value and its definition: what the operand checks have just read. So
  // once the operand walk meets the first order violation (only then can
  // there be a cycle among the graph's own nodes), it gathers the nodes
  // before that point and from then on each node's dependencies right after
  // its checks, while they are in cache; the search then runs on the flat
  // arrays alone. A sorted graph gathers nothing; a shuffled one meets its
  // first violation within a few nodes, so the graph is walked once instead
  // of twice. (A cycle reported only by a capture in a nested graph is
  // searched with a separate gathering walk.) The definitions (each node's
  // results) are checked in the same walk, for the same reason: on the
  // shuffled 10^6-node chain after -topo, where list order is not memory
  // order, one walk instead of two halved the verification (0.40 -> 0.21 s
  // best of 7, bench/README.md).
  //
  // Note [Packed cycle search]
  // On an unsorted graph the depth-first search is itself a chase: on a
  // shuffled chain each step's node is where the step before found it, at
  // a random place in the arrays. With the dependencies in a flat array
  // behind an array of offsets, and the search state in a third, a step
  // waited on three misses one after the other (offset, dependency,
  // state). So each node's first dependency and its state share one 8-byte
  // record: a step is one miss. The search alone, in the first
  // verification of the shuffled 10^6-node chain as loaded, went from
  // 0.17-0.27 s to 0.09-0.14 s (bench/README.md). The other dependencies of
  // a node that has more than one are in `more`, each node's run ended by
  // kEnd, and the record holds where its run starts. The state is kept in
  // the first dependency's slot (kOnStack, kDone): the search reads that
  // dependency into its frame before it marks the node.
  static constexpr uint32_t kEnd = ~uint32_t(0);     // end of a run; no dependency
  static constexpr uint32_t kOnStack = kEnd - 1;     // state: on the search's stack
  static constexpr uint32_t kDone = kEnd - 2;        // state: searched, no cycle
  struct DepRecord {
    uint32_t first; // first dependency's position, kEnd, or a state
    uint32_t more;  // where the others start in CycleDeps::more, or kEnd
  };
  struct CycleDeps {
    bool active = false;
    bool tooBig = false; // positions or runs past what 32 bits hold
    std::vector<DepRecord> records;
    std::vector<uint32_t> more;
    std::vector<const Node *> tmp;
  };

  // Starts `c` with the first `count` nodes of `g`.
  void gatherDeps(const Graph &g, size_t count, CycleDeps &c) {
    c.active = true;
    const size_t n = g.numNodes();
    c.records.reserve(n);
    if (count == 0) return;
    auto ahead = operandLookahead(g);
    size_t k = 0;
    for (const Node &node : g.nodes()) {
      if (k++ == count) break;
      ahead.step();
      addDeps(g, node, c);
    }
  }

  void addDeps(const Graph &g, const Node &node, CycleDeps &c) {
    c.tmp.clear();
    dependencies(g, &node, c.tmp);
    // A position that would read as a state or an end (only a stale one,
    // of a node off the list, can be that big) becomes one past any node.
    auto pos = [](const Node *d) { return std::min<uint32_t>(d->indexInGraph(), kDone - 1); };
    DepRecord r{kEnd, kEnd};
    if (!c.tmp.empty()) r.first = pos(c.tmp[0]);
    if (c.tmp.size() > 1) {
      if (c.more.size() + c.tmp.size() >= kDone) c.tooBig = true;
      r.more = (uint32_t)c.more.size();
      for (size_t i = 1; i < c.tmp.size(); ++i) c.more.push_back(pos(c.tmp[i]));
      c.more.push_back(kEnd);
    }
    c.records.push_back(r);
  }

  // Reports the nodes of one dependency cycle in `g`, if there is one, from
  // the dependencies gathered in `c` (every node of `g`, in list order).
  // True when it found none (and reported nothing).
  // The iterative depth-first search (graphs may hold millions of nodes)
  // runs on those flat arrays alone (Note [Packed cycle search]), without
  // touching the nodes again and without an allocation per node.
  bool findCycle(const Graph &g, CycleDeps &c) {
    // Every node on the list was gathered. A dependency on a node that
    // points to this graph but is not on its list (an IR broken behind the
    // API, whose count check reports it) has no position here: skipped.
    const size_t n = c.records.size();
    if (c.tooBig || n >= kDone) {
      report(Diagnostic::Kind::Other,
             absl::StrCat(g.path(), ": too many nodes or dependencies (", n,
                          " nodes) to search for dependency cycles"));
      return false;
    }
    std::vector<DepRecord> &rec = c.records;
    const std::vector<uint32_t> &more = c.more;
    struct Frame {
      uint32_t node, next; // next: position in `more` of the next dependency
    };
    std::vector<Frame> stack;
    // The node at position p (a report names a few nodes: a walk each).
    auto at = [&](uint32_t p) -> const Node * {
      auto it = g.nodes().begin();
      std::advance(it, p);
      return &*it;
    };
    auto cycleThrough = [&](uint32_t p) {
      // Name at most kShown nodes: a path costs O(position), and a cycle
      // may run through a whole graph.
      constexpr size_t kShown = 16;
      std::string msg = g.path() + ": dependency cycle through";
      auto it = std::find_if(stack.begin(), stack.end(), [&](const Frame &fr) { return fr.node == p; });
      size_t len = (size_t)(stack.end() - it);
      for (size_t k = 0; it != stack.end() && k < kShown; ++it, ++k) msg += "\n  " + locatedNodePath(at(it->node));
      if (len > kShown) absl::StrAppend(&msg, "\n  ... and ", len - kShown, " more nodes");
      report(Diagnostic::Kind::Cycle, msg);
    };
    // Visits `p` from a node that depends on it (`from`, or kEnd for a
    // root): pushes it and goes down its first dependencies as far as they
    // lead to unvisited nodes. False when a cycle was reported.
    auto descend = [&](uint32_t p, uint32_t from) {
      while (p < n) {
        uint32_t first = rec[p].first;
        if (first == kDone) return true;
        if (first == kOnStack) {
          if (p == from) report(Diagnostic::Kind::Cycle, locatedNodePath(at(p)) + ": depends on its own result");
          else cycleThrough(p);
          return false;
        }
        rec[p].first = kOnStack;
        stack.push_back({p, rec[p].more});
        from = p;
        p = first;
      }
      return true;
    };
    for (uint32_t start = 0; start < n; ++start) {
      if (rec[start].first == kDone) continue;
      if (!descend(start, kEnd)) return false;
      while (!stack.empty()) {
        Frame &f = stack.back();
        uint32_t p = f.next == kEnd ? kEnd : more[f.next];
        if (p == kEnd) {
          rec[f.node].first = kDone;
          stack.pop_back();
          continue;
        }
        ++f.next;
        if (!descend(p, f.node)) return false;
      }
    }
    return true;
  }

  void finish() {
    if (operandSlots_ == listedUses_) return;
    size_t before = diags_.size();
    findStrayUses();
    if (diags_.size() == before)
      report(Diagnostic::Kind::UseListMismatch,
             absl::StrCat("operand slots (", operandSlots_, ") and use-list entries (", listedUses_,
                          ") disagree"));
  }

  // The slow path of Note [Use lists from the operand side]: every value's
  // list, walked, names the values with uses outside the model.
  void findStrayUses() {
    for (const Graph *g : verified_) {
      for (const Value *v : g->inputs()) checkUses(v);
      for (const Value *v : g->initializers())
        if (!v->isGraphInput()) checkUses(v);
      for (const Value *v : g->sparseInitializers())
        if (!v->isGraphInput()) checkUses(v);
      for (const Node &n : g->nodes())
        for (unsigned i = 0; i < n.numResults(); ++i)
          if (const Value *r = n.result(i)) checkUses(r);
    }
  }

  /// Records a problem. Errors are counted here, and by wants() for the
  /// callers that word a message only when the list is not full: only
  /// whether the count moved matters.
  void report(Diagnostic::Kind k, std::string msg) {
    if (k != Diagnostic::Kind::OrderViolation) ++errors_;
    if (diags_.size() < opts_.maxDiagnostics) diags_.push_back({k, std::move(msg)});
  }

  std::vector<Diagnostic> take() { return std::move(diags_); }

private:
  const VerifyOptions &opts_;
  llvm::DenseSet<const Graph *> graphs_;
  llvm::DenseSet<const Graph *> outer_;         // see setEnclosing
  llvm::DenseSet<const Graph *> cycleSuspects_; // captured before defined here
  std::vector<Diagnostic> diags_;
  uint64_t operandSlots_ = 0, listedUses_ = 0;
  uint64_t errors_ = 0; // problems other than order violations, see wants()
  std::vector<const Graph *> verified_; // in verification order
  std::vector<const Node *> depWork_; // see dependencies
};

absl::Status toStatus(const std::vector<Diagnostic> &d) {
  if (d.empty()) return absl::OkStatus();
  std::string msg;
  for (const Diagnostic &x : d) {
    if (!msg.empty()) msg += "\n";
    absl::StrAppend(&msg, x.message, " [", diagnosticKindName(x.kind), "]");
  }
  return absl::InvalidArgumentError(msg);
}

} // namespace

std::vector<Diagnostic> verifyAll(const Graph &g, const VerifyOptions &opts) {
  Verifier v(opts);
  v.setEnclosing(g);
  v.collect(g);
  v.verifyGraph(g);
  // Captures of outer values are left out of the counts (checkSlot), so they
  // are exact for a nested graph verified alone too.
  v.finish();
  return v.take();
}

namespace {

/// Every node of `g` and its subgraphs that calls a function of `byKey`.
void callsIn(const Graph &g, const std::map<std::string, const Function *> &byKey,
             std::vector<std::pair<const Node *, const Function *>> &out) {
  std::vector<const Graph *> work = {&g};
  while (!work.empty()) {
    const Graph *cur = work.back();
    work.pop_back();
    for (const Node &n : cur->nodes()) {
      auto it = byKey.find(absl::StrCat(n.domain().str(), "\n", n.opType().str(), "\n",
                                        n.overload().str()));
      if (it != byKey.end()) out.emplace_back(&n, it->second);
      for (Graph *sg : n.subgraphs()) work.push_back(sg);
    }
  }
}

/// Note [Recursive functions]
///   ONNX forbids a model-local function that calls itself, directly or
///   through others: inlining would not end. Found at load, by an iterative
///   depth-first search over the call graph (a chain of 10^5 functions must
///   not overflow the stack); the first cycle found is reported at the call
///   that closes it, with the whole chain.
void checkRecursion(const Model &m, std::vector<Diagnostic> &out) {
  std::map<std::string, const Function *> byKey;
  for (auto &f : m.functions())
    byKey.emplace(absl::StrCat(f->domain, "\n", f->name, "\n", f->overload), f.get());
  if (byKey.empty()) return;
  std::map<const Function *, std::vector<std::pair<const Node *, const Function *>>> calls;
  std::map<const Function *, int> state; // 1: on the stack, 2: done
  for (auto &root : m.functions()) {
    if (state[root.get()]) continue;
    std::vector<std::pair<const Function *, size_t>> stack = {{root.get(), 0}};
    state[root.get()] = 1;
    while (!stack.empty()) {
      const Function *f = stack.back().first;
      auto it = calls.find(f);
      if (it == calls.end()) {
        it = calls.emplace(f, std::vector<std::pair<const Node *, const Function *>>()).first;
        callsIn(f->body(), byKey, it->second);
      }
      size_t &next = stack.back().second;
      if (next == it->second.size()) {
        state[f] = 2;
        stack.pop_back();
        continue;
      }
      auto [call, callee] = it->second[next++];
      if (state[callee] == 2) continue;
      if (state[callee] == 0) {
        state[callee] = 1;
        stack.emplace_back(callee, 0);
        continue;
      }
      std::string chain;
      bool in = false;
      for (auto &e : stack) {
        in |= e.first == callee;
        if (in) absl::StrAppend(&chain, e.first->qualifiedName(), " -> ");
      }
      chain += callee->qualifiedName();
      out.push_back({Diagnostic::Kind::Recursion,
                     absl::StrCat("function \"", f->qualifiedName(), "\", node ",
                                  locatedNodePath(call), ": recursive call (", chain,
                                  "); ONNX functions may not call themselves")});
      return;
    }
  }
}

/// Note [Nesting limits] (Limits.h) for what passes and API users build:
/// a type nested past kMaxTypeNesting, or a graph past kMaxGraphNesting,
/// could be written but not read back.
void checkTypeNesting(const Model &m, std::vector<Diagnostic> &out) {
  // Every type of the model is uniqued in its context, which knows the
  // deepest one made: types are looked at only if one is past the limit.
  const bool typesTooDeep = m.getContext().maxTypeNesting() > kMaxTypeNesting;
  auto check = [&](const Type *t, auto &&where) {
    // Tensor types (no inner type) are the common case: no lookup.
    if (!t || t->nestingDepth() <= kMaxTypeNesting || out.size() > 100) return;
    out.push_back({Diagnostic::Kind::Other,
                   absl::StrCat(where(), ": its type nests ", t->nestingDepth(),
                                " levels deep, past the limit of ", kMaxTypeNesting,
                                " (onnxir::kMaxTypeNesting)")});
  };
  bool graphTooDeep = false;
  const_cast<Model &>(m).walkGraphs([&](Graph *g) {
    // Inlining a function with nested graphs into a deep subgraph can go
    // past the limit the readers enforce; report the first such graph.
    if (!graphTooDeep && g->depth() > kMaxGraphNesting) {
      graphTooDeep = true;
      out.push_back({Diagnostic::Kind::Other,
                     absl::StrCat(g->path(), ": subgraphs nest deeper than ", kMaxGraphNesting,
                                  " levels (the limit of onnxir::kMaxGraphNesting)")});
    }
    if (!typesTooDeep) return;
    auto checkValue = [&](const Value *v) {
      check(v->type(), [&] { return absl::StrCat(g->path(), ": value \"", v->name().str(), "\""); });
    };
    for (Value *v : g->definitions()) checkValue(v);
    for (const Node &n : g->nodes())
      for (unsigned i = 0; i < n.numAttributes(); ++i)
        for (const Type *t : n.attribute(i).types)
          check(t, [&] {
            return absl::StrCat(locatedNodePath(&n), ": attribute \"", n.attribute(i).name(), "\"");
          });
  });
}

} // namespace

namespace {
std::atomic<SchemaCheckFn> gSchemaChecker{nullptr};
} // namespace

void setSchemaChecker(SchemaCheckFn check) { gSchemaChecker.store(check); }

std::vector<Diagnostic> verifyAll(const Model &m, const VerifyOptions &opts) {
  std::vector<Diagnostic> all = verifyAll(m.graph(), opts);
  for (auto &f : m.functions()) {
    auto d = verifyAll(f->body(), opts);
    all.insert(all.end(), d.begin(), d.end());
  }
  checkRecursion(m, all);
  checkTypeNesting(m, all);

  if (opts.schema) {
    if (SchemaCheckFn check = gSchemaChecker.load()) {
      auto d = check(m, opts);
      all.insert(all.end(), d.begin(), d.end());
    } else {
      Diagnostic d;
      d.kind = Diagnostic::Kind::Schema;
      d.severe = true;
      d.message = "operator schemas are not linked: link onnxir::Ops (Ops/SchemaVerifier.h) to "
                  "verify with schema = true";
      all.push_back(std::move(d));
    }
  }
  return all;
}

absl::Status verify(const Model &m, const VerifyOptions &opts) { return toStatus(verifyAll(m, opts)); }
absl::Status verify(const Graph &g, const VerifyOptions &opts) { return toStatus(verifyAll(g, opts)); }

} // namespace onnxir
