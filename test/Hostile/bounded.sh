#!/usr/bin/env bash
# bounded.sh CMD...: runs CMD with 1 GB of address space and 20 s of CPU
# time, so an input that amplifies fails the test instead of the machine.
ulimit -v 1048576 || exit 1
ulimit -t 20 || exit 1
exec "$@"
