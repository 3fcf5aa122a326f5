//===- PassPipeline.cpp - Parse and print textual pass pipelines ----------===//
//
// pipeline := element (',' element)*
// element  := ARGUMENT ('{' option* '}')?
// option   := KEY ('=' VALUE)?          (separated by spaces)
// VALUE    := bare text up to a space or '}', or '...' / "..." quoted
//
// Whitespace around elements is ignored. Errors give the column.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Passes/PassPipeline.h"

#include "absl/strings/str_cat.h"

namespace onnxir {

namespace {

class PipelineParser {
public:
  explicit PipelineParser(llvm::StringRef text) : text_(text) {}

  absl::StatusOr<std::vector<std::unique_ptr<Pass>>> parse() {
    std::vector<std::unique_ptr<Pass>> out;
    skipSpace();
    if (atEnd()) return error("expected a pass name");
    while (true) {
      auto p = parseElement();
      if (!p.ok()) return p.status();
      out.push_back(std::move(*p));
      skipSpace();
      if (atEnd()) break;
      if (peek() != ',') return error("expected ',' or the end of the pipeline");
      ++pos_;
      skipSpace();
    }
    return out;
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n')) ++pos_;
  }
  static bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
  }
  absl::Status error(absl::string_view msg, size_t at = SIZE_MAX) const {
    return absl::InvalidArgumentError(
        absl::StrCat("pass pipeline:1:", (at == SIZE_MAX ? pos_ : at) + 1, ": ", msg));
  }
  llvm::StringRef name() {
    size_t b = pos_;
    while (!atEnd() && isNameChar(peek())) ++pos_;
    return text_.slice(b, pos_);
  }

  absl::StatusOr<std::unique_ptr<Pass>> parseElement() {
    size_t at = pos_;
    llvm::StringRef arg = name();
    if (arg.empty()) return error("expected a pass name");
    auto p = PassRegistry::instance().create(arg);
    if (!p.ok()) return error(p.status().message(), at);
    skipSpace();
    if (peek() != '{') return p;
    ++pos_;
    while (true) {
      skipSpace();
      if (atEnd()) return error(absl::StrCat("expected '}' to close the options of '", arg.str(), "'"));
      if (peek() == '}') {
        ++pos_;
        return p;
      }
      size_t keyAt = pos_;
      llvm::StringRef key = name();
      if (key.empty()) return error("expected an option name or '}'");
      std::string value;
      if (peek() == '=') {
        ++pos_;
        if (peek() == '\'' || peek() == '"') {
          char q = peek();
          size_t close = text_.find(q, pos_ + 1);
          if (close == llvm::StringRef::npos) return error("unterminated quoted value");
          value = text_.slice(pos_ + 1, close).str();
          pos_ = close + 1;
        } else {
          size_t b = pos_;
          while (!atEnd() && peek() != ' ' && peek() != '}' && peek() != '\t') ++pos_;
          value = text_.slice(b, pos_).str();
        }
      }
      if (absl::Status s = (*p)->setOption(key, value); !s.ok()) return error(s.message(), keyAt);
    }
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
};

} // namespace

absl::StatusOr<std::vector<std::unique_ptr<Pass>>> parsePassPipeline(llvm::StringRef text) {
  return PipelineParser(text).parse();
}

std::string printPassInstance(const Pass &p) {
  std::string s = p.argument().str(), opts;
  for (const PassOptionBase *o : p.options())
    if (o->isExplicit()) {
      std::string v = o->valueText();
      bool quote = v.empty() || v.find_first_of(" ,{}'\t") != std::string::npos;
      absl::StrAppend(&opts, opts.empty() ? "" : " ", o->key().str(), "=", quote ? "\"" : "", v,
                      quote ? "\"" : "");
    }
  if (!opts.empty()) absl::StrAppend(&s, "{", opts, "}");
  return s;
}

} // namespace onnxir
