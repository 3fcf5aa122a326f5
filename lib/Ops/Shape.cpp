//===- Shape.cpp - Shape, Reshape and friends, Constant -------------------===//
//
// Shape: Shape Size Reshape Flatten Squeeze Unsqueeze Expand Identity, and the
// generators Constant ConstantOfShape Range EyeLike; each in its attribute and
// input forms across opset versions. The helpers several ops share come
// first; then one section per op, in this order: its type and shape rule, its
// kernel, its version adapters and its registration (registerShapeOps at the
// end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/Node.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpFacts.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <limits>
#include <cmath>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// The product of dims [from, to) of `d` (Size, Reshape's -1, Flatten).
const DimExpr *product(Context &ctx, const Dims &d, size_t from, size_t to) {
  const DimExpr *p = dimConst(ctx, 1);
  for (size_t i = from; i < to && i < d.size(); ++i) p = dimMul(ctx, p, d[i]);
  return p;
}

/// Input `t` as the result, without its name (Identity, Constant).
StatusOr<std::vector<Tensor>> copyOut(const Tensor &t) {
  std::vector<Tensor> r;
  r.push_back(t);
  r.back().setName("");
  return r;
}

/// A reshaped copy of input 0 (no data movement).
StatusOr<std::vector<Tensor>> reshapeTo(const KernelCall &c, std::vector<int64_t> dims) {
  const Tensor *in = c.input(0);
  if (numElementsOf(dims) != numElementsOf(in->dims())) return invalid("reshape size mismatch");
  std::vector<Tensor> r;
  r.push_back(*in);
  r.back().setName("");
  r.back().setDims(std::move(dims));
  return r;
}

//===--- Shape ---===//

void shapeRule(InferCtx &c) {
  auto s = c.inShape(0);
  if (!s) return c.setTensor(0, kInt64, Dims{nullptr});
  int64_t r = s->size();
  int64_t start = c.getInt("start", 0), end = c.getInt("end", r);
  auto clampAxis = [&](int64_t a) {
    if (a < 0) a += r;
    return std::max<int64_t>(0, std::min(a, r));
  };
  start = clampAxis(start);
  end = clampAxis(end);
  Dims data;
  for (int64_t i = start; i < end; ++i) data.push_back((*s)[i]);
  c.setTensor(0, kInt64, Dims{c.c((int64_t)data.size())});
  c.setOutData(0, std::move(data));
}

Arr int64Vec(std::vector<int64_t> v) {
  Arr a;
  a.dt = DataType::Int64;
  a.dims = {(int64_t)v.size()};
  a.i = std::move(v);
  return a;
}

