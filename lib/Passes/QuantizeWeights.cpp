//===- QuantizeWeights.cpp - Weight-only int8/int4 quantization -----------===//
//
// quantize-weights{bits=8|4 block=32 symmetric=true ops=MatMul,Gemm}: the
// constant float32 weight B of MatMul (rank 2, [K, N]) and Gemm ([K, N], or
// [N, K] with transB) becomes an int8/int4 (uint8/uint4 when not symmetric)
// initializer read through a standard blocked DequantizeLinear (opset 21:
// axis = the reduction axis, block_size = `block`), so the file stores a
// byte or half a byte per weight plus one float scale per block. The
// activations stay float (weight-only). Round to nearest, ties to even, per
// block of `block` weights along the reduction axis (Note [Weight blocks]).
// dequantize-weights is the reverse: every DequantizeLinear of constants
// becomes its float initializer (evaluated by the op's kernel).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <set>

namespace onnxir {

namespace {

// Note [Weight blocks]
// A block is `block` consecutive weights along the reduction axis K of one
// output column n (the last block may be short). Symmetric: scale =
// max|w| / qmax (127 for int8, 7 for int4), no zero point, q = round(w /
// scale) in [-qmax, qmax]. Asymmetric: scale = (max - min) / (2^bits - 1)
// with 0 inside [min, max], zero point z = round(-min / scale), q =
// clamp(round(w / scale) + z, 0, 2^bits - 1). A block of zeros has scale 1
// (DequantizeLinear gives 0 either way). The error of each weight is at
// most scale / 2; the pass reports the largest and the mean.

struct Target {
  Node *node;
  unsigned operand;
  int64_t axis; ///< the reduction axis of the weight
};

class Quantizer {
public:
  Quantizer(Model &m, const QuantizeWeightsOptions &o, QuantizeWeightsStatistics &s,
            std::vector<std::string> *remarks)
      : m_(m), opts_(o), stats_(s), remarks_(remarks) {}
  absl::StatusOr<bool> run();

private:
  Value *quantize(Value *w, int64_t axis, Graph &g, Node *pos);
  Model &m_;
  const QuantizeWeightsOptions &opts_;
  QuantizeWeightsStatistics &stats_;
  std::vector<std::string> *remarks_;
  double errSum_ = 0, errMax_ = 0;
  int64_t errCount_ = 0;
};

Value *Quantizer::quantize(Value *w, int64_t axis, Graph &g, Node *pos) {
  const Tensor *t = w->initializer();
  auto vals = t->values<float>();
  if (!vals.ok()) return nullptr;
  const std::vector<int64_t> &dims = t->dims();
  int64_t K = dims[axis], N = dims[1 - axis], B = (int64_t)opts_.block;
  int64_t nb = (K + B - 1) / B;
  const bool sym = opts_.symmetric, four = opts_.bits == 4;
  const int64_t levels = four ? 15 : 255, qmax = four ? 7 : 127;
  // Element (k, n) of the weight, in its own layout.
  auto at = [&](int64_t k, int64_t n) { return axis == 0 ? k * N + n : n * K + k; };
  std::vector<int64_t> q(vals->size());
  std::vector<float> scales(nb * N);
  std::vector<int64_t> zeros(sym ? 0 : nb * N);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      int64_t k0 = b * B, k1 = std::min(K, k0 + B);
      float lo = 0, hi = 0, amax = 0;
      for (int64_t k = k0; k < k1; ++k) {
        float v = (*vals)[at(k, n)];
        lo = std::min(lo, v), hi = std::max(hi, v), amax = std::max(amax, std::fabs(v));
      }
      float scale = sym ? amax / (float)qmax : (hi - lo) / (float)levels;
      if (!(scale > 0) || !std::isfinite(scale)) scale = 1;
      int64_t z = sym ? 0 : std::clamp<int64_t>((int64_t)std::nearbyint(-lo / scale), 0, levels);
      // The scale's layout: the weight's with dim `axis` counted in blocks.
      int64_t si = axis == 0 ? b * N + n : n * nb + b;
      scales[si] = scale;
      if (!sym) zeros[si] = z;
      for (int64_t k = k0; k < k1; ++k) {
        float v = (*vals)[at(k, n)];
        int64_t r = (int64_t)std::nearbyint(v / scale) + z;
        r = sym ? std::clamp<int64_t>(r, -qmax, qmax) : std::clamp<int64_t>(r, 0, levels);
        q[at(k, n)] = r;
        double err = std::fabs((double)(r - z) * scale - v);
        errSum_ += err, errMax_ = std::max(errMax_, err), ++errCount_;
      }
    }
  DataType qt = four ? (sym ? DataType::Int4 : DataType::Uint4)
                     : (sym ? DataType::Int8 : DataType::Uint8);
  auto pack = [&](const std::vector<int64_t> &xs) {
    std::string bytes(four ? (xs.size() + 1) / 2 : xs.size(), '\0');
    for (size_t i = 0; i < xs.size(); ++i) {
      uint8_t u = (uint8_t)(xs[i] & (four ? 0xF : 0xFF));
      if (!four) bytes[i] = (char)u;
      else bytes[i / 2] = (char)((uint8_t)bytes[i / 2] | (i % 2 ? u << 4 : u));
    }
    return bytes;
  };
  std::vector<int64_t> sdims = dims;
  sdims[axis] = nb;
  Builder b(g);
  b.setInsertionPoint(pos);
  std::string base = w->name().str();
  Value *qv = b.createInitializer(base + "_q", makeTensor(qt, dims, pack(q)));
  Value *sv = b.createInitializer(base + "_scale", makeFloatTensor(sdims, scales));
  std::vector<Value *> ops{qv, sv};
  if (!sym) ops.push_back(b.createInitializer(base + "_zero", makeTensor(qt, sdims, pack(zeros))));
  Context &ctx = m_.getContext();
  qv->setType(ctx.getTensorType(qt, llvm::ArrayRef<int64_t>(dims)));
  sv->setType(ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>(sdims)));
  if (!sym) ops.back()->setType(ctx.getTensorType(qt, llvm::ArrayRef<int64_t>(sdims)));
  Node *dq = g.createNode("DequantizeLinear", ops, 1, pos, "", base + "_dq");
  dq->setAttr(intAttr("axis", axis));
  dq->setAttr(intAttr("block_size", B));
  dq->result(0)->setType(w->type() ? w->type()
                                   : ctx.getTensorType(DataType::Float,
                                                       llvm::ArrayRef<int64_t>(dims)));
  stats_.weightsQuantized += 1;
  stats_.bytesBefore += (int64_t)vals->size() * 4;
  stats_.bytesAfter += (int64_t)(four ? (q.size() + 1) / 2 : q.size()) + (int64_t)scales.size() * 4 +
                       (int64_t)(four ? (zeros.size() + 1) / 2 : zeros.size());
  return dq->result(0);
}

