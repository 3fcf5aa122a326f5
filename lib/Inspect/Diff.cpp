//===- Diff.cpp - A structural comparison of two models -------------------===//
//
//===--- Note [Structural matching] ---------------------------------------===//
// Names say nothing about which node of one model is which node of the
// other (a renaming pass, an exporter run twice), so nodes are matched by
// what they compute. Each value gets two signatures, hashes of its
// definition that never look at a name except the main graph's inputs
// (the model's interface):
//   strict  op, domain, every attribute's value, the strict signatures of
//           the operands in order; initializers by element type, shape and
//           contents; a subgraph attribute by its body's strict hash;
//   loose   the same without attribute values and initializer contents.
// Nodes are paired by equal strict signature, then the rest by equal loose
// signature; each first where the signature is unique on both sides, then
// (of k equal nodes) the i-th with the i-th in topological order. After
// each step pairs propagate: two unpaired nodes of one op that feed the
// same operand slot of a paired node, or read the same operand slot from a
// paired node, or compute the same graph output, pair too; so of three
// equal Constants the one each paired consumer reads is its partner. Two
// operands computed the same way count as the same input, whichever equal
// node each was paired with. A node inserted on an edge thus shows as one added node, and the
// node after it as changed ("input 0"), not the whole graph downstream.
// Paired nodes are then compared field by field; unpaired ones are added or
// removed. Initializers pair through the operand slots of paired nodes (then
// by equal contents, then by name) and are compared by element type, shape
// and values (the max |a - b|). Graph inputs and outputs, opsets and
// functions are compared by name. A subgraph attribute whose body differs
// makes its node changed; the two bodies are then matched the same way
// (their inputs by position, not name) and what differs inside is listed
// under the attribute's name (`then_branch: node_added Neg ...`).
//===----------------------------------------------------------------------===//
#include "onnxir/Inspect/Diff.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <set>

namespace onnxir {

namespace {

using Hash = uint64_t;

Hash mix(Hash a, Hash b) { return (Hash)llvm::hash_combine(a, b); }
Hash hashStr(llvm::StringRef s) { return (Hash)llvm::hash_value(s); }

std::string opName(const Node &n) {
  return n.domain().empty() ? n.opType().str() : (n.domain() + "." + n.opType()).str();
}

/// Hash of a tensor's element type, dims and (strict) contents.
Hash tensorHash(const Tensor &t, bool contents) {
  Hash h = mix(hashStr("tensor"), (Hash)t.dataTypeRaw());
  for (int64_t d : t.dims()) h = mix(h, (Hash)d);
  if (!contents) return h;
  if (t.dataType() == DataType::String) {
    auto s = t.strings();
    if (!s.ok()) return mix(h, hashStr("unreadable"));
    for (const std::string &x : *s) h = mix(h, hashStr(x));
    return h;
  }
  auto b = t.bytes();
  return b.ok() ? mix(h, hashStr(*b)) : mix(h, hashStr("unreadable"));
}

/// The signatures of one model's values (Note [Structural matching]).
class Signer {
public:
  /// `top`: the graph whose inputs are keyed by name (the model's
  /// interface); a subgraph compared on its own keys them by position.
  explicit Signer(const Graph &top, bool inputsByName = true)
      : top_(&top), inputsByName_(inputsByName) {}

  Hash value(const Value *v, bool strict) {
    if (!v) return hashStr("none");
    auto &memo = strict ? strictV_ : looseV_;
    if (auto it = memo.find(v); it != memo.end()) return it->second;
    Hash h;
    if (Node *def = v->definingNode()) {
      h = mix(node(*def, strict), (Hash)v->resultIndex());
    } else if (v->isGraphInput()) {
      const Graph *g = v->getGraph();
      if (g == top_ && inputsByName_) {
        h = mix(hashStr("input"), hashStr(v->name()));
      } else {
        unsigned i = 0;
        while (g->input(i) != v) ++i;
        h = mix(mix(hashStr("body input"), (Hash)g->depth()), (Hash)i);
      }
    } else if (v->hasInitializer()) {
      h = mix(hashStr("initializer"), tensorHash(*v->initializer(), strict));
    } else {
      h = mix(hashStr("other"), (Hash)v->kind());
    }
    memo[v] = h;
    return h;
  }

