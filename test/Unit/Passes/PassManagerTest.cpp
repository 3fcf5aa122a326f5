//===- PassManagerTest.cpp - Registry and pass manager --------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Verifier.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

/// y = Abs(Neg(x)) plus a dead Relu.
std::unique_ptr<Model> smallModel() {
  auto m = std::make_unique<Model>();
  m->irVersion = 8;
  m->opsetImports.push_back({"", 17, ""});
  Graph &g = m->graph();
  g.name = "g";
  Value *x = *g.addInput("x");
  Node *neg = g.createNode("Neg", {x}, 1);
  g.createNode("Relu", {x}, 1);
  Node *abs = g.createNode("Abs", {neg->result(0)}, 1);
  g.addOutput(abs->result(0));
  return m;
}

/// A pass that breaks the IR: the first node uses the last one's result.
class BreakPass : public Pass {
public:
  llvm::StringRef argument() const override { return "break"; }
  llvm::StringRef description() const override { return "breaks the IR"; }
  absl::StatusOr<bool> run(Model &m) override {
    Graph &g = m.graph();
    g.nodes().front().setOperand(0, g.nodes().back().result(0));
    return true;
  }
};

/// Counts its runs; reports "changed" the first `changes` times.
class CountPass : public Pass {
public:
  CountPass(int *runs, int changes) : runs_(runs), changes_(changes) {}
  llvm::StringRef argument() const override { return "count"; }
  llvm::StringRef description() const override { return "counts"; }
  absl::StatusOr<bool> run(Model &) override {
    ++*runs_;
    addStat("runs", 1);
    return *runs_ <= changes_;
  }

private:
  int *runs_;
  int changes_;
};

TEST(PassRegistry, ListsEveryBuiltinPass) {
  registerAllPasses();
  registerAllPasses(); // idempotent
  for (const char *arg : {"dce", "topo", "rename", "eliminate-identity", "cse",
                          "dedup-initializers", "lift-constants", "lower-initializers",
                          "inline-functions"}) {
    const PassInfo *info = PassRegistry::instance().lookup(arg);
    ASSERT_NE(info, nullptr) << arg;
    EXPECT_FALSE(info->description.empty());
    std::unique_ptr<Pass> p = info->factory();
    EXPECT_EQ(p->argument(), arg);
  }
  EXPECT_EQ(PassRegistry::instance().lookup("no-such-pass"), nullptr);
  auto entries = PassRegistry::instance().entries();
  EXPECT_TRUE(std::is_sorted(entries.begin(), entries.end(),
                             [](auto *a, auto *b) { return a->argument < b->argument; }));
}

TEST(PassRegistry, OptionsAreCheckedByThePass) {
  registerAllPasses();
  auto rename = PassRegistry::instance().lookup("rename")->factory();
  EXPECT_TRUE(rename->setOption("mode", "sanitize").ok());
  absl::Status bad = rename->setOption("mode", "fancy");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("rename"), std::string::npos);
  EXPECT_FALSE(rename->setOption("no-such-key", "1").ok());
  auto dce = PassRegistry::instance().lookup("dce")->factory();
  EXPECT_TRUE(dce->setOption("functions", "").ok()); // a bare flag is true
  EXPECT_FALSE(dce->setOption("functions", "maybe").ok());
}

