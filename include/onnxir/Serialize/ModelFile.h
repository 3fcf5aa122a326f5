//===- ModelFile.h - Load and save model files: the one I/O policy --------===//
//
// Tools call these two functions and nothing else for model files:
//
//   loadModelFile(path)        binary or text (by extension, else by content);
//                              "-" is standard input; pipes are read whole.
//   saveModelFile(m, path)     binary or text, one transaction for the model
//                              and its external data (Note [Save transaction]
//                              in lib/Serialize/ModelFile.cpp).
//
// Output paths (as LLVM's writeToOutput): "-" is standard output; a device,
// FIFO, /dev/stdout or process substitution is written in place, never
// replaced; a symbolic link is followed and its target replaced atomically
// (the link stays); an existing file keeps its permissions.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SERIALIZE_MODELFILE_H
#define ONNXIR_SERIALIZE_MODELFILE_H

#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

enum class ModelFormat { Auto, Binary, Text };

/// The one format rule (loads, saves, onnx-opt, onnxir-text, python): by
/// extension, `.onnxtxt` and `.onnxt` are text, `.onnx` and `.pb` binary;
/// any other name (or none, "" for a buffer) is decided by `content` when
/// it is given (text starts, after white space, with `<`, the header, or
/// `#`, a comment; neither can start a ModelProto), and is binary when it
/// is not (an output about to be written).
ModelFormat formatForPath(llvm::StringRef path,
                          std::optional<llvm::StringRef> content = std::nullopt);

/// The one base-directory rule: the directory external data locations of
/// the model at `path` are relative to (loads, and the data files a save
/// writes beside its output). The directory part of the path (`.` for a
/// bare name); for standard input ("-") and for a pipe, device or other
/// non-regular file, which have no directory of their own, the working
/// directory (`.`).
std::string modelDirectory(const std::string &path);

struct LoadFileOptions {
  /// Auto: formatForPath(path, the file's bytes).
  ModelFormat format = ModelFormat::Auto;
  /// Follow links of external data files that leave the model's directory
  /// (the Hugging Face cache layout). Off by default.
  bool allowExternalLinks = false;
  /// If set, receives the format the file was read as.
  ModelFormat *formatRead = nullptr;
};

/// Reads a model file ("-" is standard input).
absl::StatusOr<std::unique_ptr<Model>> loadModelFile(const std::string &path,
                                                     const LoadFileOptions &opts = {});

struct SaveFileOptions {
  /// Auto: formatForPath(path).
  ModelFormat format = ModelFormat::Auto;
  /// If non-empty: tensors over `externalThreshold` bytes (and all external
  /// ones) go to a data file of this name beside the output. If that name is
  /// taken by a file the output still needs while it is replaced, a fresh
  /// name `STEM.XXXXXXXX.EXT` is used (Note [Save transaction]).
  std::string externalDataFile;
  uint64_t externalThreshold = 1024;
  /// Text output: how to print. Unset: lossless for files (they read back
  /// field for field); the readable form for standard output and devices.
  std::optional<PrintOptions> text;
  /// Write binary even to a terminal.
  bool force = false;
  /// Model files this run read: an output may replace one (an in-place
  /// edit) but never a file one of them refers to.
  std::vector<std::string> inputs;
};

/// Writes `m` to `path`; on failure `path` and its data are untouched and no
/// temporary file is left.
absl::Status saveModelFile(const Model &m, const std::string &path,
                           const SaveFileOptions &opts = {});

/// OK, or the error that a mapped input or external data file shrank while
/// it was read (bytes read after that are zeros, not the file's).
absl::Status checkMappedFileReads();

} // namespace onnxir
ONNXIR_API_END

#endif
