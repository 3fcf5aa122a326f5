"""Tensor data in and out: every NumPy array entering the module is stored in
ONNX's little-endian raw layout whatever its byte order and memory layout, and
Tensor.tolist() gives every element type as the matching Python number."""
import numpy as np
import pytest

import onnxir

# Every numeric NumPy dtype that has an ONNX element type, with values whose
# bytes differ when swapped (and the extremes of the integer ranges).
VALUES = {
    "float16": [1.0, -2.5, 65504.0, 0.000061035156],
    "float32": [1.0, 2.0, -3.25e-3, 3.0e38],
    "float64": [1.0, -2.0, 1e-300, 1.7976931348623157e308],
    "int8": [1, -2, 127, -128],
    "int16": [1, -2, 32767, -32768],
    "int32": [1, -2, 2**31 - 1, -2**31],
    "int64": [1, -2, 2**63 - 1, -2**63],
    "uint8": [1, 2, 0, 255],
    "uint16": [1, 2, 0, 2**16 - 1],
    "uint32": [1, 2, 0, 2**32 - 1],
    "uint64": [1, 2, 2**63, 2**64 - 1],
    "bool": [True, False, False, True],
    "complex64": [1 + 2j, -3.5j, 4.0, 1e30 - 1e-30j],
    "complex128": [1 + 2j, -3.5j, 4.0, 1e300 - 1e-300j],
}
ONNX_NAMES = {"float32": "float", "float64": "double", "bool": "bool"}


def arrays():
    """(id, array, expected native array) for every dtype in every byte order
    NumPy can spell for it: '<', '>', '=' and, for one-byte types, '|'."""
    out = []
    for name, vals in VALUES.items():
        native = np.array(vals, dtype=name)
        orders = ("<", ">", "=") if native.dtype.itemsize > 1 else ("|", "<", ">", "=")
        for bo in orders:
            arr = native.astype(native.dtype.newbyteorder(bo))
            out.append(("%s%s" % (bo, name), arr, native))
    return out


ARRAYS = arrays()
IDS = [i for i, _, _ in ARRAYS]


def model_with(add):
    m = onnxir.Model()
    m.opset_imports = {"": 17}
    m.ir_version = 8
    add(m.graph)
    return m


def check_tensor(t, native):
    back = np.asarray(t)
    assert back.dtype == native.dtype and back.dtype.isnative
    assert back.shape == native.shape
    np.testing.assert_array_equal(back, native)
    assert t.raw_bytes() == native.astype(native.dtype.newbyteorder("<")).tobytes()
    assert t.tolist() == native.ravel().tolist()


def check_saved(m, tmp_path, native, read_onnx):
    """Saved and loaded back (by onnxir, and by python onnx when it is there)."""
    p = tmp_path / "m.onnx"
    onnxir.save(m, p)
    m2 = onnxir.load(p)
    check_tensor(m2.graph.initializers["w"].const_value, native)
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    got = numpy_helper.to_array(read_onnx(onnx.load(str(p))))
    np.testing.assert_array_equal(got, native)
    assert got.dtype == native.dtype


@pytest.mark.parametrize("arr, native", [(a, n) for _, a, n in ARRAYS], ids=IDS)
def test_every_byte_order_enters_as_its_values(tmp_path, arr, native):
    # onnxir.Tensor(arr)
    check_tensor(onnxir.Tensor(arr, name="t"), native)
    # Graph.add_initializer
    m = model_with(lambda g: g.add_output(g.add_initializer("w", arr)))
    check_tensor(m.graph.initializers["w"].const_value, native)
    check_saved(m, tmp_path, native, lambda p: p.graph.initializer[0])
    # Value.const_value = arr
    m = model_with(lambda g: g.add_output(g.add_initializer("w", np.zeros(1, np.int8))))
    m.graph.initializers["w"].const_value = arr
    check_tensor(m.graph.initializers["w"].const_value, native)
    check_saved(m, tmp_path, native, lambda p: p.graph.initializer[0])


@pytest.mark.parametrize("arr, native", [(a, n) for _, a, n in ARRAYS], ids=IDS)
def test_every_byte_order_enters_attributes_as_its_values(tmp_path, arr, native):
    # A tensor attribute: create_node(attributes=) and Node.set_attribute.
    def add(g):
        g.add_output(g.add_initializer("w", arr))
        g.create_node("Constant", attributes={"value": arr}, outputs=["c"])
        g.add_output(g.lookup("c"))
        n = g.create_node("Constant", attributes={"value": np.zeros(1, np.int8)}, outputs=["d"])
        n.set_attribute("value", arr)
        g.add_output(g.lookup("d"))
    m = model_with(add)
    for n in m.graph.nodes:
        check_tensor(n.attributes["value"], native)
    check_saved(m, tmp_path, native, lambda p: p.graph.node[0].attribute[0].t)
    check_saved(m, tmp_path, native, lambda p: p.graph.node[1].attribute[0].t)


