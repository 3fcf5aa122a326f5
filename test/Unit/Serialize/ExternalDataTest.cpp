//===- ExternalDataTest.cpp - External data, path safety, atomic saves ---===//
//
// Models whose initializers live in a file beside them: lazy loading and
// lossless round trips, saveModel moving tensors out (4096-aligned), saving
// into another directory (self-contained output), path safety errors,
// offsets beyond 2^31 (sparse file), and atomic saves that leave the target
// and the input untouched on failure.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <google/protobuf/util/message_differencer.h>
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testfiles::readFile;

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), (std::streamsize)bytes.size());
  ASSERT_TRUE(out.good()) << path;
}

std::string floatBytes(const std::vector<float> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

std::vector<float> iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + float(i) * 0.5f;
  return v;
}

void addExternal(proto::TensorProto *t, const std::string &location, const std::string &offset,
                 const std::string &length) {
  t->set_data_location(proto::TensorProto::EXTERNAL);
  auto add = [&](const char *k, const std::string &v) {
    auto *e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

// A graph Y = X + W with float W of `n` elements (data set by the caller).
proto::ModelProto addModel(int64_t n, proto::TensorProto **w) {
  proto::ModelProto mp;
  mp.set_ir_version(9);
  auto *op = mp.add_opset_import();
  op->set_domain("");
  op->set_version(19);
  auto *g = mp.mutable_graph();
  g->set_name("g");
  auto *x = g->add_input();
  x->set_name("X");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(n);
  *w = g->add_initializer();
  (*w)->set_name("W");
  (*w)->set_data_type(1);
  (*w)->add_dims(n);
  auto *node = g->add_node();
  node->set_op_type("Add");
  node->add_input("X");
  node->add_input("W");
  node->add_output("Y");
  g->add_output()->set_name("Y");
  return mp;
}

std::string diff(const proto::ModelProto &a, const proto::ModelProto &b) {
  google::protobuf::util::MessageDifferencer d;
  std::string r;
  d.ReportDifferencesToString(&r);
  return d.Compare(a, b) ? "" : r.substr(0, 4000);
}

Tensor *initializer(Model &m, const std::string &name) {
  for (Value *v : m.graph().initializers())
    if (v->initializer() && v->initializer()->name() == name) return v->initializer();
  return nullptr;
}

std::vector<float> floatsOf(Model &m, const std::string &name) {
  Tensor *t = initializer(m, name);
  if (!t) {
    ADD_FAILURE() << "no initializer " << name;
    return {};
  }
  auto v = t->values<float>();
  if (!v.ok()) {
    ADD_FAILURE() << name << ": " << v.status();
    return {};
  }
  return *v;
}

std::vector<std::string> tempFiles(const fs::path &dir) {
  std::vector<std::string> out;
  for (auto &e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.find(".tmp.") != std::string::npos) out.push_back(n);
  }
  return out;
}

class ExternalData : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("onnxir-ext-") + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    fs::create_directories(dir_ / "other");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string modelDir() const { return (dir_ / "model").string(); }
  std::string otherDir() const { return (dir_ / "other").string(); }

  // model/m.onnx with W in model/weights.bin at `offset`.
  proto::ModelProto writeExternalModel(const std::vector<float> &w, uint64_t offset = 0) {
    proto::TensorProto *t;
    proto::ModelProto mp = addModel((int64_t)w.size(), &t);
    std::string file(offset, '\x5a');
    file += floatBytes(w);
    writeFile(modelDir() + "/weights.bin", file);
    addExternal(t, "weights.bin", std::to_string(offset), std::to_string(w.size() * 4));
    writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
    return mp;
  }

  // Writes model/m.onnx with W pointing at (location, offset, length); the
  // load must fail with a message naming the tensor and `mention`.
  void expectRejected(const std::string &location, const std::string &offset,
                      const std::string &length, const std::string &mention) {
    proto::TensorProto *t;
    proto::ModelProto mp = addModel(4, &t);
    addExternal(t, location, offset, length);
    writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
    auto m = loadModel(modelDir() + "/m.onnx");
    ASSERT_FALSE(m.ok()) << location << " offset=" << offset << " length=" << length
                         << " was accepted";
    std::string msg(m.status().message());
    EXPECT_NE(msg.find("\"W\""), std::string::npos) << "message does not name the tensor: " << msg;
    EXPECT_NE(msg.find(mention), std::string::npos) << "message does not mention \"" << mention
                                                    << "\": " << msg;
  }

  fs::path dir_;
};

} // namespace

