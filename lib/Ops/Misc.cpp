//===- Misc.cpp - Losses, strings, random generators, ImageDecoder --------===//
//
// Misc, the ops of no other family: the losses NegativeLogLikelihoodLoss
// SoftmaxCrossEntropyLoss, the string ops StringNormalizer StringSplit
// StringConcat RegexFullMatch TfIdfVectorizer, the random generators
// RandomNormal RandomUniform RandomNormalLike RandomUniformLike Bernoulli
// Multinomial, and ImageDecoder. After the helpers shared by several ops,
// one section per op (the two losses share one, and so do the four
// generators): its type and shape rule, its kernel and its registration
// (registerMiscOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// RandomNormalLike, RandomUniformLike and Bernoulli: the input's shape,
/// of `dtype` or else the input's type.
void randomLikeRule(InferCtx &c) {
  int64_t dt = c.getInt("dtype", 0);
  c.setTensor(0, dt ? (int32_t)dt : c.inElem(0), c.inShape(0));
}

/// The float element types a loss, a random generator or a probability
/// input may have.
bool isFloatType(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 ||
         t == DataType::BFloat16;
}

// Note [Random kernels]
//   The random ops never fold (their schemas are nondeterministic); the
//   evaluator runs them with the node's `seed`, or else the run's seed
//   (KernelCall::seed, EvalOptions::seed in Evaluator.h). The generator is
//   std::mt19937_64 seeded with the bits of the seed as a double (distinct
//   seeds, distinct streams; no seed at all is seed 0); a run's seed that
//   a float cannot hold exactly (over 2^24, where two seeds would round to
//   one float) seeds it through a seed_seq of its two halves instead, so
//   every 64-bit seed is its own stream. A seed gives the same values on every
//   platform: uniforms are the top 53 bits of a draw scaled to [0, 1),
//   normals come from Box-Muller (one pair of uniforms per value), not from
//   the standard library's distributions, whose algorithms vary.

class Rng {
public:
  explicit Rng(const KernelCall &c) {
    double seed = 0.0;
    if (c.hasAttr("seed")) {
      seed = (double)c.getFloat("seed");
    } else if (c.seed) {
      // The seed a node attribute of the same value would give, wherever
      // a float holds the value (runs keep their streams across versions).
      // (Seeds from 2^64 - 2^39 up round to the float 2^64, which no
      // uint64_t holds: compared before converting back.)
      float f = (float)*c.seed;
      if (f < 0x1p64f && (uint64_t)f == *c.seed) {
        seed = (double)f;
      } else {
        std::seed_seq seq{(uint32_t)*c.seed, (uint32_t)(*c.seed >> 32)};
        gen_.seed(seq);
        return;
      }
    }
    uint64_t bits;
    std::memcpy(&bits, &seed, sizeof bits);
    gen_.seed(bits);
  }
  /// Uniform in [0, 1).
  double uniform() { return (double)(gen_() >> 11) * 0x1.0p-53; }
  /// Standard normal.
  double normal() {
    double u1 = 1.0 - uniform(), u2 = uniform(); // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

private:
  std::mt19937_64 gen_;
};

//===--- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---===//

/// The loss result: the target's shape without reduction, else a scalar.
void lossRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::string red = c.getString("reduction", "mean");
  if (red == "none") c.setTensor(0, el, c.inShape(1));
  else c.setTensor(0, el, Dims{});
  if (c.node.opType() == "SoftmaxCrossEntropyLoss" && c.hasOutput(1))
    c.setTensor(1, el, c.inShape(0));
}

// Note [Loss kernels]
//   NegativeLogLikelihoodLoss reads input [N, C, d1..dk] as log
//   probabilities and target [N, d1..dk] as class indices in [0, C); each
//   element's loss is -input[n, target, d...] times weight[target] (1
//   without weights), 0 where target equals ignore_index (whose weight is
//   then 0 too). "none" gives the losses, "sum" their sum, "mean" their sum
//   over the sum of the weights taken (the count of elements not ignored,
//   without weights): no elements, or all ignored, is 0/0 = NaN, as ONNX's
//   reference. A target outside [0, C) that is not ignore_index is an
//   error. SoftmaxCrossEntropyLoss is the same loss on LogSoftmax(input,
//   axis 1), which is its optional second result.

