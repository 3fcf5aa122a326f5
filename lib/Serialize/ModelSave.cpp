//===- ModelSave.cpp - Lowering for a save, and the streamed writer -------===//
#include "ModelSave.h"
#include "ProtoCommon.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cassert>
#include <climits>
#include <vector>

namespace onnxir {

using detail::OutputFile;

namespace {

absl::Status writeFailed(const std::string &path, int err) {
  return absl::ResourceExhaustedError(
      absl::StrCat(path, ": write failed", err ? ": " + detail::errnoText(err) : ""));
}

// Copies `data` to `f` in chunks, dropping each chunk's mapped pages once
// written, so that peak memory stays near one chunk however big the data.
absl::Status writeReleasing(OutputFile &f, llvm::StringRef data) {
  constexpr size_t kChunk = 16u << 20;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    llvm::StringRef c = data.substr(at, kChunk);
    if (auto s = f.write(c.data(), c.size()); !s.ok()) return s;
    detail::releaseMappedPages(c);
  }
  return absl::OkStatus();
}

/// Moves tensor data into one external file at 4096-aligned offsets, or
/// writes external tensors inline (DataPlan).
class DataSink final : public detail::TensorSink {
public:
  DataSink(OutputFile *file, const detail::DataPlan &plan) : file_(file), plan_(plan) {}

  absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) override {
    if (t.dataType() == DataType::String) return false;
    bool isExt = t.storage() == Tensor::Storage::External;
    if (isExt && plan_.inlineExternal) {
      auto data = t.bytes();
      if (!data.ok()) return data.status();
      out->clear_external_data();
      out->clear_data_location();
      out->set_raw_data(data->data(), data->size());
      return true;
    }
    if (!file_ || plan_.location.empty()) return false;
    if (!isExt && t.storage() != Tensor::Storage::Raw && t.storage() != Tensor::Storage::Typed)
      return false;
    if (isExt && !plan_.moveExternal) return false;
    if (!isExt) {
      auto n = t.numElements();
      if (!n) return false;
      uint64_t bytes = dataTypeStorageBytes(t.dataType(), (uint64_t)*n);
      if (bytes <= plan_.threshold) return false;
    }
    auto data = t.bytes();
    if (!data.ok()) return data.status();
    uint64_t pad = (4096 - offset_ % 4096) % 4096;
    static const char zeros[4096] = {};
    if (auto s = file_->write(zeros, pad); !s.ok()) return s;
    offset_ += pad;
    if (auto s = writeReleasing(*file_, *data); !s.ok()) return s;
    out->clear_raw_data();
    out->clear_float_data();
    out->clear_int32_data();
    out->clear_int64_data();
    out->clear_double_data();
    out->clear_uint64_data();
    out->clear_external_data();
    auto add = [&](const char *k, const std::string &v) {
      auto *e = out->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", plan_.location);
    add("offset", std::to_string(offset_));
    add("length", std::to_string(data->size()));
    out->set_data_location(proto::TensorProto::EXTERNAL);
    offset_ += data->size();
    moved_.push_back(out);
    return true;
  }
  const std::vector<proto::TensorProto *> &moved() const { return moved_; }

private:
  OutputFile *file_;
  const detail::DataPlan &plan_;
  uint64_t offset_ = 0;
  std::vector<proto::TensorProto *> moved_;
};

// Note [Streamed save]
// Lowering copies every raw tensor into the ModelProto, so a plain save holds
// the model twice (the IR's bytes, usually mapped from the input, and the
// message). Instead, the raw bytes of big main-graph initializers are left
// out of the message (StreamSink) and spliced in while writing: the message
// is written in pieces in field-number order, exactly as protobuf would
// write it whole (known fields by number, then unknown ones), with the
// lengths of the enclosing messages computed up front. Mapped pages are
// dropped as they are written.
class StreamSink final : public detail::TensorSink {
public:
  StreamSink(const Model &m, detail::TensorSink *next) : next_(next) {
    for (Value *v : m.graph().initializers()) {
      const Tensor *t = v->initializer();
      if (t->storage() == Tensor::Storage::Raw && t->rawData().size() >= kMinBytes)
        candidates_.insert(t);
    }
  }
  absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) override {
    if (next_) {
      auto placed = next_->place(t, out);
      if (!placed.ok() || *placed) return placed;
    }
    if (!candidates_.count(&t)) return false;
    spliced_[out] = t.rawData();
    return true;
  }
  /// Raw bytes to write as raw_data of these (main-graph initializer) protos.
  const llvm::DenseMap<const proto::TensorProto *, llvm::StringRef> &spliced() const {
    return spliced_;
  }

private:
  static constexpr size_t kMinBytes = 64 * 1024;
  detail::TensorSink *next_;
  llvm::DenseSet<const Tensor *> candidates_;
  llvm::DenseMap<const proto::TensorProto *, llvm::StringRef> spliced_;
};

