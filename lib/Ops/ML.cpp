//===- ML.cpp - ai.onnx.ml ------------------------------------------------===//
//
// ML (domain ai.onnx.ml): ArrayFeatureExtractor Binarizer CastMap CategoryMapper
// DictVectorizer FeatureVectorizer Imputer LabelEncoder LinearClassifier
// LinearRegressor Normalizer OneHotEncoder Scaler SVMClassifier SVMRegressor
// TreeEnsembleClassifier TreeEnsembleRegressor TreeEnsemble ZipMap. After the
// helpers shared by several ops, one section per op (the two SVMs share one,
// and so do the two classic tree ensembles): its type and shape rule, its
// kernel and its registration (registerMLOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// Number of elements of a list attribute (0 when absent).
size_t attrLen(InferCtx &c, llvm::StringRef name) {
  const Attribute *a = c.attr(name);
  if (!a) return 0;
  switch (a->kind()) {
  case AttrKind::Ints:
    return a->ints.size();
  case AttrKind::Floats:
    return a->floats.size();
  case AttrKind::Strings:
    return a->strings.size();
  default:
    return 0;
  }
}

/// The batch dim N of an [N,F] input ([F] counts as N = 1 when `vecOk`).
std::optional<const DimExpr *> batchDim(InferCtx &c, bool vecOk) {
  auto x = c.inShape(0);
  if (!x) return std::nullopt;
  if (x->size() == 2) return (*x)[0];
  if (x->size() == 1 && vecOk) return c.c(1);
  return std::nullopt;
}

/// String labels if classlabels_strings is non-empty, else int64 labels.
int32_t labelElem(InferCtx &c) {
  return attrLen(c, "classlabels_strings") ? kString : kInt64;
}

void sameShape(InferCtx &c, int32_t el) { c.setTensor(0, el, c.inShape(0)); }
/// [N, targets] results of the regressors; `targets` from an int attribute.
void regressor(InferCtx &c, int32_t el, llvm::StringRef targetsAttr, int64_t dflt) {
  auto n = batchDim(c, false);
  const Attribute *a = c.attr(targetsAttr);
  int64_t t = a && a->kind() == AttrKind::Int ? a->i : dflt;
  c.setTensor(0, el, n ? std::optional<Dims>(Dims{*n, t > 0 ? c.c(t) : nullptr}) : std::nullopt);
}

// Note [ML kernels]
//   The ai.onnx.ml kernels compute in float whatever the input's numeric
//   type (their scores are float tensors), but Binarizer, Imputer,
//   ArrayFeatureExtractor and TreeEnsemble, whose results keep the input's
//   type. A [C] input is one row of a [N, C] batch where the op allows it.
//   post_transform (the classifiers and regressors): LOGISTIC 1/(1+e^-x),
//   SOFTMAX per row, SOFTMAX_ZERO a softmax in which zeros stay 0 (a row
//   of zeros becomes 0.5s), PROBIT sqrt(2) erfinv(2x - 1) with Winitzki's
//   approximation of erfinv (a = 0.147), as ONNX's reference and
//   onnxruntime. Where the spec leaves a case open the kernels give what
//   onnxruntime gives (checked with it), else what ONNX's reference
//   (onnx/reference/ops/aionnxml) gives: LinearClassifier with one row of
//   coefficients and two labels scores [1 - t, t] (t the raw score s, or
//   its LOGISTIC or PROBIT) and picks the second label when s > 0.

/// Input #i as a [N, F] float matrix ([F] is one row).
struct Mat {
  int64_t n = 0, f = 0;
  std::vector<float> v;
};

StatusOr<Mat> matrixOf(const KernelCall &c, unsigned i, bool vectorOk = true) {
  auto a = inputArr(c, i);
  if (!a.ok()) return a.status();
  Mat m;
  if (a->rank() == 2) m.n = a->dims[0], m.f = a->dims[1];
  else if (a->rank() == 1 && vectorOk) m.n = 1, m.f = a->dims[0];
  else return invalid(absl::StrCat(c.opType.str(), ": X must be of shape [N, C]",
                                   vectorOk ? " or [C]" : ""));
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (T x : a->template vec<T>()) m.v.push_back((float)x);
    return absl::OkStatus();
  });
  if (!st.ok()) return invalid(absl::StrCat(c.opType.str(), ": X must be numeric"));
  return m;
}
std::vector<int64_t> intsOf(const KernelCall &c, llvm::StringRef name) {
  return c.getInts(name).value_or(std::vector<int64_t>{});
}

std::vector<std::string> stringsOf(const KernelCall &c, llvm::StringRef name) {
  return c.getStrings(name).value_or(std::vector<std::string>{});
}

const Tensor *tensorAttr(const KernelCall &c, llvm::StringRef name) {
  const Attribute *a = c.attr(name);
  if (!a || a->kind() != AttrKind::Tensor || a->tensors.empty()) return nullptr;
  return a->tensors[0].get();
}

float erfInv(float x) {
  float sgn = x < 0 ? -1.f : 1.f;
  float t = (1.f - x) * (1.f + x);
  if (t == 0) return 0;
  float lg = std::log(t);
  float v = 2.f / (float(M_PI) * 0.147f) + 0.5f * lg;
  float v2 = lg / 0.147f;
  return sgn * std::sqrt(-v + std::sqrt(v * v - v2));
}

enum class Post { None, Logistic, Softmax, SoftmaxZero, Probit };

StatusOr<Post> postOf(const KernelCall &c) {
  std::string p = c.getString("post_transform", "NONE");
  if (p == "NONE") return Post::None;
  if (p == "LOGISTIC") return Post::Logistic;
  if (p == "SOFTMAX") return Post::Softmax;
  if (p == "SOFTMAX_ZERO") return Post::SoftmaxZero;
  if (p == "PROBIT") return Post::Probit;
  return invalid(absl::StrCat(c.opType.str(), ": unknown post_transform \"", p, "\""));
}

float logistic(float x) { return 1.f / (1.f + std::exp(-x)); }

/// Applies `p` to one row of scores in place.
template <typename T> void postTransform(Post p, T *row, int64_t n) {
  switch (p) {
  case Post::None: return;
  case Post::Logistic:
    for (int64_t k = 0; k < n; ++k) row[k] = (T)logistic((float)row[k]);
    return;
  case Post::Probit:
    for (int64_t k = 0; k < n; ++k) row[k] = (T)(1.41421356f * erfInv(2.f * (float)row[k] - 1.f));
    return;
  case Post::Softmax:
  case Post::SoftmaxZero: {
    if (n == 0) return;
    T mx = *std::max_element(row, row + n), s = 0;
    for (int64_t k = 0; k < n; ++k) {
      bool zero = p == Post::SoftmaxZero && row[k] == T(0);
      row[k] = zero ? T(0) : (T)std::exp(row[k] - mx);
      s += row[k];
    }
    for (int64_t k = 0; k < n; ++k) row[k] = s == T(0) ? T(0.5) : row[k] / s;
    return;
  }
  }
}

/// Wraps labels (int64 or strings, [N]) and scores ([N, E] float).
StatusOr<std::vector<Tensor>> labelsAndScores(const std::vector<int64_t> &labelIdx,
                                              const std::vector<int64_t> &intLabels,
                                              const std::vector<std::string> &strLabels,
                                              Arr scores) {
  int64_t n = (int64_t)labelIdx.size();
  Arr y;
  y.dims = {n};
  if (!strLabels.empty()) {
    y.dt = DataType::String;
    for (int64_t k : labelIdx) y.s.push_back(k >= 0 && k < (int64_t)strLabels.size() ? strLabels[k] : "");
  } else {
    y.dt = DataType::Int64;
    for (int64_t k : labelIdx)
      y.i.push_back(intLabels.empty() ? k : k >= 0 && k < (int64_t)intLabels.size() ? intLabels[k] : 0);
  }
  std::vector<Tensor> r;
  r.push_back(toTensor(y));
  r.push_back(toTensor(scores));
  return r;
}

//===--- ArrayFeatureExtractor ---===//

void arrayFeatureExtractor(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x || x->size() < 2) return c.setTensor(0, el, std::nullopt);
  // The indices select along the last axis.
  Dims o(x->begin(), x->end() - 1);
  const DimExpr *k = nullptr;
  if (auto ix = c.inShape(1); ix && !ix->empty()) {
    k = c.c(1);
    for (const DimExpr *d : *ix) k = dimMul(c.ctx, k, d);
  }
  o.push_back(k);
  c.setTensor(0, el, o);
}

