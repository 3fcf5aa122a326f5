"""Helpers shared by the Python test scripts: protobuf wire encoding by hand
(for models that python3-onnx cannot build: too deep, too large, malformed)
and small python3-onnx model builders.

Scripts beside other test folders import it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pylib"))
"""


def varint(n):
    """Base-128 varint encoding of a non-negative integer."""
    b = bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        b.append(c | (0x80 if n else 0))
        if not n:
            return bytes(b)


def field(num, payload):
    """A length-delimited field (wire type 2)."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vfield(num, v):
    """A varint field (wire type 0)."""
    return varint(num << 3) + varint(v)


def vi(name, dims=(2,)):
    """A float tensor value_info."""
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def model(nodes, inputs, outputs, inits=(), functions=(), opset=17):
    """An IR 8 model importing the default domain at `opset` and "local" 1."""
    from onnx import helper
    g = helper.make_graph(nodes, "main", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid("local", 1)],
                          functions=list(functions))
    m.ir_version = 8
    return m


def save(m, out):
    """Writes a ModelProto without python3-onnx's checks (hostile models too)."""
    with open(out, "wb") as f:
        f.write(m.SerializeToString())