// The message built by lowering lives until it is written.
google::protobuf::ArenaOptions lowerArenaOptions() {
  google::protobuf::ArenaOptions o;
  o.start_block_size = 64 << 10;
  o.max_block_size = 4 << 20;
  return o;
}

size_t varintSize(uint64_t v) {
  return google::protobuf::io::CodedOutputStream::VarintSize64(v);
}

// Writes `mp` with the raw_data of `spliced` initializers of its main graph
// inserted (Note [Streamed save]). Takes the message apart on the way.
absl::Status writeStreamed(proto::ModelProto &mp,
                           const llvm::DenseMap<const proto::TensorProto *, llvm::StringRef> &spliced,
                           OutputFile &f, const std::string &path) {
  using google::protobuf::Arena;
  using google::protobuf::io::CodedOutputStream;
  // Every piece lives on the message's arena, so moving fields between them
  // swaps pointers instead of copying.
  Arena *arena = mp.GetArena();
  assert(arena && "saveModel lowers into an arena");
  if (!mp.has_graph())
    return absl::InternalError(path + ": streamed tensors but no graph was written");
  // ModelProto: fields 1-6, then graph (7), then the rest.
  proto::ModelProto &mHead = *Arena::CreateMessage<proto::ModelProto>(arena);
  if (mp.has_ir_version()) mHead.set_ir_version(mp.ir_version());
  if (mp.has_producer_name()) mHead.set_producer_name(mp.producer_name());
  if (mp.has_producer_version()) mHead.set_producer_version(mp.producer_version());
  if (mp.has_domain()) mHead.set_domain(mp.domain());
  if (mp.has_model_version()) mHead.set_model_version(mp.model_version());
  if (mp.has_doc_string()) mHead.set_doc_string(mp.doc_string());
  mp.clear_ir_version();
  mp.clear_producer_name();
  mp.clear_producer_version();
  mp.clear_domain();
  mp.clear_model_version();
  mp.clear_doc_string();
  proto::GraphProto *graph = mp.unsafe_arena_release_graph();
  // GraphProto: node (1) and name (2), then initializer (5), then the rest.
  proto::GraphProto &gHead = *Arena::CreateMessage<proto::GraphProto>(arena);
  gHead.mutable_node()->Swap(graph->mutable_node());
  if (graph->has_name()) gHead.set_name(graph->name());
  graph->clear_name();
  proto::GraphProto &initHolder = *Arena::CreateMessage<proto::GraphProto>(arena);
  initHolder.mutable_initializer()->Swap(graph->mutable_initializer());
  google::protobuf::RepeatedPtrField<proto::TensorProto> &inits = *initHolder.mutable_initializer();
  // TensorProto of a spliced initializer: fields 1-8, raw_data (9), the rest.
  struct Part {
    proto::TensorProto *head = nullptr;
    llvm::StringRef raw;
    size_t len = 0;
  };
  std::vector<Part> parts(inits.size());
  uint64_t gLen = gHead.ByteSizeLong() + graph->ByteSizeLong();
  size_t found = 0;
  for (int i = 0; i < inits.size(); ++i) {
    proto::TensorProto &tp = *inits.Mutable(i);
    Part &p = parts[i];
    auto it = spliced.find(&tp);
    if (it != spliced.end()) {
      ++found;
      p.raw = it->second;
      p.head = Arena::CreateMessage<proto::TensorProto>(arena);
      proto::TensorProto &h = *p.head;
      h.mutable_dims()->Swap(tp.mutable_dims());
      if (tp.has_data_type()) h.set_data_type(tp.data_type());
      if (tp.has_segment()) h.mutable_segment()->Swap(tp.mutable_segment());
      h.mutable_float_data()->Swap(tp.mutable_float_data());
      h.mutable_int32_data()->Swap(tp.mutable_int32_data());
      h.mutable_string_data()->Swap(tp.mutable_string_data());
      h.mutable_int64_data()->Swap(tp.mutable_int64_data());
      if (tp.has_name()) h.set_name(tp.name());
      tp.clear_data_type();
      tp.clear_segment();
      tp.clear_name();
      p.len = h.ByteSizeLong() + 1 + varintSize(p.raw.size()) + p.raw.size() + tp.ByteSizeLong();
    } else {
      p.len = tp.ByteSizeLong();
    }
    gLen += 1 + varintSize(p.len) + p.len;
  }
  if (found != spliced.size())
    return absl::InternalError(path + ": a streamed tensor is not a main-graph initializer");
  uint64_t total = mHead.ByteSizeLong() + 1 + varintSize(gLen) + gLen + mp.ByteSizeLong();
  if (total > (uint64_t)INT_MAX)
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": the model would be ", total,
        " bytes, over protobuf's 2 GiB limit; save with --external-data=FILE"));

  google::protobuf::io::FileOutputStream fos(f.fd());
  bool ok = true;
  {
    CodedOutputStream cos(&fos);
    cos.SetSerializationDeterministic(true);
    mHead.SerializeWithCachedSizes(&cos);
    cos.WriteTag(7 << 3 | 2);
    cos.WriteVarint64(gLen);
    gHead.SerializeWithCachedSizes(&cos);
    for (int i = 0; i < inits.size() && ok; ++i) {
      proto::TensorProto &tp = *inits.Mutable(i);
      Part &p = parts[i];
      cos.WriteTag(5 << 3 | 2);
      cos.WriteVarint64(p.len);
      if (p.head) {
        p.head->SerializeWithCachedSizes(&cos);
        cos.WriteTag(9 << 3 | 2);
        cos.WriteVarint64(p.raw.size());
        constexpr size_t kChunk = 16u << 20;
        for (size_t at = 0; at < p.raw.size(); at += kChunk) {
          llvm::StringRef c = p.raw.substr(at, kChunk);
          cos.WriteRaw(c.data(), (int)c.size());
          detail::releaseMappedPages(c);
        }
      }
      tp.SerializeWithCachedSizes(&cos);
      ok = !cos.HadError();
    }
    graph->SerializeWithCachedSizes(&cos);
    mp.SerializeWithCachedSizes(&cos);
    ok = ok && !cos.HadError();
  }
  if (!ok || !fos.Flush() || fos.GetErrno())
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": write failed", fos.GetErrno() ? ": " + detail::errnoText(fos.GetErrno()) : ""));
  return absl::OkStatus();
}

