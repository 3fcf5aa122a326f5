//===- ShapeInferenceElementwise.cpp - Elementwise, unary, reduction rules ===//
//
// Broadcasting binary and variadic ops (with the pre-opset-7 `broadcast`
// attribute form), unary ops that keep type and shape, comparisons and
// logical ops (bool results), Cast/CastLike, reductions with axes as an
// attribute or as an input, ArgMax/ArgMin, and arithmetic on shape data.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "Families.h"

namespace onnxir {
namespace infer {

namespace {

constexpr int32_t kBool = static_cast<int32_t>(DataType::Bool);
constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);

/// Operand `i` cannot broadcast with the ones before it (from `first`): a
/// constant dim of the accumulated shape comes from one earlier operand, so
/// some earlier operand clashes with it on its own; names that pair.
void reportClash(InferCtx &c, unsigned first, unsigned i) {
  auto b = c.inShape(i);
  if (!b) return;
  for (unsigned j = first; j < i; ++j) {
    auto a = c.hasInput(j) ? c.inShape(j) : std::nullopt;
    if (!a) continue;
    if (auto k = broadcastClash(*a, *b)) {
      c.disagree("input " + std::to_string(j) + " " + typeStr(c, j) +
                 " and input " + std::to_string(i) + " " + typeStr(c, i) +
                 " do not broadcast: " + std::to_string((*a)[k->first]->value()) + " (dim " +
                 std::to_string(k->first) + ") against " +
                 std::to_string((*b)[k->second]->value()) + " (dim " +
                 std::to_string(k->second) + "), neither is 1");
      return;
    }
  }
}

/// The broadcast shape of operands [first, first+count), nullopt if a rank is
/// unknown or they cannot broadcast.
std::optional<Dims> broadcastInputs(InferCtx &c, unsigned first, unsigned count) {
  std::optional<Dims> acc = Dims{};
  for (unsigned i = first; i < first + count; ++i) {
    if (!c.hasInput(i)) continue;
    auto s = c.inShape(i);
    if (!s) return std::nullopt;
    acc = broadcast(c.ctx, *acc, *s);
    if (!acc) {
      reportClash(c, first, i);
      return std::nullopt;
    }
  }
  return acc;
}

/// Elementwise data for Add/Sub/Mul/Div/Mod/Max/Min on shape tensors.
void propagateArith(InferCtx &c, llvm::StringRef op) {
  const Dims *a = c.inData(0), *b = c.inData(1);
  if (!a || !b) return;
  auto sa = c.inShape(0), sb = c.inShape(1);
  if (!sa || !sb || sa->size() > 1 || sb->size() > 1) return;
  size_t n = std::max(a->size(), b->size());
  if (a->size() != n && a->size() != 1) return;
  if (b->size() != n && b->size() != 1) return;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *x = (*a)[a->size() == 1 ? 0 : i], *y = (*b)[b->size() == 1 ? 0 : i];
    const DimExpr *r = nullptr;
    if (x && y) {
      if (op == "Add") r = dimAdd(c.ctx, x, y);
      else if (op == "Sub") r = dimSub(c.ctx, x, y);
      else if (op == "Mul") r = dimMul(c.ctx, x, y);
      else if (op == "Div") {
        // Integer Div truncates; floor is the same for non-negative values,
        // which shape arithmetic on sizes is; only fold constants otherwise.
        if (x->isConstant() && y->isConstant() && y->value() != 0)
          r = dimConst(c.ctx, x->value() / y->value());
        else if (y->isConstant() && y->value() > 0 && c.inElem(0) == kInt64)
          r = dimFloorDiv(c.ctx, x, y);
      } else if (op == "Mod") {
        if (c.getInt("fmod", 0) == 0) r = dimMod(c.ctx, x, y);
      } else if (op == "Max") r = dimMax(c.ctx, {x, y});
      else if (op == "Min") r = dimMin(c.ctx, {x, y});
    }
    out.push_back(r);
  }
  c.setOutData(0, std::move(out));
}

/// Comparisons and logic on shape data give 0/1 data (bool tensors).
void propagateCompare(InferCtx &c, llvm::StringRef op) {
  const Dims *a = c.inData(0), *b = c.inData(1);
  if (!a || !b) return;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *x = (*a)[a->size() == 1 ? 0 : i], *y = (*b)[b->size() == 1 ? 0 : i];
    const DimExpr *r = nullptr;
    if (x && y) {
      const DimExpr *d = dimSub(c.ctx, x, y);
      if (d && d->isConstant()) {
        int64_t v = d->value();
        bool t = op == "Equal" ? v == 0 : op == "Less" ? v < 0 : op == "Greater" ? v > 0
               : op == "LessOrEqual" ? v <= 0 : v >= 0;
        if (op == "And" || op == "Or" || op == "Xor") {
          if (!x->isConstant() || !y->isConstant()) {
            out.push_back(nullptr);
            continue;
          }
          bool p = x->value() != 0, q = y->value() != 0;
          t = op == "And" ? (p && q) : op == "Or" ? (p || q) : (p != q);
        }
        r = c.c(t ? 1 : 0);
      }
    }
    out.push_back(r);
  }
  c.setOutData(0, std::move(out));
}

