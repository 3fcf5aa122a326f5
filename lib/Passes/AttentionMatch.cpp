//===- AttentionMatch.cpp - Matchers the attention patterns share ---------===//
//
// Reports of near-misses, scale placements (a scalar constant multiplying
// or dividing the scores, Q or Kᵀ) and transposes seen through; declared
// in AttentionMatch.h.
//
//===----------------------------------------------------------------------===//
#include "AttentionMatch.h"

#include "onnxir/IR/DimExpr.h"
#include "onnxir/IR/ValueInfo.h"

#include <cmath>
#include <sstream>

namespace onnxir {
namespace attention {

namespace {

/// The value of a constant with exactly one element (a scalar or [1, ...]).
std::optional<double> scalarConstant(const Value *v) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t) return std::nullopt;
  for (int64_t d : t->dims())
    if (d != 1) return std::nullopt;
  DataType dt = t->dataType();
  if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16 &&
      dt != DataType::BFloat16)
    return std::nullopt;
  auto vals = t->values<double>();
  if (!vals.ok() || vals->size() != 1) return std::nullopt;
  return (*vals)[0];
}

} // namespace

//===----------------------------------------------------------------------===//
// Guards and their reasons
//===----------------------------------------------------------------------===//

bool miss(PatternRewriter &rw, llvm::StringRef guard, const std::string &why) {
  return rw.rejected(guard, why);
}

std::string q(const Node *n) {
  if (!n) return "''";
  if (!n->name().empty() || n->numResults() == 0 || !n->result(0)) return "'" + n->name().str() + "'";
  return "-> '" + n->result(0)->name().str() + "'";
}
std::string num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

std::string q(const Value *v) { return "'" + (v ? v->name().str() : std::string()) + "'"; }

bool isOne(const Dim &d) { return d.isKnown() && d.value == 1; }
std::string dimStr(const Dim &d) {
  if (d.isKnown()) return std::to_string(d.value);
  if (d.isSymbolic()) return d.param.str();
  return "?";
}

std::optional<double> absorbedScalar(const Value *c, const Value *x) {
  const Tensor *t = PatternRewriter::constantTensor(c);
  int64_t r = rankOf(x);
  if (!t || r < 0 || (int64_t)t->dims().size() > r) return std::nullopt;
  if (auto et = elemOf(x); et && *et != t->dataType()) return std::nullopt;
  return scalarConstant(c);
}

bool plainAttributes(const Node &n) {
  for (unsigned a = 0; a < n.numAttributes(); ++a)
    if (n.attribute(a).isReference()) return false;
  return true;
}

Value *peelScale(Value *v, PatternRewriter &rw, double &scale, std::vector<Node *> &seen) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || d->getGraph() != rw.root()->getGraph() || d->numOperands() != 2 ||
      !PatternRewriter::hasSingleLocalUse(v))
    return v;
  if (d->is("Mul")) {
    for (unsigned i = 0; i < 2; ++i)
      if (auto c = absorbedScalar(d->operand(1 - i), d->operand(i));
          c && !PatternRewriter::constantTensor(d->operand(i))) {
        scale *= *c;
        seen.push_back(d);
        return d->operand(i);
      }
  } else if (d->is("Div")) {
    if (auto c = absorbedScalar(d->operand(1), d->operand(0))) {
      scale /= *c;
      seen.push_back(d);
      return d->operand(0);
    }
  }
  return v;
}

bool seqSame(const Dim &m, const Dim &s) {
  return sameDim(m, s) || (m.isSymbolic() && m.expr && s.expr && dimMinOfOnly(m.expr, s.expr));
}

// Note [Softcap]
//  Gemma 2 and Grok cap the scaled scores before the mask: c * tanh(s / c)
//  (s / c as Div(s, c) or Mul(s, r) with r = 1/c within the element type's
//  rounding: 1e-6 relative for float and double, 2^-10 for float16, 2^-7 for
//  bfloat16), c a positive finite scalar constant, every node of single
//  use. Attention-23's softcap applies exactly that to Q·Kᵀ·scale, before
//  attn_mask is added (so -inf stays -inf), as the graph does; with r the
//  result differs by at most that relative change of tanh's argument.
Value *peelSoftcap(Value *v, PatternRewriter &rw, double &cap) {
  Node *mul = v ? v->definingNode() : nullptr;
  if (!mul || !mul->is("Mul") || mul->getGraph() != rw.root()->getGraph() || mul->numOperands() != 2 ||
      !PatternRewriter::hasSingleLocalUse(v))
    return v;
  for (unsigned i = 0; i < 2; ++i) {
    Node *t = mul->operand(i) ? mul->operand(i)->definingNode() : nullptr;
    if (!t || !t->is("Tanh") || t->getGraph() != mul->getGraph() || t->numOperands() != 1 ||
        !PatternRewriter::hasSingleLocalUse(mul->operand(i)))
      continue;
    auto c = absorbedScalar(mul->operand(1 - i), mul->operand(i));
    if (!c || !(*c > 0) || !std::isfinite(*c) || !std::isfinite((float)*c)) continue;
    double inner = 1.0;
    std::vector<Node *> seen;
    Value *x = peelScale(t->operand(0), rw, inner, seen);
    if (seen.size() != 1) continue;
    auto et = elemOf(x);
    double tol = et == DataType::Float16 ? 0x1p-10 : et == DataType::BFloat16 ? 0x1p-7 : 1e-6;
    if (std::fabs(inner * *c - 1.0) > tol) continue;
    cap = *c;
    return x;
  }
  return v;
}

std::optional<std::vector<int64_t>> transposePerm(const Node &t) {
  if (!plainAttributes(t) || t.numOperands() != 1) return std::nullopt;
  if (const Attribute *p = t.getAttr("perm")) return p->ints;
  int64_t r = rankOf(t.operand(0));
  if (r < 0) return std::nullopt;
  std::vector<int64_t> perm;
  for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

Permuted asPermuted(Value *v, PatternRewriter &rw) {
  Node *d = v ? v->definingNode() : nullptr;
  if (d && d->is("Transpose") && d->getGraph() == rw.root()->getGraph() &&
      PatternRewriter::hasSingleLocalUse(v))
    if (auto p = transposePerm(*d)) return {d->operand(0), *p};
  Permuted p{v, {}};
  for (int64_t i = 0, r = rankOf(v); i < r; ++i) p.perm.push_back(i);
  return p;
}

} // namespace attention
} // namespace onnxir
