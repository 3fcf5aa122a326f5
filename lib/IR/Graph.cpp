//===- Graph.cpp - Scopes, node lists, inputs, outputs, cloning -----------===//
#include "onnxir/IR/Graph.h"

#include "onnxir/IR/Function.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <algorithm>

namespace onnxir {

static constexpr uint64_t kOrderStride = 1024;

Graph::Graph(Context &ctx)
    : ctx_(&ctx), valueInfo_(detail::ContextAllocator<ValueInfoRecord>(ctx)) {
  return_ = Node::create(this, "<return>", "");
  return_->isReturn_ = true;
  orderValid_ = true;
  indexValid_ = true;
}

Graph::~Graph() {
  if (ctx_->destroyObserver) ctx_->destroyObserver->destroyed(this);
  // Drop every reference first: uses may point in any direction inside the
  // graph and its subgraphs.
  for (Node &n : nodes_) n.dropAllReferences();
  return_->dropAllReferences();
  Node::destroy(return_);
  while (!nodes_.empty()) {
    Node &n = nodes_.back();
    nodes_.remove(n);
    Node::destroy(&n);
  }
  auto destroy = [&](Value *v) {
    unregisterValue(v);
    Value::destroy(*ctx_, v);
  };
  // Initializers that are graph inputs are owned through inputs_: destroy the
  // others first, while every pointer is still valid.
  for (Value *v : initializers_)
    if (v->kind() != Value::Kind::GraphInput) destroy(v);
  for (Value *v : sparse_)
    if (v->kind() != Value::Kind::GraphInput) destroy(v);
  for (Value *v : inputs_) destroy(v);
}

//===----------------------------------------------------------------------===//
// Parents
//===----------------------------------------------------------------------===//

Node *Graph::parentNode() const { return parentAttr_ ? parentAttr_->getNode() : nullptr; }

Graph *Graph::parentGraph() const {
  Node *n = parentNode();
  return n ? n->getGraph() : nullptr;
}

bool Graph::isNestedIn(const Graph *g) const {
  for (const Graph *cur = this; cur; cur = cur->parentGraph())
    if (cur == g) return true;
  return false;
}

unsigned Graph::depth() const {
  unsigned d = 0;
  for (const Graph *cur = parentGraph(); cur; cur = cur->parentGraph()) ++d;
  return d;
}

const Graph *Graph::topLevel() const {
  const Graph *cur = this;
  while (Graph *p = cur->parentGraph()) cur = p;
  return cur;
}

//===----------------------------------------------------------------------===//
// Scope
//===----------------------------------------------------------------------===//

// Value names are always interned in the graph's Context, whose record of
// each name (Note [Name records]) holds its only definition, or says that
// the name's definitions are in the scope tables of their graphs (keyed by
// the interned pointer). A lookup by string hashes it once to find the
// record; everything after is pointer steps.

void Graph::registerValue(Value *v) {
  assert(ctx_->findInterned(v->name_).data() == v->name_.data() && "names are interned");
  Context::NameRecord &r = Context::record(v->name_);
  ++numDefinitions_;
  if (!r.inScopes) {
    if (r.count == 0) {
      r.single = v;
      r.graph = this;
      r.count = 1;
      return;
    }
    // A second definition: from now on the definitions are in the tables.
    r.graph->scope_[r.single->name_.data()] = r.single;
    r.single = nullptr;
    r.graph = nullptr;
    r.inScopes = true;
  }
  scope_[v->name_.data()] = v;
  ++r.count;
}

void Graph::reserveDefinitions(size_t n) { ctx_->reserveNames(n); }

void Graph::unregisterValue(Value *v) {
  Context::NameRecord &r = Context::record(v->name_);
  if (!r.inScopes) {
    if (r.single == v && r.graph == this) {
      r.single = nullptr;
      r.graph = nullptr;
      r.count = 0;
      --numDefinitions_;
    }
    return;
  }
  auto it = scope_.find(v->name_.data());
  if (it != scope_.end() && it->second == v) {
    scope_.erase(it);
    --numDefinitions_;
    if (--r.count == 0) r.inScopes = false;
  }
}

Value *Graph::lookupKey(const char *key) const {
  const Context::NameRecord &r = Context::record(llvm::StringRef(key, 0));
  if (!r.inScopes) return r.graph == this ? r.single : nullptr;
  auto it = scope_.find(key);
  return it == scope_.end() ? nullptr : it->second;
}

Value *Graph::lookupChainKey(const char *key) const {
  const Context::NameRecord &r = Context::record(llvm::StringRef(key, 0));
  if (!r.inScopes) return r.single && isNestedIn(r.graph) ? r.single : nullptr;
  for (const Graph *g = this; g; g = g->parentGraph()) {
    auto it = g->scope_.find(key);
    if (it != g->scope_.end()) return it->second;
  }
  return nullptr;
}

Value *Graph::lookupLocal(llvm::StringRef name) const {
  const char *k = ctx_->findInterned(name).data();
  return k ? lookupKey(k) : nullptr;
}

Value *Graph::lookup(llvm::StringRef name) const {
  const char *k = ctx_->findInterned(name).data();
  return k ? lookupChainKey(k) : nullptr;
}

bool Graph::isNameFree(llvm::StringRef name) const {
  if (name.empty()) return false;
  llvm::StringRef k = ctx_->findInterned(name);
  return !k.data() || isKeyFree(k);
}

bool Graph::isKeyFree(llvm::StringRef k) const {
  const Context::NameRecord &r = Context::record(k);
  if (r.count == 0) return true;
  if (!r.inScopes) // taken if visible here, or defined in a graph nested here
    return !isNestedIn(r.graph) && !r.graph->isNestedIn(this);
  if (lookupChainKey(k.data())) return false;
  bool free = true;
  const_cast<Graph *>(this)->walkGraphs([&](Graph *g) {
    if (free && g != this && g->scope_.count(k.data())) free = false;
  });
  return free;
}

absl::Status Graph::checkNameFree(llvm::StringRef name) const {
  assert(ctx_->findInterned(name).data() == name.data() && "checkNameFree takes interned names");
  if (name.empty())
    return absl::InvalidArgumentError(path() + ": a value needs a non-empty name");
  if (ctx_->allowShadowing) {
    if (!lookupKey(name.data())) return absl::OkStatus();
  } else if (isKeyFree(name)) {
    return absl::OkStatus();
  }
  if (lookupKey(name.data()))
    return absl::AlreadyExistsError(
        absl::StrCat(path(), ": \"", name.str(), "\" is already defined in this graph"));
  if (lookupChainKey(name.data()))
    return absl::AlreadyExistsError(absl::StrCat(
        path(), ": \"", name.str(), "\" would shadow a value of an enclosing graph"));
  return absl::AlreadyExistsError(absl::StrCat(
      path(), ": \"", name.str(), "\" is already defined in a nested graph"));
}

llvm::StringRef Graph::freshName(llvm::StringRef base) const { return ctx_->freshName(base); }

std::vector<Value *> Graph::definitions() const {
  std::vector<Value *> defs(inputs_.begin(), inputs_.end());
  for (Value *v : initializers_)
    if (!v->isGraphInput()) defs.push_back(v);
  for (Value *v : sparse_)
    if (!v->isGraphInput()) defs.push_back(v);
  for (const Node &n : nodes_)
    for (Value *r : n.results())
      if (r) defs.push_back(r);
  return defs;
}

//===----------------------------------------------------------------------===//
// Inputs and initializers
//===----------------------------------------------------------------------===//

Value *Graph::newGraphValue(Value::Kind k, llvm::StringRef name) {
  Value *v = Value::create(*ctx_, k, this, nullptr, 0);
  v->name_ = name;
  registerValue(v);
  return v;
}

absl::StatusOr<Value *> Graph::addInput(llvm::StringRef name, const Type *type, int pos) {
  llvm::StringRef n = ctx_->intern(name);
  if (auto s = checkNameFree(n); !s.ok()) return s;
  Value *v = newGraphValue(Value::Kind::GraphInput, n);
  v->type_ = type;
  if (pos < 0 || pos >= (int)inputs_.size()) inputs_.push_back(v);
  else inputs_.insert(inputs_.begin() + pos, v);
  return v;
}

absl::Status Graph::removeInput(unsigned i) {
  Value *v = inputs_[i];
  if (!v->useEmpty())
    return absl::FailedPreconditionError(
        absl::StrCat(path(), ": cannot remove input \"", v->name().str(), "\" while it is used"));
  if (v->tensor_ || v->sparse_)
    return absl::FailedPreconditionError(absl::StrCat(
        path(), ": cannot remove input \"", v->name().str(), "\": it has an initializer"));
  inputs_.erase(inputs_.begin() + i);
  unregisterValue(v);
  Value::destroy(*ctx_, v);
  return absl::OkStatus();
}

absl::StatusOr<Value *> Graph::addInitializer(llvm::StringRef name, Tensor t) {
  llvm::StringRef n = ctx_->intern(name);
  if (auto s = checkNameFree(n); !s.ok()) return s;
  Value *v = newGraphValue(Value::Kind::Initializer, n);
  t.setName(n.str());
  v->tensor_ = std::make_unique<Tensor>(std::move(t));
  initializers_.push_back(v);
  return v;
}

absl::StatusOr<Value *> Graph::addSparseInitializer(llvm::StringRef name, SparseTensor t) {
  llvm::StringRef n = ctx_->intern(name);
  if (auto s = checkNameFree(n); !s.ok()) return s;
  Value *v = newGraphValue(Value::Kind::SparseInitializer, n);
  v->sparse_ = std::make_unique<SparseTensor>(std::move(t));
  sparse_.push_back(v);
  return v;
}

void Graph::setInputDefault(Value *input, Tensor t) {
  assert(input->isGraphInput() && input->getGraph() == this);
  if (!input->tensor_) initializers_.push_back(input);
  input->tensor_ = std::make_unique<Tensor>(std::move(t));
}

void Graph::setInputSparseDefault(Value *input, SparseTensor t) {
  assert(input->isGraphInput() && input->getGraph() == this);
  if (!input->sparse_) sparse_.push_back(input);
  input->sparse_ = std::make_unique<SparseTensor>(std::move(t));
}

void Graph::removeInputDefault(Value *input) {
  if (input->tensor_) {
    initializers_.erase(std::find(initializers_.begin(), initializers_.end(), input));
    input->tensor_.reset();
  }
  if (input->sparse_) {
    sparse_.erase(std::find(sparse_.begin(), sparse_.end(), input));
    input->sparse_.reset();
  }
}

unsigned Graph::removeInitializersIf(llvm::function_ref<bool(Value *)> pred) {
  unsigned removed = 0;
  auto sweep = [&](std::vector<Value *> &list) {
    size_t out = 0;
    for (Value *v : list) {
      if (v->kind() != Value::Kind::GraphInput && v->useEmpty() && pred(v)) {
        unregisterValue(v);
        Value::destroy(*ctx_, v);
        ++removed;
        continue;
      }
      list[out++] = v;
    }
    list.resize(out);
  };
  sweep(initializers_);
  sweep(sparse_);
  return removed;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

void Graph::renumber() {
  uint64_t o = 0;
  for (Node &n : nodes_) n.order_ = (o += kOrderStride);
  orderValid_ = true;
}

void Graph::insertNode(Node *n, Node *pos) {
  // A node coming from another graph brings its dependencies (Note [Known
  // acyclic graphs]); a new one has none yet, and this costs nothing.
  ctx_->noteNewDependencies();
  n->graph_ = this;
  if (n->hasSubgraphs()) ++nodesWithSubgraphs_;
  // An append keeps the list's positions (Node::index_) numbered: a lift
  // appends every node, and the first walk asking for a position (the
  // verifier's cycle search, -topo) would otherwise number the list again.
  const bool numbered = indexValid_ && !pos;
  listChanged();
  if (pos) nodes_.insert(pos->getIterator(), *n);
  else nodes_.push_back(*n);
  if (numbered) {
    n->index_ = (unsigned)numNodes_;
    indexValid_ = true;
  }
  ++numNodes_;
  if (!orderValid_) return;
  auto it = n->getIterator();
  uint64_t prev = it == nodes_.begin() ? 0 : std::prev(it)->order_;
  auto nextIt = std::next(it);
  uint64_t next = nextIt == nodes_.end() ? prev + 2 * kOrderStride : nextIt->order_;
  if (next > prev + 1) n->order_ = prev + (next - prev) / 2;
  else orderValid_ = false;
}

// Note [Reordering from the array]
// A graph sorted by -topo from a shuffled file has its list order far from
// its memory order, so every walk of the list afterwards waits for one miss
// per node, one after the other. Unlinking and appending each node also
// touched its old neighbours (two more misses), and numbering the new order
// walked the list again. When `order` is known to be a permutation of the
// nodes (checked against their positions, which a sort has just read), the
// list is instead rebuilt from the array: each node is linked after the one
// before it and given its new position and order key in the same step, and
// the addresses come from the array, so the misses overlap (the next nodes
// are prefetched too). Otherwise (positions not numbered, or `order` not a
// permutation: a caller's mistake, asserted in debug builds) each node is
// unlinked and appended, which keeps the list well-formed whatever `order`
// holds.
//
// Note [Node array]
// After such a reorder the graph keeps the array (moved in by a caller
// that is done with it, as -topo is: no copy) as nodeArray(), until the
// list next changes (listChanged() drops it with the positions; a walk
// that looks ahead must therefore not change the list it walks, which none
// of them does). Walks that look ahead
// (NodeLookahead.h: the verifier, both passes of the save, the save's scan
// for external tensors) then find the nodes ahead in the array instead of
// following the list one miss at a time: on the shuffled 10^6-node chain
// after -topo, each such walk had been a chase of 10^6 dependent misses.
// The array costs a pointer per node while it is held.
void Graph::reorderNodes(std::vector<Node *> order) {
  assert(order.size() == numNodes_ && "reorderNodes needs a permutation of the nodes");
  const size_t n = order.size();
  bool permutation = indexValid_ && n == numNodes_;
  if (permutation) {
    std::vector<bool> seen(n);
    for (size_t k = 0; k < n && permutation; ++k) {
      const Node *x = order[k];
      if (k + 16 < n && order[k + 16]) __builtin_prefetch(&order[k + 16]->graph_);
      permutation = x && x->graph_ == this && !x->isReturn_ && x->index_ < n && !seen[x->index_];
      if (permutation) seen[x->index_] = true;
    }
  }
  assert((permutation || !indexValid_) && "reorderNodes needs a permutation of the nodes");
  if (!permutation) {
    for (Node *x : order) {
      assert(x->graph_ == this && !x->isReturn_ && "reorderNodes: not a node of this graph");
      nodes_.remove(*x);
      nodes_.push_back(*x);
    }
    listChanged();
    renumber();
    return;
  }
  // Every node is in `order` once: the old links need not be undone.
  nodes_.clear();
  uint64_t o = 0;
  for (size_t k = 0; k < n; ++k) {
    Node *x = order[k];
    if (k + 16 < n) __builtin_prefetch(&order[k + 16]->graph_);
    nodes_.push_back(*x);
    x->order_ = (o += kOrderStride);
    x->index_ = (unsigned)k;
  }
  orderValid_ = true;
  indexValid_ = true;
  nodeArray_ = std::move(order);
}

Node *Graph::createEmptyNode(llvm::StringRef opType, llvm::StringRef domain, Node *pos) {
  Node *n = Node::create(this, opType, domain);
  insertNode(n, pos);
  return n;
}

Node *Graph::createNode(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                        unsigned numResults, Node *pos, llvm::StringRef domain,
                        llvm::StringRef resultBase) {
  Node *n = createEmptyNode(opType, domain, pos);
  for (Value *v : operands) n->addOperand(v);
  std::string base = resultBase.empty() ? opType.lower() : resultBase.str();
  for (unsigned i = 0; i < numResults; ++i) {
    auto r = n->addResult(freshName(base));
    assert(r.ok());
    (void)r;
  }
  return n;
}

absl::StatusOr<Node *> Graph::createNodeWithNames(llvm::StringRef opType,
                                                  llvm::ArrayRef<Value *> operands,
                                                  llvm::ArrayRef<llvm::StringRef> names,
                                                  Node *pos, llvm::StringRef domain) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    if (auto s = checkNameFree(ctx_->intern(names[i])); !s.ok()) return s;
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        return absl::AlreadyExistsError(
            absl::StrCat(path(), ": result name \"", names[i].str(), "\" given twice"));
  }
  Node *n = createEmptyNode(opType, domain, pos);
  for (Value *v : operands) n->addOperand(v);
  for (llvm::StringRef name : names) {
    if (name.empty()) n->addEmptyResult();
    else (void)n->addResult(name);
  }
  return n;
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

unsigned Graph::numOutputs() const { return return_->numOperands(); }
Value *Graph::output(unsigned i) const { return return_->operand(i); }
std::vector<Value *> Graph::outputs() const { return return_->operands(); }

void Graph::addOutput(Value *v, OutputInfo info) {
  return_->addOperand(v);
  outputInfo_.push_back(std::move(info));
}

void Graph::setOutput(unsigned i, Value *v) { return_->setOperand(i, v); }

void Graph::removeOutput(unsigned i) {
  return_->removeOperand(i);
  outputInfo_.erase(outputInfo_.begin() + i);
}

//===----------------------------------------------------------------------===//
// value_info
//===----------------------------------------------------------------------===//

ValueInfoRecord &Graph::addValueInfo(Value *v) {
  assert(v && "addValueInfo(nullptr)");
  // A record lives in the graph that defines its value, so that erasing the
  // value or moving its node can find it. A value of another graph gets a
  // record by name.
  if (v->getGraph() != this) {
    assert(false && "addValueInfo: the value is not defined in this graph");
    return addValueInfo(v->name(), v->type());
  }
  valueInfo_.emplace_back();
  auto it = std::prev(valueInfo_.end());
  it->value = v;
  it->type = v->type();
  it->hasType = v->type() != nullptr;
  v->vi_.push_back(it);
  return *it;
}

ValueInfoRecord &Graph::addValueInfo(llvm::StringRef name, const Type *type) {
  valueInfo_.emplace_back();
  ValueInfoRecord &r = valueInfo_.back();
  r.name = name.str();
  r.type = type;
  r.hasType = type != nullptr;
  return r;
}

void Graph::removeValueInfoIf(llvm::function_ref<bool(ValueInfoRecord &)> pred) {
  for (auto it = valueInfo_.begin(); it != valueInfo_.end();) {
    if (it->erased || pred(*it)) {
      if (Value *v = it->value) {
        auto pos = std::find(v->vi_.begin(), v->vi_.end(), it);
        if (pos != v->vi_.end()) v->vi_.erase(pos);
      }
      it = valueInfo_.erase(it);
    } else {
      ++it;
    }
  }
}

void Graph::takeValueInfoOf(Value *v, Graph &from) {
  for (auto it : v->vi_) valueInfo_.splice(valueInfo_.end(), from.valueInfo_, it);
}

//===----------------------------------------------------------------------===//
// Walking, paths
//===----------------------------------------------------------------------===//

void Graph::walk(llvm::function_ref<void(Node *)> fn) {
  // One frame per graph being walked: the next node to visit. Sibling
  // subgraphs are pushed in reverse so the first one is walked first.
  struct Frame {
    Graph *g;
    NodeList::iterator next = {};
    bool started = false; // `next` is taken when the graph's turn comes
  };
  std::vector<Frame> stack;
  stack.push_back({this});
  std::vector<Graph *> subs;
  while (!stack.empty()) {
    Frame &f = stack.back();
    if (!f.started) {
      f.next = f.g->nodes_.begin();
      f.started = true;
    }
    if (f.next == f.g->nodes_.end()) {
      stack.pop_back();
      continue;
    }
    Graph *g = f.g;
    Node *n = &*f.next;
    NodeList::iterator after = ++f.next; // fn may erase n, not its successor
    fn(n);
    // `n` may be gone: it is still there only if it still precedes `after`
    // (the pointer is compared, never read, unless it is in the list).
    Node *prev = after == g->nodes_.begin() ? nullptr : &*std::prev(after);
    if (prev != n || n->getGraph() != g || !n->hasSubgraphs()) continue;
    subs = n->subgraphs();
    for (auto it = subs.rbegin(); it != subs.rend(); ++it) stack.push_back({*it});
  }
}

void Graph::walkGraphs(llvm::function_ref<void(Graph *)> fn) {
  std::vector<Graph *> stack{this};
  std::vector<Graph *> subs;
  while (!stack.empty()) {
    Graph *g = stack.back();
    stack.pop_back();
    fn(g);
    // Push this graph's subgraphs so that they come out in node order.
    size_t base = stack.size();
    if (g->nodesWithSubgraphs_ == 0) continue; // a flat graph: no walk over its nodes
    for (Node &n : g->nodes_)
      if (n.hasSubgraphs())
        for (Graph *sg : n.subgraphs()) stack.push_back(sg);
    std::reverse(stack.begin() + base, stack.end());
  }
}

// Both are iterative: models may nest deeply, and diagnostics must not be
// what exhausts the stack.
std::string Graph::path() const {
  // Collect the chain of (graph, holder node) from the top down.
  std::vector<const Graph *> chain;
  for (const Graph *g = this; g; g = g->parentGraph()) chain.push_back(g);
  std::string s;
  const Graph *top = chain.back();
  if (top->function_) s = absl::StrCat("function \"", top->function_->qualifiedName(), "\"");
  else s = absl::StrCat("graph \"", top->name, "\"");
  for (size_t k = chain.size() - 1; k-- > 0;) {
    const Graph *g = chain[k];
    const Node *p = g->parentNode();
    s += absl::StrCat(" > node #", p->indexInGraph());
    if (!p->name().empty()) s += absl::StrCat(" \"", p->name().str(), "\"");
    s += absl::StrCat(" (", p->opType().str(), ")");
    const Attribute *a = g->parentAttr_;
    s += absl::StrCat(" > attribute \"", a->name(), "\"");
    if (a->kind() == AttrKind::Graphs)
      for (unsigned i = 0; i < a->numGraphs(); ++i)
        if (a->graph(i) == g) s += absl::StrCat("[", i, "]");
  }
  return s;
}

std::string nodePath(const Node *n) {
  const Graph *g = n->getGraph();
  std::string s = g->path();
  if (n->isReturn()) return s + " > outputs";
  s += absl::StrCat(" > node #", n->indexInGraph());
  if (!n->name().empty()) s += absl::StrCat(" \"", n->name().str(), "\"");
  s += absl::StrCat(" (", n->opType().str(), ")");
  return s;
}

std::string sourceLocation(const Node *n) {
  const Context::SourceLoc *l = n->getGraph()->getContext().sourceLoc(n);
  return l ? absl::StrCat(l->file.str(), ":", l->line, ":", l->col) : std::string();
}

std::string locatedNodePath(const Node *n) {
  std::string loc = sourceLocation(n);
  return loc.empty() ? nodePath(n) : absl::StrCat(loc, ": ", nodePath(n));
}

//===----------------------------------------------------------------------===//
// Cloning
//===----------------------------------------------------------------------===//

namespace {

void copyNodeProps(const Node &from, Node &to) {
  to.setName(from.name());
  to.setOverload(from.overload());
  to.docString = from.docString;
  to.metadata = from.metadata;
  to.deviceConfigurations = from.deviceConfigurations;
  to.extras = from.extras;
}

// Clones attributes of `from` onto `to`, cloning subgraphs with `m`.
void cloneAttrs(const Node &from, Node &to, IRMapping &m, bool freshen);

// Gives every value defined in `g` and its nested graphs a fresh name.
void freshenAll(Graph &g) {
  g.walkGraphs([&](Graph *sg) {
    for (Value *v : sg->definitions()) v->setNameOrFresh(sg->freshName(v->name()));
  });
}

// Copies the nodes of `src` into `dst` before `pos`. Two phases, so that
// captures of later-defined values (unsorted graphs) are mapped.
void cloneNodes(const Graph &src, Graph &dst, Node *pos, IRMapping &m, bool freshNames) {
  std::vector<std::pair<const Node *, Node *>> pairs;
  for (const Node &n : src.nodes()) {
    Node *c = dst.createEmptyNode(n.opType(), n.domain(), pos);
    copyNodeProps(n, *c);
    for (unsigned i = 0; i < n.numResults(); ++i) {
      Value *r = n.result(i);
      if (!r) {
        c->addEmptyResult();
        continue;
      }
      auto nr = freshNames ? c->addResult(dst.freshName(r->name())) : c->addResult(r->name());
      if (!nr.ok()) nr = c->addResult(dst.freshName(r->name()));
      (*nr)->setType(r->type());
      m.map(r, *nr);
    }
    pairs.emplace_back(&n, c);
  }
  for (auto &[n, c] : pairs) {
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      Value *v = n->operand(i);
      c->addOperand(v ? m.lookupOrSelf(v) : nullptr);
    }
    cloneAttrs(*n, *c, m, freshNames);
  }
}

void cloneAttrs(const Node &from, Node &to, IRMapping &m, bool freshen) {
  for (unsigned i = 0; i < from.numAttributes(); ++i)
    to.addAttr(freshen ? from.attribute(i).clone(m, freshenAll) : from.attribute(i).clone(m));
}

} // namespace

