#!/usr/bin/python3
"""opens.py DATA CMD...: runs CMD under strace and prints how many times it
opened the file named DATA and how many mappings it made of it (issue 31,
item 8: one open and one mapping per external file for the whole load)."""
import os
import re
import subprocess
import sys

data, cmd = sys.argv[1], sys.argv[2:]
# LeakSanitizer cannot stop the world under a tracer (it exits 1 at the end of
# a sanitized run), so the traced run of a sanitizer build checks no leaks:
# the untraced tests do.
env = dict(os.environ)
if env.get("ASAN_OPTIONS"):
    env["ASAN_OPTIONS"] += ":detect_leaks=0"
p = subprocess.run(["strace", "-f", "-e", "trace=open,openat,mmap,close"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
fds, opens, maps = set(), 0, 0
for line in p.stderr.splitlines():
    m = re.search(r'open(?:at)?\(.*"([^"]*)".*\) = (\d+)', line)
    if m:
        if m.group(1).endswith("/" + data) or m.group(1) == data:
            opens += 1
            fds.add(m.group(2))
        else:
            fds.discard(m.group(2))
        continue
    m = re.search(r'mmap\([^,]*, [^,]*, [^,]*, [^,]*, (\d+), ', line)
    if m and m.group(1) in fds:
        maps += 1
    m = re.search(r'close\((\d+)\)', line)
    if m:
        fds.discard(m.group(1))
print("exit=%d opens=%d maps=%d" % (p.returncode, opens, maps))
