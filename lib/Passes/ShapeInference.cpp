//===- ShapeInference.cpp - The inference engine and the pass -------------===//
//
// One walk over each graph in node order. Types live on the Values, except in
// speculative runs (function bodies per call site, loop bodies while their
// carried types are iterated to a fixed point), which write to an overlay
// that is dropped afterwards. See Note [Merging inferred and declared types].
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/ShapeInference.h"

#include "onnxir/Ops/InferCtx.h"

#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/FunctionBodies.h"
#include "onnxir/Ops/OpLibrary.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

#include <cctype>
#include <algorithm>
#include <set>

namespace onnxir {
namespace infer {

//===----------------------------------------------------------------------===//
// The engine
//===----------------------------------------------------------------------===//

namespace {

std::vector<Node *> topoOrder(Graph &g);


/// Hashes a value by its address / 64, mixed only at 64 MiB steps: values
/// are carved in order on line boundaries, so the values a walk in node
/// order meets one after another sit in neighbouring buckets, and a table
/// of shape data larger than the cache is read and filled nearly in order
/// instead of one miss per access (Note [Data filter]).
struct ValueOrderInfo : llvm::DenseMapInfo<Value *> {
  static unsigned getHashValue(const Value *v) {
    uintptr_t p = reinterpret_cast<uintptr_t>(v) >> 6;
    return unsigned(p ^ (p >> 20));
  }
};

/// Attribute frames for function call sites: a reference resolves in the
/// innermost frame.
struct Frame {
  const Node *call = nullptr;
  const Function *fn = nullptr;
};

class Engine {
public:
  Engine(Model &m, const ShapeInferenceOptions &o, ShapeInferenceStatistics &s,
         std::vector<std::string> *w)
      : m_(m), ctx_(m.getContext()), opts_(o), stats_(s), warnings_(w) {}
  ~Engine() {
    auto &fs = m_.functions();
    fs.erase(std::remove_if(fs.begin(), fs.end(),
                            [&](auto &f) {
                              for (auto &b : libraryBodies_)
                                if (b.second == f.get()) return true;
                              return false;
                            }),
             fs.end());
  }

  absl::Status run();
  /// Infers without writing anything to the model.
  absl::Status dryRun();
  bool changed = false;
  llvm::DenseMap<Value *, Dims, ValueOrderInfo> &data() { return data_; }

  // Used by NodeCtx.
  const Type *typeOf(Value *v) const {
    if (!v) return nullptr;
    if (speculative_) {
      auto it = overlay_.find(v);
      if (it != overlay_.end()) return it->second;
    }
    return v->type();
  }
  const Dims *dataOf(Value *v) const {
    if (!mayHaveData(v)) return nullptr;
    auto it = data_.find(v);
    return it == data_.end() ? nullptr : &it->second;
  }
  // Note [Shape data budget]: data longer than opts_.dataLimit elements is
  // not kept, so a chain of Concat(v, v) stops tracking once it passes the
  // limit (the next Concat sees no data), and no rule ever reads more than
  // a few limits' worth of data.
  void setData(Value *v, Dims d) {
    if (d.size() > opts_.dataLimit) {
      ++stats_.dataOverLimit;
      data_.erase(v);
      return;
    }
    putData(v, std::move(d));
  }
  absl::Status setInferred(Value *v, const Type *t);
  /// A rule asked for the contents of `v` (its shape data, or its tensor
  /// when `asData` is false) and got none: if `v` is an initializer that
  /// is also a graph input (an overridable default, never read as a
  /// constant), it is counted once (freeze-initializer-inputs would have
  /// given the rule its value). Shape data only exists for small int
  /// tensors: others are not counted when asked for data.
  void noteInputDefault(Value *v, bool asData) {
    const Tensor *t = v->isGraphInput() ? v->initializer() : nullptr;
    if (!t) return;
    if (asData && (t->dims().size() > 1 || (t->dataType() != DataType::Int64 &&
                                            t->dataType() != DataType::Int32)))
      return;
    if (inputDefaultsRead_.insert(v).second) ++stats_.inputDefaultsUnread;
  }
  /// A node whose operands contradict each other (InferCtx::disagree).
  absl::Status disagree(Node &n, const std::string &why);
  const Attribute *resolveAttr(const Node &n, llvm::StringRef name) const;
  /// InferCtx's subgraph calls (control-flow rules).
  absl::Status inferBody(Graph &g, int64_t opset) { return inferGraph(g, opset); }
  bool canSpeculate() const { return specWork_ <= workBudget_; }
  template <typename F> auto speculate(Graph &body, F &&fn) {
    ++speculative_;
    size_t mark = overlayMark();
    clearData(body);
    auto r = fn();
    rollbackOverlay(mark);
    --speculative_;
    return r;
  }
  /// Forgets the data of every value defined in `g` (before a re-run).
  void clearData(Graph &g) {
    if (data_.empty()) return;
    for (Value *v : g.inputs()) data_.erase(v);
    g.walk([&](Node *n) {
      for (Value *v : n->results())
        if (v) data_.erase(v);
    });
  }

private:
  absl::Status inferGraph(Graph &g, int64_t opset);
  absl::Status inferNode(Node &n, int64_t opset);
  absl::Status inferNodeByRule(Node &n, int64_t opset);
  absl::Status inferCall(Node &n, Function &f);
  Function *libraryBody(const Node &n, int64_t opset);
  void seedConstant(Value *v, const Tensor &t);
  const Type *merge(const Type *declared, const Type *inferred, bool &conflict);
  std::string where(Value *v) const;
  absl::Status applyOptions();
  absl::Status writeBack();

