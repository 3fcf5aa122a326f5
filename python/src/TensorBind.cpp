//===- TensorBind.cpp - Tensors and attribute values for Python -----------===//
//
// A Tensor exports its bytes through the buffer protocol without a copy: the
// Python object keeps the buffer that holds them (Tensor::sharedBytes), so a
// NumPy view stays valid whatever later happens to the tensor, its value or
// its model. Views are read-only: the buffers are shared (between a tensor's
// copies, and with the mapped file for loaded weights); new data is assigned
// (Value.const_value = array), which replaces the buffer, never writes it.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/IR/DataType.h"

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <complex>
#include <cstring>

namespace onnxir::python {

const Tensor &PyTensor::t() const { return mut(); }
Tensor &PyTensor::mut() const {
  if (own) return *own;
  Value *v = value.v();
  if (!v->initializer()) fail("value \"" + v->name().str() + "\" no longer has an initializer");
  return *v->initializer();
}

namespace {

/// The struct-module format and item size of an element type (bfloat16 and
/// float8 read as their unsigned storage); "" when NumPy has none.
std::pair<std::string, size_t> formatOf(DataType t) {
  switch (t) {
  case DataType::Float: return {"f", 4};
  case DataType::Double: return {"d", 8};
  case DataType::Float16: return {"e", 2};
  case DataType::Int8: return {"b", 1};
  case DataType::Uint8: return {"B", 1};
  case DataType::Int16: return {"h", 2};
  case DataType::Uint16: return {"H", 2};
  case DataType::Int32: return {"i", 4};
  case DataType::Uint32: return {"I", 4};
  case DataType::Int64: return {"q", 8};
  case DataType::Uint64: return {"Q", 8};
  case DataType::Bool: return {"?", 1};
  case DataType::Complex64: return {"Zf", 8};
  case DataType::Complex128: return {"Zd", 16};
  case DataType::BFloat16: return {"H", 2};
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
  case DataType::Float8E8M0: return {"B", 1};
  default: return {"", 0};
  }
}

std::string describe(const Tensor &t) {
  return t.name().empty() ? std::string("tensor") : "tensor \"" + t.name() + "\"";
}

py::buffer_info bufferOf(PyTensor &pt) {
  const Tensor &t = pt.t();
  auto [fmt, size] = formatOf(t.dataType());
  if (fmt.empty())
    fail(describe(t) + ": element type '" + dataTypeName(t.dataType()).str() +
         "' has no NumPy buffer format (use .tolist() or .raw_bytes())");
  auto n = t.numElements();
  if (!n) fail(describe(t) + ": invalid dims");
  auto [owner, bytes] = check(t.sharedBytes());
  if ((uint64_t)bytes.size() != (uint64_t)*n * size)
    fail(describe(t) + ": " + std::to_string(bytes.size()) + " bytes of data for " +
         std::to_string(*n) + " elements");
  if (owner && (pt.held.empty() || pt.held.back() != owner)) pt.held.push_back(owner);
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end()), strides(shape.size());
  py::ssize_t stride = (py::ssize_t)size;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  static const char kEmpty[16] = {};
  void *data = const_cast<char *>(bytes.empty() ? kEmpty : bytes.data());
  return py::buffer_info(data, (py::ssize_t)size, fmt, (py::ssize_t)shape.size(), shape, strides,
                         /*readonly=*/true);
}

// The buffer protocol by hand: pybind11's own getbuffer cannot report an
// error (an exception there would cross C code), and a tensor whose value was
// erased, or whose type NumPy lacks, must raise, not abort.
extern "C" int tensorGetBuffer(PyObject *obj, Py_buffer *view, int flags) {
  std::memset(view, 0, sizeof(Py_buffer));
  py::buffer_info *info = nullptr;
  try {
    PyTensor &pt = py::handle(obj).cast<PyTensor &>();
    info = new py::buffer_info(bufferOf(pt));
  } catch (const Error &e) {
    setPythonError(gErrorType, e.what());
    return -1;
  } catch (py::error_already_set &e) {
    e.restore();
    return -1;
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_BufferError, e.what());
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
    delete info;
    PyErr_SetString(PyExc_BufferError,
                    "onnxir tensors are read-only (assign Value.const_value to change one)");
    return -1;
  }
  view->obj = obj;
  view->internal = info;
  view->buf = info->ptr;
  view->itemsize = info->itemsize;
  view->len = info->itemsize;
  for (auto s : info->shape) view->len *= s;
  view->readonly = 1;
  view->ndim = 1;
  if ((flags & PyBUF_FORMAT) == PyBUF_FORMAT) view->format = const_cast<char *>(info->format.c_str());
  if ((flags & PyBUF_STRIDES) == PyBUF_STRIDES) {
    view->ndim = (int)info->ndim;
    view->strides = info->strides.data();
    view->shape = info->shape.data();
  }
  Py_INCREF(obj);
  return 0;
}

