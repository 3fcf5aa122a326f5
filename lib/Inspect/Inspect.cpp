//===- Inspect.cpp - A model's summary as JSON ----------------------------===//
//
// The keys are a contract with scripts: docs/inspect.schema.json describes
// them, test/Surgery/inspect-schema.test validates the output against it,
// and a new key is added there first. Maps are written with sorted keys and
// lists in model order, so two runs on one model give the same bytes.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Inspect/Inspect.h"

#include "InspectSupport.h"

#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Support/LLVMCompat.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace onnxir {

std::map<std::string, int64_t> fusionCensus(const PassStatistics &stats) {
  // The fuse pass's census counters (Note [Fusion census]); the same keys
  // onnx-opt's --summary prints as "fused ops made".
  static const llvm::StringRef kPrefix = "fuse: made ";
  std::map<std::string, int64_t> out;
  for (auto &[key, n] : stats)
    if (n && startsWith(key, kPrefix)) out[key.substr(kPrefix.size())] += n;
  return out;
}

namespace inspect {

std::string u8(llvm::StringRef s) { return llvm::json::fixUTF8(s); }

void writeType(llvm::json::OStream &j, const Type *t) {
  if (!t) {
    j.value(nullptr);
    return;
  }
  j.object([&] {
    const char *kind = "none";
    switch (t->kind()) {
    case Type::Kind::Tensor: kind = "tensor"; break;
    case Type::Kind::SparseTensor: kind = "sparse_tensor"; break;
    case Type::Kind::Sequence: kind = "sequence"; break;
    case Type::Kind::Map: kind = "map"; break;
    case Type::Kind::Optional: kind = "optional"; break;
    case Type::Kind::Opaque: kind = "opaque"; break;
    case Type::Kind::None: kind = "none"; break;
    }
    j.attribute("kind", kind);
    if ((t->kind() == Type::Kind::Tensor || t->kind() == Type::Kind::SparseTensor)) {
      if (t->hasElemType()) j.attribute("elem_type", dataTypeName(t->elemType()).str());
      else j.attribute("elem_type", nullptr);
      if (!t->hasShape()) {
        j.attribute("shape", nullptr);
      } else {
        j.attributeArray("shape", [&] {
          for (const Dim &d : t->dims()) {
            if (d.isKnown()) j.value(d.value);
            else if (d.isSymbolic()) j.value(u8(d.param));
            else j.value(nullptr);
          }
        });
      }
    }
    j.attribute("text", u8(t->str()));
  });
}

} // namespace inspect

namespace {

using namespace inspect;

struct TypeBytes {
  int64_t count = 0;
  uint64_t bytes = 0;
};

// Bytes a tensor's elements take packed (strings: their lengths are not
// counted without reading the data, so 0).
uint64_t tensorBytes(const Tensor &t) {
  auto n = t.numElements();
  if (!n || t.dataType() == DataType::String) return 0;
  return dataTypeStorageBytes(t.dataType(), (uint64_t)*n);
}

/// The main graph's inputs or outputs: name and type (an output's declared
/// type when it has one).
void writeInterface(llvm::json::OStream &j, const Graph &g, bool outputs) {
  j.attributeArray(outputs ? "outputs" : "inputs", [&] {
    unsigned n = outputs ? g.numOutputs() : g.numInputs();
    for (unsigned i = 0; i < n; ++i) {
      Value *v = outputs ? g.output(i) : g.input(i);
      const Type *t = outputs && g.outputInfo(i).type ? g.outputInfo(i).type : v->type();
      j.object([&] {
        j.attribute("name", u8(v->name()));
        writeTypeAttribute(j, "type", t);
      });
    }
  });
}

} // namespace

void inspect::writeTypeAttribute(llvm::json::OStream &j, llvm::StringRef key, const Type *t) {
  j.attributeBegin(key);
  writeType(j, t);
  j.attributeEnd();
}

