//===- PatternRewrite.cpp - Rewrite patterns and the greedy driver --------===//
//
// The driver keeps, per graph, a FIFO worklist of nodes and the set of nodes
// in it (only live nodes are ever in the set: the rewriter removes a node
// from it before erasing it, so a stale pointer left in the queue is
// skipped). Every node is visited once per scan; a change requeues the
// nodes it may have enabled. Scans repeat until one applies nothing.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/PatternRewrite.h"

#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Opset.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Patterns and sets
//===----------------------------------------------------------------------===//

RewritePattern::~RewritePattern() = default;

bool RewritePattern::matchAndRewrite(Node &root, PatternRewriter &rw) const {
  if (!match(root, rw)) return false;
  rewrite(root, rw);
  return true;
}

bool RewritePattern::match(Node &, PatternRewriter &) const {
  assert(false && "a pattern overrides matchAndRewrite, or match and rewrite");
  return false;
}

void RewritePattern::rewrite(Node &, PatternRewriter &) const {
  assert(false && "a pattern overrides matchAndRewrite, or match and rewrite");
}

namespace {
class FunctionPattern : public RewritePattern {
public:
  FunctionPattern(std::string name, std::string op, PatternSet::Fn fn, unsigned benefit,
                  std::vector<std::string> makes)
      : RewritePattern(std::move(name), std::move(op), benefit, "", std::move(makes)),
        fn_(std::move(fn)) {}
  bool matchAndRewrite(Node &root, PatternRewriter &rw) const override { return fn_(root, rw); }

private:
  PatternSet::Fn fn_;
};
} // namespace

void PatternSet::add(std::unique_ptr<RewritePattern> p) {
  const RewritePattern *raw = p.get();
  patterns_.push_back(std::move(p));
  auto &list = raw->rootOp().empty() ? anyOp_ : byOp_[raw->rootOp()];
  list.push_back(raw);
  // Highest benefit first; equal benefits keep the order of addition.
  std::stable_sort(list.begin(), list.end(),
                   [](auto *a, auto *b) { return a->benefit() > b->benefit(); });
}

void PatternSet::add(std::string name, std::string rootOp, Fn fn, unsigned benefit,
                     std::vector<std::string> makes) {
  add(std::make_unique<FunctionPattern>(std::move(name), std::move(rootOp), std::move(fn),
                                        benefit, std::move(makes)));
}

absl::Status PatternSet::disable(llvm::StringRef names) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  names.split(parts, ',', -1, false);
  for (llvm::StringRef name : parts) {
    name = name.trim();
    bool found = false;
    for (auto &p : patterns_)
      if (p->name() == name) {
        disabled_.insert(p.get());
        found = true;
      }
    if (!found) {
      std::string known;
      for (auto &p : patterns_) known += (known.empty() ? "" : ", ") + p->name().str();
      return absl::InvalidArgumentError("unknown pattern '" + name.str() + "' (patterns: " +
                                        known + ")");
    }
  }
  return absl::OkStatus();
}

static bool inDomain(const Node &n, llvm::StringRef domain) {
  if (domain.empty() || domain == "ai.onnx") return n.domain().empty() || n.domain() == "ai.onnx";
  return n.domain() == domain;
}

llvm::ArrayRef<const RewritePattern *> PatternSet::patternsFor(const Node &n) const {
  auto it = byOp_.find(n.opType());
  bool typed = it != byOp_.end();
  if (anyOp_.empty() && !typed) return {};
  scratch_.clear();
  if (typed)
    for (const RewritePattern *p : it->second)
      if (inDomain(n, p->rootDomain()) && !disabled_.count(p)) scratch_.push_back(p);
  for (const RewritePattern *p : anyOp_)
    if (inDomain(n, p->rootDomain()) && !disabled_.count(p)) scratch_.push_back(p);
  if (typed && !anyOp_.empty())
    std::stable_sort(scratch_.begin(), scratch_.end(),
                     [](auto *a, auto *b) { return a->benefit() > b->benefit(); });
  return scratch_;
}

//===----------------------------------------------------------------------===//
// PatternRewriter
//===----------------------------------------------------------------------===//

int64_t PatternRewriter::opsetVersion(llvm::StringRef domain) const {
  if (graph().parentModel() || graph().parentFunction()) return opsetInForce(graph(), domain);
  return model_.opsetVersion(domain);
}

bool PatternRewriter::hasSingleLocalUse(const Value *v) {
  if (!v || !v->hasOneUse()) return false;
  Node *user = v->firstUse()->getOwner();
  return !user->isReturn() && user->getGraph() == v->getGraph();
}

