//===- AdapterSupport.cpp - Helpers of the version adapters ---------------===//
#include "AdapterSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
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

void eraseIfDeadConstant(Value *v) {
  if (Node *def = v ? v->definingNode() : nullptr;
      def && v->useEmpty() && !v->isGraphOutput() && isConstantNode(*def) && !def->hasUses())
    (void)def->erase();
}

absl::Status noNewOperands(Node &n, AdapterContext &c) {
  const OpSchema *older = lookupSchema(n.domain(), n.opType(), c.to);
  if (!older) return absl::OkStatus();
  for (unsigned i = 0; i < n.numOperands(); ++i)
    if (n.operand(i) && !older->inputFor(i))
      return absl::FailedPreconditionError(
          absl::StrCat("operand #", i, " ('", n.operand(i)->name().str(),
                       "') does not exist at opset ", c.to));
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (n.result(i) && !older->outputFor(i))
      return absl::FailedPreconditionError(
          absl::StrCat("result #", i, " ('", n.result(i)->name().str(),
                       "') does not exist at opset ", c.to));
  return absl::OkStatus();
}

absl::Status dropConsumedInputs(Node &n, AdapterContext &c) {
  if (!c.checkOnly) n.removeAttr("consumed_inputs");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> intAttrOr(const Node &n, llvm::StringRef name, int64_t dflt) {
  const Attribute *a = n.getAttr(name);
  if (!a) return dflt;
  if (a->isReference())
    return absl::FailedPreconditionError(
        absl::StrCat("attribute '", name.str(), "' refers to the function attribute '",
                     a->refAttrName.get(), "', whose value decides the conversion"));
  if (a->kind() != AttrKind::Int)
    return absl::FailedPreconditionError(
        absl::StrCat("attribute '", name.str(), "' is not an integer"));
  return a->i;
}

namespace {

const Type *shapedType(const Value *v) {
  const Type *t = v ? v->type() : nullptr;
  return t && t->isTensor() && t->hasShape() ? t : nullptr;
}

bool sameDim(const Dim &a, const Dim &b) {
  if (a.isKnown() && b.isKnown()) return a.value == b.value;
  if (a.isSymbolic() && b.isSymbolic()) return a.param == b.param;
  return false;
}

std::string dimsString(llvm::ArrayRef<Dim> ds) {
  std::string s = "[";
  for (size_t i = 0; i < ds.size(); ++i) {
    if (i) s += ",";
    if (ds[i].isKnown()) absl::StrAppend(&s, ds[i].value);
    else if (ds[i].isSymbolic()) s += ds[i].param.str();
    else s += "?";
  }
  return s + "]";
}

/// Note [Legacy broadcast], down: operand #`bi` of `n` against the dims `a`
/// of the result (`aWhat` names them): sets broadcast=1 where needed.
absl::Status legacyBroadcastTo(Node &n, AdapterContext &c, unsigned bi,
                               llvm::ArrayRef<Dim> a, const std::string &aWhat) {
  const Type *tb = shapedType(n.operand(bi));
  if (!tb)
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts only the legacy way (broadcast=1: operand #", bi,
        " a suffix of ", aWhat, "), which needs both operand shapes (run infer-shapes first)"));
  llvm::ArrayRef<Dim> b = tb->dims();
  bool suffix = b.size() <= a.size();
  for (size_t i = 0; suffix && i < b.size(); ++i)
    suffix = sameDim(b[i], a[a.size() - b.size() + i]);
  bool one = b.size() <= a.size() && tb->numElements() == std::optional<int64_t>(1);
  if (!suffix && !one)
    return absl::FailedPreconditionError(absl::StrCat(
        "operand #", bi, " ('", n.operand(bi)->name().str(), "') of shape ", dimsString(b),
        " does not broadcast to ", aWhat, " ", dimsString(a),
        " the legacy way of opset ", c.to, " (its shape a suffix of it, or one element)"));
  if (c.checkOnly) return absl::OkStatus();
  if (!(suffix && b.size() == a.size())) n.newAttr("broadcast").setInt(1);
  return absl::OkStatus();
}

} // namespace

