//===- ShapeInferenceMisc.cpp - Losses, sequences, optionals, sampling ----===//
//
// NegativeLogLikelihoodLoss/SoftmaxCrossEntropyLoss, sequence and optional
// ops, GridSample, RoiAlign, TfIdfVectorizer, MaxUnpool, DFT, and the
// ai.onnx.preview.training optimizers (results typed like their inputs).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "Families.h"

namespace onnxir {
namespace infer {

namespace {

constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);
constexpr int32_t kBool = static_cast<int32_t>(DataType::Bool);

const Type *tensorType(Context &ctx, int32_t elem, const std::optional<Dims> &d) {
  if (elem <= 0) return nullptr;
  if (!d) return ctx.getTensorType(static_cast<DataType>(elem), std::nullopt);
  std::vector<Dim> ds;
  for (const DimExpr *e : *d) ds.push_back(ctx.dimOf(e));
  return ctx.getTensorType(static_cast<DataType>(elem), llvm::ArrayRef<Dim>(ds));
}

/// The loss result: the target's shape without reduction, else a scalar.
void lossRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::string red = c.getString("reduction", "mean");
  if (red == "none") c.setTensor(0, el, c.inShape(1));
  else c.setTensor(0, el, Dims{});
  if (c.node.opType() == "SoftmaxCrossEntropyLoss" && c.hasOutput(1))
    c.setTensor(1, el, c.inShape(0));
}

/// Element-wise join of two tensor types for a sequence: equal dims stay.
const Type *joinTensor(Context &ctx, const Type *a, const Type *b) {
  if (!a) return b;
  if (!b || a == b) return a;
  if (!a->isTensor() || !b->isTensor() || !a->hasElemType() || !b->hasElemType() ||
      a->elemTypeRaw() != b->elemTypeRaw())
    return nullptr;
  std::optional<Dims> d;
  if (a->hasShape() && b->hasShape() && a->rank() == b->rank()) {
    d = Dims{};
    for (size_t i = 0; i < a->dims().size(); ++i) {
      const DimExpr *x = ctx.exprOf(a->dims()[i]), *y = ctx.exprOf(b->dims()[i]);
      d->push_back(x == y ? x : nullptr);
    }
  }
  return tensorType(ctx, a->elemTypeRaw(), d);
}

const Type *seqElem(const Type *t) {
  return t && t->kind() == Type::Kind::Sequence ? t->elementType() : nullptr;
}

} // namespace

