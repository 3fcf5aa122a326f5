#include "onnxir/Passes/Pass.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/Support/Export.h"
