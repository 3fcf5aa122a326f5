//===- FuzzCommon.cpp -----------------------------------------------------===//
#include "FuzzCommon.h"

#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include <cstdlib>

namespace onnxir {
namespace fuzz {

void liftVerifyLower(const uint8_t *data, size_t size) {
  auto m = liftModel(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!m.ok()) return;
  (void)verifyAll(**m);
  auto bytes = lowerModel(**m);
  if (!bytes.ok()) return;
  // What we wrote must lift again.
  auto again = liftModel(llvm::StringRef(*bytes));
  if (!again.ok()) std::abort();
  // One set of limits (Note [Nesting limits]): a valid model that lifts
  // from binary also reads back from its lossless text.
  if (!verifyAll(**m).empty()) return;
  PrintOptions po;
  po.lossless = true;
  auto text = parseModelText(printModelText(**m, po), "<fuzz-lifted>");
  if (!text.ok()) std::abort();
}

void parseTextPrint(const uint8_t *data, size_t size) {
  auto m = parseModelText(llvm::StringRef(reinterpret_cast<const char *>(data), size), "<fuzz>");
  if (!m.ok()) return;
  (void)verifyAll(**m);
  PrintOptions po;
  po.lossless = true;
  std::string text = printModelText(**m, po);
  auto again = parseModelText(text, "<fuzz-printed>");
  // What we print must parse again, and print the same.
  if (!again.ok() || printModelText(**again, po) != text) std::abort();
  // A valid model parsed from text can be saved as binary and lifted again
  // (the text parser checks what the binary lift checks).
  if (!verifyAll(**m).empty()) return;
  auto bytes = lowerModel(**m);
  if (!bytes.ok()) return;
  if (!liftModel(llvm::StringRef(*bytes)).ok()) std::abort();
}

void liftOptimize(const uint8_t *data, size_t size) {
  registerAllPasses();
  auto m = liftModel(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!m.ok()) return;
  VerifyOptions vo;
  vo.checkOrder = false;
  if (!verify(**m, vo).ok()) return;
  // Inlining within a small budget (Note [Inlining budget]): nested calls
  // must be refused before they expand, and what is inlined must verify.
  auto inl = inlineFunctions(**m, nullptr, 20000);
  if (inl.ok() && *inl && !verify(**m, vo).ok()) std::abort();
  std::string sink;
  llvm::raw_string_ostream log(sink);
  PassManagerOptions opts;
  opts.log = &log;
  PassManager pm(opts);
  pm.addO1Pipeline(2);
  auto r = pm.run(**m);
  if (!r.ok()) {
    // Errors about the input (a cycle, say) are fine; a pass that leaves
    // the IR invalid is a bug.
    if (r.status().code() == absl::StatusCode::kInternal) std::abort();
    return;
  }
  (void)lowerModel(**m);
}

} // namespace fuzz
} // namespace onnxir
