"""Issue 38 items 5 and 1: messages in Python's terms (Note [Python spelling]
in src/Tools.cpp) and run_passes with onnx-opt's pipeline policy."""
import ast
import pathlib
import re
import subprocess

import pytest

import onnxir
from conftest import child_env

MODEL = b"""<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,4] x) => (float[batch,4] y) <float[4] w = {1, 2, 3, 4}> {
  a = Add (x, w)
  y = Relu (a)
}"""


def model():
    return onnxir.loads(MODEL)


def no_cli_flag(msg):
    assert not re.search(r"(^|[\s(])--?[a-z]", msg), msg


# --- messages ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, what", [
    ({"input_shapes": {"nope": [1, 4]}}, "input_shapes: the main graph has no input \"nope\""),
    ({"input_shapes": "x"}, "input_shapes: expected NAME:DIMS"),
    ({"input_shapes": {"x": [1, 2, 3]}}, "input_shapes: input \"x\""),
    ({"bind_dims": "batch"}, "bind_dims: expected SYMBOL=VALUE"),
    ({"bind_dims": {"nope": 1}}, "bind_dims: the model has no symbol \"nope\""),
])
def test_infer_shapes_errors_name_keywords(kwargs, what):
    with pytest.raises(onnxir.Error) as e:
        onnxir.infer_shapes(model(), **kwargs)
    assert what in str(e.value)
    no_cli_flag(str(e.value))


def test_infer_shapes_argument_types():
    with pytest.raises(TypeError, match=r"bind_dims\['batch'\] must be an int"):
        onnxir.infer_shapes(model(), bind_dims={"batch": "1"})
    with pytest.raises(TypeError, match="input_shapes must be a dict"):
        onnxir.infer_shapes(model(), input_shapes=[1, 4])


def test_unknown_option_suggests():
    with pytest.raises(onnxir.Error) as e:
        onnxir.run_passes(model(), "O2", options={"fold-size-limt": "1MiB"})
    assert "unknown option 'fold-size-limt' (did you mean fold-size-limit?)" in str(e.value)
    assert "onnxir.list_options()" in str(e.value) or "onnxir.list_passes()" in str(e.value)
    no_cli_flag(str(e.value))


def test_option_without_a_pass_names_the_passes_that_take_it():
    with pytest.raises(onnxir.Error) as e:
        onnxir.run_passes(model(), "dce", options={"fold-size-limit": "1MiB"})
    msg = str(e.value)
    assert "option 'fold-size-limit' is given but no pass that takes it runs" in msg
    assert "fold-constants" in msg
    no_cli_flag(msg)


def test_bad_option_value_names_the_option():
    with pytest.raises(onnxir.Error) as e:
        onnxir.run_passes(model(), "fold-constants", options={"fold-size-limit": "lots"})
    assert "options['fold-size-limit']" in str(e.value)
    no_cli_flag(str(e.value))
    with pytest.raises(TypeError, match=r"options\['fold-size-limit'\] must be a bool, int"):
        onnxir.run_passes(model(), "fold-constants", options={"fold-size-limit": object()})


def test_unknown_pass_points_at_list_passes():
    with pytest.raises(onnxir.Error) as e:
        onnxir.run_passes(model(), "dcee")
    msg = str(e.value)
    assert "unknown pass 'dcee' (did you mean dce?" in msg
    assert "onnxir.list_passes()" in msg
    no_cli_flag(msg)
    names = [n for n, _ in onnxir.list_passes()]
    assert "dce" in names and "O2" in names
    assert "target-opset" in dict(onnxir.list_options())


# --- run_passes with onnx-opt's policy -------------------------------------------

def test_target_opset_as_onnx_opt(tmp_path, onnx_opt):
    src = tmp_path / "m.onnxtxt"
    src.write_bytes(MODEL)
    out = tmp_path / "o.onnxtxt"
    subprocess.run([onnx_opt, "-O2", "--target-opset=23", str(src), "-o", str(out)],
                   check=True, env=child_env())
    m = model()
    assert onnxir.run_passes(m, "O2", options={"target-opset": 23})
    assert m.opset_version() == 23
    assert onnxir.dumps(m, format="text") == onnxir.dumps(onnxir.load(out), format="text")
    alone = model()
    onnxir.run_passes(alone, "", options={"target-opset": 18})   # the option alone converts
    assert alone.opset_version() == 18


@pytest.mark.parametrize("options", [{"dce-value-info": True}, {"dce-value-info": "false"},
                                     {"fold-size-limit": 4096, "shape-data-limit": 64}])
def test_option_values_of_python_types(options):
    onnxir.run_passes(model(), "O1,infer-shapes", options=options)


def test_float_option_values_reach_the_option():
    with pytest.raises(onnxir.Error, match=r"options\['fold-size-limit'\]\) got '2.5'"):
        onnxir.run_passes(model(), "O1", options={"fold-size-limit": 2.5})


# --- docstrings, signatures and stubs ------------------------------------------------

def public_callables():
    for name in onnxir.__all__:
        obj = getattr(onnxir, name)
        yield name, obj
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") or attr in ("__init__", "__getitem__"):
                    yield name + "." + attr, member


def test_every_public_name_has_a_docstring_and_python_types():
    for name, obj in public_callables():
        doc = getattr(obj, "__doc__", None) or ""
        if isinstance(obj, property):
            doc = obj.__doc__ or ""
        assert doc.strip(), name + " has no docstring"
        assert "onnxir::" not in doc and "arg0" not in doc, name + ": " + doc.splitlines()[0]


STUBS = pathlib.Path(onnxir.__file__).parent


def test_stubs_ship_parse_and_cover_the_module():
    assert (STUBS / "py.typed").exists()
    tree = ast.parse((STUBS / "__init__.pyi").read_text())
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name in onnxir.__all__:
        assert name in defined, name + " is not in __init__.pyi"
        obj = getattr(onnxir, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            members = {n.name for n in classes[name].body
                       if isinstance(n, ast.FunctionDef)} | \
                      {n.target.id for n in classes[name].body
                       if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
            for attr in vars(obj):
                if not attr.startswith("_"):
                    assert attr in members, "%s.%s is not in __init__.pyi" % (name, attr)
