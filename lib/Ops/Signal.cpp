//===- Signal.cpp - DFT, STFT, windows, MelWeightMatrix -------------------===//
//
// Signal: DFT (the opset-17 attribute and opset-20 input forms of the axis),
// STFT, HannWindow HammingWindow BlackmanWindow, MelWeightMatrix. After the
// helpers shared by several ops, one section per op (the windows share one):
// its type and shape rule, its kernel, its version adapters and its
// registration (registerSignalOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// The single known element of a scalar (or 1-element) int operand.
const DimExpr *scalarData(InferCtx &c, unsigned i) {
  const Dims *d = c.hasInput(i) ? c.inData(i) : nullptr;
  return d && d->size() == 1 ? (*d)[0] : nullptr;
}

std::string dimsStr(llvm::ArrayRef<int64_t> d) { return "[" + absl::StrJoin(d, ",") + "]"; }

/// The value of a scalar (or one-element) integer input #i named `name`.
StatusOr<int64_t> scalarInt(const KernelCall &c, unsigned i, llvm::StringRef name) {
  const Tensor *t = c.input(i);
  if (!t) return invalid(absl::StrCat(c.opType.str(), ": input '", name.str(), "' is missing"));
  auto v = intValues(*t);
  if (!v.ok() || v->size() != 1)
    return invalid(absl::StrCat(c.opType.str(), ": input '", name.str(),
                                "' is not an integer scalar"));
  return (*v)[0];
}

/// The values of a float array in double.
std::vector<double> asDouble(const Arr &a) {
  if (a.kind() == CK::F64) return a.d;
  return std::vector<double>(a.f.begin(), a.f.end());
}

/// An output of `dt` from values computed in double (numeric types only).
Arr fromDouble(DataType dt, std::vector<int64_t> dims, const std::vector<double> &v) {
  Arr d;
  d.dt = DataType::Double;
  d.dims = std::move(dims);
  d.d = v;
  return *convertArr(d, dt);
}

/// Whether `dt` is one of the window and MelWeightMatrix output types.
bool numericOutput(DataType dt) {
  switch (dt) {
  case DataType::Uint8: case DataType::Uint16: case DataType::Uint32: case DataType::Uint64:
  case DataType::Int8: case DataType::Int16: case DataType::Int32: case DataType::Int64:
  case DataType::Float16: case DataType::Float: case DataType::Double: case DataType::BFloat16:
    return true;
  default: return false;
  }
}

// Note [DFT lines]
//   Every transform runs over one line of the signal at a time: the line's
//   first `nu` values, zero-padded (or truncated) to the length L, as L
//   complex doubles. A DftPlan transforms such a buffer (unscaled; the
//   angle's sign -1 forward, +1 inverse): radix 2 when L is a power of two,
//   the direct sum for other L up to 64, and above, Bluestein's chirp
//   convolution through power-of-two transforms of length >= 2L - 1, so any
//   length costs O(L log L). Angles are 2 pi (m mod L) / L, exact at
//   quarter turns, so a bin that is zero comes out 0, not 1e-16. The
//   inverse divides by L. IRFFT extends the one-sided spectrum Y[0 .. L/2]
//   hermitian (Y[L-k] = conj Y[k]) and keeps the real part, so, as numpy's
//   irfft, the imaginary parts of Y[0] and Y[L/2] do not count.
using cd = std::complex<double>;

/// e^{sign 2 pi i m / L}, exact at quarter turns.
cd unitRoot(int64_t m, int64_t L, int sign) {
  m %= L;
  if ((4 * m) % L == 0) {
    switch (4 * m / L) {
    case 0: return {1.0, 0.0};
    case 1: return {0.0, (double)sign};
    case 2: return {-1.0, 0.0};
    default: return {0.0, -(double)sign};
    }
  }
  double a = 2.0 * M_PI * (double)m / (double)L;
  return {std::cos(a), sign * std::sin(a)};
}

