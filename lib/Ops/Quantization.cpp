//===- Quantization.cpp - QuantizeLinear, DequantizeLinear, ... -----------===//
//
// Quantization: QuantizeLinear DequantizeLinear DynamicQuantizeLinear. The
// quantized ConvInteger QLinearConv MatMulInteger QLinearMatMul share the Conv
// and MatMul rules and live in NN.cpp.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

namespace onnxir {

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
}

} // namespace onnxir
