"""Issue 41 item 9: onnxir.merge_decoders gives the model onnxir-compose
--merge-decoders gives (compared as text), leaves its arguments alone, and
each branch computes what its model computes."""
import os
import pathlib
import subprocess

import pytest

import onnxir
from conftest import child_env

INPUTS = pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs"
DEC = str(INPUTS / "merge-decoder.onnxtxt")
DECP = str(INPUTS / "merge-decoder-with-past.onnxtxt")


@pytest.fixture
def compose_tool(onnx_opt):
    p = os.path.join(os.path.dirname(onnx_opt), "..", "onnxir-compose", "onnxir-compose")
    if not os.path.exists(p):
        pytest.skip("onnxir-compose is not built")
    return p


def text(m):
    return onnxir.dumps(m, format="text").decode()


def test_python_equals_cli(compose_tool):
    r = subprocess.run([compose_tool, "--merge-decoders", DEC, DECP, "--condition=cache",
                        "--emit=text", "-o", "-"], capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, r.stderr
    a, b = onnxir.load(DEC), onnxir.load(DECP)
    before = (text(a), text(b))
    got = onnxir.merge_decoders(a, b, condition="cache")
    assert text(got) == r.stdout
    assert (text(a), text(b)) == before, "the arguments are not changed"


def test_branches_compute_each_model():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    past = rng.standard_normal((2, 2, 4)).astype(np.float32)
    merged = onnxir.merge_decoders(DEC, DECP)
    with_past = onnxir.run(merged, {"x": x, "past": past, "use_cache_branch": np.array([True])})
    without = onnxir.run(merged, {"x": x, "past": past, "use_cache_branch": np.array([False])})
    want_p = onnxir.run(DECP, {"x": x, "past": past})
    want = onnxir.run(DEC, {"x": x})
    for n in ("y", "present"):
        np.testing.assert_array_equal(with_past[n], want_p[n])
        np.testing.assert_array_equal(without[n], want[n])


def test_error_names_the_output():
    with pytest.raises(onnxir.Error, match='output "y" of the decoder is no output'):
        onnxir.merge_decoders(DEC, str(INPUTS / "compose-a.onnxtxt"))
