//===- CoreOps.h - The operators the IR itself creates --------------------===//
//
// Two ONNX operators are part of how the IR edits graphs rather than what
// a model computes, so the IR names them here (and passes ask these instead
// of spelling op types):
//  - Constant: a tensor inside a function body, where a graph has no
//    initializers (its value decoded by IR/ConstantValue.h);
//  - Identity: a value passed on under another name (a graph output that is
//    also an input, or one value under two output names).
// Everything else the passes know of operators they ask lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_COREOPS_H
#define ONNXIR_IR_COREOPS_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class Node;
class Value;

/// A Constant node of the default domain.
bool isConstantNode(const Node &n);
/// An Identity node of the default domain.
bool isIdentityNode(const Node &n);

/// A Constant node holding `t` (its `value`), inserted before `pos` (null: at
/// the end), its result named freshly from `resultBase`.
Node *createConstantNode(Graph &g, Tensor t, Node *pos, llvm::StringRef resultBase);
/// An Identity of `v`, inserted before `pos`.
Node *createIdentityNode(Graph &g, Value *v, Node *pos);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_COREOPS_H