Node *PatternRewriter::singleUseProducer(const Node &n, unsigned i, llvm::StringRef op) const {
  if (i >= n.numOperands()) return nullptr;
  Value *v = n.operand(i);
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || !d->is(op) || d->getGraph() != n.getGraph() || !hasSingleLocalUse(v)) return nullptr;
  return d;
}

const Tensor *PatternRewriter::constantTensor(const Value *v) {
  if (!v) return nullptr;
  if (v->isConstantInitializer()) return v->initializer();
  Node *d = v->definingNode();
  if (!d || !isConstantNode(*d) || d->numAttributes() != 1) return nullptr;
  return storedConstantValue(*d);
}

std::optional<std::vector<int64_t>> PatternRewriter::constantInts(const Value *v) {
  const Tensor *t = constantTensor(v);
  if (!t || (t->dataType() != DataType::Int64 && t->dataType() != DataType::Int32))
    return std::nullopt;
  auto vals = t->values<int64_t>();
  if (!vals.ok()) return std::nullopt;
  return std::move(*vals);
}

bool PatternRewriter::canReplace(const Value *old, const Value *by) {
  if (!old || !by || old == by) return false;
  if (!old->isGraphOutput()) return true;
  Node *d = by->definingNode();
  return d && by->getGraph() == old->getGraph() && !by->isGraphOutput() &&
         (!by->type() || !old->type() || by->type() == old->type());
}

void PatternRewriter::copyNodeInfo(const Node &from, Node &to) {
  to.setName(from.name());
  to.docString = from.docString;
  to.metadata = from.metadata;
}

void PatternRewriter::begin(Node *root) {
  root_ = root;
  insertBefore_ = root;
  created_.clear();
  erasedOps_.clear();
  renames_.clear();
  needValueInfo_.clear();
}

void PatternRewriter::requeue(Node *n) {
  if (n && !n->isReturn() && onRequeue_) onRequeue_(n);
}

void PatternRewriter::requeueUsers(Value *v) {
  for (Use &u : v->uses()) {
    Node *user = u.getOwner();
    // A user in a nested graph is represented by its ancestor here.
    if (Node *a = user->ancestorIn(&graph())) requeue(a);
  }
}

Node *PatternRewriter::create(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                              unsigned numResults, llvm::StringRef domain) {
  Graph &g = insertBefore_ ? *insertBefore_->getGraph() : graph();
  Node *n = g.createNode(opType, operands, numResults, insertBefore_, domain);
  created_.insert(n);
  requeue(n);
  return n;
}

Value *PatternRewriter::createConstant(llvm::StringRef base, Tensor t) {
  Graph &g = graph();
  if (g.topLevel()->parentFunction()) {
    Node *c = createConstantNode(g, std::move(t), insertBefore_, base);
    created_.insert(c);
    return c->result(0);
  }
  auto v = g.addInitializer(g.freshName(base), std::move(t));
  assert(v.ok() && "a fresh name is free");
  return *v;
}

bool PatternRewriter::replaceValue(Value *old, Value *by) {
  if (!canReplace(old, by)) return false;
  Node *byDef = by->definingNode();
  bool takeName = old->isGraphOutput() || (byDef && created_.count(byDef));
  if (takeName) {
    renames_.emplace_back(by, old->name().str());
    if (old->valueInfo() && byDef) needValueInfo_.push_back(by);
  }
  if (!by->type() && old->type()) by->setType(old->type());
  requeueUsers(old);
  old->replaceAllUsesWith(by);
  requeue(byDef);
  return true;
}

bool PatternRewriter::replaceNode(Node *n, llvm::ArrayRef<Value *> by) {
  assert(by.size() == n->numResults() && "one replacement per result");
  for (unsigned i = 0; i < n->numResults(); ++i) {
    Value *r = n->result(i);
    if (r && !r->useEmpty() && !canReplace(r, by[i])) return false;
  }
  for (unsigned i = 0; i < n->numResults(); ++i) {
    Value *r = n->result(i);
    if (r && !r->useEmpty()) replaceValue(r, by[i]);
  }
  eraseNode(n);
  return true;
}

