//===- FileIO.h - Mapped input, guarded reads, safe outputs (internal) ----===//
//
// The file-system layer under loading and saving: reading an input whole
// (mapped when it is a regular file, read into one buffer when it is a pipe
// or a terminal), the SIGBUS guard over mapped bytes, output files that are
// either replaced atomically or written in place, and removal of temporary
// files when a signal ends the process. No protobuf here.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_FILEIO_H
#define ONNXIR_LIB_SERIALIZE_FILEIO_H

#include "onnxir/IR/Tensor.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

namespace onnxir {
namespace detail {

std::string errnoText();
std::string errnoText(int err);
/// "a/b/c" -> "a/b", "c" -> ".", "/c" -> "/".
std::string dirOf(const std::string &path);
std::string baseName(const std::string &path);
/// realpath() of a directory, or the directory unchanged if that fails.
std::string realDir(const std::string &dir);

/// A file's identity (device and inode); valid() once filled.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool known = false;
  bool valid() const { return known; }
  bool operator==(const FileId &o) const { return known && o.known && dev == o.dev && ino == o.ino; }
};
FileId fileIdOf(const std::string &path); // follows links; invalid if absent
FileId fileIdOfFd(int fd);

// Note [Mapped-file faults]
// Bytes of a memory-mapped file that another process truncates raise SIGBUS
// when touched, wherever that is (a kernel, the printer, the writer). We use
// one guard for all of them instead of checks at every read: every mapping
// is registered in a fixed lock-free table, and the SIGBUS handler, when the
// faulting address lies in a registered mapping, maps a zero page over the
// faulting page, records which file shrank, and returns, so the read goes on
// with zeros. Everything that could make such bytes visible asks
// `mappedReadStatus()` before it commits: saves (before each rename), and
// onnx-opt after the passes and before printing. The cost on the fast path
// is nil (no per-read work; see bench/README.md). External data files are
// additionally re-checked against their size (fstat) right before mapping.
// A fault outside our mappings is a real crash: the handler removes the
// temporary files (Note [Signals]) and re-raises.

/// A Buffer over a read-only mapping of [offset, offset+length) of `fd`
/// (the descriptor may be closed afterwards). `name` is used in errors.
absl::StatusOr<std::shared_ptr<const Buffer>> mapFd(int fd, uint64_t offset, uint64_t length,
                                                    const std::string &name);
/// OK, or the error that a mapped file shrank while it was being read.
absl::Status mappedReadStatus();
/// If `bytes` lies in a live mapping made by mapFd, drops its pages (they are
/// read again from the file if touched). Otherwise does nothing.
void releaseMappedPages(llvm::StringRef bytes);

/// Reads a whole input: "-" is standard input. Regular files are mapped;
/// pipes, FIFOs, terminals and character devices are read into one buffer.
/// Errors name the file (`name`).
absl::StatusOr<std::shared_ptr<const Buffer>> readInput(const std::string &path,
                                                        const std::string &name);

// Note [Signals]
// Temporary files are registered in a lock-free table while they exist.
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ and unguarded SIGBUS/SIGSEGV
// unlink every registered file, restore the default action and re-raise, so
// the process still dies of the signal but leaves no `.NAME.tmp.*` behind
// (LLVM's RemoveFileOnSignal does the same). Only SIGKILL leaves them.
void registerTempFile(const std::string &path);
void unregisterTempFile(const std::string &path);
/// Unlinks every registered temporary file (for fatal paths).
void removeTempFiles();

/// `PID.HOST` of this process for temporary names (Note [Stale
/// temporaries] in FileIO.cpp).
std::string tempFileTag();
/// Removes the temporaries `.NAME.tmp.PID.HOST.XXXXXX` beside `target` left
/// by writers of this boot and pid namespace that no longer exist.
void removeStaleTempFiles(const std::string &target);

/// Where an output goes (the rules of LLVM's writeToOutput).
enum class OutputKind {
  Stdout,  ///< "-"
  InPlace, ///< an existing non-regular file (device, FIFO, /dev/stdout, >(...))
  Replace, ///< a regular file or a new name: temporary beside it, then rename
};

/// An output file. Replace outputs are written to `.NAME.tmp.PID.HOST.XXXXXX` beside
/// the (link-resolved) target and renamed over it on commit, keeping the
/// target's permissions; InPlace and Stdout outputs are written directly.
class OutputFile {
public:
  OutputFile() = default;
  ~OutputFile() { abandon(); }
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  /// Classifies `path` ("-" = stdout) without opening anything.
  static absl::StatusOr<OutputKind> classify(const std::string &path, std::string *target);
  /// Opens for writing. `modeFrom`, if given, is an existing file whose
  /// permissions a new file takes (else the target's, else 0666 & ~umask).
  absl::Status open(const std::string &path, const std::string &modeFrom = "");
  /// A temporary beside `target` (a Replace output by construction).
  absl::Status openTemp(const std::string &target, const std::string &modeFrom = "");

  int fd() const { return fd_; }
  OutputKind kind() const { return kind_; }
  /// The final path (after following links) of a Replace output.
  const std::string &target() const { return target_; }
  const std::string &tempPath() const { return tmp_; }
  absl::Status write(const char *p, size_t n);
  /// Flushes; Replace: fsync and rename over the target.
  absl::Status commit();
  /// Flushes and closes without renaming (the temporary stays registered).
  absl::Status finish();
  /// Renames the finished temporary to `finalPath`, never replacing an
  /// existing file (EEXIST is returned as AlreadyExists).
  absl::Status commitNoReplace(const std::string &finalPath);
  void abandon();

private:
  std::string target_, tmp_, name_;
  OutputKind kind_ = OutputKind::Replace;
  int fd_ = -1;
};

/// fsync()s a directory (after renames in it); errors ignored.
void syncDir(const std::string &dir);

} // namespace detail
} // namespace onnxir

#endif
