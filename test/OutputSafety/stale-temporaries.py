#!/usr/bin/python3
"""stale-temporaries.py WORKDIR: a save removes the temporaries that killed
writers of the same output left (Note [Stale temporaries] in
lib/Serialize/FileIO.cpp), and only those.

Fabricates `.NAME.tmp.PID.HOST.XXXXXX` files beside the output and the data
file: with a dead pid of this boot and pid namespace (removed), with a live
pid (kept), with another boot id (kept), in the old form without a writer
(kept), and of another output name (kept); then saves with onnx-opt."""
import os
import subprocess
import sys

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
os.chdir(work)

boot = open("/proc/sys/kernel/random/boot_id").read().replace("-", "").strip()[:16]
host = boot + "n%d" % os.stat("/proc/self/ns/pid").st_ino
other_boot = ("0" if boot[0] != "0" else "1") + boot[1:] + "n%d" % os.stat("/proc/self/ns/pid").st_ino

# A pid that no longer exists: a child that has exited and been reaped.
child = subprocess.Popen(["true"])
child.wait()
dead = child.pid
assert not os.path.exists("/proc/%d" % dead), "pid %d was reused at once" % dead
live = os.getpid()

with open("m.onnxtxt", "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 17]>\n'
            "g (float[2048] x) => (float[2048] y)\n"
            "  <float[2048] w = {%s}>\n{\n  y = Add(x, w)\n}\n" % ", ".join(["1"] * 2048))

files = {
    ".out.onnx.tmp.%d.%s.aB3dE9" % (dead, host): False,       # stale: removed
    ".w.bin.tmp.%d.%s.Zz0099" % (dead, host): False,          # stale data temporary
    ".out.onnx.tmp.%d.%s.aB3dE8" % (live, host): True,        # its writer runs
    ".out.onnx.tmp.%d.%s.aB3dE7" % (dead, other_boot): True,  # another boot or machine
    ".out.onnx.tmp.qW3rTy": True,                             # old form, writer unknown
    ".other.onnx.tmp.%d.%s.aB3dE6" % (dead, host): True,      # another output
}
for name in files:
    with open(name, "wb") as f:
        f.write(b"\0" * 4096)

subprocess.run(["onnx-opt", "m.onnxtxt", "-o", "out.onnx", "--external-data=w.bin",
                "--external-data-threshold=1KiB"], check=True)
failed = False
for name, keep in files.items():
    there = os.path.exists(name)
    if there != keep:
        print("FAIL: %s %s" % (name, "was removed" if keep else "is still there"))
        failed = True
# The save's own temporaries are gone, the output is complete.
left = sorted(n for n in os.listdir(".") if ".tmp." in n and n not in files)
if left:
    print("FAIL: left behind: %s" % left)
    failed = True
for name in os.listdir("."):
    os.remove(name)
if failed:
    sys.exit(1)
print("stale-temporaries: removed 2 stale, kept 4")
