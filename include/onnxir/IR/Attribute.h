//===- Attribute.h - Node attributes, including subgraphs -----------------===//
//
// An attribute has a name, a doc string and one typed payload, or it is a
// reference to an attribute of the enclosing function (`ref_attr_name`).
// GRAPH and GRAPHS attributes own their Graphs; each such Graph knows the
// Node and Attribute that hold it (Graph::parentNode, Graph::parentAttribute).
//
// Note [Attribute payloads are copied in one place]
// The payload (kind, scalars, lists, tensors, types, subgraphs) is copied by
// Attribute::copyPayloadFrom and moved by Attribute::movePayloadFrom, and
// nowhere else: Attribute::clone, graph cloning, the lifting of detached
// attributes (function defaults) and the inliner's substitution of
// attribute references all go through them, so a field added to the payload
// is copied everywhere at once. The non-graph fields live in
// AttributePayload, whose copy constructor deep-copies tensors.
//
// Note [Scalar attribute presence]
// A FLOAT, INT or STRING attribute that is not a reference is written with
// its f / i / s field even when the value is 0, 0.0 or "": ONNX's proto2
// fields have presence, and readers differ on an absent one (onnx's shape
// inference refuses a Constant's value_float without f, and reads Flatten's
// axis without i as the default 1, not 0). The one exception is a value whose
// field the file itself omitted (proto3 writers drop zeros): the lift sets
// `valueOmitted`, the lowering omits the field again, and the flag travels
// with the payload. Every other attribute, whoever made it (a pass, the
// text parser, an attribute reference resolved by inlining or expansion),
// has the flag clear and writes its field. A reference writes no value.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_ATTRIBUTE_H
#define ONNXIR_IR_ATTRIBUTE_H

#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

class Graph;
class IRMapping;
class Node;

/// Numbers are AttributeProto.AttributeType.
enum class AttrKind : int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

/// Text-syntax name of a kind (`float`, `ints`, `graph`, ...).
llvm::StringRef attrKindName(AttrKind k);

/// The values of an attribute except its subgraphs; which fields are
/// meaningful depends on the attribute's kind. Copies are deep (tensors are
/// copied), moves are cheap.
struct AttributePayload {
  float f = 0;
  /// The file had no f / i / s field for this FLOAT / INT / STRING value,
  /// which is then 0 / 0.0 / ""; the lowering omits it again. The setters
  /// clear it (Note [Scalar attribute presence]).
  bool valueOmitted = false;
  int64_t i = 0;
  std::string s;
  std::vector<int64_t> ints;
  // Less common payloads, one pointer each while empty (Note [Out-of-line
  // fields]); write through mut() beyond assignment and appends.
  OutOfLine<std::vector<float>> floats;
  OutOfLine<std::vector<std::string>> strings;
  OutOfLine<std::vector<std::unique_ptr<Tensor>>> tensors; ///< TENSOR uses tensors[0]
  OutOfLine<std::vector<std::unique_ptr<SparseTensor>>> sparseTensors; ///< likewise
  OutOfLine<std::vector<const Type *>> types; ///< TYPE_PROTO uses types[0]

  AttributePayload() = default;
  AttributePayload(const AttributePayload &o);
  AttributePayload(AttributePayload &&) = default;
  AttributePayload &operator=(const AttributePayload &o);
  AttributePayload &operator=(AttributePayload &&) = default;
  ~AttributePayload();
};

class Attribute : public AttributePayload {
public:
  explicit Attribute(std::string name) : name_(std::move(name)) {}
  ~Attribute();
  Attribute(const Attribute &) = delete;
  Attribute &operator=(const Attribute &) = delete;

  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  /// The payload kind (AttributeProto.type). For a reference this is the
  /// declared type of the referenced attribute.
  AttrKind kind() const { return kind_; }
  void setKind(AttrKind k) { kind_ = k; }
  /// False if the proto omitted `type` (IR < 3 files do).
  bool hasKindField = true;

  /// Reference to an attribute of the enclosing function, or "".
  OutOfLineString refAttrName; ///< Note [Out-of-line fields]
  bool isReference() const { return !refAttrName.empty(); }

  OutOfLineString docString;

  // Payload (AttributePayload fields f, i, s, floats, ints, strings,
  // tensors, sparseTensors, types, and the subgraphs below).

  /// Subgraphs (GRAPH uses graph(0)). Owned; their parent links point here.
  unsigned numGraphs() const { return (unsigned)graphs_.size(); }
  Graph *graph(unsigned i = 0) const { return graphs_[i].get(); }
  /// Appends `g`, making this attribute (and its node) its parent.
  Graph *addGraph(std::unique_ptr<Graph> g);
  /// Removes and returns graph #i.
  std::unique_ptr<Graph> takeGraph(unsigned i);
  /// The node holding this attribute (null while detached).
  Node *getNode() const { return node_; }

  /// Convenience setters that also set kind().
  void setFloat(float v) { kind_ = AttrKind::Float; f = v; valueOmitted = false; }
  void setInt(int64_t v) { kind_ = AttrKind::Int; i = v; valueOmitted = false; }
  void setString(std::string v) {
    kind_ = AttrKind::String;
    s = std::move(v);
    valueOmitted = false;
  }
  void setInts(std::vector<int64_t> v) { kind_ = AttrKind::Ints; ints = std::move(v); }
  void setFloats(std::vector<float> v) { kind_ = AttrKind::Floats; floats = std::move(v); }
  void setStrings(std::vector<std::string> v) { kind_ = AttrKind::Strings; strings = std::move(v); }
  void setTensor(std::unique_ptr<Tensor> t);

  /// Deep copy; subgraphs are cloned (captured outer values kept).
  std::unique_ptr<Attribute> clone() const;
  /// Deep copy whose subgraphs are cloned through `m` (values mapped there
  /// are remapped), each then passed to `eachGraph` if given.
  std::unique_ptr<Attribute> clone(IRMapping &m,
                                   llvm::function_ref<void(Graph &)> eachGraph = nullptr) const;

  /// Replaces this attribute's payload (kind, values and subgraphs) by a copy
  /// of `src`'s; name, doc string, reference and extras stay. Subgraphs are
  /// cloned through `m`, each then passed to `eachGraph` if given.
  void copyPayloadFrom(const Attribute &src, IRMapping &m,
                       llvm::function_ref<void(Graph &)> eachGraph = nullptr);
  /// Replaces this attribute's payload by `src`'s, which is left empty
  /// (subgraphs change owner).
  void movePayloadFrom(Attribute &src);
  /// Copies (or moves) name, doc string, reference, kind-field presence and
  /// extras: everything but the payload.
  void copyHeaderFrom(const Attribute &src);
  void moveHeaderFrom(Attribute &src);

  /// Opaque serializer bytes (unknown fields, presence of defaults, fields
  /// that disagree with `type`).
  OutOfLineString extras;

private:
  friend class Node;
  std::string name_;
  AttrKind kind_ = AttrKind::Undefined;
  bool inContext_ = false; ///< made by Node::newAttr, in the context's storage
  std::vector<std::unique_ptr<Graph>> graphs_;
  Node *node_ = nullptr;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_ATTRIBUTE_H
