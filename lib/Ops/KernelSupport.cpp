//===- KernelSupport.cpp - Decoding, encoding, broadcasting, dispatch -----===//
//
// The shared machinery of the folding kernels and the public entry point
// evaluateKernel(), which looks the operator up in the registry (each family
// file registers its kernels).
//
//===----------------------------------------------------------------------===//
#include "KernelSupport.h"
#include "KernelReuse.h"
#include "Products/Products.h"

#include <algorithm>

#include "onnxir/Ops/OpSchema.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace onnxir {

const Attribute *KernelCall::attr(llvm::StringRef name) const {
  for (const Attribute *a : attributes)
    if (a && a->name() == name) return a;
  return nullptr;
}

namespace kernels {

CK computeKind(DataType dt) {
  switch (dt) {
  case DataType::Float: case DataType::Float16: case DataType::BFloat16:
  case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Float4E2M1:
    return CK::F32;
  case DataType::Double: return CK::F64;
  case DataType::Uint8: case DataType::Int8: case DataType::Uint16: case DataType::Int16:
  case DataType::Int32: case DataType::Int64: case DataType::Bool: case DataType::Uint32:
  case DataType::Uint4: case DataType::Int4: case DataType::Uint2: case DataType::Int2:
    return CK::I64;
  case DataType::Uint64: return CK::U64;
  case DataType::String: return CK::Str;
  default: return CK::None;
  }
}

int64_t numElementsOf(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) { zero = true; continue; }
    if (n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return zero ? 0 : n;
}

int64_t Arr::size() const { return numElementsOf(dims); }

Arr Arr::make(DataType t, std::vector<int64_t> dims) {
  Arr a;
  a.dt = t;
  a.dims = std::move(dims);
  size_t n = (size_t)std::max<int64_t>(a.size(), 0);
  switch (a.kind()) {
  case CK::F32: a.f.assign(n, 0.f); break;
  case CK::F64: a.d.assign(n, 0.0); break;
  case CK::I64: a.i.assign(n, 0); break;
  case CK::U64: a.u.assign(n, 0); break;
  case CK::Str: a.s.assign(n, std::string()); break;
  default: break;
  }
  return a;
}

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t k = (int64_t)dims.size() - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                    llvm::ArrayRef<int64_t> b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da == db || db == 1) out[k] = da;
    else if (da == 1) out[k] = db;
    else return std::nullopt;
  }
  return out;
}

std::vector<int64_t> broadcastOffsets(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out) {
  int64_t n = numElementsOf(out);
  std::vector<int64_t> offs((size_t)std::max<int64_t>(n, 0));
  if (n <= 0) return offs;
  size_t r = out.size();
  // Strides of the input aligned to the output's rank, 0 on broadcast dims.
  std::vector<int64_t> st(r, 0);
  std::vector<int64_t> ist = stridesOf(in);
  for (size_t k = 0; k < in.size(); ++k) {
    size_t ok = k + (r - in.size());
    st[ok] = in[k] == 1 ? 0 : ist[k];
  }
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < n; ++e) {
    offs[(size_t)e] = off;
    for (int64_t k = (int64_t)r - 1; k >= 0; --k) {
      if (++idx[k] < out[k]) { off += st[k]; break; }
      off -= st[k] * (idx[k] - 1);
      idx[k] = 0;
    }
  }
  return offs;
}

uint64_t estimateBytes(DataType dt, int64_t n) {
  if (n < 0) return UINT64_MAX;
  // Strings (and types without a fixed size) count at least 16 bytes an
  // element; saturating, so a huge count is never a small estimate.
  if (dt == DataType::String || dataTypeBits(dt) == 0)
    return (uint64_t)n > UINT64_MAX / 16 ? UINT64_MAX : (uint64_t)n * 16;
  return dataTypeStorageBytes(dt, (uint64_t)n);
}

Status checkOutputSize(const KernelCall &c, DataType dt, llvm::ArrayRef<int64_t> dims) {
  int64_t n = numElementsOf(dims);
  if (n < 0) return invalid("output shape overflows");
  if (estimateBytes(dt, n) > c.maxOutputBytes)
    return absl::ResourceExhaustedError("output exceeds the fold size limit");
  return absl::OkStatus();
}

