//===- Pass.h - The pass interface, options and registry ------------------===//
//
// A pass has a command-line argument (`dce`), a description, options, and
// run(Model&) returning whether it changed anything, or an error. Each pass's
// algorithm is also a public free function (see Passes.h); the Pass object is
// a thin adapter that lives in its pass's file. Passes are registered
// explicitly by registerAllPasses().
//
// Note [Pass definitions in one place]
// Everything the tool and the manager know about a pass comes from the pass
// class itself: argument(), description(), and its options, which are data
// members declared with `Option<T>` (MLIR's Pass::Option idea):
//
//   class DCEPass : public Pass {
//     Option<bool> functions{*this, "functions", "also remove unused functions",
//                            false, "dce-functions"};
//     ...
//   };
//
// registerPass(factory) instantiates the pass once to record its argument,
// description and option table in the registry (for --help, --list-passes
// and the global flags); nothing is written twice. Values are parsed in one
// place (Option<T>::parse), for the textual pipeline
// (`fold-constants{size-limit=1MiB}`, see PassPipeline.h) and for the global
// flags (`--fold-size-limit=1MiB`) alike. An option set on the instance wins
// over a global flag.
//
// A pass whose algorithm takes an options struct (DCEOptions, ...) binds its
// Option<T>s to the struct's fields instead of declaring the values again:
// OptionsPass<DCEOptions>::Field takes the field, so the default is the
// struct's initializer (written once, for the C++ API and the tool alike),
// and optionValues() hands the algorithm the struct as set. Statistics structs
// name their counters once, in forEach(f), and addStats(s) reports them all;
// a pass without options of its own is one makePass(argument, description,
// function) call.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASS_H
#define ONNXIR_PASSES_PASS_H

#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace llvm {
class raw_ostream;
}

ONNXIR_API_BEGIN
namespace onnxir {

class Model;
class Pass;

/// Named counters a pass reports for -stats ("nodes removed" -> 12).
using PassStatistics = std::vector<std::pair<std::string, int64_t>>;

/// A byte count option value; parses `4096`, `64KiB`, `1MiB`, `2GiB`, `1MB`.
struct ByteCount {
  uint64_t bytes = 0;
};

/// Reads a byte count with an optional unit, case-insensitive: none or `B`,
/// `K`/`KiB`, `M`/`MiB`, `G`/`GiB`, `T`/`TiB` (powers of 1024) and `KB`, `MB`,
/// `GB`, `TB` (powers of 1000). The one parser of sizes for pass options and
/// for the tool's own flags; the error says what is wrong with \p text.
absl::StatusOr<uint64_t> parseByteCount(llvm::StringRef text);

/// One declared option of a pass (see Note [Pass definitions in one place]).
class PassOptionBase {
public:
  PassOptionBase(Pass &owner, const char *key, const char *description, const char *flag);
  virtual ~PassOptionBase() = default;
  PassOptionBase(const PassOptionBase &) = delete;
  PassOptionBase &operator=(const PassOptionBase &) = delete;

  /// Per-instance key (`size-limit` in `fold-constants{size-limit=1MiB}`).
  llvm::StringRef key() const { return key_; }
  llvm::StringRef description() const { return description_; }
  /// Global command-line flag (`fold-size-limit`), or "" for none.
  llvm::StringRef flag() const { return flag_; }
  /// What a value looks like ("true or false", "a byte count", ...).
  virtual std::string valueDescription() const = 0;
  /// The default and the current value, as text.
  virtual std::string defaultText() const = 0;
  virtual std::string valueText() const = 0;
  /// True once set explicitly on this instance.
  bool isExplicit() const { return explicit_; }
  /// True once set, on this instance or by a global flag.
  bool isSet() const { return set_; }

protected:
  friend class Pass;
  /// Parses and stores `value`; the message of an error says what was
  /// expected (the caller adds the pass and key).
  virtual absl::Status parse(llvm::StringRef value) = 0;

private:
  const char *key_, *description_, *flag_;
  bool explicit_ = false, set_ = false;
};

/// A typed option: bool, int64_t, uint64_t, ByteCount or std::string (with
/// an optional list of allowed values).
template <class T> class Option : public PassOptionBase {
public:
  Option(Pass &owner, const char *key, const char *description, T init, const char *flag = "",
         std::vector<std::string> choices = {})
      : PassOptionBase(owner, key, description, flag), value_(std::move(init)),
        default_(value_), choices_(std::move(choices)) {}
  const T &operator*() const { return value_; }
  const T *operator->() const { return &value_; }
  const T &get() const { return value_; }
  void set(T v) { value_ = std::move(v); }
  std::string valueDescription() const override;
  std::string defaultText() const override { return toText(default_); }
  std::string valueText() const override { return toText(value_); }

protected:
  absl::Status parse(llvm::StringRef value) override;

private:
  static std::string toText(const T &v);
  T value_, default_;
  std::vector<std::string> choices_;
};

extern template class Option<bool>;
extern template class Option<int64_t>;
extern template class Option<uint64_t>;
extern template class Option<ByteCount>;
extern template class Option<std::string>;

/// A problem a pass reports without failing: a warning (the model is odd, the
/// pass went on) or a remark (what the pass chose not to do, and why). The
/// message is located (`graph "main" > node #3 ...: what`); the pass manager
/// hands each distinct one to its diagnostic handler once per run.
struct PassDiagnostic {
  enum class Severity { Warning, Remark };
  Severity severity;
  std::string message;
  bool operator<(const PassDiagnostic &o) const {
    return severity != o.severity ? severity < o.severity : message < o.message;
  }
};

/// A pass. Subclasses declare options as Option<T> members and implement
/// argument(), description() and run().
class Pass {
public:
  Pass() = default;
  virtual ~Pass();
  Pass(const Pass &) = delete;
  Pass &operator=(const Pass &) = delete;