extern "C" void tensorReleaseBuffer(PyObject *, Py_buffer *view) {
  delete static_cast<py::buffer_info *>(view->internal);
}

/// memoryview(t): raises the tensor's error (NumPy, given an object whose
/// buffer fails, would quietly make an object array of it instead).
py::object memoryviewOf(py::handle self) {
  PyObject *mv = PyMemoryView_FromObject(self.ptr());
  if (!mv) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(mv);
}

py::object numpyOf(PyTensor &pt) {
  py::module_ np = py::module_::import("numpy");
  const Tensor &t = pt.t();
  if (t.dataType() == DataType::String) {
    auto strs = check(t.strings());
    py::list l;
    for (auto &s : strs) l.append(py::bytes(s));
    return np.attr("array")(l, py::arg("dtype") = "object").attr("reshape")(py::tuple(py::cast(t.dims())));
  }
  return np.attr("asarray")(memoryviewOf(py::cast(pt, py::return_value_policy::reference)));
}

DataType fromNumpyKind(py::dtype dt, const std::string &name) {
  char kind = dt.kind();
  size_t size = dt.itemsize();
  switch (kind) {
  case 'f':
    if (size == 4) return DataType::Float;
    if (size == 8) return DataType::Double;
    if (size == 2) return DataType::Float16;
    break;
  case 'i':
  case 'u': {
    // Integers of 1, 2, 4 and 8 bytes, signed ('i') or not ('u').
    static const DataType kInts[2][4] = {
        {DataType::Int8, DataType::Int16, DataType::Int32, DataType::Int64},
        {DataType::Uint8, DataType::Uint16, DataType::Uint32, DataType::Uint64}};
    for (unsigned k = 0; k < 4; ++k)
      if (size == (size_t{1} << k)) return kInts[kind == 'u'][k];
    break;
  }
  case 'b': return DataType::Bool;
  case 'c':
    if (size == 8) return DataType::Complex64;
    if (size == 16) return DataType::Complex128;
    break;
  case 'S':
  case 'U':
  case 'O': return DataType::String;
  }
  fail(name + ": NumPy dtype " + std::string(py::str(dt)) + " has no ONNX element type");
}

