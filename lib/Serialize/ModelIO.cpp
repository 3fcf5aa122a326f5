//===- ModelIO.cpp - Files, buffers, external data, atomic saves ----------===//
#include "ProtoCommon.h"
#include "WireScan.h"
#include "onnxir/Serialize/ProtoIO.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cassert>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace onnxir {
namespace detail {

namespace {

/// Live read-only file mappings made by MappedBuffer, by start address, so
/// that releaseMappedPages can tell a mapped window from heap memory.
struct MappingRegistry {
  std::mutex mu;
  std::map<uintptr_t, size_t> ranges;
  static MappingRegistry &get() {
    static MappingRegistry *r = new MappingRegistry; // never destroyed
    return *r;
  }
};

/// A read-only memory mapping.
class MappedBuffer final : public Buffer {
public:
  MappedBuffer(void *base, size_t mapLen, const char *data, size_t len)
      : base_(base), mapLen_(mapLen), data_(data), len_(len) {
    auto &r = MappingRegistry::get();
    std::lock_guard<std::mutex> lock(r.mu);
    r.ranges[(uintptr_t)base_] = mapLen_;
  }
  ~MappedBuffer() override {
    {
      auto &r = MappingRegistry::get();
      std::lock_guard<std::mutex> lock(r.mu);
      r.ranges.erase((uintptr_t)base_);
    }
    if (base_) ::munmap(base_, mapLen_);
  }
  llvm::StringRef data() const override { return {data_, len_}; }

private:
  void *base_;
  size_t mapLen_;
  const char *data_;
  size_t len_;
};

std::string errnoText() { return std::strerror(errno); }

std::string dirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string realDir(const std::string &dir) {
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf)) return buf;
  return dir;
}

} // namespace

void releaseMappedPages(llvm::StringRef bytes) {
  if (bytes.empty()) return;
  uintptr_t lo = (uintptr_t)bytes.data(), hi = lo + bytes.size();
  auto &r = MappingRegistry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ranges.upper_bound(lo);
  if (it == r.ranges.begin()) return;
  --it;
  uintptr_t mlo = it->first, mhi = it->first + it->second;
  if (lo < mlo || lo >= mhi) return; // not in a file mapping of ours
  hi = std::min(hi, mhi);
  // The mapping is private, read-only and never written: dropping pages only
  // makes a later read fault them in again from the file, so the range may be
  // rounded out to whole pages.
  uintptr_t page = (uintptr_t)::sysconf(_SC_PAGESIZE);
  uintptr_t a = lo / page * page, b = std::min((hi + page - 1) / page * page, mhi);
  if (a < mlo) a = mlo;
  ::madvise((void *)a, b - a, MADV_DONTNEED);
}

absl::StatusOr<std::shared_ptr<const Buffer>> mapFileRange(const std::string &path,
                                                           uint64_t offset, uint64_t length) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\": ", errnoText()));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot stat \"", path, "\": ", errnoText()));
  }
  uint64_t size = (uint64_t)st.st_size;
  if (offset > size || length > size - offset) {
    ::close(fd);
    return absl::OutOfRangeError(absl::StrCat("range [", offset, ", ", offset + length,
                                              ") is outside \"", path, "\" (", size, " bytes)"));
  }
  if (length == 0) {
    ::close(fd);
    return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(std::string()));
  }
  uint64_t page = (uint64_t)::sysconf(_SC_PAGESIZE);
  uint64_t start = offset / page * page;
  size_t mapLen = (size_t)(offset + length - start);
  void *p = ::mmap(nullptr, mapLen, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
  ::close(fd);
  if (p == MAP_FAILED)
    return absl::InternalError(absl::StrCat("cannot map \"", path, "\": ", errnoText()));
  return std::shared_ptr<const Buffer>(std::make_shared<MappedBuffer>(
      p, mapLen, static_cast<const char *>(p) + (offset - start), (size_t)length));
}

