//===- Context.cpp - Interning, type uniquing, the name registry ----------===//
#include "onnxir/IR/Context.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

namespace onnxir {

Context::Context() : strings_(alloc_) {}
Context::~Context() = default;

llvm::StringRef Context::intern(llvm::StringRef s) { return strings_.save(s); }

namespace {
// A canonical key: every field, length-prefixed, so distinct specs never
// produce the same key.
void appendStr(std::string &k, llvm::StringRef s) {
  k += std::to_string(s.size());
  k += ':';
  k.append(s.data(), s.size());
}
} // namespace

const Type *Context::getType(const TypeSpec &spec) {
  std::string key;
  key.reserve(32);
  key += char('0' + (int)spec.kind);
  key += spec.hasElem ? 'E' : 'e';
  key += std::to_string(spec.elem);
  key += spec.hasShape ? 'S' : 's';
  if (spec.hasShape) {
    key += std::to_string(spec.dims.size());
    for (const Dim &d : spec.dims) {
      key += char('0' + (int)d.kind);
      if (d.kind == Dim::Kind::Known) key += std::to_string(d.value);
      if (d.kind == Dim::Kind::Symbolic) appendStr(key, d.param);
      appendStr(key, d.denotation);
    }
  }
  key += 'I';
  // Inner types are uniqued: their address identifies them.
  key += std::to_string(reinterpret_cast<uintptr_t>(spec.inner));
  appendStr(key, spec.opaqueDomain);
  appendStr(key, spec.opaqueName);
  appendStr(key, spec.denotation);
  appendStr(key, spec.extras);

  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  auto t = std::unique_ptr<Type>(new Type());
  t->kind_ = spec.kind;
  t->hasElem_ = spec.hasElem;
  t->elem_ = spec.elem;
  t->hasShape_ = spec.hasShape;
  t->dims_ = spec.dims;
  for (Dim &d : t->dims_) {
    d.param = intern(d.param);
    d.denotation = intern(d.denotation);
  }
  t->inner_ = spec.inner;
  t->opaqueDomain_ = intern(spec.opaqueDomain);
  t->opaqueName_ = intern(spec.opaqueName);
  t->denotation_ = intern(spec.denotation);
  t->extras_ = intern(spec.extras);
  Type *raw = t.get();
  typeStorage_.push_back(std::move(t));
  types_[key] = raw;
  return raw;
}

const Type *Context::getTensorType(DataType elem,
                                   std::optional<llvm::ArrayRef<Dim>> dims) {
  TypeSpec s;
  s.kind = Type::Kind::Tensor;
  s.hasElem = true;
  s.elem = static_cast<int32_t>(elem);
  if (dims) {
    s.hasShape = true;
    s.dims.assign(dims->begin(), dims->end());
  }
  return getType(s);
}

const Type *Context::getTensorType(DataType elem, llvm::ArrayRef<int64_t> dims) {
  std::vector<Dim> ds;
  ds.reserve(dims.size());
  for (int64_t d : dims) ds.push_back(Dim::known(d));
  return getTensorType(elem, llvm::ArrayRef<Dim>(ds));
}

const Type *Context::getSequenceType(const Type *elem) {
  TypeSpec s;
  s.kind = Type::Kind::Sequence;
  s.inner = elem;
  return getType(s);
}

const Type *Context::getOptionalType(const Type *elem) {
  TypeSpec s;
  s.kind = Type::Kind::Optional;
  s.inner = elem;
  return getType(s);
}

const Type *Context::getMapType(DataType key, const Type *value) {
  TypeSpec s;
  s.kind = Type::Kind::Map;
  s.hasElem = true;
  s.elem = static_cast<int32_t>(key);
  s.inner = value;
  return getType(s);
}

Dim Context::symbolicDim(llvm::StringRef param) {
  Dim d;
  d.kind = Dim::Kind::Symbolic;
  d.param = intern(param);
  return d;
}

unsigned Context::nameDefinitions(llvm::StringRef name) const {
  auto it = nameCount_.find(name);
  return it == nameCount_.end() ? 0 : it->second;
}

void Context::registerName(llvm::StringRef interned) { ++nameCount_[interned]; }

void Context::unregisterName(llvm::StringRef interned) {
  auto it = nameCount_.find(interned);
  assert(it != nameCount_.end() && it->second > 0 && "name not registered");
  if (--it->second == 0) nameCount_.erase(it);
}

llvm::StringRef Context::freshName(llvm::StringRef base) {
  if (base.empty()) base = "v";
  if (!nameCount_.count(base)) return intern(base);
  unsigned &next = nextSuffix_[base];
  llvm::SmallString<64> buf;
  for (;;) {
    ++next;
    buf.clear();
    llvm::raw_svector_ostream(buf) << base << '_' << next;
    if (!nameCount_.count(buf)) return intern(buf);
  }
}

} // namespace onnxir
