//===- Objects.cpp - Model, Graph, Node and Value for Python --------------===//
//
// Handles (Note [Python handles] in Core.h) over the IR's own mutation
// primitives: nothing here edits IR fields directly.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/IR/DimExpr.h"
#include "onnxir/IR/Function.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Compiler.h"

#include <pybind11/stl.h>

namespace onnxir::python {

//===--- Holder ------------------------------------------------------------===//

ModelHolder::ModelHolder(std::unique_ptr<Model> m) : model_(std::move(m)) {
  model_->getContext().destroyObserver = this;
}

// Note [Models left at exit]
// onnx-opt ends without taking its model apart: unlinking and freeing a
// 10^6-node IR costs about a tenth of the run (the end of onnx-opt.cpp's
// main). The interpreter's finalization destroys the models a script still
// holds (its globals) after the atexit callbacks have run; the module's own
// callback (bindTools) sets gInterpreterExiting, and a model whose holder
// goes then is left unfreed, as onnx-opt leaves its own: the process ends,
// and save wrote and closed its files already (the IR's destructors touch
// no file). A model released earlier (del, a function's local) is freed as
// before. Sanitizer builds do take it apart, so that the teardown is checked.
bool gInterpreterExiting = false;

ModelHolder::~ModelHolder() {
  // No handle is left (each holds the holder): nothing to tell.
  model_->getContext().destroyObserver = nullptr;
#if !LLVM_ADDRESS_SANITIZER_BUILD
  if (gInterpreterExiting) {
    (void)model_.release();
    return;
  }
#endif
  model_.reset();
}

void ModelHolder::destroyed(const void *object) {
  // Every node and value a pass erases comes here: without a handle (a
  // script that loads, runs passes and saves) it costs no lock.
  if (liveCount_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (live_.empty()) return;
  auto it = live_.find(object);
  if (it == live_.end()) return;
  it->second->alive = false;
  live_.erase(it);
  liveCount_.store(live_.size(), std::memory_order_release);
}

std::shared_ptr<Entry> ModelHolder::entry(void *p) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry *&slot = live_[p];
  liveCount_.store(live_.size(), std::memory_order_release);
  if (slot)
    if (std::shared_ptr<Entry> e = slot->self.lock()) return e;
  auto e = std::make_shared<Entry>();
  e->holder = shared_from_this();
  e->ptr = p;
  e->self = e;
  slot = e.get();
  return e;
}

void ModelHolder::forget(Entry *e) {
  if (!e->alive) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(e->ptr);
  if (it != live_.end() && it->second == e) live_.erase(it);
  liveCount_.store(live_.size(), std::memory_order_release);
}

py::object nodeOrNone(const HolderPtr &h, Node *n) {
  if (!n) return py::none();
  return py::cast(PyNode(h, n));
}
py::object valueOrNone(const HolderPtr &h, Value *v) {
  if (!v) return py::none();
  return py::cast(PyValue(h, v));
}

namespace {

std::string str(llvm::StringRef s) { return s.str(); }

/// `v` as a value of the model of `h`, visible from graph `g` (null: None).
Value *operandFor(const HolderPtr &h, Graph *g, py::handle obj, const char *what) {
  if (obj.is_none()) return nullptr;
  if (!py::isinstance<PyValue>(obj))
    fail(std::string(what) + ": expected an onnxir.Value or None, got " +
         std::string(py::str(obj.get_type().attr("__name__"))));
  const PyValue &pv = obj.cast<const PyValue &>();
  Value *v = pv.v();
  if (pv.holderPtr() != h) fail(std::string(what) + ": value \"" + str(v->name()) +
                                "\" belongs to another model");
  Graph *vg = v->getGraph();
  if (g && vg != g && !g->isNestedIn(vg))
    fail(std::string(what) + ": value \"" + str(v->name()) + "\" of " + vg->path() +
         " is not visible from " + g->path());
  return v;
}

Node *nodeArg(const HolderPtr &h, py::handle obj, const char *what) {
  if (obj.is_none()) return nullptr;
  if (!py::isinstance<PyNode>(obj)) fail(std::string(what) + ": expected an onnxir.Node");
  const PyNode &pn = obj.cast<const PyNode &>();
  Node *n = pn.n();
  if (pn.holderPtr() != h) fail(std::string(what) + ": the node belongs to another model");
  return n;
}

//===--- Types and shapes ---------------------------------------------------===//

py::object dimToPython(const Dim &d) {
  if (d.isKnown()) return py::int_(d.value);
  if (d.isSymbolic()) return py::str(d.param.str());
  return py::none();
}

/// The shape of `v`: its type's, else (an initializer without a declared
/// shape) its tensor's dims; None when unknown.
py::object shapeOf(const Value *v) {
  const Type *t = v->type();
  if (t && t->isTensor() && t->hasShape()) {
    py::tuple out(t->dims().size());
    for (size_t i = 0; i < t->dims().size(); ++i) out[i] = dimToPython(t->dims()[i]);
    return out;
  }
  if (const Tensor *init = v->initializer()) {
    py::tuple out(init->dims().size());
    for (size_t i = 0; i < init->dims().size(); ++i) out[i] = py::int_(init->dims()[i]);
    return out;
  }
  return py::none();
}

int32_t elemOf(const Value *v) {
  const Type *t = v->type();
  if (t && t->hasElemType()) return t->elemTypeRaw();
  if (const Tensor *init = v->initializer()) return init->dataTypeRaw();
  return 0;
}

/// NumPy's name of a dtype -> ONNX's, where they differ.
std::string onnxElemName(const std::string &numpyName) {
  static const std::pair<const char *, const char *> names[] = {
      {"float32", "float"}, {"float64", "double"}, {"bool_", "bool"}, {"str", "string"},
      {"object", "string"}};
  for (auto &[np, onnx] : names)
    if (numpyName == np) return onnx;
  return numpyName;
}

DataType dataTypeArg(py::handle obj) {
  if (py::isinstance<py::int_>(obj) && !py::isinstance<py::bool_>(obj)) {
    int v = obj.cast<int>();
    if (!isKnownDataType(v)) fail("unknown element type number " + std::to_string(v));
    return DataType(v);
  }
  std::string s;
  if (py::isinstance<py::str>(obj)) {
    s = obj.cast<std::string>();
  } else {
    // A NumPy dtype, scalar type (np.float32) or anything np.dtype takes.
    try {
      s = onnxElemName(py::str(py::module_::import("numpy").attr("dtype")(obj).attr("name")));
    } catch (py::error_already_set &) {
      throw py::type_error("elem_type: expected an ONNX element type name ('float'), its number, "
                           "or a NumPy dtype, not " +
                           std::string(py::str(obj.get_type().attr("__name__"))));
    }
  }
  if (auto t = dataTypeFromName(s)) return *t;
  fail("unknown element type '" + s + "' (ONNX names: float, int64, float16, ...)");
}

std::vector<Dim> dimsArg(Context &ctx, py::handle shape) {
  std::vector<Dim> dims;
  for (py::handle d : shape) {
    if (d.is_none()) {
      dims.push_back(Dim::unknown());
    } else if (py::isinstance<py::int_>(d)) {
      int64_t v = d.cast<int64_t>();
      if (v < 0) fail("a dim cannot be negative: " + std::to_string(v));
      dims.push_back(Dim::known(v));
    } else if (py::isinstance<py::str>(d)) {
      std::string text = d.cast<std::string>(), err;
      const DimExpr *e = parseDimExpr(ctx, text, &err);
      if (!e) fail("bad dim '" + text + "': " + err);
      dims.push_back(ctx.dimOf(e));
    } else {
      fail("a dim is an int, a symbol or expression string, or None");
    }
  }
  return dims;
}

/// A tensor type written as Value.type prints it (Type::str): `float[1,N,?]`
/// (`?` an unknown dim, a symbol or expression otherwise), `float[]` of
/// unknown rank, `float` a scalar.
const Type *typeFromString(Context &ctx, const std::string &s) {
  size_t lb = s.find('[');
  std::string elem = s.substr(0, lb);
  while (!elem.empty() && elem.back() == ' ') elem.pop_back();
  auto dt = dataTypeFromName(elem);
  if (!dt) fail("type '" + s + "': unknown element type '" + elem + "' (ONNX names: float, int64, ...)");
  if (lb == std::string::npos) return ctx.getTensorType(*dt, llvm::ArrayRef<Dim>());
  if (s.back() != ']') fail("type '" + s + "': expected ELEM[DIM,...] such as float[1,N,3]");
  std::string inner = s.substr(lb + 1, s.size() - lb - 2);
  if (inner.find_first_not_of(' ') == std::string::npos) return ctx.getTensorType(*dt, kUnknownRank);
  std::vector<Dim> dims;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    char c = i < inner.size() ? inner[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c != ',' || depth > 0) continue;
    std::string d = inner.substr(start, i - start);
    start = i + 1;
    d.erase(0, d.find_first_not_of(' '));
    d.erase(d.find_last_not_of(' ') + 1);
    if (d == "?") {
      dims.push_back(Dim::unknown());
    } else if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) {
      dims.push_back(Dim::known(std::stoll(d)));
    } else {
      std::string err;
      const DimExpr *e = parseDimExpr(ctx, d, &err);
      if (!e) fail("type '" + s + "': bad dim '" + d + "': " + err);
      dims.push_back(ctx.dimOf(e));
    }
  }
  return ctx.getTensorType(*dt, llvm::ArrayRef<Dim>(dims));
}

