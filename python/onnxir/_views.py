"""Live views of a graph's and a node's lists (issue 38 item 6).

Note [Live views]
Graph.inputs, Graph.outputs, Graph.initializers, Node.inputs and
Node.attributes look like a list or a dict, so Python users mutate them; a
copy would silently ignore that. Each is a view: every read asks the IR
anew, and every mutation goes through the IR's own primitives (set_output,
remove_initializer, ...), checked first so that a failure changes nothing.
A mutation the IR has no meaning for raises and names what to call
instead:

  view                  mutable by                        refuses
  Graph.inputs          del, remove, pop, clear           append/insert/[i] = v/whole
                                                          assignment: inputs are created
                                                          by Graph.add_input(name, type)
  Graph.outputs         everything (a new value gets its type: add_output)
  Graph.initializers    g.initializers[name] = array, del whole assignment
  Node.inputs           everything (None is an empty operand slot)
  Node.attributes       everything (whole assignment replaces them all)

Model.opset_imports and Model.metadata write back on each change as well.
The values a view yields (Values, attribute values) are what Node.inputs[i]
and Node.get_attribute give: a list attribute is a copy; assign it back.
"""
from collections.abc import MutableMapping, MutableSequence, Sequence

from . import _onnxir

_MISSING = object()


def _index(i, n, what):
    if not isinstance(i, int):
        raise TypeError("%s indices must be integers or slices, not %s" % (what, type(i).__name__))
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError("%s index out of range" % what)
    return i


class _ListView(MutableSequence):
    """A list-like live view; subclasses say how to read and write it, by
    naming the owner's methods that do."""
    __slots__ = ("_owner",)
    _what = "list"
    _getter = None  # the owner's method giving the current items, a new list
    _setter = None  # the owner's method replacing them (checked before anything changes)
    _adder = None  # the owner's method appending one, when append is more than an insert

    def __init__(self, owner):
        self._owner = owner
        self._get()  # a dead owner raises here, as its other fields do

    def _get(self):
        if self._getter is None:
            raise NotImplementedError
        return getattr(self._owner, self._getter)()

    def _set(self, items):
        if self._setter is None:
            raise NotImplementedError
        getattr(self._owner, self._setter)(items)

    def append(self, v):
        if self._adder is None:
            return super().append(v)
        getattr(self._owner, self._adder)(v)

    def __len__(self):
        return len(self._get())

    def __getitem__(self, i):
        items = self._get()
        if isinstance(i, slice):
            return items[i]
        return items[_index(i, len(items), self._what)]

    def __iter__(self):
        return iter(self._get())

    def __contains__(self, v):
        return any(x == v for x in self._get())

    def __setitem__(self, i, v):
        items = self._get()
        if isinstance(i, slice):
            items[i] = list(v)
        else:
            items[_index(i, len(items), self._what)] = v
        self._set(items)

    def __delitem__(self, i):
        items = self._get()
        if isinstance(i, slice):
            del items[i]
        else:
            del items[_index(i, len(items), self._what)]
        self._set(items)

    def insert(self, i, v):
        items = self._get()
        items.insert(i, v)
        self._set(items)

    def __eq__(self, other):
        if isinstance(other, (_ListView, Sequence)) and not isinstance(other, (str, bytes)):
            return self._get() == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return repr(self._get())


class GraphInputs(_ListView):
    """The inputs of a graph in order (a live view). Deleting an item removes
    that input (it must be unused); inputs are created with
    Graph.add_input(name, elem_type, shape)."""
    __slots__ = ()
    _what = "graph input"
    _getter = "_inputs"

    def _refuse(self):
        raise TypeError("graph inputs are created with Graph.add_input(name, elem_type, shape, "
                        "pos=...) and removed with del graph.inputs[i] or "
                        "Graph.remove_input(value); a Value cannot be placed among them")

    def __setitem__(self, i, v):
        self._refuse()

    def insert(self, i, v):
        self._refuse()

    def __delitem__(self, i):
        items = self._get()
        gone = items[i] if isinstance(i, slice) else [items[_index(i, len(items), self._what)]]
        for v in gone:  # checked first: an input in use is refused before any goes
            if len(v.uses):
                raise _onnxir.Error("remove_input: \"%s\" is still used (replace its uses first)"
                                    % v.name)
        for v in gone:
            self._owner.remove_input(v)

    def reverse(self):
        self._refuse()


class GraphOutputs(_ListView):
    """The outputs of a graph in order (a live view): append, insert, remove,
    item and slice assignment change them. A value that becomes an output
    gets its type written (see Graph.add_output)."""
    __slots__ = ()
    _what = "graph output"
    _getter, _setter, _adder = "_outputs", "_set_outputs", "add_output"


