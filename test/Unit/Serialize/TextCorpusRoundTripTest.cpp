//===- TextCorpusRoundTripTest.cpp - Hand-written models round trip ------===//
//
// Each test/Serialize/corpus/*.textproto is parsed with TextFormat into a
// ModelProto, serialized, lifted and lowered; the result must be equal field
// for field (MessageDifferencer; NaN equals NaN). A further set of tests adds
// unknown fields (UnknownFieldSet) to every kind of sub-message.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"
#include "TestFiles.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;
using google::protobuf::UnknownFieldSet;
using testfiles::readFile;

namespace {

std::string corpusPath(const std::string &name) {
  return std::string(ONNXIR_SOURCE_DIR) + "/test/Serialize/corpus/" + name;
}

// Parses a corpus file; fails the test on a parse error.
bool parseText(const std::string &name, proto::ModelProto *mp) {
  std::string text = readFile(corpusPath(name));
  if (text.empty()) {
    ADD_FAILURE() << corpusPath(name) << ": missing or empty";
    return false;
  }
  google::protobuf::TextFormat::Parser parser;
  if (!parser.ParseFromString(text, mp)) {
    ADD_FAILURE() << name << ": TextFormat cannot parse it";
    return false;
  }
  return true;
}

// "" if equal, else the differences.
std::string diffModels(const proto::ModelProto &want, const proto::ModelProto &got) {
  google::protobuf::util::DefaultFieldComparator cmp;
  cmp.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer diff;
  diff.set_field_comparator(&cmp);
  std::string report;
  diff.ReportDifferencesToString(&report);
  if (diff.Compare(want, got)) return "";
  return report.empty() ? std::string("(differ, no report)") : report.substr(0, 6000);
}

// Serializes `want`, lifts the bytes, lowers into a ModelProto (both through
// lowerModel(Model, ModelProto*) and through bytes) and compares.
void expectRoundTrip(const proto::ModelProto &want) {
  std::string bytes;
  ASSERT_TRUE(want.SerializeToString(&bytes));
  auto m = liftModel(llvm::StringRef(bytes));
  ASSERT_TRUE(m.ok()) << "lift failed: " << m.status();
  proto::ModelProto got;
  auto s = lowerModel(**m, &got);
  ASSERT_TRUE(s.ok()) << "lower failed: " << s;
  EXPECT_EQ(diffModels(want, got), "") << "lower(lift(m)) != m";
  auto lowered = lowerModel(**m);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  proto::ModelProto got2;
  ASSERT_TRUE(got2.ParseFromString(*lowered));
  EXPECT_EQ(diffModels(want, got2), "") << "lowered bytes differ";
  // Lowering twice gives the same bytes (lowering does not consume the IR).
  auto again = lowerModel(**m);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *lowered);
}

void roundTripFile(const std::string &name) {
  proto::ModelProto mp;
  if (!parseText(name, &mp)) return;
  expectRoundTrip(mp);
}

} // namespace

//===----------------------------------------------------------------------===//
// One test per corpus file.
//===----------------------------------------------------------------------===//

TEST(TextCorpus, AllFields) { roundTripFile("all_fields.textproto"); }
TEST(TextCorpus, DeviceConfiguration) { roundTripFile("device_configuration.textproto"); }
TEST(TextCorpus, TrainingInfo) { roundTripFile("training_info.textproto"); }
TEST(TextCorpus, ElemTypesRaw) { roundTripFile("elem_types_raw.textproto"); }
TEST(TextCorpus, ElemTypesTyped) { roundTripFile("elem_types_typed.textproto"); }
TEST(TextCorpus, GraphEdges) { roundTripFile("graph_edges.textproto"); }
TEST(TextCorpus, Functions) { roundTripFile("functions.textproto"); }
TEST(TextCorpus, ExplicitDefaults) { roundTripFile("explicit_defaults.textproto"); }
// A GRAPH attribute default of a function (its own root scope).
TEST(TextCorpus, FunctionGraphDefault) { roundTripFile("function_graph_default.textproto"); }

TEST(TextCorpus, EveryCorpusFileHasATest) {
  // Keeps this file and the corpus folder in step.
  std::set<std::string> listed = {
      "all_fields.textproto",      "device_configuration.textproto", "training_info.textproto",
      "elem_types_raw.textproto",  "elem_types_typed.textproto",     "graph_edges.textproto",
      "functions.textproto",       "explicit_defaults.textproto",
      "function_graph_default.textproto"};
  for (auto &e : fs::directory_iterator(corpusPath("")))
    if (e.path().extension() == ".textproto") {
      EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path() << " has no test";
    }
}

//===----------------------------------------------------------------------===//
// Unknown fields on every kind of sub-message.
//===----------------------------------------------------------------------===//