TEST_F(ExternalData, LoadsLazilyAndRoundTripsWithReferencesKept) {
  std::vector<float> w = iota(1000, 1.0f);
  proto::ModelProto mp = writeExternalModel(w, 128);
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  Tensor *t = initializer(**m, "W");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->isExternal());
  EXPECT_FALSE(t->externalLoaded()) << "external data was read eagerly";
  proto::ModelProto got;
  ASSERT_TRUE(lowerModel(**m, &got).ok());
  EXPECT_EQ(diff(mp, got), "");
  EXPECT_FALSE(t->externalLoaded()) << "lowering read the external data";
  EXPECT_EQ(floatsOf(**m, "W"), w);
  EXPECT_TRUE(t->externalLoaded());
  // Still lowered as a reference after being read.
  proto::ModelProto got2;
  ASSERT_TRUE(lowerModel(**m, &got2).ok());
  EXPECT_EQ(diff(mp, got2), "");
  // Saving beside the data file keeps the reference as it is.
  ASSERT_TRUE(saveModel(**m, modelDir() + "/copy.onnx").ok());
  proto::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(readFile(modelDir() + "/copy.onnx")));
  EXPECT_EQ(diff(mp, saved), "");
}

TEST_F(ExternalData, SaveMovesLargeTensorsToAlignedOffsets) {
  // In-memory model: W raw (20000 B), V typed float_data (8004 B), I int64
  // typed (8000 B), small raw (40 B), a string tensor; threshold 1024.
  proto::TensorProto *w;
  proto::ModelProto mp = addModel(5000, &w);
  std::vector<float> wv = iota(5000, -3.0f);
  w->set_raw_data(floatBytes(wv));
  auto *g = mp.mutable_graph();
  auto *v = g->add_initializer();
  v->set_name("V");
  v->set_data_type(1);
  v->add_dims(2001);
  std::vector<float> vv = iota(2001, 7.0f);
  for (float f : vv) v->add_float_data(f);
  auto *iv = g->add_initializer();
  iv->set_name("I");
  iv->set_data_type(7);
  iv->add_dims(1000);
  for (int i = 0; i < 1000; ++i) iv->add_int64_data(int64_t(i) * 1000003 - 5);
  auto *s = g->add_initializer();
  s->set_name("small");
  s->set_data_type(1);
  s->add_dims(10);
  std::vector<float> sv = iota(10, 0.0f);
  s->set_raw_data(floatBytes(sv));
  auto *st = g->add_initializer();
  st->set_name("str");
  st->set_data_type(8);
  st->add_dims(1);
  st->add_string_data(std::string(5000, 'q'));
  auto m = liftModel(mp);
  ASSERT_TRUE(m.ok()) << m.status();

  LowerOptions lo;
  lo.externalDataFile = "w.bin";
  lo.externalThreshold = 1024;
  std::string out = otherDir() + "/out.onnx";
  auto sst = saveModel(**m, out, lo);
  ASSERT_TRUE(sst.ok()) << sst;
  EXPECT_TRUE(tempFiles(otherDir()).empty());
  proto::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(readFile(out)));
  uint64_t dataSize = fs::file_size(otherDir() + "/w.bin");
  int moved = 0;
  for (const auto &t : saved.graph().initializer()) {
    bool big = t.name() == "W" || t.name() == "V" || t.name() == "I";
    if (!big) {
      EXPECT_NE(t.data_location(), proto::TensorProto::EXTERNAL) << t.name() << " was moved";
      continue;
    }
    ASSERT_EQ(t.data_location(), proto::TensorProto::EXTERNAL) << t.name() << " stayed inline";
    EXPECT_FALSE(t.has_raw_data());
    EXPECT_EQ(t.float_data_size() + t.int64_data_size(), 0);
    std::string loc, off, len;
    for (const auto &e : t.external_data()) {
      if (e.key() == "location") loc = e.value();
      if (e.key() == "offset") off = e.value();
      if (e.key() == "length") len = e.value();
    }
    EXPECT_EQ(loc, "w.bin");
    ASSERT_FALSE(off.empty());
    EXPECT_EQ(std::stoull(off) % 4096, 0u) << t.name() << " at offset " << off;
    EXPECT_LE(std::stoull(off) + std::stoull(len), dataSize);
    ++moved;
  }
  EXPECT_EQ(moved, 3);
  auto back = loadModel(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(floatsOf(**back, "W"), wv);
  EXPECT_EQ(floatsOf(**back, "V"), vv);
  EXPECT_EQ(floatsOf(**back, "small"), sv);
  auto iback = initializer(**back, "I")->values<int64_t>();
  ASSERT_TRUE(iback.ok());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ((*iback)[i], int64_t(i) * 1000003 - 5);
  auto sback = initializer(**back, "str")->strings();
  ASSERT_TRUE(sback.ok());
  EXPECT_EQ((*sback)[0], std::string(5000, 'q'));
}

