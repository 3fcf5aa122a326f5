//===- TensorTest.cpp - Tensor storages and typed reads -------------------===//
#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace onnxir;

namespace {

template <typename T> std::string le(std::initializer_list<T> vals) {
  std::string s;
  for (T v : vals) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    s.append(b, sizeof(T));
  }
  return s;
}

std::string bytesOf(std::initializer_list<uint8_t> vals) {
  return std::string(vals.begin(), vals.end());
}

template <typename T> std::vector<T> read(const Tensor &t) {
  auto v = t.values<T>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<T>();
}

TEST(TensorTest, RawFromString) {
  Tensor t = makeFloatTensor({2, 2}, {1.f, -2.5f, 0.f, 1e10f});
  EXPECT_EQ(t.storage(), Tensor::Storage::Raw);
  EXPECT_EQ(t.dataType(), DataType::Float);
  EXPECT_EQ(t.numElements(), std::optional<int64_t>(4));
  EXPECT_EQ(t.rawData().size(), 16u);
  EXPECT_EQ(read<float>(t), (std::vector<float>{1.f, -2.5f, 0.f, 1e10f}));
  EXPECT_EQ(read<double>(t), (std::vector<double>{1.0, -2.5, 0.0, 1e10}));
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, -2, 0, 10000000000}));
  EXPECT_TRUE(t.validate().ok()) << t.validate();
  auto b = t.bytes();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), t.rawData().data()); // no copy

  Tensor i = makeInt64Tensor({3}, {-1, 0, int64_t(1) << 40});
  EXPECT_EQ(read<int64_t>(i), (std::vector<int64_t>{-1, 0, int64_t(1) << 40}));
  EXPECT_TRUE(i.validate().ok());
  // A scalar.
  Tensor s = makeInt64Tensor({}, {42});
  EXPECT_EQ(s.numElements(), std::optional<int64_t>(1));
  EXPECT_EQ(read<int64_t>(s), (std::vector<int64_t>{42}));
}

TEST(TensorTest, RawViewIntoSharedBufferAtOffset) {
  std::string file = "HDR" + le<int32_t>({7, -8, 9}) + "TRAILER";
  auto buf = std::make_shared<StringBuffer>(std::move(file));
  const char *base = buf->data().data();
  Tensor t;
  t.setDataType(DataType::Int32);
  t.setDims({3});
  t.setRaw(buf, 3, 12);
  EXPECT_EQ(buf.use_count(), 2);
  EXPECT_EQ(t.rawData().data(), base + 3); // a window, not a copy
  EXPECT_EQ(t.rawData().size(), 12u);
  EXPECT_EQ(read<int32_t>(t), (std::vector<int32_t>{7, -8, 9}));
  EXPECT_TRUE(t.validate().ok()) << t.validate();
  // Copies share the buffer.
  Tensor c = t;
  EXPECT_EQ(c.rawData().data(), base + 3);
  EXPECT_EQ(buf.use_count(), 3);
  // Moves too, and the buffer outlives the original owner.
  Tensor mv = std::move(c);
  buf.reset();
  EXPECT_EQ(read<int64_t>(mv), (std::vector<int64_t>{7, -8, 9}));
  // A wrong window is caught.
  Tensor bad = t;
  bad.setDims({4});
  EXPECT_FALSE(bad.validate().ok());
  EXPECT_FALSE(bad.values<int32_t>().ok());
}

