//===- CoreOps.cpp - The operators the IR itself creates ------------------===//
#include "onnxir/IR/CoreOps.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"

namespace onnxir {

bool isConstantNode(const Node &n) { return n.is("Constant"); }
bool isIdentityNode(const Node &n) { return n.is("Identity"); }

Node *createConstantNode(Graph &g, Tensor t, Node *pos, llvm::StringRef resultBase) {
  Node *c = g.createNode("Constant", {}, 1, pos, "", resultBase);
  c->setAttr(tensorAttr("value", std::move(t)));
  return c;
}

Node *createIdentityNode(Graph &g, Value *v, Node *pos) {
  return g.createNode("Identity", {v}, 1, pos);
}

} // namespace onnxir
