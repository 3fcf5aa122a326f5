//===- Surgery.h - Cutting a model and editing its interface --------------===//
//
// Model surgery (issue 42): the operations users reach for around an
// optimizer, one implementation each, used by the passes `extract`,
// `add-outputs`, `prune-outputs`, `rename-io`, `retype-io` (SurgeryExtract.cpp,
// SurgeryIO.cpp), by onnxir-reduce and by the Python module. They work in
// place on a model the caller owns: no file format here.
//
// Note [Extraction]
//  - Kept: the nodes of the main graph an output depends on, the walk
//    stopping at cut values, graph inputs and initializers. A node holding
//    subgraphs is kept whole, and the main-graph values its subgraphs
//    capture count as its operands.
//  - A cut that is a node result becomes a graph input of the same name
//    (its node goes unless an output needs it otherwise: then the cut wins,
//    every use reads the input). A cut that is a graph input stays one.
//    A cut on an initializer is an error: it is no boundary.
//  - With `closed` (the extract pass when inputs are named), the cuts are
//    the only inputs: an output that needs a graph input that is not a cut
//    is an error naming the output and that input (the value it would miss).
//    Otherwise the graph inputs the outputs need stay inputs.
//  - The outputs are exactly the chosen values, in order; a chosen value
//    may be a cut itself.
//  - Graph inputs and initializers nothing uses any more are removed (a
//    cut is kept even when unused: it is part of the interface asked for).
//    Opset imports stay; with `removeUnusedFunctions`, model-local functions
//    no kept node calls (directly or through other functions or subgraphs)
//    go, the others come along untouched.
//  - Types: a cut or output given an element type (and dims) is declared
//    with that tensor type; otherwise it keeps the value's own type. With
//    `inferTypes`, when one of them has no element type, type inference
//    (infer-shapes{outputs-only}, the pipeline's in-memory inference) runs
//    first, so a cut in the middle of an export gets the inferred type.
//  - Initializers are not read: kept ones keep their (lazily mapped)
//    external data, so a model of gigabytes is cut without loading it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PASSES_SURGERY_H
#define ONNXIR_PASSES_SURGERY_H

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// A value of the main graph by name, with the tensor type to declare for it
/// (unset: the value's own type).
struct ExtractValue {
  std::string name;
  std::optional<DataType> elemType;
  std::optional<std::vector<int64_t>> dims;
};

struct ExtractOptions {
  /// The cuts are the only graph inputs of the result (Note [Extraction]).
  bool closed = false;
  /// Infer types first when a cut or output has no element type.
  bool inferTypes = false;
  /// Remove model-local functions no kept node calls.
  bool removeUnusedFunctions = false;
};

/// Cuts `m`'s main graph down to what computes `outputs` from `cuts`
/// (Note [Extraction]). Errors name the value; every name is checked before
/// anything changes.
absl::Status extractSubgraph(Model &m, llvm::ArrayRef<ExtractValue> cuts,
                             llvm::ArrayRef<ExtractValue> outputs,
                             const ExtractOptions &opts = {});

/// The extract pass (and onnxir.extract): extractSubgraph with the cuts
/// `inputs` (closed when there are some), types inferred where missing,
/// unused functions removed. No outputs is an error.
absl::Status extractModel(Model &m, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs);

/// Makes the main-graph values `names` graph outputs (after the existing
/// ones, in the order given; one that is an output already is skipped), or
/// with `all` every node result of the main graph. They are declared with
/// their types, inferred first (in memory) when one has none. An unknown
/// name is an error, and then nothing changed. Returns how many were added.
absl::StatusOr<int64_t> addOutputs(Model &m, const std::vector<std::string> &names, bool all);

/// Keeps the graph outputs named in `keep` (in their order in the model) and
/// removes the others, then the code only they used (dce). A name that is
/// no output is an error, and then nothing changed. Returns how many
/// outputs were removed.
absl::StatusOr<int64_t> pruneOutputs(Model &m, const std::vector<std::string> &keep);

/// Renames main-graph inputs and outputs: each pair is {old, new}. `old`
/// must be a graph input or output; `new` must be free in every scope (the
/// main graph, its subgraphs, the other new names), else an error names the
/// clash, and then nothing changed. Initializer names, quantization
/// annotations and value_info records follow the value.
absl::Status renameInterface(Model &m, const std::vector<std::pair<std::string, std::string>> &renames);

