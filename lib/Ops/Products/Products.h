//===- Products.h - Matrix products, built twice (baseline and AVX2) ------===//
//
// The dense matrix products of the float kernels (Note [Matrix products] in
// Conv.cpp), compiled in Products.cpp once for baseline x86-64 and once more
// (ProductsAvx2.cpp) with AVX2 and FMA. KernelSupport.cpp chooses between
// them per call (Note [Host-tuned products]); kernels call matProduct and
// rowProduct there, never these directly. tileProduct and depthwisePlane
// serve only the evaluator's convolutions (convTuned in Conv.cpp, which
// chooses the build the same way). Private to lib/Ops.
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
} // namespace products
} // namespace kernels
} // namespace onnxir

#endif // ONNXIR_LIB_OPS_PRODUCTS_PRODUCTS_H
