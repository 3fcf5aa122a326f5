//===- PipelineOptions.h - One pipeline policy for every front end --------===//
//
// What a run of passes decides besides the passes themselves: which global
// pass options apply, the convert-opset a --target-opset adds, what is
// checked on load and what problems of the input the passes may keep. onnx-opt
// and the Python module both run pipelines through here, so that
//
//   onnx-opt -O2 --target-opset=23 --bind-dim=batch=1 in.onnx -o out.onnx
//   onnxir.run_passes(m, "O2", options={"target-opset": 23, "bind-dim": "batch=1"})
//
// do the same thing.
//
//   PipelineOptions o;
//   o.passOptions["target-opset"] = "23";
//   auto r = runPipeline(model, "O2", o);
//
// Note [Pipeline policy]
// 1. Global pass options (`target-opset`, `fold-size-limit`, `bind-dim`...,
//    the flags the passes declare, Pass.h) reach every instance that
//    declares them and did not set them itself; one that no pass of the
//    pipeline takes is an error naming the passes that do. `bind-dim` is
//    the exception: it reaches the first infer-shapes to run only, since
//    binding happens once (after it the symbols are gone).
// 2. With `target-opset` given, -O1 and -O2 work on the converted model: a
//    convert-opset goes before the first of them unless the pipeline
//    converts before it. A pipeline that does nothing else (no pass at
//    all) is the conversion. The conversion added is preceded by an
//    infer-shapes{outputs-only} (types in memory, as -O1/-O2 infer them):
//    adapters need element types that exports leave undeclared.
// 3. On load (checkInput): the structure is verified; problems a pass of the
//    pipeline repairs are tolerated (order violations: topo; shadowing when
//    rename runs: a warning); any other is an error. Then the operator
//    schema check at `verify` (SchemaVerifier.h: checkSchemasOnLoad).
// 4. After each pass (verifyEach, Note [Verification after a pass]), the
//    problem kinds the input had are tolerated; `verify = Schema` adds the
//    operator schema checks.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PIPELINEOPTIONS_H
#define ONNXIR_PASSES_PIPELINEOPTIONS_H

#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;

/// How much of the operator schemas is checked, on load and with verifyEach.
enum class VerifyPolicy {
  Structure, ///< scopes, use lists, order; schema problems are warnings
  Default,   ///< on load also the severe schema problems; type constraints warn
  Schema,    ///< every schema problem is an error, on load and after each pass
};

/// How messages name options, so that each front end speaks its own
/// language (`--target-opset` on the command line, `'target-opset'` or a
/// keyword in Python).
struct PipelineSpelling {
  /// A global pass option, by its flag name.
  std::function<std::string(llvm::StringRef flag)> option = [](llvm::StringRef f) {
    return "--" + f.str();
  };
  /// Where the passes are listed, and the setting that skips the schema
  /// checks on load / lists every schema problem.
  std::string listPasses = "--list-passes";
  std::string verifyStructure = "--verify=structure";
  std::string verifySchema = "--verify=schema";
  /// How to repair shadowed names (an input refused for shadowing).
  std::string repairShadowing = "onnx-opt -rename --rename-mode=sanitize ...";
};

struct PipelineOptions {
  /// Global pass options, by flag name (Note [Pipeline policy], 1):
  /// {"target-opset", "23"}, {"fold-size-limit", "1MiB"},
  /// {"input-shape", "x:1,128;y:1,128"}, {"bind-dim", "batch=1"}. A bare
  /// flag is "" (true for a bool).
  std::map<std::string, std::string> passOptions;
  /// Check the model before the passes (Note [Pipeline policy], 3).
  bool checkInput = true;
  VerifyPolicy verify = VerifyPolicy::Default;
  /// Load warnings (unknown ops, undeclared domains, newer versions, type
  /// constraints) are errors.
  bool strict = false;
  /// The name of the model in messages (a file name), or "".
  std::string name;
  PipelineSpelling spelling;
  /// Receives each load warning, without a prefix (`FILE: message`), in
  /// order. Unset: `warning: message` on manager.log.
  std::function<void(const std::string &)> warningHandler;
  /// Everything else of the pass manager (timing, printing, bisecting,
  /// where pass warnings go). verifyEach is used as given; verify.schema and
  /// inputProblemKinds are set from the fields above.
  PassManagerOptions manager;
  /// Prints the IR for the manager's print options (PassManager::printer).
  std::function<void(const Model &, llvm::raw_ostream &)> printer;
};

/// The passes of `text` (PassPipeline.h; "" is none) with the policy
/// applied: the global options given, convert-opset added. Errors name the
/// option or pass as `o.spelling` says.
absl::StatusOr<std::vector<std::unique_ptr<Pass>>> buildPipeline(llvm::StringRef text,
                                                                 const PipelineOptions &o);
/// The same for passes created already (onnx-opt's pass flags).
absl::StatusOr<std::vector<std::unique_ptr<Pass>>>
buildPipeline(std::vector<std::unique_ptr<Pass>> passes, const PipelineOptions &o);

/// What a run did, for reports.
struct PipelineRun {
  bool changed = false;
  double inputVerifySeconds = 0; ///< the structural check on load
  double schemaCheckSeconds = 0; ///< the operator schema check on load
  double passSeconds = 0, verifySeconds = 0;
  unsigned verifyRuns = 0; ///< after passes (the check on load not counted)
  PassStatistics statistics;
};

/// Checks `m` on load and runs `passes` (from buildPipeline) on it, as Note
/// [Pipeline policy] says. A model refused on load gives `NAME: the model is
/// invalid:` and its problems; a failing pass `NAME: pass 'P' failed: ...`.
absl::StatusOr<PipelineRun> runPipeline(Model &m, std::vector<std::unique_ptr<Pass>> passes,
                                        const PipelineOptions &o);
/// buildPipeline(text, o), then the above.
absl::StatusOr<PipelineRun> runPipeline(Model &m, llvm::StringRef text, const PipelineOptions &o);

/// The nearest registered global pass option to `flag` (edit distance), or
/// "" when none is near: for "unknown option 'fold-size-limt' (did you mean
/// fold-size-limit?)".
std::string suggestPassOption(llvm::StringRef flag);
/// The nearest registered pass to `argument`, or "".
std::string suggestPass(llvm::StringRef argument);
/// The passes that take global option `flag` (declare it, or for a
/// composite one of its children does), comma-separated ("O1, O2,
/// fold-constants"), "" for none.
std::string passesTakingOption(llvm::StringRef flag);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PIPELINEOPTIONS_H
