//===- Surgery.cpp - onnxir.extract, add_outputs, rename_io, ... ----------===//
//
// The model surgery functions of the module (issue 42; compose: Note
// [Composing models]), each a call of the
// library function its onnx-opt pass calls (onnxir/Passes/Surgery.h), so the
// command line and Python give the same model. They change the model in
// place (onnxir.extract copies it first unless told not to: see
// python/onnxir/__init__.py); an error leaves it as it was.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Passes/Surgery.h"

#include <pybind11/stl.h>

namespace onnxir::python {

namespace {

/// Runs `f` on the model with the GIL released and the model busy (Note
/// [Python handles]); an error becomes onnxir.Error.
template <class F> auto onModel(const PyModel &pm, F &&f) {
  Model &m = pm.m();
  ModelHolder::Busy busy(*pm.h);
  py::gil_scoped_release nogil;
  return f(m);
}

std::vector<std::pair<std::string, std::string>> pairs(const py::dict &d, const char *what) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto item : d) {
    if (!py::isinstance<py::str>(item.first) || !py::isinstance<py::str>(item.second))
      throw py::type_error(std::string(what) + ": keys and values are names (str)");
    out.emplace_back(py::str(item.first), py::str(item.second));
  }
  return out;
}

} // namespace

void bindSurgeryCompose(py::module_ &m);

void bindSurgery(py::module_ &m) {
  bindSurgeryCompose(m);
  m.def("_extract",
        [](const PyModel &pm, std::vector<std::string> inputs, std::vector<std::string> outputs) {
          check(onModel(pm, [&](Model &mm) { return extractModel(mm, inputs, outputs); }));
        },
        py::arg("model"), py::arg("inputs"), py::arg("outputs"),
        "Cuts the model in place (the extract pass; onnxir.extract copies first).");
  m.def("add_outputs",
        [](const PyModel &pm, std::vector<std::string> names, bool all) {
          return check(onModel(pm, [&](Model &mm) { return addOutputs(mm, names, all); }));
        },
        py::arg("model"), py::arg("names") = std::vector<std::string>(), py::kw_only(),
        py::arg("all") = false,
        "Makes the main-graph values `names` graph outputs, typed (inferred when undeclared), "
        "after the existing ones; all=True: every node result of the main graph. As onnx-opt's "
        "add-outputs{names=...|all}. Returns how many were added.");
  m.def("prune_outputs",
        [](const PyModel &pm, std::vector<std::string> keep) {
          return check(onModel(pm, [&](Model &mm) { return pruneOutputs(mm, keep); }));
        },
        py::arg("model"), py::arg("keep"),
        "Keeps the graph outputs named in `keep`, removes the others and the code only they "
        "used (prune-outputs{keep=...}). Returns how many were removed.");
  m.def("rename_io",
        [](const PyModel &pm, py::dict renames) {
          auto r = pairs(renames, "rename_io");
          check(onModel(pm, [&](Model &mm) { return renameInterface(mm, r); }));
        },
        py::arg("model"), py::arg("renames"),
        "Renames main-graph inputs and outputs, {old: new} (onnx-opt --rename-io=old:new); a "
        "new name taken in any scope of the main graph is an error.");
  m.def("retype_io",
        [](const PyModel &pm, py::dict types) {
          // Each type read as the flag reads it (a name may hold ',' or ':').
          std::vector<std::pair<std::string, DataType>> parsed;
          for (auto &[name, type] : pairs(types, "retype_io")) {
            auto t = parseRetypeList("v:" + type);
            if (!t.ok() || t->size() != 1)
              fail("retype-io: " + (t.ok() ? "\"" + type + "\" is no element type"
                                           : std::string(t.status().message())));
            parsed.emplace_back(name, t->front().second);
          }
          check(onModel(pm, [&](Model &mm) { return retypeInterface(mm, parsed); }));
        },
        py::arg("model"), py::arg("types"),
        "Gives main-graph inputs and outputs another element type, {name: 'float16'}, through a "
        "Cast (onnx-opt --retype-io=name:float16, Note [Retyping the interface]).");
}

void bindSurgeryCompose(py::module_ &m) {
  m.def("_compose",
        [](const PyModel &a, const PyModel &b,
           std::vector<std::pair<std::string, std::string>> connect, std::string prefixA,
           std::string prefixB, bool dropUnconnected) {
          if (a.h == b.h) fail("compose: a and b are the same model (pass a copy)");
          ComposeOptions o;
          o.connect = std::move(connect);
          o.prefixA = std::move(prefixA);
          o.prefixB = std::move(prefixB);
          o.dropUnconnected = dropUnconnected;
          Model &mb = b.m();
          ModelHolder::Busy busyB(*b.h);
          check(onModel(a, [&](Model &ma) { return composeModels(ma, mb, o); }));
        },
        py::arg("a"), py::arg("b"), py::arg("connect"), py::arg("prefix_a"), py::arg("prefix_b"),
        py::arg("drop_unconnected"),
        "Merges b into a in place (onnxir.compose works on copies).");
  m.def("_merge_decoders",
        [](const PyModel &a, const PyModel &b, std::string condition) {
          if (a.h == b.h) fail("merge_decoders: the two models are the same model (pass a copy)");
          MergeDecodersOptions o;
          o.condition = std::move(condition);
          Model &ma = a.m(), &mb = b.m();
          absl::StatusOr<std::unique_ptr<Model>> r;
          {
            ModelHolder::Busy busyA(*a.h), busyB(*b.h);
            r = mergeDecoders(ma, mb, o);
          }
          return PyModel{std::make_shared<ModelHolder>(check(std::move(r)))};
        },
        py::arg("decoder"), py::arg("decoder_with_past"), py::arg("condition"),
        "The merged model (onnxir.merge_decoders works on copies).");
}

} // namespace onnxir::python
