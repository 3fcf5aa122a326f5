//===- CorpusRoundTripTest.cpp - lower(lift(m)) == m on every model -------===//
//
// The lossless contract: with no passes, lowering a lifted model gives back
// the input field for field (MessageDifferencer equality), for every model of
// ONNX's backend test suite (Debian libonnx-testdata) and of ../shared/models.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Verifier.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <google/protobuf/util/message_differencer.h>
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testfiles::corpus;
using testfiles::readFile;


// Returns "" if lower(lift(bytes)) equals bytes' ModelProto, else the diff.
std::string roundTrip(const std::string &path) {
  std::string bytes = readFile(path);
  proto::ModelProto want;
  if (!want.ParseFromString(bytes)) return "protobuf cannot parse the input";
  auto m = loadModel(path);
  if (!m.ok()) return "lift failed: " + std::string(m.status().message());
  proto::ModelProto got;
  if (auto s = lowerModel(**m, &got); !s.ok()) return "lower failed: " + s.ToString();
  google::protobuf::util::MessageDifferencer diff;
  std::string report;
  diff.ReportDifferencesToString(&report);
  if (!diff.Compare(want, got)) return report.substr(0, 2000);
  return "";
}

TEST(CorpusRoundTrip, EveryModelIsLossless) {
  std::vector<std::string> files = corpus();
  ASSERT_GT(files.size(), 0u) << "no corpus found";
  unsigned ok = 0;
  std::vector<std::string> failures;
  for (const std::string &f : files) {
    std::string r = roundTrip(f);
    if (r.empty()) ++ok;
    else failures.push_back(f + ":\n" + r);
  }
  std::printf("round trip: %u of %zu models lossless\n", ok, files.size());
  for (size_t i = 0; i < failures.size() && i < 20; ++i)
    ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " models differ";
}

TEST(CorpusRoundTrip, LiftedModelsVerify) {
  // Every corpus model lifts into IR that passes the verifier (order
  // violations allowed: some real files are unsorted).
  VerifyOptions vo;
  vo.checkOrder = false;
  unsigned checked = 0;
  for (const std::string &f : corpus()) {
    auto m = loadModel(f);
    if (!m.ok()) continue;
    auto st = verify(**m, vo);
    EXPECT_TRUE(st.ok()) << f << ": " << st;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

} // namespace
