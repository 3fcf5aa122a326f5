#!/usr/bin/env bash
# expect1.sh CMD...: runs CMD, prints its stderr, and fails unless it exited
# with status exactly 1 (a located error; a crash or signal is a failure).
"$@" 2>&1 >/dev/null
rc=$?
if [ "$rc" -ne 1 ]; then echo "expect1: exit status $rc, want 1: $*"; exit 1; fi
exit 0
