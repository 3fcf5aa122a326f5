//===- onnx-opt.cpp - The onnxir command line -----------------------------===//
//
// onnx-opt [passes] INPUT -o OUTPUT
//
// Loads a model (binary .onnx or text .onnxtxt; "-" is standard input), runs
// the passes named on the command line in that order, verifying the IR after
// each, and writes the result atomically (binary, or text with --emit=text or
// an .onnxtxt output name; "-o -" is standard output). Any bad input is a
// located message on stderr and exit status 1; the output is then untouched.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Eval/Compare.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/Eval/Npy.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Inspect/Inspect.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/PipelineOptions.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/TensorFile.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/Support/LLVMCompat.h"

#include "../common/OpLibraries.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <new>
#include <random>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxir;
namespace cl = llvm::cl;

namespace {

/// Passes that exist to test the tools (`-test-break-ir`): accepted, but
/// not shown by --help or --list-passes.
bool isTestPass(const PassInfo &info) { return startsWith(info.argument, "test-"); }

/// Parses pass names into registry entries (one literal option each).
struct PassNameParser : public cl::parser<const PassInfo *> {
  explicit PassNameParser(cl::Option &o) : cl::parser<const PassInfo *>(o) {}
  void initialize() {
    cl::parser<const PassInfo *>::initialize();
    for (const PassInfo *info : PassRegistry::instance().entries())
      addLiteralOption(info->argument, info, info->description);
  }
  // LLVM's layout for literal options (`    --NAME  - description`), without
  // the test passes.
  void printOptionInfo(const cl::Option &o, size_t globalWidth) const {
    if (!o.HelpStr.empty()) llvm::outs() << "  " << o.HelpStr << "\n";
    for (const PassInfo *info : PassRegistry::instance().entries()) {
      if (isTestPass(*info)) continue;
      const std::string &name = info->argument;
      llvm::outs() << "    " << (name.size() == 1 ? "-" : "--") << name;
      size_t used = name.size() + 8;
      llvm::outs().indent(globalWidth > used ? globalWidth - used : 0)
          << " - " << info->description << "\n";
    }
  }
};

cl::OptionCategory gIOCat("Input and output");
cl::OptionCategory gPassCat("Passes (run in command-line order)");
cl::OptionCategory gPassOptCat("Pass options");
cl::OptionCategory gDebugCat("Pipeline control and debugging");

cl::opt<std::string> gInput(cl::Positional, cl::desc("<input model>"), cl::init("-"),
                            cl::cat(gIOCat));
cl::opt<std::string> gOutput("o", cl::desc("Output file ('-' for standard output)"),
                             cl::value_desc("file"), cl::init("-"), cl::cat(gIOCat));
// The model formats, then views of the result written instead of the model
// (lib/Inspect: README "Model surgery").
enum class EmitFormat { Auto, Binary, Text, Json, Dot, Mermaid, Svg };
cl::opt<EmitFormat> gEmit(
    "emit", cl::desc("Output format (default: by the output's extension, .onnxtxt is text)"),
    cl::values(clEnumValN(EmitFormat::Binary, "binary", "ONNX protobuf"),
               clEnumValN(EmitFormat::Text, "text", "the ONNX text syntax"),
               clEnumValN(EmitFormat::Json, "json",
                          "a summary of the result, not the model (docs/inspect.schema.json)"),
               clEnumValN(EmitFormat::Dot, "dot", "the result's graph in Graphviz DOT"),
               clEnumValN(EmitFormat::Mermaid, "mermaid", "the result's graph as a Mermaid flowchart"),
               clEnumValN(EmitFormat::Svg, "svg", "the DOT drawn by Graphviz's `dot -Tsvg`")),
    cl::init(EmitFormat::Auto), cl::cat(gIOCat));
cl::opt<unsigned> gCollapse("collapse",
                            cl::desc("--emit=dot/mermaid/svg: draw the nodes whose names share "
                                     "their first N parts (split on / and .) as one box"),
                            cl::value_desc("N"), cl::init(0), cl::cat(gIOCat));
cl::opt<ModelFormat> gInputFormat(
    "input-format", cl::desc("Input format"),
    cl::values(clEnumValN(ModelFormat::Auto, "auto",
                          "by extension (.onnxtxt text, .onnx binary), else by content"),
               clEnumValN(ModelFormat::Binary, "binary", "ONNX protobuf"),
               clEnumValN(ModelFormat::Text, "text", "the ONNX text syntax")),
    cl::init(ModelFormat::Auto), cl::cat(gIOCat));
cl::opt<bool> gPrintLossless("print-lossless",
                             cl::desc("Text output: print every tensor and extension field "
                                      "(the default for files; for stdout, when asked)"),
                             cl::cat(gIOCat));
cl::opt<bool> gTextReadable("text-readable",
                            cl::desc("Text output to a file: the readable form (big tensors "
                                     "elided, defaults implicit), which cannot be read back"),
                            cl::cat(gIOCat));
cl::opt<int64_t> gElideAbove("elide-tensors-larger-than",
                             cl::desc("Readable text: elide tensors of more than N elements "
                                      "(default 64; implies --text-readable)"),
                             cl::value_desc("N"), cl::init(64), cl::cat(gIOCat));
cl::opt<bool> gForce("f", cl::desc("Write a binary model even to a terminal"), cl::cat(gIOCat));
cl::opt<bool> gAllowExternalLinks(
    "allow-external-links",
    cl::desc("Follow external data links that leave the model's directory (the Hugging Face "
             "cache layout, ../../blobs); off by default"),
    cl::cat(gIOCat));
cl::opt<std::string> gExternalData("external-data",
                                   cl::desc("Write tensors above the threshold to this file "
                                            "beside the output"),
                                   cl::value_desc("file"), cl::cat(gIOCat));
cl::opt<std::string> gExternalThreshold(
    "external-data-threshold",
    cl::desc("Size above which --external-data moves a tensor (default 1024; units: 64KiB, 1MB)"),
    cl::value_desc("bytes"), cl::init("1024"), cl::cat(gIOCat));
cl::opt<std::string> gCheckNumerics(
    "check-numerics", cl::ValueOptional, cl::value_desc("N"),
    cl::desc("Run the input model and the result on N random input sets (default 3) with the "
             "reference evaluator and refuse to write when an output differs beyond its element "
             "type's tolerance"),
    cl::cat(gIOCat));
cl::list<std::string> gCheckInput(
    "check-input", cl::value_desc("NAME=FILE|NUMBER"),
    cl::desc("--check-numerics: input NAME from a .npy or TensorProto .pb file, or its declared "
             "type and shape filled with NUMBER, instead of random values (repeatable)"),
    cl::cat(gIOCat));
cl::list<std::string> gOpLibrary(
    "op-library", cl::value_desc("FILE"),
    cl::desc("Declarations of custom-domain operators (docs/op-library.md), registered before "
             "the model is read (repeatable)"),
    cl::cat(gIOCat));
cl::opt<bool> gSummary("summary",
                       cl::desc("Print a before/after table of op counts, initializers and "
                                "file size to stderr"),
                       cl::cat(gIOCat));

// Created in main, after registerAllPasses(): its parser lists the registry.
using PassList = cl::list<const PassInfo *, bool, PassNameParser>;

cl::opt<bool> gVerifyEach("verify-each", cl::desc("Verify the IR after every pass (default on)"),
                          cl::init(true), cl::cat(gDebugCat));
enum class VerifyLevel { Structure, Default, Schema };
cl::opt<VerifyLevel> gVerifyLevel(
    "verify",
    cl::desc("What the model is checked for, on load and with -verify-each after every pass"),
    cl::values(clEnumValN(VerifyLevel::Default, "default",
                          "structure; on load also the schema errors no reader can make sense "
                          "of (unknown default-domain op, arity, required or mistyped "
                          "attribute); type constraints warn (the default)"),
               clEnumValN(VerifyLevel::Structure, "structure",
                          "scopes, use lists, order only; schema problems are warnings"),
               clEnumValN(VerifyLevel::Structure, "structural", "the same as structure"),
               clEnumValN(VerifyLevel::Schema, "schema",
                          "also every node against its ONNX operator schema, all errors")),
    cl::init(VerifyLevel::Default), cl::cat(gDebugCat));
cl::opt<bool> gStrict("strict",
                      cl::desc("Turn the load warnings (unknown ops, undeclared domains, "
                               "newer ir_version or opset, type constraints) into errors"),
                      cl::cat(gDebugCat));
// Note [Options libLLVM.so also has]
// LLVM has a -time-passes and an -opt-bisect-limit of its own. Linked with
// LLVM's static Support (the default) they are not in the program; linked
// with libLLVM.so (a shared build on an LLVM built that way, Note [Which
// LLVM and how it is linked]) they are registered before main, and a second
// option of the same name aborts the program at start. onnx-opt runs no
// LLVM pass, so its options take the names over: LLVM's are unregistered
// first, then ours are made (in main, through these functions).
cl::Option *unregisterLLVMOption(llvm::StringRef name) {
  cl::Option *o = cl::getRegisteredOptions().lookup(name);
  if (o) o->removeArgument();
  return o;
}
cl::opt<bool> &timePassesOption() {
  static cl::opt<bool> *o = (unregisterLLVMOption("time-passes"),
                             new cl::opt<bool>("time-passes", cl::desc("Time each pass"),
                                               cl::cat(gDebugCat)));
  return *o;
}
cl::list<std::string> gPrintAfter("print-ir-after",
                                  cl::desc("Print the IR (text) after the named passes"),
                                  cl::CommaSeparated, cl::cat(gDebugCat));
cl::opt<bool> gPrintAfterAll("print-ir-after-all", cl::desc("Print the IR after every pass"),
                             cl::cat(gDebugCat));
cl::opt<int64_t> &bisectOption() {
  static cl::opt<int64_t> *o =
      (unregisterLLVMOption("opt-bisect-limit"),
       new cl::opt<int64_t>("opt-bisect-limit",
                            cl::desc("Run only the first N passes (to find the one that breaks a "
                                     "model)"),
                            cl::init(-1), cl::cat(gDebugCat)));
  return *o;
}
cl::opt<bool> gListPasses("list-passes", cl::desc("List the passes and exit"), cl::cat(gDebugCat));
cl::opt<std::string> gPassPipeline(
    "pass-pipeline",
    cl::desc("A textual pipeline with per-instance options, instead of pass flags: "
             "'dce,fold-constants{size-limit=1MiB},topo'"),
    cl::value_desc("pipeline"), cl::cat(gPassCat));

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnx-opt: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(1);
}

