//===- PassAdapters.cpp - Registry entries for the built-in passes --------===//
//
// Each pass is a thin adapter over its public function in Passes.h: options
// come in through setOption, counters go out through addStat.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"

namespace onnxir {

namespace {

absl::Status badValue(llvm::StringRef pass, llvm::StringRef key, llvm::StringRef value,
                      llvm::StringRef expected) {
  return absl::InvalidArgumentError(absl::StrCat(pass.str(), ": option '", key.str(), "' got '",
                                                 value.str(), "', expected ", expected.str()));
}

absl::StatusOr<bool> parseBool(llvm::StringRef v) {
  if (v == "" || v == "true" || v == "1" || v == "on") return true;
  if (v == "false" || v == "0" || v == "off") return false;
  return absl::InvalidArgumentError("");
}

class DCEPass : public Pass {
public:
  llvm::StringRef argument() const override { return "dce"; }
  llvm::StringRef description() const override {
    return "Remove unused nodes and initializers, in every graph and function";
  }
  absl::Status setOption(llvm::StringRef key, llvm::StringRef value) override {
    auto b = parseBool(value);
    if (!b.ok()) return badValue(argument(), key, value, "true or false");
    if (key == "dce-functions") opts_.removeUnusedFunctions = *b;
    else if (key == "dce-opsets") opts_.removeUnusedOpsets = *b;
    else if (key == "dce-value-info") opts_.removeDeadValueInfo = *b;
    else return Pass::setOption(key, value);
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    DCEStatistics s;
    auto r = eliminateDeadCode(m, opts_, &s);
    addStat("nodes removed", s.nodesRemoved);
    addStat("initializers removed", s.initializersRemoved);
    addStat("functions removed", s.functionsRemoved);
    addStat("value_info entries removed", s.valueInfosRemoved);
    addStat("opset imports removed", s.opsetsRemoved);
    return r;
  }

private:
  DCEOptions opts_;
};

class TopoPass : public Pass {
public:
  llvm::StringRef argument() const override { return "topo"; }
  llvm::StringRef description() const override {
    return "Stable topological sort of every graph (captures count as dependencies)";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t moved = 0;
    auto r = topologicalSort(m, &moved);
    addStat("nodes moved", moved);
    return r;
  }
};

/// A pass with one counter and no options, over a function of Passes.h.
class SimplePass : public Pass {
public:
  using Fn = std::function<absl::StatusOr<bool>(Model &, int64_t *)>;
  SimplePass(std::string arg, std::string desc, std::string stat, Fn fn)
      : arg_(std::move(arg)), desc_(std::move(desc)), stat_(std::move(stat)), fn_(std::move(fn)) {}
  llvm::StringRef argument() const override { return arg_; }
  llvm::StringRef description() const override { return desc_; }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = fn_(m, &n);
    addStat(stat_, n);
    return r;
  }

private:
  std::string arg_, desc_, stat_;
  Fn fn_;
};

class RenamePass : public Pass {
public:
  llvm::StringRef argument() const override { return "rename"; }
  llvm::StringRef description() const override {
    return "Scope-aware renaming: canonical names, a prefix, or C identifiers";
  }
  // A prefix implies prefix mode; an explicit other mode with a prefix is a
  // conflict, reported whichever option comes first.
  absl::Status setOption(llvm::StringRef key, llvm::StringRef value) override {
    if (key == "rename-mode") {
      RenameOptions::Mode mode;
      if (value == "canonical") mode = RenameOptions::Mode::Canonical;
      else if (value == "prefix") mode = RenameOptions::Mode::Prefix;
      else if (value == "sanitize") mode = RenameOptions::Mode::Sanitize;
      else return badValue(argument(), key, value, "canonical, prefix or sanitize");
      if (prefixSet_ && mode != RenameOptions::Mode::Prefix)
        return conflict(value);
      opts_.mode = mode;
      modeText_ = value.str();
    } else if (key == "rename-prefix") {
      if (!modeText_.empty() && opts_.mode != RenameOptions::Mode::Prefix)
        return conflict(modeText_);
      opts_.prefix = value.str();
      opts_.mode = RenameOptions::Mode::Prefix;
      prefixSet_ = true;
    } else if (key == "rename-interface" || key == "rename-nodes") {
      auto b = parseBool(value);
      if (!b.ok()) return badValue(argument(), key, value, "true or false");
      (key == "rename-nodes" ? opts_.renameNodes : opts_.renameInterface) = *b;
    } else {
      return Pass::setOption(key, value);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = renameValues(m, opts_, &n);
    addStat("names changed", n);
    return r;
  }

private:
  absl::Status conflict(llvm::StringRef mode) const {
    return absl::InvalidArgumentError(absl::StrCat(
        argument().str(), ": option 'rename-prefix' conflicts with 'rename-mode' = '", mode.str(),
        "': a prefix is only used by rename-mode=prefix"));
  }
  RenameOptions opts_;
  std::string modeText_; ///< the rename-mode given, if any
  bool prefixSet_ = false;
};

class ConstantsPass : public Pass {
public:
  ConstantsPass(bool lift) : lift_(lift) {}
  llvm::StringRef argument() const override {
    return lift_ ? "lift-constants" : "lower-initializers";
  }
  llvm::StringRef description() const override {
    return lift_ ? "Turn Constant nodes into initializers of the same name"
                 : "Turn constant initializers into Constant nodes of the same name";
  }
  absl::Status setOption(llvm::StringRef key, llvm::StringRef value) override {
    if (key != "constants-size-limit") return Pass::setOption(key, value);
    if (value.getAsInteger(10, limit_)) return badValue(argument(), key, value, "a byte count");
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = lift_ ? liftConstantsToInitializers(m, limit_, &n)
                   : lowerInitializersToConstants(m, limit_, &n);
    addStat(lift_ ? "constants lifted" : "initializers lowered", n);
    return r;
  }

private:
  bool lift_;
  uint64_t limit_ = UINT64_MAX;
};

/// inline-functions, with its node budget (Note [Inlining budget]).
class InlinePass : public Pass {
public:
  llvm::StringRef argument() const override { return "inline-functions"; }
  llvm::StringRef description() const override { return "Inline calls of model-local functions"; }
  absl::Status setOption(llvm::StringRef key, llvm::StringRef value) override {
    if (key != "inline-max-nodes") return Pass::setOption(key, value);
    if (value.getAsInteger(10, maxNodes_)) return badValue(argument(), key, value, "a node count");
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = inlineFunctions(m, &n, maxNodes_);
    addStat("calls inlined", n);
    return r;
  }

private:
  uint64_t maxNodes_ = kDefaultInlineNodeBudget;
};

template <class P, class... Args> std::function<std::unique_ptr<Pass>()> make(Args... args) {
  return [=] { return std::unique_ptr<Pass>(new P(args...)); };
}

void addSimple(const char *arg, const char *desc, const char *stat, SimplePass::Fn fn) {
  PassRegistry::instance().add(
      {arg, desc, [=] { return std::unique_ptr<Pass>(new SimplePass(arg, desc, stat, fn)); }});
}

} // namespace

void registerCleanupPasses() {
  PassRegistry &r = PassRegistry::instance();
  r.add({"dce", "Remove unused nodes and initializers, in every graph and function",
         make<DCEPass>(),
         {{"dce-functions", "dce: also remove model-local functions nobody calls"},
          {"dce-opsets", "dce: also remove opset imports of domains no node uses"},
          {"dce-value-info", "dce: remove value_info of removed values (default true)"}}});
  r.add({"topo", "Stable topological sort of every graph (captures count as dependencies)",
         make<TopoPass>()});
  r.add({"rename", "Scope-aware renaming: canonical names, a prefix, or C identifiers",
         make<RenamePass>(),
         {{"rename-mode", "rename: canonical (default), prefix or sanitize"},
          {"rename-prefix", "rename: the prefix for prefix mode (implies it; an error with "
                            "another rename-mode)"},
          {"rename-interface", "rename: also rename the main graph's inputs and outputs"},
          {"rename-nodes", "rename: also rename nodes (default true)"}}});
  addSimple("eliminate-identity", "Remove Identity nodes (output names are kept)",
            "identities removed", [](Model &m, int64_t *n) { return eliminateIdentity(m, n); });
  addSimple("cse", "Merge nodes that compute the same value (scoped, deterministic ops only)",
            "nodes merged",
            [](Model &m, int64_t *n) { return eliminateCommonSubexpressions(m, n); });
  addSimple("dedup-initializers", "Merge initializers with equal type, shape and contents",
            "initializers merged",
            [](Model &m, int64_t *n) { return deduplicateInitializers(m, n); });
  r.add({"inline-functions", "Inline calls of model-local functions", make<InlinePass>(),
         {{"inline-max-nodes", "inline-functions: refuse to grow the main graph past this "
                               "many nodes (default 10000000)"}}});
  PassOptionInfo sizeLimit{"constants-size-limit",
                           "lift-constants, lower-initializers: largest tensor in bytes to move"};
  r.add({"lift-constants", "Turn Constant nodes into initializers of the same name",
         make<ConstantsPass>(true), {sizeLimit}});
  r.add({"lower-initializers", "Turn constant initializers into Constant nodes of the same name",
         make<ConstantsPass>(false), {sizeLimit}});
}

} // namespace onnxir