StatusOr<Arr> fromTensor(const Tensor &t) {
  Arr a;
  a.dt = t.dataType();
  a.dims = t.dims();
  if (a.size() < 0) return invalid("tensor has invalid dims");
  switch (a.kind()) {
  case CK::F32: {
    auto v = t.values<float>();
    if (!v.ok()) return v.status();
    a.f = std::move(*v);
    break;
  }
  case CK::F64: {
    auto v = t.values<double>();
    if (!v.ok()) return v.status();
    a.d = std::move(*v);
    break;
  }
  case CK::I64: {
    auto v = t.values<int64_t>();
    if (!v.ok()) return v.status();
    a.i = std::move(*v);
    break;
  }
  case CK::U64: {
    auto v = t.values<uint64_t>();
    if (!v.ok()) return v.status();
    a.u = std::move(*v);
    break;
  }
  case CK::Str: {
    auto v = t.strings();
    if (!v.ok()) return v.status();
    if ((int64_t)v->size() != a.size()) return invalid("string tensor size mismatch");
    a.s = std::move(*v);
    break;
  }
  default:
    return unsupported(absl::StrCat("element type ", dataTypeName(a.dt).str()));
  }
  return a;
}

StatusOr<std::vector<int64_t>> intValues(const Tensor &t) {
  CK k = computeKind(t.dataType());
  if (k != CK::I64 && k != CK::U64) return invalid("expected an integer tensor");
  return t.values<int64_t>();
}

namespace {
template <typename T> void putLE(std::string &out, size_t idx, T v) {
  std::memcpy(&out[idx * sizeof(T)], &v, sizeof(T));
}
} // namespace

Tensor toTensor(const Arr &a) {
  Tensor t;
  t.setDataType(a.dt);
  t.setDims(a.dims);
  size_t n = (size_t)std::max<int64_t>(a.size(), 0);
  if (a.dt == DataType::String) {
    t.stringData = a.s;
    t.setTyped(Tensor::TypedField::String);
    return t;
  }
  // Float and double are stored as computed: one copy, no zero fill first.
  if (a.dt == DataType::Float || a.dt == DataType::Double) {
    const char *p = a.dt == DataType::Float ? reinterpret_cast<const char *>(a.f.data())
                                            : reinterpret_cast<const char *>(a.d.data());
    t.setRaw(std::string(p, n ? (a.dt == DataType::Float ? 4 : 8) * n : 0));
    return t;
  }
  std::string raw((size_t)dataTypeStorageBytes(a.dt, n), '\0');
  switch (a.dt) {
  case DataType::Float: if (n) std::memcpy(raw.data(), a.f.data(), 4 * n); break;
  case DataType::Double: if (n) std::memcpy(raw.data(), a.d.data(), 8 * n); break;
  case DataType::Float16:
    for (size_t k = 0; k < n; ++k) putLE<uint16_t>(raw, k, floatToHalf(a.f[k]));
    break;
  case DataType::BFloat16:
    for (size_t k = 0; k < n; ++k) putLE<uint16_t>(raw, k, floatToBFloat16(a.f[k]));
    break;
  case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0:
    for (size_t k = 0; k < n; ++k) raw[k] = (char)floatToFloat8(a.f[k], a.dt, true);
    break;
  case DataType::Float4E2M1:
    for (size_t k = 0; k < n; ++k) {
      uint8_t nib = floatToFloat8(a.f[k], a.dt, true) & 0xf;
      raw[k / 2] = (char)((uint8_t)raw[k / 2] | (k % 2 ? nib << 4 : nib));
    }
    break;
  case DataType::Bool:
    for (size_t k = 0; k < n; ++k) raw[k] = a.i[k] != 0;
    break;
  case DataType::Int8: case DataType::Uint8:
    for (size_t k = 0; k < n; ++k) raw[k] = (char)(uint8_t)a.i[k];
    break;
  case DataType::Int16: case DataType::Uint16:
    for (size_t k = 0; k < n; ++k) putLE<uint16_t>(raw, k, (uint16_t)a.i[k]);
    break;
  case DataType::Int32: case DataType::Uint32:
    for (size_t k = 0; k < n; ++k) putLE<uint32_t>(raw, k, (uint32_t)a.i[k]);
    break;
  case DataType::Int64: if (n) std::memcpy(raw.data(), a.i.data(), 8 * n); break;
  case DataType::Uint64: if (n) std::memcpy(raw.data(), a.u.data(), 8 * n); break;
  case DataType::Int4: case DataType::Uint4:
    for (size_t k = 0; k < n; ++k) {
      uint8_t nib = (uint8_t)a.i[k] & 0xf;
      raw[k / 2] = (char)((uint8_t)raw[k / 2] | (k % 2 ? nib << 4 : nib));
    }
    break;
  case DataType::Int2: case DataType::Uint2:
    for (size_t k = 0; k < n; ++k) {
      uint8_t v = (uint8_t)a.i[k] & 3;
      raw[k / 4] = (char)((uint8_t)raw[k / 4] | (v << (2 * (k % 4))));
    }
    break;
  default: break;
  }
  t.setRaw(std::move(raw));
  return t;
}

