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

#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "re2/re2.h"

#include <csetjmp>
#include <cstdio>

extern "C" {
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>
}

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

// Note [RegexFullMatch is RE2]
//   The spec names RE2's syntax, so the pattern is compiled by RE2 itself
//   (Debian's libre2-dev), not by std::regex, whose ECMAScript grammar
//   differs: RE2 has no backreferences or lookaround (such a pattern is an
//   error here, not a match), knows (?P<name>...), \C, \pN and POSIX
//   classes inside brackets, and matches UTF-8 code points, so "." is one
//   character of a multi-byte string. A full match anchors both ends
//   (RE2::FullMatch), whatever the pattern's own anchors. An absent or
//   invalid pattern is an error naming RE2's reason; nothing is logged to
//   stderr (log_errors off).

StatusOr<std::vector<Tensor>> kRegexFullMatch(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->dt != DataType::String) return invalid("RegexFullMatch: X must be a string tensor");
  if (!c.hasAttr("pattern")) return invalid("RegexFullMatch: the pattern attribute is missing");
  std::string pattern = c.getString("pattern", "");
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(pattern, opts);
  if (!re.ok())
    return invalid(absl::StrCat("RegexFullMatch: pattern \"", pattern,
                                "\" is not a valid RE2 expression: ", re.error()));
  if (Status s = checkOutputSize(c, DataType::Bool, x->dims); !s.ok()) return s;
  Arr y = Arr::make(DataType::Bool, x->dims);
  for (size_t k = 0; k < x->s.size(); ++k) y.i[k] = RE2::FullMatch(x->s[k], re) ? 1 : 0;
  return one(y);
}

void registerRegexFullMatch(OpRegistrar &r) {
  r["RegexFullMatch"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["RegexFullMatch"] = kRegexFullMatch;
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

// Note [ImageDecoder]
//   encoded_stream holds the bytes of one image file (1-D uint8), its
//   format told by its signature: JPEG (libjpeg-turbo), PNG (libpng), BMP
//   (uncompressed, 1/4/8-bit palette, 24 and 32-bit) and binary PNM (P5
//   gray, P6 RGB) are read. TIFF, WebP, JPEG 2000 and GIF are recognised
//   and refused (Unimplemented: "ImageDecoder: TIFF input"), as is a
//   variant of the four formats not listed (a BMP compressed with RLE, a
//   CMYK JPEG); bytes of no known format are an error. The result is what ONNX's reference
//   (Pillow) gives, made to the spec's [H, W, C] layout:
//   - Every image is first 8-bit RGB: a gray sample repeated three times,
//     a palette index looked up, an alpha channel dropped (not composited),
//     a 16-bit PNG sample's high byte kept (Pillow's "RGB;16B" reading), a
//     PNM sample of maxval M other than 255 scaled to round(v / M * 255),
//     halves to even, as Pillow's PPM decoder does.
//   - RGB is that, BGR the same with the channels reversed, Grayscale one
//     channel: Pillow's "L" conversion, the ITU-R 601-2 luma in 16-bit fixed
//     point, (19595 R + 38470 G + 7471 B + 32768) >> 16, which gives a gray
//     image's own values back.
//   - JPEG uses libjpeg's defaults (the integer DCT, fancy upsampling), as
//     Pillow does, so the same library gives the same pixels; a file cut
//     short is an error (Pillow's), not libjpeg's gray fill.
//   - libjpeg and libpng report a fault by longjmp: decodeJpeg and decodePng
//     hold no object with a destructor across their setjmp (the pixels go
//     into the caller's DecodedImage), so none is skipped.
//   The size is checked against the output budget before the pixels are
//   allocated.

/// Decoded pixels, 8-bit RGB, row-major.
struct DecodedImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> rgb;
};

/// "TIFF", "WebP", ... for a format recognised but not decoded, else null.
const char *unsupportedImageFormat(llvm::StringRef b) {
  if (startsWith(b, llvm::StringRef("II*\0", 4)) || startsWith(b, llvm::StringRef("MM\0*", 4)))
    return "TIFF";
  if (b.size() >= 12 && startsWith(b, "RIFF") && b.substr(8, 4) == "WEBP") return "WebP";
  if (startsWith(b, llvm::StringRef("\0\0\0\x0cjP  ", 8)) || startsWith(b, "\xff\x4f\xff\x51"))
    return "JPEG 2000";
  if (startsWith(b, "GIF87a") || startsWith(b, "GIF89a")) return "GIF";
  return nullptr;
}

/// Rejects images whose pixels would exceed the output budget (or int64).
Status checkImageSize(const KernelCall &c, uint64_t h, uint64_t w, int64_t channels) {
  if (h == 0 || w == 0) return invalid("ImageDecoder: the image has no pixels");
  if (h > (1u << 30) || w > (1u << 30))
    return invalid("ImageDecoder: the image's dimensions are too large");
  return checkOutputSize(c, DataType::Uint8, {(int64_t)h, (int64_t)w, std::max<int64_t>(channels, 3)});
}

struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpegErrorExit(j_common_ptr info) {
  auto *err = reinterpret_cast<JpegError *>(info->err);
  (*info->err->format_message)(info, err->message);
  longjmp(err->jump, 1);
}

/// libjpeg's warnings: a file that ends early is an error, as Pillow reports
/// it ("image file is truncated") rather than libjpeg's gray fill; the
/// others (extraneous bytes before a marker) pass, as Pillow lets them.
void jpegWarning(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) jpegErrorExit(info);
}

