//===- DimExpr.cpp - Canonical, uniqued dimension expressions -------------===//
//
// Expressions are normalised through a linear form (Lin): a list of terms
// coef * monomial plus a constant, a monomial being a sorted list of atoms
// (symbols, floordiv, mod, min, max). See Note [Canonical dim expressions].
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/DimExpr.h"
#include "onnxir/IR/Context.h"
#include "onnxir/Support/LLVMCompat.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace onnxir {

namespace {
constexpr size_t kMaxTerms = 64;
/// The fresh symbols standing for an expression too long to keep
/// (orFresh): values of unknown sign (Note [Dims are non-negative]).
constexpr llvm::StringLiteral kValueSymbolPrefix = "expr__";

bool isIdent(llvm::StringRef s) {
  if (s.empty() || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(isalnum((unsigned char)c) || c == '_')) return false;
  return true;
}

bool isFunc(llvm::StringRef s) {
  return s == "floordiv" || s == "ceildiv" || s == "mod" || s == "min" || s == "max";
}

bool mulOv(int64_t a, int64_t b, int64_t &r) {
  return __builtin_mul_overflow(a, b, &r) || r == INT64_MIN;
}
bool addOv(int64_t a, int64_t b, int64_t &r) {
  return __builtin_add_overflow(a, b, &r) || r == INT64_MIN;
}
int64_t floorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floorModI(int64_t a, int64_t b) { return a - floorDivI(a, b) * b; }

using Mono = llvm::SmallVector<const DimExpr *, 2>;
struct Term {
  Mono mono;
  int64_t coef;
};
struct Lin {
  std::vector<Term> terms;
  int64_t c = 0;
};

bool monoLess(const Mono &a, const Mono &b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    return a[i]->str() < b[i]->str();
  }
  return a.size() < b.size();
}
void sortMono(Mono &m) {
  std::sort(m.begin(), m.end(),
            [](const DimExpr *x, const DimExpr *y) { return x->str() < y->str(); });
}
} // namespace

/// Creates and uniques nodes; the friend of Context and DimExpr.
struct DimExprBuilder {
  Context &ctx;
  /// Set when an expression was refused for its size (Note [Dim expression
  /// size limit]); the public functions then make a fresh symbol.
  bool tooLarge = false;

  /// The expression of kind `k` with number `v` (Constant: its value, Add:
  /// the constant term, Mul: the coefficient), operands `ops` and, for a
  /// symbol, `name`; `text` writes its canonical text, which is built only
  /// for an expression not made before (Note [Structural uniquing] in
  /// Context.h).
  const DimExpr *make(DimExpr::Kind k, int64_t v, llvm::ArrayRef<const DimExpr *> ops,
                      llvm::function_ref<void(std::string &)> text,
                      llvm::StringRef name = {}) {
    Context::ExprKey key{k, v, ops, name, Context::hashExprKey(k, v, ops, name)};
    auto found = ctx.exprSet_.find_as(key);
    if (found != ctx.exprSet_.end()) return *found;
    std::string str;
    text(str);
    if (k != DimExpr::Kind::Symbol && str.size() > kMaxDimExprChars) {
      tooLarge = true;
      return nullptr;
    }
    // Text and structure determine each other for canonical expressions;
    // should they not, the text decides, as it always did.
    auto it = ctx.exprs_.find(str);
    if (it != ctx.exprs_.end()) return it->second;
    auto e = std::unique_ptr<DimExpr>(new DimExpr());
    e->kind_ = k;
    e->value_ = v;
    e->ops_.assign(ops.begin(), ops.end());
    e->hash_ = key.hash;
    e->ground_ = k == DimExpr::Kind::Constant;
    for (const DimExpr *o : e->ops_) e->ground_ &= o->ground_;
    if (k == DimExpr::Kind::Symbol) {
      e->ground_ = false;
      e->name_ = ctx.intern(name);
      ctx.symbolNames_[name] = 1;
    }
    DimExpr *raw = e.get();
    auto ins = ctx.exprs_.try_emplace(str, raw);
    raw->str_ = ins.first->getKey();
    ctx.exprStorage_.push_back(std::move(e));
    ctx.exprSet_.insert(raw);
    return raw;
  }

  const DimExpr *constant(int64_t v) {
    auto text = [&](std::string &s) { s = std::to_string(v); };
    if (v >= 0 && v < Context::kSmallConstants) {
      const DimExpr *&c = ctx.smallConstants_[v];
      if (!c) c = make(DimExpr::Kind::Constant, v, {}, text);
      return c;
    }
    return make(DimExpr::Kind::Constant, v, {}, text);
  }

