//===- ConstantFolding.cpp - The fold-constants pass ----------------------===//
//
// One round: (1) evaluate, in a pre-order walk of every graph, each node whose
// inputs are known constants, keeping results in memory and freeing them as
// soon as no later fold needs them; (2) group folded nodes into components
// and accept them within the budget (Note [Fold budget] in the header);
// (3) commit: materialize the results that unfolded users still need, erase
// the folded nodes and the constants that died, restore the names. Then
// inline If nodes whose condition became constant, and go again.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/ConstantFolding.h"

#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Residency.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/FunctionBodies.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>

namespace onnxir {
namespace {

/// A top-level graph (main graph or function body) and its default opset.
struct Scope {
  Graph *graph;
  int64_t opset;
  bool isFunctionBody;
};

/// True if `g` is the body of a function (no initializers allowed there).
bool isFunctionTop(const Graph *g) { return g->parentFunction() && !g->parentNode(); }

struct Known {
  const Tensor *tensor = nullptr;     // the value (owned below, or in the IR)
  std::unique_ptr<Tensor> owned;      // a folded result or a Constant's value
  Node *producer = nullptr;           // folded node; null for sources
  Node *constantNode = nullptr;       // for values of Constant nodes
  unsigned pending = 0;               // uses not yet visited
  bool frontier = false;              // needed by an unfolded user
};

class Folder {
public:
  Folder(Model &m, const FoldOptions &o, FoldStatistics &s) : model_(m), opts_(o), stats_(s) {}

  /// One round over every scope; true if the IR changed.
  bool runRound();
  /// Inlines If nodes with a constant condition; true if any.
  bool inlineIfs();

  int64_t growthUsed = 0;

private:
  std::vector<Scope> scopes();
  Known *lookupKnown(Value *v);
  bool isSourceValue(Value *v) const;
  bool blockedByInputDefault(Node *n, unsigned from) const;
  void evaluate(Node *n, int64_t opset);
  void visitUses(Node *n);
  void noteNewKnown(Value *v, Known &k);
  std::vector<Node *> select();
  bool commit(const std::vector<Node *> &accepted);
  bool foldFromShapeData(Node *n);
  void addFolded(Node *n, std::vector<Tensor> results);
  void collectDeclaredTypes(Graph &g);
  bool declaredTypesAgree(Value *v, const Tensor &t) const;
  void warnIfDeclaredShapeDiffers(const Node &n, Value *r, const Tensor &t);

public:
  /// Note [Folded shapes against declarations].
  std::vector<std::string> *warnings = nullptr;

private:

