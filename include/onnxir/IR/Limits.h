//===- Limits.h - Nesting limits shared by every reader and writer --------===//
//
// Note [Nesting limits]
//   One set of limits for binary lift, text parsing and output, so that
//   anything we read we can also write and read back (a model that lifts
//   from binary round-trips through the lossless text form, and the other
//   way round). Every recursive algorithm over graphs, types or annotation
//   values stays well inside an 8 MiB stack at these depths, also under the
//   sanitizers. A deeper input is an error naming the limit; limits are not
//   flags, since a writer could not know what a later reader allows.
//
//   - Graphs: a graph attribute inside a graph attribute ... at most
//     kMaxGraphNesting levels below the main graph or a function body.
//     (ONNX itself, through protobuf's default recursion limit, reads about
//     33 levels.)
//   - Types: seq(seq(...)), optional(...), map(k, ...) hold at most
//     kMaxTypeNesting types inside one another (a tensor type alone is
//     level 0; seq(float[2]) is 1). Binary protobuf alone would allow about
//     740 levels, the text parser used to stop at 200.
//   - Text annotations (`#@` lines): lists and records inside one another
//     count on one counter, at most kMaxAnnotationNesting levels; a type
//     record (one record per type level) inside a list fits.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_LIMITS_H
#define ONNXIR_IR_LIMITS_H

#include "onnxir/Support/Export.h"

ONNXIR_API_BEGIN
namespace onnxir {

/// Subgraph levels below a top-level graph (main graph or function body).
inline constexpr unsigned kMaxGraphNesting = 128;
/// Levels of types inside a type (seq(float) is 1).
inline constexpr unsigned kMaxTypeNesting = 200;
/// Levels of lists and records in one text annotation value.
inline constexpr unsigned kMaxAnnotationNesting = kMaxTypeNesting + 8;

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_LIMITS_H
