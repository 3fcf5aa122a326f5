"""Issue 38 items 6 and 7: lists that are live or refuse (Note [Live views] in
onnxir/_views.py), Model.copy, and outputs and inputs that keep their types
(Note [Output types] in src/Objects.cpp)."""
import copy
import subprocess
import sys

import numpy as np
import pytest

import onnxir


def node(g, op):
    return next(n for n in g.nodes if n.op_type == op)


def names(vs):
    return [v.name if v is not None else None for v in vs]


# --- Graph.inputs ------------------------------------------------------------

def test_graph_inputs_delete_is_live(text_model):
    g = text_model.graph
    extra = g.add_input("extra", "float", [3])
    assert names(g.inputs) == ["x", "c", "extra"]
    assert extra in g.inputs and g.inputs[-1] == extra and len(g.inputs) == 3
    del g.inputs[-1]
    assert names(g.inputs) == ["x", "c"] and extra.is_erased
    g.add_input("e2", "float", [3])
    g.inputs.remove(g.lookup("e2"))
    assert names(g.inputs) == ["x", "c"]
    g.add_input("e3", "int64", [])
    assert g.inputs.pop().is_erased and names(g.inputs) == ["x", "c"]


def test_graph_inputs_refuse_what_they_cannot_do(text_model):
    g = text_model.graph
    r = g.lookup("r")
    for mutate in (lambda: g.inputs.append(r), lambda: g.inputs.insert(0, r),
                   lambda: g.inputs.__setitem__(0, r), lambda: g.inputs.reverse()):
        with pytest.raises(TypeError, match=r"Graph.add_input\(name, elem_type, shape"):
            mutate()
    with pytest.raises(AttributeError, match="add_input"):
        g.inputs = []
    with pytest.raises(onnxir.Error, match="still used"):
        del g.inputs[0]
    assert names(g.inputs) == ["x", "c"]


# --- Graph.outputs -------------------------------------------------------------

def test_graph_outputs_are_live(text_model):
    g = text_model.graph
    y, z, r = g.lookup("y"), g.lookup("z"), g.lookup("r")
    g.outputs.append(r)
    assert names(g.outputs) == ["y", "z", "r"] and r.is_graph_output
    g.outputs[2] = y
    assert names(g.outputs) == ["y", "z", "y"]
    del g.outputs[2]
    g.outputs.insert(0, r)
    assert names(g.outputs) == ["r", "y", "z"]
    g.outputs.remove(r)
    assert names(g.outputs) == ["y", "z"] and not r.is_graph_output
    g.outputs[:] = [z]
    assert names(g.outputs) == ["z"]
    g.outputs = [y, z]
    assert names(g.outputs) == ["y", "z"] and g.outputs == [y, z]
    g.outputs.reverse()
    assert names(g.outputs) == ["z", "y"]
    with pytest.raises(IndexError):
        g.outputs[5]
    with pytest.raises(onnxir.Error, match="None is not a value"):
        g.outputs = [y, None]
    assert names(g.outputs) == ["z", "y"]


def test_moved_outputs_keep_their_declared_types(text_model):
    g = text_model.graph
    g.outputs.reverse()
    m2 = onnxir.loads(onnxir.dumps(text_model))
    assert [(v.name, v.type) for v in m2.graph.outputs] == [("z", "float[N,4]"),
                                                           ("y", "float[N,4]")]


# --- Graph.initializers ------------------------------------------------------------

def test_initializers_are_live(text_model):
    g = text_model.graph
    assert list(g.initializers) == ["w"] and "w" in g.initializers and len(g.initializers) == 1
    g.initializers["b"] = np.zeros([2], dtype=np.float32)
    assert list(g.initializers) == ["w", "b"]
    assert g.initializers["b"].const_value.numpy().tolist() == [0, 0]
    g.initializers["w"] = np.array([5, 6, 7, 8], dtype=np.float32)   # replaces the data
    assert g.lookup("w").const_value.numpy().tolist() == [5, 6, 7, 8]
    del g.initializers["b"]
    assert list(g.initializers) == ["w"]
    with pytest.raises(KeyError):
        del g.initializers["nope"]
    with pytest.raises(onnxir.Error, match="still used"):
        del g.initializers["w"]
    with pytest.raises(AttributeError, match=r"graph.initializers\[name\] = array"):
        g.initializers = {}
    assert g.initializers == {"w": g.lookup("w")}


