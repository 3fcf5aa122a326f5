//===- OpSchema.h - What the IR knows about ONNX operators ----------------===//
//
// Every operator schema of ONNX's registry (all its domains, every version),
// compiled in from spec/onnx-op-schemas.json by scripts/gen_op_schemas.py:
// formal inputs and outputs, attributes with their types and defaults, type
// constraints, determinism, arity bounds, function bodies.
//
//   const OpSchema *s = schemaFor(node);             // the version the node resolves to
//   int64_t axis = NodeContext(node).getInt("axis"); // its attribute, else the default (OpContext.h)
//   const FormalParameter *p = s->inputFor(2);       // what operand #2 binds to
//   const TypeConstraint *tc = s->typeConstraint(p->typeStr);
//
// Resolution: a node in domain D resolves to the newest schema of (D, op)
// whose since_version is not above the version of D its graph imports: the
// model's opset_import, or inside a function body that function's own
// opset_import (falling back to the model's for domains it does not list);
// a duplicated import resolves to its last entry (Note [Opset in force]).
// "" and "ai.onnx" are the same domain (isDefaultDomain).
//
// Op traits (Note [Op traits]) are derived here and nowhere else: passes ask
// isDeterministic, hasSideEffects, isOptionalResult, isCommutative,
// isDefaultDomain.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_OPSCHEMA_H
#define ONNXIR_OPS_OPSCHEMA_H

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Model;
class Node;
class Type;

enum class ParamOption : uint8_t { Single, Optional, Variadic };
enum class Determinism : uint8_t { Deterministic, Nondeterministic, Unknown };

/// A type variable (`T`) and the type strings it may stand for, spelled as in
/// ONNX's operator docs: `tensor(float16)`, `seq(tensor(int64))`,
/// `optional(tensor(float))`, `map(string, tensor(int64))`.
struct TypeConstraint {
  llvm::StringRef param;
  std::vector<llvm::StringRef> allowed;
  bool allows(llvm::StringRef typeStr) const;
};

/// One formal input or output.
struct FormalParameter {
  llvm::StringRef name;
  /// A type variable of the schema (`T`) or a concrete type string.
  llvm::StringRef typeStr;
  ParamOption option = ParamOption::Single;
  /// Variadic only: every actual has the same type.
  bool homogeneous = true;
  /// Variadic only: the fewest actuals it takes.
  int minArity = 1;
  /// The constraint named by typeStr; null when typeStr is a concrete type.
  const TypeConstraint *constraint = nullptr;

  bool isOptional() const { return option == ParamOption::Optional; }
  bool isVariadic() const { return option == ParamOption::Variadic; }
  /// True if an actual of type `typeStr` (see typeString) may bind here.
  bool allows(llvm::StringRef typeStr) const;
};

/// A formal attribute and its default, typed by its kind.
struct AttributeSchema {
  llvm::StringRef name;
  AttrKind kind = AttrKind::Undefined;
  bool required = false;
  /// A default is declared (for TENSOR defaults only hasDefault is known).
  bool hasDefault = false;
  int64_t defaultInt = 0;                    ///< kind Int
  double defaultFloat = 0;                   ///< kind Float
  llvm::StringRef defaultString;             ///< kind String
  std::vector<int64_t> defaultInts;          ///< kind Ints
  std::vector<double> defaultFloats;         ///< kind Floats
  std::vector<llvm::StringRef> defaultStrings; ///< kind Strings
};

/// A static function body in ONNX's text syntax, for models importing
/// `opset` (or newer, up to the next body) of the operators it uses.
struct FunctionBody {
  int64_t opset = 0;
  llvm::StringRef text;
};

/// The maximum arity value meaning "unbounded".
inline constexpr int kUnboundedArity = INT_MAX;

class OpSchema {
public:
  /// "" for the default domain (never "ai.onnx").
  llvm::StringRef domain() const { return domain_; }
  llvm::StringRef name() const { return name_; }
  int64_t sinceVersion() const { return since_; }
  /// The last opset version this schema is in force for (the next version's
  /// since_version minus one; INT64_MAX for the newest).
  int64_t lastVersion() const { return last_; }
  bool deprecated() const { return deprecated_; }
  bool experimental() const { return experimental_; }
  Determinism determinism() const { return determinism_; }
  int minInputs() const { return minIn_; }
  int maxInputs() const { return maxIn_; }   ///< kUnboundedArity if unbounded
  int minOutputs() const { return minOut_; }
  int maxOutputs() const { return maxOut_; } ///< kUnboundedArity if unbounded
  /// The operator has a function body in ONNX's registry (static or built
  /// per node).
  bool hasFunction() const { return hasFunction_; }
  bool hasContextDependentFunction() const { return contextDependent_; }