void binary(InferCtx &c, int32_t outElem, llvm::StringRef op) {
  int32_t el = outElem ? outElem : c.inElem(0);
  if (el < 0) el = c.inElem(1);
  if (c.opset < 7 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
                      op == "And" || op == "Or" || op == "Xor" || op == "Equal" ||
                      op == "Less" || op == "Greater" || op == "PRelu")) {
    // The legacy form: B is broadcast onto A when `broadcast` is set,
    // otherwise both have A's shape.
    c.setTensor(0, el, c.inShape(0));
    return;
  }
  c.setTensor(0, el, broadcastInputs(c, 0, 2));
  if (op != "") propagateArith(c, op);
}

void variadic(InferCtx &c) {
  int32_t el = -1;
  for (unsigned i = 0; i < c.numInputs() && el < 0; ++i) el = c.inElem(i);
  if (c.opset < 8 && c.numInputs() > 1) {
    // Before opset 8 the inputs of Sum/Max/Min/Mean have equal shapes.
    for (unsigned i = 0; i < c.numInputs(); ++i)
      if (auto s = c.inShape(i)) return c.setTensor(0, el, s);
    return c.setTensor(0, el, std::nullopt);
  }
  c.setTensor(0, el, broadcastInputs(c, 0, c.numInputs()));
  if (c.numInputs() == 2 && (c.node.opType() == "Max" || c.node.opType() == "Min"))
    propagateArith(c, c.node.opType());
}

void sameAsInput(InferCtx &c) { c.setTensor(0, c.inElem(0), c.inShape(0)); }

/// The 1-D per-channel operands [first, last] of a normalization have the
/// channel count (dim 1) of X.
void checkChannelOperands(InferCtx &c, unsigned first, unsigned last, const char *const *names) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return;
  auto ch = staticDim((*x)[1]);
  if (!ch) return;
  for (unsigned i = first; i <= last; ++i) {
    auto s = c.hasInput(i) ? c.inShape(i) : std::nullopt;
    if (!s || s->size() != 1) continue;
    if (auto v = staticDim((*s)[0]); v && *v != *ch) {
      c.disagree("input X " + typeStr(c, 0) + " has " +
                 std::to_string(*ch) + " channels (dim 1), but " + names[i - first] + " " +
                 typeStr(c, i) + " has " + std::to_string(*v));
      return;
    }
  }
}

