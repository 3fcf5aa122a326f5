//===- WireScan.cpp - Fail-fast check of a serialized ModelProto ----------===//
//
// See Note [Wire pre-scan] in WireScan.h.
//
//===----------------------------------------------------------------------===//
#include "WireScan.h"
#include "WireFormat.h"
#include "WireReader.h"

#include "onnxir/onnx.pb.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

#include <atomic>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace onnxir {
namespace detail {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

/// The ONNX messages reachable from ModelProto, with their message-typed
/// fields indexed by field number (the numbers are small).
struct Schema {
  struct Field {
    const char *name = nullptr; ///< null: not a field of the schema
    int msg = -1;               ///< index into msgs of a message-typed field
  };
  struct Msg {
    const Descriptor *d;
    std::vector<Field> fields;
  };
  std::vector<Msg> msgs;

  int add(const Descriptor *d) {
    for (size_t i = 0; i < msgs.size(); ++i)
      if (msgs[i].d == d) return (int)i;
    int idx = (int)msgs.size();
    msgs.push_back({d, {}});
    int maxNumber = 0;
    for (int i = 0; i < d->field_count(); ++i) maxNumber = std::max(maxNumber, d->field(i)->number());
    std::vector<Field> fields((size_t)maxNumber + 1);
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor *f = d->field(i);
      Field &x = fields[(size_t)f->number()];
      x.name = f->name().c_str();
      if (f->type() == FieldDescriptor::TYPE_MESSAGE) x.msg = add(f->message_type());
    }
    msgs[(size_t)idx].fields = std::move(fields);
    return idx;
  }

  const Field *field(int msg, uint64_t number) const {
    if (msg < 0) return nullptr;
    const auto &fs = msgs[(size_t)msg].fields;
    return number < fs.size() && fs[number].name ? &fs[number] : nullptr;
  }

  static const Schema &get() {
    static const Schema *s = [] {
      auto *x = new Schema; // never destroyed: used until exit
      x->add(proto::ModelProto::descriptor());
      return x;
    }();
    return *s;
  }
};


class Scanner {
public:
  Scanner(const uint8_t *base, size_t minRecurse, unsigned maxDepth)
      : base_(base), minRecurse_(minRecurse), maxDepth_(maxDepth), schema_(Schema::get()) {}

  /// Scans fields from `p` up to `end` as message `msg` (-1: not in the
  /// schema). Inside a group (`group` = its field number, else 0) stops
  /// after the matching end-group tag. False on the first error.
  bool scan(const uint8_t *&p, const uint8_t *end, int msg, unsigned depth, uint64_t group) {
    while (p < end) {
      const uint8_t *at = p;
      uint64_t key;
      switch (wireReadTag(p, end, key)) {
      case WireRead::Ok: break;
      case WireRead::Truncated: return fail(at, "a field tag is cut off by the end of the data");
      case WireRead::TooLong:
        return fail(at, "a field tag is longer than 5 bytes (protobuf reads no longer tags)");
      case WireRead::TooBig: return fail(at, absl::StrCat("tag ", key, " is out of range"));
      }
      uint64_t number = key >> 3;
      unsigned wt = unsigned(key & 7);
      if (key == 0) return fail(at, "a zero tag (field number 0): this is not protobuf data");
      if (number == 0) return fail(at, absl::StrCat("field number 0 (tag ", key, ")"));
      const Schema::Field *f = schema_.field(msg, number);
      uint64_t v;
      switch (wt) {
      case 0:
        switch (wireReadValue(p, end, v)) {
        case WireRead::Ok: break;
        case WireRead::Truncated: return failIn(f, at, "a varint is cut off by the end of the data");
        case WireRead::TooLong:
        case WireRead::TooBig: return failIn(f, at, "a varint is longer than 10 bytes");
        }
        break;
      case 1:
      case 5: {
        size_t n = wt == 1 ? 8 : 4;
        if ((size_t)(end - p) < n)
          return failIn(f, at, absl::StrCat("a ", n * 8, "-bit value is cut off by the end of ",
                                            enclosing(depth)));
        p += n;
        break;
      }
      case 2: {
        const uint8_t *lenAt = p;
        switch (wireReadVarintN(p, end, v, 5)) {
        case WireRead::Ok: break;
        case WireRead::Truncated: return failIn(f, lenAt, "a length is cut off by the end of the data");
        case WireRead::TooBig:
        case WireRead::TooLong:
          return failIn(f, lenAt, "a length is longer than 5 bytes (protobuf reads no longer lengths)");
        }
        uint64_t left = (uint64_t)(end - p);
        if (v > left)
          return failIn(f, lenAt, absl::StrCat("a length of ", v, " bytes runs past the end of ",
                                               enclosing(depth), " (", left, " bytes left)"));
        if (v > (uint64_t)INT_MAX)
          return failIn(f, lenAt, absl::StrCat("a length of ", v, " bytes is over 2 GiB"));
        const uint8_t *sub = p;
        p += v;
        if (f && f->msg >= 0 && v >= minRecurse_ && depth < maxDepth_) {
          const uint8_t *q = sub;
          if (!scan(q, p, f->msg, depth + 1, 0)) return unwind(f);
        }
        break;
      }
      case 3: {
        // A group (not used by ONNX; protobuf keeps one as an unknown field).
        if (depth >= maxDepth_) return failIn(f, at, "groups nest too deeply");
        if (!scan(p, end, -1, depth + 1, number)) return unwind(f);
        break;
      }
      case 4:
        if (group == number) return true;
        return fail(at, group ? absl::StrCat("an end-group tag of field ", number,
                                             " inside a group of field ", group)
                              : absl::StrCat("an end-group tag of field ", number,
                                             " outside any group"));
      default:
        return fail(at, absl::StrCat("invalid wire type ", wt, " (tag ", key, ", field ", number,
                                     ")"));
      }
    }
    if (group) return fail(p, absl::StrCat("a group of field ", group, " is not closed"));
    return true;
  }

