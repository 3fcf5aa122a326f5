//===- Compare.cpp - Random inputs and the comparison of two runs ---------===//
#include "onnxir/Eval/Compare.h"

#include "onnxir/IR/Graph.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <set>

namespace onnxir {

namespace {

absl::StatusOr<Tensor> randomInput(const Value &v, const std::map<std::string, int64_t> &bind,
                                   std::mt19937_64 &rng, std::vector<std::string> *notes) {
  const Type *t = v.type();
  std::string name = v.name().str();
  if (!t || !t->isTensor() || !t->hasElemType() || !t->hasShape())
    return absl::InvalidArgumentError(
        absl::StrCat("input \"", name, "\": random values need a tensor type with a shape"));
  std::vector<int64_t> dims;
  for (const Dim &d : t->dims()) {
    if (d.isKnown()) {
      dims.push_back(d.value);
    } else if (d.isSymbolic() && bind.count(d.param.str())) {
      dims.push_back(bind.at(d.param.str()));
    } else {
      if (notes)
        notes->push_back(absl::StrCat("input \"", name, "\": dim ",
                                      d.isSymbolic() ? d.param.str() : std::string("?"),
                                      " taken as 1"));
      dims.push_back(1);
    }
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  DataType dt = t->elemType();
  Tensor out;
  out.setDataType(dt);
  out.setDims(dims);
  std::string bytes;
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(0, 9);
  auto put = [&](auto x) { bytes.append(reinterpret_cast<const char *>(&x), sizeof(x)); };
  for (int64_t k = 0; k < n; ++k) {
    switch (dt) {
    case DataType::Float: put((float)real(rng)); break;
    case DataType::Double: put(real(rng)); break;
    case DataType::Float16: put(floatToHalf((float)real(rng))); break;
    case DataType::Bool: put((uint8_t)(small(rng) & 1)); break;
    case DataType::Int8: put((int8_t)small(rng)); break;
    case DataType::Uint8: put((uint8_t)small(rng)); break;
    case DataType::Int16: put((int16_t)small(rng)); break;
    case DataType::Uint16: put((uint16_t)small(rng)); break;
    case DataType::Int32: put((int32_t)small(rng)); break;
    case DataType::Uint32: put((uint32_t)small(rng)); break;
    case DataType::Int64: put((int64_t)small(rng)); break;
    case DataType::Uint64: put((uint64_t)small(rng)); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "input \"", name, "\": no random values of element type ", dataTypeName(dt).str()));
    }
  }
  out.setRaw(std::move(bytes));
  return out;
}

} // namespace

absl::StatusOr<std::map<std::string, Tensor>>
randomInputs(const Model &m, const std::map<std::string, Tensor> &given,
             const std::map<std::string, int64_t> &bind, std::mt19937_64 &rng,
             std::vector<std::string> *notes) {
  std::map<std::string, Tensor> out;
  for (Value *v : m.graph().inputs()) {
    std::string name = v->name().str();
    if (given.count(name) || v->hasInitializer()) continue;
    auto t = randomInput(*v, bind, rng, notes);
    if (!t.ok()) return t.status();
    out[name] = std::move(*t);
  }
  return out;
}

