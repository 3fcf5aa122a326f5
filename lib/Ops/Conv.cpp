//===- Conv.cpp - Convolution and pooling ---------------------------------===//
//
// Conv: Conv ConvTranspose DeformConv, the quantized ConvInteger QLinearConv,
// MaxPool AveragePool LpPool, GlobalAveragePool GlobalMaxPool GlobalLpPool,
// MaxUnpool, Col2Im. The convolutions and pools share the window attributes
// (kernel_shape, strides, dilations, pads, auto_pad) and their output sizes:
// those helpers come first, then one section per op (or ops that share one
// implementation) with its rule, kernel, version adapters and registration
// (registerConvOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"
#include "Products/Products.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace onnxir {
namespace {
using namespace infer;
using namespace kernels;

//===--- Window attributes (Conv, ConvTranspose, the pools) ---===//

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string autoPad;
};

/// Reads the window attributes for `n` spatial dims; kernel from `kernelFrom`
/// (the weight shape) when the attribute is absent. False if inconsistent.
bool readWindow(InferCtx &c, size_t n, const std::optional<Dims> &weight, Window &w) {
  if (auto k = c.getInts("kernel_shape")) w.kernel = *k;
  else if (weight && weight->size() == n + 2) {
    for (size_t i = 0; i < n; ++i) {
      const DimExpr *d = (*weight)[i + 2];
      if (!d || !d->isConstant()) return false;
      w.kernel.push_back(d->value());
    }
  } else {
    return false;
  }
  w.strides = c.getInts("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = c.getInts("dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = c.getInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  w.autoPad = c.getString("auto_pad", "NOTSET");
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n ||
      w.pads.size() != 2 * n)
    return false;
  // Bounds that keep the window arithmetic below far from overflow.
  constexpr int64_t kMax = (int64_t)1 << 30;
  for (size_t i = 0; i < n; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0 || w.strides[i] > kMax ||
        w.dilations[i] > kMax || w.kernel[i] > kMax)
      return false;
  for (int64_t p : w.pads)
    if (p < -kMax || p > kMax) return false;
  return true;
}

/// Spatial output sizes of a convolution or pooling window.
std::optional<Dims> windowOut(InferCtx &c, const Dims &in, const Window &w, bool ceilMode) {
  Dims out;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    const DimExpr *x = in[i + 2];
    int64_t s = w.strides[i], ek = w.dilations[i] * (w.kernel[i] - 1) + 1;
    const DimExpr *o = nullptr;
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER") {
      o = dimCeilDiv(c.ctx, x, c.c(s));
    } else if (w.autoPad == "VALID") {
      o = dimCeilDiv(c.ctx, dimSub(c.ctx, x, c.c(ek - 1)), c.c(s));
    } else if (w.autoPad == "NOTSET") {
      const DimExpr *span = dimAdd(c.ctx, x, c.c(w.pads[i] + w.pads[i + w.kernel.size()] - ek));
      o = dimAdd(c.ctx, ceilMode ? dimCeilDiv(c.ctx, span, c.c(s)) : dimFloorDiv(c.ctx, span, c.c(s)),
                 c.c(1));
      // A window larger than the padded input (a negative static span):
      // ONNX's reference inference and onnxruntime divide truncating toward
      // zero, so a span above -stride still gives one output, not zero.
      if (!ceilMode && span && span->isConstant() && span->value() < 0)
        o = c.c(span->value() / s + 1);
      // With ceil_mode, a last window starting in the end padding is dropped.
      if (ceilMode && o && o->isConstant() && x && x->isConstant() &&
          (__int128)(o->value() - 1) * s >= (__int128)x->value() + w.pads[i])
        o = c.c(o->value() - 1);
    } else {
      return std::nullopt;
    }
    if (o && o->isConstant() && o->value() < 0) return std::nullopt;
    out.push_back(o);
  }
  return out;
}

//===--- Kernels: window geometry, patches, matrix products ---===//

// Note [Matrix products]
// Conv, ConvTranspose, DeformConv, ConvInteger, QLinearConv (and MatMul and
// Gemm in NN.cpp) turn their sums into one matrix product per image and group:
// im2col copies each window into a column (patches<true>), the product with
// the weights gives the output rows; ConvTranspose and Col2Im go the other
// way, adding columns back into the image (patches<false>). The products use
// Eigen: header-only (nothing to link, nothing the installed package needs),
// a Debian package (libeigen3-dev), and a cache-blocked, vectorized GEMM that
// is fast on one thread, which is what a reference evaluator and the constant
// folder run on. OpenBLAS would add a runtime library and its own threads.
// Eigen stays single-threaded (no OpenMP; EIGEN_DONT_PARALLELIZE).

template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using MatMap = Eigen::Map<RowMat<T>>;
template <typename T> using CMatMap = Eigen::Map<const RowMat<T>>;

