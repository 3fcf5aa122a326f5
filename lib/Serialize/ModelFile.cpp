//===- ModelFile.cpp - Load and save policy -------------------------------===//
//
// Note [Save transaction]
// A save writes the model and its external data so that a reader of the
// output sees, at every instant (SIGKILL included), either the old model with
// its old data or the new model with its new data:
//  1. The data goes to a temporary beside the output, and is then renamed,
//     without ever replacing a file (RENAME_NOREPLACE, else link()), to the
//     requested name if neither it nor the output model exists (a first
//     save), else to a fresh `STEM.XXXXXXXX.EXT` (8 random characters).
//     No file that any model refers to is ever overwritten, and a name is
//     never reused for other bytes while a reader of a model that named it
//     may still open it: alternating between the requested name and a
//     fresh one let a reader of model A open the requested name two saves
//     later and read other weights with exit 0.
//  2. The model goes to a temporary, its references name the data file just
//     committed, and it is renamed over the output: this is the commit point.
//  3. Only then the old file of the requested data name is removed, if it is
//     still the file seen at the start (same device and inode) and nothing
//     this run read still refers to it (an input other than the output that
//     reads it keeps it).
// A crash between 1 and 2 leaves an unreferenced data file (the next save
// with that name removes it in step 3); before 1, only hidden temporaries.
// Steps 1-3 run under an advisory lock on the output directory (flock), so
// concurrent writers of one output commit one after another, each seeing
// the model it replaces and removing only that model's data files (the
// requested name or its fresh variants). Readers take no lock: one that
// reads the model and then opens its data files sees a consistent pair, or
// finds the data gone if a save completed in between (an error, never other
// bytes); a load opens each data file once (Note [One open per file]).
// Outputs that would destroy what the run reads are refused before anything
// is written: the output model being an external data file the model reads,
// or the data file name being the output or an input model. Output that is
// not beside the input carries its external data along (into the requested
// data file, or `OUTPUT.data`); outputs without a directory (stdout, devices)
// get external tensors inline.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Serialize/ModelFile.h"

#include "FileIO.h"
#include "ModelLoad.h"
#include "ModelSave.h"
#include "WireScan.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"

#include <cerrno>
#include <cstdio>
#include <random>
#include <set>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace onnxir {

using detail::FileId;
using detail::OutputFile;
using detail::OutputKind;

ModelFormat formatForPath(llvm::StringRef path, std::optional<llvm::StringRef> content) {
  if (endsWith(path, ".onnxtxt") || endsWith(path, ".onnxt")) return ModelFormat::Text;
  if (endsWith(path, ".onnx") || endsWith(path, ".pb") || !content) return ModelFormat::Binary;
  size_t i = content->find_first_not_of(" \t\r\n");
  return i != llvm::StringRef::npos && ((*content)[i] == '<' || (*content)[i] == '#')
             ? ModelFormat::Text
             : ModelFormat::Binary;
}

std::string modelDirectory(const std::string &path) {
  struct stat st;
  if (path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))) return ".";
  return detail::dirOf(path);
}

absl::Status checkMappedFileReads() { return detail::mappedReadStatus(); }

//===----------------------------------------------------------------------===//
// Load
//===----------------------------------------------------------------------===//

absl::StatusOr<std::unique_ptr<Model>> loadModelFile(const std::string &path,
                                                     const LoadFileOptions &opts) {
  if (path.empty()) return absl::InvalidArgumentError("the input file name is empty");
  std::string name = path == "-" ? "<stdin>" : path;
  auto buf = detail::readInput(path, name);
  if (!buf.ok()) return buf.status();
  llvm::StringRef bytes = (*buf)->data();
  ModelFormat format = opts.format == ModelFormat::Auto ? formatForPath(path, bytes) : opts.format;
  if (opts.formatRead) *opts.formatRead = format;
  detail::LoadSession session(modelDirectory(path), opts.allowExternalLinks);
  if (format == ModelFormat::Text) {
    auto m = detail::parseModelText(bytes, name, session);
    if (!m.ok()) return m.status();
    if (auto s = detail::mappedReadStatus(); !s.ok()) return s;
    return m;
  }
  auto m = detail::liftBuffer(*buf, session, name);
  // A text model named .onnx (or read as binary) fails as protobuf with a
  // message about wire bytes; what it looks like is the helpful part. A
  // binary model never starts with '<' or '#' (an end or start group tag).
  if (!m.ok() && !bytes.empty() && formatForPath("", bytes) == ModelFormat::Text)
    return absl::InvalidArgumentError(
        name + ": not a binary ONNX model: it looks like the ONNX text syntax: use "
               "--input-format=text or name it .onnxtxt");
  return m;
}

