//===- CommonSubexpressionElimination.cpp - Merge equal computations ------===//
//
// Scoped value numbering: a node is keyed by its identity, operands and
// attributes. Keys of enclosing graphs are visible in nested graphs (a node
// in a branch may reuse an equal outer node defined before the branch's
// holder), never across sibling graphs. Nondeterministic ops and ops that
// may have side effects (Note [Op traits] in OpSchema.h: ops of unknown
// domains, calls of local functions), nodes with subgraphs or without results, and nodes feeding
// graph outputs (whose names are the interface) are never merged away.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/bit.h"

#include <unordered_map>

namespace onnxir {

namespace {

void appendTensorKey(std::string &k, const Tensor &t) {
  absl::StrAppend(&k, "T", t.dataTypeRaw(), "[");
  for (int64_t d : t.dims()) absl::StrAppend(&k, d, ",");
  k += "]";
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (s.ok())
      for (auto &x : *s) absl::StrAppend(&k, x.size(), ":", x);
    return;
  }
  auto b = t.bytes();
  if (b.ok()) k.append(b->data(), b->size());
  else k += "<unreadable>";
}

// A key that is equal exactly when two nodes compute the same thing.
bool nodeKey(const Node &n, std::string &k) {
  k.clear();
  absl::StrAppend(&k, n.domain().str(), "\x1f", n.opType().str(), "\x1f", n.overload().str(), "\x1f",
                  n.numResults(), "\x1f");
  for (const Use &u : n.operandUses())
    absl::StrAppend(&k, reinterpret_cast<uintptr_t>(u.get()), ",");
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    if (a.numGraphs() || a.isReference()) return false;
    absl::StrAppend(&k, "\x1e", a.name(), ":", (int)a.kind(), ":");
    switch (a.kind()) {
    case AttrKind::Float: absl::StrAppend(&k, absl::Hex(llvm::bit_cast<uint32_t>(a.f))); break;
    case AttrKind::Int: absl::StrAppend(&k, a.i); break;
    case AttrKind::String: absl::StrAppend(&k, a.s.size(), ":", a.s); break;
    case AttrKind::Floats:
      for (float f : a.floats) absl::StrAppend(&k, absl::Hex(llvm::bit_cast<uint32_t>(f)), ",");
      break;
    case AttrKind::Ints:
      for (int64_t x : a.ints) absl::StrAppend(&k, x, ",");
      break;
    case AttrKind::Strings:
      for (auto &s : a.strings) absl::StrAppend(&k, s.size(), ":", s);
      break;
    case AttrKind::Tensor:
    case AttrKind::Tensors:
      for (auto &t : a.tensors) appendTensorKey(k, *t);
      break;
    case AttrKind::TypeProto:
    case AttrKind::TypeProtos:
      for (const Type *t : a.types) absl::StrAppend(&k, reinterpret_cast<uintptr_t>(t), ",");
      break;
    default:
      return false; // sparse tensors and undefined kinds: do not merge
    }
  }
  return true;
}

class CSE {
public:
  explicit CSE(const Model &m) : model(m) {}
  const Model &model;
  int64_t merged = 0;

  absl::Status runGraph(Graph &g, std::vector<std::unordered_map<std::string, Node *>> &scopes) {
    scopes.emplace_back();
    std::string key;
    for (auto it = g.nodes().begin(); it != g.nodes().end();) {
      Node &n = *it++;
      if (n.hasSubgraphs()) {
        for (Graph *sg : n.subgraphs())
          if (auto s = runGraph(*sg, scopes); !s.ok()) return s;
        continue;
      }
      if (n.numResults() == 0 || !isDeterministic(n) || hasSideEffects(n) ||
          !nodeKey(n, key))
        continue;
      Node *prev = nullptr;
      for (auto s = scopes.rbegin(); s != scopes.rend() && !prev; ++s) {
        auto f = s->find(key);
        if (f != s->end()) prev = f->second;
      }
      if (!prev) {
        scopes.back().emplace(key, &n);
        continue;
      }
      bool feedsOutput = false;
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (n.result(i) && n.result(i)->isGraphOutput()) feedsOutput = true;
      if (feedsOutput) continue;
      bool compatible = true;
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (n.result(i) && !prev->result(i)) compatible = false;
      if (!compatible) continue;
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (Value *r = n.result(i)) r->replaceAllUsesWith(prev->result(i));
      if (auto s = n.erase(); !s.ok()) return s;
      ++merged;
    }
    scopes.pop_back();
    return absl::OkStatus();
  }
};

} // namespace

absl::StatusOr<bool> eliminateCommonSubexpressions(Model &m, int64_t *merged) {
  CSE cse(m);
  std::vector<std::unordered_map<std::string, Node *>> scopes;
  if (auto s = cse.runGraph(m.graph(), scopes); !s.ok()) return s;
  for (auto &f : m.functions())
    if (auto s = cse.runGraph(f->body(), scopes); !s.ok()) return s;
  if (merged) *merged += cse.merged;
  return cse.merged > 0;
}

namespace {
class CSEPass : public Pass {
public:
  llvm::StringRef argument() const override { return "cse"; }
  llvm::StringRef description() const override {
    return "Merge nodes that compute the same value (scoped, deterministic ops only)";
  }
  absl::StatusOr<bool> run(Model &m) override {
    int64_t n = 0;
    auto r = eliminateCommonSubexpressions(m, &n);
    addStat("nodes merged", n);
    return r;
  }
};
} // namespace

std::unique_ptr<Pass> createCommonSubexpressionEliminationPass() {
  return std::make_unique<CSEPass>();
}

} // namespace onnxir
