//===- Context.cpp - Interning, type uniquing, the name registry ----------===//
#include "onnxir/IR/Context.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace onnxir {

Context::Context() = default;
Context::~Context() = default;

llvm::StringRef Context::intern(llvm::StringRef s) {
  auto [it, inserted] = strings_.insert(s);
  if (inserted) {
    // Point the key at our own copy (NUL-terminated, like StringSaver).
    char *p = alloc_.Allocate<char>(s.size() + 1);
    if (!s.empty()) memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    const_cast<llvm::StringRef &>(*it) = llvm::StringRef(p, s.size());
  }
  return *it;
}

llvm::StringRef Context::save(llvm::StringRef s) {
  if (s.empty()) return llvm::StringRef();
  char *p = alloc_.Allocate<char>(s.size() + 1);
  memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return llvm::StringRef(p, s.size());
}

llvm::StringRef Context::findInterned(llvm::StringRef s) const {
  auto it = strings_.find(s);
  return it == strings_.end() ? llvm::StringRef() : *it;
}

namespace {
// A canonical key. Every field is self-delimiting (fixed-width tags, numbers
// ended by ';', strings length-prefixed), so the key of a spec can be read
// back field by field: distinct specs never produce the same key.
void appendInt(std::string &k, int64_t v) {
  k += std::to_string(v);
  k += ';';
}
void appendStr(std::string &k, llvm::StringRef s) {
  appendInt(k, (int64_t)s.size());
  k.append(s.data(), s.size());
}
} // namespace

const Type *Context::getType(const TypeSpec &spec) {
  std::string key;
  key.reserve(32);
  key += char('0' + (int)spec.kind);
  key += spec.hasElem ? 'E' : 'e';
  appendInt(key, spec.elem);
  key += spec.hasShape ? 'S' : 's';
  if (spec.hasShape) {
    appendInt(key, (int64_t)spec.dims.size());
    for (const Dim &d : spec.dims) {
      key += char('0' + (int)d.kind);
      if (d.kind == Dim::Kind::Known) appendInt(key, d.value);
      if (d.kind == Dim::Kind::Symbolic) appendStr(key, d.param);
      appendStr(key, d.denotation);
    }
  }
  key += 'I';
  // Inner types are uniqued: their address identifies them.
  appendInt(key, (int64_t)reinterpret_cast<uintptr_t>(spec.inner));
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
  // Only what the key holds is kept, so equal keys mean equal types: a value
  // only for known dims, a symbol only for symbolic ones.
  for (Dim &d : t->dims_) {
    if (d.kind != Dim::Kind::Known) d.value = 0;
    d.param = d.kind == Dim::Kind::Symbolic ? intern(d.param) : llvm::StringRef();
    d.expr = d.kind == Dim::Kind::Symbolic ? dimFromParam(*this, d.param) : nullptr;
    d.denotation = intern(d.denotation);
  }
  t->inner_ = spec.inner;
  t->nesting_ = spec.inner ? spec.inner->nesting_ + 1 : 0;
  maxTypeNesting_ = std::max(maxTypeNesting_, t->nesting_);
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
  d.expr = dimFromParam(*this, d.param);
  return d;
}

unsigned Context::nameDefinitions(llvm::StringRef name) const {
  llvm::StringRef k = findInterned(name);
  return k.data() ? nameDefinitionsInterned(k) : 0;
}

unsigned Context::nameDefinitionsInterned(llvm::StringRef interned) const {
  auto it = nameCount_.find(interned.data());
  return it == nameCount_.end() ? 0 : it->second;
}

void Context::reserveNames(size_t n) {
  strings_.reserve(strings_.size() + n);
  nameCount_.reserve(nameCount_.size() + n);
}

void Context::registerName(llvm::StringRef interned) { ++nameCount_[interned.data()]; }

void Context::unregisterName(llvm::StringRef interned) {
  auto it = nameCount_.find(interned.data());
  assert(it != nameCount_.end() && it->second > 0 && "name not registered");
  if (--it->second == 0) nameCount_.erase(it);
}

llvm::StringRef Context::freshName(llvm::StringRef base) {
  if (base.empty()) base = "v";
  if (!nameDefinitions(base)) return intern(base);
  unsigned &next = nextSuffix_[base];
  llvm::SmallString<64> buf;
  for (;;) {
    ++next;
    buf.clear();
    llvm::raw_svector_ostream(buf) << base << '_' << next;
    if (!nameDefinitions(buf)) return intern(buf);
  }
}

} // namespace onnxir
