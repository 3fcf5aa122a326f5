//===- Normalization.cpp - BatchNormalization, LayerNormalization, ... ----===//
//
// Normalization: BatchNormalization (the consumed_inputs, is_test and spatial
// forms before 9, the training outputs of -9 and -14), InstanceNormalization,
// LayerNormalization, GroupNormalization (scale and bias per group at -18,
// per channel from -21), RMSNormalization, LpNormalization,
// MeanVarianceNormalization, LRN.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>

namespace onnxir {
namespace {

absl::Status refuse(std::string why) { return absl::FailedPreconditionError(std::move(why)); }

/// True if result #i exists and is read (a use, or a graph output).
bool resultRead(const Node &n, unsigned i) {
  Value *v = i < n.numResults() ? n.result(i) : nullptr;
  return v && (!v->useEmpty() || v->isGraphOutput());
}

/// Empties the (unread) result slots from #first on.
void dropResultsFrom(Node &n, unsigned first) {
  for (unsigned i = first; i < n.numResults(); ++i)
    if (n.result(i)) (void)n.eraseResult(i);
  n.trimTrailingEmptyResults();
}

/// True if a result slot from #first on is present (a non-empty slot).
bool hasResultsFrom(const Node &n, unsigned first) {
  for (unsigned i = first; i < n.numResults(); ++i)
    if (n.result(i)) return true;
  return false;
}

} // namespace

namespace infer {
namespace {

/// The 1-D per-channel operands [first, last] of a normalization have the
/// channel count (dim 1) of X.
void checkChannelOperands(InferCtx &c, unsigned first, unsigned last, const char *const *names) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return;
  auto ch = staticDim((*x)[1]);
  if (!ch) return;
  for (unsigned i = first; i <= last; ++i) {
    auto s = c.hasInput(i) ? c.inShape(i) : std::nullopt;
    if (!s || s->size() != 1) continue;
    if (auto v = staticDim((*s)[0]); v && *v != *ch) {
      c.disagree("input X " + typeStr(c, 0) + " has " +
                 std::to_string(*ch) + " channels (dim 1), but " + names[i - first] + " " +
                 typeStr(c, i) + " has " + std::to_string(*v));
      return;
    }
  }
}

} // namespace
} // namespace infer

//===--- BatchNormalization ---===//

namespace infer {
namespace {
void batchNormRule(InferCtx &c) {
  static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
  checkChannelOperands(c, 1, 4, names);
  sameAsInput(c);
  // Running statistics (training mode) have the shape of the scale.
  for (unsigned i = 1; i < c.numOutputs() && i < 5; ++i)
    if (c.opset >= 14 && i <= 2) c.setTensor(i, c.inElem(3), c.inShape(3));
}
} // namespace
} // namespace infer

