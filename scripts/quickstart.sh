#!/usr/bin/env bash
# Quick start: install, build onnx-opt and the Python module, optimise the
# shipped example model, and import onnxir from the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DONNXIR_BUILD_TESTS=OFF -DONNXIR_BUILD_BENCH=OFF >/dev/null
cmake --build build-release --target onnx-opt onnxir_python
mkdir -p out
set -x
build-release/tools/onnx-opt/onnx-opt -dce -topo --summary \
    examples/models/tiny_if.onnx -o out/tiny_if.opt.onnx
PYTHONPATH=build-release/python /usr/bin/python3 -c \
    'import onnxir; m = onnxir.load("out/tiny_if.opt.onnx"); print("import onnxir:", len(list(m.graph.nodes)), "nodes in out/tiny_if.opt.onnx")'
