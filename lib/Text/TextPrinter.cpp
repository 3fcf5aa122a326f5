//===- TextPrinter.cpp - Print the IR in ONNX text syntax -----------------===//
//
// Standard syntax (docs/Syntax.md of ONNX) for everything it can say, plus
// `#@kind key: value, ...` annotation comments for the rest (see
// docs/TextFormat.md). Output is deterministic: it depends only on the IR.
//
// Modes:
//   standardOnly   no annotations, nothing onnx.parser rejects.
//   default        standard syntax plus what changes meaning (sparse
//                  initializers, extended types, unusual attributes); large
//                  tensors elided.
//   lossless       every field, every tensor in full.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Text/Text.h"

#include "TextSupport.h"

#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"

#include <cstdlib>
#include <cstring>

namespace onnxir {
namespace {
using namespace text;

class Printer {
public:
  explicit Printer(const PrintOptions &o) : o_(o) {}

  void printModel(const Model &m);
  void printGraph(const Graph &g, int ind, bool isFunctionBody = false);
  std::string take() { return std::move(out_); }

private:
  //===--- Modes ----------------------------------------------------------===//
  /// Annotations that carry meaning (not just encoding details).
  bool ext() const { return !o_.standardOnly; }
  /// Every annotation.
  bool full() const { return o_.lossless && !o_.standardOnly; }

  //===--- Output helpers -------------------------------------------------===//
  void nl(int ind) {
    out_ += '\n';
    out_.append(ind > 0 ? ind : 0, ' ');
  }
  bool atLineStart() const {
    size_t p = out_.find_last_of('\n');
    size_t b = p == std::string::npos ? 0 : p + 1;
    for (size_t i = b; i < out_.size(); ++i)
      if (out_[i] != ' ') return false;
    return true;
  }
  /// Emits `#@kind fields` on a line of its own; the entity that follows
  /// continues at indentation `ind`.
  void annot(llvm::StringRef kind, const FieldWriter &w, int ind) {
    if (w.empty()) return;
    if (!atLineStart()) nl(ind);
    out_ += "#@";
    out_ += kind.str();
    out_ += ' ';
    out_ += w.fields();
    nl(ind);
  }

  //===--- Pieces ---------------------------------------------------------===//
  bool typeIsStandard(const Type *t) const;
  std::string stdType(const Type *t) const;
  std::string typeRecord(const Type *t) const;
  /// Prints `[type ]name` of a value-info item, with `#@value` fields.
  void valueInfoFields(FieldWriter &w, const Type *t, bool hasType,
                       llvm::StringRef doc, const Metadata &md, llvm::StringRef extras);
  std::string valueInfoText(const Type *t, bool hasType, llvm::StringRef name);

  std::string tensorType(const Tensor &t) const;
  /// The data part of a tensor literal (`{...}` or `[...]`) and the `#@tensor`
  /// fields it needs.
  /// The tensor printed for `t` (PrintOptions::tensorAs).
  const Tensor &as(const Tensor &t) const {
    if (o_.tensorAs)
      if (const Tensor *u = o_.tensorAs(t)) return *u;
    return t;
  }
  std::string tensorBody(const Tensor &t, FieldWriter &w) const;
  void tensorMeta(const Tensor &t, FieldWriter &w, const std::string *valueName) const;
  std::string tensorRecord(const Tensor &t) const;
  std::string sparseRecord(const SparseTensor &s) const;
  /// An attribute tensor literal (annotation emitted first if needed).
  void printAttrTensor(const Tensor &t, int ind);

  void printAttribute(const Attribute &a, int ind);
  bool attrNeedsLines(const Attribute &a) const;
  void printNode(const Node &n, int ind);
  static std::string opsetList(const std::vector<OpsetImport> &ops);
  std::string opsetExtras(const std::vector<OpsetImport> &ops) const;
  void printFunction(const Function &f);
  void graphFields(const Graph &g, FieldWriter &w) const;
  std::string deviceConfig(const NodeDeviceConfiguration &c) const;
  std::string shardingSpec(const ShardingSpec &s) const;

