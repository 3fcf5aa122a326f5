//===- KernelInPlaceTest.cpp - Inputs read in place, broadcasting by runs -===//
//
// Note [Inputs read in place] and Note [Broadcasting by runs] (lib/Ops):
// a float input stored as its type is read through a view of its bytes, a
// decoded copy otherwise (float16, a misaligned window); results are written
// into the bytes the tensor keeps; the binary ops walk broadcast operands in
// runs. The values must be those of an element-by-element reference.
//
//===----------------------------------------------------------------------===//
#include "KernelSupport.h"
#include "KernelTestUtil.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace onnxir;
using namespace onnxir::kerneltest;

namespace {

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v((size_t)n);
  for (int64_t i = 0; i < n; ++i) v[(size_t)i] = scale * (float)(i % 17) - 3.0f;
  return v;
}

TEST(InPlace, RawFloatIsReadThroughItsOwnBytes) {
  Tensor t = f32({2, 3}, ramp(6, 0.5f));
  auto v = kernels::viewTensor<float>(t);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((const void *)v->data(), (const void *)t.rawData().data());
  EXPECT_TRUE(v->own.empty());
}

TEST(InPlace, MisalignedWindowAndFloat16AreDecoded) {
  std::vector<float> vals = ramp(5, 1.0f);
  std::string bytes(1, 'x');
  bytes.append(reinterpret_cast<const char *>(vals.data()), vals.size() * sizeof(float));
  auto buf = std::make_shared<StringBuffer>(std::move(bytes));
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({5});
  t.setRaw(buf, 1, 5 * sizeof(float)); // one byte in: not aligned for float
  auto v = kernels::viewTensor<float>(t);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_NE((const void *)v->data(), (const void *)t.rawData().data());
  EXPECT_EQ(std::vector<float>(v->data(), v->data() + 5), vals);

  Tensor h = typed<uint16_t>(DataType::Float16, {2}, {0x3c00, 0xc000}); // 1, -2
  auto hv = kernels::viewTensor<float>(h);
  ASSERT_TRUE(hv.ok()) << hv.status();
  EXPECT_EQ(hv->data()[0], 1.0f);
  EXPECT_EQ(hv->data()[1], -2.0f);
}

TEST(InPlace, WrongByteCountIsRefused) {
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({4});
  t.setRaw(std::string(12, '\0'));
  EXPECT_FALSE(kernels::viewTensor<float>(t).ok());
  EXPECT_FALSE(Call("Relu").in(std::move(t)).run().ok());
}

/// Sub's reference, element by element through numpy's broadcasting rule.
std::vector<float> subReference(const std::vector<int64_t> &ad, const std::vector<float> &a,
                                const std::vector<int64_t> &bd, const std::vector<float> &b,
                                const std::vector<int64_t> &od) {
  int64_t n = 1;
  for (int64_t d : od) n *= d;
  std::vector<float> out((size_t)n);
  auto offset = [&](const std::vector<int64_t> &in, const std::vector<int64_t> &idx) {
    int64_t off = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t i = idx[k + (od.size() - in.size())];
      off = off * in[k] + (in[k] == 1 ? 0 : i);
    }
    return off;
  };
  std::vector<int64_t> idx(od.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    out[(size_t)e] = a[(size_t)offset(ad, idx)] - b[(size_t)offset(bd, idx)];
    for (size_t k = od.size(); k-- > 0;) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

TEST(InPlace, BroadcastRunsMatchTheElementwiseReference) {
  struct Shapes {
    std::vector<int64_t> a, b, out;
  };
  const Shapes cases[] = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},       // same shape: one run
      {{2, 3, 4}, {}, {2, 3, 4}},              // scalar
      {{}, {2, 3, 4}, {2, 3, 4}},              // scalar first
      {{2, 3, 4}, {4}, {2, 3, 4}},             // trailing
      {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}}, // per channel
      {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}},       // both broadcast
      {{3, 1}, {1, 5}, {3, 5}},                // outer product
      {{1, 1, 1}, {1}, {1, 1, 1}},             // one element
      {{2, 0, 3}, {3}, {2, 0, 3}},             // empty
      {{1, 3, 1, 2}, {2, 1, 4, 1}, {2, 3, 4, 2}},
  };
  for (const Shapes &s : cases) {
    int64_t na = 1, nb = 1;
    for (int64_t d : s.a) na *= d;
    for (int64_t d : s.b) nb *= d;
    std::vector<float> a = ramp(na, 0.25f), b = ramp(nb, -1.5f);
    auto r = Call("Sub").in(f32(s.a, a)).in(f32(s.b, b)).run();
    ASSERT_TRUE(r.ok()) << r.status();
    const Tensor &y = (*r)[0];
    EXPECT_EQ(y.dims(), s.out);
    EXPECT_EQ(*y.values<float>(), subReference(s.a, a, s.b, b, s.out));
    // The same in double, and with the operands swapped.
    std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
    auto rd = Call("Sub").in(f64(s.a, ad)).in(f64(s.b, bd)).run();
    ASSERT_TRUE(rd.ok()) << rd.status();
    std::vector<float> want = subReference(s.a, a, s.b, b, s.out);
    std::vector<double> got = *(*rd)[0].values<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ((float)got[i], want[i]);
    auto rs = Call("Sub").in(f32(s.b, b)).in(f32(s.a, a)).run();
    ASSERT_TRUE(rs.ok()) << rs.status();
    std::vector<float> swapped = subReference(s.b, b, s.a, a, s.out);
    EXPECT_EQ(*(*rs)[0].values<float>(), swapped);
  }
}

// Opset 6's broadcast attribute with an axis: B [3] aligned at X's dim 1.
TEST(InPlace, LegacyAxisBroadcast) {
  std::vector<float> a = ramp(24, 1.0f), b = {1, 2, 3};
  auto r = Call("Sub", 6)
               .in(f32({2, 3, 4}, a))
               .in(f32({3}, b))
               .attr(intAttr("broadcast", 1))
               .attr(intAttr("axis", 1))
               .run();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*(*r)[0].values<float>(), subReference({2, 3, 4}, a, {3, 1}, b, {2, 3, 4}));
}