  /// Kebab-case CLI name, e.g. "dce".
  virtual llvm::StringRef argument() const = 0;
  virtual llvm::StringRef description() const = 0;
  /// Runs on the model; true if it changed anything.
  virtual absl::StatusOr<bool> run(Model &m) = 0;

  /// The declared options, in declaration order.
  llvm::ArrayRef<PassOptionBase *> options() const { return options_; }
  /// Sets the option declared with per-instance key `key` from text (a bare
  /// `key` with an empty value means true for a bool). Unknown keys and bad
  /// values are errors naming the pass.
  absl::Status setOption(llvm::StringRef key, llvm::StringRef value);
  /// Applies global flag values (flag name -> value) to every option whose
  /// flag is given and that was not set on this instance; records the flags
  /// used in `used`. Composite passes forward them to their children.
  virtual absl::Status applyFlags(const std::map<std::string, std::string> &flags,
                                  std::set<std::string> *used = nullptr);
  /// Checks options that constrain each other; called after every change.
  virtual absl::Status validateOptions() { return absl::OkStatus(); }

  /// Counters of the last run (the manager resets them before each run).
  const PassStatistics &statistics() const { return stats_; }
  void resetStatistics() { stats_.clear(); }

  /// Warnings and remarks reported since the last take, in order; a pass
  /// never prints them itself (the pass manager forwards them; a caller
  /// running a pass directly reads them here).
  const std::vector<PassDiagnostic> &diagnostics() const { return diags_; }
  std::vector<PassDiagnostic> takeDiagnostics() {
    std::vector<PassDiagnostic> d = std::move(diags_);
    diags_.clear();
    return d;
  }

