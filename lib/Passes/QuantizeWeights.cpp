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
// {format=matmulnbits} writes onnxruntime's com.microsoft.MatMulNBits
// instead (any opset; Note [MatMulNBits form]).
// dequantize-weights is the reverse: every DequantizeLinear of constants
// becomes its float initializer (evaluated by the op's kernel), every
// MatMulNBits of constants a MatMul of the float weight.
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
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <map>
#include <optional>
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

// Note [MatMulNBits form]
// With {format=matmulnbits} the same blocks (Note [Weight blocks]) are
// written for onnxruntime's contrib op (Note [MatMulNBits contract],
// lib/Ops/Contrib.cpp): codes are unsigned, so a symmetric code q in
// [-qmax, qmax] is stored as q + 2^(bits-1) and no zero_points input is
// given (its default is 2^(bits-1)); asymmetric codes and zero points are
// stored as they are, the zero points packed per row like B. The last
// block of a K that is not a multiple of `block` is padded with the
// block's zero point (weights of 0). The op wants block_size a power of 2
// of at least 16, A of rank 2 or more, and computes A x W only: a MatMul
// whose A has a known rank of 2 or more qualifies, a Gemm when transA = 0
// and alpha = 1 (transB only changes how W is read); its C (beta = 1) is
// added by an Add after the MatMulNBits, which is what Gemm computes.
// Others are left as they are, with a remark. The node keeps the MatMul's
// (Gemm's) name and result name; com.microsoft version 1 is imported.

struct Target {
  Node *node;
  unsigned operand;
  int64_t axis; ///< the reduction axis of the weight
};

/// A weight's blocks (Note [Weight blocks]): codes in the weight's own
/// layout, scales and zero points (asymmetric) at n * nb + b.
struct Blocks {
  int64_t K = 0, N = 0, nb = 0;
  std::vector<int64_t> q;
  std::vector<float> scales;
  std::vector<int64_t> zeros;
};

class Quantizer {
public:
  Quantizer(Model &m, const QuantizeWeightsOptions &o, QuantizeWeightsStatistics &s,
            std::vector<std::string> *remarks)
      : m_(m), opts_(o), stats_(s), remarks_(remarks) {}
  absl::StatusOr<bool> run();

private:
  std::optional<Blocks> quantize(Value *w, int64_t axis);
  Value *writeDq(Value *w, int64_t axis, const Blocks &bl, Graph &g, Node *pos);
  struct NBits {
    Value *b, *scales, *zeros;
  };
  NBits writeNBits(Value *w, const Blocks &bl, Graph &g, Node *pos);
  absl::Status replaceByNBits(const Target &t, const NBits &w, const Blocks &bl);
  /// Why MatMulNBits cannot compute `n` exactly, or "".
  std::string nbitsRefusal(Node &n);
  Model &m_;
  const QuantizeWeightsOptions &opts_;
  QuantizeWeightsStatistics &stats_;
  std::vector<std::string> *remarks_;
  double errSum_ = 0, errMax_ = 0;
  int64_t errCount_ = 0;
};

std::optional<Blocks> Quantizer::quantize(Value *w, int64_t axis) {
  const Tensor *t = w->initializer();
  auto vals = t->values<float>();
  if (!vals.ok()) return std::nullopt;
  const std::vector<int64_t> &dims = t->dims();
  Blocks bl;
  int64_t K = dims[axis], N = dims[1 - axis], B = (int64_t)opts_.block;
  int64_t nb = (K + B - 1) / B;
  bl.K = K, bl.N = N, bl.nb = nb;
  const bool sym = opts_.symmetric, four = opts_.bits == 4;
  const int64_t levels = four ? 15 : 255, qmax = four ? 7 : 127;
  // Element (k, n) of the weight, in its own layout.
  auto at = [&](int64_t k, int64_t n) { return axis == 0 ? k * N + n : n * K + k; };
  bl.q.resize(vals->size());
  bl.scales.resize(nb * N);
  bl.zeros.resize(sym ? 0 : nb * N);
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
      bl.scales[n * nb + b] = scale;
      if (!sym) bl.zeros[n * nb + b] = z;
      for (int64_t k = k0; k < k1; ++k) {
        float v = (*vals)[at(k, n)];
        int64_t r = (int64_t)std::nearbyint(v / scale) + z;
        r = sym ? std::clamp<int64_t>(r, -qmax, qmax) : std::clamp<int64_t>(r, 0, levels);
        bl.q[at(k, n)] = r;
        double err = std::fabs((double)(r - z) * scale - v);
        errSum_ += err, errMax_ = std::max(errMax_, err), ++errCount_;
      }
    }
  stats_.weightsQuantized += 1;
  stats_.bytesBefore += (int64_t)vals->size() * 4;
  return bl;
}