  Model &m_;
  Context &ctx_;
  const ShapeInferenceOptions &opts_;
  ShapeInferenceStatistics &stats_;
  std::vector<std::string> *warnings_;
  unsigned speculative_ = 0;
  llvm::DenseMap<Value *, const Type *> declaredInputs_; // before --input-shape
  llvm::DenseMap<Value *, const Type *> overlay_;
  llvm::DenseSet<const Value *> inputDefaultsRead_; // noteInputDefault
  llvm::DenseMap<Value *, Dims, ValueOrderInfo> data_;
  // Note [Data filter]: most values have no shape data, yet every rule asks
  // for its operands' data: on a big model each such question was a probe
  // into a table of megabytes, a cache miss. A bit per slot (a value's
  // address / 64, modulo the filter's size: values are carved in order on
  // line boundaries, so a walk in node order reads the filter in order) is
  // set for every value given data; a clear bit answers "none" without the
  // table. Bits stay set after an erase (only a needless probe). The filter
  // has 16 bits per entry of data_ or more, rebuilt as data_ grows.
  std::vector<uint64_t> dataFilter_;
  size_t filterMask_ = 0; ///< bits - 1; 0 with no filter yet
  static size_t filterSlot(const Value *v) { return ValueOrderInfo::getHashValue(v); }
  bool mayHaveData(const Value *v) const {
    if (!filterMask_) return false;
    size_t b = filterSlot(v) & filterMask_;
    return dataFilter_[b >> 6] >> (b & 63) & 1;
  }
  void putData(Value *v, Dims d) {
    data_[v] = std::move(d);
    if (data_.size() * 16 > filterMask_ + 1) {
      size_t bits = 4096;
      while (bits < data_.size() * 64) bits *= 2;
      dataFilter_.assign(bits / 64, 0);
      filterMask_ = bits - 1;
      for (const auto &kv : data_) setFilterBit(kv.first);
    } else {
      setFilterBit(v);
    }
  }
  void setFilterBit(const Value *v) {
    size_t b = filterSlot(v) & filterMask_;
    dataFilter_[b >> 6] |= uint64_t(1) << (b & 63);
  }
  std::vector<Frame> frames_;
  std::vector<const Function *> callStack_;
  // Note [Call inference budget]: each call is inferred in its own body, so
  // nested functions that call each other k times could cost k^depth (a
  // "billion laughs" model). The memo below makes repeated calls free; what
  // it cannot reuse (calls with new operand types or attributes, calls that
  // make fresh symbols) counts here. Past workBudget_ body nodes visited,
  // calls keep their results untouched, as an op without a rule does.
  uint64_t callWork_ = 0;
  // Note [Call inference memo]: what a call infers depends only on the
  // function, its operands' types and known data, and the attributes its
  // body can reach through the call node. Calls that agree on all of these
  // reuse the first one's results, so k calls with the same types cost one
  // body walk. A call that made fresh symbols is not reused: two calls must
  // not claim their unknown dims are equal.
  struct CallResult {
    std::vector<const Type *> types;
    std::vector<std::optional<Dims>> data;
  };
  llvm::StringMap<CallResult> callMemo_;
  // The bodies of op-library ops (Ops/OpLibrary.h) inferred as calls, parsed
  // into the model for this run only (the destructor takes them out again).
  std::vector<std::pair<const OpSchema *, Function *>> libraryBodies_;
  std::string callKey(const Node &n, const Function &f) const;
  // The overlay's undo log (see overlayMark): restoring the overlay after a
  // speculative run costs what the run wrote, not the overlay's size.
  struct OverlayUndo {
    Value *v;
    const Type *old;
    bool had;
  };
  std::vector<OverlayUndo> overlayLog_;
  unsigned overlayMarks_ = 0;
  void setOverlay(Value *v, const Type *t) {
    auto [it, inserted] = overlay_.try_emplace(v, t);
    if (overlayMarks_) overlayLog_.push_back({v, inserted ? nullptr : it->second, !inserted});
    if (!inserted) it->second = t;
  }
  /// Starts a region whose overlay writes rollbackOverlay(mark) undoes.
  size_t overlayMark() {
    ++overlayMarks_;
    return overlayLog_.size();
  }
  void rollbackOverlay(size_t mark) {
    while (overlayLog_.size() > mark) {
      OverlayUndo u = overlayLog_.back();
      overlayLog_.pop_back();
      if (u.had) overlay_[u.v] = u.old;
      else overlay_.erase(u.v);
    }
    --overlayMarks_;
  }
  // Note [Speculation budget]: a Loop body is inferred speculatively until
  // its carried types are stable (at least twice with the final pass), so
  // Loops nested d deep cost 2^d body walks: a few KB of nested Loops would
  // run for hours. Node visits in speculative runs below the outermost
  // count here; past the budget, Loops skip the fixed point and take their
  // carried values as unknown, which costs one walk of each body.
  uint64_t specWork_ = 0;
  unsigned specBase_ = 0; ///< speculation level of the whole run (dryRun: 1)
  // Both budgets grow with the model: 50,000 node visits, and 8 a node of
  // the model (more than un-nested Loops, 4 rounds each, need), so only
  // nesting meets them. Small: every pass pipeline runs inference several
  // times, and the sanitizer and fuzzer builds are 30x slower.
  static constexpr uint64_t kWorkBudgetBase = 50000;
  uint64_t workBudget_ = kWorkBudgetBase;
  void setWorkBudget() {
    uint64_t nodes = 0;
    m_.walkGraphs([&](Graph *g) { nodes += g->numNodes(); });
    workBudget_ = kWorkBudgetBase + 8 * nodes;
  }
  std::vector<Graph *> graphs_; ///< non-speculative graphs, for write-back
  // The registry entry of each (domain, op type, opset) met so far, by the
  // interned strings' addresses: nodes of one op resolve theirs once a run,
  // not by hashing the op's name per node.
  using EntryKey = std::pair<std::pair<const char *, const char *>, int64_t>;
  mutable llvm::DenseMap<EntryKey, const OpEntry *> entries_;
  struct RecentEntry {
    EntryKey key;
    const OpEntry *entry = nullptr;
    bool valid = false;
  };
  static constexpr size_t kRecentEntries = 64;
  mutable RecentEntry recentEntries_[kRecentEntries];

public:
  /// OpRegistry::get().lookup(n.domain(), n.opType(), opset), cached.
  const OpEntry *entryOf(const Node &n, int64_t opset) const {
    EntryKey key{{n.domain().data(), n.opType().data()}, opset};
    // A direct-mapped front for the map: a graph mixes a few ops.
    RecentEntry &r = recentEntries_[(reinterpret_cast<uintptr_t>(key.first.second) >> 3 ^
                                     uint64_t(opset)) & (kRecentEntries - 1)];
    if (r.valid && r.key == key) return r.entry;
    auto [it, inserted] = entries_.try_emplace(key, nullptr);
    if (inserted) it->second = OpRegistry::get().lookup(n.domain(), n.opType(), opset);
    r = RecentEntry{key, it->second, true};
    return it->second;
  }
};

class NodeCtx final : public InferCtx {
public:
  NodeCtx(Engine &e, Context &ctx, Node &n, int64_t opset, const OpEntry *entry = nullptr)
      : InferCtx(ctx, n, opset), e_(e) {
    if (entry) setEntry(entry);
  }
  const Type *inType(unsigned i) const override {
    return hasInput(i) ? e_.typeOf(node.operand(i)) : nullptr;
  }
  const Dims *inData(unsigned i) const override {
    if (!hasInput(i)) return nullptr;
    const Dims *d = e_.dataOf(node.operand(i));
    if (!d) e_.noteInputDefault(node.operand(i), /*asData=*/true);
    return d;
  }
  const Attribute *attr(llvm::StringRef name) const override {
    return e_.resolveAttr(node, name);
  }
  const Tensor *inConstant(unsigned i) const override {
    if (!hasInput(i)) return nullptr;
    Value *v = node.operand(i);
    if (!v->isGraphInput() && v->initializer()) return v->initializer();
    e_.noteInputDefault(v, /*asData=*/false);
    Node *d = v->definingNode();
    if (!d || !isConstantNode(*d)) return nullptr;
    const Attribute *a = e_.resolveAttr(*d, "value");
    if (!a) return nullptr;
    Tensor unused; // `value` decodes in place (Note [Constant values])
    auto t = decodeConstantAttr("value", *a, unused);
    return t.ok() ? *t : nullptr;
  }
  void setOutType(unsigned i, const Type *t) override {
    if (!hasOutput(i) || !t) return;
    if (status.ok()) status = e_.setInferred(node.result(i), t);
  }
  void setOutData(unsigned i, Dims d) override {
    if (hasOutput(i)) e_.setData(node.result(i), std::move(d));
  }
  void disagree(const std::string &why) override {
    if (status.ok()) status = e_.disagree(node, why);
  }
  const Type *typeOf(Value *v) const override { return e_.typeOf(v); }
  const Dims *dataOf(Value *v) const override { return e_.dataOf(v); }
  bool seedInput(Value *v, const Type *t) override {
    if (status.ok()) status = e_.setInferred(v, t);
    return status.ok();
  }
  bool inferBody(Graph &body) override {
    if (status.ok()) status = e_.inferBody(body, opset);
    return status.ok();
  }
  void forgetBody(Graph &body) override { e_.clearData(body); }
  bool canSpeculate() const override { return e_.canSpeculate(); }
  bool speculate(Graph &body, llvm::function_ref<bool()> fn) override {
    return e_.speculate(body, fn);
  }
  absl::Status status;

private:
  Engine &e_;
};

std::string Engine::where(Value *v) const {
  std::string s;
  llvm::SmallVector<std::string, 4> parts;
  Graph *g = v->getGraph();
  while (g) {
    Node *p = g->parentNode();
    if (!p) {
      if (Function *f = g->parentFunction()) parts.push_back("function \"" + f->qualifiedName() + "\"");
      else parts.push_back("graph \"" + g->name + "\"");
      break;
    }
    parts.push_back(absl::StrCat("node #", p->indexInGraph(), " \"", p->name().str(), "\" (",
                                 p->opType().str(), ") > attribute \"",
                                 p->getGraph() ? g->parentAttribute()->name() : "", "\""));
    g = p->getGraph();
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!s.empty()) s += " > ";
    s += *it;
  }
  if (Node *d = v->definingNode())
    s += absl::StrCat(" > node #", d->indexInGraph(), " \"", d->name().str(), "\" (",
                      d->opType().str(), ")");
  s += " > value \"" + v->name().str() + "\"";
  return s;
}

const Type *Engine::merge(const Type *d, const Type *i, bool &conflict) {
  if (!d) return i;
  if (!i || d == i) return d;
  if (d->kind() != i->kind()) {
    conflict = d->kind() != Type::Kind::None;
    return conflict ? d : i;
  }
  TypeSpec s;
  s.kind = d->kind();
  s.denotation = d->denotation().str();
  s.extras = d->extras().str();
  s.opaqueDomain = d->opaqueDomain().str();
  s.opaqueName = d->opaqueName().str();
  switch (d->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor: {
    bool dElem = d->hasElemType() && d->elemTypeRaw() != 0;
    bool iElem = i->hasElemType() && i->elemTypeRaw() != 0;
    if (dElem && iElem && d->elemTypeRaw() != i->elemTypeRaw()) {
      conflict = true;
      return d;
    }
    s.hasElem = dElem || iElem || d->hasElemType();
    s.elem = dElem ? d->elemTypeRaw() : iElem ? i->elemTypeRaw() : d->elemTypeRaw();
    if (!d->hasShape() || !i->hasShape()) {
      const Type *src = d->hasShape() ? d : i;
      s.hasShape = src->hasShape();
      s.dims.assign(src->dims().begin(), src->dims().end());
    } else {
      if (d->dims().size() != i->dims().size()) {
        conflict = true;
        return d;
      }
      s.hasShape = true;
      for (size_t k = 0; k < d->dims().size(); ++k) {
        Dim a = d->dims()[k], b = i->dims()[k];
        Dim r = a;
        if (a.isKnown()) {
          if (b.isKnown() && b.value != a.value) {
            conflict = true;
            return d;
          }
        } else if (b.isKnown()) {
          r = b;
        } else if (a.isSymbolic()) {
          // A plain symbol is refined by an expression.
          if (b.isSymbolic() && a.expr && a.expr->isSymbol() && b.expr && !b.expr->isSymbol())
            r = b;
        } else {
          r = b;
        }
        r.denotation = a.denotation;
        s.dims.push_back(r);
      }
    }
    break;
  }
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    s.inner = merge(d->elementType(), i->elementType(), conflict);
    if (conflict) return d;
    break;
  case Type::Kind::Map:
    if (d->elemTypeRaw() != i->elemTypeRaw()) {
      conflict = true;
      return d;
    }
    s.hasElem = d->hasElemType();
    s.elem = d->elemTypeRaw();
    s.inner = merge(d->elementType(), i->elementType(), conflict);
    if (conflict) return d;
    break;
  default:
    return d;
  }
  return ctx_.getType(s);
}

absl::Status Engine::disagree(Node &n, const std::string &why) {
  if (speculative_) return absl::OkStatus();
  std::string msg = nodePath(&n) + ": " + why;
  if (!opts_.inputShapes.empty()) {
    std::string given;
    for (const auto &[name, dims] : opts_.inputShapes) {
      const Type *declared = nullptr;
      for (Value *x : m_.graph().inputs())
        if (x->name() == name) declared = declaredInputs_.count(x) ? declaredInputs_[x] : nullptr;
      given += (given.empty() ? "" : "; ") + std::string("input \"") + name + "\" declared " +
               (declared ? declared->str() : "?") + ", given [" + dims + "]";
    }
    return absl::InvalidArgumentError("--input-shape: the graph contradicts the given shapes (" +
                                      given + "): first at " + msg);
  }
  ++stats_.contradictions;
  if (opts_.strict) return absl::InvalidArgumentError(msg);
  if (warnings_) warnings_->push_back(msg);
  return absl::OkStatus();
}

absl::Status Engine::setInferred(Value *v, const Type *t) {
  const Type *old = typeOf(v);
  bool conflict = false;
  const Type *nt = merge(old, t, conflict);
  if (conflict) {
    ++stats_.contradictions;
    std::string msg = where(v) + ": declared type " + old->str() + " contradicts inferred type " +
                      t->str();
    if (opts_.strict) return absl::InvalidArgumentError(msg);
    if (warnings_ && !speculative_) warnings_->push_back(msg);
    return absl::OkStatus();
  }
  if (nt == old) return absl::OkStatus();
  if (speculative_) {
    setOverlay(v, nt);
    return absl::OkStatus();
  }
  if (!old) ++stats_.valuesTyped;
  else ++stats_.valuesRefined;
  v->setType(nt);
  changed = true;
  return absl::OkStatus();
}

const Attribute *Engine::resolveAttr(const Node &n, llvm::StringRef name) const {
  const Attribute *a = n.getAttr(name);
  size_t f = frames_.size();
  while (a && a->isReference()) {
    if (f == 0) return nullptr;
    --f;
    llvm::StringRef ref = a->refAttrName;
    const Attribute *b = frames_[f].call->getAttr(ref);
    if (!b && frames_[f].fn)
      for (const auto &d : frames_[f].fn->attributeDefaults)
        if (d->name() == ref) b = d.get();
    a = b;
  }
  return a;
}

void Engine::seedConstant(Value *v, const Tensor &t) {
  if (auto d = tensorData(ctx_, t)) putData(v, std::move(*d));
}

absl::Status Engine::inferGraph(Graph &g, int64_t opset) {
  if (!speculative_) graphs_.push_back(&g);
  for (Value *v : g.initializers()) {
    if (!v->isGraphInput() && v->initializer()) {
      const Tensor &t = *v->initializer();
      if (!typeOf(v)) {
        // Its dims, all known (Note [Recent tensor types] in IR/Context.cpp:
        // a model's weights have a few shapes).
        if (auto s = setInferred(
                v, ctx_.getTensorType(t.dataType(), llvm::ArrayRef<int64_t>(t.dims())));
            !s.ok())
          return s;
      }
      seedConstant(v, t);
    }
  }
  // Node order, or a topological order when the list is not sorted (files
  // may break the rule): operands first.
  // (Inference changes no node list, so a sorted list is walked as it is.)
  bool sorted = true;
  for (Node &n : g.nodes()) {
    for (unsigned i = 0; sorted && i < n.numOperands(); ++i)
      if (Node *d = n.operand(i) ? n.operand(i)->definingNode() : nullptr)
        sorted = d->getGraph() != &g || d->isBefore(&n);
    if (!sorted) break;
  }
  if (sorted) {
    for (Node &n : g.nodes())
      if (auto s = inferNode(n, opset); !s.ok()) return s;
  } else {
    for (Node *n : topoOrder(g))
      if (auto s = inferNode(*n, opset); !s.ok()) return s;
  }
  // Graph outputs that are outer values or inputs need nothing: their types
  // are already on the value.
  return absl::OkStatus();
}

/// The nodes of `g` with every node after the nodes of `g` defining its
/// operands (cycles: the rest in list order). Iterative DFS, O(nodes + uses).
std::vector<Node *> topoOrder(Graph &g) {
  std::vector<Node *> out;
  llvm::DenseMap<Node *, uint8_t> state; // 1 visiting, 2 done
  for (Node &root : g.nodes()) {
    if (state.lookup(&root)) continue;
    std::vector<std::pair<Node *, unsigned>> stack{{&root, 0}};
    state[&root] = 1;
    while (!stack.empty()) {
      auto &[n, i] = stack.back();
      if (i < n->numOperands()) {
        Value *v = n->operand(i++);
        Node *d = v ? v->definingNode() : nullptr;
        if (d && d->getGraph() == &g && !state.lookup(d)) {
          state[d] = 1;
          stack.push_back({d, 0});
        }
        continue;
      }
      state[n] = 2;
      out.push_back(n);
      stack.pop_back();
    }
  }
  return out;
}

std::string Engine::callKey(const Node &n, const Function &f) const {
  std::string k;
  auto put = [&](const void *p) { k.append(reinterpret_cast<const char *>(&p), sizeof p); };
  auto putN = [&](uint64_t x) { k.append(reinterpret_cast<const char *>(&x), sizeof x); };
  put(&f);
  putN(n.numOperands());
  for (Value *v : n.operands()) {
    put(typeOf(v));
    const Dims *d = v ? dataOf(v) : nullptr;
    putN(d ? d->size() + 1 : 0);
    if (d)
      for (const DimExpr *x : *d) put(x);
  }
  // A reference in the body resolves through the call node's attributes
  // (resolveAttr), by name: the names and what they resolve to here.
  putN(n.numAttributes());
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    putN(a.name().size());
    k += a.name();
    put(resolveAttr(n, a.name()));
  }
  return k;
}

absl::Status Engine::inferCall(Node &n, Function &f) {
  for (const Function *x : callStack_)
    if (x == &f) return absl::OkStatus(); // recursion: leave it
  Graph &body = f.body();
  if (body.numInputs() < n.numOperands()) return absl::OkStatus();
  int64_t opset = opsetInForce(body, "");
  auto apply = [&](const CallResult &r) {
    NodeCtx c(*this, ctx_, n, opset);
    for (unsigned i = 0; i < n.numResults() && i < r.types.size(); ++i) {
      if (r.types[i]) c.setOutType(i, r.types[i]);
      if (r.data[i]) c.setOutData(i, *r.data[i]);
    }
    return c.status;
  };
  std::string key = callKey(n, f);
  if (auto it = callMemo_.find(key); it != callMemo_.end()) return apply(it->second);
  callWork_ += body.numNodes() + 1;
  if (callWork_ > workBudget_) return absl::OkStatus();
  unsigned freshBefore = ctx_.numFreshSymbols();
  ++speculative_;
  callStack_.push_back(&f);
  frames_.push_back(Frame{&n, &f});
  size_t mark = overlayMark();
  clearData(body);
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    if (!n.operand(i)) continue;
    setOverlay(body.input(i), typeOf(n.operand(i)));
    if (const Dims *d = dataOf(n.operand(i))) putData(body.input(i), *d);
    else data_.erase(body.input(i));
  }
  absl::Status s = inferGraph(body, opset);
  CallResult r;
  for (unsigned i = 0; i < body.numOutputs(); ++i) {
    r.types.push_back(typeOf(body.output(i)));
    const Dims *d = dataOf(body.output(i));
    r.data.push_back(d ? std::optional<Dims>(*d) : std::nullopt);
  }
  rollbackOverlay(mark);
  frames_.pop_back();
  callStack_.pop_back();
  --speculative_;
  if (!s.ok()) return s;
  if (ctx_.numFreshSymbols() == freshBefore) callMemo_[key] = r;
  return apply(r);
}