absl::Status writeProto(const proto::ModelProto &mp, OutputFile &f, const std::string &path) {
  size_t size = mp.ByteSizeLong();
  if (size > (size_t)INT_MAX)
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": the model would be ", size,
        " bytes, over protobuf's 2 GiB limit; save with --external-data=FILE"));
  google::protobuf::io::FileOutputStream fos(f.fd());
  {
    google::protobuf::io::CodedOutputStream cos(&fos);
    cos.SetSerializationDeterministic(true);
    mp.SerializeWithCachedSizes(&cos);
    if (cos.HadError()) return writeFailed(path, fos.GetErrno());
  }
  if (!fos.Flush() || fos.GetErrno()) return writeFailed(path, fos.GetErrno());
  return absl::OkStatus();
}


} // namespace

//===----------------------------------------------------------------------===//
// LoweredModel
//===----------------------------------------------------------------------===//

namespace detail {

struct LoweredModel::Impl {
  google::protobuf::Arena arena{lowerArenaOptions()};
  proto::ModelProto *mp = nullptr;
  DataPlan plan;
  std::unique_ptr<DataSink> data;
  std::unique_ptr<StreamSink> stream;
};

LoweredModel::LoweredModel() : impl_(std::make_unique<Impl>()) {}
LoweredModel::~LoweredModel() = default;

absl::StatusOr<std::unique_ptr<LoweredModel>> LoweredModel::lower(const Model &m,
                                                                  const DataPlan &plan,
                                                                  OutputFile *dataFile) {
  std::unique_ptr<LoweredModel> lm(new LoweredModel);
  Impl &d = *lm->impl_;
  d.plan = plan;
  d.mp = google::protobuf::Arena::CreateMessage<proto::ModelProto>(&d.arena);
  d.data = std::make_unique<DataSink>(dataFile, d.plan);
  TensorSink *sink = d.data.get();
  if (plan.stream) {
    d.stream = std::make_unique<StreamSink>(m, sink);
    sink = d.stream.get();
  }
  if (auto s = lowerProto(m, d.mp, sink); !s.ok()) return s;
  return lm;
}

size_t LoweredModel::numMoved() const { return impl_->data->moved().size(); }

void LoweredModel::setLocation(const std::string &location) {
  for (proto::TensorProto *tp : impl_->data->moved())
    for (auto &e : *tp->mutable_external_data())
      if (e.key() == "location") e.set_value(location);
}

absl::Status LoweredModel::write(OutputFile &out, const std::string &name) {
  Impl &d = *impl_;
  if (d.stream && !d.stream->spliced().empty())
    return writeStreamed(*d.mp, d.stream->spliced(), out, name);
  return writeProto(*d.mp, out, name);
}

absl::StatusOr<std::unique_ptr<Model>> LoweredModel::relift(const std::string &source) {
  assert((!impl_->stream || impl_->stream->spliced().empty()) && "relift of a streamed save");
  return liftProto(*impl_->mp, "", source);
}

} // namespace detail

