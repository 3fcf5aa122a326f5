//===- OpSchema.cpp - The operator schema registry ------------------------===//
//
// The generated tables (OpSchemaTables.inc) are flat records of indices into
// one string pool. On first use they are expanded once into OpSchema objects
// whose StringRefs point into the pool (static storage, so they never dangle).
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpSchema.h"

#include "onnxir/Ops/OpRegistry.h"

#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/Type.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"

#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"

#include <algorithm>
#include <map>

namespace onnxir {

namespace {

struct RawParam {
  uint16_t name, type;
  uint8_t option, homogeneous;
  int32_t minArity;
};
struct RawAttr {
  uint16_t name;
  uint8_t kind, required, dflt;
  uint32_t dfltIndex, dfltCount;
};
struct RawConstraint {
  uint16_t param;
  uint32_t listStart, listCount;
};
struct RawBody {
  int32_t opset;
  uint16_t text;
};
enum : uint8_t { kDeprecated = 1, kExperimental = 2, kHasFunction = 4, kContextDependent = 8 };
struct RawSchema {
  uint16_t domain, name;
  int32_t since;
  uint8_t flags, determinism;
  int32_t minIn, maxIn, minOut, maxOut;
  uint32_t inStart, inCount, outStart, outCount, attrStart, attrCount, tcStart, tcCount,
      bodyStart, bodyCount;
};
enum : uint8_t { DNone, DInt, DFloat, DString, DInts, DFloats, DStrings, DTensor };

#include "OpSchemaTables.inc"

llvm::StringRef str(uint32_t id) {
  return llvm::StringRef(kStrPool + kStrOffsets[id], kStrOffsets[id + 1] - kStrOffsets[id]);
}

} // namespace

struct SchemaTable {
  std::vector<OpSchema> schemas;
  /// (domain, op) -> [first, last) in schemas.
  std::map<std::pair<llvm::StringRef, llvm::StringRef>, std::pair<size_t, size_t>> byOp;
  std::map<llvm::StringRef, int64_t> latest;

