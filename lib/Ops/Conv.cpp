//===- Conv.cpp - Convolution and pooling ---------------------------------===//
//
// Conv: Conv ConvTranspose DeformConv, the quantized ConvInteger QLinearConv,
// MaxPool AveragePool LpPool, GlobalAveragePool GlobalMaxPool GlobalLpPool,
// MaxUnpool, Col2Im. The convolutions and pools share the window attributes
// (kernel_shape, strides, dilations, pads, auto_pad) and their output sizes.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace onnxir {
namespace {
using namespace infer;

//===--- Window attributes (Conv, ConvTranspose, the pools) ---===//

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

//===--- Conv, ConvInteger, QLinearConv, DeformConv ---===//

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

//===--- ConvTranspose ---===//

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

//===--- MaxPool, AveragePool, LpPool ---===//

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

absl::Status refuse(std::string why) { return absl::FailedPreconditionError(std::move(why)); }

// MaxPool-10, AveragePool-10 and -19, LpPool-18 added ceil_mode or dilations.
absl::Status poolDown(Node &n, AdapterContext &c, llvm::StringRef op) {
  return adapters::olderFormOnly(n, c, op, {{"ceil_mode", AttrKind::Int, 0},
                                            {"dilations", AttrKind::Ints, 1}});
}
// AveragePool-7 added count_include_pad (default 0: the old behaviour).
absl::Status averagePoolDown7(Node &n, AdapterContext &c) {
  auto cip = adapters::intAttrOr(n, "count_include_pad", 0);
  if (!cip.ok()) return cip.status();
  if (*cip)
    return refuse(absl::StrCat("count_include_pad=", *cip, ": opset ", c.to,
                               " never counts the padding in the average"));
  if (!c.checkOnly) n.removeAttr("count_include_pad");
  return absl::OkStatus();
}

// MaxPool-8 added the Indices result and storage_order (which only concerns
// Indices).
absl::Status maxPoolDown8(Node &n, AdapterContext &c) {
  if (auto so = adapters::intAttrOr(n, "storage_order", 0); !so.ok()) return so.status();
  if (absl::Status s = adapters::noNewOperands(n, c); !s.ok() || c.checkOnly) return s;
  n.removeAttr("storage_order");
  return absl::OkStatus();
}

// LpPool-2 and GlobalLpPool-2: p became an int (default 2 in both); LpPool-2
// also requires kernel_shape.
absl::Status lpPoolUp2(Node &n, AdapterContext &c) {
  if (n.opType() == "LpPool" && !n.getAttr("kernel_shape"))
    return refuse("no 'kernel_shape', which opset 2 requires");
  Attribute *p = n.getAttr("p");
  if (!p) return absl::OkStatus();
  if (p->isReference())
    return refuse(absl::StrCat("attribute 'p' refers to the function attribute '",
                               p->refAttrName.get(), "'; opset 2 needs an int"));
  if (p->kind() != AttrKind::Float || std::floor(p->f) != p->f || p->f < 1 || p->f > 1e9)
    return refuse(absl::StrCat("p=", p->kind() == AttrKind::Float ? p->f : 0.0,
                               " is not a positive integer, as opset 2 needs"));
  if (!c.checkOnly) p->setInt((int64_t)p->f);
  return absl::OkStatus();
}

absl::Status lpPoolDown2(Node &n, AdapterContext &c) {
  Attribute *p = n.getAttr("p");
  if (!p) return absl::OkStatus();
  if (auto v = adapters::intAttrOr(n, "p", 2); !v.ok()) return v.status();
  if (!c.checkOnly) p->setFloat((float)p->i);
  return absl::OkStatus();
}

//===--- GlobalAveragePool, GlobalMaxPool, GlobalLpPool ---===//

void globalPoolRule(InferCtx &c) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return c.setTensor(0, c.inElem(0), std::nullopt);
  Dims out = {(*x)[0], (*x)[1]};
  out.resize(x->size(), c.c(1));
  c.setTensor(0, c.inElem(0), out);
}

//===--- MaxUnpool ---===//

void maxUnpoolRule(InferCtx &c) {
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
}

//===--- Col2Im ---===//

/// Col2Im: [N, C*prod(block), L] -> [N, C, image_shape...].
void col2imRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  const Dims *img = c.inData(1), *blk = c.inData(2);
  if (!img) {
    auto s = c.inShape(1);
    if (s && s->size() == 1 && (*s)[0] && (*s)[0]->isConstant() && (*s)[0]->value() >= 0 &&
        (*s)[0]->value() < 64)
      return c.setTensor(0, el, Dims((*s)[0]->value() + 2, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  const DimExpr *n = x && x->size() == 3 ? (*x)[0] : nullptr;
  const DimExpr *ch = nullptr;
  if (x && x->size() == 3 && blk && blk->size() == img->size()) {
    const DimExpr *p = c.c(1);
    for (const DimExpr *b : *blk) p = dimMul(c.ctx, p, b);
    if (p && p->isConstant() && p->value() > 0) ch = dimFloorDiv(c.ctx, (*x)[1], p);
  }
  Dims o{n, ch};
  o.insert(o.end(), img->begin(), img->end());
  c.setTensor(0, el, o);
}

} // namespace

void registerConvOps(OpRegistrar &r) {
  using adapters::noChange;
  r["Conv"] = convRule;
  r["ConvInteger"] = convRule;
  r["QLinearConv"] = convRule;
  r["DeformConv"] = convRule; // X, W, offset, ...: sizes as Conv
  r["ConvTranspose"] = convTransposeRule;
  for (const char *op : {"MaxPool", "AveragePool", "LpPool"}) r[op] = poolRule;
  r["AveragePool"].since(7).upgrade(noChange).downgrade(averagePoolDown7);
  r["AveragePool"].since(10).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "AveragePool"); });
  r["AveragePool"].since(19).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "AveragePool"); });
  r["MaxPool"].since(8).upgrade(noChange).downgrade(maxPoolDown8);
  r["MaxPool"].since(10).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "MaxPool"); });
  r["LpPool"].since(2).upgrade(lpPoolUp2).downgrade(lpPoolDown2);
  r["LpPool"].since(18).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "LpPool"); });
  for (const char *op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
    r[op] = globalPoolRule;
  r["GlobalLpPool"].since(2).upgrade(lpPoolUp2).downgrade(lpPoolDown2);
  r["MaxUnpool"] = maxUnpoolRule;
  r["Col2Im"] = col2imRule;
}

} // namespace onnxir
