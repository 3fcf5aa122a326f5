//===- MappedFaultTest.cpp - Files that shrink while they are read --------===//
//
// A mapped input (over 8 MiB: raw data is read as views of the mapping) or
// an external data file is truncated by the test at a chosen moment (after
// loading, before the reads); then saving, printing, dedup and folding must
// end in an error, never in SIGBUS, and leave no output or temporary
// (Note [Mapped-file faults] in lib/Serialize/FileIO.h). The fault flag is
// per process, so every case runs in a forked child.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/PassManager.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Serialize/Text.h"
#include "onnxir/onnx.pb.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/wait.h>
#include <unistd.h>

using namespace onnxir;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kFloats = 1100000; // 4.4 MB per tensor, 8.8 MB in all: mapped as views

class MappedFault : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("onnxir-fault-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = Add(W, V) with two equal initializers, inline (the file is then
  // mapped and read through views) or in sparse external data.
  // `packed`: INT4 elements, which the printer writes as hex (fast), not as
  // millions of formatted numbers.
  std::string writeModel(bool external, bool packed = false) {
    proto::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto *g = mp.mutable_graph();
    g->set_name("g");
    auto *n = g->add_node();
    n->set_op_type("Add");
    n->add_input("W");
    n->add_input("V");
    n->add_output("y");
    auto *out = g->add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(kFloats);
    uint64_t bytes = kFloats * 4;
    for (int i = 0; i < 2; ++i) {
      auto *t = g->add_initializer();
      t->set_name(i ? "V" : "W");
      t->set_data_type(packed ? 22 : 1);
      t->add_dims(packed ? kFloats * 8 : kFloats);
      if (!external) {
        t->set_raw_data(std::string(bytes, '\x3f'));
        continue;
      }
      t->set_data_location(proto::TensorProto::EXTERNAL);
      auto add = [&](const char *k, const std::string &v) {
        auto *e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", "w.bin");
      add("offset", std::to_string(i * bytes));
      add("length", std::to_string(bytes));
    }
    if (external) {
      // A sparse file: holes read as zeros.
      std::FILE *f = std::fopen((dir_ / "w.bin").c_str(), "wb");
      EXPECT_EQ(::ftruncate(fileno(f), (off_t)(2 * bytes)), 0);
      std::fclose(f);
    }
    std::string path = (dir_ / "m.onnx").string();
    std::ofstream(path, std::ios::binary) << mp.SerializeAsString();
    return path;
  }

  void truncate(const std::string &name) {
    ASSERT_EQ(::truncate((dir_ / name).c_str(), 0), 0);
  }

  // Runs `body` in a child; it returns "" on success or what went wrong.
  void inChild(const std::function<std::string()> &body) {
    std::fflush(nullptr);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string why = body();
      if (!why.empty()) std::fprintf(stderr, "child: %s\n", why.c_str());
      std::fflush(nullptr);
      ::_exit(why.empty() ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }

  std::string leftovers() {
    std::string s;
    for (auto &e : fs::directory_iterator(dir_ / "out")) s += e.path().filename().string() + " ";
    return s;
  }

  static std::string expectShrank(const absl::Status &s, const char *what) {
    if (s.ok()) return std::string(what) + ": succeeded on a truncated file";
    if (std::string(s.message()).find("shrank") == std::string::npos)
      return std::string(what) + ": unexpected error: " + std::string(s.message());
    return "";
  }

  // Runs one registered pass; then the reads must be reported.
  // `name` is a pass or a textual pipeline (with options).
  static std::string runPass(Model &m, const char *name) {
    registerAllPasses();
    PassManager pm;
    if (auto s = pm.addPipeline(name); !s.ok()) return std::string(s.message());
    auto r = pm.run(m);
    if (!r.ok() && std::string(r.status().message()).find("shrank") != std::string::npos)
      return "";
    return expectShrank(checkMappedFileReads(), name);
  }

  fs::path dir_;
};

} // namespace

TEST_F(MappedFault, SaveOfATruncatedMappedInput) {
  std::string in = writeModel(false);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    truncate("m.onnx");
    std::string why = expectShrank(saveModelFile(**m, (dir_ / "out/o.onnx").string()), "save");
    if (why.empty() && !leftovers().empty()) why = "left " + leftovers();
    return why;
  });
}

TEST_F(MappedFault, SaveOfExternalDataTruncatedAfterMapping) {
  std::string in = writeModel(true);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    // Map both tensors (the first use), then truncate under the mapping.
    for (Value *v : (*m)->graph().initializers())
      if (auto b = v->initializer()->bytes(); !b.ok()) return std::string(b.status().message());
    truncate("w.bin");
    std::string why = expectShrank(saveModelFile(**m, (dir_ / "out/o.onnx").string()), "save");
    if (why.empty() && !leftovers().empty()) why = "left " + leftovers();
    return why;
  });
}

TEST_F(MappedFault, ExternalDataTruncatedBeforeItIsRead) {
  std::string in = writeModel(true);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    truncate("w.bin");
    // The size re-check before mapping catches it: a clean error, no fault.
    auto b = (*m)->graph().initializers()[0]->initializer()->bytes();
    if (b.ok()) return "bytes() of a truncated file succeeded";
    if (std::string(b.status().message()).find("shrank") == std::string::npos)
      return "unexpected error: " + std::string(b.status().message());
    return expectShrank(saveModelFile(**m, (dir_ / "out/o.onnx").string()), "save");
  });
}

TEST_F(MappedFault, PrintingATruncatedMappedInput) {
  std::string in = writeModel(false, /*packed=*/true);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    truncate("m.onnx");
    PrintOptions po;
    po.lossless = true;
    std::string text = printModelText(**m, po);
    return expectShrank(checkMappedFileReads(), "print");
  });
}

TEST_F(MappedFault, DedupOfATruncatedMappedInput) {
  std::string in = writeModel(false);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    truncate("m.onnx");
    return runPass(**m, "dedup-initializers");
  });
}

TEST_F(MappedFault, FoldingATruncatedMappedInput) {
  std::string in = writeModel(false);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    truncate("m.onnx");
    // Within the size limit, or folding declines the 4.4 MB result before
    // reading its inputs (Note [Size limit before the kernel]).
    return runPass(**m, "fold-constants{size-limit=16MiB growth-limit=16MiB}");
  });
}

TEST_F(MappedFault, UntruncatedFilesReadFine) {
  // The control: the same steps without truncation succeed.
  std::string in = writeModel(true);
  inChild([&]() -> std::string {
    auto m = loadModelFile(in);
    if (!m.ok()) return std::string(m.status().message());
    if (auto s = saveModelFile(**m, (dir_ / "out/o.onnx").string()); !s.ok())
      return std::string(s.message());
    if (auto s = checkMappedFileReads(); !s.ok()) return std::string(s.message());
    return "";
  });
}
