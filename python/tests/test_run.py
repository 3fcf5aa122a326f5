"""onnxir.run and onnxir.compare: the reference evaluator from Python (src/Eval.cpp)."""
import threading
import time

import numpy as np
import pytest

import onnxir


def text(src, name="m.onnxtxt"):
    return onnxir.loads(src.encode(), format="text", name=name)


# y = Relu(x @ w + b), z = Sigmoid(x @ w) summed over its last axis.
DENSE = """<ir_version: 8, opset_import: ["" : 17]>
g (float[N,3] x) => (float[N,2] y, float[N] z)
  <float[3,2] w = {1, -2, 0.5, 3, -1, 0.25}, float[2] b = {0.1, -0.2}>
{
  m = MatMul (x, w)
  s = Add (m, b)
  y = Relu (s)
  g1 = Sigmoid (m)
  ax = Constant <value = int64[1] {-1}> ()
  z = ReduceSum <keepdims = 0> (g1, ax)
}
"""


def dense_numpy(x):
    w = np.array([[1, -2], [0.5, 3], [-1, 0.25]], np.float32)
    b = np.array([0.1, -0.2], np.float32)
    m = x @ w
    return np.maximum(m + b, 0), (1 / (1 + np.exp(-m))).sum(-1)


def test_run_matches_numpy():
    m = text(DENSE)
    x = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    out = onnxir.run(m, {"x": x})
    assert list(out) == ["y", "z"]
    y, z = dense_numpy(x)
    assert out["y"].dtype == np.float32 and out["y"].shape == (5, 2)
    np.testing.assert_allclose(out["y"], y, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["z"], z, rtol=1e-6, atol=1e-6)
    out["y"][0, 0] = 42  # a copy of its own: writable
    # From a path as well.
    assert set(onnxir.run(m, {"x": x[:1]})) == {"y", "z"}


def test_run_from_path(tmp_path):
    p = tmp_path / "dense.onnx"
    onnxir.save(text(DENSE), p)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(onnxir.run(str(p), {"x": x})["y"], dense_numpy(x)[0], rtol=1e-6)
    with pytest.raises(TypeError, match="run: model"):
        onnxir.run(3, {"x": x})


def test_run_float16_and_int_outputs():
    m = text("""<ir_version: 8, opset_import: ["" : 17]>
g (float16[4] h, int32[4] i) => (float16[4] hh, int32[4] ii) {
  hh = Add (h, h)
  ii = Mul (i, i)
}
""")
    h = np.array([0.5, -1, 2, 1000], np.float16)
    i = np.array([1, -2, 3, 40000], np.int32)
    out = onnxir.run(m, {"h": h, "i": i})
    assert out["hh"].dtype == np.float16 and out["hh"].tolist() == (h + h).tolist()
    assert out["ii"].dtype == np.int32 and out["ii"].tolist() == (i * i).tolist()


def test_run_bfloat16_output_widened_to_float32():
    m = text("""<ir_version: 8, opset_import: ["" : 17]>
g (float[3] x) => (bfloat16[3] y) { y = Cast <to = 16> (x) }
""")
    out = onnxir.run(m, {"x": np.array([1.0, 1.00390625, -3.5], np.float32)})
    assert out["y"].dtype == np.float32
    # 1 + 2^-8 is halfway between two bfloat16s and rounds to even (1.0).
    assert out["y"].tolist() == [1.0, 1.0, -3.5]


IF_LOOP = """<ir_version: 8, opset_import: ["" : 17]>
g (bool c, int64 n, float[2] x) => (float[2] y, float[2] acc, float[K,2] steps)
{
  y = If (c) <
    then_branch = th () => (float[2] a) { a = Mul (x, x) },
    else_branch = el () => (float[2] b) { b = Neg (x) }>
  t = Constant <value = bool {1}> ()
  acc, steps = Loop (n, t, x) <body = body (int64 i, bool ci, float[2] cur) => (bool co, float[2] nxt, float[2] seen)
    {
      co = Identity (ci)
      f = Cast <to = 1> (i)
      nxt = Add (cur, f)
      seen = Mul (nxt, x)
    }>
}
"""


@pytest.mark.parametrize("cond", [True, False])
def test_run_if_and_loop(cond):
    m = text(IF_LOOP)
    x = np.array([1.5, -2], np.float32)
    out = onnxir.run(m, {"c": np.array(cond), "n": np.array(4, np.int64), "x": x})
    np.testing.assert_array_equal(out["y"], x * x if cond else -x)
    cur, seen = x.copy(), []
    for i in range(4):
        cur = cur + np.float32(i)
        seen.append(cur * x)
    np.testing.assert_array_equal(out["acc"], cur)
    np.testing.assert_array_equal(out["steps"], np.stack(seen))


