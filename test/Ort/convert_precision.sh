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
# quantize-weights is checked at the end the same way (see there).
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
m = onnx.load(sys.argv[1])
# onnx 1.12 knows IR 8 and opset 17: newer models (blocked DequantizeLinear
# is opset 21) are not checked.
if m.ir_version <= 8 and all(o.version <= 17 for o in m.opset_import if o.domain in ("", "ai.onnx")):
    onnx.checker.check_model(m, full_check=True)
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
# quantize-weights (issue 43 part 3): its lit model at 8 and 4 bits and the
# shared models with constant MatMul/Gemm weights (converted to opset 21
# first) run on onnxruntime; the quantized model gives what its
# dequantize-weights form gives within 1e-5 (onnxruntime reads our int4
# packing, block layout and zero points as we write them), and the
# difference to the float model is printed.
QW="$SRC/test/Passes/quantize-weights/weights.onnxtxt"
"$OPT" "$QW" -o "$WORK/qw.onnx"
for cfg in "bits=8" "bits=4" "bits=4 symmetric=false" "bits=8 block=3 symmetric=false"; do
  tag=$(echo "$cfg" | tr ' =' '_-')
  q="$WORK/qw.$tag.onnx"; d="$WORK/qw.$tag.dq.onnx"
  if ! "$OPT" "$QW" --pass-pipeline="quantize-weights{block=2 $cfg}" -o "$q" 2>/dev/null ||
     ! "$OPT" "$q" -dequantize-weights -o "$d"; then
    echo "FAIL: quantize-weights{$cfg} does not run"; fail=$((fail+1)); continue
  fi
  # --opt basic: onnxruntime's full optimizer computes a per-tensor
  # DequantizeLinear -> MatMul (the near miss vd) with quantized activations.
  if $CMP "$q" "$d" --atol 1e-6 --rtol 1e-5 --opt basic --quiet >"$WORK/qw.$tag.cmp" 2>&1; then
    pass=$((pass+1))
  else
    echo "FAIL: quantize-weights{$cfg}: onnxruntime disagrees with dequantize-weights"
    tail -3 "$WORK/qw.$tag.cmp"; fail=$((fail+1))
  fi
  check "qw" "q:$tag" "$WORK/qw.onnx" "$q" --value n=3 --atol 1 --rtol 1
done
# com.microsoft.MatMulNBits (format=matmulnbits): onnxruntime's contrib
# kernel gives what the dequantize-weights MatMuls give (it reads our
# packing, padding of K = 20 and packed zero points as we write them).
QN="$SRC/test/Passes/quantize-weights/matmulnbits.onnxtxt"
"$OPT" "$QN" -o "$WORK/qn.onnx"
# (8-bit symmetric codes are checked on torch exports, ort-torch-precision.)
for cfg in "bits=4" "bits=4 symmetric=false" "bits=8 symmetric=false"; do
  tag=nbits_$(echo "$cfg" | tr ' =' '_-')
  q="$WORK/qn.$tag.onnx"; d="$WORK/qn.$tag.dq.onnx"
  if ! "$OPT" "$QN" --pass-pipeline="quantize-weights{format=matmulnbits block=16 $cfg}" -o "$q" 2>/dev/null ||
     ! "$OPT" "$q" -dequantize-weights -o "$d"; then
    echo "FAIL: quantize-weights{format=matmulnbits $cfg} does not run"; fail=$((fail+1)); continue
  fi
  if $CMP "$q" "$d" --atol 1e-6 --rtol 1e-5 --opt basic --quiet >"$WORK/qn.$tag.cmp" 2>&1; then
    pass=$((pass+1))
  else
    echo "FAIL: quantize-weights{format=matmulnbits $cfg}: onnxruntime disagrees with dequantize-weights"
    tail -3 "$WORK/qn.$tag.cmp"; fail=$((fail+1))
  fi
done
for a in "$SHARED"/models/real/oww_hey_jarvis_v0.1.onnx; do
  name=$(basename "$a" .onnx)
  for bits in 8 4; do
    b="$WORK/$name.q$bits.onnx"
    if ! "$OPT" "$a" --pass-pipeline="infer-shapes{outputs-only},convert-opset{target=21},quantize-weights{bits=$bits}" -o "$b" 2>"$WORK/$name.q$bits.err"; then
      echo "FAIL: $name does not quantize: $(tail -1 "$WORK/$name.q$bits.err")"; fail=$((fail+1)); continue
    fi
    extra=$(grep "^$name " "$ARGS" | cut -d' ' -f2-)
    # shellcheck disable=SC2086
    check "$name" "int$bits" "$a" "$b" $extra
  done
done
echo "ort-convert-precision: $pass conversions run and stay close, $fail failures"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
