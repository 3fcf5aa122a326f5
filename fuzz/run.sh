#!/usr/bin/env bash
# fuzz/run.sh TARGET SECONDS [BUILD_DIR]
# Runs one fuzzer (lift, text or opt) for a bounded time on a seed corpus made
# from ../shared/models, Debian's libonnx-testdata and our lit tests. A crash
# leaves its input in fuzz/crashes/ and exits non-zero.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$1; SECS=$2; BUILD=${3:-$ROOT/build-fuzz}
BIN=$BUILD/fuzz/fuzz-$T
[ -x "$BIN" ] || { echo "run.sh: $BIN not built (scripts/fuzz-ci.sh builds it)"; exit 2; }
CORPUS=$(mktemp -d); trap 'rm -rf "$CORPUS"' EXIT
mkdir -p "$ROOT/fuzz/crashes"
if [ "$T" = text ]; then
  find "$ROOT/test" -name '*.onnxtxt' -size -64k -exec cp {} "$CORPUS/" \; 2>/dev/null || true
else
  n=0
  for f in $(find /usr/share/libonnx-testdata/data -name model.onnx -size -16k 2>/dev/null | sort | awk 'NR % 7 == 0'); do
    cp "$f" "$CORPUS/seed$n.onnx"; n=$((n+1))
  done
  for f in "$ROOT"/../shared/models/real/oww_hey_jarvis_v0.1.onnx "$ROOT"/examples/models/*.onnx; do
    [ -f "$f" ] && cp "$f" "$CORPUS/"
  done
fi
cp "$ROOT"/fuzz/corpus-regressions/* "$CORPUS/" 2>/dev/null || true
echo "fuzz-$T: $(ls "$CORPUS" | wc -l) seeds, $SECS s"
"$BIN" "$CORPUS" -dict="$ROOT/fuzz/onnx.dict" -max_total_time="$SECS" -max_len=262144 \
  -timeout=20 -rss_limit_mb=4096 -artifact_prefix="$ROOT/fuzz/crashes/$T-" -print_final_stats=1 \
  2>&1 | tail -15
