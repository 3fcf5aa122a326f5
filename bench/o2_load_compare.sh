#!/usr/bin/env bash
# o2_load_compare.sh BUILD_DIR SHARED_DIR WORK_DIR [RUNS]
# Is the -O2 result of each real and light model slower to load than the
# model itself? For the input and its `onnx-opt -O2` output, side by side
# (runs alternate between the two), the best of RUNS (default 7) runs of
#   - onnxir's load (BUILD_DIR/bench/onnxir-load-bench: read, lift, checks),
#   - onnxruntime's session creation with graph optimizations disabled (the
#     load itself) and at its default level `all` (what a user waits for),
# in CPU time (user + system, all threads), which a machine busy with other
# work disturbs far less than wall time. Needs ORT_NODE_MODULES
# (onnxruntime-node) for the onnxruntime columns. Prints a Markdown table of
# milliseconds and the ratio output/input, and marks a model whose -O2
# output is byte-identical to it.
set -uo pipefail
BUILD=$1; SHARED=$2; WORK=$3; RUNS=${4:-7}
OPT=$BUILD/tools/onnx-opt/onnx-opt; LOAD=$BUILD/bench/onnxir-load-bench
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b != "-") printf "%.2fx", b / a; else print "-"}'; }
ort_ms() { # level in out -> "in_ms out_ms"
  if [ -z "${ORT_NODE_MODULES:-}" ]; then echo "- -"; return; fi
  node "$here/ort_load_time.js" "$RUNS" "$1" cpu "$2" "$3" | awk '{printf "%s ", $2}'
}
echo "| model | onnxir load ms (in → -O2) | ratio | ORT load, no opt (in → -O2) | ratio | ORT session, level all (in → -O2) | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for f in "$SHARED"/models/real/*.onnx "$SHARED"/models/light/*.onnx; do
  b=$(basename "$f" .onnx); o="$WORK/$b.O2.onnx"
  "$OPT" -O2 "$f" -o "$o" 2>/dev/null || { echo "| $b | -O2 failed |"; continue; }
  read -r li lo < <("$LOAD" --cpu --runs "$RUNS" "$f" "$o" | awk '{printf "%s ", $2}')
  read -r di do_ < <(ort_ms disabled "$f" "$o")
  read -r ai ao < <(ort_ms all "$f" "$o")
  same=""; cmp -s "$f" "$o" && same=" (output = input)"
  echo "| $b$same | $li → $lo | $(ratio "$li" "$lo") | $di → $do_ | $(ratio "$di" "$do_") | $ai → $ao | $(ratio "$ai" "$ao") |"
  rm -f "$o"
done
