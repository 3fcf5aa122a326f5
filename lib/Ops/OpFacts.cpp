//===- OpFacts.cpp - What passes ask about an op --------------------------===//
//
// See OpFacts.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/OpFacts.h"

#include "KernelSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/OpContext.h"
#include "onnxir/Ops/OpRegistry.h"
#include "onnxir/Ops/OpSchema.h"

#include "absl/status/status.h"

namespace onnxir {

int64_t firstVersionWhere(llvm::StringRef op, llvm::function_ref<bool(const OpSchema &)> pred,
                          llvm::StringRef domain) {
  for (const OpSchema &s : schemaVersions(domain, op))
    if (pred(s)) return s.sinceVersion();
  return kNoVersion;
}

int64_t firstVersion(llvm::StringRef op, llvm::StringRef domain) {
  return firstVersionWhere(op, [](const OpSchema &) { return true; }, domain);
}

int64_t firstVersionWithInput(llvm::StringRef op, llvm::StringRef input, llvm::StringRef domain) {
  return firstVersionWhere(op, [&](const OpSchema &s) { return s.inputIndex(input) >= 0; }, domain);
}

int64_t firstVersionWithAttribute(llvm::StringRef op, llvm::StringRef attr,
                                  llvm::StringRef domain) {
  return firstVersionWhere(op, [&](const OpSchema &s) { return s.attribute(attr) != nullptr; },
                           domain);
}

int64_t firstVersionWithoutAttribute(llvm::StringRef op, llvm::StringRef attr,
                                     llvm::StringRef domain) {
  return firstVersionWhere(op, [&](const OpSchema &s) { return s.attribute(attr) == nullptr; },
                           domain);
}

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

NodeAxes readAxes(const Node &n, ConstantReader constant) {
  NodeAxes out;
  const OpEntry *e = OpRegistry::get().lookup(n);
  const OpSchema *s = e ? e->schema : nullptr;
  int index = -1;
  if (s) {
    index = s->inputIndex("axes");
  } else if (!n.getAttr("axes")) {
    // No schema at this version: the operand form of the newest one.
    llvm::ArrayRef<OpSchema> vs = schemaVersions(n.domain(), n.opType());
    if (!vs.empty()) index = vs.back().inputIndex("axes");
  }
  if (index < 0) {
    const Attribute *a = n.getAttr("axes");
    if (!a) return out;
    if (a->isReference()) {
      out.kind = NodeAxes::Reference;
      return out;
    }
    out.kind = NodeAxes::Known;
    out.values = a->ints;
    return out;
  }
  out.fromOperand = true;
  out.operand = index;
  if ((unsigned)index >= n.numOperands() || !n.operand(index)) return out;
  Tensor scratch;
  const Tensor *t = constant ? constant(n.operand(index)) : constantOf(n.operand(index), scratch);
  out.kind = NodeAxes::NotConstant;
  if (!t || (t->dataType() != DataType::Int64 && t->dataType() != DataType::Int32)) return out;
  auto vals = t->values<int64_t>();
  if (!vals.ok()) return out;
  out.kind = NodeAxes::Known;
  out.values = std::move(*vals);
  return out;
}

bool axesAsOperand(const OpContext &c) {
  const OpSchema *s = c.schema();
  return s && s->inputIndex("axes") >= 0;
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

ReshapeEntry reshapeEntry(int64_t v, bool allowZero) {
  if (v == 0 && !allowZero) return ReshapeEntry::CopyInput;
  if (v == -1) return ReshapeEntry::Inferred;
  if (v < -1) return ReshapeEntry::Invalid;
  return ReshapeEntry::Dim;
}

bool reshapeAllowsZero(const Node &n) { return NodeContext(n).getInt("allowzero", 0) != 0; }

absl::StatusOr<std::vector<int64_t>> resolveReshape(llvm::ArrayRef<int64_t> in,
                                                    llvm::ArrayRef<int64_t> target,
                                                    bool allowZero) {
  auto invalid = [](const char *why) { return absl::InvalidArgumentError(why); };
  std::vector<int64_t> shape(target.begin(), target.end());
  int64_t inferred = -1, known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    switch (reshapeEntry(shape[k], allowZero)) {
    case ReshapeEntry::CopyInput:
      if (k >= in.size()) return invalid("Reshape 0 past the input rank");
      shape[k] = in[k];
      break;
    case ReshapeEntry::Inferred:
      if (inferred >= 0) return invalid("two -1 in Reshape");
      inferred = (int64_t)k;
      continue;
    case ReshapeEntry::Invalid:
      return invalid("negative dim in Reshape");
    case ReshapeEntry::Dim:
      break;
    }
    if (shape[k] < 0) return invalid("negative dim in Reshape");
    if (shape[k] && known > INT64_MAX / shape[k]) return invalid("Reshape dims overflow");
    known *= shape[k];
  }
  int64_t total = kernels::numElementsOf(in);
  if (total < 0) return invalid("bad dims");
  if (inferred >= 0) {
    if (known == 0 || total % known) return invalid("Reshape cannot infer -1");
    shape[inferred] = total / known;
  } else if (known != total) {
    return invalid("reshape size mismatch");
  }
  return shape;
}

//===----------------------------------------------------------------------===//
// Negative axes
//===----------------------------------------------------------------------===//

bool crossesNegativeAxes(const OpSchema &older, const OpSchema &newer) {
  return older.sinceVersion() < kNegativeAxesSince && newer.sinceVersion() >= kNegativeAxesSince;
}

bool hasNegativeAxes(const Node &n, const OpSchema &s) {
  for (const char *name : {"axis", "axes"})
    if (const Attribute *a = n.getAttr(name); a && !a->isReference()) {
      if (a->kind() == AttrKind::Int && a->i < 0) return true;
      if (a->kind() == AttrKind::Ints)
        for (int64_t v : a->ints)
          if (v < 0) return true;
    }
  int i = s.inputIndex("axes");
  if (i >= 0 && (unsigned)i < n.numOperands() && n.operand(i)) {
    Tensor scratch;
    if (const Tensor *t = constantOf(n.operand(i), scratch))
      if (auto vals = t->values<int64_t>(); vals.ok())
        for (int64_t v : *vals)
          if (v < 0) return true;
  }
  return false;
}

} // namespace onnxir