  /// Iterative over the producers, so long chains use no stack.
  Hash node(const Node &n, bool strict) {
    auto &memo = strict ? strictN_ : looseN_;
    if (auto it = memo.find(&n); it != memo.end()) return it->second;
    std::vector<const Node *> stack{&n};
    while (!stack.empty()) {
      const Node *cur = stack.back();
      if (memo.count(cur)) {
        stack.pop_back();
        continue;
      }
      bool ready = true;
      for (unsigned i = 0; i < cur->numOperands(); ++i)
        if (Value *v = cur->operand(i))
          if (Node *def = v->definingNode(); def && !memo.count(def)) {
            stack.push_back(def);
            ready = false;
          }
      if (!ready) continue;
      stack.pop_back();
      memo[cur] = compute(*cur, strict);
    }
    return memo[&n];
  }

  Hash attribute(const Attribute &a) {
    Hash h = mix(hashStr(a.name()), (Hash)a.kind());
    h = mix(h, hashStr(a.refAttrName.str()));
    switch (a.kind()) {
    case AttrKind::Float: {
      uint32_t bits;
      std::memcpy(&bits, &a.f, 4);
      return mix(h, bits);
    }
    case AttrKind::Int: return mix(h, (Hash)a.i);
    case AttrKind::String: return mix(h, hashStr(a.s));
    case AttrKind::Ints:
      for (int64_t x : a.ints) h = mix(h, (Hash)x);
      return h;
    case AttrKind::Floats:
      for (float x : a.floats.get()) {
        uint32_t bits;
        std::memcpy(&bits, &x, 4);
        h = mix(h, bits);
      }
      return h;
    case AttrKind::Strings:
      for (const std::string &x : a.strings.get()) h = mix(h, hashStr(x));
      return h;
    case AttrKind::Tensor:
    case AttrKind::Tensors:
      for (auto &t : a.tensors.get()) h = mix(h, tensorHash(*t, true));
      return h;
    case AttrKind::Graph:
    case AttrKind::Graphs:
      for (unsigned i = 0; i < a.numGraphs(); ++i) h = mix(h, graph(*a.graph(i)));
      return h;
    case AttrKind::TypeProto:
    case AttrKind::TypeProtos:
      for (const Type *t : a.types.get()) h = mix(h, hashStr(t ? t->str() : "?"));
      return h;
    default:
      return mix(h, (Hash)a.sparseTensors.size());
    }
  }

  /// A body as a whole: its inputs' types, its nodes' strict signatures as
  /// a multiset, its outputs' in order.
  Hash graph(const Graph &g) {
    Hash h = mix(hashStr("graph"), (Hash)g.numInputs());
    for (Value *v : g.inputs()) h = mix(h, hashStr(v->type() ? v->type()->str() : "?"));
    std::vector<Hash> nodes;
    for (const Node &n : g.nodes()) nodes.push_back(node(n, true));
    std::sort(nodes.begin(), nodes.end());
    for (Hash x : nodes) h = mix(h, x);
    for (unsigned i = 0; i < g.numOutputs(); ++i) h = mix(h, value(g.output(i), true));
    return h;
  }

private:
  Hash compute(const Node &n, bool strict) {
    Hash h = mix(hashStr(n.opType()), hashStr(n.domain()));
    h = mix(h, hashStr(n.overload()));
    h = mix(h, (Hash)n.numResults());
    for (unsigned i = 0; i < n.numOperands(); ++i) h = mix(h, value(n.operand(i), strict));
    if (!strict) return h;
    std::vector<std::pair<std::string, Hash>> attrs;
    for (unsigned i = 0; i < n.numAttributes(); ++i)
      attrs.push_back({n.attribute(i).name(), attribute(n.attribute(i))});
    std::sort(attrs.begin(), attrs.end());
    for (auto &a : attrs) h = mix(h, a.second);
    // Values a subgraph captures are inputs too.
    return h;
  }