/// The indices select along X's last axis; a [C] X gives [1, K].
StatusOr<std::vector<Tensor>> kArrayFeatureExtractor(const KernelCall &c) {
  auto x = inputArr(c, 0), ix = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!ix.ok()) return ix.status();
  if (x->rank() < 1) return invalid("ArrayFeatureExtractor: X must have rank >= 1");
  if (ix->dt != DataType::Int64) return invalid("ArrayFeatureExtractor: Y must be int64");
  int64_t last = x->dims.back(), k = (int64_t)ix->i.size();
  for (int64_t v : ix->i)
    if (v < 0 || v >= last)
      return invalid(absl::StrCat("ArrayFeatureExtractor: index ", v, " is outside [0, ", last, ")"));
  std::vector<int64_t> od(x->dims.begin(), x->dims.end() - 1);
  if (od.empty()) od.push_back(1);
  od.push_back(k);
  if (Status s = checkOutputSize(c, x->dt, od); !s.ok()) return s;
  int64_t rows = last ? x->size() / last : numElementsOf(od) / std::max<int64_t>(k, 1);
  std::vector<int64_t> idx;
  for (int64_t r = 0; r < rows && k; ++r)
    for (int64_t v : ix->i) idx.push_back(r * last + v);
  return one(takeElems(*x, od, idx));
}

void registerArrayFeatureExtractor(OpRegistrar &r) {
  r["ArrayFeatureExtractor"].infer(arrayFeatureExtractor).kernel(kArrayFeatureExtractor);
}

//===--- Binarizer ---===//

StatusOr<std::vector<Tensor>> kBinarizer(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  double th = c.getFloat("threshold", 0.f);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (T &v : x->template vec<T>()) v = (double)v > th ? T(1) : T(0);
    return absl::OkStatus();
  });
  if (!st.ok()) return invalid("Binarizer: X must be numeric");
  return one(*x);
}

void registerBinarizer(OpRegistrar &r) {
  r["Binarizer"] = [](InferCtx &c) { sameShape(c, c.inElem(0)); };
  r["Binarizer"] = kBinarizer;
}

//===--- CastMap ---===//

void registerCastMap(OpRegistrar &r) {
  r["CastMap"] = [](InferCtx &c) {
    std::string to = c.getString("cast_to", "TO_FLOAT");
    int32_t el = to == "TO_FLOAT" ? kFloat : to == "TO_INT64" ? kInt64 : to == "TO_STRING" ? kString : -1;
    c.setTensor(0, el, std::nullopt);
  };
}

//===--- CategoryMapper ---===//

StatusOr<std::vector<Tensor>> kCategoryMapper(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  auto ints = intsOf(c, "cats_int64s");
  auto strs = stringsOf(c, "cats_strings");
  if (ints.size() != strs.size())
    return invalid("CategoryMapper: cats_int64s and cats_strings differ in length");
  if (x->dt == DataType::String) {
    std::map<std::string, int64_t> m;
    for (size_t k = 0; k < strs.size(); ++k) m.emplace(strs[k], ints[k]);
    Arr y = Arr::make(DataType::Int64, x->dims);
    int64_t dflt = c.getInt("default_int64", -1);
    for (size_t k = 0; k < x->s.size(); ++k) {
      auto it = m.find(x->s[k]);
      y.i[k] = it == m.end() ? dflt : it->second;
    }
    return one(y);
  }
  if (x->dt != DataType::Int64) return invalid("CategoryMapper: X must be string or int64");
  std::map<int64_t, std::string> m;
  for (size_t k = 0; k < ints.size(); ++k) m.emplace(ints[k], strs[k]);
  if (Status s = checkOutputSize(c, DataType::String, x->dims); !s.ok()) return s;
  Arr y = Arr::make(DataType::String, x->dims);
  std::string dflt = c.getString("default_string", "_Unused");
  for (size_t k = 0; k < x->i.size(); ++k) {
    auto it = m.find(x->i[k]);
    y.s[k] = it == m.end() ? dflt : it->second;
  }
  return one(y);
}

void registerCategoryMapper(OpRegistrar &r) {
  r["CategoryMapper"] = [](InferCtx &c) {
    int32_t in = c.inElem(0);
    sameShape(c, in == kString ? kInt64 : in == kInt64 ? kString : -1);
  };
  r["CategoryMapper"] = kCategoryMapper;
}

//===--- DictVectorizer ---===//

void registerDictVectorizer(OpRegistrar &r) {
  r["DictVectorizer"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (!t || t->kind() != Type::Kind::Map) return;
    const Type *v = t->elementType();
    if (v && v->isTensor() && v->hasElemType() && v->elemTypeRaw())
      c.setTensor(0, v->elemTypeRaw(), std::nullopt);
  };
}

//===--- FeatureVectorizer ---===//

void featureVectorizer(InferCtx &c) {
  auto dims = c.getInts("inputdimensions");
  auto x = c.inShape(0);
  if (!dims || dims->size() != c.numInputs() || !x || x->size() != 2)
    return c.setTensor(0, kFloat, std::nullopt);
  int64_t sum = 0;
  for (int64_t d : *dims) {
    if (d < 0 || d > ((int64_t)1 << 40)) return c.setTensor(0, kFloat, std::nullopt);
    sum += d;
    if (sum > ((int64_t)1 << 50)) return c.setTensor(0, kFloat, std::nullopt);
  }
  c.setTensor(0, kFloat, Dims{(*x)[0], c.c(sum)});
}

/// Input i, [N, C_i] ([C] is [1, C]), cut or zero-padded to
/// inputdimensions[i] columns, side by side.
StatusOr<std::vector<Tensor>> kFeatureVectorizer(const KernelCall &c) {
  auto dims = intsOf(c, "inputdimensions");
  if (dims.size() != c.inputs.size())
    return invalid("FeatureVectorizer: inputdimensions must have one entry per input");
  std::vector<Mat> in;
  int64_t n = -1, total = 0;
  for (unsigned i = 0; i < c.inputs.size(); ++i) {
    auto m = matrixOf(c, i);
    if (!m.ok()) return m.status();
    if (n >= 0 && m->n != n) return invalid("FeatureVectorizer: inputs differ in their number of rows");
    if (dims[i] < 0) return invalid("FeatureVectorizer: a negative inputdimensions entry");
    n = m->n;
    total += dims[i];
    in.push_back(std::move(*m));
  }
  std::vector<int64_t> od = {std::max<int64_t>(n, 0), total};
  if (Status s = checkOutputSize(c, DataType::Float, od); !s.ok()) return s;
  Arr y = Arr::make(DataType::Float, od);
  int64_t col = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    for (int64_t r = 0; r < od[0]; ++r)
      for (int64_t k = 0; k < std::min(dims[i], in[i].f); ++k)
        y.f[(size_t)(r * total + col + k)] = in[i].v[(size_t)(r * in[i].f + k)];
    col += dims[i];
  }
  return one(y);
}

void registerFeatureVectorizer(OpRegistrar &r) {
  r["FeatureVectorizer"].infer(featureVectorizer).kernel(kFeatureVectorizer);
}

//===--- Imputer ---===//

/// Elements equal to the replaced value (NaN: NaNs) take the imputed value
/// of their column (the last axis), or the single one.
StatusOr<std::vector<Tensor>> kImputer(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  int64_t cols = x->rank() ? x->dims.back() : 1;
  if (x->kind() == CK::F32 || x->kind() == CK::F64) {
    auto vals = c.getFloats("imputed_value_floats").value_or(std::vector<float>{});
    if (vals.size() != 1 && (int64_t)vals.size() != cols)
      return invalid("Imputer: imputed_value_floats must have 1 or one value per column");
    float rep = c.getFloat("replaced_value_float", 0.f);
    visitNumeric(x->kind(), [&](auto tag) -> Status {
      using T = decltype(tag);
      auto &v = x->template vec<T>();
      for (size_t k = 0; k < v.size(); ++k) {
        bool hit = std::isnan(rep) ? std::isnan((double)v[k]) : (double)v[k] == (double)rep;
        if (hit) v[k] = (T)vals[vals.size() == 1 ? 0 : k % (size_t)cols];
      }
      return absl::OkStatus();
    }).IgnoreError();
    return one(*x);
  }
  if (x->kind() != CK::I64) return invalid("Imputer: X must be float, double, int32 or int64");
  auto vals = intsOf(c, "imputed_value_int64s");
  if (vals.size() != 1 && (int64_t)vals.size() != cols)
    return invalid("Imputer: imputed_value_int64s must have 1 or one value per column");
  int64_t rep = c.getInt("replaced_value_int64", 0);
  for (size_t k = 0; k < x->i.size(); ++k)
    if (x->i[k] == rep) x->i[k] = vals[vals.size() == 1 ? 0 : k % (size_t)cols];
  return one(*x);
}