int64_t product(llvm::ArrayRef<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

/// A window resolved for one kernel call: over an image of `img` spatial
/// dims, the windows start on the `grid` (a convolution's or pool's output;
/// ConvTranspose's input; Col2Im's blocks) at g * stride - padBegin.
struct Geom {
  size_t n = 0;
  std::vector<int64_t> img, grid, kernel, strides, dilations, padBegin, padEnd;
};

/// Reads strides, dilations and pads (`n` spatial dims) into `g`, refusing
/// what ONNX calls invalid. `dilationsAttr` false: the op has none.
Status readStridesPads(const KernelCall &c, size_t n, Geom &g, bool dilationsAttr = true) {
  std::string op = c.opType.str();
  g.n = n;
  g.strides = c.getInts("strides").value_or(std::vector<int64_t>(n, 1));
  g.dilations = dilationsAttr ? c.getInts("dilations").value_or(std::vector<int64_t>(n, 1))
                              : std::vector<int64_t>(n, 1);
  std::vector<int64_t> pads = c.getInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (g.strides.empty()) g.strides.assign(n, 1);
  if (g.dilations.empty()) g.dilations.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  auto count = [&](const char *name, size_t have, size_t want) {
    return invalid(absl::StrCat(op, ": attribute '", name, "' has ", have, " values, the ",
                                n, " spatial dims of the input need ", want));
  };
  if (g.strides.size() != n) return count("strides", g.strides.size(), n);
  if (g.dilations.size() != n) return count("dilations", g.dilations.size(), n);
  if (pads.size() != 2 * n) return count("pads", pads.size(), 2 * n);
  constexpr int64_t kMax = (int64_t)1 << 30;
  for (size_t i = 0; i < n; ++i) {
    if (g.strides[i] <= 0 || g.strides[i] > kMax)
      return invalid(absl::StrCat(op, ": strides[", i, "] is ", g.strides[i],
                                  "; strides must be positive"));
    if (g.dilations[i] <= 0 || g.dilations[i] > kMax)
      return invalid(absl::StrCat(op, ": dilations[", i, "] is ", g.dilations[i],
                                  "; dilations must be positive"));
  }
  for (size_t i = 0; i < 2 * n; ++i)
    if (pads[i] < 0 || pads[i] > kMax)
      return invalid(absl::StrCat(op, ": pads[", i, "] is ", pads[i],
                                  "; pads must not be negative"));
  g.padBegin.assign(pads.begin(), pads.begin() + n);
  g.padEnd.assign(pads.begin() + n, pads.end());
  return absl::OkStatus();
}

/// The kernel size: attribute kernel_shape, else `wKernel` (W's spatial
/// dims; empty for the pools, which need the attribute).
Status readKernelShape(const KernelCall &c, size_t n, llvm::ArrayRef<int64_t> wKernel, Geom &g) {
  std::string op = c.opType.str();
  if (auto k = c.getInts("kernel_shape")) g.kernel = *k;
  else if (!wKernel.empty()) g.kernel = wKernel.vec();
  else return invalid(op + ": attribute 'kernel_shape' is missing");
  if (g.kernel.size() != n)
    return invalid(absl::StrCat(op, ": attribute 'kernel_shape' has ", g.kernel.size(),
                                " values for ", n, " spatial dims"));
  for (size_t i = 0; i < n; ++i)
    if (g.kernel[i] <= 0 || g.kernel[i] > ((int64_t)1 << 30))
      return invalid(absl::StrCat(op, ": kernel_shape[", i, "] is ", g.kernel[i],
                                  "; it must be positive"));
  if (!wKernel.empty() && llvm::ArrayRef<int64_t>(g.kernel) != wKernel)
    return invalid(absl::StrCat(op, ": attribute 'kernel_shape' [",
                                absl::StrJoin(g.kernel, ","), "] is not W's spatial dims [",
                                absl::StrJoin(wKernel, ","), "]"));
  return absl::OkStatus();
}

/// The window of a convolution or pool over input spatial dims `img`: the
/// grid of outputs and the pads auto_pad gives (Note [Window sizes] of the
/// shape rule, windowOut: the same sizes). A window larger than the padded
/// input is refused.
Status readWindowGeom(const KernelCall &c, llvm::ArrayRef<int64_t> img,
                      llvm::ArrayRef<int64_t> wKernel, bool pool, Geom &g) {
  size_t n = img.size();
  std::string op = c.opType.str();
  if (Status s = readKernelShape(c, n, wKernel, g); !s.ok()) return s;
  bool dil = !(op == "AveragePool" && c.opset > 0 && c.opset < 19) &&
             !(op == "MaxPool" && c.opset > 0 && c.opset < 10) &&
             !(op == "LpPool" && c.opset > 0 && c.opset < 18);
  if (Status s = readStridesPads(c, n, g, dil); !s.ok()) return s;
  g.img = img.vec();
  std::string autoPad = c.getString("auto_pad", "NOTSET");
  bool ceilMode = pool && c.getInt("ceil_mode", 0) != 0;
  g.grid.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = img[i], s = g.strides[i], ek = g.dilations[i] * (g.kernel[i] - 1) + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
      g.padBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.padEnd[i] = total - g.padBegin[i];
      g.grid[i] = out;
    } else if (autoPad == "VALID" || autoPad == "NOTSET") {
      if (autoPad == "VALID") g.padBegin[i] = g.padEnd[i] = 0;
      int64_t span = in + g.padBegin[i] + g.padEnd[i] - ek;
      if (span < 0)
        return invalid(absl::StrCat(op, ": the window along spatial dim ", i, " (kernel ",
                                    g.kernel[i], ", dilation ", g.dilations[i], ": ", ek,
                                    ") is larger than the padded input (", in, " + pads ",
                                    g.padBegin[i], " + ", g.padEnd[i], ")"));
      int64_t out = ceilMode ? (span + s - 1) / s + 1 : span / s + 1;
      // With ceil_mode, a last window starting in the end padding is dropped.
      if (ceilMode && (out - 1) * s >= in + g.padBegin[i]) --out;
      g.grid[i] = out;
    } else {
      return invalid(op + ": attribute 'auto_pad' is '" + autoPad +
                     "', not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    }
  }
  return absl::OkStatus();
}

/// Gather (im2col): col[(c, k), q] = img[c, q * stride - padBegin + k *
/// dilation], 0 outside the image, for `C` channels of `g.img`, columns over
/// g.grid. Scatter (col2im): img[c, ...] += col[(c, k), q] where inside.
/// Only the grid rows (positions of all but the last grid dim, row-major)
/// [rowBegin, rowEnd) when given (-1: to the last): col then has (rowEnd -
/// rowBegin) * the last grid dim columns (Note [Bounded im2col]).
template <bool Gather, typename T>
void patches(const T *imgIn, T *imgOut, T *col, int64_t C, const Geom &g, int64_t rowBegin = 0,
             int64_t rowEnd = -1) {
  size_t n = g.n;
  int64_t K = product(g.kernel), GS = product(g.grid), IS = product(g.img);
  int64_t L = g.grid[n - 1], inLast = g.img[n - 1], sLast = g.strides[n - 1];
  if (GS == 0 || K == 0) return;
  if (rowEnd < 0) rowEnd = GS / L;
  int64_t width = (rowEnd - rowBegin) * L;
  std::vector<int64_t> kk(n), oo(n), first(n, 0);
  for (int64_t r = rowBegin, d = (int64_t)n - 2; d >= 0; --d) {
    first[d] = r % g.grid[d];
    r /= g.grid[d];
  }
  for (int64_t ch = 0; ch < C; ++ch) {
    for (int64_t kidx = 0; kidx < K; ++kidx) {
      for (int64_t r = kidx, d = (int64_t)n - 1; d >= 0; --d) {
        kk[d] = r % g.kernel[d];
        r /= g.kernel[d];
      }
      T *dst = col + (ch * K + kidx) * width;
      int64_t base = kk[n - 1] * g.dilations[n - 1] - g.padBegin[n - 1];
      // The grid positions along the last dim whose pixel is inside.
      int64_t lo = base >= 0 ? 0 : (-base + sLast - 1) / sLast;
      int64_t hi = inLast - base <= 0 ? 0 : (inLast - base + sLast - 1) / sLast;
      hi = std::min(hi, L);
      lo = std::min(lo, hi);
      oo = first;
      for (int64_t q = rowBegin; q < rowEnd; ++q, dst += L) {
        bool inside = true;
        int64_t off = 0;
        for (size_t d = 0; d + 1 < n; ++d) {
          int64_t p = oo[d] * g.strides[d] - g.padBegin[d] + kk[d] * g.dilations[d];
          if (p < 0 || p >= g.img[d]) {
            inside = false;
            break;
          }
          off = off * g.img[d] + p;
        }
        int64_t at = ch * IS + off * inLast + base;
        if constexpr (Gather) {
          if (!inside) {
            std::fill(dst, dst + L, T(0));
          } else {
            std::fill(dst, dst + lo, T(0));
            if (sLast == 1) std::copy(imgIn + (at + lo), imgIn + (at + hi), dst + lo);
            else
              for (int64_t j = lo; j < hi; ++j) dst[j] = imgIn[at + j * sLast];
            std::fill(dst + hi, dst + L, T(0));
          }
        } else if (inside) {
          for (int64_t j = lo; j < hi; ++j) imgOut[at + j * sLast] += dst[j];
        }
        for (int64_t d = (int64_t)n - 2; d >= 0; --d) {
          if (++oo[d] < g.grid[d]) break;
          oo[d] = 0;
        }
      }
    }
  }
}

/// True if the window is the identity (1x..x1 kernel, unit strides, no
/// pads): the image is its own column matrix.
bool pointwise(const Geom &g) {
  for (size_t i = 0; i < g.n; ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.padBegin[i] || g.padEnd[i] ||
        g.grid[i] != g.img[i])
      return false;
  return true;
}

// Note [Bounded im2col]
//   convCore's column matrix holds every window of a group: [C/group *
//   kernel, output positions], 115 MB for VGG-19's second layer (64
//   channels x 3 x 3 over 224 x 224), written, read once by the product and
//   freed, on every call: memory the run's peak carries and fresh pages it
//   faults in. The evaluator's convolutions (convTuned; hostTuned calls,
//   Note [Host-tuned products]) build it a tile at a time instead: whole rows
//   of the output grid, as many as fit in kColumnBytes but at least
//   kMinColumns columns (fewer makes the product re-pack the weights too
//   often for its work), each tile's product written straight into its
//   columns of Y (tileProduct: rows of Y stay OS apart) and the bias added
//   there while the tile is in cache. One buffer serves every tile, image
//   and group, and is not zero-filled (patches writes every element). The
//   tiles only split the product's columns, each output keeps its own sum
//   over the same C/group * kernel terms; Eigen's blocking of that sum may
//   still follow the tile's width, so the bits may differ from the untiled
//   product's: folding (hostTuned false) keeps convCore as it was, bit for
//   bit.
constexpr int64_t kColumnBytes = 4 << 20;
constexpr int64_t kMinColumns = 512;

// Note [Depthwise planes]
//   A 2-D convolution with one input channel per group (depthwise, with any
//   channel multiplier: MobileNet's, ShuffleNet's and PP-OCR's) has a column
//   matrix of kernel-size rows that one output row of weights multiplies: an
//   im2col copy of the image 9 (3 x 3) or 25 (5 x 5) times over for a
//   vector-matrix product. convTuned computes each output plane directly
//   instead (depthwisePlane in Products/, in every build of the products):
//   per output row, bias first, then each kernel tap's weight times the run
//   of its input row, the run clipped to the image so padding costs
//   nothing. No column matrix at all. The sum's order (bias first, taps in
//   order) differs from the product's, so the evaluator's bits may differ
//   from folding's, which keeps the product.

using products::Build;

template <typename T>
void tileProductOn(Build b, const T *a, const T *w, T *o, int64_t M, int64_t K, int64_t N,
                   int64_t ldo) {
#ifdef ONNXIR_AVX512_PRODUCTS
  if (b == Build::Avx512) return products::avx512::tileProduct(a, w, o, M, K, N, ldo);
#endif
#ifdef ONNXIR_AVX2_PRODUCTS
  if (b == Build::Avx2) return products::avx2::tileProduct(a, w, o, M, K, N, ldo);
#endif
  (void)b;
  products::baseline::tileProduct(a, w, o, M, K, N, ldo);
}

template <typename T>
void depthwisePlaneOn(Build b, const T *x, const T *w, T bias, T *y,
                      const products::Plane2D &p) {
#ifdef ONNXIR_AVX512_PRODUCTS
  if (b == Build::Avx512) return products::avx512::depthwisePlane(x, w, bias, y, p);
#endif
#ifdef ONNXIR_AVX2_PRODUCTS
  if (b == Build::Avx2) return products::avx2::depthwisePlane(x, w, bias, y, p);
#endif
  (void)b;
  products::baseline::depthwisePlane(x, w, bias, y, p);
}

/// The evaluator's convolution (hostTuned): y[N, M, grid] = conv(x, w) +
/// bias (bias may be null), as convCore then addBias compute it, with the
/// column matrix built a tile at a time (Note [Bounded im2col]) and
/// depthwise 2-D planes computed directly (Note [Depthwise planes]).
template <typename T>
void convTuned(const T *x, const T *w, const T *bias, T *y, int64_t N, int64_t C, int64_t M,
               int64_t group, const Geom &g) {
  int64_t Cg = C / group, Mg = M / group, K = product(g.kernel), IS = product(g.img),
          OS = product(g.grid), CK = Cg * K;
  if (OS == 0 || N == 0 || M == 0) return;
  Build build = products::buildFor(true);
  int64_t L = g.grid[g.n - 1], rows = OS / L;
  bool direct = pointwise(g);
  bool depthwise = !direct && g.n == 2 && Cg == 1;
  int64_t tileRows = rows;
  if (!direct && !depthwise) {
    int64_t cols = std::max<int64_t>(kColumnBytes / (std::max<int64_t>(CK, 1) * (int64_t)sizeof(T)),
                                     kMinColumns);
    tileRows = std::clamp<int64_t>(cols / L, 1, rows);
  }
  std::unique_ptr<T[]> col;
  if (!direct && !depthwise) col.reset(new T[(size_t)(CK * tileRows * L)]);
  products::Plane2D pl{};
  if (depthwise)
    pl = {g.img[0],       g.img[1],       g.kernel[0],    g.kernel[1],
          g.grid[0],      g.grid[1],      g.strides[0],   g.strides[1],
          g.dilations[0], g.dilations[1], g.padBegin[0], g.padBegin[1]};
  for (int64_t b = 0; b < N; ++b)
    for (int64_t gr = 0; gr < group; ++gr) {
      const T *xg = x + (b * C + gr * Cg) * IS;
      if (depthwise) {
        for (int64_t m = gr * Mg; m < (gr + 1) * Mg; ++m)
          depthwisePlaneOn<T>(build, xg, w + m * K, bias ? bias[m] : T(0), y + (b * M + m) * OS,
                              pl);
        continue;
      }
      for (int64_t r0 = 0; r0 < rows; r0 += tileRows) {
        int64_t r1 = std::min(rows, r0 + tileRows), width = (r1 - r0) * L;
        const T *cp = xg;
        if (!direct) {
          patches<true, T>(xg, nullptr, col.get(), Cg, g, r0, r1);
          cp = col.get();
        }
        T *yo = y + (b * M + gr * Mg) * OS + r0 * L;
        tileProductOn<T>(build, w + gr * Mg * CK, cp, yo, Mg, CK, width, OS);
        if (bias)
          for (int64_t m = 0; m < Mg; ++m) {
            T v = bias[gr * Mg + m];
            T *p = yo + m * OS;
            for (int64_t j = 0; j < width; ++j) p[j] += v;
          }
      }
    }
}

/// y[N, M, grid] = conv(x[N, C, img], w[M, C/group, kernel]) (no bias),
/// Note [Matrix products].
template <typename T>
void convCore(const T *x, const T *w, T *y, int64_t N, int64_t C, int64_t M, int64_t group,
              const Geom &g, bool hostTuned = false) {
  if constexpr (std::is_floating_point_v<T>)
    if (hostTuned) return convTuned<T>(x, w, nullptr, y, N, C, M, group, g);
  int64_t Cg = C / group, Mg = M / group, K = product(g.kernel), IS = product(g.img),
          OS = product(g.grid);
  bool direct = pointwise(g);
  std::vector<T> col(direct ? 0 : (size_t)(Cg * K * OS));
  for (int64_t b = 0; b < N; ++b)
    for (int64_t gr = 0; gr < group; ++gr) {
      const T *xg = x + (b * C + gr * Cg) * IS;
      const T *cp = xg;
      if (!direct) {
        patches<true, T>(xg, nullptr, col.data(), Cg, g);
        cp = col.data();
      }
      if constexpr (std::is_floating_point_v<T>) {
        // One output channel per group (depthwise): a vector-matrix product.
        if (Mg == 1) rowProduct(hostTuned, w + gr * Cg * K, cp, y + (b * M + gr) * OS, Cg * K, OS);
        else
          matProduct(hostTuned, w + gr * Mg * Cg * K, cp, y + (b * M + gr * Mg) * OS, Mg,
                     Cg * K, OS, false, false);
        continue;
      }
      if (Mg == 1) {
        using Row = Eigen::Matrix<T, 1, Eigen::Dynamic>;
        Eigen::Map<Row>(y + (b * M + gr) * OS, OS).noalias() =
            Eigen::Map<const Row>(w + gr * Cg * K, Cg * K) * CMatMap<T>(cp, Cg * K, OS);
        continue;
      }
      MatMap<T>(y + (b * M + gr * Mg) * OS, Mg, OS).noalias() =
          CMatMap<T>(w + gr * Mg * Cg * K, Mg, Cg * K) * CMatMap<T>(cp, Cg * K, OS);
    }
}

/// Checks X [N, C, ...] and W [M, C/group, ...] of a convolution; the group.
/// (Arr or InView: anything with dims and rank().)
template <typename A>
Status checkConvOperands(const KernelCall &c, const A &x, const A &w, int64_t &group) {
  std::string op = c.opType.str();
  if (x.rank() < 3)
    return invalid(absl::StrCat(op, ": input X has rank ", x.rank(),
                                "; it needs [N, C, spatial...] (rank 3 or more)"));
  if (w.rank() != x.rank())
    return invalid(absl::StrCat(op, ": W has rank ", w.rank(), " and X rank ", x.rank(),
                                "; they must agree"));
  group = c.getInt("group", 1);
  if (group <= 0) return invalid(absl::StrCat(op, ": attribute 'group' is ", group));
  if (x.dims[1] != w.dims[1] * group)
    return invalid(absl::StrCat(op, ": X has ", x.dims[1], " channels, but W has ", w.dims[1],
                                " per group and group is ", group));
  if (w.dims[0] % group)
    return invalid(absl::StrCat(op, ": W's ", w.dims[0], " output channels do not divide "
                                "into group ", group));
  return absl::OkStatus();
}

/// The optional 1-D per-output-channel operand #i (bias) of `m` entries.
template <typename A>
Status checkBias(const KernelCall &c, const std::optional<A> &b, int64_t m, const char *name) {
  if (b && (b->rank() != 1 || b->dims[0] != m))
    return invalid(absl::StrCat(c.opType.str(), ": ", name, " has shape [",
                                absl::StrJoin(b->dims, ","), "]; it needs [", m, "]"));
  return absl::OkStatus();
}

/// Adds bias[m] to each of the M output planes of N images.
template <typename T>
void addBias(T *y, const T *bias, int64_t N, int64_t M, int64_t plane) {
  for (int64_t b = 0; b < N; ++b)
    for (int64_t m = 0; m < M; ++m) {
      T v = bias[m];
      T *p = y + (b * M + m) * plane;
      for (int64_t j = 0; j < plane; ++j) p[j] += v;
    }
}

StatusOr<std::optional<Arr>> optionalInput(const KernelCall &c, unsigned i) {
  if (!c.input(i)) return std::optional<Arr>();
  auto a = inputArr(c, i);
  if (!a.ok()) return a.status();
  return std::optional<Arr>(std::move(*a));
}

bool isFloatKind(CK k) { return k == CK::F32 || k == CK::F64; }

/// The operands X (#0), W (#1) and the optional bias B (#2) of the float
/// convolution `op`: of a float type, and of one element type.
Status floatConvOperands(const KernelCall &c, const char *op, Arr &x, Arr &w,
                         std::optional<Arr> &b) {
  auto xr = inputArr(c, 0), wr = inputArr(c, 1);
  if (!xr.ok()) return xr.status();
  if (!wr.ok()) return wr.status();
  auto br = optionalInput(c, 2);
  if (!br.ok()) return br.status();
  if (!isFloatKind(xr->kind())) return unsupported(absl::StrCat(op, " of a non-float type"));
  if (wr->dt != xr->dt || (*br && (*br)->dt != xr->dt))
    return invalid(absl::StrCat(op, ": X, W and B have different element types"));
  x = std::move(*xr);
  w = std::move(*wr);
  b = std::move(*br);
  return absl::OkStatus();
}

//===--- Conv, ConvInteger, QLinearConv ---===//

void convRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  if (c.node.opType() == "ConvInteger") el = static_cast<int32_t>(DataType::Int32);
  if (c.node.opType() == "QLinearConv") el = c.inElem(7);
  unsigned wIdx = c.node.opType() == "QLinearConv" ? 3 : 1;
  auto x = c.inShape(0), w = c.inShape(wIdx);
  // X and W have the same rank.
  if (!x && w) x = Dims(w->size(), nullptr);
  if (!x || x->size() < 3) return c.setTensor(0, el, std::nullopt);
  size_t n = x->size() - 2;
  // X has group * W's input channels.
  if (c.node.opType() == "Conv" && w && w->size() == x->size() && (*x)[1] && (*w)[1] &&
      (*x)[1]->isConstant() && (*w)[1]->isConstant()) {
    int64_t group = c.getInt("group", 1);
    if (group > 0 && (*x)[1]->value() != (*w)[1]->value() * group)
      c.disagree("input X has " + std::to_string((*x)[1]->value()) + " channels, but W has " +
                 std::to_string((*w)[1]->value()) + " per group and group is " +
                 std::to_string(group));
  }
  Window win;
  if (!readWindow(c, n, w, win)) return c.setTensor(0, el, Dims(x->size(), nullptr));
  auto sp = windowOut(c, *x, win, false);
  if (!sp) return;
  Dims out = {(*x)[0], w && w->size() == n + 2 ? (*w)[0] : nullptr};
  out.insert(out.end(), sp->begin(), sp->end());
  c.setTensor(0, el, out);
}

