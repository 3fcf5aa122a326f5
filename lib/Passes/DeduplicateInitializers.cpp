//===- DeduplicateInitializers.cpp - Merge equal constant tensors ---------===//
//
// Each constant initializer (not a graph input: those can be overridden) is
// hashed once: element type, dims and a 64-bit hash of its bytes, read in
// place (a view of the mapped file, never copied). Initializers with equal
// hashes are compared byte for byte; an equal one seen earlier in the same
// graph or in an enclosing one takes over the uses. Initializers that are
// graph outputs keep their names and are not merged away. The pages of
// mapped files read for a hash or a comparison are dropped right after, so
// the pass holds a chunk of a weight at a time, not the model.
//
// Note [Dedup declines]
//   Counted by -stats: an initializer equal to an earlier one but a graph
//   output ("declined (graph output)") or a graph input's default ("declined
//   (graph input)"), and one whose data cannot be read ("declined
//   (unreadable data)": never taken for equal to anything). Equal
//   initializers of sibling graphs are not visible to each other.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Residency.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/xxhash.h"

#include <unordered_map>

namespace onnxir {

namespace {

struct Contents {
  Value *value;
  std::vector<std::string> strings; // String tensors only
  llvm::StringRef bytes;            // other tensors (a view)
};

std::optional<Contents> contentsOf(Value *v) {
  const Tensor &t = *v->initializer();
  Contents c{v, {}, {}};
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (!s.ok()) return std::nullopt;
    c.strings = std::move(*s);
    return c;
  }
  auto b = t.bytes();
  if (!b.ok()) return std::nullopt;
  c.bytes = *b;
  return c;
}

/// Bytes hashed or compared between two drops of their pages.
constexpr size_t kChunk = size_t(16) << 20;

uint64_t hashOf(const Tensor &t, const Contents &c) {
  uint64_t h = llvm::hash_combine(t.dataTypeRaw(), llvm::hash_combine_range(t.dims().begin(),
                                                                            t.dims().end()));
  if (t.dataType() == DataType::String) {
    for (const std::string &s : c.strings) h = llvm::hash_combine(h, s.size(), llvm::xxHash64(s));
    return h;
  }
  // In chunks, each dropped once hashed (Note [Resident pages of mapped
  // bytes]): a 500 MB weight of a mapped file is never resident at once.
  h = llvm::hash_combine(h, c.bytes.size());
  for (size_t at = 0; at < c.bytes.size(); at += kChunk) {
    llvm::StringRef part = c.bytes.substr(at, kChunk);
    h = llvm::hash_combine(h, llvm::xxHash64(part));
    releaseResident(part);
  }
  return h;
}

bool equal(const Contents &a, const Contents &b) {
  const Tensor &x = *a.value->initializer(), &y = *b.value->initializer();
  if (x.dataTypeRaw() != y.dataTypeRaw() || x.dims() != y.dims() ||
      a.bytes.size() != b.bytes.size() || a.strings != b.strings)
    return false;
  for (size_t at = 0; at < a.bytes.size(); at += kChunk) {
    llvm::StringRef l = a.bytes.substr(at, kChunk), r = b.bytes.substr(at, kChunk);
    bool same = l == r;
    releaseResident(l);
    releaseResident(r);
    if (!same) return false;
  }
  return true;
}

/// Initializers merged, and those left alone by why (Note [Dedup declines]).
struct DedupStatistics {
  int64_t merged = 0, graphOutput = 0, graphInput = 0, unreadable = 0;
  template <class F> void forEach(F &&f) const {
    f("initializers merged", merged);
    f("declined (graph output)", graphOutput);
    f("declined (graph input)", graphInput);
    f("declined (unreadable data)", unreadable);
  }
};

struct Dedup {
  DedupStatistics stats;
  // One table per graph on the current nesting path.
  std::vector<std::unordered_multimap<uint64_t, Contents>> scopes;

  /// An equal initializer seen earlier here or in an enclosing graph.
  Value *findEqual(uint64_t h, const Contents &c) const {
    for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
      auto [b, e] = s->equal_range(h);
      for (; b != e; ++b)
        if (equal(b->second, c)) return b->second.value;
    }
    return nullptr;
  }

  void run(Graph &g) {
    scopes.emplace_back();
    bool any = false;
    for (Value *v : g.initializers()) {
      std::optional<Contents> c = contentsOf(v);
      if (!c) {
        ++stats.unreadable;
        continue;
      }
      uint64_t h = hashOf(*v->initializer(), *c);
      Value *prev = findEqual(h, *c);
      if (!v->isConstantInitializer()) {
        // A graph input's default: the caller may pass another value.
        if (prev) ++stats.graphInput;
        continue;
      }
      if (!prev) {
        scopes.back().emplace(h, std::move(*c));
        continue;
      }
      if (v->isGraphOutput()) {
        ++stats.graphOutput;
        continue;
      }
      v->replaceAllUsesWith(prev);
      ++stats.merged;
      any = true;
    }
    for (Node &n : g.nodes())
      for (Graph *sg : n.subgraphs()) run(*sg);
    if (any) g.removeInitializersIf([](Value *) { return true; });
    scopes.pop_back();
  }
};

absl::StatusOr<bool> runDedup(Model &m, DedupStatistics *stats) {
  Dedup d;
  d.run(m.graph());
  for (auto &f : m.functions()) d.run(f->body());
  *stats = d.stats;
  return d.stats.merged > 0;
}

} // namespace

absl::StatusOr<bool> deduplicateInitializers(Model &m, int64_t *merged) {
  return runCounting(runDedup, &DedupStatistics::merged, m, merged);
}

std::unique_ptr<Pass> createDeduplicateInitializersPass() {
  return makePass("dedup-initializers", "Merge initializers with equal type, shape and contents",
                  runDedup);
}

} // namespace onnxir
