#include "onnxir/Passes/Pass.h"
