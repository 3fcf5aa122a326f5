//===- ShapeInferenceExtra.cpp - Einsum, signal, string and newer ops -----===//
//
// Einsum (explicit and implicit outputs, ellipsis broadcasting), the signal
// ops (STFT, the cosine-sum windows, MelWeightMatrix), Unique, the string ops,
// and the operators of newer opsets (AffineGrid, CenterCropPad, Col2Im,
// Attention, RMSNormalization, RotaryEmbedding, TensorScatter, BitCast,
// SwiGLU, CausalConvWithState, ...).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/InferCtx.h"
#include "Families.h"

#include <map>

namespace onnxir {
namespace infer {

namespace {

constexpr int32_t kInt64 = static_cast<int32_t>(DataType::Int64);
constexpr int32_t kFloat = static_cast<int32_t>(DataType::Float);
constexpr int32_t kString = static_cast<int32_t>(DataType::String);
constexpr int32_t kBool = static_cast<int32_t>(DataType::Bool);

/// The single known element of a scalar (or 1-element) int operand.
const DimExpr *scalarData(InferCtx &c, unsigned i) {
  const Dims *d = c.hasInput(i) ? c.inData(i) : nullptr;
  return d && d->size() == 1 ? (*d)[0] : nullptr;
}

void sameAs0(InferCtx &c) { c.setTensor(0, c.inElem(0), c.inShape(0)); }

/// Einsum: one term per operand (letters, at most one `...`), an explicit
/// output after `->`, or else the implicit one (the broadcast `...` dims, then
/// the letters used once, in alphabetical order).
void einsumRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::string eq;
  for (char ch : c.getString("equation", "")) {
    if (ch != ' ') eq += ch;
  }
  if (eq.empty()) return;
  std::string lhs = eq, rhs;
  bool explicitOut = false;
  if (size_t p = eq.find("->"); p != std::string::npos) {
    lhs = eq.substr(0, p);
    rhs = eq.substr(p + 2);
    explicitOut = true;
  }
  std::vector<std::string> terms;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(lhs).split(parts, ',');
  for (llvm::StringRef t : parts) terms.push_back(t.str());
  if (terms.size() != c.numInputs()) return;
  auto isLetter = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); };
  // Validates a term; counts its letters; false on bad text.
  auto scan = [&](const std::string &t, size_t &letters, bool &ell) {
    letters = 0;
    ell = false;
    for (size_t i = 0; i < t.size();) {
      if (t.compare(i, 3, "...") == 0) {
        if (ell) return false;
        ell = true;
        i += 3;
      } else if (isLetter(t[i])) {
        ++letters;
        ++i;
      } else {
        return false;
      }
    }
    return true;
  };
  std::map<char, const DimExpr *> dimOf;
  std::map<char, int> uses;
  std::optional<Dims> ellDims = Dims{};
  bool allShapes = true;
  int64_t ellRank = -1; // rank of the broadcast ellipsis dims, if known
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t letters;
    bool ell;
    if (!scan(terms[k], letters, ell)) return;
    auto s = c.inShape(k);
    if (s && (s->size() < letters || (!ell && s->size() != letters))) return;
    if (!s) allShapes = false;
    size_t pos = 0;
    for (size_t i = 0; i < terms[k].size();) {
      if (terms[k].compare(i, 3, "...") == 0) {
        size_t n = s ? s->size() - letters : 0;
        if (s) {
          Dims e(s->begin() + pos, s->begin() + pos + n);
          if (ellDims) ellDims = broadcast(c.ctx, *ellDims, e);
          if (!ellDims) return;
          ellRank = std::max<int64_t>(ellRank, (int64_t)n);
        }
        pos += n;
        i += 3;
        continue;
      }
      char ch = terms[k][i++];
      ++uses[ch];
      const DimExpr *d = s ? (*s)[pos] : nullptr;
      ++pos;
      auto it = dimOf.find(ch);
      if (it == dimOf.end()) {
        dimOf[ch] = d;
      } else if (d && it->second != d) {
        const DimExpr *o = it->second;
        if (!o || (!o->isConstant() && d->isConstant())) it->second = d;
        else if (o->isConstant() && d->isConstant()) {
          // Only a size-1 dim may differ (it broadcasts).
          if (o->value() == 1) it->second = d;
          else if (d->value() != 1) return;
        }
      }
    }
  }
  bool anyEll = lhs.find("...") != std::string::npos;
  std::optional<Dims> ellOut;
  if (anyEll) {
    if (allShapes) ellOut = ellDims;
  } else {
    ellOut = Dims{};
  }
  (void)ellRank;
  Dims out;
  if (explicitOut) {
    size_t letters;
    bool ell;
    if (!scan(rhs, letters, ell)) return;
    for (size_t i = 0; i < rhs.size();) {
      if (rhs.compare(i, 3, "...") == 0) {
        if (!ellOut) return c.setTensor(0, el, std::nullopt);
        out.insert(out.end(), ellOut->begin(), ellOut->end());
        i += 3;
        continue;
      }
      char ch = rhs[i++];
      auto it = dimOf.find(ch);
      if (it == dimOf.end()) return;
      out.push_back(it->second);
    }
  } else {
    if (!ellOut) return c.setTensor(0, el, std::nullopt);
    out = *ellOut;
    for (auto &[ch, n] : uses) // std::map: alphabetical (upper case first)
      if (n == 1) out.push_back(dimOf[ch]);
  }
  c.setTensor(0, el, out);
}

