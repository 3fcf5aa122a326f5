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
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace onnxir;
namespace cl = llvm::cl;

namespace {

// The -O1 pseudo-pass: the standard pipeline, in command-line order.
PassInfo gO1Info{"O1", "Standard pipeline (identity removal, DCE, constant folding, CSE, "
                       "initializer dedup) to a fixed point, then topo",
                 nullptr};

/// Parses pass names into registry entries (one literal option each).
struct PassNameParser : public cl::parser<const PassInfo *> {
  explicit PassNameParser(cl::Option &o) : cl::parser<const PassInfo *>(o) {}
  void initialize() {
    cl::parser<const PassInfo *>::initialize();
    for (const PassInfo *info : PassRegistry::instance().entries())
      addLiteralOption(info->argument, info, info->description);
    addLiteralOption(gO1Info.argument, &gO1Info, gO1Info.description);
  }
  void printOptionInfo(const cl::Option &o, size_t globalWidth) const {
    cl::parser<const PassInfo *>::printOptionInfo(o, globalWidth);
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
cl::opt<std::string> gEmit("emit", cl::desc("Output format: binary or text (default: by the "
                                             "output's extension, .onnxtxt is text)"),
                           cl::init(""), cl::cat(gIOCat));
cl::opt<std::string> gInputFormat("input-format",
                                  cl::desc("Input format: binary, text or auto (by extension)"),
                                  cl::init("auto"), cl::cat(gIOCat));
cl::opt<bool> gPrintLossless("print-lossless",
                             cl::desc("Text output: print every tensor and extension field"),
                             cl::cat(gIOCat));
cl::opt<std::string> gExternalData("external-data",
                                   cl::desc("Write tensors above the threshold to this file "
                                            "beside the output"),
                                   cl::value_desc("file"), cl::cat(gIOCat));
cl::opt<uint64_t> gExternalThreshold("external-data-threshold",
                                     cl::desc("Bytes above which --external-data moves a "
                                              "tensor (default 1024)"),
                                     cl::init(1024), cl::cat(gIOCat));
cl::opt<bool> gSummary("summary",
                       cl::desc("Print a before/after table of op counts, initializers and "
                                "file size to stderr"),
                       cl::cat(gIOCat));

// Created in main, after registerAllPasses(): its parser lists the registry.
using PassList = cl::list<const PassInfo *, bool, PassNameParser>;

cl::opt<bool> gVerifyEach("verify-each", cl::desc("Verify the IR after every pass (default on)"),
                          cl::init(true), cl::cat(gDebugCat));
cl::opt<bool> gTimePasses("time-passes", cl::desc("Time each pass"), cl::cat(gDebugCat));
cl::list<std::string> gPrintAfter("print-ir-after",
                                  cl::desc("Print the IR (text) after the named passes"),
                                  cl::CommaSeparated, cl::cat(gDebugCat));
cl::opt<bool> gPrintAfterAll("print-ir-after-all", cl::desc("Print the IR after every pass"),
                             cl::cat(gDebugCat));
cl::opt<int64_t> gBisect("opt-bisect-limit",
                         cl::desc("Run only the first N passes (to find the one that breaks a "
                                  "model)"),
                         cl::init(-1), cl::cat(gDebugCat));
cl::opt<bool> gListPasses("list-passes", cl::desc("List the passes and exit"), cl::cat(gDebugCat));

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnx-opt: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(1);
}

bool endsWith(const std::string &s, const char *suffix) {
  return llvm::StringRef(s).endswith(suffix);
}

bool isTextPath(const std::string &p) { return endsWith(p, ".onnxtxt") || endsWith(p, ".onnxt"); }

std::string readAll(const std::string &path) {
  if (path == "-")
    return std::string((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot open: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

void writeTextAtomically(const std::string &path, const std::string &text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) fail("<stdout>: write failed");
    return;
  }
  std::string dir = ".";
  size_t slash = path.rfind('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = dir + "/.onnx-opt.tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  const char *p = text.data();
  size_t n = text.size();
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(path + ": write failed: " + std::strerror(errno));
    }
    p += w;
    n -= (size_t)w;
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    fail(path + ": cannot write: " + std::strerror(errno));
  }
}

} // namespace

// -time-passes: the phases around the pipeline, so the report shows the
// whole run (load, verification, passes, save).
static double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static void printRunTimes(double load, double verifyInput, const PassManager &pm, double save) {
  double passes = pm.passSeconds(), verify = verifyInput + pm.verifySeconds();
  double total = load + verify + passes + save;
  auto line = [&](double s, const std::string &what) {
    llvm::errs() << llvm::format("  %10.4f  %5.1f%%  ", s, total > 0 ? 100.0 * s / total : 0.0)
                 << what << "\n";
  };
  llvm::errs() << "===--- Whole run timing report ---===\n     seconds       %  phase\n";
  line(load, "load (read and lift)");
  line(verify, "verification (" + std::to_string(pm.verifyRuns() + 1) + " runs)");
  line(passes, "passes");
  line(save, "save (lower and write)");
  line(total, "total");
}

int main(int argc, char **argv) {
  registerAllPasses();
  registerTestPasses();
  PassList gPasses(cl::desc("Passes:"), cl::cat(gPassCat));
  // Pass options become flags of their own (--rename-mode=prefix ...).
  std::vector<std::unique_ptr<cl::opt<std::string>>> passOpts;
  std::map<std::string, cl::opt<std::string> *> passOptByKey;
  for (const PassInfo *info : PassRegistry::instance().entries())
    for (const PassOptionInfo &o : info->options) {
      if (passOptByKey.count(o.key)) continue;
      passOpts.push_back(std::make_unique<cl::opt<std::string>>(
          llvm::StringRef(o.key), cl::desc(o.description), cl::value_desc("value"),
          cl::ValueOptional, cl::cat(gPassOptCat)));
      passOptByKey[o.key] = passOpts.back().get();
    }
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
  cl::ParseCommandLineOptions(argc, argv,
                              "onnx-opt: optimise ONNX models with onnxir\n\n"
                              "  onnx-opt [passes] INPUT -o OUTPUT\n\n"
                              "  Passes run in command-line order (onnx-opt -dce -topo ...).\n"
                              "  Pass options are flags of their own, --KEY=VALUE\n"
                              "  (onnx-opt -rename --rename-mode=sanitize ...); a bare\n"
                              "  --KEY means true. '-' is standard input or output.\n");

  if (gListPasses) {
    for (const PassInfo *info : PassRegistry::instance().entries()) {
      llvm::outs() << llvm::format("  -%-22s %s\n", info->argument.c_str(),
                                   info->description.c_str());
      for (const PassOptionInfo &o : info->options)
        llvm::outs() << llvm::format("      --%-20s %s\n", o.key.c_str(), o.description.c_str());
    }
    llvm::outs() << llvm::format("  -%-22s %s\n", gO1Info.argument.c_str(),
                                 gO1Info.description.c_str());
    return 0;
  }

  // Load.
  bool textIn = gInputFormat == "text" || (gInputFormat == "auto" && isTextPath(gInput));
  if (gInputFormat != "auto" && gInputFormat != "text" && gInputFormat != "binary")
    fail("--input-format must be binary, text or auto, not '" + gInputFormat + "'");
  std::unique_ptr<Model> model;
  auto loadStart = std::chrono::steady_clock::now();
  if (textIn) {
    std::string text = readAll(gInput);
    // External data is resolved beside the input file, as for binary input.
    std::string baseDir;
    if (gInput != "-") {
      baseDir = llvm::sys::path::parent_path(gInput).str();
      if (baseDir.empty()) baseDir = ".";
    }
    auto m = parseModelText(text, gInput == "-" ? std::string("<stdin>") : std::string(gInput),
                            baseDir);
    if (!m.ok()) fail(std::string(m.status().message()));
    model = std::move(*m);
  } else {
    auto m = loadModel(gInput);
    if (!m.ok()) fail(std::string(m.status().message()));
    model = std::move(*m);
  }

  double loadSeconds = secondsSince(loadStart);
  auto verifyStart = std::chrono::steady_clock::now();
  std::set<int> inputProblemKinds; // handed to the pass manager (no second check)
  // A model that does not verify is refused, except for what passes repair:
  // order violations (-topo) and, when -rename runs, shadowing.
  {
    bool renames = false;
    for (unsigned i = 0; i < gPasses.size(); ++i) renames |= gPasses[i]->argument == "rename";
    std::string errors;
    for (const Diagnostic &d : verifyAll(*model)) {
      inputProblemKinds.insert((int)d.kind);
      if (d.kind == Diagnostic::Kind::OrderViolation) continue;
      if (d.kind == Diagnostic::Kind::Shadowing && renames) {
        llvm::errs() << "onnx-opt: warning: " << d.message << " (-rename repairs it)\n";
        continue;
      }
      errors += "\n  " + d.message + " [" + diagnosticKindName(d.kind) + "]";
    }
    if (!errors.empty())
      fail(gInput + ": the model is invalid:" + errors +
           (errors.find("[shadowing]") != std::string::npos
                ? "\n(-rename repairs shadowing: onnx-opt -rename --rename-mode=sanitize ...)"
                : ""));
  }

  double verifyInputSeconds = secondsSince(verifyStart);

  Summary before;
  if (gSummary) {
    before = summarize(*model);
    before.fileSize = fileSize(gInput);
  }

  // Build and run the pipeline.
  PassManagerOptions pmo;
  pmo.verifyEach = gVerifyEach;
  pmo.inputProblemKinds = inputProblemKinds;
  pmo.timePasses = gTimePasses;
  pmo.printStatistics = llvm::AreStatisticsEnabled();
  pmo.printIRAfterAll = gPrintAfterAll;
  for (const std::string &p : gPrintAfter) {
    if (!PassRegistry::instance().lookup(p))
      fail("--print-ir-after: unknown pass '" + p + "' (see --list-passes)");
    pmo.printIRAfter.insert(p);
  }
  pmo.bisectLimit = gBisect;
  // Which passes run, to check that every pass option given is used.
  std::set<std::string> running;
  for (unsigned i = 0; i < gPasses.size(); ++i) {
    if (gPasses[i] != &gO1Info) running.insert(gPasses[i]->argument);
    else
      for (const std::string &a : PassManager::o1Pipeline()) running.insert(a);
  }
  for (auto &[key, opt] : passOptByKey) {
    if (!opt->getNumOccurrences()) continue;
    bool used = false;
    for (const std::string &a : running)
      if (const PassInfo *info = PassRegistry::instance().lookup(a))
        for (const PassOptionInfo &o : info->options) used |= o.key == key;
    if (!used) fail("--" + key + " is given but no pass that takes it runs");
    pmo.passOptions[key] = opt->getValue();
  }
  PassManager pm(pmo);
  pm.printer = [](const Model &m, llvm::raw_ostream &os) { os << printModelText(m); };
  for (unsigned i = 0; i < gPasses.size(); ++i) {
    const PassInfo *info = gPasses[i];
    if (info == &gO1Info) {
      pm.addO1Pipeline();
      continue;
    }
    std::unique_ptr<Pass> p = info->factory();
    for (const PassOptionInfo &o : info->options) {
      auto it = pmo.passOptions.find(o.key);
      if (it != pmo.passOptions.end())
        if (auto s = p->setOption(o.key, it->second); !s.ok()) fail(std::string(s.message()));
    }
    pm.addPass(std::move(p));
  }
  auto r = pm.run(*model);
  if (!r.ok()) fail(gInput + ": " + std::string(r.status().message()));

  // Write.
  auto saveStart = std::chrono::steady_clock::now();
  bool textOut = gEmit == "text" || (gEmit.empty() && isTextPath(gOutput));
  if (!gEmit.empty() && gEmit != "text" && gEmit != "binary")
    fail("--emit must be binary or text, not '" + gEmit + "'");
  if (textOut) {
    PrintOptions po;
    po.lossless = gPrintLossless;
    writeTextAtomically(gOutput, printModelText(*model, po));
  } else {
    LowerOptions lo;
    lo.externalDataFile = gExternalData;
    lo.externalThreshold = gExternalThreshold;
    if (auto s = saveModel(*model, gOutput, lo); !s.ok()) fail(std::string(s.message()));
  }
  if (gTimePasses) printRunTimes(loadSeconds, verifyInputSeconds, pm, secondsSince(saveStart));
  if (gSummary) {
    Summary after = summarize(*model);
    after.fileSize = fileSize(gOutput);
    printSummary(before, after);
  }
  return 0;
}
