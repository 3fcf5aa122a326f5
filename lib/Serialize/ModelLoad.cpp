//===- ModelLoad.cpp - The fast load path: buffers and files to the IR ---===//
//
// Binary models: one pre-scan, the direct wire lift first (Note [Wire lift]
// in ProtoLift.cpp); when it gives up, parse (slim when the file is big, Note
// [Slim parsing]) and lift the ModelProto (Note [One pre-scan per load]). What a file is and how it is
// read lives in FileIO; external data in ExternalData (one LoadSession per
// load, Note [Load session]); which format and which directory in
// ModelFile (formatForPath, modelDirectory).
//
//===----------------------------------------------------------------------===//
#include "ModelLoad.h"
#include "ProtoCommon.h"
#include "WireReader.h"
#include "WireScan.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"

#include <climits>
#include <cstring>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Lift
//===----------------------------------------------------------------------===//

namespace {

constexpr int kMaxMessageNesting = 1500;

// Note [Slim parsing]
// Parsing a model with protobuf copies every raw_data byte string out of the
// file. For weight-heavy files the lifter instead parses a "slim" copy of the
// message in which each main-graph initializer's raw_data is empty (still
// present), and takes the bytes as views into the memory-mapped file. The
// slim copy is built by walking the wire format of ModelProto > GraphProto >
// TensorProto only; everything else is copied verbatim. Any wire-format
// surprise makes the walk give up, and the file is parsed the ordinary way.
constexpr size_t kSlimThreshold = 8u << 20;

// Copies message `msg` field by field into `out`, except the
// length-delimited fields numbered `number`, whose payload `sub` rewrites.
// False on malformed input (or a group): the caller parses the usual way.
template <class F>
bool slimCopy(llvm::StringRef msg, uint32_t number, std::string &out, F sub) {
  detail::WireReader r(msg);
  detail::WireField f;
  while (r.next(f)) {
    if (f.number != number || f.type != detail::kLen) {
      out.append(reinterpret_cast<const char *>(f.begin), f.end - f.begin);
      continue;
    }
    std::string payload;
    if (!sub(f.bytes, payload)) return false;
    detail::wireAppendVarint(out, (uint64_t(number) << 3) | detail::kLen);
    detail::wireAppendVarint(out, payload.size());
    out += payload;
  }
  return !r.bad();
}

// ModelProto.graph (7) > GraphProto.initializer (5) > TensorProto.raw_data.
bool slimModel(const uint8_t *base, size_t size, std::string &out,
               std::vector<std::optional<detail::RawView>> &views) {
  out.reserve(size / 64);
  llvm::StringRef model(reinterpret_cast<const char *>(base), size);
  return slimCopy(model, 7, out, [&](llvm::StringRef graph, std::string &g) {
    return slimCopy(graph, 5, g, [&](llvm::StringRef tensor, std::string &t) {
      std::optional<detail::RawView> view;
      bool ok = detail::wireSlimTensor(base, tensor, t, view);
      views.push_back(view);
      return ok;
    });
  });
}

// Bytes that parse as a TensorProto with a known element type and nothing
// unknown (what `.pb` tensor files hold).
bool looksLikeTensor(proto::TensorProto &tp, const char *data, size_t size) {
  return tp.ParseFromArray(data, (int)size) && tp.unknown_fields().empty() &&
         tp.has_data_type() && tp.data_type() >= 1 && tp.data_type() <= 23 &&
         !tp.has_data_location() && tp.external_data_size() == 0;
}

// A message that parses but has neither a graph nor an opset import is not
// a model (protobuf accepts almost any bytes as some message): say what it
// looks like instead of lifting an empty model.
std::string notAModelReason(const char *data, size_t size, const proto::ModelProto &mp) {
  proto::TensorProto tp;
  if (size < (64u << 20) && looksLikeTensor(tp, data, size))
    return "it has no graph and no opset_import, and reads as a TensorProto (a tensor file "
           "such as a test's input_0.pb)";
  if (mp.ByteSizeLong() == 0)
    return "it has no graph and no opset_import (an empty or unrelated protobuf message)";
  return "it has no graph and no opset_import";
}

/// `parsed` (if given) tells whether protobuf parsed the bytes, i.e. whether
/// an error is the lift's rather than the file's.
absl::StatusOr<std::unique_ptr<Model>> liftBytes(const char *data, size_t size,
                                                 detail::LoadSession &session,
                                                 const std::string &source,
                                                 const detail::FileViews *views = nullptr,
                                                 bool *parsed = nullptr) {
  // (Scanned by the caller: Note [One pre-scan per load].)
  if (size == 0) return absl::InvalidArgumentError(source + ": the file is empty");
  if (size > (size_t)INT_MAX)
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", size, " bytes is over protobuf's 2 GiB message limit; large models keep "
                            "their weights in external data"));
  // The parsed message only lives until the IR is built: an arena makes its
  // many small allocations cheap and frees them at once.
  google::protobuf::ArenaOptions arenaOptions;
  arenaOptions.start_block_size = 64 << 10;
  arenaOptions.max_block_size = 4 << 20;
  google::protobuf::Arena arena(arenaOptions);
  proto::ModelProto &mp = *google::protobuf::Arena::CreateMessage<proto::ModelProto>(&arena);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(data), (int)size);
  // Deep enough for any real model (each subgraph level nests three
  // messages), shallow enough that no recursion downstream can exhaust the
  // stack.
  in.SetRecursionLimit(kMaxMessageNesting);
  if (!mp.MergeFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    proto::TensorProto tp;
    if (size < (64u << 20) && looksLikeTensor(tp, data, size))
      return absl::InvalidArgumentError(
          source + ": not an ONNX model: it reads as a TensorProto (a tensor file such as a "
                   "test's input_0.pb)");
    // Locate the error in the file (the slim copy has other offsets).
    llvm::StringRef whole = views ? views->file->data() : llvm::StringRef(data, size);
    if (auto s = detail::scanModelWire(whole, source, 0, kMaxMessageNesting); !s.ok()) return s;
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": not a valid ONNX model (protobuf parsing failed: the file is truncated or "
                "corrupt, or nests messages deeper than ", kMaxMessageNesting, " levels)"));
  }
  if (!mp.has_graph() && mp.opset_import_size() == 0)
    return absl::InvalidArgumentError(absl::StrCat(source, ": not an ONNX model: ",
                                                   notAModelReason(data, size, mp)));
  if (parsed) *parsed = true;
  return detail::liftProto(mp, session, source, views);
}

