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
#include "onnxir/IR/Tensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace onnxir::adapters {

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

/// For a step that only added optional attributes whose absence keeps the old
/// meaning: up is nothing to do (`noChange`); down (`noNewAttributes`) refuses
/// a node that sets an attribute the older schema (at c.to) lacks.
absl::Status noChange(Node &n, AdapterContext &c);
absl::Status noNewAttributes(Node &n, AdapterContext &c);

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
/// The value of int attribute `name`, `dflt` when absent; an error for a
/// reference to a function attribute or another kind.
absl::StatusOr<int64_t> intAttrOr(const Node &n, llvm::StringRef name, int64_t dflt);
absl::StatusOr<std::string> stringAttrOr(const Node &n, llvm::StringRef name, llvm::StringRef dflt);
/// Routes result #`index` of `n` through a new single-result node
/// `op`(result, extra operands...) placed after `n`: the new node's result
/// takes the old result's name and uses, the old result is renamed freshly
/// (its type is cleared: the wrapped node's result changes shape). Returns
/// the new node.
Node *wrapResult(Node &n, llvm::StringRef op, llvm::ArrayRef<Value *> extra, unsigned index = 0);

} // namespace onnxir::adapters

#endif // ONNXIR_LIB_OPS_ADAPTERSUPPORT_H
