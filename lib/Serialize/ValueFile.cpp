//===- ValueFile.cpp - Serialized SequenceProto and OptionalProto ---------===//
//
// SequenceProto: name 1, elem_type 2, tensor_values 3, sparse_tensor_values
// 4, sequence_values 5, map_values 6, optional_values 7. OptionalProto:
// name 1, elem_type 2, tensor_value 3, sparse_tensor_value 4, sequence_value
// 5, map_value 6, optional_value 7. elem_type: 1 tensor, 2 sparse tensor,
// 3 sequence, 4 map, 5 optional.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Serialize/ValueFile.h"

#include "WireReader.h"

#include "onnxir/Serialize/TensorFile.h"

#include "absl/strings/str_cat.h"

#include <fstream>
#include <sstream>

namespace onnxir {
namespace {

/// Nested sequences and optionals deeper than this are refused.
constexpr unsigned kMaxDepth = 64;

absl::StatusOr<ProtoValue> liftValue(llvm::StringRef bytes, const std::string &src,
                                     ProtoValue::Kind kind, unsigned depth) {
  const char *what = kind == ProtoValue::Kind::Sequence ? "SequenceProto" : "OptionalProto";
  if (depth > kMaxDepth)
    return absl::InvalidArgumentError(
        absl::StrCat(src, ": ", what, " nested more than ", kMaxDepth, " deep"));
  ProtoValue v;
  v.kind = kind;
  detail::WireReader r(bytes);
  detail::WireField f;
  int64_t elemType = 0;
  while (r.next(f)) {
    if (f.number == 2 && f.type == detail::kVarint) {
      elemType = (int64_t)f.varint;
      continue;
    }
    if (f.number < 3 || f.number > 7 || f.type != detail::kLen) continue; // name, unknown
    if (f.number == 4 || f.number == 6)
      return absl::UnimplementedError(absl::StrCat(
          src, ": ", what, " holding a ", f.number == 4 ? "sparse tensor" : "map"));
    absl::StatusOr<ProtoValue> e = absl::UnknownError("");
    if (f.number == 3) {
      auto t = liftTensorProto(f.bytes, src);
      if (!t.ok()) return t.status();
      ProtoValue tv;
      tv.tensor = std::move(*t);
      e = std::move(tv);
    } else {
      e = liftValue(f.bytes, src,
                    f.number == 5 ? ProtoValue::Kind::Sequence : ProtoValue::Kind::Optional,
                    depth + 1);
    }
    if (!e.ok()) return e.status();
    v.elements.push_back(std::move(*e));
  }
  if (r.bad()) return absl::InvalidArgumentError(absl::StrCat(src, ": malformed ", what));
  if (kind == ProtoValue::Kind::Optional && v.elements.size() > 1)
    return absl::InvalidArgumentError(
        absl::StrCat(src, ": OptionalProto with ", v.elements.size(), " values"));
  if (elemType == 2 || elemType == 4)
    return absl::UnimplementedError(absl::StrCat(
        src, ": ", what, " of ", elemType == 2 ? "sparse tensors" : "maps"));
  return v;
}

} // namespace

absl::StatusOr<ProtoValue> liftSequenceProto(llvm::StringRef bytes,
                                             const std::string &sourceName) {
  return liftValue(bytes, sourceName, ProtoValue::Kind::Sequence, 0);
}

absl::StatusOr<ProtoValue> liftOptionalProto(llvm::StringRef bytes,
                                             const std::string &sourceName) {
  return liftValue(bytes, sourceName, ProtoValue::Kind::Optional, 0);
}

absl::StatusOr<ProtoValue> loadValueProto(const std::string &path, Type::Kind kind) {
  if (kind != Type::Kind::Tensor && kind != Type::Kind::Sequence &&
      kind != Type::Kind::Optional)
    return absl::UnimplementedError(
        absl::StrCat(path, ": only tensor, sequence and optional values are read"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  if (kind == Type::Kind::Tensor) {
    auto t = liftTensorProto(bytes, path);
    if (!t.ok()) return t.status();
    ProtoValue v;
    v.tensor = std::move(*t);
    return v;
  }
  return kind == Type::Kind::Sequence ? liftSequenceProto(bytes, path)
                                      : liftOptionalProto(bytes, path);
}

} // namespace onnxir
