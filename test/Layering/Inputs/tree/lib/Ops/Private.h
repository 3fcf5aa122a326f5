#include "onnxir/IR/Node.h"