TEST_F(ExternalData, SavingIntoAnotherDirectoryIsSelfContained) {
  std::vector<float> w = iota(3000, 2.0f);
  writeExternalModel(w, 4096);
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  std::string out = otherDir() + "/moved.onnx";
  auto s = saveModel(**m, out);
  ASSERT_TRUE(s.ok()) << s;
  proto::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(readFile(out)));
  for (const auto &t : saved.graph().initializer())
    for (const auto &e : t.external_data())
      if (e.key() == "location") {
        EXPECT_TRUE(fs::exists(otherDir() + "/" + e.value()))
            << t.name() << " refers to " << e.value() << ", which is not beside the output";
      }
  // The source directory can go away.
  fs::remove_all(modelDir());
  auto back = loadModel(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(floatsOf(**back, "W"), w);
}

// Whether an external file is "already beside the output" is decided by it
// being the very file the lifter resolved, not by a file of that name.
TEST_F(ExternalData, StaleFileOfTheSameNameInTargetDirectory) {
  // The target directory already holds an unrelated weights.bin: the output
  // must still carry the model's own data, not point at the stale file.
  std::vector<float> w = iota(1000, 2.0f);
  writeExternalModel(w, 0);
  writeFile(otherDir() + "/weights.bin", std::string(8192, '\x11'));
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  std::string out = otherDir() + "/moved.onnx";
  ASSERT_TRUE(saveModel(**m, out).ok());
  fs::remove_all(modelDir());
  auto back = loadModel(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(floatsOf(**back, "W"), w) << "the saved model reads another file's bytes";
}

TEST_F(ExternalData, RejectsAbsolutePath) {
  writeFile(otherDir() + "/abs.bin", std::string(16, '\0'));
  expectRejected(otherDir() + "/abs.bin", "0", "16", "abs.bin");
}

TEST_F(ExternalData, RejectsDotDotComponent) {
  writeFile(otherDir() + "/up.bin", std::string(16, '\0'));
  expectRejected("../other/up.bin", "0", "16", "..");
  fs::create_directories(modelDir() + "/sub");
  expectRejected("sub/../../other/up.bin", "0", "16", "..");
}

TEST_F(ExternalData, RejectsSymlinkLeavingTheDirectory) {
  writeFile(otherDir() + "/target.bin", std::string(16, '\0'));
  fs::create_symlink(otherDir() + "/target.bin", modelDir() + "/link.bin");
  expectRejected("link.bin", "0", "16", "link.bin");
  fs::create_directory_symlink(otherDir(), modelDir() + "/linkdir");
  expectRejected("linkdir/target.bin", "0", "16", "linkdir/target.bin");
}

TEST_F(ExternalData, AcceptsSymlinkInsideTheDirectory) {
  std::vector<float> w = iota(4, 1.0f);
  writeFile(modelDir() + "/real.bin", floatBytes(w));
  fs::create_symlink("real.bin", modelDir() + "/alias.bin");
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(4, &t);
  addExternal(t, "alias.bin", "0", "16");
  writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(floatsOf(**m, "W"), w);
}

TEST_F(ExternalData, RejectsMissingFile) { expectRejected("nope.bin", "0", "16", "nope.bin"); }

TEST_F(ExternalData, RejectsRangesOutsideTheFile) {
  writeFile(modelDir() + "/short.bin", std::string(20, '\0'));
  expectRejected("short.bin", "8", "16", "short.bin");   // ends past the end
  expectRejected("short.bin", "4096", "16", "short.bin"); // starts past the end
  expectRejected("short.bin", "18446744073709551615", "16", "short.bin"); // overflow
}

TEST_F(ExternalData, RejectsBadOffsetAndLengthText) {
  writeFile(modelDir() + "/w.bin", std::string(64, '\0'));
  expectRejected("w.bin", "-4", "16", "-4");
  expectRejected("w.bin", "abc", "16", "abc");
  expectRejected("w.bin", "", "16x", "16x");
  expectRejected("w.bin", "1e3", "16", "1e3");
  expectRejected("w.bin", "99999999999999999999999", "16", "99999999999999999999999");
}

TEST_F(ExternalData, OffsetsBeyond2GiBInASparseFile) {
  // The file is sparse: ~2 GiB apparent size, a few KiB on disk.
  const uint64_t offset = (uint64_t(1) << 31) + 4096;
  std::vector<float> w = iota(2048, -1.0f);
  std::string bytes = floatBytes(w);
  std::string path = modelDir() + "/huge.bin";
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, (off_t)(offset + bytes.size() + 12345)), 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), (off_t)offset), (ssize_t)bytes.size());
  ::close(fd);
  proto::TensorProto *t;
  proto::ModelProto mp = addModel((int64_t)w.size(), &t);
  addExternal(t, "huge.bin", std::to_string(offset), std::to_string(bytes.size()));
  writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(floatsOf(**m, "W"), w);
  proto::ModelProto got;
  ASSERT_TRUE(lowerModel(**m, &got).ok());
  EXPECT_EQ(diff(mp, got), "");
  // Saving elsewhere copies just the tensor's bytes.
  auto s = saveModel(**m, otherDir() + "/m.onnx");
  ASSERT_TRUE(s.ok()) << s;
  auto back = loadModel(otherDir() + "/m.onnx");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(floatsOf(**back, "W"), w);
  // An offset just past the end is still rejected with a 64-bit offset.
  uint64_t size = fs::file_size(path);
  expectRejected("huge.bin", std::to_string(size - 8), "16", "huge.bin");
}

