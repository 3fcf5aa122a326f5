//===- WireLiftTest.cpp - The wire lift agrees with the ModelProto lift ---===//
//
// Note [Wire lift] (lib/Serialize/ProtoLift.cpp): every model is lifted both
// ways, straight from the wire format and through a parsed ModelProto; the
// two IRs must print identically (lossless text, extras included) and lower
// to identical bytes; errors must be identical. Over the ONNX backend
// corpus, ../shared/models, the hand-written text corpus, the fuzz
// regressions, and hand-made wire-format oddities (unknown fields, wrong
// wire types, explicit defaults, repeated singular fields, packed and
// unpacked lists, big mapped initializers).
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Serialize/ExternalData.h"
#include "../../../lib/Serialize/WireReader.h"
#include "WireSwitch.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/onnx.pb.h"

#include <google/protobuf/text_format.h>
#include "TestFiles.h"

#include <gtest/gtest.h>

#include <set>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testfiles::readFile;

using testwire::WireSwitch;

// The observable result of a lift: an error, or lossless text + bytes.
// Models of big files are printed with big tensors elided (their bytes are
// compared in the lowered form): printing megabytes of weights in full
// would make the test slow.
std::string outcome(const absl::StatusOr<std::unique_ptr<Model>> &m, bool small = true) {
  if (!m.ok()) return "error: " + m.status().ToString();
  PrintOptions po;
  po.lossless = small;
  std::string out = printModelText(**m, po);
  auto bytes = lowerModel(**m);
  out += "\n--- lowered ---\n";
  out += bytes.ok() ? *bytes : "lower error: " + bytes.status().ToString();
  return out;
}

std::string loadBoth(const std::string &path, bool wire) {
  WireSwitch sw(wire);
  std::error_code ec;
  return outcome(loadModel(path), fs::file_size(path, ec) < (1u << 20));
}

std::string liftBoth(llvm::StringRef bytes, bool wire) {
  WireSwitch sw(wire);
  return outcome(liftModel(bytes));
}

// "" when both ways agree, else a short description.
std::string compareFile(const std::string &path) {
  std::string a = loadBoth(path, false), b = loadBoth(path, true);
  if (a == b) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t from = i > 200 ? i - 200 : 0;
  return "first difference at " + std::to_string(i) + ":\nproto: " + a.substr(from, 400) +
         "\nwire:  " + b.substr(from, 400);
}

// Whether the wire lift took the bytes itself (no fallback).
bool wireTakes(llvm::StringRef bytes) {
  detail::LoadSession session("", false);
  return detail::liftWire(bytes, session, "<test>", nullptr).ok();
}


TEST(WireLift, CorpusLiftsIdenticallyBothWays) {
  std::vector<std::string> files = testfiles::corpus();
  ASSERT_GT(files.size(), 100u) << "no corpus found";
  unsigned direct = 0;
  std::vector<std::string> failures, notDirect;
  for (const std::string &f : files) {
    std::string r = compareFile(f);
    if (!r.empty()) failures.push_back(f + ": " + r);
    if (wireTakes(readFile(f))) ++direct;
    else notDirect.push_back(f);
  }
  std::printf("wire lift: %zu models identical both ways, %u lifted directly\n",
              files.size() - failures.size(), direct);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " models differ";
  // Every valid corpus model is taken by the wire lift itself (unusual
  // pieces inside go through protobuf, but the model never falls back).
  for (size_t i = 0; i < notDirect.size() && i < 10; ++i)
    ADD_FAILURE() << "wire lift fell back on " << notDirect[i];
}