// The result owns its bytes as float32: four per element, the values Relu
// gives.
TEST(InPlace, ResultWrittenAsItsOwnType) {
  auto r = Call("Relu").in(f32({4}, {-1, 2, -3, 4})).run();
  ASSERT_TRUE(r.ok()) << r.status();
  const Tensor &y = (*r)[0];
  EXPECT_EQ(y.storage(), Tensor::Storage::Raw);
  ASSERT_EQ(y.rawData().size(), 16u);
  float v[4];
  std::memcpy(v, y.rawData().data(), 16);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 2.0f);
  EXPECT_EQ(v[2], 0.0f);
  EXPECT_EQ(v[3], 4.0f);
}

// Note [Integer convolutions in double]: the products of 8-bit operands run
// in double and must stay exact integers, at the extremes of the range and
// over many terms (64 channels x 3 x 3: sums of 576 products of 255 x -255).
TEST(InPlace, ConvIntegerIsExact) {
  const int64_t C = 64;
  std::vector<uint8_t> x((size_t)(C * 16), 255);
  std::vector<int8_t> w((size_t)(2 * C * 9), -128);
  for (size_t i = 0; i < x.size(); i += 7) x[i] = (uint8_t)(i % 251);
  for (size_t i = 0; i < w.size(); i += 5) w[i] = (int8_t)(127 - (int)(i % 200));
  auto r = Call("ConvInteger", 10)
               .in(typed<uint8_t>(DataType::Uint8, {1, C, 4, 4}, x))
               .in(typed<int8_t>(DataType::Int8, {2, C, 3, 3}, w))
               .in(typed<uint8_t>(DataType::Uint8, {}, {3}))
               .in(typed<int8_t>(DataType::Int8, {}, {127}))
               .run();
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<int64_t> got = *(*r)[0].values<int64_t>();
  ASSERT_EQ(got.size(), 8u); // [1, 2, 2, 2]
  for (int64_t m = 0; m < 2; ++m)
    for (int64_t oy = 0; oy < 2; ++oy)
      for (int64_t ox = 0; ox < 2; ++ox) {
        int64_t want = 0;
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx)
              want += ((int64_t)x[(size_t)(ch * 16 + (oy + ky) * 4 + ox + kx)] - 3) *
                      ((int64_t)w[(size_t)(((m * C + ch) * 3 + ky) * 3 + kx)] - 127);
        EXPECT_EQ(got[(size_t)((m * 2 + oy) * 2 + ox)], want) << m << oy << ox;
      }
}

} // namespace

//===--- Data movement in bytes -------------------------------------------===//
//
// Note [Data movement in bytes]: Transpose, Slice, Split, Concat and Gather
// copy movable element types as stored bytes. String tensors still take the
// decoding path (Arr, takeElems), so the same call on "numbered" strings is
// the reference: element k of the input holds the value k (mod 100 for the
// one-byte types) in every element type.

namespace {

bool oneByte(DataType dt) { return dt == DataType::Int8 || dt == DataType::Uint8; }
int64_t numberOf(DataType dt, int64_t k) { return oneByte(dt) ? k % 100 : k; }

template <typename T, typename F> Tensor numberedAs(DataType dt, std::vector<int64_t> dims, F conv) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<T> v((size_t)n);
  for (int64_t k = 0; k < n; ++k) v[(size_t)k] = conv(numberOf(dt, k));
  return typed<T>(dt, std::move(dims), std::move(v));
}

/// Element k holds numberOf(dt, k), as a string for String.
Tensor numbered(DataType dt, std::vector<int64_t> dims) {
  auto same = [](int64_t v) { return v; };
  switch (dt) {
  case DataType::Int8: return numberedAs<int8_t>(dt, dims, same);
  case DataType::Uint8: return numberedAs<uint8_t>(dt, dims, same);
  case DataType::Int16: return numberedAs<int16_t>(dt, dims, same);
  case DataType::Int32: return numberedAs<int32_t>(dt, dims, same);
  case DataType::Int64: return numberedAs<int64_t>(dt, dims, same);
  case DataType::Uint64: return numberedAs<uint64_t>(dt, dims, same);
  case DataType::Float: return numberedAs<float>(dt, dims, same);
  case DataType::Double: return numberedAs<double>(dt, dims, same);
  case DataType::Float16:
    return numberedAs<uint16_t>(dt, dims, [](int64_t v) { return floatToHalf((float)v); });
  case DataType::BFloat16:
    return numberedAs<uint16_t>(dt, dims, [](int64_t v) { return floatToBFloat16((float)v); });
  default: break;
  }
  Tensor t;
  t.setDataType(DataType::String);
  t.setDims(dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t k = 0; k < n; ++k) t.stringData.mut().push_back(std::to_string(k));
  t.setTyped(Tensor::TypedField::String);
  return t;
}

const DataType kMovable[] = {DataType::Int8,    DataType::Uint8,  DataType::Float16,
                             DataType::BFloat16, DataType::Int16, DataType::Int32,
                             DataType::Float,   DataType::Int64,  DataType::Uint64,
                             DataType::Double};

/// Runs `make(dt)` (a call whose input #0 is numbered(dt, dims)) on strings
/// and on every movable type and expects the same elements and dims.
template <typename Make> void expectLikeStrings(const char *what, Make make) {
  auto ref = make(DataType::String).run();
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status();
  for (DataType dt : kMovable) {
    auto got = make(dt).run();
    ASSERT_TRUE(got.ok()) << what << ": " << got.status();
    ASSERT_EQ(got->size(), ref->size()) << what;
    for (size_t o = 0; o < ref->size(); ++o) {
      const Tensor &r = (*ref)[o], &g = (*got)[o];
      EXPECT_EQ(g.dataType(), dt) << what;
      EXPECT_EQ(g.dims(), r.dims()) << what << " result #" << o;
      auto rs = r.strings();
      auto gv = g.values<double>();
      ASSERT_TRUE(rs.ok() && gv.ok()) << what;
      ASSERT_EQ(rs->size(), gv->size()) << what;
      for (size_t k = 0; k < rs->size(); ++k)
        ASSERT_EQ((*gv)[k], (double)numberOf(dt, std::stoll((*rs)[k])))
            << what << " " << dataTypeName(dt).str() << " result #" << o << " element " << k;
    }
  }
}

} // namespace