/// Refuses an unknown option by its name, once. LLVM's parser first takes an
/// unknown `-foo` for a group of one-letter options (`-f -o -o`: "may not
/// occur within a group"), then names it and suggests the nearest option,
/// which for a long name is a one-letter one (`-o`).
void checkUnknownOptions(int argc, char **argv) {
  llvm::StringMap<cl::Option *> &opts = cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--") break; // the rest are file names
    if (arg.size() < 2 || arg[0] != '-') continue;
    llvm::StringRef name = arg.drop_front(startsWith(arg, "--") ? 2 : 1);
    bool hasValue = name.contains('=');
    name = name.split('=').first;
    auto it = opts.find(name);
    if (it != opts.end()) {
      // `-o FILE`: the value is the next argument, whatever it looks like.
      if (!hasValue && it->second->getValueExpectedFlag() == cl::ValueRequired) ++i;
      continue;
    }
    std::string best;
    unsigned bestDistance = ~0u;
    for (auto &entry : opts) {
      llvm::StringRef k = entry.getKey();
      if (k.size() < 2 || entry.getValue()->getOptionHiddenFlag() != cl::NotHidden) continue;
      unsigned d = name.edit_distance(k, true, bestDistance);
      if (d < bestDistance) {
        bestDistance = d;
        best = k.str();
      }
    }
    std::string hint;
    if (!best.empty() && bestDistance <= std::max<size_t>(1, name.size() / 3))
      hint = " (did you mean --" + best + "?)";
    llvm::errs() << "onnx-opt: error: unknown option '" << arg.split('=').first << "'" << hint
                 << "; see onnx-opt --help\n";
    std::exit(1);
  }
}