// Note [One pre-scan per load]
// A binary load walks the wire format once, in quick mode (Note [Wire
// pre-scan]), before anything reads the bytes: the direct wire lift, the
// slim copy (Note [Slim parsing]: it only rewrites raw_data fields of
// messages the scan walked) and protobuf's parse all trust that scan. A
// full scan (minRecurse 0) runs only after protobuf failed, to locate an
// error inside a message the quick scan skipped. (Before, a file the wire
// lift gave up on was scanned three times: before the wire lift, before the
// slim copy, and the slim copy before its parse.)
//
// Note [Located errors kept]
// The wire lift ends in one of three ways: a model; a give-up at a surprise
// (Unimplemented "wire lift: ...", nothing known to be wrong with the
// model); or an error of the lift itself, located (graph path, node, what
// is wrong). After a give-up the ModelProto way gives the result or the
// error of record. After a located error it is tried too (no model that
// way accepts is refused), but when its lift fails as well the wire lift's
// located error is the one reported, not the second attempt's. A file
// protobuf cannot parse at all (nested past its 1,500 levels, say) gets the
// file's error instead: what any reader of the file meets first.
absl::StatusOr<std::unique_ptr<Model>> liftScanned(llvm::StringRef d,
                                                   detail::LoadSession &session,
                                                   const std::string &source,
                                                   std::shared_ptr<const Buffer> file) {
  if (d.empty()) return absl::InvalidArgumentError(source + ": the file is empty");
  // Note [Wire pre-scan]: garbage is refused before protobuf allocates.
  if (auto s = detail::scanModelWire(d, source, detail::kWireQuickMinRecurse); !s.ok()) return s;
  bool big = file && d.size() >= kSlimThreshold;
  absl::Status wireError;
  if (detail::wireLiftEnabled()) {
    auto m = detail::liftWire(d, session, source, big ? file : nullptr);
    if (m.ok()) return m;
    if (!absl::IsUnimplemented(m.status())) wireError = m.status();
  }
  absl::StatusOr<std::unique_ptr<Model>> m = absl::UnknownError("not lifted");
  bool lifted = false, parsed = false;
  if (big) {
    detail::FileViews views;
    views.file = file;
    std::string slim;
    if (slimModel(reinterpret_cast<const uint8_t *>(d.data()), d.size(), slim,
                  views.initializers)) {
      m = liftBytes(slim.data(), slim.size(), session, source, &views, &parsed);
      lifted = true;
    }
  }
  if (!lifted) m = liftBytes(d.data(), d.size(), session, source, nullptr, &parsed);
  if (!m.ok() && !wireError.ok() && parsed) return wireError;
  return m;
}

} // namespace

absl::StatusOr<std::unique_ptr<Model>> liftModel(llvm::StringRef bytes, const LiftOptions &opts) {
  std::string source = opts.sourceName.empty() ? "<buffer>" : opts.sourceName;
  detail::LoadSession session(opts.baseDir, opts.allowExternalLinks);
  return liftScanned(bytes, session, source, nullptr);
}

absl::StatusOr<std::unique_ptr<Model>> liftModel(const proto::ModelProto &mp,
                                                 const LiftOptions &opts) {
  std::string bytes;
  if (!mp.SerializeToString(&bytes))
    return absl::InvalidArgumentError("the ModelProto cannot be serialized");
  return liftModel(llvm::StringRef(bytes), opts);
}


namespace detail {

absl::StatusOr<std::unique_ptr<Model>> liftBuffer(std::shared_ptr<const Buffer> buf,
                                                  LoadSession &session,
                                                  const std::string &source) {
  llvm::StringRef d = buf->data();
  return liftScanned(d, session, source, std::move(buf));
}

} // namespace detail

absl::StatusOr<std::unique_ptr<Model>> loadModel(const std::string &path,
                                                 const LiftOptions &opts) {
  std::string source = opts.sourceName.empty() ? (path == "-" ? "<stdin>" : path) : opts.sourceName;
  auto buf = detail::readInput(path, source);
  if (!buf.ok()) return buf.status();
  detail::LoadSession session(opts.baseDir.empty() ? modelDirectory(path) : opts.baseDir,
                              opts.allowExternalLinks);
  return detail::liftBuffer(*buf, session, source);
}

} // namespace onnxir
