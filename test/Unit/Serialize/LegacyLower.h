//===- LegacyLower.h - The old ModelProto lowerer (test oracle) -----------===//
#ifndef ONNXIR_TEST_UNIT_SERIALIZE_LEGACYLOWER_H
#define ONNXIR_TEST_UNIT_SERIALIZE_LEGACYLOWER_H

#include "onnxir/IR/Model.h"
#include "onnxir/onnx.pb.h"

#include "absl/status/statusor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

#include <string>

namespace onnxir {
namespace legacy {

/// How the old lowerer wrote one tensor's data (the old save's sinks).
struct TensorSink {
  virtual ~TensorSink();
  /// True if it took the tensor (and filled `out`).
  virtual absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) = 0;
};

/// The old lowering into a ModelProto.
absl::Status lowerProto(const Model &m, proto::ModelProto *mp, TensorSink *sink);
/// The old serialization (deterministic, as every old writer did).
std::string serialize(const proto::ModelProto &mp);

} // namespace legacy
} // namespace onnxir

#endif