// Note [Command-line spellings]
// Users write flags the way other tools take them: `--target-opset 18` as
// well as `--target-opset=18`, `--input-shape a:1,128 --input-shape
// b:1,128` (repeated, as onnxsim takes it), `-O2 in.onnx out.onnx`. LLVM's
// parser takes a value after a space only for options that require one, and
// its messages ("may only occur zero or one times!", "does not allow a
// value!", "Too many positional arguments") name no valid form.
// normalizeArgs rewrites the command line before LLVM sees it, so that every
// flag it passes on has its value after `=`, each single-valued option occurs
// once, and at most one positional argument (the input) remains; anything
// it cannot make sense of is an error that says what to write. The accepted
// spellings:
//   pass option   --KEY=VALUE, --KEY VALUE; a bool: --KEY, --KEY=false,
//                 --KEY false; input-shape and bind-dim repeat (joined
//                 with ';'), any other is given once (or twice the same)
//   tool option   -o FILE, -o=FILE, --emit text, --emit=text; a value out of
//                 a list is checked against it; a bool: -f, --summary=true
//   pass flag     -dce, --dce (no value: options go in --pass-pipeline or
//                 in their flags)
//   positional    INPUT [OUTPUT]: the second is the output, unless -o is
//                 given too

/// The valid values of the tool's options that take one of a list.
std::map<std::string, std::vector<std::string>> gChoices;

template <class T> void recordChoices(cl::opt<T> &o) {
  std::vector<std::string> names;
  auto &parser = o.getParser();
  for (unsigned i = 0; i < parser.getNumOptions(); ++i) names.push_back(parser.getOption(i).str());
  gChoices[o.ArgStr.str()] = names;
}

bool isBoolText(llvm::StringRef v) {
  return v == "true" || v == "false" || v == "on" || v == "off" || v == "1" || v == "0";
}

struct NormalizedArgs {
  std::vector<std::string> args; ///< argv[0], the flags, then the input
  bool inputGiven = false;
};

/// Note [Command-line spellings]. `passOptFlags`: the pass options' global
/// flags, true for a bool one.
NormalizedArgs normalizeArgs(int argc, char **argv,
                             const std::map<std::string, bool> &passOptFlags) {
  llvm::StringMap<cl::Option *> &opts = cl::getRegisteredOptions();
  NormalizedArgs out;
  out.args.push_back(argv[0]);
  std::vector<std::string> positionals;
  std::map<std::string, std::string> passValues; // flag -> value(s)
  std::vector<std::string> passOrder;
  std::map<std::string, std::string> seen; // single-valued tool option -> as written
  std::string outputFlag;                  // -o as written
  auto spelled = [](llvm::StringRef dashes, llvm::StringRef name) {
    return (dashes + name).str();
  };
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--") {
      for (++i; i < argc; ++i) positionals.push_back(argv[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positionals.push_back(arg.str());
      continue;
    }
    llvm::StringRef dashes = startsWith(arg, "--") ? "--" : "-";
    auto [name, value] = arg.drop_front(dashes.size()).split('=');
    bool hasValue = arg.contains('=');
    std::string flag = spelled(dashes, name);
    // The next argument as this flag's value, when it has none after `=`.
    auto takeNext = [&](std::string form) -> std::string {
      if (i + 1 >= argc)
        fail(flag + " needs a value: " + flag + "=" + form + " or " + flag + " " + form);
      return argv[++i];
    };
    if (auto it = passOptFlags.find(name.str()); it != passOptFlags.end()) {
      std::string v;
      if (hasValue) v = value.str();
      else if (it->second) {
        if (i + 1 < argc && isBoolText(argv[i + 1])) v = argv[++i];
      } else {
        v = takeNext("VALUE");
        llvm::StringRef next(v);
        int64_t n;
        if (next.size() > 1 && next[0] == '-' && next.getAsInteger(10, n))
          fail(flag + " needs a value: " + flag + "=VALUE or " + flag + " VALUE (got '" + v +
               "', an option)");
      }
      std::string key = name.str();
      auto [at, fresh] = passValues.emplace(key, v);
      if (fresh) passOrder.push_back(key);
      else if (key == "input-shape" || key == "bind-dim") at->second += ";" + v;
      else if (at->second != v)
        fail("--" + key + " is given twice ('" + at->second + "' and '" + v +
             "'); give it once");
      continue;
    }
    auto found = opts.find(name);
    if (found == opts.end()) { // LLVM's own spellings (checked before)
      out.args.push_back(arg.str());
      continue;
    }
    cl::Option *o = found->second;
    bool once = o->getNumOccurrencesFlag() == cl::Optional;
    // A pass flag (-dce, -O2): a literal of the pass list, no value.
    if (o->getValueExpectedFlag() == cl::ValueDisallowed) {
      if (hasValue)
        fail(flag + " takes no value; options of a pass are flags of their own (see "
                    "--list-passes) or go in --pass-pipeline='" +
             name.str() + "{KEY=VALUE}'");
      out.args.push_back(arg.str());
      continue;
    }
    std::string v;
    bool valued = true;
    if (o->getValueExpectedFlag() == cl::ValueRequired) {
      v = hasValue ? value.str()
                   : takeNext(o->ValueStr.empty() ? std::string("VALUE") : o->ValueStr.upper());
      if (auto c = gChoices.find(name.str()); c != gChoices.end() &&
                                            !llvm::is_contained(c->second, v)) {
        std::string list;
        for (const std::string &x : c->second) list += (list.empty() ? "" : ", ") + x;
        fail(flag + ": unknown value '" + v + "' (valid: " + list + ")");
      }
      if ((name == "opt-bisect-limit" || name == "elide-tensors-larger-than")) {
        int64_t n;
        if (llvm::StringRef(v).getAsInteger(10, n))
          fail(flag + ": '" + v + "' is not an integer");
      }
    } else if (name == "check-numerics") {
      // Bare (3 sets) or =N; never the next argument (it is the model).
      valued = hasValue;
      v = value.str();
      unsigned n;
      if (hasValue && (llvm::StringRef(v).getAsInteger(10, n) || n == 0))
        fail(flag + ": '" + v + "' is not a number of input sets (1 or more)");
    } else {
      // A bool option: bare, =VALUE or a following true/false.
      if (hasValue) v = value.str();
      else if (i + 1 < argc && isBoolText(argv[i + 1])) v = argv[++i];
      else valued = false;
      if (valued && !isBoolText(v) && v != "TRUE" && v != "True" && v != "FALSE" &&
          v != "False")
        fail(flag + ": '" + v + "' is not true or false");
      if (v == "on") v = "true";
      if (v == "off") v = "false";
    }
    std::string written = valued ? flag + "=" + v : flag;
    if (once) {
      auto [at, fresh] = seen.emplace(name.str(), written);
      if (!fresh) {
        if (at->second == written) continue;
        fail(flag + " is given twice (" + at->second + " and " + written + "); give it once");
      }
    }
    if (name == "o") outputFlag = written;
    out.args.push_back(written);
  }
  for (const std::string &k : passOrder) out.args.push_back("--" + k + "=" + passValues[k]);
  if (positionals.size() > 2)
    fail("one input model and at most one output are taken, got " +
         std::to_string(positionals.size()) + " file names ('" + positionals[0] + "', '" +
         positionals[1] + "', '" + positionals[2] + "'...): onnx-opt [passes] INPUT -o OUTPUT");
  if (positionals.size() == 2) {
    if (!outputFlag.empty())
      fail("two outputs given: '" + positionals[1] + "' and " + outputFlag +
           " (use -o OUTPUT, or the output as the second file name)");
    out.args.push_back("-o=" + positionals[1]);
  }
  if (!positionals.empty()) {
    out.args.push_back("--");
    out.args.push_back(positionals[0]);
    out.inputGiven = true;
  }
  return out;
}

