//===- TextSupport.cpp - Shared pieces of the text parser and printer -----===//
#include "TextSupport.h"

#include "absl/status/status.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace onnxir {
namespace text {

//===----------------------------------------------------------------------===//
// Annotation line parser
//===----------------------------------------------------------------------===//

namespace {
class AnnotParser {
public:
  AnnotParser(llvm::StringRef s) : s_(s) {}

  absl::StatusOr<AnnotLine> parseLine(size_t &errCol) {
    AnnotLine line;
    skipWs();
    line.kind = ident();
    if (line.kind.empty()) return fail("expected an annotation kind after '#@'", errCol);
    skipWs();
    if (!atEnd()) {
      if (!fieldList(line.fields, /*closer=*/0, /*depth=*/0)) return fail(err_, errCol);
    }
    skipWs();
    if (!atEnd()) return fail("unexpected text in annotation", errCol);
    return line;
  }

private:
  absl::Status fail(const std::string &msg, size_t &errCol) {
    errCol = pos_;
    return absl::InvalidArgumentError(msg);
  }
  bool atEnd() const { return pos_ >= s_.size(); }
  char cur() const { return atEnd() ? 0 : s_[pos_]; }
  void skipWs() {
    while (!atEnd() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  static bool isIdStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isIdChar(char c) { return isIdStart(c) || (c >= '0' && c <= '9'); }
  std::string ident() {
    size_t b = pos_;
    if (!atEnd() && isIdStart(cur())) {
      while (!atEnd() && isIdChar(cur())) ++pos_;
    }
    return s_.substr(b, pos_ - b).str();
  }
  bool error(const char *m) {
    if (err_.empty()) err_ = m;
    return false;
  }
  // `depth`: the nesting of the record holding these fields (0 for the
  // line itself); records and lists share the one counter, so a record
  // does not restart it (Note [Nesting limits]).
  bool fieldList(std::vector<std::pair<std::string, AVal>> &out, char closer, unsigned depth) {
    for (;;) {
      skipWs();
      if (closer && cur() == closer) return true;
      std::string key = ident();
      if (key.empty()) return error("expected a field name in annotation");
      skipWs();
      AVal v;
      if (cur() == ':') {
        ++pos_;
        if (!value(v, depth)) return false;
      } else {
        v.kind = AVal::Kind::Word; // a bare key means `key: true`
        v.text = "true";
      }
      out.emplace_back(std::move(key), std::move(v));
      skipWs();
      if (cur() == ',') {
        ++pos_;
        continue;
      }
      return true;
    }
  }
  bool value(AVal &v, unsigned depth) {
    if (depth > kMaxAnnotationNesting)
      return error("annotation lists and records nest deeper than the limit of "
                   "onnxir::kMaxAnnotationNesting");
    skipWs();
    char c = cur();
    if (c == '"') return string(v);
    if (c == '[') {
      ++pos_;
      v.kind = AVal::Kind::List;
      skipWs();
      if (cur() == ']') { ++pos_; return true; }
      for (;;) {
        AVal e;
        if (!value(e, depth + 1)) return false;
        skipWs();
        if (cur() == ':') {
          ++pos_;
          AVal val;
          if (!value(val, depth + 1)) return false;
          AVal p;
          p.kind = AVal::Kind::Pair;
          p.items.push_back(std::move(e));
          p.items.push_back(std::move(val));
          e = std::move(p);
          skipWs();
        }
        v.items.push_back(std::move(e));
        if (cur() == ',') { ++pos_; continue; }
        if (cur() == ']') { ++pos_; return true; }
        return error("expected ',' or ']' in annotation list");
      }
    }
    if (c == '{') {
      ++pos_;
      v.kind = AVal::Kind::Record;
      if (!fieldList(v.fields, '}', depth + 1)) return false;
      skipWs();
      if (cur() != '}') return error("expected ',' or '}' in annotation record");
      ++pos_;
      return true;
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9') || c == '.') {
      size_t b = pos_;
      ++pos_;
      while (!atEnd() && (isIdChar(cur()) || cur() == '.' ||
                          ((cur() == '-' || cur() == '+') &&
                           (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
        ++pos_;
      v.kind = AVal::Kind::Number;
      v.text = s_.substr(b, pos_ - b).str();
      return true;
    }
    if (isIdStart(c)) {
      v.kind = AVal::Kind::Word;
      v.text = ident();
      return true;
    }
    return error("expected a value in annotation");
  }
  static int hexVal(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool string(AVal &v) {
    ++pos_;
    v.kind = AVal::Kind::String;
    for (;;) {
      if (atEnd()) return error("unterminated string in annotation");
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') { v.text.push_back(c); continue; }
      if (atEnd()) return error("unterminated string in annotation");
      char e = s_[pos_++];
      switch (e) {
      case 'n': v.text.push_back('\n'); break;
      case 't': v.text.push_back('\t'); break;
      case 'r': v.text.push_back('\r'); break;
      case '0': v.text.push_back('\0'); break;
      case 'x': {
        if (pos_ + 2 > s_.size()) return error("bad \\x escape in annotation");
        int h = hexVal(s_[pos_]), l = hexVal(s_[pos_ + 1]);
        if (h < 0 || l < 0) return error("bad \\x escape in annotation");
        v.text.push_back(char(h * 16 + l));
        pos_ += 2;
        break;
      }
      default: v.text.push_back(e); break;
      }
    }
  }

  llvm::StringRef s_;
  size_t pos_ = 0;
  std::string err_;
};
} // namespace

absl::StatusOr<AnnotLine> parseAnnotLine(llvm::StringRef line, size_t &errCol) {
  AnnotParser p(line);
  return p.parseLine(errCol);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string annotString(llvm::StringRef s) {
  static const char *hexd = "0123456789abcdef";
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '\\': r += "\\\\"; break;
    case '"': r += "\\\""; break;
    case '\n': r += "\\n"; break;
    case '\t': r += "\\t"; break;
    case '\r': r += "\\r"; break;
    default:
      if (c < 0x20 || c == 0x7f) {
        r += "\\x";
        r += hexd[c >> 4];
        r += hexd[c & 15];
      } else {
        r += char(c);
      }
    }
  }
  r += '"';
  return r;
}

std::string annotHex(llvm::StringRef bytes) { return "\"" + toHex(bytes) + "\""; }

std::string annotMetadata(const Metadata &md) {
  std::string r = "[";
  for (size_t i = 0; i < md.size(); ++i) {
    if (i) r += ", ";
    r += annotString(md[i].first) + ": " + annotString(md[i].second);
  }
  return r + "]";
}

void FieldWriter::raw(llvm::StringRef key, llvm::StringRef valueText) {
  if (!s_.empty()) s_ += ", ";
  s_ += key.str();
  s_ += ": ";
  s_ += valueText.str();
}
void FieldWriter::str(llvm::StringRef key, llvm::StringRef v) { raw(key, annotString(v)); }
void FieldWriter::hex(llvm::StringRef key, llvm::StringRef bytes) { raw(key, annotHex(bytes)); }
void FieldWriter::num(llvm::StringRef key, int64_t v) { raw(key, std::to_string(v)); }
void FieldWriter::metadata(llvm::StringRef key, const Metadata &md) {
  raw(key, annotMetadata(md));
}

//===----------------------------------------------------------------------===//
// Standard syntax helpers
//===----------------------------------------------------------------------===//

bool isIdentifier(llvm::StringRef s) {
  if (s.empty()) return false;
  auto start = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!start(s[0])) return false;
  for (char c : s.drop_front())
    if (!start(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool isReservedWord(llvm::StringRef s) {
  if (elemTypeFromName(s) != 0) return true;
  if (s == "seq" || s == "map" || s == "optional" || s == "sparse_tensor" || s == "opaque")
    return true;
  std::string l = s.lower();
  return l == "inf" || l == "infinity" || l == "nan";
}

std::string quoteString(llvm::StringRef s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') r += '\\';
    r += c;
  }
  return r + "\"";
}

std::string quoteName(llvm::StringRef s) {
  if (isIdentifier(s) && !isReservedWord(s)) return s.str();
  return quoteString(s);
}

namespace {
std::string fixupFloatText(std::string s) {
  // Make sure the text reads as a float literal.
  if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan") return s;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}
} // namespace

// Note [Shortest digits first]
// A float prints as `%.{p}g` with the least p from 6 (9 for double: 15 to
// 17) that reads back to it. Trying each p was a snprintf and a strtof per
// try, most of printing a big weight (and of reading one back in the text
// round trip). std::to_chars gives the shortest digits s that read back, so
// no p below max(6, s) can; p = max(6, s) is then tried first, and it is
// the answer whenever it reads back (it does for every one of 2e7 random
// floats and 1.5e7 doubles checked against the loop; the loop stays for any
// that does not).
template <typename T> static int shortestDigits(T v) {
  char b[64];
  auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::scientific);
  int n = 0;
  for (const char *p = b; p < r.ptr && *p != 'e'; ++p) n += *p >= '0' && *p <= '9';
  return n;
}

std::string formatFloat(float f) {
  if (std::isnan(f)) return std::signbit(f) ? "-nan" : "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  int first = std::max(6, shortestDigits(f));
  if (first <= 9) {
    snprintf(buf, sizeof buf, "%.*g", first, (double)f);
    if (strtof(buf, nullptr) == f) return fixupFloatText(buf);
  }
  for (int prec = 6; prec <= 9; ++prec) {
    snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
    if (strtof(buf, nullptr) == f) break;
  }
  return fixupFloatText(buf);
}

std::string formatDouble(double d) {
  if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  int first = std::max(15, shortestDigits(d));
  if (first <= 17) {
    snprintf(buf, sizeof buf, "%.*g", first, d);
    if (strtod(buf, nullptr) == d) return fixupFloatText(buf);
  }
  for (int prec = 15; prec <= 17; ++prec) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (strtod(buf, nullptr) == d) break;
  }
  return fixupFloatText(buf);
}

bool floatRoundTrips(float f) {
  float g = strtof(formatFloat(f).c_str(), nullptr);
  return std::memcmp(&f, &g, 4) == 0;
}
bool doubleRoundTrips(double d) {
  double g = strtod(formatDouble(d).c_str(), nullptr);
  return std::memcmp(&d, &g, 8) == 0;
}

std::string toHex(llvm::StringRef bytes) {
  static const char *hexd = "0123456789abcdef";
  std::string r;
  r.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    r += hexd[c >> 4];
    r += hexd[c & 15];
  }
  return r;
}

std::optional<std::string> fromHex(llvm::StringRef hex) {
  if (hex.size() % 2) return std::nullopt;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string r;
  r.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int h = val(hex[i]), l = val(hex[i + 1]);
    if (h < 0 || l < 0) return std::nullopt;
    r.push_back(char(h * 16 + l));
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Tensor data
//===----------------------------------------------------------------------===//

Tensor::TypedField standardField(int32_t dt) {
  using F = Tensor::TypedField;
  switch (static_cast<DataType>(dt)) {
  case DataType::Float:
  case DataType::Complex64: return F::Float;
  case DataType::Double:
  case DataType::Complex128: return F::Double;
  case DataType::Int64: return F::Int64;
  case DataType::Uint32:
  case DataType::Uint64: return F::Uint64;
  case DataType::String: return F::String;
  default: return F::Int32;
  }
}

llvm::StringRef typedFieldName(Tensor::TypedField f) {
  using F = Tensor::TypedField;
  switch (f) {
  case F::Float: return "float";
  case F::Int32: return "int32";
  case F::String: return "string";
  case F::Int64: return "int64";
  case F::Double: return "double";
  case F::Uint64: return "uint64";
  case F::None: break;
  }
  return "none";
}

std::optional<Tensor::TypedField> typedFieldFromName(llvm::StringRef s) {
  using F = Tensor::TypedField;
  if (s == "float") return F::Float;
  if (s == "int32") return F::Int32;
  if (s == "string") return F::String;
  if (s == "int64") return F::Int64;
  if (s == "double") return F::Double;
  if (s == "uint64") return F::Uint64;
  return std::nullopt;
}

size_t TypedData::size() const {
  using F = Tensor::TypedField;
  switch (field) {
  case F::Float: return f32.size();
  case F::Int32: return i32.size();
  case F::String: return str.size();
  case F::Int64: return i64.size();
  case F::Double: return f64.size();
  case F::Uint64: return u64.size();
  case F::None: break;
  }
  return 0;
}

namespace {
/// Bytes per int32_data entry in raw layout (sub-byte types: one packed byte).
unsigned int32EntryBytes(int32_t dt) {
  switch (static_cast<DataType>(dt)) {
  case DataType::Int8:
  case DataType::Uint8:
  case DataType::Bool:
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
  case DataType::Float8E8M0:
  case DataType::Uint4:
  case DataType::Int4:
  case DataType::Float4E2M1:
  case DataType::Uint2:
  case DataType::Int2: return 1;
  case DataType::Int16:
  case DataType::Uint16:
  case DataType::Float16:
  case DataType::BFloat16: return 2;
  case DataType::Int32: return 4;
  default: return 0;
  }
}
bool isSignedEntry(int32_t dt) {
  auto t = static_cast<DataType>(dt);
  return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32;
}
template <typename T> T loadLE(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T)); // hosts are little-endian (x86, arm64)
  return v;
}
template <typename T> void storeLE(std::string &out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
} // namespace

std::optional<TypedData> rawToTyped(int32_t dt, llvm::StringRef bytes) {
  using F = Tensor::TypedField;
  TypedData d;
  d.field = standardField(dt);
  const char *p = bytes.data();
  size_t n = bytes.size();
  switch (d.field) {
  case F::Float:
    if (n % 4) return std::nullopt;
    for (size_t i = 0; i < n; i += 4) d.f32.push_back(loadLE<float>(p + i));
    return d;
  case F::Double:
    if (n % 8) return std::nullopt;
    for (size_t i = 0; i < n; i += 8) d.f64.push_back(loadLE<double>(p + i));
    return d;
  case F::Int64:
    if (n % 8) return std::nullopt;
    for (size_t i = 0; i < n; i += 8) d.i64.push_back(loadLE<int64_t>(p + i));
    return d;
  case F::Uint64: {
    unsigned w = static_cast<DataType>(dt) == DataType::Uint32 ? 4 : 8;
    if (n % w) return std::nullopt;
    for (size_t i = 0; i < n; i += w)
      d.u64.push_back(w == 4 ? loadLE<uint32_t>(p + i) : loadLE<uint64_t>(p + i));
    return d;
  }
  case F::Int32: {
    unsigned w = int32EntryBytes(dt);
    if (!w || n % w) return std::nullopt;
    bool sgn = isSignedEntry(dt);
    for (size_t i = 0; i < n; i += w) {
      int32_t v = 0;
      if (w == 1) v = sgn ? int32_t(loadLE<int8_t>(p + i)) : int32_t(loadLE<uint8_t>(p + i));
      else if (w == 2) v = sgn ? int32_t(loadLE<int16_t>(p + i)) : int32_t(loadLE<uint16_t>(p + i));
      else v = loadLE<int32_t>(p + i);
      d.i32.push_back(v);
    }
    return d;
  }
  default: return std::nullopt;
  }
}

std::optional<std::string> typedToRaw(int32_t dt, const TypedData &d) {
  using F = Tensor::TypedField;
  if (d.field != standardField(dt)) return std::nullopt;
  std::string out;
  switch (d.field) {
  case F::Float:
    for (float v : d.f32) storeLE(out, v);
    return out;
  case F::Double:
    for (double v : d.f64) storeLE(out, v);
    return out;
  case F::Int64:
    for (int64_t v : d.i64) storeLE(out, v);
    return out;
  case F::Uint64: {
    bool w4 = static_cast<DataType>(dt) == DataType::Uint32;
    for (uint64_t v : d.u64) {
      if (w4) {
        if (v > 0xffffffffull) return std::nullopt;
        storeLE(out, uint32_t(v));
      } else {
        storeLE(out, v);
      }
    }
    return out;
  }
  case F::Int32: {
    unsigned w = int32EntryBytes(dt);
    if (!w) return std::nullopt;
    bool sgn = isSignedEntry(dt);
    for (int32_t v : d.i32) {
      if (w == 1) {
        if (sgn ? (v < -128 || v > 127) : (v < 0 || v > 255)) return std::nullopt;
        out.push_back(char(uint8_t(v)));
      } else if (w == 2) {
        if (sgn ? (v < -32768 || v > 32767) : (v < 0 || v > 65535)) return std::nullopt;
        storeLE(out, uint16_t(v));
      } else {
        storeLE(out, v);
      }
    }
    return out;
  }
  default: return std::nullopt;
  }
}

TypedData typedOf(const Tensor &t) {
  TypedData d;
  d.field = t.typedField();
  d.f32 = t.floatData;
  d.i32 = t.int32Data;
  d.str = t.stringData;
  d.i64 = t.int64Data;
  d.f64 = t.doubleData;
  d.u64 = t.uint64Data;
  return d;
}

void setTypedData(Tensor &t, TypedData d) {
  t.setTyped(d.field);
  t.floatData = std::move(d.f32);
  t.int32Data = std::move(d.i32);
  t.stringData = std::move(d.str);
  t.int64Data = std::move(d.i64);
  t.doubleData = std::move(d.f64);
  t.uint64Data = std::move(d.u64);
}

std::vector<std::string> formatTyped(const TypedData &d, bool &exact) {
  using F = Tensor::TypedField;
  std::vector<std::string> r;
  r.reserve(d.size());
  switch (d.field) {
  case F::Float:
    for (float v : d.f32) {
      if (!floatRoundTrips(v)) exact = false;
      r.push_back(formatFloat(v));
    }
    break;
  case F::Double:
    for (double v : d.f64) {
      if (!doubleRoundTrips(v)) exact = false;
      r.push_back(formatDouble(v));
    }
    break;
  case F::Int32:
    for (int32_t v : d.i32) r.push_back(std::to_string(v));
    break;
  case F::Int64:
    for (int64_t v : d.i64) r.push_back(std::to_string(v));
    break;
  case F::Uint64:
    for (uint64_t v : d.u64) r.push_back(std::to_string(v));
    break;
  case F::String:
    for (const std::string &v : d.str) r.push_back(quoteString(v));
    break;
  case F::None: break;
  }
  return r;
}

std::string typedBitsHex(const TypedData &d) {
  std::string out;
  if (d.field == Tensor::TypedField::Float)
    for (float v : d.f32) storeLE(out, v);
  else if (d.field == Tensor::TypedField::Double)
    for (double v : d.f64) storeLE(out, v);
  return toHex(out);
}

bool typedFromBits(TypedData &d, llvm::StringRef bytes) {
  if (d.field == Tensor::TypedField::Float) {
    if (bytes.size() % 4) return false;
    d.f32.clear();
    for (size_t i = 0; i < bytes.size(); i += 4) d.f32.push_back(loadLE<float>(bytes.data() + i));
    return true;
  }
  if (d.field == Tensor::TypedField::Double) {
    if (bytes.size() % 8) return false;
    d.f64.clear();
    for (size_t i = 0; i < bytes.size(); i += 8) d.f64.push_back(loadLE<double>(bytes.data() + i));
    return true;
  }
  return false;
}

llvm::StringRef elemTypeName(int32_t dt) {
  if (!isKnownDataType(dt)) return "";
  return dataTypeName(static_cast<DataType>(dt));
}

int32_t elemTypeFromName(llvm::StringRef s) {
  auto t = dataTypeFromName(s);
  return t ? static_cast<int32_t>(*t) : 0;
}

} // namespace text
} // namespace onnxir
