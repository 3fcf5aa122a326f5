//===- TextParser.cpp - Parse ONNX text syntax into the IR ----------------===//
//
// A recursive-descent parser over a streaming lexer (two tokens of
// lookahead). It reads the standard syntax exactly as onnx.parser does and
// the `#@kind ...` annotation comments of our extension (docs/TextFormat.md).
//
// Note [Annotations as trivia]
// The lexer collects `#@` lines and hangs them on the next token. Whoever
// parses an entity claims the lines of the kinds it understands from the
// entity's first token; consuming a token with unclaimed lines is an error,
// so a misplaced annotation is reported instead of silently dropped.
//
// Note [Deferred uses]
// Like lift, the parser first declares every definition and resolves uses
// afterwards: operands and graph outputs are resolved when the top-level
// graph (main graph or function body) is complete, so nested graphs may use
// outer values defined later in the text (unsorted graphs), and value_info
// records when their own graph is complete.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Text/Text.h"

#include "TextSupport.h"

#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/status/status.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <limits>

namespace onnxir {
namespace {
using namespace text;

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

struct Loc {
  size_t offset = 0;
  unsigned line = 1, col = 1;
};

struct Annot {
  std::string text; ///< after `#@`, up to the end of the line
  Loc loc;          ///< of the first character after `#@`
  bool claimed = false;
};

struct Token {
  enum Kind : uint8_t { Eof, Ident, Int, Float, String, Punct, Arrow, Error };
  Kind kind = Eof;
  char punct = 0;
  std::string text; ///< identifier, number text or decoded string
  Loc loc;
  size_t annBegin = 0, annEnd = 0; ///< annotations before this token
};

class Lexer {
public:
  Lexer(llvm::StringRef src, std::vector<Annot> &annots) : s_(src), annots_(annots) {}

  Token next() {
    Token t;
    t.annBegin = annots_.size();
    skipTrivia();
    t.annEnd = annots_.size();
    t.loc = loc();
    if (pos_ >= s_.size()) return t;
    char c = s_[pos_];
    if (isIdStart(c)) {
      size_t b = pos_;
      while (pos_ < s_.size() && isIdChar(s_[pos_])) ++pos_;
      t.kind = Token::Ident;
      t.text = s_.substr(b, pos_ - b).str();
      return t;
    }
    if (isDigit(c) || (c == '-' && pos_ + 1 < s_.size() &&
                       (isDigit(s_[pos_ + 1]) || isIdStart(s_[pos_ + 1])))) {
      return number(t);
    }
    if (c == '"') return string(t);
    ++pos_;
    if (c == '=' && pos_ < s_.size() && s_[pos_] == '>') {
      ++pos_;
      t.kind = Token::Arrow;
      t.text = "=>";
      return t;
    }
    if (llvm::StringRef("()[]{}<>,:=.@?").contains(c)) {
      t.kind = Token::Punct;
      t.punct = c;
      t.text = std::string(1, c);
      return t;
    }
    t.kind = Token::Error;
    t.text = "unexpected character";
    if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) t.text += std::string(" '") + c + "'";
    return t;
  }
  /// A read position with its line (for locations).
  struct Cursor {
    size_t pos, line, lineStart;
  };
  /// Where the read position would be past blanks and line breaks (no
  /// comments: the fast paths below leave those to the token path).
  Cursor afterBlanks() const {
    Cursor c{pos_, line_, lineStart_};
    for (; c.pos < s_.size(); ++c.pos) {
      char ch = s_[c.pos];
      if (ch == '\n') {
        ++c.line;
        c.lineStart = c.pos + 1;
      } else if (ch != ' ' && ch != '\t' && ch != '\r') {
        break;
      }
    }
    return c;
  }
  void moveTo(const Cursor &c) {
    pos_ = c.pos;
    line_ = unsigned(c.line);
    lineStart_ = c.lineStart;
  }
  /// Note [Tensor bodies without tokens]
  /// A weight printed losslessly is millions of numbers; building a Token
  /// (a string, a location, a trip through the parser's lookahead) for each
  /// was most of a big model's parse. Inside a tensor body the parser asks
  /// for the next element here: a plain number (the same grammar as
  /// `number`, starting with a digit or '-' and a digit), with blanks and
  /// line breaks before it, no comment or annotation. Anything else returns
  /// false with nothing consumed, and the parser takes the token path, so
  /// errors, words (inf, nan, true) and strings read exactly as before.
  bool plainNumber(llvm::StringRef &text) {
    Cursor at = afterBlanks();
    size_t p = at.pos, b = p;
    if (p < s_.size() && s_[p] == '-') ++p;
    if (p >= s_.size() || !isDigit(s_[p])) return false;
    while (p < s_.size() && isDigit(s_[p])) ++p;
    if (p < s_.size() && s_[p] == '.') {
      ++p;
      while (p < s_.size() && isDigit(s_[p])) ++p;
    }
    if (p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
      size_t q = p + 1;
      if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
      if (q < s_.size() && isDigit(s_[q])) {
        while (q < s_.size() && isDigit(s_[q])) ++q;
        p = q;
      }
    }
    // A letter or digit glued to the number is the token path's business
    // (it lexes it as the next token and reports it there).
    if (p < s_.size() && isIdChar(s_[p])) return false;
    text = s_.substr(b, p - b);
    at.pos = p;
    moveTo(at);
    return true;
  }
  /// After a tensor element: consumes blanks and a ',' (returns ','), or
  /// finds a '}' after blanks (returns '}', consumed too); otherwise 0 with
  /// nothing consumed.
  char plainSeparator() {
    Cursor at = afterBlanks();
    if (at.pos >= s_.size() || (s_[at.pos] != ',' && s_[at.pos] != '}')) return 0;
    char c = s_[at.pos++];
    moveTo(at);
    return c;
  }
  /// Bytes from the read position to the next `c` (or to the end).
  size_t bytesUntil(char c) const {
    if (pos_ >= s_.size()) return 0;
    size_t at = s_.find(c, pos_);
    return (at == llvm::StringRef::npos ? s_.size() : at) - pos_;
  }

private:
  static bool isIdStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isIdChar(char c) { return isIdStart(c) || isDigit(c); }

  Loc loc() const {
    Loc l;
    l.offset = pos_;
    l.line = line_;
    l.col = unsigned(pos_ - lineStart_ + 1);
    return l;
  }
  void newline() {
    ++line_;
    lineStart_ = pos_;
  }
  void skipTrivia() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++pos_;
        newline();
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#') {
        bool ann = pos_ + 1 < s_.size() && s_[pos_ + 1] == '@';
        size_t b = pos_ + (ann ? 2 : 1);
        pos_ = b;
        Loc l = loc();
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        if (ann) annots_.push_back({s_.substr(b, pos_ - b).str(), l, false});
      } else {
        return;
      }
    }
  }
  Token number(Token &t) {
    size_t b = pos_;
    if (s_[pos_] == '-') ++pos_;
    if (isIdStart(s_[pos_])) {
      // -inf, -nan, -infinity
      size_t w = pos_;
      while (pos_ < s_.size() && isIdChar(s_[pos_])) ++pos_;
      std::string word = s_.substr(w, pos_ - w).lower();
      if (word != "inf" && word != "infinity" && word != "nan") {
        t.kind = Token::Error;
        t.text = "invalid number";
        return t;
      }
      t.kind = Token::Float;
      t.text = s_.substr(b, pos_ - b).str();
      return t;
    }
    bool isFloat = false;
    while (pos_ < s_.size() && isDigit(s_[pos_])) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      isFloat = true;
      ++pos_;
      while (pos_ < s_.size() && isDigit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t save = pos_;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (pos_ < s_.size() && isDigit(s_[pos_])) {
        isFloat = true;
        while (pos_ < s_.size() && isDigit(s_[pos_])) ++pos_;
      } else {
        pos_ = save;
      }
    }
    t.kind = isFloat ? Token::Float : Token::Int;
    t.text = s_.substr(b, pos_ - b).str();
    return t;
  }
  Token string(Token &t) {
    // Standard syntax: a backslash makes the next byte literal; newlines may
    // appear inside strings.
    ++pos_;
    t.kind = Token::String;
    for (;;) {
      if (pos_ >= s_.size()) {
        t.kind = Token::Error;
        t.text = "unterminated string";
        return t;
      }
      char c = s_[pos_++];
      if (c == '"') return t;
      if (c == '\\') {
        if (pos_ >= s_.size()) continue;
        c = s_[pos_++];
      }
      if (c == '\n') newline();
      t.text.push_back(c);
    }
  }

  llvm::StringRef s_;
  std::vector<Annot> &annots_;
  size_t pos_ = 0;
  unsigned line_ = 1;
  size_t lineStart_ = 0;
};

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

/// Merged fields of the annotation lines of one kind on one token.
struct Ann {
  std::vector<std::pair<std::string, AVal>> fields;
  std::vector<Loc> locs; ///< where each field's line starts
  std::vector<bool> used;
  const AVal *get(llvm::StringRef key) {
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i].first == key) {
        used[i] = true;
        return &fields[i].second;
      }
    return nullptr;
  }
  bool empty() const { return fields.empty(); }
};

struct PendingUse {
  Graph *g;
  Node *n;
  unsigned idx;
  std::string name;
  Loc loc;
};
struct PendingOutput {
  Graph *g;
  std::string name;
  OutputInfo info;
  Loc loc;
};
struct PendingVI {
  std::string name;
  const Type *type = nullptr;
  bool hasType = false;
  std::string doc, extras;
  Metadata md;
};

class Parser {
public:
  /// `bind` null: external data is an error (a function alone).
  Parser(llvm::StringRef src, llvm::StringRef file, ExternalDataBinder bind)
      : src_(src), file_(file), lex_(src, annots_), bind_(bind) {}