void PatternRewriter::setOperand(Node *n, unsigned i, Value *v) {
  while (n->numOperands() <= i) n->addOperand(nullptr);
  Value *old = n->operand(i);
  n->setOperand(i, v);
  requeue(n);
  if (!old) return;
  if (old->isConstantInitializer() && old->useEmpty() && old->getGraph() == &graph())
    deadConstants_ = true;
  Node *p = old->definingNode();
  if (p && p->getGraph() == &graph() && !p->hasUses() && p->numResults() && p != root_) {
    eraseNode(p);
    ++deadErased_;
  } else if (p) {
    requeue(p);
  }
}

void PatternRewriter::eraseNode(Node *n) {
  assert(!n->hasUses() && "eraseNode: results still used");
  // Taken now: graph() goes through the root node, which may be `n` itself.
  Graph *g = n->getGraph();
  std::vector<Node *> work{n};
  while (!work.empty()) {
    Node *d = work.back();
    work.pop_back();
    std::vector<Value *> ops = d->operands();
    if (onErase_) onErase_(d);
    if (!created_.erase(d)) ++erasedOps_[d->opType()];
    d->dropAllReferences();
    [[maybe_unused]] absl::Status s = d->erase();
    assert(s.ok() && "an unused node erases");
    if (d != n) ++deadErased_;
    // Producers (in this graph) that just lost their last use die too.
    for (Value *v : ops) {
      Node *p = v ? v->definingNode() : nullptr;
      if (!p || p->getGraph() != g || p->hasUses() || p->numResults() == 0) continue;
      if (std::find(work.begin(), work.end(), p) != work.end()) continue;
      work.push_back(p);
    }
    // Dead constants go as well (in one sweep per graph, see the driver).
    for (Value *v : ops)
      if (v && v->isConstantInitializer() && v->useEmpty() && v->getGraph() == g)
        deadConstants_ = true;
  }
}

void PatternRewriter::finish() {
  for (auto &[v, name] : renames_) {
    if (v->name() == name) continue;
    // The old definition is gone unless the pattern kept it (then the name
    // is still taken and `v` keeps its own).
    if (v->setName(name).ok()) {
      if (std::find(needValueInfo_.begin(), needValueInfo_.end(), v) != needValueInfo_.end() &&
          !v->valueInfo())
        v->getGraph()->addValueInfo(v);
    }
  }
  renames_.clear();
  needValueInfo_.clear();
  created_.clear();
  erasedOps_.clear();
}

//===----------------------------------------------------------------------===//
// The greedy driver
//===----------------------------------------------------------------------===//

class GreedyDriver {
public:
  GreedyDriver(Model &m, const PatternSet &ps, const GreedyRewriteConfig &cfg,
               RewriteStatistics &st)
      : m_(m), ps_(ps), cfg_(cfg), st_(st), rw_(m) {
    for (auto &p : ps.all()) index_[p.get()] = index_.size();
    counts_.assign(ps.all().size(), 0);
    rw_.onRequeue_ = [this](Node *n) { push(n); };
    rw_.onErase_ = [this](Node *n) {
      inList_.erase(n);
      if (cfg_.explain) misses_.erase(n);
    };
    if (cfg_.explain)
      rw_.onReject_ = [this](llvm::StringRef guard, const std::string &why) {
        misses_[rw_.root()].push_back({currentPattern_, guard.str(), why});
      };
  }

  bool run() {
    // Inner graphs first: a rewrite outside may then see simplified bodies.
    std::vector<Graph *> graphs;
    m_.walkGraphs([&](Graph *g) { graphs.push_back(g); });
    bool changed = false;
    // (A rewrite erases nodes of its own graph only, so every graph still
    // listed is alive when its turn comes: its descendants came first.)
    for (auto it = graphs.rbegin(); it != graphs.rend(); ++it) changed |= runGraph(**it);
    for (size_t i = 0; i < counts_.size(); ++i)
      addCount(std::string(ps_.all()[i]->name()), counts_[i]);
    std::map<std::string, int64_t> made(st_.made.begin(), st_.made.end());
    for (auto &[op, n] : made_) made[op] += n;
    st_.made.assign(made.begin(), made.end());
    st_.deadNodesErased += rw_.deadErased_;
    return changed;
  }

private:
  void addCount(const std::string &name, int64_t n) {
    for (auto &[k, v] : st_.applications)
      if (k == name) {
        v += n;
        return;
      }
    st_.applications.emplace_back(name, n);
  }

  void push(Node *n) {
    if (n->getGraph() != current_) return;
    if (inList_.insert(n).second) queue_.push_back(n);
  }