  SchemaTable() {
    size_t n = sizeof(kSchemas) / sizeof(kSchemas[0]);
    schemas.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const RawSchema &r = kSchemas[i];
      OpSchema &s = schemas[i];
      s.domain_ = str(r.domain);
      s.name_ = str(r.name);
      s.since_ = r.since;
      s.deprecated_ = r.flags & kDeprecated;
      s.experimental_ = r.flags & kExperimental;
      s.hasFunction_ = r.flags & kHasFunction;
      s.contextDependent_ = r.flags & kContextDependent;
      s.determinism_ = static_cast<Determinism>(r.determinism);
      s.minIn_ = r.minIn;
      s.maxIn_ = r.maxIn;
      s.minOut_ = r.minOut;
      s.maxOut_ = r.maxOut;
      for (uint32_t k = 0; k < r.tcCount; ++k) {
        const RawConstraint &c = kConstraints[r.tcStart + k];
        TypeConstraint tc;
        tc.param = str(c.param);
        for (uint32_t j = 0; j < c.listCount; ++j) tc.allowed.push_back(str(kStrLists[c.listStart + j]));
        s.constraints_.push_back(std::move(tc));
      }
      auto params = [&](uint32_t start, uint32_t count, std::vector<FormalParameter> &out) {
        for (uint32_t k = 0; k < count; ++k) {
          const RawParam &p = kParams[start + k];
          FormalParameter f;
          f.name = str(p.name);
          f.typeStr = str(p.type);
          f.option = static_cast<ParamOption>(p.option);
          f.homogeneous = p.homogeneous;
          f.minArity = p.minArity;
          out.push_back(f);
        }
      };
      params(r.inStart, r.inCount, s.inputs_);
      params(r.outStart, r.outCount, s.outputs_);
      // Constraint pointers once the vector no longer grows.
      for (auto *v : {&s.inputs_, &s.outputs_})
        for (FormalParameter &f : *v) f.constraint = s.typeConstraint(f.typeStr);
      for (uint32_t k = 0; k < r.attrCount; ++k) {
        const RawAttr &a = kAttrs[r.attrStart + k];
        AttributeSchema as;
        as.name = str(a.name);
        as.kind = static_cast<AttrKind>(a.kind);
        as.required = a.required;
        as.hasDefault = a.dflt != DNone;
        switch (a.dflt) {
        case DInt: as.defaultInt = kDefaultInts[a.dfltIndex]; break;
        case DFloat: as.defaultFloat = kDefaultFloats[a.dfltIndex]; break;
        case DString: as.defaultString = str(a.dfltIndex); break;
        case DInts:
          as.defaultInts.assign(kDefaultInts + a.dfltIndex, kDefaultInts + a.dfltIndex + a.dfltCount);
          break;
        case DFloats:
          as.defaultFloats.assign(kDefaultFloats + a.dfltIndex,
                                  kDefaultFloats + a.dfltIndex + a.dfltCount);
          break;
        case DStrings:
          for (uint32_t j = 0; j < a.dfltCount; ++j)
            as.defaultStrings.push_back(str(kStrLists[a.dfltIndex + j]));
          break;
        default: break;
        }
        s.attrs_.push_back(std::move(as));
      }
      for (uint32_t k = 0; k < r.bodyCount; ++k)
        s.bodies_.push_back(FunctionBody{kBodies[r.bodyStart + k].opset, str(kBodies[r.bodyStart + k].text)});
    }
    // Versions of one op are adjacent and sorted (the generator sorts).
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      while (j < n && schemas[j].domain_ == schemas[i].domain_ && schemas[j].name_ == schemas[i].name_) {
        schemas[j - 1].last_ = schemas[j].since_ - 1;
        ++j;
      }
      byOp[{schemas[i].domain_, schemas[i].name_}] = {i, j};
      for (size_t k = i; k < j; ++k) {
        int64_t &l = latest[schemas[k].domain_];
        l = std::max(l, schemas[k].since_);
      }
      i = j;
    }
  }

  /// Schemas registered at run time (registerSchema), by (domain, op),
  /// each list sorted by since_version; strings in `saver`.
  std::map<std::pair<llvm::StringRef, llvm::StringRef>, std::vector<OpSchema>> extra;
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver{alloc};

  static SchemaTable &get() {
    static SchemaTable *t = new SchemaTable(); // never destroyed: used until exit
    return *t;
  }
};

//===--- OpSchema ---------------------------------------------------------===//

bool TypeConstraint::allows(llvm::StringRef typeStr) const {
  return std::find(allowed.begin(), allowed.end(), typeStr) != allowed.end();
}

bool FormalParameter::allows(llvm::StringRef t) const {
  return constraint ? constraint->allows(t) : typeStr == t;
}

const FormalParameter *OpSchema::input(llvm::StringRef n) const {
  int i = inputIndex(n);
  return i < 0 ? nullptr : &inputs_[i];
}
const FormalParameter *OpSchema::output(llvm::StringRef n) const {
  int i = outputIndex(n);
  return i < 0 ? nullptr : &outputs_[i];
}
int OpSchema::inputIndex(llvm::StringRef n) const {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].name == n) return (int)i;
  return -1;
}
int OpSchema::outputIndex(llvm::StringRef n) const {
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i].name == n) return (int)i;
  return -1;
}
const AttributeSchema *OpSchema::attribute(llvm::StringRef n) const {
  for (const AttributeSchema &a : attrs_)
    if (a.name == n) return &a;
  return nullptr;
}
const TypeConstraint *OpSchema::typeConstraint(llvm::StringRef p) const {
  for (const TypeConstraint &c : constraints_)
    if (c.param == p) return &c;
  return nullptr;
}