std::unique_ptr<Graph> Graph::clone(IRMapping &m) const {
  auto g = std::make_unique<Graph>(*ctx_);
  g->name = name;
  g->docString = docString;
  g->metadata = metadata;
  g->quantizationAnnotations = quantizationAnnotations;
  g->extras = extras;
  // The copy of graph value `v` in g, mapped from v. Sparse initializers
  // copy only their type and extras, as they always have.
  auto copyValue = [&](Value *v, Value::Kind kind) {
    Value *c = g->newGraphValue(kind, v->name_);
    c->type_ = v->type_;
    if (kind != Value::Kind::SparseInitializer) {
      c->docString = v->docString;
      c->metadata = v->metadata;
    }
    c->extras = v->extras;
    m.map(v, c);
    return c;
  };
  // An initializer's copy: the one already made in g when v is also an input.
  auto initializerCopy = [&](Value *v, Value::Kind kind) {
    Value *c = m.lookupOrNull(v);
    return c && c->getGraph() == g.get() ? c : copyValue(v, kind);
  };
  for (Value *v : inputs_) g->inputs_.push_back(copyValue(v, Value::Kind::GraphInput));
  for (Value *v : initializers_) {
    Value *c = initializerCopy(v, Value::Kind::Initializer);
    c->tensor_ = std::make_unique<Tensor>(*v->tensor_);
    g->initializers_.push_back(c);
  }
  for (Value *v : sparse_) {
    Value *c = initializerCopy(v, Value::Kind::SparseInitializer);
    c->sparse_ = std::make_unique<SparseTensor>(*v->sparse_);
    g->sparse_.push_back(c);
  }
  cloneNodes(*this, *g, nullptr, m, /*freshNames=*/false);
  for (unsigned i = 0; i < numOutputs(); ++i) {
    Value *v = output(i);
    g->addOutput(v ? m.lookupOrSelf(v) : nullptr, outputInfo_[i]);
  }
  for (const ValueInfoRecord &r : valueInfo_) {
    if (r.erased) continue;
    ValueInfoRecord &c = r.value ? g->addValueInfo(m.lookupOrSelf(r.value))
                                 : g->addValueInfo(r.name, r.type);
    c.name = r.name;
    c.fields() = r.fields();
  }
  return g;
}

std::vector<Value *> Graph::cloneNodesInto(Graph &dest, Node *pos, IRMapping &m) const {
  for (Value *v : initializers_)
    if (!m.contains(v) && !v->isGraphInput()) {
      auto c = dest.addInitializer(dest.freshName(v->name()), *v->initializer());
      m.map(v, *c);
      (*c)->setType(v->type());
    }
  for (Value *v : sparse_)
    if (!m.contains(v) && !v->isGraphInput()) {
      auto c = dest.addSparseInitializer(dest.freshName(v->name()), *v->sparseInitializer());
      m.map(v, *c);
    }
  cloneNodes(*this, dest, pos, m, /*freshNames=*/true);
  std::vector<Value *> outs;
  for (unsigned i = 0; i < numOutputs(); ++i) {
    Value *v = output(i);
    outs.push_back(v ? m.lookupOrSelf(v) : nullptr);
  }
  return outs;
}

} // namespace onnxir
