//===- ProtoCoexistenceTest.cpp - onnxir's schema next to libonnx's -------===//
//
// A front-end may link onnxir together with libonnx or onnxruntime. Both
// register an ONNX schema with protobuf's generated pool; ours must live under
// its own file path and package so the two never clash, and it must stay
// wire-compatible: every field libonnx knows has the same number, type and
// label in ours.
//
//===----------------------------------------------------------------------===//
#include "onnxir/onnx.pb.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ProtoCoexistence, BothSchemasAreRegistered) {
  const DescriptorPool *pool = DescriptorPool::generated_pool();
  const Descriptor *ours = pool->FindMessageTypeByName("onnxir.proto.ModelProto");
  const Descriptor *theirs = pool->FindMessageTypeByName("onnx.ModelProto");
  ASSERT_NE(ours, nullptr);
  ASSERT_NE(theirs, nullptr);
  EXPECT_EQ(ours->file()->name(), "onnxir/onnx.proto");
  EXPECT_NE(ours->file()->name(), theirs->file()->name());
}

TEST(ProtoCoexistence, SameBytesReadAlike) {
  std::string path = std::string(ONNXIR_SHARED_DIR) + "/models/real/silero_vad_v5.onnx";
  std::string bytes = readFile(path);
  ASSERT_FALSE(bytes.empty()) << path;
  onnxir::proto::ModelProto ours;
  onnx::ModelProto theirs;
  ASSERT_TRUE(ours.ParseFromString(bytes));
  ASSERT_TRUE(theirs.ParseFromString(bytes));
  ASSERT_EQ(ours.graph().node_size(), theirs.graph().node_size());
  for (int i = 0; i < ours.graph().node_size(); ++i) {
    EXPECT_EQ(ours.graph().node(i).name(), theirs.graph().node(i).name());
    EXPECT_EQ(ours.graph().node(i).op_type(), theirs.graph().node(i).op_type());
  }
  // Both serialize back to the same bytes.
  EXPECT_EQ(ours.SerializeAsString(), theirs.SerializeAsString());
}

// Every field of every libonnx message exists in ours with the same number,
// type and label. Fields only we have (newer IR versions) are allowed.
void compareMessages(const Descriptor *theirs, const Descriptor *ours, int &checked) {
  for (int i = 0; i < theirs->field_count(); ++i) {
    const FieldDescriptor *tf = theirs->field(i);
    const FieldDescriptor *of = ours->FindFieldByName(tf->name());
    ASSERT_NE(of, nullptr) << theirs->full_name() << "." << tf->name() << " missing in ours";
    EXPECT_EQ(of->number(), tf->number()) << tf->full_name();
    EXPECT_EQ(of->type(), tf->type()) << tf->full_name();
    EXPECT_EQ(of->label(), tf->label()) << tf->full_name();
    EXPECT_EQ(of->is_packed(), tf->is_packed()) << tf->full_name();
    ++checked;
  }
  for (int i = 0; i < theirs->nested_type_count(); ++i) {
    const Descriptor *tn = theirs->nested_type(i);
    if (tn->options().map_entry()) continue;
    const Descriptor *on = ours->FindNestedTypeByName(tn->name());
    ASSERT_NE(on, nullptr) << tn->full_name() << " missing in ours";
    compareMessages(tn, on, checked);
  }
}

TEST(ProtoCoexistence, FieldNumbersMatchLibonnx) {
  const google::protobuf::FileDescriptor *theirs = onnx::ModelProto::descriptor()->file();
  const google::protobuf::FileDescriptor *ours = onnxir::proto::ModelProto::descriptor()->file();
  int checked = 0;
  for (int i = 0; i < theirs->message_type_count(); ++i) {
    const Descriptor *tm = theirs->message_type(i);
    const Descriptor *om = ours->FindMessageTypeByName(tm->name());
    ASSERT_NE(om, nullptr) << tm->full_name() << " missing in ours";
    compareMessages(tm, om, checked);
  }
  for (int i = 0; i < theirs->enum_type_count(); ++i) {
    auto *te = theirs->enum_type(i);
    auto *oe = ours->FindEnumTypeByName(te->name());
    ASSERT_NE(oe, nullptr) << te->full_name();
    for (int j = 0; j < te->value_count(); ++j) {
      // IR_VERSION names the newest version each schema knows: it differs.
      if (te->value(j)->name() == "IR_VERSION") continue;
      auto *ov = oe->FindValueByName(te->value(j)->name());
      ASSERT_NE(ov, nullptr) << te->value(j)->full_name();
      EXPECT_EQ(ov->number(), te->value(j)->number());
    }
  }
  EXPECT_GT(checked, 100);
}

} // namespace
