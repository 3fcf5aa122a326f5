"""The object model: Model, Graph, Node, Value, Tensor, and their mutation."""
import gc

import numpy as np
import pytest

import onnxir


def node(g, op):
    return next(n for n in g.nodes if n.op_type == op)


def test_model_fields(text_model):
    m = text_model
    assert m.ir_version == 8
    assert m.producer_name == "tests"
    assert m.opset_imports == {"": 17, "local": 1}
    assert m.opset_version("") == 17
    assert m.metadata == {"k": "v"}
    m.metadata = {"a": "b"}
    m.producer_name = None
    m.opset_imports = {"": 18, "local": 1}
    m.doc_string = "d"
    m.model_version = 3
    m.domain = "dom"
    m.producer_version = "1.0"
    m2 = onnxir.loads(onnxir.dumps(m))
    assert (m2.metadata, m2.producer_name, m2.opset_imports, m2.doc_string, m2.model_version,
            m2.domain, m2.producer_version) == ({"a": "b"}, None, {"": 18, "local": 1}, "d", 3,
                                                "dom", "1.0")
    assert "3 nodes" in repr(m)
    assert onnxir.Model().graph.num_nodes == 0


def test_functions(text_model):
    (f,) = text_model.functions
    assert f.function_name == "local.twice"
    assert [n.op_type for n in f.nodes] == ["Add"]
    assert [v.name for v in f.inputs] == ["a"]
    assert text_model.graph.function_name is None


def test_graph_views(text_model):
    g = text_model.graph
    assert len(g.nodes) == 3 and bool(g.nodes) and g.num_nodes == 3
    assert [n.op_type for n in g.nodes] == ["Relu", "Add", "If"]
    assert [v.name for v in g.inputs] == ["x", "c"]
    assert [v.name for v in g.outputs] == ["y", "z"]
    assert list(g.initializers) == ["w"]
    assert g.parent_node is None and g.parent_graph is None
    assert g.model.graph == g
    g.name = "renamed"
    g.doc_string = "doc"
    assert (g.name, g.doc_string) == ("renamed", "doc")
    assert "renamed" in g.path and "3 nodes" in repr(g)
    assert g.lookup("r").producer.op_type == "Relu"
    assert g.lookup("nope") is None
    assert g.fresh_name("r") != "r"


def test_subgraphs(text_model):
    g = text_model.graph
    if_node = node(g, "If")
    then_g, else_g = if_node.subgraphs
    assert then_g.parent_node == if_node and then_g.parent_graph == g
    assert isinstance(if_node.attributes["then_branch"], onnxir.Graph)
    neg = node(then_g, "Neg")
    assert neg.inputs[0] == g.lookup("r")            # an outer name
    assert then_g.lookup("r") == g.lookup("r")
    uses = list(g.lookup("r").uses)
    assert {(u.op_type, i) for u, i in uses} == {("Add", 0), ("Neg", 0)}


def test_node_fields_and_attributes(text_model):
    g = text_model.graph
    relu = node(g, "Relu")
    relu.name = "the_relu"
    assert relu.name == "the_relu" and relu.domain == "" and relu.graph == g
    assert "the_relu" in relu.path and "Relu" in repr(relu)
    relu.set_attribute("f", 1.5)
    relu.set_attribute("i", 3)
    relu.set_attribute("b", True)
    relu.set_attribute("s", "text")
    relu.set_attribute("ints", [1, 2])
    relu.set_attribute("floats", [1, 2.5])
    relu.set_attribute("strs", ["a", "b"])
    relu.set_attribute("t", np.arange(3, dtype=np.int64))
    a = relu.attributes
    assert (a["f"], a["i"], a["b"], a["s"], a["ints"], a["floats"], a["strs"]) == (
        1.5, 3, 1, "text", [1, 2], [1.0, 2.5], ["a", "b"])
    assert np.asarray(a["t"]).tolist() == [0, 1, 2]
    assert relu.get_attribute("missing", 7) == 7
    assert relu.remove_attribute("f") and not relu.remove_attribute("f")
    with pytest.raises(onnxir.Error, match='attribute "bad"'):
        relu.set_attribute("bad", object())
    with pytest.raises(onnxir.Error, match="empty list"):
        relu.set_attribute("bad", [])
    with pytest.raises(onnxir.Error, match="only ints"):
        relu.set_attribute("bad", [1, "a"])
    relu.op_type = "Sigmoid"
    relu.domain = ""
    assert relu.op_type == "Sigmoid"
    assert node(g, "Sigmoid") == relu and hash(node(g, "Sigmoid")) == hash(relu)