/// Tensor.tolist(): each element as the Python object NumPy's tolist gives
/// for its dtype, also for the element types NumPy lacks.
py::list listOf(const PyTensor &pt) {
  const Tensor &t = pt.t();
  DataType dt = t.dataType();
  py::list l;
  if (dt == DataType::String) {
    for (auto &s : check(t.strings())) l.append(py::bytes(s));
  } else if (isComplex(dt)) {
    // (real, imaginary) pairs of floats or doubles (Note [Array bytes]).
    auto n = t.numElements();
    if (!n) fail(describe(t) + ": invalid dims");
    llvm::StringRef bytes = check(t.bytes());
    size_t part = dt == DataType::Complex64 ? 4 : 8;
    if ((uint64_t)bytes.size() != (uint64_t)*n * 2 * part)
      fail(describe(t) + ": " + std::to_string(bytes.size()) + " bytes of data for " +
           std::to_string(*n) + " elements");
    auto read = [&](size_t i) -> double {
      if (part == 4) {
        float f;
        std::memcpy(&f, bytes.data() + i * 4, 4);
        return f;
      }
      double d;
      std::memcpy(&d, bytes.data() + i * 8, 8);
      return d;
    };
    for (int64_t i = 0; i < *n; ++i) {
      std::complex<double> c(read(2 * (size_t)i), read(2 * (size_t)i + 1));
      l.append(py::cast(c));
    }
  } else if (dt == DataType::Bool) {
    for (int64_t v : check(t.values<int64_t>())) l.append(py::bool_(v != 0));
  } else if (isFloatingPoint(dt)) {
    for (double v : check(t.values<double>())) l.append(py::float_(v));
  } else if (dt == DataType::Uint64) {
    for (uint64_t v : check(t.values<uint64_t>())) l.append(py::int_(v));
  } else {
    for (int64_t v : check(t.values<int64_t>())) l.append(py::int_(v));
  }
  return l;
}

} // namespace

Tensor tensorFromPython(py::handle v, const std::string &name) {
  if (py::isinstance<PyTensor>(v)) {
    Tensor t = v.cast<const PyTensor &>().t();
    t.setName(name);
    return t;
  }
  py::module_ np = py::module_::import("numpy");
  py::array arr = np.attr("asarray")(v);
  std::string what = name.empty() ? "tensor" : "\"" + name + "\"";
  Tensor t;
  t.setName(name);
  DataType dt = fromNumpyKind(arr.dtype(), what);
  t.setDataType(dt);
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  t.setDims(dims);
  if (dt == DataType::String) {
    t.setTyped(Tensor::TypedField::String);
    auto &out = t.stringData.mut();
    size_t i = 0;
    for (py::handle e : arr.attr("ravel")()) {
      if (py::isinstance<py::bytes>(e)) out.push_back(e.cast<std::string>());
      else if (py::isinstance<py::str>(e)) out.push_back(e.cast<std::string>());
      else
        fail(what + ": element " + std::to_string(i) + " of the object array is of type " +
             std::string(py::str(e.get_type().attr("__name__"))) +
             "; a string tensor holds only str or bytes");
      ++i;
    }
    return t;
  }
  // Note [Array bytes]
  // Every array enters here (Tensor(), add_initializer, const_value, tensor
  // attributes), whatever its dtype's byte order ('<', '>', '=' or '|') and
  // memory layout: it is copied into ONNX's raw layout, C order and
  // little-endian, and only then are its bytes read. astype with copy=False
  // copies only an array that is not so already (and keeps a 0-d array 0-d,
  // which np.ascontiguousarray would make 1-d). The way out (bufferOf, the
  // complex tolist) reads those bytes in the host's order: like the rest of
  // the project, the module assumes a little-endian host.
  py::object le = arr.dtype().attr("newbyteorder")("<");
  arr = arr.attr("astype")(le, py::arg("order") = "C", py::arg("copy") = false);
  if (!(arr.flags() & py::array::c_style))
    fail(what + ": NumPy gave no C-contiguous little-endian copy of the array");
  t.setRaw(std::string(static_cast<const char *>(arr.data()), (size_t)arr.nbytes()));
  return t;
}

py::object arrayOfTensor(const Tensor &t) {
  py::module_ np = py::module_::import("numpy");
  DataType dt = t.dataType();
  const char *widened = nullptr;
  if (dt == DataType::BFloat16 || dt == DataType::Float4E2M1 ||
      (isFloatingPoint(dt) && dataTypeBits(dt) == 8))
    widened = "float32";
  else if (dt == DataType::Int4 || dt == DataType::Int2)
    widened = "int8";
  else if (dt == DataType::Uint4 || dt == DataType::Uint2)
    widened = "uint8";
  py::tuple shape = py::tuple(py::cast(t.dims()));
  if (widened) {
    auto v = check(t.values<double>());
    return np.attr("array")(py::cast(v), py::arg("dtype") = widened).attr("reshape")(shape);
  }
  PyTensor pt;
  pt.own = std::make_shared<Tensor>(t);
  return np.attr("array")(numpyOf(pt)).attr("reshape")(shape);
}

