//===- TensorFile.cpp - A serialized TensorProto as a tensor --------------===//
#include "onnxir/Serialize/TensorFile.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "absl/strings/str_cat.h"

#include <fstream>
#include <sstream>

namespace onnxir {
namespace {

void putVarint(std::string &s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back((char)(v | 0x80));
    v >>= 7;
  }
  s.push_back((char)v);
}

void putField(std::string &s, unsigned field, llvm::StringRef payload) {
  putVarint(s, (field << 3) | 2);
  putVarint(s, payload.size());
  s.append(payload.data(), payload.size());
}

} // namespace

absl::StatusOr<Tensor> liftTensorProto(llvm::StringRef bytes, const std::string &sourceName) {
  // The tensor as the one initializer of a model: ModelProto.graph (7) >
  // GraphProto.initializer (5), a later name field (8) winning over its own.
  std::string tensor = bytes.str();
  putField(tensor, 8, "__onnxir_tensor_file");
  std::string graph;
  putField(graph, 5, tensor);
  std::string model;
  putVarint(model, (1 << 3) | 0); // ir_version 8
  putVarint(model, 8);
  putField(model, 7, graph);
  LiftOptions lo;
  lo.sourceName = sourceName;
  auto m = liftModel(model, lo);
  if (!m.ok()) return m.status();
  if ((*m)->graph().initializers().size() != 1)
    return absl::InvalidArgumentError(sourceName + ": not a TensorProto");
  const Tensor &t = *(*m)->graph().initializers()[0]->initializer();
  if (absl::Status s = checkTensorData(t); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(sourceName, ": ", s.message()));
  // An owning copy: the lifted model's buffers die with it.
  Tensor out;
  out.setDataType(t.dataType());
  out.setDims(t.dims());
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (!s.ok()) return s.status();
    out.stringData.mut() = std::move(*s);
    out.setTyped(Tensor::TypedField::String);
  } else {
    auto b = t.bytes();
    if (!b.ok()) return b.status();
    out.setRaw(b->str());
  }
  return out;
}

absl::StatusOr<Tensor> loadTensorProto(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return liftTensorProto(ss.str(), path);
}

} // namespace onnxir