absl::StatusOr<std::string> resolveExternalPath(const std::string &baseDir,
                                                const std::string &location) {
  auto bad = [&](const std::string &why) {
    return absl::PermissionDeniedError(
        absl::StrCat("external data location \"", location, "\" rejected: ", why));
  };
  if (location.empty()) return bad("it is empty");
  if (location[0] == '/' || location[0] == '\\') return bad("absolute paths are not allowed");
  if (location.size() > 1 && location[1] == ':') return bad("absolute paths are not allowed");
  if (location.find('\0') != std::string::npos) return bad("it contains a NUL byte");
  // No `..` component, with either separator.
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2)
      return bad("`..` components are not allowed");
    start = end + 1;
  }
  std::string path = baseDir + "/" + location;
  // Links must not lead out of the model's directory.
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved))
    return absl::NotFoundError(
        absl::StrCat("external data file \"", location, "\" not found: ", errnoText()));
  std::string base = realDir(baseDir);
  std::string r = resolved;
  if (r.compare(0, base.size(), base) != 0 || (r.size() > base.size() && r[base.size()] != '/' &&
                                               base != "/"))
    return bad("it resolves outside the model's directory");
  struct stat st;
  if (::stat(resolved, &st) != 0 || !S_ISREG(st.st_mode)) return bad("it is not a regular file");
  return r;
}

absl::StatusOr<ExternalLoader> bindExternal(const std::string &baseDir, ExternalDataRef &ref,
                                            const std::string &tensorName) {
  if (baseDir.empty()) return ExternalLoader();
  auto path = resolveExternalPath(baseDir, ref.location);
  if (!path.ok()) return path.status();
  std::string p = *path;
  // Bounds are checked now, so a bad file fails at load, not later.
  struct stat st;
  if (::stat(p.c_str(), &st) != 0)
    return absl::NotFoundError(
        absl::StrCat("external data file \"", ref.location, "\" not found"));
  uint64_t size = (uint64_t)st.st_size;
  uint64_t off = ref.offset.value_or(0);
  if (off > size)
    return absl::OutOfRangeError(absl::StrCat("external data offset ", off,
                                              " is beyond the end of \"", ref.location, "\" (",
                                              size, " bytes)"));
  uint64_t len = ref.length.value_or(size - off);
  if (len > size - off)
    return absl::OutOfRangeError(absl::StrCat("external data range [", off, ", ", off + len,
                                              ") is outside \"", ref.location, "\" (", size,
                                              " bytes)"));
  ref.resolvedPath = p;
  std::string tname = tensorName;
  return ExternalLoader([p, off, len, tname](const ExternalDataRef &)
                            -> absl::StatusOr<std::shared_ptr<const Buffer>> {
    auto b = mapFileRange(p, off, len);
    if (!b.ok())
      return absl::Status(b.status().code(),
                          absl::StrCat("tensor \"", tname, "\": ", b.status().message()));
    return b;
  });
}

} // namespace detail

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

bool readVarint(const uint8_t *&p, const uint8_t *end, uint64_t &v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p >= end) return false;
    uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out += char(v | 0x80);
    v >>= 7;
  }
  out += char(v);
}

// Advances p over one field's payload; false on malformed input or groups.
bool skipPayload(const uint8_t *&p, const uint8_t *end, unsigned wt) {
  uint64_t v;
  switch (wt) {
  case 0: return readVarint(p, end, v);
  case 1: if (end - p < 8) return false; p += 8; return true;
  case 5: if (end - p < 4) return false; p += 4; return true;
  case 2:
    if (!readVarint(p, end, v) || v > (uint64_t)(end - p)) return false;
    p += v;
    return true;
  default: return false;
  }
}

// Walks one message; `onLen(field, payloadBegin, payloadEnd, out)` may handle
// length-delimited fields itself (returning true) or leave them to be copied.
template <class F>
bool slimMessage(const uint8_t *p, const uint8_t *end, std::string &out, F onLen) {
  while (p < end) {
    const uint8_t *start = p;
    uint64_t key;
    if (!readVarint(p, end, key)) return false;
    unsigned wt = key & 7;
    uint64_t field = key >> 3;
    if (wt == 2) {
      const uint8_t *q = p;
      uint64_t len;
      if (!readVarint(q, end, len) || len > (uint64_t)(end - q)) return false;
      int handled = onLen(field, key, q, q + len, out);
      if (handled < 0) return false;
      if (handled) {
        p = q + len;
        continue;
      }
    }
    if (!skipPayload(p, end, wt)) return false;
    out.append(reinterpret_cast<const char *>(start), p - start);
  }
  return true;
}