  const Graph *top_;
  bool inputsByName_;
  llvm::DenseMap<const Value *, Hash> strictV_, looseV_;
  llvm::DenseMap<const Node *, Hash> strictN_, looseN_;
};

std::string formatFloat(double x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.9g", x);
  return s;
}

std::string formatTensorBrief(const Tensor &t) {
  std::string s = dataTypeName(t.dataType()).str() + "[";
  for (size_t i = 0; i < t.dims().size(); ++i) s += (i ? "," : "") + std::to_string(t.dims()[i]);
  s += "]";
  auto n = t.numElements();
  if (n && *n <= 8 && t.dataType() != DataType::String) {
    if (auto v = t.values<double>(); v.ok()) {
      s += " {";
      for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + formatFloat((*v)[i]);
      s += "}";
    }
  }
  return s;
}

template <typename T, typename F> std::string list(const std::vector<T> &v, F f) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s + "]";
}

std::string formatAttribute(const Attribute &a) {
  if (a.isReference()) return "@" + a.refAttrName.str();
  auto quote = [](const std::string &x) { return "\"" + llvm::json::fixUTF8(x) + "\""; };
  switch (a.kind()) {
  case AttrKind::Float: return formatFloat(a.f);
  case AttrKind::Int: return std::to_string(a.i);
  case AttrKind::String: return quote(a.s);
  case AttrKind::Ints: return list(a.ints, [](int64_t x) { return std::to_string(x); });
  case AttrKind::Floats: return list(a.floats.get(), [](float x) { return formatFloat(x); });
  case AttrKind::Strings: return list(a.strings.get(), quote);
  case AttrKind::Tensor:
  case AttrKind::Tensors: {
    std::string s;
    for (auto &t : a.tensors.get()) s += (s.empty() ? "" : ", ") + formatTensorBrief(*t);
    return "tensor " + s;
  }
  case AttrKind::Graph:
  case AttrKind::Graphs: {
    std::string s;
    for (unsigned i = 0; i < a.numGraphs(); ++i)
      s += (i ? ", " : "") + std::string("graph of ") + std::to_string(a.graph(i)->numNodes()) +
           " nodes";
    return s;
  }
  case AttrKind::TypeProto:
  case AttrKind::TypeProtos: {
    std::string s;
    for (const Type *t : a.types.get()) s += (s.empty() ? "" : ", ") + (t ? t->str() : "?");
    return s;
  }
  default: return attrKindName(a.kind()).str();
  }
}

std::string typeStr(const Type *t) { return t ? t->str() : "(no type)"; }

class Differ {
public:
  Differ(const Model &a, const Model &b)
      : a_(&a), b_(&b), ga_(a.graph()), gb_(b.graph()), sa_(ga_), sb_(gb_) {}
  /// Two subgraph bodies (a changed If branch): their nodes and
  /// initializers, inputs by position.
  Differ(const Graph &a, const Graph &b) : ga_(a), gb_(b), sa_(a, false), sb_(b, false) {}

  ModelDiff run() {
    if (a_) {
      header();
      io();
    }
    nodes();
    initializers();
    if (a_) functions();
    return std::move(d_);
  }

private:
  ModelDiff::Entry &add(std::string kind, std::string nameA, std::string nameB,
                        std::string op = "") {
    ModelDiff::Entry e;
    e.kind = std::move(kind);
    e.op = std::move(op);
    e.nameA = std::move(nameA);
    e.nameB = std::move(nameB);
    d_.entries.push_back(std::move(e));
    return d_.entries.back();
  }
  ModelDiff::Entry &addNode(std::string kind, const Node *x, const Node *y) {
    const Node *n = x ? x : y;
    auto &e = add(std::move(kind), x ? x->name().str() : "", y ? y->name().str() : "", opName(*n));
    auto out = [](const Node *m) {
      return m && m->numResults() && m->result(0) ? m->result(0)->name().str() : std::string();
    };
    e.outputA = out(x);
    e.outputB = out(y);
    return e;
  }