/// The type of elem_type/shape arguments: an element type (name, number or
/// NumPy dtype; None: `dflt`) with a shape (None: unknown rank), or a type
/// string with its shape ('float[1,N,3]').
const Type *typeArg(Context &ctx, py::handle elem, py::handle shape, DataType dflt) {
  if (py::isinstance<py::str>(elem) && elem.cast<std::string>().find('[') != std::string::npos) {
    if (!shape.is_none())
      fail("a type string such as 'float[1,N,3]' carries its shape: give shape=None");
    return typeFromString(ctx, elem.cast<std::string>());
  }
  DataType dt = elem.is_none() ? dflt : dataTypeArg(elem);
  if (shape.is_none()) return ctx.getTensorType(dt, kUnknownRank);
  std::vector<Dim> dims = dimsArg(ctx, shape);
  return ctx.getTensorType(dt, llvm::ArrayRef<Dim>(dims));
}

void setType(Value *v, py::handle elem, py::handle shape) {
  v->setType(typeArg(v->getGraph()->getContext(), elem, shape, DataType(elemOf(v))));
}

std::string elemName(int32_t e) {
  if (e == 0) return "";
  llvm::StringRef n = dataTypeName(DataType(e));
  return n.empty() ? std::to_string(e) : n.str();
}

//===--- Iterators that do not copy ------------------------------------------===//

/// The nodes of a graph in order. Holds a handle to the next node, so an
/// erased next node is an error rather than a dangling step.
struct NodeIterator {
  PyGraph graph;
  std::optional<PyNode> next;
  PyNode step() {
    Graph *g = graph.g();
    if (!next) throw py::stop_iteration();
    if (!next->e->alive) fail("the graph's node list changed during iteration: the next node was erased");
    Node *n = next->n();
    if (n->getGraph() != g) fail("the graph's node list changed during iteration: the next node moved");
    PyNode cur = *next;
    auto it = std::next(Graph::NodeList::iterator(*n));
    if (it == g->nodes().end()) next.reset();
    else next = PyNode(graph.holderPtr(), &*it);
    return cur;
  }
};

struct NodeRange {
  PyGraph graph;
  PyNode at(long i) const {
    Graph *g = graph.g();
    long n = (long)g->numNodes();
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("node index out of range");
    if (i < n / 2) {
      auto it = g->nodes().begin();
      std::advance(it, i);
      return PyNode(graph.holderPtr(), &*it);
    }
    auto it = g->nodes().rbegin();
    std::advance(it, n - 1 - i);
    return PyNode(graph.holderPtr(), &*it);
  }
  NodeIterator iter() const {
    Graph *g = graph.g();
    NodeIterator it{graph, std::nullopt};
    if (!g->nodes().empty()) it.next = PyNode(graph.holderPtr(), &g->nodes().front());
    return it;
  }
};

