//===- OpRegistry.cpp - The registry and the list of families -------------===//
//
// Built once: an entry per schema of the generated table (plus a version-0
// entry per op), then each family file attaches its rules, kernels and
// traits. See OpRegistry.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpRegistry.h"

#include "Families.h"

#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/OpSchema.h"

#include <cassert>

namespace onnxir {

template <typename F> OpRegistrar::Op &OpRegistrar::Op::apply(F &&f) {
  for (OpEntry &e : r_.reg_.at(r_.domain_, op_).versions)
    if (since_ == 0 || (e.sinceVersion >= since_)) f(e);
  return *this;
}

OpRegistrar::Op &OpRegistrar::Op::infer(infer::Rule rule) {
  return apply([&](OpEntry &e) { e.infer = rule; });
}
OpRegistrar::Op &OpRegistrar::Op::kernel(KernelFn fn) {
  return apply([&](OpEntry &e) { e.kernel = fn; });
}
OpRegistrar::Op &OpRegistrar::Op::validate(ValidityCheck fn) {
  return apply([&](OpEntry &e) { e.validate = fn; });
}
OpRegistrar::Op &OpRegistrar::Op::commutative() {
  return apply([](OpEntry &e) { e.commutative = true; });
}
OpRegistrar::Op &OpRegistrar::Op::infersSubgraphs() {
  return apply([](OpEntry &e) { e.infersSubgraphs = true; });
}
OpRegistrar::Op &OpRegistrar::Op::shapeOnly() {
  return apply([](OpEntry &e) { e.shapeOnly = true; });
}

OpRegistrar::Op &OpRegistrar::Op::elementwise() {
  return apply([](OpEntry &e) { e.elementwise = true; });
}
OpRegistrar::Op &OpRegistrar::Op::broadcasting() {
  return apply([](OpEntry &e) { e.broadcasting = true; });
}
OpRegistrar::Op &OpRegistrar::Op::shapePreserving() {
  return apply([](OpEntry &e) { e.shapePreserving = true; });
}
OpRegistrar::Op &OpRegistrar::Op::reshapes() {
  return apply([](OpEntry &e) { e.reshapes = true; });
}
OpRegistrar::Op &OpRegistrar::Op::axis(AxisFact f) {
  return apply([f](OpEntry &e) { e.axis = f; });
}

OpRegistrar::Op &OpRegistrar::Op::upgrade(VersionAdapter fn) {
  assert(since_ > 0 && "an adapter belongs to one version: since(v) first");
  for (OpEntry &e : r_.reg_.at(r_.domain_, op_).versions)
    if (e.sinceVersion == since_) e.upgrade = fn;
  return *this;
}
OpRegistrar::Op &OpRegistrar::Op::downgrade(VersionAdapter fn) {
  assert(since_ > 0 && "an adapter belongs to one version: since(v) first");
  for (OpEntry &e : r_.reg_.at(r_.domain_, op_).versions)
    if (e.sinceVersion == since_) e.downgrade = fn;
  return *this;
}

OpRegistrar::Op &OpRegistrar::Op::expand(ExpansionBuilder fn) {
  assert(since_ > 0 && "a builder belongs to one version: since(v) first");
  for (OpEntry &e : r_.reg_.at(r_.domain_, op_).versions)
    if (e.sinceVersion == since_) e.expand = fn;
  return *this;
}

Value *AdapterContext::constant(Node &n, llvm::StringRef base, Tensor t) {
  return createConstantNode(*n.getGraph(), std::move(t), &n, base)->result(0);
}

OpRegistry &OpRegistry::get() {
  static OpRegistry *r = new OpRegistry(); // never destroyed: used until exit
  return *r;
}

OpRegistry::OpRegistry() {
  auto own = std::make_unique<llvm::StringMap<OpVersions>>();
  defaultDomain_ = own.get();
  domains_[""] = std::move(own);
  for (const OpSchema &s : allSchemas()) {
    OpVersions &v = at(s.domain(), s.name());
    OpEntry e = v.versions.front();
    e.sinceVersion = s.sinceVersion();
    e.schema = &s;
    v.versions.push_back(std::move(e));
  }
  OpRegistrar def = registrar("");
  registerElementwiseOps(def);
  registerCastOps(def);
  registerReductionOps(def);
  registerShapeOps(def);
  registerTensorOps(def);
  registerNNOps(def);
  registerConvOps(def);
  registerLinearAlgebraOps(def);
  registerAttentionOps(def);
  registerImageOps(def);
  registerNormalizationOps(def);
  registerRecurrentOps(def);
  registerQuantizationOps(def);
  registerSequenceOps(def);
  registerSignalOps(def);
  registerMiscOps(def);
  registerControlFlowOps(def);
  OpRegistrar ml = registrar("ai.onnx.ml");
  registerMLOps(ml);
  OpRegistrar preview = registrar("ai.onnx.preview");
  registerPreviewOps(preview);
  OpRegistrar training = registrar("ai.onnx.preview.training");
  registerTrainingOps(training);
  OpRegistrar ms = registrar("com.microsoft");
  registerMicrosoftOps(ms);
}

OpRegistry::OpVersions &OpRegistry::at(llvm::StringRef domain, llvm::StringRef op) {
  llvm::StringRef d = canonicalDomain(domain);
  std::unique_ptr<llvm::StringMap<OpVersions>> &ops = domains_[d];
  if (!ops) ops = std::make_unique<llvm::StringMap<OpVersions>>();
  auto [it, inserted] = ops->try_emplace(op);
  if (inserted) {
    OpEntry e;
    e.domain = domains_.find(d)->getKey();
    e.opType = it->getKey();
    it->second.versions.push_back(std::move(e));
  }
  return it->second;
}

const OpRegistry::OpVersions *OpRegistry::find(llvm::StringRef domain, llvm::StringRef op) const {
  const llvm::StringMap<OpVersions> *ops = defaultDomain_;
  if (!isDefaultDomain(domain)) {
    auto d = domains_.find(domain);
    if (d == domains_.end()) return nullptr;
    ops = d->second.get();
  }
  auto it = ops->find(op);
  return it == ops->end() ? nullptr : &it->second;
}

const OpEntry *OpRegistry::lookup(llvm::StringRef domain, llvm::StringRef op,
                                  int64_t version) const {
  const OpVersions *v = find(domain, op);
  if (!v) return nullptr;
  const OpEntry *best = &v->versions.front();
  for (size_t i = 1; i < v->versions.size() && v->versions[i].sinceVersion <= version; ++i)
    best = &v->versions[i];
  return best;
}

const OpEntry *OpRegistry::lookup(const Node &n) const {
  return lookup(n.domain(), n.opType(), opsetInForce(n));
}

llvm::ArrayRef<OpEntry> OpRegistry::versions(llvm::StringRef domain, llvm::StringRef op) const {
  const OpVersions *v = find(domain, op);
  if (!v) return {};
  return v->versions;
}

bool OpRegistry::hasKernel(llvm::StringRef domain, llvm::StringRef op) const {
  for (const OpEntry &e : versions(domain, op))
    if (e.kernel) return true;
  return false;
}

void OpRegistry::addSchemaEntries(llvm::StringRef domain, llvm::StringRef op) {
  OpVersions &v = at(domain, op);
  std::vector<OpEntry> next{v.versions.front()};
  for (const OpSchema &s : schemaVersions(domain, op)) {
    OpEntry e = next.back(); // what the version below knew, until told more
    for (const OpEntry &old : v.versions)
      if (old.sinceVersion == s.sinceVersion()) e = old;
    e.sinceVersion = s.sinceVersion();
    e.schema = &s;
    next.push_back(std::move(e));
  }
  v.versions = std::move(next);
}

} // namespace onnxir
