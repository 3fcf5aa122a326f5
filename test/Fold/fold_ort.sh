#!/usr/bin/env bash
# Folds the shared real and light models with `onnx-opt -fold-constants -dce`
# and checks (1) onnxruntime gives the same outputs as the original (default
# tolerance of ort_compare.js), (2) models with constant chains shrink in
# node count, (3) no light model grows on disk.
#   fold_ort.sh ONNX_OPT SHARED_DIR WORK_DIR
# Needs onnxruntime-node in $ORT_NODE_MODULES (ctest fixture `ort`); without
# it the ORT comparison is skipped (and said so) and only the size checks
# run; under CI=true (.ci/run) its absence is a failure.
set -u
opt=$1; shared=$2; work=$3
mkdir -p "$work"
if [ ! -d "${ORT_NODE_MODULES:-}/onnxruntime-node" ]; then
  if [ "${CI:-}" = true ]; then
    echo "fold-ort: no onnxruntime-node in \$ORT_NODE_MODULES (${ORT_NODE_MODULES:-unset}): FAILED (CI=true: the test must run)"
    exit 1
  fi
  echo "fold-ort: no onnxruntime-node in \$ORT_NODE_MODULES (${ORT_NODE_MODULES:-unset}): onnxruntime comparisons skipped"
fi
cmp="$shared/tools/ort_compare.js"
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }

run_model() { # file args...
  local f=$1; shift
  local in="$shared/models/$f" out="$work/$(basename "$f" .onnx).folded.onnx"
  if ! "$opt" -fold-constants -dce "$in" -o "$out"; then
    echo "FAIL: onnx-opt on $f"; fail=$((fail+1)); return
  fi
  if [ -d "${ORT_NODE_MODULES:-}/onnxruntime-node" ]; then
    check node "$cmp" "$in" "$out" "$@"
  fi
}

run_model real/ppocr_v4_det.onnx --shape x=1,3,320,320
run_model real/ppocr_v4_rec.onnx --shape x=1,3,48,320
run_model real/silero_vad_v5.onnx --shape input=1,512 --shape state=2,1,128 --value sr=16000
run_model real/oww_melspectrogram.onnx --shape input=1,1280
run_model real/oww_embedding.onnx --shape input_1=1,76,32,1
run_model real/oww_hey_jarvis_v0.1.onnx --range x.1=-0.1:0.1
if [ "${FOLD_ORT_HEAVY:-0}" = 1 ]; then
  run_model real/isnet_quint8.onnx --sets 1 --no-sensitivity
else
  "$opt" -fold-constants -dce "$shared/models/real/isnet_quint8.onnx" -o "$work/isnet_quint8.folded.onnx" \
    && pass=$((pass+1)) || { echo "FAIL: onnx-opt on isnet_quint8"; fail=$((fail+1)); }
fi

# Kernels at the edges (int64 extremes, scalars): each test/Fold/Inputs model
# as written (onnxruntime computes it) against its folded form, exactly.
edges="$(dirname "$0")/Inputs"
# A folder walk checks a minimum count: an emptied folder is a failure.
check test "$(ls "$edges"/*.onnxtxt 2>/dev/null | wc -l)" -ge 4
for f in "$edges"/*.onnxtxt; do
  b=$(basename "$f" .onnxtxt)
  if ! "$opt" "$f" -o "$work/$b.onnx" || ! "$opt" -fold-constants -dce "$f" -o "$work/$b.folded.onnx"; then
    echo "FAIL: onnx-opt on $f"; fail=$((fail+1)); continue
  fi
  if [ -d "${ORT_NODE_MODULES:-}/onnxruntime-node" ]; then
    check node "$cmp" "$work/$b.onnx" "$work/$b.folded.onnx" --exact --opt disabled --sets 1 \
      --no-sensitivity --quiet
  fi
done

# Models with constant chains must shrink (fewer nodes means smaller text).
for m in ppocr_v4_rec isnet_quint8; do
  a=$("$opt" "$shared/models/real/$m.onnx" --emit=text -o - | grep -cE ' = [A-Za-z_.]+ ?[(<]')
  b=$("$opt" "$work/$m.folded.onnx" --emit=text -o - | grep -cE ' = [A-Za-z_.]+ ?[(<]')
  check test "$b" -lt "$a"
done

# Light models must not grow.
check test "$(ls "$shared"/models/light/*.onnx 2>/dev/null | wc -l)" -ge 9
for f in "$shared"/models/light/*.onnx; do
  out="$work/$(basename "$f" .onnx).folded.onnx"
  if "$opt" -fold-constants -dce "$f" -o "$out"; then
    check test "$(stat -c %s "$out")" -le "$(stat -c %s "$f")"
  else
    echo "FAIL: onnx-opt on $f"; fail=$((fail+1))
  fi
done
echo "fold-ort: $pass passed, $fail failed"
[ "$fail" = 0 ]
