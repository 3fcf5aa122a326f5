//===- Signal.cpp - DFT, STFT, windows, MelWeightMatrix -------------------===//
//
// Signal: DFT (the opset-17 attribute and opset-20 input forms of the axis),
// STFT, HannWindow HammingWindow BlackmanWindow, MelWeightMatrix.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

namespace onnxir {

//===----------------------------------------------------------------------===//
// Type and shape rules
//===----------------------------------------------------------------------===//

namespace infer {
namespace {

/// The single known element of a scalar (or 1-element) int operand.
const DimExpr *scalarData(InferCtx &c, unsigned i) {
  const Dims *d = c.hasInput(i) ? c.inData(i) : nullptr;
  return d && d->size() == 1 ? (*d)[0] : nullptr;
}

/// Hann/Hamming/BlackmanWindow: [size] of output_datatype.
void windowRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  c.setTensor(0, el, Dims{scalarData(c, 0)});
}

void stftRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x || x->size() != 3) return c.setTensor(0, el, std::nullopt);
  const DimExpr *len = nullptr;
  if (c.hasInput(3)) {
    len = scalarData(c, 3);
  } else if (c.hasInput(2)) {
    auto w = c.inShape(2);
    if (w && w->size() == 1) len = (*w)[0];
  }
  const DimExpr *step = scalarData(c, 1);
  const DimExpr *frames = nullptr;
  if (step && step->isConstant() && step->value() > 0)
    frames = dimAdd(c.ctx, dimFloorDiv(c.ctx, dimSub(c.ctx, (*x)[1], len), step), c.c(1));
  const DimExpr *bins =
      c.getInt("onesided", 1) ? dimAdd(c.ctx, dimFloorDiv(c.ctx, len, c.c(2)), c.c(1)) : len;
  c.setTensor(0, el, Dims{(*x)[0], frames, bins, c.c(2)});
}

void melRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  const DimExpr *bins = scalarData(c, 0), *dft = scalarData(c, 1);
  c.setTensor(0, el, Dims{dimAdd(c.ctx, dimFloorDiv(c.ctx, dft, c.c(2)), c.c(1)), bins});
}

} // namespace
} // namespace infer


// Adapters of the steps at opset 10 and later (Note [Version adapters]).
namespace {
// DFT-20: the attribute axis (default 1) became operand #2 (int64 scalar,
// default -2).
absl::Status dftUp20(Node &n, AdapterContext &c) {
  auto a = adapters::intAttrOr(n, "axis", 1);
  if (!a.ok()) return a.status();
  if (c.checkOnly) return absl::OkStatus();
  Value *v = adapters::scalarConstant(n, c, "axis", DataType::Int64, (double)*a);
  n.removeAttr("axis");
  while (n.numOperands() < 2) n.addOperand(nullptr);
  n.addOperand(v);
  return absl::OkStatus();
}
absl::Status dftDown20(Node &n, AdapterContext &c) {
  int64_t axis = -2;
  if (n.numOperands() > 2 && n.operand(2)) {
    auto v = adapters::constantOperandValues(n, c, 2, "attribute 'axis'");
    if (!v.ok()) return v.status();
    if (v->size() != 1) return absl::FailedPreconditionError("operand #2 (axis) is not a scalar");
    axis = (int64_t)(*v)[0];
  }
  if (c.checkOnly) return absl::OkStatus();
  adapters::dropOperand(n, 2);
  adapters::setIntAttr(n, "axis", axis);
  return absl::OkStatus();
}
} // namespace

void registerSignalOps(OpRegistrar &r) {
  using namespace infer;
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
  for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r[op] = windowRule;
  r["STFT"] = stftRule;
  r["MelWeightMatrix"] = melRule;
  r["DFT"].since(20).upgrade(dftUp20).downgrade(dftDown20);
}

} // namespace onnxir
