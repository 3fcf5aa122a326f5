#!/usr/bin/python3
"""paths.py WORKDIR SRCROOT: the output-path rules and input kinds of
onnx-opt (README "Output paths"), each printed as `ok: ...` once checked."""
import os
import pty
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import ext_model, read_fills  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

work, src = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
os.chdir(work)


def run(*args, **kw):
    return subprocess.run(["onnx-opt", *args], capture_output=True, **kw)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ok(what):
    print("ok: " + what)


def expect(r, rc, text=None):
    err = r.stderr.decode(errors="replace")
    if r.returncode != rc or (text and text not in err):
        fail("rc %d (want %d), stderr %r (want %r)" % (r.returncode, rc, err, text))


# A small model with one 100-element tensor (over the elision limit).
w = numpy_helper.from_array(np.arange(100, dtype=np.float32), "w")
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [100])],
                      initializer=[w])
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open("m.onnx", "wb") as f:
    f.write(model.SerializeToString())
mbytes = open("m.onnx", "rb").read()

# Devices are written in place, never replaced.
dev = os.path.abspath("null")
try:
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
except PermissionError:
    dev = "/dev/null"
expect(run("m.onnx", "-o", dev), 0)
if not stat.S_ISCHR(os.stat(dev).st_mode):
    fail("%s is no longer a character device" % dev)
ok("char device written in place")

# Write errors keep the system's reason (binary and text).
if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
    expect(run("m.onnx", "-o", "/dev/full"), 1, "write failed: No space left on device")
    expect(run("m.onnx", "--emit=text", "-o", "/dev/full"), 1,
           "write failed: No space left on device")
ok("write errors say why")

# A FIFO is written into (a reader is waiting on it).
os.mkfifo("fifo")
reader = subprocess.Popen(["cat", "fifo"], stdout=subprocess.PIPE)
expect(run("m.onnx", "-o", "fifo"), 0)
got = reader.communicate()[0]
if got != mbytes or not stat.S_ISFIFO(os.stat("fifo").st_mode):
    fail("FIFO output: %d bytes read, fifo kept: %s" % (len(got), stat.S_ISFIFO(os.stat("fifo").st_mode)))
ok("FIFO written in place")

# /dev/stdout and a pipe handed over as a descriptor (like >(...)).
r = subprocess.run(["onnx-opt", "m.onnx", "-o", "/dev/stdout"], capture_output=True)
if r.returncode or r.stdout != mbytes:
    fail("-o /dev/stdout: rc %d, %d bytes" % (r.returncode, len(r.stdout)))
rfd, wfd = os.pipe()
p = subprocess.Popen(["onnx-opt", "m.onnx", "-o", "/dev/fd/%d" % wfd], pass_fds=[wfd])
os.close(wfd)
got = b""
while True:
    chunk = os.read(rfd, 65536)
    if not chunk:
        break
    got += chunk
os.close(rfd)
if p.wait() != 0 or got != mbytes:
    fail("-o /dev/fd/N: %d bytes" % len(got))
ok("/dev/stdout and a pipe descriptor written in place")

# A symbolic link is followed; the link stays and its target is replaced.
os.makedirs("real", exist_ok=True)
open("real/target.onnx", "wb").write(b"old")
os.symlink("real/target.onnx", "link.onnx")
expect(run("m.onnx", "-o", "link.onnx"), 0)
if not os.path.islink("link.onnx") or open("real/target.onnx", "rb").read() != mbytes:
    fail("symlink output")
if [n for n in os.listdir(".") + os.listdir("real") if ".tmp." in n]:
    fail("temporary left beside a symlink output")
ok("symlink kept, target replaced")

# Permissions of an existing file are kept in every format.
for name, mode, args in (("p.onnx", 0o600, []), ("p.onnxtxt", 0o640, []),
                         ("p2.txt", 0o604, ["--emit=text"]),
                         ("p3.onnx", 0o611, ["--external-data=p3.bin",
                                             "--external-data-threshold=16"])):
    open(name, "wb").write(b"x")
    os.chmod(name, mode)
    expect(run("m.onnx", "-o", name, *args), 0)
    if stat.S_IMODE(os.stat(name).st_mode) != mode:
        fail("%s: mode %o, want %o" % (name, stat.S_IMODE(os.stat(name).st_mode), mode))
ok("permissions kept (binary, text, --emit=text, external data)")

