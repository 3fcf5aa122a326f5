# ort_common.sh: sourced by the onnxruntime test scripts of this folder.
#
# ort_skip NAME WHY: a test that cannot run here says why and exits 77
# (ctest: skipped); under CI=true (.ci/run), where everything the suite uses
# is installed, it fails instead (exit 1): a skip there would be counted as a
# pass that checked nothing.
ort_skip() {
  if [ "${CI:-}" = true ]; then
    echo "$1: $2: FAILED (CI=true: the test must run)"; exit 1
  fi
  echo "$1: $2: skipped"; exit 77
}

# ort_require NAME: unless node is on PATH and onnxruntime-node is installed
# in $ORT_NODE_MODULES (the ctest fixture `ort`, setup_ort.sh), says which of
# the two is missing and skips (ort_skip).
ort_require() {
  if ! command -v node >/dev/null; then
    ort_skip "$1" "node not available"
  fi
  if [ ! -d "${ORT_NODE_MODULES:-}/onnxruntime-node" ]; then
    ort_skip "$1" "no onnxruntime-node in \$ORT_NODE_MODULES (${ORT_NODE_MODULES:-unset})"
  fi
}