/// Shape of a tensor with opset-15 start/end; shared with the pass, which
/// folds Shape from static types through a fake input.
StatusOr<std::vector<Tensor>> kShape(const KernelCall &c) {
  if (!c.input(0)) return invalid("Shape without input");
  std::vector<int64_t> dims = c.input(0)->dims();
  int64_t r = (int64_t)dims.size();
  int64_t start = c.getInt("start", 0), end = c.getInt("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> out;
  for (int64_t k = start; k < end; ++k) out.push_back(dims[k]);
  return one(int64Vec(out));
}

// Shape-15 added start and end: the older form is the whole shape, so a
// slice of it becomes Shape -> Slice (Slice-10 and later: the target must be
// 10 or more).
absl::Status shapeDown15(Node &n, AdapterContext &c) {
  auto start = adapters::intAttrOr(n, "start", 0);
  if (!start.ok()) return start.status();
  auto end = adapters::intAttrOr(n, "end", std::numeric_limits<int64_t>::max());
  if (!end.ok()) return end.status();
  int64_t r = adapters::operandRank(n, 0);
  bool whole = (*start == 0 || (r >= 0 && *start <= -r)) &&
               (!n.getAttr("end") || (r >= 0 && *end >= r));
  if (!whole && c.target < 10)
    return absl::FailedPreconditionError(absl::StrCat(
        "start/end select part of the shape, which needs a Slice of its operand form (opset 10 "
        "or later; the target is ", c.target, ")"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("start");
  n.removeAttr("end");
  if (whole) return absl::OkStatus();
  auto ints = [&](llvm::StringRef base, int64_t v) {
    Tensor t;
    t.setDataType(DataType::Int64);
    t.setDims({1});
    t.setTyped(Tensor::TypedField::Int64);
    t.int64Data.mut() = {v};
    return c.constant(n, base, std::move(t));
  };
  Value *s0 = ints("start", *start), *e0 = ints("end", *end);
  adapters::wrapResult(n, "Slice", {s0, e0});
  return absl::OkStatus();
}

void registerShape(OpRegistrar &r) {
  r["Shape"].infer(shapeRule).kernel(kShape).shapeOnly();
  r["Shape"].since(15).upgrade(adapters::noChange).downgrade(shapeDown15);
}

//===--- Size ---===//

void sizeRule(InferCtx &c) {
  c.setTensor(0, kInt64, Dims{});
  if (auto s = c.inShape(0)) c.setOutData(0, Dims{product(c.ctx, *s, 0, s->size())});
}

Arr int64Scalar(int64_t v) {
  Arr a;
  a.dt = DataType::Int64;
  a.i = {v};
  return a;
}

StatusOr<std::vector<Tensor>> kSize(const KernelCall &c) {
  if (!c.input(0)) return invalid("Size without input");
  int64_t n = numElementsOf(c.input(0)->dims());
  if (n < 0) return invalid("bad dims");
  return one(int64Scalar(n));
}

void registerSize(OpRegistrar &r) {
  r["Size"].infer(sizeRule).kernel(kSize).shapeOnly();
}

//===--- Reshape ---===//

void reshapeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  std::optional<Dims> target;
  if (c.opset < 5) {
    if (auto sh = c.getInts("shape")) {
      target = Dims{};
      for (int64_t v : *sh) target->push_back(c.c(v));
    }
  } else if (const Dims *d = c.inData(1)) {
    target = *d;
  }
  if (!target) {
    auto ss = c.inShape(1);
    if (auto k = ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
      return c.setTensor(0, el, Dims(*k, nullptr));
    return c.setTensor(0, el, std::nullopt);
  }
  auto in = c.inShape(0);
  bool allowZero = c.getInt("allowzero", 0) != 0;
  Dims out;
  int64_t minusOne = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const DimExpr *d = (*target)[i];
    switch (d && d->isConstant() ? reshapeEntry(d->value(), allowZero) : ReshapeEntry::Dim) {
    case ReshapeEntry::CopyInput:
      d = in && i < in->size() ? (*in)[i] : nullptr;
      break;
    case ReshapeEntry::Inferred:
      if (minusOne >= 0) return;
      minusOne = i;
      d = nullptr;
      break;
    case ReshapeEntry::Invalid:
      return;
    case ReshapeEntry::Dim:
      break;
    }
    out.push_back(d);
  }
  // Known static sizes that cannot hold the same number of elements.
  if (in) {
    // Products of static dims, -1 once one is not static or grows too big.
    auto product = [](const Dims &ds, int64_t skip) -> __int128 {
      __int128 p = 1;
      for (size_t i = 0; i < ds.size(); ++i) {
        if ((int64_t)i == skip) continue;
        auto v = staticDim(ds[i]);
        if (!v || *v < 0) return -1;
        p *= *v;
        if (p > ((__int128)1 << 62)) return -1;
      }
      return p;
    };
    __int128 total = product(*in, -1), held = product(out, minusOne);
    if (total >= 0 && held >= 0 &&
        (minusOne < 0 ? total != held : held != 0 && total % held != 0)) {
      std::string shape;
      for (size_t i = 0; i < target->size(); ++i) {
        auto v = staticDim((*target)[i]);
        shape += (i ? "," : "") + (v ? std::to_string(*v) : std::string("?"));
      }
      c.disagree("data " + typeStr(c, 0) + " has " + std::to_string((int64_t)total) +
                 " elements, which shape [" + shape + "] cannot hold (" +
                 (minusOne < 0 ? "it has " + std::to_string((int64_t)held) + " elements"
                               : std::to_string((int64_t)total) + " is not a multiple of the " +
                                     std::to_string((int64_t)held) + " the other dims hold") +
                 ")");
    }
  }
  if (minusOne >= 0 && in) {
    const DimExpr *total = product(c.ctx, *in, 0, in->size());
    const DimExpr *rest = c.c(1);
    for (size_t i = 0; i < out.size(); ++i)
      if ((int64_t)i != minusOne) rest = dimMul(c.ctx, rest, out[i]);
    if (total && rest && !(rest->isConstant() && rest->value() == 0))
      out[minusOne] = dimFloorDiv(c.ctx, total, rest);
  }
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

StatusOr<std::vector<Tensor>> kReshape(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("Reshape without data");
  std::vector<int64_t> shape;
  if (c.opset > 0 && c.opset < 5) {
    auto s = c.getInts("shape");
    if (!s) return invalid("Reshape-1 without shape");
    shape = *s;
  } else {
    if (!c.input(1)) return invalid("Reshape without shape");
    auto s = intValues(*c.input(1));
    if (!s.ok()) return s.status();
    shape = *s;
  }
  auto out = resolveReshape(in->dims(), shape, c.getInt("allowzero", 0) != 0);
  if (!out.ok()) return out.status();
  return reshapeTo(c, *out);
}

// Reshape-5: the attribute `shape` became operand #1 (same meaning of 0 and
// -1); consumed_inputs went too (Note [consumed_inputs]).
absl::Status reshapeUp5(Node &n, AdapterContext &c) {
  if (!n.getAttr("shape") && (n.numOperands() < 2 || !n.operand(1)))
    return absl::FailedPreconditionError("no attribute 'shape'");
  if (absl::Status s = adapters::intsAttrToOperand(n, c, "shape", 1, /*dropEmpty=*/false);
      !s.ok())
    return s;
  return adapters::dropConsumedInputs(n, c);
}
absl::Status reshapeDown5(Node &n, AdapterContext &c) {
  return adapters::operandToIntsAttr(n, c, 1, "shape", /*dropEmpty=*/false);
}

void registerReshape(OpRegistrar &r) {
  r["Reshape"].since(5).upgrade(reshapeUp5).downgrade(reshapeDown5);
  r["Reshape"].infer(reshapeRule).kernel(kReshape).reshapes();
  r["Reshape"].since(14).upgrade(adapters::noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "Reshape", {{"allowzero", AttrKind::Int, 0}});
  });
}

//===--- Flatten ---===//

void flattenRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, Dims{nullptr, nullptr});
  int64_t r = in->size();
  int64_t ax = c.getInt("axis", 1);
  if (ax < 0) ax += r;
  if (ax < 0 || ax > r) return;
  c.setTensor(0, el, Dims{product(c.ctx, *in, 0, ax), product(c.ctx, *in, ax, r)});
}