/// The uses of a value as (node, operand index), the graph's output slots
/// left out. Holds the next use as (node handle, index), checked on each step.
struct UseIterator {
  PyValue value;
  std::optional<PyNode> node;
  unsigned index = 0;
  static Use *skipReturns(Use *u) {
    while (u && u->getOwner()->isReturn()) u = u->getNext();
    return u;
  }
  void setNext(Use *u) {
    u = skipReturns(u);
    if (!u) {
      node.reset();
      return;
    }
    node = PyNode(value.holderPtr(), u->getOwner());
    index = u->getOperandNo();
  }
  py::tuple step() {
    Value *v = value.v();
    if (!node) throw py::stop_iteration();
    if (!node->e->alive) fail("the value's uses changed during iteration");
    Node *n = node->n();
    if (index >= n->numOperands() || n->operand(index) != v)
      fail("the value's uses changed during iteration");
    py::tuple out = py::make_tuple(*node, index);
    setNext(n->operandUse(index).getNext());
    return out;
  }
};

struct UseRange {
  PyValue value;
  UseIterator iter() const {
    Value *v = value.v();
    UseIterator it{value, std::nullopt, 0};
    it.setNext(v->firstUse());
    return it;
  }
  size_t size() const {
    size_t n = 0;
    for (Use &u : value.v()->uses()) n += !u.getOwner()->isReturn();
    return n;
  }
};

//===--- Node creation ---------------------------------------------------------===//

PyNode createNode(const PyGraph &pg, const std::string &op, py::object inputs, py::object attrs,
                  py::object outputs, const std::string &domain, py::object name, py::object before,
                  py::object after) {
  Graph *g = pg.g();
  const HolderPtr &h = pg.holderPtr();
  std::vector<Value *> operands;
  if (!inputs.is_none())
    for (py::handle o : inputs) operands.push_back(operandFor(h, g, o, "create_node: inputs"));
  // Everything is checked before the node exists: a failure changes nothing.
  std::vector<std::unique_ptr<Attribute>> attributes;
  if (!attrs.is_none())
    for (auto item : attrs.cast<py::dict>())
      attributes.push_back(attributeFromPython(py::str(item.first), item.second));
  Node *pos = nullptr;
  if (!before.is_none() && !after.is_none()) fail("create_node: give before= or after=, not both");
  if (!before.is_none()) {
    pos = nodeArg(h, before, "create_node: before");
    if (pos->getGraph() != g) fail("create_node: before= names a node of another graph");
  } else if (!after.is_none()) {
    Node *a = nodeArg(h, after, "create_node: after");
    if (a->getGraph() != g) fail("create_node: after= names a node of another graph");
    auto it = std::next(Graph::NodeList::iterator(*a));
    pos = it == g->nodes().end() ? nullptr : &*it;
  }
  Node *n;
  if (outputs.is_none() || py::isinstance<py::int_>(outputs)) {
    unsigned k = outputs.is_none() ? 1 : outputs.cast<unsigned>();
    n = g->createNode(op, operands, k, pos, domain);
  } else {
    std::vector<std::string> names = outputs.cast<std::vector<std::string>>();
    std::vector<llvm::StringRef> refs(names.begin(), names.end());
    n = check(g->createNodeWithNames(op, operands, refs, pos, domain));
  }
  for (auto &a : attributes) n->setAttr(std::move(a));
  if (!name.is_none()) n->setName(name.cast<std::string>());
  return PyNode(h, n);
}

// Note [Output types]
// A graph output slot carries its own declared type (Note [Outputs] in
// Graph.h), which is what the saved ValueInfoProto says; a slot without one
// makes a model that python onnx's checker refuses. So a value that becomes
// an output from Python (add_output, set_output, Graph.outputs) gives its
// slot its type: the value's own, an initializer's from its tensor, else
// the one shape inference finds (run on the whole model, outputs only, no
// value_info added). A value whose type stays unknown is refused, naming
// Value.set_type: the model is not changed.

/// The type `v` is known to have, or null.
const Type *knownType(Value *v) {
  const Type *t = v->type();
  if (t && (!t->isTensor() || t->hasElemType())) return t;
  if (const Tensor *init = v->initializer())
    return v->getGraph()->getContext().getTensorType(init->dataType(), init->dims());
  return nullptr;
}

/// The output slot info for `v` (Note [Output types]); `old`: the slot's
/// current info, whose doc string and metadata stay.
OutputInfo outputInfoFor(const PyGraph &pg, Value *v, const std::string &what,
                         const OutputInfo *old = nullptr) {
  const Type *t = knownType(v);
  if (!t) {
    ShapeInferenceOptions o;
    o.outputsOnly = true;
    std::vector<std::string> warnings;
    absl::StatusOr<bool> r;
    {
      ModelHolder::Busy busy(pg.holder());
      py::gil_scoped_release nogil;
      r = inferShapes(pg.holder().modelUnchecked(), o, nullptr, &warnings);
    }
    if (!r.ok())
      fail(what + ": the type of \"" + str(v->name()) + "\" is unknown and shape inference " +
           "failed: " + std::string(r.status().message()) +
           "\n  (give it a type first: value.set_type(elem_type, shape))");
    t = knownType(v);
    if (!t)
      fail(what + ": the type of \"" + str(v->name()) + "\" is unknown and shape inference " +
           "cannot infer it; give it a type first: value.set_type(elem_type, shape) " +
           "(an output without a type makes an invalid ONNX model)");
  }
  OutputInfo info;
  if (old) info = *old;
  info.type = t;
  info.hasType = true;
  return info;
}

PyModel copyModel(const PyModel &pm);

