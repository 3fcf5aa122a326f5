"""Writes MODEL's main-graph nodes in another topological order, picked at
random (a fixed seed) among the nodes whose inputs are all defined, for
onnxir-diff's tests: node order must not matter to the comparison.

    diff-shuffle.py IN.onnx OUT.onnx [SEED]
"""
import random
import sys

import onnx

m = onnx.load(sys.argv[1])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
nodes = list(m.graph.node)
defined = {i.name for i in m.graph.input} | {t.name for t in m.graph.initializer} | {""}
order, left = [], list(range(len(nodes)))
while left:
    ready = [i for i in left if all(x in defined for x in nodes[i].input)]
    pick = rng.choice(ready)
    order.append(pick)
    left.remove(pick)
    defined.update(nodes[pick].output)
if order == sorted(order):
    sys.exit("diff-shuffle.py: the order did not change (try another seed)")
del m.graph.node[:]
m.graph.node.extend(nodes[i] for i in order)
print("order:", order, file=sys.stderr)
onnx.save(m, sys.argv[2])