StatusOr<std::vector<Tensor>> kFlatten(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("Flatten without input");
  int64_t r = (int64_t)in->dims().size();
  int64_t axis = c.getInt("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return invalid("Flatten axis");
  std::vector<int64_t> head(in->dims().begin(), in->dims().begin() + axis),
      tail(in->dims().begin() + axis, in->dims().end());
  int64_t a = numElementsOf(head), b = numElementsOf(tail);
  if (a < 0 || b < 0) return invalid("Flatten dims overflow");
  return reshapeTo(c, {a, b});
}

void registerFlatten(OpRegistrar &r) {
  r["Flatten"].infer(flattenRule).kernel(kFlatten).reshapes();
}

//===--- Squeeze, Unsqueeze ---===//

void squeezeRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  std::optional<std::vector<int64_t>> axes;
  bool operand = axesAsOperand(c); // Note [Axes: attribute or operand]
  bool axesGiven = operand ? c.hasInput(1) : c.getInts("axes").has_value();
  if (axesGiven) {
    axes = intsFrom(c, operand, 1, "axes");
    if (!axes) return c.setTensor(0, el, std::nullopt);
  }
  if (!s) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size();
  std::vector<bool> drop(r, false);
  if (axes) {
    for (int64_t a : *axes) {
      auto n = normAxis(a, r);
      if (!n) return;
      drop[*n] = true;
    }
  } else {
    for (int64_t i = 0; i < r; ++i) {
      const DimExpr *d = (*s)[i];
      if (!d || !d->isConstant()) return c.setTensor(0, el, std::nullopt);
      drop[i] = d->value() == 1;
    }
  }
  Dims out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back((*s)[i]);
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

void unsqueezeRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  auto axes = intsFrom(c, axesAsOperand(c), 1, "axes");
  if (!s || !axes) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size() + axes->size();
  std::vector<bool> ins(r, false);
  for (int64_t a : *axes) {
    auto n = normAxis(a, r);
    if (!n || ins[*n]) return;
    ins[*n] = true;
  }
  Dims out;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(ins[i] ? c.c(1) : (*s)[j++]);
  c.setTensor(0, el, out);
  if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
}

