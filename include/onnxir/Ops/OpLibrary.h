//===- OpLibrary.h - Custom-domain operators declared in a file -----------===//
//
// An op library (docs/op-library.md, its JSON Schema
// docs/op-library.schema.json) declares operators of custom domains: their
// formal inputs and outputs, attributes with kinds and defaults, type
// constraints, and either a function body in ONNX's text syntax or a shape
// rule in a small expression language (Note [Shape rules]). Registering a
// library turns each declaration into a schema (registerSchema, OpSchema.h)
// and, for a shape rule, a type and shape rule of the registry: the schema
// verifier, -infer-shapes, the evaluator and expand-functions then treat the
// op like one of ONNX's.
//
// Note [Op libraries are process-wide]
// The op registry is one per process (OpRegistry::get, never per Context or
// Model), so a registered library holds for every model the process reads
// afterwards. The tools register their --op-library files once, before
// reading the model; Python's onnxir.register_ops does the same for the
// whole interpreter. Registering an op again (same domain, name and
// since_version) replaces its declaration; nothing can be unregistered.
// Only custom domains may be declared: ONNX's own (the default domain,
// ai.onnx.ml, ai.onnx.preview, ai.onnx.preview.training) are refused, so a
// library never changes what a standard model means. Not thread-safe:
// register before any pass runs (OpRegistry.h).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_OPLIBRARY_H
#define ONNXIR_OPS_OPLIBRARY_H

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

//===--- Note [Shape rules] -----------------------------------------------===//
// One rule per output, a line of text:
//
//   rule  := out ':' shape [ 'of' elem ]
//   out   := 'out' INT | the output's declared name
//   shape := 'same' 'as' in          the shape of an input
//          | '[' [ dim {',' dim} ] ']'  one entry per dim (rank known)
//          | '?'                      rank unknown (element type only)
//   dim   := in '.' ['-'] INT         dim of an input (negative from the end)
//          | 'attr' '.' NAME          an int attribute (its default if absent)
//          | INT                      a fixed extent
//          | '?'                      unknown
//   in    := 'in' INT | an input's declared name
//   elem  := in | an element type name (float, int64, ...)
//
// Without `of`, the element type is the one of the input named by `same as`,
// else what the output's formal type tells (a concrete type, a constraint
// allowing one type, or a constraint shared with an input: that input's).
// A rule whose element type none of these gives is refused when the library
// is read. Where an input's rank or type is unknown the dims depending on it
// stay unknown (a rule never guesses); a dim index outside an input's known
// rank is a contradiction (InferCtx::disagree).

/// One dim of a `[...]` shape.
struct ShapeRuleDim {
  enum class Kind : uint8_t { Const, InputDim, Attr, Unknown } kind = Kind::Unknown;
  int64_t value = 0;  ///< Const: the extent; InputDim: the (signed) index
  unsigned input = 0; ///< InputDim
  std::string attr;   ///< Attr
  int64_t attrDefault = 0;
  bool attrHasDefault = false;
};

/// A parsed rule (Note [Shape rules]).
struct ShapeRule {
  std::string text;
  unsigned output = 0;
  enum class Form : uint8_t { SameAs, Dims, UnknownRank } form = Form::UnknownRank;
  unsigned sameAs = 0;
  std::vector<ShapeRuleDim> dims;
  /// The element type: of input `elemInput` when >= 0, else `elemFixed`.
  int elemInput = -1;
  int32_t elemFixed = 0;
  /// Sets the rule's output on `c`'s node.
  void apply(infer::InferCtx &c) const;
};

/// What a rule may name: the declaration's formals and int attributes.
struct ShapeRuleScope {
  std::vector<std::string> inputs, outputs;
  /// Input index -> type string (`T` or `tensor(float)`); likewise outputs.
  std::vector<std::string> inputTypes, outputTypes;
  /// The last input is variadic (any `inN` at or past it is accepted).
  bool variadicInputs = false;
  struct IntAttr {
    std::string name;
    bool hasDefault = false;
    int64_t value = 0;
  };
  std::vector<IntAttr> intAttrs;
  /// Type constraints: param -> allowed type strings.
  std::vector<std::pair<std::string, std::vector<std::string>>> constraints;
};

/// Parses one rule; errors name the column (`column 9: expected ...`).
absl::StatusOr<ShapeRule> parseShapeRule(llvm::StringRef text, const ShapeRuleScope &scope);

/// What a library declared, for messages and the tools.
struct OpLibraryInfo {
  /// `domain.Name-vN` of each op, in file order.
  std::vector<std::string> ops;
};

/// Reads an op library (JSON text) and registers its ops (Note [Op libraries
/// are process-wide]). Every declaration is checked before any is
/// registered: an error names `fileName`, the op and the field (a JSON path,
/// `ops[1].inputs[0].type`), or the line and column of a JSON syntax error,
/// and registers nothing.
absl::StatusOr<OpLibraryInfo> registerOpLibrary(llvm::StringRef text, llvm::StringRef fileName);
/// registerOpLibrary on the contents of the file at `path`.
absl::StatusOr<OpLibraryInfo> registerOpLibraryFile(llvm::StringRef path);

/// True if `domain` has ops some op library declared.
bool isLibraryDomain(llvm::StringRef domain);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_OPLIBRARY_H
