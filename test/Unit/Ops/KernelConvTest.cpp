//===- KernelConvTest.cpp - The evaluator's convolutions, half pools ------===//
//
// Note [Bounded im2col] and Note [Depthwise planes] (lib/Ops/Conv.cpp): the
// evaluator's Conv (a hostTuned call) builds its column matrix a tile of
// output rows at a time and computes depthwise 2-D planes directly, while
// folding (hostTuned false) keeps the whole column matrix. Both must give
// each output's sum, here computed directly in double: odd shapes, strides,
// dilations, asymmetric pads, auto_pad, groups, channel multipliers, 1-D and
// 3-D windows, and inputs wide enough to take several tiles. Note [Half
// pools a plane at a time]: float16 and bfloat16 pools give the bits of the
// float pools' results encoded.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace onnxir;
using namespace onnxir::kerneltest;

namespace {

struct ConvCase {
  const char *what;
  std::vector<int64_t> x, w;       // X [N, C, spatial...], W [M, C/group, kernel...]
  std::vector<int64_t> strides, dilations, pads; // empty: the defaults
  int64_t group = 1;
  bool bias = true;
  const char *autoPad = nullptr; // SAME_UPPER: pads computed here, not passed
};

std::vector<double> values(int64_t n, uint64_t seed) {
  std::vector<double> v((size_t)n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (double &e : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    // Multiples of 1/64 in [-1, 1): exact in float, so both element types
    // sum the same inputs.
    e = (double)((int64_t)(s >> 40) % 128 - 64) / 64.0;
  }
  return v;
}

int64_t count(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

/// The direct sum of each output (and of its terms' magnitudes, for the
/// tolerance), with the pads of `k` (SAME_UPPER: computed from the sizes).
void reference(const ConvCase &k, const std::vector<double> &x, const std::vector<double> &w,
               const std::vector<double> &b, std::vector<int64_t> &od, std::vector<double> &y,
               std::vector<double> &mag) {
  size_t n = k.x.size() - 2;
  int64_t N = k.x[0], C = k.x[1], M = k.w[0], Cg = C / k.group, Mg = M / k.group;
  std::vector<int64_t> s = k.strides, d = k.dilations, pb(n), out(n);
  if (s.empty()) s.assign(n, 1);
  if (d.empty()) d.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = k.x[i + 2], ek = d[i] * (k.w[i + 2] - 1) + 1;
    if (k.autoPad) {
      out[i] = (in + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * s[i] + ek - in);
      pb[i] = total / 2;
    } else {
      int64_t pBegin = k.pads.empty() ? 0 : k.pads[i];
      int64_t pEnd = k.pads.empty() ? 0 : k.pads[i + n];
      pb[i] = pBegin;
      out[i] = (in + pBegin + pEnd - ek) / s[i] + 1;
    }
  }
  od = {N, M};
  od.insert(od.end(), out.begin(), out.end());
  int64_t OS = count(out), KS = count(std::vector<int64_t>(k.w.begin() + 2, k.w.end())),
          IS = count(std::vector<int64_t>(k.x.begin() + 2, k.x.end()));
  y.assign((size_t)(N * M * OS), 0.0);
  mag.assign(y.size(), 0.0);
  std::vector<int64_t> o(n), kk(n);
  for (int64_t bi = 0; bi < N; ++bi)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t q = 0; q < OS; ++q) {
        for (int64_t r = q, i = (int64_t)n - 1; i >= 0; --i) {
          o[(size_t)i] = r % out[(size_t)i];
          r /= out[(size_t)i];
        }
        int64_t gr = m / Mg;
        double acc = k.bias ? b[(size_t)m] : 0.0, a = std::fabs(acc);
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t t = 0; t < KS; ++t) {
            for (int64_t r = t, i = (int64_t)n - 1; i >= 0; --i) {
              kk[(size_t)i] = r % k.w[(size_t)i + 2];
              r /= k.w[(size_t)i + 2];
            }
            int64_t off = 0;
            bool inside = true;
            for (size_t i = 0; i < n && inside; ++i) {
              int64_t p = o[i] * s[i] - pb[i] + kk[i] * d[i];
              inside = p >= 0 && p < k.x[i + 2];
              off = off * k.x[i + 2] + p;
            }
            if (!inside) continue;
            double v = x[(size_t)((bi * C + gr * Cg + c) * IS + off)] *
                       w[(size_t)((m * Cg + c) * KS + t)];
            acc += v;
            a += std::fabs(v);
          }
        y[(size_t)((bi * M + m) * OS + q)] = acc;
        mag[(size_t)((bi * M + m) * OS + q)] = a;
      }
}