/// Graph.outputs = values (and the view's mutations): slots that keep their
/// value keep their info; new ones get their type (Note [Output types]).
void setOutputs(const PyGraph &pg, py::iterable items) {
  Graph *g = pg.g();
  const HolderPtr &h = pg.holderPtr();
  std::vector<Value *> vals;
  for (py::handle o : items) {
    Value *v = operandFor(h, g, o, "outputs");
    if (!v) fail("outputs: None is not a value (a graph output is a Value)");
    vals.push_back(v);
  }
  // New outputs' types first (that may run inference, which updates the
  // slots), then the old slots' infos.
  std::vector<Value *> old = g->outputs();
  std::vector<std::optional<OutputInfo>> infos(vals.size());
  for (size_t i = 0; i < vals.size(); ++i)
    if (std::find(old.begin(), old.end(), vals[i]) == old.end())
      infos[i] = outputInfoFor(pg, vals[i], "outputs");
  std::vector<bool> taken(old.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    if (infos[i]) continue;
    for (size_t j = 0; j < old.size(); ++j)
      if (!taken[j] && old[j] == vals[i]) {
        taken[j] = true;
        infos[i] = g->outputInfo((unsigned)j);
        break;
      }
    if (!infos[i]) infos[i] = outputInfoFor(pg, vals[i], "outputs"); // repeated: another slot
  }
  while (g->numOutputs()) g->removeOutput(g->numOutputs() - 1);
  for (size_t i = 0; i < vals.size(); ++i) g->addOutput(vals[i], std::move(*infos[i]));
}

py::list valuesList(const HolderPtr &h, llvm::ArrayRef<Value *> vs) {
  py::list out(vs.size());
  for (size_t i = 0; i < vs.size(); ++i) out[i] = valueOrNone(h, vs[i]);
  return out;
}

unsigned outputIndex(const PyGraph &pg, py::handle which) {
  Graph *g = pg.g();
  if (py::isinstance<py::int_>(which)) {
    long i = which.cast<long>();
    if (i < 0) i += g->numOutputs();
    if (i < 0 || i >= (long)g->numOutputs()) fail("output index out of range");
    return (unsigned)i;
  }
  Value *v = operandFor(pg.holderPtr(), nullptr, which, "remove_output");
  for (unsigned i = 0; i < g->numOutputs(); ++i)
    if (g->output(i) == v) return i;
  fail("value \"" + str(v->name()) + "\" is not an output of " + g->path());
}

std::string kindName(Value::Kind k) {
  switch (k) {
  case Value::Kind::GraphInput: return "input";
  case Value::Kind::Initializer: return "initializer";
  case Value::Kind::SparseInitializer: return "sparse_initializer";
  case Value::Kind::NodeResult: return "result";
  }
  return "?";
}

py::dict metadataDict(const Metadata &md) {
  py::dict d;
  for (auto &[k, v] : md) d[py::str(k)] = py::str(v);
  return d;
}
Metadata metadataArg(py::dict d) {
  Metadata md;
  for (auto item : d) md.emplace_back(py::str(item.first), py::str(item.second));
  return md;
}

/// Model.copy: a round trip through the serialized form (which keeps
/// everything a model holds but the types of values without a value_info
/// record), then those types copied over, graph by graph, node by node.
PyModel copyModel(const PyModel &pm) {
  Model &m = pm.m();
  absl::StatusOr<std::string> bytes;
  absl::StatusOr<std::unique_ptr<Model>> copy;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    bytes = lowerModel(m);
    if (bytes.ok()) {
      LiftOptions lo;
      lo.sourceName = "<copy>";
      copy = liftModel(*bytes, lo);
    }
  }
  if (!bytes.ok()) fail("copy: " + std::string(bytes.status().message()));
  std::unique_ptr<Model> c = check(std::move(copy));
  std::vector<Graph *> from, to;
  m.walkGraphs([&](Graph *g) { from.push_back(g); });
  c->walkGraphs([&](Graph *g) { to.push_back(g); });
  Context &ctx = c->getContext();
  auto copyType = [&](Value *a, Value *b) {
    if (!a || !b || b->type() || !a->type() || !a->type()->isTensor()) return;
    b->setType(typeFromString(ctx, a->type()->str()));
  };
  for (size_t k = 0; k < from.size() && k < to.size(); ++k) {
    auto bi = to[k]->nodes().begin(), be = to[k]->nodes().end();
    for (Node &a : from[k]->nodes()) {
      if (bi == be) break;
      Node &b = *bi++;
      for (unsigned i = 0; i < a.numResults() && i < b.numResults(); ++i)
        copyType(a.result(i), b.result(i));
    }
  }
  return PyModel{std::make_shared<ModelHolder>(std::move(c))};
}

} // namespace

