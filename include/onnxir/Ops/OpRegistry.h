//===- OpRegistry.h - One home for what onnxir knows of each operator -----===//
//
// The registry holds one entry per (domain, op type, since-version): the
// schema of that version (OpSchema.h), the operator's traits, its type and
// shape rule (InferCtx.h) and its evaluation kernel (Kernels.h). Passes ask
// it; they hold no tables of their own.
//
// Where the knowledge lives: lib/Ops/<Family>.cpp, one file per operator
// family (Elementwise, Reduction, Shape, Tensor, NN, ControlFlow, Sequence,
// Signal, Quantization, ML, ...), each with a `register<Family>Ops`
// function that attaches that family's rules and kernels:
//
//   void registerElementwiseOps(OpRegistrar &r) {
//     r["Relu"].infer(sameAsInput0).kernel(kRelu);
//     r["Clip"].since(11).kernel(kClip11);   // versions 11 and later only
//   }
//
// Schemas come from the generated table (scripts/gen_op_schemas.py); an
// operator outside it (an extension or test domain) is declared with
// registerSchema (OpSchema.h) and then given its rule and kernel the same
// way, through OpRegistry::registrar. See README, "Adding an operator".
//
// Lookup is by the version in force (IR/Opset.h, Note [Opset in force]). An
// op used at a version below its first schema (a malformed model) still
// finds its rule and kernel, with no schema.
//
// Threading: the registry is built on first use; registering more (tests,
// extensions) must happen before any pass runs, not concurrently with it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_OPREGISTRY_H
#define ONNXIR_OPS_OPREGISTRY_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Node;
class OpSchema;
class Value;
struct KernelCall;
namespace infer {
class InferCtx;
/// A type and shape rule (InferCtx.h).
using Rule = std::function<void(InferCtx &)>;
} // namespace infer

/// An evaluation kernel (Kernels.h).
using KernelFn = absl::StatusOr<std::vector<Tensor>> (*)(const KernelCall &);

class NodeContext;
/// Note [Validity checks]: what makes a node invalid beyond its schema's
/// arity, attribute kinds and type constraints (a Transpose perm with a
/// repeated entry, pads beside auto_pad), read from its attributes and its
/// operands' declared types. Returns why the node is invalid (without its
/// location: the schema check adds that), "" when nothing is wrong.
using ValidityCheck = std::string (*)(const NodeContext &c);

//===--- Note [Version adapters] ------------------------------------------===//
// An entry may carry two adapters for the version change INTO it: `upgrade`
// rewrites a node from the form of the op's previous schema version (the
// greatest since-version below this entry's) to this entry's form; `downgrade`
// does the reverse. convert-opset (Passes/ConvertOpset.cpp) walks a node one
// since-version at a time and calls them where the two schemas differ in
// more than widened type lists, and where an entry has one although they do
// not (a meaning change the signature does not show: Max-8 broadcasts). An
// adapter is called twice: first with `checkOnly` set, when it must change
// nothing and return the refusal the real run would give (OkStatus if it can
// convert), then for real, which must then succeed. A refusal's message says
// why (the pass adds node, op, versions).
// The check sees the node as the node's earlier steps leave it (on a trial
// copy: Note [Planning on the node as the steps leave it], ConvertOpset.cpp),
// but for a node holding subgraphs, whose checks see it before any step: the
// adapters of such ops read only what the other steps keep.
//
// An op replaced by another (Upsample-10 and Scatter-11 are deprecated in
// favour of Resize and ScatterElements): the deprecated entry's `upgrade` and
// the successor's first entry's `downgrade` turn the node into the other op
// (Node::setOpType) and name it in AdapterContext::newOpType, in the check
// too; the walk goes on along the other op's versions from that step's
// version (going down from the successor's first entry, the step is to
// since-version - 1). A check that follows a rename may see the node under
// its old op type (a node holding subgraphs), so adapters never read
// Node::opType().

/// What an adapter may use besides the node.
struct AdapterContext {
  /// Validate only: change nothing.
  bool checkOnly = false;
  /// The opset versions of this step (from -> to).
  int64_t from = 0, to = 0;
  /// The opset the whole conversion goes to (new nodes an adapter creates
  /// must be valid there: they are not converted).
  int64_t target = 0;
  /// The op type the node had before the conversion (Upsample for a node
  /// that became Resize), the same in the check and the real run.
  llvm::StringRef sourceOp;
  /// Set by an adapter that turns the node into another op (see above).
  llvm::StringRef newOpType;
  /// A new constant for `n` (a Constant node before `n` in its graph, its
  /// result named freshly from `base`).
  Value *constant(Node &n, llvm::StringRef base, Tensor t);
};
/// Rewrites `n` across one version step (Note [Version adapters]).
using VersionAdapter = absl::Status (*)(Node &n, AdapterContext &c);

