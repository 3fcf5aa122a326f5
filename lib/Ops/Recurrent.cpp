//===- Recurrent.cpp - RNN, GRU, LSTM -------------------------------------===//
//
// Recurrent: RNN, GRU (linear_before_reset from -3), LSTM; the
// output_sequence attribute before 7 and the batch-first layout from 14.
// One section: the rule, the kernel, the version adapters and the
// registration the three ops share.
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===--- RNN, GRU, LSTM ---===//

/// Y [seq, dirs, batch, hidden], Y_h and Y_c [dirs, batch, hidden]; with
/// layout 1 the batch comes first in each.
void rnnRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  int64_t hidden = c.getInt("hidden_size", 0);
  std::string dir = c.getString("direction", "forward");
  int64_t numDir = dir == "bidirectional" ? 2 : 1;
  int64_t layout = c.getInt("layout", 0);
  const DimExpr *h = hidden > 0 ? c.c(hidden) : nullptr;
  if (!h) {
    // From R: [num_directions, gates*hidden, hidden].
    auto r = c.inShape(2);
    if (r && r->size() == 3) h = (*r)[2];
  }
  const DimExpr *seq = nullptr, *batch = nullptr;
  if (x && x->size() == 3) {
    seq = layout ? (*x)[1] : (*x)[0];
    batch = layout ? (*x)[0] : (*x)[1];
  }
  const DimExpr *nd = c.c(numDir);
  if (layout) {
    c.setTensor(0, el, Dims{batch, seq, nd, h});
    c.setTensor(1, el, Dims{batch, nd, h});
    c.setTensor(2, el, Dims{batch, nd, h});
  } else {
    c.setTensor(0, el, Dims{seq, nd, batch, h});
    c.setTensor(1, el, Dims{nd, batch, h});
    c.setTensor(2, el, Dims{nd, batch, h});
  }
}

// Note [Recurrent kernels]
//   One engine runs RNN (1 gate), GRU (3: z r h) and LSTM (4: i o f c) over
//   each direction: the input projections X W^T + Wb of every step first (one
//   matrix product), then step by step the recurrent H R^T + Rb, the gates
//   (clip, when given, bounds the gates' inputs; LSTM's cell state goes to h
//   unclipped, as in onnxruntime), and the state update.
//   With sequence_lens a batch entry stops after its length: its later Y rows
//   are 0, its Y_h (and Y_c) are the last computed state; reverse starts at
//   its last valid step. Layout 1 puts the batch first in X, the initial
//   states and the results. activation_alpha/beta are consumed in the order of
//   the activations, each by the functions that take one (ONNX's wording, and
//   onnxruntime's reading); a function without its value takes the default of
//   the operator of that name. The products use Eigen (Note [Matrix products],
//   Conv.cpp).

template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T> using MatMap = Eigen::Map<RowMat<T>>;
template <typename T> using CMatMap = Eigen::Map<const RowMat<T>>;
template <typename T> using ColVecMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <typename T> using CColVec = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
template <typename T> using CRowVec = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

enum class ActKind {
  Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
  Softsign, Softplus
};

struct Act {
  ActKind kind = ActKind::Tanh;
  float alpha = 0, beta = 0;
};

