//===- Expansions.cpp - Builders of context-dependent function bodies -----===//
//
// Note [Expansion builders] (OpRegistry.h): the fused operators whose ONNX
// function body is built per node (LayerNormalization-17, Gelu-20,
// RMSNormalization-23) written as nodes of older operators, valid at the
// opset the caller asks for. These are what down-conversion below the op's
// first version produces, so every op used exists at opset 13 (Gelu's Erf
// from 9): ReduceMean (axes attribute below 18, operand from 18), Sub, Mul,
// Add, Sqrt, Reciprocal, Erf, Tanh, Cast (CastLike from 15 when an element
// type is unknown).
//
// The definitions follow the ONNX operator documentation:
//   LayerNormalization: U = stash_type; XU = Cast<U>(X); axes = [axis, rank);
//     Mean = ReduceMean(XU); D = XU - Mean; Var = ReduceMean(D * D);
//     InvStdDev = 1 / Sqrt(Var + epsilon); Y = Cast<T>(D * InvStdDev) * Scale
//     (+ B when given); the optional results Mean and InvStdDev are of type U.
//   Gelu: none: Y = 0.5 * X * (1 + Erf(X / sqrt(2)));
//     tanh: Y = 0.5 * X * (1 + Tanh(sqrt(2 / pi) * (X + 0.044715 * X^3))).
//   RMSNormalization: XU = Cast<U>(X); Y = Cast<T>(XU * 1 / Sqrt(
//     ReduceMean(XU * XU) + epsilon)) * scale.
//
//===----------------------------------------------------------------------===//
#include "Families.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <optional>

namespace onnxir {

namespace {

absl::Status refuse(std::string why) { return absl::FailedPreconditionError(std::move(why)); }

/// Every op in `ops` exists (and is not deprecated) at `opset`.
absl::Status requireOps(const ExpandContext &c, std::initializer_list<const char *> ops) {
  for (const char *op : ops) {
    const OpSchema *s = lookupSchema("", op, c.opset);
    if (!s || s->deprecated())
      return refuse(absl::StrCat("the expansion needs ", op, ", which does not exist at opset ",
                                 c.opset));
  }
  return absl::OkStatus();
}

/// No attribute of `n` refers to a function attribute (its value is unknown).
absl::Status noReferences(const Node &n) {
  for (unsigned i = 0; i < n.numAttributes(); ++i)
    if (n.attribute(i).isReference())
      return refuse(absl::StrCat("attribute '", n.attribute(i).name(),
                                 "' refers to a function attribute (inline the function first)"));
  return absl::OkStatus();
}

bool isFloatType(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 ||
         t == DataType::BFloat16;
}

/// Builds the nodes before `n` (the node being expanded).
struct Emitter {
  Node &n;
  ExpandContext &c;
  Builder b;
  Emitter(Node &n, ExpandContext &c) : n(n), c(c), b(*n.getGraph()) { b.setInsertionPoint(&n); }

  Value *op(const char *type, std::initializer_list<Value *> operands) {
    return b.createValue(type, operands);
  }
  Value *cast(Value *x, DataType to) {
    Node *k = b.create("Cast", {x});
    k->newAttr("to").setInt((int64_t)to);
    return k->result(0);
  }
  /// A scalar constant of `like`'s element type `t` (nullopt: unknown, then
  /// a float constant made like `like` with CastLike).
  Value *scalar(double v, std::optional<DataType> t, Value *like) {
    Tensor k;
    if (t && *t == DataType::Double) {
      k.setDataType(DataType::Double);
      k.setTyped(Tensor::TypedField::Double);
      k.doubleData.mut() = {v};
    } else {
      k.setDataType(DataType::Float);
      k.setTyped(Tensor::TypedField::Float);
      k.floatData.mut() = {(float)v};
    }
    Value *r = createConstantNode(*n.getGraph(), std::move(k), &n, "const")->result(0);
    if (!t) return op("CastLike", {r, like});
    if (*t != DataType::Float && *t != DataType::Double) return cast(r, *t);
    return r;
  }
  /// ReduceMean over `axes`, keepdims, in the form of `c.opset`.
  Value *reduceMean(Value *x, const std::vector<int64_t> &axes) {
    if (c.opset >= firstVersionWithInput("ReduceMean", "axes")) {
      Tensor t;
      t.setDataType(DataType::Int64);
      t.setDims({(int64_t)axes.size()});
      t.setTyped(Tensor::TypedField::Int64);
      t.int64Data.mut() = axes;
      Value *a = createConstantNode(*n.getGraph(), std::move(t), &n, "axes")->result(0);
      return op("ReduceMean", {x, a});
    }
    Node *r = b.create("ReduceMean", {x});
    r->newAttr("axes").setInts(axes);
    return r->result(0);
  }
};

/// The element type of the first of `vs` that has a known one (values the
/// schema gives the same type constraint).
std::optional<DataType> firstElemType(std::initializer_list<const Value *> vs) {
  for (const Value *v : vs)
    if (std::optional<DataType> t = elemOf(v)) return t;
  return std::nullopt;
}

const Value *operandOr(const Node &n, unsigned i) { return i < n.numOperands() ? n.operand(i) : nullptr; }
const Value *resultOr(const Node &n, unsigned i) { return i < n.numResults() ? n.result(i) : nullptr; }

/// What the normalizations (LayerNormalization-17, RMSNormalization-23)
/// share: their attributes, T (the element type of X, known from X or from
/// values of the same constraint), U (stash_type) and the axes [axis, rank)
/// as the opset can say them.
struct NormalizationPlan {
  std::optional<DataType> t;
  DataType u = DataType::Float;
  float eps = 1e-5f;
  std::vector<int64_t> axes;