  llvm::ArrayRef<FormalParameter> inputs() const { return inputs_; }
  llvm::ArrayRef<FormalParameter> outputs() const { return outputs_; }
  llvm::ArrayRef<AttributeSchema> attributes() const { return attrs_; }
  llvm::ArrayRef<TypeConstraint> typeConstraints() const { return constraints_; }
  /// Static bodies, by increasing opset.
  llvm::ArrayRef<FunctionBody> functionBodies() const { return bodies_; }

  /// Lookup by name; null if absent.
  const FormalParameter *input(llvm::StringRef name) const;
  const FormalParameter *output(llvm::StringRef name) const;
  const AttributeSchema *attribute(llvm::StringRef name) const;
  const TypeConstraint *typeConstraint(llvm::StringRef param) const;
  /// Index of the formal input/output named `name`, or -1.
  int inputIndex(llvm::StringRef name) const;
  int outputIndex(llvm::StringRef name) const;

  /// The formal parameter actual operand/result #i binds to (a trailing
  /// variadic takes every remaining actual); null past the last formal.
  const FormalParameter *inputFor(unsigned i) const;
  const FormalParameter *outputFor(unsigned i) const;

  /// The static body for a model importing `opset` of the body's domain: the
  /// greatest key not above it; null if none.
  const FunctionBody *functionBodyFor(int64_t opset) const;

  /// `domain.name-vN` (or `name-vN`), for messages.
  std::string str() const;

  /// Same formals, attributes, constraints, determinism and arity (ignores
  /// since_version, deprecation and function bodies).
  bool sameSignature(const OpSchema &o) const;

  /// Same formals, attributes (with defaults), constraint names and arity:
  /// the signature of `o` but for the types each constraint allows (and for
  /// determinism). Two versions of an operator related so differ only in the
  /// types they accept (the opset converter's "type-list change" steps).
  bool sameFormals(const OpSchema &o) const;

  /// True if each constraint here allows every type the same-positioned
  /// constraint of `o` allows (a widening from `o` to this schema).
  bool allowsEveryTypeOf(const OpSchema &o) const;

private:
  friend struct SchemaTable;
  friend class OpSchemaBuilder;
  friend const OpSchema &registerSchema(class OpSchemaBuilder b);
  llvm::StringRef domain_, name_;
  int64_t since_ = 0, last_ = INT64_MAX;
  bool deprecated_ = false, experimental_ = false, hasFunction_ = false,
       contextDependent_ = false;
  Determinism determinism_ = Determinism::Deterministic;
  int minIn_ = 0, maxIn_ = 0, minOut_ = 0, maxOut_ = 0;
  std::vector<FormalParameter> inputs_, outputs_;
  std::vector<AttributeSchema> attrs_;
  std::vector<TypeConstraint> constraints_;
  std::vector<FunctionBody> bodies_;
};

/// The schema of an operator the generated table does not hold (an
/// extension or test domain), for registerSchema. Strings are copied.
///
///   registerSchema(OpSchemaBuilder("test.example", "Scale", 1)
///                      .input("X", "T").output("Y", "T")
///                      .attr("factor", AttrKind::Float, /*required=*/false).defaultFloat(1.0)
///                      .typeConstraint("T", {"tensor(float)", "tensor(double)"}));
class OpSchemaBuilder {
public:
  OpSchemaBuilder(llvm::StringRef domain, llvm::StringRef name, int64_t sinceVersion);
  OpSchemaBuilder &input(llvm::StringRef name, llvm::StringRef typeStr,
                         ParamOption option = ParamOption::Single);
  OpSchemaBuilder &output(llvm::StringRef name, llvm::StringRef typeStr,
                          ParamOption option = ParamOption::Single);
  OpSchemaBuilder &attr(llvm::StringRef name, AttrKind kind, bool required = false);
  /// The default of the attribute declared last.
  OpSchemaBuilder &defaultInt(int64_t v);
  OpSchemaBuilder &defaultFloat(double v);
  OpSchemaBuilder &defaultString(llvm::StringRef v);
  OpSchemaBuilder &defaultInts(std::vector<int64_t> v);
  OpSchemaBuilder &defaultFloats(std::vector<double> v);
  OpSchemaBuilder &defaultStrings(const std::vector<std::string> &v);
  /// A static body in ONNX's text syntax (FunctionBody: `opset` is the
  /// version of the default domain its nodes use); the text is copied.
  OpSchemaBuilder &functionBody(int64_t opset, llvm::StringRef text);
  OpSchemaBuilder &typeConstraint(llvm::StringRef param, std::vector<llvm::StringRef> allowed);
  OpSchemaBuilder &nondeterministic();

private:
  friend const OpSchema &registerSchema(OpSchemaBuilder b);
  llvm::StringRef save(llvm::StringRef s);
  OpSchema s_;
};

