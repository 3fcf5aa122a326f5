//===- DirectLowerTest.cpp - Direct lower == the old ModelProto lower -----===//
//
// Note [Direct lower] promises the bytes protobuf wrote for the ModelProto
// the old lowerer built. Here every corpus model (ONNX's backend tests,
// ../shared/models, test/Serialize/corpus, the latter also with unknown
// fields added to every sub-message) is lowered both ways and the bytes
// compared, as lifted and after edits of modeled fields; saves (plain, with
// big tensors written from their mapping, and with --external-data) are
// compared with the old save's bytes too. The old lowerer is LegacyLower.cpp.
//
//===----------------------------------------------------------------------===//
#include "LegacyLower.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testfiles::corpus;
using testfiles::readFile;


std::vector<std::string> textCorpus() {
  std::vector<std::string> files;
  for (auto &e : fs::directory_iterator(std::string(ONNXIR_SOURCE_DIR) + "/test/Serialize/corpus"))
    if (e.path().extension() == ".textproto") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string oldBytes(const Model &m) {
  proto::ModelProto mp;
  auto s = legacy::lowerProto(m, &mp, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  return legacy::serialize(mp);
}

// "" if the direct lower writes the old bytes, else where they part.
std::string compare(const Model &m) {
  auto got = lowerModel(m);
  if (!got.ok()) return "direct lower failed: " + got.status().ToString();
  std::string want = oldBytes(m);
  if (*got == want) return "";
  size_t i = 0;
  while (i < got->size() && i < want.size() && (*got)[i] == want[i]) ++i;
  return "bytes differ at offset " + std::to_string(i) + " (direct " +
         std::to_string(got->size()) + " bytes, old " + std::to_string(want.size()) + ")";
}

// Edits of modeled fields, so that both lowerers write them over residuals.
void edit(Model &m) {
  int k = 0;
  m.walkGraphs([&](Graph *g) {
    g->name = "";
    g->docString = "edited";
    for (Node &n : g->nodes()) {
      n.setName((k++ % 2) ? "" : "renamed");
      n.docString = (k % 3) ? "" : "doc";
    }
    for (Value *v : g->initializers()) v->initializer()->docString = "init";
  });
  m.producerName = "edited";
  m.docString.reset();
}

// One unknown field of each wire type on `msg` and every message under it.
void addUnknownEverywhere(google::protobuf::Message *msg, int &salt) {
  const auto *refl = msg->GetReflection();
  auto *u = refl->MutableUnknownFields(msg);
  int n = 900 + (salt++ % 40);
  u->AddVarint(n, 300 + salt);
  u->AddFixed32(n + 1, 0xdeadbeef);
  u->AddFixed64(n + 2, 0x0123456789abcdefull);
  u->AddLengthDelimited(n + 3, std::string("unk\0bytes", 9));
  u->AddGroup(n + 4)->AddVarint(1, 7);
  std::vector<const google::protobuf::FieldDescriptor *> fields;
  refl->ListFields(*msg, &fields);
  for (const auto *f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated())
      for (int i = 0; i < refl->FieldSize(*msg, f); ++i)
        addUnknownEverywhere(refl->MutableRepeatedMessage(msg, f, i), salt);
    else
      addUnknownEverywhere(refl->MutableMessage(msg, f), salt);
  }
}

TEST(DirectLower, CorpusModelsGiveTheOldBytes) {
  std::vector<std::string> files = corpus();
  ASSERT_GT(files.size(), 0u) << "no corpus found";
  unsigned same = 0, lifted = 0;
  std::vector<std::string> failures;
  for (const std::string &f : files) {
    auto m = loadModel(f);
    if (!m.ok()) continue; // the lossless tests say why
    ++lifted;
    std::string r = compare(**m);
    if (r.empty()) {
      edit(**m);
      r = compare(**m);
      if (!r.empty()) r = "after edits: " + r;
    }
    if (r.empty()) ++same;
    else failures.push_back(f + ": " + r);
  }
  std::printf("direct lower: %u of %u models as the old lowerer\n", same, lifted);
  EXPECT_GT(lifted, 0u);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

TEST(DirectLower, TextCorpusWithAndWithoutUnknownFields) {
  std::vector<std::string> files = textCorpus();
  ASSERT_GE(files.size(), 9u) << "test/Serialize/corpus/*.textproto";
  for (const std::string &f : files) {
    proto::ModelProto mp;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(readFile(f), &mp)) << f;
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) {
        int salt = 0;
        addUnknownEverywhere(&mp, salt);
      }
      std::string bytes = mp.SerializeAsString();
      auto m = liftModel(llvm::StringRef(bytes));
      ASSERT_TRUE(m.ok()) << f << ": " << m.status();
      EXPECT_EQ(compare(**m), "") << f << (pass ? " (unknown fields everywhere)" : "");
      edit(**m);
      EXPECT_EQ(compare(**m), "") << f << (pass ? " (unknown fields everywhere)" : "")
                                  << " after edits";
    }
  }
}