def test_non_contiguous_arrays_of_either_byte_order(tmp_path):
    base = np.arange(24, dtype=np.float64).reshape(4, 6) * 1.5 - 7
    for bo in ("<", ">"):
        a = base.astype(base.dtype.newbyteorder(bo))
        for view in (a[::2, 1::3], a.T, np.asfortranarray(a), a[:, ::-1], a[1]):
            assert not view.flags.c_contiguous or view.ndim == 1
            want = np.ascontiguousarray(view).astype(np.float64)
            check_tensor(onnxir.Tensor(view), want)
            m = model_with(lambda g: g.add_output(g.add_initializer("w", view)))
            check_saved(m, tmp_path, want, lambda p: p.graph.initializer[0])
    # Unaligned big-endian data (a view into a byte buffer at an odd offset).
    raw = np.zeros(8 * 3 + 1, np.uint8)
    odd = np.frombuffer(raw.data, dtype=">i8", count=3, offset=1)
    raw[1:] = np.array([1, -2, 2**40], ">i8").view(np.uint8)
    check_tensor(onnxir.Tensor(odd), np.array([1, -2, 2**40], np.int64))


def test_scalars_and_lists_take_the_same_path():
    check_tensor(onnxir.Tensor(np.array(3.5, ">f8")), np.array(3.5))
    check_tensor(onnxir.Tensor([1, 2]), np.array([1, 2]))
    # A buffer object whose format is big-endian (not a NumPy array).
    mv = memoryview(np.array([1.0, 2.0], ">f4"))
    check_tensor(onnxir.Tensor(mv), np.array([1.0, 2.0], np.float32))


def test_object_arrays_hold_only_strings():
    s = onnxir.Tensor(np.array(["ab", b"c"], dtype=object))
    assert s.elem_type == "string" and s.tolist() == [b"ab", b"c"]
    with pytest.raises(onnxir.Error, match=r'"w": element 1 of the object array is of type int'):
        onnxir.Model().graph.add_initializer("w", np.array(["a", 1], dtype=object))
    with pytest.raises(onnxir.Error, match=r"tensor: element 0 of the object array is of type NoneType"):
        onnxir.Tensor(np.array([None]))


#===--- tolist ----------------------------------------------------------------===#

@pytest.mark.parametrize("name", VALUES)
def test_tolist_matches_numpy_for_every_numpy_type(name):
    a = np.array(VALUES[name], dtype=name).reshape(2, 2)
    got = onnxir.Tensor(a).tolist()
    want = a.ravel().tolist()
    assert got == want
    assert [type(x) for x in got] == [type(x) for x in want]


def test_tolist_full_uint64_range():
    t = onnxir.Tensor(np.array([0, 2**63 - 1, 2**63, 2**64 - 1], np.uint64))
    assert t.tolist() == [0, 2**63 - 1, 2**63, 2**64 - 1]


def test_tolist_complex_and_bool_types():
    assert onnxir.Tensor(np.array([1 + 2j, -0.5j], np.complex64)).tolist() == [1 + 2j, -0.5j]
    c = onnxir.Tensor(np.array([1e300 + 1e-300j], np.complex128)).tolist()
    assert c == [1e300 + 1e-300j] and type(c[0]) is complex
    b = onnxir.Tensor(np.array([True, False])).tolist()
    assert b == [True, False] and all(type(x) is bool for x in b)


# Element types NumPy lacks, from the text syntax (their stored bits as integers):
# bfloat16 1.5, -2, inf; float8e4m3fn 0.5, -448; uint4 1, 15, 7; int4 -8, 7;
# complex from (real, imaginary) pairs; float16 bits in int32_data; strings.
OTHERS = b'''<ir_version: 10, opset_import: ["" : 21]>
g () => (b, f, u, i, c, d, h, s, e) <bfloat16[3] b = {16320, 49152, 32640},
  float8e4m3fn[2] f = {48, 254}, uint4[3] u = {241, 7}, int4[2] i = {120},
  complex64[2] c = {1, 2, 3, -4}, complex128[1] d = {5, -6}, float16[2] h = {15872, 31744},
  string[2] s = {"ab", "c d"}, bool[3] e = {1, 0, 1}> {}'''


def test_tolist_every_other_element_type():
    inits = onnxir.loads(OTHERS).graph.initializers
    want = {
        "b": [1.5, -2.0, float("inf")],
        "f": [0.5, -448.0],
        "u": [1, 15, 7],
        "i": [-8, 7],
        "c": [1 + 2j, 3 - 4j],
        "d": [5 - 6j],
        "h": [1.5, float("inf")],
        "s": [b"ab", b"c d"],
        "e": [True, False, True],
    }
    types = {"b": float, "f": float, "u": int, "i": int, "c": complex, "d": complex,
             "h": float, "s": bytes, "e": bool}
    for name, values in want.items():
        got = inits[name].const_value.tolist()
        assert got == values, name
        assert all(type(x) is types[name] for x in got), name