  void header() {
    if (a_->irVersion != b_->irVersion) {
      auto &e = add("ir_version_changed", "", "");
      e.details.push_back("ir_version: " + (a_->irVersion ? std::to_string(*a_->irVersion) : "-") +
                          " -> " + (b_->irVersion ? std::to_string(*b_->irVersion) : "-"));
    }
    std::map<std::string, int64_t> oa, ob;
    for (auto &o : a_->opsetImports) oa[o.domain == "ai.onnx" ? "" : o.domain] = o.version;
    for (auto &o : b_->opsetImports) ob[o.domain == "ai.onnx" ? "" : o.domain] = o.version;
    std::set<std::string> domains;
    for (auto &[k, v] : oa) domains.insert(k);
    for (auto &[k, v] : ob) domains.insert(k);
    for (const std::string &dom : domains) {
      auto ia = oa.find(dom), ib = ob.find(dom);
      int64_t va = ia == oa.end() ? -1 : ia->second, vb = ib == ob.end() ? -1 : ib->second;
      if (va == vb) continue;
      std::string shown = dom.empty() ? "ai.onnx" : dom;
      auto &e = add("opset_changed", shown, shown);
      e.details.push_back("opset " + shown + ": " + (va < 0 ? "-" : std::to_string(va)) +
                          " -> " + (vb < 0 ? "-" : std::to_string(vb)));
    }
  }

  /// (name, type) of each input or output; an output's declared type
  /// when it has one (a text model types its outputs there).
  static std::vector<std::pair<std::string, const Type *>> interface(const Graph &g,
                                                                     bool outputs) {
    std::vector<std::pair<std::string, const Type *>> out;
    if (!outputs) {
      for (Value *v : g.inputs()) out.push_back({v->name().str(), v->type()});
      return out;
    }
    for (unsigned i = 0; i < g.numOutputs(); ++i)
      out.push_back({g.output(i)->name().str(), g.outputInfo(i).type ? g.outputInfo(i).type
                                                                      : g.output(i)->type()});
    return out;
  }

  void io() {
    for (bool outputs : {false, true}) {
      std::string what = outputs ? "output" : "input";
      auto va = interface(ga_, outputs), vb = interface(gb_, outputs);
      std::map<std::string, const Type *> ma(va.begin(), va.end()), mb(vb.begin(), vb.end());
      for (auto &[name, type] : va)
        if (!mb.count(name))
          add(what + "_removed", name, "").details.push_back("type: " + typeStr(type));
      for (auto &[name, type] : vb) {
        auto it = ma.find(name);
        if (it == ma.end())
          add(what + "_added", "", name).details.push_back("type: " + typeStr(type));
        else if (typeStr(it->second) != typeStr(type))
          add(what + "_changed", name, name)
              .details.push_back("type: " + typeStr(it->second) + " -> " + typeStr(type));
      }
    }
  }

  void pair(const Node *x, const Node *y) {
    partnerA_[x] = y;
    partnerB_[y] = x;
    work_.push_back({x, y});
  }

