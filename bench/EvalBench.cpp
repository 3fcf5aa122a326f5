//===- EvalBench.cpp - Time one model on the reference evaluator ----------===//
//
//   onnxir-eval-bench [--runs N] MODEL [NAME=FILE.npy]...
//
// Loads MODEL, reads its inputs from .npy files (every input without a
// default must be given: the bench never makes up dims), and runs it on the
// reference evaluator (Eval/Evaluator.h) N times (default 5), each run in a
// forked child (BenchUtil.h). Prints one JSON line: the median run time in
// seconds, the child's peak RSS (KiB) and its RSS just before the run, so
// that bench/eval_speed.py can set the run's own memory (peak - before) beside
// onnxruntime's. Load and input reading are not timed. Exit 1 with the
// evaluator's error when the model does not run.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"

#include "onnxir/Eval/Evaluator.h"
#include "onnxir/Eval/Npy.h"
#include "onnxir/Serialize/ModelFile.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

using namespace onnxir;

namespace {

/// VmRSS of this process in KiB (0 if unreadable).
long currentRssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int runs = 5;
  std::string model;
  std::map<std::string, std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (model.empty()) model = a;
    else if (auto eq = a.find('='); eq != std::string::npos) files[a.substr(0, eq)] = a.substr(eq + 1);
    else {
      std::fprintf(stderr, "usage: onnxir-eval-bench [--runs N] MODEL [NAME=FILE.npy]...\n");
      return 2;
    }
  }
  if (model.empty() || runs < 1) {
    std::fprintf(stderr, "usage: onnxir-eval-bench [--runs N] MODEL [NAME=FILE.npy]...\n");
    return 2;
  }
  // One untimed run in this process first: its error, if any, is printed.
  {
    auto m = loadModelFile(model);
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      return 1;
    }
    std::map<std::string, Tensor> inputs;
    for (auto &[name, path] : files) {
      auto t = parseNpy(bench::readAll(path));
      if (!t.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(t.status().message()).c_str());
        return 1;
      }
      inputs.emplace(name, std::move(*t));
    }
    auto r = evaluate(**m, inputs);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
      return 1;
    }
  }
  long before = 0;
  std::vector<bench::Sample> samples;
  std::vector<long> befores;
  for (int k = 0; k < runs; ++k) {
    int p[2];
    if (::pipe(p) != 0) return 1;
    bench::Sample s = bench::inChild([&]() -> double {
      auto m = loadModelFile(model);
      if (!m.ok()) return -1;
      std::map<std::string, Tensor> inputs;
      for (auto &[name, path] : files) inputs.emplace(name, *parseNpy(bench::readAll(path)));
      long rss = currentRssKiB();
      if (::write(p[1], &rss, sizeof rss) != sizeof rss) return -1;
      double t0 = bench::now();
      auto r = evaluate(**m, inputs);
      double t = bench::now() - t0;
      return r.ok() ? t : -1;
    });
    if (::read(p[0], &before, sizeof before) != sizeof before) before = 0;
    ::close(p[0]);
    ::close(p[1]);
    if (!s.ok) {
      std::fprintf(stderr, "run %d failed\n", k);
      return 1;
    }
    samples.push_back(s);
    befores.push_back(before);
  }
  std::vector<double> secs;
  long peak = 0, base = 0;
  for (size_t k = 0; k < samples.size(); ++k) {
    secs.push_back(samples[k].seconds);
    if (samples[k].maxrssKiB - befores[k] > peak - base) {
      peak = samples[k].maxrssKiB;
      base = befores[k];
    }
  }
  std::sort(secs.begin(), secs.end());
  std::printf("{\"seconds\": %.6f, \"best\": %.6f, \"peak_kib\": %ld, \"before_kib\": %ld}\n",
              secs[secs.size() / 2], secs[0], peak, base);
  return 0;
}
