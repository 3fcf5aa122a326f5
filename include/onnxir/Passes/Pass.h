//===- Pass.h - The pass interface, registry and manager ------------------===//
//
// A pass has a command-line argument (`dce`), a description, options, and
// run(Model&) returning whether it changed anything, or an error. Each pass's
// algorithm is also a public free function (see Passes.h); the Pass object is
// a thin adapter. Passes are registered explicitly by registerAllPasses().
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASS_H
#define ONNXIR_PASSES_PASS_H

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace onnxir {

class Model;

/// Named counters a pass reports for -stats ("nodes removed" -> 12).
using PassStatistics = std::vector<std::pair<std::string, int64_t>>;

class Pass {
public:
  virtual ~Pass();
  /// Kebab-case CLI name, e.g. "dce".
  virtual llvm::StringRef argument() const = 0;
  virtual llvm::StringRef description() const = 0;
  /// Sets an option from `key=value` text (e.g. "mode=canonical"); unknown
  /// keys or bad values are errors naming the pass.
  virtual absl::Status setOption(llvm::StringRef key, llvm::StringRef value);
  /// Runs on the model; true if it changed anything.
  virtual absl::StatusOr<bool> run(Model &m) = 0;
  /// Counters of the last run.
  const PassStatistics &statistics() const { return stats_; }

protected:
  void addStat(llvm::StringRef name, int64_t delta);
  PassStatistics stats_;
};

/// A command-line option of a pass: `--KEY=VALUE` reaches setOption(KEY, VALUE).
/// Prefix keys with the pass's name (`rename-mode`); two passes may share a
/// key only when it means the same to both (`constants-size-limit`).
struct PassOptionInfo {
  std::string key;
  std::string description;
};

/// One registry entry.
struct PassInfo {
  std::string argument;
  std::string description;
  std::function<std::unique_ptr<Pass>()> factory;
  std::vector<PassOptionInfo> options = {};
};

/// The global registry (filled by registerAllPasses()).
class PassRegistry {
public:
  static PassRegistry &instance();
  void add(PassInfo info);
  const PassInfo *lookup(llvm::StringRef argument) const;
  /// Entries sorted by argument.
  std::vector<const PassInfo *> entries() const;

private:
  std::map<std::string, PassInfo, std::less<>> infos_;
};

/// Registers every built-in pass; idempotent. Call from main. The groups it
/// calls are declared in Passes.h; adding a pass means adding its entry to
/// one of them (or a new group called from lib/Passes/PassRegistry.cpp).
void registerAllPasses();

} // namespace onnxir

#endif // ONNXIR_PASSES_PASS_H
