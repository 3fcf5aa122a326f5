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

// Note [Source locations]
// A text model's nodes remember where they were written, so that a check
// run on the model as read (the operator schema check on load, the
// structural verifier) can say `model.onnxtxt:12:7:` before the node's
// path. The table lives beside the nodes, not in them: a node is three
// cache lines with no room to spare, and only text-read nodes have a place.
// An entry goes with its node (Node::destroy), so an address reused by a
// node a pass makes later never inherits a stale place. File names are
// saved once per file (consecutive nodes share the last one).
void Context::setSourceLoc(const Node *n, llvm::StringRef file, unsigned line, unsigned col) {
  llvm::StringRef saved;
  if (!sourceLocs_.empty() && lastSourceFile_ == file) saved = lastSourceFile_;
  else saved = lastSourceFile_ = save(file);
  sourceLocs_[n] = SourceLoc{saved, line, col};
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

// Note [Structural uniquing].
namespace {
inline uint64_t mixHash(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
inline uint64_t ptrBits(const void *p) { return reinterpret_cast<uintptr_t>(p); }
inline uint64_t strHash(llvm::StringRef s) { return s.empty() ? 0 : uint64_t(llvm::hash_value(s)); }
inline unsigned foldHash(uint64_t h) {
  h *= 0xff51afd7ed558ccdULL;
  return unsigned(h ^ (h >> 32));
}
} // namespace

bool Context::TypeKeyInfo::isEqual(const TypeKey &k, const Type *t) {
  if (t == getEmptyKey() || t == getTombstoneKey()) return false;
  if (t->hash_ != k.hash || t->kind_ != k.kind || t->hasElem_ != k.hasElem ||
      t->elem_ != k.elem || t->hasShape_ != k.hasShape || t->inner_ != k.inner)
    return false;
  if (k.hasShape) {
    if (t->dims_.size() != k.dims.size()) return false;
    for (size_t i = 0; i < k.dims.size(); ++i) {
      const Dim &a = k.dims[i], &b = t->dims_[i];
      if (a.kind != b.kind) return false;
      if (a.kind == Dim::Kind::Known && a.value != b.value) return false;
      if (a.kind == Dim::Kind::Symbolic && k.syms[i] != b.expr) return false;
      if (a.denotation != b.denotation) return false;
    }
  }
  return t->opaqueDomain_ == k.opaqueDomain && t->opaqueName_ == k.opaqueName &&
         t->denotation_ == k.denotation && t->extras_ == k.extras;
}

bool Context::ExprKeyInfo::isEqual(const ExprKey &k, const DimExpr *e) {
  if (e == getEmptyKey() || e == getTombstoneKey()) return false;
  return e->hash_ == k.hash && e->kind_ == k.kind && e->value_ == k.value &&
         llvm::ArrayRef<const DimExpr *>(e->ops_) == k.ops && e->name_ == k.name;
}

unsigned Context::hashExprKey(DimExpr::Kind kind, int64_t value,
                              llvm::ArrayRef<const DimExpr *> ops, llvm::StringRef name) {
  uint64_t h = mixHash(uint64_t(kind) + 1, uint64_t(value));
  for (const DimExpr *o : ops) h = mixHash(h, ptrBits(o));
  h = mixHash(h, ops.size());
  if (!name.empty()) h = mixHash(h, strHash(name));
  return foldHash(h);
}

llvm::StringRef Context::paramOf(const DimExpr *e) {
  if (!e->param_.data()) e->param_ = intern(e->dimParam());
  return e->param_;
}

const DimExpr *Context::symbolicExpr(const Dim &d) {
  const DimExpr *e = d.expr;
  if (e && e->ownsParam_ &&
      ((d.param.data() == e->param_.data() && d.param.size() == e->param_.size()) ||
       d.param == e->param_))
    return e;
  return dimFromParam(*this, d.param);
}

const Type *Context::getType(const TypeSpec &spec) {
  return getTypeImpl(spec.kind, spec.hasElem, spec.elem, spec.hasShape, spec.dims, spec.inner,
                     spec.opaqueDomain, spec.opaqueName, spec.denotation, spec.extras);
}

const Type *Context::getTypeImpl(Type::Kind kind, bool hasElem, int32_t elem, bool hasShape,
                                 llvm::ArrayRef<Dim> dims, const Type *inner,
                                 llvm::StringRef opaqueDomain, llvm::StringRef opaqueName,
                                 llvm::StringRef denotation, llvm::StringRef extras) {
  // Only what identifies a type is hashed and compared: the dims only with a
  // shape; of a dim, the value only when known, the expression only when
  // symbolic (the type keeps nothing else either).
  llvm::SmallVector<const DimExpr *, 8> syms;
  uint64_t h = mixHash(uint64_t(kind) + 1, (uint64_t(uint32_t(elem)) << 2) |
                                                (uint64_t(hasElem) << 1) | uint64_t(hasShape));
  if (hasShape) {
    syms.resize(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim &d = dims[i];
      uint64_t v = uint64_t(d.kind);
      if (d.kind == Dim::Kind::Known) v = mixHash(v, uint64_t(d.value));
      else if (d.kind == Dim::Kind::Symbolic) v = mixHash(v, ptrBits(syms[i] = symbolicExpr(d)));
      if (!d.denotation.empty()) v = mixHash(v, strHash(d.denotation));
      h = mixHash(h, v);
    }
    h = mixHash(h, dims.size());
  }
  h = mixHash(h, ptrBits(inner));
  if (!opaqueDomain.empty() || !opaqueName.empty() || !denotation.empty() || !extras.empty()) {
    h = mixHash(h, strHash(opaqueDomain));
    h = mixHash(h, strHash(opaqueName));
    h = mixHash(h, strHash(denotation));
    h = mixHash(h, strHash(extras));
  }
  TypeKey key{kind,  hasElem,      elem,       hasShape,   dims,          syms.data(),
              inner, opaqueDomain, opaqueName, denotation, extras,        foldHash(h)};
  auto it = types_.find_as(key);
  if (it != types_.end()) return *it;

  auto t = std::unique_ptr<Type>(new Type());
  t->kind_ = kind;
  t->hasElem_ = hasElem;
  t->elem_ = elem;
  t->hasShape_ = hasShape;
  t->dims_.assign(dims.begin(), dims.end());
  // Only what the key holds is kept, so equal keys mean equal types: a value
  // only for known dims, a symbol only for symbolic ones.
  for (size_t i = 0; i < t->dims_.size(); ++i) {
    Dim &d = t->dims_[i];
    if (d.kind != Dim::Kind::Known) d.value = 0;
    if (d.kind == Dim::Kind::Symbolic) {
      d.expr = hasShape ? syms[i] : symbolicExpr(d);
      d.param = paramOf(d.expr);
    } else {
      d.expr = nullptr;
      d.param = llvm::StringRef();
    }
    d.denotation = intern(d.denotation);
  }
  t->inner_ = inner;
  t->nesting_ = inner ? inner->nesting_ + 1 : 0;
  maxTypeNesting_ = std::max(maxTypeNesting_, t->nesting_);
  t->opaqueDomain_ = intern(opaqueDomain);
  t->opaqueName_ = intern(opaqueName);
  t->denotation_ = intern(denotation);
  t->extras_ = intern(extras);
  t->hash_ = key.hash;
  Type *raw = t.get();
  typeStorage_.push_back(std::move(t));
  types_.insert(raw);
  return raw;
}

const Type *Context::getTensorType(DataType elem,
                                   std::optional<llvm::ArrayRef<Dim>> dims) {
  return getTypeImpl(Type::Kind::Tensor, true, static_cast<int32_t>(elem), dims.has_value(),
                     dims ? *dims : llvm::ArrayRef<Dim>(), nullptr, {}, {}, {}, {});
}

//===--- Note [Recent tensor types] ---------------------------------------===//
// Shape inference asks for a tensor type per result, and most of the
// answers repeat: a transformer export has a few dozen distinct result types
// over a million nodes. Each question cost a lookup of the uniqued types
// (dims converted, hashed over their fields, probed and compared: a few
// hundred instructions), so the two forms the engine asks in (known int64
// dims: initializers and constants; dim expressions: the rules' results)
// first look in a small direct-mapped memo of recent answers, keyed by the
// element type and the dims' values or the expressions' addresses (up to
// rank kTypeMemoRank; a miss or a higher rank takes the lookup and stores its
// answer). An answer, once given, never changes: types are never removed
// from the context, and what a key maps to is fixed by then: dimOf(e) is a
// function of e (its dim_param is interned once; once the context's table
// of dim_params has an entry for it, which the first dimOf makes, the entry
// stays), so the type key it leads to is too. A hit also skips nothing that
// would change the context: the first answer already made the type and
// recorded e's dim_param.

Context::TypeMemoSlot &Context::typeMemoSlot(int32_t elem, uint16_t form, const uint64_t *words,
                                             size_t rank) {
  if (!typeMemo_) typeMemo_.reset(new TypeMemoSlot[kTypeMemoSlots]);
  // Multiply and fold per word: cheaper than mixHash, enough for a memo.
  uint64_t h = (uint64_t(uint32_t(elem)) << 20 | uint64_t(form) << 8 | rank) * 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < rank; ++i) {
    h = (h ^ words[i]) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  return typeMemo_[(h ^ (h >> 32)) & (kTypeMemoSlots - 1)];
}

bool Context::typeMemoHolds(const TypeMemoSlot &s, int32_t elem, uint16_t form,
                            const uint64_t *words, size_t rank) {
  return s.type && s.elem == elem && s.form == form && s.rank == rank &&
         std::equal(words, words + rank, s.words);
}

const Type *Context::getTensorType(DataType elem, llvm::ArrayRef<int64_t> dims) {
  // Note [Recent tensor types].
  uint64_t words[kTypeMemoRank];
  TypeMemoSlot *slot = nullptr;
  int32_t el = static_cast<int32_t>(elem);
  if (dims.size() <= kTypeMemoRank) {
    for (size_t i = 0; i < dims.size(); ++i) words[i] = uint64_t(dims[i]);
    slot = &typeMemoSlot(el, 1, words, dims.size());
    if (typeMemoHolds(*slot, el, 1, words, dims.size())) return slot->type;
  }
  llvm::SmallVector<Dim, 8> ds;
  ds.reserve(dims.size());
  for (int64_t d : dims) ds.push_back(Dim::known(d));
  const Type *t = getTensorType(elem, llvm::ArrayRef<Dim>(ds));
  if (slot) {
    slot->type = t;
    slot->elem = el;
    slot->form = 1;
    slot->rank = uint16_t(dims.size());
    std::copy(words, words + dims.size(), slot->words);
  }
  return t;
}

const Type *Context::getTensorTypeOf(DataType elem, llvm::ArrayRef<const DimExpr *> exprs) {
  // Note [Recent tensor types].
  uint64_t words[kTypeMemoRank];
  TypeMemoSlot *slot = nullptr;
  int32_t el = static_cast<int32_t>(elem);
  if (exprs.size() <= kTypeMemoRank) {
    for (size_t i = 0; i < exprs.size(); ++i) words[i] = ptrBits(exprs[i]);
    slot = &typeMemoSlot(el, 2, words, exprs.size());
    if (typeMemoHolds(*slot, el, 2, words, exprs.size())) return slot->type;
  }
  llvm::SmallVector<Dim, 8> ds;
  ds.reserve(exprs.size());
  for (const DimExpr *e : exprs) ds.push_back(dimOf(e));
  const Type *t = getTensorType(elem, llvm::ArrayRef<Dim>(ds));
  if (slot) {
    slot->type = t;
    slot->elem = el;
    slot->form = 2;
    slot->rank = uint16_t(exprs.size());
    std::copy(words, words + exprs.size(), slot->words);
  }
  return t;
}

const Type *Context::getSequenceType(const Type *elem) {
  return getTypeImpl(Type::Kind::Sequence, false, 0, false, {}, elem, {}, {}, {}, {});
}

const Type *Context::getOptionalType(const Type *elem) {
  return getTypeImpl(Type::Kind::Optional, false, 0, false, {}, elem, {}, {}, {}, {});
}

const Type *Context::getMapType(DataType key, const Type *value) {
  return getTypeImpl(Type::Kind::Map, true, static_cast<int32_t>(key), false, {}, value, {}, {},
                     {}, {});
}

Dim Context::symbolicDim(llvm::StringRef param) {
  Dim d;
  d.kind = Dim::Kind::Symbolic;
  d.expr = dimFromParam(*this, param);
  d.param = paramOf(d.expr);
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