/// Conv reads X, W and B in place and writes Y in its final bytes (Note
/// [Inputs read in place]).
template <typename T> StatusOr<std::vector<Tensor>> convFloat(const KernelCall &c) {
  DataType dt = c.input(0)->dataType();
  if (c.input(1)->dataType() != dt || (c.input(2) && c.input(2)->dataType() != dt))
    return invalid("Conv: X, W and B have different element types");
  auto xr = viewTensor<T>(*c.input(0)), wr = viewTensor<T>(*c.input(1));
  if (!xr.ok()) return xr.status();
  if (!wr.ok()) return wr.status();
  std::optional<InView<T>> b;
  if (const Tensor *bt = c.input(2)) {
    auto br = viewTensor<T>(*bt);
    if (!br.ok()) return br.status();
    b = std::move(*br);
  }
  const InView<T> &x = *xr, &w = *wr;
  int64_t group;
  if (Status s = checkConvOperands(c, x, w, group); !s.ok()) return s;
  int64_t N = x.dims[0], C = x.dims[1], M = w.dims[0];
  if (Status s = checkBias(c, b, M, "B"); !s.ok()) return s;
  Geom g;
  std::vector<int64_t> img(x.dims.begin() + 2, x.dims.end());
  std::vector<int64_t> wk(w.dims.begin() + 2, w.dims.end());
  if (Status s = readWindowGeom(c, img, wk, false, g); !s.ok()) return s;
  std::vector<int64_t> od = {N, M};
  od.insert(od.end(), g.grid.begin(), g.grid.end());
  if (Status s = checkOutputSize(c, x.dt, od); !s.ok()) return s;
  if (Status s = checkOutputSize(c, x.dt, {C / group * product(g.kernel), product(g.grid)});
      !s.ok())
    return s;
  OutBuf<T> out(x.dt, od);
  T *y = out.data();
  if (c.hostTuned) {
    convTuned<T>(x.data(), w.data(), b ? b->data() : nullptr, y, N, C, M, group, g);
  } else {
    convCore<T>(x.data(), w.data(), y, N, C, M, group, g);
    if (b) addBias<T>(y, b->data(), N, M, product(g.grid));
  }
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

StatusOr<std::vector<Tensor>> kConv(const KernelCall &c) {
  if (!c.input(0) || !c.input(1)) return invalid(absl::StrCat("missing input #", c.input(0) ? 1 : 0));
  CK k = computeKind(c.input(0)->dataType());
  if (k == CK::F32) return convFloat<float>(c);
  if (k == CK::F64) return convFloat<double>(c);
  return unsupported("Conv of a non-float type");
}

/// The zero point operand #i of an integer convolution: absent (0), a
/// scalar, or (`perChannel` > 0) one per output channel; as `perChannel` or
/// one value.
StatusOr<std::vector<int64_t>> zeroPoints(const KernelCall &c, unsigned i, int64_t perChannel,
                                          const char *name) {
  if (!c.input(i)) return std::vector<int64_t>{0};
  auto z = inputArr(c, i);
  if (!z.ok()) return z.status();
  if (z->kind() != CK::I64)
    return invalid(absl::StrCat(c.opType.str(), ": ", name, " is not an 8-bit integer"));
  int64_t n = z->size();
  if (n == 1 && z->rank() <= 1) return z->i;
  if (perChannel > 0 && z->rank() == 1 && n == perChannel) return z->i;
  return invalid(absl::StrCat(c.opType.str(), ": ", name, " has shape [",
                              absl::StrJoin(z->dims, ","), "]; it must be a scalar",
                              perChannel > 0 ? absl::StrCat(" or have ", perChannel,
                                                            " values (one per output channel)")
                                             : std::string()));
}

/// An integer convolution (ConvInteger, QLinearConv): x and w less their
/// zero points, summed in int64 (ONNX's int32 accumulation does not
/// overflow for 8-bit operands below 2^15 products). Operand numbers: x, w
/// and their zero points.
/// integerConv for 8-bit x and w (Note [Integer convolutions in double]):
/// their stored bytes less the zero points go straight into the double
/// operands of the product, without the int64 decoded copies (8 bytes per
/// uint8 activation, then 8 more for the double one). nullopt for anything
/// else, or data that does not match its dims: the general path runs or
/// reports it.
std::optional<StatusOr<Arr>> integerConv8(const KernelCall &c, unsigned xi, unsigned xzi,
                                          unsigned wi, unsigned wzi, int64_t &M, Geom &g) {
  const Tensor *xt = c.input(xi), *wt = c.input(wi);
  auto is8 = [](const Tensor *t) {
    return t && (t->dataType() == DataType::Int8 || t->dataType() == DataType::Uint8);
  };
  if (!is8(xt) || !is8(wt)) return std::nullopt;
  auto xb = byteView(*xt), wb = byteView(*wt);
  if (!xb || !wb) return std::nullopt;
  InView<double> x, w;
  x.dt = xt->dataType(), x.dims = xt->dims();
  w.dt = wt->dataType(), w.dims = wt->dims();
  int64_t group;
  if (Status s = checkConvOperands(c, x, w, group); !s.ok()) return StatusOr<Arr>(s);
  int64_t N = x.dims[0], C = x.dims[1];
  M = w.dims[0];
  auto xz = zeroPoints(c, xzi, 0, "x_zero_point");
  if (!xz.ok()) return StatusOr<Arr>(xz.status());
  auto wz = zeroPoints(c, wzi, M, "w_zero_point");
  if (!wz.ok()) return StatusOr<Arr>(wz.status());
  std::vector<int64_t> img(x.dims.begin() + 2, x.dims.end());
  std::vector<int64_t> wk(w.dims.begin() + 2, w.dims.end());
  if (Status s = readWindowGeom(c, img, wk, false, g); !s.ok()) return StatusOr<Arr>(s);
  std::vector<int64_t> od = {N, M};
  od.insert(od.end(), g.grid.begin(), g.grid.end());
  if (Status s = checkOutputSize(c, DataType::Int32, od); !s.ok()) return StatusOr<Arr>(s);
  if (Status s = checkOutputSize(c, DataType::Int64, {C / group * product(g.kernel),
                                                      product(g.grid)});
      !s.ok())
    return StatusOr<Arr>(s);
  auto load = [](const ByteView &b, DataType dt, int64_t n, std::vector<double> &to) {
    to.resize((size_t)n);
    const uint8_t *u = reinterpret_cast<const uint8_t *>(b.data);
    const int8_t *s8 = reinterpret_cast<const int8_t *>(b.data);
    if (dt == DataType::Uint8)
      for (int64_t k = 0; k < n; ++k) to[(size_t)k] = (double)u[k];
    else
      for (int64_t k = 0; k < n; ++k) to[(size_t)k] = (double)s8[k];
  };
  int64_t nx = numElementsOf(x.dims), nw = numElementsOf(w.dims);
  load(*xb, x.dt, nx, x.own);
  load(*wb, w.dt, nw, w.own);
  // The same integers as the general path's int64 subtraction: every value
  // and zero point is below 2^8, exact in double.
  double x0 = (double)(*xz)[0];
  for (double &v : x.own) v -= x0;
  int64_t per = nw / std::max<int64_t>(M, 1);
  for (int64_t m = 0; m < M; ++m) {
    double z = (double)(*wz)[wz->size() == 1 ? 0 : m];
    for (int64_t j = 0; j < per; ++j) w.own[(size_t)(m * per + j)] -= z;
  }
  Arr out = Arr::make(DataType::Int32, od);
  std::vector<double> yd(out.i.size());
  convCore<double>(x.own.data(), w.own.data(), yd.data(), N, C, M, group, g, c.hostTuned);
  for (size_t k = 0; k < yd.size(); ++k) out.i[k] = (int64_t)yd[k];
  return StatusOr<Arr>(std::move(out));
}

StatusOr<Arr> integerConv(const KernelCall &c, unsigned xi, unsigned xzi, unsigned wi,
                          unsigned wzi, int64_t &M, Geom &g) {
  if (auto r = integerConv8(c, xi, xzi, wi, wzi, M, g)) return std::move(*r);
  auto x = inputArr(c, xi), w = inputArr(c, wi);
  if (!x.ok()) return x.status();
  if (!w.ok()) return w.status();
  if (x->kind() != CK::I64 || w->kind() != CK::I64)
    return unsupported(c.opType.str() + " of a non-integer type");
  int64_t group;
  if (Status s = checkConvOperands(c, *x, *w, group); !s.ok()) return s;
  int64_t N = x->dims[0], C = x->dims[1];
  M = w->dims[0];
  auto xz = zeroPoints(c, xzi, 0, "x_zero_point");
  if (!xz.ok()) return xz.status();
  auto wz = zeroPoints(c, wzi, M, "w_zero_point");
  if (!wz.ok()) return wz.status();
  std::vector<int64_t> img(x->dims.begin() + 2, x->dims.end());
  std::vector<int64_t> wk(w->dims.begin() + 2, w->dims.end());
  if (Status s = readWindowGeom(c, img, wk, false, g); !s.ok()) return s;
  std::vector<int64_t> od = {N, M};
  od.insert(od.end(), g.grid.begin(), g.grid.end());
  if (Status s = checkOutputSize(c, DataType::Int32, od); !s.ok()) return s;
  if (Status s = checkOutputSize(c, DataType::Int64, {C / group * product(g.kernel),
                                                      product(g.grid)});
      !s.ok())
    return s;
  for (int64_t &v : x->i) v -= (*xz)[0];
  int64_t per = w->size() / std::max<int64_t>(M, 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < per; ++j) w->i[m * per + j] -= (*wz)[wz->size() == 1 ? 0 : m];
  Arr out = Arr::make(DataType::Int32, od);
  // Note [Integer convolutions in double]
  //   8-bit operands less their zero points lie in [-255, 255], so every
  //   product is below 2^16 in magnitude and every partial sum of fewer than
  //   2^37 of them is an integer below 2^53: double holds each exactly,
  //   whatever the order of the sums or the use of FMA. The products then
  //   run on the vectorized float GEMM (Note [Host-tuned products]) instead
  //   of Eigen's scalar int64 one, with the same integers out. Other integer
  //   types (not valid ONNX here, but not refused) keep the int64 path.
  auto is8 = [](DataType t) { return t == DataType::Int8 || t == DataType::Uint8; };
  if (is8(x->dt) && is8(w->dt)) {
    std::vector<double> xd(x->i.begin(), x->i.end()), wd(w->i.begin(), w->i.end());
    std::vector<double> yd(out.i.size());
    convCore<double>(xd.data(), wd.data(), yd.data(), N, C, M, group, g, c.hostTuned);
    for (size_t k = 0; k < yd.size(); ++k) out.i[k] = (int64_t)yd[k];
    return out;
  }
  convCore<int64_t>(x->i.data(), w->i.data(), out.i.data(), N, C, M, group, g);
  return out;
}

StatusOr<std::vector<Tensor>> kConvInteger(const KernelCall &c) {
  int64_t M;
  Geom g;
  auto out = integerConv(c, 0, 2, 1, 3, M, g);
  if (!out.ok()) return out.status();
  return one(*out);
}

/// QLinearConv: the integer convolution plus the int32 bias B, scaled by
/// x_scale * w_scale / y_scale (w_scale per tensor or per output channel),
/// rounded half to even, plus y_zero_point, saturated to y's type.
StatusOr<std::vector<Tensor>> kQLinearConv(const KernelCall &c) {
  int64_t M;
  Geom g;
  auto acc = integerConv(c, 0, 2, 3, 5, M, g);
  if (!acc.ok()) return acc.status();
  auto b = optionalInput(c, 8);
  if (!b.ok()) return b.status();
  if (Status s = checkBias(c, *b, M, "B"); !s.ok()) return s;
  if (*b && (*b)->kind() != CK::I64) return invalid("QLinearConv: B is not int32");
  auto scale = [&](unsigned i, int64_t per, const char *name) -> StatusOr<std::vector<float>> {
    auto a = inputArr(c, i);
    if (!a.ok()) return a.status();
    if (a->kind() != CK::F32) return invalid(absl::StrCat("QLinearConv: ", name, " is not float"));
    if (a->size() == 1 && a->rank() <= 1) return a->f;
    if (per > 0 && a->rank() == 1 && a->size() == per) return a->f;
    return invalid(absl::StrCat("QLinearConv: ", name, " has shape [",
                                absl::StrJoin(a->dims, ","), "]; it must be a scalar",
                                per > 0 ? " or have one value per output channel" : ""));
  };
  auto xs = scale(1, 0, "x_scale"), ws = scale(4, M, "w_scale"), ys = scale(6, 0, "y_scale");
  if (!xs.ok()) return xs.status();
  if (!ws.ok()) return ws.status();
  if (!ys.ok()) return ys.status();
  DataType yt = c.input(7) ? c.input(7)->dataType() : c.input(0)->dataType();
  int64_t lo, hi;
  switch (yt) {
  case DataType::Uint8: lo = 0, hi = 255; break;
  case DataType::Int8: lo = -128, hi = 127; break;
  default: return unsupported("QLinearConv to a type other than int8 and uint8");
  }
  auto yz = zeroPoints(c, 7, 0, "y_zero_point");
  if (!yz.ok()) return yz.status();
  Arr out = Arr::make(yt, acc->dims);
  int64_t N = acc->dims[0], plane = product(g.grid);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      // The requantization scale in float, as the operands are; the
      // product with the sum in double (the sum may exceed float's 24 bits).
      float f = (*xs)[0] * (*ws)[ws->size() == 1 ? 0 : m] / (*ys)[0];
      int64_t bias = *b ? (*b)->i[m] : 0;
      const int64_t *src = acc->i.data() + (n * M + m) * plane;
      int64_t *dst = out.i.data() + (n * M + m) * plane;
      for (int64_t j = 0; j < plane; ++j) {
        double v = std::nearbyint((double)(int32_t)(src[j] + bias) * (double)f) + (double)(*yz)[0];
        dst[j] = (int64_t)std::min<double>(std::max<double>(v, (double)lo), (double)hi);
      }
    }
  return one(out);
}

