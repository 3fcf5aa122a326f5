"""Load + run_passes + save from Python does what onnx-opt does, byte for byte,
and checks the model as often (Note [Checked once] in python/src/Core.h;
bench/README.md, "Python within 1.05x")."""
import json
import pathlib
import subprocess
import sys

import pytest

import onnxir
from conftest import child_env

EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "test" / "Surgery" / "Inputs" /
           "oplib-example.json")

# Identities to remove, duplicate constants to merge: -O2 changes it.
CHAIN = """<ir_version: 8, opset_import: ["" : 17]>
chain (float[N,4] x) => (float[N,4] y)
  <float[4] w0 = {1, 2, 3, 4}, float[4] w1 = {1, 2, 3, 4}, float[4] c = {2, 2, 2, 2}>
{
  a = Add (x, w0)
  r = Relu (a)
  i = Identity (r)
  b = Add (i, w1)
  j = Identity (b)
  y = Mul (j, c)
}
"""

SCRIPT = ("import onnxir, sys; m = onnxir.load(sys.argv[1]); onnxir.run_passes(m, 'O2'); "
          "onnxir.save(m, sys.argv[2])")


@pytest.fixture
def chain_file(tmp_path):
    path = tmp_path / "chain.onnx"
    onnxir.save(onnxir.loads(CHAIN.encode(), format="text"), path)
    return path


def test_o2_output_is_onnx_opt_s(tmp_path, chain_file, onnx_opt):
    cli, py, inproc = tmp_path / "cli.onnx", tmp_path / "py.onnx", tmp_path / "in.onnx"
    subprocess.run([onnx_opt, "-O2", str(chain_file), "-o", str(cli)], check=True,
                   env=child_env())
    # A fresh interpreter, as a script runs it (its model is left at exit:
    # Note [Models left at exit]).
    subprocess.run([sys.executable, "-c", SCRIPT, str(chain_file), str(py)], check=True)
    m = onnxir.load(chain_file)
    assert onnxir.run_passes(m, "O2")
    onnxir.save(m, inproc)
    assert len(m.graph.nodes) == 4  # the Identities went
    assert py.read_bytes() == cli.read_bytes()
    assert inproc.read_bytes() == cli.read_bytes()


def test_clean_check_is_recorded_and_kept_by_passes(chain_file, tmp_path):
    m = onnxir.load(chain_file)
    assert onnxir._onnxir._check_record(m) == "default"
    onnxir.run_passes(m, "O2")
    assert onnxir._onnxir._check_record(m) == "default"
    onnxir.save(m, tmp_path / "o.onnx")
    assert onnxir._onnxir._check_record(m) == "default"
    # Any other level checks anew (and records its own).
    onnxir.save(m, tmp_path / "o.onnx", verify="schema")
    assert onnxir._onnxir._check_record(m) == "schema"
    assert onnxir._onnxir._check_record(onnxir.load(chain_file, verify="none")) is None


def test_record_dropped_by_access(chain_file):
    m = onnxir.load(chain_file)
    m.graph  # any access from Python may change the model
    assert onnxir._onnxir._check_record(m) is None
    m = onnxir.load(chain_file)
    n = m.graph.nodes[0]
    onnxir.save(m, chain_file.parent / "o.onnx")  # checks again, and records
    assert onnxir._onnxir._check_record(m) == "default"
    n.name  # a handle taken before the check
    assert onnxir._onnxir._check_record(m) is None


CUSTOM = """<ir_version: 9, opset_import: ["" : 18, "pytest.parity" : 1]>
g (float[2] x) => (float[2] y) { y = pytest.parity.Thing (x) }
"""


def test_an_op_library_registered_after_the_check_is_checked():
    # A custom domain without a library: accepted, nothing to warn about.
    m = onnxir.loads(CUSTOM.encode(), format="text")
    assert onnxir._onnxir._check_record(m) == "default"
    # A library of that domain without Thing: now Thing is unknown.
    lib = json.loads(EXAMPLE.read_text())
    for op in lib["ops"]:
        op["domain"] = "pytest.parity"
        op.pop("function", None)
    onnxir.register_ops(lib)
    assert onnxir._onnxir._check_record(m) is None
    with pytest.warns(onnxir.VerificationWarning, match="Thing is unknown"):
        onnxir.run_passes(m, "dce")


def test_no_record_for_a_model_with_warnings():
    # Relu of int8 at opset 13 (int8 from 14): a type constraint warning.
    text = """<ir_version: 8, opset_import: ["" : 13]>
g (int8[2] x) => (int8[2] y) { y = Relu (x) }
"""
    with pytest.warns(onnxir.VerificationWarning):
        m = onnxir.loads(text.encode(), format="text")
    assert onnxir._onnxir._check_record(m) is None
    with pytest.warns(onnxir.VerificationWarning):  # checked again: the warning again
        onnxir.run_passes(m, "dce")


def test_an_edit_after_a_clean_check_is_checked(chain_file, tmp_path):
    m = onnxir.load(chain_file)
    relu = [n for n in m.graph.nodes if n.op_type == "Relu"][0]
    relu.inputs.append(relu.inputs[0])  # Relu takes one input
    with pytest.raises(onnxir.Error, match="Relu"):
        onnxir.run_passes(m, "dce")
    with pytest.raises(onnxir.Error, match="Relu"):
        onnxir.save(m, tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


def test_import_does_not_load_typing():
    # typing costs a short script about 20 ms (bench/README, "Python within 1.05x").
    code = ("import sys; before = 'typing' in sys.modules; import onnxir; "
            "print(before, 'typing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    if out[0] == "True":
        pytest.skip("this interpreter imports typing at startup")
    assert out == ["False", "False"]


def test_models_left_at_exit(tmp_path, chain_file):
    # Models and handles held until the interpreter ends, an atexit callback
    # of the script's that uses one after onnxir's: the run ends cleanly.
    code = f"""
import atexit, onnxir
m = onnxir.load({str(chain_file)!r})
nodes = list(m.graph.nodes)
onnxir.run_passes(m, "O2")
keep = [onnxir.load({str(chain_file)!r}) for _ in range(3)]
def late():
    print(len(keep[0].graph.nodes))
atexit.register(late)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "6"


def test_package_has_bytecode():
    # The build compiles the package's Python files (python/CMakeLists.txt):
    # ctest's interpreter writes no bytecode and compiled them on every import.
    import os
    from onnxir import _views
    for mod in (onnxir, _views):
        assert os.path.exists(mod.__cached__), mod.__cached__