//===----------------------------------------------------------------------===//
// Save
//===----------------------------------------------------------------------===//

namespace {

std::string randomSuffix() {
  static std::mt19937_64 rng(std::random_device{}() ^ ((uint64_t)::getpid() << 20));
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  uint64_t v = rng();
  for (int i = 0; i < 8; ++i, v /= 36) s += digits[v % 36];
  return s;
}

/// `w.bin` -> `w.XXXXXXXX.bin`, `weights` -> `weights.XXXXXXXX`.
std::string freshName(const std::string &name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return name + "." + randomSuffix();
  return name.substr(0, dot) + "." + randomSuffix() + name.substr(dot);
}

struct ExternalUse {
  std::string tensor, location;
  FileId file;
};

std::vector<ExternalUse> externalUses(const Model &m) {
  std::vector<ExternalUse> uses;
  detail::forEachTensor(m, [&](const Tensor &t) {
    if (!t.isExternal()) return;
    uses.push_back({t.name(), t.external().location, detail::boundFileId(t.external())});
  });
  return uses;
}

bool isTerminal(int fd) { return ::isatty(fd) == 1; }

/// An exclusive advisory lock on a directory, held until destruction.
class DirLock {
public:
  DirLock() = default;
  DirLock(const DirLock &) = delete;
  DirLock &operator=(const DirLock &) = delete;
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  void acquire(const std::string &dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return; // no lock: still correct for a single writer
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }

private:
  int fd_ = -1;
};

/// `name` is `requested` or one of its fresh variants (freshName).
bool sameFamily(const std::string &name, const std::string &requested) {
  if (name == requested) return true;
  size_t dot = requested.rfind('.');
  std::string stem = dot == std::string::npos || dot == 0 ? requested : requested.substr(0, dot);
  std::string ext = dot == std::string::npos || dot == 0 ? "" : requested.substr(dot);
  if (name.size() != stem.size() + 9 + ext.size() || name.compare(0, stem.size(), stem) != 0 ||
      name[stem.size()] != '.' || name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    return false;
  for (size_t i = stem.size() + 1; i < stem.size() + 9; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z'))) return false;
  return true;
}

/// The data files of `requested`'s family that the model now at `target`
/// refers to (with their identities), read without binding anything: for
/// a binary model a scan of its external data locations only
/// (scanExternalLocations: no lift, no allocation per node); a text model
/// is parsed (its data is not bound either).
std::vector<std::pair<std::string, FileId>> oldDataFiles(const std::string &target,
                                                         const std::string &outDir,
                                                         const std::string &requested) {
  std::vector<std::pair<std::string, FileId>> files;
  struct stat st;
  if (::stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (256 << 20))
    return files;
  auto buf = detail::readInput(target, target);
  if (!buf.ok()) return files;
  std::set<std::string> seen;
  auto add = [&](llvm::StringRef loc) {
    if (sameFamily(loc.str(), requested) && seen.insert(loc.str()).second)
      files.emplace_back(loc.str(), detail::fileIdOf(outDir + "/" + loc.str()));
  };
  if (formatForPath(target) != ModelFormat::Text) {
    if (!detail::scanExternalLocations((*buf)->data(), add)) files.clear();
    return files;
  }
  auto old = parseModelText((*buf)->data(), target, "");
  if (!old.ok()) return files;
  detail::forEachTensor(**old, [&](const Tensor &t) {
    if (t.isExternal()) add(t.external().location);
  });
  return files;
}

} // namespace

absl::Status saveModelFile(const Model &m, const std::string &path, const SaveFileOptions &opts) {
  std::string target;
  auto kindOr = OutputFile::classify(path, &target);
  if (!kindOr.ok()) return kindOr.status();
  OutputKind kind = *kindOr;
  std::string shown = kind == OutputKind::Stdout ? "<stdout>" : path;
  ModelFormat format = opts.format == ModelFormat::Auto ? formatForPath(path) : opts.format;
  std::vector<ExternalUse> uses = externalUses(m);

  detail::DataPlan plan;
  plan.stream = format == ModelFormat::Binary;
  std::string outDir, requested;
  FileId targetId, oldData;
  bool inPlace = false; // the output replaces the input model
  std::vector<std::pair<std::string, FileId>> oldFiles; // to remove after the commit
  if (kind != OutputKind::Replace) {
    if (!opts.externalDataFile.empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "--external-data needs a regular output file to write the data beside, not ", shown));
    plan.inlineExternal = !uses.empty();
  } else {
    outDir = modelDirectory(target);
    targetId = detail::fileIdOf(target);
    for (const std::string &in : opts.inputs)
      inPlace |= in != "-" && targetId.valid() && detail::fileIdOf(in) == targetId;
    // The output must not be a file the model reads its data from.
    for (const ExternalUse &u : uses)
      if (targetId.valid() && u.file == targetId)
        return absl::InvalidArgumentError(absl::StrCat(
            path, " is the external data file \"", u.location, "\" that tensor \"", u.tensor,
            "\" reads; writing the model there would destroy its data (choose another output)"));
    requested = opts.externalDataFile;
    if (!requested.empty()) {
      if (requested.find('/') != std::string::npos || requested == "." || requested == "..")
        return absl::InvalidArgumentError(absl::StrCat(
            "--external-data: \"", requested,
            "\" must be a plain file name (it is written beside ", path, ")"));
      FileId reqId = detail::fileIdOf(outDir + "/" + requested);
      if (requested == detail::baseName(target) || (reqId.valid() && reqId == targetId))
        return absl::InvalidArgumentError(absl::StrCat(
            "--external-data=", requested, " names the output model itself (", path,
            "); give the data file another name"));
      for (const std::string &in : opts.inputs)
        if (reqId.valid() && in != "-" && detail::fileIdOf(in) == reqId)
          return absl::InvalidArgumentError(absl::StrCat(
              "--external-data=", requested, " is the input model ", in,
              "; give the data file another name"));
      plan.location = requested;
      plan.threshold = opts.externalThreshold;
      plan.moveExternal = true;
    } else if (!uses.empty()) {
      // External files not beside the output (by identity, not by name) are
      // carried along into `OUTPUT.data`.
      bool beside = true;
      for (const ExternalUse &u : uses)
        beside = beside && u.file.valid() &&
                 detail::fileIdOf(outDir + "/" + u.location) == u.file;
      if (!beside) {
        requested = detail::baseName(target) + ".data";
        if (requested.size() > NAME_MAX) requested = freshName("model.data");
        plan.location = requested;
        plan.moveExternal = true;
      }
    }
    // Note [Links into another directory]: readers (ours, python onnx,
    // onnxruntime) resolve external data against the directory of the path
    // they were given, not of the link's target; no location serves both the
    // link and its target, so such a save is refused before anything is
    // written (a model without external data is saved through the link).
    if ((!requested.empty() || !uses.empty()) &&
        detail::realDir(modelDirectory(path)) != detail::realDir(outDir))
      return absl::InvalidArgumentError(absl::StrCat(
          path, " is a symbolic link into another directory (", target,
          "); a model with external data saved there would not load through the link (readers "
          "look for the data beside the link) or not through its target: give -o ", target,
          " or a path in the link's directory"));
    if (!requested.empty()) {
      struct stat st;
      std::string reqPath = outDir + "/" + requested;
      if (::stat(reqPath.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        return absl::InvalidArgumentError(absl::StrCat(
            reqPath, ": the external data file name is taken by something that is not a "
                     "regular file"));
      oldData = detail::fileIdOf(reqPath); // for the new file's permissions
    }
  }

  // Data first (step 1 of Note [Save transaction]).
  OutputFile data;
  if (!plan.location.empty()) {
    std::string reqPath = outDir + "/" + requested;
    if (auto s = data.openTemp(reqPath, oldData.valid() ? reqPath : target); !s.ok()) return s;
  }
  bool needLower = format == ModelFormat::Binary || !plan.location.empty() || plan.inlineExternal;
  std::unique_ptr<detail::LoweredModel> lowered;
  if (needLower) {
    auto l = detail::LoweredModel::lower(m, plan, plan.location.empty() ? nullptr : &data);
    if (!l.ok()) return l.status();
    lowered = std::move(*l);
  }
  std::string dataName, dataPath;
  // Writers of data files beside one another commit one at a time (an
  // advisory lock on the directory), so that what each sees as the old
  // output and its data is what it replaces.
  DirLock lock;
  if (!plan.location.empty()) {
    if (lowered->numMoved() == 0) {
      data.abandon();
    } else {
      if (auto s = data.finish(); !s.ok()) return s;
      lock.acquire(outDir);
      oldFiles = oldDataFiles(target, outDir, requested);
      oldFiles.emplace_back(requested, detail::fileIdOf(outDir + "/" + requested));
      // The requested name only for a first save (no model at the output
      // yet): a save that replaces a model always takes a fresh name, so no
      // name a reader of an earlier model may still open ever comes back
      // with other bytes (step 1 of Note [Save transaction]).
      bool taken = oldFiles.back().second.valid() || detail::fileIdOf(target).valid();
      std::string candidate = requested;
      for (int attempt = 0;; ++attempt) {
        if (attempt > 0 || taken) candidate = freshName(requested);
        auto s = data.commitNoReplace(outDir + "/" + candidate);
        if (s.ok()) break;
        if (!absl::IsAlreadyExists(s) || attempt > 50) return s;
      }
      dataName = candidate;
      dataPath = outDir + "/" + candidate;
      lowered->setLocation(dataName);
    }
  }
  // From here on a failure must remove the committed data file: nothing
  // refers to it yet.
  struct DataGuard {
    std::string path;
    ~DataGuard() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } guard{dataPath};

  // The model (step 2).
  OutputFile out;
  if (auto s = out.open(path); !s.ok()) return s;
  if (format == ModelFormat::Binary && !opts.force && kind != OutputKind::Replace &&
      isTerminal(out.fd()))
    return absl::FailedPreconditionError(
        "refusing to write a binary model to a terminal (use -o FILE, --emit=text, or -f to "
        "force it)");
  if (format == ModelFormat::Binary) {
    if (auto s = lowered->write(out, shown); !s.ok()) return s;
  } else {
    PrintOptions po;
    if (opts.text) po = *opts.text;
    else po.lossless = kind == OutputKind::Replace; // files read back field for field
    // Note [Text output from the IR]
    // A text save whose data moves (to the requested data file) or comes
    // inline (an output without a directory) prints the IR itself, each
    // placed tensor replaced by the one the binary lowering writes (its
    // new location, offset and length, or its bytes inline): the text is
    // that of the lowered model read back, without lowering the whole
    // model to bytes and lifting them again as before.
    llvm::DenseMap<const Tensor *, std::unique_ptr<Tensor>> placed;
    if (lowered) {
      lowered->forEachPlaced([&](const Tensor &t, std::unique_ptr<Tensor> u) {
        placed[&t] = std::move(u);
      });
      po.tensorAs = [&placed](const Tensor &t) -> const Tensor * {
        auto it = placed.find(&t);
        return it == placed.end() ? nullptr : it->second.get();
      };
    }
    std::string text = printModelText(m, po);
    if (auto s = out.write(text.data(), text.size()); !s.ok()) return s;
  }
  if (auto s = detail::mappedReadStatus(); !s.ok()) return s;
  if (auto s = out.commit(); !s.ok()) return s;
  guard.path.clear();

  // The old data files (step 3).
  if (!dataName.empty())
    for (const auto &[name, id] : oldFiles) {
      if (name == dataName || !id.valid()) continue;
      bool stillRead = false;
      for (const ExternalUse &u : uses) stillRead |= u.file == id;
      std::string oldPath = outDir + "/" + name;
      if ((!stillRead || inPlace) && detail::fileIdOf(oldPath) == id) ::unlink(oldPath.c_str());
    }
  if (kind == OutputKind::Replace) detail::syncDir(outDir);
  return absl::OkStatus();
}

absl::Status saveModel(const Model &m, const std::string &path, const LowerOptions &opts) {
  SaveFileOptions so;
  so.format = ModelFormat::Binary;
  so.externalDataFile = opts.externalDataFile;
  so.externalThreshold = opts.externalThreshold;
  so.force = true;
  return saveModelFile(m, path, so);
}

} // namespace onnxir