  const PrintOptions &o_;
  std::string out_;
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

bool Printer::typeIsStandard(const Type *t) const {
  if (!t) return false;
  if (!t->denotation().empty()) return false;
  if (o_.lossless && !t->extras().empty()) return false;
  switch (t->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    if (!t->hasElemType() || elemTypeName(t->elemTypeRaw()).empty()) return false;
    for (const Dim &d : t->dims()) {
      if (!d.denotation.empty()) return false;
      // A dim expression (DimExpr.h) is written as a quoted string.
      if (d.isSymbolic() && !isIdentifier(d.param) && !(d.expr && !d.expr->isSymbol()))
        return false;
    }
    return true;
  case Type::Kind::Sequence:
  case Type::Kind::Optional: return typeIsStandard(t->elementType());
  case Type::Kind::Map:
    return t->hasElemType() && !elemTypeName(t->elemTypeRaw()).empty() &&
           typeIsStandard(t->elementType());
  case Type::Kind::Opaque:
  case Type::Kind::None: return false;
  }
  return false;
}

/// Best standard approximation; "" if there is none.
std::string Printer::stdType(const Type *t) const {
  if (!t) return "";
  auto shape = [](const Type *t) {
    if (!t->hasShape()) return std::string("[]");
    if (t->dims().empty()) return std::string();
    std::string s = "[";
    bool first = true;
    for (const Dim &d : t->dims()) {
      if (!first) s += ",";
      first = false;
      if (d.isKnown()) s += std::to_string(d.value);
      else if (d.isSymbolic() && isIdentifier(d.param)) s += d.param.str();
      else if (d.isSymbolic() && d.expr && !d.expr->isSymbol()) s += quoteString(d.param);
      else s += "?";
    }
    return s + "]";
  };
  switch (t->kind()) {
  case Type::Kind::Tensor: {
    llvm::StringRef n = elemTypeName(t->elemTypeRaw());
    if (n.empty()) return "";
    return n.str() + shape(t);
  }
  case Type::Kind::SparseTensor: {
    llvm::StringRef n = elemTypeName(t->elemTypeRaw());
    if (n.empty()) return "";
    return "sparse_tensor(" + n.str() + shape(t) + ")";
  }
  case Type::Kind::Sequence:
  case Type::Kind::Optional: {
    std::string in = stdType(t->elementType());
    if (in.empty()) return "";
    return (t->kind() == Type::Kind::Sequence ? "seq(" : "optional(") + in + ")";
  }
  case Type::Kind::Map: {
    llvm::StringRef n = elemTypeName(t->elemTypeRaw());
    std::string in = stdType(t->elementType());
    if (n.empty() || in.empty()) return "";
    return "map(" + n.str() + ", " + in + ")";
  }
  case Type::Kind::Opaque:
  case Type::Kind::None: return "";
  }
  return "";
}

std::string Printer::typeRecord(const Type *t) const {
  if (!t) return "null";
  FieldWriter w;
  const char *k = "none";
  switch (t->kind()) {
  case Type::Kind::Tensor: k = "tensor"; break;
  case Type::Kind::SparseTensor: k = "sparse_tensor"; break;
  case Type::Kind::Sequence: k = "seq"; break;
  case Type::Kind::Map: k = "map"; break;
  case Type::Kind::Optional: k = "optional"; break;
  case Type::Kind::Opaque: k = "opaque"; break;
  case Type::Kind::None: k = "none"; break;
  }
  w.str("kind", k);
  if (t->hasElemType()) w.num("elem", t->elemTypeRaw());
  if (t->hasShape()) {
    std::string s = "[";
    bool first = true;
    for (const Dim &d : t->dims()) {
      if (!first) s += ", ";
      first = false;
      std::string v = d.isKnown() ? std::to_string(d.value)
                      : d.isSymbolic() ? annotString(d.param)
                                       : std::string("null");
      if (!d.denotation.empty()) {
        FieldWriter dw;
        if (d.isKnown()) dw.num("value", d.value);
        else if (d.isSymbolic()) dw.str("param", d.param);
        dw.str("denotation", d.denotation);
        v = dw.record();
      }
      s += v;
    }
    w.raw("shape", s + "]");
  }
  if (t->elementType()) w.raw("inner", typeRecord(t->elementType()));
  if (t->kind() == Type::Kind::Opaque) {
    w.str("domain", t->opaqueDomain());
    w.str("name", t->opaqueName());
  }
  if (!t->denotation().empty()) w.str("denotation", t->denotation());
  if (!t->extras().empty() && o_.lossless) w.hex("extras", t->extras());
  return w.record();
}

void Printer::valueInfoFields(FieldWriter &w, const Type *t, bool hasType,
                              llvm::StringRef doc, const Metadata &md,
                              llvm::StringRef extras) {
  if (hasType && t && !typeIsStandard(t) && ext()) w.raw("type", typeRecord(t));
  if (full()) {
    if (!doc.empty()) w.str("doc_string", doc);
    if (!md.empty()) w.metadata("metadata_props", md);
    if (!extras.empty()) w.hex("extras", extras);
  }
}

std::string Printer::valueInfoText(const Type *t, bool hasType, llvm::StringRef name) {
  std::string s;
  if (hasType && t) {
    std::string ts = stdType(t);
    if (!ts.empty()) s = ts + " ";
  }
  return s + quoteName(name);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

std::string Printer::tensorType(const Tensor &t) const {
  llvm::StringRef n = elemTypeName(t.dataTypeRaw());
  std::string s = n.empty() ? std::string("float") : n.str();
  if (!t.dims().empty()) {
    s += "[";
    for (size_t i = 0; i < t.dims().size(); ++i) {
      if (i) s += ",";
      s += std::to_string(t.dims()[i]);
    }
    s += "]";
  }
  return s;
}

/// `[f(x), f(y), ...]` over `items`: the bracketed list in which the text
/// syntax writes a repeated field.
template <class Items, class F> static std::string bracketed(const Items &items, F &&f) {
  std::string s = "[";
  bool first = true;
  for (const auto &x : items) {
    if (!first) s += ", ";
    first = false;
    s += f(x);
  }
  return s + "]";
}

/// `{v, v, ...}` of a typed field, written straight into one string (large
/// tensors would otherwise hold a string per element).
static std::string typedBody(const TypedData &d, bool &exact) {
  using F = Tensor::TypedField;
  std::string s = "{";
  s.reserve(d.size() * 8 + 2);
  auto sep = [&](size_t i) {
    if (i) s += ", ";
  };
  // Floating-point elements also tell whether their text reads back as
  // the same bits (`exact`; floatRoundTrips, from the text written once).
  auto floats = [&](const auto &v, auto readBack, auto format) {
    for (size_t i = 0; i < v.size(); ++i) {
      sep(i);
      std::string t = format(v[i]);
      if (exact) {
        auto back = readBack(t.c_str());
        exact = std::memcmp(&back, &v[i], sizeof back) == 0;
      }
      s += t;
    }
  };
  switch (d.field) {
  case F::Float:
    floats(d.f32, [](const char *t) { return strtof(t, nullptr); },
           [](float x) { return formatFloat(x); });
    break;
  case F::Double:
    floats(d.f64, [](const char *t) { return strtod(t, nullptr); },
           [](double x) { return formatDouble(x); });
    break;
  case F::Int32:
    for (size_t i = 0; i < d.i32.size(); ++i) sep(i), s += std::to_string(d.i32[i]);
    break;
  case F::Int64:
    for (size_t i = 0; i < d.i64.size(); ++i) sep(i), s += std::to_string(d.i64[i]);
    break;
  case F::Uint64:
    for (size_t i = 0; i < d.u64.size(); ++i) sep(i), s += std::to_string(d.u64[i]);
    break;
  case F::String:
    for (size_t i = 0; i < d.str.size(); ++i) sep(i), s += quoteString(d.str[i]);
    break;
  case F::None: break;
  }
  return s + "}";
}

std::string Printer::tensorBody(const Tensor &t0, FieldWriter &w) const {
  const Tensor &t = as(t0);
  int32_t dt = t.dataTypeRaw();
  if (elemTypeName(dt).empty() && full()) w.num("data_type", dt);
  // data_location: the standard syntax implies EXTERNAL for `[...]` and
  // absence otherwise.
  bool ext = t.storage() == Tensor::Storage::External;
  if (full()) {
    if (ext && t.dataLocation != std::optional<int32_t>(1))
      w.raw("data_location", t.dataLocation ? std::to_string(*t.dataLocation) : "null");
    if (!ext && t.dataLocation) w.num("data_location", *t.dataLocation);
  }
  if (ext) {
    std::string s = "[";
    const Metadata &e = t.external().entries;
    for (size_t i = 0; i < e.size(); ++i) {
      if (i) s += ", ";
      s += quoteString(e[i].first) + ": " + quoteString(e[i].second);
    }
    return s + "]";
  }
  if (!o_.lossless && t.storage() != Tensor::Storage::External) {
    std::optional<int64_t> n = t.numElements();
    if (n && *n > o_.elideElementsAbove)
      return "[\"__elided__\": \"" + std::to_string(*n) + "\"]";
  }
  switch (t.storage()) {
  case Tensor::Storage::Empty:
  case Tensor::Storage::External: return "{}";
  case Tensor::Storage::Typed: {
    TypedData d = typedOf(t);
    if (d.field != standardField(dt) && !o_.standardOnly)
      w.str("field", typedFieldName(d.field));
    bool exact = true;
    std::string body = typedBody(d, exact);
    if (!exact && full()) w.hex("data_hex", fromHex(typedBitsHex(d)).value_or(""));
    return body;
  }
  case Tensor::Storage::Raw: {
    llvm::StringRef raw = t.rawData();
    std::optional<TypedData> d = rawToTyped(dt, raw);
    bool exact = d.has_value();
    std::string body = "{}";
    if (d) {
      body = typedBody(*d, exact);
      if (exact) {
        std::optional<std::string> back = typedToRaw(dt, *d);
        exact = back && *back == raw;
      }
    }
    if (full()) {
      if (exact) {
        w.flag("raw");
      } else {
        w.hex("raw", raw);
        return "{}";
      }
    }
    return body;
  }
  }
  return "{}";
}

void Printer::tensorMeta(const Tensor &t, FieldWriter &w, const std::string *valueName) const {
  if (!full()) return;
  if (valueName && t.name() != *valueName) w.str("name", t.name());
  if (!t.docString.empty()) w.str("doc_string", t.docString);
  if (!t.metadata.empty()) w.metadata("metadata_props", t.metadata);
  if (t.segment)
    w.raw("segment", "[" + std::to_string(t.segment->first) + ", " +
                         std::to_string(t.segment->second) + "]");
  if (!t.extras.empty()) w.hex("extras", t.extras);
}

std::string Printer::tensorRecord(const Tensor &t0) const {
  const Tensor &t = as(t0);
  FieldWriter w;
  w.str("name", t.name());
  w.num("data_type", t.dataTypeRaw());
  std::string dims = "[";
  for (size_t i = 0; i < t.dims().size(); ++i) {
    if (i) dims += ", ";
    dims += std::to_string(t.dims()[i]);
  }
  w.raw("dims", dims + "]");
  if (!t.docString.empty()) w.str("doc_string", t.docString);
  if (!t.metadata.empty()) w.metadata("metadata_props", t.metadata);
  if (t.segment)
    w.raw("segment", "[" + std::to_string(t.segment->first) + ", " +
                         std::to_string(t.segment->second) + "]");
  if (!t.extras.empty() && o_.lossless) w.hex("extras", t.extras);
  if (t.dataLocation) w.num("data_location", *t.dataLocation);
  else if (t.storage() == Tensor::Storage::External) w.raw("data_location", "null");
  switch (t.storage()) {
  case Tensor::Storage::Empty: break;
  case Tensor::Storage::Raw: w.hex("raw", t.rawData()); break;
  case Tensor::Storage::Typed: {
    TypedData d = typedOf(t);
    w.str("field", typedFieldName(d.field));
    bool exact = true;
    std::vector<std::string> vals = formatTyped(d, exact);
    if (d.field == Tensor::TypedField::String) {
      vals.clear();
      for (const std::string &s : d.str) vals.push_back(annotString(s));
    }
    std::string s = "[";
    for (size_t i = 0; i < vals.size(); ++i) {
      if (i) s += ", ";
      s += vals[i];
    }
    w.raw("data", s + "]");
    if (!exact) w.hex("data_hex", fromHex(typedBitsHex(d)).value_or(""));
    break;
  }
  case Tensor::Storage::External: w.metadata("external", t.external().entries); break;
  }
  return w.record();
}

std::string Printer::sparseRecord(const SparseTensor &s) const {
  FieldWriter w;
  std::string dims = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) dims += ", ";
    dims += std::to_string(s.dims[i]);
  }
  w.raw("dims", dims + "]");
  if (s.hasValues) w.raw("values", tensorRecord(s.values));
  if (s.hasIndices) w.raw("indices", tensorRecord(s.indices));
  if (!s.extras.empty() && o_.lossless) w.hex("extras", s.extras);
  return w.record();
}

void Printer::printAttrTensor(const Tensor &t, int ind) {
  FieldWriter w;
  std::string body = tensorBody(t, w);
  tensorMeta(t, w, nullptr);
  if (!o_.standardOnly) annot("tensor", w, ind);
  out_ += tensorType(t);
  if (!t.name().empty()) out_ += " " + quoteName(t.name());
  if (body[0] == '[') out_ += " =";
  out_ += " " + body;
}

//===----------------------------------------------------------------------===//
// Attributes and nodes
//===----------------------------------------------------------------------===//

bool Printer::attrNeedsLines(const Attribute &a) const {
  if (a.kind() == AttrKind::Graph || a.kind() == AttrKind::Graphs) return a.numGraphs() > 0;
  if (!full()) return false;
  if (!a.docString.empty() || !a.extras.empty() || !a.hasKindField ||
      (a.valueOmitted && !a.isReference()))
    return true;
  for (const auto &tp : a.tensors) {
    const Tensor *t = &as(*tp);
    if (!t->docString.empty() || !t->metadata.empty() || !t->extras.empty() ||
        t->storage() == Tensor::Storage::Raw || t->segment || t->dataLocation)
      return true;
  }
  return false;
}

void Printer::printAttribute(const Attribute &a, int ind) {
  FieldWriter w;
  if (full()) {
    if (!a.docString.empty()) w.str("doc_string", a.docString);
    if (!a.hasKindField) w.flag("untyped");
    if (a.valueOmitted && !a.isReference()) w.flag("omitted"); // Note [Scalar attribute presence]
    if (!a.extras.empty()) w.hex("extras", a.extras);
  }
  AttrKind k = a.kind();
  std::string kindName = attrKindName(k).str();
  // Attribute names are plain identifiers in the standard syntax; others are
  // quoted (an extension).
  std::string name = isIdentifier(a.name()) ? a.name() : quoteString(a.name());
  if (a.isReference()) {
    if (ext()) annot("attr", w, ind);
    out_ += name;
    if (k != AttrKind::Undefined) out_ += ": " + kindName;
    out_ += " = @" + quoteName(a.refAttrName);
    return;
  }
  auto list = [](const std::vector<std::string> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += ", ";
      s += v[i];
    }
    return s + "]";
  };
  switch (k) {
  case AttrKind::Float:
    if (!floatRoundTrips(a.f) && full()) {
      std::string b(reinterpret_cast<const char *>(&a.f), 4);
      w.hex("f_hex", b);
    }
    if (ext()) annot("attr", w, ind);
    out_ += name + " = " + formatFloat(a.f);
    return;
  case AttrKind::Int:
    if (ext()) annot("attr", w, ind);
    out_ += name + " = " + std::to_string(a.i);
    return;
  case AttrKind::String:
    if (ext()) annot("attr", w, ind);
    out_ += name + " = " + quoteString(a.s);
    return;
  case AttrKind::Floats: {
    std::vector<std::string> v;
    bool exact = true;
    for (float f : a.floats) {
      exact = exact && floatRoundTrips(f);
      v.push_back(formatFloat(f));
    }
    if (!exact && full()) {
      std::string b(reinterpret_cast<const char *>(a.floats.data()), a.floats.size() * 4);
      w.hex("floats_hex", b);
    }
    if (ext()) annot("attr", w, ind);
    out_ += name + (v.empty() ? ": floats" : "") + " = " + list(v);
    return;
  }
  case AttrKind::Ints: {
    std::vector<std::string> v;
    for (int64_t i : a.ints) v.push_back(std::to_string(i));
    if (ext()) annot("attr", w, ind);
    out_ += name + (v.empty() ? ": ints" : "") + " = " + list(v);
    return;
  }
  case AttrKind::Strings: {
    std::vector<std::string> v;
    for (const std::string &s : a.strings) v.push_back(quoteString(s));
    if (ext()) annot("attr", w, ind);
    out_ += name + (v.empty() ? ": strings" : "") + " = " + list(v);
    return;
  }
  case AttrKind::Tensor:
    if (ext()) annot("attr", w, ind);
    if (a.tensors.empty()) {
      out_ += name + ": tensor = []";
      return;
    }
    out_ += name + " = ";
    printAttrTensor(*a.tensors[0], ind + 2);
    return;
  case AttrKind::Tensors:
    if (ext()) annot("attr", w, ind);
    out_ += name + ": tensors = [";
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      if (i) out_ += ", ";
      printAttrTensor(*a.tensors[i], ind + 2);
    }
    out_ += "]";
    return;
  case AttrKind::Graph:
    if (ext()) annot("attr", w, ind);
    if (a.numGraphs() == 0) {
      out_ += name + ": graph = []";
      return;
    }
    out_ += name + " = ";
    printGraph(*a.graph(0), ind);
    return;
  case AttrKind::Graphs:
    if (ext()) annot("attr", w, ind);
    out_ += name + ": graphs = [";
    for (unsigned i = 0; i < a.numGraphs(); ++i) {
      if (i) out_ += ",";
      nl(ind + 2);
      printGraph(*a.graph(i), ind + 2);
    }
    out_ += "]";
    return;
  case AttrKind::SparseTensor:
  case AttrKind::SparseTensors: {
    if (ext()) {
      std::string s;
      if (k == AttrKind::SparseTensor) {
        s = a.sparseTensors.empty() ? "null" : sparseRecord(*a.sparseTensors[0]);
      } else {
        std::vector<std::string> v;
        for (const auto &st : a.sparseTensors) v.push_back(sparseRecord(*st));
        s = list(v);
      }
      w.raw(k == AttrKind::SparseTensor ? "sparse_tensor" : "sparse_tensors", s);
      annot("attr", w, ind);
    }
    out_ += name + ": " + kindName + " = []";
    return;
  }
  case AttrKind::TypeProto:
  case AttrKind::TypeProtos: {
    std::vector<std::string> v;
    bool allStd = true;
    for (const Type *t : a.types) {
      std::string s = typeIsStandard(t) ? stdType(t) : std::string();
      if (s.empty()) {
        allStd = false;
        s = stdType(t);
        if (s.empty()) s = "float";
      }
      v.push_back(s);
    }
    if (!allStd && ext()) {
      std::vector<std::string> recs;
      for (const Type *t : a.types) recs.push_back(typeRecord(t));
      w.raw("types", list(recs));
    }
    if (ext()) annot("attr", w, ind);
    if (k == AttrKind::TypeProto && !v.empty()) out_ += name + " = " + v[0];
    else if (k == AttrKind::TypeProto) out_ += name + ": type_proto = []";
    else out_ += name + ": type_protos = " + list(v);
    return;
  }
  case AttrKind::Undefined:
    if (ext()) {
      w.flag("undefined");
      annot("attr", w, ind);
    }
    out_ += name + ": ints = []";
    return;
  }
}