py::object constValue(const PyValue &pv) {
  Value *v = pv.v();
  if (!v->initializer()) return py::none();
  PyTensor t;
  t.value = pv;
  return py::cast(std::move(t));
}

void setConstValue(const PyValue &pv, py::handle data) {
  Value *v = pv.v();
  if (!v->initializer())
    fail("value \"" + v->name().str() + "\" is not an initializer (add one with Graph.add_initializer)");
  Tensor t = tensorFromPython(data, v->initializer()->name());
  *v->initializer() = std::move(t);
}

std::unique_ptr<Attribute> attributeFromPython(const std::string &name, py::handle v) {
  auto a = std::make_unique<Attribute>(name);
  auto bad = [&](const std::string &why) {
    fail("attribute \"" + name + "\": " + why);
  };
  if (py::isinstance<py::bool_>(v)) {
    a->setInt(v.cast<bool>());
  } else if (py::isinstance<py::int_>(v)) {
    a->setInt(v.cast<int64_t>());
  } else if (py::isinstance<py::float_>(v)) {
    a->setFloat(v.cast<float>());
  } else if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v)) {
    a->setString(v.cast<std::string>());
  } else if (py::isinstance<PyTensor>(v) || py::isinstance<py::array>(v)) {
    a->setTensor(std::make_unique<Tensor>(tensorFromPython(v, "")));
  } else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
    bool allInt = true, allNum = true, allStr = true;
    for (py::handle e : seq) {
      bool isInt = py::isinstance<py::int_>(e), isFloat = py::isinstance<py::float_>(e);
      allInt &= isInt;
      allNum &= isInt || isFloat;
      allStr &= py::isinstance<py::str>(e) || py::isinstance<py::bytes>(e);
    }
    if (seq.size() == 0) bad("an empty list has no attribute type (use a typed value)");
    if (allInt) a->setInts(seq.cast<std::vector<int64_t>>());
    else if (allNum) a->setFloats(seq.cast<std::vector<float>>());
    else if (allStr) a->setStrings(seq.cast<std::vector<std::string>>());
    else bad("a list must hold only ints, only numbers or only strings");
  } else {
    bad("cannot make an attribute of a " +
        std::string(py::str(v.get_type().attr("__name__"))) +
        " (int, float, str, list of those, NumPy array or Tensor)");
  }
  return a;
}

namespace {
py::object strOf(const std::string &s) {
  PyObject *o = PyUnicode_DecodeUTF8(s.data(), (py::ssize_t)s.size(), nullptr);
  if (o) return py::reinterpret_steal<py::object>(o);
  PyErr_Clear();
  return py::bytes(s);
}
py::object tensorObject(const Tensor *t) {
  if (!t) return py::none();
  PyTensor pt;
  pt.own = std::make_shared<Tensor>(*t);
  return py::cast(std::move(pt));
}
} // namespace