/// The loss of `logp` (dims `xd`, the input's) against operand 1 and the
/// optional weights, operand 2, as `dt`.
template <typename T>
StatusOr<Arr> nllLoss(const KernelCall &c, const std::vector<T> &logp,
                      llvm::ArrayRef<int64_t> xd, DataType dt) {
  llvm::StringRef op = c.opType;
  if (xd.size() < 2) return invalid(absl::StrCat(op.str(), ": input must have rank >= 2"));
  auto target = inputArr(c, 1);
  if (!target.ok()) return target.status();
  if (target->dt != DataType::Int32 && target->dt != DataType::Int64)
    return invalid(absl::StrCat(op.str(), ": target must be int32 or int64"));
  std::vector<int64_t> td = {xd[0]};
  td.insert(td.end(), xd.begin() + 2, xd.end());
  if (target->dims != td)
    return invalid(absl::StrCat(op.str(), ": target must have the input's shape without axis 1"));
  int64_t N = xd[0], C = xd[1], D = 1;
  for (size_t k = 2; k < xd.size(); ++k) D *= xd[k];
  std::optional<Arr> weight;
  if (c.input(2)) {
    auto w = inputArr(c, 2);
    if (!w.ok()) return w.status();
    if (w->dt != dt || w->rank() != 1 || w->dims[0] != C)
      return invalid(absl::StrCat(op.str(), ": weight must be a [C] tensor of the input's type"));
    weight = std::move(*w);
  }
  std::string red = c.getString("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean")
    return invalid(absl::StrCat(op.str(), ": reduction \"", red, "\" is not none, sum or mean"));
  std::optional<int64_t> ignore;
  if (c.hasAttr("ignore_index")) ignore = c.getInt("ignore_index");
  if (red == "none") {
    if (Status s = checkOutputSize(c, dt, td); !s.ok()) return s;
  }
  Arr loss = Arr::make(dt, red == "none" ? td : std::vector<int64_t>{});
  std::vector<T> each(red == "none" ? (size_t)(N * D) : 0);
  T sum = 0, wsum = 0;
  const std::vector<int64_t> &tv = target->i;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      int64_t t = tv[(size_t)(n * D + d)];
      T l = 0, w = 0;
      if (!ignore || t != *ignore) {
        if (t < 0 || t >= C)
          return invalid(absl::StrCat(op.str(), ": target value ", t, " is outside [0, ", C, ")"));
        w = weight ? weight->template vec<T>()[(size_t)t] : T(1);
        l = -logp[(size_t)((n * C + t) * D + d)] * w;
      }
      if (red == "none") each[(size_t)(n * D + d)] = l;
      sum += l;
      wsum += w;
    }
  auto &out = loss.template vec<T>();
  if (red == "none") out = std::move(each);
  else out[0] = red == "sum" ? sum : sum / wsum;
  return loss;
}

/// Runs `fn(T{})` for the float compute kind of `dt` (F32 or F64).
template <typename Fn> StatusOr<std::vector<Tensor>> visitFloat(DataType dt, Fn &&fn) {
  if (computeKind(dt) == CK::F64) return fn(double{});
  return fn(float{});
}

StatusOr<std::vector<Tensor>> kNegativeLogLikelihoodLoss(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (!isFloatType(x->dt)) return invalid("NegativeLogLikelihoodLoss: input must be a float tensor");
  return visitFloat(x->dt, [&](auto tag) -> StatusOr<std::vector<Tensor>> {
    using T = decltype(tag);
    auto l = nllLoss<T>(c, x->template vec<T>(), x->dims, x->dt);
    if (!l.ok()) return l.status();
    return one(*l);
  });
}

