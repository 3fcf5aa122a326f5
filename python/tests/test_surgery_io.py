"""Issue 42 items 1 and 2: onnxir.extract, add_outputs, prune_outputs,
rename_io, retype_io give the model onnx-opt's extract, add-outputs,
prune-outputs, --rename-io and --retype-io give (compared as text), and the
same located errors."""
import os
import subprocess

import pytest

import onnxir
from conftest import child_env

MODEL = b"""<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float[2,3] x, bool c) => (float[2,3] y)
  <float[3] w = {1, 2, 3}, float[3] k = {4, 5, 6}>
{
  a = Add(x, w)
  b = Relu(a)
  s = local.Sq(b)
  t = Mul(s, k)
  u = If(c) <then_branch = th () => (float[2,3] o) { o = Neg(b) },
             else_branch = el () => (float[2,3] p) { p = Abs(t) }>
  y = local.Unused(u)
}
<domain: "local", opset_import: ["" : 17]>
Sq (X) => (Y) { Y = Mul(X, X) }
<domain: "local", opset_import: ["" : 17]>
Unused (X) => (Y) { Y = Neg(X) }
"""


def model():
    return onnxir.loads(MODEL, format="text")


def cli(onnx_opt, tmp_path, *args):
    src = tmp_path / "in.onnxtxt"
    src.write_bytes(MODEL)
    r = subprocess.run([onnx_opt, str(src), *args, "--emit=text", "-o", "-"],
                       capture_output=True, text=True, env=child_env())
    return r


def text(m):
    return onnxir.dumps(m, format="text").decode()


@pytest.mark.parametrize("call, flags", [
    (lambda m: onnxir.extract(m, ["a", "c"], ["t", "u"]),
     ["--extract-inputs=a,c", "--extract-outputs=t,u"]),
    (lambda m: onnxir.extract(m, [], ["b"]), ["-extract", "--extract-outputs=b"]),
    (lambda m: (onnxir.add_outputs(m, ["s", "a"]), m)[1],
     ["--pass-pipeline=add-outputs{names=s,a}"]),
    (lambda m: (onnxir.add_outputs(m, all=True), m)[1], ["--pass-pipeline=add-outputs{all}"]),
    (lambda m: (onnxir.prune_outputs(onnxir.add_outputs(m, ["t"]) and m, ["t"]), m)[1],
     ["--pass-pipeline=add-outputs{names=t},prune-outputs{keep=t}"]),
    (lambda m: (onnxir.rename_io(m, {"x": "pixels", "y": "out"}), m)[1],
     ["--rename-io=x:pixels,y:out"]),
    (lambda m: (onnxir.retype_io(m, {"x": "float16", "y": "float16"}), m)[1],
     ["--retype-io=x:float16,y:float16"]),
])
def test_python_equals_cli(onnx_opt, tmp_path, call, flags):
    r = cli(onnx_opt, tmp_path, *flags)
    assert r.returncode == 0, r.stderr
    assert text(call(model())) == r.stdout


def test_extract_copies_unless_inplace():
    m = model()
    before = text(m)
    cut = onnxir.extract(m, ["a", "c"], ["t"])
    assert text(m) == before
    assert [v.name for v in cut.graph.inputs] == ["c", "a"]
    assert [v.name for v in cut.graph.outputs] == ["t"]
    assert len(cut.functions) == 1  # Sq; Unused goes
    assert onnxir.extract(m, ["a", "c"], ["t"], inplace=True) is m
    assert text(m) == text(cut)


def test_extract_numbers_equal_the_intermediates():
    np = pytest.importorskip("numpy")
    m = model()
    full = model()
    onnxir.add_outputs(full, ["a", "t", "u"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    ref = onnxir.run(full, {"x": x, "c": np.array(False)})
    cut = onnxir.extract(m, ["a", "c"], ["t", "u"])
    got = onnxir.run(cut, {"a": ref["a"], "c": np.array(False)})
    np.testing.assert_array_equal(got["t"], ref["t"])
    np.testing.assert_array_equal(got["u"], ref["u"])


@pytest.mark.parametrize("call, flags, message", [
    (lambda m: onnxir.extract(m, ["b"], ["u"]), ["--extract-inputs=b", "--extract-outputs=u"],
     'extract: output "u" is not computable from the inputs ("b") and initializers: it needs '
     'graph input "c"; add it to the inputs'),
    (lambda m: onnxir.extract(m, ["a"], ["nope"]), ["--extract-inputs=a", "--extract-outputs=nope"],
     'extract: output "nope" is no value of the main graph'),
    (lambda m: onnxir.add_outputs(m, ["nope"]), ["--pass-pipeline=add-outputs{names=nope}"],
     'add-outputs: "nope" is no value of the main graph'),
    (lambda m: onnxir.prune_outputs(m, ["a"]), ["--pass-pipeline=prune-outputs{keep=a}"],
     'prune-outputs: "a" is no output of the main graph (inputs: x, c; outputs: y)'),
    (lambda m: onnxir.rename_io(m, {"x": "o"}), ["--rename-io=x:o"],
     'rename-io: "x" -> "o": the name is taken in a subgraph of the main graph'),
    (lambda m: onnxir.retype_io(m, {"x": "half"}), ["--retype-io=x:half"],
     'retype-io: "half" is no element type'),
])
def test_errors_are_the_same(onnx_opt, tmp_path, call, flags, message):
    m = model()
    before = text(m)
    with pytest.raises(onnxir.Error) as e:
        call(m)
    assert message in str(e.value)
    assert text(m) == before, "an error leaves the model as it was"
    r = cli(onnx_opt, tmp_path, *flags)
    assert r.returncode == 1 and message in r.stderr, r.stderr


def test_argument_types():
    with pytest.raises(TypeError):
        onnxir.rename_io(model(), {"x": 1})
    with pytest.raises(TypeError):
        onnxir.extract(42, ["a"], ["b"])