namespace {

/// An output as its tensors in order and the shape of its structure (a
/// tensor: ""; `seq(3)`, `optional(1)`, nested alike): two outputs are
/// compared tensor by tensor when their structures agree.
struct Flat {
  std::string shape;
  std::vector<const Tensor *> tensors;
};

void flatten(const EvalValue &v, Flat &f) {
  switch (v.kind) {
  case EvalValue::Kind::Tensor:
    f.tensors.push_back(&v.tensor);
    f.shape += "t";
    return;
  case EvalValue::Kind::Sequence: f.shape += absl::StrCat("seq", v.elements.size(), "("); break;
  case EvalValue::Kind::Optional: f.shape += absl::StrCat("opt", v.elements.size(), "("); break;
  case EvalValue::Kind::Map: f.shape += "map("; break; // keys, then values
  }
  for (const EvalValue &e : v.elements) flatten(e, f);
  f.shape += ")";
}

/// The output `name` of `r` flattened; false if `r` has none.
bool flatOutput(const EvalResult &r, const std::string &name, Flat &f) {
  if (auto it = r.outputs.find(name); it != r.outputs.end()) {
    f.shape = "t";
    f.tensors.push_back(&it->second);
    return true;
  }
  if (auto it = r.otherOutputs.find(name); it != r.otherOutputs.end()) {
    flatten(it->second, f);
    return true;
  }
  return false;
}

/// Compares tensor `a` with reference `b` into `d` (Note [Comparing outputs]).
absl::Status compareTensor(const Tensor &a, const Tensor &b, double rtol, double atol,
                           OutputDiff &d) {
  const std::string &name = d.name;
  if (a.dataType() == DataType::String) {
    d.kind = OutputDiff::Kind::Strings;
    auto sa = a.strings(), sb = b.strings();
    if (!sa.ok()) return absl::InvalidArgumentError(absl::StrCat("output \"", name, "\": ", sa.status().message()));
    if (!sb.ok()) return absl::InvalidArgumentError(absl::StrCat("output \"", name, "\": ", sb.status().message()));
    d.ok &= *sa == *sb;
    return absl::OkStatus();
  }
  auto va = a.values<double>(), vb = b.values<double>();
  if (!va.ok()) return absl::InvalidArgumentError(absl::StrCat("output \"", name, "\": ", va.status().message()));
  if (!vb.ok()) return absl::InvalidArgumentError(absl::StrCat("output \"", name, "\": ", vb.status().message()));
  for (size_t k = 0; k < va->size() && k < vb->size(); ++k) {
    double x = (*va)[k], y = (*vb)[k];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) d.ok = false, d.maxAbs = d.maxRel = INFINITY;
      continue;
    }
    if (x == y) continue;
    double diff = std::fabs(x - y);
    d.maxAbs = std::max(d.maxAbs, diff);
    d.maxRel = std::max(d.maxRel, y != 0 ? diff / std::fabs(y) : INFINITY);
    if (!(diff <= atol + rtol * std::fabs(y))) d.ok = false;
  }
  return absl::OkStatus();
}

} // namespace

std::string describeOutput(const EvalResult &r, const std::string &name) {
  if (auto it = r.outputs.find(name); it != r.outputs.end()) return EvalValue(it->second).str();
  if (auto it = r.otherOutputs.find(name); it != r.otherOutputs.end()) return it->second.str();
  return "none";
}

absl::StatusOr<std::vector<OutputDiff>> compareOutputs(const EvalResult &ra, const EvalResult &rb,
                                                       double rtol, double atol) {
  std::set<std::string> namesA, namesB;
  for (auto &e : ra.outputs) namesA.insert(e.first);
  for (auto &e : ra.otherOutputs) namesA.insert(e.first);
  for (auto &e : rb.outputs) namesB.insert(e.first);
  for (auto &e : rb.otherOutputs) namesB.insert(e.first);
  std::vector<OutputDiff> out;
  for (const std::string &name : namesA) {
    OutputDiff d;
    d.name = name;
    Flat a, b;
    flatOutput(ra, name, a);
    if (!flatOutput(rb, name, b)) {
      d.kind = OutputDiff::Kind::MissingInB;
      d.ok = false;
      out.push_back(d);
      continue;
    }
    bool same = a.shape == b.shape;
    for (size_t k = 0; same && k < a.tensors.size(); ++k)
      same = a.tensors[k]->dataType() == b.tensors[k]->dataType() &&
             a.tensors[k]->dims() == b.tensors[k]->dims();
    if (!same) {
      d.kind = OutputDiff::Kind::TypeMismatch;
      d.ok = false;
    } else if (ra.nondeterministic.count(name) || rb.nondeterministic.count(name)) {
      d.kind = OutputDiff::Kind::Nondeterministic;
    } else {
      for (size_t k = 0; k < a.tensors.size(); ++k)
        if (absl::Status s = compareTensor(*a.tensors[k], *b.tensors[k], rtol, atol, d); !s.ok())
          return s;
    }
    out.push_back(d);
  }
  for (const std::string &name : namesB)
    if (!namesA.count(name)) {
      OutputDiff d;
      d.name = name;
      d.kind = OutputDiff::Kind::MissingInA;
      d.ok = false;
      out.push_back(d);
    }
  return out;
}

} // namespace onnxir
