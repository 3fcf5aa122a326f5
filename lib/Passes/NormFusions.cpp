//===- NormFusions.cpp - LayerNorm, RMSNorm and GELU into standard ops ----===//
//
// Issue 28: the normalisations and activations of transformer exports,
// written out as elementwise chains, into LayerNormalization (opset 17),
// RMSNormalization (23) and Gelu (20); issue 41: SiLU into Swish (24) and
// hard swish into HardSwish (14). Each pattern recognises its structure
// first and returns false silently when the root is not one; once the
// structure is there, every guard that refuses says why
// (Note [Near-miss reports], PatternRewrite.h), so `--fusion-report` tells a
// user why a LayerNorm was not fused. The numerical contract of each fusion
// is next to its code.
//
// Note [Norm guards]
//  What inference must prove before a chain becomes a normalisation op:
//  - the fused op exists at the default-domain opset in force (the registry
//    has its schema; `--target-opset=N -O2` converts first);
//  - the reduced axes, read from the attribute (ReduceMean < 18) or the
//    constant operand (>= 18), are, for an input of known rank r, the
//    trailing set {a, ..., r-1}: exactly what `axis = a` normalises;
//  - keepdims = 1 (with keepdims = 0 the mean would broadcast against the
//    wrong axes: the chain is not a normalisation at all, or is one over
//    other axes), and both ReduceMeans of a LayerNorm reduce the same axes;
//  - epsilon is a constant of one element whose rank does not exceed the
//    input's (so the Add does not broadcast the result up), of the input's
//    element type;
//  - the square is Pow(d, 2) with a constant exponent of exactly 2, or
//    Mul(d, d); the exponent and the 1 of Div(1, Sqrt(..)) are, like
//    epsilon, of one element and rank <= the input's (a [1,1,1,1] exponent
//    against a [2,3,4] input makes the chain's result [1,2,3,4], and its
//    positive axes then name other dims);
//  - every intermediate has no use outside the chain and is not a graph
//    output (the chain disappears);
//  - the element type is allowed by the fused op's schema at the model's
//    opset, and is not double (the statistics would be computed in float:
//    stash_type allows only float and bfloat16);
//  - a scale (bias) is absorbed only if its shape is exactly the normalised
//    shape X.shape[a:] (known dims) and its type is the input's; otherwise
//    the Mul (Add) stays after the fused op (still exact).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/Fusions.h"

#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>

namespace onnxir {

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The node defining `v` if it is `op` (default domain) in graph `g`.
Node *def(const Value *v, llvm::StringRef op, const Graph *g) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || !d->is(op) || d->getGraph() != g) return nullptr;
  return d;
}

/// True if every use of `v` is by a node in `users`, in v's graph, and v is
/// not a graph output.
bool usedOnlyBy(const Value *v, std::initializer_list<const Node *> users) {
  if (!v || v->isGraphOutput() || v->useEmpty()) return false;
  for (const Use &u : v->uses()) {
    const Node *o = u.getOwner();
    if (o->isReturn() || o->getGraph() != v->getGraph()) return false;
    if (std::find(users.begin(), users.end(), o) == users.end()) return false;
  }
  return true;
}

/// `Op "name"` for messages, or `Op -> 'result'` for an unnamed node.
std::string what(const Node *n) {
  if (!n->name().empty()) return absl::StrCat(n->opType().str(), " \"", n->name().str(), "\"");
  return absl::StrCat(n->opType().str(), " -> '",
                      n->numResults() && n->result(0) ? n->result(0)->name().str() : "", "'");
}
std::string what(const Value *v) { return absl::StrCat("'", v->name().str(), "'"); }

/// The one value of a constant of one element (any numeric type).
std::optional<double> scalarConstant(const Value *v, int64_t *rank = nullptr) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  if (!t) return std::nullopt;
  auto n = t->numElements();
  if (!n || *n != 1) return std::nullopt;
  auto vals = t->values<double>();
  if (!vals.ok() || vals->size() != 1) return std::nullopt;
  if (rank) *rank = (int64_t)t->dims().size();
  return (*vals)[0];
}

/// True if `x` is `want` within a relative tolerance `rel`.
bool near(double x, double want, double rel) {
  return std::isfinite(x) && std::fabs(x - want) <= rel * std::fabs(want);
}

// Note [Constant tolerance by element type]
//  A constant a pattern compares with an irrational value (sqrt(2), 1/6)
//  can be no closer than its element type allows: sqrt(2) written as
//  float16 is 1.4140625, 1.1e-4 off, and 0.044715 is 0.04470825, 1.5e-4
//  off, so a fixed 1e-4 refuses every float16 model. The tolerance is the
//  larger of what exporters print (1e-4 relative: 1.4142135, 0.7071) and
//  the type's unit roundoff: 2^-11 for float16, 2^-8 for bfloat16. float
//  and double keep 1e-4 (a float constant rounds to 6e-8; a tighter double
//  tolerance would refuse the float-printed constants double exports copy).
//  The fused op computes with the exact constants: the result moves by at
//  most that relative change of the constant, for 16-bit types inside the
//  chain's own rounding of every intermediate.
struct ConstTol {
  double rel;
  const char *text; // for messages
};

/// The tolerance for a constant of element type `dt` (Note [Constant
/// tolerance by element type]).
ConstTol tolFor(DataType dt) {
  if (dt == DataType::Float16) return {std::ldexp(1.0, -11), "2^-11, float16"};
  if (dt == DataType::BFloat16) return {std::ldexp(1.0, -8), "2^-8, bfloat16"};
  return {1e-4, "1e-4"};
}

/// The tolerance for the constant `v` (that of float if `v` is not one).
ConstTol tolFor(const Value *v) {
  const Tensor *t = PatternRewriter::constantTensor(v);
  return tolFor(t ? t->dataType() : DataType::Float);
}

/// The two operands of a binary `n` in the orders it may be read: both if
/// the registry says the op is commutative, else as written.
std::vector<std::pair<Value *, Value *>> operandOrders(const Node &n) {
  std::vector<std::pair<Value *, Value *>> out;
  if (n.numOperands() != 2 || !n.operand(0) || !n.operand(1)) return out;
  out.push_back({n.operand(0), n.operand(1)});
  if (isCommutative(n)) out.push_back({n.operand(1), n.operand(0)});
  return out;
}

