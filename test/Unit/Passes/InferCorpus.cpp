//===- InferCorpus.cpp - Run infer-shapes over many models, print JSON ----===//
//
// A test driver (one process for a whole corpus):
//
//   onnxir-infer-corpus --strip MODEL...   strip value_info, node result and
//       graph output types, infer, and print one JSON line per model with the
//       inferred types of the main graph's outputs;
//   onnxir-infer-corpus --values MODEL...  infer and print every value of
//       the main graph (name, type) and how many tensor values of any graph
//       lack an element type or a rank.
//
// Types print as {"kind":"tensor","elem":1,"shape":[3,"N",null]} (null: an
// unknown dim, a string: a symbol or expression; "shape":null: no rank).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Model.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Serialize/ProtoIO.h"

#include <cstdio>
#include <string>

using namespace onnxir;

namespace {

std::string jsonString(llvm::StringRef s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if ((unsigned char)c < 0x20) {
      char b[8];
      snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o + "\"";
}

std::string typeJson(const Type *t) {
  if (!t) return "null";
  switch (t->kind()) {
  case Type::Kind::Tensor:
  case Type::Kind::SparseTensor: {
    std::string s = "{\"kind\":\"tensor\",\"elem\":";
    s += t->hasElemType() && t->elemTypeRaw() ? std::to_string(t->elemTypeRaw()) : "null";
    s += ",\"shape\":";
    if (!t->hasShape()) return s + "null}";
    s += "[";
    for (size_t i = 0; i < t->dims().size(); ++i) {
      const Dim &d = t->dims()[i];
      if (i) s += ",";
      if (d.isKnown()) s += std::to_string(d.value);
      else if (d.isSymbolic()) s += jsonString(d.param);
      else s += "null";
    }
    return s + "]}";
  }
  case Type::Kind::Sequence:
    return "{\"kind\":\"seq\",\"inner\":" + typeJson(t->elementType()) + "}";
  case Type::Kind::Optional:
    return "{\"kind\":\"optional\",\"inner\":" + typeJson(t->elementType()) + "}";
  case Type::Kind::Map:
    return "{\"kind\":\"map\"}";
  default:
    return "{\"kind\":\"other\"}";
  }
}

void strip(Model &m) {
  m.walkGraphs([](Graph *g) {
    if (g->parentFunction()) return;
    g->removeValueInfoIf([](ValueInfoRecord &) { return true; });
    for (Node &n : g->nodes())
      for (Value *v : n.results())
        if (v) v->setType(nullptr);
    for (unsigned i = 0; i < g->numOutputs(); ++i) {
      OutputInfo &oi = g->outputInfo(i);
      oi.type = nullptr;
      oi.hasType = false;
      if (Value *v = g->output(i); v && v->definingNode()) v->setType(nullptr);
    }
  });
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s --strip|--values MODEL...\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string path = argv[i];
    auto mr = loadModel(path);
    if (!mr.ok()) {
      printf("{\"model\":%s,\"error\":%s}\n", jsonString(path).c_str(),
             jsonString(std::string(mr.status().message())).c_str());
      continue;
    }
    Model &m = **mr;
    if (mode == "--strip") strip(m);
    ShapeInferenceStatistics st;
    std::vector<std::string> warnings;
    auto r = inferShapes(m, {}, &st, &warnings);
    std::string out = "{\"model\":" + jsonString(path);
    if (!r.ok()) out += ",\"error\":" + jsonString(std::string(r.status().message()));
    out += ",\"contradictions\":" + std::to_string(st.contradictions);
    out += ",\"warnings\":[";
    for (size_t k = 0; k < warnings.size(); ++k) out += (k ? "," : "") + jsonString(warnings[k]);
    out += "]";
    if (mode == "--strip") {
      out += ",\"outputs\":[";
      Graph &g = m.graph();
      for (unsigned k = 0; k < g.numOutputs(); ++k) {
        const OutputInfo &oi = g.outputInfo(k);
        out += (k ? "," : "") + typeJson(oi.hasType ? oi.type : nullptr);
      }
      out += "]";
    } else {
      int64_t noElem = 0, noRank = 0, total = 0;
      std::string vals;
      m.walkGraphs([&](Graph *g) {
        if (g->parentFunction()) return;
        for (Node &n : g->nodes())
          for (Value *v : n.results()) {
            if (!v) continue;
            const Type *t = v->type();
            if (t && !t->isTensor() && t->kind() != Type::Kind::SparseTensor) continue;
            ++total;
            if (!t || !t->hasElemType() || !t->elemTypeRaw()) ++noElem;
            if (!t || !t->hasShape()) ++noRank;
            if (g == &m.graph())
              vals += (vals.empty() ? "" : ",") + std::string("[") + jsonString(v->name()) + "," +
                      typeJson(t) + "]";
          }
      });
      out += ",\"tensorValues\":" + std::to_string(total) + ",\"noElem\":" + std::to_string(noElem) +
             ",\"noRank\":" + std::to_string(noRank) + ",\"values\":[" + vals + "]";
    }
    printf("%s}\n", out.c_str());
  }
  return 0;
}