void reduce(InferCtx &c, bool argReduce) {
  int32_t el = argReduce ? kInt64 : c.inElem(0);
  auto shape = c.inShape(0);
  bool keep = c.getInt("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  bool axesUnknown = false;
  if (argReduce) {
    axes = std::vector<int64_t>{c.getInt("axis", 0)};
  } else {
    llvm::StringRef op = c.node.opType();
    bool axesInput = op == "ReduceSum" ? c.opset >= 13 : c.opset >= 18;
    if (axesInput) {
      if (c.hasInput(1)) {
        axes = c.inInts(1);
        axesUnknown = !axes;
      }
    } else {
      axes = c.getInts("axes");
    }
    if (!axesUnknown && (!axes || axes->empty()) && c.getInt("noop_with_empty_axes", 0)) {
      c.setTensor(0, el, shape);
      return;
    }
  }
  if (!shape) return c.setTensor(0, el, std::nullopt);
  int64_t r = shape->size();
  if (axesUnknown) {
    if (keep) return c.setTensor(0, el, Dims(r, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  std::vector<bool> red(r, !axes || axes->empty());
  if (axes)
    for (int64_t a : *axes) {
      auto n = normAxis(a, r);
      if (!n) return;
      red[*n] = true;
    }
  Dims out;
  for (int64_t i = 0; i < r; ++i) {
    if (!red[i]) out.push_back((*shape)[i]);
    else if (keep) out.push_back(c.c(1));
  }
  c.setTensor(0, el, out);
}

} // namespace

void addElementwiseRules(OpRegistrar &r) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Mod"})
    r[op] = [op](InferCtx &c) { binary(c, 0, op); };
  for (const char *op : {"Pow", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    r[op] = [op](InferCtx &c) {
      int32_t el = c.inElem(0);
      if (el < 0) return;
      (void)op;
      binary(c, el, "");
    };
  for (const char *op : {"And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual",
                         "GreaterOrEqual"})
    r[op] = [op](InferCtx &c) {
      binary(c, kBool, "");
      propagateCompare(c, op);
    };
  for (const char *op : {"Sum", "Max", "Min", "Mean"}) r[op] = variadic;
  r["Where"] = [](InferCtx &c) {
    int32_t el = c.inElem(1);
    if (el < 0) el = c.inElem(2);
    c.setTensor(0, el, broadcastInputs(c, 0, 3));
  };

  for (const char *op :
       {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor",
        "Ceil", "Round", "Sign", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
        "Cosh", "Asinh", "Acosh", "Atanh", "LeakyRelu", "Elu", "Selu", "HardSigmoid",
        "HardSwish", "Softplus", "Softsign", "Mish", "Gelu", "Celu", "ThresholdedRelu", "Clip",
        "Softmax", "LogSoftmax", "Hardmax", "LRN", "InstanceNormalization",
        "MeanVarianceNormalization", "Shrink", "CumSum", "ReverseSequence", "Trilu",
        "BitwiseNot", "Scatter", "ScatterElements", "ScatterND", "GroupNormalization",
        "Swish", "Binarizer", "Det"})
    r[op] = sameAsInput;
  r["InstanceNormalization"] = [](InferCtx &c) {
    static const char *const names[] = {"scale", "B"};
    checkChannelOperands(c, 1, 2, names);
    sameAsInput(c);
  };
  r["Det"] = [](InferCtx &c) {
    auto s = c.inShape(0);
    if (s && s->size() >= 2) s->resize(s->size() - 2);
    c.setTensor(0, c.inElem(0), s);
  };
  r["Identity"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (t) c.setOutType(0, t);
    if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
  };
  r["Not"] = [](InferCtx &c) {
    sameAsInput(c);
    if (const Dims *d = c.inData(0)) {
      Dims o;
      for (const DimExpr *e : *d)
        o.push_back(e && e->isConstant() ? c.c(e->value() == 0) : nullptr);
      c.setOutData(0, o);
    }
  };
  r["IsNaN"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["IsInf"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["Dropout"] = [](InferCtx &c) {
    sameAsInput(c);
    if (c.hasOutput(1)) c.setTensor(1, c.opset >= 12 ? kBool : c.inElem(0), c.inShape(0));
  };
  r["BatchNormalization"] = [](InferCtx &c) {
    static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
    checkChannelOperands(c, 1, 4, names);
    sameAsInput(c);
    // Running statistics (training mode) have the shape of the scale.
    for (unsigned i = 1; i < c.numOutputs() && i < 5; ++i)
      if (c.opset >= 14 && i <= 2) c.setTensor(i, c.inElem(3), c.inShape(3));
  };
  r["LayerNormalization"] = [](InferCtx &c) {
    sameAsInput(c);
    auto s = c.inShape(0);
    if (!s) return;
    auto ax = normAxis(c.getInt("axis", -1), s->size());
    if (!ax) return;
    for (size_t i = *ax; i < s->size(); ++i) (*s)[i] = c.c(1);
    int32_t st = (int32_t)c.getInt("stash_type", 1);
    for (unsigned i = 1; i < 3; ++i) c.setTensor(i, st, s);
  };
  r["Cast"] = [](InferCtx &c) {
    int64_t to = c.getInt("to", -1);
    if (to <= 0) return;
    c.setTensor(0, (int32_t)to, c.inShape(0));
    if (const Dims *d = c.inData(0)) {
      if (to == kInt64 || to == static_cast<int32_t>(DataType::Int32)) {
        c.setOutData(0, *d);
      } else if (to == kBool) {
        Dims o;
        for (const DimExpr *e : *d)
          o.push_back(e && e->isConstant() ? c.c(e->value() != 0) : nullptr);
        c.setOutData(0, o);
      }
    }
  };
  r["CastLike"] = [](InferCtx &c) {
    c.setTensor(0, c.inElem(1), c.inShape(0));
    if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
  };
  for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                         "ReduceSumSquare"})
    r[op] = [](InferCtx &c) { reduce(c, false); };
  r["ArgMax"] = [](InferCtx &c) { reduce(c, true); };
  r["ArgMin"] = [](InferCtx &c) { reduce(c, true); };
  r["QuantizeLinear"] = [](InferCtx &c) {
    int32_t el = c.hasInput(2) ? c.inElem(2) : static_cast<int32_t>(DataType::Uint8);
    if (int64_t od = c.getInt("output_dtype", 0)) el = (int32_t)od;
    c.setTensor(0, el, c.inShape(0));
  };
  r["DequantizeLinear"] = [](InferCtx &c) {
    int32_t el = c.opset >= 19 ? c.inElem(1) : static_cast<int32_t>(DataType::Float);
    if (int64_t od = c.getInt("output_dtype", 0)) el = (int32_t)od;
    c.setTensor(0, el, c.inShape(0));
  };
  r["DynamicQuantizeLinear"] = [](InferCtx &c) {
    c.setTensor(0, static_cast<int32_t>(DataType::Uint8), c.inShape(0));
    c.setTensor(1, static_cast<int32_t>(DataType::Float), Dims{});
    c.setTensor(2, static_cast<int32_t>(DataType::Uint8), Dims{});
  };
}

} // namespace infer
} // namespace onnxir
