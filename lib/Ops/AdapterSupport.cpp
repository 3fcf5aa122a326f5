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
  Value *v = newConstant(n, c, attr, std::move(t));
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

Value *newConstant(Node &n, AdapterContext &c, llvm::StringRef base, Tensor t) {
  DataType dt = t.dataType();
  if (c.to >= 9 || dt == DataType::Float || dt == DataType::Double || dt == DataType::Float16)
    return c.constant(n, base, std::move(t));
  Graph &g = *n.getGraph();
  auto v = g.addInitializer(g.freshName(base), std::move(t));
  return v.ok() ? *v : nullptr; // a fresh name does not clash
}

void eraseIfDeadConstant(Value *v) {
  if (Node *def = v ? v->definingNode() : nullptr;
      def && v->useEmpty() && !v->isGraphOutput() && isConstantNode(*def) && !def->hasUses())
    (void)def->erase();
}

absl::Status noNewOperands(Node &n, AdapterContext &c) {
  const OpSchema *older = lookupSchema(n.domain(), n.opType(), c.to);
  const OpSchema *newer = lookupSchema(n.domain(), n.opType(), c.from);
  if (!older) return absl::OkStatus();
  // `#i (formal, 'value')`
  auto slot = [&](const FormalParameter *p, unsigned i, const Value *v) {
    return absl::StrCat("#", i, " (", p ? p->name.str() + ", " : std::string(), "'",
                        v->name().str(), "')");
  };
  for (unsigned i = 0; i < n.numOperands(); ++i)
    if (n.operand(i) && !older->inputFor(i))
      return absl::FailedPreconditionError(
          absl::StrCat("operand ", slot(newer ? newer->inputFor(i) : nullptr, i, n.operand(i)),
                       " does not exist at opset ", c.to));
  bool drop = false;
  for (unsigned i = 0; i < n.numResults(); ++i) {
    Value *v = n.result(i);
    if (!v || older->outputFor(i)) continue;
    if (!v->useEmpty() || v->isGraphOutput())
      return absl::FailedPreconditionError(
          absl::StrCat("result ", slot(newer ? newer->outputFor(i) : nullptr, i, v),
                       " does not exist at opset ", c.to));
    drop = true;
  }
  if (c.checkOnly || !drop) return absl::OkStatus();
  for (unsigned i = 0; i < n.numResults(); ++i)
    if (n.result(i) && !older->outputFor(i)) (void)n.eraseResult(i);
  n.trimTrailingEmptyResults();
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

/// The shape of `v`: its type's, else a constant's dims; false if unknown.
bool shapeOf(const Value *v, std::vector<Dim> &out) {
  out.clear();
  if (!v) return false;
  if (const Type *t = v->type(); t && t->isTensor() && t->hasShape()) {
    out.assign(t->dims().begin(), t->dims().end());
    return true;
  }
  Tensor scratch;
  const Tensor *t = constantOf(v, scratch);
  if (!t) return false;
  for (int64_t d : t->dims()) out.push_back(Dim::known(d));
  return true;
}

bool allKnown(llvm::ArrayRef<Dim> ds) {
  return std::all_of(ds.begin(), ds.end(), [](const Dim &d) { return d.isKnown(); });
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
/// of the result (`aWhat` names them): sets broadcast=1 where needed, and
/// `allowAxis`: axis, with a constant B reshaped.
absl::Status legacyBroadcastTo(Node &n, AdapterContext &c, unsigned bi,
                               llvm::ArrayRef<Dim> a, const std::string &aWhat, bool allowAxis) {
  std::vector<Dim> bd;
  if (!shapeOf(n.operand(bi), bd))
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts only the legacy way (broadcast=1: operand #", bi,
        " a suffix of ", aWhat, "), which needs both operand shapes (run infer-shapes first)"));
  llvm::ArrayRef<Dim> b = bd;
  bool suffix = b.size() <= a.size();
  for (size_t i = 0; suffix && i < b.size(); ++i)
    suffix = sameDim(b[i], a[a.size() - b.size() + i]);
  bool one = b.size() <= a.size() && allKnown(b) &&
             std::all_of(b.begin(), b.end(), [](const Dim &d) { return d.value == 1; });
  // A B that numpy stretches along dims of 1 at its ends (as
  // legacyBroadcastUp makes of an `axis` form) is, without them, a legacy B
  // placed by `axis`: a constant becomes a new constant, a Reshape that
  // only added those dims is looked through.
  if (!suffix && !one && allowAxis && b.size() <= a.size()) {
    auto isOne = [](const Dim &d) { return d.isKnown() && d.value == 1; };
    size_t lo = 0, hi = b.size(), off = a.size() - b.size();
    while (lo < hi && isOne(b[lo]) && !isOne(a[off + lo])) ++lo;
    while (hi > lo && isOne(b[hi - 1]) && !isOne(a[off + hi - 1])) --hi;
    bool run = lo < hi;
    for (size_t i = lo; run && i < hi; ++i) run = sameDim(b[i], a[off + i]);
    Value *old = n.operand(bi);
    Tensor scratch;
    const Tensor *t = run ? constantOf(old, scratch) : nullptr;
    Value *src = nullptr; // the Reshape's input
    std::vector<Dim> sd;
    if (Node *def = old->definingNode(); run && !t && def && def->is("Reshape") &&
                                         def->numOperands() >= 1 &&
                                         shapeOf(def->operand(0), sd) && sd.size() == hi - lo &&
                                         std::equal(sd.begin(), sd.end(), b.begin() + lo, sameDim))
      src = def->operand(0);
    if (t || src) {
      if (c.checkOnly) return absl::OkStatus();
      if (t) {
        Tensor nt = *t;
        nt.setDims(std::vector<int64_t>(nt.dims().begin() + lo, nt.dims().begin() + hi));
        n.setOperand(bi, newConstant(n, c, old->name(), std::move(nt)));
        eraseIfDeadConstant(old);
      } else {
        n.setOperand(bi, src);
        if (Node *def = old->definingNode(); old->useEmpty() && !old->isGraphOutput()) {
          Value *shape = def->numOperands() > 1 ? def->operand(1) : nullptr;
          (void)def->erase();
          eraseIfDeadConstant(shape);
        }
      }
      n.newAttr("broadcast").setInt(1);
      n.newAttr("axis").setInt((int64_t)(off + lo));
      return absl::OkStatus();
    }
  }
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
  int64_t ones = 0, rankB = 0; // dims of 1 to append to B, of rank rankB
  if (*bc && n.getAttr("axis")) {
    auto ax = intAttrOr(n, "axis", 0);
    if (!ax.ok()) return ax.status();
    std::vector<Dim> ad, bd;
    if (!shapeOf(n.operand(0), ad) || !shapeOf(n.operand(1), bd))
      return absl::FailedPreconditionError(absl::StrCat(
          "broadcast=1 with axis=", *ax, " lines operand #1 up at dim ", *ax,
          " of operand #0, numpy broadcasting at the last dim: moving it needs the ranks of "
          "both operands (run infer-shapes first)"));
    int64_t R = (int64_t)ad.size(), r = (int64_t)bd.size(), axis = *ax < 0 ? *ax + R : *ax;
    if (axis < 0 || axis + r > R)
      return absl::FailedPreconditionError(
          absl::StrCat("axis=", *ax, " does not place operand #1 of rank ", r,
                       " inside operand #0 of rank ", R));
    ones = R - axis - r;
    rankB = r;
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
    n.setOperand(1, newConstant(n, c, b->name(), std::move(nt)));
    eraseIfDeadConstant(b);
    return absl::OkStatus();
  }
  // Reshape-5 and later: 0 keeps the dim of the input.
  std::vector<int64_t> shape(rankB, 0);
  shape.insert(shape.end(), ones, 1);
  Tensor st;
  st.setDataType(DataType::Int64);
  st.setDims({(int64_t)shape.size()});
  st.setTyped(Tensor::TypedField::Int64);
  st.int64Data.mut() = std::move(shape);
  Value *sv = newConstant(n, c, "shape", std::move(st));
  Node *rs = n.getGraph()->createNode("Reshape", {b, sv}, 1, &n, "", b->name());
  n.setOperand(1, rs->result(0));
  return absl::OkStatus();
}

absl::Status legacyBroadcastDown(Node &n, AdapterContext &c) {
  std::vector<Dim> ad;
  if (!shapeOf(n.operand(0), ad))
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts only the legacy way (broadcast=1: operand #1 a suffix of "
        "operand #0's shape), which needs both operand shapes (run infer-shapes first)"));
  return legacyBroadcastTo(n, c, 1, ad, "operand #0's shape", true);
}

