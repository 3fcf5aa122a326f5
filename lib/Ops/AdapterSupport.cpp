//===- AdapterSupport.cpp - Helpers of the version adapters ---------------===//
#include "AdapterSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/str_cat.h"

namespace onnxir::adapters {

absl::Status intsAttrToOperand(Node &n, AdapterContext &c, llvm::StringRef attr, unsigned index,
                               bool dropEmpty) {
  Attribute *a = n.getAttr(attr);
  if (!a) return absl::OkStatus();
  if (a->isReference())
    return absl::FailedPreconditionError(
        absl::StrCat("attribute '", attr.str(), "' refers to the function attribute '",
                     a->refAttrName.get(), "'; opset ", c.to, " needs it as operand #", index));
  if (a->kind() != AttrKind::Ints)
    return absl::FailedPreconditionError(
        absl::StrCat("attribute '", attr.str(), "' is not a list of integers"));
  if (n.numOperands() > index)
    return absl::FailedPreconditionError(absl::StrCat(
        "the node has both attribute '", attr.str(), "' and operand #", index));
  if (c.checkOnly) return absl::OkStatus();
  std::vector<int64_t> vals(a->ints.begin(), a->ints.end());
  n.removeAttr(attr);
  if (vals.empty() && dropEmpty) return absl::OkStatus();
  Tensor t;
  t.setDataType(DataType::Int64);
  t.setDims({(int64_t)vals.size()});
  t.setTyped(Tensor::TypedField::Int64);
  t.int64Data.mut() = std::move(vals);
  Value *v = c.constant(n, attr, std::move(t));
  while (n.numOperands() < index) n.addOperand(nullptr);
  n.addOperand(v);
  return absl::OkStatus();
}

absl::Status operandToIntsAttr(Node &n, AdapterContext &c, unsigned index, llvm::StringRef attr,
                               bool dropEmpty) {
  if (n.numOperands() <= index || !n.operand(index)) return absl::OkStatus();
  if (n.numOperands() != index + 1)
    return absl::FailedPreconditionError(
        absl::StrCat("operand #", index, " is not the node's last operand"));
  Value *v = n.operand(index);
  Tensor scratch;
  const Tensor *t = constantOf(v, scratch);
  if (!t)
    return absl::FailedPreconditionError(
        absl::StrCat("operand #", index, " ('", v->name().str(), "') is not a constant; opset ",
                     c.to, " needs it as attribute '", attr.str(), "'"));
  if (t->dataType() != DataType::Int64 && t->dataType() != DataType::Int32)
    return absl::FailedPreconditionError(
        absl::StrCat("operand #", index, " ('", v->name().str(), "') is not an integer tensor"));
  auto vals = t->values<int64_t>();
  if (!vals.ok())
    return absl::FailedPreconditionError(absl::StrCat("operand #", index, " ('",
                                                      v->name().str(), "') cannot be read: ",
                                                      vals.status().message()));
  if (c.checkOnly) return absl::OkStatus();
  n.removeOperand(index);
  // A Constant node left without uses goes with it (it comes before `n` in
  // the walk, so no later step of the conversion holds it).
  if (Node *def = v->definingNode(); def && v->useEmpty() && !v->isGraphOutput() &&
                                      isConstantNode(*def) && !def->hasUses())
    (void)def->erase();
  while (n.numOperands() && !n.operand(n.numOperands() - 1)) n.removeOperand(n.numOperands() - 1);
  if (vals->empty() && dropEmpty) return absl::OkStatus();
  n.newAttr(attr).setInts(std::move(*vals));
  return absl::OkStatus();
}

absl::Status noChange(Node &, AdapterContext &) { return absl::OkStatus(); }

absl::Status noNewAttributes(Node &n, AdapterContext &c) {
  const OpSchema *older = lookupSchema(n.domain(), n.opType(), c.to);
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    if (!older || !older->attribute(a.name()))
      return absl::FailedPreconditionError(absl::StrCat(
          "attribute '", a.name(), "' does not exist at opset ", c.to));
  }
  return absl::OkStatus();
}

} // namespace onnxir::adapters