def test_operands(text_model):
    g = text_model.graph
    add = node(g, "Add")
    x, w = g.lookup("x"), g.lookup("w")
    add.set_input(1, x)
    assert add.inputs[1] == x and w.uses.__len__() == 0
    add.set_inputs([w, None, x])
    assert add.inputs == [w, None, x]
    add.remove_input(1)
    add.add_input(None)
    assert add.inputs == [w, x, None]
    with pytest.raises(onnxir.Error, match="out of range"):
        add.set_input(5, x)
    with pytest.raises(onnxir.Error, match="out of range"):
        add.remove_input(5)
    with pytest.raises(onnxir.Error, match="expected an onnxir.Value"):
        add.set_input(0, "x")


def test_scope_checks(text_model):
    g = text_model.graph
    then_g = node(g, "If").subgraphs[0]
    o = node(then_g, "Neg").outputs[0]
    with pytest.raises(onnxir.Error, match="not visible"):
        node(g, "Add").set_input(0, o)       # an inner value from the outer graph
    other = onnxir.loads(onnxir.dumps(text_model))
    with pytest.raises(onnxir.Error, match="another model"):
        node(g, "Add").set_input(0, other.graph.inputs[0])


def test_create_node_positions(text_model):
    g = text_model.graph
    relu, add = node(g, "Relu"), node(g, "Add")
    a = g.create_node("Neg", inputs=[g.lookup("x")], before=add, name="a")
    b = g.create_node("Abs", inputs=[a.outputs[0]], after=a)
    c = g.create_node("Split", inputs=[g.lookup("x")], outputs=["s0", "s1"],
                      attributes={"axis": 1})
    d = g.create_node("Custom", domain="my.domain", outputs=0)
    assert [n.op_type for n in g.nodes] == ["Relu", "Neg", "Abs", "Add", "If", "Split", "Custom"]
    assert a.name == "a" and [v.name for v in c.outputs] == ["s0", "s1"]
    assert d.domain == "my.domain" and d.outputs == ()
    assert a.outputs[0].producer == a and a.outputs[0].index == 0
    with pytest.raises(onnxir.Error, match="not both"):
        g.create_node("Neg", before=add, after=add)
    then_g = node(g, "If").subgraphs[0]
    with pytest.raises(onnxir.Error, match="another graph"):
        g.create_node("Neg", before=node(then_g, "Neg"))
    with pytest.raises(onnxir.Error, match="another graph"):
        g.create_node("Neg", after=node(then_g, "Neg"))
    n = len(g.nodes)
    with pytest.raises(onnxir.Error, match='attribute "x"'):
        g.create_node("Neg", inputs=[g.lookup("x")], attributes={"x": {}})
    assert len(g.nodes) == n                 # nothing half made
    with pytest.raises(onnxir.Error):
        g.create_node("Neg", outputs=["r"])  # a name clash
    assert len(g.nodes) == n
    relu.move_after(b)
    assert [n.op_type for n in g.nodes][:3] == ["Neg", "Abs", "Relu"]
    relu.move_before(a)
    assert [n.op_type for n in g.nodes][0] == "Relu"
    onnxir.verify(text_model)


