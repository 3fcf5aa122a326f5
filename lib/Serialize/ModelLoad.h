//===- ModelLoad.h - Loading: buffers and text to the IR (internal) -------===//
//
// Internal: the loading side of lib/Serialize (what ModelFile.cpp's
// loadModelFile and the public lift and parse functions call). Each load
// makes one LoadSession (Note [Load session] in ExternalData.h) and hands it
// down; nothing about a load is kept per thread.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_MODELLOAD_H
#define ONNXIR_LIB_SERIALIZE_MODELLOAD_H

#include "ExternalData.h"
#include "FileIO.h"

#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace onnxir {
namespace detail {

/// Lifts a whole input buffer of binary protobuf (slim parsing when it is
/// big), binding external data through `session`.
absl::StatusOr<std::unique_ptr<Model>> liftBuffer(std::shared_ptr<const Buffer> buf,
                                                  LoadSession &session,
                                                  const std::string &source);

/// Parses a model in text syntax (Text.h), binding external data through
/// `session`.
absl::StatusOr<std::unique_ptr<Model>> parseModelText(llvm::StringRef text,
                                                      llvm::StringRef fileName,
                                                      LoadSession &session);

} // namespace detail
} // namespace onnxir

#endif
