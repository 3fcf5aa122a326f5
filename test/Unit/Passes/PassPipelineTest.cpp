//===- PassPipelineTest.cpp - Declared options, textual pipelines ---------===//
//
// Options are declared once in the pass (Note [Pass definitions in one
// place]) and parsed in one place; the registry records them; textual
// pipelines create configured instances; composite passes run children.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/PassPipeline.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/Text.h"

#include "PassTestUtil.h"

#include "gtest/gtest.h"

using namespace onnxir;

namespace {

class OptionsPass : public Pass {
public:
  llvm::StringRef argument() const override { return "opts"; }
  llvm::StringRef description() const override { return "options"; }
  absl::StatusOr<bool> run(Model &) override { return false; }
  Option<bool> flag{*this, "flag", "a bool", false, "opts-flag"};
  Option<ByteCount> bytes{*this, "bytes", "a size", ByteCount{10}};
  Option<int64_t> num{*this, "num", "an int", -1};
  Option<std::string> mode{*this, "mode", "a choice", "a", "", {"a", "b"}};
};

TEST(PassOptions, ParsedInOnePlaceByType) {
  OptionsPass p;
  ASSERT_EQ(p.options().size(), 4u);
  EXPECT_TRUE(p.setOption("flag", "").ok()); // a bare key is true
  EXPECT_TRUE(*p.flag);
  EXPECT_TRUE(p.setOption("flag", "off").ok());
  EXPECT_FALSE(*p.flag);
  EXPECT_FALSE(p.setOption("flag", "maybe").ok());
  struct {
    const char *text;
    uint64_t bytes;
  } sizes[] = {{"0", 0},           {"4096", 4096},          {"64KiB", 65536},
               {"1MiB", 1 << 20},  {"1MB", 1000000},        {"2G", 2ull << 30},
               {"3kB", 3000},      {"16EiB", 0}};
  for (auto &s : sizes) {
    absl::Status st = p.setOption("bytes", s.text);
    if (llvm::StringRef(s.text) == "16EiB") {
      EXPECT_FALSE(st.ok()); // unknown suffix
      continue;
    }
    ASSERT_TRUE(st.ok()) << s.text << ": " << st;
    EXPECT_EQ(p.bytes->bytes, s.bytes) << s.text;
  }
  EXPECT_FALSE(p.setOption("bytes", "20000000TiB").ok()); // overflows
  EXPECT_FALSE(p.setOption("bytes", "-1").ok());
  EXPECT_FALSE(p.setOption("bytes", "1.5MiB").ok());
  EXPECT_TRUE(p.setOption("num", "-12").ok());
  EXPECT_EQ(*p.num, -12);
  EXPECT_TRUE(p.setOption("mode", "b").ok());
  absl::Status bad = p.setOption("mode", "c");
  EXPECT_NE(bad.message().find("expected a or b"), std::string::npos) << bad;
  absl::Status unknown = p.setOption("nope", "1");
  EXPECT_NE(unknown.message().find("opts: unknown option 'nope' (options: flag, bytes, num, mode)"),
            std::string::npos)
      << unknown;
}

TEST(PassOptions, ByteCountUnits) {
  auto bytes = [](llvm::StringRef t) { return parseByteCount(t); };
  EXPECT_EQ(*bytes("4096"), 4096u);
  EXPECT_EQ(*bytes("64KiB"), 64u << 10);
  EXPECT_EQ(*bytes("64k"), 64u << 10);
  EXPECT_EQ(*bytes("1MB"), 1000000u);
  EXPECT_EQ(*bytes("1mb"), 1000000u);
  EXPECT_EQ(*bytes("2GiB"), 2ull << 30);
  EXPECT_FALSE(bytes("2 GiB").ok()); // one word, as on a command line
  EXPECT_EQ(*bytes("3T"), 3ull << 40);
  EXPECT_EQ(*bytes("0"), 0u);
  EXPECT_NE(bytes("lots").status().message().find("is not a byte count"), std::string::npos);
  EXPECT_NE(bytes("").status().message().find("is not a byte count"), std::string::npos);
  EXPECT_NE(bytes("2XB").status().message().find("unknown unit 'XB'"), std::string::npos);
  EXPECT_NE(bytes("20000000TB").status().message().find("too large"), std::string::npos);
  EXPECT_NE(bytes("99999999999999999999").status().message().find("is not a byte count"),
            std::string::npos);
}

TEST(PassOptions, InstanceValuesWinOverGlobalFlags) {
  OptionsPass p;
  std::set<std::string> used;
  ASSERT_TRUE(p.applyFlags({{"opts-flag", "true"}, {"other", "1"}}, &used).ok());
  EXPECT_TRUE(*p.flag);
  EXPECT_EQ(used, std::set<std::string>{"opts-flag"});
  OptionsPass q;
  ASSERT_TRUE(q.setOption("flag", "false").ok());
  ASSERT_TRUE(q.applyFlags({{"opts-flag", "true"}}).ok());
  EXPECT_FALSE(*q.flag);
  EXPECT_TRUE(q.flag.isExplicit());
}

TEST(PassRegistry, RecordsWhatEachPassDeclares) {
  registerAllPasses();
  const PassInfo *fold = PassRegistry::instance().lookup("fold-constants");
  ASSERT_NE(fold, nullptr);
  ASSERT_EQ(fold->options.size(), 4u);
  EXPECT_EQ(fold->options[0].key, "size-limit");
  // Quantized weights stay unless asked (Note [Dequantize stays]).
  EXPECT_EQ(fold->options[3].key, "fold-dq");
  EXPECT_EQ(fold->options[3].defaultText, "false");
  EXPECT_EQ(fold->options[0].flag, "fold-size-limit");
  EXPECT_EQ(fold->options[0].defaultText, "1048576");
  // The shape data budget is one flag for folding and inference alike.
  EXPECT_EQ(fold->options[2].flag, "shape-data-limit");
  const PassInfo *infer = PassRegistry::instance().lookup("infer-shapes");
  ASSERT_NE(infer, nullptr);
  EXPECT_EQ(infer->options.back().flag, "shape-data-limit");
  EXPECT_EQ(infer->options.back().defaultText, fold->options[2].defaultText);
  // The old aliases are gone: the instance knows only its declared keys.
  auto p = fold->factory();
  EXPECT_FALSE(p->setOption("fold-size-limit", "1").ok());
  EXPECT_TRUE(p->setOption("size-limit", "1KiB").ok());
  // Every registered pass agrees with its entry.
  for (const PassInfo *info : PassRegistry::instance().entries()) {
    auto q = info->factory();
    EXPECT_EQ(q->argument(), info->argument);
    EXPECT_EQ(q->description(), info->description);
    EXPECT_EQ(q->options().size(), info->options.size());
  }
  const PassInfo *o2 = PassRegistry::instance().lookup("O2");
  ASSERT_NE(o2, nullptr);
  EXPECT_NE(o2->pipeline.find("fuse"), std::string::npos);
}

TEST(PassPipeline, ParsesInstancesWithTheirOptions) {
  registerAllPasses();
  auto ps = parsePassPipeline(" dce{functions opsets=false} , fold-constants{size-limit=1MiB},"
                              "topo,fold-constants{size-limit='2 KiB'}");
  ASSERT_FALSE(ps.ok()); // a quoted value is still parsed by its option
  ps = parsePassPipeline(" dce{functions opsets=false} , fold-constants{size-limit=1MiB},"
                         "topo,fold-constants{size-limit=\"2KiB\"}");
  ASSERT_TRUE(ps.ok()) << ps.status();
  ASSERT_EQ(ps->size(), 4u);
  EXPECT_EQ(printPassInstance(*(*ps)[0]), "dce{functions=true opsets=false}");
  EXPECT_EQ(printPassInstance(*(*ps)[1]), "fold-constants{size-limit=1048576}");
  EXPECT_EQ(printPassInstance(*(*ps)[2]), "topo");
  EXPECT_EQ(printPassInstance(*(*ps)[3]), "fold-constants{size-limit=2048}");
  for (const char *bad : {"", "dce,", ",dce", "dce{", "dce{functions=maybe}", "dce topo",
                          "dce{functions='x}", "nosuch", "dce{=1}"}) {
    auto r = parsePassPipeline(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("pass pipeline:1:"), std::string::npos);
    }
  }
}

TEST(CompositePass, ChildrenRunAsPassesOfTheirOwn) {
  registerAllPasses();
  auto m = passtest::parse(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y)
{
  i = Identity (x)
  d = Neg (x)
  y = Relu (i)
}
)");
  ASSERT_TRUE(m);
  std::string log;
  llvm::raw_string_ostream os(log);
  PassManagerOptions o;
  o.log = &os;
  o.timePasses = true;
  o.printStatistics = true;
  PassManager pm(o);
  ASSERT_TRUE(pm.addPipeline("O1{max-iterations=3}").ok());
  auto r = pm.run(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r);
  os.flush();
  EXPECT_NE(log.find("eliminate-identity: identities removed = 1"), std::string::npos) << log;
  EXPECT_NE(log.find("dce: nodes removed = 1"), std::string::npos) << log;
  EXPECT_NE(log.find("O1: rounds = 2"), std::string::npos) << log;
  // The timing report lists the children, not the composite.
  EXPECT_NE(log.find("  fold-constants  (no change)"), std::string::npos) << log;
  EXPECT_EQ(m->graph().numNodes(), 1u);
}

} // namespace