/// Note [Retyping the interface]
/// retypeInterface gives a main-graph input or output another element type
/// while the graph inside keeps computing in its own: an input x of float
/// retyped to float16 becomes a float16 input read through Cast(to=float),
/// an output y becomes Cast(y, to=float16) under y's name (the value that
/// computed it gets a fresh name). Dims stay. A name that is both an input
/// and an output, an output that is an input or initializer, an input whose
/// element type is unknown, or a type that is no tensor element type is an
/// error, and then nothing changed. Retyping to the type it has is no change.
absl::Status retypeInterface(Model &m, const std::vector<std::pair<std::string, DataType>> &types);

/// Note [Composing models]
/// composeModels merges model `b` into model `a` (onnxir-compose, Python
/// onnxir.compose, SurgeryCompose.cpp):
///  - `connect` pairs {A output, B input} (names as the models have them):
///    B's input reads A's value. Types must agree (element type; ranks and
///    known dims when both are known; a symbol fits any dim), else a located
///    error names both ends. A B input is connected at most once; an A
///    output may feed several.
///  - Prefixes (rename{mode=prefix}, interface and nodes included) are
///    applied first; the connect names are given without them. A name then
///    defined in both main graphs (or shadowing one in a subgraph) is an
///    error naming it.
///  - Opsets: the default domain goes to the higher of the two versions
///    through the converter (convert-opset, after in-memory inference); any
///    other domain both import must have one version, else an error.
///    ir_version is the higher one; the imports are the union.
///  - Functions: B's come along; one A defines too (same domain, name and
///    overload) must be structurally equal (signature, nodes, attributes),
///    else an error.
///  - The result's inputs: A's, then B's unconnected ones; its outputs: A's
///    unconnected ones (none with `dropUnconnected`, which then removes the
///    code only they used), then B's. Equal initializers are merged
///    (dedup-initializers), so weights the two share are stored once.
/// `b` is consumed (renamed, converted, copied); on an error before the
/// merge `a` is unchanged except for a conversion or prefix already applied,
/// so callers work on copies (the tool writes nothing on an error).
struct ComposeOptions {
  std::vector<std::pair<std::string, std::string>> connect;
  std::string prefixA, prefixB;
  bool dropUnconnected = false;
};
absl::Status composeModels(Model &a, Model &b, const ComposeOptions &opts);

/// Note [Merging decoders]
/// mergeDecoders makes one model of a decoder's two exports (optimum's
/// decoder_model.onnx and decoder_with_past_model.onnx): an If on a new
/// bool[1] input `condition` (default `use_cache_branch`) runs the
/// with-past graph when true, the other when false. Its inputs are the
/// with-past model's (the first step feeds empty caches, which the branch
/// without past does not read) and the condition; its outputs are the
/// models' outputs, which must have the same names (types joined: dims the
/// branches disagree on are unknown). The weights of both are the outer
/// graph's initializers, read by the branches, and equal ones are stored
/// once (dedup-initializers), so the merged file holds the shared weights
/// once. A weight named like another value of the other model, and an
/// intermediate named like an outer input, get fresh names. Opsets as in
/// compose (the default domain converted to the higher version, other
/// domains equal); functions merged as there. Every check is made before
/// the result is built; the two models may be changed (renamed, converted).
struct MergeDecodersOptions {
  std::string condition = "use_cache_branch";
};
absl::StatusOr<std::unique_ptr<Model>> mergeDecoders(Model &noPast, Model &withPast,
                                                     const MergeDecodersOptions &opts = {});

/// The names of a pass option `a,b,c` (empty items skipped).
std::vector<std::string> surgeryNameList(llvm::StringRef text);

/// Parses `old:new,old:new` (rename-io) and `name:type,name:type`
/// (retype-io, types in the text syntax: float16, int32, ...).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
parseRenameList(llvm::StringRef text);
absl::StatusOr<std::vector<std::pair<std::string, DataType>>> parseRetypeList(llvm::StringRef text);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_PASSES_SURGERY_H