TEST(DataMovement, TransposeMatchesTheDecodingPath) {
  struct Case { std::vector<int64_t> dims, perm; };
  const Case cases[] = {{{2, 3, 4, 5}, {}},           {{2, 3, 4, 5}, {0, 2, 1, 3}},
                        {{2, 3, 4, 5}, {1, 0, 2, 3}}, {{2, 3, 4, 5}, {0, 1, 3, 2}},
                        {{2, 3, 4, 5}, {2, 0, 3, 1}}, {{1, 4, 1, 3}, {3, 1, 0, 2}},
                        {{7, 9}, {1, 0}},             {{0, 3}, {1, 0}},
                        {{}, {}},                     {{5}, {0}}};
  for (const Case &k : cases)
    expectLikeStrings("Transpose", [&](DataType dt) {
      Call c("Transpose");
      c.in(numbered(dt, k.dims));
      if (!k.perm.empty()) c.attr(intsAttr("perm", k.perm));
      return c;
    });
}

TEST(DataMovement, SliceMatchesTheDecodingPath) {
  struct Case { std::vector<int64_t> starts, ends, axes, steps; };
  const Case cases[] = {{{1}, {3}, {0}, {1}},
                        {{0, 1}, {4, 5}, {1, 2}, {2, 2}},
                        {{-1}, {-100}, {2}, {-1}},
                        {{3, 4}, {0, 0}, {0, 1}, {-2, -3}},
                        {{2}, {2}, {1}, {1}},
                        {{0, 0, 5}, {4, 5, 6}, {0, 1, 2}, {1, 1, 1}},
                        {{1, 0}, {1000, 1}, {-1, 0}, {4, 1}}};
  for (const Case &k : cases)
    expectLikeStrings("Slice", [&](DataType dt) {
      Call c("Slice", 13);
      c.in(numbered(dt, {4, 5, 6})).in(i64({(int64_t)k.starts.size()}, k.starts))
          .in(i64({(int64_t)k.ends.size()}, k.ends)).in(i64({(int64_t)k.axes.size()}, k.axes))
          .in(i64({(int64_t)k.steps.size()}, k.steps));
      return c;
    });
}

TEST(DataMovement, SplitConcatGatherMatchTheDecodingPath) {
  expectLikeStrings("Split", [](DataType dt) {
    Call c("Split", 13);
    c.in(numbered(dt, {4, 6})).in(i64({3}, {1, 2, 3})).attr(intAttr("axis", 1));
    c.numOutputs = 3;
    return c;
  });
  expectLikeStrings("Split even", [](DataType dt) {
    Call c("Split", 13);
    c.in(numbered(dt, {4, 6, 2}));
    c.numOutputs = 2;
    return c;
  });
  for (int64_t axis : {0, 1, -1})
    expectLikeStrings("Concat", [&](DataType dt) {
      std::vector<int64_t> a = {2, 3, 4}, b = {2, 3, 4}, e = {2, 3, 4};
      size_t ax = (size_t)(axis < 0 ? axis + 3 : axis);
      b[ax] = 2;
      e[ax] = 0;
      Call c("Concat");
      c.in(numbered(dt, a)).in(numbered(dt, b)).in(numbered(dt, e)).in(numbered(dt, a))
          .attr(intAttr("axis", axis));
      return c;
    });
  struct G { std::vector<int64_t> idims, idx; int64_t axis; };
  const G gathers[] = {{{3}, {-1, 0, 3}, 0}, {{2, 2}, {1, -4, 3, 0}, 1},
                       {{}, {2}, 2},        {{0}, {}, 1}};
  for (const G &g : gathers)
    expectLikeStrings("Gather", [&](DataType dt) {
      Call c("Gather");
      c.in(numbered(dt, {5, 4, 3})).in(i64(g.idims, g.idx)).attr(intAttr("axis", g.axis));
      return c;
    });
}

TEST(DataMovement, ErrorsAreThoseOfTheDecodingPath) {
  // An index out of range, a shape that does not fit, a tensor with fewer
  // bytes than its dims: refused as before (the last by the decoding path).
  EXPECT_EQ(Call("Gather").in(numbered(DataType::Float, {5, 4})).in(i64({1}, {5})).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Call("Concat").in(numbered(DataType::Float, {2, 3})).in(numbered(DataType::Float, {3, 3}))
                .attr(intAttr("axis", 1)).code(),
            absl::StatusCode::kInvalidArgument);
  Tensor shortData = makeTensor(DataType::Float, {2, 3}, std::string(20, '\0'));
  EXPECT_FALSE(Call("Transpose").in(shortData).run().ok());
  Call big("Gather");
  big.in(numbered(DataType::Float, {5, 4})).in(i64({8}, {0, 1, 2, 3, 4, 0, 1, 2}));
  big.maxBytes = 64; // 32 floats
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
}

TEST(DataMovement, Float16NaNKeepsItsBits) {
  // Moving stored bytes keeps a signalling NaN's bits; decoding to float and
  // encoding back quietened it (0x7c01 became 0x7e01).
  Tensor h = typed<uint16_t>(DataType::Float16, {2, 2}, {0x7c01, 0x3c00, 0xfd55, 0x0001});
  auto bits = [](const Tensor &t) {
    auto b = t.bytes();
    EXPECT_TRUE(b.ok());
    std::vector<uint16_t> v(b->size() / 2);
    if (!v.empty()) std::memcpy(v.data(), b->data(), b->size());
    return v;
  };
  EXPECT_EQ(bits(Call("Transpose").in(h).one()), (std::vector<uint16_t>{0x7c01, 0xfd55, 0x3c00, 0x0001}));
  EXPECT_EQ(bits(Call("Gather").in(h).in(i64({1}, {0})).one()),
            (std::vector<uint16_t>{0x7c01, 0x3c00}));
  EXPECT_EQ(bits(Call("Concat").in(h).in(h).attr(intAttr("axis", 0)).one()),
            (std::vector<uint16_t>{0x7c01, 0x3c00, 0xfd55, 0x0001, 0x7c01, 0x3c00, 0xfd55, 0x0001}));
}