namespace {

// Adds one unknown field of each wire type, at numbers no schema uses.
template <class M> void addUnknown(M *msg, int salt = 0, bool group = true) {
  UnknownFieldSet *u = msg->mutable_unknown_fields();
  u->AddVarint(900 + salt, 12345 + salt);
  u->AddFixed32(901 + salt, 0xdeadbeef);
  u->AddFixed64(902 + salt, 0x0123456789abcdefull);
  u->AddLengthDelimited(903 + salt, std::string("unk\0bytes", 9));
  if (group) u->AddGroup(904 + salt)->AddVarint(1, 7);
}

proto::ModelProto unknownEverywhere() {
  proto::ModelProto mp;
  parseText("all_fields.textproto", &mp);
  proto::ModelProto dev;
  parseText("device_configuration.textproto", &dev);
  proto::ModelProto fn;
  parseText("functions.textproto", &fn);
  proto::ModelProto tr;
  parseText("training_info.textproto", &tr);
  proto::ModelProto edges;
  parseText("graph_edges.textproto", &edges);
  *mp.mutable_configuration() = dev.configuration();
  *mp.mutable_functions() = fn.functions();
  *mp.mutable_training_info() = tr.training_info();
  *mp.mutable_graph()->mutable_sparse_initializer() = edges.graph().sparse_initializer();
  for (auto &si : *mp.mutable_graph()->mutable_sparse_initializer()) {
    si.mutable_values()->set_name(si.values().name() + "_u");
    mp.mutable_graph()->add_input()->set_name(si.values().name());
  }
  // Nodes of the device model reference A and B; give the graph a node with
  // device configurations of its own instead.
  *mp.mutable_graph()->mutable_node(0)->mutable_device_configurations() =
      dev.graph().node(0).device_configurations();

  addUnknown(&mp, 0);
  for (auto &o : *mp.mutable_opset_import()) addUnknown(&o, 1);
  for (auto &e : *mp.mutable_metadata_props()) addUnknown(&e, 2);
  for (auto &c : *mp.mutable_configuration()) addUnknown(&c, 3);
  auto *g = mp.mutable_graph();
  addUnknown(g, 4);
  for (auto &e : *g->mutable_metadata_props()) addUnknown(&e, 5);
  for (auto &vi : *g->mutable_input()) {
    addUnknown(&vi, 6);
    if (vi.has_type()) {
      addUnknown(vi.mutable_type(), 7);
      auto *tp = vi.mutable_type();
      if (tp->has_tensor_type()) {
        addUnknown(tp->mutable_tensor_type(), 8);
        if (tp->tensor_type().has_shape()) {
          addUnknown(tp->mutable_tensor_type()->mutable_shape(), 9);
          for (auto &d : *tp->mutable_tensor_type()->mutable_shape()->mutable_dim())
            addUnknown(&d, 10);
        }
      }
      if (tp->has_sequence_type()) addUnknown(tp->mutable_sequence_type(), 11);
      if (tp->has_map_type()) addUnknown(tp->mutable_map_type(), 12);
      if (tp->has_optional_type()) addUnknown(tp->mutable_optional_type(), 13);
      if (tp->has_sparse_tensor_type()) addUnknown(tp->mutable_sparse_tensor_type(), 14);
      if (tp->has_opaque_type()) addUnknown(tp->mutable_opaque_type(), 15);
    }
    for (auto &e : *vi.mutable_metadata_props()) addUnknown(&e, 16);
  }
  for (auto &vi : *g->mutable_output()) addUnknown(&vi, 17);
  for (auto &vi : *g->mutable_value_info()) addUnknown(&vi, 18);
  for (auto &t : *g->mutable_initializer()) {
    addUnknown(&t, 19);
    if (t.has_segment()) addUnknown(t.mutable_segment(), 20);
    for (auto &e : *t.mutable_metadata_props()) addUnknown(&e, 21);
  }
  for (auto &s : *g->mutable_sparse_initializer()) {
    addUnknown(&s, 22);
    addUnknown(s.mutable_values(), 23);
    addUnknown(s.mutable_indices(), 24);
  }
  for (auto &q : *g->mutable_quantization_annotation()) {
    addUnknown(&q, 25);
    for (auto &e : *q.mutable_quant_parameter_tensor_names()) addUnknown(&e, 26);
  }
  for (auto &n : *g->mutable_node()) {
    addUnknown(&n, 27);
    for (auto &e : *n.mutable_metadata_props()) addUnknown(&e, 28);
    for (auto &dc : *n.mutable_device_configurations()) {
      addUnknown(&dc, 29);
      for (auto &ss : *dc.mutable_sharding_spec()) {
        addUnknown(&ss, 30);
        for (auto &m : *ss.mutable_index_to_device_group_map()) addUnknown(&m, 31);
        for (auto &sd : *ss.mutable_sharded_dim()) {
          addUnknown(&sd, 32);
          for (auto &x : *sd.mutable_simple_sharding()) addUnknown(&x, 33);
        }
      }
    }
    for (auto &a : *n.mutable_attribute()) {
      addUnknown(&a, 34);
      if (a.has_t()) addUnknown(a.mutable_t(), 35);
      if (a.has_g()) {
        addUnknown(a.mutable_g(), 36);
        for (auto &sn : *a.mutable_g()->mutable_node()) addUnknown(&sn, 37);
        for (auto &so : *a.mutable_g()->mutable_output()) addUnknown(&so, 38);
        for (auto &si : *a.mutable_g()->mutable_initializer()) addUnknown(&si, 39);
      }
      if (a.has_sparse_tensor()) addUnknown(a.mutable_sparse_tensor(), 40);
      if (a.has_tp()) addUnknown(a.mutable_tp(), 41);
      for (auto &t : *a.mutable_tensors()) addUnknown(&t, 42);
      for (auto &sg : *a.mutable_graphs()) addUnknown(&sg, 43);
      for (auto &sp : *a.mutable_sparse_tensors()) addUnknown(&sp, 44);
      for (auto &tp : *a.mutable_type_protos()) addUnknown(&tp, 45);
    }
  }
  for (auto &f : *mp.mutable_functions()) {
    addUnknown(&f, 46);
    for (auto &o : *f.mutable_opset_import()) addUnknown(&o, 47);
    for (auto &a : *f.mutable_attribute_proto()) addUnknown(&a, 48);
    for (auto &n : *f.mutable_node()) {
      addUnknown(&n, 49);
      for (auto &a : *n.mutable_attribute()) addUnknown(&a, 50);
    }
    for (auto &vi : *f.mutable_value_info()) addUnknown(&vi, 51);
    for (auto &e : *f.mutable_metadata_props()) addUnknown(&e, 52);
  }
  for (auto &t : *mp.mutable_training_info()) {
    addUnknown(&t, 53);
    if (t.has_initialization()) addUnknown(t.mutable_initialization(), 54);
    if (t.has_algorithm()) addUnknown(t.mutable_algorithm(), 55);
    for (auto &b : *t.mutable_initialization_binding()) addUnknown(&b, 56);
    for (auto &b : *t.mutable_update_binding()) addUnknown(&b, 57);
  }
  return mp;
}

} // namespace

