#include "onnxir/onnx.pb.h"
#include "onnxir/Ops/OpSchema.h"
