# ort_common.sh: sourced by the onnxruntime test scripts of this folder.
#
# ort_require NAME: unless node is on PATH and onnxruntime-node is installed
# in $ORT_NODE_MODULES (the ctest fixture `ort`, setup_ort.sh), says which of
# the two is missing, as "NAME: ...: skipped", and exits 77 (ctest: skipped).
ort_require() {
  if ! command -v node >/dev/null; then
    echo "$1: node not available: skipped"; exit 77
  fi
  if [ ! -d "${ORT_NODE_MODULES:-}/onnxruntime-node" ]; then
    echo "$1: no onnxruntime-node in \$ORT_NODE_MODULES (${ORT_NODE_MODULES:-unset}): skipped"; exit 77
  fi
}
