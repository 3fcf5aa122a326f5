//===- Constants.cpp - Constant nodes <-> initializers --------------------===//
//
// lift-constants turns `Constant` nodes into initializers of the same name
// (every value_* form); lower-initializers does the opposite. Names, and so
// graph output names, are kept. Function bodies have no initializers, so
// lifting skips them.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "llvm/ADT/DenseSet.h"

#include <cstring>

namespace onnxir {

namespace {

// The tensor a Constant node produces, if it is a dense one we can build.
std::optional<Tensor> liftableValue(const Node &n) {
  // A sparse value stays a Constant: densified it could be any size.
  if (n.numAttributes() != 1 || n.numResults() != 1 || !n.result(0) ||
      n.attribute(0).name() == "sparse_value")
    return std::nullopt;
  Tensor scratch;
  auto v = onnxir::constantValue(n, scratch);
  if (!v.ok()) return std::nullopt;
  if (*v == &scratch) return scratch;
  return **v;
}

uint64_t tensorBytes(const Tensor &t) {
  auto n = t.numElements();
  if (!n) return UINT64_MAX;
  if (t.dataType() == DataType::String) {
    uint64_t b = 0;
    for (auto &s : t.stringData) b += s.size();
    return b;
  }
  return dataTypeStorageBytes(t.dataType(), (uint64_t)*n);
}

} // namespace

absl::StatusOr<bool> liftConstantsToInitializers(Model &m, uint64_t maxBytes, int64_t *lifted) {
  bool changed = false;
  absl::Status err = absl::OkStatus();
  m.graph().walkGraphs([&](Graph *g) {
    for (auto it = g->nodes().begin(); it != g->nodes().end() && err.ok();) {
      Node &n = *it++;
      if (!isConstantNode(n)) continue;
      std::optional<Tensor> t = liftableValue(n);
      if (!t || tensorBytes(*t) > maxBytes) continue;
      Value *r = n.result(0);
      std::string name = r->name().str();
      if (!n.docString.empty() && t->docString.empty()) t->docString = n.docString;
      for (auto &kv : n.metadata) t->metadata.push_back(kv);
      auto init = g->addInitializer(g->freshName(name), std::move(*t));
      if (!init.ok()) { err = init.status(); return; }
      (*init)->setType(r->type());
      r->replaceAllUsesWith(*init);
      if (auto s = n.erase(); !s.ok()) { err = s; return; }
      if (auto s = (*init)->setName(name); !s.ok()) { err = s; return; }
      (*init)->initializer()->setName(name);
      changed = true;
      if (lifted) ++*lifted;
    }
  });
  if (!err.ok()) return err;
  return changed;
}

absl::StatusOr<bool> lowerInitializersToConstants(Model &m, uint64_t maxBytes, int64_t *lowered) {
  bool changed = false;
  absl::Status err = absl::OkStatus();
  m.graph().walkGraphs([&](Graph *g) {
    std::vector<Value *> todo;
    for (Value *v : g->initializers())
      if (v->isConstantInitializer() && tensorBytes(*v->initializer()) <= maxBytes)
        todo.push_back(v);
    Node *front = g->nodes().empty() ? nullptr : &g->nodes().front();
    std::vector<std::pair<Value *, std::string>> renames;
    llvm::DenseSet<Value *> gone;
    for (Value *v : todo) {
      std::string name = v->name().str();
      Tensor t = *v->initializer();
      t.setName("");
      Node *c = createConstantNode(*g, std::move(t), front, name);
      Value *r = c->result(0);
      r->setType(v->type());
      v->replaceAllUsesWith(r);
      gone.insert(v);
      renames.emplace_back(r, std::move(name));
    }
    g->removeInitializersIf([&](Value *x) { return gone.count(x) > 0; });
    for (auto &[r, name] : renames) {
      if (auto s = r->setName(name); !s.ok()) { err = s; return; }
      changed = true;
      if (lowered) ++*lowered;
    }
  });
  if (!err.ok()) return err;
  return changed;
}

//===----------------------------------------------------------------------===//
// The lift-constants and lower-initializers passes
//===----------------------------------------------------------------------===//

namespace {
class ConstantsPass : public Pass {
public:
  explicit ConstantsPass(bool lift) : lift_(lift) {}
  llvm::StringRef argument() const override {
    return lift_ ? "lift-constants" : "lower-initializers";
  }
  llvm::StringRef description() const override {
    return lift_ ? "Turn Constant nodes into initializers of the same name"
                 : "Turn constant initializers into Constant nodes of the same name";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = lift_ ? liftConstantsToInitializers(m, limit_->bytes, &n)
                   : lowerInitializersToConstants(m, limit_->bytes, &n);
    addStat(lift_ ? "constants lifted" : "initializers lowered", n);
    return r;
  }

private:
  bool lift_;
  Option<ByteCount> limit_{*this, "size-limit", "largest tensor in bytes to move",
                           ByteCount{UINT64_MAX}, "constants-size-limit"};
};
} // namespace

std::unique_ptr<Pass> createLiftConstantsPass() { return std::make_unique<ConstantsPass>(true); }
std::unique_ptr<Pass> createLowerInitializersPass() {
  return std::make_unique<ConstantsPass>(false);
}

} // namespace onnxir
