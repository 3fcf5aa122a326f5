// The registry: one entry per (domain, op, since-version) holding schema,
// traits, rule and kernel; the one attribute reader; an operator of one's own.
#include "../IR/TestUtil.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include <gtest/gtest.h>

#include <set>

using namespace onnxir;

TEST(OpRegistryTest, EntryPerSinceVersion) {
  OpRegistry &r = OpRegistry::get();
  // Reshape: 1, 5, 13, 14, 19, 21, ... (whatever the table says, one entry each).
  llvm::ArrayRef<OpEntry> vs = r.versions("", "Reshape");
  ASSERT_EQ(vs.size(), schemaVersions("", "Reshape").size() + 1);
  EXPECT_EQ(vs[0].sinceVersion, 0);
  EXPECT_EQ(vs[0].schema, nullptr);
  for (size_t i = 1; i < vs.size(); ++i) {
    EXPECT_EQ(vs[i].schema, &schemaVersions("", "Reshape")[i - 1]);
    EXPECT_EQ(vs[i].sinceVersion, vs[i].schema->sinceVersion());
    // The family file attached its rule and kernel to every version.
    EXPECT_TRUE(vs[i].infer) << vs[i].sinceVersion;
    EXPECT_NE(vs[i].kernel, nullptr) << vs[i].sinceVersion;
  }
  const OpEntry *at13 = r.lookup("", "Reshape", 13);
  ASSERT_NE(at13, nullptr);
  EXPECT_EQ(at13->schema, lookupSchema("", "Reshape", 13));
  EXPECT_EQ(r.lookup("ai.onnx", "Reshape", 13), at13); // one domain, two names
  EXPECT_EQ(r.lookup("", "Reshape", 12), r.lookup("", "Reshape", 5));
  EXPECT_EQ(r.lookup("", "NoSuchOp", 13), nullptr);
  EXPECT_EQ(r.lookup("com.example", "Reshape", 1), nullptr);
  // An op below its first version: the version-0 entry, with its rule.
  const OpEntry *early = r.lookup("", "LayerNormalization", 13);
  ASSERT_NE(early, nullptr);
  EXPECT_EQ(early->schema, nullptr);
  EXPECT_EQ(early->sinceVersion, 0);
}

TEST(OpRegistryTest, TraitsAndDomains) {
  OpRegistry &r = OpRegistry::get();
  EXPECT_TRUE(r.lookup("", "Add", 14)->commutative);
  EXPECT_FALSE(r.lookup("", "Sub", 14)->commutative);
  EXPECT_TRUE(r.lookup("ai.onnx.ml", "Normalizer", 1)->infer);
  EXPECT_TRUE(r.lookup("ai.onnx.preview.training", "Adam", 1)->infer);
  EXPECT_TRUE(r.hasKernel("", "Add"));
  EXPECT_TRUE(r.hasKernel("", "Conv"));
  EXPECT_FALSE(r.hasKernel("", "NoSuchOp"));
  // Kernels are found per domain: ai.onnx.ml's Normalizer has one, the
  // default domain's Add is no op of ai.onnx.ml.
  EXPECT_TRUE(r.hasKernel("ai.onnx.ml", "Normalizer"));
  EXPECT_FALSE(r.hasKernel("ai.onnx.ml", "Add"));
}

TEST(OpRegistryTest, AttributeDefaultsFollowTheVersionInForce) {
  // Softmax's axis default is 1 before opset 13 and -1 from 13 on.
  KernelCall old("", "Softmax", 11, llvm::ArrayRef<const Attribute *>());
  KernelCall now("", "Softmax", 13, llvm::ArrayRef<const Attribute *>());
  EXPECT_EQ(old.getInt("axis", 99), 1);
  EXPECT_EQ(now.getInt("axis", 99), -1);
  // No schema (opset unknown): the caller's fallback.
  KernelCall unknown("", "Softmax", 0, llvm::ArrayRef<const Attribute *>());
  EXPECT_EQ(unknown.getInt("axis", 99), 99);
  // Present: the attribute; present with another kind: the fallback.
  auto axis = intAttr("axis", 0);
  auto badAxis = floatAttr("axis", 0.5f);
  const Attribute *given[] = {axis.get()};
  const Attribute *bad[] = {badAxis.get()};
  EXPECT_EQ(KernelCall("", "Softmax", 13, given).getInt("axis", 99), 0);
  EXPECT_EQ(KernelCall("", "Softmax", 13, bad).getInt("axis", 99), 99);
  EXPECT_EQ(KernelCall("", "Softmax", 13, bad).getInts("axis"), std::nullopt);
}

// Issue 27: every version step of the default domain whose two schemas differ
// in more than widened type lists carries both version adapters (an adapter
// may refuse with its why, as Scan-9's does; a step without one would make
// convert-opset answer "no adapter"). A new schema version in the table that
// changes a signature fails here until its adapters are written.
TEST(OpRegistryTest, EverySignatureChangeHasBothAdapters) {
  OpRegistry &r = OpRegistry::get();
  std::vector<std::string> missing;
  std::set<std::string> ops;
  for (const OpSchema &s : allSchemas())
    if (s.domain().empty()) ops.insert(s.name().str());
  for (const std::string &op : ops) {
    llvm::ArrayRef<OpSchema> vs = schemaVersions("", op);
    for (size_t k = 1; k < vs.size(); ++k) {
      // Type lists only: the pass checks the node's types (either way).
      if (vs[k - 1].sameFormals(vs[k])) continue;
      const OpEntry *e = nullptr;
      for (const OpEntry &x : r.versions("", op))
        if (x.schema == &vs[k]) e = &x;
      if (!e || !e->upgrade || !e->downgrade)
        missing.push_back(vs[k].str() + (e && e->upgrade ? " (down)" : e && e->downgrade ? " (up)" : ""));
    }
  }
  std::string all;
  for (const std::string &m : missing) all += m + " ";
  EXPECT_TRUE(missing.empty()) << "steps without adapters: " << all;
}