//===--- Note [Expansion builders] ----------------------------------------===//
// An entry whose schema has a context-dependent function body (its nodes
// depend on the node's attributes and operand types, so the schema data has
// no text for it) may carry an `expand` builder: it inserts before `n` nodes
// of the default domain that compute `n`'s results, each valid at opset
// `c.opset` (the version in force where they land: a builder picks the form
// of each op it uses at that version, e.g. ReduceMean's axes as attribute
// below 18 and as operand from 18), and returns those values, one per
// result of `n` (null for an absent optional result). The caller rewires the
// uses, keeps the result names and erases `n`. Like an adapter it is called
// first with `checkOnly` (change nothing; return the refusal, e.g. "needs
// the rank of X" or "Erf does not exist at opset 8") and then for real,
// which must then succeed. expand-functions and convert-opset's
// down-conversion below the op's first version use them
// (Passes/ExpandFunctions.cpp); static bodies need none. A builder sits in
// its op's section of the family file, with the op's rule and kernel; the
// helpers the builders share are in lib/Ops/ExpandSupport.h.

/// What an expansion builder may use besides the node.
struct ExpandContext {
  /// Validate only: change nothing.
  bool checkOnly = false;
  /// The opset version of the default domain the new nodes must be valid at.
  int64_t opset = 0;
};
/// Expands `n` (Note [Expansion builders]); `results` gets one value per
/// result of `n`.
using ExpansionBuilder = absl::Status (*)(Node &n, ExpandContext &c,
                                          std::vector<Value *> &results);

//===--- Note [Op facts] --------------------------------------------------===//
// Besides its functions an entry holds facts that passes ask instead of
// keeping op lists of their own, each set in the op's family file next to
// its rule and kernel (`r["Add"].since(7).elementwise().broadcasting()`):
//  - elementwise: one result, each element computed from the same-positioned
//    elements of the operands (after broadcasting, where the op broadcasts),
//    nothing else; equal inputs give equal outputs element by element;
//  - broadcasting: the operands may differ in shape and broadcast to the
//    result's (numpy rules, unidirectional for PRelu); set from the version
//    that does so without a `broadcast` attribute;
//  - axis (AxisFact): the one axis along which the op mixes elements of
//    operand 0, the others being mapped element by element: its last axis,
//    the axis its `axis` attribute names (the schema's default when absent),
//    or the axes its `axes` list names; None makes no claim;
//  - shapePreserving: result 0 has operand 0's shape;
//  - reshapes: result 0 holds operand 0's elements in the same row-major
//    order, only the shape changes (Reshape, Flatten, Squeeze, Unsqueeze).
// A fact is a promise: an op without it is only not known to have it, so a
// pass asking gets "no" for an op nobody described. Determinism and side
// effects come from the schema (Note [Op traits], OpSchema.h); forms that
// moved between attribute and operand (`axes`, `pads`, a Reshape's shape)
// are read from the schema of the version in force (Ops/OpFacts.h), never
// from a version number written in a pass.

/// Note [Op facts]: the axis along which an op mixes elements.
enum class AxisFact : uint8_t {
  None,
  /// Operand 0's last axis (MatMul with a 2-D operand 1: row by row).
  LastAxis,
  /// The axis its `axis` attribute names.
  AxisAttribute,
  /// The axes its `axes` list names (attribute or operand by version).
  AxesList,
};

/// What onnxir knows of one version of one operator.
struct OpEntry {
  /// "" for the default domain.
  llvm::StringRef domain;
  llvm::StringRef opType;
  /// The schema's since_version; 0 for the entry of an op used below its
  /// first version or known without a schema.
  int64_t sinceVersion = 0;
  /// Null for an op without a schema at this version.
  const OpSchema *schema = nullptr;
  /// Type and shape rule; empty when inference falls back to the schema
  /// (result types from the type constraints).
  infer::Rule infer;
  /// Constant evaluation; null when the folder leaves the op alone.
  KernelFn kernel = nullptr;
  /// Note [Op traits] (OpSchema.h): the operands may be swapped.
  bool commutative = false;
  /// The results depend on operand 0's shape only, not on its data (Shape,
  /// Size): a kernel may run on a dataless tensor of that shape.
  bool shapeOnly = false;
  /// The rule infers the node's subgraphs itself (control flow, through
  /// InferCtx's subgraph calls); otherwise the engine infers every subgraph
  /// before the rule runs.
  bool infersSubgraphs = false;
  /// Note [Op facts].
  bool elementwise = false;
  bool broadcasting = false;
  bool shapePreserving = false;
  bool reshapes = false;
  AxisFact axis = AxisFact::None;
  /// Note [Version adapters]: from the previous version to this one, and
  /// back; null where the step needs no rewrite or none is known.
  VersionAdapter upgrade = nullptr;
  VersionAdapter downgrade = nullptr;
  /// Note [Expansion builders]: the node as nodes of other ops; null where
  /// the schema has no context-dependent body or none is written.
  ExpansionBuilder expand = nullptr;
  /// Note [Validity checks]; null when the schema says all.
  ValidityCheck validate = nullptr;
};