StatusOr<Arr> convertArr(const Arr &a, DataType dt) {
  Arr r;
  r.dt = dt;
  r.dims = a.dims;
  CK from = a.kind(), to = computeKind(dt);
  if (from == CK::None || to == CK::None || from == CK::Str || to == CK::Str)
    return unsupported("conversion");
  visitNumeric(from, [&](auto fromT) -> Status {
    using F = decltype(fromT);
    const auto &src = a.vec<F>();
    return visitNumeric(to, [&](auto toT) -> Status {
      using T = decltype(toT);
      auto &dst = r.vec<T>();
      dst.resize(src.size());
      for (size_t k = 0; k < src.size(); ++k) dst[k] = static_cast<T>(src[k]);
      return absl::OkStatus();
    });
  }).IgnoreError();
  return r;
}

//===--- Inputs in place, outputs in their final bytes --------------------===//

namespace {
template <typename T> constexpr DataType nativeType() {
  return std::is_same_v<T, float> ? DataType::Float : DataType::Double;
}
} // namespace

template <typename T> StatusOr<InView<T>> viewTensor(const Tensor &t) {
  InView<T> v;
  v.dt = t.dataType();
  v.dims = t.dims();
  int64_t n = numElementsOf(v.dims);
  if (n < 0) return invalid("tensor has invalid dims");
  if (v.dt == nativeType<T>() && t.storage() != Tensor::Storage::Typed) {
    // Raw storage, or External (loaded once by bytes(), then kept): a view.
    auto b = t.bytes();
    if (!b.ok()) return b.status();
    if (b->size() != (size_t)n * sizeof(T))
      return invalid(absl::StrCat("tensor holds ", b->size(), " bytes; its dims need ",
                                  (size_t)n * sizeof(T)));
    if (reinterpret_cast<uintptr_t>(b->data()) % alignof(T) == 0) {
      static const T none[1] = {T(0)};
      v.borrowed = n ? reinterpret_cast<const T *>(b->data()) : none;
      return v;
    }
  }
  auto vals = t.values<T>();
  if (!vals.ok()) return vals.status();
  if ((int64_t)vals->size() != n) return invalid("tensor size mismatch");
  v.own = std::move(*vals);
  return v;
}
template ONNXIR_API StatusOr<InView<float>> viewTensor<float>(const Tensor &);
template ONNXIR_API StatusOr<InView<double>> viewTensor<double>(const Tensor &);

template <typename T>
OutBuf<T>::OutBuf(DataType dt, std::vector<int64_t> dims)
    : dt_(dt), dims_(std::move(dims)), n_(std::max<int64_t>(numElementsOf(dims_), 0)),
      direct_(dt == nativeType<T>()) {
  // operator new aligns the string's heap block for any T; a short string
  // lives inside the object, aligned to 8, enough for double too.
  if (direct_) raw_.assign((size_t)n_ * sizeof(T), '\0');
  else tmp_.assign((size_t)n_, T(0));
}

template <typename T> Tensor OutBuf<T>::take() {
  if (direct_) {
    Tensor t;
    t.setDataType(dt_);
    t.setDims(dims_);
    t.setRaw(std::move(raw_));
    return t;
  }
  Arr a;
  a.dt = dt_;
  a.dims = dims_;
  a.template vec<T>() = std::move(tmp_);
  return toTensor(a);
}
template class OutBuf<float>;
template class OutBuf<double>;

//===--- Results in a dead input's buffer (Note [Results in a dead input's buffer], KernelReuse.h)

namespace {
/// The call whose inputs are given up on this thread, and which.
thread_local const KernelCall *consumableCall = nullptr;
thread_local uint64_t consumableMask = 0;
} // namespace