  void nodes() {
    std::vector<const Node *> na, nb;
    for (const Node &n : ga_.nodes()) na.push_back(&n);
    for (const Node &n : gb_.nodes()) nb.push_back(&n);
    d_.nodesA = na.size();
    d_.nodesB = nb.size();
    // Unambiguous pairs first, and what they imply, before equal nodes are
    // paired by position (Note [Structural matching]).
    for (bool strict : {true, false})
      for (bool uniqueOnly : {true, false}) {
        std::map<Hash, std::pair<std::deque<const Node *>, std::deque<const Node *>>> groups;
        for (const Node *n : na)
          if (!partnerA_.count(n)) groups[sa_.node(*n, strict)].first.push_back(n);
        for (const Node *n : nb)
          if (!partnerB_.count(n)) groups[sb_.node(*n, strict)].second.push_back(n);
        for (auto &[h, g] : groups) {
          if (uniqueOnly && (g.first.size() != 1 || g.second.size() != 1)) continue;
          for (size_t i = 0; i < std::min(g.first.size(), g.second.size()); ++i)
            if (!partnerA_.count(g.first[i]) && !partnerB_.count(g.second[i]))
              pair(g.first[i], g.second[i]);
        }
        propagate();
      }
    // Report in B's order, then what A alone has.
    for (const Node *n : nb) {
      auto it = partnerB_.find(n);
      if (it == partnerB_.end()) {
        addNode("node_added", nullptr, n);
        continue;
      }
      ++d_.matched;
      compareNodes(*it->second, *n);
    }
    for (const Node *n : na)
      if (!partnerA_.count(n)) addNode("node_removed", n, nullptr);
  }

  static bool sameOp(const Node *x, const Node *y) {
    return x->opType() == y->opType() && x->domain() == y->domain() &&
           x->numResults() == y->numResults();
  }

  /// Unpaired producers of the same slot, and unpaired consumers of the
  /// same result slot, of paired nodes pair up (Note [Structural matching]).
  void propagate() {
    auto tryPair = [&](Value *va, Value *vb) {
      if (!va || !vb) return;
      Node *x = va->definingNode(), *y = vb->definingNode();
      if (!x || !y || x->getGraph() != &ga_ || y->getGraph() != &gb_) return;
      if (partnerA_.count(x) || partnerB_.count(y) || !sameOp(x, y)) return;
      if (va->resultIndex() != vb->resultIndex()) return;
      pair(x, y);
    };
    const Graph &ga = ga_, &gb = gb_;
    for (unsigned i = 0; i < ga.numOutputs(); ++i)
      for (unsigned k = 0; k < gb.numOutputs(); ++k)
        if (ga.output(i)->name() == gb.output(k)->name()) tryPair(ga.output(i), gb.output(k));
    while (!work_.empty()) {
      auto [x, y] = work_.front();
      work_.pop_front();
      for (unsigned i = 0; i < std::min(x->numOperands(), y->numOperands()); ++i)
        tryPair(x->operand(i), y->operand(i));
      for (unsigned r = 0; r < std::min(x->numResults(), y->numResults()); ++r) {
        Value *va = x->result(r), *vb = y->result(r);
        if (!va || !vb) continue;
        for (Use &ua : va->uses()) {
          Node *ca = ua.getOwner();
          if (ca->isReturn() || ca->getGraph() != &ga || partnerA_.count(ca)) continue;
          for (Use &ub : vb->uses()) {
            Node *cb = ub.getOwner();
            if (cb->isReturn() || cb->getGraph() != &gb || partnerB_.count(cb)) continue;
            if (ua.getOperandNo() == ub.getOperandNo() && sameOp(ca, cb)) {
              pair(ca, cb);
              break;
            }
          }
        }
      }
    }
  }

  /// Whether `va` (of A) corresponds to `vb` (of B).
  bool corresponds(Value *va, Value *vb) {
    if (!va || !vb) return !va && !vb;
    Node *x = va->definingNode(), *y = vb->definingNode();
    // Two values computed the same way are the same input, whichever of
    // several equal nodes (three Constant 1s) each side's pairing took.
    if ((x || y) && sa_.value(va, true) == sb_.value(vb, true)) return true;
    if (x || y) {
      if (!x || !y) return false;
      auto it = partnerA_.find(x);
      return it != partnerA_.end() && it->second == y && va->resultIndex() == vb->resultIndex();
    }
    if (va->isGraphInput() && vb->isGraphInput())
      return va->getGraph() == &ga_ && vb->getGraph() == &gb_
                 ? va->name() == vb->name()
                 : sa_.value(va, false) == sb_.value(vb, false);
    if (va->isConstantInitializer() && vb->isConstantInitializer()) {
      auto ia = initA_.find(va);
      auto ib = initB_.find(vb);
      if (ia == initA_.end() && ib == initB_.end()) {
        initA_[va] = vb;
        initB_[vb] = va;
        initPairs_.push_back({va, vb});
        return true;
      }
      return ia != initA_.end() && ia->second == vb;
    }
    return false;
  }

