//===- SchemaVerifier.h - Nodes against their operator schemas ------------===//
//
// The level above the structural verifier (Verifier.h). For every node whose
// domain has schemas (OpSchema.h) it reports, located like the structural
// diagnostics (`graph "main" > node #3 "c" (Conv): ...`), as Schema errors:
//  - the domain is not imported, or the op does not exist (or is deprecated)
//    at the imported opset version;
//  - too few or too many inputs or outputs, an empty slot where the formal
//    parameter is not optional, a variadic below its minimum arity;
//  - an unknown attribute, an attribute of the wrong type, a missing required
//    attribute;
//  - an operand or result whose known type breaks its type constraint or
//    concrete type, one type variable bound to two types (homogeneous
//    variadics included);
//  - an If/Loop/Scan/SequenceMap body with the wrong number of inputs or
//    outputs for the node.
// Calls of model-local functions are checked against the function's
// signature (inputs and outputs); nodes of other domains are accepted.
// Diagnostic::severe marks what no reader can make sense of: an op of the
// default domain missing at the imported opset (up to the newest opset the
// table knows), arity, required and mistyped attributes, body arity; type
// constraints, unknown attributes and unknown ops of the other schema
// domains are not severe (onnx-opt warns about them by default).
//
// schemaWarnings() gives what onnx-opt warns about on load, once per op kind:
// ops unknown at the imported version of a schema domain, ops of domains the
// model (or function) does not import, an ir_version newer than kMaxIRVersion,
// an opset_import newer than the newest opset the table knows.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_SCHEMAVERIFIER_H
#define ONNXIR_IR_SCHEMAVERIFIER_H

#include "onnxir/IR/Verifier.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;
class Node;

/// Every Schema error of `m` (main graph, nested graphs, function bodies), at
/// most opts.maxDiagnostics. verifyAll(m, {schema = true}) includes these.
std::vector<Diagnostic> verifySchemaAll(const Model &m, const VerifyOptions &opts = {});

/// The Schema errors of `nodes` only (nodes of `m`), at most
/// opts.maxDiagnostics: what a pass that made or changed them checks
/// (convert-opset, Note [Converted nodes are checked]).
std::vector<Diagnostic> verifyNodeSchemas(const Model &m, llvm::ArrayRef<const Node *> nodes,
                                          const VerifyOptions &opts = {});

/// The load-time warnings (kind SchemaWarning), once per op kind. With
/// `exceptErrors`, those that verifySchemaAll reports as errors (unknown ops
/// and unimported domains that have schemas) are left out; with
/// `exceptSevere`, only those it reports as severe (Diagnostic::severe).
std::vector<Diagnostic> schemaWarnings(const Model &m, bool exceptErrors = false,
                                       bool exceptSevere = false);

/// How much of the schema check on load is an error (onnx-opt --verify,
/// onnxir-text --verify).
enum class SchemaCheckLevel {
  Structure, ///< schema problems are never errors (load warnings only)
  Default,   ///< severe schema problems are errors, type constraints warnings
  Schema,    ///< every schema problem is an error
};

struct SchemaCheckResult {
  std::vector<Diagnostic> errors;   ///< refuse the model if not empty
  std::vector<Diagnostic> warnings; ///< load warnings, then other problems
  unsigned moreWarnings = 0;        ///< not-severe problems left out
  bool schemaErrors = false;        ///< errors holds Schema diagnostics
};

/// The check a tool makes on load: schemaWarnings() (once per op kind) and,
/// above Structure, verifySchemaAll(): at Default its severe problems are
/// errors and the others warnings (at most `maxWarnings`, unknown ops left
/// to the once-per-kind load warning), at Schema all are errors. `strict`
/// turns every warning into an error.
SchemaCheckResult checkSchemasOnLoad(const Model &m, SchemaCheckLevel level, bool strict,
                                     unsigned maxWarnings = 10);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_SCHEMAVERIFIER_H
