//===- Tools.cpp - The module: I/O, verification, passes -------------------===//
//
// What onnx-opt does, as functions. Each releases the GIL while the C++ runs
// (the model is marked busy meanwhile: Note [Python handles] in Core.h), and
// reports failures as onnxir.Error with the messages onnx-opt prints.
//
//===----------------------------------------------------------------------===//
#include "Core.h"

#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/PipelineOptions.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/stl.h>

#include <map>
#include <regex>
#include <set>

namespace onnxir::python {
PyObject *gErrorType = nullptr;
PyObject *gWarningType = nullptr;
namespace {

// Note [Python spelling]
// The library's messages name the command line's flags (`--input-shape`,
// `--target-opset=N`, `see --list-passes`): onnx-opt is their first user.
// A Python user passes keyword arguments and an options dict instead, so
// every message the module raises goes through pythonMessage, which names
// what Python spells: the keyword of the function at hand (`input_shapes`
// in infer_shapes), else a global pass option as options['target-opset'],
// and onnxir.list_passes(). The pipeline policy takes the Python spelling
// directly (PipelineSpelling, pipelineOptions below).

/// `msg` with the command line's spellings replaced by Python's; `keywords`
/// maps a flag to the keyword argument that gives it here.
std::string pythonMessage(const std::string &msg,
                          const std::map<std::string, std::string> &keywords = {}) {
  static const std::regex flag("--([a-z][a-z0-9-]*)(=([A-Za-z0-9_.]+))?");
  std::string out;
  auto begin = std::sregex_iterator(msg.begin(), msg.end(), flag);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch &m = *it;
    out += msg.substr(last, m.position() - last);
    last = m.position() + m.length();
    std::string name = m[1], value = m[3];
    if (auto k = keywords.find(name); k != keywords.end()) {
      out += k->second;
    } else if (name == "list-passes") {
      out += "onnxir.list_passes()";
    } else if (name == "verify-each") {
      out += "verify_each=True";
    } else if (name == "verify" && !value.empty()) {
      out += "verify='" + value + "'";
    } else if (!passesTakingOption(name).empty()) {
      out += value.empty() ? "options['" + name + "']"
                           : "options={'" + name + "': " + value + "}";
    } else {
      out += m.str();
    }
  }
  return out + msg.substr(last);
}

[[noreturn]] void failPy(const std::string &msg,
                         const std::map<std::string, std::string> &keywords = {}) {
  fail(pythonMessage(msg, keywords));
}

/// Issues each message as an onnxir.VerificationWarning (with the GIL held).
void warnAll(const std::vector<std::string> &msgs) {
  for (const std::string &m : msgs)
    if (PyErr_WarnEx(gWarningType, pythonMessage(m).c_str(), 2) != 0)
      throw py::error_already_set(); // warnings turned into errors
}

ModelFormat formatArg(const std::string &f) {
  if (f == "auto") return ModelFormat::Auto;
  if (f == "binary") return ModelFormat::Binary;
  if (f == "text") return ModelFormat::Text;
  fail("format must be 'auto', 'binary' or 'text', not '" + f + "'");
}

PyModel wrap(std::unique_ptr<Model> m) {
  return PyModel{std::make_shared<ModelHolder>(std::move(m))};
}

//===--- Verification on load and save ---------------------------------------===//

// Note [Python checks what onnx-opt checks]
// onnxir.load(s) and onnxir.save check a model as onnx-opt does on load
// (Note [Pipeline policy] 3 in PipelineOptions.h) at `verify`:
//   "default"    structure errors (scopes, use lists, cycles, ...) and the
//                severe schema problems (unknown ops at the opset, arity,
//                attributes) are onnxir.Error; type constraints and the
//                load warnings are onnxir.VerificationWarning;
//   "structure"  the structure only (schema problems: warnings);
//   "schema"     every schema problem is an error;
//   "none"       nothing (a model to repair from Python).
// Two differences, as a Python model is built or repaired in steps: on load,
// an order violation (topo repairs it) and shadowing (rename) are warnings;
// and above "structure" a node of a custom domain the model does not import
// is an error (python onnx's checker refuses it; onnx-opt warns), which
// verify(schema=True) reports as well (unimportedDomains).

enum class Level { None, Structure, Default, Schema };

Level levelArg(const std::string &v) {
  if (v == "default") return Level::Default;
  if (v == "structure" || v == "structural") return Level::Structure;
  if (v == "schema") return Level::Schema;
  if (v == "none") return Level::None;
  throw py::value_error("verify must be 'default', 'structure', 'schema' or 'none', not '" + v + "'");
}

/// A Schema diagnostic for every node (main graph, nested graphs, function
/// bodies) of a domain that neither the model nor its function imports and
/// that is no model-local function's.
std::vector<Diagnostic> unimportedDomains(Model &m) {
  std::vector<Diagnostic> out;
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes()) {
      if (n.domain().empty() || n.domain() == "ai.onnx" || m.findFunction(n)) continue;
      if (importedOpsetVersion(n, m) >= 0) continue;
      out.push_back({Diagnostic::Kind::Schema,
                     nodePath(&n) + ": domain \"" + n.domain().str() +
                         "\" is not imported (add it to Model.opset_imports)",
                     true, false});
    }
  });
  return out;
}

