#!/usr/bin/env bash
# o2_load_compare.sh ONNX_OPT SHARED_DIR WORK_DIR [RUNS]
# Is the -O2 result of each real and light model slower to load than the
# model itself? For the input and its `onnx-opt -O2` output, side by side
# (runs alternate between the two): the best (minimum) of RUNS (default 7)
# runs, the estimate of the intrinsic cost that a busy machine disturbs least, of
#   - onnxir's load (read and lift, from `onnx-opt -time-passes`),
#   - onnxruntime's session creation with graph optimizations disabled (the
#     load itself) and at its default level `all` (what a user waits for).
# Needs ORT_NODE_MODULES (onnxruntime-node) for the onnxruntime columns.
# Prints a Markdown table of milliseconds and the ratio output/input, and
# marks a model whose -O2 output is byte-identical to it.
set -uo pipefail
OPT=$1; SHARED=$2; WORK=$3; RUNS=${4:-7}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
load_ms() { # file -> one onnxir load time in ms
  "$OPT" "$1" -time-passes -o /dev/null 2>&1 |
    awk '/load \(read and lift\)/ {printf "%.2f\n", $1 * 1000}'
}
best() { sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", (a > 0 ? b / a : 0)}'; }
ort_ms() { # level in out -> "in_ms out_ms"
  [ -n "${ORT_NODE_MODULES:-}" ] || { echo "- -"; return; }
  node "$here/ort_load_time.js" "$RUNS" "$1" "$2" "$3" | awk '{printf "%s ", $2}'
}
echo "| model | onnxir load ms (in → -O2) | ratio | ORT load, no opt (in → -O2) | ratio | ORT session, level all (in → -O2) | ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for f in "$SHARED"/models/real/*.onnx "$SHARED"/models/light/*.onnx; do
  b=$(basename "$f" .onnx); o="$WORK/$b.O2.onnx"
  "$OPT" -O2 "$f" -o "$o" 2>/dev/null || { echo "| $b | -O2 failed |"; continue; }
  a=(); c=()
  for _ in $(seq "$RUNS"); do a+=("$(load_ms "$f")"); c+=("$(load_ms "$o")"); done
  li=$(printf '%s\n' "${a[@]}" | best); lo=$(printf '%s\n' "${c[@]}" | best)
  read -r di do_ < <(ort_ms disabled "$f" "$o")
  read -r ai ao < <(ort_ms all "$f" "$o")
  same=""; cmp -s "$f" "$o" && same=" (output = input)"
  echo "| $b$same | $li → $lo | $(ratio "$li" "$lo") | $di → $do_ | $(ratio "$di" "$do_") | $ai → $ao | $(ratio "$ai" "$ao") |"
  rm -f "$o"
done
