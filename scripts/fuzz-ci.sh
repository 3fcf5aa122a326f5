#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 and runs each for a bounded time
# (FUZZ_SECONDS, default 45). Any crash fails the run; its input is left in
# fuzz/crashes/ to be minimized and added to fuzz/corpus-regressions/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-45}
if ! command -v clang++-14 >/dev/null; then
  echo "fuzz-ci: clang++-14 missing (apt-get install clang-14 libclang-rt-14-dev)"; exit 1
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DONNXIR_BUILD_FUZZERS=ON -DONNXIR_BUILD_TESTS=OFF -DONNXIR_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target fuzz-lift fuzz-text fuzz-opt
for t in lift text opt; do
  bash fuzz/run.sh "$t" "$SECS" build-fuzz
done
echo "fuzz-ci: 3 fuzzers ran ${SECS}s each without a crash"
