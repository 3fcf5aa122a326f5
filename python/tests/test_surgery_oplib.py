"""Issue 42 item 4: onnxir.register_ops registers an op library as onnx-opt
--op-library does; shape rules, function bodies and the verifier then give
the same results in Python as on the command line (compared as text), and a
bad library is the same located error. Registration is process-wide, so each
test declares ops of a domain of its own."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

import onnxir
from conftest import child_env

EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs" /
           "oplib-example.json")


def library(domain):
    """The example library with its ops moved to `domain`."""
    lib = json.loads(EXAMPLE.read_text())
    for op in lib["ops"]:
        op["domain"] = domain
        if "function" in op:
            op["function"] = op["function"].replace('"example.ops"', json.dumps(domain))
    return lib


def model_text(domain):
    return ("""<ir_version: 9, opset_import: ["" : 18, "%s" : 1]>
g (float[B,3,32,32] img, float[2,3] x, double[4] d) => (y, m, cnt, t, u)
{
  y = %s.PatchEmbed <patches = 64> (img)
  m, cnt = %s.RowStats (d)
  t = %s.ScaledTanh <beta = 1.0> (x)
  u = %s.ScaledTanh (d)
}
""" % ((domain,) * 5)).encode()


def cli(onnx_opt, tmp_path, lib, model, *args):
    lib_path = tmp_path / "lib.json"
    lib_path.write_text(json.dumps(lib))
    src = tmp_path / "in.onnxtxt"
    src.write_bytes(model)
    return subprocess.run([onnx_opt, "--op-library=%s" % lib_path, str(src), *args,
                           "--emit=text", "-o", "-"],
                          capture_output=True, text=True, env=child_env())


def text(m):
    return onnxir.dumps(m, format="text").decode()


def test_register_ops_returns_the_ops():
    ops = onnxir.register_ops(library("pytest.names"))
    assert ops == ["pytest.names.PatchEmbed-v1", "pytest.names.RowStats-v1",
                   "pytest.names.ScaledTanh-v1"]


@pytest.mark.parametrize("how", ["path", "pathlike", "text", "dict"])
def test_shape_rules_and_bodies_infer_as_on_the_cli(onnx_opt, tmp_path, how):
    domain = "pytest.infer." + how
    lib = library(domain)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(lib))
    source = {"path": str(path), "pathlike": path, "text": json.dumps(lib), "dict": lib}[how]
    onnxir.register_ops(source)
    m = onnxir.loads(model_text(domain), format="text")
    onnxir.infer_shapes(m)
    types = [str(v.type) for v in m.graph.outputs]
    assert types == ["float[B,64,16]", "double[4,1]", "int64", "float[2,3]", "double[4]"]
    r = cli(onnx_opt, tmp_path, lib, model_text(domain), "-infer-shapes")
    assert r.returncode == 0, r.stderr
    assert text(m) == r.stdout


def test_body_runs_and_expands_as_on_the_cli(onnx_opt, tmp_path):
    domain = "pytest.body"
    lib = library(domain)
    onnxir.register_ops(lib)
    m = onnxir.loads(model_text(domain), format="text")
    x = np.array([[-1.5, -0.25, 0], [0.5, 1, 3]], dtype=np.float32)
    d = np.array([-4, -1, 0.75, 2], dtype=np.float64)
    img = np.zeros((1, 3, 32, 32), dtype=np.float32)
    # PatchEmbed and RowStats have shape rules only: run the bodies' outputs.
    sub = onnxir.extract(m, ["x", "d"], ["t", "u"])
    out = onnxir.run(sub, {"x": x, "d": d})
    np.testing.assert_allclose(out["t"], 2 * np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(out["u"], 2 * np.tanh(0.5 * d), rtol=1e-12)
    onnxir.run_passes(m, "expand-functions")
    assert "ScaledTanh" not in text(m)
    r = cli(onnx_opt, tmp_path, lib, model_text(domain), "-expand-functions")
    assert r.returncode == 0, r.stderr
    assert text(m) == r.stdout
    del img


def test_verifier_uses_the_declarations(onnx_opt, tmp_path):
    domain = "pytest.verify"
    lib = library(domain)
    onnxir.register_ops(lib)
    bad = ("""<ir_version: 9, opset_import: ["" : 18, "%s" : 1]>
g (float[4,5] x) => (t)
{
  t = %s.ScaledTanh <alpha = 3> (x)
}
""" % (domain, domain)).encode()
    with pytest.raises(onnxir.Error) as e:
        onnxir.loads(bad, format="text")
    want = 'attribute "alpha" is int, %s.ScaledTanh-v1 wants float' % domain
    assert want in str(e.value)
    r = cli(onnx_opt, tmp_path, lib, bad)
    assert r.returncode == 1 and want in r.stderr


@pytest.mark.parametrize("lib, what", [
    ("{\n  \"ops\": [\n    {,]\n}", "not JSON: [3:6, byte=19]: Expected object key"),
    ({"ops": [{"domain": "pytest.bad", "name": "P", "outputs": [{"name": "Y", "type": "T"}],
               "type_constraints": [{"param": "T", "allowed": ["tensor(float)"]}],
               "shape": ["out0: [attr.k]"]}]},
     "ops[0] (pytest.bad.P).shape[0]: rule \"out0: [attr.k]\": column 13: \"k\" is not an int "
     "attribute of the op"),
    ({"ops": [{"domain": "ai.onnx", "name": "Relu", "outputs": []}]},
     "ops[0] (ai.onnx.Relu).domain: \"ai.onnx\" is a domain of ONNX's"),
])
def test_bad_libraries_are_the_cli_errors(onnx_opt, tmp_path, lib, what):
    text_ = lib if isinstance(lib, str) else json.dumps(lib)
    path = tmp_path / "bad.json"
    path.write_text(text_)
    with pytest.raises(onnxir.Error) as e:
        onnxir.register_ops(path)
    py = str(e.value)
    assert py.startswith("register_ops: %s" % path) and what in py, py
    r = subprocess.run([onnx_opt, "--op-library=%s" % path, "-", "-o", "-"], input="",
                       capture_output=True, text=True, env=child_env())
    assert r.returncode == 1
    assert r.stderr.strip() == "onnx-opt: error: --op-library: " + py[len("register_ops: "):]


def test_a_refused_library_registers_nothing():
    with pytest.raises(onnxir.Error):
        onnxir.register_ops({"ops": [
            {"domain": "pytest.half", "name": "Good", "outputs": [{"name": "Y", "type": "tensor(float)"}]},
            {"domain": "pytest.half", "name": "Bad", "outputs": [{"name": "Y", "type": "nope"}]}]})
    m = onnxir.loads(b"""<ir_version: 9, opset_import: ["" : 18, "pytest.half" : 1]>
g (float[2] x) => (y) { y = pytest.half.Good (x) }""", format="text")
    onnxir.infer_shapes(m)
    assert m.graph.outputs[0].type is None


def test_bad_sources():
    with pytest.raises(onnxir.Error, match="register_ops: cannot read op library /nonexistent.json"):
        onnxir.register_ops("/nonexistent.json")
    with pytest.raises(TypeError, match="register_ops: source must be a path, JSON text or a dict"):
        onnxir.register_ops(42)
