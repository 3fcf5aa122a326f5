#!/usr/bin/env bash
# The whole test suite: a normal build and an ASan+UBSan build, each running
# every GoogleTest binary and every lit test through ctest; then each fuzzer
# for a bounded time. `--quick` runs only the normal build.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
bash scripts/setup.sh --test
JOBS=$(nproc)

echo "=== build (RelWithDebInfo) ==="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
echo "=== tests ==="
(cd build && ctest --output-on-failure -j "$JOBS")

if [ "$QUICK" = 0 ]; then
  echo "=== build (ASan + UBSan) ==="
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXIR_SANITIZE=ON \
        -DONNXIR_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j "$JOBS"
  echo "=== tests under sanitizers ==="
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$JOBS" -E '^(ort|install-consumer)')
  if [ -x scripts/fuzz-ci.sh ] || [ -f scripts/fuzz-ci.sh ]; then
    echo "=== fuzzers (bounded) ==="
    bash scripts/fuzz-ci.sh
  fi
fi
echo "=== all tests passed ==="
