//===- FunctionBodies.h - The schemas' static function bodies as IR -------===//
//
// Note [Function bodies where schemas live]
// A schema's static function bodies (OpSchema::functionBodies) are data of
// the schema table, written in ONNX's text syntax. They are read here, next
// to the schemas, by lib/Text's parser, and come out as a model-local
// Function carrying the schema's attribute defaults: what a body means
// (which defaults its attribute references fall back to) is knowledge of the
// operator. The passes that expand or convert bodies (expand-functions,
// convert-opset) ask for this Function and never see a parser: lib/Passes
// depends on lib/Ops and lib/IR only (Note [The text layer] in
// onnxir/Text/Text.h; scripts/check_layering.py keeps it so). A second,
// smaller reader of the body subset in lib/Ops was the other way to cut the
// arrow from Passes to the parser; it would have been a second parser of
// one syntax (If/Loop subgraphs, tensor literals and attribute references
// all occur in bodies), so the parser moved down instead.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_FUNCTIONBODIES_H
#define ONNXIR_OPS_FUNCTIONBODIES_H

#include "onnxir/IR/Function.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

ONNXIR_API_BEGIN
namespace onnxir {

/// Parses `b`, a static body of `s`, into `m` as a model-local function
/// (appended to m.functions(); the caller removes it when done) whose
/// attribute defaults are `s`'s (tensor defaults excepted: the schema data
/// has no value for them). A body that does not parse is an internal error
/// naming the schema and the body's opset.
absl::StatusOr<Function *> parseFunctionBody(Model &m, const OpSchema &s, const FunctionBody &b);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_FUNCTIONBODIES_H
