//===- LLVMCompat.h - Spellings every supported LLVM understands ----------===//
//
// Note [LLVM versions]
//   onnxir builds with each LLVM Debian ships (14, 15, 16 and 19; see Note
//   [Which LLVM and how it is linked] in cmake/OnnxirDependencies.cmake).
//   Their APIs drift: StringRef::startswith/endswith became starts_with/
//   ends_with (the old names are gone in 19, the new ones absent in 14),
//   llvm::makeArrayRef is gone (write llvm::ArrayRef<T>(ptr, n)), llvm::None
//   and llvm::Optional gave way to std::nullopt and std::optional, and from
//   16 on ArrayRef converts from std::nullopt, so an overload set taking
//   std::optional<ArrayRef<T>> or ArrayRef<T> is ambiguous for a bare
//   std::nullopt (Context::getTensorType takes kUnknownRank instead).
//
//   The code uses the spellings all of them have. What has none lives here,
//   written once without version #ifs, so that a new LLVM means one edit.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SUPPORT_LLVMCOMPAT_H
#define ONNXIR_SUPPORT_LLVMCOMPAT_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

ONNXIR_API_BEGIN
namespace onnxir {

/// `s` begins with `prefix` (StringRef::startswith up to LLVM 18,
/// starts_with from 16 on).
inline bool startsWith(llvm::StringRef s, llvm::StringRef prefix) {
  return s.size() >= prefix.size() && s.take_front(prefix.size()) == prefix;
}

/// `s` ends with `suffix` (StringRef::endswith up to LLVM 18, ends_with
/// from 16 on).
inline bool endsWith(llvm::StringRef s, llvm::StringRef suffix) {
  return s.size() >= suffix.size() && s.take_back(suffix.size()) == suffix;
}

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SUPPORT_LLVMCOMPAT_H