static bool isQualifiedId(llvm::StringRef s) {
  if (s.empty()) return false;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  s.split(parts, '.');
  for (llvm::StringRef p : parts)
    if (!isIdentifier(p)) return false;
  return true;
}

void Printer::printNode(const Node &n, int ind) {
  FieldWriter w;
  bool stdOp = isIdentifier(n.opType()) && (n.domain().empty() || isQualifiedId(n.domain())) &&
               (n.overload().empty() || isIdentifier(n.overload()));
  if (!stdOp && ext()) {
    w.str("op_type", n.opType());
    w.str("domain", n.domain());
    w.str("overload", n.overload());
  }
  if (full()) {
    if (!n.docString.empty()) w.str("doc_string", n.docString);
    if (!n.metadata.empty()) w.metadata("metadata_props", n.metadata);
    if (!n.deviceConfigurations.empty()) {
      std::string s = "[";
      for (size_t i = 0; i < n.deviceConfigurations.size(); ++i) {
        if (i) s += ", ";
        s += deviceConfig(n.deviceConfigurations[i]);
      }
      w.raw("device_configurations", s + "]");
    }
    if (!n.extras.empty()) w.hex("extras", n.extras);
  }
  if (ext()) annot("node", w, ind);
  if (!n.name().empty()) out_ += "[" + quoteName(n.name()) + "] ";

  // Empty slots print as `""` at either end and as nothing in the middle
  // (`a, , c`), which every version of onnx.parser reads the same.
  auto names = [&](unsigned count, auto get) {
    std::string s;
    for (unsigned i = 0; i < count; ++i) {
      const Value *v = get(i);
      if (i) s += ", ";
      if (v) s += quoteName(v->name());
      else if (i == 0 || i + 1 == count) s += "\"\"";
    }
    return s;
  };
  std::string outs = names(n.numResults(), [&](unsigned i) { return n.result(i); });
  if (!outs.empty()) out_ += outs + " ";
  out_ += "= ";
  if (stdOp) {
    if (!n.domain().empty()) out_ += n.domain().str() + ".";
    out_ += n.opType().str();
    if (!n.overload().empty()) out_ += ":" + n.overload().str();
  } else {
    out_ += "Unknown";
  }
  std::string ins = names(n.numOperands(), [&](unsigned i) { return n.operand(i); });

  bool multi = false, hasGraph = false;
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    hasGraph |= a.kind() == AttrKind::Graph || a.kind() == AttrKind::Graphs;
    multi |= attrNeedsLines(a);
  }
  auto attrs = [&]() {
    if (n.numAttributes() == 0) return;
    out_ += " <";
    for (unsigned i = 0; i < n.numAttributes(); ++i) {
      if (i) out_ += multi ? "," : ", ";
      if (multi) nl(ind + 4);
      printAttribute(n.attribute(i), ind + 4);
    }
    if (multi) nl(ind + 2);
    out_ += ">";
  };
  if (hasGraph) {
    out_ += " (" + ins + ")";
    attrs();
  } else {
    attrs();
    out_ += " (" + ins + ")";
  }
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

