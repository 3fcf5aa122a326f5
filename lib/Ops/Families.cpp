//===- Families.cpp - Each family's rules and kernels, registered ---------===//
#include "Families.h"

#include "onnxir/Ops/OpRegistry.h"

namespace onnxir {

void registerElementwiseOps(OpRegistrar &r) {
  infer::addElementwiseRules(r);
  kernels::registerElementwiseKernels(r);
  kernels::registerCastKernels(r);
  // Note [Op traits]: the schemas do not say which ops commute; this list does.
  for (const char *op : {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal",
                         "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    r[op].commutative();
}

void registerReductionOps(OpRegistrar &r) { kernels::registerReduceKernels(r); }

void registerShapeOps(OpRegistrar &r) {
  infer::addShapeRules(r);
  kernels::registerShapeKernels(r);
}

void registerNNOps(OpRegistrar &r) {
  infer::addNNRules(r);
  kernels::registerMatMulKernels(r);
}

void registerMiscOps(OpRegistrar &r) {
  infer::addMiscRules(r);
  infer::addExtraRules(r);
  kernels::registerMiscKernels(r);
}

void registerMLOps(OpRegistrar &r) { infer::addMLRules(r); }
void registerPreviewOps(OpRegistrar &r) { infer::addPreviewRules(r); }
void registerTrainingOps(OpRegistrar &r) { infer::addTrainingRules(r); }

} // namespace onnxir