void bindObjects(py::module_ &m) {
  // Every class is registered before any method names it, so that the
  // signatures say Value, not onnxir::python::PyValue.
  py::class_<PyModel> model(m, "Model", "An ONNX model lifted into the onnxir IR.");
  py::class_<PyGraph> graph(m, "Graph", "A graph: inputs, initializers, nodes in order, outputs.");
  py::class_<PyNode> node(m, "Node", "An operator application: operands, results, attributes.");
  py::class_<PyValue> value(m, "Value", "A graph input, initializer or node result, with its uses.");

  //===--- Model -------------------------------------------------------------===//
  model
      .def(py::init([]() { return PyModel{std::make_shared<ModelHolder>(std::make_unique<Model>())}; }),
           "An empty model (one empty main graph, no opset imports).")
      .def_property_readonly("graph", [](const PyModel &pm) { return PyGraph(pm.h, &pm.m().graph()); })
      .def_property_readonly("functions", [](const PyModel &pm) {
        py::list out;
        for (auto &f : pm.m().functions()) out.append(py::cast(PyGraph(pm.h, &f->body())));
        return py::tuple(out);
      }, "The bodies of the model-local functions (Graph objects; see Graph.function_name).")
      .def_property("_opset_imports", [](const PyModel &pm) {
        py::dict d;
        for (auto &o : pm.m().opsetImports) d[py::str(o.domain)] = o.version;
        return d;
      }, [](const PyModel &pm, py::dict d) {
        std::vector<OpsetImport> v;
        for (auto item : d) {
          OpsetImport o;
          o.domain = py::str(item.first);
          o.version = item.second.cast<int64_t>();
          for (const OpsetImport &old : pm.m().opsetImports)
            if (old.domain == o.domain) o.extras = old.extras; // kept, as the C++ API keeps it
          v.push_back(o);
        }
        pm.m().opsetImports = std::move(v);
      }, "{domain: version} ('' is the default ONNX domain); assign a dict to replace.")
      .def("opset_version", [](const PyModel &pm, const std::string &d) {
        return pm.m().opsetVersion(d);
      }, py::arg("domain") = "", "The imported version of `domain` ('' is ONNX's), -1 if none.")
#define OPT_FIELD(NAME, FIELD, T)                                                            \
  .def_property(NAME, [](const PyModel &pm) -> std::optional<T> { return pm.m().FIELD; },      \
                [](const PyModel &pm, std::optional<T> v) { pm.m().FIELD = v; })
      OPT_FIELD("ir_version", irVersion, int64_t)
      OPT_FIELD("producer_name", producerName, std::string)
      OPT_FIELD("producer_version", producerVersion, std::string)
      OPT_FIELD("domain", domain, std::string)
      OPT_FIELD("model_version", modelVersion, int64_t)
      OPT_FIELD("doc_string", docString, std::string)
#undef OPT_FIELD
      .def_property("_metadata", [](const PyModel &pm) { return metadataDict(pm.m().metadata); },
                    [](const PyModel &pm, py::dict d) { pm.m().metadata = metadataArg(d); },
                    "metadata_props as a dict (a copy; assign a dict to replace).")
      .def("copy", &copyModel, "A deep copy of the model (nothing shared with this one).")
      .def("__copy__", &copyModel, "A deep copy (a Model shares nothing: copy.copy copies it all).")
      .def("__deepcopy__", [](const PyModel &pm, py::handle) { return copyModel(pm); },
           py::arg("memo"), "A deep copy of the model.")
      .def("__repr__", [](const PyModel &pm) {
        Model &md = pm.m();
        return "<onnxir.Model ir_version=" +
               (md.irVersion ? std::to_string(*md.irVersion) : std::string("?")) + ", " +
               std::to_string(md.graph().numNodes()) + " nodes>";
      });

  //===--- Graph -------------------------------------------------------------===//
  py::class_<NodeIterator>(m, "_NodeIterator")
      .def("__iter__", [](NodeIterator &it) -> NodeIterator & { return it; })
      .def("__next__", &NodeIterator::step);
  py::class_<NodeRange>(m, "NodeList", "The nodes of a graph in order (a live view, not a copy).")
      .def("__iter__", &NodeRange::iter)
      .def("__len__", [](const NodeRange &r) { return r.graph.g()->numNodes(); })
      .def("__getitem__", &NodeRange::at, py::arg("index"),
           "The node at `index` (negative: from the end); O(index) steps.")
      .def("__bool__", [](const NodeRange &r) { return !r.graph.g()->empty(); });
  py::class_<UseIterator>(m, "_UseIterator")
      .def("__iter__", [](UseIterator &it) -> UseIterator & { return it; })
      .def("__next__", &UseIterator::step);
  py::class_<UseRange>(m, "UseList", "The uses of a value as (node, operand index) pairs (a live view).")
      .def("__iter__", &UseRange::iter)
      .def("__len__", &UseRange::size);

  graph
      .def_property("name", [](const PyGraph &pg) { return pg.g()->name; },
                    [](const PyGraph &pg, const std::string &s) { pg.g()->name = s; })
      .def_property("doc_string", [](const PyGraph &pg) { return pg.g()->docString; },
                    [](const PyGraph &pg, const std::string &s) { pg.g()->docString = s; })
      .def_property_readonly("nodes", [](const PyGraph &pg) { pg.g(); return NodeRange{pg}; })
      .def_property_readonly("num_nodes", [](const PyGraph &pg) { return pg.g()->numNodes(); })
      // The live views over these (Graph.inputs, ...) are in onnxir/_views.py.
      .def("_inputs", [](const PyGraph &pg) {
        return valuesList(pg.holderPtr(), pg.g()->inputs());
      }, "The inputs (a new list).")
      .def("_outputs", [](const PyGraph &pg) {
        return valuesList(pg.holderPtr(), pg.g()->outputs());
      }, "The outputs (a new list).")
      .def("_set_outputs", &setOutputs, py::arg("values"),
           "Replaces the outputs (see Graph.outputs).")
      .def("_initializers", [](const PyGraph &pg) {
        py::dict d;
        for (Value *v : pg.g()->initializers())
          d[py::str(v->name().str())] = py::cast(PyValue(pg.holderPtr(), v));
        return d;
      }, "{name: Value} of the dense initializers (a new dict).")
      .def_property_readonly("parent_node", [](const PyGraph &pg) {
        return nodeOrNone(pg.holderPtr(), pg.g()->parentNode());
      }, "The node whose attribute holds this subgraph (None for a main graph or function body).")
      .def_property_readonly("parent_graph", [](const PyGraph &pg) -> py::object {
        Graph *p = pg.g()->parentGraph();
        if (!p) return py::none();
        return py::cast(PyGraph(pg.holderPtr(), p));
      })
      .def_property_readonly("function_name", [](const PyGraph &pg) -> py::object {
        Graph *g = pg.g();
        if (g->parentGraph() || !g->parentFunction()) return py::none();
        return py::str(g->parentFunction()->qualifiedName());
      }, "For a function body: 'domain.name'; else None.")
      .def_property_readonly("model", [](const PyGraph &pg) { pg.g(); return PyModel{pg.holderPtr()}; })
      .def_property_readonly("path", [](const PyGraph &pg) { return pg.g()->path(); })
      .def("create_node", &createNode, py::arg("op_type"), py::arg("inputs") = py::none(),
           py::arg("attributes") = py::none(), py::arg("outputs") = py::none(),
           py::arg("domain") = "", py::arg("name") = py::none(), py::arg("before") = py::none(),
           py::arg("after") = py::none(),
           "Creates a node of `op_type` with operands `inputs` (Values; None for an empty "
           "slot) and `attributes` ({name: value}); `outputs` is the number of results "
           "(default 1, named freshly) or their names. Inserted before `before`, after "
           "`after`, or at the end.")
      .def("add_input", [](const PyGraph &pg, const std::string &name, py::object elem,
                           py::object shape, int pos) {
        Graph *g = pg.g();
        const Type *t = nullptr; // checked before the input exists
        if (!elem.is_none() || !shape.is_none())
          t = typeArg(g->getContext(), elem, shape, DataType(0));
        Value *v = check(g->addInput(name, t, pos));
        return PyValue(pg.holderPtr(), v);
      }, py::arg("name"), py::arg("elem_type") = py::none(), py::arg("shape") = py::none(),
         py::arg("pos") = -1,
         "Adds a graph input at `pos` (-1: the end) with its type: `elem_type` an ONNX name "
         "('float'), its number or a NumPy dtype, and `shape` a list of dims (int, symbol or "
         "expression str, None for unknown; None: unknown rank); or `elem_type` a whole type "
         "as Value.type prints it ('float[1,N,3]'). Inputs need a type for a valid ONNX model.")
      .def("remove_input", [](const PyGraph &pg, py::handle which) {
        Graph *g = pg.g();
        unsigned i;
        if (py::isinstance<py::int_>(which)) {
          long k = which.cast<long>();
          if (k < 0) k += g->numInputs();
          if (k < 0 || k >= (long)g->numInputs()) fail("remove_input: index out of range");
          i = (unsigned)k;
        } else {
          Value *v = operandFor(pg.holderPtr(), nullptr, which, "remove_input");
          auto ins = g->inputs();
          auto it = std::find(ins.begin(), ins.end(), v);
          if (it == ins.end()) fail("remove_input: \"" + str(v->name()) + "\" is not an input of " + g->path());
          i = (unsigned)(it - ins.begin());
        }
        check(g->removeInput(i));
      }, py::arg("input"), "Removes an input (a Value or its index); it must be unused.")
      .def("add_output", [](const PyGraph &pg, py::handle v) {
        Graph *g = pg.g();
        Value *val = operandFor(pg.holderPtr(), g, v, "add_output");
        if (!val) fail("add_output: None is not a value");
        OutputInfo info = outputInfoFor(pg, val, "add_output");
        g->addOutput(val, std::move(info));
      }, py::arg("value"),
         "Makes `value` an output, with its type (Note [Output types]): a value of unknown "
         "type gets one from shape inference, else this raises.")
      .def("set_output", [](const PyGraph &pg, unsigned i, py::handle v) {
        Graph *g = pg.g();
        if (i >= g->numOutputs()) fail("set_output: index out of range");
        Value *val = operandFor(pg.holderPtr(), g, v, "set_output");
        if (!val) fail("set_output: None is not a value");
        if (val == g->output(i)) return;
        g->outputInfo(i) = outputInfoFor(pg, val, "set_output", &g->outputInfo(i));
        g->setOutput(i, val);
      }, py::arg("index"), py::arg("value"),
         "Makes `value` output #index, with its type (as add_output).")
      .def("remove_output", [](const PyGraph &pg, py::handle which) {
        pg.g()->removeOutput(outputIndex(pg, which));
      }, py::arg("output"), "Removes an output (a Value or its index); the value stays.")
      .def("add_initializer", [](const PyGraph &pg, const std::string &name, py::handle data) {
        Graph *g = pg.g();
        Tensor t = tensorFromPython(data, name);
        return PyValue(pg.holderPtr(), check(g->addInitializer(name, std::move(t))));
      }, py::arg("name"), py::arg("data"), "Adds a constant initializer from a NumPy array or Tensor (copied).")
      .def("remove_initializer", [](const PyGraph &pg, py::handle which) {
        Graph *g = pg.g();
        Value *v = nullptr;
        if (py::isinstance<py::str>(which)) {
          std::string n = which.cast<std::string>();
          for (Value *x : g->initializers())
            if (x->name() == n) v = x;
          if (!v) fail("remove_initializer: " + g->path() + " has no initializer \"" + n + "\"");
        } else {
          v = operandFor(pg.holderPtr(), nullptr, which, "remove_initializer");
        }
        if (v->getGraph() != g || !v->hasInitializer())
          fail("remove_initializer: \"" + str(v->name()) + "\" is not an initializer of " + g->path());
        if (v->isGraphInput()) {
          g->removeInputDefault(v);
          return;
        }
        if (!v->useEmpty())
          fail("remove_initializer: \"" + str(v->name()) + "\" is still used (replace its uses first)");
        g->removeInitializersIf([&](Value *x) { return x == v; });
      }, py::arg("initializer"),
         "Removes an initializer (a Value or name). A graph input keeps the input and loses its default.")
      .def("lookup", [](const PyGraph &pg, const std::string &name) {
        return valueOrNone(pg.holderPtr(), pg.g()->lookup(name));
      }, py::arg("name"), "The value of that name visible here (this graph or an enclosing one), or None.")
      .def("fresh_name", [](const PyGraph &pg, const std::string &base) {
        return pg.g()->freshName(base).str();
      }, py::arg("base"), "A name based on `base` that no value visible here has.")
      .def("__eq__", [](const PyGraph &a, const PyGraph &b) { return a == b; })
      .def("__hash__", &PyGraph::hash)
      .def("__repr__", [](const PyGraph &pg) {
        if (!pg.e->alive) return std::string("<onnxir.Graph (erased)>");
        return "<onnxir.Graph " + pg.g()->path() + ", " + std::to_string(pg.g()->numNodes()) + " nodes>";
      });

  //===--- Node ----------------------------------------------------------------===//
  node
      .def_property("op_type", [](const PyNode &pn) { return str(pn.n()->opType()); },
                    [](const PyNode &pn, const std::string &s) { pn.n()->setOpType(s); })
      .def_property("domain", [](const PyNode &pn) { return str(pn.n()->domain()); },
                    [](const PyNode &pn, const std::string &s) { pn.n()->setDomain(s); })
      .def_property("name", [](const PyNode &pn) { return str(pn.n()->name()); },
                    [](const PyNode &pn, const std::string &s) { pn.n()->setName(s); })
      .def_property_readonly("graph", [](const PyNode &pn) { return PyGraph(pn.holderPtr(), pn.n()->getGraph()); })
      .def_property_readonly("path", [](const PyNode &pn) { return nodePath(pn.n()); })
      .def_property_readonly("is_erased", [](const PyNode &pn) { return !pn.e->alive; })
      .def("_inputs", [](const PyNode &pn) {
        return valuesList(pn.holderPtr(), pn.n()->operands());
      }, "The operands (a new list; None for an empty slot).")
      .def_property_readonly("outputs", [](const PyNode &pn) {
        return py::tuple(valuesList(pn.holderPtr(), pn.n()->results()));
      }, "The results, a tuple (None for an empty slot): a node's results are fixed.")
      .def("set_input", [](const PyNode &pn, unsigned i, py::handle v) {
        Node *n = pn.n();
        if (i >= n->numOperands()) fail(nodePath(n) + ": set_input: index " + std::to_string(i) + " out of range");
        n->setOperand(i, operandFor(pn.holderPtr(), n->getGraph(), v, "set_input"));
      }, py::arg("index"), py::arg("value"))
      .def("set_inputs", [](const PyNode &pn, py::iterable vs) {
        Node *n = pn.n();
        std::vector<Value *> ops;
        for (py::handle v : vs) ops.push_back(operandFor(pn.holderPtr(), n->getGraph(), v, "set_inputs"));
        n->setOperands(ops);
      }, py::arg("values"), "Replaces every operand (Values; None for an empty slot).")
      .def("add_input", [](const PyNode &pn, py::handle v) {
        Node *n = pn.n();
        n->addOperand(operandFor(pn.holderPtr(), n->getGraph(), v, "add_input"));
      }, py::arg("value"), "Appends an operand (a Value, or None for an empty slot).")
      .def("remove_input", [](const PyNode &pn, unsigned i) {
        Node *n = pn.n();
        if (i >= n->numOperands()) fail(nodePath(n) + ": remove_input: index out of range");
        n->removeOperand(i);
      }, py::arg("index"), "Removes operand #index (the later ones move down).")
      .def("_attribute_names", [](const PyNode &pn) {
        Node *n = pn.n();
        py::list out;
        for (unsigned i = 0; i < n->numAttributes(); ++i) out.append(py::str(n->attribute(i).name()));
        return out;
      }, "The names of the attributes, in order.")
      .def("_set_attributes", [](const PyNode &pn, py::dict d) {
        Node *n = pn.n();
        // Every value converted first: a bad one changes nothing.
        std::vector<std::unique_ptr<Attribute>> attrs;
        for (auto item : d) {
          if (!py::isinstance<py::str>(item.first))
            throw py::type_error("attribute names are str, not " +
                                 std::string(py::str(item.first.get_type().attr("__name__"))));
          attrs.push_back(attributeFromPython(py::str(item.first), item.second));
        }
        std::vector<std::string> old;
        for (unsigned i = 0; i < n->numAttributes(); ++i) old.push_back(n->attribute(i).name());
        for (const std::string &name : old) n->removeAttr(name);
        for (auto &a : attrs) n->setAttr(std::move(a));
      }, py::arg("attributes"), "Replaces every attribute (see Node.attributes).")
      .def("get_attribute", [](const PyNode &pn, const std::string &name, py::object dflt) {
        Attribute *a = pn.n()->getAttr(name);
        return a ? attributeToPython(pn.holderPtr(), *a) : dflt;
      }, py::arg("name"), py::arg("default") = py::none(),
         "The attribute's value (float, int, str, lists, Tensor, Graph), or `default`.")
      .def("set_attribute", [](const PyNode &pn, const std::string &name, py::handle v) {
        Node *n = pn.n();
        n->setAttr(attributeFromPython(name, v));
      }, py::arg("name"), py::arg("value"),
         "Sets an attribute (replacing one of that name): float, int, str, a list of one of "
         "those, a NumPy array or Tensor, a Graph.")
      .def("remove_attribute", [](const PyNode &pn, const std::string &name) {
        return pn.n()->removeAttr(name);
      }, py::arg("name"), "Removes an attribute; False if the node has none of that name.")
      .def_property_readonly("subgraphs", [](const PyNode &pn) {
        py::list out;
        for (Graph *g : pn.n()->subgraphs()) out.append(py::cast(PyGraph(pn.holderPtr(), g)));
        return py::tuple(out);
      }, "The graphs its attributes hold (a tuple).")
      .def("erase", [](const PyNode &pn) {
        check(pn.n()->erase());
      }, "Erases the node (its results must be unused). The handle is dead afterwards.")
      .def("move_before", [](const PyNode &pn, py::handle other) {
        Node *n = pn.n();
        check(n->moveBefore(nodeArg(pn.holderPtr(), other, "move_before")));
      }, py::arg("node"), "Moves the node before `node` (in its graph; operands must stay defined first).")
      .def("move_after", [](const PyNode &pn, py::handle other) {
        Node *n = pn.n();
        check(n->moveAfter(nodeArg(pn.holderPtr(), other, "move_after")));
      }, py::arg("node"), "Moves the node after `node` (as move_before).")
      .def("__eq__", [](const PyNode &a, const PyNode &b) { return a == b; })
      .def("__hash__", &PyNode::hash)
      .def("__repr__", [](const PyNode &pn) {
        if (!pn.e->alive) return std::string("<onnxir.Node (erased)>");
        return "<onnxir.Node " + nodePath(pn.n()) + ">";
      });

  //===--- Value ---------------------------------------------------------------===//
  value
      .def_property("name", [](const PyValue &pv) { return str(pv.v()->name()); },
                    [](const PyValue &pv, const std::string &s) { check(pv.v()->setName(s)); },
                    "Assigning renames the value everywhere (fails on a clash in its scopes).")
      .def("rename", [](const PyValue &pv, const std::string &s) { check(pv.v()->setName(s)); },
           py::arg("name"), "Renames the value everywhere (fails on a clash in its scopes).")
      .def_property_readonly("kind", [](const PyValue &pv) { return kindName(pv.v()->kind()); })
      .def_property_readonly("graph", [](const PyValue &pv) { return PyGraph(pv.holderPtr(), pv.v()->getGraph()); })
      .def_property("elem_type", [](const PyValue &pv) { return elemName(elemOf(pv.v())); },
                    [](const PyValue &pv, py::object e) {
                      Value *v = pv.v();
                      py::object shape = shapeOf(v);
                      setType(v, e, shape);
                    }, "The ONNX element type name ('float', 'int64', ...; '' if unknown).")
      .def_property("shape", [](const PyValue &pv) { return shapeOf(pv.v()); },
                    [](const PyValue &pv, py::object shape) { setType(pv.v(), py::none(), shape); },
                    "A tuple of dims (int, symbol or expression str, None if unknown), or None.")
      .def_property_readonly("type", [](const PyValue &pv) -> py::object {
        const Type *t = pv.v()->type();
        if (!t) return py::none();
        return py::str(t->str());
      })
      .def_property_readonly("producer", [](const PyValue &pv) {
        return nodeOrNone(pv.holderPtr(), pv.v()->definingNode());
      })
      .def_property_readonly("index", [](const PyValue &pv) -> py::object {
        Value *v = pv.v();
        if (!v->definingNode()) return py::none();
        return py::int_(v->resultIndex());
      }, "The result index in its producer (None for inputs and initializers).")
      .def_property_readonly("uses", [](const PyValue &pv) { pv.v(); return UseRange{pv}; })
      .def_property("const_value", &constValue, &setConstValue,
                    "The initializer (a Tensor; NumPy views of it do not copy), or None. "
                    "Assign a NumPy array to replace its data.")
      .def_property_readonly("is_graph_input", [](const PyValue &pv) { return pv.v()->isGraphInput(); })
      .def_property_readonly("is_graph_output", [](const PyValue &pv) { return pv.v()->isGraphOutput(); })
      .def_property_readonly("is_erased", [](const PyValue &pv) { return !pv.e->alive; })
      .def("replace_all_uses_with", [](const PyValue &pv, py::handle other) {
        Value *v = pv.v();
        Value *w = operandFor(pv.holderPtr(), nullptr, other, "replace_all_uses_with");
        if (!w) fail("replace_all_uses_with: None is not a value");
        if (w == v) return;
        // Every user must see `w` (checked first: a failure changes nothing).
        Graph *wg = w->getGraph();
        for (Use &u : v->uses()) {
          Graph *ug = u.getOwner()->getGraph();
          if (ug != wg && !ug->isNestedIn(wg))
            fail("replace_all_uses_with: value \"" + str(w->name()) + "\" of " + wg->path() +
                 " is not visible from " +
                 (u.getOwner()->isReturn() ? ug->path() + " (graph output)" : nodePath(u.getOwner())));
        }
        v->replaceAllUsesWith(w);
      }, py::arg("other"), "Points every use (graph outputs included) at `other`.")
      .def("set_type", [](const PyValue &pv, py::object elem, py::object shape) {
        setType(pv.v(), elem, shape);
      }, py::arg("elem_type"), py::arg("shape") = py::none(),
         "Sets the type: `elem_type` and `shape` as Graph.add_input takes them ('float', "
         "[1, 'N', 3]; or 'float[1,N,3]'); elem_type None keeps the element type.")
      .def("__eq__", [](const PyValue &a, const PyValue &b) { return a == b; })
      .def("__hash__", &PyValue::hash)
      .def("__repr__", [](const PyValue &pv) {
        if (!pv.e->alive) return std::string("<onnxir.Value (erased)>");
        return "<onnxir.Value \"" + str(pv.v()->name()) + "\">";
      });
}

