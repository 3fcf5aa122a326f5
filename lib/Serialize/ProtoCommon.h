//===- ProtoCommon.h - Shared pieces of lift and lower (internal) ---------===//
//
// Note [Residuals]
// The IR models every field of the schema, but not two things protobuf can
// carry: unknown fields (from newer IR versions) and the presence of a field
// explicitly set to its default (proto2 has-bits: `domain: ""` written out).
// For each message the lifter builds a residual: an empty message of the same
// type holding just those, serialized into the IR entity's `extras`. The
// lowerer parses the residual into the output message first and then sets the
// modeled fields, so lower(lift(m)) == m field for field. Residuals are empty
// (and cost nothing) for the vast majority of messages.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_PROTOCOMMON_H
#define ONNXIR_LIB_SERIALIZE_PROTOCOMMON_H

#include "ExternalData.h"
#include "FileIO.h"
#include "onnxir/IR/Model.h"
#include "onnxir/onnx.pb.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace onnxir {
namespace detail {

/// Serialized residual, or "" when it holds nothing.
template <class M> std::string finishResidual(const M &res) {
  if (res.ByteSizeLong() == 0) return std::string();
  return res.SerializeAsString();
}

/// Copies `src`'s unknown fields into `res`.
template <class M> void keepUnknown(const M &src, M &res) {
  if (!src.unknown_fields().empty()) res.mutable_unknown_fields()->MergeFrom(src.unknown_fields());
}

/// Merges a residual into `msg` (before the modeled fields are set).
template <class M> void applyResidual(const std::string &extras, M *msg) {
  if (!extras.empty()) msg->MergeFromString(extras);
}

/// Where the raw_data of one main-graph initializer lies in the input file.
struct RawView {
  uint64_t offset = 0, length = 0;
};

/// Raw data the lifter takes as views of the mapped file instead of from
/// the parsed message (see Note [Slim parsing] in ModelLoad.cpp).
struct FileViews {
  std::shared_ptr<const Buffer> file;
  /// Indexed by main-graph initializer position; length-0 optional = none.
  std::vector<std::optional<RawView>> initializers;
};

/// Lifts a parsed ModelProto (its raw_data strings are moved out, not
/// copied), binding external data through `session`.
absl::StatusOr<std::unique_ptr<Model>> liftProto(proto::ModelProto &mp, LoadSession &session,
                                                 const std::string &sourceName,
                                                 const FileViews *views = nullptr);

/// How the lowerer writes one tensor's data.
struct TensorSink {
  virtual ~TensorSink();
  /// Returns true if it took the tensor (and filled `out` with an external
  /// reference); false to let the lowerer write the data inline/as is.
  virtual absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) = 0;
};

/// Lowers one type (verbatim from its extras when it has them).
void lowerType(const Type *t, proto::TypeProto *tp);

} // namespace detail
} // namespace onnxir

#endif
