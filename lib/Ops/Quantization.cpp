//===- Quantization.cpp - QuantizeLinear, DequantizeLinear, ... -----------===//
//
// Quantization: QuantizeLinear DequantizeLinear DynamicQuantizeLinear. The
// quantized ConvInteger QLinearConv MatMulInteger QLinearMatMul share the Conv
// and MatMul rules and live in NN.cpp.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

namespace onnxir {


// Adapters of the steps at opset 10 and later (Note [Version adapters]).
namespace {
bool isFloat8(DataType t) {
  return t == DataType::Float8E4M3FN || t == DataType::Float8E4M3FNUZ ||
         t == DataType::Float8E5M2 || t == DataType::Float8E5M2FNUZ;
}
// Q/DQ-13 added axis (per-axis scales); -10 takes a scalar scale only.
absl::Status qdqDown13(Node &n, AdapterContext &c) {
  int64_t r = adapters::operandRank(n, 1);
  if (r != 0)
    return absl::FailedPreconditionError(
        r < 0 ? std::string("the scale's rank is unknown, and opset 10 takes a scalar scale only "
                            "(infer shapes first)")
              : absl::StrCat("the scale is ", r, "-D (per-axis); opset 10 takes a scalar scale "
                             "only"));
  if (!c.checkOnly) n.removeAttr("axis");
  return absl::OkStatus();
}
// QuantizeLinear-19 added saturate (float8 outputs only).
absl::Status quantizeDown19(Node &n, AdapterContext &c) {
  if (!n.getAttr("saturate")) return absl::OkStatus();
  DataType zp = adapters::operandElemType(n, 2);
  if (n.numOperands() > 2 && n.operand(2) && (zp == DataType::Undefined || isFloat8(zp)))
    return absl::FailedPreconditionError("attribute 'saturate' applies: the output is float8 "
                                         "or of unknown type");
  if (!c.checkOnly) n.removeAttr("saturate");
  return absl::OkStatus();
}
// QuantizeLinear-21 added block_size (0: none) and output_dtype (0: the zero
// point's type, uint8 without one); -23 precision (0: the scale's type).
absl::Status quantizeDown21(Node &n, AdapterContext &c) {
  auto od = adapters::intAttrOr(n, "output_dtype", 0);
  if (!od.ok()) return od.status();
  bool hasZp = n.numOperands() > 2 && n.operand(2);
  DataType implied = hasZp ? adapters::operandElemType(n, 2) : DataType::Uint8;
  if (*od != 0 && (DataType)*od != implied)
    return absl::FailedPreconditionError(absl::StrCat(
        "output_dtype ", *od, " is not the type the zero point implies; opset ", c.to,
        " has no output_dtype"));
  if (absl::Status s = adapters::olderFormOnly(n, c, "QuantizeLinear",
                                               {{"block_size", AttrKind::Int, 0},
                                                {"output_dtype", AttrKind::Int, *od}});
      !s.ok())
    return s;
  return absl::OkStatus();
}
absl::Status quantizeDown23(Node &n, AdapterContext &c) {
  auto p = adapters::intAttrOr(n, "precision", 0);
  if (!p.ok()) return p.status();
  return adapters::olderFormOnly(
      n, c, "QuantizeLinear",
      {{"precision", AttrKind::Int,
        (DataType)*p == adapters::operandElemType(n, 1) ? *p : 0}});
}
// DequantizeLinear-19 allows float16/bfloat16 scales (and outputs); -13
// takes float only.
absl::Status dequantizeDown19(Node &n, AdapterContext &) {
  DataType t = adapters::operandElemType(n, 1);
  if (t != DataType::Float)
    return absl::FailedPreconditionError(absl::StrCat(
        "the scale is ", t == DataType::Undefined ? std::string("of unknown type")
                                                  : dataTypeName(t).str(),
        "; DequantizeLinear-13 takes a float scale only"));
  return absl::OkStatus();
}
absl::Status dequantizeDown21(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "DequantizeLinear", {{"block_size", AttrKind::Int, 0}});
}
absl::Status dequantizeDown23(Node &n, AdapterContext &c) {
  auto od = adapters::intAttrOr(n, "output_dtype", 0);
  if (!od.ok()) return od.status();
  return adapters::olderFormOnly(
      n, c, "DequantizeLinear",
      {{"output_dtype", AttrKind::Int,
        (DataType)*od == adapters::operandElemType(n, 1) ? *od : 0}});
}
} // namespace

void registerQuantizationAdapters(OpRegistrar &r) {
  using adapters::noChange;
  r["QuantizeLinear"].since(13).upgrade(noChange).downgrade(qdqDown13);
  r["DequantizeLinear"].since(13).upgrade(noChange).downgrade(qdqDown13);
  r["QuantizeLinear"].since(19).upgrade(noChange).downgrade(quantizeDown19);
  r["QuantizeLinear"].since(21).upgrade(noChange).downgrade(quantizeDown21);
  r["QuantizeLinear"].since(23).upgrade(noChange).downgrade(quantizeDown23);
  r["DequantizeLinear"].since(19).upgrade(noChange).downgrade(dequantizeDown19);
  r["DequantizeLinear"].since(21).upgrade(noChange).downgrade(dequantizeDown21);
  r["DequantizeLinear"].since(23).upgrade(noChange).downgrade(dequantizeDown23);
}

void registerQuantizationOps(OpRegistrar &r) {
  using namespace infer;
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
  registerQuantizationAdapters(r);
}

} // namespace onnxir
