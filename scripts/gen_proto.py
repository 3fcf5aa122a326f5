#!/usr/bin/env python3
"""Writes proto/onnx.proto from the ONNX schema's field list.

The field list is ../shared/spec/onnx-proto-fields.md beside the repository
(messages, enums, field numbers, labels, options, reserved ranges). This script
only changes the layout (nesting, oneof groups) and adds our comments; every
number, name and label comes from the list unchanged.

Usage, from anywhere:  python3 scripts/gen_proto.py [--check] [FIELD_LIST.md]
--check writes nothing and exits 1 if proto/onnx.proto is not what the list gives.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if a != "--check"]
CHECK = "--check" in sys.argv[1:]
SPEC = ARGS[0] if ARGS else os.path.join(ROOT, "..", "shared", "spec", "onnx-proto-fields.md")
OUT = os.path.join(ROOT, "proto", "onnx.proto")

# One line per message or enum, in our words.
COMMENTS = {
    "Version": "IR versions of the format; a model states its own in ModelProto.ir_version.",
    "AttributeProto": "A named, typed constant argument of a node: exactly one payload is set,\n"
                      "or ref_attr_name points at an attribute of the enclosing function.",
    "AttributeProto.AttributeType": "Which payload field of an AttributeProto is meaningful.",
    "ValueInfoProto": "A name with an optional type: graph inputs, outputs and value_info.",
    "NodeProto": "One operator call. An empty string in input/output is an omitted optional slot.",
    "IntIntListEntryProto": "A key with a list of values (a map entry, kept as a list for order).",
    "NodeDeviceConfigurationProto": "How one node is placed on the devices of a configuration.",
    "ShardingSpecProto": "How one input or output of a node is split across devices.",
    "ShardedDimProto": "How one axis of a tensor is split.",
    "SimpleShardedDimProto": "One even split of an axis (its size known or symbolic).",
    "TrainingInfoProto": "Training steps: an initialization graph, an algorithm graph and the\n"
                         "bindings that write their results back into initializers.",
    "ModelProto": "The top-level message of an .onnx file.",
    "DeviceConfigurationProto": "A named set of devices that node configurations refer to.",
    "StringStringEntryProto": "A key/value string pair (metadata, external data locations, bindings).",
    "TensorAnnotation": "Quantization parameters attached to a tensor by name.",
    "GraphProto": "A scope: inputs, initializers, nodes, outputs. Nested graphs (If, Loop,\n"
                  "Scan bodies) may use names defined in any enclosing graph.",
    "TensorProto": "A constant tensor. Its data is in exactly one place: raw_data, one typed\n"
                   "repeated field, or an external file (data_location = EXTERNAL).",
    "TensorProto.DataType": "Element types; the values match TypeProto.Tensor.elem_type.",
    "TensorProto.Segment": "Marks a tensor as one chunk of a larger one (rarely used).",
    "TensorProto.DataLocation": "Where the data of a tensor lives.",
    "SparseTensorProto": "A sparse constant: values, their indices, and the dense shape.",
    "TensorShapeProto": "A shape of known rank; each dimension known, symbolic or unknown.",
    "TensorShapeProto.Dimension": "One dimension: a size, a symbol, or neither (unknown).",
    "TypeProto": "The type of a value: exactly one of the kinds below.",
    "TypeProto.Tensor": "A dense tensor; no shape means unknown rank.",
    "TypeProto.Sequence": "A sequence of values of one type.",
    "TypeProto.Map": "A map from a scalar key type to values of one type.",
    "TypeProto.Optional": "A value that may be absent.",
    "TypeProto.SparseTensor": "A sparse tensor.",
    "TypeProto.Opaque": "A type known only by name to some domain.",
    "OperatorSetIdProto": "An operator set a model or function uses (empty domain = ai.onnx).",
    "OperatorStatus": "Stability of an operator or function.",
    "FunctionProto": "A model-local function: (domain, name, overload) identifies it; nodes\n"
                     "with the same identity are its call sites.",
}

# Trailing comments on fields whose meaning is not obvious from the name.
FIELD_COMMENTS = {
    "AttributeProto.ref_attr_name": "only inside a function body",
    "AttributeProto.type": "says which payload is set",
    "NodeProto.domain": "empty = ai.onnx",
    "NodeProto.overload": "selects one of several functions of one name",
    "ModelProto.functions": "model-local functions (IR >= 8)",
    "TensorProto.data_type": "a TensorProto.DataType value",
    "TensorProto.int32_data": "also int8/16, uint8/16, bool, float16, bfloat16, float8 and 4/2-bit types",
    "TensorProto.raw_data": "little-endian, packed; sub-byte types two (or four) per byte",
    "TensorProto.external_data": "location, offset, length, checksum",
    "TensorProto.uint64_data": "also uint32",
    "TypeProto.Tensor.elem_type": "a TensorProto.DataType value",
    "TypeProto.SparseTensor.elem_type": "a TensorProto.DataType value",
    "FunctionProto.attribute": "attribute names without defaults",
    "FunctionProto.attribute_proto": "attributes with default values",
}


def parse(path):
    blocks = []
    cur = None
    with open(path) as f:
        for line in f.read().split("\n"):
            m = re.match(r"## (message|enum) (\S+)", line)
            if m:
                cur = {"kind": m.group(1), "name": m.group(2), "items": [], "children": []}
                blocks.append(cur)
            elif cur and line.startswith("- "):
                cur["items"].append(line[2:])
    top = []
    by_name = {b["name"]: b for b in blocks}
    for b in blocks:
        parent, _, short = b["name"].rpartition(".")
        b["short"] = short
        if parent:
            by_name[parent]["children"].append(b)
        else:
            top.append(b)
    return top


def comment(name, indent):
    text = COMMENTS.get(name)
    if not text:
        return []
    return [f"{indent}// {line}" for line in text.split("\n")]


def field_line(indent, text, qualified):
    note = FIELD_COMMENTS.get(qualified)
    return f"{indent}{text}" + (f"  // {note}" if note else "")


def emit(b, depth):
    p = "  " * depth
    out = comment(b["name"], p)
    if b["kind"] == "enum":
        out.append(f"{p}enum {b['short']} {{")
        for it in b["items"]:
            name, value = [x.strip() for x in it.split("=")]
            out.append(f"{p}  {name} = {value};")
        out.append(f"{p}}}")
        return out
    out.append(f"{p}message {b['short']} {{")
    for c in b["children"]:
        out += emit(c, depth + 1)
    oneofs = {}
    for it in b["items"]:
        if it.startswith("reserved"):
            out.append(f"{p}  {it};")
            continue
        m = re.match(r"(\d+): oneof (\S+) (\S+) (\S+)$", it)
        if m:
            num, group, typ, name = m.groups()
            oneofs.setdefault(group, []).append((typ, name, num))
            continue
        m = re.match(r"(\d+): (optional|repeated|required) (\S+) (\S+)(?: \[(.*)\])?$", it)
        assert m, f"cannot read field line: {it}"
        num, label, typ, name, opt = m.groups()
        o = f" [{opt}]" if opt else ""
        out.append(field_line(p + "  ", f"{label} {typ} {name} = {num}{o};",
                              f"{b['name']}.{name}"))
    for group, fields in oneofs.items():
        out.append(f"{p}  oneof {group} {{")
        for typ, name, num in fields:
            out.append(field_line(p + "    ", f"{typ} {name} = {num};", f"{b['name']}.{name}"))
        out.append(f"{p}  }}")
    out.append(f"{p}}}")
    return out


HEADER = """\
// onnxir's copy of the ONNX protobuf schema, IR version 14.
//
// Written from the field list of the current ONNX schema (messages, fields,
// numbers and enum values); wire-compatible with ONNX. It lives in its own
// proto package (onnxir.proto) and file path (onnxir/onnx.proto) so that a
// program can link onnxir together with libonnx or onnxruntime, which register
// `onnx/onnx.proto` in package `onnx`, without descriptor clashes.
//
// Generated by scripts/gen_proto.py; edit the script, not this file.
syntax = "proto2";

package onnxir.proto;

option optimize_for = SPEED;
"""


def main():
    body = []
    for b in parse(SPEC):
        body += emit(b, 0) + [""]
    text = HEADER + "\n" + "\n".join(body)
    if CHECK:
        with open(OUT) as f:
            if f.read() != text:
                sys.exit(f"{OUT} differs from what {SPEC} gives: run scripts/gen_proto.py")
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
