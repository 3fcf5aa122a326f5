//===- Training.cpp - ai.onnx.preview.training ----------------------------===//
//
// Training (domain ai.onnx.preview.training): the optimizers Adagrad Momentum
// Adam. The three share one rule and one kernel, so the file is one section
// whose registration is registerTrainingOps itself.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <cmath>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===--- Adagrad, Momentum, Adam ---===//

// Optimizer results are typed like the tensors they update: Adagrad
// (R, T, X..., G..., H...) -> (X_new..., H_new...), Momentum likewise with
// V, Adam (R, T, X..., G..., V..., H...) -> (X_new..., V_new..., H_new...).
// `groups` counts the runs of operands after R and T, `outGroups` names the
// run each run of results takes its types from.
Rule optimizerRule(unsigned groups, std::vector<unsigned> outGroups) {
  return [groups, outGroups](InferCtx &c) {
    if (c.numInputs() < 2 || (c.numInputs() - 2) % groups) return;
    unsigned n = (c.numInputs() - 2) / groups;
    for (unsigned k = 0; k < outGroups.size(); ++k)
      for (unsigned i = 0; i < n; ++i)
        if (const Type *t = c.inType(2 + outGroups[k] * n + i)) c.setOutType(k * n + i, t);
  };
}

// Note [Optimizer kernels]
//   One node updates n tensors: operands R (learning rate, a float or double
//   scalar), T (update count, an int64 scalar), then `groups` runs of n
//   tensors (X..., G..., and the optimizer's state), results `outs` runs of
//   n (X_new..., then the new state). Tensor i of every run has X_i's type
//   and shape. The scalar factors (learning rate adjustments) are computed
//   in double, the elementwise update in X's type.
enum class Opt { Adagrad, Momentum, Adam };

std::string dimsStr(llvm::ArrayRef<int64_t> d) { return "[" + absl::StrJoin(d, ",") + "]"; }

template <typename T>
void update(Opt kind, const KernelCall &c, double r, int64_t t, std::vector<Arr *> in,
            std::vector<Arr *> out, bool nesterov) {
  const std::vector<T> &x = in[0]->template vec<T>(), &g = in[1]->template vec<T>();
  size_t n = x.size();
  T norm = (T)c.getFloat("norm_coefficient", 0.f);
  switch (kind) {
  case Opt::Adagrad: {
    const std::vector<T> &h = in[2]->template vec<T>();
    std::vector<T> &xo = out[0]->template vec<T>(), &ho = out[1]->template vec<T>();
    T rate = (T)(r / (1.0 + (double)t * (double)c.getFloat("decay_factor", 0.f)));
    T eps = (T)c.getFloat("epsilon", 1e-6f);
    for (size_t k = 0; k < n; ++k) {
      T gr = norm * x[k] + g[k];
      T hn = h[k] + gr * gr;
      ho[k] = hn;
      xo[k] = x[k] - rate * gr / (std::sqrt(hn) + eps);
    }
    break;
  }
  case Opt::Momentum: {
    const std::vector<T> &v = in[2]->template vec<T>();
    std::vector<T> &xo = out[0]->template vec<T>(), &vo = out[1]->template vec<T>();
    T alpha = (T)c.getFloat("alpha", 0.f), beta = t > 0 ? (T)c.getFloat("beta", 0.f) : T(1);
    T rate = (T)r;
    for (size_t k = 0; k < n; ++k) {
      T gr = norm * x[k] + g[k];
      T vn = alpha * v[k] + beta * gr;
      vo[k] = vn;
      xo[k] = nesterov ? x[k] - rate * (gr + alpha * vn) : x[k] - rate * vn;
    }
    break;
  }
  case Opt::Adam: {
    const std::vector<T> &v = in[2]->template vec<T>(), &h = in[3]->template vec<T>();
    std::vector<T> &xo = out[0]->template vec<T>(), &vo = out[1]->template vec<T>(),
                   &ho = out[2]->template vec<T>();
    double a = c.getFloat("alpha", 0.9f), b = c.getFloat("beta", 0.999f);
    T alpha = (T)a, beta = (T)b, eps = (T)c.getFloat("epsilon", 1e-6f);
    T post = (T)(1.0 - (double)c.getFloat("norm_coefficient_post", 0.f));
    T rate = (T)(t > 0 ? r * std::sqrt(1.0 - std::pow(b, (double)t)) /
                             (1.0 - std::pow(a, (double)t))
                       : r);
    for (size_t k = 0; k < n; ++k) {
      T gr = norm * x[k] + g[k];
      T vn = alpha * v[k] + (T(1) - alpha) * gr;
      T hn = beta * h[k] + (T(1) - beta) * (gr * gr);
      vo[k] = vn;
      ho[k] = hn;
      xo[k] = post * (x[k] - rate * (vn / (std::sqrt(hn) + eps)));
    }
    break;
  }
  }
}

