//===- Fuzztext.cpp - libFuzzer entry: parseTextPrint ----------------------===//
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnxir::fuzz::abortIfBroken(onnxir::fuzz::parseTextPrint(data, size), "parseTextPrint");
  return 0;
}