TEST(TensorTest, TypedFields) {
  Tensor f;
  f.setName("w");
  f.setDataType(DataType::Float);
  f.setDims({3});
  f.setTyped(Tensor::TypedField::Float);
  f.floatData = {1.5f, -2.f, 3.f};
  EXPECT_EQ(f.storage(), Tensor::Storage::Typed);
  EXPECT_EQ(f.typedField(), Tensor::TypedField::Float);
  EXPECT_EQ(read<float>(f), (std::vector<float>{1.5f, -2.f, 3.f}));
  EXPECT_TRUE(f.validate().ok()) << f.validate();
  auto b = f.bytes();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->str(), le<float>({1.5f, -2.f, 3.f}));
  EXPECT_EQ(f.floatData.size(), 3u); // the typed storage is left as it was
  EXPECT_EQ(f.storage(), Tensor::Storage::Typed);

  Tensor i32;
  i32.setDataType(DataType::Int32);
  i32.setDims({2});
  i32.setTyped(Tensor::TypedField::Int32);
  i32.int32Data = {-5, 6};
  EXPECT_EQ(read<int64_t>(i32), (std::vector<int64_t>{-5, 6}));

  // int32_data holds narrower integer types, bool and 16-bit float bits.
  Tensor i8;
  i8.setDataType(DataType::Int8);
  i8.setDims({3});
  i8.setTyped(Tensor::TypedField::Int32);
  i8.int32Data = {-128, 127, -1};
  EXPECT_EQ(read<int64_t>(i8), (std::vector<int64_t>{-128, 127, -1}));
  Tensor u16;
  u16.setDataType(DataType::Uint16);
  u16.setDims({3});
  u16.setTyped(Tensor::TypedField::Int32);
  u16.int32Data = {65535, 0, 1};
  EXPECT_EQ(read<int64_t>(u16), (std::vector<int64_t>{65535, 0, 1}));
  Tensor bl;
  bl.setDataType(DataType::Bool);
  bl.setDims({3});
  bl.setTyped(Tensor::TypedField::Int32);
  bl.int32Data = {1, 0, 1};
  EXPECT_EQ(read<int64_t>(bl), (std::vector<int64_t>{1, 0, 1}));
  Tensor h;
  h.setDataType(DataType::Float16);
  h.setDims({2});
  h.setTyped(Tensor::TypedField::Int32);
  h.int32Data = {0x3c00, 0xc000};
  EXPECT_EQ(read<double>(h), (std::vector<double>{1.0, -2.0}));
  Tensor i4;
  i4.setDataType(DataType::Int4);
  i4.setDims({3});
  i4.setTyped(Tensor::TypedField::Int32);
  i4.int32Data = {0x78, 0x0f}; // packed bytes: -8, 7, -1
  EXPECT_EQ(read<int64_t>(i4), (std::vector<int64_t>{-8, 7, -1}));

  Tensor i64;
  i64.setDataType(DataType::Int64);
  i64.setDims({2});
  i64.setTyped(Tensor::TypedField::Int64);
  i64.int64Data = {INT64_MIN, INT64_MAX};
  EXPECT_EQ(read<int64_t>(i64), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));

  Tensor d;
  d.setDataType(DataType::Double);
  d.setDims({2});
  d.setTyped(Tensor::TypedField::Double);
  d.doubleData = {0.1, -1e300};
  EXPECT_EQ(read<double>(d), (std::vector<double>{0.1, -1e300}));

  Tensor u64;
  u64.setDataType(DataType::Uint64);
  u64.setDims({2});
  u64.setTyped(Tensor::TypedField::Uint64);
  u64.uint64Data = {UINT64_MAX, 3};
  EXPECT_EQ(read<uint64_t>(u64), (std::vector<uint64_t>{UINT64_MAX, 3}));
  Tensor u32;
  u32.setDataType(DataType::Uint32);
  u32.setDims({2});
  u32.setTyped(Tensor::TypedField::Uint64);
  u32.uint64Data = {4000000000u, 3};
  EXPECT_EQ(read<int64_t>(u32), (std::vector<int64_t>{4000000000, 3}));
  EXPECT_TRUE(u32.validate().ok()) << u32.validate();

  Tensor s;
  s.setDataType(DataType::String);
  s.setDims({2});
  s.setTyped(Tensor::TypedField::String);
  s.stringData = {"a", std::string("\0b", 2)};
  auto strs = s.strings();
  ASSERT_TRUE(strs.ok()) << strs.status();
  EXPECT_EQ(*strs, (std::vector<std::string>{"a", std::string("\0b", 2)}));
  EXPECT_TRUE(s.validate().ok()) << s.validate();
  EXPECT_FALSE(s.bytes().ok());
  EXPECT_FALSE(s.values<double>().ok());
  s.stringData.push_back("extra");
  EXPECT_FALSE(s.validate().ok());
  EXPECT_FALSE(f.strings().ok()); // not a string tensor

  // Complex64 in float_data: two floats per element.
  Tensor cx;
  cx.setDataType(DataType::Complex64);
  cx.setDims({2});
  cx.setTyped(Tensor::TypedField::Float);
  cx.floatData = {1, 2, 3, 4};
  EXPECT_TRUE(cx.validate().ok()) << cx.validate();
  EXPECT_EQ(cx.bytes()->size(), 16u);
  EXPECT_FALSE(cx.values<double>().ok()); // no numeric reading of complex
}