void registerConv(OpRegistrar &r) {
  r["Conv"].infer(convRule).kernel(kConv);
  r["ConvInteger"].infer(convRule).kernel(kConvInteger);
  r["QLinearConv"].infer(convRule).kernel(kQLinearConv);
}

//===--- ConvTranspose ---===//

void convTransposeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0), w = c.inShape(1);
  if (!x && w) x = Dims(w->size(), nullptr);
  if (!x || x->size() < 3) return c.setTensor(0, el, std::nullopt);
  size_t n = x->size() - 2;
  int64_t group = c.getInt("group", 1);
  // X has as many channels as W's first dim.
  if (w && w->size() == x->size()) {
    auto xc = staticDim((*x)[1]), wc = staticDim((*w)[0]);
    if (xc && wc && *xc != *wc)
      c.disagree("input X has " + std::to_string(*xc) + " channels, but W " + typeStr(c, 1) +
                 " has " + std::to_string(*wc) + " input channels (its dim 0)");
  }
  const DimExpr *ch =
      w && w->size() == n + 2 && group > 0 ? dimMul(c.ctx, (*w)[1], c.c(group)) : nullptr;
  Window win;
  if (!readWindow(c, n, w, win)) return c.setTensor(0, el, Dims(x->size(), nullptr));
  Dims out = {(*x)[0], ch};
  if (auto os = c.getInts("output_shape")) {
    if (os->size() != n) return;
    for (int64_t v : *os) out.push_back(c.c(v));
    return c.setTensor(0, el, out);
  }
  auto op = c.getInts("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (op.size() != n) return;
  for (int64_t p : op)
    if (p < -((int64_t)1 << 30) || p > ((int64_t)1 << 30)) return;
  for (size_t i = 0; i < n; ++i) {
    const DimExpr *xi = (*x)[i + 2];
    int64_t s = win.strides[i], ek = win.dilations[i] * (win.kernel[i] - 1) + 1;
    if (win.autoPad == "SAME_UPPER" || win.autoPad == "SAME_LOWER") {
      out.push_back(dimMul(c.ctx, xi, c.c(s)));
    } else {
      int64_t pads = win.autoPad == "VALID" ? 0 : win.pads[i] + win.pads[i + n];
      out.push_back(dimAdd(c.ctx, dimMul(c.ctx, dimSub(c.ctx, xi, c.c(1)), c.c(s)),
                           c.c(op[i] + ek - pads)));
    }
  }
  c.setTensor(0, el, out);
}