/// `t` without shapes (a type variable binds types, not shapes).
const Type *shapeless(Context &ctx, const Type *t) {
  if (!t) return nullptr;
  TypeSpec s;
  s.kind = t->kind();
  switch (t->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (!t->hasElemType() || !t->elemTypeRaw()) return nullptr;
    s.hasElem = true;
    s.elem = t->elemTypeRaw();
    return ctx.getType(s);
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    s.inner = shapeless(ctx, t->elementType());
    return s.inner ? ctx.getType(s) : nullptr;
  case Type::Kind::Map:
    s.hasElem = t->hasElemType();
    s.elem = t->elemTypeRaw();
    s.inner = shapeless(ctx, t->elementType());
    return s.inner ? ctx.getType(s) : nullptr;
  default:
    return nullptr;
  }
}

/// Whether shapeless(t) is a type, without making it.
bool hasShapelessForm(const Type *t) {
  if (!t) return false;
  switch (t->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    return t->hasElemType() && t->elemTypeRaw();
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
  case Type::Kind::Map:
    return hasShapelessForm(t->elementType());
  default:
    return false;
  }
}

/// The type a schema type string names (`tensor(int64)`, `seq(tensor(float))`,
/// `optional(...)`), without shapes; null for anything else.
const Type *typeFromString(Context &ctx, llvm::StringRef str) {
  auto inner = [&](llvm::StringRef pre) -> std::optional<llvm::StringRef> {
    if (!startsWith(str, pre) || !endsWith(str, ")")) return std::nullopt;
    return str.drop_front(pre.size()).drop_back();
  };
  if (auto e = inner("tensor(")) {
    auto dt = dataTypeFromName(*e);
    if (!dt) return nullptr;
    TypeSpec s;
    s.kind = Type::Kind::Tensor;
    s.hasElem = true;
    s.elem = static_cast<int32_t>(*dt);
    return ctx.getType(s);
  }
  if (auto e = inner("seq(")) {
    const Type *t = typeFromString(ctx, *e);
    return t ? ctx.getSequenceType(t) : nullptr;
  }
  if (auto e = inner("optional(")) {
    const Type *t = typeFromString(ctx, *e);
    return t ? ctx.getOptionalType(t) : nullptr;
  }
  return nullptr;
}