absl::Status gemmBroadcastUp(Node &n, AdapterContext &c) {
  if (auto bc = intAttrOr(n, "broadcast", 0); !bc.ok()) return bc.status();
  if (!c.checkOnly) n.removeAttr("broadcast");
  return absl::OkStatus();
}

absl::Status gemmBroadcastDown(Node &n, AdapterContext &c) {
  if (n.numOperands() < 3 || !n.operand(2)) return absl::OkStatus();
  // The (M, N) of the result: from its type, else from A and B.
  std::vector<Dim> y, ad, bd;
  if (!shapeOf(n.result(0), y) || y.size() != 2) y.clear();
  if (y.empty() && shapeOf(n.operand(0), ad) && shapeOf(n.operand(1), bd) && ad.size() == 2 &&
      bd.size() == 2) {
    auto tA = intAttrOr(n, "transA", 0), tB = intAttrOr(n, "transB", 0);
    if (!tA.ok()) return tA.status();
    if (!tB.ok()) return tB.status();
    y = {ad[*tA ? 1 : 0], bd[*tB ? 0 : 1]};
  }
  if (y.empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "opset ", c.to, " broadcasts C only the legacy way (broadcast=1: C's shape a suffix of "
        "(M, N)), which needs the shapes of A and B or of the result (run infer-shapes first)"));
  return legacyBroadcastTo(n, c, 2, y, "the result's shape (M, N)", false);
}

absl::Status sameShapesDown(Node &n, AdapterContext &c) {
  std::vector<Dim> first, d;
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    if (!shapeOf(n.operand(i), i ? d : first))
      return absl::FailedPreconditionError(absl::StrCat(
          "opset ", c.to, " needs every operand of the same shape (no broadcasting), and the "
          "shape of operand #", i, " ('", n.operand(i)->name().str(),
          "') is unknown (run infer-shapes first)"));
    if (i && !(d.size() == first.size() && std::equal(d.begin(), d.end(), first.begin(), sameDim)))
      return absl::FailedPreconditionError(absl::StrCat(
          "opset ", c.to, " needs every operand of the same shape (no broadcasting): operand #",
          i, " ('", n.operand(i)->name().str(), "') has shape ", dimsString(d),
          ", operand #0 ", dimsString(first)));
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