StatusOr<std::vector<Tensor>> kSoftmaxCrossEntropyLoss(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (!isFloatType(x->dt)) return invalid("SoftmaxCrossEntropyLoss: scores must be a float tensor");
  if (x->rank() < 2) return invalid("SoftmaxCrossEntropyLoss: scores must have rank >= 2");
  return visitFloat(x->dt, [&](auto tag) -> StatusOr<std::vector<Tensor>> {
    using T = decltype(tag);
    // LogSoftmax over axis 1, in place.
    auto &v = x->template vec<T>();
    int64_t N = x->dims[0], C = x->dims[1], D = 1;
    for (int64_t k = 2; k < x->rank(); ++k) D *= x->dims[k];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        T *p = v.data() + n * C * D + d;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < C; ++j) mx = std::max(mx, p[j * D]);
        T s = 0;
        for (int64_t j = 0; j < C; ++j) s += std::exp(p[j * D] - mx);
        T ls = std::log(s);
        for (int64_t j = 0; j < C; ++j) p[j * D] = p[j * D] - mx - ls;
      }
    auto l = nllLoss<T>(c, v, x->dims, x->dt);
    if (!l.ok()) return l.status();
    std::vector<Tensor> r;
    r.push_back(toTensor(*l));
    if (c.numOutputs >= 2) r.push_back(toTensor(*x));
    return r;
  });
}

/// Note [Validity checks]: input [N, C, d1..dk] (rank 2 or more), target
/// [N, d1..dk], weights [C]: the declared ranks and known dims must agree.
std::string lossValidity(const NodeContext &c) {
  auto x = declaredDims(c.node, 0), t = declaredDims(c.node, 1), w = declaredDims(c.node, 2);
  auto dims = [](const std::vector<int64_t> &d) {
    return absl::StrCat("[", absl::StrJoin(d, ",", [](std::string *o, int64_t v) {
                          absl::StrAppend(o, v < 0 ? std::string("?") : std::to_string(v));
                        }), "]");
  };
  if (x && x->size() < 2)
    return absl::StrCat("input #0 has shape ", dims(*x), "; it needs rank 2 or more ([N, C, ...])");
  if (w && w->size() != 1)
    return absl::StrCat("input #2 (the weights) has shape ", dims(*w), "; it needs rank 1 ([C])");
  if (x && w && (*x)[1] >= 0 && (*w)[0] >= 0 && (*x)[1] != (*w)[0])
    return absl::StrCat("input #2 (the weights) has shape ", dims(*w), ", input #0 has ",
                        (*x)[1], " classes (shape ", dims(*x), ")");
  if (!x || !t) return "";
  std::string why = absl::StrCat("input #1 (the target) has shape ", dims(*t), ", input #0 ",
                                 dims(*x), " needs [N, d1..dk] = [", (*x)[0] < 0 ? std::string("?") : std::to_string((*x)[0]));
  for (size_t i = 2; i < x->size(); ++i)
    absl::StrAppend(&why, ",", (*x)[i] < 0 ? std::string("?") : std::to_string((*x)[i]));
  why += "]";
  if (t->size() + 1 != x->size()) return why;
  for (size_t i = 0; i < t->size(); ++i) {
    int64_t a = (*t)[i], b = (*x)[i == 0 ? 0 : i + 1];
    if (a >= 0 && b >= 0 && a != b) return why;
  }
  return "";
}

void registerLosses(OpRegistrar &r) {
  r["NegativeLogLikelihoodLoss"].infer(lossRule).kernel(kNegativeLogLikelihoodLoss).validate(lossValidity);
  r["SoftmaxCrossEntropyLoss"].infer(lossRule).kernel(kSoftmaxCrossEntropyLoss).validate(lossValidity);
}

//===--- StringNormalizer ---===//

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

// Note [StringNormalizer locales]
//   Case is changed and compared with ASCII rules: every locale but the
//   Turkish and Azeri ones (dotted and dotless i) agrees with them on ASCII
//   text. So the kernel accepts no locale, "C", "POSIX" and any locale not
//   named tr or az (en_US, de_DE.UTF-8, ...), and refuses (Unimplemented)
//   tr/az and any string with a byte outside ASCII when case matters (a
//   case change, or stop words compared without case), rather than leave
//   such letters unchanged.

bool isAscii(llvm::StringRef s) {
  for (char ch : s)
    if ((unsigned char)ch >= 0x80) return false;
  return true;
}

