#!/usr/bin/env bash
# convert_precision.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# convert-precision keeps models valid and close (issue 43 part 1): each
# lit model of test/Passes/convert-precision and each shared model (models/
# real and models/light) converted to float16 passes python onnx's checker
# (full_check) and runs on onnxruntime, whose outputs are compared with the
# float32 model's on random inputs (real_model_args.txt gives valid ones):
# |a - b| <= 0.05 + 0.05 |b|. The lit models converted to bfloat16 pass the
# checker (onnxruntime's CPU provider has no bfloat16 kernels for most ops:
# "Could not find an implementation for Relu(14)").
# Prints per model the file sizes, the largest absolute and relative
# difference (relative: |a - b| / |b| elementwise, large where b is near 0).
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES) or
# without python3-onnx.
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
source "$(dirname "$0")/ort_common.sh"
ort_require ort-convert-precision
PY=/usr/bin/python3
if ! $PY -c 'import onnx' 2>/dev/null; then
  ort_skip ort-convert-precision "python3-onnx (onnx.checker) not available"
fi
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
ARGS="$(dirname "$0")/real_model_args.txt"
pass=0; fail=0
printf '%-28s %-9s %12s %12s %12s %12s\n' model type "bytes f32" "bytes conv" "max abs" "max rel"

# check NAME TYPE A B [ort_compare args...]
check() {
  local name=$1 type=$2 a=$3 b=$4; shift 4
  if ! $PY - "$b" >"$WORK/$name.$type.chk" 2>&1 <<'PYEOF'
import sys, onnx
onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)
PYEOF
  then
    echo "FAIL: $name ($type): onnx checker: $(tail -1 "$WORK/$name.$type.chk")"; fail=$((fail+1)); return
  fi
  if [ "$type" = bf16 ]; then
    printf '%-28s %-9s %12s %12s %12s %12s\n' "$name" "$type" "$(stat -c %s "$a")" \
      "$(stat -c %s "$b")" checker checker
    pass=$((pass+1)); return
  fi
  $CMP "$a" "$b" --sets 1 --atol 0.05 --rtol 0.05 --no-sensitivity --json "$@" >"$WORK/$name.$type.cmp" 2>&1
  local rc=$?
  local line; line=$(tail -1 "$WORK/$name.$type.cmp")
  local abs rel
  abs=$(echo "$line" | grep -o '"maxAbs":[^,]*' | cut -d: -f2 | sort -g | tail -1)
  rel=$(echo "$line" | grep -o '"maxRel":[^,]*' | cut -d: -f2 | sort -g | tail -1)
  printf '%-28s %-9s %12s %12s %12.3g %12.3g\n' "$name" "$type" "$(stat -c %s "$a")" \
    "$(stat -c %s "$b")" "${abs:-nan}" "${rel:-nan}"
  if [ $rc -eq 0 ]; then pass=$((pass+1)); else
    echo "FAIL: $name ($type): ort_compare exit $rc"; tail -3 "$WORK/$name.$type.cmp"; fail=$((fail+1))
  fi
}

for t in "$SRC"/test/Passes/convert-precision/*.onnxtxt; do
  name=$(basename "$t" .onnxtxt)
  a="$WORK/$name.onnx"
  if ! "$OPT" "$t" -o "$a"; then echo "FAIL: $name does not load"; fail=$((fail+1)); continue; fi
  for type in fp16 bf16; do
    b="$WORK/$name.$type.onnx"
    if ! "$OPT" "$t" --precision=$type -o "$b" 2>"$WORK/$name.$type.err"; then
      echo "FAIL: $name does not convert to $type: $(tail -1 "$WORK/$name.$type.err")"
      fail=$((fail+1)); continue
    fi
    check "$name" $type "$a" "$b" --default-dim 4 --value n=3 --value c=1
  done
done

for a in "$SHARED"/models/real/*.onnx "$SHARED"/models/light/*.onnx; do
  name=$(basename "$a" .onnx)
  b="$WORK/$name.fp16.onnx"
  if ! "$OPT" "$a" --precision=fp16 -o "$b" 2>"$WORK/$name.err"; then
    echo "FAIL: $name does not convert: $(tail -1 "$WORK/$name.err")"; fail=$((fail+1)); continue
  fi
  extra=$(grep "^$name " "$ARGS" | cut -d' ' -f2- | sed 's/\bonce\b//; s/--sets 1//')
  # shellcheck disable=SC2086
  check "$name" fp16 "$a" "$b" $extra
done
echo "ort-convert-precision: $pass conversions run and stay close, $fail failures"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
