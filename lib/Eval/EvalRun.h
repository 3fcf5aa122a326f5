//===- EvalRun.h - The evaluator's run state (lib/Eval only) ----*- C++ -*-===//
//
// What Evaluator.cpp (the graph walk, kernels, control flow) and
// Sequences.cpp (the sequence and optional ops) share: a run's values,
// frames and the Run itself. Not installed; Note [Evaluation] and Note
// [Evaluator values] (Evaluator.h) say what a run does.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_EVAL_EVALRUN_H
#define ONNXIR_LIB_EVAL_EVALRUN_H

#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace onnxir {
namespace evalrun {

using absl::Status;
template <typename T> using StatusOr = absl::StatusOr<T>;

/// A value during a run (Note [Evaluator values]): a tensor (owned by the
/// run, or a view of the IR's), a sequence or an optional, and whether a
/// random op contributed to it. A default Held is an absent operand.
struct Held {
  EvalValue::Kind kind = EvalValue::Kind::Tensor;
  /// Kind::Tensor: the tensor (null: absent).
  std::shared_ptr<const Tensor> t;
  /// Kind::Sequence: its elements; Kind::Optional: none (empty) or one.
  std::shared_ptr<const std::vector<Held>> elems;
  /// Kind::Sequence: the element type of its tensors.
  DataType elemType = DataType::Undefined;
  bool nondet = false;

  bool present() const { return kind != EvalValue::Kind::Tensor || t; }
  bool isTensor() const { return kind == EvalValue::Kind::Tensor && t; }
  bool isSequence() const { return kind == EvalValue::Kind::Sequence; }
  bool isOptional() const { return kind == EvalValue::Kind::Optional; }
  bool isMap() const { return kind == EvalValue::Kind::Map; }
  size_t size() const { return elems ? elems->size() : 0; }
  static Held tensor(std::shared_ptr<const Tensor> t, bool nondet) {
    Held h;
    h.t = std::move(t);
    h.nondet = nondet;
    return h;
  }
  static Held sequence(std::vector<Held> elems, DataType elemType, bool nondet);
  /// An optional holding `inner`, or empty when `inner` is absent.
  static Held optional(const Held &inner, bool nondet);
  /// A map: its keys and values tensors, as elements #0 and #1
  /// (Note [Evaluator values]; Sequences.cpp).
  static Held map(Held keys, Held values, bool nondet);
};

/// "a sequence", "an optional", "a map", "a tensor" (errors).
const char *kindName(const Held &h);

/// The attributes a function body's references resolve to (name -> the
/// call's attribute, else the function's default).
using AttrEnv = std::map<std::string, const Attribute *>;

/// The values of one run of one graph; `parent` is the frame of the graph
/// holding it (null for a top-level graph or a function body).
struct Frame {
  Frame *parent = nullptr;
  const AttrEnv *attrs = nullptr;
  llvm::DenseMap<const Value *, Held> vals;
};

/// What runNode needs of a node that is the same on each of its runs,
/// found once when the plan is made (Note [Per-node facts in the plan]).
struct Step {
  /// How the node runs: a model-local function's body, the evaluator's
  /// own Constant/If/Loop/Scan, or the rest (sequence ops, a kernel, a
  /// schema body).
  enum class Kind : uint8_t { Function, Constant, If, Loop, Scan, Other };
  Kind kind = Kind::Other;
  int64_t opset = -1;
  /// The registry entry in force (null: unknown op).
  const OpEntry *entry = nullptr;
  /// Kind::Function: the model-local function called.
  const Function *fn = nullptr;
  /// Random by its schema; `determinismFromOperands`: decided per run from
  /// its operands' values instead (Dropout's ratio and training_mode).
  bool nondet = false;
  bool determinismFromOperands = false;
  /// The node's attributes when none is a reference (`attrsFixed`); with a
  /// reference they are resolved in the frame on each run.
  bool attrsFixed = false;
  std::vector<const Attribute *> attrs;
  /// Bit i: operand #i's value is freed after this node (its last use);
  /// with no other holder its tensor is given up to the kernel (Note
  /// [Results in a dead input's buffer], lib/Ops/KernelReuse.h).
  uint64_t lastUse = 0;
};

/// Per graph (Note [Evaluation]: made once per graph): the order its nodes
/// run in and, after the k-th of them, the values defined in the graph whose
/// last use it was.
struct Plan {
  /// The graph's own node order when every operand is computed before its
  /// use (ONNX requires it); else a topological order, the stored order
  /// kept wherever dependencies allow, so an unsorted model runs as
  /// onnxruntime runs it rather than failing. Empty with `cycle` set when
  /// no order exists.
  std::vector<const Node *> order;
  std::vector<std::vector<const Value *>> freeAfter;
  /// steps[k]: the facts of order[k].
  std::vector<Step> steps;
  /// A node on a dependency cycle (the graph cannot run), else null.
  const Node *cycle = nullptr;
};

class Run {
public:
  Run(const Model &m, const EvalOptions &o, EvalStatistics &s) : model_(m), opts_(o), stats_(s) {}