/// A byte-count flag's value (parseByteCount, the pass options' parser too).
uint64_t byteFlag(const std::string &flag, llvm::StringRef arg) {
  absl::StatusOr<uint64_t> n = parseByteCount(arg);
  if (!n.ok()) fail(flag + ": " + std::string(n.status().message()));
  return *n;
}

struct Summary {
  std::map<std::string, int64_t> ops;
  int64_t nodes = 0, initializers = 0, initializerBytes = 0, fileSize = -1;
};

Summary summarize(Model &m) {
  Summary s;
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes()) {
      std::string key = n.domain().empty() ? n.opType().str() : (n.domain() + "." + n.opType()).str();
      ++s.ops[key];
      ++s.nodes;
    }
    for (Value *v : g->initializers()) {
      ++s.initializers;
      Tensor *t = v->initializer();
      if (auto n = t->numElements())
        s.initializerBytes += (int64_t)dataTypeStorageBytes(t->dataType(), (uint64_t)*n);
    }
  });
  return s;
}

int64_t fileSize(const std::string &p) {
  struct stat st;
  if (p == "-" || ::stat(p.c_str(), &st) != 0) return -1;
  return (int64_t)st.st_size;
}

void printSummary(const Summary &a, const Summary &b) {
  llvm::raw_ostream &os = llvm::errs();
  os << llvm::format("%-32s %12s %12s %10s\n", (const char *)"", (const char *)"before", (const char *)"after", (const char *)"change");
  auto row = [&](const std::string &name, int64_t x, int64_t y) {
    std::string delta = x == y ? "" : (y > x ? "+" : "") + std::to_string(y - x);
    os << llvm::format("%-32s %12lld %12lld %10s\n", name.c_str(), (long long)x, (long long)y,
                       delta.c_str());
  };
  std::map<std::string, std::pair<int64_t, int64_t>> ops;
  for (auto &[k, v] : a.ops) ops[k].first = v;
  for (auto &[k, v] : b.ops) ops[k].second = v;
  for (auto &[k, v] : ops) row("  " + k, v.first, v.second);
  row("nodes (all graphs)", a.nodes, b.nodes);
  row("initializers", a.initializers, b.initializers);
  row("initializer bytes", a.initializerBytes, b.initializerBytes);
  if (a.fileSize >= 0 && b.fileSize >= 0) row("file size (bytes)", a.fileSize, b.fileSize);
}

/// --summary: what each rewrite pattern did (counters of the pattern passes),
/// then the fusion census: the nodes the fusions made, per op
/// (Note [Fusion census], PatternRewrite.h); then what convert-opset and
/// expand-functions did per op (adapted, expanded, unchanged).
void printPatternSummary(const PassStatistics &stats) {
  auto section = [&](const char *title, std::initializer_list<llvm::StringRef> prefixes,
                     llvm::StringRef strip = "") {
    bool header = false;
    for (auto &[key, n] : stats) {
      llvm::StringRef k(key);
      bool match = false;
      for (llvm::StringRef p : prefixes) match |= startsWith(k, p);
      // The census has a section of its own.
      if (!n || !match || (strip.empty() && startsWith(k, "fuse: made ")) ||
          (!strip.empty() && !startsWith(k, strip)))
        continue;
      if (!header) llvm::errs() << title << ":\n";
      header = true;
      std::string shown = strip.empty() ? key : k.drop_front(strip.size()).str();
      llvm::errs() << llvm::format("  %-40s %10lld\n", shown.c_str(), (long long)n);
    }
  };
  section("pattern applications", {"fuse: ", "simplify: "});
  section("fused ops made", {"fuse: made "}, "fuse: made ");
  section("opset conversion (nodes per op)", {"convert-opset: ", "expand-functions: "});
}

/// --emit=json/dot/mermaid/svg: a view of the result (lib/Inspect) to -o in
/// place of the model, written whole or not at all.
bool isViewFormat(EmitFormat f) { return f >= EmitFormat::Json; }
void writeView(const Model &m, const PassStatistics &stats) {
  std::string text;
  if (gEmit == EmitFormat::Json) {
    InspectOptions io;
    io.statistics = &stats;
    text = inspectModelJson(m, io);
  } else {
    ViewOptions vo;
    vo.format = gEmit == EmitFormat::Mermaid ? ViewFormat::Mermaid : ViewFormat::Dot;
    vo.collapseDepth = gCollapse;
    text = renderGraphView(m, vo);
    if (gEmit == EmitFormat::Svg) {
      auto svg = renderSvgWithGraphviz(text);
      if (!svg.ok()) fail(std::string(svg.status().message()));
      text = std::move(*svg);
    }
  }
  if (llvm::Error e = llvm::writeToOutput(gOutput, [&](llvm::raw_ostream &os) {
        os << text;
        return llvm::Error::success();
      }))
    fail("-o " + gOutput + ": " + llvm::errorToErrorCode(std::move(e)).message());
}

} // namespace

