//===- WireScanTest.cpp - Garbage is refused at once, with its offset -----===//
//
// Note [Wire pre-scan] (lib/Serialize/WireScan.h): a zero tag, a field
// number 0, a bad wire type or a length running past the end stops the read
// with the byte offset, whatever the file size, before protobuf parses or
// allocates anything. Big inputs are sparse files: a 3 GB file of zeros and
// a 1 GB model cut short cost no disk; that they are refused by the
// pre-scan (not after protobuf walked them) shows in the message, and a
// forked child checks the peak memory with a generous bound.
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Serialize/WireScan.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

std::string tempDir() {
  std::string d = (fs::temp_directory_path() / "onnxir-wirescan-XXXXXX").string();
  if (!::mkdtemp(d.data())) return "";
  return d;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out += char(v | 0x80);
    v >>= 7;
  }
  out += char(v);
}

std::string smallModel() {
  proto::ModelProto mp;
  mp.set_ir_version(8);
  mp.add_opset_import()->set_version(17);
  auto *g = mp.mutable_graph();
  g->set_name("g");
  g->add_input()->set_name("x");
  auto *n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  return mp.SerializeAsString();
}

std::string liftError(const std::string &bytes) {
  auto m = liftModel(llvm::StringRef(bytes), LiftOptions{});
  return m.ok() ? std::string("(lifted)") : std::string(m.status().message());
}

// Runs loadModel(path) in a child; returns its error and peak RSS (MiB).
std::pair<std::string, long> loadInChild(const std::string &path) {
  int fds[2];
  if (::pipe(fds) != 0) return {"pipe failed", 0};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto m = loadModel(path);
    std::string msg = m.ok() ? "(loaded)" : std::string(m.status().message());
    ssize_t w = ::write(fds[1], msg.data(), msg.size());
    (void)w;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t r;
  while ((r = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, (size_t)r);
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  return {msg, ru.ru_maxrss / 1024};
}

#ifdef ONNXIR_SANITIZED
constexpr long kMaxRssMiB = 1024; // the sanitizers' own shadow memory
#else
constexpr long kMaxRssMiB = 200;
#endif

TEST(WireScan, ZeroFilled3GBFileIsRefusedAtByteZero) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/zeros.onnx";
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, (off_t)3 << 30), 0); // sparse: no disk used
  ::close(fd);
  auto [msg, rss] = loadInChild(path);
  EXPECT_NE(msg.find("zeros.onnx: not a valid ONNX model: at byte 0: a zero tag"),
            std::string::npos)
      << msg;
  EXPECT_LT(rss, kMaxRssMiB) << msg;
  fs::remove_all(dir);
}

TEST(WireScan, Truncated1GBModelIsRefusedWhereTheLengthRunsOut) {
  // ModelProto { ir_version: 8, graph { name: "g", initializer { dims: N,
  // data_type: FLOAT, raw_data: 1 GiB } } } with the file cut at 1 GB.
  const uint64_t raw = uint64_t(1) << 30;
  std::string tensor;
  tensor += char(1 << 3 | 0);
  writeVarint(tensor, raw / 4); // dims
  tensor += char(2 << 3 | 0);
  writeVarint(tensor, 1); // data_type
  tensor += char(9 << 3 | 2);
  writeVarint(tensor, raw); // raw_data length; the bytes follow
  std::string graph = std::string(1, char(2 << 3 | 2)) + char(1) + "g";
  graph += char(5 << 3 | 2);
  writeVarint(graph, tensor.size() + raw);
  graph += tensor;
  std::string head;
  head += char(1 << 3 | 0);
  writeVarint(head, 8);
  head += char(7 << 3 | 2);
  size_t graphLenAt = head.size();
  writeVarint(head, graph.size() + raw);
  head += graph;

  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  std::string path = dir + "/cut.onnx";
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, head.data(), head.size()), (ssize_t)head.size());
  ASSERT_EQ(::ftruncate(fd, (off_t)1000000000), 0); // cut short, sparse
  ::close(fd);
  auto [msg, rss] = loadInChild(path);
  std::string want = "cut.onnx: not a valid ONNX model: at byte " + std::to_string(graphLenAt) +
                     " (in graph): a length of ";
  EXPECT_NE(msg.find(want), std::string::npos) << msg;
  EXPECT_NE(msg.find("runs past the end of the data"), std::string::npos) << msg;
  EXPECT_LT(rss, kMaxRssMiB) << msg;
  fs::remove_all(dir);
}