  static std::string valueLabel(Value *v) {
    if (!v) return "(none)";
    if (Node *def = v->definingNode())
      return "'" + v->name().str() + "' of " + opName(*def) +
             (def->name().empty() ? "" : " '" + def->name().str() + "'");
    return "'" + v->name().str() + "'";
  }

  void compareNodes(const Node &x, const Node &y) {
    std::vector<std::string> details;
    std::map<std::string, const Attribute *> ax, ay;
    for (unsigned i = 0; i < x.numAttributes(); ++i) ax[x.attribute(i).name()] = &x.attribute(i);
    for (unsigned i = 0; i < y.numAttributes(); ++i) ay[y.attribute(i).name()] = &y.attribute(i);
    std::set<std::string> names;
    for (auto &[k, v] : ax) names.insert(k);
    for (auto &[k, v] : ay) names.insert(k);
    for (const std::string &n : names) {
      const Attribute *p = ax.count(n) ? ax[n] : nullptr, *q = ay.count(n) ? ay[n] : nullptr;
      if (p && q && sa_.attribute(*p) == sb_.attribute(*q)) continue;
      if (p && q && p->numGraphs() && p->numGraphs() == q->numGraphs() &&
          nestedDetails(*p, *q, details))
        continue;
      details.push_back("attribute " + n + ": " + (p ? formatAttribute(*p) : "(absent)") +
                        " -> " + (q ? formatAttribute(*q) : "(absent)"));
    }
    unsigned nOps = std::max(x.numOperands(), y.numOperands());
    for (unsigned i = 0; i < nOps; ++i) {
      Value *va = i < x.numOperands() ? x.operand(i) : nullptr;
      Value *vb = i < y.numOperands() ? y.operand(i) : nullptr;
      if (!corresponds(va, vb))
        details.push_back("input " + std::to_string(i) + ": " + valueLabel(va) + " -> " +
                          valueLabel(vb));
    }
    if (details.empty()) return;
    auto &e = addNode("node_changed", &x, &y);
    e.details = std::move(details);
  }

  /// A changed subgraph attribute: what differs inside its bodies, one line
  /// per difference (`then_branch: node_added Neg (computing 'r')`); false
  /// when the bodies' nodes and initializers match (the difference is in
  /// their interface or in what they capture).
  bool nestedDetails(const Attribute &p, const Attribute &q, std::vector<std::string> &details) {
    std::vector<std::string> lines;
    for (unsigned k = 0; k < p.numGraphs(); ++k) {
      std::string where = p.name() + (p.numGraphs() > 1 ? "[" + std::to_string(k) + "]" : "");
      ModelDiff sub = Differ(*p.graph(k), *q.graph(k)).run();
      for (const ModelDiff::Entry &e : sub.entries) {
        std::string text = formatDiffText(ModelDiff{{e}, 0, 0, 0});
        text = text.substr(0, text.rfind('\n', text.size() - 2)); // the count line
        std::string line = where + ": ";
        for (size_t i = 0; i < text.size(); ++i) {
          if (text[i] != '\n') {
            line += text[i];
            continue;
          }
          line += "; ";
          while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
        }
        lines.push_back(line);
      }
    }
    if (lines.empty()) return false;
    details.insert(details.end(), lines.begin(), lines.end());
    return true;
  }

