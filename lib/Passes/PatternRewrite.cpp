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
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

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

const Tensor *PatternRewriter::constantTensor(const Value *v) { return storedConstantOf(v); }

bool PatternRewriter::hasAttributeReferences(const Node &n) {
  for (unsigned a = 0; a < n.numAttributes(); ++a)
    if (n.attribute(a).isReference()) return true;
  return false;
}

std::optional<std::vector<int64_t>> PatternRewriter::constantInts(const Value *v) {
  return onnxir::constantInts(v);
}

bool PatternRewriter::canReplace(const Value *old, const Value *by) {
  if (!old || !by || old == by) return false;
  if (!old->isGraphOutput()) return true;
  Node *d = by->definingNode();
  return d && by->getGraph() == old->getGraph() && !by->isGraphOutput() &&
         (!by->type() || !old->type() || by->type() == old->type());
}

//===----------------------------------------------------------------------===//
// Note [Replacement type check]
//===----------------------------------------------------------------------===//

namespace {
/// The types of the values a rewrite's created nodes compute, from their
/// operator rules and the types of the operands outside the rewrite; the
/// types the pattern set on the created results are not read.
class LocalInference {
public:
  LocalInference(Context &ctx, const llvm::DenseSet<Node *> &created)
      : ctx_(ctx), created_(created) {}

  const Type *typeOf(const Value *v) {
    Node *d = v ? v->definingNode() : nullptr;
    if (!d || !created_.count(d)) {
      if (!v || v->type()) return v ? v->type() : nullptr;
      // A constant a pattern made has no type yet: its tensor's.
      const Tensor *t = PatternRewriter::constantTensor(v);
      return t ? ctx_.getTensorType(t->dataType(), llvm::ArrayRef<int64_t>(t->dims())) : nullptr;
    }
    inferNode(*d);
    return types_.lookup(v);
  }
  const infer::Dims *dataOf(const Value *v) {
    Node *d = v ? v->definingNode() : nullptr;
    if (d && created_.count(d)) inferNode(*d);
    auto it = data_.find(v);
    if (it != data_.end()) return &it->second;
    if (d && created_.count(d)) return nullptr;
    const Tensor *t = PatternRewriter::constantTensor(v);
    if (!t) return nullptr;
    auto dims = infer::tensorData(ctx_, *t);
    if (!dims) return nullptr;
    return &data_.emplace(v, std::move(*dims)).first->second;
  }
  void set(const Value *v, const Type *t) { types_[v] = t; }
  void setData(const Value *v, infer::Dims d) { data_[v] = std::move(d); }

private:
  void inferNode(Node &n);
  Context &ctx_;
  const llvm::DenseSet<Node *> &created_;
  llvm::DenseSet<const Node *> done_;
  llvm::DenseMap<const Value *, const Type *> types_;
  /// Stable references (dataOf hands out pointers).
  std::unordered_map<const Value *, infer::Dims> data_;
};

class LocalCtx final : public infer::InferCtx {
public:
  LocalCtx(LocalInference &li, Context &ctx, Node &n, int64_t opset, const OpEntry *e)
      : InferCtx(ctx, n, opset), li_(li) {
    setEntry(e);
  }
  const Type *inType(unsigned i) const override {
    return hasInput(i) ? li_.typeOf(node.operand(i)) : nullptr;
  }
  const infer::Dims *inData(unsigned i) const override {
    return hasInput(i) ? li_.dataOf(node.operand(i)) : nullptr;
  }
  const Attribute *attr(llvm::StringRef name) const override { return node.getAttr(name); }
  const Tensor *inConstant(unsigned i) const override {
    return hasInput(i) ? PatternRewriter::constantTensor(node.operand(i)) : nullptr;
  }
  void setOutType(unsigned i, const Type *t) override {
    if (hasOutput(i) && t) li_.set(node.result(i), t);
  }
  void setOutData(unsigned i, infer::Dims d) override {
    if (hasOutput(i)) li_.setData(node.result(i), std::move(d));
  }

private:
  LocalInference &li_;
};

void LocalInference::inferNode(Node &n) {
  if (!done_.insert(&n).second) return;
  // What a rule cannot see here is left unknown: subgraphs, references to
  // a function's attributes (resolved per call site).
  if (n.hasSubgraphs()) return;
  for (unsigned i = 0; i < n.numAttributes(); ++i)
    if (n.attribute(i).isReference()) return;
  int64_t opset = opsetInForce(n);
  if (opset <= 0) return;
  const OpEntry *e = OpRegistry::get().lookup(n.domain(), n.opType(), opset);
  if (!e || !e->infer) return;
  LocalCtx c(*this, ctx_, n, opset, e);
  e->infer(c);
}

/// True if two tensor types provably differ: element types, ranks, or a
/// dim both know as an integer.
bool provablyDiffer(const Type *a, const Type *b) {
  if (!a || !b || a == b || !a->isTensor() || !b->isTensor()) return false;
  if (a->hasElemType() && b->hasElemType() && a->elemTypeRaw() != 0 && b->elemTypeRaw() != 0 &&
      a->elemTypeRaw() != b->elemTypeRaw())
    return true;
  if (a->rank() < 0 || b->rank() < 0) return false;
  if (a->rank() != b->rank()) return true;
  for (int64_t i = 0; i < a->rank(); ++i) {
    const Dim &x = a->dims()[i], &y = b->dims()[i];
    if (x.isKnown() && y.isKnown() && x.value != y.value) return true;
  }
  return false;
}
} // namespace