/// Types of results from the schema alone: a concrete formal type, a type
/// variable with a single allowed type, or one bound by a typed operand.
void schemaFallback(InferCtx &c, const Engine &e) {
  // c.schema(), through the engine's cache.
  const OpEntry *en = e.entryOf(c.node, c.opset);
  const OpSchema *s = en ? en->schema : nullptr;
  if (!s) return;
  for (unsigned i = 0; i < c.numOutputs(); ++i) {
    if (!c.hasOutput(i)) continue;
    const Type *have = e.typeOf(c.node.result(i));
    if (hasShapelessForm(have)) continue;
    const FormalParameter *f = s->outputFor(i);
    // Actuals of a heterogeneous variadic do not share one type.
    if (!f || (f->isVariadic() && !f->homogeneous)) continue;
    const Type *t = nullptr;
    if (!f->constraint) {
      t = typeFromString(c.ctx, f->typeStr);
    } else if (f->constraint->allowed.size() == 1) {
      t = typeFromString(c.ctx, f->constraint->allowed[0]);
    } else {
      for (unsigned j = 0; j < c.numInputs() && !t; ++j) {
        const FormalParameter *fi = s->inputFor(j);
        if (fi && fi->typeStr == f->typeStr && !(fi->isVariadic() && !fi->homogeneous))
          t = shapeless(c.ctx, c.inType(j));
      }
    }
    if (t) c.setOutType(i, t);
  }
}