  void initializers() {
    std::vector<Value *> ia, ib;
    for (Value *v : ga_.initializers())
      if (v->isConstantInitializer()) ia.push_back(v);
    for (Value *v : gb_.initializers())
      if (v->isConstantInitializer()) ib.push_back(v);
    // Leftovers: by equal contents, then by name.
    for (bool byName : {false, true}) {
      std::map<std::string, std::deque<Value *>> keyed;
      auto key = [&](Value *v, Signer &s) {
        return byName ? v->name().str() : std::to_string(s.value(v, true));
      };
      for (Value *v : ia)
        if (!initA_.count(v)) keyed[key(v, sa_)].push_back(v);
      for (Value *v : ib) {
        if (initB_.count(v)) continue;
        auto it = keyed.find(key(v, sb_));
        if (it == keyed.end() || it->second.empty()) continue;
        Value *va = it->second.front();
        it->second.pop_front();
        initA_[va] = v;
        initB_[v] = va;
        initPairs_.push_back({va, v});
      }
    }
    for (auto &[va, vb] : initPairs_) compareInitializers(va, vb);
    for (Value *v : ia)
      if (!initA_.count(v))
        add("initializer_removed", v->name().str(), "")
            .details.push_back("type: " + formatTensorBrief(*v->initializer()));
    for (Value *v : ib)
      if (!initB_.count(v))
        add("initializer_added", "", v->name().str())
            .details.push_back("type: " + formatTensorBrief(*v->initializer()));
  }

  void compareInitializers(Value *va, Value *vb) {
    const Tensor &x = *va->initializer(), &y = *vb->initializer();
    std::vector<std::string> details;
    std::optional<double> maxDiff;
    auto shape = [](const Tensor &t) {
      std::string s = dataTypeName(t.dataType()).str() + "[";
      for (size_t i = 0; i < t.dims().size(); ++i)
        s += (i ? "," : "") + std::to_string(t.dims()[i]);
      return s + "]";
    };
    if (x.dataType() != y.dataType() || x.dims() != y.dims()) {
      details.push_back("type: " + shape(x) + " -> " + shape(y));
    } else if (tensorHash(x, true) != tensorHash(y, true)) {
      if (x.dataType() == DataType::String) {
        details.push_back("values: strings differ");
      } else {
        auto p = x.values<double>();
        auto q = y.values<double>();
        if (!p.ok() || !q.ok()) {
          details.push_back("values: differ (unreadable: " +
                            std::string((!p.ok() ? p.status() : q.status()).message()) + ")");
        } else {
          double m = 0;
          size_t differ = 0;
          for (size_t i = 0; i < p->size(); ++i) {
            double u = (*p)[i], w = (*q)[i];
            bool bothNaN = std::isnan(u) && std::isnan(w);
            if (bothNaN || u == w) continue;
            ++differ;
            double delta = std::fabs(u - w);
            m = std::isnan(delta) || std::isnan(m) ? NAN : std::max(m, delta);
          }
          if (differ) {
            // Bytes can differ where values do not (NaN payloads, -0):
            // report values only.
            maxDiff = m;
            details.push_back("values: " + std::to_string(differ) + " of " +
                              std::to_string(p->size()) + " differ, max abs diff " +
                              formatFloat(m));
          }
        }
      }
    }
    if (details.empty()) return;
    auto &e = add("initializer_changed", va->name().str(), vb->name().str());
    e.details = std::move(details);
    e.maxAbsDiff = maxDiff;
  }

  void functions() {
    auto key = [](const Function &f) { return f.domain + "." + f.name + ":" + f.overload; };
    std::map<std::string, const Function *> fa, fb;
    for (auto &f : a_->functions()) fa[key(*f)] = f.get();
    for (auto &f : b_->functions()) fb[key(*f)] = f.get();
    for (auto &[k, f] : fa) {
      auto it = fb.find(k);
      if (it == fb.end()) {
        add("function_removed", f->qualifiedName(), "");
        continue;
      }
      // Function bodies name their inputs: the body hash reads them by
      // position, the same in both.
      Signer s1(f->body()), s2(it->second->body());
      if (s1.graph(f->body()) != s2.graph(it->second->body()))
        add("function_changed", f->qualifiedName(), f->qualifiedName())
            .details.push_back("body differs");
    }
    for (auto &[k, f] : fb)
      if (!fa.count(k)) add("function_added", "", f->qualifiedName());
  }

