#!/usr/bin/env bash
# surgery.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# Model surgery keeps meaning on onnxruntime (issue 42): for each model and
# cut, the original with the cut's boundary values added as outputs
# (add-outputs) runs on random inputs; the extracted model (extract), fed the
# original's values at its inputs, gives the original's intermediate values
# at its outputs (ort_compare.js --expected, default tolerance). The same run
# checks add-outputs{all} (every intermediate an output) keeps the original
# outputs. Exit 77 (skipped) without node and onnxruntime-node.
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
source "$(dirname "$0")/ort_common.sh"
ort_require ort-surgery
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
FEED="python3 $(dirname "$0")/surgery_feed.py"
pass=0; fail=0
# NAME MODEL CUT_INPUTS GRAPH_INPUTS_KEPT OUTPUTS
while read -r name model cuts kept outs; do
  [ -z "$name" ] && continue
  d="$WORK/$name"; mkdir -p "$d"
  all_in=$cuts; [ "$kept" != - ] && all_in="$cuts,$kept"
  # The original, its boundary values as outputs too.
  if ! "$OPT" "$model" -o "$d/orig.onnx" ||
     ! "$OPT" "$model" --pass-pipeline="add-outputs{names=$cuts,$outs}" -o "$d/full.onnx" ||
     ! "$OPT" "$model" --extract-inputs="$all_in" --extract-outputs="$outs" -o "$d/cut.onnx" ||
     ! "$OPT" "$model" --pass-pipeline='add-outputs{all}' -o "$d/all.onnx"; then
    echo "FAIL: $name: onnx-opt"; fail=$((fail+1)); continue
  fi
  if ! $CMP "$d/full.onnx" "$d/full.onnx" --sets 1 --save-inputs "$d/run" --save-outputs "$d/run" --quiet >"$d/cmp.log" 2>&1 ||
     ! $FEED "$d/run" "$d/expected" "$all_in" "$outs" >>"$d/cmp.log" 2>&1 ||
     ! $CMP "$d/cut.onnx" --expected "$d/expected" >>"$d/cmp.log" 2>&1; then
    echo "FAIL: $name: extracted"; tail -5 "$d/cmp.log"; fail=$((fail+1)); continue
  fi
  if ! $CMP "$d/orig.onnx" "$d/all.onnx" --exact >"$d/all.log" 2>&1; then
    echo "FAIL: $name: add-outputs{all}"; tail -5 "$d/all.log"; fail=$((fail+1)); continue
  fi
  pass=$((pass+1))
done <<LIST
basic $SRC/test/Surgery/extract-basic.onnxtxt a c t,u
squeezenet $SHARED/models/light/light_squeezenet.onnx r16 - r39,r53
LIST
echo "ort-surgery: $pass models keep their values, $fail failures"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
