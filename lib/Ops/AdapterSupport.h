//===- AdapterSupport.h - Helpers of the version adapters -----------------===//
//
// The moves most version changes are made of (Note [Version adapters] in
// OpRegistry.h): an attribute of integers becoming an int64 operand and back.
// Each helper honours AdapterContext::checkOnly.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_ADAPTERSUPPORT_H
#define ONNXIR_LIB_OPS_ADAPTERSUPPORT_H

#include "onnxir/Ops/OpRegistry.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/Tensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace onnxir::adapters {

/// An adapter's refusal: FailedPrecondition with the reason.
inline absl::Status refuse(std::string why) {
  return absl::FailedPreconditionError(std::move(why));
}

/// True if result #i of `n` exists and is read (a use, or a graph output).
inline bool resultRead(const Node &n, unsigned i) {
  Value *v = i < n.numResults() ? n.result(i) : nullptr;
  return v && (!v->useEmpty() || v->isGraphOutput());
}

/// Empties the (unread) result slots of `n` from #first on.
inline void dropResultsFrom(Node &n, unsigned first) {
  for (unsigned i = first; i < n.numResults(); ++i)
    if (n.result(i)) (void)n.eraseResult(i);
  n.trimTrailingEmptyResults();
}

/// Moves the ints attribute `attr` to a new int64 constant operand #`index`
/// (empty slots fill the gap). Nothing to do when the attribute is absent;
/// `dropEmpty`: an empty list is removed instead (it means the same as no
/// operand). Refuses a reference to a function attribute.
absl::Status intsAttrToOperand(Node &n, AdapterContext &c, llvm::StringRef attr, unsigned index,
                               bool dropEmpty);
/// Moves operand #`index`, which must be the last one, to the ints attribute
/// `attr`. Nothing to do when the operand is absent; `dropEmpty`: an empty
/// constant sets no attribute. Refuses an operand that is not a constant.
absl::Status operandToIntsAttr(Node &n, AdapterContext &c, unsigned index, llvm::StringRef attr,
                               bool dropEmpty);

/// A new constant operand for `n`: c.constant (a Constant node) where that is
/// valid at the step's opset, else (Constant-1 takes only float types, until
/// opset 9) an initializer of `n`'s graph.
Value *newConstant(Node &n, AdapterContext &c, llvm::StringRef base, Tensor t);

/// Erases the Constant node defining `v` if nothing reads `v` any more (an
/// operand an adapter replaced; the node comes before the adapted one, so no
/// later step of the conversion holds it).
void eraseIfDeadConstant(Value *v);

/// For a step that only added optional attributes whose absence keeps the old
/// meaning: up is nothing to do (`noChange`); down (`noNewAttributes`) refuses
/// a node that sets an attribute the older schema (at c.to) lacks.
absl::Status noChange(Node &n, AdapterContext &c);
absl::Status noNewAttributes(Node &n, AdapterContext &c);
/// Down, for optional operands and results the newer version added: refuses
/// a node that fills an operand slot the older schema (at c.to) lacks, or
/// has such a result that is read (a use or a graph output); unread ones are
/// emptied. Empty slots are fine.
absl::Status noNewOperands(Node &n, AdapterContext &c);

/// Note [consumed_inputs]: opset 6 removed the legacy attribute
/// `consumed_inputs` of some 30 operators, a hint to old runtimes of which
/// operands an output may overwrite in place; it never changed the values
/// computed. Up: it is dropped (`dropConsumedInputs`); down: nothing to do
/// (`noChange`; BatchNormalization-1, where it is required, sets it itself).
absl::Status dropConsumedInputs(Node &n, AdapterContext &c);

/// The int value of attribute `name`, `dflt` when absent; a refusal if it is
/// a reference to a function attribute or not an int.
absl::StatusOr<int64_t> intAttrOr(const Node &n, llvm::StringRef name, int64_t dflt);

/// Note [Legacy broadcast]: before opset 7, binary ops (Add, Sub, Mul, Div,
/// Pow, And, Or, Xor, Equal, Greater, Less) took `broadcast` (default 0: the
/// shapes are equal) and `axis`; with broadcast=1 operand B is broadcast to
/// A's shape, B's shape being a contiguous run of A's dims starting at
/// `axis`, or a suffix of A's shape when axis is absent, or one element.
/// Opset 7 broadcasts both operands the numpy way (right-aligned, dims of 1
/// stretch). Up: every legacy form is a numpy form once B's dims line up at
/// the right: B with `axis` not at the end is reshaped (a constant B as a new
/// constant, otherwise a Reshape that appends dims of 1), which needs the
/// ranks of A and B. Down: equal shapes need nothing; B's shape a suffix of
/// A's, or one element of rank <= A's, sets broadcast=1; anything else (A
/// stretched, dims of 1 stretched inside B, unknown shapes) has no legacy
/// form and is refused, but for a constant B whose dims of 1 numpy stretches
/// at its ends: it becomes a new constant without them, placed by `axis`
/// (the form legacyBroadcastUp turns into a numpy one). Gemm-6 `broadcast` of C against the (M, N) result is
/// the same rule (`gemmBroadcastUp/Down`).
absl::Status legacyBroadcastUp(Node &n, AdapterContext &c);
absl::Status legacyBroadcastDown(Node &n, AdapterContext &c);
absl::Status gemmBroadcastUp(Node &n, AdapterContext &c);
absl::Status gemmBroadcastDown(Node &n, AdapterContext &c);