absl::StatusOr<bool> Quantizer::run() {
  if (opts_.bits != 4 && opts_.bits != 8)
    return absl::InvalidArgumentError(
        absl::StrCat("quantize-weights: bits=", opts_.bits, " is not 4 or 8"));
  if (opts_.block < 2)
    return absl::InvalidArgumentError(
        absl::StrCat("quantize-weights: block=", opts_.block, " must be at least 2"));
  std::set<std::string> ops;
  for (absl::string_view op : absl::StrSplit(opts_.ops, ',', absl::SkipEmpty()))
    ops.insert(std::string(op));
  for (const std::string &op : ops)
    if (op != "MatMul" && op != "Gemm")
      return absl::InvalidArgumentError(
          absl::StrCat("quantize-weights: ops: '", op, "' is not MatMul or Gemm"));
  // Blocked DequantizeLinear (block_size, int4) came with opset 21.
  int64_t opset = m_.opsetVersion(""), blocked = firstVersionWithAttribute("DequantizeLinear",
                                                                          "block_size");
  if (opset < blocked) {
    if (remarks_)
      remarks_->push_back(absl::StrCat("the model imports opset ", opset,
                                       "; blocked DequantizeLinear needs ", blocked,
                                       " (convert with --target-opset=", blocked,
                                       " first): nothing quantized"));
    return false;
  }
  // Every use of a weight must be a quantizable operand: one DQ serves all.
  std::vector<Target> targets;
  llvm::DenseMap<Value *, int64_t> axisOf;
  std::set<Value *> refused;
  for (Node &n : m_.graph().nodes()) {
    if (!n.domain().empty() || !ops.count(n.opType().str()) || n.numOperands() < 2) continue;
    Value *w = n.operand(1);
    const Tensor *t = w ? (w->isConstantInitializer() ? w->initializer() : nullptr) : nullptr;
    if (!t || t->dataType() != DataType::Float || t->dims().size() != 2) continue;
    int64_t axis = 0;
    if (n.opType() == "Gemm") axis = NodeContext(n).getInt("transB", 0) ? 1 : 0;
    else if (staticRankOf(n.operand(0)) == 1) continue; // a vector times B: keep it simple
    auto [it, fresh] = axisOf.try_emplace(w, axis);
    if (!fresh && it->second != axis) refused.insert(w);
    targets.push_back({&n, 1, axis});
  }
  for (auto &[w, axis] : axisOf) {
    unsigned eligible = 0;
    for (const Target &t : targets) eligible += t.node->operand(1) == w;
    if (eligible != w->numUses()) refused.insert(w);
  }
  llvm::DenseMap<Value *, Value *> done;
  bool changed = false;
  for (const Target &t : targets) {
    Value *w = t.node->operand(1);
    if (refused.count(w)) continue;
    Value *&dq = done[w];
    if (!dq) dq = quantize(w, t.axis, m_.graph(), &*m_.graph().nodes().begin());
    if (!dq) continue;
    t.node->setOperand(t.operand, dq);
    changed = true;
  }
  // The float weights are gone from the file.
  m_.graph().removeInitializersIf([&](Value *v) { return done.count(v) && v->useEmpty(); });
  if (remarks_ && errCount_)
    remarks_->push_back(absl::StrCat(stats_.weightsQuantized, " weight(s) to ", opts_.bits,
                                     "-bit blocks of ", opts_.block, ": ", stats_.bytesBefore,
                                     " -> ", stats_.bytesAfter, " bytes; weight error max ",
                                     errMax_, ", mean ", errSum_ / (double)errCount_));
  return changed;
}

} // namespace

