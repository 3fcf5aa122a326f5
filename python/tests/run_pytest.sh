#!/bin/sh
# run_pytest.sh [--skip-unless-importable] PYTHON PYTEST-ARGS...
# Runs pytest on this folder's tests. With --skip-unless-importable (the
# sanitizer builds, where the module needs the sanitizer runtime preloaded
# into the uninstrumented interpreter), a module that cannot be imported
# makes the test skip (exit 77, ctest SKIP_RETURN_CODE) and says why.
skip=0
if [ "$1" = "--skip-unless-importable" ]; then skip=1; shift; fi
py=$1; shift
if [ $skip = 1 ] && ! err=$("$py" -c "import onnxir" 2>&1); then
  echo "python tests skipped: 'import onnxir' fails in this sanitizer build (LD_PRELOAD=${LD_PRELOAD:-none}):"
  echo "$err" | tail -n 5
  exit 77
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
