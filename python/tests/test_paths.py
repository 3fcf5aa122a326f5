"""File system paths (Note [Path arguments] in python/src/Tools.cpp): every
function taking a path takes str, bytes, pathlib.Path and an os.PathLike
returning str or bytes; another type is a TypeError naming the argument."""
import os
import pathlib

import numpy as np
import pytest

import onnxir
from onnxir import _onnxir


class BytesPath:
    """An os.PathLike whose __fspath__ gives bytes."""
    def __init__(self, p):
        self.p = os.fsencode(p)

    def __fspath__(self):
        return self.p


class StrPath:
    def __init__(self, p):
        self.p = os.fsdecode(p)

    def __fspath__(self):
        return self.p


FORMS = {
    "str": str,
    "bytes": os.fsencode,
    "Path": pathlib.Path,
    "PathLike-bytes": BytesPath,
    "PathLike-str": StrPath,
}


def small_model(n=4096):
    m = onnxir.Model()
    m.opset_imports = {"": 17}
    m.ir_version = 8
    m.graph.add_output(m.graph.add_initializer("w", np.arange(n, dtype=np.float32)))
    return m


def weights(m):
    return np.asarray(m.graph.initializers["w"].const_value)


@pytest.mark.parametrize("form", FORMS)
def test_save_and_load_take_every_path_form(tmp_path, form):
    p = tmp_path / "m.onnx"
    onnxir.save(small_model(), FORMS[form](p))
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]        # not "b'.../m.onnx'"
    assert (weights(_onnxir.load(FORMS[form](p))) == np.arange(4096)).all()
    if form != "bytes":                                       # (bytes are the model to onnxir.load)
        assert (weights(onnxir.load(FORMS[form](p))) == np.arange(4096)).all()
    # Text, chosen by the extension of a path in that form.
    t = tmp_path / "m.onnxtxt"
    onnxir.save(small_model(4), FORMS[form](t))
    assert t.read_text().lstrip().startswith("<")
    assert (weights(_onnxir.load(FORMS[form](t))) == np.arange(4)).all()


@pytest.mark.parametrize("form", FORMS)
def test_external_data_and_base_dir_take_every_path_form(tmp_path, form):
    onnxir.save(small_model(), tmp_path / "m.onnx", external_data=FORMS[form]("m.data"))
    assert sorted(os.listdir(tmp_path)) == ["m.data", "m.onnx"]
    data = (tmp_path / "m.onnx").read_bytes()
    for m in (onnxir.loads(data, base_dir=FORMS[form](tmp_path)),
              onnxir.load(data, base_dir=FORMS[form](tmp_path))):
        assert m.graph.initializers["w"].const_value.is_external
        assert (weights(m) == np.arange(4096)).all()
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(str(tmp_path / "m.onnx"), load_external_data=False)
    assert (weights(onnxir.from_onnx(proto, base_dir=FORMS[form](tmp_path))) == np.arange(4096)).all()
    assert (weights(onnxir.load(proto, base_dir=FORMS[form](tmp_path))) == np.arange(4096)).all()


@pytest.mark.parametrize("form", FORMS)
def test_save_inputs_take_every_path_form(tmp_path, form):
    # `inputs` names the model files this run read: the data file may not be one.
    src = tmp_path / "in.onnx"
    onnxir.save(small_model(), src)
    m = onnxir.load(src)
    with pytest.raises(onnxir.Error, match="is the input model"):
        onnxir.save(m, tmp_path / "out.onnx", external_data="in.onnx", inputs=[FORMS[form](src)])
    assert not (tmp_path / "out.onnx").exists()
    onnxir.save(m, tmp_path / "out.onnx", inputs=(FORMS[form](src),))
    assert (weights(onnxir.load(tmp_path / "out.onnx")) == np.arange(4096)).all()


def test_optional_paths_take_none_for_none(tmp_path):
    onnxir.save(small_model(), tmp_path / "m.onnx", external_data=None, inputs=None)
    onnxir.save(small_model(), tmp_path / "n.onnx", external_data="")
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "n.onnx"]
    data = (tmp_path / "m.onnx").read_bytes()
    assert (weights(onnxir.loads(data, base_dir=None)) == np.arange(4096)).all()
    assert (weights(onnxir.load(data, base_dir="")) == np.arange(4096)).all()


