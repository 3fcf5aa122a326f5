//===- Node.cpp - Operands, results, attributes, position -----------------===//
#include "onnxir/IR/Node.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Opset.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstring>

namespace onnxir {

Node::Node(Graph *g, llvm::StringRef opType, llvm::StringRef domain)
    : graph_(g), isReturn_(false), capOperands_(0), opType_(g->getContext().intern(opType)),
      domain_(g->getContext().intern(domain)) {}

// Note [Line-aligned objects]: whole lines, so that a node's order fields
// (graph_, order_, index_) are one line.
static_assert(sizeof(Node) % Context::kCacheLine == 0, "Node is a whole number of cache lines");

Node *Node::create(Graph *g, llvm::StringRef opType, llvm::StringRef domain) {
  return new (g->getContext().allocateLineObject(sizeof(Node))) Node(g, opType, domain);
}

void Node::destroy(Node *n) {
  Context &ctx = n->graph_->getContext();
  if (ctx.destroyObserver) ctx.destroyObserver->destroyed(n);
  ctx.forgetSourceLoc(n);
  n->~Node();
  ctx.deallocateLineObject(n, sizeof(Node));
}

Node::~Node() {
  // Operand uses must not stay linked into other values' lists.
  for (unsigned i = 0; i < numOperands_; ++i) operands_[i].unlink();
  freeOperands(operands_, capOperands_);
  // Attributes (and their subgraphs) go first: nested users of our results
  // are unlinked by the subgraphs' destructors.
  for (unsigned i = 0; i < numAttrs_; ++i) destroyAttr(attrs_[i]);
  if (attrs_) graph_->getContext().deallocateObject(attrs_, capAttrs_ * sizeof(Attribute *));
  unregisterResults();
  Context &ctx = graph_->getContext();
  for (Value *r : results_)
    if (r) Value::destroy(ctx, r);
}

Use *Node::allocateOperands(unsigned n) {
  if (n == 0) return nullptr;
  Use *u = static_cast<Use *>(graph_->getContext().allocateObject(n * sizeof(Use)));
  for (unsigned i = 0; i < n; ++i) new (&u[i]) Use();
  for (unsigned i = 0; i < n; ++i) u[i].owner_ = this;
  return u;
}

// The slots must be unlinked.
void Node::freeOperands(Use *uses, unsigned n) {
  if (!uses) return;
  for (unsigned i = 0; i < n; ++i) uses[i].~Use();
  graph_->getContext().deallocateObject(uses, n * sizeof(Use));
}

void Node::addToSubgraphCount(int delta) {
  const bool had = numSubgraphs_ != 0;
  numSubgraphs_ += delta;
  const bool has = numSubgraphs_ != 0;
  if (had != has && !isReturn_) graph_->nodesWithSubgraphs_ += has ? 1 : -1;
}

void Node::unregisterResults() {
  for (Value *r : results_)
    if (r) graph_->unregisterValue(r);
}

void Node::setOpType(llvm::StringRef s) { opType_ = graph_->getContext().intern(s); }
void Node::setDomain(llvm::StringRef s) { domain_ = graph_->getContext().intern(s); }
void Node::setOverload(llvm::StringRef s) { overload_ = graph_->getContext().intern(s); }
void Node::setName(llvm::StringRef s) { name_ = graph_->getContext().save(s); }

bool Node::is(llvm::StringRef op) const {
  return opType_ == op && isDefaultDomain(domain_);
}

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

std::vector<Value *> Node::operands() const {
  std::vector<Value *> out;
  out.reserve(numOperands_);
  for (unsigned i = 0; i < numOperands_; ++i) out.push_back(operands_[i].get());
  return out;
}

// Note [Operand capacity]
// An operand array is allocated to its size when it is set whole (the lift,
// the builders), but a node that grows one operand at a time -- a graph's
// return node gains one slot per output, and a model may have 10^5 outputs --
// must not copy and relink every slot per append: that made loading 10^5
// outputs take 48 s. So an array that is full when a slot is inserted grows
// to twice its size (capOperands_ counts the slots allocated, of which the
// last capOperands_ - numOperands_ are empty and unlinked), and slots move by
// moveUse, which patches the two links pointing at a slot and keeps its
// place in its value's use list. Appending is amortised O(1); inserting or
// removing slot i moves the slots after it.

void Node::growOperands() {
  assert(capOperands_ < (1u << 30) && "operand count overflows");
  const unsigned cap = capOperands_ < 2 ? 2 : capOperands_ * 2;
  Use *fresh = allocateOperands(cap);
  for (unsigned i = 0; i < numOperands_; ++i) moveLink(fresh[i], operands_[i]);
  freeOperands(operands_, capOperands_);
  operands_ = fresh;
  capOperands_ = cap;
}

void Node::insertOperand(unsigned idx, Value *v) {
  assert(idx <= numOperands_);
  if (numOperands_ == capOperands_) growOperands();
  for (unsigned i = numOperands_; i > idx; --i) moveLink(operands_[i], operands_[i - 1]);
  ++numOperands_;
  if (v) operands_[idx].link(v);
}

void Node::prefetchOperandValues() const {
  for (unsigned i = 0; i < numOperands_; ++i) {
    const Use &u = operands_[i];
    if (!u.value_) continue;
    // The value's first fields (kind, graph, node, name, type, list head)
    // are its first line (Note [Line-aligned objects]).
    __builtin_prefetch(u.value_);
    __builtin_prefetch(u.prev_);
  }
}

void Node::prefetchOperandDefinitions() const {
  for (unsigned i = 0; i < numOperands_; ++i)
    if (const Value *v = operands_[i].value_)
      if (const Node *d = v->definingNode()) {
        __builtin_prefetch(&d->graph_); // with order_ and index_: one line
      }
}

void Node::prefetchValues() const {
  for (unsigned i = 0; i < numOperands_; ++i)
    if (const Value *v = operands_[i].value_) __builtin_prefetch(&v->name_);
  for (const Value *r : results_)
    if (r) __builtin_prefetch(&r->name_);
  if (attrs_) __builtin_prefetch(attrs_);
}

void Node::prefetchNames() const {
  auto chars = [](llvm::StringRef s) {
    if (!s.empty()) __builtin_prefetch(s.data());
  };
  chars(name_);
  for (unsigned i = 0; i < numOperands_; ++i)
    if (const Value *v = operands_[i].value_) chars(v->name_);
  for (const Value *r : results_)
    if (r) chars(r->name_);
  for (unsigned i = 0; i < numAttrs_; ++i) __builtin_prefetch(attrs_[i]);
}

void Node::setOperands(llvm::ArrayRef<Value *> vs) {
  for (unsigned i = 0; i < numOperands_; ++i) operands_[i].unlink();
  Use *fresh = allocateOperands((unsigned)vs.size());
  for (unsigned i = 0; i < vs.size(); ++i)
    if (vs[i]) fresh[i].link(vs[i]);
  freeOperands(operands_, capOperands_);
  operands_ = fresh;
  numOperands_ = capOperands_ = (unsigned)vs.size();
}

void Node::removeOperand(unsigned idx) {
  assert(idx < numOperands_);
  operands_[idx].unlink();
  for (unsigned i = idx + 1; i < numOperands_; ++i) moveLink(operands_[i - 1], operands_[i]);
  --numOperands_;
}

void Node::dropAllReferences() {
  for (unsigned i = 0; i < numOperands_; ++i) operands_[i].unlink();
  for (Attribute *a : llvm::ArrayRef<Attribute *>(attrs_, numAttrs_))
    for (unsigned gi = 0; gi < a->numGraphs(); ++gi) {
      Graph *g = a->graph(gi);
      for (Node &n : g->nodes()) n.dropAllReferences();
      g->returnNode()->dropAllReferences();
    }
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

std::vector<Value *> Node::results() const {
  std::vector<Value *> out;
  out.assign(results_.begin(), results_.end());
  return out;
}

absl::StatusOr<Value *> Node::addResult(llvm::StringRef name) {
  llvm::StringRef interned;
  if (name.empty()) {
    interned = graph_->freshName(opType_.empty() ? "v" : opType_);
  } else {
    interned = graph_->getContext().intern(name);
    if (auto s = graph_->checkNameFree(interned); !s.ok()) return s;
  }
  Value *v = Value::create(graph_->getContext(), Value::Kind::NodeResult, nullptr, this,
                           (unsigned)results_.size());
  v->name_ = interned;
  results_.push_back(v);
  graph_->registerValue(v);
  return v;
}

void Node::addEmptyResult() { results_.push_back(nullptr); }

absl::Status Node::eraseResult(unsigned i) {
  Value *r = results_[i];
  if (!r) return absl::OkStatus();
  if (!r->useEmpty())
    return absl::FailedPreconditionError(absl::StrCat(
        nodePath(this), ": cannot remove result \"", r->name().str(), "\" while it is used"));
  graph_->unregisterValue(r);
  Value::destroy(graph_->getContext(), r);
  results_[i] = nullptr;
  return absl::OkStatus();
}

void Node::trimTrailingEmptyResults() {
  while (!results_.empty() && !results_.back()) results_.pop_back();
}

bool Node::hasUses() const {
  for (auto &r : results_)
    if (r && !r->useEmpty()) return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

Attribute *Node::getAttr(llvm::StringRef name) const {
  for (Attribute *a : llvm::ArrayRef<Attribute *>(attrs_, numAttrs_))
    if (a->name() == name) return a;
  return nullptr;
}

void Node::reserveAttributes(unsigned n) {
  if (numAttrs_ + n <= capAttrs_) return;
  Context &ctx = graph_->getContext();
  const unsigned cap = std::max(numAttrs_ + n, 2 * capAttrs_);
  auto **fresh = static_cast<Attribute **>(ctx.allocateObject(cap * sizeof(Attribute *)));
  if (numAttrs_) std::memcpy(fresh, attrs_, numAttrs_ * sizeof(Attribute *));
  if (attrs_) ctx.deallocateObject(attrs_, capAttrs_ * sizeof(Attribute *));
  attrs_ = fresh;
  capAttrs_ = cap;
}

void Node::appendAttr(Attribute *a) {
  if (numAttrs_ == capAttrs_) reserveAttributes(1);
  a->node_ = this;
  addToSubgraphCount((int)a->numGraphs());
  if (a->numGraphs()) graph_->getContext().noteNewDependencies(); // subgraphs' captures
  attrs_[numAttrs_++] = a;
}

// Its subgraphs (and their users of outer values) go with it.
void Node::destroyAttr(Attribute *a) {
  if (!a->inContext_) {
    delete a;
    return;
  }
  a->~Attribute();
  graph_->getContext().deallocateObject(a, sizeof(Attribute));
}

Attribute &Node::newAttr(llvm::StringRef name) {
  auto *a = new (graph_->getContext().allocateObject(sizeof(Attribute))) Attribute(name.str());
  a->inContext_ = true;
  appendAttr(a);
  return *a;
}

Attribute &Node::addAttr(std::unique_ptr<Attribute> a) {
  Attribute *raw = a.release();
  appendAttr(raw);
  return *raw;
}

Attribute &Node::setAttr(std::unique_ptr<Attribute> a) {
  for (unsigned i = 0; i < numAttrs_; ++i)
    if (attrs_[i]->name() == a->name()) {
      Attribute *old = attrs_[i];
      a->node_ = this;
      addToSubgraphCount((int)a->numGraphs() - (int)old->numGraphs());
      if (a->numGraphs()) graph_->getContext().noteNewDependencies(); // subgraphs' captures
      attrs_[i] = a.release();
      destroyAttr(old);
      return *attrs_[i];
    }
  return addAttr(std::move(a));
}

bool Node::removeAttr(llvm::StringRef name) {
  for (unsigned i = 0; i < numAttrs_; ++i)
    if (attrs_[i]->name() == name) {
      Attribute *a = attrs_[i];
      addToSubgraphCount(-(int)a->numGraphs());
      std::memmove(attrs_ + i, attrs_ + i + 1, (numAttrs_ - i - 1) * sizeof(Attribute *));
      --numAttrs_;
      destroyAttr(a);
      return true;
    }
  return false;
}

std::vector<Graph *> Node::subgraphs() const {
  std::vector<Graph *> out;
  if (numSubgraphs_ == 0) return out; // no allocation, no look at the attributes
  out.reserve(numSubgraphs_);
  for (Attribute *a : llvm::ArrayRef<Attribute *>(attrs_, numAttrs_))
    for (unsigned i = 0; i < a->numGraphs(); ++i) out.push_back(a->graph(i));
  return out;
}

//===----------------------------------------------------------------------===//
// Position
//===----------------------------------------------------------------------===//

bool Node::isBefore(const Node *other) const {
  assert(graph_ == other->graph_ && !isReturn_ && !other->isReturn_ &&
         "isBefore needs two nodes of one graph");
  if (!graph_->orderValid_) graph_->renumber();
  return order_ < other->order_;
}

Node *Node::ancestorIn(const Graph *g) const {
  const Node *n = this;
  while (n) {
    if (n->graph_ == g) return const_cast<Node *>(n);
    n = n->graph_->parentNode();
  }
  return nullptr;
}

namespace {

// What a move has to know about the node and everything nested in it.
struct MoveFootprint {
  /// Values the node or its subgraphs use that are defined outside it.
  std::vector<Value *> external;
  /// Values defined in the node's subgraphs (filled only when asked).
  std::vector<Value *> nestedDefs;
};

// One iterative walk over `self` and its subgraphs (models nest deeply).
MoveFootprint footprintOf(const Node *self, bool wantNestedDefs) {
  MoveFootprint fp;
  std::vector<Value *> used;
  auto addOperands = [&](const Node &n) {
    for (const Use &u : n.operandUses())
      if (Value *v = u.get()) used.push_back(v);
  };
  addOperands(*self);
  if (!self->hasSubgraphs()) {
    for (Value *v : used)
      if (v->definingNode() != self) fp.external.push_back(v);
    return fp;
  }
  llvm::SmallPtrSet<const Graph *, 8> inner;
  std::vector<Graph *> work = self->subgraphs();
  while (!work.empty()) {
    Graph *g = work.back();
    work.pop_back();
    inner.insert(g);
    if (wantNestedDefs) {
      fp.nestedDefs.insert(fp.nestedDefs.end(), g->inputs().begin(), g->inputs().end());
      for (Value *v : g->initializers())
        if (!v->isGraphInput()) fp.nestedDefs.push_back(v);
      for (Value *v : g->sparseInitializers())
        if (!v->isGraphInput()) fp.nestedDefs.push_back(v);
    }
    for (const Node &n : g->nodes()) {
      addOperands(n);
      if (wantNestedDefs)
        for (unsigned i = 0; i < n.numResults(); ++i)
          if (Value *r = n.result(i)) fp.nestedDefs.push_back(r);
      if (n.hasSubgraphs())
        for (Graph *sg : n.subgraphs()) work.push_back(sg);
    }
    addOperands(*g->returnNode());
  }
  // The node's own results and values of its subgraphs move along with it.
  for (Value *v : used)
    if (v->definingNode() != self && !inner.count(v->getGraph())) fp.external.push_back(v);
  return fp;
}

} // namespace

// See the contract on Node::moveBefore. Everything is checked before anything
// changes. Cost: one walk over the node and its subgraphs, plus for each use
// of a result and each outside value it uses an amortised O(1) isBefore and
// hash lookups; nesting chains are walked once per distinct graph.
static absl::Status checkMoveTo(Node *self, Graph *target, Node *pos) {
  Graph *src = self->getGraph();
  // The target's chain of enclosing graphs, each with the node of that graph
  // which (transitively) holds the target. Not into one of its own subgraphs.
  llvm::DenseMap<const Graph *, Node *> holderIn;
  holderIn[target] = nullptr;
  for (Node *p = target->parentNode(); p; p = p->getGraph()->parentNode()) {
    if (p == self)
      return absl::InvalidArgumentError(nodePath(self) + ": cannot move a node into its own subgraph");
    holderIn[p->getGraph()] = p;
  }
  // True if the node, placed before `pos` in the target, comes before `n` of
  // the target.
  auto placedBefore = [&](const Node *n) { return pos && (pos == n || pos->isBefore(n)); };

  MoveFootprint fp = footprintOf(self, /*wantNestedDefs=*/src != target);

  // Every outside value used must be visible there: defined in the target or
  // an enclosing graph, and before the new position (or before the node
  // holding the target).
  for (Value *v : fp.external) {
    auto it = holderIn.find(v->getGraph());
    if (it == holderIn.end())
      return absl::InvalidArgumentError(absl::StrCat(
          nodePath(self), ": moving it would put operand \"", v->name().str(), "\" out of scope"));
    Node *def = v->definingNode();
    if (!def) continue; // graph inputs and initializers come first
    bool ok = it->second ? def != it->second && def->isBefore(it->second)
                         : !pos || (def != pos && def->isBefore(pos));
    if (!ok)
      return absl::InvalidArgumentError(absl::StrCat(
          nodePath(self), ": moving it would put it before the definition of operand \"",
          v->name().str(), "\" at ", nodePath(def)));
  }

  // Every user of a result must stay inside the target's scope and after the
  // new position. Users are mapped to their ancestor in the target, once per
  // graph holding users.
  llvm::DenseMap<const Graph *, const Node *> ancestorOfGraph;
  const Node *const kInside = self; // the user is inside the moved node
  auto ancestorInTarget = [&](const Graph *ug) -> const Node * {
    auto [it, fresh] = ancestorOfGraph.try_emplace(ug, nullptr);
    if (!fresh) return it->second;
    const Node *found = nullptr;
    for (const Node *cur = ug->parentNode(); cur; cur = cur->getGraph()->parentNode()) {
      if (cur == self) { found = kInside; break; }
      if (cur->getGraph() == target) { found = cur; break; }
    }
    ancestorOfGraph[ug] = found;
    return found;
  };
  for (unsigned i = 0; i < self->numResults(); ++i) {
    Value *r = self->result(i);
    if (!r) continue;
    for (Use &u : r->uses()) {
      Node *owner = u.getOwner();
      if (owner == self) continue; // a self-loop stays one wherever it goes
      const Node *anc;
      if (owner->getGraph() == target) {
        if (owner->isReturn()) continue; // outputs come after every node
        anc = owner;
      } else {
        anc = ancestorInTarget(owner->getGraph());
        if (anc == kInside) continue;
        if (!anc)
          return absl::InvalidArgumentError(absl::StrCat(
              nodePath(self), ": moving it would put result \"", r->name().str(),
              "\" out of scope of its user ", nodePath(owner)));
      }
      if (!placedBefore(anc))
        return absl::InvalidArgumentError(absl::StrCat(
            nodePath(self), ": moving it would put result \"", r->name().str(), "\" after its user ",
            nodePath(owner)));
    }
  }

  // Definitions inside the node's subgraphs must not shadow a name visible
  // at the target (Note [Scopes]). A name defined once in the whole model
  // cannot, so only shared names are looked up.
  Context &ctx = target->getContext();
  for (Value *v : fp.nestedDefs) {
    if (ctx.nameDefinitions(v->name()) < 2) continue;
    if (Value *outer = target->lookup(v->name()); outer && outer->definingNode() != self)
      return absl::AlreadyExistsError(absl::StrCat(
          nodePath(self), ": cannot move it: \"", v->name().str(), "\", defined in ",
          v->getGraph()->path(), ", would shadow the value of the same name in ",
          outer->getGraph()->path()));
  }
  return absl::OkStatus();
}

absl::Status Node::moveImpl(Node *self, Graph *target, Node *pos) {
  if (pos == self) return absl::OkStatus();
  assert(!pos || pos->getGraph() == target);
  if (auto s = checkMoveTo(self, target, pos); !s.ok()) return s;
  Graph *src = self->getGraph();
  if (src != target) {
    // Names must be free in the target scope chain.
    for (unsigned i = 0; i < self->numResults(); ++i)
      if (Value *r = self->result(i)) src->unregisterValue(r);
    std::string clash;
    for (unsigned i = 0; i < self->numResults() && clash.empty(); ++i)
      if (Value *r = self->result(i))
        if (!target->isNameFree(r->name())) clash = r->name().str();
    if (!clash.empty()) {
      for (unsigned i = 0; i < self->numResults(); ++i)
        if (Value *r = self->result(i)) src->registerValue(r);
      return absl::AlreadyExistsError(absl::StrCat(
          nodePath(self), ": cannot move it: result name \"", clash,
          "\" is already visible in the target graph ", target->path()));
    }
  }
  if (self->hasSubgraphs()) --src->nodesWithSubgraphs_;
  src->nodes().remove(*self);
  --src->numNodes_;
  src->listChanged();
  target->insertNode(self, pos);
  if (src != target)
    for (unsigned i = 0; i < self->numResults(); ++i)
      if (Value *r = self->result(i)) {
        target->registerValue(r);
        target->takeValueInfoOf(r, *src);
      }
  return absl::OkStatus();
}

absl::Status Node::moveBefore(Node *pos) {
  assert(pos && !pos->isReturn_);
  return moveImpl(this, pos->graph_, pos);
}

absl::Status Node::moveAfter(Node *pos) {
  assert(pos && !pos->isReturn_);
  auto it = std::next(pos->getIterator());
  Node *next = it == pos->graph_->nodes().end() ? nullptr : &*it;
  if (next == this) return absl::OkStatus();
  return moveImpl(this, pos->graph_, next);
}

absl::Status Node::moveToEnd(Graph *g) { return moveImpl(this, g, nullptr); }

absl::Status Node::erase() {
  assert(!isReturn_ && "cannot erase a return node");
  for (auto &r : results_)
    if (r && !r->useEmpty()) {
      Use *u = r->firstUse();
      return absl::FailedPreconditionError(absl::StrCat(
          nodePath(this), ": cannot erase: result \"", r->name().str(), "\" is still used by ",
          u->getOwner()->isReturn() ? u->getOwner()->getGraph()->path() + " (graph output)"
                                    : nodePath(u->getOwner())));
    }
  if (hasSubgraphs()) --graph_->nodesWithSubgraphs_;
  graph_->nodes().remove(*this);
  --graph_->numNodes_;
  graph_->listChanged();
  destroy(this);
  return absl::OkStatus();
}

unsigned Node::indexInGraph() const {
  if (isReturn_) return (unsigned)graph_->numNodes();
  if (!graph_->indexValid_) {
    unsigned i = 0;
    for (const Node &n : graph_->nodes()) n.index_ = i++;
    graph_->indexValid_ = true;
  }
  return index_;
}

} // namespace onnxir