TEST(PassManager, RunsInOrderAndReportsChange) {
  registerAllPasses();
  auto m = smallModel();
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions o;
  o.log = &os;
  o.printStatistics = true;
  PassManager pm(o);
  pm.addPass(PassRegistry::instance().lookup("dce")->factory());
  pm.addPass(PassRegistry::instance().lookup("topo")->factory());
  auto r = pm.run(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  EXPECT_EQ(m->graph().numNodes(), 2u);
  os.flush();
  EXPECT_NE(log.find("dce: nodes removed = 1"), std::string::npos) << log;
  // Nothing left to do.
  PassManager again;
  again.addPass(PassRegistry::instance().lookup("dce")->factory());
  EXPECT_FALSE(*again.run(*m));
}

TEST(PassManager, VerifyEachNamesTheBrokenPass) {
  auto m = smallModel();
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions o;
  o.log = &os;
  PassManager pm(o);
  pm.addPass(std::make_unique<BreakPass>());
  auto r = pm.run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("pass 'break' left the IR invalid"), std::string::npos)
      << r.status();

  auto m2 = smallModel();
  PassManagerOptions off;
  off.verifyEach = false;
  PassManager quiet(off);
  quiet.addPass(std::make_unique<BreakPass>());
  // Without verifyEach the IR is still verified once, after the last pass:
  // a broken IR is never handed on to be saved.
  auto r2 = quiet.run(*m2);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(r2.status().message().find("the passes left the IR invalid (verified once at the end"),
            std::string::npos)
      << r2.status();
  EXPECT_EQ(quiet.verifyRuns(), 2u); // the input and the end, not after each pass
}

TEST(PassManager, ToleratesOnlyWhatTheInputAlreadyHad) {
  registerAllPasses();
  // Unsorted input: y = Abs(a) listed before a = Neg(x).
  auto m = std::make_unique<Model>();
  Graph &g = m->graph();
  Value *x = *g.addInput("x");
  Node *abs = g.createNode("Abs", {x}, 1);
  Node *neg = g.createNode("Neg", {x}, 1);
  abs->setOperand(0, neg->result(0));
  g.addOutput(abs->result(0));
  ASSERT_FALSE(verify(*m).ok());
  PassManager pm;
  pm.addPass(PassRegistry::instance().lookup("dce")->factory()); // keeps the disorder: fine
  pm.addPass(PassRegistry::instance().lookup("topo")->factory());
  auto r = pm.run(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(verify(*m).ok());
  EXPECT_EQ(&g.nodes().front(), neg);
}

TEST(PassManager, BisectLimitSkipsLaterPasses) {
  auto m = smallModel();
  int runs = 0;
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions o;
  o.log = &os;
  o.bisectLimit = 1;
  PassManager pm(o);
  pm.addPass(std::make_unique<CountPass>(&runs, 10));
  pm.addPass(std::make_unique<CountPass>(&runs, 10));
  ASSERT_TRUE(pm.run(*m).ok());
  EXPECT_EQ(runs, 1);
  os.flush();
  EXPECT_NE(log.find("BISECT: NOT running pass (2) count"), std::string::npos) << log;
}

TEST(PassManager, O1ReachesAFixedPoint) {
  registerAllPasses();
  auto m = smallModel();
  Graph &g = m->graph();
  Value *x = g.input(0);
  // Two equal Relus feeding an output-producing Add through an Identity.
  Node *r1 = g.createNode("Relu", {x}, 1);
  Node *r2 = g.createNode("Relu", {x}, 1);
  Node *id = g.createNode("Identity", {r2->result(0)}, 1);
  Node *add = g.createNode("Add", {r1->result(0), id->result(0)}, 1);
  g.addOutput(add->result(0));
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions o;
  o.log = &os;
  PassManager pm(o);
  ASSERT_TRUE(pm.addPipeline("O1").ok());
  auto r = pm.run(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  // Neg, Abs, one Relu, Add.
  EXPECT_EQ(g.numNodes(), 4u);
  EXPECT_EQ(add->operand(0), add->operand(1));
  EXPECT_TRUE(verify(*m).ok());
  os.flush();
  EXPECT_EQ(log.find("fixed point"), std::string::npos) << log;
}

} // namespace

namespace {
// A pass that reports no change is not verified again; one that changes the
// IR is; the input is verified once before the first pass.
TEST(PassManager, OnlyPassesThatChangedTheIRAreVerified) {
  auto m = smallModel();
  int runs = 0;
  PassManager pm;
  pm.addPass(std::make_unique<CountPass>(&runs, 1)); // changed
  pm.addPass(std::make_unique<CountPass>(&runs, 0)); // no change
  pm.addPass(std::make_unique<CountPass>(&runs, 0)); // no change
  ASSERT_TRUE(pm.run(*m).ok());
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(pm.verifyRuns(), 2u);
}
} // namespace
