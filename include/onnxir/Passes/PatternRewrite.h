//===- PatternRewrite.h - Rewrite patterns and the greedy driver ----------===//
//
// A RewritePattern matches a root node of one op type and rewrites the IR
// around it through a PatternRewriter, which records every change so that
// the driver can requeue what the change may have enabled (users of replaced
// values, producers of erased nodes' operands, the nodes created).
// applyPatternsGreedily() applies a set of patterns to a fixed point in every
// graph of a model: the main graph, nested subgraphs and function bodies.
//
// A new fusion is one function:
//
//   PatternSet ps;
//   ps.add("relu-relu", "Relu", [](Node &outer, PatternRewriter &rw) {
//     Node *inner = rw.singleUseProducer(outer, 0, "Relu");
//     if (!inner) return false;
//     return rw.replaceValue(outer.result(0), inner->result(0));
//   });
//   applyPatternsGreedily(model, ps);
//
// Note [What a pattern may do]
//  - Create nodes with rw.create() (inserted before the root by default) and
//    initializers with rw.createInitializer().
//  - Replace values with rw.replaceValue() / rw.replaceNode(); erase nodes
//    with rw.eraseNode(). Never erase or move nodes behind the rewriter's
//    back: the worklist holds node pointers.
//  - Return true if and only if it changed the IR. A pattern that returns
//    false must not have changed anything.
//  - Graph outputs keep their names and types: rw.replaceValue() refuses
//    (returns false, changing nothing) a replacement that could not keep
//    them; check it first with rw.canReplace() when a pattern must not
//    build anything in vain.
//
// Note [Near-miss reports]
//  A pattern that recognised its structure at the root but will not rewrite
//  it because a guard fails says so with
//      return rw.rejected("keepdims", "ReduceMean 'rm' has keepdims=0");
//  (the guard's short name, then why, naming the nodes and values; the
//  call changes nothing and returns false). Only partial matches are
//  reported: a root that is plainly not the pattern's structure returns
//  false silently. The driver keeps, per (root, pattern), the latest
//  rejection, drops it when the root is erased or the pattern is tried
//  there again, and hands what is left at the fixed point to the caller
//  (RewriteStatistics::nearMisses) when GreedyRewriteConfig::explain is set;
//  otherwise rejected() costs a branch (build a costly message only when
//  rw.explaining()). `onnx-opt --fusion-report` (-fuse{explain}) prints them.
//
// Note [Fusion census]
//  A pattern names the ops it makes (PatternSet::add's `makes`: Attention
//  for fuse-attention, Gemm for MatMul + Add, ...). Each successful rewrite
//  adds, per op named, the nodes of that op it created that are still alive
//  when it ends, less the nodes of that op it erased
//  (RewriteStatistics::made): the fuse pass reports these as `made <Op>`
//  counters, which `-stats` and `--summary` print ("fused ops made"). The
//  net count makes the census the number of fused ops in the result:
//  helper nodes a rewrite builds around its product (a Shape, an Expand of
//  a cache, a Transpose of K) are not fused ops, and a rewrite that
//  re-forms a fused op (a 4-D Attention absorbing its head split in a later
//  -O2 round, the RotaryEmbedding that moves with it) makes one and erases
//  one, so it is counted once however many rounds reshape it.
//
// Note [Replacement type check]
//  A rewrite must not change what a value is: rw.replaceValue() and
//  rw.replaceNode() compare the type of each replaced value with the type
//  of its replacement, and refuse (return false) when they differ in
//  element type, in rank or in a dim both know as an integer. The
//  replacement's type is not the one the pattern may have set on it: for a
//  value computed by nodes the rewrite created, it is inferred anew from
//  those nodes' operator rules (lib/Ops) and the types of their operands,
//  so a pattern that drops a broadcast ([1,1,1,1] constants against a [3,4]
//  x) cannot hide it by copying the old type over. Unknown parts (no type,
//  symbolic dims, an op without a rule, a function attribute reference)
//  compare equal: the check never refuses on a guess. A refusal is a
//  pattern bug, not a near-miss: the driver erases the nodes the rewrite
//  created and left unused, records the refusal
//  (RewriteStatistics::patternBugs; the fuse and simplify passes warn
//  with it, and with the environment variable ONNXIR_PATTERN_BUGS=error,
//  which the test suite sets, fail), and the IR keeps its old meaning. A
//  pattern replacing several values replaces them in one replaceNode(),
//  which checks all of them before it changes any.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PATTERNREWRITE_H
#define ONNXIR_PASSES_PATTERNREWRITE_H

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;
class PatternRewriter;

