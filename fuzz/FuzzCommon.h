//===- FuzzCommon.h - Entry points shared by fuzzers and the replay test --===//
//
// Each function feeds arbitrary bytes through one path of the library and
// must never crash, hang or leak, whatever the bytes; errors are fine.
// The fuzzers call them from LLVMFuzzerTestOneInput; test/Unit/Replay calls
// them on every file of fuzz/corpus-regressions in the normal build.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_FUZZ_FUZZCOMMON_H
#define ONNXIR_FUZZ_FUZZCOMMON_H

#include <cstddef>
#include <cstdint>

namespace onnxir {
namespace fuzz {
/// Lift bytes as a binary model, verify, lower, lift again; a valid model
/// also round-trips through lossless text.
void liftVerifyLower(const uint8_t *data, size_t size);
/// Parse bytes as text syntax, verify, print, reparse; a valid model also
/// lowers to binary that lifts again.
void parseTextPrint(const uint8_t *data, size_t size);
/// Lift; if it verifies, inline functions within a small budget, run -O1,
/// then verify and lower.
void liftOptimize(const uint8_t *data, size_t size);
} // namespace fuzz
} // namespace onnxir

#endif
