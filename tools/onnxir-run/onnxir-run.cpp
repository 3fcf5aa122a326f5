//===- onnxir-run.cpp - Run a model on the reference evaluator ------------===//
//
//   onnxir-run MODEL [--input NAME=FILE]... [--random-inputs] [--seed S]
//              [--bind-dim SYM=V]... [-o DIR] [--max-bytes N]
//              [--op-library FILE]...
//              [--compare B.onnx [--rtol R] [--atol A]]
//
// Inputs from .npy or TensorProto .pb files (the backend tests' format; an
// input declared a sequence or an optional from a SequenceProto or
// OptionalProto .pb); --random-inputs fills the others from their declared
// types (symbolic dims from --bind-dim, else 1, said on stderr). Prints each
// output's shape, element type, min/max/mean; -o writes DIR/NAME.npy.
// Note [Printing sequences and optionals]: a sequence prints its length,
// then each element as NAME[k]; -o writes them as DIR/NAME_k.npy (nested:
// NAME_k_j.npy), an empty sequence nothing. An optional prints `optional`
// before what it holds, written as that value would be; an empty one prints
// `NAME: optional, empty` and writes nothing. A map (ZipMap's) prints its
// size, then its keys and values as NAME.keys and NAME.values (files
// NAME.keys.npy, NAME.values.npy). --compare runs B on
// the same inputs and prints per output the largest absolute and relative
// difference: exit 0 when every element is within atol + rtol * |B|, 1 when
// not (Note [Comparing outputs], Eval/Compare.h). Errors: `onnxir-run: error: ...`, exit 2.
//
//===----------------------------------------------------------------------===//
#include "../common/BindDims.h"
#include "../common/OpLibraries.h"

#include "onnxir/Eval/Compare.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/Eval/Npy.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/TensorFile.h"
#include "onnxir/Serialize/ValueFile.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

/// `MODEL: message`, unless the message starts with the model's own
/// location (a node of a text model: `MODEL:line:col: ...`).
std::string about(const std::string &model, absl::string_view msg) {
  if (absl::string_view(msg).substr(0, model.size() + 1) == model + ":") return std::string(msg);
  return absl::StrCat(model, ": ", msg);
}

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnxir-run: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(2);
}

template <typename T> T orFail(absl::StatusOr<T> r) {
  if (!r.ok()) fail(std::string(r.status().message()));
  return std::move(*r);
}

Tensor readInput(const std::string &path) {
  llvm::StringRef p(path);
  if (endsWith(p, ".npy")) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path + ": cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    auto t = parseNpy(ss.str());
    if (!t.ok()) fail(absl::StrCat(path, ": ", t.status().message()));
    return std::move(*t);
  }
  if (endsWith(p, ".pb")) return orFail(loadTensorProto(path));
  fail(path + ": an input file is .npy or .pb (TensorProto)");
}

std::string typeOf(const Tensor &t) {
  std::string s = dataTypeName(t.dataType()).str() + "[";
  for (size_t k = 0; k < t.dims().size(); ++k) s += (k ? "," : "") + std::to_string(t.dims()[k]);
  return s + "]";
}

void summarize(llvm::raw_ostream &os, const std::string &name, const Tensor &t, bool nondet,
               llvm::StringRef prefix = "") {
  os << name << ": " << prefix << typeOf(t);
  if (t.dataType() != DataType::String) {
    auto v = t.values<double>();
    if (v.ok() && !v->empty()) {
      double lo = INFINITY, hi = -INFINITY, sum = 0;
      for (double x : *v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
      }
      os << llvm::format(" min %g max %g mean %g", lo, hi, sum / (double)v->size());
    }
  }
  if (nondet) os << " (nondeterministic)";
  os << "\n";
}

std::string fileNameFor(std::string name) {
  for (char &c : name)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return name;
}

void writeTensor(const std::string &outDir, const std::string &base, const Tensor &t) {
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    fail(outDir + ": " + ec.message());
  std::string bytes = orFail(writeNpy(t));
  std::string path = outDir + "/" + base + ".npy";
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), (std::streamsize)bytes.size());
  if (!out) fail(path + ": cannot write the file");
}

