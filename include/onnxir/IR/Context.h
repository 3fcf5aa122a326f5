//===- Context.h - Per-model string interning, type uniquing, names -------===//
//
// A Context owns what a model's IR shares: interned strings (names, op types,
// domains compare by pointer), uniqued Types, and the model-wide registry of
// value names that makes fresh names O(1) and collision-free in every scope.
//
// Note [Fresh names]: the registry counts every value name defined anywhere
// in the model (all graphs, all nesting levels, function bodies). A name with
// count 0 collides with nothing, in any scope, so freshName only has to find
// such a name: it tries `base`, then `base_1`, `base_2`, ... remembering the
// last suffix per base, which makes minting amortised O(1).
//
// Note [IR storage]
// Nodes, values, operand arrays, attribute arrays and the attributes the
// lift makes (Node::newAttr) are carved from the context's slabs
// (llvm::BumpPtrAllocator, Note [Prefaulted slabs]), in the order they are
// made: a lift of 10^6 nodes makes millions of small objects, and one
// malloc each (with its header, its search and its free at exit) was a
// tenth of the load; in slabs, what is made together sits together, which
// is also what walks over the graph touch together. Nodes and values have
// slabs of their own (Note [Line-aligned objects]); names, operand and
// attribute arrays and attributes share the others. Erasing an object runs
// its destructor and puts its memory on a free list of its size class
// (16-byte steps up to 1 KiB, 64-byte steps for nodes and values; bigger
// operand arrays use the heap), reused by the next object of that size; the
// slabs are released with the context, which outlives every graph made in
// it. Under AddressSanitizer freed objects are poisoned and never reused,
// so a use after erase is still reported.
//
// Note [Line-aligned objects]
// Nodes and values are what walks over a big graph reach at random: per
// use, the used value and its defining node. A value's fields that walks
// read (kind, index, use count, graph, node, name, type, list head) are its
// first 64 bytes, and a node's order fields (graph, order, index) its first
// 40; but carved at 16-byte steps among names and operand arrays, an object
// started anywhere in a line, so those bytes spanned two lines three times
// in four: two misses, and two prefetches to keep them in flight, where one
// would do. So nodes and values (both a whole number of 64-byte lines, which
// Node.cpp and Value.cpp assert) come from slabs of their own, each object
// on a line boundary, with free lists of their own (an operand array of the
// same size freed elsewhere would not be aligned). They are made in the
// same order as before, a node next to its results; only names, operand
// and attribute arrays and attributes are in the other slabs.
//
// Note [Structural uniquing]
// Types and dim expressions are uniqued by their structure, not by a text
// key: a type by its kind, element type, dims and the other fields, where a
// symbolic dim counts by the address of its uniqued DimExpr (which stands
// for exactly one dim_param, Note [Lossless dim_param]) and an element type
// by its address; an expression by its kind, number, operands' addresses
// and (for a symbol) name. The key is hashed in place, so finding a type
// or expression that exists builds no string and allocates nothing; only a
// new expression builds its canonical text (it is its dim_param and orders
// terms), and it is still looked up by that text before it is made, so
// equal text means the same expression as before. Hashes mix addresses, but
// only the tables' slot order depends on them: nothing iterates the tables.
//
// Note [Name records]
// Each interned string is stored right after a small record (NameRecord):
// how many values of the model are defined with that name, and, while there
// is only one, that value. So the table of interned strings is the only hash
// table a name goes through: interning a result name finds its record, and
// registering, looking up or checking the name is then a pointer step, not
// another hash. Almost every name of a real model is defined once; only a
// name defined more than once (sibling subgraphs reusing it, shadowing in an
// importer, a rename in progress) is also entered in the scope table of each
// graph defining it, and stays so until its count is back to 0
// (Graph::registerValue).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_CONTEXT_H
#define ONNXIR_IR_CONTEXT_H

#include "onnxir/IR/DimExpr.h"
#include "onnxir/IR/LargePages.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"

