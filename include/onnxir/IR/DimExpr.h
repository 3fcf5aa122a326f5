//===- DimExpr.h - Symbolic dimension expressions -------------------------===//
//
// A dimension of a tensor shape is a known integer, unknown, or symbolic. A
// symbolic dimension carries a DimExpr: a symbol (`N`) or an expression over
// symbols with integer constants (`2*N`, `H+W-1`, `floordiv(H-1,2)+1`,
// `min(N,8)`). Expressions are immutable and uniqued in the Context, so two
// dims are equal exactly when their expression pointers are equal.
//
// Note [Canonical dim expressions]
// Every expression is kept as a sum of terms `coef * a1 * a2 * ...` plus a
// constant, where each atom `ai` is a symbol or one of floordiv/mod/min/max
// applied to canonical expressions. Products are distributed over sums,
// constants folded, like terms collected (so `a+b-a` is `b`), atoms within a
// term sorted by their text, terms sorted positive-first then by text,
// ceildiv(a,b) rewritten as floordiv(a+b-1,b), and floordiv/mod by a positive
// constant split: `floordiv(c*Q + R, c)` is `Q + floordiv(R, c)` (so
// `floordiv(2*N,2)` is `N`), `mod(c*Q + R, c)` is `mod(R, c)`. min/max are
// flattened, their constant arguments folded to one, duplicates removed and
// arguments that differ by a constant reduced to the larger/smaller one.
// Anything that would overflow int64 (or a product of more than 64 terms)
// gives no expression (null): the dim becomes unknown rather than wrong.
//
// Note [Dim expression size limit]
// The canonical text of an expression (a symbol's name aside) is at most
// kMaxDimExprChars characters. The text bounds everything an expression
// costs: its terms, min/max arguments and nesting, the work of every
// operation on it (each is O(n log n) in the operands' sizes: min/max find
// arguments that differ by a constant by sorting on their non-constant part,
// not by subtracting every pair), and the parsing of a dim_param (a longer
// dim_param is no expression's text, so it is an opaque symbol, unparsed).
// An operation whose result would be longer gives a fresh symbol
// (Context::freshSymbolDim, named expr__N: unlike other symbols it may stand
// for a negative value, Note [Dims are non-negative] in DimExpr.cpp, since
// shape data such as a - b are built by the same operations): the dim stays
// symbolic and equal to itself, and
// a chain of operations (Concat over many symbolic inputs, Max over many
// shapes) restarts from that symbol, so its cost is linear in its length.
// The parser (parseDimExpr, --input-shape) reports such text as an error.
// Every expression made is interned once; a dim made from an expression
// (Context::dimOf) records its dim_param, so types built from it never parse
// the text again.
//
// Note [Dim expression text]
// The text of an expression is its stable serialized form, used as the
// dim_param of an expression dim in the ONNX file:
//
//   expr   := ['-'] term (('+' | '-') term)*
//   term   := factor ('*' factor)*
//   factor := INTEGER | IDENT | '{' ESCAPED '}' | FUNC '(' expr (',' expr)* ')'
//             | '(' expr ')'
//   FUNC   := floordiv | ceildiv | mod | min | max   (floordiv, ceildiv, mod: 2 args)
//   IDENT  := [A-Za-z_][A-Za-z0-9_]*   (a name followed by '(' is a FUNC)
//
// A symbol that is not an IDENT (e.g. a model's `batch size`) is written in
// braces with `\` escaping `}` and `\`. Printing never emits spaces or '('
// groups; the parser accepts both (for user input such as --input-shape).
//
// Note [Lossless dim_param]
// Reading a dim_param string P gives the expression E = parse(P) only when E
// is not a constant and the dim_param of E is P byte for byte; otherwise P
// is an opaque symbol named P. So every dim_param a model has is written back
// unchanged, `N+1` (our format) reads as an expression and `1+N` (not
// canonical) stays a symbol. The dim_param of a symbol is its name, of any
// other expression its text.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_DIMEXPR_H
#define ONNXIR_IR_DIMEXPR_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Context;

/// Longest canonical text of a non-symbol expression (Note [Dim expression
/// size limit]).
inline constexpr size_t kMaxDimExprChars = 1024;

/// An immutable, uniqued dimension expression (see Note [Canonical dim
/// expressions]). Obtain instances from the functions below.
class DimExpr {
public:
  enum class Kind : uint8_t { Constant, Symbol, Add, Mul, FloorDiv, Mod, Min, Max };

