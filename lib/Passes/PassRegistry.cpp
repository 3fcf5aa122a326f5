//===- PassRegistry.cpp - The Pass base class and the registry ------------===//
//
// Registration is explicit (no static registrar objects: a static library's
// unreferenced object files are never linked, so their registrars would never
// run). registerAllPasses() calls one function per group of passes.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"

#include "absl/strings/str_cat.h"

namespace onnxir {

Pass::~Pass() = default;

absl::Status Pass::setOption(llvm::StringRef key, llvm::StringRef) {
  return absl::InvalidArgumentError(
      absl::StrCat(argument().str(), ": unknown option '", key.str(), "'"));
}

void Pass::addStat(llvm::StringRef name, int64_t delta) {
  for (auto &[n, v] : stats_)
    if (n == name) {
      v += delta;
      return;
    }
  stats_.emplace_back(name.str(), delta);
}

PassRegistry &PassRegistry::instance() {
  static PassRegistry r;
  return r;
}

void PassRegistry::add(PassInfo info) {
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

void registerAllPasses() {
  static bool done = false;
  if (done) return;
  done = true;
  registerCleanupPasses();

  //===--- Further groups of passes: one call each, below ------------------===//
  registerConstantFoldingPass(); // fold-constants (ConstantFolding.cpp)
  registerShapeInferencePass();  // infer-shapes (ShapeInference.cpp)
}

} // namespace onnxir
