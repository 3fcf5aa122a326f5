//===- Graph.h - A scope: inputs, initializers, ordered nodes, outputs ----===//
//
// A Graph is one GraphProto, or a function body. It is a name scope chained
// to the scopes of the graphs enclosing it (Note [Scopes]).
//
// Note [Scopes]
// A name is defined at most once in a graph and must not shadow a name
// visible from an enclosing graph (ONNX IR.md). Lookup walks from a graph to
// its parent node's graph and so on to the top. Sibling subgraphs may reuse
// names. Definitions are registered when a value is created and unregistered
// when it is destroyed or its node leaves the graph, so the table never
// drifts from the IR.
//
// Note [Outputs]
// Graph outputs are the operands of a return node that is not in the node
// list. So a value that feeds an output has a use, and DCE needs no special
// case. Each output slot also keeps what its ValueInfoProto said (type, doc,
// metadata), which may differ from the value's own type.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_GRAPH_H
#define ONNXIR_IR_GRAPH_H

#include "onnxir/IR/Context.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/simple_ilist.h"

#include <list>
#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Function;
class Model;
namespace detail {
struct AcyclicMark;
} // namespace detail

/// Maps values of a cloned region to their copies. Values absent from the
/// map (captured outer values) are kept as they are.
class IRMapping {
public:
  void map(const Value *from, Value *to) { map_[from] = to; }
  Value *lookupOrSelf(Value *v) const {
    auto it = map_.find(v);
    return it == map_.end() ? v : it->second;
  }
  Value *lookupOrNull(const Value *v) const {
    auto it = map_.find(v);
    return it == map_.end() ? nullptr : it->second;
  }
  bool contains(const Value *v) const { return map_.count(v); }

private:
  llvm::DenseMap<const Value *, Value *> map_;
};

/// What an output's ValueInfoProto said.
struct OutputInfo : ValueInfoFields {};

/// GraphProto.quantization_annotation entry (TensorAnnotation), by name.
struct QuantizationAnnotation {
  std::optional<std::string> tensorName;
  Metadata quantParameterTensorNames;
  std::string extras;
};

class Graph {
public:
  using NodeList = llvm::simple_ilist<Node>;

  explicit Graph(Context &ctx);
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  Context &getContext() const { return *ctx_; }

  //===--- Parents --------------------------------------------------------===//
  /// The node whose attribute holds this graph; null for a top-level graph.
  Node *parentNode() const;
  Attribute *parentAttribute() const { return parentAttr_; }
  /// The enclosing graph (the parent node's graph), or null.
  Graph *parentGraph() const;
  /// The function whose body this is (for nested graphs: of the top graph).
  Function *parentFunction() const { return topLevel()->function_; }
  /// The model whose main graph or function body this is (through the top
  /// graph); null for a graph that belongs to no model.
  Model *parentModel() const { return topLevel()->model_; }
  /// True if `this` is `g` or nested (at any depth) inside `g`.
  bool isNestedIn(const Graph *g) const;
  /// Nesting depth: 0 for a top-level graph.
  unsigned depth() const;
  const Graph *topLevel() const;

  //===--- Properties -----------------------------------------------------===//
  std::string name;
  std::string docString;
  Metadata metadata;
  std::vector<QuantizationAnnotation> quantizationAnnotations;
  std::string extras; ///< opaque serializer bytes

  //===--- Inputs ---------------------------------------------------------===//
  llvm::ArrayRef<Value *> inputs() const { return inputs_; }
  unsigned numInputs() const { return (unsigned)inputs_.size(); }
  Value *input(unsigned i) const { return inputs_[i]; }
  /// Adds a graph input at position `pos` (default: the end). Fails on a name
  /// clash in the scope chain.
  absl::StatusOr<Value *> addInput(llvm::StringRef name, const Type *type = nullptr,
                                   int pos = -1);
  /// Removes input #i; it must be unused and have no initializer.
  absl::Status removeInput(unsigned i);

  //===--- Initializers ---------------------------------------------------===//
  /// Dense initializers in their original order (inputs with defaults too).
  llvm::ArrayRef<Value *> initializers() const { return initializers_; }
  llvm::ArrayRef<Value *> sparseInitializers() const { return sparse_; }
  /// Adds a constant initializer (not a graph input).
  absl::StatusOr<Value *> addInitializer(llvm::StringRef name, Tensor t);
  /// Adds a sparse initializer (not a graph input).
  absl::StatusOr<Value *> addSparseInitializer(llvm::StringRef name, SparseTensor t);
  /// Gives an existing graph input a default (an initializer of the same name).
  void setInputDefault(Value *input, Tensor t);
  void setInputSparseDefault(Value *input, SparseTensor t);
  /// Removes every initializer (dense or sparse, not graph inputs) for which
  /// `pred` holds; they must be unused. Returns how many. O(initializers).
  unsigned removeInitializersIf(llvm::function_ref<bool(Value *)> pred);
  /// Drops the default of a graph input.
  void removeInputDefault(Value *input);

