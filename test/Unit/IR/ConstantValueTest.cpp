//===- ConstantValueTest.cpp - The one Constant decoder -------------------===//
//
// Note [Constant values]: every form of Constant's value attribute, its
// errors, and the users that go through it (the Constant kernel, folding,
// lift-constants) seeing the same tensor.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

absl::StatusOr<Tensor> decode(std::vector<std::unique_ptr<Attribute>> attrs) {
  std::vector<const Attribute *> ps;
  for (auto &a : attrs) ps.push_back(a.get());
  Tensor scratch;
  auto r = constantValue(ps, scratch);
  if (!r.ok()) return r.status();
  // The kernel gives the same tensor (it calls the decoder).
  KernelCall call("", "Constant", 0, ps);
  auto k = evaluateKernel(call);
  EXPECT_TRUE(k.ok()) << k.status();
  if (k.ok()) {
    EXPECT_EQ(k->size(), 1u);
    EXPECT_EQ((*k)[0].dims(), (*r)->dims());
    EXPECT_EQ((*k)[0].dataType(), (*r)->dataType());
  }
  return **r;
}

std::vector<std::unique_ptr<Attribute>> one(std::unique_ptr<Attribute> a) {
  std::vector<std::unique_ptr<Attribute>> v;
  v.push_back(std::move(a));
  return v;
}

TEST(ConstantValue, EveryForm) {
  auto t = decode(one(tensorAttr("value", makeInt64Tensor({2}, {4, 5}))));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->values<int64_t>(), std::vector<int64_t>({4, 5}));

  t = decode(one(floatAttr("value_float", 2.5f)));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dataType(), DataType::Float);
  EXPECT_TRUE(t->dims().empty());
  EXPECT_EQ(*t->values<float>(), std::vector<float>({2.5f}));

  t = decode(one(floatsAttr("value_floats", {1, 2, 3})));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dims(), std::vector<int64_t>({3}));

  t = decode(one(intAttr("value_int", 7)));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dataType(), DataType::Int64);
  EXPECT_TRUE(t->dims().empty());

  t = decode(one(intsAttr("value_ints", {7, 8})));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->values<int64_t>(), std::vector<int64_t>({7, 8}));

  t = decode(one(stringAttr("value_string", "hi")));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dataType(), DataType::String);
  EXPECT_TRUE(t->dims().empty());
  EXPECT_EQ(*t->strings(), std::vector<std::string>({"hi"}));

  auto ss = std::make_unique<Attribute>("value_strings");
  ss->setStrings({"a", "b"});
  t = decode(one(std::move(ss)));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dims(), std::vector<int64_t>({2}));
}

std::unique_ptr<Attribute> sparse(std::vector<int64_t> dims, std::vector<float> vals,
                                  std::vector<int64_t> idxDims, std::vector<int64_t> idx) {
  auto sp = std::make_unique<SparseTensor>();
  sp->values = makeFloatTensor({(int64_t)vals.size()}, vals);
  sp->indices = makeInt64Tensor(std::move(idxDims), idx);
  sp->dims = std::move(dims);
  auto a = std::make_unique<Attribute>("sparse_value");
  a->setKind(AttrKind::SparseTensor);
  a->sparseTensors.push_back(std::move(sp));
  return a;
}

TEST(ConstantValue, SparseValueIsDensified) {
  // Linear indices, then coordinates: the same [2,3] tensor.
  auto t = decode(one(sparse({2, 3}, {1, 2}, {2}, {1, 5})));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dims(), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(*t->values<float>(), std::vector<float>({0, 1, 0, 0, 0, 2}));
  t = decode(one(sparse({2, 3}, {1, 2}, {2, 2}, {0, 1, 1, 2})));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t->values<float>(), std::vector<float>({0, 1, 0, 0, 0, 2}));
}

void expectError(std::vector<std::unique_ptr<Attribute>> attrs, llvm::StringRef what) {
  std::vector<const Attribute *> ps;
  for (auto &a : attrs) ps.push_back(a.get());
  Tensor scratch;
  auto r = constantValue(ps, scratch);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(what.str()), std::string::npos) << r.status();
}

TEST(ConstantValue, MalformedOnesAreErrors) {
  expectError({}, "no value attribute");
  std::vector<std::unique_ptr<Attribute>> two;
  two.push_back(intAttr("value_int", 1));
  two.push_back(floatAttr("value_float", 1));
  expectError(std::move(two), "two value attributes, 'value_int' and 'value_float'");
  expectError(one(intAttr("value_floats", 1)), "'value_floats' has the wrong type");
  expectError(one(intAttr("value", 1)), "'value' is not a tensor");
  auto ref = intAttr("value_int", 0);
  ref->refAttrName = std::string("k");
  expectError(one(std::move(ref)), "refers to a function attribute");
  expectError(one(sparse({4}, {1}, {1}, {4})), "index out of range");
  expectError(one(sparse({4}, {1, 2}, {1}, {0})), "bad indices");
}

TEST(ConstantValue, NodeErrorsNameTheNode) {
  auto m = parseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g () => (y)
{
  y = Constant <value_int = 1, value_float = 2.0> ()
}
)",
                          "<test>");
  ASSERT_TRUE(m.ok()) << m.status();
  Node &c = (*m)->graph().nodes().front();
  auto r = constantValue(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(Constant): Constant has two value attributes"),
            std::string::npos)
      << r.status();
  EXPECT_EQ(storedConstantValue(c), nullptr);
}

TEST(ConstantValue, FoldingSeesEveryForm) {
  // Folding reads Constants through the decoder: a value_ints Constant and a
  // sparse one feed a foldable Add.
  auto m = parseModelText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g () => (int64[2] y)
{
  a = Constant <value_ints = [1, 2]> ()
  b = Constant <value = int64[2] {10, 20}> ()
  y = Add (a, b)
}
)",
                          "<test>");
  ASSERT_TRUE(m.ok()) << m.status();
  auto f = foldConstants(**m);
  ASSERT_TRUE(f.ok()) << f.status();
  Value *y = (*m)->graph().output(0);
  ASSERT_TRUE(y->initializer()) << printModelText(**m);
  EXPECT_EQ(*y->initializer()->values<int64_t>(), std::vector<int64_t>({11, 22}));
}

} // namespace