/// Checks `m` at `level` (Note [Python checks what onnx-opt checks]);
/// `onLoad` tolerates what passes repair. Raises onnxir.Error naming `what`;
/// issues the warnings. The GIL is held; released while checking.
void checkModel(const PyModel &pm, Level level, bool onLoad, const std::string &what) {
  if (level == Level::None) return;
  ModelHolder &h = *pm.h;
  h.checkIdle();
  if (h.cleanLevel() == (int)level) return; // (Note [Checked once] in Core.h)
  Model &m = h.modelUnchecked();
  std::string errors;
  std::vector<std::string> warnings;
  bool schemaErrors = false;
  {
    ModelHolder::Busy busy(*pm.h);
    py::gil_scoped_release nogil;
    for (const Diagnostic &d : verifyAll(m)) {
      if (onLoad && (d.kind == Diagnostic::Kind::OrderViolation ||
                     d.kind == Diagnostic::Kind::Shadowing)) {
        warnings.push_back(what + ": " + d.message +
                           (d.kind == Diagnostic::Kind::Shadowing
                                ? " (onnxir.run_passes(m, 'rename') repairs it)"
                                : " (onnxir.run_passes(m, 'topo') repairs it)"));
        continue;
      }
      errors += "\n  " + d.message + " [" + diagnosticKindName(d.kind) + "]";
    }
    if (errors.empty()) {
      SchemaCheckLevel l = level == Level::Structure ? SchemaCheckLevel::Structure
                           : level == Level::Schema  ? SchemaCheckLevel::Schema
                                                     : SchemaCheckLevel::Default;
      SchemaCheckResult r = checkSchemasOnLoad(m, l, /*strict=*/false);
      if (level != Level::Structure)
        for (Diagnostic &d : unimportedDomains(m)) r.errors.push_back(std::move(d));
      for (const Diagnostic &d : r.warnings) {
        // (the unimported-domain load warning is an error above)
        if (level != Level::Structure &&
            d.message.find(" is not imported (first use:") != std::string::npos)
          continue;
        warnings.push_back((d.located ? "" : what + ": ") + d.message);
      }
      if (r.moreWarnings)
        warnings.push_back(what + ": " + std::to_string(r.moreWarnings) +
                           " more schema problems of these kinds (verify='schema' lists them)");
      for (const Diagnostic &d : r.errors)
        errors += "\n  " + d.message + " [" + diagnosticKindName(d.kind) + "]";
      schemaErrors = !r.errors.empty();
    }
  }
  warnAll(warnings);
  if (!errors.empty())
    failPy(what + ": the model is invalid:" + errors +
           (schemaErrors ? "\n(verify='structure' skips the operator schema checks)" : ""));
  if (warnings.empty()) h.setClean((int)level);
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

PyModel load(py::handle path, const std::string &format, bool allowExternalLinks,
             const std::string &verify) {
  Level level = levelArg(verify);
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
  PyModel pm = wrap(check(std::move(m)));
  checkModel(pm, level, /*onLoad=*/true, p);
  return pm;
}

PyModel loads(py::bytes data, const std::string &format, py::handle baseDirArg,
              const std::string &name, bool allowExternalLinks, const std::string &verify) {
  Level level = levelArg(verify);
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
  PyModel pm = wrap(check(std::move(m)));
  checkModel(pm, level, /*onLoad=*/true, lo.sourceName);
  return pm;
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
          bool force, py::handle inputs, const std::string &verify) {
  Level level = levelArg(verify);
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
  checkModel(pm, level, /*onLoad=*/false, p);
  ModelHolder &h = *pm.h;
  int clean = h.cleanLevel();
  Model &m = h.model();
  absl::Status s;
  {
    ModelHolder::Busy busy(h);
    py::gil_scoped_release nogil;
    s = saveModelFile(m, p, so);
  }
  // Saving reads the model only (Note [Checked once]).
  if (clean >= 0) h.setClean(clean);
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
      PrintOptions full; // (the text default of dumps: lossless)
      full.lossless = true;
      PrintOptions po = textOptions(lossless, elide, standardOnly).value_or(full);
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
    // (Note [Python checks what onnx-opt checks])
    for (Diagnostic &u : unimportedDomains(m))
      if (d.size() < maxDiagnostics) d.push_back(std::move(u));
  }
  return d;
}

