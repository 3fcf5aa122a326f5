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
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_CONTEXT_H
#define ONNXIR_IR_CONTEXT_H

#include "onnxir/IR/DimExpr.h"
#include "onnxir/IR/Type.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"

#include <memory>
#include <optional>

namespace onnxir {

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
  /// A copy of `s` that lives as long as the Context, not interned (for
  /// strings that are not looked up, like node names).
  llvm::StringRef save(llvm::StringRef s);

  //===--- Types ----------------------------------------------------------===//

  /// The uniqued type described by `spec`.
  const Type *getType(const TypeSpec &spec);
  /// tensor(elem) with a shape of `dims` (pass nullopt for unknown rank).
  const Type *getTensorType(DataType elem,
                            std::optional<llvm::ArrayRef<Dim>> dims);
  /// tensor(elem) with all dims known.
  const Type *getTensorType(DataType elem, llvm::ArrayRef<int64_t> dims);
  const Type *getSequenceType(const Type *elem);
  const Type *getOptionalType(const Type *elem);
  const Type *getMapType(DataType key, const Type *value);
  /// A dim_param symbol.
  Dim symbolicDim(llvm::StringRef param);
  /// Number of distinct types created so far.
  size_t numTypes() const { return types_.size(); }
  /// The largest Type::nestingDepth of the types created so far (a verifier
  /// checking nesting limits needs no walk when this is within them).
  unsigned maxTypeNesting() const { return maxTypeNesting_; }

  //===--- Dimension expressions (DimExpr.h) ------------------------------===//

  /// The dim holding `e`: known for a non-negative constant, unknown for null
  /// or a negative constant, else symbolic with `e->dimParam()`.
  Dim dimOf(const DimExpr *e);
  /// The expression of a dim: a constant for a known dim, null for unknown.
  const DimExpr *exprOf(const Dim &d);
  /// A symbolic dim with a fresh symbol `<prefix><n>` that no dim_param of
  /// the model (any type made so far) and no earlier fresh symbol uses.
  Dim freshSymbolDim(llvm::StringRef prefix = "unk__");
  /// True if `name` is a symbol some type made so far mentions.
  bool isKnownSymbol(llvm::StringRef name) const;
  /// Number of distinct dim expressions created so far.
  size_t numDimExprs() const { return exprs_.size(); }

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

  /// Registry maintenance; called by Value/Graph, not by users.
  void registerName(llvm::StringRef interned);
  void unregisterName(llvm::StringRef interned);
  /// Makes room for `n` more interned, registered names.
  void reserveNames(size_t n);
  /// nameDefinitions for an interned name (no string hashing).
  unsigned nameDefinitionsInterned(llvm::StringRef interned) const;

private:
  friend struct DimExprBuilder;
  llvm::BumpPtrAllocator alloc_;
  llvm::DenseSet<llvm::StringRef> strings_;
  llvm::StringMap<Type *> types_;
  std::vector<std::unique_ptr<Type>> typeStorage_;
  unsigned maxTypeNesting_ = 0;
  llvm::DenseMap<const char *, unsigned> nameCount_; ///< by interned pointer
  llvm::StringMap<unsigned> nextSuffix_;
  // Dimension expressions: uniqued by canonical text; the expression of each
  // interned dim_param; every symbol name seen; the fresh-symbol counter.
  llvm::StringMap<DimExpr *> exprs_;
  std::vector<std::unique_ptr<DimExpr>> exprStorage_;
  llvm::DenseMap<const char *, const DimExpr *> paramExprs_;
  llvm::StringMap<char> symbolNames_;
  unsigned nextFreshSymbol_ = 0;
};

} // namespace onnxir

#endif // ONNXIR_IR_CONTEXT_H
