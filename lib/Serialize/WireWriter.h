//===- WireWriter.h - Lowering the IR straight to the wire format ---------===//
//
// Internal. The IR is lowered to ONNX protobuf bytes without building a
// ModelProto (Note [Direct lower] in ProtoLower.cpp): one pass computes the
// size of every nested message, a second writes the bytes through a small
// buffer into a ByteSink (a file or a string).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_WIREWRITER_H
#define ONNXIR_LIB_SERIALIZE_WIREWRITER_H

#include "WireFormat.h"
#include "onnxir/IR/Model.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace onnxir {
namespace detail {

/// Where written bytes go.
class ByteSink {
public:
  virtual ~ByteSink();
  virtual absl::Status put(const char *p, size_t n) = 0;
  /// Called after big tensor bytes were handed to put(): their mapped pages
  /// may be dropped (files do; strings copy, so they need not).
  virtual void written(llvm::StringRef) {}
};

/// Appends to a string.
class StringSink final : public ByteSink {
public:
  explicit StringSink(std::string &s) : s_(s) {}
  absl::Status put(const char *p, size_t n) override {
    s_.append(p, n);
    return absl::OkStatus();
  }

private:
  std::string &s_;
};

/// Counts bytes (the size pass).
class SizeCounter {
public:
  static constexpr bool kSizing = true;
  uint64_t n = 0;
  void tag(uint32_t field, unsigned wt) { n += wireVarintSize((uint64_t)field << 3 | wt); }
  void varint(uint64_t v) { n += wireVarintSize(v); }
  void fixed32(uint32_t) { n += 4; }
  void fixed64(uint64_t) { n += 8; }
  void bytes(const char *, size_t len) { n += len; }
  void bigBytes(llvm::StringRef d) { n += d.size(); }
};

/// Buffered writer (the write pass). Errors stick: after the first failed
/// put() nothing more is written and status() says why.
class WireWriter {
public:
  static constexpr bool kSizing = false;
  explicit WireWriter(ByteSink &out, size_t cap = 256u << 10)
      : out_(out), buf_(new char[cap]), cap_(cap) {}
  WireWriter(const WireWriter &) = delete;
  WireWriter &operator=(const WireWriter &) = delete;

  void tag(uint32_t field, unsigned wt) { varint((uint64_t)field << 3 | wt); }
  void varint(uint64_t v) {
    if (cap_ - len_ < 10) flush();
    len_ = size_t(wireWriteVarint(buf_.get() + len_, v) - buf_.get());
  }
  void fixed32(uint32_t v) {
    if (cap_ - len_ < 4) flush();
    std::memcpy(buf_.get() + len_, &v, 4); // little-endian hosts only (as protobuf's raw copies)
    len_ += 4;
  }
  void fixed64(uint64_t v) {
    if (cap_ - len_ < 8) flush();
    std::memcpy(buf_.get() + len_, &v, 8);
    len_ += 8;
  }
  void bytes(const char *p, size_t n) {
    if (n == 0) return; // (p may then be null: an empty StringRef)
    if (n <= cap_ - len_) {
      std::memcpy(buf_.get() + len_, p, n);
      len_ += n;
      return;
    }
    flush();
    if (n < cap_ / 2) {
      std::memcpy(buf_.get(), p, n);
      len_ = n;
      return;
    }
    direct(p, n);
  }
  /// Tensor bytes: written straight from where they lie, in chunks, each
  /// chunk reported to the sink once written (Note [Streamed save]).
  void bigBytes(llvm::StringRef d) {
    if (d.size() < (64u << 10)) return bytes(d.data(), d.size());
    flush();
    constexpr size_t kChunk = 16u << 20;
    for (size_t at = 0; at < d.size() && st_.ok(); at += kChunk) {
      llvm::StringRef c = d.substr(at, kChunk);
      direct(c.data(), c.size());
      out_.written(c);
    }
  }
  /// Writes out what is buffered; returns the sticky status.
  absl::Status finish() {
    flush();
    return st_;
  }

private:
  void flush() {
    if (len_ && st_.ok()) st_ = out_.put(buf_.get(), len_);
    len_ = 0;
  }
  void direct(const char *p, size_t n) {
    if (st_.ok()) st_ = out_.put(p, n);
  }

  ByteSink &out_;
  std::unique_ptr<char[]> buf_;
  size_t cap_, len_ = 0;
  absl::Status st_;
};

/// What a save does with one tensor's data instead of writing it inline
/// (decided before writing: ModelSave.cpp's data plan).
struct TensorPlacement {
  enum class Kind : uint8_t {
    Moved,  ///< written to the data file at [offset, offset + length)
    Inline, ///< external data written inline as raw_data (`bytes`)
  } kind = Kind::Moved;
  uint64_t offset = 0, length = 0;
  llvm::StringRef bytes;
};

struct WireLowerOptions {
  /// Tensors whose data the save placed elsewhere (may be null).
  const llvm::DenseMap<const Tensor *, TensorPlacement> *placements = nullptr;
  /// The data file moved tensors refer to.
  std::string location;
};

/// Lowers one model to the wire format: size() first (once), then write().
class ModelWireLowering {
public:
  ModelWireLowering(const Model &m, WireLowerOptions opts);
  ~ModelWireLowering();
  /// The size of the whole serialized model.
  uint64_t size();
  /// Writes it (after size()).
  absl::Status write(ByteSink &out);

  struct Impl; // (public for the emitters in ProtoLower.cpp)

private:
  std::unique_ptr<Impl> impl_;
};

/// Encoded TypeProtos by type (types are interned: each is encoded once).
using TypeBytesCache = llvm::DenseMap<const Type *, std::unique_ptr<std::string>>;
/// Serialized TypeProto of `t`: what protobuf writes for lowerType's result.
const std::string &encodeTypeCached(const Type *t, TypeBytesCache &cache);

} // namespace detail
} // namespace onnxir

#endif