/// Applies `a` to v[0, n) in place.
template <typename T> void applyAct(const Act &a, T *v, int64_t n) {
  T al = T(a.alpha), be = T(a.beta);
  switch (a.kind) {
  case ActKind::Sigmoid:
    for (int64_t k = 0; k < n; ++k) v[k] = T(1) / (T(1) + std::exp(-v[k]));
    break;
  case ActKind::Tanh:
    for (int64_t k = 0; k < n; ++k) v[k] = std::tanh(v[k]);
    break;
  case ActKind::Relu:
    for (int64_t k = 0; k < n; ++k) v[k] = std::max(v[k], T(0));
    break;
  case ActKind::Affine:
    for (int64_t k = 0; k < n; ++k) v[k] = al * v[k] + be;
    break;
  case ActKind::LeakyRelu:
    for (int64_t k = 0; k < n; ++k) v[k] = v[k] >= T(0) ? v[k] : al * v[k];
    break;
  case ActKind::ThresholdedRelu:
    for (int64_t k = 0; k < n; ++k) v[k] = v[k] > al ? v[k] : T(0);
    break;
  case ActKind::ScaledTanh:
    for (int64_t k = 0; k < n; ++k) v[k] = al * std::tanh(be * v[k]);
    break;
  case ActKind::HardSigmoid:
    for (int64_t k = 0; k < n; ++k) v[k] = std::max(T(0), std::min(T(1), al * v[k] + be));
    break;
  case ActKind::Elu:
    for (int64_t k = 0; k < n; ++k) v[k] = v[k] >= T(0) ? v[k] : al * (std::exp(v[k]) - T(1));
    break;
  case ActKind::Softsign:
    for (int64_t k = 0; k < n; ++k) v[k] = v[k] / (T(1) + std::abs(v[k]));
    break;
  case ActKind::Softplus:
    for (int64_t k = 0; k < n; ++k) v[k] = std::log1p(std::exp(v[k]));
    break;
  }
}

