//===- SchemaVerifierTest.cpp - Valid models pass the schema checks -------===//
//
// Every model of the ONNX backend test corpus and of ../shared/models is a
// valid model: verifyAll(m, {schema = true}) must report nothing and load
// gives no schema warnings. The same walk checks that the checks are not
// vacuous: a broken copy of a real model (an attribute of the wrong kind on
// its first node that has a schema) is reported. The check reads only the
// types of the values it gathered first, and every type once a model has
// too many typed values to gather (Note [Typed values first]): both ways
// report a typed value that a node reads before the node defining it.
//
//===----------------------------------------------------------------------===//
#include "../TestEnv.h"
#include "onnxir/IR.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const char *root : {ONNXIR_TESTDATA_DIR, ONNXIR_SHARED_DIR "/models"}) {
    if (!fs::exists(root)) continue;
    for (auto &e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".onnx") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  // A walk that finds a part of the corpus checks a part: 1,088 today.
  if (!files.empty()) {
    EXPECT_GE(files.size(), 1000u) << "models in the corpus";
  }
  return files;
}

TEST(SchemaCorpus, EveryValidModelPasses) {
  std::vector<std::string> files = corpus();
  if (files.empty()) {
    // Note [Missing data under CI]
    if (testenv::inCI()) FAIL() << "no corpus found (CI=true: it must be)";
    GTEST_SKIP() << "no corpus found";
  }
  VerifyOptions opts;
  opts.schema = true;
  size_t checkedNodes = 0, loaded = 0;
  for (const std::string &f : files) {
    auto m = loadModel(f);
    if (!m.ok()) continue; // the serializer's corpus test owns load failures
    ++loaded;
    for (const Diagnostic &d : verifyAll(**m, opts))
      ADD_FAILURE() << f << ": " << d.message << " [" << diagnosticKindName(d.kind) << "]";
    for (const Diagnostic &d : schemaWarnings(**m))
      ADD_FAILURE() << f << ": warning: " << d.message;
    (*m)->walkGraphs([&](Graph *g) {
      for (Node &n : g->nodes()) checkedNodes += schemaFor(n, **m) != nullptr;
    });
  }
  EXPECT_GT(loaded, files.size() / 2);
  EXPECT_GT(checkedNodes, loaded); // most nodes resolve to a schema
}

TEST(SchemaCorpus, BrokenCopiesAreReported) {
  std::vector<std::string> files = corpus();
  if (files.empty()) {
    // Note [Missing data under CI]
    if (testenv::inCI()) FAIL() << "no corpus found (CI=true: it must be)";
    GTEST_SKIP() << "no corpus found";
  }
  size_t broken = 0;
  for (size_t i = 0; i < files.size(); i += 25) {
    auto m = loadModel(files[i]);
    if (!m.ok()) continue;
    Node *target = nullptr;
    for (Node &n : (*m)->graph().nodes())
      if (!target && schemaFor(n, **m)) target = &n;
    if (!target) continue;
    auto a = std::make_unique<Attribute>("no_such_attribute_x");
    a->setInt(1);
    target->setAttr(std::move(a));
    VerifyOptions opts;
    opts.schema = true;
    std::vector<Diagnostic> d = verifyAll(**m, opts);
    ASSERT_EQ(d.size(), 1u) << files[i];
    EXPECT_EQ(d[0].kind, Diagnostic::Kind::Schema);
    EXPECT_NE(d[0].message.find("unknown attribute \"no_such_attribute_x\""), std::string::npos)
        << d[0].message;
    ++broken;
  }
  EXPECT_GT(broken, 10u);
}

// A chain of `n` Relu nodes read by node #0 (Sqrt) of an unsorted list,
// whose last value is int64 by its value_info; with `typedChain`, every
// value of the chain has a value_info (more typed values than the check
// gathers).
std::string lateTypedChain(int n, bool typedChain) {
  std::string valueInfo = "<int64[2] t" + std::to_string(n);
  std::string body = "  y = Sqrt(t" + std::to_string(n) + ")\n";
  for (int i = 1; i <= n; ++i) {
    body += "  t" + std::to_string(i) + " = Relu(t" + std::to_string(i - 1) + ")\n";
    if (typedChain && i < n) valueInfo += ", float[2] t" + std::to_string(i);
  }
  return "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] t0) => (float[2] y)\n  " +
         valueInfo + ">\n{\n" + body + "}\n";
}

TEST(SchemaTypes, ValueTypedLaterIsCheckedEitherWay) {
  for (bool typedChain : {false, true}) {
    const int n = 20000; // above the check's limit on gathered values
    auto m = parseModelText(lateTypedChain(n, typedChain));
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<Diagnostic> d = verifySchemaAll(**m);
    // The last Relu's input has a type only in the typed chain.
    ASSERT_EQ(d.size(), typedChain ? 2u : 1u) << "typed chain: " << typedChain;
    EXPECT_NE(d[0].message.find("node #0 (Sqrt): input #0 \"X\" has type tensor(int64), which T "
                                "of Sqrt-v13 does not allow"),
              std::string::npos)
        << d[0].message;
    if (!typedChain) continue;
    EXPECT_NE(d[1].message.find("node #" + std::to_string(n) +
                                " (Relu): T of Relu-v14 is tensor(float) at input #0 \"X\" but "
                                "tensor(int64) at output #0 \"Y\""),
              std::string::npos)
        << d[1].message;
  }
}

} // namespace