/// Attaches rules, kernels and traits to the entries of one domain.
class OpRegistrar {
public:
  /// The entries of one op: by default every version; `since(v)` narrows
  /// to versions v and later (a later `since` wins for its versions).
  class Op {
  public:
    Op &since(int64_t v) {
      since_ = v;
      return *this;
    }
    Op &infer(infer::Rule rule);
    Op &kernel(KernelFn fn);
    Op &commutative();
    Op &shapeOnly();
    Op &infersSubgraphs();
    /// Note [Op facts].
    Op &elementwise();
    Op &broadcasting();
    Op &shapePreserving();
    Op &reshapes();
    Op &axis(AxisFact f);
    /// Version adapters (Note [Version adapters]) of exactly the entry
    /// `since(v)` names: `r["Squeeze"].since(13).upgrade(f).downgrade(g)`.
    Op &upgrade(VersionAdapter fn);
    Op &downgrade(VersionAdapter fn);
    /// The expansion builder (Note [Expansion builders]) of exactly the
    /// entry `since(v)` names: `r["Gelu"].since(20).expand(f)`.
    Op &expand(ExpansionBuilder fn);
    /// Note [Validity checks] (every version, or from `since(v)` on).
    Op &validate(ValidityCheck fn);
    /// Shorthands of the rule and kernel tables: `r["Relu"] = rule;`.
    Op &operator=(infer::Rule rule) { return infer(std::move(rule)); }
    Op &operator=(KernelFn fn) { return kernel(fn); }

  private:
    friend class OpRegistrar;
    Op(OpRegistrar &r, llvm::StringRef op) : r_(r), op_(op) {}
    template <typename F> Op &apply(F &&f);
    OpRegistrar &r_;
    llvm::StringRef op_;
    int64_t since_ = 0;
  };

  Op operator[](llvm::StringRef op) { return Op(*this, op); }
  llvm::StringRef domain() const { return domain_; }

private:
  friend class OpRegistry;
  OpRegistrar(class OpRegistry &reg, llvm::StringRef domain) : reg_(reg), domain_(domain) {}
  class OpRegistry &reg_;
  llvm::StringRef domain_;
};

class OpRegistry {
public:
  /// The registry, built on first use from the schema table and the family
  /// files.
  static OpRegistry &get();

  /// The entry in force for `op` of `domain` at `version` (the newest whose
  /// since_version is not above it; an op used below its first version
  /// gets its version-0 entry); null for an op nobody knows.
  const OpEntry *lookup(llvm::StringRef domain, llvm::StringRef op, int64_t version) const;
  /// The entry in force for `n` (IR/Opset.h: opsetInForce).
  const OpEntry *lookup(const Node &n) const;
  /// Every entry of (domain, op), oldest first; empty if unknown.
  llvm::ArrayRef<OpEntry> versions(llvm::StringRef domain, llvm::StringRef op) const;
  /// True if some version of (domain, op) has a kernel.
  bool hasKernel(llvm::StringRef domain, llvm::StringRef op) const;

  /// Registration (family files, extensions, tests). An op of `domain`
  /// without a schema gets a version-0 entry.
  OpRegistrar registrar(llvm::StringRef domain = "") { return OpRegistrar(*this, domain); }
  /// Adds the entries of schemas registered after the registry was built
  /// (registerSchema in OpSchema.h calls it).
  void addSchemaEntries(llvm::StringRef domain, llvm::StringRef op);

private:
  OpRegistry();
  friend class OpRegistrar;
  struct OpVersions {
    /// versions[0] is the version-0 entry; the rest by since_version.
    std::vector<OpEntry> versions;
  };
  OpVersions &at(llvm::StringRef domain, llvm::StringRef op);
  const OpVersions *find(llvm::StringRef domain, llvm::StringRef op) const;
  /// Domain ("" for the default one) -> op type -> versions.
  llvm::StringMap<std::unique_ptr<llvm::StringMap<OpVersions>>> domains_;
  llvm::StringMap<OpVersions> *defaultDomain_ = nullptr;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_OPREGISTRY_H