std::string asciiCase(llvm::StringRef s, bool upper) {
  std::string r = s.str();
  for (char &ch : r) {
    if (upper && ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
    else if (!upper && ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
  }
  return r;
}

StatusOr<std::vector<Tensor>> kStringNormalizer(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->dt != DataType::String) return invalid("StringNormalizer: X must be a string tensor");
  bool twoD = x->rank() == 2;
  if (!(x->rank() == 1 || (twoD && x->dims[0] == 1)))
    return invalid("StringNormalizer: X must be of shape [C] or [1, C]");
  std::string action = c.getString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return invalid(absl::StrCat("StringNormalizer: case_change_action \"", action,
                                "\" is not LOWER, UPPER or NONE"));
  bool sensitive = c.getInt("is_case_sensitive", 0) != 0;
  std::string locale = c.getString("locale", "");
  llvm::StringRef lang = llvm::StringRef(locale).take_until([](char ch) { return ch == '_' || ch == '.' || ch == '-'; });
  if (lang == "tr" || lang == "az")
    return unsupported(absl::StrCat("StringNormalizer: locale \"", locale,
                                    "\" (only ASCII case rules are supported)"));
  std::vector<std::string> stops = c.getStrings("stopwords").value_or(std::vector<std::string>{});
  bool caseMatters = action != "NONE" || (!sensitive && !stops.empty());
  if (caseMatters) {
    for (const std::string &s : x->s)
      if (!isAscii(s))
        return unsupported("StringNormalizer: case of a string outside ASCII");
    if (!sensitive)
      for (const std::string &s : stops)
        if (!isAscii(s)) return unsupported("StringNormalizer: case of a stop word outside ASCII");
  }
  std::set<std::string> stopSet;
  for (const std::string &s : stops) stopSet.insert(sensitive ? s : asciiCase(s, false));
  std::vector<std::string> kept;
  for (const std::string &s : x->s) {
    if (stopSet.count(sensitive ? s : asciiCase(s, false))) continue;
    kept.push_back(action == "NONE" ? s : asciiCase(s, action == "UPPER"));
  }
  // All dropped: one empty string, [1] or [1, 1].
  if (kept.empty()) kept.push_back("");
  Arr y;
  y.dt = DataType::String;
  y.dims = twoD ? std::vector<int64_t>{1, (int64_t)kept.size()}
                : std::vector<int64_t>{(int64_t)kept.size()};
  y.s = std::move(kept);
  return one(y);
}

void registerStringNormalizer(OpRegistrar &r) {
  r["StringNormalizer"].infer(stringNormalizerRule).kernel(kStringNormalizer);
}

//===--- StringSplit ---===//

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

// Note [StringSplit]
//   As Python's str.split: with a delimiter, every occurrence splits (an
//   empty string is one empty substring, delimiters side by side give empty
//   substrings); without one (or ""), runs of whitespace split and leading
//   and trailing whitespace give nothing (an empty string has no
//   substrings). maxsplit bounds the splits from the left, the rest of the
//   string being the last substring (its trailing whitespace kept). Y is X's shape plus the largest count,
//   shorter rows padded with ""; Z the counts.

bool isSpace(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

std::vector<std::string> splitString(llvm::StringRef s, llvm::StringRef delim, int64_t maxsplit) {
  std::vector<std::string> out;
  if (!delim.empty()) {
    while (maxsplit < 0 || (int64_t)out.size() < maxsplit) {
      size_t at = s.find(delim);
      if (at == llvm::StringRef::npos) break;
      out.push_back(s.substr(0, at).str());
      s = s.substr(at + delim.size());
    }
    out.push_back(s.str());
    return out;
  }
  size_t k = 0, n = s.size();
  while (true) {
    while (k < n && isSpace(s[k])) ++k;
    if (k == n) break;
    if (maxsplit >= 0 && (int64_t)out.size() == maxsplit) {
      out.push_back(s.substr(k).str()); // the rest, trailing whitespace kept
      break;
    }
    size_t b = k;
    while (k < n && !isSpace(s[k])) ++k;
    out.push_back(s.substr(b, k - b).str());
  }
  return out;
}

StatusOr<std::vector<Tensor>> kStringSplit(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->dt != DataType::String) return invalid("StringSplit: X must be a string tensor");
  std::string delim = c.getString("delimiter", "");
  int64_t maxsplit = c.hasAttr("maxsplit") ? c.getInt("maxsplit") : -1;
  if (c.hasAttr("maxsplit") && maxsplit < 0) return invalid("StringSplit: maxsplit is negative");
  std::vector<std::vector<std::string>> parts;
  int64_t width = 0;
  for (const std::string &s : x->s) {
    parts.push_back(splitString(s, delim, maxsplit));
    width = std::max<int64_t>(width, (int64_t)parts.back().size());
  }
  std::vector<int64_t> yd = x->dims;
  yd.push_back(width);
  if (Status s = checkOutputSize(c, DataType::String, yd); !s.ok()) return s;
  Arr y = Arr::make(DataType::String, yd), z = Arr::make(DataType::Int64, x->dims);
  for (size_t e = 0; e < parts.size(); ++e) {
    z.i[e] = (int64_t)parts[e].size();
    for (size_t k = 0; k < parts[e].size(); ++k) y.s[e * (size_t)width + k] = std::move(parts[e][k]);
  }
  std::vector<Tensor> r;
  r.push_back(toTensor(y));
  r.push_back(toTensor(z));
  return r;
}

void registerStringSplit(OpRegistrar &r) {
  r["StringSplit"].infer(stringSplitRule).kernel(kStringSplit);
}

//===--- StringConcat ---===//

StatusOr<std::vector<Tensor>> kStringConcat(const KernelCall &c) {
  auto x = inputArr(c, 0), y = inputArr(c, 1);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  if (x->dt != DataType::String || y->dt != DataType::String)
    return invalid("StringConcat: X and Y must be string tensors");
  auto od = broadcastShapes(x->dims, y->dims);
  if (!od) return invalid("StringConcat: X and Y do not broadcast");
  if (Status s = checkOutputSize(c, DataType::String, *od); !s.ok()) return s;
  std::vector<int64_t> ox = broadcastOffsets(x->dims, *od), oy = broadcastOffsets(y->dims, *od);
  Arr z = Arr::make(DataType::String, *od);
  for (size_t k = 0; k < z.s.size(); ++k) z.s[k] = x->s[(size_t)ox[k]] + y->s[(size_t)oy[k]];
  return one(z);
}

void registerStringConcat(OpRegistrar &r) {
  r["StringConcat"] = [](InferCtx &c) {
    auto a = c.inShape(0), b = c.inShape(1);
    c.setTensor(0, kString, a && b ? broadcast(c.ctx, *a, *b) : std::nullopt);
  };
  r["StringConcat"] = kStringConcat;
}

//===--- RegexFullMatch ---===//

void registerRegexFullMatch(OpRegistrar &r) {
  r["RegexFullMatch"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
}

//===--- TfIdfVectorizer ---===//

// Note [TfIdfVectorizer]
//   The pool holds n-grams by size: ngram_counts[i] is where those of size
//   i + 1 start; ngram j of the pool (counted over all sizes) counts into
//   output column ngram_indexes[j]. Within each row, for every skip s in
//   [0, max_skip_count], every run of items start, start + s + 1, ... of
//   a size in [min_gram_length, max_gram_length] found in the pool counts
//   once; unigrams count at s = 0 only (a skip does not change them). TF
//   gives the counts, IDF weights[col] (1 without weights) where the count
//   is nonzero, TFIDF weights[col] times the count.

template <typename K>
StatusOr<std::vector<Tensor>> tfidf(const KernelCall &c, const std::vector<K> &x,
                                    llvm::ArrayRef<int64_t> xd, const std::vector<K> &pool) {
  int64_t minN = c.getInt("min_gram_length"), maxN = c.getInt("max_gram_length");
  int64_t maxSkip = c.getInt("max_skip_count", 0);
  std::string mode = c.getString("mode", "");
  auto counts = c.getInts("ngram_counts"), indexes = c.getInts("ngram_indexes");
  auto weights = c.getFloats("weights");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return invalid(absl::StrCat("TfIdfVectorizer: mode \"", mode, "\" is not TF, IDF or TFIDF"));
  if (minN < 1 || maxN < minN)
    return invalid("TfIdfVectorizer: needs 1 <= min_gram_length <= max_gram_length");
  if (maxSkip < 0) return invalid("TfIdfVectorizer: max_skip_count is negative");
  if (!counts || !indexes || indexes->empty())
    return invalid("TfIdfVectorizer: needs ngram_counts and ngram_indexes");
  int64_t outSize = 0;
  for (int64_t ix : *indexes) {
    if (ix < 0) return invalid("TfIdfVectorizer: a negative ngram_indexes entry");
    outSize = std::max(outSize, ix + 1);
  }
  if (weights && !weights->empty() && (int64_t)weights->size() < outSize)
    return invalid("TfIdfVectorizer: fewer weights than output columns");
  // The pool's n-grams of the sizes counted, to their output column.
  std::map<std::vector<K>, int64_t> grams;
  int64_t id = 0;
  for (size_t i = 0; i < counts->size(); ++i) {
    int64_t size = (int64_t)i + 1;
    int64_t from = (*counts)[i];
    int64_t to = i + 1 < counts->size() ? (*counts)[i + 1] : (int64_t)pool.size();
    if (from < 0 || to < from || to > (int64_t)pool.size() || (to - from) % size)
      return invalid(absl::StrCat("TfIdfVectorizer: ngram_counts[", i,
                                  "] does not delimit whole n-grams of the pool"));
    for (int64_t p = from; p < to; p += size, ++id) {
      if (id >= (int64_t)indexes->size())
        return invalid("TfIdfVectorizer: fewer ngram_indexes than n-grams in the pool");
      if (size >= minN && size <= maxN)
        grams.emplace(std::vector<K>(pool.begin() + p, pool.begin() + p + size),
                      (*indexes)[(size_t)id]);
    }
  }
  int64_t rows = xd.size() == 2 ? xd[0] : 1, C = xd.empty() ? 1 : xd.back();
  std::vector<int64_t> od = xd.size() == 2 ? std::vector<int64_t>{rows, outSize}
                                           : std::vector<int64_t>{outSize};
  if (Status s = checkOutputSize(c, DataType::Float, od); !s.ok()) return s;
  std::vector<int64_t> freq((size_t)(rows * outSize), 0);
  std::vector<K> key;
  for (int64_t r = 0; r < rows; ++r) {
    const K *row = x.data() + r * C;
    for (int64_t s = 0; s <= maxSkip; ++s)
      for (int64_t start = 0; start < C; ++start)
        for (int64_t n = std::max<int64_t>(minN, s ? 2 : 1); n <= maxN; ++n) {
          if (start + (n - 1) * (s + 1) >= C) break;
          key.clear();
          for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * (s + 1)]);
          auto it = grams.find(key);
          if (it != grams.end()) ++freq[(size_t)(r * outSize + it->second)];
        }
  }
  Arr y = Arr::make(DataType::Float, od);
  bool hasW = weights && !weights->empty();
  for (size_t k = 0; k < freq.size(); ++k) {
    float w = hasW ? (*weights)[k % (size_t)outSize] : 1.f;
    float f = (float)freq[k];
    y.f[k] = mode == "TF" ? f : mode == "IDF" ? (freq[k] ? w : 0.f) : w * f;
  }
  return one(y);
}