/// The longest transform the kernels take (Bluestein's buffers are four
/// times as long).
constexpr int64_t kMaxDftLength = (int64_t)1 << 24;

class DftPlan {
public:
  DftPlan(int64_t L, int sign) : L_(L) {
    if ((L & (L - 1)) == 0) {
      kind_ = Pow2;
      rev_.assign((size_t)L, 0);
      int bits = 0;
      while (((int64_t)1 << bits) < L) ++bits;
      for (int64_t i = 0; i < L; ++i)
        for (int b = 0; b < bits; ++b)
          if (i >> b & 1) rev_[i] |= (int64_t)1 << (bits - 1 - b);
      for (int64_t m = 0; m < L / 2; ++m) roots_.push_back(unitRoot(m, L, sign));
    } else if (L <= 64) {
      kind_ = Direct;
      for (int64_t m = 0; m < L; ++m) roots_.push_back(unitRoot(m, L, sign));
    } else {
      kind_ = Bluestein;
      M_ = 1;
      while (M_ < 2 * L - 1) M_ <<= 1;
      // chirp[t] = e^{sign pi i t^2 / L}; X[k] = chirp[k] sum_t x[t]
      // chirp[t] conj(chirp[k - t]), a convolution of length >= 2L - 1.
      for (int64_t t = 0; t < L; ++t) chirp_.push_back(unitRoot(t * t % (2 * L), 2 * L, sign));
      fwd_ = std::make_unique<DftPlan>(M_, -1);
      inv_ = std::make_unique<DftPlan>(M_, 1);
      std::vector<cd> b((size_t)M_, cd(0, 0));
      b[0] = std::conj(chirp_[0]);
      for (int64_t m = 1; m < L; ++m) b[m] = b[M_ - m] = std::conj(chirp_[m]);
      kernel_.resize((size_t)M_);
      fwd_->run(b.data(), kernel_.data());
      work_.resize((size_t)M_);
      work2_.resize((size_t)M_);
    }
  }

  /// y[0 .. L) = the transform of x[0 .. L).
  void run(const cd *x, cd *y) {
    switch (kind_) {
    case Pow2:
      for (int64_t i = 0; i < L_; ++i) y[rev_[i]] = x[i];
      for (int64_t len = 2; len <= L_; len <<= 1) {
        int64_t half = len / 2, step = L_ / len;
        for (int64_t i = 0; i < L_; i += len)
          for (int64_t j = 0; j < half; ++j) {
            cd u = y[i + j], v = y[i + j + half] * roots_[j * step];
            y[i + j] = u + v;
            y[i + j + half] = u - v;
          }
      }
      return;
    case Direct:
      for (int64_t k = 0; k < L_; ++k) {
        cd acc(0, 0);
        for (int64_t t = 0, idx = 0; t < L_; ++t, idx = (idx + k) % L_) acc += x[t] * roots_[idx];
        y[k] = acc;
      }
      return;
    case Bluestein:
      std::fill(work_.begin(), work_.end(), cd(0, 0));
      for (int64_t t = 0; t < L_; ++t) work_[t] = x[t] * chirp_[t];
      fwd_->run(work_.data(), work2_.data());
      for (int64_t m = 0; m < M_; ++m) work2_[m] *= kernel_[m];
      inv_->run(work2_.data(), work_.data());
      for (int64_t k = 0; k < L_; ++k) y[k] = chirp_[k] * work_[k] / (double)M_;
      return;
    }
  }

private:
  enum Kind { Pow2, Direct, Bluestein } kind_ = Direct;
  int64_t L_, M_ = 0;
  std::vector<cd> roots_, chirp_, kernel_, work_, work2_;
  std::vector<int64_t> rev_;
  std::unique_ptr<DftPlan> fwd_, inv_;
};

//===--- DFT ---===//

