//===- Inspect.cpp - onnxir.inspect, onnxir.view and onnxir.diff ----------===//
//
// The library's views (onnxir/Inspect) for Python, as strings: the package
// (onnxir/__init__.py) parses the JSON ones, so Python gets exactly what
// onnx-opt --emit=json and onnxir-diff --json print.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Inspect/Diff.h"
#include "onnxir/Inspect/Inspect.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PipelineOptions.h"
#include "onnxir/Serialize/ModelFile.h"

#include <pybind11/stl.h>

namespace onnxir::python {

namespace {

/// onnx-opt -PIPELINE --emit=json: the pipeline (if any) runs on the model
/// in place, its fusion census goes into the summary.
std::string inspectJson(const PyModel &pm, const std::string &pipeline) {
  Model &m = pm.m();
  PassStatistics stats;
  if (!llvm::StringRef(pipeline).trim().empty()) {
    PipelineOptions o;
    o.name = "inspect";
    std::vector<std::string> warnings;
    o.warningHandler = [&](const std::string &msg) { warnings.push_back(msg); };
    absl::StatusOr<PipelineRun> r;
    {
      ModelHolder::Busy busy(*pm.h);
      py::gil_scoped_release nogil;
      r = runPipeline(m, pipeline, o);
    }
    for (const std::string &w : warnings)
      if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 2) != 0) throw py::error_already_set();
    if (!r.ok()) fail("inspect: " + std::string(r.status().message()));
    stats = std::move(r->statistics);
    // onnx-opt --summary's note on initializers that are graph inputs.
    if (std::string note = inputDefaultsNote(m, stats); !note.empty())
      if (PyErr_WarnEx(PyExc_UserWarning, ("inspect: " + note).c_str(), 2) != 0)
        throw py::error_already_set();
  }
  InspectOptions io;
  io.statistics = &stats;
  return inspectModelJson(m, io);
}

std::string view(const PyModel &pm, const std::string &format, unsigned collapse) {
  ViewOptions vo;
  vo.collapseDepth = collapse;
  if (format == "mermaid") vo.format = ViewFormat::Mermaid;
  else if (format != "dot" && format != "svg")
    fail("view: format must be 'dot', 'mermaid' or 'svg', not '" + format + "'");
  std::string text = renderGraphView(pm.m(), vo);
  if (format == "svg") {
    auto svg = renderSvgWithGraphviz(text);
    if (!svg.ok()) fail("view: " + std::string(svg.status().message()));
    return std::move(*svg);
  }
  return text;
}

std::pair<bool, std::string> diff(const PyModel &a, const PyModel &b, bool json) {
  // The matching follows operands to their producers: a model edited into a
  // cycle is refused here, as onnxir-diff refuses it on load.
  for (auto [pm, side] : {std::pair<const PyModel *, const char *>{&a, "a"}, {&b, "b"}})
    if (auto s = verify(pm->m()); !s.ok())
      fail(std::string("diff: ") + side + ": the model is invalid: " + std::string(s.message()));
  ModelDiff d = diffModels(a.m(), b.m());
  if (auto s = checkMappedFileReads(); !s.ok()) fail("diff: " + std::string(s.message()));
  return {d.equal(), json ? formatDiffJson(d) : formatDiffText(d)};
}

} // namespace

void bindInspect(py::module_ &m) {
  m.def("_inspect_json", &inspectJson, py::arg("model"), py::arg("pipeline") = "",
        "The summary of onnx-opt --emit=json as a JSON string (onnxir.inspect parses it).");
  m.def("_view", &view, py::arg("model"), py::arg("format") = "dot", py::arg("collapse") = 0,
        "The graph as DOT, Mermaid or SVG text (onnxir.view).");
  m.def("_diff", &diff, py::arg("a"), py::arg("b"), py::arg("json") = true,
        "(equal, report) of onnxir-diff (onnxir.diff).");
}

} // namespace onnxir::python
