//===- Products.cpp - Eigen matrix products (one build of three) ----------===//
//
// Compiled as it is for the baseline, and included by ProductsAvx2.cpp with
// ONNXIR_PRODUCTS_NS=avx2 under -mavx2 -mfma (Note [Host-tuned products] in
// KernelSupport.cpp) and by ProductsAvx512.cpp with ONNXIR_PRODUCTS_NS=avx512
// under AVX-512 (Note [AVX-512 products] in Products.h), each wrapper naming
// the namespace Eigen is renamed to (ONNXIR_PRODUCTS_EIGEN).
//
// Note [Two builds of Eigen in one program]
//   Eigen is templates: every function it instantiates here is emitted as a
//   weak (COMDAT) symbol, and the linker keeps ONE copy of each name for the
//   whole program. Built twice under the same names, the AVX2 copy of, say,
//   general_matrix_matrix_product<float...>::run could replace the baseline
//   one everywhere (an illegal instruction on a machine without AVX2), or
//   the baseline one the AVX2 one (no speed-up, silently). So the AVX2 build
//   renames Eigen's namespace (a macro, below) and includes nothing but
//   Eigen and <cstdint>: no other template of ours or of the standard library
//   is instantiated here out of line (checked with nm on the object, see
//   bench/README.md). The file is also kept out of the precompiled header,
//   which would bring the IR's headers in.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_PRODUCTS_NS
#define ONNXIR_PRODUCTS_NS baseline
#else
#define Eigen ONNXIR_PRODUCTS_EIGEN
#endif

#include "Products.h"

#include <Eigen/Core>

namespace onnxir {
namespace kernels {
namespace products {
namespace ONNXIR_PRODUCTS_NS {
namespace {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T>
void mat(const T *pa, const T *pb, T *po, int64_t M, int64_t K, int64_t N, bool ta, bool tb) {
  Eigen::Map<const Mat<T>> A(pa, ta ? K : M, ta ? M : K), B(pb, tb ? N : K, tb ? K : N);
  Eigen::Map<Mat<T>> O(po, M, N);
  if (!ta && !tb) O.noalias() = A * B;
  else if (ta && !tb) O.noalias() = A.transpose() * B;
  else if (!ta && tb) O.noalias() = A * B.transpose();
  else O.noalias() = A.transpose() * B.transpose();
}

template <typename T> void row(const T *x, const T *b, T *y, int64_t K, int64_t N) {
  // A row-vector type: Eigen picks its vector-matrix kernel only for one.
  using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;
  Eigen::Map<Row>(y, N).noalias() =
      Eigen::Map<const Row>(x, K) * Eigen::Map<const Mat<T>>(b, K, N);
}

template <typename T>
void tile(const T *pa, const T *pb, T *po, int64_t M, int64_t K, int64_t N, int64_t ldo) {
  Eigen::Map<const Mat<T>> A(pa, M, K), B(pb, K, N);
  Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>> O(po, M, N, Eigen::OuterStride<>(ldo));
  O.noalias() = A * B;
}

// Note [Depthwise planes] in Conv.cpp: output row by output row, each
// kernel tap adds w * (a run of an input row) to the row, which stays in
// the first-level cache; the taps' runs are clipped to the image, so
// padding costs nothing.
template <typename T> void plane(const T *x, const T *w, T bias, T *y, const Plane2D &p) {
  using Run = Eigen::Array<T, Eigen::Dynamic, 1>;
  for (int64_t oy = 0; oy < p.OH; ++oy) {
    T *yr = y + oy * p.OW;
    Eigen::Map<Run>(yr, p.OW).setConstant(bias);
    for (int64_t ky = 0; ky < p.KH; ++ky) {
      int64_t iy = oy * p.sy - p.pt + ky * p.dy;
      if (iy < 0 || iy >= p.H) continue;
      const T *xr = x + iy * p.W;
      for (int64_t kx = 0; kx < p.KW; ++kx) {
        // Output columns ox whose input column ox * sx + off is inside.
        int64_t off = kx * p.dx - p.pl;
        int64_t lo = off >= 0 ? 0 : (-off + p.sx - 1) / p.sx;
        int64_t hi = p.W - off <= 0 ? 0 : (p.W - off + p.sx - 1) / p.sx;
        if (hi > p.OW) hi = p.OW;
        if (lo >= hi) continue;
        T wv = w[ky * p.KW + kx];
        Eigen::Map<Run> out(yr + lo, hi - lo);
        if (p.sx == 1)
          out += wv * Eigen::Map<const Run>(xr + lo + off, hi - lo);
        else
          out += wv * Eigen::Map<const Run, 0, Eigen::InnerStride<>>(
                          xr + lo * p.sx + off, hi - lo, Eigen::InnerStride<>(p.sx));
      }
    }
  }
}

} // namespace

void matProduct(const float *a, const float *b, float *o, int64_t M, int64_t K, int64_t N,
                bool ta, bool tb) {
  mat(a, b, o, M, K, N, ta, tb);
}
void matProduct(const double *a, const double *b, double *o, int64_t M, int64_t K, int64_t N,
                bool ta, bool tb) {
  mat(a, b, o, M, K, N, ta, tb);
}
void rowProduct(const float *x, const float *b, float *y, int64_t K, int64_t N) {
  row(x, b, y, K, N);
}
void rowProduct(const double *x, const double *b, double *y, int64_t K, int64_t N) {
  row(x, b, y, K, N);
}
void tileProduct(const float *a, const float *b, float *o, int64_t M, int64_t K, int64_t N,
                 int64_t ldo) {
  tile(a, b, o, M, K, N, ldo);
}
void tileProduct(const double *a, const double *b, double *o, int64_t M, int64_t K, int64_t N,
                 int64_t ldo) {
  tile(a, b, o, M, K, N, ldo);
}
void depthwisePlane(const float *x, const float *w, float bias, float *y, const Plane2D &p) {
  plane(x, w, bias, y, p);
}
void depthwisePlane(const double *x, const double *w, double bias, double *y,
                    const Plane2D &p) {
  plane(x, w, bias, y, p);
}

} // namespace ONNXIR_PRODUCTS_NS
} // namespace products
} // namespace kernels
} // namespace onnxir
