#!/bin/sh
# Compares onnx-opt outputs of two builds, byte for byte: the written model,
# stderr and the exit status. The pipeline is -O2 unless FLAGS says otherwise
# (FLAGS=-infer-shapes touches every type rule).
# usage: [FLAGS="-infer-shapes"] compare-O2.sh BASE_ONNX_OPT NEW_ONNX_OPT model.onnx...
# A refactoring that must not change behaviour (the lib/Ops move) runs it on
# the backend corpus and the shared models:
#   sh scripts/compare-O2.sh OLD/onnx-opt build/tools/onnx-opt/onnx-opt \
#     $(find ../shared/models -name '*.onnx') $(find /usr/share/libonnx-testdata/data -name model.onnx)
base=$1; new=$2; shift 2
flags=${FLAGS:--O2}
out=$(mktemp -d); rc=0
for m in "$@"; do
  b=$out/base.onnx; n=$out/new.onnx; rm -f "$b" "$n"
  # shellcheck disable=SC2086
  "$base" $flags "$m" -o "$b" 2>"$out/base.err"; rb=$?
  # shellcheck disable=SC2086
  "$new" $flags "$m" -o "$n" 2>"$out/new.err"; rn=$?
  if [ $rb != $rn ]; then echo "DIFF exit $rb vs $rn: $m"; rc=1
  elif ! cmp -s "$out/base.err" "$out/new.err"; then echo "DIFF stderr: $m"; diff "$out/base.err" "$out/new.err" | head -5; rc=1
  elif [ $rb = 0 ] && ! cmp -s "$b" "$n"; then echo "DIFF bytes: $m"; rc=1
  else echo "same (exit $rb, $(stat -c %s "$n" 2>/dev/null || echo -) bytes): $m"; fi
done
rm -rf "$out"; exit $rc
