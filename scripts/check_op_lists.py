#!/usr/bin/env python3
"""Checks that the passes ask the op registry instead of keeping op facts.

Passes name the ops a pattern matches and ask the rest of the registry (Note
[Op facts], include/onnxir/Ops/OpRegistry.h; include/onnxir/Ops/OpFacts.h):
which ops are elementwise, broadcast, act along an axis, keep the shape;
from which version an attribute became an operand. This script fails when
lib/Passes drifts back to keeping such facts itself:

  - op list: a window of WINDOW (10) consecutive lines of a lib/Passes/*.cpp
    file names MAX_OPS (6) or more distinct operators, counting string
    literals ("Relu") and identifiers (Relu) equal to an op name, comments
    left out, and the root op of a pattern's registration left out too
    (`ps.add("remove-dropout", "Dropout", ...)`: a pattern names the op it
    matches), with the ops it says it makes (its census list,
    `ps.add("fuse-gelu", "Mul", fuseGelu, 2, {"Gelu"})`);
  - opset literal: a version comparison with an integer literal, e.g.
    `rw.opsetVersion() < 13`, `c.opset >= 18`, `v < 7`,
    `older->sinceVersion() < 11` (0 and -1, "unknown" and "absent", pass).

Op names are those of the generated schema table, lib/Ops/OpSchemaTables.inc
(every domain). Output: one line per finding, `file:line: what`, then a
summary; exit status 1 on a finding.

Usage:  python3 scripts/check_op_lists.py [--min-ops=N] [ROOT]
  --min-ops=N  fails if fewer than N op names were read (a parser that no
               longer reads the table would find nothing)
ROOT is the repository (default: this script's parent folder).
"""
import os
import re
import sys

WINDOW = 10
MAX_OPS = 6

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
FLAGS = [a for a in sys.argv[1:] if a.startswith("--")]
ROOT = ARGS[0] if ARGS else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def op_names(root):
    """Every op name of the schema table (kStrPool split by kStrOffsets,
    the name field of each kSchemas row)."""
    path = os.path.join(root, "lib", "Ops", "OpSchemaTables.inc")
    with open(path, encoding="utf-8") as f:
        text = f.read()

    def block(name):
        m = re.search(r"\b%s\[\]\s*=\s*(.*?);\n" % name, text, re.S)
        if not m:
            sys.exit("%s: no %s table" % (path, name))
        return m.group(1)

    pool = "".join(
        bytes(s, "utf-8").decode("unicode_escape")
        for s in re.findall(r'"((?:[^"\\]|\\.)*)"', block("kStrPool")))
    offsets = [int(x) for x in re.findall(r"\d+", block("kStrOffsets"))]
    strings = [pool[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
    names = set()
    for row in re.findall(r"\{([^{}]*)\}", block("kSchemas")):
        fields = [x.strip() for x in row.split(",")]
        names.add(strings[int(fields[1])])
    return names


def strip_comments(line, state):
    """`line` without comments; `state[0]` is True inside a /* */ block."""
    out, i = [], 0
    while i < len(line):
        if state[0]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state[0], i = False, j + 2
            continue
        c = line[i]
        if c == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append(line[i:j + 1])
            i = j + 1
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            state[0], i = True, i + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


PATTERN_ROOT = re.compile(r'\bps\.add\(\s*"(?:[^"\\]|\\.)*"\s*,\s*"(?:[^"\\]|\\.)*"')
PATTERN_MADE = re.compile(r'(\bps\.add\([^{]*)\{[^}]*\}')
TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|\b([A-Za-z_][A-Za-z0-9_]*)\b')
VERSIONISH = r"(?:\b(?:opset\w*|\w*[vV]ersion\w*)(?:\(\))?|\bv)"
CMP = r"(?:<=|>=|==|!=|<|>)"
LITERAL = r"(?:[1-9]\d*)"
VERSION_CMP = re.compile(r"(?:%s\s*%s\s*%s\b)|(?:\b%s\s*%s\s*%s)" %
                         (VERSIONISH, CMP, LITERAL, LITERAL, CMP, VERSIONISH))


def check_file(path, rel, names):
    findings = []
    with open(path, encoding="utf-8") as f:
        raw = f.read().split("\n")
    state = [False]
    per_line = []
    for n, line in enumerate(raw, 1):
        code = strip_comments(line, state)
        counted = PATTERN_ROOT.sub("", PATTERN_MADE.sub(r"\1", code))
        ops = set()
        for s, ident in TOKEN.findall(counted):
            word = s or ident
            if word in names:
                ops.add(word)
        per_line.append(ops)
        # Leave out string literals: messages may say "opset 13".
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', code)
        if VERSION_CMP.search(bare):
            findings.append("%s:%d: opset literal in a version comparison: %s" %
                            (rel, n, line.strip()))
    reported_until = 0
    for start in range(len(per_line)):
        window = set().union(*per_line[start:start + WINDOW])
        if len(window) >= MAX_OPS and start + 1 > reported_until:
            findings.append("%s:%d: %d operators named within %d lines (%s): an op list; ask "
                            "the registry (Note [Op facts])" %
                            (rel, start + 1, len(window), WINDOW, ", ".join(sorted(window))))
            reported_until = start + WINDOW
    return findings


def main():
    names = op_names(ROOT)
    for flag in FLAGS:
        if flag.startswith("--min-ops="):
            want = int(flag.split("=", 1)[1])
            if len(names) < want:
                print("read %d op names, expected at least %d" % (len(names), want))
                return 1
        else:
            print("unknown flag %s" % flag)
            return 2
    passes = os.path.join(ROOT, "lib", "Passes")
    findings = []
    count = 0
    for name in sorted(os.listdir(passes)):
        if not name.endswith(".cpp"):
            continue
        count += 1
        findings += check_file(os.path.join(passes, name), "lib/Passes/" + name, names)
    for f in findings:
        print(f)
    print("%d findings in %d files of lib/Passes (%d op names)" % (len(findings), count, len(names)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
