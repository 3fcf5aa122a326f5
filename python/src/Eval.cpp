//===- Eval.cpp - onnxir.run and onnxir.compare ---------------------------===//
//
// The reference evaluator (onnxir/Eval/Evaluator.h) for Python: the inputs
// are converted to tensors with the GIL held, the model is marked busy and
// the GIL released while it runs (Note [Python handles] in Core.h), and the
// outputs come back as NumPy arrays. Random inputs and the tolerance rule
// are the library's (Eval/Compare.h), as onnxir-run's.
//
// Note [Sequences and optionals in Python]
// An input the model declares a sequence is given as a list (or tuple) of
// arrays, nested lists for nested sequences; one declared optional as None
// (empty) or its element. Every other input is an array (a Python list
// there is np.asarray's, as before). Outputs: a sequence is a list of
// arrays, an empty optional None, an optional holding a value that value.
//
// Note [Evaluation errors in Python]
// The evaluator's errors are raised as subclasses of onnxir.Error that are
// also the builtin exception a Python user catches:
//   NotSupportedError (NotImplementedError)  an op, type or form the
//       evaluator cannot run ("not supported: node #3 (Conv) in graph ...");
//   EvalValueError (ValueError)  an input of the wrong type or shape, a
//       missing or unknown input, data a node refuses, a result over
//       max_bytes;
//   EvalError (RuntimeError)  every other failure (the base of both).
// Arguments of the wrong Python type are TypeError, as elsewhere.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Eval/Compare.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Graph.h"

#include <pybind11/stl.h>

#include <map>
#include <random>

namespace onnxir::python {
namespace {

PyObject *gEvalError = nullptr, *gEvalValueError = nullptr, *gNotSupported = nullptr;

/// Raises the Python exception of `s` (Note [Evaluation errors in Python]).
[[noreturn]] void raise(const absl::Status &s, const std::string &prefix = "") {
  PyObject *type = gEvalError;
  switch (s.code()) {
  case absl::StatusCode::kUnimplemented: type = gNotSupported; break;
  case absl::StatusCode::kInvalidArgument:
  case absl::StatusCode::kResourceExhausted:
  case absl::StatusCode::kOutOfRange:
  case absl::StatusCode::kFailedPrecondition: type = gEvalValueError; break;
  default: break;
  }
  setPythonError(type, (prefix + std::string(s.message())).c_str());
  throw py::error_already_set();
}

std::string typeName(py::handle v) { return py::str(v.get_type().attr("__name__")); }

/// A run's inputs: tensors, and the sequences and optionals apart (Note
/// [Sequences and optionals in Python]).
struct Inputs {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, EvalValue> values;
  size_t size() const { return tensors.size() + values.size(); }
};

/// `v` given for `name` of declared type `ty` (a sequence or optional
/// input, or an element of one).
EvalValue valueFromPython(py::handle v, const Type *ty, const std::string &name) {
  Type::Kind k = ty ? ty->kind() : Type::Kind::Tensor;
  if (k == Type::Kind::Optional) {
    if (v.is_none()) return EvalValue::optional();
    return valueFromPython(v, ty->elementType(), name); // the evaluator holds it
  }
  if (k == Type::Kind::Sequence) {
    if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v))
      throw py::type_error("inputs['" + name + "'] is " + ty->str() +
                           ": give a list of arrays, not " + typeName(v));
    std::vector<EvalValue> elems;
    size_t k = 0;
    for (py::handle e : v)
      elems.push_back(valueFromPython(e, ty->elementType(),
                                      name + "[" + std::to_string(k++) + "]"));
    return EvalValue::sequence(std::move(elems));
  }
  if (v.is_none())
    throw py::type_error("inputs['" + name + "'] is None, which only an optional input takes");
  return EvalValue(tensorFromPython(v, name));
}

/// {name: array, list or None} for `m` (None: none).
Inputs inputsArg(const Model &m, py::handle inputs) {
  Inputs out;
  if (inputs.is_none()) return out;
  if (!py::isinstance<py::dict>(inputs))
    throw py::type_error("inputs must be a dict {input name: array}, not " + typeName(inputs));
  std::map<std::string, const Type *> declared;
  for (Value *v : m.graph().inputs()) declared[v->name().str()] = v->type();
  for (auto item : inputs.cast<py::dict>()) {
    if (!py::isinstance<py::str>(item.first))
      throw py::type_error("inputs: keys are input names (str), not " + typeName(item.first));
    std::string name = py::str(item.first);
    auto d = declared.find(name);
    const Type *ty = d == declared.end() ? nullptr : d->second;
    if (ty && (ty->kind() == Type::Kind::Sequence || ty->kind() == Type::Kind::Optional))
      out.values[name] = valueFromPython(item.second, ty, name);
    else
      out.tensors[name] = tensorFromPython(item.second, name);
  }
  return out;
}

