#!/usr/bin/env bash
# run_ort.sh ONNX_OPT SHARED_DIR WORK_DIR
# For every model in SHARED_DIR/models/real (and the light models), checks with
# ../shared/tools/ort_compare.js that
#   -dce -topo   and  -rename   give bit-identical outputs (--exact --opt disabled)
#   -O1                          gives outputs within the default tolerance,
#   -O2                          within atol 1e-6 (fusions reassociate float
#                                sums; ppocr_v4_det's Sigmoid outputs near 0
#                                move by 1.8e-7 when its logits move by an ulp).
# Needs onnxruntime-node in $ORT_NODE_MODULES (ctest fixture `ort`, see
# setup_ort.sh); exit 77 (skipped) without it. The outputs of a pipeline are
# removed once they pass; a failing one is kept in WORK_DIR to look at.
# Models checked with one input set (--sets 1: the slow isnet, the light
# models) run the original model once: its inputs and outputs are saved by the
# first comparison, and later pipelines are checked against them (--expected).
set -uo pipefail
OPT=$1; SHARED=$2; WORK=$3
source "$(dirname "$0")/ort_common.sh"
ort_require ort-oracle
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
REAL="$SHARED/models/real"
pass=0; fail=0
check() { # name model out cmp-args...
  local name=$1 a=$2 b=$3; shift 3
  if $CMP "$a" "$b" "$@" >"$WORK/cmp.log" 2>&1; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL: $name"; tail -5 "$WORK/cmp.log"; return 1
  fi
}
run() { # model pipeline-name args...   (EXPECTED=dir: compare with saved outputs)
  local model=$1 label=$2; shift 2
  local base; base=$(basename "$model" .onnx)
  local out="$WORK/$base.$label.onnx"
  local flags=()
  case $label in
    dce-topo) flags=(-dce -topo) ;;
    rename) flags=(-rename) ;;
    O1) flags=(-O1) ;;
    O2) flags=(-O2 --verify=schema) ;; # the result also passes the schema verifier
  esac
  if ! "$OPT" "${flags[@]}" "$model" -o "$out" 2>"$WORK/opt.log"; then
    fail=$((fail+1)); echo "FAIL: onnx-opt ${flags[*]} $base"; cat "$WORK/opt.log"; return
  fi
  local exact=(--exact --opt disabled)
  [ "$label" = O1 ] && exact=()
  [ "$label" = O2 ] && exact=(--atol 1e-6)
  if [ -n "${EXPECTED:-}" ]; then
    check "$base $label" "$out" --expected "$EXPECTED" --inputs "$EXPECTED" "${exact[@]}" || return
  elif [ -n "${SAVE:-}" ]; then
    rm -rf "$SAVE"; mkdir -p "$SAVE"
    check "$base $label" "$model" "$out" "${exact[@]}" --save-inputs "$SAVE" --save-outputs "$SAVE" "$@" || return
  else
    check "$base $label" "$model" "$out" "${exact[@]}" "$@" || return
  fi
  rm -f "$out"
}
# A model with one input set: run it once (see above).
run_once() { # model args...
  local model=$1; shift
  local dir; dir="$WORK/expected.$(basename "$model" .onnx)"
  rm -rf "$dir"
  SAVE=$dir run "$model" dce-topo "$@"
  [ -d "$dir" ] || return
  EXPECTED=$dir run "$model" rename
  EXPECTED=$dir run "$model" O1
  EXPECTED=$dir run "$model" O2
  rm -rf "$dir"
}
declare -A ARGS=()
while read -r name rest; do
  case $name in ''|'#'*) continue ;; esac
  rest=${rest%%#*}; ARGS[$name]=${rest% once}
done < "$(dirname "$0")/real_model_args.txt"
for model in "$REAL"/*.onnx; do
  base=$(basename "$model" .onnx)
  args=${ARGS[$base]:-}
  case " $args " in
    *" --sets 1 "*)
      # shellcheck disable=SC2086
      run_once "$model" $args ;;
    *)
      for label in dce-topo rename O1 O2; do
        # shellcheck disable=SC2086
        run "$model" "$label" $args
      done ;;
  esac
done
# silero's other If branch runs only at 8 kHz.
run "$REAL/silero_vad_v5.onnx" O1 --shape input=1,256 --shape state=2,1,128 --value sr=8000
for model in "$SHARED"/models/light/*.onnx; do
  run_once "$model" --sets 1
done
echo "ort-oracle: $pass passed, $fail failed"
[ "$fail" = 0 ]
