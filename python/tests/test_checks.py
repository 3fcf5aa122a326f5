"""Issue 38 item 8: load, loads and save check a model as onnx-opt does on
load (Note [Python checks what onnx-opt checks] in src/Tools.cpp)."""
import subprocess
import warnings

import pytest

import onnxir
from conftest import child_env

HEAD = '<ir_version: 8, opset_import: ["" : 17]>\n'


def text(body, head=HEAD):
    return (head + "g (float[2] x) => (float[2] y) {\n  " + body + "\n}\n").encode()


UNKNOWN_OP = text("y = Foo (x)")
ARITY = text("y = Relu (x, x)")
MISSING_ATTRIBUTE = text("y = Cast (x)")
UNIMPORTED = text("y = my.ops.Foo (x)")
TYPE_CONSTRAINT = ('<ir_version: 8, opset_import: ["" : 17]>\n'
                   'g (int32[2] x) => (int32[2] y) {\n  y = Sqrt (x)\n}\n').encode()


@pytest.mark.parametrize("model, what", [
    (UNKNOWN_OP, 'no operator "Foo" in opset 17'),
    (ARITY, "takes at most 1 inputs, the node has 2"),
    (MISSING_ATTRIBUTE, "to"),
    (UNIMPORTED, 'domain "my.ops" is not imported'),
])
def test_load_refuses_what_onnx_opt_refuses(model, what):
    with pytest.raises(onnxir.Error, match="the model is invalid") as e:
        onnxir.loads(model, name="m.onnxtxt")
    assert what in str(e.value) and str(e.value).startswith("m.onnxtxt: ")
    if model is not UNIMPORTED:
        assert "verify='structure' skips the operator schema checks" in str(e.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = onnxir.loads(model, verify="structure")     # the opt-out
    assert m.graph.num_nodes == 1
    onnxir.loads(model, verify="none")


def test_text_errors_name_line_and_column(tmp_path):
    # Issue 38 item 4: a text model's schema errors and warnings carry
    # file:line:col of the operator (Note [Source locations]).
    with pytest.raises(onnxir.Error) as e:
        onnxir.loads(ARITY, name="m.onnxtxt")
    assert '\n  m.onnxtxt:3:7: graph "g" > node #0 (Relu): Relu-v14 takes at most 1' in str(e.value)
    with pytest.warns(onnxir.VerificationWarning, match=r'^m\.onnxtxt:3:7: graph "g" > node #0 '
                                                       r'\(Sqrt\).*does not allow'):
        m = onnxir.loads(TYPE_CONSTRAINT, name="m.onnxtxt")
    # A node made in code has no place in the text: the check names its path.
    g = m.graph
    g.create_node("Relu", [g.lookup("x"), g.lookup("x")])
    with pytest.raises(onnxir.Error) as e:
        onnxir.save(m, tmp_path / "o.onnx")
    assert '\n  graph "g" > node #1 (Relu): Relu-v14 takes at most 1' in str(e.value)


def test_load_message_is_onnx_opts(tmp_path, onnx_opt):
    f = tmp_path / "arity.onnxtxt"
    f.write_bytes(ARITY)
    r = subprocess.run([onnx_opt, str(f), "-o", str(tmp_path / "o.onnx")],
                       capture_output=True, text=True, env=child_env())
    with pytest.raises(onnxir.Error) as e:
        onnxir.load(f)
    assert r.stderr.strip() == "onnx-opt: error: " + str(e.value).replace(
        "verify='structure'", "--verify=structure")


def test_type_constraints_warn():
    with pytest.warns(onnxir.VerificationWarning, match=r"Sqrt.*does not allow"):
        m = onnxir.loads(TYPE_CONSTRAINT)
    assert m.graph.num_nodes == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(onnxir.VerificationWarning):
            onnxir.loads(TYPE_CONSTRAINT)
    with pytest.raises(onnxir.Error, match="does not allow"):
        onnxir.loads(TYPE_CONSTRAINT, verify="schema")


def test_save_checks_too(tmp_path):
    m = onnxir.loads(text("y = Relu (x)"))
    g = m.graph
    bad = g.create_node("Relu", [g.lookup("x"), g.lookup("x")])
    out = tmp_path / "o.onnx"
    with pytest.raises(onnxir.Error, match=r"o\.onnx: the model is invalid:\n.*\(Relu\).*at most 1"):
        onnxir.save(m, out)
    assert not out.exists()
    onnxir.save(m, out, verify="structure")
    assert out.exists()
    bad.erase()
    custom = g.create_node("Foo", [g.lookup("x")], domain="my.ops")
    with pytest.raises(onnxir.Error, match='domain "my.ops" is not imported'):
        onnxir.save(m, tmp_path / "p.onnx")
    m.opset_imports["my.ops"] = 1
    onnxir.save(m, tmp_path / "p.onnx")
    custom.erase()
    with pytest.raises(ValueError, match="verify must be"):
        onnxir.save(m, tmp_path / "q.onnx", verify="everything")


def test_verify_schema_reports_an_unimported_domain():
    m = onnxir.loads(UNIMPORTED, verify="none")
    onnxir.verify(m)                                  # the structure is fine
    with pytest.raises(onnxir.Error, match=r'\(Foo\): domain "my.ops" is not imported.*\[schema\]'):
        onnxir.verify(m, schema=True)
    assert ("schema", 'graph "g" > node #0 (Foo): domain "my.ops" is not imported '
            "(add it to Model.opset_imports)") in onnxir.diagnostics(m, schema=True)
    m.opset_imports["my.ops"] = 1
    onnxir.verify(m, schema=True)


def test_load_tolerates_what_passes_repair():
    unsorted = text("y = Neg (t)\n  t = Relu (x)")
    with pytest.warns(onnxir.VerificationWarning, match=r"run_passes\(m, 'topo'\) repairs it"):
        m = onnxir.loads(unsorted)
    onnxir.run_passes(m, "topo")
    assert [n.op_type for n in m.graph.nodes] == ["Relu", "Neg"]