// DFT-17 (axis attribute, default 1) and DFT-20 (axis input, default -2).
// The last dim is 2 (complex) except for the inverse one-sided form (IRFFT,
// real output: 1). The axis dim becomes dft_length when given (RFFT:
// floor(dft_length / 2) + 1); without it RFFT gives floor(n / 2) + 1,
// IRFFT 2 * (n - 1), the others keep n. An axis input whose value is
// unknown leaves every dim unknown where the axis dim could change
// (one-sided or dft_length), else only the last dim changes.
void dftRule(InferCtx &c) {
  auto x = c.inShape(0);
  int32_t el = c.inElem(0);
  if (!x || x->size() < 2) return c.setTensor(0, el, std::nullopt);
  int64_t rank = x->size();
  bool onesided = c.getInt("onesided", 0) != 0, inverse = c.getInt("inverse", 0) != 0;
  bool irfft = onesided && inverse, rfft = onesided && !inverse;
  const DimExpr *last = c.c(irfft ? 1 : 2);
  Dims o = *x;
  o.back() = last;
  int64_t axis;
  if (c.opset >= 20) {
    if (c.hasInput(2)) {
      auto a = c.inInts(2);
      if (!a || a->size() != 1) {
        if (onesided || c.hasInput(1)) o.assign(rank, nullptr);
        o.back() = last;
        return c.setTensor(0, el, o);
      }
      axis = (*a)[0];
    } else {
      axis = -2;
    }
  } else {
    axis = c.getInt("axis", 1);
  }
  if (axis < -rank || axis == -1 || axis >= rank - 1) return; // invalid
  int64_t ax = axis < 0 ? axis + rank : axis;
  const DimExpr *n = (*x)[ax];
  if (c.hasInput(1)) {
    const Dims *d = c.inData(1);
    const DimExpr *len = d && d->size() == 1 ? (*d)[0] : nullptr;
    o[ax] = rfft && len ? dimAdd(c.ctx, dimFloorDiv(c.ctx, len, c.c(2)), c.c(1)) : len;
  } else if (rfft) {
    o[ax] = n ? dimAdd(c.ctx, dimFloorDiv(c.ctx, n, c.c(2)), c.c(1)) : nullptr;
  } else if (irfft) {
    o[ax] = n ? dimMul(c.ctx, c.c(2), dimSub(c.ctx, n, c.c(1))) : nullptr;
  }
  c.setTensor(0, el, o);
}

enum class DftKind { Forward, Inverse, InverseReal };

