"""Parses onnx-opt's --emit=dot or --emit=mermaid output strictly enough to
catch what breaks a renderer: a quote or backslash not escaped, a brace or
subgraph left open, an edge to an id never declared, a statement of no
known form. Prints `ok: N nodes, E edges, C clusters` or the first problem
(exit 1). For machines without Graphviz; view-dot-render.test renders with
`dot` itself where it is installed.

    view-check.py dot|mermaid FILE
"""
import re
import sys


def fail(msg):
    print("bad: " + msg)
    sys.exit(1)


def tokens(text):
    """DOT tokens: ids, quoted strings (escapes kept), punctuation, '->'."""
    i, out = 0, []
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                if j < len(text) and text[j] == "\n":
                    fail("a raw newline inside a quoted string at offset %d" % j)
                j += 1
            if j >= len(text):
                fail("a quoted string is not closed (offset %d)" % i)
            out.append(("str", text[i + 1:j]))
            i = j + 1
        elif text.startswith("->", i):
            out.append(("op", "->"))
            i += 2
        elif c in "{}[];,=":
            out.append(("op", c))
            i += 1
        else:
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9.]+", text[i:])
            if not m:
                fail("unexpected character %r at offset %d" % (c, i))
            out.append(("id", m.group(0)))
            i += len(m.group(0))
    return out


def check_dot(text):
    toks = tokens(text)
    pos = [0]

    def peek(k=0):
        return toks[pos[0] + k] if pos[0] + k < len(toks) else ("eof", "")

    def take(kind=None, value=None):
        t = peek()
        if (kind and t[0] != kind) or (value and t[1] != value):
            fail("expected %s %s, got %r" % (kind or "", value or "", t))
        pos[0] += 1
        return t

    nodes, edges, clusters = set(), [], [0]

    def attrs():
        take("op", "[")
        while peek()[1] != "]":
            take("id")
            take("op", "=")
            if peek()[0] not in ("id", "str"):
                fail("attribute value expected, got %r" % (peek(),))
            pos[0] += 1
            if peek()[1] == ",":
                pos[0] += 1
        take("op", "]")

    def block():
        take("op", "{")
        while peek()[1] != "}":
            t = peek()
            if t == ("id", "subgraph"):
                pos[0] += 1
                name = take("id")[1]
                if name.startswith("cluster_"):
                    clusters[0] += 1
                block()
                continue
            if t[1] in ("node", "edge"):
                pos[0] += 1
                attrs()
            elif peek(1) == ("op", "="):
                take("id")
                take("op", "=")
                pos[0] += 1
            elif peek(1) == ("op", "->"):
                a = take("id")[1]
                take("op", "->")
                b = take("id")[1]
                edges.append((a, b))
                if peek()[1] == "[":
                    attrs()
            else:
                nodes.add(take("id")[1])
                if peek()[1] == "[":
                    attrs()
            take("op", ";")
        take("op", "}")

    take("id", "digraph")
    take("id")
    block()
    if peek()[0] != "eof":
        fail("text after the graph: %r" % (peek(),))
    for a, b in edges:
        for x in (a, b):
            if x not in nodes:
                fail("edge %s -> %s: %s is not declared" % (a, b, x))
    return len(nodes), len(edges), clusters[0]


LABEL = r'"[^"]*"'
MERMAID_NODE = re.compile(r'^\s*([A-Za-z][A-Za-z0-9]*)(\["|\(\["|\[\("|\[\[")([^"]*)("\]|"\]\)|"\)\]|"\]\])$')
MERMAID_EDGE = re.compile(r'^\s*([A-Za-z][A-Za-z0-9]*) (-->|-\.->|==>)(\|' + LABEL + r'\|)? ([A-Za-z][A-Za-z0-9]*)$')
MERMAID_SUB = re.compile(r'^\s*subgraph ([A-Za-z][A-Za-z0-9]*)\[' + LABEL + r'\]$')
MERMAID_CLASS = re.compile(r'^\s*(classDef [a-z]+ fill:#[0-9a-f]{6}|class ([A-Za-z][A-Za-z0-9]*) [a-z]+)$')
PAIRS = {'["': '"]', '(["': '"])', '[("': '")]', '[["': '"]]'}


def check_mermaid(text):
    lines = text.rstrip("\n").split("\n")
    if lines[0] != "flowchart TD":
        fail("first line %r" % lines[0])
    nodes, edges, depth, clusters = set(), [], 0, 0
    for line in lines[1:]:
        if m := MERMAID_NODE.match(line):
            if PAIRS[m.group(2)] != m.group(4):
                fail("mismatched shape brackets: %r" % line)
            nodes.add(m.group(1))
        elif m := MERMAID_EDGE.match(line):
            edges.append((m.group(1), m.group(4)))
        elif MERMAID_SUB.match(line):
            depth += 1
            clusters += 1
        elif line.strip() == "end":
            depth -= 1
            if depth < 0:
                fail("'end' without a subgraph")
        elif m := MERMAID_CLASS.match(line):
            if m.group(2) and m.group(2) not in nodes:
                fail("class of an undeclared id: %r" % line)
        else:
            fail("a line of no known form: %r" % line)
    if depth:
        fail("%d subgraph(s) not closed" % depth)
    for a, b in edges:
        for x in (a, b):
            if x not in nodes:
                fail("edge %s -> %s: %s is not declared" % (a, b, x))
    return len(nodes), len(edges), clusters


kind, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
n, e, c = (check_dot if kind == "dot" else check_mermaid)(text)
print("ok: %d nodes, %d edges, %d clusters" % (n, e, c))