def test_wrong_path_types_are_type_errors(tmp_path):
    m = small_model(4)
    for bad in (42, None, 1.5, ["m.onnx"]):
        with pytest.raises(TypeError, match=r"save: path must be a path \(str, bytes or os.PathLike\), not "
                           + type(bad).__name__):
            onnxir.save(m, bad)
        with pytest.raises(TypeError, match=r"load: path must be a path .*, not " + type(bad).__name__):
            _onnxir.load(bad)
    with pytest.raises(TypeError, match="expected a path, bytes or an onnx.ModelProto, not int"):
        onnxir.load(42)
    with pytest.raises(TypeError, match="expected a path, bytes or an onnx.ModelProto, not NoneType"):
        onnxir.load(None)
    with pytest.raises(TypeError, match="save: external_data must be a path .*, not int"):
        onnxir.save(m, tmp_path / "m.onnx", external_data=3)
    with pytest.raises(TypeError, match="loads: base_dir must be a path .*, not int"):
        onnxir.loads(onnxir.dumps(m), base_dir=3)
    with pytest.raises(TypeError, match=r"save: inputs\[1\] must be a path .*, not NoneType"):
        onnxir.save(m, tmp_path / "m.onnx", inputs=["a.onnx", None])
    for bad in ("a.onnx", b"a.onnx", pathlib.Path("a.onnx"), 7):
        with pytest.raises(TypeError, match="save: inputs must be a list of paths, not "
                           + type(bad).__name__):
            onnxir.save(m, tmp_path / "m.onnx", inputs=bad)
    # A __fspath__ that returns neither str nor bytes.
    class Odd:
        def __fspath__(self):
            return 3
    with pytest.raises(TypeError, match="save: path must be a path .*, not Odd"):
        onnxir.save(m, Odd())
    assert os.listdir(tmp_path) == []


def test_nul_bytes_are_refused_not_cut(tmp_path):
    m = small_model(4)
    for form in (str, os.fsencode, BytesPath):
        with pytest.raises(ValueError, match="save: path contains a NUL byte"):
            onnxir.save(m, form(str(tmp_path / "a.onnx") + "\0b"))
        with pytest.raises(ValueError, match="load: path contains a NUL byte"):
            _onnxir.load(form(str(tmp_path / "a.onnx") + "\0b"))
    assert os.listdir(tmp_path) == []


def test_undecodable_bytes_paths(tmp_path):
    # A name that is not UTF-8: saved under exactly those bytes, read back from them
    # (or from os.fsdecode's str of them), and shown escaped in a message.
    d = os.fsencode(tmp_path)
    name = d + b"/\xff\xfe.onnx"
    onnxir.save(small_model(4), name)
    assert os.listdir(d) == [b"\xff\xfe.onnx"]
    assert (weights(_onnxir.load(name)) == np.arange(4)).all()
    assert (weights(onnxir.load(os.fsdecode(name))) == np.arange(4)).all()
    assert (weights(onnxir.load(BytesPath(name))) == np.arange(4)).all()
    with pytest.raises(onnxir.Error, match=r"\\xff\\xfd-missing\.onnx"):
        _onnxir.load(d + b"/\xff\xfd-missing.onnx")


def test_bytes_naming_a_file_say_they_are_read_as_the_model(tmp_path):
    p = tmp_path / "m.onnx"
    onnxir.save(small_model(4), p)
    with pytest.raises(onnxir.Error, match=r"bytes are read as the model itself; to load the file "
                       r"'.*m\.onnx', pass it as os\.fsdecode\(path\) or a pathlib\.Path"):
        onnxir.load(os.fsencode(p))
    with pytest.raises(onnxir.Error) as e:
        onnxir.load(b"\x08\x07\x12\xff\xff\xff\xff\x0f garbage")
    assert "os.fsdecode" not in str(e.value)
