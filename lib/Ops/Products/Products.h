//===- Products.h - Matrix products, built for baseline, AVX2, AVX-512 ----===//
//
// The dense matrix products of the float kernels (Note [Matrix products] in
// Conv.cpp), compiled in Products.cpp once for baseline x86-64 and once more
// (ProductsAvx2.cpp) with AVX2 and FMA, and where the compiler can once more
// for AVX-512 (ProductsAvx512.cpp). KernelSupport.cpp chooses between the
// first two per call (Note [Host-tuned products]); buildFor below adds the
// third for the evaluator (Note [AVX-512 products]). Kernels call
// matProduct and rowProduct there, or tunedMatProduct here, never the
// builds' functions directly; tileProduct and depthwisePlane serve only the
// evaluator's convolutions (convTuned in Conv.cpp, which switches on
// buildFor). Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_PRODUCTS_PRODUCTS_H
#define ONNXIR_LIB_OPS_PRODUCTS_PRODUCTS_H

#include <cstdint>

// One declaration list for both builds.
#define ONNXIR_PRODUCTS_DECLARE(NS)                                                       \
  namespace NS {                                                                          \
  /* o[M, N] = op(a) op(b), row-major; a is [M, K] ([K, M] with ta), b [K, N] */          \
  /* ([N, K] with tb). */                                                                 \
  void matProduct(const float *a, const float *b, float *o, int64_t M, int64_t K,         \
                  int64_t N, bool ta, bool tb);                                           \
  void matProduct(const double *a, const double *b, double *o, int64_t M, int64_t K,      \
                  int64_t N, bool ta, bool tb);                                           \
  /* y[N] = x[K] b[K, N] as a vector-matrix product. */                                   \
  void rowProduct(const float *x, const float *b, float *y, int64_t K, int64_t N);        \
  void rowProduct(const double *x, const double *b, double *y, int64_t K, int64_t N);     \
  /* o[i * ldo + j] = sum_k a[i, k] b[k, j]: a [M, K] and b [K, N] row-major, o a */       \
  /* window of rows ldo apart (a tile of a wider result). */                              \
  void tileProduct(const float *a, const float *b, float *o, int64_t M, int64_t K,        \
                   int64_t N, int64_t ldo);                                               \
  void tileProduct(const double *a, const double *b, double *o, int64_t M, int64_t K,     \
                   int64_t N, int64_t ldo);                                               \
  /* One plane of a depthwise 2-D convolution (Note [Depthwise planes], Conv.cpp). */     \
  void depthwisePlane(const float *x, const float *w, float bias, float *y,               \
                      const Plane2D &p);                                                  \
  void depthwisePlane(const double *x, const double *w, double bias, double *y,           \
                      const Plane2D &p);                                                  \
  }

namespace onnxir {
namespace kernels {
namespace products {
/// The window of a depthwise 2-D convolution over one [H, W] plane: a
/// [KH, KW] kernel with strides sy, sx, dilations dy, dx and the top and
/// left pads pt, pl, giving an [OH, OW] plane.
struct Plane2D {
  int64_t H, W, KH, KW, OH, OW, sy, sx, dy, dx, pt, pl;
};
ONNXIR_PRODUCTS_DECLARE(baseline)
#ifdef ONNXIR_AVX2_PRODUCTS
ONNXIR_PRODUCTS_DECLARE(avx2)
#endif
#ifdef ONNXIR_AVX512_PRODUCTS
ONNXIR_PRODUCTS_DECLARE(avx512)
#endif
} // namespace products
} // namespace kernels
} // namespace onnxir

// The choice of build for the kernels of lib/Ops (not for the builds
// themselves, which include this header too).
#ifndef ONNXIR_PRODUCTS_NS
#include "KernelSupport.h"
#include "onnxir/Ops/Kernels.h"

#include <cstdlib>
#include <cstring>

namespace onnxir {
namespace kernels {
namespace products {

// Note [AVX-512 products]
//   Where the CPU has AVX-512 (F, DQ, VL and BW), the evaluator's products
//   run on a third build of Products.cpp (ProductsAvx512.cpp): Eigen's
//   kernels on 16 floats a register instead of 8, as onnxruntime's MLAS
//   runs them on such a CPU. It is a hostTuned build like the AVX2 one
//   (Note [Host-tuned products] in KernelSupport.cpp): chosen only when that
//   note allows the AVX2 build (so ONNXIR_BASELINE_PRODUCTS still forces
//   the baseline), never for folding, whose bits stay the baseline's. Its
//   sums round and group differently again, within the same tolerance.
//   ONNXIR_NO_AVX512_PRODUCTS set to anything but 0 keeps the AVX2 build
//   (to measure one against the other, or to test the AVX2 path on an
//   AVX-512 machine). matrixProductsBuild still names the AVX2 build.

enum class Build { Baseline, Avx2, Avx512 };

/// The build a call with KernelCall::hostTuned = `hostTuned` runs the
/// products of Conv, MatMul and Gemm on.
inline Build buildFor(bool hostTuned) {
  static const Build tuned = [] {
    if (std::strcmp(matrixProductsBuild(true), "avx2-fma") != 0) return Build::Baseline;
#ifdef ONNXIR_AVX512_PRODUCTS
    const char *e = std::getenv("ONNXIR_NO_AVX512_PRODUCTS");
    bool off = e && *e && std::strcmp(e, "0") != 0;
    __builtin_cpu_init();
    if (!off && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
      return Build::Avx512;
#endif
    return Build::Avx2;
  }();
  return hostTuned ? tuned : Build::Baseline;
}

/// o = op(a) op(b) as kernels::matProduct, on the AVX-512 build where
/// buildFor allows it (otherwise exactly kernels::matProduct).
template <typename T>
void tunedMatProduct(bool hostTuned, const T *a, const T *b, T *o, int64_t M, int64_t K,
                     int64_t N, bool ta, bool tb) {
#ifdef ONNXIR_AVX512_PRODUCTS
  if (buildFor(hostTuned) == Build::Avx512)
    return avx512::matProduct(a, b, o, M, K, N, ta, tb);
#endif
  matProduct(hostTuned, a, b, o, M, K, N, ta, tb);
}

} // namespace products
} // namespace kernels
} // namespace onnxir
#endif // ONNXIR_PRODUCTS_NS

#endif // ONNXIR_LIB_OPS_PRODUCTS_PRODUCTS_H