std::string inspectModelJson(const Model &cm, const InspectOptions &opts) {
  // The walks below only read; Model's walkers are declared non-const.
  Model &m = const_cast<Model &>(cm);
  const Graph &g = m.graph();

  // Counts over the main graph and its nested subgraphs, and separately
  // over function bodies (and theirs).
  std::map<std::string, std::map<std::string, int64_t>> ops;
  int64_t mainNodes = (int64_t)g.numNodes(), graphNodes = 0, functionNodes = 0, subgraphs = 0;
  auto countOps = [&](Graph *sg, int64_t &total) {
    for (Node &n : sg->nodes()) {
      ++ops[n.domain().empty() ? "ai.onnx" : u8(n.domain())][u8(n.opType())];
      ++total;
    }
  };
  m.graph().walkGraphs([&](Graph *sg) {
    countOps(sg, graphNodes);
    if (sg != &m.graph()) ++subgraphs;
  });
  for (auto &f : m.functions())
    f->body().walkGraphs([&](Graph *sg) { countOps(sg, functionNodes); });

  std::map<std::string, TypeBytes> byType;
  int64_t initCount = 0, sparseCount = 0;
  uint64_t initBytes = 0;
  struct External {
    int64_t tensors = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, External> external;
  m.graph().walkGraphs([&](Graph *sg) {
    for (Value *v : sg->initializers()) {
      const Tensor &t = *v->initializer();
      uint64_t b = tensorBytes(t);
      ++initCount;
      initBytes += b;
      TypeBytes &tb = byType[dataTypeName(t.dataType()).empty()
                                 ? "type " + std::to_string(t.dataTypeRaw())
                                 : dataTypeName(t.dataType()).str()];
      ++tb.count;
      tb.bytes += b;
      if (t.isExternal()) {
        const ExternalDataRef &r = t.external();
        External &e = external[u8(r.location)];
        ++e.tensors;
        e.bytes += r.length ? *r.length : r.boundLength ? *r.boundLength : b;
      }
    }
    sparseCount += (int64_t)sg->sparseInitializers().size();
  });

  std::string out;
  llvm::raw_string_ostream os(out);
  {
    llvm::json::OStream j(os, opts.indent);
    j.object([&] {
      j.attribute("format", "onnxir-inspect");
      j.attribute("format_version", 1);
      if (m.irVersion) j.attribute("ir_version", *m.irVersion);
      else j.attribute("ir_version", nullptr);
      j.attributeObject("producer", [&] {
        j.attribute("name", m.producerName ? llvm::json::Value(u8(*m.producerName)) : nullptr);
        j.attribute("version",
                    m.producerVersion ? llvm::json::Value(u8(*m.producerVersion)) : nullptr);
      });
      j.attribute("domain", m.domain ? llvm::json::Value(u8(*m.domain)) : nullptr);
      j.attribute("model_version", m.modelVersion ? llvm::json::Value(*m.modelVersion) : nullptr);
      j.attributeArray("opsets", [&] {
        for (const OpsetImport &o : m.opsetImports)
          j.object([&] {
            j.attribute("domain", o.domain.empty() ? "ai.onnx" : u8(o.domain));
            j.attribute("version", o.version);
          });
      });
      j.attribute("graph_name", u8(g.name));
      writeInterface(j, g, false);
      writeInterface(j, g, true);
      j.attributeObject("nodes", [&] {
        j.attribute("main_graph", mainNodes);
        j.attribute("subgraphs", graphNodes - mainNodes);
        j.attribute("functions", functionNodes);
        j.attribute("total", graphNodes + functionNodes);
        j.attribute("subgraph_count", subgraphs);
      });
      j.attributeObject("ops", [&] {
        // (No structured bindings captured by the lambdas: clang-14.)
        for (auto &domainOps : ops)
          j.attributeObject(domainOps.first, [&] {
            for (auto &[op, n] : domainOps.second) j.attribute(op, n);
          });
      });
      j.attributeObject("initializers", [&] {
        j.attribute("count", initCount);
        j.attribute("bytes", (int64_t)initBytes);
        j.attribute("sparse_count", sparseCount);
        j.attributeObject("by_type", [&] {
          for (auto &typeBytes : byType)
            j.attributeObject(typeBytes.first, [&] {
              j.attribute("count", typeBytes.second.count);
              j.attribute("bytes", (int64_t)typeBytes.second.bytes);
            });
        });
      });
      j.attributeArray("functions", [&] {
        for (auto &f : m.functions())
          j.object([&] {
            j.attribute("domain", u8(f->domain));
            j.attribute("name", u8(f->name));
            j.attribute("overload", u8(f->overload));
            j.attribute("nodes", (int64_t)f->body().numNodes());
          });
      });
      j.attributeArray("external_data", [&] {
        for (auto &file : external)
          j.object([&] {
            j.attribute("location", file.first);
            j.attribute("tensors", file.second.tensors);
            j.attribute("bytes", (int64_t)file.second.bytes);
          });
      });
      j.attributeObject("fusion_census", [&] {
        if (opts.statistics)
          for (auto &[op, n] : fusionCensus(*opts.statistics)) j.attribute(op, n);
      });
    });
  }
  os << "\n";
  return out;
}

} // namespace onnxir