  const DimExpr *symbol(llvm::StringRef name) {
    auto text = [&](std::string &s) {
      if (isIdent(name)) {
        s = name.str();
        return;
      }
      s = "{";
      for (char c : name) {
        if (c == '}' || c == '\\') s += '\\';
        s += c;
      }
      s += '}';
    };
    return make(DimExpr::Kind::Symbol, 0, {}, text, name);
  }

  static bool isAtom(const DimExpr *e) {
    switch (e->kind()) {
    case DimExpr::Kind::Symbol:
    case DimExpr::Kind::FloorDiv:
    case DimExpr::Kind::Mod:
    case DimExpr::Kind::Min:
    case DimExpr::Kind::Max:
      return true;
    default:
      return false;
    }
  }

  static Lin toLin(const DimExpr *e) {
    Lin l;
    switch (e->kind()) {
    case DimExpr::Kind::Constant:
      l.c = e->value();
      break;
    case DimExpr::Kind::Add:
      l.c = e->value();
      for (const DimExpr *t : e->operands()) {
        Lin tl = toLin(t);
        for (Term &x : tl.terms) l.terms.push_back(std::move(x));
      }
      break;
    case DimExpr::Kind::Mul:
      l.terms.push_back(Term{Mono(e->operands().begin(), e->operands().end()), e->value()});
      break;
    default:
      l.terms.push_back(Term{Mono{e}, 1});
      break;
    }
    return l;
  }

  /// Sorts terms, merges equal monomials, drops zero terms. False on overflow.
  static bool normalize(Lin &l) {
    // Sorted through pointers: moving a Term copies its monomial.
    std::vector<Term *> order;
    order.reserve(l.terms.size());
    for (Term &t : l.terms) order.push_back(&t);
    std::sort(order.begin(), order.end(),
              [](const Term *a, const Term *b) { return monoLess(a->mono, b->mono); });
    std::vector<Term> out;
    out.reserve(order.size());
    for (Term *t : order) {
      if (!out.empty() && out.back().mono == t->mono) {
        if (addOv(out.back().coef, t->coef, out.back().coef)) return false;
      } else {
        out.push_back(std::move(*t));
      }
      if (out.back().coef == 0) out.pop_back();
    }
    l.terms = std::move(out);
    return true;
  }

  const DimExpr *monoExpr(int64_t coef, const Mono &m) {
    if (coef == 1 && m.size() == 1) return m[0];
    auto text = [&](std::string &s) {
      if (coef == -1) s = "-";
      else if (coef != 1) s = std::to_string(coef) + "*";
      for (size_t i = 0; i < m.size(); ++i) {
        if (i) s += '*';
        s.append(m[i]->str().data(), m[i]->str().size());
      }
    };
    return make(DimExpr::Kind::Mul, coef, m, text);
  }

  const DimExpr *fromLin(Lin l) {
    if (!normalize(l)) return nullptr;
    if (l.terms.empty()) return constant(l.c);
    if (l.terms.size() == 1 && l.c == 0) return monoExpr(l.terms[0].coef, l.terms[0].mono);
    // Positive terms first, each sign in monomial order. The text's length
    // is counted as the terms are made, so an expression over the limit
    // stops early (Note [Dim expression size limit]).
    llvm::SmallVector<const DimExpr *, 8> ops;
    size_t len = 0, positive = 0;
    for (bool negative : {false, true})
      for (const Term &t : l.terms) {
        if ((t.coef < 0) != negative) continue;
        const DimExpr *te = monoExpr(t.coef, t.mono);
        if (!te) return nullptr;
        if (len && t.coef > 0) ++len;
        len += te->str().size();
        if (len > kMaxDimExprChars) {
          tooLarge = true;
          return nullptr;
        }
        ops.push_back(te);
        positive += t.coef > 0;
      }
    auto text = [&](std::string &s) {
      for (size_t i = 0; i < ops.size(); ++i) {
        if (i && i < positive) s += '+';
        s.append(ops[i]->str().data(), ops[i]->str().size());
      }
      if (l.c > 0) s += "+" + std::to_string(l.c);
      else if (l.c < 0) s += std::to_string(l.c);
    };
    return make(DimExpr::Kind::Add, l.c, ops, text);
  }

  static bool addLin(Lin &a, const Lin &b, int64_t scale) {
    for (const Term &t : b.terms) {
      int64_t c;
      if (mulOv(t.coef, scale, c)) return false;
      a.terms.push_back(Term{t.mono, c});
    }
    int64_t c;
    if (mulOv(b.c, scale, c) || addOv(a.c, c, a.c)) return false;
    return true;
  }

