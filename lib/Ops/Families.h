//===- Families.h - The registration function of each family (internal) ---===//
//
// OpRegistry's constructor calls each once. A family file (lib/Ops/<Family>.cpp)
// holds the rules and kernels of its operators side by side and attaches them
// and their traits in its register function (OpRegistry.h).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_FAMILIES_H
#define ONNXIR_LIB_OPS_FAMILIES_H

namespace onnxir {

class OpRegistrar;

// Default domain, in this order (no two register the same op).
void registerElementwiseOps(OpRegistrar &r);  ///< Elementwise.cpp
void registerCastOps(OpRegistrar &r);         ///< Cast.cpp
void registerReductionOps(OpRegistrar &r);    ///< Reduction.cpp
void registerShapeOps(OpRegistrar &r);        ///< Shape.cpp
void registerTensorOps(OpRegistrar &r);       ///< Tensor.cpp
void registerNNOps(OpRegistrar &r);           ///< NN.cpp
void registerConvOps(OpRegistrar &r);         ///< Conv.cpp
void registerLinearAlgebraOps(OpRegistrar &r); ///< LinearAlgebra.cpp
void registerAttentionOps(OpRegistrar &r);    ///< Attention.cpp
void registerImageOps(OpRegistrar &r);        ///< Image.cpp
void registerNormalizationOps(OpRegistrar &r); ///< Normalization.cpp
void registerRecurrentOps(OpRegistrar &r);    ///< Recurrent.cpp
void registerQuantizationOps(OpRegistrar &r); ///< Quantization.cpp
void registerSequenceOps(OpRegistrar &r);     ///< Sequence.cpp
void registerSignalOps(OpRegistrar &r);       ///< Signal.cpp
void registerMiscOps(OpRegistrar &r);         ///< Misc.cpp
void registerControlFlowOps(OpRegistrar &r);  ///< ControlFlow.cpp
void registerMLOps(OpRegistrar &r);       ///< ai.onnx.ml (ML.cpp)
void registerPreviewOps(OpRegistrar &r);  ///< ai.onnx.preview (NN.cpp)
void registerTrainingOps(OpRegistrar &r); ///< ai.onnx.preview.training (Training.cpp)
void registerMicrosoftOps(OpRegistrar &r); ///< com.microsoft, the ops passes write (Contrib.cpp)

} // namespace onnxir

#endif // ONNXIR_LIB_OPS_FAMILIES_H
