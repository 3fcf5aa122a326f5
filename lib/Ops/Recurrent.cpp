//===- Recurrent.cpp - RNN, GRU, LSTM -------------------------------------===//
//
// Recurrent: RNN, GRU (linear_before_reset from -3), LSTM; the
// output_sequence attribute before 7 and the batch-first layout from 14.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>

namespace onnxir {

//===--- RNN, GRU, LSTM: shapes and version adapters ---===//

namespace infer {
namespace {

/// Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden]; with
/// layout 1 the batch comes first in each.
void rnnRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  int64_t hidden = c.getInt("hidden_size", 0);
  std::string dir = c.getString("direction", "forward");
  int64_t numDir = dir == "bidirectional" ? 2 : 1;
  int64_t layout = c.getInt("layout", 0);
  const DimExpr *h = hidden > 0 ? c.c(hidden) : nullptr;
  if (!h) {
    // From R: [num_directions, gates*hidden, hidden].
    auto r = c.inShape(2);
    if (r && r->size() == 3) h = (*r)[2];
  }
  const DimExpr *seq = nullptr, *batch = nullptr;
  if (x && x->size() == 3) {
    seq = layout ? (*x)[1] : (*x)[0];
    batch = layout ? (*x)[0] : (*x)[1];
  }
  const DimExpr *nd = c.c(numDir);
  if (layout) {
    c.setTensor(0, el, Dims{batch, seq, nd, h});
    c.setTensor(1, el, Dims{batch, nd, h});
    c.setTensor(2, el, Dims{batch, nd, h});
  } else {
    c.setTensor(0, el, Dims{seq, nd, batch, h});
    c.setTensor(1, el, Dims{nd, batch, h});
    c.setTensor(2, el, Dims{nd, batch, h});
  }
}

} // namespace
} // namespace infer

namespace {

absl::Status refuse(std::string why) { return absl::FailedPreconditionError(std::move(why)); }

// RNN-7, GRU-7, LSTM-7 dropped output_sequence: Y is computed when the node
// has that result.
absl::Status rnnUp7(Node &n, AdapterContext &c) {
  if (auto o = adapters::intAttrOr(n, "output_sequence", 0); !o.ok()) return o.status();
  if (!c.checkOnly) n.removeAttr("output_sequence");
  return absl::OkStatus();
}

absl::Status rnnDown7(Node &n, AdapterContext &c) {
  if (!c.checkOnly && n.numResults() && n.result(0)) n.newAttr("output_sequence").setInt(1);
  return absl::OkStatus();
}

// GRU-3 added linear_before_reset (default 0: the old formula) and made Y_h
// optional.
absl::Status gruDown3(Node &n, AdapterContext &c) {
  auto lbr = adapters::intAttrOr(n, "linear_before_reset", 0);
  if (!lbr.ok()) return lbr.status();
  if (*lbr)
    return refuse(absl::StrCat("linear_before_reset=", *lbr, " does not exist at opset ", c.to,
                               " (the reset gate is applied before the linear map)"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("linear_before_reset");
  if (n.numResults() < 2 || !n.result(1)) { // Y_h is required at opset 1
    n.trimTrailingEmptyResults();
    if (n.numResults() == 0) n.addEmptyResult();
    (void)n.addResult(n.getGraph()->freshName("y_h"));
  }
  return absl::OkStatus();
}

// GRU/LSTM/RNN-14 added layout: 1 puts the batch first in X, the initial
// and final states and Y. Going down, layout 1 becomes Transposes around the
// node (X [batch, seq, in] -> [seq, batch, in]; initial_h/c [batch, dirs,
// hidden] -> [dirs, batch, hidden]; Y [seq, dirs, batch, hidden] -> [batch,
// seq, dirs, hidden]; Y_h/Y_c back like the initial states).
absl::Status rnnDown14(Node &n, AdapterContext &c, llvm::StringRef op) {
  auto layout = adapters::intAttrOr(n, "layout", 0);
  if (!layout.ok()) return layout.status();
  if (*layout == 0) return adapters::olderFormOnly(n, c, op, {{"layout", AttrKind::Int, 0}});
  if (*layout != 1)
    return absl::FailedPreconditionError(absl::StrCat("layout ", *layout, " is not 0 or 1"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("layout");
  Graph &g = *n.getGraph();
  auto transposeOperand = [&](unsigned i, std::vector<int64_t> perm) {
    if (i >= n.numOperands() || !n.operand(i)) return;
    Node *t = g.createNode("Transpose", {n.operand(i)}, 1, &n);
    t->newAttr("perm").setInts(std::move(perm));
    n.setOperand(i, t->result(0));
  };
  transposeOperand(0, {1, 0, 2});
  transposeOperand(5, {1, 0, 2}); // initial_h
  if (op == "LSTM") transposeOperand(6, {1, 0, 2}); // initial_c
  for (unsigned i = 0; i < n.numResults(); ++i) {
    if (!n.result(i)) continue;
    Node *t = adapters::wrapResult(n, "Transpose", {}, i);
    t->newAttr("perm").setInts(i == 0 ? std::vector<int64_t>{2, 0, 1, 3}
                                      : std::vector<int64_t>{1, 0, 2});
  }
  return absl::OkStatus();
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerRecurrentOps(OpRegistrar &r) {
  using namespace infer;
  using adapters::noChange;
  for (const char *op : {"RNN", "GRU", "LSTM"}) r[op] = rnnRule;
  // Version adapters (Note [Version adapters]).
  r["GRU"].since(3).upgrade(noChange).downgrade(gruDown3);
  r["GRU"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["RNN"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["LSTM"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["GRU"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "GRU"); });
  r["LSTM"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "LSTM"); });
  r["RNN"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "RNN"); });
}

} // namespace onnxir
