#!/usr/bin/env bash
# fuse_attention.sh ONNX_OPT SHARED_DIR SOURCE_DIR WORK_DIR
# fuse-attention and fuse-rotary-embedding keep meaning on onnxruntime
# (issue 28): each fusing lit model of test/Passes/fuse/attention-*.onnxtxt
# and rotary-*.onnxtxt, fused with -infer-shapes -fuse, gives the outputs of
# the unfused model on random inputs (ort_compare.js default tolerance;
# B = 2, T = 5, N = 6, L = 3, unnamed dims T; T = 3 and position ids in the 3-row
# caches of the rotary models), and holds an Attention or RotaryEmbedding
# (so onnxruntime really ran the opset-23 op). The boolean input `keep` of
# attention-causal is all false: a random one would fully mask some rows,
# NaN unfused and zero in Attention (Note [Attention numerical contract]).
# Exit 77 (skipped) without node and onnxruntime-node ($ORT_NODE_MODULES).
set -uo pipefail
OPT=$1; SHARED=$2; SRC=$3; WORK=$4
source "$(dirname "$0")/ort_common.sh"
ort_require ort-fuse-attention
rm -rf "$WORK"; mkdir -p "$WORK"
CMP="node $SHARED/tools/ort_compare.js"
pass=0; fail=0
for t in "$SRC"/test/Passes/fuse/attention-*.onnxtxt "$SRC"/test/Passes/fuse/rotary-*.onnxtxt; do
  name=$(basename "$t" .onnxtxt)
  a="$WORK/$name.onnx"; b="$WORK/$name.fused.onnx"
  if ! "$OPT" "$t" -o "$a" || ! "$OPT" "$t" -infer-shapes -fuse -o "$b"; then
    echo "FAIL: $name does not load or fuse"; fail=$((fail+1)); continue
  fi
  # A near miss (*-not) need not fuse (some fuse another part): its outputs
  # must be kept either way. Any other model must fuse.
  if ! "$OPT" "$b" --emit=text -o - | grep -qE "= (Attention|RotaryEmbedding) "; then
    case $name in
      *-not) ;;
      *) echo "FAIL: $name: nothing fused"; fail=$((fail+1)); continue ;;
    esac
  fi
  # onnxruntime refuses a RotaryEmbedding whose cache has fewer rows than
  # the sequence ("Updating cos_cache ... not supported"): T = 3 there.
  T=5; case $name in rotary-*) T=3 ;; esac
  # A float16 model (*-fp16) is compared at float16's tolerance, as
  # torch-fusions compares its float16 exports: the graph rounds every
  # step to float16, Attention computes inside in float.
  TOL=; case $name in *-fp16) TOL="--atol 1e-2 --rtol 1e-2" ;; esac
  # shellcheck disable=SC2086  # TOL is words
  if $CMP "$a" "$b" --dim B=2 --dim T=$T --dim N=6 --dim L=3 --default-dim $T --value keep=0 --range pos=0:2 $TOL >"$WORK/cmp.log" 2>&1; then
    pass=$((pass+1))
  else
    echo "FAIL: $name"; tail -5 "$WORK/cmp.log"; fail=$((fail+1))
  fi
done
echo "ort-fuse-attention: $pass models keep their outputs, $fail failures"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