//===----------------------------------------------------------------------===//
// Atomic saves
//===----------------------------------------------------------------------===//

TEST_F(ExternalData, FailedSaveOntoADirectoryLeavesNoTemporary) {
  std::vector<float> w = iota(16, 0.0f);
  writeExternalModel(w, 0);
  std::string input = readFile(modelDir() + "/m.onnx");
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok());
  fs::create_directories(otherDir() + "/taken.onnx");
  writeFile(otherDir() + "/taken.onnx/keep", "keep");
  auto s = saveModel(**m, otherDir() + "/taken.onnx");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(readFile(otherDir() + "/taken.onnx/keep"), "keep");
  EXPECT_TRUE(tempFiles(otherDir()).empty());
  EXPECT_EQ(readFile(modelDir() + "/m.onnx"), input);
}

TEST_F(ExternalData, FailedExternalDataWriteKeepsTheTarget) {
  // The data file name is taken by a directory: the save fails, the existing
  // model file keeps its content, no temporaries remain.
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(2000, &t);
  t->set_raw_data(floatBytes(iota(2000, 1.0f)));
  auto m = liftModel(mp);
  ASSERT_TRUE(m.ok());
  std::string target = otherDir() + "/out.onnx";
  writeFile(target, "previous content");
  fs::create_directories(otherDir() + "/blocked.bin");
  LowerOptions lo;
  lo.externalDataFile = "blocked.bin";
  auto s = saveModel(**m, target, lo);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(readFile(target), "previous content");
  EXPECT_TRUE(tempFiles(otherDir()).empty()) << tempFiles(otherDir())[0];
}

