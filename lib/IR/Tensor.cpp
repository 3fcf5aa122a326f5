//===- Tensor.cpp - Tensor storage and typed reads ------------------------===//
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Residency.h"

#include "absl/strings/str_cat.h"

#include <atomic>
#include <cstring>
#include <type_traits>

namespace onnxir {

Buffer::~Buffer() = default;

// Note [Resident pages of mapped bytes] (Residency.h).
static std::atomic<ResidentReleaser> gResidentReleaser{nullptr};

void setResidentReleaser(ResidentReleaser fn) {
  gResidentReleaser.store(fn, std::memory_order_release);
}

void releaseResident(llvm::StringRef bytes) {
  // Below 64 KiB the pages are few and shared with neighbours: not worth a
  // system call per small constant (a fold's operands, every hashed scalar).
  if (bytes.size() < (size_t(64) << 10)) return;
  if (auto fn = gResidentReleaser.load(std::memory_order_acquire)) fn(bytes);
}

void releaseResident(const Tensor &t) {
  if (t.storage() == Tensor::Storage::Raw) releaseResident(t.rawData());
  else if (t.externalLoaded()) {
    auto b = t.bytes(); // already loaded: a view, no read
    if (b.ok()) releaseResident(*b);
  }
}

Tensor::Tensor(const Tensor &o) { *this = o; }

Tensor &Tensor::operator=(const Tensor &o) {
  if (this == &o) return *this;
  docString = o.docString;
  metadata = o.metadata;
  segment = o.segment;
  floatData = o.floatData;
  int32Data = o.int32Data;
  stringData = o.stringData;
  int64Data = o.int64Data;
  doubleData = o.doubleData;
  uint64Data = o.uint64Data;
  dataLocation = o.dataLocation;
  extras = o.extras;
  dataType_ = o.dataType_;
  dims_ = o.dims_;
  name_ = o.name_;
  storage_ = o.storage_;
  typedField_ = o.typedField_;
  buf_ = o.buf_; // buffers are immutable: sharing is a copy
  off_ = o.off_;
  size_ = o.size_;
  external_ = o.external_ ? std::make_unique<ExternalState>(*o.external_) : nullptr;
  // Loaded external bytes are immutable and shared. A typed conversion is
  // checked against the typed fields on every read, so sharing it is safe.
  loaded_ = o.loaded_;
  return *this;
}

std::optional<int64_t> Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

void Tensor::dropRaw() {
  buf_.reset();
  off_ = size_ = 0;
  loaded_.reset();
}

void Tensor::setRaw(std::shared_ptr<const Buffer> buf, size_t offset, size_t size) {
  storage_ = Storage::Raw;
  typedField_ = TypedField::None;
  buf_ = std::move(buf);
  off_ = offset;
  size_ = size;
  loaded_.reset();
}

void Tensor::setRaw(std::string bytes) {
  size_t n = bytes.size();
  setRaw(std::make_shared<StringBuffer>(std::move(bytes)), 0, n);
}

llvm::StringRef Tensor::rawData() const {
  if (storage_ != Storage::Raw || !buf_) return {};
  return buf_->data().substr(off_, size_);
}

void Tensor::setExternal(ExternalDataRef ref, ExternalLoader loader) {
  storage_ = Storage::External;
  typedField_ = TypedField::None;
  buf_.reset();
  off_ = size_ = 0;
  external_ = std::make_unique<ExternalState>(ExternalState{std::move(ref), std::move(loader)});
  loaded_.reset();
}

const ExternalDataRef &Tensor::external() const {
  static const ExternalDataRef none;
  return external_ ? external_->ref : none;
}

ExternalDataRef &Tensor::mutableExternal() {
  if (!external_) external_ = std::make_unique<ExternalState>();
  return external_->ref;
}

void Tensor::setEmpty() {
  storage_ = Storage::Empty;
  typedField_ = TypedField::None;
  dropRaw();
}

namespace {

std::string describe(const Tensor &t) {
  return t.name().empty() ? std::string("tensor") : absl::StrCat("tensor \"", t.name(), "\"");
}

template <typename T> void appendLE(std::string &out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T)); // little-endian hosts only (x86_64, aarch64)
  out.append(b, sizeof(T));
}