// Note [Out-of-line fields]: the lifts store a rare field only when the
// file has something in it, so a model without doc strings, metadata or
// residual bytes costs one null pointer per such field. Checked over the
// corpus, both ways: no field is allocated and empty.
std::string allocatedButEmpty(const Model &m) {
  std::string bad;
  auto check = [&](const auto &field, const std::string &what) {
    if (field.allocated() && field.empty() && bad.empty()) bad = what;
  };
  auto tensor = [&](const Tensor &t, const std::string &where) {
    check(t.docString, where + " tensor doc string");
    check(t.metadata, where + " tensor metadata");
    check(t.extras, where + " tensor extras");
    check(t.floatData, where + " float_data");
    check(t.int32Data, where + " int32_data");
    check(t.int64Data, where + " int64_data");
    check(t.stringData, where + " string_data");
    check(t.doubleData, where + " double_data");
    check(t.uint64Data, where + " uint64_data");
  };
  const_cast<Model &>(m).walkGraphs([&](Graph *g) {
    for (Value *v : g->initializers()) tensor(*v->initializer(), g->path());
    for (Value *v : g->inputs()) {
      check(v->docString, g->path() + " input doc string");
      check(v->extras, g->path() + " input extras");
    }
    for (Node &n : g->nodes()) {
      std::string at = nodePath(&n);
      check(n.docString, at + " doc string");
      check(n.metadata, at + " metadata");
      check(n.deviceConfigurations, at + " device configurations");
      check(n.extras, at + " extras");
      for (unsigned i = 0; i < n.numResults(); ++i)
        if (Value *r = n.result(i)) check(r->extras, at + " result extras");
      for (unsigned i = 0; i < n.numAttributes(); ++i) {
        const Attribute &a = n.attribute(i);
        check(a.docString, at + " attribute doc string");
        check(a.extras, at + " attribute extras");
        check(a.refAttrName, at + " attribute reference");
        check(a.floats, at + " attribute floats");
        check(a.strings, at + " attribute strings");
        check(a.tensors, at + " attribute tensors");
        for (const auto &t : a.tensors) tensor(*t, at + " attribute");
      }
    }
  });
  return bad;
}

TEST(WireLift, RareFieldsAreAllocatedOnlyWhenFilled) {
  std::vector<std::string> files = testfiles::corpus();
  ASSERT_GT(files.size(), 100u) << "no corpus found";
  size_t checked = 0;
  for (const std::string &f : files) {
    for (bool wire : {true, false}) {
      WireSwitch sw(wire);
      auto m = loadModel(f);
      if (!m.ok()) continue;
      ++checked;
      std::string bad = allocatedButEmpty(**m);
      EXPECT_TRUE(bad.empty()) << f << (wire ? " (wire lift)" : " (ModelProto lift)")
                               << ": allocated but empty: " << bad;
    }
  }
  EXPECT_GT(checked, 100u);
}

TEST(WireLift, TextCorpusAndFuzzRegressionsAgree) {
  unsigned n = 0;
  std::string dir = std::string(ONNXIR_SOURCE_DIR) + "/test/Serialize/corpus";
  for (auto &e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".textproto") continue;
    proto::ModelProto mp;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(readFile(e.path()), &mp))
        << e.path();
    std::string bytes = mp.SerializeAsString();
    EXPECT_EQ(liftBoth(bytes, false), liftBoth(bytes, true)) << e.path();
    ++n;
  }
  std::string fuzz = std::string(ONNXIR_SOURCE_DIR) + "/fuzz";
  for (auto &e : fs::recursive_directory_iterator(fuzz)) {
    if (!e.is_regular_file() || e.path().extension() == ".md" ||
        e.path().extension() == ".onnxtxt" || e.path().extension() == ".dict" ||
        e.path().extension() == ".cpp" || e.path().extension() == ".h" ||
        e.path().extension() == ".sh" || e.path().filename() == "CMakeLists.txt")
      continue;
    std::string bytes = readFile(e.path());
    EXPECT_EQ(liftBoth(bytes, false), liftBoth(bytes, true)) << e.path();
    ++n;
  }
  EXPECT_GE(n, 9u + 14u) << "text corpus models and binary fuzz regression inputs (9 + 14 today)";
}

//===--- Hand-made wire oddities ------------------------------------------===//

void varint(std::string &o, uint64_t v) {
  while (v >= 0x80) {
    o += char(v | 0x80);
    v >>= 7;
  }
  o += char(v);
}
void lenField(std::string &o, unsigned f, llvm::StringRef b) {
  varint(o, (f << 3) | 2);
  varint(o, b.size());
  o += b.str();
}
void intField(std::string &o, unsigned f, uint64_t v) {
  varint(o, (f << 3) | 0);
  varint(o, v);
}
void fixed32Field(std::string &o, unsigned f, float x) {
  varint(o, (f << 3) | 5);
  char b[4];
  std::memcpy(b, &x, 4);
  o.append(b, 4);
}