static const FormalParameter *formalFor(llvm::ArrayRef<FormalParameter> fs, unsigned i) {
  if (fs.empty()) return nullptr;
  if (i < fs.size()) return &fs[i];
  return fs.back().isVariadic() ? &fs.back() : nullptr;
}
const FormalParameter *OpSchema::inputFor(unsigned i) const { return formalFor(inputs_, i); }
const FormalParameter *OpSchema::outputFor(unsigned i) const { return formalFor(outputs_, i); }

const FunctionBody *OpSchema::functionBodyFor(int64_t opset) const {
  const FunctionBody *best = nullptr;
  for (const FunctionBody &b : bodies_)
    if (b.opset <= opset) best = &b;
  return best;
}

std::string OpSchema::str() const {
  return absl::StrCat(domain_.empty() ? "" : domain_.str() + ".", name_.str(), "-v", since_);
}

static bool sameParams(llvm::ArrayRef<FormalParameter> a, llvm::ArrayRef<FormalParameter> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].typeStr != b[i].typeStr || a[i].option != b[i].option ||
        a[i].homogeneous != b[i].homogeneous || a[i].minArity != b[i].minArity)
      return false;
  return true;
}

bool OpSchema::sameFormals(const OpSchema &o) const {
  if (minIn_ != o.minIn_ || maxIn_ != o.maxIn_ || minOut_ != o.minOut_ || maxOut_ != o.maxOut_ ||
      !sameParams(inputs_, o.inputs_) || !sameParams(outputs_, o.outputs_) ||
      attrs_.size() != o.attrs_.size() || constraints_.size() != o.constraints_.size())
    return false;
  for (size_t i = 0; i < attrs_.size(); ++i) {
    const AttributeSchema &x = attrs_[i], &y = o.attrs_[i];
    if (x.name != y.name || x.kind != y.kind || x.required != y.required ||
        x.hasDefault != y.hasDefault || x.defaultInt != y.defaultInt ||
        x.defaultFloat != y.defaultFloat || x.defaultString != y.defaultString ||
        x.defaultInts != y.defaultInts || x.defaultFloats != y.defaultFloats ||
        x.defaultStrings != y.defaultStrings)
      return false;
  }
  for (size_t i = 0; i < constraints_.size(); ++i)
    if (constraints_[i].param != o.constraints_[i].param) return false;
  return true;
}

bool OpSchema::sameSignature(const OpSchema &o) const {
  if (domain_ != o.domain_ || name_ != o.name_ || determinism_ != o.determinism_ ||
      !sameFormals(o))
    return false;
  for (size_t i = 0; i < constraints_.size(); ++i)
    if (constraints_[i].allowed != o.constraints_[i].allowed) return false;
  return true;
}

bool OpSchema::allowsEveryTypeOf(const OpSchema &o) const {
  if (constraints_.size() != o.constraints_.size()) return false;
  for (size_t i = 0; i < o.constraints_.size(); ++i)
    for (llvm::StringRef t : o.constraints_[i].allowed)
      if (!constraints_[i].allows(t)) return false;
  return true;
}

//===--- Registry ---------------------------------------------------------===//

llvm::ArrayRef<OpSchema> allSchemas() { return SchemaTable::get().schemas; }

llvm::ArrayRef<OpSchema> schemaVersions(llvm::StringRef domain, llvm::StringRef op) {
  const SchemaTable &t = SchemaTable::get();
  auto it = t.byOp.find({canonicalDomain(domain), op});
  if (it == t.byOp.end()) {
    auto x = t.extra.find({canonicalDomain(domain), op});
    if (x == t.extra.end()) return {};
    return x->second;
  }
  return llvm::ArrayRef<OpSchema>(t.schemas).slice(it->second.first,
                                                   it->second.second - it->second.first);
}

const OpSchema *lookupSchema(llvm::StringRef domain, llvm::StringRef op, int64_t version) {
  const OpSchema *best = nullptr;
  for (const OpSchema &s : schemaVersions(domain, op))
    if (s.sinceVersion() <= version) best = &s;
  return best;
}

