"""freeze-initializer-inputs from Python, and the note of onnxir.inspect
(onnx-opt --summary's) when initializers that are also graph inputs kept
nodes from folding (issue 47 item 3)."""
import pathlib
import warnings

import pytest

import onnxir

MODEL = str(pathlib.Path(__file__).resolve().parents[2] / "test" / "Passes" /
            "freeze-initializer-inputs" / "freeze-names.onnxtxt")
NOTE = "freeze-initializer-inputs makes them constants"


def test_inspect_notes_blocking_defaults():
    with pytest.warns(UserWarning, match=r"initializers that are also graph inputs \(2 here.*" + NOTE):
        onnxir.inspect(MODEL, pipeline="O2")


def test_no_note_once_frozen_or_without_a_pipeline():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = onnxir.inspect(MODEL, pipeline="freeze-initializer-inputs,O2")
        onnxir.inspect(MODEL)
    assert [i["name"] for i in got["inputs"]] == ["x"]


def test_run_passes_freezes_the_inputs_named():
    m = onnxir.load(MODEL)
    onnxir.run_passes(m, "freeze-initializer-inputs{names=s}")
    assert [v.name for v in m.graph.inputs] == ["x", "w"]
    with pytest.raises(onnxir.Error, match='"q" is not an input of graph "g" with an initializer'):
        onnxir.run_passes(m, "freeze-initializer-inputs{names=q}")