/// ConvTranspose: per image and group, the columns W_g^T X_g [Mg * K, in]
/// added back into the output (patches<false>), Note [Matrix products].
/// Output sizes as the shape rule: output_shape when given (the pads then
/// split the difference, SAME_UPPER putting the odd one at the end),
/// in * stride for SAME_*, else stride * (in - 1) + output_padding +
/// dilated kernel - pads.
StatusOr<std::vector<Tensor>> kConvTranspose(const KernelCall &c) {
  Arr x, w;
  std::optional<Arr> b;
  if (Status s = floatConvOperands(c, "ConvTranspose", x, w, b); !s.ok()) return s;
  if (x.rank() < 3)
    return invalid(absl::StrCat("ConvTranspose: input X has rank ", x.rank(),
                                "; it needs [N, C, spatial...] (rank 3 or more)"));
  if (w.rank() != x.rank())
    return invalid(absl::StrCat("ConvTranspose: W has rank ", w.rank(), " and X rank ",
                                x.rank(), "; they must agree"));
  int64_t group = c.getInt("group", 1);
  if (group <= 0) return invalid(absl::StrCat("ConvTranspose: attribute 'group' is ", group));
  int64_t N = x.dims[0], C = x.dims[1];
  if (w.dims[0] != C || C % group)
    return invalid(absl::StrCat("ConvTranspose: X has ", C, " channels and W ", w.dims[0],
                                " input channels (its dim 0), group ", group,
                                ": they must agree and divide by the group"));
  int64_t Mg = w.dims[1], M = Mg * group, Cg = C / group;
  if (Status s = checkBias(c, b, M, "B"); !s.ok()) return s;
  size_t n = x.rank() - 2;
  Geom g;
  std::vector<int64_t> wk(w.dims.begin() + 2, w.dims.end());
  if (Status s = readKernelShape(c, n, wk, g); !s.ok()) return s;
  if (Status s = readStridesPads(c, n, g); !s.ok()) return s;
  std::vector<int64_t> op = c.getInts("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (op.empty()) op.assign(n, 0);
  if (op.size() != n)
    return invalid(absl::StrCat("ConvTranspose: attribute 'output_padding' has ", op.size(),
                                " values for ", n, " spatial dims"));
  std::optional<std::vector<int64_t>> os = c.getInts("output_shape");
  if (os && os->empty()) os.reset();
  if (os && os->size() == n + 2) os->erase(os->begin(), os->begin() + 2);
  if (os && os->size() != n)
    return invalid(absl::StrCat("ConvTranspose: attribute 'output_shape' has ", os->size(),
                                " values for ", n, " spatial dims"));
  std::string autoPad = c.getString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return invalid("ConvTranspose: attribute 'auto_pad' is '" + autoPad + "'");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  g.grid.assign(x.dims.begin() + 2, x.dims.end());
  g.img.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (op[i] < 0 || op[i] > ((int64_t)1 << 30))
      return invalid(absl::StrCat("ConvTranspose: output_padding[", i, "] is ", op[i]));
    int64_t ek = g.dilations[i] * (g.kernel[i] - 1) + 1;
    int64_t full = g.strides[i] * (g.grid[i] - 1) + op[i] + ek;
    if (os || same) {
      int64_t out = os ? (*os)[i] : g.grid[i] * g.strides[i];
      if (out < 0)
        return invalid(absl::StrCat("ConvTranspose: output_shape[", i, "] is ", out));
      int64_t total = std::max<int64_t>(0, full - out);
      g.padBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.padEnd[i] = total - g.padBegin[i];
      g.img[i] = out;
    } else {
      if (autoPad == "VALID") g.padBegin[i] = g.padEnd[i] = 0;
      g.img[i] = full - g.padBegin[i] - g.padEnd[i];
      if (g.img[i] < 0)
        return invalid(absl::StrCat("ConvTranspose: the pads of spatial dim ", i, " (",
                                    g.padBegin[i], " + ", g.padEnd[i],
                                    ") exceed the full output (", full, ")"));
    }
  }
  std::vector<int64_t> od = {N, M};
  od.insert(od.end(), g.img.begin(), g.img.end());
  if (Status s = checkOutputSize(c, x.dt, od); !s.ok()) return s;
  int64_t K = product(g.kernel), IS = product(g.grid), OS = product(g.img);
  if (Status s = checkOutputSize(c, x.dt, {Mg * K, IS}); !s.ok()) return s;
  Arr out = Arr::make(x.dt, od);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x.template vec<T>().data(), *wp = w.template vec<T>().data();
    T *y = out.template vec<T>().data();
    std::vector<T> col((size_t)(Mg * K * IS));
    for (int64_t bi = 0; bi < N; ++bi)
      for (int64_t gr = 0; gr < group; ++gr) {
        products::tunedMatProduct(c.hostTuned, wp + gr * Cg * Mg * K, xp + (bi * C + gr * Cg) * IS,
                   col.data(), Mg * K, Cg, IS, true, false);
        patches<false, T>(nullptr, y + (bi * M + gr * Mg) * OS, col.data(), Mg, g);
      }
    if (b) addBias<T>(y, b->template vec<T>().data(), N, M, OS);
  };
  if (x.kind() == CK::F32) run(float{});
  else run(double{});
  return one(out);
}

/// Note [Validity checks]: explicit pads and an auto_pad other than NOTSET
/// are two answers to one question; ONNX refuses the node.
std::string convTransposeValidity(const NodeContext &c) {
  std::string autoPad = c.getString("auto_pad", "NOTSET");
  if (c.hasAttr("pads") && autoPad != "NOTSET")
    return absl::StrCat("attribute \"pads\" is given with auto_pad = ", autoPad,
                        " (pads need auto_pad NOTSET)");
  return "";
}

void registerConvTranspose(OpRegistrar &r) {
  r["ConvTranspose"].infer(convTransposeRule).kernel(kConvTranspose).validate(convTransposeValidity);
}

//===--- DeformConv ---===//

/// DeformConv (2-D): each kernel tap of each output samples X at its place
/// moved by `offset` (bilinear, zero outside the image, as GridSample with
/// align_corners), times `mask`; then the product with W as Conv.
StatusOr<std::vector<Tensor>> kDeformConv(const KernelCall &c) {
  auto x = inputArr(c, 0), w = inputArr(c, 1), off = inputArr(c, 2);
  if (!x.ok()) return x.status();
  if (!w.ok()) return w.status();
  if (!off.ok()) return off.status();
  auto b = optionalInput(c, 3);
  if (!b.ok()) return b.status();
  auto mask = optionalInput(c, 4);
  if (!mask.ok()) return mask.status();
  if (!isFloatKind(x->kind())) return unsupported("DeformConv of a non-float type");
  if (w->dt != x->dt || off->dt != x->dt || (*b && (*b)->dt != x->dt) ||
      (*mask && (*mask)->dt != x->dt))
    return invalid("DeformConv: X, W, offset, B and mask have different element types");
  int64_t group;
  if (Status s = checkConvOperands(c, *x, *w, group); !s.ok()) return s;
  if (x->rank() != 4) return unsupported("DeformConv of other than 2 spatial dims");
  int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], H = x->dims[2], W = x->dims[3];
  if (Status s = checkBias(c, *b, M, "B"); !s.ok()) return s;
  int64_t og = c.getInt("offset_group", 1);
  if (og <= 0 || C % og)
    return invalid(absl::StrCat("DeformConv: offset_group ", og, " does not divide the ", C,
                                " input channels"));
  Geom g;
  std::vector<int64_t> img = {H, W}, wk(w->dims.begin() + 2, w->dims.end());
  if (Status s = readWindowGeom(c, img, wk, false, g); !s.ok()) return s;
  int64_t K = product(g.kernel), OH = g.grid[0], OW = g.grid[1], OS = OH * OW;
  std::vector<int64_t> want = {N, og * 2 * K, OH, OW};
  if (off->dims != want)
    return invalid(absl::StrCat("DeformConv: offset has shape [", absl::StrJoin(off->dims, ","),
                                "]; it needs [", absl::StrJoin(want, ","), "]"));
  want[1] = og * K;
  if (*mask && (*mask)->dims != want)
    return invalid(absl::StrCat("DeformConv: mask has shape [",
                                absl::StrJoin((*mask)->dims, ","), "]; it needs [",
                                absl::StrJoin(want, ","), "]"));
  std::vector<int64_t> od = {N, M, OH, OW};
  if (Status s = checkOutputSize(c, x->dt, od); !s.ok()) return s;
  if (Status s = checkOutputSize(c, x->dt, {C * K, OS}); !s.ok()) return s;
  Arr out = Arr::make(x->dt, od);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T *xp = x->template vec<T>().data(), *op = off->template vec<T>().data();
    const T *mp = *mask ? (*mask)->template vec<T>().data() : nullptr;
    std::vector<T> col((size_t)(C * K * OS));
    int64_t Cg = C / group, Mg = M / group, Cog = C / og;
    for (int64_t bi = 0; bi < N; ++bi) {
      for (int64_t ch = 0; ch < C; ++ch) {
        const T *plane = xp + (bi * C + ch) * H * W;
        int64_t o = ch / Cog;
        auto at = [&](int64_t yy, int64_t xx) -> T {
          return yy >= 0 && yy < H && xx >= 0 && xx < W ? plane[yy * W + xx] : T(0);
        };
        for (int64_t kidx = 0; kidx < K; ++kidx) {
          int64_t ki = kidx / g.kernel[1], kj = kidx % g.kernel[1];
          const T *dy = op + ((bi * og + o) * K + kidx) * 2 * OS, *dx = dy + OS;
          const T *mk = mp ? mp + ((bi * og + o) * K + kidx) * OS : nullptr;
          T *dst = col.data() + (ch * K + kidx) * OS;
          for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
              int64_t q = oy * OW + ox;
              T py = (T)(oy * g.strides[0] - g.padBegin[0] + ki * g.dilations[0]) + dy[q];
              T px = (T)(ox * g.strides[1] - g.padBegin[1] + kj * g.dilations[1]) + dx[q];
              T fy = std::floor(py), fx = std::floor(px);
              T v = T(0);
              // Inside (a corner may be), NaN not.
              if (fy >= T(-1) && fy < (T)H && fx >= T(-1) && fx < (T)W) {
                T ly = py - fy, lx = px - fx;
                int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
                v = (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x0 + 1)) +
                    ly * ((1 - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1));
              }
              dst[q] = mk ? v * mk[q] : v;
            }
        }
      }
      for (int64_t gr = 0; gr < group; ++gr)
        products::tunedMatProduct(c.hostTuned, w->template vec<T>().data() + gr * Mg * Cg * K,
                   col.data() + gr * Cg * K * OS,
                   out.template vec<T>().data() + (bi * M + gr * Mg) * OS, Mg, Cg * K, OS,
                   false, false);
    }
    if (*b) addBias<T>(out.template vec<T>().data(), (*b)->template vec<T>().data(), N, M, OS);
  };
  if (x->kind() == CK::F32) run(float{});
  else run(double{});
  return one(out);
}

// X, W, offset, ...: sizes as Conv.
void registerDeformConv(OpRegistrar &r) { r["DeformConv"].infer(convRule).kernel(kDeformConv); }

//===--- MaxPool, AveragePool, LpPool ---===//

void poolRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x || x->size() < 3) {
    c.setTensor(0, el, std::nullopt);
    if (c.hasOutput(1)) c.setTensor(1, kInt64, std::nullopt);
    return;
  }
  size_t n = x->size() - 2;
  Window win;
  if (!readWindow(c, n, std::nullopt, win)) return;
  auto sp = windowOut(c, *x, win, c.getInt("ceil_mode", 0) != 0);
  if (!sp) return;
  Dims out = {(*x)[0], (*x)[1]};
  out.insert(out.end(), sp->begin(), sp->end());
  c.setTensor(0, el, out);
  if (c.hasOutput(1)) c.setTensor(1, kInt64, out);
}

enum class PoolKind { Max, Average, Lp };

/// Along one spatial dim, for each output position: the input positions of
/// its window that are inside (first[o] .. first[o + 1] in `pos`), and how
/// many lie inside the padded input (count_include_pad's divisor).
struct DimWindows {
  std::vector<int64_t> first, pos, padded;
};

DimWindows dimWindows(const Geom &g, size_t d) {
  DimWindows w;
  for (int64_t o = 0; o < g.grid[d]; ++o) {
    w.first.push_back((int64_t)w.pos.size());
    int64_t start = o * g.strides[d] - g.padBegin[d], cnt = 0;
    for (int64_t k = 0; k < g.kernel[d]; ++k) {
      int64_t p = start + k * g.dilations[d];
      if (p < g.img[d] + g.padEnd[d]) ++cnt;
      if (p >= 0 && p < g.img[d]) w.pos.push_back(p);
    }
    w.padded.push_back(cnt);
  }
  w.first.push_back((int64_t)w.pos.size());
  return w;
}

/// MaxPool, AveragePool, LpPool over N * C planes: for each output, the
/// window's inside elements (an odometer over all but the last spatial dim,
/// a loop over the last). MaxPool's Indices: the flat index into X of the
/// first maximum (storage_order 1: the spatial dims column-major).
template <PoolKind Kind, typename T>
void poolCore(const T *x, T *y, int64_t *idx, int64_t planes, const Geom &g, bool countPad,
              double p, bool colMajor) {
  size_t n = g.n;
  std::vector<DimWindows> dw;
  for (size_t d = 0; d < n; ++d) dw.push_back(dimWindows(g, d));
  int64_t IS = product(g.img), OS = product(g.grid);
  std::vector<int64_t> rowStride(n), colStride(n);
  for (int64_t d = (int64_t)n - 1, s = 1; d >= 0; --d) rowStride[d] = s, s *= g.img[d];
  for (size_t d = 0, s = 1; d < n; ++d) colStride[d] = (int64_t)s, s *= (size_t)g.img[d];
  std::vector<int64_t> o(n), k(n);
  const DimWindows &last = dw[n - 1];
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T *src = x + pl * IS;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t q = 0; q < OS; ++q) {
      // Window sizes per dim; empty along one dim: an empty window.
      int64_t inside = 1, padded = 1;
      for (size_t d = 0; d < n; ++d) {
        inside *= dw[d].first[o[d] + 1] - dw[d].first[o[d]];
        padded *= dw[d].padded[o[d]];
      }
      T best = std::numeric_limits<T>::lowest();
      int64_t bestAt = -1;
      double sum = 0;
      int64_t lb = last.first[o[n - 1]], le = last.first[o[n - 1] + 1];
      // One row of the window along the last dim, from offset `off`.
      auto row = [&](int64_t off) {
        for (int64_t j = lb; j < le; ++j) {
          T v = src[off + last.pos[j]];
          if constexpr (Kind == PoolKind::Max) {
            // The first maximum; NaN is never one.
            if (bestAt < 0 ? v == v : v > best) {
              best = v;
              bestAt = off + last.pos[j];
            }
          } else if constexpr (Kind == PoolKind::Average) {
            sum += (double)v;
          } else {
            double a = std::fabs((double)v);
            sum += p == 2 ? a * a : p == 1 ? a : std::pow(a, p);
          }
        }
      };
      if (inside > 0 && n == 1) {
        row(0);
      } else if (inside > 0 && n == 2) {
        for (int64_t a = dw[0].first[o[0]], ae = dw[0].first[o[0] + 1]; a < ae; ++a)
          row(dw[0].pos[a] * rowStride[0]);
      } else if (inside > 0) {
        std::fill(k.begin(), k.end(), 0);
        for (;;) {
          int64_t off = 0;
          for (size_t d = 0; d + 1 < n; ++d)
            off += dw[d].pos[dw[d].first[o[d]] + k[d]] * rowStride[d];
          row(off);
          int64_t d = (int64_t)n - 2;
          for (; d >= 0; --d) {
            if (++k[d] < dw[d].first[o[d] + 1] - dw[d].first[o[d]]) break;
            k[d] = 0;
          }
          if (d < 0) break;
        }
      }
      if constexpr (Kind == PoolKind::Max) {
        y[pl * OS + q] = best;
        if (idx) {
          int64_t flat = bestAt < 0 ? 0 : bestAt;
          if (colMajor) {
            int64_t cm = 0;
            for (size_t d = 0; d < n; ++d) cm += (flat / rowStride[d]) % g.img[d] * colStride[d];
            flat = cm;
          }
          idx[pl * OS + q] = pl * IS + flat;
        }
      } else if constexpr (Kind == PoolKind::Average) {
        y[pl * OS + q] = (T)(sum / (double)(countPad ? padded : inside));
      } else {
        y[pl * OS + q] = (T)(p == 2 ? std::sqrt(sum) : p == 1 ? sum : std::pow(sum, 1.0 / p));
      }
      for (int64_t d = (int64_t)n - 1; d >= 0; --d) {
        if (++o[d] < g.grid[d]) break;
        o[d] = 0;
      }
    }
  }
}

/// What pool() reads from the attributes, checked against X's type and dims.
struct PoolSetup {
  Geom g;
  std::vector<int64_t> od;
  double p = 2;
  bool countPad = false, wantIdx = false;
  int64_t so = 0, planes = 0;
};

Status poolSetup(const KernelCall &c, PoolKind kind, DataType dt, const std::vector<int64_t> &dims,
                 PoolSetup &s) {
  std::string op = c.opType.str();
  if (dims.size() < 3)
    return invalid(absl::StrCat(op, ": input X has rank ", dims.size(),
                                "; it needs [N, C, spatial...] (rank 3 or more)"));
  std::vector<int64_t> img(dims.begin() + 2, dims.end());
  if (Status st = readWindowGeom(c, img, {}, true, s.g); !st.ok()) return st;
  s.od = {dims[0], dims[1]};
  s.od.insert(s.od.end(), s.g.grid.begin(), s.g.grid.end());
  if (Status st = checkOutputSize(c, dt, s.od); !st.ok()) return st;
  if (kind == PoolKind::Lp) {
    s.p = c.opset > 0 && c.opset < 2 ? (double)c.getFloat("p", 2.0f) : (double)c.getInt("p", 2);
    if (!(s.p > 0))
      return invalid(absl::StrCat(op, ": attribute 'p' is ", s.p, "; it must be positive"));
  }
  s.countPad = kind == PoolKind::Average && c.getInt("count_include_pad", 0) != 0;
  s.so = kind == PoolKind::Max ? c.getInt("storage_order", 0) : 0;
  if (s.so != 0 && s.so != 1)
    return invalid(absl::StrCat(op, ": attribute 'storage_order' is ", s.so, ", not 0 or 1"));
  s.wantIdx = kind == PoolKind::Max && c.numOutputs > 1;
  s.planes = dims[0] * dims[1];
  return Status();
}

template <typename T>
void poolRun(PoolKind kind, const T *xp, T *yp, int64_t *ip, const PoolSetup &s) {
  if (kind == PoolKind::Max)
    poolCore<PoolKind::Max, T>(xp, yp, ip, s.planes, s.g, s.countPad, s.p, s.so == 1);
  else if (kind == PoolKind::Average)
    poolCore<PoolKind::Average, T>(xp, yp, ip, s.planes, s.g, s.countPad, s.p, s.so == 1);
  else
    poolCore<PoolKind::Lp, T>(xp, yp, ip, s.planes, s.g, s.countPad, s.p, s.so == 1);
}

/// pool() of a float or double X: read in place, Y written into its bytes
/// (Note [Inputs read in place]); the same poolCore, so the same values.
template <typename T>
StatusOr<std::vector<Tensor>> poolInPlace(const KernelCall &c, PoolKind kind, const Tensor &xt) {
  auto x = viewTensor<T>(xt);
  if (!x.ok()) return x.status();
  PoolSetup s;
  if (Status st = poolSetup(c, kind, x->dt, x->dims, s); !st.ok()) return st;
  OutBuf<T> out(x->dt, s.od);
  std::optional<Arr> ind;
  if (s.wantIdx) ind = Arr::make(DataType::Int64, s.od);
  poolRun<T>(kind, x->data(), out.data(), s.wantIdx ? ind->i.data() : nullptr, s);
  std::vector<Tensor> r;
  r.push_back(out.take());
  if (s.wantIdx) r.push_back(toTensor(*ind));
  return r;
}

// Note [Half pools a plane at a time]
//   A float16 or bfloat16 X is pooled in float (Note [Kernel numerics]).
//   Decoding all of X into an Arr, pooling into a float Arr and encoding
//   that held two float copies of the tensor besides its own bytes. The
//   pools act on each [N, C] plane alone, so they decode one plane from X's
//   stored bytes (byteView) into a float buffer, pool it with the same
//   poolCore/globalPoolCore, and encode its outputs straight into the
//   result's bytes, with the functions the decoding path uses: the same
//   bits, and one plane of float at a time. MaxPool's Indices, computed
//   for a plane alone, get the plane's offset added. X whose bytes cannot
//   be viewed (typed storage, a wrong byte count) takes the decoding path,
//   which reports what is wrong.

bool isHalf(const Tensor *t) {
  return t && (t->dataType() == DataType::Float16 || t->dataType() == DataType::BFloat16);
}

/// Elements [at, at + n) of a float16 or bfloat16 X stored as `v`, in float.
void decodeHalves(const ByteView &v, DataType dt, int64_t at, int64_t n, float *to) {
  const unsigned char *p = reinterpret_cast<const unsigned char *>(v.data) + 2 * at;
  for (int64_t k = 0; k < n; ++k) {
    uint16_t h = (uint16_t)(p[2 * k] | (p[2 * k + 1] << 8)); // little-endian, as stored
    to[k] = dt == DataType::Float16 ? halfToFloat(h) : bfloat16ToFloat(h);
  }
}

/// `n` floats encoded as float16 or bfloat16 into `to` (2 bytes each).
void encodeHalves(const float *from, int64_t n, DataType dt, char *to) {
  for (int64_t k = 0; k < n; ++k) {
    uint16_t h = dt == DataType::Float16 ? floatToHalf(from[k]) : floatToBFloat16(from[k]);
    to[2 * k] = (char)(h & 0xff);
    to[2 * k + 1] = (char)(h >> 8);
  }
}