StatusOr<std::vector<Tensor>> optimizer(const KernelCall &c, Opt kind) {
  std::string op = c.opType.str();
  unsigned groups = kind == Opt::Adam ? 4 : 3, outs = kind == Opt::Adam ? 3 : 2;
  unsigned ni = (unsigned)c.inputs.size();
  if (ni < 2 + groups || (ni - 2) % groups)
    return invalid(absl::StrCat(op, ": ", ni, " inputs; it takes R, T and ", groups,
                                " runs of equally many tensors"));
  unsigned n = (ni - 2) / groups;
  for (const char *a : {"alpha", "beta", "mode", "norm_coefficient"})
    if (kind == Opt::Momentum && !c.attr(a))
      return invalid(absl::StrCat(op, ": attribute '", a, "' is required"));
  bool nesterov = false;
  if (kind == Opt::Momentum) {
    std::string mode = c.getString("mode", "");
    if (mode != "standard" && mode != "nesterov")
      return invalid(absl::StrCat(op, ": attribute 'mode' is \"", mode,
                                  "\", not \"standard\" or \"nesterov\""));
    nesterov = mode == "nesterov";
  }
  auto R = inputArr(c, 0);
  if (!R.ok()) return R.status();
  if (R->size() != 1 || (R->kind() != CK::F32 && R->kind() != CK::F64))
    return invalid(absl::StrCat(op, ": R (the learning rate) is not a float scalar"));
  double r = R->kind() == CK::F32 ? (double)R->f[0] : R->d[0];
  const Tensor *tt = c.input(1);
  if (!tt || tt->dataType() != DataType::Int64)
    return invalid(absl::StrCat(op, ": T (the update count) is not an int64 scalar"));
  auto tv = intValues(*tt);
  if (!tv.ok() || tv->size() != 1)
    return invalid(absl::StrCat(op, ": T (the update count) is not an int64 scalar"));
  int64_t t = (*tv)[0];
  std::vector<Arr> in;
  for (unsigned k = 2; k < ni; ++k) {
    auto a = inputArr(c, k);
    if (!a.ok()) return a.status();
    in.push_back(std::move(*a));
  }
  std::vector<Arr> res(outs * n);
  for (unsigned i = 0; i < n; ++i) {
    const Arr &x = in[i];
    if (x.dt != DataType::Float && x.dt != DataType::Double)
      return invalid(absl::StrCat(op, ": input #", 2 + i, " is ", dataTypeName(x.dt).str()));
    for (unsigned gi = 1; gi < groups; ++gi) {
      const Arr &y = in[gi * n + i];
      if (y.dt != x.dt || y.dims != x.dims)
        return invalid(absl::StrCat(op, ": input #", 2 + gi * n + i, " (",
                                    dataTypeName(y.dt).str(), dimsStr(y.dims),
                                    ") differs from input #", 2 + i, " (",
                                    dataTypeName(x.dt).str(), dimsStr(x.dims), ")"));
    }
    for (unsigned o = 0; o < outs; ++o) {
      if (Status st = checkOutputSize(c, x.dt, x.dims); !st.ok()) return st;
      res[o * n + i] = Arr::make(x.dt, x.dims);
    }
    std::vector<Arr *> ins, outsP;
    for (unsigned gi = 0; gi < groups; ++gi) ins.push_back(&in[gi * n + i]);
    for (unsigned o = 0; o < outs; ++o) outsP.push_back(&res[o * n + i]);
    if (x.dt == DataType::Float) update<float>(kind, c, r, t, ins, outsP, nesterov);
    else update<double>(kind, c, r, t, ins, outsP, nesterov);
  }
  std::vector<Tensor> out;
  for (const Arr &a : res) out.push_back(toTensor(a));
  return out;
}

StatusOr<std::vector<Tensor>> kAdagrad(const KernelCall &c) { return optimizer(c, Opt::Adagrad); }
StatusOr<std::vector<Tensor>> kMomentum(const KernelCall &c) { return optimizer(c, Opt::Momentum); }
StatusOr<std::vector<Tensor>> kAdam(const KernelCall &c) { return optimizer(c, Opt::Adam); }

} // namespace

void registerTrainingOps(OpRegistrar &r) {
  r["Adagrad"].infer(optimizerRule(3, {0, 2})).kernel(kAdagrad);
  r["Momentum"].infer(optimizerRule(3, {0, 2})).kernel(kMomentum);
  r["Adam"].infer(optimizerRule(4, {0, 2, 3})).kernel(kAdam);
}

} // namespace onnxir