StatusOr<std::vector<Tensor>> kTfIdfVectorizer(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->rank() != 1 && x->rank() != 2)
    return invalid("TfIdfVectorizer: X must be of shape [C] or [N, C]");
  if (x->dt == DataType::String) {
    auto pool = c.getStrings("pool_strings");
    if (!pool) return invalid("TfIdfVectorizer: string input needs pool_strings");
    return tfidf<std::string>(c, x->s, x->dims, *pool);
  }
  if (x->dt != DataType::Int32 && x->dt != DataType::Int64)
    return invalid("TfIdfVectorizer: X must be string, int32 or int64");
  auto pool = c.getInts("pool_int64s");
  if (!pool) return invalid("TfIdfVectorizer: integer input needs pool_int64s");
  return tfidf<int64_t>(c, x->i, x->dims, *pool);
}

void registerTfIdfVectorizer(OpRegistrar &r) {
  r["TfIdfVectorizer"] = kTfIdfVectorizer;
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
}

//===--- RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike ---===//

/// The output type of a generator: `dtype`, else `dflt`; a float type.
StatusOr<DataType> randomType(const KernelCall &c, DataType dflt) {
  DataType dt = c.hasAttr("dtype") ? (DataType)c.getInt("dtype") : dflt;
  if (!isFloatType(dt))
    return invalid(absl::StrCat(c.opType.str(), ": dtype ", dataTypeName(dt).str(),
                                " is not float16, bfloat16, float or double"));
  return dt;
}

