//===- DeduplicateInitializers.cpp - Merge equal constant tensors ---------===//
//
// Each constant initializer (not a graph input: those can be overridden) is
// hashed once by element type, dims and bytes; an equal one seen in the same
// graph or an enclosing one takes over its uses. Initializers that are graph
// outputs keep their names and are not merged away.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"

#include <unordered_map>

namespace onnxir {

namespace {

bool tensorKey(const Tensor &t, std::string &k) {
  k.clear();
  absl::StrAppend(&k, t.dataTypeRaw(), "[");
  for (int64_t d : t.dims()) absl::StrAppend(&k, d, ",");
  k += "]";
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (!s.ok()) return false;
    for (auto &x : *s) absl::StrAppend(&k, x.size(), ":", x);
    return true;
  }
  auto b = t.bytes();
  if (!b.ok()) return false;
  k.append(b->data(), b->size());
  return true;
}

struct Dedup {
  int64_t merged = 0;
  std::vector<std::unordered_map<std::string, Value *>> scopes;

  void run(Graph &g) {
    scopes.emplace_back();
    std::string key;
    bool any = false;
    for (Value *v : g.initializers()) {
      if (!v->isConstantInitializer() || !tensorKey(*v->initializer(), key)) continue;
      Value *prev = nullptr;
      for (auto s = scopes.rbegin(); s != scopes.rend() && !prev; ++s) {
        auto f = s->find(key);
        if (f != s->end()) prev = f->second;
      }
      if (!prev) {
        scopes.back().emplace(key, v);
        continue;
      }
      if (v->isGraphOutput()) continue;
      v->replaceAllUsesWith(prev);
      ++merged;
      any = true;
    }
    for (Node &n : g.nodes())
      for (Graph *sg : n.subgraphs()) run(*sg);
    if (any) g.removeInitializersIf([](Value *) { return true; });
    scopes.pop_back();
  }
};

} // namespace

absl::StatusOr<bool> deduplicateInitializers(Model &m, int64_t *merged) {
  Dedup d;
  d.run(m.graph());
  for (auto &f : m.functions()) d.run(f->body());
  if (merged) *merged += d.merged;
  return d.merged > 0;
}

} // namespace onnxir
