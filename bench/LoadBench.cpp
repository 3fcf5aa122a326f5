//===- LoadBench.cpp - Load time of model files, side by side ------------===//
//
// onnxir-load-bench [--runs N] [--cpu] FILE...
//
// Loads each FILE with onnxir::loadModel (read, lift, structural checks) N
// times (default 7), each load in its own forked process, the files taken in
// turn so that a busy machine disturbs them alike, and prints one line per
// file: the best (minimum) time in milliseconds and the median. --cpu counts
// the process's CPU time instead of wall time (see BenchUtil.h). Used by
// o2_load_compare.sh to check that -O2's output is not slower to load than
// its input.
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/ProtoIO.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace onnxir;
using namespace onnxir::bench;

int main(int argc, char **argv) {
  int runs = 7;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--cpu")) useCpuClock() = true;
    else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: onnxir-load-bench [--runs N] [--cpu] FILE...\n");
      return 2;
    } else files.push_back(argv[i]);
  }
  if (files.empty() || runs < 1) {
    std::fprintf(stderr, "usage: onnxir-load-bench [--runs N] [--cpu] FILE...\n");
    return 2;
  }
  std::vector<std::vector<double>> times(files.size());
  for (int r = 0; r < runs; ++r)
    for (size_t f = 0; f < files.size(); ++f) {
      Sample s = inChild([&] {
        double t0 = now();
        auto m = loadModel(files[f]);
        double t = now() - t0;
        return m.ok() ? t : -1.0;
      });
      if (!s.ok) {
        std::fprintf(stderr, "onnxir-load-bench: %s does not load\n", files[f].c_str());
        return 1;
      }
      times[f].push_back(s.seconds);
    }
  for (size_t f = 0; f < files.size(); ++f) {
    std::vector<double> &v = times[f];
    std::sort(v.begin(), v.end());
    std::printf("%s %.3f %.3f\n", files[f].c_str(), v.front() * 1e3, v[v.size() / 2] * 1e3);
  }
  return 0;
}
