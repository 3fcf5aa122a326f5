//===- Fuzzopt.cpp - libFuzzer entry: liftOptimize ----------------------===//
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnxir::fuzz::abortIfBroken(onnxir::fuzz::liftOptimize(data, size), "liftOptimize");
  return 0;
}