TEST(TensorTest, TypedFieldMismatchesAreErrors) {
  Tensor t;
  t.setName("w");
  t.setDataType(DataType::Float);
  t.setDims({3});
  t.setTyped(Tensor::TypedField::Float);
  t.floatData = {1, 2};
  absl::Status s = t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("tensor \"w\""), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("holds 2 values but its dims need 3"), std::string::npos) << s;
  EXPECT_FALSE(t.values<float>().ok());
  // Wrong field for the element type.
  Tensor w;
  w.setDataType(DataType::Int64);
  w.setDims({1});
  w.setTyped(Tensor::TypedField::Float);
  w.floatData = {1};
  EXPECT_FALSE(w.bytes().ok());
  Tensor u;
  u.setDataType(DataType::Uint32);
  u.setDims({1});
  u.setTyped(Tensor::TypedField::Int32); // uint32 belongs in uint64_data
  u.int32Data = {1};
  EXPECT_FALSE(u.validate().ok());
  Tensor str;
  str.setDataType(DataType::String);
  str.setDims({1});
  str.setRaw("x");
  EXPECT_FALSE(str.strings().ok()); // string data must be in string_data
}

TEST(TensorTest, ExternalLoadedOnceAndCached) {
  int calls = 0;
  std::string seen;
  Tensor t;
  t.setName("big");
  t.setDataType(DataType::Int32);
  t.setDims({2});
  ExternalDataRef ref;
  ref.location = "weights.bin";
  ref.offset = 16;
  ref.length = 8;
  ref.entries = {{"location", "weights.bin"}, {"offset", "16"}, {"length", "8"}};
  t.setExternal(ref, [&](const ExternalDataRef &r) -> absl::StatusOr<std::shared_ptr<const Buffer>> {
    ++calls;
    seen = r.location;
    return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(le<int32_t>({10, 20})));
  });
  EXPECT_TRUE(t.isExternal());
  EXPECT_EQ(t.storage(), Tensor::Storage::External);
  EXPECT_FALSE(t.externalLoaded());
  EXPECT_EQ(calls, 0); // lazy
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, "weights.bin");
  EXPECT_TRUE(t.externalLoaded());
  EXPECT_TRUE(t.validate().ok()) << t.validate();
  EXPECT_EQ(read<double>(t), (std::vector<double>{10, 20}));
  ASSERT_TRUE(t.bytes().ok());
  EXPECT_EQ(calls, 1); // cached
  EXPECT_EQ(t.external().offset, std::optional<uint64_t>(16));
  EXPECT_EQ(t.external().entries.size(), 3u);
  EXPECT_EQ(t.storage(), Tensor::Storage::External); // storage unchanged
  // A copy made after loading shares the loaded bytes.
  Tensor c = t;
  EXPECT_TRUE(c.externalLoaded());
  EXPECT_EQ(read<int64_t>(c), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(calls, 1);
}

TEST(TensorTest, ExternalErrors) {
  Tensor t;
  t.setName("big");
  t.setDataType(DataType::Float);
  t.setDims({1});
  ExternalDataRef ref;
  ref.location = "missing.bin";
  t.setExternal(ref, nullptr);
  auto b = t.bytes();
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(b.status().message()).find("missing.bin"), std::string::npos);
  int calls = 0;
  t.setExternal(ref, [&](const ExternalDataRef &) -> absl::StatusOr<std::shared_ptr<const Buffer>> {
    ++calls;
    return absl::NotFoundError("no such file");
  });
  EXPECT_EQ(t.values<float>().status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(t.validate().ok());
  EXPECT_FALSE(t.externalLoaded());
  // Wrong length from the file.
  t.setExternal(ref, [](const ExternalDataRef &) -> absl::StatusOr<std::shared_ptr<const Buffer>> {
    return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>("abc"));
  });
  EXPECT_FALSE(t.validate().ok());
  EXPECT_FALSE(t.values<float>().ok());
}