TEST(UnknownFields, OnModelOnly) {
  proto::ModelProto mp;
  ASSERT_TRUE(parseText("all_fields.textproto", &mp));
  addUnknown(&mp);
  expectRoundTrip(mp);
}

TEST(UnknownFields, OnGraphNodeAttributeTensorValueInfo) {
  proto::ModelProto mp;
  ASSERT_TRUE(parseText("all_fields.textproto", &mp));
  addUnknown(mp.mutable_graph());
  addUnknown(mp.mutable_graph()->mutable_node(0));
  addUnknown(mp.mutable_graph()->mutable_node(1)->mutable_attribute(0));
  addUnknown(mp.mutable_graph()->mutable_initializer(0));
  addUnknown(mp.mutable_graph()->mutable_input(0));
  addUnknown(mp.mutable_graph()->mutable_value_info(0));
  expectRoundTrip(mp);
}

TEST(UnknownFields, RawBytesAppendedToSerializedSubMessages) {
  // Appends a raw field (number 4242, length-delimited) to a serialized node,
  // tensor and graph by byte surgery, not through the UnknownFieldSet API.
  proto::ModelProto mp;
  ASSERT_TRUE(parseText("graph_edges.textproto", &mp));
  const std::string extra = std::string("\x92\x87\x02\x03xyz", 7); // (4242<<3)|2, len 3
  auto append = [&](auto *msg) {
    std::string b = msg->SerializeAsString() + extra;
    ASSERT_TRUE(msg->ParseFromString(b));
    ASSERT_FALSE(msg->unknown_fields().empty());
  };
  append(mp.mutable_graph()->mutable_node(0));
  append(mp.mutable_graph()->mutable_initializer(0));
  append(mp.mutable_graph()->mutable_sparse_initializer(0));
  append(mp.mutable_graph()->mutable_node(5)->mutable_attribute(0));
  append(mp.mutable_graph()->mutable_input(0)->mutable_type());
  append(mp.mutable_graph());
  append(&mp);
  expectRoundTrip(mp);
}

TEST(UnknownFields, Everywhere) {
  proto::ModelProto mp = unknownEverywhere();
  expectRoundTrip(mp);
}

TEST(UnknownFields, SlimParsingPathKeepsThem) {
  // A file over 8 MiB takes the mmap "slim" parse (raw_data as views of the
  // file). Unknown fields inside and around the big initializer, and fields
  // after raw_data, must survive it.
  proto::ModelProto mp;
  ASSERT_TRUE(parseText("graph_edges.textproto", &mp));
  auto *big = mp.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(1);
  big->add_dims(3u << 20);
  std::string raw(size_t(12) << 20, '\0');
  for (size_t i = 0; i < raw.size(); i += 4097) raw[i] = char(i * 7);
  big->set_raw_data(raw);
  big->set_doc_string("after raw");
  // No groups here: the slim walker gives up on them (and parses normally).
  addUnknown(big, 1, false);
  addUnknown(mp.mutable_graph(), 2, false);
  addUnknown(&mp, 3, false);
  fs::path dir = fs::temp_directory_path() / ("onnxir-slim-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "m.onnx").string();
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(mp.SerializeToOstream(&out));
  }
  auto m = loadModel(path);
  ASSERT_TRUE(m.ok()) << m.status();
  proto::ModelProto got;
  ASSERT_TRUE(lowerModel(**m, &got).ok());
  EXPECT_EQ(diffModels(mp, got), "");
  fs::remove_all(dir);
}