/// Checks the fused op's existence at the opset in force and the element
/// type of `x` against its schema's constraint `T`; a non-empty string says
/// what fails (guard name first, then ": " and why).
std::string opAndTypeGuard(PatternRewriter &rw, llvm::StringRef op, const Value *x,
                           bool refuseDouble) {
  int64_t v = rw.opsetVersion();
  const OpSchema *s = v > 0 ? lookupSchema("", op, v) : nullptr;
  if (!s)
    return absl::StrCat("opset: the model's default-domain opset is ", v, "; ", op.str(),
                        " needs ", firstVersion(op), " (convert with --target-opset=", firstVersion(op),
                        " or later)");
  const Type *t = typedTensorType(x);
  if (!t) return absl::StrCat("type: the element type of ", what(x), " is unknown");
  std::string ts = typeString(*t);
  const TypeConstraint *tc = s->typeConstraint("T");
  if (tc && !tc->allows(ts))
    return absl::StrCat("type: ", s->str(), " does not take ", ts);
  if (refuseDouble && t->elemType() == DataType::Double)
    return absl::StrCat("type: ", ts, " would be normalised in float (", op.str(),
                        "'s stash_type is float or bfloat16)");
  return "";
}

/// Reports a guard message "guard: why".
bool reject(PatternRewriter &rw, llvm::StringRef msg) {
  auto [guard, why] = msg.split(':');
  return rw.rejected(guard, why.ltrim().str());
}

/// The axes a ReduceMean reduces, normalised for rank `r`; a non-empty
/// `err` says why they are not known.
std::optional<std::set<int64_t>> reducedAxes(const Node &rm, int64_t r, std::string &err) {
  NodeContext c(rm);
  // Note [Axes: attribute or operand] (Ops/OpFacts.h).
  NodeAxes read = readAxes(rm, PatternRewriter::constantTensor);
  if (read.kind == NodeAxes::NotConstant) {
    bool constant = PatternRewriter::constantTensor(rm.operand(read.operand));
    err = absl::StrCat("axes: the axes of ", what(&rm),
                       constant ? " cannot be read" : " are not a constant");
    return std::nullopt;
  }
  if (read.kind == NodeAxes::Reference) {
    err = absl::StrCat("axes: the axes of ", what(&rm), " are a function attribute");
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> axes;
  if (read.kind == NodeAxes::Known) axes = std::move(read.values);
  std::set<int64_t> out;
  if (!axes || axes->empty()) {
    if (read.fromOperand && c.getInt("noop_with_empty_axes", 0) != 0) {
      err = absl::StrCat("axes: ", what(&rm), " reduces nothing (noop_with_empty_axes)");
      return std::nullopt;
    }
    for (int64_t i = 0; i < r; ++i) out.insert(i);
    return out;
  }
  for (int64_t a : *axes) {
    if (a < -r || a >= r) {
      err = absl::StrCat("axes: axis ", a, " of ", what(&rm), " is out of range for rank ", r);
      return std::nullopt;
    }
    out.insert(a < 0 ? a + r : a);
  }
  return out;
}

/// The first axis `a` if `axes` is {a, ..., r-1}; -1 otherwise.
int64_t trailingStart(const std::set<int64_t> &axes, int64_t r) {
  if (axes.empty() || *axes.rbegin() != r - 1) return -1;
  int64_t a = *axes.begin();
  return (int64_t)axes.size() == r - a ? a : -1;
}

/// The known dims X.shape[a:], or nullopt if one is not known.
std::optional<std::vector<int64_t>> normalizedShape(const Value *x, int64_t a) {
  const Type *t = typedTensorType(x);
  if (!t || t->rank() < 0) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = a; i < t->rank(); ++i) {
    const Dim &d = t->dims()[i];
    if (!d.isKnown()) return std::nullopt;
    out.push_back(d.value);
  }
  return out;
}

/// True if `s` has exactly the dims `shape` and the element type of `x`.
bool isAffineOperand(const Value *s, const std::vector<int64_t> &shape, const Value *x) {
  const Tensor *c = PatternRewriter::constantTensor(s);
  const Type *xt = typedTensorType(x);
  if (!xt) return false;
  if (c) return c->dims() == shape && c->dataType() == xt->elemType();
  const Type *t = typedTensorType(s);
  if (!t || t->elemType() != xt->elemType() || t->rank() != (int64_t)shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!t->dims()[i].isKnown() || t->dims()[i].value != shape[i]) return false;
  return true;
}

/// A tensor of ones of type `dt` (float, float16, bfloat16) and `dims`.
std::optional<Tensor> ones(DataType dt, const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::string raw;
  if (dt == DataType::Float) {
    float one = 1.0f;
    for (int64_t i = 0; i < n; ++i) raw.append(reinterpret_cast<const char *>(&one), 4);
  } else if (dt == DataType::Float16 || dt == DataType::BFloat16) {
    uint16_t one = dt == DataType::Float16 ? 0x3C00 : 0x3F80;
    for (int64_t i = 0; i < n; ++i) raw.append(reinterpret_cast<const char *>(&one), 2);
  } else {
    return std::nullopt;
  }
  return makeTensor(dt, dims, std::move(raw));
}

//===----------------------------------------------------------------------===//
// The normalisation core: num / sqrt(ReduceMean(num^2) + eps)
//===----------------------------------------------------------------------===//

/// The chain every normalisation shares, rooted at the Div (or the Mul by
/// a reciprocal) that divides `num` by the root mean square.
struct NormCore {
  Value *num = nullptr;
  Node *root = nullptr, *recip = nullptr, *sqrt = nullptr, *add = nullptr, *mean = nullptr,
       *square = nullptr;
  Value *epsValue = nullptr;
};

/// 1 / s as Reciprocal(s) or Div(1, s): the Sqrt under it, else null.
Node *reciprocalOfSqrt(Value *v, const Graph *g, Node *&recip) {
  recip = def(v, "Reciprocal", g);
  if (recip) return def(recip->operand(0), "Sqrt", g);
  recip = def(v, "Div", g);
  if (!recip || recip->numOperands() != 2) return nullptr;
  auto one = scalarConstant(recip->operand(0));
  if (!one || *one != 1.0) return nullptr;
  return def(recip->operand(1), "Sqrt", g);
}

/// Recognises the structure (silently: nullopt when `root` is not one).
std::optional<NormCore> matchNormCore(Node &root) {
  const Graph *g = root.getGraph();
  if (root.numOperands() != 2 || root.numResults() != 1) return std::nullopt;
  NormCore c;
  c.root = &root;
  if (root.is("Div")) {
    c.num = root.operand(0);
    c.sqrt = def(root.operand(1), "Sqrt", g);
  } else if (root.is("Mul")) {
    for (auto [a, b] : operandOrders(root)) {
      Node *recip = nullptr;
      if (Node *s = reciprocalOfSqrt(b, g, recip)) {
        c.num = a;
        c.sqrt = s;
        c.recip = recip;
        break;
      }
    }
  }
  if (!c.num || !c.sqrt) return std::nullopt;
  c.add = def(c.sqrt->operand(0), "Add", g);
  if (!c.add) return std::nullopt;
  for (auto [a, b] : operandOrders(*c.add))
    if (Node *m = def(a, "ReduceMean", g)) {
      c.mean = m;
      c.epsValue = b;
      break;
    }
  if (!c.mean || c.mean->numOperands() < 1) return std::nullopt;
  Node *sq = c.mean->operand(0) ? c.mean->operand(0)->definingNode() : nullptr;
  if (!sq || sq->getGraph() != g || sq->numOperands() != 2) return std::nullopt;
  if (sq->is("Pow") && sq->operand(0) == c.num) c.square = sq;
  if (sq->is("Mul") && sq->operand(0) == c.num && sq->operand(1) == c.num) c.square = sq;
  if (!c.square) return std::nullopt;
  return c;
}

