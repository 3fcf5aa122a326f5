//===- Training.cpp - ai.onnx.preview.training ----------------------------===//
//
// Training (domain ai.onnx.preview.training): the optimizers Adagrad Momentum
// Adam.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

namespace onnxir {

void registerTrainingOps(OpRegistrar &r) {
  using namespace infer;
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

} // namespace onnxir
