//===- StreamedSaveTest.cpp - saveModel splices big raw tensors ----------===//
//
// saveModel writes the raw bytes of big main-graph initializers straight from
// the IR, in chunks whose mapped pages are dropped (Note [Streamed save] in
// lib/Serialize/ModelSave.cpp). The file must be byte for byte what lowering
// to bytes (lowerModel) gives, with every field around the spliced bytes (model,
// graph and tensor fields before and after them, unknown fields at each
// level) in place, whether the bytes come from a mapped input file (big
// files) or from memory.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <google/protobuf/util/message_differencer.h>
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testfiles::readFile;

// A model with every field around the main graph's initializers set, and
// `numBig` raw initializers of `bigBytes` bytes each.
proto::ModelProto richModel(int numBig, size_t bigBytes) {
  proto::ModelProto mp;
  mp.set_ir_version(10);
  mp.set_producer_name("streamed");
  mp.set_producer_version("1");
  mp.set_domain("test");
  mp.set_model_version(3);
  mp.set_doc_string("model doc");
  auto *op = mp.add_opset_import();
  op->set_domain("");
  op->set_version(21);
  auto *md = mp.add_metadata_props();
  md->set_key("k");
  md->set_value("v");
  mp.mutable_unknown_fields()->AddVarint(1000, 7);
  auto *g = mp.mutable_graph();
  g->set_name("g");
  g->set_doc_string("graph doc");
  g->mutable_unknown_fields()->AddLengthDelimited(999, "graph extra");
  auto *x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  std::string prev = "x";
  for (int i = 0; i < numBig + 1; ++i) {
    std::string name = "w" + std::to_string(i);
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    size_t bytes = i < numBig ? bigBytes : 16; // the last one is small
    t->add_dims((int64_t)(bytes / 4));
    std::string raw(bytes, '\0');
    for (size_t k = 0; k < bytes; ++k) raw[k] = (char)((k * 131 + i) & 0xFF);
    t->set_raw_data(raw);
    t->set_doc_string("tensor doc " + std::to_string(i));
    auto *tm = t->add_metadata_props();
    tm->set_key("origin");
    tm->set_value(name);
    t->mutable_segment()->set_begin(0);
    t->mutable_segment()->set_end(1);
    t->mutable_unknown_fields()->AddVarint(500 + i, 1);
    auto *n = g->add_node();
    n->add_input(prev);
    n->add_input(name);
    prev = "y" + std::to_string(i);
    n->add_output(prev);
    n->set_op_type("Add");
  }
  // An input with a default: an initializer of the same name as an input.
  auto *d = g->add_input();
  d->set_name("w0");
  g->add_output()->set_name(prev);
  auto *vi = g->add_value_info();
  vi->set_name("y0");
  return mp;
}

class StreamedSave : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxir-streamed-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Saves `mp` (lifted from a file, so big files are mapped) and checks the
  // output bytes against lowering in one piece and the input message.
  void check(const proto::ModelProto &mp) {
    std::string in = (dir_ / "in.onnx").string(), out = (dir_ / "out.onnx").string();
    std::string bytes;
    ASSERT_TRUE(mp.SerializeToString(&bytes));
    {
      std::ofstream f(in, std::ios::binary);
      f.write(bytes.data(), (std::streamsize)bytes.size());
    }
    auto m = loadModel(in);
    ASSERT_TRUE(m.ok()) << m.status();
    auto whole = lowerModel(**m);
    ASSERT_TRUE(whole.ok()) << whole.status();
    ASSERT_TRUE(saveModel(**m, out).ok());
    std::string saved = readFile(out);
    EXPECT_EQ(saved.size(), whole->size());
    EXPECT_TRUE(saved == *whole) << "the streamed file differs from the lowered bytes";
    proto::ModelProto back;
    ASSERT_TRUE(back.ParseFromString(saved));
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, mp));
    // Saving twice (pages of the mapped input were dropped on the way) gives
    // the same bytes: dropped pages are read again from the file.
    ASSERT_TRUE(saveModel(**m, out).ok());
    EXPECT_TRUE(readFile(out) == saved);
  }

  fs::path dir_;
};

} // namespace

// Over 8 MiB: the lifter maps the file and the tensors are views into it.
TEST_F(StreamedSave, MappedInputIsSplicedLosslessly) { check(richModel(3, 4u << 20)); }

// Small file: the tensors are in memory (never madvised).
TEST_F(StreamedSave, InMemoryTensorsAreSplicedLosslessly) { check(richModel(2, 100u << 10)); }

// Tensors over the 16 MiB write chunk.
TEST_F(StreamedSave, TensorsBiggerThanOneChunk) { check(richModel(1, 40u << 20)); }

// A model built in memory: no file behind any tensor.
TEST_F(StreamedSave, BuiltModel) {
  proto::ModelProto mp = richModel(2, 1u << 20);
  auto m = liftModel(mp);
  ASSERT_TRUE(m.ok()) << m.status();
  std::string out = (dir_ / "built.onnx").string();
  ASSERT_TRUE(saveModel(**m, out).ok());
  proto::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(readFile(out)));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, mp));
}
