//===- TestUtil.h - Helpers shared by the IR unit tests -------------------===//
//
// Independent re-checks of the IR invariants, written against the public API
// only (no friend access, no `#define private public`):
//
//   EXPECT_IR_OK(model_or_graph)   every operand slot is on its value's use
//                                  list and every use-list entry is an operand
//                                  slot of a node of the tree; each definition
//                                  is what its graph's scope table returns.
//                                  Call it after every mutation step.
//   kindsOf / hasDiag              what the Verifier said, for asserting one
//                                  diagnostic kind per test.
//   addSubgraph                    gives a node a GRAPH attribute holding a
//                                  fresh empty graph, returns the graph.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_IR_TESTUTIL_H
#define ONNXIR_TEST_UNIT_IR_TESTUTIL_H

#include "onnxir/IR.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace onnxir {
namespace test {

/// The values a graph defines: inputs, constant (dense and sparse)
/// initializers, node results. Not those of nested graphs.
inline std::vector<Value *> definitionsOf(const Graph &g) {
  std::vector<Value *> defs(g.inputs().begin(), g.inputs().end());
  for (Value *v : g.initializers())
    if (!v->isGraphInput()) defs.push_back(v);
  for (Value *v : g.sparseInitializers())
    if (!v->isGraphInput()) defs.push_back(v);
  for (const Node &n : g.nodes())
    for (Value *r : n.results())
      if (r) defs.push_back(r);
  return defs;
}

/// Every graph of the tree rooted at `root`, pre-order.
inline std::vector<const Graph *> graphsOf(const Graph &root) {
  std::vector<const Graph *> out;
  std::function<void(const Graph &)> rec = [&](const Graph &g) {
    out.push_back(&g);
    for (const Node &n : g.nodes())
      for (Graph *sg : n.subgraphs()) rec(*sg);
  };
  rec(root);
  return out;
}

/// The independent invariant checker (see the file comment).
inline ::testing::AssertionResult irConsistent(const Graph &root) {
  std::set<const Node *> nodes;
  std::vector<const Graph *> graphs = graphsOf(root);
  for (const Graph *g : graphs) {
    nodes.insert(g->returnNode());
    for (const Node &n : g->nodes()) nodes.insert(&n);
  }
  std::ostringstream err;
  size_t slots = 0, listed = 0;
  for (const Graph *g : graphs) {
    if (g->returnNode()->getGraph() != g || !g->returnNode()->isReturn())
      err << g->path() << ": return node does not point back\n";
    auto checkNode = [&](const Node &n) {
      if (n.getGraph() != g) err << nodePath(&n) << ": wrong graph pointer\n";
      for (unsigned i = 0; i < n.numOperands(); ++i) {
        const Use &u = n.operandUses()[i];
        if (u.getOwner() != &n) err << nodePath(&n) << ": operand #" << i << " has a wrong owner\n";
        if (u.getOperandNo() != i)
          err << nodePath(&n) << ": operand #" << i << " says it is #" << u.getOperandNo() << "\n";
        Value *v = u.get();
        if (!v) continue;
        if (std::find(graphs.begin(), graphs.end(), v->getGraph()) != graphs.end()) ++slots;
        bool found = false;
        for (Use &x : v->uses())
          if (&x == &u) found = true;
        if (!found)
          err << nodePath(&n) << ": operand #" << i << " \"" << v->name().str()
              << "\" is not on its value's use list\n";
      }
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (Value *r = n.result(i))
          if (r->definingNode() != &n || r->resultIndex() != i || r->getGraph() != g)
            err << nodePath(&n) << ": result #" << i << " does not point back\n";
      for (unsigned ai = 0; ai < n.numAttributes(); ++ai) {
        const Attribute &a = n.attribute(ai);
        if (a.getNode() != &n) err << nodePath(&n) << ": attribute with a wrong node\n";
        for (unsigned gi = 0; gi < a.numGraphs(); ++gi)
          if (a.graph(gi)->parentNode() != &n || a.graph(gi)->parentAttribute() != &a ||
              a.graph(gi)->parentGraph() != g)
            err << nodePath(&n) << ": subgraph with a wrong parent\n";
      }
    };
    for (const Node &n : g->nodes()) checkNode(n);
    checkNode(*g->returnNode());
    for (Value *v : definitionsOf(*g)) {
      if (v->getGraph() != g) err << g->path() << ": \"" << v->name().str() << "\" wrong graph\n";
      if (g->lookupLocal(v->name()) != v)
        err << g->path() << ": scope table does not map \"" << v->name().str() << "\" to it\n";
      if (g->getContext().nameDefinitions(v->name()) == 0)
        err << g->path() << ": \"" << v->name().str() << "\" missing from the name registry\n";
      for (Use &u : v->uses()) {
        ++listed;
        const Node *owner = u.getOwner();
        if (!owner || !nodes.count(owner)) {
          err << "\"" << v->name().str() << "\" has a use by a node outside the tree\n";
          continue;
        }
        unsigned no = u.getOperandNo();
        if (u.get() != v || no >= owner->numOperands() || &owner->operandUses()[no] != &u)
          err << "\"" << v->name().str() << "\" has a use-list entry that is no operand slot\n";
      }
    }
  }
  // Slots that capture values defined outside the tree are not counted.
  if (slots != listed)
    err << "operand slots (" << slots << ") != use-list entries (" << listed << ")\n";
  std::string s = err.str();
  if (s.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s;
}

inline ::testing::AssertionResult irConsistent(const Model &m) {
  auto r = irConsistent(m.graph());
  if (!r) return r;
  for (auto &f : m.functions())
    if (auto rf = irConsistent(f->body()); !rf) return rf;
  return ::testing::AssertionSuccess();
}

/// The checker, then the Verifier (which must agree that all is well).
template <typename T> ::testing::AssertionResult irOk(const T &x) {
  auto r = irConsistent(x);
  if (!r) return r;
  absl::Status s = verify(x);
  if (!s.ok()) return ::testing::AssertionFailure() << s.message();
  return ::testing::AssertionSuccess();
}

#define EXPECT_IR_OK(x) EXPECT_TRUE(::onnxir::test::irOk(x))
#define ASSERT_IR_OK(x) ASSERT_TRUE(::onnxir::test::irOk(x))

//===----------------------------------------------------------------------===//
// Verifier helpers
//===----------------------------------------------------------------------===//

inline std::string describe(const std::vector<Diagnostic> &ds) {
  std::string s;
  for (const Diagnostic &d : ds) s += std::string(diagnosticKindName(d.kind)) + ": " + d.message + "\n";
  return s;
}

inline std::vector<Diagnostic::Kind> kindsOf(const std::vector<Diagnostic> &ds) {
  std::vector<Diagnostic::Kind> k;
  for (const Diagnostic &d : ds) k.push_back(d.kind);
  return k;
}

/// The first diagnostic of kind `k`, or null.
inline const Diagnostic *findDiag(const std::vector<Diagnostic> &ds, Diagnostic::Kind k) {
  for (const Diagnostic &d : ds)
    if (d.kind == k) return &d;
  return nullptr;
}

/// True if some diagnostic has kind `k` and contains `text`.
inline bool hasDiag(const std::vector<Diagnostic> &ds, Diagnostic::Kind k,
                    const std::string &text = "") {
  for (const Diagnostic &d : ds)
    if (d.kind == k && d.message.find(text) != std::string::npos) return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

/// Adds a GRAPH attribute `attr` holding a fresh empty graph named `name`
/// to `n`; returns the graph.
inline Graph *addSubgraph(Node *n, llvm::StringRef attr, llvm::StringRef name = "") {
  auto g = std::make_unique<Graph>(n->getGraph()->getContext());
  g->name = name.str();
  Attribute &a = n->setAttr(graphAttr(attr, std::move(g)));
  return a.graph(0);
}

/// A model whose main graph is named "main" with float inputs x and y.
struct BasicModel {
  Model m;
  Graph &g = m.graph();
  Context &ctx = m.getContext();
  Value *x = nullptr, *y = nullptr;
  BasicModel() {
    g.name = "main";
    const Type *t = ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2});
    x = *g.addInput("x", t);
    y = *g.addInput("y", t);
  }
};

/// Names of a graph's nodes' first results, in list order.
inline std::vector<std::string> resultNames(const Graph &g) {
  std::vector<std::string> out;
  for (const Node &n : g.nodes())
    out.push_back(n.numResults() && n.result(0) ? n.result(0)->name().str() : "");
  return out;
}

/// The users of `v` (owners of its uses), sorted by address for comparisons.
inline std::vector<Node *> usersOf(const Value *v) {
  std::vector<Node *> out;
  for (Use &u : v->uses()) out.push_back(u.getOwner());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace test
} // namespace onnxir


//===----------------------------------------------------------------------===//
// onnxir::testutil: the helper names UseListTest.cpp and ScopeTest.cpp use.
// (Two sessions wrote this header at the same time; this block restores the
// API those files expect on top of the checker above.)
//===----------------------------------------------------------------------===//
namespace onnxir {
namespace testutil {

/// The value of `s`; fails the test and aborts it if `s` is an error.
template <typename T> T unwrap(absl::StatusOr<T> s) {
  if (!s.ok()) {
    ADD_FAILURE() << "unexpected error: " << s.status();
    std::abort();
  }
  return std::move(*s);
}

/// tensor(float) with all dims known.
inline const Type *floatTy(Context &ctx, std::vector<int64_t> dims) {
  return ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>(dims));
}

inline ::testing::AssertionResult checkUseLists(const Model &m) { return test::irConsistent(m); }
inline ::testing::AssertionResult checkUseLists(const Graph &g) { return test::irConsistent(g); }

using test::addSubgraph;

inline std::vector<Diagnostic> diagsOfKind(const std::vector<Diagnostic> &ds, Diagnostic::Kind k) {
  std::vector<Diagnostic> out;
  for (const Diagnostic &d : ds)
    if (d.kind == k) out.push_back(d);
  return out;
}

inline std::string dump(const std::vector<Diagnostic> &ds) { return test::describe(ds); }

} // namespace testutil
} // namespace onnxir

#endif // ONNXIR_TEST_UNIT_IR_TESTUTIL_H