void verify(const PyModel &pm, bool schema, bool checkOrder, unsigned maxDiagnostics,
            const std::string &name) {
  std::string errors = problems(diagnosticsOf(pm, schema, checkOrder, maxDiagnostics));
  if (!errors.empty())
    fail((name.empty() ? std::string("the model") : name + ": the model") + " is invalid:" + errors);
}

/// An options value as the pass option text: bool true/false, int, float,
/// str as given; lists of those comma-separated.
std::string optionText(const std::string &key, py::handle v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(v) || py::isinstance<py::str>(v)) return py::str(v);
  if (py::isinstance<py::float_>(v)) return py::str(py::repr(v));
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string out;
    for (py::handle x : v) out += (out.empty() ? "" : ",") + optionText(key, x);
    return out;
  }
  throw py::type_error("options['" + key + "'] must be a bool, int, float or str, not " +
                       std::string(py::str(v.get_type().attr("__name__"))));
}

/// The pipeline policy with Python's spelling (Note [Python spelling]).
PipelineOptions pipelineOptions(py::handle options, const std::string &verify, bool strict,
                                const std::string &name) {
  PipelineOptions o;
  if (!options.is_none()) {
    if (!py::isinstance<py::dict>(options))
      throw py::type_error("options must be a dict {option: value}, not " +
                           std::string(py::str(options.get_type().attr("__name__"))));
    for (auto item : options.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first))
        throw py::type_error("options: keys are option names (str), not " +
                             std::string(py::str(item.first.get_type().attr("__name__"))));
      std::string key = py::str(item.first);
      if (passesTakingOption(key).empty()) {
        std::string near = suggestPassOption(key);
        fail("unknown option '" + key + "'" +
             (near.empty() ? std::string() : " (did you mean " + near + "?)") +
             "; onnxir.list_passes() lists the passes and their options");
      }
      o.passOptions[key] = optionText(key, item.second);
    }
  }
  Level level = levelArg(verify);
  o.checkInput = level != Level::None;
  o.verify = level == Level::Schema      ? VerifyPolicy::Schema
             : level == Level::Structure ? VerifyPolicy::Structure
                                         : VerifyPolicy::Default;
  o.strict = strict;
  o.name = name;
  o.spelling.option = [](llvm::StringRef f) { return "option '" + f.str() + "'"; };
  o.spelling.listPasses = "onnxir.list_passes()";
  o.spelling.verifyStructure = "verify='structure'";
  o.spelling.verifySchema = "verify='schema'";
  o.spelling.repairShadowing =
      "onnxir.run_passes(m, 'rename', options={'rename-mode': 'sanitize'})";
  return o;
}

bool runPasses(const PyModel &pm, const std::string &pipeline, bool verifyEach, bool schema,
               py::handle options, const std::string &name, const std::string &verify,
               bool strict) {
  std::string level = schema ? std::string("schema") : verify;
  PipelineOptions o = pipelineOptions(options, level, strict, name);
  // A model a check found clean at this level is not checked again: the
  // check would find no problem kind to tolerate (Note [Checked once]).
  ModelHolder &h = *pm.h;
  h.checkIdle();
  int cleanAt = (o.checkInput && h.cleanLevel() == (int)levelArg(level)) ? h.cleanLevel() : -1;
  if (cleanAt >= 0) {
    o.checkInput = false;
    o.manager.inputProblemKinds = std::set<int>();
  }
  // An empty pipeline runs no pass (a target opset alone still converts).
  auto passes = llvm::StringRef(pipeline).trim().empty()
                    ? buildPipeline(std::vector<std::unique_ptr<Pass>>(), o)
                    : buildPipeline(pipeline, o);
  if (!passes.ok()) {
    std::string msg(passes.status().message());
    // An unknown pass: the nearest name (Note [Python spelling]).
    static const std::regex unknownPass("unknown pass '([^']*)'");
    std::smatch mt;
    if (std::regex_search(msg, mt, unknownPass)) {
      std::string near = suggestPass(mt[1].str());
      if (!near.empty() && msg.find("did you mean") == std::string::npos)
        msg.insert(mt.position() + mt.length(), " (did you mean " + near + "?)");
    }
    failPy("pipeline: " + msg);
  }
  std::vector<std::string> warnings;
  std::string log;
  llvm::raw_string_ostream os(log);
  o.manager.verifyEach = verifyEach;
  o.manager.log = &os;
  o.warningHandler = [&](const std::string &msg) { warnings.push_back(msg); };
  o.manager.diagnosticHandler = [&](const Pass &p, const PassDiagnostic &d) {
    if (d.severity == PassDiagnostic::Severity::Warning)
      warnings.push_back((name.empty() ? "" : name + ": ") + p.argument().str() + ": " + d.message);
  };
  Model &m = h.model();
  absl::StatusOr<PipelineRun> r;
  absl::Status reads;
  {
    ModelHolder::Busy busy(h);
    py::gil_scoped_release nogil;
    r = runPipeline(m, std::move(*passes), o);
    reads = checkMappedFileReads();
  }
  warnAll(warnings);
  if (!r.ok()) failPy(std::string(r.status().message()));
  check(reads);
  if (cleanAt >= 0) h.setClean(cleanAt); // the passes keep it valid
  return r->changed;
}

