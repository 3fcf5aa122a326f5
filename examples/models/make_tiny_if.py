#!/usr/bin/python3
"""Writes tiny_if.onnx, the quick-start example model.

A small gated MLP: y = relu(x @ W1 + b1); if (sum(y) > t) then y @ W2 else y.
It has what onnx-opt's first passes care about: an If whose branches use
outer-scope values directly (W2 is used only inside the then-branch), dead
nodes (a Sigmoid and a Transpose nobody reads, and an unused initializer),
and nodes listed out of dependency order (Relu before its producer).
Run with Debian's python3-onnx: /usr/bin/python3 make_tiny_if.py
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
W1 = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "W1")
b1 = numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "b1")
W2 = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "W2")
t = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "threshold")
unused = numpy_helper.from_array(np.zeros((16,), dtype=np.float32), "unused_weight")

then_g = helper.make_graph(
    [helper.make_node("MatMul", ["y", "W2"], ["z_then"], name="then_matmul")],
    "then_branch", [], [helper.make_tensor_value_info("z_then", TensorProto.FLOAT, None)])
else_g = helper.make_graph(
    [helper.make_node("Identity", ["y"], ["z_else"], name="else_identity")],
    "else_branch", [], [helper.make_tensor_value_info("z_else", TensorProto.FLOAT, None)])

nodes = [
    helper.make_node("Relu", ["h"], ["y"], name="relu"),          # listed before its producer
    helper.make_node("MatMul", ["x", "W1"], ["xw"], name="matmul1"),
    helper.make_node("Add", ["xw", "b1"], ["h"], name="add1"),
    helper.make_node("Sigmoid", ["h"], ["dead_sigmoid"], name="dead1"),
    helper.make_node("Transpose", ["dead_sigmoid"], ["dead_t"], name="dead2"),
    helper.make_node("ReduceSum", ["y"], ["s"], name="score", keepdims=0),
    helper.make_node("Greater", ["s", "threshold"], ["gate"], name="gate"),
    helper.make_node("If", ["gate"], ["out"], name="gated", then_branch=then_g,
                     else_branch=else_g),
]
graph = helper.make_graph(
    nodes, "tiny_if",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 8])],
    initializer=[W1, b1, W2, t, unused])
model = helper.make_model(graph, producer_name="onnxir-examples",
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.save(model, "tiny_if.onnx")
