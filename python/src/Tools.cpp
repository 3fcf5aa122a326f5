//===- Tools.cpp - The module: I/O, verification, passes -------------------===//
//
// What onnx-opt does, as functions. Each releases the GIL while the C++ runs
// (the model is marked busy meanwhile: Note [Python handles] in Core.h), and
// reports failures as onnxir.Error with the messages onnx-opt prints.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/stl.h>

#include <map>
#include <set>

namespace onnxir::python {
PyObject *gErrorType = nullptr;
namespace {

ModelFormat formatArg(const std::string &f) {
  if (f == "auto") return ModelFormat::Auto;
  if (f == "binary") return ModelFormat::Binary;
  if (f == "text") return ModelFormat::Text;
  fail("format must be 'auto', 'binary' or 'text', not '" + f + "'");
}

PyModel wrap(std::unique_ptr<Model> m) {
  return PyModel{std::make_shared<ModelHolder>(std::move(m))};
}

// Note [Path arguments]
// Every file system path the module takes (load's and save's path, save's
// external_data and inputs, loads' base_dir) goes through pathArg: str,
// bytes, or an os.PathLike returning either, as the bytes the OS is given
// (os.fsencode: a str in the file system encoding, with the undecodable bytes
// that os.fsdecode gave as surrogates restored; bytes as they are). Anything
// else is a TypeError naming the argument, and a NUL byte (which would cut
// the name short in the C library) a ValueError. The optional ones
// (external_data, base_dir) take None, or "", for none.

std::string pathArg(py::handle p, const std::string &what) {
  py::module_ os = py::module_::import("os");
  py::object fs;
  try {
    fs = os.attr("fspath")(p);
  } catch (py::error_already_set &e) {
    if (!e.matches(PyExc_TypeError)) throw;
    throw py::type_error(what + " must be a path (str, bytes or os.PathLike), not " +
                         std::string(py::str(p.get_type().attr("__name__"))));
  }
  std::string out = os.attr("fsencode")(fs).cast<std::string>();
  if (out.find('\0') != std::string::npos)
    throw py::value_error(what + " contains a NUL byte");
  return out;
}

/// An optional path: None (or an empty one) is "".
std::string optionalPathArg(py::handle p, const std::string &what) {
  return p.is_none() ? std::string() : pathArg(p, what);
}

PyModel load(py::handle path, const std::string &format, bool allowExternalLinks) {
  LoadFileOptions lo;
  lo.format = formatArg(format);
  lo.allowExternalLinks = allowExternalLinks;
  std::string p = pathArg(path, "load: path");
  if (p.empty()) fail("the input file name is empty");
  absl::StatusOr<std::unique_ptr<Model>> m;
  {
    py::gil_scoped_release nogil;
    m = loadModelFile(p, lo);
  }
  return wrap(check(std::move(m)));
}

PyModel loads(py::bytes data, const std::string &format, py::handle baseDirArg,
              const std::string &name, bool allowExternalLinks) {
  std::string baseDir = optionalPathArg(baseDirArg, "loads: base_dir");
  // The bytes object is immutable and kept alive by the caller's frame.
  char *buf;
  py::ssize_t len;
  if (PyBytes_AsStringAndSize(data.ptr(), &buf, &len) != 0) throw py::error_already_set();
  llvm::StringRef bytes(buf, (size_t)len);
  ModelFormat f = formatArg(format);
  if (f == ModelFormat::Auto) f = formatForPath("", bytes); // by content
  LiftOptions lo;
  lo.baseDir = baseDir;
  lo.sourceName = name.empty() ? "<bytes>" : name;
  lo.allowExternalLinks = allowExternalLinks;
  absl::StatusOr<std::unique_ptr<Model>> m;
  {
    py::gil_scoped_release nogil;
    m = f == ModelFormat::Text ? parseModelText(bytes, lo) : liftModel(bytes, lo);
  }
  return wrap(check(std::move(m)));
}

std::optional<PrintOptions> textOptions(std::optional<bool> lossless, std::optional<int64_t> elide,
                                        bool standardOnly) {
  if (!lossless && !elide && !standardOnly) return std::nullopt;
  PrintOptions po;
  po.lossless = lossless.value_or(!elide && !standardOnly);
  if (elide) po.elideElementsAbove = *elide;
  po.standardOnly = standardOnly;
  return po;
}

void save(const PyModel &pm, py::handle path, const std::string &format,
          py::handle externalData, uint64_t externalThreshold,
          std::optional<bool> lossless, std::optional<int64_t> elide, bool standardOnly,
          bool force, py::handle inputs) {
  SaveFileOptions so;
  so.format = formatArg(format);
  so.externalDataFile = optionalPathArg(externalData, "save: external_data");
  so.externalThreshold = externalThreshold;
  so.text = textOptions(lossless, elide, standardOnly);
  so.force = force;
  if (!inputs.is_none()) {
    // A path is iterable too (a str by characters): refused, not split.
    if (py::isinstance<py::str>(inputs) || py::isinstance<py::bytes>(inputs) ||
        py::hasattr(inputs, "__fspath__") || !py::isinstance<py::iterable>(inputs))
      throw py::type_error("save: inputs must be a list of paths, not " +
                           std::string(py::str(inputs.get_type().attr("__name__"))));
    for (py::handle in : inputs)
      so.inputs.push_back(pathArg(in, "save: inputs[" + std::to_string(so.inputs.size()) + "]"));
  }
  std::string p = pathArg(path, "save: path");
  if (p.empty()) fail("the output file name is empty");
  Model &m = pm.m();
  absl::Status s;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    s = saveModelFile(m, p, so);
  }
  check(s);
}

py::bytes dumps(const PyModel &pm, const std::string &format, std::optional<bool> lossless,
                std::optional<int64_t> elide, bool standardOnly) {
  ModelFormat f = formatArg(format);
  Model &m = pm.m();
  absl::StatusOr<std::string> out;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    if (f == ModelFormat::Text) {
      PrintOptions po = textOptions(lossless, elide, standardOnly)
                            .value_or(PrintOptions{/*lossless=*/true, 64, false});
      out = printModelText(m, po);
    } else {
      out = lowerModel(m);
    }
  }
  std::string s = check(std::move(out));
  return py::bytes(s);
}

