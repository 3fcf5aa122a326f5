//===- PassRegistry.cpp - Pass base class, options, registry, composites --===//
//
// Registration is explicit (no static registrar objects: a static library's
// unreferenced object files are never linked, so their registrars would never
// run). registerAllPasses() lists every built-in pass's factory; the registry
// instantiates each once to record what the pass declares (Note [Pass
// definitions in one place] in Pass.h). Option values are parsed here and
// nowhere else.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PipelineOptions.h"
#include "onnxir/Passes/ShapeInference.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <type_traits>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

PassOptionBase::PassOptionBase(Pass &owner, const char *key, const char *description,
                               const char *flag)
    : key_(key), description_(description), flag_(flag) {
  owner.options_.push_back(this);
}

namespace {

absl::Status expected(llvm::StringRef what) {
  return absl::InvalidArgumentError(absl::StrCat("expected ", what.str()));
}

bool parseBoolText(llvm::StringRef v, bool &out) {
  if (v == "" || v == "true" || v == "1" || v == "on") out = true;
  else if (v == "false" || v == "0" || v == "off") out = false;
  else return false;
  return true;
}

} // namespace

absl::StatusOr<uint64_t> parseByteCount(llvm::StringRef text) {
  llvm::StringRef digits = text.take_while([](char c) { return c >= '0' && c <= '9'; });
  llvm::StringRef unit = text.drop_front(digits.size());
  uint64_t n = 0;
  if (digits.empty() || digits.getAsInteger(10, n))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text.str(), "' is not a byte count (e.g. 4096, 64KiB, 1MB)"));
  // B (or no unit), then for the k-th prefix of K, M, G, T: the binary forms
  // (K, KiB) mean 1024^k and the decimal one (KB) 1000^k, one rule for all
  // twelve spellings.
  std::string lower = unit.lower();
  llvm::StringRef rest = llvm::StringRef(lower).drop_front(std::min<size_t>(lower.size(), 1));
  size_t prefix = lower.empty() ? llvm::StringRef::npos : llvm::StringRef("kmgt").find(lower[0]);
  uint64_t mult = 0;
  if (lower.empty() || lower == "b") {
    mult = 1;
  } else if (prefix != llvm::StringRef::npos && (rest.empty() || rest == "ib" || rest == "b")) {
    mult = 1;
    for (size_t k = 0; k <= prefix; ++k) mult *= rest == "b" ? 1000 : 1024;
  }
  if (mult) {
    if (n > UINT64_MAX / mult)
      return absl::InvalidArgumentError(absl::StrCat("'", text.str(), "' is too large"));
    return n * mult;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", text.str(), "' has an unknown unit '", unit.str(),
                   "' (use B, KiB, MiB, GiB, TiB or KB, MB, GB, TB)"));
}

template <class T> absl::Status Option<T>::parse(llvm::StringRef v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!parseBoolText(v, value_)) return expected(valueDescription());
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
    T n;
    if (v.getAsInteger(10, n)) return expected(valueDescription());
    value_ = n;
  } else if constexpr (std::is_same_v<T, ByteCount>) {
    absl::StatusOr<uint64_t> n = parseByteCount(v);
    if (!n.ok()) return expected("a byte count (4096, 64KiB, 1MiB, 1MB)");
    value_.bytes = *n;
  } else {
    if (!choices_.empty() && std::find(choices_.begin(), choices_.end(), v) == choices_.end())
      return expected(valueDescription());
    value_ = v.str();
  }
  return absl::OkStatus();
}

template <class T> std::string Option<T>::valueDescription() const {
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_same_v<T, int64_t>) return "an integer";
  else if constexpr (std::is_same_v<T, uint64_t>) return "a non-negative integer";
  else if constexpr (std::is_same_v<T, ByteCount>) return "a byte count (4096, 64KiB, 1MiB)";
  else {
    if (choices_.empty()) return "a string";
    std::string s;
    for (size_t i = 0; i < choices_.size(); ++i)
      absl::StrAppend(&s, i == 0 ? "" : i + 1 == choices_.size() ? " or " : ", ", choices_[i]);
    return s;
  }
}

template <class T> std::string Option<T>::toText(const T &v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, ByteCount>) return std::to_string(v.bytes);
  else if constexpr (std::is_same_v<T, std::string>) return v;
  else return std::to_string(v);
}

template class Option<bool>;
template class Option<int64_t>;
template class Option<uint64_t>;
template class Option<ByteCount>;
template class Option<std::string>;

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

Pass::~Pass() = default;

