//===- ML.cpp - ai.onnx.ml ------------------------------------------------===//
//
// ML (domain ai.onnx.ml): ArrayFeatureExtractor Binarizer CastMap CategoryMapper
// DictVectorizer FeatureVectorizer Imputer LabelEncoder LinearClassifier
// LinearRegressor Normalizer OneHotEncoder Scaler SVMClassifier SVMRegressor
// TreeEnsembleClassifier TreeEnsembleRegressor TreeEnsemble ZipMap.
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include <algorithm>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Type and shape rules
//===----------------------------------------------------------------------===//

namespace infer {
namespace {

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

void svmClassifier(InferCtx &c) {
  auto n = batchDim(c, false);
  c.setTensor(0, labelElem(c), n ? std::optional<Dims>(Dims{*n}) : std::nullopt);
  c.setTensor(1, kFloat, n ? std::optional<Dims>(Dims{*n, nullptr}) : std::nullopt);
}

void treeClassifier(InferCtx &c) {
  int32_t lab = labelElem(c);
  size_t classes = lab == kString ? attrLen(c, "classlabels_strings") : attrLen(c, "classlabels_int64s");
  auto n = batchDim(c, false);
  c.setTensor(0, lab, n ? std::optional<Dims>(Dims{*n}) : std::nullopt);
  c.setTensor(1, kFloat,
              n ? std::optional<Dims>(Dims{*n, classes ? c.c(classes) : nullptr}) : std::nullopt);
}

/// [N, targets] results of the regressors; `targets` from an int attribute.
void regressor(InferCtx &c, int32_t el, llvm::StringRef targetsAttr, int64_t dflt) {
  auto n = batchDim(c, false);
  const Attribute *a = c.attr(targetsAttr);
  int64_t t = a && a->kind() == AttrKind::Int ? a->i : dflt;
  c.setTensor(0, el, n ? std::optional<Dims>(Dims{*n, t > 0 ? c.c(t) : nullptr}) : std::nullopt);
}

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

} // namespace
} // namespace infer

void registerMLOps(OpRegistrar &r) {
  using namespace infer;
  r["ArrayFeatureExtractor"] = arrayFeatureExtractor;
  for (const char *op : {"Binarizer", "Imputer"})
    r[op] = [](InferCtx &c) { sameShape(c, c.inElem(0)); };
  for (const char *op : {"Normalizer", "Scaler"})
    r[op] = [](InferCtx &c) { sameShape(c, kFloat); };
  r["CastMap"] = [](InferCtx &c) {
    std::string to = c.getString("cast_to", "TO_FLOAT");
    int32_t el = to == "TO_FLOAT" ? kFloat : to == "TO_INT64" ? kInt64 : to == "TO_STRING" ? kString : -1;
    c.setTensor(0, el, std::nullopt);
  };
  r["CategoryMapper"] = [](InferCtx &c) {
    int32_t in = c.inElem(0);
    sameShape(c, in == kString ? kInt64 : in == kInt64 ? kString : -1);
  };
  r["DictVectorizer"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (!t || t->kind() != Type::Kind::Map) return;
    const Type *v = t->elementType();
    if (v && v->isTensor() && v->hasElemType() && v->elemTypeRaw())
      c.setTensor(0, v->elemTypeRaw(), std::nullopt);
  };
  r["FeatureVectorizer"] = featureVectorizer;
  r["LabelEncoder"] = labelEncoder;
  r["LinearClassifier"] = linearClassifier;
  r["LinearRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "targets", 1); };
  r["OneHotEncoder"] = [](InferCtx &c) {
    size_t cats = std::max(attrLen(c, "cats_int64s"), attrLen(c, "cats_strings"));
    auto x = c.inShape(0);
    if (x) x->push_back(cats ? c.c(cats) : nullptr);
    c.setTensor(0, kFloat, x);
  };
  r["SVMClassifier"] = svmClassifier;
  // One score per example (the regressor has a single target).
  r["SVMRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "", 1); };
  r["TreeEnsembleClassifier"] = treeClassifier;
  r["TreeEnsembleRegressor"] = [](InferCtx &c) { regressor(c, kFloat, "n_targets", 0); };
  r["TreeEnsemble"] = [](InferCtx &c) { regressor(c, c.inElem(0), "n_targets", 0); };
  r["ZipMap"] = [](InferCtx &c) {
    DataType key;
    if (attrLen(c, "classlabels_strings")) key = DataType::String;
    else if (attrLen(c, "classlabels_int64s")) key = DataType::Int64;
    else return;
    const Type *val = c.ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{});
    c.setOutType(0, c.ctx.getSequenceType(c.ctx.getMapType(key, val)));
  };
}

} // namespace onnxir
