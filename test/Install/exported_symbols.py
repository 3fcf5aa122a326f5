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

# Read on the mangled names: a demangled one puts a function's return type
# first (`absl::StatusOr<...> onnxir::Tensor::values<double>() const` is
# ours). A symbol of a dependency is a name nested in its namespace
# (_ZN, cv-qualifiers, the namespace's length and name), or such a class's
# vtable, typeinfo, typeinfo name, VTT or guard variable, or a thunk to such
# a function.
DEPENDENCY = re.compile(
    r"^_Z(?:TV|TI|TS|TT|GV|T[hv][n0-9_]*?_)?N[rVK]*(?:4llvm|6google8protobuf|4absl)")
OURS_IN_PROTOBUF = re.compile(r"^_ZN6google8protobuf5Arena18CreateMaybeMessageIN6onnxir5proto")
SONAME = re.compile(r"\(SONAME\).*\[(libonnxir_\w+\.so\.\d+\.\d+)\]")


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True,
                         text=True).stdout
    return out.splitlines()


bad = []
for lib in sys.argv[1:]:
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    mangled = [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]
    names = demangle(mangled)
    ours = sum(m.startswith(("_ZN6onnxir", "_ZNK6onnxir")) for m in mangled)
    bad += [f"  {lib}: {n}" for m, n in zip(mangled, names)
            if DEPENDENCY.match(m) and not OURS_IN_PROTOBUF.match(m)]
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
