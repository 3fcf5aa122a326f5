#!/usr/bin/env bash
# convert_opset.sh ONNX_OPT SHARED_DIR SOURCE_DIR TESTDATA_DIR WORK_DIR
# convert-opset keeps meaning (issue 27, first slice), checked on onnxruntime:
#  - each adapter test model (test/Passes/convert-opset and the models of
#    test/Ops/<Family>/ that run -convert-opset; refusal tests excluded)
#    converted to 6, 11, 13 and 21 gives the outputs of the original on
#    random inputs (ort_compare.js default tolerance); a located refusal is
#    allowed (counted), a crash or a wrong model is not;
#  - the adapter models of the steps at opset 10 and later, each converted to
#    the target it is about;
#  - a few ONNX backend node tests of the converted ops (opset 13), converted
#    up to 21, give their expected outputs (test_data_set_0);
#  - legacy_models.py's models below opset 7 (which onnxruntime does not
#    run; the v<N>-* adapter tests are left to lit for the same reason),
#    converted to 9 (every step up to 9 must convert) and to 21 (a located
#    refusal is allowed), give the outputs numpy computes from the legacy
#    definitions (needs $PYTHON, default /usr/bin/python3, with onnx).
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES).
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; DATA=$4; WORK=$5
source "$(dirname "$0")/ort_common.sh"
source "$(dirname "$0")/../Common/lit_pipelines.sh"
ort_require ort-convert-opset
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
pass=0; fail=0; refused=0
mapfile -t models < <(pass_models "$SRC" convert-opset -convert-opset)
for t in "${models[@]}"; do
  name=$(basename "$t" .onnxtxt)
  # Refusals are lit tests; the function tests' inputs are models onnxruntime
  # rejects (a function relying on the model's import, or importing another
  # version than the model: onnxruntime checks its nodes at the model's);
  # onnxruntime has no double Clip-6 or Clip-11 (clip-double); the
  # expansions (expand-*) run in ort-expand-functions.
  # v<N>-*: models or targets below opset 7 (the legacy section below).
  # numeric-*: the opset-default models, each with its own targets, run in
  # ort-convert-defaults (test/Ort/convert_defaults.sh).
  # range-27-down's source is at opset 27 and nested-reference-down's at 28,
  # which this onnxruntime refuses to load (it runs opsets up to 26); the
  # latter's lit test checks it on the evaluator (--check-numerics).
  case $name in refuse-*|subgraph-and-function|function-*|expand-*|clip-double|v[0-9]*-*|numeric-*|range-27-down|nested-reference-down) continue ;; esac
  # The adapters of the steps at 10 and later: each model to the one target
  # it is about (below), to keep the time down (trailing-empty-operands and
  # gemm-11-down-c: their Gemm at 6 is one onnxruntime has no kernel for);
  # cast-19-down's saturate on a non-float8 cast and rnn-14-down's (and
  # rnn-14-down-slots') layout 1 are refused by onnxruntime itself (the
  # backend tests *_batchwise checked the latter by hand).
  case $name in
    defaults-*|pad-11-*|topk-slice-10-*|softmax-13-*|upsample-resize-up|resize-upsample-down|\
    misc-down|cast-19-down|gridsample-dft-20-*|rnn-14-down|rnn-14-down-slots|resize-13-up|compare-*|\
    dropout-mask-12*|upsample-7-resize-up|trailing-empty-operands|gemm-11-down-c) continue ;;
  esac
  a="$WORK/$name.onnx"
  "$OPT" "$t" -o "$a" || { echo "FAIL: $name does not load"; fail=$((fail+1)); continue; }
  for v in 6 11 13 21; do
    b="$WORK/$name.$v.onnx"
    if ! "$OPT" "$a" -convert-opset --target-opset=$v -o "$b" 2>"$WORK/err.log"; then
      if grep -q "convert-opset: graph" "$WORK/err.log"; then refused=$((refused+1)); continue; fi
      echo "FAIL: $name -> $v"; cat "$WORK/err.log"; fail=$((fail+1)); continue
    fi
    if $CMP "$a" "$b" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1)); rm -f "$b"
    else echo "FAIL: $name -> $v"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
  done
