//===- FileIO.cpp - Mapped input, guarded reads, safe outputs -------------===//
#include "FileIO.h"

#include "absl/strings/str_cat.h"
#include "onnxir/IR/Residency.h"
#include "onnxir/Support/LLVMCompat.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <dirent.h>
#include <tuple>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace onnxir {
namespace detail {

std::string errnoText() { return std::strerror(errno); }
std::string errnoText(int err) { return std::strerror(err); }

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

FileId fileIdOf(const std::string &path) {
  struct stat st;
  FileId id;
  if (::stat(path.c_str(), &st) == 0) id = {st.st_dev, st.st_ino, true};
  return id;
}

FileId fileIdOfFd(int fd) {
  struct stat st;
  FileId id;
  if (::fstat(fd, &st) == 0) id = {st.st_dev, st.st_ino, true};
  return id;
}

//===----------------------------------------------------------------------===//
// Signal handling (Note [Mapped-file faults], Note [Signals])
//===----------------------------------------------------------------------===//

namespace {

constexpr int kMapSlots = 4096;
struct MapSlot {
  std::atomic<int> used{0};
  std::atomic<uintptr_t> lo{0}, hi{0};
  std::atomic<const char *> name{nullptr};
};
MapSlot gMaps[kMapSlots];

constexpr int kTempSlots = 256;
std::atomic<char *> gTemps[kTempSlots];

std::atomic<int> gFaulted{0};
char gFaultName[1024];
uintptr_t gPageSize = 4096;

const int kFatalSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ, SIGBUS, SIGSEGV};
struct sigaction gOldActions[sizeof(kFatalSignals) / sizeof(int)];

void unlinkTemps() {
  for (auto &slot : gTemps)
    if (char *p = slot.load(std::memory_order_acquire)) ::unlink(p);
}

void onSignal(int sig, siginfo_t *info, void *) {
  if (sig == SIGBUS && info) {
    uintptr_t a = (uintptr_t)info->si_addr;
    for (auto &s : gMaps) {
      uintptr_t lo = s.lo.load(std::memory_order_acquire);
      if (!lo || a < lo || a >= s.hi.load(std::memory_order_acquire)) continue;
      uintptr_t page = a / gPageSize * gPageSize;
      void *r = ::mmap((void *)page, gPageSize, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (r == MAP_FAILED) break;
      if (gFaulted.exchange(1) == 0) {
        const char *n = s.name.load(std::memory_order_acquire);
        size_t i = 0;
        for (; n && n[i] && i + 1 < sizeof(gFaultName); ++i) gFaultName[i] = n[i];
        gFaultName[i] = 0;
      }
      return; // the read is retried and sees zeros
    }
  }
  int saved = errno;
  unlinkTemps();
  // Hand over to whatever was installed before us (usually the default
  // action), then let the signal be delivered again.
  for (size_t i = 0; i < sizeof(kFatalSignals) / sizeof(int); ++i)
    if (kFatalSignals[i] == sig) ::sigaction(sig, &gOldActions[i], nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  errno = saved;
  if (sig != SIGBUS && sig != SIGSEGV) ::raise(sig);
  // SIGBUS/SIGSEGV: returning re-executes the faulting access under the old
  // action.
}

void installHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    gPageSize = (uintptr_t)::sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < sizeof(kFatalSignals) / sizeof(int); ++i) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = onSignal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kFatalSignals[i], &sa, &gOldActions[i]);
      // A signal the caller chose to ignore stays ignored.
      if (gOldActions[i].sa_handler == SIG_IGN && kFatalSignals[i] != SIGBUS &&
          kFatalSignals[i] != SIGSEGV)
        ::sigaction(kFatalSignals[i], &gOldActions[i], nullptr);
    }
  });
}

