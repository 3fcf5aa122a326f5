//===- TestFiles.h - Files the Serialize tests read -----------------------===//
//
// The whole of a file, and the binary model corpus (the ONNX backend test
// models and ../shared/models), sorted, for the tests of this folder.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_SERIALIZE_TESTFILES_H
#define ONNXIR_TEST_SERIALIZE_TESTFILES_H

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onnxir {
namespace testfiles {

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The fewest models corpus() may find: 1,072 backend test models and 16
/// shared ones today. A walk that finds fewer (a corpus missing or moved)
/// would check a part or nothing and pass, so the walk fails the test.
constexpr size_t kMinCorpusModels = 1000;

inline std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const char *root : {ONNXIR_TESTDATA_DIR, ONNXIR_SHARED_DIR "/models"}) {
    if (!std::filesystem::exists(root)) continue;
    for (auto &e : std::filesystem::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".onnx") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), kMinCorpusModels)
      << "models found under " ONNXIR_TESTDATA_DIR " and " ONNXIR_SHARED_DIR "/models";
  return files;
}

} // namespace testfiles
} // namespace onnxir

#endif // ONNXIR_TEST_SERIALIZE_TESTFILES_H
