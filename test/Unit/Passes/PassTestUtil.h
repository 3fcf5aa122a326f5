//===- PassTestUtil.h - What the pass tests share --------------------------===//
//
// A model from the text syntax (a parse failure fails the test and gives
// null) and the schema verifier's messages, one per line ("" when valid).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H
#define ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H

#include "onnxir/IR/Model.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>

namespace onnxir::passtest {

inline std::unique_ptr<Model> parse(const char *text) {
  auto m = parseModelText(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline std::string schemaErrors(const Model &m) {
  std::string out;
  for (const Diagnostic &d : verifySchemaAll(m)) out += d.message + "\n";
  return out;
}

} // namespace onnxir::passtest

#endif // ONNXIR_TEST_UNIT_PASSES_PASSTESTUTIL_H
