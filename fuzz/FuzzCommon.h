//===- FuzzCommon.h - Entry points shared by fuzzers and the replay test --===//
//
// Each function feeds arbitrary bytes through one path of the library and
// must never crash, hang or leak, whatever the bytes; errors are fine.
// The fuzzers call them from LLVMFuzzerTestOneInput and abort on a broken
// invariant; test/Unit/Fuzz calls them on every file of
// fuzz/corpus-regressions in the normal build and checks each Outcome
// against the stage that input is known to reach.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_FUZZ_FUZZCOMMON_H
#define ONNXIR_FUZZ_FUZZCOMMON_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxir {
namespace fuzz {

/// What one entry point did with an input.
struct Outcome {
  enum Stage {
    Refused, ///< the reader refused the bytes (message: its error)
    Invalid, ///< read, but not a valid model (lift, text), or the pipeline
             ///< refused it as input (opt; message: the error)
    Done,    ///< read, valid, and every step after ran
  };
  Stage stage = Refused;
  std::string message; ///< the refusal's or the verifier's first error
  std::string broken;  ///< an invariant the input broke; empty when none
};

const char *stageName(Outcome::Stage s);

/// Lift bytes as a binary model, verify, lower, lift again; a valid model
/// also round-trips through lossless text.
Outcome liftVerifyLower(const uint8_t *data, size_t size);
/// Parse bytes as text syntax, verify, print, reparse; a valid model also
/// lowers to binary that lifts again.
Outcome parseTextPrint(const uint8_t *data, size_t size);
/// Lift; if it verifies, inline functions within a small budget, run -O1,
/// then verify and lower.
Outcome liftOptimize(const uint8_t *data, size_t size);

/// The fuzzers' check: print the broken invariant and abort.
void abortIfBroken(const Outcome &o, const char *entry);

} // namespace fuzz
} // namespace onnxir

#endif