void Printer::graphFields(const Graph &g, FieldWriter &w) const {
  if (!full()) return;
  if (!g.docString.empty()) w.str("doc_string", g.docString);
  if (!g.metadata.empty()) w.metadata("metadata_props", g.metadata);
  if (!g.quantizationAnnotations.empty())
    w.raw("quantization_annotation",
          bracketed(g.quantizationAnnotations, [](const QuantizationAnnotation &q) {
            FieldWriter qw;
            if (q.tensorName) qw.str("tensor_name", *q.tensorName);
            qw.metadata("quant_parameter_tensor_names", q.quantParameterTensorNames);
            if (!q.extras.empty()) qw.hex("extras", q.extras);
            return qw.record();
          }));
  if (!g.extras.empty()) w.hex("extras", g.extras);
}

void Printer::printGraph(const Graph &g, int ind, bool isFunctionBody) {
  if (!isFunctionBody) {
    FieldWriter gw;
    graphFields(g, gw);
    if (ext()) annot("graph", gw, ind);
    out_ += quoteName(g.name);
    // Inputs.
    std::vector<std::pair<std::string, std::string>> items; // (annotation, text)
    bool multi = false;
    for (const Value *v : g.inputs()) {
      FieldWriter w;
      valueInfoFields(w, v->type(), v->type() != nullptr, v->docString, v->metadata, v->extras);
      multi |= !w.empty() && ext();
      items.emplace_back(ext() ? w.fields() : "", valueInfoText(v->type(), v->type() != nullptr, v->name()));
    }
    auto printItems = [&](bool multi) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out_ += ",";
        if (multi) {
          nl(ind + 4);
          if (!items[i].first.empty()) {
            out_ += "#@value " + items[i].first;
            nl(ind + 4);
          }
        } else if (i) {
          out_ += " ";
        }
        out_ += items[i].second;
      }
      if (multi) nl(ind + 2);
    };
    out_ += " (";
    printItems(multi);
    out_ += ") => (";
    items.clear();
    multi = false;
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      const OutputInfo &oi = g.outputInfo(i);
      const Value *v = g.output(i);
      FieldWriter w;
      valueInfoFields(w, oi.type, oi.hasType, oi.docString, oi.metadata, oi.extras);
      multi |= !w.empty() && ext();
      items.emplace_back(ext() ? w.fields() : "",
                         valueInfoText(oi.type, oi.hasType, v ? v->name() : ""));
    }
    printItems(multi);
    out_ += ")";
  }

  // The `<...>` list: sparse initializers (annotations), value_info, then
  // initializers in their original order.
  struct Item {
    std::string annKind, ann, text;
  };
  std::vector<Item> items;
  std::vector<std::string> sparse;
  if (ext()) {
    for (const Value *v : g.sparseInitializers()) {
      if (!v->sparseInitializer()) continue;
      FieldWriter w;
      w.str("name", v->name());
      std::string rec = sparseRecord(*v->sparseInitializer());
      sparse.push_back("#@sparse_initializer " + w.fields() + ", " + rec.substr(1, rec.size() - 2));
    }
  }
  for (const ValueInfoRecord &r : g.valueInfo()) {
    if (r.erased) continue;
    // The value's type, as the binary writer takes it (ProtoLower.cpp): a
    // pass that refines a value (infer-shapes) refines its record too.
    const Type *t = r.value && r.value->type() ? r.value->type() : r.type;
    FieldWriter w;
    valueInfoFields(w, t, r.hasType, r.docString, r.metadata, r.extras);
    std::string nm = r.value ? r.value->name().str() : r.name;
    items.push_back({"value", w.fields(), valueInfoText(t, r.hasType, nm)});
  }
  for (const Value *v : g.initializers()) {
    const Tensor *t = v->initializer();
    if (!t) continue;
    FieldWriter w;
    std::string body = tensorBody(*t, w);
    std::string vn = v->name().str();
    tensorMeta(*t, w, &vn);
    items.push_back({"tensor", w.fields(), tensorType(*t) + " " + quoteName(vn) + " = " + body});
  }
  bool anyAnn = !sparse.empty();
  for (const Item &it : items) anyAnn |= !it.ann.empty() && ext();
  if (!items.empty() || !sparse.empty()) {
    nl(ind + 2);
    out_ += "<";
    if (items.size() == 1 && !anyAnn) {
      out_ += items[0].text;
    } else {
      for (const std::string &s : sparse) {
        nl(ind + 4);
        out_ += s;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        nl(ind + 4);
        if (!items[i].ann.empty() && ext()) {
          out_ += "#@" + items[i].annKind + " " + items[i].ann;
          nl(ind + 4);
        }
        out_ += items[i].text;
        if (i + 1 < items.size()) out_ += ",";
      }
      nl(ind + 2);
    }
    out_ += ">";
  }
  nl(ind);
  out_ += "{";
  for (const Node &n : g.nodes()) {
    nl(ind + 2);
    printNode(n, ind + 2);
  }
  nl(ind);
  out_ += "}";
}