  const Model *a_ = nullptr, *b_ = nullptr;
  const Graph &ga_, &gb_;
  Signer sa_, sb_;
  ModelDiff d_;
  std::map<const Node *, const Node *> partnerA_, partnerB_;
  std::deque<std::pair<const Node *, const Node *>> work_;
  std::map<Value *, Value *> initA_, initB_;
  std::vector<std::pair<Value *, Value *>> initPairs_;
};

} // namespace

ModelDiff diffModels(const Model &a, const Model &b) { return Differ(a, b).run(); }

std::string formatDiffText(const ModelDiff &d) {
  std::string out;
  llvm::raw_string_ostream os(out);
  // A node without a name shows as what it computes.
  auto name = [](const std::string &n, const std::string &out) {
    return !n.empty() ? "'" + n + "'" : !out.empty() ? "(computing '" + out + "')" : "-";
  };
  for (const ModelDiff::Entry &e : d.entries) {
    os << e.kind;
    if (!e.op.empty()) os << " " << e.op;
    std::string a = name(e.nameA, e.outputA), b = name(e.nameB, e.outputB);
    if (a == b || e.kind.find("added") != std::string::npos) os << " " << b;
    else if (e.kind.find("removed") != std::string::npos) os << " " << a;
    else os << " " << a << " -> " << b;
    os << "\n";
    for (const std::string &x : e.details) os << "  " << x << "\n";
  }
  if (d.equal())
    os << "equal up to names (" << d.matched << " nodes matched)\n";
  else
    os << d.entries.size() << (d.entries.size() == 1 ? " difference" : " differences") << " ("
       << d.matched << " of " << d.nodesA << " nodes matched to " << d.nodesB << ")\n";
  return out;
}

std::string formatDiffJson(const ModelDiff &d, unsigned indent) {
  std::string out;
  llvm::raw_string_ostream os(out);
  {
    llvm::json::OStream j(os, indent);
    j.object([&] {
      j.attribute("format", "onnxir-diff");
      j.attribute("format_version", 1);
      j.attribute("equal", d.equal());
      j.attributeObject("nodes", [&] {
        j.attribute("a", (int64_t)d.nodesA);
        j.attribute("b", (int64_t)d.nodesB);
        j.attribute("matched", (int64_t)d.matched);
      });
      j.attributeArray("differences", [&] {
        for (const ModelDiff::Entry &e : d.entries)
          j.object([&] {
            j.attribute("kind", e.kind);
            j.attribute("op", e.op.empty() ? llvm::json::Value(nullptr) : llvm::json::Value(e.op));
            j.attribute("name_a", e.nameA.empty() && e.kind.find("added") != std::string::npos
                                      ? llvm::json::Value(nullptr)
                                      : llvm::json::Value(llvm::json::fixUTF8(e.nameA)));
            j.attribute("name_b", e.nameB.empty() && e.kind.find("removed") != std::string::npos
                                      ? llvm::json::Value(nullptr)
                                      : llvm::json::Value(llvm::json::fixUTF8(e.nameB)));
            if (!e.op.empty()) {
              j.attribute("output_a", e.outputA.empty() ? llvm::json::Value(nullptr)
                                                        : llvm::json::Value(llvm::json::fixUTF8(e.outputA)));
              j.attribute("output_b", e.outputB.empty() ? llvm::json::Value(nullptr)
                                                        : llvm::json::Value(llvm::json::fixUTF8(e.outputB)));
            }
            j.attributeArray("details", [&] {
              for (const std::string &x : e.details) j.value(llvm::json::fixUTF8(x));
            });
            if (e.maxAbsDiff) {
              if (std::isnan(*e.maxAbsDiff)) j.attribute("max_abs_diff", "nan");
              else j.attribute("max_abs_diff", *e.maxAbsDiff);
            } else {
              j.attribute("max_abs_diff", nullptr);
            }
          });
      });
    });
  }
  os << "\n";
  return out;
}

} // namespace onnxir