/// Hann/Hamming/BlackmanWindow: [size] of output_datatype.
void windowRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  c.setTensor(0, el, Dims{scalarData(c, 0)});
}

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

void melRule(InferCtx &c) {
  int32_t el = (int32_t)c.getInt("output_datatype", kFloat);
  const DimExpr *bins = scalarData(c, 0), *dft = scalarData(c, 1);
  c.setTensor(0, el, Dims{dimAdd(c.ctx, dimFloorDiv(c.ctx, dft, c.c(2)), c.c(1)), bins});
}

void uniqueRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  const Attribute *axis = c.attr("axis");
  if (!axis) {
    c.setTensor(0, el, Dims{nullptr});
    c.setTensor(1, kInt64, Dims{nullptr});
    // One inverse index per element of the flattened input.
    const DimExpr *n = nullptr;
    if (x) {
      n = c.c(1);
      for (const DimExpr *d : *x) n = dimMul(c.ctx, n, d);
    }
    c.setTensor(2, kInt64, Dims{n});
    c.setTensor(3, kInt64, Dims{nullptr});
    return;
  }
  if (!x) {
    c.setTensor(0, el, std::nullopt);
    for (unsigned i = 1; i < 4; ++i) c.setTensor(i, kInt64, Dims{nullptr});
    return;
  }
  auto ax = normAxis(axis->i, x->size());
  if (!ax) return;
  Dims y = *x;
  y[*ax] = nullptr;
  c.setTensor(0, el, y);
  c.setTensor(1, kInt64, Dims{nullptr});
  c.setTensor(2, kInt64, Dims{(*x)[*ax]});
  c.setTensor(3, kInt64, Dims{nullptr});
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

void affineGridRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  const Dims *size = c.inData(1);
  if (!size || (size->size() != 4 && size->size() != 5)) {
    auto s = c.inShape(1);
    if (s && s->size() == 1 && (*s)[0] && (*s)[0]->isConstant()) {
      int64_t k = (*s)[0]->value();
      if (k == 4) return c.setTensor(0, el, Dims{nullptr, nullptr, nullptr, c.c(2)});
      if (k == 5) return c.setTensor(0, el, Dims{nullptr, nullptr, nullptr, nullptr, c.c(3)});
    }
    return c.setTensor(0, el, std::nullopt);
  }
  Dims o{(*size)[0]};
  o.insert(o.end(), size->begin() + 2, size->end());
  o.push_back(c.c((int64_t)size->size() - 2));
  c.setTensor(0, el, o);
}

void centerCropPadRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x) return c.setTensor(0, el, std::nullopt);
  int64_t r = x->size();
  std::vector<int64_t> axes;
  if (auto a = c.getInts("axes")) {
    for (int64_t v : *a) {
      auto n = normAxis(v, r);
      if (!n) return;
      axes.push_back(*n);
    }
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const Dims *sh = c.inData(1);
  if (!sh || sh->size() != axes.size()) return c.setTensor(0, el, Dims(r, nullptr));
  Dims o = *x;
  for (size_t i = 0; i < axes.size(); ++i) o[axes[i]] = (*sh)[i];
  c.setTensor(0, el, o);
}