# --- Node.inputs, Node.attributes, Node.outputs ----------------------------------------

def test_node_inputs_are_live(text_model):
    g = text_model.graph
    add = node(g, "Add")
    x, w, r = g.lookup("x"), g.lookup("w"), g.lookup("r")
    assert add.inputs == [r, w]
    add.inputs[0] = x
    assert names(add.inputs) == ["x", "w"] and len(r.uses) == 1
    add.inputs.append(None)
    add.inputs.append(w)
    assert names(add.inputs) == ["x", "w", None, "w"]
    del add.inputs[2:]
    add.inputs.insert(0, r)
    assert names(add.inputs) == ["r", "x", "w"]
    add.inputs.remove(x)
    assert names(add.inputs) == ["r", "w"]
    add.inputs = [x, x]
    assert names(add.inputs) == ["x", "x"]
    assert names(onnxir.loads(onnxir.dumps(text_model)).graph.nodes[1].inputs) == ["x", "x"]


def test_node_attributes_are_live(text_model):
    g = text_model.graph
    relu = node(g, "Relu")
    relu.attributes["alpha"] = 0.5
    relu.attributes["perm"] = [1, 0]
    assert dict(relu.attributes) == {"alpha": 0.5, "perm": [1, 0]}
    assert relu.get_attribute("alpha") == 0.5 and "perm" in relu.attributes
    del relu.attributes["perm"]
    assert list(relu.attributes) == ["alpha"]
    with pytest.raises(KeyError):
        del relu.attributes["perm"]
    with pytest.raises(KeyError):
        relu.attributes["nope"]
    relu.attributes = {"a": 1, "b": "s"}
    assert relu.attributes == {"a": 1, "b": "s"}
    with pytest.raises(onnxir.Error):
        relu.attributes = {"c": 1, "d": object()}   # checked first: nothing changes
    assert relu.attributes == {"a": 1, "b": "s"}
    relu.attributes.clear()
    assert len(relu.attributes) == 0


def test_fixed_lists_are_tuples(text_model):
    g = text_model.graph
    assert isinstance(node(g, "Relu").outputs, tuple)
    assert isinstance(node(g, "If").subgraphs, tuple)
    assert isinstance(text_model.functions, tuple)


def test_model_dicts_write_back(text_model):
    m = text_model
    m.opset_imports[""] = 18
    del m.opset_imports["local"]
    assert m.opset_imports == {"": 18}
    m.metadata["k2"] = "v2"
    assert m.metadata == {"k": "v", "k2": "v2"}
    m2 = onnxir.loads(onnxir.dumps(m))
    assert m2.opset_imports == {"": 18} and m2.metadata == {"k": "v", "k2": "v2"}


# --- Graph.nodes ---------------------------------------------------------------------

def test_nodes_len_and_index(text_model):
    g = text_model.graph
    ops = [n.op_type for n in g.nodes]
    assert len(g.nodes) == 3
    for i in range(-3, 3):
        assert g.nodes[i].op_type == ops[i]
    for i in (3, -4):
        with pytest.raises(IndexError):
            g.nodes[i]


# --- Model.copy ------------------------------------------------------------------------

def test_model_copy_is_deep(text_model):
    m = text_model
    g = m.graph
    r = g.lookup("r")
    r.set_type("float", ["N", 4])   # a type no value_info record holds
    for c in (m.copy(), copy.copy(m), copy.deepcopy(m), copy.deepcopy([m])[0]):
        assert isinstance(c, onnxir.Model)
        assert onnxir.dumps(c) == onnxir.dumps(m)
        assert c.graph.lookup("r").type == "float[N,4]"
        assert c.graph != g
        node(c.graph, "Relu").name = "changed"
        c.graph.outputs.append(c.graph.lookup("r"))
        assert node(g, "Relu").name != "changed" and len(g.outputs) == 2


