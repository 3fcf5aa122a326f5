//===- OpContext.h - One operator application, as rules and kernels see it ===//
//
// An OpContext is what a shape rule (InferCtx.h), an evaluation kernel
// (Kernels.h) and a rewrite pattern know about one application of an
// operator: its domain, op type and the opset version in force (IR/Opset.h),
// the schema that version resolves to, its attributes read with the
// schema's defaults (Note [Attribute defaults]), and its constant operands
// (Note [Constant values] in IR/ConstantValue.h).
//
//   NodeContext c(node);                       // a node in a graph of a model
//   int64_t axis = c.getInt("axis");           // its attribute, else the default
//   const Tensor *shape = c.inConstant(1);     // its operand #1 when constant
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_OPCONTEXT_H
#define ONNXIR_OPS_OPCONTEXT_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Attribute;
class Node;
class OpSchema;
struct AttributeSchema;
struct OpEntry;

//===--- Note [Attribute defaults] ----------------------------------------===//
// One rule for every reader of an attribute (getInt, getFloat, getString,
// getInts, getFloats, getStrings):
//  - the attribute is present and holds a value of the asked kind: that value;
//  - present but of another kind, or a reference to a function attribute
//    that this context cannot resolve: the caller's fallback (nullopt for
//    the list readers): the node is malformed or its value unknown here, so
//    the schema's default would be a guess (the schema verifier reports the
//    wrong kind);
//  - absent: the default that the schema in force declares, when it has one
//    of that kind; else the caller's fallback.

class OpContext {
public:
  OpContext(llvm::StringRef domain, llvm::StringRef opType, int64_t opset)
      : domain(domain), opType(opType), opset(opset) {}
  virtual ~OpContext() = default;
  OpContext(const OpContext &) = delete;
  OpContext &operator=(const OpContext &) = delete;

  /// The node's domain as written ("" or "ai.onnx" for the default domain).
  llvm::StringRef domain;
  llvm::StringRef opType;
  /// The version of `domain` in force (IR/Opset.h); <= 0 when unknown, which
  /// kernels read as "the newest".
  int64_t opset;

  /// The schema the application resolves to at `opset`; null if none.
  const OpSchema *schema() const;
  /// The registry entry in force (OpRegistry.h); null if the op is unknown.
  const OpEntry *entry() const;

  /// The attribute `name` as this context sees it (references resolved
  /// where the context can), null if absent.
  virtual const Attribute *attr(llvm::StringRef name) const = 0;
  /// Operand #i when it is a constant (an initializer that is not a graph
  /// input, or a Constant node's value); null otherwise or when absent.
  virtual const Tensor *inConstant(unsigned i) const = 0;

  //===--- Attributes, Note [Attribute defaults] ----------------------------===//
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t getInt(llvm::StringRef name, int64_t fallback = 0) const;
  float getFloat(llvm::StringRef name, float fallback = 0) const;
  std::string getString(llvm::StringRef name, llvm::StringRef fallback = "") const;
  std::optional<std::vector<int64_t>> getInts(llvm::StringRef name) const;
  std::optional<std::vector<float>> getFloats(llvm::StringRef name) const;
  std::optional<std::vector<std::string>> getStrings(llvm::StringRef name) const;

protected:
  /// For a caller that has looked the entry up already (the inference
  /// engine): entry() and schema() then cost nothing.
  void setEntry(const OpEntry *e) {
    entry_ = e;
    looked_ = true;
  }

private:
  /// The attribute `name` if present with kind `k`; `present` tells whether
  /// it was there at all.
  const Attribute *own(llvm::StringRef name, int k, bool &present) const;
  const AttributeSchema *schemaDefault(llvm::StringRef name, int k) const;
  mutable const OpEntry *entry_ = nullptr;
  mutable bool looked_ = false;
};

/// The context of a node as it stands in its graph: the opset in force
/// for it, its own attributes (references stay unresolved), its constant
/// operands.
class NodeContext : public OpContext {
public:
  explicit NodeContext(const Node &n);
  /// With the opset version given (the caller already knows it).
  NodeContext(const Node &n, int64_t opset);
  const Node &node;
  const Attribute *attr(llvm::StringRef name) const override;
  const Tensor *inConstant(unsigned i) const override;

private:
  mutable std::deque<Tensor> scratch_;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_OPCONTEXT_H
