//===- Core.h - Handles of the Python bindings ----------------------------===//
//
// Note [Python handles]
// A Python object never holds a bare IR pointer. Every Model is owned by a
// ModelHolder (shared by every handle into it, so a graph or node keeps its
// model alive). A handle to a Node, Value or Graph holds an Entry: the
// pointer and an `alive` flag. The holder keeps a map from the pointers that
// have entries to their entries and is the context's DestroyObserver
// (Context.h): when the IR destroys one of those objects, however it does
// (Node::erase from Python, a pass, a removed input, a dropped subgraph),
// its entry is marked dead and leaves the map, so a later object at the same
// address gets a fresh entry. Every access goes through Entry::get, which
// raises onnxir.Error for a dead object instead of touching freed memory.
//
// While an operation runs on a model with the GIL released (load, save,
// verify, passes) the holder is `busy`: busy is set and cleared with the GIL
// held, and every handle access (also under the GIL) refuses a busy model,
// so another Python thread cannot read the IR while a pass rewrites it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PYTHON_CORE_H
#define ONNXIR_PYTHON_CORE_H

#include "onnxir/IR/Model.h"

#include "absl/status/status.h"
#include "llvm/ADT/DenseMap.h"

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace onnxir::python {
namespace py = pybind11;

/// Raised to Python as onnxir.Error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The Python type onnxir.Error (set when the module is initialised).
extern PyObject *gErrorType;
/// Sets the Python error `type` with `msg`, its bytes that are not UTF-8
/// (a file name's, a tensor's) shown as \xNN escapes: PyErr_SetString would
/// raise a UnicodeDecodeError instead.
inline void setPythonError(PyObject *type, const char *msg) {
  PyObject *s = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)std::strlen(msg), "backslashreplace");
  if (!s) return; // (the decoding error is set)
  PyErr_SetObject(type, s);
  Py_DECREF(s);
}
[[noreturn]] inline void fail(const std::string &msg) { throw Error(msg); }
inline void check(const absl::Status &s) {
  if (!s.ok()) fail(std::string(s.message()));
}
template <typename T> T check(absl::StatusOr<T> s) {
  if (!s.ok()) fail(std::string(s.status().message()));
  return std::move(*s);
}

struct Entry;

/// Set by the module's atexit callback (Note [Models left at exit] in
/// Objects.cpp).
extern bool gInterpreterExiting;

class ModelHolder : public Context::DestroyObserver,
                    public std::enable_shared_from_this<ModelHolder> {
public:
  explicit ModelHolder(std::unique_ptr<Model> m);
  ~ModelHolder() override;
  /// The model, for an access that may change it (Note [Checked once]).
  Model &model() {
    checkIdle();
    touch();
    return *model_;
  }
  Model &modelUnchecked() { return *model_; }
  void destroyed(const void *object) override;
  /// The entry of `p` (shared by every handle to it).
  std::shared_ptr<Entry> entry(void *p);
  void forget(Entry *e);
  void checkIdle() const {
    if (busy_) fail("the model is in use by another thread (a load, save, verification or pass)");
  }
  /// Note [Checked once]
  /// load, run_passes and save each check the model at their `verify` level
  /// (Note [Python checks what onnx-opt checks] in Tools.cpp); onnx-opt checks
  /// it once, on load. A check that finds nothing (no error, no warning)
  /// records its level here, and a later check at the same level skips the
  /// walk while the record stands: it would find nothing again. Every access
  /// that may change the model drops the record: model(), a handle's get
  /// (a read too: reads and writes are not told apart), Busy (each
  /// GIL-released operation), and registering an op library (the schemas
  /// the check reads; gOpLibraryGeneration). run_passes on a model clean at
  /// its level keeps the record when the passes succeed: the pass manager
  /// verifies the structure after each pass and refuses any problem (the
  /// clean input tolerates none), and the passes keep the operators valid,
  /// as onnx-opt trusts when it writes their result unchecked. So load +
  /// run_passes + save checks as often as onnx-opt -O2 does.
  int cleanLevel() const { return cleanGeneration_ == gOpLibraryGeneration ? cleanLevel_ : -1; }
  void setClean(int level) {
    cleanLevel_ = level;
    cleanGeneration_ = gOpLibraryGeneration;
  }
  void touch() { cleanLevel_ = -1; }
  /// Bumped by every op library registration (OpLibrary.cpp).
  static inline uint64_t gOpLibraryGeneration = 0;

  /// Marks the model busy for a GIL-released operation (Note [Python
  /// handles]); the operation may change it (Note [Checked once]).
  struct Busy {
    explicit Busy(ModelHolder &h) : h_(h) {
      h.checkIdle();
      h.touch();
      h.busy_ = true;
    }
    ~Busy() { h_.busy_ = false; }
    ModelHolder &h_;
  };

private:
  std::unique_ptr<Model> model_;
  std::mutex mu_;
  llvm::DenseMap<const void *, Entry *> live_;
  std::atomic<size_t> liveCount_{0}; ///< live_.size(), read without mu_
  bool busy_ = false;
  int cleanLevel_ = -1;          ///< Note [Checked once]
  uint64_t cleanGeneration_ = 0; ///< gOpLibraryGeneration at the check
};
using HolderPtr = std::shared_ptr<ModelHolder>;