  Model &model_;
  const FoldOptions &opts_;
  FoldStatistics &stats_;
  llvm::DenseMap<Value *, std::unique_ptr<Known>> known_;
  llvm::DenseSet<Node *> visited_;
  std::vector<Node *> folded_; // in evaluation order
  llvm::DenseSet<Node *> foldedSet_;
  // Contents of shape computations that shape inference knows.
  llvm::DenseMap<const Value *, KnownShapeData> shapeData_;
  // Element types declared for values besides Value::type(): a graph output's
  // declaration and value_info records (Note [Declared element types]).
  llvm::DenseMap<const Value *, llvm::SmallVector<int32_t, 1>> declared_;
};

std::vector<Scope> Folder::scopes() {
  std::vector<Scope> s;
  s.push_back({&model_.graph(), opsetInForce(model_.graph(), ""), false});
  for (auto &f : model_.functions()) s.push_back({&f->body(), opsetInForce(f->body(), ""), true});
  return s;
}

/// Note [Fold declines]: operand `from` of `n` and the ones after it are
/// each absent, known, a constant or the default of a graph input (an
/// initializer that is also an input), and one at least is such a default:
/// that default alone keeps `n` from folding (freeze-initializer-inputs
/// would let it fold).
bool Folder::blockedByInputDefault(Node *n, unsigned from) const {
  bool any = false;
  for (unsigned i = from; i < n->numOperands(); ++i) {
    Value *v = n->operand(i);
    if (!v || known_.count(v) || isSourceValue(v)) continue;
    if (!v->isGraphInput() || !v->initializer()) return false;
    any = true;
  }
  return any;
}

bool Folder::isSourceValue(Value *v) const {
  if (v->isConstantInitializer()) return true;
  Node *d = v->definingNode();
  return d && isConstantNode(*d) && d->numOperands() == 0;
}

void Folder::noteNewKnown(Value *v, Known &k) {
  k.pending = 0;
  for (Use &u : v->uses()) {
    Node *owner = u.getOwner();
    ++k.pending;
    // A graph output, or a user already passed over without folding.
    if (owner->isReturn() || (visited_.count(owner) && !foldedSet_.count(owner))) {
      k.frontier = true;
      --k.pending;
    }
  }
}

Known *Folder::lookupKnown(Value *v) {
  if (!v) return nullptr;
  auto it = known_.find(v);
  if (it != known_.end()) return it->second.get();
  if (!isSourceValue(v)) return nullptr;
  auto k = std::make_unique<Known>();
  if (v->isConstantInitializer()) {
    k->tensor = v->initializer();
  } else {
    Node *c = v->definingNode();
    auto r = constantValue(*c);
    if (!r.ok()) return nullptr;
    k->owned = std::make_unique<Tensor>(std::move(*r));
    k->tensor = k->owned.get();
    k->constantNode = c;
  }
  Known *raw = k.get();
  known_[v] = std::move(k);
  return raw;
}

/// Marks the uses by `n` (just visited) of known values; frees buffers that
/// no pending fold needs any more.
void Folder::visitUses(Node *n) {
  bool isFolded = foldedSet_.count(n);
  for (unsigned i = 0; i < n->numOperands(); ++i) {
    Value *v = n->operand(i);
    if (!v) continue;
    auto it = known_.find(v);
    if (it == known_.end()) continue;
    Known &k = *it->second;
    if (!k.producer) continue; // sources stay in the IR anyway
    if (!isFolded) k.frontier = true;
    if (k.pending) --k.pending;
    if (k.pending == 0 && !k.frontier) {
      k.owned.reset(); // no longer needed: free the intermediate buffer
      k.tensor = nullptr;
    }
  }
}

// Note [Folding through function bodies]
// An op of another domain that has no kernel but a function body (an op
// library's, Ops/OpLibrary.h) folds by running its body node by node on the
// kernels, as expand-functions and then fold-constants would, without
// changing the graph: the body's attribute references take the node's
// attributes or the body's defaults, each body node runs at the opset its
// body imports, and a body node that is such an op itself runs its own
// body (four levels at most). A body node with no kernel, a kernel that
// fails, or a result over the size budget declines the fold (counted as
// unsupported or over budget). Bodies are parsed once per text.
const Function *libraryBody(const OpSchema &s, int64_t opset) {
  const FunctionBody *b = s.functionBodyFor(opset);
  if (!b && !s.functionBodies().empty()) b = &s.functionBodies().front();
  if (!b) return nullptr;
  static std::mutex mu;
  static std::map<std::string, std::pair<std::unique_ptr<Model>, const Function *>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(b->text.str());
  if (it != cache.end()) return it->second.second;
  auto m = std::make_unique<Model>();
  auto f = parseFunctionBody(*m, s, *b);
  const Function *fn = f.ok() ? *f : nullptr;
  cache.emplace(b->text.str(), std::make_pair(std::move(m), fn));
  return fn;
}

absl::StatusOr<std::vector<Tensor>> runBody(const Function &f, const Node &call,
                                            llvm::ArrayRef<const Tensor *> inputs,
                                            uint64_t maxBytes, int depth) {
  if (depth > 4) return absl::UnimplementedError("function bodies nested too deep");
  const Graph &body = f.body();
  llvm::DenseMap<const Value *, const Tensor *> env;
  std::vector<std::unique_ptr<Tensor>> owned;
  for (unsigned i = 0; i < body.numInputs(); ++i)
    env[body.input(i)] = i < inputs.size() ? inputs[i] : nullptr;
  auto versionOf = [&](llvm::StringRef domain) -> int64_t {
    for (const OpsetImport &o : f.opsetImports)
      if (o.domain == domain || ((o.domain.empty() || o.domain == "ai.onnx") &&
                                 (domain.empty() || domain == "ai.onnx")))
        return o.version;
    return -1;
  };
  for (const Node &n : body.nodes()) {
    if (n.hasSubgraphs()) return absl::UnimplementedError("a body node holds a subgraph");
    // Attributes, references resolved (Note [Folding through function bodies]).
    std::vector<std::unique_ptr<Attribute>> resolved;
    std::vector<const Attribute *> attrs;
    for (unsigned i = 0; i < n.numAttributes(); ++i) {
      const Attribute &a = n.attribute(i);
      if (!a.isReference()) {
        attrs.push_back(&a);
        continue;
      }
      const Attribute *src = call.getAttr(a.refAttrName.str());
      if (!src)
        for (const auto &d : f.attributeDefaults)
          if (d->name() == a.refAttrName.str()) src = d.get();
      if (!src) continue; // unset: the body node's own default
      if (src->numGraphs()) return absl::UnimplementedError("a graph attribute");
      auto c = std::make_unique<Attribute>(a.name());
      static_cast<AttributePayload &>(*c) = static_cast<const AttributePayload &>(*src);
      c->setKind(src->kind());
      attrs.push_back(c.get());
      resolved.push_back(std::move(c));
    }
    std::vector<const Tensor *> in;
    for (Value *v : n.operands()) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      auto it = env.find(v);
      if (it == env.end() || !it->second)
        return absl::UnimplementedError("a body value is not known");
      in.push_back(it->second);
    }
    int64_t opset = versionOf(n.domain());
    const OpEntry *op = OpRegistry::get().lookup(n.domain(), n.opType(), opset);
    absl::StatusOr<std::vector<Tensor>> r;
    if (op && op->kernel) {
      KernelCall kc(n.domain(), n.opType(), opset, attrs);
      kc.inputs = in;
      kc.numOutputs = n.numResults();
      kc.maxOutputBytes = maxBytes;
      r = evaluateKernel(kc);
    } else if (const Function *g = op && op->schema && !isDefaultDomain(n.domain())
                                       ? libraryBody(*op->schema, opset) : nullptr) {
      r = runBody(*g, n, in, maxBytes, depth + 1);
    } else {
      return absl::UnimplementedError(absl::StrCat("no kernel for ", n.opType().str()));
    }
    if (!r.ok()) return r.status();
    for (unsigned i = 0; i < n.numResults() && i < r->size(); ++i) {
      owned.push_back(std::make_unique<Tensor>(std::move((*r)[i])));
      if (n.result(i)) env[n.result(i)] = owned.back().get();
    }
  }
  std::vector<Tensor> out;
  for (unsigned i = 0; i < body.numOutputs(); ++i) {
    auto it = env.find(body.output(i));
    if (it == env.end() || !it->second)
      return absl::UnimplementedError("a body output is not computed");
    out.push_back(*it->second);
  }
  return out;
}

// Note [Size limit before the kernel]
// A result whose type is static already tells its size. Over the size limit,
// the fold is declined before the kernel runs: the kernel would read all of
// its inputs (a Transpose of a 500 MB weight faults in 500 MB of a mapped
// file) and allocate the whole result, only to be refused by its size
// afterwards; on a decoder with GBs of weights behind Transpose, Cast and
// the like that was the pass's peak memory (bench/README, issue 44 item 5).
// The type is inference's or the model's declaration; one that contradicts
// what the kernel would compute can only keep a fold out, never let a big
// result in, since the kernel's own check (maxOutputBytes) stays.
static bool typeOverSizeLimit(const Node &n, uint64_t limit) {
  for (unsigned i = 0; i < n.numResults(); ++i) {
    const Value *v = n.result(i);
    const Type *t = v ? v->type() : nullptr;
    if (!t || !t->isTensor() || !t->hasShape() || !t->isStatic() || !t->hasElemType() ||
        t->elemTypeRaw() == 0 || dataTypeBits(t->elemType()) == 0)
      continue;
    uint64_t count = 1;
    for (const Dim &d : t->dims())
      count = (uint64_t)d.value > UINT64_MAX / std::max<uint64_t>(count, 1)
                  ? UINT64_MAX
                  : count * (uint64_t)d.value;
    if (count == UINT64_MAX || dataTypeStorageBytes(t->elemType(), count) > limit) return true;
  }
  return false;
}

void Folder::evaluate(Node *n, int64_t opset) {
  if (isConstantNode(*n) || n->hasSubgraphs()) return;
  if (!isDefaultDomain(n->domain())) opset = opsetInForce(*n);
  const OpEntry *op = OpRegistry::get().lookup(n->domain(), n->opType(), opset);
  // Why a node with constant inputs is still not evaluated (counted once its
  // inputs are known to be constant; Note [Fold declines] in the header).
  // Other domains: only what the registry has a kernel for (an operator
  // registered with its schema, OpRegistry.h).
  int64_t *decline = nullptr;
  const Function *body = !isDefaultDomain(n->domain()) && op && !op->kernel && op->schema
                             ? libraryBody(*op->schema, opset) : nullptr;
  if (!isDefaultDomain(n->domain()) && (!op || !op->kernel) && !body) decline = &stats_.unsupported;
  else if (!isDefaultDomain(n->domain()) && hasSideEffects(*n)) decline = &stats_.sideEffects;
  else if (!isDeterministic(*n)) decline = &stats_.nondeterministic;
  // Note [Dequantize stays]
  // A DequantizeLinear of a constant is how a quantized model stores its
  // weights (int8/int4 initializer -> DQ -> MatMul/Conv, the QDQ format):
  // folding it writes the float weights back, four to eight times the bytes,
  // and runtimes no longer see the Q/DQ pairs they fuse into integer
  // kernels. It is folded only when asked ({fold-dq=true}).
  else if (!opts_.foldDequantize && n->opType() == "DequantizeLinear" &&
           (isDefaultDomain(n->domain()) || n->domain() == "com.microsoft"))
    decline = &stats_.dequantizeKept;
  for (unsigned i = 0; i < n->numAttributes(); ++i)
    if (n->attribute(i).isReference()) return;
  bool anyResult = false;
  for (unsigned i = 0; i < n->numResults(); ++i) anyResult |= n->result(i) != nullptr;
  if (!anyResult) return;

  std::vector<const Tensor *> inputs;
  std::vector<std::unique_ptr<Tensor>> shapeOnly;
  bool shapeOp = op && op->shapeOnly && opts_.foldShapes;
  for (unsigned i = 0; i < n->numOperands(); ++i) {
    Value *v = n->operand(i);
    if (!v) { inputs.push_back(nullptr); continue; }
    Known *k = lookupKnown(v);
    if (k && k->tensor) { inputs.push_back(k->tensor); continue; }
    // Shape/Size need only the dims: take them from a static type.
    const Type *t = v->type();
    if (shapeOp && i == 0 && t && t->isTensor() && t->hasShape() && t->isStatic()) {
      auto fake = std::make_unique<Tensor>();
      fake->setDataType(t->elemType());
      std::vector<int64_t> dims;
      for (const Dim &d : t->dims()) dims.push_back(d.value);
      fake->setDims(std::move(dims));
      inputs.push_back(fake.get());
      shapeOnly.push_back(std::move(fake));
      continue;
    }
    if (!decline && !foldFromShapeData(n) && blockedByInputDefault(n, i))
      ++stats_.inputDefaults;
    return;
  }
  if (decline) {
    ++*decline;
    return;
  }
  if ((!op || !op->kernel) && !body) {
    ++stats_.unsupported;
    return;
  }
  if (typeOverSizeLimit(*n, opts_.sizeLimit)) {
    ++stats_.rejectedBySize;
    return;
  }
  absl::StatusOr<std::vector<Tensor>> r;
  if (body) { // Note [Folding through function bodies]
    r = runBody(*body, *n, inputs, opts_.sizeLimit, 0);
    if (!r.ok() && r.status().code() == absl::StatusCode::kUnimplemented) {
      ++stats_.unsupported;
      return;
    }
  } else {
    std::vector<const Attribute *> attrs;
    for (unsigned i = 0; i < n->numAttributes(); ++i) attrs.push_back(&n->attribute(i));
    KernelCall call(n->domain(), n->opType(), opset, attrs);
    call.inputs = inputs;
    call.numOutputs = n->numResults();
    call.maxOutputBytes = opts_.sizeLimit;
    r = evaluateKernel(call);
  }
  // What the kernel read of mapped weights need not stay resident (Note
  // [Resident pages of mapped bytes]); a result that views it reads it again.
  for (const Tensor *t : inputs)
    if (t) releaseResident(*t);
  if (!r.ok()) {
    if (r.status().code() == absl::StatusCode::kResourceExhausted) ++stats_.rejectedBySize;
    else ++stats_.kernelFailed;
    return;
  }
  if (r->size() < n->numResults()) {
    // Only optional results the kernel does not compute may be left out.
    for (unsigned i = (unsigned)r->size(); i < n->numResults(); ++i)
      if (n->result(i)) {
        ++stats_.resultNotComputed;
        return;
      }
  }
  // A result whose declared element type disagrees is not ours to replace.
  for (unsigned i = 0; i < n->numResults(); ++i) {
    Value *v = n->result(i);
    if (v && !declaredTypesAgree(v, (*r)[i])) {
      ++stats_.declaredTypeMismatch;
      return;
    }
  }
  addFolded(n, std::move(*r));
}

/// Note [Declared element types]: a value's type, its declarations as a
/// graph output and its value_info records each name an element type (or
/// none); a folded tensor replaces the value only if it has every one of
/// them. Otherwise the model says one thing and the initializer another.
void Folder::collectDeclaredTypes(Graph &g) {
  auto note = [&](Value *v, const Type *t) {
    if (v && t && t->isTensor() && t->hasElemType() && t->elemTypeRaw() != 0)
      declared_[v].push_back(t->elemTypeRaw());
  };
  for (unsigned i = 0; i < g.numOutputs(); ++i) note(g.output(i), g.outputInfo(i).type);
  for (const ValueInfoRecord &r : g.valueInfo())
    if (!r.erased) note(r.value ? r.value : g.lookupLocal(r.name), r.type);
  for (Node &n : g.nodes())
    for (Graph *sg : n.subgraphs()) collectDeclaredTypes(*sg);
}

bool Folder::declaredTypesAgree(Value *v, const Tensor &t) const {
  const Type *vt = v->type();
  if (vt && vt->isTensor() && vt->hasElemType() && vt->elemTypeRaw() != 0 &&
      vt->elemTypeRaw() != t.dataTypeRaw())
    return false;
  auto it = declared_.find(v);
  if (it != declared_.end())
    for (int32_t e : it->second)
      if (e != t.dataTypeRaw()) return false;
  return true;
}

// Note [Folded shapes against declarations]
// A folded result replaces its value whatever shape the model declares for
// it (its type, or its declaration as a graph output): inference would have
// found the same contradiction, and -O2, which infers after folding, warns.
// fold-constants alone warns the same way, once per value, so that no
// pipeline leaves a declared type the constant contradicts without a word.
// The declaration is kept as it is, as inference keeps it.
void Folder::warnIfDeclaredShapeDiffers(const Node &n, Value *r, const Tensor &t) {
  if (!warnings) return;
  auto differs = [&](const Type *d) {
    if (!d || !d->isTensor() || !d->hasShape()) return false;
    if (d->dims().size() != t.dims().size()) return true;
    for (size_t i = 0; i < t.dims().size(); ++i)
      if (d->dims()[i].isKnown() && d->dims()[i].value != t.dims()[i]) return true;
    return false;
  };
  const Type *declared = differs(r->type()) ? r->type() : nullptr;
  bool output = false;
  const Graph *g = n.getGraph();
  for (unsigned i = 0; !declared && i < g->numOutputs(); ++i)
    if (g->output(i) == r && g->outputInfo(i).hasType && differs(g->outputInfo(i).type)) {
      declared = g->outputInfo(i).type;
      output = true;
    }
  if (!declared) return;
  std::string dims = absl::StrJoin(t.dims(), ",");
  warnings->push_back(absl::StrCat(nodePath(&n), " > value \"", r->name().str(), "\": declared ",
                                   output ? "output " : "", "type ", declared->str(),
                                   " contradicts the folded constant ",
                                   dataTypeName(t.dataType()).str(), "[", dims, "]"));
}

void Folder::addFolded(Node *n, std::vector<Tensor> results) {
  foldedSet_.insert(n);
  folded_.push_back(n);
  for (unsigned i = 0; i < n->numResults(); ++i) {
    Value *v = n->result(i);
    if (!v) continue;
    auto k = std::make_unique<Known>();
    k->owned = std::make_unique<Tensor>(std::move(results[i]));
    k->tensor = k->owned.get();
    k->producer = n;
    noteNewKnown(v, *k);
    known_[v] = std::move(k);
  }
}

/// Folds a node whose inputs are not all constant but whose (int or bool,
/// rank <= 1) result shape inference knows, e.g. Gather(Shape(x), 1) with x
/// of shape [N,3].
bool Folder::foldFromShapeData(Node *n) {
  if (!opts_.foldShapes || n->numResults() != 1 || !n->result(0)) return false;
  auto it = shapeData_.find(n->result(0));
  if (it == shapeData_.end()) return false;
  const KnownShapeData &d = it->second;
  Tensor t;
  t.setDataType(static_cast<DataType>(d.elem));
  if (!d.scalar) t.setDims({(int64_t)d.values.size()});
  std::string bytes;
  for (int64_t x : d.values) {
    if (d.elem == static_cast<int32_t>(DataType::Int64)) {
      bytes.append(reinterpret_cast<const char *>(&x), 8);
    } else if (d.elem == static_cast<int32_t>(DataType::Int32)) {
      int32_t y = (int32_t)x;
      bytes.append(reinterpret_cast<const char *>(&y), 4);
    } else {
      bytes.push_back(x != 0 ? 1 : 0);
    }
  }
  t.setRaw(std::move(bytes));
  std::vector<Tensor> rs;
  rs.push_back(std::move(t));
  addFolded(n, std::move(rs));
  return true;
}

/// Estimated serialized bytes of a NodeProto apart from tensor payloads
/// (Constant values are counted as data): what erasing the node saves.
int64_t nodeOverhead(const Node *n) {
  int64_t b = 4 + (int64_t)n->opType().size() + (int64_t)n->domain().size() +
              (int64_t)n->name().size();
  for (unsigned i = 0; i < n->numOperands(); ++i)
    b += 2 + (n->operand(i) ? (int64_t)n->operand(i)->name().size() : 0);
  for (unsigned i = 0; i < n->numResults(); ++i)
    b += 2 + (n->result(i) ? (int64_t)n->result(i)->name().size() : 0);
  for (unsigned i = 0; i < n->numAttributes(); ++i) {
    const Attribute &a = n->attribute(i);
    b += 6 + (int64_t)a.name().size() + 2 * (int64_t)a.ints.size() +
         4 * (int64_t)a.floats.size() + (int64_t)a.s.size();
    for (const std::string &x : a.strings) b += 2 + (int64_t)x.size();
    for (const auto &t : a.tensors) b += 8 + 2 * (int64_t)t->dims().size();
  }
  return b;
}

/// Estimated serialized bytes of a tensor named `name`: data plus header.
int64_t tensorCost(const Tensor &t, llvm::StringRef name) {
  return (int64_t)tensorDataBytes(t) + 8 + (int64_t)name.size() + 2 * (int64_t)t.dims().size();
}

/// Picks the folded nodes to commit: components within the budget.
std::vector<Node *> Folder::select() {
  // Union-find over folded nodes.
  llvm::DenseMap<Node *, unsigned> id;
  for (Node *n : folded_) id[n] = (unsigned)id.size();
  std::vector<unsigned> parent(id.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::function<unsigned(unsigned)> find = [&](unsigned x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (Node *n : folded_)
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      Value *v = n->operand(i);
      auto it = v ? known_.find(v) : known_.end();
      if (it == known_.end() || !it->second->producer) continue;
      parent[find(id[n])] = find(id[it->second->producer]);
    }
  std::vector<int64_t> delta(id.size(), 0);
  // Erased nodes save their bytes; kept results cost theirs.
  for (Node *n : folded_) {
    delta[find(id[n])] -= nodeOverhead(n);
    for (unsigned i = 0; i < n->numResults(); ++i) {
      Value *v = n->result(i);
      if (!v) continue;
      Known &k = *known_[v];
      if (k.frontier && k.tensor) delta[find(id[n])] += tensorCost(*k.tensor, v->name());
    }
  }
  // Sources all of whose users sit in one component die with it.
  for (auto &e : known_) {
    Value *v = e.first;
    Known &k = *e.second;
    if (k.producer || !k.tensor) continue;
    int comp = -1;
    bool dies = true;
    for (Use &u : v->uses()) {
      Node *o = u.getOwner();
      if (o->isReturn() || !foldedSet_.count(o)) { dies = false; break; }
      int c = (int)find(id[o]);
      if (comp >= 0 && comp != c) { dies = false; break; }
      comp = c;
    }
    if (dies && comp >= 0 && (!k.constantNode || k.constantNode->numResults() == 1))
      delta[comp] -= k.constantNode ? (int64_t)tensorDataBytes(*k.tensor) + nodeOverhead(k.constantNode)
                                    : tensorCost(*k.tensor, v->name());
  }
  std::vector<unsigned> roots;
  for (unsigned x = 0; x < parent.size(); ++x)
    if (find(x) == x) roots.push_back(x);
  std::stable_sort(roots.begin(), roots.end(),
                   [&](unsigned a, unsigned b) { return delta[a] < delta[b]; });
  std::vector<char> accepted(parent.size(), 0);
  for (unsigned r : roots) {
    if (growthUsed + delta[r] > opts_.growthLimit) continue;
    growthUsed += delta[r];
    if (delta[r] > 0) stats_.bytesAdded += delta[r];
    else stats_.bytesFreed -= delta[r];
    accepted[r] = 1;
  }
  std::vector<Node *> out;
  for (Node *n : folded_) {
    if (accepted[find(id[n])]) out.push_back(n);
    else ++stats_.rejectedByBudget;
  }
  return out;
}

bool Folder::commit(const std::vector<Node *> &accepted) {
  if (accepted.empty()) return false;
  llvm::DenseSet<Node *> acc(accepted.begin(), accepted.end());
  std::vector<std::pair<Value *, llvm::StringRef>> renames;
  std::vector<Value *> sources;
  for (Node *n : accepted) {
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      Value *v = n->operand(i);
      auto it = v ? known_.find(v) : known_.end();
      if (it != known_.end() && !it->second->producer) sources.push_back(v);
    }
    Graph *g = n->getGraph();
    for (unsigned i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      if (!r || r->useEmpty()) continue;
      bool needed = false;
      for (Use &u : r->uses())
        if (u.getOwner()->isReturn() || !acc.count(u.getOwner())) needed = true;
      if (!needed) continue;
      Known &k = *known_[r];
      assert(k.tensor && "a kept result lost its buffer");
      warnIfDeclaredShapeDiffers(*n, r, *k.tensor);
      Tensor t = std::move(*k.owned);
      if (!n->metadata.empty())
        t.metadata.mut().insert(t.metadata.mut().end(), n->metadata.begin(), n->metadata.end());
      Value *nv;
      if (isFunctionTop(g)) {
        Node *c = createConstantNode(*g, std::move(t), n, r->name());
        c->metadata = n->metadata;
        nv = c->result(0);
        nv->setType(r->type());
      } else {
        auto v = g->addInitializer(g->freshName(r->name()), std::move(t));
        if (!v.ok()) return false;
        nv = *v;
      }
      ++stats_.constantsMaterialized;
      // Uses by other folded nodes move too; they are erased below.
      r->replaceAllUsesWith(nv);
      renames.push_back({nv, r->name()});
    }
  }
  for (Node *n : accepted) n->dropAllReferences();
  for (Node *n : accepted) {
    for (unsigned i = 0; i < n->numResults(); ++i)
      if (Value *r = n->result(i)) known_.erase(r);
    foldedSet_.erase(n);
    auto st = n->erase();
    assert(st.ok() && "folded node still used");
    (void)st;
    ++stats_.nodesFolded;
  }
  for (auto &[v, name] : renames) v->setName(name).IgnoreError();
  // Constants that died with their last user.
  llvm::DenseSet<Value *> seen;
  llvm::DenseMap<Graph *, llvm::DenseSet<Value *>> deadInits;
  for (Value *v : sources) {
    if (!seen.insert(v).second || !v->useEmpty()) continue;
    if (v->isConstantInitializer()) {
      deadInits[v->getGraph()].insert(v);
    } else if (Node *c = v->definingNode(); c && !c->hasUses()) {
      known_.erase(v);
      c->erase().IgnoreError();
      ++stats_.deadConstantsRemoved;
    }
  }
  for (auto &entry : deadInits) {
    auto &dead = entry.second;
    for (Value *v : dead) known_.erase(v);
    stats_.deadConstantsRemoved +=
        entry.first->removeInitializersIf([&](Value *v) { return dead.count(v) != 0; });
  }
  return true;
}

bool Folder::runRound() {
  shapeData_.clear();
  if (opts_.foldShapes)
    if (auto d = inferShapeData(model_, opts_.shapeDataLimit); d.ok()) shapeData_ = std::move(*d);
  known_.clear();
  visited_.clear();
  folded_.clear();
  foldedSet_.clear();
  declared_.clear();
  for (const Scope &s : scopes()) collectDeclaredTypes(*s.graph);
  for (const Scope &s : scopes()) {
    std::vector<Node *> order;
    s.graph->walk([&](Node *n) { order.push_back(n); });
    for (Node *n : order) {
      evaluate(n, s.opset);
      visited_.insert(n);
      visitUses(n);
    }
  }
  bool changed = commit(select());
  known_.clear();
  return changed;
}

/// The boolean value of a constant scalar, if `v` is one.
std::optional<bool> constantBool(Value *v) {
  if (!v) return std::nullopt;
  std::optional<Tensor> t;
  if (v->isConstantInitializer()) {
    t = *v->initializer();
  } else if (Node *c = v->definingNode(); c && isConstantNode(*c)) {
    auto r = constantValue(*c);
    if (!r.ok()) return std::nullopt;
    t = std::move(*r);
  } else {
    return std::nullopt;
  }
  auto vals = t->values<double>();
  if (!vals.ok() || vals->size() != 1) return std::nullopt;
  return (*vals)[0] != 0;
}

/// Removes `v` if it is an unused initializer or Constant result.
void removeIfDeadConstant(Value *v) {
  if (!v || !v->useEmpty()) return;
  if (v->isConstantInitializer()) {
    v->getGraph()->removeInitializersIf([&](Value *x) { return x == v; });
  } else if (Node *c = v->definingNode(); c && isConstantNode(*c) && !c->hasUses()) {
    c->erase().IgnoreError();
  }
}

// fold-constants' one rewrite pattern (it names the op it matches): an If
// whose condition is a constant becomes the branch it takes.
bool Folder::inlineIfs() {
  std::vector<Node *> ifs;
  for (const Scope &s : scopes())
    s.graph->walk([&](Node *n) { if (n->is("If")) ifs.push_back(n); });
  bool changed = false;
  // Inner Ifs first, so an erased outer If never leaves a dangling pointer.
  for (auto it = ifs.rbegin(); it != ifs.rend(); ++it) {
    Node *n = *it;
    auto cond = constantBool(n->numOperands() ? n->operand(0) : nullptr);
    if (!cond) continue;
    Attribute *a = n->getAttr(*cond ? "then_branch" : "else_branch");
    if (!a || a->numGraphs() != 1) continue;
    Graph *b = a->graph(0);
    Graph *g = n->getGraph();
    if (b->numInputs() || b->numOutputs() != n->numResults() ||
        !b->sparseInitializers().empty() || (isFunctionTop(g) && !b->initializers().empty()))
      continue;
    IRMapping m;
    std::vector<Value *> outs = b->cloneNodesInto(*g, n, m);
    std::vector<std::pair<Value *, llvm::StringRef>> renames;
    llvm::DenseSet<Value *> used;
    for (unsigned i = 0; i < n->numResults(); ++i) {
      Value *r = n->result(i);
      Value *o = outs[i];
      if (!r || r->useEmpty() || !o) continue;
      // A fresh copy takes the result's name; an outer value (or one already
      // taken) goes through an Identity that carries it.
      if (o == b->output(i) || !used.insert(o).second) {
        Node *id = createIdentityNode(*g, o, n);
        o = id->result(0);
      }
      if (!o->type()) o->setType(r->type());
      r->replaceAllUsesWith(o);
      renames.push_back({o, r->name()});
    }
    Value *condValue = n->operand(0);
    n->dropAllReferences();
    if (!n->erase().ok()) continue;
    removeIfDeadConstant(condValue);
    for (auto &[v, name] : renames) v->setName(name).IgnoreError();
    ++stats_.ifsInlined;
    changed = true;
  }
  return changed;
}

} // namespace