  Status runGraph(const Graph &g, Frame &f);
  StatusOr<Held> lookup(const Frame &f, const Value *v) const;
  /// A tensor the run made, counted in the statistics while it lives.
  std::shared_ptr<const Tensor> own(Tensor t);
  const EvalOptions &options() const { return opts_; }

private:
  const Plan &planOf(const Graph &g);
  Step stepOf(const Node &n) const;
  Status runNode(const Node &n, const Step &st, Frame &f);
  Status checkBudget(const Tensor &t) const;
  /// The node's attributes with references resolved in `f`'s environment.
  StatusOr<std::vector<const Attribute *>>
  resolveAttrs(const Node &n, const Frame &f, std::vector<std::unique_ptr<Attribute>> &store);
  StatusOr<std::vector<Held>> runKernel(const Node &n, const Step &st,
                                        llvm::ArrayRef<const Attribute *> attrs,
                                        const std::vector<Held> &in);
  StatusOr<std::vector<Held>> runBody(const Node &n, const Function &fn,
                                      llvm::ArrayRef<const Attribute *> attrs,
                                      const std::vector<Held> &in);
  StatusOr<std::vector<Held>> runIf(const Node &n, Frame &f, const std::vector<Held> &in);
  StatusOr<std::vector<Held>> runLoop(const Node &n, Frame &f, const std::vector<Held> &in);
  StatusOr<std::vector<Held>> runScan(const Node &n, Frame &f, const std::vector<Held> &in,
                                      llvm::ArrayRef<const Attribute *> attrs);
  /// Scan's iterations over `scanIn` (sliced along `inAxes`), the state
  /// carried from `state`; the final state, then the scan outputs.
  StatusOr<std::vector<Held>> scanLoop(const Graph &body, Frame &f, std::vector<Held> state,
                                       const std::vector<Held> &scanIn,
                                       const std::vector<int64_t> &inAxes,
                                       const std::vector<int64_t> &inDirs,
                                       const std::vector<int64_t> &outAxes,
                                       const std::vector<int64_t> &outDirs, bool nondet);
  /// Loop and Scan: adds body output `h` to the items of scan output #k,
  /// within the run's byte limit (`bytes`: all scan items so far).
  Status collectScanOutput(std::vector<Held> &items, const Held &h, size_t k,
                           uint64_t &bytes) const;
  /// Loop and Scan: the final `state` (nondeterministic too when `nondet`),
  /// then each scan output's items stacked by `stackItems`, or, when no
  /// iteration ran, an empty stack of body output `firstScanOut + k`'s type.
  StatusOr<std::vector<Held>>
  loopResults(std::vector<Held> &state, bool nondet, const std::vector<std::vector<Held>> &scans,
              const Graph &body, size_t firstScanOut,
              llvm::function_ref<StatusOr<Tensor>(size_t k, std::vector<const Tensor *> &items)>
                  stackItems);
  StatusOr<std::vector<Held>> runScan8(const Node &n, Frame &f, const std::vector<Held> &in,
                                       llvm::ArrayRef<const Attribute *> attrs);
  /// Runs subgraph `g` in a frame under `f` with its inputs bound to `in`.
  StatusOr<std::vector<Held>> runSubgraph(const Graph &g, Frame &f, const std::vector<Held> &in);
  StatusOr<const Function *> schemaBody(const OpSchema &s, int64_t opset);
  /// Sequences.cpp: the sequence and optional ops, and Identity of a
  /// sequence or optional (Note [Sequence ops are evaluator built-ins]);
  /// false in `handled` for any other node.
  StatusOr<std::vector<Held>> runValueOp(const Node &n, Frame &f,
                                         llvm::ArrayRef<const Attribute *> attrs,
                                         const std::vector<Held> &in, int64_t opset,
                                         bool &handled);
  StatusOr<std::vector<Held>> runSequenceMap(const Node &n, Frame &f,
                                             const std::vector<Held> &in);

  const Model &model_;
  const EvalOptions &opts_;
  EvalStatistics &stats_;
  llvm::DenseMap<const Graph *, std::unique_ptr<Plan>> plans_;
  /// Schema function bodies parsed for this run (FunctionBodies.h).
  Model scratch_;
  std::map<const char *, const Function *> bodies_;
};

// Helpers of the control-flow ops (Evaluator.cpp).
/// The truth of a one-element tensor.
StatusOr<bool> truthOf(const Tensor &t, llvm::StringRef what);
const Graph *graphAttr(const Node &n, llvm::StringRef name);
/// Stacks `items` (equal shapes and types) along a new axis `axis`.
StatusOr<Tensor> stack(const std::vector<const Tensor *> &items, int64_t axis);
/// Slice #k of `t` along `axis`, that axis removed.
StatusOr<Tensor> sliceAt(const Tensor &t, int64_t axis, int64_t k);
Tensor scalarTensor(DataType dt, int64_t v);

} // namespace evalrun
} // namespace onnxir

#endif // ONNXIR_LIB_EVAL_EVALRUN_H
