//===- PassManager.h - Running pipelines of passes ------------------------===//
//
// Runs passes in order, verifying the IR after each (on by default) and
// naming the pass that broke it; times passes, collects statistics, prints
// the IR after chosen passes, and can stop after N passes to bisect a failure.
//
//   registerAllPasses();
//   PassManager pm;
//   pm.addPass(createDeadCodeEliminationPass());
//   pm.addPipeline("O1,fold-constants{size-limit=1MiB}");
//   absl::StatusOr<bool> changed = pm.run(model);
//
// A composite pass (-O1, -O2) is run child by child: each child is verified,
// timed, counted, printed and bisected as a pass of its own.
//
// Note [Verification after a pass]
// A pass is blamed only for problems it introduced. Before the first pass the
// manager records which kinds of problems the input already has (real files
// are unsorted, which -topo repairs; some shadow outer names, which -rename
// repairs); those kinds are tolerated until a pass leaves the IR without
// them. Any other problem after a pass is an Internal error that names the
// pass and lists the problems. A pass that reports no change is not verified
// again (Pass::run's contract: the IR is the one verified before it). With
// verifyEach off, the IR is verified once, after the last pass.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASSMANAGER_H
#define ONNXIR_PASSES_PASSMANAGER_H

#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

struct PassManagerOptions {
  /// Verify the IR after every pass (see Note [Verification after a pass]).
  bool verifyEach = true;
  /// What verifyEach checks (schema = true adds the operator schema checks).
  VerifyOptions verify;
  /// Print a timing report (one line per pass execution, and a total).
  bool timePasses = false;
  /// Print every pass's counters, summed over its executions.
  bool printStatistics = false;
  /// Print the IR after every pass that changed it, or after the passes
  /// named here when they changed it (-print-ir-after-change semantics).
  /// Each print is preceded by a separator line that is a comment of the
  /// text syntax, so the log reads back as models.
  bool printIRAfterAll = false;
  std::set<std::string> printIRAfter;
  /// Run at most this many passes (-1: no limit); the rest are skipped and
  /// reported, to bisect a failing pipeline.
  int64_t bisectLimit = -1;
  /// The Diagnostic::Kind values of the problems the input has, when the
  /// caller has verified it already (onnx-opt does, to refuse bad input):
  /// run() then does not verify the input a second time.
  std::optional<std::set<int>> inputProblemKinds;
  /// Where timings, statistics, printed IR and bisect notes go.
  llvm::raw_ostream *log = &llvm::errs();
  /// Receives the warnings and remarks of the passes (PassDiagnostic), each
  /// distinct one (severity, pass, message) once per run(), however many
  /// -O1/-O2 rounds repeat it. Unset: `warning: PASS: message` on `log`.
  std::function<void(const Pass &, const PassDiagnostic &)> diagnosticHandler;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(std::move(opts)) {}

  /// Appends a pass; passes run in the order they were added.
  void addPass(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  /// Appends the passes of a textual pipeline (PassPipeline.h).
  absl::Status addPipeline(llvm::StringRef text);
  size_t size() const { return passes_.size(); }
  /// The passes added, in order.
  llvm::ArrayRef<std::unique_ptr<Pass>> passes() const { return passes_; }

  /// Runs the pipeline; true if any pass changed the model. A failing pass
  /// gives its error prefixed with `pass 'ARG' failed: `; a pass that leaves
  /// the IR invalid gives an Internal error naming it.
  absl::StatusOr<bool> run(Model &m);

  /// Every pass's counters of the last run(), summed, as "pass: counter".
  const PassStatistics &statistics() const { return stats_; }

  /// After run(): seconds spent in the passes themselves, and in verifying
  /// the IR (before the first pass, after each pass, or once at the end with
  /// verifyEach off), with the number of verifications.
  double passSeconds() const;
  double verifySeconds() const { return verifySeconds_; }
  unsigned verifyRuns() const { return verifyRuns_; }

  /// Prints the IR for -print-ir-after (the tool installs the text printer;
  /// Passes does not depend on Serialize).
  std::function<void(const Model &, llvm::raw_ostream &)> printer;

private:
  struct Execution {
    std::string argument;
    double seconds;
    bool changed;
  };
  absl::StatusOr<bool> runOne(Pass &p, Model &m);
  void addStats(Pass &p);
  void forwardDiagnostics(Pass &p);
  std::vector<Diagnostic> timedVerify(const Model &m);
  void report();

  PassManagerOptions opts_;
  std::vector<std::unique_ptr<Pass>> passes_;
  int64_t executed_ = 0;
  std::set<int> tolerated_; // Diagnostic::Kind values present before
  std::vector<Execution> timings_;
  double verifySeconds_ = 0;
  unsigned verifyRuns_ = 0;
  PassStatistics stats_; // "pass: counter" -> sum
  std::set<std::pair<std::string, PassDiagnostic>> reported_; // (pass, diagnostic)
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PASSMANAGER_H
