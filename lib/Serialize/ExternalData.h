//===- ExternalData.h - External tensor data files (internal) -------------===//
//
// Note [External data descriptors]
// Each external data file is opened once, when the model is loaded, and the
// descriptor is kept for as long as a tensor refers to it: loading checks the
// location (relative, no `..`), opens it with O_NONBLOCK (a FIFO or device
// swapped in cannot block the open) and then checks the open file itself: a
// regular file, inside the model's directory (by /proc/self/fd, so a
// directory swapped for a link after the check cannot redirect it), large
// enough for every range that refers to it. Reads map ranges of that
// descriptor, never the path again: a file renamed or replaced afterwards is
// not seen, and one truncated in place is caught by a size re-check before
// mapping and by the fault guard (Note [Mapped-file faults] in FileIO.h).
// Links that leave the model's directory are refused unless the load allows
// them (LiftOptions::allowExternalLinks, onnx-opt --allow-external-links):
// the Hugging Face cache stores every file as a link into `../../blobs`.
// No protobuf here: the text parser uses this too.
//
// Note [One open per file]
// A load opens each external data file once, however many tensors refer to
// it: the load (an ExternalPolicyScope) keeps a table from the location's
// path (the model's directory and the location, `.` and repeated `/`
// dropped) to the open file, and binds every later tensor of that path to
// the same descriptor, never opening the path again. So every tensor of one
// load reads one file, even if a save replaces the model and its data in
// between (one load used to take w0 from one save and w1 from the next). A
// file is also mapped once (the whole file, at the first read of any of its
// tensors; each tensor is a window of it) while any tensor holds its bytes:
// one mapping per file, not per tensor, and no tensor can see another
// version of the file than its neighbours.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_EXTERNALDATA_H
#define ONNXIR_LIB_SERIALIZE_EXTERNALDATA_H

#include "FileIO.h"

#include "onnxir/IR/Tensor.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace onnxir {
namespace detail {

/// How external data is bound while one model is loaded (set for the
/// duration of a load by ExternalPolicyScope; default: links must stay in
/// the model's directory).
struct ExternalPolicy {
  bool allowLinksOutside = false;
};

struct LoadFiles;

/// Sets the policy for one load. The outermost scope of a thread also holds
/// the load's table of open external files (Note [One open per file]), which
/// nested scopes share.
class ExternalPolicyScope {
public:
  explicit ExternalPolicyScope(const ExternalPolicy &p);
  ~ExternalPolicyScope();
  ExternalPolicyScope(const ExternalPolicyScope &) = delete;
  ExternalPolicyScope &operator=(const ExternalPolicyScope &) = delete;

private:
  const ExternalPolicy *prev_;
  std::unique_ptr<LoadFiles> files_; ///< set in the outermost scope
};

/// Opens, checks and binds `ref` (Note [External data descriptors]); records
/// the resolved file in `ref.resolvedPath` and returns the loader that maps
/// the range of the kept descriptor on first use. Errors say what is wrong
/// with which location, without a place; the caller adds it. An empty
/// `baseDir` gives an empty loader (reads fail).
absl::StatusOr<ExternalLoader> bindExternal(const std::string &baseDir, ExternalDataRef &ref,
                                            const std::string &tensorName);

/// Identity of the file an external tensor was bound to (through the kept
/// descriptor), or invalid if it is unbound.
FileId boundFileId(const ExternalDataRef &ref);

} // namespace detail
} // namespace onnxir

#endif
