//===- ShapeInferenceShapeOps.cpp - Shape, data movement and shape data ---===//
//
// Shape/Size and the ops that carry shape data (Gather, Slice, Concat,
// Squeeze, Unsqueeze, Range, ConstantOfShape, Reshape, Expand, Tile), and
// the data-movement ops (Transpose, Flatten, Split, Pad, Resize, TopK, ...),
// each in its attribute and input forms across opset versions.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "Families.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Tensor.h"

namespace onnxir {
namespace infer {

namespace {

constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);
/// Ranks read from data beyond this are not believed (a hostile file could
/// declare a shape tensor of 2^40 elements).
constexpr int64_t kMaxRank = 4096;

/// The value of a known dim within [0, limit], else nullopt.
std::optional<int64_t> smallDim(const DimExpr *e, int64_t limit = kMaxRank) {
  if (!e || !e->isConstant() || e->value() < 0 || e->value() > limit) return std::nullopt;
  return e->value();
}

const DimExpr *product(Context &ctx, const Dims &d, size_t from, size_t to) {
  const DimExpr *p = dimConst(ctx, 1);
  for (size_t i = from; i < to && i < d.size(); ++i) p = dimMul(ctx, p, d[i]);
  return p;
}

/// Ints from an attribute (older opsets) or an input (newer ones).
std::optional<std::vector<int64_t>> intsFrom(InferCtx &c, bool fromInput, unsigned input,
                                             llvm::StringRef attr) {
  if (fromInput) return c.hasInput(input) ? c.inInts(input) : std::nullopt;
  return c.getInts(attr);
}

void shapeRule(InferCtx &c) {
  auto s = c.inShape(0);
  if (!s) return c.setTensor(0, kInt64, Dims{nullptr});
  int64_t r = s->size();
  int64_t start = c.getInt("start", 0), end = c.getInt("end", r);
  auto clampAxis = [&](int64_t a) {
    if (a < 0) a += r;
    return std::max<int64_t>(0, std::min(a, r));
  };
  start = clampAxis(start);
  end = clampAxis(end);
  Dims data;
  for (int64_t i = start; i < end; ++i) data.push_back((*s)[i]);
  c.setTensor(0, kInt64, Dims{c.c((int64_t)data.size())});
  c.setOutData(0, std::move(data));
}

void sizeRule(InferCtx &c) {
  c.setTensor(0, kInt64, Dims{});
  if (auto s = c.inShape(0)) c.setOutData(0, Dims{product(c.ctx, *s, 0, s->size())});
}

void concatRule(InferCtx &c) {
  int32_t el = -1;
  std::optional<Dims> out;
  int64_t axisAttr = c.getInt("axis", c.opset < 4 ? 1 : 0);
  int64_t axis = -1;
  bool rankKnown = false;
  unsigned first = 0;
  // Per dim, the first input with a known static size there.
  std::vector<int> staticFrom;
  bool reported = false;
  for (unsigned i = 0; i < c.numInputs(); ++i) {
    if (el < 0) el = c.inElem(i);
    auto s = c.inShape(i);
    if (!s) {
      continue;
    }
    if (!rankKnown) {
      auto a = normAxis(axisAttr, s->size());
      if (!a) return;
      axis = *a;
      rankKnown = true;
      first = i;
      staticFrom.assign(s->size(), -1);
      out = Dims(s->size(), nullptr);
      for (size_t k = 0; k < s->size(); ++k) (*out)[k] = (*s)[k];
      (*out)[axis] = c.c(0);
    } else if (s->size() != out->size()) {
      c.disagree("input " + std::to_string(first) + " " + typeStr(c, first) +
                 " has rank " + std::to_string(out->size()) + " but input " + std::to_string(i) +
                 " " + typeStr(c, i) + " has rank " + std::to_string(s->size()));
      return;
    }
    for (size_t k = 0; k < s->size(); ++k) {
      if ((int64_t)k == axis) continue;
      if (auto y = staticDim((*s)[k])) {
        int j = staticFrom[k];
        if (j < 0) {
          staticFrom[k] = (int)i;
        } else if (auto x = staticDim((*c.inShape(j))[k]); x && *x != *y && !reported) {
          reported = true;
          c.disagree("input " + std::to_string(j) + " " + typeStr(c, j) + " has " +
                     std::to_string(*x) + " at dim " + std::to_string(k) + " but input " +
                     std::to_string(i) + " " + typeStr(c, i) + " has " + std::to_string(*y) +
                     " (the axis is " + std::to_string(axis) + ")");
        }
      }
      const DimExpr *x = (*out)[k], *y = (*s)[k];
      if (!x) (*out)[k] = y;
      else if (x && y && x != y && x->isConstant() && !y->isConstant()) {
      } else if (x && y && x != y && !x->isConstant() && y->isConstant()) (*out)[k] = y;
    }
  }
  // The concatenated dim needs every input's shape.
  if (rankKnown) {
    // From the first input's dim, not from 0: each addition costs the size
    // of its operands (Note [Dim expression size limit]).
    const DimExpr *sum = nullptr;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      auto s = c.inShape(i);
      if (!s || !(*s)[axis]) {
        sum = nullptr;
        break;
      }
      sum = i == 0 ? (*s)[axis] : dimAdd(c.ctx, sum, (*s)[axis]);
    }
    (*out)[axis] = c.numInputs() ? sum : c.c(0);
  }
  c.setTensor(0, el, out);
  // Data: concatenation of 1-D shape tensors.
  if (rankKnown && out->size() == 1) {
    Dims data;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      const Dims *d = c.inData(i);
      if (!d) {
        auto s = c.inShape(i);
        auto k = s ? smallDim((*s)[0], 64) : std::nullopt;
        if (!k) return;
        data.insert(data.end(), *k, nullptr);
        continue;
      }
      data.insert(data.end(), d->begin(), d->end());
    }
    c.setOutData(0, std::move(data));
  }
}