/// DFT-17 (axis attribute, default 1) and DFT-20 (axis operand, default
/// -2) over real ([..., 1]) or complex ([..., 2]) input: forward, inverse,
/// one-sided forward of real input (RFFT), one-sided inverse to real output
/// (IRFFT); Note [DFT lines].
StatusOr<std::vector<Tensor>> kDFT(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return invalid(absl::StrCat("DFT: input is ", dataTypeName(x->dt).str()));
  int64_t r = x->rank();
  if (r < 2 || (x->dims.back() != 1 && x->dims.back() != 2))
    return invalid(absl::StrCat("DFT: input has shape ", dimsStr(x->dims),
                                "; its last dim is 1 (real) or 2 (complex)"));
  bool inverse = c.getInt("inverse", 0) != 0, onesided = c.getInt("onesided", 0) != 0;
  bool complexIn = x->dims.back() == 2;
  int64_t axis = -2;
  if (c.opset > 0 && c.opset < 20) {
    axis = c.getInt("axis", 1);
  } else if (c.input(2)) {
    auto a = scalarInt(c, 2, "axis");
    if (!a.ok()) return a.status();
    axis = *a;
  }
  if (axis < -r || axis == -1 || axis >= r - 1)
    return invalid(absl::StrCat("DFT: axis ", axis, " is outside [", -r, ", -2] and [0, ", r - 2,
                                "] for input of rank ", r));
  int64_t ax = axis < 0 ? axis + r : axis, n = x->dims[ax];
  DftKind kind = !inverse ? DftKind::Forward : onesided ? DftKind::InverseReal : DftKind::Inverse;
  if (onesided && !inverse && complexIn)
    return invalid(
        "DFT: onesided forward (RFFT) takes real input ([..., 1]); the input is complex");
  if (kind == DftKind::InverseReal && !complexIn)
    return invalid(
        "DFT: onesided inverse (IRFFT) takes complex input ([..., 2]); the input is real");
  int64_t L = kind == DftKind::InverseReal ? 2 * (n - 1) : n;
  if (c.input(1)) {
    auto l = scalarInt(c, 1, "dft_length");
    if (!l.ok()) return l.status();
    L = *l;
  }
  if (L <= 0)
    return invalid(absl::StrCat("DFT: the transform length is ", L,
                                c.input(1) ? " (dft_length)" : " (from the input's axis dim)",
                                "; it must be positive"));
  int64_t K = onesided && !inverse ? L / 2 + 1 : L;
  std::vector<int64_t> od = x->dims;
  od[ax] = K;
  od.back() = kind == DftKind::InverseReal ? 1 : 2;
  if (Status st = checkOutputSize(c, x->dt, od); !st.ok()) return st;
  if (L > kMaxDftLength)
    return unsupported(absl::StrCat("DFT: a transform of length ", L, " (above 2^24)"));
  int64_t nu = std::min(n, kind == DftKind::InverseReal ? L / 2 + 1 : L);
  int64_t outer = 1, inner = 1, C = x->dims.back(), Co = od.back();
  for (int64_t k = 0; k < ax; ++k) outer *= x->dims[k];
  for (int64_t k = ax + 1; k < r - 1; ++k) inner *= x->dims[k];
  std::vector<double> xv = asDouble(*x), yv((size_t)numElementsOf(od));
  DftPlan plan(L, kind == DftKind::Forward ? -1 : 1);
  double scale = kind == DftKind::Forward ? 1.0 : 1.0 / (double)L;
  std::vector<cd> buf((size_t)L), out((size_t)L);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::fill(buf.begin(), buf.end(), cd(0, 0));
      for (int64_t t = 0; t < nu; ++t) {
        const double *e = &xv[((o * n + t) * inner + i) * C];
        cd v(e[0], C == 2 ? e[1] : 0.0);
        buf[t] = v;
        if (kind == DftKind::InverseReal && t > 0 && 2 * t != L) buf[L - t] = std::conj(v);
      }
      plan.run(buf.data(), out.data());
      for (int64_t k = 0; k < K; ++k) {
        double *e = &yv[((o * K + k) * inner + i) * Co];
        e[0] = out[k].real() * scale;
        if (Co == 2) e[1] = out[k].imag() * scale;
      }
    }
  return one(fromDouble(x->dt, od, yv));
}

// Adapters of the steps at opset 10 and later (Note [Version adapters]).
// DFT-20: the attribute axis (default 1) became operand #2 (int64 scalar,
// default -2).
absl::Status dftUp20(Node &n, AdapterContext &c) {
  auto a = adapters::intAttrOr(n, "axis", 1);
  if (!a.ok()) return a.status();
  if (c.checkOnly) return absl::OkStatus();
  Value *v = adapters::scalarConstant(n, c, "axis", DataType::Int64, (double)*a);
  n.removeAttr("axis");
  while (n.numOperands() < 2) n.addOperand(nullptr);
  n.addOperand(v);
  return absl::OkStatus();
}
absl::Status dftDown20(Node &n, AdapterContext &c) {
  int64_t axis = -2;
  if (n.numOperands() > 2 && n.operand(2)) {
    auto v = adapters::constantOperandValues(n, c, 2, "attribute 'axis'");
    if (!v.ok()) return v.status();
    if (v->size() != 1) return absl::FailedPreconditionError("operand #2 (axis) is not a scalar");
    axis = (int64_t)(*v)[0];
  }
  if (c.checkOnly) return absl::OkStatus();
  adapters::dropOperand(n, 2);
  adapters::setIntAttr(n, "axis", axis);
  return absl::OkStatus();
}