/// Codes packed low bits first, 4 or 8 bits each.
std::string packCodes(const std::vector<int64_t> &xs, bool four) {
  std::string bytes(four ? (xs.size() + 1) / 2 : xs.size(), '\0');
  for (size_t i = 0; i < xs.size(); ++i) {
    uint8_t u = (uint8_t)(xs[i] & (four ? 0xF : 0xFF));
    if (!four) bytes[i] = (char)u;
    else bytes[i / 2] = (char)((uint8_t)bytes[i / 2] | (i % 2 ? u << 4 : u));
  }
  return bytes;
}

Value *Quantizer::writeDq(Value *w, int64_t axis, const Blocks &bl, Graph &g, Node *pos) {
  const std::vector<int64_t> &dims = w->initializer()->dims();
  const bool sym = opts_.symmetric, four = opts_.bits == 4;
  int64_t B = (int64_t)opts_.block, nb = bl.nb, N = bl.N;
  DataType qt = four ? (sym ? DataType::Int4 : DataType::Uint4)
                     : (sym ? DataType::Int8 : DataType::Uint8);
  // The scale's layout: the weight's with dim `axis` counted in blocks.
  std::vector<float> scales(bl.scales.size());
  std::vector<int64_t> zeros(bl.zeros.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t b = 0; b < nb; ++b) {
      int64_t si = axis == 0 ? b * N + n : n * nb + b;
      scales[si] = bl.scales[n * nb + b];
      if (!sym) zeros[si] = bl.zeros[n * nb + b];
    }
  std::vector<int64_t> sdims = dims;
  sdims[axis] = nb;
  Builder b(g);
  b.setInsertionPoint(pos);
  std::string base = w->name().str();
  Value *qv = b.createInitializer(base + "_q", makeTensor(qt, dims, packCodes(bl.q, four)));
  Value *sv = b.createInitializer(base + "_scale", makeFloatTensor(sdims, scales));
  std::vector<Value *> ops{qv, sv};
  if (!sym)
    ops.push_back(b.createInitializer(base + "_zero", makeTensor(qt, sdims, packCodes(zeros, four))));
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
  stats_.bytesAfter += (int64_t)(four ? (bl.q.size() + 1) / 2 : bl.q.size()) +
                       (int64_t)scales.size() * 4 +
                       (int64_t)(four ? (zeros.size() + 1) / 2 : zeros.size());
  return dq->result(0);
}

