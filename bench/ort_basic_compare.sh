#!/usr/bin/env bash
# ort_basic_compare.sh ONNX_OPT SHARED_DIR WORK_DIR
# Node counts (all graphs) of every real and light model: as given, after
# onnxruntime's basic-level graph optimizer (saved optimized model), and
# after `onnx-opt -O2`; also the ops that differ. Needs ORT_NODE_MODULES
# (onnxruntime-node, see ../shared/tools/README.md). Prints a Markdown table
# (bench/README.md records one).
set -uo pipefail
OPT=$1; SHARED=$2; WORK=$3
: "${ORT_NODE_MODULES:?set ORT_NODE_MODULES to a node_modules with onnxruntime-node}"
mkdir -p "$WORK"
here=$(cd "$(dirname "$0")" && pwd)
count() { "$OPT" "$1" --summary -o /dev/null 2>&1 | awk '/^nodes \(all graphs\)/ {print $4}'; }
ops() { "$OPT" "$1" --summary -o /dev/null 2>&1 | awk '/^  / {printf "%s=%s ", $1, $2}'; }
echo "| model | nodes | ORT basic | onnx-opt -O2 | -O2 - ORT | ops where they differ (ORT / -O2) |"
echo "|---|---:|---:|---:|---:|---|"
for f in "$SHARED"/models/real/*.onnx "$SHARED"/models/light/*.onnx; do
  b=$(basename "$f" .onnx)
  node "$here/ort_basic_optimize.js" "$f" "$WORK/$b.ort.onnx" || continue
  "$OPT" -O2 "$f" -o "$WORK/$b.O2.onnx" 2>/dev/null || { echo "| $b | -O2 failed |"; continue; }
  n0=$(count "$f"); n1=$(count "$WORK/$b.ort.onnx"); n2=$(count "$WORK/$b.O2.onnx")
  diff=$(join -a1 -a2 -e0 -o 0,1.2,2.2 -t= \
           <(ops "$WORK/$b.ort.onnx" | tr ' ' '\n' | grep . | sort) \
           <(ops "$WORK/$b.O2.onnx" | tr ' ' '\n' | grep . | sort) |
         awk -F= '$2 != $3 {printf "%s %s/%s, ", $1, $2, $3}' | sed 's/, $//')
  echo "| $b | $n0 | $n1 | $n2 | $((n2 - n1)) | $diff |"
done
