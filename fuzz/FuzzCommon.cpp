//===- FuzzCommon.cpp -----------------------------------------------------===//
#include "FuzzCommon.h"

#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include <cstdio>
#include <cstdlib>

namespace onnxir {
namespace fuzz {

const char *stageName(Outcome::Stage s) {
  switch (s) {
  case Outcome::Refused: return "refused";
  case Outcome::Invalid: return "invalid";
  case Outcome::Done: return "done";
  }
  return "?";
}

void abortIfBroken(const Outcome &o, const char *entry) {
  if (o.broken.empty()) return;
  std::fprintf(stderr, "%s: invariant broken: %s\n", entry, o.broken.c_str());
  std::abort();
}

namespace {
Outcome refused(const absl::Status &s) {
  Outcome o;
  o.message = std::string(s.message());
  return o;
}
Outcome invalid(std::string message) {
  Outcome o;
  o.stage = Outcome::Invalid;
  o.message = std::move(message);
  return o;
}
Outcome broken(Outcome::Stage stage, std::string what) {
  Outcome o;
  o.stage = stage;
  o.broken = std::move(what);
  return o;
}
} // namespace

Outcome liftVerifyLower(const uint8_t *data, size_t size) {
  auto m = liftModel(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!m.ok()) return refused(m.status());
  std::vector<Diagnostic> diags = verifyAll(**m);
  auto bytes = lowerModel(**m);
  if (!bytes.ok())
    return invalid("lower: " + std::string(bytes.status().message()));
  // What we wrote must lift again.
  auto again = liftModel(llvm::StringRef(*bytes));
  if (!again.ok())
    return broken(Outcome::Invalid, "the lowered model does not lift: " +
                                        std::string(again.status().message()));
  if (!diags.empty()) return invalid(diags.front().message);
  // One set of limits (Note [Nesting limits]): a valid model that lifts
  // from binary also reads back from its lossless text.
  PrintOptions po;
  po.lossless = true;
  auto text = parseModelText(printModelText(**m, po), "<fuzz-lifted>");
  if (!text.ok())
    return broken(Outcome::Done, "the lossless text of a valid lifted model does not parse: " +
                                     std::string(text.status().message()));
  return Outcome{Outcome::Done, "", ""};
}

Outcome parseTextPrint(const uint8_t *data, size_t size) {
  auto m = parseModelText(llvm::StringRef(reinterpret_cast<const char *>(data), size), "<fuzz>");
  if (!m.ok()) return refused(m.status());
  std::vector<Diagnostic> diags = verifyAll(**m);
  PrintOptions po;
  po.lossless = true;
  std::string text = printModelText(**m, po);
  auto again = parseModelText(text, "<fuzz-printed>");
  // What we print must parse again, and print the same.
  if (!again.ok())
    return broken(Outcome::Invalid,
                  "the printed text does not parse: " + std::string(again.status().message()));
  if (printModelText(**again, po) != text)
    return broken(Outcome::Invalid, "the printed text prints differently once parsed");
  if (!diags.empty()) return invalid(diags.front().message);
  // A valid model parsed from text can be saved as binary and lifted again
  // (the text parser checks what the binary lift checks).
  auto bytes = lowerModel(**m);
  if (!bytes.ok()) return invalid("lower: " + std::string(bytes.status().message()));
  auto lifted = liftModel(llvm::StringRef(*bytes));
  if (!lifted.ok())
    return broken(Outcome::Done, "a valid text model lowers to binary that does not lift: " +
                                     std::string(lifted.status().message()));
  return Outcome{Outcome::Done, "", ""};
}

Outcome liftOptimize(const uint8_t *data, size_t size) {
  registerAllPasses();
  auto m = liftModel(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!m.ok()) return refused(m.status());
  VerifyOptions vo;
  vo.checkOrder = false;
  absl::Status valid = verify(**m, vo);
  if (!valid.ok()) return refused(valid);
  // Inlining within a small budget (Note [Inlining budget]): nested calls
  // must be refused before they expand, and what is inlined must verify.
  auto inl = inlineFunctions(**m, nullptr, 20000);
  if (inl.ok() && *inl && !verify(**m, vo).ok())
    return broken(Outcome::Invalid, "inlined functions leave the model invalid");
  std::string sink;
  llvm::raw_string_ostream log(sink);
  PassManagerOptions opts;
  opts.log = &log;
  PassManager pm(opts);
  if (absl::Status s = pm.addPipeline("O1{max-iterations=2}"); !s.ok())
    return broken(Outcome::Invalid, "the -O1 pipeline: " + std::string(s.message()));
  auto r = pm.run(**m);
  if (!r.ok()) {
    // Errors about the input (a cycle, say) are fine; a pass that leaves
    // the IR invalid is a bug.
    if (r.status().code() == absl::StatusCode::kInternal)
      return broken(Outcome::Invalid, "-O1 left the IR invalid: " + std::string(r.status().message()));
    return invalid(std::string(r.status().message()));
  }
  auto bytes = lowerModel(**m);
  if (!bytes.ok()) return invalid("lower: " + std::string(bytes.status().message()));
  return Outcome{Outcome::Done, "", ""};
}

} // namespace fuzz
} // namespace onnxir
