#!/usr/bin/env bash
# setup_ort.sh SHARED_DIR DIR
# Installs onnxruntime-node (the versions SHARED_DIR/tools/package.json pins)
# offline-safe into DIR/node_modules, once for every onnxruntime test of the
# build (ctest fixture `ort`). Without node/npm, or when the install fails,
# it says so and leaves DIR without the module: each test then skips itself
# (exit 77). Exits 0 then, so that ctest runs the tests and they report;
# under CI=true (.ci/run), where node and npm are installed (scripts/setup.sh
# --test) and the tests must run, a missing node/npm or a failed install is a
# failure (exit 1), and the tests that require the fixture are not run.
set -uo pipefail
SHARED=$1; DIR=$2
unavailable() {
  if [ "${CI:-}" = true ]; then echo "ort-setup: $1: FAILED (CI=true: onnxruntime is required)"; exit 1; fi
  echo "ort-setup: $1: the onnxruntime tests will skip"; exit 0
}
if [ -d "$DIR/node_modules/onnxruntime-node" ]; then
  echo "ort-setup: onnxruntime-node already in $DIR"; exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  unavailable "node/npm not available"
fi
mkdir -p "$DIR"
cp "$SHARED/tools/package.json" "$DIR/"
if ! (cd "$DIR" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund >npm.log 2>&1); then
  rm -rf "$DIR/node_modules"
  tail -n 20 "$DIR/npm.log"
  unavailable "npm install failed (see $DIR/npm.log)"
fi
exit 0
