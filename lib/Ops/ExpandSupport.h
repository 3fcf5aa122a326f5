//===- ExpandSupport.h - Helpers of the expansion builders ----------------===//
//
// What the expansion builders (Note [Expansion builders], OpRegistry.h) of
// several family files share: the checks every builder makes before it
// changes anything, and an Emitter that writes the new nodes before the node
// being expanded in the form of the opset they land at. A refusal is
// adapters::refuse (AdapterSupport.h), as for the version adapters.
//
// The builders, each in its op's section: LayerNormalization-17 and
// RMSNormalization-23 (Normalization.cpp), Gelu-20 (Elementwise.cpp), the
// fused operators whose ONNX function body is built per node, written as
// nodes of older operators. They are what down-conversion below the op's
// first version produces, so every op they use exists at opset 13 (Gelu's
// Erf from 9): ReduceMean (axes attribute below 18, operand from 18), Sub,
// Mul, Add, Sqrt, Reciprocal, Erf, Tanh, Cast (CastLike from 15 when an
// element type is unknown). Their definitions follow the ONNX operator
// documentation.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_EXPANDSUPPORT_H
#define ONNXIR_LIB_OPS_EXPANDSUPPORT_H

#include "AdapterSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <initializer_list>
#include <optional>
#include <vector>

namespace onnxir::expansions {

using adapters::refuse;

/// Every op in `ops` exists (and is not deprecated) at `opset`.
inline absl::Status requireOps(const ExpandContext &c, std::initializer_list<const char *> ops) {
  for (const char *op : ops) {
    const OpSchema *s = lookupSchema("", op, c.opset);
    if (!s || s->deprecated())
      return refuse(absl::StrCat("the expansion needs ", op, ", which does not exist at opset ",
                                 c.opset));
  }
  return absl::OkStatus();
}

/// No attribute of `n` refers to a function attribute (its value is unknown).
inline absl::Status noReferences(const Node &n) {
  for (unsigned i = 0; i < n.numAttributes(); ++i)
    if (n.attribute(i).isReference())
      return refuse(absl::StrCat("attribute '", n.attribute(i).name(),
                                 "' refers to a function attribute (inline the function first)"));
  return absl::OkStatus();
}

inline bool isFloatType(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 ||
         t == DataType::BFloat16;
}

/// The element type of the first of `vs` that has a known one (values the
/// schema gives the same type constraint).
inline std::optional<DataType> firstElemType(std::initializer_list<const Value *> vs) {
  for (const Value *v : vs)
    if (std::optional<DataType> t = elemOf(v)) return t;
  return std::nullopt;
}

inline const Value *operandOr(const Node &n, unsigned i) {
  return i < n.numOperands() ? n.operand(i) : nullptr;
}
inline const Value *resultOr(const Node &n, unsigned i) {
  return i < n.numResults() ? n.result(i) : nullptr;
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

} // namespace onnxir::expansions

#endif // ONNXIR_LIB_OPS_EXPANDSUPPORT_H