namespace {
// BatchNormalization-1 requires consumed_inputs: in training mode the running
// mean and variance (operands #3, #4) are updated in place.
absl::Status batchNormDown6(Node &n, AdapterContext &c) {
  if (c.checkOnly) return absl::OkStatus();
  bool training = hasResultsFrom(n, 1);
  n.newAttr("consumed_inputs").setInts({0, 0, 0, training ? 1 : 0, training ? 1 : 0});
  return absl::OkStatus();
}

// BatchNormalization-7 dropped is_test: the mode follows the results (Y alone:
// test mode, running statistics; more: training mode, batch statistics).
absl::Status batchNormUp7(Node &n, AdapterContext &c) {
  auto test = adapters::intAttrOr(n, "is_test", 0);
  if (!test.ok()) return test.status();
  if (*test) {
    for (unsigned i = 1; i < n.numResults(); ++i)
      if (resultRead(n, i))
        return refuse(absl::StrCat("is_test=1 leaves result #", i, " ('",
                                   n.result(i)->name().str(),
                                   "') unfilled; at opset 7 it would select training mode"));
  } else if (!hasResultsFrom(n, 1)) {
    return refuse("is_test=0 (the default) normalises with the batch's own statistics (training "
                  "mode); at opset 7 a node with result Y alone uses the running mean and "
                  "variance (test mode): set is_test=1 if the model is for inference");
  }
  if (c.checkOnly) return absl::OkStatus();
  if (*test) dropResultsFrom(n, 1);
  n.removeAttr("is_test");
  return absl::OkStatus();
}

absl::Status batchNormDown7(Node &n, AdapterContext &c) {
  if (!c.checkOnly && !hasResultsFrom(n, 1)) n.newAttr("is_test").setInt(1);
  return absl::OkStatus();
}

// BatchNormalization-9 dropped spatial: statistics are per channel (spatial=1).
absl::Status batchNormUp9(Node &n, AdapterContext &c) {
  auto spatial = adapters::intAttrOr(n, "spatial", 1);
  if (!spatial.ok()) return spatial.status();
  const Type *t = n.numOperands() && n.operand(0) ? n.operand(0)->type() : nullptr;
  bool rank2 = t && t->hasShape() && t->rank() == 2; // per activation = per channel
  if (!*spatial && !rank2)
    return refuse("spatial=0 (statistics per activation: scale, B, mean and var of shape C x D1 "
                  "x ...) has no form at opset 9, which normalises per channel (flattening the "
                  "input to N x C*D1*... first is not done); an input of rank 2 would do");
  if (!c.checkOnly) n.removeAttr("spatial");
  return absl::OkStatus();
}

// BatchNormalization-14 replaced the five training outputs of -9 (mean, var,
// saved_mean, saved_var, chosen by the runtime) by training_mode and two
// outputs; the inference form (one result) is the same.
absl::Status batchNormUp14(Node &n, AdapterContext &) {
  if (hasResultsFrom(n, 1))
    return absl::FailedPreconditionError(
        "the training outputs (mean, var, saved_mean, saved_var) of BatchNormalization-9 have "
        "no BatchNormalization-14 form");
  return absl::OkStatus();
}
absl::Status batchNormDown14(Node &n, AdapterContext &c) {
  if (hasResultsFrom(n, 1))
    return absl::FailedPreconditionError(
        "the outputs running_mean/running_var (training_mode) have no BatchNormalization-9 form");
  return adapters::olderFormOnly(n, c, "BatchNormalization", {{"training_mode", AttrKind::Int, 0}});
}
// BatchNormalization-15 lets scale/B and mean/var have their own types;
// -14 has one type for all five.
absl::Status batchNormDown15(Node &n, AdapterContext &) {
  DataType x = adapters::operandElemType(n, 0);
  for (unsigned i = 1; i < n.numOperands() && i < 5; ++i) {
    DataType t = adapters::operandElemType(n, i);
    if (x == DataType::Undefined || t == DataType::Undefined)
      return absl::FailedPreconditionError(
          "BatchNormalization-14 needs one element type for all operands, and some are unknown "
          "(infer shapes first)");
    if (t != x)
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", i, " ('", n.operand(i)->name().str(), "') is ", dataTypeName(t).str(),
          " and X is ", dataTypeName(x).str(), "; BatchNormalization-14 needs one type"));
  }
  return absl::OkStatus();
}
} // namespace

//===--- InstanceNormalization ---===//

namespace infer {
namespace {
void instanceNormRule(InferCtx &c) {
  static const char *const names[] = {"scale", "B"};
  checkChannelOperands(c, 1, 2, names);
  sameAsInput(c);
}
} // namespace
} // namespace infer

//===--- LayerNormalization ---===//