/// Prints (and with `outDir` writes) output `name` (Note [Printing
/// sequences and optionals]); `base` is its file name without .npy.
void emit(const std::string &name, const std::string &base, const EvalValue &v, bool nondet,
          const std::string &outDir, llvm::StringRef prefix = "") {
  switch (v.kind) {
  case EvalValue::Kind::Tensor:
    summarize(llvm::outs(), name, v.tensor, nondet, prefix);
    if (!outDir.empty()) writeTensor(outDir, base, v.tensor);
    return;
  case EvalValue::Kind::Sequence:
    llvm::outs() << name << ": " << prefix << "sequence of " << v.elements.size()
                 << (v.elements.size() == 1 ? " element" : " elements");
    if (v.elemType != DataType::Undefined) llvm::outs() << " (" << dataTypeName(v.elemType) << ")";
    llvm::outs() << (nondet ? " (nondeterministic)\n" : "\n");
    for (size_t k = 0; k < v.elements.size(); ++k)
      emit(name + "[" + std::to_string(k) + "]", base + "_" + std::to_string(k), v.elements[k],
           nondet, outDir);
    return;
  case EvalValue::Kind::Optional:
    if (v.elements.empty()) {
      llvm::outs() << name << ": " << prefix << "optional, empty\n";
      return;
    }
    emit(name, base, v.elements[0], nondet, outDir, (prefix + "optional ").str());
    return;
  case EvalValue::Kind::Map:
    // Its keys and values, each a 1-D tensor (NAME.keys.npy, NAME.values.npy).
    llvm::outs() << name << ": " << prefix << "map of " << v.elements[0].tensor.dims()[0]
                 << (v.elements[0].tensor.dims()[0] == 1 ? " entry" : " entries")
                 << (nondet ? " (nondeterministic)\n" : "\n");
    emit(name + ".keys", base + ".keys", v.elements[0], nondet, outDir);
    emit(name + ".values", base + ".values", v.elements[1], nondet, outDir);
    return;
  }
}

