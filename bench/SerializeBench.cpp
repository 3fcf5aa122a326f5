//===- SerializeBench.cpp - onnxir lift/lower vs bare protobuf -----------===//
//
// Generates synthetic models (10^4, 10^5, 10^6 nodes with dead branches in
// shuffled order; transformer-like models of as many nodes; ~500 MB of inline float weights; ~3 GB of external data in
// a sparse file) and measures, each in a forked child (median of N runs):
//   pb parse       read file + ModelProto::ParseFromString
//   pb rt          read + parse + SerializeToString + write
//   lift           onnxir::loadModel
//   rt             read + lift + lower + write (onnxir::saveModel)
//   opt rt         rt with -dce -topo in between (verified after each pass)
//   old rt, old opt rt   the same with the lowerer before issue 13 (a
//                  ModelProto built, then serialized; test/Unit/Serialize/
//                  LegacyLower.cpp), so before and after sit side by side
// plus the peak RSS of each child (wait4 rusage ru_maxrss). See README.md.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "LegacyLower.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include "google/protobuf/arena.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace onnxir;

using namespace onnxir::bench;

namespace {

//===--- Generators -------------------------------------------------------===//

void addOpset(proto::ModelProto &mp) {
  mp.set_ir_version(9);
  mp.set_producer_name("onnxir-bench");
  auto *o = mp.add_opset_import();
  o->set_domain("");
  o->set_version(19);
}

void addInput(proto::GraphProto *g, const std::string &name, int64_t n) {
  auto *x = g->add_input();
  x->set_name(name);
  auto *tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_param("N");
  tt->mutable_shape()->add_dim()->set_dim_value(n);
}

// A chain of `n` nodes (Add/Mul/Relu/Sigmoid with a few attributes); every
// 8th node starts a dead branch of 3 nodes nobody uses; shuffled order.
void genNodes(const std::string &path, int64_t n) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("chain");
  addInput(g, "x", 64);
  auto *c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(1);
  c->add_dims(64);
  for (int i = 0; i < 64; ++i) c->add_float_data(0.01f * i);
  static const char *ops[] = {"Add", "Mul", "Relu", "Sigmoid"};
  std::string prev = "x";
  int64_t made = 0, id = 0;
  auto node = [&](const char *op, const std::string &a, const std::string &b) {
    auto *nd = g->add_node();
    nd->set_op_type(op);
    nd->set_name("n" + std::to_string(id));
    nd->add_input(a);
    if (!b.empty()) nd->add_input(b);
    std::string out = "v" + std::to_string(id++);
    nd->add_output(out);
    if (id % 5 == 0) {
      auto *at = nd->add_attribute();
      at->set_name("tag");
      at->set_type(proto::AttributeProto::INT);
      at->set_i(id);
    }
    ++made;
    return out;
  };
  while (made < n) {
    const char *op = ops[made % 4];
    bool binary = op[0] == 'A' || op[0] == 'M';
    prev = node(op, prev, binary ? "c" : "");
    if (made % 8 == 0 && made + 3 < n) {
      std::string d = node("Mul", prev, "c");
      d = node("Relu", d, "");
      node("Add", d, "c");
    }
  }
  auto *y = g->add_output();
  y->set_name(prev);
  std::mt19937_64 rng(42);
  std::shuffle(g->mutable_node()->pointer_begin(), g->mutable_node()->pointer_end(), rng);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

// A transformer-like model of about `n` nodes, in topological order as
// exporters write them: per layer, small raw weight initializers (8x8 and
// 8 floats), a layer norm, Q/K/V projections, the Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape chains of multi-head attention, Transpose
// with perm, Softmax, Constant nodes holding tensors, attributes on most
// nodes.
void genTransformer(const std::string &path, int64_t n) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("transformer");
  addInput(g, "x", 8);
  std::string prev = "x";
  int64_t made = 0, id = 0;
  std::mt19937 rng(11);
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
      float f = float(rng() % 1000) * 0.001f;
      std::memcpy(&raw[(size_t)k * 4], &f, 4);
    }
    t->set_raw_data(std::move(raw));
    return name;
  };
  auto node = [&](const char *op, std::vector<std::string> ins, const std::string &base) {
    auto *nd = g->add_node();
    nd->set_op_type(op);
    std::string out = base + "_" + std::to_string(id++);
    nd->set_name("/" + out + "/" + op);
    for (auto &i : ins) nd->add_input(i);
    nd->add_output(out);
    ++made;
    return std::make_pair(nd, out);
  };
  auto ints = [](proto::NodeProto *nd, const char *name, std::vector<int64_t> v) {
    auto *a = nd->add_attribute();
    a->set_name(name);
    a->set_type(proto::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  auto intAttr = [](proto::NodeProto *nd, const char *name, int64_t v) {
    auto *a = nd->add_attribute();
    a->set_name(name);
    a->set_type(proto::AttributeProto::INT);
    a->set_i(v);
  };
  auto constant = [&](int64_t v, const std::string &base) {
    auto [nd, out] = node("Constant", {}, base);
    auto *a = nd->add_attribute();
    a->set_name("value");
    a->set_type(proto::AttributeProto::TENSOR);
    auto *t = a->mutable_t();
    t->set_data_type(7);
    t->add_int64_data(v);
    return out;
  };
  for (int layer = 0; made < n; ++layer) {
    std::string L = "l" + std::to_string(layer);
    // Layer norm.
    auto [m1, mean] = node("ReduceMean", {prev}, L + "_mean");
    ints(m1, "axes", {-1});
    intAttr(m1, "keepdims", 1);
    std::string c = node("Sub", {prev, mean}, L + "_c").second;
    std::string two = constant(2, L + "_two");
    std::string sq = node("Pow", {c, two}, L + "_sq").second;
    auto [m2, var] = node("ReduceMean", {sq}, L + "_var");
    ints(m2, "axes", {-1});
    std::string sd = node("Sqrt", {var}, L + "_sd").second;
    std::string nrm = node("Div", {c, sd}, L + "_norm").second;
    nrm = node("Mul", {nrm, weight(L + ".ln.weight", {8})}, L + "_scale").second;
    nrm = node("Add", {nrm, weight(L + ".ln.bias", {8})}, L + "_shift").second;
    // Q, K, V: MatMul + Add, then the head split.
    std::vector<std::string> heads;
    for (const char *w : {"q", "k", "v"}) {
      std::string h = node("MatMul", {nrm, weight(L + "." + w + ".weight", {8, 8})}, L + "_" + w)
                          .second;
      h = node("Add", {h, weight(L + "." + w + ".bias", {8})}, L + "_" + w + "b").second;
      std::string shp = node("Shape", {h}, L + "_" + w + "shape").second;
      std::string i0 = constant(0, L + "_" + w + "i0");
      auto [ga, b0] = node("Gather", {shp, i0}, L + "_" + w + "batch");
      intAttr(ga, "axis", 0);
      auto [un, ub] = node("Unsqueeze", {b0}, L + "_" + w + "unsq");
      (void)un;
      std::string rest = constant(-1, L + "_" + w + "rest");
      auto [cc, dims] = node("Concat", {ub, rest}, L + "_" + w + "dims");
      intAttr(cc, "axis", 0);
      std::string r = node("Reshape", {h, dims}, L + "_" + w + "split").second;
      auto [tr, t] = node("Transpose", {r}, L + "_" + w + "heads");
      ints(tr, "perm", {1, 0});
      heads.push_back(t);
    }
    std::string att = node("MatMul", {heads[0], heads[1]}, L + "_qk").second;
    auto [sm, p] = node("Softmax", {att}, L + "_p");
    intAttr(sm, "axis", -1);
    std::string ctx = node("MatMul", {p, heads[2]}, L + "_ctx").second;
    auto [tr2, back] = node("Transpose", {ctx}, L + "_merge");
    ints(tr2, "perm", {1, 0});
    std::string o = node("MatMul", {back, weight(L + ".o.weight", {8, 8})}, L + "_o").second;
    prev = node("Add", {prev, o}, L + "_res").second;
  }
  g->add_output()->set_name(prev);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

// ~`mb` MB of inline float weights in 10 MB raw initializers.
void genWeights(const std::string &path, int mb) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("weights");
  const int64_t per = (10 << 20) / 4;
  addInput(g, "x", per);
  std::string prev = "x";
  std::mt19937 rng(7);
  for (int i = 0; i < mb / 10; ++i) {
    auto *t = g->add_initializer();
    t->set_name("w" + std::to_string(i));
    t->set_data_type(1);
    t->add_dims(per);
    std::string raw((size_t)per * 4, '\0');
    for (size_t k = 0; k < raw.size(); k += 4) {
      float f = float(rng() % 1000) * 0.001f;
      std::memcpy(&raw[k], &f, 4);
    }
    t->set_raw_data(std::move(raw));
    auto *nd = g->add_node();
    nd->set_op_type("Add");
    nd->add_input(prev);
    nd->add_input(t->name());
    prev = "a" + std::to_string(i);
    nd->add_output(prev);
  }
  g->add_output()->set_name(prev);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

// ~`gb` GB of external data: 256 MiB tensors in a sparse file beside the
// model (only each tensor's first and last page hold non-zero bytes).
void genExternal(const std::string &dir, int gb) {
  const uint64_t per = uint64_t(256) << 20;
  const int count = gb * 4;
  std::string data = dir + "/ext.bin";
  int fd = ::open(data.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || ::ftruncate(fd, (off_t)(per * count)) != 0) {
    std::perror("ext.bin");
    std::exit(1);
  }
  char page[4096];
  std::memset(page, 0x3c, sizeof page);
  for (int i = 0; i < count; ++i) {
    if (::pwrite(fd, page, sizeof page, (off_t)(per * i)) < 0 ||
        ::pwrite(fd, page, sizeof page, (off_t)(per * (i + 1) - sizeof page)) < 0)
      std::perror("pwrite");
  }
  ::close(fd);
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("external");
  addInput(g, "x", (int64_t)(per / 4));
  std::string prev = "x";
  for (int i = 0; i < count; ++i) {
    auto *t = g->add_initializer();
    t->set_name("e" + std::to_string(i));
    t->set_data_type(1);
    t->add_dims((int64_t)(per / 4));
    t->set_data_location(proto::TensorProto::EXTERNAL);
    auto add = [&](const char *k, const std::string &v) {
      auto *e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "ext.bin");
    add("offset", std::to_string(per * i));
    add("length", std::to_string(per));
    auto *nd = g->add_node();
    nd->set_op_type("Add");
    nd->add_input(prev);
    nd->add_input(t->name());
    prev = "a" + std::to_string(i);
    nd->add_output(prev);
  }
  g->add_output()->set_name(prev);
  std::ofstream out(dir + "/ext.onnx", std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

double pbParse(const std::string &path) {
  double t0 = now();
  std::string bytes = readAll(path);
  proto::ModelProto mp;
  if (!mp.ParseFromString(bytes)) return -1;
  return now() - t0;
}

double pbRoundTrip(const std::string &path, const std::string &out) {
  double t0 = now();
  std::string bytes = readAll(path);
  proto::ModelProto mp;
  if (!mp.ParseFromString(bytes)) return -1;
  bytes.clear();
  bytes.shrink_to_fit();
  std::string o;
  if (!mp.SerializeToString(&o)) return -1;
  writeAll(out, o);
  return now() - t0;
}

double lift(const std::string &path) {
  double t0 = now();
  auto m = loadModel(path);
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
    return -1;
  }
  return now() - t0;
}

// The save before issue 13: lower into an arena ModelProto, serialize,
// write, fsync (the old saveModel streamed the message to the file instead
// of a string; for node-heavy models the difference is the output size).
bool oldSave(const Model &m, const std::string &out) {
  google::protobuf::ArenaOptions ao;
  ao.start_block_size = 64 << 10;
  ao.max_block_size = 4 << 20;
  google::protobuf::Arena arena(ao);
  auto *mp = google::protobuf::Arena::CreateMessage<proto::ModelProto>(&arena);
  if (!legacy::lowerProto(m, mp, nullptr).ok()) return false;
  std::string bytes = legacy::serialize(*mp);
  int fd = ::open(out.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, bytes.data(), bytes.size()) == (ssize_t)bytes.size() && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// load + -dce -topo (verifying after each pass, as onnx-opt does) + save.
double optRoundTrip(const std::string &path, const std::string &out, bool old = false) {
  double t0 = now();
  auto m = loadModel(path);
  if (!m.ok()) return -1;
  registerAllPasses();
  PassManager pm;
  for (const char *p : {"dce", "topo"}) pm.addPass(PassRegistry::instance().lookup(p)->factory());
  auto r = pm.run(**m);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return -1;
  }
  if (old) return oldSave(**m, out) ? now() - t0 : -1;
  auto s = saveModel(**m, out, {});
  if (!s.ok()) return -1;
  return now() - t0;
}

long procStatusKiB(const char *key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t n = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, n, key) == 0) return std::atol(line.c_str() + n + 1);
  return -1;
}

// The save alone, after an untimed load: its CPU/wall seconds, or (`rss`)
// the memory it needs above what the loaded model holds (peak RSS during
// the save, reset through /proc/self/clear_refs, minus the RSS before it),
// in KiB.
double saveOnly(const std::string &path, const std::string &out, bool old, bool rss) {
  auto m = loadModel(path);
  if (!m.ok()) return -1;
  {
    std::ofstream cr("/proc/self/clear_refs");
    cr << "5";
  }
  long base = procStatusKiB("VmRSS:");
  double t0 = now();
  bool ok = old ? oldSave(**m, out) : saveModel(**m, out, {}).ok();
  double t = now() - t0;
  if (!ok) return -1;
  return rss ? double(procStatusKiB("VmHWM:") - base) : t;
}

double oldRoundTrip(const std::string &path, const std::string &out) {
  double t0 = now();
  auto m = loadModel(path);
  if (!m.ok()) return -1;
  return oldSave(**m, out) ? now() - t0 : -1;
}

double roundTrip(const std::string &path, const std::string &out, const LowerOptions &lo) {
  double t0 = now();
  auto m = loadModel(path);
  if (!m.ok()) return -1;
  auto s = saveModel(**m, out, lo);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return -1;
  }
  return now() - t0;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = (fs::temp_directory_path() / "onnxir-bench").string();
  int runs = 3;
  bool keep = false, quick = false, saveOnlyMode = false;
  std::string only; // measure only the models whose label contains this
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--keep") keep = true;
    else if (a == "--quick") quick = true;
    else if (a == "--cpu") useCpuClock() = true;
    else if (a == "--save-only") saveOnlyMode = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else {
      std::fprintf(stderr, "usage: onnxir-bench [--dir DIR] [--runs N] [--keep] [--quick] [--cpu] "
                           "[--save-only] [--only TEXT]\n");
      return 2;
    }
  }
  fs::create_directories(dir);
  fs::create_directories(dir + "/out");
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  if (quick) sizes = {10000, 100000};
  int weightsMB = quick ? 100 : 500, extGB = quick ? 1 : 3;

  double g0 = now();
  std::vector<std::pair<std::string, std::string>> models;
  for (int64_t n : sizes)
    models.push_back({"nodes " + std::to_string(n),
                      dir + "/nodes" + std::to_string(n) + ".onnx"});
  for (int64_t n : sizes)
    models.push_back({"transf " + std::to_string(n),
                      dir + "/transformer" + std::to_string(n) + ".onnx"});
  std::string wp = dir + "/weights.onnx";
  models.push_back({"weights " + std::to_string(weightsMB) + "MB", wp});
  // Every model is generated (a later run finds them), only some measured.
  auto measured = [&](const std::string &label) {
    return only.empty() || label.find(only) != std::string::npos;
  };
  // Generate in a child so that the measuring parent stays small (a forked
  // child's peak RSS starts at the parent's RSS).
  Sample gen = inChild([&] {
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!fs::exists(models[i].second)) genNodes(models[i].second, sizes[i]);
      const std::string &tp = models[sizes.size() + i].second;
      if (!fs::exists(tp)) genTransformer(tp, sizes[i]);
    }
    if (!fs::exists(wp)) genWeights(wp, weightsMB);
    if (!fs::exists(dir + "/ext.onnx")) genExternal(dir, extGB);
    return 0.0;
  });
  if (!gen.ok) {
    std::fprintf(stderr, "generation failed\n");
    return 1;
  }
  std::printf("generated in %.1f s under %s; median of %d runs, each in a forked child; %s\n\n",
              now() - g0, dir.c_str(), runs,
              useCpuClock() ? "CPU time (user + system)" : "wall time");

  if (saveOnlyMode) {
    // The lowerer alone: saveModel vs the old lowerer's save, after a load.
    std::printf("%-14s %6s | %8s %8s %6s | %9s %9s\n", "model", "size", "save", "old save",
                "ratio", "save +RSS", "old +RSS");
    for (auto &[label, path] : models) {
      if (!measured(label)) continue;
      std::string out = dir + "/out/o.onnx";
      Sample sn = median(runs, [&] { return saveOnly(path, out, false, false); });
      Sample so = median(runs, [&] { return saveOnly(path, out, true, false); });
      Sample rn = median(runs, [&] { return saveOnly(path, out, false, true); });
      Sample ro = median(runs, [&] { return saveOnly(path, out, true, true); });
      std::printf("%-14s %3.0f MB | %8s %8s %6s | %9s %9s\n", label.c_str(),
                  fs::file_size(path) / 1048576.0, fmtT(sn).c_str(), fmtT(so).c_str(),
                  ratio(sn, so).c_str(), fmtM((long)rn.seconds).c_str(),
                  fmtM((long)ro.seconds).c_str());
      std::fflush(stdout);
      fs::remove(out);
    }
    if (!keep) fs::remove_all(dir);
    return 0;
  }

  std::printf("%-14s %6s | %8s %8s %6s | %8s %8s %6s %8s %6s | %7s %7s %6s %7s %6s | "
              "%8s %6s %8s %6s %7s %6s\n",
              "model", "size", "pb parse", "lift", "ratio", "pb p+s", "rt", "ratio", "opt rt",
              "ratio", "pb RSS", "rt RSS", "ratio", "opt RSS", "ratio", "old rt", "ratio",
              "old opt", "ratio", "old RSS", "ratio");
  for (auto &[label, path] : models) {
    if (!measured(label)) continue;
    std::string out = dir + "/out/o.onnx", pbout = dir + "/out/pb.onnx";
    Sample pp = median(runs, [&] { return pbParse(path); });
    Sample prt = median(runs, [&] { return pbRoundTrip(path, pbout); });
    Sample li = median(runs, [&] { return lift(path); });
    Sample rt = median(runs, [&] { return roundTrip(path, out, {}); });
    Sample ort = median(runs, [&] { return optRoundTrip(path, out); });
    Sample oldrt = median(runs, [&] { return oldRoundTrip(path, out); });
    Sample oldort = median(runs, [&] { return optRoundTrip(path, out, true); });
    std::printf("%-14s %3.0f MB | %8s %8s %6s | %8s %8s %6s %8s %6s | %7s %7s %6s %7s %6s | "
                "%8s %6s %8s %6s %7s %6s\n",
                label.c_str(), fs::file_size(path) / 1048576.0, fmtT(pp).c_str(),
                fmtT(li).c_str(), ratio(li, pp).c_str(), fmtT(prt).c_str(), fmtT(rt).c_str(),
                ratio(rt, prt).c_str(), fmtT(ort).c_str(), ratio(ort, prt).c_str(),
                fmtM(prt.maxrssKiB).c_str(), fmtM(rt.maxrssKiB).c_str(),
                ratioM(rt.maxrssKiB, prt.maxrssKiB).c_str(), fmtM(ort.maxrssKiB).c_str(),
                ratioM(ort.maxrssKiB, prt.maxrssKiB).c_str(), fmtT(oldrt).c_str(),
                ratio(oldrt, prt).c_str(), fmtT(oldort).c_str(), ratio(oldort, prt).c_str(),
                fmtM(std::max(oldrt.maxrssKiB, oldort.maxrssKiB)).c_str(),
                ratioM(std::max(oldrt.maxrssKiB, oldort.maxrssKiB), prt.maxrssKiB).c_str());
    std::fflush(stdout);
    fs::remove(out);
    fs::remove(pbout);
  }

  // External data: the model file is tiny; the round trip into another
  // directory must copy every tensor (into out/ext.bin).
  std::string ep = dir + "/ext.onnx";
  if (!measured("external")) {
    if (!keep) fs::remove_all(dir);
    return 0;
  }
  Sample eli = median(runs, [&] { return lift(ep); });
  LowerOptions elo;
  elo.externalDataFile = "ext.bin";
  elo.externalThreshold = 1024;
  Sample ert = median(runs, [&] {
    double s = roundTrip(ep, dir + "/out/ext.onnx", elo);
    fs::remove(dir + "/out/ext.bin");
    return s;
  });
  std::printf("\nexternal %d GB (%d tensors of 256 MiB, sparse file): lift %s (peak RSS %s); "
              "round trip into another directory (all data copied) %s, peak RSS %s\n",
              extGB, extGB * 4, fmtT(eli).c_str(), fmtM(eli.maxrssKiB).c_str(),
              fmtT(ert).c_str(), fmtM(ert.maxrssKiB).c_str());
  if (!keep) fs::remove_all(dir);
  return 0;
}
