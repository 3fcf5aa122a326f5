//===- ProtoLift.cpp - ModelProto -> IR -----------------------------------===//
//
// Lift is linear: per graph, every definition (inputs, initializers, sparse
// initializers, node results) is declared in the graph's scope first; then
// every use is resolved through the scope chain, innermost first, and nested
// graphs are lifted with their enclosing scopes complete. So node lists need
// not be sorted, and nested nodes hold outer Values directly.
// See Note [Residuals] in ProtoCommon.h for what `extras` carries.
//
//===----------------------------------------------------------------------===//
#include "FileIO.h"
#include "ProtoCommon.h"
#include "WireReader.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "google/protobuf/io/coded_stream.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <sys/stat.h>

#include <iterator>
#include <unordered_map>

namespace onnxir {
namespace detail {

namespace {

#define KEEP_EMPTY(src, res, f)                                                                    \
  if ((src).has_##f() && (src).f().empty()) (res).set_##f("")
#define KEEP_ZERO(src, res, f)                                                                     \
  if ((src).has_##f() && (src).f() == 0) (res).set_##f((src).f())

Metadata liftMetadata(const google::protobuf::RepeatedPtrField<proto::StringStringEntryProto> &in) {
  Metadata m;
  m.reserve(in.size());
  for (const auto &e : in) m.emplace_back(e.key(), e.value());
  return m;
}

bool metadataLossless(const google::protobuf::RepeatedPtrField<proto::StringStringEntryProto> &in) {
  for (const auto &e : in)
    if (!e.has_key() || !e.has_value() || !e.unknown_fields().empty()) return false;
  return true;
}

class Lifter {
public:
  Lifter(Model &m, LoadSession &session, std::string source, const FileViews *views)
      : m_(m), ctx_(m.getContext()), session_(session), source_(std::move(source)),
        views_(views) {}

  /// `wireGraph`: the serialized main graph, lifted the wire way (then
  /// `mp` holds every other field).
  absl::Status liftModel(proto::ModelProto &mp, const llvm::StringRef *wireGraph = nullptr);
  absl::Status liftModelWire(llvm::StringRef bytes, std::shared_ptr<const Buffer> file);

private:
  absl::Status err(const std::string &where, const std::string &what) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", where, ": ", what));
  }

  const Type *liftType(const proto::TypeProto &tp);
  void liftTypeSpec(const proto::TypeProto &tp, TypeSpec &spec);
  absl::StatusOr<Tensor> liftTensor(proto::TensorProto &tp, const std::string &where,
                                    const RawView *view = nullptr);
  absl::StatusOr<SparseTensor> liftSparse(proto::SparseTensorProto &sp, const std::string &where);
  absl::Status liftGraph(proto::GraphProto &gp, Graph &g);
  absl::Status liftGraphBody(google::protobuf::RepeatedPtrField<proto::NodeProto> &nodes, Graph &g);
  absl::Status checkGraphDepth(Graph &g);
  absl::Status liftGraphHead(proto::GraphProto &gp, Graph &g);
  absl::Status liftGraphTail(proto::GraphProto &gp, Graph &g);
  absl::StatusOr<Node *> declareNode(const proto::NodeProto &np, Graph &g);
  absl::Status resolveNode(proto::NodeProto &np, Node *n, Graph &g);
  absl::Status addNodeResult(Graph &g, Node *n, llvm::StringRef out);
  absl::Status addOperand(Graph &g, Node *n, llvm::StringRef in);
  absl::Status undefinedInput(const Node *n, llvm::StringRef in) {
    return err(nodePath(n), absl::StrCat("input \"", in.str(), "\" is undefined"));
  }
  // The wire lift (Note [Wire lift]); `depth` is the message nesting of the
  // piece below the ModelProto.
  absl::Status liftGraphWire(llvm::StringRef bytes, Graph &g, unsigned depth);
  absl::Status liftNodesWire(llvm::ArrayRef<llvm::StringRef> nodes, Graph &g, unsigned depth);
  absl::StatusOr<bool> declareNodeWire(llvm::StringRef bytes, Graph &g, Node *&n);
  absl::Status liftAttributeWire(llvm::StringRef bytes, Node &n, unsigned depth);
  absl::Status liftAttribute(proto::AttributeProto &ap, Node &n, Attribute &a);
  absl::StatusOr<std::unique_ptr<Attribute>> liftDetachedAttribute(proto::AttributeProto &ap,
                                                                   const std::string &where);
  void liftNodeProps(const proto::NodeProto &np, Node &n);
  void liftValueInfos(google::protobuf::RepeatedPtrField<proto::ValueInfoProto> &vis, Graph &g);
  void liftValueInfoInto(const proto::ValueInfoProto &vi, Value *v);
  absl::Status liftFunction(proto::FunctionProto &fp, Function &f);

  Model &m_;
  Context &ctx_;
  LoadSession &session_;
  std::string source_;
  std::unordered_map<std::string, const Type *> typeCache_;
  const FileViews *views_;
  unsigned graphDepth_ = 0; // subgraph nesting of the graph being lifted
  unsigned typeDepth_ = 0;  // type nesting of the type being lifted
  bool typeTooDeep_ = false; // a type nested past kMaxTypeNesting (Limits.h)
  llvm::SmallVector<Value *, 8> operands_; // scratch of resolveNode
  // Residuals of the graphs between liftGraphHead and liftGraphTail.
  std::vector<proto::GraphProto> graphRes_;
  // The wire lift's views of main-graph raw data (views_ points here).
  FileViews wireViews_;
  std::shared_ptr<const Buffer> wireFile_;
};

//===--- Types ------------------------------------------------------------===//

void Lifter::liftTypeSpec(const proto::TypeProto &tp, TypeSpec &spec) {
  spec.denotation = tp.denotation();
  auto liftShape = [&](bool has, const proto::TensorShapeProto &sh) {
    spec.hasShape = has;
    if (!has) return;
    spec.dims.reserve(sh.dim_size());
    for (const auto &d : sh.dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        dim.kind = Dim::Kind::Known;
        dim.value = d.dim_value();
      } else if (d.has_dim_param()) {
        dim.kind = Dim::Kind::Symbolic;
        dim.param = d.dim_param(); // interned by Context::getType
      }
      dim.denotation = d.denotation();
      spec.dims.push_back(dim);
    }
  };
  switch (tp.value_case()) {
  case proto::TypeProto::kTensorType:
    spec.kind = Type::Kind::Tensor;
    spec.hasElem = tp.tensor_type().has_elem_type();
    spec.elem = tp.tensor_type().elem_type();
    liftShape(tp.tensor_type().has_shape(), tp.tensor_type().shape());
    break;
  case proto::TypeProto::kSparseTensorType:
    spec.kind = Type::Kind::SparseTensor;
    spec.hasElem = tp.sparse_tensor_type().has_elem_type();
    spec.elem = tp.sparse_tensor_type().elem_type();
    liftShape(tp.sparse_tensor_type().has_shape(), tp.sparse_tensor_type().shape());
    break;
  case proto::TypeProto::kSequenceType:
    spec.kind = Type::Kind::Sequence;
    if (tp.sequence_type().has_elem_type()) spec.inner = liftType(tp.sequence_type().elem_type());
    break;
  case proto::TypeProto::kOptionalType:
    spec.kind = Type::Kind::Optional;
    if (tp.optional_type().has_elem_type()) spec.inner = liftType(tp.optional_type().elem_type());
    break;
  case proto::TypeProto::kMapType:
    spec.kind = Type::Kind::Map;
    spec.hasElem = tp.map_type().has_key_type();
    spec.elem = tp.map_type().key_type();
    if (tp.map_type().has_value_type()) spec.inner = liftType(tp.map_type().value_type());
    break;
  case proto::TypeProto::kOpaqueType:
    spec.kind = Type::Kind::Opaque;
    spec.opaqueDomain = tp.opaque_type().domain();
    spec.opaqueName = tp.opaque_type().name();
    break;
  case proto::TypeProto::VALUE_NOT_SET:
    spec.kind = Type::Kind::None;
    break;
  }
}


const Type *Lifter::liftType(const proto::TypeProto &tp) {
  // Note [Nesting limits]: refused after the lift (liftType has no error path).
  if (typeDepth_ > kMaxTypeNesting) {
    typeTooDeep_ = true;
    return nullptr;
  }
  struct DepthGuard {
    unsigned &d;
    ~DepthGuard() { --d; }
  } depthGuard{++typeDepth_};
  std::string key = tp.SerializeAsString();
  auto it = typeCache_.find(key);
  if (it != typeCache_.end()) return it->second;
  TypeSpec spec;
  liftTypeSpec(tp, spec);
  const Type *t = ctx_.getType(spec);
  proto::TypeProto check;
  lowerType(t, &check);
  if (check.SerializeAsString() != key) {
    // Something the structured form cannot say (presence of defaults,
    // unknown fields): keep the proto verbatim for lowering.
    spec.extras = key;
    t = ctx_.getType(spec);
  }
  typeCache_.emplace(std::move(key), t);
  return t;
}

//===--- Tensors ----------------------------------------------------------===//

absl::StatusOr<Tensor> Lifter::liftTensor(proto::TensorProto &tp, const std::string &where,
                                          const RawView *view) {
  Tensor t;
  proto::TensorProto res;
  keepUnknown(tp, res);
  KEEP_EMPTY(tp, res, name);
  KEEP_EMPTY(tp, res, doc_string);
  KEEP_ZERO(tp, res, data_type);
  t.setDataTypeRaw(tp.data_type());
  t.setDims(std::vector<int64_t>(tp.dims().begin(), tp.dims().end()));
  t.setName(tp.name());
  t.docString = tp.doc_string();
  if (metadataLossless(tp.metadata_props())) t.metadata = liftMetadata(tp.metadata_props());
  else *res.mutable_metadata_props() = tp.metadata_props();
  if (tp.has_segment()) {
    const auto &s = tp.segment();
    if (s.has_begin() && s.has_end() && s.unknown_fields().empty())
      t.segment = std::make_pair(s.begin(), s.end());
    else *res.mutable_segment() = s;
  }
  if (tp.has_data_location()) t.dataLocation = tp.data_location();

  bool external = tp.data_location() == proto::TensorProto::EXTERNAL;
  // Typed fields in the order of preference; the chosen one is the storage,
  // any other non-empty one (a malformed file) goes to the residual.
  bool haveStorage = false;
  if (tp.has_raw_data() && view) {
    t.setRaw(views_->file, (size_t)view->offset, (size_t)view->length); // a view, no copy
    haveStorage = true;
  } else if (tp.has_raw_data()) {
    std::string bytes;
    tp.mutable_raw_data()->swap(bytes); // moved, not copied
    t.setRaw(std::move(bytes));
    haveStorage = true;
  } else if (external) {
    ExternalDataRef ref;
    ref.entries = liftMetadata(tp.external_data());
    if (auto s = detail::readExternalEntries(ref); !s.ok())
      return err(where, std::string(s.message()));
    auto loader = session_.bind(ref, tp.name());
    if (!loader.ok()) return err(where, std::string(loader.status().message()));
    t.setExternal(std::move(ref), std::move(*loader));
    haveStorage = true;
  }
  if (t.storage() != Tensor::Storage::External && tp.external_data_size())
    *res.mutable_external_data() = tp.external_data();

  auto takeTyped = [&](Tensor::TypedField f, auto &field, auto &dest, auto setRes) {
    if (field.empty()) return;
    if (!haveStorage) {
      // Moved (strings keep their buffers; the proto is dropped after lift).
      dest.mut().assign(std::make_move_iterator(field.begin()), std::make_move_iterator(field.end()));
      t.setTyped(f);
      haveStorage = true;
    } else {
      setRes();
    }
  };
  // The field that normally holds this data type comes first.
  DataType dt = t.dataType();
  auto order = std::vector<int>{0, 1, 2, 3, 4, 5};
  if (dt == DataType::Int64) order = {3, 0, 1, 2, 4, 5};
  else if (dt == DataType::Double || dt == DataType::Complex128) order = {4, 0, 1, 2, 3, 5};
  else if (dt == DataType::Uint64 || dt == DataType::Uint32) order = {5, 0, 1, 2, 3, 4};
  else if (dt == DataType::String) order = {2, 0, 1, 3, 4, 5};
  else if (dt != DataType::Float && dt != DataType::Complex64) order = {1, 0, 2, 3, 4, 5};
  for (int which : order) {
    switch (which) {
    case 0: takeTyped(Tensor::TypedField::Float, tp.float_data(), t.floatData,
                      [&] { *res.mutable_float_data() = tp.float_data(); }); break;
    case 1: takeTyped(Tensor::TypedField::Int32, tp.int32_data(), t.int32Data,
                      [&] { *res.mutable_int32_data() = tp.int32_data(); }); break;
    case 2: takeTyped(Tensor::TypedField::String, *tp.mutable_string_data(), t.stringData,
                      [&] { *res.mutable_string_data() = tp.string_data(); }); break;
    case 3: takeTyped(Tensor::TypedField::Int64, tp.int64_data(), t.int64Data,
                      [&] { *res.mutable_int64_data() = tp.int64_data(); }); break;
    case 4: takeTyped(Tensor::TypedField::Double, tp.double_data(), t.doubleData,
                      [&] { *res.mutable_double_data() = tp.double_data(); }); break;
    case 5: takeTyped(Tensor::TypedField::Uint64, tp.uint64_data(), t.uint64Data,
                      [&] { *res.mutable_uint64_data() = tp.uint64_data(); }); break;
    }
  }
  t.extras = finishResidual(res);
  if (auto s = checkTensorData(t); !s.ok()) return err(where, std::string(s.message()));
  return t;
}

absl::StatusOr<SparseTensor> Lifter::liftSparse(proto::SparseTensorProto &sp,
                                                const std::string &where) {
  SparseTensor s;
  proto::SparseTensorProto res;
  keepUnknown(sp, res);
  s.hasValues = sp.has_values();
  s.hasIndices = sp.has_indices();
  if (sp.has_values()) {
    auto v = liftTensor(*sp.mutable_values(), where + " > sparse values");
    if (!v.ok()) return v.status();
    s.values = std::move(*v);
  }
  if (sp.has_indices()) {
    auto v = liftTensor(*sp.mutable_indices(), where + " > sparse indices");
    if (!v.ok()) return v.status();
    s.indices = std::move(*v);
  }
  s.dims.assign(sp.dims().begin(), sp.dims().end());
  s.extras = finishResidual(res);
  return s;
}

//===--- Value infos ------------------------------------------------------===//

void Lifter::liftValueInfoInto(const proto::ValueInfoProto &vi, Value *v) {
  proto::ValueInfoProto res;
  keepUnknown(vi, res);
  KEEP_EMPTY(vi, res, doc_string);
  if (vi.has_type()) v->setType(liftType(vi.type()));
  v->docString = vi.doc_string();
  if (metadataLossless(vi.metadata_props())) v->metadata = liftMetadata(vi.metadata_props());
  else *res.mutable_metadata_props() = vi.metadata_props();
  v->extras = finishResidual(res);
}

void Lifter::liftValueInfos(google::protobuf::RepeatedPtrField<proto::ValueInfoProto> &vis,
                            Graph &g) {
  for (const auto &vi : vis) {
    const Type *t = vi.has_type() ? liftType(vi.type()) : nullptr;
    Value *v = vi.has_name() ? g.lookupLocal(vi.name()) : nullptr;
    ValueInfoRecord *r;
    // Resolve to the value when it has no other type, or the same one, and
    // no other record claims it.
    if (v && !v->valueInfo() && (!v->type() || !t || v->type() == t)) {
      if (t && !v->type()) v->setType(t);
      r = &g.addValueInfo(v);
      r->name = vi.name();
      r->type = t;
    } else {
      r = &g.addValueInfo(vi.name(), t);
      r->value = nullptr;
    }
    r->hasType = vi.has_type();
    r->docString = vi.doc_string();
    proto::ValueInfoProto res;
    keepUnknown(vi, res);
    KEEP_EMPTY(vi, res, doc_string);
    if (!vi.has_name()) res.clear_name(); // absence is the default
    if (metadataLossless(vi.metadata_props())) r->metadata = liftMetadata(vi.metadata_props());
    else *res.mutable_metadata_props() = vi.metadata_props();
    r->extras = finishResidual(res);
  }
}

//===--- Attributes -------------------------------------------------------===//

namespace {
AttrKind inferKind(const proto::AttributeProto &ap) {
  if (ap.has_f()) return AttrKind::Float;
  if (ap.has_i()) return AttrKind::Int;
  if (ap.has_s()) return AttrKind::String;
  if (ap.has_t()) return AttrKind::Tensor;
  if (ap.has_g()) return AttrKind::Graph;
  if (ap.has_sparse_tensor()) return AttrKind::SparseTensor;
  if (ap.has_tp()) return AttrKind::TypeProto;
  if (ap.floats_size()) return AttrKind::Floats;
  if (ap.ints_size()) return AttrKind::Ints;
  if (ap.strings_size()) return AttrKind::Strings;
  if (ap.tensors_size()) return AttrKind::Tensors;
  if (ap.graphs_size()) return AttrKind::Graphs;
  if (ap.sparse_tensors_size()) return AttrKind::SparseTensors;
  if (ap.type_protos_size()) return AttrKind::TypeProtos;
  return AttrKind::Undefined;
}
} // namespace

absl::Status Lifter::liftAttribute(proto::AttributeProto &ap, Node &n, Attribute &a) {
  // The path is computed only when needed (errors, tensors): it is O(depth).
  std::string whereText;
  auto where = [&]() -> const std::string & {
    if (whereText.empty())
      whereText = absl::StrCat(nodePath(&n), " > attribute \"", ap.name(), "\"");
    return whereText;
  };
  proto::AttributeProto res;
  keepUnknown(ap, res);
  KEEP_EMPTY(ap, res, doc_string);
  KEEP_EMPTY(ap, res, ref_attr_name);
  KEEP_EMPTY(ap, res, name);
  a.hasKindField = ap.has_type();
  AttrKind k = ap.has_type() ? static_cast<AttrKind>(ap.type()) : inferKind(ap);
  if (ap.has_type() && ap.ref_attr_name().empty()) {
    // The payload present must be the one `type` names.
    AttrKind present = inferKind(ap);
    bool listKind = k == AttrKind::Floats || k == AttrKind::Ints || k == AttrKind::Strings ||
                    k == AttrKind::Tensors || k == AttrKind::Graphs ||
                    k == AttrKind::SparseTensors || k == AttrKind::TypeProtos;
    if ((int)k < 0 || (int)k > 14)
      return err(where(), absl::StrCat("unknown attribute type ", (int)k));
    if (present != AttrKind::Undefined && present != k)
      return err(where(), absl::StrCat("attribute type ", attrKindName(k).str(),
                                     " disagrees with the value it holds (",
                                     attrKindName(present).str(), ")"));
    if (present == AttrKind::Undefined && !listKind && k != AttrKind::Undefined &&
        k != AttrKind::Float && k != AttrKind::Int && k != AttrKind::String)
      return err(where(), absl::StrCat("attribute of type ", attrKindName(k).str(),
                                     " holds no value"));
  }
  a.setKind(k);
  a.refAttrName = ap.ref_attr_name();
  a.docString = ap.doc_string();
  // The payload fields of kind k are lifted; any other present field (a
  // malformed or unusual file) is kept verbatim in the residual.
  // Note [Scalar attribute presence]: a value's field is written back
  // unless valueOmitted; only a reference's explicit zero needs the residual.
  bool isF = k == AttrKind::Float, isI = k == AttrKind::Int, isS = k == AttrKind::String;
  bool isRef = !ap.ref_attr_name().empty();
  if (ap.has_f()) {
    if (isF) { a.f = ap.f(); if (ap.f() == 0 && isRef) res.set_f(ap.f()); } else res.set_f(ap.f());
  }
  if (ap.has_i()) {
    if (isI) { a.i = ap.i(); if (ap.i() == 0 && isRef) res.set_i(0); } else res.set_i(ap.i());
  }
  if (ap.has_s()) {
    if (isS) { a.s = ap.s(); if (ap.s().empty() && isRef) res.set_s(""); } else res.set_s(ap.s());
  }
  a.valueOmitted = (isF && !ap.has_f()) || (isI && !ap.has_i()) || (isS && !ap.has_s());
  if (k == AttrKind::Floats) a.floats.assign(ap.floats().begin(), ap.floats().end());
  else if (ap.floats_size()) *res.mutable_floats() = ap.floats();
  if (k == AttrKind::Ints) a.ints.assign(ap.ints().begin(), ap.ints().end());
  else if (ap.ints_size()) *res.mutable_ints() = ap.ints();
  if (k == AttrKind::Strings) a.strings.assign(ap.strings().begin(), ap.strings().end());
  else if (ap.strings_size()) *res.mutable_strings() = ap.strings();

  if (ap.has_t()) {
    if (k == AttrKind::Tensor) {
      auto t = liftTensor(*ap.mutable_t(), where());
      if (!t.ok()) return t.status();
      a.tensors.push_back(std::make_unique<Tensor>(std::move(*t)));
    } else *res.mutable_t() = ap.t();
  }
  if (k == AttrKind::Tensors)
    for (auto &tp : *ap.mutable_tensors()) {
      auto t = liftTensor(tp, where());
      if (!t.ok()) return t.status();
      a.tensors.push_back(std::make_unique<Tensor>(std::move(*t)));
    }
  else if (ap.tensors_size()) *res.mutable_tensors() = ap.tensors();
  if (ap.has_sparse_tensor()) {
    if (k == AttrKind::SparseTensor) {
      auto s = liftSparse(*ap.mutable_sparse_tensor(), where());
      if (!s.ok()) return s.status();
      a.sparseTensors.push_back(std::make_unique<SparseTensor>(std::move(*s)));
    } else *res.mutable_sparse_tensor() = ap.sparse_tensor();
  }
  if (k == AttrKind::SparseTensors)
    for (auto &sp : *ap.mutable_sparse_tensors()) {
      auto s = liftSparse(sp, where());
      if (!s.ok()) return s.status();
      a.sparseTensors.push_back(std::make_unique<SparseTensor>(std::move(*s)));
    }
  else if (ap.sparse_tensors_size()) *res.mutable_sparse_tensors() = ap.sparse_tensors();
  if (ap.has_tp()) {
    if (k == AttrKind::TypeProto) a.types.push_back(liftType(ap.tp()));
    else *res.mutable_tp() = ap.tp();
  }
  if (k == AttrKind::TypeProtos)
    for (const auto &tp : ap.type_protos()) a.types.push_back(liftType(tp));
  else if (ap.type_protos_size()) *res.mutable_type_protos() = ap.type_protos();

  // Subgraphs: lifted in place, with this node's scope chain complete.
  if (ap.has_g()) {
    if (k == AttrKind::Graph) {
      Graph *g = a.addGraph(std::make_unique<Graph>(ctx_));
      if (auto s = liftGraph(*ap.mutable_g(), *g); !s.ok()) return s;
    } else *res.mutable_g() = ap.g();
  }
  if (k == AttrKind::Graphs) {
    for (auto &gp : *ap.mutable_graphs()) {
      Graph *g = a.addGraph(std::make_unique<Graph>(ctx_));
      if (auto s = liftGraph(gp, *g); !s.ok()) return s;
    }
  } else if (ap.graphs_size()) {
    *res.mutable_graphs() = ap.graphs();
  }
  a.extras = finishResidual(res);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Attribute>>
Lifter::liftDetachedAttribute(proto::AttributeProto &ap, const std::string &where) {
  // Function attribute defaults have no node. A graph default is its own
  // root scope: lifted under a scratch node of an empty scratch graph, it
  // sees no outer names, and is then detached from the scratch node.
  Graph scratch(ctx_);
  scratch.name = where;
  Node *n = scratch.createEmptyNode("<default>", "");
  Attribute &tmp = n->addAttr(std::make_unique<Attribute>(ap.name()));
  if (auto s = liftAttribute(ap, *n, tmp); !s.ok()) return s;
  auto owned = std::make_unique<Attribute>(ap.name());
  owned->moveHeaderFrom(tmp);
  owned->movePayloadFrom(tmp);
  return owned;
}

//===--- Nodes and graphs -------------------------------------------------===//

void Lifter::liftNodeProps(const proto::NodeProto &np, Node &n) {
  n.setName(np.name());
  n.setOverload(np.overload());
  n.docString = np.doc_string();
  n.metadata = liftMetadata(np.metadata_props());
  for (const auto &dc : np.device_configurations()) {
    NodeDeviceConfiguration c;
    proto::NodeDeviceConfigurationProto res;
    keepUnknown(dc, res);
    if (dc.has_configuration_id()) c.configurationId = dc.configuration_id();
    if (dc.has_pipeline_stage()) c.pipelineStage = dc.pipeline_stage();
    for (const auto &ss : dc.sharding_spec()) {
      ShardingSpec s;
      proto::ShardingSpecProto sres;
      keepUnknown(ss, sres);
      if (ss.has_tensor_name()) s.tensorName = ss.tensor_name();
      s.device.assign(ss.device().begin(), ss.device().end());
      for (const auto &e : ss.index_to_device_group_map()) {
        s.indexToDeviceGroupMap.emplace_back(
            e.has_key() ? std::optional<int64_t>(e.key()) : std::nullopt,
            std::vector<int64_t>(e.value().begin(), e.value().end()));
        proto::IntIntListEntryProto eres;
        keepUnknown(e, eres);
        s.indexToDeviceGroupMapExtras.push_back(finishResidual(eres));
      }
      for (const auto &sd : ss.sharded_dim()) {
        ShardingSpec::ShardedDim d;
        proto::ShardedDimProto dres;
        keepUnknown(sd, dres);
        if (sd.has_axis()) d.axis = sd.axis();
        for (const auto &ssd : sd.simple_sharding()) {
          ShardingSpec::SimpleShardedDim x;
          proto::SimpleShardedDimProto xres;
          keepUnknown(ssd, xres);
          if (ssd.has_dim_value()) {
            x.kind = ShardingSpec::SimpleShardedDim::Kind::Value;
            x.dimValue = ssd.dim_value();
          } else if (ssd.has_dim_param()) {
            x.kind = ShardingSpec::SimpleShardedDim::Kind::Param;
            x.dimParam = ssd.dim_param();
          }
          if (ssd.has_num_shards()) x.numShards = ssd.num_shards();
          x.extras = finishResidual(xres);
          d.simpleSharding.push_back(std::move(x));
        }
        d.extras = finishResidual(dres);
        s.shardedDim.push_back(std::move(d));
      }
      s.extras = finishResidual(sres);
      c.shardingSpec.push_back(std::move(s));
    }
    c.extras = finishResidual(res);
    n.deviceConfigurations.push_back(std::move(c));
  }
}

absl::StatusOr<Node *> Lifter::declareNode(const proto::NodeProto &np, Graph &g) {
  Node *n = g.createEmptyNode(np.op_type(), np.domain());
  liftNodeProps(np, *n);
  // Most nodes have an empty residual: it is only built when one of its
  // parts is there (a residual message per node costs time at 10^6 nodes).
  auto explicitEmpty = [](bool has, const std::string &v) { return has && v.empty(); };
  if (!np.unknown_fields().empty() || explicitEmpty(np.has_name(), np.name()) ||
      explicitEmpty(np.has_op_type(), np.op_type()) ||
      explicitEmpty(np.has_domain(), np.domain()) ||
      explicitEmpty(np.has_overload(), np.overload()) ||
      explicitEmpty(np.has_doc_string(), np.doc_string()) ||
      !metadataLossless(np.metadata_props())) {
    proto::NodeProto res;
    keepUnknown(np, res);
    KEEP_EMPTY(np, res, name);
    KEEP_EMPTY(np, res, op_type);
    KEEP_EMPTY(np, res, domain);
    KEEP_EMPTY(np, res, overload);
    KEEP_EMPTY(np, res, doc_string);
    if (!metadataLossless(np.metadata_props())) {
      *res.mutable_metadata_props() = np.metadata_props();
      n->metadata.clear();
    }
    n->extras = finishResidual(res);
  }
  for (const std::string &out : np.output())
    if (auto s = addNodeResult(g, n, out); !s.ok()) return s;
  return n;
}

absl::Status Lifter::addNodeResult(Graph &g, Node *n, llvm::StringRef out) {
  if (out.empty()) {
    n->addEmptyResult();
    return absl::OkStatus();
  }
  auto r = n->addResult(out);
  if (r.ok()) return absl::OkStatus();
  Value *prev = g.lookupLocal(out);
  return err(nodePath(n),
             absl::StrCat("output \"", out.str(), "\" is already defined",
                          prev && prev->definingNode()
                              ? " by " + nodePath(prev->definingNode())
                              : prev ? std::string(" as a graph input or initializer")
                                     : absl::StrCat(": ", r.status().message())));
}

absl::Status Lifter::resolveNode(proto::NodeProto &np, Node *n, Graph &g) {
  operands_.clear();
  for (const std::string &in : np.input())
    if (auto s = addOperand(g, n, in); !s.ok()) return s;
  n->setOperands(operands_);
  n->reserveAttributes((unsigned)np.attribute_size());
  for (auto &ap : *np.mutable_attribute()) {
    Attribute &a = n->newAttr(ap.name());
    if (auto s = liftAttribute(ap, *n, a); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Lifter::addOperand(Graph &g, Node *n, llvm::StringRef in) {
  if (in.empty()) {
    operands_.push_back(nullptr);
    return absl::OkStatus();
  }
  Value *v = g.lookup(in);
  if (!v) return undefinedInput(n, in);
  operands_.push_back(v);
  return absl::OkStatus();
}

absl::Status Lifter::liftGraphBody(google::protobuf::RepeatedPtrField<proto::NodeProto> &nodes,
                                   Graph &g) {
  // Declare every node result first.
  std::vector<Node *> created;
  created.reserve(nodes.size());
  for (auto &np : nodes) {
    auto n = declareNode(np, g);
    if (!n.ok()) return n.status();
    created.push_back(*n);
  }
  // Resolve uses, then lift attributes (and so nested graphs).
  int idx = 0;
  for (auto &np : nodes)
    if (auto s = resolveNode(np, created[idx++], g); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status Lifter::liftGraph(proto::GraphProto &gp, Graph &g) {
  struct DepthGuard {
    unsigned &d;
    ~DepthGuard() { --d; }
  } depthGuard{++graphDepth_};
  if (auto s = checkGraphDepth(g); !s.ok()) return s;
  if (auto s = liftGraphHead(gp, g); !s.ok()) return s;
  if (auto s = liftGraphBody(*gp.mutable_node(), g); !s.ok()) return s;
  return liftGraphTail(gp, g);
}

absl::Status Lifter::checkGraphDepth(Graph &g) {
  // The main graph and function bodies are depth 1; subgraphs count on.
  if (graphDepth_ > kMaxGraphNesting + 1)
    return err(g.path(), absl::StrCat("subgraphs nest deeper than ", kMaxGraphNesting,
                                      " levels (the limit of onnxir::kMaxGraphNesting)"));
  return absl::OkStatus();
}

absl::Status Lifter::liftGraphHead(proto::GraphProto &gp, Graph &g) {
  g.name = gp.name();
  g.docString = gp.doc_string();
  proto::GraphProto res;
  keepUnknown(gp, res);
  KEEP_EMPTY(gp, res, name);
  KEEP_EMPTY(gp, res, doc_string);
  if (metadataLossless(gp.metadata_props())) g.metadata = liftMetadata(gp.metadata_props());
  else *res.mutable_metadata_props() = gp.metadata_props();
  std::string where = g.path();

  for (const auto &vi : gp.input()) {
    auto v = g.addInput(vi.name());
    if (!v.ok())
      return err(where, absl::StrCat("graph input \"", vi.name(), "\": ", v.status().message()));
    liftValueInfoInto(vi, *v);
  }
  bool mainGraph = views_ && &g == &m_.graph();
  int initIndex = -1;
  for (auto &tp : *gp.mutable_initializer()) {
    ++initIndex;
    std::string name = tp.name();
    std::string twhere = absl::StrCat(where, " > initializer \"", name, "\"");
    const RawView *view = nullptr;
    if (mainGraph && initIndex < (int)views_->initializers.size() &&
        views_->initializers[initIndex])
      view = &*views_->initializers[initIndex];
    auto t = liftTensor(tp, twhere, view);
    if (!t.ok()) return t.status();
    Value *in = g.lookupLocal(name);
    if (in && in->isGraphInput() && !in->hasInitializer()) {
      g.setInputDefault(in, std::move(*t));
      continue;
    }
    if (name.empty()) return err(twhere, "an initializer needs a name");
    std::string tname = t->name();
    auto v = g.addInitializer(name, std::move(*t));
    if (!v.ok()) return err(twhere, absl::StrCat("\"", name, "\" is already defined"));
  }
  for (auto &sp : *gp.mutable_sparse_initializer()) {
    std::string name = sp.values().name();
    std::string twhere = absl::StrCat(where, " > sparse initializer \"", name, "\"");
    auto s = liftSparse(sp, twhere);
    if (!s.ok()) return s.status();
    Value *in = g.lookupLocal(name);
    if (in && in->isGraphInput() && !in->sparseInitializer()) {
      g.setInputSparseDefault(in, std::move(*s));
      continue;
    }
    auto v = g.addSparseInitializer(name, std::move(*s));
    if (!v.ok()) return err(twhere, absl::StrCat("\"", name, "\" is already defined"));
  }
  graphRes_.push_back(std::move(res));
  return absl::OkStatus();
}

absl::Status Lifter::liftGraphTail(proto::GraphProto &gp, Graph &g) {
  proto::GraphProto res = std::move(graphRes_.back());
  graphRes_.pop_back();
  std::string where = g.path();
  for (const auto &vi : gp.output()) {
    Value *v = g.lookup(vi.name());
    if (!v) return err(where, absl::StrCat("graph output \"", vi.name(), "\" is undefined"));
    OutputInfo info;
    proto::ValueInfoProto res2;
    keepUnknown(vi, res2);
    KEEP_EMPTY(vi, res2, doc_string);
    info.hasType = vi.has_type();
    if (vi.has_type()) info.type = liftType(vi.type());
    info.docString = vi.doc_string();
    if (metadataLossless(vi.metadata_props())) info.metadata = liftMetadata(vi.metadata_props());
    else *res2.mutable_metadata_props() = vi.metadata_props();
    info.extras = finishResidual(res2);
    if (!v->type() && info.type && v->getGraph() == &g && !v->isGraphInput()) v->setType(info.type);
    g.addOutput(v, std::move(info));
  }
  liftValueInfos(*gp.mutable_value_info(), g);
  for (const auto &qa : gp.quantization_annotation()) {
    QuantizationAnnotation q;
    proto::TensorAnnotation qres;
    keepUnknown(qa, qres);
    if (qa.has_tensor_name()) q.tensorName = qa.tensor_name();
    if (metadataLossless(qa.quant_parameter_tensor_names()))
      q.quantParameterTensorNames = liftMetadata(qa.quant_parameter_tensor_names());
    else *qres.mutable_quant_parameter_tensor_names() = qa.quant_parameter_tensor_names();
    q.extras = finishResidual(qres);
    g.quantizationAnnotations.push_back(std::move(q));
  }
  g.extras = finishResidual(res);
  return absl::OkStatus();
}

absl::Status Lifter::liftFunction(proto::FunctionProto &fp, Function &f) {
  f.name = fp.name();
  f.domain = fp.domain();
  f.overload = fp.overload();
  f.docString = fp.doc_string();
  proto::FunctionProto res;
  keepUnknown(fp, res);
  KEEP_EMPTY(fp, res, name);
  KEEP_EMPTY(fp, res, domain);
  KEEP_EMPTY(fp, res, overload);
  KEEP_EMPTY(fp, res, doc_string);
  if (metadataLossless(fp.metadata_props())) f.metadata = liftMetadata(fp.metadata_props());
  else *res.mutable_metadata_props() = fp.metadata_props();
  for (const auto &o : fp.opset_import()) {
    proto::OperatorSetIdProto ores;
    keepUnknown(o, ores);
    KEEP_EMPTY(o, ores, domain);
    KEEP_ZERO(o, ores, version);
    f.opsetImports.push_back({o.domain(), o.version(), finishResidual(ores)});
  }
  f.attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
  std::string where = absl::StrCat("function \"", f.qualifiedName(), "\"");
  for (auto &ap : *fp.mutable_attribute_proto()) {
    auto a = liftDetachedAttribute(ap, where);
    if (!a.ok()) return a.status();
    f.attributeDefaults.push_back(std::move(*a));
  }
  Graph &g = f.body();
  for (const std::string &in : fp.input()) {
    auto v = g.addInput(in);
    if (!v.ok()) return err(where, absl::StrCat("input \"", in, "\": ", v.status().message()));
  }
  if (auto s = liftGraphBody(*fp.mutable_node(), g); !s.ok()) return s;
  for (const std::string &out : fp.output()) {
    Value *v = g.lookup(out);
    if (!v) return err(where, absl::StrCat("output \"", out, "\" is undefined"));
    g.addOutput(v);
  }
  liftValueInfos(*fp.mutable_value_info(), g);
  f.extras = finishResidual(res);
  return absl::OkStatus();
}

absl::Status Lifter::liftModel(proto::ModelProto &mp, const llvm::StringRef *wireGraph) {
  proto::ModelProto res;
  keepUnknown(mp, res);
  if (mp.has_ir_version()) m_.irVersion = mp.ir_version();
  if (mp.has_producer_name()) m_.producerName = mp.producer_name();
  if (mp.has_producer_version()) m_.producerVersion = mp.producer_version();
  if (mp.has_domain()) m_.domain = mp.domain();
  if (mp.has_model_version()) m_.modelVersion = mp.model_version();
  if (mp.has_doc_string()) m_.docString = mp.doc_string();
  if (metadataLossless(mp.metadata_props())) m_.metadata = liftMetadata(mp.metadata_props());
  else *res.mutable_metadata_props() = mp.metadata_props();
  for (const auto &o : mp.opset_import()) {
    proto::OperatorSetIdProto ores;
    keepUnknown(o, ores);
    KEEP_EMPTY(o, ores, domain);
    KEEP_ZERO(o, ores, version);
    m_.opsetImports.push_back({o.domain(), o.version(), finishResidual(ores)});
  }
  for (const auto &ti : mp.training_info()) m_.trainingInfo.push_back(ti.SerializeAsString());
  for (const auto &c : mp.configuration()) {
    DeviceConfiguration d;
    proto::DeviceConfigurationProto cres;
    keepUnknown(c, cres);
    if (c.has_name()) d.name = c.name();
    if (c.has_num_devices()) d.numDevices = c.num_devices();
    d.device.assign(c.device().begin(), c.device().end());
    d.extras = finishResidual(cres);
    m_.configurations.push_back(std::move(d));
  }
  ctx_.allowShadowing = true;
  for (auto &fp : *mp.mutable_functions()) {
    Function &f = m_.addFunction();
    if (auto s = liftFunction(fp, f); !s.ok()) { ctx_.allowShadowing = false; return s; }
  }
  m_.hasGraph = wireGraph || mp.has_graph();
  absl::Status st = absl::OkStatus();
  if (wireGraph) st = liftGraphWire(*wireGraph, m_.graph(), 1);
  else if (mp.has_graph()) st = liftGraph(*mp.mutable_graph(), m_.graph());
  ctx_.allowShadowing = false;
  if (!st.ok()) return st;
  // The depth count of liftType misses depth reached through its cache (a
  // type met shallow first, then again under 200 wrappers): the context's
  // count of what was made is the measure the verifier uses too.
  if (typeTooDeep_ || ctx_.maxTypeNesting() > kMaxTypeNesting)
    return err("model", absl::StrCat("types nest deeper than ", kMaxTypeNesting,
                                     " levels (the limit of onnxir::kMaxTypeNesting)"));
  m_.extras = finishResidual(res);
  return absl::OkStatus();
}


//===--- The wire lift ----------------------------------------------------===//
//
// Note [Wire lift]
// Parsing a node-heavy model into a ModelProto costs about as much as the
// lift itself: every node, string and attribute becomes a protobuf object
// first, and is copied again into the IR. The wire lift reads the nodes of
// every graph, and their attributes, straight from the input bytes
// (WireReader.h): names are views of the input, interned once by the IR.
// What it reads directly:
//   - GraphProto.node, each NodeProto's input, output, name, op_type,
//     domain, overload, doc_string and attribute;
//   - AttributeProto name, type, f, i, s, floats, ints, strings, doc_string,
//     ref_attr_name, and subgraphs (g), lifted the wire way recursively.
// Everything else is rare or small, and goes through protobuf in pieces, so
// it keeps exactly the old semantics (merging of repeated singular
// messages, unknown fields, residuals): the other fields of a graph
// (inputs, outputs, initializers, value_info, ...) are copied into one
// buffer parsed as a GraphProto; the fields of the model other than its
// graph likewise (functions included); a node with anything else (unknown
// or mis-typed fields, metadata_props, device_configurations) is parsed as
// a NodeProto, an attribute with anything else (tensors, sparse tensors,
// type protos, graphs lists, explicit defaults the residual must keep, a
// type that disagrees with its value) as an AttributeProto; a tensor
// attribute's TensorProto is parsed by protobuf without its raw_data.
// Pieces get protobuf's recursion limit minus their depth. The raw_data of
// a main-graph initializer, and of a tensor attribute (a Constant's value)
// in any graph, is taken as a view of the mapped file as in Note [Slim
// parsing].
//
// The wire lift gives up at the first surprise (malformed bytes, a second
// `graph` field) or stops at a lift error: the caller then lifts the same
// bytes the ModelProto way, which gives the result; an error of this lift
// is kept and reported if that fails too (Note [Located errors kept] in
// ModelLoad.cpp). So errors cost two attempts (one pre-scan).
// The corpus test WireLift.* checks that both ways give identical IR text
// and identical lowered bytes.
//
// Note [Lifted bytes released]
// What the lift has read of the main graph's nodes it never reads again:
// the IR holds all of it. When the input is a mapped file, the pages
// behind each read are dropped from the mapping as the lift goes
// (releaseMappedPages, every kReleaseStep bytes; a later read, such as the
// save's of a tensor view, faults them in again from the file): once when
// the graph's fields have been walked (the walk touches every page), then
// behind each of the two passes over the nodes (declare, resolve). So at
// the end of a lift the process holds the IR and a window of the file, not
// the IR and the file; protobuf's parse holds its message and the file read
// into a string. It only ever drops pages of our own read-only private
// mapping of the input: nothing is lost, a page costs a minor fault if read
// again.

namespace {

absl::Status wireUnsupported(const char *what) {
  return absl::UnimplementedError(absl::StrCat("wire lift: ", what));
}

template <class M> bool parsePiece(llvm::StringRef b, M &msg, unsigned depth) {
  if (depth + 1 >= kWireMaxNesting || b.size() > (size_t)INT_MAX) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(b.data()),
                                            (int)b.size());
  in.SetRecursionLimit(int(kWireMaxNesting - depth - 1));
  return msg.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

void appendField(std::string &out, const WireField &f) {
  out.append(reinterpret_cast<const char *>(f.begin), f.end - f.begin);
}

} // namespace

absl::Status Lifter::liftModelWire(llvm::StringRef bytes, std::shared_ptr<const Buffer> file) {
  WireReader r(bytes);
  WireField f;
  std::string rest;
  llvm::StringRef graph;
  unsigned graphs = 0;
  while (r.next(f)) {
    if (f.number == 7 && f.type == kLen) {
      graph = f.bytes;
      ++graphs;
      continue;
    }
    appendField(rest, f);
  }
  if (r.bad()) return wireUnsupported("malformed model");
  if (graphs != 1) return wireUnsupported("not exactly one graph");
  if (file) {
    wireFile_ = std::move(file);
    wireViews_.file = wireFile_;
    views_ = &wireViews_;
  }
  google::protobuf::Arena arena;
  auto &mp = *google::protobuf::Arena::CreateMessage<proto::ModelProto>(&arena);
  if (!parsePiece(rest, mp, 0)) return wireUnsupported("model fields");
  return liftModel(mp, &graph);
}

absl::Status Lifter::liftGraphWire(llvm::StringRef bytes, Graph &g, unsigned depth) {
  struct DepthGuard {
    unsigned &d;
    ~DepthGuard() { --d; }
  } depthGuard{++graphDepth_};
  if (auto s = checkGraphDepth(g); !s.ok()) return s;
  bool slim = views_ && &g == &m_.graph();
  const uint8_t *base =
      slim ? reinterpret_cast<const uint8_t *>(views_->file->data().data()) : nullptr;
  std::vector<llvm::StringRef> nodes;
  std::string rest;
  WireReader r(bytes);
  WireField f;
  while (r.next(f)) {
    if (f.number == 1 && f.type == kLen) {
      nodes.push_back(f.bytes);
    } else if (slim && f.number == 5 && f.type == kLen) {
      std::string t;
      std::optional<RawView> view;
      if (!wireSlimTensor(base, f.bytes, t, view)) return wireUnsupported("malformed tensor");
      wireAppendVarint(rest, (5 << 3) | kLen);
      wireAppendVarint(rest, t.size());
      rest += t;
      wireViews_.initializers.push_back(view);
    } else {
      appendField(rest, f);
    }
  }
  if (r.bad()) return wireUnsupported("malformed graph");
  // Note [Lifted bytes released]: what is left to read of the file is the
  // node messages (views are read lazily), re-read pass by pass below.
  if (slim) releaseMappedPages(bytes);
  google::protobuf::Arena arena;
  auto &gp = *google::protobuf::Arena::CreateMessage<proto::GraphProto>(&arena);
  if (!parsePiece(rest, gp, depth)) return wireUnsupported("graph fields");
  if (auto s = liftGraphHead(gp, g); !s.ok()) return s;
  if (auto s = liftNodesWire(nodes, g, depth + 1); !s.ok()) return s;
  return liftGraphTail(gp, g);
}

// Declares one node read from the wire; false (and no node) when the node
// has something the wire lift leaves to protobuf.
absl::StatusOr<bool> Lifter::declareNodeWire(llvm::StringRef bytes, Graph &g, Node *&n) {
  llvm::StringRef name, opType, domain, overload, doc;
  bool hasName = false, hasOp = false, hasDomain = false, hasOverload = false, hasDoc = false;
  llvm::SmallVector<llvm::StringRef, 4> outs;
  WireReader r(bytes);
  WireField f;
  while (r.next(f)) {
    if (f.type != kLen) return false;
    switch (f.number) {
    case 1: break;
    case 2: outs.push_back(f.bytes); break;
    case 3: name = f.bytes; hasName = true; break;
    case 4: opType = f.bytes; hasOp = true; break;
    case 5: break;
    case 6: doc = f.bytes; hasDoc = true; break;
    case 7: domain = f.bytes; hasDomain = true; break;
    case 8: overload = f.bytes; hasOverload = true; break;
    default: return false;
    }
  }
  if (r.bad()) return false;
  n = g.createEmptyNode(opType, domain);
  n->setName(name);
  n->setOverload(overload);
  n->docString = doc.str();
  // The residual of explicitly empty strings, in field-number order as
  // protobuf serializes it (Note [Residuals]).
  if ((hasName && name.empty()) || (hasOp && opType.empty()) || (hasDoc && doc.empty()) ||
      (hasDomain && domain.empty()) || (hasOverload && overload.empty())) {
    std::string res;
    auto keep = [&](bool has, llvm::StringRef v, unsigned field) {
      if (!has || !v.empty()) return;
      res += char((field << 3) | kLen);
      res += char(0);
    };
    keep(hasName, name, 3);
    keep(hasOp, opType, 4);
    keep(hasDoc, doc, 6);
    keep(hasDomain, domain, 7);
    keep(hasOverload, overload, 8);
    n->extras = std::move(res);
  }
  for (llvm::StringRef out : outs)
    if (auto s = addNodeResult(g, n, out); !s.ok()) return s;
  return true;
}

// Note [Prefetched names]
// Resolving a name costs a few cache misses: its slot in the context's
// table of interned strings (a random place in a table of millions of
// slots), the interned copy with its record, and for a use the value it
// links to. One after the other, they are most of a node-heavy lift (the
// slot alone was a quarter of it). So nodes are lifted in blocks: first
// every name of the block is hashed and its slot prefetched, then the
// interned copies the slots point to, then the names are resolved and the
// used values prefetched, and only then are the nodes built, in order. The
// misses of a block overlap instead of queuing up. Nothing but the order of
// memory accesses changes: names resolve, and errors are reported, exactly
// as node by node.
namespace {
constexpr size_t kNameBlock = 64; // nodes per block

/// Drops the pages of a mapped input behind a forward read of it, every
/// kReleaseStep bytes (Note [Lifted bytes released]).
class ReleaseBehind {
public:
  static constexpr size_t kReleaseStep = size_t(4) << 20;
  ReleaseBehind(bool on, llvm::ArrayRef<llvm::StringRef> pieces)
      : on_(on && !pieces.empty()), from_(on_ ? pieces.front().data() : nullptr) {}
  ReleaseBehind(const ReleaseBehind &) = delete;
  ReleaseBehind &operator=(const ReleaseBehind &) = delete;
  /// Everything before `p` has been read for the last time in this pass.
  void readUpTo(const char *p) {
    if (on_ && p > from_ && size_t(p - from_) >= kReleaseStep) {
      releaseMappedPages(llvm::StringRef(from_, size_t(p - from_)));
      from_ = p;
    }
  }
  void finish(const char *end) {
    if (on_ && end > from_) releaseMappedPages(llvm::StringRef(from_, size_t(end - from_)));
    on_ = false;
  }

private:
  bool on_;
  const char *from_;
};
} // namespace

absl::Status Lifter::liftNodesWire(llvm::ArrayRef<llvm::StringRef> nodes, Graph &g,
                                   unsigned depth) {
  std::vector<Node *> created(nodes.size());
  // About one result per node: the scope and name tables grow once.
  if (nodes.size() > 64) g.reserveDefinitions(nodes.size() + nodes.size() / 4);
  // Nodes lifted through protobuf, by position.
  std::vector<std::pair<size_t, std::unique_ptr<proto::NodeProto>>> viaProto;
  WireField f;
  // The node messages lie in the file in order (fields of one message).
  const bool release = views_ && views_->file && &g == &m_.graph();
  const char *nodesEnd = nodes.empty() ? nullptr : nodes.back().end();
  ReleaseBehind declared(release, nodes);
  for (size_t b = 0; b < nodes.size(); b += kNameBlock) {
    const size_t e = std::min(nodes.size(), b + kNameBlock);
    declared.readUpTo(nodes[b].data());
    for (size_t i = b; i < e; ++i) {
      WireReader r(nodes[i]);
      while (r.next(f))
        if (f.number == 2 && f.type == kLen && !f.bytes.empty())
          ctx_.prefetchSlot(Context::nameHash(f.bytes));
    }
    for (size_t i = b; i < e; ++i) {
      auto direct = declareNodeWire(nodes[i], g, created[i]);
      if (!direct.ok()) return direct.status();
      if (*direct) continue;
      auto np = std::make_unique<proto::NodeProto>();
      if (!parsePiece(nodes[i], *np, depth)) return wireUnsupported("node");
      auto n = declareNode(*np, g);
      if (!n.ok()) return n.status();
      created[i] = *n;
      viaProto.emplace_back(i, std::move(np));
    }
  }
  struct Pending {
    llvm::StringRef name; // empty: an omitted optional input
    uint32_t hash;
    Value *value;
  };
  std::vector<Pending> pending;
  size_t starts[kNameBlock + 1];
  unsigned numAttrs[kNameBlock];
  size_t nextProto = 0;
  declared.finish(nodesEnd);
  ReleaseBehind resolved(release, nodes);
  for (size_t b = 0; b < nodes.size(); b += kNameBlock) {
    const size_t e = std::min(nodes.size(), b + kNameBlock);
    resolved.readUpTo(nodes[b].data());
    pending.clear();
    size_t proto = nextProto;
    for (size_t i = b; i < e; ++i) {
      starts[i - b] = pending.size();
      if (proto < viaProto.size() && viaProto[proto].first == i) {
        ++proto;
        continue;
      }
      numAttrs[i - b] = 0;
      WireReader r(nodes[i]);
      while (r.next(f)) {
        if (f.number == 5) ++numAttrs[i - b];
        if (f.number != 1) continue;
        uint32_t h = 0;
        if (!f.bytes.empty()) {
          h = Context::nameHash(f.bytes);
          ctx_.prefetchSlot(h);
        }
        pending.push_back({f.bytes, h, nullptr});
      }
    }
    starts[e - b] = pending.size();
    for (const Pending &p : pending)
      if (!p.name.empty()) ctx_.prefetchInterned(p.name, p.hash);
    for (Pending &p : pending) {
      if (p.name.empty()) continue;
      p.value = g.lookupInterned(ctx_.findInterned(p.name, p.hash));
      if (p.value) p.value->prefetchForLink();
    }
    for (size_t i = b; i < e; ++i) {
      Node *n = created[i];
      if (nextProto < viaProto.size() && viaProto[nextProto].first == i) {
        if (auto s = resolveNode(*viaProto[nextProto++].second, n, g); !s.ok()) return s;
        continue;
      }
      operands_.clear();
      for (size_t k = starts[i - b]; k < starts[i - b + 1]; ++k) {
        const Pending &p = pending[k];
        if (!p.name.empty() && !p.value) return undefinedInput(n, p.name);
        operands_.push_back(p.value);
      }
      n->setOperands(operands_);
      if (!numAttrs[i - b]) continue;
      n->reserveAttributes(numAttrs[i - b]);
      WireReader ra(nodes[i]);
      while (ra.next(f))
        if (f.number == 5)
          if (auto s = liftAttributeWire(f.bytes, *n, depth + 1); !s.ok()) return s;
    }
  }
  resolved.finish(nodesEnd);
  return absl::OkStatus();
}

absl::Status Lifter::liftAttributeWire(llvm::StringRef bytes, Node &n, unsigned depth) {
  llvm::StringRef name, ref, doc, s, t, g;
  bool hasName = false, hasRef = false, hasDoc = false, hasType = false, hasF = false,
       hasI = false, hasS = false;
  unsigned nT = 0, nG = 0;
  uint64_t type = 0, fBits = 0, iBits = 0;
  llvm::SmallVector<float, 8> floats;
  llvm::SmallVector<int64_t, 8> ints;
  llvm::SmallVector<llvm::StringRef, 4> strings;
  bool viaProto = false;
  WireReader r(bytes);
  WireField f;
  while (!viaProto && r.next(f)) {
    switch (f.number) {
    case 1: if (f.type != kLen) viaProto = true; name = f.bytes; hasName = true; break;
    case 21: if (f.type != kLen) viaProto = true; ref = f.bytes; hasRef = true; break;
    case 13: if (f.type != kLen) viaProto = true; doc = f.bytes; hasDoc = true; break;
    case 20:
      // An enum value protobuf does not know is an unknown field.
      if (f.type != kVarint || f.varint > 14) viaProto = true;
      type = f.varint;
      hasType = true;
      break;
    case 2: if (f.type != kFixed32) viaProto = true; fBits = f.varint; hasF = true; break;
    case 3: if (f.type != kVarint) viaProto = true; iBits = f.varint; hasI = true; break;
    case 4: if (f.type != kLen) viaProto = true; s = f.bytes; hasS = true; break;
    case 5: if (f.type != kLen) viaProto = true; t = f.bytes; ++nT; break;
    case 6: if (f.type != kLen) viaProto = true; g = f.bytes; ++nG; break;
    case 7:
      if (f.type == kFixed32) {
        uint32_t x = uint32_t(f.varint);
        float v;
        std::memcpy(&v, &x, 4);
        floats.push_back(v);
      } else if (f.type == kLen && f.bytes.size() % 4 == 0) {
        size_t k = floats.size();
        floats.resize(k + f.bytes.size() / 4);
        std::memcpy(floats.data() + k, f.bytes.data(), f.bytes.size());
      } else viaProto = true;
      break;
    case 8:
      if (f.type == kVarint) {
        ints.push_back(int64_t(f.varint));
      } else if (f.type == kLen) {
        const uint8_t *p = reinterpret_cast<const uint8_t *>(f.bytes.data());
        const uint8_t *e = p + f.bytes.size();
        uint64_t v;
        while (p < e) {
          if (wireReadValue(p, e, v) != WireRead::Ok) { viaProto = true; break; }
          ints.push_back(int64_t(v));
        }
      } else viaProto = true;
      break;
    case 9: if (f.type != kLen) viaProto = true; strings.push_back(f.bytes); break;
    default: viaProto = true;
    }
  }
  if (r.bad()) viaProto = true;
  AttrKind k = AttrKind::Undefined;
  if (!viaProto) {
    // inferKind, on what the wire holds (the kinds not read here went to
    // protobuf above).
    AttrKind present = hasF ? AttrKind::Float : hasI ? AttrKind::Int : hasS ? AttrKind::String
                     : nT ? AttrKind::Tensor : nG ? AttrKind::Graph
                     : !floats.empty() ? AttrKind::Floats : !ints.empty() ? AttrKind::Ints
                     : !strings.empty() ? AttrKind::Strings : AttrKind::Undefined;
    k = hasType ? static_cast<AttrKind>(type) : present;
    bool isF = k == AttrKind::Float, isI = k == AttrKind::Int, isS = k == AttrKind::String;
    if (hasType && ref.empty()) {
      bool listKind = k == AttrKind::Floats || k == AttrKind::Ints || k == AttrKind::Strings ||
                      k == AttrKind::Tensors || k == AttrKind::Graphs ||
                      k == AttrKind::SparseTensors || k == AttrKind::TypeProtos;
      if (present != AttrKind::Undefined && present != k) viaProto = true;
      if (present == AttrKind::Undefined && !listKind && k != AttrKind::Undefined &&
          k != AttrKind::Float && k != AttrKind::Int && k != AttrKind::String)
        viaProto = true;
    }
    // Fields the residual would keep, other than an explicit zero/empty of
    // the attribute's own scalar kind, go to protobuf.
    if ((hasName && name.empty()) || (hasRef && ref.empty()) || (hasDoc && doc.empty()) ||
        (hasF && !isF) || (hasI && !isI) || (hasS && !isS) ||
        (!floats.empty() && k != AttrKind::Floats) || (!ints.empty() && k != AttrKind::Ints) ||
        (!strings.empty() && k != AttrKind::Strings) || (nT && k != AttrKind::Tensor) ||
        (nG && k != AttrKind::Graph) || nT > 1 || nG > 1)
      viaProto = true;
  }
  if (viaProto) {
    google::protobuf::Arena arena;
    auto &ap = *google::protobuf::Arena::CreateMessage<proto::AttributeProto>(&arena);
    if (!parsePiece(bytes, ap, depth)) return wireUnsupported("attribute");
    Attribute &a = n.newAttr(ap.name());
    return liftAttribute(ap, n, a);
  }
  Attribute &a = n.newAttr(name);
  a.hasKindField = hasType;
  a.setKind(k);
  a.refAttrName = ref.str();
  a.docString = doc.str();
  // Note [Scalar attribute presence]: a value's field is written back
  // unless valueOmitted; only a reference's explicit zero needs the residual.
  if (hasF) {
    uint32_t x = uint32_t(fBits);
    std::memcpy(&a.f, &x, 4);
    if (a.f == 0 && hasRef) { // f = field 2, fixed32
      a.extras += char((2 << 3) | kFixed32);
      a.extras.append(reinterpret_cast<const char *>(&x), 4);
    }
  }
  if (hasI) {
    a.i = int64_t(iBits);
    if (a.i == 0 && hasRef) a.extras.append({char((3 << 3) | kVarint), char(0)});
  }
  if (hasS) {
    a.s = s.str();
    if (s.empty() && hasRef) a.extras.append({char((4 << 3) | kLen), char(0)});
  }
  a.valueOmitted = (k == AttrKind::Float && !hasF) || (k == AttrKind::Int && !hasI) ||
                   (k == AttrKind::String && !hasS);
  if (k == AttrKind::Floats) a.floats.assign(floats.begin(), floats.end());
  else if (k == AttrKind::Ints) a.ints.assign(ints.begin(), ints.end());
  else if (k == AttrKind::Strings)
    for (llvm::StringRef x : strings) a.strings.push_back(x.str());
  if (nT) {
    // A tensor attribute (a Constant's value) read from a mapped file keeps
    // its raw_data as a view of the file, as main-graph initializers do
    // (Note [Slim parsing]): only its small header goes through protobuf.
    proto::TensorProto tp;
    std::optional<RawView> view;
    llvm::StringRef piece = t;
    std::string slim;
    if (views_ && views_->file) {
      llvm::StringRef file = views_->file->data();
      if (t.data() >= file.data() && t.data() + t.size() <= file.data() + file.size()) {
        if (!wireSlimTensor(reinterpret_cast<const uint8_t *>(file.data()), t, slim, view))
          return wireUnsupported("malformed tensor");
        piece = slim;
      }
    }
    if (!parsePiece(piece, tp, depth + 1)) return wireUnsupported("tensor");
    auto lifted = liftTensor(tp, absl::StrCat(nodePath(&n), " > attribute \"", a.name(), "\""),
                             view ? &*view : nullptr);
    if (!lifted.ok()) return lifted.status();
    a.tensors.push_back(std::make_unique<Tensor>(std::move(*lifted)));
  }
  if (nG) {
    Graph *sub = a.addGraph(std::make_unique<Graph>(ctx_));
    if (auto st = liftGraphWire(g, *sub, depth + 1); !st.ok()) return st;
  }
  return absl::OkStatus();
}

} // namespace

TensorSink::~TensorSink() = default;

absl::StatusOr<std::unique_ptr<Model>> liftProto(proto::ModelProto &mp, LoadSession &session,
                                                 const std::string &sourceName,
                                                 const FileViews *views) {
  auto m = std::make_unique<Model>();
  Lifter l(*m, session, sourceName, views);
  if (auto s = l.liftModel(mp); !s.ok()) return s;
  return m;
}

absl::StatusOr<std::unique_ptr<Model>> liftWire(llvm::StringRef bytes, LoadSession &session,
                                                const std::string &sourceName,
                                                std::shared_ptr<const Buffer> file) {
  auto m = std::make_unique<Model>();
  Lifter l(*m, session, sourceName, nullptr);
  if (auto s = l.liftModelWire(bytes, std::move(file)); !s.ok()) return s;
  return m;
}

} // namespace detail
} // namespace onnxir
