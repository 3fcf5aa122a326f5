"""The tools: load/save (paths, bytes, text, external data, onnx.ModelProto),
verification, passes and shape inference, with onnx-opt's messages."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

import onnxir
from conftest import TEXT, child_env


def test_load_save_binary_and_text(tmp_path, text_model):
    p = tmp_path / "m.onnx"
    onnxir.save(text_model, p)
    m = onnxir.load(p)
    assert [n.op_type for n in m.graph.nodes] == ["Relu", "Add", "If"]
    assert onnxir.load(str(p)).graph.num_nodes == 3
    assert onnxir.load(p.read_bytes()).graph.num_nodes == 3
    assert onnxir.load(bytearray(p.read_bytes())).graph.num_nodes == 3
    t = tmp_path / "m.onnxtxt"
    onnxir.save(m, t)                            # text by extension, lossless
    assert t.read_text().lstrip().startswith("<")
    assert onnxir.dumps(onnxir.load(t)) == onnxir.dumps(m)
    onnxir.save(m, tmp_path / "readable.txt", format="text", elide_tensors_larger_than=2)
    onnxir.save(m, tmp_path / "std.txt", format="text", standard_only=True)
    assert onnxir.load(tmp_path / "std.txt", format="text").graph.num_nodes == 3
    onnxir.save(m, tmp_path / "lossless.txt", format="text", lossless=True)
    assert onnxir.dumps(onnxir.load(tmp_path / "lossless.txt", format="text")) == onnxir.dumps(m)
    assert onnxir.dumps(m, format="text").startswith(b"<")
    assert b"..." not in onnxir.dumps(m, format="text", lossless=False)
    # A binary file with a text name, read as binary on request.
    (tmp_path / "b.onnxtxt").write_bytes(p.read_bytes())
    assert onnxir.load(tmp_path / "b.onnxtxt", format="binary").graph.num_nodes == 3
    with pytest.raises(onnxir.Error):
        onnxir.load(tmp_path / "b.onnxtxt")


def test_round_trip_is_lossless_on_real_models():
    from conftest import SHARED
    p = SHARED / "models" / "real" / "oww_melspectrogram.onnx"
    data = p.read_bytes()
    assert onnxir.dumps(onnxir.load(data)) == onnxir.dumps(onnxir.load(p))


def test_external_data(tmp_path):
    m = onnxir.Model()
    m.opset_imports = {"": 17}
    m.ir_version = 8
    g = m.graph
    big = np.arange(4096, dtype=np.float32)
    w = g.add_initializer("w", big)
    g.add_output(w)
    onnxir.save(m, tmp_path / "m.onnx", external_data="m.data", external_threshold=1024)
    assert (tmp_path / "m.data").stat().st_size >= big.nbytes
    assert (tmp_path / "m.onnx").stat().st_size < 1024
    m2 = onnxir.load(tmp_path / "m.onnx")
    t = m2.graph.initializers["w"].const_value
    assert t.is_external
    a = np.asarray(t)
    assert (a == big).all() and not a.flags.writeable
    # From bytes, external data needs a base directory.
    data = (tmp_path / "m.onnx").read_bytes()
    m3 = onnxir.loads(data, base_dir=str(tmp_path))
    assert (np.asarray(m3.graph.initializers["w"].const_value) == big).all()
    m4 = onnxir.loads(data)
    with pytest.raises(onnxir.Error, match="no base directory"):
        np.asarray(m4.graph.initializers["w"].const_value)


def test_text_bytes_take_the_external_link_policy(tmp_path):
    # Text from bytes follows allow_external_links as binary does (the text
    # path used to ignore it and refuse every link out of base_dir).
    (tmp_path / "blobs").mkdir()
    (tmp_path / "model").mkdir()
    big = np.arange(4, dtype=np.float32)
    (tmp_path / "blobs" / "w.bin").write_bytes(big.tobytes())
    os.symlink("../blobs/w.bin", tmp_path / "model" / "link.bin")
    text = (b'<ir_version: 9, opset_import: ["" : 19]>\n'
            b'g (float[4] X) => (float[4] Y)\n'
            b'<float[4] W = ["location": "link.bin", "offset": "0", "length": "16"]>\n'
            b'{\n  Y = Add(X, W)\n}\n')
    base = str(tmp_path / "model")
    with pytest.raises(onnxir.Error, match="allow-external-links"):
        onnxir.load(text, base_dir=base)
    for fmt in ("auto", "text"):
        m = onnxir.load(text, format=fmt, base_dir=base, allow_external_links=True)
        assert (np.asarray(m.graph.initializers["W"].const_value) == big).all()


def test_onnx_model_proto(text_model):
    onnx = pytest.importorskip("onnx")
    proto = onnxir.to_onnx(text_model)
    assert isinstance(proto, onnx.ModelProto) and len(proto.graph.node) == 3
    m = onnxir.load(proto)
    assert onnxir.dumps(m) == proto.SerializeToString()
    assert onnxir.from_onnx(proto).graph.num_nodes == 3


def test_bad_input_errors(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(onnxir.Error, match=str(missing)):
        onnxir.load(missing)
    with pytest.raises(onnxir.Error, match="empty"):
        onnxir.load("")
    with pytest.raises(onnxir.Error):
        onnxir.loads(b"\x08\x07\x12\xff\xff\xff\xff\x0f garbage")
    bad_text = b"<ir_version: 8>\ng (float x) => (float y) {\n  y = Add (x, \n}"
    with pytest.raises(onnxir.Error, match=r"bad\.onnxtxt:\d+:\d+:"):
        onnxir.loads(bad_text, format="text", name="bad.onnxtxt")
    with pytest.raises(onnxir.Error, match="format must be"):
        onnxir.load(missing, format="xml")
    with pytest.raises(TypeError):
        onnxir.load(42)
    m = onnxir.Model()
    with pytest.raises(onnxir.Error):
        onnxir.save(m, tmp_path / "no" / "such" / "dir" / "m.onnx")
    assert not (tmp_path / "no").exists()
    with pytest.raises(onnxir.Error, match="empty"):
        onnxir.save(m, "")


def test_failed_save_leaves_the_old_file(tmp_path, text_model):
    out = tmp_path / "out.onnx"
    out.write_bytes(b"old")
    # A model that cannot be lowered: an attribute reference outside a function.
    text_model.graph.create_node("Neg", inputs=[text_model.graph.lookup("x")])
    onnxir.save(text_model, out)
    assert out.read_bytes() != b"old"


def test_verify_messages_match_onnx_opt(tmp_path, onnx_opt):
    bad = tmp_path / "bad.onnxtxt"
    bad.write_text("""<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = Add (x, t)
  t = Neg (y)
}""")
    r = subprocess.run([onnx_opt, str(bad), "-o", str(tmp_path / "o.onnx")],
                       capture_output=True, text=True, env=child_env())
    assert r.returncode == 1
    with pytest.raises(onnxir.Error) as e:
        onnxir.load(bad)                                      # load checks as onnx-opt does
    assert r.stderr.strip() == "onnx-opt: error: " + str(e.value)
    m = onnxir.load(bad, verify="none")
    with pytest.raises(onnxir.Error) as e:
        onnxir.verify(m, name=str(bad), check_order=False)   # onnx-opt lets -topo sort
    assert r.stderr.strip() == "onnx-opt: error: " + str(e.value)
    kinds = {k for k, _ in onnxir.diagnostics(m)}
    assert "cycle" in kinds
    assert onnxir.diagnostics(m, check_order=False, max_diagnostics=1)


def test_verify_schema(text_model):
    onnxir.verify(text_model)
    onnxir.verify(text_model, schema=True)
    g = text_model.graph
    g.create_node("Relu", inputs=[g.lookup("x"), g.lookup("x")])     # one input too many
    onnxir.verify(text_model)
    with pytest.raises(onnxir.Error, match=r"node #\d+ .*\(Relu\).*\[schema\]"):
        onnxir.verify(text_model, schema=True)
    g.create_node("NoSuchOp", inputs=[g.lookup("x")])
    assert any("NoSuchOp" in w for w in onnxir.schema_warnings(text_model))


def test_run_passes(text_model):
    g = text_model.graph
    g.create_node("Neg", inputs=[g.lookup("x")])
    assert onnxir.run_passes(text_model, "dce") is True
    assert onnxir.run_passes(text_model, "dce") is False
    assert onnxir.run_passes(text_model, "fold-constants{size-limit=1MiB},topo") in (True, False)
    assert onnxir.run_passes(text_model, "rename", options={"rename-mode": "sanitize"}) in (True, False)
    with pytest.raises(onnxir.Error, match="pipeline:1:5: unknown pass 'dcx'"):
        onnxir.run_passes(text_model, "dce,dcx")
    with pytest.raises(onnxir.Error, match="no pass that takes it"):
        onnxir.run_passes(text_model, "dce", options={"rename-mode": "sanitize"})
    names = [n for n, _ in onnxir.list_passes()]
    assert {"dce", "topo", "O1", "O2", "infer-shapes"} <= set(names)
    onnxir.run_passes(text_model, "O2", verify_each=False, verify_schema=True)
    onnxir.verify(text_model)


SYM = b"""<ir_version: 8, opset_import: ["" : 17]>
g (float[N,C] x, float[N,C] z) => (y) { t = Relu (x)  y = Concat <axis = 0> (t, z) }"""


SYM_DECLARED = b"""<ir_version: 8, opset_import: ["" : 17]>
g (float[3,C] x, float[3,C] z) => (float[7,C] y) { t = Relu (x)  y = Concat <axis = 0> (t, z) }"""


def test_infer_shapes():
    m = onnxir.loads(SYM)
    changed, warnings = onnxir.infer_shapes(m)
    assert changed and warnings == []
    assert m.graph.outputs[0].shape == ("2*N", "C")
    onnxir.infer_shapes(m, bind_dims={"C": 4})
    assert m.graph.outputs[0].shape == ("2*N", 4)
    onnxir.infer_shapes(m, input_shapes={"x": [3, 4], "z": "3,4"})
    assert m.graph.outputs[0].shape == (6, 4)
    # x is declared (3, 4) now: a given shape with another static dim is an error naming the input,
    # and the model is left as it was.
    with pytest.raises(onnxir.Error, match=r'input "x" is declared float\[3,4\]; the given shape \[5,4\]'):
        onnxir.infer_shapes(m, input_shapes="x:5,4;z:5,4")
    assert m.graph.outputs[0].shape == (6, 4)
    # A declared output the inference contradicts is a warning, or in strict mode an error.
    m3 = onnxir.loads(SYM_DECLARED)
    changed, warnings = onnxir.infer_shapes(m3)
    assert any('"y"' in w for w in warnings)
    with pytest.raises(onnxir.Error, match='contradicts'):
        onnxir.infer_shapes(onnxir.loads(SYM_DECLARED), strict=True)
    m2 = onnxir.loads(SYM)
    onnxir.infer_shapes(m2, input_shapes="x:N,4;z:N,4", bind_dims="N=5", outputs_only=True)
    assert m2.graph.outputs[0].shape == (10, 4)
    with pytest.raises(onnxir.Error, match="nope"):
        onnxir.infer_shapes(m, input_shapes={"nope": [1]})