/// A read-only memory mapping, registered with the fault guard.
class MappedBuffer final : public Buffer {
public:
  MappedBuffer(void *base, size_t mapLen, const char *data, size_t len, int slot,
               std::string name)
      : base_(base), mapLen_(mapLen), data_(data), len_(len), slot_(slot),
        name_(std::move(name)) {
    if (slot_ >= 0) {
      MapSlot &s = gMaps[slot_];
      s.name.store(name_.c_str(), std::memory_order_release);
      s.hi.store((uintptr_t)base_ + mapLen_, std::memory_order_release);
      s.lo.store((uintptr_t)base_, std::memory_order_release);
    }
  }
  ~MappedBuffer() override {
    if (slot_ >= 0) {
      MapSlot &s = gMaps[slot_];
      s.lo.store(0, std::memory_order_release);
      s.hi.store(0, std::memory_order_release);
      s.name.store(nullptr, std::memory_order_release);
      s.used.store(0, std::memory_order_release);
    }
    ::munmap(base_, mapLen_);
  }
  llvm::StringRef data() const override { return {data_, len_}; }

private:
  void *base_;
  size_t mapLen_;
  const char *data_;
  size_t len_;
  int slot_;
  std::string name_;
};

int claimMapSlot() {
  for (int i = 0; i < kMapSlots; ++i) {
    int expected = 0;
    if (gMaps[i].used.compare_exchange_strong(expected, 1)) return i;
  }
  return -1;
}

/// The name of the registered mapping holding `p`, or null.
const char *mappedFileAt(const char *p) {
  uintptr_t a = (uintptr_t)p;
  for (auto &s : gMaps) {
    uintptr_t lo = s.lo.load(std::memory_order_acquire);
    if (lo && a >= lo && a < s.hi.load(std::memory_order_acquire)) return s.name.load();
  }
  return nullptr;
}

} // namespace

absl::StatusOr<std::shared_ptr<const Buffer>> mapFd(int fd, uint64_t offset, uint64_t length,
                                                    const std::string &name) {
  if (length == 0)
    return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(std::string()));
  installHandlers();
  // Passes may drop what they read of a mapping (Note [Resident pages of
  // mapped bytes], onnxir/IR/Residency.h).
  setResidentReleaser(&releaseMappedPages);
  int slot = claimMapSlot();
  if (slot < 0) {
    // Every guard slot taken (thousands of live mappings): read a copy.
    std::string bytes(length, '\0');
    size_t got = 0;
    while (got < length) {
      ssize_t r = ::pread(fd, &bytes[got], length - got, (off_t)(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        return absl::DataLossError(absl::StrCat("cannot read \"", name, "\": ",
                                                r < 0 ? errnoText() : "it is shorter than expected"));
      got += (size_t)r;
    }
    return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(std::move(bytes)));
  }
  uint64_t start = offset / gPageSize * gPageSize;
  size_t mapLen = (size_t)(offset + length - start);
  void *p = ::mmap(nullptr, mapLen, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
  if (p == MAP_FAILED) {
    gMaps[slot].used.store(0);
    return absl::InternalError(absl::StrCat("cannot map \"", name, "\": ", errnoText()));
  }
  return std::shared_ptr<const Buffer>(std::make_shared<MappedBuffer>(
      p, mapLen, static_cast<const char *>(p) + (offset - start), (size_t)length, slot, name));
}

absl::Status mappedReadStatus() {
  if (!gFaulted.load()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "\"", gFaultName, "\" shrank (was truncated) while it was being read; the bytes read are "
      "not the model's, nothing was written"));
}

void releaseMappedPages(llvm::StringRef bytes) {
  if (bytes.empty()) return;
  uintptr_t lo = (uintptr_t)bytes.data(), hi = lo + bytes.size();
  for (auto &s : gMaps) {
    uintptr_t mlo = s.lo.load(std::memory_order_acquire);
    if (!mlo || lo < mlo) continue;
    uintptr_t mhi = s.hi.load(std::memory_order_acquire);
    if (lo >= mhi) continue;
    hi = std::min(hi, mhi);
    // The mapping is private, read-only and never written: dropping pages
    // only makes a later read fault them in again from the file, so the
    // range may be rounded out to whole pages.
    uintptr_t a = lo / gPageSize * gPageSize;
    uintptr_t b = std::min((hi + gPageSize - 1) / gPageSize * gPageSize, mhi);
    if (a < mlo) a = mlo;
    ::madvise((void *)a, b - a, MADV_DONTNEED);
    return;
  }
}

