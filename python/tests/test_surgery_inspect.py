"""Issue 42 items 5 and 6: onnxir.inspect gives the JSON of onnx-opt
--emit=json, onnxir.view the text of --emit=dot/mermaid (same bytes), on the
same models; names that break naive writers (quotes, backslashes, newlines,
unicode, braces) come out escaped."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

import onnxir
from conftest import child_env

INPUTS = pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs"
SUMMARY = str(INPUTS.parent / "inspect-summary.onnxtxt")
VIEW = str(INPUTS / "view-model.onnxtxt")
SCHEMA = pathlib.Path(__file__).resolve().parents[2] / "docs" / "inspect.schema.json"


def cli(onnx_opt, *args):
    r = subprocess.run([onnx_opt, *args], capture_output=True, env=child_env())
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.mark.parametrize("pipeline, flags", [(None, []), ("infer-shapes,fuse", ["-infer-shapes", "-fuse"])])
def test_inspect_equals_cli(onnx_opt, pipeline, flags):
    want = json.loads(cli(onnx_opt, SUMMARY, *flags, "--emit=json", "-o", "-"))
    got = onnxir.inspect(SUMMARY, pipeline=pipeline)
    assert got == want
    assert got["fusion_census"] == ({"HardSwish": 2} if pipeline else {})
    assert got["inputs"][0]["type"]["shape"] == ["batch", 4]


def test_inspect_runs_the_pipeline_on_the_model_given():
    m = onnxir.load(SUMMARY)
    onnxir.inspect(m, pipeline="infer-shapes,fuse")
    ops = [n.op_type for n in m.graph.nodes]
    assert "HardSwish" in ops and "HardSigmoid" not in ops


def test_inspect_keys_follow_the_schema():
    schema = json.loads(SCHEMA.read_text())
    got = onnxir.inspect(SUMMARY)
    assert set(got) == set(schema["properties"]) == set(schema["required"])
    assert set(got["nodes"]) == set(schema["properties"]["nodes"]["required"])


def test_inspect_bad_pipeline_is_an_error():
    with pytest.raises(onnxir.Error, match="no-such-pass"):
        onnxir.inspect(SUMMARY, pipeline="no-such-pass")


@pytest.mark.parametrize("fmt", ["dot", "mermaid"])
@pytest.mark.parametrize("collapse", [0, 2])
def test_view_equals_cli(onnx_opt, fmt, collapse):
    flags = ["--collapse=%d" % collapse] if collapse else []
    want = cli(onnx_opt, VIEW, "--emit=" + fmt, *flags, "-o", "-")
    assert onnxir.view(VIEW, fmt, collapse=collapse) == want


def test_view_bad_format():
    with pytest.raises(onnxir.Error, match="'dot', 'mermaid' or 'svg'"):
        onnxir.view(VIEW, "png")


def awkward_model():
    """Names no text model can hold: newlines, NUL-free control characters."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    x = 'x "q"\nline\\{}|<>#;'
    y = "ü\ty\r"
    node = helper.make_node("Relu", [x], [y], name="n\n\"1\"")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info(y, TensorProto.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_view_escapes_every_name():
    m = awkward_model()
    dot = onnxir.view(m, "dot")
    assert 'label="x \\"q\\"\\nline\\\\{}|<>#;\\nfloat[2]"' in dot
    assert 'label="Relu\\nn\\n\\"1\\""' in dot
    # A raw control character or newline never reaches a quoted string.
    for line in dot.splitlines():
        assert "\t" not in line and "\r" not in line
    mermaid = onnxir.view(m, "mermaid")
    assert '(["x #34;q#34;<br/>line#92;#123;#125;#124;#60;#62;#35;#59;<br/>float#91;2#93;"])' in mermaid
    checker = INPUTS / "view-check.py"
    for fmt, text in (("dot", dot), ("mermaid", mermaid)):
        r = subprocess.run([sys.executable, str(checker), fmt, "/dev/stdin"], input=text.encode(),
                           capture_output=True)
        assert r.returncode == 0 and r.stdout.startswith(b"ok: 3 nodes, 2 edges"), r.stdout


@pytest.mark.skipif(not shutil.which("dot"), reason="Graphviz's dot is not installed")
def test_svg_of_awkward_names():
    svg = onnxir.view(awkward_model(), "svg")
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    assert "Relu" in svg and "</svg>" in svg