// A model around graph bytes (opset 17, ir 8).
std::string modelAround(const std::string &graph) {
  std::string opset, m;
  intField(opset, 2, 17);
  intField(m, 1, 8);
  lenField(m, 8, opset);
  lenField(m, 7, graph);
  return m;
}

// A graph with input x (float [2]) and output y, around node bytes.
std::string graphAround(const std::vector<std::string> &nodes, const std::string &extra = "") {
  std::string tt, ty, vi, vo, g;
  intField(tt, 1, 1);
  lenField(ty, 1, tt);
  lenField(vi, 1, "x");
  lenField(vi, 2, ty);
  lenField(vo, 1, "y");
  for (const auto &n : nodes) lenField(g, 1, n);
  lenField(g, 2, "g");
  lenField(g, 11, vi);
  lenField(g, 12, vo);
  g += extra;
  return g;
}

std::string node(const std::vector<std::string> &ins, const std::vector<std::string> &outs,
                 const std::string &op, const std::vector<std::string> &attrs = {},
                 const std::string &extra = "") {
  std::string n;
  for (const auto &i : ins) lenField(n, 1, i);
  for (const auto &o : outs) lenField(n, 2, o);
  lenField(n, 4, op);
  for (const auto &a : attrs) lenField(n, 5, a);
  n += extra;
  return n;
}

void expectSame(const std::string &model, bool direct, const char *what) {
  std::string a = liftBoth(model, false), b = liftBoth(model, true);
  EXPECT_EQ(a, b) << what;
  EXPECT_EQ(wireTakes(model), direct) << what;
}

TEST(WireLift, NodeOddities) {
  std::string unknown;
  intField(unknown, 99, 5);
  std::string emptyName, emptyDomain;
  lenField(emptyName, 3, "");
  lenField(emptyDomain, 7, "");
  std::string twoNames;
  lenField(twoNames, 3, "first");
  lenField(twoNames, 3, "second");
  std::string wrongType;
  intField(wrongType, 3, 7); // name as a varint: an unknown field to protobuf
  std::string meta, entry;
  lenField(entry, 1, "k");
  lenField(entry, 2, "v");
  lenField(meta, 9, entry);
  std::string doc;
  lenField(doc, 6, "a doc");
  lenField(doc, 8, "");

  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu")})), true, "plain");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, unknown)})), true,
             "unknown node field");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, emptyName + emptyDomain)})),
             true, "explicit empty name and domain");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, twoNames)})), true,
             "name twice");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, wrongType)})), true,
             "name with the wrong wire type");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, meta)})), true, "metadata");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {}, doc)})), true,
             "doc and empty overload");
  // Use before definition, empty optional input, empty output.
  expectSame(modelAround(graphAround({node({"t", ""}, {"y", ""}, "Relu"),
                                      node({"x"}, {"t"}, "Relu")})),
             true, "unsorted");
}

