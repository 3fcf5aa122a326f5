//===- ReplayTest.cpp - Fuzzer regressions never come back ----------------===//
//
// Every input of fuzz/corpus-regressions goes through the three fuzz entry
// points. Each must break no invariant (FuzzCommon.h) and reach the stage it
// is known to reach, with the words its refusal is known to hold: an input
// that once crashed a reader and is now refused must go on being refused
// for its reason, not start passing or fail for another. A file with no
// line here, or a line with no file, fails the test, so an emptied folder
// cannot pass.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using onnxir::fuzz::Outcome;

namespace {

struct Expected {
  Outcome::Stage lift, text, opt;
  const char *words; ///< in the first message of an entry that reads the
                     ///< input's format and is not Done ("" when none)
};

constexpr Outcome::Stage R = Outcome::Refused, I = Outcome::Invalid, D = Outcome::Done;

// clang-format off
const std::map<std::string, Expected> kExpected = {
  // Binary inputs: lifted, and valid or refused for their reason; the text
  // parser refuses them at the first byte.
  {"amp-concat-data-fn30.onnx", {D, R, D, ""}},
  {"amp-concat-data30.onnx", {D, R, D, ""}},
  {"amp-concat-syms300.onnx", {D, R, D, ""}},
  {"amp-deep-type200.onnx", {D, R, D, ""}},
  {"amp-deep-type201.onnx", {R, R, R, "types nest deeper than 200 levels"}},
  {"amp-laughs40.onnx", {D, R, D, ""}},
  {"amp-max-param300.onnx", {D, R, D, ""}},
  {"amp-max-shape260.onnx", {D, R, D, ""}},
  {"amp-nested-loops40.onnx", {D, R, D, ""}},
  {"amp-recursive-self.onnx", {I, R, R, "recursive call (local.f -> local.f)"}},
  {"amp-split13.onnx", {D, R, D, ""}},
  {"amp-split18.onnx", {D, R, D, ""}},
  {"lift-type-cache-depth201.onnx", {R, R, R, "types nest deeper than 200 levels"}},
  {"opt-constantofshape-size-overflow.onnx", {D, R, D, ""}},
  // Text inputs: the binary lift refuses them.
  {"amp-deep-annotation.onnxtxt", {R, R, R, "annotation lists and records nest deeper"}},
  {"amp-element-count.onnxtxt", {R, R, R, "holds 1 values but float dims need 3"}},
  {"amp-max-param300.onnxtxt", {R, D, R, ""}},
  {"amp-recursive.onnxtxt", {R, I, R, "recursive call (local.Even -> local.Odd -> local.Even)"}},
  {"text-function-initializers.onnxtxt", {R, R, R, "a function has no initializers"}},
  {"text-sparse-values-type0.onnxtxt", {R, R, R, "in sparse_initializer: unknown data type 0"}},
};
// clang-format on

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST(FuzzReplay, EveryRegressionInputRunsClean) {
  fs::path dir = fs::path(ONNXIR_SOURCE_DIR) / "fuzz" / "corpus-regressions";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::set<std::string> seen;
  for (auto &e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    std::string name = e.path().filename().string();
    std::string bytes = readFile(e.path());
    auto *p = reinterpret_cast<const uint8_t *>(bytes.data());
    SCOPED_TRACE(name);
    Outcome got[3] = {onnxir::fuzz::liftVerifyLower(p, bytes.size()),
                      onnxir::fuzz::parseTextPrint(p, bytes.size()),
                      onnxir::fuzz::liftOptimize(p, bytes.size())};
    const char *entry[3] = {"liftVerifyLower", "parseTextPrint", "liftOptimize"};
    // The words are looked for where the input's own format is read: the
    // text parser for .onnxtxt, else the binary lift, then -O1.
    bool text = e.path().extension() == ".onnxtxt";
    std::string msg;
    for (int i : {0, 1, 2}) {
      EXPECT_EQ(got[i].broken, "") << entry[i];
      if (msg.empty() && (i == 1) == text && got[i].stage != Outcome::Done) msg = got[i].message;
    }
    seen.insert(name);
    auto it = kExpected.find(name);
    if (it == kExpected.end()) {
      ADD_FAILURE() << name << " has no expected outcome in ReplayTest.cpp";
      continue;
    }
    const Expected &x = it->second;
    Outcome::Stage want[3] = {x.lift, x.text, x.opt};
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(onnxir::fuzz::stageName(got[i].stage), onnxir::fuzz::stageName(want[i])) << entry[i];
    EXPECT_NE(msg.find(x.words), std::string::npos) << "the first refusal: " << msg;
  }
  for (auto &[name, x] : kExpected)
    EXPECT_TRUE(seen.count(name)) << name << " is listed but not in " << dir;
  EXPECT_GE(seen.size(), kExpected.size());
  EXPECT_GE(seen.size(), 20u) << "regression inputs replayed";
}