  std::string message(const std::string &source) const {
    std::string path;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (!path.empty()) path += " > ";
      path += *it;
    }
    return absl::StrCat(source, ": not a valid ONNX model: at byte ", offset_,
                        path.empty() ? "" : absl::StrCat(" (in ", path, ")"), ": ", what_);
  }

private:
  static std::string enclosing(unsigned depth) {
    return depth == 0 ? "the data" : "the enclosing message";
  }
  bool fail(const uint8_t *at, std::string what) {
    offset_ = (uint64_t)(at - base_);
    what_ = std::move(what);
    return false;
  }
  bool failIn(const Schema::Field *f, const uint8_t *at, std::string what) {
    fail(at, std::move(what));
    return unwind(f);
  }
  bool unwind(const Schema::Field *f) {
    path_.push_back(f ? f->name : "unknown field");
    return false;
  }

  const uint8_t *base_;
  size_t minRecurse_;
  unsigned maxDepth_;
  const Schema &schema_;
  uint64_t offset_ = 0;
  std::string what_;
  std::vector<std::string> path_; // innermost first
};

} // namespace

namespace {
std::atomic<uint64_t> scans{0};
} // namespace

namespace {
/// Walks message `msg` of the schema in `bytes`, calling `fn` with each
/// TensorProto's external data location. False on malformed input.
bool walkLocations(const Schema &schema, llvm::StringRef bytes, int msg, unsigned depth,
                   llvm::function_ref<void(llvm::StringRef)> fn) {
  if (depth > 1500) return false;
  static const Descriptor *tensor = proto::TensorProto::descriptor();
  bool isTensor = schema.msgs[(size_t)msg].d == tensor;
  WireReader r(bytes);
  WireField f;
  while (r.next(f)) {
    if (f.type != kLen) continue;
    if (isTensor && f.number == proto::TensorProto::kExternalDataFieldNumber) {
      // StringStringEntryProto: key = 1, value = 2.
      WireReader e(f.bytes);
      WireField k;
      llvm::StringRef key, value;
      while (e.next(k))
        if (k.type == kLen && k.number == 1) key = k.bytes;
        else if (k.type == kLen && k.number == 2) value = k.bytes;
      if (e.bad()) return false;
      if (key == "location") fn(value);
      continue;
    }
    const Schema::Field *sf = schema.field(msg, f.number);
    if (sf && sf->msg >= 0 && !walkLocations(schema, f.bytes, sf->msg, depth + 1, fn))
      return false;
  }
  return !r.bad();
}
} // namespace

bool scanExternalLocations(llvm::StringRef bytes, llvm::function_ref<void(llvm::StringRef)> fn) {
  scans.fetch_add(1, std::memory_order_relaxed);
  const Schema &schema = Schema::get();
  return walkLocations(schema, bytes, 0, 0, fn);
}

uint64_t wireScanCount() { return scans.load(std::memory_order_relaxed); }

absl::Status scanModelWire(llvm::StringRef bytes, const std::string &source, size_t minRecurse,
                           unsigned maxDepth) {
  scans.fetch_add(1, std::memory_order_relaxed);
  const uint8_t *p = reinterpret_cast<const uint8_t *>(bytes.data());
  const uint8_t *end = p + bytes.size();
  Scanner s(p, minRecurse, maxDepth);
  if (s.scan(p, end, 0, 0, 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(s.message(source));
}

} // namespace detail
} // namespace onnxir
