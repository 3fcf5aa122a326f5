#!/usr/bin/env bash
# bounded.sh CMD...: runs CMD with 1 GB of memory and 20 s of CPU time (60 s
# in a sanitizer build), so an input that amplifies fails the test instead of
# the machine. The memory bound is 1 GB of address space; under ASan, which
# reserves terabytes of address space for its shadow (ulimit -v would stop it
# at start), it is ASan's own limit of 1 GB of resident memory.
if [ -n "${ONNXIR_SANITIZED:-}" ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1024:allocator_may_return_null=0"
  ulimit -t 60 || exit 1
else
  ulimit -v 1048576 || exit 1
  ulimit -t 20 || exit 1
fi
exec "$@"
