//===- KernelSupport.h - Internal helpers of the folding kernels ----------===//
//
// Arr: a decoded tensor in its compute kind (see Note [Kernel numerics] in
// Kernels.h), with conversions from and to Tensor and broadcasting. Private to lib/Ops.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_OPS_KERNELSUPPORT_H
#define ONNXIR_LIB_OPS_KERNELSUPPORT_H

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Support/Export.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace onnxir {
namespace kernels {

/// How an element type is computed.
enum class CK { F32, F64, I64, U64, Str, None };

CK computeKind(DataType dt);

/// A dense array in its compute kind. Only the vector matching kind() is used.
struct Arr {
  DataType dt = DataType::Undefined;
  std::vector<int64_t> dims;
  std::vector<float> f;
  std::vector<double> d;
  std::vector<int64_t> i;
  std::vector<uint64_t> u;
  std::vector<std::string> s;

  CK kind() const { return computeKind(dt); }
  int64_t size() const;
  int64_t rank() const { return (int64_t)dims.size(); }

  template <typename T> std::vector<T> &vec() {
    if constexpr (std::is_same_v<T, float>) return f;
    else if constexpr (std::is_same_v<T, double>) return d;
    else if constexpr (std::is_same_v<T, int64_t>) return i;
    else if constexpr (std::is_same_v<T, uint64_t>) return u;
    else return s;
  }
  template <typename T> const std::vector<T> &vec() const {
    return const_cast<Arr *>(this)->vec<T>();
  }
  /// An empty array of type `t` and `dims` with storage for every element.
  static Arr make(DataType t, std::vector<int64_t> dims);
};

using Status = absl::Status;
template <typename T> using StatusOr = absl::StatusOr<T>;

inline Status unsupported(llvm::StringRef why) {
  return absl::UnimplementedError(why.str());
}
inline Status invalid(llvm::StringRef why) {
  return absl::InvalidArgumentError(why.str());
}

/// Decodes a tensor (any storage) into its compute kind.
StatusOr<Arr> fromTensor(const Tensor &t);
/// Encodes (rounding floats, wrapping integers to the element type).
Tensor toTensor(const Arr &a);
/// Values of an integer tensor as int64 (shape/axes inputs).
StatusOr<std::vector<int64_t>> intValues(const Tensor &t);

/// Storage bytes of `n` elements of `dt` (strings count 16 bytes each here,
/// as an estimate before they exist).
uint64_t estimateBytes(DataType dt, int64_t n);
/// Fails with ResourceExhausted when an output of `dt` x `dims` is too big.
Status checkOutputSize(const KernelCall &c, DataType dt, llvm::ArrayRef<int64_t> dims);

/// Numpy broadcast of two shapes; nullopt if incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                    llvm::ArrayRef<int64_t> b);
/// Product of dims (0 for any zero dim); -1 on overflow or negative dims.
int64_t numElementsOf(llvm::ArrayRef<int64_t> dims);
/// Row-major strides of `dims`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims);
/// For each output element (row-major over `out`), the offset into an input
/// of shape `in` broadcast to `out` (in is right-aligned).
std::vector<int64_t> broadcastOffsets(llvm::ArrayRef<int64_t> in,
                                      llvm::ArrayRef<int64_t> out);
/// The rules' axis normalisation (InferCtx.h), one definition for both.
using infer::normAxis;

/// Converts one element between compute kinds.
template <typename To, typename From> To convertElem(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else return static_cast<To>(v);
}

/// Calls fn(T{}) with T the C++ type of compute kind `k` (numeric only).
template <typename Fn> auto visitNumeric(CK k, Fn &&fn) -> decltype(fn(float{})) {
  switch (k) {
  case CK::F32: return fn(float{});
  case CK::F64: return fn(double{});
  case CK::I64: return fn(int64_t{});
  case CK::U64: return fn(uint64_t{});
  default: return unsupported("non-numeric element type");
  }
}

/// Calls fn(T{}) with T float or double for a float compute kind;
/// Unimplemented for any other.
template <typename Fn> Status visitFloat(CK k, Fn &&fn) {
  if (k == CK::F32) return fn(float{});
  if (k == CK::F64) return fn(double{});
  return unsupported("only floating-point element types");
}

/// Integer arithmetic that wraps (two's complement, like the stored narrow
/// types and numpy) instead of overflowing; plain arithmetic for floats.
template <typename T> T addWrap(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>) return (int64_t)((uint64_t)x + (uint64_t)y);
  else return x + y;
}
template <typename T> T mulWrap(T x, T y) {
  if constexpr (std::is_same_v<T, int64_t>) return (int64_t)((uint64_t)x * (uint64_t)y);
  else return x * y;
}
/// |x|, wrapping at INT64_MIN as numpy does.
template <typename T> T absWrap(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;
  else if constexpr (std::is_same_v<T, int64_t>) return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
  else return x < T(0) ? -x : x;
}

/// o[M, N] = op(a) op(b) (row-major; a [M, K] or with `ta` [K, M], b [K, N]
/// or with `tb` [N, K]) through Eigen, on the build `hostTuned` allows
/// (Note [Host-tuned products]).
void matProduct(bool hostTuned, const float *a, const float *b, float *o, int64_t M,
                int64_t K, int64_t N, bool ta, bool tb);
void matProduct(bool hostTuned, const double *a, const double *b, double *o, int64_t M,
                int64_t K, int64_t N, bool ta, bool tb);
/// y[N] = x[K] b[K, N] (Eigen's vector-matrix kernel).
void rowProduct(bool hostTuned, const float *x, const float *b, float *y, int64_t K, int64_t N);
void rowProduct(bool hostTuned, const double *x, const double *b, double *y, int64_t K,
                int64_t N);
// Note [Inputs read in place]
//   Decoding every input into an Arr copies it on every call: a 100 MB
//   weight is copied each time its Conv runs (in a reference run, once per
//   node; the copies also lift the peak memory), and encoding the result
//   copies it once more. The hot kernels (Conv, MatMul, Gemm, the binary
//   element-wise ops) read a float or double input in place instead: the
//   tensor's bytes are the elements when it is stored as T (raw, or external
//   once loaded) at an address aligned for T; otherwise (float16, typed
//   storage, a misaligned window) the input is decoded as before. Their
//   results are computed straight into the bytes the output tensor will own
//   (OutBuf). Values are unchanged: the same elements, the same arithmetic.

/// The elements of a tensor as T (float or double): in place when possible,
/// else decoded into `own`.
template <typename T> struct InView {
  DataType dt = DataType::Undefined;
  std::vector<int64_t> dims;
  const T *borrowed = nullptr;
  std::vector<T> own;
  const T *data() const { return borrowed ? borrowed : own.data(); }
  int64_t rank() const { return (int64_t)dims.size(); }
};
/// `t` as T; an error for a tensor whose data does not match its dims.
template <typename T> StatusOr<InView<T>> viewTensor(const Tensor &t);
// Exported for the unit tests (OpsTests InPlace.*) of a shared build.
extern template ONNXIR_API StatusOr<InView<float>> viewTensor<float>(const Tensor &);
extern template ONNXIR_API StatusOr<InView<double>> viewTensor<double>(const Tensor &);

/// The result of a kernel computed in T (float or double) for element type
/// `dt`: when `dt` is stored as T, the elements are written straight into
/// the bytes the tensor takes over; otherwise into a T buffer encoded by
/// take() (rounding, Note [Kernel numerics]).
template <typename T> class OutBuf {
public:
  OutBuf(DataType dt, std::vector<int64_t> dims);
  T *data() { return direct_ ? reinterpret_cast<T *>(raw_.data()) : tmp_.data(); }
  int64_t size() const { return n_; }
  Tensor take();

private:
  DataType dt_;
  std::vector<int64_t> dims_;
  int64_t n_;
  bool direct_;
  std::string raw_;
  std::vector<T> tmp_;
};
extern template class OutBuf<float>;
extern template class OutBuf<double>;

// Note [Data movement in bytes]
//   Transpose, Slice, Split, Concat and Gather only move elements. Decoding
//   their inputs into an Arr (a float per float16, an int64 per int8, the
//   whole 500 MB embedding table for a Gather of four rows) and encoding the
//   result copied every element three times and built an int64 offset per
//   element. For element types whose stored bytes decode and encode to the
//   same bytes (movableBytes: the 1-8 byte integers, float, double, float16
//   and bfloat16) they now copy the input's stored bytes straight into the
//   result's (byteView, stridedCopy, makeTensor): the same values, no
//   decoded copies, and contiguous runs copied with memcpy. Others (bool,
//   strings, float8, the packed sub-byte types, data that does not match
//   its dims) take the decoding path, which reports what is wrong. One
//   difference by design: a float16/bfloat16 signalling NaN keeps its bits
//   (the decoding path quietened it).

/// Bytes per element when elements of `dt` can be moved as stored bytes
/// (Note [Data movement in bytes]); 0 otherwise.
size_t movableBytes(DataType dt);
/// A tensor's stored bytes for data movement: valid while the tensor lives.
struct ByteView {
  const char *data = nullptr;
  size_t es = 0; ///< bytes per element
};
/// `t`'s bytes when its elements are movable and its data holds exactly
/// its dims' elements; nullopt otherwise (decode instead).
std::optional<ByteView> byteView(const Tensor &t);
/// Fills `dst` (row-major over `od`, `es` bytes per element) with the
/// elements of `src` at base + sum_k i_k * st[k] (in elements; strides may
/// be negative or zero). Axes that stay contiguous are merged, and a run of
/// stride 1 is one memcpy.
void stridedCopy(const char *src, int64_t base, llvm::ArrayRef<int64_t> st,
                 llvm::ArrayRef<int64_t> od, size_t es, char *dst);

/// Converts array `a` to compute kind of `dt` (values only; dt set).
StatusOr<Arr> convertArr(const Arr &a, DataType dt);

/// Input #i decoded; error if missing.
StatusOr<Arr> inputArr(const KernelCall &c, unsigned i);

/// out[k] = a[idx[k]] with out's dims `dims`: data movement for every
/// element type.
Arr takeElems(const Arr &a, std::vector<int64_t> dims, const std::vector<int64_t> &idx);

/// Appends elements [from, from + count) of `b` to `a` (same kind).
void appendElems(Arr &a, const Arr &b, int64_t from, int64_t count);

/// Wraps one output.
inline StatusOr<std::vector<Tensor>> one(const Arr &a) {
  std::vector<Tensor> r;
  r.push_back(toTensor(a));
  return r;
}

} // namespace kernels
} // namespace onnxir

#endif // ONNXIR_LIB_OPS_KERNELSUPPORT_H