TEST_F(ExternalData, UnwritableDirectoryKeepsTheTarget) {
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(4, &t);
  t->set_raw_data(floatBytes(iota(4, 1.0f)));
  auto m = liftModel(mp);
  ASSERT_TRUE(m.ok());
  std::string target = otherDir() + "/out.onnx";
  writeFile(target, "previous content");
  // r-x for everyone: readable and traversable, nobody may create in it.
  fs::permissions(otherDir(), fs::perms::owner_read | fs::perms::owner_exec |
                                  fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  if (::geteuid() == 0) {
    // Root ignores directory permissions (CI runs as root): the save runs in
    // a child that drops to nobody's ids (65534), for whom they hold.
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
      auto r = saveModel(**m, target);
      ::_exit(r.ok() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    fs::permissions(otherDir(), fs::perms::owner_all);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 3) << "the child could not drop root's ids";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the save succeeded in an unwritable directory";
  } else {
    auto s = saveModel(**m, target);
    fs::permissions(otherDir(), fs::perms::owner_all);
    EXPECT_FALSE(s.ok());
  }
  EXPECT_EQ(readFile(target), "previous content");
  EXPECT_TRUE(tempFiles(otherDir()).empty());
}

namespace {
// 2 GiB + 4 KiB of zeros without touching memory (anonymous, never written).
class ZeroBuffer final : public Buffer {
public:
  explicit ZeroBuffer(size_t n) : n_(n) {
    p_ = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  ~ZeroBuffer() override {
    if (p_ != MAP_FAILED) ::munmap(p_, n_);
  }
  bool ok() const { return p_ != MAP_FAILED; }
  llvm::StringRef data() const override { return {static_cast<const char *>(p_), n_}; }

private:
  void *p_;
  size_t n_;
};
} // namespace

TEST_F(ExternalData, ModelOver2GiBWithoutExternalDataFailsAtomically) {
#ifdef ONNXIR_SANITIZED
  GTEST_SKIP() << "too much memory under sanitizers";
#endif
  proto::TensorProto *t;
  const size_t n = (size_t(1) << 29) + 1024; // floats: 2 GiB + 4 KiB
  proto::ModelProto mp = addModel(4, &t);
  t->set_raw_data(floatBytes(iota(4, 1.0f)));
  auto m = liftModel(mp);
  ASSERT_TRUE(m.ok());
  auto buf = std::make_shared<ZeroBuffer>(n * 4);
  ASSERT_TRUE(buf->ok());
  Tensor *w = initializer(**m, "W");
  w->setDims({(int64_t)n});
  w->setRaw(buf, 0, n * 4);
  std::string target = otherDir() + "/out.onnx";
  writeFile(target, "previous content");
  auto s = saveModel(**m, target);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("external"), std::string::npos) << s;
  EXPECT_EQ(readFile(target), "previous content");
  EXPECT_TRUE(tempFiles(otherDir()).empty());
}

TEST_F(ExternalData, SaveInPlaceOverTheInputAndItsDataFile) {
  // Loading maps the input; saving over the same model and data file names
  // must read the old bytes and replace both atomically.
  std::vector<float> w = iota(4000, 3.0f);
  writeExternalModel(w, 0);
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok());
  LowerOptions lo;
  lo.externalDataFile = "weights.bin";
  auto s = saveModel(**m, modelDir() + "/m.onnx", lo);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(tempFiles(modelDir()).empty());
  auto back = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(floatsOf(**back, "W"), w);
}

TEST_F(ExternalData, SaveInPlaceOverAMappedLargeInput) {
  // Over 8 MiB the lifter takes raw_data as views of the mapped input file.
  proto::TensorProto *t;
  std::vector<float> w = iota(size_t(3) << 20, 0.25f);
  proto::ModelProto mp = addModel((int64_t)w.size(), &t);
  t->set_raw_data(floatBytes(w));
  std::string path = modelDir() + "/big.onnx";
  writeFile(path, mp.SerializeAsString());
  auto m = loadModel(path);
  ASSERT_TRUE(m.ok());
  auto s = saveModel(**m, path);
  ASSERT_TRUE(s.ok()) << s;
  proto::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(readFile(path)));
  EXPECT_EQ(diff(mp, back), "");
  EXPECT_EQ(floatsOf(**m, "W"), w) << "the in-memory model changed under the save";
}

//===----------------------------------------------------------------------===//
// One descriptor per external file (Note [External data descriptors])
//===----------------------------------------------------------------------===//

namespace {
size_t openDescriptors() {
  size_t n = 0;
  for (auto &e : fs::directory_iterator("/proc/self/fd")) (void)e, ++n;
  return n;
}
} // namespace