//===----------------------------------------------------------------------===//
// Model and functions
//===----------------------------------------------------------------------===//

/// The header's `opset_import: [...]` list, of a model or a function.
std::string Printer::opsetList(const std::vector<OpsetImport> &ops) {
  return bracketed(ops, [](const OpsetImport &o) {
    return quoteString(o.domain) + " : " + std::to_string(o.version);
  });
}

std::string Printer::opsetExtras(const std::vector<OpsetImport> &ops) const {
  bool any = false;
  for (const OpsetImport &o : ops) any |= !o.extras.empty();
  if (!any) return "";
  std::string s = "[";
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) s += ", ";
    s += annotHex(ops[i].extras);
  }
  return s + "]";
}

std::string Printer::shardingSpec(const ShardingSpec &s) const {
  FieldWriter w;
  if (s.tensorName) w.str("tensor_name", *s.tensorName);
  auto ints = [](const std::vector<int64_t> &v) {
    std::string r = "[";
    for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
    return r + "]";
  };
  w.raw("device", ints(s.device));
  std::string m = "[";
  for (size_t i = 0; i < s.indexToDeviceGroupMap.size(); ++i) {
    FieldWriter e;
    if (s.indexToDeviceGroupMap[i].first) e.num("key", *s.indexToDeviceGroupMap[i].first);
    e.raw("value", ints(s.indexToDeviceGroupMap[i].second));
    m += (i ? ", " : "") + e.record();
  }
  w.raw("index_to_device_group_map", m + "]");
  if (!s.indexToDeviceGroupMapExtras.empty()) {
    std::string x = "[";
    for (size_t i = 0; i < s.indexToDeviceGroupMapExtras.size(); ++i)
      x += (i ? ", " : "") + annotHex(s.indexToDeviceGroupMapExtras[i]);
    w.raw("index_map_extras", x + "]");
  }
  std::string d = "[";
  for (size_t i = 0; i < s.shardedDim.size(); ++i) {
    const ShardingSpec::ShardedDim &sd = s.shardedDim[i];
    FieldWriter e;
    if (sd.axis) e.num("axis", *sd.axis);
    std::string ss = "[";
    for (size_t j = 0; j < sd.simpleSharding.size(); ++j) {
      const ShardingSpec::SimpleShardedDim &x = sd.simpleSharding[j];
      FieldWriter f;
      if (x.kind == ShardingSpec::SimpleShardedDim::Kind::Value) f.num("dim_value", x.dimValue);
      if (x.kind == ShardingSpec::SimpleShardedDim::Kind::Param) f.str("dim_param", x.dimParam);
      if (x.numShards) f.num("num_shards", *x.numShards);
      if (!x.extras.empty()) f.hex("extras", x.extras);
      ss += (j ? ", " : "") + f.record();
    }
    e.raw("simple_sharding", ss + "]");
    if (!sd.extras.empty()) e.hex("extras", sd.extras);
    d += (i ? ", " : "") + e.record();
  }
  w.raw("sharded_dim", d + "]");
  if (!s.extras.empty()) w.hex("extras", s.extras);
  return w.record();
}

