//===- rewrite.cpp - Fuse MatMul + Add into Gemm with the onnxir API ------===//
//
// Usage: onnxir-example-rewrite INPUT OUTPUT   (.onnx or .onnxtxt)
//        onnxir-example-rewrite --make-input OUTPUT
//
// Finds `h = Add(MatMul(a, b), c)` (either operand order) where a and b are
// known to be 2-D, c is a 1-D initializer and the MatMul has no other user,
// builds `h = Gemm(a, b, c)` in its place, then removes what died and
// re-sorts with the public pass functions (eliminateDeadCode,
// topologicalSort), verifies and saves.
//
// --make-input builds a small input model in code with the Builder API (two
// pairs that fuse, one in an If branch, and two that must not) and saves it.
//
//===----------------------------------------------------------------------===//
#include <onnxir/IR.h>
#include <onnxir/Passes/Passes.h>
#include <onnxir/Serialize/ModelFile.h>

#include <cstdio>
#include <vector>

using namespace onnxir;

namespace {

/// True if `v` is known to be 2-D (from its type, or its initializer).
bool isMatrix(const Value *v) {
  if (!v) return false;
  if (v->type()) return v->type()->rank() == 2;
  return v->initializer() && v->initializer()->dims().size() == 2;
}

/// True if `v` is a constant 1-D initializer (a bias Gemm can broadcast).
bool isVectorInitializer(const Value *v) {
  return v && v->hasInitializer() && !v->isGraphInput() && v->initializer()->dims().size() == 1;
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
      if (!isVectorInitializer(bias)) continue;
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
      bool hadValueInfo = out->valueInfo() != nullptr;
      out->replaceAllUsesWith(gemm->result(0));
      if (!add->erase().ok()) return -1;
      if (!gemm->result(0)->setName(name).ok()) return -1;
      // A value_info record (how a file keeps an inner value's type) dies
      // with its value: give the Gemm's result one if the Add's had one.
      if (hadValueInfo) g.addValueInfo(gemm->result(0));
      ++count;
      break;
    }
  }
  return count;
}

// Binary or text, by extension or else by content; "-" is standard input.
absl::StatusOr<std::unique_ptr<Model>> load(const std::string &path) {
  return loadModelFile(path);
}

/// A model with MatMul+Add pairs, built with the Builder API:
///   h = Add(MatMul(x, W1), b1)        fuses
///   g = Add(MatMul(h, W2), b2)        does not: b2 is 2-D
///   u = Add(b1, MatMul(h, W2))        does not: the MatMul has a second user
///   y = If(c) { a = Add(MatMul(h, W2), b1) } else { b = Relu(h) }   fuses
std::unique_ptr<Model> makeInput() {
  auto m = std::make_unique<Model>();
  m->irVersion = 8;
  m->opsetImports.push_back({"", 17, ""});
  m->producerName = "onnxir-example-rewrite";
  Graph &g = m->graph();
  g.name = "mlp";
  Context &ctx = m->getContext();
  const Type *mat = ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2, 3});
  Value *x = *g.addInput("x", ctx.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{2, 4}));
  Value *c = *g.addInput("c", ctx.getTensorType(DataType::Bool, llvm::ArrayRef<int64_t>{}));
  Value *w1 = *g.addInitializer("W1", makeFloatTensor({4, 3}, std::vector<float>(12, 0.5f)));
  Value *w2 = *g.addInitializer("W2", makeFloatTensor({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Value *b1 = *g.addInitializer("b1", makeFloatTensor({3}, {1, 2, 3}));
  Value *b2 = *g.addInitializer("b2", makeFloatTensor({1, 3}, {1, 2, 3}));

  Builder b(g);
  auto typed = [&](Node *n, llvm::StringRef name) {
    n->result(0)->setType(mat);
    (void)n->result(0)->setName(name);
    return n->result(0);
  };
  Value *h = typed(b.create("Add", {typed(b.create("MatMul", {x, w1}), "xw1"), b1}), "h");
  Value *gv = typed(b.create("Add", {typed(b.create("MatMul", {h, w2}), "hw2"), b2}), "g");
  Value *shared = typed(b.create("MatMul", {h, w2}), "shared");
  Value *u = typed(b.create("Add", {b1, shared}), "u");
  Value *r = typed(b.create("Relu", {shared}), "r");

  Node *iff = b.create("If", {c});
  iff->setAttr(graphAttr("then_branch", std::make_unique<Graph>(ctx)));
  iff->setAttr(graphAttr("else_branch", std::make_unique<Graph>(ctx)));
  Graph &thenG = *iff->getAttr("then_branch")->graph();
  Graph &elseG = *iff->getAttr("else_branch")->graph();
  thenG.name = "then_branch";
  elseG.name = "else_branch";
  Builder bt(thenG);
  Value *a = typed(bt.create("Add", {typed(bt.create("MatMul", {h, w2}), "t_mm"), b1}), "a");
  thenG.addOutput(a);
  Builder be(elseG);
  elseG.addOutput(typed(be.create("Relu", {h}), "e_relu"));
  Value *y = typed(iff, "y");

  Value *sum = typed(b.create("Sum", {gv, u, r, y}), "out");
  g.addOutput(sum);

  // Types of node results reach the file through value_info records, and
  // those of outputs through the outputs' own declarations.
  g.walkGraphs([](Graph *sg) {
    for (Node &n : sg->nodes())
      for (Value *res : n.results())
        if (res && res->type() && !res->isGraphOutput()) sg->addValueInfo(res);
    for (unsigned i = 0; i < sg->numOutputs(); ++i) {
      sg->outputInfo(i).type = sg->output(i)->type();
      sg->outputInfo(i).hasType = true;
    }
  });
  return m;
}

// Binary, or text for an .onnxtxt name; written whole or not at all.
absl::Status save(const Model &m, const std::string &out) { return saveModelFile(m, out); }

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT OUTPUT\n       %s --make-input OUTPUT\n", argv[0],
                 argv[0]);
    return 2;
  }
  if (std::string(argv[1]) == "--make-input") {
    std::unique_ptr<Model> in = makeInput();
    if (absl::Status s = verify(*in); !s.ok()) {
      std::fprintf(stderr, "error: generated model: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    if (absl::Status s = save(*in, argv[2]); !s.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("wrote %s\n", argv[2]);
    return 0;
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

  absl::Status saved = save(m, argv[2]);
  if (!saved.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(saved.message()).c_str());
    return 1;
  }
  std::printf("fused %d MatMul+Add pair(s) into Gemm, dce removed %lld node(s)\n", fused,
              (long long)dce.nodesRemoved);
  return 0;
}
