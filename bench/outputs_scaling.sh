#!/usr/bin/env bash
# Loading a model with N graph outputs (issue 31, item 4) at four sizes:
# wall time and peak RSS of `onnx-opt IN -o OUT` (lift, verify, lower) with
# the wire lift and with ONNXIR_WIRE_LIFT=0, median of 3.
# Usage: bench/outputs_scaling.sh BUILD_DIR [SIZES...]
set -eu
build=${1:?build dir}; shift
sizes=${*:-25000 50000 100000 200000}
here=$(cd "$(dirname "$0")" && pwd)
opt="$build/tools/onnx-opt/onnx-opt"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
med() { sort -n | sed -n 2p; }
printf '%8s %9s %12s %12s %12s\n' outputs "size MB" "wire s" "proto s" "peak RSS MB"
for n in $sizes; do
  /usr/bin/python3 "$here/../test/Hostile/gen_outputs.py" "$n" "$tmp/m.onnxtxt"
  "$opt" "$tmp/m.onnxtxt" -o "$tmp/m.onnx"
  mb=$(stat -c %s "$tmp/m.onnx" | awk '{printf "%.1f", $1/1048576}')
  wire=(); proto=(); rss=()
  for r in 1 2 3; do
    wire+=("$(/usr/bin/time -f '%e %M' "$opt" "$tmp/m.onnx" -o "$tmp/o.onnx" 2>&1 | tail -1)")
    proto+=("$(ONNXIR_WIRE_LIFT=0 /usr/bin/time -f '%e' "$opt" "$tmp/m.onnx" -o "$tmp/o.onnx" 2>&1 | tail -1)")
  done
  w=$(printf '%s\n' "${wire[@]}" | awk '{print $1}' | med)
  m=$(printf '%s\n' "${wire[@]}" | awk '{print $2}' | med)
  p=$(printf '%s\n' "${proto[@]}" | med)
  printf '%8d %9s %12s %12s %12.0f\n' "$n" "$mb" "$w" "$p" "$(echo "$m/1024" | bc -l)"
done
