//===- Compare.h - Random inputs and the comparison of two runs -----------===//
//
// What onnxir-run --random-inputs and --compare do, shared with the Python
// bindings (onnxir.run(random=True), onnxir.compare) and whoever else checks
// a rewritten model numerically: one generator, one tolerance rule.
//
// Note [Comparing outputs]
// Two runs' outputs are matched by name. An output only one run has, or one
// of another element type or shape, differs. Outputs computed from a random
// op (EvalResult::nondeterministic) are not compared. A sequence or an
// optional output is compared tensor by tensor when both runs' have the same
// structure (length, emptiness, element shapes and types), else it differs
// like a tensor of another shape; its largest differences are over all its
// tensors. String outputs agree when equal. Otherwise every element pair (x of A, y of B) agrees when
// |x - y| <= atol + rtol * |y| (B is the reference), NaN only with NaN; the
// largest |x - y| and |x - y| / |y| over the pairs that are not equal are
// reported (the relative one infinite when y is 0, both when only one is
// NaN).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_EVAL_COMPARE_H
#define ONNXIR_EVAL_COMPARE_H

#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// A random tensor for each main-graph input of `m` that `given` lacks and
/// that has no default, in input order, drawn from `rng` (floats uniform in
/// [-1, 1), integers in [0, 9], bools 0/1). Symbolic dims take their size
/// from `bind`, else 1, each such dim noted in `notes` ("input \"x\": dim N
/// taken as 1"). An input without a tensor type with a shape, or of an
/// element type without random values, is an error naming it.
absl::StatusOr<std::map<std::string, Tensor>>
randomInputs(const Model &m, const std::map<std::string, Tensor> &given,
             const std::map<std::string, int64_t> &bind, std::mt19937_64 &rng,
             std::vector<std::string> *notes = nullptr);

/// One output of a comparison (Note [Comparing outputs]).
struct OutputDiff {
  enum class Kind {
    Values,           ///< compared element by element
    Strings,          ///< string tensors: equal or not
    MissingInA,       ///< only B has it
    MissingInB,       ///< only A has it
    TypeMismatch,     ///< element type or shape differ
    Nondeterministic, ///< from a random op: not compared (ok)
  };
  std::string name;
  Kind kind = Kind::Values;
  double maxAbs = 0, maxRel = 0;
  bool ok = true;
};

/// The type of output `name` of `r` for a message: `float[2,3]`,
/// `seq(float[2])`, `optional()` (EvalValue::str), `none` if `r` has none.
std::string describeOutput(const EvalResult &r, const std::string &name);

/// Compares A's outputs with B's (the reference), A's names in order, then
/// those only B has; outputs of every kind (EvalResult::outputs and
/// otherOutputs). Note [Comparing outputs].
absl::StatusOr<std::vector<OutputDiff>> compareOutputs(const EvalResult &a, const EvalResult &b,
                                                       double rtol, double atol);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_EVAL_COMPARE_H
