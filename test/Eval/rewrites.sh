#!/usr/bin/env bash
# rewrites.sh ONNX_OPT SOURCE_DIR WORK_DIR
# Every rewrite's lit models keep their outputs on the reference evaluator
# (issue 40's tests): each .onnxtxt model of the rewrite folders of
# test/Passes and of REWRITE_MODELS (../Common/lit_pipelines.sh; positive
# cases and near misses alike) goes through the pipeline of each of its own
# RUN lines that reads the model itself, with
# `onnx-opt --check-numerics` (Note [Numeric check]: the model as read and
# the result run on three random input sets; a dim without a size is 1).
# test/Ort/rewrites.sh does the same on onnxruntime; this walk needs no
# runtime, so it runs in every build (the sanitizer tree too), and it also
# takes the attention and rotary models, whose fused forms are standard ops.
#
# Counted: a pipeline whose result keeps every output (compared). Listed,
# not failing: a model the evaluator cannot run as written (invalid on
# purpose, an input without a shape for random values, random values its
# ops refuse, such as an index out of range when a dim is 1) or whose result
# holds an op without a kernel (an op of another domain, an op whose kernel
# is still missing: "not supported"). Failing: an output that differs, a
# result that does not run for any other reason, any other error, or fewer
# than MIN_COMPARED comparisons (a walk that finds nothing cannot pass).
set -uo pipefail
OPT=$1; SRC=$2; WORK=$3
MIN_COMPARED=${MIN_COMPARED:-60}
source "$(dirname "$0")/../Common/lit_pipelines.sh"
rm -rf "$WORK"; mkdir -p "$WORK"

compared=0; fail=0; unchecked=()
mapfile -t models < <(rewrite_models "$SRC")
for m in "${models[@]}"; do
  name=${m%% *}; t=${m#* }
  stem="$WORK/${name//\//_}"
  mapfile -t pipes < <(lit_pipelines "$t")
  i=0
  for p in "${pipes[@]}"; do
    i=$((i+1)); b="$stem.$i.onnx"
    # shellcheck disable=SC2086  # the flags are words
    if eval "\"\$OPT\" \"\$t\" $p --check-numerics -o \"\$b\"" >"$stem.$i.out" 2>&1; then
      compared=$((compared+1))
    elif grep -q -E -- '--check-numerics: (.*not supported: |the input model does not run|input .*: random values need)' "$stem.$i.out"; then
      unchecked+=("$name [$p]: $(grep -m1 -o -- 'error: --check-numerics: .*' "$stem.$i.out" | cut -c26-200)")
    elif grep -q -- 'onnx-opt: error: --check-numerics: ' "$stem.$i.out"; then
      echo "FAIL: $name [$p]: $(grep -m1 'error' "$stem.$i.out")"; fail=$((fail+1))
    elif ! eval "\"\$OPT\" \"\$t\" $p -o \"\$b\"" >/dev/null 2>&1; then
      # The pipeline itself refuses the model (a RUN line expecting an
      # error): nothing to compare.
      continue
    else
      echo "FAIL: $name [$p]: $(grep -m1 'error' "$stem.$i.out")"; fail=$((fail+1))
    fi
  done
done
echo "eval-rewrites: not checkable on the evaluator (${#unchecked[@]}):"
for u in "${unchecked[@]}"; do echo "  $u"; done
echo "eval-rewrites: $compared pipelines keep their outputs, $fail failures (at least $MIN_COMPARED wanted)"
[ "$fail" -eq 0 ] && [ "$compared" -ge "$MIN_COMPARED" ]
