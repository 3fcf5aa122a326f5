//===- Verifier.h - Structural invariants of the IR -----------------------===//
//
// verify() checks what every pass must preserve: use lists agree with
// operands, parent pointers are right, every operand is visible (defined
// earlier in its graph, or in an enclosing graph before the node holding the
// subgraph), no name is defined twice in a scope or shadows an outer one, and
// function bodies obey the same rules. Each problem is reported with a path
// such as `graph "main" > node #12 "loop_3" (Loop) > attribute "body" >
// node #4 (Add): ...`.
//
// Order violations (a use before its definition in the same graph, or a
// capture by a node that comes before the definition) are a kind of their own:
// real files contain them and `-topo` repairs them. When they close a
// dependency cycle (also one through a subgraph capture), the cycle is
// reported too, naming its nodes.
//
// A nested graph may be verified on its own: its captures of values of the
// enclosing graphs are then accepted when visible (the enclosing graphs
// themselves are not checked).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_VERIFIER_H
#define ONNXIR_IR_VERIFIER_H

#include "onnxir/Support/Export.h"

#include "absl/status/status.h"

#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class Model;

struct Diagnostic {
  enum class Kind {
    UseListMismatch,   ///< an operand is not on its value's use list, or vice versa
    BadParent,         ///< a parent pointer is wrong
    NotVisible,        ///< a node operand's definition is not in an enclosing scope
    OrderViolation,    ///< used before defined in the same graph (topo fixes it)
    DuplicateName,     ///< defined twice in one scope
    Shadowing,         ///< a nested definition hides an outer name
    Cycle,             ///< a dependency cycle
    BadOutput,         ///< a graph output is empty or its value is not in scope
    Recursion,         ///< a model-local function calls itself (maybe through others)
    Other,
    Schema,            ///< a node breaks its operator schema (SchemaVerifier.h)
    SchemaWarning,     ///< unknown op, undeclared domain, newer versions (not an error)
  };
  Kind kind;
  std::string message; ///< path and explanation
  /// Schema diagnostics only: the node cannot mean what any schema says (an
  /// op of the default domain that does not exist at the imported opset, a
  /// wrong number of inputs or outputs, a missing required attribute, an
  /// attribute of the wrong type, a body of the wrong arity, a call with too
  /// many operands), as opposed to a type that breaks a constraint, an
  /// unknown attribute or an op unknown in another schema domain. onnx-opt
  /// refuses severe ones on load by default (SchemaVerifier.h).
  bool severe = false;
  /// Schema diagnostics only: the op (or its domain) is unknown at the
  /// imported version; schemaWarnings() says the same once per op kind.
  bool unknownOperator = false;
  /// The message starts with the `file:line:col` of a node read from a text
  /// model (Note [Source locations]): a tool need not put the file first.
  bool located = false;
};

struct VerifyOptions {
  /// Report OrderViolation (on by default). Off: unsorted graphs pass; a
  /// dependency cycle is reported either way.
  bool checkOrder = true;
  /// Stop after this many problems (the schema verifier: this many severe
  /// ones and this many others, so that warnings never hide an error).
  unsigned maxDiagnostics = 100;
  /// Also check every node against its operator schema (Schema errors only;
  /// see Ops/SchemaVerifier.h, which also gives the warnings). The IR knows
  /// no operators: the check is the one lib/Ops installs (setSchemaChecker);
  /// without onnxir::Ops linked, one Schema diagnostic says so.
  bool schema = false;
};

/// The operator check verifyAll(m, {schema = true}) adds. lib/Ops installs
/// verifySchemaAll (Ops/SchemaVerifier.h) when it is linked.
using SchemaCheckFn = std::vector<Diagnostic> (*)(const Model &, const VerifyOptions &);
void setSchemaChecker(SchemaCheckFn check);

/// Every problem found in `m` (empty when it is well-formed).
std::vector<Diagnostic> verifyAll(const Model &m, const VerifyOptions &opts = {});
/// Every problem found in `g` and its nested graphs. `g` may be nested: its
/// enclosing graphs' values are then visible captures.
std::vector<Diagnostic> verifyAll(const Graph &g, const VerifyOptions &opts = {});

/// OK, or an InvalidArgument status listing the problems.
absl::Status verify(const Model &m, const VerifyOptions &opts = {});
absl::Status verify(const Graph &g, const VerifyOptions &opts = {});

const char *diagnosticKindName(Diagnostic::Kind k);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_VERIFIER_H
