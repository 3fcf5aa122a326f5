//===- Tensor.h - Tensor constants with lossless storage ------------------===//
//
// A Tensor is an initializer or attribute constant. Its data lives in one of
// four storages (Note [Tensor storage]); one typed read API works over all.
//
// Note [Tensor storage]
//   Raw      bytes in ONNX raw_data layout (little-endian, sub-byte types
//            packed), held as a window of a shared Buffer: either bytes moved
//            out of a parsed proto, a view into a memory-mapped model file, or
//            a buffer a pass produced. Never copied when only moved around.
//   Typed    the typed repeated field the proto used (float_data, int32_data,
//            string_data, int64_data, double_data, uint64_data), kept exactly
//            as given so that lowering reproduces it.
//   External a window (location, offset, length, checksum) of a file beside
//            the model, read lazily through an ExternalLoader on first use.
//   Empty    no data at all (a zero-element tensor, or a malformed one).
// bytes() gives the raw layout for all of them, converting Typed on demand
// and loading External; the storage itself is left as it was, so lowering
// writes what was read.
//
// Note [Typed read cache]
// The typed fields, the dims and the element type are public and may be
// edited at any time, so a cached conversion of Typed storage could go stale.
// bytes() therefore converts Typed storage on every call (O(elements), the
// cost of reading it anyway) and keeps the cached buffer when the result is
// unchanged. A view returned by bytes() (or read through values()) stays
// valid until the tensor's data or storage is changed and bytes() is called
// again, or the tensor is destroyed. Loaded External bytes are read once.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_TENSOR_H
#define ONNXIR_IR_TENSOR_H

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/OutOfLine.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// Key/value pairs in their original order (metadata_props and similar).
using Metadata = std::vector<std::pair<std::string, std::string>>;

/// Read-only bytes kept alive by shared ownership.
class Buffer {
public:
  virtual ~Buffer();
  virtual llvm::StringRef data() const = 0;
};

/// A Buffer owning a std::string (moved in, not copied).
class StringBuffer final : public Buffer {
public:
  explicit StringBuffer(std::string s) : s_(std::move(s)) {}
  llvm::StringRef data() const override { return s_; }

private:
  std::string s_;
};

/// Where an external tensor's bytes are, as written in the model.
struct ExternalDataRef {
  /// Every external_data entry in its original order (location, offset,
  /// length, checksum and any other key).
  Metadata entries;
  std::string location;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> length;
  std::string checksum;
  /// The file the serializer resolved `location` to (absolute, links
  /// resolved); empty when unresolved. Not serialized: saving uses it to tell
  /// whether a file beside the output is this very file.
  std::string resolvedPath;
  /// The bytes the range covers in the file it was bound to: `length`, or
  /// without one the rest of the file from `offset` (what a reader takes).
  /// Not serialized; unset when unbound. checkTensorData holds it to the dims.
  std::optional<uint64_t> boundLength;
};

/// Loads the bytes of an external tensor; installed by the serializer, which
/// resolves and checks the path. Called at most once per tensor.
using ExternalLoader =
    std::function<absl::StatusOr<std::shared_ptr<const Buffer>>(
        const ExternalDataRef &)>;

class Tensor {
public:
  enum class Storage : uint8_t { Empty, Raw, Typed, External };
  /// Which TensorProto repeated field holds Typed data.
  enum class TypedField : uint8_t { None, Float, Int32, String, Int64, Double, Uint64 };

  Tensor() = default;
  Tensor(const Tensor &);
  Tensor &operator=(const Tensor &);
  Tensor(Tensor &&) = default;
  Tensor &operator=(Tensor &&) = default;

  //===--- Header ---------------------------------------------------------===//
  DataType dataType() const { return static_cast<DataType>(dataType_); }
  int32_t dataTypeRaw() const { return dataType_; }
  void setDataType(DataType t) { dataType_ = static_cast<int32_t>(t); }
  void setDataTypeRaw(int32_t t) { dataType_ = t; }

  const std::vector<int64_t> &dims() const { return dims_; }
  std::vector<int64_t> &mutableDims() { return dims_; }
  void setDims(std::vector<int64_t> d) { dims_ = std::move(d); }
  /// Product of dims; nullopt if a dim is negative or the product overflows.
  std::optional<int64_t> numElements() const;

  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  OutOfLineString docString; ///< Note [Out-of-line fields]
  OutOfLine<Metadata> metadata;
  /// TensorProto.segment, if present.
  std::optional<std::pair<int64_t, int64_t>> segment;

  //===--- Storage --------------------------------------------------------===//
  Storage storage() const { return storage_; }
  TypedField typedField() const { return typedField_; }

