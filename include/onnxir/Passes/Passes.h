//===- Passes.h - The built-in passes as plain functions ------------------===//
//
// Every pass's algorithm is a public function; the registered Pass objects
// (see Pass.h) are thin adapters over these. Each works in every graph of a
// model: the main graph, nested subgraphs and function bodies. Graph inputs
// and outputs keep their names unless an option says otherwise, and nodes
// that are kept keep their names, doc strings and metadata.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_PASSES_H
#define ONNXIR_PASSES_PASSES_H

#include "onnxir/Passes/Pass.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class Model;

struct DCEOptions {
  /// Remove model-local functions no node calls (transitively).
  bool removeUnusedFunctions = false;
  /// Remove value_info records of values that no longer exist.
  bool removeDeadValueInfo = true;
  /// Remove opset imports of domains no node uses.
  bool removeUnusedOpsets = false;
};
struct DCEStatistics {
  int64_t nodesRemoved = 0, initializersRemoved = 0, functionsRemoved = 0,
          valueInfosRemoved = 0, opsetsRemoved = 0;
  /// The -stats names (Note [Pass definitions in one place], Pass.h).
  template <class F> void forEach(F &&f) const {
    f("nodes removed", nodesRemoved);
    f("initializers removed", initializersRemoved);
    f("functions removed", functionsRemoved);
    f("value_info entries removed", valueInfosRemoved);
    f("opset imports removed", opsetsRemoved);
  }
};
/// Removes nodes whose results are unused (transitively, uses in nested
/// graphs included), unused initializers that are not graph inputs, and
/// optionally unused functions and opset imports. Nodes with side effects
/// are never removed (none in the standard domain; nodes of unknown custom
/// domains are removed only when unused like any other).
absl::StatusOr<bool> eliminateDeadCode(Model &m, const DCEOptions &opts = {},
                                       DCEStatistics *stats = nullptr);

/// Stable topological sort of every graph: keeps the input order wherever
/// dependencies allow. A node holding subgraphs depends on every outer value
/// its subgraphs capture. A cycle is an error that lists its nodes.
absl::StatusOr<bool> topologicalSort(Model &m, int64_t *nodesMoved = nullptr);
absl::StatusOr<bool> topologicalSort(Graph &g, int64_t *nodesMoved = nullptr);

struct RenameOptions {
  /// Canonical: names from op types; Prefix: `prefix` + old name; Sanitize:
  /// every name a C/C++ identifier that is not a keyword (`a.b` -> `a_b`,
  /// `9t` -> `_9t`, `int` -> `int_`).
  enum class Mode { Canonical, Prefix, Sanitize } mode = Mode::Canonical;
  /// Prefix mode: the prefix added to every name.
  std::string prefix;
  /// Also rename graph inputs and outputs of the main graph (the interface).
  bool renameInterface = false;
  /// Also rename nodes (canonical: `<op>_<n>`; prefix: prefixed; sanitize:
  /// made C identifiers, keywords get a trailing `_`). Off: node names are
  /// kept as they are.
  bool renameNodes = true;
};
/// Scope-aware renaming; never creates a collision in any scope.
absl::StatusOr<bool> renameValues(Model &m, const RenameOptions &opts, int64_t *renamed = nullptr);

/// Removes Identity nodes, rewiring their users to the input. When the
/// Identity's result is a graph output, the output keeps its name.
absl::StatusOr<bool> eliminateIdentity(Model &m, int64_t *removed = nullptr);

/// Merges nodes that compute the same thing from the same operands
/// (nondeterministic ops and nodes with subgraphs are never merged).
absl::StatusOr<bool> eliminateCommonSubexpressions(Model &m, int64_t *merged = nullptr);

/// Merges initializers with equal type, dims and bytes (each hashed once).
absl::StatusOr<bool> deduplicateInitializers(Model &m, int64_t *merged = nullptr);

