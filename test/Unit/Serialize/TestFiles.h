//===- TestFiles.h - Files the Serialize tests read -----------------------===//
//
// The whole of a file, and the binary model corpus (the ONNX backend test
// models and ../shared/models), sorted, for the tests of this folder.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_SERIALIZE_TESTFILES_H
#define ONNXIR_TEST_SERIALIZE_TESTFILES_H

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

inline std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const char *root : {ONNXIR_TESTDATA_DIR, ONNXIR_SHARED_DIR "/models"}) {
    if (!std::filesystem::exists(root)) continue;
    for (auto &e : std::filesystem::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".onnx") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace testfiles
} // namespace onnxir

#endif // ONNXIR_TEST_SERIALIZE_TESTFILES_H
