//===- Fuzzlift.cpp - libFuzzer entry: liftVerifyLower ----------------------===//
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnxir::fuzz::abortIfBroken(onnxir::fuzz::liftVerifyLower(data, size), "liftVerifyLower");
  return 0;
}
