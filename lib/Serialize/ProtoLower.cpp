//===- ProtoLower.cpp - IR -> ONNX wire format ----------------------------===//
//
// The inverse of ProtoLift.cpp: every modeled field is written from the IR,
// merged with the entity's residual (Note [Residuals]). Names come from the
// Values, so renames and rewrites show up in the output. Models are written
// straight to bytes (Note [Direct lower]); lowerType, which builds one
// TypeProto, remains for the lifter's check of what a type can say.
//
//===----------------------------------------------------------------------===//
#include "ProtoCommon.h"
#include "WireReader.h"
#include "WireWriter.h"

#include "onnxir/IR/NodeLookahead.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <map>

namespace onnxir {
namespace detail {

namespace {

void lowerShape(const Type *t, proto::TensorShapeProto *sh) {
  for (const Dim &d : t->dims()) {
    auto *pd = sh->add_dim();
    if (d.kind == Dim::Kind::Known) pd->set_dim_value(d.value);
    else if (d.kind == Dim::Kind::Symbolic) pd->set_dim_param(d.param.str());
    if (!d.denotation.empty()) pd->set_denotation(d.denotation.str());
  }
}

} // namespace

void lowerType(const Type *t, proto::TypeProto *tp) {
  if (!t->extras().empty()) {
    tp->ParseFromArray(t->extras().data(), (int)t->extras().size());
    return;
  }
  switch (t->kind()) {
  case Type::Kind::Tensor: {
    auto *tt = tp->mutable_tensor_type();
    if (t->hasElemType()) tt->set_elem_type(t->elemTypeRaw());
    if (t->hasShape()) lowerShape(t, tt->mutable_shape());
    break;
  }
  case Type::Kind::SparseTensor: {
    auto *tt = tp->mutable_sparse_tensor_type();
    if (t->hasElemType()) tt->set_elem_type(t->elemTypeRaw());
    if (t->hasShape()) lowerShape(t, tt->mutable_shape());
    break;
  }
  case Type::Kind::Sequence: {
    auto *st = tp->mutable_sequence_type();
    if (t->elementType()) lowerType(t->elementType(), st->mutable_elem_type());
    break;
  }
  case Type::Kind::Optional: {
    auto *ot = tp->mutable_optional_type();
    if (t->elementType()) lowerType(t->elementType(), ot->mutable_elem_type());
    break;
  }
  case Type::Kind::Map: {
    auto *mt = tp->mutable_map_type();
    if (t->hasElemType()) mt->set_key_type(t->elemTypeRaw());
    if (t->elementType()) lowerType(t->elementType(), mt->mutable_value_type());
    break;
  }
  case Type::Kind::Opaque: {
    auto *ot = tp->mutable_opaque_type();
    if (!t->opaqueDomain().empty()) ot->set_domain(t->opaqueDomain().str());
    if (!t->opaqueName().empty()) ot->set_name(t->opaqueName().str());
    break;
  }
  case Type::Kind::None:
    break;
  }
  if (!t->denotation().empty()) tp->set_denotation(t->denotation().str());
}

//===----------------------------------------------------------------------===//
// Direct lower
//===----------------------------------------------------------------------===//

// Note [Direct lower]
// The IR is lowered straight to the wire format. The bytes are exactly what
// protobuf wrote for the ModelProto the lowerer used to build (the lossless
// corpus tests and SerializeTests' DirectLowerTest compare them): every message's known
// fields in field-number order, then its unknown fields.
//
// Sizes: an embedded message is preceded by its length, so lowering runs
// twice over the same code (Emit<SizeCounter>, then Emit<WireWriter>): the
// first pass records the length of every nested message in pre-order, the
// second consumes them in the same order while writing. Types are interned,
// so each distinct Type is encoded once and its bytes copied.
//
// Residuals (Note [Residuals]): the old lowerer merged an entity's residual
// into the message and then set the modeled fields. A residual is parsed
// once into its message type; its known fields, serialized, are cut into
// one chunk per field number, and its unknown fields serialized apart. Each
// field is then written as the merge left it: a singular field set by the
// model replaces the residual's, a repeated field is the residual's
// elements then the model's (one run for packed fields), a oneof member
// set by the model drops the residual's other members, and the residual's
// unknown fields close the message. A singular message field present in both
// (which no lift produces; only hand-written text extras can) is merged with
// protobuf, which treats a sink's clears and a TypeProto with extras as a
// plain merge would.
//
// Placed tensors (ModelSave.cpp's data plan) are written as the old sinks
// left them: moved ones without data fields and with three external_data
// entries; inlined external ones with raw_data and no external fields.

ByteSink::~ByteSink() = default;

namespace {

void putTag(std::string &s, uint32_t f, unsigned wt) { wireAppendVarint(s, (uint64_t)f << 3 | wt); }
void putStr(std::string &s, uint32_t f, llvm::StringRef v) {
  putTag(s, f, 2);
  wireAppendVarint(s, v.size());
  s.append(v.data(), v.size());
}
void putInt32(std::string &s, uint32_t f, int32_t v) {
  putTag(s, f, 0);
  wireAppendVarint(s, (uint64_t)(int64_t)v);
}

std::string encodeShape(const Type *t) {
  std::string sh;
  for (const Dim &d : t->dims()) {
    std::string pd;
    if (d.kind == Dim::Kind::Known) {
      putTag(pd, 1, 0);
      wireAppendVarint(pd, (uint64_t)d.value);
    } else if (d.kind == Dim::Kind::Symbolic) {
      putStr(pd, 2, d.param);
    }
    if (!d.denotation.empty()) putStr(pd, 3, d.denotation);
    putStr(sh, 1, pd);
  }
  return sh;
}

std::string encodeType(const Type *t, TypeBytesCache &cache) {
  if (!t->extras().empty()) {
    // Verbatim, as protobuf re-serializes it.
    proto::TypeProto tp;
    tp.ParseFromArray(t->extras().data(), (int)t->extras().size());
    return tp.SerializeAsString();
  }
  std::string body;
  uint32_t field = 0;
  switch (t->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor:
    field = t->kind() == Type::Kind::Tensor ? 1 : 8;
    if (t->hasElemType()) putInt32(body, 1, t->elemTypeRaw());
    if (t->hasShape()) putStr(body, 2, encodeShape(t));
    break;
  case Type::Kind::Sequence:
  case Type::Kind::Optional:
    field = t->kind() == Type::Kind::Sequence ? 4 : 9;
    if (t->elementType()) putStr(body, 1, encodeTypeCached(t->elementType(), cache));
    break;
  case Type::Kind::Map:
    field = 5;
    if (t->hasElemType()) putInt32(body, 1, t->elemTypeRaw());
    if (t->elementType()) putStr(body, 2, encodeTypeCached(t->elementType(), cache));
    break;
  case Type::Kind::Opaque:
    field = 7;
    if (!t->opaqueDomain().empty()) putStr(body, 1, t->opaqueDomain());
    if (!t->opaqueName().empty()) putStr(body, 2, t->opaqueName());
    break;
  case Type::Kind::None:
    break;
  }
  std::string out;
  // The value oneof around denotation (6): tensor 1, sequence 4, map 5 |
  // opaque 7, sparse tensor 8, optional 9.
  if (field && field < 6) putStr(out, field, body);
  if (!t->denotation().empty()) putStr(out, 6, t->denotation());
  if (field > 6) putStr(out, field, body);
  return out;
}

/// A residual cut by field (Note [Direct lower]).
struct Residual {
  std::string known, unknown;
  struct Chunk {
    uint32_t field;
    size_t begin, end;
  };
  std::vector<Chunk> chunks;

