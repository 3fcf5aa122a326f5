//===- Value.h - SSA values and their intrusive use lists -----------------===//
//
// Note [Use lists]
// A Value has one definition (graph input, initializer, or result #i of a
// Node) and an intrusive doubly linked list of Uses. A Use is one operand slot
// of a Node, or one output slot of a Graph (held by the graph's return node,
// so "dead" means "no uses"). Linking, unlinking and redirecting a Use are
// O(1); the operand index is derived from the Use's address. An omitted
// optional input is a Use with a null value that is linked nowhere.
//
// Nodes in nested graphs use outer Values directly (there are no capture
// placeholders), so an outer value's use list shows its nested users.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_VALUE_H
#define ONNXIR_IR_VALUE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/iterator_range.h"

#include <cassert>
#include <iterator>
#include <list>
#include <memory>

ONNXIR_API_BEGIN
namespace onnxir {

class Context;
class Graph;
class Node;
class Value;

/// One operand slot of a Node (or output slot of a Graph's return node).
class Use {
public:
  Use() = default;
  Use(const Use &) = delete;
  Use &operator=(const Use &) = delete;
  ~Use() { assert(!value_ && "Use destroyed while linked"); }

  /// The used value; null for an omitted optional input.
  Value *get() const { return value_; }
  /// Redirects this slot to `v` (null empties it). O(1).
  void set(Value *v);
  /// The node holding this operand (a return node for graph outputs).
  Node *getOwner() const { return owner_; }
  /// Index of this slot in its owner's operand list.
  unsigned getOperandNo() const;
  /// Next use of the same value.
  Use *getNext() const { return next_; }
  /// True if this slot's links agree with its neighbours: an empty slot has
  /// none; a linked one is pointed at by what its back link names, which is
  /// its value's head or the next-link of another use of the same value.
  /// O(1): one look at the previous use. For the verifier, which checks every
  /// slot this way and the lists' lengths against Value::numUses.
  bool linksConsistent() const;

private:
  friend class Node;
  friend class Value;
  void link(Value *v);
  void unlink();
  /// Moves the link of `from` to this empty slot, keeping its place in the
  /// value's use list; `from` is left empty. O(1), no new dependency.
  void takeLink(Use &from);
  Value *value_ = nullptr;
  Use *next_ = nullptr;
  Use **prev_ = nullptr;
  Node *owner_ = nullptr;
};

/// Forward iterator over a value's uses.
class UseIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Use;
  using difference_type = std::ptrdiff_t;
  using pointer = Use *;
  using reference = Use &;
  explicit UseIterator(Use *u = nullptr) : u_(u) {}
  Use &operator*() const { return *u_; }
  Use *operator->() const { return u_; }
  UseIterator &operator++() { u_ = u_->getNext(); return *this; }
  UseIterator operator++(int) { auto t = *this; ++*this; return t; }
  bool operator==(const UseIterator &o) const { return u_ == o.u_; }
  bool operator!=(const UseIterator &o) const { return u_ != o.u_; }

private:
  Use *u_;
};

/// What a ValueInfoProto says about a value besides its name: the fields of
/// a value_info record and of a graph output's declaration. Copied and moved
/// as one (ValueInfoRecord and OutputInfo are made of it).
struct ValueInfoFields {
  const Type *type = nullptr;   ///< the declared type
  bool hasType = false;         ///< the proto had a `type` field
  /// (Note [Out-of-line fields].)
  OutOfLineString docString;
  OutOfLine<Metadata> metadata;
  OutOfLineString extras;           ///< opaque serializer bytes
};

/// A record of GraphProto.value_info, kept in order for a faithful round trip.
/// `value` is set when the name resolves to a value defined in the same graph;
/// otherwise `name` keeps the text. A value may have several records (files
/// repeat value_info entries); the value knows all of them, so erasing it
/// marks every one, and moving its node to another graph carries them along
/// (see Graph::addValueInfo).
/// The record's `type` is used when value == null, or when it differs from
/// the value's.
struct ValueInfoRecord : ValueInfoFields {
  Value *value = nullptr;
  std::string name;             ///< used when value == null
  bool erased = false;          ///< its value was erased; skipped on lowering
  /// The fields the proto held, apart from the name.
  ValueInfoFields &fields() { return *this; }
  const ValueInfoFields &fields() const { return *this; }
};

// Note [Pooled value_info records]
// A graph's value_info records are a std::list (a record's address and
// iterator stay valid while others come and go, and moving a node to another
// graph splices its results' records over), but its nodes come from the
// context's slabs and free lists (Note [IR storage] in Context.h), not one
// malloc each: inference of a 10^6-node model adds a record per typed value,
// and those mallocs were about a quarter of its time. Every graph of a model
// shares its context, so the lists of any two graphs a node can move between
// have equal allocators and splicing stays O(1) and allowed. The slabs are
// released with the context, which outlives its graphs.
namespace detail {
void *allocateIRObject(Context &ctx, size_t size);
void deallocateIRObject(Context &ctx, void *p, size_t size);

/// A std allocator drawing on a context's object storage.
template <class T> class ContextAllocator {
public:
  using value_type = T;
  explicit ContextAllocator(Context &ctx) : ctx_(&ctx) {}
  template <class U> ContextAllocator(const ContextAllocator<U> &o) : ctx_(o.ctx_) {}
  T *allocate(size_t n) { return static_cast<T *>(allocateIRObject(*ctx_, n * sizeof(T))); }
  void deallocate(T *p, size_t n) { deallocateIRObject(*ctx_, p, n * sizeof(T)); }
  template <class U> bool operator==(const ContextAllocator<U> &o) const { return ctx_ == o.ctx_; }
  template <class U> bool operator!=(const ContextAllocator<U> &o) const { return ctx_ != o.ctx_; }

private:
  template <class U> friend class ContextAllocator;
  Context *ctx_;
};
} // namespace detail

