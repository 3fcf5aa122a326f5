//===- Builder.h - Creating nodes at an insertion point -------------------===//
//
// A Builder keeps an insertion point (a graph and a node to insert before, or
// the end) and creates nodes there. InsertionGuard restores it on scope exit.
//
//   Builder b(graph);
//   b.setInsertionPointAfter(matmul);
//   Node *gemm = b.create("Gemm", {a, w, c});
//   gemm->setAttr(intAttr("transB", 1));
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_BUILDER_H
#define ONNXIR_IR_BUILDER_H

#include "onnxir/IR/Graph.h"
#include "onnxir/Support/Export.h"

ONNXIR_API_BEGIN
namespace onnxir {

class Builder {
public:
  explicit Builder(Graph &g) : graph_(&g) {}

  Graph &getGraph() const { return *graph_; }
  /// Insert before `n` (in n's graph).
  void setInsertionPoint(Node *n) { graph_ = n->getGraph(); pos_ = n; }
  void setInsertionPointAfter(Node *n);
  void setInsertionPointToEnd(Graph &g) { graph_ = &g; pos_ = nullptr; }
  void setInsertionPointToStart(Graph &g);
  Node *insertionPoint() const { return pos_; }

  /// Creates `opType` with `operands` and `numResults` fresh-named results.
  Node *create(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
               unsigned numResults = 1, llvm::StringRef domain = "");
  /// Creates a node and returns its single result.
  Value *createValue(llvm::StringRef opType, llvm::ArrayRef<Value *> operands,
                     llvm::StringRef domain = "");
  /// Adds a constant initializer to the current graph with a fresh name
  /// derived from `base`.
  Value *createInitializer(llvm::StringRef base, Tensor t);

private:
  Graph *graph_;
  Node *pos_ = nullptr;
};

/// Saves a Builder's insertion point and restores it on destruction.
class InsertionGuard {
public:
  explicit InsertionGuard(Builder &b) : b_(b), g_(&b.getGraph()), pos_(b.insertionPoint()) {}
  ~InsertionGuard() {
    if (pos_) b_.setInsertionPoint(pos_); else b_.setInsertionPointToEnd(*g_);
  }

private:
  Builder &b_;
  Graph *g_;
  Node *pos_;
};

/// Attribute factories.
std::unique_ptr<Attribute> intAttr(llvm::StringRef name, int64_t v);
std::unique_ptr<Attribute> floatAttr(llvm::StringRef name, float v);
std::unique_ptr<Attribute> stringAttr(llvm::StringRef name, llvm::StringRef v);
std::unique_ptr<Attribute> intsAttr(llvm::StringRef name, std::vector<int64_t> v);
std::unique_ptr<Attribute> floatsAttr(llvm::StringRef name, std::vector<float> v);
std::unique_ptr<Attribute> tensorAttr(llvm::StringRef name, Tensor t);
std::unique_ptr<Attribute> graphAttr(llvm::StringRef name, std::unique_ptr<Graph> g);

/// Tensor factories (raw storage).
Tensor makeTensor(DataType t, std::vector<int64_t> dims, std::string rawBytes);
Tensor makeFloatTensor(std::vector<int64_t> dims, llvm::ArrayRef<float> data);
Tensor makeInt64Tensor(std::vector<int64_t> dims, llvm::ArrayRef<int64_t> data);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_BUILDER_H