#include <memory>
#include <optional>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class Node;
class Value;

class Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Interns `s`; equal strings give the same pointer for the Context's life.
  llvm::StringRef intern(llvm::StringRef s);
  /// The interned copy of `s`, or a null StringRef (data() == nullptr) if `s`
  /// was never interned. Name tables are keyed by the interned pointer, so a
  /// lookup hashes the string once, not once per scope.
  llvm::StringRef findInterned(llvm::StringRef s) const;
  /// intern() and findInterned() for a reader that resolves names in
  /// batches (Note [Prefetched names] in lib/Serialize/ProtoLift.cpp): it
  /// hashes a batch of names (nameHash) and starts loading their table slots
  /// (prefetchSlot), then the interned copies the slots point to
  /// (prefetchInterned), then interns or finds each name with its hash, so
  /// the cache misses of a whole batch overlap instead of queuing up. `h`
  /// must be nameHash(s); the prefetches are hints and change nothing.
  static uint32_t nameHash(llvm::StringRef s) { return hashOf(s); }
  void prefetchSlot(uint32_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & (slots_.size() - 1)]);
  }
  void prefetchInterned(llvm::StringRef s, uint32_t h) const;
  llvm::StringRef intern(llvm::StringRef s, uint32_t h);
  llvm::StringRef findInterned(llvm::StringRef s, uint32_t h) const;
  /// A copy of `s` that lives as long as the Context, not interned (for
  /// strings that are not looked up, like node names).
  llvm::StringRef save(llvm::StringRef s);

  //===--- Types ----------------------------------------------------------===//

  /// The uniqued type described by `spec`.
  const Type *getType(const TypeSpec &spec);
  /// tensor(elem) with a shape of `dims` (pass nullopt for unknown rank).
  const Type *getTensorType(DataType elem,
                            std::optional<llvm::ArrayRef<Dim>> dims);
  /// tensor(elem) with all dims known. Memoised (Note [Recent tensor
  /// types]).
  const Type *getTensorType(DataType elem, llvm::ArrayRef<int64_t> dims);
  /// tensor(elem) with the dims dimOf(e) of `exprs` (what a shape rule
  /// makes of the expressions it computed). Memoised (Note [Recent tensor
  /// types]).
  const Type *getTensorTypeOf(DataType elem, llvm::ArrayRef<const DimExpr *> exprs);
  const Type *getSequenceType(const Type *elem);
  const Type *getOptionalType(const Type *elem);
  const Type *getMapType(DataType key, const Type *value);
  /// A dim_param symbol.
  Dim symbolicDim(llvm::StringRef param);
  /// Number of distinct types created so far.
  size_t numTypes() const { return typeStorage_.size(); }
  /// The largest Type::nestingDepth of the types created so far (a verifier
  /// checking nesting limits needs no walk when this is within them).
  unsigned maxTypeNesting() const { return maxTypeNesting_; }

  //===--- Dimension expressions (DimExpr.h) ------------------------------===//

  /// The dim holding `e`: known for a non-negative constant, unknown for null
  /// or a negative constant, else symbolic with `e->dimParam()`.
  Dim dimOf(const DimExpr *e);
  /// The expression of a dim: a constant for a known dim, null for unknown.
  /// (Inline for what shape rules read most: small known dims, whose
  /// constants are made once, and symbolic dims holding their expression.)
  const DimExpr *exprOf(const Dim &d) {
    if (d.isKnown() && uint64_t(d.value) < uint64_t(kSmallConstants) && smallConstants_[d.value])
      return smallConstants_[d.value];
    if (d.isSymbolic() && d.expr) return d.expr;
    return exprOfSlow(d);
  }
  /// Whether getTensorType(elem, the dims dimOf(e) of `exprs`) is `t`, and
  /// making it so would change nothing in the context; decided from `t`
  /// alone, without a lookup. False when that is not cheap to tell (Note
  /// [Types a shape gives back] in DimExpr.cpp).
  bool isTensorTypeOf(const Type *t, DataType elem,
                      llvm::ArrayRef<const DimExpr *> exprs) const;
  /// The same for `t`'s own element type (defined) and the exprOf of its
  /// own dims: `t` is what a rule copying an operand's type makes of it.
  bool remakesItself(const Type *t) const;
  /// A symbolic dim with a fresh symbol `<prefix><n>` that no dim_param of
  /// the model (any type made so far) and no earlier fresh symbol uses.
  Dim freshSymbolDim(llvm::StringRef prefix = "unk__");
  /// True if `name` is a symbol some type made so far mentions.
  bool isKnownSymbol(llvm::StringRef name) const;
  /// How many fresh symbols freshSymbolDim has made so far: a computation
  /// that left this unchanged made none.
  unsigned numFreshSymbols() const { return nextFreshSymbol_; }
  /// Number of distinct dim expressions created so far.
  size_t numDimExprs() const { return exprs_.size(); }

  //===--- Storage of IR objects (see Note [IR storage]) -----------------===//

  /// Memory for an IR object (a Node, a Value, an operand array) of `size`
  /// bytes, carved from the context's slabs or reused from a freed object of
  /// the same size class. Used by the IR itself, not by users.
  void *allocateObject(size_t size);
  /// Gives back memory of allocateObject(size); later objects reuse it.
  void deallocateObject(void *p, size_t size);
  /// Memory for a Node or a Value: `size` (a multiple of kCacheLine) bytes
  /// starting on a cache line (Note [Line-aligned objects]).
  void *allocateLineObject(size_t size);
  /// Gives back memory of allocateLineObject(size).
  void deallocateLineObject(void *p, size_t size);
  static constexpr size_t kCacheLine = 64;

  //===--- Dependency epoch (Note [Known acyclic graphs], Verifier.cpp) ---===//

  /// Changes whenever a dependency between nodes may have been added
  /// anywhere in the model: an operand or output slot linked to a value, a
  /// node put into a graph, a subgraph attached to a node. Erasing and
  /// reordering leave it as it is. The IR calls noteNewDependencies itself;
  /// a call too many only costs the next verification a cycle search.
  uint64_t dependencyEpoch() const { return depEpoch_; }
  void noteNewDependencies() { ++depEpoch_; }

  //===--- Value names (see Note [Fresh names]) ---------------------------===//

  /// Number of values currently defined with `name` in the whole model.
  unsigned nameDefinitions(llvm::StringRef name) const;
  /// A name defined nowhere in the model, derived from `base`.
  llvm::StringRef freshName(llvm::StringRef base);

  /// Importer mode: when true, a new definition is only checked against its
  /// own graph (duplicates still fail), so files that shadow outer names can
  /// be lifted; lookup resolves the innermost definition and the verifier
  /// reports the shadowing. Importers set it for the duration of a lift.
  bool allowShadowing = false;

  /// Told of every Node, Value and Graph of this context just before it is
  /// destroyed (erased, or its owner is), e.g. so that handles to it held
  /// elsewhere (the Python bindings) can be marked dead; null: nobody is.
  struct DestroyObserver {
    virtual ~DestroyObserver() = default;
    virtual void destroyed(const void *object) = 0;
  };
  DestroyObserver *destroyObserver = nullptr;

  /// Where a node was read from: a text model's file, line and column
  /// (Note [Source locations]). Line 0: unknown.
  struct SourceLoc {
    llvm::StringRef file; ///< saved in this context
    unsigned line = 0, col = 0;
  };
  /// Records where `n` (a node of this context) was read from.
  void setSourceLoc(const Node *n, llvm::StringRef file, unsigned line, unsigned col);
  /// Where `n` was read from, or null: a node made in code, by a pass or by
  /// the binary reader has none.
  const SourceLoc *sourceLoc(const Node *n) const {
    if (sourceLocs_.empty()) return nullptr;
    auto it = sourceLocs_.find(n);
    return it == sourceLocs_.end() ? nullptr : &it->second;
  }
  /// Forgets where `n` was read from (Node::destroy calls it).
  void forgetSourceLoc(const Node *n) {
    if (!sourceLocs_.empty()) sourceLocs_.erase(n);
  }

  /// Makes room for `n` more interned names.
  void reserveNames(size_t n);
  /// A hint for a walk that will register or unregister definitions of
  /// `interned` (an interned name): starts loading its record. Changes
  /// nothing.
  static void prefetchNameRecord(llvm::StringRef interned) {
    const NameRecord *r = &record(interned);
    __builtin_prefetch(r, 1);
    __builtin_prefetch(reinterpret_cast<const char *>(r + 1) - 1, 1);
  }
  /// nameDefinitions for an interned name (no hashing).
  unsigned nameDefinitionsInterned(llvm::StringRef interned) const {
    return record(interned).count;
  }

