//===- OpLibrary.cpp - onnxir.register_ops --------------------------------===//
//
// The Python side of --op-library (Ops/OpLibrary.h): one call registering a
// library's custom-domain operators for the whole interpreter (Note [Op
// libraries are process-wide]); __init__.py reads a path into text.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Ops/OpLibrary.h"

namespace onnxir::python {

namespace {

py::list registerOps(const std::string &text, const std::string &name) {
  // The registry is not locked: passes running in other threads (which
  // release the GIL) must not meet a registration; __init__.py says so.
  // A model found clean is checked anew (Note [Checked once] in Core.h).
  ++ModelHolder::gOpLibraryGeneration;
  absl::StatusOr<OpLibraryInfo> r = registerOpLibrary(text, name);
  if (!r.ok()) fail("register_ops: " + std::string(r.status().message()));
  py::list ops;
  for (const std::string &op : r->ops) ops.append(op);
  return ops;
}

} // namespace

void bindOpLibrary(py::module_ &m) {
  m.def("_register_ops", &registerOps, py::arg("text"), py::arg("name"),
        "Registers the op library `text` (JSON, docs/op-library.md) read from `name`; returns "
        "`domain.Op-vN` of each op (onnxir.register_ops).");
}

} // namespace onnxir::python
