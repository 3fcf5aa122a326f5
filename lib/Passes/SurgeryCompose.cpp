//===- SurgeryCompose.cpp - Merge two models into one ---------------------===//
//
// Note [Composing models] in onnxir/Passes/Surgery.h.
//
// Each model has its own Context (interned names, uniqued types), so B's
// main graph and functions are rebuilt in A's: types are made again from
// their structure, symbolic dims from their names, and subgraphs are built
// in place, nested under the attribute that holds them, so that their names
// are checked in the right scope. Tensors are copied as tensors: external
// data stays a view of its file.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Passes/Surgery.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <map>
#include <set>

namespace onnxir {

namespace {

/// Rebuilds IR of one model in another model's context.
class Copier {
public:
  explicit Copier(Context &dst) : dst_(dst) {}

  llvm::DenseMap<const Value *, Value *> map;

  const Type *type(const Type *t) {
    if (!t) return nullptr;
    TypeSpec s;
    s.kind = t->kind();
    s.hasElem = t->hasElemType();
    s.elem = t->elemTypeRaw();
    s.hasShape = t->hasShape();
    for (const Dim &d : t->dims()) s.dims.push_back(dim(d));
    s.inner = type(t->elementType());
    s.opaqueDomain = t->opaqueDomain().str();
    s.opaqueName = t->opaqueName().str();
    s.denotation = t->denotation().str();
    s.extras = t->extras().str();
    return dst_.getType(s);
  }

  Dim dim(const Dim &d) {
    Dim out = d.isSymbolic() ? dst_.symbolicDim(d.param) : d.isKnown() ? Dim::known(d.value) : Dim();
    if (!d.denotation.empty()) out.denotation = dst_.intern(d.denotation);
    return out;
  }

  absl::StatusOr<Value *> value(const Value *v) const {
    if (!v) return nullptr;
    auto it = map.find(v);
    if (it == map.end())
      return absl::InternalError(absl::StrCat("compose: value \"", v->name().str(),
                                              "\" is read before it is defined"));
    return it->second;
  }

  /// The graph-level fields, inputs, initializers, nodes, outputs and
  /// value_info of `src` into `dst` (a fresh subgraph or function body).
  absl::Status graph(const Graph &src, Graph &dst, bool header = true) {
    if (header) {
      dst.name = src.name;
      dst.docString = src.docString;
      dst.metadata = src.metadata;
      dst.extras = src.extras;
    }
    dst.quantizationAnnotations.insert(dst.quantizationAnnotations.end(),
                                       src.quantizationAnnotations.begin(),
                                       src.quantizationAnnotations.end());
    for (const Value *v : src.inputs())
      if (!map.count(v))
        if (absl::Status s = input(*v, dst); !s.ok()) return s;
    for (const Value *v : src.initializers())
      if (!v->isGraphInput() && !map.count(v)) {
        auto c = dst.addInitializer(v->name(), *v->initializer());
        if (!c.ok()) return c.status();
        (*c)->setType(type(v->type()));
        map[v] = *c;
      }
    for (const Value *v : src.sparseInitializers())
      if (!v->isGraphInput() && !map.count(v)) {
        auto c = dst.addSparseInitializer(v->name(), *v->sparseInitializer());
        if (!c.ok()) return c.status();
        (*c)->setType(type(v->type()));
        map[v] = *c;
      }
    if (absl::Status s = nodes(src, dst); !s.ok()) return s;
    for (unsigned i = 0; i < src.numOutputs(); ++i) {
      auto v = value(src.output(i));
      if (!v.ok()) return v.status();
      OutputInfo info = src.outputInfo(i);
      info.type = type(info.type);
      dst.addOutput(*v, std::move(info));
    }
    return valueInfo(src, dst);
  }

  absl::Status input(const Value &v, Graph &dst) {
    auto c = dst.addInput(v.name(), type(v.type()));
    if (!c.ok()) return c.status();
    (*c)->docString = v.docString;
    (*c)->metadata = v.metadata;
    (*c)->extras = v.extras;
    if (const Tensor *t = v.initializer()) dst.setInputDefault(*c, *t);
    if (const SparseTensor *t = v.sparseInitializer()) dst.setInputSparseDefault(*c, *t);
    map[&v] = *c;
    return absl::OkStatus();
  }