absl::Status Engine::inferNode(Node &n, int64_t opset) {
  if (speculative_ > specBase_) ++specWork_;
  absl::Status st = inferNodeByRule(n, opset);
  if (!st.ok() || n.numResults() == 0) return st;
  int64_t v = isDefaultDomain(n.domain()) ? opset : opsetInForce(n);
  if (v < 0 || (!isDefaultDomain(n.domain()) && m_.findFunction(n))) return st;
  NodeCtx c(*this, ctx_, n, v);
  schemaFallback(c, *this);
  return c.status;
}

absl::Status Engine::inferNodeByRule(Node &n, int64_t opset) {
  bool defaultDomain = isDefaultDomain(n.domain());
  if (!defaultDomain) {
    if (Function *f = m_.findFunction(n)) return inferCall(n, *f);
    opset = opsetInForce(n);
    if (Function *f = libraryBody(n, opset)) return inferCall(n, *f);
  }
  const OpEntry *e = entryOf(n, opset);
  // Subgraphs first (what an op without a rule computes still gets types),
  // unless the rule infers them itself (control flow).
  if (n.hasSubgraphs() && !(e && e->infer && e->infersSubgraphs))
    for (Graph *g : n.subgraphs())
      if (auto s = inferGraph(*g, opset); !s.ok()) return s;
  if (!e || !e->infer) {
    if (defaultDomain)
      if (Function *f = m_.findFunction(n)) return inferCall(n, *f);
    ++stats_.nodesNotInferred;
    return absl::OkStatus();
  }
  NodeCtx c(*this, ctx_, n, opset, e);
  e->infer(c);
  return c.status;
}

