//===- PassManager.cpp ----------------------------------------------------===//
#include "onnxir/Passes/PassManager.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <set>

namespace onnxir {

namespace {
bool isOrderKind(Diagnostic::Kind k) {
  return k == Diagnostic::Kind::OrderViolation || k == Diagnostic::Kind::Cycle;
}
} // namespace

void PassManager::addO1Pipeline(unsigned maxIterations) {
  o1Iterations_ = maxIterations;
  passes_.push_back(Entry{nullptr, true});
}

absl::StatusOr<bool> PassManager::runOne(Pass &p, Model &m) {
  llvm::raw_ostream &log = *opts_.log;
  if (opts_.bisectLimit >= 0 && executed_ >= opts_.bisectLimit) {
    log << "BISECT: NOT running pass (" << (executed_ + 1) << ") " << p.argument() << "\n";
    ++executed_;
    return false;
  }
  if (opts_.bisectLimit >= 0)
    log << "BISECT: running pass (" << (executed_ + 1) << ") " << p.argument() << "\n";
  ++executed_;
  // Problems of a kind present before the pass are not the pass's fault
  // (real files are unsorted, which -topo repairs; shadowing, which -rename
  // repairs).
  std::set<Diagnostic::Kind> before;
  if (opts_.verifyEach)
    for (const Diagnostic &d : verifyAll(m)) before.insert(d.kind);
  bool unsortedBefore = false;
  for (Diagnostic::Kind k : before) unsortedBefore |= isOrderKind(k);
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<bool> r = p.run(m);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok())
    return absl::Status(r.status().code(),
                        absl::StrCat("pass '", p.argument().str(), "' failed: ", r.status().message()));
  if (opts_.timePasses)
    log << llvm::format("  %10.4f s  ", secs) << p.argument() << (*r ? "" : "  (no change)") << "\n";
  if (opts_.printStatistics)
    for (auto &[name, v] : p.statistics())
      log << "  " << p.argument() << ": " << name << " = " << v << "\n";
  if (opts_.verifyEach) {
    std::string problems;
    for (const Diagnostic &d : verifyAll(m)) {
      if ((unsortedBefore && isOrderKind(d.kind)) || before.count(d.kind)) continue;
      absl::StrAppend(&problems, "\n  ", d.message, " [", diagnosticKindName(d.kind), "]");
    }
    if (!problems.empty())
      return absl::InternalError(absl::StrCat("the IR is invalid after pass '",
                                              p.argument().str(), "':", problems));
  }
  if (opts_.printIRAfterAll || opts_.printIRAfter.count(p.argument().str())) {
    log << "// ----- IR after " << p.argument() << " -----\n";
    if (printer) printer(m, log);
  }
  return *r;
}

absl::StatusOr<bool> PassManager::runO1(Model &m) {
  static const char *kPipeline[] = {"eliminate-identity", "dce", "fold-constants", "cse",
                                     "dedup-initializers", "dce"};
  bool changedAny = false;
  for (unsigned it = 0; it < o1Iterations_; ++it) {
    bool changed = false;
    for (const char *arg : kPipeline) {
      const PassInfo *info = PassRegistry::instance().lookup(arg);
      if (!info) continue;
      std::unique_ptr<Pass> p = info->factory();
      auto r = runOne(*p, m);
      if (!r.ok()) return r;
      changed |= *r;
    }
    changedAny |= changed;
    if (!changed) break;
  }
  if (const PassInfo *topo = PassRegistry::instance().lookup("topo")) {
    std::unique_ptr<Pass> p = topo->factory();
    auto r = runOne(*p, m);
    if (!r.ok()) return r;
    changedAny |= *r;
  }
  return changedAny;
}

absl::StatusOr<bool> PassManager::run(Model &m) {
  bool changed = false;
  for (Entry &e : passes_) {
    auto r = e.o1 ? runO1(m) : runOne(*e.pass, m);
    if (!r.ok()) return r;
    changed |= *r;
  }
  return changed;
}

} // namespace onnxir
