#include "onnxir/Text/Text.h"
#include "Private.h"
