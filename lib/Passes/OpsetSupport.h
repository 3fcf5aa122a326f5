//===- OpsetSupport.h - What convert-opset, expand-functions and inlining share -===//
//
// Internal to lib/Passes. The opset converter (ConvertOpset.cpp), the
// expansion of function ops (ExpandFunctions.cpp) and the inliner
// (InlineFunctions.cpp) call each other: an expansion's static body is a
// function converted to the opset where it lands and then inlined; the
// converter expands ops that have no form at its target; the inliner converts
// a function that imports another version of the default domain.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_PASSES_OPSETSUPPORT_H
#define ONNXIR_LIB_PASSES_OPSETSUPPORT_H

#include "onnxir/Passes/Passes.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace onnxir {

class Function;
class Model;
class Node;
class Pass;

namespace opset {

/// Inlines `f`'s body in place of `call` (InlineFunctions.cpp): operands to
/// formal inputs, attribute references bound to the call's attributes or
/// else `f`'s defaults, fresh names, node names `call/inner`, results keep
/// the call's names; `call` is erased. `f` need not be what `call` calls.
absl::Status inlineBody(Model &m, Node *call, Function &f);

/// True if `n` (at the opset in force for it) has an expansion: a builder
/// (Note [Expansion builders]) or a static function body.
bool hasExpansion(const Node &n);
/// Checks (changing nothing) that `n` can be expanded into nodes valid at
/// default-domain opset `opset`; the why of a refusal otherwise.
absl::Status checkExpansion(Node &n, int64_t opset);
/// The static bodies one run has parsed into a model and converted, by
/// (body, opset): each is parsed once per run, inlined at every node that
/// uses it, and removed from the model when the session ends.
class ExpansionSession {
public:
  explicit ExpansionSession(Model &m) : m_(m) {}
  ~ExpansionSession();
  ExpansionSession(const ExpansionSession &) = delete;
  ExpansionSession &operator=(const ExpansionSession &) = delete;
  Model &model() { return m_; }
  /// The function for `body` (of schema `s`) at `opset`, parsed and
  /// converted on first use.
  absl::StatusOr<Function *> body(const class OpSchema &s, const struct FunctionBody &body,
                                  int64_t opset);

private:
  Model &m_;
  std::vector<std::pair<std::pair<const void *, int64_t>, Function *>> fns_;
};

/// Expands `n` into nodes valid at `opset` and erases it; must follow a
/// successful checkExpansion of the same node (a failure here is internal).
absl::Status expandNode(ExpansionSession &session, Node &n, int64_t opset);

/// Converts the default-domain nodes of `f`'s body to `target` and makes
/// `f` import the default domain at `target`; checks everything first (a
/// refusal changes nothing). `checkOnly`: only the check. Counts into
/// `counts` when given.
absl::Status convertFunction(Model &m, Function &f, int64_t target, OpsetCounts *counts = nullptr,
                             bool checkOnly = false);

/// `counts` as pass counters: "adapted Op", "expanded Op", "unchanged Op"
/// (-stats, --summary), in that order, each sorted by op.
PassStatistics countsAsStats(const OpsetCounts &counts);

} // namespace opset
} // namespace onnxir

#endif // ONNXIR_LIB_PASSES_OPSETSUPPORT_H