/// The axes a ReduceMean of the chain reduces (for rank `r`), after its
/// keepdims guard; nullopt after reporting.
std::optional<std::set<int64_t>> meanAxes(PatternRewriter &rw, const Node &mean, int64_t r) {
  if (NodeContext(mean).getInt("keepdims", 1) != 1) {
    rw.rejected("keepdims", absl::StrCat(what(&mean), " has keepdims=0"));
    return std::nullopt;
  }
  std::string err;
  auto axes = reducedAxes(mean, r, err);
  if (!axes) reject(rw, err);
  return axes;
}

/// The guards of the core (Note [Norm guards]) for an input of rank `r`;
/// returns the first axis normalised and sets `eps`, or -1 after reporting.
int64_t checkNormCore(const NormCore &c, PatternRewriter &rw, int64_t r, double &eps,
                      std::initializer_list<const Node *> numUsers) {
  auto no = [&](llvm::StringRef guard, const std::string &why) {
    rw.rejected(guard, why);
    return int64_t(-1);
  };
  if (c.square->is("Pow")) {
    int64_t expRank = 0;
    auto e = scalarConstant(c.square->operand(1), &expRank);
    if (!e || *e != 2.0)
      return no("exponent", absl::StrCat("the exponent of ", what(c.square),
                                                  " is not a constant 2"));
    if (expRank > r)
      return no("broadcast", absl::StrCat("the exponent ", what(c.square->operand(1)), " of ",
                                          what(c.square), " has rank ", expRank,
                                          " > ", r, ": it broadcasts the square up"));
  }
  if (c.recip && c.recip->is("Div")) {
    // Div(1, Sqrt(..)): matchNormCore checked the value; the 1 must not
    // broadcast either.
    int64_t oneRank = 0;
    if (!scalarConstant(c.recip->operand(0), &oneRank) || oneRank > r)
      return no("broadcast", absl::StrCat("the 1 ", what(c.recip->operand(0)), " of ",
                                          what(c.recip), " has rank ", oneRank, " > ", r,
                                          ": it broadcasts the quotient up"));
  }
  int64_t epsRank = 0;
  auto e = scalarConstant(c.epsValue, &epsRank);
  if (!e || !std::isfinite(*e) || epsRank > r)
    return no("epsilon", absl::StrCat(what(c.epsValue), " added by ", what(c.add),
                                               " is not a finite constant of one element "
                                               "and rank <= ", r));
  eps = *e;
  auto axes = meanAxes(rw, *c.mean, r);
  if (!axes) return -1;
  int64_t a = trailingStart(*axes, r);
  if (a < 0)
    return no("axes", absl::StrCat(what(c.mean),
                                            " does not reduce a trailing set of axes"));
  // Intermediates used only inside the chain.
  const std::pair<const Value *, const Node *> only[] = {
      {c.square->result(0), c.mean}, {c.mean->result(0), c.add}, {c.add->result(0), c.sqrt}};
  for (auto &[v, user] : only)
    if (!usedOnlyBy(v, {user}))
      return no("single use", absl::StrCat(what(v), " is used outside the chain"));
  if (c.recip && !usedOnlyBy(c.recip->result(0), {c.root}))
    return no("single use", absl::StrCat(what(c.recip->result(0)),
                                                  " is used outside the chain"));
  if (!usedOnlyBy(c.sqrt->result(0), {c.recip ? c.recip : c.root}))
    return no("single use", absl::StrCat(what(c.sqrt->result(0)),
                                                  " is used outside the chain"));
  if (numUsers.size() && !usedOnlyBy(c.num, numUsers))
    return no("single use", absl::StrCat(what(c.num), " is used outside the chain"));
  return a;
}

/// The scale Mul and bias Add after the normalised value `n` that the fused
/// op can absorb (Note [Norm guards]); each null if none.
void affineAfter(Value *n, const Value *x, const std::vector<int64_t> *shape, bool wantBias,
                 Node *&mul, Value *&scale, Node *&add, Value *&bias) {
  mul = add = nullptr;
  scale = bias = nullptr;
  if (!shape || !PatternRewriter::hasSingleLocalUse(n)) return;
  Node *u = n->firstUse()->getOwner();
  if (u->is("Mul") && u->numResults() == 1)
    for (auto [a, b] : operandOrders(*u))
      if (a == n && b != n && isAffineOperand(b, *shape, x)) {
        mul = u;
        scale = b;
        break;
      }
  Value *scaled = mul ? mul->result(0) : n;
  if (!wantBias || !PatternRewriter::hasSingleLocalUse(scaled)) return;
  u = scaled->firstUse()->getOwner();
  if (!u->is("Add") || u->numResults() != 1) return;
  for (auto [a, b] : operandOrders(*u))
    if (a == scaled && isAffineOperand(b, *shape, x)) {
      add = u;
      bias = b;
      break;
    }
}

/// The guards of a normalisation with input `x` fused into `op`: the op and
/// x's type (opAndTypeGuard), a known rank `r`, then the core's (checkNormCore). Returns the first axis normalised and
/// sets `r` and `eps`, or -1 after reporting.
int64_t checkNorm(const NormCore &c, PatternRewriter &rw, llvm::StringRef op,
                  const Value *x, std::initializer_list<const Node *> numUsers, int64_t &r,
                  double &eps) {
  if (std::string e = opAndTypeGuard(rw, op, x, true); !e.empty()) {
    reject(rw, e);
    return -1;
  }
  r = typedTensorType(x)->rank();
  if (r < 1) {
    rw.rejected("rank", absl::StrCat("the rank of ", what(x), " is unknown"));
    return -1;
  }
  int64_t a = checkNormCore(c, rw, r, eps, numUsers);
  if (a < 0) return a;
  // epsilon and a Div's 1 are computed in x's element type by the chain.
  DataType xe = typedTensorType(x)->elemType();
  for (const Value *k : {c.epsValue, c.recip && c.recip->is("Div") ? c.recip->operand(0) : nullptr})
    if (const Tensor *t = PatternRewriter::constantTensor(k); t && t->dataType() != xe) {
      rw.rejected("type", absl::StrCat("the constant ", what(k), " is not of ", what(x),
                                       "'s element type"));
      return -1;
    }
  return a;
}

