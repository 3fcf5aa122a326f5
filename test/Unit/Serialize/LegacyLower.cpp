//===- LegacyLower.cpp - The old ModelProto lowerer, kept as a test oracle -===//
//
// Before Note [Direct lower] the IR was lowered by building a ModelProto
// (residuals merged in, then the modeled fields set) that protobuf then
// serialized. That lowerer is kept here, unchanged but for its namespace and
// its self-contained helpers, as the reference the direct lowerer's bytes
// are compared with (DirectLowerTest.cpp): the old path defined the output
// format, including where residuals and unknown fields land.
//
//===----------------------------------------------------------------------===//
#include "LegacyLower.h"

#include <cmath>

namespace onnxir {
namespace legacy {

namespace {
template <class M> void applyResidual(const std::string &extras, M *msg) {
  if (!extras.empty()) msg->MergeFromString(extras);
}
} // namespace

TensorSink::~TensorSink() = default;

namespace {

void lowerMetadata(const Metadata &m,
                   google::protobuf::RepeatedPtrField<proto::StringStringEntryProto> *out) {
  for (const auto &[k, v] : m) {
    auto *e = out->Add();
    e->set_key(k);
    e->set_value(v);
  }
}

void lowerShape(const Type *t, proto::TensorShapeProto *sh) {
  for (const Dim &d : t->dims()) {
    auto *pd = sh->add_dim();
    if (d.kind == Dim::Kind::Known) pd->set_dim_value(d.value);
    else if (d.kind == Dim::Kind::Symbolic) pd->set_dim_param(d.param.str());
    if (!d.denotation.empty()) pd->set_denotation(d.denotation.str());
  }
}

} // namespace

static void lowerType(const Type *t, proto::TypeProto *tp) {
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

namespace {

class Lowerer {
public:
  explicit Lowerer(TensorSink *sink) : sink_(sink) {}

  absl::Status lowerModel(const Model &m, proto::ModelProto *mp);

private:
  absl::Status lowerTensor(const Tensor &t, const std::string *name, proto::TensorProto *tp);
  absl::Status lowerSparse(const SparseTensor &s, const std::string *name,
                           proto::SparseTensorProto *sp);
  absl::Status lowerGraph(const Graph &g, proto::GraphProto *gp);
  absl::Status lowerNodes(const Graph &g,
                          google::protobuf::RepeatedPtrField<proto::NodeProto> *out);
  absl::Status lowerAttribute(const Attribute &a, proto::AttributeProto *ap);
  void lowerValueInfoRecords(const Graph &g,
                             google::protobuf::RepeatedPtrField<proto::ValueInfoProto> *out);
  absl::Status lowerFunction(const Function &f, proto::FunctionProto *fp);

  TensorSink *sink_;
};

absl::Status Lowerer::lowerTensor(const Tensor &t, const std::string *name,
                                  proto::TensorProto *tp) {
  applyResidual(t.extras, tp);
  for (int64_t d : t.dims()) tp->add_dims(d);
  if (t.dataTypeRaw() != 0) tp->set_data_type(t.dataTypeRaw());
  const std::string &n = name ? *name : t.name();
  if (!n.empty()) tp->set_name(n);
  if (!t.docString.empty()) tp->set_doc_string(t.docString);
  lowerMetadata(t.metadata, tp->mutable_metadata_props());
  if (t.segment) {
    tp->mutable_segment()->set_begin(t.segment->first);
    tp->mutable_segment()->set_end(t.segment->second);
  }
  if (t.dataLocation) tp->set_data_location((proto::TensorProto::DataLocation)*t.dataLocation);
  if (sink_) {
    auto placed = sink_->place(t, tp);
    if (!placed.ok()) return placed.status();
    if (*placed) return absl::OkStatus();
  }
  switch (t.storage()) {
  case Tensor::Storage::Empty:
    break;
  case Tensor::Storage::Raw: {
    llvm::StringRef r = t.rawData();
    tp->set_raw_data(r.data(), r.size());
    break;
  }
  case Tensor::Storage::Typed:
    switch (t.typedField()) {
    case Tensor::TypedField::Float:
      tp->mutable_float_data()->Add(t.floatData.begin(), t.floatData.end());
      break;
    case Tensor::TypedField::Int32:
      tp->mutable_int32_data()->Add(t.int32Data.begin(), t.int32Data.end());
      break;
    case Tensor::TypedField::String:
      for (const auto &s : t.stringData) tp->add_string_data(s);
      break;
    case Tensor::TypedField::Int64:
      tp->mutable_int64_data()->Add(t.int64Data.begin(), t.int64Data.end());
      break;
    case Tensor::TypedField::Double:
      tp->mutable_double_data()->Add(t.doubleData.begin(), t.doubleData.end());
      break;
    case Tensor::TypedField::Uint64:
      tp->mutable_uint64_data()->Add(t.uint64Data.begin(), t.uint64Data.end());
      break;
    case Tensor::TypedField::None:
      break;
    }
    break;
  case Tensor::Storage::External:
    lowerMetadata(t.external().entries, tp->mutable_external_data());
    if (!t.dataLocation) tp->set_data_location(proto::TensorProto::EXTERNAL);
    break;
  }
  return absl::OkStatus();
}

absl::Status Lowerer::lowerSparse(const SparseTensor &s, const std::string *name,
                                  proto::SparseTensorProto *sp) {
  applyResidual(s.extras, sp);
  if (s.hasValues)
    if (auto st = lowerTensor(s.values, name, sp->mutable_values()); !st.ok()) return st;
  if (s.hasIndices)
    if (auto st = lowerTensor(s.indices, nullptr, sp->mutable_indices()); !st.ok()) return st;
  for (int64_t d : s.dims) sp->add_dims(d);
  return absl::OkStatus();
}

absl::Status Lowerer::lowerAttribute(const Attribute &a, proto::AttributeProto *ap) {
  applyResidual(a.extras, ap);
  if (!a.name().empty()) ap->set_name(a.name());
  if (!a.refAttrName.empty()) ap->set_ref_attr_name(a.refAttrName);
  if (!a.docString.empty()) ap->set_doc_string(a.docString);
  if (a.hasKindField) ap->set_type((proto::AttributeProto::AttributeType)a.kind());
  // Note [Scalar attribute presence]
  bool present = !a.valueOmitted && !a.isReference();
  switch (a.kind()) {
  case AttrKind::Float:
    if (present || a.f != 0 || std::signbit(a.f) || std::isnan(a.f)) ap->set_f(a.f);
    break;
  case AttrKind::Int:
    if (present || a.i != 0) ap->set_i(a.i);
    break;
  case AttrKind::String:
    if (present || !a.s.empty()) ap->set_s(a.s);
    break;
  case AttrKind::Floats:
    ap->mutable_floats()->Add(a.floats.begin(), a.floats.end());
    break;
  case AttrKind::Ints:
    ap->mutable_ints()->Add(a.ints.begin(), a.ints.end());
    break;
  case AttrKind::Strings:
    for (const auto &s : a.strings) ap->add_strings(s);
    break;
  case AttrKind::Tensor:
    if (!a.tensors.empty())
      if (auto s = lowerTensor(*a.tensors[0], nullptr, ap->mutable_t()); !s.ok()) return s;
    break;
  case AttrKind::Tensors:
    for (const auto &t : a.tensors)
      if (auto s = lowerTensor(*t, nullptr, ap->add_tensors()); !s.ok()) return s;
    break;
  case AttrKind::SparseTensor:
    if (!a.sparseTensors.empty())
      if (auto s = lowerSparse(*a.sparseTensors[0], nullptr, ap->mutable_sparse_tensor()); !s.ok())
        return s;
    break;
  case AttrKind::SparseTensors:
    for (const auto &t : a.sparseTensors)
      if (auto s = lowerSparse(*t, nullptr, ap->add_sparse_tensors()); !s.ok()) return s;
    break;
  case AttrKind::TypeProto:
    if (!a.types.empty()) lowerType(a.types[0], ap->mutable_tp());
    break;
  case AttrKind::TypeProtos:
    for (const Type *t : a.types) lowerType(t, ap->add_type_protos());
    break;
  case AttrKind::Graph:
    if (a.numGraphs())
      if (auto s = lowerGraph(*a.graph(0), ap->mutable_g()); !s.ok()) return s;
    break;
  case AttrKind::Graphs:
    for (unsigned i = 0; i < a.numGraphs(); ++i)
      if (auto s = lowerGraph(*a.graph(i), ap->add_graphs()); !s.ok()) return s;
    break;
  case AttrKind::Undefined:
    break;
  }
  return absl::OkStatus();
}

absl::Status Lowerer::lowerNodes(const Graph &g,
                                 google::protobuf::RepeatedPtrField<proto::NodeProto> *out) {
  out->Reserve((int)g.numNodes());
  for (const Node &n : g.nodes()) {
    proto::NodeProto *np = out->Add();
    applyResidual(n.extras, np);
    for (unsigned i = 0; i < n.numOperands(); ++i) {
      Value *v = n.operand(i);
      np->add_input(v ? v->name().str() : std::string());
    }
    for (unsigned i = 0; i < n.numResults(); ++i) {
      Value *v = n.result(i);
      np->add_output(v ? v->name().str() : std::string());
    }
    if (!n.name().empty()) np->set_name(n.name().str());
    if (!n.opType().empty()) np->set_op_type(n.opType().str());
    if (!n.domain().empty()) np->set_domain(n.domain().str());
    if (!n.overload().empty()) np->set_overload(n.overload().str());
    if (!n.docString.empty()) np->set_doc_string(n.docString);
    for (unsigned i = 0; i < n.numAttributes(); ++i)
      if (auto s = lowerAttribute(n.attribute(i), np->add_attribute()); !s.ok()) return s;
    lowerMetadata(n.metadata, np->mutable_metadata_props());
    for (const auto &c : n.deviceConfigurations) {
      auto *dc = np->add_device_configurations();
      applyResidual(c.extras, dc);
      if (c.configurationId) dc->set_configuration_id(*c.configurationId);
      if (c.pipelineStage) dc->set_pipeline_stage(*c.pipelineStage);
      for (const auto &s : c.shardingSpec) {
        auto *ss = dc->add_sharding_spec();
        applyResidual(s.extras, ss);
        if (s.tensorName) ss->set_tensor_name(*s.tensorName);
        ss->mutable_device()->Add(s.device.begin(), s.device.end());
        for (size_t i = 0; i < s.indexToDeviceGroupMap.size(); ++i) {
          auto *e = ss->add_index_to_device_group_map();
          if (i < s.indexToDeviceGroupMapExtras.size())
            applyResidual(s.indexToDeviceGroupMapExtras[i], e);
          if (s.indexToDeviceGroupMap[i].first) e->set_key(*s.indexToDeviceGroupMap[i].first);
          e->mutable_value()->Add(s.indexToDeviceGroupMap[i].second.begin(),
                                  s.indexToDeviceGroupMap[i].second.end());
        }
        for (const auto &d : s.shardedDim) {
          auto *sd = ss->add_sharded_dim();
          applyResidual(d.extras, sd);
          if (d.axis) sd->set_axis(*d.axis);
          for (const auto &x : d.simpleSharding) {
            auto *xs = sd->add_simple_sharding();
            applyResidual(x.extras, xs);
            if (x.kind == ShardingSpec::SimpleShardedDim::Kind::Value) xs->set_dim_value(x.dimValue);
            else if (x.kind == ShardingSpec::SimpleShardedDim::Kind::Param)
              xs->set_dim_param(x.dimParam);
            if (x.numShards) xs->set_num_shards(*x.numShards);
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

void Lowerer::lowerValueInfoRecords(const Graph &g,
                                    google::protobuf::RepeatedPtrField<proto::ValueInfoProto> *out) {
  for (const ValueInfoRecord &r : g.valueInfo()) {
    if (r.erased) continue;
    auto *vi = out->Add();
    applyResidual(r.extras, vi);
    if (r.value) vi->set_name(r.value->name().str());
    else if (!r.name.empty()) vi->set_name(r.name);
    if (r.hasType) {
      const Type *t = r.value && r.value->type() ? r.value->type() : r.type;
      if (t) lowerType(t, vi->mutable_type());
    }
    if (!r.docString.empty()) vi->set_doc_string(r.docString);
    lowerMetadata(r.metadata, vi->mutable_metadata_props());
  }
}

absl::Status Lowerer::lowerGraph(const Graph &g, proto::GraphProto *gp) {
  applyResidual(g.extras, gp);
  if (!g.name.empty()) gp->set_name(g.name);
  if (!g.docString.empty()) gp->set_doc_string(g.docString);
  if (auto s = lowerNodes(g, gp->mutable_node()); !s.ok()) return s;
  for (Value *v : g.initializers()) {
    std::string name = v->name().str();
    if (auto s = lowerTensor(*v->initializer(), &name, gp->add_initializer()); !s.ok()) return s;
  }
  for (Value *v : g.sparseInitializers()) {
    std::string name = v->name().str();
    if (auto s = lowerSparse(*v->sparseInitializer(), &name, gp->add_sparse_initializer()); !s.ok())
      return s;
  }
  for (Value *v : g.inputs()) {
    auto *vi = gp->add_input();
    applyResidual(v->extras, vi);
    vi->set_name(v->name().str());
    if (v->type()) lowerType(v->type(), vi->mutable_type());
    if (!v->docString.empty()) vi->set_doc_string(v->docString);
    lowerMetadata(v->metadata, vi->mutable_metadata_props());
  }
  for (unsigned i = 0; i < g.numOutputs(); ++i) {
    const OutputInfo &info = g.outputInfo(i);
    Value *v = g.output(i);
    auto *vi = gp->add_output();
    applyResidual(info.extras, vi);
    vi->set_name(v ? v->name().str() : std::string());
    if (info.hasType && info.type) lowerType(info.type, vi->mutable_type());
    if (!info.docString.empty()) vi->set_doc_string(info.docString);
    lowerMetadata(info.metadata, vi->mutable_metadata_props());
  }
  lowerValueInfoRecords(g, gp->mutable_value_info());
  for (const auto &q : g.quantizationAnnotations) {
    auto *qa = gp->add_quantization_annotation();
    applyResidual(q.extras, qa);
    if (q.tensorName) qa->set_tensor_name(*q.tensorName);
    lowerMetadata(q.quantParameterTensorNames, qa->mutable_quant_parameter_tensor_names());
  }
  lowerMetadata(g.metadata, gp->mutable_metadata_props());
  return absl::OkStatus();
}

absl::Status Lowerer::lowerFunction(const Function &f, proto::FunctionProto *fp) {
  applyResidual(f.extras, fp);
  if (!f.name.empty()) fp->set_name(f.name);
  if (!f.domain.empty()) fp->set_domain(f.domain);
  if (!f.overload.empty()) fp->set_overload(f.overload);
  if (!f.docString.empty()) fp->set_doc_string(f.docString);
  const Graph &g = f.body();
  for (Value *v : g.inputs()) fp->add_input(v->name().str());
  for (unsigned i = 0; i < g.numOutputs(); ++i) {
    Value *v = g.output(i);
    fp->add_output(v ? v->name().str() : std::string());
  }
  for (const auto &n : f.attributeNames) fp->add_attribute(n);
  for (const auto &a : f.attributeDefaults)
    if (auto s = lowerAttribute(*a, fp->add_attribute_proto()); !s.ok()) return s;
  if (auto s = lowerNodes(g, fp->mutable_node()); !s.ok()) return s;
  for (const auto &o : f.opsetImports) {
    auto *op = fp->add_opset_import();
    applyResidual(o.extras, op);
    if (!o.domain.empty()) op->set_domain(o.domain);
    if (o.version != 0) op->set_version(o.version);
  }
  lowerValueInfoRecords(g, fp->mutable_value_info());
  lowerMetadata(f.metadata, fp->mutable_metadata_props());
  return absl::OkStatus();
}

absl::Status Lowerer::lowerModel(const Model &m, proto::ModelProto *mp) {
  applyResidual(m.extras, mp);
  if (m.irVersion) mp->set_ir_version(*m.irVersion);
  for (const auto &o : m.opsetImports) {
    auto *op = mp->add_opset_import();
    applyResidual(o.extras, op);
    if (!o.domain.empty()) op->set_domain(o.domain);
    if (o.version != 0) op->set_version(o.version);
  }
  if (m.producerName) mp->set_producer_name(*m.producerName);
  if (m.producerVersion) mp->set_producer_version(*m.producerVersion);
  if (m.domain) mp->set_domain(*m.domain);
  if (m.modelVersion) mp->set_model_version(*m.modelVersion);
  if (m.docString) mp->set_doc_string(*m.docString);
  if (m.hasGraph)
    if (auto s = lowerGraph(m.graph(), mp->mutable_graph()); !s.ok()) return s;
  lowerMetadata(m.metadata, mp->mutable_metadata_props());
  for (const auto &ti : m.trainingInfo) mp->add_training_info()->ParseFromString(ti);
  for (const auto &f : m.functions())
    if (auto s = lowerFunction(*f, mp->add_functions()); !s.ok()) return s;
  for (const auto &c : m.configurations) {
    auto *dc = mp->add_configuration();
    applyResidual(c.extras, dc);
    if (c.name) dc->set_name(*c.name);
    if (c.numDevices) dc->set_num_devices(*c.numDevices);
    for (const auto &d : c.device) dc->add_device(d);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status lowerProto(const Model &m, proto::ModelProto *mp, TensorSink *sink) {
  Lowerer l(sink);
  return l.lowerModel(m, mp);
}

std::string serialize(const proto::ModelProto &mp) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream sos(&out);
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    mp.SerializeToCodedStream(&cos);
  }
  return out;
}

} // namespace legacy
} // namespace onnxir