const char *const kCmykJpeg = "ImageDecoder: CMYK JPEG input";

/// Decodes a JPEG into `img` (Note [ImageDecoder]); an error message, else
/// null (a static string, or `msg`).
const char *decodeJpeg(const KernelCall &c, llvm::StringRef b, DecodedImage &img, Status &budget,
                       char (&msg)[JMSG_LENGTH_MAX]) {
  jpeg_decompress_struct info;
  JpegError err;
  info.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpegErrorExit;
  err.mgr.emit_message = jpegWarning;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&info);
    std::memcpy(msg, err.message, sizeof msg);
    return msg;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char *>(b.data()), (unsigned long)b.size());
  jpeg_read_header(&info, TRUE);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&info);
    return kCmykJpeg;
  }
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  budget = checkImageSize(c, info.output_height, info.output_width, 3);
  if (!budget.ok() || info.output_components != 3) {
    jpeg_destroy_decompress(&info);
    return budget.ok() ? "libjpeg did not give RGB" : nullptr;
  }
  img.height = info.output_height;
  img.width = info.output_width;
  img.rgb.resize((size_t)img.height * (size_t)img.width * 3);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = img.rgb.data() + (size_t)info.output_scanline * (size_t)img.width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return nullptr;
}

/// libpng's reader of the encoded bytes, and what decodePng keeps outside
/// its setjmp frame (Note [ImageDecoder]).
struct PngSource {
  llvm::StringRef bytes;
  size_t at = 0;
  char message[200] = "";
  std::vector<png_bytep> rows;
};

void pngRead(png_structp png, png_bytep out, size_t n) {
  auto *src = static_cast<PngSource *>(png_get_io_ptr(png));
  if (src->bytes.size() - src->at < n) png_error(png, "the file is truncated");
  std::memcpy(out, src->bytes.data() + src->at, n);
  src->at += n;
}

void pngError(png_structp png, png_const_charp what) {
  auto *src = static_cast<PngSource *>(png_get_io_ptr(png));
  std::snprintf(src->message, sizeof src->message, "%s", what);
  png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp) {}

/// Decodes a PNG into `img` (Note [ImageDecoder]); as decodeJpeg.
const char *decodePng(const KernelCall &c, PngSource &src, DecodedImage &img, Status &budget) {
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, pngError, pngWarning);
  if (!png) return "libpng could not start";
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return src.message[0] ? src.message : "libpng failed";
  }
  png_set_read_fn(png, &src, pngRead);
  png_read_info(png, info);
  budget = checkImageSize(c, png_get_image_height(png, info), png_get_image_width(png, info), 3);
  if (!budget.ok()) {
    png_destroy_read_struct(&png, &info, nullptr);
    return nullptr;
  }
  // To 8-bit RGB: palettes and sub-byte gray expanded, 16 bits to their
  // high byte, gray repeated, alpha (and tRNS, which expand would make
  // alpha) dropped.
  png_set_palette_to_rgb(png);
  png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_16(png);
  png_set_gray_to_rgb(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8) {
    png_destroy_read_struct(&png, &info, nullptr);
    return "libpng did not give 8-bit RGB";
  }
  img.height = png_get_image_height(png, info);
  img.width = png_get_image_width(png, info);
  img.rgb.resize((size_t)img.height * (size_t)img.width * 3);
  src.rows.resize((size_t)img.height);
  for (size_t y = 0; y < src.rows.size(); ++y)
    src.rows[y] = img.rgb.data() + y * (size_t)img.width * 3;
  png_read_image(png, src.rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return nullptr;
}