/// An output as Python (Note [Sequences and optionals in Python]).
py::object pyOfValue(const EvalValue &v) {
  switch (v.kind) {
  case EvalValue::Kind::Tensor: return arrayOfTensor(v.tensor);
  case EvalValue::Kind::Sequence: {
    py::list l;
    for (const EvalValue &e : v.elements) l.append(pyOfValue(e));
    return std::move(l);
  }
  case EvalValue::Kind::Optional:
    if (v.elements.empty()) return py::none();
    return pyOfValue(v.elements[0]);
  case EvalValue::Kind::Map: {
    // A dict of Python scalars, as onnxruntime returns ZipMap's maps:
    // string keys and values as str (string tensors elsewhere are bytes).
    auto items = [](const Tensor &t) -> py::list {
      if (t.dataType() != DataType::String) return arrayOfTensor(t).attr("tolist")();
      py::list l;
      for (const std::string &s : check(t.strings())) l.append(py::str(s));
      return l;
    };
    py::list keys = items(v.elements[0].tensor), values = items(v.elements[1].tensor);
    py::dict d;
    for (size_t k = 0; k < keys.size() && k < values.size(); ++k) d[keys[k]] = values[k];
    return std::move(d);
  }
  }
  return py::none();
}

std::map<std::string, int64_t> bindDimsArg(py::handle bind) {
  std::map<std::string, int64_t> out;
  if (bind.is_none()) return out;
  if (!py::isinstance<py::dict>(bind))
    throw py::type_error("bind_dims must be a dict {symbol: int}, not " + typeName(bind));
  for (auto item : bind.cast<py::dict>()) {
    std::string sym = py::str(item.first);
    if (!py::isinstance<py::int_>(item.second) || py::isinstance<py::bool_>(item.second))
      throw py::type_error("bind_dims['" + sym + "'] must be an int, not " + typeName(item.second));
    int64_t v = item.second.cast<int64_t>();
    if (v < 0) throw py::value_error("bind_dims['" + sym + "'] is negative: " + std::to_string(v));
    out[sym] = v;
  }
  return out;
}

EvalOptions optionsArg(uint64_t seed, py::handle maxBytes) {
  EvalOptions o;
  o.seed = seed;
  if (!maxBytes.is_none()) {
    if (!py::isinstance<py::int_>(maxBytes) || py::isinstance<py::bool_>(maxBytes))
      throw py::type_error("max_bytes must be an int or None, not " + typeName(maxBytes));
    o.maxBytes = maxBytes.cast<uint64_t>();
  }
  return o;
}

/// Fills the inputs `given` lacks with the library's random values (the
/// dims taken as 1 are UserWarnings).
Inputs withRandom(const Model &m, const Inputs &given, const std::map<std::string, int64_t> &bind,
                  std::mt19937_64 &rng) {
  std::vector<std::string> notes;
  std::map<std::string, Tensor> mask = given.tensors;
  for (auto &e : given.values) mask[e.first] = Tensor(); // given, not to be made
  auto made = randomInputs(m, mask, bind, rng, &notes);
  for (const std::string &n : notes)
    if (PyErr_WarnEx(PyExc_UserWarning, (n + " (bind_dims={symbol: size})").c_str(), 2) != 0)
      throw py::error_already_set();
  if (!made.ok()) raise(made.status());
  Inputs all = given;
  for (auto &e : *made) all.tensors[e.first] = std::move(e.second);
  return all;
}

/// Runs `pm` with the GIL released. A missing input's error says how to
/// give it.
EvalResult runModel(const PyModel &pm, const Inputs &inputs, const EvalOptions &o,
                    const std::string &which = "") {
  const Model &m = pm.m();
  absl::StatusOr<EvalResult> r;
  std::map<std::string, EvalValue> all;
  if (!inputs.values.empty()) {
    all = inputs.values;
    for (auto &e : inputs.tensors) all[e.first] = EvalValue(e.second);
  }
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    r = inputs.values.empty() ? evaluateModel(m, inputs.tensors, o)
                              : evaluateModelValues(m, all, o);
  }
  if (!r.ok()) {
    absl::Status s = r.status();
    std::string msg(s.message());
    if (msg.size() > 12 && msg.compare(msg.size() - 12, 12, "is not given") == 0)
      s = absl::Status(s.code(), msg + " (pass it in inputs, or random=True)");
    raise(s, which);
  }
  return std::move(*r);
}

py::dict runPy(const PyModel &pm, py::handle inputsObj, bool random, uint64_t seed,
               py::handle bindObj, py::handle maxBytes) {
  Inputs inputs = inputsArg(pm.m(), inputsObj);
  std::map<std::string, int64_t> bind = bindDimsArg(bindObj);
  EvalOptions o = optionsArg(seed, maxBytes);
  if (random) {
    std::mt19937_64 rng(seed);
    inputs = withRandom(pm.m(), inputs, bind, rng);
  }
  EvalResult r = runModel(pm, inputs, o);
  py::dict out;
  // In the order of the graph's outputs.
  for (Value *v : pm.m().graph().outputs()) {
    if (!v) continue;
    auto it = r.outputs.find(v->name().str());
    if (it != r.outputs.end()) out[py::str(it->first)] = arrayOfTensor(it->second);
    auto jt = r.otherOutputs.find(v->name().str());
    if (jt != r.otherOutputs.end()) out[py::str(jt->first)] = pyOfValue(jt->second);
  }
  return out;
}