# Binary to a terminal is refused unless -f; text is fine there.
for args, rc in ((["m.onnx", "-o", "-"], 1), (["m.onnx", "-o", "-", "-f"], 0),
                 (["m.onnx", "-o", "-", "--emit=text"], 0)):
    master, slave = pty.openpty()
    r = subprocess.run(["onnx-opt", *args], stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    os.close(master)
    if r.returncode != rc:
        fail("%s to a terminal: rc %d" % (args, r.returncode))
    if rc and b"terminal" not in r.stderr:
        fail("no terminal message: %r" % r.stderr)
ok("binary to a terminal refused unless -f")

# Names: empty, and the longest a file name can be.
expect(run("m.onnx", "-o", ""), 1, "-o: the output file name is empty")
expect(run("", "-o", "x.onnx"), 1, "the input file name is empty")
for n in (244, 250, 255):
    name = "a" * (n - 5) + ".onnx"
    expect(run("m.onnx", "-o", name), 0)
    if open(name, "rb").read() != mbytes:
        fail("output name of %d bytes" % n)
ok("empty names refused, 244-255 byte names written")

# Inputs: a pipe descriptor (like <(...)) and standard input, read whole.
for how in ("fd", "stdin"):
    rfd, wfd = os.pipe()
    args = ["m.onnx"]
    if how == "fd":
        p = subprocess.Popen(["onnx-opt", "/dev/fd/%d" % rfd, "-o", "from-pipe.onnx"],
                             pass_fds=[rfd], stderr=subprocess.PIPE)
    else:
        p = subprocess.Popen(["onnx-opt", "-", "-o", "from-pipe.onnx"], stdin=rfd,
                             stderr=subprocess.PIPE)
    os.close(rfd)
    os.write(wfd, mbytes[:10])
    os.write(wfd, mbytes[10:])  # in two writes: a pipe is read to its end
    os.close(wfd)
    if p.wait() != 0 or open("from-pipe.onnx", "rb").read() != mbytes:
        fail("input from %s: %s" % (how, p.stderr.read()))
ok("pipe and stdin inputs read whole")

# Text files are lossless by default: binary -> text file -> binary is the
# same model, field for field; also for a real model.
models = ["m.onnx", os.path.join(src, "examples/models/tiny_if.onnx")]
for i, mpath in enumerate(models):
    expect(run(mpath, "-o", "t%d.onnxtxt" % i), 0)
    expect(run("t%d.onnxtxt" % i, "-o", "back%d.onnx" % i), 0)
    a = onnx.load(mpath)
    b = onnx.load("back%d.onnx" % i)
    if a != b:
        fail("%s: text file did not read back field for field" % mpath)
expect(run("m.onnx", "--emit=text", "-o", "t.txt"), 0)
expect(run("t.txt", "-o", "back-txt.onnx"), 0)
if onnx.load("back-txt.onnx") != model:
    fail("--emit=text -o FILE is not lossless")
ok("text files read back field for field")

# The readable form, when asked, is refused as a model (its data is gone).
expect(run("m.onnx", "--text-readable", "-o", "r.onnxtxt"), 0)
if "__elided__" not in open("r.onnxtxt").read():
    fail("--text-readable did not elide")
expect(run("r.onnxtxt", "-o", "r.onnx"), 1, 'tensor "w" is elided')
expect(run("r.onnxtxt", "-o", "r.onnx"), 1, "elided data cannot become a model")
expect(run("m.onnx", "--elide-tensors-larger-than=200", "-o", "r2.onnxtxt"), 0)
expect(run("r2.onnxtxt", "-o", "r2.onnx"), 0)
ok("elided text refused")

# Not a model: a TensorProto file, an empty message.
open("t.pb", "wb").write(numpy_helper.from_array(np.ones((3, 4), np.float32), "t").SerializeToString())
expect(run("t.pb", "-o", "x.onnx"), 1, "not an ONNX model: it reads as a TensorProto")
open("empty.onnx", "wb").write(b"\x92\x01\x00")  # one empty unknown field
expect(run("empty.onnx", "-o", "x.onnx"), 1, "not an ONNX model")
open("zero.onnx", "wb").write(b"")
expect(run("zero.onnx", "-o", "x.onnx"), 1, "the file is empty")
if os.path.exists("x.onnx"):
    fail("an output was written for a non-model")
ok("non-models refused")

# Flags are validated before anything runs.
expect(run("m.onnx", "--emit=pdf", "-o", "x.onnx"), 1, "--emit: unknown value 'pdf' (valid: binary, text, json, dot, mermaid, svg)")
expect(run("m.onnx", "--input-format=xml", "-o", "x.onnx"), 1, "--input-format: unknown value 'xml' (valid: auto, binary, text)")
expect(run("m.onnx", "--external-data=u.bin", "--external-data-threshold=64KB", "-o", "u.onnx"), 0)
expect(run("m.onnx", "--external-data=u.bin", "--external-data-threshold=1MiB", "-o", "u.onnx"), 0)
expect(run("m.onnx", "--external-data=u.bin", "--external-data-threshold=100B", "-o", "u.onnx"), 0)
if not [n for n in os.listdir(".") if n.startswith("u.") and n.endswith(".bin")]:
    fail("--external-data-threshold=100B moved nothing")
expect(run("m.onnx", "--external-data=u.bin", "--external-data-threshold=3XB", "-o", "u.onnx"), 1,
       "unknown unit")
ok("--emit, --input-format and byte sizes validated")

# Outputs not beside the input never dangle: text to stdout, another
# directory, with or without --external-data.
os.makedirs("in", exist_ok=True)
ext_model("in/e.onnx", "e.bin", 2, 4096, 0x33)
os.makedirs("elsewhere", exist_ok=True)
expect(run("in/e.onnx", "-o", "elsewhere/e.onnx"), 0)
expect(run("in/e.onnx", "-o", "elsewhere/e2.onnx", "--external-data=d.bin"), 0)
expect(run("in/e.onnx", "-o", "elsewhere/e.onnxtxt"), 0)
expect(run("in/e.onnx", "--emit=text", "-o", "elsewhere/e3.txt"), 0)
r = run("in/e.onnx", "--emit=text", "--print-lossless", "-o", "-")
open("elsewhere/stdout.onnxtxt", "wb").write(r.stdout)
r = run("in/e.onnx", "-o", "-", "-f")
open("elsewhere/stdout.onnx", "wb").write(r.stdout)
os.rename("in", "gone")
for t in ("e.onnxtxt", "e3.txt", "stdout.onnxtxt"):
    expect(run("elsewhere/" + t, "-o", "elsewhere/%s.onnx" % t), 0)
for t in ("e.onnx", "e2.onnx", "e.onnxtxt.onnx", "e3.txt.onnx", "stdout.onnxtxt.onnx",
          "stdout.onnx"):
    if read_fills("elsewhere/" + t) != [0x33, 0x34]:
        fail("elsewhere/%s does not read the input's data" % t)
ok("outputs elsewhere carry their data")