/// An op-library op declared with a function body and no shape rule is
/// inferred as a call of its body (the way a model-local function is); the
/// body is parsed once per run.
Function *Engine::libraryBody(const Node &n, int64_t opset) {
  if (!isLibraryDomain(n.domain())) return nullptr;
  const OpEntry *e = entryOf(n, opset);
  if (!e || e->infer || !e->schema || e->schema->functionBodies().empty()) return nullptr;
  const FunctionBody &b = e->schema->functionBodies().front();
  for (auto &[s, f] : libraryBodies_)
    if (s == e->schema) return f;
  auto f = parseFunctionBody(m_, *e->schema, b);
  if (!f.ok()) return nullptr; // checked when the library was read
  libraryBodies_.emplace_back(e->schema, *f);
  return *f;
}

absl::Status Engine::applyOptions() {
  Graph &g = m_.graph();
  for (const auto &[name, text] : opts_.inputShapes) {
    Value *v = nullptr;
    for (Value *x : g.inputs())
      if (x->name() == name) v = x;
    if (!v) {
      std::string inputs; // those an initializer does not give a value
      for (Value *x : g.inputs())
        if (!x->initializer()) inputs += (inputs.empty() ? "\"" : ", \"") + x->name().str() + "\"";
      return absl::InvalidArgumentError("--input-shape: the main graph has no input \"" + name +
                                        "\" (" +
                                        (inputs.empty() ? std::string("it has none")
                                                        : "its inputs: " + inputs) +
                                        ")");
    }
    const Type *t = v->type();
    if (!t || !t->isTensor() || !t->hasElemType())
      return absl::InvalidArgumentError("--input-shape: input \"" + name +
                                        "\" has no tensor element type");
    std::vector<Dim> dims;
    llvm::SmallVector<llvm::StringRef, 8> parts;
    if (!llvm::StringRef(text).trim().empty()) llvm::StringRef(text).split(parts, ',');
    for (llvm::StringRef p : parts) {
      p = p.trim();
      if (p == "?") {
        dims.push_back(Dim::unknown());
        continue;
      }
      std::string err;
      const DimExpr *e = parseDimExpr(ctx_, p, &err);
      if (!e || (e->isConstant() && e->value() < 0))
        return absl::InvalidArgumentError("--input-shape: bad dimension \"" + p.str() + "\" for \"" +
                                          name + "\"" + (err.empty() ? "" : ": " + err));
      dims.push_back(ctx_.dimOf(e));
    }
    // The given shape must fit the declared one: same rank, same static
    // dims; symbolic and unknown dims may be fixed.
    auto shapeText = [&]() {
      std::string r = "[";
      for (size_t i = 0; i < dims.size(); ++i) {
        llvm::StringRef p = i < parts.size() ? parts[i].trim() : llvm::StringRef("?");
        r += (i ? "," : "") + p.str();
      }
      return r + "]";
    };
    auto firstUse = [&]() -> std::string {
      for (const Use &u : v->uses())
        if (u.getOwner()) return " (first use: " + nodePath(u.getOwner()) + ")";
      return "";
    };
    if (t->hasShape() && (size_t)t->rank() != dims.size())
      return absl::InvalidArgumentError(
          "--input-shape: input \"" + name + "\" is declared " + t->str() + " (rank " +
          std::to_string(t->rank()) + "); the given shape " + shapeText() + " has rank " +
          std::to_string(dims.size()) + firstUse() + "; nothing was written");
    if (t->hasShape())
      for (size_t i = 0; i < dims.size(); ++i) {
        const Dim &d = t->dims()[i];
        if (d.isKnown() && dims[i].isKnown() && d.value != dims[i].value)
          return absl::InvalidArgumentError(
              "--input-shape: input \"" + name + "\" is declared " + t->str() +
              "; the given shape " + shapeText() + " has " + std::to_string(dims[i].value) +
              " at dim " + std::to_string(i) + " where the model declares " +
              std::to_string(d.value) + firstUse() + "; nothing was written");
        if (d.isKnown() && !dims[i].isKnown()) dims[i] = d; // `?` keeps a static dim
      }
    declaredInputs_[v] = t;
    TypeSpec s;
    s.kind = Type::Kind::Tensor;
    s.hasElem = true;
    s.elem = t->elemTypeRaw();
    s.hasShape = true;
    s.dims = dims;
    s.denotation = t->denotation().str();
    // Applied again in every round of -O1/-O2: the same shape is no change
    // (types are uniqued), or the pipeline never reaches its fixed point.
    const Type *given = ctx_.getType(s);
    if (given != t) {
      v->setType(given);
      changed = true;
    }
  }
  if (opts_.bindDims.empty()) return absl::OkStatus();
  llvm::StringMap<int64_t> bind;
  for (const auto &[k, v] : opts_.bindDims) bind[k] = v;
  // A symbol the model's inputs do not have is a typo, not a no-op.
  {
    std::set<std::string> symbols; // dim_params: symbols, or expressions such as "2*N"
    for (Value *x : g.inputs())
      if (const Type *t = x->type(); t && t->isTensor() && t->hasShape())
        for (const Dim &d : t->dims())
          if (d.isSymbolic()) symbols.insert(d.param.str());
    // Whether `name` stands in the expression `e` as a whole identifier ("N" is in "2*N", not in
    // "NB").
    auto mentions = [](const std::string &e, const std::string &name) {
      auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      for (size_t at = e.find(name); at != std::string::npos; at = e.find(name, at + 1))
        if ((at == 0 || !ident(e[at - 1])) &&
            (at + name.size() == e.size() || !ident(e[at + name.size()])))
          return true;
      return false;
    };
    for (const auto &bound : opts_.bindDims) {
      const std::string &k = bound.first;
      if (!symbols.count(k) &&
          std::none_of(symbols.begin(), symbols.end(),
                       [&](const std::string &e) { return mentions(e, k); })) {
        std::string list;
        for (const std::string &s : symbols) list += (list.empty() ? "" : ", ") + s;
        return absl::InvalidArgumentError(
            "--bind-dim: the model has no symbol \"" + k + "\" in its input shapes (" +
            (list.empty() ? std::string("it has none") : "its symbols: " + list) + ")");
      }
    }
  }
  auto rebind = [&](const Type *t) -> const Type * {
    if (!t || !t->isTensor() || !t->hasShape()) return t;
    TypeSpec s;
    s.kind = t->kind();
    s.hasElem = t->hasElemType();
    s.elem = t->elemTypeRaw();
    s.hasShape = true;
    s.denotation = t->denotation().str();
    s.extras = t->extras().str();
    bool any = false;
    for (const Dim &d : t->dims()) {
      Dim r = d;
      if (d.isSymbolic()) {
        const DimExpr *e = dimSubstitute(ctx_, ctx_.exprOf(d), [&](const DimExpr *sym) -> const DimExpr * {
          auto it = bind.find(sym->name());
          return it == bind.end() ? nullptr : dimConst(ctx_, it->second);
        });
        if (e != d.expr) {
          r = ctx_.dimOf(e);
          r.denotation = d.denotation;
          any = true;
        }
      }
      s.dims.push_back(r);
    }
    return any ? ctx_.getType(s) : t;
  };
  for (Value *v : g.inputs())
    if (const Type *t = rebind(v->type()); t != v->type()) {
      v->setType(t);
      changed = true;
    }
  return absl::OkStatus();
}