bool isSchemaDomain(llvm::StringRef domain) { return latestOpsetVersion(domain) > 0; }

int64_t latestOpsetVersion(llvm::StringRef domain) {
  const SchemaTable &t = SchemaTable::get();
  auto it = t.latest.find(canonicalDomain(domain));
  return it == t.latest.end() ? 0 : it->second;
}

//===--- Schemas registered at run time -----------------------------------===//

OpSchemaBuilder::OpSchemaBuilder(llvm::StringRef domain, llvm::StringRef name,
                                 int64_t sinceVersion) {
  s_.domain_ = save(canonicalDomain(domain));
  s_.name_ = save(name);
  s_.since_ = sinceVersion;
}

llvm::StringRef OpSchemaBuilder::save(llvm::StringRef s) {
  return SchemaTable::get().saver.save(s);
}

static FormalParameter formal(llvm::StringRef name, llvm::StringRef typeStr, ParamOption o) {
  FormalParameter f;
  f.name = name;
  f.typeStr = typeStr;
  f.option = o;
  return f;
}

OpSchemaBuilder &OpSchemaBuilder::input(llvm::StringRef name, llvm::StringRef typeStr,
                                        ParamOption option) {
  s_.inputs_.push_back(formal(save(name), save(typeStr), option));
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::output(llvm::StringRef name, llvm::StringRef typeStr,
                                         ParamOption option) {
  s_.outputs_.push_back(formal(save(name), save(typeStr), option));
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::attr(llvm::StringRef name, AttrKind kind, bool required) {
  AttributeSchema a;
  a.name = save(name);
  a.kind = kind;
  a.required = required;
  s_.attrs_.push_back(std::move(a));
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultInt(int64_t v) {
  if (!s_.attrs_.empty()) s_.attrs_.back().hasDefault = true, s_.attrs_.back().defaultInt = v;
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultFloat(double v) {
  if (!s_.attrs_.empty()) s_.attrs_.back().hasDefault = true, s_.attrs_.back().defaultFloat = v;
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultString(llvm::StringRef v) {
  if (!s_.attrs_.empty())
    s_.attrs_.back().hasDefault = true, s_.attrs_.back().defaultString = save(v);
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultInts(std::vector<int64_t> v) {
  if (!s_.attrs_.empty()) s_.attrs_.back().hasDefault = true, s_.attrs_.back().defaultInts = std::move(v);
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultFloats(std::vector<double> v) {
  if (!s_.attrs_.empty())
    s_.attrs_.back().hasDefault = true, s_.attrs_.back().defaultFloats = std::move(v);
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::defaultStrings(const std::vector<std::string> &v) {
  if (s_.attrs_.empty()) return *this;
  s_.attrs_.back().hasDefault = true;
  for (const std::string &x : v) s_.attrs_.back().defaultStrings.push_back(save(x));
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::functionBody(int64_t opset, llvm::StringRef text) {
  s_.bodies_.push_back(FunctionBody{opset, save(text)});
  s_.hasFunction_ = true;
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::typeConstraint(llvm::StringRef param,
                                                 std::vector<llvm::StringRef> allowed) {
  TypeConstraint tc;
  tc.param = save(param);
  for (llvm::StringRef a : allowed) tc.allowed.push_back(save(a));
  s_.constraints_.push_back(std::move(tc));
  return *this;
}
OpSchemaBuilder &OpSchemaBuilder::nondeterministic() {
  s_.determinism_ = Determinism::Nondeterministic;
  return *this;
}

/// Arity bounds of a formal list: optional formals may be left out, a
/// trailing variadic takes any number from its minimum.
static void arity(llvm::ArrayRef<FormalParameter> fs, int &lo, int &hi) {
  lo = 0;
  hi = 0;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (fs[i].isVariadic()) {
      lo = (int)i + fs[i].minArity;
      hi = kUnboundedArity;
      return;
    }
    if (!fs[i].isOptional()) lo = (int)i + 1;
    hi = (int)i + 1;
  }
}

const OpSchema &registerSchema(OpSchemaBuilder b) {
  OpSchema &s = b.s_;
  arity(s.inputs_, s.minIn_, s.maxIn_);
  arity(s.outputs_, s.minOut_, s.maxOut_);
  SchemaTable &t = SchemaTable::get();
  std::vector<OpSchema> &list = t.extra[{s.domain_, s.name_}];
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const OpSchema &o) { return o.since_ == s.since_; }),
             list.end());
  auto at = std::find_if(list.begin(), list.end(),
                         [&](const OpSchema &o) { return o.since_ > s.since_; });
  at = list.insert(at, std::move(s));
  // Constraint pointers once the schema sits where it stays; the others
  // moved with their vectors, whose storage did not.
  for (auto *v : {&at->inputs_, &at->outputs_})
    for (FormalParameter &f : *v) f.constraint = at->typeConstraint(f.typeStr);
  for (size_t i = 0; i < list.size(); ++i)
    list[i].last_ = i + 1 < list.size() ? list[i + 1].since_ - 1 : INT64_MAX;
  int64_t &l = t.latest[at->domain_];
  l = std::max(l, at->since_);
  const OpSchema &result = *at;
  OpRegistry::get().addSchemaEntries(result.domain(), result.name());
  return result;
}

//===--- Nodes ------------------------------------------------------------===//

int64_t importedOpsetVersion(const Node &n, const Model &m) { return opsetInForce(n, m); }

int64_t importedOpsetVersion(const Node &n) { return opsetInForce(n); }

const OpSchema *schemaFor(const Node &n, const Model &m) {
  int64_t v = importedOpsetVersion(n, m);
  return v < 0 ? nullptr : lookupSchema(n.domain(), n.opType(), v);
}

const OpSchema *schemaFor(const Node &n) {
  int64_t v = importedOpsetVersion(n);
  return v < 0 ? nullptr : lookupSchema(n.domain(), n.opType(), v);
}

const TypeConstraint *operandConstraint(const Node &n, unsigned i) {
  const OpSchema *s = schemaFor(n);
  const FormalParameter *f = s ? s->inputFor(i) : nullptr;
  return f ? f->constraint : nullptr;
}
const TypeConstraint *resultConstraint(const Node &n, unsigned i) {
  const OpSchema *s = schemaFor(n);
  const FormalParameter *f = s ? s->outputFor(i) : nullptr;
  return f ? f->constraint : nullptr;
}

std::string typeString(const Type &t) {
  auto elem = [&]() -> std::string {
    if (!t.hasElemType() || t.elemTypeRaw() == 0 || !isKnownDataType(t.elemTypeRaw())) return "";
    return dataTypeName(t.elemType()).str();
  };
  switch (t.kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor: {
    std::string e = elem();
    if (e.empty()) return "";
    return (t.kind() == Type::Kind::Tensor ? "tensor(" : "sparse_tensor(") + e + ")";
  }
  case Type::Kind::Sequence:
  case Type::Kind::Optional: {
    if (!t.elementType()) return "";
    std::string in = typeString(*t.elementType());
    if (in.empty()) return "";
    return (t.kind() == Type::Kind::Sequence ? "seq(" : "optional(") + in + ")";
  }
  case Type::Kind::Map: {
    std::string k = elem();
    if (k.empty() || !t.elementType()) return "";
    std::string v = typeString(*t.elementType());
    if (v.empty()) return "";
    // The schemas write tensor map values bare: map(int64, float).
    if (startsWith(v, "tensor(")) v = v.substr(7, v.size() - 8);
    return "map(" + k + ", " + v + ")";
  }
  default: return "";
  }
}

//===--- Traits -----------------------------------------------------------===//

/// The override list of Note [Op traits]: nullopt where the schema decides.
static std::optional<bool> determinismOverride(const Node &n,
                                               llvm::ArrayRef<const Tensor *> operands = {}) {
  if (!isDefaultDomain(n.domain()) || n.opType() != "Dropout") return std::nullopt;
  int64_t v = opsetInForce(n);
  if (v > 0 && v < 7) {
    const Attribute *a = n.getAttr("is_test");
    if (a && !a->isReference() && a->kind() == AttrKind::Int && a->i != 0) return true;
    const Attribute *r = n.getAttr("ratio");
    return r && !r->isReference() && r->kind() == AttrKind::Float && r->f == 0;
  }
  if (v < 12) return true;
  // Operand i's single value, if known.
  auto known = [&](unsigned i) -> std::optional<double> {
    if (n.numOperands() <= i || !n.operand(i)) return std::nullopt;
    Tensor scratch;
    const Tensor *t = i < operands.size() && operands[i] ? operands[i]
                                                         : constantOf(n.operand(i), scratch);
    auto vals = t ? t->values<double>() : absl::StatusOr<std::vector<double>>();
    if (!t || !vals.ok() || vals->size() != 1) return std::nullopt;
    return (*vals)[0];
  };
  if (n.numOperands() < 3 || !n.operand(2)) return true;
  if (known(2) == 0.0) return true;
  return known(1) == 0.0;
}

bool isDeterministic(const Node &n) { return !isNondeterministic(n); }

bool isDeterministic(const Node &n, llvm::ArrayRef<const Tensor *> operands) {
  if (auto d = determinismOverride(n, operands)) return *d;
  return isDeterministic(n);
}

bool isNondeterministic(const Node &n) {
  if (auto d = determinismOverride(n)) return !*d;
  if (isSchemaDomain(n.domain())) {
    if (const OpSchema *s = schemaFor(n)) return s->determinism() == Determinism::Nondeterministic;
    for (const OpSchema &s : schemaVersions(n.domain(), n.opType()))
      if (s.determinism() == Determinism::Nondeterministic) return true;
    if (!schemaVersions(n.domain(), n.opType()).empty()) return false;
  }
  llvm::StringRef op = n.opType();
  return startsWith(op, "Random") || op.contains("Dropout") || op == "Bernoulli" ||
         op == "Multinomial";
}

bool hasSideEffects(const Node &n) {
  llvm::StringRef d = n.domain();
  // A domain with schemas (the table's, or registered ones) holds pure functions.
  if (!isSchemaDomain(d) && d != "com.microsoft") return true;
  const Graph *g = n.getGraph();
  const Model *m = g ? g->parentModel() : nullptr;
  return m && m->findFunction(n);
}

bool isOptionalResult(const Node &n, unsigned i) {
  // BatchNormalization in training mode (opset 14 on) must have its running
  // mean and variance: the schema marks them optional, yet its type rule
  // (and onnxruntime) requires three outputs when training_mode = 1.
  if (isDefaultDomain(n.domain()) && n.opType() == "BatchNormalization" && i > 0) {
    const Attribute *a = n.getAttr("training_mode");
    if (a && (a->isReference() || (a->kind() == AttrKind::Int && a->i != 0))) return false;
  }
  if (const OpSchema *s = schemaFor(n)) {
    const FormalParameter *f = s->outputFor(i);
    return f && f->isOptional();
  }
  llvm::ArrayRef<OpSchema> vs = schemaVersions(n.domain(), n.opType());
  if (vs.empty()) return false;
  for (const OpSchema &s : vs) {
    const FormalParameter *f = s.outputFor(i);
    if (!f || !f->isOptional()) return false;
  }
  return true;
}

bool isCommutative(const Node &n) {
  const OpEntry *e = OpRegistry::get().lookup(n);
  return e && e->commutative;
}

} // namespace onnxir