enum class Dist { Normal, Uniform };

StatusOr<std::vector<Tensor>> randomFill(const KernelCall &c, Dist dist, DataType dt,
                                         std::vector<int64_t> dims) {
  if (Status s = checkOutputSize(c, dt, dims); !s.ok()) return s;
  Arr y = Arr::make(dt, std::move(dims));
  Rng rng(c);
  double a, b; // value = a + b * draw
  if (dist == Dist::Normal) {
    a = c.getFloat("mean", 0.f);
    b = c.getFloat("scale", 1.f);
  } else {
    a = c.getFloat("low", 0.f);
    b = (double)c.getFloat("high", 1.f) - a;
  }
  auto draw = [&] { return a + b * (dist == Dist::Normal ? rng.normal() : rng.uniform()); };
  if (y.kind() == CK::F64)
    for (double &v : y.d) v = draw();
  else
    for (float &v : y.f) v = (float)draw();
  return one(y);
}

StatusOr<std::vector<Tensor>> randomShaped(const KernelCall &c, Dist dist) {
  auto dt = randomType(c, DataType::Float);
  if (!dt.ok()) return dt.status();
  auto shape = c.getInts("shape");
  if (!shape) return invalid(absl::StrCat(c.opType.str(), ": needs the shape attribute"));
  for (int64_t d : *shape)
    if (d < 0) return invalid(absl::StrCat(c.opType.str(), ": shape has a negative dim"));
  return randomFill(c, dist, *dt, *shape);
}

