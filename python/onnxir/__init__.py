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
    Error, Model, Graph, Node, Value, Tensor, NodeList, UseList,
    loads, save, dumps, verify, diagnostics, schema_warnings, run_passes,
    infer_shapes, list_passes,
)
from . import _onnxir

__all__ = [
    "Error", "Model", "Graph", "Node", "Value", "Tensor", "NodeList", "UseList",
    "load", "loads", "save", "dumps", "verify", "diagnostics", "schema_warnings",
    "run_passes", "infer_shapes", "list_passes", "from_onnx", "to_onnx",
]


def load(source, format="auto", allow_external_links=False, base_dir=""):
    """Loads a model from a path (str or os.PathLike), from bytes, or from an
    onnx.ModelProto (through its serialized bytes)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _onnxir.loads(bytes(source), format=format, base_dir=base_dir,
                             allow_external_links=allow_external_links)
    if hasattr(source, "SerializeToString"):
        return from_onnx(source, base_dir=base_dir)
    if isinstance(source, (str, _os.PathLike)):
        return _onnxir.load(source, format=format,
                            allow_external_links=allow_external_links)
    raise TypeError("onnxir.load: expected a path, bytes or an onnx.ModelProto, not "
                    + type(source).__name__)


def from_onnx(proto, base_dir=""):
    """An onnxir.Model from an onnx.ModelProto (serialized, then lifted)."""
    return _onnxir.loads(proto.SerializeToString(), format="binary", base_dir=base_dir,
                         name="<ModelProto>")


def to_onnx(model):
    """The model as an onnx.ModelProto (needs the `onnx` package)."""
    import onnx
    proto = onnx.ModelProto()
    proto.ParseFromString(_onnxir.dumps(model))
    return proto