void registerImputer(OpRegistrar &r) {
  r["Imputer"] = [](InferCtx &c) { sameShape(c, c.inElem(0)); };
  r["Imputer"] = kImputer;
}

//===--- LabelEncoder ---===//

/// LabelEncoder: v1 maps strings <-> int64; v2+ takes the values_* type.
void labelEncoder(InferCtx &c) {
  int32_t el = -1;
  if (c.opset < 2) {
    int32_t in = c.inElem(0);
    el = in == kString ? kInt64 : in == kInt64 ? kString : -1;
  } else if (const Attribute *t = c.attr("values_tensor"); t && !t->tensors.empty()) {
    el = t->tensors[0]->dataTypeRaw();
  } else if (c.attr("values_strings")) {
    el = kString;
  } else if (c.attr("values_int64s")) {
    el = kInt64;
  } else if (c.attr("values_floats")) {
    el = kFloat;
  }
  sameShape(c, el);
}

// Note [LabelEncoder forms]
//   Version 1 maps strings to their index in classes_strings (else
//   default_int64) and int64s to the string at that index (else
//   default_string). From version 2, keys_* and values_* (floats, int64s,
//   strings; from 4 also keys_tensor and values_tensor of any of the six
//   types) are parallel lists; a key absent gives default_tensor, else the
//   default_* of the values' kind (default_int64 for int16/int32 values).
//   Float keys match by value, a NaN key matching NaN.

/// One key, compared within its kind.
struct Key {
  CK kind;
  int64_t i = 0;
  double d = 0;
  std::string s;
  bool operator<(const Key &o) const {
    if (kind == CK::Str) return s < o.s;
    if (kind == CK::I64) return i < o.i;
    bool na = std::isnan(d), nb = std::isnan(o.d);
    if (na || nb) return !na && nb; // NaN after every number, equal to NaN
    return d < o.d;
  }
};

/// The elements of `a` as keys of kind `k` (I64, F64 or Str).
std::vector<Key> keysOf(const Arr &a, CK k) {
  std::vector<Key> r;
  for (int64_t e = 0; e < std::max<int64_t>(a.size(), 0); ++e) {
    Key key{k, 0, 0, {}};
    if (a.kind() == CK::Str) key.s = a.s[(size_t)e];
    else if (a.kind() == CK::I64) key.i = a.i[(size_t)e], key.d = (double)key.i;
    else if (a.kind() == CK::F32) key.d = a.f[(size_t)e];
    else if (a.kind() == CK::F64) key.d = a.d[(size_t)e];
    r.push_back(key);
  }
  return r;
}

Arr listArr(DataType dt, const std::vector<float> &f) {
  Arr a = Arr::make(dt, {(int64_t)f.size()});
  a.f = f;
  return a;
}

StatusOr<std::vector<Tensor>> kLabelEncoder(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  Arr keys, values;
  if (c.opset > 0 && c.opset < 2) {
    auto classes = stringsOf(c, "classes_strings");
    keys.dims = values.dims = {(int64_t)classes.size()};
    if (x->dt == DataType::String) {
      keys.dt = DataType::String, keys.s = classes;
      values.dt = DataType::Int64;
      for (size_t k = 0; k < classes.size(); ++k) values.i.push_back((int64_t)k);
    } else {
      keys.dt = DataType::Int64;
      for (size_t k = 0; k < classes.size(); ++k) keys.i.push_back((int64_t)k);
      values.dt = DataType::String, values.s = classes;
    }
  } else {
    auto pick = [&](llvm::StringRef side, Arr &out) -> Status {
      std::string p = side.str();
      if (const Tensor *t = tensorAttr(c, p + "_tensor")) {
        auto a = fromTensor(*t);
        if (!a.ok()) return a.status();
        out = std::move(*a);
        out.dims = {out.size()};
      } else if (auto s = c.getStrings(p + "_strings")) {
        out.dt = DataType::String, out.s = *s, out.dims = {(int64_t)s->size()};
      } else if (auto i = c.getInts(p + "_int64s")) {
        out.dt = DataType::Int64, out.i = *i, out.dims = {(int64_t)i->size()};
      } else if (auto f = c.getFloats(p + "_floats")) {
        out = listArr(DataType::Float, *f);
      } else {
        return invalid(absl::StrCat("LabelEncoder: no ", p, "_* attribute"));
      }
      return absl::OkStatus();
    };
    if (Status s = pick("keys", keys); !s.ok()) return s;
    if (Status s = pick("values", values); !s.ok()) return s;
  }
  if (keys.size() != values.size())
    return invalid("LabelEncoder: keys and values differ in length");
  CK kk = keys.kind() == CK::F32 ? CK::F64 : keys.kind();
  CK xk = x->kind() == CK::F32 ? CK::F64 : x->kind();
  if (kk != xk || (kk != CK::I64 && kk != CK::F64 && kk != CK::Str))
    return invalid(absl::StrCat("LabelEncoder: keys of type ", dataTypeName(keys.dt).str(),
                                " for an input of type ", dataTypeName(x->dt).str()));
  // The default, as a one-element array of the values' type.
  Arr dflt;
  if (const Tensor *t = c.opset >= 4 ? tensorAttr(c, "default_tensor") : nullptr) {
    auto a = fromTensor(*t);
    if (!a.ok()) return a.status();
    if (a->dt != values.dt || a->size() != 1)
      return invalid("LabelEncoder: default_tensor must be one value of the values' type");
    dflt = std::move(*a);
  } else {
    dflt = Arr::make(values.dt, {1});
    if (values.kind() == CK::Str) dflt.s[0] = c.getString("default_string", "_Unused");
    else if (values.kind() == CK::I64) dflt.i[0] = c.getInt("default_int64", -1);
    else if (values.kind() == CK::F32) dflt.f[0] = c.getFloat("default_float", 0.f);
    else if (values.kind() == CK::F64) dflt.d[0] = c.getFloat("default_float", 0.f);
    else return invalid("LabelEncoder: values of an unsupported type");
  }
  std::map<Key, int64_t> m;
  std::vector<Key> ks = keysOf(keys, kk);
  for (size_t k = 0; k < ks.size(); ++k) m.emplace(ks[k], (int64_t)k);
  if (Status s = checkOutputSize(c, values.dt, x->dims); !s.ok()) return s;
  // Gather from values ++ default.
  Arr pool = values;
  appendElems(pool, dflt, 0, 1);
  std::vector<int64_t> idx;
  for (const Key &k : keysOf(*x, kk)) {
    auto it = m.find(k);
    idx.push_back(it == m.end() ? values.size() : it->second);
  }
  return one(takeElems(pool, x->dims, idx));
}

void registerLabelEncoder(OpRegistrar &r) {
  r["LabelEncoder"].infer(labelEncoder).kernel(kLabelEncoder);
}

//===--- LinearClassifier ---===//

void linearClassifier(InferCtx &c) {
  int32_t lab = labelElem(c);
  size_t nLabels = lab == kString ? attrLen(c, "classlabels_strings") : attrLen(c, "classlabels_ints");
  int64_t classes = attrLen(c, "intercepts");
  if (classes == 1 && nLabels == 2) classes = 2;
  auto n = batchDim(c, true);
  const DimExpr *e = classes > 0 ? c.c(classes) : nullptr;
  c.setTensor(0, lab, n ? std::optional<Dims>(Dims{*n}) : std::nullopt);
  c.setTensor(1, kFloat, n ? std::optional<Dims>(Dims{*n, e}) : std::nullopt);
}

