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
// Note [CSE keys]
//   A node's hash only picks a bucket; two nodes merge only when
//   sameComputation compares them field by field: domain, op, overload,
//   result count, the operand values in order, and the attributes matched by
//   name (their order in the node is not part of the meaning), each of the
//   same kind and payload. Floats compare by their bits (NaN equals a NaN of
//   the same bits, 0.0 differs from -0.0: a float compare would get both
//   wrong), lists element by element (so [1,11] and [11,1], ["a","bc"] and
//   ["ab","c"] stay apart however they would concatenate), tensors by element
//   type, dims and their bytes as bytes() reads them in any storage (raw,
//   typed, external), or their strings. No textual key can collide, since
//   there is none. A node whose attributes cannot be read (a tensor whose
//   external data does not load, a subgraph, a sparse tensor, an attribute
//   reference) is never merged.
//
//   An equal pair that is left apart is counted in the statistics by why:
//   "declined (nondeterministic)", "declined (side effects)" and
//   "declined (graph output)" (the later node's result is a graph output).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <unordered_map>

namespace onnxir {

namespace {

/// The contents of a tensor as compared: its strings or its bytes; nullopt
/// when they cannot be read.
struct TensorContents {
  std::vector<std::string> strings;
  llvm::StringRef bytes;
};

std::optional<TensorContents> contentsOf(const Tensor &t) {
  TensorContents c;
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

bool sameTensor(const Tensor &a, const Tensor &b) {
  if (a.dataTypeRaw() != b.dataTypeRaw() || a.dims() != b.dims()) return false;
  auto x = contentsOf(a), y = contentsOf(b);
  return x && y && x->strings == y->strings && x->bytes == y->bytes;
}

bool sameFloats(const std::vector<float> &a, const std::vector<float> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (llvm::bit_cast<uint32_t>(a[i]) != llvm::bit_cast<uint32_t>(b[i])) return false;
  return true;
}

/// Equal kind and payload (names are matched by the caller).
bool samePayload(const Attribute &a, const Attribute &b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
  case AttrKind::Float: return llvm::bit_cast<uint32_t>(a.f) == llvm::bit_cast<uint32_t>(b.f);
  case AttrKind::Int: return a.i == b.i;
  case AttrKind::String: return a.s == b.s;
  case AttrKind::Floats: return sameFloats(a.floats, b.floats);
  case AttrKind::Ints: return a.ints == b.ints;
  case AttrKind::Strings: return a.strings == b.strings;
  case AttrKind::Tensor:
  case AttrKind::Tensors:
    if (a.tensors.size() != b.tensors.size()) return false;
    for (size_t i = 0; i < a.tensors.size(); ++i)
      if (!sameTensor(*a.tensors[i], *b.tensors[i])) return false;
    return true;
  case AttrKind::TypeProto:
  case AttrKind::TypeProtos:
    return a.types == b.types; // types are uniqued
  default:
    return false;
  }
}

/// The node's attributes by name (stable for repeated names).
std::vector<const Attribute *> attributesByName(const Node &n) {
  std::vector<const Attribute *> as;
  for (unsigned i = 0; i < n.numAttributes(); ++i) as.push_back(&n.attribute(i));
  std::stable_sort(as.begin(), as.end(),
                   [](const Attribute *x, const Attribute *y) { return x->name() < y->name(); });
  return as;
}

/// Note [CSE keys]: the full comparison behind a hash match.
bool sameComputation(const Node &a, const Node &b) {
  if (a.domain() != b.domain() || a.opType() != b.opType() || a.overload() != b.overload() ||
      a.numResults() != b.numResults() || a.numOperands() != b.numOperands() ||
      a.numAttributes() != b.numAttributes())
    return false;
  for (unsigned i = 0; i < a.numOperands(); ++i)
    if (a.operand(i) != b.operand(i)) return false;
  auto x = attributesByName(a), y = attributesByName(b);
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i]->name() != y[i]->name() || !samePayload(*x[i], *y[i])) return false;
  return true;
}

llvm::hash_code hashTensor(const Tensor &t, const TensorContents &c) {
  llvm::hash_code h = llvm::hash_combine(t.dataTypeRaw(),
                                         llvm::hash_combine_range(t.dims().begin(), t.dims().end()));
  for (const std::string &s : c.strings) h = llvm::hash_combine(h, s.size(), llvm::xxHash64(s));
  return llvm::hash_combine(h, c.bytes.size(), llvm::xxHash64(c.bytes));
}