std::string PatternRewriter::typeMismatch(const Value *old, const Value *by) const {
  const Type *want = old ? old->type() : nullptr;
  if (!want || !want->isTensor() || !by) return "";
  LocalInference li(old->getGraph()->getContext(), created_);
  const Type *got = li.typeOf(by);
  if (!provablyDiffer(want, got)) return "";
  return absl::StrCat("'", old->name().str(), "' of type ", want->str(), " would be replaced by '",
                      by->name().str(), "' of type ", got->str());
}

absl::Status reportPatternBugs(const RewriteStatistics &stats,
                               const std::function<void(std::string)> &warn) {
  if (stats.patternBugs.empty()) return absl::OkStatus();
  for (const std::string &b : stats.patternBugs)
    warn("pattern bug: replacement refused (Note [Replacement type check]): " + b);
  const char *env = std::getenv("ONNXIR_PATTERN_BUGS");
  if (env && std::strcmp(env, "error") == 0)
    return absl::InternalError("pattern bug: " + stats.patternBugs.front());
  return absl::OkStatus();
}

void PatternRewriter::copyNodeInfo(const Node &from, Node &to) {
  to.setName(from.name());
  to.docString = from.docString;
  to.metadata = from.metadata;
}

void PatternRewriter::begin(Node *root) {
  root_ = root;
  insertBefore_ = root;
  typeBug_.clear();
  madeInitializers_.clear();
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
  madeInitializers_.push_back(*v);
  return *v;
}

bool PatternRewriter::replaceValue(Value *old, Value *by) {
  if (!canReplace(old, by)) return false;
  if (std::string why = typeMismatch(old, by); !why.empty()) {
    if (typeBug_.empty()) typeBug_ = std::move(why);
    return false;
  }
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
  // All checked before any is replaced (Note [Replacement type check]).
  for (unsigned i = 0; i < n->numResults(); ++i) {
    Value *r = n->result(i);
    if (!r || r->useEmpty()) continue;
    if (std::string why = typeMismatch(r, by[i]); !why.empty()) {
      if (typeBug_.empty()) typeBug_ = std::move(why);
      return false;
    }
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
          if (!rw_.typeBug_.empty()) did = refuseTypeBug(*n, *p, did);
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

  /// Note [Replacement type check]: a replacement of the rewrite at `root`
  /// was refused. Records the bug and erases the nodes the rewrite created
  /// that nothing uses (a pattern returns false once a replacement is
  /// refused, having built its nodes in vain). Returns whether the IR still
  /// changed (a pattern that went on after the refusal).
  bool refuseTypeBug(Node &root, const RewritePattern &p, bool did) {
    st_.patternBugs.push_back(std::string(p.name()) + " at " + stableLabel(root) + ": " +
                              rw_.typeBug_);
    if (cfg_.explain) rw_.rejected("type check", "pattern bug: " + rw_.typeBug_);
    bool erased = true;
    while (erased) {
      erased = false;
      for (Node *c : rw_.created_)
        if (!c->hasUses()) {
          rw_.eraseNode(c);
          erased = true;
          break;
        }
    }
    // The initializers it made for nothing go too (only those: the model's
    // own unused ones are DCE's business).
    if (!rw_.madeInitializers_.empty()) {
      llvm::DenseSet<Value *> made(rw_.madeInitializers_.begin(), rw_.madeInitializers_.end());
      current_->removeInitializersIf([&](Value *v) { return made.count(v) && v->useEmpty(); });
    }
    return did;
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