class NodeInputs(_ListView):
    """The operands of a node (a live view; None is an empty slot)."""
    __slots__ = ()
    _what = "node input"
    _getter, _setter, _adder = "_inputs", "set_inputs", "add_input"


class _DictView(MutableMapping):
    """A dict-like live view; a subclass reads it as the dict its _get gives
    now, or says itself how to read it."""
    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner
        len(self)  # a dead owner raises here, as its other fields do

    def _get(self):  # the current items, a new dict
        raise NotImplementedError

    def __getitem__(self, k):
        return self._get()[k]

    def __iter__(self):
        return iter(self._get())

    def __len__(self):
        return len(self._get())

    def __repr__(self):
        return repr(dict(self.items()))


class Initializers(_DictView):
    """{name: Value} of a graph's dense initializers (a live view).
    `g.initializers[name] = array` adds one, or replaces the data of an
    existing one; `del g.initializers[name]` removes one (it must be unused;
    a graph input keeps the input and loses its default)."""
    __slots__ = ()

    def _get(self):
        return self._owner._initializers()

    def __contains__(self, name):
        return name in self._get()

    def __setitem__(self, name, data):
        if not isinstance(name, str):
            raise TypeError("initializer names are str, not " + type(name).__name__)
        v = self._get().get(name)
        if v is None:
            self._owner.add_initializer(name, data)
        else:
            v.const_value = data

    def __delitem__(self, name):
        if name not in self._get():
            raise KeyError(name)
        self._owner.remove_initializer(name)


class Attributes(_DictView):
    """{name: value} of a node's attributes (a live view): item assignment
    sets one, del removes one. Values are copies (a list attribute is a new
    list each time): assign a changed one back."""
    __slots__ = ()

    def __getitem__(self, name):
        v = self._owner.get_attribute(name, _MISSING)
        if v is _MISSING:
            raise KeyError(name)
        return v

    def __iter__(self):
        return iter(self._owner._attribute_names())

    def __len__(self):
        return len(self._owner._attribute_names())

    def __contains__(self, name):
        return isinstance(name, str) and name in self._owner._attribute_names()

    def __setitem__(self, name, value):
        self._owner.set_attribute(name, value)

    def __delitem__(self, name):
        if not self._owner.remove_attribute(name):
            raise KeyError(name)


class _WriteBack(_DictView):
    """A dict field of the model (opset_imports, metadata): each change
    assigns the whole dict back through the field's setter."""
    __slots__ = ("_field",)

    def __init__(self, owner, field):
        self._field = field
        super().__init__(owner)

    def _get(self):
        return getattr(self._owner, self._field)

    def __setitem__(self, k, v):
        d = self._get()
        d[k] = v
        setattr(self._owner, self._field, d)

    def __delitem__(self, k):
        d = self._get()
        del d[k]
        setattr(self._owner, self._field, d)


def _refuse_inputs(graph, value):
    raise AttributeError("graph inputs cannot be assigned as a whole: add them with "
                         "Graph.add_input(name, elem_type, shape) and remove them with "
                         "del graph.inputs[i] or Graph.remove_input(value)")


def _refuse_initializers(graph, value):
    raise AttributeError("graph initializers cannot be assigned as a whole: set them one by "
                         "one (graph.initializers[name] = array) and remove them with "
                         "del graph.initializers[name]")


def _set_attributes(node, value):
    node._set_attributes(dict(value))


def _install():
    G, N, M = _onnxir.Graph, _onnxir.Node, _onnxir.Model
    G.inputs = property(GraphInputs, _refuse_inputs, doc=GraphInputs.__doc__)
    G.outputs = property(GraphOutputs, lambda g, vs: g._set_outputs(list(vs)),
                         doc=GraphOutputs.__doc__)
    G.initializers = property(Initializers, _refuse_initializers, doc=Initializers.__doc__)
    N.inputs = property(NodeInputs, lambda n, vs: n.set_inputs(list(vs)), doc=NodeInputs.__doc__)
    N.attributes = property(Attributes, _set_attributes, doc=Attributes.__doc__)
    M.opset_imports = property(lambda m: _WriteBack(m, "_opset_imports"),
                               lambda m, d: setattr(m, "_opset_imports", dict(d)),
                               doc="{domain: version} ('' is the default ONNX domain); a live "
                                   "view: item assignment and del change the imports.")
    M.metadata = property(lambda m: _WriteBack(m, "_metadata"),
                          lambda m, d: setattr(m, "_metadata", dict(d)),
                          doc="metadata_props as {key: value}; a live view: item assignment "
                              "and del change them.")
