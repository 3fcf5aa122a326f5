#!/usr/bin/env bash
# scripts/fuzz-ci.sh [BUILD_DIR]
# Runs each libFuzzer target for a bounded time (FUZZ_SECONDS, default 45).
# Without BUILD_DIR it configures and builds the fuzzers alone with clang-14
# into build-fuzz/; scripts/test.sh passes its sanitizer tree instead (a
# fuzzer build is a sanitizer build, so one tree serves both). Any crash or
# timeout fails the run; its input is left in fuzz/crashes/ to be minimized
# and added to fuzz/corpus-regressions/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-45}
BUILD=${1:-}
if [ -z "$BUILD" ]; then
  if ! command -v clang++-14 >/dev/null; then
    echo "fuzz-ci: clang++-14 missing (apt-get install clang-14 libclang-rt-14-dev)"; exit 1
  fi
  BUILD=build-fuzz
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DONNXIR_BUILD_FUZZERS=ON -DONNXIR_BUILD_TESTS=OFF -DONNXIR_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$BUILD" --target fuzz-lift fuzz-text fuzz-opt
# The three run side by side (they share the machine's cores: on CI's two,
# each gets about 2/3 of one for SECS seconds), so the step takes SECS
# seconds of wall time instead of 3 * SECS; each log is shown when all end.
LOGS=$(mktemp -d); trap 'rm -rf "$LOGS"' EXIT
declare -A pid
for t in lift text opt; do
  bash fuzz/run.sh "$t" "$SECS" "$BUILD" > "$LOGS/$t.log" 2>&1 &
  pid[$t]=$!
done
failed=""
for t in lift text opt; do
  wait "${pid[$t]}" || failed="$failed $t"
  cat "$LOGS/$t.log"
done
if [ -n "$failed" ]; then
  echo "fuzz-ci: failed:$failed (inputs in fuzz/crashes/)"
  exit 1
fi
echo "fuzz-ci: 3 fuzzers ran ${SECS}s each, side by side, without a crash"