void registerDFT(OpRegistrar &r) {
  r["DFT"].infer(dftRule).kernel(kDFT);
  r["DFT"].since(20).upgrade(dftUp20).downgrade(dftDown20);
}

//===--- STFT ---===//

void stftRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x || x->size() != 3) return c.setTensor(0, el, std::nullopt);
  const DimExpr *len = nullptr;
  if (c.hasInput(3)) {
    len = scalarData(c, 3);
  } else if (c.hasInput(2)) {
    auto w = c.inShape(2);
    if (w && w->size() == 1) len = (*w)[0];
  }
  const DimExpr *step = scalarData(c, 1);
  const DimExpr *frames = nullptr;
  if (step && step->isConstant() && step->value() > 0)
    frames = dimAdd(c.ctx, dimFloorDiv(c.ctx, dimSub(c.ctx, (*x)[1], len), step), c.c(1));
  const DimExpr *bins =
      c.getInt("onesided", 1) ? dimAdd(c.ctx, dimFloorDiv(c.ctx, len, c.c(2)), c.c(1)) : len;
  c.setTensor(0, el, Dims{(*x)[0], frames, bins, c.c(2)});
}

/// STFT-17: frames of frame_length samples every frame_step, times the
/// window, each transformed (one-sided for real signals when onesided):
/// [batch, frames, bins, 2] with frames = 1 + (length - frame_length) /
/// frame_step.
StatusOr<std::vector<Tensor>> kSTFT(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return invalid(absl::StrCat("STFT: signal is ", dataTypeName(x->dt).str()));
  if (x->rank() != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return invalid(absl::StrCat("STFT: signal has shape ", dimsStr(x->dims),
                                "; it is [batch, length, 1] or [batch, length, 2]"));
  int64_t B = x->dims[0], len = x->dims[1], C = x->dims[2];
  auto step = scalarInt(c, 1, "frame_step");
  if (!step.ok()) return step.status();
  if (*step <= 0)
    return invalid(absl::StrCat("STFT: frame_step is ", *step, "; it must be positive"));
  std::optional<Arr> win;
  if (c.input(2)) {
    auto w = inputArr(c, 2);
    if (!w.ok()) return w.status();
    if (w->rank() != 1)
      return invalid(absl::StrCat("STFT: window has shape ", dimsStr(w->dims), "; it is 1-D"));
    if (w->dt != x->dt)
      return invalid(absl::StrCat("STFT: window is ", dataTypeName(w->dt).str(), ", signal is ",
                                  dataTypeName(x->dt).str()));
    win = std::move(*w);
  }
  int64_t fl = win ? win->dims[0] : len;
  if (c.input(3)) {
    auto l = scalarInt(c, 3, "frame_length");
    if (!l.ok()) return l.status();
    if (win && *l != fl)
      return invalid(absl::StrCat("STFT: frame_length is ", *l, " but the window has ", fl,
                                  " elements"));
    fl = *l;
  }
  if (fl <= 0 || fl > len)
    return invalid(absl::StrCat("STFT: frame length ", fl, " is not in [1, ", len,
                                "] (the signal's length)"));
  bool onesided = c.getInt("onesided", 1) != 0;
  if (onesided && C == 2)
    return invalid("STFT: onesided output needs a real signal; the signal is complex");
  int64_t frames = 1 + (len - fl) / *step, K = onesided ? fl / 2 + 1 : fl;
  std::vector<int64_t> od = {B, frames, K, 2};
  if (Status st = checkOutputSize(c, x->dt, od); !st.ok()) return st;
  if (fl > kMaxDftLength)
    return unsupported(absl::StrCat("STFT: a frame of length ", fl, " (above 2^24)"));
  std::vector<double> xv = asDouble(*x), wv = win ? asDouble(*win) : std::vector<double>(fl, 1.0);
  std::vector<double> yv((size_t)numElementsOf(od));
  DftPlan plan(fl, -1);
  std::vector<cd> buf((size_t)fl), out((size_t)fl);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < fl; ++t) {
        const double *e = &xv[(b * len + f * *step + t) * C];
        buf[t] = cd(e[0] * wv[t], C == 2 ? e[1] * wv[t] : 0.0);
      }
      plan.run(buf.data(), out.data());
      double *o = &yv[((b * frames + f) * K) * 2];
      for (int64_t k = 0; k < K; ++k) {
        o[2 * k] = out[k].real();
        o[2 * k + 1] = out[k].imag();
      }
    }
  return one(fromDouble(x->dt, od, yv));
}