  llvm::StringRef get(uint32_t f) const {
    for (const Chunk &c : chunks)
      if (c.field == f) return llvm::StringRef(known).slice(c.begin, c.end);
    return {};
  }
};

/// The payload of one length-delimited field (tag and length skipped).
llvm::StringRef lenPayload(llvm::StringRef field) {
  WireReader r(field);
  WireField f;
  return r.next(f) && f.type == kLen ? f.bytes : llvm::StringRef();
}

/// Cuts the serialized known fields into one chunk per run of one field.
void cutChunks(Residual &r) {
  const auto *base = reinterpret_cast<const uint8_t *>(r.known.data());
  WireReader rd(r.known);
  WireField f;
  while (rd.next(f)) {
    size_t begin = size_t(f.begin - base), end = size_t(f.end - base);
    if (!r.chunks.empty() && r.chunks.back().field == f.number) r.chunks.back().end = end;
    else r.chunks.push_back({f.number, begin, end});
  }
}

template <class M> std::unique_ptr<Residual> makeResidual(const std::string &extras) {
  M res;
  res.MergeFromString(extras); // as the old lowerer's applyResidual (result unchecked)
  google::protobuf::UnknownFieldSet unk;
  unk.Swap(res.mutable_unknown_fields());
  auto r = std::make_unique<Residual>();
  res.SerializeToString(&r->known);
  unk.SerializeToString(&r->unknown);
  cutChunks(*r);
  return r;
}

/// Recorded lengths of nested messages, in pre-order.
struct Sizes {
  std::vector<uint32_t> lens;
  size_t next = 0;
};

} // namespace

const std::string &encodeTypeCached(const Type *t, TypeBytesCache &cache) {
  auto it = cache.find(t);
  if (it != cache.end()) return *it->second;
  auto bytes = std::make_unique<std::string>(encodeType(t, cache));
  return *(cache[t] = std::move(bytes));
}

struct ModelWireLowering::Impl {
  const Model &m;
  WireLowerOptions opts;
  Sizes sizes;
  TypeBytesCache types;
  llvm::DenseMap<const void *, std::unique_ptr<Residual>> residuals;
  std::map<std::pair<const void *, uint32_t>, std::string> merged;
  std::vector<std::string> training;
  bool sized = false;
  uint64_t total = 0;