/// Axes from the attribute (old opsets) or input #1 (opset >= `inputSince`).
StatusOr<std::optional<std::vector<int64_t>>> axesOf(const KernelCall &c, int64_t inputSince) {
  if (c.opset >= inputSince || c.opset <= 0) {
    if (c.inputs.size() > 1 && c.input(1)) {
      auto v = intValues(*c.input(1));
      if (!v.ok()) return v.status();
      return std::optional<std::vector<int64_t>>(*v);
    }
    if (c.opset > 0 || !c.attr("axes")) return std::optional<std::vector<int64_t>>();
  }
  return c.getInts("axes");
}

StatusOr<std::vector<Tensor>> kSqueeze(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("Squeeze without input");
  auto axes = axesOf(c, 13);
  if (!axes.ok()) return axes.status();
  const auto &d = in->dims();
  int64_t r = (int64_t)d.size();
  std::vector<bool> drop(r, false);
  if (*axes) {
    for (int64_t a : **axes) {
      auto n = normAxis(a, r);
      if (!n || d[*n] != 1) return invalid("Squeeze axis");
      drop[*n] = true;
    }
  } else {
    for (int64_t k = 0; k < r; ++k) drop[k] = d[k] == 1;
  }
  std::vector<int64_t> out;
  for (int64_t k = 0; k < r; ++k) if (!drop[k]) out.push_back(d[k]);
  return reshapeTo(c, out);
}

StatusOr<std::vector<Tensor>> kUnsqueeze(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("Unsqueeze without input");
  auto axes = axesOf(c, 13);
  if (!axes.ok()) return axes.status();
  if (!*axes) return invalid("Unsqueeze without axes");
  const auto &d = in->dims();
  int64_t r = (int64_t)d.size() + (int64_t)(*axes)->size();
  std::vector<bool> ins(r, false);
  for (int64_t a : **axes) {
    auto n = normAxis(a, r);
    if (!n || ins[*n]) return invalid("Unsqueeze axis");
    ins[*n] = true;
  }
  std::vector<int64_t> out;
  size_t j = 0;
  for (int64_t k = 0; k < r; ++k) out.push_back(ins[k] ? 1 : d[j++]);
  return reshapeTo(c, out);
}