  /// Composite passes (see CompositePass) return themselves.
  virtual class CompositePass *asComposite() { return nullptr; }

protected:
  void addStat(llvm::StringRef name, int64_t delta);
  /// Every counter of a statistics struct that names them in
  /// `forEach(f)`, as f("nodes removed", nodesRemoved) (Note [Pass
  /// definitions in one place]).
  template <class S> void addStats(const S &s) {
    s.forEach([this](llvm::StringRef name, int64_t v) { addStat(name, v); });
  }
  void warn(std::string message) {
    diags_.push_back({PassDiagnostic::Severity::Warning, std::move(message)});
  }
  void remark(std::string message) {
    diags_.push_back({PassDiagnostic::Severity::Remark, std::move(message)});
  }
  PassStatistics stats_;
  std::vector<PassDiagnostic> diags_;

private:
  friend class PassOptionBase;
  std::vector<PassOptionBase *> options_;
};

/// A pass whose argument and description are given once, to its constructor.
class NamedPass : public Pass {
public:
  NamedPass(const char *argument, const char *description)
      : argument_(argument), description_(description) {}
  llvm::StringRef argument() const override { return argument_; }
  llvm::StringRef description() const override { return description_; }

private:
  const char *argument_, *description_;
};

/// A pass whose options are fields of the options struct `Opts` its
/// algorithm takes (Note [Pass definitions in one place]):
///
///   Field<bool> functions_{*this, &DCEOptions::removeUnusedFunctions,
///                          "functions", "also remove ...", "dce-functions"};
///   ... eliminateDeadCode(m, optionValues(), &stats) ...
template <class Opts> class OptionsPass : public NamedPass {
public:
  using NamedPass::NamedPass;

  /// The options struct with every bound field as set (the others keep the
  /// struct's defaults).
  Opts optionValues() const {
    Opts o;
    for (const auto &apply : appliers_) apply(o);
    return o;
  }

protected:
  /// An option whose value is the field `field` of Opts, with the field's
  /// initializer as default. A ByteCount option may stand for an integer
  /// field (a value past the field's range is its largest).
  template <class T, class FieldT = T> class Field : public Option<T> {
  public:
    Field(OptionsPass &owner, FieldT Opts::*field, const char *key, const char *description,
          const char *flag = "", std::vector<std::string> choices = {})
        : Option<T>(owner, key, description, toOption(Opts().*field), flag, std::move(choices)) {
      owner.appliers_.push_back([this, field](Opts &o) { o.*field = fromOption(this->get()); });
    }

  private:
    static T toOption(const FieldT &v) {
      if constexpr (std::is_same_v<T, FieldT>) return v;
      else return T{(uint64_t)v};
    }
    static FieldT fromOption(const T &v) {
      if constexpr (std::is_same_v<T, FieldT>) return v;
      else return (FieldT)std::min<uint64_t>(v.bytes, (uint64_t)std::numeric_limits<FieldT>::max());
    }
  };

private:
  std::vector<std::function<void(Opts &)>> appliers_;
};

/// What a pass made by makePass reports while it runs.
class PassReport {
public:
  virtual ~PassReport() = default;
  virtual void stat(llvm::StringRef name, int64_t delta) = 0;
  virtual void warning(std::string message) = 0;
  virtual void remark(std::string message) = 0;
  /// Every counter of a statistics struct (see Pass::addStats).
  template <class S> void stats(const S &s) {
    s.forEach([this](llvm::StringRef name, int64_t v) { stat(name, v); });
  }
};

/// A pass without options of its own: `run` is its whole body.
std::unique_ptr<Pass>
makePass(const char *argument, const char *description,
         std::function<absl::StatusOr<bool>(Model &, PassReport &)> run);
/// A pass without options whose function fills a statistics struct that
/// names its counters (Pass::addStats).
template <class S>
std::unique_ptr<Pass> makePass(const char *argument, const char *description,
                               absl::StatusOr<bool> (*run)(Model &, S *)) {
  return makePass(argument, description, [run](Model &m, PassReport &report) {
    S s;
    absl::StatusOr<bool> r = run(m, &s);
    report.stats(s);
    return r;
  });
}
/// Runs `run`, a pass's function that fills a statistics struct, for a
/// public entry point that reports only one of its counters: adds
/// `s.*counted` to `*count` when given.
template <class S>
absl::StatusOr<bool> runCounting(absl::StatusOr<bool> (*run)(Model &, S *), int64_t S::*counted,
                                 Model &m, int64_t *count) {
  S s;
  absl::StatusOr<bool> r = run(m, &s);
  if (count) *count += s.*counted;
  return r;
}
/// A pass without options whose function counts one thing, reported as the
/// statistic `counted` (`topo`: topologicalSort(m, &moved), "nodes moved").
std::unique_ptr<Pass> makePass(const char *argument, const char *description, const char *counted,
                               absl::StatusOr<bool> (*run)(Model &, int64_t *));

/// A pass made of other passes: a prologue, a body repeated until no pass in
/// it changes the model (at most `max-iterations` times), and an epilogue.
/// -O1 and -O2 are composite passes; the pass manager runs each child as a
/// pass of its own (verified, timed, counted, printed, bisected).
class CompositePass : public Pass {
public:
  /// The pipelines are textual (PassPipeline.h) and resolved when the pass
  /// is created.
  CompositePass(std::string argument, std::string description, std::string prologue,
                std::string body, std::string epilogue, unsigned maxIterations = 4);
  llvm::StringRef argument() const override { return argument_; }
  llvm::StringRef description() const override { return description_; }
  /// Runs the children without a manager (each with `runChild`).
  absl::StatusOr<bool> run(Model &m) override;
  absl::StatusOr<bool> run(Model &m, const std::function<absl::StatusOr<bool>(Pass &)> &runChild,
                           llvm::raw_ostream *log);
  absl::Status applyFlags(const std::map<std::string, std::string> &flags,
                          std::set<std::string> *used = nullptr) override;
  CompositePass *asComposite() override { return this; }
  /// Every child, prologue, body and epilogue in order.
  std::vector<Pass *> children() const;
  /// The textual form of the composite's steps (for --list-passes).
  std::string pipelineText() const;

private:
  std::string argument_, description_, text_[3];
  std::vector<std::unique_ptr<Pass>> steps_[3];
  absl::Status error_; ///< a child that could not be created
  Option<uint64_t> maxIterations_;
};

/// A declared option, as the registry records it.
struct PassOptionInfo {
  std::string key;
  std::string description;
  std::string flag = {};
  std::string valueDescription = {};
  std::string defaultText = {};
};

/// One registry entry, recorded from an instance of the pass.
struct PassInfo {
  std::string argument;
  std::string description;
  std::function<std::unique_ptr<Pass>()> factory;
  std::vector<PassOptionInfo> options = {};
  /// For composite passes: their steps, as a textual pipeline.
  std::string pipeline = {};
};

/// The global registry (filled by registerAllPasses()).
class PassRegistry {
public:
  static PassRegistry &instance();
  /// Records argument, description and options from one instance of the pass.
  void registerPass(std::function<std::unique_ptr<Pass>()> factory);
  const PassInfo *lookup(llvm::StringRef argument) const;
  /// Entries sorted by argument.
  std::vector<const PassInfo *> entries() const;
  /// A new instance of the pass, or an error naming the unknown argument.
  absl::StatusOr<std::unique_ptr<Pass>> create(llvm::StringRef argument) const;

private:
  std::map<std::string, PassInfo, std::less<>> infos_;
};

/// Registers every built-in pass; idempotent. Call from main. The groups it
/// calls are declared in Passes.h; adding a pass means adding its factory to
/// registerAllPasses() in lib/Passes/PassRegistry.cpp.
void registerAllPasses();

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PASS_H
