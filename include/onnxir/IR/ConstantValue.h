//===- ConstantValue.h - The tensor a Constant node or initializer defines ===//
//
// The one decoder of a Constant node's value (Note [Constant values]); the
// passes, the inference rules and the kernels all call it.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_CONSTANTVALUE_H
#define ONNXIR_IR_CONSTANTVALUE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"

ONNXIR_API_BEGIN
namespace onnxir {

class Attribute;
class Node;
class Value;

//===--- Note [Constant values] -------------------------------------------===//
// A Constant node (ONNX: "exactly one of the provided attributes ... must be
// specified") produces, from its one value attribute:
//   value          the tensor itself (name cleared when copied);
//   sparse_value   the tensor densified: zeros, then values at the indices
//                  (a [NNZ] list of linear indices or an [NNZ, rank] list of
//                  coordinates); 4-bit element types are not densified;
//   value_float / value_int / value_string     a scalar float/int64/string;
//   value_floats / value_ints / value_strings  a 1-D float/int64/string.
// Numbers are built as raw little-endian data, strings in string_data.
// Errors, naming the node: no value attribute or more than one, a value
// attribute of the wrong kind (or an empty one), a reference to a function
// attribute (unresolved here: resolve it first, then decode the attribute),
// bad sparse indices. Other attributes of the node are not looked at.

/// True for the names of Constant's value attributes.
bool isConstantValueAttr(llvm::StringRef name);

/// The tensor that one value attribute `a` defines. For `value` the result is
/// the attribute's own tensor (no copy); otherwise it is built in `scratch`.
/// The three-argument form decodes `a` as Constant's attribute `name`: for
/// an attribute resolved from a reference (it then bears the caller's name).
absl::StatusOr<const Tensor *> decodeConstantAttr(const Attribute &a, Tensor &scratch);
absl::StatusOr<const Tensor *> decodeConstantAttr(llvm::StringRef name, const Attribute &a,
                                                  Tensor &scratch);

/// The tensor that the Constant node `n` (its attributes) defines; as above.
absl::StatusOr<const Tensor *> constantValue(const Node &n, Tensor &scratch);
absl::StatusOr<const Tensor *> constantValue(llvm::ArrayRef<const Attribute *> attrs,
                                             Tensor &scratch);
/// A copy (name cleared).
absl::StatusOr<Tensor> constantValue(const Node &n);
/// The tensor of a well-formed Constant in the `value` form, without decoding
/// anything; null for the other forms (which need storage) and malformed ones.
const Tensor *storedConstantValue(const Node &n);

/// The constant `v` holds: its initializer when it is not a graph input, or
/// the value of the Constant node defining it; null otherwise or when the
/// Constant is malformed.
const Tensor *constantOf(const Value *v, Tensor &scratch);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_CONSTANTVALUE_H