TEST(TensorTest, Empty) {
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({0, 3});
  EXPECT_EQ(t.storage(), Tensor::Storage::Empty);
  EXPECT_EQ(t.numElements(), std::optional<int64_t>(0));
  EXPECT_TRUE(t.validate().ok()) << t.validate();
  EXPECT_TRUE(read<float>(t).empty());
  auto b = t.bytes();
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->empty());
  // Empty storage with elements to hold is malformed.
  t.setDims({2});
  absl::Status s = t.validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("no data"), std::string::npos) << s;
  EXPECT_FALSE(t.values<float>().ok());
  // setEmpty drops other storage.
  Tensor r = makeFloatTensor({1}, {1.f});
  r.setEmpty();
  EXPECT_EQ(r.storage(), Tensor::Storage::Empty);
  EXPECT_TRUE(r.rawData().empty());
  // An empty string tensor.
  Tensor st;
  st.setDataType(DataType::String);
  st.setDims({0});
  EXPECT_TRUE(st.validate().ok());
  EXPECT_TRUE(st.strings()->empty());
}

TEST(TensorTest, ValidateCatchesBadDims) {
  Tensor t = makeFloatTensor({2}, {1.f, 2.f});
  t.setName("t");
  ASSERT_TRUE(t.validate().ok());
  // Size mismatch: 8 bytes for 3 floats.
  t.setDims({3});
  absl::Status s = t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("holds 8 bytes"), std::string::npos) << s;
  // Overflowing dims.
  int64_t big = int64_t(1) << 32;
  t.setDims({big, big});
  EXPECT_EQ(t.numElements(), std::nullopt);
  s = t.validate();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("overflows"), std::string::npos) << s;
  EXPECT_FALSE(t.values<float>().ok());
  EXPECT_TRUE(t.bytes().ok()); // the raw bytes themselves are still readable
  // Negative dims.
  t.setDims({-2, -1});
  EXPECT_EQ(t.numElements(), std::nullopt);
  EXPECT_FALSE(t.validate().ok());
  // Unknown element type.
  Tensor u = makeFloatTensor({1}, {1.f});
  u.setDataTypeRaw(77);
  EXPECT_FALSE(u.validate().ok());
  EXPECT_FALSE(u.values<double>().ok());
  u.setDataTypeRaw(0);
  EXPECT_FALSE(u.validate().ok());
  // Overflow in a typed tensor.
  Tensor ty;
  ty.setDataType(DataType::Float);
  ty.setDims({big, big});
  ty.setTyped(Tensor::TypedField::Float);
  EXPECT_FALSE(ty.bytes().ok());
  EXPECT_FALSE(ty.validate().ok());
}

struct ElemCase {
  DataType type;
  std::string raw;
  std::vector<int64_t> dims;
  std::vector<double> asDouble;
};