py::tuple inferShapes(const PyModel &pm, py::object inputShapes, py::object bindDims,
                      bool outputsOnly, bool strict) {
  static const std::map<std::string, std::string> kw = {{"input-shape", "input_shapes"},
                                                        {"bind-dim", "bind_dims"}};
  auto checked = [](auto r) {
    if (!r.ok()) failPy(std::string(r.status().message()), kw);
    return std::move(*r);
  };
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
      o.inputShapes = checked(parseInputShapes(inputShapes.cast<std::string>()));
    } else {
      if (!py::isinstance<py::dict>(inputShapes))
        throw py::type_error("input_shapes must be a dict {input: dims} or a str "
                             "'x:1,128;y:1,128', not " +
                             std::string(py::str(inputShapes.get_type().attr("__name__"))));
      for (auto item : inputShapes.cast<py::dict>())
        o.inputShapes.emplace_back(py::str(item.first), dimsText(item.second));
    }
  }
  if (!bindDims.is_none()) {
    if (py::isinstance<py::str>(bindDims)) {
      o.bindDims = checked(parseBindDims(bindDims.cast<std::string>()));
    } else {
      if (!py::isinstance<py::dict>(bindDims))
        throw py::type_error("bind_dims must be a dict {symbol: int} or a str 'N=1', not " +
                             std::string(py::str(bindDims.get_type().attr("__name__"))));
      for (auto item : bindDims.cast<py::dict>()) {
        if (!py::isinstance<py::int_>(item.second) || py::isinstance<py::bool_>(item.second))
          throw py::type_error("bind_dims['" + std::string(py::str(item.first)) +
                               "'] must be an int, not " +
                               std::string(py::str(item.second.get_type().attr("__name__"))));
        o.bindDims.emplace_back(py::str(item.first), item.second.cast<int64_t>());
      }
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
  bool changed = checked(std::move(r));
  for (std::string &w : warnings) w = pythonMessage(w, kw);
  return py::make_tuple(changed, warnings);
}

} // namespace