  //===--- Nodes ----------------------------------------------------------===//
  NodeList &nodes() { return nodes_; }
  const NodeList &nodes() const { return nodes_; }
  bool empty() const { return nodes_.empty(); }
  /// O(1): the graph counts its nodes (an ilist would walk them).
  size_t numNodes() const { return numNodes_; }
  /// The node list as an array, when the graph holds one (Note [Node
  /// array], lib/IR/Graph.cpp): from a reorderNodes until the list next
  /// changes; empty otherwise. For walks that look ahead (NodeLookahead.h).
  llvm::ArrayRef<Node *> nodeArray() const { return nodeArray_; }
  /// How many of this graph's nodes hold subgraphs (kept as attributes
  /// gain and lose graphs and nodes come and go): walks over nested graphs
  /// skip the node list of a flat graph.
  size_t numNodesWithSubgraphs() const { return nodesWithSubgraphs_; }

  /// Creates a node of `opType` with `operands` and `numResults` results named
  /// freshly from `resultBase` (default: lowercase op type), inserted before
  /// `pos` (null: at the end).
  Node *createNode(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                   unsigned numResults, Node *pos = nullptr,
                   llvm::StringRef domain = "", llvm::StringRef resultBase = "");
  /// Creates a node whose results carry exactly `resultNames` ("" makes an
  /// empty slot). Fails without changing anything on a clash.
  absl::StatusOr<Node *> createNodeWithNames(llvm::StringRef opType,
                                             llvm::ArrayRef<Value *> operands,
                                             llvm::ArrayRef<llvm::StringRef> resultNames,
                                             Node *pos = nullptr,
                                             llvm::StringRef domain = "");
  /// Creates a node with no operands and no results, for importers that fill
  /// them in afterwards.
  Node *createEmptyNode(llvm::StringRef opType, llvm::StringRef domain, Node *pos = nullptr);
  /// Rearranges the node list into `order`, a permutation of nodes(). No
  /// scope or order checks (unlike Node::moveBefore): for passes that compute
  /// a whole new order, such as a topological sort, whose intermediate states
  /// would be refused. O(n).
  /// The graph may keep `order` as its nodeArray(): pass it with std::move.
  void reorderNodes(std::vector<Node *> order);
  /// True if a verification found no dependency cycle among this graph's
  /// nodes and no dependency has been added in the model since (Note [Known
  /// acyclic graphs] in Verifier.cpp): a verification then skips the cycle
  /// search of an unsorted graph.
  bool isKnownAcyclic() const { return acyclicAt_ == ctx_->dependencyEpoch(); }

  //===--- Outputs (see Note [Outputs]) -----------------------------------===//
  unsigned numOutputs() const;
  Value *output(unsigned i) const;
  std::vector<Value *> outputs() const;
  OutputInfo &outputInfo(unsigned i) { return outputInfo_[i]; }
  const OutputInfo &outputInfo(unsigned i) const { return outputInfo_[i]; }
  void addOutput(Value *v, OutputInfo info = {});
  void setOutput(unsigned i, Value *v);
  void removeOutput(unsigned i);
  /// The return node holding the outputs as operands.
  Node *returnNode() const { return return_; }

  //===--- value_info -----------------------------------------------------===//
  ValueInfoList &valueInfo() { return valueInfo_; }
  const ValueInfoList &valueInfo() const { return valueInfo_; }
  /// Adds a record for `v`, which must be defined in this graph (a value may
  /// have several records; erasing it marks them all `erased`, and moving its
  /// node to another graph moves them to the end of that graph's list), or a
  /// record by name.
  ValueInfoRecord &addValueInfo(Value *v);
  ValueInfoRecord &addValueInfo(llvm::StringRef name, const Type *type);
  /// Drops records whose value was erased, and those for which pred holds.
  void removeValueInfoIf(llvm::function_ref<bool(ValueInfoRecord &)> pred);