StatusOr<std::vector<Tensor>> randomLike(const KernelCall &c, Dist dist) {
  const Tensor *x = c.input(0);
  if (!x) return invalid(absl::StrCat(c.opType.str(), ": missing input"));
  auto dt = randomType(c, x->dataType());
  if (!dt.ok()) return dt.status();
  return randomFill(c, dist, *dt, x->dims());
}

StatusOr<std::vector<Tensor>> kRandomNormal(const KernelCall &c) {
  return randomShaped(c, Dist::Normal);
}
StatusOr<std::vector<Tensor>> kRandomUniform(const KernelCall &c) {
  return randomShaped(c, Dist::Uniform);
}
StatusOr<std::vector<Tensor>> kRandomNormalLike(const KernelCall &c) {
  return randomLike(c, Dist::Normal);
}
StatusOr<std::vector<Tensor>> kRandomUniformLike(const KernelCall &c) {
  return randomLike(c, Dist::Uniform);
}

void registerRandomGenerators(OpRegistrar &r) {
  for (const char *op : {"RandomNormal", "RandomUniform"})
    r[op] = [](InferCtx &c) {
      auto sh = c.getInts("shape");
      if (!sh) return;
      Dims d;
      for (int64_t x : *sh) d.push_back(c.c(x));
      c.setTensor(0, (int32_t)c.getInt("dtype", 1), d);
    };
  for (const char *op : {"RandomNormalLike", "RandomUniformLike"}) r[op] = randomLikeRule;
  r["RandomNormal"] = kRandomNormal;
  r["RandomUniform"] = kRandomUniform;
  r["RandomNormalLike"] = kRandomNormalLike;
  r["RandomUniformLike"] = kRandomUniformLike;
}

//===--- Bernoulli ---===//