void gatherRule(InferCtx &c) {
  auto d = c.inShape(0), ix = c.inShape(1);
  int32_t el = c.inElem(0);
  if (!d || !ix) return c.setTensor(0, el, std::nullopt);
  auto ax = normAxis(c.getInt("axis", 0), d->size());
  if (!ax) return;
  Dims out(d->begin(), d->begin() + *ax);
  out.insert(out.end(), ix->begin(), ix->end());
  out.insert(out.end(), d->begin() + *ax + 1, d->end());
  c.setTensor(0, el, out);
  const Dims *data = c.inData(0);
  auto idx = c.inInts(1);
  if (data && idx && d->size() == 1 && ix->size() <= 1) {
    Dims r;
    int64_t n = data->size();
    for (int64_t i : *idx) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return;
      r.push_back((*data)[i]);
    }
    c.setOutData(0, std::move(r));
  }
}

/// True if `e` cannot be negative (symbols stand for sizes).
bool nonNeg(const DimExpr *e) {
  if (!e) return false;
  switch (e->kind()) {
  case DimExpr::Kind::Constant:
    return e->value() >= 0;
  case DimExpr::Kind::Symbol:
    return true;
  case DimExpr::Kind::Add:
    if (e->value() < 0) return false;
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  case DimExpr::Kind::Mul:
    if (e->value() < 0) return false;
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  case DimExpr::Kind::FloorDiv:
  case DimExpr::Kind::Mod:
    return nonNeg(e->operands()[0]) && nonNeg(e->operands()[1]);
  case DimExpr::Kind::Min:
  case DimExpr::Kind::Max:
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  }
  return false;
}

/// A Slice bound clamped the way the operator does it, symbolic if need be.
const DimExpr *clampIndex(Context &ctx, const DimExpr *v, const DimExpr *dim, int64_t step) {
  if (!dim || !v) return nullptr;
  const DimExpr *zero = dimConst(ctx, 0);
  if (v->isConstant()) {
    int64_t x = v->value();
    if (step > 0 && x >= 0) {
      if (x == 0) return zero;
      if (x >= ((int64_t)1 << 31) && !dim->isConstant()) return dim;
      return dimMin(ctx, {v, dim});
    }
    if (step < 0 && x >= ((int64_t)1 << 31)) return dimSub(ctx, dim, dimConst(ctx, 1));
    if (step < 0 && x <= -((int64_t)1 << 31)) return dimConst(ctx, -1);
    if (step > 0 && x <= -((int64_t)1 << 31)) return zero;
    const DimExpr *e = x < 0 ? dimAdd(ctx, dim, v) : v;
    if (step > 0) return dimMax(ctx, {e, zero});
    return dimMin(ctx, {dimMax(ctx, {e, dimConst(ctx, -1)}), dimSub(ctx, dim, dimConst(ctx, 1))});
  }
  // A symbolic bound: non-negative ones are used as they are.
  if (!nonNeg(v)) return nullptr;
  if (step > 0) return dimMin(ctx, {v, dim});
  return dimMin(ctx, {v, dimSub(ctx, dim, dimConst(ctx, 1))});
}

