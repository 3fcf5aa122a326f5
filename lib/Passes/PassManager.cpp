//===- PassManager.cpp - Running pipelines of passes ----------------------===//
//
// Runs passes, verifies after each one (Note [Verification after a pass] in
// the header), prints the IR and bisect notes as it goes, and a timing and
// statistics report at the end.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/PassManager.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/Format.h"

#include <chrono>

namespace onnxir {

absl::Status PassManager::addPipeline(llvm::StringRef text) {
  auto passes = parsePassPipeline(text);
  if (!passes.ok()) return passes.status();
  for (auto &p : *passes) addPass(std::move(p));
  return absl::OkStatus();
}

void PassManager::addStats(Pass &p) {
  for (auto &[name, v] : p.statistics()) {
    std::string key = absl::StrCat(p.argument().str(), ": ", name);
    bool found = false;
    for (auto &[k, sum] : stats_)
      if (k == key) {
        sum += v;
        found = true;
      }
    if (!found) stats_.emplace_back(key, v);
  }
}

void PassManager::forwardDiagnostics(Pass &p) {
  for (PassDiagnostic &d : p.takeDiagnostics()) {
    if (!reported_.insert({p.argument().str(), d}).second) continue;
    if (opts_.diagnosticHandler) {
      opts_.diagnosticHandler(p, d);
      continue;
    }
    *opts_.log << (d.severity == PassDiagnostic::Severity::Warning ? "warning: " : "remark: ")
               << p.argument() << ": " << d.message << "\n";
  }
}

absl::StatusOr<bool> PassManager::runOne(Pass &p, Model &m) {
  llvm::raw_ostream &log = *opts_.log;
  p.resetStatistics();
  if (CompositePass *c = p.asComposite()) {
    auto r = c->run(m, [&](Pass &child) { return runOne(child, m); }, &log);
    forwardDiagnostics(p);
    if (!r.ok()) return r;
    addStats(p);
    return r;
  }
  ++executed_;
  if (opts_.bisectLimit >= 0) {
    bool run = executed_ <= opts_.bisectLimit;
    log << "BISECT: " << (run ? "running" : "NOT running") << " pass (" << executed_ << ") "
        << p.argument() << "\n";
    if (!run) return false;
  }
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<bool> r = p.run(m);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  forwardDiagnostics(p);
  if (!r.ok())
    return absl::Status(r.status().code(), absl::StrCat("pass '", p.argument().str(),
                                                        "' failed: ", r.status().message()));
  timings_.push_back({p.argument().str(), secs, *r});
  addStats(p);
  // A pass that reports no change left the IR as it was verified before it
  // (the contract of Pass::run): verifying again would find the same. An
  // -O1 fixed-point iteration is mostly such passes.
  if (opts_.verifyEach && *r) {
    std::string problems;
    std::set<int> now;
    unsigned shown = 0;
    for (const Diagnostic &d : timedVerify(m)) {
      now.insert((int)d.kind);
      if (tolerated_.count((int)d.kind) || ++shown > 20) continue;
      absl::StrAppend(&problems, "\n  ", d.message, " [", diagnosticKindName(d.kind), "]");
    }
    if (!problems.empty()) {
      if (printer) {
        log << "# ----- IR after failing pass " << printPassInstance(p) << " -----\n";
        printer(m, log);
      }
      return absl::InternalError(absl::StrCat("pass '", p.argument().str(),
                                              "' left the IR invalid:", problems));
    }
    tolerated_ = std::move(now); // only shrinks: the rest were refused above
  }
  if (*r && (opts_.printIRAfterAll || opts_.printIRAfter.count(p.argument().str()))) {
    log << "# ----- IR after " << printPassInstance(p) << " (pass " << executed_ << ") -----\n";
    if (printer) printer(m, log);
  }
  return *r;
}

std::vector<Diagnostic> PassManager::timedVerify(const Model &m) {
  auto t0 = std::chrono::steady_clock::now();
  VerifyOptions structural = opts_.verify;
  structural.schema = false;
  std::vector<Diagnostic> d = verifyAll(m, structural);
  if (opts_.verify.schema) {
    std::vector<Diagnostic> s = verifySchemaAll(m, opts_.verify);
    d.insert(d.end(), s.begin(), s.end());
  }
  verifySeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++verifyRuns_;
  return d;
}

double PassManager::passSeconds() const {
  double total = 0;
  for (const Execution &e : timings_) total += e.seconds;
  return total;
}

void PassManager::report() {
  llvm::raw_ostream &log = *opts_.log;
  if (opts_.timePasses && !timings_.empty()) {
    double total = 0;
    for (const Execution &e : timings_) total += e.seconds;
    log << "===--- Pass execution timing report ---===\n";
    log << "     seconds       %  pass\n";
    for (const Execution &e : timings_)
      log << llvm::format("  %10.4f  %5.1f%%  ", e.seconds,
                          total > 0 ? 100.0 * e.seconds / total : 0.0)
          << e.argument << (e.changed ? "" : "  (no change)") << "\n";
    log << llvm::format("  %10.4f  100.0%%  total\n", total);
    log << llvm::format("  %10.4f  %5.1f%%  verification (%u %s, not in the total)\n",
                        verifySeconds_, total > 0 ? 100.0 * verifySeconds_ / total : 0.0,
                        verifyRuns_, verifyRuns_ == 1 ? "run" : "runs");
  }
  if (opts_.printStatistics && !stats_.empty()) {
    log << "===--- Statistics (non-zero counters) ---===\n";
    bool any = false;
    for (auto &[k, v] : stats_)
      if (v) {
        log << "  " << k << " = " << v << "\n";
        any = true;
      }
    if (!any) log << "  (every counter is zero)\n";
  }
}

absl::StatusOr<bool> PassManager::run(Model &m) {
  tolerated_.clear();
  timings_.clear();
  stats_.clear();
  reported_.clear();
  verifySeconds_ = 0;
  verifyRuns_ = 0;
  // The kinds of problem the input has are tolerated (Note [Verification
  // after a pass]); with verifyEach off they are still needed for the one
  // verification at the end.
  if (opts_.inputProblemKinds) tolerated_ = *opts_.inputProblemKinds;
  else if (!passes_.empty())
    for (const Diagnostic &d : timedVerify(m)) tolerated_.insert((int)d.kind);
  bool changed = false;
  absl::Status err = absl::OkStatus();
  for (auto &p : passes_) {
    auto r = runOne(*p, m);
    if (!r.ok()) {
      err = r.status();
      break;
    }
    changed |= *r;
  }
  // Without verifyEach the IR is still verified once, at the end: a pipeline
  // never hands on (to be saved) an IR that a pass broke.
  if (err.ok() && !opts_.verifyEach && !passes_.empty()) {
    std::string problems;
    unsigned shown = 0;
    for (const Diagnostic &d : timedVerify(m))
      if (!tolerated_.count((int)d.kind) && ++shown <= 20)
        absl::StrAppend(&problems, "\n  ", d.message, " [", diagnosticKindName(d.kind), "]");
    if (!problems.empty())
      err = absl::InternalError(absl::StrCat(
          "the passes left the IR invalid (verified once at the end; --verify-each names the "
          "pass):",
          problems));
  }
  report();
  if (!err.ok()) return err;
  return changed;
}

} // namespace onnxir
