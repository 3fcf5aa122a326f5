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
  graphs_.push_back(std::move(g));
  return graphs_.back().get();
}

std::unique_ptr<Graph> Attribute::takeGraph(unsigned i) {
  std::unique_ptr<Graph> g = std::move(graphs_[i]);
  graphs_.erase(graphs_.begin() + i);
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

std::unique_ptr<Attribute> Attribute::clone() const {
  auto c = std::make_unique<Attribute>(name_);
  c->kind_ = kind_;
  c->hasKindField = hasKindField;
  c->refAttrName = refAttrName;
  c->docString = docString;
  c->f = f;
  c->i = i;
  c->s = s;
  c->floats = floats;
  c->ints = ints;
  c->strings = strings;
  for (auto &t : tensors) c->tensors.push_back(std::make_unique<Tensor>(*t));
  for (auto &t : sparseTensors) c->sparseTensors.push_back(std::make_unique<SparseTensor>(*t));
  c->types = types;
  c->extras = extras;
  for (auto &g : graphs_) {
    IRMapping m;
    c->addGraph(g->clone(m));
  }
  return c;
}

} // namespace onnxir