// Softmax and BatchNormalization (test mode) read a float X in place and
// write Y into its bytes: the values are those of the formulas, element for
// element (exactly: the same operations in the same order).
TEST(InPlace, SoftmaxAndBatchNormMatchTheirFormulas) {
  std::vector<float> x = ramp(2 * 3 * 4, 0.37f);
  struct Case { int64_t opset, axis, outer, dim, inner; };
  for (const Case &k : {Case{13, 1, 2, 3, 4}, Case{13, -1, 6, 4, 1}, Case{11, 1, 2, 12, 1}})
    for (const char *op : {"Softmax", "LogSoftmax", "Hardmax"}) {
      Tensor y = Call(op, k.opset).in(f32({2, 3, 4}, x)).attr(intAttr("axis", k.axis)).one();
      auto got = y.values<float>();
      ASSERT_TRUE(got.ok());
      for (int64_t o = 0; o < k.outer; ++o)
        for (int64_t i = 0; i < k.inner; ++i) {
          auto at = [&](int64_t j) { return x[(size_t)((o * k.dim + j) * k.inner + i)]; };
          float mx = -INFINITY, sum = 0;
          int64_t arg = 0;
          for (int64_t j = 0; j < k.dim; ++j)
            if (at(j) > mx) { mx = at(j); arg = j; }
          for (int64_t j = 0; j < k.dim; ++j) sum += std::exp(at(j) - mx);
          for (int64_t j = 0; j < k.dim; ++j) {
            float want = std::string(op) == "Hardmax" ? (j == arg ? 1.0f : 0.0f)
                         : std::string(op) == "Softmax" ? std::exp(at(j) - mx) / sum
                                                        : at(j) - mx - std::log(sum);
            EXPECT_EQ((*got)[(size_t)((o * k.dim + j) * k.inner + i)], want)
                << op << " opset " << k.opset << " axis " << k.axis;
          }
        }
    }
  std::vector<float> sc = {0.5f, 2.0f, -1.0f}, b = {0.1f, 0.0f, 3.0f}, m = {1.0f, -2.0f, 0.25f},
                     v = {4.0f, 0.5f, 1.0f};
  Tensor y = Call("BatchNormalization", 15).in(f32({2, 3, 4}, x)).in(f32({3}, sc)).in(f32({3}, b))
                 .in(f32({3}, m)).in(f32({3}, v)).attr(floatAttr("epsilon", 1e-3f)).one();
  auto got = y.values<float>();
  ASSERT_TRUE(got.ok());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ch = 0; ch < 3; ++ch)
      for (int64_t k = 0; k < 4; ++k) {
        float a = sc[ch] / std::sqrt(v[ch] + 1e-3f);
        size_t e = (size_t)((n * 3 + ch) * 4 + k);
        EXPECT_EQ((*got)[e], (x[e] - m[ch]) * a + b[ch]) << e;
      }
}

// Note [Casts without decoded copies]: float16 and bfloat16 to float decode
// each stored element into the result (every bit pattern, NaNs included,
// as a read of the tensor gives it); a cast to the same type copies the
// bytes; float16 to float16 still re-encodes.
TEST(InPlace, CastsDecodeIntoTheResult) {
  std::vector<uint16_t> all(65536);
  for (size_t k = 0; k < all.size(); ++k) all[k] = (uint16_t)k;
  for (DataType from : {DataType::Float16, DataType::BFloat16}) {
    Tensor h = typed<uint16_t>(from, {256, 256}, all);
    auto want = h.values<float>();
    ASSERT_TRUE(want.ok());
    Tensor y = Call("Cast").in(h).attr(intAttr("to", (int64_t)DataType::Float)).one();
    EXPECT_EQ(y.dims(), (std::vector<int64_t>{256, 256}));
    auto b = y.bytes();
    ASSERT_TRUE(b.ok());
    ASSERT_EQ(b->size(), 4 * all.size());
    EXPECT_EQ(std::memcmp(b->data(), want->data(), b->size()), 0) << dataTypeName(from).str();
  }
  Tensor i = i32({3}, {-7, 0, 1 << 30});
  Tensor same = Call("Cast").in(i).attr(intAttr("to", (int64_t)DataType::Int32)).one();
  EXPECT_EQ(same.rawData(), i.rawData());
  EXPECT_NE((const void *)same.rawData().data(), (const void *)i.rawData().data());
  Tensor h = typed<uint16_t>(DataType::Float16, {1}, {0x7c01});
  // (The result is kept: bytes() is a view of its buffer.)
  Tensor hc = Call("Cast").in(h).attr(intAttr("to", (int64_t)DataType::Float16)).one();
  auto hb = hc.bytes();
  ASSERT_TRUE(hb.ok());
  uint16_t bits;
  std::memcpy(&bits, hb->data(), 2);
  EXPECT_EQ(bits, 0x7e01); // re-encoded, as before
}

// The pools read a float or double X in place and write Y into its bytes
// (Note [Inputs read in place]): each element equal to its window's formula
// (pads, strides, dilations, ceil_mode, count_include_pad; MaxPool's first
// maximum and its Indices; a NaN never the maximum), in the kernel's order.
/// Equal, or both NaN (a NaN in a window makes an average a NaN).
template <typename T> bool sameValue(T a, T b) { return a == b || (a != a && b != b); }