ConsumableInputs::ConsumableInputs(const KernelCall &call, uint64_t mask)
    : prevCall_(consumableCall), prevMask_(consumableMask) {
  consumableCall = &call;
  consumableMask = mask;
}

ConsumableInputs::~ConsumableInputs() {
  consumableCall = prevCall_;
  consumableMask = prevMask_;
}

Tensor Donated::take(DataType dt, std::vector<int64_t> dims) const {
  Tensor t;
  t.setDataType(dt);
  t.setDims(std::move(dims));
  t.setRaw(buf, 0, size);
  return t;
}

std::optional<Donated> donatedInput(const KernelCall &c, unsigned i, DataType dt,
                                    llvm::ArrayRef<int64_t> dims, size_t elemBytes) {
  if (consumableCall != &c || i >= 64 || !(consumableMask >> i & 1)) return std::nullopt;
  const Tensor *t = c.input(i);
  if (!t || t->storage() != Tensor::Storage::Raw || t->dataType() != dt ||
      llvm::ArrayRef<int64_t>(t->dims()) != dims)
    return std::nullopt;
  int64_t n = numElementsOf(dims);
  if (n <= 0) return std::nullopt;
  auto sb = t->sharedBytes();
  if (!sb.ok() || !sb->first) return std::nullopt;
  // The tensor's own reference and this one: no other tensor shares the
  // buffer. A StringBuffer is bytes the run allocated (a loaded model's
  // weights sit in other Buffers, possibly read-only mappings).
  const Buffer *b = sb->first.get();
  if (sb->first.use_count() != 2 || !dynamic_cast<const StringBuffer *>(b)) return std::nullopt;
  llvm::StringRef all = b->data(), mine = sb->second;
  if (mine.data() != all.data() || mine.size() != all.size() ||
      all.size() != (size_t)n * elemBytes ||
      reinterpret_cast<uintptr_t>(all.data()) % elemBytes != 0)
    return std::nullopt;
  Donated d;
  d.buf = std::move(sb->first);
  // The StringBuffer's string is no const object: the bytes may be written.
  d.data = const_cast<char *>(all.data());
  d.size = all.size();
  return d;
}

//===--- Data movement in bytes (Note [Data movement in bytes]) -----------===//

size_t movableBytes(DataType dt) {
  switch (dt) {
  case DataType::Int8: case DataType::Uint8: return 1;
  case DataType::Int16: case DataType::Uint16: case DataType::Float16:
  case DataType::BFloat16: return 2;
  case DataType::Int32: case DataType::Uint32: case DataType::Float: return 4;
  case DataType::Int64: case DataType::Uint64: case DataType::Double: return 8;
  default: return 0;
  }
}

std::optional<ByteView> byteView(const Tensor &t) {
  size_t es = movableBytes(t.dataType());
  int64_t n = numElementsOf(t.dims());
  if (!es || n < 0) return std::nullopt;
  auto b = t.bytes();
  if (!b.ok() || b->size() != (size_t)n * es) return std::nullopt;
  static const char none[8] = {};
  return ByteView{n ? b->data() : none, es};
}

namespace {
template <size_t ES>
void copyStrided(const char *src, int64_t stride, int64_t len, char *dst) {
  for (int64_t i = 0; i < len; ++i, src += stride * (int64_t)ES, dst += ES)
    std::memcpy(dst, src, ES);
}
} // namespace

void stridedCopy(const char *src, int64_t base, llvm::ArrayRef<int64_t> st,
                 llvm::ArrayRef<int64_t> od, size_t es, char *dst) {
  if (numElementsOf(od) <= 0) return;
  // Merge each axis into the one before it when together they walk evenly
  // (outer stride = inner stride * inner length); drop 1-sized axes.
  std::vector<int64_t> d, s;
  for (size_t k = 0; k < od.size(); ++k) {
    if (od[k] == 1) continue;
    if (!d.empty() && s.back() == st[k] * od[k]) {
      d.back() *= od[k];
      s.back() = st[k];
    } else {
      d.push_back(od[k]);
      s.push_back(st[k]);
    }
  }
  if (d.empty()) {
    d.push_back(1);
    s.push_back(1);
  }
  size_t r = d.size();
  int64_t len = d[r - 1], step = s[r - 1];
  std::vector<int64_t> cnt(r - 1, 0);
  int64_t off = base;
  for (;;) {
    const char *p = src + off * (int64_t)es;
    if (step == 1) std::memcpy(dst, p, (size_t)len * es);
    else switch (es) {
      case 1: copyStrided<1>(p, step, len, dst); break;
      case 2: copyStrided<2>(p, step, len, dst); break;
      case 4: copyStrided<4>(p, step, len, dst); break;
      default: copyStrided<8>(p, step, len, dst); break;
      }
    dst += (size_t)len * es;
    size_t k = r - 1;
    while (k > 0) {
      --k;
      if (++cnt[k] < d[k]) {
        off += s[k];
        break;
      }
      off -= s[k] * (cnt[k] - 1);
      cnt[k] = 0;
      if (k == 0) return;
    }
    if (r == 1) return;
  }
}

