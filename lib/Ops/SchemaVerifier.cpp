//===- SchemaVerifier.cpp - Nodes against their operator schemas ----------===//
#include "onnxir/Ops/SchemaVerifier.h"

#include "onnxir/IR/Model.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
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
    std::vector<const Graph *> nested;
    for (const Node &n : g->nodes())
      for (Graph *sg : n.subgraphs()) nested.push_back(sg);
    for (auto it = nested.rbegin(); it != nested.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

class SchemaChecker {
public:
  SchemaChecker(const Model &m, const VerifyOptions &o) : m_(m), opts_(o) {}

  void run() {
    for (const Graph *g : allGraphs(m_))
      for (const Node &n : g->nodes()) {
        if (full()) return;
        checkNode(n);
      }
  }

  void runOn(llvm::ArrayRef<const Node *> nodes) {
    for (const Node *n : nodes) {
      if (full()) return;
      checkNode(*n);
    }
  }

  std::vector<Diagnostic> take() { return std::move(diags_); }

private:
  // Severe and other problems have a cap each (VerifyOptions).
  bool full() const {
    return severeCount_ >= opts_.maxDiagnostics && otherCount_ >= opts_.maxDiagnostics;
  }

  void report(const Node &n, const std::string &msg, bool severe = true,
              bool unknownOperator = false) {
    unsigned &count = severe ? severeCount_ : otherCount_;
    if (count >= opts_.maxDiagnostics) return;
    ++count;
    diags_.push_back(
        {Diagnostic::Kind::Schema, nodePath(&n) + ": " + msg, severe, unknownOperator});
  }

  void checkNode(const Node &n) {
    if (const Function *f = m_.findFunction(n)) {
      checkCall(n, *f);
      return;
    }
    if (!isSchemaDomain(n.domain())) return; // custom domains are accepted
    int64_t v = importedOpsetVersion(n, m_);
    // An op unknown to the table is certainly wrong only in the default
    // domain at an opset the table covers (a newer opset may have it).
    bool defaultDomain = isDefaultDomain(n.domain());
    if (v < 0) {
      report(n, absl::StrCat(domainPhrase(n.domain()), " is not imported"), defaultDomain, true);
      return;
    }
    bool knownOpset = defaultDomain && v <= latestOpsetVersion(n.domain());
    const OpSchema *s = lookupSchema(n.domain(), n.opType(), v);
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
    checkBodies(n, *s);
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

  void checkTypes(const Node &n, const OpSchema &s) {
    // Type variable -> (type string, where first seen).
    std::map<llvm::StringRef, std::pair<std::string, std::string>> bound;
    auto one = [&](const char *what, unsigned i, const FormalParameter *f, const Value *v) {
      if (!f || !v) return;
      std::string t;
      if (v->type()) t = typeString(*v->type());
      else if (const Tensor *init = v->initializer()) // an initializer without value_info
        if (isKnownDataType(init->dataTypeRaw()) && init->dataTypeRaw() != 0)
          t = absl::StrCat("tensor(", dataTypeName(init->dataType()).str(), ")");
      if (t.empty()) return;
      std::string where = absl::StrCat(what, " #", i, " \"", f->name.str(), "\"");
      if (!f->allows(t)) {
        if (f->constraint)
          report(n, absl::StrCat(where, " has type ", t, ", which ", f->typeStr.str(), " of ",
                                 s.str(), " does not allow (",
                                 absl::StrJoin(f->constraint->allowed, ", ",
                                               [](std::string *o, llvm::StringRef x) {
                                                 o->append(x.data(), x.size());
                                               }),
                                 ")"),
                 /*severe=*/false);
        else
          report(n, absl::StrCat(where, " has type ", t, ", ", s.str(), " wants ", f->typeStr.str()),
                 /*severe=*/false);
        return;
      }
      if (!f->constraint || (f->isVariadic() && !f->homogeneous)) return;
      auto [it, fresh] = bound.emplace(f->typeStr, std::make_pair(t, where));
      if (!fresh && it->second.first != t)
        report(n, absl::StrCat(f->typeStr.str(), " of ", s.str(), " is ", it->second.first, " at ",
                               it->second.second, " but ", t, " at ", where),
               /*severe=*/false);
    };
    for (unsigned i = 0; i < n.numOperands(); ++i) one("input", i, s.inputFor(i), n.operand(i));
    for (unsigned i = 0; i < n.numResults(); ++i) one("output", i, s.outputFor(i), n.result(i));
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

  void checkBodies(const Node &n, const OpSchema &s) {
    if (!isDefaultDomain(n.domain())) return;
    int64_t ins = n.numOperands(), outs = n.numResults();
    llvm::StringRef op = n.opType();
    if (op == "If") {
      std::string why = absl::StrCat("an If with ", outs, " results");
      checkBody(n, "then_branch", 0, outs, why);
      checkBody(n, "else_branch", 0, outs, why);
    } else if (op == "Loop") {
      int64_t carried = ins >= 2 ? ins - 2 : 0;
      checkBody(n, "body", 2 + carried,
                1 + outs, absl::StrCat("a Loop with ", carried, " loop-carried values and ", outs,
                                       " results"));
    } else if (op == "Scan") {
      int64_t bodyIns = s.sinceVersion() < 9 ? ins - 1 : ins;
      checkBody(n, "body", bodyIns, outs,
                absl::StrCat("a Scan with ", bodyIns, " state and scan inputs and ", outs,
                             " results"));
    } else if (op == "SequenceMap") {
      checkBody(n, "body", ins, outs,
                absl::StrCat("a SequenceMap with ", ins, " inputs and ", outs, " results"));
    }
  }

  const Model &m_;
  const VerifyOptions &opts_;
  std::vector<Diagnostic> diags_;
  unsigned severeCount_ = 0, otherCount_ = 0;
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

std::vector<Diagnostic> schemaWarnings(const Model &m, bool exceptErrors, bool exceptSevere) {
  std::vector<Diagnostic> out;
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
  std::set<std::pair<std::string, std::string>> seen;
  // Whether an operator passes depends only on (domain, op type, overload)
  // and on the function whose imports apply; names are interned, so the
  // pointers are the key, and a graph of 10^6 nodes with a few dozen
  // operators does the lookups a few dozen times.
  using OpKey = std::pair<const void *, std::pair<const void *, std::pair<const void *, const void *>>>;
  llvm::DenseSet<OpKey> passed;
  for (const Graph *g : allGraphs(m)) {
    const Function *f = g->parentFunction();
    for (const Node &n : g->nodes()) {
      OpKey key{f, {n.domain().data(), {n.opType().data(), n.overload().data()}}};
      if (passed.count(key)) continue;
      if (m.findFunction(n)) {
        passed.insert(key);
        continue;
      }
      std::string dom = canonicalDomain(n.domain()).str();
      int64_t v = importedOpsetVersion(n, m);
      bool schemaDomain = isSchemaDomain(dom);
      if (v >= 0 && (!schemaDomain || lookupSchema(dom, n.opType(), v))) {
        passed.insert(key);
        continue;
      }
      if (exceptErrors && schemaDomain) continue;
      // What verifySchemaAll reports as severe (an op of the default domain
      // at an opset the table covers).
      if (exceptSevere && isDefaultDomain(dom) && v <= latestOpsetVersion(dom)) continue;
      if (!seen.insert({dom, n.opType().str()}).second) continue;
      std::string op = dom.empty() ? n.opType().str() : absl::StrCat(dom, ".", n.opType().str());
      if (v < 0)
        warn(absl::StrCat("op ", op, ": ", domainPhrase(dom), " is not imported (first use: ",
                          nodePath(&n), ")"));
      else
        warn(absl::StrCat("op ", op, " is unknown at opset ", v, " of ", domainPhrase(dom),
                          " (first use: ", nodePath(&n), ")"));
    }
  }
  return out;
}

SchemaCheckResult checkSchemasOnLoad(const Model &m, SchemaCheckLevel level, bool strict,
                                     unsigned maxWarnings) {
  SchemaCheckResult r;
  auto warn = [&](const Diagnostic &d) { (strict ? r.errors : r.warnings).push_back(d); };
  for (const Diagnostic &d : schemaWarnings(m, /*exceptErrors=*/level == SchemaCheckLevel::Schema,
                                            /*exceptSevere=*/level == SchemaCheckLevel::Default))
    warn(d);
  if (level == SchemaCheckLevel::Structure) return r;
  unsigned warned = 0;
  for (const Diagnostic &d : verifySchemaAll(m)) {
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