/// Adds a schema to the registry (OpRegistry.h): lookupSchema, the schema
/// verifier, inference's fallback and the attribute defaults see it. A
/// schema of the same (domain, name, since_version) is replaced; an op of
/// the generated table cannot be redefined (its table entry wins). Not
/// thread-safe: register before use.
const OpSchema &registerSchema(OpSchemaBuilder b);

//===--- The registry -----------------------------------------------------===//


/// Every schema, sorted by (domain, name, since_version).
llvm::ArrayRef<OpSchema> allSchemas();
/// Every version of (domain, op), oldest first; empty if unknown.
llvm::ArrayRef<OpSchema> schemaVersions(llvm::StringRef domain, llvm::StringRef op);
/// The schema in force for `op` at `opsetVersion` of `domain`; null if the op
/// does not exist there (unknown, or only introduced later).
const OpSchema *lookupSchema(llvm::StringRef domain, llvm::StringRef op, int64_t opsetVersion);
/// True if the table has schemas of `domain` (default domain, ai.onnx.ml,
/// ai.onnx.preview.training, ai.onnx.preview).
bool isSchemaDomain(llvm::StringRef domain);
/// The greatest since_version of any schema of `domain` (the newest opset the
/// table knows); 0 if none.
int64_t latestOpsetVersion(llvm::StringRef domain);

//===--- Nodes ------------------------------------------------------------===//

/// The version of the node's domain that its graph imports: opsetInForce
/// (IR/Opset.h, Note [Opset in force]); -1 if not imported. The one-argument form finds the model
/// through the node's graph (-1 if the graph belongs to no model).
int64_t importedOpsetVersion(const Node &n, const Model &m);
int64_t importedOpsetVersion(const Node &n);
/// The schema the node resolves to; null if none (custom domain, unknown op,
/// op not in the imported version, domain not imported).
const OpSchema *schemaFor(const Node &n, const Model &m);
const OpSchema *schemaFor(const Node &n);

/// The type constraint of the node's operand #i (null if no schema, no such
/// formal, or its type is concrete). Likewise for results.
const TypeConstraint *operandConstraint(const Node &n, unsigned i);
const TypeConstraint *resultConstraint(const Node &n, unsigned i);

/// The ONNX type string of `t` (`tensor(float)`, `seq(tensor(int64))`,
/// `map(string, tensor(float))`, `optional(...)`, `sparse_tensor(float)`);
/// "" when not fully known (no element type, unknown element, opaque).
std::string typeString(const Type &t);

//===--- Note [Op traits] -------------------------------------------------===//
// One place for what passes need to know about ops:
//  - nondeterministic: the schema the node resolves to says so (RandomNormal,
//    Bernoulli, Multinomial, ... and If/Loop/Scan/SequenceMap, whose
//    bodies may be); a default-domain op with no schema at the imported
//    version is nondeterministic if any version is. Ops of other domains
//    (com.microsoft ...): the names Random*, *Dropout*, Bernoulli,
//    Multinomial (a short list, since no schema tells).
//    Override (the schema's flag is per op, this depends on the node):
//    Dropout is random only in training mode: before opset 7 unless its
//    is_test attribute is nonzero (the default is 0); opsets 7-11 never
//    (no training mode); from opset 12 when its training_mode operand is
//    present and not a constant false (Note [Constant values]), and its
//    ratio operand (or, before 7, attribute) is not a constant 0 (it then
//    drops nothing: Note [Dropout in training mode]). The evaluator, which
//    knows every operand's value, asks the form with `operands`.
//  - side effects: ops of the schema domains (the default domain, ai.onnx.ml,
//    ai.onnx.preview(.training), a domain registered with registerSchema) and
//    com.microsoft have none (their schemas are pure functions); ops of other domains and
//    calls of model-local functions may (nothing tells), so passes neither
//    merge, reorder nor fold them.
//  - optional result: the formal output is optional in the resolved schema
//    (or, without one, in every version of a schema-domain op). Override:
//    BatchNormalization with training_mode = 1 (or a function attribute
//    reference) keeps its running mean and variance, which the op's type
//    rule requires in training mode.
//  - commutative: the operands of these default-domain ops may be swapped
//    (two operands, or any number for the variadic ones): Add, Mul, Max, Min,
//    Sum, Mean, And, Or, Xor, Equal, BitwiseAnd, BitwiseOr, BitwiseXor.
//    The schemas do not say; this list does.
bool isDeterministic(const Node &n);
/// isDeterministic with the values of the node's operands where known (a
/// null entry, or one past the end: its constant value, if any).
bool isDeterministic(const Node &n, llvm::ArrayRef<const Tensor *> operands);
bool isNondeterministic(const Node &n); ///< !isDeterministic(n)
bool hasSideEffects(const Node &n);
bool isOptionalResult(const Node &n, unsigned i);
bool isCommutative(const Node &n);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_OPSCHEMA_H