StatusOr<std::vector<Tensor>> kLinearClassifier(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  auto post = postOf(c);
  if (!post.ok()) return post.status();
  auto coef = c.getFloats("coefficients").value_or(std::vector<float>{});
  auto icpt = c.getFloats("intercepts").value_or(std::vector<float>{});
  auto ints = intsOf(c, "classlabels_ints");
  auto strs = stringsOf(c, "classlabels_strings");
  int64_t F = x->f;
  if (F == 0 || coef.empty() || coef.size() % (size_t)F)
    return invalid("LinearClassifier: coefficients must be a whole number of rows of C");
  int64_t E = (int64_t)coef.size() / F;
  if (!icpt.empty() && (int64_t)icpt.size() != E)
    return invalid("LinearClassifier: intercepts must have one value per class");
  int64_t nLabels = (int64_t)std::max(ints.size(), strs.size());
  if (nLabels && nLabels != (E == 1 ? 2 : E))
    return invalid(absl::StrCat("LinearClassifier: ", nLabels, " class labels for ", E,
                                " rows of coefficients (one row needs two labels)"));
  bool binary = E == 1 && nLabels == 2;
  int64_t cols = binary ? 2 : E;
  if (Status s = checkOutputSize(c, DataType::Float, {x->n, cols}); !s.ok()) return s;
  Arr z = Arr::make(DataType::Float, {x->n, cols});
  std::vector<int64_t> label;
  for (int64_t r = 0; r < x->n; ++r) {
    float *row = z.f.data() + r * cols;
    for (int64_t e = 0; e < E; ++e) {
      float s = icpt.empty() ? 0.f : icpt[(size_t)e];
      for (int64_t k = 0; k < F; ++k) s += x->v[(size_t)(r * F + k)] * coef[(size_t)(e * F + k)];
      row[binary ? 1 : e] = s;
    }
    if (binary) {
      // Note [ML kernels]: [1 - t, t], t the score after LOGISTIC or PROBIT;
      // the label by the sign of the raw score.
      float s = row[1], t = s;
      if (*post == Post::Logistic || *post == Post::Probit) postTransform(*post, &t, 1);
      row[0] = 1.f - t;
      row[1] = t;
      label.push_back(s > 0 ? 1 : 0);
      continue;
    }
    postTransform(*post, row, cols);
    if (cols > 1) {
      label.push_back(std::max_element(row, row + cols) - row);
    } else {
      // One score: the first label where it reaches the threshold, else 0 / "".
      float th = *post == Post::None ? 0.f : 0.5f;
      bool pos = row[0] >= th;
      label.push_back(nLabels ? (pos ? 0 : -1) : (pos ? 1 : 0));
    }
  }
  return labelsAndScores(label, ints, strs, std::move(z));
}

void registerLinearClassifier(OpRegistrar &r) {
  r["LinearClassifier"].infer(linearClassifier).kernel(kLinearClassifier);
}

//===--- LinearRegressor ---===//

StatusOr<std::vector<Tensor>> kLinearRegressor(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  auto post = postOf(c);
  if (!post.ok()) return post.status();
  auto coef = c.getFloats("coefficients").value_or(std::vector<float>{});
  auto icpt = c.getFloats("intercepts").value_or(std::vector<float>{});
  int64_t T = c.getInt("targets", 1), F = x->f;
  if (T < 1 || (int64_t)coef.size() != T * F)
    return invalid("LinearRegressor: coefficients must hold targets x C values");
  if (!icpt.empty() && (int64_t)icpt.size() != T)
    return invalid("LinearRegressor: intercepts must have one value per target");
  if (Status s = checkOutputSize(c, DataType::Float, {x->n, T}); !s.ok()) return s;
  Arr y = Arr::make(DataType::Float, {x->n, T});
  for (int64_t r = 0; r < x->n; ++r) {
    float *row = y.f.data() + r * T;
    for (int64_t t = 0; t < T; ++t) {
      float s = icpt.empty() ? 0.f : icpt[(size_t)t];
      for (int64_t k = 0; k < F; ++k) s += x->v[(size_t)(r * F + k)] * coef[(size_t)(t * F + k)];
      row[t] = s;
    }
    postTransform(*post, row, T);
  }
  return one(y);
}