py::object attributeToPython(const HolderPtr &h, const Attribute &a) {
  if (a.isReference()) return py::str("@" + a.refAttrName.str());
  switch (a.kind()) {
  case AttrKind::Float: return py::float_(a.f);
  case AttrKind::Int: return py::int_(a.i);
  case AttrKind::String: return strOf(a.s);
  case AttrKind::Ints: return py::cast(a.ints);
  case AttrKind::Floats: {
    py::list l;
    for (float f : a.floats.get()) l.append(f);
    return l;
  }
  case AttrKind::Strings: {
    py::list l;
    for (auto &s : a.strings.get()) l.append(strOf(s));
    return l;
  }
  case AttrKind::Tensor: return tensorObject(a.tensors.get().empty() ? nullptr : a.tensors.get()[0].get());
  case AttrKind::Tensors: {
    py::list l;
    for (auto &t : a.tensors.get()) l.append(tensorObject(t.get()));
    return l;
  }
  case AttrKind::Graph: return a.numGraphs() ? py::cast(PyGraph(h, a.graph(0))) : py::none();
  case AttrKind::Graphs: {
    py::list l;
    for (unsigned i = 0; i < a.numGraphs(); ++i) l.append(py::cast(PyGraph(h, a.graph(i))));
    return l;
  }
  case AttrKind::TypeProto: {
    auto &ts = a.types.get();
    return ts.empty() || !ts[0] ? py::none() : py::object(py::str(ts[0]->str()));
  }
  case AttrKind::TypeProtos: {
    py::list l;
    for (const Type *t : a.types.get()) l.append(t ? py::object(py::str(t->str())) : py::none());
    return l;
  }
  default: return py::none();
  }
}

void bindTensor(py::module_ &m) {
  py::class_<PyTensor> cls(m, "Tensor", py::buffer_protocol(),
                       "Tensor data: np.asarray(t) is a read-only view without a copy.");
  auto *heap = reinterpret_cast<PyHeapTypeObject *>(cls.ptr());
  heap->as_buffer.bf_getbuffer = tensorGetBuffer;
  heap->as_buffer.bf_releasebuffer = tensorReleaseBuffer;
  cls
      .def(py::init([](py::handle data, const std::string &name) {
             PyTensor pt;
             pt.own = std::make_shared<Tensor>(tensorFromPython(data, name));
             return pt;
           }),
           py::arg("data"), py::arg("name") = "",
           "A tensor holding a copy of a NumPy array (or anything np.asarray takes), of any "
           "byte order and memory layout: stored as ONNX's raw layout (C order, "
           "little-endian). An object array must hold only str or bytes (a string tensor).")
      .def_property_readonly("name", [](const PyTensor &pt) { return pt.t().name(); })
      .def_property_readonly("elem_type", [](const PyTensor &pt) {
        return dataTypeName(pt.t().dataType()).str();
      })
      .def_property_readonly("shape", [](const PyTensor &pt) {
        return py::tuple(py::cast(pt.t().dims()));
      })
      .def_property_readonly("is_external", [](const PyTensor &pt) { return pt.t().isExternal(); })
      .def_property_readonly("nbytes", [](const PyTensor &pt) -> py::object {
        const Tensor &t = pt.t();
        auto n = t.numElements();
        if (!n || t.dataType() == DataType::String) return py::none();
        return py::int_(dataTypeStorageBytes(t.dataType(), (uint64_t)*n));
      })
      .def("__array__", [](py::object self, py::object dtype) {
        py::object arr = py::module_::import("numpy").attr("asarray")(memoryviewOf(self));
        return dtype.is_none() ? arr : arr.attr("astype")(dtype);
      }, py::arg("dtype") = py::none())
      .def("numpy", &numpyOf, "A NumPy array of the data (a read-only view; strings: an object array).")
      .def("raw_bytes", [](const PyTensor &pt) {
        auto b = check(pt.t().bytes());
        return py::bytes(b.data(), b.size());
      }, "The data in raw_data layout (a copy).")
      .def("tolist", &listOf,
           "The elements as a flat Python list, for every element type: int (the whole "
           "uint64 range; int4 and the like), float (float16, bfloat16 and float8 widened "
           "exactly), complex, bool, and bytes for strings.")
      .def("__repr__", [](const PyTensor &pt) {
        const Tensor &t = pt.t();
        std::string s = "<onnxir.Tensor " + dataTypeName(t.dataType()).str() + "[";
        for (size_t i = 0; i < t.dims().size(); ++i) s += (i ? "," : "") + std::to_string(t.dims()[i]);
        return s + "]>";
      });
}

} // namespace onnxir::python