Quantizer::NBits Quantizer::writeNBits(Value *w, const Blocks &bl, Graph &g, Node *pos) {
  const bool sym = opts_.symmetric, four = opts_.bits == 4;
  const int64_t bits = (int64_t)opts_.bits, B = (int64_t)opts_.block;
  const int64_t K = bl.K, N = bl.N, nb = bl.nb, mid = (int64_t)1 << (bits - 1);
  const int64_t axis = w->initializer()->dims()[0] == K ? 0 : 1;
  // Codes in [N, nb, B] order, the padding past K at the block's zero.
  std::vector<int64_t> codes(N * nb * B);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < nb * B; ++k) {
      int64_t zero = sym ? mid : bl.zeros[n * nb + k / B];
      int64_t q = k < K ? bl.q[axis == 0 ? k * N + n : n * K + k] + (sym ? mid : 0) : zero;
      codes[n * nb * B + k] = q;
    }
  Builder b(g);
  b.setInsertionPoint(pos);
  Context &ctx = m_.getContext();
  std::string base = w->name().str();
  std::vector<int64_t> bdims{N, nb, B * bits / 8}, sdims{N, nb};
  NBits r{b.createInitializer(base + "_nbits", makeTensor(DataType::Uint8, bdims,
                                                         packCodes(codes, four))),
          b.createInitializer(base + "_scale", makeFloatTensor(sdims, bl.scales)), nullptr};
  r.b->setType(ctx.getTensorType(DataType::Uint8, llvm::ArrayRef<int64_t>(bdims)));
  r.scales->setType(ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>(sdims)));
  int64_t zbytes = 0;
  if (!sym) {
    // Each row's zero points packed on their own (a row of an odd count of
    // 4-bit ones ends in half a byte).
    int64_t row = four ? (nb + 1) / 2 : nb;
    std::string zs;
    for (int64_t n = 0; n < N; ++n)
      zs += packCodes(std::vector<int64_t>(bl.zeros.begin() + n * nb,
                                           bl.zeros.begin() + (n + 1) * nb), four);
    std::vector<int64_t> zdims{N, row};
    r.zeros = b.createInitializer(base + "_zero", makeTensor(DataType::Uint8, zdims, zs));
    r.zeros->setType(ctx.getTensorType(DataType::Uint8, llvm::ArrayRef<int64_t>(zdims)));
    zbytes = (int64_t)zs.size();
  }
  stats_.bytesAfter += (int64_t)(codes.size() * bits / 8) + (int64_t)bl.scales.size() * 4 + zbytes;
  return r;
}

std::string Quantizer::nbitsRefusal(Node &n) {
  NodeContext c(n);
  if (n.opType() == "Gemm") {
    if (c.getInt("transA", 0)) return "transA = 1";
    if (c.getFloat("alpha", 1.0f) != 1.0f) return "alpha is not 1";
    if (n.numOperands() > 2 && n.operand(2) && c.getFloat("beta", 1.0f) != 1.0f)
      return "beta is not 1";
    return "";
  }
  if (staticRankOf(n.operand(0)) < 2) return "A is not known to have rank 2 or more";
  return "";
}

/// A node's name for remarks: its name, or its op and first result.
std::string describe(const Node &n) {
  std::string r = n.getGraph()->path() + " > node ";
  if (!n.name().empty()) return r + "\"" + n.name().str() + "\" (" + n.opType().str() + ")";
  return r + "(" + n.opType().str() + ") -> '" +
         (n.numResults() && n.result(0) ? n.result(0)->name().str() : std::string()) + "'";
}

absl::Status Quantizer::replaceByNBits(const Target &t, const NBits &w, const Blocks &bl) {
  Node &n = *t.node;
  Graph &g = *n.getGraph();
  Value *y = n.result(0);
  std::string name = y->name().str();
  // The MatMulNBits takes the result's name (and the MatMul's node name).
  if (absl::Status s = y->setName(g.freshName(name + "_f32")); !s.ok()) return s;
  Value *c = n.opType() == "Gemm" && n.numOperands() > 2 ? n.operand(2) : nullptr;
  std::vector<Value *> ops{n.operand(0), w.b, w.scales};
  if (w.zeros) ops.push_back(w.zeros);
  std::string mmStr = c ? g.freshName(name + "_mm").str() : name;
  auto mm = g.createNodeWithNames("MatMulNBits", ops, {llvm::StringRef(mmStr)}, &n, "com.microsoft");
  if (!mm.ok()) return mm.status();
  Node *q = *mm;
  q->setName(n.name());
  q->setAttr(intAttr("K", bl.K));
  q->setAttr(intAttr("N", bl.N));
  q->setAttr(intAttr("bits", (int64_t)opts_.bits));
  q->setAttr(intAttr("block_size", (int64_t)opts_.block));
  Value *out = q->result(0);
  out->setType(y->type());
  if (c) {
    auto add = g.createNodeWithNames("Add", {out, c}, {llvm::StringRef(name)}, &n);
    if (!add.ok()) return add.status();
    out = (*add)->result(0);
    out->setType(y->type());
  }
  y->replaceAllUsesWith(out);
  return n.erase();
}