/// A rewrite rooted at nodes of one op type (in the default domain unless
/// `rootDomain` says otherwise; an empty `rootOp` matches every node).
/// Patterns with a higher benefit are tried first.
class RewritePattern {
public:
  RewritePattern(std::string name, std::string rootOp, unsigned benefit = 1,
                 std::string rootDomain = "", std::vector<std::string> makes = {})
      : name_(std::move(name)), rootOp_(std::move(rootOp)), rootDomain_(std::move(rootDomain)),
        makes_(std::move(makes)), benefit_(benefit) {}
  virtual ~RewritePattern();

  llvm::StringRef name() const { return name_; }
  llvm::StringRef rootOp() const { return rootOp_; }
  llvm::StringRef rootDomain() const { return rootDomain_; }
  unsigned benefit() const { return benefit_; }
  /// The ops this pattern makes, for the census (Note [Fusion census]).
  llvm::ArrayRef<std::string> makes() const { return makes_; }

  /// Tries the pattern at `root`; true if it rewrote the IR. The default
  /// calls match() and, if it holds, rewrite().
  virtual bool matchAndRewrite(Node &root, PatternRewriter &rw) const;
  /// Checks without changing anything.
  virtual bool match(Node &root, PatternRewriter &rw) const;
  /// Rewrites a matched root.
  virtual void rewrite(Node &root, PatternRewriter &rw) const;

private:
  std::string name_, rootOp_, rootDomain_;
  std::vector<std::string> makes_;
  unsigned benefit_;
};

/// A pattern set, indexed by root op.
class PatternSet {
public:
  using Fn = std::function<bool(Node &, PatternRewriter &)>;
  /// Adds a pattern object.
  void add(std::unique_ptr<RewritePattern> p);
  /// Adds a pattern given as one function (matchAndRewrite).
  /// `makes`: the ops it makes, counted by the census (Note [Fusion
  /// census]).
  void add(std::string name, std::string rootOp, Fn fn, unsigned benefit = 1,
           std::vector<std::string> makes = {});
  /// The patterns to try on `n`, highest benefit first.
  llvm::ArrayRef<const RewritePattern *> patternsFor(const Node &n) const;
  llvm::ArrayRef<std::unique_ptr<RewritePattern>> all() const { return patterns_; }
  bool empty() const { return patterns_.empty(); }
  /// Disables the patterns named in `names` (comma-separated); an unknown
  /// name is an error that lists the known ones.
  absl::Status disable(llvm::StringRef names);

private:
  std::vector<std::unique_ptr<RewritePattern>> patterns_;
  llvm::StringMap<std::vector<const RewritePattern *>> byOp_;
  llvm::DenseSet<const RewritePattern *> disabled_;
  std::vector<const RewritePattern *> anyOp_;
  mutable std::vector<const RewritePattern *> scratch_;
};

/// The interface patterns change the IR through (Note [What a pattern may do]).
class PatternRewriter {
public:
  explicit PatternRewriter(Model &m) : model_(m) {}