// Squeeze/Unsqueeze-13: the attribute `axes` became operand #1 (optional for
// Squeeze, where no axes and an empty list both mean every 1-sized dim:
// `DropEmpty`).
template <bool DropEmpty> absl::Status axesUp13(Node &n, AdapterContext &c) {
  return adapters::intsAttrToOperand(n, c, "axes", 1, DropEmpty);
}
template <bool DropEmpty> absl::Status axesDown13(Node &n, AdapterContext &c) {
  return adapters::operandToIntsAttr(n, c, 1, "axes", DropEmpty);
}

void registerSqueezeUnsqueeze(OpRegistrar &r) {
  r["Squeeze"].infer(squeezeRule).kernel(kSqueeze).reshapes();
  r["Squeeze"].since(13).upgrade(axesUp13<true>).downgrade(axesDown13<true>);
  r["Unsqueeze"].infer(unsqueezeRule).kernel(kUnsqueeze).reshapes();
  r["Unsqueeze"].since(13).upgrade(axesUp13<false>).downgrade(axesDown13<false>);
}

//===--- Expand ---===//

/// Where Expand's shape value is unknown (a shape of known length, or an
/// element of it), an input dim known to differ from 1 can only broadcast
/// with 1 or itself: it is the output's dim at its right-aligned place.
Dims keepInputDims(const Dims &in, Dims out) {
  if (out.size() < in.size()) return out;
  for (size_t i = 0, off = out.size() - in.size(); i < in.size(); ++i)
    if (auto v = staticDim(in[i]); v && *v != 1 && !out[off + i]) out[off + i] = in[i];
  return out;
}

void expandRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  const Dims *shape = c.inData(1);
  if (!shape || !in) {
    auto ss = c.inShape(1);
    if (auto k = in && ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
      return c.setTensor(0, el, keepInputDims(*in, Dims(std::max<int64_t>(*k, in->size()), nullptr)));
    return c.setTensor(0, el, std::nullopt);
  }
  auto out = broadcast(c.ctx, *in, *shape);
  if (!out) return;
  c.setTensor(0, el, keepInputDims(*in, *out));
}

StatusOr<std::vector<Tensor>> kExpand(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("Expand without shape");
  auto shape = intValues(*c.input(1));
  if (!shape.ok()) return shape.status();
  auto od = broadcastShapes(a->dims, *shape);
  if (!od) return invalid("Expand shape");
  Status sz = checkOutputSize(c, a->dt, *od);
  if (!sz.ok()) return sz;
  return one(takeElems(*a, *od, broadcastOffsets(a->dims, *od)));
}

void registerExpand(OpRegistrar &r) {
  r["Expand"].infer(expandRule).kernel(kExpand);
}

//===--- Identity ---===//

StatusOr<std::vector<Tensor>> kIdentity(const KernelCall &c) {
  if (!c.input(0)) return invalid("Identity without input");
  return copyOut(*c.input(0));
}

void registerIdentity(OpRegistrar &r) {
  using adapters::noChange;
  r["Identity"] = [](InferCtx &c) {
    const Type *t = c.inType(0);
    if (t) c.setOutType(0, t);
    if (const Dims *d = c.inData(0)) c.setOutData(0, *d);
  };
  r["Identity"].kernel(kIdentity);
  r["Identity"].elementwise().shapePreserving(); // Note [Op facts]
  // Identity-14 and -16 only widened the types (sequences, optionals) under a
  // renamed type parameter; the pass checks the types going down.
  r["Identity"].since(14).upgrade(noChange).downgrade(noChange);
  r["Identity"].since(16).upgrade(noChange).downgrade(noChange);
}

//===--- Constant ---===//