  absl::StatusOr<std::unique_ptr<Model>> parseModel();
  absl::StatusOr<Function *> parseFunctionInto(Model &m);

private:
  //===--- Tokens and errors ----------------------------------------------===//
  Token &peek(unsigned k = 0) {
    while (la_.size() <= k) la_.push_back(lex_.next());
    return la_[k];
  }
  bool checkClaimed(const Token &t) {
    for (size_t i = t.annBegin; i < t.annEnd; ++i)
      if (!annots_[i].claimed) {
        size_t sp = annots_[i].text.find(' ');
        return failAt(annots_[i].loc, "annotation '#@" + annots_[i].text.substr(0, sp) +
                                          "' does not belong here");
      }
    return true;
  }
  bool consume(Token *out = nullptr) {
    Token &t = peek();
    if (t.kind == Token::Error) return failAt(t.loc, t.text);
    if (!checkClaimed(t)) return false;
    if (out) *out = std::move(t);
    la_.pop_front();
    return true;
  }
  bool isPunct(char c, unsigned k = 0) {
    Token &t = peek(k);
    return t.kind == Token::Punct && t.punct == c;
  }
  bool accept(char c) {
    if (!isPunct(c)) return false;
    return consume();
  }
  std::string describe(const Token &t) {
    switch (t.kind) {
    case Token::Eof: return "end of input";
    case Token::Ident: return "'" + t.text + "'";
    case Token::Int:
    case Token::Float: return "number " + t.text;
    case Token::String: return "string";
    case Token::Punct: return std::string("'") + t.punct + "'";
    case Token::Arrow: return "'=>'";
    case Token::Error: return t.text;
    }
    return "token";
  }
  bool expect(char c, const char *what = nullptr) {
    if (isPunct(c)) return consume();
    Token &t = peek();
    if (t.kind == Token::Error) return failAt(t.loc, t.text);
    std::string w = what ? std::string(what) : std::string("'") + c + "'";
    return failAt(t.loc, "expected " + w + ", found " + describe(t));
  }
  bool failAt(const Loc &l, const std::string &msg) {
    if (!err_.empty()) return false;
    size_t b = l.offset;
    while (b > 0 && src_[b - 1] != '\n') --b;
    size_t e = l.offset;
    while (e < src_.size() && src_[e] != '\n') ++e;
    // A long line (a 200 KB tensor literal) is shown as a window around the
    // column, marked with "...", not echoed whole.
    constexpr size_t kContext = 60;
    std::string lineText, caret;
    if (e - b > 3 * kContext) {
      size_t wb = l.offset > b + kContext ? l.offset - kContext : b;
      size_t we = std::min(e, std::max(l.offset, wb) + kContext);
      if (wb > b) {
        lineText = "...";
        caret = "   ";
      }
      lineText += src_.substr(wb, we - wb).str();
      if (we < e) lineText += "...";
      b = wb;
      e = we;
    } else {
      lineText = src_.substr(b, e - b).str();
    }
    for (size_t i = b; i < l.offset && i < e; ++i) caret += src_[i] == '\t' ? '\t' : ' ';
    caret += '^';
    err_ = file_.str() + ":" + std::to_string(l.line) + ":" + std::to_string(l.col) +
           ": error: " + msg + "\n" + lineText + "\n" + caret;
    return false;
  }
  bool failHere(const std::string &msg) {
    Token &t = peek();
    if (t.kind == Token::Error) return failAt(t.loc, t.text);
    // ", found X" only completes an "expected ..." message; after any other
    // message (a limit, a bad value) the next token is beside the point.
    if (startsWith(msg, "expected"))
      return failAt(t.loc, msg + ", found " + describe(t));
    return failAt(t.loc, msg);
  }

  //===--- Annotations ----------------------------------------------------===//
  bool claim(const Token &t, llvm::StringRef kind, Ann &out);
  /// Claims each unclaimed `#@kind` annotation before token \p t and calls
  /// \p fn with it and its parsed line; a malformed line fails, located.
  bool claimEach(const Token &t, llvm::StringRef kind,
                 llvm::function_ref<bool(Annot &, AnnotLine &)> fn);
  bool checkAnnUsed(Ann &a, llvm::StringRef kind);
  bool annFail(Ann &a, llvm::StringRef key, const std::string &msg);
  bool annStr(Ann &a, llvm::StringRef key, std::string &out);
  bool annHex(Ann &a, llvm::StringRef key, std::string &out);
  bool annMeta(Ann &a, llvm::StringRef key, Metadata &out);
  bool valStr(const AVal &v, std::string &out);
  bool valInt(const AVal &v, int64_t &out);
  bool valHex(const AVal &v, std::string &out);
  bool valMeta(const AVal &v, Metadata &out);
  bool valInts(const AVal &v, std::vector<int64_t> &out);
  // The same into out-of-line fields (Note [Out-of-line fields]): parsed
  // into a plain value, stored only if not empty.
  template <typename T, typename F> static bool viaPlain(OutOfLine<T> &out, F &&parse) {
    T plain = out.get();
    bool ok = parse(plain);
    out = std::move(plain);
    return ok;
  }
  template <typename T> bool annStr(Ann &a, llvm::StringRef key, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return annStr(a, key, p); });
  }
  template <typename T> bool annHex(Ann &a, llvm::StringRef key, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return annHex(a, key, p); });
  }
  template <typename T> bool annMeta(Ann &a, llvm::StringRef key, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return annMeta(a, key, p); });
  }
  template <typename T> bool valStr(const AVal &v, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return valStr(v, p); });
  }
  template <typename T> bool valHex(const AVal &v, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return valHex(v, p); });
  }
  template <typename T> bool valMeta(const AVal &v, OutOfLine<T> &out) {
    return viaPlain(out, [&](T &p) { return valMeta(v, p); });
  }
  bool recType(const AVal &v, const Type *&out, unsigned depth);
  bool recTensor(const AVal &v, Tensor &t);
  bool recSparse(const AVal &v, SparseTensor &s);
  bool recDeviceConfig(const AVal &v, NodeDeviceConfiguration &c);
  bool recSharding(const AVal &v, ShardingSpec &s);
  /// `each(item)` for the items of list field `what` (false with "WHAT must
  /// be a list" if it is not one); with `records`, each item must be a
  /// record ("bad WHAT entry").
  template <class F> bool recItems(const AVal &val, const std::string &what, bool records, F each);
  /// Applies `#@tensor` fields (name, doc, encoding, ...) to `t`.
  bool applyTensorAnn(Ann &a, Tensor &t, bool &rawFlag, std::string &rawHex,
                      std::optional<Tensor::TypedField> &field, std::string &dataHex);
  Loc annLoc_;
  std::string annWhat_;

  //===--- Grammar --------------------------------------------------------===//
  bool parseHeaderOpsets(std::vector<OpsetImport> &out);
  bool parseStringToken(std::string &out, const char *what);
  bool parseIntToken(int64_t &out, const char *what);
  bool parseQuotableId(std::string &out, const char *what);
  bool parseQuotableId(OutOfLineString &out, const char *what) {
    return viaPlain(out, [&](std::string &p) { return parseQuotableId(p, what); });
  }
  bool nextIsType();
  bool parseType(const Type *&out, unsigned depth);
  bool parseShape(TypeSpec &spec);
  /// An element type name into `spec` (a map's key type, a sparse tensor's
  /// element type); else "expected WHAT".
  bool parseElemType(TypeSpec &spec, const char *what);
  bool parseIdList(std::vector<std::pair<std::string, Loc>> &out);
  bool parseTensorData(Tensor &t, Ann &ann, const Type *type, Loc typeLoc);
  bool parseAttr(std::unique_ptr<Attribute> &out, unsigned depth);
  bool parseAttrValue(Attribute &a, AttrKind expected, unsigned depth, Loc nameLoc);
  bool parseSingleAttrValue(Attribute &a, AttrKind expected, unsigned depth);
  bool parseAttrList(Node *n, unsigned depth);
  bool parseNode(Graph &g, unsigned depth);
  bool parseGraph(Graph &g, unsigned depth);
  bool parseValueList(Graph &g, std::vector<PendingVI> *vis);
  bool parseNodeList(Graph &g, unsigned depth);
  bool resolveVIs(Graph &g, std::vector<PendingVI> &vis);
  bool resolvePending();
  bool parseFunction(Model &m);
  bool applySparseAnnots(const Token &t, Graph &g);
  bool applyValueAnn(Ann &a, const Type *&type, bool &hasType, std::string &doc, Metadata &md,
                     std::string &extras);
  bool applyValueAnn(Ann &a, const Type *&type, bool &hasType, OutOfLineString &doc,
                     OutOfLine<Metadata> &md, OutOfLineString &extras) {
    std::string d = doc.get(), x = extras.get();
    Metadata m = md.get();
    bool ok = applyValueAnn(a, type, hasType, d, m, x);
    doc = std::move(d), md = std::move(m), extras = std::move(x);
    return ok;
  }
  /// Binds `ref` through the caller's binder (a model file's: reads the
  /// location, checksum, offset and length of `ref.entries`, then resolves
  /// and checks the reference now); false with `msg` on a bad one.
  bool bindExternalRef(ExternalDataRef &ref, const std::string &tensorName, ExternalLoader &out,
                       std::string &msg);

  llvm::StringRef src_, file_;
  std::vector<Annot> annots_;
  Lexer lex_;
  std::deque<Token> la_;
  std::string err_;
  ExternalDataBinder bind_;
  Model *model_ = nullptr;
  Context *ctx_ = nullptr;
  std::vector<PendingUse> uses_;
  std::vector<PendingOutput> outputs_;
};

//===----------------------------------------------------------------------===//
// Annotations
//===----------------------------------------------------------------------===//

bool Parser::claimEach(const Token &t, llvm::StringRef kind,
                       llvm::function_ref<bool(Annot &, AnnotLine &)> fn) {
  for (size_t i = t.annBegin; i < t.annEnd; ++i) {
    Annot &a = annots_[i];
    if (a.claimed) continue;
    size_t errCol = 0;
    absl::StatusOr<AnnotLine> line = parseAnnotLine(a.text, errCol);
    if (!line.ok()) {
      Loc l = a.loc;
      l.offset += errCol;
      l.col += unsigned(errCol);
      return failAt(l, std::string(line.status().message()));
    }
    if (line->kind != kind) continue;
    a.claimed = true;
    if (!fn(a, *line)) return false;
  }
  return true;
}

bool Parser::claim(const Token &t, llvm::StringRef kind, Ann &out) {
  return claimEach(t, kind, [&](Annot &a, AnnotLine &line) {
    for (auto &f : line.fields) {
      out.fields.push_back(std::move(f));
      out.locs.push_back(a.loc);
      out.used.push_back(false);
    }
    return true;
  });
}

bool Parser::annFail(Ann &a, llvm::StringRef key, const std::string &msg) {
  for (size_t i = 0; i < a.fields.size(); ++i)
    if (a.fields[i].first == key) return failAt(a.locs[i], "annotation field '" + key.str() + "': " + msg);
  return failAt(a.locs.empty() ? Loc() : a.locs[0], msg);
}

bool Parser::checkAnnUsed(Ann &a, llvm::StringRef kind) {
  for (size_t i = 0; i < a.fields.size(); ++i)
    if (!a.used[i])
      return failAt(a.locs[i], "unknown field '" + a.fields[i].first + "' in '#@" + kind.str() +
                                   "' annotation");
  return true;
}

bool Parser::valStr(const AVal &v, std::string &out) {
  if (v.kind != AVal::Kind::String) return false;
  out = v.text;
  return true;
}
bool Parser::valInt(const AVal &v, int64_t &out) {
  if (v.kind != AVal::Kind::Number) return false;
  errno = 0;
  char *end = nullptr;
  long long x = strtoll(v.text.c_str(), &end, 10);
  if (errno || !end || *end) return false;
  out = x;
  return true;
}
bool Parser::valHex(const AVal &v, std::string &out) {
  if (v.kind != AVal::Kind::String) return false;
  std::optional<std::string> b = fromHex(v.text);
  if (!b) return false;
  out = std::move(*b);
  return true;
}
bool Parser::valMeta(const AVal &v, Metadata &out) {
  if (v.kind != AVal::Kind::List) return false;
  out.clear();
  for (const AVal &e : v.items) {
    if (e.kind != AVal::Kind::Pair || e.items[0].kind != AVal::Kind::String ||
        e.items[1].kind != AVal::Kind::String)
      return false;
    out.emplace_back(e.items[0].text, e.items[1].text);
  }
  return true;
}
bool Parser::valInts(const AVal &v, std::vector<int64_t> &out) {
  if (v.kind != AVal::Kind::List) return false;
  out.clear();
  for (const AVal &e : v.items) {
    int64_t x;
    if (!valInt(e, x)) return false;
    out.push_back(x);
  }
  return true;
}
bool Parser::annStr(Ann &a, llvm::StringRef key, std::string &out) {
  if (const AVal *v = a.get(key))
    if (!valStr(*v, out)) return annFail(a, key, "expected a string");
  return true;
}
bool Parser::annHex(Ann &a, llvm::StringRef key, std::string &out) {
  if (const AVal *v = a.get(key))
    if (!valHex(*v, out)) return annFail(a, key, "expected a hex string");
  return true;
}
bool Parser::annMeta(Ann &a, llvm::StringRef key, Metadata &out) {
  if (const AVal *v = a.get(key))
    if (!valMeta(*v, out)) return annFail(a, key, "expected a list of \"key\": \"value\" pairs");
  return true;
}