template <typename T> void checkPools2D(DataType dt) {
  const int64_t N = 2, C = 3, H = 5, W = 6;
  std::vector<T> x((size_t)(N * C * H * W));
  for (size_t i = 0; i < x.size(); ++i) x[i] = (T)((int64_t)(i * 7) % 23) * (T)0.37 - (T)3;
  x[9] = std::numeric_limits<T>::quiet_NaN();
  struct Case {
    const char *op;
    int64_t opset;
    std::vector<int64_t> k, s, pads, dil;
    int64_t ceil, countPad, p;
  };
  const Case cases[] = {
      {"MaxPool", 12, {3, 2}, {2, 1}, {1, 0, 1, 1}, {1, 2}, 0, 0, 0},
      {"MaxPool", 12, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, 0, 0},
      {"AveragePool", 19, {3, 3}, {2, 2}, {1, 1, 1, 1}, {2, 1}, 1, 0, 0},
      {"AveragePool", 19, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 1, 0},
      {"LpPool", 18, {2, 3}, {1, 2}, {1, 0, 0, 1}, {1, 1}, 0, 0, 2},
      {"LpPool", 18, {2, 2}, {2, 2}, {0, 1, 1, 0}, {1, 1}, 1, 0, 3},
  };
  for (const Case &k : cases) {
    std::string op = k.op;
    Call c(op, k.opset);
    c.in(typed<T>(dt, {N, C, H, W}, x))
        .attr(intsAttr("kernel_shape", k.k))
        .attr(intsAttr("strides", k.s))
        .attr(intsAttr("pads", k.pads))
        .attr(intsAttr("dilations", k.dil))
        .attr(intAttr("ceil_mode", k.ceil));
    if (op == "AveragePool") c.attr(intAttr("count_include_pad", k.countPad));
    if (op == "LpPool") c.attr(intAttr("p", k.p));
    if (op == "MaxPool") c.numOutputs = 2;
    auto r = c.run();
    ASSERT_TRUE(r.ok()) << op << ": " << r.status();
    ASSERT_EQ((*r)[0].dataType(), dt);
    std::vector<int64_t> grid(2);
    int64_t img[2] = {H, W};
    for (int d = 0; d < 2; ++d) {
      int64_t span = img[d] + k.pads[d] + k.pads[d + 2] - ((k.k[d] - 1) * k.dil[d] + 1);
      grid[d] = (k.ceil ? (span + k.s[d] - 1) / k.s[d] : span / k.s[d]) + 1;
      if (k.ceil && (grid[d] - 1) * k.s[d] >= img[d] + k.pads[d]) --grid[d];
    }
    ASSERT_EQ((*r)[0].dims(), (std::vector<int64_t>{N, C, grid[0], grid[1]})) << op;
    auto got = (*r)[0].values<T>();
    ASSERT_TRUE(got.ok());
    std::vector<int64_t> idx;
    if (op == "MaxPool") {
      auto iv = (*r)[1].values<int64_t>();
      ASSERT_TRUE(iv.ok());
      idx = *iv;
    }
    size_t e = 0;
    for (int64_t pl = 0; pl < N * C; ++pl)
      for (int64_t oh = 0; oh < grid[0]; ++oh)
        for (int64_t ow = 0; ow < grid[1]; ++ow, ++e) {
          T best = std::numeric_limits<T>::lowest();
          int64_t at = -1, inside = 0, padded = 0;
          double sum = 0;
          for (int64_t a = 0; a < k.k[0]; ++a)
            for (int64_t b = 0; b < k.k[1]; ++b) {
              int64_t h = oh * k.s[0] - k.pads[0] + a * k.dil[0];
              int64_t w = ow * k.s[1] - k.pads[1] + b * k.dil[1];
              if (h < H + k.pads[2] && w < W + k.pads[3]) ++padded;
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              ++inside;
              int64_t flat = h * W + w;
              T v = x[(size_t)(pl * H * W + flat)];
              if (at < 0 ? v == v : v > best) best = v, at = flat;
              double m = std::fabs((double)v);
              sum += op == "AveragePool" ? (double)v : k.p == 2 ? m * m : std::pow(m, (double)k.p);
            }
          T want = op == "MaxPool"       ? best
                   : op == "AveragePool" ? (T)(sum / (double)(k.countPad ? padded : inside))
                   : k.p == 2            ? (T)std::sqrt(sum)
                                         : (T)std::pow(sum, 1.0 / (double)k.p);
          EXPECT_TRUE(sameValue((*got)[e], want)) << op << " element " << e << ": " << (*got)[e]
                                                  << " against " << want;
          if (op == "MaxPool") {
            EXPECT_EQ(idx[e], pl * H * W + (at < 0 ? 0 : at)) << e;
          }
        }
  }
  // The global pools, one value per plane (the average summed in T).
  std::vector<T> g(x.begin(), x.begin() + N * C * 10);
  for (const char *op : {"GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"}) {
    Tensor y = Call(op).in(typed<T>(dt, {N, C, 2, 5}, g)).one();
    ASSERT_EQ(y.dims(), (std::vector<int64_t>{N, C, 1, 1})) << op;
    auto got = y.values<T>();
    ASSERT_TRUE(got.ok());
    for (int64_t pl = 0; pl < N * C; ++pl) {
      T best = std::numeric_limits<T>::lowest(), tsum = 0;
      bool any = false;
      double sq = 0;
      for (int64_t j = 0; j < 10; ++j) {
        T v = g[(size_t)(pl * 10 + j)];
        if (any ? v > best : v == v) best = v, any = true;
        tsum += v;
        sq += std::fabs((double)v) * std::fabs((double)v);
      }
      T want = std::string(op) == "GlobalMaxPool"       ? best
               : std::string(op) == "GlobalAveragePool" ? tsum / (T)10
                                                        : (T)std::sqrt(sq);
      EXPECT_TRUE(sameValue((*got)[(size_t)pl], want)) << op << " plane " << pl;
    }
  }
}

TEST(InPlace, PoolsMatchTheirFormulas) {
  checkPools2D<float>(DataType::Float);
  checkPools2D<double>(DataType::Double);
}