uint32_t le16(llvm::StringRef b, size_t at) {
  return (uint32_t)(uint8_t)b[at] | (uint32_t)(uint8_t)b[at + 1] << 8;
}
uint32_t le32(llvm::StringRef b, size_t at) { return le16(b, at) | le16(b, at + 2) << 16; }

/// An uncompressed BMP (Note [ImageDecoder]).
Status decodeBmp(const KernelCall &c, llvm::StringRef b, DecodedImage &img) {
  if (b.size() < 26) return invalid("ImageDecoder: the BMP file is truncated");
  uint32_t dataAt = le32(b, 10), headerSize = le32(b, 14);
  int64_t w, h;
  uint32_t bits, compression = 0, paletteSize = 0, paletteEntry = 4;
  if (headerSize == 12) { // BITMAPCOREHEADER
    w = le16(b, 18);
    h = (int16_t)le16(b, 20);
    bits = le16(b, 24);
    paletteEntry = 3;
  } else if (headerSize >= 40 && b.size() >= 14 + 40) {
    w = (int32_t)le32(b, 18);
    h = (int32_t)le32(b, 22);
    bits = le16(b, 28);
    compression = le32(b, 30);
    paletteSize = le32(b, 46);
  } else {
    return unsupported("ImageDecoder: a BMP header of this size");
  }
  if (compression != 0)
    return unsupported("ImageDecoder: compressed BMP input (RLE or bit fields)");
  if (bits != 1 && bits != 4 && bits != 8 && bits != 24 && bits != 32)
    return unsupported(absl::StrCat("ImageDecoder: ", bits, "-bit BMP input"));
  bool bottomUp = h > 0;
  h = std::abs(h);
  if (w <= 0 || h == 0) return invalid("ImageDecoder: the BMP image has no pixels");
  if (Status s = checkImageSize(c, (uint64_t)h, (uint64_t)w, 3); !s.ok()) return s;
  uint64_t stride = ((uint64_t)w * bits + 31) / 32 * 4;
  if (dataAt > b.size() || (b.size() - dataAt) / stride < (uint64_t)h)
    return invalid("ImageDecoder: the BMP file is truncated");
  size_t paletteAt = 14 + headerSize;
  if (bits <= 8) {
    if (paletteSize == 0) paletteSize = 1u << bits;
    if (paletteSize > 256 || paletteAt + (uint64_t)paletteSize * paletteEntry > dataAt)
      return invalid("ImageDecoder: the BMP palette does not fit its file");
  }
  img.height = h;
  img.width = w;
  img.rgb.resize((size_t)h * (size_t)w * 3);
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t *row =
        reinterpret_cast<const uint8_t *>(b.data()) + dataAt + (bottomUp ? h - 1 - y : y) * stride;
    uint8_t *out = img.rgb.data() + (size_t)y * (size_t)w * 3;
    for (int64_t x = 0; x < w; ++x, out += 3) {
      const uint8_t *bgr;
      if (bits >= 24) {
        bgr = row + x * (bits / 8);
      } else {
        uint32_t perByte = 8 / bits, shift = 8 - bits * (1 + (uint32_t)x % perByte);
        uint32_t index = (row[x / perByte] >> shift) & ((1u << bits) - 1);
        if (index >= paletteSize) return invalid("ImageDecoder: a BMP pixel is past its palette");
        bgr = reinterpret_cast<const uint8_t *>(b.data()) + paletteAt + index * paletteEntry;
      }
      out[0] = bgr[2];
      out[1] = bgr[1];
      out[2] = bgr[0];
    }
  }
  return absl::OkStatus();
}