/// The scale Mul (and, with `wantBias`, the bias Add) after `root` that the
/// fused op absorbs (affineAfter) for input `x` normalised from axis `a`;
/// without a scale, `scale` becomes a ones constant of the normalised shape.
/// False after reporting.
bool scaleOrOnes(PatternRewriter &rw, Node &root, Value *x, int64_t a, bool wantBias, Node *&mul,
                 Value *&scale, Node *&add, Value *&bias) {
  auto shape = normalizedShape(x, a);
  affineAfter(root.result(0), x, shape ? &*shape : nullptr, wantBias, mul, scale, add, bias);
  if (scale) return true;
  if (!shape)
    return rw.rejected("scale shape", absl::StrCat("the normalised dims of ", what(x),
                                                   " are not all known (a ones scale "
                                                   "needs them)"));
  auto t = ones(typedTensorType(x)->elemType(), *shape);
  if (!t) return rw.rejected("type", "no ones scale of this element type");
  scale = rw.createConstant(root.result(0)->name().str() + "_scale", std::move(*t));
  return true;
}

/// Replaces the chain's last node by `fused` and erases the chain (the
/// rewriter takes the producers that die with it along).
bool replaceChain(PatternRewriter &rw, Node *last, Node *fused) {
  fused->result(0)->setType(last->result(0)->type());
  return rw.replaceNode(last, {fused->result(0)});
}

/// Replaces the chain ending at `last` by the normalisation `op` of
/// `operands` with axis = a - r and epsilon (replaceChain). The fused
/// node's result takes the last node's type: it can always take over a
/// graph output (PatternRewriter::canReplace).
bool replaceByNorm(PatternRewriter &rw, Node *last, llvm::StringRef op,
                   llvm::ArrayRef<Value *> operands, int64_t a, int64_t r, double eps) {
  rw.setInsertionPoint(last);
  Node *fused = rw.create(op, operands);
  PatternRewriter::copyNodeInfo(*last, *fused);
  fused->setAttr(intAttr("axis", a - r));
  fused->setAttr(floatAttr("epsilon", (float)eps));
  return replaceChain(rw, last, fused);
}

//===----------------------------------------------------------------------===//
// LayerNorm -> LayerNormalization (opset 17)
//===----------------------------------------------------------------------===//

// mean = ReduceMean(x, axes), d = Sub(x, mean), var = ReduceMean(d^2, axes),
// y = d / Sqrt(var + eps) (or d * Reciprocal(Sqrt(..))), then optionally
// * scale and + bias -> LayerNormalization(x, scale or ones, bias, axis = a,
// epsilon = eps) (Note [Norm guards]).
// Contract: LayerNormalization-17 with stash_type = 1 computes the mean and
// 1/sqrt(var + eps) in float32 with the population variance E[(x-mean)^2],
// exactly the chain's formula. For float inputs the result differs from
// the chain only by the order of the roundings (a few ulps); for float16
// and bfloat16 inputs the fused op is more accurate (the chain rounds every
// intermediate to 16 bits): differences of the order of the 16-bit ulp.
// epsilon is rounded to float (the attribute's type): for a float or 16-bit
// chain that is its exact value.
bool fuseLayerNorm(Node &root, PatternRewriter &rw) {
  auto c = matchNormCore(root);
  if (!c) return false;
  const Graph *g = root.getGraph();
  Node *sub = def(c->num, "Sub", g);
  if (!sub || sub->numOperands() != 2) return false;
  Value *x = sub->operand(0);
  Node *mean = def(sub->operand(1), "ReduceMean", g);
  if (!mean || mean->operand(0) != x) return false;
  // The structure is a LayerNorm from here on: every refusal is reported.
  int64_t r = 0;
  double eps = 0;
  int64_t a = checkNorm(*c, rw, "LayerNormalization", x, {c->square, &root}, r, eps);
  if (a < 0) return false;
  auto axes = meanAxes(rw, *mean, r);
  if (!axes) return false;
  if (trailingStart(*axes, r) != a)
    return rw.rejected("axes", absl::StrCat(what(mean), " and ", what(c->mean),
                                            " reduce different axes"));
  if (!usedOnlyBy(mean->result(0), {sub}))
    return rw.rejected("single use",
                       absl::StrCat(what(mean->result(0)), " is used outside the chain"));
  Node *mul, *add;
  Value *scale, *bias;
  if (!scaleOrOnes(rw, root, x, a, true, mul, scale, add, bias)) return false;
  std::vector<Value *> ops{x, scale};
  if (bias) ops.push_back(bias);
  return replaceByNorm(rw, add ? add : mul ? mul : &root, "LayerNormalization", ops, a, r, eps);
}

//===----------------------------------------------------------------------===//
// RMSNorm -> RMSNormalization (opset 23)
//===----------------------------------------------------------------------===//

// Note [RMSNorm computed in float32]
//  Hugging Face's 16-bit RMSNorms (LLaMA, T5LayerNorm) compute in float32
//  and cast back before the weight: xf = Cast(x, float), the core on xf,
//  Cast(.., x's type), then * weight. That is RMSNormalization-23's own
//  function body for a float16/bfloat16 X with stash_type = 1 (X cast to
//  float, normalised, CastLike X, times the scale), so the two Casts go
//  into the fused op: RMSNormalization(x, weight), the same roundings.
//  Guards: the up Cast is to float from float16 or bfloat16, the core's
//  result has the one use, a Cast back to exactly x's type; the weight is
//  of x's type (Note [Norm guards]). Otherwise the core alone is fused on
//  xf (still exact) and the Casts stay.
//
/// The 16-bit x if `xf` is Cast(x, to = float) of a float16/bfloat16 x and
/// the core's result `y` is used once, by a Cast back to x's type (Note
/// [RMSNorm computed in float32]); `down` gets that Cast.
Value *upcastInput(Value *xf, Value *y, const Graph *g, Node *&down) {
  down = nullptr;
  Node *up = def(xf, "Cast", g);
  if (!up || up->numOperands() != 1 || NodeContext(*up).getInt("to", 0) != (int64_t)DataType::Float)
    return nullptr;
  Value *x = up->operand(0);
  const Type *xt = typedTensorType(x);
  if (!xt || (xt->elemType() != DataType::Float16 && xt->elemType() != DataType::BFloat16))
    return nullptr;
  if (!PatternRewriter::hasSingleLocalUse(y)) return nullptr;
  Node *d = y->firstUse()->getOwner();
  if (!d->is("Cast") || d->getGraph() != g || d->numResults() != 1 ||
      NodeContext(*d).getInt("to", 0) != (int64_t)xt->elemType())
    return nullptr;
  down = d;
  return x;
}