TEST(TensorTest, EveryElementTypeReads) {
  const double inf = INFINITY;
  std::vector<ElemCase> cases = {
      {DataType::Float, le<float>({1.5f, -(float)inf}), {2}, {1.5, -inf}},
      {DataType::Uint8, bytesOf({0, 255}), {2}, {0, 255}},
      {DataType::Int8, bytesOf({0x80, 0x7f}), {2}, {-128, 127}},
      {DataType::Uint16, le<uint16_t>({65535, 1}), {2}, {65535, 1}},
      {DataType::Int16, le<int16_t>({-32768, 7}), {2}, {-32768, 7}},
      {DataType::Int32, le<int32_t>({INT32_MIN, 7}), {2}, {(double)INT32_MIN, 7}},
      {DataType::Int64, le<int64_t>({-(int64_t(1) << 50), 7}), {2}, {-(double)(int64_t(1) << 50), 7}},
      {DataType::Bool, bytesOf({0, 1, 2}), {3}, {0, 1, 1}},
      {DataType::Float16, le<uint16_t>({0x3c00, 0xc000, 0x0001, 0x7c00}), {4},
       {1.0, -2.0, std::ldexp(1.0, -24), inf}},
      {DataType::Double, le<double>({0.1, -3.0}), {2}, {0.1, -3.0}},
      {DataType::Uint32, le<uint32_t>({4000000000u, 2}), {2}, {4000000000.0, 2}},
      {DataType::Uint64, le<uint64_t>({uint64_t(1) << 63, 2}), {2}, {std::ldexp(1.0, 63), 2}},
      {DataType::BFloat16, le<uint16_t>({0x3f80, 0xc0a0, 0xff80}), {3}, {1.0, -5.0, -inf}},
      {DataType::Float8E4M3FN, bytesOf({0x38, 0x7e, 0xc0, 0x01}), {4},
       {1.0, 448.0, -2.0, std::ldexp(1.0, -9)}},
      {DataType::Float8E4M3FNUZ, bytesOf({0x40, 0x7f, 0xc8, 0x01}), {4},
       {1.0, 240.0, -2.0, std::ldexp(1.0, -10)}},
      {DataType::Float8E5M2, bytesOf({0x3c, 0x7b, 0xfc, 0x01}), {4},
       {1.0, 57344.0, -inf, std::ldexp(1.0, -16)}},
      {DataType::Float8E5M2FNUZ, bytesOf({0x40, 0x7f, 0xc4, 0x01}), {4},
       {1.0, 57344.0, -2.0, std::ldexp(1.0, -17)}},
      {DataType::Uint4, bytesOf({0x1f, 0x02}), {3}, {15, 1, 2}},
      {DataType::Int4, bytesOf({0x78, 0x0f, 0x05}), {5}, {-8, 7, -1, 0, 5}},
      {DataType::Float4E2M1, bytesOf({0x72, 0x09, 0x0f}), {5}, {1.0, 6.0, -0.5, 0.0, -6.0}},
      {DataType::Float8E8M0, bytesOf({127, 128, 0, 254}), {4},
       {1.0, 2.0, std::ldexp(1.0, -127), std::ldexp(1.0, 127)}},
      {DataType::Uint2, bytesOf({0x93, 0x03}), {5}, {3, 0, 1, 2, 3}},
      {DataType::Int2, bytesOf({0x4e}), {4}, {-2, -1, 0, 1}},
  };
  std::set<DataType> covered;
  for (const ElemCase &c : cases) {
    SCOPED_TRACE(dataTypeName(c.type).str());
    covered.insert(c.type);
    Tensor t = makeTensor(c.type, c.dims, c.raw);
    EXPECT_TRUE(t.validate().ok()) << t.validate();
    EXPECT_EQ(read<double>(t), c.asDouble);
    // Integral reading of the finite values.
    bool finite = true;
    for (double d : c.asDouble) finite &= std::isfinite(d) && std::fabs(d) < 9e18;
    if (finite) {
      std::vector<int64_t> want;
      for (double d : c.asDouble) want.push_back((int64_t)d);
      EXPECT_EQ(read<int64_t>(t), want);
    }
    // One byte short is caught.
    Tensor shortT = makeTensor(c.type, c.dims, c.raw.substr(0, c.raw.size() - 1));
    EXPECT_FALSE(shortT.validate().ok());
    EXPECT_FALSE(shortT.values<double>().ok());
  }
  // The rest: string and complex have no numeric reading but validate.
  Tensor c64 = makeTensor(DataType::Complex64, {1}, le<float>({1.f, 2.f}));
  EXPECT_TRUE(c64.validate().ok()) << c64.validate();
  EXPECT_FALSE(c64.values<double>().ok());
  Tensor c128 = makeTensor(DataType::Complex128, {1}, le<double>({1.0, 2.0}));
  EXPECT_TRUE(c128.validate().ok()) << c128.validate();
  EXPECT_FALSE(c128.values<double>().ok());
  EXPECT_FALSE(makeTensor(DataType::Complex128, {1}, le<double>({1.0})).validate().ok());
  covered.insert(DataType::Complex64);
  covered.insert(DataType::Complex128);
  covered.insert(DataType::String); // covered in TypedFields
  EXPECT_EQ(covered.size(), (size_t)kMaxDataType);
}