absl::StatusOr<bool> quantizeWeights(Model &m, const QuantizeWeightsOptions &opts,
                                     QuantizeWeightsStatistics *stats,
                                     std::vector<std::string> *remarks) {
  QuantizeWeightsStatistics local;
  Quantizer q(m, opts, stats ? *stats : local, remarks);
  return q.run();
}

absl::StatusOr<bool> dequantizeWeights(Model &m, int64_t *dequantized) {
  bool changed = false;
  std::vector<Node *> dqs;
  m.walkGraphs([&](Graph *g) {
    if (g->parentFunction()) return;
    for (Node &n : g->nodes())
      if (n.opType() == "DequantizeLinear" && n.domain().empty() && n.numResults() == 1 &&
          n.result(0) && !n.result(0)->isGraphOutput())
        dqs.push_back(&n);
  });
  for (Node *n : dqs) {
    std::vector<const Tensor *> inputs;
    bool constant = true;
    for (Value *v : n->operands()) {
      const Tensor *t = v ? storedConstantOf(v) : nullptr;
      if (v && !t) constant = false;
      inputs.push_back(t);
    }
    if (!constant || inputs.empty() || !inputs[0]) continue;
    std::vector<const Attribute *> attrs;
    for (unsigned i = 0; i < n->numAttributes(); ++i) attrs.push_back(&n->attribute(i));
    KernelCall call("", "DequantizeLinear", importedOpsetVersion(*n, m), attrs);
    call.inputs = inputs;
    auto r = evaluateKernel(call);
    if (!r.ok())
      return absl::InvalidArgumentError(absl::StrCat(
          "dequantize-weights: ", n->getGraph()->path(), " > node \"", n->result(0)->name().str(),
          "\" (DequantizeLinear): ", r.status().message()));
    Graph &g = *n->getGraph();
    Value *out = n->result(0);
    Value *w = Builder(g).createInitializer(out->name().str() + "_f", std::move((*r)[0]));
    w->setType(out->type());
    out->replaceAllUsesWith(w);
    if (absl::Status s = n->erase(); !s.ok()) return s;
    if (dequantized) ++*dequantized;
    changed = true;
  }
  if (changed) {
    DCEOptions o;
    if (auto r = eliminateDeadCode(m, o); !r.ok()) return r.status();
  }
  return changed;
}

//===----------------------------------------------------------------------===//
// The passes
//===----------------------------------------------------------------------===//

namespace {
class QuantizeWeightsPass : public OptionsPass<QuantizeWeightsOptions> {
public:
  QuantizeWeightsPass()
      : OptionsPass("quantize-weights",
                    "Store constant MatMul/Gemm weights as int8/int4 blocks read through a "
                    "blocked DequantizeLinear (opset 21; weight-only)") {}
  absl::StatusOr<bool> run(Model &m) override {
    QuantizeWeightsStatistics s;
    std::vector<std::string> remarks;
    auto r = quantizeWeights(m, optionValues(), &s, &remarks);
    if (!r.ok()) return r;
    addStats(s);
    for (std::string &w : remarks) remark(std::move(w));
    return r;
  }

private:
  Field<uint64_t> bits_{*this, &QuantizeWeightsOptions::bits, "bits", "4 or 8", "quantize-bits"};
  Field<uint64_t> block_{*this, &QuantizeWeightsOptions::block, "block",
                         "weights per block along the reduction axis", "quantize-block"};
  Field<bool> symmetric_{*this, &QuantizeWeightsOptions::symmetric, "symmetric",
                         "signed values without a zero point (else unsigned with one)",
                         "quantize-symmetric"};
  Field<std::string> ops_{*this, &QuantizeWeightsOptions::ops, "ops",
                          "the ops whose weights are quantized (MatMul, Gemm)", "quantize-ops"};
};
} // namespace

std::unique_ptr<Pass> createQuantizeWeightsPass() {
  return std::make_unique<QuantizeWeightsPass>();
}

std::unique_ptr<Pass> createDequantizeWeightsPass() {
  return makePass("dequantize-weights",
                  "Replace DequantizeLinear of constants by their float initializers",
                  "weights dequantized", dequantizeWeights);
}

} // namespace onnxir