// y = x / Sqrt(ReduceMean(x^2, axes) + eps) (or x * Reciprocal(Sqrt(..)),
// or x * (1 / Sqrt(..))), then optionally * scale -> RMSNormalization(x,
// scale or ones, axis = a, epsilon = eps) (Note [Norm guards]). A numerator
// that is itself x - ReduceMean(x) is left to the LayerNorm pattern.
// Contract: RMSNormalization-23 with stash_type = 1 computes
// 1/sqrt(mean(x^2) + eps) in float32, the chain's formula: a few ulps for
// float; for 16-bit types more accurate than the chain (16-bit ulps). A
// 16-bit x computed in float32 takes its Casts along (Note [RMSNorm
// computed in float32]): the same function body.
bool fuseRMSNorm(Node &root, PatternRewriter &rw) {
  auto c = matchNormCore(root);
  if (!c) return false;
  const Graph *g = root.getGraph();
  Value *x = c->num;
  if (Node *sub = def(x, "Sub", g))
    if (Node *m = def(sub->operand(1), "ReduceMean", g); m && m->operand(0) == sub->operand(0))
      return false; // a LayerNorm
  int64_t r = 0;
  double eps = 0;
  int64_t a = checkNorm(*c, rw, "RMSNormalization", x, {}, r, eps);
  if (a < 0) return false;
  Node *down = nullptr;
  if (Value *x16 = upcastInput(x, root.result(0), g, down)) {
    // Note [RMSNorm computed in float32]: the Casts go into the fused op.
    if (std::string e = opAndTypeGuard(rw, "RMSNormalization", x16, true); !e.empty())
      return reject(rw, e);
    Node *mul, *add;
    Value *scale, *bias;
    if (!scaleOrOnes(rw, *down, x16, a, false, mul, scale, add, bias)) return false;
    return replaceByNorm(rw, mul ? mul : down, "RMSNormalization", {x16, scale}, a, r, eps);
  }
  Node *mul, *add;
  Value *scale, *bias;
  if (!scaleOrOnes(rw, root, x, a, false, mul, scale, add, bias)) return false;
  return replaceByNorm(rw, mul ? mul : &root, "RMSNormalization", {x, scale}, a, r, eps);
}


//===----------------------------------------------------------------------===//
// GELU -> Gelu (opset 20)
//===----------------------------------------------------------------------===//

// Note [GELU forms]
//  The product of three factors x, 0.5 and (1 + F), associated in any way
//  (Mul is commutative, and single-use inner Muls are flattened), where
//    exact: F = Erf(x / c) with c = sqrt(2), or Erf(x * c) with c = 1/sqrt(2);
//    tanh:  F = Tanh(c * (x + k * x^3)) with c = sqrt(2/pi), k = 0.044715,
//           x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x), and
//           k * x^3 + x in any order; also c * x + (c * k) * x^3 written
//           as c * (x + k * x^3) only (the distributed form is not matched);
//           or factored, c * x * (1 + k * x * x), products in any
//           association, x * x also as Pow(x, 2) (torch's and Hugging
//           Face's fast GELUs): the same polynomial, one rounding apart.
//  Constants match within a relative tolerance of 1e-4 for float and double
//  (exporters print sqrt(2) as 1.4142135 or 1.41421356; a hand-written
//  0.7071 is 1.5e-5 off), their type's rounding for float16 (2^-11) and
//  bfloat16 (2^-8) (Note [Constant tolerance by element type]): the fused
//  op uses the exact constants, so the result may differ from the chain by
//  up to that relative change of the Erf/Tanh argument, for float
//  |dy| <= 1e-4 * |x| * |x| * 0.4 roughly, far inside atol 1e-4 for the
//  activations of trained models; 0.5 and 1 and the exponent 3 must be
//  exact (every type writes them exactly).
// Contract: Gelu-20 computes the same formula (approximate = "none" or
// "tanh") with exact constants; in float the roundings differ (a few ulps).

/// The leaves of the product rooted at `n`: Mul operands, descending into
/// operands that are Muls of a single local use.
void mulLeaves(Node *n, llvm::SmallVectorImpl<Value *> &leaves, llvm::SmallVectorImpl<Node *> &muls) {
  muls.push_back(n);
  for (unsigned i = 0; i < 2; ++i) {
    Value *v = n->operand(i);
    Node *d = v ? v->definingNode() : nullptr;
    if (d && d->is("Mul") && d->getGraph() == n->getGraph() && d->numOperands() == 2 &&
        PatternRewriter::hasSingleLocalUse(v) && leaves.size() + muls.size() < 8)
      mulLeaves(d, leaves, muls);
    else
      leaves.push_back(v);
  }
}

/// The value x if `arg` is x / sqrt(2) or x * (1/sqrt(2)) (exact form).
Value *erfArgument(Value *arg, const Graph *g, Node *&op, std::string &bad) {
  op = arg ? arg->definingNode() : nullptr;
  if (!op || op->getGraph() != g || op->numOperands() != 2) return nullptr;
  if (op->is("Div")) {
    auto c = scalarConstant(op->operand(1));
    if (!c) return nullptr;
    ConstTol tol = tolFor(op->operand(1));
    if (!near(*c, std::sqrt(2.0), tol.rel))
      bad = absl::StrCat(what(op), " divides by ", *c, ", not sqrt(2) (tolerance ", tol.text, ")");
    return op->operand(0);
  }
  if (op->is("Mul"))
    for (auto [a, b] : operandOrders(*op))
      if (auto c = scalarConstant(b)) {
        ConstTol tol = tolFor(b);
        if (!near(*c, std::sqrt(0.5), tol.rel))
          bad = absl::StrCat(what(op), " multiplies by ", *c, ", not 1/sqrt(2) (tolerance ",
                             tol.text, ")");
        return a;
      }
  return nullptr;
}

/// True if `v` is x^3: Pow(x, 3) or a product of three x (Muls of single use).
bool isCube(Value *v, Value *x, const Graph *g, llvm::SmallVectorImpl<Node *> &chain) {
  Node *d = v ? v->definingNode() : nullptr;
  if (!d || d->getGraph() != g || d->numOperands() != 2) return false;
  if (d->is("Pow")) {
    auto e = scalarConstant(d->operand(1));
    if (d->operand(0) != x || !e || *e != 3.0) return false;
    chain.push_back(d);
    return true;
  }
  if (!d->is("Mul")) return false;
  for (auto [a, b] : operandOrders(*d)) {
    Node *sq = def(b, "Mul", g);
    if (a == x && sq && sq->operand(0) == x && sq->operand(1) == x) {
      chain.push_back(d);
      chain.push_back(sq);
      return true;
    }
  }
  return false;
}