TEST(WireLift, AttributeOddities) {
  auto attr = [](const std::string &name, const std::string &body) {
    std::string a;
    lenField(a, 1, name);
    return a + body;
  };
  std::string intZero, intSeven, floatZero, negZero, str, strEmpty, packed, unpacked, floats,
      floatsPacked, strings, noType, unknown, badEnum, mismatch, twoInts, refAttr, docEmpty;
  intField(intZero, 20, 2);
  intField(intZero, 3, 0);
  intField(intSeven, 20, 2);
  intField(intSeven, 3, uint64_t(-7));
  intField(floatZero, 20, 1);
  fixed32Field(floatZero, 2, 0.0f);
  intField(negZero, 20, 1);
  fixed32Field(negZero, 2, -0.0f);
  intField(str, 20, 3);
  lenField(str, 4, "hello");
  intField(strEmpty, 20, 3);
  lenField(strEmpty, 4, "");
  {
    intField(packed, 20, 7);
    std::string p;
    for (uint64_t v : std::vector<uint64_t>{1, 0, uint64_t(-1), 300}) varint(p, v);
    lenField(packed, 8, p);
  }
  intField(unpacked, 20, 7);
  for (uint64_t v : std::vector<uint64_t>{5, 0, uint64_t(-2)}) intField(unpacked, 8, v);
  intField(floats, 20, 6);
  fixed32Field(floats, 7, 1.5f);
  fixed32Field(floats, 7, -2.0f);
  {
    intField(floatsPacked, 20, 6);
    float fs[3] = {1, 2, 3};
    lenField(floatsPacked, 7, std::string(reinterpret_cast<char *>(fs), 12));
  }
  intField(strings, 20, 8);
  lenField(strings, 9, "a");
  lenField(strings, 9, "");
  intField(noType, 3, 4); // no `type` (IR < 3)
  intField(unknown, 20, 2);
  intField(unknown, 3, 1);
  intField(unknown, 77, 1);
  intField(badEnum, 20, 99);
  intField(badEnum, 3, 1);
  intField(mismatch, 20, 1);
  intField(mismatch, 3, 1);
  intField(twoInts, 20, 2);
  intField(twoInts, 3, 1);
  intField(twoInts, 3, 2);
  intField(refAttr, 20, 2);
  lenField(refAttr, 21, "outer");
  intField(docEmpty, 20, 2);
  intField(docEmpty, 3, 4);
  lenField(docEmpty, 13, "");
  struct Case {
    const char *what;
    std::string body;
  } cases[] = {{"int 0", intZero},        {"int -7", intSeven},     {"float 0", floatZero},
               {"float -0", negZero},     {"string", str},          {"empty string", strEmpty},
               {"packed ints", packed},   {"unpacked ints", unpacked}, {"floats", floats},
               {"packed floats", floatsPacked}, {"strings", strings}, {"no type", noType},
               {"unknown field", unknown}, {"unknown enum", badEnum},
               {"two ints", twoInts},     {"reference", refAttr},   {"empty doc", docEmpty}};
  for (const Case &c : cases)
    expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu", {attr("a", c.body)})})), true,
               c.what);
  // A type that disagrees with the value: the same error both ways.
  std::string bad = modelAround(graphAround({node({"x"}, {"y"}, "Relu", {attr("a", mismatch)})}));
  expectSame(bad, false, "type mismatch");
  EXPECT_NE(liftBoth(bad, true).find("disagrees"), std::string::npos);
}

TEST(WireLift, SubgraphsTensorsAndErrors) {
  // An If whose branches use an outer value, with a Constant tensor inside.
  std::string tensor;
  varint(tensor, (1 << 3) | 0); // dims
  varint(tensor, 1);
  intField(tensor, 2, 1); // FLOAT
  lenField(tensor, 9, std::string("\0\0\x80\x3f", 4));
  std::string constAttr;
  lenField(constAttr, 1, "value");
  intField(constAttr, 20, 4);
  lenField(constAttr, 5, tensor);
  std::string branch;
  lenField(branch, 1, node({}, {"c"}, "Constant", {constAttr}));
  lenField(branch, 1, node({"x", "c"}, {"z"}, "Add"));
  lenField(branch, 2, "then");
  std::string vz;
  lenField(vz, 1, "z");
  lenField(branch, 12, vz);
  std::string gAttr;
  lenField(gAttr, 1, "then_branch");
  intField(gAttr, 20, 5);
  lenField(gAttr, 6, branch);
  std::string eAttr = gAttr;
  eAttr.replace(2, 11, "else_branch");
  std::string model =
      modelAround(graphAround({node({"x"}, {"y"}, "If", {gAttr, eAttr})}));
  expectSame(model, true, "If with subgraphs");
  EXPECT_NE(liftBoth(model, true).find("then"), std::string::npos);

  // Lift errors: reported identically (the wire lift falls back).
  expectSame(modelAround(graphAround({node({"nope"}, {"y"}, "Relu")})), false, "undefined input");
  expectSame(modelAround(graphAround({node({"x"}, {"y"}, "Relu"), node({"x"}, {"y"}, "Relu")})),
             false, "output defined twice");
  // Two graph fields merge in protobuf: left to the ModelProto way.
  std::string two = modelAround(graphAround({node({"x"}, {"y"}, "Relu")}));
  lenField(two, 7, graphAround({}));
  expectSame(two, false, "two graphs");
  // Truncated: the pre-scan's or protobuf's error, the same both ways.
  std::string cut = model.substr(0, model.size() - 3);
  expectSame(cut, false, "truncated");
  EXPECT_EQ(liftBoth("", true), liftBoth("", false));
}