// The old save's data sink: tensors over `threshold` bytes to one data file
// at 4096-aligned offsets (ModelSave.cpp's Placer does the same).
class OldDataSink final : public legacy::TensorSink {
public:
  OldDataSink(std::string location, uint64_t threshold)
      : location_(std::move(location)), threshold_(threshold) {}
  absl::StatusOr<bool> place(const Tensor &t, proto::TensorProto *out) override {
    if (t.dataType() == DataType::String) return false;
    bool isExt = t.storage() == Tensor::Storage::External;
    if (!isExt && t.storage() != Tensor::Storage::Raw && t.storage() != Tensor::Storage::Typed)
      return false;
    if (!isExt) {
      auto n = t.numElements();
      if (!n || dataTypeStorageBytes(t.dataType(), (uint64_t)*n) <= threshold_) return false;
    }
    auto data = t.bytes();
    if (!data.ok()) return data.status();
    data_.append((4096 - data_.size() % 4096) % 4096, '\0');
    uint64_t offset = data_.size();
    data_.append(data->data(), data->size());
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
    add("offset", std::to_string(offset));
    add("length", std::to_string(data->size()));
    out->set_data_location(proto::TensorProto::EXTERNAL);
    return true;
  }
  const std::string &data() const { return data_; }

private:
  std::string location_;
  uint64_t threshold_;
  std::string data_;
};

TEST(DirectLower, SavesGiveTheOldBytes) {
  // Real models: big initializers (written from their mapping) and, with
  // --external-data, tensors moved to a data file.
  std::string dir = fs::temp_directory_path() / ("onnxir-directlower-" + std::to_string(getpid()));
  fs::create_directories(dir);
  unsigned checked = 0;
  for (auto &e : fs::directory_iterator(ONNXIR_SHARED_DIR "/models/real")) {
    if (e.path().extension() != ".onnx") continue;
    auto m = loadModel(e.path());
    ASSERT_TRUE(m.ok()) << m.status();
    std::string plain = dir + "/plain.onnx";
    ASSERT_TRUE(saveModel(**m, plain).ok());
    EXPECT_TRUE(readFile(plain) == oldBytes(**m)) << e.path() << ": plain save differs";

    std::string withData = dir + "/ext.onnx";
    LowerOptions lo;
    lo.externalDataFile = "w.bin";
    lo.externalThreshold = 1024;
    ASSERT_TRUE(saveModel(**m, withData, lo).ok());
    OldDataSink sink("w.bin", 1024);
    proto::ModelProto mp;
    ASSERT_TRUE(legacy::lowerProto(**m, &mp, &sink).ok());
    EXPECT_TRUE(readFile(withData) == legacy::serialize(mp)) << e.path() << ": model differs";
    EXPECT_TRUE(readFile(dir + "/w.bin") == sink.data()) << e.path() << ": data file differs";

    // Saved again from the external-data model: the data is carried along.
    auto m2 = loadModel(withData);
    ASSERT_TRUE(m2.ok()) << m2.status();
    EXPECT_EQ(compare(**m2), "") << e.path() << " with external data";
    fs::remove(plain);
    fs::remove(withData);
    fs::remove(dir + "/w.bin");
    ++checked;
  }
  fs::remove_all(dir);
  EXPECT_GE(checked, 7u) << ONNXIR_SHARED_DIR "/models/real/*.onnx";
}

TEST(DirectLower, LowerIntoAProtoParsesTheBytes) {
  proto::ModelProto mp;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      readFile(std::string(ONNXIR_SOURCE_DIR) + "/test/Serialize/corpus/all_fields.textproto"),
      &mp));
  auto m = liftModel(llvm::StringRef(mp.SerializeAsString()));
  ASSERT_TRUE(m.ok()) << m.status();
  proto::ModelProto got;
  got.set_producer_name("stale"); // cleared first
  ASSERT_TRUE(lowerModel(**m, &got).ok());
  EXPECT_EQ(got.SerializeAsString(), oldBytes(**m));
}

} // namespace