  bool sameType() const { return t && *t == u; }
  /// X in the stash type.
  Value *toStash(Emitter &e, Value *x) const { return sameType() ? x : e.cast(x, u); }
  /// `v` (of type U) back in T, X's type.
  Value *fromStash(Emitter &e, Value *v, Value *x) const {
    return sameType() ? v : t ? e.cast(v, *t) : e.op("CastLike", {v, x});
  }
};

/// The checks shared by the normalizations, in this order: no attribute
/// refers to a function attribute; X and the scale operand (named `scale`
/// in the refusal) are given; stash_type is a float type; T is known (from X
/// or `sameType`) or CastLike exists; the axes can be said; `ops` exist.
absl::Status planNormalization(Node &n, const ExpandContext &c, const char *scale,
                               std::initializer_list<const Value *> sameType,
                               std::initializer_list<const char *> ops, NormalizationPlan &p) {
  if (absl::Status s = noReferences(n); !s.ok()) return s;
  if (n.numOperands() < 2 || !n.operand(0) || !n.operand(1))
    return refuse(absl::StrCat("X and ", scale, " are required"));
  NodeContext nc(n);
  int64_t axis = nc.getInt("axis", -1), stash = nc.getInt("stash_type", 1);
  p.eps = nc.getFloat("epsilon", 1e-5f);
  if (!isFloatType((DataType)stash))
    return refuse(absl::StrCat("stash_type ", stash, " is not a floating-point type"));
  p.u = (DataType)stash;
  p.t = elemOf(n.operand(0));
  if (!p.t) p.t = firstElemType(sameType);
  if (!p.t && c.opset < 15)
    return refuse(absl::StrCat("the element type of X ('", n.operand(0)->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  int64_t rank = rankOf(n.operand(0));
  if (axis < 0 && c.opset >= 11) {
    for (int64_t a = axis; a < 0; ++a) p.axes.push_back(a);
  } else {
    if (rank < 0)
      return refuse(absl::StrCat("axis ", axis, " needs the rank of X ('",
                                 n.operand(0)->name().str(), "'), which is unknown",
                                 axis < 0 ? " (negative axes need opset 11)" : ""));
    int64_t first = axis < 0 ? axis + rank : axis;
    if (first < 0 || first >= rank)
      return refuse(absl::StrCat("axis ", axis, " is outside the rank ", rank, " of X"));
    for (int64_t a = first; a < rank; ++a) p.axes.push_back(a);
  }
  return requireOps(c, ops);
}

absl::Status expandLayerNormalization(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  NormalizationPlan p;
  // LayerNormalization-17: X, Scale, B and Y share T.
  if (absl::Status s = planNormalization(
          n, c, "Scale", {operandOr(n, 1), operandOr(n, 2), resultOr(n, 0)},
          {"ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Reciprocal", "Cast"}, p);
      !s.ok())
    return s;
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *xu = p.toStash(e, x);
  Value *mean = e.reduceMean(xu, p.axes);
  Value *d = e.op("Sub", {xu, mean});
  Value *var = e.reduceMean(e.op("Mul", {d, d}), p.axes);
  Value *varEps = e.op("Add", {var, e.scalar(p.eps, p.u, nullptr)});
  Value *invStdDev = e.op("Reciprocal", {e.op("Sqrt", {varEps})});
  Value *normalized = e.op("Mul", {d, invStdDev});
  Value *y = e.op("Mul", {p.fromStash(e, normalized, x), n.operand(1)});
  if (n.numOperands() > 2 && n.operand(2)) y = e.op("Add", {y, n.operand(2)});
  results = {y, mean, invStdDev};
  results.resize(n.numResults());
  return absl::OkStatus();
}

absl::Status expandRMSNormalization(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  NormalizationPlan p;
  // RMSNormalization-23: only X has T (scale and Y have V).
  if (absl::Status s = planNormalization(n, c, "scale", {},
                                         {"ReduceMean", "Mul", "Add", "Sqrt", "Reciprocal", "Cast"},
                                         p);
      !s.ok())
    return s;
  // The normalized X goes back to V, the scale's (and Y's) type, which may
  // differ from T (float16 X, float scale).
  Value *scale = n.operand(1);
  std::optional<DataType> v = firstElemType({scale, resultOr(n, 0)});
  if (!v && c.opset < 15)
    return refuse(absl::StrCat("the element type of scale ('", scale->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *xu = p.toStash(e, x);
  Value *meanSquare = e.reduceMean(e.op("Mul", {xu, xu}), p.axes);
  Value *rms = e.op("Sqrt", {e.op("Add", {meanSquare, e.scalar(p.eps, p.u, nullptr)})});
  Value *normalized = e.op("Mul", {xu, e.op("Reciprocal", {rms})});
  Value *inV = !v ? e.op("CastLike", {normalized, scale}) : *v == p.u ? normalized : e.cast(normalized, *v);
  results = {e.op("Mul", {inV, scale})};
  return absl::OkStatus();
}

absl::Status expandGelu(Node &n, ExpandContext &c, std::vector<Value *> &results) {
  if (absl::Status s = noReferences(n); !s.ok()) return s;
  if (n.numOperands() < 1 || !n.operand(0)) return refuse("X is required");
  NodeContext nc(n);
  std::string approximate = nc.getString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return refuse(absl::StrCat("approximate \"", approximate, "\" is neither \"none\" nor \"tanh\""));
  std::optional<DataType> t = firstElemType({n.operand(0), resultOr(n, 0)}); // X and Y: T
  if (!t && c.opset < 15)
    return refuse(absl::StrCat("the element type of X ('", n.operand(0)->name().str(),
                               "') is unknown, and CastLike does not exist at opset ", c.opset));
  if (t && !isFloatType(*t))
    return refuse(absl::StrCat("X has element type ", dataTypeName(*t).str(), ", not a float type"));
  absl::Status s = approximate == "none" ? requireOps(c, {"Div", "Erf", "Add", "Mul"})
                                         : requireOps(c, {"Tanh", "Add", "Mul"});
  if (!s.ok()) return s;
  if (c.checkOnly) return absl::OkStatus();
  Emitter e(n, c);
  Value *x = n.operand(0);
  Value *inner;
  if (approximate == "none") {
    inner = e.op("Erf", {e.op("Div", {x, e.scalar(std::sqrt(2.0), t, x)})});
  } else {
    Value *x3 = e.op("Mul", {e.op("Mul", {x, x}), x});
    Value *poly = e.op("Add", {x, e.op("Mul", {e.scalar(0.044715, t, x), x3})});
    inner = e.op("Tanh", {e.op("Mul", {e.scalar(std::sqrt(2.0 / M_PI), t, x), poly})});
  }
  Value *onePlus = e.op("Add", {e.scalar(1.0, t, x), inner});
  Value *halfX = e.op("Mul", {e.scalar(0.5, t, x), x});
  results = {e.op("Mul", {halfX, onePlus})};
  return absl::OkStatus();
}

} // namespace

void registerExpansions(OpRegistrar &r) {
  r["LayerNormalization"].since(17).expand(expandLayerNormalization);
  r["Gelu"].since(20).expand(expandGelu);
  r["RMSNormalization"].since(23).expand(expandRMSNormalization);
}

} // namespace onnxir