/// Bernoulli: 1 where a uniform draw is below the input's probability.
StatusOr<std::vector<Tensor>> kBernoulli(const KernelCall &c) {
  auto p = inputArr(c, 0);
  if (!p.ok()) return p.status();
  if (!isFloatType(p->dt)) return invalid("Bernoulli: input must be a float tensor");
  DataType dt = c.hasAttr("dtype") ? (DataType)c.getInt("dtype") : p->dt;
  CK k = computeKind(dt);
  static const DataType ints[] = {DataType::Uint8, DataType::Uint16, DataType::Uint32,
                                  DataType::Uint64, DataType::Int8, DataType::Int16,
                                  DataType::Int32, DataType::Int64, DataType::Bool};
  if (!isFloatType(dt) && std::find(std::begin(ints), std::end(ints), dt) == std::end(ints))
    return invalid(absl::StrCat("Bernoulli: dtype ", dataTypeName(dt).str(),
                                " is not a numeric or bool type"));
  if (Status s = checkOutputSize(c, dt, p->dims); !s.ok()) return s;
  std::vector<double> prob;
  Status conv = visitNumeric(p->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (T v : p->template vec<T>()) prob.push_back((double)v);
    return absl::OkStatus();
  });
  if (!conv.ok()) return conv;
  Arr y = Arr::make(dt, p->dims);
  Rng rng(c);
  Status st = visitNumeric(k, [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &out = y.template vec<T>();
    for (size_t e = 0; e < out.size(); ++e) out[e] = rng.uniform() < prob[e] ? T(1) : T(0);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(y);
}

void registerBernoulli(OpRegistrar &r) {
  r["Bernoulli"].infer(randomLikeRule).kernel(kBernoulli);
}

//===--- Multinomial ---===//

void multinomialRule(InferCtx &c) {
  auto x = c.inShape(0);
  int32_t el = (int32_t)c.getInt("dtype", static_cast<int32_t>(DataType::Int32));
  c.setTensor(0, el,
              Dims{x && x->size() == 2 ? (*x)[0] : nullptr, c.c(c.getInt("sample_size", 1))});
}

/// Multinomial: per row of unnormalized log probabilities, sample_size
/// class indices drawn from their softmax.
StatusOr<std::vector<Tensor>> kMultinomial(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (!isFloatType(x->dt) || x->rank() != 2)
    return invalid("Multinomial: input must be a [batch_size, class_size] float tensor");
  int64_t samples = c.getInt("sample_size", 1);
  if (samples < 0) return invalid("Multinomial: sample_size is negative");
  DataType dt = (DataType)c.getInt("dtype", (int64_t)DataType::Int32);
  if (dt != DataType::Int32 && dt != DataType::Int64)
    return invalid(absl::StrCat("Multinomial: dtype ", dataTypeName(dt).str(),
                                " is not int32 or int64"));
  int64_t B = x->dims[0], C = x->dims[1];
  if (C == 0 && samples > 0 && B > 0) return invalid("Multinomial: no classes to draw from");
  std::vector<int64_t> od = {B, samples};
  if (Status s = checkOutputSize(c, dt, od); !s.ok()) return s;
  Arr y = Arr::make(dt, od);
  Rng rng(c);
  std::vector<double> cum((size_t)C);
  for (int64_t b = 0; b < B; ++b) {
    double mx = -std::numeric_limits<double>::infinity();
    auto at = [&](int64_t j) {
      return x->kind() == CK::F64 ? x->d[(size_t)(b * C + j)] : (double)x->f[(size_t)(b * C + j)];
    };
    for (int64_t j = 0; j < C; ++j) mx = std::max(mx, at(j));
    double total = 0;
    for (int64_t j = 0; j < C; ++j) cum[(size_t)j] = total += std::exp(at(j) - mx);
    for (int64_t s = 0; s < samples; ++s) {
      double u = rng.uniform() * total;
      int64_t j = std::upper_bound(cum.begin(), cum.end(), u) - cum.begin();
      y.i[(size_t)(b * samples + s)] = std::min(j, C - 1);
    }
  }
  return one(y);
}

void registerMultinomial(OpRegistrar &r) {
  r["Multinomial"].infer(multinomialRule).kernel(kMultinomial);
}

//===--- ImageDecoder ---===//

void registerImageDecoder(OpRegistrar &r) {
  r["ImageDecoder"] = [](InferCtx &c) {
    std::string f = c.getString("pixel_format", "RGB");
    const DimExpr *ch = f == "Grayscale" ? c.c(1) : (f == "RGB" || f == "BGR") ? c.c(3) : nullptr;
    c.setTensor(0, static_cast<int32_t>(DataType::Uint8), Dims{nullptr, nullptr, ch});
  };
}

} // namespace

void registerMiscOps(OpRegistrar &r) {
  for (auto *reg : {registerLosses, registerStringNormalizer, registerStringSplit,
                    registerStringConcat, registerRegexFullMatch, registerTfIdfVectorizer,
                    registerRandomGenerators, registerBernoulli, registerMultinomial,
                    registerImageDecoder})
    reg(r);
}

} // namespace onnxir
