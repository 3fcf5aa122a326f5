#include "onnxir/IR/Node.h"
#include "google/protobuf/message.h"