// -time-passes: the phases around the pipeline, so the report shows the
// whole run (load, verification, passes, save).
static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The operator-schema check on load has a line of its own: it is not the
// structural verification that --verify-each repeats after each pass.
static void printRunTimes(double load, const PipelineRun &run, double save) {
  double passes = run.passSeconds, verify = run.inputVerifySeconds + run.verifySeconds;
  double total = load + verify + run.schemaCheckSeconds + passes + save;
  auto line = [&](double s, const std::string &what) {
    llvm::errs() << llvm::format("  %10.4f  %5.1f%%  ", s, total > 0 ? 100.0 * s / total : 0.0)
                 << what << "\n";
  };
  llvm::errs() << "===--- Whole run timing report ---===\n     seconds       %  phase\n";
  line(load, "load (read and lift)");
  const unsigned runs = run.verifyRuns + 1;
  line(verify, "verification (" + std::to_string(runs) + (runs == 1 ? " run)" : " runs)"));
  line(run.schemaCheckSeconds, "operator schema check (on load)");
  line(passes, "passes");
  line(save, "save (lower and write)");
  line(total, "total");
}

//===--- Note [Numeric check] ---------------------------------------------===//
// --check-numerics[=N] runs the model as read and the model as it is about to
// be written on the reference evaluator (Eval/Evaluator.h) on N random input
// sets and refuses to write when an output differs. The inputs are made from
// the result's graph inputs (after --input-shape and --bind-dim have fixed
// their dims; a dim still symbolic or unknown takes its --bind-dim value, or
// 1, and a note says so), so both models take them; --check-input gives an
// input from a file, or fills it with one number (a model whose input must
// hold a particular value: a sample rate, a mode flag). The original is kept as
// its bytes (external data stays where it is) and lifted again for the run.
// Tolerances follow the element type: floats within atol + rtol * |original|
// (float and double 1e-5 / 1e-4 as onnxruntime-level checks use, float16 and
// bfloat16 1e-2 / 1e-2), every other type exactly; an output from a random op
// is not compared. A model the evaluator cannot run (an op without a kernel)
// is an error: nothing is written, since nothing was checked.
//===----------------------------------------------------------------------===//

/// The element type of a sequence or optional output (of its tensors),
/// Undefined when it holds none.
DataType valueElemType(const EvalValue &v) {
  if (v.isTensor()) return v.tensor.dataType();
  if (v.isSequence() && v.elemType != DataType::Undefined) return v.elemType;
  for (const EvalValue &e : v.elements)
    if (DataType t = valueElemType(e); t != DataType::Undefined) return t;
  return DataType::Undefined;
}

/// The tolerance of an output of element type `t` (Note [Numeric check]).
std::pair<double, double> numericTolerance(DataType t) {
  switch (t) {
  case DataType::Float:
  case DataType::Double: return {1e-4, 1e-5};
  case DataType::Float16:
  case DataType::BFloat16: return {1e-2, 1e-2};
  default: return {0.0, 0.0};
  }
}

/// The tensor of `--check-input NAME=FILE|NUMBER`: a .npy or TensorProto
/// .pb file, or input NAME of `m` (its declared element type; dims known,
/// from `bind`, else 1) filled with NUMBER.
absl::StatusOr<Tensor> checkInputTensor(const Model &m, const std::string &spec,
                                        const std::map<std::string, int64_t> &bind) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    return absl::InvalidArgumentError("expected NAME=FILE or NAME=NUMBER");
  std::string name = spec.substr(0, eq), what = spec.substr(eq + 1);
  llvm::StringRef w(what);
  if (endsWith(w, ".npy")) {
    std::ifstream in(what, std::ios::binary);
    if (!in) return absl::NotFoundError(what + ": cannot open the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parseNpy(ss.str());
  }
  if (endsWith(w, ".pb")) return loadTensorProto(what);
  double x;
  if (w.getAsDouble(x))
    return absl::InvalidArgumentError("'" + what + "' is neither a .npy or .pb file nor a number");
  const Value *in = nullptr;
  for (const Value *v : m.graph().inputs())
    if (v->name() == name) in = v;
  if (!in) return absl::InvalidArgumentError("\"" + name + "\" is no input of the model");
  const Type *t = in->type();
  if (!t || !t->isTensor() || !t->hasElemType() || !t->hasShape())
    return absl::InvalidArgumentError("input \"" + name + "\" has no tensor type with a shape");
  std::vector<int64_t> dims;
  for (const Dim &d : t->dims())
    dims.push_back(d.isKnown() ? d.value
                   : d.isSymbolic() && bind.count(d.param.str()) ? bind.at(d.param.str())
                                                                 : 1);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::string bytes;
  auto fill = [&](auto v) {
    for (int64_t k = 0; k < n; ++k) bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
  };
  switch (t->elemType()) {
  case DataType::Float: fill((float)x); break;
  case DataType::Double: fill(x); break;
  case DataType::Float16: fill(floatToHalf((float)x)); break;
  case DataType::Int64: fill((int64_t)x); break;
  case DataType::Int32: fill((int32_t)x); break;
  case DataType::Int8: fill((int8_t)x); break;
  case DataType::Uint8: fill((uint8_t)x); break;
  case DataType::Bool: fill((uint8_t)(x != 0)); break;
  default:
    return absl::InvalidArgumentError("input \"" + name + "\" is " +
                                      dataTypeName(t->elemType()).str() +
                                      ": give a .npy or .pb file");
  }
  Tensor out;
  out.setDataType(t->elemType());
  out.setDims(dims);
  out.setRaw(std::move(bytes));
  return out;
}

