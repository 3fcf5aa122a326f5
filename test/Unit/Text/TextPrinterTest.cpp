//===- TextPrinterTest.cpp - Printing, stability and the lossless extension ===//
#include "onnxir/IR.h"
#include "onnxir/Serialize/Text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace onnxir;

namespace {

std::unique_ptr<Model> parse(const std::string &text) {
  auto m = parseModelText(text, "t.onnxtxt");
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

PrintOptions lossless() {
  PrintOptions o;
  o.lossless = true;
  return o;
}
PrintOptions standard() {
  PrintOptions o;
  o.standardOnly = true;
  return o;
}

/// print(parse(print(m))) == print(m), for one mode.
void expectStable(const Model &m, const PrintOptions &o) {
  std::string p1 = printModelText(m, o);
  auto m2 = parse(p1);
  ASSERT_TRUE(m2);
  EXPECT_EQ(printModelText(*m2, o), p1);
}

const char *kSmall = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,3] x, float[3] b) => (float[N,3] y)
  <float[3] w = {0.5, -1.0, 2.0}>
{
  t = Add(x, w)
  y = Add(t, b)
}
)";

TEST(TextPrinter, StandardOutputIsStandard) {
  auto m = parse(kSmall);
  ASSERT_TRUE(m);
  std::string s = printModelText(*m);
  EXPECT_EQ(s, R"(<
  ir_version: 8,
  opset_import: ["" : 17]
>
g (float[N,3] x, float[3] b) => (float[N,3] y)
  <float[3] w = {0.5, -1.0, 2.0}>
{
  t = Add (x, w)
  y = Add (t, b)
}
)");
  // Without extension data, lossless output is the same text.
  EXPECT_EQ(printModelText(*m, lossless()), s);
  EXPECT_EQ(s.find("#@"), std::string::npos);
}

TEST(TextPrinter, Names) {
  auto m = parse(R"(g (float "a b", float "float", float ok_1) => (float "y.0") {
    "y.0" = Add("a b", "float")
  })");
  ASSERT_TRUE(m);
  std::string s = printModelText(*m);
  EXPECT_NE(s.find("(float \"a b\", float \"float\", float ok_1) => (float \"y.0\")"),
            std::string::npos) << s;
  EXPECT_NE(s.find("\"y.0\" = Add (\"a b\", \"float\")"), std::string::npos) << s;
  expectStable(*m, {});
}

TEST(TextPrinter, Floats) {
  auto m = parse(R"(g () => () {
    c = C <a = 0.1, b = 1e-45, d = 3.4028235e38, e = -0.0, f = 1.0, g = 100000000.0> ()
  })");
  ASSERT_TRUE(m);
  std::string s = printModelText(*m);
  EXPECT_NE(s.find("a = 0.1,"), std::string::npos) << s;
  EXPECT_NE(s.find("e = -0.0,"), std::string::npos) << s;
  EXPECT_NE(s.find("f = 1.0,"), std::string::npos) << s;
  EXPECT_NE(s.find("g = 1e+08>"), std::string::npos) << s;
  expectStable(*m, lossless());
}

TEST(TextPrinter, Elision) {
  std::string big = "g () => () <float[100] w = {";
  for (int i = 0; i < 100; ++i) big += (i ? ", " : "") + std::to_string(i) + ".5";
  big += "}> {}";
  auto m = parse(big);
  ASSERT_TRUE(m);
  std::string s = printModelText(*m);
  EXPECT_NE(s.find("float[100] w = [\"__elided__\": \"100\"]"), std::string::npos) << s;
  // The elided form is refused as a model: its data is gone.
  auto back = parseModelText(s, "t.onnxtxt");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(std::string(back.status().message()).find("elided data cannot become a model"),
            std::string::npos)
      << back.status();
  // Lossless and larger limits print everything.
  EXPECT_NE(printModelText(*m, lossless()).find("99.5}"), std::string::npos);
  PrintOptions o;
  o.elideElementsAbove = 1000;
  EXPECT_NE(printModelText(*m, o).find("99.5}"), std::string::npos);
}

TEST(TextPrinter, SilentOnStandardOnly) {
  auto m = parse(kSmall);
  ASSERT_TRUE(m);
  m->graph().docString = "graph doc";
  m->graph().nodes().front().docString = "node doc";
  EXPECT_EQ(printModelText(*m, standard()).find("#@"), std::string::npos);
  EXPECT_EQ(printModelText(*m).find("#@"), std::string::npos);
  EXPECT_NE(printModelText(*m, lossless()).find("#@node doc_string: \"node doc\""),
            std::string::npos);
}