// Note [Prefetched names]: the wire lift resolves the names of a block of
// nodes before it builds them. Graphs spanning many blocks, with uses
// before definitions across blocks, omitted inputs, nodes that go through
// protobuf in the middle of a block, subgraphs using outer values defined
// in later blocks, and an undefined input deep in the graph: the same IR,
// or the same error, as the ModelProto lift.
TEST(WireLift, BlocksOfNodesResolveAsNodeByNode) {
  std::string meta, entry;
  lenField(entry, 1, "k");
  lenField(entry, 2, "v");
  lenField(meta, 9, entry);
  auto branchAttr = [](const std::string &name, const std::string &outer) {
    std::string branch, vz, a;
    lenField(branch, 1, node({outer}, {name + "_z"}, "Relu"));
    lenField(branch, 2, name);
    lenField(vz, 1, name + "_z");
    lenField(branch, 12, vz);
    lenField(a, 1, name);
    intField(a, 20, 5);
    lenField(a, 6, branch);
    return a;
  };
  const unsigned kNodes = 300;
  // Node i computes t<i> from t<i-1> (t0 from x); listed in a scrambled
  // order so most uses come before their definition, many blocks away.
  std::vector<std::string> nodes(kNodes);
  for (unsigned i = 0; i < kNodes; ++i) {
    std::string in = i == 0 ? "x" : "t" + std::to_string(i - 1);
    std::string out = "t" + std::to_string(i);
    if (i % 50 == 7)
      nodes[i] = node({in}, {out}, "Relu", {}, meta); // through protobuf
    else if (i % 40 == 3)
      nodes[i] = node({in, "", in}, {out}, "Clip"); // an omitted input
    else if (i % 60 == 11) // branches using a value defined 30 nodes on
      nodes[i] = node({in}, {out}, "If",
                      {branchAttr("then" + std::to_string(i), "t" + std::to_string(i + 30)),
                       branchAttr("else" + std::to_string(i), in)});
    else
      nodes[i] = node({in}, {out}, "Relu");
  }
  nodes.push_back(node({"t" + std::to_string(kNodes - 1)}, {"y"}, "Relu"));
  std::vector<std::string> scrambled;
  for (unsigned i = 0; i < nodes.size(); ++i) scrambled.push_back(nodes[(i * 97) % nodes.size()]);
  ASSERT_EQ(std::set<std::string>(scrambled.begin(), scrambled.end()).size(), nodes.size());
  std::string model = modelAround(graphAround(scrambled));
  expectSame(model, true, "scrambled blocks");
  EXPECT_EQ(liftBoth(model, true).find("error"), std::string::npos);

  // An undefined input in a late block: the same located error both ways.
  scrambled.insert(scrambled.begin() + 250, node({"t5", "nope"}, {"late"}, "Add"));
  std::string bad = modelAround(graphAround(scrambled));
  expectSame(bad, false, "undefined input in a late block");
  EXPECT_NE(liftBoth(bad, true).find("input \"nope\" is undefined"), std::string::npos);
}

// A float TensorProto named `name` holding `bytes` of raw_data (a marker
// every 4093 bytes, so windows of it are found in the file).
std::string rawFloatTensor(const std::string &name, size_t bytes, char fill) {
  std::string t, raw(bytes, fill);
  for (size_t i = 0; i < raw.size(); i += 4093) raw[i] = char(i);
  varint(t, (1 << 3) | 0);
  varint(t, raw.size() / 4);
  intField(t, 2, 1);
  lenField(t, 8, name);
  lenField(t, 9, raw);
  return t;
}

// A fresh directory under the test temp dir, removed at scope exit.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string &tag)
      : path(::testing::TempDir() + "/" + tag + "." + std::to_string(::getpid())) {
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string write(const std::string &name, const std::string &bytes) const {
    std::string p = path + "/" + name;
    std::ofstream out(p, std::ios::binary);
    out << bytes;
    return p;
  }
};

TEST(WireLift, BigInitializersAreMappedBothWays) {
  // Over the slim threshold (8 MiB): raw_data is a view of the mapping.
  ScratchDir dir("wirelift");
  std::string extra;
  lenField(extra, 5, rawFloatTensor("w", 12u << 20, '\0'));
  std::string model =
      modelAround(graphAround({node({"x", "w"}, {"y"}, "Add")}, extra));
  std::string path = dir.write("big.onnx", model);
  EXPECT_EQ(compareFile(path), "");
  {
    WireSwitch sw(true);
    auto m = loadModel(path);
    ASSERT_TRUE(m.ok()) << m.status();
    const Value *w = (*m)->graph().lookup("w");
    ASSERT_TRUE(w && w->hasInitializer());
  }
}

