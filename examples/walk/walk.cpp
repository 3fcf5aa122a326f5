//===- walk.cpp - Print every node with its input types, as a front end ----===//
//
// Usage: onnxir-example-walk MODEL   (.onnx or .onnxtxt)
//
// Prints each graph's inputs, then each node as
//   name: Op(input: type, ...) -> result: type, ...
// descending into subgraphs (If branches, Loop and Scan bodies) with deeper
// indentation, and into model-local functions. Inputs captured from an
// enclosing graph are marked `^`.
//
//===----------------------------------------------------------------------===//
#include <onnxir/IR.h>
#include <onnxir/Serialize/ModelFile.h>

#include <cstdio>
#include <string>

using namespace onnxir;

namespace {

/// The declared type, or for an initializer without one, its tensor's, or
/// for a graph output without one, what the output's declaration says.
std::string typeOf(const Value *v) {
  if (v->type()) return v->type()->str();
  for (const Use &u : v->uses()) {
    const Node *owner = u.getOwner();
    if (!owner->isReturn()) continue;
    const OutputInfo &info = owner->getGraph()->outputInfo(u.getOperandNo());
    if (info.hasType && info.type) return info.type->str();
  }
  if (const Tensor *t = v->initializer()) {
    std::string s = dataTypeName(t->dataType()).str() + "[";
    for (size_t i = 0; i < t->dims().size(); ++i)
      s += (i ? "," : "") + std::to_string(t->dims()[i]);
    return s + "]";
  }
  return "?";
}

void printGraph(const Graph &g, int depth) {
  std::string pad(depth * 2, ' ');
  std::printf("%sgraph %s (", pad.c_str(), g.name.c_str());
  for (unsigned i = 0; i < g.numInputs(); ++i)
    std::printf("%s%s: %s", i ? ", " : "", g.input(i)->name().str().c_str(),
                typeOf(g.input(i)).c_str());
  std::printf(")\n");
  for (const Node &n : g.nodes()) {
    std::printf("%s  %s: %s%s(", pad.c_str(), n.name().empty() ? "-" : n.name().str().c_str(),
                n.domain().empty() ? "" : (n.domain() + ".").str().c_str(),
                n.opType().str().c_str());
    for (unsigned i = 0; i < n.numOperands(); ++i) {
      const Value *v = n.operand(i);
      if (!v) {
        std::printf("%s<none>", i ? ", " : "");
        continue;
      }
      bool captured = v->getGraph() != &g;
      std::printf("%s%s%s: %s", i ? ", " : "", captured ? "^" : "", v->name().str().c_str(),
                  typeOf(v).c_str());
    }
    std::printf(") -> ");
    for (unsigned i = 0; i < n.numResults(); ++i) {
      const Value *r = n.result(i);
      std::printf("%s%s", i ? ", " : "", r ? r->name().str().c_str() : "<none>");
      if (r) std::printf(": %s", typeOf(r).c_str());
    }
    std::printf("\n");
    for (unsigned a = 0; a < n.numAttributes(); ++a) {
      const Attribute &attr = n.attribute(a);
      for (unsigned k = 0; k < attr.numGraphs(); ++k) {
        std::printf("%s    attribute %s:\n", pad.c_str(), attr.name().c_str());
        printGraph(*attr.graph(k), depth + 3);
      }
    }
  }
  std::printf("%s  return (", pad.c_str());
  for (unsigned i = 0; i < g.numOutputs(); ++i)
    std::printf("%s%s", i ? ", " : "", g.output(i) ? g.output(i)->name().str().c_str() : "");
  std::printf(")\n");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  // Binary or text, by extension or else by content; "-" is standard input.
  absl::StatusOr<std::unique_ptr<Model>> m = loadModelFile(path);
  if (!m.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  std::printf("model: ir_version %lld, %zu function(s)\n", (long long)(*m)->irVersion.value_or(0),
              (*m)->functions().size());
  printGraph((*m)->graph(), 0);
  for (const auto &f : (*m)->functions()) {
    std::printf("function %s\n", f->qualifiedName().c_str());
    printGraph(f->body(), 1);
  }
  return 0;
}
