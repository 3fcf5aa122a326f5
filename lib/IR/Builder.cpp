//===- Builder.cpp --------------------------------------------------------===//
#include "onnxir/IR/Builder.h"

#include <cstring>

namespace onnxir {

void Builder::setInsertionPointAfter(Node *n) {
  graph_ = n->getGraph();
  auto it = std::next(n->getIterator());
  pos_ = it == graph_->nodes().end() ? nullptr : &*it;
}

void Builder::setInsertionPointToStart(Graph &g) {
  graph_ = &g;
  pos_ = g.nodes().empty() ? nullptr : &g.nodes().front();
}

Node *Builder::create(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                      unsigned numResults, llvm::StringRef domain) {
  return graph_->createNode(opType, operands, numResults, pos_, domain);
}

Value *Builder::createValue(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                            llvm::StringRef domain) {
  return create(opType, operands, 1, domain)->result(0);
}

Value *Builder::createInitializer(llvm::StringRef base, Tensor t) {
  auto v = graph_->addInitializer(graph_->freshName(base), std::move(t));
  assert(v.ok());
  return *v;
}

std::unique_ptr<Attribute> intAttr(llvm::StringRef name, int64_t v) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setInt(v);
  return a;
}
std::unique_ptr<Attribute> floatAttr(llvm::StringRef name, float v) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setFloat(v);
  return a;
}
std::unique_ptr<Attribute> stringAttr(llvm::StringRef name, llvm::StringRef v) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setString(v.str());
  return a;
}
std::unique_ptr<Attribute> intsAttr(llvm::StringRef name, std::vector<int64_t> v) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setInts(std::move(v));
  return a;
}
std::unique_ptr<Attribute> floatsAttr(llvm::StringRef name, std::vector<float> v) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setFloats(std::move(v));
  return a;
}
std::unique_ptr<Attribute> tensorAttr(llvm::StringRef name, Tensor t) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setTensor(std::make_unique<Tensor>(std::move(t)));
  return a;
}
std::unique_ptr<Attribute> graphAttr(llvm::StringRef name, std::unique_ptr<Graph> g) {
  auto a = std::make_unique<Attribute>(name.str());
  a->setKind(AttrKind::Graph);
  a->addGraph(std::move(g));
  return a;
}

Tensor makeTensor(DataType t, std::vector<int64_t> dims, std::string rawBytes) {
  Tensor r;
  r.setDataType(t);
  r.setDims(std::move(dims));
  r.setRaw(std::move(rawBytes));
  return r;
}

Tensor makeFloatTensor(std::vector<int64_t> dims, llvm::ArrayRef<float> data) {
  std::string raw(data.size() * 4, '\0');
  if (!data.empty()) std::memcpy(raw.data(), data.data(), raw.size());
  return makeTensor(DataType::Float, std::move(dims), std::move(raw));
}

Tensor makeInt64Tensor(std::vector<int64_t> dims, llvm::ArrayRef<int64_t> data) {
  std::string raw(data.size() * 8, '\0');
  if (!data.empty()) std::memcpy(raw.data(), data.data(), raw.size());
  return makeTensor(DataType::Int64, std::move(dims), std::move(raw));
}

} // namespace onnxir
