//===- Npy.h - numpy's .npy files <-> tensors -----------------------------===//
//
// The array files of numpy (format versions 1 and 2, and 3 on read): a
// header dict of `descr`, `fortran_order` and `shape`, then the data. Read
// and written: little-endian (or byte-order-free) bool, int8-64, uint8-64,
// float16, float32 and float64 in C order, and strings written as numpy's
// UTF-32 text ('<Un', Note [Strings in .npy files] in lib/Eval/Npy.cpp);
// other element types are refused with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_EVAL_NPY_H
#define ONNXIR_EVAL_NPY_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <string>

ONNXIR_API_BEGIN
namespace onnxir {

/// Decodes the bytes of a .npy file.
absl::StatusOr<Tensor> parseNpy(llvm::StringRef bytes);
/// Encodes `t` as a .npy file (format 1.0, or 2.0 for a long header).
absl::StatusOr<std::string> writeNpy(const Tensor &t);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_EVAL_NPY_H