void registerSTFT(OpRegistrar &r) { r["STFT"].infer(stftRule).kernel(kSTFT); }

//===--- HannWindow, HammingWindow, BlackmanWindow ---===//

/// Hann/Hamming/BlackmanWindow: [size] of output_datatype.
void windowRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  c.setTensor(0, el, Dims{scalarData(c, 0)});
}

/// Hann, Hamming and Blackman windows as their function bodies compute
/// them, in float: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
/// (periodic) or size - 1 (symmetric), then cast to output_datatype.
StatusOr<std::vector<Tensor>> window(const KernelCall &c, float a0, float a1, float a2) {
  auto size = scalarInt(c, 0, "size");
  if (!size.ok()) return size.status();
  if (*size < 0) return invalid(absl::StrCat(c.opType.str(), ": size is ", *size));
  DataType dt = (DataType)c.getInt("output_datatype", (int64_t)DataType::Float);
  if (!numericOutput(dt))
    return invalid(absl::StrCat(c.opType.str(), ": attribute 'output_datatype' (",
                                (int64_t)dt, ") is not a numeric type"));
  if (Status st = checkOutputSize(c, dt, {*size}); !st.ok()) return st;
  bool periodic = c.getInt("periodic", 1) != 0;
  float N = periodic ? (float)*size : (float)*size - 1.f;
  float inc = 6.2831855f / N;
  Arr f = Arr::make(DataType::Float, {*size});
  for (int64_t k = 0; k < *size; ++k) {
    float ang = (float)k * inc;
    f.f[k] = (a0 - a1 * std::cos(ang)) + a2 * std::cos(ang * 2.f);
  }
  return one(*convertArr(f, dt));
}

StatusOr<std::vector<Tensor>> kHannWindow(const KernelCall &c) {
  return window(c, 0.5f, 0.5f, 0.f);
}
StatusOr<std::vector<Tensor>> kHammingWindow(const KernelCall &c) {
  return window(c, 0.54347825f, 0.45652175f, 0.f);
}
StatusOr<std::vector<Tensor>> kBlackmanWindow(const KernelCall &c) {
  return window(c, 0.42f, 0.5f, 0.08f);
}

void registerWindows(OpRegistrar &r) {
  r["HannWindow"].infer(windowRule).kernel(kHannWindow);
  r["HammingWindow"].infer(windowRule).kernel(kHammingWindow);
  r["BlackmanWindow"].infer(windowRule).kernel(kBlackmanWindow);
}

//===--- MelWeightMatrix ---===//

void melRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  const DimExpr *bins = scalarData(c, 0), *dft = scalarData(c, 1);
  c.setTensor(0, el, Dims{dimAdd(c.ctx, dimFloorDiv(c.ctx, dft, c.c(2)), c.c(1)), bins});
}

/// The value of a scalar (or one-element) float input #i named `name`.
StatusOr<double> scalarFloat(const KernelCall &c, unsigned i, llvm::StringRef name) {
  auto a = inputArr(c, i);
  if (!a.ok()) return a.status();
  if (a->size() != 1 || (a->kind() != CK::F32 && a->kind() != CK::F64))
    return invalid(absl::StrCat(c.opType.str(), ": input '", name.str(),
                                "' is not a float scalar"));
  return a->kind() == CK::F32 ? (double)a->f[0] : a->d[0];
}