  const DimExpr *add(const DimExpr *a, const DimExpr *b, int64_t scaleB) {
    if (!a || !b) return nullptr;
    Lin l = toLin(a);
    if (!addLin(l, toLin(b), scaleB)) return nullptr;
    return fromLin(std::move(l));
  }

  const DimExpr *mul(const DimExpr *a, const DimExpr *b) {
    if (!a || !b) return nullptr;
    Lin la = toLin(a), lb = toLin(b);
    if ((la.terms.size() + 1) * (lb.terms.size() + 1) > kMaxTerms) return nullptr;
    Lin r;
    for (const Term &x : la.terms)
      for (const Term &y : lb.terms) {
        Term t;
        if (mulOv(x.coef, y.coef, t.coef)) return nullptr;
        t.mono = x.mono;
        t.mono.append(y.mono.begin(), y.mono.end());
        sortMono(t.mono);
        r.terms.push_back(std::move(t));
      }
    if (!addLin(r, Lin{la.terms, 0}, lb.c) || !addLin(r, Lin{lb.terms, 0}, la.c)) return nullptr;
    int64_t c;
    if (mulOv(la.c, lb.c, c) || addOv(r.c, c, r.c)) return nullptr;
    return fromLin(std::move(r));
  }

  /// If every term of `a` is divisible by the single term `b`, the quotient.
  const DimExpr *exactDiv(const Lin &a, const Lin &b) {
    if (b.terms.size() != 1 || b.c != 0 || a.c != 0) return nullptr;
    const Term &d = b.terms[0];
    Lin q;
    for (const Term &t : a.terms) {
      if (t.coef % d.coef != 0) return nullptr;
      Mono rest = t.mono;
      for (const DimExpr *x : d.mono) {
        auto it = std::find(rest.begin(), rest.end(), x);
        if (it == rest.end()) return nullptr;
        rest.erase(it);
      }
      if (rest.empty()) {
        if (addOv(q.c, t.coef / d.coef, q.c)) return nullptr;
      } else {
        q.terms.push_back(Term{rest, t.coef / d.coef});
      }
    }
    return fromLin(std::move(q));
  }

  const DimExpr *binaryAtom(DimExpr::Kind k, const DimExpr *a, const DimExpr *b) {
    const DimExpr *ops[] = {a, b};
    return make(k, 0, ops, [&](std::string &s) {
      s = k == DimExpr::Kind::FloorDiv ? "floordiv(" : "mod(";
      s += a->str().str() + "," + b->str().str() + ")";
    });
  }

  const DimExpr *floorDiv(const DimExpr *a, const DimExpr *b) {
    if (!a || !b) return nullptr;
    if (b->isConstant()) {
      int64_t k = b->value();
      if (k <= 0) return nullptr;
      if (k == 1) return a;
      if (a->isConstant()) return constant(floorDivI(a->value(), k));
      Lin l = toLin(a), q, r;
      for (const Term &t : l.terms) {
        int64_t qc = floorDivI(t.coef, k), rc = floorModI(t.coef, k);
        if (qc) q.terms.push_back(Term{t.mono, qc});
        if (rc) r.terms.push_back(Term{t.mono, rc});
      }
      q.c = floorDivI(l.c, k);
      r.c = floorModI(l.c, k);
      const DimExpr *qe = fromLin(std::move(q));
      if (r.terms.empty()) return qe;
      const DimExpr *re = fromLin(std::move(r));
      if (!re || !qe) return nullptr;
      const DimExpr *atom;
      // floordiv(floordiv(X, m), k) = floordiv(X, m*k) for positive m, k.
      int64_t mk;
      if (re->kind() == DimExpr::Kind::FloorDiv && re->operands()[1]->isConstant() &&
          !mulOv(re->operands()[1]->value(), k, mk))
        atom = floorDiv(re->operands()[0], constant(mk));
      else
        atom = binaryAtom(DimExpr::Kind::FloorDiv, re, b);
      return add(qe, atom, 1);
    }
    if (a == b) return constant(1);
    if (a->isConstant() && a->value() == 0) return a;
    if (const DimExpr *q = exactDiv(toLin(a), toLin(b))) return q;
    return binaryAtom(DimExpr::Kind::FloorDiv, a, b);
  }