TEST(WireScan, GarbageAfterAValidModelIsLocated) {
  std::string good = smallModel();
  ASSERT_EQ(liftError(good), "(lifted)");
  EXPECT_EQ(liftError(good + std::string(1, '\0')),
            "<buffer>: not a valid ONNX model: at byte " + std::to_string(good.size()) +
                ": a zero tag (field number 0): this is not protobuf data");
  // Key 2: field number 0 with wire type 2.
  EXPECT_NE(liftError(good + "\x02\x01x").find("at byte " + std::to_string(good.size()) +
                                             ": field number 0 (tag 2)"),
            std::string::npos);
  // Key 0x0f: field 1, wire type 7.
  EXPECT_NE(liftError(good + "\x0f").find("invalid wire type 7"), std::string::npos);
  // An end-group tag (field 1, wire type 4) with no group open.
  EXPECT_NE(liftError(good + "\x0c").find("outside any group"), std::string::npos);
  // A varint cut by the end of the data.
  EXPECT_NE(liftError(good + "\x08\xff").find("a varint is cut off"), std::string::npos);
}

TEST(WireScan, ErrorInsideASmallMessageIsLocatedAfterProtobufFails) {
  // The quick scan skips small messages; when protobuf then fails, the full
  // scan names the place: a node whose input string claims too many bytes.
  proto::ModelProto mp;
  mp.set_ir_version(8);
  auto *n = mp.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  std::string bytes = mp.SerializeAsString();
  size_t at = bytes.find(std::string("\x0a\x01x", 3)); // node.input "x"
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = 0x7f;
  std::string msg = liftError(bytes);
  EXPECT_NE(msg.find("at byte " + std::to_string(at + 1) + " (in graph > node > input): a length "
                     "of 127 bytes runs past the end of the enclosing message"),
            std::string::npos)
      << msg;
}

TEST(WireScan, UnknownFieldsAndGroupsAreAccepted) {
  // What protobuf keeps as unknown fields is not an error: a new field
  // number, a known field of another wire type, a closed group.
  std::string good = smallModel();
  std::string extra = good;
  extra += "\xa0\x06\x05";                  // field 100, varint 5
  extra += "\x3d\x01\x02\x03\x04";          // field 7 (graph) as fixed32
  extra += "\xab\x06\x08\x01\xac\x06";      // group 101 { field 1: 1 }
  proto::ModelProto check;
  ASSERT_TRUE(check.ParseFromString(extra));
  EXPECT_TRUE(detail::scanModelWire(extra, "x", 0).ok());
  EXPECT_EQ(liftError(extra), "(lifted)");
  // A group left open is refused.
  EXPECT_NE(liftError(good + "\xab\x06\x08\x01").find("is not closed"), std::string::npos);
}

// The full scan never refuses a model protobuf accepts.
TEST(WireScan, FullScanAcceptsEveryCorpusModel) {
  unsigned n = 0;
  for (const char *root : {ONNXIR_TESTDATA_DIR, ONNXIR_SHARED_DIR "/models"}) {
    if (!fs::exists(root)) continue;
    for (auto &e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file() || e.path().extension() != ".onnx") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string bytes = ss.str();
      proto::ModelProto mp;
      if (!mp.ParseFromString(bytes)) continue;
      auto s = detail::scanModelWire(bytes, e.path().string(), 0);
      EXPECT_TRUE(s.ok()) << s.message();
      ++n;
    }
  }
  EXPECT_GE(n, 1000u) << "corpus models scanned (1,088 today)";
}

} // namespace