template <typename T> void appendAllLE(std::string &out, const std::vector<T> &v) {
  out.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T)); // little-endian
}

// Converts typed storage to raw_data layout into `out` (cleared first).
absl::Status typedToRaw(const Tensor &t, int64_t n, std::string &out) {
  DataType dt = t.dataType();
  out.clear();
  auto wrongField = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        describe(t), ": element type ", dataTypeName(dt).str(),
        " cannot be stored in this typed field"));
  };
  auto countCheck = [&](size_t have, size_t want) -> absl::Status {
    if (have != want)
      return absl::InvalidArgumentError(absl::StrCat(
          describe(t), ": holds ", have, " values but its dims need ", want));
    return absl::OkStatus();
  };
  switch (t.typedField()) {
  case Tensor::TypedField::Float:
    if (dt == DataType::Float) {
      if (auto s = countCheck(t.floatData.size(), n); !s.ok()) return s;
      appendAllLE(out, t.floatData.get());
      return absl::OkStatus();
    }
    if (dt == DataType::Complex64) {
      if (auto s = countCheck(t.floatData.size(), 2 * n); !s.ok()) return s;
      appendAllLE(out, t.floatData.get());
      return absl::OkStatus();
    }
    return wrongField();
  case Tensor::TypedField::Double:
    if (dt == DataType::Double || dt == DataType::Complex128) {
      if (auto s = countCheck(t.doubleData.size(), dt == DataType::Double ? n : 2 * n); !s.ok())
        return s;
      appendAllLE(out, t.doubleData.get());
      return absl::OkStatus();
    }
    return wrongField();
  case Tensor::TypedField::Int64:
    if (dt != DataType::Int64) return wrongField();
    if (auto s = countCheck(t.int64Data.size(), n); !s.ok()) return s;
    appendAllLE(out, t.int64Data.get());
    return absl::OkStatus();
  case Tensor::TypedField::Uint64:
    if (dt != DataType::Uint64 && dt != DataType::Uint32) return wrongField();
    if (auto s = countCheck(t.uint64Data.size(), n); !s.ok()) return s;
    if (dt == DataType::Uint64) appendAllLE(out, t.uint64Data.get());
    else
      for (uint64_t v : t.uint64Data) appendLE(out, (uint32_t)v);
    return absl::OkStatus();
  case Tensor::TypedField::Int32: {
    unsigned bits = dataTypeBits(dt);
    if (dt == DataType::String || bits == 0 || bits > 32 || dt == DataType::Float ||
        dt == DataType::Uint32)
      return wrongField();
    if (bits >= 8) {
      if (auto s = countCheck(t.int32Data.size(), n); !s.ok()) return s;
      if (bits == 32) {
        appendAllLE(out, t.int32Data.get());
        return absl::OkStatus();
      }
      out.reserve(t.int32Data.size() * (bits / 8));
      for (int32_t v : t.int32Data) {
        if (bits == 8) appendLE(out, (uint8_t)v);
        else appendLE(out, (uint16_t)v);
      }
      return absl::OkStatus();
    }
    // Sub-byte types: int32_data holds packed bytes (ONNX stores one packed
    // byte per int32 entry).
    size_t bytes = dataTypeStorageBytes(dt, n);
    if (auto s = countCheck(t.int32Data.size(), bytes); !s.ok()) return s;
    out.reserve(t.int32Data.size());
    for (int32_t v : t.int32Data) appendLE(out, (uint8_t)v);
    return absl::OkStatus();
  }
  case Tensor::TypedField::String:
  case Tensor::TypedField::None:
    return wrongField();
  }
  return wrongField();
}

} // namespace

