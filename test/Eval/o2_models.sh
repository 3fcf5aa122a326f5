#!/usr/bin/env bash
# o2_models.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# -O2 keeps the numbers of the shared models (issue 40's tests): each model
# of SHARED_DIR/models/light and SHARED_DIR/models/real goes through
# `onnx-opt -O2 --check-numerics=1` (Note [Numeric check]: the model as read
# and the result run on the reference evaluator on one random input set and
# compared output by output), with the input shapes that
# test/Ort/real_model_args.txt gives (--shape NAME=DIMS becomes
# --input-shape NAME:DIMS, --value NAME=V becomes --check-input NAME=V).
# Every model must run and keep its outputs: an op
# without a kernel, an evaluator error or a changed output fails. Models
# marked `once` there (slow) run only with ONNXIR_SLOW_TESTS=1. Exit 77
# (skipped) without the shared models, a failure under CI=true.
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
rm -rf "$WORK"; mkdir -p "$WORK"
if ! ls "$SHARED"/models/light/*.onnx >/dev/null 2>&1; then
  if [ "${CI:-}" = true ]; then echo "eval-o2-models: no shared models: FAILED (CI=true)"; exit 1; fi
  echo "eval-o2-models: no shared models in $SHARED: skipped"; exit 77
fi
fail=0; ran=0; skipped=()
for m in "$SHARED"/models/light/*.onnx "$SHARED"/models/real/*.onnx; do
  stem=$(basename "$m" .onnx)
  args=$(grep -E "^$stem( |$)" "$SRC/test/Ort/real_model_args.txt" | cut -d' ' -f2-)
  if [[ " $args " == *" once "* ]] && [ "${ONNXIR_SLOW_TESTS:-}" != 1 ]; then
    skipped+=("$stem"); continue
  fi
  shapes=()
  read -ra words <<<"$args"
  for ((k = 0; k < ${#words[@]}; k++)); do
    if [ "${words[k]}" = --shape ]; then shapes+=(--input-shape "${words[k+1]/=/:}"); fi
    if [ "${words[k]}" = --value ]; then shapes+=(--check-input "${words[k+1]}"); fi
  done
  start=$(date +%s)
  if "$OPT" "$m" -O2 --check-numerics=1 "${shapes[@]}" -o "$WORK/$stem.onnx" >"$WORK/$stem.log" 2>&1; then
    ran=$((ran+1)); echo "ok: $stem ($(( $(date +%s) - start )) s)"
  else
    fail=$((fail+1)); echo "FAIL: $stem: $(grep -m1 error "$WORK/$stem.log")"
  fi
done
echo "eval-o2-models: $ran models keep their outputs after -O2, $fail failures; not run (slow, ONNXIR_SLOW_TESTS=1): ${skipped[*]:-none}"
[ "$fail" -eq 0 ] && [ "$ran" -gt 0 ]
