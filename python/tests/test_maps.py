"""ZipMap's sequence of maps from onnxir.run: a list of dicts, as onnxruntime returns it
(Note [ZipMap and CastMap], lib/Eval/Sequences.cpp; Note [Evaluator values])."""
import numpy as np
import pytest

import onnxir

# sklearn-onnx's classifier tail: LinearClassifier, then ZipMap of its scores.
MODEL = """<ir_version: 8, opset_import: ["" : 18, "ai.onnx.ml" : 3]>
g (float[N,2] x) => (int64[N] label, seq(map({key}, float)) probabilities, float[1,3] dense)
{{
  label, scores = ai.onnx.ml.LinearClassifier <coefficients = [1.0, 0.5, -1.0, 2.0, 0.5, 0.5],
                                               classlabels_ints = [1, 2, 0],
                                               intercepts = [-1.0, -2.0, 1.0]> (x)
  probabilities = ai.onnx.ml.ZipMap <{labels}> (scores)
  ints = ai.onnx.ml.ZipMap <classlabels_int64s = [30, 10, 20]> (scores)
  zero = Constant <value = int64 {{0}}> ()
  m = SequenceAt (ints, zero)
  dense = ai.onnx.ml.CastMap <cast_to = "TO_FLOAT"> (m)
}}
"""


def scores(x):
    w = np.array([[1, 0.5], [-1, 2], [0.5, 0.5]], np.float32)
    return x @ w.T + np.array([-1, -2, 1], np.float32)


@pytest.mark.parametrize("key,labels,names", [
    ("string", 'classlabels_strings = ["cat", "dog", "eel"]', ["cat", "dog", "eel"]),
    ("int64", "classlabels_int64s = [7, 8, 9]", [7, 8, 9]),
])
def test_zipmap_gives_a_list_of_dicts(key, labels, names):
    m = onnxir.loads(MODEL.format(key=key, labels=labels).encode(), format="text", name="zm.onnxtxt")
    x = np.array([[1, 2], [-1, 0.5], [0.25, -3]], np.float32)
    out = onnxir.run(m, {"x": x})
    s = scores(x)
    probs = out["probabilities"]
    assert isinstance(probs, list) and len(probs) == 3
    for row, d in zip(s, probs):
        assert isinstance(d, dict)
        assert list(d) == names  # the labels' order
        assert all(type(k) is type(names[0]) for k in d)
        assert all(type(v) is float for v in d.values())
        np.testing.assert_allclose(list(d.values()), row, rtol=1e-6)
    # CastMap of row 0's int-keyed map: the values in ascending key order.
    np.testing.assert_allclose(out["dense"], s[0][[1, 2, 0]][None, :], rtol=1e-6)
    # compare() walks maps too: a model against itself agrees.
    assert all(d.ok for d in onnxir.compare(m, m, inputs={"x": x}))