/// Binary PNM, P5 (gray) or P6 (RGB) (Note [ImageDecoder]).
Status decodePnm(const KernelCall &c, llvm::StringRef b, DecodedImage &img) {
  size_t at = 2;
  int64_t fields[3];
  for (int64_t &f : fields) {
    while (at < b.size() && (isSpace(b[at]) || b[at] == '#')) {
      if (b[at] == '#')
        while (at < b.size() && b[at] != '\n' && b[at] != '\r') ++at;
      else
        ++at;
    }
    if (at == b.size() || b[at] < '0' || b[at] > '9')
      return invalid("ImageDecoder: the PNM header is malformed");
    f = 0;
    while (at < b.size() && b[at] >= '0' && b[at] <= '9' && f < (1 << 30)) f = f * 10 + (b[at++] - '0');
  }
  if (at == b.size() || !isSpace(b[at])) return invalid("ImageDecoder: the PNM header is malformed");
  ++at; // the one whitespace byte before the samples
  int64_t w = fields[0], h = fields[1], maxval = fields[2];
  if (maxval < 1 || maxval > 65535) return invalid("ImageDecoder: the PNM maxval is out of range");
  if (w == 0 || h == 0) return invalid("ImageDecoder: the PNM image has no pixels");
  if (Status s = checkImageSize(c, (uint64_t)h, (uint64_t)w, 3); !s.ok()) return s;
  int64_t channels = b[1] == '5' ? 1 : 3, sampleBytes = maxval > 255 ? 2 : 1;
  uint64_t need = (uint64_t)w * (uint64_t)h * (uint64_t)(channels * sampleBytes);
  if (b.size() - at < need) return invalid("ImageDecoder: the PNM file is truncated");
  img.height = h;
  img.width = w;
  img.rgb.resize((size_t)h * (size_t)w * 3);
  const auto *p = reinterpret_cast<const uint8_t *>(b.data()) + at;
  for (size_t k = 0; k < (size_t)(w * h * channels); ++k) {
    uint32_t v = sampleBytes == 2 ? (uint32_t)p[2 * k] << 8 | p[2 * k + 1] : p[k];
    uint8_t u = maxval == 255 ? (uint8_t)v
                              : (uint8_t)std::min(255.0, std::nearbyint((double)v / (double)maxval * 255.0));
    if (channels == 3) img.rgb[k] = u;
    else img.rgb[3 * k] = img.rgb[3 * k + 1] = img.rgb[3 * k + 2] = u;
  }
  return absl::OkStatus();
}

StatusOr<std::vector<Tensor>> kImageDecoder(const KernelCall &c) {
  const Tensor *t = c.input(0);
  if (!t || t->dataType() != DataType::Uint8 || t->dims().size() != 1)
    return invalid("ImageDecoder: encoded_stream must be a 1-D uint8 tensor");
  std::string format = c.getString("pixel_format", "RGB");
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return invalid(absl::StrCat("ImageDecoder: pixel_format \"", format,
                                "\" is not RGB, BGR or Grayscale"));
  auto bytes = t->bytes();
  if (!bytes.ok()) return bytes.status();
  llvm::StringRef b = *bytes;
  DecodedImage img;
  if (startsWith(b, "\xff\xd8\xff")) {
    Status budget;
    char msg[JMSG_LENGTH_MAX];
    if (const char *e = decodeJpeg(c, b, img, budget, msg))
      return e == kCmykJpeg ? unsupported(e)
                            : invalid(absl::StrCat("ImageDecoder: the JPEG cannot be decoded: ", e));
    if (!budget.ok()) return budget;
  } else if (startsWith(b, "\x89PNG\r\n\x1a\n")) {
    Status budget;
    PngSource src;
    src.bytes = b;
    if (const char *e = decodePng(c, src, img, budget))
      return invalid(absl::StrCat("ImageDecoder: the PNG cannot be decoded: ", e));
    if (!budget.ok()) return budget;
  } else if (startsWith(b, "BM")) {
    if (Status s = decodeBmp(c, b, img); !s.ok()) return s;
  } else if (startsWith(b, "P5") || startsWith(b, "P6")) {
    if (Status s = decodePnm(c, b, img); !s.ok()) return s;
  } else if (const char *f = unsupportedImageFormat(b)) {
    return unsupported(absl::StrCat("ImageDecoder: ", f, " input"));
  } else {
    return invalid("ImageDecoder: encoded_stream is no JPEG, PNG, BMP or PNM image");
  }
  size_t pixels = (size_t)img.height * (size_t)img.width;
  std::string out;
  if (format == "Grayscale") {
    out.resize(pixels);
    for (size_t k = 0; k < pixels; ++k) {
      const uint8_t *p = &img.rgb[3 * k];
      out[k] = (char)((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 32768u) >> 16);
    }
  } else {
    out.assign(img.rgb.begin(), img.rgb.end());
    if (format == "BGR")
      for (size_t k = 0; k < pixels; ++k) std::swap(out[3 * k], out[3 * k + 2]);
  }
  std::vector<Tensor> r;
  r.push_back(makeTensor(DataType::Uint8, {img.height, img.width, format == "Grayscale" ? 1 : 3},
                         std::move(out)));
  return r;
}

void registerImageDecoder(OpRegistrar &r) {
  r["ImageDecoder"] = [](InferCtx &c) {
    std::string f = c.getString("pixel_format", "RGB");
    const DimExpr *ch = f == "Grayscale" ? c.c(1) : (f == "RGB" || f == "BGR") ? c.c(3) : nullptr;
    c.setTensor(0, static_cast<int32_t>(DataType::Uint8), Dims{nullptr, nullptr, ch});
  };
  r["ImageDecoder"] = kImageDecoder;
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