private:
  friend struct DimExprBuilder;
  friend class Graph;
  /// Note [Recent tensor types]: one slot of the memo; `words` holds the
  /// expressions' addresses or the dims' values.
  static constexpr size_t kTypeMemoRank = 6, kTypeMemoSlots = 256;
  struct TypeMemoSlot {
    const Type *type = nullptr;
    int32_t elem = 0;
    uint16_t form = 0, rank = 0;
    uint64_t words[kTypeMemoRank];
  };
  /// The slot of (elem, form, words), made on first use.
  TypeMemoSlot &typeMemoSlot(int32_t elem, uint16_t form, const uint64_t *words, size_t rank);
  static bool typeMemoHolds(const TypeMemoSlot &s, int32_t elem, uint16_t form,
                            const uint64_t *words, size_t rank);
  std::unique_ptr<TypeMemoSlot[]> typeMemo_;
  /// What identifies a type (Note [Structural uniquing]); `syms` holds the
  /// expression of each symbolic dim (null for the others).
  struct TypeKey {
    Type::Kind kind;
    bool hasElem;
    int32_t elem;
    bool hasShape;
    llvm::ArrayRef<Dim> dims;
    const DimExpr *const *syms;
    const Type *inner;
    llvm::StringRef opaqueDomain, opaqueName, denotation, extras;
    unsigned hash;
  };
  struct TypeKeyInfo {
    static Type *getEmptyKey() { return llvm::DenseMapInfo<Type *>::getEmptyKey(); }
    static Type *getTombstoneKey() { return llvm::DenseMapInfo<Type *>::getTombstoneKey(); }
    static unsigned getHashValue(const Type *t) { return t->hash_; }
    static unsigned getHashValue(const TypeKey &k) { return k.hash; }
    static bool isEqual(const Type *a, const Type *b) { return a == b; }
    static bool isEqual(const TypeKey &k, const Type *t);
  };
  /// What identifies a dim expression (Note [Structural uniquing]).
  struct ExprKey {
    DimExpr::Kind kind;
    int64_t value;
    llvm::ArrayRef<const DimExpr *> ops;
    llvm::StringRef name; ///< a symbol's name, else empty
    unsigned hash;
  };
  struct ExprKeyInfo {
    static DimExpr *getEmptyKey() { return llvm::DenseMapInfo<DimExpr *>::getEmptyKey(); }
    static DimExpr *getTombstoneKey() { return llvm::DenseMapInfo<DimExpr *>::getTombstoneKey(); }
    static unsigned getHashValue(const DimExpr *e) { return e->hash_; }
    static unsigned getHashValue(const ExprKey &k) { return k.hash; }
    static bool isEqual(const DimExpr *a, const DimExpr *b) { return a == b; }
    static bool isEqual(const ExprKey &k, const DimExpr *e);
  };
  const DimExpr *exprOfSlow(const Dim &d);
  static unsigned hashExprKey(DimExpr::Kind kind, int64_t value,
                              llvm::ArrayRef<const DimExpr *> ops, llvm::StringRef name);
  const Type *getTypeImpl(Type::Kind kind, bool hasElem, int32_t elem, bool hasShape,
                          llvm::ArrayRef<Dim> dims, const Type *inner,
                          llvm::StringRef opaqueDomain, llvm::StringRef opaqueName,
                          llvm::StringRef denotation, llvm::StringRef extras);
  /// The expression a symbolic dim stands for: its `expr` when that is the
  /// one its dim_param reads as, else the dim_param read (dimFromParam).
  const DimExpr *symbolicExpr(const Dim &d);
  /// The interned dim_param of a non-constant expression.
  llvm::StringRef paramOf(const DimExpr *e);
  /// What the model defines with one name (Note [Name records]); placed
  /// right before the characters of every interned string.
  struct NameRecord {
    Value *single = nullptr; ///< the definition, while !inScopes
    Graph *graph = nullptr;  ///< the graph defining `single`
    unsigned count = 0;      ///< definitions in the whole model
    bool inScopes = false;   ///< definitions are in their graphs' scope tables
  };
  static NameRecord &record(llvm::StringRef interned) {
    return *reinterpret_cast<NameRecord *>(const_cast<char *>(interned.data()) -
                                           sizeof(NameRecord));
  }
  /// One slot of the open-addressing table of interned strings.
  struct Slot {
    const char *data = nullptr; ///< null: empty slot
    size_t size = 0;
    uint32_t hash = 0;
  };
  static uint32_t hashOf(llvm::StringRef s);
  void growStrings(size_t minSlots);
  uint64_t depEpoch_ = 1;
  llvm::BumpPtrAllocatorImpl<detail::SlabSource, 4096, 4096, 32> alloc_;
  static constexpr size_t kObjectGrain = 16, kPooledObjectMax = 1024;
  struct FreeObject {
    FreeObject *next;
  };
  FreeObject *freeObjects_[kPooledObjectMax / kObjectGrain + 1] = {};
  /// Nodes and values (Note [Line-aligned objects]).
  llvm::BumpPtrAllocatorImpl<detail::SlabSource, 4096, 4096, 32> lineAlloc_;
  static constexpr size_t kPooledLineMax = 512;
  FreeObject *freeLines_[kPooledLineMax / kCacheLine + 1] = {};
  using SlotTable = std::vector<Slot, detail::LargePageStdAllocator<Slot>>;
  SlotTable slots_; ///< power-of-two size, at most half full
  size_t numStrings_ = 0;
  llvm::DenseSet<Type *, TypeKeyInfo> types_;
  std::vector<std::unique_ptr<Type>> typeStorage_;
  unsigned maxTypeNesting_ = 0;
  llvm::StringMap<unsigned> nextSuffix_;
  // Dimension expressions: uniqued by structure and by canonical text (Note
  // [Structural uniquing]); the expression of each interned dim_param; every
  // symbol name seen; the fresh-symbol counter.
  llvm::DenseSet<DimExpr *, ExprKeyInfo> exprSet_;
  /// The constants 0..kSmallConstants-1, once made (what inference asks
  /// for most: every known dim read as an expression).
  static constexpr int64_t kSmallConstants = 256;
  const DimExpr *smallConstants_[kSmallConstants] = {};
  llvm::StringMap<DimExpr *> exprs_;
  std::vector<std::unique_ptr<DimExpr>> exprStorage_;
  llvm::DenseMap<const char *, const DimExpr *> paramExprs_;
  llvm::DenseMap<const Node *, SourceLoc> sourceLocs_; ///< Note [Source locations]
  llvm::StringRef lastSourceFile_;
  llvm::StringMap<char> symbolNames_;
  unsigned nextFreshSymbol_ = 0;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_CONTEXT_H