namespace infer {
namespace {
void layerNormRule(InferCtx &c) {
  sameAsInput(c);
  auto s = c.inShape(0);
  if (!s) return;
  auto ax = normAxis(c.getInt("axis", -1), s->size());
  if (!ax) return;
  for (size_t i = *ax; i < s->size(); ++i) (*s)[i] = c.c(1);
  int32_t st = (int32_t)c.getInt("stash_type", 1);
  for (unsigned i = 1; i < 3; ++i) c.setTensor(i, st, s);
}
} // namespace
} // namespace infer

//===--- GroupNormalization ---===//

namespace {
// GroupNormalization-21: scale and bias have one entry per channel (C), in
// -18 one per group (num_groups); stash_type added (default 1). Only C ==
// num_groups converts without rewriting the operands.
absl::Status groupNormShapes(Node &n, AdapterContext &c) {
  auto g = adapters::intAttrOr(n, "num_groups", -1);
  if (!g.ok()) return g.status();
  const Type *t = n.numOperands() && n.operand(0) ? n.operand(0)->type() : nullptr;
  int64_t channels = -1;
  if (t && t->kind() == Type::Kind::Tensor && t->rank() >= 2 && t->dims()[1].isKnown())
    channels = t->dims()[1].value;
  if (channels < 0 || channels != *g)
    return absl::FailedPreconditionError(absl::StrCat(
        "scale and bias have one entry per ", c.to >= 21 ? "channel" : "group", " at opset ",
        c.to, " (per ", c.to >= 21 ? "group" : "channel", " before): converts only when the "
        "channel count (", channels < 0 ? std::string("unknown") : absl::StrCat(channels),
        ") equals num_groups (", *g, ")"));
  return absl::OkStatus();
}
absl::Status groupNormUp21(Node &n, AdapterContext &c) { return groupNormShapes(n, c); }
absl::Status groupNormDown21(Node &n, AdapterContext &c) {
  if (absl::Status s = groupNormShapes(n, c); !s.ok()) return s;
  return adapters::olderFormOnly(n, c, "GroupNormalization", {{"stash_type", AttrKind::Int, 1}});
}
} // namespace

//===--- RMSNormalization ---===//

namespace infer {
namespace {
/// Y has X's shape and the scale's element type (V).
void rmsNormRule(InferCtx &c) { c.setTensor(0, c.inElem(1), c.inShape(0)); }
} // namespace
} // namespace infer

//===--- LpNormalization, MeanVarianceNormalization, LRN ---===//

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerNormalizationOps(OpRegistrar &r) {
  using namespace infer;
  using adapters::dropConsumedInputs;
  using adapters::noChange;
  r["BatchNormalization"] = batchNormRule;
  // Version adapters (Note [Version adapters]).
  r["BatchNormalization"].since(6).upgrade(dropConsumedInputs).downgrade(batchNormDown6);
  r["BatchNormalization"].since(7).upgrade(batchNormUp7).downgrade(batchNormDown7);
  r["BatchNormalization"].since(9).upgrade(batchNormUp9).downgrade(noChange);
  r["BatchNormalization"].since(14).upgrade(batchNormUp14).downgrade(batchNormDown14);
  r["BatchNormalization"].since(15).upgrade(noChange).downgrade(batchNormDown15);

  r["InstanceNormalization"] = instanceNormRule;
  r["InstanceNormalization"].since(6).upgrade(dropConsumedInputs).downgrade(noChange);

  r["LayerNormalization"] = layerNormRule;
  // Over the axes from `axis` on (Note [Op facts]).
  r["LayerNormalization"].shapePreserving().axis(AxisFact::AxisAttribute);

  r["GroupNormalization"] = sameAsInput;
  r["GroupNormalization"].since(21).upgrade(groupNormUp21).downgrade(groupNormDown21);

  r["RMSNormalization"] = rmsNormRule;
  r["RMSNormalization"].shapePreserving().axis(AxisFact::AxisAttribute);

  r["LpNormalization"] = sameAsInput;
  r["MeanVarianceNormalization"] = sameAsInput;
  r["LRN"] = sameAsInput;
}

} // namespace onnxir