  const DimExpr *mod(const DimExpr *a, const DimExpr *b) {
    if (!a || !b) return nullptr;
    if (b->isConstant()) {
      int64_t k = b->value();
      if (k <= 0) return nullptr;
      if (k == 1) return constant(0);
      if (a->isConstant()) return constant(floorModI(a->value(), k));
      Lin l = toLin(a), r;
      for (const Term &t : l.terms)
        if (int64_t rc = floorModI(t.coef, k)) r.terms.push_back(Term{t.mono, rc});
      r.c = floorModI(l.c, k);
      const DimExpr *re = fromLin(std::move(r));
      if (!re || re->isConstant()) return re;
      return binaryAtom(DimExpr::Kind::Mod, re, b);
    }
    if (a == b) return constant(0);
    if (a->isConstant() && a->value() == 0) return a;
    if (exactDiv(toLin(a), toLin(b))) return constant(0);
    return binaryAtom(DimExpr::Kind::Mod, a, b);
  }

  /// The non-constant part of `e` (the terms of a sum, else `e` itself) and
  /// its constant: `e` and `f` differ by a constant exactly when their
  /// parts are equal, since both are canonical.
  static std::pair<llvm::ArrayRef<const DimExpr *>, int64_t> splitConstant(const DimExpr *const &e) {
    if (e->kind() == DimExpr::Kind::Add) return {e->operands(), e->value()};
    return {llvm::ArrayRef<const DimExpr *>(e), 0};
  }

  //===--- Note [Dims are non-negative] ----------------------------------===//
  // Every symbol stands for a dimension (a dim_param, or a fresh symbol made
  // for an unknown dim), so it is at least 0; so is any sum or product of
  // such with non-negative coefficients and constant, a floor division or
  // modulus of them, a min of them all or a max of any of them. The
  // exception: the fresh symbols that replace an expression too long to
  // keep (kValueSymbolPrefix) stand for whatever that expression was, and
  // shape data are values built by the same operations (`a - b` of two dims
  // may be negative), so their sign is unknown. Min and max
  // use it to drop a constant bound at or below 0: the length of Range(0, N)
  // is max(N, 0) by the formula and N by this fact, which lets a fusion see
  // that a cache sliced to it has N rows.
  static bool nonNegative(const DimExpr *e) {
    switch (e->kind()) {
    case DimExpr::Kind::Constant: return e->value() >= 0;
    case DimExpr::Kind::Symbol: return !startsWith(e->name(), kValueSymbolPrefix);
    case DimExpr::Kind::Add:
    case DimExpr::Kind::Mul:
    case DimExpr::Kind::FloorDiv:
    case DimExpr::Kind::Mod:
    case DimExpr::Kind::Min:
      if ((e->kind() == DimExpr::Kind::Add || e->kind() == DimExpr::Kind::Mul) && e->value() < 0)
        return false;
      return std::all_of(e->operands().begin(), e->operands().end(), nonNegative);
    case DimExpr::Kind::Max:
      return std::any_of(e->operands().begin(), e->operands().end(), nonNegative);
    }
    return false;
  }

  const DimExpr *minMax(DimExpr::Kind k, llvm::ArrayRef<const DimExpr *> in) {
    bool isMin = k == DimExpr::Kind::Min;
    std::vector<const DimExpr *> args;
    llvm::SmallPtrSet<const DimExpr *, 16> seen;
    std::optional<int64_t> cst;
    llvm::SmallVector<const DimExpr *, 8> work(in.begin(), in.end());
    while (!work.empty()) {
      const DimExpr *e = work.pop_back_val();
      if (!e) return nullptr;
      if (e->kind() == k) {
        work.append(e->operands().begin(), e->operands().end());
      } else if (e->isConstant()) {
        cst = !cst ? e->value() : isMin ? std::min(*cst, e->value()) : std::max(*cst, e->value());
      } else if (seen.insert(e).second) {
        args.push_back(e);
      }
    }
    // Of arguments that differ by a constant only the smallest (min) or
    // largest (max) stays: min(N, N+1) = N. Grouped by their non-constant
    // part (sorting, not comparing every pair: Note [Dim expression size
    // limit]); the constant argument is the group of the empty part.
    std::sort(args.begin(), args.end(), [](const DimExpr *x, const DimExpr *y) {
      auto px = splitConstant(x).first, py = splitConstant(y).first;
      return std::lexicographical_compare(px.begin(), px.end(), py.begin(), py.end(),
                                          std::less<const DimExpr *>());
    });
    std::vector<const DimExpr *> kept;
    for (const DimExpr *e : args) {
      if (!kept.empty() && splitConstant(kept.back()).first == splitConstant(e).first) {
        int64_t cb = splitConstant(kept.back()).second, ce = splitConstant(e).second;
        if (isMin ? ce < cb : ce > cb) kept.back() = e;
        continue;
      }
      kept.push_back(e);
    }
    // Note [Dims are non-negative]: a constant at or below 0 is dominated by
    // a provably non-negative argument: max(N, 0) = N, min(N, -1) = -1.
    if (cst && *cst <= 0) {
      if (isMin && std::all_of(kept.begin(), kept.end(), nonNegative)) return constant(*cst);
      if (!isMin && std::any_of(kept.begin(), kept.end(), nonNegative)) cst.reset();
    }
    if (cst) kept.push_back(constant(*cst));
    args = std::move(kept);
    if (args.empty()) return nullptr;
    if (args.size() == 1) return args[0];
    std::sort(args.begin(), args.end(),
              [](const DimExpr *x, const DimExpr *y) { return x->str() < y->str(); });
    size_t len = 4; // "min(" or "max("
    for (size_t i = 0; i < args.size(); ++i) {
      len += (i ? 1 : 0) + args[i]->str().size();
      if (len > kMaxDimExprChars) {
        tooLarge = true;
        return nullptr;
      }
    }
    return make(k, 0, args, [&](std::string &s) {
      s = isMin ? "min(" : "max(";
      for (size_t i = 0; i < args.size(); ++i) {
        if (i) s += ',';
        s.append(args[i]->str().data(), args[i]->str().size());
      }
      s += ')';
    });
  }