/// Makes the main graph's inputs that have an initializer (all, or those in
/// `names`; a name that is not one is an error) plain initializers:
/// constants, no longer inputs. Returns how many.
absl::StatusOr<int64_t> freezeInitializerInputs(Model &m,
                                                const std::vector<std::string> &names = {});
/// The note of onnx-opt --summary and onnxir.inspect(pipeline=...) when a
/// run's statistics say initializers that are also graph inputs kept nodes
/// from folding or rules from their values (with the count of such inputs
/// and the pass that frees them); "" when they did not.
std::string inputDefaultsNote(const Model &m, const PassStatistics &stats);

/// Turns Constant nodes (value tensors up to `maxBytes`) into initializers of
/// the same name; in function bodies, which cannot hold initializers, nothing.
absl::StatusOr<bool> liftConstantsToInitializers(Model &m, uint64_t maxBytes = UINT64_MAX,
                                                 int64_t *lifted = nullptr);
/// The inverse: constant initializers (not graph inputs) up to `maxBytes`
/// become Constant nodes at the start of their graph.
absl::StatusOr<bool> lowerInitializersToConstants(Model &m, uint64_t maxBytes = UINT64_MAX,
                                                  int64_t *lowered = nullptr);

/// Default node budget of inlineFunctions() (option --inline-max-nodes).
inline constexpr uint64_t kDefaultInlineNodeBudget = 10'000'000;

/// Inlines calls of model-local functions (attribute references and defaults
/// substituted, fresh names, node names prefixed with the call's name);
/// recursive calls are an error. A function importing another version of
/// the default domain than the model is first converted (in place) to the
/// model's by the opset converter; one whose body would otherwise change
/// meaning (another domain's version, or a conversion refused) is not
/// inlined. Refused (ResourceExhausted, before any change) when the main graph would
/// grow past `maxNodes` nodes, counting nodes in subgraphs too. A call left
/// because its function imports another opset version than the model is a
/// remark appended to `remarks` (`left the call PATH: why`), when given.
absl::StatusOr<bool> inlineFunctions(Model &m, int64_t *inlined = nullptr,
                                     uint64_t maxNodes = kDefaultInlineNodeBudget,
                                     std::vector<std::string> *remarks = nullptr);

/// What convert-opset and expand-functions did, per op type (the op's name
/// as the node spells it): nodes rewritten by version adapters, nodes
/// replaced by their function body, and default-domain nodes left as they
/// are.
struct OpsetCounts {
  std::map<std::string, int64_t> adapted, expanded, unchanged;
};

struct ConvertOpsetOptions {
  /// Also convert the model-local functions that import the default domain
  /// themselves (at another version than `target`) to `target`. Without it
  /// they keep their own import (they mean the same either way); functions
  /// that read the model's import are always converted with the model.
  bool functions = false;
};

/// Converts the default domain of `m` to opset `target` (convert-opset,
/// ConvertOpset.cpp): every node of the main graph and its subgraphs, the
/// bodies of model-local functions that rely on the model's import (and with
/// `opts.functions` those importing another version), then the model's
/// import. An op that has no form at `target` (its first version is above
/// it) is expanded into its function body (expand-functions), whose nodes are
/// then converted too. A node that cannot be converted is an error naming it,
/// and then nothing changed; a function relying on the model's import that
/// cannot be converted keeps the old version as its own import (a remark in
/// `remarks`, when given).
absl::StatusOr<bool> convertOpset(Model &m, int64_t target, const ConvertOpsetOptions &opts = {},
                                  OpsetCounts *counts = nullptr,
                                  std::vector<std::string> *remarks = nullptr);
/// As above with the default options; `adapted` counts the nodes rewritten by
/// version adapters (all ops together).
absl::StatusOr<bool> convertOpset(Model &m, int64_t target, int64_t *adapted);

