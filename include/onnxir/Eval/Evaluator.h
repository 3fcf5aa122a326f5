//===- Evaluator.h - Run a whole model on the operators' kernels ----------===//
//
// The reference evaluator: runs a model's main graph in node order with the
// evaluation kernel of each node's registry entry in force (OpRegistry.h,
// the kernels constant folding uses: one implementation per operator), on
// tensors given for the graph inputs. onnxir-run and the Python bindings
// call it; it knows no file format.
//
// Note [Evaluation]
//  - Values: graph inputs (given, or the default their initializer holds),
//    initializers and Constant nodes (read from the IR, never copied),
//    node results (owned by the run and freed after their last use: each
//    graph's last uses are counted once, before its first run, a use inside
//    a node's subgraphs counting as a use by that node).
//  - If, Loop and Scan run their subgraphs here; a subgraph reads outer
//    values through the IR's scoping (a nested node's operand is the outer
//    Value itself, Note [Scopes] in Graph.h), so a subgraph's frame of
//    values is chained to its parent's.
//  - A call of a model-local function, and an op without a kernel whose
//    schema has a static function body (FunctionBodies.h), runs through the
//    body: formals are bound to the call's tensors, attribute references
//    (`@name`) take the call's attribute, else the function's default, else
//    are dropped, as inline-functions resolves them.
//  - Inputs are checked against the declared types of the graph inputs:
//    element type, rank, fixed dims, and a symbolic dim bound to one size
//    across the inputs. Errors name the input.
//  - An op the evaluator cannot run is Unimplemented, "not supported: node
//    #3 (Conv) in graph "main": no kernel for Conv-11"; every other failure
//    of a node names it the same way. Nothing crashes on a model the
//    verifier accepts.
//  - Budget: no tensor larger than EvalOptions::maxBytes is made; kernels
//    refuse before allocating (KernelCall::maxOutputBytes), stacking of
//    Loop and Scan outputs likewise (ResourceExhausted).
//  - Random ops (nondeterministic schemas) run when their kernel exists,
//    with EvalOptions::seed (KernelCall::seed) when the node has no `seed`
//    attribute; every value computed from one is reported as
//    nondeterministic.
//  - Values are tensors, sequences and optionals (Note [Evaluator values]).
//
// Note [Evaluator values]
//  A value of a run is a tensor, a sequence (of tensors, or of sequences:
//  its elements in order, and the element type of its tensors, known also
//  when it is empty), or an optional (empty, or holding a tensor or a
//  sequence), or a map: ai.onnx.ml's map(int64 or string, V), which ZipMap
//  makes (a sequence of them) and CastMap reads, held as two 1-D tensors
//  of one length, its keys and their values in the map's order (ZipMap's
//  labels' order). A graph input of a map type is not supported. The
//  sequence and optional ops, ZipMap and CastMap, and
//  Identity, If, Loop and SequenceMap carrying them, run in the evaluator
//  (lib/Eval/Sequences.cpp, Note [Sequence ops are evaluator built-ins]);
//  a tensor kernel given a sequence or an optional is an error naming the
//  operand. A graph input declared optional may be given its element
//  alone (it is then held); its kind must otherwise match the declared
//  type, a sequence's tensors checked against its element type. Loop and
//  Scan scan outputs are tensors.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_EVAL_EVALUATOR_H
#define ONNXIR_EVAL_EVALUATOR_H

#include "onnxir/IR/Model.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

struct EvalOptions {
  /// The largest tensor (bytes of data) a run may produce.
  uint64_t maxBytes = UINT64_MAX;
  /// The seed of random ops whose node sets none.
  uint64_t seed = 0;
  /// Most iterations of one Loop node (a Loop without a trip count runs
  /// until its condition is false).
  int64_t maxLoopIterations = INT64_MAX;
};

/// A tensor, a sequence or an optional (Note [Evaluator values]).
struct EvalValue {
  enum class Kind : uint8_t { Tensor, Sequence, Optional, Map };
  Kind kind = Kind::Tensor;
  /// Kind::Tensor: the tensor.
  Tensor tensor;
  /// Kind::Sequence: its elements in order. Kind::Optional: none (empty)
  /// or the one value it holds (a tensor or a sequence). Kind::Map: two
  /// tensors, its keys and their values (Note [Evaluator values]).
  std::vector<EvalValue> elements;
  /// Kind::Sequence: the element type of its tensors (Undefined when an
  /// empty sequence does not say).
  DataType elemType = DataType::Undefined;

  EvalValue() = default;
  /// A tensor value.
  EvalValue(Tensor t) : tensor(std::move(t)) {}
  static EvalValue sequence(std::vector<EvalValue> elements,
                            DataType elemType = DataType::Undefined);
  /// An optional holding `element`, or empty.
  static EvalValue optional(std::optional<EvalValue> element = std::nullopt);
  /// A map of `keys` (1-D int64 or string) to `values` (1-D, as many).
  static EvalValue map(Tensor keys, Tensor values);

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isSequence() const { return kind == Kind::Sequence; }
  bool isOptional() const { return kind == Kind::Optional; }
  bool isMap() const { return kind == Kind::Map; }
  /// An optional holding nothing.
  bool isEmptyOptional() const { return isOptional() && elements.empty(); }
  /// `float[2,3]`, `seq(float[2], float[3])`, `optional(float[2])`,
  /// `optional()` (empty), `map(int64[3] -> float[3])`.
  std::string str() const;
};

/// What a run did (tests check the freeing of intermediates with it).
struct EvalStatistics {
  /// Nodes run, counting those of subgraphs and function bodies each time.
  int64_t nodesRun = 0;
  /// Tensors the run made (kernel results, stacked outputs) alive now, and
  /// the most alive at once.
  int64_t liveTensors = 0;
  int64_t peakLiveTensors = 0;
  /// Data bytes of those tensors alive now, and the most at once.
  uint64_t liveBytes = 0;
  uint64_t peakLiveBytes = 0;
  /// Values dropped after their last use.
  int64_t valuesFreed = 0;
};

struct EvalResult {
  /// The main graph's tensor outputs by name.
  std::map<std::string, Tensor> outputs;
  /// Its other outputs (sequences, optionals, maps) by name (Note [Evaluator
  /// values]); an output is in exactly one of the two maps.
  std::map<std::string, EvalValue> otherOutputs;
  /// The outputs computed from a random op (Note [Evaluation]).
  std::set<std::string> nondeterministic;
  EvalStatistics stats;
};

/// Runs `m`'s main graph on `inputs` (by graph input name; inputs with a
/// default may be left out). Note [Evaluation].
absl::StatusOr<EvalResult> evaluateModel(const Model &m,
                                         const std::map<std::string, Tensor> &inputs,
                                         const EvalOptions &opts = {});

/// evaluateModel with inputs of every kind (Note [Evaluator values]). Its
/// own name: a braced list of tensors would fit both.
absl::StatusOr<EvalResult> evaluateModelValues(const Model &m,
                                               const std::map<std::string, EvalValue> &inputs,
                                               const EvalOptions &opts = {});

/// evaluateModel's tensor outputs alone; a model with an output of another
/// kind is refused (Unimplemented, naming it).
absl::StatusOr<std::map<std::string, Tensor>> evaluate(const Model &m,
                                                       const std::map<std::string, Tensor> &inputs,
                                                       const EvalOptions &opts = {});

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_EVAL_EVALUATOR_H