  const DimExpr *fromParam(llvm::StringRef param);
};

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
struct ExprParser {
  ExprParser(DimExprBuilder &b, llvm::StringRef s) : b(b), s(s) {}
  DimExprBuilder &b;
  llvm::StringRef s;
  size_t i = 0;
  std::string err;
  unsigned depth = 0;

  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool fail(const std::string &m) {
    if (err.empty()) err = m + " at offset " + std::to_string(i);
    return false;
  }
  /// Why an operation gave no expression: its size or an overflow.
  void failNull(const std::string &m) {
    if (b.tooLarge)
      fail("expression longer than " + std::to_string(kMaxDimExprChars) +
           " characters (onnxir::kMaxDimExprChars)");
    else
      fail(m);
  }
  bool peek(char c) {
    ws();
    return i < s.size() && s[i] == c;
  }

  const DimExpr *expr() {
    if (++depth > 64) {
      fail("expression nested too deeply");
      return nullptr;
    }
    const DimExpr *acc = nullptr;
    bool neg = false;
    if (peek('-')) {
      ++i;
      neg = true;
    }
    acc = term();
    if (!acc) return nullptr;
    if (neg) acc = b.mul(acc, b.constant(-1));
    for (;;) {
      if (!acc) {
        failNull("arithmetic overflow");
        return nullptr;
      }
      if (peek('+')) {
        ++i;
        const DimExpr *t = term();
        if (!t) return nullptr;
        acc = b.add(acc, t, 1);
      } else if (peek('-')) {
        ++i;
        const DimExpr *t = term();
        if (!t) return nullptr;
        acc = b.add(acc, t, -1);
      } else {
        break;
      }
    }
    --depth;
    return acc;
  }

  const DimExpr *term() {
    const DimExpr *acc = factor();
    while (acc && peek('*')) {
      ++i;
      const DimExpr *f = factor();
      if (!f) return nullptr;
      acc = b.mul(acc, f);
      if (!acc) failNull("arithmetic overflow");
    }
    return acc;
  }

