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

#include <algorithm>
#include <cstring>

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

//===--- Helpers of the steps at opset 10 and later (adapt-modern) ------===//

namespace {
bool holdsDefault(const Attribute &a, const AttrDefault &d) {
  if (a.kind() != d.kind) return false;
  switch (d.kind) {
  case AttrKind::Int: return a.i == d.i;
  case AttrKind::String: return a.s == d.s.str();
  case AttrKind::Ints:
    return std::all_of(a.ints.begin(), a.ints.end(), [&](int64_t v) { return v == d.i; });
  default: return false;
  }
}
std::string defaultText(const AttrDefault &d) {
  switch (d.kind) {
  case AttrKind::Int: return absl::StrCat(d.i);
  case AttrKind::String: return absl::StrCat("\"", d.s.str(), "\"");
  default: return absl::StrCat("all ", d.i);
  }
}
} // namespace

absl::Status olderFormOnly(Node &n, AdapterContext &c, llvm::StringRef op,
                           std::initializer_list<AttrDefault> defaults) {
  const OpSchema *older = lookupSchema("", op, c.to);
  if (!older)
    return absl::FailedPreconditionError(absl::StrCat(op.str(), " has no schema at opset ", c.to));
  // The check sees the node before the steps above this one (Note [Version
  // adapters]): what the newer schema lacks too is theirs.
  const OpSchema *newer = lookupSchema("", op, c.from);
  std::vector<std::string> drop;
  for (unsigned k = 0; k < n.numAttributes(); ++k) {
    const Attribute &a = n.attribute(k);
    if (older->attribute(a.name()) || (newer && !newer->attribute(a.name()))) continue;
    const AttrDefault *d = nullptr;
    for (const AttrDefault &x : defaults)
      if (x.name == a.name()) d = &x;
    if (!d)
      return absl::FailedPreconditionError(
          absl::StrCat("attribute '", a.name(), "' does not exist at opset ", c.to));
    if (a.isReference() || !holdsDefault(a, *d))
      return absl::FailedPreconditionError(absl::StrCat(
          "attribute '", a.name(), "' does not exist at opset ", c.to,
          ", which has only its default (", defaultText(*d), ")"));
    drop.push_back(a.name());
  }
  unsigned keep = n.numOperands();
  if (newer && newer->maxInputs() >= 0) keep = std::min(keep, (unsigned)newer->maxInputs());
  while (keep && !n.operand(keep - 1)) --keep;
  if (older->maxInputs() >= 0 && keep > (unsigned)older->maxInputs())
    return absl::FailedPreconditionError(absl::StrCat(
        "operand #", older->maxInputs(), " ('", n.operand(older->maxInputs())
                                                    ? n.operand(older->maxInputs())->name().str()
                                                    : std::string(),
        "') does not exist at opset ", c.to));
  if (c.checkOnly) return absl::OkStatus();
  for (const std::string &a : drop) n.removeAttr(a);
  while (n.numOperands() > keep) n.removeOperand(n.numOperands() - 1);
  return absl::OkStatus();
}

// A constant's own tensor says its type and shape where the value has no
// type yet (an initializer read without value_info, a Constant node).
DataType operandElemType(const Node &n, unsigned i) {
  Value *v = i < n.numOperands() ? n.operand(i) : nullptr;
  const Type *t = v ? v->type() : nullptr;
  if (t && t->kind() == Type::Kind::Tensor && t->elemType() != DataType::Undefined)
    return t->elemType();
  Tensor scratch;
  const Tensor *c = v ? constantOf(v, scratch) : nullptr;
  return c ? c->dataType() : DataType::Undefined;
}

int64_t operandRank(const Node &n, unsigned i) {
  Value *v = i < n.numOperands() ? n.operand(i) : nullptr;
  const Type *t = v ? v->type() : nullptr;
  if (t && t->kind() == Type::Kind::Tensor && t->rank() >= 0) return t->rank();
  Tensor scratch;
  const Tensor *c = v ? constantOf(v, scratch) : nullptr;
  return c ? (int64_t)c->dims().size() : -1;
}

