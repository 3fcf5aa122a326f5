//===- Node.h - Operator applications -------------------------------------===//
//
// A Node is one NodeProto: (domain, op_type, overload), a name, attributes in
// their original order, operands (Uses, in order; an omitted optional input is
// an empty slot) and results (Values it owns; an omitted optional output is a
// null slot). Nodes live in a Graph's ordered node list.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_NODE_H
#define ONNXIR_IR_NODE_H

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/ilist_node.h"

#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;

/// Sharding of one tensor (ShardingSpecProto), kept as plain data.
struct ShardingSpec {
  struct SimpleShardedDim {
    enum class Kind : uint8_t { None, Value, Param } kind = Kind::None;
    int64_t dimValue = 0;
    std::string dimParam;
    std::optional<int64_t> numShards;
    std::string extras;
  };
  struct ShardedDim {
    std::optional<int64_t> axis;
    std::vector<SimpleShardedDim> simpleSharding;
    std::string extras;
  };
  std::optional<std::string> tensorName;
  std::vector<int64_t> device;
  std::vector<std::pair<std::optional<int64_t>, std::vector<int64_t>>> indexToDeviceGroupMap;
  std::vector<std::string> indexToDeviceGroupMapExtras;
  std::vector<ShardedDim> shardedDim;
  std::string extras;
};

/// NodeDeviceConfigurationProto.
struct NodeDeviceConfiguration {
  std::optional<std::string> configurationId;
  std::vector<ShardingSpec> shardingSpec;
  std::optional<int32_t> pipelineStage;
  std::string extras;
};

class Node : public llvm::ilist_node<Node> {
  // First, after the list links: what order checks read of a defining node
  // (isBefore, indexInGraph), the node's first line (Note [Line-aligned
  // objects] in Context.h; prefetchOperandDefinitions).
  Graph *graph_;
  uint64_t order_ = 0;
  mutable unsigned index_ = 0; ///< valid while graph_->indexValid_
  unsigned isReturn_ : 1;
  /// Operand slots allocated (Note [Operand capacity]); here, beside the
  /// flag, so that the node stays three lines.
  unsigned capOperands_ : 31;

public:
  ~Node();
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;

  //===--- Identity -------------------------------------------------------===//
  llvm::StringRef opType() const { return opType_; }
  llvm::StringRef domain() const { return domain_; }
  llvm::StringRef overload() const { return overload_; }
  void setOpType(llvm::StringRef s);
  void setDomain(llvm::StringRef s);
  void setOverload(llvm::StringRef s);
  /// True for `op` in the default domain ("" or "ai.onnx").
  bool is(llvm::StringRef op) const;

  /// Node names are not scoped and need not be unique.
  llvm::StringRef name() const { return name_; }
  void setName(llvm::StringRef s);

  /// Rarely filled; one pointer each while empty (Note [Out-of-line fields]).
  OutOfLineString docString;
  OutOfLine<Metadata> metadata;
  OutOfLine<std::vector<NodeDeviceConfiguration>> deviceConfigurations;
  OutOfLineString extras; ///< opaque serializer bytes

  /// The graph holding this node (for a return node, the graph it ends).
  Graph *getGraph() const { return graph_; }
  /// True for the sentinel that holds a graph's outputs.
  bool isReturn() const { return isReturn_; }