  const DimExpr *factor() {
    ws();
    if (i >= s.size()) {
      fail("expected a dimension term");
      return nullptr;
    }
    char c = s[i];
    if (isdigit((unsigned char)c)) {
      int64_t v = 0;
      while (i < s.size() && isdigit((unsigned char)s[i])) {
        if (mulOv(v, 10, v) || addOv(v, s[i] - '0', v)) {
          fail("integer too large");
          return nullptr;
        }
        ++i;
      }
      return b.constant(v);
    }
    if (c == '(') {
      ++i;
      const DimExpr *e = expr();
      if (!e) return nullptr;
      if (!peek(')')) {
        fail("expected ')'");
        return nullptr;
      }
      ++i;
      return e;
    }
    if (c == '{') {
      std::string name;
      ++i;
      for (;;) {
        if (i >= s.size()) {
          fail("unterminated '{'");
          return nullptr;
        }
        char x = s[i++];
        if (x == '}') break;
        if (x == '\\') {
          if (i >= s.size()) {
            fail("unterminated '{'");
            return nullptr;
          }
          x = s[i++];
        }
        name += x;
      }
      return b.fromParam(name);
    }
    if (isalpha((unsigned char)c) || c == '_') {
      size_t st = i;
      while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '_')) ++i;
      llvm::StringRef id = s.slice(st, i);
      if (isFunc(id) && peek('(')) {
        ++i;
        std::vector<const DimExpr *> args;
        for (;;) {
          const DimExpr *a = expr();
          if (!a) return nullptr;
          args.push_back(a);
          if (peek(',')) {
            ++i;
            continue;
          }
          if (peek(')')) {
            ++i;
            break;
          }
          fail("expected ',' or ')'");
          return nullptr;
        }
        const DimExpr *r = nullptr;
        if (id == "min" || id == "max") {
          r = b.minMax(id == "min" ? DimExpr::Kind::Min : DimExpr::Kind::Max, args);
        } else {
          if (args.size() != 2) {
            fail(id.str() + " takes two arguments");
            return nullptr;
          }
          if (id == "floordiv") r = b.floorDiv(args[0], args[1]);
          else if (id == "mod") r = b.mod(args[0], args[1]);
          else r = b.floorDiv(b.add(args[0], b.add(args[1], b.constant(1), -1), 1), args[1]);
        }
        if (!r) failNull("invalid " + id.str() + " (overflow or non-positive divisor)");
        return r;
      }
      return b.symbol(id);
    }
    fail(std::string("unexpected '") + c + "'");
    return nullptr;
  }
};
} // namespace

const DimExpr *DimExprBuilder::fromParam(llvm::StringRef param) {
  llvm::StringRef key = ctx.intern(param);
  auto it = ctx.paramExprs_.find(key.data());
  if (it != ctx.paramExprs_.end()) return it->second;
  const DimExpr *e = nullptr;
  // Text longer than the limit is no expression's text: a symbol, unparsed.
  if (!isIdent(param) && param.size() <= kMaxDimExprChars) {
    ExprParser p(*this, param);
    e = p.expr();
    p.ws();
    if (e && (p.i != param.size() || e->isConstant() || e->dimParam() != param)) e = nullptr;
  }
  if (!e) e = symbol(param);
  ctx.paramExprs_[key.data()] = e;
  // The expression's dim_param is `param` (parsed back only when equal,
  // else a symbol so named): a dim of it needs no lookup from now on.
  if (!e->param_.data()) e->param_ = key;
  e->ownsParam_ = e->param_.data() == key.data();
  return e;
}

//===----------------------------------------------------------------------===//
// Public functions
//===----------------------------------------------------------------------===//

namespace {
/// `r`, or a fresh symbol when `b` refused an expression for its size
/// (Note [Dim expression size limit]); null stays null otherwise. The
/// symbol stands for a computed value, which may be negative (the
/// difference of two dims, as shape data): its prefix tells nonNegative.
const DimExpr *orFresh(DimExprBuilder &b, const DimExpr *r) {
  if (r || !b.tooLarge) return r;
  return b.ctx.exprOf(b.ctx.freshSymbolDim(kValueSymbolPrefix));
}
} // namespace

const DimExpr *dimConst(Context &ctx, int64_t v) {
  if (v == INT64_MIN) return nullptr;
  return DimExprBuilder{ctx}.constant(v);
}
const DimExpr *dimFromParam(Context &ctx, llvm::StringRef param) {
  return DimExprBuilder{ctx}.fromParam(param);
}
const DimExpr *parseDimExpr(Context &ctx, llvm::StringRef text, std::string *err) {
  DimExprBuilder b{ctx};
  ExprParser p(b, text);
  const DimExpr *e = p.expr();
  p.ws();
  if (e && p.i != text.size()) {
    p.fail("unexpected text");
    e = nullptr;
  }
  if (!e && err) *err = p.err.empty() ? "invalid dimension expression" : p.err;
  return e;
}
const DimExpr *dimAdd(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.add(a, b, 1));
}
const DimExpr *dimSub(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.add(a, b, -1));
}
const DimExpr *dimNeg(Context &ctx, const DimExpr *a) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.mul(a, bd.constant(-1)));
}
const DimExpr *dimMul(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.mul(a, b));
}
const DimExpr *dimFloorDiv(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.floorDiv(a, b));
}
const DimExpr *dimCeilDiv(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  if (!a || !b) return nullptr;
  return orFresh(bd, bd.floorDiv(bd.add(a, bd.add(b, bd.constant(1), -1), 1), b));
}
const DimExpr *dimMod(Context &ctx, const DimExpr *a, const DimExpr *b) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.mod(a, b));
}
const DimExpr *dimMin(Context &ctx, llvm::ArrayRef<const DimExpr *> args) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.minMax(DimExpr::Kind::Min, args));
}
const DimExpr *dimMax(Context &ctx, llvm::ArrayRef<const DimExpr *> args) {
  DimExprBuilder bd{ctx};
  return orFresh(bd, bd.minMax(DimExpr::Kind::Max, args));
}