absl::StatusOr<bool> Quantizer::run() {
  if (opts_.bits != 4 && opts_.bits != 8)
    return absl::InvalidArgumentError(
        absl::StrCat("quantize-weights: bits=", opts_.bits, " is not 4 or 8"));
  if (opts_.block < 2)
    return absl::InvalidArgumentError(
        absl::StrCat("quantize-weights: block=", opts_.block, " must be at least 2"));
  if (opts_.format != "dq" && opts_.format != "matmulnbits")
    return absl::InvalidArgumentError(absl::StrCat(
        "quantize-weights: format=", opts_.format, " is not dq or matmulnbits"));
  const bool nbits = opts_.format == "matmulnbits";
  if (nbits && (opts_.block < 16 || (opts_.block & (opts_.block - 1))))
    return absl::InvalidArgumentError(
        absl::StrCat("quantize-weights: block=", opts_.block,
                     ": MatMulNBits takes a power of 2 of at least 16"));
  std::set<std::string> ops;
  for (absl::string_view op : absl::StrSplit(opts_.ops, ',', absl::SkipEmpty()))
    ops.insert(std::string(op));
  for (const std::string &op : ops)
    if (op != "MatMul" && op != "Gemm")
      return absl::InvalidArgumentError(
          absl::StrCat("quantize-weights: ops: '", op, "' is not MatMul or Gemm"));
  if (nbits) {
    // MatMulNBits is version 1 of com.microsoft; an import of another
    // version would not say what the node means.
    int64_t ms = m_.opsetVersion("com.microsoft");
    if (ms > 1) {
      if (remarks_)
        remarks_->push_back(absl::StrCat("the model imports com.microsoft version ", ms,
                                         "; MatMulNBits is written for version 1: nothing "
                                         "quantized"));
      return false;
    }
  } else {
    // Blocked DequantizeLinear (block_size, int4) came with opset 21.
    int64_t opset = m_.opsetVersion(""),
            blocked = firstVersionWithAttribute("DequantizeLinear", "block_size");
    if (opset < blocked) {
      if (remarks_)
        remarks_->push_back(absl::StrCat("the model imports opset ", opset,
                                         "; blocked DequantizeLinear needs ", blocked,
                                         " (convert with --target-opset=", blocked,
                                         " first, or use format=matmulnbits): nothing "
                                         "quantized"));
      return false;
    }
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
    if (nbits) {
      std::string why = nbitsRefusal(n);
      if (!why.empty()) {
        if (remarks_)
          remarks_->push_back(absl::StrCat(describe(n), " kept: MatMulNBits computes A x W "
                                           "only and ", why));
        refused.insert(w);
        continue;
      }
    }
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
  std::map<Value *, std::pair<Blocks, NBits>> nbitsOf;
  bool changed = false;
  for (const Target &t : targets) {
    Node *front = &*m_.graph().nodes().begin();
    Value *w = t.node->operand(1);
    if (refused.count(w)) continue;
    if (nbits) {
      auto it = nbitsOf.find(w);
      if (it == nbitsOf.end()) {
        std::optional<Blocks> bl = quantize(w, t.axis);
        if (!bl) continue;
        NBits packed = writeNBits(w, *bl, m_.graph(), front);
        it = nbitsOf.emplace(w, std::make_pair(std::move(*bl), packed)).first;
      }
      if (absl::Status s = replaceByNBits(t, it->second.second, it->second.first); !s.ok())
        return s;
      done[w] = w;
      changed = true;
      continue;
    }
    Value *&dq = done[w];
    if (!dq) {
      std::optional<Blocks> bl = quantize(w, t.axis);
      if (!bl) continue;
      dq = writeDq(w, t.axis, *bl, m_.graph(), front);
    }
    t.node->setOperand(t.operand, dq);
    changed = true;
  }
  if (nbits && changed && m_.opsetVersion("com.microsoft") < 0)
    m_.opsetImports.push_back({"com.microsoft", 1, ""});
  // The float weights are gone from the file.
  m_.graph().removeInitializersIf([&](Value *v) { return done.count(v) && v->useEmpty(); });
  if (remarks_ && errCount_)
    remarks_->push_back(absl::StrCat(stats_.weightsQuantized, " weight(s) to ", opts_.bits,
                                     "-bit blocks of ", opts_.block,
                                     nbits ? " (MatMulNBits)" : "", ": ", stats_.bytesBefore,
                                     " -> ", stats_.bytesAfter, " bytes; weight error max ",
                                     errMax_, ", mean ", errSum_ / (double)errCount_));
  return changed;
}

} // namespace

