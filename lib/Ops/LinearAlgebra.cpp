//===- LinearAlgebra.cpp - Det, Einsum ------------------------------------===//
//
// Det (batched, LU with partial pivoting) and Einsum (any equation: implicit
// output, `...`, repeated letters for diagonals and traces, sums).
// One section per op: its rule, its kernel and its registration
// (registerLinearAlgebraOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Type.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace onnxir {
namespace {

using namespace infer;
using kernels::Arr;
using kernels::CK;
using kernels::checkOutputSize;
using kernels::inputArr;
using kernels::invalid;
using kernels::one;
using kernels::unsupported;
using kernels::visitNumeric;
using Status = absl::Status;
template <typename T> using StatusOr = absl::StatusOr<T>;

//===--- Det --------------------------------------------------------------===//

void detRule(InferCtx &c) {
  auto s = c.inShape(0);
  if (s && s->size() >= 2) s->resize(s->size() - 2);
  c.setTensor(0, c.inElem(0), s);
}

/// Each trailing [M, M] matrix's determinant: Gaussian elimination with
/// partial pivoting (the largest |pivot| of the column), the product of the
/// pivots with the sign of the row swaps; 1 for M = 0. Computed in double.
StatusOr<std::vector<Tensor>> kDet(const KernelCall &c) {
  auto x = inputArr(c, 0);
  if (!x.ok()) return x.status();
  if (x->kind() != CK::F32 && x->kind() != CK::F64)
    return unsupported("Det: only floating-point element types");
  int64_t r = x->rank();
  if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
    return invalid("Det: input X must be [..., M, M]");
  int64_t M = x->dims[r - 1];
  std::vector<int64_t> od(x->dims.begin(), x->dims.end() - 2);
  Status sz = checkOutputSize(c, x->dt, od);
  if (!sz.ok()) return sz;
  int64_t nb = kernels::numElementsOf(od);
  Arr out = Arr::make(x->dt, od);
  std::vector<double> a(M * M);
  Status st = visitNumeric(x->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> &xv = x->template vec<T>();
    std::vector<T> &ov = out.template vec<T>();
    for (int64_t b = 0; b < nb; ++b) {
      for (int64_t k = 0; k < M * M; ++k) a[k] = (double)xv[b * M * M + k];
      double det = 1;
      for (int64_t col = 0; col < M && det != 0; ++col) {
        int64_t piv = col;
        for (int64_t row = col + 1; row < M; ++row)
          if (std::fabs(a[row * M + col]) > std::fabs(a[piv * M + col])) piv = row;
        if (a[piv * M + col] == 0) {
          det = 0;
          break;
        }
        if (piv != col) {
          for (int64_t j = 0; j < M; ++j) std::swap(a[piv * M + j], a[col * M + j]);
          det = -det;
        }
        double p = a[col * M + col];
        det *= p;
        for (int64_t row = col + 1; row < M; ++row) {
          double f = a[row * M + col] / p;
          if (f == 0) continue;
          for (int64_t j = col + 1; j < M; ++j) a[row * M + j] -= f * a[col * M + j];
        }
      }
      ov[b] = (T)det;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

void registerDet(OpRegistrar &r) {
  r["Det"].infer(detRule).kernel(kDet);
}

//===--- Einsum -----------------------------------------------------------===//

/// Splits an Einsum equation, its spaces removed (`eq`), at "->" into the
/// operand terms (`lhs`) and the output term (`rhs`); true when the output
/// is written (explicit), false when it is implied.
bool splitEquation(const std::string &text, std::string &eq, std::string &lhs, std::string &rhs) {
  eq.clear();
  for (char ch : text)
    if (ch != ' ') eq += ch;
  lhs = eq;
  rhs.clear();
  size_t p = eq.find("->");
  if (p == std::string::npos) return false;
  lhs = eq.substr(0, p);
  rhs = eq.substr(p + 2);
  return true;
}

/// Einsum: one term per operand (letters, at most one `...`), an explicit
/// output after `->`, or else the implicit one (the broadcast `...` dims, then
/// the letters used once, in alphabetical order).
void einsumRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::string eq, lhs, rhs;
  bool explicitOut = splitEquation(c.getString("equation", ""), eq, lhs, rhs);
  if (eq.empty()) return;
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

// Note [Einsum evaluation]
//   Every letter is a label, and so is each dim the ellipses stand for
//   (right-aligned across the operands, as they broadcast). A label's size is
//   the same in every operand that has it, or 1 there (it broadcasts). An
//   operand's stride for a label is the sum of its strides of the axes with
//   that letter (a repeated letter walks the diagonal), 0 for a broadcast
//   axis. The output labels (explicit after `->`, else the ellipsis dims and
//   then the letters used once, in ASCII order: upper case first) index the
//   result; the rest are summed over. One pass over output x summed labels
//   with running offsets: no temporary tensors.

/// Label of a letter: a-z 0..25, A-Z 26..51; ellipsis dims from 52 on.
int einsumLabel(char ch) { return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch - 'A' + 26; }

StatusOr<std::vector<Tensor>> kEinsum(const KernelCall &c) {
  std::string eq, lhs, rhs;
  bool explicitOut = splitEquation(c.getString("equation", ""), eq, lhs, rhs);
  if (!c.hasAttr("equation")) return invalid("Einsum: no attribute equation");
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(lhs).split(parts, ',');
  size_t nIn = c.inputs.size();
  if (parts.size() != nIn)
    return invalid(absl::StrCat("Einsum: equation '", eq, "' has ", parts.size(),
                                " operand terms, and the node has ", nIn, " inputs"));
  std::vector<Arr> ins;
  for (unsigned k = 0; k < nIn; ++k) {
    auto a = inputArr(c, k);
    if (!a.ok()) return a.status();
    if (k && a->dt != ins[0].dt) return invalid("Einsum: inputs differ in element type");
    ins.push_back(std::move(*a));
  }
  auto isLetter = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); };
  // Each term as labels, -1 marking the ellipsis; validated.
  auto parse = [&](llvm::StringRef t, std::vector<int> &labels) -> Status {
    bool ell = false;
    for (size_t i = 0; i < t.size();) {
      if (startsWith(t.substr(i), "...")) {
        if (ell) return invalid(absl::StrCat("Einsum: term '", t.str(), "' has two ellipses"));
        ell = true;
        labels.push_back(-1);
        i += 3;
      } else if (isLetter(t[i])) {
        labels.push_back(einsumLabel(t[i++]));
      } else {
        return invalid(absl::StrCat("Einsum: equation '", eq, "' has '", std::string(1, t[i]),
                                    "', which is no letter"));
      }
    }
    return absl::OkStatus();
  };
  std::vector<std::vector<int>> terms(nIn);
  int64_t ellRank = 0;
  std::vector<int64_t> ellOf(nIn, 0);
  for (size_t k = 0; k < nIn; ++k) {
    Status s = parse(parts[k], terms[k]);
    if (!s.ok()) return s;
    int64_t letters = (int64_t)std::count_if(terms[k].begin(), terms[k].end(),
                                             [](int l) { return l >= 0; });
    bool ell = (int64_t)terms[k].size() != letters;
    if (ins[k].rank() < letters || (!ell && ins[k].rank() != letters))
      return invalid(absl::StrCat("Einsum: term '", parts[k].str(), "' does not fit input ", k,
                                  " of rank ", ins[k].rank()));
    ellOf[k] = ins[k].rank() - letters;
    ellRank = std::max(ellRank, ellOf[k]);
  }
  int nLabels = 52 + (int)ellRank;
  std::vector<int64_t> size(nLabels, -1);
  std::vector<int> uses(nLabels, 0);
  // Per operand, its axes' labels (ellipsis expanded).
  std::vector<std::vector<int>> axes(nIn);
  for (size_t k = 0; k < nIn; ++k) {
    for (int l : terms[k]) {
      if (l >= 0) {
        axes[k].push_back(l);
        ++uses[l];
        continue;
      }
      for (int64_t e = 0; e < ellOf[k]; ++e) axes[k].push_back(52 + (int)(ellRank - ellOf[k] + e));
    }
    for (size_t a = 0; a < axes[k].size(); ++a) {
      int l = axes[k][a];
      int64_t d = ins[k].dims[a];
      if (size[l] < 0 || size[l] == 1) size[l] = d;
      else if (d != size[l] && d != 1)
        return invalid(absl::StrCat("Einsum: a label has sizes ", size[l], " and ", d,
                                    " (input ", k, ")"));
    }
  }
  std::vector<int> outLabels;
  if (explicitOut) {
    std::vector<int> t;
    Status s = parse(rhs, t);
    if (!s.ok()) return s;
    bool ellOut = false;
    for (int l : t) {
      if (l < 0) {
        ellOut = true;
        for (int64_t e = 0; e < ellRank; ++e) outLabels.push_back(52 + (int)e);
        continue;
      }
      if (size[l] < 0)
        return invalid(absl::StrCat("Einsum: output of '", eq, "' has a letter no input has"));
      if (std::count(outLabels.begin(), outLabels.end(), l))
        return invalid(absl::StrCat("Einsum: output of '", eq, "' repeats a letter"));
      outLabels.push_back(l);
    }
    for (int64_t e = 0; e < ellRank && !ellOut; ++e)
      if (size[52 + e] != 1)
        return invalid(absl::StrCat("Einsum: the inputs of '", eq,
                                    "' have dims under '...', and the output has no '...'"));
  } else {
    for (int64_t e = 0; e < ellRank; ++e) outLabels.push_back(52 + (int)e);
    for (char ch = 'A'; ch <= 'z'; ++ch)
      if (isLetter(ch) && uses[einsumLabel(ch)] == 1) outLabels.push_back(einsumLabel(ch));
  }
  std::vector<int> sumLabels;
  for (int l = 0; l < nLabels; ++l)
    if (size[l] >= 0 && !std::count(outLabels.begin(), outLabels.end(), l)) sumLabels.push_back(l);
  std::vector<int64_t> od;
  for (int l : outLabels) od.push_back(size[l]);
  DataType dt = ins[0].dt;
  Status sz = checkOutputSize(c, dt, od);
  if (!sz.ok()) return sz;
  // Loop labels: output first, then summed; per operand a stride for each.
  std::vector<int> loop = outLabels;
  loop.insert(loop.end(), sumLabels.begin(), sumLabels.end());
  size_t nL = loop.size(), nO = outLabels.size();
  std::vector<int64_t> ext(nL);
  for (size_t j = 0; j < nL; ++j) ext[j] = size[loop[j]];
  std::vector<std::vector<int64_t>> stride(nIn, std::vector<int64_t>(nL, 0));
  for (size_t k = 0; k < nIn; ++k) {
    std::vector<int64_t> st = kernels::stridesOf(ins[k].dims);
    for (size_t a = 0; a < axes[k].size(); ++a) {
      if (ins[k].dims[a] == 1) continue; // broadcast (or size 1: no step)
      size_t j = std::find(loop.begin(), loop.end(), axes[k][a]) - loop.begin();
      stride[k][j] += st[a];
    }
  }
  int64_t nOut = kernels::numElementsOf(od), nSum = 1;
  for (size_t j = nO; j < nL; ++j) nSum *= ext[j];
  if (nOut < 0 || nSum < 0) return invalid("Einsum: too many elements");
  if (nOut > 0 && nSum > 0 && nSum > ((int64_t)1 << 40) / nOut)
    return absl::ResourceExhaustedError("Einsum: over 2^40 products to sum");
  Arr out = Arr::make(dt, od);
  Status st = visitNumeric(ins[0].kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    std::vector<const T *> src(nIn);
    for (size_t k = 0; k < nIn; ++k) src[k] = ins[k].template vec<T>().data();
    T *dst = out.template vec<T>().data();
    std::vector<int64_t> idx(nL, 0), off(nIn, 0);
    // Advances the odometer over loop labels [from, to); false when it wraps.
    auto step = [&](size_t from, size_t to) {
      for (size_t j = to; j-- > from;) {
        for (size_t k = 0; k < nIn; ++k) off[k] += stride[k][j];
        if (++idx[j] < ext[j]) return true;
        for (size_t k = 0; k < nIn; ++k) off[k] -= stride[k][j] * ext[j];
        idx[j] = 0;
      }
      return false;
    };
    for (int64_t o = 0; o < nOut; ++o) {
      T acc = T(0);
      for (int64_t s = 0; s < nSum; ++s) {
        T p = src[0][off[0]];
        for (size_t k = 1; k < nIn; ++k) p = kernels::mulWrap(p, src[k][off[k]]);
        acc = kernels::addWrap(acc, p);
        step(nO, nL);
      }
      dst[o] = acc;
      step(0, nO);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

/// Note [Validity checks]: one input per comma-separated term left of "->".
std::string einsumValidity(const NodeContext &c) {
  if (!c.hasAttr("equation")) return "";
  std::string eq = c.getString("equation");
  std::string lhs = eq.substr(0, eq.find("->"));
  size_t terms = 1 + std::count(lhs.begin(), lhs.end(), ',');
  if (terms != c.node.numOperands())
    return absl::StrCat("attribute \"equation\" \"", eq, "\" has ", terms, " input term",
                        terms == 1 ? "" : "s", ", the node has ", c.node.numOperands(), " input",
                        c.node.numOperands() == 1 ? "" : "s");
  return "";
}

void registerEinsum(OpRegistrar &r) {
  r["Einsum"].infer(einsumRule).kernel(kEinsum).validate(einsumValidity);
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void registerLinearAlgebraOps(OpRegistrar &r) {
  registerDet(r);
  registerEinsum(r);
}

} // namespace onnxir