absl::Status Engine::writeBack() {
  // Every value some graph returns: a value outside it is no graph output,
  // known without walking its uses (isGraphOutput, a miss per value).
  llvm::DenseSet<const Value *> returned;
  m_.walkGraphs([&](Graph *g) {
    for (unsigned i = 0; i < g->numOutputs(); ++i)
      if (g->output(i)) returned.insert(g->output(i));
  });
  for (Graph *g : graphs_) {
    for (unsigned i = 0; i < g->numOutputs(); ++i) {
      Value *v = g->output(i);
      if (!v || !v->type()) continue;
      OutputInfo &info = g->outputInfo(i);
      bool conflict = false;
      const Type *t = merge(info.hasType ? info.type : nullptr, v->type(), conflict);
      if (conflict) {
        ++stats_.contradictions;
        std::string msg = where(v) + ": declared output type " + info.type->str() +
                          " contradicts inferred type " + v->type()->str();
        if (opts_.strict) return absl::InvalidArgumentError(msg);
        if (warnings_) warnings_->push_back(msg);
      } else if (t != info.type || !info.hasType) {
        info.type = t;
        info.hasType = true;
        changed = true;
      }
    }
    if (opts_.outputsOnly) continue;
    for (Node &n : g->nodes())
      for (unsigned k = 0, e = n.numResults(); k < e; ++k) {
        Value *v = n.result(k);
        if (!v || !v->type() || (returned.count(v) && v->isGraphOutput())) continue;
        if (ValueInfoRecord *r = v->valueInfo()) {
          if (!r->hasType) {
            r->hasType = true;
            changed = true;
          }
          continue;
        }
        ValueInfoRecord &r = g->addValueInfo(v);
        r.hasType = true;
        ++stats_.valueInfosAdded;
        changed = true;
      }
  }
  return absl::OkStatus();
}

absl::Status Engine::dryRun() {
  if (!m_.hasGraph) return absl::OkStatus();
  setWorkBudget();
  ++speculative_; // stays raised: typeOf() then reads the overlay
  specBase_ = speculative_;
  return inferGraph(m_.graph(), opsetInForce(m_.graph(), ""));
}

absl::Status Engine::run() {
  if (auto s = applyOptions(); !s.ok()) return s;
  if (!m_.hasGraph) return absl::OkStatus();
  setWorkBudget();
  int64_t opset = opsetInForce(m_.graph(), "");
  if (auto s = inferGraph(m_.graph(), opset); !s.ok()) return s;
  return writeBack();
}

} // namespace
} // namespace infer

absl::StatusOr<bool> inferShapes(Model &m, const ShapeInferenceOptions &opts,
                                 ShapeInferenceStatistics *stats,
                                 std::vector<std::string> *warnings) {
  ShapeInferenceStatistics local;
  infer::Engine e(m, opts, stats ? *stats : local, warnings);
  if (auto s = e.run(); !s.ok()) return s;
  return e.changed;
}

