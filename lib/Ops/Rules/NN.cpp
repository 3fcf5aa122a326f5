//===- ShapeInferenceNN.cpp - Conv, pooling, matmul and recurrent rules ---===//
//
// Output sizes of Conv/ConvTranspose/pools with pads, strides, dilations,
// auto_pad and ceil_mode, symbolic too; MatMul (numpy rules), Gemm with
// transposes; RNN/GRU/LSTM result shapes.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "Families.h"

namespace onnxir {
namespace infer {

namespace {

constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string autoPad;
};

/// Reads the window attributes for `n` spatial dims; kernel from `kernelFrom`
/// (the weight shape) when the attribute is absent. False if inconsistent.
bool readWindow(InferCtx &c, size_t n, const std::optional<Dims> &weight, Window &w) {
  if (auto k = c.getInts("kernel_shape")) w.kernel = *k;
  else if (weight && weight->size() == n + 2) {
    for (size_t i = 0; i < n; ++i) {
      const DimExpr *d = (*weight)[i + 2];
      if (!d || !d->isConstant()) return false;
      w.kernel.push_back(d->value());
    }
  } else {
    return false;
  }
  w.strides = c.getInts("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = c.getInts("dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = c.getInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  w.autoPad = c.getString("auto_pad", "NOTSET");
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n ||
      w.pads.size() != 2 * n)
    return false;
  // Bounds that keep the window arithmetic below far from overflow.
  constexpr int64_t kMax = (int64_t)1 << 30;
  for (size_t i = 0; i < n; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0 || w.strides[i] > kMax ||
        w.dilations[i] > kMax || w.kernel[i] > kMax)
      return false;
  for (int64_t p : w.pads)
    if (p < -kMax || p > kMax) return false;
  return true;
}

/// Spatial output sizes of a convolution or pooling window.
std::optional<Dims> windowOut(InferCtx &c, const Dims &in, const Window &w, bool ceilMode) {
  Dims out;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    const DimExpr *x = in[i + 2];
    int64_t s = w.strides[i], ek = w.dilations[i] * (w.kernel[i] - 1) + 1;
    const DimExpr *o = nullptr;
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
      o = dimCeilDiv(c.ctx, x, c.c(s));
    } else if (w.autoPad == "VALID") {
      o = dimCeilDiv(c.ctx, dimSub(c.ctx, x, c.c(ek - 1)), c.c(s));
    } else if (w.autoPad == "NOTSET") {
      const DimExpr *span = dimAdd(c.ctx, x, c.c(w.pads[i] + w.pads[i + w.kernel.size()] - ek));
      o = dimAdd(c.ctx, ceilMode ? dimCeilDiv(c.ctx, span, c.c(s)) : dimFloorDiv(c.ctx, span, c.c(s)),
                 c.c(1));
      // A window larger than the padded input (a negative static span):
      // ONNX's reference inference and onnxruntime divide truncating toward
      // zero, so a span above -stride still gives one output, not zero.
      if (!ceilMode && span && span->isConstant() && span->value() < 0)
        o = c.c(span->value() / s + 1);
      // With ceil_mode, a last window starting in the end padding is dropped.
      if (ceilMode && o && o->isConstant() && x && x->isConstant() &&
          (__int128)(o->value() - 1) * s >= (__int128)x->value() + w.pads[i])
        o = c.c(o->value() - 1);
    } else {
      return std::nullopt;
    }
    if (o && o->isConstant() && o->value() < 0) return std::nullopt;
    out.push_back(o);
  }
  return out;
}

void convRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  if (c.node.opType() == "ConvInteger") el = static_cast<int32_t>(DataType::Int32);
  if (c.node.opType() == "QLinearConv") el = c.inElem(7);
  unsigned wIdx = c.node.opType() == "QLinearConv" ? 3 : 1;
  auto x = c.inShape(0), w = c.inShape(wIdx);
  // X and W have the same rank.
  if (!x && w) x = Dims(w->size(), nullptr);
  if (!x || x->size() < 3) return c.setTensor(0, el, std::nullopt);
  size_t n = x->size() - 2;
  // X has group * W's input channels.
  if (c.node.opType() == "Conv" && w && w->size() == x->size() && (*x)[1] && (*w)[1] &&
      (*x)[1]->isConstant() && (*w)[1]->isConstant()) {
    int64_t group = c.getInt("group", 1);
    if (group > 0 && (*x)[1]->value() != (*w)[1]->value() * group)
      c.disagree("input X has " + std::to_string((*x)[1]->value()) + " channels, but W has " +
                 std::to_string((*w)[1]->value()) + " per group and group is " +
                 std::to_string(group));
  }
  Window win;
  if (!readWindow(c, n, w, win)) return c.setTensor(0, el, Dims(x->size(), nullptr));
  auto sp = windowOut(c, *x, win, false);
  if (!sp) return;
  Dims out = {(*x)[0], w && w->size() == n + 2 ? (*w)[0] : nullptr};
  out.insert(out.end(), sp->begin(), sp->end());
  c.setTensor(0, el, out);
}

void poolRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x || x->size() < 3) {
    c.setTensor(0, el, std::nullopt);
    if (c.hasOutput(1)) c.setTensor(1, kInt64, std::nullopt);
    return;
  }
  size_t n = x->size() - 2;
  Window win;
  if (!readWindow(c, n, std::nullopt, win)) return;
  auto sp = windowOut(c, *x, win, c.getInt("ceil_mode", 0) != 0);
  if (!sp) return;
  Dims out = {(*x)[0], (*x)[1]};
  out.insert(out.end(), sp->begin(), sp->end());
  c.setTensor(0, el, out);
  if (c.hasOutput(1)) c.setTensor(1, kInt64, out);
}

void globalPoolRule(InferCtx &c) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return c.setTensor(0, c.inElem(0), std::nullopt);
  Dims out = {(*x)[0], (*x)[1]};
  out.resize(x->size(), c.c(1));
  c.setTensor(0, c.inElem(0), out);
}

void convTransposeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0), w = c.inShape(1);
  if (!x && w) x = Dims(w->size(), nullptr);
  if (!x || x->size() < 3) return c.setTensor(0, el, std::nullopt);
  size_t n = x->size() - 2;
  int64_t group = c.getInt("group", 1);
  // X has as many channels as W's first dim.
  if (w && w->size() == x->size()) {
    auto xc = staticDim((*x)[1]), wc = staticDim((*w)[0]);
    if (xc && wc && *xc != *wc)
      c.disagree("input X has " + std::to_string(*xc) + " channels, but W " + typeStr(c, 1) +
                 " has " + std::to_string(*wc) + " input channels (its dim 0)");
  }
  const DimExpr *ch =
      w && w->size() == n + 2 && group > 0 ? dimMul(c.ctx, (*w)[1], c.c(group)) : nullptr;
  Window win;
  if (!readWindow(c, n, w, win)) return c.setTensor(0, el, Dims(x->size(), nullptr));
  Dims out = {(*x)[0], ch};
  if (auto os = c.getInts("output_shape")) {
    if (os->size() != n) return;
    for (int64_t v : *os) out.push_back(c.c(v));
    return c.setTensor(0, el, out);
  }
  auto op = c.getInts("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (op.size() != n) return;
  for (int64_t p : op)
    if (p < -((int64_t)1 << 30) || p > ((int64_t)1 << 30)) return;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *xi = (*x)[i + 2];
    int64_t s = win.strides[i], ek = win.dilations[i] * (win.kernel[i] - 1) + 1;
    if (win.autoPad == "SAME_UPPER" || win.autoPad == "SAME_LOWER") {
      out.push_back(dimMul(c.ctx, xi, c.c(s)));
    } else {
      int64_t pads = win.autoPad == "VALID" ? 0 : win.pads[i] + win.pads[i + n];
      out.push_back(dimAdd(c.ctx, dimMul(c.ctx, dimSub(c.ctx, xi, c.c(1)), c.c(s)),
                           c.c(op[i] + ek - pads)));
    }
  }
  c.setTensor(0, el, out);
}

void matmulRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  llvm::StringRef op = c.node.opType();
  unsigned bIdx = 1;
  if (op == "MatMulInteger") el = static_cast<int32_t>(DataType::Int32);
  if (op == "QLinearMatMul") {
    el = c.inElem(7);
    bIdx = 3;
  }
  auto a = c.inShape(0), b = c.inShape(bIdx);
  if (!a || !b || a->empty() || b->empty()) return c.setTensor(0, el, std::nullopt);
  Dims aa = *a, bb = *b;
  bool aVec = aa.size() == 1, bVec = bb.size() == 1;
  if (aVec) aa.insert(aa.begin(), c.c(1));
  if (bVec) bb.push_back(c.c(1));
  // A's last dim and B's second-to-last (K) agree.
  size_t ka = a->size() - 1, kb = bVec ? 0 : b->size() - 2;
  auto kA = staticDim((*a)[ka]), kB = staticDim((*b)[kb]);
  if (kA && kB && *kA != *kB)
    c.disagree("A has K = " + std::to_string(*kA) + " (dim " + std::to_string(ka) +
               " of " + typeStr(c, 0) + ") but B has K = " + std::to_string(*kB) + " (dim " +
               std::to_string(kb) + " of " + typeStr(c, bIdx) + ")");
  Dims ab(aa.begin(), aa.end() - 2), bbat(bb.begin(), bb.end() - 2);
  auto batch = broadcast(c.ctx, ab, bbat);
  if (!batch) {
    if (auto k = broadcastClash(ab, bbat))
      c.disagree("the batch dims of A " + typeStr(c, 0) + " and B " +
                 typeStr(c, bIdx) + " do not broadcast: " +
                 std::to_string(ab[k->first]->value()) + " (dim " + std::to_string(k->first) +
                 " of A) against " + std::to_string(bbat[k->second]->value()) + " (dim " +
                 std::to_string(k->second) + " of B), neither is 1");
    return;
  }
  Dims out = *batch;
  if (!aVec) out.push_back(aa[aa.size() - 2]);
  if (!bVec) out.push_back(bb.back());
  c.setTensor(0, el, out);
}

void gemmRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto a = c.inShape(0), b = c.inShape(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) return c.setTensor(0, el, std::nullopt);
  bool ta = c.getInt("transA", 0) != 0, tb = c.getInt("transB", 0) != 0;
  const DimExpr *m = ta ? (*a)[1] : (*a)[0];
  const DimExpr *n = tb ? (*b)[0] : (*b)[1];
  // K of op(A) and of op(B) agree.
  size_t ka = ta ? 0 : 1, kb = tb ? 1 : 0;
  auto kA = staticDim((*a)[ka]), kB = staticDim((*b)[kb]);
  if (kA && kB && *kA != *kB)
    c.disagree("A has K = " + std::to_string(*kA) + " (dim " + std::to_string(ka) + " of " +
               typeStr(c, 0) + (ta ? ", transA = 1" : "") + ") but B has K = " +
               std::to_string(*kB) + " (dim " + std::to_string(kb) + " of " + typeStr(c, 1) +
               (tb ? ", transB = 1" : "") + ")");
  // C broadcasts (one way) to (M, N).
  if (auto cs = c.hasInput(2) ? c.inShape(2) : std::nullopt) {
    Dims mn = {m, n};
    std::string why;
    if (cs->size() > 2) {
      why = "has rank " + std::to_string(cs->size());
    } else {
      for (size_t k = 1; k <= cs->size() && why.empty(); ++k) {
        auto x = staticDim((*cs)[cs->size() - k]), y = staticDim(mn[2 - k]);
        if (x && y && *x != 1 && *x != *y)
          why = "has " + std::to_string(*x) + " at dim " + std::to_string(cs->size() - k) +
                " where " + (k == 1 ? "N" : "M") + " is " + std::to_string(*y);
      }
    }
    if (!why.empty())
      c.disagree("C " + typeStr(c, 2) + " does not broadcast to the (M, N) result: it " + why);
  }
  c.setTensor(0, el, Dims{m, n});
}

void rnnRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  int64_t hidden = c.getInt("hidden_size", 0);
  std::string dir = c.getString("direction", "forward");
  int64_t numDir = dir == "bidirectional" ? 2 : 1;
  int64_t layout = c.getInt("layout", 0);
  const DimExpr *h = hidden > 0 ? c.c(hidden) : nullptr;
  if (!h) {
    // From R: [num_directions, gates*hidden, hidden].
    auto r = c.inShape(2);
    if (r && r->size() == 3) h = (*r)[2];
  }
  const DimExpr *seq = nullptr, *batch = nullptr;
  if (x && x->size() == 3) {
    seq = layout ? (*x)[1] : (*x)[0];
    batch = layout ? (*x)[0] : (*x)[1];
  }
  const DimExpr *nd = c.c(numDir);
  if (layout) {
    c.setTensor(0, el, Dims{batch, seq, nd, h});
    c.setTensor(1, el, Dims{batch, nd, h});
    c.setTensor(2, el, Dims{batch, nd, h});
  } else {
    c.setTensor(0, el, Dims{seq, nd, batch, h});
    c.setTensor(1, el, Dims{nd, batch, h});
    c.setTensor(2, el, Dims{nd, batch, h});
  }
}

} // namespace

void addNNRules(OpRegistrar &r) {
  r["Conv"] = convRule;
  r["ConvInteger"] = convRule;
  r["QLinearConv"] = convRule;
  r["DeformConv"] = convRule; // X, W, offset, ...: sizes as Conv
  r["ConvTranspose"] = convTransposeRule;
  for (const char *op : {"MaxPool", "AveragePool", "LpPool"}) r[op] = poolRule;
  for (const char *op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
    r[op] = globalPoolRule;
  r["MatMul"] = matmulRule;
  r["MatMulInteger"] = matmulRule;
  r["QLinearMatMul"] = matmulRule;
  r["Gemm"] = gemmRule;
  for (const char *op : {"RNN", "GRU", "LSTM"}) r[op] = rnnRule;
}

} // namespace infer
} // namespace onnxir
