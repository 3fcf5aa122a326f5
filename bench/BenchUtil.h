//===- BenchUtil.h - Shared measurement helpers of the benchmarks --------===//
//
// Each measurement runs in a forked child, so that its peak RSS (wait4's
// ru_maxrss) is its own; the function run there returns the seconds it
// measured itself (< 0 on failure). Medians over N runs, RSS the peak.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_BENCH_BENCHUTIL_H
#define ONNXIR_BENCH_BENCHUTIL_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <ctime>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace onnxir {
namespace bench {

/// --cpu: measure the process's CPU time (user + system) instead of wall
/// time, for a machine shared with other work, where wall time mostly
/// measures the wait for a core. Excludes time blocked on I/O (fsync).
inline bool &useCpuClock() {
  static bool cpu = false;
  return cpu;
}

inline double now() {
  if (useCpuClock()) {
    struct timespec ts;
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  in.seekg(0, std::ios::end);
  s.resize((size_t)in.tellg());
  in.seekg(0);
  in.read(s.data(), (std::streamsize)s.size());
  return s;
}

inline void writeAll(const std::string &path, const std::string &s) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(s.data(), (std::streamsize)s.size());
}

//===--- Measurement ------------------------------------------------------===//

struct Sample {
  double seconds = 0;
  long maxrssKiB = 0;
  bool ok = false;
};

// Runs `fn` (which returns the seconds it measured, < 0 on failure) in a
// forked child; the child's own peak RSS comes from wait4.
inline Sample inChild(const std::function<double()> &fn) {
  int p[2];
  if (::pipe(p) != 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    double s = fn();
    if (::write(p[1], &s, sizeof s) != sizeof s) _exit(2);
    _exit(0);
  }
  ::close(p[1]);
  double s = -1;
  if (::read(p[0], &s, sizeof s) != sizeof s) s = -1;
  ::close(p[0]);
  int status = 0;
  struct rusage ru;
  ::wait4(pid, &status, 0, &ru);
  Sample out;
  out.seconds = s;
  out.maxrssKiB = ru.ru_maxrss;
  out.ok = s >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

inline Sample median(int runs, const std::function<double()> &fn) {
  std::vector<Sample> v;
  for (int i = 0; i < runs; ++i) v.push_back(inChild(fn));
  for (auto &s : v)
    if (!s.ok) return s;
  std::sort(v.begin(), v.end(), [](auto &a, auto &b) { return a.seconds < b.seconds; });
  Sample m = v[v.size() / 2];
  long rss = 0;
  for (auto &s : v) rss = std::max(rss, s.maxrssKiB);
  m.maxrssKiB = rss; // peak over the runs
  return m;
}

inline std::string fmtT(const Sample &s) {
  char b[32];
  if (!s.ok) return "FAIL";
  std::snprintf(b, sizeof b, "%.3f s", s.seconds);
  return b;
}
inline std::string fmtM(long kib) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f MB", kib / 1024.0);
  return b;
}
inline std::string ratio(const Sample &a, const Sample &b) {
  char buf[32];
  if (!a.ok || !b.ok || b.seconds <= 0) return "-";
  std::snprintf(buf, sizeof buf, "%.2fx", a.seconds / b.seconds);
  return buf;
}
inline std::string ratioM(long a, long b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", b ? double(a) / double(b) : 0.0);
  return buf;
}

} // namespace bench
} // namespace onnxir

#endif // ONNXIR_BENCH_BENCHUTIL_H
