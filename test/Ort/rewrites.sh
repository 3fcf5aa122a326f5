#!/usr/bin/env bash
# rewrites.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# Every rewrite's lit models keep their outputs on onnxruntime (issue 48
# item 1): each .onnxtxt model of the rewrite folders and REWRITE_MODELS
# (../Common/lit_pipelines.sh; positive cases and near misses alike) is run
# through the pipeline of each of its own RUN lines that reads the model
# itself (`onnx-opt %s FLAGS ...`), and the result
# is compared with the model as written on random inputs (ort_compare.js
# default tolerances, three input sets, every unnamed or symbolic dim 3). A
# near miss that a broken guard rewrites, or a positive case whose rewrite
# is wrong, changes an output and fails here even where its FileCheck lines
# still match.
#
# A model onnxruntime cannot run as written (an op it lacks, an opset past
# its own, a custom domain, invalid on purpose) is listed as not runnable and
# not counted. A model it runs whose rewritten form it cannot run fails. The
# walk fails when fewer than MIN_COMPARED pipelines were compared, so a walk
# that finds nothing, or that onnxruntime stopped loading, cannot pass.
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES).
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
MIN_COMPARED=${MIN_COMPARED:-50}
source "$(dirname "$0")/ort_common.sh"
source "$(dirname "$0")/../Common/lit_pipelines.sh"
ort_require ort-rewrites
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"

compared=0; fail=0; unrunnable=()
mapfile -t models < <(rewrite_models "$SRC")
for m in "${models[@]}"; do
  name=${m%% *}; t=${m#* }
  # The attention and rotary models need their own dims and a fused op
  # (fuse_attention.sh runs them).
  case $name in fuse/attention-*|fuse/rotary-*) continue ;; esac
  # Dropout in training mode draws a new mask in every session: its
  # outputs differ between two runs of the same model.
  case $name in fuse/dropout) continue ;; esac
  stem="$WORK/${name//\//_}"
  mapfile -t pipes < <(lit_pipelines "$t")
  [ "${#pipes[@]}" -gt 0 ] || continue
  a="$stem.onnx"
  # (The model as written, converted only: the schema check on load would
  # refuse the models that are invalid on purpose, an untyped graph input
  # say; onnxruntime decides below whether it runs them.)
  if ! "$OPT" --verify=structural "$t" -o "$a" 2>"$stem.err"; then
    echo "FAIL: $name does not load: $(head -1 "$stem.err")"; fail=$((fail+1)); continue
  fi
  # Runnable as written, on the input sets of the comparison?
  if ! $CMP "$a" "$a" --default-dim 3 --no-sensitivity >"$stem.cmp" 2>&1; then
    unrunnable+=("$name: $(grep -m1 -iE 'error|fail' "$stem.cmp" | cut -c1-150)")
    continue
  fi
  i=0
  for p in "${pipes[@]}"; do
    i=$((i+1)); b="$stem.$i.onnx"
    # shellcheck disable=SC2086  # the flags are words
    if ! eval "\"\$OPT\" \"\$t\" $p -o \"\$b\"" 2>"$stem.$i.err"; then
      echo "FAIL: $name [$p] does not run: $(head -1 "$stem.$i.err")"; fail=$((fail+1)); continue
    fi
    if $CMP "$a" "$b" --default-dim 3 >"$stem.$i.cmp" 2>&1; then
      compared=$((compared+1))
    else
      echo "FAIL: $name [$p]"; tail -5 "$stem.$i.cmp"; fail=$((fail+1))
    fi
  done
done
echo "ort-rewrites: not runnable on onnxruntime as written (${#unrunnable[@]}):"
for u in "${unrunnable[@]}"; do echo "  $u"; done
echo "ort-rewrites: $compared pipelines keep their outputs, $fail failures (at least $MIN_COMPARED wanted)"
[ "$fail" -eq 0 ] && [ "$compared" -ge "$MIN_COMPARED" ]
