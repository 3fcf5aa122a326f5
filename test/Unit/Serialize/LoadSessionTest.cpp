//===- LoadSessionTest.cpp - One load's external-data policy, explicitly --===//
//
// Note [Load session] (lib/Serialize/ExternalData.h): each load carries its
// own policy and table of open files; nothing is shared through the thread.
// Also the one format rule and the one base-directory rule (ModelFile.h).
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Serialize/ExternalData.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

void writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), (std::streamsize)bytes.size());
  ASSERT_TRUE(out.good()) << path;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char *>(v.begin()), v.size() * sizeof(float));
}

// A text model whose initializer W (4 floats) lives in `location`.
std::string textModel(const std::string &location) {
  return "<ir_version: 9, opset_import: [\"\" : 19]>\n"
         "g (float[4] X) => (float[4] Y)\n"
         "<float[4] W = [\"location\": \"" + location + "\", \"offset\": \"0\", \"length\": \"16\"]>\n"
         "{\n  Y = Add(X, W)\n}\n";
}

class LoadSessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("onnxir-session-") + info->name() + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    fs::create_directories(dir_ / "blobs");
    // model/link.bin -> ../blobs/w.bin: a link that leaves the directory.
    writeFile(dir_ / "blobs" / "w.bin", floats({1, 2, 3, 4}));
    fs::create_symlink("../blobs/w.bin", dir_ / "model" / "link.bin");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string modelDir() const { return (dir_ / "model").string(); }
  fs::path dir_;
};

ExternalDataRef ref(const std::string &location) {
  ExternalDataRef r;
  r.location = location;
  r.offset = 0;
  r.length = 16;
  return r;
}

std::vector<float> valuesOfW(Model &m) {
  for (Value *v : m.graph().initializers())
    if (v->initializer() && v->initializer()->name() == "W") {
      auto x = v->initializer()->values<float>();
      if (!x.ok()) {
        ADD_FAILURE() << x.status();
        return {};
      }
      return *x;
    }
  ADD_FAILURE() << "no initializer W";
  return {};
}

} // namespace

TEST_F(LoadSessionTest, NestedLoadsKeepTheirOwnPolicy) {
  // An outer load that allows links out of the directory binds link.bin;
  // a load started inside it, which does not, must check link.bin itself
  // and refuse it. With the policy in a thread_local and the open-file
  // table shared by nested loads, the inner load took the outer load's
  // open file without a check and accepted the link.
  detail::LoadSession outer(modelDir(), /*allowLinksOutside=*/true);
  ExternalDataRef a = ref("link.bin");
  ASSERT_TRUE(outer.bind(a, "W").ok());
  {
    detail::LoadSession inner(modelDir(), /*allowLinksOutside=*/false);
    ExternalDataRef b = ref("link.bin");
    auto l = inner.bind(b, "W");
    ASSERT_FALSE(l.ok()) << "the inner load took the outer load's permissive binding";
    EXPECT_NE(std::string(l.status().message()).find("outside the model's directory"),
              std::string::npos)
        << l.status();
  }
  // ...and the outer load's policy is its own after the inner one ended.
  ExternalDataRef c = ref("link.bin");
  EXPECT_TRUE(outer.bind(c, "W").ok());
}

TEST_F(LoadSessionTest, TwoLoadsOnOneThreadSeeTheirOwnPolicy) {
  // A strict load and a permissive one alive at once, used in turns.
  detail::LoadSession strict(modelDir(), false);
  detail::LoadSession loose(modelDir(), true);
  for (int round = 0; round < 2; ++round) {
    ExternalDataRef s = ref("link.bin"), l = ref("link.bin");
    EXPECT_FALSE(strict.bind(s, "W").ok()) << "round " << round;
    EXPECT_TRUE(loose.bind(l, "W").ok()) << "round " << round;
  }
}

TEST_F(LoadSessionTest, OneLoadOpensAFileOnce) {
  // Within one session the second tensor of a path reuses the first's
  // descriptor (Note [One open per file]), even after the path changed.
  writeFile(dir_ / "model" / "w.bin", floats({5, 6, 7, 8}));
  detail::LoadSession s(modelDir(), false);
  ExternalDataRef a = ref("w.bin");
  ASSERT_TRUE(s.bind(a, "A").ok());
  fs::rename(dir_ / "model" / "w.bin", dir_ / "model" / "gone.bin");
  ExternalDataRef b = ref("./w.bin");
  auto l = s.bind(b, "B");
  ASSERT_TRUE(l.ok()) << "the second tensor opened the path again: " << l.status();
  EXPECT_EQ(a.resolvedPath, b.resolvedPath);
}