/// Record readers report through annFail-like messages at the record's
/// annotation; they return false with a message in annWhat_.
#define REC_FAIL(msg)                                                                    \
  do {                                                                                   \
    annWhat_ = msg;                                                                      \
    return false;                                                                        \
  } while (0)

bool Parser::recType(const AVal &v, const Type *&out, unsigned depth) {
  if (depth > kMaxTypeNesting)
    REC_FAIL("types nest deeper than " + std::to_string(kMaxTypeNesting) +
             " levels (the limit of onnxir::kMaxTypeNesting)");
  if (v.isNull()) {
    out = nullptr;
    return true;
  }
  if (v.kind != AVal::Kind::Record) REC_FAIL("expected a type record");
  TypeSpec s;
  std::string kind;
  for (const auto &[key, val] : v.fields) {
    if (key == "kind") {
      if (!valStr(val, kind)) REC_FAIL("type kind must be a string");
    } else if (key == "elem") {
      int64_t e;
      if (!valInt(val, e) || e < INT32_MIN || e > INT32_MAX) REC_FAIL("bad elem");
      s.hasElem = true;
      s.elem = int32_t(e);
    } else if (key == "shape") {
      if (val.kind != AVal::Kind::List) REC_FAIL("shape must be a list");
      s.hasShape = true;
      for (const AVal &d : val.items) {
        Dim dim;
        int64_t x;
        if (valInt(d, x)) {
          dim = Dim::known(x);
        } else if (d.kind == AVal::Kind::String) {
          dim = ctx_->symbolicDim(d.text);
        } else if (d.isNull()) {
        } else if (d.kind == AVal::Kind::Record) {
          for (const auto &[dk, dv] : d.fields) {
            std::string str;
            if (dk == "value" && valInt(dv, x)) dim = Dim::known(x);
            else if (dk == "param" && valStr(dv, str)) {
              Dim sd = ctx_->symbolicDim(str);
              sd.denotation = dim.denotation;
              dim = sd;
            } else if (dk == "denotation" && valStr(dv, str)) dim.denotation = ctx_->intern(str);
            else REC_FAIL("bad dimension field '" + dk + "'");
          }
        } else {
          REC_FAIL("bad dimension");
        }
        s.dims.push_back(dim);
      }
    } else if (key == "inner") {
      if (!recType(val, s.inner, depth + 1)) return false;
    } else if (key == "domain") {
      if (!valStr(val, s.opaqueDomain)) REC_FAIL("domain must be a string");
    } else if (key == "name") {
      if (!valStr(val, s.opaqueName)) REC_FAIL("name must be a string");
    } else if (key == "denotation") {
      if (!valStr(val, s.denotation)) REC_FAIL("denotation must be a string");
    } else if (key == "extras") {
      if (!valHex(val, s.extras)) REC_FAIL("extras must be a hex string");
    } else {
      REC_FAIL("unknown type field '" + key + "'");
    }
  }
  if (kind == "tensor") s.kind = Type::Kind::Tensor;
  else if (kind == "sparse_tensor") s.kind = Type::Kind::SparseTensor;
  else if (kind == "seq") s.kind = Type::Kind::Sequence;
  else if (kind == "map") s.kind = Type::Kind::Map;
  else if (kind == "optional") s.kind = Type::Kind::Optional;
  else if (kind == "opaque") s.kind = Type::Kind::Opaque;
  else if (kind == "none") s.kind = Type::Kind::None;
  else REC_FAIL("unknown type kind '" + kind + "'");
  out = ctx_->getType(s);
  return true;
}

static bool literalsToTyped(const std::vector<AVal> &vals, TypedData &d, std::string &err);

bool Parser::recTensor(const AVal &v, Tensor &t) {
  if (v.kind != AVal::Kind::Record) REC_FAIL("expected a tensor record");
  std::optional<Tensor::TypedField> field;
  const AVal *data = nullptr;
  std::string dataHex;
  bool haveDataHex = false;
  for (const auto &[key, val] : v.fields) {
    std::string s;
    int64_t x;
    if (key == "name") {
      if (!valStr(val, s)) REC_FAIL("name must be a string");
      t.setName(s);
    } else if (key == "data_type") {
      if (!valInt(val, x) || x < INT32_MIN || x > INT32_MAX) REC_FAIL("bad data_type");
      t.setDataTypeRaw(int32_t(x));
    } else if (key == "dims") {
      std::vector<int64_t> d;
      if (!valInts(val, d)) REC_FAIL("dims must be a list of integers");
      t.setDims(d);
    } else if (key == "doc_string") {
      if (!valStr(val, t.docString)) REC_FAIL("doc_string must be a string");
    } else if (key == "metadata_props") {
      if (!valMeta(val, t.metadata)) REC_FAIL("bad metadata_props");
    } else if (key == "segment") {
      std::vector<int64_t> d;
      if (!valInts(val, d) || d.size() != 2) REC_FAIL("segment must be [begin, end]");
      t.segment = std::make_pair(d[0], d[1]);
    } else if (key == "extras") {
      if (!valHex(val, t.extras)) REC_FAIL("extras must be a hex string");
    } else if (key == "data_location") {
      if (val.isNull()) t.dataLocation.reset();
      else if (valInt(val, x) && x >= INT32_MIN && x <= INT32_MAX) t.dataLocation = int32_t(x);
      else REC_FAIL("bad data_location");
    } else if (key == "raw") {
      if (!valHex(val, s)) REC_FAIL("raw must be a hex string");
      t.setRaw(std::move(s));
    } else if (key == "field") {
      if (!valStr(val, s) || !(field = typedFieldFromName(s))) REC_FAIL("bad field");
    } else if (key == "data") {
      if (val.kind != AVal::Kind::List) REC_FAIL("data must be a list");
      data = &val;
    } else if (key == "data_hex") {
      if (!valHex(val, dataHex)) REC_FAIL("data_hex must be a hex string");
      haveDataHex = true;
    } else if (key == "external") {
      ExternalDataRef ref;
      if (!valMeta(val, ref.entries)) REC_FAIL("bad external");
      ExternalLoader loader;
      std::string msg;
      if (!bindExternalRef(ref, t.name(), loader, msg)) REC_FAIL(msg);
      std::optional<int32_t> loc = t.dataLocation;
      t.setExternal(std::move(ref), std::move(loader));
      t.dataLocation = loc;
    } else {
      REC_FAIL("unknown tensor field '" + key + "'");
    }
  }
  if (field) {
    TypedData d;
    d.field = *field;
    if (data) {
      std::string err;
      if (!literalsToTyped(data->items, d, err)) REC_FAIL(err);
    }
    if (haveDataHex && !typedFromBits(d, dataHex)) REC_FAIL("bad data_hex");
    std::optional<int32_t> loc = t.dataLocation;
    setTypedData(t, std::move(d));
    t.dataLocation = loc;
  }
  if (absl::Status st = checkTensorData(t); !st.ok()) REC_FAIL(std::string(st.message()));
  return true;
}

bool Parser::recSparse(const AVal &v, SparseTensor &s) {
  if (v.kind != AVal::Kind::Record) REC_FAIL("expected a sparse tensor record");
  s.hasValues = s.hasIndices = false;
  for (const auto &[key, val] : v.fields) {
    if (key == "dims") {
      if (!valInts(val, s.dims)) REC_FAIL("dims must be a list of integers");
    } else if (key == "values") {
      s.hasValues = true;
      if (!recTensor(val, s.values)) return false;
    } else if (key == "indices") {
      s.hasIndices = true;
      if (!recTensor(val, s.indices)) return false;
    } else if (key == "extras") {
      if (!valHex(val, s.extras)) REC_FAIL("extras must be a hex string");
    } else if (key != "name") {
      REC_FAIL("unknown sparse tensor field '" + key + "'");
    }
  }
  return true;
}

template <class F>
bool Parser::recItems(const AVal &val, const std::string &what, bool records, F each) {
  if (val.kind != AVal::Kind::List) REC_FAIL(what + " must be a list");
  for (const AVal &e : val.items) {
    if (records && e.kind != AVal::Kind::Record) REC_FAIL("bad " + what + " entry");
    if (!each(e)) return false;
  }
  return true;
}

bool Parser::recSharding(const AVal &v, ShardingSpec &s) {
  if (v.kind != AVal::Kind::Record) REC_FAIL("expected a sharding_spec record");
  for (const auto &[key, val] : v.fields) {
    std::string str;
    if (key == "tensor_name") {
      if (!valStr(val, str)) REC_FAIL("tensor_name must be a string");
      s.tensorName = str;
    } else if (key == "device") {
      if (!valInts(val, s.device)) REC_FAIL("device must be a list of integers");
    } else if (key == "index_to_device_group_map") {
      if (!recItems(val, key, true, [&](const AVal &e) {
            std::pair<std::optional<int64_t>, std::vector<int64_t>> entry;
            for (const auto &[ek, ev] : e.fields) {
              int64_t x;
              if (ek == "key" && valInt(ev, x)) entry.first = x;
              else if (ek == "value" && valInts(ev, entry.second)) {
              } else REC_FAIL("bad index_to_device_group_map field '" + ek + "'");
            }
            s.indexToDeviceGroupMap.push_back(std::move(entry));
            return true;
          }))
        return false;
    } else if (key == "index_map_extras") {
      if (!recItems(val, key, false, [&](const AVal &e) {
            if (!valHex(e, str)) REC_FAIL("bad index_map_extras");
            s.indexToDeviceGroupMapExtras.push_back(str);
            return true;
          }))
        return false;
    } else if (key == "sharded_dim") {
      if (!recItems(val, key, true, [&](const AVal &e) {
            ShardingSpec::ShardedDim sd;
            for (const auto &[ek, ev] : e.fields) {
              int64_t x;
              if (ek == "axis" && valInt(ev, x)) sd.axis = x;
              else if (ek == "extras" && valHex(ev, sd.extras)) {
              } else if (ek == "simple_sharding" && ev.kind == AVal::Kind::List) {
                if (!recItems(ev, ek, true, [&](const AVal &ss) {
                      ShardingSpec::SimpleShardedDim d;
                      for (const auto &[sk, sv] : ss.fields) {
                        if (sk == "dim_value" && valInt(sv, x)) {
                          d.kind = ShardingSpec::SimpleShardedDim::Kind::Value;
                          d.dimValue = x;
                        } else if (sk == "dim_param" && valStr(sv, d.dimParam)) {
                          d.kind = ShardingSpec::SimpleShardedDim::Kind::Param;
                        } else if (sk == "num_shards" && valInt(sv, x)) {
                          d.numShards = x;
                        } else if (sk == "extras" && valHex(sv, d.extras)) {
                        } else {
                          REC_FAIL("bad simple_sharding field '" + sk + "'");
                        }
                      }
                      sd.simpleSharding.push_back(std::move(d));
                      return true;
                    }))
                  return false;
              } else {
                REC_FAIL("bad sharded_dim field '" + ek + "'");
              }
            }
            s.shardedDim.push_back(std::move(sd));
            return true;
          }))
        return false;
    } else if (key == "extras") {
      if (!valHex(val, s.extras)) REC_FAIL("extras must be a hex string");
    } else {
      REC_FAIL("unknown sharding_spec field '" + key + "'");
    }
  }
  return true;
}

