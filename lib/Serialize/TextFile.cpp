//===- TextFile.cpp - Text models with their external data ----------------===//
//
// The parser is lib/Text's; a model file's external data is bound here, by
// the load session that binary lifts use (Note [The text layer]).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Serialize/Text.h"

#include "ModelLoad.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Support/LLVMCompat.h"

#include <sys/stat.h>

namespace onnxir {

namespace detail {
absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName,
                                                      LoadSession &session) {
  return parseModelTextWith(
      text, fileName,
      [&](ExternalDataRef &ref, const std::string &tensorName) -> absl::StatusOr<ExternalLoader> {
        if (absl::Status s = readExternalEntries(ref); !s.ok()) return s;
        return session.bind(ref, tensorName);
      });
}
} // namespace detail

absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName) {
  // The text of a model file reads its data where loadModelFile would; a
  // name that is no file (`<text>`, or text made in memory) has no directory.
  std::string name = fileName.str();
  struct stat st;
  bool isFile = !fileName.empty() && !startsWith(fileName, "<") && ::stat(name.c_str(), &st) == 0;
  detail::LoadSession session(isFile ? modelDirectory(name) : "", false);
  return detail::parseModelText(text, fileName, session);
}

absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName,
                                                      const std::string &baseDir) {
  detail::LoadSession session(baseDir, false);
  return detail::parseModelText(text, fileName, session);
}

absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      const LiftOptions &opts) {
  detail::LoadSession session(opts.baseDir, opts.allowExternalLinks);
  return detail::parseModelText(text, opts.sourceName.empty() ? "<text>" : opts.sourceName,
                                session);
}

} // namespace onnxir
