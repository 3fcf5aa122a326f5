//===- PassTestUtil.h - What the pass tests share --------------------------===//
//
// A model from the text syntax (a parse failure fails the test and gives
// null), the schema verifier's messages, one per line ("" when valid), or
// only how many of them are schema errors, and a check that the IR verifies.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H
#define ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>

namespace onnxir::passtest {

inline std::unique_ptr<Model> parse(llvm::StringRef text) {
  auto m = parseModelText(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline std::string schemaErrors(const Model &m) {
  std::string out;
  for (const Diagnostic &d : verifySchemaAll(m)) out += d.message + "\n";
  return out;
}

inline unsigned schemaErrorCount(const Model &m) {
  unsigned k = 0;
  for (const Diagnostic &d : verifySchemaAll(m))
    if (d.kind == Diagnostic::Kind::Schema) ++k;
  return k;
}

/// The IR verifier accepts the model (else the test fails with its message).
inline void expectValid(const Model &m) {
  absl::Status s = verify(m);
  EXPECT_TRUE(s.ok()) << s;
}

/// The value named `name` in any graph of `m` (a node result or an
/// initializer), or null.
inline Value *valueNamed(Model &m, llvm::StringRef name) {
  Value *found = nullptr;
  m.walkGraphs([&](Graph *g) {
    for (Node &n : g->nodes())
      for (Value *v : n.results())
        if (v && v->name() == name) found = v;
    for (Value *v : g->initializers())
      if (v && v->name() == name) found = v;
  });
  return found;
}

} // namespace onnxir::passtest

#endif // ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H