/// The value x if `arg` is c * (x + k * x^3) (tanh form); `inner` gets the
/// nodes of the argument.
Value *tanhArgument(Value *arg, const Graph *g, llvm::SmallVectorImpl<Node *> &inner,
                    std::string &bad) {
  Node *outer = def(arg, "Mul", g);
  if (!outer) return nullptr;
  for (auto [cv, sv] : operandOrders(*outer)) {
    auto c = scalarConstant(cv);
    Node *sum = def(sv, "Add", g);
    if (!c || !sum) continue;
    for (auto [xv, kv] : operandOrders(*sum)) {
      Node *kmul = def(kv, "Mul", g);
      if (!kmul) continue;
      for (auto [k, cube] : operandOrders(*kmul)) {
        auto kc = scalarConstant(k);
        llvm::SmallVector<Node *, 2> cubeNodes;
        if (!kc || !isCube(cube, xv, g, cubeNodes)) continue;
        ConstTol ctol = tolFor(cv), ktol = tolFor(k);
        if (!near(*c, std::sqrt(2.0 / M_PI), ctol.rel))
          bad = absl::StrCat(what(outer), " multiplies by ", *c, ", not sqrt(2/pi) (tolerance ",
                             ctol.text, ")");
        else if (!near(*kc, 0.044715, ktol.rel))
          bad = absl::StrCat(what(kmul), " multiplies by ", *kc, ", not 0.044715 (tolerance ",
                             ktol.text, ")");
        inner.append({outer, sum, kmul});
        inner.append(cubeNodes.begin(), cubeNodes.end());
        return xv;
      }
    }
  }
  return nullptr;
}

/// The value x if `arg` is the factored tanh argument c * x * (1 + k * x * x)
/// (the same polynomial, as torch's and Hugging Face's fast GELUs write
/// it), each product associated in any way, x * x also as Pow(x, 2);
/// `inner` gets the nodes of the argument.
Value *factoredTanhArgument(Value *arg, const Graph *g, llvm::SmallVectorImpl<Node *> &inner,
                            std::string &bad) {
  Node *outer = def(arg, "Mul", g);
  if (!outer) return nullptr;
  llvm::SmallVector<Value *, 4> leaves;
  llvm::SmallVector<Node *, 4> muls;
  mulLeaves(outer, leaves, muls);
  if (leaves.size() != 3) return nullptr;
  for (Value *pl : leaves) {
    Node *sum = def(pl, "Add", g);
    if (!sum || !PatternRewriter::hasSingleLocalUse(pl)) continue;
    for (auto [one, kv] : operandOrders(*sum)) {
      auto o = scalarConstant(one);
      Node *kn = def(kv, "Mul", g);
      if (!o || *o != 1.0 || !kn) continue;
      // k * x * x: three leaves (k, x, x), or k and Pow(x, 2).
      llvm::SmallVector<Value *, 4> kl;
      llvm::SmallVector<Node *, 4> km;
      mulLeaves(kn, kl, km);
      Value *kc = nullptr, *x = nullptr;
      Node *pow = nullptr;
      int xs = 0;
      for (Value *l : kl) {
        if (scalarConstant(l) && !kc) {
          kc = l;
        } else if (Node *p = def(l, "Pow", g); p && kl.size() == 2 && p->numOperands() == 2 &&
                                                  scalarConstant(p->operand(1)) == 2.0) {
          pow = p;
          x = p->operand(0);
          xs = 2;
        } else if (!x || l == x) {
          x = l;
          ++xs;
        }
      }
      if (!kc || !x || xs != 2 || kl.size() != (pow ? 2u : 3u)) continue;
      // The outer product's other leaves: x and c.
      Value *cv = nullptr;
      bool haveX = false;
      for (Value *l : leaves) {
        if (l == pl) continue;
        if (l == x && !haveX) haveX = true;
        else if (scalarConstant(l)) cv = l;
      }
      if (!haveX || !cv) continue;
      ConstTol ctol = tolFor(cv), ktol = tolFor(kc);
      double c = *scalarConstant(cv), k = *scalarConstant(kc);
      if (!near(c, std::sqrt(2.0 / M_PI), ctol.rel))
        bad = absl::StrCat("the factored tanh argument multiplies by ", c,
                           ", not sqrt(2/pi) (tolerance ", ctol.text, ")");
      else if (!near(k, 0.044715, ktol.rel))
        bad = absl::StrCat(what(kn), " multiplies by ", k, ", not 0.044715 (tolerance ",
                           ktol.text, ")");
      inner.append(muls.begin(), muls.end());
      inner.push_back(sum);
      inner.append(km.begin(), km.end());
      if (pow) inner.push_back(pow);
      return x;
    }
  }
  return nullptr;
}