//===--- Matrix products --------------------------------------------------===//

// Note [Host-tuned products]
//   The matrix products (Conv's im2col products, MatMul, Gemm) are most of a
//   CNN's or a transformer's time, and Eigen built for baseline x86-64 (SSE2)
//   runs them at half the speed of the same code built for AVX2 + FMA. The
//   products' translation unit is therefore compiled twice (Products/), and
//   a call uses the AVX2 build when the CPU has AVX2 and FMA (asked once,
//   __builtin_cpu_supports) and the call allows it (KernelCall::hostTuned).
//   The two builds round differently: FMA rounds a*b+c once, and the wider
//   registers change Eigen's blocking, hence the order of the sums; results
//   differ in the last bits. A reference run may differ by that much between
//   machines (onnxruntime's does too), but a folded constant is written into
//   the model: the model onnx-opt writes must not depend on where it ran. So
//   only the evaluator sets hostTuned; fold-constants keeps the baseline
//   build everywhere, bit for bit what it gave before. ONNXIR_BASELINE_PRODUCTS
//   set to anything but 0 forces the baseline build for the whole process
//   (the test of that path on an AVX2 machine, and a way to rule the tuned
//   build out when hunting a difference). A hostTuned call may also shape
//   its products for speed where that only reorders sums (MatMul: a batch
//   against one matrix as one product); folding keeps the shapes it had.

