//===- InferBench.cpp - infer-shapes time against load time ---------------===//
//
//   onnxir-infer-bench [--dir DIR] [--shared DIR] [--runs N] [--quick]
//
// For generated chains of 10^5 and 10^6 nodes (symbolic batch dim; Relu,
// Add, Shape + Reshape so shape data flows, a Concat every few nodes) and
// for the shared real and light models, measures (median of N runs, each on
// a freshly loaded model):
//   load   onnxir::loadModel (the baseline: what reading the model costs)
//   infer  onnxir::inferShapes on the loaded model
// and prints infer time against load time, and infer time per node (equal
// per-node times for 10^5 and 10^6 nodes mean inference is linear).
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
using namespace onnxir;
using namespace onnxir::bench;

namespace {

proto::NodeProto *addNode(proto::GraphProto *g, const std::string &op,
                          std::vector<std::string> ins, const std::string &out) {
  auto *n = g->add_node();
  n->set_op_type(op);
  for (auto &i : ins) n->add_input(i);
  n->add_output(out);
  return n;
}

/// A chain of about `nodes` nodes on x: float[N,64].
std::string chainModel(int64_t nodes) {
  proto::ModelProto mp;
  mp.set_ir_version(9);
  auto *o = mp.add_opset_import();
  o->set_version(19);
  auto *g = mp.mutable_graph();
  g->set_name("chain");
  auto *in = g->add_input();
  in->set_name("x");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(64);
  auto *b = g->add_initializer();
  b->set_name("bias");
  b->set_data_type(1);
  b->add_dims(64);
  b->set_raw_data(std::string(64 * 4, '\0'));
  std::string prev = "x";
  int64_t made = 0;
  for (int64_t i = 0; made < nodes; ++i) {
    std::string k = std::to_string(i);
    addNode(g, "Relu", {prev}, "r" + k);
    addNode(g, "Add", {"r" + k, "bias"}, "a" + k);
    addNode(g, "Shape", {"a" + k}, "s" + k);
    addNode(g, "Reshape", {"a" + k, "s" + k}, "h" + k);
    made += 4;
    prev = "h" + k;
    if (i % 8 == 7) {
      auto *c = addNode(g, "Concat", {prev, prev}, "c" + k);
      auto *ax = c->add_attribute();
      ax->set_name("axis");
      ax->set_type(proto::AttributeProto::INT);
      ax->set_i(0);
      auto *sl = addNode(g, "Neg", {"c" + k}, "n" + k);
      (void)sl;
      made += 2;
      prev = "n" + k;
    }
  }
  auto *out = g->add_output();
  out->set_name(prev);
  return mp.SerializeAsString();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Row {
  std::string name;
  int64_t nodes = 0;
  double load = 0, infer = 0;
  int64_t typed = 0;
};

bool measure(const std::string &path, const std::string &name, int runs, Row &row) {
  std::vector<double> loads, infers;
  row.name = name;
  for (int r = 0; r < runs; ++r) {
    double t0 = now();
    auto m = loadModel(path);
    double t1 = now();
    if (!m.ok()) {
      fprintf(stderr, "%s: %s\n", path.c_str(), std::string(m.status().message()).c_str());
      return false;
    }
    ShapeInferenceStatistics st;
    double t2 = now();
    auto res = inferShapes(**m, {}, &st);
    double t3 = now();
    if (!res.ok()) {
      fprintf(stderr, "%s: %s\n", path.c_str(), std::string(res.status().message()).c_str());
      return false;
    }
    int64_t n = 0;
    (*m)->walkGraphs([&](Graph *g) { n += (int64_t)g->numNodes(); });
    row.nodes = n;
    row.typed = st.valuesTyped + st.valuesRefined;
    loads.push_back(t1 - t0);
    infers.push_back(t3 - t2);
  }
  row.load = median(loads);
  row.infer = median(infers);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = "/tmp/onnxir-infer-bench", shared;
  int runs = 3;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--shared" && i + 1 < argc) shared = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else {
      fprintf(stderr, "usage: %s [--dir DIR] [--shared DIR] [--runs N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  fs::create_directories(dir);
  std::vector<Row> rows;
  std::vector<int64_t> sizes = {100000};
  if (!quick) sizes.push_back(1000000);
  for (int64_t n : sizes) {
    std::string path = dir + "/chain" + std::to_string(n) + ".onnx";
    if (!fs::exists(path)) writeAll(path, chainModel(n));
    Row r;
    if (!measure(path, "chain " + std::to_string(n), runs, r)) return 1;
    rows.push_back(r);
  }
  if (!shared.empty())
    for (const char *sub : {"real", "light"}) {
      fs::path d = fs::path(shared) / "models" / sub;
      if (!fs::is_directory(d)) continue;
      std::vector<fs::path> files;
      for (auto &e : fs::directory_iterator(d))
        if (e.path().extension() == ".onnx") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (auto &f : files) {
        Row r;
        if (measure(f.string(), f.stem().string(), runs, r)) rows.push_back(r);
      }
    }
  printf("%-28s %9s %10s %10s %8s %12s %9s\n", "model", "nodes", "load ms", "infer ms",
         "infer/load", "infer ns/node", "typed");
  for (const Row &r : rows)
    printf("%-28s %9lld %10.2f %10.2f %8.2fx %12.1f %9lld\n", r.name.c_str(), (long long)r.nodes,
           r.load * 1e3, r.infer * 1e3, r.load > 0 ? r.infer / r.load : 0,
           r.nodes ? r.infer * 1e9 / r.nodes : 0, (long long)r.typed);
  return 0;
}
