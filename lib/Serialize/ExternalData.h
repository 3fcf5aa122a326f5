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
// it: the load (its LoadSession) keeps a table from the location's path
// (the model's directory and the location, `.` and repeated `/` dropped)
// to the open file, and binds every later tensor of that path to the same
// descriptor, never opening the path again. So every tensor of one
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
#include "onnxir/Support/Export.h"

#include <map>
#include <memory>
#include <string>

// Exported from a shared libonnxir_Serialize for the unit tests (Note [Exported API]).
ONNXIR_API_BEGIN
namespace onnxir {
namespace detail {

struct ExternalFile;

// Note [Load session]
// Everything one load decides about external data travels in one object,
// passed explicitly from the load function to the lifter or text parser
// that binds the tensors: the directory locations are resolved from, whether
// links may leave it, and the table of files this load opened (Note [One
// open per file]). Nothing is kept per thread: two loads on one thread, or a
// load started while another is under way, each see their own policy and
// their own table (a thread-local policy used to let an inner load share the
// outer one's table, so a file the outer load had opened under a permissive
// policy was taken without the inner load's checks).
class LoadSession {
public:
  /// `baseDir` empty: locations are not resolved (external tensors get a
  /// loader that fails when read).
  LoadSession(std::string baseDir, bool allowLinksOutside);
  ~LoadSession();
  LoadSession(const LoadSession &) = delete;
  LoadSession &operator=(const LoadSession &) = delete;

  const std::string &baseDir() const { return baseDir_; }
  bool allowLinksOutside() const { return allowLinksOutside_; }

  /// Opens, checks and binds `ref` (Note [External data descriptors]);
  /// records the resolved file in `ref.resolvedPath` and returns the loader
  /// that maps the range of the kept descriptor on first use. Errors say
  /// what is wrong with which location, without a place; the caller adds
  /// it. With no base directory, an empty loader (reads fail).
  absl::StatusOr<ExternalLoader> bind(ExternalDataRef &ref, const std::string &tensorName);

private:
  std::string baseDir_;
  bool allowLinksOutside_;
  std::map<std::string, std::shared_ptr<ExternalFile>> files_; ///< by load key
};

/// Reads `ref.location`, `checksum`, `offset` and `length` from
/// `ref.entries`, as binary and text models give them: offset and length
/// are decimal digits only (no sign, no space) that fit 64 bits, and a
/// location is required. Errors name the entry, without a place.
absl::Status readExternalEntries(ExternalDataRef &ref);

/// Identity of the file an external tensor was bound to (through the kept
/// descriptor), or invalid if it is unbound.
FileId boundFileId(const ExternalDataRef &ref);

} // namespace detail
} // namespace onnxir
ONNXIR_API_END

#endif