done
# name:target of some adapter models of the steps at 10 and later (~5 s).
for nt in defaults-down:11 pad-11-up:11 softmax-13-up:13 softmax-13-down:11 \
          upsample-resize-up:21 resize-upsample-down:10 resize-13-up:13 misc-down:10 \
          gridsample-dft-20-up:20 trailing-empty-operands:13 gemm-11-down-c:9; do
  name=${nt%%:*}; v=${nt##*:}
  a="$WORK/$name.onnx"; b="$WORK/$name.$v.onnx"
  if ! "$OPT" "$(pass_model "$SRC" convert-opset "$name")" -o "$a" ||
     ! "$OPT" "$a" -convert-opset --target-opset=$v -o "$b" 2>"$WORK/err.log"; then
    echo "FAIL: $name -> $v"; cat "$WORK/err.log"; fail=$((fail+1)); continue
  fi
  # The integer input i is Scatter's indices, sin computed Upsample scales (>= 1).
  if $CMP "$a" "$b" --range i=0:1 --range sin=1:3 >"$WORK/cmp.log" 2>&1; then
    pass=$((pass+1)); rm -f "$b"
  else echo "FAIL: $name -> $v"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
done
# Issue 37's steps, after infer-shapes (GreaterOrEqual/LessOrEqual below 11
# need the element types): the comparisons at each form (compare-down's
# operands hold NaN, +-inf, -0 and equal values whatever the inputs),
# Dropout's read mask across 12 (onnxruntime: all false at 11, all true at
# 12), Upsample-7 to Resize-11/13 in one run.
for nt in compare-down:11 compare-down:10 compare-down:8 compare-down:7 compare-int-down:9 \
          dropout-mask-12:12 dropout-mask-12-down:11 upsample-7-resize-up:11 \
          upsample-7-resize-up:13; do
  name=${nt%%:*}; v=${nt##*:}
  a="$WORK/$name.onnx"; b="$WORK/$name.$v.onnx"
  if ! "$OPT" "$(pass_model "$SRC" convert-opset "$name")" -o "$a" ||
     ! "$OPT" "$a" -infer-shapes -convert-opset --target-opset=$v -o "$b" 2>"$WORK/err.log"; then
    echo "FAIL: $name -> $v"; cat "$WORK/err.log"; fail=$((fail+1)); continue
  fi
  if $CMP "$a" "$b" --no-sensitivity >"$WORK/cmp.log" 2>&1; then pass=$((pass+1)); rm -f "$b"
  else echo "FAIL: $name -> $v"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
done
if [ -d "$DATA/node" ]; then
  for t in test_squeeze test_squeeze_negative_axes test_unsqueeze_three_axes \
           test_reduce_sum_keepdims_example test_reduce_sum_empty_axes_input_noop_example \
           test_reduce_max_negative_axes_keepdims_example test_reduce_mean_do_not_keepdims_example \
           test_split_equal_parts_default_axis test_split_variable_parts_2d test_clip_splitbounds; do
    d="$DATA/node/$t"
    [ -f "$d/model.onnx" ] || continue
    name=$(basename "$d"); b="$WORK/$name.21.onnx"
    if ! "$OPT" "$d/model.onnx" -convert-opset --target-opset=21 -o "$b" 2>"$WORK/err.log"; then
      echo "FAIL: $name -> 21"; cat "$WORK/err.log"; fail=$((fail+1)); continue
    fi
    if $CMP "$b" --expected "$d/test_data_set_0" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1)); rm -f "$b"
    else echo "FAIL: $name -> 21"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
  done
fi
PY=${PYTHON:-/usr/bin/python3}
if "$PY" -c "import onnx" 2>/dev/null && "$PY" "$SRC/test/Ort/legacy_models.py" "$WORK/legacy"; then
  for d in "$WORK"/legacy/*/; do
    name=$(basename "$d")
    for v in 9 21; do
      b="$WORK/$name.$v.onnx"
      if ! "$OPT" "$d/model.onnx" -convert-opset --target-opset=$v -o "$b" 2>"$WORK/err.log"; then
        if [ $v != 9 ] && grep -q "convert-opset: graph" "$WORK/err.log"; then refused=$((refused+1)); continue; fi
        echo "FAIL: $name -> $v"; cat "$WORK/err.log"; fail=$((fail+1)); continue
      fi
      if $CMP "$b" --expected "$d/test_data_set_0" >"$WORK/cmp.log" 2>&1; then pass=$((pass+1)); rm -f "$b"
      else echo "FAIL: $name -> $v"; tail -5 "$WORK/cmp.log"; fail=$((fail+1)); fi
    done
  done
else
  echo "ort-convert-opset: no python onnx ($PY): legacy models skipped"
fi
echo "ort-convert-opset: $pass matched, $refused refused, $fail failed"
[ "$fail" -eq 0 ]
