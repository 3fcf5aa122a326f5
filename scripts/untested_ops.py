#!/usr/bin/env python3
"""Lists the registered operators that no test of the project uses.

An operator is *registered* when a family file of lib/Ops attaches a shape
rule or a kernel to it (`r["Op"] = rule;`, `r["Op"].infer(f).kernel(g)`, or
`r[op] = ...` inside `for (const char *op : {"A", "B", ...})`); its domain is
the one OpRegistry.cpp gives the registrar its family function is called
with. An operator is *tested* when some test file uses it by name: a node of
the text syntax (`= Op(`, `= Op<`, `domain.Op(`), or the op type as a string
literal ("Op" or 'Op') of a C++, Python, JavaScript or shell test. An op with
a kernel is *folded* by a test when one of those files folds: a lit test whose
RUN line runs fold-constants (or -O1/-O2, which do), or a GoogleTest
(test/Unit) that calls a kernel (evaluateKernel) or the folding pass
(foldConstants), itself or through a helper header beside it. The external
corpora (the ONNX backend data, ../shared/models) do not count: they are
exercised wholesale, and a wrong rule for an op they alone hold shows as a
count mismatch, not as a named failure.

Usage:  python3 scripts/untested_ops.py [--check] [--min-registered=N] [--kernels|--all] [ROOT]
  (no flag)   prints "domain op: why" for every op without a test of its own
              (no test at all, or a kernel no test folds)
  --kernels   prints every registered op that has a kernel
  --all       prints every registered op, its rule/kernel and the files naming it
  --check     exits 1 if an op lacks a test (and says which)
  --min-registered=N  exits 1 if fewer than N registrations were found (the
              parser no longer reads lib/Ops; a check that sees nothing passes)
ROOT is the repository (default: this script's parent folder).
"""
import os
import re
import sys

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
FLAGS = {a for a in sys.argv[1:] if a.startswith("--")}
ROOT = ARGS[0] if ARGS else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_DIR = os.path.join(ROOT, "lib", "Ops")
# Where tests live; corpus folders and generated inputs are not tests.
TEST_DIRS = [os.path.join(ROOT, "test"), os.path.join(ROOT, "python", "tests")]
TEST_SUFFIXES = (".onnxtxt", ".test", ".cpp", ".h", ".py", ".js", ".sh")
SKIP_DIRS = {"corpus"}


def strip_comments(src):
    """C++ source without // and /* */ comments (string literals kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(src, i):
    """Index just past the bracket that closes the one at src[i]."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[src[i]]]
    j = i + 1
    while j < len(src) and stack:
        c = src[j]
        if c == '"' or c == "'":
            k = j + 1
            while k < len(src) and src[k] != c:
                k += 2 if src[k] == "\\" else 1
            j = k
        elif c in pairs:
            stack.append(pairs[c])
        elif c == stack[-1]:
            stack.pop()
        j += 1
    return j


def statement_end(src, i):
    """Index just past the statement starting at src[i] (a block or up to ';')."""
    while src[i].isspace():
        i += 1
    if src[i] == "{":
        return matching(src, i)
    j = i
    while j < len(src) and src[j] != ";":
        j = matching(src, j) if src[j] in "{([" else j + 1
    return j + 1


RULE = r"(?:\s*\.\s*since\(\s*\d+\s*\))?\s*(?:=(?!=)\s*(?P<rhs>[^;]*)|\.\s*(?P<call>infer|kernel)\s*\()"


def attachments(body, var):
    """(kind, text) of each rule or kernel attached to r[var] in body."""
    for m in re.finditer(r"\br\[\s*" + var + r"\s*\]" + RULE, body):
        if m.group("call"):
            yield m.group("call")
            rest = body[m.end():statement_end(body, m.end())]
            if re.search(r"\.\s*kernel\s*\(", rest):
                yield "kernel"
        else:
            rhs = m.group("rhs")
            # Kernels are named kOp (kernels::kOp where a file keeps the
            # kernels namespace); anything else assigned is a rule.
            yield "kernel" if re.match(r"\s*(?:kernels::)?k[A-Z]\w*\s*$", rhs) else "infer"