void constantRule(InferCtx &c) {
  const Attribute *a = nullptr;
  const char *n = nullptr;
  for (const char *name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings", "sparse_value"})
    if ((a = c.attr(n = name))) break;
  if (!a) return;
  if (llvm::StringRef(n) == "sparse_value") { // its type only: not densified here
    if (a->kind() != AttrKind::SparseTensor || a->sparseTensors.empty()) return;
    const SparseTensor &t = *a->sparseTensors[0];
    Dims d;
    for (int64_t x : t.dims) d.push_back(c.c(x));
    return c.setTensor(0, t.values.dataTypeRaw(), d);
  }
  Tensor scratch;
  auto v = decodeConstantAttr(n, *a, scratch); // Note [Constant values]
  if (!v.ok()) return;
  const Tensor &t = **v;
  Dims d;
  for (int64_t x : t.dims()) d.push_back(c.c(x));
  c.setTensor(0, t.dataTypeRaw(), d);
  if (auto data = tensorData(c.ctx, t)) c.setOutData(0, *data);
}

StatusOr<std::vector<Tensor>> kConstant(const KernelCall &c) {
  Tensor scratch;
  auto v = constantValue(c.attributes, scratch);
  if (!v.ok()) return invalid(std::string(v.status().message()));
  if (*v != &scratch) return copyOut(**v);
  std::vector<Tensor> r;
  r.push_back(std::move(scratch));
  return r;
}

void registerConstant(OpRegistrar &r) {
  r["Constant"].infer(constantRule).kernel(kConstant);
  // Constant-11 added sparse_value, Constant-12 the value_* forms.
  r["Constant"].since(11).upgrade(adapters::noChange).downgrade(adapters::noNewAttributes);
  r["Constant"].since(12).upgrade(adapters::noChange).downgrade(adapters::noNewAttributes);
}

//===--- ConstantOfShape ---===//

void constantOfShapeRule(InferCtx &c) {
  int32_t el = static_cast<int32_t>(DataType::Float);
  if (const Attribute *a = c.attr("value"); a && !a->tensors.empty())
    el = a->tensors[0]->dataTypeRaw();
  if (const Dims *d = c.inData(0)) {
    c.setTensor(0, el, *d);
    if (d->size() == 1 && el == kInt64)
      if (const Attribute *a = c.attr("value"); a && !a->tensors.empty())
        if (auto v = tensorData(c.ctx, *a->tensors[0]); v && v->size() == 1)
          if (auto k = smallDim((*d)[0], 64)) c.setOutData(0, Dims(*k, (*v)[0]));
    return;
  }
  auto ss = c.inShape(0);
  if (auto k = ss && ss->size() == 1 ? smallDim((*ss)[0]) : std::nullopt)
    return c.setTensor(0, el, Dims(*k, nullptr));
  c.setTensor(0, el, std::nullopt);
}

StatusOr<std::vector<Tensor>> kConstantOfShape(const KernelCall &c) {
  if (!c.input(0)) return invalid("ConstantOfShape without shape");
  auto shape = intValues(*c.input(0));
  if (!shape.ok()) return shape.status();
  for (int64_t d : *shape) if (d < 0) return invalid("negative dim");
  Arr fill;
  const Attribute *v = c.attr("value");
  if (v && !v->tensors.empty()) {
    auto f = fromTensor(*v->tensors[0]);
    if (!f.ok()) return f.status();
    if (f->size() != 1) return invalid("ConstantOfShape value must have one element");
    fill = std::move(*f);
  } else {
    fill = Arr::make(DataType::Float, {1});
  }
  Status sz = checkOutputSize(c, fill.dt, *shape);
  if (!sz.ok()) return sz;
  int64_t n = numElementsOf(*shape);
  // A float fill goes straight into the result's bytes, without an index
  // per element (Note [Inputs read in place]).
  if (fill.dt == DataType::Float || fill.dt == DataType::Double) {
    std::vector<Tensor> r;
    (void)visitFloat(fill.kind(), [&](auto tag) -> Status {
      using T = decltype(tag);
      OutBuf<T> out(fill.dt, *shape);
      std::fill_n(out.data(), n, fill.template vec<T>()[0]);
      r.push_back(out.take());
      return absl::OkStatus();
    });
    return r;
  }
  return one(takeElems(fill, *shape, std::vector<int64_t>((size_t)n, 0)));
}

void registerConstantOfShape(OpRegistrar &r) {
  r["ConstantOfShape"].infer(constantOfShapeRule).kernel(kConstantOfShape);
}

//===--- Range ---===//

/// A Range of constant floating-point operands has
/// max(ceil((limit - start) / delta), 0) elements (ONNX's definition), each
/// operand read in its compute type and the quotient taken in double, as
/// the kernel does. Null when an operand is not such a constant, or for a
/// delta of 0, a NaN or a length past 2^40.
const DimExpr *floatRangeLength(InferCtx &c) {
  double v[3];
  for (unsigned i = 0; i < 3; ++i) {
    const Tensor *t = c.inConstant(i);
    if (!t) return nullptr;
    auto a = fromTensor(*t);
    if (!a.ok() || a->size() != 1) return nullptr;
    if (a->kind() == CK::F32) v[i] = a->vec<float>()[0];
    else if (a->kind() == CK::F64) v[i] = a->vec<double>()[0];
    else return nullptr;
  }
  if (v[2] == 0) return nullptr;
  double cnt = std::ceil((v[1] - v[0]) / v[2]);
  if (std::isnan(cnt) || cnt > double(int64_t(1) << 40)) return nullptr;
  return c.c(cnt < 0 ? 0 : (int64_t)cnt);
}

void rangeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  const Dims *s = c.inData(0), *l = c.inData(1), *d = c.inData(2);
  const DimExpr *n = nullptr;
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 && (*d)[0] &&
      (*d)[0]->isConstant() && (*d)[0]->value() != 0 && (*d)[0]->value() != INT64_MIN) {
    int64_t delta = (*d)[0]->value();
    const DimExpr *diff = dimSub(c.ctx, (*l)[0], (*s)[0]);
    if (delta > 0) n = dimMax(c.ctx, {dimCeilDiv(c.ctx, diff, c.c(delta)), c.c(0)});
    else n = dimMax(c.ctx, {dimCeilDiv(c.ctx, dimNeg(c.ctx, diff), c.c(-delta)), c.c(0)});
    if (auto k = smallDim(n, 64); k && (*s)[0] && (*s)[0]->isConstant()) {
      Dims data;
      for (int64_t i = 0; i < *k; ++i)
        data.push_back(dimAdd(c.ctx, (*s)[0], dimMul(c.ctx, c.c(i), c.c(delta))));
      c.setOutData(0, data);
    }
  }
  if (!n) n = floatRangeLength(c);
  c.setTensor(0, el, Dims{n});
}