/// The bucket of a node (Note [CSE keys]); nullopt if the node is never
/// merged because an attribute cannot be compared.
std::optional<uint64_t> nodeHash(const Node &n) {
  llvm::hash_code h = llvm::hash_combine(n.domain(), n.opType(), n.overload(), n.numResults(),
                                         n.numOperands());
  for (const Use &u : n.operandUses()) h = llvm::hash_combine(h, u.get());
  for (const Attribute *a : attributesByName(n)) {
    if (a->numGraphs() || a->isReference()) return std::nullopt;
    h = llvm::hash_combine(h, a->name(), (int)a->kind());
    switch (a->kind()) {
    case AttrKind::Float: h = llvm::hash_combine(h, llvm::bit_cast<uint32_t>(a->f)); break;
    case AttrKind::Int: h = llvm::hash_combine(h, a->i); break;
    case AttrKind::String: h = llvm::hash_combine(h, a->s); break;
    case AttrKind::Floats:
      for (float f : a->floats) h = llvm::hash_combine(h, llvm::bit_cast<uint32_t>(f));
      break;
    case AttrKind::Ints:
      h = llvm::hash_combine(h, llvm::hash_combine_range(a->ints.begin(), a->ints.end()));
      break;
    case AttrKind::Strings:
      for (const std::string &s : a->strings) h = llvm::hash_combine(h, s);
      break;
    case AttrKind::Tensor:
    case AttrKind::Tensors:
      for (const auto &t : a->tensors) {
        auto c = contentsOf(*t);
        if (!c) return std::nullopt; // unreadable data compares equal to nothing
        h = llvm::hash_combine(h, hashTensor(*t, *c));
      }
      break;
    case AttrKind::TypeProto:
    case AttrKind::TypeProtos:
      for (const Type *t : a->types) h = llvm::hash_combine(h, t);
      break;
    default:
      return std::nullopt; // sparse tensors and undefined kinds: do not merge
    }
  }
  return (uint64_t)h;
}

/// Nodes merged, and equal pairs left apart by reason (Note [CSE keys]).
struct CSEStatistics {
  int64_t merged = 0, nondeterministic = 0, sideEffects = 0, graphOutput = 0, missingResult = 0;
  template <class F> void forEach(F &&f) const {
    f("nodes merged", merged);
    f("declined (nondeterministic)", nondeterministic);
    f("declined (side effects)", sideEffects);
    f("declined (graph output)", graphOutput);
    f("declined (missing result)", missingResult);
  }
};

class CSE {
public:
  explicit CSE(const Model &m) : model(m) {}
  const Model &model;
  CSEStatistics stats;

  /// The first earlier node visible here that computes what `n` does
  /// (`equal`), and the first of those that has every result `n` has
  /// (`usable`, which may take over its uses).
  void findEqual(const Node &n, uint64_t h, Node *&equal, Node *&usable) const {
    equal = usable = nullptr;
    for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
      auto [b, e] = s->equal_range(h);
      for (; b != e; ++b) {
        Node *c = b->second;
        if (!sameComputation(*c, n)) continue;
        if (!equal) equal = c;
        bool covers = true;
        for (unsigned i = 0; i < n.numResults(); ++i)
          if (n.result(i) && !c->result(i)) covers = false;
        if (covers) {
          usable = c;
          return;
        }
      }
    }
  }

  absl::Status runGraph(Graph &g) {
    scopes.emplace_back();
    for (auto it = g.nodes().begin(); it != g.nodes().end();) {
      Node &n = *it++;
      if (n.hasSubgraphs()) {
        for (Graph *sg : n.subgraphs())
          if (auto s = runGraph(*sg); !s.ok()) return s;
        continue;
      }
      if (n.numResults() == 0) continue;
      std::optional<uint64_t> h = nodeHash(n);
      if (!h) continue;
      Node *equal, *prev;
      findEqual(n, *h, equal, prev);
      if (!equal) {
        scopes.back().emplace(*h, &n);
        continue;
      }
      // Equal to an earlier node: merged unless one of these holds.
      if (hasSideEffects(n)) {
        ++stats.sideEffects;
        continue;
      }
      if (!isDeterministic(n)) {
        ++stats.nondeterministic;
        continue;
      }
      bool feedsOutput = false;
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (n.result(i) && n.result(i)->isGraphOutput()) feedsOutput = true;
      if (feedsOutput) {
        ++stats.graphOutput;
        continue;
      }
      if (!prev) {
        // The equal nodes lack a result `n` has; a later one may use `n`.
        ++stats.missingResult;
        scopes.back().emplace(*h, &n);
        continue;
      }
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (Value *r = n.result(i)) r->replaceAllUsesWith(prev->result(i));
      if (auto s = n.erase(); !s.ok()) return s;
      ++stats.merged;
    }
    scopes.pop_back();
    return absl::OkStatus();
  }

private:
  /// One table per graph on the current nesting path: hash -> node.
  std::vector<std::unordered_multimap<uint64_t, Node *>> scopes;
};

absl::StatusOr<bool> runCSE(Model &m, CSEStatistics *stats) {
  CSE cse(m);
  if (auto s = cse.runGraph(m.graph()); !s.ok()) return s;
  for (auto &f : m.functions())
    if (auto s = cse.runGraph(f->body()); !s.ok()) return s;
  *stats = cse.stats;
  return cse.stats.merged > 0;
}

} // namespace

absl::StatusOr<bool> eliminateCommonSubexpressions(Model &m, int64_t *merged) {
  return runCounting(runCSE, &CSEStatistics::merged, m, merged);
}

std::unique_ptr<Pass> createCommonSubexpressionEliminationPass() {
  return makePass("cse", "Merge nodes that compute the same value (scoped, deterministic ops only)",
                  runCSE);
}

} // namespace onnxir
