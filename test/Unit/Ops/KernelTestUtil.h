//===- KernelTestUtil.h - What the kernel tests share ---------------------===//
//
// A kernel call (evaluateKernel, Kernels.h) with owned inputs and attributes,
// built one operand at a time; the same call from borrowed inputs in one
// expression; the typed tensors the tests feed the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_OPS_KERNELTESTUTIL_H
#define ONNXIR_TEST_UNIT_OPS_KERNELTESTUTIL_H

#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace onnxir::kerneltest {

/// Calls a kernel with owned inputs and attributes. none() leaves an input
/// out (a null operand); maxBytes is the output budget (none by default).
struct Call {
  std::string op;
  int64_t opset = 17;
  std::vector<Tensor> inputs;
  std::vector<bool> present;
  std::vector<std::unique_ptr<Attribute>> attrs;
  unsigned numOutputs = 1;
  uint64_t maxBytes = UINT64_MAX;

  Call(std::string o, int64_t v = 17) : op(std::move(o)), opset(v) {}
  Call &in(Tensor t) { inputs.push_back(std::move(t)); present.push_back(true); return *this; }
  Call &none() { inputs.emplace_back(); present.push_back(false); return *this; }
  Call &attr(std::unique_ptr<Attribute> a) { attrs.push_back(std::move(a)); return *this; }

  absl::StatusOr<std::vector<Tensor>> run() {
    std::vector<const Tensor *> ins;
    for (size_t k = 0; k < inputs.size(); ++k) ins.push_back(present[k] ? &inputs[k] : nullptr);
    std::vector<const Attribute *> as;
    for (auto &a : attrs) as.push_back(a.get());
    KernelCall c("", op, opset, as);
    c.inputs = ins;
    c.numOutputs = numOutputs;
    c.maxOutputBytes = maxBytes;
    return evaluateKernel(c);
  }
  /// The first result (an empty tensor, and a failed test, on an error).
  Tensor one() {
    auto r = run();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || r->empty()) return Tensor();
    return std::move((*r)[0]);
  }
  absl::StatusCode code() { return run().status().code(); }
};

/// One call from borrowed inputs (null: left out) and owned attributes.
inline absl::StatusOr<std::vector<Tensor>>
call(const std::string &op, int64_t opset, std::vector<const Tensor *> inputs,
     const std::vector<std::unique_ptr<Attribute>> &attrs = {}) {
  std::vector<const Attribute *> as;
  for (auto &a : attrs) as.push_back(a.get());
  KernelCall c("", op, opset, as);
  c.inputs = std::move(inputs);
  return evaluateKernel(c);
}

inline std::vector<std::unique_ptr<Attribute>> attrs1(std::unique_ptr<Attribute> a) {
  std::vector<std::unique_ptr<Attribute>> v;
  v.push_back(std::move(a));
  return v;
}

template <typename T> Tensor typed(DataType dt, std::vector<int64_t> dims, std::vector<T> v) {
  std::string raw(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());
  return makeTensor(dt, std::move(dims), std::move(raw));
}
inline Tensor f32(std::vector<int64_t> d, std::vector<float> v) { return makeFloatTensor(d, v); }
inline Tensor f64(std::vector<int64_t> d, std::vector<double> v) { return typed(DataType::Double, d, v); }
inline Tensor i64(std::vector<int64_t> d, std::vector<int64_t> v) { return makeInt64Tensor(d, v); }
inline Tensor i32(std::vector<int64_t> d, std::vector<int32_t> v) { return typed(DataType::Int32, d, v); }
inline Tensor i8(std::vector<int64_t> d, std::vector<int8_t> v) { return typed(DataType::Int8, d, v); }
inline Tensor u8(std::vector<int64_t> d, std::vector<uint8_t> v) { return typed(DataType::Uint8, d, v); }

} // namespace onnxir::kerneltest

#endif // ONNXIR_TEST_UNIT_OPS_KERNELTESTUTIL_H