bool slimModel(const uint8_t *base, size_t size, std::string &out,
               std::vector<std::optional<detail::RawView>> &views) {
  out.reserve(size / 64);
  auto onTensor = [&](const uint8_t *b, const uint8_t *e, std::string &tout) {
    std::optional<detail::RawView> view;
    bool ok = slimMessage(b, e, tout, [&](uint64_t f, uint64_t key, const uint8_t *pb,
                                          const uint8_t *pe, std::string &o) -> int {
      if (f != 9) return 0;
      view = detail::RawView{uint64_t(pb - base), uint64_t(pe - pb)};
      writeVarint(o, key);
      writeVarint(o, 0); // present, empty: the lifter takes the view
      return 1;
    });
    views.push_back(view);
    return ok;
  };
  auto onGraph = [&](const uint8_t *b, const uint8_t *e, std::string &gout) {
    return slimMessage(b, e, gout, [&](uint64_t f, uint64_t key, const uint8_t *pb,
                                       const uint8_t *pe, std::string &o) -> int {
      if (f != 5) return 0;
      std::string t;
      if (!onTensor(pb, pe, t)) return -1;
      writeVarint(o, key);
      writeVarint(o, t.size());
      o += t;
      return 1;
    });
  };
  return slimMessage(base, base + size, out, [&](uint64_t f, uint64_t key, const uint8_t *pb,
                                                 const uint8_t *pe, std::string &o) -> int {
    if (f != 7) return 0;
    std::string g;
    if (!onGraph(pb, pe, g)) return -1;
    writeVarint(o, key);
    writeVarint(o, g.size());
    o += g;
    return 1;
  });
}

absl::StatusOr<std::unique_ptr<Model>> liftBytes(const char *data, size_t size,
                                                 const LiftOptions &opts,
                                                 const std::string &source,
                                                 const detail::FileViews *views = nullptr) {
  if (size == 0) return absl::InvalidArgumentError(source + ": the file is empty");
  // Note [Wire pre-scan]: garbage is refused before protobuf allocates.
  if (auto s = detail::scanModelWire({data, size}, source, detail::kWireQuickMinRecurse); !s.ok())
    return s;
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
    // Locate the error in the file (the slim copy has other offsets).
    llvm::StringRef whole = views ? views->file->data() : llvm::StringRef(data, size);
    if (auto s = detail::scanModelWire(whole, source, 0, kMaxMessageNesting); !s.ok()) return s;
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": not a valid ONNX model (protobuf parsing failed: the file is truncated or "
                "corrupt, or nests messages deeper than ", kMaxMessageNesting, " levels)"));
  }
  return detail::liftProto(mp, opts.baseDir, source, views);
}

} // namespace

absl::StatusOr<std::unique_ptr<Model>> liftModel(llvm::StringRef bytes, const LiftOptions &opts) {
  std::string source = opts.sourceName.empty() ? "<buffer>" : opts.sourceName;
  return liftBytes(bytes.data(), bytes.size(), opts, source);
}

absl::StatusOr<std::unique_ptr<Model>> liftModel(const proto::ModelProto &mp,
                                                 const LiftOptions &opts) {
  std::string bytes;
  if (!mp.SerializeToString(&bytes))
    return absl::InvalidArgumentError("the ModelProto cannot be serialized");
  return liftModel(llvm::StringRef(bytes), opts);
}