Value *scalarConstant(Node &n, AdapterContext &c, llvm::StringRef base, DataType dt, double v) {
  std::string raw;
  auto put = [&](auto x) {
    raw.resize(sizeof x);
    std::memcpy(raw.data(), &x, sizeof x);
  };
  switch (dt) {
  case DataType::Float: put((float)v); break;
  case DataType::Double: put(v); break;
  case DataType::Float16: put(floatToHalf((float)v)); break;
  case DataType::BFloat16: {
    float f = (float)v;
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof f);
    if ((double)f != v || (bits & 0xffff)) return nullptr; // not exactly a bfloat16
    put((uint16_t)(bits >> 16));
    break;
  }
  case DataType::Int8: put((int8_t)v); break;
  case DataType::Uint8: put((uint8_t)v); break;
  case DataType::Int16: put((int16_t)v); break;
  case DataType::Uint16: put((uint16_t)v); break;
  case DataType::Int32: put((int32_t)v); break;
  case DataType::Uint32: put((uint32_t)v); break;
  case DataType::Int64: put((int64_t)v); break;
  case DataType::Uint64: put((uint64_t)v); break;
  case DataType::Bool: put((uint8_t)(v != 0)); break;
  default: return nullptr;
  }
  Tensor t;
  t.setDataType(dt);
  t.setRaw(std::move(raw));
  return c.constant(n, base, std::move(t));
}

absl::StatusOr<std::vector<double>> constantOperandValues(const Node &n, AdapterContext &c,
                                                          unsigned i, llvm::StringRef what) {
  Value *v = i < n.numOperands() ? n.operand(i) : nullptr;
  if (!v) return absl::FailedPreconditionError(absl::StrCat("no operand #", i));
  Tensor scratch;
  const Tensor *t = constantOf(v, scratch);
  auto vals = t ? t->values<double>()
                : absl::StatusOr<std::vector<double>>(absl::NotFoundError("not a constant"));
  if (!vals.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("operand #", i, " ('", v->name().str(), "') is not a constant; opset ",
                     c.to, " needs it as ", what.str()));
  return vals;
}

void dropOperand(Node &n, unsigned i) {
  Value *v = i < n.numOperands() ? n.operand(i) : nullptr;
  if (i < n.numOperands()) {
    if (i + 1 == n.numOperands())
      n.removeOperand(i);
    else
      n.setOperand(i, nullptr);
  }
  while (n.numOperands() && !n.operand(n.numOperands() - 1)) n.removeOperand(n.numOperands() - 1);
  if (!v) return;
  for (unsigned k = 0; k < n.numOperands(); ++k)
    if (n.operand(k) == v) return;
  if (Node *def = v->definingNode(); def && v->useEmpty() && !v->isGraphOutput() &&
                                      isConstantNode(*def) && !def->hasUses())
    (void)def->erase();
}

void setIntAttr(Node &n, llvm::StringRef name, int64_t v) {
  n.removeAttr(name);
  n.newAttr(name).setInt(v);
}

void setStringAttr(Node &n, llvm::StringRef name, std::string v) {
  n.removeAttr(name);
  n.newAttr(name).setString(std::move(v));
}

absl::StatusOr<int64_t> intAttrOr(const Node &n, llvm::StringRef name, int64_t dflt) {
  const Attribute *a = n.getAttr(name);
  if (!a) return dflt;
  if (a->isReference() || a->kind() != AttrKind::Int)
    return absl::FailedPreconditionError(absl::StrCat(
        "attribute '", name.str(), "' is not an integer (or refers to a function attribute)"));
  return a->i;
}

absl::StatusOr<std::string> stringAttrOr(const Node &n, llvm::StringRef name,
                                         llvm::StringRef dflt) {
  const Attribute *a = n.getAttr(name);
  if (!a) return dflt.str();
  if (a->isReference() || a->kind() != AttrKind::String)
    return absl::FailedPreconditionError(absl::StrCat(
        "attribute '", name.str(), "' is not a string (or refers to a function attribute)"));
  return a->s;
}

Node *wrapResult(Node &n, llvm::StringRef op, llvm::ArrayRef<Value *> extra, unsigned index) {
  Graph &g = *n.getGraph();
  Value *y = n.result(index);
  std::vector<Value *> ops{y};
  ops.insert(ops.end(), extra.begin(), extra.end());
  // Created with a placeholder first operand so that replaceAllUsesWith does
  // not reach the new node's own use.
  std::vector<Value *> tmp = ops;
  tmp[0] = extra.empty() ? nullptr : extra[0];
  Node *w = g.createNode(op, tmp, 1, &n);
  (void)w->moveAfter(&n);
  Value *r = w->result(0);
  y->replaceAllUsesWith(r);
  w->setOperand(0, y);
  std::string name = y->name().str();
  r->setType(y->type());
  y->setType(nullptr);
  y->setNameOrFresh(name + "_inner");
  (void)r->setName(name);
  return w;
}

} // namespace onnxir::adapters