/// Per output, over every input set: (name, max_abs, max_rel, ok, note).
py::list comparePy(const PyModel &a, const PyModel &b, py::handle inputsObj, int64_t n, double rtol,
                   double atol, uint64_t seed, py::handle bindObj, py::handle maxBytes) {
  if (n < 1) throw py::value_error("n must be at least 1, not " + std::to_string(n));
  if (!(rtol >= 0) || !(atol >= 0)) throw py::value_error("rtol and atol must be >= 0");
  Inputs given = inputsArg(a.m(), inputsObj);
  std::map<std::string, int64_t> bind = bindDimsArg(bindObj);
  EvalOptions o = optionsArg(seed, maxBytes);
  std::mt19937_64 rng(seed);
  struct Row {
    OutputDiff d;
    std::string note;
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  for (int64_t k = 0; k < n; ++k) {
    Inputs inputs = withRandom(a.m(), given, bind, rng);
    if (k == 0 && inputs.size() == given.size()) n = 1; // nothing random: one run says it all
    EvalResult ra = runModel(a, inputs, o, "a: ");
    EvalResult rb = runModel(b, inputs, o, "b: ");
    auto diffs = compareOutputs(ra, rb, rtol, atol);
    if (!diffs.ok()) raise(diffs.status());
    for (OutputDiff &d : *diffs) {
      std::string note;
      switch (d.kind) {
      case OutputDiff::Kind::MissingInA: note = "missing in a"; break;
      case OutputDiff::Kind::MissingInB: note = "missing in b"; break;
      case OutputDiff::Kind::TypeMismatch:
        note = describeOutput(ra, d.name) + " vs " + describeOutput(rb, d.name);
        break;
      case OutputDiff::Kind::Nondeterministic: note = "nondeterministic, not compared"; break;
      case OutputDiff::Kind::Strings: note = d.ok ? "strings equal" : "strings differ"; break;
      case OutputDiff::Kind::Values:
        if (!d.ok) note = "over tolerance";
        break;
      }
      auto [it, fresh] = index.emplace(d.name, rows.size());
      if (fresh) {
        rows.push_back({d, note});
        continue;
      }
      Row &r = rows[it->second];
      r.d.maxAbs = std::max(r.d.maxAbs, d.maxAbs);
      r.d.maxRel = std::max(r.d.maxRel, d.maxRel);
      if (r.d.ok && !d.ok) r.note = note;
      r.d.ok &= d.ok;
    }
  }
  py::list out;
  for (Row &r : rows) out.append(py::make_tuple(r.d.name, r.d.maxAbs, r.d.maxRel, r.d.ok, r.note));
  return out;
}

PyObject *newError(const char *name, const char *doc, std::vector<PyObject *> bases) {
  py::tuple t(bases.size());
  for (size_t i = 0; i < bases.size(); ++i) t[i] = py::handle(bases[i]);
  PyObject *e = PyErr_NewExceptionWithDoc(name, doc, t.ptr(), nullptr);
  if (!e) throw py::error_already_set();
  return e;
}

} // namespace

void bindEval(py::module_ &m) {
  gEvalError = newError("onnxir.EvalError",
                        "A failure of the reference evaluator (onnxir.run, onnxir.compare); "
                        "the message names the node or input.",
                        {gErrorType, PyExc_RuntimeError});
  gEvalValueError = newError("onnxir.EvalValueError",
                             "An input of the wrong element type or shape, a missing or unknown "
                             "input, data a node refuses, or a result over max_bytes.",
                             {gEvalError, PyExc_ValueError});
  gNotSupported = newError("onnxir.NotSupportedError",
                           "An operator, element type or form the reference evaluator cannot "
                           "run; the message names the node.",
                           {gEvalError, PyExc_NotImplementedError});
  m.attr("EvalError") = py::handle(gEvalError);
  m.attr("EvalValueError") = py::handle(gEvalValueError);
  m.attr("NotSupportedError") = py::handle(gNotSupported);
  m.def("_run", &runPy, py::arg("model"), py::arg("inputs") = py::none(),
        py::arg("random") = false, py::arg("seed") = 0, py::arg("bind_dims") = py::none(),
        py::arg("max_bytes") = py::none(), "onnxir.run on a Model (see onnxir.run).");
  m.def("_compare", &comparePy, py::arg("a"), py::arg("b"), py::arg("inputs") = py::none(),
        py::arg("n") = 3, py::arg("rtol") = 1e-4, py::arg("atol") = 1e-7, py::arg("seed") = 0,
        py::arg("bind_dims") = py::none(), py::arg("max_bytes") = py::none(),
        "onnxir.compare on two Models: [(name, max_abs, max_rel, ok, note)].");
}

} // namespace onnxir::python
