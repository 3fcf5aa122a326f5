#!/usr/bin/env bash
# convert_defaults.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# Opset defaults and attribute changes checked on numbers (issue 48 item 3).
# Each adapter test model named numeric-*.onnxtxt (test/Passes/convert-opset,
# test/Ops/<Family>/) is a model at an old opset whose input ranks are ones
# where the old and the new meaning of a default or attribute differ. Its
# header names what to check:
#   # ORT-TARGETS: V...   the opsets to convert it to (up, or down where the
#                         converter supports it); each converted model must
#                         give the original's outputs on onnxruntime (random
#                         inputs, ort_compare.js's default tolerance);
#   # ORT-ARGS: ...       more ort_compare.js arguments (value ranges);
#   # ORT-NAIVE: invalid (why)
#                         says that the model read at a target as written is
#                         not a model onnxruntime runs (otherwise see below).
# The naive check: the model read at each target as written (its default
# opset_import changed, nothing converted) must be refused by onnx-opt or
# onnxruntime, or give other outputs. A model whose naive reading matches
# would not notice a converter that forgot the change, so it fails the test;
# a naive reading that runs although ORT-NAIVE says invalid fails too.
# At least MIN_MODELS models must be found (an emptied folder fails).
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES); a
# failure instead under CI=true (ort_common.sh).
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
MIN_MODELS=10
source "$(dirname "$0")/ort_common.sh"
source "$(dirname "$0")/../Common/lit_pipelines.sh"
ort_require ort-convert-defaults
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
pass=0; fail=0; differs=0; invalid=0; models=0
failed() { echo "FAIL: $*"; fail=$((fail+1)); }
mapfile -t adapters < <(pass_models "$SRC" convert-opset -convert-opset)
for t in "${adapters[@]}"; do
  case $(basename "$t") in numeric-*.onnxtxt) ;; *) continue ;; esac
  models=$((models+1))
  name=$(basename "$t" .onnxtxt)
  targets=$(sed -n 's/^# ORT-TARGETS: *//p' "$t")
  read -r -a args <<<"$(sed -n 's/^# ORT-ARGS: *//p' "$t")"
  naive_invalid=$(grep -c '^# ORT-NAIVE: invalid' "$t")
  if [ -z "$targets" ]; then failed "$name: no '# ORT-TARGETS:' line"; continue; fi
  a="$WORK/$name.onnx"
  "$OPT" "$t" -o "$a" 2>"$WORK/err.log" || { failed "$name does not load"; cat "$WORK/err.log"; continue; }
  for v in $targets; do
    b="$WORK/$name.$v.onnx"
    if ! "$OPT" "$a" -convert-opset --target-opset="$v" -o "$b" 2>"$WORK/err.log"; then
      failed "$name -> $v does not convert"; cat "$WORK/err.log"; continue
    fi
    if $CMP "$a" "$b" "${args[@]}" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1)); rm -f "$b"
    else failed "$name -> $v: outputs differ from the original"; tail -8 "$WORK/cmp.log"; fi
    # The naive reading: the default domain's version replaced, nothing else.
    n="$WORK/$name.naive$v"
    sed -E '/opset_import/s/("" *: *)[0-9]+/\1'"$v"'/' "$t" >"$n.onnxtxt"
    if ! "$OPT" "$n.onnxtxt" -o "$n.onnx" 2>/dev/null; then invalid=$((invalid+1)); continue; fi
    $CMP "$a" "$n.onnx" "${args[@]}" >"$WORK/naive.log" 2>&1
    rc=$?
    if [ $rc = 1 ] && grep -q '^B failed to' "$WORK/naive.log"; then invalid=$((invalid+1))
    elif [ "$naive_invalid" != 0 ]; then
      failed "$name read at $v as written runs on onnxruntime (exit $rc), though ORT-NAIVE says invalid"
    elif [ $rc = 1 ]; then differs=$((differs+1))
    else
      failed "$name read at $v as written gives the original's outputs (exit $rc): the model does not tell the old meaning from the new"
      tail -3 "$WORK/naive.log"
    fi
  done
done
if [ "$models" -lt "$MIN_MODELS" ]; then
  failed "$models numeric-*.onnxtxt adapter models found under $SRC/test (at least $MIN_MODELS expected)"
fi
echo "ort-convert-defaults: $models models, $pass conversions matched, $fail failed;" \
     "read as written: $differs differ, $invalid refused"
[ "$fail" -eq 0 ]
