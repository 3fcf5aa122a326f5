#!/usr/bin/env bash
# backend_o2.sh ONNX_OPT SHARED_DIR TESTDATA_DIR WORK_DIR
# Runs `onnx-opt -O2` on every model of the ONNX backend test corpus
# (TESTDATA_DIR/*/*/model.onnx) and checks with onnxruntime that each result
# gives the original's outputs on its test_data_set_0 (backend_o2.js, one
# node process). onnx-opt must succeed on every model it can load. Exit 77
# (skipped) without node or onnxruntime-node in $ORT_NODE_MODULES (ctest
# fixture `ort`). WORK_DIR is removed when everything passes.
set -uo pipefail
OPT=$1; SHARED=$2; DATA=$3; WORK=$4
source "$(dirname "$0")/ort_common.sh"
ort_require backend-o2
export ORT_NODE_MODULES SHARED_TOOLS; SHARED_TOOLS="$(cd "$SHARED/tools" && pwd)"
rm -rf "$WORK"; mkdir -p "$WORK"
list="$WORK/list.txt"; : > "$list"
fail=0; n=0
for m in "$DATA"/*/*/model.onnx; do
  d=$(dirname "$m"); [ -d "$d/test_data_set_0" ] || continue
  out="$WORK/$(basename "$(dirname "$d")")_$(basename "$d").onnx"
  n=$((n+1))
  if ! "$OPT" -O2 "$m" -o "$out" 2>"$WORK/err.log"; then
    # A model the loader refuses is not -O2's business; anything else is.
    if grep -q "left the IR invalid\|failed:" "$WORK/err.log"; then
      echo "FAIL: onnx-opt -O2 $m"; cat "$WORK/err.log"; fail=$((fail+1))
    fi
    continue
  fi
  echo "$m $out $d/test_data_set_0" >> "$list"
done
echo "backend-o2: onnx-opt -O2 ran on $(wc -l < "$list") of $n models"
node "$(dirname "$0")/backend_o2.js" "$list" || fail=$((fail+1))
[ "$fail" = 0 ] || exit 1
rm -rf "$WORK"