template <typename T>
Tensor tensorOf(DataType dt, std::vector<int64_t> dims, const std::vector<double> &v) {
  return typed<T>(dt, std::move(dims), std::vector<T>(v.begin(), v.end()));
}

/// Runs Conv on `k` as the evaluator (tuned) or folding does, and checks
/// every output against its sum.
template <typename T> void checkConv(const ConvCase &k, DataType dt, bool tuned) {
  std::vector<double> x = values(count(k.x), 1), w = values(count(k.w), 2),
                      b = values(k.w[0], 3);
  std::vector<int64_t> od;
  std::vector<double> want, mag;
  reference(k, x, w, b, od, want, mag);
  Tensor xt = tensorOf<T>(dt, k.x, x), wt = tensorOf<T>(dt, k.w, w),
         bt = tensorOf<T>(dt, {k.w[0]}, b);
  std::vector<std::unique_ptr<Attribute>> attrs;
  if (!k.strides.empty()) attrs.push_back(intsAttr("strides", k.strides));
  if (!k.dilations.empty()) attrs.push_back(intsAttr("dilations", k.dilations));
  if (!k.pads.empty()) attrs.push_back(intsAttr("pads", k.pads));
  if (k.autoPad) attrs.push_back(stringAttr("auto_pad", k.autoPad));
  if (k.group != 1) attrs.push_back(intAttr("group", k.group));
  std::vector<const Attribute *> as;
  for (auto &a : attrs) as.push_back(a.get());
  std::vector<const Tensor *> ins = {&xt, &wt};
  if (k.bias) ins.push_back(&bt);
  KernelCall c("", "Conv", 17, as);
  c.inputs = ins;
  c.hostTuned = tuned;
  auto r = evaluateKernel(c);
  ASSERT_TRUE(r.ok()) << k.what << ": " << r.status();
  ASSERT_EQ((*r)[0].dims(), od) << k.what;
  auto got = (*r)[0].values<double>();
  ASSERT_TRUE(got.ok()) << k.what;
  ASSERT_EQ(got->size(), want.size()) << k.what;
  // A sum of float products in any order: within a few units of float's
  // rounding of the terms' magnitudes (double: of double's).
  double eps = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR((*got)[i], want[i], eps * mag[i] + eps * 1e-3)
        << k.what << (tuned ? " (tuned)" : " (folding)") << " "
        << dataTypeName(dt).str() << " output " << i;
}