void addMiscRules(OpRegistrar &r) {
  r["NegativeLogLikelihoodLoss"] = lossRule;
  r["SoftmaxCrossEntropyLoss"] = lossRule;
  r["GridSample"] = [](InferCtx &c) {
    auto x = c.inShape(0), g = c.inShape(1);
    if (!x || !g || x->size() < 3 || g->size() != x->size())
      return c.setTensor(0, c.inElem(0), x ? std::optional<Dims>(Dims(x->size(), nullptr)) : std::nullopt);
    Dims o = {(*x)[0], (*x)[1]};
    o.insert(o.end(), g->begin() + 1, g->end() - 1);
    c.setTensor(0, c.inElem(0), o);
  };
  r["RoiAlign"] = [](InferCtx &c) {
    auto x = c.inShape(0), rois = c.inShape(1);
    const DimExpr *n = rois && rois->size() == 2 ? (*rois)[0] : nullptr;
    const DimExpr *ch = x && x->size() == 4 ? (*x)[1] : nullptr;
    c.setTensor(0, c.inElem(0),
                Dims{n, ch, c.c(c.getInt("output_height", 1)), c.c(c.getInt("output_width", 1))});
  };
  r["TfIdfVectorizer"] = [](InferCtx &c) {
    auto idx = c.getInts("ngram_indexes");
    auto in = c.inShape(0);
    if (!idx || idx->empty() || !in) return;
    int64_t mx = *std::max_element(idx->begin(), idx->end());
    if (mx < 0 || mx >= ((int64_t)1 << 40)) return;
    Dims o;
    if (in->size() == 2) o.push_back((*in)[0]);
    else if (in->size() != 1) return;
    o.push_back(c.c(mx + 1));
    c.setTensor(0, static_cast<int32_t>(DataType::Float), o);
  };
  r["MaxUnpool"] = [](InferCtx &c) {
    auto x = c.inShape(0);
    int32_t el = c.inElem(0);
    if (c.hasInput(2)) {
      if (const Dims *d = c.inData(2)) return c.setTensor(0, el, *d);
      return c.setTensor(0, el, x ? std::optional<Dims>(Dims(x->size(), nullptr)) : std::nullopt);
    }
    auto k = c.getInts("kernel_shape");
    if (!x || !k || x->size() != k->size() + 2) return c.setTensor(0, el, std::nullopt);
    size_t n = k->size();
    auto st = c.getInts("strides").value_or(std::vector<int64_t>(n, 1));
    auto pads = c.getInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
    if (st.size() != n || pads.size() != 2 * n) return;
    Dims o = {(*x)[0], (*x)[1]};
    for (size_t i = 0; i < n; ++i) {
      if (st[i] <= 0 || st[i] > (1 << 30) || (*k)[i] > (1 << 30) || pads[i] > (1 << 30) ||
          pads[i + n] > (1 << 30) || pads[i] < 0 || pads[i + n] < 0)
        return;
      o.push_back(dimAdd(c.ctx, dimMul(c.ctx, dimSub(c.ctx, (*x)[i + 2], c.c(1)), c.c(st[i])),
                         c.c((*k)[i] - pads[i] - pads[i + n])));
    }
    c.setTensor(0, el, o);
  };
  // DFT-17 (axis attribute, default 1) and DFT-20 (axis input, default -2).
  // The last dim is 2 (complex) except for the inverse one-sided form (IRFFT,
  // real output: 1). The axis dim becomes dft_length when given (RFFT:
  // floor(dft_length / 2) + 1); without it RFFT gives floor(n / 2) + 1,
  // IRFFT 2 * (n - 1), the others keep n. An axis input whose value is
  // unknown leaves every dim unknown where the axis dim could change
  // (one-sided or dft_length), else only the last dim changes.
  r["DFT"] = [](InferCtx &c) {
    auto x = c.inShape(0);
    int32_t el = c.inElem(0);
    if (!x || x->size() < 2) return c.setTensor(0, el, std::nullopt);
    int64_t rank = x->size();
    bool onesided = c.getInt("onesided", 0) != 0, inverse = c.getInt("inverse", 0) != 0;
    bool irfft = onesided && inverse, rfft = onesided && !inverse;
    const DimExpr *last = c.c(irfft ? 1 : 2);
    Dims o = *x;
    o.back() = last;
    int64_t axis;
    if (c.opset >= 20) {
      if (c.hasInput(2)) {
        auto a = c.inInts(2);
        if (!a || a->size() != 1) {
          if (onesided || c.hasInput(1)) o.assign(rank, nullptr);
          o.back() = last;
          return c.setTensor(0, el, o);
        }
        axis = (*a)[0];
      } else {
        axis = -2;
      }
    } else {
      axis = c.getInt("axis", 1);
    }
    if (axis < -rank || axis == -1 || axis >= rank - 1) return; // invalid
    int64_t ax = axis < 0 ? axis + rank : axis;
    const DimExpr *n = (*x)[ax];
    if (c.hasInput(1)) {
      const Dims *d = c.inData(1);
      const DimExpr *len = d && d->size() == 1 ? (*d)[0] : nullptr;
      o[ax] = rfft && len ? dimAdd(c.ctx, dimFloorDiv(c.ctx, len, c.c(2)), c.c(1)) : len;
    } else if (rfft) {
      o[ax] = n ? dimAdd(c.ctx, dimFloorDiv(c.ctx, n, c.c(2)), c.c(1)) : nullptr;
    } else if (irfft) {
      o[ax] = n ? dimMul(c.ctx, c.c(2), dimSub(c.ctx, n, c.c(1))) : nullptr;
    }
    c.setTensor(0, el, o);
  };
  // Optionals.
  r["OptionalHasElement"] = [](InferCtx &c) { c.setTensor(0, kBool, Dims{}); };
  r["OptionalGetElement"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (!t) return;
    c.setOutType(0, t->kind() == Type::Kind::Optional ? t->elementType() : t);
  };
  r["Optional"] = [](InferCtx &c) {
    const Type *t = c.hasInput(0) ? c.inType(0) : nullptr;
    if (!t)
      if (const Attribute *a = c.attr("type"); a && !a->types.empty()) t = a->types[0];
    if (t) c.setOutType(0, c.ctx.getOptionalType(t));
  };
  // Sequences.
  r["SequenceEmpty"] = [](InferCtx &c) {
    int32_t el = (int32_t)c.getInt("dtype", static_cast<int32_t>(DataType::Float));
    c.setOutType(0, c.ctx.getSequenceType(tensorType(c.ctx, el, std::nullopt)));
  };
  r["SequenceConstruct"] = [](InferCtx &c) {
    const Type *acc = nullptr;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      const Type *t = c.inType(i);
      if (!t) return;
      acc = i == 0 ? t : joinTensor(c.ctx, acc, t);
      if (!acc) return;
    }
    if (acc) c.setOutType(0, c.ctx.getSequenceType(acc));
  };
  r["SequenceInsert"] = [](InferCtx &c) {
    const Type *e = seqElem(c.inType(0)), *t = c.inType(1);
    const Type *j = e && t ? joinTensor(c.ctx, e, t) : nullptr;
    if (j) c.setOutType(0, c.ctx.getSequenceType(j));
  };
  r["SequenceErase"] = [](InferCtx &c) {
    if (const Type *t = c.inType(0); t && t->kind() == Type::Kind::Sequence) c.setOutType(0, t);
  };
  r["SequenceAt"] = [](InferCtx &c) {
    if (const Type *e = seqElem(c.inType(0))) c.setOutType(0, e);
  };
  r["SequenceLength"] = [](InferCtx &c) { c.setTensor(0, kInt64, Dims{}); };
  r["SplitToSequence"] = [](InferCtx &c) {
    auto x = c.inShape(0);
    int32_t el = c.inElem(0);
    if (el < 0) return;
    std::optional<Dims> d;
    if (x) {
      auto ax = normAxis(c.getInt("axis", 0), x->size());
      if (!ax) return;
      d = *x;
      if (!c.hasInput(1) && !c.getInt("keepdims", 1)) d->erase(d->begin() + *ax);
      else if (!c.hasInput(1)) (*d)[*ax] = c.c(1);
      else (*d)[*ax] = nullptr;
    }
    c.setOutType(0, c.ctx.getSequenceType(tensorType(c.ctx, el, d)));
  };
  r["ConcatFromSequence"] = [](InferCtx &c) {
    const Type *e = seqElem(c.inType(0));
    if (!e || !e->isTensor() || !e->hasElemType()) return;
    if (!e->hasShape()) return c.setTensor(0, e->elemTypeRaw(), std::nullopt);
    int64_t r = e->rank() + (c.getInt("new_axis", 0) ? 1 : 0);
    auto ax = normAxis(c.getInt("axis", 0), r);
    if (!ax) return;
    Dims d;
    for (const Dim &x : e->dims()) d.push_back(c.ctx.exprOf(x));
    if (c.getInt("new_axis", 0)) d.insert(d.begin() + *ax, nullptr);
    else d[*ax] = nullptr;
    c.setTensor(0, e->elemTypeRaw(), d);
  };
}

void addTrainingRules(OpRegistrar &r) {
  // Optimizer results are typed like the tensors they update: Adagrad
  // (R, T, X..., G..., H...) -> (X_new..., H_new...), Momentum likewise with
  // V, Adam (R, T, X..., G..., V..., H...) -> (X_new..., V_new..., H_new...).
  auto optimizer = [](unsigned groups, std::vector<unsigned> outGroups) {
    return [groups, outGroups](InferCtx &c) {
      if (c.numInputs() < 2 || (c.numInputs() - 2) % groups) return;
      unsigned n = (c.numInputs() - 2) / groups;
      for (unsigned k = 0; k < outGroups.size(); ++k)
        for (unsigned i = 0; i < n; ++i)
          if (const Type *t = c.inType(2 + outGroups[k] * n + i)) c.setOutType(k * n + i, t);
    };
  };
  r["Adagrad"] = optimizer(3, {0, 2});
  r["Momentum"] = optimizer(3, {0, 2});
  r["Adam"] = optimizer(4, {0, 2, 3});
}

} // namespace infer
} // namespace onnxir