bool Parser::recDeviceConfig(const AVal &v, NodeDeviceConfiguration &c) {
  if (v.kind != AVal::Kind::Record) REC_FAIL("expected a device configuration record");
  for (const auto &[key, val] : v.fields) {
    std::string str;
    int64_t x;
    if (key == "configuration_id") {
      if (!valStr(val, str)) REC_FAIL("configuration_id must be a string");
      c.configurationId = str;
    } else if (key == "sharding_spec") {
      if (!recItems(val, key, false, [&](const AVal &e) {
            c.shardingSpec.emplace_back();
            return recSharding(e, c.shardingSpec.back());
          }))
        return false;
    } else if (key == "pipeline_stage") {
      if (!valInt(val, x) || x < INT32_MIN || x > INT32_MAX) REC_FAIL("bad pipeline_stage");
      c.pipelineStage = int32_t(x);
    } else if (key == "extras") {
      if (!valHex(val, c.extras)) REC_FAIL("extras must be a hex string");
    } else {
      REC_FAIL("unknown device configuration field '" + key + "'");
    }
  }
  return true;
}

bool Parser::applyTensorAnn(Ann &a, Tensor &t, bool &rawFlag, std::string &rawHex,
                            std::optional<Tensor::TypedField> &field, std::string &dataHex) {
  std::string s;
  if (const AVal *v = a.get("name")) {
    if (!valStr(*v, s)) return annFail(a, "name", "expected a string");
    t.setName(s);
  }
  if (!annStr(a, "doc_string", t.docString) || !annMeta(a, "metadata_props", t.metadata) ||
      !annHex(a, "extras", t.extras) || !annHex(a, "data_hex", dataHex))
    return false;
  if (const AVal *v = a.get("segment")) {
    std::vector<int64_t> d;
    if (!valInts(*v, d) || d.size() != 2) return annFail(a, "segment", "expected [begin, end]");
    t.segment = std::make_pair(d[0], d[1]);
  }
  if (const AVal *v = a.get("raw")) {
    if (v->kind == AVal::Kind::Word && v->text == "true") rawFlag = true;
    else if (!valHex(*v, rawHex)) return annFail(a, "raw", "expected true or a hex string");
  }
  if (const AVal *v = a.get("field")) {
    if (!valStr(*v, s) || !(field = typedFieldFromName(s)))
      return annFail(a, "field", "expected a typed field name");
  }
  if (const AVal *v = a.get("data_type")) {
    int64_t x;
    if (!valInt(*v, x) || x < INT32_MIN || x > INT32_MAX)
      return annFail(a, "data_type", "expected an integer");
    t.setDataTypeRaw(int32_t(x));
  }
  return true;
}

bool Parser::applyValueAnn(Ann &a, const Type *&type, bool &hasType, std::string &doc,
                           Metadata &md, std::string &extras) {
  if (const AVal *v = a.get("type")) {
    if (!recType(*v, type, 0)) return annFail(a, "type", annWhat_);
    hasType = type != nullptr;
  }
  return annStr(a, "doc_string", doc) && annMeta(a, "metadata_props", md) &&
         annHex(a, "extras", extras) && checkAnnUsed(a, "value");
}

//===----------------------------------------------------------------------===//
// External data of parsed text
//===----------------------------------------------------------------------===//

bool Parser::bindExternalRef(ExternalDataRef &ref, const std::string &tensorName,
                             ExternalLoader &out, std::string &msg) {
  if (!bind_) {
    msg = "external data needs a model file (a function alone has none)";
    return false;
  }
  auto l = bind_(ref, tensorName);
  if (!l.ok()) {
    msg = std::string(l.status().message());
    return false;
  }
  out = std::move(*l);
  return true;
}

//===----------------------------------------------------------------------===//
// Literals and types
//===----------------------------------------------------------------------===//

bool Parser::parseStringToken(std::string &out, const char *what) {
  if (peek().kind != Token::String) return failHere(std::string("expected ") + what);
  Token t;
  if (!consume(&t)) return false;
  out = std::move(t.text);
  return true;
}

static bool parseInt64(const std::string &s, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long x = strtoll(s.c_str(), &end, 10);
  if (errno || !end || *end) return false;
  out = x;
  return true;
}

bool Parser::parseIntToken(int64_t &out, const char *what) {
  if (peek().kind != Token::Int) return failHere(std::string("expected ") + what);
  Token t;
  if (!consume(&t)) return false;
  if (!parseInt64(t.text, out)) return failAt(t.loc, "integer out of range");
  return true;
}

bool Parser::parseQuotableId(std::string &out, const char *what) {
  Token &t = peek();
  if (t.kind != Token::Ident && t.kind != Token::String)
    return failHere(std::string("expected ") + what);
  Token tok;
  if (!consume(&tok)) return false;
  out = std::move(tok.text);
  return true;
}

static bool isTypeKeyword(llvm::StringRef s) {
  return elemTypeFromName(s) != 0 || s == "seq" || s == "map" || s == "optional" ||
         s == "sparse_tensor" || s == "opaque";
}

bool Parser::nextIsType() {
  Token &t = peek();
  if (t.kind != Token::Ident) return false;
  if (isTypeKeyword(t.text)) return true;
  // `floot[2] x`: report the misspelt type rather than a stray '['.
  if (peek(1).kind == Token::Punct && peek(1).punct == '[')
    return failAt(t.loc, "unknown type '" + t.text + "'");
  return false;
}

bool Parser::parseElemType(TypeSpec &spec, const char *what) {
  Token k = peek();
  int32_t e = k.kind == Token::Ident ? elemTypeFromName(k.text) : 0;
  if (!e) return failHere(std::string("expected ") + what);
  if (!consume()) return false;
  spec.hasElem = true;
  spec.elem = e;
  return true;
}

bool Parser::parseShape(TypeSpec &spec) {
  // After the element type: nothing (rank 0), `[]` (unknown rank) or dims.
  if (!isPunct('[')) {
    spec.hasShape = true;
    return true;
  }
  if (!consume()) return false;
  if (accept(']')) return true;
  if (!err_.empty()) return false;
  spec.hasShape = true;
  for (;;) {
    Token &t = peek();
    if (t.kind == Token::Punct && t.punct == '?') {
      if (!consume()) return false;
      spec.dims.push_back(Dim::unknown());
    } else if (t.kind == Token::Ident || t.kind == Token::String) {
      Token tok;
      if (!consume(&tok)) return false;
      spec.dims.push_back(ctx_->symbolicDim(tok.text));
    } else if (t.kind == Token::Int) {
      int64_t v;
      if (!parseIntToken(v, "a dimension")) return false;
      spec.dims.push_back(Dim::known(v));
    } else {
      return failHere("expected a dimension");
    }
    if (accept(',')) continue;
    if (!err_.empty()) return false;
    return expect(']', "',' or ']'");
  }
}

bool Parser::parseType(const Type *&out, unsigned depth) {
  if (depth > kMaxTypeNesting)
    return failHere("types nest deeper than " + std::to_string(kMaxTypeNesting) +
                    " levels (the limit of onnxir::kMaxTypeNesting)");
  Token &t = peek();
  if (t.kind != Token::Ident) return failHere("expected a type");
  Token tok;
  if (!consume(&tok)) return false;
  TypeSpec s;
  if (int32_t e = elemTypeFromName(tok.text)) {
    s.kind = Type::Kind::Tensor;
    s.hasElem = true;
    s.elem = e;
    if (!parseShape(s)) return false;
  } else if (tok.text == "seq" || tok.text == "optional") {
    s.kind = tok.text == "seq" ? Type::Kind::Sequence : Type::Kind::Optional;
    if (!expect('(') || !parseType(s.inner, depth + 1) || !expect(')')) return false;
  } else if (tok.text == "map") {
    s.kind = Type::Kind::Map;
    if (!expect('(') || !parseElemType(s, "a primitive type as map key type")) return false;
    if (!expect(',') || !parseType(s.inner, depth + 1) || !expect(')')) return false;
  } else if (tok.text == "sparse_tensor") {
    s.kind = Type::Kind::SparseTensor;
    if (!expect('(') || !parseElemType(s, "a tensor element type in sparse_tensor"))
      return false;
    if (!parseShape(s) || !expect(')')) return false;
  } else if (tok.text == "opaque") {
    // opaque(), opaque(name), opaque(domain, name); name may be dotted.
    s.kind = Type::Kind::Opaque;
    if (!expect('(')) return false;
    if (peek().kind == Token::Ident) {
      std::string q;
      for (;;) {
        Token p;
        if (peek().kind != Token::Ident) return failHere("expected an identifier");
        if (!consume(&p)) return false;
        q += p.text;
        if (!isPunct('.')) break;
        if (!consume()) return false;
        q += ".";
      }
      if (accept(',')) {
        s.opaqueDomain = q;
        Token p;
        if (peek().kind != Token::Ident) return failHere("expected an opaque type name");
        if (!consume(&p)) return false;
        s.opaqueName = p.text;
      } else {
        if (!err_.empty()) return false;
        s.opaqueName = q;
      }
    }
    if (!expect(')')) return false;
  } else {
    return failAt(tok.loc, "expected a type, found '" + tok.text + "'");
  }
  out = ctx_->getType(s);
  return true;
}

//===----------------------------------------------------------------------===//
// Tensor data
//===----------------------------------------------------------------------===//

/// Converts literal values into the typed field `d.field`.
/// Room for `n` elements in the field `d` writes to.
static void reserveTyped(TypedData &d, size_t n) {
  using F = Tensor::TypedField;
  switch (d.field) {
  case F::Float: d.f32.reserve(n); break;
  case F::Double: d.f64.reserve(n); break;
  case F::Int32: d.i32.reserve(n); break;
  case F::Int64: d.i64.reserve(n); break;
  case F::Uint64: d.u64.reserve(n); break;
  case F::String: d.str.reserve(n); break;
  default: break;
  }
}