StatusOr<std::vector<Tensor>> kRange(const KernelCall &c) {
  auto s = inputArr(c, 0), l = inputArr(c, 1), d = inputArr(c, 2);
  if (!s.ok()) return s.status();
  if (!l.ok()) return l.status();
  if (!d.ok()) return d.status();
  if (s->size() != 1 || l->size() != 1 || d->size() != 1 || s->dt != l->dt || s->dt != d->dt)
    return invalid("Range operands");
  Arr out;
  out.dt = s->dt;
  Status st = visitNumeric(s->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T start = s->template vec<T>()[0], limit = l->template vec<T>()[0],
      delta = d->template vec<T>()[0];
    if (delta == T(0)) return invalid("Range delta 0");
    // onnxruntime and numpy count in double: ceil((limit - start) / delta).
    double cnt = std::ceil(((double)limit - (double)start) / (double)delta);
    if (std::isnan(cnt)) return invalid("Range of NaN");
    // Bound before converting: a double past 2^63 has no int64 value.
    if (cnt > 9.0e18) return absl::ResourceExhaustedError("Range output too long");
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    if constexpr (std::is_integral_v<T>) {
      // The exact count can differ from the double one near the ends of
      // int64 ((INT64_MAX - INT64_MIN) / INT64_MAX: 2 through a double, 3
      // exactly, and the last value past the limit): the spec's formula and
      // the runtimes disagree there, so such a node is not folded.
      __int128 span = (__int128)limit - (__int128)start, dl = (__int128)delta;
      __int128 q = span / dl;
      if (q * dl != span && (span > 0) == (dl > 0)) ++q; // ceiling
      if ((q > 0 ? q : 0) != (__int128)n)
        return unsupported("Range count differs between exact and double arithmetic");
    }
    out.dims = {n};
    Status sz = checkOutputSize(c, out.dt, out.dims);
    if (!sz.ok()) return sz;
    auto &v = out.template vec<T>();
    for (int64_t k = 0; k < n; ++k) {
      // Every value lies between start and limit, so the integer sum fits.
      if constexpr (std::is_integral_v<T>)
        v.push_back((T)((__int128)start + (__int128)k * (__int128)delta));
      else
        v.push_back((T)(start + (T)k * delta));
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return one(out);
}

// Range-27 added stash_type (default 1: float), which matters for float16
// and bfloat16 only.
absl::Status rangeDown27(Node &n, AdapterContext &c) {
  DataType dt = adapters::operandElemType(n, 0);
  auto st = adapters::intAttrOr(n, "stash_type", 1);
  if (!st.ok()) return st.status();
  if (*st != 1 && (dt == DataType::Float16 || dt == DataType::BFloat16 || dt == DataType::Undefined))
    return absl::FailedPreconditionError(
        absl::StrCat("stash_type ", *st, " does not exist at opset ", c.to));
  if (!c.checkOnly) n.removeAttr("stash_type");
  return absl::OkStatus();
}

void registerRange(OpRegistrar &r) {
  r["Range"].infer(rangeRule).kernel(kRange);
  r["Range"].since(27).upgrade(adapters::noChange).downgrade(rangeDown27);
}

//===--- EyeLike ---===//

StatusOr<std::vector<Tensor>> kEyeLike(const KernelCall &c) {
  if (!c.input(0)) return invalid("EyeLike without input");
  const auto &d = c.input(0)->dims();
  if (d.size() != 2) return invalid("EyeLike needs 2-D");
  DataType dt = c.input(0)->dataType();
  if (const Attribute *a = c.attr("dtype")) dt = (DataType)a->i;
  int64_t k = c.getInt("k", 0);
  // `dtype` may widen the elements (int8 to double is 8x the input).
  Status sz = checkOutputSize(c, dt, d);
  if (!sz.ok()) return sz;
  Arr out = Arr::make(dt, d);
  if (out.kind() == CK::None || out.kind() == CK::Str) return unsupported("EyeLike type");
  for (int64_t i = 0; i < d[0]; ++i) {
    // k can be anything (INT64_MAX): compare before adding.
    if (k >= d[1] - i || k < -i) continue;
    int64_t j = i + k;
    int64_t o = i * d[1] + j;
    switch (out.kind()) {
    case CK::F32: out.f[o] = 1; break;
    case CK::F64: out.d[o] = 1; break;
    case CK::I64: out.i[o] = 1; break;
    case CK::U64: out.u[o] = 1; break;
    default: break;
    }
  }
  return one(out);
}

void registerEyeLike(OpRegistrar &r) {
  r["EyeLike"] = [](InferCtx &c) {
    int64_t dt = c.getInt("dtype", 0);
    c.setTensor(0, dt ? (int32_t)dt : c.inElem(0), c.inShape(0));
  };
  r["EyeLike"].kernel(kEyeLike);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerShapeOps(OpRegistrar &r) {
  for (auto *reg : {registerShape, registerSize, registerReshape, registerFlatten,
                    registerSqueezeUnsqueeze, registerExpand, registerIdentity, registerConstant,
                    registerConstantOfShape, registerRange, registerEyeLike})
    reg(r);
}

} // namespace onnxir