absl::Status legacyBroadcastUp(Node &n, AdapterContext &c) {
  auto bc = intAttrOr(n, "broadcast", 0);
  if (!bc.ok()) return bc.status();
  int64_t ones = 0; // dims of 1 to append to B
  if (*bc && n.getAttr("axis")) {
    auto ax = intAttrOr(n, "axis", 0);
    if (!ax.ok()) return ax.status();
    const Type *ta = shapedType(n.operand(0)), *tb = shapedType(n.operand(1));
    if (!ta || !tb)
      return absl::FailedPreconditionError(absl::StrCat(
          "broadcast=1 with axis=", *ax, " lines operand #1 up at dim ", *ax,
          " of operand #0, numpy broadcasting at the last dim: moving it needs the ranks of "
          "both operands (run infer-shapes first)"));
    int64_t R = ta->rank(), r = tb->rank(), axis = *ax < 0 ? *ax + R : *ax;
    if (axis < 0 || axis + r > R)
      return absl::FailedPreconditionError(
          absl::StrCat("axis=", *ax, " does not place operand #1 of rank ", r,
                       " inside operand #0 of rank ", R));
    ones = R - axis - r;
  }
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("broadcast");
  n.removeAttr("axis");
  if (!ones) return absl::OkStatus();
  Value *b = n.operand(1);
  Tensor scratch;
  if (const Tensor *t = constantOf(b, scratch)) {
    Tensor nt = *t;
    std::vector<int64_t> dims = nt.dims();
    dims.insert(dims.end(), ones, 1);
    nt.setDims(std::move(dims));
    n.setOperand(1, c.constant(n, b->name(), std::move(nt)));
    eraseIfDeadConstant(b);
    return absl::OkStatus();
  }
  // Reshape-5 and later: 0 keeps the dim of the input.
  std::vector<int64_t> shape(shapedType(b)->rank(), 0);
  shape.insert(shape.end(), ones, 1);
  Tensor st;
  st.setDataType(DataType::Int64);
  st.setDims({(int64_t)shape.size()});
  st.setTyped(Tensor::TypedField::Int64);
  st.int64Data.mut() = std::move(shape);
  Value *sv = c.constant(n, "shape", std::move(st));
  Node *rs = n.getGraph()->createNode("Reshape", {b, sv}, 1, &n, "", b->name());
  n.setOperand(1, rs->result(0));
  return absl::OkStatus();
}

absl::Status legacyBroadcastDown(Node &n, AdapterContext &c) {
  const Type *ta = shapedType(n.operand(0));
  if (!ta)
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts only the legacy way (broadcast=1: operand #1 a suffix of "
        "operand #0's shape), which needs both operand shapes (run infer-shapes first)"));
  return legacyBroadcastTo(n, c, 1, ta->dims(), "operand #0's shape");
}

absl::Status gemmBroadcastUp(Node &n, AdapterContext &c) {
  if (auto bc = intAttrOr(n, "broadcast", 0); !bc.ok()) return bc.status();
  if (!c.checkOnly) n.removeAttr("broadcast");
  return absl::OkStatus();
}

absl::Status gemmBroadcastDown(Node &n, AdapterContext &c) {
  if (n.numOperands() < 3 || !n.operand(2)) return absl::OkStatus();
  // The (M, N) of the result: from its type, else from A and B.
  std::vector<Dim> y;
  if (const Type *t = shapedType(n.result(0)); t && t->rank() == 2)
    y.assign(t->dims().begin(), t->dims().end());
  const Type *ta = shapedType(n.operand(0)), *tb = shapedType(n.operand(1));
  if (y.empty() && ta && tb && ta->rank() == 2 && tb->rank() == 2) {
    auto tA = intAttrOr(n, "transA", 0), tB = intAttrOr(n, "transB", 0);
    if (!tA.ok()) return tA.status();
    if (!tB.ok()) return tB.status();
    y = {ta->dims()[*tA ? 1 : 0], tb->dims()[*tB ? 0 : 1]};
  }
  if (y.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts C only the legacy way (broadcast=1: C's shape a suffix of "
        "(M, N)), which needs the shapes of A and B or of the result (run infer-shapes first)"));
  return legacyBroadcastTo(n, c, 2, y, "the result's shape (M, N)");
}

} // namespace onnxir::adapters
