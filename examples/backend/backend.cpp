//===- backend.cpp - A backend front-end on its own LLVM -------------------===//
//
// Usage: onnxir-example-backend [--print] MODEL...
//
// What a compiler built on LLVM does with onnxir: loads each model, runs
// onnxir's -O2 (through the pipeline API, PipelineOptions.h), then lowers the
// main graph into an LLVM module, one function per node:
//
//   define void @node3.Conv(ptr %X, ptr %W, ptr %B, ptr %Y) #0 {
//     call void @onnxir.Conv(ptr %X, ptr %W, ptr %B, ptr %Y)
//     ret void
//   }
//   attributes #0 = { "onnxir.op"="Conv" "onnxir.types"="float[1,3,224,224] ..." }
//
// and checks the module with LLVM's verifier. onnxir's IR and LLVM's IR live
// side by side in one process, so onnxir must be built with the LLVM this
// program uses (-DLLVM_DIR; its CMake package refuses another one). Prints
// one line per model; exits 1 if any model fails.
//
//===----------------------------------------------------------------------===//
#include <onnxir/IR.h>
#include <onnxir/Passes/Passes.h>
#include <onnxir/Passes/PipelineOptions.h>
#include <onnxir/Serialize/ModelFile.h>

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

/// The types of a node's operands and results, as onnxir knows them ("?"
/// when unknown, "-" for an absent optional input).
std::string typesOf(const onnxir::Node &n) {
  std::string s;
  auto add = [&](const onnxir::Value *v) {
    if (!s.empty()) s += ' ';
    s += !v ? "-" : v->type() ? v->type()->str() : "?";
  };
  for (unsigned i = 0; i < n.numOperands(); ++i) add(n.operand(i));
  s += " ->";
  for (unsigned i = 0; i < n.numResults(); ++i) add(n.result(i));
  return s;
}

/// One LLVM function per node of `g`: its operands and results are pointer
/// parameters, its body calls the kernel `onnxir.<Op>`. Returns how many.
unsigned lowerGraph(const onnxir::Graph &g, llvm::Module &mod) {
  llvm::LLVMContext &ctx = mod.getContext();
  llvm::Type *ptr = llvm::PointerType::get(llvm::Type::getInt8Ty(ctx), 0);
  llvm::Type *voidTy = llvm::Type::getVoidTy(ctx);
  unsigned index = 0;
  for (const onnxir::Node &n : g.nodes()) {
    std::vector<llvm::Type *> params(n.numOperands() + n.numResults(), ptr);
    auto *fnTy = llvm::FunctionType::get(voidTy, params, /*isVarArg=*/false);
    std::string op = n.opType().str();
    if (!n.domain().empty()) op = n.domain().str() + "." + op;
    llvm::FunctionCallee kernel = mod.getOrInsertFunction("onnxir." + op, fnTy);
    auto *fn = llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage,
                                      "node" + std::to_string(index++) + "." + op, mod);
    fn->addFnAttr("onnxir.op", op);
    fn->addFnAttr("onnxir.types", typesOf(n));
    std::vector<llvm::Value *> args;
    for (llvm::Argument &a : fn->args()) {
      unsigned i = a.getArgNo();
      const onnxir::Value *v = i < n.numOperands() ? n.operand(i) : n.result(i - n.numOperands());
      if (v) a.setName(v->name().str());
      args.push_back(&a);
    }
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
    b.CreateCall(kernel, args);
    b.CreateRetVoid();
  }
  return index;
}

bool run(const std::string &path, bool print) {
  auto model = onnxir::loadModelFile(path);
  if (!model.ok()) {
    llvm::errs() << path << ": " << std::string(model.status().message()) << "\n";
    return false;
  }
  onnxir::Model &m = **model;
  size_t before = m.graph().numNodes();
  onnxir::PipelineOptions o;
  o.name = path;
  auto r = onnxir::runPipeline(m, "O2", o);
  if (!r.ok()) {
    llvm::errs() << std::string(r.status().message()) << "\n";
    return false;
  }
  llvm::LLVMContext ctx;
  llvm::Module mod(m.graph().name.empty() ? "model" : m.graph().name, ctx);
  unsigned fns = lowerGraph(m.graph(), mod);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(mod, &os)) {
    llvm::errs() << path << ": the LLVM module is invalid:\n" << os.str();
    return false;
  }
  if (print) mod.print(llvm::outs(), nullptr);
  llvm::outs() << path << ": " << before << " nodes, " << m.graph().numNodes()
               << " after -O2, " << fns << " LLVM functions, module verified\n";
  return fns == m.graph().numNodes();
}

} // namespace

int main(int argc, char **argv) {
  onnxir::registerAllPasses();
  bool print = false, ok = true;
  int models = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--print")) {
      print = true;
      continue;
    }
    ++models;
    ok &= run(argv[i], print);
  }
  if (!models) {
    llvm::errs() << "usage: onnxir-example-backend [--print] MODEL...\n";
    return 2;
  }
  return ok ? 0 : 1;
}