/// The values of a constant int operand read directly, INT64_MIN included
/// (shape data has no DimExpr for it).
std::optional<std::vector<int64_t>> constantInts(InferCtx &c, unsigned i) {
  const Tensor *t = c.inConstant(i);
  if (!t || t->dims().size() > 1) return std::nullopt;
  if (t->dataType() == DataType::Int64) {
    auto v = t->values<int64_t>();
    if (v.ok()) return std::vector<int64_t>(v->begin(), v->end());
  } else if (t->dataType() == DataType::Int32) {
    auto v = t->values<int32_t>();
    if (v.ok()) return std::vector<int64_t>(v->begin(), v->end());
  }
  return std::nullopt;
}

void sliceRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  if (!s) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size();
  bool inputs = c.opset >= 10;
  std::optional<Dims> starts, ends;
  if (inputs) {
    if (const Dims *d = c.inData(1)) starts = *d;
    if (const Dims *d = c.inData(2)) ends = *d;
    // INT64_MIN has no DimExpr (its entry is null); as a bound it clamps
    // like INT64_MIN + 1 does, so a constant one is read as that.
    auto fillMin = [&](std::optional<Dims> &b, unsigned i) {
      if (!b) return;
      std::optional<std::vector<int64_t>> v;
      for (size_t k = 0; k < b->size(); ++k) {
        if ((*b)[k]) continue;
        if (!v) v = constantInts(c, i);
        if (v && v->size() == b->size() && (*v)[k] == INT64_MIN) (*b)[k] = c.c(INT64_MIN + 1);
      }
    };
    fillMin(starts, 1);
    fillMin(ends, 2);
  } else {
    auto toDims = [&](llvm::StringRef n) -> std::optional<Dims> {
      auto v = c.getInts(n);
      if (!v) return std::nullopt;
      Dims d;
      for (int64_t x : *v) d.push_back(c.c(x == INT64_MIN ? INT64_MIN + 1 : x)); // as above
      return d;
    };
    starts = toDims("starts");
    ends = toDims("ends");
  }
  std::optional<std::vector<int64_t>> axes, steps;
  bool axesGiven = inputs ? c.hasInput(3) : c.getInts("axes").has_value();
  bool stepsGiven = inputs && c.hasInput(4);
  if (axesGiven) axes = intsFrom(c, inputs, 3, "axes");
  if (stepsGiven) steps = c.inInts(4);
  if (stepsGiven && !steps) steps = constantInts(c, 4);
  if (!starts || !ends || (axesGiven && !axes) || (stepsGiven && !steps)) {
    // Which axes change is unknown (or their bounds are): the rank stays.
    Dims out(r, nullptr);
    if (axes && !stepsGiven) {
      out = *s;
      for (int64_t a : *axes) {
        auto n = normAxis(a, r);
        if (!n) return;
        out[*n] = nullptr;
      }
    }
    return c.setTensor(0, el, out);
  }
  size_t k = starts->size();
  if (ends->size() != k) return;
  if (!axes) {
    axes = std::vector<int64_t>(k);
    for (size_t i = 0; i < k; ++i) (*axes)[i] = i;
  }
  if (!steps) steps = std::vector<int64_t>(k, 1);
  if (axes->size() != k || steps->size() != k) return;
  Dims out = *s;
  for (size_t i = 0; i < k; ++i) {
    auto ax = normAxis((*axes)[i], r);
    int64_t st = (*steps)[i];
    if (!ax || st == 0) return;
    const DimExpr *dim = (*s)[*ax];
    const DimExpr *b = clampIndex(c.ctx, (*starts)[i], dim, st);
    const DimExpr *e = clampIndex(c.ctx, (*ends)[i], dim, st);
    const DimExpr *len = nullptr;
    // |step|; INT64_MIN's (2^63) is not an int64, but a span is at most
    // INT64_MAX, and ceil(span / 2^63) == ceil(span / (2^63 - 1)) there.
    int64_t ast = st > 0 ? st : (st == INT64_MIN ? INT64_MAX : -st);
    if (b && e) {
      const DimExpr *span = st > 0 ? dimSub(c.ctx, e, b) : dimSub(c.ctx, b, e);
      if (span && span->isConstant()) {
        // The count as the kernel computes it: never span + step - 1.
        int64_t n = span->value();
        len = c.c(n > 0 ? (n - 1) / ast + 1 : 0);
      } else if (span) {
        if (!nonNeg(span)) span = dimMax(c.ctx, {span, c.c(0)});
        // (DimExpr arithmetic is checked: an overflow gives an unknown dim.)
        len = dimCeilDiv(c.ctx, span, c.c(ast));
      }
    }
    out[*ax] = len;
  }
  c.setTensor(0, el, out);
  const Dims *data = c.inData(0);
  if (data && r == 1 && k == 1 && (*starts)[0] && (*ends)[0] && (*starts)[0]->isConstant() &&
      (*ends)[0]->isConstant()) {
    int64_t n = data->size(), st = (*steps)[0];
    int64_t b = (*starts)[0]->value(), e = (*ends)[0]->value();
    if (b < 0) b = b < -n ? -n - 1 : b + n;
    if (e < 0) e = e < -n ? -n - 1 : e + n;
    Dims res;
    // Stepping by counting, not by i += st (which overflows for huge steps).
    if (st > 0) {
      b = std::max<int64_t>(0, std::min(b, n));
      e = std::max<int64_t>(0, std::min(e, n));
      for (int64_t i = b; i < e; i = e - i > st ? i + st : e) res.push_back((*data)[i]);
    } else {
      uint64_t ast = 0 - (uint64_t)st;
      b = std::max<int64_t>(-1, std::min(b, n - 1));
      e = std::max<int64_t>(-1, std::min(e, n - 1));
      for (int64_t i = b; i > e; i = (uint64_t)(i - e) > ast ? i - (int64_t)ast : e)
        res.push_back((*data)[i]);
    }
    c.setOutData(0, std::move(res));
  }
}

void squeezeRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  std::optional<std::vector<int64_t>> axes;
  bool axesGiven = c.opset >= 13 ? c.hasInput(1) : c.getInts("axes").has_value();
  if (axesGiven) {
    axes = intsFrom(c, c.opset >= 13, 1, "axes");
    if (!axes) return c.setTensor(0, el, std::nullopt);
  }
  if (!s) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size();
  std::vector<bool> drop(r, false);
  if (axes) {
    for (int64_t a : *axes) {
      auto n = normAxis(a, r);
      if (!n) return;
      drop[*n] = true;
    }
  } else {
    for (int64_t i = 0; i < r; ++i) {
      const DimExpr *d = (*s)[i];
      if (!d || !d->isConstant()) return c.setTensor(0, el, std::nullopt);
      drop[i] = d->value() == 1;
    }
  }
  Dims out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back((*s)[i]);
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

void unsqueezeRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  auto axes = intsFrom(c, c.opset >= 13, 1, "axes");
  if (!s || !axes) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size() + axes->size();
  std::vector<bool> ins(r, false);
  for (int64_t a : *axes) {
    auto n = normAxis(a, r);
    if (!n || ins[*n]) return;
    ins[*n] = true;
  }
  Dims out;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(ins[i] ? c.c(1) : (*s)[j++]);
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

void reshapeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::optional<Dims> target;
  if (c.opset < 5) {
    if (auto sh = c.getInts("shape")) {
      target = Dims{};
      for (int64_t v : *sh) target->push_back(c.c(v));
    }
  } else if (const Dims *d = c.inData(1)) {
    target = *d;
  }
  if (!target) {
    auto ss = c.inShape(1);
    if (auto k = ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
      return c.setTensor(0, el, Dims(*k, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  auto in = c.inShape(0);
  bool allowZero = c.getInt("allowzero", 0) != 0;
  Dims out;
  int64_t minusOne = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const DimExpr *d = (*target)[i];
    if (d && d->isConstant() && d->value() == 0 && !allowZero) {
      d = in && i < in->size() ? (*in)[i] : nullptr;
    } else if (d && d->isConstant() && d->value() == -1) {
      if (minusOne >= 0) return;
      minusOne = i;
      d = nullptr;
    } else if (d && d->isConstant() && d->value() < -1) {
      return;
    }
    out.push_back(d);
  }
  // Known static sizes that cannot hold the same number of elements.
  if (in) {
    // Products of static dims, -1 once one is not static or grows too big.
    auto product = [](const Dims &ds, int64_t skip) -> __int128 {
      __int128 p = 1;
      for (size_t i = 0; i < ds.size(); ++i) {
        if ((int64_t)i == skip) continue;
        auto v = staticDim(ds[i]);
        if (!v || *v < 0) return -1;
        p *= *v;
        if (p > ((__int128)1 << 62)) return -1;
      }
      return p;
    };
    __int128 total = product(*in, -1), held = product(out, minusOne);
    if (total >= 0 && held >= 0 &&
        (minusOne < 0 ? total != held : held != 0 && total % held != 0)) {
      std::string shape;
      for (size_t i = 0; i < target->size(); ++i) {
        auto v = staticDim((*target)[i]);
        shape += (i ? "," : "") + (v ? std::to_string(*v) : std::string("?"));
      }
      c.disagree("data " + typeStr(c, 0) + " has " + std::to_string((int64_t)total) +
                 " elements, which shape [" + shape + "] cannot hold (" +
                 (minusOne < 0 ? "it has " + std::to_string((int64_t)held) + " elements"
                               : std::to_string((int64_t)total) + " is not a multiple of the " +
                                     std::to_string((int64_t)held) + " the other dims hold") +
                 ")");
    }
  }
  if (minusOne >= 0 && in) {
    const DimExpr *total = product(c.ctx, *in, 0, in->size());
    const DimExpr *rest = c.c(1);
    for (size_t i = 0; i < out.size(); ++i)
      if ((int64_t)i != minusOne) rest = dimMul(c.ctx, rest, out[i]);
    if (total && rest && !(rest->isConstant() && rest->value() == 0))
      out[minusOne] = dimFloorDiv(c.ctx, total, rest);
  }
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

void expandRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  const Dims *shape = c.inData(1);
  if (!shape || !in) {
    auto ss = c.inShape(1);
    if (auto k = in && ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
      return c.setTensor(0, el, Dims(std::max<int64_t>(*k, in->size()), nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  auto out = broadcast(c.ctx, *in, *shape);
  if (!out) return;
  c.setTensor(0, el, out);
}

void tileRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  auto reps = c.inData(1);
  if (!in) return c.setTensor(0, el, std::nullopt);
  if (!reps || reps->size() != in->size()) return c.setTensor(0, el, Dims(in->size(), nullptr));
  Dims out;
  for (size_t i = 0; i < in->size(); ++i) out.push_back(dimMul(c.ctx, (*in)[i], (*reps)[i]));
  c.setTensor(0, el, out);
}

void transposeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  auto perm = c.getInts("perm");
  int64_t r = in->size();
  std::vector<int64_t> p(r);
  if (perm) {
    if ((int64_t)perm->size() != r) return;
    p = *perm;
  } else {
    for (int64_t i = 0; i < r; ++i) p[i] = r - 1 - i;
  }
  Dims out;
  std::vector<bool> seen(r, false);
  for (int64_t a : p) {
    auto n = normAxis(a, r);
    if (!n || seen[*n]) return;
    seen[*n] = true;
    out.push_back((*in)[*n]);
  }
  c.setTensor(0, el, out);
}

void flattenRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, Dims{nullptr, nullptr});
  int64_t r = in->size();
  int64_t ax = c.getInt("axis", 1);
  if (ax < 0) ax += r;
  if (ax < 0 || ax > r) return;
  c.setTensor(0, el, Dims{product(c.ctx, *in, 0, ax), product(c.ctx, *in, ax, r)});
}

void splitRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  unsigned n = c.numOutputs();
  if (!in) {
    for (unsigned i = 0; i < n; ++i) c.setTensor(i, el, std::nullopt);
    return;
  }
  auto ax = normAxis(c.getInt("axis", 0), in->size());
  if (!ax) return;
  std::optional<std::vector<int64_t>> split;
  bool splitGiven;
  if (c.opset >= 13) {
    splitGiven = c.hasInput(1);
    if (splitGiven) split = c.inInts(1);
  } else {
    split = c.getInts("split");
    splitGiven = split.has_value();
    if (!splitGiven && c.opset == 2 && c.hasInput(1)) {
      splitGiven = true;
      split = c.inInts(1);
    }
  }
  const DimExpr *dim = (*in)[*ax];
  std::vector<const DimExpr *> sizes(n, nullptr);
  if (splitGiven) {
    if (split) {
      if (split->size() != n) return;
      for (unsigned i = 0; i < n; ++i) sizes[i] = c.c((*split)[i]);
    }
  } else if (int64_t parts = c.getInt("num_outputs", 0); parts > 0 || n > 0) {
    int64_t k = parts > 0 ? parts : n;
    if (dim) {
      // Equal parts (ceil), the last one possibly smaller (opset 18).
      const DimExpr *chunk = dimCeilDiv(c.ctx, dim, c.c(k));
      for (unsigned i = 0; i < n; ++i)
        sizes[i] = i + 1 < n ? chunk : dimSub(c.ctx, dim, dimMul(c.ctx, chunk, c.c(n - 1)));
      if (dim->isConstant() && dim->value() % k == 0)
        for (unsigned i = 0; i < n; ++i) sizes[i] = c.c(dim->value() / k);
      else if (!dim->isConstant() && c.opset < 18)
        for (unsigned i = 0; i < n; ++i) sizes[i] = dimFloorDiv(c.ctx, dim, c.c(k));
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    Dims o = *in;
    o[*ax] = sizes[i];
    c.setTensor(i, el, o);
  }
}

void constantRule(InferCtx &c) {
  const Attribute *a = nullptr;
  const char *n = nullptr;
  for (const char *name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings", "sparse_value"})
    if ((a = c.attr(n = name))) break;
  if (!a) return;
  if (llvm::StringRef(n) == "sparse_value") { // its type only: not densified here
    if (a->kind() != AttrKind::SparseTensor || a->sparseTensors.empty()) return;
    const SparseTensor &t = *a->sparseTensors[0];
    Dims d;
    for (int64_t x : t.dims) d.push_back(c.c(x));
    return c.setTensor(0, t.values.dataTypeRaw(), d);
  }
  Tensor scratch;
  auto v = decodeConstantAttr(n, *a, scratch); // Note [Constant values]
  if (!v.ok()) return;
  const Tensor &t = **v;
  Dims d;
  for (int64_t x : t.dims()) d.push_back(c.c(x));
  c.setTensor(0, t.dataTypeRaw(), d);
  if (auto data = tensorData(c.ctx, t)) c.setOutData(0, *data);
}

void constantOfShapeRule(InferCtx &c) {
  int32_t el = static_cast<int32_t>(DataType::Float);
  if (const Attribute *a = c.attr("value"); a && !a->tensors.empty())
    el = a->tensors[0]->dataTypeRaw();
  if (const Dims *d = c.inData(0)) {
    c.setTensor(0, el, *d);
    if (d->size() == 1 && el == kInt64)
      if (const Attribute *a = c.attr("value"); a && !a->tensors.empty())
        if (auto v = tensorData(c.ctx, *a->tensors[0]); v && v->size() == 1)
          if (auto k = smallDim((*d)[0], 64)) c.setOutData(0, Dims(*k, (*v)[0]));
    return;
  }
  auto ss = c.inShape(0);
  if (auto k = ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
    return c.setTensor(0, el, Dims(*k, nullptr));
  c.setTensor(0, el, std::nullopt);
}

void rangeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  const Dims *s = c.inData(0), *l = c.inData(1), *d = c.inData(2);
  const DimExpr *n = nullptr;
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 && (*d)[0] &&
      (*d)[0]->isConstant() && (*d)[0]->value() != 0 && (*d)[0]->value() != INT64_MIN) {
    int64_t delta = (*d)[0]->value();
    const DimExpr *diff = dimSub(c.ctx, (*l)[0], (*s)[0]);
    if (delta > 0) n = dimMax(c.ctx, {dimCeilDiv(c.ctx, diff, c.c(delta)), c.c(0)});
    else n = dimMax(c.ctx, {dimCeilDiv(c.ctx, dimNeg(c.ctx, diff), c.c(-delta)), c.c(0)});
    if (auto k = smallDim(n, 64); k && (*s)[0] && (*s)[0]->isConstant()) {
      Dims data;
      for (int64_t i = 0; i < *k; ++i)
        data.push_back(dimAdd(c.ctx, (*s)[0], dimMul(c.ctx, c.c(i), c.c(delta))));
      c.setOutData(0, data);
    }
  }
  c.setTensor(0, el, Dims{n});
}

void padRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  int64_t r = in->size();
  auto pads = c.opset >= 11 ? (c.hasInput(1) ? c.inInts(1) : std::nullopt)
                            : c.getInts(c.opset < 2 ? "paddings" : "pads");
  std::optional<std::vector<int64_t>> axes;
  if (c.opset >= 18 && c.hasInput(3)) {
    axes = c.inInts(3);
    if (!axes) return c.setTensor(0, el, Dims(r, nullptr));
  }
  if (!pads) return c.setTensor(0, el, Dims(r, nullptr));
  if (!axes) {
    axes = std::vector<int64_t>(r);
    for (int64_t i = 0; i < r; ++i) (*axes)[i] = i;
  }
  size_t k = axes->size();
  if (pads->size() != 2 * k) return;
  Dims out = *in;
  for (size_t i = 0; i < k; ++i) {
    auto ax = normAxis((*axes)[i], r);
    if (!ax) return;
    out[*ax] = dimAdd(c.ctx, out[*ax], dimAdd(c.ctx, c.c((*pads)[i]), c.c((*pads)[i + k])));
  }
  c.setTensor(0, el, out);
}

void resizeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  int64_t r = in->size();
  bool isUpsample = c.node.opType() == "Upsample";
  // Inputs: Resize-10 / Upsample-9 (X, scales); Resize-11+ (X, roi, scales, sizes).
  unsigned scalesIdx = (c.opset >= 11 && !isUpsample) ? 2 : 1;
  unsigned sizesIdx = 3;
  std::optional<std::vector<int64_t>> axes = c.getInts("axes");
  auto axisList = [&]() {
    std::vector<int64_t> a;
    if (axes) {
      for (int64_t x : *axes) {
        auto n = normAxis(x, r);
        if (!n) return std::vector<int64_t>{};
        a.push_back(*n);
      }
    } else {
      for (int64_t i = 0; i < r; ++i) a.push_back(i);
    }
    return a;
  };
  std::vector<int64_t> ax = axisList();
  if (ax.empty() && r > 0) return;
  if (!isUpsample && c.opset >= 11 && c.hasInput(sizesIdx)) {
    const Dims *sz = c.inData(sizesIdx);
    if (!sz || sz->size() != ax.size()) return c.setTensor(0, el, Dims(r, nullptr));
    Dims out = *in;
    for (size_t i = 0; i < ax.size(); ++i) out[ax[i]] = (*sz)[i];
    return c.setTensor(0, el, out);
  }
  std::optional<std::vector<float>> scales;
  if (isUpsample && c.opset < 9) {
    if (const Attribute *a = c.attr("scales")) scales = a->floats;
  } else if (c.hasInput(scalesIdx)) {
    // Scales are float data; only constants give them.
    if (const Tensor *t = c.inConstant(scalesIdx); t && t->dataType() == DataType::Float)
      if (auto v = t->values<float>(); v.ok()) scales = *v;
    // Cropping resizes the roi, not the whole input.
    if (c.getString("coordinate_transformation_mode", "") == "tf_crop_and_resize")
      scales = std::nullopt;
  }
  if (!scales || scales->size() != ax.size()) return c.setTensor(0, el, Dims(r, nullptr));
  Dims out = *in;
  for (size_t i = 0; i < ax.size(); ++i) {
    const DimExpr *d = (*in)[ax[i]];
    if (!d || !d->isConstant()) {
      out[ax[i]] = (*scales)[i] == 1.0f ? d : nullptr;
      continue;
    }
    double v = std::floor((double)d->value() * (*scales)[i]);
    out[ax[i]] = v >= 0 && v < (double)((int64_t)1 << 40) ? c.c((int64_t)v) : nullptr;
  }
  c.setTensor(0, el, out);
}

} // namespace