std::string problems(const std::vector<Diagnostic> &ds) {
  std::string errors;
  for (const Diagnostic &d : ds) errors += "\n  " + d.message + " [" + diagnosticKindName(d.kind) + "]";
  return errors;
}

std::vector<Diagnostic> diagnosticsOf(const PyModel &pm, bool schema, bool checkOrder,
                                      unsigned maxDiagnostics) {
  VerifyOptions vo;
  vo.schema = schema;
  vo.checkOrder = checkOrder;
  vo.maxDiagnostics = maxDiagnostics;
  Model &m = pm.m();
  ModelHolder::Busy busy(*pm.h);
  py::gil_scoped_release nogil;
  vo.schema = false;
  std::vector<Diagnostic> d = verifyAll(m, vo);
  if (schema) {
    std::vector<Diagnostic> s = verifySchemaAll(m, vo);
    d.insert(d.end(), s.begin(), s.end());
  }
  return d;
}

void verify(const PyModel &pm, bool schema, bool checkOrder, unsigned maxDiagnostics,
            const std::string &name) {
  std::string errors = problems(diagnosticsOf(pm, schema, checkOrder, maxDiagnostics));
  if (!errors.empty())
    fail((name.empty() ? std::string("the model") : name + ": the model") + " is invalid:" + errors);
}

bool runPasses(const PyModel &pm, const std::string &pipeline, bool verifyEach, bool schema,
               std::map<std::string, std::string> flags, const std::string &name) {
  auto passes = parsePassPipeline(pipeline);
  if (!passes.ok()) fail("pipeline: " + std::string(passes.status().message()));
  std::set<std::string> used;
  for (auto &p : *passes) check(p->applyFlags(flags, &used));
  for (auto &[flag, v] : flags)
    if (!used.count(flag)) fail("option '" + flag + "' is given but no pass that takes it runs");
  PassManagerOptions pmo;
  pmo.verifyEach = verifyEach;
  pmo.verify.schema = schema;
  std::string log;
  llvm::raw_string_ostream os(log);
  pmo.log = &os;
  PassManager pmgr(pmo);
  for (auto &p : *passes) pmgr.addPass(std::move(p));
  Model &m = pm.m();
  absl::StatusOr<bool> r;
  absl::Status reads;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    r = pmgr.run(m);
    reads = checkMappedFileReads();
  }
  if (!r.ok()) fail((name.empty() ? "" : name + ": ") + std::string(r.status().message()));
  check(reads);
  return *r;
}

py::tuple inferShapes(const PyModel &pm, py::object inputShapes, py::object bindDims,
                      bool outputsOnly, bool strict) {
  ShapeInferenceOptions o;
  o.outputsOnly = outputsOnly;
  o.strict = strict;
  auto dimsText = [](py::handle v) -> std::string {
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    std::string s;
    bool first = true;
    for (py::handle d : v) {
      if (!first) s += ",";
      first = false;
      s += d.is_none() ? std::string("?") : std::string(py::str(d));
    }
    return s;
  };
  if (!inputShapes.is_none()) {
    if (py::isinstance<py::str>(inputShapes)) {
      o.inputShapes = check(parseInputShapes(inputShapes.cast<std::string>()));
    } else {
      for (auto item : inputShapes.cast<py::dict>())
        o.inputShapes.emplace_back(py::str(item.first), dimsText(item.second));
    }
  }
  if (!bindDims.is_none()) {
    if (py::isinstance<py::str>(bindDims)) {
      o.bindDims = check(parseBindDims(bindDims.cast<std::string>()));
    } else {
      for (auto item : bindDims.cast<py::dict>())
        o.bindDims.emplace_back(py::str(item.first), item.second.cast<int64_t>());
    }
  }
  Model &m = pm.m();
  std::vector<std::string> warnings;
  absl::StatusOr<bool> r;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    r = onnxir::inferShapes(m, o, nullptr, &warnings);
  }
  bool changed = check(std::move(r));
  return py::make_tuple(changed, warnings);
}

} // namespace

