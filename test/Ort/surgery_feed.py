#!/usr/bin/env python3
"""surgery_feed.py DIR OUT NAMES_IN NAMES_OUT: builds an ONNX test data set for
an extracted model. DIR holds the input_*.pb and output_*.pb that
ort_compare.js saved for the original model with the cut values added as
outputs; OUT gets input_<i>.pb for each of NAMES_IN (comma-separated) and
output_<i>.pb for each of NAMES_OUT, taken from DIR by tensor name."""
import glob
import os
import sys


def varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def tensor_name(b):
    """TensorProto.name (field 8), read off the wire: no onnx module needed."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(b, i)
            if field == 8:
                return b[i:i + n].decode()
            i += n
        else:
            break
    return ""

src, out, names_in, names_out = sys.argv[1:5]
tensors = {}
for f in sorted(glob.glob(os.path.join(src, "*.pb"))):
    with open(f, "rb") as fh:
        b = fh.read()
    tensors[tensor_name(b)] = b
os.makedirs(out, exist_ok=True)
for kind, names in (("input", names_in), ("output", names_out)):
    for i, n in enumerate(x for x in names.split(",") if x):
        if n not in tensors:
            sys.exit("surgery_feed: no tensor named %r in %s (have: %s)" % (n, src, ", ".join(sorted(tensors))))
        with open(os.path.join(out, "%s_%d.pb" % (kind, i)), "wb") as fh:
            fh.write(tensors[n])