/// Input `name` of `m` read from `path` as its declared kind; null for a
/// tensor input (readInput reads those).
std::unique_ptr<EvalValue> readValueInput(const Model &m, const std::string &name,
                                          const std::string &path) {
  for (Value *v : m.graph().inputs()) {
    if (v->name() != name || !v->type() || v->type()->isTensor()) continue;
    if (!endsWith(path, ".pb"))
      fail(path + ": input \"" + name + "\" is " + v->type()->str() +
           ": its file is a SequenceProto or OptionalProto .pb");
    ProtoValue p = orFail(loadValueProto(path, v->type()->kind()));
    std::function<EvalValue(ProtoValue &)> conv = [&](ProtoValue &p) -> EvalValue {
      std::vector<EvalValue> elems;
      for (ProtoValue &e : p.elements) elems.push_back(conv(e));
      switch (p.kind) {
      case ProtoValue::Kind::Tensor: return EvalValue(std::move(p.tensor));
      case ProtoValue::Kind::Sequence: return EvalValue::sequence(std::move(elems));
      case ProtoValue::Kind::Optional: break;
      }
      if (elems.empty()) return EvalValue::optional();
      return EvalValue::optional(std::move(elems[0]));
    };
    return std::make_unique<EvalValue>(conv(p));
  }
  return nullptr;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, compare, outDir;
  std::vector<std::pair<std::string, std::string>> inputFiles;
  std::map<std::string, int64_t> bind;
  bool random = false;
  uint64_t seed = 0;
  double rtol = 1e-3, atol = 1e-7;
  EvalOptions opts;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    auto value = [&](llvm::StringRef flag) -> std::string {
      if (a.consume_front(flag)) {
        if (a.consume_front("=")) return a.str();
        if (!a.empty()) return "";
        if (i + 1 >= argc) fail(flag.str() + " needs a value");
        return argv[++i];
      }
      return "";
    };
    auto number = [&](const std::string &s, llvm::StringRef flag) {
      char *end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end) fail(flag.str() + ": not a number: '" + s + "'");
      return d;
    };
    if (a == "--random-inputs") random = true;
    else if (startsWith(a, "--input")) {
      std::string v = value("--input");
      size_t eq = v.find('=');
      if (eq == std::string::npos) fail("--input takes NAME=FILE, not '" + v + "'");
      inputFiles.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (startsWith(a, "--bind-dim")) {
      if (auto err = tools::addBindDims(value("--bind-dim"), bind)) fail(*err);
    } else if (startsWith(a, "--op-library")) {
      if (auto err = tools::registerOpLibraryFlag(value("--op-library"))) fail(*err);
    } else if (startsWith(a, "--seed")) seed = (uint64_t)number(value("--seed"), "--seed");
    else if (startsWith(a, "--max-bytes")) opts.maxBytes = (uint64_t)number(value("--max-bytes"), "--max-bytes");
    else if (startsWith(a, "--compare")) compare = value("--compare");
    else if (startsWith(a, "--rtol")) rtol = number(value("--rtol"), "--rtol");
    else if (startsWith(a, "--atol")) atol = number(value("--atol"), "--atol");
    else if (a == "-o") {
      if (i + 1 >= argc) fail("-o needs a directory");
      outDir = argv[++i];
    } else if (startsWith(a, "-") && a != "-") fail("unknown option '" + a.str() + "'");
    else if (model.empty()) model = a.str();
    else fail("more than one model: '" + model + "' and '" + a.str() + "' (--compare B)");
  }
  if (model.empty()) fail("no model (onnxir-run MODEL [--input NAME=FILE]...)");
  opts.seed = seed;

  auto m = orFail(loadModelFile(model));
  std::map<std::string, Tensor> inputs;
  // Inputs declared sequences or optionals, apart (Note [Evaluator values]).
  std::map<std::string, EvalValue> values;
  for (auto &[name, file] : inputFiles) {
    if (auto v = readValueInput(*m, name, file)) values[name] = std::move(*v);
    else inputs[name] = readInput(file);
  }
  std::mt19937_64 rng(seed);
  if (random) {
    std::vector<std::string> notes;
    std::map<std::string, Tensor> given = inputs;
    for (auto &e : values) given[e.first] = Tensor(); // given, not to be made
    auto made = randomInputs(*m, given, bind, rng, &notes);
    for (const std::string &n : notes)
      llvm::errs() << "onnxir-run: note: " << n << " (--bind-dim SYM=V)\n";
    if (!made.ok()) fail(std::string(made.status().message()));
    inputs.merge(*made);
  }

  // A tensor-only run keeps the inputs where they are; values need one map.
  auto run = [&](const Model &mm) {
    if (values.empty()) return evaluateModel(mm, inputs, opts);
    std::map<std::string, EvalValue> all = values;
    for (auto &e : inputs) all[e.first] = EvalValue(e.second);
    return evaluateModelValues(mm, all, opts);
  };
  auto r = run(*m);
  if (!r.ok()) fail(about(model, r.status().message()));
  // Every output in name order, whatever its kind.
  std::map<std::string, const EvalValue *> others;
  for (auto &[name, v] : r->otherOutputs) others[name] = &v;
  auto ti = r->outputs.begin();
  auto oi = others.begin();
  while (ti != r->outputs.end() || oi != others.end()) {
    if (oi == others.end() || (ti != r->outputs.end() && ti->first < oi->first)) {
      summarize(llvm::outs(), ti->first, ti->second, r->nondeterministic.count(ti->first));
      if (!outDir.empty()) writeTensor(outDir, fileNameFor(ti->first), ti->second);
      ++ti;
    } else {
      emit(oi->first, fileNameFor(oi->first), *oi->second,
           r->nondeterministic.count(oi->first), outDir);
      ++oi;
    }
  }
  if (compare.empty()) return 0;

  auto mb = orFail(loadModelFile(compare));
  auto rb = run(*mb);
  if (!rb.ok()) fail(about(compare, rb.status().message()));
  bool within = true;
  for (const OutputDiff &d : orFail(compareOutputs(*r, *rb, rtol, atol))) {
    llvm::outs() << "compare " << d.name;
    switch (d.kind) {
    case OutputDiff::Kind::MissingInA: llvm::outs() << ": missing in " << model << "\n"; break;
    case OutputDiff::Kind::MissingInB: llvm::outs() << ": missing in " << compare << "\n"; break;
    case OutputDiff::Kind::TypeMismatch:
      llvm::outs() << ": " << describeOutput(*r, d.name) << " vs "
                   << describeOutput(*rb, d.name) << "\n";
      break;
    case OutputDiff::Kind::Nondeterministic: llvm::outs() << ": nondeterministic, not compared\n"; break;
    case OutputDiff::Kind::Strings: llvm::outs() << ": strings " << (d.ok ? "equal" : "differ") << "\n"; break;
    case OutputDiff::Kind::Values:
      llvm::outs() << llvm::format(": max abs diff %g, max rel diff %g", d.maxAbs, d.maxRel)
                   << (d.ok ? "" : " (over tolerance)") << "\n";
      break;
    }
    within &= d.ok;
  }
  llvm::outs() << (within ? "outputs agree" : "outputs differ") << llvm::format(" (rtol %g, atol %g)\n", rtol, atol);
  return within ? 0 : 1;
}
