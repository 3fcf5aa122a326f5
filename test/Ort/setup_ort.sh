#!/usr/bin/env bash
# setup_ort.sh SHARED_DIR DIR
# Installs onnxruntime-node (the versions SHARED_DIR/tools/package.json pins)
# offline-safe into DIR/node_modules, once for every onnxruntime test of the
# build (ctest fixture `ort`). Without node/npm, or when the install fails,
# it says so and leaves DIR without the module: each test then skips itself
# (exit 77). Always exits 0, so that ctest runs the tests and they report.
set -uo pipefail
SHARED=$1; DIR=$2
if [ -d "$DIR/node_modules/onnxruntime-node" ]; then
  echo "ort-setup: onnxruntime-node already in $DIR"; exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "ort-setup: node/npm not available: the onnxruntime tests will skip"; exit 0
fi
mkdir -p "$DIR"
cp "$SHARED/tools/package.json" "$DIR/"
if ! (cd "$DIR" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund >npm.log 2>&1); then
  echo "ort-setup: npm install failed (see $DIR/npm.log): the onnxruntime tests will skip"
  rm -rf "$DIR/node_modules"
fi
exit 0
