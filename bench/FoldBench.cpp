//===- FoldBench.cpp - fold-constants time and memory against model size -===//
//
// For generated models with constant chains and for the shared real and
// light models, measures in forked children (median of N runs):
//   load        onnxir::loadModel (the baseline: what reading the model costs)
//   fold        onnxir::foldConstants on the loaded model (default budget:
//               1 MiB per produced tensor, no growth; `weights` uses 64 MiB)
//   RSS         peak RSS of load alone and of load + fold
// and prints fold time against load time, folding results, and the model's
// initializer bytes before and after. See README.md.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ConstantFolding.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
using namespace onnxir;
using namespace onnxir::bench;

namespace {

void addOpset(proto::ModelProto &mp) {
  mp.set_ir_version(9);
  mp.set_producer_name("onnxir-fold-bench");
  auto *o = mp.add_opset_import();
  o->set_domain("");
  o->set_version(19);
}

proto::TensorProto *addFloatInit(proto::GraphProto *g, const std::string &name,
                                 std::vector<int64_t> dims, float seed) {
  auto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::string raw((size_t)n * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    float v = seed + (float)(i % 97) * 0.25f;
    std::memcpy(&raw[(size_t)i * 4], &v, 4);
  }
  t->set_raw_data(std::move(raw));
  return t;
}

proto::NodeProto *addNode(proto::GraphProto *g, const std::string &op,
                          std::vector<std::string> ins, const std::string &out) {
  auto *n = g->add_node();
  n->set_op_type(op);
  for (auto &i : ins) n->add_input(i);
  n->add_output(out);
  return n;
}

void setIntAttr(proto::NodeProto *n, const std::string &name, int64_t v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(proto::AttributeProto::INT);
  a->set_i(v);
}

// `chains` chains of 5 constant nodes each, as exporters leave them
// (Cast to float16 and back, Mul by a shared scalar, Reshape, Transpose),
// each ending in an Add with the graph input, which stays.
void genChains(const std::string &path, int chains) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("chains");
  auto *x = g->add_input();
  x->set_name("x");
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(8);
  tt->mutable_shape()->add_dim()->set_dim_value(8);
  addFloatInit(g, "two", {}, 2.0f);
  auto *shape = g->add_initializer();
  shape->set_name("shape88");
  shape->set_data_type(7);
  shape->add_dims(2);
  shape->add_int64_data(8);
  shape->add_int64_data(8);
  std::string acc = "x";
  for (int i = 0; i < chains; ++i) {
    std::string s = std::to_string(i);
    addFloatInit(g, "w" + s, {64}, (float)i);
    setIntAttr(addNode(g, "Cast", {"w" + s}, "h" + s), "to", 10);
    setIntAttr(addNode(g, "Cast", {"h" + s}, "f" + s), "to", 1);
    addNode(g, "Mul", {"f" + s, "two"}, "m" + s);
    addNode(g, "Reshape", {"m" + s, "shape88"}, "r" + s);
    auto *tr = addNode(g, "Transpose", {"r" + s}, "t" + s);
    auto *perm = tr->add_attribute();
    perm->set_name("perm");
    perm->set_type(proto::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    addNode(g, "Add", {acc, "t" + s}, "a" + s);
    acc = "a" + s;
  }
  g->add_output()->set_name(acc);
  writeAll(path, mp.SerializeAsString());
}

// `count` weights of 1600x1600 floats (~10 MB), each Transposed (as a
// MatMul weight laid out the other way) and then used with the input.
void genWeights(const std::string &path, int count) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("weights");
  auto *x = g->add_input();
  x->set_name("x");
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(1600);
  std::string acc = "x";
  for (int i = 0; i < count; ++i) {
    std::string s = std::to_string(i);
    addFloatInit(g, "W" + s, {1600, 1600}, (float)i);
    auto *tr = addNode(g, "Transpose", {"W" + s}, "WT" + s);
    auto *perm = tr->add_attribute();
    perm->set_name("perm");
    perm->set_type(proto::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    addNode(g, "MatMul", {acc, "WT" + s}, "y" + s);
    acc = "y" + s;
  }
  g->add_output()->set_name(acc);
  writeAll(path, mp.SerializeAsString());
}

uint64_t constantBytes(const Model &m) {
  uint64_t total = 0;
  const_cast<Model &>(m).walkGraphs([&](Graph *g) {
    for (Value *v : g->initializers()) {
      auto b = v->initializer()->bytes();
      if (b.ok()) total += b->size();
    }
  });
  return total;
}

struct FoldResult {
  FoldStatistics stats;
  uint64_t before = 0, after = 0;
  size_t nodesBefore = 0, nodesAfter = 0;
};

size_t countNodes(Model &m) {
  size_t n = 0;
  m.walkGraphs([&](Graph *g) { n += g->numNodes(); });
  return n;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = (fs::temp_directory_path() / "onnxir-fold-bench").string();
  std::string shared = "../shared/models";
  int runs = 3;
  bool quick = false, keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--shared" && i + 1 < argc) shared = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr,
                   "usage: onnxir-fold-bench [--dir DIR] [--shared DIR] [--runs N] [--keep] "
                   "[--quick]\n");
      return 2;
    }
  }
  fs::create_directories(dir);
  struct Case {
    std::string name, path;
    uint64_t sizeLimit = 1u << 20;
  };
  std::vector<Case> cases;
  std::vector<int> chainCounts = quick ? std::vector<int>{1000, 10000}
                                       : std::vector<int>{1000, 10000, 100000};
  double t0 = now();
  for (int c : chainCounts) {
    std::string p = dir + "/chains" + std::to_string(c) + ".onnx";
    // Generated in a child, so that this process stays small: children
    // forked for the measurements start from its memory.
    inChild([&] {
      genChains(p, c);
      return 0.0;
    });
    cases.push_back({"chains " + std::to_string(c) + " (x5 nodes)", p});
  }
  {
    int count = quick ? 5 : 20;
    std::string p = dir + "/weights.onnx";
    inChild([&] {
      genWeights(p, count);
      return 0.0;
    });
    cases.push_back({"weights " + std::to_string(count) + "x10MB", p, 64u << 20});
  }
  std::fprintf(stderr, "generated in %.1f s under %s\n", now() - t0, dir.c_str());
  for (const char *sub : {"real", "light"}) {
    std::error_code ec;
    std::vector<std::string> files;
    for (auto &e : fs::directory_iterator(shared + "/" + sub, ec))
      if (e.path().extension() == ".onnx") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (auto &f : files) cases.push_back({fs::path(f).stem().string(), f});
  }

  std::printf("fold-constants (default budget: no growth) vs loading the same model; median of %d "
              "runs, each in a forked child\n\n",
              runs);
  std::printf("%-26s %8s | %9s %9s %7s | %13s %15s | %8s %8s %6s\n", "model", "size", "load",
              "fold", "f/load", "nodes", "init bytes", "RSS ld", "RSS l+f", "ratio");
  for (const Case &c : cases) {
    uint64_t size = fs::file_size(c.path);
    Sample load = median(runs, [&] {
      double s = now();
      auto m = loadModel(c.path);
      return m.ok() ? now() - s : -1.0;
    });
    // The child reports its counts through a small file beside the model.
    std::string statsPath = dir + "/fold-stats.bin";
    Sample fold = median(runs, [&] {
      auto m = loadModel(c.path);
      if (!m.ok()) return -1.0;
      FoldResult r;
      r.before = constantBytes(**m);
      r.nodesBefore = countNodes(**m);
      FoldOptions o;
      o.sizeLimit = c.sizeLimit;
      double s = now();
      auto changed = foldConstants(**m, o, &r.stats);
      double t = now() - s;
      if (!changed.ok()) return -1.0;
      r.after = constantBytes(**m);
      r.nodesAfter = countNodes(**m);
      std::ofstream out(statsPath, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char *>(&r), sizeof r);
      return t;
    });
    FoldResult r;
    {
      std::ifstream in(statsPath, std::ios::binary);
      in.read(reinterpret_cast<char *>(&r), sizeof r);
    }
    char nodes[32], bytes[48];
    std::snprintf(nodes, sizeof nodes, "%zu->%zu", r.nodesBefore, r.nodesAfter);
    std::snprintf(bytes, sizeof bytes, "%.1f->%.1f MB", r.before / 1e6, r.after / 1e6);
    std::printf("%-26s %5.0f MB | %9s %9s %7s | %13s %15s | %8s %8s %6s\n", c.name.c_str(),
                size / 1e6, fmtT(load).c_str(), fmtT(fold).c_str(), ratio(fold, load).c_str(),
                nodes, bytes, fmtM(load.maxrssKiB).c_str(), fmtM(fold.maxrssKiB).c_str(),
                ratioM(fold.maxrssKiB, load.maxrssKiB).c_str());
    std::fflush(stdout);
  }
  if (!keep) {
    for (int c : chainCounts) fs::remove(dir + "/chains" + std::to_string(c) + ".onnx");
    fs::remove(dir + "/weights.onnx");
    fs::remove(dir + "/fold-stats.bin");
  }
  return 0;
}
