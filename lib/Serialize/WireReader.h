//===- WireReader.h - Reading protobuf wire format in place (internal) ----===//
//
// A cursor over one serialized message: keys, varints, fixed values and
// length-delimited payloads, read straight from the input bytes (payloads
// are views, nothing is copied). Used by the direct wire lift (Note [Wire
// lift] in ProtoLift.cpp). Every read is bounds-checked; a malformed field
// makes next() return false and sets `bad`.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_WIREREADER_H
#define ONNXIR_LIB_SERIALIZE_WIREREADER_H

#include "WireFormat.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"
#include "onnxir/Support/Export.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

// Exported from a shared libonnxir_Serialize for the unit tests (Note [Exported API]).
ONNXIR_API_BEGIN
namespace onnxir {
namespace detail {

struct RawView;
class LoadSession;
} // namespace detail
class Buffer;
class Model;
namespace detail {

/// protobuf's recursion limit for whole models (ModelLoad.cpp); pieces
/// parsed by protobuf inside the wire lift get what is left of it.
constexpr unsigned kWireMaxNesting = 1500;

/// The direct wire lift (Note [Wire lift] in ProtoLift.cpp) of serialized
/// ModelProto `bytes`. With `file` (the buffer `bytes` lie in), raw_data of
/// main-graph initializers become views of it. A give-up (malformed or
/// merely unusual input) is Unimplemented "wire lift: ..."; any other error
/// is the lift's own, located. Either way the caller lifts the same bytes
/// the ModelProto way, and reports a located error of this lift if that
/// fails too (Note [Located errors kept] in ModelLoad.cpp).
absl::StatusOr<std::unique_ptr<Model>> liftWire(llvm::StringRef bytes, LoadSession &session,
                                                const std::string &sourceName,
                                                std::shared_ptr<const Buffer> file);

/// Whether the binary loaders try the direct wire lift first (Note [Wire
/// lift]). Internal switch for tests and benchmarks.
bool wireLiftEnabled();
void setWireLiftEnabled(bool on);

enum WireType : unsigned { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

/// One field of a message.
struct WireField {
  uint32_t number = 0;
  unsigned type = 0;
  uint64_t varint = 0;   // kVarint, kFixed64, kFixed32 (raw bits)
  llvm::StringRef bytes; // kLen payload
  const uint8_t *begin = nullptr, *end = nullptr; // the whole field, key included
};

class WireReader {
public:
  WireReader(llvm::StringRef msg)
      : p_(reinterpret_cast<const uint8_t *>(msg.data())), end_(p_ + msg.size()) {}

  /// Reads the next field; false at the end or on malformed input (then
  /// bad() is true). Groups (wire types 3/4) count as malformed here: the
  /// caller falls back to protobuf.
  bool next(WireField &f) {
    if (p_ >= end_) return false;
    f.begin = p_;
    uint64_t key;
    if (wireReadTag(p_, end_, key) != WireRead::Ok || (key >> 3) == 0) return fail();
    f.number = uint32_t(key >> 3);
    f.type = unsigned(key & 7);
    switch (f.type) {
    case kVarint:
      if (wireReadValue(p_, end_, f.varint) != WireRead::Ok) return fail();
      break;
    case kFixed64:
      if (end_ - p_ < 8) return fail();
      std::memcpy(&f.varint, p_, 8);
      p_ += 8;
      break;
    case kFixed32: {
      if (end_ - p_ < 4) return fail();
      uint32_t x;
      std::memcpy(&x, p_, 4);
      f.varint = x;
      p_ += 4;
      break;
    }
    case kLen: {
      uint64_t len;
      if (wireReadLength(p_, end_, len) != WireRead::Ok || len > uint64_t(end_ - p_))
        return fail();
      f.bytes = llvm::StringRef(reinterpret_cast<const char *>(p_), len);
      p_ += len;
      break;
    }
    default: return fail();
    }
    f.end = p_;
    return true;
  }
  bool bad() const { return bad_; }

private:
  bool fail() {
    bad_ = true;
    p_ = end_;
    return false;
  }
  const uint8_t *p_, *end_;
  bool bad_ = false;
};

/// Appends a copy of `t` (a serialized TensorProto, part of the file at
/// `base`) to `out` with its raw_data emptied, and sets `view` to where the
/// raw_data lies (Note [Slim parsing] in ModelLoad.cpp). False on malformed
/// input.
bool wireSlimTensor(const uint8_t *base, llvm::StringRef t, std::string &out,
                    std::optional<RawView> &view);


} // namespace detail
} // namespace onnxir
ONNXIR_API_END

#endif