/// A graph's value_info records (Note [Pooled value_info records]).
using ValueInfoList = std::list<ValueInfoRecord, detail::ContextAllocator<ValueInfoRecord>>;

class Value {
public:
  enum class Kind : uint8_t {
    GraphInput,        ///< in Graph::inputs(); may also have an initializer
    Initializer,       ///< an initializer that is not a graph input
    SparseInitializer, ///< a sparse initializer that is not a graph input
    NodeResult,        ///< result #resultIndex() of definingNode()
  };

private:
  // First, so that they are the value's first line (Note [Line-aligned
  // objects] in Context.h): what walks over the graph read of a value.
  Kind kind_;
  unsigned index_;
  unsigned numUses_ = 0; ///< length of the use list
  Graph *graph_;       // for inputs/initializers
  Node *node_;         // for node results
  llvm::StringRef name_;
  const Type *type_ = nullptr;
  Use *firstUse_ = nullptr;

public:

  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;
  ~Value();

  //===--- Definition ------------------------------------------------------===//
  Kind kind() const { return kind_; }
  /// The graph whose scope defines this value.
  Graph *getGraph() const;
  /// The node defining this value (null for graph inputs and initializers).
  Node *definingNode() const { return kind_ == Kind::NodeResult ? node_ : nullptr; }
  unsigned resultIndex() const { return index_; }
  bool isGraphInput() const { return kind_ == Kind::GraphInput; }
  /// True if the value carries a dense initializer tensor (also for graph
  /// inputs with a default).
  bool hasInitializer() const { return tensor_ != nullptr; }
  /// True if it is a constant: an initializer that is not a graph input.
  bool isConstantInitializer() const { return kind_ == Kind::Initializer; }
  Tensor *initializer() const { return tensor_.get(); }
  SparseTensor *sparseInitializer() const { return sparse_.get(); }

  //===--- Name and type --------------------------------------------------===//
  llvm::StringRef name() const { return name_; }
  /// Renames the value everywhere at once. Fails (and changes nothing) if the
  /// name is visible from the value's scope or defined in a nested scope.
  absl::Status setName(llvm::StringRef name);
  /// Renames to `base` or, if taken, a fresh name derived from it.
  void setNameOrFresh(llvm::StringRef base);

  const Type *type() const { return type_; }
  void setType(const Type *t) { type_ = t; }

  /// Doc string and metadata of the ValueInfoProto that declared a graph
  /// input; opaque serializer bytes for it.
  OutOfLineString docString; ///< Note [Out-of-line fields]
  OutOfLine<Metadata> metadata;
  OutOfLineString extras;
  /// The first of the graph's value_info records for this value, if any.
  ValueInfoRecord *valueInfo() const { return vi_.empty() ? nullptr : &*vi_.front(); }
  /// How many value_info records of its graph refer to this value.
  unsigned numValueInfoRecords() const { return (unsigned)vi_.size(); }

  //===--- Uses -----------------------------------------------------------===//
  bool useEmpty() const { return firstUse_ == nullptr; }
  bool hasOneUse() const { return firstUse_ && !firstUse_->getNext(); }
  /// O(1): kept by the use list.
  unsigned numUses() const { return numUses_; }
  llvm::iterator_range<UseIterator> uses() const {
    return {UseIterator(firstUse_), UseIterator()};
  }
  Use *firstUse() const { return firstUse_; }
  /// A hint for bulk readers: starts loading what linking a use to this
  /// value writes (the use count and the list head). Changes nothing.
  void prefetchForLink() const {
    // Both in the value's first line (Note [Line-aligned objects]).
    __builtin_prefetch(&firstUse_, 1);
  }
  /// True if some use is a graph output (of any graph).
  bool isGraphOutput() const;

  /// Points every use at `v`, across nested scopes. Graph outputs included:
  /// the output slot then refers to `v` (the interface name moves with it
  /// only if the caller renames). O(uses).
  void replaceAllUsesWith(Value *v);
  /// Points the uses for which `pred` holds at `v`.
  void replaceUsesIf(Value *v, llvm::function_ref<bool(Use &)> pred);

private:
  friend class Use;
  friend class Node;
  friend class Graph;
  Value(Kind k, Graph *g, Node *n, unsigned idx) : kind_(k), index_(idx), graph_(g), node_(n) {}
  /// Values live in their context's storage (Note [IR storage]).
  static Value *create(Context &ctx, Kind k, Graph *g, Node *n, unsigned idx);
  static void destroy(Context &ctx, Value *v);
  void syncTensorName();

  std::unique_ptr<Tensor> tensor_;
  std::unique_ptr<SparseTensor> sparse_;
  // Every value_info record of the defining graph whose `value` is this one
  // (Graph::addValueInfo keeps it; ~Value marks them erased).
  llvm::SmallVector<ValueInfoList::iterator, 1> vi_;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_VALUE_H