/// One tensor literal appended to `d` (its field chosen); false with `err`
/// set when it does not fit the field.
static bool literalToTyped(AVal::Kind kind, const std::string &s, TypedData &d, std::string &err) {
  using F = Tensor::TypedField;
  {
    bool isNum = kind == AVal::Kind::Number ||
                 (kind == AVal::Kind::Word && isReservedWord(s) && !isTypeKeyword(s));
    if (d.field == F::String) {
      if (kind != AVal::Kind::String) {
        err = "expected a string element";
        return false;
      }
      d.str.push_back(s);
      return true;
    }
    if (!isNum) {
      err = "expected a number";
      return false;
    }
    // "inf" and "INF" hold an 'n' or 'N': one scan finds every non-integer.
    bool intLike = s.find_first_of(".eEnN") == std::string::npos;
    errno = 0;
    char *end = nullptr;
    switch (d.field) {
    case F::Float: {
      float f = strtof(s.c_str(), &end);
      if (!end || *end) { err = "bad float '" + s + "'"; return false; }
      d.f32.push_back(f);
      break;
    }
    case F::Double: {
      double x = strtod(s.c_str(), &end);
      if (!end || *end) { err = "bad number '" + s + "'"; return false; }
      d.f64.push_back(x);
      break;
    }
    case F::Int32:
    case F::Int64: {
      if (!intLike) { err = "expected an integer, found '" + s + "'"; return false; }
      // from_chars reads what the lexer makes of an integer; strtoll keeps
      // the last word on anything else (and reports it).
      long long x;
      auto [last, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
      if (ec != std::errc() || last != s.data() + s.size()) {
        x = strtoll(s.c_str(), &end, 10);
        if (errno || !end || *end) { err = "integer out of range: " + s; return false; }
      }
      if (d.field == F::Int32) {
        if (x < INT32_MIN || x > INT32_MAX) { err = "integer out of int32 range: " + s; return false; }
        d.i32.push_back(int32_t(x));
      } else {
        d.i64.push_back(x);
      }
      break;
    }
    case F::Uint64: {
      if (!intLike || s[0] == '-') { err = "expected an unsigned integer, found '" + s + "'"; return false; }
      unsigned long long x = strtoull(s.c_str(), &end, 10);
      if (errno || !end || *end) { err = "integer out of range: " + s; return false; }
      d.u64.push_back(x);
      break;
    }
    default: err = "element type has no typed field"; return false;
    }
  }
  return true;
}

static bool literalsToTyped(const std::vector<AVal> &vals, TypedData &d, std::string &err) {
  for (const AVal &v : vals)
    if (!literalToTyped(v.kind, v.text, d, err)) return false;
  return true;
}

/// checkTensorData (Tensor.h) as text: "" when the tensor is sound.
static std::string tensorCountError(const Tensor &t) {
  absl::Status s = checkTensorData(t);
  return s.ok() ? std::string() : std::string(s.message());
}

bool Parser::parseTensorData(Tensor &t, Ann &ann, const Type *type, Loc typeLoc) {
  if (!type || type->kind() != Type::Kind::Tensor)
    return failAt(typeLoc, "expected a tensor type for a tensor constant");
  if (!type->hasShape())
    return failAt(typeLoc, "a tensor constant needs a shape (use `float` for a scalar)");
  t.setDataTypeRaw(type->elemTypeRaw());
  std::vector<int64_t> dims;
  for (const Dim &d : type->dims()) {
    if (!d.isKnown()) return failAt(typeLoc, "a tensor constant needs numeric dimensions");
    dims.push_back(d.value);
  }
  t.setDims(std::move(dims));
  bool rawFlag = false;
  std::string rawHex, dataHex;
  std::optional<Tensor::TypedField> field;
  if (!applyTensorAnn(ann, t, rawFlag, rawHex, field, dataHex)) return false;
  std::optional<int32_t> dataLoc;
  bool dataLocSet = false;
  if (const AVal *v = ann.get("data_location")) {
    int64_t x;
    dataLocSet = true;
    if (v->isNull()) dataLoc.reset();
    else if (valInt(*v, x) && x >= INT32_MIN && x <= INT32_MAX) dataLoc = int32_t(x);
    else return annFail(ann, "data_location", "expected an integer or null");
  }
  if (!checkAnnUsed(ann, "tensor")) return false;

  if (isPunct('[')) {
    // External data: ["key": "value", ...].
    if (!consume()) return false;
    ExternalDataRef ref;
    if (!isPunct(']')) {
      for (;;) {
        std::string k, v;
        if (!parseStringToken(k, "an external data key") || !expect(':') ||
            !parseStringToken(v, "an external data value"))
          return false;
        ref.entries.emplace_back(k, v);
        if (accept(',')) continue;
        if (!err_.empty()) return false;
        break;
      }
    }
    if (!expect(']', "',' or ']'")) return false;
    if (ref.entries.size() == 1 && ref.entries[0].first == "__elided__")
      // An elided constant (PrintOptions::elideElementsAbove) lost its data.
      return failHere((t.name().empty() ? std::string("a tensor constant")
                                        : "tensor \"" + t.name() + "\"") +
                      " is elided (" + ref.entries[0].second +
                      " elements printed as \"__elided__\"): elided data cannot become a "
                      "model; print it with --print-lossless (the default for files)");
    ExternalLoader loader;
    std::string msg;
    if (!bindExternalRef(ref, t.name(), loader, msg)) return failHere(msg);
    t.setExternal(std::move(ref), std::move(loader));
    t.dataLocation = dataLocSet ? dataLoc : std::optional<int32_t>(1);
    if (std::string e = tensorCountError(t); !e.empty()) return failAt(typeLoc, "tensor: " + e);
    return true;
  }
  if (!isPunct('{')) {
    if (!err_.empty()) return false;
    return failHere("expected '{' or '[' for tensor data");
  }
  Loc open = peek().loc;
  if (!consume()) return false;
  // Elements are converted as they are read (no list of literals: a big
  // weight held one 80-byte literal per element); the first one that does
  // not fit the field is reported after the body is read, as before.
  TypedData d;
  d.field = field ? *field : standardField(t.dataTypeRaw());
  size_t count = 0;
  std::string convErr;
  auto add = [&](AVal::Kind kind, const std::string &text) {
    ++count;
    if (convErr.empty()) literalToTyped(kind, text, d, convErr);
  };
  // Room for the elements the shape declares, bounded by what the body can
  // hold (an element and its comma take 2 bytes or more; the body ends at
  // the next '}' at the latest, a string element holding one only makes the
  // room smaller): growing by doubling moved each element twice on average,
  // and a claimed shape must not allocate more than its body can fill.
  {
    uint64_t want = 1;
    for (int64_t dim : t.dims()) {
      if (dim <= 0 || want > (uint64_t(1) << 40) / uint64_t(dim)) {
        want = dim <= 0 ? 0 : uint64_t(1) << 40;
        break;
      }
      want *= uint64_t(dim);
    }
    reserveTyped(d, (size_t)std::min<uint64_t>(want, lex_.bytesUntil('}') / 2 + 1));
  }
  bool closed = false;
  if (!isPunct('}')) {
    std::string text;
    for (;;) {
      // Note [Tensor bodies without tokens]: the fast path while the
      // parser holds no lookahead.
      if (la_.empty()) {
        llvm::StringRef num;
        if (lex_.plainNumber(num)) {
          text.assign(num.data(), num.size());
          add(AVal::Kind::Number, text);
          char sep = lex_.plainSeparator();
          if (sep == ',') continue;
          if (sep == '}') {
            closed = true;
            break;
          }
          // Anything else: the token path reports it (or reads a comment).
          if (accept(',')) continue;
          if (!err_.empty()) return false;
          break;
        }
      }
      Token &e = peek();
      AVal::Kind kind;
      if (e.kind == Token::Int || e.kind == Token::Float) {
        kind = AVal::Kind::Number;
      } else if (e.kind == Token::String) {
        kind = AVal::Kind::String;
      } else if (e.kind == Token::Ident && isReservedWord(e.text) && !isTypeKeyword(e.text)) {
        kind = AVal::Kind::Word;
      } else {
        return failHere("expected a tensor element");
      }
      add(kind, e.text);
      if (!consume()) return false;
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      break;
    }
  }
  if (!closed && !expect('}', "',' or '}'")) return false;

  if (!rawHex.empty() || (count == 0 && rawFlag)) {
    t.setRaw(std::move(rawHex));
  } else if (count == 0 && !field) {
    t.setEmpty();
  } else {
    if (!convErr.empty()) return failAt(open, "in tensor data: " + convErr);
    if (!dataHex.empty() && !typedFromBits(d, dataHex))
      return annFail(ann, "data_hex", "does not match the typed field");
    if (rawFlag) {
      std::optional<std::string> raw = typedToRaw(t.dataTypeRaw(), d);
      if (!raw) return failAt(open, "tensor data cannot be encoded as raw bytes of this type");
      t.setRaw(std::move(*raw));
    } else {
      setTypedData(t, std::move(d));
    }
  }
  t.dataLocation = dataLocSet ? dataLoc : std::nullopt;
  if (std::string e = tensorCountError(t); !e.empty()) return failAt(open, "tensor data: " + e);
  return true;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static std::optional<AttrKind> attrKindFromName(llvm::StringRef s) {
  for (int k = 1; k <= 14; ++k)
    if (attrKindName(AttrKind(k)) == s) return AttrKind(k);
  return std::nullopt;
}

static AttrKind singletonOf(AttrKind k) {
  switch (k) {
  case AttrKind::Floats: return AttrKind::Float;
  case AttrKind::Ints: return AttrKind::Int;
  case AttrKind::Strings: return AttrKind::String;
  case AttrKind::Tensors: return AttrKind::Tensor;
  case AttrKind::Graphs: return AttrKind::Graph;
  case AttrKind::SparseTensors: return AttrKind::SparseTensor;
  case AttrKind::TypeProtos: return AttrKind::TypeProto;
  default: return k;
  }
}

static bool isFloatWord(llvm::StringRef s) {
  std::string l = s.lower();
  return l == "inf" || l == "infinity" || l == "nan";
}

bool Parser::parseSingleAttrValue(Attribute &a, AttrKind expected, unsigned depth) {
  Token &t = peek();
  Loc loc = t.loc;
  AttrKind got = AttrKind::Undefined;
  if (t.kind == Token::Ident && isTypeKeyword(t.text)) {
    Ann ann;
    if (!claim(t, "tensor", ann)) return false;
    const Type *ty = nullptr;
    if (!parseType(ty, 0)) return false;
    Token &n = peek();
    bool isTensor = (n.kind == Token::Punct && (n.punct == '{' || n.punct == '=' || n.punct == '[')) ||
                    n.kind == Token::Ident || n.kind == Token::String;
    if (isTensor) {
      auto tensor = std::make_unique<Tensor>();
      if (n.kind == Token::Ident || n.kind == Token::String) {
        Token nt;
        if (!consume(&nt)) return false;
        tensor->setName(nt.text);
      }
      if (isPunct('=') && !consume()) return false;
      if (!parseTensorData(*tensor, ann, ty, loc)) return false;
      a.tensors.push_back(std::move(tensor));
      got = AttrKind::Tensor;
    } else {
      if (!err_.empty()) return false;
      if (!ann.empty()) return annFail(ann, ann.fields[0].first, "'#@tensor' on a type value");
      a.types.push_back(ty);
      got = AttrKind::TypeProto;
    }
  } else if (t.kind == Token::Ident && isFloatWord(t.text)) {
    a.floats.push_back(strtof(t.text.c_str(), nullptr));
    if (!consume()) return false;
    got = AttrKind::Float;
  } else if (t.kind == Token::Ident ||
             (t.kind == Token::String && peek(1).kind == Token::Punct && peek(1).punct == '(')) {
    auto g = std::make_unique<Graph>(*ctx_);
    if (!parseGraph(*g, depth + 1)) return false;
    a.addGraph(std::move(g));
    got = AttrKind::Graph;
  } else if (t.kind == Token::String) {
    a.strings.push_back(t.text);
    if (!consume()) return false;
    got = AttrKind::String;
  } else if (t.kind == Token::Int) {
    int64_t v;
    if (!parseIntToken(v, "an integer")) return false;
    a.ints.push_back(v);
    got = AttrKind::Int;
  } else if (t.kind == Token::Float) {
    a.floats.push_back(strtof(t.text.c_str(), nullptr));
    if (!consume()) return false;
    got = AttrKind::Float;
  } else {
    return failHere("expected an attribute value");
  }
  if (expected != AttrKind::Undefined && expected != got) {
    if (expected == AttrKind::Float && got == AttrKind::Int) {
      a.floats.push_back(float(a.ints.back()));
      a.ints.pop_back();
    } else {
      return failAt(loc, "attribute value is a " + attrKindName(got).str() + ", expected a " +
                             attrKindName(expected).str());
    }
  }
  return true;
}

bool Parser::parseAttrValue(Attribute &a, AttrKind declared, unsigned depth, Loc nameLoc) {
  if (depth > kMaxGraphNesting)
    return failHere("subgraphs nest deeper than " + std::to_string(kMaxGraphNesting) +
                    " levels (the limit of onnxir::kMaxGraphNesting)");
  if (isPunct('@')) {
    if (!consume()) return false;
    if (!parseQuotableId(a.refAttrName, "an attribute name after '@'")) return false;
    if (a.refAttrName.empty()) return failAt(nameLoc, "empty attribute reference");
    a.setKind(declared);
    // Like onnx.parser: a reference without a declared type has no `type`.
    if (declared == AttrKind::Undefined) a.hasKindField = false;
    return true;
  }
  if (isPunct('[')) {
    if (!consume()) return false;
    AttrKind elem = singletonOf(declared);
    if (!isPunct(']')) {
      for (;;) {
        Loc eloc = peek().loc;
        if (!parseSingleAttrValue(a, elem, depth)) return false;
        if (!a.ints.empty() && !a.floats.empty()) {
          // [1, 2.5]: every integer so far came before the first float.
          std::vector<float> fs;
          for (int64_t i : a.ints) fs.push_back(float(i));
          fs.insert(fs.end(), a.floats.begin(), a.floats.end());
          a.floats = std::move(fs);
          a.ints.clear();
          elem = AttrKind::Float;
        }
        int kinds = !a.ints.empty() + !a.floats.empty() + !a.strings.empty() +
                    !a.tensors.empty() + (a.numGraphs() > 0) + !a.types.empty();
        if (kinds > 1) return failAt(eloc, "list elements of different kinds");
        if (accept(',')) continue;
        if (!err_.empty()) return false;
        break;
      }
    }
    if (!err_.empty()) return false;
    if (!expect(']', "',' or ']'")) return false;
    AttrKind kind = !a.ints.empty()      ? AttrKind::Ints
                    : !a.floats.empty()  ? AttrKind::Floats
                    : !a.strings.empty() ? AttrKind::Strings
                    : !a.tensors.empty() ? AttrKind::Tensors
                    : a.numGraphs()      ? AttrKind::Graphs
                    : !a.types.empty()   ? AttrKind::TypeProtos
                                         : AttrKind::Undefined;
    if (kind == AttrKind::Undefined) {
      // `x: ints = []`; for singleton kinds (`x: sparse_tensor = []`) an
      // annotation supplies the payload.
      if (declared == AttrKind::Undefined)
        return failAt(nameLoc, "an empty list attribute needs a type, e.g. 'name: ints = []'");
      kind = declared;
    } else if (declared != AttrKind::Undefined && kind != declared) {
      return failAt(nameLoc, "attribute declared " + attrKindName(declared).str() +
                                 " but holds a list of " + attrKindName(singletonOf(kind)).str());
    }
    a.setKind(kind);
    return true;
  }
  if (!parseSingleAttrValue(a, declared, depth)) return false;
  if (!a.ints.empty()) a.setInt(a.ints[0]), a.ints.clear();
  else if (!a.floats.empty()) a.setFloat(a.floats[0]), a.floats.clear();
  else if (!a.strings.empty()) a.setString(a.strings[0]), a.strings.clear();
  else if (!a.tensors.empty()) a.setKind(AttrKind::Tensor);
  else if (a.numGraphs()) a.setKind(AttrKind::Graph);
  else if (!a.types.empty()) a.setKind(AttrKind::TypeProto);
  return true;
}

bool Parser::parseAttr(std::unique_ptr<Attribute> &out, unsigned depth) {
  Token &first = peek();
  Loc nameLoc = first.loc;
  Ann ann;
  if (!claim(first, "attr", ann)) return false;
  std::string name;
  if (!parseQuotableId(name, "an attribute name")) return false;
  auto a = std::make_unique<Attribute>(name);
  AttrKind declared = AttrKind::Undefined;
  if (isPunct(':')) {
    if (!consume()) return false;
    Token k;
    if (peek().kind != Token::Ident) return failHere("expected an attribute type");
    if (!consume(&k)) return false;
    std::optional<AttrKind> kk = attrKindFromName(k.text);
    if (!kk) return failAt(k.loc, "unknown attribute type '" + k.text + "'");
    declared = *kk;
  }
  if (!err_.empty()) return false;
  if (!expect('=')) return false;
  if (!parseAttrValue(*a, declared, depth, nameLoc)) return false;

  // Annotation fields.
  if (!annStr(ann, "doc_string", a->docString) || !annHex(ann, "extras", a->extras)) return false;
  if (ann.get("untyped")) a->hasKindField = false;
  if (ann.get("omitted")) a->valueOmitted = true; // Note [Scalar attribute presence]
  if (ann.get("undefined")) {
    a->setKind(AttrKind::Undefined);
    a->ints.clear();
  }
  std::string bits;
  if (!annHex(ann, "f_hex", bits)) return false;
  if (!bits.empty()) {
    if (bits.size() != 4) return annFail(ann, "f_hex", "expected 4 bytes");
    std::memcpy(&a->f, bits.data(), 4);
  }
  bits.clear();
  if (!annHex(ann, "floats_hex", bits)) return false;
  if (!bits.empty()) {
    if (bits.size() != a->floats.size() * 4) return annFail(ann, "floats_hex", "wrong length");
    std::memcpy(a->floats.mut().data(), bits.data(), bits.size());
  }
  if (const AVal *v = ann.get("sparse_tensor")) {
    a->sparseTensors.clear();
    if (!v->isNull()) {
      auto s = std::make_unique<SparseTensor>();
      if (!recSparse(*v, *s)) return annFail(ann, "sparse_tensor", annWhat_);
      a->sparseTensors.push_back(std::move(s));
    }
  }
  if (const AVal *v = ann.get("sparse_tensors")) {
    if (v->kind != AVal::Kind::List) return annFail(ann, "sparse_tensors", "expected a list");
    for (const AVal &e : v->items) {
      auto s = std::make_unique<SparseTensor>();
      if (!recSparse(e, *s)) return annFail(ann, "sparse_tensors", annWhat_);
      a->sparseTensors.push_back(std::move(s));
    }
  }
  if (const AVal *v = ann.get("types")) {
    if (v->kind != AVal::Kind::List) return annFail(ann, "types", "expected a list");
    a->types.clear();
    for (const AVal &e : v->items) {
      const Type *t = nullptr;
      if (!recType(e, t, 0)) return annFail(ann, "types", annWhat_);
      a->types.push_back(t);
    }
  }
  if (!checkAnnUsed(ann, "attr")) return false;
  out = std::move(a);
  return true;
}

bool Parser::parseAttrList(Node *n, unsigned depth) {
  if (!expect('<')) return false;
  for (;;) {
    std::unique_ptr<Attribute> a;
    if (!parseAttr(a, depth)) return false;
    n->addAttr(std::move(a));
    if (accept(',')) continue;
    if (!err_.empty()) return false;
    return expect('>', "',' or '>'");
  }
}

//===----------------------------------------------------------------------===//
// Nodes and graphs
//===----------------------------------------------------------------------===//

bool Parser::parseIdList(std::vector<std::pair<std::string, Loc>> &out) {
  // ONNX semantics: an empty name is written `""`, or left out before a
  // comma: `Op(,x)` is ["", x], `Op(x,)` is [x], `Op(,)` is [""].
  bool first = true;
  for (;;) {
    Token &t = peek();
    std::string id;
    Loc loc = t.loc;
    bool found = false;
    if (t.kind == Token::Ident || t.kind == Token::String) {
      Token tok;
      if (!consume(&tok)) return false;
      id = std::move(tok.text);
      found = true;
    } else if (t.kind == Token::Punct && t.punct == ',') {
      found = true;
    }
    if (!found) return true;
    out.emplace_back(std::move(id), loc);
    first = false;
    if (!accept(',')) return err_.empty();
  }
  (void)first;
}

bool Parser::parseNode(Graph &g, unsigned depth) {
  Token &first = peek();
  Loc nodeLoc = first.loc;
  Ann ann;
  if (!claim(first, "node", ann)) return false;
  std::string label;
  bool hasLabel = false;
  if (isPunct('[')) {
    if (!consume()) return false;
    Token &t = peek();
    if (t.kind == Token::Ident || t.kind == Token::String) {
      Token tok;
      if (!consume(&tok)) return false;
      label = tok.text;
    }
    hasLabel = true;
    if (!expect(']')) return false;
  }
  if (!err_.empty()) return false;
  std::vector<std::pair<std::string, Loc>> outs, ins;
  if (!parseIdList(outs)) return false;
  if (!expect('=', outs.empty() ? "a node" : "'=' after the node's outputs")) return false;
  // qualified-id [':' overload]
  std::string domain, op;
  Loc opLoc = peek().loc;
  if (peek().kind != Token::Ident) return failHere("expected an operator name");
  for (;;) {
    Token p;
    if (!consume(&p)) return false;
    if (!isPunct('.')) {
      op = p.text;
      break;
    }
    if (!consume()) return false;
    if (!domain.empty()) domain += ".";
    domain += p.text;
    if (peek().kind != Token::Ident) return failHere("expected an operator name after '.'");
  }
  std::string overload;
  if (isPunct(':')) {
    if (!consume()) return false;
    Token p;
    if (peek().kind != Token::Ident) return failHere("expected an overload name");
    if (!consume(&p)) return false;
    overload = p.text;
  }
  if (!err_.empty()) return false;
  if (!annStr(ann, "op_type", op) || !annStr(ann, "domain", domain) ||
      !annStr(ann, "overload", overload))
    return false;

  Node *n = g.createEmptyNode(op, domain);
  // Checks of the model as read name this place (Note [Source locations]).
  g.getContext().setSourceLoc(n, file_, opLoc.line, opLoc.col);
  if (!overload.empty()) n->setOverload(overload);
  if (hasLabel) n->setName(label);
  for (auto &[name, loc] : outs) {
    if (name.empty()) {
      n->addEmptyResult();
      continue;
    }
    absl::StatusOr<Value *> r = n->addResult(name);
    if (!r.ok()) return failAt(loc, "'" + name + "' is already defined");
  }
  bool attrsBefore = false;
  if (isPunct('<')) {
    attrsBefore = true;
    if (!parseAttrList(n, depth)) return false;
  }
  if (!err_.empty()) return false;
  if (!expect('(', "'(' before the node's inputs")) return false;
  if (!parseIdList(ins)) return false;
  if (!expect(')', "',' or ')'")) return false;
  if (!attrsBefore && isPunct('<')) {
    if (!parseAttrList(n, depth)) return false;
  }
  if (!err_.empty()) return false;
  for (auto &[name, loc] : ins) {
    unsigned idx = n->numOperands();
    n->addOperand(nullptr);
    if (!name.empty()) uses_.push_back({&g, n, idx, name, loc});
  }

  if (!annStr(ann, "doc_string", n->docString) || !annMeta(ann, "metadata_props", n->metadata) ||
      !annHex(ann, "extras", n->extras))
    return false;
  if (const AVal *v = ann.get("device_configurations")) {
    if (v->kind != AVal::Kind::List) return annFail(ann, "device_configurations", "expected a list");
    for (const AVal &e : v->items) {
      if (!recDeviceConfig(e, n->deviceConfigurations.emplace_back()))
        return annFail(ann, "device_configurations", annWhat_);
    }
  }
  (void)nodeLoc;
  return checkAnnUsed(ann, "node");
}

bool Parser::parseNodeList(Graph &g, unsigned depth) {
  if (!expect('{', "'{' before the node list")) return false;
  while (!isPunct('}')) {
    if (!err_.empty()) return false;
    if (peek().kind == Token::Eof) return failHere("expected '}' at the end of the node list");
    if (!parseNode(g, depth)) return false;
  }
  return consume();
}

bool Parser::applySparseAnnots(const Token &t, Graph &g) {
  return claimEach(t, "sparse_initializer", [&](Annot &a, AnnotLine &line) {
    AVal rec;
    rec.kind = AVal::Kind::Record;
    rec.fields = std::move(line.fields);
    std::string name;
    for (auto &[k, v] : rec.fields)
      if (k == "name") valStr(v, name);
    if (name.empty()) return failAt(a.loc, "sparse_initializer needs a name");
    SparseTensor st;
    if (!recSparse(rec, st)) return failAt(a.loc, "in sparse_initializer: " + annWhat_);
    Value *in = g.lookupLocal(name);
    if (in && in->isGraphInput() && !in->sparseInitializer()) {
      g.setInputSparseDefault(in, std::move(st));
    } else {
      absl::StatusOr<Value *> v = g.addSparseInitializer(name, std::move(st));
      if (!v.ok()) return failAt(a.loc, "'" + name + "' is already defined");
    }
    return true;
  });
}

bool Parser::parseValueList(Graph &g, std::vector<PendingVI> *vis) {
  // '<' (value-info | initializer) (',' ...)* '>'
  if (!applySparseAnnots(peek(), g) || !consume()) return false;
  for (;;) {
    if (!applySparseAnnots(peek(), g)) return false;
    if (isPunct('>')) return consume();
    Token &first = peek();
    Loc loc = first.loc;
    Ann vann, tann;
    if (!claim(first, "value", vann) || !claim(first, "tensor", tann)) return false;
    const Type *type = nullptr;
    Loc typeLoc = loc;
    if (nextIsType() && !parseType(type, 0)) return false;
    if (!err_.empty()) return false;
    std::string name;
    Loc nameLoc = peek().loc;
    if (!parseQuotableId(name, "a value name")) return false;
    if (isPunct('=')) {
      if (!consume()) return false;
      if (!vann.empty()) return annFail(vann, vann.fields[0].first, "'#@value' on an initializer");
      Tensor t;
      t.setName(name);
      if (!parseTensorData(t, tann, type, typeLoc)) return false;
      Value *in = g.lookupLocal(name);
      if (in && in->isGraphInput() && !in->initializer()) {
        g.setInputDefault(in, std::move(t));
      } else {
        std::string tensorName = t.name();
        absl::StatusOr<Value *> v = g.addInitializer(name, std::move(t));
        if (!v.ok()) return failAt(nameLoc, "'" + name + "' is already defined");
        (*v)->initializer()->setName(tensorName); // keeps a `#@tensor name:`
      }
    } else {
      if (!err_.empty()) return false;
      if (!tann.empty()) return annFail(tann, tann.fields[0].first, "'#@tensor' on a value_info");
      PendingVI vi;
      vi.name = name;
      vi.type = type;
      vi.hasType = type != nullptr;
      if (!applyValueAnn(vann, vi.type, vi.hasType, vi.doc, vi.md, vi.extras)) return false;
      if (!vis) return failAt(loc, "value_info is not allowed here");
      vis->push_back(std::move(vi));
    }
    if (accept(',')) continue;
    if (!err_.empty()) return false;
    if (!applySparseAnnots(peek(), g)) return false;
    return expect('>', "',' or '>'");
  }
}

bool Parser::resolveVIs(Graph &g, std::vector<PendingVI> &vis) {
  for (PendingVI &p : vis) {
    Value *v = g.lookupLocal(p.name);
    ValueInfoRecord *r;
    if (v) {
      // The value takes the declared type if it has none of its own (node
      // results get their types this way); the record keeps what it said.
      r = &g.addValueInfo(v);
      if (p.hasType && !v->type()) v->setType(p.type);
      r->type = p.type;
    } else {
      r = &g.addValueInfo(p.name, p.type);
      r->type = p.type;
    }
    r->hasType = p.hasType;
    r->docString = std::move(p.doc);
    r->metadata = std::move(p.md);
    r->extras = std::move(p.extras);
  }
  return true;
}

bool Parser::parseGraph(Graph &g, unsigned depth) {
  if (depth > kMaxGraphNesting)
    return failHere("subgraphs nest deeper than " + std::to_string(kMaxGraphNesting) +
                    " levels (the limit of onnxir::kMaxGraphNesting)");
  Token &first = peek();
  Ann gann;
  if (!claim(first, "graph", gann)) return false;
  if (!parseQuotableId(g.name, "a graph name")) return false;
  if (!annStr(gann, "doc_string", g.docString) || !annMeta(gann, "metadata_props", g.metadata) ||
      !annHex(gann, "extras", g.extras))
    return false;
  if (const AVal *v = gann.get("quantization_annotation")) {
    if (v->kind != AVal::Kind::List) return annFail(gann, "quantization_annotation", "expected a list");
    for (const AVal &e : v->items) {
      if (e.kind != AVal::Kind::Record)
        return annFail(gann, "quantization_annotation", "expected records");
      QuantizationAnnotation q;
      for (const auto &[k, x] : e.fields) {
        std::string s;
        if (k == "tensor_name" && valStr(x, s)) q.tensorName = s;
        else if (k == "quant_parameter_tensor_names" && valMeta(x, q.quantParameterTensorNames)) {
        } else if (k == "extras" && valHex(x, q.extras)) {
        } else {
          return annFail(gann, "quantization_annotation", "bad field '" + k + "'");
        }
      }
      g.quantizationAnnotations.push_back(std::move(q));
    }
  }
  if (!checkAnnUsed(gann, "graph")) return false;

  // Inputs, with optional defaults.
  if (!expect('(', "'(' before the graph inputs")) return false;
  if (!isPunct(')')) {
    for (;;) {
      Token &it = peek();
      Ann vann, tann;
      if (!claim(it, "value", vann) || !claim(it, "tensor", tann)) return false;
      Loc typeLoc = it.loc;
      const Type *type = nullptr;
      if (nextIsType() && !parseType(type, 0)) return false;
      if (!err_.empty()) return false;
      std::string name;
      Loc nameLoc = peek().loc;
      if (!parseQuotableId(name, "an input name")) return false;
      bool hasType = type != nullptr;
      std::string doc, extras;
      Metadata md;
      const Type *declared = type;
      if (!applyValueAnn(vann, type, hasType, doc, md, extras)) return false;
      absl::StatusOr<Value *> v = g.addInput(name, hasType ? type : nullptr);
      if (!v.ok()) return failAt(nameLoc, "'" + name + "' is already defined");
      (*v)->docString = std::move(doc);
      (*v)->metadata = std::move(md);
      (*v)->extras = std::move(extras);
      if (isPunct('=')) {
        if (!consume()) return false;
        Tensor t;
        t.setName(name);
        if (!parseTensorData(t, tann, declared, typeLoc)) return false;
        g.setInputDefault(*v, std::move(t));
      } else {
        if (!err_.empty()) return false;
        if (!tann.empty()) return annFail(tann, tann.fields[0].first, "'#@tensor' without a value");
      }
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      break;
    }
  }
  if (!expect(')', "',' or ')'")) return false;
  if (peek().kind != Token::Arrow) return failHere("expected '=>'");
  if (!consume()) return false;

  // Outputs.
  if (!expect('(', "'(' before the graph outputs")) return false;
  if (!isPunct(')')) {
    for (;;) {
      Token &it = peek();
      Ann vann;
      if (!claim(it, "value", vann)) return false;
      PendingOutput po;
      po.g = &g;
      const Type *type = nullptr;
      if (nextIsType() && !parseType(type, 0)) return false;
      if (!err_.empty()) return false;
      po.loc = peek().loc;
      if (!parseQuotableId(po.name, "an output name")) return false;
      bool hasType = type != nullptr;
      if (!applyValueAnn(vann, type, hasType, po.info.docString, po.info.metadata, po.info.extras))
        return false;
      po.info.type = type;
      po.info.hasType = hasType;
      outputs_.push_back(std::move(po));
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      break;
    }
  }
  if (!expect(')', "',' or ')'")) return false;

  std::vector<PendingVI> vis;
  if (isPunct('<') && !parseValueList(g, &vis)) return false;
  if (!err_.empty()) return false;
  if (!parseNodeList(g, depth)) return false;
  return resolveVIs(g, vis);
}

bool Parser::resolvePending() {
  for (PendingUse &u : uses_) {
    Value *v = u.g->lookup(u.name);
    if (!v) return failAt(u.loc, "use of undefined value '" + u.name + "'");
    u.n->setOperand(u.idx, v);
  }
  uses_.clear();
  for (PendingOutput &o : outputs_) {
    Value *v = o.name.empty() ? nullptr : o.g->lookup(o.name);
    if (!v && !o.name.empty()) return failAt(o.loc, "graph output '" + o.name + "' is not defined");
    o.g->addOutput(v, std::move(o.info));
  }
  outputs_.clear();
  return true;
}

//===----------------------------------------------------------------------===//
// Model and functions
//===----------------------------------------------------------------------===//

bool Parser::parseHeaderOpsets(std::vector<OpsetImport> &out) {
  if (!expect('[')) return false;
  if (accept(']')) return true;
  if (!err_.empty()) return false;
  for (;;) {
    OpsetImport o;
    if (!parseStringToken(o.domain, "an opset domain string") || !expect(':') ||
        !parseIntToken(o.version, "an opset version"))
      return false;
    out.push_back(std::move(o));
    if (accept(',')) continue;
    if (!err_.empty()) return false;
    return expect(']', "',' or ']'");
  }
}

static bool applyOpsetExtras(const AVal *v, std::vector<OpsetImport> &ops) {
  if (!v) return true;
  if (v->kind != AVal::Kind::List || v->items.size() != ops.size()) return false;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (v->items[i].kind != AVal::Kind::String) return false;
    std::optional<std::string> b = fromHex(v->items[i].text);
    if (!b) return false;
    ops[i].extras = *b;
  }
  return true;
}

bool Parser::parseFunction(Model &m) {
  Token &first = peek();
  Ann fann;
  if (!claim(first, "function", fann)) return false;
  Function &f = m.addFunction();
  if (isPunct('<')) {
    if (!consume()) return false;
    for (;;) {
      Token k;
      if (peek().kind != Token::Ident) return failHere("expected a function property");
      if (!consume(&k) || !expect(':')) return false;
      if (k.text == "opset_import") {
        if (!parseHeaderOpsets(f.opsetImports)) return false;
      } else if (k.text == "doc_string") {
        if (!parseStringToken(f.docString, "a string")) return false;
      } else if (k.text == "domain") {
        if (!parseStringToken(f.domain, "a string")) return false;
      } else if (k.text == "overload") {
        if (!parseStringToken(f.overload, "a string")) return false;
      } else {
        return failAt(k.loc, "unknown function property '" + k.text + "'");
      }
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      if (!expect('>', "',' or '>'")) return false;
      break;
    }
  }
  if (!err_.empty()) return false;
  if (!parseQuotableId(f.name, "a function name")) return false;
  if (!annMeta(fann, "metadata_props", f.metadata) || !annHex(fann, "extras", f.extras))
    return false;
  if (!applyOpsetExtras(fann.get("opset_extras"), f.opsetImports))
    return annFail(fann, "opset_extras", "expected one hex string per opset import");
  if (!checkAnnUsed(fann, "function")) return false;

  // Attributes: names, or attributes with defaults.
  if (isPunct('<')) {
    if (!consume()) return false;
    for (;;) {
      Token &n1 = peek(1);
      bool isDefault = n1.kind == Token::Punct && (n1.punct == ':' || n1.punct == '=');
      if (isDefault) {
        std::unique_ptr<Attribute> a;
        if (!parseAttr(a, 1)) return false;
        f.attributeDefaults.push_back(std::move(a));
      } else {
        std::string name;
        if (!parseQuotableId(name, "an attribute name")) return false;
        f.attributeNames.push_back(name);
      }
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      if (!expect('>', "',' or '>'")) return false;
      break;
    }
  }
  if (!err_.empty()) return false;

  Graph &b = f.body();
  std::vector<PendingVI> vis;
  auto ioList = [&](bool inputs) {
    if (!expect('(')) return false;
    if (accept(')')) return true;
    if (!err_.empty()) return false;
    for (;;) {
      const Type *type = nullptr;
      if (nextIsType() && !parseType(type, 0)) return false;
      if (!err_.empty()) return false;
      std::string name;
      Loc loc = peek().loc;
      if (!parseQuotableId(name, inputs ? "an input name" : "an output name")) return false;
      if (type) {
        PendingVI vi;
        vi.name = name;
        vi.type = type;
        vi.hasType = true;
        vis.push_back(std::move(vi));
      }
      if (inputs) {
        absl::StatusOr<Value *> v = b.addInput(name);
        if (!v.ok()) return failAt(loc, "'" + name + "' is already defined");
      } else {
        PendingOutput po;
        po.g = &b;
        po.name = name;
        po.loc = loc;
        outputs_.push_back(std::move(po));
      }
      if (accept(',')) continue;
      if (!err_.empty()) return false;
      return expect(')', "',' or ')'");
    }
  };
  if (!ioList(true)) return false;
  if (peek().kind != Token::Arrow) return failHere("expected '=>'");
  if (!consume() || !ioList(false)) return false;
  Loc listLoc = peek().loc;
  if (isPunct('<') && !parseValueList(b, &vis)) return false;
  if (!err_.empty()) return false;
  // A FunctionProto has value_info but no initializers: one written here
  // would be lost in the binary form (found by fuzz-text).
  if (!b.initializers().empty() || !b.sparseInitializers().empty())
    return failAt(listLoc, "a function has no initializers (use Constant nodes in its body)");
  if (!parseNodeList(b, 1)) return false;
  if (!resolveVIs(b, vis)) return false;
  return resolvePending();
}

absl::StatusOr<std::unique_ptr<Model>> Parser::parseModel() {
  auto m = std::make_unique<Model>();
  model_ = m.get();
  ctx_ = &m->getContext();
  // Like lift: shadowing files parse, and the verifier reports them.
  ctx_->allowShadowing = true;
  struct Restore {
    Context *c;
    ~Restore() { c->allowShadowing = false; }
  } restore{ctx_};
  auto fail = [&]() -> absl::Status {
    if (err_.empty()) err_ = file_.str() + ": error: parse failed";
    return absl::InvalidArgumentError(err_);
  };

  Ann mann;
  if (!claim(peek(), "model", mann)) return fail();
  if (isPunct('<')) {
    if (!consume()) return fail();
    for (;;) {
      Token k;
      if (peek().kind != Token::Ident) {
        failHere("expected a model property");
        return fail();
      }
      if (!consume(&k) || !expect(':')) return fail();
      // The scalar properties: one integer or string token into a field of
      // Model each.
      static const struct {
        const char *key;
        std::optional<int64_t> Model::*field;
      } kIntProps[] = {{"ir_version", &Model::irVersion}, {"model_version", &Model::modelVersion}};
      static const struct {
        const char *key;
        std::optional<std::string> Model::*field;
      } kStringProps[] = {{"producer_name", &Model::producerName},
                          {"producer_version", &Model::producerVersion},
                          {"domain", &Model::domain},
                          {"doc_string", &Model::docString}};
      auto isKey = [&](const auto &p) { return k.text == p.key; };
      auto intProp = std::find_if(std::begin(kIntProps), std::end(kIntProps), isKey);
      auto stringProp = std::find_if(std::begin(kStringProps), std::end(kStringProps), isKey);
      bool ok = true;
      if (intProp != std::end(kIntProps)) {
        int64_t i = 0;
        ok = parseIntToken(i, "an integer");
        (*m).*(intProp->field) = i;
      } else if (stringProp != std::end(kStringProps)) {
        std::string s;
        ok = parseStringToken(s, "a string");
        (*m).*(stringProp->field) = s;
      } else if (k.text == "opset_import") {
        ok = parseHeaderOpsets(m->opsetImports);
      } else if (k.text == "metadata_props") {
        ok = expect('[');
        if (ok && !accept(']')) {
          for (;;) {
            std::string key, val;
            if (!parseStringToken(key, "a metadata key string") || !expect(':') ||
                !parseStringToken(val, "a metadata value string"))
              return fail();
            m->metadata.emplace_back(key, val);
            if (accept(',')) continue;
            if (!err_.empty()) return fail();
            ok = expect(']', "',' or ']'");
            break;
          }
        }
      } else {
        failAt(k.loc, "unknown model property '" + k.text + "'");
        return fail();
      }
      if (!ok || !err_.empty()) return fail();
      if (accept(',')) continue;
      if (!err_.empty() || !expect('>', "',' or '>'")) return fail();
      break;
    }
  }
  if (!err_.empty()) return fail();
  if (!parseGraph(m->graph(), 0) || !resolvePending()) return fail();

  // Model annotation fields.
  if (const AVal *v = mann.get("training_info")) {
    if (v->kind != AVal::Kind::List) {
      annFail(mann, "training_info", "expected a list of hex strings");
      return fail();
    }
    for (const AVal &e : v->items) {
      std::string b;
      if (!valHex(e, b)) {
        annFail(mann, "training_info", "expected a list of hex strings");
        return fail();
      }
      m->trainingInfo.push_back(std::move(b));
    }
  }
  if (const AVal *v = mann.get("configurations")) {
    if (v->kind != AVal::Kind::List) {
      annFail(mann, "configurations", "expected a list");
      return fail();
    }
    for (const AVal &e : v->items) {
      DeviceConfiguration c;
      if (e.kind != AVal::Kind::Record) {
        annFail(mann, "configurations", "expected records");
        return fail();
      }
      for (const auto &[k, x] : e.fields) {
        std::string s;
        int64_t i;
        bool ok = true;
        if (k == "name") ok = valStr(x, s), c.name = s;
        else if (k == "num_devices") ok = valInt(x, i) && i >= INT32_MIN && i <= INT32_MAX, c.numDevices = int32_t(i);
        else if (k == "device") {
          ok = x.kind == AVal::Kind::List;
          for (const AVal &d : x.items) ok = ok && valStr(d, s), c.device.push_back(s);
        } else if (k == "extras") ok = valHex(x, c.extras);
        else ok = false;
        if (!ok) {
          annFail(mann, "configurations", "bad field '" + k + "'");
          return fail();
        }
      }
      m->configurations.push_back(std::move(c));
    }
  }
  if (!annHex(mann, "extras", m->extras)) return fail();
  if (!applyOpsetExtras(mann.get("opset_extras"), m->opsetImports)) {
    annFail(mann, "opset_extras", "expected one hex string per opset import");
    return fail();
  }
  if (mann.get("no_graph")) m->hasGraph = false;
  if (!checkAnnUsed(mann, "model")) return fail();

  while (peek().kind != Token::Eof) {
    if (!parseFunction(*m)) return fail();
  }
  if (!consume()) return fail(); // reports unclaimed trailing annotations
  return m;
}

absl::StatusOr<Function *> Parser::parseFunctionInto(Model &m) {
  model_ = &m;
  ctx_ = &m.getContext();
  size_t before = m.functions().size();
  bool ok = parseFunction(m);
  if (ok && peek().kind != Token::Eof) ok = failHere("expected the end of the text after the function");
  if (ok) ok = consume();
  if (!ok) {
    m.functions().resize(before);
    if (err_.empty()) err_ = file_.str() + ": error: parse failed";
    return absl::InvalidArgumentError(err_);
  }
  return m.functions().back().get();
}

#undef REC_FAIL

} // namespace

absl::StatusOr<std::unique_ptr<Model>> parseModelTextWith(llvm::StringRef text,
                                                          llvm::StringRef fileName,
                                                          ExternalDataBinder bind) {
  Parser p(text, fileName, bind);
  return p.parseModel();
}

absl::StatusOr<Function *> parseFunctionText(Model &m, llvm::StringRef text,
                                             llvm::StringRef fileName) {
  Parser p(text, fileName, nullptr);
  return p.parseFunctionInto(m);
}

} // namespace onnxir
