#!/usr/bin/env bash
# surgery.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR ONNXIR_COMPOSE
# Model surgery keeps meaning on onnxruntime (issue 42): for each model and
# cut, the original with the cut's boundary values added as outputs
# (add-outputs) runs on random inputs; the extracted model (extract), fed the
# original's values at its inputs, gives the original's intermediate values
# at its outputs (ort_compare.js --expected, default tolerance). The same run
# checks add-outputs{all} (every intermediate an output) keeps the original
# outputs. Compose: A and B run one after the other (B fed A's output and
# random values for its other inputs) give what the composed model gives on
# the same inputs. Exit 77 (skipped) without node and onnxruntime-node.
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4; COMPOSE=$5
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
# compose: A (opset 17, converted) then B (prefix b_) vs the composed model.
d="$WORK/compose"; mkdir -p "$d/all"
if "$OPT" "$SRC/test/Surgery/Inputs/compose-a.onnxtxt" -o "$d/a.onnx" &&
   "$OPT" "$SRC/test/Surgery/Inputs/compose-b.onnxtxt" -o "$d/b.onnx" &&
   "$COMPOSE" "$d/a.onnx" "$d/b.onnx" --connect h:x --prefix B:b_ -o "$d/ab.onnx" &&
   $CMP "$d/a.onnx" "$d/a.onnx" --sets 1 --dim N=3 --save-inputs "$d/A" --save-outputs "$d/A" --quiet &&
   $CMP "$d/b.onnx" "$d/b.onnx" --sets 1 --dim N=3 --save-inputs "$d/B0" --quiet &&
   cp "$d/A/input_0.pb" "$d/all/x.pb" && cp "$d/A/output_0.pb" "$d/all/h.pb" &&
   cp "$d/A/output_1.pb" "$d/all/aux.pb" && cp "$d/B0/input_1.pb" "$d/all/c.pb" &&
   $FEED "$d/all" "$d/B" h,c "" &&
   $CMP "$d/b.onnx" "$d/b.onnx" --sets 1 --inputs "$d/B" --save-outputs "$d/B" --quiet &&
   cp "$d/B/output_0.pb" "$d/all/y.pb" &&
   $FEED "$d/all" "$d/AB" x,c aux,y &&
   $CMP "$d/ab.onnx" --expected "$d/AB" >"$d/cmp.log" 2>&1; then
  pass=$((pass+1))
else
  echo "FAIL: compose"; tail -5 "$d/cmp.log" 2>/dev/null; fail=$((fail+1))
fi
echo "ort-surgery: $pass models keep their values, $fail failures"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
