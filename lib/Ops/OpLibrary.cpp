//===- OpLibrary.cpp - Custom-domain operators declared in a file ---------===//
//
// Reads an op library (docs/op-library.md), checks every declaration, then
// registers schemas, shape rules and function bodies. See OpLibrary.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpLibrary.h"

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Text/Text.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
// g++ 12 at -O2 warns, wrongly, that LLVM 14's hex format style (reached
// through JSON.h's FormatVariadic) may be used uninitialized; the warning is
// in LLVM's header, not ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "llvm/Support/JSON.h"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

namespace onnxir {

//===--- Shape rules ------------------------------------------------------===//

namespace {

/// A cursor over a rule's text; errors name the (1-based) column.
class RuleLexer {
public:
  explicit RuleLexer(llvm::StringRef text) : text_(text) {}
  void skip() {
    while (pos_ < text_.size() && std::isspace((unsigned char)text_[pos_])) ++pos_;
  }
  bool atEnd() {
    skip();
    return pos_ >= text_.size();
  }
  bool eat(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  /// An identifier (letters, digits, '_'), or "".
  std::string word() {
    skip();
    size_t b = pos_;
    while (pos_ < text_.size() && (std::isalnum((unsigned char)text_[pos_]) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(b, pos_ - b).str();
  }
  /// An optionally signed integer.
  std::optional<int64_t> integer() {
    skip();
    size_t b = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_])) ++pos_;
    int64_t v = 0;
    if (pos_ == digits || text_.substr(b, pos_ - b).getAsInteger(10, v)) {
      pos_ = b;
      return std::nullopt;
    }
    return v;
  }
  bool peekDigitOrMinus() {
    skip();
    return pos_ < text_.size() && (std::isdigit((unsigned char)text_[pos_]) || text_[pos_] == '-');
  }
  absl::Status error(const std::string &what) {
    skip();
    return absl::InvalidArgumentError(absl::StrCat("column ", pos_ + 1, ": ", what));
  }
  size_t mark() const { return pos_; }
  void reset(size_t p) { pos_ = p; }

private:
  llvm::StringRef text_;
  size_t pos_ = 0;
};

/// Index of `w` as `<prefix>N` or as a name of `names`; -1 if neither.
int formalIndex(const std::string &w, const char *prefix, const std::vector<std::string> &names,
                bool variadic) {
  llvm::StringRef s(w);
  unsigned n = 0;
  if (s.consume_front(prefix) && !s.empty() && !s.getAsInteger(10, n)) {
    if (n < names.size() || (variadic && !names.empty())) return (int)n;
    return -1;
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == w) return (int)i;
  return -1;
}

/// The one element type the type string `t` names (`tensor(float)`), or 0.
int32_t elemOfTypeString(llvm::StringRef t) {
  if (!t.consume_front("tensor(") || !t.consume_back(")")) return 0;
  auto d = dataTypeFromName(t);
  return d ? (int32_t)*d : 0;
}

} // namespace

absl::StatusOr<ShapeRule> parseShapeRule(llvm::StringRef text, const ShapeRuleScope &scope) {
  RuleLexer lx(text);
  ShapeRule r;
  r.text = text.str();
  auto input = [&](const std::string &w) -> absl::StatusOr<unsigned> {
    int i = formalIndex(w, "in", scope.inputs, scope.variadicInputs);
    if (i < 0)
      return lx.error(absl::StrCat("\"", w, "\" is not an input (in0..in",
                                   scope.inputs.empty() ? 0 : scope.inputs.size() - 1,
                                   " or an input's name)"));
    return (unsigned)i;
  };
  lx.skip();
  size_t outAt = lx.mark();
  std::string out = lx.word();
  if (out.empty()) return lx.error("expected an output (out0 or an output's name)");
  int o = formalIndex(out, "out", scope.outputs, false);
  if (o < 0) {
    lx.reset(outAt);
    return lx.error(absl::StrCat("\"", out, "\" is not an output of the op"));
  }
  r.output = (unsigned)o;
  if (!lx.eat(':')) return lx.error("expected ':' after the output");
  if (lx.eat('?')) {
    r.form = ShapeRule::Form::UnknownRank;
  } else if (lx.eat('[')) {
    r.form = ShapeRule::Form::Dims;
    if (!lx.eat(']')) {
      do {
        ShapeRuleDim d;
        if (lx.eat('?')) {
          d.kind = ShapeRuleDim::Kind::Unknown;
        } else if (lx.peekDigitOrMinus()) {
          size_t at = lx.mark();
          auto v = lx.integer();
          if (!v || *v < 0) {
            lx.reset(at);
            return lx.error("expected a non-negative extent");
          }
          d.kind = ShapeRuleDim::Kind::Const;
          d.value = *v;
        } else {
          size_t at = lx.mark();
          std::string w = lx.word();
          if (w.empty()) return lx.error("expected a dim: inN.K, attr.NAME, an integer or ?");
          if (!lx.eat('.')) return lx.error(absl::StrCat("expected '.' after \"", w, "\""));
          if (w == "attr") {
            lx.skip();
            size_t nameAt = lx.mark();
            std::string name = lx.word();
            auto it = std::find_if(scope.intAttrs.begin(), scope.intAttrs.end(),
                                   [&](const ShapeRuleScope::IntAttr &a) { return a.name == name; });
            if (it == scope.intAttrs.end()) {
              lx.reset(nameAt);
              return lx.error(absl::StrCat("\"", name, "\" is not an int attribute of the op"));
            }
            d.kind = ShapeRuleDim::Kind::Attr;
            d.attr = name;
            d.attrHasDefault = it->hasDefault;
            d.attrDefault = it->value;
          } else {
            size_t dot = lx.mark();
            lx.reset(at);
            auto in = input(w);
            if (!in.ok()) return in.status();
            lx.reset(dot);
            auto k = lx.integer();
            if (!k) return lx.error(absl::StrCat("expected a dim index after \"", w, ".\""));
            d.kind = ShapeRuleDim::Kind::InputDim;
            d.input = *in;
            d.value = *k;
          }
        }
        r.dims.push_back(std::move(d));
      } while (lx.eat(','));
      if (!lx.eat(']')) return lx.error("expected ',' or ']'");
    }
  } else {
    size_t at = lx.mark();
    if (lx.word() != "same") {
      lx.reset(at);
      return lx.error("expected 'same as inN', '[...]' or '?'");
    }
    if (lx.word() != "as") return lx.error("expected 'as' after 'same'");
    at = lx.mark();
    std::string w = lx.word();
    lx.reset(at);
    auto in = input(w);
    if (!in.ok()) return in.status();
    lx.word();
    r.form = ShapeRule::Form::SameAs;
    r.sameAs = *in;
    r.elemInput = (int)*in;
  }
  if (!lx.atEnd()) {
    size_t at = lx.mark();
    if (lx.word() != "of") {
      lx.reset(at);
      return lx.error("expected 'of' (the element type) or the end of the rule");
    }
    at = lx.mark();
    std::string w = lx.word();
    if (w.empty()) return lx.error("expected an input or an element type after 'of'");
    int i = formalIndex(w, "in", scope.inputs, scope.variadicInputs);
    if (i >= 0) {
      r.elemInput = i;
      r.elemFixed = 0;
    } else if (auto d = dataTypeFromName(w)) {
      r.elemInput = -1;
      r.elemFixed = (int32_t)*d;
    } else {
      lx.reset(at);
      return lx.error(absl::StrCat("\"", w, "\" is neither an input nor an element type"));
    }
    if (!lx.atEnd()) return lx.error("expected the end of the rule");
  } else if (r.elemInput < 0) {
    // What the output's formal type tells (Note [Shape rules]).
    std::string t = r.output < scope.outputTypes.size() ? scope.outputTypes[r.output] : "";
    if (int32_t e = elemOfTypeString(t)) {
      r.elemFixed = e;
    } else {
      for (const auto &c : scope.constraints)
        if (c.first == t && c.second.size() == 1) r.elemFixed = elemOfTypeString(c.second[0]);
      for (size_t j = 0; j < scope.inputTypes.size() && !r.elemFixed && r.elemInput < 0; ++j)
        if (scope.inputTypes[j] == t) r.elemInput = (int)j;
    }
    if (!r.elemFixed && r.elemInput < 0)
      return lx.error(absl::StrCat("the element type of output ", r.output,
                                   " is not implied by its type \"", t,
                                   "\": add 'of inN' or 'of TYPE'"));
  }
  return r;
}

void ShapeRule::apply(infer::InferCtx &c) const {
  if (!c.hasOutput(output)) return;
  int32_t elem = elemInput >= 0 ? c.inElem((unsigned)elemInput) : elemFixed;
  if (elem <= 0) return; // unknown: a rule never guesses
  switch (form) {
  case Form::UnknownRank: c.setTensor(output, elem, std::nullopt); return;
  case Form::SameAs: c.setTensor(output, elem, c.inShape(sameAs)); return;
  case Form::Dims: break;
  }
  infer::Dims out;
  for (const ShapeRuleDim &d : dims) {
    const DimExpr *x = nullptr;
    switch (d.kind) {
    case ShapeRuleDim::Kind::Unknown: break;
    case ShapeRuleDim::Kind::Const: x = c.c(d.value); break;
    case ShapeRuleDim::Kind::Attr: {
      const Attribute *a = c.attr(d.attr);
      if (a && a->kind() == AttrKind::Int && !a->isReference()) x = c.c(a->i);
      else if (!a && d.attrHasDefault) x = c.c(d.attrDefault);
      break;
    }
    case ShapeRuleDim::Kind::InputDim: {
      std::optional<infer::Dims> s = c.inShape(d.input);
      if (!s) break;
      std::optional<int64_t> k = infer::normAxis(d.value, (int64_t)s->size());
      if (!k) {
        c.disagree(absl::StrCat("shape rule \"", text, "\": input ", d.input, " has rank ",
                                s->size(), ", which has no dim ", d.value));
        return;
      }
      x = (*s)[*k];
      break;
    }
    }
    out.push_back(x);
  }
  c.setTensor(output, elem, out);
}

//===--- Reading a library ------------------------------------------------===//

namespace {

/// What a library says of one op, checked.
struct Decl {
  std::string domain, name, where;
  int64_t since = 1;
  struct Param {
    std::string name, type;
    ParamOption option = ParamOption::Single;
  };
  std::vector<Param> inputs, outputs;
  struct Attr {
    std::string name;
    AttrKind kind = AttrKind::Undefined;
    bool required = false;
    /// A copy: the parsed document is gone when the ops are registered.
    std::optional<llvm::json::Value> def;
  };
  std::vector<Attr> attrs;
  std::vector<std::pair<std::string, std::vector<std::string>>> constraints;
  std::vector<ShapeRule> rules;
  bool hasBody = false;
  std::string body;
  int64_t bodyOpset = 1;
};

/// Process-wide: the rules of every library op version registered, by
/// (domain, name, since), re-applied in version order on each registration
/// (a later version must not inherit an earlier one's rule).
std::map<std::tuple<std::string, std::string, int64_t>, std::vector<ShapeRule>> &ruleTable() {
  static auto *t = new std::map<std::tuple<std::string, std::string, int64_t>,
                                std::vector<ShapeRule>>();
  return *t;
}
llvm::StringSet<> &libraryDomains() {
  static auto *s = new llvm::StringSet<>();
  return *s;
}

const std::pair<const char *, AttrKind> kAttrKinds[] = {
    {"int", AttrKind::Int},         {"float", AttrKind::Float},   {"string", AttrKind::String},
    {"ints", AttrKind::Ints},       {"floats", AttrKind::Floats}, {"strings", AttrKind::Strings},
    {"tensor", AttrKind::Tensor},   {"graph", AttrKind::Graph},
};

/// True if `t` is a type string the schemas use: tensor(E), sparse_tensor(E),
/// seq(T), optional(T), map(K, V).
bool validTypeString(llvm::StringRef t) {
  for (const char *k : {"tensor(", "sparse_tensor("}) {
    llvm::StringRef s = t;
    if (s.consume_front(k) && s.consume_back(")")) return dataTypeFromName(s).has_value();
  }
  for (const char *k : {"seq(", "optional("}) {
    llvm::StringRef s = t;
    if (s.consume_front(k) && s.consume_back(")")) return validTypeString(s);
  }
  llvm::StringRef s = t;
  if (s.consume_front("map(") && s.consume_back(")")) {
    auto [k, v] = s.split(',');
    v = v.trim();
    return dataTypeFromName(k.trim()).has_value() &&
           (dataTypeFromName(v).has_value() || validTypeString(v));
  }
  return false;
}

bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || std::isdigit((unsigned char)s[0])) return false;
  return llvm::all_of(s, [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

/// Reads one library's JSON into declarations; errors are located.
class Reader {
public:
  explicit Reader(llvm::StringRef file) : file_(file.str()) {}

  /// `FILE:LINE: where: what`, LINE the first line of the op being read
  /// (JSON values carry no positions; an op's line is the nearest one).
  absl::Status fail(const std::string &where, const std::string &what) {
    std::string at = line_ ? absl::StrCat(file_, ":", line_) : file_;
    return absl::InvalidArgumentError(absl::StrCat(at, ": ", where, ": ", what));
  }

  /// The line of each element of the top-level "ops" array: the objects two
  /// levels down (the top object, then the array; the format's other
  /// top-level fields are scalars). Read from the text, which parsed.
  static std::vector<unsigned> opLines(llvm::StringRef text) {
    std::vector<unsigned> lines;
    unsigned line = 1, depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '\n') ++line;
      if (inString) {
        if (c == '\\') ++i;
        else if (c == '"') inString = false;
        continue;
      }
      if (c == '"') inString = true;
      else if (c == '{' || c == '[') {
        if (c == '{' && depth == 2) lines.push_back(line);
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth) --depth;
      }
    }
    return lines;
  }