  //===--- Near-miss reports (Note [Near-miss reports]) -------------------===//
  /// True if near-misses are collected (a pattern may skip building a costly
  /// message otherwise).
  bool explaining() const { return static_cast<bool>(onReject_); }
  /// Records that the current pattern matched partly at the root and the
  /// guard `guard` rejected it, `why` naming the nodes and values. Changes
  /// nothing; returns false.
  bool rejected(llvm::StringRef guard, const std::string &why) const {
    if (onReject_) onReject_(guard, why);
    return false;
  }

  Model &getModel() const { return model_; }
  /// The root being rewritten and its graph.
  Node *root() const { return root_; }
  Graph &graph() const { return *root_->getGraph(); }
  /// The version of `domain` the current graph imports (a function body's
  /// own imports; "" and "ai.onnx" are the same), -1 if not imported.
  int64_t opsetVersion(llvm::StringRef domain = "") const;

  //===--- Queries helpers for matching -----------------------------------===//
  /// The node defining operand `i` of `n` if it is `op` (default domain), in
  /// the same graph, and operand i's value has no other use (and no use in a
  /// nested graph or as a graph output): the intermediate of a fusion.
  Node *singleUseProducer(const Node &n, unsigned i, llvm::StringRef op) const;
  /// True if `v` has exactly one use, by a node of `v`'s own graph, and is
  /// not a graph output.
  static bool hasSingleLocalUse(const Value *v);
  /// The tensor of a constant operand: an initializer that is not a graph
  /// input, or the `value` of a Constant node; null otherwise
  /// (storedConstantOf, IR/ValueInfo.h).
  static const Tensor *constantTensor(const Value *v);
  /// The values of a constant int64 or int32 operand (shapes, axes,
  /// indices); nullopt if it is not one (constantInts, IR/ValueInfo.h).
  static std::optional<std::vector<int64_t>> constantInts(const Value *v);
  /// True if an attribute of `n` is a reference to a function attribute
  /// (its value unknown until the function is called): rewrites that read
  /// attributes decline such nodes.
  static bool hasAttributeReferences(const Node &n);
  /// True if `by` may replace every use of `old`: when `old` is a graph
  /// output, `by` must be able to take its name (a node result of the same
  /// graph that is not a graph output itself) and have the same type (or
  /// none).
  static bool canReplace(const Value *old, const Value *by);
  /// Note [Replacement type check]: empty if `by` may stand for `old`,
  /// else why not (both types, the second as inferred anew).
  std::string typeMismatch(const Value *old, const Value *by) const;

  //===--- Changes (all recorded) -----------------------------------------===//
  /// Creates a node before the insertion point (default: the root).
  Node *create(llvm::StringRef opType, llvm::ArrayRef<Value *> operands, unsigned numResults = 1,
               llvm::StringRef domain = "");
  /// Adds a constant initializer to the root's graph (a Constant node in a
  /// function body, which has no initializers) with a fresh name from `base`.
  Value *createConstant(llvm::StringRef base, Tensor t);
  /// Inserts created nodes before `n` from now on.
  void setInsertionPoint(Node *n) { insertBefore_ = n; }
  /// Points every use of `old` at `by`. `old`'s name moves to `by` if `old`
  /// is a graph output or `by` is a result of a node created by this
  /// rewrite (once `old`'s definition is erased). False (nothing changed)
  /// if canReplace(old, by) fails.
  bool replaceValue(Value *old, Value *by);
  /// Replaces every result of `n` (the values in order; null for results
  /// that must be unused), then erases `n`. False if a replacement is
  /// refused (then nothing changed).
  bool replaceNode(Node *n, llvm::ArrayRef<Value *> by);
  /// Sets operand `i` of `n` (appending empty slots up to it if needed);
  /// the producer of the old operand is erased if this was its last use.
  void setOperand(Node *n, unsigned i, Value *v);
  /// Records an in-place change of `n` (an attribute set): requeues it.
  void modified(Node *n) { requeue(n); }
  /// Erases `n`, which must be unused; producers of its operands that die
  /// with it are erased too (if side-effect free).
  void eraseNode(Node *n);
  /// Copies name, doc string and metadata of `from` onto `to` (a rewritten
  /// node keeps them).
  static void copyNodeInfo(const Node &from, Node &to);

private:
  friend class GreedyDriver;
  void begin(Node *root);
  void finish();
  void requeue(Node *n);
  void requeueUsers(Value *v);

