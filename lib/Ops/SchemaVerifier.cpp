//===- SchemaVerifier.cpp - Nodes against their operator schemas ----------===//
#include "onnxir/Ops/SchemaVerifier.h"

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/NodeLookahead.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"

#include <cstdint>
#include <deque>
#include <set>

namespace onnxir {

namespace {

/// The op of `domain` in force at opset `version` nearest to `op` (edit
/// distance, case-insensitive, at most a third of its length), or "": the
/// "did you mean Sigmoid?" of an unknown op.
std::string nearestOp(llvm::StringRef domain, llvm::StringRef op, int64_t version) {
  std::string lower = op.lower(), best;
  unsigned bestDistance = std::max<unsigned>(1, (unsigned)op.size() / 3) + 1;
  llvm::StringRef last;
  for (const OpSchema &s : allSchemas()) {
    if (s.name() == last) continue; // one look-up per op, not per version
    last = s.name();
    const OpSchema *at = lookupSchema(domain, s.name(), version);
    if (!at || at->deprecated() || at->domain() != s.domain()) continue;
    unsigned d = llvm::StringRef(lower).edit_distance(s.name().lower(), true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = s.name().str();
    }
  }
  return best;
}

} // namespace

namespace {

std::string domainPhrase(llvm::StringRef d) {
  return isDefaultDomain(d) ? std::string("the default domain") : absl::StrCat("domain \"", d.str(), "\"");
}

/// Every graph of the model (main, nested, function bodies), each before the
/// graphs nested in it. Iterative: nesting depth costs no stack.
std::vector<const Graph *> allGraphs(const Model &m) {
  std::vector<const Graph *> out, stack;
  for (auto it = m.functions().rbegin(); it != m.functions().rend(); ++it)
    stack.push_back(&(*it)->body());
  stack.push_back(&m.graph());
  while (!stack.empty()) {
    const Graph *g = stack.back();
    stack.pop_back();
    out.push_back(g);
    if (g->numNodesWithSubgraphs() == 0) continue; // a flat graph: no walk over its nodes
    std::vector<const Graph *> nested;
    for (const Node &n : g->nodes())
      if (n.hasSubgraphs())
        for (Graph *sg : n.subgraphs()) nested.push_back(sg);
    for (auto it = nested.rbegin(); it != nested.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

class SchemaChecker {
public:
  SchemaChecker(const Model &m, const VerifyOptions &o) : m_(m), opts_(o) {}

  void run() {
    std::vector<const Graph *> graphs = allGraphs(m_);
    typedKnown_ = gatherTyped(graphs);
    checkGraphValues(m_.graph(), /*main=*/true);
    for (const Graph *g : graphs) {
      if (g != &m_.graph()) checkGraphValues(*g, /*main=*/false);
      if (typedKnown_) {
        // Only the node's own arrays are read (Note [Typed values first]).
        NodeLookahead ahead(
            *g, 16, 8, [](const Node &n) { n.prefetchOperandSlots(); },
            [](const Node &n) {
              if (n.numAttributes()) __builtin_prefetch(&n.attribute(0));
            },
            /*slots=*/true);
        for (const Node &n : g->nodes()) {
          ahead.step();
          if (full()) return;
          checkNode(n);
        }
        continue;
      }
      // The check reads each node's values (their types) and attributes:
      // on a big graph that is one cache miss after another, so the lines
      // are asked for 16 and 8 nodes ahead (Note [Node lookahead]).
      NodeLookahead ahead(
          *g, 16, 8, [](const Node &n) { n.prefetchValues(); },
          [](const Node &n) { n.prefetchNames(); }, /*slots=*/true);
      for (const Node &n : g->nodes()) {
        ahead.step();
        if (full()) return;
        checkNode(n);
      }
    }
  }

  void runOn(llvm::ArrayRef<const Node *> nodes) {
    for (const Node *n : nodes) {
      if (full()) return;
      checkNode(*n);
    }
  }

  std::vector<Diagnostic> take() { return std::move(diags_); }

  /// The first node of each op kind met, in walk order (Note [One walk on
  /// load]); complete only when the walk was not cut short by the caps.
  llvm::ArrayRef<const Node *> firstOfKind() const { return firstOfKind_; }
  bool walkedAll() const { return !full(); }

private:
  // Severe and other problems have a cap each (VerifyOptions).
  bool full() const {
    return severeCount_ >= opts_.maxDiagnostics && otherCount_ >= opts_.maxDiagnostics;
  }

  /// Whether one more problem of this severity is reported: a site whose
  /// message costs something asks first (a graph of 10^6 nodes with an
  /// unknown attribute on each reports 100 and builds 100 messages).
  bool room(bool severe) const {
    return (severe ? severeCount_ : otherCount_) < opts_.maxDiagnostics;
  }

  void report(const Node &n, const std::string &msg, bool severe = true,
              bool unknownOperator = false) {
    unsigned &count = severe ? severeCount_ : otherCount_;
    if (count >= opts_.maxDiagnostics) return;
    ++count;
    std::string loc = sourceLocation(&n);
    diags_.push_back({Diagnostic::Kind::Schema,
                      absl::StrCat(loc, loc.empty() ? "" : ": ", nodePath(&n), ": ", msg), severe,
                      unknownOperator, !loc.empty()});
  }

  void reportGraph(const Graph &g, const std::string &msg) {
    if (severeCount_ >= opts_.maxDiagnostics) return;
    ++severeCount_;
    diags_.push_back({Diagnostic::Kind::Schema, absl::StrCat(g.path(), ": ", msg), /*severe=*/true});
  }

  // Note [Graph inputs and their initializers]
  // ONNX wants a type on every input of the main graph (a body's inputs
  // may leave theirs to the node that runs it). An initializer that is
  // also an input is the default value of that input (a caller may feed
  // another: constantOf, IR/ConstantValue.h, does not read it as a
  // constant; -freeze-initializer-inputs makes it one): a declared element type or a known dim that the
  // tensor contradicts makes the model mean two things, so it is refused
  // here rather than one of the two being silently written back. Unknown
  // and symbolic dims, and a declared type without shape, agree with any
  // tensor.
  void checkGraphValues(const Graph &g, bool main) {
    if (g.parentFunction()) return; // function bodies carry no types
    for (const Value *v : g.inputs()) {
      const Type *t = v->type();
      if (!t) {
        if (main)
          reportGraph(g, absl::StrCat("input \"", v->name().str(), "\" has no type (the main graph's inputs need one)"));
        continue;
      }
      const Tensor *init = v->initializer();
      if (!init || !t->isTensor()) continue;
      std::string declared = t->str(), held = absl::StrCat(
          dataTypeName(init->dataType()).str(), "[", absl::StrJoin(init->dims(), ","), "]");
      if (t->hasElemType() && t->elemTypeRaw() != 0 && t->elemTypeRaw() != init->dataTypeRaw()) {
        reportGraph(g, absl::StrCat("input \"", v->name().str(), "\" is declared ", declared,
                                    " but its initializer holds ", held));
        continue;
      }
      if (!t->hasShape()) continue;
      bool clash = t->dims().size() != init->dims().size();
      for (size_t i = 0; !clash && i < t->dims().size(); ++i)
        clash = t->dims()[i].isKnown() && t->dims()[i].value != init->dims()[i];
      if (clash)
        reportGraph(g, absl::StrCat("input \"", v->name().str(), "\" is declared ", declared,
                                    " but its initializer holds ", held));
    }
  }

  // Note [Typed values first]
  // The type part of the check reads the type of every operand and result
  // of every node. On a big graph an operand is another node's result,
  // somewhere else in memory: reading its type is a cache miss per operand
  // (on a shuffled 10^6-node chain, most of the check's time), and in a
  // model as loaded most of those values have no type at all. So the
  // values that have a type (or an initializer, whose element type stands
  // for one) are gathered first: graph inputs, initializers and sparse
  // initializers from their lists, node results by a walk over the nodes
  // (a result lies beside its node, in the order the walk reads them). A
  // value outside the set has neither, so its type is not read; the
  // check's walk then reads only each node's own arrays (operand slots,
  // results, attributes), and what it reports, and in which order, is the
  // same. A model whose values are mostly typed (after -infer-shapes)
  // gains nothing from the set, and a big set would miss the cache as the
  // values do: past kMaxTyped values the gathering stops and every type is
  // read as before. Values outside the model's graphs are not gathered;
  // only a model the structural verifier refuses has operands there.
  static constexpr size_t kMaxTyped = 1u << 14;

  bool gatherTyped(llvm::ArrayRef<const Graph *> graphs) {
    auto add = [&](const Value *v) {
      if (v && (v->type() || v->initializer())) typed_.insert(v);
      return typed_.size() <= kMaxTyped;
    };
    for (const Graph *g : graphs) {
      for (const Value *v : g->inputs())
        if (!add(v)) return false;
      for (const Value *v : g->initializers())
        if (!add(v)) return false;
      for (const Value *v : g->sparseInitializers())
        if (!add(v)) return false;
      auto none = [](const Node &) {};
      NodeLookahead ahead(
          *g, 16, 0,
          [](const Node &n) {
            if (n.numResults()) __builtin_prefetch(n.result(0));
          },
          none);
      for (const Node &n : g->nodes()) {
        ahead.step();
        for (unsigned i = 0, e = n.numResults(); i < e; ++i)
          if (!add(n.result(i))) return false;
      }
    }
    return true;
  }

  // Note [Schema check per op kind]
  // What a node's check looks up depends only on its op kind: the domain,
  // op type and overload (interned: the pointers are the key) and the
  // function whose imports are in force. A graph of 10^6 nodes has a few
  // dozen kinds, so the function call, the opset in force and the schema
  // are found once per kind, not once per node; the type strings once per
  // (uniqued) type, and whether a formal allows a type once per pair. No
  // string is built for a node that passes. So are what the node's checks
  // ask of the kind alone: whether its domain is the default one, whether
  // the table covers its opset (a map lookup by domain name, once per node
  // before), which body check applies (four name comparisons per node).
  enum class Body : uint8_t { None, If, Loop, Scan, SequenceMap };
  struct OpEntry {
    const Function *call = nullptr;
    bool schemaDomain = false;
    bool defaultDomain = false;
    bool knownOpset = false; ///< default domain, opset the table covers
    Body body = Body::None;
    int64_t version = -1;
    const OpSchema *schema = nullptr;
    ValidityCheck validate = nullptr; // Note [Validity checks]
  };
  using OpKey =
      std::pair<const void *, std::pair<const void *, std::pair<const void *, const void *>>>;

  const OpEntry &entry(const Node &n) {
    OpKey key{n.getGraph()->parentFunction(),
              {n.domain().data(), {n.opType().data(), n.overload().data()}}};
    // A few kinds make most of a big graph: a small table by the op
    // type's address answers before the hash map does.
    Recent &r = recent_[(reinterpret_cast<uintptr_t>(key.second.second.first) >> 4) % kRecent];
    if (r.entry && r.key == key) return *r.entry;
    auto [it, fresh] = ops_.try_emplace(key, nullptr);
    if (!fresh) {
      r = {key, it->second};
      return *it->second;
    }
    firstOfKind_.push_back(&n);
    OpEntry &e = entries_.emplace_back();
    it->second = &e;
    r = {key, &e};
    e.call = m_.findFunction(n);
    if (e.call) return e;
    e.schemaDomain = isSchemaDomain(n.domain());
    if (!e.schemaDomain) return e;
    e.version = importedOpsetVersion(n, m_);
    e.defaultDomain = isDefaultDomain(n.domain());
    e.knownOpset = e.defaultDomain && e.version <= latestOpsetVersion(n.domain());
    if (e.defaultDomain) {
      llvm::StringRef op = n.opType();
      e.body = op == "If"            ? Body::If
               : op == "Loop"        ? Body::Loop
               : op == "Scan"        ? Body::Scan
               : op == "SequenceMap" ? Body::SequenceMap
                                     : Body::None;
    }
    if (e.version >= 0) e.schema = lookupSchema(n.domain(), n.opType(), e.version);
    if (e.schema)
      if (const ::onnxir::OpEntry *r = OpRegistry::get().lookup(n.domain(), n.opType(), e.version))
        e.validate = r->validate;
    return e;
  }

  void checkNode(const Node &n) {
    const OpEntry &e = entry(n);
    if (e.call) {
      checkCall(n, *e.call);
      return;
    }
    if (!e.schemaDomain) return; // custom domains are accepted
    int64_t v = e.version;
    // An op unknown to the table is certainly wrong only in the default
    // domain at an opset the table covers (a newer opset may have it).
    const bool defaultDomain = e.defaultDomain;
    if (v < 0) {
      report(n, absl::StrCat(domainPhrase(n.domain()), " is not imported"), defaultDomain, true);
      return;
    }
    const bool knownOpset = e.knownOpset;
    const OpSchema *s = e.schema;
    if (!s) {
      std::string later;
      auto vs = schemaVersions(n.domain(), n.opType());
      if (!vs.empty()) later = absl::StrCat(" (it first exists at opset ", vs.front().sinceVersion(), ")");
      else if (std::string near = nearestOp(n.domain(), n.opType(), v); !near.empty())
        later = absl::StrCat(" (did you mean ", near, "?)");
      report(n, absl::StrCat("no operator \"", n.opType().str(), "\" in opset ", v, " of ",
                             domainPhrase(n.domain()), later), knownOpset, true);
      return;
    }
    if (s->deprecated()) {
      report(n, absl::StrCat("operator \"", n.opType().str(), "\" is deprecated at opset ", v, " of ",
                             domainPhrase(n.domain())), knownOpset, true);
      return;
    }
    checkArity(n, *s);
    checkAttributes(n, *s);
    checkTypes(n, *s);
    checkBodies(n, *s, e.body);
    checkValidity(n, e);
  }

  // Note [Validity checks]
  // Some nodes break no rule the schema tables say but are still invalid:
  // ONNX's shape inference refuses them (a Transpose perm that is no
  // permutation, pads beside auto_pad, an Einsum equation with another
  // number of terms than inputs, operands whose declared ranks or dims
  // the op forbids). Each op's check lives in its section (the entry's
  // `validate`) and reads attributes and declared types only, as the rest
  // of this check does; a finding is severe: the model is refused on load
  // (--verify=structural skips this check, as it skips the others). Dims
  // that are not known sizes prove nothing.
  void checkValidity(const Node &n, const OpEntry &e) {
    if (!e.validate || !room(/*severe=*/true)) return;
    NodeContext c(n, e.version);
    std::string why = e.validate(c);
    if (!why.empty()) report(n, why);
  }

  void checkCall(const Node &n, const Function &f) {
    const Graph &b = f.body();
    if (n.numOperands() > b.numInputs())
      report(n, absl::StrCat("calls function ", f.qualifiedName(), " with ", n.numOperands(),
                             " inputs; it takes ", b.numInputs()));
    if (n.numResults() > b.numOutputs())
      report(n, absl::StrCat("calls function ", f.qualifiedName(), " with ", n.numResults(),
                             " outputs; it gives ", b.numOutputs()));
  }

  void checkArity(const Node &n, const OpSchema &s) {
    auto side = [&](const char *what, unsigned count, int lo, int hi,
                    llvm::ArrayRef<FormalParameter> formals, auto present) {
      if ((int64_t)count < lo)
        report(n, absl::StrCat(s.str(), " takes at least ", lo, " ", what, "s, the node has ", count));
      else if (hi != kUnboundedArity && (int64_t)count > hi)
        report(n, absl::StrCat(s.str(), " takes at most ", hi, " ", what, "s, the node has ", count));
      for (unsigned i = 0; i < count && i < formals.size(); ++i) {
        const FormalParameter &f = formals[i];
        if (f.option == ParamOption::Single && !present(i))
          report(n, absl::StrCat(what, " #", i, " \"", f.name.str(), "\" of ", s.str(),
                                 " is not optional but the slot is empty"));
      }
      if (!formals.empty() && formals.back().isVariadic() && count >= formals.size() - 1) {
        int64_t actual = (int64_t)count - (int64_t)(formals.size() - 1);
        if (actual < formals.back().minArity && (int64_t)count >= lo)
          report(n, absl::StrCat("variadic ", what, " \"", formals.back().name.str(), "\" of ",
                                 s.str(), " takes at least ", formals.back().minArity,
                                 " values, the node gives ", actual));
      }
    };
    side("input", n.numOperands(), s.minInputs(), s.maxInputs(), s.inputs(),
         [&](unsigned i) { return n.operand(i) != nullptr; });
    side("output", n.numResults(), s.minOutputs(), s.maxOutputs(), s.outputs(),
         [&](unsigned i) { return n.result(i) != nullptr; });
  }

  void checkAttributes(const Node &n, const OpSchema &s) {
    for (unsigned i = 0; i < n.numAttributes(); ++i) {
      const Attribute &a = n.attribute(i);
      const AttributeSchema *as = s.attribute(a.name());
      if (!as) {
        if (!room(/*severe=*/false)) continue;
        std::vector<std::string> names;
        for (const AttributeSchema &x : s.attributes()) names.push_back(x.name.str());
        report(n, absl::StrCat("unknown attribute \"", a.name(), "\" (", s.str(),
                               names.empty() ? " has no attributes"
                                             : " has " + absl::StrJoin(names, ", "),
                               ")"),
               /*severe=*/false);
        continue;
      }
      if (a.kind() != AttrKind::Undefined && a.kind() != as->kind)
        report(n, absl::StrCat("attribute \"", a.name(), "\" is ", attrKindName(a.kind()).str(),
                               ", ", s.str(), " wants ", attrKindName(as->kind).str()));
    }
    for (const AttributeSchema &as : s.attributes())
      if (as.required && !n.getAttr(as.name))
        report(n, absl::StrCat("missing required attribute \"", as.name.str(), "\" of ", s.str()));
  }

  /// typeString of `v`'s type (of its initializer's element type when it
  /// has no type), "" when unknown; once per type (Note [Schema check per
  /// op kind]).
  llvm::StringRef typeStringOf(const Value *v) {
    if (typedKnown_ && !typed_.count(v)) return ""; // Note [Typed values first]
    if (const Type *ty = v->type()) {
      auto [it, fresh] = typeStrings_.try_emplace(ty);
      if (fresh) it->second = saver_.save(typeString(*ty));
      return it->second;
    }
    if (const Tensor *init = v->initializer()) // an initializer without value_info
      if (isKnownDataType(init->dataTypeRaw()) && init->dataTypeRaw() != 0)
        return saver_.save(absl::StrCat("tensor(", dataTypeName(init->dataType()).str(), ")"));
    return "";
  }

  bool allows(const FormalParameter *f, const Value *v, llvm::StringRef t) {
    if (!v->type()) return f->allows(t);
    auto [it, fresh] = allowed_.try_emplace({f, v->type()});
    if (fresh) it->second = f->allows(t);
    return it->second;
  }

  void checkTypes(const Node &n, const OpSchema &s) {
    // Each type variable's first binding: (variable, type, output?, index).
    struct Binding {
      llvm::StringRef var, type;
      bool output;
      unsigned index;
    };
    llvm::SmallVector<Binding, 4> bound;
    auto where = [&](bool output, unsigned i) {
      const FormalParameter *f = output ? s.outputFor(i) : s.inputFor(i);
      return absl::StrCat(output ? "output" : "input", " #", i, " \"", f->name.str(), "\"");
    };
    auto one = [&](bool output, unsigned i, const FormalParameter *f, const Value *v) {
      if (!f || !v) return;
      llvm::StringRef t = typeStringOf(v);
      if (t.empty()) return;
      if (!allows(f, v, t)) {
        if (!room(/*severe=*/false)) return;
        if (f->constraint)
          report(n, absl::StrCat(where(output, i), " has type ", t.str(), ", which ",
                                 f->typeStr.str(), " of ", s.str(), " does not allow (",
                                 absl::StrJoin(f->constraint->allowed, ", ",
                                               [](std::string *o, llvm::StringRef x) {
                                                 o->append(x.data(), x.size());
                                               }),
                                 ")"),
                 /*severe=*/false);
        else
          report(n, absl::StrCat(where(output, i), " has type ", t.str(), ", ", s.str(), " wants ",
                                 f->typeStr.str()),
                 /*severe=*/false);
        return;
      }
      if (!f->constraint || (f->isVariadic() && !f->homogeneous)) return;
      for (const Binding &b : bound)
        if (b.var == f->typeStr) {
          if (b.type != t && room(/*severe=*/false))
            report(n, absl::StrCat(f->typeStr.str(), " of ", s.str(), " is ", b.type.str(), " at ",
                                   where(b.output, b.index), " but ", t.str(), " at ",
                                   where(output, i)),
                   /*severe=*/false);
          return;
        }
      bound.push_back({f->typeStr, t, output, i});
    };
    for (unsigned i = 0; i < n.numOperands(); ++i) one(false, i, s.inputFor(i), n.operand(i));
    for (unsigned i = 0; i < n.numResults(); ++i) one(true, i, s.outputFor(i), n.result(i));
  }

  void checkBody(const Node &n, const char *attr, int64_t wantIn, int64_t wantOut,
                 const std::string &why) {
    const Attribute *a = n.getAttr(attr);
    if (!a || a->kind() != AttrKind::Graph || a->numGraphs() == 0) return;
    const Graph *g = a->graph(0);
    if (wantIn >= 0 && (int64_t)g->numInputs() != wantIn)
      report(n, absl::StrCat("attribute \"", attr, "\": the body has ", g->numInputs(),
                             " inputs, ", why, " needs ", wantIn));
    if (wantOut >= 0 && (int64_t)g->numOutputs() != wantOut)
      report(n, absl::StrCat("attribute \"", attr, "\": the body has ", g->numOutputs(),
                             " outputs, ", why, " needs ", wantOut));
  }

  void checkBodies(const Node &n, const OpSchema &s, Body body) {
    if (body == Body::None) return;
    int64_t ins = n.numOperands(), outs = n.numResults();
    if (body == Body::If) {
      std::string why = absl::StrCat("an If with ", outs, " results");
      checkBody(n, "then_branch", 0, outs, why);
      checkBody(n, "else_branch", 0, outs, why);
    } else if (body == Body::Loop) {
      int64_t carried = ins >= 2 ? ins - 2 : 0;
      checkBody(n, "body", 2 + carried,
                1 + outs, absl::StrCat("a Loop with ", carried, " loop-carried values and ", outs,
                                       " results"));
    } else if (body == Body::Scan) {
      int64_t bodyIns = s.sinceVersion() < 9 ? ins - 1 : ins;
      checkBody(n, "body", bodyIns, outs,
                absl::StrCat("a Scan with ", bodyIns, " state and scan inputs and ", outs,
                             " results"));
    } else if (body == Body::SequenceMap) {
      checkBody(n, "body", ins, outs,
                absl::StrCat("a SequenceMap with ", ins, " inputs and ", outs, " results"));
    }
  }

  const Model &m_;
  const VerifyOptions &opts_;
  std::vector<Diagnostic> diags_;
  llvm::DenseMap<OpKey, const OpEntry *> ops_;
  std::deque<OpEntry> entries_; ///< ops_'s entries (stable addresses)
  struct Recent {
    OpKey key;
    const OpEntry *entry = nullptr;
  };
  static constexpr size_t kRecent = 16;
  Recent recent_[kRecent];
  llvm::DenseMap<const Type *, llvm::StringRef> typeStrings_;
  llvm::DenseMap<std::pair<const void *, const void *>, bool> allowed_;
  llvm::BumpPtrAllocator alloc_;
  llvm::StringSaver saver_{alloc_};
  unsigned severeCount_ = 0, otherCount_ = 0;
  std::vector<const Node *> firstOfKind_;
  llvm::DenseSet<const Value *> typed_; ///< Note [Typed values first]
  bool typedKnown_ = false;
};

} // namespace

// IR's verifyAll(m, {schema = true}) asks this check; installed when this
// file is linked (any use of the schema verifier or the registry links it).
static const bool kSchemaCheckerInstalled = (setSchemaChecker(verifySchemaAll), true);

std::vector<Diagnostic> verifySchemaAll(const Model &m, const VerifyOptions &opts) {
  SchemaChecker c(m, opts);
  c.run();
  return c.take();
}

std::vector<Diagnostic> verifyNodeSchemas(const Model &m, llvm::ArrayRef<const Node *> nodes,
                                          const VerifyOptions &opts) {
  SchemaChecker c(m, opts);
  c.runOn(nodes);
  return c.take();
}

namespace {

// Note [One walk on load]
// schemaWarnings() says, once per op kind, what is unknown; the load check
// (checkSchemasOnLoad) also runs the full check, which meets every op kind
// anyway. So the load check takes the kinds from the full check's walk
// (the first node of each kind, in the same graph and node order as
// schemaWarnings' own walk, so the warnings and their order are the same)
// instead of walking a model of 10^6 nodes a second time. Only when the
// full check stopped early (its diagnostic caps) does it walk again.

/// What schemaWarnings says before the op kinds: a newer ir_version, and
/// imports newer than the table.
void headerWarnings(const Model &m, std::vector<Diagnostic> &out) {
  auto warn = [&](std::string msg) { out.push_back({Diagnostic::Kind::SchemaWarning, std::move(msg)}); };
  if (m.irVersion && *m.irVersion > kMaxIRVersion)
    warn(absl::StrCat("ir_version ", *m.irVersion, " is newer than the newest this build supports (",
                      kMaxIRVersion, ")"));
  auto imports = [&](llvm::ArrayRef<OpsetImport> list, const std::string &where) {
    for (const OpsetImport &o : list) {
      int64_t latest = latestOpsetVersion(o.domain);
      if (latest > 0 && o.version > latest)
        warn(absl::StrCat(where, "imports ", domainPhrase(o.domain), " at opset ", o.version,
                          "; the newest known is ", latest, " (its ops are checked against it)"));
    }
  };
  imports(m.opsetImports, "the model ");
  for (auto &f : m.functions()) imports(f->opsetImports, "function " + f->qualifiedName() + " ");
}

/// The warning of one op kind, given its first node `n` (none when the
/// kind is known); `seen` keeps one warning per (domain, op type).
void kindWarning(const Model &m, const Node &n, bool exceptErrors, bool exceptSevere,
                 std::set<std::pair<std::string, std::string>> &seen,
                 std::vector<Diagnostic> &out) {
  if (m.findFunction(n)) return;
  std::string dom = canonicalDomain(n.domain()).str();
  int64_t v = importedOpsetVersion(n, m);
  bool schemaDomain = isSchemaDomain(dom);
  if (v >= 0 && (!schemaDomain || lookupSchema(dom, n.opType(), v))) return;
  if (exceptErrors && schemaDomain) return;
  // What verifySchemaAll reports as severe (an op of the default domain
  // at an opset the table covers).
  if (exceptSevere && isDefaultDomain(dom) && v <= latestOpsetVersion(dom)) return;
  if (!seen.insert({dom, n.opType().str()}).second) return;
  std::string loc = sourceLocation(&n);
  std::string first = loc.empty() ? nodePath(&n) : absl::StrCat(nodePath(&n), " at ", loc);
  std::string op = dom.empty() ? n.opType().str() : absl::StrCat(dom, ".", n.opType().str());
  std::string msg = v < 0 ? absl::StrCat("op ", op, ": ", domainPhrase(dom),
                                         " is not imported (first use: ", first, ")")
                          : absl::StrCat("op ", op, " is unknown at opset ", v, " of ",
                                         domainPhrase(dom), " (first use: ", first, ")");
  out.push_back({Diagnostic::Kind::SchemaWarning, std::move(msg)});
}

} // namespace

std::vector<Diagnostic> schemaWarnings(const Model &m, bool exceptErrors, bool exceptSevere) {
  std::vector<Diagnostic> out;
  headerWarnings(m, out);
  std::set<std::pair<std::string, std::string>> seen;
  // Whether an operator passes depends only on (domain, op type, overload)
  // and on the function whose imports apply; names are interned, so the
  // pointers are the key, and a graph of 10^6 nodes with a few dozen
  // operators does the lookups a few dozen times.
  using OpKey = std::pair<const void *, std::pair<const void *, std::pair<const void *, const void *>>>;
  llvm::DenseSet<OpKey> kinds;
  for (const Graph *g : allGraphs(m)) {
    const Function *f = g->parentFunction();
    auto none = [](const Node &) {};
    NodeLookahead ahead(*g, 8, 0, none, none); // the nodes' own lines
    for (const Node &n : g->nodes()) {
      ahead.step();
      OpKey key{f, {n.domain().data(), {n.opType().data(), n.overload().data()}}};
      if (kinds.insert(key).second) kindWarning(m, n, exceptErrors, exceptSevere, seen, out);
    }
  }
  return out;
}

SchemaCheckResult checkSchemasOnLoad(const Model &m, SchemaCheckLevel level, bool strict,
                                     unsigned maxWarnings) {
  SchemaCheckResult r;
  auto warn = [&](const Diagnostic &d) { (strict ? r.errors : r.warnings).push_back(d); };
  bool exceptErrors = level == SchemaCheckLevel::Schema;
  bool exceptSevere = level == SchemaCheckLevel::Default;
  if (level == SchemaCheckLevel::Structure) {
    for (const Diagnostic &d : schemaWarnings(m, exceptErrors, exceptSevere)) warn(d);
    return r;
  }
  // Note [One walk on load]: the kinds come from the full check's walk.
  VerifyOptions defaults; // the checker keeps a reference: it must outlive it
  SchemaChecker checker(m, defaults);
  checker.run();
  std::vector<Diagnostic> warnings;
  if (checker.walkedAll()) {
    headerWarnings(m, warnings);
    std::set<std::pair<std::string, std::string>> seen;
    for (const Node *n : checker.firstOfKind())
      kindWarning(m, *n, exceptErrors, exceptSevere, seen, warnings);
  } else {
    warnings = schemaWarnings(m, exceptErrors, exceptSevere);
  }
  for (const Diagnostic &d : warnings) warn(d);
  unsigned warned = 0;
  for (const Diagnostic &d : checker.take()) {
    if (level == SchemaCheckLevel::Schema || d.severe) {
      r.errors.push_back(d);
      r.schemaErrors = true;
    } else if (d.unknownOperator) {
      continue; // the load warning says it, once per op kind
    } else if (strict || warned < maxWarnings) {
      warn(d);
      ++warned;
    } else {
      ++r.moreWarnings;
    }
  }
  return r;
}

} // namespace onnxir
