"""onnxir: ONNX models as a mutable SSA graph IR, its passes and lossless I/O.

    import onnxir
    m = onnxir.load("model.onnx")
    for n in m.graph.nodes: ...
    onnxir.run_passes(m, "O2")
    onnxir.save(m, "out.onnx")

The object model (Model, Graph, Node, Value, Tensor) and the tools live in
the compiled core, onnxir._onnxir; this file adds the conversions from and to
onnx.ModelProto (when the `onnx` package is installed).
"""
import os as _os

from ._onnxir import (  # noqa: F401
    Error, VerificationWarning, Model, Graph, Node, Value, Tensor, NodeList, UseList,
    loads, save, dumps, verify, diagnostics, schema_warnings, run_passes,
    infer_shapes, list_passes, list_options,
)
from . import _onnxir
from . import _views

_views._install()

__all__ = [
    "Error", "VerificationWarning", "Model", "Graph", "Node", "Value", "Tensor", "NodeList",
    "UseList", "load", "loads", "save", "dumps", "verify", "diagnostics", "schema_warnings",
    "run_passes", "infer_shapes", "list_passes", "list_options", "from_onnx", "to_onnx",
]


def load(source, format="auto", allow_external_links=False, base_dir=None, verify="default"):
    """Loads a model from a file (a path: str, or an os.PathLike returning
    str or bytes), from the model itself as bytes (bytes, bytearray or
    memoryview; external data is then read relative to `base_dir`, a path or
    None), or from an onnx.ModelProto (through its serialized bytes). Bytes
    are the model, never its file name: pass a name held as bytes as
    os.fsdecode(name) or a pathlib.Path (save takes bytes paths as they are).

    The model is checked as onnx-opt checks it on load: `verify` 'default'
    (structure and severe schema problems raise onnxir.Error, type
    constraints are onnxir.VerificationWarning), 'structure', 'schema', or
    'none' (nothing: a model to repair)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        try:
            return _onnxir.loads(data, format=format, base_dir=base_dir,
                                 allow_external_links=allow_external_links, verify=verify)
        except Error as e:
            if _names_a_file(data):
                raise Error("%s\n  (bytes are read as the model itself; to load the file "
                            "%r, pass it as os.fsdecode(path) or a pathlib.Path)"
                            % (e, _os.fsdecode(data))) from None
            raise
    if hasattr(source, "SerializeToString"):
        return from_onnx(source, base_dir=base_dir, verify=verify)
    if isinstance(source, (str, _os.PathLike)):
        return _onnxir.load(source, format=format,
                            allow_external_links=allow_external_links, verify=verify)
    raise TypeError("onnxir.load: expected a path, bytes or an onnx.ModelProto, not "
                    + type(source).__name__)


def _names_a_file(data):
    """Whether bytes that failed to parse as a model are the name of a file
    (the likely mistake: a path as bytes); only for the error message."""
    if not data or len(data) > 4096 or b"\0" in data:
        return False
    try:
        return _os.path.isfile(data)
    except (OSError, ValueError):
        return False


def from_onnx(proto, base_dir=None, verify="default"):
    """An onnxir.Model from an onnx.ModelProto (serialized, then lifted);
    external data is read relative to `base_dir` (a path, or None); checked
    as load checks (`verify`)."""
    return _onnxir.loads(proto.SerializeToString(), format="binary", base_dir=base_dir,
                         name="<ModelProto>", verify=verify)


def to_onnx(model):
    """The model as an onnx.ModelProto (needs the `onnx` package)."""
    import onnx
    proto = onnx.ModelProto()
    proto.ParseFromString(_onnxir.dumps(model))
    return proto
