//===- Attention.cpp - Attention, RotaryEmbedding -------------------------===//
//
// Attention (-23 on: 3-D or 4-D Q/K/V, grouped key/value heads, a past
// cache, a bool or additive mask, is_causal, softcap, the qk_matmul_output
// modes; -24's nonpad_kv_seqlen; -25's sliding window) and RotaryEmbedding
// (-23). Per op: its rule, its kernel, its version adapters, its
// registration. LinearAttention,
// SwiGLU and CausalConvWithState keep their rules in NN.cpp.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h).
using namespace infer;
using namespace kernels;

//===--- Attention --------------------------------------------------------===//

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

// Note [Attention evaluation]
//   Per batch b, query head h (key/value head h / (Hq / Hkv)) and query row
//   i: scores s_j = scale * Q[i] . K[j] over the past keys then the new ones
//   (scale: the attribute, else 1 / sqrt(head size)); softcap c > 0 makes
//   them c * tanh(s / c); the bias is added: the mask (bool: false is -inf;
//   else its value; a mask shorter than the keys is padded with -inf),
//   is_causal (key j allowed up to i + the past length, or + nonpad - Sq
//   with -24's nonpad_kv_seqlen), -25's window, and keys at or past
//   nonpad_kv_seqlen[b] (-inf). Softmax over j, then Y[i] = sum p_j V[j]. A
//   row whose bias is -inf everywhere gives zeros (ONNX's reference).
//   qk_matmul_output is the scores (mode 0), after softcap (1), after the
//   bias (2) or after softmax (3), as onnxruntime orders them (ONNX's
//   reference returns the softcapped scores for both 0 and 1). present_key
//   and present_value are the past and new keys and values, [B, Hkv, L, D],
//   also for 3-D inputs.