absl::StatusOr<llvm::StringRef> Tensor::bytes() const {
  if (dataType() == DataType::String)
    return absl::InvalidArgumentError(describe(*this) + ": string tensors have no raw bytes");
  switch (storage_) {
  case Storage::Raw:
    return rawData();
  case Storage::Empty:
    return llvm::StringRef();
  case Storage::External: {
    if (!loaded_) {
      if (!external_ || !external_->loader)
        return absl::FailedPreconditionError(absl::StrCat(
            describe(*this), ": external data \"", external().location,
            "\" cannot be loaded (no base directory known)"));
      auto b = external_->loader(external_->ref);
      if (!b.ok()) return b.status();
      loaded_ = *b;
    }
    return loaded_->data();
  }
  case Storage::Typed: {
    // The typed fields, dims and element type are public and may have been
    // edited since the last read, so the conversion is redone on every read
    // and compared with the cached one (Note [Typed read cache]).
    auto n = numElements();
    if (!n) return absl::InvalidArgumentError(describe(*this) + ": invalid dims");
    std::string raw;
    if (auto s = typedToRaw(*this, *n, raw); !s.ok()) return s;
    // Unchanged data keeps the cached buffer, so views handed out earlier
    // stay valid, and concurrent reads of an unedited tensor write nothing.
    if (!loaded_ || loaded_->data() != llvm::StringRef(raw))
      loaded_ = std::make_shared<StringBuffer>(std::move(raw));
    return loaded_->data();
  }
  }
  return llvm::StringRef();
}

absl::StatusOr<std::pair<std::shared_ptr<const Buffer>, llvm::StringRef>>
Tensor::sharedBytes() const {
  auto b = bytes();
  if (!b.ok()) return b.status();
  std::shared_ptr<const Buffer> owner = storage_ == Storage::Raw ? buf_ : loaded_;
  if (!owner) return std::make_pair(owner, llvm::StringRef());
  return std::make_pair(std::move(owner), *b);
}

absl::StatusOr<std::vector<std::string>> Tensor::strings() const {
  if (dataType() != DataType::String)
    return absl::InvalidArgumentError(describe(*this) + ": not a string tensor");
  if (storage_ == Storage::Empty) return std::vector<std::string>();
  if (storage_ != Storage::Typed || typedField_ != TypedField::String)
    return absl::InvalidArgumentError(describe(*this) + ": string data must be in string_data");
  return stringData;
}

// One check for every reader (the binary lift, the text parser): see Tensor.h.
absl::Status checkTensorData(const Tensor &t) {
  for (int64_t d : t.dims())
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
  auto n = t.numElements();
  if (!n) return absl::InvalidArgumentError("the product of the dimensions overflows int64");
  if (!isKnownDataType(t.dataTypeRaw()))
    return absl::InvalidArgumentError(absl::StrCat("unknown data type ", t.dataTypeRaw()));
  DataType dt = t.dataType();
  uint64_t count = (uint64_t)*n;
  uint64_t want = isComplex(dt) ? count * (dt == DataType::Complex64 ? 8 : 16)
                                : dataTypeStorageBytes(dt, count);
  auto mismatch = [&](uint64_t have, const char *unit, uint64_t need) {
    return absl::InvalidArgumentError(absl::StrCat("holds ", have, " ", unit, " but ",
                                                   dataTypeName(dt).str(), " dims need ", need));
  };
  switch (t.storage()) {
  case Tensor::Storage::Raw:
    if (dt == DataType::String)
      return absl::InvalidArgumentError("string tensors cannot use raw_data");
    if (t.rawData().size() != want) return mismatch(t.rawData().size(), "bytes", want);
    break;
  case Tensor::Storage::External:
    if (dt == DataType::String) break;
    if (t.external().length && *t.external().length != want)
      return mismatch(*t.external().length, "bytes of external data", want);
    // Without a length a reader takes the file from the offset to its end.
    if (!t.external().length && t.external().boundLength && *t.external().boundLength != want)
      return absl::InvalidArgumentError(absl::StrCat(
          "its external data has no length, and \"", t.external().location, "\" holds ",
          *t.external().boundLength, " bytes from offset ", t.external().offset.value_or(0),
          " to its end, but ", dataTypeName(dt).str(), " dims need ", want));
    break;
  case Tensor::Storage::Typed: {
    uint64_t have = 0, need = count;
    unsigned bits = dataTypeBits(dt);
    switch (t.typedField()) {
    case Tensor::TypedField::Float: have = t.floatData.size(); if (dt == DataType::Complex64) need *= 2; break;
    case Tensor::TypedField::Double: have = t.doubleData.size(); if (dt == DataType::Complex128) need *= 2; break;
    case Tensor::TypedField::Int64: have = t.int64Data.size(); break;
    case Tensor::TypedField::Uint64: have = t.uint64Data.size(); break;
    case Tensor::TypedField::String: have = t.stringData.size(); break;
    case Tensor::TypedField::Int32:
      have = t.int32Data.size();
      if (bits > 0 && bits < 8) return absl::OkStatus(); // packing varies by writer
      break;
    case Tensor::TypedField::None: break;
    }
    if (have != need) return mismatch(have, "values", need);
    break;
  }
  case Tensor::Storage::Empty:
    if (count != 0) return mismatch(0, "values", count);
    break;
  }
  return absl::OkStatus();
}