/// Runs `original` (its bytes) and `result` on `sets` random input sets;
/// an error names the first output that differs.
absl::Status checkNumerics(llvm::StringRef originalBytes, const LiftOptions &lo,
                           const Model &result, unsigned sets,
                           const std::map<std::string, int64_t> &bind,
                           const std::map<std::string, Tensor> &given) {
  auto original = liftModel(originalBytes, lo);
  if (!original.ok()) return original.status();
  std::mt19937_64 rng(0);
  for (unsigned set = 0; set < sets; ++set) {
    std::vector<std::string> notes;
    auto inputs = randomInputs(result, given, bind, rng, &notes);
    if (!inputs.ok()) return inputs.status();
    for (const auto &[name, t] : given) inputs->emplace(name, t);
    if (set == 0)
      for (const std::string &n : notes)
        llvm::errs() << "onnx-opt: note: --check-numerics: " << n << " (--bind-dim SYM=V)\n";
    auto a = evaluateModel(**original, *inputs);
    if (!a.ok())
      return absl::Status(a.status().code(), absl::StrCat("the input model does not run on the "
                                                          "reference evaluator: ",
                                                          a.status().message()));
    auto b = evaluateModel(result, *inputs);
    if (!b.ok())
      return absl::Status(b.status().code(), absl::StrCat("the result does not run on the "
                                                          "reference evaluator: ",
                                                          b.status().message()));
    // Every output of the original, tensors and sequences/optionals alike
    // (their elements), one at a time with its element type's tolerance.
    std::vector<std::pair<std::string, DataType>> names;
    for (auto &[name, t] : a->outputs) names.push_back({name, t.dataType()});
    for (auto &[name, v] : a->otherOutputs) names.push_back({name, valueElemType(v)});
    for (const auto &entry : names) {
      // (A named variable: a lambda may not capture a structured binding
      // before C++20.)
      const std::string &name = entry.first;
      DataType elem = entry.second;
      EvalResult ea, eb;
      auto take = [&](const EvalResult &from, EvalResult &to) {
        if (auto it = from.outputs.find(name); it != from.outputs.end())
          to.outputs.emplace(name, it->second);
        if (auto it = from.otherOutputs.find(name); it != from.otherOutputs.end())
          to.otherOutputs.emplace(name, it->second);
        if (from.nondeterministic.count(name)) to.nondeterministic.insert(name);
      };
      take(*a, ea);
      take(*b, eb);
      auto [rtol, atol] = numericTolerance(elem);
      // The original's values are the reference (compareOutputs measures
      // against its second result).
      auto diffs = compareOutputs(eb, ea, rtol, atol);
      if (!diffs.ok()) return diffs.status();
      for (const OutputDiff &d : *diffs) {
        if (d.ok) continue;
        std::string what =
            d.kind == OutputDiff::Kind::MissingInA       ? "is missing from the result"
            : d.kind == OutputDiff::Kind::TypeMismatch   ? "changed its element type or shape"
            : d.kind == OutputDiff::Kind::Strings        ? "holds other strings"
                                                         : absl::StrCat("differs: max abs ", d.maxAbs,
                                                                        ", max rel ", d.maxRel,
                                                                        " (rtol ", rtol, ", atol ",
                                                                        atol, ")");
        return absl::FailedPreconditionError(absl::StrCat(
            "output \"", name, "\" ", what, " on input set ", set + 1, " of ",
            sets, "; nothing written"));
      }
    }
  }
  return absl::OkStatus();
}

namespace {
// What the tool is doing, for the out-of-memory message.
const char *gStage = "starting";
// Whether an input file name is on the command line (else standard input).
bool gInputGiven = false;

int onnxOptMain(int argc, char **argv);
} // namespace

// Allocation failure anywhere ends in a message and exit 1; the stack is
// unwound first, so temporary output files are removed.
int main(int argc, char **argv) {
  try {
    return onnxOptMain(argc, argv);
  } catch (const std::bad_alloc &) {
    llvm::errs() << "onnx-opt: error: out of memory while " << gStage << "\n";
    llvm::errs().flush();
    return 1;
  }
}