absl::StatusOr<bool> quantizeWeights(Model &m, const QuantizeWeightsOptions &opts,
                                     QuantizeWeightsStatistics *stats,
                                     std::vector<std::string> *remarks) {
  if (opts.format == "matmulnbits") {
    // MatMulNBits needs A's rank (Note [MatMulNBits form]): inference first,
    // in memory; the outputs' declared types are put back.
    std::vector<std::pair<OutputInfo *, const Type *>> declared;
    for (unsigned i = 0; i < m.graph().numOutputs(); ++i)
      declared.push_back({&m.graph().outputInfo(i), m.graph().outputInfo(i).type});
    ShapeInferenceOptions io;
    io.outputsOnly = true;
    if (auto r = inferShapes(m, io); !r.ok()) return r.status();
    for (auto &[info, type] : declared) info->type = type;
  }
  QuantizeWeightsStatistics local;
  Quantizer q(m, opts, stats ? *stats : local, remarks);
  return q.run();
}

namespace {

/// The float weight W [K, N] of a MatMulNBits whose B, scales and zero
/// points are constants (Note [MatMulNBits contract], Contrib.cpp); nullopt
/// for one we do not take (other constants, bits, types, g_idx). Errors name
/// the node.
absl::StatusOr<std::optional<Tensor>> nbitsWeight(Node &n) {
  auto constant = [&](unsigned i) -> const Tensor * {
    return i < n.numOperands() && n.operand(i) ? storedConstantOf(n.operand(i)) : nullptr;
  };
  const Tensor *bt = constant(1), *st = constant(2), *zt = constant(3);
  bool zeroGiven = n.numOperands() > 3 && n.operand(3);
  if (!bt || !st || (zeroGiven && !zt) || (n.numOperands() > 4 && n.operand(4))) return std::nullopt;
  NodeContext c(n);
  int64_t K = c.getInt("K", 0), N = c.getInt("N", 0), bits = c.getInt("bits", 4),
          bs = c.getInt("block_size", 0);
  if ((bits != 4 && bits != 8) || st->dataType() != DataType::Float ||
      bt->dataType() != DataType::Uint8 || (zt && zt->dataType() != DataType::Uint8))
    return std::nullopt;
  auto bad = [&](std::string why) {
    return absl::InvalidArgumentError(absl::StrCat("dequantize-weights: ", describe(n), ": ",
                                                   why));
  };
  if (K <= 0 || N <= 0 || bs < 16 || (bs & (bs - 1)))
    return bad(absl::StrCat("K = ", K, ", N = ", N, ", block_size = ", bs,
                            " (K and N positive, block_size a power of 2 of 16 or more)"));
  int64_t nb = (K + bs - 1) / bs, blob = bs * bits / 8, zrow = (nb * bits + 7) / 8;
  auto b = bt->values<int64_t>();
  auto sc = st->values<float>();
  if (!b.ok()) return b.status();
  if (!sc.ok()) return sc.status();
  if (bt->dims() != std::vector<int64_t>{N, nb, blob})
    return bad(absl::StrCat("B is not uint8 [", N, ",", nb, ",", blob, "]"));
  if ((int64_t)sc->size() != N * nb)
    return bad(absl::StrCat("scales has ", sc->size(), " elements, not N * n_blocks = ", N * nb));
  std::vector<int64_t> z;
  if (zt) {
    auto zv = zt->values<int64_t>();
    if (!zv.ok()) return zv.status();
    if ((int64_t)zv->size() != N * zrow)
      return bad(absl::StrCat("zero_points has ", zv->size(), " elements, not ", N * zrow));
    z = std::move(*zv);
  }
  auto code = [&](const std::vector<int64_t> &bytes, int64_t base, int64_t i) {
    int64_t bit = i * bits;
    return (bytes[base + bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
  };
  std::vector<float> w(K * N);
  for (int64_t col = 0; col < N; ++col)
    for (int64_t k = 0; k < K; ++k) {
      int64_t blk = k / bs;
      int64_t zero = zt ? code(z, col * zrow, blk) : (int64_t)1 << (bits - 1);
      w[k * N + col] =
          (float)(code(*b, (col * nb + blk) * blob, k % bs) - zero) * (*sc)[col * nb + blk];
    }
  return std::optional<Tensor>(makeFloatTensor({K, N}, w));
}

/// Replaces the MatMulNBits `n` by MatMul(A, W) (+ its bias), keeping its
/// node and result names. W is named after B (w for w_nbits), and made once
/// per B and graph (`made`).
absl::Status unpackNBits(Model &m, Node &n, Tensor w, std::map<Value *, Value *> &made) {
  Graph &g = *n.getGraph();
  Value *y = n.result(0);
  std::string name = y->name().str();
  Value *bias = n.numOperands() > 5 ? n.operand(5) : nullptr;
  Value *&wv = made[n.operand(1)];
  if (!wv || wv->getGraph() != &g) {
    std::string base = n.operand(1)->name().str();
    if (endsWith(base, "_nbits")) base.resize(base.size() - 6);
    else base += "_f";
    wv = Builder(g).createInitializer(g.freshName(base).str(), std::move(w));
    wv->setType(m.getContext().getTensorType(
        DataType::Float, llvm::ArrayRef<int64_t>(wv->initializer()->dims())));
  }
  if (absl::Status s = y->setName(g.freshName(name + "_nbits")); !s.ok()) return s;
  std::string mmName = bias ? g.freshName(name + "_mm").str() : name;
  auto mm = g.createNodeWithNames("MatMul", {n.operand(0), wv}, {llvm::StringRef(mmName)}, &n);
  if (!mm.ok()) return mm.status();
  (*mm)->setName(n.name());
  Value *out = (*mm)->result(0);
  out->setType(y->type());
  if (bias) {
    auto add = g.createNodeWithNames("Add", {out, bias}, {llvm::StringRef(name)}, &n);
    if (!add.ok()) return add.status();
    out = (*add)->result(0);
    out->setType(y->type());
  }
  y->replaceAllUsesWith(out);
  return n.erase();
}

} // namespace

absl::StatusOr<bool> dequantizeWeights(Model &m, int64_t *dequantized) {
  bool changed = false;
  std::vector<Node *> dqs, nbits;
  m.walkGraphs([&](Graph *g) {
    if (g->parentFunction()) return;
    for (Node &n : g->nodes()) {
      if (n.opType() == "DequantizeLinear" && n.domain().empty() && n.numResults() == 1 &&
          n.result(0) && !n.result(0)->isGraphOutput())
        dqs.push_back(&n);
      if (n.opType() == "MatMulNBits" && n.domain() == "com.microsoft" && n.numResults() == 1 &&
          n.result(0) && n.numOperands() >= 3)
        nbits.push_back(&n);
    }
  });
  std::map<Value *, Value *> made;
  for (Node *n : nbits) {
    auto w = nbitsWeight(*n);
    if (!w.ok()) return w.status();
    if (!*w) continue;
    if (absl::Status s = unpackNBits(m, *n, std::move(**w), made); !s.ok()) return s;
    if (dequantized) ++*dequantized;
    changed = true;
  }
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
                    "blocked DequantizeLinear (opset 21) or com.microsoft.MatMulNBits "
                    "(weight-only)") {}
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
  Field<std::string> format_{*this, &QuantizeWeightsOptions::format, "format",
                             "dq (blocked DequantizeLinear, opset 21) or matmulnbits "
                             "(com.microsoft.MatMulNBits)",
                             "quantize-format"};
};
} // namespace

std::unique_ptr<Pass> createQuantizeWeightsPass() {
  return std::make_unique<QuantizeWeightsPass>();
}

std::unique_ptr<Pass> createDequantizeWeightsPass() {
  return makePass("dequantize-weights",
                  "Replace DequantizeLinear of constants by their float initializers, "
                  "com.microsoft.MatMulNBits by a MatMul of its float weight",
                  "weights dequantized", dequantizeWeights);
}

} // namespace onnxir
