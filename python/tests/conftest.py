"""Shared fixtures of the onnxir Python tests (run by ctest: python/tests/CMakeLists.txt)."""
import os
import pathlib

import pytest

SHARED = pathlib.Path(os.environ.get("ONNXIR_SHARED_DIR",
                                     pathlib.Path(__file__).resolve().parents[2] / ".." / "shared"))

# A small model in the text syntax: a Relu, an Add with an initializer, an If
# whose branches use outer names, and a local function.
TEXT = """<ir_version: 8, opset_import: ["" : 17, "local" : 1], producer_name: "tests",
 metadata_props: ["k": "v"]>
main (float[N,4] x, bool c) => (float[N,4] y, float[N,4] z)
  <float[4] w = {1, 2, 3, 4}>
{
  r = Relu (x)
  y = Add (r, w)
  z = If (c) <then_branch = t () => (float[N,4] o) { o = Neg (r) },
              else_branch = e () => (float[N,4] o) { o = Abs (y) }>
}
<domain: "local", opset_import: ["" : 17]>
twice (a) => (b) { b = Add (a, a) }
"""


@pytest.fixture
def text_model():
    import onnxir
    return onnxir.loads(TEXT.encode(), format="text", name="tiny.onnxtxt")


def child_env():
    """The environment for a tool run from a test: without the ASan runtime that a
    sanitizer build preloads into python3 (the sanitized tool links its own, and
    two runtimes in one process abort)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


@pytest.fixture
def onnx_opt():
    p = os.environ.get("ONNX_OPT")
    if not p or not os.path.exists(p):
        if os.environ.get("CI") == "true":
            pytest.fail("ONNX_OPT (the onnx-opt binary) not given: CI=true, the test must run")
        pytest.skip("ONNX_OPT (the onnx-opt binary) not given")
    return p


def all_models():
    return sorted(str(p) for d in ("light", "real") for p in (SHARED / "models" / d).glob("*.onnx"))
