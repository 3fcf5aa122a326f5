//===- EvalTestUtil.h - What the evaluator tests share --------------------===//
//
// A model from the text syntax (a parse failure fails the test and gives
// null) and the input tensors the tests bind, written as raw data the way a
// lifted model holds them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_EVAL_EVALTESTUTIL_H
#define ONNXIR_TEST_UNIT_EVAL_EVALTESTUTIL_H

#include "onnxir/IR/Model.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>
#include <vector>

namespace onnxir::evaltest {

inline std::unique_ptr<Model> parse(llvm::StringRef text) {
  auto m = parseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline Tensor floats(std::vector<int64_t> dims, std::vector<float> v) {
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims(std::move(dims));
  t.setRaw(std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float)));
  return t;
}

inline Tensor int64s(std::vector<int64_t> dims, std::vector<int64_t> v) {
  Tensor t;
  t.setDataType(DataType::Int64);
  t.setDims(std::move(dims));
  t.setRaw(std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(int64_t)));
  return t;
}

} // namespace onnxir::evaltest

#endif // ONNXIR_TEST_UNIT_EVAL_EVALTESTUTIL_H