/// Docstrings of the properties that have none inline (property docs are
/// writable; a table keeps the definitions above short).
void documentProperties(py::module_ &m) {
  static const char *const docs[][3] = {
      {"Model", "graph", "The main graph."},
      {"Model", "ir_version", "ModelProto.ir_version (None if absent)."},
      {"Model", "producer_name", "ModelProto.producer_name (None if absent)."},
      {"Model", "producer_version", "ModelProto.producer_version (None if absent)."},
      {"Model", "domain", "ModelProto.domain (None if absent)."},
      {"Model", "model_version", "ModelProto.model_version (None if absent)."},
      {"Model", "doc_string", "ModelProto.doc_string (None if absent)."},
      {"Graph", "name", "The graph's name."},
      {"Graph", "doc_string", "The graph's doc string."},
      {"Graph", "nodes", "The nodes in order: a live NodeList (iterate, len, index)."},
      {"Graph", "num_nodes", "How many nodes the graph holds (O(1))."},
      {"Graph", "parent_graph", "The graph enclosing this subgraph, or None."},
      {"Graph", "model", "The model this graph belongs to."},
      {"Graph", "path", "Where the graph is, as messages name it ('graph \"main\" > ...')."},
      {"Node", "op_type", "The operator type ('Add'); assign to change it."},
      {"Node", "domain", "The operator domain ('' is ONNX's); assign to change it."},
      {"Node", "name", "The node's name ('' if none)."},
      {"Node", "graph", "The graph holding the node."},
      {"Node", "path", "Where the node is, as messages name it."},
      {"Node", "is_erased", "True once the node was erased (the handle is dead)."},
      {"Value", "kind", "'input', 'initializer', 'sparse_initializer' or 'result'."},
      {"Value", "graph", "The graph defining the value."},
      {"Value", "type", "The type as text ('float[1,N,3]'), or None when unknown."},
      {"Value", "producer", "The node whose result this is, or None."},
      {"Value", "uses", "The uses as (node, operand index) pairs: a live UseList."},
      {"Value", "is_graph_input", "True for an input of its graph."},
      {"Value", "is_graph_output", "True when an output of its graph."},
      {"Value", "is_erased", "True once the value was erased (the handle is dead)."},
      {"Tensor", "name", "The tensor's name ('' if none)."},
      {"Tensor", "elem_type", "The ONNX element type name ('float', 'int64', ...)."},
      {"Tensor", "shape", "The dims, a tuple of ints."},
      {"Tensor", "is_external", "True when the data lives in an external file."},
      {"Tensor", "nbytes", "The size of the data in bytes (None when not known)."},
  };
  for (auto &d : docs) {
    py::object prop = m.attr(d[0]).attr("__dict__")[d[1]];
    py::object doc = prop.attr("__doc__");
    if (doc.is_none() || py::str(doc).cast<std::string>().empty()) prop.attr("__doc__") = d[2];
  }
}

} // namespace onnxir::python