  absl::Status keys(const llvm::json::Object &o, const std::string &where,
                    std::initializer_list<const char *> allowed) {
    for (const auto &kv : o) {
      llvm::StringRef k = kv.first;
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return k == a; })) {
        std::string list;
        for (const char *a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return fail(where, absl::StrCat("unknown field \"", k.str(), "\" (expected: ", list, ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> str(const llvm::json::Object &o, const char *key,
                                  const std::string &where, bool required) {
    const llvm::json::Value *v = o.get(key);
    if (!v) {
      if (required) return fail(where, absl::StrCat("missing field \"", key, "\""));
      return std::string();
    }
    auto s = v->getAsString();
    if (!s) return fail(absl::StrCat(where, ".", key), "expected a string");
    return s->str();
  }

  absl::Status params(const llvm::json::Object &o, const char *key, const std::string &where,
                      std::vector<Decl::Param> &out) {
    const llvm::json::Value *v = o.get(key);
    if (!v) return absl::OkStatus();
    const llvm::json::Array *a = v->getAsArray();
    if (!a) return fail(absl::StrCat(where, ".", key), "expected an array");
    for (size_t i = 0; i < a->size(); ++i) {
      std::string at = absl::StrCat(where, ".", key, "[", i, "]");
      const llvm::json::Object *p = (*a)[i].getAsObject();
      if (!p) return fail(at, "expected an object {\"name\", \"type\", \"option\"}");
      if (auto s = keys(*p, at, {"name", "type", "option", "doc"}); !s.ok()) return s;
      Decl::Param d;
      auto name = str(*p, "name", at, true);
      if (!name.ok()) return name.status();
      if (!isIdentifier(*name)) return fail(at + ".name", absl::StrCat("\"", *name, "\" is not a name"));
      auto type = str(*p, "type", at, true);
      if (!type.ok()) return type.status();
      auto opt = str(*p, "option", at, false);
      if (!opt.ok()) return opt.status();
      if (opt->empty() || *opt == "single") d.option = ParamOption::Single;
      else if (*opt == "optional") d.option = ParamOption::Optional;
      else if (*opt == "variadic") d.option = ParamOption::Variadic;
      else
        return fail(at + ".option",
                    absl::StrCat("\"", *opt, "\" is not single, optional or variadic"));
      if (d.option == ParamOption::Variadic && i + 1 != a->size())
        return fail(at + ".option", "only the last formal may be variadic");
      for (const Decl::Param &q : out)
        if (q.name == *name) return fail(at + ".name", absl::StrCat("\"", *name, "\" twice"));
      d.name = *name;
      d.type = *type;
      out.push_back(std::move(d));
    }
    return absl::OkStatus();
  }

  absl::Status attribute(const llvm::json::Object &p, const std::string &at, Decl &d) {
    if (auto s = keys(p, at, {"name", "type", "required", "default", "doc"}); !s.ok()) return s;
    Decl::Attr a;
    auto name = str(p, "name", at, true);
    if (!name.ok()) return name.status();
    if (!isIdentifier(*name)) return fail(at + ".name", absl::StrCat("\"", *name, "\" is not a name"));
    for (const Decl::Attr &b : d.attrs)
      if (b.name == *name) return fail(at + ".name", absl::StrCat("\"", *name, "\" twice"));
    auto type = str(p, "type", at, true);
    if (!type.ok()) return type.status();
    for (const auto &k : kAttrKinds)
      if (*type == k.first) a.kind = k.second;
    if (a.kind == AttrKind::Undefined)
      return fail(at + ".type", absl::StrCat("\"", *type, "\" is not an attribute type (int, float, "
                                             "string, ints, floats, strings, tensor, graph)"));
    if (const llvm::json::Value *r = p.get("required")) {
      if (!r->getAsBoolean()) return fail(at + ".required", "expected true or false");
      a.required = *r->getAsBoolean();
    }
    a.name = *name;
    if (const llvm::json::Value *dv = p.get("default")) a.def = *dv;
    if (a.def) {
      std::string w = at + ".default";
      if (a.required) return fail(w, "a required attribute has no default");
      auto isNum = [](const llvm::json::Value &v) { return (bool)v.getAsNumber(); };
      auto isInt = [](const llvm::json::Value &v) { return (bool)v.getAsInteger(); };
      auto isStr = [](const llvm::json::Value &v) { return (bool)v.getAsString(); };
      auto list = [&](auto pred) {
        const llvm::json::Array *l = a.def->getAsArray();
        return l && llvm::all_of(*l, pred);
      };
      bool ok = false;
      switch (a.kind) {
      case AttrKind::Int: ok = isInt(*a.def); break;
      case AttrKind::Float: ok = isNum(*a.def); break;
      case AttrKind::String: ok = isStr(*a.def); break;
      case AttrKind::Ints: ok = list(isInt); break;
      case AttrKind::Floats: ok = list(isNum); break;
      case AttrKind::Strings: ok = list(isStr); break;
      default: return fail(w, absl::StrCat("a ", *type, " attribute cannot have a default here"));
      }
      if (!ok) return fail(w, absl::StrCat("not a value of type ", *type));
    }
    d.attrs.push_back(std::move(a));
    return absl::OkStatus();
  }

  absl::StatusOr<Decl> op(const llvm::json::Value &v, size_t index) {
    std::string where = absl::StrCat("ops[", index, "]");
    const llvm::json::Object *o = v.getAsObject();
    if (!o) return fail(where, "expected an object");
    Decl d;
    auto domain = str(*o, "domain", where, true);
    if (!domain.ok()) return domain.status();
    auto name = str(*o, "name", where, true);
    if (!name.ok()) return name.status();
    // From here on messages name the op.
    where = absl::StrCat(where, " (", *domain, ".", *name, ")");
    d.where = where;
    if (auto s = keys(*o, where,
                      {"domain", "name", "since_version", "doc", "inputs", "outputs", "attributes",
                       "type_constraints", "shape", "function"});
        !s.ok())
      return s;
    // ONNX's domains: the schema table's (isSchemaDomain is also true of a
    // domain registered from C++ or by an earlier library, which may be).
    bool onnxDomain = isDefaultDomain(*domain) || canonicalDomain(*domain).empty();
    for (const char *d : {"ai.onnx.ml", "ai.onnx.preview", "ai.onnx.preview.training"})
      onnxDomain = onnxDomain || *domain == d;
    if (onnxDomain)
      return fail(where + ".domain",
                  absl::StrCat("\"", *domain, "\" is ", domain->empty() ? "the default domain" : "a domain of ONNX's",
                               ": a library declares operators of custom domains only"));
    if (!isIdentifier(*name)) return fail(where + ".name", absl::StrCat("\"", *name, "\" is not an operator name"));
    d.domain = *domain;
    d.name = *name;
    if (const llvm::json::Value *s = o->get("since_version")) {
      auto i = s->getAsInteger();
      if (!i || *i < 1) return fail(where + ".since_version", "expected an integer >= 1");
      d.since = *i;
    }
    if (auto s = params(*o, "inputs", where, d.inputs); !s.ok()) return s;
    if (auto s = params(*o, "outputs", where, d.outputs); !s.ok()) return s;
    if (d.outputs.empty()) return fail(where, "an operator has at least one output (\"outputs\")");
    if (const llvm::json::Value *as = o->get("attributes")) {
      const llvm::json::Array *a = as->getAsArray();
      if (!a) return fail(where + ".attributes", "expected an array");
      for (size_t i = 0; i < a->size(); ++i) {
        std::string at = absl::StrCat(where, ".attributes[", i, "]");
        const llvm::json::Object *p = (*a)[i].getAsObject();
        if (!p) return fail(at, "expected an object {\"name\", \"type\", ...}");
        if (auto s = attribute(*p, at, d); !s.ok()) return s;
      }
    }
    if (const llvm::json::Value *cs = o->get("type_constraints")) {
      const llvm::json::Array *a = cs->getAsArray();
      if (!a) return fail(where + ".type_constraints", "expected an array");
      for (size_t i = 0; i < a->size(); ++i) {
        std::string at = absl::StrCat(where, ".type_constraints[", i, "]");
        const llvm::json::Object *p = (*a)[i].getAsObject();
        if (!p) return fail(at, "expected an object {\"param\", \"allowed\"}");
        if (auto s = keys(*p, at, {"param", "allowed", "doc"}); !s.ok()) return s;
        auto param = str(*p, "param", at, true);
        if (!param.ok()) return param.status();
        if (!isIdentifier(*param)) return fail(at + ".param", absl::StrCat("\"", *param, "\" is not a name"));
        const llvm::json::Array *al = p->getArray("allowed");
        if (!al || al->empty()) return fail(at + ".allowed", "expected a non-empty array of type strings");
        std::vector<std::string> allowed;
        for (size_t j = 0; j < al->size(); ++j) {
          auto t = (*al)[j].getAsString();
          if (!t || !validTypeString(*t))
            return fail(absl::StrCat(at, ".allowed[", j, "]"),
                        "expected a type string such as \"tensor(float)\" or \"seq(tensor(int64))\"");
          allowed.push_back(t->str());
        }
        for (const auto &c : d.constraints)
          if (c.first == *param) return fail(at + ".param", absl::StrCat("\"", *param, "\" twice"));
        d.constraints.emplace_back(*param, std::move(allowed));
      }
    }
    // Every formal's type is a constraint of the op or a type string; every
    // constraint is used.
    for (auto [list, key] : {std::make_pair(&d.inputs, "inputs"), std::make_pair(&d.outputs, "outputs")})
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string &t = (*list)[i].type;
        bool isParam = std::any_of(d.constraints.begin(), d.constraints.end(),
                                   [&](const auto &c) { return c.first == t; });
        if (!isParam && !validTypeString(t))
          return fail(absl::StrCat(where, ".", key, "[", i, "].type"),
                      absl::StrCat("\"", t, "\" is neither a type constraint of the op nor a type "
                                            "string such as \"tensor(float)\""));
      }
    const llvm::json::Value *shape = o->get("shape");
    const llvm::json::Value *fn = o->get("function");
    if (shape && fn)
      return fail(where, "give either \"shape\" (rules) or \"function\" (a body), not both");
    if (shape) {
      if (auto s = shapeRules(*shape, where + ".shape", d); !s.ok()) return s;
    }
    if (fn) {
      auto text = fn->getAsString();
      if (!text) return fail(where + ".function", "expected a string: a function in ONNX's text syntax");
      if (auto s = functionBody(*text, where + ".function", d); !s.ok()) return s;
    }
    return d;
  }

  absl::Status shapeRules(const llvm::json::Value &v, const std::string &where, Decl &d) {
    const llvm::json::Array *a = v.getAsArray();
    if (!a) return fail(where, "expected an array of rules (\"out0: same as in0\")");
    ShapeRuleScope scope;
    for (const Decl::Param &p : d.inputs) scope.inputs.push_back(p.name), scope.inputTypes.push_back(p.type);
    for (const Decl::Param &p : d.outputs) scope.outputs.push_back(p.name), scope.outputTypes.push_back(p.type);
    scope.variadicInputs = !d.inputs.empty() && d.inputs.back().option == ParamOption::Variadic;
    for (const Decl::Attr &x : d.attrs)
      if (x.kind == AttrKind::Int)
        scope.intAttrs.push_back({x.name, x.def.has_value(), x.def ? *x.def->getAsInteger() : 0});
    scope.constraints = d.constraints;
    std::vector<bool> seen(d.outputs.size());
    for (size_t i = 0; i < a->size(); ++i) {
      std::string at = absl::StrCat(where, "[", i, "]");
      auto text = (*a)[i].getAsString();
      if (!text) return fail(at, "expected a string");
      auto r = parseShapeRule(*text, scope);
      if (!r.ok())
        return fail(at, absl::StrCat("rule \"", text->str(), "\": ", r.status().message()));
      if (seen[r->output])
        return fail(at, absl::StrCat("output ", r->output, " has a rule already"));
      seen[r->output] = true;
      d.rules.push_back(std::move(*r));
    }
    return absl::OkStatus();
  }

  absl::Status functionBody(llvm::StringRef text, const std::string &where, Decl &d) {
    Model scratch;
    auto f = parseFunctionText(scratch, text, absl::StrCat(file_, ": ", where));
    // The parser's message names the file, the op and the line and column
    // within the body: `lib.json: ops[0] (dom.Op).function:3:14: error: ...`.
    if (!f.ok()) return absl::InvalidArgumentError(f.status().message());
    const Function &fn = **f;
    if (fn.name != d.name || canonicalDomain(fn.domain) != canonicalDomain(d.domain))
      return fail(where, absl::StrCat("the body defines ", fn.domain, ".", fn.name, ", not ",
                                      d.domain, ".", d.name));
    const Graph &b = fn.body();
    if (b.numInputs() != d.inputs.size() || b.numOutputs() != d.outputs.size())
      return fail(where, absl::StrCat("the body has ", b.numInputs(), " inputs and ", b.numOutputs(),
                                      " outputs; the op declares ", d.inputs.size(), " and ",
                                      d.outputs.size()));
    auto declared = [&](const std::string &n) {
      return std::any_of(d.attrs.begin(), d.attrs.end(), [&](const Decl::Attr &a) { return a.name == n; });
    };
    for (const std::string &n : fn.attributeNames)
      if (!declared(n)) return fail(where, absl::StrCat("the body's attribute \"", n, "\" is not declared in \"attributes\""));
    for (const auto &a : fn.attributeDefaults)
      if (!declared(a->name()))
        return fail(where, absl::StrCat("the body's attribute \"", a->name(), "\" is not declared in \"attributes\""));
    // The body's key is the version of the default domain its nodes use
    // (FunctionBody; expand-functions converts from it).
    d.bodyOpset = 0;
    for (const OpsetImport &i : fn.opsetImports)
      if (isDefaultDomain(i.domain)) d.bodyOpset = i.version;
    if (d.bodyOpset <= 0)
      return fail(where, "the body imports no version of the default domain (opset_import: [\"\" : N])");
    d.hasBody = true;
    d.body = text.str();
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<Decl>> read(llvm::StringRef text) {
    auto v = llvm::json::parse(text);
    if (!v) {
      std::string msg;
      llvm::handleAllErrors(v.takeError(), [&](const llvm::json::ParseError &e) {
        msg = llvm::toString(llvm::make_error<llvm::json::ParseError>(e));
      }, [&](const llvm::ErrorInfoBase &e) { msg = e.message(); });
      // LLVM writes "[LINE:COL, byte=N]: what".
      return absl::InvalidArgumentError(absl::StrCat(file_, ": not JSON: ", msg));
    }
    const llvm::json::Object *top = v->getAsObject();
    if (!top) return fail("(top)", "expected an object {\"ops\": [...]}");
    if (auto s = keys(*top, "(top)", {"$schema", "format_version", "doc", "ops"}); !s.ok()) return s;
    if (const llvm::json::Value *fv = top->get("format_version"))
      if (auto n = fv->getAsInteger(); !n || *n != 1)
        return fail("format_version", "this onnxir reads format_version 1");
    const llvm::json::Array *ops = top->getArray("ops");
    if (!ops) return fail("(top)", "missing array \"ops\"");
    std::vector<Decl> out;
    std::vector<unsigned> lines = opLines(text);
    for (size_t i = 0; i < ops->size(); ++i) {
      line_ = i < lines.size() ? lines[i] : 0;
      auto d = op((*ops)[i], i);
      if (!d.ok()) return d.status();
      for (const Decl &e : out)
        if (canonicalDomain(e.domain) == canonicalDomain(d->domain) && e.name == d->name &&
            e.since == d->since)
          return fail(d->where, absl::StrCat("declared twice (also ", e.where, ")"));
      out.push_back(std::move(*d));
    }
    return out;
  }

private:
  std::string file_;
  unsigned line_ = 0; ///< of the op being read; 0 outside the ops
};

void registerDecl(const Decl &d) {
  OpSchemaBuilder b(d.domain, d.name, d.since);
  for (const Decl::Param &p : d.inputs) b.input(p.name, p.type, p.option);
  for (const Decl::Param &p : d.outputs) b.output(p.name, p.type, p.option);
  for (const Decl::Attr &a : d.attrs) {
    b.attr(a.name, a.kind, a.required);
    if (!a.def) continue;
    switch (a.kind) {
    case AttrKind::Int: b.defaultInt(*a.def->getAsInteger()); break;
    case AttrKind::Float: b.defaultFloat(*a.def->getAsNumber()); break;
    case AttrKind::String: b.defaultString(*a.def->getAsString()); break;
    case AttrKind::Ints: {
      std::vector<int64_t> v;
      for (const llvm::json::Value &x : *a.def->getAsArray()) v.push_back(*x.getAsInteger());
      b.defaultInts(std::move(v));
      break;
    }
    case AttrKind::Floats: {
      std::vector<double> v;
      for (const llvm::json::Value &x : *a.def->getAsArray()) v.push_back(*x.getAsNumber());
      b.defaultFloats(std::move(v));
      break;
    }
    case AttrKind::Strings: {
      std::vector<std::string> v;
      for (const llvm::json::Value &x : *a.def->getAsArray()) v.push_back(x.getAsString()->str());
      b.defaultStrings(v);
      break;
    }
    default: break;
    }
  }
  for (const auto &c : d.constraints) {
    std::vector<llvm::StringRef> allowed(c.second.begin(), c.second.end());
    b.typeConstraint(c.first, allowed);
  }
  if (d.hasBody) b.functionBody(d.bodyOpset, d.body);
  registerSchema(std::move(b));
  ruleTable()[{canonicalDomain(d.domain).str(), d.name, d.since}] = d.rules;
  libraryDomains().insert(canonicalDomain(d.domain));
}

/// Gives every registered version of (domain, name) its own rule (or none),
/// oldest first (Op::since applies to later versions too).
void applyRules(const std::string &domain, const std::string &name) {
  OpRegistrar r = OpRegistry::get().registrar(domain);
  auto &t = ruleTable();
  for (auto it = t.lower_bound({domain, name, 0});
       it != t.end() && std::get<0>(it->first) == domain && std::get<1>(it->first) == name; ++it) {
    infer::Rule rule;
    if (!it->second.empty()) {
      std::vector<ShapeRule> rules = it->second;
      rule = [rules](infer::InferCtx &c) {
        for (const ShapeRule &x : rules) x.apply(c);
      };
    }
    r[name].since(std::get<2>(it->first)).infer(rule);
  }
}

} // namespace

absl::StatusOr<OpLibraryInfo> registerOpLibrary(llvm::StringRef text, llvm::StringRef fileName) {
  Reader reader(fileName);
  auto decls = reader.read(text);
  if (!decls.ok()) return decls.status();
  OpLibraryInfo info;
  for (const Decl &d : *decls) registerDecl(d);
  for (const Decl &d : *decls) {
    applyRules(canonicalDomain(d.domain).str(), d.name);
    info.ops.push_back(absl::StrCat(canonicalDomain(d.domain).str(), ".", d.name, "-v", d.since));
  }
  return info;
}

absl::StatusOr<OpLibraryInfo> registerOpLibraryFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return absl::NotFoundError(absl::StrCat("cannot read op library ", path.str(), ": ",
                                            buf.getError().message()));
  return registerOpLibrary((*buf)->getBuffer(), path);
}

bool isLibraryDomain(llvm::StringRef domain) {
  return libraryDomains().count(canonicalDomain(domain)) > 0;
}

} // namespace onnxir
