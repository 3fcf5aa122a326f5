//===- Image.cpp - GridSample, AffineGrid, RoiAlign, MaxRoiPool, NMS ------===//
//
// Image: sampling and region ops on [N, C, spatial...] tensors. GridSample
// (-16: bilinear/nearest/bicubic on 4-D input; -20 on: linear/nearest/cubic
// on any spatial rank), AffineGrid (the sampling grid of a batch of affine
// maps), RoiAlign (-10 and -16's coordinate modes, avg and max), MaxRoiPool,
// NonMaxSuppression. Per op: its rule, its kernel, its version adapters, its
// registration.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h).
using namespace infer;
using namespace kernels;

//===--- GridSample -------------------------------------------------------===//

void gridSampleRule(InferCtx &c) {
  auto x = c.inShape(0), g = c.inShape(1);
  if (!x || !g || x->size() < 3 || g->size() != x->size())
    return c.setTensor(0, c.inElem(0),
                       x ? std::optional<Dims>(Dims(x->size(), nullptr)) : std::nullopt);
  Dims o = {(*x)[0], (*x)[1]};
  o.insert(o.end(), g->begin() + 1, g->end() - 1);
  c.setTensor(0, c.inElem(0), o);
}

// Note [GridSample coordinates]
//   A grid value n in [-1, 1] names a point of a spatial axis of length L:
//   with align_corners, -1 and 1 are the centres of the first and last
//   pixels, x = (n + 1) / 2 * (L - 1); without, they are the outer edges of
//   those pixels, x = ((n + 1) * L - 1) / 2. The grid's last axis lists the
//   coordinates innermost axis first (x, y, z for W, H, D). A point outside
//   the axis's border ([0, L-1] with align_corners, else [-0.5, L-0.5]) is
//   clamped to [0, L-1] (padding "border") or reflected at the border until
//   inside ("reflection"); "zeros" leaves it. The interpolation then reads
//   pixels around it (nearest: the point rounded half to even; linear: 2 per
//   axis; cubic: 4 per axis, Keys' kernel with a = -0.75), and a pixel index
//   outside [0, L) reads 0 (zeros), the clamped index (border) or the
//   reflected one (reflection). Cubic moves no point, it pads each of its 16
//   pixels alone, as onnxruntime and PyTorch do (ONNX's reference clamps or
//   reflects the point first; the two differ for points outside the border).

enum class GsMode { Nearest, Linear, Cubic };
enum class GsPad { Zeros, Border, Reflection };

double gsReflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = (int64_t)(dx / range);
    double r = dx - (double)n * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = (int64_t)(dx / range);
    double r = dx - (double)n * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubicCoeffs(double t, double w[4]) {
  constexpr double a = -0.75;
  double x = std::fabs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

StatusOr<std::vector<Tensor>> kGridSample(const KernelCall &c) {
  auto x = inputArr(c, 0), g = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!g.ok()) return g.status();
  bool v20 = c.opset <= 0 || c.opset >= 20;
  std::string ms = c.getString("mode", v20 ? "linear" : "bilinear");
  std::string ps = c.getString("padding_mode", "zeros");
  bool align = c.getInt("align_corners", 0) != 0;
  GsMode mode;
  if (ms == "nearest") mode = GsMode::Nearest;
  else if (ms == (v20 ? "linear" : "bilinear")) mode = GsMode::Linear;
  else if (ms == (v20 ? "cubic" : "bicubic")) mode = GsMode::Cubic;
  else
    return invalid(absl::StrCat("GridSample: attribute mode '", ms, "' is not one of nearest, ",
                                v20 ? "linear, cubic" : "bilinear, bicubic"));
  GsPad pad;
  if (ps == "zeros") pad = GsPad::Zeros;
  else if (ps == "border") pad = GsPad::Border;
  else if (ps == "reflection") pad = GsPad::Reflection;
  else
    return invalid(absl::StrCat("GridSample: attribute padding_mode '", ps,
                                "' is not one of zeros, border, reflection"));
  int64_t rank = x->rank(), r = rank - 2;
  if (rank < 3 || (!v20 && rank != 4))
    return invalid(absl::StrCat("GridSample: input X has rank ", rank, "; it must be ",
                                v20 ? "at least 3" : "4"));
  if (g->rank() != rank || g->dims[0] != x->dims[0] || g->dims.back() != r)
    return invalid(absl::StrCat("GridSample: grid must be [N, spatial..., ", r,
                                "] with X's N and rank"));
  if (g->kind() != CK::F32 && g->kind() != CK::F64) return invalid("GridSample: grid not float");
  if (mode != GsMode::Nearest && x->kind() != CK::F32 && x->kind() != CK::F64)
    return unsupported("GridSample: linear and cubic modes of an integer X");
  int64_t N = x->dims[0], C = x->dims[1];
  std::vector<int64_t> od = {N, C};
  od.insert(od.end(), g->dims.begin() + 1, g->dims.end() - 1);
  Status sz = checkOutputSize(c, x->dt, od);
  if (!sz.ok()) return sz;
  auto gd = convertArr(*g, DataType::Double);
  if (!gd.ok()) return gd.status();
  const std::vector<double> &grid = gd->d;
  std::vector<int64_t> in(x->dims.begin() + 2, x->dims.end());
  int64_t inSize = 1, outSize = 1;
  for (int64_t d : in) inSize *= d;
  for (size_t k = 2; k < od.size(); ++k) outSize *= od[k];
  std::vector<int64_t> inStride(r, 1);
  for (int64_t k = r - 2; k >= 0; --k) inStride[k] = inStride[k + 1] * in[k + 1];
  std::vector<double> lo(r), hi(r);
  for (int64_t k = 0; k < r; ++k) {
    lo[k] = align ? 0.0 : -0.5;
    hi[k] = align ? (double)in[k] - 1 : (double)in[k] - 0.5;
  }
  // Index along axis k after padding; -1 reads zero.
  auto padIndex = [&](int64_t i, int64_t k) -> int64_t {
    if (i >= 0 && i < in[k]) return i;
    if (pad == GsPad::Zeros) return -1;
    if (pad == GsPad::Border) return std::clamp<int64_t>(i, 0, in[k] - 1);
    return std::clamp<int64_t>((int64_t)gsReflect((double)i, lo[k], hi[k]), 0, in[k] - 1);
  };
  int64_t taps = mode == GsMode::Nearest ? 1 : mode == GsMode::Linear ? 2 : 4;
  int64_t nCorners = 1;
  for (int64_t k = 0; k < r; ++k) nCorners *= taps;
  Arr out = Arr::make(x->dt, od);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> &xv = x->template vec<T>();
    std::vector<T> &ov = out.template vec<T>();
    // Per output point: for each corner, an input offset (-1: zero) and a weight.
    std::vector<int64_t> idx(r * taps);
    std::vector<double> w(r * taps);
    std::vector<int64_t> offs(nCorners);
    std::vector<double> wts(nCorners);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < outSize; ++p) {
        const double *gp = grid.data() + (n * outSize + p) * r;
        for (int64_t k = 0; k < r; ++k) {
          double v = gp[r - 1 - k], L = (double)in[k];
          double xc = align ? (v + 1) / 2 * (L - 1) : ((v + 1) * L - 1) / 2;
          // NaN reads nothing; far points stay far but within int64.
          xc = std::isnan(xc) ? -1e12 : std::clamp(xc, -1e12, 1e12);
          if (mode == GsMode::Nearest) xc = std::nearbyint(xc);
          if (mode != GsMode::Cubic && (xc < lo[k] || xc > hi[k])) {
            if (pad == GsPad::Border) xc = std::clamp(xc, 0.0, L - 1);
            else if (pad == GsPad::Reflection) xc = gsReflect(xc, lo[k], hi[k]);
          }
          if (mode == GsMode::Nearest) {
            idx[k] = padIndex((int64_t)xc, k);
            w[k] = 1;
          } else {
            double f = std::floor(xc), t = xc - f;
            int64_t i0 = (int64_t)f;
            if (mode == GsMode::Linear) {
              idx[k * 2] = padIndex(i0, k);
              idx[k * 2 + 1] = padIndex(i0 + 1, k);
              w[k * 2] = 1 - t;
              w[k * 2 + 1] = t;
            } else {
              cubicCoeffs(t, &w[k * 4]);
              for (int64_t j = 0; j < 4; ++j) idx[k * 4 + j] = padIndex(i0 - 1 + j, k);
            }
          }
        }
        for (int64_t q = 0; q < nCorners; ++q) {
          int64_t rest = q, off = 0;
          double wt = 1;
          for (int64_t k = r - 1; k >= 0; --k) {
            int64_t j = rest % taps;
            rest /= taps;
            int64_t i = idx[k * taps + j];
            if (i < 0) off = -1;
            else if (off >= 0) off += i * inStride[k];
            wt *= w[k * taps + j];
          }
          offs[q] = off;
          wts[q] = wt;
        }
        for (int64_t ch = 0; ch < C; ++ch) {
          const T *src = xv.data() + (n * C + ch) * inSize;
          T &dst = ov[(n * C + ch) * outSize + p];
          if (mode == GsMode::Nearest) {
            dst = offs[0] < 0 ? T(0) : src[offs[0]];
            continue;
          }
          if constexpr (std::is_floating_point_v<T>) {
            T acc = 0;
            for (int64_t q = 0; q < nCorners; ++q)
              if (offs[q] >= 0) acc += (T)wts[q] * src[offs[q]];
            dst = acc;
          }
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

// GridSample-20 renamed the modes bilinear/bicubic to linear/cubic and took
// any rank; -16 takes 4-D only.
absl::Status gridSampleUp20(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "mode", "bilinear");
  if (!m.ok()) return m.status();
  if (c.checkOnly || !n.getAttr("mode")) return absl::OkStatus();
  if (*m == "bilinear") adapters::setStringAttr(n, "mode", "linear");
  if (*m == "bicubic") adapters::setStringAttr(n, "mode", "cubic");
  return absl::OkStatus();
}
absl::Status gridSampleDown20(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "mode", "linear");
  if (!m.ok()) return m.status();
  int64_t r = adapters::operandRank(n, 0);
  if (r != 4)
    return absl::FailedPreconditionError(
        r < 0 ? "GridSample-16 takes 4-D input only, and the input's rank is unknown (infer "
                "shapes first)"
              : absl::StrCat("the input is ", r, "-D; GridSample-16 takes 4-D input only"));
  if (c.checkOnly || !n.getAttr("mode")) return absl::OkStatus();
  if (*m == "linear") adapters::setStringAttr(n, "mode", "bilinear");
  if (*m == "cubic") adapters::setStringAttr(n, "mode", "bicubic");
  return absl::OkStatus();
}