/// MelWeightMatrix-17: [dft_length / 2 + 1, num_mel_bins] triangles peaking
/// at 1, their corners num_mel_bins + 2 points evenly spaced on the mel
/// scale (mel(f) = 2595 log10(1 + f / 700)) from lower_edge_hertz to
/// upper_edge_hertz, each mapped to spectrogram bin
/// floor((dft_length + 1) f / sample_rate); the mel edges in float, the
/// rest in double, as the reference computes them.
StatusOr<std::vector<Tensor>> kMelWeightMatrix(const KernelCall &c) {
  auto bins = scalarInt(c, 0, "num_mel_bins"), L = scalarInt(c, 1, "dft_length"),
       sr = scalarInt(c, 2, "sample_rate");
  if (!bins.ok()) return bins.status();
  if (!L.ok()) return L.status();
  if (!sr.ok()) return sr.status();
  auto lo = scalarFloat(c, 3, "lower_edge_hertz"), hi = scalarFloat(c, 4, "upper_edge_hertz");
  if (!lo.ok()) return lo.status();
  if (!hi.ok()) return hi.status();
  if (*bins < 0) return invalid(absl::StrCat("MelWeightMatrix: num_mel_bins is ", *bins));
  if (*L <= 0) return invalid(absl::StrCat("MelWeightMatrix: dft_length is ", *L));
  if (*sr <= 0) return invalid(absl::StrCat("MelWeightMatrix: sample_rate is ", *sr));
  if (!(*lo >= 0) || !(*hi >= *lo))
    return invalid(absl::StrCat("MelWeightMatrix: the edges ", *lo, " and ", *hi,
                                " Hz are not 0 <= lower_edge_hertz <= upper_edge_hertz"));
  DataType dt = (DataType)c.getInt("output_datatype", (int64_t)DataType::Float);
  if (!numericOutput(dt))
    return invalid(absl::StrCat("MelWeightMatrix: attribute 'output_datatype' (", (int64_t)dt,
                                ") is not a numeric type"));
  int64_t spec = *L / 2 + 1, nm = *bins;
  std::vector<int64_t> od = {spec, nm};
  if (Status st = checkOutputSize(c, dt, od); !st.ok()) return st;
  float loMel = 2595.f * std::log10(1.f + (float)*lo / 700.f);
  float hiMel = 2595.f * std::log10(1.f + (float)*hi / 700.f);
  float step = (hiMel - loMel) / (float)(nm + 2);
  std::vector<int64_t> fb((size_t)nm + 2);
  for (int64_t k = 0; k < nm + 2; ++k) {
    double mel = (double)k * (double)step + (double)loMel;
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    double bin = std::floor((double)(*L + 1) * hz / (double)*sr);
    // The last corner only ends a falling edge (bins below it are written).
    if (!(bin >= 0 && bin <= (double)(k == nm + 1 ? spec : spec - 1)))
      return invalid(absl::StrCat("MelWeightMatrix: upper_edge_hertz ", *hi,
                                  " maps past the last spectrogram bin (", spec - 1,
                                  ") at sample_rate ", *sr));
    fb[k] = (int64_t)bin;
  }
  std::vector<double> out((size_t)(spec * nm), 0.0);
  for (int64_t i = 0; i < nm; ++i) {
    int64_t l = fb[i], m = fb[i + 1], h = fb[i + 2];
    if (m == l) out[m * nm + i] = 1.0;
    else
      for (int64_t j = l; j <= m; ++j) out[j * nm + i] = (double)(j - l) / (double)(m - l);
    for (int64_t j = m; j < h; ++j) out[j * nm + i] = (double)(h - j) / (double)(h - m);
  }
  return one(fromDouble(dt, od, out));
}

void registerMelWeightMatrix(OpRegistrar &r) {
  r["MelWeightMatrix"].infer(melRule).kernel(kMelWeightMatrix);
}

} // namespace

void registerSignalOps(OpRegistrar &r) {
  for (auto *reg : {registerDFT, registerSTFT, registerWindows, registerMelWeightMatrix}) reg(r);
}

} // namespace onnxir