/// Down across the step where a variadic op (Max, Min, Sum, Mean at 8) began
/// to broadcast the numpy way: the older form needs every operand of one
/// shape, so every shape must be known and equal.
absl::Status sameShapesDown(Node &n, AdapterContext &c);

//===--- Helpers of the steps at opset 10 and later (adapt-modern) ------===//

/// An attribute added by a newer version and the value its absence means;
/// `kind` Int (`i`), String (`s`) or Ints (every element `i`, any length:
/// dilations of ones).
struct AttrDefault {
  llvm::StringRef name;
  AttrKind kind;
  int64_t i = 0;
  llvm::StringRef s = "";
};
/// Going down to the older form (at c.to) of a step that only added optional
/// attributes and operands whose absence keeps the old meaning: an attribute
/// the older schema lacks is dropped when it holds its listed default and
/// refused otherwise; an operand beyond the older schema's inputs is refused
/// (empty trailing slots are dropped). `op` names the older schema's op
/// (adapters never read the node's op type).
absl::Status olderFormOnly(Node &n, AdapterContext &c, llvm::StringRef op,
                           std::initializer_list<AttrDefault> defaults);
/// The element type of operand `i` when known (DataType::Undefined else).
DataType operandElemType(const Node &n, unsigned i);
/// The rank of operand `i` when known (-1 else).
int64_t operandRank(const Node &n, unsigned i);
/// A scalar constant of element type `dt` holding `v` (float types, or an
/// integer type for an integral v); null for another type.
Value *scalarConstant(Node &n, AdapterContext &c, llvm::StringRef base, DataType dt, double v);
/// The values of constant operand `i` as doubles; an error naming the operand
/// (and that opset c.to needs it as `what`) otherwise.
absl::StatusOr<std::vector<double>> constantOperandValues(const Node &n, AdapterContext &c,
                                                          unsigned i, llvm::StringRef what);
/// Removes operand `i` (trailing empty slots with it) and erases its defining
/// Constant node when that was the only use.
void dropOperand(Node &n, unsigned i);

/// Sets (replaces) an int or string attribute.
void setIntAttr(Node &n, llvm::StringRef name, int64_t v);
void setStringAttr(Node &n, llvm::StringRef name, std::string v);
/// The value of string attribute `name`, `dflt` when absent (intAttrOr, above,
/// for ints); an error for a reference to a function attribute or another kind.
absl::StatusOr<std::string> stringAttrOr(const Node &n, llvm::StringRef name, llvm::StringRef dflt);
/// Routes result #`index` of `n` through a new single-result node
/// `op`(result, extra operands...) placed after `n`: the new node's result
/// takes the old result's name and uses, the old result is renamed freshly
/// (its type is cleared: the wrapped node's result changes shape). Returns
/// the new node.
Node *wrapResult(Node &n, llvm::StringRef op, llvm::ArrayRef<Value *> extra, unsigned index = 0);

/// Up across a step that dropped the int attribute `name` (the newer version
/// always behaves as one of its values did): checks that it is an int where
/// present, and removes it.
inline absl::Status dropIntAttr(Node &n, AdapterContext &c, llvm::StringRef name) {
  if (auto v = intAttrOr(n, name, 0); !v.ok()) return v.status();
  if (!c.checkOnly) n.removeAttr(name);
  return absl::OkStatus();
}
/// Down across a step that added the int attribute `name`, its absence
/// meaning 0: a nonzero value is refused (`why(value)` says why), a zero one
/// removed.
template <typename Why>
absl::Status dropZeroIntAttr(Node &n, AdapterContext &c, llvm::StringRef name, Why &&why) {
  auto v = intAttrOr(n, name, 0);
  if (!v.ok()) return v.status();
  if (*v) return refuse(why(*v));
  if (!c.checkOnly) n.removeAttr(name);
  return absl::OkStatus();
}

} // namespace onnxir::adapters

#endif // ONNXIR_LIB_OPS_ADAPTERSUPPORT_H
