//===- onnxir-diff.cpp - Compare two models by structure ------------------===//
//
//   onnxir-diff A B [--json] [-o FILE] [--allow-external-links]
//
// Matches the nodes of A and B by what they compute, not by their names
// (Note [Structural matching] in lib/Inspect/Diff.cpp) and lists what
// differs: nodes added, removed or changed (attributes with old and new
// values, inputs), initializers (type, shape, max abs value difference),
// graph inputs and outputs, opsets, functions. Text by default, JSON with
// --json (docs/diff.schema.json); to standard output, or to FILE with -o
// (written whole or not at all). Exit 0 when the models are equal up to
// names and node order, 1 when they differ, 2 on an error
// (`onnxir-diff: error: ...`).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Inspect/Diff.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Support/LLVMCompat.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

const char *kUsage =
    "usage: onnxir-diff A B [--json] [-o FILE] [--allow-external-links]\n"
    "\n"
    "Compares two ONNX models (binary or text) by structure, not by names: a model and\n"
    "its renamed, reordered copy are equal. Lists nodes added, removed or changed\n"
    "(attributes, inputs), initializers (type, shape, max abs value difference), graph\n"
    "inputs and outputs, opsets and functions.\n"
    "\n"
    "  --json                   JSON output (keys: docs/diff.schema.json)\n"
    "  -o FILE                  write to FILE instead of standard output\n"
    "  --allow-external-links   follow external data links that leave a model's directory\n"
    "\n"
    "Exit status: 0 equal up to names, 1 different, 2 error.\n";

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnxir-diff: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(2);
}

std::unique_ptr<Model> load(const std::string &path, bool links) {
  LoadFileOptions lo;
  lo.allowExternalLinks = links;
  auto m = loadModelFile(path, lo);
  if (!m.ok()) fail(std::string(m.status().message()));
  // The matching walks use lists and operands: a broken model is refused
  // here, not met half-way.
  if (auto s = verify(**m); !s.ok())
    fail(path + ": the model is invalid: " + std::string(s.message()));
  return std::move(*m);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  std::string output = "-";
  bool json = false, links = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a == "-h" || a == "--help") {
      llvm::outs() << kUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--allow-external-links") {
      links = true;
    } else if (a == "-o") {
      if (i + 1 >= argc) fail("-o needs a file name ('-' for standard output)");
      output = argv[++i];
    } else if (startsWith(a, "-o=") || (startsWith(a, "-o") && a.size() > 2 && a[2] != '-')) {
      output = a.drop_front(a[2] == '=' ? 3 : 2).str();
    } else if (startsWith(a, "-") && a != "-") {
      fail("unknown option '" + a.str() + "' (see --help)");
    } else {
      files.push_back(a.str());
    }
  }
  if (files.size() != 2)
    fail(std::string(files.size() < 2 ? "two models needed" : "more than two models given") +
         ": onnxir-diff A B [--json] [-o FILE]");
  if (output.empty()) fail("-o: the output file name is empty (use - for standard output)");
  if (files[0] == "-" && files[1] == "-") fail("only one of the models can be standard input");

  std::unique_ptr<Model> a = load(files[0], links), b = load(files[1], links);
  ModelDiff d = diffModels(*a, *b);
  if (auto s = checkMappedFileReads(); !s.ok()) fail(std::string(s.message()));
  std::string text = json ? formatDiffJson(d) : formatDiffText(d);
  if (output == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
  } else if (llvm::Error e = llvm::writeToOutput(output, [&](llvm::raw_ostream &os) {
               os << text;
               return llvm::Error::success();
             })) {
    fail("-o " + output + ": " + llvm::errorToErrorCode(std::move(e)).message());
  }
  return d.equal() ? 0 : 1;
}