absl::StatusOr<std::shared_ptr<const Buffer>> readInput(const std::string &path,
                                                        const std::string &name) {
  if (path.empty()) return absl::InvalidArgumentError("the input file name is empty");
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat(name, ": cannot open: ", errnoText()));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd > 0) ::close(fd);
    }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return absl::InternalError(absl::StrCat(name, ": cannot stat: ", errnoText()));
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(name + ": is a directory");
  if (S_ISREG(st.st_mode) && path != "-") {
    if (st.st_size == 0) return absl::InvalidArgumentError(name + ": the file is empty");
    auto b = mapFd(fd, 0, (uint64_t)st.st_size, name);
    if (!b.ok()) return absl::Status(b.status().code(), std::string(b.status().message()));
    return b;
  }
  // A pipe, FIFO, terminal, device or standard input: one growing buffer.
  std::string bytes;
  size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : (size_t)1 << 16;
  bytes.resize(cap);
  size_t got = 0;
  for (;;) {
    if (got == bytes.size()) bytes.resize(bytes.size() * 2);
    ssize_t r = ::read(fd, &bytes[got], bytes.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::DataLossError(absl::StrCat(name, ": read failed: ", errnoText()));
    if (r == 0) break;
    got += (size_t)r;
  }
  bytes.resize(got);
  if (bytes.empty()) return absl::InvalidArgumentError(name + ": the input is empty");
  return std::shared_ptr<const Buffer>(std::make_shared<StringBuffer>(std::move(bytes)));
}

void registerTempFile(const std::string &path) {
  installHandlers();
  char *copy = ::strdup(path.c_str());
  for (auto &slot : gTemps) {
    char *expected = nullptr;
    if (slot.compare_exchange_strong(expected, copy)) return;
  }
  std::free(copy); // table full: this file is only removed by the normal paths
}

void unregisterTempFile(const std::string &path) {
  for (auto &slot : gTemps) {
    char *p = slot.load();
    if (p && path == p && slot.compare_exchange_strong(p, nullptr)) {
      std::free(p);
      return;
    }
  }
}

void removeTempFiles() { unlinkTemps(); }

namespace {
/// Holds back the signals that end the process with a cleanup (not the
/// fault signals) for a scope, so that a temporary file is never on disk
/// unregistered: one delivered meanwhile runs the handler at the end of the
/// scope, when the file is in the table.
class DeferTerminationSignals {
public:
  DeferTerminationSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kFatalSignals)
      if (sig != SIGBUS && sig != SIGSEGV) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~DeferTerminationSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  DeferTerminationSignals(const DeferTerminationSignals &) = delete;
  DeferTerminationSignals &operator=(const DeferTerminationSignals &) = delete;

private:
  sigset_t old_;
};
} // namespace

//===----------------------------------------------------------------------===//
// Output files
//===----------------------------------------------------------------------===//

absl::StatusOr<OutputKind> OutputFile::classify(const std::string &path, std::string *target) {
  if (path.empty()) return absl::InvalidArgumentError("the output file name is empty");
  if (path == "-") return OutputKind::Stdout;
  llvm::StringRef p(path);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return absl::InvalidArgumentError(path + ": is a directory, not a file");
    // Devices, FIFOs and sockets are written into, never replaced; so are
    // the descriptors the shell hands over (/dev/stdout, >(...)).
    if (!S_ISREG(st.st_mode) || startsWith(p, "/dev/") || startsWith(p, "/proc/"))
      return OutputKind::InPlace;
  }
  // A symbolic link is followed: its target is replaced and the link stays.
  std::string cur = path;
  for (int depth = 0; depth < 40; ++depth) {
    struct stat lst;
    if (::lstat(cur.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(cur.c_str(), buf, sizeof buf - 1);
    if (n <= 0) break;
    std::string link(buf, (size_t)n);
    cur = link[0] == '/' ? link : dirOf(cur) + "/" + link;
  }
  if (target) *target = cur;
  return OutputKind::Replace;
}

absl::Status OutputFile::open(const std::string &path, const std::string &modeFrom) {
  std::string target;
  auto kind = classify(path, &target);
  if (!kind.ok()) return kind.status();
  kind_ = *kind;
  name_ = path;
  if (kind_ == OutputKind::Stdout) {
    fd_ = 1;
    name_ = "<stdout>";
    return absl::OkStatus();
  }
  if (kind_ == OutputKind::InPlace) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC);
    if (fd_ < 0)
      return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing: ",
                                                      errnoText()));
    return absl::OkStatus();
  }
  return openTemp(target, modeFrom);
}

