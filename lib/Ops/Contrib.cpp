//===- Contrib.cpp - com.microsoft ops onnxir writes ----------------------===//
//
// com.microsoft (onnxruntime's contrib domain): MatMulNBits, which
// quantize-weights{format=matmulnbits} writes. Only the ops a pass of ours
// produces get a rule and a kernel here, so that inference, the verifier's
// type checks and the evaluator (eval-rewrites) read our own output; other
// contrib ops stay opaque as before.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

namespace onnxir {
namespace {

using namespace infer;
using namespace kernels;

//===--- MatMulNBits ---===//

// Note [MatMulNBits contract]
// onnxruntime's contrib op (docs/ContribOperators.md): Y = A x W (+ bias)
// with A float [..., K] and W [K, N] given transposed and block-quantized
// along K: B is uint8 [N, n_blocks, blob_size], n_blocks = ceil(K /
// block_size), blob_size = block_size * bits / 8, the codes of one block
// packed low bits first (4 bits: code 2j in the low nibble of byte j, 2j+1
// in the high one); the last block is padded past K. scales (A's type) are
// [N, n_blocks] or flat [N * n_blocks]; zero_points, when given as uint8,
// are packed the same way per row, [N, ceil(n_blocks * bits / 8)]; without
// them every block's zero point is 2^(bits-1). W[k, n] = (code - zero) *
// scale. Attributes K, N, bits, block_size (a power of 2, >= 16),
// accuracy_level (how onnxruntime may compute A internally; no effect on
// the value defined here). The kernel takes bits 2, 4 and 8 and uint8 zero
// points; float zero points and g_idx are refused (unsupported).

void matMulNBitsRule(InferCtx &c) {
  int64_t n = c.getInt("N", -1);
  auto a = c.inShape(0);
  if (!a || a->empty() || n < 0) return c.setTensor(0, c.inElem(0), std::nullopt);
  Dims out = *a;
  int64_t k = c.getInt("K", -1);
  auto kA = staticDim(out.back());
  if (kA && k >= 0 && *kA != k)
    c.disagree(absl::StrCat("A has K = ", *kA, " (its last dim) but the attribute K is ", k));
  out.back() = c.c(n);
  c.setTensor(0, c.inElem(0), out);
}

/// The code at position `i` of a low-first bit stream of `bits`-bit codes.
int64_t codeAt(const std::vector<int64_t> &bytes, int64_t base, int64_t i, int64_t bits) {
  int64_t bit = i * bits;
  return (bytes[base + bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
}

StatusOr<std::vector<Tensor>> kMatMulNBits(const KernelCall &c) {
  int64_t K = c.getInt("K", 0), N = c.getInt("N", 0), bits = c.getInt("bits", 4),
          bs = c.getInt("block_size", 0);
  if (bits != 2 && bits != 4 && bits != 8)
    return unsupported(absl::StrCat("MatMulNBits: bits = ", bits, " (the kernel takes 2, 4, 8)"));
  if (K <= 0 || N <= 0 || bs < 16 || (bs & (bs - 1)))
    return invalid(absl::StrCat("MatMulNBits: K = ", K, ", N = ", N, ", block_size = ", bs,
                                " (K and N positive, block_size a power of 2 of 16 or more)"));
  if (c.input(4)) return unsupported("MatMulNBits: g_idx (deprecated) is not evaluated");
  auto a = inputArr(c, 0), b = inputArr(c, 1), s = inputArr(c, 2);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (!s.ok()) return s.status();
  if (a->kind() != CK::F32 || s->dt != a->dt)
    return unsupported("MatMulNBits: A and scales of one float type (not double)");
  int64_t nb = (K + bs - 1) / bs, blob = bs * bits / 8;
  if (b->dt != DataType::Uint8 || b->dims != std::vector<int64_t>{N, nb, blob})
    return invalid(absl::StrCat("MatMulNBits: B must be uint8 [", N, ",", nb, ",", blob, "]"));
  if (s->size() != N * nb)
    return invalid(absl::StrCat("MatMulNBits: scales has ", s->size(), " elements, not N * ",
                                "n_blocks = ", N * nb));
  std::optional<Arr> z;
  int64_t zrow = (nb * bits + 7) / 8;
  if (c.input(3)) {
    auto zz = inputArr(c, 3);
    if (!zz.ok()) return zz.status();
    if (zz->dt != DataType::Uint8)
      return unsupported("MatMulNBits: zero points other than packed uint8");
    if (zz->size() != N * zrow)
      return invalid(absl::StrCat("MatMulNBits: zero_points has ", zz->size(),
                                  " elements, not N * ceil(n_blocks * bits / 8) = ", N * zrow));
    z = std::move(*zz);
  }
  if (a->rank() < 1 || a->dims.back() != K)
    return invalid(absl::StrCat("MatMulNBits: A's last dim is not K = ", K));
  Arr w = Arr::make(a->dt, {K, N});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      int64_t blk = k / bs;
      int64_t q = codeAt(b->i, (n * nb + blk) * blob, k % bs, bits);
      int64_t zero = z ? codeAt(z->i, n * zrow, blk, bits) : (int64_t)1 << (bits - 1);
      w.f[k * N + n] = (float)(q - zero) * s->f[n * nb + blk];
    }
  Tensor at = toTensor(*a), wt = toTensor(w);
  std::vector<const Tensor *> ins{&at, &wt};
  KernelCall mm("", "MatMul", 13);
  mm.inputs = ins;
  mm.maxOutputBytes = c.maxOutputBytes;
  auto y = evaluateKernel(mm);
  if (!y.ok()) return y.status();
  if (!c.input(5)) return y;
  auto bias = inputArr(c, 5);
  if (!bias.ok()) return bias.status();
  if (bias->dt != a->dt || bias->size() != N)
    return invalid(absl::StrCat("MatMulNBits: bias must be [", N, "] of A's type"));
  auto ya = fromTensor((*y)[0]);
  if (!ya.ok()) return ya.status();
  for (int64_t e = 0; e < ya->size(); ++e) ya->f[e] += bias->f[e % N];
  return one(*ya);
}

} // namespace

void registerMicrosoftOps(OpRegistrar &r) {
  r["MatMulNBits"].infer(matMulNBitsRule).kernel(kMatMulNBits);
}

} // namespace onnxir
