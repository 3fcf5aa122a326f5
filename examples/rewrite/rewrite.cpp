//===- rewrite.cpp - Fuse MatMul + Add into Gemm with the onnxir API ------===//
//
// Usage: onnxir-example-rewrite INPUT OUTPUT   (.onnx or .onnxtxt)
//
// Finds `h = Add(MatMul(a, b), c)` (either operand order) where a and b are
// known to be 2-D and the MatMul has no other user, builds `h = Gemm(a, b, c)`
// in its place, then removes what died and re-sorts with the public pass
// functions (eliminateDeadCode, topologicalSort), verifies and saves.
//
//===----------------------------------------------------------------------===//
#include <onnxir/IR.h>
#include <onnxir/Passes/Passes.h>
#include <onnxir/Serialize/ProtoIO.h>
#include <onnxir/Serialize/Text.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

using namespace onnxir;

namespace {

/// True if `v` is known to be 2-D (from its type, or its initializer).
bool isMatrix(const Value *v) {
  if (!v) return false;
  if (v->type()) return v->type()->rank() == 2;
  return v->initializer() && v->initializer()->dims().size() == 2;
}

/// The MatMul feeding operand `i` of `add`, if the pair can become a Gemm.
Node *fusableMatMul(Node &add, unsigned i) {
  Value *v = add.operand(i);
  Node *mm = v ? v->definingNode() : nullptr;
  if (!mm || !mm->is("MatMul") || mm->getGraph() != add.getGraph() || !v->hasOneUse())
    return nullptr;
  if (!isMatrix(mm->operand(0)) || !isMatrix(mm->operand(1))) return nullptr;
  return mm;
}

/// Rewrites every match in `g` and its subgraphs; returns how many.
int fuse(Graph &g) {
  std::vector<Node *> adds;
  for (Node &n : g.nodes())
    if (n.is("Add") && n.numOperands() == 2) adds.push_back(&n);
  int count = 0;
  for (Node &n : g.nodes())
    for (Graph *sg : n.subgraphs()) count += fuse(*sg);
  for (Node *add : adds) {
    for (unsigned i = 0; i < 2; ++i) {
      Node *mm = fusableMatMul(*add, i);
      if (!mm) continue;
      Value *bias = add->operand(1 - i);
      // Build: Gemm(a, b, c) right before the Add.
      Builder b(g);
      b.setInsertionPoint(add);
      Node *gemm = b.create("Gemm", {mm->operand(0), mm->operand(1), bias});
      gemm->setName(add->name());
      gemm->docString = add->docString;
      gemm->metadata = add->metadata;
      Value *out = add->result(0);
      gemm->result(0)->setType(out->type());
      // Replace: users (and graph outputs) now read the Gemm; the Gemm takes
      // the Add's name once the Add is gone, so the interface is unchanged.
      std::string name = out->name().str();
      out->replaceAllUsesWith(gemm->result(0));
      if (!add->erase().ok()) return -1;
      if (!gemm->result(0)->setName(name).ok()) return -1;
      ++count;
      break;
    }
  }
  return count;
}

absl::StatusOr<std::unique_ptr<Model>> load(const std::string &path) {
  if (llvm::StringRef(path).endswith(".onnxtxt")) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return absl::NotFoundError(path + ": cannot read");
    return parseModelText(ss.str(), path);
  }
  return loadModel(path);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT OUTPUT\n", argv[0]);
    return 2;
  }
  auto model = load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(model.status().message()).c_str());
    return 1;
  }
  Model &m = **model;

  // Match, build, replace.
  int fused = fuse(m.graph());
  if (fused < 0) return 1;

  // Clean up with the passes' public functions: the MatMuls are dead now.
  DCEStatistics dce;
  if (auto r = eliminateDeadCode(m, {}, &dce); !r.ok()) return 1;
  if (auto r = topologicalSort(m); !r.ok()) return 1;
  if (absl::Status s = verify(m); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return 1;
  }

  std::string out = argv[2];
  absl::Status saved = absl::OkStatus();
  if (llvm::StringRef(out).endswith(".onnxtxt")) {
    std::ofstream(out) << printModelText(m);
  } else {
    saved = saveModel(m, out);
  }
  if (!saved.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(saved.message()).c_str());
    return 1;
  }
  std::printf("fused %d MatMul+Add pair(s) into Gemm; dce removed %lld node(s)\n", fused,
              (long long)dce.nodesRemoved);
  return 0;
}
