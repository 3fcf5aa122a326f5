//===- TextRoundTripTest.cpp - binary -> text -> binary over the corpus ---===//
//
// For every model of the round-trip corpus: lift, print lossless, parse,
// lower; the result must equal the input field for field (MessageDifferencer).
// Also print(parse(print(m))) == print(m) in every printing mode.
//
// Corpus: /usr/share/libonnx-testdata/data/**/model.onnx and
// /work/shared/models/**/*.onnx (missing directories are skipped).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/onnx.pb.h"

#include "google/protobuf/util/message_differencer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace onnxir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  auto scan = [&](const fs::path &root, bool onlyModelOnnx) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const fs::path &p = it->path();
      if (p.extension() != ".onnx" || !it->is_regular_file()) continue;
      if (onlyModelOnnx && p.filename() != "model.onnx") continue;
      out.push_back(p.string());
    }
  };
  scan("/usr/share/libonnx-testdata/data", true);
  scan("/work/shared/models", false);
  std::sort(out.begin(), out.end());
  return out;
}

std::string readFile(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class TextCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(TextCorpus, LosslessRoundTrip) {
  const std::string &path = GetParam();
#ifdef ONNXIR_SANITIZED
  // Sanitized builds run ~10x slower; the big models are covered by the
  // normal build.
  if (fs::file_size(path) > (4u << 20)) GTEST_SKIP() << "large model skipped under sanitizers";
#endif
  auto m = loadModel(path);
  ASSERT_TRUE(m.ok()) << "lift failed: " << m.status().message();

  PrintOptions po;
  po.lossless = true;
  std::string text = printModelText(**m, po);
  auto m2 = parseModelText(text, path + ".onnxtxt");
  ASSERT_TRUE(m2.ok()) << m2.status().message();
  EXPECT_EQ(printModelText(**m2, po), text) << "lossless printing is not stable";

  // Compare with the input file itself, field for field.
  proto::ModelProto want, got;
  ASSERT_TRUE(want.ParseFromString(readFile(path)));
  absl::Status s = lowerModel(**m2, &got);
  ASSERT_TRUE(s.ok()) << s.message();
  google::protobuf::util::MessageDifferencer md;
  std::string diff;
  md.ReportDifferencesToString(&diff);
  EXPECT_TRUE(md.Compare(want, got)) << path << ":\n" << diff.substr(0, 4000);

  // The other modes are stable too.
  for (int mode = 0; mode < 2; ++mode) {
    PrintOptions o;
    o.standardOnly = mode == 1;
    // Elided tensors cannot be read back (by design), so nothing is elided.
    o.elideElementsAbove = INT64_MAX;
    std::string p1 = printModelText(**m, o);
    auto m3 = parseModelText(p1, path + ".default");
    ASSERT_TRUE(m3.ok()) << m3.status().message();
    EXPECT_EQ(printModelText(**m3, o), p1) << "printing is not stable, mode " << mode;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, TextCorpus, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string n = info.param;
                           for (char &c : n)
                             if (!isalnum((unsigned char)c)) c = '_';
                           return n + "_" + std::to_string(info.index);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TextCorpus);

// An empty or partial walk would instantiate few cases or none and pass
// quietly: 1,088 models today.
TEST(TextCorpusWalk, FindsTheCorpus) { EXPECT_GE(corpus().size(), 1000u); }

} // namespace