TEST(WireLift, BigConstantsAreViewsOfTheMappedFile) {
  // A Constant's tensor in a mapped file is a view, like an initializer's:
  // both raw windows sit at their file distance from one mapping base.
  ScratchDir dir("wireconst");
  auto tensorBytes = [](const std::string &name, char fill) {
    return rawFloatTensor(name, 3u << 20, fill);
  };
  std::string attr;
  lenField(attr, 1, "value");
  lenField(attr, 5, tensorBytes("", 'c'));
  intField(attr, 20, 4);
  std::string init;
  lenField(init, 5, tensorBytes("w", 'w'));
  // Over the slim threshold (8 MiB) in all.
  std::string pad;
  lenField(pad, 5, tensorBytes("w2", 'p'));
  lenField(pad, 5, tensorBytes("w3", 'q'));
  std::string model = modelAround(graphAround(
      {node({}, {"c"}, "Constant", {attr}), node({"x", "c"}, {"s"}, "Add"),
       node({"s", "w"}, {"y"}, "Add")},
      init + pad));
  std::string path = dir.write("const.onnx", model);
  EXPECT_EQ(compareFile(path), "");
  WireSwitch sw(true);
  auto m = loadModel(path);
  ASSERT_TRUE(m.ok()) << m.status();
  const Value *c = (*m)->graph().lookup("c");
  const Value *w = (*m)->graph().lookup("w");
  ASSERT_TRUE(c && c->definingNode() && w && w->hasInitializer());
  const Attribute *value = c->definingNode()->getAttr("value");
  ASSERT_TRUE(value && value->tensors.size() == 1);
  llvm::StringRef cr = value->tensors[0]->rawData(), wr = w->initializer()->rawData();
  ASSERT_EQ(cr.size(), 3u << 20);
  ASSERT_EQ(wr.size(), 3u << 20);
  size_t cOff = model.find(std::string(cr.data(), 64)), wOff = model.find(std::string(wr.data(), 64));
  ASSERT_NE(cOff, std::string::npos);
  ASSERT_NE(wOff, std::string::npos);
  EXPECT_EQ(cr.data() - (ptrdiff_t)cOff, wr.data() - (ptrdiff_t)wOff)
      << "the Constant's bytes are not a view of the file";
  EXPECT_EQ(cr, llvm::StringRef(model).substr(cOff, cr.size()));
}

// Note [Nesting limits]: a type met first at depth 200 (as one value's type)
// and then again under one more wrapper (another value's) nests 201 deep;
// the lift's type cache returned the inner type without counting its
// depth, so the lift took what the verifier refuses and what a second lift
// of the lowered bytes refused (found by fuzz-lift). Both lifts refuse it.
TEST(WireLift, TypesPastTheLimitThroughTheTypeCacheAreRefused) {
  auto wrap = [](proto::TypeProto t, unsigned levels) {
    for (unsigned k = 0; k < levels; ++k) {
      proto::TypeProto outer;
      *outer.mutable_sequence_type()->mutable_elem_type() = t;
      t = outer;
    }
    return t;
  };
  proto::TypeProto tensor;
  tensor.mutable_tensor_type()->set_elem_type(1);
  auto build = [&](unsigned outerLevels) {
    proto::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto *g = mp.mutable_graph();
    g->set_name("main");
    auto *a = g->add_input();
    a->set_name("a");
    *a->mutable_type() = wrap(tensor, kMaxTypeNesting); // 200 levels
    auto *b = g->add_input();
    b->set_name("b");
    *b->mutable_type() = wrap(a->type(), outerLevels);
    return mp.SerializeAsString();
  };
  for (bool wire : {false, true}) {
    WireSwitch sw(wire);
    auto ok = liftModel(build(0));
    EXPECT_TRUE(ok.ok()) << ok.status();
    auto deep = liftModel(build(1));
    ASSERT_FALSE(deep.ok()) << (wire ? "wire" : "proto");
    EXPECT_NE(deep.status().message().find("types nest deeper than 200 levels"), std::string::npos)
        << deep.status();
  }
}

} // namespace