def test_graph_io_mutation(text_model):
    g = text_model.graph
    v = g.add_input("extra", "float", [1, "N", None])
    assert v.is_graph_input and v.kind == "input" and v.shape == (1, "N", None)
    assert g.inputs[-1] == v
    g.remove_input(v)
    assert v.is_erased
    with pytest.raises(onnxir.Error, match="erased"):
        v.name
    g.add_input("e2", pos=0)
    g.remove_input(0)
    with pytest.raises(onnxir.Error):
        g.remove_input(g.lookup("x"))        # still used
    with pytest.raises(onnxir.Error, match="out of range"):
        g.remove_input(7)
    r = g.lookup("r")
    g.add_output(r)
    assert g.outputs[-1] == r and r.is_graph_output
    g.set_output(2, g.lookup("y"))
    g.remove_output(2)
    g.remove_output(g.lookup("z"))
    assert [o.name for o in g.outputs] == ["y"]
    with pytest.raises(onnxir.Error, match="not an output"):
        g.remove_output(r)
    with pytest.raises(onnxir.Error, match="out of range"):
        g.set_output(9, r)
    init = g.add_initializer("k", np.array([[1, 2]], dtype=np.int32))
    assert init.kind == "initializer" and init.shape == (1, 2) and init.elem_type == "int32"
    assert "k" in g.initializers
    g.remove_initializer("k")
    assert init.is_erased and "k" not in g.initializers
    with pytest.raises(onnxir.Error, match="still used"):
        g.remove_initializer(g.lookup("w"))
    with pytest.raises(onnxir.Error, match="no initializer"):
        g.remove_initializer("nope")
    with pytest.raises(onnxir.Error, match="not an initializer"):
        g.remove_initializer(r)
    onnxir.verify(text_model)


def test_value_types_and_rename(text_model):
    g = text_model.graph
    x = g.lookup("x")
    assert x.elem_type == "float" and x.shape == ("N", 4) and x.type.startswith("float")
    assert x.graph == g and node(node(g, "If").subgraphs[0], "Neg").outputs[0].graph != g
    x.shape = ["2*N", 4, None]
    assert x.shape == ("2*N", 4, None)
    x.elem_type = "float16"
    assert x.elem_type == "float16" and x.shape == ("2*N", 4, None)
    x.set_type(1, None)
    assert x.elem_type == "float" and x.shape is None
    with pytest.raises(onnxir.Error, match="unknown element type"):
        x.elem_type = "floaty"
    with pytest.raises(onnxir.Error, match="bad dim"):
        x.shape = ["2*"]
    with pytest.raises(onnxir.Error, match="negative"):
        x.shape = [-1]
    r = g.lookup("r")
    r.name = "relu_out"
    assert g.lookup("relu_out") == r and g.lookup("r") is None
    assert node(node(g, "If").subgraphs[0], "Neg").inputs[0].name == "relu_out"
    with pytest.raises(onnxir.Error):
        r.rename("y")                        # taken
    assert r.producer.op_type == "Relu" and x.producer is None and x.index is None
    assert "relu_out" in repr(r)


def test_replace_all_uses(text_model):
    g = text_model.graph
    relu = node(g, "Relu")
    neg = g.create_node("Neg", inputs=[g.lookup("x")], before=relu)
    relu.outputs[0].replace_all_uses_with(neg.outputs[0])
    assert len(relu.outputs[0].uses) == 0 and len(neg.outputs[0].uses) == 2
    relu.erase()
    onnxir.verify(text_model)
    with pytest.raises(onnxir.Error, match="None is not a value"):
        neg.outputs[0].replace_all_uses_with(None)
    # An inner value cannot replace one used outside its graph.
    then_g = node(g, "If").subgraphs[0]
    inner = node(then_g, "Neg").outputs[0]
    before = [(n.op_type, i) for n, i in neg.outputs[0].uses]
    with pytest.raises(onnxir.Error, match="not visible from"):
        neg.outputs[0].replace_all_uses_with(inner)
    assert [(n.op_type, i) for n, i in neg.outputs[0].uses] == before


