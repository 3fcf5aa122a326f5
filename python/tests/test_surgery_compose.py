"""Issue 42 item 3: onnxir.compose gives the model onnxir-compose gives
(compared as text), the same located errors, and the numbers of A then B."""
import os
import pathlib
import subprocess

import pytest

import onnxir
from conftest import child_env

INPUTS = pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs"
A, B, C = (str(INPUTS / ("compose-%s.onnxtxt" % k)) for k in "abc")


@pytest.fixture
def compose_tool(onnx_opt):
    p = os.path.join(os.path.dirname(onnx_opt), "..", "onnxir-compose", "onnxir-compose")
    if not os.path.exists(p):
        pytest.skip("onnxir-compose is not built")
    return p


def text(m):
    return onnxir.dumps(m, format="text").decode()


@pytest.mark.parametrize("kwargs, flags", [
    (dict(connect=["h:x"], prefix_a="a_", prefix_b="b_"),
     ["--connect", "h:x", "--prefix", "A:a_", "--prefix", "B:b_"]),
    (dict(connect=[("h", "x")], prefix_b="b_", drop_unconnected=True),
     ["--connect", "h:x", "--prefix", "B:b_", "--drop-unconnected"]),
])
def test_python_equals_cli(compose_tool, kwargs, flags):
    r = subprocess.run([compose_tool, A, B, *flags, "--emit=text", "-o", "-"],
                       capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, r.stderr
    a, b = onnxir.load(A), onnxir.load(B)
    before = (text(a), text(b))
    got = onnxir.compose(a, b, **kwargs)
    assert text(got) == r.stdout
    assert (text(a), text(b)) == before, "the arguments are not changed"


def test_numbers_are_a_then_b():
    np = pytest.importorskip("numpy")
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    c = np.array(True)
    ra = onnxir.run(A, {"x": x})
    rb = onnxir.run(B, {"x": ra["h"], "c": c})
    got = onnxir.run(onnxir.compose(A, B, ["h:x"], prefix_b="b_"), {"x": x, "b_c": c})
    np.testing.assert_allclose(got["aux"], ra["aux"], rtol=1e-6)
    np.testing.assert_allclose(got["b_y"], rb["y"], rtol=1e-6)


@pytest.mark.parametrize("args, kwargs, flags, message", [
    ((A, B), dict(connect=["h:x"]), ["--connect", "h:x"],
     'compose: the name "w" is defined in both models'),
    ((A, C), dict(connect=["h:h16"], prefix_b="b_"), ["--connect", "h:h16", "--prefix", "B:b_"],
     'compose: output "h" of model A is float[N,4] but input "h16" of model B is float16[N,4]'),
    ((A, B), dict(connect=["nope:x"], prefix_b="b_"), ["--connect", "nope:x", "--prefix", "B:b_"],
     'compose: "nope" is no output of model A'),
])
def test_errors_are_the_same(compose_tool, tmp_path, args, kwargs, flags, message):
    with pytest.raises(onnxir.Error) as e:
        onnxir.compose(*args, **kwargs)
    assert message in str(e.value)
    out = tmp_path / "out.onnx"
    r = subprocess.run([compose_tool, *args, *flags, "-o", str(out)],
                       capture_output=True, text=True, env=child_env())
    assert r.returncode == 1 and message in r.stderr, r.stderr
    assert not out.exists()


def test_bad_connection_spelling():
    with pytest.raises(onnxir.Error, match="a connection is"):
        onnxir.compose(A, B, ["h"])