std::string Printer::deviceConfig(const NodeDeviceConfiguration &c) const {
  FieldWriter w;
  if (c.configurationId) w.str("configuration_id", *c.configurationId);
  std::string s = "[";
  for (size_t i = 0; i < c.shardingSpec.size(); ++i)
    s += (i ? ", " : "") + shardingSpec(c.shardingSpec[i]);
  w.raw("sharding_spec", s + "]");
  if (c.pipelineStage) w.num("pipeline_stage", *c.pipelineStage);
  if (!c.extras.empty()) w.hex("extras", c.extras);
  return w.record();
}

void Printer::printFunction(const Function &f) {
  FieldWriter w;
  if (full()) {
    if (!f.metadata.empty()) w.metadata("metadata_props", f.metadata);
    std::string ox = opsetExtras(f.opsetImports);
    if (!ox.empty()) w.raw("opset_extras", ox);
    if (!f.extras.empty()) w.hex("extras", f.extras);
  }
  if (ext()) annot("function", w, 0);
  std::vector<std::string> hdr;
  if (!f.domain.empty()) hdr.push_back("domain: " + quoteString(f.domain));
  if (!f.opsetImports.empty()) hdr.push_back("opset_import: " + opsetList(f.opsetImports));
  if (!f.overload.empty()) hdr.push_back("overload: " + quoteString(f.overload));
  if (!f.docString.empty())
    hdr.push_back("doc_string: " + quoteString(f.docString));
  if (!hdr.empty()) {
    out_ += "<";
    for (size_t i = 0; i < hdr.size(); ++i) out_ += (i ? ", " : "") + hdr[i];
    out_ += ">";
    nl(0);
  }
  out_ += quoteName(f.name);
  if (!f.attributeNames.empty() || !f.attributeDefaults.empty()) {
    out_ += " <";
    bool first = true;
    for (const std::string &a : f.attributeNames) {
      out_ += (first ? "" : ", ") + quoteName(a);
      first = false;
    }
    bool multi = false;
    for (const auto &a : f.attributeDefaults) multi |= attrNeedsLines(*a);
    for (const auto &a : f.attributeDefaults) {
      if (!first) out_ += multi ? "," : ", ";
      first = false;
      if (multi) nl(4);
      printAttribute(*a, 4);
    }
    if (multi) nl(2);
    out_ += ">";
  }
  const Graph &b = f.body();
  out_ += " (";
  for (unsigned i = 0; i < b.numInputs(); ++i)
    out_ += (i ? ", " : "") + quoteName(b.input(i)->name());
  out_ += ") => (";
  for (unsigned i = 0; i < b.numOutputs(); ++i)
    out_ += (i ? ", " : "") + quoteName(b.output(i) ? b.output(i)->name() : "");
  out_ += ")";
  printGraph(b, 0, /*isFunctionBody=*/true);
}

