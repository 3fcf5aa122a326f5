//===- ModelSave.h - Lowering for a save, and the streamed writer ---------===//
//
// Internal: the binary side of saving (what ModelFile.cpp's transaction
// calls). A LoweredModel is one save of a model: tensor data already
// written to the data file where the plan says so, the model's bytes
// written straight from the IR by write() (Note [Direct lower]).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_MODELSAVE_H
#define ONNXIR_LIB_SERIALIZE_MODELSAVE_H

#include "FileIO.h"

#include "onnxir/IR/Model.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <memory>
#include <string>

namespace onnxir {
namespace detail {

/// Where tensor data goes when a model is lowered for a save.
struct DataPlan {
  /// Non-empty: tensors of more than `threshold` bytes (and, with
  /// `moveExternal`, every already external tensor) are written to the data
  /// file and referenced under this name.
  std::string location;
  uint64_t threshold = UINT64_MAX;
  bool moveExternal = false;
  /// External tensors are written inline (outputs that have no directory).
  bool inlineExternal = false;
  /// Big raw initializers are spliced in while writing (Note [Streamed save]).
  bool stream = true;
};

class LoweredModel {
public:
  ~LoweredModel();
  /// Lowers `m`; moved tensor data is written to `dataFile` (needed iff
  /// `plan.location` is set).
  static absl::StatusOr<std::unique_ptr<LoweredModel>> lower(const Model &m,
                                                             const DataPlan &plan,
                                                             OutputFile *dataFile);
  /// How many tensors were written to the data file.
  size_t numMoved() const;
  /// Renames the data file in every reference written (before write or
  /// forEachPlaced).
  void setLocation(const std::string &location);
  /// Writes the binary model to `out` (`name` for messages).
  absl::Status write(OutputFile &out, const std::string &name);
  /// For text output (Note [Text output from the IR] in ModelFile.cpp):
  /// calls `fn` with each tensor whose data this save placed elsewhere and
  /// the tensor the lowered model holds instead (its data in the data file
  /// under the current location, or inline).
  void forEachPlaced(llvm::function_ref<void(const Tensor &, std::unique_ptr<Tensor>)> fn) const;

  struct Impl; // (public for ModelSave.cpp's helpers)

private:
  LoweredModel();
  std::unique_ptr<Impl> impl_;
};

/// Every tensor of the model: dense and sparse initializers, attribute
/// tensors of every node (nested graphs and function bodies included) and
/// of function attribute defaults.
void forEachTensor(const Model &m, llvm::function_ref<void(const Tensor &)> fn);

} // namespace detail
} // namespace onnxir

#endif
