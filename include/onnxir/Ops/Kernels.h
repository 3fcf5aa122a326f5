//===- Kernels.h - Evaluate one ONNX operator on constant tensors ---------===//
//
// The constant folder's evaluator: our own C++ kernels for the default ONNX
// domain, no runtime dependency. A kernel takes the operator's identity, the
// opset version in force, its attributes and its constant inputs, and gives
// the output tensors, or says why it cannot (unsupported op, type or opset
// version; invalid inputs; an output over the size limit).
//
// Note [Kernel numerics]
//   Every element type is computed in a "compute kind": float32 and the
//   reduced-precision floats (float16, bfloat16, float8, float4) in float,
//   double in double, bool and every integer type up to 32 bits plus int64 in
//   int64_t, uint64 in uint64_t, strings as std::string. Results are rounded
//   (floats) or wrapped (integers) to the element type once per operator, as
//   numpy does for one ufunc call. float32 is never computed in double.
//   Integer Div truncates toward zero; integer division by zero is refused
//   rather than folded.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_KERNELS_H
#define ONNXIR_OPS_KERNELS_H

#include "onnxir/IR/Graph.h" // Attribute needs Graph complete
#include "onnxir/IR/Tensor.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// One operator application to evaluate: the op (OpContext: domain, op type,
/// opset version in force, attributes read with the schema's defaults) and
/// its constant inputs. The registry (OpRegistry.h) says which ops of which
/// domains have kernels (today: the default domain's, and those registered
/// with their schema by an extension).
struct KernelCall : OpContext {
  KernelCall(llvm::StringRef domain, llvm::StringRef opType, int64_t opset,
             llvm::ArrayRef<const Attribute *> attributes = {})
      : OpContext(domain, opType, opset), attributes(attributes) {}
  /// The node's attributes (none may be a function attribute reference).
  llvm::ArrayRef<const Attribute *> attributes;
  /// The inputs in order; null marks an omitted optional input.
  llvm::ArrayRef<const Tensor *> inputs;
  /// Number of result slots the node has (Split uses it).
  unsigned numOutputs = 1;
  /// Refuse (ResourceExhausted) before producing a tensor bigger than this.
  uint64_t maxOutputBytes = UINT64_MAX;
  /// The run's seed for a random op whose node has no `seed` attribute
  /// (the evaluator's EvalOptions::seed; the attribute wins when present).
  /// A separate field, not a made-up float attribute: every 64-bit seed
  /// stays distinct.
  std::optional<uint64_t> seed;
  /// Matrix products may use the build tuned for this CPU (AVX2 + FMA: a
  /// different rounding, Note [Host-tuned products] in KernelSupport.cpp).
  /// The evaluator sets it; constant folding leaves it false, so that a
  /// folded model does not depend on the machine that folded it.
  bool hostTuned = false;
  /// Results ONNX leaves undefined get a value instead of an error
  /// (Note [Undefined results when running] in lib/Ops/Cast.cpp): a float
  /// cast to an integer type out of its range saturates, NaN gives 0. The
  /// evaluator sets it (a model may compute such a value and discard it, as
  /// T5's position buckets do); constant folding leaves it false and
  /// declines, so no undefined value is baked into a model.
  bool defineUndefined = false;

  /// The attribute named `name`, or null.
  const Attribute *attr(llvm::StringRef name) const override;
  /// Input #i, or null when absent or omitted.
  const Tensor *input(unsigned i) const {
    return i < inputs.size() ? inputs[i] : nullptr;
  }
  const Tensor *inConstant(unsigned i) const override { return input(i); }
};

/// Evaluates `call`. Errors: Unimplemented (no kernel for this op, type or
/// version), InvalidArgument (inputs the operator rejects, or results ONNX
/// leaves undefined), ResourceExhausted (an output over maxOutputBytes).
/// The output vector has one entry per node result the kernel defines.
absl::StatusOr<std::vector<Tensor>> evaluateKernel(const KernelCall &call);

/// True if a kernel exists for (`domain`, `opType`) in some version
/// (OpRegistry::hasKernel).
bool hasKernel(llvm::StringRef domain, llvm::StringRef opType);

/// The build of the matrix products a call with KernelCall::hostTuned =
/// `hostTuned` runs on: "avx2-fma" or "baseline" (Note [Host-tuned
/// products], lib/Ops/KernelSupport.cpp).
const char *matrixProductsBuild(bool hostTuned);

/// Bytes a tensor's data takes in memory and on disk (strings: their
/// lengths); 0 when the dims are invalid.
uint64_t tensorDataBytes(const Tensor &t);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_KERNELS_H