struct Entry {
  HolderPtr holder;
  void *ptr;
  std::atomic<bool> alive{true};
  std::weak_ptr<Entry> self;
  ~Entry() { holder->forget(this); }
};

/// A handle to an IR object of type T (Node, Value, Graph).
template <typename T> struct Handle {
  std::shared_ptr<Entry> e;
  Handle() = default;
  Handle(const HolderPtr &h, T *p) : e(h->entry(p)) {}
  T *get(const char *what) const {
    if (!e->alive)
      fail(std::string("this ") + what + " was erased (or its graph was); the handle is dead");
    e->holder->checkIdle();
    e->holder->touch(); // (Note [Checked once])
    return static_cast<T *>(e->ptr);
  }
  ModelHolder &holder() const { return *e->holder; }
  const HolderPtr &holderPtr() const { return e->holder; }
  bool operator==(const Handle &o) const { return e->ptr == o.e->ptr && e->alive && o.e->alive; }
  size_t hash() const { return std::hash<void *>()(e->ptr); }
};

struct PyModel {
  HolderPtr h;
  Model &m() const { return h->model(); }
};
struct PyGraph : Handle<Graph> {
  using Handle::Handle;
  Graph *g() const { return get("graph"); }
};
struct PyNode : Handle<Node> {
  using Handle::Handle;
  Node *n() const { return get("node"); }
};
struct PyValue : Handle<Value> {
  using Handle::Handle;
  Value *v() const { return get("value"); }
};

/// A tensor: either an initializer's (through its value) or one of its own.
struct PyTensor {
  std::shared_ptr<Tensor> own;   ///< a standalone tensor (or an attribute's copy)
  PyValue value;                 ///< else: the initializer of this value
  std::vector<std::shared_ptr<const Buffer>> held; ///< buffers NumPy views point into
  const Tensor &t() const;
  Tensor &mut() const;
};

/// Value <-> Python for the optional-returning helpers.
py::object nodeOrNone(const HolderPtr &h, Node *n);
py::object valueOrNone(const HolderPtr &h, Value *v);

/// A Python object as an attribute; fails with a message naming `name`.
std::unique_ptr<Attribute> attributeFromPython(const std::string &name, py::handle v);
py::object attributeToPython(const HolderPtr &h, const Attribute &a);
/// A NumPy array (or anything np.asarray takes) as a tensor (a copy, in the
/// raw layout: Note [Array bytes] in TensorBind.cpp).
Tensor tensorFromPython(py::handle v, const std::string &name);

/// A NumPy array holding a copy of `t` (writable): NumPy's own dtype where
/// it has one, strings as an object array of bytes; bfloat16, float8 and
/// float4 widened exactly to float32, int4/int2 to int8, uint4/uint2 to uint8
/// (NumPy has no such dtypes).
py::object arrayOfTensor(const Tensor &t);

/// Value.const_value: the initializer as a Tensor, or None; set from an array.
py::object constValue(const PyValue &pv);
void setConstValue(const PyValue &pv, py::handle data);

void bindObjects(py::module_ &m);
void bindTensor(py::module_ &m);
void bindTools(py::module_ &m);
/// onnxir.run and onnxir.compare (Eval.cpp).
void bindEval(py::module_ &m);
/// onnxir.inspect, view and diff (Inspect.cpp).
void bindInspect(py::module_ &m);
/// onnxir.extract, add_outputs, prune_outputs, rename_io, retype_io (Surgery.cpp).
void bindSurgery(py::module_ &m);
/// onnxir.register_ops (OpLibrary.cpp).
void bindOpLibrary(py::module_ &m);
/// Gives the properties without an inline docstring theirs (Objects.cpp).
void documentProperties(py::module_ &m);

} // namespace onnxir::python

#endif // ONNXIR_PYTHON_CORE_H