void registerLinearRegressor(OpRegistrar &r) {
  r["LinearRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "targets", 1); };
  r["LinearRegressor"] = kLinearRegressor;
}

//===--- Normalizer ---===//

// Note [Normalizer]
//   Per row: MAX divides by the row's largest value, L1 by the sum of the
//   absolute values, L2 by the square root of the sum of squares (the sign
//   kept); a zero divisor leaves the row as it is (the spec's "Y == X").

StatusOr<std::vector<Tensor>> kNormalizer(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  std::string norm = c.getString("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2")
    return invalid(absl::StrCat("Normalizer: norm \"", norm, "\" is not MAX, L1 or L2"));
  auto xa = inputArr(c, 0);
  Arr y = Arr::make(DataType::Float, xa->dims);
  for (int64_t r = 0; r < x->n; ++r) {
    const float *in = x->v.data() + r * x->f;
    float *out = y.f.data() + r * x->f;
    float d = 0;
    if (norm == "MAX") {
      d = x->f ? *std::max_element(in, in + x->f) : 0.f;
    } else {
      for (int64_t k = 0; k < x->f; ++k) d += norm == "L1" ? std::fabs(in[k]) : in[k] * in[k];
      if (norm == "L2") d = std::sqrt(d);
    }
    for (int64_t k = 0; k < x->f; ++k) out[k] = d == 0 ? in[k] : in[k] / d;
  }
  return one(y);
}

void registerNormalizer(OpRegistrar &r) {
  r["Normalizer"] = [](InferCtx &c) { sameShape(c, kFloat); };
  r["Normalizer"] = kNormalizer;
}

//===--- OneHotEncoder ---===//

/// X's shape plus one axis of the categories; numbers are cast to int64
/// and looked up in cats_int64s, strings in cats_strings. With zeros = 0 a
/// value of no category is an error.
StatusOr<std::vector<Tensor>> kOneHotEncoder(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  auto ints = intsOf(c, "cats_int64s");
  auto strs = stringsOf(c, "cats_strings");
  bool zeros = c.getInt("zeros", 1) != 0;
  int64_t cats = x->dt == DataType::String ? (int64_t)strs.size() : (int64_t)ints.size();
  if (cats == 0)
    return invalid(absl::StrCat("OneHotEncoder: no ",
                                x->dt == DataType::String ? "cats_strings" : "cats_int64s",
                                " for this input"));
  std::vector<int64_t> od = x->dims;
  od.push_back(cats);
  if (Status s = checkOutputSize(c, DataType::Float, od); !s.ok()) return s;
  Arr y = Arr::make(DataType::Float, od);
  std::map<std::string, int64_t> sm;
  std::map<int64_t, int64_t> im;
  for (size_t k = 0; k < strs.size(); ++k) sm.emplace(strs[k], (int64_t)k);
  for (size_t k = 0; k < ints.size(); ++k) im.emplace(ints[k], (int64_t)k);
  for (int64_t e = 0; e < std::max<int64_t>(x->size(), 0); ++e) {
    int64_t j = -1;
    if (x->kind() == CK::Str) {
      auto it = sm.find(x->s[(size_t)e]);
      if (it != sm.end()) j = it->second;
    } else {
      double d = x->kind() == CK::F32 ? x->f[(size_t)e] : x->kind() == CK::F64 ? x->d[(size_t)e] : 0;
      bool castable = x->kind() == CK::I64 || (std::isfinite(d) && std::fabs(d) < 9e18);
      auto it = castable ? im.find(x->kind() == CK::I64 ? x->i[(size_t)e] : (int64_t)d) : im.end();
      if (it != im.end()) j = it->second;
    }
    if (j >= 0) y.f[(size_t)(e * cats + j)] = 1.f;
    else if (!zeros) return invalid("OneHotEncoder: a value of no category (zeros = 0)");
  }
  return one(y);
}

void registerOneHotEncoder(OpRegistrar &r) {
  r["OneHotEncoder"] = [](InferCtx &c) {
    size_t cats = std::max(attrLen(c, "cats_int64s"), attrLen(c, "cats_strings"));
    auto x = c.inShape(0);
    if (x) x->push_back(cats ? c.c(cats) : nullptr);
    c.setTensor(0, kFloat, x);
  };
  r["OneHotEncoder"] = kOneHotEncoder;
}

//===--- Scaler ---===//

/// (x - offset) * scale, offset and scale of 1 or one value per column.
StatusOr<std::vector<Tensor>> kScaler(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  auto off = c.getFloats("offset").value_or(std::vector<float>{0.f});
  auto sc = c.getFloats("scale").value_or(std::vector<float>{1.f});
  int64_t cols = x->rank() ? x->dims.back() : 1;
  for (auto *l : {&off, &sc})
    if (l->size() != 1 && (int64_t)l->size() != cols)
      return invalid("Scaler: offset and scale must have 1 or one value per column");
  Arr y = Arr::make(DataType::Float, x->dims);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = x->template vec<T>();
    for (size_t k = 0; k < v.size(); ++k) {
      size_t j = cols ? k % (size_t)cols : 0;
      y.f[k] = ((float)v[k] - off[off.size() == 1 ? 0 : j]) * sc[sc.size() == 1 ? 0 : j];
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return invalid("Scaler: X must be numeric");
  return one(y);
}

void registerScaler(OpRegistrar &r) {
  r["Scaler"] = [](InferCtx &c) { sameShape(c, kFloat); };
  r["Scaler"] = kScaler;
}

//===--- SVMClassifier, SVMRegressor ---===//

void svmClassifier(InferCtx &c) {
  auto n = batchDim(c, false);
  c.setTensor(0, labelElem(c), n ? std::optional<Dims>(Dims{*n}) : std::nullopt);
  c.setTensor(1, kFloat, n ? std::optional<Dims>(Dims{*n, nullptr}) : std::nullopt);
}

// Note [SVM kernels]
//   K(x, v): LINEAR x.v, POLY (gamma x.v + coef0)^degree, RBF
//   exp(-gamma |x - v|^2), SIGMOID tanh(gamma x.v + coef0), with
//   kernel_params = [gamma, coef0, degree]. Without support vectors the
//   model is linear (coefficients are one row per class, or the
//   regressor's one row). The classifier with support vectors votes one
//   against one (libsvm's order, rho per pair); with prob_a/prob_b the
//   pairwise scores become probabilities by Platt's sigmoid and are coupled
//   by libsvm's multiclass_probability iteration.

struct SvmKernel {
  std::string type;
  float gamma = 0, coef0 = 0, degree = 0;
  float operator()(const float *a, const float *b, int64_t n) const {
    if (type == "RBF") {
      float s = 0;
      for (int64_t k = 0; k < n; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
      return std::exp(-gamma * s);
    }
    float s = 0;
    for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
    if (type == "POLY") return std::pow(gamma * s + coef0, degree);
    if (type == "SIGMOID") return std::tanh(gamma * s + coef0);
    return s;
  }
};

StatusOr<SvmKernel> svmKernel(const KernelCall &c) {
  SvmKernel k;
  k.type = c.getString("kernel_type", "LINEAR");
  if (k.type != "LINEAR" && k.type != "POLY" && k.type != "RBF" && k.type != "SIGMOID")
    return invalid(absl::StrCat(c.opType.str(), ": unknown kernel_type \"", k.type, "\""));
  auto p = c.getFloats("kernel_params").value_or(std::vector<float>{});
  if (!p.empty()) {
    if (p.size() != 3) return invalid(absl::StrCat(c.opType.str(), ": kernel_params must be [gamma, coef0, degree]"));
    k.gamma = p[0], k.coef0 = p[1], k.degree = (float)(int64_t)p[2];
  }
  return k;
}

/// What both SVMs read first, in this order: X, post_transform,
/// kernel_type/kernel_params, then coefficients, rho and support_vectors.
struct SvmModel {
  Mat x;
  Post post;
  SvmKernel kern;
  std::vector<float> coef, rho, sv;
};

StatusOr<SvmModel> svmModel(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  auto post = postOf(c);
  if (!post.ok()) return post.status();
  auto kern = svmKernel(c);
  if (!kern.ok()) return kern.status();
  SvmModel m{std::move(*x), *post, std::move(*kern), {}, {}, {}};
  m.coef = c.getFloats("coefficients").value_or(std::vector<float>{});
  m.rho = c.getFloats("rho").value_or(std::vector<float>{});
  m.sv = c.getFloats("support_vectors").value_or(std::vector<float>{});
  return m;
}

StatusOr<std::vector<Tensor>> kSVMRegressor(const KernelCall &c) {
  auto m = svmModel(c);
  if (!m.ok()) return m.status();
  const Mat &x = m->x;
  const std::vector<float> &coef = m->coef, &rho = m->rho, &sv = m->sv;
  int64_t ns = c.getInt("n_supports", 0), F = x.f;
  bool oneClass = c.getInt("one_class", 0) != 0;
  if (rho.empty()) return invalid("SVMRegressor: needs rho");
  if (ns > 0 && ((int64_t)sv.size() != ns * F || (int64_t)coef.size() != ns))
    return invalid("SVMRegressor: support_vectors must be n_supports x C and coefficients n_supports");
  if (ns <= 0 && (int64_t)coef.size() != F)
    return invalid("SVMRegressor: a linear model needs C coefficients");
  Arr y = Arr::make(DataType::Float, {x.n, 1});
  SvmKernel lin{"LINEAR"};
  for (int64_t r = 0; r < x.n; ++r) {
    const float *row = x.v.data() + r * F;
    float s = 0;
    if (ns > 0)
      for (int64_t j = 0; j < ns; ++j) s += coef[(size_t)j] * m->kern(row, sv.data() + j * F, F);
    else
      s = lin(row, coef.data(), F);
    s += rho[0];
    y.f[(size_t)r] = oneClass ? (s > 0 ? 1.f : -1.f) : s;
    postTransform(m->post, &y.f[(size_t)r], 1);
  }
  return one(y);
}

/// libsvm's coupling of pairwise probabilities r (k x k) into k class
/// probabilities.
std::vector<float> multiclassProbability(int64_t k, const std::vector<float> &r) {
  auto R = [&](int64_t i, int64_t j) { return r[(size_t)(i * k + j)]; };
  std::vector<float> Q((size_t)(k * k)), Qp((size_t)k), P((size_t)k, 1.f / (float)k);
  auto q = [&](int64_t i, int64_t j) -> float & { return Q[(size_t)(i * k + j)]; };
  for (int64_t t = 0; t < k; ++t) {
    q(t, t) = 0;
    for (int64_t j = 0; j < t; ++j) {
      q(t, t) += R(j, t) * R(j, t);
      q(t, j) = q(j, t);
    }
    for (int64_t j = t + 1; j < k; ++j) {
      q(t, t) += R(j, t) * R(j, t);
      q(t, j) = -R(j, t) * R(t, j);
    }
  }
  float eps = 0.005f / (float)k;
  for (int64_t it = 0; it < std::max<int64_t>(100, k); ++it) {
    float pQp = 0;
    for (int64_t t = 0; t < k; ++t) {
      Qp[(size_t)t] = 0;
      for (int64_t j = 0; j < k; ++j) Qp[(size_t)t] += q(t, j) * P[(size_t)j];
      pQp += P[(size_t)t] * Qp[(size_t)t];
    }
    float maxErr = 0;
    for (int64_t t = 0; t < k; ++t) maxErr = std::max(maxErr, std::fabs(Qp[(size_t)t] - pQp));
    if (maxErr < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      float diff = (-Qp[(size_t)t] + pQp) / q(t, t);
      P[(size_t)t] += diff;
      pQp = (pQp + diff * (diff * q(t, t) + 2 * Qp[(size_t)t])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        Qp[(size_t)j] = (Qp[(size_t)j] + diff * q(t, j)) / (1 + diff);
        P[(size_t)j] /= (1 + diff);
      }
    }
  }
  return P;
}

StatusOr<std::vector<Tensor>> kSVMClassifier(const KernelCall &c) {
  auto m = svmModel(c);
  if (!m.ok()) return m.status();
  const Mat &x = m->x;
  const std::vector<float> &coef = m->coef, &rho = m->rho, &sv = m->sv;
  auto probA = c.getFloats("prob_a").value_or(std::vector<float>{});
  auto probB = c.getFloats("prob_b").value_or(std::vector<float>{});
  auto vpc = intsOf(c, "vectors_per_class");
  auto ints = intsOf(c, "classlabels_ints");
  auto strs = stringsOf(c, "classlabels_strings");
  int64_t classes = std::max<int64_t>((int64_t)std::max(ints.size(), strs.size()), 1);
  int64_t F = x.f, nv = 0;
  std::vector<int64_t> start;
  for (int64_t v : vpc) {
    if (v < 0) return invalid("SVMClassifier: a negative vectors_per_class entry");
    start.push_back(nv);
    nv += v;
  }
  bool svc = nv > 0;
  if (rho.empty()) return invalid("SVMClassifier: needs rho");
  if (svc) {
    if ((int64_t)vpc.size() != classes) return invalid("SVMClassifier: vectors_per_class must have one entry per class");
    if ((int64_t)sv.size() != nv * F) return invalid("SVMClassifier: support_vectors must be (sum of vectors_per_class) x C");
    if ((int64_t)coef.size() != (classes - 1) * nv) return invalid("SVMClassifier: coefficients must be (classes - 1) x vectors");
    if ((int64_t)rho.size() < classes * (classes - 1) / 2) return invalid("SVMClassifier: rho must have one value per pair of classes");
  } else if ((int64_t)coef.size() != classes * F) {
    return invalid("SVMClassifier: a linear model needs classes x C coefficients");
  }
  bool proba = svc && !probA.empty();
  int64_t pairs = classes * (classes - 1) / 2;
  if (proba && ((int64_t)probA.size() < pairs || (int64_t)probB.size() < pairs))
    return invalid("SVMClassifier: prob_a and prob_b must have one value per pair of classes");
  bool allPositive = coef.empty() || *std::min_element(coef.begin(), coef.end()) >= 0;
  SvmKernel lin{"LINEAR"};
  std::vector<std::vector<float>> rows;
  std::vector<int64_t> label;
  for (int64_t r = 0; r < x.n; ++r) {
    const float *row = x.v.data() + r * F;
    std::vector<float> scores, votes;
    if (!svc) {
      for (int64_t j = 0; j < classes; ++j) scores.push_back(rho[0] + lin(row, coef.data() + j * F, F));
    } else {
      std::vector<float> kv((size_t)nv);
      for (int64_t j = 0; j < nv; ++j) kv[(size_t)j] = m->kern(row, sv.data() + j * F, F);
      votes.assign((size_t)classes, 0.f);
      int64_t e = 0;
      for (int64_t i = 0; i < classes; ++i)
        for (int64_t j = i + 1; j < classes; ++j, ++e) {
          float s = rho[(size_t)e];
          for (int64_t k = 0; k < vpc[(size_t)i]; ++k)
            s += coef[(size_t)((j - 1) * nv + start[(size_t)i] + k)] * kv[(size_t)(start[(size_t)i] + k)];
          for (int64_t k = 0; k < vpc[(size_t)j]; ++k)
            s += coef[(size_t)(i * nv + start[(size_t)j] + k)] * kv[(size_t)(start[(size_t)j] + k)];
          scores.push_back(s);
          votes[(size_t)(s > 0 ? i : j)] += 1;
        }
    }
    if (proba) {
      std::vector<float> pr((size_t)(classes * classes), 0.f);
      int64_t e = 0;
      for (int64_t i = 0; i < classes; ++i)
        for (int64_t j = i + 1; j < classes; ++j, ++e) {
          float v = 1.f - logistic(scores[(size_t)e] * probA[(size_t)e] + probB[(size_t)e]);
          v = std::min(std::max(v, 1e-7f), 1.f - 1e-7f);
          pr[(size_t)(i * classes + j)] = v;
          pr[(size_t)(j * classes + i)] = 1.f - v;
        }
      scores = multiclassProbability(classes, pr);
    }
    const std::vector<float> &pick = votes.empty() ? scores : votes;
    int64_t best = pick.empty() ? 0 : std::max_element(pick.begin(), pick.end()) - pick.begin();
    float maxWeight = pick.empty() ? 0.f : pick[(size_t)best];
    int64_t lab = best;
    int addSecond = -1;
    if (rho.size() == 1 && classes == 2) {
      // Binary: libsvm's single decision value.
      addSecond = 2;
      lab = (!proba && allPositive && maxWeight >= 0.5f) ? 1 : best;
    }
    // Scores written, as ONNX's reference write_scores.
    int64_t n = (int64_t)scores.size();
    std::vector<float> out;
    if (n >= 2) {
      out = scores;
      postTransform(m->post, out.data(), n);
    } else if (n == 1) {
      float s = scores[0];
      if (m->post == Post::Probit) out = {1.41421356f * erfInv(2 * s - 1)};
      else if (addSecond == 2) {
        out = {-s, s};
        if (m->post != Post::None) postTransform(m->post, out.data(), 2);
      } else out = {s};
    }
    rows.push_back(std::move(out));
    label.push_back(lab);
  }
  int64_t cols = rows.empty() ? (svc && !proba ? pairs : classes) : (int64_t)rows[0].size();
  Arr z = Arr::make(DataType::Float, {x.n, cols});
  for (int64_t r = 0; r < x.n; ++r)
    std::copy(rows[(size_t)r].begin(), rows[(size_t)r].end(), z.f.begin() + r * cols);
  // Without class labels, labelsAndScores gives the class indices as int64.
  return labelsAndScores(label, ints, strs, std::move(z));
}

void registerSVMs(OpRegistrar &r) {
  r["SVMClassifier"].infer(svmClassifier).kernel(kSVMClassifier);
  // One score per example (the regressor has a single target).
  r["SVMRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "", 1); };
  r["SVMRegressor"] = kSVMRegressor;
}

//===--- TreeEnsembleClassifier, TreeEnsembleRegressor ---===//

void treeClassifier(InferCtx &c) {
  int32_t lab = labelElem(c);
  size_t classes = lab == kString ? attrLen(c, "classlabels_strings") : attrLen(c, "classlabels_int64s");
  auto n = batchDim(c, false);
  c.setTensor(0, lab, n ? std::optional<Dims>(Dims{*n}) : std::nullopt);
  c.setTensor(1, kFloat,
              n ? std::optional<Dims>(Dims{*n, classes ? c.c(classes) : nullptr}) : std::nullopt);
}

/// A float list attribute, or its `_as_tensor` double form (read as float).
std::vector<float> floatsOf(const KernelCall &c, llvm::StringRef name) {
  if (const Attribute *a = c.attr((name + "_as_tensor").str());
      a && a->kind() == AttrKind::Tensor && !a->tensors.empty())
    if (auto v = a->tensors[0]->values<float>(); v.ok()) return *v;
  return c.getFloats(name).value_or(std::vector<float>{});
}

// Note [Tree ensembles]
//   The classic form (TreeEnsembleClassifier / Regressor) lists nodes by
//   (tree id, node id) with a mode (BRANCH_LEQ, _LT, _GTE, _GT, _EQ, _NEQ,
//   LEAF), a feature, a threshold (nodes_values, or the double
//   nodes_values_as_tensor) and the node ids of the two branches; a NaN
//   feature goes the true way where nodes_missing_value_tracks_true says
//   so. Each tree's root is its first node. The leaves' weights (class_* /
//   target_*) are summed per class or target (the regressor: SUM, AVERAGE
//   over the trees, MIN or MAX), base_values added after; a regressor
//   target no leaf reached is 0, without its base value (onnxruntime's
//   rule; the spec is silent). A classifier whose weights all go to one
//   class is binary (onnxruntime's rule): its scores are [1 - s, s] without
//   a transform when every weight is positive, else the transform of
//   [-s, s], and its label is the second class when s > 0.5 (every weight
//   positive) or s > 0. TreeEnsemble
//   (ai.onnx.ml 5) holds the same in index form: tree_roots, true/false
//   node or leaf indices, leaf weights and targets, nodes_modes 0..6
//   (LEQ LT GTE GT EQ NEQ MEMBER), the sets of MEMBER nodes in
//   membership_values, one NaN-terminated set per MEMBER node in node
//   order. A walk that does not end (a cycle) or leaves the lists is an
//   error.

struct ClassicTrees {
  std::vector<int64_t> treeIds, nodeIds, feature, trueId, falseId, missing;
  std::vector<std::string> modes;
  std::vector<float> values;
  std::map<std::pair<int64_t, int64_t>, int64_t> index; // (tree, node) -> position
  std::vector<int64_t> roots;                              // first node of each tree
  std::vector<int64_t> rootTree;
};

StatusOr<ClassicTrees> classicTrees(const KernelCall &c) {
  ClassicTrees t;
  t.treeIds = intsOf(c, "nodes_treeids");
  t.nodeIds = intsOf(c, "nodes_nodeids");
  t.feature = intsOf(c, "nodes_featureids");
  t.trueId = intsOf(c, "nodes_truenodeids");
  t.falseId = intsOf(c, "nodes_falsenodeids");
  t.missing = intsOf(c, "nodes_missing_value_tracks_true");
  t.modes = stringsOf(c, "nodes_modes");
  t.values = floatsOf(c, "nodes_values");
  size_t n = t.treeIds.size();
  if (t.nodeIds.size() != n || t.feature.size() != n || t.trueId.size() != n ||
      t.falseId.size() != n || t.modes.size() != n || t.values.size() != n ||
      (!t.missing.empty() && t.missing.size() != n))
    return invalid(absl::StrCat(c.opType.str(), ": the nodes_* attributes differ in length"));
  std::map<int64_t, int64_t> first;
  for (size_t k = 0; k < n; ++k) {
    t.index.emplace(std::make_pair(t.treeIds[k], t.nodeIds[k]), (int64_t)k);
    first.emplace(t.treeIds[k], (int64_t)k);
    static const char *const known[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                        "BRANCH_EQ", "BRANCH_NEQ", "LEAF"};
    if (std::find(std::begin(known), std::end(known), t.modes[k]) == std::end(known))
      return invalid(absl::StrCat(c.opType.str(), ": unknown node mode \"", t.modes[k], "\""));
  }
  for (auto &[tree, pos] : first) t.roots.push_back(pos), t.rootTree.push_back(tree);
  return t;
}

bool branch(llvm::StringRef mode, float x, float th) {
  if (mode == "BRANCH_LEQ") return x <= th;
  if (mode == "BRANCH_LT") return x < th;
  if (mode == "BRANCH_GTE") return x >= th;
  if (mode == "BRANCH_GT") return x > th;
  if (mode == "BRANCH_EQ") return x == th;
  return x != th; // BRANCH_NEQ
}

/// The leaf (position) row `x` reaches in the tree rooted at `root`.
StatusOr<int64_t> walk(const KernelCall &c, const ClassicTrees &t, int64_t root, const float *x,
                       int64_t F) {
  int64_t pos = root;
  for (size_t steps = 0; t.modes[(size_t)pos] != "LEAF"; ++steps) {
    if (steps > t.modes.size())
      return invalid(absl::StrCat(c.opType.str(), ": a tree has a cycle"));
    int64_t f = t.feature[(size_t)pos];
    if (f < 0 || f >= F)
      return invalid(absl::StrCat(c.opType.str(), ": feature ", f, " is outside [0, ", F, ")"));
    float v = x[f];
    bool right = std::isnan(v) ? (!t.missing.empty() && t.missing[(size_t)pos] != 0)
                               : branch(t.modes[(size_t)pos], v, t.values[(size_t)pos]);
    int64_t next = right ? t.trueId[(size_t)pos] : t.falseId[(size_t)pos];
    auto it = t.index.find({t.treeIds[(size_t)pos], next});
    if (it == t.index.end())
      return invalid(absl::StrCat(c.opType.str(), ": node ", next, " of tree ",
                                  t.treeIds[(size_t)pos], " does not exist"));
    pos = it->second;
  }
  return pos;
}

/// The (position of the leaf) -> weights of one leaf, from the
/// class_* / target_* lists named by `prefix`.
struct LeafWeights {
  std::map<int64_t, std::vector<std::pair<int64_t, float>>> byLeaf; // position -> (id, w)
};

StatusOr<LeafWeights> leafWeights(const KernelCall &c, const ClassicTrees &t, llvm::StringRef prefix,
                                  int64_t outputs) {
  std::string p = prefix.str();
  auto trees = intsOf(c, p + "_treeids"), nodes = intsOf(c, p + "_nodeids"),
       ids = intsOf(c, p + "_ids");
  auto w = floatsOf(c, p + "_weights");
  if (nodes.size() != trees.size() || ids.size() != trees.size() || w.size() != trees.size())
    return invalid(absl::StrCat(c.opType.str(), ": the ", p, "_* attributes differ in length"));
  LeafWeights lw;
  for (size_t k = 0; k < trees.size(); ++k) {
    auto it = t.index.find({trees[k], nodes[k]});
    if (it == t.index.end())
      return invalid(absl::StrCat(c.opType.str(), ": ", p, " weight ", k, " names no node"));
    if (ids[k] < 0 || ids[k] >= outputs)
      return invalid(absl::StrCat(c.opType.str(), ": ", p, "_ids entry ", ids[k], " is outside [0, ", outputs, ")"));
    lw.byLeaf[it->second].push_back({ids[k], w[k]});
  }
  return lw;
}

StatusOr<std::vector<Tensor>> kTreeEnsembleRegressor(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  auto post = postOf(c);
  if (!post.ok()) return post.status();
  auto t = classicTrees(c);
  if (!t.ok()) return t.status();
  int64_t T = c.getInt("n_targets", 0);
  if (T < 1) return invalid("TreeEnsembleRegressor: n_targets must be positive");
  auto lw = leafWeights(c, *t, "target", T);
  if (!lw.ok()) return lw.status();
  std::string agg = c.getString("aggregate_function", "SUM");
  if (agg != "SUM" && agg != "AVERAGE" && agg != "MIN" && agg != "MAX")
    return invalid(absl::StrCat("TreeEnsembleRegressor: unknown aggregate_function \"", agg, "\""));
  auto base = floatsOf(c, "base_values");
  if (!base.empty() && (int64_t)base.size() != T)
    return invalid("TreeEnsembleRegressor: base_values must have one value per target");
  if (Status s = checkOutputSize(c, DataType::Float, {x->n, T}); !s.ok()) return s;
  Arr y = Arr::make(DataType::Float, {x->n, T});
  float init = agg == "MIN" ? std::numeric_limits<float>::max()
               : agg == "MAX" ? std::numeric_limits<float>::lowest() : 0.f;
  std::vector<char> hit((size_t)T);
  for (int64_t r = 0; r < x->n; ++r) {
    float *out = y.f.data() + r * T;
    std::fill(out, out + T, init);
    std::fill(hit.begin(), hit.end(), 0);
    for (int64_t root : t->roots) {
      auto leaf = walk(c, *t, root, x->v.data() + r * x->f, x->f);
      if (!leaf.ok()) return leaf.status();
      auto it = lw->byLeaf.find(*leaf);
      if (it == lw->byLeaf.end()) continue;
      for (auto [id, w] : it->second) {
        out[id] = agg == "MIN" ? std::min(out[id], w) : agg == "MAX" ? std::max(out[id], w) : out[id] + w;
        hit[(size_t)id] = 1;
      }
    }
    for (int64_t k = 0; k < T; ++k) {
      if (!hit[(size_t)k]) { out[k] = 0; continue; }
      if (agg == "AVERAGE") out[k] /= (float)t->roots.size();
      if (!base.empty()) out[k] += base[(size_t)k];
    }
    postTransform(*post, out, T);
  }
  return one(y);
}

StatusOr<std::vector<Tensor>> kTreeEnsembleClassifier(const KernelCall &c) {
  auto x = matrixOf(c, 0);
  if (!x.ok()) return x.status();
  auto post = postOf(c);
  if (!post.ok()) return post.status();
  auto t = classicTrees(c);
  if (!t.ok()) return t.status();
  auto ints = intsOf(c, "classlabels_int64s");
  auto strs = stringsOf(c, "classlabels_strings");
  int64_t classes = (int64_t)std::max(ints.size(), strs.size());
  if (classes == 0) return invalid("TreeEnsembleClassifier: no class labels");
  auto lw = leafWeights(c, *t, "class", classes);
  if (!lw.ok()) return lw.status();
  auto ids = intsOf(c, "class_ids");
  auto base = floatsOf(c, "base_values");
  if (!base.empty() && (int64_t)base.size() != classes)
    return invalid("TreeEnsembleClassifier: base_values must have one value per class");
  // Binary: every leaf weight for the same class (Note [ML kernels]).
  bool binary = !ids.empty() && std::all_of(ids.begin(), ids.end(), [&](int64_t v) { return v == ids[0]; });
  auto cw = floatsOf(c, "class_weights");
  bool allPositive = std::all_of(cw.begin(), cw.end(), [](float w) { return w >= 0; });
  int64_t cols = binary && classes == 1 ? 2 : classes;
  if (binary && classes == 1 && (!strs.empty() || ints[0] != 1))
    return unsupported("TreeEnsembleClassifier: a single class label other than 1");
  if (Status s = checkOutputSize(c, DataType::Float, {x->n, cols}); !s.ok()) return s;
  Arr z = Arr::make(DataType::Float, {x->n, cols});
  std::vector<int64_t> label;
  std::vector<float> acc((size_t)classes);
  for (int64_t r = 0; r < x->n; ++r) {
    for (int64_t k = 0; k < classes; ++k) acc[(size_t)k] = base.empty() ? 0.f : base[(size_t)k];
    for (int64_t root : t->roots) {
      auto leaf = walk(c, *t, root, x->v.data() + r * x->f, x->f);
      if (!leaf.ok()) return leaf.status();
      auto it = lw->byLeaf.find(*leaf);
      if (it == lw->byLeaf.end()) continue;
      for (auto [id, w] : it->second) acc[(size_t)id] += w;
    }
    float *out = z.f.data() + r * cols;
    std::copy(acc.begin(), acc.end(), out);
    if (binary) {
      // Note [Tree ensembles]: the binary scores and label.
      float s = acc[0];
      out[1] = s;
      bool plain = *post == Post::None || *post == Post::Probit;
      out[0] = plain && allPositive ? 1.f - s : -s;
      postTransform(*post, out, cols);
      label.push_back(s > (allPositive ? 0.5f : 0.f) ? 1 : 0);
      continue;
    }
    postTransform(*post, out, cols);
    int64_t best = std::max_element(out, out + cols) - out;
    label.push_back(best);
  }
  // Binary with one class label: the label is 1 where class 1 wins, else 0,
  // which are the indices themselves (int64, not looked up in classlabels).
  if (binary && classes == 1) return labelsAndScores(label, {}, {}, std::move(z));
  return labelsAndScores(label, ints, strs, std::move(z));
}

void registerTreeEnsembles(OpRegistrar &r) {
  r["TreeEnsembleClassifier"].infer(treeClassifier).kernel(kTreeEnsembleClassifier);
  r["TreeEnsembleRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "n_targets", 0); };
  r["TreeEnsembleRegressor"] = kTreeEnsembleRegressor;
}

//===--- TreeEnsemble ---===//

// Note [Tree ensembles] (above) describes this index form too.

StatusOr<std::vector<Tensor>> kTreeEnsemble(const KernelCall &c) {
  auto xa = inputArr(c, 0);
  if (!xa.ok()) return xa.status();
  if (xa->kind() != CK::F32 && xa->kind() != CK::F64)
    return invalid("TreeEnsemble: X must be float, double or float16");
  if (xa->rank() != 2 && xa->rank() != 1) return invalid("TreeEnsemble: X must be of shape [N, F] or [F]");
  int64_t N = xa->rank() == 2 ? xa->dims[0] : 1, F = xa->dims.back();
  std::vector<double> xv;
  if (xa->kind() == CK::F64) xv = xa->d;
  else xv.assign(xa->f.begin(), xa->f.end());
  auto feat = intsOf(c, "nodes_featureids"), tn = intsOf(c, "nodes_truenodeids"),
       fn = intsOf(c, "nodes_falsenodeids"), tl = intsOf(c, "nodes_trueleafs"),
       fl = intsOf(c, "nodes_falseleafs"), targets = intsOf(c, "leaf_targetids"),
       roots = intsOf(c, "tree_roots"), missing = intsOf(c, "nodes_missing_value_tracks_true");
  const Tensor *splitsT = tensorAttr(c, "nodes_splits"), *modesT = tensorAttr(c, "nodes_modes"),
               *weightsT = tensorAttr(c, "leaf_weights"), *memberT = tensorAttr(c, "membership_values");
  if (!splitsT || !modesT || !weightsT)
    return invalid("TreeEnsemble: needs nodes_splits, nodes_modes and leaf_weights");
  auto splits = splitsT->values<double>();
  auto modes = modesT->values<int64_t>();
  auto weights = weightsT->values<float>();
  if (!splits.ok() || !modes.ok() || !weights.ok())
    return invalid("TreeEnsemble: unreadable nodes_splits, nodes_modes or leaf_weights");
  size_t n = feat.size();
  if (tn.size() != n || fn.size() != n || tl.size() != n || fl.size() != n ||
      splits->size() != n || modes->size() != n || (!missing.empty() && missing.size() != n))
    return invalid("TreeEnsemble: the nodes_* attributes differ in length");
  if (targets.size() != weights->size())
    return invalid("TreeEnsemble: leaf_targetids and leaf_weights differ in length");
  int64_t T = c.getInt("n_targets", 0);
  if (T < 1) return invalid("TreeEnsemble: n_targets must be positive");
  for (int64_t id : targets)
    if (id < 0 || id >= T) return invalid(absl::StrCat("TreeEnsemble: leaf target ", id, " is outside [0, ", T, ")"));
  int64_t agg = c.getInt("aggregate_function", 1), postI = c.getInt("post_transform", 0);
  if (agg < 0 || agg > 3) return invalid("TreeEnsemble: aggregate_function must be 0..3");
  if (postI < 0 || postI > 4) return invalid("TreeEnsemble: post_transform must be 0..4");
  static const Post posts[] = {Post::None, Post::Softmax, Post::Logistic, Post::SoftmaxZero, Post::Probit};
  Post post = posts[postI];
  // The sets of the MEMBER nodes, in node order.
  std::vector<std::vector<double>> sets(n);
  std::vector<double> members;
  if (memberT) {
    auto m = memberT->values<double>();
    if (!m.ok()) return invalid("TreeEnsemble: unreadable membership_values");
    members = *m;
  }
  size_t mpos = 0;
  for (size_t k = 0; k < n; ++k) {
    if ((*modes)[k] < 0 || (*modes)[k] > 6)
      return invalid(absl::StrCat("TreeEnsemble: node mode ", (*modes)[k], " is not 0..6"));
    if ((*modes)[k] != 6) continue;
    if (mpos >= members.size())
      return invalid("TreeEnsemble: membership_values has no set for a MEMBER node");
    while (mpos < members.size() && !std::isnan(members[mpos])) sets[k].push_back(members[mpos++]);
    ++mpos; // the NaN
  }
  std::vector<int64_t> od = {N, T};
  if (Status s = checkOutputSize(c, xa->dt, od); !s.ok()) return s;
  Arr y = Arr::make(xa->dt, od);
  std::vector<double> acc((size_t)T);
  std::vector<char> hit((size_t)T);
  double init = agg == 2 ? std::numeric_limits<double>::max()
                : agg == 3 ? std::numeric_limits<double>::lowest() : 0.0;
  for (int64_t r = 0; r < N; ++r) {
    const double *row = xv.data() + r * F;
    std::fill(acc.begin(), acc.end(), init);
    std::fill(hit.begin(), hit.end(), 0);
    for (int64_t root : roots) {
      int64_t pos = root;
      bool leaf = false;
      // A root whose two branches are the same leaf is a leaf tree.
      if (root < 0 || root >= (int64_t)n) return invalid("TreeEnsemble: a tree root outside the nodes");
      if (tl[(size_t)root] && fl[(size_t)root] && tn[(size_t)root] == fn[(size_t)root]) {
        leaf = true;
        pos = tn[(size_t)root];
      }
      for (size_t steps = 0; !leaf; ++steps) {
        if (steps > n) return invalid("TreeEnsemble: a tree has a cycle");
        size_t p = (size_t)pos;
        int64_t f = feat[p];
        if (f < 0 || f >= F) return invalid(absl::StrCat("TreeEnsemble: feature ", f, " is outside [0, ", F, ")"));
        double v = row[f], th = (*splits)[p];
        bool right;
        if (std::isnan(v)) right = !missing.empty() && missing[p] != 0;
        else switch ((*modes)[p]) {
          case 0: right = v <= th; break;
          case 1: right = v < th; break;
          case 2: right = v >= th; break;
          case 3: right = v > th; break;
          case 4: right = v == th; break;
          case 5: right = v != th; break;
          default: right = std::find(sets[p].begin(), sets[p].end(), v) != sets[p].end(); break;
          }
        leaf = right ? tl[p] != 0 : fl[p] != 0;
        pos = right ? tn[p] : fn[p];
        if (!leaf && (pos < 0 || pos >= (int64_t)n)) return invalid("TreeEnsemble: a node index outside the nodes");
      }
      if (pos < 0 || pos >= (int64_t)targets.size()) return invalid("TreeEnsemble: a leaf index outside the leaves");
      double w = (*weights)[(size_t)pos];
      double &a = acc[(size_t)targets[(size_t)pos]];
      a = agg == 2 ? std::min(a, w) : agg == 3 ? std::max(a, w) : a + w;
      hit[(size_t)targets[(size_t)pos]] = 1;
    }
    for (int64_t k = 0; k < T; ++k)
      if (!hit[(size_t)k]) acc[(size_t)k] = 0;
    if (agg == 0)
      for (double &a : acc) a /= (double)roots.size();
    postTransform(post, acc.data(), T);
    for (int64_t k = 0; k < T; ++k) {
      if (y.kind() == CK::F64) y.d[(size_t)(r * T + k)] = acc[(size_t)k];
      else y.f[(size_t)(r * T + k)] = (float)acc[(size_t)k];
    }
  }
  return one(y);
}

void registerTreeEnsemble(OpRegistrar &r) {
  r["TreeEnsemble"] = [](InferCtx &c) { regressor(c, c.inElem(0), "n_targets", 0); };
  r["TreeEnsemble"] = kTreeEnsemble;
}

//===--- ZipMap ---===//

StatusOr<std::vector<Tensor>> kZipMap(const KernelCall &) {
  // The evaluator runs ZipMap on its map values (Note [ZipMap and CastMap],
  // lib/Eval/Sequences.cpp); a kernel's results are tensors, so folding
  // leaves the node.
  return unsupported("ZipMap: its result is a sequence of maps, which no kernel returns");
}

void registerZipMap(OpRegistrar &r) {
  r["ZipMap"] = [](InferCtx &c) {
    DataType key;
    if (attrLen(c, "classlabels_strings")) key = DataType::String;
    else if (attrLen(c, "classlabels_int64s")) key = DataType::Int64;
    else return;
    const Type *val = c.ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{});
    c.setOutType(0, c.ctx.getSequenceType(c.ctx.getMapType(key, val)));
  };
  r["ZipMap"] = kZipMap;
}

} // namespace

void registerMLOps(OpRegistrar &r) {
  for (auto *reg : {registerArrayFeatureExtractor, registerBinarizer, registerCastMap,
                    registerCategoryMapper, registerDictVectorizer, registerFeatureVectorizer,
                    registerImputer, registerLabelEncoder, registerLinearClassifier,
                    registerLinearRegressor, registerNormalizer, registerOneHotEncoder,
                    registerScaler, registerSVMs, registerTreeEnsembles, registerTreeEnsemble,
                    registerZipMap})
    reg(r);
}

} // namespace onnxir
