//===- Misc.cpp - Losses, strings, random generators, ImageDecoder --------===//
//
// Misc, the ops of no other family: the losses NegativeLogLikelihoodLoss
// SoftmaxCrossEntropyLoss, the string ops StringNormalizer StringSplit
// StringConcat RegexFullMatch TfIdfVectorizer, the random generators
// RandomNormal RandomUniform RandomNormalLike RandomUniformLike Bernoulli
// Multinomial, and ImageDecoder.
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

/// The loss result: the target's shape without reduction, else a scalar.
void lossRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::string red = c.getString("reduction", "mean");
  if (red == "none") c.setTensor(0, el, c.inShape(1));
  else c.setTensor(0, el, Dims{});
  if (c.node.opType() == "SoftmaxCrossEntropyLoss" && c.hasOutput(1))
    c.setTensor(1, el, c.inShape(0));
}

/// StringNormalizer: [C] or [1,C]; stop words may remove elements.
void stringNormalizerRule(InferCtx &c) {
  auto x = c.inShape(0);
  bool stops = false;
  if (const Attribute *a = c.attr("stopwords")) stops = !a->strings.empty();
  if (!x) return c.setTensor(0, kString, std::nullopt);
  if (!stops) return c.setTensor(0, kString, x);
  if (x->size() == 1) return c.setTensor(0, kString, Dims{nullptr});
  if (x->size() == 2) return c.setTensor(0, kString, Dims{(*x)[0], nullptr});
}

void stringSplitRule(InferCtx &c) {
  auto x = c.inShape(0);
  std::optional<Dims> y;
  if (x) {
    y = *x;
    y->push_back(nullptr);
  }
  c.setTensor(0, kString, y);
  c.setTensor(1, kInt64, x);
}

void multinomialRule(InferCtx &c) {
  auto x = c.inShape(0);
  int32_t el = (int32_t)c.getInt("dtype", static_cast<int32_t>(DataType::Int32));
  c.setTensor(0, el,
              Dims{x && x->size() == 2 ? (*x)[0] : nullptr, c.c(c.getInt("sample_size", 1))});
}

} // namespace
} // namespace infer

void registerMiscOps(OpRegistrar &r) {
  using namespace infer;
  for (const char *op : {"RandomNormal", "RandomUniform"})
    r[op] = [](InferCtx &c) {
      auto sh = c.getInts("shape");
      if (!sh) return;
      Dims d;
      for (int64_t x : *sh) d.push_back(c.c(x));
      c.setTensor(0, (int32_t)c.getInt("dtype", 1), d);
    };
  for (const char *op : {"RandomNormalLike", "RandomUniformLike", "Bernoulli"})
    r[op] = [](InferCtx &c) {
      int64_t dt = c.getInt("dtype", 0);
      c.setTensor(0, dt ? (int32_t)dt : c.inElem(0), c.inShape(0));
    };
  r["NegativeLogLikelihoodLoss"] = lossRule;
  r["SoftmaxCrossEntropyLoss"] = lossRule;
  r["TfIdfVectorizer"] = [](InferCtx &c) {
    auto idx = c.getInts("ngram_indexes");
    auto in = c.inShape(0);
    if (!idx || idx->empty() || !in) return;
    int64_t mx = *std::max_element(idx->begin(), idx->end());
    if (mx < 0 || mx >= ((int64_t)1 << 40)) return;
    Dims o;
    if (in->size() == 2) o.push_back((*in)[0]);
    else if (in->size() != 1) return;
    o.push_back(c.c(mx + 1));
    c.setTensor(0, static_cast<int32_t>(DataType::Float), o);
  };
  r["StringNormalizer"] = stringNormalizerRule;
  r["StringSplit"] = stringSplitRule;
  r["StringConcat"] = [](InferCtx &c) {
    auto a = c.inShape(0), b = c.inShape(1);
    c.setTensor(0, kString, a && b ? broadcast(c.ctx, *a, *b) : std::nullopt);
  };
  r["RegexFullMatch"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["Multinomial"] = multinomialRule;
  r["ImageDecoder"] = [](InferCtx &c) {
    std::string f = c.getString("pixel_format", "RGB");
    const DimExpr *ch = f == "Grayscale" ? c.c(1) : (f == "RGB" || f == "BGR") ? c.c(3) : nullptr;
    c.setTensor(0, static_cast<int32_t>(DataType::Uint8), Dims{nullptr, nullptr, ch});
  };
}

} // namespace onnxir
