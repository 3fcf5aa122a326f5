//===- ExternalData.cpp - External tensor data files ----------------------===//
#include "ExternalData.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace onnxir {
namespace detail {

/// One open external data file, shared by every tensor that refers to it.
struct ExternalFile {
  int fd = -1;
  uint64_t size = 0;
  FileId id;
  std::string path; // resolved, for messages and "beside" checks
  /// The mapping of the whole file while a tensor holds a window of it.
  std::mutex mapMu;
  std::weak_ptr<const Buffer> whole;
  ~ExternalFile() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

/// Open files by identity, so that a file is opened once however many
/// tensors refer to it; and resolved paths to identities, for saving.
struct FileTable {
  std::mutex mu;
  std::map<std::pair<dev_t, ino_t>, std::weak_ptr<ExternalFile>> byId;
  std::map<std::string, std::weak_ptr<ExternalFile>> byPath;
  static FileTable &get() {
    static FileTable *t = new FileTable; // never destroyed
    return *t;
  }
};

/// A tensor's bytes: a window of the mapping of its whole file.
class WindowBuffer final : public Buffer {
public:
  WindowBuffer(std::shared_ptr<const Buffer> whole, llvm::StringRef bytes)
      : whole_(std::move(whole)), bytes_(bytes) {}
  llvm::StringRef data() const override { return bytes_; }

private:
  std::shared_ptr<const Buffer> whole_;
  llvm::StringRef bytes_;
};

/// The key of Note [One open per file]: `dir/location` with empty and `.`
/// components dropped.
std::string loadKey(const std::string &baseDir, const std::string &location) {
  std::string joined = baseDir + "/" + location, key;
  if (!joined.empty() && joined[0] == '/') key = "/";
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    llvm::StringRef part(joined.data() + start, end - start);
    if (!part.empty() && part != ".") {
      if (!key.empty() && key.back() != '/') key += '/';
      key += part.str();
    }
    start = end + 1;
  }
  return key;
}

absl::Status rejected(const std::string &location, const std::string &why) {
  return absl::PermissionDeniedError(
      absl::StrCat("external data location \"", location, "\" rejected: ", why));
}

bool inside(const std::string &path, const std::string &base) {
  if (base == "/") return true;
  return path.compare(0, base.size(), base) == 0 &&
         (path.size() == base.size() || path[base.size()] == '/');
}

absl::Status checkLocation(const std::string &location) {
  if (location.empty()) return rejected(location, "it is empty");
  if (location[0] == '/' || location[0] == '\\')
    return rejected(location, "absolute paths are not allowed");
  if (location.size() > 1 && location[1] == ':')
    return rejected(location, "absolute paths are not allowed");
  if (location.find('\0') != std::string::npos) return rejected(location, "it contains a NUL byte");
  // No `..` component, with either separator.
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (end - start == 2 && location.compare(start, 2, "..") == 0)
      return rejected(location, "`..` components are not allowed");
    start = end + 1;
  }
  return absl::OkStatus();
}

void raiseFdLimit() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &rl);
    }
  });
}

/// Opens and checks the file of `location` (Note [External data descriptors]).
absl::StatusOr<std::shared_ptr<ExternalFile>> openExternal(const std::string &baseDir,
                                                           const std::string &location,
                                                           bool allowOutside) {
  if (auto s = checkLocation(location); !s.ok()) return s;
  std::string path = baseDir + "/" + location;
  raiseFdLimit();
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return absl::NotFoundError(
        absl::StrCat("external data file \"", location, "\" not found: ", errnoText()));
  auto file = std::make_shared<ExternalFile>();
  file->fd = fd;
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return absl::InternalError(absl::StrCat("cannot stat \"", location, "\": ", errnoText()));
  // What was actually opened, whatever the path did in between.
  char buf[PATH_MAX];
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(proc.c_str(), buf, sizeof buf - 1);
  if (n > 0) file->path.assign(buf, (size_t)n);
  else if (::realpath(path.c_str(), buf)) file->path = buf;
  else file->path = path;
  if (!allowOutside && !inside(file->path, realDir(baseDir)))
    return rejected(location, "it resolves outside the model's directory (onnx-opt "
                              "--allow-external-links allows links that leave it)");
  if (!S_ISREG(st.st_mode)) return rejected(location, "it is not a regular file");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file->size = (uint64_t)st.st_size;
  file->id = {st.st_dev, st.st_ino, true};
  return file;
}

} // namespace