absl::Status Tensor::validate() const {
  auto n = numElements();
  if (!n)
    return absl::InvalidArgumentError(describe(*this) +
                                      ": dims are negative or their product overflows int64");
  if (!isKnownDataType(dataType_))
    return absl::InvalidArgumentError(
        absl::StrCat(describe(*this), ": unknown data type ", dataType_));
  if (dataType() == DataType::String) {
    auto s = strings();
    if (!s.ok()) return s.status();
    if ((int64_t)s->size() != *n && storage_ != Storage::Empty)
      return absl::InvalidArgumentError(absl::StrCat(
          describe(*this), ": holds ", s->size(), " strings but its dims need ", *n));
    return absl::OkStatus();
  }
  auto b = bytes();
  if (!b.ok()) return b.status();
  uint64_t want = dataTypeStorageBytes(dataType(), (uint64_t)*n);
  if (isComplex(dataType())) want = (uint64_t)*n * (dataType() == DataType::Complex64 ? 8 : 16);
  if (storage_ == Storage::Empty && *n != 0)
    return absl::InvalidArgumentError(absl::StrCat(describe(*this), ": has no data but its dims need ",
                                                   *n, " elements"));
  if (storage_ != Storage::Empty && b->size() != want)
    return absl::InvalidArgumentError(absl::StrCat(describe(*this), ": holds ", b->size(),
                                                   " bytes but ", dataTypeName(dataType()).str(),
                                                   " dims need ", want));
  return absl::OkStatus();
}

namespace {
template <typename Src> Src loadLE(const char *p) {
  Src v;
  std::memcpy(&v, p, sizeof(Src));
  return v;
}

template <typename T> T convertFloat(double d) {
  if constexpr (std::is_floating_point_v<T>) return (T)d;
  else return (T)(int64_t)d;
}
} // namespace