void bindTools(py::module_ &m) {
  registerAllPasses();
  // (Note [Models left at exit] in Objects.cpp)
  py::module_::import("atexit").attr("register")(
      py::cpp_function([]() { gInterpreterExiting = true; }));
  m.def("load", &load, py::arg("path"), py::arg("format") = "auto",
        py::arg("allow_external_links") = false, py::arg("verify") = "default",
        "Loads a model file (binary or text by extension, else by content; '-' is stdin). "
        "`path`: str, bytes or os.PathLike. The model is checked as onnx-opt checks it "
        "(`verify`: 'default', 'structure', 'schema' or 'none'; Note [Python checks what "
        "onnx-opt checks]): problems raise onnxir.Error, warnings are "
        "onnxir.VerificationWarning.");
  m.def("loads", &loads, py::arg("data"), py::arg("format") = "auto",
        py::arg("base_dir") = py::none(), py::arg("name") = "",
        py::arg("allow_external_links") = false, py::arg("verify") = "default",
        "Loads a model from bytes (a serialized ModelProto, or text syntax). External data "
        "is read relative to `base_dir` (a path: str, bytes or os.PathLike; None for none); "
        "`name` is used in error messages. Checked as load checks (`verify`).");
  m.def("save", &save, py::arg("model"), py::arg("path"), py::arg("format") = "auto",
        py::arg("external_data") = py::none(), py::arg("external_threshold") = 1024,
        py::arg("lossless") = py::none(), py::arg("elide_tensors_larger_than") = py::none(),
        py::arg("standard_only") = false, py::arg("force") = false,
        py::arg("inputs") = py::none(), py::arg("verify") = "default",
        "Writes the model in one transaction (the file and its external data, or nothing). "
        "`path`, `external_data` (the data file beside it, for tensors over "
        "`external_threshold` bytes; None for none) and each of `inputs` (model files this "
        "run read, which the output may replace but never one they refer to) are paths: "
        "str, bytes or os.PathLike. The model is checked first as load checks it (`verify`).");
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
  }, py::arg("model"),
        "The load warnings (unknown ops, undeclared domains, newer versions), once per op kind.");
  m.def("run_passes", &runPasses, py::arg("model"), py::arg("pipeline"),
        py::arg("verify_each") = true, py::arg("verify_schema") = false,
        py::arg("options") = py::none(), py::arg("name") = "", py::arg("verify") = "default",
        py::arg("strict") = false,
        "Runs a textual pipeline ('infer-shapes,dce,topo', 'O2', "
        "'fold-constants{size-limit=1MiB}') as onnx-opt runs it (the library's pipeline "
        "policy, PipelineOptions.h): `options` are the global pass options, "
        "{'target-opset': 23, 'fold-size-limit': '1MiB', 'bind-dim': 'batch=1'} (values: bool, "
        "int, float or str), as onnx-opt's --target-opset=23 ...; a target opset alone "
        "converts, and -O1/-O2 work on the converted model. The model is checked first "
        "(`verify`, as load; `strict`: warnings are errors); `verify_schema` is verify='schema'. "
        "Warnings are onnxir.VerificationWarning. True if the model changed.");
  m.def("infer_shapes", &inferShapes, py::arg("model"), py::arg("input_shapes") = py::none(),
        py::arg("bind_dims") = py::none(), py::arg("outputs_only") = false,
        py::arg("strict") = false,
        "Infers types and shapes; input_shapes {name: [dims] or 'N,3,H,W'}, bind_dims "
        "{symbol: int}. Returns (changed, warnings).");
  m.def("_check_record", [](const PyModel &pm) -> py::object {
    static const char *const kLevels[] = {"none", "structure", "default", "schema"};
    int l = pm.h->cleanLevel();
    return l < 0 ? py::object(py::none()) : py::object(py::str(kLevels[l]));
  }, py::arg("model"),
        "The `verify` level a check found the model clean at and that still stands, or None "
        "(Note [Checked once]; for tests).");
  m.def("list_passes", []() -> std::vector<std::pair<std::string, std::string>> {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PassInfo *info : PassRegistry::instance().entries())
      out.emplace_back(info->argument, info->description);
    return out;
  }, "(name, description) of every registered pass, for run_passes' pipeline.");
  m.def("list_options", []() -> std::vector<std::pair<std::string, std::string>> {
    std::map<std::string, std::string> byFlag;
    for (const PassInfo *info : PassRegistry::instance().entries())
      for (const PassOptionInfo &o : info->options)
        if (!o.flag.empty() && !byFlag.count(o.flag)) byFlag[o.flag] = o.description;
    return {byFlag.begin(), byFlag.end()};
  }, "(name, description) of every global pass option, for run_passes' `options`.");
}

} // namespace onnxir::python

PYBIND11_MODULE(_onnxir, m) {
  m.doc() = "onnxir: ONNX models as a mutable SSA graph IR (the compiled core).";
  using namespace onnxir::python;
  static py::exception<Error> exc(m, "Error", PyExc_Exception);
  gErrorType = exc.ptr();
  exc.doc() = "A model, argument or operation that onnxir refuses; the message says what and where.";
  gWarningType = PyErr_NewExceptionWithDoc(
      "onnxir.VerificationWarning",
      "A problem of a model that onnx-opt warns about (type constraints, unknown ops of a "
      "newer opset, ...): issued by load, save and run_passes.",
      PyExc_UserWarning, nullptr);
  if (!gWarningType) throw py::error_already_set();
  m.attr("VerificationWarning") = py::handle(gWarningType);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error &e) {
      setPythonError(exc.ptr(), e.what());
    }
  });
  bindObjects(m);
  bindTensor(m);
  documentProperties(m);
  bindTools(m);
  bindEval(m);
  bindInspect(m);
  bindSurgery(m);
  bindOpLibrary(m);
}
