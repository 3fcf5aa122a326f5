//===- OpContext.cpp - Attributes with the schema's defaults --------------===//
//
// The one attribute reader (Note [Attribute defaults] in OpContext.h).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpContext.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

namespace onnxir {

const OpEntry *OpContext::entry() const {
  if (!looked_) {
    entry_ = OpRegistry::get().lookup(domain, opType, opset);
    looked_ = true;
  }
  return entry_;
}

const OpSchema *OpContext::schema() const {
  const OpEntry *e = entry();
  return e ? e->schema : nullptr;
}

const Attribute *OpContext::own(llvm::StringRef name, int k, bool &present) const {
  const Attribute *a = attr(name);
  present = a != nullptr;
  return a && !a->isReference() && a->kind() == static_cast<AttrKind>(k) ? a : nullptr;
}

const AttributeSchema *OpContext::schemaDefault(llvm::StringRef name, int k) const {
  const OpSchema *s = schema();
  const AttributeSchema *a = s ? s->attribute(name) : nullptr;
  return a && a->hasDefault && a->kind == static_cast<AttrKind>(k) ? a : nullptr;
}

int64_t OpContext::getInt(llvm::StringRef name, int64_t fallback) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::Int, present)) return a->i;
  if (present) return fallback;
  const AttributeSchema *d = schemaDefault(name, (int)AttrKind::Int);
  return d ? d->defaultInt : fallback;
}

float OpContext::getFloat(llvm::StringRef name, float fallback) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::Float, present)) return a->f;
  if (present) return fallback;
  const AttributeSchema *d = schemaDefault(name, (int)AttrKind::Float);
  return d ? (float)d->defaultFloat : fallback;
}

std::string OpContext::getString(llvm::StringRef name, llvm::StringRef fallback) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::String, present)) return a->s;
  if (present) return fallback.str();
  const AttributeSchema *d = schemaDefault(name, (int)AttrKind::String);
  return d ? d->defaultString.str() : fallback.str();
}

std::optional<std::vector<int64_t>> OpContext::getInts(llvm::StringRef name) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::Ints, present)) return a->ints;
  if (present) return std::nullopt;
  if (const AttributeSchema *d = schemaDefault(name, (int)AttrKind::Ints)) return d->defaultInts;
  return std::nullopt;
}

std::optional<std::vector<float>> OpContext::getFloats(llvm::StringRef name) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::Floats, present)) return a->floats.get();
  if (present) return std::nullopt;
  if (const AttributeSchema *d = schemaDefault(name, (int)AttrKind::Floats))
    return std::vector<float>(d->defaultFloats.begin(), d->defaultFloats.end());
  return std::nullopt;
}

std::optional<std::vector<std::string>> OpContext::getStrings(llvm::StringRef name) const {
  bool present;
  if (const Attribute *a = own(name, (int)AttrKind::Strings, present)) return a->strings.get();
  if (present) return std::nullopt;
  if (const AttributeSchema *d = schemaDefault(name, (int)AttrKind::Strings)) {
    std::vector<std::string> v;
    for (llvm::StringRef x : d->defaultStrings) v.push_back(x.str());
    return v;
  }
  return std::nullopt;
}

NodeContext::NodeContext(const Node &n) : NodeContext(n, opsetInForce(n)) {}

NodeContext::NodeContext(const Node &n, int64_t opset)
    : OpContext(n.domain(), n.opType(), opset), node(n) {}

const Attribute *NodeContext::attr(llvm::StringRef name) const { return node.getAttr(name); }

const Tensor *NodeContext::inConstant(unsigned i) const {
  if (i >= node.numOperands() || !node.operand(i)) return nullptr;
  scratch_.emplace_back();
  const Tensor *t = constantOf(node.operand(i), scratch_.back());
  if (t != &scratch_.back()) scratch_.pop_back();
  return t;
}

} // namespace onnxir