template <typename T> absl::StatusOr<std::vector<T>> Tensor::values() const {
  auto n = numElements();
  if (!n) return absl::InvalidArgumentError(describe(*this) + ": invalid dims");
  DataType dt = dataType();
  if (dt == DataType::String || isComplex(dt) || !isKnownDataType(dataType_))
    return absl::InvalidArgumentError(absl::StrCat(
        describe(*this), ": element type ", dataTypeName(dt).str(), " has no numeric reading"));
  // Every storage is read through its raw layout.
  auto b = bytes();
  if (!b.ok()) return b.status();
  uint64_t want = dataTypeStorageBytes(dt, (uint64_t)*n);
  if (b->size() != want)
    return absl::InvalidArgumentError(absl::StrCat(describe(*this), ": holds ", b->size(),
                                                   " bytes but its dims need ", want));
  const char *p = b->data();
  std::vector<T> out;
  // The storage already is T (float, double, int64 and the like): one copy
  // of the bytes, not an element-by-element decode.
  constexpr bool kFloatT = std::is_same_v<T, float>, kDoubleT = std::is_same_v<T, double>;
  constexpr bool kI64T = std::is_same_v<T, int64_t>, kU64T = std::is_same_v<T, uint64_t>;
  constexpr bool kI32T = std::is_same_v<T, int32_t>;
  if ((kFloatT && dt == DataType::Float) || (kDoubleT && dt == DataType::Double) ||
      (kI64T && dt == DataType::Int64) || (kU64T && dt == DataType::Uint64) ||
      (kI32T && dt == DataType::Int32)) {
    out.resize((size_t)*n);
    if (*n) std::memcpy(out.data(), p, sizeof(T) * (size_t)*n);
    return out;
  }
  out.reserve((size_t)*n);
  for (int64_t i = 0; i < *n; ++i) {
    switch (dt) {
    case DataType::Float: out.push_back((T)loadLE<float>(p + 4 * i)); break;
    case DataType::Double: out.push_back((T)loadLE<double>(p + 8 * i)); break;
    case DataType::Float16: out.push_back((T)halfToFloat(loadLE<uint16_t>(p + 2 * i))); break;
    case DataType::BFloat16: out.push_back((T)bfloat16ToFloat(loadLE<uint16_t>(p + 2 * i))); break;
    case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0:
      out.push_back((T)float8ToFloat((uint8_t)p[i], dt));
      break;
    case DataType::Uint8: out.push_back((T)loadLE<uint8_t>(p + i)); break;
    case DataType::Int8: out.push_back((T)loadLE<int8_t>(p + i)); break;
    case DataType::Bool: out.push_back((T)(loadLE<uint8_t>(p + i) != 0)); break;
    case DataType::Uint16: out.push_back((T)loadLE<uint16_t>(p + 2 * i)); break;
    case DataType::Int16: out.push_back((T)loadLE<int16_t>(p + 2 * i)); break;
    case DataType::Int32: out.push_back((T)loadLE<int32_t>(p + 4 * i)); break;
    case DataType::Uint32: out.push_back((T)loadLE<uint32_t>(p + 4 * i)); break;
    case DataType::Int64: out.push_back((T)loadLE<int64_t>(p + 8 * i)); break;
    case DataType::Uint64: out.push_back((T)loadLE<uint64_t>(p + 8 * i)); break;
    case DataType::Uint4: case DataType::Int4: case DataType::Float4E2M1: {
      uint8_t byte = (uint8_t)p[i / 2];
      uint8_t nib = (i % 2) ? (byte >> 4) : (byte & 0xf);
      if (dt == DataType::Uint4) out.push_back((T)nib);
      else if (dt == DataType::Int4) out.push_back((T)(int)((int8_t)(nib << 4) >> 4));
      else out.push_back((T)float8ToFloat(nib, dt));
      break;
    }
    case DataType::Uint2: case DataType::Int2: {
      uint8_t byte = (uint8_t)p[i / 4];
      uint8_t v = (byte >> (2 * (i % 4))) & 3;
      if (dt == DataType::Uint2) out.push_back((T)v);
      else out.push_back((T)(int)((int8_t)(v << 6) >> 6));
      break;
    }
    default:
      return absl::InvalidArgumentError(describe(*this) + ": unsupported element type");
    }
  }
  return out;
}

template absl::StatusOr<std::vector<int64_t>> Tensor::values<int64_t>() const;
template absl::StatusOr<std::vector<uint64_t>> Tensor::values<uint64_t>() const;
template absl::StatusOr<std::vector<int32_t>> Tensor::values<int32_t>() const;
template absl::StatusOr<std::vector<double>> Tensor::values<double>() const;
template absl::StatusOr<std::vector<float>> Tensor::values<float>() const;

} // namespace onnxir
