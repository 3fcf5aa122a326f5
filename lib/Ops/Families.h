//===- Families.h - The registration function of each family (internal) ---===//
//
// OpRegistry's constructor calls each once. A family file attaches the
// rules, kernels and traits of its operators (OpRegistry.h).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_FAMILIES_H
#define ONNXIR_LIB_OPS_FAMILIES_H

namespace onnxir {

class OpRegistrar;

void registerElementwiseOps(OpRegistrar &r);
void registerReductionOps(OpRegistrar &r);
void registerShapeOps(OpRegistrar &r);
void registerNNOps(OpRegistrar &r);
void registerMiscOps(OpRegistrar &r);
void registerMLOps(OpRegistrar &r);       ///< ai.onnx.ml
void registerPreviewOps(OpRegistrar &r);  ///< ai.onnx.preview
void registerTrainingOps(OpRegistrar &r); ///< ai.onnx.preview.training

namespace infer {
void addElementwiseRules(OpRegistrar &r);
void addShapeRules(OpRegistrar &r);
void addNNRules(OpRegistrar &r);
void addMiscRules(OpRegistrar &r);
void addExtraRules(OpRegistrar &r);
void addMLRules(OpRegistrar &r);
void addPreviewRules(OpRegistrar &r);
void addTrainingRules(OpRegistrar &r);
} // namespace infer

namespace kernels {
void registerElementwiseKernels(OpRegistrar &t);
void registerCastKernels(OpRegistrar &t);
void registerShapeKernels(OpRegistrar &t);
void registerReduceKernels(OpRegistrar &t);
void registerMatMulKernels(OpRegistrar &t);
void registerMiscKernels(OpRegistrar &t);
} // namespace kernels

} // namespace onnxir

#endif // ONNXIR_LIB_OPS_FAMILIES_H
