//===- onnxir-compose.cpp - Merge two models into one ---------------------===//
//
//   onnxir-compose A B --connect A_OUT:B_IN [--connect ...]
//                  [--prefix A:P] [--prefix B:P] [--drop-unconnected]
//                  [--emit=binary|text] [--external-data=FILE] -o OUT
//   onnxir-compose --merge-decoders DECODER DECODER_WITH_PAST
//                  [--condition=NAME] [--emit=...] [--external-data=FILE] -o OUT
//
// With --merge-decoders the two exports of a decoder become one model that
// runs either by an If on a bool input (Note [Merging decoders]).
//
// B's inputs named by --connect read A's outputs; names get the prefixes
// (connect names are given without them); the default-domain opsets are
// reconciled by the converter; equal weights are stored once (Note
// [Composing models] in onnxir/Passes/Surgery.h, the library function the
// Python onnxir.compose calls too). The result is verified before it is
// written. Errors: `onnxir-compose: error: ...`, exit 1, nothing written.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Surgery.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnxir-compose: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(1);
}

const char *kUsage =
    "onnxir-compose A B --connect A_OUT:B_IN [--connect ...] [--prefix A:P] [--prefix B:P] "
    "[--drop-unconnected] [--emit=binary|text] [--external-data=FILE] -o OUT\n"
    "       onnxir-compose --merge-decoders DECODER DECODER_WITH_PAST [--condition=NAME] "
    "[--emit=binary|text] [--external-data=FILE] -o OUT";

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> models;
  std::string out, emit, external;
  ComposeOptions opts;
  MergeDecodersOptions mergeOpts;
  bool prefixA = false, prefixB = false, merge = false, conditionGiven = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    // --flag=VALUE or --flag VALUE.
    auto value = [&](llvm::StringRef flag, std::string &v) {
      if (a == flag) {
        if (i + 1 >= argc) fail(flag.str() + " needs a value");
        v = argv[++i];
        return true;
      }
      if (startsWith(a, flag.str() + "=")) {
        v = a.drop_front(flag.size() + 1).str();
        return true;
      }
      return false;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      llvm::outs() << "usage: " << kUsage << "\n";
      return 0;
    } else if (a == "--merge-decoders") {
      merge = true;
    } else if (value("--condition", v)) {
      if (v.empty()) fail("--condition needs a name");
      mergeOpts.condition = v;
      conditionGiven = true;
    } else if (a == "--drop-unconnected") {
      opts.dropUnconnected = true;
    } else if (value("--connect", v)) {
      size_t colon = v.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
        fail("--connect takes A_OUT:B_IN, not '" + v + "'");
      opts.connect.emplace_back(v.substr(0, colon), v.substr(colon + 1));
    } else if (value("--prefix", v)) {
      bool isA = startsWith(v, "A:"), isB = startsWith(v, "B:");
      if (!isA && !isB) fail("--prefix takes A:PREFIX or B:PREFIX, not '" + v + "'");
      bool &given = isA ? prefixA : prefixB;
      if (given) fail("--prefix " + v.substr(0, 1) + ": is given twice");
      given = true;
      (isA ? opts.prefixA : opts.prefixB) = v.substr(2);
    } else if (value("-o", v)) {
      if (!out.empty()) fail("-o is given twice");
      out = v;
    } else if (value("--emit", v)) {
      if (v != "binary" && v != "text") fail("--emit: unknown value '" + v + "' (valid: binary, text)");
      emit = v;
    } else if (value("--external-data", v)) {
      external = v;
    } else if (startsWith(a, "-") && a != "-") {
      fail("unknown option '" + a.str() + "' (" + kUsage + ")");
    } else {
      models.push_back(a.str());
    }
  }
  if (models.size() != 2) fail(std::string("two models are taken: ") + kUsage);
  if (out.empty()) fail(std::string("no output given (-o OUT): ") + kUsage);
  if (merge && (!opts.connect.empty() || prefixA || prefixB || opts.dropUnconnected))
    fail("--merge-decoders takes no --connect, --prefix or --drop-unconnected");
  if (!merge && conditionGiven) fail("--condition is an option of --merge-decoders");
  if (!merge && opts.connect.empty()) fail(std::string("no --connect given: ") + kUsage);

  std::unique_ptr<Model> m[2];
  for (int k = 0; k < 2; ++k) {
    auto r = loadModelFile(models[k]);
    if (!r.ok()) fail(std::string(r.status().message()));
    m[k] = std::move(*r);
    std::string problems;
    for (const Diagnostic &d : verifyAll(*m[k]))
      if (d.kind != Diagnostic::Kind::OrderViolation) absl::StrAppend(&problems, "\n  ", d.message);
    if (!problems.empty()) fail(models[k] + ": the model is invalid:" + problems);
  }
  // (The sources stay alive: weights may be views of their mapped files.)
  std::unique_ptr<Model> merged;
  if (merge) {
    auto r = mergeDecoders(*m[0], *m[1], mergeOpts);
    if (!r.ok()) fail(absl::StrCat(models[0], " + ", models[1], ": ", r.status().message()));
    merged = std::move(*r);
  } else if (absl::Status s = composeModels(*m[0], *m[1], opts); !s.ok()) {
    fail(absl::StrCat(models[0], " + ", models[1], ": ", s.message()));
  }
  std::string problems;
  Model &result = merged ? *merged : *m[0];
  for (const Diagnostic &d : verifyAll(result)) absl::StrAppend(&problems, "\n  ", d.message);
  if (!problems.empty())
    fail(absl::StrCat(models[0], " + ", models[1], ": the ", merge ? "merged" : "composed",
                      " model is invalid:", problems));
  if (absl::Status s = checkMappedFileReads(); !s.ok()) fail(std::string(s.message()));

  SaveFileOptions so;
  so.format = emit == "text" ? ModelFormat::Text : emit == "binary" ? ModelFormat::Binary
                                                                    : ModelFormat::Auto;
  so.externalDataFile = external;
  so.inputs = models;
  if (absl::Status s = saveModelFile(result, out, so); !s.ok()) fail(std::string(s.message()));
  return 0;
}