  Impl(const Model &m, WireLowerOptions o) : m(m), opts(std::move(o)) {}
};

namespace {

template <class Out> class Emit {
  using Impl = ModelWireLowering::Impl;

public:
  Emit(Out &o, Impl &d, Sizes &sz) : o(o), d(d), sz(sz) {}

  //===--- primitives -----------------------------------------------------===//
  void str(uint32_t f, llvm::StringRef s) {
    o.tag(f, 2);
    o.varint(s.size());
    o.bytes(s.data(), s.size());
  }
  void i64(uint32_t f, int64_t v) {
    o.tag(f, 0);
    o.varint((uint64_t)v);
  }
  void i32(uint32_t f, int32_t v) {
    o.tag(f, 0);
    o.varint((uint64_t)(int64_t)v);
  }
  void flt(uint32_t f, float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    o.tag(f, 5);
    o.fixed32(b);
  }
  void raw(llvm::StringRef s) { o.bytes(s.data(), s.size()); }
  void R(const Residual *r, uint32_t f) {
    if (r) raw(r->get(f));
  }
  void unknown(const Residual *r) {
    if (r) raw(r->unknown);
  }
  /// An embedded message whose body `body()` writes.
  template <class B> void msg(uint32_t f, B &&body) {
    if constexpr (Out::kSizing) {
      size_t idx = sz.lens.size();
      sz.lens.push_back(0);
      uint64_t start = o.n;
      body();
      uint64_t len = o.n - start;
      // Over 4 GiB: the total is then over protobuf's limit and refused.
      sz.lens[idx] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
      o.tag(f, 2);
      o.varint(len);
    } else {
      uint64_t len = sz.lens[sz.next++];
      o.tag(f, 2);
      o.varint(len);
      body();
    }
  }
  /// A singular message field the residual may also hold (merged then).
  template <class M, class B> void sub(uint32_t f, const Residual *r, const void *key, B &&body) {
    llvm::StringRef rc = r ? r->get(f) : llvm::StringRef();
    if (rc.empty()) return msg(f, [&] { body(*this); });
    std::string &bytes = d.merged[{key, f}];
    if constexpr (Out::kSizing) {
      // Lower the model's part alone, then merge as protobuf did.
      Sizes local;
      SizeCounter c;
      Emit<SizeCounter> es(c, d, local);
      body(es);
      std::string mine;
      StringSink ss(mine);
      WireWriter w(ss);
      Emit<WireWriter> ew(w, d, local);
      body(ew);
      (void)w.finish();
      M msgv;
      msgv.ParseFromString(std::string(lenPayload(rc)));
      msgv.MergeFromString(mine);
      bytes = msgv.SerializeAsString();
    }
    str(f, bytes);
  }
  void entries(uint32_t f, const Metadata &md) {
    for (const auto &[k, v] : md) {
      o.tag(f, 2);
      o.varint(1 + wireVarintSize(k.size()) + k.size() + 1 + wireVarintSize(v.size()) + v.size());
      str(1, k);
      str(2, v);
    }
  }
  template <class M> const Residual *res(const std::string &extras) {
    if (extras.empty()) return nullptr;
    auto &slot = d.residuals[&extras];
    if (!slot) slot = makeResidual<M>(extras);
    return slot.get();
  }
  void type(uint32_t f, const Type *t) { str(f, encodeTypeCached(t, d.types)); }
  /// A type field the residual may also hold (see lowerType: a type with
  /// extras replaced the residual's, one without merged into it).
  template <class M> void typeField(uint32_t f, const Residual *r, const void *key, const Type *t) {
    if (!t->extras().empty() || !r || r->get(f).empty()) return type(f, t);
    sub<M>(f, r, key, [t](auto &e) { e.raw(encodeTypeCached(t, e.d.types)); });
  }

  // Packed repeated fields: the residual's elements, then the model's, in
  // one run.
  template <class T> void packedFixed(uint32_t f, const std::vector<T> *v, const Residual *r) {
    llvm::StringRef rc = r ? r->get(f) : llvm::StringRef();
    if (!v || v->empty()) return raw(rc);
    llvm::StringRef rp = rc.empty() ? llvm::StringRef() : lenPayload(rc);
    size_t n = v->size() * sizeof(T);
    o.tag(f, 2);
    o.varint(rp.size() + n);
    raw(rp);
    o.bigBytes(llvm::StringRef(reinterpret_cast<const char *>(v->data()), n));
  }
  template <class T, class Enc> void packedVarint(uint32_t f, const std::vector<T> *v,
                                                  const Residual *r, Enc enc) {
    llvm::StringRef rc = r ? r->get(f) : llvm::StringRef();
    if (!v || v->empty()) return raw(rc);
    llvm::StringRef rp = rc.empty() ? llvm::StringRef() : lenPayload(rc);
    uint64_t n = 0;
    for (T x : *v) n += wireVarintSize(enc(x));
    o.tag(f, 2);
    o.varint(rp.size() + n);
    raw(rp);
    if constexpr (Out::kSizing) o.n += n;
    else
      for (T x : *v) o.varint(enc(x));
  }

  //===--- messages -------------------------------------------------------===//
  const TensorPlacement *placement(const Tensor &t) {
    if (!d.opts.placements || d.opts.placements->empty()) return nullptr;
    auto it = d.opts.placements->find(&t);
    return it == d.opts.placements->end() ? nullptr : &it->second;
  }

  void tensor(const Tensor &t, const llvm::StringRef *name) {
    const Residual *r = res<proto::TensorProto>(t.extras);
    const TensorPlacement *pl = placement(t);
    bool moved = pl && pl->kind == TensorPlacement::Kind::Moved;
    bool inl = pl && pl->kind == TensorPlacement::Kind::Inline;
    bool typed = !pl && t.storage() == Tensor::Storage::Typed;
    Tensor::TypedField tf = typed ? t.typedField() : Tensor::TypedField::None;
    R(r, 1);
    for (int64_t x : t.dims()) i64(1, x);
    if (t.dataTypeRaw() != 0) i32(2, t.dataTypeRaw());
    else R(r, 2);
    if (t.segment) {
      auto seg = *t.segment;
      sub<proto::TensorProto::Segment>(3, r, &t, [seg](auto &e) {
        e.i64(1, seg.first);
        e.i64(2, seg.second);
      });
    } else {
      R(r, 3);
    }
    if (!moved) packedFixed(4, tf == Tensor::TypedField::Float ? &t.floatData.get() : nullptr, r);
    if (!moved)
      packedVarint(5, tf == Tensor::TypedField::Int32 ? &t.int32Data.get() : nullptr, r,
                   [](int32_t x) { return (uint64_t)(int64_t)x; });
    R(r, 6);
    if (tf == Tensor::TypedField::String)
      for (const auto &s : t.stringData) str(6, s);
    if (!moved)
      packedVarint(7, tf == Tensor::TypedField::Int64 ? &t.int64Data.get() : nullptr, r,
                   [](int64_t x) { return (uint64_t)x; });
    llvm::StringRef n = name ? *name : llvm::StringRef(t.name());
    if (!n.empty()) str(8, n);
    else R(r, 8);
    if (inl) {
      bigStr(9, pl->bytes);
    } else if (!pl && t.storage() == Tensor::Storage::Raw) {
      bigStr(9, t.rawData());
    } else if (!moved) {
      R(r, 9);
    }
    if (!moved) packedFixed(10, tf == Tensor::TypedField::Double ? &t.doubleData.get() : nullptr, r);
    if (!moved)
      packedVarint(11, tf == Tensor::TypedField::Uint64 ? &t.uint64Data.get() : nullptr, r,
                   [](uint64_t x) { return x; });
    if (!t.docString.empty()) str(12, t.docString);
    else R(r, 12);
    bool ext = t.storage() == Tensor::Storage::External;
    if (moved) {
      std::string off = std::to_string(pl->offset), len = std::to_string(pl->length);
      const std::pair<llvm::StringRef, llvm::StringRef> refs[] = {
          {"location", d.opts.location}, {"offset", off}, {"length", len}};
      for (const auto &[k, v] : refs) {
        o.tag(13, 2);
        o.varint(1 + wireVarintSize(k.size()) + k.size() + 1 + wireVarintSize(v.size()) + v.size());
        str(1, k);
        str(2, v);
      }
      i32(14, 1);
    } else if (!inl) {
      R(r, 13);
      if (!pl && ext) entries(13, t.external().entries);
      if (t.dataLocation) i32(14, *t.dataLocation);
      else if (!pl && ext) i32(14, 1);
      else R(r, 14);
    }
    R(r, 16);
    entries(16, t.metadata);
    unknown(r);
  }
  void bigStr(uint32_t f, llvm::StringRef s) {
    o.tag(f, 2);
    o.varint(s.size());
    o.bigBytes(s);
  }

  void sparse(const SparseTensor &s, const llvm::StringRef *name) {
    const Residual *r = res<proto::SparseTensorProto>(s.extras);
    if (s.hasValues)
      sub<proto::TensorProto>(1, r, &s, [&s, name](auto &e) { e.tensor(s.values, name); });
    else R(r, 1);
    if (s.hasIndices)
      sub<proto::TensorProto>(2, r, &s, [&s](auto &e) { e.tensor(s.indices, nullptr); });
    else R(r, 2);
    R(r, 3);
    for (int64_t x : s.dims) i64(3, x);
    unknown(r);
  }

  void attribute(const Attribute &a) {
    const Residual *r = res<proto::AttributeProto>(a.extras);
    AttrKind k = a.kind();
    if (!a.name().empty()) str(1, a.name());
    else R(r, 1);
    // A zero value has its field too, unless the file omitted it or this is
    // a reference (Note [Scalar attribute presence]).
    bool present = !a.valueOmitted && !a.isReference();
    if (k == AttrKind::Float && (present || a.f != 0 || std::signbit(a.f) || std::isnan(a.f)))
      flt(2, a.f);
    else R(r, 2);
    if (k == AttrKind::Int && (present || a.i != 0)) i64(3, a.i);
    else R(r, 3);
    if (k == AttrKind::String && (present || !a.s.empty())) str(4, a.s);
    else R(r, 4);
    if (k == AttrKind::Tensor && !a.tensors.empty()) {
      const Tensor *t = a.tensors[0].get();
      sub<proto::TensorProto>(5, r, &a, [t](auto &e) { e.tensor(*t, nullptr); });
    } else {
      R(r, 5);
    }
    if (k == AttrKind::Graph && a.numGraphs()) {
      const Graph *g = a.graph(0);
      sub<proto::GraphProto>(6, r, &a, [g](auto &e) { e.graph(*g); });
    } else {
      R(r, 6);
    }
    R(r, 7);
    if (k == AttrKind::Floats)
      for (float x : a.floats) flt(7, x);
    R(r, 8);
    if (k == AttrKind::Ints)
      for (int64_t x : a.ints) i64(8, x);
    R(r, 9);
    if (k == AttrKind::Strings)
      for (const auto &s : a.strings) str(9, s);
    R(r, 10);
    if (k == AttrKind::Tensors)
      for (const auto &t : a.tensors) msg(10, [&] { tensor(*t, nullptr); });
    R(r, 11);
    if (k == AttrKind::Graphs)
      for (unsigned i = 0; i < a.numGraphs(); ++i) msg(11, [&] { graph(*a.graph(i)); });
    if (!a.docString.empty()) str(13, a.docString);
    else R(r, 13);
    if (k == AttrKind::TypeProto && !a.types.empty())
      typeField<proto::TypeProto>(14, r, &a, a.types[0]);
    else R(r, 14);
    R(r, 15);
    if (k == AttrKind::TypeProtos)
      for (const Type *t : a.types) type(15, t);
    if (a.hasKindField) i32(20, (int32_t)k);
    else R(r, 20);
    if (!a.refAttrName.empty()) str(21, a.refAttrName);
    else R(r, 21);
    if (k == AttrKind::SparseTensor && !a.sparseTensors.empty()) {
      const SparseTensor *s = a.sparseTensors[0].get();
      sub<proto::SparseTensorProto>(22, r, &a.sparseTensors, [s](auto &e) { e.sparse(*s, nullptr); });
    } else {
      R(r, 22);
    }
    R(r, 23);
    if (k == AttrKind::SparseTensors)
      for (const auto &s : a.sparseTensors) msg(23, [&] { sparse(*s, nullptr); });
    unknown(r);
  }

  void deviceConfiguration(const NodeDeviceConfiguration &c) {
    const Residual *r = res<proto::NodeDeviceConfigurationProto>(c.extras);
    if (c.configurationId) str(1, *c.configurationId);
    else R(r, 1);
    R(r, 2);
    for (const auto &s : c.shardingSpec) msg(2, [&] { shardingSpec(s); });
    if (c.pipelineStage) i32(3, *c.pipelineStage);
    else R(r, 3);
    unknown(r);
  }

  void shardingSpec(const ShardingSpec &s) {
    const Residual *r = res<proto::ShardingSpecProto>(s.extras);
    if (s.tensorName) str(1, *s.tensorName);
    else R(r, 1);
    R(r, 2);
    for (int64_t x : s.device) i64(2, x);
    R(r, 3);
    static const std::string kNone;
    for (size_t i = 0; i < s.indexToDeviceGroupMap.size(); ++i)
      msg(3, [&] {
        const Residual *re = res<proto::IntIntListEntryProto>(
            i < s.indexToDeviceGroupMapExtras.size() ? s.indexToDeviceGroupMapExtras[i] : kNone);
        const auto &[key, vals] = s.indexToDeviceGroupMap[i];
        if (key) i64(1, *key);
        else R(re, 1);
        R(re, 2);
        for (int64_t x : vals) i64(2, x);
        unknown(re);
      });
    R(r, 4);
    for (const auto &dim : s.shardedDim)
      msg(4, [&] {
        const Residual *rd = res<proto::ShardedDimProto>(dim.extras);
        if (dim.axis) i64(1, *dim.axis);
        else R(rd, 1);
        R(rd, 2);
        for (const auto &x : dim.simpleSharding)
          msg(2, [&] {
            const Residual *rx = res<proto::SimpleShardedDimProto>(x.extras);
            using K = ShardingSpec::SimpleShardedDim::Kind;
            if (x.kind == K::Value) {
              i64(1, x.dimValue); // a oneof: the residual's dim_param is gone
            } else if (x.kind == K::Param) {
              str(2, x.dimParam);
            } else {
              R(rx, 1);
              R(rx, 2);
            }
            if (x.numShards) i64(3, *x.numShards);
            else R(rx, 3);
            unknown(rx);
          });
        unknown(rd);
      });
    unknown(r);
  }

  void node(const Node &n) {
    const Residual *r = res<proto::NodeProto>(n.extras);
    R(r, 1);
    for (unsigned i = 0; i < n.numOperands(); ++i) {
      Value *v = n.operand(i);
      str(1, v ? v->name() : llvm::StringRef());
    }
    R(r, 2);
    for (unsigned i = 0; i < n.numResults(); ++i) {
      Value *v = n.result(i);
      str(2, v ? v->name() : llvm::StringRef());
    }
    if (!n.name().empty()) str(3, n.name());
    else R(r, 3);
    if (!n.opType().empty()) str(4, n.opType());
    else R(r, 4);
    R(r, 5);
    for (unsigned i = 0; i < n.numAttributes(); ++i) msg(5, [&] { attribute(n.attribute(i)); });
    if (!n.docString.empty()) str(6, n.docString);
    else R(r, 6);
    if (!n.domain().empty()) str(7, n.domain());
    else R(r, 7);
    if (!n.overload().empty()) str(8, n.overload());
    else R(r, 8);
    R(r, 9);
    entries(9, n.metadata);
    R(r, 10);
    for (const auto &c : n.deviceConfigurations) msg(10, [&] { deviceConfiguration(c); });
    unknown(r);
  }

  // Note [Save lookahead]
  // Writing a node reads the values it uses and defines, and their names'
  // characters in the context's string table: in a graph whose list order
  // is not its memory order (a shuffled file after -topo) or whose values
  // are used far from where they were made, each is a cache miss, paid one
  // after the other. So both passes over a node list prefetch, 16 nodes
  // ahead, the values and the attribute array (Node::prefetchValues) and,
  // 8 nodes ahead, once those have arrived, the names' characters and
  // the attributes (Node::prefetchNames), with a NodeLookahead (Note [Node
  // lookahead]) that asks for the nodes' lines and operand slots before
  // (Note [Operand slots ahead]). Hints only: the bytes written are the same. The sizing
  // pass reads a name's length, which the value holds, never its
  // characters: it asks only for the attributes 8 nodes ahead. The
  // characters are lines it never reads, and the walk is bound by how many
  // loads can be in flight (Note [Operand slots ahead] in NodeLookahead.h):
  // each needless one delays a needed one.
  void nodes(uint32_t f, const Graph &g, const Residual *r) {
    R(r, f);
    auto values = [](const Node &n) { n.prefetchValues(); };
    if constexpr (Out::kSizing) {
      NodeLookahead ahead(
          g, 16, 8, values,
          [](const Node &n) {
            for (unsigned i = 0; i < n.numAttributes(); ++i) __builtin_prefetch(&n.attribute(i));
          },
          /*slots=*/true);
      for (const Node &n : g.nodes()) {
        ahead.step();
        msg(f, [&] { node(n); });
      }
    } else {
      NodeLookahead ahead(
          g, 16, 8, values, [](const Node &n) { n.prefetchNames(); }, /*slots=*/true);
      for (const Node &n : g.nodes()) {
        ahead.step();
        msg(f, [&] { node(n); });
      }
    }
  }

  void valueInfoRecords(uint32_t f, const Graph &g, const Residual *gr) {
    R(gr, f);
    for (const ValueInfoRecord &rec : g.valueInfo()) {
      if (rec.erased) continue;
      msg(f, [&] {
        const Residual *r = res<proto::ValueInfoProto>(rec.extras);
        if (rec.value) str(1, rec.value->name());
        else if (!rec.name.empty()) str(1, rec.name);
        else R(r, 1);
        const Type *t = nullptr;
        if (rec.hasType) t = rec.value && rec.value->type() ? rec.value->type() : rec.type;
        if (t) typeField<proto::TypeProto>(2, r, &rec, t);
        else R(r, 2);
        if (!rec.docString.empty()) str(3, rec.docString);
        else R(r, 3);
        R(r, 4);
        entries(4, rec.metadata);
        unknown(r);
      });
    }
  }

  void opset(uint32_t f, const OpsetImport &op) {
    msg(f, [&] {
      const Residual *r = res<proto::OperatorSetIdProto>(op.extras);
      if (!op.domain.empty()) str(1, op.domain);
      else R(r, 1);
      if (op.version != 0) i64(2, op.version);
      else R(r, 2);
      unknown(r);
    });
  }

  void graph(const Graph &g) {
    const Residual *r = res<proto::GraphProto>(g.extras);
    nodes(1, g, r);
    if (!g.name.empty()) str(2, g.name);
    else R(r, 2);
    R(r, 5);
    for (Value *v : g.initializers()) {
      llvm::StringRef name = v->name();
      msg(5, [&] { tensor(*v->initializer(), &name); });
    }
    if (!g.docString.empty()) str(10, g.docString);
    else R(r, 10);
    R(r, 11);
    for (Value *v : g.inputs())
      msg(11, [&] {
        const Residual *rv = res<proto::ValueInfoProto>(v->extras);
        str(1, v->name());
        if (v->type()) typeField<proto::TypeProto>(2, rv, v, v->type());
        else R(rv, 2);
        if (!v->docString.empty()) str(3, v->docString);
        else R(rv, 3);
        R(rv, 4);
        entries(4, v->metadata);
        unknown(rv);
      });
    R(r, 12);
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      msg(12, [&] {
        const OutputInfo &info = g.outputInfo(i);
        Value *v = g.output(i);
        const Residual *rv = res<proto::ValueInfoProto>(info.extras);
        str(1, v ? v->name() : llvm::StringRef());
        if (info.hasType && info.type) typeField<proto::TypeProto>(2, rv, &info, info.type);
        else R(rv, 2);
        if (!info.docString.empty()) str(3, info.docString);
        else R(rv, 3);
        R(rv, 4);
        entries(4, info.metadata);
        unknown(rv);
      });
    valueInfoRecords(13, g, r);
    R(r, 14);
    for (const auto &q : g.quantizationAnnotations)
      msg(14, [&] {
        const Residual *rq = res<proto::TensorAnnotation>(q.extras);
        if (q.tensorName) str(1, *q.tensorName);
        else R(rq, 1);
        R(rq, 2);
        entries(2, q.quantParameterTensorNames);
        unknown(rq);
      });
    R(r, 15);
    for (Value *v : g.sparseInitializers()) {
      llvm::StringRef name = v->name();
      msg(15, [&] { sparse(*v->sparseInitializer(), &name); });
    }
    R(r, 16);
    entries(16, g.metadata);
    unknown(r);
  }

  void function(const Function &f) {
    const Residual *r = res<proto::FunctionProto>(f.extras);
    const Graph &g = f.body();
    if (!f.name.empty()) str(1, f.name);
    else R(r, 1);
    R(r, 4);
    for (Value *v : g.inputs()) str(4, v->name());
    R(r, 5);
    for (unsigned i = 0; i < g.numOutputs(); ++i) {
      Value *v = g.output(i);
      str(5, v ? v->name() : llvm::StringRef());
    }
    R(r, 6);
    for (const auto &n : f.attributeNames) str(6, n);
    nodes(7, g, r);
    if (!f.docString.empty()) str(8, f.docString);
    else R(r, 8);
    R(r, 9);
    for (const auto &op : f.opsetImports) opset(9, op);
    if (!f.domain.empty()) str(10, f.domain);
    else R(r, 10);
    R(r, 11);
    for (const auto &a : f.attributeDefaults) msg(11, [&] { attribute(*a); });
    valueInfoRecords(12, g, r);
    if (!f.overload.empty()) str(13, f.overload);
    else R(r, 13);
    R(r, 14);
    entries(14, f.metadata);
    unknown(r);
  }

  void model(const Model &m) {
    const Residual *r = res<proto::ModelProto>(m.extras);
    if (m.irVersion) i64(1, *m.irVersion);
    else R(r, 1);
    if (m.producerName) str(2, *m.producerName);
    else R(r, 2);
    if (m.producerVersion) str(3, *m.producerVersion);
    else R(r, 3);
    if (m.domain) str(4, *m.domain);
    else R(r, 4);
    if (m.modelVersion) i64(5, *m.modelVersion);
    else R(r, 5);
    if (m.docString) str(6, *m.docString);
    else R(r, 6);
    if (m.hasGraph) {
      const Graph *g = &m.graph();
      sub<proto::GraphProto>(7, r, &m, [g](auto &e) { e.graph(*g); });
    } else {
      R(r, 7);
    }
    R(r, 8);
    for (const auto &op : m.opsetImports) opset(8, op);
    R(r, 14);
    entries(14, m.metadata);
    R(r, 20);
    if constexpr (Out::kSizing) {
      d.training.clear();
      for (const auto &ti : m.trainingInfo) {
        proto::TrainingInfoProto tp;
        tp.ParseFromString(ti);
        d.training.push_back(tp.SerializeAsString());
      }
    }
    for (const auto &ti : d.training) str(20, ti);
    R(r, 25);
    for (const auto &f : m.functions()) msg(25, [&] { function(*f); });
    R(r, 26);
    for (const auto &c : m.configurations)
      msg(26, [&] {
        const Residual *rc = res<proto::DeviceConfigurationProto>(c.extras);
        if (c.name) str(1, *c.name);
        else R(rc, 1);
        if (c.numDevices) i32(2, *c.numDevices);
        else R(rc, 2);
        R(rc, 3);
        for (const auto &dv : c.device) str(3, dv);
        unknown(rc);
      });
    unknown(r);
  }

  Out &o;
  Impl &d;
  Sizes &sz;
};

} // namespace

ModelWireLowering::ModelWireLowering(const Model &m, WireLowerOptions opts)
    : impl_(std::make_unique<Impl>(m, std::move(opts))) {}
ModelWireLowering::~ModelWireLowering() = default;

uint64_t ModelWireLowering::size() {
  Impl &d = *impl_;
  if (d.sized) return d.total;
  SizeCounter c;
  Emit<SizeCounter> e(c, d, d.sizes);
  e.model(d.m);
  d.sized = true;
  d.total = c.n;
  return d.total;
}

absl::Status ModelWireLowering::write(ByteSink &out) {
  Impl &d = *impl_;
  size();
  d.sizes.next = 0;
  WireWriter w(out);
  Emit<WireWriter> e(w, d, d.sizes);
  e.model(d.m);
  assert(d.sizes.next == d.sizes.lens.size() && "size and write passes disagree");
  return w.finish();
}

} // namespace detail
} // namespace onnxir