absl::StatusOr<std::unique_ptr<Model>> loadModel(const std::string &path,
                                                 const LiftOptions &opts) {
  LiftOptions o = opts;
  if (o.sourceName.empty()) o.sourceName = path == "-" ? "<stdin>" : path;
  if (path == "-") {
    std::string bytes((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (o.baseDir.empty()) o.baseDir = ".";
    return liftBytes(bytes.data(), bytes.size(), o, o.sourceName);
  }
  if (o.baseDir.empty()) o.baseDir = detail::dirOf(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(path + ": is a directory");
  if (st.st_size == 0) return absl::InvalidArgumentError(path + ": the file is empty");
  auto buf = detail::mapFileRange(path, 0, (uint64_t)st.st_size);
  if (!buf.ok()) return absl::Status(buf.status().code(), path + ": " + std::string(buf.status().message()));
  llvm::StringRef d = (*buf)->data();
  if (d.size() >= kSlimThreshold) {
    if (auto s = detail::scanModelWire(d, o.sourceName, detail::kWireQuickMinRecurse); !s.ok())
      return s;
    detail::FileViews views;
    views.file = *buf;
    std::string slim;
    if (slimModel(reinterpret_cast<const uint8_t *>(d.data()), d.size(), slim,
                  views.initializers))
      return liftBytes(slim.data(), slim.size(), o, o.sourceName, &views);
  }
  return liftBytes(d.data(), d.size(), o, o.sourceName);
}

//===----------------------------------------------------------------------===//
// Lower and save
//===----------------------------------------------------------------------===//

namespace {

/// A file written beside its target and renamed into place on commit.
class AtomicFile {
public:
  explicit AtomicFile(std::string target) : target_(std::move(target)) {}
  ~AtomicFile() { abandon(); }

  absl::Status open() {
    tmp_ = detail::dirOf(target_) + "/." + detail::baseName(target_) + ".tmp.XXXXXX";
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ < 0)
      return absl::PermissionDeniedError(
          absl::StrCat(target_, ": cannot create a temporary file beside it: ", detail::errnoText()));
    // Keep the target's permissions if it exists; else the usual 0644 - umask.
    struct stat st;
    mode_t mode = 0666;
    if (::stat(target_.c_str(), &st) == 0) mode = st.st_mode & 07777;
    else {
      mode_t um = ::umask(0);
      ::umask(um);
      mode &= ~um;
    }
    ::fchmod(fd_, mode);
    return absl::OkStatus();
  }
  int fd() const { return fd_; }
  absl::Status write(const char *p, size_t n) {
    while (n) {
      ssize_t w = ::write(fd_, p, n > (1u << 30) ? (1u << 30) : n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return absl::ResourceExhaustedError(
            absl::StrCat(target_, ": write failed: ", detail::errnoText()));
      }
      p += w;
      n -= (size_t)w;
    }
    return absl::OkStatus();
  }
  absl::Status commit() {
    if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
      fd_ = -1;
      return absl::ResourceExhaustedError(
          absl::StrCat(target_, ": cannot flush: ", detail::errnoText()));
    }
    fd_ = -1;
    if (::rename(tmp_.c_str(), target_.c_str()) != 0)
      return absl::PermissionDeniedError(
          absl::StrCat(target_, ": cannot replace: ", detail::errnoText()));
    tmp_.clear();
    return absl::OkStatus();
  }
  void abandon() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
  }

private:
  std::string target_, tmp_;
  int fd_ = -1;
};

// Copies `data` to `f` in chunks, dropping each chunk's mapped pages once
// written, so that peak memory stays near one chunk however big the data.
absl::Status writeReleasing(AtomicFile &f, llvm::StringRef data) {
  constexpr size_t kChunk = 16u << 20;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    llvm::StringRef c = data.substr(at, kChunk);
    if (auto s = f.write(c.data(), c.size()); !s.ok()) return s;
    detail::releaseMappedPages(c);
  }
  return absl::OkStatus();
}

/// Moves tensor data into one external file at 4096-aligned offsets.
class ExternalWriter final : public detail::TensorSink {
public:
  ExternalWriter(AtomicFile *file, std::string location, uint64_t threshold, bool moveExternal,
                 std::string outDir)
      : file_(file), location_(std::move(location)), threshold_(threshold),
        moveExternal_(moveExternal), outDir_(std::move(outDir)) {}

  absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) override {
    if (t.dataType() == DataType::String) return false;
    bool isExt = t.storage() == Tensor::Storage::External;
    if (!isExt && t.storage() != Tensor::Storage::Raw && t.storage() != Tensor::Storage::Typed)
      return false;
    if (!file_) {
      return false;
    }
    if (isExt && !moveExternal_) return false;
    if (!isExt) {
      auto n = t.numElements();
      if (!n) return false;
      uint64_t bytes = dataTypeStorageBytes(t.dataType(), (uint64_t)*n);
      if (bytes <= threshold_) return false;
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
    add("location", location_);
    add("offset", std::to_string(offset_));
    add("length", std::to_string(data->size()));
    out->set_data_location(proto::TensorProto::EXTERNAL);
    offset_ += data->size();
    return true;
  }

private:
  AtomicFile *file_;
  std::string location_;
  uint64_t threshold_;
  bool moveExternal_;
  std::string outDir_;
  uint64_t offset_ = 0;
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
                           AtomicFile &f, const std::string &path) {
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
  if (!ok || !fos.Flush()) return absl::ResourceExhaustedError(path + ": write failed");
  return absl::OkStatus();
}

