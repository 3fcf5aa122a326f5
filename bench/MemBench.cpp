//===- MemBench.cpp - Memory of lifting, per byte of input ---------------===//
//
// Peak resident memory of reading a model, divided by the model's file size,
// for the shapes that cost the most per byte (issue 15): a string tensor of
// many empty strings (2 bytes each on disk), a chain of nodes, and a float
// tensor written as a text literal. Each measurement runs in a forked child;
// the child's peak RSS minus that of an idle child, over the file size, is
// "bytes of memory per byte of input". Bare protobuf parsing of the same file
// is the baseline in the same run. See README.md ("Memory per input byte").
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/onnx.pb.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using namespace onnxir;
using namespace onnxir::bench;

namespace {

void addOpset(proto::ModelProto &mp) {
  mp.set_ir_version(8);
  auto *o = mp.add_opset_import();
  o->set_domain("");
  o->set_version(17);
}

/// One initializer "s" of `n` strings of `len` bytes, returned by Identity.
void genStrings(const std::string &path, int64_t n, int len) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("strings");
  auto *t = g->add_initializer();
  t->set_name("s");
  t->set_data_type(8); // STRING
  t->add_dims(n);
  std::string v((size_t)len, 'x');
  for (int64_t i = 0; i < n; ++i) t->add_string_data(v);
  auto *nd = g->add_node();
  nd->set_op_type("Identity");
  nd->add_input("s");
  nd->add_output("y");
  g->add_output()->set_name("y");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

/// A chain of `n` Relu nodes with short names.
void genChain(const std::string &path, int64_t n) {
  proto::ModelProto mp;
  addOpset(mp);
  auto *g = mp.mutable_graph();
  g->set_name("chain");
  auto *in = g->add_input();
  in->set_name("v0");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  for (int64_t i = 0; i < n; ++i) {
    auto *nd = g->add_node();
    nd->set_op_type("Relu");
    nd->add_input("v" + std::to_string(i));
    nd->add_output("v" + std::to_string(i + 1));
  }
  g->add_output()->set_name("v" + std::to_string(n));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  mp.SerializeToOstream(&out);
}

/// A text model whose initializer is a float literal of `n` elements.
void genTextLiteral(const std::string &path, int64_t n) {
  std::ofstream out(path, std::ios::trunc);
  out << "<ir_version: 8, opset_import: [\"\" : 17]>\nlit (float[" << n
      << "] x) => (float[" << n << "] y)\n  <float[" << n << "] w = {";
  for (int64_t i = 0; i < n; ++i) out << (i ? ", " : "") << (i % 97) << ".5";
  out << "}>\n{\n  y = Add(x, w)\n}\n";
}

double pbParse(const std::string &path) {
  std::string bytes = readAll(path);
  proto::ModelProto mp;
  return mp.ParseFromString(bytes) ? 0.0 : -1.0;
}

double liftFile(const std::string &path) {
  auto m = loadModel(path);
  if (!m.ok()) std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
  return m.ok() ? 0.0 : -1.0;
}

double parseText(const std::string &path) {
  std::string text = readAll(path);
  auto m = parseModelText(text, path);
  if (!m.ok()) std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
  return m.ok() ? 0.0 : -1.0;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = (fs::temp_directory_path() / "onnxir-mem-bench").string();
  bool quick = false, keep = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--quick") quick = true;
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: onnxir-mem-bench [--dir DIR] [--quick] [--keep]\n");
      return 2;
    }
  }
  fs::create_directories(dir);
  int64_t k = quick ? 1 : 4;
  struct Case {
    std::string label, path;
    bool text;
  };
  std::vector<Case> cases = {
      {"empty strings x" + std::to_string(5 * k) + "M", dir + "/strings0.onnx", false},
      {"20-byte strings x" + std::to_string(k) + "M", dir + "/strings20.onnx", false},
      {"Relu chain x" + std::to_string(250 * k) + "k", dir + "/chain.onnx", false},
      {"text float literal x" + std::to_string(k) + "M", dir + "/literal.onnxtxt", true},
  };
  Sample gen = inChild([&] {
    genStrings(cases[0].path, 5000000 * k, 0);
    genStrings(cases[1].path, 1000000 * k, 20);
    genChain(cases[2].path, 250000 * k);
    genTextLiteral(cases[3].path, 1000000 * k);
    return 0.0;
  });
  if (!gen.ok) {
    std::fprintf(stderr, "generation failed\n");
    return 1;
  }
  Sample idle = inChild([] { return 0.0; });
  std::printf("peak RSS above an idle child (%s), per byte of the input file\n\n",
              fmtM(idle.maxrssKiB).c_str());
  std::printf("%-24s %9s | %9s %9s | %9s %9s\n", "model", "file", "pb RSS", "per byte",
              "onnxir", "per byte");
  for (const Case &c : cases) {
    double size = (double)fs::file_size(c.path);
    Sample pb = c.text ? Sample() : inChild([&] { return pbParse(c.path); });
    Sample ox = inChild([&] { return c.text ? parseText(c.path) : liftFile(c.path); });
    auto perByte = [&](const Sample &s) {
      char b[32];
      if (!s.ok) return std::string("-");
      std::snprintf(b, sizeof b, "%.1fx",
                    double(std::max(0L, s.maxrssKiB - idle.maxrssKiB)) * 1024.0 / size);
      return std::string(b);
    };
    std::printf("%-24s %6.1f MB | %9s %9s | %9s %9s\n", c.label.c_str(), size / 1048576.0,
                pb.ok ? fmtM(pb.maxrssKiB).c_str() : "-", perByte(pb).c_str(),
                fmtM(ox.maxrssKiB).c_str(), perByte(ox).c_str());
    std::fflush(stdout);
  }
  if (!keep) fs::remove_all(dir);
  return 0;
}
