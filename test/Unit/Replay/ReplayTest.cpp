//===- ReplayTest.cpp - Fuzzer regressions never come back ----------------===//
#include "FuzzCommon.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

TEST(FuzzReplay, EveryRegressionInputRunsClean) {
  fs::path dir = fs::path(ONNXIR_SOURCE_DIR) / "fuzz" / "corpus-regressions";
  unsigned n = 0;
  if (fs::exists(dir))
    for (auto &e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string bytes = ss.str();
      auto *p = reinterpret_cast<const uint8_t *>(bytes.data());
      SCOPED_TRACE(e.path().string());
      // Each must simply return (a crash or abort fails the whole binary).
      onnxir::fuzz::liftVerifyLower(p, bytes.size());
      onnxir::fuzz::parseTextPrint(p, bytes.size());
      onnxir::fuzz::liftOptimize(p, bytes.size());
      ++n;
    }
  std::printf("replayed %u regression inputs\n", n);
}