StatusOr<std::vector<Tensor>> kAttention(const KernelCall &c) {
  auto q = inputArr(c, 0), k = inputArr(c, 1), v = inputArr(c, 2);
  if (!q.ok()) return q.status();
  if (!k.ok()) return k.status();
  if (!v.ok()) return v.status();
  if (q->kind() != k->kind() || q->kind() != v->kind())
    return unsupported("Attention: Q, K and V computed in different float kinds");
  int64_t rank = q->rank();
  if ((rank != 3 && rank != 4) || k->rank() != rank || v->rank() != rank)
    return invalid("Attention: Q, K and V must all be 3-D or all 4-D");
  int64_t qh = c.getInt("q_num_heads", 0), kvh = c.getInt("kv_num_heads", 0);
  int64_t B = q->dims[0], Hq, Hkv, Sq, Skv, D, Dk, Dv;
  if (rank == 3) {
    if (qh <= 0 || kvh <= 0)
      return invalid("Attention: 3-D inputs need positive q_num_heads and kv_num_heads");
    if (q->dims[2] % qh || k->dims[2] % kvh || v->dims[2] % kvh)
      return invalid("Attention: a hidden size is not a multiple of its number of heads");
    Hq = qh, Hkv = kvh, Sq = q->dims[1], Skv = k->dims[1];
    D = q->dims[2] / qh, Dk = k->dims[2] / kvh, Dv = v->dims[2] / kvh;
    if (v->dims[1] != Skv) return invalid("Attention: K and V differ in sequence length");
  } else {
    if ((c.opset <= 0 || c.opset >= 25) && (c.hasAttr("q_num_heads") || c.hasAttr("kv_num_heads")))
      return invalid("Attention: q_num_heads and kv_num_heads must not be set for 4-D inputs");
    Hq = q->dims[1], Hkv = k->dims[1], Sq = q->dims[2], Skv = k->dims[2];
    D = q->dims[3], Dk = k->dims[3], Dv = v->dims[3];
    if (v->dims[1] != Hkv || v->dims[2] != Skv)
      return invalid("Attention: K and V differ in heads or sequence length");
  }
  if (k->dims[0] != B || v->dims[0] != B) return invalid("Attention: Q, K and V differ in batch");
  if (Dk != D) return invalid("Attention: Q and K differ in head size");
  if (Hkv <= 0 || Hq % Hkv)
    return invalid("Attention: the query heads are not a multiple of the key/value heads");
  const Tensor *pkT = c.input(4), *pvT = c.input(5), *npT = c.input(6);
  if (!pkT != !pvT) return invalid("Attention: past_key and past_value go together");
  if (npT && pkT) return invalid("Attention: nonpad_kv_seqlen with a past cache");
  int64_t P = 0;
  std::optional<Arr> pk, pv;
  if (pkT) {
    auto a = inputArr(c, 4), b = inputArr(c, 5);
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    if (a->kind() != q->kind() || b->kind() != q->kind())
      return unsupported("Attention: a past cache in another float kind");
    P = a->rank() == 4 ? a->dims[2] : -1;
    if (a->rank() != 4 || a->dims[0] != B || a->dims[1] != Hkv || a->dims[3] != D)
      return invalid("Attention: past_key must be [batch, kv_num_heads, past, head_size]");
    if (b->rank() != 4 || b->dims[0] != B || b->dims[1] != Hkv || b->dims[2] != P ||
        b->dims[3] != Dv)
      return invalid("Attention: past_value must be [batch, kv_num_heads, past, v_head_size]");
    pk = std::move(*a);
    pv = std::move(*b);
  }
  int64_t L = P + Skv;
  std::vector<int64_t> nonpad;
  if (npT) {
    auto n = intValues(*npT);
    if (!n.ok()) return n.status();
    if ((int64_t)n->size() != B) return invalid("Attention: nonpad_kv_seqlen must be [batch]");
    for (int64_t x : *n)
      if (x < 0 || x > L)
        return invalid(absl::StrCat("Attention: nonpad_kv_seqlen ", x, " is outside [0, ", L, "]"));
    nonpad = std::move(*n);
  }
  std::optional<Arr> mask;
  std::vector<int64_t> mdims(4, 1), mstr(4, 0);
  if (c.input(3)) {
    auto m = inputArr(c, 3);
    if (!m.ok()) return m.status();
    if (m->rank() > 4 || m->rank() == 0)
      return invalid("Attention: attn_mask must have rank 1 to 4");
    std::vector<int64_t> full = {B, Hq, Sq, L};
    for (int64_t a = 0; a < m->rank(); ++a) mdims[4 - m->rank() + a] = m->dims[a];
    for (int a = 0; a < 3; ++a)
      if (mdims[a] != 1 && mdims[a] != full[a])
        return invalid("Attention: attn_mask does not broadcast to [batch, heads, q, kv]");
    if (mdims[3] > L) return invalid("Attention: attn_mask is longer than the keys");
    auto st = kernels::stridesOf(mdims);
    for (int a = 0; a < 4; ++a) mstr[a] = mdims[a] == 1 && a < 3 ? 0 : st[a];
    if (m->dt != DataType::Bool) {
      if (m->kind() != CK::F32 && m->kind() != CK::F64)
        return unsupported("Attention: an integer attn_mask");
      auto cv = kernels::convertArr(*m, DataType::Double);
      if (!cv.ok()) return cv.status();
      m = std::move(cv);
    }
    mask = std::move(*m);
  }
  int64_t mode = c.getInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return invalid("Attention: attribute qk_matmul_output_mode must be 0, 1, 2 or 3");
  bool causal = c.getInt("is_causal", 0) != 0;
  double softcap = c.getFloat("softcap", 0.0f);
  int64_t left = c.getInt("left_window_size", -1), right = c.getInt("right_window_size", -1);
  if (left < -1 || right < -1)
    return invalid("Attention: a window size must be -1 or not negative");
  double scale = c.hasAttr("scale") ? (double)c.getFloat("scale", 1.0f) : 1.0 / std::sqrt((double)D);
  std::vector<int64_t> yd = rank == 4 ? std::vector<int64_t>{B, Hq, Sq, Dv}
                                      : std::vector<int64_t>{B, Sq, Hq * Dv};
  std::vector<int64_t> pkd = {B, Hkv, L, D}, pvd = {B, Hkv, L, Dv}, qkd = {B, Hq, Sq, L};
  for (const auto *d : {&yd, &pkd, &pvd, &qkd}) {
    Status sz = checkOutputSize(c, q->dt, *d);
    if (!sz.ok()) return sz;
  }
  Arr y = Arr::make(q->dt, yd), outK = Arr::make(k->dt, pkd), outV = Arr::make(v->dt, pvd);
  Arr qk = Arr::make(q->dt, qkd);
  Status st = visitFloat(q->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *qv = q->template vec<T>().data();
    const T *kv = k->template vec<T>().data();
    const T *vv = v->template vec<T>().data();
    T *pkOut = outK.template vec<T>().data();
    T *pvOut = outV.template vec<T>().data();
    // present = past ++ new, [B, Hkv, L, *].
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t j = 0; j < L; ++j) {
          T *dk = pkOut + ((b * Hkv + h) * L + j) * D;
          T *dv = pvOut + ((b * Hkv + h) * L + j) * Dv;
          if (j < P) {
            std::copy_n(pk->template vec<T>().data() + ((b * Hkv + h) * P + j) * D, D, dk);
            std::copy_n(pv->template vec<T>().data() + ((b * Hkv + h) * P + j) * Dv, Dv, dv);
            continue;
          }
          int64_t s = j - P;
          const T *sk = rank == 4 ? kv + ((b * Hkv + h) * Skv + s) * D
                                  : kv + (b * Skv + s) * Hkv * D + h * D;
          const T *sv = rank == 4 ? vv + ((b * Hkv + h) * Skv + s) * Dv
                                  : vv + (b * Skv + s) * Hkv * Dv + h * Dv;
          std::copy_n(sk, D, dk);
          std::copy_n(sv, Dv, dv);
        }
    const T inf = std::numeric_limits<T>::infinity();
    std::vector<T> sc(L), bias(L), acc(Dv);
    T *yo = y.template vec<T>().data();
    T *qo = qk.template vec<T>().data();
    int64_t group = Hq / Hkv;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        int64_t kh = h / group;
        const T *K = pkOut + (b * Hkv + kh) * L * D;
        const T *V = pvOut + (b * Hkv + kh) * L * Dv;
        for (int64_t i = 0; i < Sq; ++i) {
          const T *Q = rank == 4 ? qv + ((b * Hq + h) * Sq + i) * D
                                 : qv + (b * Sq + i) * Hq * D + h * D;
          T *qrow = qo + ((b * Hq + h) * Sq + i) * L;
          int64_t off = nonpad.empty() ? P : nonpad[b] - Sq;
          for (int64_t j = 0; j < L; ++j) {
            T dot = 0;
            for (int64_t d = 0; d < D; ++d) dot += Q[d] * K[j * D + d];
            sc[j] = dot * (T)scale;
            if (mode == 0) qrow[j] = sc[j];
            if (softcap > 0) sc[j] = (T)softcap * std::tanh(sc[j] / (T)softcap);
            if (mode == 1) qrow[j] = sc[j];
            T bj = 0;
            if (mask) {
              if (j >= mdims[3]) {
                bj = -inf;
              } else {
                int64_t mo = (mdims[0] == 1 ? 0 : b) * mstr[0] + (mdims[1] == 1 ? 0 : h) * mstr[1] +
                             (mdims[2] == 1 ? 0 : i) * mstr[2] + j;
                if (mask->dt == DataType::Bool) bj = mask->i[mo] ? T(0) : -inf;
                else bj = (T)mask->d[mo];
              }
            }
            if (causal && j > i + off) bj = -inf;
            int64_t diff = i + off - j;
            if ((left >= 0 && diff > left) || (right >= 0 && -diff > right)) bj = -inf;
            if (!nonpad.empty() && j >= nonpad[b]) bj = -inf;
            bias[j] = bj;
            sc[j] += bj;
            if (mode == 2) qrow[j] = sc[j];
          }
          T mx = -inf, bmx = -inf;
          for (int64_t j = 0; j < L; ++j) {
            mx = std::max(mx, sc[j]);
            bmx = std::max(bmx, bias[j]);
          }
          bool dead = L == 0 || bmx == -inf;
          T sum = 0;
          for (int64_t j = 0; j < L; ++j) {
            sc[j] = dead || sc[j] == -inf ? T(0) : std::exp(sc[j] - mx);
            sum += sc[j];
          }
          for (int64_t j = 0; j < L; ++j) {
            if (sum != 0) sc[j] /= sum;
            if (mode == 3) qrow[j] = sc[j];
          }
          std::fill(acc.begin(), acc.end(), T(0));
          for (int64_t j = 0; j < L; ++j)
            if (sc[j] != 0)
              for (int64_t d = 0; d < Dv; ++d) acc[d] += sc[j] * V[j * Dv + d];
          T *yrow = rank == 4 ? yo + ((b * Hq + h) * Sq + i) * Dv
                              : yo + (b * Sq + i) * Hq * Dv + h * Dv;
          std::copy(acc.begin(), acc.end(), yrow);
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  std::vector<Tensor> r;
  r.push_back(toTensor(y));
  if (c.numOutputs > 1) r.push_back(toTensor(outK));
  if (c.numOutputs > 2) r.push_back(toTensor(outV));
  if (c.numOutputs > 3) r.push_back(toTensor(qk));
  return r;
}

// Attention-24 added nonpad_kv_seqlen, -25 the window sizes: going down, the
// node must not use them.
absl::Status attentionDown24(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "Attention", {});
}
absl::Status attentionDown25(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "Attention", {{"left_window_size", AttrKind::Int, -1},
                                                     {"right_window_size", AttrKind::Int, -1}});
}