TEST_F(ExternalData, OneDescriptorPerFileKeptFromLoad) {
  // 40 tensors in one file: one descriptor, opened at load.
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(4, &t);
  std::vector<float> w = iota(4, 1.0f);
  addExternal(t, "weights.bin", "0", "16");
  for (int i = 0; i < 40; ++i) {
    auto *u = mp.mutable_graph()->add_initializer();
    u->set_name("U" + std::to_string(i));
    u->set_data_type(1);
    u->add_dims(4);
    addExternal(u, "weights.bin", "0", "16");
  }
  writeFile(modelDir() + "/weights.bin", floatBytes(w));
  writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
  size_t before = openDescriptors();
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(openDescriptors(), before + 1);
  m->reset();
  EXPECT_EQ(openDescriptors(), before) << "the descriptor outlived the model";
}

TEST_F(ExternalData, ReadsTheFileOpenedAtLoadNotThePath) {
  // Replacing the file by name after the load changes nothing: no bytes of
  // the new file are mixed in.
  std::vector<float> w = iota(1000, 2.0f);
  writeExternalModel(w, 0);
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  fs::rename(modelDir() + "/weights.bin", modelDir() + "/old.bin");
  writeFile(modelDir() + "/weights.bin", floatBytes(iota(1000, -9.0f)));
  EXPECT_EQ(floatsOf(**m, "W"), w);
}

TEST_F(ExternalData, DirectorySwappedForALinkAfterLoad) {
  // sub/ checked at load, then swapped for a link to a directory outside:
  // the reads still come from the file opened at load.
  std::vector<float> w = iota(8, 1.0f);
  fs::create_directories(modelDir() + "/sub");
  writeFile(modelDir() + "/sub/w.bin", floatBytes(w));
  writeFile(otherDir() + "/w.bin", floatBytes(iota(8, 100.0f)));
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(8, &t);
  addExternal(t, "sub/w.bin", "0", "32");
  writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
  auto m = loadModel(modelDir() + "/m.onnx");
  ASSERT_TRUE(m.ok()) << m.status();
  fs::rename(modelDir() + "/sub", modelDir() + "/sub.old");
  fs::create_directory_symlink(otherDir(), modelDir() + "/sub");
  EXPECT_EQ(floatsOf(**m, "W"), w);
}

TEST_F(ExternalData, FifoAndDevicesAreNeverOpenedForReading) {
  // A FIFO would block open() forever; it is refused at once.
  ASSERT_EQ(::mkfifo((modelDir() + "/fifo.bin").c_str(), 0600), 0);
  expectRejected("fifo.bin", "0", "16", "not a regular file");
  // A device (through a link, allowed to leave the directory) is refused too.
  fs::create_symlink("/dev/zero", modelDir() + "/zero.bin");
  expectRejected("zero.bin", "0", "16", "outside the model's directory");
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(4, &t);
  addExternal(t, "zero.bin", "0", "16");
  writeFile(modelDir() + "/m.onnx", mp.SerializeAsString());
  LiftOptions lo;
  lo.allowExternalLinks = true;
  auto m = loadModel(modelDir() + "/m.onnx", lo);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("not a regular file"), std::string::npos)
      << m.status();
}

TEST_F(ExternalData, LinksLeavingTheDirectoryNeedTheOptIn) {
  // The Hugging Face cache: snapshots/REV/weights.bin -> ../../blobs/HASH.
  fs::path root = dir_ / "hf";
  fs::create_directories(root / "blobs");
  fs::create_directories(root / "snapshots" / "rev");
  std::vector<float> w = iota(16, 0.5f);
  writeFile((root / "blobs" / "0123abcd").string(), floatBytes(w));
  fs::create_symlink("../../blobs/0123abcd", root / "snapshots" / "rev" / "weights.bin");
  proto::TensorProto *t;
  proto::ModelProto mp = addModel(16, &t);
  addExternal(t, "weights.bin", "0", "64");
  std::string model = (root / "snapshots" / "rev" / "m.onnx").string();
  writeFile(model, mp.SerializeAsString());
  auto refused = loadModel(model);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("--allow-external-links"),
            std::string::npos)
      << refused.status();
  LiftOptions lo;
  lo.allowExternalLinks = true;
  auto m = loadModel(model, lo);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(floatsOf(**m, "W"), w);
  // `..` and absolute locations stay refused with the opt-in.
  proto::TensorProto *t2;
  proto::ModelProto mp2 = addModel(16, &t2);
  addExternal(t2, "../../blobs/0123abcd", "0", "64");
  writeFile(model, mp2.SerializeAsString());
  EXPECT_FALSE(loadModel(model, lo).ok());
}