/// The activations of every direction (`per` each), from the attributes.
StatusOr<std::vector<Act>> readActivations(const KernelCall &c, unsigned per, int64_t dirs,
                                           llvm::ArrayRef<const char *> dflt) {
  // Absent: the defaults for each direction (the schema's list for RNN,
  // Tanh twice, is for two directions); one direction's list serves both.
  std::vector<std::string> names(dflt.begin(), dflt.end());
  if (c.hasAttr("activations")) names = c.getStrings("activations").value_or(names);
  if (names.size() == per && dirs == 2) {
    std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if ((int64_t)names.size() != per * dirs)
    return invalid(absl::StrCat("attribute 'activations' has ", names.size(), " names; ",
                                c.opType.str(), " with ", dirs, " direction(s) takes ",
                                per * dirs));
  std::vector<float> alphas = c.getFloats("activation_alpha").value_or(std::vector<float>{});
  std::vector<float> betas = c.getFloats("activation_beta").value_or(std::vector<float>{});
  size_t ai = 0, bi = 0;
  std::vector<Act> acts;
  for (const std::string &name : names) {
    std::string l = llvm::StringRef(name).lower();
    Act a;
    // (kind, takes alpha, default alpha, takes beta, default beta)
    struct Row { const char *name; ActKind k; bool ta; float da; bool tb; float db; };
    static const Row rows[] = {
        {"sigmoid", ActKind::Sigmoid, false, 0, false, 0},
        {"tanh", ActKind::Tanh, false, 0, false, 0},
        {"relu", ActKind::Relu, false, 0, false, 0},
        {"affine", ActKind::Affine, true, 1.0f, true, 0.0f},
        {"leakyrelu", ActKind::LeakyRelu, true, 0.01f, false, 0},
        {"thresholdedrelu", ActKind::ThresholdedRelu, true, 1.0f, false, 0},
        {"scaledtanh", ActKind::ScaledTanh, true, 1.0f, true, 1.0f},
        {"hardsigmoid", ActKind::HardSigmoid, true, 0.2f, true, 0.5f},
        {"elu", ActKind::Elu, true, 1.0f, false, 0},
        {"softsign", ActKind::Softsign, false, 0, false, 0},
        {"softplus", ActKind::Softplus, false, 0, false, 0}};
    const Row *row = nullptr;
    for (const Row &r : rows)
      if (l == r.name) row = &r;
    if (!row)
      return invalid(absl::StrCat("attribute 'activations' names '", name,
                                  "', not an activation function of ", c.opType.str()));
    a.kind = row->k;
    if (row->ta) a.alpha = ai < alphas.size() ? alphas[ai++] : row->da;
    if (row->tb) a.beta = bi < betas.size() ? betas[bi++] : row->db;
    acts.push_back(a);
  }
  return acts;
}

enum class Cell { RNN, GRU, LSTM };

StatusOr<std::vector<Tensor>> recurrent(const KernelCall &c, Cell cell) {
  const unsigned G = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return invalid(absl::StrCat("X is ", dataTypeName(x->dt).str(), ", not a float type"));
  int64_t layout = c.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return invalid(absl::StrCat("attribute 'layout' is ", layout, "; it must be 0 or 1"));
  std::string dir = c.getString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return invalid(absl::StrCat("attribute 'direction' is '", dir,
                                "'; it must be forward, reverse or bidirectional"));
  int64_t D = dir == "bidirectional" ? 2 : 1;
  auto shapeStr = [](const std::vector<int64_t> &d) {
    return absl::StrCat("[", absl::StrJoin(d, ", "), "]");
  };
  if (x->rank() != 3)
    return invalid(absl::StrCat("X has shape ", shapeStr(x->dims), "; expected 3 dims"));
  int64_t S = layout ? x->dims[1] : x->dims[0], B = layout ? x->dims[0] : x->dims[1];
  int64_t I = x->dims[2];
  // Operand #i in X's compute kind (absent: nullopt), checked against `want`.
  auto operand = [&](unsigned i, const char *name, std::vector<int64_t> want,
                     std::optional<Arr> &out) -> Status {
    const Tensor *t = c.input(i);
    if (!t) return absl::OkStatus();
    auto a = fromTensor(*t);
    if (!a.ok()) return a.status();
    if (a->kind() != CK::F32 && a->kind() != CK::F64)
      return invalid(absl::StrCat(name, " is ", dataTypeName(a->dt).str(), ", not a float type"));
    if (a->dims != want)
      return invalid(absl::StrCat(name, " has shape ", shapeStr(a->dims), "; expected ",
                                  shapeStr(want)));
    if (a->kind() != x->kind()) {
      auto cv = convertArr(*a, x->dt);
      if (!cv.ok()) return cv.status();
      a = std::move(cv);
    }
    out = std::move(*a);
    return absl::OkStatus();
  };
  const Tensor *rt = c.input(2);
  if (!c.input(1) || !rt) return invalid("W and R are required");
  if (rt->dims().size() != 3)
    return invalid(absl::StrCat("R has shape ", shapeStr(rt->dims()), "; expected 3 dims"));
  int64_t H = rt->dims()[2];
  if (c.hasAttr("hidden_size") && c.getInt("hidden_size", H) != H)
    return invalid(absl::StrCat("attribute 'hidden_size' is ", c.getInt("hidden_size", H),
                                " but R has shape ", shapeStr(rt->dims())));
  std::optional<Arr> w, r, bias, h0, c0, peep;
  if (Status s = operand(1, "W", {D, G * H, I}, w); !s.ok()) return s;
  if (Status s = operand(2, "R", {D, G * H, H}, r); !s.ok()) return s;
  if (Status s = operand(3, "B", {D, 2 * G * H}, bias); !s.ok()) return s;
  std::vector<int64_t> stateDims = layout ? std::vector<int64_t>{B, D, H}
                                          : std::vector<int64_t>{D, B, H};
  if (Status s = operand(5, "initial_h", stateDims, h0); !s.ok()) return s;
  if (cell == Cell::LSTM) {
    if (Status s = operand(6, "initial_c", stateDims, c0); !s.ok()) return s;
    if (Status s = operand(7, "P", {D, 3 * H}, peep); !s.ok()) return s;
  }
  std::vector<int64_t> lens(B, S);
  if (const Tensor *sl = c.input(4)) {
    auto v = intValues(*sl);
    if (!v.ok()) return v.status();
    if ((int64_t)v->size() != B || sl->dims().size() != 1)
      return invalid(absl::StrCat("sequence_lens has shape ", shapeStr(sl->dims()),
                                  "; expected [", B, "]"));
    for (int64_t b = 0; b < B; ++b) {
      if ((*v)[b] < 0 || (*v)[b] > S)
        return invalid(absl::StrCat("sequence_lens[", b, "] is ", (*v)[b],
                                    ", outside [0, ", S, "]"));
      lens[b] = (*v)[b];
    }
  }
  static const char *const rnnDefault[] = {"Tanh"}, *const gruDefault[] = {"Sigmoid", "Tanh"},
                           *const lstmDefault[] = {"Sigmoid", "Tanh", "Tanh"};
  unsigned nAct = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
  auto acts = readActivations(c, nAct, D,
                              cell == Cell::RNN   ? llvm::ArrayRef<const char *>(rnnDefault)
                              : cell == Cell::GRU ? llvm::ArrayRef<const char *>(gruDefault)
                                                  : llvm::ArrayRef<const char *>(lstmDefault));
  if (!acts.ok()) return acts.status();
  bool hasClip = c.hasAttr("clip");
  float clip = c.getFloat("clip", 0);
  if (hasClip && !(clip > 0))
    return invalid(absl::StrCat("attribute 'clip' is ", clip, "; it must be positive"));
  bool lbr = cell == Cell::GRU && c.getInt("linear_before_reset", 0) != 0;
  bool inputForget = cell == Cell::LSTM && c.getInt("input_forget", 0) != 0;
  std::vector<int64_t> ydims = layout ? std::vector<int64_t>{B, S, D, H}
                                      : std::vector<int64_t>{S, D, B, H};
  if (Status s = checkOutputSize(c, x->dt, ydims); !s.ok()) return s;
  Arr y = Arr::make(x->dt, ydims), yh = Arr::make(x->dt, stateDims),
      yc = Arr::make(x->dt, stateDims);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T *xv = x->template vec<T>().data();
      T *yv = y.template vec<T>().data();
      std::fill(y.template vec<T>().begin(), y.template vec<T>().end(), T(0));
      const int64_t GH = G * H;
      auto yAt = [&](int64_t t, int64_t d, int64_t b) {
        return yv + (layout ? ((b * S + t) * D + d) * H : ((t * D + d) * B + b) * H);
      };
      auto stateAt = [&](int64_t d, int64_t b) {
        return layout ? (b * D + d) * H : (d * B + b) * H;
      };
      auto clipTo = [&](T *v, int64_t n) {
        if (!hasClip) return;
        for (int64_t k = 0; k < n; ++k) v[k] = std::max(T(-clip), std::min(T(clip), v[k]));
      };
      std::vector<T> xw(S * B * GH), hr(GH), hs(B * H), cs(B * H), tmp(H);
      for (int64_t d = 0; d < D; ++d) {
        const T *W = w->template vec<T>().data() + d * GH * I;
        const T *R = r->template vec<T>().data() + d * GH * H;
        const T *Wb = bias ? bias->template vec<T>().data() + d * 2 * GH : nullptr;
        const T *Rb = Wb ? Wb + GH : nullptr;
        const T *P = peep ? peep->template vec<T>().data() + d * 3 * H : nullptr;
        const Act *act = acts->data() + d * nAct;
        // Input projections of every step, in X's row order: x W^T + Wb.
        MatMap<T> xwm(xw.data(), S * B, GH);
        xwm.noalias() = CMatMap<T>(xv, S * B, I) * CMatMap<T>(W, GH, I).transpose();
        if (Wb) xwm.rowwise() += CRowVec<T>(Wb, GH);
        for (int64_t b = 0; b < B; ++b)
          for (int64_t k = 0; k < H; ++k) {
            hs[b * H + k] = h0 ? h0->template vec<T>()[stateAt(d, b) + k] : T(0);
            cs[b * H + k] = c0 ? c0->template vec<T>()[stateAt(d, b) + k] : T(0);
          }
        bool rev = dir == "reverse" || d == 1;
        for (int64_t b = 0; b < B; ++b) {
          T *h = hs.data() + b * H, *cc = cs.data() + b * H;
          for (int64_t step = 0; step < lens[b]; ++step) {
            int64_t t = rev ? lens[b] - 1 - step : step;
            const T *xg = xw.data() + (layout ? b * S + t : t * B + b) * GH;
            // hr = H R^T + Rb (GRU with linear_before_reset=0: z and r only).
            int64_t rows = cell == Cell::GRU && !lbr ? 2 * H : GH;
            ColVecMap<T>(hr.data(), rows).noalias() =
                CMatMap<T>(R, rows, H) * CColVec<T>(h, H);
            for (int64_t g = 0; g < rows; ++g) hr[g] += xg[g] + (Rb ? Rb[g] : T(0));
            if (cell == Cell::RNN) {
              clipTo(hr.data(), H);
              applyAct(act[0], hr.data(), H);
              std::copy(hr.begin(), hr.begin() + H, h);
            } else if (cell == Cell::GRU) {
              T *z = hr.data(), *rg = hr.data() + H, *hh = hr.data() + 2 * H;
              clipTo(z, 2 * H);
              applyAct(act[0], z, 2 * H);
              if (lbr) {
                // hh = x Wh^T + Wbh + r * (H Rh^T + Rbh): hr holds all of it
                // but the reset: redo the h part.
                for (int64_t k = 0; k < H; ++k)
                  hh[k] = xg[2 * H + k] + rg[k] * (hh[k] - xg[2 * H + k]);
              } else {
                for (int64_t k = 0; k < H; ++k) tmp[k] = rg[k] * h[k];
                ColVecMap<T>(hh, H).noalias() =
                    CMatMap<T>(R + 2 * H * H, H, H) * CColVec<T>(tmp.data(), H);
                for (int64_t k = 0; k < H; ++k)
                  hh[k] += xg[2 * H + k] + (Rb ? Rb[2 * H + k] : T(0));
              }
              clipTo(hh, H);
              applyAct(act[1], hh, H);
              for (int64_t k = 0; k < H; ++k) h[k] = (T(1) - z[k]) * hh[k] + z[k] * h[k];
            } else {
              T *ig = hr.data(), *og = hr.data() + H, *fg = hr.data() + 2 * H,
                *cg = hr.data() + 3 * H;
              if (P)
                for (int64_t k = 0; k < H; ++k) {
                  ig[k] += P[k] * cc[k];
                  fg[k] += P[2 * H + k] * cc[k];
                }
              clipTo(ig, H);
              clipTo(fg, 2 * H); // f and c
              applyAct(act[0], ig, H);
              if (inputForget)
                for (int64_t k = 0; k < H; ++k) fg[k] = T(1) - ig[k];
              else
                applyAct(act[0], fg, H);
              applyAct(act[1], cg, H);
              for (int64_t k = 0; k < H; ++k) cc[k] = fg[k] * cc[k] + ig[k] * cg[k];
              if (P)
                for (int64_t k = 0; k < H; ++k) og[k] += P[H + k] * cc[k];
              clipTo(og, H);
              applyAct(act[0], og, H);
              std::copy(cc, cc + H, tmp.begin());
              applyAct(act[2], tmp.data(), H);
              for (int64_t k = 0; k < H; ++k) h[k] = og[k] * tmp[k];
            }
            std::copy(h, h + H, yAt(t, d, b));
          }
          std::copy(h, h + H, yh.template vec<T>().data() + stateAt(d, b));
          std::copy(cc, cc + H, yc.template vec<T>().data() + stateAt(d, b));
        }
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  std::vector<Tensor> res;
  unsigned nOut = std::min(c.numOutputs, cell == Cell::LSTM ? 3u : 2u);
  res.push_back(toTensor(y));
  if (nOut > 1) res.push_back(toTensor(yh));
  if (nOut > 2) res.push_back(toTensor(yc));
  return res;
}

StatusOr<std::vector<Tensor>> kRNN(const KernelCall &c) { return recurrent(c, Cell::RNN); }
StatusOr<std::vector<Tensor>> kGRU(const KernelCall &c) { return recurrent(c, Cell::GRU); }
StatusOr<std::vector<Tensor>> kLSTM(const KernelCall &c) { return recurrent(c, Cell::LSTM); }

// RNN-7, GRU-7, LSTM-7 dropped output_sequence: Y is computed when the node
// has that result.
absl::Status rnnUp7(Node &n, AdapterContext &c) {
  return adapters::dropIntAttr(n, c, "output_sequence");
}

absl::Status rnnDown7(Node &n, AdapterContext &c) {
  if (!c.checkOnly && n.numResults() && n.result(0)) n.newAttr("output_sequence").setInt(1);
  return absl::OkStatus();
}

// GRU-3 added linear_before_reset (default 0: the old formula) and made Y_h
// optional.
absl::Status gruDown3(Node &n, AdapterContext &c) {
  absl::Status s = adapters::dropZeroIntAttr(n, c, "linear_before_reset", [&](int64_t v) {
    return absl::StrCat("linear_before_reset=", v, " does not exist at opset ", c.to,
                        " (the reset gate is applied before the linear map)");
  });
  if (!s.ok() || c.checkOnly) return s;
  if (n.numResults() < 2 || !n.result(1)) { // Y_h is required at opset 1
    n.trimTrailingEmptyResults();
    if (n.numResults() == 0) n.addEmptyResult();
    (void)n.addResult(n.getGraph()->freshName("y_h"));
  }
  return absl::OkStatus();
}

// GRU/LSTM/RNN-14 added layout: 1 puts the batch first in X, the initial
// and final states and Y. Going down, layout 1 becomes Transposes around the
// node (X [batch, seq, in] -> [seq, batch, in]; initial_h/c [batch, dirs,
// hidden] -> [dirs, batch, hidden]; Y [seq, dirs, batch, hidden] -> [batch,
// seq, dirs, hidden]; Y_h/Y_c back like the initial states).
absl::Status rnnDown14(Node &n, AdapterContext &c, llvm::StringRef op) {
  auto layout = adapters::intAttrOr(n, "layout", 0);
  if (!layout.ok()) return layout.status();
  if (*layout == 0) return adapters::olderFormOnly(n, c, op, {{"layout", AttrKind::Int, 0}});
  if (*layout != 1)
    return absl::FailedPreconditionError(absl::StrCat("layout ", *layout, " is not 0 or 1"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("layout");
  Graph &g = *n.getGraph();
  auto transposeOperand = [&](unsigned i, std::vector<int64_t> perm) {
    if (i >= n.numOperands() || !n.operand(i)) return;
    Node *t = g.createNode("Transpose", {n.operand(i)}, 1, &n);
    t->newAttr("perm").setInts(std::move(perm));
    n.setOperand(i, t->result(0));
  };
  transposeOperand(0, {1, 0, 2});
  transposeOperand(5, {1, 0, 2}); // initial_h
  if (op == "LSTM") transposeOperand(6, {1, 0, 2}); // initial_c
  for (unsigned i = 0; i < n.numResults(); ++i) {
    if (!n.result(i)) continue;
    Node *t = adapters::wrapResult(n, "Transpose", {}, i);
    t->newAttr("perm").setInts(i == 0 ? std::vector<int64_t>{2, 0, 1, 3}
                                      : std::vector<int64_t>{1, 0, 2});
  }
  return absl::OkStatus();
}

} // namespace

void registerRecurrentOps(OpRegistrar &r) {
  using adapters::noChange;
  r["RNN"].infer(rnnRule).kernel(kRNN);
  r["GRU"].infer(rnnRule).kernel(kGRU);
  r["LSTM"].infer(rnnRule).kernel(kLSTM);
  // Version adapters (Note [Version adapters]).
  r["GRU"].since(3).upgrade(noChange).downgrade(gruDown3);
  r["GRU"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["RNN"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["LSTM"].since(7).upgrade(rnnUp7).downgrade(rnnDown7);
  r["GRU"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "GRU"); });
  r["LSTM"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "LSTM"); });
  r["RNN"].since(14).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return rnnDown14(n, c, "RNN"); });
}

} // namespace onnxir