def test_wrong_dtype_or_shape_names_the_input():
    m = text(DENSE)
    with pytest.raises(ValueError, match='input "x": element type double, expected float'):
        onnxir.run(m, {"x": np.zeros((2, 3))})
    with pytest.raises(ValueError, match='input "x": dim 1 is 4, expected 3'):
        onnxir.run(m, {"x": np.zeros((2, 4), np.float32)})
    with pytest.raises(ValueError, match='input "x": rank 1, expected 2'):
        onnxir.run(m, {"x": np.zeros(3, np.float32)})
    # Also onnxir.Error and onnxir.EvalValueError.
    with pytest.raises(onnxir.EvalValueError):
        onnxir.run(m, {"x": np.zeros(3, np.float32)})
    with pytest.raises(onnxir.Error, match='"q" is no input of the model'):
        onnxir.run(m, {"x": np.zeros((1, 3), np.float32), "q": np.zeros(1)})
    with pytest.raises(ValueError, match=r'input "x" is not given \(pass it in inputs, or random=True\)'):
        onnxir.run(m)
    with pytest.raises(TypeError, match="inputs must be a dict"):
        onnxir.run(m, [np.zeros((1, 3), np.float32)])


def test_op_without_kernel_is_not_implemented():
    m = text("""<ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
g (float[1,1,3,3] x, float[1,1,2,2] w) => (float[1,1,2,2] y)
{
  a = Relu (x)
  y = com.example.Blur (a, w)
}
""", name="blur.onnxtxt")
    with pytest.raises(NotImplementedError,
                       match=r'not supported: node #1 \(Blur\) in graph "g"') as e:
        onnxir.run(m, random=True)
    assert isinstance(e.value, onnxir.NotSupportedError) and isinstance(e.value, onnxir.Error)
    assert "blur.onnxtxt:" in str(e.value)


def test_max_bytes_refuses_a_large_result():
    m = text(DENSE)
    x = np.zeros((1000, 3), np.float32)
    with pytest.raises(ValueError, match="MatMul"):
        onnxir.run(m, {"x": x}, max_bytes=1000)
    assert onnxir.run(m, {"x": x}, max_bytes=None)["y"].shape == (1000, 2)


def test_random_inputs_reproducible_with_a_seed():
    m = text(DENSE)
    with pytest.warns(UserWarning, match='input "x": dim N taken as 1'):
        a = onnxir.run(m, random=True, seed=5)
    b = onnxir.run(m, random=True, seed=5, bind_dims={"N": 1})
    c = onnxir.run(m, random=True, seed=6, bind_dims={"N": 1})
    np.testing.assert_array_equal(a["z"], b["z"])
    assert not np.array_equal(b["z"], c["z"])
    assert onnxir.run(m, random=True, bind_dims={"N": 7})["y"].shape == (7, 2)


def test_random_inputs_are_onnxir_runs(tmp_path):
    """The generator is onnxir-run's: the same seed gives the same outputs."""
    import os
    import subprocess
    from conftest import child_env
    tool = os.path.join(os.path.dirname(os.environ["ONNX_OPT"]), "..", "onnxir-run", "onnxir-run")
    if not os.path.exists(tool):
        pytest.skip("onnxir-run is not built")
    p = tmp_path / "dense.onnxtxt"
    p.write_text(DENSE)
    subprocess.run([tool, str(p), "--random-inputs", "--seed", "9", "--bind-dim", "N=4",
                    "-o", str(tmp_path / "out")], check=True, capture_output=True, env=child_env())
    ours = onnxir.run(onnxir.load(p), random=True, seed=9, bind_dims={"N": 4})
    np.testing.assert_array_equal(ours["y"], np.load(tmp_path / "out" / "y.npy"))


def test_compare_optimized_model_agrees():
    a = text(DENSE)
    b = a.copy()
    onnxir.run_passes(b, "O2")
    diffs = onnxir.compare(a, b, bind_dims={"N": 3})
    assert [d.name for d in diffs] == ["y", "z"]
    assert all(d.ok and isinstance(d, onnxir.OutputDiff) for d in diffs)
    assert all(d.max_abs <= 1e-6 for d in diffs)
    # The same model as itself: exactly equal.
    assert onnxir.compare(a, a, n=2) == [onnxir.OutputDiff("y", 0.0, 0.0, True, ""),
                                        onnxir.OutputDiff("z", 0.0, 0.0, True, "")]


def test_compare_names_the_differing_output():
    a = text(DENSE)
    b = text(DENSE.replace("y = Relu (s)", "y = Relu (m)"))
    diffs = {d.name: d for d in onnxir.compare(a, b, seed=1, bind_dims={"N": 4})}
    assert diffs["z"].ok and diffs["z"].max_abs == 0
    assert not diffs["y"].ok and diffs["y"].note == "over tolerance"
    assert 0.05 < diffs["y"].max_abs <= 0.2 + 1e-6
    # Given inputs: one run; a tolerance that covers the offset accepts it.
    x = np.full((2, 3), 0.5, np.float32)
    d = {d.name: d for d in onnxir.compare(a, b, inputs={"x": x}, atol=0.25)}
    assert d["y"].ok


