#!/usr/bin/env python3
"""ctest shared-symbols: each shared onnxir library given exports onnxir's API
and nothing of its dependencies (Note [Exported API] in
include/onnxir/Support/Export.h): no defined dynamic symbol of LLVM (llvm::),
protobuf (google::protobuf::) or absl (absl::), nor their vtables or typeinfo;
and it has a versioned SONAME. Exempt: what protoc generates for our own
messages inside protobuf's namespace (Arena::CreateMaybeMessage<onnxir::proto::X>,
marked ONNXIR_PROTO_API), which users of onnx.pb.h call.

Usage: exported_symbols.py LIB.so..."""
import re
import subprocess
import sys

DEPENDENCY = re.compile(
    r"^((vtable|typeinfo|typeinfo name|VTT|construction vtable) for |guard variable for |"
    r"(non-)?virtual thunk to )?(llvm|google::protobuf|absl)::")
OURS_IN_PROTOBUF = re.compile(r"^google::protobuf::Arena::CreateMaybeMessage<onnxir::proto::")
SONAME = re.compile(r"\(SONAME\).*\[(libonnxir_\w+\.so\.\d+\.\d+)\]")

bad = []
for lib in sys.argv[1:]:
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", lib], check=True,
                         capture_output=True, text=True).stdout
    names = [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]
    ours = sum("onnxir::" in n for n in names)
    bad += [f"  {lib}: {n}" for n in names if DEPENDENCY.match(n) and not OURS_IN_PROTOBUF.match(n)]
    dyn = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True, text=True).stdout
    soname = SONAME.search(dyn)
    if not soname:
        sys.exit(f"{lib}: no versioned SONAME (readelf -d):\n{dyn}")
    if not ours:
        sys.exit(f"{lib}: exports nothing of onnxir's")
    print(f"{lib}: SONAME {soname.group(1)}, {ours} onnxir symbols, {len(names)} in all")
if bad:
    print(f"{len(bad)} symbols of a dependency exported:", *bad[:200], sep="\n")
    sys.exit(1)