TEST(TensorTest, NaNReadsAsNaN) {
  Tensor h = makeTensor(DataType::Float16, {1}, le<uint16_t>({0x7e00}));
  EXPECT_TRUE(std::isnan(read<double>(h)[0]));
  Tensor f8 = makeTensor(DataType::Float8E4M3FN, {2}, bytesOf({0x7f, 0xff}));
  for (double d : read<double>(f8)) EXPECT_TRUE(std::isnan(d));
  Tensor fnuz = makeTensor(DataType::Float8E5M2FNUZ, {1}, bytesOf({0x80}));
  EXPECT_TRUE(std::isnan(read<double>(fnuz)[0]));
  Tensor e8 = makeTensor(DataType::Float8E8M0, {1}, bytesOf({0xff}));
  EXPECT_TRUE(std::isnan(read<float>(e8)[0]));
}

// Typed storage is converted to raw layout when read. The typed fields, the
// dims and the element type are public and mutable, so a read after an edit
// (also of a copy, which shares the cached conversion) must see the edit
// (Note [Typed read cache]).
TEST(TensorTest, TypedCacheFollowsEdits) {
  Tensor t;
  t.setDataType(DataType::Int64);
  t.setDims({2});
  t.setTyped(Tensor::TypedField::Int64);
  t.int64Data = {1, 2};
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, 2}));
  t.int64Data.mut()[0] = 7;
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{7, 2}));
  Tensor c = t;
  c.setDataType(DataType::Int64);
  c.setDims({3});
  c.int64Data.push_back(3);
  EXPECT_EQ(read<int64_t>(c), (std::vector<int64_t>{7, 2, 3}));
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{7, 2})); // the original is untouched
}

// Edits in place (same size), of the element type, and of a copy after a
// read are all seen; an unedited tensor keeps handing out the same bytes.
TEST(TensorTest, TypedReadsFollowEveryKindOfEdit) {
  Tensor t;
  t.setDataType(DataType::Int32);
  t.setDims({2});
  t.setTyped(Tensor::TypedField::Int32);
  t.int32Data = {1, 300};
  auto b1 = t.bytes();
  ASSERT_TRUE(b1.ok());
  auto b2 = t.bytes();
  ASSERT_TRUE(b2.ok());
  EXPECT_EQ(b1->data(), b2->data()); // cached while unchanged
  EXPECT_EQ(b1->size(), 8u);
  t.setDataType(DataType::Int16); // same field, narrower element
  EXPECT_EQ(t.bytes()->size(), 4u);
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, 300}));
  t.setDataType(DataType::Uint8);
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, 44})); // 300 wraps to 44
  t.setDataType(DataType::Int32);
  Tensor c = t;
  c.int32Data.mut()[1] = -5;
  EXPECT_EQ(read<int64_t>(c), (std::vector<int64_t>{1, -5}));
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, 300}));
  c.mutableDims() = {1};
  c.int32Data.mut().pop_back();
  EXPECT_EQ(read<int64_t>(c), (std::vector<int64_t>{1}));
  EXPECT_TRUE(c.validate().ok()) << c.validate();
  // A mismatch introduced by an edit is reported, not hidden by the cache.
  c.int32Data.push_back(9);
  EXPECT_FALSE(c.bytes().ok());
  EXPECT_FALSE(c.externalLoaded());
}

TEST(TensorTest, CopyIsIndependentForHeaderAndTypedData) {
  Tensor t;
  t.setName("a");
  t.setDataType(DataType::Int64);
  t.setDims({2});
  t.setTyped(Tensor::TypedField::Int64);
  t.int64Data = {1, 2};
  t.docString = "doc";
  t.metadata = {{"k", "v"}};
  Tensor c = t;
  c.setName("b");
  c.int64Data.mut()[0] = 5;
  c.mutableDims()[0] = 2;
  EXPECT_EQ(t.name(), "a");
  EXPECT_EQ(t.int64Data[0], 1);
  EXPECT_EQ(c.docString, "doc");
  EXPECT_EQ(c.metadata.size(), 1u);
  EXPECT_EQ(read<int64_t>(c), (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(read<int64_t>(t), (std::vector<int64_t>{1, 2}));
}

} // namespace