def test_compare_shape_and_missing_outputs():
    a = text(DENSE)
    b = text(DENSE.replace("(float[N,2] y, float[N] z)", "(float[N,2] y, float[N,2] z)")
             .replace("z = ReduceSum <keepdims = 0> (g1, ax)", "z = Identity (g1)"))
    diffs = {d.name: d for d in onnxir.compare(a, b, n=1)}
    assert not diffs["z"].ok and diffs["z"].note == "float[1] vs float[1,2]"
    c = text(DENSE.replace(", float[N] z)", ")").replace("  z = ReduceSum", "  zz = ReduceSum"))
    diffs = {d.name: d for d in onnxir.compare(a, c, n=1)}
    assert diffs["y"].ok and not diffs["z"].ok and diffs["z"].note == "missing in b"
    custom = DENSE.replace('["" : 17]', '["" : 17, "com.example" : 1]')
    with pytest.raises(NotImplementedError, match="^b: .*Blur"):
        onnxir.compare(a, text(custom.replace("y = Relu (s)", "y = com.example.Blur (s)")))


def test_evaluation_releases_the_gil():
    """Another thread runs Python while a model evaluates.

    The ticker wakes every 0.5 ms; while the GIL is released it ticks for a
    good part of the run, whatever the kernels' speed (the run is timed).
    With the GIL held it could tick at most once or twice."""
    m = text("""<ir_version: 8, opset_import: ["" : 17]>
g (float[640,640] x) => (float[640,640] y)
{
  a = MatMul (x, x)
  b = MatMul (a, x)
  c = MatMul (b, x)
  y = MatMul (c, x)
}
""")
    x = np.full((640, 640), 1e-3, np.float32)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.0005)

    t = threading.Thread(target=tick)
    t.start()
    try:
        before = len(ticks)
        start = time.monotonic()
        onnxir.run(m, {"x": x})
        elapsed = time.monotonic() - start
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    assert elapsed > 0.02, "the run is too short to tell"
    # A tick costs at least 0.5 ms; a twentieth of the possible ticks (a
    # busy machine delays the ticker), and 5.
    assert during >= max(5, 0.05 * elapsed / 0.0005), (during, elapsed)


# Note [Sequences and optionals in Python] (src/Eval.cpp).
SEQ = """<ir_version: 8, opset_import: ["" : 18]>
g (seq(float[]) xs, optional(float[2]) o, float[1] k) => (seq(float[]) ys, int64 n, bool has,
    optional(float[2]) same, optional(float[1]) none)
{
  ys = SequenceMap <body = b (float[] x, float[1] kk) => (float[] y) { y = Mul (x, kk) }> (xs, k)
  n = SequenceLength (xs)
  has = OptionalHasElement (o)
  same = Identity (o)
  none = Optional <type = float[1]> ()
}
"""


def test_run_takes_and_returns_sequences_and_optionals():
    m = text(SEQ)
    xs = [np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)]
    k = np.array([10], np.float32)
    out = onnxir.run(m, {"xs": xs, "o": None, "k": k})
    assert list(out) == ["ys", "n", "has", "same", "none"]
    assert isinstance(out["ys"], list) and len(out["ys"]) == 2
    assert out["ys"][1].dtype == np.float32 and out["ys"][1].tolist() == [30, 40, 50]
    assert out["n"] == 2 and not out["has"]
    assert out["same"] is None and out["none"] is None
    # An optional input given its element holds it; a tuple is a sequence too.
    out = onnxir.run(m, {"xs": (xs[0],), "o": np.array([7, 8], np.float32), "k": k})
    assert out["n"] == 1 and out["has"]
    assert out["same"].tolist() == [7, 8]
    # An empty list is an empty sequence.
    out = onnxir.run(m, {"xs": [], "o": None, "k": k})
    assert out["ys"] == [] and out["n"] == 0


def test_sequence_and_optional_inputs_of_the_wrong_kind():
    m = text(SEQ)
    k = np.array([10], np.float32)
    with pytest.raises(TypeError, match=r"inputs\['xs'\] is seq\(float\[\]\): give a list"):
        onnxir.run(m, {"xs": np.ones(2, np.float32), "o": None, "k": k})
    with pytest.raises(onnxir.EvalValueError, match=r'input "xs", element #1: element type int64'):
        onnxir.run(m, {"xs": [np.ones(2, np.float32), np.ones(2, np.int64)], "o": None, "k": k})


def test_compare_goes_through_sequences():
    a = text(SEQ)
    b = text(SEQ.replace("y = Mul (x, kk)", "y = Add (x, kk)"))
    inputs = {"xs": [np.array([1, 2], np.float32)], "o": None, "k": np.array([10], np.float32)}
    diffs = {d.name: d for d in onnxir.compare(a, b, inputs)}
    assert not diffs["ys"].ok and diffs["ys"].max_abs == 8  # 10, 20 vs 11, 12
    assert diffs["none"].ok and diffs["n"].ok
    assert all(d.ok for d in onnxir.compare(a, a, inputs))
