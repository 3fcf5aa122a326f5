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

#include "absl/status/status.h"
#include "llvm/ADT/StringRef.h"

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

} // namespace onnxir::adapters

#endif // ONNXIR_LIB_OPS_ADAPTERSUPPORT_H