// Every tensor of the model: dense and sparse initializers, attribute
// tensors of every node (nested graphs and function bodies included) and of
// function attribute defaults.
void forEachTensor(const Model &m, llvm::function_ref<void(const Tensor &)> fn) {
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

bool anyExternal(const Model &m) {
  bool any = false;
  forEachTensor(m, [&](const Tensor &t) { any |= t.isExternal(); });
  return any;
}

absl::Status writeProto(const proto::ModelProto &mp, AtomicFile &f, const std::string &path) {
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
    if (cos.HadError())
      return absl::ResourceExhaustedError(path + ": write failed");
  }
  if (!fos.Flush()) return absl::ResourceExhaustedError(path + ": write failed");
  return absl::OkStatus();
}

} // namespace

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

absl::Status saveModel(const Model &m, const std::string &path, const LowerOptions &opts) {
  if (path == "-") {
    auto bytes = lowerModel(m, opts);
    if (!bytes.ok()) return bytes.status();
    std::cout.write(bytes->data(), (std::streamsize)bytes->size());
    std::cout.flush();
    if (!std::cout) return absl::ResourceExhaustedError("<stdout>: write failed");
    return absl::OkStatus();
  }
  std::string outDir = detail::realDir(detail::dirOf(path));
  // External data: into the requested file, or, when the model has external
  // tensors whose files are not beside the output, into `<output>.data` so
  // the written model never points at a file that is not beside it.
  std::string location = opts.externalDataFile;
  uint64_t threshold = opts.externalThreshold;
  bool moveExternal = !location.empty();
  if (location.empty() && anyExternal(m)) {
    // Are all external files already beside the output?
    bool beside = true;
    forEachTensor(m, [&](const Tensor &t) {
      if (!t.isExternal() || !beside) return;
      // Beside means: the file of that name beside the output is the very
      // file the tensor was resolved to (not merely a file of that name).
      const ExternalDataRef &ref = t.external();
      std::string cand = outDir + "/" + ref.location;
      char buf[PATH_MAX];
      if (ref.resolvedPath.empty() || !::realpath(cand.c_str(), buf) || ref.resolvedPath != buf)
        beside = false;
    });
    if (!beside) {
      location = detail::baseName(path) + ".data";
      threshold = UINT64_MAX; // only move tensors that are already external
      moveExternal = true;
    }
  }
  if (!location.empty()) {
    if (location.find('/') != std::string::npos || location == "." || location == "..")
      return absl::InvalidArgumentError(absl::StrCat(
          "--external-data: \"", location, "\" must be a plain file name (it is written beside ",
          path, ")"));
  }
  std::unique_ptr<AtomicFile> dataFile;
  std::unique_ptr<ExternalWriter> writer;
  if (!location.empty()) {
    dataFile = std::make_unique<AtomicFile>(detail::dirOf(path) + "/" + location);
    if (auto s = dataFile->open(); !s.ok()) return s;
    writer = std::make_unique<ExternalWriter>(dataFile.get(), location, threshold, moveExternal,
                                              outDir);
  }
  google::protobuf::Arena arena(lowerArenaOptions());
  proto::ModelProto &mp = *google::protobuf::Arena::CreateMessage<proto::ModelProto>(&arena);
  StreamSink stream(m, writer.get());
  if (auto s = detail::lowerProto(m, &mp, &stream); !s.ok()) return s;
  AtomicFile f(path);
  if (auto s = f.open(); !s.ok()) return s;
  if (auto s = stream.spliced().empty() ? writeProto(mp, f, path)
                                        : writeStreamed(mp, stream.spliced(), f, path);
      !s.ok())
    return s;
  if (dataFile)
    if (auto s = dataFile->commit(); !s.ok()) return s;
  return f.commit();
}

} // namespace onnxir
