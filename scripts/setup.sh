#!/usr/bin/env bash
# Installs what onnxir needs to build and test, from Debian's packages only.
# Idempotent; uses sudo when not run as root.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(cmake ninja-build g++ libprotobuf-dev protobuf-compiler libabsl-dev libeigen3-dev llvm-14-dev
      llvm-14-tools libgtest-dev python3-dev pybind11-dev python3-pybind11
      pkg-config libre2-dev libjpeg-dev libpng-dev)
if [ "${1:-}" = "--test" ]; then
  # Independent references and tools the test suite uses; LLVM 19 for the
  # sanitizer build, which is also the LLVM-19 + shared-libraries build.
  PKGS+=(libonnx-dev libonnx-testdata python3-onnx python3-numpy python3-pytest python3-pil python3-torch clang-14 libclang-rt-14-dev valgrind strace graphviz
        llvm-19-dev)
  # npm installs onnxruntime-node (test/Ort/setup_ort.sh), which CI=true requires.
  if ! command -v node >/dev/null 2>&1; then PKGS+=(nodejs); fi
  if ! command -v npm >/dev/null 2>&1; then PKGS+=(npm); fi
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