/// pool() of a float16 or bfloat16 X, a plane at a time (Note [Half pools a
/// plane at a time]).
StatusOr<std::vector<Tensor>> poolHalves(const KernelCall &c, PoolKind kind, const Tensor &xt,
                                         const ByteView &v) {
  DataType dt = xt.dataType();
  PoolSetup s;
  if (Status st = poolSetup(c, kind, dt, xt.dims(), s); !st.ok()) return st;
  int64_t IS = product(s.g.img), OS = product(s.g.grid);
  PoolSetup plane = s;
  plane.planes = 1;
  std::vector<float> xp((size_t)IS), yp((size_t)OS);
  std::string raw((size_t)(s.planes * OS * 2), '\0');
  std::optional<Arr> ind;
  if (s.wantIdx) ind = Arr::make(DataType::Int64, s.od);
  for (int64_t pl = 0; pl < s.planes; ++pl) {
    decodeHalves(v, dt, pl * IS, IS, xp.data());
    int64_t *ip = s.wantIdx ? ind->i.data() + pl * OS : nullptr;
    poolRun<float>(kind, xp.data(), yp.data(), ip, plane);
    if (ip)
      for (int64_t q = 0; q < OS; ++q) ip[q] += pl * IS;
    encodeHalves(yp.data(), OS, dt, raw.data() + 2 * pl * OS);
  }
  std::vector<Tensor> r;
  r.push_back(makeTensor(dt, s.od, std::move(raw)));
  if (s.wantIdx) r.push_back(toTensor(*ind));
  return r;
}

StatusOr<std::vector<Tensor>> pool(const KernelCall &c, PoolKind kind) {
  std::string op = c.opType.str();
  if (const Tensor *xt = c.input(0); xt && xt->dataType() == DataType::Float)
    return poolInPlace<float>(c, kind, *xt);
  if (const Tensor *xt = c.input(0); xt && xt->dataType() == DataType::Double)
    return poolInPlace<double>(c, kind, *xt);
  if (const Tensor *xt = c.input(0); isHalf(xt))
    if (auto v = byteView(*xt)) return poolHalves(c, kind, *xt, *v);
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (kind == PoolKind::Max ? (x->kind() != CK::F32 && x->kind() != CK::F64 && x->kind() != CK::I64)
                            : !isFloatKind(x->kind()))
    return unsupported(op + " of type " + dataTypeName(x->dt).str());
  PoolSetup s;
  if (Status st = poolSetup(c, kind, x->dt, x->dims, s); !st.ok()) return st;
  Arr out = Arr::make(x->dt, s.od);
  std::optional<Arr> ind;
  if (s.wantIdx) ind = Arr::make(DataType::Int64, s.od);
  int64_t *ip = s.wantIdx ? ind->i.data() : nullptr;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    poolRun<T>(kind, x->template vec<T>().data(), out.template vec<T>().data(), ip, s);
  };
  switch (x->kind()) {
  case CK::F32: run(float{}); break;
  case CK::F64: run(double{}); break;
  default: run(int64_t{});
  }
  std::vector<Tensor> r;
  r.push_back(toTensor(out));
  if (s.wantIdx) r.push_back(toTensor(*ind));
  return r;
}

StatusOr<std::vector<Tensor>> kMaxPool(const KernelCall &c) { return pool(c, PoolKind::Max); }
StatusOr<std::vector<Tensor>> kAveragePool(const KernelCall &c) {
  return pool(c, PoolKind::Average);
}
StatusOr<std::vector<Tensor>> kLpPool(const KernelCall &c) { return pool(c, PoolKind::Lp); }

using adapters::refuse;

// MaxPool-10, AveragePool-10 and -19, LpPool-18 added ceil_mode or dilations.
absl::Status poolDown(Node &n, AdapterContext &c, llvm::StringRef op) {
  return adapters::olderFormOnly(n, c, op, {{"ceil_mode", AttrKind::Int, 0},
                                            {"dilations", AttrKind::Ints, 1}});
}
// AveragePool-7 added count_include_pad (default 0: the old behaviour).
absl::Status averagePoolDown7(Node &n, AdapterContext &c) {
  return adapters::dropZeroIntAttr(n, c, "count_include_pad", [&](int64_t v) {
    return absl::StrCat("count_include_pad=", v, ": opset ", c.to,
                        " never counts the padding in the average");
  });
}

// MaxPool-8 added the Indices result and storage_order (which only concerns
// Indices).
absl::Status maxPoolDown8(Node &n, AdapterContext &c) {
  if (auto so = adapters::intAttrOr(n, "storage_order", 0); !so.ok()) return so.status();
  if (absl::Status s = adapters::noNewOperands(n, c); !s.ok() || c.checkOnly) return s;
  n.removeAttr("storage_order");
  return absl::OkStatus();
}

// LpPool-2 and GlobalLpPool-2: p became an int (default 2 in both); LpPool-2
// also requires kernel_shape.
absl::Status lpPoolUp2(Node &n, AdapterContext &c) {
  if (n.opType() == "LpPool" && !n.getAttr("kernel_shape"))
    return refuse("no 'kernel_shape', which opset 2 requires");
  Attribute *p = n.getAttr("p");
  if (!p) return absl::OkStatus();
  if (p->isReference())
    return refuse(absl::StrCat("attribute 'p' refers to the function attribute '",
                               p->refAttrName.get(), "'; opset 2 needs an int"));
  if (p->kind() != AttrKind::Float || std::floor(p->f) != p->f || p->f < 1 || p->f > 1e9)
    return refuse(absl::StrCat("p=", p->kind() == AttrKind::Float ? p->f : 0.0,
                               " is not a positive integer, as opset 2 needs"));
  if (!c.checkOnly) p->setInt((int64_t)p->f);
  return absl::OkStatus();
}

absl::Status lpPoolDown2(Node &n, AdapterContext &c) {
  Attribute *p = n.getAttr("p");
  if (!p) return absl::OkStatus();
  if (auto v = adapters::intAttrOr(n, "p", 2); !v.ok()) return v.status();
  if (!c.checkOnly) p->setFloat((float)p->i);
  return absl::OkStatus();
}

void registerPools(OpRegistrar &r) {
  using adapters::noChange;
  r["MaxPool"].infer(poolRule).kernel(kMaxPool);
  r["AveragePool"].infer(poolRule).kernel(kAveragePool);
  r["LpPool"].infer(poolRule).kernel(kLpPool);
  r["AveragePool"].since(7).upgrade(noChange).downgrade(averagePoolDown7);
  r["AveragePool"].since(10).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "AveragePool"); });
  r["AveragePool"].since(19).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "AveragePool"); });
  r["MaxPool"].since(8).upgrade(noChange).downgrade(maxPoolDown8);
  r["MaxPool"].since(10).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "MaxPool"); });
  r["LpPool"].since(2).upgrade(lpPoolUp2).downgrade(lpPoolDown2);
  r["LpPool"].since(18).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return poolDown(n, c, "LpPool"); });
}

//===--- GlobalAveragePool, GlobalMaxPool, GlobalLpPool ---===//

void globalPoolRule(InferCtx &c) {
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return c.setTensor(0, c.inElem(0), std::nullopt);
  Dims out = {(*x)[0], (*x)[1]};
  out.resize(x->size(), c.c(1));
  c.setTensor(0, c.inElem(0), out);
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool on `planes` planes of
/// IS elements each.
template <typename T>
void globalPoolCore(PoolKind kind, const T *src, T *y, int64_t planes, int64_t IS, double p) {
  for (int64_t pl = 0; pl < planes; ++pl, src += IS) {
    if (kind == PoolKind::Max) {
      T best = std::numeric_limits<T>::lowest();
      bool any = false;
      for (int64_t j = 0; j < IS; ++j)
        if (any ? src[j] > best : src[j] == src[j]) best = src[j], any = true;
      y[pl] = best;
    } else if (kind == PoolKind::Average) {
      T sum = 0; // in the element's compute type, as the sums of ReduceMean
      for (int64_t j = 0; j < IS; ++j) sum += src[j];
      y[pl] = sum / (T)IS;
    } else {
      double sum = 0;
      for (int64_t j = 0; j < IS; ++j) {
        double a = std::fabs((double)src[j]);
        sum += p == 2 ? a * a : std::pow(a, p);
      }
      y[pl] = (T)(p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p));
    }
  }
}

/// The checks of globalPool on X's dims and the attributes: Y's dims and p.
Status globalPoolSetup(const KernelCall &c, PoolKind kind, const std::vector<int64_t> &dims,
                       std::vector<int64_t> &od, double &p) {
  std::string op = c.opType.str();
  if (dims.size() < 2)
    return invalid(absl::StrCat(op, ": input X has rank ", dims.size(), "; it needs [N, C, ...]"));
  p = 2;
  if (kind == PoolKind::Lp) {
    p = c.opset > 0 && c.opset < 2 ? (double)c.getFloat("p", 2.0f) : (double)c.getInt("p", 2);
    if (!(p > 0)) return invalid(absl::StrCat(op, ": attribute 'p' is ", p, "; it must be positive"));
  }
  od.assign(dims.size(), 1);
  od[0] = dims[0];
  od[1] = dims[1];
  return Status();
}

/// globalPool of a float or double X read in place, Y written into its
/// bytes (Note [Inputs read in place]).
template <typename T>
StatusOr<std::vector<Tensor>> globalPoolInPlace(const KernelCall &c, PoolKind kind,
                                                const Tensor &xt) {
  auto x = viewTensor<T>(xt);
  if (!x.ok()) return x.status();
  std::vector<int64_t> od;
  double p;
  if (Status s = globalPoolSetup(c, kind, x->dims, od, p); !s.ok()) return s;
  int64_t planes = od[0] * od[1];
  int64_t IS = numElementsOf(x->dims) / std::max<int64_t>(planes, 1);
  OutBuf<T> out(x->dt, od);
  globalPoolCore<T>(kind, x->data(), out.data(), planes, IS, p);
  std::vector<Tensor> r;
  r.push_back(out.take());
  return r;
}