  //===--- Scope (see Note [Scopes]) --------------------------------------===//
  /// The value defined with `name` in this graph only.
  Value *lookupLocal(llvm::StringRef name) const;
  /// The innermost visible definition of `name` from this graph.
  Value *lookup(llvm::StringRef name) const;
  /// lookup() of a name given as Context::findInterned returned it (a null
  /// StringRef, never interned, finds nothing): no hashing.
  Value *lookupInterned(llvm::StringRef interned) const {
    return interned.data() ? lookupChainKey(interned.data()) : nullptr;
  }
  /// True if `name` may be defined here: not visible from this graph and not
  /// defined in any graph nested inside it.
  bool isNameFree(llvm::StringRef name) const;
  /// A fresh name derived from `base` that is free here (in fact in the whole
  /// model). O(1) amortised.
  llvm::StringRef freshName(llvm::StringRef base) const;
  /// Number of definitions in this graph's own scope.
  size_t numDefinitions() const { return numDefinitions_; }
  /// Makes room for `n` more definitions in this scope and in the context's
  /// name tables (a lift that knows its node count avoids rehashing).
  void reserveDefinitions(size_t n);
  /// The values defined in this graph itself, in order: inputs, initializers
  /// that are not inputs, sparse initializers that are not inputs, node
  /// results. O(inputs + initializers + nodes).
  std::vector<Value *> definitions() const;

  //===--- Cloning --------------------------------------------------------===//
  /// A deep copy with the same names, detached (no parent). Inputs, inits and
  /// node results are mapped in `m`; captured outer values are remapped
  /// through `m` when present, else kept.
  std::unique_ptr<Graph> clone(IRMapping &m) const;
  /// Copies this graph's nodes into `dest` before `pos` (null: at the end),
  /// giving every copied result a fresh name in `dest`. This graph's inputs
  /// must already be mapped in `m`. Returns the copies of the outputs.
  std::vector<Value *> cloneNodesInto(Graph &dest, Node *pos, IRMapping &m) const;

  /// Walks every node of this graph and of its nested graphs, pre-order: a
  /// node, then the nodes of its subgraphs, then the next node. `fn` may
  /// erase the node it is given (or move it away): its subgraphs are then
  /// not visited. It must not erase other nodes of the walk. Iterative, so
  /// nesting depth does not consume stack.
  void walk(llvm::function_ref<void(Node *)> fn);
  /// Walks this graph and every nested graph, pre-order. Iterative.
  void walkGraphs(llvm::function_ref<void(Graph *)> fn);

  /// Path for diagnostics, e.g. `graph "main" > node #3 "loop" (Loop) >
  /// attribute "body"`.
  std::string path() const;

private:
  friend class Node;
  friend class Value;
  friend class Attribute;
  friend class Function;
  friend class Model;
  friend struct detail::AcyclicMark;
  void registerValue(Value *v);
  void unregisterValue(Value *v);
  /// Why `interned` (a name interned in this graph's context) may not be
  /// defined here, or OK.
  absl::Status checkNameFree(llvm::StringRef interned) const;
  bool isKeyFree(llvm::StringRef interned) const;
  Value *newGraphValue(Value::Kind k, llvm::StringRef name);
  void insertNode(Node *n, Node *pos);
  /// Moves the value_info records of `v` (a result of a node moving here
  /// from `from`) to the end of this graph's list.
  void takeValueInfoOf(Value *v, Graph &from);
  void renumber();
  Value *lookupKey(const char *key) const;
  Value *lookupChainKey(const char *key) const;
  uint64_t orderFor(Node *n);

  Context *ctx_;
  Attribute *parentAttr_ = nullptr;
  Function *function_ = nullptr;
  Model *model_ = nullptr;
  std::vector<Value *> inputs_, initializers_, sparse_;
  NodeList nodes_;
  Node *return_;
  std::vector<OutputInfo> outputInfo_;
  ValueInfoList valueInfo_; ///< Note [Pooled value_info records] in Value.h
  /// Definitions of the names defined more than once in the model, by
  /// interned pointer (Note [Name records] in Context.h).
  llvm::DenseMap<const char *, Value *> scope_;
  size_t numDefinitions_ = 0;
  size_t nodesWithSubgraphs_ = 0;
  size_t numNodes_ = 0; ///< the length of nodes_
  /// nodes_ as an array, or empty (Note [Node array]).
  std::vector<Node *> nodeArray_;
  /// Every change of nodes_ calls this: positions and the array are stale.
  void listChanged() {
    indexValid_ = false;
    if (!nodeArray_.empty()) std::vector<Node *>().swap(nodeArray_);
  }
  bool orderValid_ = false;
  /// Node::index_ numbers the node list (cleared whenever the list changes).
  mutable bool indexValid_ = false;
  /// The dependency epoch at which a verification found no cycle here; 0:
  /// none did.
  mutable uint64_t acyclicAt_ = 0;
};

/// Path of a node for diagnostics: `graph "main" > node #12 "loop_3" (Loop)`.
std::string nodePath(const Node *n);
/// `file:line:col` of a node read from a text model (Context::sourceLoc,
/// Note [Source locations]), or "".
std::string sourceLocation(const Node *n);
/// nodePath, after `file:line:col: ` when the node was read from a text
/// model (Context::sourceLoc, Note [Source locations]): what checks of a
/// model as read put before their messages.
std::string locatedNodePath(const Node *n);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_GRAPH_H
