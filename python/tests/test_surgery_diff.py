"""Issue 42 item 7: onnxir.diff gives what onnxir-diff --json prints (and
its text report), matching by structure: renamed and reordered copies are
equal, one edit is one difference."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import onnxir
from conftest import child_env

INPUTS = pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs"
BASE = str(INPUTS / "diff-base.onnxtxt")


@pytest.fixture
def diff_tool(onnx_opt):
    p = os.path.join(os.path.dirname(onnx_opt), "..", "onnxir-diff", "onnxir-diff")
    if not os.path.exists(p):
        pytest.skip("onnxir-diff is not built")
    return p


def edited(tmp_path, old, new, name):
    text = pathlib.Path(BASE).read_text()
    assert old in text
    p = tmp_path / (name + ".onnxtxt")
    p.write_text(text.replace(old, new))
    return str(p)


EDITS = [
    ("axis = 1", "axis = -1", "attr"),
    ("{1, 2, 3, 4}", "{1, 2, 3.5, 4}", "init"),
    ("  m1 = Mul(r1, s1)", "  r2 = Neg(r1)\n  m1 = Mul(r2, s1)", "added"),
    ("float[1,4] y)", "float[N,4] y)", "io"),
]


@pytest.mark.parametrize("old, new, name", EDITS)
def test_diff_equals_cli(diff_tool, tmp_path, old, new, name):
    b = edited(tmp_path, old, new, name)
    r = subprocess.run([diff_tool, "--json", BASE, b], capture_output=True, env=child_env())
    assert r.returncode == 1, r.stderr
    got = onnxir.diff(BASE, b)
    assert got == json.loads(r.stdout)
    assert got["equal"] is False
    t = subprocess.run([diff_tool, BASE, b], capture_output=True, env=child_env())
    assert onnxir.diff(BASE, b, text=True) == t.stdout.decode()


def test_one_change_is_one_difference(tmp_path):
    got = onnxir.diff(BASE, edited(tmp_path, "{1, 2, 3, 4}", "{1, 2, 3.5, 4}", "init"))
    (d,) = got["differences"]
    assert d["kind"] == "initializer_changed" and d["name_a"] == d["name_b"] == "w"
    assert d["max_abs_diff"] == 0.5
    got = onnxir.diff(BASE, edited(tmp_path, "axis = 1", "axis = -1", "attr"))
    (d,) = got["differences"]
    assert (d["kind"], d["op"], d["details"]) == ("node_changed", "Split",
                                                   ["attribute axis: 1 -> -1"])


def test_renamed_and_reordered_copy_is_equal(onnx_opt, tmp_path):
    renamed = tmp_path / "renamed.onnx"
    shuffled = tmp_path / "shuffled.onnx"
    subprocess.run([onnx_opt, BASE, "-rename", "-o", str(renamed)], check=True, env=child_env())
    subprocess.run([sys.executable, str(INPUTS / "diff-shuffle.py"), str(renamed), str(shuffled), "7"],
                   check=True, capture_output=True)
    a, b = onnxir.load(BASE), onnxir.load(str(shuffled))
    assert [n.op_type for n in a.graph.nodes] != [n.op_type for n in b.graph.nodes]
    got = onnxir.diff(a, b)
    assert got["equal"] is True and got["differences"] == []
    assert got["nodes"] == {"a": 10, "b": 10, "matched": 10}


def test_onnx_protos_are_accepted():
    onnx = pytest.importorskip("onnx")
    proto = onnxir.to_onnx(onnxir.load(BASE))
    assert isinstance(proto, onnx.ModelProto)
    assert onnxir.diff(proto, BASE)["equal"] is True


def test_a_cycle_is_refused_not_followed():
    m = onnxir.load(BASE)
    nodes = list(m.graph.nodes)
    mul = next(n for n in nodes if n.op_type == "Mul")
    tanh = next(n for n in nodes if n.op_type == "Tanh")
    mul.inputs[0] = tanh.outputs[0]  # x * w now reads a later Tanh
    with pytest.raises(onnxir.Error, match="diff: b: the model is invalid"):
        onnxir.diff(BASE, m)


def test_bad_arguments():
    with pytest.raises(TypeError, match="diff: a must be"):
        onnxir.diff(3, BASE)
    with pytest.raises(onnxir.Error):
        onnxir.diff(BASE, "/nonexistent/model.onnx")