  /// Raw storage over [offset, offset+size) of `buf`.
  void setRaw(std::shared_ptr<const Buffer> buf, size_t offset, size_t size);
  /// Raw storage owning `bytes` (moved, not copied).
  void setRaw(std::string bytes);
  /// The raw window (Storage::Raw only).
  llvm::StringRef rawData() const;

  // Typed storage; each setter switches storage to Typed with that field.
  // At most one is in use; each is one pointer while empty (Note
  // [Out-of-line fields]): write through mut(), e.g. t.floatData.mut().resize(n).
  OutOfLine<std::vector<float>> floatData;
  OutOfLine<std::vector<int32_t>> int32Data;
  OutOfLine<std::vector<std::string>> stringData;
  OutOfLine<std::vector<int64_t>> int64Data;
  OutOfLine<std::vector<double>> doubleData;
  OutOfLine<std::vector<uint64_t>> uint64Data;
  void setTyped(TypedField f) { storage_ = Storage::Typed; typedField_ = f; dropRaw(); }

  /// External storage; `loader` is called lazily by bytes().
  void setExternal(ExternalDataRef ref, ExternalLoader loader);
  /// The external reference (an empty one if there is none).
  const ExternalDataRef &external() const;
  ExternalDataRef &mutableExternal();
  bool isExternal() const { return storage_ == Storage::External; }
  /// True once an external tensor's bytes were loaded.
  bool externalLoaded() const { return storage_ == Storage::External && loaded_ != nullptr; }

  void setEmpty();

  /// TensorProto.data_location was present in the proto (even if DEFAULT).
  std::optional<int32_t> dataLocation;

  //===--- Typed reads (work over every storage) --------------------------===//

  /// The data in raw_data layout. Converts Typed storage (on every call,
  /// following edits of the typed fields; Note [Typed read cache]), loads
  /// External storage (once). Errors name the tensor and the problem (size
  /// mismatch, unloadable file). Not for String tensors.
  absl::StatusOr<llvm::StringRef> bytes() const;
  /// As bytes(), with the buffer that holds them (null for an empty tensor):
  /// a view of the bytes stays valid while the buffer is held, whatever
  /// happens to the tensor (the Python bindings hand it to NumPy).
  absl::StatusOr<std::pair<std::shared_ptr<const Buffer>, llvm::StringRef>>
  sharedBytes() const;
  /// String tensor elements.
  absl::StatusOr<std::vector<std::string>> strings() const;
  /// Every element converted to T (int64_t, double, float, ...). Works for
  /// all numeric element types, including float16/bfloat16/float8 and the
  /// packed sub-byte types; bool reads as 0/1.
  template <typename T> absl::StatusOr<std::vector<T>> values() const;
  /// Checks that the stored data agrees with dims and element type.
  absl::Status validate() const;

  /// Opaque serializer bytes (unknown fields, presence of defaults).
  OutOfLineString extras;

private:
  void dropRaw();
  int32_t dataType_ = 0;
  std::vector<int64_t> dims_;
  std::string name_;
  Storage storage_ = Storage::Empty;
  TypedField typedField_ = TypedField::None;
  std::shared_ptr<const Buffer> buf_;
  size_t off_ = 0, size_ = 0;
  /// The external reference and its loader, held out of line: most tensors
  /// have none (Note [Out-of-line fields]).
  struct ExternalState {
    ExternalDataRef ref;
    ExternalLoader loader;
  };
  std::unique_ptr<ExternalState> external_;
  // Loaded External bytes, or the last conversion of Typed storage.
  mutable std::shared_ptr<const Buffer> loaded_;
};

/// What every reader of a model checks of a tensor (the binary lift and the
/// text parser alike, so that what one accepts the other reads back): a
/// known element type, non-negative dims whose product fits int64, and as
/// much data as the dims need in whatever storage it is in (typed values,
/// raw bytes, the declared length of external data or, without one, the
/// bytes from its offset to the end of the bound file; 1-7 bit types packed in
/// int32 values are not counted, as writers pack them differently). The
/// error says what is wrong, without the tensor's name.
absl::Status checkTensorData(const Tensor &t);

extern template absl::StatusOr<std::vector<int64_t>> Tensor::values<int64_t>() const;
extern template absl::StatusOr<std::vector<uint64_t>> Tensor::values<uint64_t>() const;
extern template absl::StatusOr<std::vector<int32_t>> Tensor::values<int32_t>() const;
extern template absl::StatusOr<std::vector<double>> Tensor::values<double>() const;
extern template absl::StatusOr<std::vector<float>> Tensor::values<float>() const;

/// A sparse tensor: values, indices (COO, either [NNZ] linear or [NNZ, rank])
/// and the dense dims.
struct SparseTensor {
  Tensor values;
  Tensor indices;
  std::vector<int64_t> dims;
  std::string extras; ///< opaque serializer bytes
  /// Presence of the optional sub-messages in the proto.
  bool hasValues = true, hasIndices = true;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_TENSOR_H