namespace {

int onnxOptMain(int argc, char **argv) {
  registerAllPasses();
  registerTestPasses();
  PassList gPasses(cl::desc("Passes:"), cl::cat(gPassCat));
  // Pass options with a global flag become flags of their own
  // (--rename-mode=prefix ...); passes declare them (Pass.h).
  std::vector<std::unique_ptr<cl::opt<std::string>>> passOpts;
  std::map<std::string, cl::opt<std::string> *> passOptByFlag;
  // cl::opt keeps a StringRef to its description: the strings live here.
  std::deque<std::string> passOptDescs;
  for (const PassInfo *info : PassRegistry::instance().entries())
    for (const PassOptionInfo &o : info->options) {
      if (o.flag.empty() || passOptByFlag.count(o.flag)) continue;
      passOptDescs.push_back(info->argument + ": " + o.description + " (" + o.valueDescription +
                             "; default " + (o.defaultText.empty() ? "none" : o.defaultText) +
                             ")");
      passOpts.push_back(std::make_unique<cl::opt<std::string>>(
          llvm::StringRef(o.flag), cl::desc(passOptDescs.back()), cl::value_desc("value"),
          cl::ValueOptional,
          cl::cat(gPassOptCat)));
      passOptByFlag[o.flag] = passOpts.back().get();
    }
  timePassesOption(); // registered now (Note [Options libLLVM.so also has])
  bisectOption();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "onnx-opt (onnxir) " << ONNXIR_VERSION << "\nhighest ONNX IR version supported: "
       << kMaxIRVersion << "\n";
  });
  // -stats is LLVM Support's own flag: reuse it for our pass counters.
  if (auto *stats = cl::getRegisteredOptions().lookup("stats")) {
    stats->addCategory(gDebugCat);
    stats->setDescription("Print each pass's counters (summed over its runs)");
    stats->setHiddenFlag(cl::NotHidden);
  }
  cl::HideUnrelatedOptions({&gIOCat, &gPassCat, &gPassOptCat, &gDebugCat});
  checkUnknownOptions(argc, argv);
  recordChoices(gEmit);
  recordChoices(gInputFormat);
  recordChoices(gVerifyLevel);
  std::map<std::string, bool> passOptFlags;
  for (const PassInfo *info : PassRegistry::instance().entries())
    for (const PassOptionInfo &o : info->options)
      if (!o.flag.empty()) passOptFlags[o.flag] = o.valueDescription == "true or false";
  NormalizedArgs normalized = normalizeArgs(argc, argv, passOptFlags);
  gInputGiven = normalized.inputGiven;
  std::vector<const char *> args;
  for (const std::string &a : normalized.args) args.push_back(a.c_str());
  cl::ParseCommandLineOptions((int)args.size(), args.data(),
                              "onnx-opt: optimise ONNX models with onnxir\n\n"
                              "  onnx-opt [passes] INPUT -o OUTPUT\n"
                              "  onnx-opt [passes] INPUT OUTPUT\n\n"
                              "  Passes run in command-line order (onnx-opt -dce -topo ...),\n"
                              "  or as a textual pipeline with per-instance options\n"
                              "  (--pass-pipeline='dce,fold-constants{size-limit=1MiB},topo').\n"
                              "  Pass options are also flags of their own, --KEY=VALUE or\n"
                              "  --KEY VALUE (onnx-opt -rename --rename-mode sanitize ...);\n"
                              "  a bare boolean --KEY means true; --input-shape and\n"
                              "  --bind-dim repeat. '-' is standard input or output.\n");

  if (gListPasses) {
    for (const PassInfo *info : PassRegistry::instance().entries()) {
      if (isTestPass(*info)) continue;
      llvm::outs() << llvm::format("  -%-22s %s\n", info->argument.c_str(),
                                   info->description.c_str());
      if (!info->pipeline.empty()) llvm::outs() << "      = " << info->pipeline << "\n";
      for (const PassOptionInfo &o : info->options)
        llvm::outs() << llvm::format("      {%s=} %s (%s; default %s)%s\n", o.key.c_str(),
                                     o.description.c_str(), o.valueDescription.c_str(),
                                     o.defaultText.empty() ? "none" : o.defaultText.c_str(),
                                     o.flag.empty() ? "" : ("; --" + o.flag).c_str());
    }
    llvm::outs() << "Verification (flags, on load and after every pass with --verify-each):\n"
                    "  --verify=default         scopes, use lists, order; on load also unknown\n"
                    "                           default-domain ops, arity, required or mistyped\n"
                    "                           attributes (errors) and type constraints (warnings)\n"
                    "  --verify=structure       scopes, use lists, order only (schema: warnings)\n"
                    "  --verify=schema          also every node against its ONNX operator schema\n"
                    "  --strict                 load warnings (unknown ops, undeclared domains,\n"
                    "                           newer ir_version or opset, types) are errors\n";
    return 0;
  }

  // The pipeline: pass flags in command-line order, or --pass-pipeline.
  std::vector<std::unique_ptr<Pass>> pipeline;
  if (gPassPipeline.getNumOccurrences()) {
    if (gPasses.size())
      fail("give passes either as flags (-dce ...) or with --pass-pipeline, not both");
    auto p = parsePassPipeline(gPassPipeline);
    if (!p.ok()) fail("--pass-pipeline: " + std::string(p.status().message()));
    pipeline = std::move(*p);
  } else {
    for (unsigned i = 0; i < gPasses.size(); ++i) pipeline.push_back(gPasses[i]->factory());
  }
  // --precision=fp16|bf16 alone is convert-precision, run after the passes
  // given (the optimised model is converted).
  if (auto it = passOptByFlag.find("precision");
      it != passOptByFlag.end() && it->second->getNumOccurrences()) {
    bool present = false;
    for (auto &p : pipeline) present |= p->argument() == "convert-precision";
    if (!present)
      if (auto p = PassRegistry::instance().create("convert-precision"); p.ok())
        pipeline.push_back(std::move(*p));
  }
  // The policy (Note [Pipeline policy]): global pass options, the
  // conversion a --target-opset adds, the checks on load.
  PipelineOptions po;
  for (auto &[flag, opt] : passOptByFlag)
    if (opt->getNumOccurrences()) po.passOptions[flag] = opt->getValue();
  po.verify = gVerifyLevel == VerifyLevel::Structure ? VerifyPolicy::Structure
              : gVerifyLevel == VerifyLevel::Schema  ? VerifyPolicy::Schema
                                                     : VerifyPolicy::Default;
  po.strict = gStrict;
  po.name = gInput;
  // Model surgery flags (issue 42) are their pass when the pipeline lacks it:
  // --extract-inputs/--extract-outputs run extract, --rename-io/--retype-io
  // edit-io, before the passes given (the model is cut or renamed first).
  static const char *const kSurgeryFlags[][3] = {{"edit-io", "rename-io", "retype-io"},
                                                 {"extract", "extract-inputs", "extract-outputs"}};
  for (const auto &s : kSurgeryFlags) {
    bool given = po.passOptions.count(s[1]) || po.passOptions.count(s[2]), present = false;
    for (auto &p : pipeline) present |= p->argument() == s[0];
    if (given && !present)
      if (auto p = PassRegistry::instance().create(s[0]); p.ok())
        pipeline.insert(pipeline.begin(), std::move(*p));
  }
  {
    auto p = buildPipeline(std::move(pipeline), po);
    if (!p.ok()) fail(std::string(p.status().message()));
    pipeline = std::move(*p);
  }

  // Load.
  if (gInput.empty()) fail("the input file name is empty (use - for standard input)");
  if (gOutput.empty()) fail("-o: the output file name is empty (use - for standard output)");
  if (gCollapse.getNumOccurrences() && gEmit != EmitFormat::Dot && gEmit != EmitFormat::Mermaid &&
      gEmit != EmitFormat::Svg)
    fail("--collapse goes with --emit=dot, --emit=mermaid or --emit=svg");
  uint64_t externalThreshold =
      byteFlag("--external-data-threshold", gExternalThreshold.getValue());
  for (const std::string &lib : gOpLibrary)
    if (auto err = tools::registerOpLibraryFlag(lib)) fail(*err);
  gStage = "loading the model";
  auto loadStart = std::chrono::steady_clock::now();
  std::unique_ptr<Model> model;
  {
    LoadFileOptions lo;
    lo.format = gInputFormat;
    lo.allowExternalLinks = gAllowExternalLinks;
    // Standard input is read when no file is named, but a missing file name
    // is the likelier reason when there is nothing to read.
    const char *noInput = "no input model given: onnx-opt [passes] INPUT -o OUTPUT ('-' reads "
                          "standard input)";
    if (!gInputGiven && ::isatty(0)) fail(noInput);
    auto m = loadModelFile(gInput, lo);
    if (!m.ok() && !gInputGiven && endsWith(std::string(m.status().message()), "is empty"))
      fail(std::string(noInput) + "; standard input is empty");
    if (!m.ok()) fail(std::string(m.status().message()));
    model = std::move(*m);
  }

  double loadSeconds = secondsSince(loadStart);

  // Note [Numeric check]: the model as read, kept for the check.
  unsigned checkSets = 0;
  std::string originalBytes;
  LiftOptions checkLift;
  std::map<std::string, int64_t> checkBind;
  if (!gCheckInput.empty() && !gCheckNumerics.getNumOccurrences())
    fail("--check-input goes with --check-numerics");
  if (gCheckNumerics.getNumOccurrences()) {
    checkSets = 3;
    if (!gCheckNumerics.empty()) llvm::StringRef(gCheckNumerics).getAsInteger(10, checkSets);
    if (auto it = po.passOptions.find("bind-dim"); it != po.passOptions.end()) {
      auto b = parseBindDims(it->second);
      if (!b.ok()) fail("--bind-dim: " + std::string(b.status().message()));
      for (auto &[sym, v] : *b) checkBind[sym] = v;
    }
    auto bytes = lowerModel(*model);
    if (!bytes.ok()) fail("--check-numerics: " + std::string(bytes.status().message()));
    originalBytes = std::move(*bytes);
    if (gInput != "-") checkLift.baseDir = llvm::sys::path::parent_path(gInput).str();
    checkLift.sourceName = gInput;
    checkLift.allowExternalLinks = gAllowExternalLinks;
  }

  Summary before;
  if (gSummary) {
    before = summarize(*model);
    before.fileSize = fileSize(gInput);
  }

  // Check and run (runPipeline).
  PassManagerOptions &pmo = po.manager;
  pmo.verifyEach = gVerifyEach;
  pmo.timePasses = timePassesOption();
  pmo.printStatistics = llvm::AreStatisticsEnabled();
  pmo.printIRAfterAll = gPrintAfterAll;
  for (const std::string &p : gPrintAfter) {
    if (!PassRegistry::instance().lookup(p))
      fail("--print-ir-after: unknown pass '" + p + "' (see --list-passes)");
    pmo.printIRAfter.insert(p);
  }
  pmo.bisectLimit = bisectOption();
  // Warnings and remarks of the passes: prefixed and located like every
  // message of the tool, each distinct one once (not once per -O2 round).
  pmo.diagnosticHandler = [](const Pass &p, const PassDiagnostic &d) {
    llvm::errs() << "onnx-opt: "
                 << (d.severity == PassDiagnostic::Severity::Warning ? "warning: " : "remark: ")
                 << (gInput == "-" ? std::string("<stdin>") : gInput.getValue()) << ": "
                 << p.argument() << ": " << d.message << "\n";
  };
  po.warningHandler = [](const std::string &msg) {
    llvm::errs() << "onnx-opt: warning: " << msg << "\n";
  };
  // The dumps take the text flags of the output: with --print-lossless the
  // log, cut at its separator lines, reads back as the models, tensors
  // included.
  PrintOptions dumpOptions;
  if (gPrintLossless) dumpOptions.lossless = true;
  else if (gElideAbove.getNumOccurrences()) dumpOptions.elideElementsAbove = gElideAbove;
  po.printer = [dumpOptions](const Model &m, llvm::raw_ostream &os) {
    os << printModelText(m, dumpOptions);
  };
  gStage = "running the passes";
  auto r = runPipeline(*model, std::move(pipeline), po);
  if (!r.ok()) fail(std::string(r.status().message()));
  if (auto s = checkMappedFileReads(); !s.ok()) fail(std::string(s.message()));
  if (checkSets) {
    gStage = "checking the numbers";
    std::map<std::string, Tensor> checkGiven;
    for (const std::string &spec : gCheckInput) {
      auto t = checkInputTensor(*model, spec, checkBind);
      if (!t.ok()) fail("--check-input " + spec + ": " + std::string(t.status().message()));
      checkGiven[spec.substr(0, spec.find('='))] = std::move(*t);
    }
    if (auto s = checkNumerics(originalBytes, checkLift, *model, checkSets, checkBind, checkGiven);
        !s.ok())
      fail("--check-numerics: " + std::string(s.message()));
  }

  // Write.
  auto saveStart = std::chrono::steady_clock::now();
  gStage = isViewFormat(gEmit) ? "writing the view" : "saving the model";
  if (isViewFormat(gEmit)) writeView(*model, r->statistics);
  if (!isViewFormat(gEmit)) {
    SaveFileOptions so;
    so.format = gEmit == EmitFormat::Text     ? ModelFormat::Text
                : gEmit == EmitFormat::Binary ? ModelFormat::Binary
                                              : ModelFormat::Auto;
    so.externalDataFile = gExternalData;
    so.externalThreshold = externalThreshold;
    so.force = gForce;
    so.inputs.push_back(gInput);
    if (gPrintLossless) {
      PrintOptions po;
      po.lossless = true;
      so.text = po;
    } else if (gTextReadable || gElideAbove.getNumOccurrences()) {
      PrintOptions po;
      po.elideElementsAbove = gElideAbove;
      so.text = po;
    }
    if (auto s = saveModelFile(*model, gOutput, so); !s.ok()) fail(std::string(s.message()));
  }
  if (timePassesOption())
    printRunTimes(loadSeconds, *r, secondsSince(saveStart));
  if (gSummary) {
    Summary after = summarize(*model);
    after.fileSize = fileSize(gOutput);
    printSummary(before, after);
    printPatternSummary(r->statistics);
    // A note when initializers that are graph inputs blocked folding or
    // inference, naming the pass that frees them.
    if (std::string note = inputDefaultsNote(*model, r->statistics); !note.empty())
      llvm::errs() << "note: " << note << "\n";
  }
  // The output is written and the process ends here: the model is not taken
  // apart (unlinking and freeing a 10^6-node IR costs about a tenth of the
  // run). Sanitizer builds do take it apart, so that the teardown is checked.
#if !LLVM_ADDRESS_SANITIZER_BUILD
  (void)model.release();
#endif
  return 0;
}

} // namespace