std::optional<Dims> tensorData(Context &ctx, const Tensor &t) {
  DataType dt = t.dataType();
  if (dt != DataType::Int64 && dt != DataType::Int32) return std::nullopt;
  if (t.dims().size() > 1) return std::nullopt;
  auto n = t.numElements();
  if (!n || *n > 64) return std::nullopt;
  Dims d;
  if (dt == DataType::Int64) {
    auto vals = t.values<int64_t>();
    if (!vals.ok() || (int64_t)vals->size() != *n) return std::nullopt;
    for (int64_t x : *vals) d.push_back(dimConst(ctx, x));
  } else {
    auto vals = t.values<int32_t>();
    if (!vals.ok() || (int64_t)vals->size() != *n) return std::nullopt;
    for (int32_t x : *vals) d.push_back(dimConst(ctx, x));
  }
  return d;
}

void addShapeRules(OpRegistrar &r) {
  r["Shape"] = shapeRule;
  r["Size"] = sizeRule;
  r["Concat"] = concatRule;
  r["Gather"] = gatherRule;
  r["Slice"] = sliceRule;
  r["Squeeze"] = squeezeRule;
  r["Unsqueeze"] = unsqueezeRule;
  r["Reshape"] = reshapeRule;
  r["Expand"] = expandRule;
  r["Tile"] = tileRule;
  r["Transpose"] = transposeRule;
  r["Flatten"] = flattenRule;
  r["Split"] = splitRule;
  r["Constant"] = constantRule;
  r["ConstantOfShape"] = constantOfShapeRule;
  r["Range"] = rangeRule;
  r["Pad"] = padRule;
  r["Resize"] = resizeRule;
  r["Upsample"] = resizeRule;
  r["GatherElements"] = [](InferCtx &c) { c.setTensor(0, c.inElem(0), c.inShape(1)); };
  r["NonZero"] = [](InferCtx &c) {
    // A scalar input gives one row, like a 1-D input (see kNonZero).
    int64_t rank = c.inRank(0);
    c.setTensor(0, kInt64, Dims{rank >= 0 ? c.c(std::max<int64_t>(rank, 1)) : nullptr, nullptr});
  };
  r["TopK"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    if (!in) {
      c.setTensor(0, c.inElem(0), std::nullopt);
      c.setTensor(1, kInt64, std::nullopt);
      return;
    }
    auto ax = normAxis(c.getInt("axis", -1), in->size());
    if (!ax) return;
    const DimExpr *k = nullptr;
    if (c.opset < 10) k = c.c(c.getInt("k", 0));
    else if (const Dims *d = c.inData(1); d && d->size() == 1) k = (*d)[0];
    (*in)[*ax] = k;
    c.setTensor(0, c.inElem(0), in);
    c.setTensor(1, kInt64, in);
  };
  r["OneHot"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int32_t el = c.inElem(2);
    if (!in) return c.setTensor(0, el, std::nullopt);
    int64_t rr = in->size() + 1;
    auto ax = normAxis(c.getInt("axis", -1), rr);
    if (!ax) return;
    const DimExpr *depth = nullptr;
    if (const Dims *d = c.inData(1); d && d->size() == 1) depth = (*d)[0];
    in->insert(in->begin() + *ax, depth);
    c.setTensor(0, el, in);
  };
  r["EyeLike"] = [](InferCtx &c) {
    int64_t dt = c.getInt("dtype", 0);
    c.setTensor(0, dt ? (int32_t)dt : c.inElem(0), c.inShape(0));
  };
  for (const char *op : {"RandomNormal", "RandomUniform"})
    r[op] = [](InferCtx &c) {
      auto sh = c.getInts("shape");
      if (!sh) return;
      Dims d;
      for (int64_t x : *sh) d.push_back(c.c(x));
      c.setTensor(0, (int32_t)c.getInt("dtype", 1), d);
    };
  for (const char *op : {"RandomNormalLike", "RandomUniformLike", "Bernoulli"})
    r[op] = [](InferCtx &c) {
      int64_t dt = c.getInt("dtype", 0);
      c.setTensor(0, dt ? (int32_t)dt : c.inElem(0), c.inShape(0));
    };
  r["DepthToSpace"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int64_t b = c.getInt("blocksize", 0);
    if (!in || in->size() != 4 || b <= 0) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (b > (1 << 20)) return;
    Dims o = {(*in)[0], dimFloorDiv(c.ctx, (*in)[1], c.c(b * b)), dimMul(c.ctx, (*in)[2], c.c(b)),
              dimMul(c.ctx, (*in)[3], c.c(b))};
    c.setTensor(0, c.inElem(0), o);
  };
  r["SpaceToDepth"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int64_t b = c.getInt("blocksize", 0);
    if (!in || in->size() != 4 || b <= 0) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (b > (1 << 20)) return;
    Dims o = {(*in)[0], dimMul(c.ctx, (*in)[1], c.c(b * b)), dimFloorDiv(c.ctx, (*in)[2], c.c(b)),
              dimFloorDiv(c.ctx, (*in)[3], c.c(b))};
    c.setTensor(0, c.inElem(0), o);
  };
  r["NonMaxSuppression"] = [](InferCtx &c) { c.setTensor(0, kInt64, Dims{nullptr, c.c(3)}); };
  r["Compress"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    const Attribute *a = c.attr("axis");
    if (!in) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (!a) return c.setTensor(0, c.inElem(0), Dims{nullptr});
    auto ax = normAxis(a->i, in->size());
    if (!ax) return;
    (*in)[*ax] = nullptr;
    c.setTensor(0, c.inElem(0), in);
  };
  r["GatherND"] = [](InferCtx &c) {
    auto d = c.inShape(0), ix = c.inShape(1);
    if (!d || !ix || ix->empty()) return c.setTensor(0, c.inElem(0), std::nullopt);
    const DimExpr *last = ix->back();
    int64_t b = c.getInt("batch_dims", 0);
    if (!last || !last->isConstant()) return c.setTensor(0, c.inElem(0), std::nullopt);
    int64_t k = last->value();
    if (b + k > (int64_t)d->size()) return;
    Dims o(ix->begin(), ix->end() - 1);
    o.insert(o.end(), d->begin() + b + k, d->end());
    c.setTensor(0, c.inElem(0), o);
  };
}

} // namespace infer
} // namespace onnxir