void registerGridSample(OpRegistrar &r) {
  r["GridSample"].infer(gridSampleRule).kernel(kGridSample);
  r["GridSample"].since(20).upgrade(gridSampleUp20).downgrade(gridSampleDown20);
}

//===--- AffineGrid -------------------------------------------------------===//

void affineGridRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  const Dims *size = c.inData(1);
  if (!size || (size->size() != 4 && size->size() != 5)) {
    auto s = c.inShape(1);
    if (s && s->size() == 1 && (*s)[0] && (*s)[0]->isConstant()) {
      int64_t k = (*s)[0]->value();
      if (k == 4) return c.setTensor(0, el, Dims{nullptr, nullptr, nullptr, c.c(2)});
      if (k == 5) return c.setTensor(0, el, Dims{nullptr, nullptr, nullptr, nullptr, c.c(3)});
    }
    return c.setTensor(0, el, std::nullopt);
  }
  Dims o{(*size)[0]};
  o.insert(o.end(), size->begin() + 2, size->end());
  o.push_back(c.c((int64_t)size->size() - 2));
  c.setTensor(0, el, o);
}

/// grid[n, d..., k] = theta[n, k, :] . (x, y[, z], 1), with (x, y, z) the
/// normalized coordinates of the output point (Note [GridSample
/// coordinates]: pixel centres, -1 and 1 at the corner pixels' centres with
/// align_corners, else at their outer edges).
StatusOr<std::vector<Tensor>> kAffineGrid(const KernelCall &c) {
  auto th = inputArr(c, 0);
  if (!th.ok()) return th.status();
  if (!c.input(1)) return invalid("AffineGrid: no input size");
  auto size = intValues(*c.input(1));
  if (!size.ok()) return size.status();
  bool align = c.getInt("align_corners", 0) != 0;
  if (size->size() != 4 && size->size() != 5)
    return invalid(absl::StrCat("AffineGrid: input size has ", size->size(),
                                " values; it must be [N, C, H, W] or [N, C, D, H, W]"));
  int64_t r = (int64_t)size->size() - 2;
  for (int64_t v : *size)
    if (v < 0) return invalid("AffineGrid: input size has a negative value");
  if (th->rank() != 3 || th->dims[0] != (*size)[0] || th->dims[1] != r || th->dims[2] != r + 1)
    return invalid(absl::StrCat("AffineGrid: theta must be [N, ", r, ", ", r + 1,
                                "] with size's N"));
  std::vector<int64_t> od = {(*size)[0]};
  od.insert(od.end(), size->begin() + 2, size->end());
  od.push_back(r);
  Status sz = checkOutputSize(c, th->dt, od);
  if (!sz.ok()) return sz;
  std::vector<int64_t> sp(size->begin() + 2, size->end());
  // Normalized coordinates per spatial axis.
  std::vector<std::vector<double>> base(r);
  for (int64_t k = 0; k < r; ++k) {
    int64_t L = sp[k];
    for (int64_t i = 0; i < L; ++i)
      base[k].push_back(align ? (L == 1 ? -1.0 : -1.0 + 2.0 * (double)i / (double)(L - 1))
                              : (2.0 * (double)i + 1.0) / (double)L - 1.0);
  }
  int64_t pts = 1;
  for (int64_t L : sp) pts *= L;
  Arr out = Arr::make(th->dt, od);
  Status st = visitFloat(th->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> &tv = th->template vec<T>();
    std::vector<T> &ov = out.template vec<T>();
    std::vector<double> h(r + 1, 1.0);
    for (int64_t n = 0; n < (*size)[0]; ++n)
      for (int64_t p = 0; p < pts; ++p) {
        int64_t rest = p;
        // h = (x, y[, z], 1): the innermost axis first.
        for (int64_t k = r - 1; k >= 0; --k) {
          h[r - 1 - k] = base[k][rest % sp[k]];
          rest /= sp[k];
        }
        for (int64_t j = 0; j < r; ++j) {
          double acc = 0;
          for (int64_t k = 0; k <= r; ++k) acc += (double)tv[(n * r + j) * (r + 1) + k] * h[k];
          ov[(n * pts + p) * r + j] = (T)acc;
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

void registerAffineGrid(OpRegistrar &r) {
  r["AffineGrid"].infer(affineGridRule).kernel(kAffineGrid);
}

//===--- RoiAlign ---------------------------------------------------------===//

void roiAlignRule(InferCtx &c) {
  auto x = c.inShape(0), rois = c.inShape(1), idx = c.inShape(2);
  // num_rois is rois' dim 0 and batch_indices' only dim: whichever is
  // known (a size before a symbol) is the output's dim 0.
  const DimExpr *n = rois && rois->size() == 2 ? (*rois)[0] : nullptr;
  const DimExpr *m = idx && idx->size() == 1 ? (*idx)[0] : nullptr;
  auto sn = staticDim(n), sm = staticDim(m);
  if (sn && sm && *sn != *sm)
    c.disagree("rois " + typeStr(c, 1) + " has " + std::to_string(*sn) +
               " regions, but batch_indices " + typeStr(c, 2) + " has " + std::to_string(*sm));
  else if (!n || (!sn && sm)) n = m;
  const DimExpr *ch = x && x->size() == 4 ? (*x)[1] : nullptr;
  c.setTensor(0, c.inElem(0),
              Dims{n, ch, c.c(c.getInt("output_height", 1)), c.c(c.getInt("output_width", 1))});
}

/// Checks rois [R, cols] and batch_indices [R] against X [N, C, H, W].
Status checkRois(const char *op, const Arr &x, const Arr &rois, int64_t cols) {
  if (x.rank() != 4) return invalid(absl::StrCat(op, ": input X must be 4-D [N, C, H, W]"));
  if (rois.rank() != 2 || rois.dims[1] != cols)
    return invalid(absl::StrCat(op, ": input rois must be [num_rois, ", cols, "]"));
  if (rois.dt != x.dt) return invalid(absl::StrCat(op, ": rois and X differ in element type"));
  return absl::OkStatus();
}

// Note [RoiAlign sampling]
//   Each output bin of a region averages (or takes the max of) a grid of
//   sampling points, sampling_ratio per axis (else ceil(region / bins)),
//   each bilinearly interpolated; a point more than one pixel outside the
//   image counts as 0. half_pixel (-16's default) shifts the region by -0.5
//   pixel; output_half_pixel (and -10) does not, and makes regions at least
//   1x1. "max" takes the largest of the four weighted corner values of each
//   point, as onnxruntime and ONNX's reference do.
StatusOr<std::vector<Tensor>> kRoiAlign(const KernelCall &c) {
  auto x = inputArr(c, 0), rois = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!rois.ok()) return rois.status();
  if (!c.input(2)) return invalid("RoiAlign: no input batch_indices");
  auto bidx = intValues(*c.input(2));
  if (!bidx.ok()) return bidx.status();
  Status chk = checkRois("RoiAlign", *x, *rois, 4);
  if (!chk.ok()) return chk;
  int64_t R = rois->dims[0];
  if ((int64_t)bidx->size() != R || c.input(2)->dims().size() != 1)
    return invalid("RoiAlign: input batch_indices must be [num_rois]");
  std::string mode = c.getString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return invalid(absl::StrCat("RoiAlign: attribute mode '", mode, "' is not avg or max"));
  bool halfPixel = false;
  if (c.opset <= 0 || c.opset >= 16) {
    std::string ctm = c.getString("coordinate_transformation_mode", "half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      return invalid(absl::StrCat("RoiAlign: attribute coordinate_transformation_mode '", ctm,
                                  "' is not half_pixel or output_half_pixel"));
    halfPixel = ctm == "half_pixel";
  }
  int64_t PH = c.getInt("output_height", 1), PW = c.getInt("output_width", 1);
  int64_t ratio = c.getInt("sampling_ratio", 0);
  double scale = c.getFloat("spatial_scale", 1.0f);
  if (PH <= 0 || PW <= 0)
    return invalid("RoiAlign: attributes output_height and output_width must be positive");
  if (ratio < 0) return invalid("RoiAlign: attribute sampling_ratio must not be negative");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  for (int64_t b : *bidx)
    if (b < 0 || b >= N)
      return invalid(absl::StrCat("RoiAlign: batch index ", b, " is outside [0, ", N, ")"));
  std::vector<int64_t> od = {R, C, PH, PW};
  Status sz = checkOutputSize(c, x->dt, od);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(x->dt, od);
  Status st = visitFloat(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> &xv = x->template vec<T>();
    const std::vector<T> &rv = rois->template vec<T>();
    std::vector<T> &ov = out.template vec<T>();
    struct Tap {
      int64_t pos[4];
      double w[4];
    };
    std::vector<Tap> taps;
    for (int64_t n = 0; n < R; ++n) {
      double off = halfPixel ? 0.5 : 0.0;
      double x0 = (double)rv[n * 4] * scale - off, y0 = (double)rv[n * 4 + 1] * scale - off;
      double x1 = (double)rv[n * 4 + 2] * scale - off, y1 = (double)rv[n * 4 + 3] * scale - off;
      double rw = x1 - x0, rh = y1 - y0;
      if (!halfPixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      double bh = rh / (double)PH, bw = rw / (double)PW;
      double ghd = ratio > 0 ? (double)ratio : std::ceil(rh / (double)PH);
      double gwd = ratio > 0 ? (double)ratio : std::ceil(rw / (double)PW);
      if (!(ghd <= (1 << 12) && gwd <= (1 << 12)))
        return invalid(absl::StrCat("RoiAlign: region ", n,
                                    " needs too many sampling points (or is not finite)"));
      int64_t gh = std::max<int64_t>((int64_t)ghd, 0), gw = std::max<int64_t>((int64_t)gwd, 0);
      int64_t count = std::max<int64_t>(gh * gw, 1);
      taps.assign(PH * PW * gh * gw, Tap{});
      size_t t = 0;
      for (int64_t ph = 0; ph < PH; ++ph)
        for (int64_t pw = 0; pw < PW; ++pw)
          for (int64_t iy = 0; iy < gh; ++iy) {
            double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ++ix, ++t) {
              double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              Tap &tp = taps[t];
              if (!(yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W)) continue;
              double yc = std::max(yy, 0.0), xc = std::max(xx, 0.0);
              int64_t yl = (int64_t)yc, xl = (int64_t)xc, yh, xh;
              if (yl >= H - 1) {
                yh = yl = H - 1;
                yc = (double)yl;
              } else {
                yh = yl + 1;
              }
              if (xl >= W - 1) {
                xh = xl = W - 1;
                xc = (double)xl;
              } else {
                xh = xl + 1;
              }
              double ly = yc - (double)yl, lx = xc - (double)xl, hy = 1 - ly, hx = 1 - lx;
              tp = Tap{{yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh},
                       {hy * hx, hy * lx, ly * hx, ly * lx}};
            }
          }
      for (int64_t ch = 0; ch < C; ++ch) {
        const T *src = xv.data() + ((*bidx)[n] * C + ch) * H * W;
        T *dst = ov.data() + (n * C + ch) * PH * PW;
        size_t k = 0;
        for (int64_t b = 0; b < PH * PW; ++b) {
          double acc = 0;
          bool first = true;
          for (int64_t s = 0; s < gh * gw; ++s, ++k) {
            const Tap &tp = taps[k];
            if (mode == "avg") {
              for (int j = 0; j < 4; ++j) acc += tp.w[j] * (double)src[tp.pos[j]];
            } else {
              double m = tp.w[0] * (double)src[tp.pos[0]];
              for (int j = 1; j < 4; ++j) m = std::max(m, tp.w[j] * (double)src[tp.pos[j]]);
              acc = first ? m : std::max(acc, m);
              first = false;
            }
          }
          dst[b] = (T)(mode == "avg" ? acc / (double)count : acc);
        }
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

// RoiAlign-16 added coordinate_transformation_mode, default half_pixel; -10
// behaves as output_half_pixel, which up writes out and down requires.
absl::Status roiAlignUp16(Node &n, AdapterContext &c) {
  if (!c.checkOnly) adapters::setStringAttr(n, "coordinate_transformation_mode", "output_half_pixel");
  return absl::OkStatus();
}
absl::Status roiAlignDown16(Node &n, AdapterContext &c) {
  auto m = adapters::stringAttrOr(n, "coordinate_transformation_mode", "half_pixel");
  if (!m.ok()) return m.status();
  if (*m != "output_half_pixel")
    return absl::FailedPreconditionError(absl::StrCat(
        "coordinate_transformation_mode is ", *m,
        "; RoiAlign-10 behaves as output_half_pixel only"));
  if (!c.checkOnly) n.removeAttr("coordinate_transformation_mode");
  return absl::OkStatus();
}

void registerRoiAlign(OpRegistrar &r) {
  r["RoiAlign"].infer(roiAlignRule).kernel(kRoiAlign);
  r["RoiAlign"].since(16).upgrade(roiAlignUp16).downgrade(roiAlignDown16);
}

//===--- MaxRoiPool -------------------------------------------------------===//

void maxRoiPoolRule(InferCtx &c) {
  auto x = c.inShape(0), rois = c.inShape(1);
  auto ps = c.getInts("pooled_shape");
  if (!ps || ps->size() != 2) return c.setTensor(0, c.inElem(0), std::nullopt);
  c.setTensor(0, c.inElem(0),
              Dims{rois && rois->size() == 2 ? (*rois)[0] : nullptr,
                   x && x->size() == 4 ? (*x)[1] : nullptr, c.c((*ps)[0]), c.c((*ps)[1])});
}

/// Each region (batch_id, x1, y1, x2, y2), scaled and rounded to whole
/// pixels (ends included), is cut into pooled_shape bins (floor of the
/// start, ceil of the end); a bin holds the max of its pixels, 0 when empty.
StatusOr<std::vector<Tensor>> kMaxRoiPool(const KernelCall &c) {
  auto x = inputArr(c, 0), rois = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!rois.ok()) return rois.status();
  Status chk = checkRois("MaxRoiPool", *x, *rois, 5);
  if (!chk.ok()) return chk;
  auto ps = c.getInts("pooled_shape");
  if (!ps || ps->size() != 2 || (*ps)[0] <= 0 || (*ps)[1] <= 0)
    return invalid("MaxRoiPool: attribute pooled_shape must be two positive ints");
  double scale = c.getFloat("spatial_scale", 1.0f);
  int64_t R = rois->dims[0], N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t PH = (*ps)[0], PW = (*ps)[1];
  std::vector<int64_t> od = {R, C, PH, PW};
  Status sz = checkOutputSize(c, x->dt, od);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(x->dt, od);
  Status st = visitFloat(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> &xv = x->template vec<T>();
    const std::vector<T> &rv = rois->template vec<T>();
    std::vector<T> &ov = out.template vec<T>();
    for (int64_t n = 0; n < R; ++n) {
      const T *roi = rv.data() + n * 5;
      double bd = (double)roi[0];
      if (!(bd >= 0 && bd < (double)N))
        return invalid(absl::StrCat("MaxRoiPool: region ", n, " has batch id ", bd,
                                    ", outside [0, ", N, ")"));
      int64_t b = (int64_t)bd;
      double lim = 1e15;
      auto rnd = [&](T v) { return (int64_t)std::clamp(std::round((double)v * scale), -lim, lim); };
      for (int j = 1; j < 5; ++j)
        if (std::isnan((double)roi[j] * scale))
          return invalid(absl::StrCat("MaxRoiPool: region ", n, " has a NaN coordinate"));
      int64_t sw = rnd(roi[1]), sh = rnd(roi[2]), ew = rnd(roi[3]), eh = rnd(roi[4]);
      int64_t rh = std::max<int64_t>(eh - sh + 1, 1), rw = std::max<int64_t>(ew - sw + 1, 1);
      double bh = (double)rh / (double)PH, bw = (double)rw / (double)PW;
      for (int64_t ch = 0; ch < C; ++ch) {
        const T *src = xv.data() + (b * C + ch) * H * W;
        T *dst = ov.data() + (n * C + ch) * PH * PW;
        for (int64_t ph = 0; ph < PH; ++ph) {
          int64_t hs = std::clamp<int64_t>((int64_t)std::floor((double)ph * bh) + sh, 0, H);
          int64_t he = std::clamp<int64_t>((int64_t)std::ceil((double)(ph + 1) * bh) + sh, 0, H);
          for (int64_t pw = 0; pw < PW; ++pw) {
            int64_t ws = std::clamp<int64_t>((int64_t)std::floor((double)pw * bw) + sw, 0, W);
            int64_t we =
                std::clamp<int64_t>((int64_t)std::ceil((double)(pw + 1) * bw) + sw, 0, W);
            T m = 0;
            if (he > hs && we > ws) {
              m = -std::numeric_limits<T>::infinity();
              for (int64_t h = hs; h < he; ++h)
                for (int64_t w = ws; w < we; ++w) m = std::max(m, src[h * W + w]);
            }
            dst[ph * PW + pw] = m;
          }
        }
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

void registerMaxRoiPool(OpRegistrar &r) {
  r["MaxRoiPool"].infer(maxRoiPoolRule).kernel(kMaxRoiPool);
}

//===--- NonMaxSuppression ------------------------------------------------===//

void nonMaxSuppressionRule(InferCtx &c) { c.setTensor(0, kInt64, Dims{nullptr, c.c(3)}); }

/// True when box a (4 floats) overlaps box b by an IoU above `thr`.
bool nmsSuppresses(const float *a, const float *b, bool center, float thr) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (center) {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  } else {
    // [y1, x1, y2, x2], either corner first.
    ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
    by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  }
  float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  float uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0) return false;
  return inter / uni > thr;
}

/// Per batch and class: the boxes above score_threshold (all when it is
/// absent) by score, highest first (equal scores: lower box index first),
/// each kept unless it overlaps a kept one by more than iou_threshold, at
/// most max_output_boxes_per_class (absent: 0) of them; rows [batch, class,
/// box] in that order.
StatusOr<std::vector<Tensor>> kNonMaxSuppression(const KernelCall &c) {
  auto boxes = inputArr(c, 0), scores = inputArr(c, 1);
  if (!boxes.ok()) return boxes.status();
  if (!scores.ok()) return scores.status();
  if (boxes->kind() != CK::F32 || scores->kind() != CK::F32)
    return invalid("NonMaxSuppression: boxes and scores must be float");
  if (boxes->rank() != 3 || boxes->dims[2] != 4)
    return invalid("NonMaxSuppression: input boxes must be [num_batches, spatial_dimension, 4]");
  if (scores->rank() != 3 || scores->dims[0] != boxes->dims[0] ||
      scores->dims[2] != boxes->dims[1])
    return invalid("NonMaxSuppression: input scores must be [num_batches, num_classes, "
                   "spatial_dimension] with boxes' num_batches and spatial_dimension");
  int64_t center = c.getInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return invalid("NonMaxSuppression: attribute center_point_box must be 0 or 1");
  // A scalar operand's value; `absent` when omitted or empty.
  auto scalarF = [&](unsigned i, float absent, bool &given) -> StatusOr<float> {
    given = false;
    const Tensor *t = c.input(i);
    if (!t) return absent;
    auto a = kernels::fromTensor(*t);
    if (!a.ok()) return a.status();
    if (a->kind() != CK::F32) return invalid("NonMaxSuppression: a threshold is not float");
    if (a->size() == 0) return absent;
    if (a->size() != 1) return invalid("NonMaxSuppression: a threshold has more than one value");
    given = true;
    return a->f[0];
  };
  int64_t maxOut = 0;
  if (const Tensor *t = c.input(2)) {
    auto v = intValues(*t);
    if (!v.ok()) return v.status();
    if (v->size() > 1)
      return invalid("NonMaxSuppression: max_output_boxes_per_class has more than one value");
    if (!v->empty()) maxOut = std::max<int64_t>((*v)[0], 0);
  }
  bool hasIou, hasScore;
  auto iou = scalarF(3, 0.0f, hasIou);
  if (!iou.ok()) return iou.status();
  auto scoreThr = scalarF(4, 0.0f, hasScore);
  if (!scoreThr.ok()) return scoreThr.status();
  if (*iou < 0 || *iou > 1)
    return invalid("NonMaxSuppression: iou_threshold must be in [0, 1]");
  int64_t B = boxes->dims[0], K = scores->dims[1], M = boxes->dims[1];
  std::vector<int64_t> sel;
  std::vector<int64_t> cand, kept;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < K; ++k) {
      const float *sc = scores->f.data() + (b * K + k) * M;
      const float *bx = boxes->f.data() + b * M * 4;
      cand.clear();
      kept.clear();
      for (int64_t i = 0; i < M; ++i)
        if (!hasScore || sc[i] > *scoreThr) cand.push_back(i);
      // NaN scores (kept when there is no threshold) rank last.
      auto key = [&](int64_t i) {
        return std::isnan(sc[i]) ? -std::numeric_limits<float>::infinity() : sc[i];
      };
      std::stable_sort(cand.begin(), cand.end(),
                       [&](int64_t p, int64_t q) { return key(p) > key(q); });
      for (int64_t i : cand) {
        if ((int64_t)kept.size() >= maxOut) break;
        bool keep = true;
        for (int64_t j : kept)
          if (nmsSuppresses(bx + i * 4, bx + j * 4, center == 1, *iou)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        sel.insert(sel.end(), {b, k, i});
      }
    }
  Arr out = Arr::make(DataType::Int64, {(int64_t)sel.size() / 3, 3});
  out.i = std::move(sel);
  return one(out);
}

void registerNonMaxSuppression(OpRegistrar &r) {
  r["NonMaxSuppression"].infer(nonMaxSuppressionRule).kernel(kNonMaxSuppression);
}

} // namespace

void registerImageOps(OpRegistrar &r) {
  for (auto *reg : {registerGridSample, registerAffineGrid, registerRoiAlign, registerMaxRoiPool,
                    registerNonMaxSuppression})
    reg(r);
}

} // namespace onnxir