namespace {

// Note [Stale temporaries]
// A writer killed by SIGKILL cannot remove its temporary, so the name says
// who wrote it: `.NAME.tmp.PID.HOST.XXXXXX`, HOST being the first 16 hex
// digits of /proc/sys/kernel/random/boot_id and the inode of the writer's
// pid namespace (`0a1b2c3d4e5f6789n4026531836`). Before creating its own, a
// save removes the temporaries of the same NAME whose HOST is ours and whose
// PID no longer exists (kill(PID, 0) fails with ESRCH). Anything else is
// kept: a live PID (a concurrent writer, or a reused pid), another boot or
// pid namespace (another machine on a shared file system, a container: its
// pids are not ours to judge), and names of any other form.

const std::string &writerHostTag() {
  static const std::string tag = [] {
    std::string t;
    if (FILE *f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
      for (int c; (c = std::fgetc(f)) != EOF && t.size() < 16;)
        if (std::isxdigit(c)) t += (char)std::tolower(c);
      std::fclose(f);
    }
    if (t.size() != 16) return std::string(); // no /proc: no cleanup either
    struct stat st;
    if (::stat("/proc/self/ns/pid", &st) == 0) t += "n" + std::to_string((uint64_t)st.st_ino);
    return t;
  }();
  return tag;
}

/// `.NAME.tmp.` for the temporaries of `target`, NAME shortened so that
/// `.NAME.tmp.PID.HOST.XXXXXX` stays within NAME_MAX (PID at its widest).
std::string tempPrefix(const std::string &target) {
  std::string base = baseName(target);
  const size_t extra = 1 + 5 + 10 + 1 + writerHostTag().size() + 1 + 6;
  if (base.size() + extra > NAME_MAX) base.resize(NAME_MAX - extra);
  return "." + base + ".tmp.";
}

void removeStaleTemps(const std::string &dir, const std::string &prefix) {
  const std::string &host = writerHostTag();
  if (host.empty()) return;
  DIR *d = ::opendir(dir.c_str());
  if (!d) return;
  while (struct dirent *e = ::readdir(d)) {
    llvm::StringRef name(e->d_name);
    if (!name.consume_front(prefix)) continue;
    // PID.HOST.XXXXXX
    llvm::StringRef pidText, rest, hostText, suffix;
    std::tie(pidText, rest) = name.split('.');
    std::tie(hostText, suffix) = rest.split('.');
    unsigned long long pid = 0;
    if (pidText.getAsInteger(10, pid) || pid == 0 || pid > INT32_MAX || hostText != host ||
        suffix.size() != 6 || suffix.contains('.'))
      continue;
    if (::kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path.c_str());
  }
  ::closedir(d);
}

} // namespace

std::string tempFileTag() {
  return absl::StrCat(::getpid(), ".", writerHostTag());
}

void removeStaleTempFiles(const std::string &target) {
  removeStaleTemps(dirOf(target), tempPrefix(target));
}