// GELU, exact and tanh (Note [GELU forms]), rooted at the outermost Mul of
// the product -> Gelu(x, approximate = "none" | "tanh").
bool fuseGelu(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  // Every Mul is tried: an inner Mul of the product has fewer than three
  // leaves, a product the GELU is part of (a GEGLU gate) more; neither is
  // a candidate.
  const Graph *g = root.getGraph();
  llvm::SmallVector<Value *, 4> leaves;
  llvm::SmallVector<Node *, 4> muls;
  mulLeaves(&root, leaves, muls);
  // Find the 1 + F factor.
  Node *onePlus = nullptr, *fn = nullptr;
  for (Value *l : leaves) {
    Node *add = def(l, "Add", g);
    if (!add) continue;
    for (auto [f, one] : operandOrders(*add)) {
      Node *e = def(f, "Erf", g);
      if (!e) e = def(f, "Tanh", g);
      auto o = scalarConstant(one);
      if (e && o && *o == 1.0) {
        onePlus = add;
        fn = e;
        break;
      }
    }
    if (onePlus) break;
  }
  if (!onePlus) return false;
  bool exact = fn->is("Erf");
  std::string bad;
  llvm::SmallVector<Node *, 6> inner;
  Value *x = nullptr;
  if (exact) {
    Node *op = nullptr;
    x = erfArgument(fn->operand(0), g, op, bad);
    if (op) inner.push_back(op);
  } else {
    x = tanhArgument(fn->operand(0), g, inner, bad);
    if (!x) x = factoredTanhArgument(fn->operand(0), g, inner, bad);
  }
  // The other leaves must be x and a constant 0.5 (the product of three).
  if (leaves.size() != 3) return false;
  // A product of three with 1 + Erf/Tanh and a constant is a GELU
  // candidate (the other factor its x): its refusals are reported.
  Value *other = nullptr;
  std::optional<double> half;
  for (Value *l : leaves) {
    if (l == onePlus->result(0)) continue;
    if (auto c = scalarConstant(l); c && !half) half = c;
    else other = l;
  }
  if (!half || !other) return false;
  if (!x)
    return rw.rejected("argument",
                       absl::StrCat("the argument of ", what(fn), " is not ",
                                    exact ? "x / sqrt(2) or x * (1/sqrt(2))"
                                          : "c * (x + k * x^3) or c * x * (1 + k * x * x)",
                                    ", its intermediates of one use (Note [GELU forms])"));
  if (other != x)
    return rw.rejected("argument", absl::StrCat("the product's factor ", what(other),
                                                " is not ", what(x), ", the argument of ",
                                                what(fn), " (a gate, not a GELU)"));
  // A GELU from here on: refusals are reported.
  if (!bad.empty()) return rw.rejected("constant", bad);
  if (*half != 0.5)
    return rw.rejected("constant", absl::StrCat("the product's constant factor is ", *half,
                                                ", not 0.5"));
  if (std::string e = opAndTypeGuard(rw, "Gelu", x, false); !e.empty())
    return reject(rw, e);
  // Every constant the fused op absorbs (0.5, the 1 of 1 + F, the Erf
  // divisor, the tanh form's coefficients) must not broadcast x up: one
  // element and rank <= x's (a [1,1,1,1] one makes a [3,4] x [1,1,3,4]);
  // and it has x's element type (the chain computes in it).
  const Type *xt = typedTensorType(x);
  llvm::SmallVector<Node *, 12> absorbing(muls.begin(), muls.end());
  absorbing.push_back(onePlus);
  absorbing.append(inner.begin(), inner.end());
  for (Node *n : absorbing)
    for (Value *v : n->operands()) {
      const Tensor *t = PatternRewriter::constantTensor(v);
      int64_t cr = 0;
      if (!t || !scalarConstant(v, &cr)) continue;
      if (xt->rank() < 0 || cr > xt->rank())
        return rw.rejected("broadcast", absl::StrCat("the constant ", what(v), " of ", what(n),
                                                     " has rank ", cr, ": it could broadcast ",
                                                     what(x), " up"));
      bool exponent = n->is("Pow") && n->numOperands() == 2 && v == n->operand(1);
      if (!exponent && t->dataType() != xt->elemType())
        return rw.rejected("type", absl::StrCat("the constant ", what(v), " of ", what(n),
                                                " is not of ", what(x), "'s element type"));
    }
  // Every intermediate is used only inside the chain.
  llvm::SmallVector<Node *, 12> chain(muls.begin() + 1, muls.end());
  chain.append({onePlus, fn});
  chain.append(inner.begin(), inner.end());
  for (Node *n : chain) {
    Value *v = n->result(0);
    bool inside = !v->isGraphOutput();
    for (const Use &u : v->uses())
      if (std::find(chain.begin(), chain.end(), u.getOwner()) == chain.end() &&
          u.getOwner() != &root)
        inside = false;
    if (!inside)
      return rw.rejected("single use", absl::StrCat(what(v), " is used outside the chain"));
  }
  Node *gelu = rw.create("Gelu", {x});
  PatternRewriter::copyNodeInfo(root, *gelu);
  if (!exact) gelu->setAttr(stringAttr("approximate", "tanh"));
  return replaceChain(rw, &root, gelu);
}

//===----------------------------------------------------------------------===//
// SiLU -> Swish (opset 24), Swish gates -> SwiGLU (28), hard swish -> HardSwish (14)
//===----------------------------------------------------------------------===//

// Note [Swish forms]
//  Swish(x; alpha) = x * Sigmoid(alpha * x) (Swish-24, alpha a float
//  attribute, default 1): x * Sigmoid(x) (torch's SiLU) and
//  x * Sigmoid(alpha * x) with alpha a constant of one element (the
//  sigmoid-approximated GELU writes 1.702), in either operand order of
//  both Muls. A Mul by a Sigmoid of another tensor is a gate (GLU, LSTM
//  style), not a candidate: it is left alone without a report line.
//  Guards, each reported: Swish exists at the opset in force and takes x's
//  element type; alpha is finite, of x's element type and of rank <= x's
//  (it must not broadcast x up), and float can hold it within the type's
//  tolerance (Swish's attribute is a float; Note [Constant tolerance by
//  element type]); the Sigmoid and the alpha Mul have no use outside the
//  chain (with a second use of the Sigmoid the chain would stay and Swish
//  recompute it).
// Contract: Swish-24's function body is this chain with alpha cast to x's
// type: the same roundings for float and 16-bit types (alpha of a 16-bit
// or float constant is exact in float); for double, alpha rounded to float
// (within 1e-4 relative, else refused).
bool fuseSwish(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  const Graph *g = root.getGraph();
  for (auto [x, sv] : operandOrders(root)) {
    Node *sig = def(sv, "Sigmoid", g);
    if (!sig || sig->numOperands() != 1 || !sig->operand(0)) continue;
    Value *arg = sig->operand(0);
    Node *scale = nullptr;
    Value *alphaValue = nullptr;
    if (arg != x) {
      scale = def(arg, "Mul", g);
      if (!scale) continue;
      for (auto [a, b] : operandOrders(*scale))
        if (a == x && b != x) alphaValue = b;
      if (!alphaValue) continue;
    }
    // A Swish from here on: refusals are reported.
    if (std::string e = opAndTypeGuard(rw, "Swish", x, false); !e.empty())
      return reject(rw, e);
    const Type *xt = typedTensorType(x);
    double alpha = 1.0;
    if (alphaValue) {
      int64_t cr = 0;
      auto c = scalarConstant(alphaValue, &cr);
      if (!c || !std::isfinite(*c))
        return rw.rejected("alpha", absl::StrCat(what(alphaValue), " of ", what(scale),
                                                 " is not a finite constant of one element"));
      if (xt->rank() < 0 || cr > xt->rank())
        return rw.rejected("broadcast", absl::StrCat("the constant ", what(alphaValue), " of ",
                                                     what(scale), " has rank ", cr,
                                                     ": it could broadcast ", what(x), " up"));
      if (PatternRewriter::constantTensor(alphaValue)->dataType() != xt->elemType())
        return rw.rejected("type", absl::StrCat("the constant ", what(alphaValue), " of ",
                                                what(scale), " is not of ", what(x),
                                                "'s element type"));
      ConstTol tol = tolFor(xt->elemType());
      if (*c != 0 && !near((double)(float)*c, *c, tol.rel))
        return rw.rejected("alpha", absl::StrCat(what(alphaValue), " is ", *c,
                                                 ": Swish's float alpha cannot hold it (tolerance ",
                                                 tol.text, ")"));
      alpha = *c;
    }
    if (!usedOnlyBy(sig->result(0), {&root}))
      return rw.rejected("single use",
                         absl::StrCat(what(sig->result(0)), " is used outside the chain"));
    if (scale && !usedOnlyBy(scale->result(0), {sig}))
      return rw.rejected("single use",
                         absl::StrCat(what(scale->result(0)), " is used outside the chain"));
    Node *swish = rw.create("Swish", {x});
    PatternRewriter::copyNodeInfo(root, *swish);
    if (alpha != 1.0) swish->setAttr(floatAttr("alpha", (float)alpha));
    return replaceChain(rw, &root, swish);
  }
  return false;
}

