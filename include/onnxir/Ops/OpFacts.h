//===- OpFacts.h - What passes ask about an op instead of listing it ------===//
//
// The questions a pass asks about operators, answered from the registry
// (Note [Op facts], OpRegistry.h) and the schema table, so that no pass
// keeps an op list or writes an opset version of its own:
//
//   if (const OpEntry *e = OpRegistry::get().lookup(n); e && e->elementwise) ...
//   if (rw.opsetVersion() < firstVersionWithInput("Slice", "starts")) ...
//   NodeAxes a = readAxes(n);                  // attribute or operand, by version
//   auto out = resolveReshape(in, shape, allowZero); // 0 / -1 / allowzero
//
// Versions come from the schema table: the first since-version whose schema
// has a property (a formal input, an attribute), or none (kNoVersion, above
// every opset: a comparison `opset < v` then refuses).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_OPFACTS_H
#define ONNXIR_OPS_OPFACTS_H

#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Attribute;
class Node;
class OpContext;
class OpSchema;
class Tensor;
class Value;

/// A version no opset reaches.
inline constexpr int64_t kNoVersion = INT64_MAX;

/// The first since-version of (`domain`, `op`) whose schema satisfies `pred`;
/// kNoVersion if none does.
int64_t firstVersionWhere(llvm::StringRef op, llvm::function_ref<bool(const OpSchema &)> pred,
                          llvm::StringRef domain = "");
/// The op's first since-version (its oldest schema).
int64_t firstVersion(llvm::StringRef op, llvm::StringRef domain = "");
/// The first since-version whose schema has the formal input `input` (the
/// version an attribute became an operand: Slice's starts at 10).
int64_t firstVersionWithInput(llvm::StringRef op, llvm::StringRef input,
                              llvm::StringRef domain = "");
/// The first since-version whose schema has / no longer has attribute `attr`
/// (Shape's start at 15; Gemm without the legacy broadcast at 7).
int64_t firstVersionWithAttribute(llvm::StringRef op, llvm::StringRef attr,
                                  llvm::StringRef domain = "");
int64_t firstVersionWithoutAttribute(llvm::StringRef op, llvm::StringRef attr,
                                     llvm::StringRef domain = "");

//===--- Note [Axes: attribute or operand] --------------------------------===//
// Squeeze, Unsqueeze and the Reduce* ops took `axes` as an attribute and
// then as operand 1 (13 for ReduceSum, Squeeze and Unsqueeze, 18 for the
// other reductions), Slice from its first operand form (10) as operand 3.
// Which form a node has is what the schema in force says: a formal input
// `axes` (its index) or an attribute. readAxes is the one reader; a pass
// never compares the opset with those versions itself. A node of an op
// without a schema at its version reads the attribute if it has one, else
// the operand at the index the op's newest schema gives.

/// How a node gives its axes.
struct NodeAxes {
  enum Kind : uint8_t {
    /// No axes given (the op's default: every axis, or none).
    Absent,
    /// `values` holds them.
    Known,
    /// An operand that is not a constant (or not an integer one).
    NotConstant,
    /// A function's attribute reference.
    Reference,
  } kind = Absent;
  std::vector<int64_t> values;
  /// The node's form has them as an operand (at `operand`).
  bool fromOperand = false;
  int operand = -1;
};

/// What a pass counts as a constant operand (PatternRewriter::constantTensor);
/// null: IR/ConstantValue.h's constantOf.
using ConstantReader = const Tensor *(*)(const Value *);

/// The `axes` of `n` in the form its version has (Note [Axes: attribute or
/// operand]).
NodeAxes readAxes(const Node &n, ConstantReader constant = nullptr);
/// True if the version in force of `c` (a rule's, a kernel's, a builder's)
/// takes `axes` as an operand (its schema has the formal input); false for
/// the attribute form and for an unknown version.
bool axesAsOperand(const OpContext &c);

//===--- Note [Reshape's target shape] ------------------------------------===//
// A Reshape's shape entry is a dim, or 0: the input's dim at that position
// (unless allowzero = 1, where 0 is a dim of size 0), or -1 (once): the
// dim that makes the element counts equal. Every reader of the rule asks
// reshapeEntry or resolveReshape.

enum class ReshapeEntry : uint8_t { Dim, CopyInput, Inferred, Invalid };
/// What shape entry `v` means.
ReshapeEntry reshapeEntry(int64_t v, bool allowZero);
/// True if `n` (a Reshape) has allowzero = 1.
bool reshapeAllowsZero(const Node &n);
/// The output dims of reshaping static dims `in` to `shape`; an error says
/// why the shape does not fit (a 0 past the input's rank, two -1, a dim
/// below -1, no -1 that makes the counts equal, another element count).
absl::StatusOr<std::vector<int64_t>> resolveReshape(llvm::ArrayRef<int64_t> in,
                                                    llvm::ArrayRef<int64_t> shape, bool allowZero);

//===--- Note [Negative axes before 11] -----------------------------------===//
// ONNX 1.6 (opset 11) let Squeeze, Unsqueeze, the Reduce*, Split, Concat,
// Gather, Flatten, ArgMax, Softmax, ... count axes from the end, mostly
// without changing the schema's signature, so the steps across 11 look
// type-only. Going below 11, a node with a negative axis or axes (attribute,
// or the constant `axes` operand of its current form) is refused rather than
// converted into a model older runtimes reject or misread; ops that took
// negative axes before 11 are refused too (safe). The schema data does not
// say it, so the version is written here, once.

/// The opset from which axes may be negative.
inline constexpr int64_t kNegativeAxesSince = 11;
/// True if the step between schemas `older` and `newer` of an op crosses
/// kNegativeAxesSince.
bool crossesNegativeAxes(const OpSchema &older, const OpSchema &newer);
/// True if `n` has a negative `axis`/`axes` attribute, or a constant operand
/// bound to the formal `axes` of `s` with a negative value.
bool hasNegativeAxes(const Node &n, const OpSchema &s);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_OPFACTS_H