  //===--- Operands -------------------------------------------------------===//
  unsigned numOperands() const { return numOperands_; }
  Value *operand(unsigned i) const { return operands_[i].get(); }
  Use &operandUse(unsigned i) { return operands_[i]; }
  Use *operandBegin() const { return operands_; }
  llvm::ArrayRef<Use> operandUses() const { return {operands_, numOperands_}; }
  /// Hints for walks that check operands against their values and their
  /// definitions (Note [Verifier lookahead] in lib/IR/Verifier.cpp): the
  /// first starts loading each used value and the use before this one in
  /// its list; the second, meant for a few nodes later, once the values have
  /// arrived, the defining nodes' graph and order. They change nothing.
  void prefetchOperandValues() const;
  void prefetchOperandDefinitions() const;
  /// Hints for walks that write nodes out (Note [Save lookahead] in
  /// lib/Serialize/ProtoLower.cpp): the first starts loading the values the
  /// node uses and defines and its attribute array; the second, meant for a
  /// few nodes later, once those have arrived, the characters of their names
  /// and of the node's own name. They change nothing.
  void prefetchValues() const;
  void prefetchNames() const;
  /// A hint for walks that ask whether a node's results are used (-dce):
  /// starts loading its array of results. Changes nothing.
  void prefetchResults() const { __builtin_prefetch(&results_); }
  /// A hint: starts loading the node's own lines, all of them (a node is
  /// whole lines from a line's start, Note [Line-aligned objects]).
  void prefetchLines() const {
    const char *p = reinterpret_cast<const char *>(this);
    for (size_t off = 0; off < sizeof(Node); off += 64) __builtin_prefetch(p + off);
  }
  /// A hint: starts loading the node's array of operand slots.
  void prefetchOperandSlots() const {
    if (!numOperands_) return;
    __builtin_prefetch(operands_);
    __builtin_prefetch(reinterpret_cast<const char *>(operands_ + numOperands_) - 1);
  }
  /// Operand values in order (null for empty slots).
  std::vector<Value *> operands() const;
  void setOperand(unsigned i, Value *v) { operands_[i].set(v); }
  /// Inserts a slot at `i` (may be null). O(operands after i), amortised:
  /// appending is O(1) (Note [Operand capacity]).
  void insertOperand(unsigned i, Value *v);
  void addOperand(Value *v) { insertOperand(numOperands_, v); }
  /// Replaces every operand with `vs` (null for empty slots) in one step.
  void setOperands(llvm::ArrayRef<Value *> vs);
  /// Removes slot `i`. O(operands after i): removing the last is O(1).
  void removeOperand(unsigned i);
  /// Empties every operand slot, here and in nested graphs.
  void dropAllReferences();

  //===--- Results --------------------------------------------------------===//
  unsigned numResults() const { return (unsigned)results_.size(); }
  /// Result #i, or null for an omitted optional output.
  Value *result(unsigned i) const { return results_[i]; }
  std::vector<Value *> results() const;
  /// Appends a result named `name` (or a fresh name from `base` when empty).
  /// Fails if the name is taken in the scope.
  absl::StatusOr<Value *> addResult(llvm::StringRef name);
  /// Appends an omitted (empty) result slot.
  void addEmptyResult();
  /// Turns result #i into an empty slot; it must be unused.
  absl::Status eraseResult(unsigned i);
  /// Removes trailing empty result slots.
  void trimTrailingEmptyResults();
  /// True if some result has a use.
  bool hasUses() const;

  //===--- Attributes (kept in original order) ----------------------------===//
  unsigned numAttributes() const { return numAttrs_; }
  Attribute &attribute(unsigned i) const { return *attrs_[i]; }
  /// Appends a new attribute named `name` with an empty payload, made in the
  /// context's storage (Note [IR storage]): addAttr(make_unique<Attribute>(
  /// name)) without a heap allocation. No check for an attribute of that
  /// name (as addAttr).
  Attribute &newAttr(llvm::StringRef name);
  /// Makes room for `n` more attributes (no allocation until then).
  void reserveAttributes(unsigned n);
  /// Lookup by name; null if absent.
  Attribute *getAttr(llvm::StringRef name) const;
  /// Appends an attribute (or replaces the one with the same name).
  Attribute &setAttr(std::unique_ptr<Attribute> a);
  Attribute &addAttr(std::unique_ptr<Attribute> a);
  /// Removes by name; true if one was removed.
  bool removeAttr(llvm::StringRef name);
  // Attribute values with the schema's defaults: NodeContext (Ops/OpContext.h).
  /// Every subgraph held by this node's attributes, in attribute order.
  std::vector<Graph *> subgraphs() const;
  /// True if some attribute holds a subgraph. O(1): the node counts the
  /// subgraphs of its attributes (Attribute::addGraph and takeGraph keep the
  /// count of the node they are attached to), so walks over millions of
  /// nodes do not touch every attribute.
  bool hasSubgraphs() const { return numSubgraphs_ != 0; }
  unsigned numSubgraphs() const { return numSubgraphs_; }