// Note [SwiGLU form]
//  SwiGLU(A, B; alpha) = Swish(A; alpha) * B (SwiGLU-28's function body), in
//  either operand order: the gated MLP of Llama-style decoders,
//  silu(gate_proj(x)) * up_proj(x), once its SiLU is a Swish (fuse-swish
//  comes first: the Swish must exist at the opset, 24 or later). SwiGLU does
//  not broadcast (A and B have one shape), so A's and B's shapes must be
//  provably the same: one known rank, each pair of dims the same integer or
//  the same symbol. A Mul of a Swish by anything else (a bias, a smaller
//  scale that broadcasts) is refused with a report line. The Swish has no
//  use outside the Mul. Swish(A) * Swish(B) takes the first as the gate.
// Contract: exact, the function body computes the same two steps.
bool fuseSwiGLU(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  const Graph *g = root.getGraph();
  for (auto [sv, b] : operandOrders(root)) {
    Node *swish = def(sv, "Swish", g);
    if (!swish || swish->numOperands() != 1 || !swish->operand(0)) continue;
    Value *a = swish->operand(0);
    // A SwiGLU from here on: refusals are reported.
    if (std::string e = opAndTypeGuard(rw, "SwiGLU", a, false); !e.empty())
      return reject(rw, e);
    const Type *at = typedTensorType(a), *bt = typedTensorType(b);
    if (!bt || bt->elemType() != at->elemType())
      return rw.rejected("type", absl::StrCat("the element type of ", what(b),
                                              " is not known to be ", what(a), "'s"));
    auto sameDim = [](const Dim &x, const Dim &y) {
      return (x.isKnown() && y.isKnown() && x.value == y.value) ||
             (x.isSymbolic() && y.isSymbolic() && x.param == y.param);
    };
    bool same = at->rank() >= 0 && at->rank() == bt->rank();
    for (int64_t i = 0; same && i < at->rank(); ++i)
      same = sameDim(at->dims()[i], bt->dims()[i]);
    if (!same)
      return rw.rejected("shape", absl::StrCat(what(a), " ", at->str(), " and ", what(b),
                                               " ", bt->str(),
                                               " are not provably of one shape (SwiGLU does "
                                               "not broadcast)"));
    if (!usedOnlyBy(swish->result(0), {&root}))
      return rw.rejected("single use",
                         absl::StrCat(what(swish->result(0)), " is used outside the chain"));
    Node *fused = rw.create("SwiGLU", {a, b});
    PatternRewriter::copyNodeInfo(root, *fused);
    float alpha = NodeContext(*swish).getFloat("alpha", 1.0f);
    if (alpha != 1.0f) fused->setAttr(floatAttr("alpha", alpha));
    return replaceChain(rw, &root, fused);
  }
  return false;
}

// Note [HardSwish form]
//  HardSwish(x) = x * HardSigmoid(x; alpha = 1/6, beta = 0.5) (HardSwish-14's
//  function body), in either operand order. alpha must match 1/6 within
//  the tolerance of x's element type (a float attribute, but the chain
//  applies it in x's type: Note [Constant tolerance by element type]);
//  beta must be exactly 0.5, which every type writes exactly (a shifted
//  beta moves the output by x * shift, relatively large where the hard
//  sigmoid is small). A HardSigmoid with another alpha or beta (its default
//  alpha 0.2, Keras' hard sigmoid) is another function and stays. The
//  HardSigmoid has no use outside the chain. A Mul by a HardSigmoid of
//  another tensor is a gate and is not a candidate.
// Contract: HardSwish computes x * max(0, min(1, x / 6 + 0.5)) with the
// exact 1/6: |dy| <= |x| * |x| * |alpha - 1/6|, for float under
// 1e-4 * |x| * |x| / 6; a few ulps for the chain as exporters write it
// (0.16666667).
bool fuseHardSwish(Node &root, PatternRewriter &rw) {
  if (root.numOperands() != 2 || root.numResults() != 1) return false;
  const Graph *g = root.getGraph();
  for (auto [x, hv] : operandOrders(root)) {
    Node *hs = def(hv, "HardSigmoid", g);
    if (!hs || hs->numOperands() != 1 || hs->operand(0) != x) continue;
    // A hard swish from here on: refusals are reported.
    if (std::string e = opAndTypeGuard(rw, "HardSwish", x, false); !e.empty())
      return reject(rw, e);
    NodeContext c(*hs);
    double alpha = c.getFloat("alpha", NAN), beta = c.getFloat("beta", NAN);
    ConstTol tol = tolFor(typedTensorType(x)->elemType());
    if (!near(alpha, 1.0 / 6.0, tol.rel))
      return rw.rejected("constant", absl::StrCat(what(hs), " has alpha ", alpha,
                                                  ", not 1/6 (tolerance ", tol.text, ")"));
    if (beta != 0.5)
      return rw.rejected("constant", absl::StrCat(what(hs), " has beta ", beta, ", not 0.5"));
    if (!usedOnlyBy(hs->result(0), {&root}))
      return rw.rejected("single use",
                         absl::StrCat(what(hs->result(0)), " is used outside the chain"));
    Node *fused = rw.create("HardSwish", {x});
    PatternRewriter::copyNodeInfo(root, *fused);
    return replaceChain(rw, &root, fused);
  }
  return false;
}

} // namespace

void populateNormFusionPatterns(PatternSet &ps) {
  // Rooted at the division by the root mean square (Div, or Mul by its
  // reciprocal); LayerNorm first (benefit), RMSNorm leaves it alone anyway.
  ps.add("fuse-layernorm", "Div", fuseLayerNorm, 3, {"LayerNormalization"});
  ps.add("fuse-layernorm", "Mul", fuseLayerNorm, 3, {"LayerNormalization"});
  ps.add("fuse-rmsnorm", "Div", fuseRMSNorm, 2, {"RMSNormalization"});
  ps.add("fuse-rmsnorm", "Mul", fuseRMSNorm, 2, {"RMSNormalization"});
  ps.add("fuse-gelu", "Mul", fuseGelu, 2, {"Gelu"});
  ps.add("fuse-swish", "Mul", fuseSwish, 2, {"Swish"});
  ps.add("fuse-hardswish", "Mul", fuseHardSwish, 2, {"HardSwish"});
  ps.add("fuse-swiglu", "Mul", fuseSwiGLU, 3, {"SwiGLU"});
}

} // namespace onnxir
