//===- PipelineOptions.cpp - One pipeline policy for every front end ------===//
//
// Note [Pipeline policy] in the header: the global options, the conversion a
// target opset adds, the checks on load and the problems tolerated after.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/PipelineOptions.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"

#include <chrono>
#include <set>

namespace onnxir {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// `p` and, for a composite, its children, in the order they run.
void forEachPass(Pass &p, const std::function<void(Pass &)> &f) {
  f(p);
  if (CompositePass *c = p.asComposite())
    for (Pass *child : c->children()) forEachPass(*child, f);
}

/// Whether `p` declares global option `flag`.
bool declaresFlag(const Pass &p, llvm::StringRef flag) {
  for (const PassOptionBase *o : p.options())
    if (o->flag() == flag) return true;
  return false;
}

/// Whether `p` set the option of global flag `flag` itself.
bool setsFlagItself(const Pass &p, llvm::StringRef flag) {
  for (const PassOptionBase *o : p.options())
    if (o->flag() == flag) return o->isExplicit();
  return false;
}

std::string nearest(llvm::StringRef word, const std::vector<std::string> &candidates) {
  std::string best;
  unsigned bestDistance = ~0u;
  for (const std::string &c : candidates) {
    unsigned d = word.edit_distance(c, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  if (best.empty() || bestDistance > std::max<size_t>(1, word.size() / 3)) return "";
  return best;
}

std::string located(const PipelineOptions &o, llvm::StringRef msg) {
  return o.name.empty() ? msg.str() : absl::StrCat(o.name, ": ", msg.str());
}

} // namespace

std::string suggestPassOption(llvm::StringRef flag) {
  std::set<std::string> flags;
  for (const PassInfo *info : PassRegistry::instance().entries())
    for (const PassOptionInfo &o : info->options)
      if (!o.flag.empty()) flags.insert(o.flag);
  return nearest(flag, {flags.begin(), flags.end()});
}

std::string suggestPass(llvm::StringRef argument) {
  std::vector<std::string> names;
  for (const PassInfo *info : PassRegistry::instance().entries())
    if (!startsWith(info->argument, "test-")) names.push_back(info->argument);
  return nearest(argument, names);
}

std::string passesTakingOption(llvm::StringRef flag) {
  // A composite takes what one of its children takes (-O1 and
  // fold-constants' options).
  std::string out;
  for (const PassInfo *info : PassRegistry::instance().entries()) {
    if (startsWith(info->argument, "test-")) continue;
    bool takes = false;
    if (!info->pipeline.empty()) {
      std::unique_ptr<Pass> p = info->factory();
      forEachPass(*p, [&](Pass &q) { takes |= declaresFlag(q, flag); });
    } else {
      for (const PassOptionInfo &o : info->options) takes |= o.flag == flag;
    }
    if (takes) absl::StrAppend(&out, out.empty() ? "" : ", ", info->argument);
  }
  return out;
}

absl::StatusOr<std::vector<std::unique_ptr<Pass>>>
buildPipeline(std::vector<std::unique_ptr<Pass>> pipeline, const PipelineOptions &o) {
  // The opset policy (issue 28): with a target opset, -O1 and -O2 work on the
  // model converted to it, so that the fusions of that opset apply
  // (`--target-opset=23 -O2` on an opset-14 export fuses); a convert-opset
  // goes before the first of them unless the pipeline converts already.
  // Alone, the target opset is the conversion.
  // The conversion added is preceded by inference in memory (outputs-only,
  // as -O1/-O2 run it): adapters need the element types and ranks that
  // exports leave undeclared (a LayerNormalization expanded below opset 17
  // casts to X's element type).
  if (o.passOptions.count("target-opset")) {
    auto convert = [] {
      std::vector<std::unique_ptr<Pass>> steps;
      if (auto p = parsePassPipeline("infer-shapes{outputs-only},convert-opset"); p.ok())
        steps = std::move(*p);
      return steps;
    };
    size_t at = pipeline.size();
    for (size_t i = 0; i < pipeline.size(); ++i) {
      llvm::StringRef a = pipeline[i]->argument();
      if (a == "convert-opset") break;
      if (a != "O1" && a != "O2") continue;
      at = i;
      break;
    }
    if (pipeline.empty()) at = 0;
    if (at < pipeline.size() || pipeline.empty()) {
      std::vector<std::unique_ptr<Pass>> steps = convert();
      pipeline.insert(pipeline.begin() + at, std::make_move_iterator(steps.begin()),
                      std::make_move_iterator(steps.end()));
    }
  }
  // Global options reach every instance that declares them (children of -O1
  // too); bind-dim the first infer-shapes only (Note [Pipeline policy], 1).
  std::map<std::string, std::string> flags = o.passOptions;
  std::map<std::string, std::string> onceFlags;
  if (auto it = flags.find("bind-dim"); it != flags.end()) {
    onceFlags.insert(*it);
    flags.erase(it);
  }
  std::set<std::string> used;
  for (auto &p : pipeline)
    if (absl::Status s = p->applyFlags(flags, &used); !s.ok()) return s;
  for (auto &[flag, value] : onceFlags) {
    Pass *first = nullptr;
    for (auto &p : pipeline)
      forEachPass(*p, [&, &flag = flag](Pass &q) {
        if (q.asComposite() || !declaresFlag(q, flag)) return;
        used.insert(flag);
        if (!first && !setsFlagItself(q, flag)) first = &q;
      });
    if (first)
      if (absl::Status s = first->applyFlags({{flag, value}}); !s.ok()) return s;
  }
  for (auto &[flag, v] : o.passOptions) {
    if (used.count(flag)) continue;
    std::string takers = passesTakingOption(flag);
    return absl::InvalidArgumentError(absl::StrCat(
        o.spelling.option(flag), " is given but no pass that takes it runs",
        takers.empty() ? "" : absl::StrCat(" (passes that take it: ", takers, ")")));
  }
  return pipeline;
}

absl::StatusOr<std::vector<std::unique_ptr<Pass>>> buildPipeline(llvm::StringRef text,
                                                                 const PipelineOptions &o) {
  auto passes = parsePassPipeline(text);
  if (!passes.ok()) return passes.status();
  return buildPipeline(std::move(*passes), o);
}

absl::StatusOr<PipelineRun> runPipeline(Model &m, std::vector<std::unique_ptr<Pass>> passes,
                                        const PipelineOptions &o) {
  PipelineRun run;
  auto warn = [&](const std::string &msg) {
    if (o.warningHandler) o.warningHandler(msg);
    else *o.manager.log << "warning: " << msg << "\n";
  };
  PassManagerOptions pmo = o.manager;
  pmo.verify.schema = o.verify == VerifyPolicy::Schema;
  if (o.checkInput) {
    // A model that does not verify is refused, except for what passes
    // repair: order violations (-topo) and, when -rename runs, shadowing.
    auto t0 = std::chrono::steady_clock::now();
    bool renames = false;
    for (auto &p : passes) forEachPass(*p, [&](Pass &q) { renames |= q.argument() == "rename"; });
    std::set<int> kinds; // handed to the pass manager (no second check)
    std::string errors;
    for (const Diagnostic &d : verifyAll(m)) {
      kinds.insert((int)d.kind);
      if (d.kind == Diagnostic::Kind::OrderViolation) continue;
      if (d.kind == Diagnostic::Kind::Shadowing && renames) {
        warn(d.message + " (-rename repairs it)");
        continue;
      }
      absl::StrAppend(&errors, "\n  ", d.message, " [", diagnosticKindName(d.kind), "]");
    }
    if (!errors.empty())
      return absl::InvalidArgumentError(
          located(o, absl::StrCat("the model is invalid:", errors,
                                  errors.find("[shadowing]") != std::string::npos
                                      ? absl::StrCat("\n(-rename repairs shadowing: ",
                                                     o.spelling.repairShadowing, ")")
                                      : "")));
    pmo.inputProblemKinds = kinds;
    run.inputVerifySeconds = secondsSince(t0);

    // The operator schema check: by default the severe schema problems are
    // errors, whatever the passes would do; type constraints are warnings.
    t0 = std::chrono::steady_clock::now();
    SchemaCheckLevel level = o.verify == VerifyPolicy::Structure ? SchemaCheckLevel::Structure
                             : o.verify == VerifyPolicy::Schema  ? SchemaCheckLevel::Schema
                                                                 : SchemaCheckLevel::Default;
    SchemaCheckResult r = checkSchemasOnLoad(m, level, o.strict);
    std::string prefix = o.name.empty() ? "" : o.name + ": ";
    for (const Diagnostic &d : r.warnings) warn((d.located ? "" : prefix) + d.message);
    if (r.moreWarnings)
      warn(absl::StrCat(prefix, r.moreWarnings, " more schema problems of these kinds (",
                        o.spelling.verifySchema, " lists them)"));
    if (!r.errors.empty()) {
      std::string msg = "the model is invalid:";
      for (const Diagnostic &d : r.errors)
        absl::StrAppend(&msg, "\n  ", d.message, " [", diagnosticKindName(d.kind), "]");
      if (r.schemaErrors)
        absl::StrAppend(&msg, "\n(", o.spelling.verifyStructure,
                        " skips the operator schema checks)");
      return absl::InvalidArgumentError(located(o, msg));
    }
    run.schemaCheckSeconds = secondsSince(t0);
  }

  PassManager pm(pmo);
  pm.printer = o.printer;
  for (auto &p : passes) pm.addPass(std::move(p));
  auto r = pm.run(m);
  run.passSeconds = pm.passSeconds();
  run.verifySeconds = pm.verifySeconds();
  run.verifyRuns = pm.verifyRuns();
  run.statistics = pm.statistics();
  if (!r.ok()) return absl::Status(r.status().code(), located(o, std::string(r.status().message())));
  run.changed = *r;
  return run;
}

absl::StatusOr<PipelineRun> runPipeline(Model &m, llvm::StringRef text, const PipelineOptions &o) {
  auto passes = buildPipeline(text, o);
  if (!passes.ok()) return passes.status();
  return runPipeline(m, std::move(*passes), o);
}

} // namespace onnxir