# --- Item 7: types of added outputs and inputs -------------------------------------------

def check_with_onnx(path):
    """python onnx's checker (python3-onnx in /usr/bin/python3) on a saved model."""
    try:
        import onnx  # noqa: F401
        py = sys.executable
    except ImportError:
        py = "/usr/bin/python3"
    r = subprocess.run([py, "-c", "import onnx, sys; onnx.checker.check_model("
                        "onnx.load(sys.argv[1]), full_check=True)", str(path)],
                       capture_output=True, text=True)
    if "No module named 'onnx'" in r.stderr:
        pytest.skip("python onnx not installed")
    return r.returncode, r.stderr


def built_model():
    m = onnxir.Model()
    m.ir_version = 8
    m.opset_imports = {"": 17}
    g = m.graph
    g.name = "g"
    x = g.add_input("x", "float", [1, "N", 3])
    relu = g.create_node("Relu", [x])
    return m, g, x, relu


def test_add_output_writes_the_values_type(tmp_path):
    m, g, x, relu = built_model()
    relu.outputs[0].set_type("float", [1, "N", 3])
    g.add_output(relu.outputs[0])
    onnxir.save(m, tmp_path / "a.onnx")
    assert check_with_onnx(tmp_path / "a.onnx") == (0, "")
    assert onnxir.load(tmp_path / "a.onnx").graph.outputs[0].type == "float[1,N,3]"


def test_add_output_infers_an_unknown_type(tmp_path):
    m, g, x, relu = built_model()
    neg = g.create_node("Neg", [relu.outputs[0]])
    g.add_output(neg.outputs[0])
    g.outputs.append(relu.outputs[0])           # through the view as well
    onnxir.save(m, tmp_path / "b.onnx")
    assert check_with_onnx(tmp_path / "b.onnx") == (0, "")
    assert [v.type for v in onnxir.load(tmp_path / "b.onnx").graph.outputs] == \
        ["float[1,N,3]", "float[1,N,3]"]


def test_add_output_refuses_a_type_it_cannot_know():
    m, g, x, relu = built_model()
    custom = g.create_node("Mystery", [x], domain="my.ops")
    m.opset_imports = {"": 17, "my.ops": 1}
    with pytest.raises(onnxir.Error, match=r"type of \"\w+\" is unknown.*set_type"):
        g.add_output(custom.outputs[0])
    with pytest.raises(onnxir.Error, match="set_type"):
        g.outputs = [custom.outputs[0]]
    assert len(g.outputs) == 0
    custom.outputs[0].set_type("float", [2])
    g.add_output(custom.outputs[0])
    assert len(g.outputs) == 1


def test_set_output_writes_the_new_values_type(text_model, tmp_path):
    g = text_model.graph
    cast = g.create_node("Cast", [g.lookup("x")], {"to": 7})   # int64
    g.set_output(0, cast.outputs[0])
    m2 = onnxir.loads(onnxir.dumps(text_model))
    assert m2.graph.outputs[0].type == "int64[N,4]"


@pytest.mark.parametrize("args, want", [
    (("float", [1, "N", 3]), "float[1,N,3]"),
    (("float[1,N,3]",), "float[1,N,3]"),
    (("int64[]",), "int64[]"),
    ((np.float16, [2]), "float16[2]"),
    ((np.dtype("int32"), []), "int32"),
    (("bool[?,M+1]",), "bool[?,M+1]"),
])
def test_add_input_takes_a_type(args, want):
    g = onnxir.Model().graph
    v = g.add_input("x", *args)
    assert v.type == want
    if "[" in want:                       # a Value's type as it prints
        assert g.add_input("y", v.type).type == want


def test_add_input_bad_types():
    g = onnxir.Model().graph
    with pytest.raises(onnxir.Error, match="unknown element type 'flaot'"):
        g.add_input("x", "flaot[2]")
    with pytest.raises(onnxir.Error, match="carries its shape"):
        g.add_input("x", "float[2]", [2])
    with pytest.raises(TypeError, match="elem_type"):
        g.add_input("x", object())
    assert len(g.inputs) == 0            # a failure adds no input