void registerAttention(OpRegistrar &r) {
  r["Attention"].infer(attentionRule).kernel(kAttention);
  r["Attention"].since(24).upgrade(adapters::noChange).downgrade(attentionDown24);
  r["Attention"].since(25).upgrade(adapters::noChange).downgrade(attentionDown25);
}

//===--- RotaryEmbedding --------------------------------------------------===//

/// Rotates the first rotary_embedding_dim values of each head (pairs: the
/// two halves, or neighbours when interleaved) by the angle whose cos/sin
/// the caches give for the position (position_ids indexes them; without it
/// they are [batch, seq, dim/2]); the other values are copied.
StatusOr<std::vector<Tensor>> kRotaryEmbedding(const KernelCall &c) {
  auto x = inputArr(c, 0), cs = inputArr(c, 1), sn = inputArr(c, 2);
  if (!x.ok()) return x.status();
  if (!cs.ok()) return cs.status();
  if (!sn.ok()) return sn.status();
  if (x->kind() != CK::F32 || cs->kind() != CK::F32 || sn->kind() != CK::F32)
    return unsupported("RotaryEmbedding: only float, float16 and bfloat16");
  int64_t nh = c.getInt("num_heads", 0);
  bool inter = c.getInt("interleaved", 0) != 0;
  int64_t B, S, H, Dh;
  if (x->rank() == 4) {
    B = x->dims[0], H = x->dims[1], S = x->dims[2], Dh = x->dims[3];
  } else if (x->rank() == 3) {
    if (nh <= 0 || x->dims[2] % nh)
      return invalid("RotaryEmbedding: 3-D input needs num_heads dividing its hidden size");
    B = x->dims[0], S = x->dims[1], H = nh, Dh = x->dims[2] / nh;
  } else {
    return invalid("RotaryEmbedding: input X must be 3-D or 4-D");
  }
  int64_t rd = c.getInt("rotary_embedding_dim", 0);
  if (rd == 0) rd = Dh;
  if (rd < 0 || rd > Dh || rd % 2)
    return invalid("RotaryEmbedding: rotary_embedding_dim must be even and at most the head size");
  int64_t half = rd / 2;
  std::vector<int64_t> pos;
  int64_t maxPos = 0;
  if (c.input(3)) {
    auto p = intValues(*c.input(3));
    if (!p.ok()) return p.status();
    if (c.input(3)->dims() != std::vector<int64_t>{B, S})
      return invalid("RotaryEmbedding: position_ids must be [batch, sequence]");
    if (cs->rank() != 2 || cs->dims != sn->dims || cs->dims[1] != half)
      return invalid("RotaryEmbedding: with position_ids, cos_cache and sin_cache must be "
                     "[max_position, rotary_embedding_dim / 2]");
    maxPos = cs->dims[0];
    for (int64_t v : *p)
      if (v < 0 || v >= maxPos)
        return invalid(absl::StrCat("RotaryEmbedding: position id ", v, " is outside [0, ",
                                    maxPos, ")"));
    pos = std::move(*p);
  } else if (cs->rank() != 3 || cs->dims != sn->dims || cs->dims[0] != B || cs->dims[1] != S ||
             cs->dims[2] != half) {
    return invalid("RotaryEmbedding: without position_ids, cos_cache and sin_cache must be "
                   "[batch, sequence, rotary_embedding_dim / 2]");
  }
  Arr out = *x;
  const float *xv = x->f.data();
  float *ov = out.f.data();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      int64_t row = pos.empty() ? b * S + s : pos[b * S + s];
      const float *cr = cs->f.data() + row * half, *sr = sn->f.data() + row * half;
      for (int64_t h = 0; h < H; ++h) {
        int64_t base = x->rank() == 4 ? ((b * H + h) * S + s) * Dh : ((b * S + s) * H + h) * Dh;
        const float *xi = xv + base;
        float *oi = ov + base;
        for (int64_t k = 0; k < half; ++k) {
          int64_t i1 = inter ? 2 * k : k, i2 = inter ? 2 * k + 1 : k + half;
          float x1 = xi[i1], x2 = xi[i2];
          oi[i1] = cr[k] * x1 - sr[k] * x2;
          oi[i2] = sr[k] * x1 + cr[k] * x2;
        }
      }
    }
  return kernels::one(out);
}

void registerRotaryEmbedding(OpRegistrar &r) {
  r["RotaryEmbedding"].infer(sameAsInput).kernel(kRotaryEmbedding);
}

} // namespace

void registerAttentionOps(OpRegistrar &r) {
  for (auto *reg : {registerAttention, registerRotaryEmbedding})
    reg(r);
}

} // namespace onnxir