// Every tensor of the model: dense and sparse initializers, attribute
// tensors of every node (nested graphs and function bodies included) and of
// function attribute defaults.
void detail::forEachTensor(const Model &m, llvm::function_ref<void(const Tensor &)> fn) {
  auto attr = [&](const Attribute &a) {
    for (const auto &t : a.tensors) fn(*t);
    for (const auto &st : a.sparseTensors) {
      fn(st->values);
      fn(st->indices);
    }
  };
  const_cast<Model &>(m).walkGraphs([&](Graph *g) {
    for (Value *v : g->initializers()) fn(*v->initializer());
    for (Value *v : g->sparseInitializers()) {
      fn(v->sparseInitializer()->values);
      fn(v->sparseInitializer()->indices);
    }
    for (Node &n : g->nodes())
      for (unsigned i = 0; i < n.numAttributes(); ++i) attr(n.attribute(i));
  });
  for (const auto &f : m.functions())
    for (const auto &a : f->attributeDefaults) {
      attr(*a);
      // A graph default is its own root, not reached from the function body.
      for (unsigned i = 0; i < a->numGraphs(); ++i)
        a->graph(i)->walkGraphs([&](Graph *g) {
          for (Value *v : g->initializers()) fn(*v->initializer());
          for (Node &n : g->nodes())
            for (unsigned k = 0; k < n.numAttributes(); ++k) attr(n.attribute(k));
        });
    }
}

absl::StatusOr<std::string> lowerModel(const Model &m, const LowerOptions &) {
  google::protobuf::Arena arena(lowerArenaOptions());
  proto::ModelProto &mp = *google::protobuf::Arena::CreateMessage<proto::ModelProto>(&arena);
  if (auto s = detail::lowerProto(m, &mp, nullptr); !s.ok()) return s;
  if (mp.ByteSizeLong() > (size_t)INT_MAX)
    return absl::ResourceExhaustedError("the model is over protobuf's 2 GiB limit; save it with "
                                        "external data");
  std::string out;
  google::protobuf::io::StringOutputStream sos(&out);
  {
    google::protobuf::io::CodedOutputStream cos(&sos);
    cos.SetSerializationDeterministic(true);
    mp.SerializeToCodedStream(&cos);
  }
  return out;
}

absl::Status lowerModel(const Model &m, proto::ModelProto *out, const LowerOptions &) {
  out->Clear();
  return detail::lowerProto(m, out, nullptr);
}


} // namespace onnxir