absl::Status OutputFile::openTemp(const std::string &target, const std::string &modeFrom) {
  kind_ = OutputKind::Replace;
  target_ = target;
  if (name_.empty()) name_ = target;
  // The temporaries of writers killed earlier (Note [Stale temporaries]).
  removeStaleTempFiles(target);
  tmp_ = dirOf(target) + "/" + tempPrefix(target) + tempFileTag() + ".XXXXXX";
  installHandlers();
  {
    // A signal between creating the file and registering it would leave it
    // behind (seen in test/OutputSafety/signals.test).
    DeferTerminationSignals defer;
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ >= 0) registerTempFile(tmp_);
  }
  if (fd_ < 0) {
    std::string why = errnoText();
    tmp_.clear();
    return absl::PermissionDeniedError(
        absl::StrCat(name_, ": cannot create a temporary file beside it: ", why));
  }
  // Keep the existing file's permissions; else the usual 0666 - umask.
  struct stat st;
  mode_t mode = 0666;
  if (!modeFrom.empty() && ::stat(modeFrom.c_str(), &st) == 0) mode = st.st_mode & 07777;
  else if (::stat(target_.c_str(), &st) == 0) mode = st.st_mode & 07777;
  else {
    mode_t um = ::umask(0);
    ::umask(um);
    mode &= ~um;
  }
  ::fchmod(fd_, mode);
  return absl::OkStatus();
}

absl::Status OutputFile::write(const char *p, size_t n) {
  while (n) {
    ssize_t w = ::write(fd_, p, n > (1u << 30) ? (1u << 30) : n);
    if (w < 0) {
      if (errno == EINTR) continue;
      // Writing from mapped bytes whose file shrank: the kernel reports
      // EFAULT instead of raising SIGBUS.
      if (errno == EFAULT)
        if (const char *file = mappedFileAt(p))
          return absl::DataLossError(absl::StrCat(
              "\"", file, "\" shrank (was truncated) while it was being read; nothing was "
              "written"));
      return absl::ResourceExhaustedError(absl::StrCat(name_, ": write failed: ", errnoText()));
    }
    p += w;
    n -= (size_t)w;
  }
  return absl::OkStatus();
}

absl::Status OutputFile::finish() {
  if (fd_ < 0) return absl::InternalError(name_ + ": not open");
  if (kind_ != OutputKind::Replace) {
    int fd = fd_;
    fd_ = -1;
    if (fd != 1 && ::close(fd) != 0)
      return absl::ResourceExhaustedError(absl::StrCat(name_, ": write failed: ", errnoText()));
    return absl::OkStatus();
  }
  int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return absl::ResourceExhaustedError(absl::StrCat(name_, ": cannot flush: ", errnoText()));
  return absl::OkStatus();
}

absl::Status OutputFile::commit() {
  if (auto s = finish(); !s.ok()) return s;
  if (kind_ != OutputKind::Replace) return absl::OkStatus();
  if (auto s = mappedReadStatus(); !s.ok()) return s;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0)
    return absl::PermissionDeniedError(absl::StrCat(name_, ": cannot replace: ", errnoText()));
  unregisterTempFile(tmp_);
  tmp_.clear();
  return absl::OkStatus();
}

absl::Status OutputFile::commitNoReplace(const std::string &finalPath) {
  if (auto s = mappedReadStatus(); !s.ok()) return s;
  if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, finalPath.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) return absl::AlreadyExistsError(finalPath + ": exists");
    if (errno != EINVAL && errno != ENOSYS)
      return absl::PermissionDeniedError(absl::StrCat(finalPath, ": cannot create: ", errnoText()));
    // No RENAME_NOREPLACE on this file system: link() never replaces either.
    if (::link(tmp_.c_str(), finalPath.c_str()) != 0) {
      if (errno == EEXIST) return absl::AlreadyExistsError(finalPath + ": exists");
      return absl::PermissionDeniedError(absl::StrCat(finalPath, ": cannot create: ", errnoText()));
    }
    ::unlink(tmp_.c_str());
  }
  unregisterTempFile(tmp_);
  tmp_.clear();
  return absl::OkStatus();
}

void OutputFile::abandon() {
  if (fd_ >= 0 && fd_ != 1) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    unregisterTempFile(tmp_);
  }
  tmp_.clear();
}

void syncDir(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

} // namespace detail
} // namespace onnxir
