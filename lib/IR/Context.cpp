//===- Context.cpp - Interning, type uniquing, the name registry ----------===//
#include "onnxir/IR/Context.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

namespace onnxir {

Context::Context() = default;
Context::~Context() = default;

// Interned strings (Note [Name records]): each is a NameRecord followed by
// the characters and a NUL, carved from alloc_; the table holds the
// characters' address, the size and a 32-bit hash of each, probed linearly.

uint32_t Context::hashOf(llvm::StringRef s) {
  uint64_t h = llvm::hash_value(s);
  return uint32_t(h ^ (h >> 32));
}

void Context::growStrings(size_t minSlots) {
  size_t n = slots_.empty() ? 64 : slots_.size();
  while (n < minSlots) n *= 2;
  if (n == slots_.size()) return;
  SlotTable old(n);
  old.swap(slots_);
  const size_t mask = n - 1;
  for (const Slot &sl : old) {
    if (!sl.data) continue;
    size_t i = sl.hash & mask;
    while (slots_[i].data) i = (i + 1) & mask;
    slots_[i] = sl;
  }
}

void Context::reserveNames(size_t n) { growStrings(2 * (numStrings_ + n)); }

llvm::StringRef Context::intern(llvm::StringRef s) { return intern(s, hashOf(s)); }

llvm::StringRef Context::intern(llvm::StringRef s, uint32_t h) {
  assert(h == hashOf(s) && "intern: the hash is not nameHash(s)");
  if (2 * (numStrings_ + 1) > slots_.size()) growStrings(2 * (numStrings_ + 1));
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot &sl = slots_[i];
    if (!sl.data) {
      void *mem = alloc_.Allocate(sizeof(NameRecord) + s.size() + 1, alignof(NameRecord));
      new (mem) NameRecord();
      char *p = static_cast<char *>(mem) + sizeof(NameRecord);
      if (!s.empty()) memcpy(p, s.data(), s.size());
      p[s.size()] = '\0';
      sl.hash = h;
      sl.size = s.size();
      sl.data = p;
      ++numStrings_;
      return llvm::StringRef(p, s.size());
    }
    if (sl.hash == h && sl.size == s.size() && (s.empty() || !memcmp(sl.data, s.data(), s.size())))
      return llvm::StringRef(sl.data, sl.size);
  }
}

// Note [IR storage].
void *Context::allocateObject(size_t size) {
  const size_t rounded = (size + kObjectGrain - 1) & ~(kObjectGrain - 1);
  if (rounded > kPooledObjectMax) return ::operator new(size);
  FreeObject *&head = freeObjects_[rounded / kObjectGrain];
  if (FreeObject *f = head) {
    head = f->next;
    return f;
  }
  return alloc_.Allocate(rounded, kObjectGrain);
}

void Context::deallocateObject(void *p, size_t size) {
  const size_t rounded = (size + kObjectGrain - 1) & ~(kObjectGrain - 1);
  if (rounded > kPooledObjectMax) {
    ::operator delete(p);
    return;
  }
#if LLVM_ADDRESS_SANITIZER_BUILD
  __asan_poison_memory_region(p, rounded); // never reused: a use after free stays visible
#else
  FreeObject *&head = freeObjects_[rounded / kObjectGrain];
  head = new (p) FreeObject{head};
#endif
}

// Note [Line-aligned objects].
void *Context::allocateLineObject(size_t size) {
  assert(size % kCacheLine == 0 && "a line object is whole lines");
  if (size > kPooledLineMax) return ::operator new(size, std::align_val_t(kCacheLine));
  FreeObject *&head = freeLines_[size / kCacheLine];
  if (FreeObject *f = head) {
    head = f->next;
    return f;
  }
  return lineAlloc_.Allocate(size, llvm::Align(kCacheLine));
}

void Context::deallocateLineObject(void *p, size_t size) {
  if (size > kPooledLineMax) {
    ::operator delete(p, std::align_val_t(kCacheLine));
    return;
  }
#if LLVM_ADDRESS_SANITIZER_BUILD
  __asan_poison_memory_region(p, size); // never reused, as in deallocateObject
#else
  FreeObject *&head = freeLines_[size / kCacheLine];
  head = new (p) FreeObject{head};
#endif
}

llvm::StringRef Context::save(llvm::StringRef s) {
  if (s.empty()) return llvm::StringRef();
  char *p = alloc_.Allocate<char>(s.size() + 1);
  memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return llvm::StringRef(p, s.size());
}

llvm::StringRef Context::findInterned(llvm::StringRef s) const {
  return findInterned(s, hashOf(s));
}

void Context::prefetchInterned(llvm::StringRef s, uint32_t h) const {
  if (slots_.empty()) return;
  const size_t mask = slots_.size() - 1;
  // The first slot of the probe sequence with this hash and size is almost
  // always the string: its record and characters are loaded, not compared.
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot &sl = slots_[i];
    if (!sl.data) return;
    if (sl.hash == h && sl.size == s.size()) {
      __builtin_prefetch(sl.data - sizeof(NameRecord));
      return;
    }
  }
}

llvm::StringRef Context::findInterned(llvm::StringRef s, uint32_t h) const {
  assert(h == hashOf(s) && "findInterned: the hash is not nameHash(s)");
  if (slots_.empty()) return llvm::StringRef();
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot &sl = slots_[i];
    if (!sl.data) return llvm::StringRef();
    if (sl.hash == h && sl.size == s.size() && (s.empty() || !memcmp(sl.data, s.data(), s.size())))
      return llvm::StringRef(sl.data, sl.size);
  }
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
