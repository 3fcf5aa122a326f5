//===- Residency.h - Dropping the resident pages of mapped bytes -*- C++ -*-===//
//
// Note [Resident pages of mapped bytes]
//   A tensor's bytes may be a window of a mapped file (external data, raw
//   data of a mapped model). Reading them faults the file's pages in, and
//   they stay in the process's resident set as long as the mapping lives,
//   which is as long as any tensor of that file. A pass that reads every
//   weight once (dedup-initializers hashing, a fold's inputs) would so keep
//   the whole model resident: 5.5 GB for a 5.3 GiB decoder. After such a
//   read, releaseResident(bytes) drops the pages again; the mapping is
//   private, read-only and never written, so a later read faults the same
//   bytes back from the file (the page cache usually still has them).
//   Bytes that are not in a mapping (owned strings, typed storage) are left
//   alone. lib/Serialize installs the releaser when it maps a file; before
//   that nothing is mapped and the call does nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_RESIDENCY_H
#define ONNXIR_IR_RESIDENCY_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

ONNXIR_API_BEGIN
namespace onnxir {

class Tensor;

using ResidentReleaser = void (*)(llvm::StringRef bytes);

/// Installed by the serializer's file mapping (Note [Resident pages of mapped
/// bytes]).
void setResidentReleaser(ResidentReleaser fn);

/// Drops the resident pages under `bytes` if they lie in a mapped file and
/// span at least 64 KiB.
void releaseResident(llvm::StringRef bytes);

/// The same for a tensor's bytes, if they are already read (raw or loaded
/// external storage); never loads or converts anything.
void releaseResident(const Tensor &t);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_RESIDENCY_H