/// Replaces each default-domain node of the ops in `ops` (every op with a
/// usable body when empty) in the main graph and its subgraphs by its
/// function body (expand-functions, ExpandFunctions.cpp): a static body of
/// the schema data (converted to the model's opset when its key differs) or
/// a builder's (Note [Expansion builders], OpRegistry.h), attribute
/// references bound to the node's attributes or the schema's defaults, fresh
/// names, results keeping their names. A listed op that cannot be expanded
/// is an error naming the node, and then nothing changed; with `ops` empty,
/// such nodes are left (a remark each in `remarks`, when given). Nodes an
/// expansion makes are expanded in turn, up to 8 rounds (one that cannot be
/// is left, with a remark).
absl::StatusOr<bool> expandFunctions(Model &m, const std::vector<std::string> &ops = {},
                                     OpsetCounts *counts = nullptr,
                                     std::vector<std::string> *remarks = nullptr);

struct ConvertPrecisionOptions {
  /// float16 or bfloat16 (fp16, bf16).
  std::string type = "float16";
  /// Keep the main graph's float32 inputs and outputs, with Casts at them.
  bool keepIO = true;
  /// Ops kept in float32, comma-separated (Note [Precision-sensitive ops],
  /// ConvertPrecision.cpp).
  std::string blockOps = "ReduceSum,ReduceSumSquare,ReduceMean,ReduceL1,ReduceL2,ReduceLogSum,"
                         "ReduceLogSumExp,ReduceProd,CumSum,LpNormalization,Range";
  /// Nodes kept in float32, comma-separated: node names, or for unnamed
  /// nodes the name of their first result.
  std::string blockNodes;
};
struct ConvertPrecisionStatistics {
  int64_t valuesConverted = 0, constantsConverted = 0, castsInserted = 0, castsRetargeted = 0,
          castsRemoved = 0, shapeChainNodes = 0, rangeNodes = 0, valuesClamped = 0,
          valuesFlushed = 0;
  /// The -stats names (Note [Pass definitions in one place], Pass.h).
  template <class F> void forEach(F &&f) const {
    f("values converted", valuesConverted);
    f("constants converted", constantsConverted);
    f("casts inserted", castsInserted);
    f("casts retargeted", castsRetargeted);
    f("casts removed", castsRemoved);
    f("shape-chain nodes kept", shapeChainNodes);
    f("nodes kept for constants out of range", rangeNodes);
    f("constant values clamped", valuesClamped);
    f("constant values flushed to zero", valuesFlushed);
  }
};
/// Converts float32 values, initializers and Constants of the main graph and
/// its subgraphs to float16 or bfloat16 where the op schema in force allows
/// it (convert-precision, ConvertPrecision.cpp); what stays float32 meets the
/// converted values through Casts. Runs shape inference (in memory) first.
/// Clamped constants and kept ops are described in `remarks`, when given.
absl::StatusOr<bool> convertPrecision(Model &m, const ConvertPrecisionOptions &opts = {},
                                      ConvertPrecisionStatistics *stats = nullptr,
                                      std::vector<std::string> *remarks = nullptr);

struct RewriteStatistics;
/// Removes QuantizeLinear(DequantizeLinear(x, s, z), s, z) round trips
/// (simplify-qdq, Qdq.cpp; exact for integer x of 16 bits or fewer, Note
/// [Exact Q/DQ round trips]); Q -> DQ pairs stay.
absl::StatusOr<bool> simplifyQdq(Model &m, RewriteStatistics *stats = nullptr);