/// Builds a model that uses every extension field.
std::unique_ptr<Model> buildExtModel() {
  auto m = parse(R"(<ir_version: 10, opset_import: ["" : 21, "x" : 1]>
main (float[N] x, float[2] d = {1.0, 2.0}) => (float[N] y, float[N] t)
  <float[N] t, float[2] w = {3.0, 4.0}>
{
  t = Add(x, w)
  y = If (c) <then_branch = th () => (float[N] a) { a = Neg(t) },
              else_branch = el () => (float[N] b) { b = Abs(t) }>
  c = Constant <value = bool {1}, vals: tensors = [float[2] {1, 2}, int64 {3}]> ()
}
f <a> (p) => (q) { q = Neg(p) }
)");
  if (!m) return nullptr;
  Model &mm = *m;
  Context &ctx = mm.getContext();
  mm.trainingInfo = {std::string("\x0a\x01\x00zz", 5)};
  mm.configurations.push_back({std::string("cfg"), 4, {"d0", "d1"}, "\x08\x01"});
  mm.extras = std::string("\xff\x00\x01", 3);
  mm.opsetImports[1].extras = "\x10\x02";
  mm.hasGraph = true;

  Graph &g = mm.graph();
  g.docString = "graph\ndoc \"quoted\"";
  g.metadata = {{"k", "v"}, {"k2", "line1\nline2"}};
  g.extras = "\x01\x02";
  QuantizationAnnotation qa;
  qa.tensorName = "t";
  qa.quantParameterTensorNames = {{"SCALE_TENSOR", "s"}, {"ZERO_POINT_TENSOR", "z"}};
  qa.extras = "\x07";
  g.quantizationAnnotations.push_back(qa);

  Value *x = g.input(0);
  x->docString = "input doc";
  x->metadata = {{"a", "b"}};
  x->extras = "\x42";
  // A denotation needs the extended type record.
  TypeSpec ts;
  ts.kind = Type::Kind::Tensor;
  ts.hasElem = true;
  ts.elem = 1;
  ts.hasShape = true;
  Dim d0 = ctx.symbolicDim("N");
  d0.denotation = ctx.intern("DATA_BATCH");
  ts.dims = {d0};
  ts.denotation = "IMAGE";
  x->setType(ctx.getType(ts));
  g.outputInfo(0).docString = "out doc";
  g.outputInfo(0).extras = "\x55";
  ValueInfoRecord &r = g.valueInfo().front();
  r.docString = "vi doc";
  r.metadata = {{"m", "n"}};

  // Raw storage, exact and inexact; doc, segment, data_location.
  Tensor *w = g.lookupLocal("w")->initializer();
  float raw[2] = {3.0f, 4.0f};
  w->setRaw(std::string(reinterpret_cast<char *>(raw), 8));
  w->docString = "weights";
  w->metadata = {{"origin", "test"}};
  w->segment = std::make_pair(int64_t(0), int64_t(2));
  w->dataLocation = 0;
  w->extras = "\x99";
  Tensor *dflt = g.input(1)->initializer();
  uint32_t nanBits[2] = {0x7fc00001u, 0xffc00000u}; // NaN payload, negative NaN
  dflt->setRaw(std::string(reinterpret_cast<char *>(nanBits), 8));

  // A sparse initializer.
  SparseTensor sp;
  sp.dims = {4};
  sp.values = makeFloatTensor({2}, std::vector<float>{1.5f, 2.5f});
  sp.values.setName("spv");
  sp.indices = makeInt64Tensor({2}, std::vector<int64_t>{0, 3});
  sp.extras = "\x33";
  (void)g.addSparseInitializer("sp", sp);

  Node &add = g.nodes().front();
  add.setName("add0");
  add.docString = "node doc";
  add.metadata = {{"pass", "none"}};
  add.extras = "\x01";
  NodeDeviceConfiguration ndc;
  ndc.configurationId = "cfg";
  ndc.pipelineStage = 1;
  ShardingSpec ss;
  ss.tensorName = "x";
  ss.device = {0, 1};
  ss.indexToDeviceGroupMap = {{std::optional<int64_t>(0), {0, 1}}};
  ShardingSpec::ShardedDim sd;
  sd.axis = 0;
  ShardingSpec::SimpleShardedDim ssd;
  ssd.kind = ShardingSpec::SimpleShardedDim::Kind::Param;
  ssd.dimParam = "N";
  ssd.numShards = 2;
  sd.simpleSharding.push_back(ssd);
  ss.shardedDim.push_back(sd);
  ndc.shardingSpec.push_back(ss);
  add.deviceConfigurations.push_back(ndc);

  // Attribute extras on the Constant; an attribute of a kind with no
  // standard syntax; a float whose bits do not print.
  Node *c = nullptr;
  for (Node &n : g.nodes()) c = &n;
  Attribute &val = *c->getAttr("value");
  val.docString = "attr doc";
  val.extras = "\x0e";
  auto spa = std::make_unique<Attribute>("sparse");
  spa->setKind(AttrKind::SparseTensor);
  spa->sparseTensors.push_back(std::make_unique<SparseTensor>(sp));
  c->addAttr(std::move(spa));
  auto nanAttr = std::make_unique<Attribute>("weird");
  float wf;
  uint32_t wb = 0x7f800123u;
  std::memcpy(&wf, &wb, 4);
  nanAttr->setFloat(wf);
  nanAttr->hasKindField = false;
  c->addAttr(std::move(nanAttr));

  Function &f = *mm.functions()[0];
  f.metadata = {{"fm", "fv"}};
  f.extras = "\x21";
  return m;
}

