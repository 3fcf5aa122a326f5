//===- ModelSave.cpp - Lowering for a save, and the streamed writer -------===//
#include "ModelSave.h"
#include "ProtoCommon.h"
#include "WireWriter.h"

#include "onnxir/IR/NodeLookahead.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"

#include <cassert>
#include <algorithm>
#include <climits>
#include <vector>

namespace onnxir {

using detail::OutputFile;

namespace {

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

using detail::TensorPlacement;

/// Decides where each tensor's data goes (DataPlan): moved into one external
/// file at 4096-aligned offsets (written now), or external data written
/// inline. Tensors are visited in the order the lowerer used to meet them
/// (the data file's layout depends on it): per graph its nodes' attributes
/// (subgraphs included), initializers, sparse initializers; per function
/// its attribute defaults, then its nodes.
class Placer {
public:
  Placer(OutputFile *file, const detail::DataPlan &plan) : file_(file), plan_(plan) {}

  absl::Status model(const Model &m) {
    if (m.hasGraph)
      if (auto s = graph(m.graph()); !s.ok()) return s;
    for (const auto &f : m.functions()) {
      for (const auto &a : f->attributeDefaults)
        if (auto s = attribute(*a); !s.ok()) return s;
      if (auto s = nodes(f->body()); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  llvm::DenseMap<const Tensor *, TensorPlacement> placements;
  size_t numMoved = 0;

private:
  absl::Status graph(const Graph &g) {
    if (auto s = nodes(g); !s.ok()) return s;
    for (Value *v : g.initializers())
      if (auto s = tensor(*v->initializer()); !s.ok()) return s;
    for (Value *v : g.sparseInitializers())
      if (auto s = sparse(*v->sparseInitializer()); !s.ok()) return s;
    return absl::OkStatus();
  }
  absl::Status nodes(const Graph &g) {
    for (const Node &n : g.nodes())
      for (unsigned i = 0; i < n.numAttributes(); ++i)
        if (auto s = attribute(n.attribute(i)); !s.ok()) return s;
    return absl::OkStatus();
  }
  absl::Status sparse(const SparseTensor &st) {
    if (st.hasValues)
      if (auto s = tensor(st.values); !s.ok()) return s;
    if (st.hasIndices)
      if (auto s = tensor(st.indices); !s.ok()) return s;
    return absl::OkStatus();
  }
  /// Saves the payloads of a tensor or sparse tensor attribute: a single-value
  /// kind uses only its first item (Attribute.h), the list kind all of them.
  template <class Items, class Save>
  static absl::Status each(const Items &items, bool single, Save save) {
    size_t n = single ? std::min<size_t>(items.size(), 1) : items.size();
    for (size_t i = 0; i < n; ++i)
      if (auto s = save(*items[i]); !s.ok()) return s;
    return absl::OkStatus();
  }
  absl::Status attribute(const Attribute &a) {
    switch (a.kind()) {
    case AttrKind::Tensor:
    case AttrKind::Tensors:
      return each(a.tensors, a.kind() == AttrKind::Tensor,
                  [&](const Tensor &t) { return tensor(t); });
    case AttrKind::SparseTensor:
    case AttrKind::SparseTensors:
      return each(a.sparseTensors, a.kind() == AttrKind::SparseTensor,
                  [&](const SparseTensor &t) { return sparse(t); });
    case AttrKind::Graph:
      if (a.numGraphs()) return graph(*a.graph(0));
      break;
    case AttrKind::Graphs:
      for (unsigned i = 0; i < a.numGraphs(); ++i)
        if (auto s = graph(*a.graph(i)); !s.ok()) return s;
      break;
    default:
      break;
    }
    return absl::OkStatus();
  }
  absl::Status tensor(const Tensor &t) {
    if (t.dataType() == DataType::String) return absl::OkStatus();
    bool isExt = t.storage() == Tensor::Storage::External;
    if (isExt && plan_.inlineExternal) {
      auto data = t.bytes();
      if (!data.ok()) return data.status();
      TensorPlacement p;
      p.kind = TensorPlacement::Kind::Inline;
      p.bytes = *data;
      placements[&t] = p;
      return absl::OkStatus();
    }
    if (!file_ || plan_.location.empty()) return absl::OkStatus();
    if (!isExt && t.storage() != Tensor::Storage::Raw && t.storage() != Tensor::Storage::Typed)
      return absl::OkStatus();
    if (isExt && !plan_.moveExternal) return absl::OkStatus();
    if (!isExt) {
      auto n = t.numElements();
      if (!n) return absl::OkStatus();
      uint64_t bytes = dataTypeStorageBytes(t.dataType(), (uint64_t)*n);
      if (bytes <= plan_.threshold) return absl::OkStatus();
    }
    auto data = t.bytes();
    if (!data.ok()) return data.status();
    uint64_t pad = (4096 - offset_ % 4096) % 4096;
    static const char zeros[4096] = {};
    if (auto s = file_->write(zeros, pad); !s.ok()) return s;
    offset_ += pad;
    if (auto s = writeReleasing(*file_, *data); !s.ok()) return s;
    TensorPlacement p;
    p.kind = TensorPlacement::Kind::Moved;
    p.offset = offset_;
    p.length = data->size();
    placements[&t] = p;
    ++numMoved;
    offset_ += data->size();
    return absl::OkStatus();
  }

  OutputFile *file_;
  const detail::DataPlan &plan_;
  uint64_t offset_ = 0;
};

// Note [Streamed save]
// A plain save must not hold the model twice (the IR's bytes, usually mapped
// from the input, and a serialized copy). The lowerer writes straight to the
// file through a small buffer (Note [Direct lower] in ProtoLower.cpp); the
// raw bytes of big tensors are written from where they lie in chunks, and
// the mapped pages of each chunk are dropped once written.
class FileSink final : public detail::ByteSink {
public:
  FileSink(OutputFile &f, bool release) : f_(f), release_(release) {}
  absl::Status put(const char *p, size_t n) override { return f_.write(p, n); }
  void written(llvm::StringRef c) override {
    if (release_) detail::releaseMappedPages(c);
  }

private:
  OutputFile &f_;
  bool release_;
};

absl::Status overLimit(const std::string &path, uint64_t total) {
  return absl::ResourceExhaustedError(absl::StrCat(
      path, ": the model would be ", total,
      " bytes, over protobuf's 2 GiB limit; save with --external-data=FILE"));
}

} // namespace

//===----------------------------------------------------------------------===//
// LoweredModel
//===----------------------------------------------------------------------===//

namespace detail {

struct LoweredModel::Impl {
  const Model *m = nullptr;
  DataPlan plan;
  std::unique_ptr<Placer> placer;
  std::string location;
};

LoweredModel::LoweredModel() : impl_(std::make_unique<Impl>()) {}
LoweredModel::~LoweredModel() = default;

absl::StatusOr<std::unique_ptr<LoweredModel>> LoweredModel::lower(const Model &m,
                                                                  const DataPlan &plan,
                                                                  OutputFile *dataFile) {
  std::unique_ptr<LoweredModel> lm(new LoweredModel);
  Impl &d = *lm->impl_;
  d.m = &m;
  d.plan = plan;
  d.location = plan.location;
  d.placer = std::make_unique<Placer>(dataFile, d.plan);
  if (plan.inlineExternal || (dataFile && !plan.location.empty()))
    if (auto s = d.placer->model(m); !s.ok()) return s;
  return lm;
}

size_t LoweredModel::numMoved() const { return impl_->placer->numMoved; }

void LoweredModel::setLocation(const std::string &location) { impl_->location = location; }

namespace {
WireLowerOptions wireOptions(const LoweredModel::Impl &d) {
  WireLowerOptions o;
  o.placements = &d.placer->placements;
  o.location = d.location;
  return o;
}
} // namespace

absl::Status LoweredModel::write(OutputFile &out, const std::string &name) {
  Impl &d = *impl_;
  ModelWireLowering wl(*d.m, wireOptions(d));
  uint64_t total = wl.size();
  if (total > (uint64_t)INT_MAX) return overLimit(name, total);
  FileSink sink(out, d.plan.stream);
  return wl.write(sink);
}

void LoweredModel::forEachPlaced(
    llvm::function_ref<void(const Tensor &, std::unique_ptr<Tensor>)> fn) const {
  const Impl &d = *impl_;
  for (const auto &[t, p] : d.placer->placements) {
    auto u = std::make_unique<Tensor>(*t);
    if (p.kind == TensorPlacement::Kind::Inline) {
      // As lowered: raw_data, no data_location (ProtoLower.cpp's tensor()).
      u->setRaw(p.bytes.str());
      u->dataLocation.reset();
    } else {
      ExternalDataRef ref;
      ref.entries = {{"location", d.location},
                     {"offset", std::to_string(p.offset)},
                     {"length", std::to_string(p.length)}};
      ref.location = d.location;
      ref.offset = p.offset;
      ref.length = p.length;
      u->setExternal(std::move(ref), nullptr);
      u->dataLocation = 1;
    }
    fn(*t, std::move(u));
  }
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
    // Only the nodes' own lines are wanted: the lookahead prefetches them
    // from the node array after a -topo (Note [Node lookahead]).
    auto none = [](const Node &) {};
    NodeLookahead ahead(*g, 8, 0, none, none);
    for (Node &n : g->nodes()) {
      ahead.step();
      for (unsigned i = 0; i < n.numAttributes(); ++i) attr(n.attribute(i));
    }
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
  detail::ModelWireLowering wl(m, {});
  uint64_t total = wl.size();
  if (total > (uint64_t)INT_MAX)
    return absl::ResourceExhaustedError("the model is over protobuf's 2 GiB limit; save it with "
                                        "external data");
  std::string out;
  out.reserve(total);
  detail::StringSink sink(out);
  if (auto s = wl.write(sink); !s.ok()) return s;
  return out;
}

absl::Status lowerModel(const Model &m, proto::ModelProto *out, const LowerOptions &opts) {
  out->Clear();
  auto bytes = lowerModel(m, opts);
  if (!bytes.ok()) return bytes.status();
  if (!out->ParseFromString(*bytes))
    return absl::InternalError("the lowered model does not parse back as a ModelProto");
  return absl::OkStatus();
}

} // namespace onnxir