// Note [Reductions in place]: each Reduce* of a float or double X equals
// its formula, the elements accumulated in X's row-major order (axes
// attribute and operand, keepdims, negative axes, all axes, a NaN), and
// noop_with_empty_axes still gives X.
template <typename T> void checkReductions(DataType dt) {
  const std::vector<int64_t> d = {2, 3, 4};
  std::vector<T> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (T)((int64_t)(i * 5) % 11) * (T)0.31 - (T)1.4;
  std::vector<T> xn = x;
  xn[13] = std::numeric_limits<T>::quiet_NaN();
  const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                       "ReduceSumSquare"};
  const std::vector<std::vector<int64_t>> axesSets = {{}, {1}, {0, 2}, {-1}, {0, 1, 2}};
  for (const std::vector<T> *in : {&x, &xn})
    for (const char *opc : ops)
      for (const auto &axes : axesSets)
        for (int64_t keep : {0, 1})
          for (int64_t opset : {13, 18}) {
            std::string op = opc;
            // LogSum of negative sums is NaN either way; keep the inputs
            // positive for the logs so the values say something.
            std::vector<T> v = *in;
            if (op == "ReduceLogSum")
              for (T &e : v) e = std::fabs(e) + (T)0.1;
            Call c(op, opset);
            c.in(typed<T>(dt, d, v)).attr(intAttr("keepdims", keep));
            bool operand = opset >= 18 || op == "ReduceSum";
            if (!axes.empty()) {
              if (operand) c.in(i64({(int64_t)axes.size()}, axes));
              else c.attr(intsAttr("axes", axes));
            }
            auto r = c.run();
            ASSERT_TRUE(r.ok()) << op << ": " << r.status();
            std::vector<bool> red(3, axes.empty());
            for (int64_t a : axes) red[(size_t)((a + 3) % 3)] = true;
            std::vector<int64_t> od, kd;
            for (size_t k = 0; k < 3; ++k) {
              kd.push_back(red[k] ? 1 : d[k]);
              if (!red[k] || keep) od.push_back(red[k] ? 1 : d[k]);
            }
            ASSERT_EQ((*r)[0].dims(), od) << op;
            ASSERT_EQ((*r)[0].dataType(), dt);
            size_t outN = (size_t)(kd[0] * kd[1] * kd[2]);
            T init = op == "ReduceProd"  ? T(1)
                     : op == "ReduceMax" ? -std::numeric_limits<T>::infinity()
                     : op == "ReduceMin" ? std::numeric_limits<T>::infinity()
                                         : T(0);
            std::vector<T> acc(outN, init);
            for (int64_t i = 0; i < 2; ++i)
              for (int64_t j = 0; j < 3; ++j)
                for (int64_t k = 0; k < 4; ++k) {
                  T e = v[(size_t)((i * 3 + j) * 4 + k)];
                  T &a = acc[(size_t)(((red[0] ? 0 : i) * kd[1] + (red[1] ? 0 : j)) * kd[2] +
                                      (red[2] ? 0 : k))];
                  if (op == "ReduceMax" || op == "ReduceMin") {
                    if (a != a) continue;
                    if (e != e || (op == "ReduceMax" ? e > a : e < a)) a = e;
                  } else if (op == "ReduceProd") a *= e;
                  else if (op == "ReduceL1") a += e < T(0) ? -e : e;
                  else if (op == "ReduceL2" || op == "ReduceSumSquare") a += e * e;
                  else if (op == "ReduceLogSumExp") a += std::exp(e);
                  else a += e;
                }
            T group = (T)(24 / (int64_t)outN);
            auto got = (*r)[0].values<T>();
            ASSERT_TRUE(got.ok());
            for (size_t q = 0; q < outN; ++q) {
              T want = op == "ReduceMean"                                 ? acc[q] / group
                       : op == "ReduceL2"                                 ? std::sqrt(acc[q])
                       : op == "ReduceLogSum" || op == "ReduceLogSumExp" ? std::log(acc[q])
                                                                          : acc[q];
              EXPECT_TRUE(sameValue((*got)[q], want))
                  << op << "-" << opset << " keepdims " << keep << " axes " << axes.size()
                  << " element " << q << ": " << (*got)[q] << " against " << want;
            }
          }
  // noop_with_empty_axes: Y is X.
  Tensor y = Call("ReduceMax", 18).in(typed<T>(dt, d, x)).attr(intAttr("noop_with_empty_axes", 1))
                 .one();
  EXPECT_EQ(y.dims(), d);
  auto got = y.values<T>();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, x);
}

TEST(InPlace, ReductionsMatchTheirFormulas) {
  checkReductions<float>(DataType::Float);
  checkReductions<double>(DataType::Double);
}

// Note [Dequantizing stored bytes]: an integer x read where it is stored
// (aligned or not) gives y = (x - zero point) * scale element by element,
// per tensor, per axis and blocked, into float or (rounded) float16.
template <typename X> void checkDequantize(DataType dt, bool misaligned) {
  const std::vector<int64_t> d = {2, 3, 4};
  std::vector<X> x(24);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (X)((int64_t)std::numeric_limits<X>::min() + (int64_t)(i * 37 % 24) * 11);
  Tensor xt = typed<X>(dt, d, x);
  if (misaligned) {
    std::string bytes(1, 'x');
    bytes.append(reinterpret_cast<const char *>(x.data()), x.size() * sizeof(X));
    xt = Tensor();
    xt.setDataType(dt);
    xt.setDims(d);
    xt.setRaw(std::make_shared<StringBuffer>(std::move(bytes)), 1, x.size() * sizeof(X));
  }
  std::vector<float> sc = {0.25f, 0.0037f, 1.5f, -0.5f};
  struct Case { int64_t opset, axis, block; std::vector<int64_t> pd; bool zp, half; };
  const Case cases[] = {{13, 1, 0, {}, true, false},      {13, 1, 0, {}, false, false},
                        {13, 1, 0, {3}, true, false},     {13, 2, 0, {4}, false, false},
                        {21, 2, 2, {2, 3, 2}, true, false}, {19, 1, 0, {3}, true, true}};
  for (const Case &k : cases) {
    int64_t np = 1;
    for (int64_t v : k.pd) np *= v;
    std::vector<float> s((size_t)np); // (the blocked case has 12 scales)
    for (int64_t p = 0; p < np; ++p) s[(size_t)p] = sc[(size_t)p % sc.size()];
    std::vector<X> z((size_t)np);
    for (int64_t p = 0; p < np; ++p) z[(size_t)p] = (X)((int64_t)std::numeric_limits<X>::min() / 2 + p * 3);
    Call c("DequantizeLinear", k.opset);
    c.in(xt);
    if (k.half) {
      Tensor sf = Call("Cast").in(f32(k.pd, s)).attr(intAttr("to", (int64_t)DataType::Float16)).one();
      auto back = sf.values<float>();
      ASSERT_TRUE(back.ok());
      s = *back;
      c.in(sf);
    } else {
      c.in(f32(k.pd, s));
    }
    if (k.zp) c.in(typed<X>(dt, k.pd, z));
    c.attr(intAttr("axis", k.axis));
    if (k.block) c.attr(intAttr("block_size", k.block));
    auto r = c.run();
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<float> want(24);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t m = 0; m < 4; ++m) {
          size_t e = (size_t)((i * 3 + j) * 4 + m);
          int64_t p = k.pd.empty() ? 0 : k.block ? (i * 3 + j) * 2 + m / 2 : k.axis == 1 ? j : m;
          want[e] = (float)((int64_t)x[e] - (k.zp ? (int64_t)z[(size_t)p] : 0)) * s[(size_t)p];
        }
    Tensor w = f32(d, want);
    if (k.half) w = Call("Cast").in(w).attr(intAttr("to", (int64_t)DataType::Float16)).one();
    ASSERT_EQ((*r)[0].dataType(), w.dataType());
    EXPECT_EQ((*r)[0].dims(), d);
    auto gb = (*r)[0].bytes(), wb = w.bytes();
    ASSERT_TRUE(gb.ok() && wb.ok());
    EXPECT_EQ(std::string(gb->data(), gb->size()), std::string(wb->data(), wb->size()))
        << dataTypeName(dt).str() << " opset " << k.opset << " axis " << k.axis << " block "
        << k.block << (misaligned ? " misaligned" : "");
  }
}

