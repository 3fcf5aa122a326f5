//===- onnxir-text.cpp - Exercise the text parser and printer -------------===//
//
// A small test tool for the text format (lit tests use it until onnx-opt
// reads text, and it stays useful for debugging the format):
//
//   onnxir-text print FILE        load (binary or text: formatForPath), print text
//   onnxir-text roundtrip FILE    text: parse, print, parse, print; the two
//                                 prints must agree. binary: lift, print
//                                 lossless, parse, lower; bytes must agree.
//   onnxir-text to-binary FILE -o OUT
//
// Options: --lossless, --standard, --elide=N, -o FILE (default stdout).
// --verify checks the model first as onnx-opt does on load: structure, and
// the severe operator schema errors (types warn); --verify=schema makes every
// schema problem an error, --verify=structural only checks structure;
// --strict turns the warnings into errors. --op-library=FILE (repeatable)
// registers custom-domain operators first (Ops/OpLibrary.h).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include "../common/LoadReport.h"
#include "../common/OpLibraries.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

using namespace onnxir;

namespace {
int usage() {
  std::cerr << "usage: onnxir-text print|roundtrip|to-binary FILE [--lossless] "
               "[--standard] [--elide=N] [--verify[=structural|schema]] [--strict] "
               "[--op-library=FILE]... [-o OUT]\n";
  return 2;
}


bool write(const std::string &out, const std::string &data) {
  if (out.empty() || out == "-") {
    std::fwrite(data.data(), 1, data.size(), stdout);
    return true;
  }
  std::ofstream f(out, std::ios::binary);
  f << data;
  return bool(f);
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 3) return usage();
  std::string cmd = argv[1], file, out;
  PrintOptions po;
  bool verifyIt = false, strict = false;
  SchemaCheckLevel level = SchemaCheckLevel::Default;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--lossless") po.lossless = true;
    else if (a == "--standard") po.standardOnly = true;
    else if (a == "--verify" || a == "--verify=default") verifyIt = true;
    else if (a == "--verify=structural" || a == "--verify=structure") {
      verifyIt = true;
      level = SchemaCheckLevel::Structure;
    } else if (a == "--verify=schema") {
      verifyIt = true;
      level = SchemaCheckLevel::Schema;
    } else if (a == "--strict") strict = true;
    else if (a.rfind("--elide=", 0) == 0) po.elideElementsAbove = std::atoll(a.c_str() + 8);
    else if (a == "-o" && i + 1 < argc) out = argv[++i];
    else if (a.rfind("--op-library=", 0) == 0 || (a == "--op-library" && i + 1 < argc)) {
      // Registered at once: --verify checks the model against its ops.
      if (auto err = tools::registerOpLibraryFlag(a == "--op-library" ? argv[++i] : a.substr(13))) {
        std::cerr << "onnxir-text: error: " << *err << "\n";
        return 1;
      }
    } else if (file.empty()) file = a;
    else return usage();
  }
  if (file.empty()) return usage();
  ModelFormat format = ModelFormat::Auto;
  LoadFileOptions lo; // the format by the library's one rule (formatForPath)
  lo.formatRead = &format;
  auto m = loadModelFile(file, lo);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  if (verifyIt) {
    VerifyOptions vo;
    vo.checkOrder = false;
    if (absl::Status s = verify(**m, vo); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    std::string invalid = tools::reportSchemaCheck(checkSchemasOnLoad(**m, level, strict),
                                                   "onnxir-text", file, "--verify=structural",
                                                   llvm::errs());
    if (!invalid.empty()) {
      llvm::errs() << "onnxir-text: error: " << invalid << "\n";
      return 1;
    }
  }
  if (cmd == "print" || cmd == "to-binary") {
    SaveFileOptions so;
    if (cmd == "print") {
      so.format = ModelFormat::Text;
      so.text = po;
    } else {
      so.format = ModelFormat::Binary;
      so.force = true;
    }
    absl::Status s = saveModelFile(**m, out.empty() ? "-" : out, so);
    if (!s.ok()) std::cerr << s.message() << "\n";
    return s.ok() ? 0 : 1;
  }
  if (cmd == "roundtrip") {
    po.lossless = true;
    std::string t1 = printModelText(**m, po);
    LiftOptions reparse; // the printed text reads its data where the file did
    reparse.sourceName = file + ".printed";
    reparse.baseDir = modelDirectory(file);
    auto m2 = parseModelText(t1, reparse);
    if (!m2.ok()) {
      std::cerr << "re-parse failed: " << m2.status().message() << "\n";
      return 1;
    }
    std::string t2 = printModelText(**m2, po);
    if (t1 != t2) {
      std::cerr << "print(parse(print(m))) != print(m)\n";
      write("/tmp/onnxir-text-rt1.txt", t1);
      write("/tmp/onnxir-text-rt2.txt", t2);
      return 1;
    }
    if (format == ModelFormat::Binary) {
      auto b1 = lowerModel(**m);
      auto b2 = lowerModel(**m2);
      if (!b1.ok() || !b2.ok()) {
        std::cerr << "lower failed: " << (b1.ok() ? b2.status() : b1.status()).message() << "\n";
        return 1;
      }
      if (*b1 != *b2) {
        std::cerr << "binary -> text -> binary differs\n";
        return 1;
      }
    }
    std::cout << "ok\n";
    return 0;
  }
  return usage();
}
