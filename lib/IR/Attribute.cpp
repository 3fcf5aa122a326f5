//===- Attribute.cpp ------------------------------------------------------===//
#include "onnxir/IR/Attribute.h"

#include "onnxir/IR/Graph.h"

namespace onnxir {

llvm::StringRef attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Undefined: return "undefined";
  case AttrKind::Float: return "float";
  case AttrKind::Int: return "int";
  case AttrKind::String: return "string";
  case AttrKind::Tensor: return "tensor";
  case AttrKind::Graph: return "graph";
  case AttrKind::Floats: return "floats";
  case AttrKind::Ints: return "ints";
  case AttrKind::Strings: return "strings";
  case AttrKind::Tensors: return "tensors";
  case AttrKind::Graphs: return "graphs";
  case AttrKind::SparseTensor: return "sparse_tensor";
  case AttrKind::SparseTensors: return "sparse_tensors";
  case AttrKind::TypeProto: return "type_proto";
  case AttrKind::TypeProtos: return "type_protos";
  }
  return "unknown";
}

Attribute::~Attribute() {
  // Subgraphs may use each other's... no: sibling subgraphs cannot see each
  // other. Each graph's destructor drops its own references.
  graphs_.clear();
}

Graph *Attribute::addGraph(std::unique_ptr<Graph> g) {
  assert(g->parentAttr_ == nullptr && g->function_ == nullptr && "graph already has a parent");
  g->parentAttr_ = this;
  // Its captures become dependencies of the node (Note [Known acyclic
  // graphs]).
  g->getContext().noteNewDependencies();
  if (node_) node_->addToSubgraphCount(1);
  graphs_.push_back(std::move(g));
  return graphs_.back().get();
}

std::unique_ptr<Graph> Attribute::takeGraph(unsigned i) {
  std::unique_ptr<Graph> g = std::move(graphs_[i]);
  graphs_.erase(graphs_.begin() + i);
  if (node_) node_->addToSubgraphCount(-1);
  // Detaching leaves uses of outer values in place; the caller must reattach
  // or drop them.
  g->parentAttr_ = nullptr;
  return g;
}

void Attribute::setTensor(std::unique_ptr<Tensor> t) {
  kind_ = AttrKind::Tensor;
  tensors.clear();
  tensors.push_back(std::move(t));
}

//===----------------------------------------------------------------------===//
// Payload copies (Note [Attribute payloads are copied in one place])
//===----------------------------------------------------------------------===//

AttributePayload::AttributePayload(const AttributePayload &o)
    : f(o.f), valueOmitted(o.valueOmitted), i(o.i), s(o.s), ints(o.ints), floats(o.floats),
      strings(o.strings), types(o.types) {
  tensors.reserve(o.tensors.size());
  for (auto &t : o.tensors) tensors.push_back(t ? std::make_unique<Tensor>(*t) : nullptr);
  sparseTensors.reserve(o.sparseTensors.size());
  for (auto &t : o.sparseTensors)
    sparseTensors.push_back(t ? std::make_unique<SparseTensor>(*t) : nullptr);
}

AttributePayload &AttributePayload::operator=(const AttributePayload &o) {
  if (this != &o) *this = AttributePayload(o);
  return *this;
}

AttributePayload::~AttributePayload() = default;

void Attribute::copyPayloadFrom(const Attribute &src, IRMapping &m,
                                llvm::function_ref<void(Graph &)> eachGraph) {
  if (this == &src) return;
  kind_ = src.kind_;
  static_cast<AttributePayload &>(*this) = static_cast<const AttributePayload &>(src);
  while (numGraphs()) takeGraph(numGraphs() - 1);
  for (auto &g : src.graphs_) {
    Graph *c = addGraph(g->clone(m));
    if (eachGraph) eachGraph(*c);
  }
}

void Attribute::movePayloadFrom(Attribute &src) {
  if (this == &src) return;
  kind_ = src.kind_;
  static_cast<AttributePayload &>(*this) = std::move(static_cast<AttributePayload &>(src));
  static_cast<AttributePayload &>(src) = AttributePayload();
  while (numGraphs()) takeGraph(numGraphs() - 1);
  while (src.numGraphs()) addGraph(src.takeGraph(0));
}

void Attribute::copyHeaderFrom(const Attribute &src) {
  name_ = src.name_;
  hasKindField = src.hasKindField;
  refAttrName = src.refAttrName;
  docString = src.docString;
  extras = src.extras;
}

void Attribute::moveHeaderFrom(Attribute &src) {
  name_ = std::move(src.name_);
  hasKindField = src.hasKindField;
  refAttrName = std::move(src.refAttrName);
  docString = std::move(src.docString);
  extras = std::move(src.extras);
}

std::unique_ptr<Attribute> Attribute::clone(IRMapping &m,
                                            llvm::function_ref<void(Graph &)> eachGraph) const {
  auto c = std::make_unique<Attribute>(name_);
  c->copyHeaderFrom(*this);
  c->copyPayloadFrom(*this, m, eachGraph);
  return c;
}

std::unique_ptr<Attribute> Attribute::clone() const {
  IRMapping m;
  return clone(m);
}

} // namespace onnxir