TEST(InPlace, DequantizeReadsStoredIntegers) {
  for (bool mis : {false, true}) {
    checkDequantize<int8_t>(DataType::Int8, mis);
    checkDequantize<uint8_t>(DataType::Uint8, mis);
    checkDequantize<int16_t>(DataType::Int16, mis);
    checkDequantize<uint16_t>(DataType::Uint16, mis);
    checkDequantize<int32_t>(DataType::Int32, mis);
  }
}

// Note [Resizing in place]: a float X is resized through its bytes; a
// float16 X still takes the decoding path, which runs the same passes in
// float on the decoded values. With X's values exact in float16, the float
// result rounded to float16 must be the float16 result, bit for bit: linear
// and cubic, up and down, antialias, align_corners, crop with
// extrapolation, a kept axis only, the opset-18 axes attribute.
TEST(InPlace, ResizeMatchesTheDecodingPath) {
  const std::vector<int64_t> d = {1, 2, 5, 6};
  std::vector<float> x(60);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (float)((int64_t)(i * 13) % 29) * 0.125f - 1.5f;
  Tensor xf = f32(d, x);
  Tensor xh = Call("Cast").in(xf).attr(intAttr("to", (int64_t)DataType::Float16)).one();
  auto exact = xh.values<float>();
  ASSERT_TRUE(exact.ok());
  ASSERT_EQ(*exact, x); // the values survive float16
  struct Case {
    const char *mode, *ctm;
    std::vector<float> scales;
    std::vector<int64_t> sizes, axes;
    int64_t antialias;
  };
  const Case cases[] = {
      {"linear", "half_pixel", {1, 1, 2.0f, 1.5f}, {}, {}, 0},
      {"cubic", "half_pixel", {1, 1, 0.6f, 0.5f}, {}, {}, 1},
      {"cubic", "pytorch_half_pixel", {1, 1, 1.7f, 0.8f}, {}, {}, 0},
      {"linear", "align_corners", {}, {1, 2, 7, 4}, {}, 0},
      {"linear", "tf_crop_and_resize", {}, {1, 2, 4, 9}, {}, 0},
      {"linear", "asymmetric", {1, 1, 1, 1}, {}, {}, 0},
      {"cubic", "asymmetric", {}, {8}, {3}, 0},
  };
  for (const Case &k : cases) {
    auto run = [&](const Tensor &in) {
      Call c("Resize", 19);
      c.in(in);
      std::string ctm = k.ctm;
      if (ctm == "tf_crop_and_resize") c.in(f32({8}, {0, 0, 0.1f, -0.2f, 1, 1, 0.9f, 1.3f}));
      else c.in(f32({0}, {}));
      if (!k.scales.empty()) c.in(f32({(int64_t)k.scales.size()}, k.scales));
      else c.in(f32({0}, {})).in(i64({(int64_t)k.sizes.size()}, k.sizes));
      c.attr(stringAttr("mode", k.mode)).attr(stringAttr("coordinate_transformation_mode", k.ctm));
      if (ctm == "tf_crop_and_resize") c.attr(floatAttr("extrapolation_value", 2.5f));
      if (k.antialias) c.attr(intAttr("antialias", 1));
      if (!k.axes.empty()) c.attr(intsAttr("axes", k.axes));
      return c.one();
    };
    Tensor yf = run(xf), yh = run(xh);
    ASSERT_EQ(yf.dataType(), DataType::Float) << k.mode << " " << k.ctm;
    ASSERT_EQ(yf.dims(), yh.dims()) << k.mode << " " << k.ctm;
    Tensor yfh = Call("Cast").in(yf).attr(intAttr("to", (int64_t)DataType::Float16)).one();
    auto a = yfh.bytes(), b = yh.bytes();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(std::string(a->data(), a->size()), std::string(b->data(), b->size()))
        << k.mode << " " << k.ctm;
  }
}