  bool runGraph(Graph &g) {
    current_ = &g;
    bool changed = false;
    unsigned scan = 0;
    bool applied = true;
    for (; scan < std::max(1u, cfg_.maxIterations) && applied; ++scan) {
      applied = false;
      queue_.clear();
      inList_.clear();
      for (Node &n : g.nodes()) push(&n);
      uint64_t budget = (uint64_t)cfg_.maxRewritesPerNode * (g.numNodes() + 16);
      uint64_t rewrites = 0;
      while (!queue_.empty()) {
        Node *n = queue_.front();
        queue_.pop_front();
        if (!inList_.erase(n)) continue; // erased meanwhile
        for (const RewritePattern *p : ps_.patternsFor(*n)) {
          rw_.begin(n);
          currentPattern_ = index_[p];
          if (cfg_.explain) forgetMisses(n, currentPattern_);
          bool did = p->matchAndRewrite(*n, rw_);
          if (did) // the census (Note [Fusion census])
            for (const std::string &op : p->makes()) {
              int64_t net = -rw_.erasedOps_.lookup(op);
              for (Node *c : rw_.created_) net += c->opType() == op;
              if (net) made_[op] += net;
            }
          rw_.finish();
          if (!did) continue;
          ++counts_[index_[p]];
          applied = changed = true;
          ++rewrites;
          break; // the root may be gone; requeued nodes come back
        }
        if (rewrites > budget) {
          st_.converged = false;
          queue_.clear();
          inList_.clear();
          break;
        }
      }
    }
    if (applied && scan >= std::max(1u, cfg_.maxIterations)) st_.converged = false;
    if (rw_.deadConstants_) {
      // Initializers the rewrites left unused (never graph inputs).
      g.removeInitializersIf([](Value *v) { return v->isConstantInitializer() && v->useEmpty(); });
      rw_.deadConstants_ = false;
    }
    st_.iterations = std::max(st_.iterations, scan);
    current_ = nullptr;
    if (cfg_.explain) {
      // What is left at the fixed point, in node order (Note [Near-miss reports]).
      for (Node &n : g.nodes()) {
        auto it = misses_.find(&n);
        if (it == misses_.end()) continue;
        std::string path = stableLabel(n);
        for (Miss &m : it->second)
          st_.nearMisses.push_back(
              {std::string(ps_.all()[m.pattern]->name()), path, std::move(m.guard), std::move(m.why)});
      }
      misses_.clear();
    }
    return changed;
  }

  /// The root of a near-miss as the user finds it, and the same in every
  /// -O2 round (unlike its index, which the other passes shift): graph path
  /// and name, or the name of its first result for an unnamed node.
  static std::string stableLabel(const Node &n) {
    std::string s = n.getGraph()->path() + " > node ";
    if (!n.name().empty()) return s + "\"" + n.name().str() + "\" (" + n.opType().str() + ")";
    s += "(" + n.opType().str() + ")";
    if (n.numResults() && n.result(0)) s += " -> '" + n.result(0)->name().str() + "'";
    return s;
  }

  /// Drops the near-misses of pattern `p` at `n` (it is being tried again).
  void forgetMisses(Node *n, size_t p) {
    auto it = misses_.find(n);
    if (it == misses_.end()) return;
    llvm::erase_if(it->second, [&](const Miss &m) { return m.pattern == p; });
    if (it->second.empty()) misses_.erase(it);
  }

  Model &m_;
  const PatternSet &ps_;
  const GreedyRewriteConfig &cfg_;
  RewriteStatistics &st_;
  PatternRewriter rw_;
  llvm::DenseMap<const RewritePattern *, size_t> index_;
  std::vector<int64_t> counts_;
  /// Nodes created by rewrites, per op type (Note [Fusion census]).
  std::map<std::string, int64_t> made_;
  /// Near-misses per root, latest per pattern (Note [Near-miss reports]).
  struct Miss {
    size_t pattern;
    std::string guard, why;
  };
  llvm::DenseMap<Node *, std::vector<Miss>> misses_;
  size_t currentPattern_ = 0;
  std::deque<Node *> queue_;
  llvm::DenseSet<Node *> inList_;
  Graph *current_ = nullptr;
};

absl::StatusOr<bool> applyPatternsGreedily(Model &m, const PatternSet &patterns,
                                           const GreedyRewriteConfig &config,
                                           RewriteStatistics *stats) {
  RewriteStatistics local;
  RewriteStatistics &st = stats ? *stats : local;
  if (patterns.empty()) return false;
  GreedyDriver d(m, patterns, config, st);
  return d.run();
}

} // namespace onnxir