void Printer::printModel(const Model &m) {
  FieldWriter w;
  if (full()) {
    if (!m.trainingInfo.empty())
      w.raw("training_info",
            bracketed(m.trainingInfo, [](const auto &t) { return annotHex(t); }));
    if (!m.configurations.empty())
      w.raw("configurations", bracketed(m.configurations, [](const DeviceConfiguration &c) {
              FieldWriter cw;
              if (c.name) cw.str("name", *c.name);
              if (c.numDevices) cw.num("num_devices", *c.numDevices);
              cw.raw("device", bracketed(c.device, [](const auto &d) { return annotString(d); }));
              if (!c.extras.empty()) cw.hex("extras", c.extras);
              return cw.record();
            }));
    std::string ox = opsetExtras(m.opsetImports);
    if (!ox.empty()) w.raw("opset_extras", ox);
    if (!m.extras.empty()) w.hex("extras", m.extras);
  }
  if (!m.hasGraph && ext()) w.flag("no_graph");
  if (ext()) annot("model", w, 0);

  std::vector<std::string> hdr;
  if (m.irVersion) hdr.push_back("ir_version: " + std::to_string(*m.irVersion));
  if (!m.opsetImports.empty()) hdr.push_back("opset_import: " + opsetList(m.opsetImports));
  if (m.producerName) hdr.push_back("producer_name: " + quoteString(*m.producerName));
  if (m.producerVersion) hdr.push_back("producer_version: " + quoteString(*m.producerVersion));
  if (m.domain) hdr.push_back("domain: " + quoteString(*m.domain));
  if (m.modelVersion) hdr.push_back("model_version: " + std::to_string(*m.modelVersion));
  if (m.docString) hdr.push_back("doc_string: " + quoteString(*m.docString));
  if (!m.metadata.empty())
    hdr.push_back("metadata_props: " + bracketed(m.metadata, [](const auto &kv) {
                    return quoteString(kv.first) + ": " + quoteString(kv.second);
                  }));
  if (!hdr.empty()) {
    out_ += "<";
    for (size_t i = 0; i < hdr.size(); ++i) {
      out_ += i ? "," : "";
      nl(2);
      out_ += hdr[i];
    }
    nl(0);
    out_ += ">";
    nl(0);
  }
  printGraph(m.graph(), 0);
  out_ += "\n";
  for (const auto &f : m.functions()) {
    out_ += "\n";
    printFunction(*f);
    out_ += "\n";
  }
}

} // namespace

std::string printModelText(const Model &m, const PrintOptions &opts) {
  Printer p(opts);
  p.printModel(m);
  return p.take();
}

std::string printGraphText(const Graph &g, const PrintOptions &opts) {
  Printer p(opts);
  p.printGraph(g, 0);
  std::string s = p.take();
  s += "\n";
  return s;
}

} // namespace onnxir