  absl::Status nodes(const Graph &src, Graph &dst) {
    for (const Node &n : src.nodes()) {
      std::vector<Value *> operands;
      for (Value *o : n.operands()) {
        auto c = value(o);
        if (!c.ok()) return c.status();
        operands.push_back(*c);
      }
      std::vector<llvm::StringRef> names;
      for (unsigned i = 0; i < n.numResults(); ++i)
        names.push_back(n.result(i) ? n.result(i)->name() : llvm::StringRef());
      auto made = dst.createNodeWithNames(n.opType(), operands, names, nullptr, n.domain());
      if (!made.ok()) return made.status();
      Node *c = *made;
      c->setOverload(n.overload());
      c->setName(n.name());
      c->docString = n.docString;
      c->metadata = n.metadata;
      c->extras = n.extras;
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (n.result(i)) {
          c->result(i)->setType(type(n.result(i)->type()));
          map[n.result(i)] = c->result(i);
        }
      for (unsigned k = 0; k < n.numAttributes(); ++k)
        if (absl::Status s = attribute(n.attribute(k), [&](std::unique_ptr<Attribute> a) -> Attribute & {
              return c->addAttr(std::move(a));
            });
            !s.ok())
          return s;
    }
    return absl::OkStatus();
  }

  /// Copies `a`; `attach` places the copy (on its node) before its
  /// subgraphs are built, so they nest in the right scope.
  absl::Status attribute(const Attribute &a,
                         const std::function<Attribute &(std::unique_ptr<Attribute>)> &attach) {
    auto c = std::make_unique<Attribute>(a.name());
    static_cast<AttributePayload &>(*c) = static_cast<const AttributePayload &>(a);
    c->copyHeaderFrom(a);
    c->setKind(a.kind());
    if (!a.types.empty())
      for (const Type *&t : c->types.mut()) t = type(t);
    Attribute &placed = attach(std::move(c));
    for (unsigned i = 0; i < a.numGraphs(); ++i) {
      Graph *g = placed.addGraph(std::make_unique<Graph>(dst_));
      if (absl::Status s = graph(*a.graph(i), *g); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status valueInfo(const Graph &src, Graph &dst) {
    for (const ValueInfoRecord &r : src.valueInfo()) {
      if (r.erased) continue;
      ValueInfoRecord *c;
      if (r.value) {
        auto v = value(r.value);
        if (!v.ok()) return v.status();
        c = &dst.addValueInfo(*v);
      } else {
        c = &dst.addValueInfo(r.name, type(r.type));
      }
      static_cast<ValueInfoFields &>(*c) = r.fields();
      c->type = type(r.type);
    }
    return absl::OkStatus();
  }

  absl::Status function(const Function &f, Model &into) {
    Function &c = into.addFunction();
    c.name = f.name;
    c.domain = f.domain;
    c.overload = f.overload;
    c.docString = f.docString;
    c.metadata = f.metadata;
    c.opsetImports = f.opsetImports;
    c.attributeNames = f.attributeNames;
    c.extras = f.extras;
    for (const auto &a : f.attributeDefaults)
      if (absl::Status s = attribute(*a, [&](std::unique_ptr<Attribute> x) -> Attribute & {
            c.attributeDefaults.push_back(std::move(x));
            return *c.attributeDefaults.back();
          });
          !s.ok())
        return s;
    return graph(f.body(), c.body());
  }

private:
  Context &dst_;
};

/// A text that is equal for structurally equal functions: signature,
/// imports, attributes, and each node's op, operands, results and attribute
/// payloads (nested graphs by their nodes).
void graphKey(const Graph &g, std::string &out) {
  for (Value *v : g.inputs()) absl::StrAppend(&out, "in ", v->name().str(), ";");
  for (Value *v : g.outputs()) absl::StrAppend(&out, "out ", v ? v->name().str() : "", ";");
  for (const Node &n : g.nodes()) {
    absl::StrAppend(&out, n.domain().str(), ".", n.opType().str(), ":", n.overload().str(), "(");
    for (Value *o : n.operands()) absl::StrAppend(&out, o ? o->name().str() : "", ",");
    absl::StrAppend(&out, ")->(");
    for (Value *r : n.results()) absl::StrAppend(&out, r ? r->name().str() : "", ",");
    absl::StrAppend(&out, ")<");
    for (unsigned k = 0; k < n.numAttributes(); ++k) {
      const Attribute &a = n.attribute(k);
      absl::StrAppend(&out, a.name(), "/", (int)a.kind(), "=", a.refAttrName.str(), "|", a.f, "|",
                      a.i, "|", a.s, "|");
      for (int64_t x : a.ints) absl::StrAppend(&out, x, ",");
      for (float x : a.floats) absl::StrAppend(&out, x, ",");
      for (const std::string &x : a.strings) absl::StrAppend(&out, x, ",");
      for (const auto &t : a.tensors) absl::StrAppend(&out, "T", t->name(), ",");
      for (const Type *t : a.types) absl::StrAppend(&out, t ? t->str() : "", ",");
      for (unsigned i = 0; i < a.numGraphs(); ++i) {
        absl::StrAppend(&out, "{");
        graphKey(*a.graph(i), out);
        absl::StrAppend(&out, "}");
      }
      absl::StrAppend(&out, ";");
    }
    absl::StrAppend(&out, ">\n");
  }
}

std::string functionKey(const Function &f) {
  std::string out;
  for (const OpsetImport &o : f.opsetImports) absl::StrAppend(&out, o.domain, ":", o.version, ";");
  for (const std::string &a : f.attributeNames) absl::StrAppend(&out, "attr ", a, ";");
  for (const auto &a : f.attributeDefaults)
    absl::StrAppend(&out, "attr ", a->name(), "=", a->i, "|", a->f, "|", a->s, ";");
  graphKey(f.body(), out);
  return out;
}

/// A value of a main graph's interface by name: an output's index or an
/// input (not one with a default).
int outputIndex(const Graph &g, llvm::StringRef name) {
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    if (g.output(i) && g.output(i)->name() == name) return (int)i;
  return -1;
}

const Type *outputType(const Graph &g, unsigned i) {
  return g.output(i)->type() ? g.output(i)->type() : g.outputInfo(i).type;
}

/// Whether a value of type `a` may flow where `b` is declared.
bool fits(const Type *a, const Type *b) {
  if (!a || !b) return true;
  if (a->kind() != b->kind()) return false;
  if (a->hasElemType() && b->hasElemType() && a->elemType() != b->elemType()) return false;
  if (a->hasShape() && b->hasShape()) {
    if (a->rank() != b->rank()) return false;
    for (size_t k = 0; k < a->dims().size(); ++k)
      if (a->dims()[k].isKnown() && b->dims()[k].isKnown() &&
          a->dims()[k].value != b->dims()[k].value)
        return false;
  }
  if (a->elementType() && b->elementType()) return fits(a->elementType(), b->elementType());
  return true;
}

/// Every value name defined in `g` (at its own level) and in its subgraphs.
void valueNames(const Graph &g, llvm::StringSet<> &top, llvm::StringSet<> &all) {
  auto add = [&](const Value *v, bool own) {
    if (!v || v->name().empty()) return;
    if (own) top.insert(v->name());
    all.insert(v->name());
  };
  const_cast<Graph &>(g).walkGraphs([&](Graph *h) {
    bool own = h == &g;
    for (Value *v : h->inputs()) add(v, own);
    for (Value *v : h->initializers()) add(v, own);
    for (Value *v : h->sparseInitializers()) add(v, own);
    for (Node &n : h->nodes())
      for (Value *r : n.results()) add(r, own);
  });
}

} // namespace

absl::Status composeModels(Model &a, Model &b, const ComposeOptions &opts) {
  Graph &ga = a.graph(), &gb = b.graph();
  if (opts.connect.empty())
    return absl::InvalidArgumentError("compose: no connections given (A_OUT:B_IN)");

  // Connections: names and types, before anything changes.
  std::set<std::string> connectedOut, connectedIn;
  for (const auto &[out, in] : opts.connect) {
    int oi = outputIndex(ga, out);
    if (oi < 0)
      return absl::NotFoundError(
          absl::StrCat("compose: \"", out, "\" is no output of model A"));
    Value *bi = nullptr;
    for (Value *v : gb.inputs())
      if (v->name() == in) bi = v;
    if (!bi)
      return absl::NotFoundError(absl::StrCat("compose: \"", in, "\" is no input of model B"));
    if (!connectedIn.insert(in).second)
      return absl::InvalidArgumentError(
          absl::StrCat("compose: input \"", in, "\" of model B is connected twice"));
    const Type *ta = outputType(ga, (unsigned)oi), *tb = bi->type();
    if (!fits(ta, tb))
      return absl::InvalidArgumentError(absl::StrCat(
          "compose: output \"", out, "\" of model A is ", ta->str(), " but input \"", in,
          "\" of model B is ", tb->str()));
    connectedOut.insert(out);
  }

  // Opsets of other domains must agree; the default domain is converted.
  for (const OpsetImport &ia : a.opsetImports)
    for (const OpsetImport &ib : b.opsetImports) {
      bool isDefault = (ia.domain.empty() || ia.domain == "ai.onnx") &&
                 (ib.domain.empty() || ib.domain == "ai.onnx");
      if (!isDefault && ia.domain == ib.domain && ia.version != ib.version)
        return absl::InvalidArgumentError(absl::StrCat(
            "compose: domain \"", ia.domain, "\" is imported at version ", ia.version,
            " by model A and ", ib.version, " by model B; only the default domain is converted"));
    }

  // Functions both define must be equal.
  for (const auto &fb : b.functions())
    for (const auto &fa : a.functions())
      if (fa->name == fb->name && fa->domain == fb->domain && fa->overload == fb->overload &&
          functionKey(*fa) != functionKey(*fb))
        return absl::AlreadyExistsError(absl::StrCat(
            "compose: function \"", fb->qualifiedName(),
            "\" is defined differently by model A and model B"));

  // Names after the prefixes: one main graph's must not be defined in the
  // other (there, or in a subgraph it would shadow).
  {
    llvm::StringSet<> topA, allA, topB, allB;
    valueNames(ga, topA, allA);
    valueNames(gb, topB, allB);
    auto prefixed = [](const llvm::StringSet<> &s, const std::string &p) {
      llvm::StringSet<> out;
      for (const auto &e : s) out.insert(p + e.getKey().str());
      return out;
    };
    llvm::StringSet<> pTopA = prefixed(topA, opts.prefixA), pAllA = prefixed(allA, opts.prefixA);
    llvm::StringSet<> pTopB, pAllB;
    for (const auto &e : topB)
      if (!connectedIn.count(e.getKey().str())) pTopB.insert(opts.prefixB + e.getKey().str());
    for (const auto &e : allB)
      if (!connectedIn.count(e.getKey().str()) || !topB.count(e.getKey()))
        pAllB.insert(opts.prefixB + e.getKey().str());
    std::string clash;
    for (const auto &e : pTopB)
      if (pAllA.count(e.getKey()) && (clash.empty() || e.getKey() < clash)) clash = e.getKey().str();
    for (const auto &e : pTopA)
      if (pAllB.count(e.getKey()) && (clash.empty() || e.getKey() < clash)) clash = e.getKey().str();
    if (!clash.empty())
      return absl::AlreadyExistsError(absl::StrCat(
          "compose: the name \"", clash, "\" is defined in both models",
          " (give a prefix: --prefix A:P or --prefix B:P, prefix_a=/prefix_b=)"));
  }

  // Prefixes, then the default domain at the higher version.
  auto prefix = [](Model &m, const std::string &p) -> absl::Status {
    if (p.empty()) return absl::OkStatus();
    RenameOptions ro;
    ro.mode = RenameOptions::Mode::Prefix;
    ro.prefix = p;
    ro.renameInterface = true;
    return renameValues(m, ro).status();
  };
  if (absl::Status s = prefix(a, opts.prefixA); !s.ok()) return s;
  if (absl::Status s = prefix(b, opts.prefixB); !s.ok()) return s;
  int64_t va = a.opsetVersion(""), vb = b.opsetVersion("");
  if (va > 0 && vb > 0 && va != vb) {
    Model &low = va < vb ? a : b;
    ShapeInferenceOptions so;
    so.outputsOnly = true;
    if (auto r = inferShapes(low, so); !r.ok()) return r.status();
    if (auto r = convertOpset(low, std::max(va, vb)); !r.ok())
      return absl::Status(r.status().code(),
                          absl::StrCat("compose: converting model ", va < vb ? "A" : "B",
                                       " from opset ", std::min(va, vb), " to ", std::max(va, vb),
                                       ": ", r.status().message()));
  }
  // Sorted, so that the copy meets each definition before its uses and the
  // result is in order.
  if (auto r = topologicalSort(a); !r.ok()) return r.status();
  if (auto r = topologicalSort(b); !r.ok()) return r.status();

  // Merge: B's main graph into A's, connected inputs read A's values.
  Copier copy(a.getContext());
  for (const auto &[out, in] : opts.connect) {
    Value *av = ga.output((unsigned)outputIndex(ga, opts.prefixA + out));
    for (Value *v : gb.inputs())
      if (v->name() == opts.prefixB + in) copy.map[v] = av;
  }
  for (unsigned i = ga.numOutputs(); i-- > 0;) {
    std::string name = ga.output(i) ? ga.output(i)->name().str() : "";
    bool connected = false;
    for (const std::string &o : connectedOut) connected |= opts.prefixA + o == name;
    if (connected || opts.dropUnconnected) ga.removeOutput(i);
  }
  if (absl::Status s = copy.graph(gb, ga, /*header=*/false); !s.ok()) return s;
  for (const auto &fb : b.functions()) {
    bool have = false;
    for (const auto &fa : a.functions())
      have |= fa->name == fb->name && fa->domain == fb->domain && fa->overload == fb->overload;
    if (!have)
      if (absl::Status s = copy.function(*fb, a); !s.ok()) return s;
  }
  for (const OpsetImport &ib : b.opsetImports) {
    bool have = false;
    for (const OpsetImport &ia : a.opsetImports)
      have |= ia.domain == ib.domain ||
              ((ia.domain.empty() || ia.domain == "ai.onnx") && (ib.domain.empty() || ib.domain == "ai.onnx"));
    if (!have) a.opsetImports.push_back(ib);
  }
  if (b.irVersion && (!a.irVersion || *a.irVersion < *b.irVersion)) a.irVersion = b.irVersion;
  if (opts.dropUnconnected)
    if (auto r = eliminateDeadCode(a); !r.ok()) return r.status();
  if (auto r = deduplicateInitializers(a); !r.ok()) return r.status();
  return absl::OkStatus();
}

namespace {

/// Every value name defined in `g` and the graphs nested in it.
void allNames(const Graph &g, llvm::StringSet<> &out) {
  const_cast<Graph &>(g).walkGraphs([&](Graph *sub) {
    for (const Value *v : sub->inputs()) out.insert(v->name());
    for (const Value *v : sub->initializers()) out.insert(v->name());
    for (const Value *v : sub->sparseInitializers()) out.insert(v->name());
    for (const Node &n : sub->nodes())
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (n.result(i)) out.insert(n.result(i)->name());
  });
}

/// A name free in both sets, from `base`.
std::string freeName(llvm::StringRef base, const llvm::StringSet<> &a, const llvm::StringSet<> &b) {
  for (int k = 1;; ++k) {
    std::string n = absl::StrCat(base.str(), "_", k);
    if (!a.count(n) && !b.count(n)) return n;
  }
}

/// The type of an If result whose branches give `a` and `b`: equal types
/// as they are; tensors of one element type and rank with the dims they
/// agree on (the others unknown); null when they cannot be one.
const Type *joinTypes(Context &ctx, const Type *a, const Type *b) {
  if (a == b) return a;
  if (!a || !b) return a ? a : b;
  if (!a->isTensor() || !b->isTensor() || !a->hasElemType() || !b->hasElemType() ||
      a->elemType() != b->elemType())
    return nullptr;
  if (a->rank() < 0 || a->rank() != b->rank()) return ctx.getTensorType(a->elemType(), kUnknownRank);
  std::vector<Dim> dims;
  for (int64_t i = 0; i < a->rank(); ++i)
    dims.push_back(a->dims()[i] == b->dims()[i] ? a->dims()[i] : Dim());
  return ctx.getTensorType(a->elemType(), llvm::ArrayRef<Dim>(dims));
}

} // namespace

absl::StatusOr<std::unique_ptr<Model>> mergeDecoders(Model &noPast, Model &withPast,
                                                     const MergeDecodersOptions &opts) {
  Graph &ga = noPast.graph(), &gb = withPast.graph();
  const char *what[2] = {"the decoder", "the decoder with past"};
  if (opts.condition.empty())
    return absl::InvalidArgumentError("merge-decoders: the condition input needs a name");
  // Outputs: the same names; their types must join.
  if (ga.numOutputs() != gb.numOutputs())
    return absl::InvalidArgumentError(absl::StrCat(
        "merge-decoders: ", what[0], " has ", ga.numOutputs(), " outputs and ", what[1], " ",
        gb.numOutputs(), ": both must give the same outputs"));
  for (unsigned i = 0; i < ga.numOutputs(); ++i) {
    if (!ga.output(i) || outputIndex(gb, ga.output(i)->name()) < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "merge-decoders: output \"", ga.output(i) ? ga.output(i)->name().str() : "",
          "\" of ", what[0], " is no output of ", what[1]));
    if (!joinTypes(noPast.getContext(), outputType(ga, i),
                   outputType(gb, (unsigned)outputIndex(gb, ga.output(i)->name()))))
      return absl::InvalidArgumentError(absl::StrCat(
          "merge-decoders: output \"", ga.output(i)->name().str(), "\" is ",
          outputType(ga, i)->str(), " in ", what[0], " and ",
          outputType(gb, (unsigned)outputIndex(gb, ga.output(i)->name()))->str(), " in ", what[1]));
  }
  // The outputs in the with-past order, and where each is in the other.
  std::vector<std::string> outNames;
  std::vector<unsigned> order;
  for (unsigned i = 0; i < gb.numOutputs(); ++i) {
    outNames.push_back(gb.output(i) ? gb.output(i)->name().str() : "");
    int k = outputIndex(ga, outNames.back());
    if (k < 0)
      return absl::InvalidArgumentError(absl::StrCat("merge-decoders: output \"", outNames.back(),
                                                     "\" of ", what[1], " is no output of ", what[0]));
    order.push_back((unsigned)k);
  }
  // Inputs: the decoder's are among the other's, of fitting types.
  for (const Value *v : ga.inputs()) {
    const Value *w = nullptr;
    for (const Value *x : gb.inputs())
      if (x->name() == v->name()) w = x;
    if (!w)
      return absl::InvalidArgumentError(absl::StrCat("merge-decoders: input \"", v->name().str(),
                                                     "\" of ", what[0], " is no input of ", what[1]));
    if (!fits(v->type(), w->type()))
      return absl::InvalidArgumentError(absl::StrCat(
          "merge-decoders: input \"", v->name().str(), "\" is ", v->type() ? v->type()->str() : "untyped",
          " in ", what[0], " and ", w->type() ? w->type()->str() : "untyped", " in ", what[1]));
  }
  for (const Graph *src : {&ga, &gb})
    if (!src->sparseInitializers().empty())
      return absl::UnimplementedError("merge-decoders: sparse initializers are not merged");
  llvm::StringSet<> namesA, namesB;
  allNames(ga, namesA);
  allNames(gb, namesB);
  if (namesA.count(opts.condition) || namesB.count(opts.condition))
    return absl::AlreadyExistsError(absl::StrCat("merge-decoders: the condition name \"",
                                                 opts.condition, "\" is taken in a model"));
  // Other domains must agree; functions both define must be equal.
  for (const OpsetImport &ia : noPast.opsetImports)
    for (const OpsetImport &ib : withPast.opsetImports) {
      bool isDefault = (ia.domain.empty() || ia.domain == "ai.onnx") &&
                       (ib.domain.empty() || ib.domain == "ai.onnx");
      if (!isDefault && ia.domain == ib.domain && ia.version != ib.version)
        return absl::InvalidArgumentError(absl::StrCat(
            "merge-decoders: domain \"", ia.domain, "\" is imported at version ", ia.version, " by ",
            what[0], " and ", ib.version, " by ", what[1]));
    }
  for (const auto &fb : withPast.functions())
    for (const auto &fa : noPast.functions())
      if (fa->name == fb->name && fa->domain == fb->domain && fa->overload == fb->overload &&
          functionKey(*fa) != functionKey(*fb))
        return absl::AlreadyExistsError(absl::StrCat("merge-decoders: function \"",
                                                     fb->qualifiedName(), "\" differs between the models"));
  // The default domain at the higher version.
  int64_t va = noPast.opsetVersion(""), vb = withPast.opsetVersion("");
  if (va > 0 && vb > 0 && va != vb) {
    Model &low = va < vb ? noPast : withPast;
    ShapeInferenceOptions so;
    so.outputsOnly = true;
    if (auto r = inferShapes(low, so); !r.ok()) return r.status();
    if (auto r = convertOpset(low, std::max(va, vb)); !r.ok())
      return absl::Status(r.status().code(),
                          absl::StrCat("merge-decoders: converting ", what[va < vb ? 0 : 1], " from opset ",
                                       std::min(va, vb), " to ", std::max(va, vb), ": ",
                                       r.status().message()));
  }
  if (auto r = topologicalSort(noPast); !r.ok()) return r.status();
  if (auto r = topologicalSort(withPast); !r.ok()) return r.status();

  // Note [Merging decoders]: the weights of both become the outer graph's
  // (each branch reads them from there), so a name the other model uses
  // for anything else is renamed first; so is an intermediate of either
  // model named like an outer input.
  llvm::StringSet<> inputsB;
  for (const Value *v : gb.inputs()) inputsB.insert(v->name());
  // A weight both models hold under one name with equal contents is one
  // outer initializer under that name.
  auto sameTensor = [](const Tensor &x, const Tensor &y) {
    if (x.dataTypeRaw() != y.dataTypeRaw() || x.dims() != y.dims()) return false;
    auto bx = x.bytes(), by = y.bytes();
    return bx.ok() && by.ok() && *bx == *by;
  };
  llvm::DenseMap<const Value *, const Value *> sharedB; // B's weight -> A's
  for (const Value *wb : gb.initializers())
    if (!wb->isGraphInput())
      for (const Value *wa : ga.initializers())
        if (!wa->isGraphInput() && wa->name() == wb->name() &&
            sameTensor(*wa->initializer(), *wb->initializer()))
          sharedB[wb] = wa;
  auto renameIn = [&](Graph &g, llvm::StringSet<> &own, const llvm::StringSet<> &other,
                      bool initializersOnly) -> absl::Status {
    std::vector<Value *> todo;
    if (initializersOnly) {
      for (Value *v : g.initializers()) {
        bool shared = false;
        for (auto &e : sharedB) shared |= e.first == v || e.second == v;
        if (!v->isGraphInput() && !shared && other.count(v->name())) todo.push_back(v);
      }
    } else {
      for (const Node &n : g.nodes())
        for (unsigned i = 0; i < n.numResults(); ++i)
          if (n.result(i) && inputsB.count(n.result(i)->name())) todo.push_back(n.result(i));
    }
    for (Value *v : todo) {
      std::string fresh = freeName(v->name(), own, other);
      if (absl::Status s = v->setName(fresh); !s.ok()) return s;
      own.insert(fresh);
    }
    return absl::OkStatus();
  };
  if (absl::Status s = renameIn(ga, namesA, namesB, true); !s.ok()) return s;
  if (absl::Status s = renameIn(gb, namesB, namesA, true); !s.ok()) return s;
  if (absl::Status s = renameIn(ga, namesA, namesB, false); !s.ok()) return s;
  // The If's results take the output names: inside the branches the values
  // that compute them are renamed (a branch must not shadow them).
  for (auto [src, own, other, suffix] :
       {std::make_tuple(&ga, &namesA, &namesB, "_without_past"), std::make_tuple(&gb, &namesB, &namesA, "_with_past")})
    for (unsigned i = 0; i < src->numOutputs(); ++i) {
      Value *v = src->output(i);
      if (!v || !v->definingNode() || v->definingNode()->getGraph() != src)
        return absl::UnimplementedError(absl::StrCat(
            "merge-decoders: output \"", v ? v->name().str() : "", "\" of ", what[src == &gb ? 1 : 0],
            " is an input or weight, not computed: not merged"));
      std::string fresh = freeName(absl::StrCat(v->name().str(), suffix), *own, *other);
      if (absl::Status s = v->setName(fresh); !s.ok()) return s;
      own->insert(fresh);
    }

  auto out = std::make_unique<Model>();
  Model &m = *out;
  m.irVersion = noPast.irVersion;
  if (withPast.irVersion && (!m.irVersion || *m.irVersion < *withPast.irVersion))
    m.irVersion = withPast.irVersion;
  m.opsetImports = withPast.opsetImports;
  for (const OpsetImport &ia : noPast.opsetImports) {
    bool have = false;
    for (const OpsetImport &ib : m.opsetImports)
      have |= ia.domain == ib.domain ||
              ((ia.domain.empty() || ia.domain == "ai.onnx") && (ib.domain.empty() || ib.domain == "ai.onnx"));
    if (!have) m.opsetImports.push_back(ia);
  }
  m.producerName = withPast.producerName;
  m.producerVersion = withPast.producerVersion;
  m.domain = withPast.domain;
  m.modelVersion = withPast.modelVersion;
  m.docString = withPast.docString;
  m.metadata = withPast.metadata;
  Graph &g = m.graph();
  g.name = gb.name;
  Context &ctx = m.getContext();

  // The outer graph: the with-past inputs, the condition, both weight sets.
  Copier ca(ctx), cb(ctx);
  for (const Value *v : gb.inputs()) {
    if (absl::Status s = cb.input(*v, g); !s.ok()) return s;
    for (const Value *x : ga.inputs())
      if (x->name() == v->name()) ca.map[x] = cb.map[v];
  }
  auto cond = g.addInput(opts.condition, ctx.getTensorType(DataType::Bool, llvm::ArrayRef<int64_t>{1}));
  if (!cond.ok()) return cond.status();
  for (auto [src, copier] : {std::make_pair(&ga, &ca), std::make_pair(&gb, &cb)})
    for (const Value *v : src->initializers())
      if (auto sh = sharedB.find(v); sh != sharedB.end()) {
        copier->map[v] = ca.map[sh->second];
      } else if (!v->isGraphInput()) {
        auto c = g.addInitializer(v->name(), *v->initializer());
        if (!c.ok()) return c.status();
        (*c)->setType(copier->type(v->type()));
        copier->map[v] = *c;
      }

  // The If: then = with past, else = without.
  std::vector<llvm::StringRef> names(outNames.begin(), outNames.end());
  auto made = g.createNodeWithNames("If", {*cond}, names);
  if (!made.ok()) return made.status();
  Node *ifn = *made;
  for (auto [attr, src, copier] : {std::make_tuple("then_branch", &gb, &cb), std::make_tuple("else_branch", &ga, &ca)}) {
    auto a = std::make_unique<Attribute>(attr);
    a->setKind(AttrKind::Graph);
    Attribute &placed = ifn->addAttr(std::move(a));
    Graph *branch = placed.addGraph(std::make_unique<Graph>(ctx));
    if (absl::Status s = copier->graph(*src, *branch); !s.ok()) return s;
    branch->name = absl::StrCat(src->name, src == &gb ? "_with_past" : "_without_past");
  }
  // Each model's outputs in the with-past order.
  Graph *thenG = ifn->getAttr("then_branch")->graph(0);
  Graph *elseG = ifn->getAttr("else_branch")->graph(0);
  if (!std::is_sorted(order.begin(), order.end()) || order.size() != elseG->numOutputs()) {
    std::vector<std::pair<Value *, OutputInfo>> outs;
    for (unsigned i : order) outs.emplace_back(elseG->output(i), elseG->outputInfo(i));
    for (unsigned i = elseG->numOutputs(); i-- > 0;) elseG->removeOutput(i);
    for (auto &[v, info] : outs) elseG->addOutput(v, std::move(info));
  }
  for (unsigned i = 0; i < ifn->numResults(); ++i) {
    const Type *t = joinTypes(ctx, outputType(*thenG, i), outputType(*elseG, i));
    ifn->result(i)->setType(t);
    OutputInfo info = gb.outputInfo(i);
    info.type = t;
    g.addOutput(ifn->result(i), std::move(info));
  }
  for (auto [src, copier] : {std::make_pair(&withPast, &cb), std::make_pair(&noPast, &ca)})
    for (const auto &f : src->functions()) {
      bool have = false;
      for (const auto &x : m.functions())
        have |= x->name == f->name && x->domain == f->domain && x->overload == f->overload;
      if (!have)
        if (absl::Status s = copier->function(*f, m); !s.ok()) return s;
    }
  if (auto r = deduplicateInitializers(m); !r.ok()) return r.status();
  return out;
}

} // namespace onnxir
