//===- Rename.cpp - Scope-aware renaming ----------------------------------===//
//
// Modes:
//  canonical  deterministic, readable names from op types (`conv_3`,
//             `split_2_1`), initializers `const_N`, subgraph inputs
//             `<graph>_in_N`: two runs on two orderings of the same model give
//             diffable output.
//  prefix     every name gets a prefix (for merging models).
//  sanitize   every name becomes a C (and C++) identifier, never a keyword
//             (`int` becomes `int_`), and names that shadow an enclosing
//             graph's are freshened.
// The main graph's inputs and outputs are the model's interface and keep
// their names unless renameInterface is set. Every rename goes through the
// scope, so no collision can arise in any scope; canonical renaming first
// moves every value to a temporary name so the final names are free.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace onnxir {

namespace {

// Keywords of C (up to C23) and C++ (up to C++23), including the
// alternative operator spellings: valid identifier characters, yet not
// usable as identifiers.
bool isCKeyword(llvm::StringRef s) {
  static const llvm::StringSet<> kKeywords = {
      "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128",
      "_Decimal32", "_Decimal64", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
      "_Thread_local", "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class",
      "co_await", "co_return", "co_yield", "compl", "concept", "const", "const_cast",
      "consteval", "constexpr", "constinit", "continue", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
      "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
      "typeid", "typename", "typeof", "typeof_unqual", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return kKeywords.contains(s);
}

// A C (and C++) identifier: other characters become '_', a leading digit or
// an empty name gets a leading '_', and a keyword gets a trailing '_'.
std::string sanitizeIdent(llvm::StringRef s) {
  std::string out;
  for (char c : s) out += (isalnum((unsigned char)c) || c == '_') ? c : '_';
  if (out.empty() || isdigit((unsigned char)out[0])) out = "_" + out;
  if (isCKeyword(out)) out += '_';
  return out;
}

std::string lowerOp(llvm::StringRef op) {
  std::string out;
  for (size_t i = 0; i < op.size(); ++i) {
    char c = op[i];
    if (isupper((unsigned char)c)) {
      if (i && (islower((unsigned char)op[i - 1]) ||
                (i + 1 < op.size() && islower((unsigned char)op[i + 1]))) &&
          !out.empty() && out.back() != '_')
        out += '_';
      out += (char)tolower((unsigned char)c);
    } else {
      out += isalnum((unsigned char)c) ? c : '_';
    }
  }
  return out.empty() ? "v" : out;
}

struct Entry {
  Value *v;
  std::string want;
};

bool isInterface(const Model &m, Value *v, const RenameOptions &o) {
  if (o.renameInterface) return false;
  if (v->getGraph() != &m.graph()) return false;
  return v->isGraphInput() || [&] {
    for (Use &u : v->uses())
      if (u.getOwner() == m.graph().returnNode()) return true;
    return false;
  }();
}

} // namespace

absl::StatusOr<bool> renameValues(Model &m, const RenameOptions &opts, int64_t *renamed) {
  if (!m.trainingInfo.empty())
    return absl::UnimplementedError(
        "rename: the model has training_info, whose bindings name main-graph values; renaming "
        "it is not supported");
  // Quantization annotations name values: resolve them now, write back after.
  struct AnnRef {
    QuantizationAnnotation *q;
    Value *tensor;
    std::vector<Value *> params;
  };
  std::vector<AnnRef> anns;
  m.walkGraphs([&](Graph *g) {
    for (auto &q : g->quantizationAnnotations) {
      AnnRef a{&q, q.tensorName ? g->lookup(*q.tensorName) : nullptr, {}};
      for (auto &kv : q.quantParameterTensorNames) a.params.push_back(g->lookup(kv.second));
      anns.push_back(std::move(a));
    }
  });

  std::vector<Entry> entries;
  llvm::StringMap<unsigned> counters;
  auto next = [&](const std::string &base) { return counters[base]++; };
  unsigned graphNo = 0;
  m.walkGraphs([&](Graph *g) {
    std::string gname = g->parentNode() ? sanitizeIdent(g->parentAttribute()->name()) : "";
    unsigned gid = graphNo++;
    auto add = [&](Value *v, std::string want) {
      if (!isInterface(m, v, opts)) entries.push_back({v, std::move(want)});
    };
    unsigned k = 0;
    for (Value *v : g->inputs()) {
      std::string want;
      switch (opts.mode) {
      case RenameOptions::Mode::Canonical:
        want = g->parentNode() ? absl::StrCat(gname, gid, "_in_", k) : absl::StrCat("input_", k);
        break;
      case RenameOptions::Mode::Prefix: want = opts.prefix + v->name().str(); break;
      case RenameOptions::Mode::Sanitize: want = sanitizeIdent(v->name()); break;
      }
      ++k;
      add(v, want);
    }
    for (Value *v : g->initializers()) {
      if (v->isGraphInput()) continue;
      std::string want;
      switch (opts.mode) {
      case RenameOptions::Mode::Canonical: want = absl::StrCat("const_", next("const")); break;
      case RenameOptions::Mode::Prefix: want = opts.prefix + v->name().str(); break;
      case RenameOptions::Mode::Sanitize: want = sanitizeIdent(v->name()); break;
      }
      add(v, want);
    }
    for (Value *v : g->sparseInitializers()) {
      if (v->isGraphInput()) continue;
      add(v, opts.mode == RenameOptions::Mode::Prefix ? opts.prefix + v->name().str()
             : opts.mode == RenameOptions::Mode::Sanitize ? sanitizeIdent(v->name())
                                                          : absl::StrCat("sparse_", next("sparse")));
    }
    for (Node &n : g->nodes()) {
      std::string op = lowerOp(n.opType());
      unsigned id = opts.mode == RenameOptions::Mode::Canonical ? next(op) : 0;
      if (opts.renameNodes) {
        if (opts.mode == RenameOptions::Mode::Canonical) n.setName(absl::StrCat(op, "_", id));
        else if (opts.mode == RenameOptions::Mode::Prefix && !n.name().empty())
          n.setName(opts.prefix + n.name().str());
        else if (opts.mode == RenameOptions::Mode::Sanitize && !n.name().empty())
          n.setName(sanitizeIdent(n.name()));
      }
      for (unsigned i = 0; i < n.numResults(); ++i) {
        Value *r = n.result(i);
        if (!r) continue;
        std::string want;
        switch (opts.mode) {
        case RenameOptions::Mode::Canonical:
          want = n.numResults() == 1 ? absl::StrCat(op, "_", id) : absl::StrCat(op, "_", id, "_", i);
          break;
        case RenameOptions::Mode::Prefix: want = opts.prefix + r->name().str(); break;
        case RenameOptions::Mode::Sanitize: want = sanitizeIdent(r->name()); break;
        }
        add(r, want);
      }
    }
  });

  int64_t count = 0;
  // Phase 1: temporary names free everywhere, so phase 2's names are free
  // unless they clash with a kept interface name (then a suffix is added).
  // Sanitize keeps names that are already fine, except shadowing ones.
  std::vector<std::string> old;
  old.reserve(entries.size());
  for (Entry &e : entries) old.push_back(e.v->name().str());
  for (Entry &e : entries) {
    if (opts.mode == RenameOptions::Mode::Sanitize && e.want == e.v->name()) {
      Graph *pg = e.v->getGraph()->parentGraph();
      if (!pg || !pg->lookup(e.want)) continue; // fine as it is
    }
    Graph *g = e.v->getGraph();
    if (auto s = e.v->setName(g->freshName("__onnxir_tmp")); !s.ok()) return s;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry &e = entries[i];
    if (!startsWith(e.v->name(), "__onnxir_tmp")) continue;
    e.v->setNameOrFresh(e.want);
    if (e.v->name() != old[i]) ++count;
  }
  for (Entry &e : entries) {
    if (Tensor *t = e.v->initializer()) t->setName(e.v->name().str());
    if (SparseTensor *t = e.v->sparseInitializer()) t->values.setName(e.v->name().str());
  }
  for (AnnRef &a : anns) {
    if (a.tensor) a.q->tensorName = a.tensor->name().str();
    for (size_t i = 0; i < a.params.size(); ++i)
      if (a.params[i]) a.q->quantParameterTensorNames[i].second = a.params[i]->name().str();
  }
  if (renamed) *renamed += count;
  return count > 0;
}

//===----------------------------------------------------------------------===//
// The rename pass
//===----------------------------------------------------------------------===//

namespace {
class RenamePass : public NamedPass {
public:
  RenamePass()
      : NamedPass("rename", "Scope-aware renaming: canonical names, a prefix, or C identifiers") {}
  // A prefix implies prefix mode; an explicit other mode with a prefix is a
  // conflict, whichever option comes first.
  absl::Status validateOptions() override {
    if (prefix_.isSet() && mode_.isSet() && *mode_ != "prefix")
      return absl::InvalidArgumentError(
          "rename: option 'prefix' (--rename-prefix) conflicts with 'mode' (--rename-mode) = '" +
          *mode_ + "': a prefix is only used by mode=prefix");
    return absl::OkStatus();
  }
  absl::StatusOr<bool> run(Model &m) override {
    RenameOptions o;
    if (prefix_.isSet() || *mode_ == "prefix") o.mode = RenameOptions::Mode::Prefix;
    else if (*mode_ == "sanitize") o.mode = RenameOptions::Mode::Sanitize;
    o.prefix = *prefix_;
    o.renameInterface = *interface_;
    o.renameNodes = *nodes_;
    int64_t n = 0;
    auto r = renameValues(m, o, &n);
    addStat("names changed", n);
    return r;
  }

private:
  Option<std::string> mode_{*this, "mode", "how new names are made", "canonical",
                            "rename-mode", {"canonical", "prefix", "sanitize"}};
  Option<std::string> prefix_{*this, "prefix",
                              "the prefix for prefix mode (implies it; an error with another "
                              "mode)",
                              "", "rename-prefix"};
  Option<bool> interface_{*this, "interface", "also rename the main graph's inputs and outputs",
                          false, "rename-interface"};
  Option<bool> nodes_{*this, "nodes", "also rename nodes", true, "rename-nodes"};
};
} // namespace

std::unique_ptr<Pass> createRenamePass() { return std::make_unique<RenamePass>(); }

} // namespace onnxir