bool dimNonNegative(const DimExpr *e) { return e && DimExprBuilder::nonNegative(e); }

const DimExpr *dimSubstitute(Context &ctx, const DimExpr *e,
                             llvm::function_ref<const DimExpr *(const DimExpr *)> fn) {
  if (!e || e->isGround()) return e;
  DimExprBuilder b{ctx};
  switch (e->kind()) {
  case DimExpr::Kind::Constant:
    return e;
  case DimExpr::Kind::Symbol: {
    const DimExpr *r = fn(e);
    return r ? r : e;
  }
  case DimExpr::Kind::Add: {
    const DimExpr *acc = b.constant(e->value());
    for (const DimExpr *t : e->operands()) acc = b.add(acc, dimSubstitute(ctx, t, fn), 1);
    return orFresh(b, acc);
  }
  case DimExpr::Kind::Mul: {
    const DimExpr *acc = b.constant(e->value());
    for (const DimExpr *t : e->operands()) acc = b.mul(acc, dimSubstitute(ctx, t, fn));
    return orFresh(b, acc);
  }
  case DimExpr::Kind::FloorDiv:
    return orFresh(b, b.floorDiv(dimSubstitute(ctx, e->operands()[0], fn),
                                 dimSubstitute(ctx, e->operands()[1], fn)));
  case DimExpr::Kind::Mod:
    return orFresh(b, b.mod(dimSubstitute(ctx, e->operands()[0], fn),
                            dimSubstitute(ctx, e->operands()[1], fn)));
  case DimExpr::Kind::Min:
  case DimExpr::Kind::Max: {
    std::vector<const DimExpr *> args;
    for (const DimExpr *t : e->operands()) args.push_back(dimSubstitute(ctx, t, fn));
    return orFresh(b, b.minMax(e->kind(), args));
  }
  }
  return nullptr;
}

bool isDimExprParam(Context &ctx, llvm::StringRef param) {
  return !dimFromParam(ctx, param)->isSymbol();
}

