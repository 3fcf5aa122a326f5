//===- Model.cpp ----------------------------------------------------------===//
#include "onnxir/IR/Model.h"

#include "onnxir/IR/Opset.h"

namespace onnxir {

Model::Model() : ctx_(std::make_unique<Context>()), graph_(std::make_unique<Graph>(*ctx_)) {
  graph_->model_ = this;
}

Model::~Model() {
  functions_.clear();
  graph_.reset();
}

Function &Model::addFunction() {
  functions_.push_back(std::make_unique<Function>(*ctx_));
  functions_.back()->body().model_ = this;
  return *functions_.back();
}

Function *Model::findFunction(const Node &n) const {
  for (auto &f : functions_)
    if (f->isCalledBy(n)) return f.get();
  return nullptr;
}

int64_t Model::opsetVersion(llvm::StringRef domain) const {
  return opsetVersionIn(opsetImports, domain);
}

void Model::walkGraphs(llvm::function_ref<void(Graph *)> fn) {
  graph_->walkGraphs(fn);
  for (auto &f : functions_) f->body().walkGraphs(fn);
}

} // namespace onnxir
