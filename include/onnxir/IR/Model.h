//===- Model.h - The root of the IR ---------------------------------------===//
//
// A Model owns a Context, the main Graph, model-local Functions and the
// model-level properties of ModelProto.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_MODEL_H
#define ONNXIR_IR_MODEL_H

#include "onnxir/IR/Context.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/Support/Export.h"

#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// DeviceConfigurationProto.
struct DeviceConfiguration {
  std::optional<std::string> name;
  std::optional<int32_t> numDevices;
  std::vector<std::string> device;
  std::string extras;
};

/// Highest ONNX IR version this build reads and writes.
inline constexpr int64_t kMaxIRVersion = 14;

class Model {
public:
  Model();
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  Context &getContext() { return *ctx_; }
  const Context &getContext() const { return *ctx_; }

  std::optional<int64_t> irVersion;
  std::vector<OpsetImport> opsetImports;
  std::optional<std::string> producerName, producerVersion, domain;
  std::optional<int64_t> modelVersion;
  std::optional<std::string> docString;
  Metadata metadata;
  /// TrainingInfoProto messages, kept verbatim (serialized bytes).
  std::vector<std::string> trainingInfo;
  std::vector<DeviceConfiguration> configurations;
  std::string extras; ///< opaque serializer bytes

  /// The main graph (present unless hasGraph is false).
  Graph &graph() { return *graph_; }
  const Graph &graph() const { return *graph_; }
  /// False if the proto had no `graph` field.
  bool hasGraph = true;

  std::vector<std::unique_ptr<Function>> &functions() { return functions_; }
  const std::vector<std::unique_ptr<Function>> &functions() const { return functions_; }
  Function &addFunction();
  /// The function `n` calls, or null. O(functions).
  Function *findFunction(const Node &n) const;

  /// Version of `domain` ("" and "ai.onnx" are the same) in opset_import, or
  /// -1 if not imported.
  int64_t opsetVersion(llvm::StringRef domain) const;

  /// Walks every graph: main graph, nested graphs, function bodies.
  void walkGraphs(llvm::function_ref<void(Graph *)> fn);

private:
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Graph> graph_;
  std::vector<std::unique_ptr<Function>> functions_;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_MODEL_H
