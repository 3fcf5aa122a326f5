//===- FuzzCommon.cpp -----------------------------------------------------===//
#include "FuzzCommon.h"

#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/PassManager.h"
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
}

void liftOptimize(const uint8_t *data, size_t size) {
  registerAllPasses();
  auto m = liftModel(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!m.ok()) return;
  VerifyOptions vo;
  vo.checkOrder = false;
  if (!verify(**m, vo).ok()) return;
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