struct QuantizeWeightsOptions {
  /// 4 or 8.
  uint64_t bits = 8;
  /// Weights per block along the reduction axis.
  uint64_t block = 32;
  /// int8/int4 without zero points; false: uint8/uint4 with them.
  bool symmetric = true;
  /// Ops whose constant weight (operand 1) is quantized, comma-separated.
  std::string ops = "MatMul,Gemm";
  /// "dq": blocked DequantizeLinear; "matmulnbits": com.microsoft.MatMulNBits.
  std::string format = "dq";
};
struct QuantizeWeightsStatistics {
  int64_t weightsQuantized = 0, bytesBefore = 0, bytesAfter = 0;
  /// The -stats names (Note [Pass definitions in one place], Pass.h).
  template <class F> void forEach(F &&f) const {
    f("weights quantized", weightsQuantized);
    f("weight bytes before", bytesBefore);
    f("weight bytes after", bytesAfter);
  }
};
/// Weight-only quantization (quantize-weights, QuantizeWeights.cpp): the
/// constant float32 rank-2 weights of the main graph's MatMul/Gemm nodes
/// become int8/int4 blocks read through a blocked DequantizeLinear (opset 21
/// or later; an older model is left, with a remark), or com.microsoft
/// MatMulNBits nodes (format "matmulnbits"). Sizes and the weight error are
/// described in `remarks`, when given.
absl::StatusOr<bool> quantizeWeights(Model &m, const QuantizeWeightsOptions &opts = {},
                                     QuantizeWeightsStatistics *stats = nullptr,
                                     std::vector<std::string> *remarks = nullptr);
/// The reverse: DequantizeLinear nodes of constants become float
/// initializers, MatMulNBits nodes MatMuls of float weights
/// (dequantize-weights).
absl::StatusOr<bool> dequantizeWeights(Model &m, int64_t *dequantized = nullptr);

//===----------------------------------------------------------------------===//
// Pass objects (registered by registerAllPasses(), see Pass.h). Each adapter
// lives in its pass's file; its options are declared there, once.
//===----------------------------------------------------------------------===//

std::unique_ptr<Pass> createDeadCodeEliminationPass();           ///< dce
std::unique_ptr<Pass> createTopologicalSortPass();               ///< topo
std::unique_ptr<Pass> createRenamePass();                        ///< rename
std::unique_ptr<Pass> createEliminateIdentityPass();             ///< eliminate-identity
std::unique_ptr<Pass> createCommonSubexpressionEliminationPass(); ///< cse
std::unique_ptr<Pass> createDeduplicateInitializersPass();       ///< dedup-initializers
std::unique_ptr<Pass> createFreezeInitializerInputsPass();       ///< freeze-initializer-inputs
std::unique_ptr<Pass> createMonotoneArgMaxPass();               ///< monotone-argmax
std::unique_ptr<Pass> createLiftConstantsPass();                 ///< lift-constants
std::unique_ptr<Pass> createLowerInitializersPass();             ///< lower-initializers
std::unique_ptr<Pass> createInlineFunctionsPass();               ///< inline-functions
std::unique_ptr<Pass> createConstantFoldingPass();               ///< fold-constants
std::unique_ptr<Pass> createConvertOpsetPass();                  ///< convert-opset
std::unique_ptr<Pass> createExpandFunctionsPass();               ///< expand-functions
std::unique_ptr<Pass> createConvertPrecisionPass();              ///< convert-precision
std::unique_ptr<Pass> createSimplifyQdqPass();                   ///< simplify-qdq
std::unique_ptr<Pass> createQuantizeWeightsPass();               ///< quantize-weights
std::unique_ptr<Pass> createDequantizeWeightsPass();             ///< dequantize-weights
// Model surgery (Surgery.h; SurgeryExtract.cpp, SurgeryIO.cpp).
std::unique_ptr<Pass> createExtractPass();                       ///< extract
std::unique_ptr<Pass> createAddOutputsPass();                    ///< add-outputs
std::unique_ptr<Pass> createPruneOutputsPass();                  ///< prune-outputs
std::unique_ptr<Pass> createEditIOPass();                        ///< edit-io

std::unique_ptr<Pass> createFusePass();                          ///< fuse (Fusions.h)
std::unique_ptr<Pass> createSimplifyPass();                      ///< simplify (Simplify.h)
std::unique_ptr<Pass> createO1Pass();                            ///< O1
std::unique_ptr<Pass> createO2Pass();                            ///< O2

/// Registers the composite pipelines (O1, O2; lib/Passes/Pipelines.cpp).
void registerPipelinePasses();
/// Registers passes that exist for tests (`-test-break-ir`); onnx-opt calls
/// it, registerAllPasses() does not.
void registerTestPasses();

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_PASSES_H
