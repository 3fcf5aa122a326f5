//===- KernelReuse.h - Results written into a dead input's bytes ----------===//
//
// Note [Results in a dead input's buffer]
//   An element-wise kernel makes a result of its input's shape and type,
//   and in a run the input often dies right after it (Relu after a Conv,
//   the Add of a residual): a fresh result buffer then costs its allocation,
//   its page faults and its zero fill, and for a moment both tensors are
//   live. The evaluator knows when an operand's tensor is given up: its last
//   use is this node, it was made by the run (not an initializer, a given
//   input or a graph output) and only the run's frame and this call hold it.
//   It says so for one kernel call (ConsumableInputs, bit i for input #i);
//   a kernel whose result element i depends only on element i of that input
//   may then write the result into the input's bytes (donatedInput), once it
//   can no longer fail with Unimplemented (the evaluator would run the
//   schema's body on the same inputs). donatedInput checks the tensor itself
//   too: raw bytes of exactly the result's element type and dims in a
//   buffer the run allocated (a StringBuffer, never a mapped model file) that
//   no other tensor shares (a Reshape, Identity or Constant result shares its
//   source's buffer, which then has more owners). The result tensor takes a
//   reference to the buffer, so it outlives the input. Folding never marks
//   inputs: there, every kernel allocates as before. Values are the same:
//   the same elements computed in the same order, each read before it is
//   overwritten.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_KERNELREUSE_H
#define ONNXIR_LIB_OPS_KERNELREUSE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace onnxir {
namespace kernels {

/// While it lives (one kernel call, on this thread): the caller gives up the
/// tensors of `call`'s inputs whose bit is set in `mask` (bit i: input #i;
/// inputs from #64 on are never given up). Nests: the previous marking comes
/// back at destruction.
class ConsumableInputs {
public:
  ONNXIR_API ConsumableInputs(const KernelCall &call, uint64_t mask);
  ONNXIR_API ~ConsumableInputs();
  ConsumableInputs(const ConsumableInputs &) = delete;
  ConsumableInputs &operator=(const ConsumableInputs &) = delete;

private:
  const KernelCall *prevCall_;
  uint64_t prevMask_;
};

/// An input's bytes taken over for a result (donatedInput): `data` is to be
/// written with the result's elements; `buf` holds them.
struct Donated {
  std::shared_ptr<const Buffer> buf;
  char *data = nullptr;
  size_t size = 0;
  /// The result: element type `dt`, `dims`, these bytes.
  ONNXIR_API Tensor take(DataType dt, std::vector<int64_t> dims) const;
};

/// Input #i's bytes, writable, for a result of `dt` x `dims` stored as
/// elements of `elemBytes` bytes (aligned to them), when the caller gave the
/// input up (ConsumableInputs) and the tensor allows it (Note [Results in a
/// dead input's buffer]); nullopt otherwise.
ONNXIR_API std::optional<Donated> donatedInput(const KernelCall &c, unsigned i, DataType dt,
                                               llvm::ArrayRef<int64_t> dims, size_t elemBytes);

} // namespace kernels
} // namespace onnxir

#endif // ONNXIR_LIB_OPS_KERNELREUSE_H