LoadSession::LoadSession(std::string baseDir, bool allowLinksOutside)
    : baseDir_(std::move(baseDir)), allowLinksOutside_(allowLinksOutside) {}
LoadSession::~LoadSession() = default;

absl::StatusOr<ExternalLoader> LoadSession::bind(ExternalDataRef &ref,
                                                 const std::string &tensorName) {
  if (baseDir_.empty()) return ExternalLoader();
  std::shared_ptr<ExternalFile> file;
  std::string key = loadKey(baseDir_, ref.location);
  if (auto it = files_.find(key); it != files_.end()) file = it->second;
  if (!file) {
    auto opened = openExternal(baseDir_, ref.location, allowLinksOutside_);
    if (!opened.ok()) return opened.status();
    file = *opened;
    // One descriptor per file: reuse the one already open for this file.
    FileTable &t = FileTable::get();
    std::lock_guard<std::mutex> lock(t.mu);
    auto id = std::make_pair(file->id.dev, file->id.ino);
    if (auto have = t.byId[id].lock(); have && have->size == file->size) file = have;
    else t.byId[id] = file;
    t.byPath[file->path] = file;
    files_[key] = file;
  }
  uint64_t size = file->size;
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
  ref.resolvedPath = file->path;
  ref.boundLength = len;
  std::string tname = tensorName, location = ref.location;
  return ExternalLoader([file, off, len, tname, location](const ExternalDataRef &)
                            -> absl::StatusOr<std::shared_ptr<const Buffer>> {
    auto fail = [&](const std::string &msg) {
      return absl::DataLossError(absl::StrCat("tensor \"", tname, "\": ", msg));
    };
    // The size re-check of Note [Mapped-file faults].
    struct stat st;
    if (::fstat(file->fd, &st) != 0) return fail("cannot stat \"" + location + "\": " + errnoText());
    if ((uint64_t)st.st_size < off + len)
      return fail(absl::StrCat("external data file \"", location, "\" shrank to ", st.st_size,
                               " bytes since the model was loaded (range [", off, ", ", off + len,
                               ") needed)"));
    if (len == 0)
      return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(std::string()));
    std::shared_ptr<const Buffer> whole;
    {
      std::lock_guard<std::mutex> lock(file->mapMu);
      whole = file->whole.lock();
      if (!whole) {
        auto b = mapFd(file->fd, 0, file->size, file->path);
        if (!b.ok()) return fail(std::string(b.status().message()));
        whole = *b;
        file->whole = whole;
      }
    }
    if (whole->data().size() < off + len)
      return fail(absl::StrCat("external data file \"", location, "\" holds ",
                               whole->data().size(), " bytes (range [", off, ", ", off + len,
                               ") needed)"));
    return std::shared_ptr<const Buffer>(
        std::make_shared<WindowBuffer>(whole, whole->data().substr(off, len)));
  });
}

absl::Status readExternalEntries(ExternalDataRef &ref) {
  for (const auto &[k, v] : ref.entries) {
    if (k == "location") ref.location = v;
    else if (k == "checksum") ref.checksum = v;
    else if (k == "offset" || k == "length") {
      uint64_t x = 0;
      bool ok = !v.empty() && v.size() <= 20;
      for (char c : v) {
        if (c < '0' || c > '9' || __builtin_mul_overflow(x, (uint64_t)10, &x) ||
            __builtin_add_overflow(x, (uint64_t)(c - '0'), &x)) {
          ok = false;
          break;
        }
      }
      if (!ok)
        return absl::InvalidArgumentError(
            absl::StrCat("external data ", k, " \"", v, "\" is not a non-negative integer"));
      (k == "offset" ? ref.offset : ref.length) = x;
    }
  }
  if (ref.location.empty()) return absl::InvalidArgumentError("external data has no location");
  return absl::OkStatus();
}

FileId boundFileId(const ExternalDataRef &ref) {
  if (ref.resolvedPath.empty()) return {};
  FileTable &t = FileTable::get();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.byPath.find(ref.resolvedPath);
  if (it != t.byPath.end())
    if (auto f = it->second.lock()) return f->id;
  return {};
}

} // namespace detail
} // namespace onnxir
