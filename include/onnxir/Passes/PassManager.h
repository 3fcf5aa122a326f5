//===- PassManager.h - Running pipelines of passes ------------------------===//
//
// Runs passes in order, verifying the IR after each (on by default) and
// naming the pass that broke it; times passes, collects statistics, prints
// the IR after chosen passes, and can stop after N passes to bisect a failure.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASSMANAGER_H
#define ONNXIR_PASSES_PASSMANAGER_H

#include "onnxir/Passes/Pass.h"

#include "absl/status/statusor.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace onnxir {

struct PassManagerOptions {
  bool verifyEach = true;
  bool timePasses = false;
  bool printStatistics = false;
  bool printIRAfterAll = false;
  std::set<std::string> printIRAfter;
  /// Run at most this many passes (-1: no limit); the rest are skipped and
  /// reported, to bisect a failing pipeline.
  int64_t bisectLimit = -1;
  /// Where timings, statistics, printed IR and bisect notes go.
  llvm::raw_ostream *log = &llvm::errs();
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(std::move(opts)) {}

  void addPass(std::unique_ptr<Pass> p) { passes_.push_back(Entry{std::move(p), false}); }
  /// Adds the standard -O1 pipeline: cleanup passes and constant folding,
  /// repeated until nothing changes (at most `maxIterations` times).
  void addO1Pipeline(unsigned maxIterations = 4);
  size_t size() const { return passes_.size(); }

  /// Runs the pipeline; true if any pass changed the model.
  absl::StatusOr<bool> run(Model &m);

  /// Prints the IR for -print-ir-after (the tool installs the text printer;
  /// Passes does not depend on Serialize).
  std::function<void(const Model &, llvm::raw_ostream &)> printer;

private:
  struct Entry {
    std::unique_ptr<Pass> pass;
    bool o1 = false;
  };
  absl::StatusOr<bool> runOne(Pass &p, Model &m);
  absl::StatusOr<bool> runO1(Model &m);
  PassManagerOptions opts_;
  std::vector<Entry> passes_;
  unsigned o1Iterations_ = 4;
  int64_t executed_ = 0;
};

} // namespace onnxir

#endif // ONNXIR_PASSES_PASSMANAGER_H