std::optional<int64_t> DimExpr::evaluate(
    llvm::function_ref<std::optional<int64_t>(llvm::StringRef)> lookup) const {
  auto ev = [&](const DimExpr *e) { return e->evaluate(lookup); };
  switch (kind_) {
  case Kind::Constant:
    return value_;
  case Kind::Symbol:
    return lookup(name_);
  case Kind::Add:
  case Kind::Mul: {
    // value_ is the constant term (sum) or coefficient (product); an overflow
    // anywhere makes the whole expression unknown.
    bool add = kind_ == Kind::Add;
    int64_t acc = value_;
    for (const DimExpr *t : ops_) {
      auto v = ev(t);
      if (!v || (add ? addOv(acc, *v, acc) : mulOv(acc, *v, acc))) return std::nullopt;
    }
    return acc;
  }
  case Kind::FloorDiv:
  case Kind::Mod: {
    auto a = ev(ops_[0]), b = ev(ops_[1]);
    if (!a || !b || *b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
    return kind_ == Kind::FloorDiv ? floorDivI(*a, *b) : floorModI(*a, *b);
  }
  case Kind::Min:
  case Kind::Max: {
    std::optional<int64_t> acc;
    for (const DimExpr *t : ops_) {
      auto v = ev(t);
      if (!v) return std::nullopt;
      acc = !acc ? *v : kind_ == Kind::Min ? std::min(*acc, *v) : std::max(*acc, *v);
    }
    return acc;
  }
  }
  return std::nullopt;
}

void DimExpr::forEachSymbol(llvm::function_ref<void(const DimExpr *)> fn) const {
  if (kind_ == Kind::Symbol) fn(this);
  for (const DimExpr *o : ops_) o->forEachSymbol(fn);
}

//===----------------------------------------------------------------------===//
// Context hooks
//===----------------------------------------------------------------------===//

Dim Context::dimOf(const DimExpr *e) {
  if (!e) return Dim::unknown();
  if (e->isConstant()) return e->value() >= 0 ? Dim::known(e->value()) : Dim::unknown();
  Dim d;
  d.kind = Dim::Kind::Symbolic;
  d.param = paramOf(e);
  d.expr = e;
  // The dim_param of an expression reads back as that expression (Note
  // [Lossless dim_param]): record it, so that the types made from it find it
  // without parsing the text again. Once recorded (or found recorded), the
  // expression owns its dim_param and later dims of it skip this.
  if (!e->ownsParam_) e->ownsParam_ = paramExprs_.try_emplace(d.param.data(), e).first->second == e;
  return d;
}

const DimExpr *Context::exprOfSlow(const Dim &d) {
  if (d.isKnown()) return dimConst(*this, d.value);
  if (!d.isSymbolic()) return nullptr;
  return d.expr ? d.expr : dimFromParam(*this, d.param);
}

//===--- Note [Types a shape gives back] ----------------------------------===//
// Most results of a shape rule have the type of one of their operands (a
// unary op, an elementwise op without broadcasting, a Reshape to the same
// shape): the rule reads the operand's dims as expressions (exprOf) and
// gives them back (InferCtx::setTensor: dimOf per expression, then
// getTensorType, which hashes the dims and probes the uniqued types, a
// seventh of inference's instructions). When the expressions are those of
// an operand's type `t` and `t` is canonical, that lookup finds `t`:
//   - `t` is a tensor type with an element type and a shape, and nothing
//     else (no denotation, extras or inner type), so the key of the lookup,
//     which has none of these either, can equal it;
//   - each known dim is >= 0 and its expression the constant of its value
//     (dimOf turns a negative constant into an unknown dim); each unknown
//     dim has a null expression; no dim has a denotation;
//   - each symbolic dim has exactly its type's expression, which is not a
//     constant and already owns its dim_param (ownsParam_): then dimOf gives
//     the same param and expression and records nothing new, and the
//     lookup keys the dim by that expression (symbolicExpr), as `t` is.
// These are the fields TypeKeyInfo::isEqual compares, so under them the
// lookup returns `t` (types are unique per key) and nothing else happens on
// the way; when they do not hold, the caller takes the lookup, so the
// answer never differs from it.

namespace {
/// The parts of Note [Types a shape gives back] that are about `t` alone.
bool plainShapedTensor(const Type *t) {
  return t && t->kind() == Type::Kind::Tensor && t->hasElemType() && t->hasShape() &&
         !t->elementType() && t->denotation().empty() && t->extras().empty() &&
         t->opaqueDomain().empty() && t->opaqueName().empty();
}
} // namespace

bool Context::isTensorTypeOf(const Type *t, DataType elem,
                             llvm::ArrayRef<const DimExpr *> exprs) const {
  // The rank and element type first: most operands that are not the
  // result's type differ there.
  if (!t || t->dims().size() != exprs.size() || t->elemTypeRaw() != static_cast<int32_t>(elem) ||
      !plainShapedTensor(t))
    return false;
  for (size_t i = 0; i < exprs.size(); ++i) {
    const Dim &d = t->dims()[i];
    const DimExpr *e = exprs[i];
    if (!d.denotation.empty()) return false;
    switch (d.kind) {
    case Dim::Kind::Known:
      if (d.value < 0 || !e || !e->isConstant() || e->value() != d.value) return false;
      break;
    case Dim::Kind::Unknown:
      if (e) return false;
      break;
    case Dim::Kind::Symbolic:
      if (!e || e != d.expr || e->isConstant() || !e->ownsParam_) return false;
      break;
    }
  }
  return true;
}

bool Context::remakesItself(const Type *t) const {
  // (An undefined element type makes no type at all.)
  if (!plainShapedTensor(t) || t->elemTypeRaw() <= 0) return false;
  for (const Dim &d : t->dims()) {
    // exprOf(d) is the constant of a known dim, null for an unknown one and
    // the expression of a symbolic one (a context's types always hold it).
    if (!d.denotation.empty()) return false;
    if (d.isKnown() && d.value < 0) return false;
    if (d.isSymbolic() && (!d.expr || d.expr->isConstant() || !d.expr->ownsParam_)) return false;
  }
  return true;
}

Dim Context::freshSymbolDim(llvm::StringRef prefix) {
  std::string name;
  do {
    name = prefix.str() + std::to_string(nextFreshSymbol_++);
  } while (symbolNames_.count(name) || exprs_.count(name));
  return dimOf(dimFromParam(*this, name));
}

bool Context::isKnownSymbol(llvm::StringRef name) const { return symbolNames_.count(name); }

bool dimMinOfOnly(const DimExpr *a, const DimExpr *b) {
  if (!a || !b || a->kind() != DimExpr::Kind::Min || b->isConstant()) return false;
  bool hasB = false;
  for (const DimExpr *x : a->operands()) {
    if (x == b) hasB = true;
    else if (!x->isConstant() || x->value() < 2) return false;
  }
  return hasB;
}

} // namespace onnxir