absl::Status Pass::setOption(llvm::StringRef key, llvm::StringRef value) {
  for (PassOptionBase *o : options_) {
    if (o->key() != key) continue;
    if (absl::Status s = o->parse(value); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat(argument().str(), ": option '", key.str(),
                                                     "' got '", value.str(), "', ",
                                                     s.message()));
    o->explicit_ = o->set_ = true;
    return validateOptions();
  }
  std::string known;
  for (PassOptionBase *o : options_) absl::StrAppend(&known, known.empty() ? "" : ", ", o->key().str());
  return absl::InvalidArgumentError(
      absl::StrCat(argument().str(), ": unknown option '", key.str(), "'",
                   known.empty() ? " (the pass has no options)"
                                 : absl::StrCat(" (options: ", known, ")")));
}

absl::Status Pass::applyFlags(const std::map<std::string, std::string> &flags,
                              std::set<std::string> *used) {
  for (PassOptionBase *o : options_) {
    if (o->flag().empty()) continue;
    auto it = flags.find(o->flag().str());
    if (it == flags.end()) continue;
    if (used) used->insert(it->first);
    if (o->isExplicit()) continue; // the instance's own value wins
    if (absl::Status s = o->parse(it->second); !s.ok())
      return absl::InvalidArgumentError(absl::StrCat(argument().str(), ": option '",
                                                     o->key().str(), "' (--", it->first,
                                                     ") got '", it->second, "', ",
                                                     s.message()));
    o->set_ = true;
    if (absl::Status s = validateOptions(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void Pass::addStat(llvm::StringRef name, int64_t delta) {
  for (auto &[n, v] : stats_)
    if (n == name) {
      v += delta;
      return;
    }
  stats_.emplace_back(name.str(), delta);
}

namespace {
class FunctionPass final : public NamedPass, PassReport {
public:
  FunctionPass(const char *argument, const char *description,
               std::function<absl::StatusOr<bool>(Model &, PassReport &)> run)
      : NamedPass(argument, description), run_(std::move(run)) {}
  absl::StatusOr<bool> run(Model &m) override { return run_(m, *this); }

private:
  void stat(llvm::StringRef name, int64_t delta) override { addStat(name, delta); }
  void warning(std::string message) override { warn(std::move(message)); }
  void remark(std::string message) override { Pass::remark(std::move(message)); }
  std::function<absl::StatusOr<bool>(Model &, PassReport &)> run_;
};
} // namespace

std::unique_ptr<Pass>
makePass(const char *argument, const char *description,
         std::function<absl::StatusOr<bool>(Model &, PassReport &)> run) {
  return std::make_unique<FunctionPass>(argument, description, std::move(run));
}

std::unique_ptr<Pass> makePass(const char *argument, const char *description, const char *counted,
                               absl::StatusOr<bool> (*run)(Model &, int64_t *)) {
  return makePass(argument, description,
                  [counted, run](Model &m, PassReport &report) -> absl::StatusOr<bool> {
                    int64_t n = 0;
                    auto r = run(m, &n);
                    report.stat(counted, n);
                    return r;
                  });
}

//===----------------------------------------------------------------------===//
// Composite passes
//===----------------------------------------------------------------------===//

CompositePass::CompositePass(std::string argument, std::string description, std::string prologue,
                             std::string body, std::string epilogue, unsigned maxIterations)
    : argument_(std::move(argument)), description_(std::move(description)),
      text_{std::move(prologue), std::move(body), std::move(epilogue)},
      maxIterations_(*this, "max-iterations",
                     "rounds of the repeated part at most (it stops earlier at a fixed point)",
                     maxIterations) {
  for (int i = 0; i < 3; ++i) {
    if (text_[i].empty()) continue;
    auto steps = parsePassPipeline(text_[i]);
    if (!steps.ok()) {
      error_ = absl::InternalError(
          absl::StrCat(argument_, ": bad built-in pipeline: ", steps.status().message()));
      continue;
    }
    steps_[i] = std::move(*steps);
  }
}

std::vector<Pass *> CompositePass::children() const {
  std::vector<Pass *> out;
  for (auto &part : steps_)
    for (auto &p : part) out.push_back(p.get());
  return out;
}

std::string CompositePass::pipelineText() const {
  std::string s = text_[0];
  if (!text_[1].empty())
    absl::StrAppend(&s, s.empty() ? "" : ",", "repeat(", text_[1], ")");
  if (!text_[2].empty()) absl::StrAppend(&s, s.empty() ? "" : ",", text_[2]);
  return s;
}

absl::Status CompositePass::applyFlags(const std::map<std::string, std::string> &flags,
                                       std::set<std::string> *used) {
  if (absl::Status s = Pass::applyFlags(flags, used); !s.ok()) return s;
  for (Pass *c : children())
    if (absl::Status s = c->applyFlags(flags, used); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<bool> CompositePass::run(Model &m) {
  // Without a manager, the children's warnings become the composite's own.
  return run(
      m,
      [&](Pass &p) {
        absl::StatusOr<bool> r = p.run(m);
        for (PassDiagnostic &d : p.takeDiagnostics()) diags_.push_back(std::move(d));
        return r;
      },
      nullptr);
}

absl::StatusOr<bool>
CompositePass::run(Model &m, const std::function<absl::StatusOr<bool>(Pass &)> &runChild,
                   llvm::raw_ostream *log) {
  (void)m;
  if (!error_.ok()) return error_;
  bool changedAny = false;
  auto runPart = [&](int part, bool &changed) -> absl::Status {
    for (auto &p : steps_[part]) {
      absl::StatusOr<bool> r = runChild(*p);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
    return absl::OkStatus();
  };
  if (absl::Status s = runPart(0, changedAny); !s.ok()) return s;
  bool changed = !steps_[1].empty();
  uint64_t rounds = 0;
  for (; rounds < std::max<uint64_t>(1, *maxIterations_) && changed; ++rounds) {
    changed = false;
    if (absl::Status s = runPart(1, changed); !s.ok()) return s;
    changedAny |= changed;
  }
  addStat("rounds", (int64_t)rounds);
  if (changed && log)
    *log << "note: -" << argument_ << " stopped after " << rounds
         << " rounds without reaching a fixed point\n";
  if (absl::Status s = runPart(2, changedAny); !s.ok()) return s;
  return changedAny;
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

PassRegistry &PassRegistry::instance() {
  static PassRegistry r;
  return r;
}

void PassRegistry::registerPass(std::function<std::unique_ptr<Pass>()> factory) {
  std::unique_ptr<Pass> p = factory();
  PassInfo info{p->argument().str(), p->description().str(), std::move(factory)};
  for (PassOptionBase *o : p->options())
    info.options.push_back({o->key().str(), o->description().str(), o->flag().str(),
                            o->valueDescription(), o->defaultText()});
  if (CompositePass *c = p->asComposite()) info.pipeline = c->pipelineText();
  std::string key = info.argument;
  infos_[key] = std::move(info);
}

const PassInfo *PassRegistry::lookup(llvm::StringRef argument) const {
  auto it = infos_.find(argument);
  return it == infos_.end() ? nullptr : &it->second;
}

std::vector<const PassInfo *> PassRegistry::entries() const {
  std::vector<const PassInfo *> out;
  for (auto &[k, v] : infos_) out.push_back(&v);
  return out;
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::create(llvm::StringRef argument) const {
  const PassInfo *info = lookup(argument);
  if (!info) {
    std::string near = suggestPass(argument);
    return absl::NotFoundError(absl::StrCat("unknown pass '", argument.str(), "' (",
                                            near.empty() ? "" : "did you mean " + near + "? ",
                                            "see --list-passes)"));
  }
  return info->factory();
}

void registerAllPasses() {
  static bool done = false;
  if (done) return;
  done = true;
  PassRegistry &r = PassRegistry::instance();
  // Cleanup passes (one file each).
  r.registerPass(createDeadCodeEliminationPass);
  r.registerPass(createTopologicalSortPass);
  r.registerPass(createRenamePass);
  r.registerPass(createEliminateIdentityPass);
  r.registerPass(createCommonSubexpressionEliminationPass);
  r.registerPass(createDeduplicateInitializersPass);
  r.registerPass(createFreezeInitializerInputsPass);
  r.registerPass(createMonotoneArgMaxPass); // monotone-argmax (MonotoneArgMax.cpp), not in -O2
  r.registerPass(createLiftConstantsPass);
  r.registerPass(createLowerInitializersPass);
  r.registerPass(createInlineFunctionsPass);
  r.registerPass(createConstantFoldingPass);
  // Pattern rewrites (Fusions.cpp).
  r.registerPass(createFusePass);
  r.registerPass(createSimplifyPass);

  registerShapeInferencePass(); // infer-shapes (ShapeInference.cpp)

  r.registerPass(createConvertOpsetPass); // convert-opset (ConvertOpset.cpp)
  r.registerPass(createExpandFunctionsPass); // expand-functions (ExpandFunctions.cpp)

  // Model surgery (Surgery.h).
  r.registerPass(createExtractPass);
  r.registerPass(createAddOutputsPass);
  r.registerPass(createPruneOutputsPass);
  r.registerPass(createEditIOPass);

  r.registerPass(createConvertPrecisionPass); // convert-precision (ConvertPrecision.cpp)
  r.registerPass(createSimplifyQdqPass); // simplify-qdq (Qdq.cpp)
  r.registerPass(createQuantizeWeightsPass); // quantize-weights (QuantizeWeights.cpp)
  r.registerPass(createDequantizeWeightsPass); // dequantize-weights (QuantizeWeights.cpp)
  //===--- Further passes: one line each, above this banner ----------------===//

  // Composite pipelines last: they are built from the entries above.
  registerPipelinePasses();
}

} // namespace onnxir