namespace {
bool useAvx2(bool hostTuned) {
#ifdef ONNXIR_AVX2_PRODUCTS
  static const bool available = [] {
    const char *e = std::getenv("ONNXIR_BASELINE_PRODUCTS");
    if (e && *e && std::strcmp(e, "0") != 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return hostTuned && available;
#else
  (void)hostTuned;
  return false;
#endif
}

template <typename T>
void matProductT(bool hostTuned, const T *a, const T *b, T *o, int64_t M, int64_t K,
                 int64_t N, bool ta, bool tb) {
#ifdef ONNXIR_AVX2_PRODUCTS
  if (useAvx2(hostTuned)) return products::avx2::matProduct(a, b, o, M, K, N, ta, tb);
#endif
  (void)hostTuned;
  products::baseline::matProduct(a, b, o, M, K, N, ta, tb);
}

template <typename T>
void rowProductT(bool hostTuned, const T *x, const T *b, T *y, int64_t K, int64_t N) {
#ifdef ONNXIR_AVX2_PRODUCTS
  if (useAvx2(hostTuned)) return products::avx2::rowProduct(x, b, y, K, N);
#endif
  (void)hostTuned;
  products::baseline::rowProduct(x, b, y, K, N);
}
} // namespace

void matProduct(bool hostTuned, const float *a, const float *b, float *o, int64_t M,
                int64_t K, int64_t N, bool ta, bool tb) {
  matProductT(hostTuned, a, b, o, M, K, N, ta, tb);
}
void matProduct(bool hostTuned, const double *a, const double *b, double *o, int64_t M,
                int64_t K, int64_t N, bool ta, bool tb) {
  matProductT(hostTuned, a, b, o, M, K, N, ta, tb);
}
void rowProduct(bool hostTuned, const float *x, const float *b, float *y, int64_t K,
                int64_t N) {
  rowProductT(hostTuned, x, b, y, K, N);
}
void rowProduct(bool hostTuned, const double *x, const double *b, double *y, int64_t K,
                int64_t N) {
  rowProductT(hostTuned, x, b, y, K, N);
}

//===--- Attributes ------------------------------------------------------===//

Arr takeElems(const Arr &a, std::vector<int64_t> dims, const std::vector<int64_t> &idx) {
  Arr r;
  r.dt = a.dt;
  r.dims = std::move(dims);
  auto take = [&](auto &dst, const auto &src) {
    dst.resize(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) dst[k] = src[(size_t)idx[k]];
  };
  switch (a.kind()) {
  case CK::F32: take(r.f, a.f); break;
  case CK::F64: take(r.d, a.d); break;
  case CK::I64: take(r.i, a.i); break;
  case CK::U64: take(r.u, a.u); break;
  case CK::Str: take(r.s, a.s); break;
  default: break;
  }
  return r;
}

void appendElems(Arr &a, const Arr &b, int64_t from, int64_t count) {
  auto app = [&](auto &dst, const auto &src) {
    dst.insert(dst.end(), src.begin() + from, src.begin() + from + count);
  };
  switch (a.kind()) {
  case CK::F32: app(a.f, b.f); break;
  case CK::F64: app(a.d, b.d); break;
  case CK::I64: app(a.i, b.i); break;
  case CK::U64: app(a.u, b.u); break;
  case CK::Str: app(a.s, b.s); break;
  default: break;
  }
}

StatusOr<Arr> inputArr(const KernelCall &c, unsigned i) {
  const Tensor *t = c.input(i);
  if (!t) return invalid(absl::StrCat("missing input #", i));
  return fromTensor(*t);
}

} // namespace kernels

using namespace kernels;

absl::StatusOr<std::vector<Tensor>> evaluateKernel(const KernelCall &call) {
  for (const Attribute *a : call.attributes)
    if (a && a->isReference()) return unsupported("attribute reference");
  const OpEntry *e = OpRegistry::get().lookup(call.domain, call.opType, call.opset);
  if (!e || !e->kernel) return unsupported(absl::StrCat("no kernel for ", call.opType.str()));
  // Note [Empty inputs with huge dims]
  //   A tensor with a zero dim holds no data, so nothing bounds its other
  //   dims: [2^40, 0] is a few bytes in a model. Kernels loop over products
  //   of dims (outer x inner around an axis), which for such a tensor can
  //   be 2^40 iterations that produce nothing, or an output (ReduceSum over
  //   the empty axis) of 2^40 elements. Every data-carrying tensor's dims
  //   are bounded by its data; for empty ones, the product of the nonzero
  //   dims is bounded here, once, instead of in each kernel.
  uint64_t emptyExtentLimit = std::min<uint64_t>(call.maxOutputBytes, uint64_t(1) << 32);
  for (const Tensor *t : call.inputs) {
    if (!t) continue;
    uint64_t extent = 1;
    bool empty = false;
    for (int64_t d : t->dims()) {
      if (d < 0) return invalid("input has a negative dim");
      if (d == 0) { empty = true; continue; }
      extent = (uint64_t)d > UINT64_MAX / extent ? UINT64_MAX : extent * (uint64_t)d;
    }
    if (empty && extent > emptyExtentLimit)
      return absl::ResourceExhaustedError(
          "an empty input's other dims multiply past the fold size limit");
  }
  auto r = e->kernel(call);
  if (!r.ok()) return r.status();
  for (const Tensor &t : *r) {
    int64_t n = numElementsOf(t.dims());
    if (n < 0) return invalid("kernel produced invalid dims");
    uint64_t bytes = tensorDataBytes(t);
    if (bytes > call.maxOutputBytes)
      return absl::ResourceExhaustedError("output exceeds the fold size limit");
  }
  return r;
}

const char *matrixProductsBuild(bool hostTuned) {
  return useAvx2(hostTuned) ? "avx2-fma" : "baseline";
}

bool hasKernel(llvm::StringRef domain, llvm::StringRef opType) {
  return OpRegistry::get().hasKernel(domain, opType);
}

uint64_t tensorDataBytes(const Tensor &t) {
  int64_t n = numElementsOf(t.dims());
  if (n < 0) return 0;
  if (t.dataType() == DataType::String) {
    uint64_t b = 0;
    if (t.storage() == Tensor::Storage::Typed) {
      for (const std::string &s : t.stringData) b += s.size();
      return b;
    }
    auto s = t.strings();
    if (s.ok())
      for (const std::string &x : *s) b += x.size();
    return b;
  }
  return dataTypeStorageBytes(t.dataType(), (uint64_t)n);
}

} // namespace onnxir
