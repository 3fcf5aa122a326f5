"""Lifetime misuse raises onnxir.Error; it never crashes the interpreter."""
import gc
import threading

import numpy as np
import pytest

import onnxir


def first(g, op):
    return next(n for n in g.nodes if n.op_type == op)


def test_erased_node_raises(text_model):
    g = text_model.graph
    relu = first(g, "Relu")
    r = relu.outputs[0]
    with pytest.raises(onnxir.Error, match="still used"):
        relu.erase()
    r.replace_all_uses_with(g.lookup("x"))
    relu.erase()
    assert relu.is_erased and r.is_erased
    for touch in (lambda: relu.op_type, lambda: relu.inputs, lambda: relu.erase(),
                  lambda: relu.attributes, lambda: r.name, lambda: list(r.uses),
                  lambda: r.shape, lambda: g.create_node("Neg", before=relu)):
        with pytest.raises(onnxir.Error, match="erased"):
            touch()
    assert "erased" in repr(relu) and "erased" in repr(r)
    assert relu != first(g, "Add")


def test_new_object_at_same_address_is_not_the_old_handle(text_model):
    g = text_model.graph
    x = g.lookup("x")
    handles = []
    for _ in range(50):
        n = g.create_node("Neg", inputs=[x])
        handles.append(n)
        n.erase()
    fresh = [g.create_node("Abs", inputs=[x]) for _ in range(50)]
    assert all(h.is_erased for h in handles)
    assert all(f.op_type == "Abs" for f in fresh)


def test_subgraph_of_erased_node(text_model):
    g = text_model.graph
    if_node = first(g, "If")
    then_g = if_node.subgraphs[0]
    inner = first(then_g, "Neg")
    g.remove_output(g.lookup("z"))
    if_node.erase()
    for touch in (lambda: then_g.nodes, lambda: inner.op_type, lambda: then_g.parent_node):
        with pytest.raises(onnxir.Error, match="erased"):
            touch()
    assert "erased" in repr(then_g)


def test_pass_erases_nodes_under_handles(text_model):
    g = text_model.graph
    dead = g.create_node("Neg", inputs=[g.lookup("x")])
    out = dead.outputs[0]
    onnxir.run_passes(text_model, "dce")
    assert dead.is_erased and out.is_erased
    with pytest.raises(onnxir.Error, match="erased"):
        dead.inputs


def test_model_dropped_while_handles_live():
    m = onnxir.loads(b"""<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> { y = Add (x, w) }""")
    g = m.graph
    n = next(iter(g.nodes))
    v = g.initializers["w"]
    t = v.const_value
    arr = np.asarray(t)
    del m
    gc.collect()
    assert n.op_type == "Add" and g.outputs[0].name == "y" and n.graph.model.graph == g
    del g, n, v
    gc.collect()
    assert np.asarray(t).tolist() == [1, 2]
    del t
    gc.collect()
    assert arr.tolist() == [1, 2]             # the view keeps its buffer


def test_view_outlives_initializer():
    m = onnxir.Model()
    v = m.graph.add_initializer("w", np.arange(4, dtype=np.int64))
    t = v.const_value
    arr = np.asarray(t)
    m.graph.remove_initializer(v)
    with pytest.raises(onnxir.Error, match="erased"):
        np.asarray(t)
    with pytest.raises(onnxir.Error, match="erased"):
        memoryview(t)
    assert arr.tolist() == [0, 1, 2, 3]


def test_iteration_while_mutating(text_model):
    g = text_model.graph
    it = iter(g.nodes)
    relu = next(it)
    add = first(g, "Add")
    # The next node (Add) goes away under the iterator.
    g.remove_output(g.lookup("y"))
    g.remove_output(g.lookup("z"))
    ifn = first(g, "If")
    ifn.erase()
    add.erase()
    with pytest.raises(onnxir.Error, match="changed during iteration"):
        next(it)
    # Erasing the node just returned is fine.
    from conftest import TEXT
    g2 = onnxir.loads(TEXT.encode()).graph
    for n in g2.nodes:
        if n.op_type == "Relu":
            n.outputs[0].replace_all_uses_with(g2.lookup("x"))
            n.erase()
    assert [n.op_type for n in g2.nodes] == ["Add", "If"]
    assert relu.op_type == "Relu"


def test_uses_iteration_while_mutating(text_model):
    g = text_model.graph
    r = g.lookup("r")
    it = iter(r.uses)
    node, i = next(it)
    nxt = list(r.uses)[1][0]
    nxt.set_input(0, g.lookup("x"))
    with pytest.raises(onnxir.Error, match="changed during iteration"):
        next(it)


def test_busy_model_from_another_thread():
    # A pass runs with the GIL released; this thread may then run, and any
    # access to the busy model is refused (or waits until the pass is done).
    text = ["<ir_version: 8, opset_import: [\"\" : 17]>", "g (float[1] x0) => (float[1] y) {"]
    for i in range(20000):
        text.append(f"  x{i + 1} = Neg (x{i})")
    text.append("  y = Identity (x20000)\n}")
    m = onnxir.loads("\n".join(text).encode())
    g = m.graph
    errors = []
    t = threading.Thread(target=lambda: onnxir.run_passes(m, "topo,dce,topo,dce,topo"))
    t.start()
    while t.is_alive():
        try:
            len(g.nodes)
        except onnxir.Error as e:
            errors.append(str(e))
    t.join()
    assert all("in use by another thread" in e for e in errors)
    assert len(g.nodes) == 20001