TEST_F(LoadSessionTest, TextParseTakesTheLinkPolicyOfItsOptions) {
  std::string text = textModel("link.bin");
  LiftOptions lo;
  lo.baseDir = modelDir();
  lo.sourceName = "m.onnxtxt";
  auto refused = parseModelText(text, lo);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("--allow-external-links"),
            std::string::npos)
      << refused.status();
  lo.allowExternalLinks = true;
  auto m = parseModelText(text, lo);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(valuesOfW(**m), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(LoadSessionTest, TextFileNameWithoutDirectoryPartIsInTheWorkingDirectory) {
  // The one base-directory rule: a bare file name is in `.`, as
  // loadModelFile reads it (the text parser used to take the name's
  // directory part, none, and left the data unresolved).
  writeFile(dir_ / "model" / "w.bin", floats({9, 8, 7, 6}));
  std::string text = textModel("w.bin");
  writeFile(dir_ / "model" / "m.onnxtxt", text);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(modelDir().c_str()), 0);
  auto m = parseModelText(text, "m.onnxtxt");
  auto viaFile = loadModelFile("m.onnxtxt");
  ASSERT_EQ(::chdir(cwd), 0);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(viaFile.ok()) << viaFile.status();
  EXPECT_EQ(valuesOfW(**m), (std::vector<float>{9, 8, 7, 6}));
  EXPECT_EQ(valuesOfW(**viaFile), (std::vector<float>{9, 8, 7, 6}));
  // A name that is no file has no directory: the data stays unresolved.
  for (const char *name : {"<text>", "no-such-file.onnxtxt"}) {
    auto unnamed = parseModelText(text, name);
    ASSERT_TRUE(unnamed.ok()) << name << ": " << unnamed.status();
    Tensor *w = (*unnamed)->graph().initializers()[0]->initializer();
    EXPECT_FALSE(w->values<float>().ok()) << name;
  }
}

TEST(ModelFormatRule, ExtensionFirstThenContent) {
  EXPECT_EQ(formatForPath("m.onnxtxt"), ModelFormat::Text);
  EXPECT_EQ(formatForPath("m.onnxt"), ModelFormat::Text);
  EXPECT_EQ(formatForPath("m.onnx"), ModelFormat::Binary);
  // Outputs (no content): binary unless the name says text.
  EXPECT_EQ(formatForPath("out.txt"), ModelFormat::Binary);
  // Known extensions win over the content.
  EXPECT_EQ(formatForPath("m.pb", llvm::StringRef("<ir_version: 9>")), ModelFormat::Binary);
  EXPECT_EQ(formatForPath("m.onnxtxt", llvm::StringRef("\x08\x09")), ModelFormat::Text);
  // Other names and buffers: by content.
  EXPECT_EQ(formatForPath("m.txt", llvm::StringRef(" \n<ir_version: 9>")), ModelFormat::Text);
  EXPECT_EQ(formatForPath("", llvm::StringRef("# a comment\n")), ModelFormat::Text);
  EXPECT_EQ(formatForPath("model", llvm::StringRef("\x08\x09\x12")), ModelFormat::Binary);
  EXPECT_EQ(formatForPath("", llvm::StringRef("")), ModelFormat::Binary);
}

TEST(ModelDirectoryRule, DirectoryOfTheFileElseTheWorkingDirectory) {
  EXPECT_EQ(modelDirectory("a/b/m.onnx"), "a/b");
  EXPECT_EQ(modelDirectory("m.onnx"), ".");
  EXPECT_EQ(modelDirectory("/m.onnx"), "/");
  EXPECT_EQ(modelDirectory("-"), ".");
  EXPECT_EQ(modelDirectory("/dev/null"), "."); // a device has no directory of its own
  EXPECT_EQ(modelDirectory("/no/such/dir/out.onnx"), "/no/such/dir"); // an output to be
}