// Note [Reductions in place]: a float16 or bfloat16 X is read from its stored
// bytes and accumulated in float, rounded once at the end. The float kernel
// on the same (exactly representable) values runs the same operations in the
// same order, so its result encoded to the small type must be the small
// type's result, bit for bit: every reduction, five axes sets, keepdims 0
// and 1, with a NaN, and from a raw_data window one byte off (unaligned).
TEST(InPlace, HalfReductionsMatchTheFloatPath) {
  const std::vector<int64_t> d = {2, 3, 4};
  const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                       "ReduceSumSquare"};
  const std::vector<std::vector<int64_t>> axesSets = {{}, {1}, {0, 2}, {-1}, {0, 1, 2}};
  for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
    auto encode = [dt](float v) { return dt == DataType::Float16 ? floatToHalf(v) : floatToBFloat16(v); };
    auto decode = [dt](uint16_t h) { return dt == DataType::Float16 ? halfToFloat(h) : bfloat16ToFloat(h); };
    for (bool withNaN : {false, true})
      for (bool misaligned : {false, true})
        for (const char *op : ops) {
          // Values a float16 and a bfloat16 hold exactly (multiples of 1/8
          // up to 2.5); sums of them are not, so rounding is exercised.
          std::vector<uint16_t> h(24);
          std::vector<float> f(24);
          for (size_t i = 0; i < 24; ++i) {
            float v = (float)((int64_t)(i * 5) % 11) * 0.375f - 1.25f;
            if (std::string(op) == "ReduceLogSum") v = std::fabs(v) + 0.125f;
            if (withNaN && i == 13) v = std::numeric_limits<float>::quiet_NaN();
            h[i] = encode(v);
            f[i] = decode(h[i]);
            if (!withNaN || i != 13) {
              ASSERT_EQ(f[i], v);
            }
          }
          Tensor xh = typed<uint16_t>(dt, d, h);
          if (misaligned) {
            std::string bytes(1, 'x');
            bytes.append(reinterpret_cast<const char *>(h.data()), h.size() * 2);
            xh = Tensor();
            xh.setDataType(dt);
            xh.setDims(d);
            xh.setRaw(std::make_shared<StringBuffer>(std::move(bytes)), 1, h.size() * 2);
          }
          for (const auto &axes : axesSets)
            for (int64_t keep : {0, 1}) {
              auto run = [&](const Tensor &x) {
                Call c(op, 18);
                c.in(x).attr(intAttr("keepdims", keep));
                if (!axes.empty()) c.in(i64({(int64_t)axes.size()}, axes));
                return c.one();
              };
              Tensor yh = run(xh), yf = run(f32(d, f));
              ASSERT_EQ(yh.dataType(), dt) << op;
              ASSERT_EQ(yh.dims(), yf.dims()) << op;
              auto fv = yf.values<float>();
              auto hb = yh.bytes();
              ASSERT_TRUE(fv.ok() && hb.ok());
              ASSERT_EQ(hb->size(), fv->size() * 2);
              for (size_t q = 0; q < fv->size(); ++q) {
                uint16_t got;
                std::memcpy(&got, hb->data() + 2 * q, 2);
                EXPECT_EQ(got, encode((*fv)[q]))
                    << dataTypeName(dt).str() << " " << op << " axes " << axes.size() << " keepdims "
                    << keep << (withNaN ? " NaN" : "") << (misaligned ? " misaligned" : "")
                    << " element " << q;
              }
            }
        }
  }
}

// Note [Nearest Resize in bytes]: nearest Resize and Upsample move stored
// bytes for the movable types; strings take the decoding path, so the same
// call on numbered strings is the reference (scales up and down, sizes,
// every nearest_mode, the coordinate modes, the axes attribute, Resize-10
// and Upsample-9).
TEST(DataMovement, NearestResizeMatchesTheDecodingPath) {
  struct Case {
    int64_t opset;
    std::vector<float> scales;
    std::vector<int64_t> sizes, axes;
    const char *ctm, *nearest;
  };
  const Case cases[] = {
      {19, {1, 1, 2, 1.5f}, {}, {}, "half_pixel", "round_prefer_floor"},
      {19, {1, 1, 0.5f, 0.6f}, {}, {}, "half_pixel", "round_prefer_ceil"},
      {19, {1, 1, 1.7f, 0.8f}, {}, {}, "asymmetric", "floor"},
      {19, {1, 1, 2.5f, 3}, {}, {}, "align_corners", "ceil"},
      {19, {}, {1, 3, 7, 4}, {}, "pytorch_half_pixel", "round_prefer_floor"},
      {19, {}, {9}, {3}, "half_pixel_symmetric", "round_prefer_ceil"},
      {19, {1, 1, 1, 1}, {}, {}, "half_pixel", "round_prefer_floor"},
      {19, {2, 1, 1, 1}, {}, {}, "asymmetric", "floor"},
      {10, {1, 1, 2, 0.5f}, {}, {}, nullptr, nullptr},
      {9, {1, 2, 3, 2}, {}, {}, nullptr, nullptr},
  };
  for (const Case &k : cases)
    expectLikeStrings("nearest Resize", [&](DataType dt) {
      Call c(k.opset == 9 ? "Upsample" : "Resize", k.opset);
      c.in(numbered(dt, {1, 3, 4, 5}));
      if (k.opset >= 11) c.in(f32({0}, {}));
      if (!k.scales.empty()) c.in(f32({(int64_t)k.scales.size()}, k.scales));
      else c.in(f32({0}, {})).in(i64({(int64_t)k.sizes.size()}, k.sizes));
      if (k.ctm) c.attr(stringAttr("coordinate_transformation_mode", k.ctm));
      if (k.nearest) c.attr(stringAttr("nearest_mode", k.nearest));
      if (!k.axes.empty()) c.attr(intsAttr("axes", k.axes));
      return c;
    });
}

// Outside a tf_crop_and_resize box the result is the extrapolation value,
// encoded in X's type; inside, the elements the strings' decoding path
// picks (the strings' fill is "").
TEST(DataMovement, NearestResizeFillsOutsideTheCropBox) {
  auto make = [](DataType dt) {
    Call c("Resize", 19);
    c.in(numbered(dt, {1, 2, 4, 5}))
        .in(f32({8}, {0, 0, -0.25f, 0.1f, 1, 1, 0.8f, 1.4f}))
        .in(f32({0}, {}))
        .in(i64({4}, {1, 2, 6, 7}))
        .attr(stringAttr("coordinate_transformation_mode", "tf_crop_and_resize"))
        .attr(floatAttr("extrapolation_value", 7.0f));
    return c;
  };
  auto ref = make(DataType::String).run();
  ASSERT_TRUE(ref.ok()) << ref.status();
  auto rs = (*ref)[0].strings();
  ASSERT_TRUE(rs.ok());
  size_t outside = 0;
  for (const std::string &s : *rs) outside += s.empty();
  ASSERT_GT(outside, 0u);
  ASSERT_LT(outside, rs->size());
  for (DataType dt : kMovable) {
    auto got = make(dt).run();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0].dims(), (*ref)[0].dims());
    auto gv = (*got)[0].values<double>();
    ASSERT_TRUE(gv.ok());
    for (size_t k = 0; k < rs->size(); ++k)
      EXPECT_EQ((*gv)[k], (*rs)[k].empty() ? 7.0 : (double)numberOf(dt, std::stoll((*rs)[k])))
          << dataTypeName(dt).str() << " element " << k;
  }
}