absl::StatusOr<llvm::DenseMap<const Value *, KnownShapeData>> inferShapeData(Model &m,
                                                                             uint64_t dataLimit) {
  ShapeInferenceStatistics st;
  ShapeInferenceOptions opts;
  opts.dataLimit = dataLimit;
  infer::Engine e(m, opts, st, nullptr);
  if (auto s = e.dryRun(); !s.ok()) return s;
  llvm::DenseMap<const Value *, KnownShapeData> out;
  for (auto &[v, d] : e.data()) {
    if (!v->definingNode() || v->getGraph()->parentFunction()) continue;
    const Type *t = e.typeOf(v);
    if (!t || !t->isTensor() || !t->hasShape() || t->rank() > 1 || !t->hasElemType()) continue;
    DataType dt = t->elemType();
    if (dt != DataType::Int64 && dt != DataType::Int32 && dt != DataType::Bool) continue;
    KnownShapeData k;
    k.elem = t->elemTypeRaw();
    k.scalar = t->rank() == 0;
    bool ground = true;
    for (const DimExpr *x : d) {
      if (!x || !x->isConstant()) {
        ground = false;
        break;
      }
      k.values.push_back(x->value());
    }
    if (!ground || (k.scalar && k.values.size() != 1)) continue;
    if (!k.scalar && (!t->dims()[0].isKnown() || t->dims()[0].value != (int64_t)k.values.size()))
      continue;
    out[v] = std::move(k);
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
parseInputShapes(const std::string &text) {
  std::vector<std::pair<std::string, std::string>> out;
  llvm::SmallVector<llvm::StringRef, 4> entries;
  llvm::StringRef(text).split(entries, ';', -1, false);
  for (llvm::StringRef e : entries) {
    e = e.trim();
    size_t colon = e.rfind(':');
    if (colon == llvm::StringRef::npos || colon == 0)
      return absl::InvalidArgumentError("--input-shape: expected NAME:DIMS, got \"" + e.str() + "\"");
    out.emplace_back(e.substr(0, colon).str(), e.substr(colon + 1).str());
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, int64_t>>>
parseBindDims(const std::string &text) {
  std::vector<std::pair<std::string, int64_t>> out;
  llvm::SmallVector<llvm::StringRef, 4> entries;
  llvm::StringRef(text).split(entries, text.find(';') != std::string::npos ? ';' : ',', -1, false);
  for (llvm::StringRef e : entries) {
    e = e.trim();
    auto [k, v] = e.split('=');
    int64_t x;
    if (k.trim().empty() || v.trim().getAsInteger(10, x) || x < 0)
      return absl::InvalidArgumentError("--bind-dim: expected SYMBOL=VALUE (VALUE >= 0), got \"" +
                                        e.str() + "\"");
    // Repeated flags are joined (onnx-opt --bind-dim a=1 --bind-dim b=2):
    // one symbol bound to two values is a contradiction, not "the last wins".
    for (const auto &[sym, value] : out)
      if (sym == k.trim() && value != x)
        return absl::InvalidArgumentError("--bind-dim: symbol \"" + sym + "\" is bound twice (" +
                                          std::to_string(value) + " and " + std::to_string(x) +
                                          ")");
    out.emplace_back(k.trim().str(), x);
  }
  return out;
}

namespace {
class InferShapesPass : public OptionsPass<ShapeInferenceOptions> {
public:
  InferShapesPass()
      : OptionsPass("infer-shapes",
                    "Infer element types and (symbolic) shapes of every value; writes value_info") {}
  // The list options are parsed when set, so that a bad one is reported
  // before anything runs.
  absl::Status validateOptions() override {
    inputShapes_.clear();
    bindDims_.clear();
    if (inputShape_.isSet()) {
      auto r = parseInputShapes(*inputShape_);
      if (!r.ok()) return r.status();
      inputShapes_ = *r;
    }
    if (bindDim_.isSet()) {
      auto r = parseBindDims(*bindDim_);
      if (!r.ok()) return r.status();
      bindDims_ = *r;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    ShapeInferenceOptions o = optionValues();
    o.inputShapes = inputShapes_;
    o.bindDims = bindDims_;
    ShapeInferenceStatistics st;
    std::vector<std::string> warnings;
    auto r = inferShapes(m, o, &st, &warnings);
    // Binding is done once (Note [Pipeline policy]): after it the symbols
    // are gone, and the next round of -O1/-O2 would report them missing.
    if (r.ok()) bindDims_.clear();
    for (std::string &w : warnings) warn(std::move(w));
    addStats(st);
    return r;
  }

private:
  std::vector<std::pair<std::string, std::string>> inputShapes_;
  std::vector<std::pair<std::string, int64_t>> bindDims_;
  Option<std::string> inputShape_{*this, "input-shape",
                                  "fix main-graph input shapes, NAME:DIMS[;NAME:DIMS...] (e.g. "
                                  "x:1,3,224,224 or x:N,3,H,W)",
                                  "", "input-shape"};
  Option<std::string> bindDim_{*this, "bind-dim",
                               "fix symbols before inference, SYMBOL=VALUE[;...]", "",
                               "bind-dim"};
  Field<bool> outputsOnly_{*this, &ShapeInferenceOptions::outputsOnly, "outputs-only",
                           "only type graph outputs (no value_info)", "infer-shapes-outputs-only"};
  Field<bool> strict_{*this, &ShapeInferenceOptions::strict, "strict",
                      "a declared type that contradicts inference is an error",
                      "infer-shapes-strict"};
  Field<uint64_t> dataLimit_{*this, &ShapeInferenceOptions::dataLimit, "data-limit",
                             "most elements of shape data tracked for one value",
                             "shape-data-limit"};
};
} // namespace

void registerShapeInferencePass() {
  PassRegistry::instance().registerPass([] { return std::make_unique<InferShapesPass>(); });
}

} // namespace onnxir
