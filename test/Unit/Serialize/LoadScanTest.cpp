//===- LoadScanTest.cpp - One pre-scan per load, located errors kept ------===//
//
// Note [One pre-scan per load] and Note [Located errors kept]
// (lib/Serialize/ModelLoad.cpp): a binary load walks the wire format once,
// whichever way it ends (the wire lift, a give-up and the ModelProto way on
// the slim copy of a big file, or an error); the scan count is
// detail::wireScanCount(), a debug counter.
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Serialize/WireScan.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

std::string tempDir() {
  std::string d = (fs::temp_directory_path() / "onnxir-loadscan-XXXXXX").string();
  if (!::mkdtemp(d.data())) return "";
  return d;
}

/// y = Add(x, w), w an initializer of `weightBytes` bytes of float.
proto::ModelProto addModel(size_t weightBytes, const std::string &operand = "w") {
  proto::ModelProto mp;
  mp.set_ir_version(8);
  mp.add_opset_import()->set_version(17);
  auto *g = mp.mutable_graph();
  g->set_name("g");
  g->add_input()->set_name("x");
  auto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(proto::TensorProto::FLOAT);
  w->add_dims(int64_t(weightBytes / 4));
  w->set_raw_data(std::string(weightBytes / 4 * 4, '\0'));
  auto *n = g->add_node();
  n->set_op_type("Add");
  n->add_input("x");
  n->add_input(operand);
  n->add_output("y");
  g->add_output()->set_name("y");
  return mp;
}

/// A second, empty `graph` field: protobuf merges it into the first (the
/// same model), the wire lift gives up on it ("not exactly one graph").
std::string withSecondGraph(const proto::ModelProto &mp) {
  return mp.SerializeAsString() + std::string("\x3a\x00", 2);
}

std::string writeFile(const std::string &dir, const std::string &name, const std::string &bytes) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(LoadScan, BigFileTheWireLiftGivesUpOnIsScannedOnce) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  // Over the 8 MiB of Note [Slim parsing]: the fallback parses a slim copy.
  std::string path = writeFile(dir, "big.onnx", withSecondGraph(addModel(9u << 20)));
  uint64_t before = detail::wireScanCount();
  auto m = loadModel(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(detail::wireScanCount() - before, 1u); // 3 before: wire, slim, parse
  EXPECT_EQ((*m)->graph().initializers().size(), 1u);
  fs::remove_all(dir);
}

TEST(LoadScan, BufferTheWireLiftGivesUpOnIsScannedOnce) {
  uint64_t before = detail::wireScanCount();
  auto m = liftModel(withSecondGraph(addModel(64)));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(detail::wireScanCount() - before, 1u); // 2 before: wire, parse
}

TEST(LoadScan, AnInvalidModelIsScannedOnceAndItsErrorLocated) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  for (size_t bytes : {size_t(64), size_t(9u << 20)}) {
    std::string path = writeFile(dir, "bad.onnx", addModel(bytes, "nope").SerializeAsString());
    uint64_t before = detail::wireScanCount();
    auto m = loadModel(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(detail::wireScanCount() - before, 1u) << bytes; // 2 or 3 before
    EXPECT_EQ(m.status().message(),
              path + ": graph \"g\" > node #0 (Add): input \"nope\" is undefined");
  }
  fs::remove_all(dir);
}

TEST(LoadScan, ATruncatedFileKeepsTheScansLocatedError) {
  std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  std::string whole = addModel(9u << 20).SerializeAsString();
  for (size_t cut : {whole.size() - 1, whole.size() / 2, size_t(40)}) {
    std::string path = writeFile(dir, "cut.onnx", whole.substr(0, cut));
    uint64_t before = detail::wireScanCount();
    auto m = loadModel(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(detail::wireScanCount() - before, 1u) << cut;
    EXPECT_NE(m.status().message().find(path + ": not a valid ONNX model: at byte "),
              std::string::npos)
        << m.status();
    EXPECT_NE(m.status().message().find("past the end"), std::string::npos) << m.status();
  }
  fs::remove_all(dir);
}

} // namespace
