//===- InferSupport.h - Helpers of the family files' rules (internal) -----===//
//
// What the type and shape rules of several families share beyond InferCtx.h:
// element type codes, the rule of the ops whose result is typed like their
// first operand, and the readers of small ints the Shape and Tensor rules use. Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_INFERSUPPORT_H
#define ONNXIR_LIB_OPS_INFERSUPPORT_H

#include "onnxir/IR/DataType.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace onnxir {

class DimExpr;
class Node;

namespace infer {

class InferCtx;

constexpr int32_t kBool = static_cast<int32_t>(DataType::Bool);
constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);
constexpr int32_t kFloat = static_cast<int32_t>(DataType::Float);
constexpr int32_t kString = static_cast<int32_t>(DataType::String);

/// The result has the element type and shape of input 0.
void sameAsInput(InferCtx &c);

/// Ranks read from data beyond this are not believed (a hostile file could
/// declare a shape tensor of 2^40 elements).
constexpr int64_t kMaxRank = 4096;

/// The value of a known dim within [0, limit], else nullopt.
std::optional<int64_t> smallDim(const DimExpr *e, int64_t limit = kMaxRank);

/// Ints from an attribute (older opsets) or an input (newer ones).
std::optional<std::vector<int64_t>> intsFrom(InferCtx &c, bool fromInput, unsigned input,
                                             llvm::StringRef attr);

/// Note [Validity checks] (OpRegistry.h): the declared shape of operand `i`
/// of `n` (its type's, else its initializer's), -1 for a dim that is not a
/// known size; nullopt when the operand is absent or its rank is unknown.
std::optional<std::vector<int64_t>> declaredDims(const Node &n, unsigned i);

} // namespace infer
} // namespace onnxir

#endif // ONNXIR_LIB_OPS_INFERSUPPORT_H