absl::StatusOr<bool> foldConstants(Model &m, const FoldOptions &opts, FoldStatistics *stats,
                                   std::vector<std::string> *warnings) {
  FoldStatistics local;
  FoldStatistics &s = stats ? *stats : local;
  Folder f(m, opts, s);
  f.warnings = warnings;
  bool changed = false;
  for (unsigned round = 0; round < std::max(1u, opts.maxRounds); ++round) {
    // Rejections are those of the last round (earlier ones may have folded).
    s.rejectedByBudget = s.rejectedBySize = s.unsupported = s.kernelFailed = 0;
    s.nondeterministic = s.sideEffects = s.resultNotComputed = s.declaredTypeMismatch = 0;
    s.inputDefaults = 0;
    bool c = f.runRound();
    if (opts.inlineConstantIf) c |= f.inlineIfs();
    changed |= c;
    if (!c) break;
  }
  return changed;
}

//===----------------------------------------------------------------------===//
// The fold-constants pass
//===----------------------------------------------------------------------===//

namespace {
class ConstantFoldingPass : public OptionsPass<FoldOptions> {
public:
  ConstantFoldingPass()
      : OptionsPass("fold-constants",
                    "Evaluate nodes with constant inputs (and If with a constant condition) "
                    "within a size budget") {}
  absl::StatusOr<bool> run(Model &m) override {
    FoldStatistics s;
    std::vector<std::string> warnings;
    auto r = foldConstants(m, optionValues(), &s, &warnings);
    addStats(s);
    for (std::string &w : warnings) warn(std::move(w));
    return r;
  }

private:
  Field<ByteCount, uint64_t> sizeLimit_{*this, &FoldOptions::sizeLimit, "size-limit",
                                        "largest tensor in bytes that folding may produce",
                                        "fold-size-limit"};
  Field<ByteCount, int64_t> growthLimit_{
      *this, &FoldOptions::growthLimit, "growth-limit",
      "bytes by which folding may grow the model in total (0: never grows)", "fold-growth-limit"};
  Field<uint64_t> shapeDataLimit_{*this, &FoldOptions::shapeDataLimit, "shape-data-limit",
                                  "most elements of shape data tracked for one value",
                                  "shape-data-limit"};
  Field<bool> foldDequantize_{*this, &FoldOptions::foldDequantize, "fold-dq",
                              "also fold DequantizeLinear of constants (quantized weights "
                              "become float)",
                              "fold-dq"};
};
} // namespace

std::unique_ptr<Pass> createConstantFoldingPass() { return std::make_unique<ConstantFoldingPass>(); }

} // namespace onnxir
