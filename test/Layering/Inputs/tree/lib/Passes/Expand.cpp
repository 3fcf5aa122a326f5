#include "onnxir/Serialize/Text.h"
#include "../Ops/Private.h"