  Kind kind() const { return kind_; }
  bool isConstant() const { return kind_ == Kind::Constant; }
  bool isSymbol() const { return kind_ == Kind::Symbol; }
  /// Constant: its value. Add: the constant term. Mul: the coefficient.
  int64_t value() const { return value_; }
  /// Symbol: its name.
  llvm::StringRef name() const { return name_; }
  /// Add: the non-constant terms. Mul: the atoms (sorted, repeated for
  /// powers). FloorDiv/Mod: {dividend, divisor}. Min/Max: the arguments.
  llvm::ArrayRef<const DimExpr *> operands() const { return ops_; }
  /// The canonical text (Note [Dim expression text]).
  llvm::StringRef str() const { return str_; }
  /// The dim_param string of a dim holding this expression: a symbol's name,
  /// else the text.
  llvm::StringRef dimParam() const { return isSymbol() ? name_ : str_; }
  /// True if no symbol occurs in it.
  bool isGround() const { return ground_; }

  /// The value given values of the symbols (`lookup` returns nullopt for an
  /// unbound one). nullopt if a symbol is unbound, on division by zero or on
  /// overflow.
  std::optional<int64_t>
  evaluate(llvm::function_ref<std::optional<int64_t>(llvm::StringRef)> lookup) const;
  /// Calls `fn` on every symbol occurring in the expression (with repeats).
  void forEachSymbol(llvm::function_ref<void(const DimExpr *)> fn) const;

private:
  friend struct DimExprBuilder;
  friend class Context;
  DimExpr() = default;
  Kind kind_ = Kind::Constant;
  bool ground_ = true;
  /// Set once the Context's table of dim_params maps `param_` to this
  /// expression (Context::dimOf): a dim of this expression then needs no
  /// lookup of its dim_param.
  mutable bool ownsParam_ = false;
  unsigned hash_ = 0; ///< of its structure (Note [Structural uniquing], Context.h)
  /// dimParam() interned, once a dim has been made of it.
  mutable llvm::StringRef param_;
  int64_t value_ = 0;
  llvm::StringRef name_, str_;
  std::vector<const DimExpr *> ops_;
};

//===--- Building expressions ---------------------------------------------===//
// Every function returns a canonical, uniqued expression, or null when an
// argument is null or the result cannot be represented (overflow, division by
// a non-positive constant). A result longer than kMaxDimExprChars is a fresh
// symbol instead. Arithmetic on dims assumes integer symbols.

const DimExpr *dimConst(Context &ctx, int64_t v);
/// The expression a dim_param string stands for (Note [Lossless dim_param]).
const DimExpr *dimFromParam(Context &ctx, llvm::StringRef param);
/// Parses expression text (Note [Dim expression text]), spaces allowed. A
/// name in it reads as dimFromParam(name). Null and `*err` set on bad text.
const DimExpr *parseDimExpr(Context &ctx, llvm::StringRef text, std::string *err = nullptr);
const DimExpr *dimAdd(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimSub(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimNeg(Context &ctx, const DimExpr *a);
const DimExpr *dimMul(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimFloorDiv(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimCeilDiv(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimMod(Context &ctx, const DimExpr *a, const DimExpr *b);
const DimExpr *dimMin(Context &ctx, llvm::ArrayRef<const DimExpr *> args);
const DimExpr *dimMax(Context &ctx, llvm::ArrayRef<const DimExpr *> args);
/// True if `e` is provably at least 0 (Note [Dims are non-negative] in
/// DimExpr.cpp: every symbol is a dimension); false if unknown or null.
bool dimNonNegative(const DimExpr *e);
/// Note [Slices of fixed buffers]
/// True if `a` is min(b, c1, ..., ck) with every ci a constant of at least
/// 2 (a slice of a fixed-size buffer to a sequence length, `bias[:S]` of a
/// [P] buffer, infers as min(P, S)). Then a and b broadcast against each
/// other only when they are equal: a == 1 forces b == 1 (no ci is 1), and
/// b == 1 makes a == 1. So the broadcast's dim is b, and where a model
/// runs, a is b.
bool dimMinOfOnly(const DimExpr *a, const DimExpr *b);
/// Replaces symbols: `fn(symbol)` gives the replacement or null to keep it.
const DimExpr *dimSubstitute(Context &ctx, const DimExpr *e,
                             llvm::function_ref<const DimExpr *(const DimExpr *)> fn);

/// True if `param` would be read back as an expression that is not a plain
/// symbol (i.e. it is in our expression format).
bool isDimExprParam(Context &ctx, llvm::StringRef param);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_DIMEXPR_H