void bindTools(py::module_ &m) {
  registerAllPasses();
  m.def("load", &load, py::arg("path"), py::arg("format") = "auto",
        py::arg("allow_external_links") = false,
        "Loads a model file (binary or text by extension, else by content; '-' is stdin). "
        "`path`: str, bytes or os.PathLike.");
  m.def("loads", &loads, py::arg("data"), py::arg("format") = "auto",
        py::arg("base_dir") = py::none(), py::arg("name") = "",
        py::arg("allow_external_links") = false,
        "Loads a model from bytes (a serialized ModelProto, or text syntax). External data "
        "is read relative to `base_dir` (a path: str, bytes or os.PathLike; None for none); "
        "`name` is used in error messages.");
  m.def("save", &save, py::arg("model"), py::arg("path"), py::arg("format") = "auto",
        py::arg("external_data") = py::none(), py::arg("external_threshold") = 1024,
        py::arg("lossless") = py::none(), py::arg("elide_tensors_larger_than") = py::none(),
        py::arg("standard_only") = false, py::arg("force") = false,
        py::arg("inputs") = py::none(),
        "Writes the model in one transaction (the file and its external data, or nothing). "
        "`path`, `external_data` (the data file beside it, for tensors over "
        "`external_threshold` bytes; None for none) and each of `inputs` (model files this "
        "run read, which the output may replace but never one they refer to) are paths: "
        "str, bytes or os.PathLike.");
  m.def("dumps", &dumps, py::arg("model"), py::arg("format") = "binary",
        py::arg("lossless") = py::none(), py::arg("elide_tensors_larger_than") = py::none(),
        py::arg("standard_only") = false,
        "The model as bytes: a serialized ModelProto, or text (lossless by default).");
  m.def("verify", &verify, py::arg("model"), py::arg("schema") = false,
        py::arg("check_order") = true, py::arg("max_diagnostics") = 100, py::arg("name") = "",
        "Raises onnxir.Error listing the problems (as onnx-opt does) unless the model is valid.");
  m.def("diagnostics", [](const PyModel &pm, bool schema, bool checkOrder, unsigned maxD) {
          py::list out;
          for (const Diagnostic &d : diagnosticsOf(pm, schema, checkOrder, maxD))
            out.append(py::make_tuple(diagnosticKindName(d.kind), d.message));
          return out;
        }, py::arg("model"), py::arg("schema") = false, py::arg("check_order") = true,
        py::arg("max_diagnostics") = 100, "The problems as (kind, message) pairs.");
  m.def("schema_warnings", [](const PyModel &pm) {
    std::vector<std::string> out;
    for (const Diagnostic &d : schemaWarnings(pm.m())) out.push_back(d.message);
    return out;
  });
  m.def("run_passes", &runPasses, py::arg("model"), py::arg("pipeline"),
        py::arg("verify_each") = true, py::arg("verify_schema") = false,
        py::arg("options") = std::map<std::string, std::string>(), py::arg("name") = "",
        "Runs a textual pipeline ('infer-shapes,dce,topo', 'O2', 'fold-constants{size-limit=1MiB}'); "
        "`options` are onnx-opt's global pass flags ({'rename-mode': 'sanitize'}). True if the "
        "model changed.");
  m.def("infer_shapes", &inferShapes, py::arg("model"), py::arg("input_shapes") = py::none(),
        py::arg("bind_dims") = py::none(), py::arg("outputs_only") = false,
        py::arg("strict") = false,
        "Infers types and shapes; input_shapes {name: [dims] or 'N,3,H,W'}, bind_dims "
        "{symbol: int}. Returns (changed, warnings).");
  m.def("list_passes", []() {
    py::list out;
    for (const PassInfo *info : PassRegistry::instance().entries())
      out.append(py::make_tuple(info->argument, info->description));
    return out;
  }, "(name, description) of every registered pass.");
}

} // namespace onnxir::python

PYBIND11_MODULE(_onnxir, m) {
  m.doc() = "onnxir: ONNX models as a mutable SSA graph IR (the compiled core).";
  using namespace onnxir::python;
  static py::exception<Error> exc(m, "Error", PyExc_Exception);
  gErrorType = exc.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error &e) {
      setPythonError(exc.ptr(), e.what());
    }
  });
  bindObjects(m);
  bindTensor(m);
  bindTools(m);
}