  Model &model_;
  Node *root_ = nullptr;
  Node *insertBefore_ = nullptr;
  /// Nodes created during the current rewrite.
  llvm::DenseSet<Node *> created_;
  /// Nodes of the IR before the rewrite it erased, per op (the census).
  llvm::StringMap<int64_t> erasedOps_;
  /// Renames to do once the old definitions are gone.
  std::vector<std::pair<Value *, std::string>> renames_;
  /// Value_info records to give to values that took over a name.
  std::vector<Value *> needValueInfo_;
  /// Driver hooks.
  std::function<void(Node *)> onRequeue_, onErase_;
  std::function<void(llvm::StringRef, const std::string &)> onReject_;
  /// Note [Replacement type check]: why the current rewrite's replacement
  /// was refused (empty if none was).
  std::string typeBug_;
  /// The initializers the current rewrite added (createConstant).
  std::vector<Value *> madeInitializers_;
  int64_t deadErased_ = 0;
  bool deadConstants_ = false;
};

/// Limits of the greedy driver.
struct GreedyRewriteConfig {
  /// Full scans of a graph at most; the driver stops earlier once a scan
  /// applies nothing (the fixed point).
  unsigned maxIterations = 10;
  /// Rewrites per graph and scan at most, as a multiple of the graph's node
  /// count (a guard against patterns that undo each other).
  unsigned maxRewritesPerNode = 8;
  /// Collect near-misses (Note [Near-miss reports]).
  bool explain = false;
};

/// A candidate a pattern matched partly and a guard rejected, at the fixed
/// point (Note [Near-miss reports]).
struct NearMiss {
  std::string pattern;
  /// The root: graph path, then its name and op, or for an unnamed node
  /// its op and first result (stable across -O2 rounds, unlike an index).
  std::string node;
  std::string guard, why;
};

/// What a greedy run did.
struct RewriteStatistics {
  /// Applications per pattern name, in the set's order.
  std::vector<std::pair<std::string, int64_t>> applications;
  /// Nodes the rewrites created, per op type, sorted (Note [Fusion census]).
  std::vector<std::pair<std::string, int64_t>> made;
  /// With GreedyRewriteConfig::explain: the near-misses left, graph by graph
  /// in node order.
  std::vector<NearMiss> nearMisses;
  /// Replacements refused by Note [Replacement type check] (pattern bugs):
  /// "pattern at node: why".
  std::vector<std::string> patternBugs;
  int64_t deadNodesErased = 0;
  /// Scans of the busiest graph.
  unsigned iterations = 0;
  /// False if some graph hit a limit before reaching a fixed point.
  bool converged = true;
};

/// Turns the pattern bugs of `stats` (Note [Replacement type check]) into
/// `warn` calls, one per bug; an error naming the first when the
/// environment variable ONNXIR_PATTERN_BUGS is `error` (the test suite).
absl::Status reportPatternBugs(const RewriteStatistics &stats,
                               const std::function<void(std::string)> &warn);

/// Applies `patterns` greedily to a fixed point in every graph of `m`,
/// subgraphs and function bodies included (inner graphs first). True if any
/// pattern applied. Linear in the model's size times the number of scans
/// (usually 1 to 2), plus the work the rewrites do.
absl::StatusOr<bool> applyPatternsGreedily(Model &m, const PatternSet &patterns,
                                           const GreedyRewriteConfig &config = {},
                                           RewriteStatistics *stats = nullptr);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PATTERNREWRITE_H
