#!/bin/sh
# Compares onnx-opt -O2 outputs of two builds, byte for byte.
# usage: cmp-O2.sh BASE_ONNX_OPT NEW_ONNX_OPT model.onnx...
base=$1; new=$2; shift 2
out=$(mktemp -d); rc=0
for m in "$@"; do
  b=$out/base.onnx; n=$out/new.onnx; rm -f "$b" "$n"
  "$base" -O2 "$m" -o "$b" 2>"$out/base.err"; rb=$?
  "$new" -O2 "$m" -o "$n" 2>"$out/new.err"; rn=$?
  if [ $rb != $rn ]; then echo "DIFF exit $rb vs $rn: $m"; rc=1
  elif ! cmp -s "$out/base.err" "$out/new.err"; then echo "DIFF stderr: $m"; diff "$out/base.err" "$out/new.err" | head -5; rc=1
  elif [ $rb = 0 ] && ! cmp -s "$b" "$n"; then echo "DIFF bytes: $m"; rc=1
  else echo "same (exit $rb, $(stat -c %s "$n" 2>/dev/null || echo -) bytes): $m"; fi
done
rm -rf "$out"; exit $rc
