//===- InferBench.cpp - infer-shapes time against load time ---------------===//
//
//   onnxir-infer-bench [--dir DIR] [--shared DIR] [--runs N] [--quick]
//                      [--only TEXT]
//
// For generated chains of 10^5 and 10^6 nodes (symbolic batch dim; Relu,
// Add, Shape + Reshape so shape data flows, a Concat every few nodes), for
// generated transformer encoders of 10^5 and 10^6 nodes (one layer as
// PyTorch exports it at opset 17, stacked) and for the shared real and
// light models, measures (median of N runs, each on a freshly loaded model;
// --only keeps the models whose name contains TEXT):
//   load   onnxir::loadModel (the baseline: what reading the model costs)
//   infer  onnxir::inferShapes on the loaded model
// and prints infer time against load time, and infer time per node (equal
// per-node times for 10^5 and 10^6 nodes mean inference is linear), in wall
// time and in the process's CPU time (user + system: the steadier figure on
// a machine other work keeps busy).
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

/// Transformer encoder layers as torch.onnx.export writes them (opset 17),
/// stacked until about `nodes` nodes, on x: float[batch, seq, 8]: a
/// LayerNormalization, Q/K/V projections (MatMul + Add), the head split
/// through Shape -> Gather -> Unsqueeze -> Concat -> Reshape -> Transpose
/// with Constant nodes for the indices, scaled scores, Softmax, the head
/// merge, the output projection and residual, then a second norm and an
/// Erf GELU feed-forward with its residual. Each layer has its own small
/// weights (8x8, 8x16), so the model stays a few MB per 10^5 nodes.
std::string transformerModel(int64_t nodes) {
  proto::ModelProto mp;
  mp.set_ir_version(8);
  auto *o = mp.add_opset_import();
  o->set_version(17);
  auto *g = mp.mutable_graph();
  g->set_name("main_graph");
  auto *in = g->add_input();
  in->set_name("x");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_param("seq");
  tt->mutable_shape()->add_dim()->set_dim_value(8);
  int64_t made = 0, id = 0;
  auto weight = [&](const std::string &name, std::vector<int64_t> dims) {
    auto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    std::string raw((size_t)count * 4, '\0');
    for (int64_t k = 0; k < count; ++k) {
      float f = float((k * 37 + id) % 100) * 0.01f;
      std::memcpy(&raw[(size_t)k * 4], &f, 4);
    }
    t->set_raw_data(std::move(raw));
    return name;
  };
  // A node named as the exporter names them; returns it and its output.
  auto node = [&](const char *op, std::vector<std::string> ins, const std::string &scope) {
    std::string out = scope + "/" + op + "_" + std::to_string(id++) + "_output_0";
    auto *n = addNode(g, op, ins, out);
    n->set_name(scope + "/" + op);
    ++made;
    return std::make_pair(n, out);
  };
  auto attrInt = [](proto::NodeProto *n, const char *name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(proto::AttributeProto::INT);
    a->set_i(v);
  };
  auto attrInts = [](proto::NodeProto *n, const char *name, std::vector<int64_t> v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(proto::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  auto attrFloat = [](proto::NodeProto *n, const char *name, float v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(proto::AttributeProto::FLOAT);
    a->set_f(v);
  };
  // A Constant node holding an int64 vector (a scalar when `scalar`) or a
  // float scalar.
  auto constant = [&](const std::string &scope, std::vector<int64_t> v, bool scalar) {
    auto [n, out] = node("Constant", {}, scope);
    auto *a = n->add_attribute();
    a->set_name("value");
    a->set_type(proto::AttributeProto::TENSOR);
    auto *t = a->mutable_t();
    t->set_data_type(7);
    if (!scalar) t->add_dims((int64_t)v.size());
    for (int64_t x : v) t->add_int64_data(x);
    return out;
  };
  auto constantF = [&](const std::string &scope, float v) {
    auto [n, out] = node("Constant", {}, scope);
    auto *a = n->add_attribute();
    a->set_name("value");
    a->set_type(proto::AttributeProto::TENSOR);
    auto *t = a->mutable_t();
    t->set_data_type(1);
    t->add_float_data(v);
    return out;
  };
  auto layerNorm = [&](const std::string &x, const std::string &scope) {
    auto [n, out] = node("LayerNormalization",
                         {x, weight(scope + ".weight", {8}), weight(scope + ".bias", {8})}, scope);
    attrInt(n, "axis", -1);
    attrFloat(n, "epsilon", 1e-5f);
    return out;
  };
  auto linear = [&](const std::string &x, const std::string &scope, int64_t k, int64_t n) {
    std::string m = node("MatMul", {x, weight(scope + ".weight", {k, n})}, scope).second;
    return node("Add", {weight(scope + ".bias", {n}), m}, scope).second;
  };
  std::string prev = "x";
  for (int layer = 0; made < nodes; ++layer) {
    std::string L = "/layers." + std::to_string(layer);
    std::string A = L + "/self_attn";
    std::string h = layerNorm(prev, L + "/norm1");
    // Batch and sequence lengths, read once per layer as the exporter does.
    std::string shp = node("Shape", {h}, A).second;
    auto dimOf = [&](int64_t i) {
      std::string idx = constant(A, {i}, true);
      auto [ga, d] = node("Gather", {shp, idx}, A);
      attrInt(ga, "axis", 0);
      std::string axes = constant(A, {0}, false);
      return node("Unsqueeze", {d, axes}, A).second;
    };
    std::string b = dimOf(0), s = dimOf(1);
    std::string heads = constant(A, {2}, false), hd = constant(A, {4}, false);
    std::string split = node("Concat", {b, s, heads, hd}, A).second;
    attrInt(g->mutable_node(g->node_size() - 1), "axis", 0);
    std::vector<std::string> qkv;
    for (const char *w : {"q_proj", "k_proj", "v_proj"}) {
      std::string p = linear(h, A + "/" + w, 8, 8);
      std::string r = node("Reshape", {p, split}, A).second;
      auto [tr, t] = node("Transpose", {r}, A);
      attrInts(tr, "perm", std::string(w) == "k_proj" ? std::vector<int64_t>{0, 2, 3, 1}
                                                       : std::vector<int64_t>{0, 2, 1, 3});
      qkv.push_back(t);
    }
    std::string sc = node("MatMul", {qkv[0], qkv[1]}, A).second;
    sc = node("Div", {sc, constantF(A, 2.0f)}, A).second;
    auto [sm, p] = node("Softmax", {sc}, A);
    attrInt(sm, "axis", -1);
    std::string ctx = node("MatMul", {p, qkv[2]}, A).second;
    auto [tr2, merged] = node("Transpose", {ctx}, A);
    attrInts(tr2, "perm", {0, 2, 1, 3});
    std::string width = constant(A, {8}, false);
    std::string mshape = node("Concat", {b, s, width}, A).second;
    attrInt(g->mutable_node(g->node_size() - 1), "axis", 0);
    std::string flat = node("Reshape", {merged, mshape}, A).second;
    std::string att = linear(flat, A + "/out_proj", 8, 8);
    std::string r1 = node("Add", {prev, att}, L).second;
    // Feed-forward with the exact (Erf) GELU.
    std::string h2 = layerNorm(r1, L + "/norm2");
    std::string f = linear(h2, L + "/linear1", 8, 16);
    std::string F = L + "/activation";
    std::string e = node("Div", {f, constantF(F, 1.4142135f)}, F).second;
    e = node("Erf", {e}, F).second;
    e = node("Add", {e, constantF(F, 1.0f)}, F).second;
    e = node("Mul", {f, e}, F).second;
    e = node("Mul", {e, constantF(F, 0.5f)}, F).second;
    std::string f2 = linear(e, L + "/linear2", 16, 8);
    prev = node("Add", {r1, f2}, L).second;
  }
  g->add_output()->set_name(prev);
  return mp.SerializeAsString();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Row {
  std::string name;
  int64_t nodes = 0;
  double load = 0, infer = 0, inferCpu = 0;
  int64_t typed = 0;
};

double cpuNow() {
  struct timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool measure(const std::string &path, const std::string &name, int runs, Row &row) {
  std::vector<double> loads, infers, inferCpus;
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
    double t2 = now(), c2 = cpuNow();
    auto res = inferShapes(**m, {}, &st);
    double t3 = now(), c3 = cpuNow();
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
    inferCpus.push_back(c3 - c2);
  }
  row.load = median(loads);
  row.infer = median(infers);
  row.inferCpu = median(inferCpus);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = "/tmp/onnxir-infer-bench", shared;
  int runs = 3;
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--shared" && i + 1 < argc) shared = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--dir DIR] [--shared DIR] [--runs N] [--quick] [--only TEXT]\n",
              argv[0]);
      return 2;
    }
  }
  fs::create_directories(dir);
  std::vector<Row> rows;
  std::vector<int64_t> sizes = {100000};
  if (!quick) sizes.push_back(1000000);
  auto wanted = [&](const std::string &name) {
    return only.empty() || name.find(only) != std::string::npos;
  };
  for (const char *kind : {"chain", "transformer"})
    for (int64_t n : sizes) {
      std::string name = std::string(kind) + " " + std::to_string(n);
      if (!wanted(name)) continue;
      std::string path = dir + "/" + kind + std::to_string(n) + ".onnx";
      if (!fs::exists(path))
        writeAll(path, kind[0] == 'c' ? chainModel(n) : transformerModel(n));
      Row r;
      if (!measure(path, name, runs, r)) return 1;
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
        if (!wanted(f.stem().string())) continue;
        Row r;
        if (measure(f.string(), f.stem().string(), runs, r)) rows.push_back(r);
      }
    }
  printf("%-28s %9s %10s %10s %8s %12s %10s %10s %9s\n", "model", "nodes", "load ms", "infer ms",
         "infer/load", "infer ns/node", "cpu ms", "cpu ns/node", "typed");
  for (const Row &r : rows)
    printf("%-28s %9lld %10.2f %10.2f %8.2fx %12.1f %10.2f %10.1f %9lld\n", r.name.c_str(),
           (long long)r.nodes, r.load * 1e3, r.infer * 1e3, r.load > 0 ? r.infer / r.load : 0,
           r.nodes ? r.infer * 1e9 / r.nodes : 0, r.inferCpu * 1e3,
           r.nodes ? r.inferCpu * 1e9 / r.nodes : 0, (long long)r.typed);
  return 0;
}
