//===- TextSupport.h - Shared pieces of the text parser and printer -------===//
//
// Internal to lib/Text. Holds what TextParser.cpp and TextPrinter.cpp
// share: the annotation value tree (`#@kind key: value, ...` lines of the
// extension, see docs/TextFormat.md), string quoting, number formatting, hex,
// and the conversions between raw tensor bytes and the typed fields.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_TEXT_TEXTSUPPORT_H
#define ONNXIR_LIB_TEXT_TEXTSUPPORT_H

#include "onnxir/IR/Limits.h"
#include "onnxir/IR/Model.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace onnxir {
namespace text {

// Nesting limits: onnxir/IR/Limits.h (kMaxTypeNesting for types,
// kMaxAnnotationNesting for annotation values, kMaxGraphNesting for graphs).

//===----------------------------------------------------------------------===//
// Annotation values
//===----------------------------------------------------------------------===//

/// A value of the annotation mini-language: numbers (kept as text), strings,
/// bare words (true, false, null, nan, inf), lists (whose elements may be
/// `key: value` pairs) and records `{key: value, ...}`.
struct AVal {
  enum class Kind : uint8_t { Number, String, Word, List, Pair, Record };
  Kind kind = Kind::Word;
  std::string text; ///< Number text, String bytes, Word
  std::vector<AVal> items; ///< List elements; Pair: [key, value]
  std::vector<std::pair<std::string, AVal>> fields; ///< Record

  bool isNull() const { return kind == Kind::Word && text == "null"; }
};

/// One `#@kind ...` line: its kind and fields.
struct AnnotLine {
  std::string kind;
  std::vector<std::pair<std::string, AVal>> fields;
};

/// Parses the text after `#@`. On error returns a message and sets
/// `errCol` to the 0-based offset in `line`.
absl::StatusOr<AnnotLine> parseAnnotLine(llvm::StringRef line, size_t &errCol);

//===----------------------------------------------------------------------===//
// Writing annotation values
//===----------------------------------------------------------------------===//

/// A record or annotation line being written: `key: value, key: value`.
class FieldWriter {
public:
  void raw(llvm::StringRef key, llvm::StringRef valueText);
  void str(llvm::StringRef key, llvm::StringRef v);
  void hex(llvm::StringRef key, llvm::StringRef bytes);
  void num(llvm::StringRef key, int64_t v);
  void flag(llvm::StringRef key) { raw(key, "true"); }
  void metadata(llvm::StringRef key, const Metadata &md);
  bool empty() const { return s_.empty(); }
  const std::string &fields() const { return s_; }
  std::string record() const { return "{" + s_ + "}"; }

private:
  std::string s_;
};

/// An annotation-syntax string literal (C escapes, single line).
std::string annotString(llvm::StringRef s);
/// A hex string literal of `bytes`.
std::string annotHex(llvm::StringRef bytes);
/// `["k": "v", ...]` in annotation syntax.
std::string annotMetadata(const Metadata &md);

//===----------------------------------------------------------------------===//
// Standard syntax helpers
//===----------------------------------------------------------------------===//

/// True for [A-Za-z_][A-Za-z0-9_]*.
bool isIdentifier(llvm::StringRef s);
/// True for words the standard grammar reads as something else where a name
/// may stand (type keywords, inf/nan).
bool isReservedWord(llvm::StringRef s);
/// A standard string literal: `\` and `"` escaped, other bytes as they are.
std::string quoteString(llvm::StringRef s);
/// A name: bare if it is a plain identifier, else quoted.
std::string quoteName(llvm::StringRef s);

/// Shortest text that reads back as the same float (always looks like a
/// float literal: has `.`, `e`, or is inf/nan).
std::string formatFloat(float f);
std::string formatDouble(double d);
/// True if formatFloat/formatDouble read back give the same bits.
bool floatRoundTrips(float f);
bool doubleRoundTrips(double d);

/// Hex <-> bytes.
std::string toHex(llvm::StringRef bytes);
std::optional<std::string> fromHex(llvm::StringRef hex);

//===----------------------------------------------------------------------===//
// Tensor data
//===----------------------------------------------------------------------===//

/// The typed field the standard syntax uses for an element type.
Tensor::TypedField standardField(int32_t dataType);
/// Name of a typed field in annotations (`float`, `int32`, ...).
llvm::StringRef typedFieldName(Tensor::TypedField f);
std::optional<Tensor::TypedField> typedFieldFromName(llvm::StringRef s);

/// Typed field contents.
struct TypedData {
  Tensor::TypedField field = Tensor::TypedField::None;
  std::vector<float> f32;
  std::vector<int32_t> i32;
  std::vector<std::string> str;
  std::vector<int64_t> i64;
  std::vector<double> f64;
  std::vector<uint64_t> u64;
  size_t size() const;
};

/// Decodes raw bytes into the standard typed field of `dataType`; nullopt if
/// the type is unknown or the size does not divide.
std::optional<TypedData> rawToTyped(int32_t dataType, llvm::StringRef bytes);
/// Encodes the standard typed field to raw bytes; nullopt if impossible.
std::optional<std::string> typedToRaw(int32_t dataType, const TypedData &d);
/// Copies a tensor's typed field out / in.
TypedData typedOf(const Tensor &t);
void setTypedData(Tensor &t, TypedData d);
/// Element texts of a typed field in standard syntax; `exact` is cleared if a
/// float/double value does not read back to the same bits.
std::vector<std::string> formatTyped(const TypedData &d, bool &exact);
/// Little-endian bytes of a float or double field (for exact bits).
std::string typedBitsHex(const TypedData &d);
bool typedFromBits(TypedData &d, llvm::StringRef bytes);

/// Text-syntax name of an element type ("" if unknown).
llvm::StringRef elemTypeName(int32_t dt);
/// Inverse; 0 if not a type name.
int32_t elemTypeFromName(llvm::StringRef s);

} // namespace text
} // namespace onnxir

#endif // ONNXIR_LIB_TEXT_TEXTSUPPORT_H