def test_tensor_views(text_model):
    g = text_model.graph
    w = g.initializers["w"]
    t = w.const_value
    assert t.elem_type == "float" and t.shape == (4,) and t.nbytes == 16 and not t.is_external
    a = np.asarray(t)
    assert a.tolist() == [1, 2, 3, 4] and not a.flags.writeable
    assert t.tolist() == [1, 2, 3, 4] and t.numpy().tolist() == [1, 2, 3, 4]
    assert np.asarray(t, dtype=np.int64).dtype == np.int64
    assert len(t.raw_bytes()) == 16 and "float[4]" in repr(t)
    # Replacing the data does not move the old view.
    w.const_value = np.array([5, 6, 7, 8], dtype=np.float32)
    assert a.tolist() == [1, 2, 3, 4] and np.asarray(w.const_value).tolist() == [5, 6, 7, 8]
    assert g.lookup("x").const_value is None
    with pytest.raises(onnxir.Error, match="not an initializer"):
        g.lookup("x").const_value = np.zeros(4)


def test_tensor_zero_copy_raw():
    big = np.arange(1 << 16, dtype=np.float32)
    m = onnxir.Model()
    m.graph.add_initializer("big", big)
    m2 = onnxir.loads(onnxir.dumps(m))          # raw_data, in the bytes' buffer
    t = m2.graph.initializers["big"].const_value
    a, b = np.asarray(t), np.asarray(t)
    assert np.shares_memory(a, b)               # one buffer, no copy per view
    assert (a == big).all()


INT4 = b'''<ir_version: 10, opset_import: ["" : 21]>
g () => (int4[4] q) <int4[4] q = {33, 67}> {}'''


def test_tensor_kinds():
    for arr in (np.array([1.5, 2], np.float16), np.array([[True, False]]),
                np.array([1, 2], np.uint64), np.array([1 + 2j], np.complex64),
                np.array(3, np.int8), np.zeros((0, 3), np.float64)):
        t = onnxir.Tensor(arr, name="t")
        assert t.name == "t"
        back = np.asarray(t)
        assert back.dtype == arr.dtype and back.shape == arr.shape and (back == arr).all()
    s = onnxir.Tensor(np.array(["ab", "c"]))
    assert s.elem_type == "string" and s.numpy().tolist() == [b"ab", b"c"]
    assert s.tolist() == [b"ab", b"c"] and s.nbytes is None
    with pytest.raises(onnxir.Error, match="has no NumPy buffer format"):
        np.asarray(onnxir.Tensor(np.array([1, 2], np.int8)).__class__(
            onnxir.loads(INT4).graph.initializers["q"].const_value))
    assert onnxir.loads(INT4).graph.initializers["q"].const_value.tolist() == [1, 2, 3, 4]
    import ctypes
    with pytest.raises(TypeError, match="not writable"):
        (ctypes.c_double * 2).from_buffer(onnxir.Tensor(np.zeros(2)))
    with pytest.raises(TypeError):
        memoryview(onnxir.Tensor(np.zeros(2)))[0] = 1.0
    with pytest.raises(onnxir.Error, match="no ONNX element type"):
        onnxir.Tensor(np.array([np.datetime64("2020-01-01")]))


def test_attribute_reading_kinds():
    m = onnxir.loads(b"""<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Foo <s = "a", ss = ["a", "b"], t = float[2] {1, 2}, ts: tensors = [float[1] {3}],
           ty = float[N], tys: type_protos = [float, int64]> (x)
}""", verify="none")   # (no op Foo: only its attributes are read)
    a = next(iter(m.graph.nodes)).attributes
    assert a["s"] == "a" and a["ss"] == ["a", "b"]
    assert np.asarray(a["t"]).tolist() == [1, 2]
    assert [np.asarray(t).tolist() for t in a["ts"]] == [[3]]
    assert "float" in a["ty"] and len(a["tys"]) == 2
