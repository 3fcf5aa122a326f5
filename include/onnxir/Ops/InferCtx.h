//===- InferCtx.h - What a type and shape rule sees of its node -----------===//
//
// A rule (registered per operator in lib/Ops, OpRegistry.h) reads the types and known data of a node's operands through an
// InferCtx and sets the types (and data) of its results. A rule that cannot
// tell leaves a result unset; it never guesses. Shapes are lists of dim
// expressions, null standing for an unknown dim.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_OPS_INFERCTX_H
#define ONNXIR_OPS_INFERCTX_H

#include "onnxir/IR/Context.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/Support/Export.h"
#include "onnxir/Support/InlineVector.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {
namespace infer {

/// A shape: one expression per dim, null for an unknown dim. Up to rank 6
/// inside the object: rules make and return several per node, and as
/// std::vector each was a malloc (Note [Inline vectors]).
using Dims = InlineVector<const DimExpr *, 6>;

/// The engine (lib/Passes/ShapeInference.cpp) implements the virtuals.
class InferCtx : public OpContext {
public:
  InferCtx(Context &ctx, Node &node, int64_t opset)
      : OpContext(node.domain(), node.opType(), opset), ctx(ctx), node(node) {}
  Context &ctx;
  Node &node;

  unsigned numInputs() const { return node.numOperands(); }
  unsigned numOutputs() const { return node.numResults(); }
  bool hasInput(unsigned i) const { return i < node.numOperands() && node.operand(i); }
  bool hasOutput(unsigned i) const { return i < node.numResults() && node.result(i); }
  /// Type of operand i (null if absent or untyped).
  virtual const Type *inType(unsigned i) const = 0;
  /// Known contents of an int operand (rank 0 or 1) as dim expressions.
  virtual const Dims *inData(unsigned i) const = 0;
  /// The tensor of a constant operand (an initializer or a Constant node's
  /// `value`), null otherwise. For float data that shape data does not track.
  const Tensor *inConstant(unsigned i) const override = 0;
  /// An attribute, with references resolved at function call sites.
  const Attribute *attr(llvm::StringRef name) const override = 0;
  virtual void setOutType(unsigned i, const Type *t) = 0;
  virtual void setOutData(unsigned i, Dims d) = 0;
  /// The operands contradict each other (`why`, e.g. a channel count that
  /// does not match the weight): a warning, and with --input-shape an error
  /// naming the given shapes and this node.
  virtual void disagree(const std::string &why) { (void)why; }

  //===--- Helpers ----------------------------------------------------------===//
  /// Element type of a tensor operand, or -1.
  int32_t inElem(unsigned i) const;
  /// Shape of a tensor operand, nullopt when the rank is unknown.
  std::optional<Dims> inShape(unsigned i) const;
  /// Rank of operand i, or -1.
  int64_t inRank(unsigned i) const;
  /// Known integer contents of operand i (all elements ground).
  std::optional<std::vector<int64_t>> inInts(unsigned i) const;
  /// Sets result i to tensor(elem, dims); elem < 0 sets nothing. An
  /// operand's type when it is that type (Note [Types a shape gives back] in
  /// lib/IR/DimExpr.cpp), found without the type lookup.
  void setTensor(unsigned i, int32_t elem, const std::optional<Dims> &dims);
  /// setTensor(i, inElem(j), inShape(j)): result i has operand j's type.
  void setSameAs(unsigned i, unsigned j);
  /// dimConst(ctx, v), inline for small v (Context::exprOf).
  const DimExpr *c(int64_t v) const { return ctx.exprOf(Dim::known(v)); }

  //===--- Subgraphs ---------------------------------------------------------===//
  // What a rule that infers its node's subgraphs itself (If, Loop, Scan,
  // SequenceMap: lib/Ops/ControlFlow.cpp, registered with infersSubgraphs)
  // asks the engine. Each returns false once inference has failed (in strict
  // mode a contradiction is an error); the rule then returns.

  /// The type and known data of a value of the node's subgraphs, as the
  /// engine sees it now (inside a speculative run: that run's).
  virtual const Type *typeOf(Value *v) const { (void)v; return nullptr; }
  virtual const Dims *dataOf(Value *v) const { (void)v; return nullptr; }
  /// Gives subgraph input `v` the type `t`, merged as an inferred type.
  virtual bool seedInput(Value *v, const Type *t) { (void)v, (void)t; return false; }
  /// Infers `body`, one of the node's subgraphs (its inputs seeded).
  virtual bool inferBody(Graph &body) { (void)body; return false; }
  /// Forgets the known data of `body`'s values (before it runs again with
  /// other input types).
  virtual void forgetBody(Graph &body) { (void)body; }
  /// Note [Speculation budget] (ShapeInference.cpp): a speculative run is
  /// still affordable.
  virtual bool canSpeculate() const { return false; }
  /// Runs `fn` (which seeds, infers and reads `body`) speculatively: the
  /// types it gives `body`'s values are undone afterwards, its data
  /// forgotten first. Returns fn's result.
  virtual bool speculate(Graph &body, llvm::function_ref<bool()> fn) {
    (void)body, (void)fn;
    return false;
  }
};

/// Broadcasts two shapes (numpy rules); nullopt if they cannot broadcast.
std::optional<Dims> broadcast(Context &ctx, const Dims &a, const Dims &b);
/// The first pair of dims (index into a, index into b), aligned from the
/// right, that are both known constants, differ and neither is 1: the proof
/// that a and b cannot broadcast. nullopt when no such pair exists.
std::optional<std::pair<size_t, size_t>> broadcastClash(const Dims &a, const Dims &b);
/// "float[2,3]" for operand i's type, "?" when it has none.
std::string typeStr(const InferCtx &c, unsigned i);
/// The constant value of a known static dim, nullopt otherwise.
std::optional<int64_t> staticDim(const DimExpr *d);
/// Normalises an axis against a rank; nullopt if out of range.
std::optional<int64_t> normAxis(int64_t axis, int64_t rank);

/// Contents of a small int32/int64 tensor (rank <= 1, <= 64 elements).
std::optional<Dims> tensorData(Context &ctx, const Tensor &t);

} // namespace infer
} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_OPS_INFERCTX_H