/// globalPool of a float16 or bfloat16 X, a plane at a time (Note [Half
/// pools a plane at a time]).
StatusOr<std::vector<Tensor>> globalPoolHalves(const KernelCall &c, PoolKind kind,
                                               const Tensor &xt, const ByteView &v) {
  DataType dt = xt.dataType();
  std::vector<int64_t> od;
  double p;
  if (Status s = globalPoolSetup(c, kind, xt.dims(), od, p); !s.ok()) return s;
  int64_t planes = od[0] * od[1];
  int64_t IS = numElementsOf(xt.dims()) / std::max<int64_t>(planes, 1);
  std::vector<float> xp((size_t)IS);
  std::string raw((size_t)(planes * 2), '\0');
  for (int64_t pl = 0; pl < planes; ++pl) {
    decodeHalves(v, dt, pl * IS, IS, xp.data());
    float y;
    globalPoolCore<float>(kind, xp.data(), &y, 1, IS, p);
    encodeHalves(&y, 1, dt, raw.data() + 2 * pl);
  }
  std::vector<Tensor> r;
  r.push_back(makeTensor(dt, od, std::move(raw)));
  return r;
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one value per plane.
StatusOr<std::vector<Tensor>> globalPool(const KernelCall &c, PoolKind kind) {
  std::string op = c.opType.str();
  if (const Tensor *xt = c.input(0); xt && xt->dataType() == DataType::Float)
    return globalPoolInPlace<float>(c, kind, *xt);
  if (const Tensor *xt = c.input(0); xt && xt->dataType() == DataType::Double)
    return globalPoolInPlace<double>(c, kind, *xt);
  if (const Tensor *xt = c.input(0); isHalf(xt))
    if (auto v = byteView(*xt)) return globalPoolHalves(c, kind, *xt, *v);
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (!isFloatKind(x->kind())) return unsupported(op + " of type " + dataTypeName(x->dt).str());
  std::vector<int64_t> od;
  double p;
  if (Status s = globalPoolSetup(c, kind, x->dims, od, p); !s.ok()) return s;
  int64_t planes = od[0] * od[1], IS = x->size() / std::max<int64_t>(planes, 1);
  Arr out = Arr::make(x->dt, od);
  if (x->kind() == CK::F32)
    globalPoolCore<float>(kind, x->vec<float>().data(), out.vec<float>().data(), planes, IS, p);
  else
    globalPoolCore<double>(kind, x->vec<double>().data(), out.vec<double>().data(), planes, IS, p);
  return one(out);
}

StatusOr<std::vector<Tensor>> kGlobalMaxPool(const KernelCall &c) {
  return globalPool(c, PoolKind::Max);
}
StatusOr<std::vector<Tensor>> kGlobalAveragePool(const KernelCall &c) {
  return globalPool(c, PoolKind::Average);
}
StatusOr<std::vector<Tensor>> kGlobalLpPool(const KernelCall &c) {
  return globalPool(c, PoolKind::Lp);
}

void registerGlobalPools(OpRegistrar &r) {
  r["GlobalAveragePool"].infer(globalPoolRule).kernel(kGlobalAveragePool);
  r["GlobalMaxPool"].infer(globalPoolRule).kernel(kGlobalMaxPool);
  r["GlobalLpPool"].infer(globalPoolRule).kernel(kGlobalLpPool);
  // LpPool's step at opset 2 (the pools section).
  r["GlobalLpPool"].since(2).upgrade(lpPoolUp2).downgrade(lpPoolDown2);
}

//===--- MaxUnpool ---===//

void maxUnpoolRule(InferCtx &c) {
  auto x = c.inShape(0);
  int32_t el = c.inElem(0);
  if (c.hasInput(2)) {
    if (const Dims *d = c.inData(2)) return c.setTensor(0, el, *d);
    return c.setTensor(0, el, x ? std::optional<Dims>(Dims(x->size(), nullptr)) : std::nullopt);
  }
  auto k = c.getInts("kernel_shape");
  if (!x || !k || x->size() != k->size() + 2) return c.setTensor(0, el, std::nullopt);
  size_t n = k->size();
  auto st = c.getInts("strides").value_or(std::vector<int64_t>(n, 1));
  auto pads = c.getInts("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (st.size() != n || pads.size() != 2 * n) return;
  Dims o = {(*x)[0], (*x)[1]};
  for (size_t i = 0; i < n; ++i) {
    if (st[i] <= 0 || st[i] > (1 << 30) || (*k)[i] > (1 << 30) || pads[i] > (1 << 30) ||
        pads[i + n] > (1 << 30) || pads[i] < 0 || pads[i + n] < 0)
      return;
    o.push_back(dimAdd(c.ctx, dimMul(c.ctx, dimSub(c.ctx, (*x)[i + 2], c.c(1)), c.c(st[i])),
                       c.c((*k)[i] - pads[i] - pads[i + n])));
  }
  c.setTensor(0, el, o);
}

/// MaxUnpool: X's values at their Indices (flat, into the output of the
/// inferred shape (in - 1) * stride + kernel - pads), zero elsewhere; with
/// output_shape, that block is the origin corner of a zero output (ONNX's
/// reference).
StatusOr<std::vector<Tensor>> kMaxUnpool(const KernelCall &c) {
  auto x = inputArr(c, 0), ind = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!ind.ok()) return ind.status();
  if (x->kind() == CK::Str) return unsupported("MaxUnpool of strings");
  if (x->rank() < 3)
    return invalid(absl::StrCat("MaxUnpool: input X has rank ", x->rank(),
                                "; it needs [N, C, spatial...]"));
  if (ind->dims != x->dims)
    return invalid(absl::StrCat("MaxUnpool: I has shape [", absl::StrJoin(ind->dims, ","),
                                "] and X [", absl::StrJoin(x->dims, ","), "]; they must agree"));
  size_t n = x->rank() - 2;
  Geom g;
  if (Status s = readKernelShape(c, n, {}, g); !s.ok()) return s;
  if (Status s = readStridesPads(c, n, g, false); !s.ok()) return s;
  std::vector<int64_t> inferred = {x->dims[0], x->dims[1]};
  for (size_t i = 0; i < n; ++i) {
    int64_t v = (x->dims[i + 2] - 1) * g.strides[i] + g.kernel[i] - g.padBegin[i] - g.padEnd[i];
    if (v < 0)
      return invalid(absl::StrCat("MaxUnpool: the pads of spatial dim ", i,
                                  " exceed the unpooled size"));
    inferred.push_back(v);
  }
  std::vector<int64_t> od = inferred;
  if (c.input(2)) {
    auto s = intValues(*c.input(2));
    if (!s.ok()) return s.status();
    if (s->size() != od.size())
      return invalid(absl::StrCat("MaxUnpool: output_shape has ", s->size(),
                                  " values; the output has rank ", od.size()));
    for (size_t i = 0; i < od.size(); ++i)
      if ((*s)[i] < inferred[i])
        return invalid(absl::StrCat("MaxUnpool: output_shape[", i, "] is ", (*s)[i],
                                    ", below the unpooled size ", inferred[i]));
    od = *s;
  }
  if (Status s = checkOutputSize(c, x->dt, od); !s.ok()) return s;
  int64_t total = numElementsOf(inferred);
  Arr out = Arr::make(x->dt, od);
  // Flat index into `inferred` -> flat index into `od`.
  std::vector<int64_t> is = stridesOf(inferred), os = stridesOf(od);
  std::vector<int64_t> dst(x->size());
  for (int64_t j = 0; j < x->size(); ++j) {
    int64_t f = ind->i.empty() ? 0 : ind->i[j];
    if (ind->kind() != CK::I64 || f < 0 || f >= total)
      return invalid(absl::StrCat("MaxUnpool: index ", f, " (element ", j,
                                  " of I) is outside the unpooled output of ", total,
                                  " elements"));
    int64_t t = 0;
    for (size_t d = 0; d < inferred.size(); ++d) t += (f / is[d]) % inferred[d] * os[d];
    dst[j] = t;
  }
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &src = x->template vec<T>();
    auto &y = out.template vec<T>();
    for (int64_t j = 0; j < x->size(); ++j) y[dst[j]] = src[j];
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

void registerMaxUnpool(OpRegistrar &r) { r["MaxUnpool"].infer(maxUnpoolRule).kernel(kMaxUnpool); }

//===--- Col2Im ---===//

/// Col2Im: [N, C*prod(block), L] -> [N, C, image_shape...].
void col2imRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  const Dims *img = c.inData(1), *blk = c.inData(2);
  if (!img) {
    auto s = c.inShape(1);
    if (s && s->size() == 1 && (*s)[0] && (*s)[0]->isConstant() && (*s)[0]->value() >= 0 &&
        (*s)[0]->value() < 64)
      return c.setTensor(0, el, Dims((*s)[0]->value() + 2, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  const DimExpr *n = x && x->size() == 3 ? (*x)[0] : nullptr;
  const DimExpr *ch = nullptr;
  if (x && x->size() == 3 && blk && blk->size() == img->size()) {
    const DimExpr *p = c.c(1);
    for (const DimExpr *b : *blk) p = dimMul(c.ctx, p, b);
    if (p && p->isConstant() && p->value() > 0) ch = dimFloorDiv(c.ctx, (*x)[1], p);
  }
  Dims o{n, ch};
  o.insert(o.end(), img->begin(), img->end());
  c.setTensor(0, el, o);
}

/// Col2Im: the columns [N, C * prod(block_shape), L] added back into
/// images [N, C, image_shape...] (patches<false>); L is the number of block
/// positions.
StatusOr<std::vector<Tensor>> kCol2Im(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (!c.input(1) || !c.input(2)) return invalid("Col2Im: image_shape and block_shape are required");
  auto img = intValues(*c.input(1)), blk = intValues(*c.input(2));
  if (!img.ok()) return img.status();
  if (!blk.ok()) return blk.status();
  if (x->rank() != 3)
    return invalid(absl::StrCat("Col2Im: input has rank ", x->rank(), "; it needs [N, C * prod(block_shape), L]"));
  size_t n = img->size();
  if (n == 0 || blk->size() != n)
    return invalid(absl::StrCat("Col2Im: image_shape has ", n, " values and block_shape ",
                                blk->size(), "; they must agree (and not be empty)"));
  Geom g;
  if (Status s = readStridesPads(c, n, g); !s.ok()) return s;
  g.img = *img;
  g.kernel = *blk;
  g.grid.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (g.img[i] <= 0 || g.kernel[i] <= 0 || g.img[i] > ((int64_t)1 << 30) ||
        g.kernel[i] > ((int64_t)1 << 30))
      return invalid(absl::StrCat("Col2Im: image_shape[", i, "] is ", g.img[i],
                                  " and block_shape[", i, "] ", g.kernel[i],
                                  "; both must be positive"));
    int64_t ek = g.dilations[i] * (g.kernel[i] - 1) + 1;
    int64_t span = g.img[i] + g.padBegin[i] + g.padEnd[i] - ek;
    if (span < 0)
      return invalid(absl::StrCat("Col2Im: the block along dim ", i, " (", ek,
                                  " dilated) is larger than the padded image (", g.img[i],
                                  " + pads ", g.padBegin[i], " + ", g.padEnd[i], ")"));
    g.grid[i] = span / g.strides[i] + 1;
  }
  int64_t K = product(g.kernel), L = product(g.grid);
  if (x->dims[1] % K || x->dims[2] != L)
    return invalid(absl::StrCat("Col2Im: input has shape [", absl::StrJoin(x->dims, ","),
                                "]; with block_shape [", absl::StrJoin(g.kernel, ","),
                                "] dim 1 must be a multiple of ", K, " and dim 2 be ", L,
                                " (the block positions)"));
  int64_t N = x->dims[0], C = x->dims[1] / K, IS = product(g.img);
  std::vector<int64_t> od = {N, C};
  od.insert(od.end(), g.img.begin(), g.img.end());
  if (Status s = checkOutputSize(c, x->dt, od); !s.ok()) return s;
  Arr out = Arr::make(x->dt, od);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &src = x->template vec<T>();
    for (int64_t b = 0; b < N; ++b)
      patches<false, T>(nullptr, out.template vec<T>().data() + b * C * IS,
                        src.data() + b * C * K * L, C, g);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

void registerCol2Im(OpRegistrar &r) { r["Col2Im"].infer(col2imRule).kernel(kCol2Im); }

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerConvOps(OpRegistrar &r) {
  for (auto *reg : {registerConv, registerConvTranspose, registerDeformConv, registerPools,
                    registerGlobalPools, registerMaxUnpool, registerCol2Im})
    reg(r);
}

} // namespace onnxir
