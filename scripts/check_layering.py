#!/usr/bin/env python3
"""Checks that the libraries and tools include only what CMake lets them link,
and only downward in the declared layer order.

    scripts/check_layering.py [ROOT]      (ROOT: the source tree, default ..)

Each target is a directory with a CMakeLists.txt calling onnxir_add_library
(lib/X -> onnxir::X) or onnxir_add_tool (tools/X). Its arrows are read from
its sources: every `#include "onnxir/Y/..."` (of the target's .cpp/.h files,
and of the headers of its own public include/onnxir/X/ directory) is an arrow
to library Y, `onnxir/onnx.pb.h` and `google/protobuf/...` to Proto; a quoted
include found next to the including file (tools/common/, a private header) is
read as part of the target, or is an arrow if it lies in another target's
directory. An arrow fails when
  - the target's CMake DEPS (or target_link_libraries) do not name it, or
  - it does not point below the target in the order of LAYERS (a library
    sees what its layers lie on, directly or not; siblings such as Ops and
    Serialize, or Passes and Serialize, do not see each other; tools see
    every library), or the target's CMake declares such a dependency.
The order below is the one README's Architecture section states (Note [The
text layer] in include/onnxir/Text/Text.h). Exit status 1 on a violation,
each printed as `FILE:LINE: FROM -> TO: why`.
"""
import os
import re
import sys

# What each library lies on: IR <- Text <- Ops <- Passes <- tools,
# Ops <- Eval <- tools, Text <- Serialize <- tools, Proto <- Serialize. A target may depend on what
# is below it in this order (the transitive closure), nothing else.
LAYERS = {
    "IR": [],
    "Proto": [],
    "Text": ["IR"],
    "Ops": ["Text"],
    "Serialize": ["Text", "Proto"],
    "Passes": ["Ops"],
    "Eval": ["Ops"],
    # Read-only views of a model (JSON, DOT/Mermaid, diff); on Passes for
    # the fusion census of a run.
    "Inspect": ["Passes"],
}
TOOL = "tool"  # a tool lies on every library


def below(name):
    """Every library under `name` in the order."""
    if name == TOOL:
        return set(LAYERS)
    seen, todo = set(), list(LAYERS.get(name, []))
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo += LAYERS.get(x, [])
    return seen
# Header-only, below everything (onnxir/Support/*.h: compatibility shims,
# export macros): no arrow.
HEADER_ONLY = {"Support"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
CALL_RE = re.compile(r"\b(onnxir_add_library|onnxir_add_tool|target_link_libraries)\s*\(")


def cmake_calls(text):
    """(command, [arguments]) of the calls of interest in a CMakeLists.txt."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in CALL_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield m.group(1), text[m.end():i - 1].split()


def read_targets(root):
    """{name: dict(dir, layer, deps, cmake)} of every library and tool."""
    targets = {}
    for top, is_tool in (("lib", False), ("tools", True)):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for d in sorted(os.listdir(base)):
            cm = os.path.join(base, d, "CMakeLists.txt")
            if not os.path.isfile(cm):
                continue
            with open(cm) as f:
                calls = list(cmake_calls(f.read()))
            name, deps = None, set()
            for cmd, args in calls:
                if cmd in ("onnxir_add_library", "onnxir_add_tool") and args:
                    name = args[0]
                    if "DEPS" in args:
                        deps.update(args[args.index("DEPS") + 1:])
                elif cmd == "target_link_libraries":
                    deps.update(args[1:])
            if name is None:
                continue
            libs = set()
            for dep in deps:
                m = re.fullmatch(r"onnxir(?:::|_)(\w+)", dep)
                if m and m.group(1) != "LLVMSupport":
                    libs.add("Proto" if m.group(1) == "proto" else m.group(1))
            targets[name] = dict(dir=os.path.join(base, d), cmake=cm,
                                 layer=TOOL if is_tool else (name if name in LAYERS else None),
                                 deps=libs, tool=is_tool)
    return targets


def sources_of(root, name, t):
    """The files whose includes are the target's arrows."""
    files = []
    for dirpath, _, names in os.walk(t["dir"]):
        files += [os.path.join(dirpath, n) for n in sorted(names)
                  if n.endswith((".cpp", ".h", ".inc"))]
    if not t["tool"]:
        pub = os.path.join(root, "include", "onnxir", name)
        for dirpath, _, names in os.walk(pub):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".h")]
    return files


def arrow_of(inc):
    """The library an include names, None for none of ours."""
    if inc == "onnxir/onnx.pb.h" or inc.startswith("google/protobuf/"):
        return "Proto"
    parts = inc.split("/")
    if parts[0] != "onnxir" or len(parts) < 2:
        return None
    if len(parts) == 2:  # onnxir/IR.h: the umbrella of a library
        return parts[1][:-2] if parts[1].endswith(".h") else None
    return None if parts[1] in HEADER_ONLY else parts[1]


def check(root):
    root = os.path.abspath(root)
    targets = read_targets(root)
    dir_of = {os.path.abspath(t["dir"]): n for n, t in targets.items()}
    errors = []

    def owner(path):
        d = os.path.dirname(os.path.abspath(path))
        while d.startswith(root) and d != root:
            if d in dir_of:
                return dir_of[d]
            d = os.path.dirname(d)
        return None

    def err(path, line, frm, to, why):
        errors.append("%s:%d: %s -> %s: %s" % (os.path.relpath(path, root), line, frm, to, why))

    for name, t in sorted(targets.items()):
        if t["layer"] is None:
            errors.append("%s: library %s has no layer in scripts/check_layering.py's LAYERS"
                          % (os.path.relpath(t["cmake"], root), name))
            continue
        under = below(t["layer"])
        for dep in sorted(t["deps"]):
            if dep not in under:
                err(t["cmake"], 1, name, dep, "declared in CMake, but %s is not below %s "
                    "in the layer order" % (dep, name))
        todo = list(sources_of(root, name, t))
        seen = set(os.path.abspath(p) for p in todo)
        while todo:
            path = todo.pop(0)
            with open(path, errors="replace") as f:
                text = f.read()
            for m in INCLUDE_RE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                to = arrow_of(inc)
                if to is None:
                    local = os.path.abspath(os.path.join(os.path.dirname(path), inc))
                    if not os.path.isfile(local):
                        continue
                    other = owner(local)
                    if other is None or other == name:
                        if local not in seen:  # read as part of this target
                            seen.add(local)
                            todo.append(local)
                        continue
                    to = other
                if to == name:
                    continue
                if to not in t["deps"]:
                    err(path, line, name, to, "not declared in %s (#include \"%s\")"
                        % (os.path.relpath(t["cmake"], root), inc))
                if to not in under:
                    err(path, line, name, to, "goes upward or sideways: %s is not below %s in "
                        "the layer order (#include \"%s\")" % (to, name, inc))
    return targets, errors


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    targets, errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print("check_layering: %d violation(s)" % len(errors))
        return 1
    print("check_layering: %d targets, every arrow declared and downward" % len(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
