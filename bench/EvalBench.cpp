//===- EvalBench.cpp - Time one model on the reference evaluator ----------===//
//
//   onnxir-eval-bench [--runs N] MODEL [NAME=FILE.npy]...
//
// Reads MODEL's inputs from .npy files (every input without a default must
// be given: the bench never makes up dims), then loads MODEL and runs it on
// the reference evaluator (Eval/Evaluator.h) N times (default 5), each in a
// forked child (BenchUtil.h) after an untimed run in that child (the
// process's one-time set-up), and after one untimed checking run in a child.
// Prints one JSON line: the median and best run seconds and, in KiB, of the
// child whose peak rose most over its baseline (Note [Comparable memory]):
// base_kib, its RSS with the inputs read and no model loaded; loaded_kib,
// its RSS once the model is loaded (just before the run); peak_kib, its
// whole-process peak RSS. Load and input reading are not timed. Exit 1 with
// the evaluator's error when the model does not run.
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
  // Note [Comparable memory]
  // The parent reads the inputs and nothing else: a child's RSS at fork is
  // the parent's (and is where the kernel starts the child's peak), so a
  // parent that had run the model once would lift every child's baseline
  // and peak alike by whatever its allocator kept. Each child measures its
  // baseline (runtime and inputs, no model), loads the model, measures
  // again, and runs; ort_run_time.js measures onnxruntime's process the same
  // way (baseline after the inputs are read, before the session exists), so
  // peak - base is, on both sides, the memory the model and its runs take:
  // the weights as the runtime holds them, its plan or session, and the
  // run's intermediates.
  std::map<std::string, Tensor> inputs;
  for (auto &[name, path] : files) {
    auto t = parseNpy(bench::readAll(path));
    if (!t.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(t.status().message()).c_str());
      return 1;
    }
    inputs.emplace(name, std::move(*t));
  }
  struct Rss {
    long base = 0, loaded = 0;
  };
  auto runOnce = [&](bool report, int p) -> double {
    Rss rss;
    rss.base = currentRssKiB();
    auto m = loadModelFile(model);
    if (!m.ok()) {
      if (report) std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      return -1;
    }
    rss.loaded = currentRssKiB();
    // The timed run is the child's second: the first sets up what a process
    // makes once (the operator registry, schema tables, parsed function
    // bodies), as onnxruntime's timed runs follow an untimed one too.
    if (p >= 0 && !evaluate(**m, inputs).ok()) return -1;
    double t0 = bench::now();
    auto r = evaluate(**m, inputs);
    double t = bench::now() - t0;
    if (!r.ok()) {
      if (report) std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
      return -1;
    }
    if (p >= 0 && ::write(p, &rss, sizeof rss) != sizeof rss) return -1;
    return t;
  };
  // One untimed run first, in a child: its error, if any, is printed.
  if (!bench::inChild([&] { return runOnce(true, -1); }).ok) return 1;
  std::vector<bench::Sample> samples;
  std::vector<Rss> rsses;
  for (int k = 0; k < runs; ++k) {
    int p[2];
    if (::pipe(p) != 0) return 1;
    bench::Sample s = bench::inChild([&] { return runOnce(false, p[1]); });
    ::close(p[1]); // the child has exited: a read without its line sees EOF
    Rss rss;
    if (::read(p[0], &rss, sizeof rss) != sizeof rss) rss = Rss{};
    ::close(p[0]);
    if (!s.ok) {
      std::fprintf(stderr, "run %d failed\n", k);
      return 1;
    }
    samples.push_back(s);
    rsses.push_back(rss);
  }
  std::vector<double> secs;
  size_t worst = 0;
  for (size_t k = 0; k < samples.size(); ++k) {
    secs.push_back(samples[k].seconds);
    if (samples[k].maxrssKiB - rsses[k].base > samples[worst].maxrssKiB - rsses[worst].base)
      worst = k;
  }
  std::sort(secs.begin(), secs.end());
  std::printf("{\"seconds\": %.6f, \"best\": %.6f, \"base_kib\": %ld, \"loaded_kib\": %ld, "
              "\"peak_kib\": %ld}\n",
              secs[secs.size() / 2], secs[0], rsses[worst].base, rsses[worst].loaded,
              samples[worst].maxrssKiB);
  return 0;
}