/// Col2Im: [N, C*prod(block), L] -> [N, C, image_shape...].
void col2imRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  const Dims *img = c.inData(1), *blk = c.inData(2);
  if (!img) {
    auto s = c.inShape(1);
    if (s && s->size() == 1 && (*s)[0] && (*s)[0]->isConstant() && (*s)[0]->value() >= 0 &&
        (*s)[0]->value() < 64)
      return c.setTensor(0, el, Dims((*s)[0]->value() + 2, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  const DimExpr *n = x && x->size() == 3 ? (*x)[0] : nullptr;
  const DimExpr *ch = nullptr;
  if (x && x->size() == 3 && blk && blk->size() == img->size()) {
    const DimExpr *p = c.c(1);
    for (const DimExpr *b : *blk) p = dimMul(c.ctx, p, b);
    if (p && p->isConstant() && p->value() > 0) ch = dimFloorDiv(c.ctx, (*x)[1], p);
  }
  Dims o{n, ch};
  o.insert(o.end(), img->begin(), img->end());
  c.setTensor(0, el, o);
}

void maxRoiPoolRule(InferCtx &c) {
  auto x = c.inShape(0), rois = c.inShape(1);
  auto ps = c.getInts("pooled_shape");
  if (!ps || ps->size() != 2) return c.setTensor(0, c.inElem(0), std::nullopt);
  c.setTensor(0, c.inElem(0),
              Dims{rois && rois->size() == 2 ? (*rois)[0] : nullptr,
                   x && x->size() == 4 ? (*x)[1] : nullptr, c.c((*ps)[0]), c.c((*ps)[1])});
}

void multinomialRule(InferCtx &c) {
  auto x = c.inShape(0);
  int32_t el = (int32_t)c.getInt("dtype", static_cast<int32_t>(DataType::Int32));
  c.setTensor(0, el,
              Dims{x && x->size() == 2 ? (*x)[0] : nullptr, c.c(c.getInt("sample_size", 1))});
}

/// Attention-23+: Y, present key/value (with a past), qk_matmul_output.
void attentionRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto q = c.inShape(0), k = c.inShape(1), v = c.inShape(2);
  Dims y;
  const DimExpr *kvSeq = nullptr;
  bool qkKnown = false;
  Dims qk;
  if (q && v && q->size() == 4 && v->size() == 4) {
    y = {(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
    kvSeq = (*v)[2];
    qk = {(*q)[0], (*q)[1], (*q)[2], kvSeq};
    qkKnown = true;
    c.setTensor(0, el, y);
  } else if (q && v && q->size() == 3 && v->size() == 3) {
    int64_t qh = c.getInt("q_num_heads", 0), kvh = c.getInt("kv_num_heads", 0);
    if (qh > 0 && kvh > 0 && qh < (1 << 20) && kvh < (1 << 20)) {
      const DimExpr *vh = (*v)[2] && (*v)[2]->isConstant() && (*v)[2]->value() % kvh == 0
                              ? c.c((*v)[2]->value() / kvh)
                              : nullptr;
      c.setTensor(0, el, Dims{(*q)[0], (*q)[1], dimMul(c.ctx, vh, c.c(qh))});
      kvSeq = (*v)[1];
      qk = {(*q)[0], c.c(qh), (*q)[1], kvSeq};
      qkKnown = true;
    } else {
      c.setTensor(0, el, Dims{(*q)[0], (*q)[1], nullptr});
    }
  } else if (q && (q->size() == 3 || q->size() == 4)) {
    c.setTensor(0, el, Dims(q->size(), nullptr));
  } else {
    c.setTensor(0, el, std::nullopt);
  }
  (void)k;
  bool past = c.hasInput(4) && c.hasInput(5);
  const DimExpr *total = kvSeq;
  if (past) {
    auto pk = c.inShape(4), pv = c.inShape(5);
    total = pk && pk->size() == 4 ? dimAdd(c.ctx, (*pk)[2], kvSeq) : nullptr;
    if (pk && pk->size() == 4) {
      Dims o = *pk;
      o[2] = total;
      c.setTensor(1, c.inElem(4), o);
    }
    if (pv && pv->size() == 4) {
      Dims o = *pv;
      o[2] = pv && pk && pk->size() == 4 ? dimAdd(c.ctx, (*pv)[2], kvSeq) : nullptr;
      c.setTensor(2, c.inElem(5), o);
    }
  } else if (k && v && k->size() == 4 && v->size() == 4) {
    // Without a past, present key/value are K and V.
    c.setTensor(1, c.inElem(1), k);
    c.setTensor(2, c.inElem(2), v);
  }
  if (qkKnown && c.hasOutput(3)) {
    qk[3] = total;
    c.setTensor(3, el, qk);
  }
}

/// LinearAttention-27: packed [B, T, H*D] query/key/value; output
/// [B, T, Hq*Dv], present_state [B, Hkv, Dk, Dv].
void linearAttentionRule(InferCtx &c) {
  int64_t qh = c.getInt("q_num_heads", 0), kvh = c.getInt("kv_num_heads", 0);
  if (qh <= 0 || kvh <= 0 || qh > (1 << 20) || kvh > (1 << 20) || qh % kvh) return;
  auto q = c.inShape(0), k = c.inShape(1), v = c.inShape(2);
  auto dim = [&](const std::optional<Dims> &s, size_t i) -> const DimExpr * {
    return s && s->size() == 3 ? (*s)[i] : nullptr;
  };
  auto first = [](std::initializer_list<const DimExpr *> l) -> const DimExpr * {
    const DimExpr *best = nullptr;
    for (const DimExpr *e : l)
      if (e && (!best || (!best->isConstant() && e->isConstant()))) best = e;
    return best;
  };
  // The per-head size of a packed dim (exact division only).
  auto perHead = [&](const DimExpr *packed, int64_t heads) -> const DimExpr * {
    if (!packed) return nullptr;
    if (packed->isConstant()) return packed->value() % heads ? nullptr : c.c(packed->value() / heads);
    return dimFloorDiv(c.ctx, packed, c.c(heads));
  };
  const DimExpr *b = first({dim(q, 0), dim(k, 0), dim(v, 0)});
  const DimExpr *t = first({dim(q, 1), dim(k, 1), dim(v, 1)});
  const DimExpr *dk = first({perHead(dim(q, 2), qh), perHead(dim(k, 2), kvh)});
  const DimExpr *dv = perHead(dim(v, 2), kvh);
  c.setTensor(0, c.inElem(0), Dims{b, t, dimMul(c.ctx, dv, c.c(qh))});
  int32_t st = c.hasInput(3) ? c.inElem(3) : c.inElem(0);
  c.setTensor(1, st, Dims{b, c.c(kvh), dk, dv});
}

} // namespace

void addExtraRules(OpRegistrar &r) {
  r["Einsum"] = einsumRule;
  for (const char *op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r[op] = windowRule;
  r["STFT"] = stftRule;
  r["MelWeightMatrix"] = melRule;
  r["Unique"] = uniqueRule;
  r["StringNormalizer"] = stringNormalizerRule;
  r["StringSplit"] = stringSplitRule;
  r["StringConcat"] = [](InferCtx &c) {
    auto a = c.inShape(0), b = c.inShape(1);
    c.setTensor(0, kString, a && b ? broadcast(c.ctx, *a, *b) : std::nullopt);
  };
  r["RegexFullMatch"] = [](InferCtx &c) { c.setTensor(0, kBool, c.inShape(0)); };
  r["AffineGrid"] = affineGridRule;
  r["CenterCropPad"] = centerCropPadRule;
  r["Col2Im"] = col2imRule;
  r["MaxRoiPool"] = maxRoiPoolRule;
  r["Multinomial"] = multinomialRule;
  for (const char *op : {"CumProd", "LpNormalization", "RotaryEmbedding", "TensorScatter"})
    r[op] = sameAs0;
  r["RMSNormalization"] = [](InferCtx &c) { c.setTensor(0, c.inElem(1), c.inShape(0)); };
  r["BitCast"] = [](InferCtx &c) {
    int64_t to = c.getInt("to", 0);
    if (to > 0) c.setTensor(0, (int32_t)to, c.inShape(0));
  };
  r["SwiGLU"] = [](InferCtx &c) {
    // A and B have identical shapes: take the more precise dim of each pair.
    auto a = c.inShape(0), b = c.inShape(1);
    if (a && b && a->size() == b->size())
      for (size_t i = 0; i < a->size(); ++i)
        if (!(*a)[i] || (!(*a)[i]->isConstant() && (*b)[i] && (*b)[i]->isConstant()))
          (*a)[i] = (*b)[i];
    c.setTensor(0, c.inElem(0), a ? a : b);
  };
  r["CausalConvWithState"] = [](InferCtx &c) {
    auto x = c.inShape(0), w = c.inShape(1);
    c.setTensor(0, c.inElem(0), x);
    // The carried state holds the last k-1 positions: [B, C, k-1].
    if (x && x->size() == 3)
      c.setTensor(1, c.inElem(0),
                  Dims{(*x)[0], (*x)[1],
                       w && w->size() == 3 ? dimSub(c.ctx, (*w)[2], c.c(1)) : nullptr});
  };
  r["ImageDecoder"] = [](InferCtx &c) {
    std::string f = c.getString("pixel_format", "RGB");
    const DimExpr *ch = f == "Grayscale" ? c.c(1) : (f == "RGB" || f == "BGR") ? c.c(3) : nullptr;
    c.setTensor(0, static_cast<int32_t>(DataType::Uint8), Dims{nullptr, nullptr, ch});
  };
  r["Attention"] = attentionRule;
  r["LinearAttention"] = linearAttentionRule;
}

void addPreviewRules(OpRegistrar &r) {
  // FlexAttention: Q [B,Hq,Lq,E], K [B,Hkv,Lkv,E], V [B,Hkv,Lkv,Ev] ->
  // [B,Hq,Lq,Ev].
  r["FlexAttention"] = [](InferCtx &c) {
    auto q = c.inShape(0), v = c.inShape(2);
    if (!q || !v || q->size() != 4 || v->size() != 4)
      return c.setTensor(0, c.inElem(0), std::nullopt);
    const DimExpr *b = (*q)[0] ? (*q)[0] : (*v)[0];
    c.setTensor(0, c.inElem(0), Dims{b, (*q)[1], (*q)[2], (*v)[3]});
  };
}

} // namespace infer
} // namespace onnxir
