#!/usr/bin/env bash
# expand_functions.sh ONNX_OPT SHARED_DIR SOURCE_DIR TESTDATA_DIR WORK_DIR
# expand-functions keeps meaning (issue 27, item 2), checked on onnxruntime:
# each expansion test model (test/Passes/expand-functions and the models of
# test/Ops/<Family>/ that run expand-functions; refusal tests excluded) with
# every usable function op expanded gives the outputs of the original on
# random inputs (ort_compare.js default tolerance); so does each adapter
# test model named expand-* converted down to 13 (by expansion), so
# does inline-functions/zero-attribute inlined, and
# two ONNX backend node tests of LayerNormalization-17 converted to 13 give
# their expected outputs (test_data_set_0).
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES).
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; DATA=$4; WORK=$5
source "$(dirname "$0")/ort_common.sh"
source "$(dirname "$0")/../Common/lit_pipelines.sh"
ort_require ort-expand-functions
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
pass=0; fail=0
# check LABEL MODEL SUFFIX PASS-FLAGS...: MODEL read, rewritten by the
# flags, and the two compared on onnxruntime (counted in pass/fail).
check() {
  local label=$1 t=$2 suffix=$3; shift 3
  local name; name=$(basename "$t" .onnxtxt)
  local a="$WORK/$name.onnx" b="$WORK/$name.$suffix.onnx"
  if ! "$OPT" "$t" -o "$a" || ! "$OPT" "$a" "$@" -o "$b" 2>"$WORK/err.log"; then
    echo "FAIL: $label"; cat "$WORK/err.log"; fail=$((fail+1)); return
  fi
  if $CMP "$a" "$b" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1))
  else echo "FAIL: $label"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
}
mapfile -t models < <(pass_models "$SRC" expand-functions expand-functions)
for t in "${models[@]}"; do
  name=$(basename "$t" .onnxtxt)
  case $name in refuse*) continue ;; esac
  # A model onnxruntime cannot run before expansion says why in a line
  # "# ORT: skip (why)".
  if why=$(grep -m1 '^# ORT: skip' "$t"); then echo "skip: $name: ${why#\# ORT: skip }"; continue; fi
  check "$name" "$t" expanded -expand-functions
done
mapfile -t adapters < <(pass_models "$SRC" convert-opset -convert-opset)
for t in "${adapters[@]}"; do
  case $(basename "$t") in expand-*.onnxtxt) ;; *) continue ;; esac
  check "$(basename "$t" .onnxtxt) -> 13" "$t" 13 -convert-opset --target-opset=13
done
# Attribute references resolved to 0 / 0.0 by inlining keep their meaning
# (Note [Scalar attribute presence]).
t="$SRC"/test/Passes/inline-functions/zero-attribute.onnxtxt
check "zero-attribute (inlined)" "$t" inlined -inline-functions
if [ -d "$DATA/node" ]; then
  for t in test_layer_normalization_3d_axis1_epsilon test_layer_normalization_4d_axis_negative_2; do
    d="$DATA/node/$t"
    [ -f "$d/model.onnx" ] || continue
    b="$WORK/$t.13.onnx"
    if ! "$OPT" "$d/model.onnx" -convert-opset --target-opset=13 -o "$b" 2>"$WORK/err.log"; then
      echo "FAIL: $t -> 13"; cat "$WORK/err.log"; fail=$((fail+1)); continue
    fi
    if $CMP "$b" --expected "$d/test_data_set_0" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1))
    else echo "FAIL: $t -> 13"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
  done
fi
echo "ort-expand-functions: $pass matched, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