const ConvCase kCases[] = {
    {"3x3 pads 1", {2, 3, 7, 9}, {4, 3, 3, 3}, {}, {}, {1, 1, 1, 1}},
    {"stride 2, dilation 2, asymmetric pads", {1, 3, 11, 10}, {5, 3, 3, 2}, {2, 2}, {2, 2},
     {0, 1, 2, 1}},
    {"stride 3 x 1, no bias", {1, 2, 9, 8}, {3, 2, 2, 3}, {3, 1}, {}, {1, 0, 0, 2}, 1, false},
    {"SAME_UPPER, stride 2", {1, 3, 8, 7}, {2, 3, 3, 3}, {2, 2}, {}, {}, 1, true, "SAME_UPPER"},
    {"group 2", {2, 4, 6, 5}, {6, 2, 3, 3}, {}, {}, {1, 1, 1, 1}, 2},
    {"group 3, 2x1 kernel", {1, 6, 5, 7}, {3, 2, 2, 1}, {1, 2}, {}, {}, 3},
    {"depthwise 3x3", {2, 5, 8, 9}, {5, 1, 3, 3}, {}, {}, {1, 1, 1, 1}, 5},
    {"depthwise stride 2", {1, 4, 9, 11}, {4, 1, 3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 4},
    {"depthwise dilation 2, asymmetric pads", {1, 3, 10, 9}, {3, 1, 3, 3}, {1, 2}, {2, 2},
     {2, 0, 1, 3}, 3},
    {"depthwise, channel multiplier 2, no bias", {1, 3, 6, 7}, {6, 1, 3, 2}, {}, {},
     {1, 1, 0, 1}, 3, false},
    {"depthwise 5x5 over a 3x4 image", {1, 2, 3, 4}, {2, 1, 5, 5}, {}, {}, {2, 2, 2, 2}, 2},
    {"depthwise stride 2, kernel past the right edge", {1, 2, 5, 6}, {2, 1, 1, 4}, {1, 2}, {},
     {0, 0, 0, 3}, 2},
    {"pointwise", {2, 6, 4, 5}, {3, 6, 1, 1}, {}, {}, {}},
    {"pointwise, group 2", {1, 6, 4, 5}, {4, 3, 1, 1}, {}, {}, {}, 2},
    {"1x1 stride 2", {1, 4, 7, 6}, {3, 4, 1, 1}, {2, 2}, {}, {}},
    {"one output channel", {1, 4, 6, 6}, {1, 4, 3, 3}, {}, {}, {1, 1, 1, 1}},
    {"1-D", {2, 3, 20}, {4, 3, 4}, {3}, {}, {2, 1}},
    {"1-D depthwise (not 2-D: columns)", {1, 3, 12}, {3, 1, 3}, {}, {}, {1, 1}, 3},
    {"3-D", {1, 2, 4, 5, 6}, {3, 2, 2, 3, 2}, {}, {}, {1, 1, 0, 0, 1, 1}},
    // Wide enough that the column matrix takes several tiles (Note [Bounded
    // im2col]: 64 x 9 rows, 600 columns per output row): float 3 rows a
    // tile, double 1.
    {"several tiles", {1, 64, 5, 600}, {3, 64, 3, 3}, {}, {}, {1, 1, 1, 1}},
    {"several tiles, stride 2 and a ragged last tile", {1, 64, 9, 700}, {2, 64, 3, 3}, {2, 1},
     {}, {1, 1, 1, 1}},
    // 3-D tiles start inside the outer grid dims (grid 2 x 3 x 600; float
    // 2 rows a tile, double 1).
    {"several 3-D tiles", {1, 32, 2, 3, 600}, {2, 32, 3, 3, 3}, {}, {}, {1, 1, 1, 1, 1, 1}},
};

TEST(ConvKernels, EvaluatorMatchesTheSums) {
  for (const ConvCase &k : kCases) {
    checkConv<float>(k, DataType::Float, true);
    checkConv<double>(k, DataType::Double, true);
  }
}

TEST(ConvKernels, FoldingMatchesTheSums) {
  for (const ConvCase &k : kCases) {
    checkConv<float>(k, DataType::Float, false);
    checkConv<double>(k, DataType::Double, false);
  }
}

// ConvInteger runs its 8-bit products in double (Note [Integer convolutions
// in double]) through the same tuned paths: exact integers, equal to
// folding's, depthwise and tiled alike.
TEST(ConvKernels, TunedConvIntegerIsExact) {
  struct Case { std::vector<int64_t> x, w; int64_t group; };
  const Case cases[] = {{{1, 4, 6, 7}, {4, 1, 3, 3}, 4}, {{1, 64, 5, 700}, {2, 64, 3, 3}, 1}};
  for (const Case &k : cases) {
    std::vector<uint8_t> x((size_t)count(k.x));
    std::vector<int8_t> w((size_t)count(k.w));
    for (size_t i = 0; i < x.size(); ++i) x[i] = (uint8_t)(i * 37 % 256);
    for (size_t i = 0; i < w.size(); ++i) w[i] = (int8_t)((int)(i * 53 % 256) - 128);
    Tensor xt = typed<uint8_t>(DataType::Uint8, k.x, x);
    Tensor wt = typed<int8_t>(DataType::Int8, k.w, w);
    Tensor xz = typed<uint8_t>(DataType::Uint8, {}, {7});
    Tensor wz = typed<int8_t>(DataType::Int8, {}, {-3});
    auto attrs = attrs1(intAttr("group", k.group));
    std::vector<const Attribute *> as = {attrs[0].get()};
    std::vector<const Tensor *> ins = {&xt, &wt, &xz, &wz};
    std::vector<std::vector<int64_t>> results;
    for (bool tuned : {false, true}) {
      KernelCall c("", "ConvInteger", 10, as);
      c.inputs = ins;
      c.hostTuned = tuned;
      auto r = evaluateKernel(c);
      ASSERT_TRUE(r.ok()) << r.status();
      results.push_back(*(*r)[0].values<int64_t>());
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

// Note [Half pools a plane at a time]: a float16 or bfloat16 X is pooled a
// plane at a time in float; the result must be the float pool's on the
// decoded values, encoded (bit for bit), and MaxPool's Indices the same.
TEST(PoolKernels, HalvesMatchTheFloatPools) {
  struct Case {
    const char *op;
    std::vector<int64_t> x, kernel, strides, pads;
    int64_t extra = 0; // MaxPool: storage_order + 1 with Indices; LpPool: p;
                       // AveragePool: count_include_pad + 1
    bool ceil = false;
  };
  const Case cases[] = {
      {"MaxPool", {2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"MaxPool", {2, 3, 7, 8}, {3, 2}, {2, 1}, {1, 0, 0, 1}, 1},
      {"MaxPool", {1, 2, 6, 5}, {2, 2}, {2, 2}, {}, 2, true},
      {"AveragePool", {2, 3, 7, 8}, {2, 3}, {1, 2}, {1, 1, 0, 1}},
      {"AveragePool", {2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 2},
      {"AveragePool", {1, 4, 9}, {4}, {3}, {2, 1}, 0, true},
      {"LpPool", {2, 3, 7, 8}, {3, 2}, {1, 1}, {0, 1, 1, 0}, 3},
      {"GlobalAveragePool", {2, 3, 7, 8}, {}, {}, {}},
      {"GlobalMaxPool", {2, 3, 7, 8}, {}, {}, {}},
      {"GlobalLpPool", {2, 3, 5}, {}, {}, {}, 2},
  };
  for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
    auto enc = [&](float f) {
      return dt == DataType::Float16 ? floatToHalf(f) : floatToBFloat16(f);
    };
    auto dec = [&](uint16_t h) {
      return dt == DataType::Float16 ? halfToFloat(h) : bfloat16ToFloat(h);
    };
    for (const Case &k : cases) {
      std::vector<double> v = values(count(k.x), 4);
      std::vector<uint16_t> h(v.size());
      std::vector<float> f(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        h[i] = enc((float)(v[i] * 3.7));
        if (i % 29 == 5) h[i] = enc(std::numeric_limits<float>::quiet_NaN());
        f[i] = dec(h[i]);
      }
      std::string op = k.op;
      bool global = op.rfind("Global", 0) == 0, indices = op == "MaxPool" && k.extra > 0;
      auto make = [&](Tensor x) {
        Call c(op, 18);
        c.in(std::move(x));
        if (!global) {
          c.attr(intsAttr("kernel_shape", k.kernel));
          if (!k.strides.empty()) c.attr(intsAttr("strides", k.strides));
          if (!k.pads.empty()) c.attr(intsAttr("pads", k.pads));
          if (k.ceil) c.attr(intAttr("ceil_mode", 1));
        }
        if (indices) {
          c.numOutputs = 2;
          c.attr(intAttr("storage_order", k.extra - 1));
        }
        if (op == "AveragePool" && k.extra) c.attr(intAttr("count_include_pad", k.extra - 1));
        if (op == "LpPool" || op == "GlobalLpPool") c.attr(intAttr("p", k.extra));
        return c;
      };
      auto want = make(f32(k.x, f)).run();
      auto got = make(typed<uint16_t>(dt, k.x, h)).run();
      std::string what = op + " " + dataTypeName(dt).str();
      ASSERT_TRUE(want.ok()) << what << ": " << want.status();
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      ASSERT_EQ(got->size(), want->size()) << what;
      const Tensor &gy = (*got)[0], &wy = (*want)[0];
      EXPECT_EQ(gy.dataType(), dt) << what;
      ASSERT_EQ(gy.dims(), wy.dims()) << what;
      auto gb = gy.bytes();
      auto wv = wy.values<float>();
      ASSERT_TRUE(gb.ok() && wv.ok()) << what;
      ASSERT_EQ(gb->size(), 2 * wv->size()) << what;
      for (size_t i = 0; i < wv->size(); ++i) {
        uint16_t bits;
        std::memcpy(&bits, gb->data() + 2 * i, 2);
        ASSERT_EQ(bits, enc((*wv)[i])) << what << " output " << i;
      }
      if (indices) {
        EXPECT_EQ(*(*got)[1].values<int64_t>(), *(*want)[1].values<int64_t>()) << what;
      }
    }
  }
}

} // namespace