TEST(TextPrinter, LosslessExtensionRoundTrip) {
  auto m = buildExtModel();
  ASSERT_TRUE(m);
  std::string p1 = printModelText(*m, lossless());
  auto m2 = parse(p1);
  ASSERT_TRUE(m2);
  EXPECT_EQ(printModelText(*m2, lossless()), p1);

  Model &b = *m2;
  EXPECT_EQ(b.trainingInfo, m->trainingInfo);
  ASSERT_EQ(b.configurations.size(), 1u);
  EXPECT_EQ(b.configurations[0].numDevices, 4);
  EXPECT_EQ(b.configurations[0].extras, "\x08\x01");
  EXPECT_EQ(b.extras, m->extras);
  EXPECT_EQ(b.opsetImports[1].extras, "\x10\x02");
  Graph &g = b.graph();
  EXPECT_EQ(g.docString, "graph\ndoc \"quoted\"");
  EXPECT_EQ(g.metadata, m->graph().metadata);
  EXPECT_EQ(g.extras, "\x01\x02");
  ASSERT_EQ(g.quantizationAnnotations.size(), 1u);
  EXPECT_EQ(g.quantizationAnnotations[0].quantParameterTensorNames[1].second, "z");
  EXPECT_EQ(g.input(0)->type(), nullptr == g.input(0)->type() ? nullptr : g.input(0)->type());
  EXPECT_EQ(g.input(0)->type()->denotation(), "IMAGE");
  EXPECT_EQ(g.input(0)->type()->dims()[0].denotation, "DATA_BATCH");
  EXPECT_EQ(g.input(0)->docString, "input doc");
  EXPECT_EQ(g.input(0)->extras, "\x42");
  EXPECT_EQ(g.outputInfo(0).docString, "out doc");
  EXPECT_EQ(g.valueInfo().front().docString, "vi doc");

  Tensor *w = g.lookupLocal("w")->initializer();
  ASSERT_EQ(w->storage(), Tensor::Storage::Raw);
  EXPECT_EQ(w->rawData(), m->graph().lookupLocal("w")->initializer()->rawData());
  EXPECT_EQ(w->docString, "weights");
  EXPECT_EQ(w->segment, std::make_pair(int64_t(0), int64_t(2)));
  EXPECT_EQ(w->dataLocation, 0);
  EXPECT_EQ(w->extras, "\x99");
  Tensor *d = g.input(1)->initializer();
  ASSERT_EQ(d->storage(), Tensor::Storage::Raw);
  EXPECT_EQ(d->rawData(), m->graph().input(1)->initializer()->rawData());

  ASSERT_EQ(g.sparseInitializers().size(), 1u);
  SparseTensor *sp = g.sparseInitializers()[0]->sparseInitializer();
  EXPECT_EQ(sp->dims, std::vector<int64_t>{4});
  EXPECT_EQ(sp->values.name(), "spv");
  EXPECT_EQ(sp->extras, "\x33");

  Node &add = g.nodes().front();
  EXPECT_EQ(add.docString, "node doc");
  ASSERT_EQ(add.deviceConfigurations.size(), 1u);
  const ShardingSpec &ss = add.deviceConfigurations[0].shardingSpec[0];
  EXPECT_EQ(ss.shardedDim[0].simpleSharding[0].dimParam, "N");
  EXPECT_EQ(ss.shardedDim[0].simpleSharding[0].numShards, 2);
  EXPECT_EQ(add.deviceConfigurations[0].pipelineStage, 1);

  Node *c = nullptr;
  for (Node &n : g.nodes()) c = &n;
  EXPECT_EQ(c->getAttr("value")->docString, "attr doc");
  EXPECT_EQ(c->getAttr("vals")->kind(), AttrKind::Tensors);
  EXPECT_EQ(c->getAttr("vals")->tensors.size(), 2u);
  ASSERT_TRUE(c->getAttr("sparse"));
  EXPECT_EQ(c->getAttr("sparse")->kind(), AttrKind::SparseTensor);
  EXPECT_EQ(c->getAttr("sparse")->sparseTensors.size(), 1u);
  Attribute *weird = c->getAttr("weird");
  uint32_t bits;
  std::memcpy(&bits, &weird->f, 4);
  EXPECT_EQ(bits, 0x7f800123u);
  EXPECT_FALSE(weird->hasKindField);
  EXPECT_EQ(b.functions()[0]->extras, "\x21");

  // The other modes are stable too, and standard mode has no annotations.
  expectStable(*m, {});
  expectStable(*m, standard());
  EXPECT_EQ(printModelText(*m, standard()).find("#@"), std::string::npos);
}

TEST(TextPrinter, GraphOnly) {
  auto m = parse(kSmall);
  ASSERT_TRUE(m);
  std::string s = printGraphText(m->graph());
  EXPECT_EQ(s.rfind("g (float[N,3] x", 0), 0u) << s;
}

} // namespace