def registrations():
    """{(domain, op): set of "infer"/"kernel"} from lib/Ops."""
    reg = open(os.path.join(OPS_DIR, "OpRegistry.cpp")).read()
    registrar_domain = dict(re.findall(r'OpRegistrar\s+(\w+)\s*=\s*registrar\("([^"]*)"\)', reg))
    domain_of = {f: registrar_domain[v] for f, v in re.findall(r"\b(register\w+)\((\w+)\);", reg)
                 if v in registrar_domain}
    bodies = {}
    for name in sorted(os.listdir(OPS_DIR)):
        if not name.endswith(".cpp"):
            continue
        src = strip_comments(open(os.path.join(OPS_DIR, name)).read())
        for m in re.finditer(r"\bvoid\s+(register\w+)\s*\(\s*OpRegistrar\s*&\s*r\s*\)\s*\{", src):
            bodies[m.group(1)] = src[m.end() - 1:matching(src, m.end() - 1)]
    # A family function may call others with its registrar, directly
    # (registerNNAdapters(r)) or from a list it walks (Tensor.cpp's one
    # register function per op): any registrar function it names.
    changed = True
    while changed:
        changed = False
        for f, body in bodies.items():
            if f not in domain_of:
                continue
            for g in re.findall(r"\b(register\w+)\b", body):
                if g in bodies and g not in domain_of:
                    domain_of[g] = domain_of[f]
                    changed = True
    missing = sorted(set(bodies) - set(domain_of))
    if missing:
        sys.exit("untested_ops.py: no registrar domain for " + ", ".join(missing) +
                 " (does OpRegistry.cpp still call them?)")
    ops = {}
    for f, body in bodies.items():
        dom = domain_of[f]
        for m in re.finditer(r'\br\[\s*"(\w+)"\s*\]', body):
            kinds = set(attachments(body[m.start():], '"' + m.group(1) + '"'))
            if kinds:
                ops.setdefault((dom, m.group(1)), set()).update(kinds)
        for m in re.finditer(r"\bfor\s*\(\s*const\s+char\s*\*\s*(\w+)\s*:\s*\{", body):
            var, open_brace = m.group(1), m.end() - 1
            close = matching(body, open_brace)
            names = re.findall(r'"(\w+)"', body[open_brace:close])
            loop_body = body[close:statement_end(body, body.index(")", close) + 1)]
            kinds = set(attachments(loop_body, var))
            for op in names:
                if kinds:
                    ops.setdefault((dom, op), set()).update(kinds)
    return ops


def test_files():
    for top in TEST_DIRS:
        for d, subdirs, files in os.walk(top):
            subdirs[:] = sorted(s for s in subdirs if s not in SKIP_DIRS)
            for f in sorted(files):
                if f.endswith(TEST_SUFFIXES):
                    yield os.path.join(d, f)


def uses(ops):
    """{op: [test files using it]}."""
    names = {op for _, op in ops}
    found = {op: [] for op in names}
    node = re.compile(r"(?:=|\.)\s*(\w+)\s*[(<]")      # y = Op(x), ai.onnx.ml.Op(x)
    literal = re.compile(r"""["'](\w+)["']""")          # "Op" in code
    for path in test_files():
        text = open(path, encoding="utf-8", errors="replace").read()
        seen = set()
        if path.endswith((".onnxtxt", ".test")):
            seen.update(node.findall(text))
        seen.update(literal.findall(text))
        rel = os.path.relpath(path, ROOT)
        for op in seen & names:
            found[op].append(rel)
    return found


def folds(rel):
    """True if the test file rel (relative to ROOT) runs the folding pass."""
    path = os.path.join(ROOT, rel)
    text = open(path, encoding="utf-8", errors="replace").read()
    if rel.startswith(os.path.join("test", "Unit") + os.sep):
        # The call may sit in a helper header beside the test (KernelTestUtil.h).
        for inc in re.findall(r'^#include "([^"]+)"', text, re.M):
            helper = os.path.join(os.path.dirname(path), inc)
            if os.path.isfile(helper):
                text += open(helper, encoding="utf-8", errors="replace").read()
        return re.search(r"\b(evaluateKernel|foldConstants)\s*\(", text) is not None
    if not rel.endswith((".onnxtxt", ".test")):
        return False
    return re.search(r"RUN:.*(-fold-constants|fold-constants\{|-O[12]\b)", text) is not None


def gaps(ops, found):
    """[(domain, op, why)] of the ops without a test of their own."""
    out = []
    for dom, op in sorted(ops):
        if not found[op]:
            out.append((dom, op, "no test uses it"))
        elif "kernel" in ops[(dom, op)] and not any(folds(f) for f in found[op]):
            out.append((dom, op, "no test folds it (its kernel)"))
    return out


def main():
    ops = registrations()
    if not ops:
        sys.exit("untested_ops.py: found no registrations under " + OPS_DIR)
    found = uses(ops)
    if "--kernels" in FLAGS:
        for dom, op in sorted(ops):
            if "kernel" in ops[(dom, op)]:
                print(dom or '""', op)
        return 0
    if "--all" in FLAGS:
        for dom, op in sorted(ops):
            print(dom or '""', op, " ".join(sorted(ops[(dom, op)])), len(found[op]),
                  " ".join(found[op][:3]))
        return 0
    missing = gaps(ops, found)
    for dom, op, why in missing:
        print("%s %s: %s" % (dom or '""', op, why))
    print("%d of %d registered ops have no test of their own" % (len(missing), len(ops)))
    status = 0
    for f in FLAGS:
        if f.startswith("--min-registered="):
            need = int(f.split("=", 1)[1])
            if len(ops) < need:
                print("untested_ops.py: found %d registrations, expected at least %d" % (len(ops), need))
                status = 1
    if "--check" in FLAGS and missing:
        status = 1
    return status

if __name__ == "__main__":
    sys.exit(main())