  //===--- Position -------------------------------------------------------===//
  /// True if this node comes before `other` in the same graph. Amortised O(1).
  bool isBefore(const Node *other) const;
  /// Moves this node, with its subgraphs, right before `pos` (possibly in
  /// another graph). Refused (nothing changes) when the move would break
  /// scoping (Note [Scopes]):
  ///  - into one of its own subgraphs;
  ///  - a value it or its subgraphs use from outside would not be visible
  ///    there: not defined in the target graph or an enclosing one, or
  ///    defined after the new position (after the node holding the target);
  ///  - a user of a result would not be inside the target's scope, or would
  ///    then come first (it, or the target-graph node holding it, precedes
  ///    the new position);
  ///  - a result name would clash in the target scope, or a name defined in
  ///    its subgraphs would shadow one visible there.
  /// value_info records of its results follow them to the target graph (to
  /// the end of its list). Cost: one walk over its subgraphs, and amortised
  /// O(1) per operand, capture and use.
  ///
  /// Given `a = Relu(x); b = Neg(a)`: `b->moveBefore(a)` and
  /// `a->moveToEnd(g)` fail; `a->moveAfter(b)` after `b->setOperand(0, x)`
  /// gives `b = Neg(x); a = Relu(x)`.
  ///
  /// To reorder a whole graph through intermediate states that break order
  /// (a topological sort), use Graph::reorderNodes.
  absl::Status moveBefore(Node *pos);
  absl::Status moveAfter(Node *pos);
  /// Moves to the end of `g`'s node list with the same checks.
  absl::Status moveToEnd(Graph *g);
  /// The node of `g` that contains this node (itself, or the node holding the
  /// subgraph that contains it); null if the node is not inside `g`.
  Node *ancestorIn(const Graph *g) const;
  /// Deletes the node. Fails if a result is still used.
  absl::Status erase();

  /// Position inside the graph (0-based); the return node's is the number of
  /// nodes. Amortised O(1): positions are numbered once and renumbered only
  /// after the graph's node list changed. For diagnostics; not thread-safe.
  unsigned indexInGraph() const;

private:
  friend class Attribute;
  friend class Graph;
  friend class Use;
  friend class Value;
  Node(Graph *g, llvm::StringRef opType, llvm::StringRef domain);
  /// Nodes live in their context's storage (Note [IR storage]).
  static Node *create(Graph *g, llvm::StringRef opType, llvm::StringRef domain);
  static void destroy(Node *n);
  /// An operand array of `n` empty slots owned by this node.
  Use *allocateOperands(unsigned n);
  void freeOperands(Use *uses, unsigned n);
  /// Makes room for one more operand, keeping the slots' links (Note
  /// [Operand capacity]).
  void growOperands();
  static void moveLink(Use &to, Use &from) { to.takeLink(from); }
  void unregisterResults();
  static absl::Status moveImpl(Node *self, Graph *target, Node *pos);

  llvm::StringRef opType_, domain_, overload_, name_;
  Use *operands_ = nullptr; ///< numOperands_ slots (Note [IR storage])
  unsigned numOperands_ = 0;
  unsigned numSubgraphs_ = 0; ///< subgraphs held by attrs_ (see hasSubgraphs)
  llvm::SmallVector<Value *, 1> results_; ///< owned; null for empty slots
  /// Owned attributes, in order; the array is in the context's storage, each
  /// attribute there too (newAttr) or on the heap (addAttr, setAttr).
  Attribute **attrs_ = nullptr;
  unsigned numAttrs_ = 0, capAttrs_ = 0;
  void appendAttr(Attribute *a);
  void destroyAttr(Attribute *a);
  /// Changes numSubgraphs_, keeping the graph's count of such nodes.
  void addToSubgraphCount(int delta);
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_NODE_H
