//===- Tensor.cpp - Data movement: Concat, Slice, Gather, ... -------------===//
//
// Tensor (data movement): Concat Split Slice Gather GatherElements GatherND
// Scatter ScatterElements ScatterND TensorScatter Pad Tile Transpose Compress
// NonZero OneHot Trilu TopK Unique DepthToSpace SpaceToDepth ReverseSequence
// Resize Upsample CenterCropPad. A kernel moves data as "take element idx[k]
// of the input", which works for every element type. One section per op, in
// this order: its type and shape rule, its kernel, its version adapters and
// its registration (registerTensorOps at the end calls them in turn).
//
//===----------------------------------------------------------------------===//
#include "AdapterSupport.h"
#include "Families.h"
#include "InferSupport.h"
#include "KernelSupport.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/ConstantValue.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/Ops/InferCtx.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace onnxir {
namespace {

// The rule and kernel vocabulary (InferSupport.h, KernelSupport.h); each
// op's rule, kernel, adapters and registration follow in its section.
using namespace infer;
using namespace kernels;

//===----------------------------------------------------------------------===//
// Helpers shared by several ops
//===----------------------------------------------------------------------===//

/// Output of a slice along one axis of `a`: elements [start, start+len) of
/// axis with step; used by Split and Slice.
struct AxisSlice {
  int64_t start, step, len;
};

Arr sliceArr(const Arr &a, const std::vector<AxisSlice> &sl) {
  int64_t r = a.rank();
  std::vector<int64_t> od(r);
  for (int64_t k = 0; k < r; ++k) od[k] = sl[k].len;
  auto ist = stridesOf(a.dims);
  int64_t n = numElementsOf(od);
  std::vector<int64_t> idx((size_t)std::max<int64_t>(n, 0)), cnt(r, 0);
  int64_t base = 0;
  for (int64_t k = 0; k < r; ++k) base += sl[k].start * ist[k];
  int64_t off = base;
  for (int64_t e = 0; e < n; ++e) {
    idx[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < od[k]) { off += sl[k].step * ist[k]; break; }
      off -= sl[k].step * ist[k] * (cnt[k] - 1);
      cnt[k] = 0;
    }
  }
  return takeElems(a, od, idx);
}

/// sliceArr on stored bytes (Note [Data movement in bytes]).
Tensor sliceBytes(const Tensor &in, const ByteView &v, const std::vector<AxisSlice> &sl) {
  auto ist = stridesOf(in.dims());
  std::vector<int64_t> od, st;
  int64_t base = 0;
  for (size_t k = 0; k < sl.size(); ++k) {
    od.push_back(sl[k].len);
    st.push_back(sl[k].step * ist[k]);
    base += sl[k].start * ist[k];
  }
  std::string out((size_t)std::max<int64_t>(numElementsOf(od), 0) * v.es, '\0');
  stridedCopy(v.data, base, st, od, v.es, out.data());
  return makeTensor(in.dataType(), std::move(od), std::move(out));
}

/// True for the opset `v` or later (an unknown opset reads as the newest).
bool atLeast(const KernelCall &c, int64_t v) { return c.opset <= 0 || c.opset >= v; }

/// Index `v` into an axis of `dim` elements, negatives counting from the end;
/// nullopt when out of range.
std::optional<int64_t> normIndex(int64_t v, int64_t dim) {
  if (v < -dim || v >= dim) return std::nullopt;
  return v < 0 ? v + dim : v;
}

template <typename T> bool isNanV(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

/// `a` with one more element, `fill`'s first: index a.size() of the result
/// is the fill value for takeElems (Pad's constant, CenterCropPad's zero,
/// Resize's extrapolation value).
Arr withFill(const Arr &a, const Arr &fill) {
  Arr ext = a;
  appendElems(ext, fill, 0, 1);
  return ext;
}

/// A one-element array of type `dt` holding `v` (strings: ""), as a cast
/// would give it.
StatusOr<Arr> scalarOf(DataType dt, double v) {
  if (computeKind(dt) == CK::Str) return Arr::make(dt, {1});
  Arr d = Arr::make(DataType::Double, {1});
  d.d[0] = v;
  return convertArr(d, dt);
}

/// Offsets into `a` for every element of the output of dims `od`, where
/// map[k][o] is the input coordinate on axis k of output coordinate o, or -1
/// for the fill element (index a.size(), see withFill).
std::vector<int64_t> mappedOffsets(const Arr &a, const std::vector<int64_t> &od,
                                   const std::vector<std::vector<int64_t>> &map) {
  int64_t r = (int64_t)od.size(), n = numElementsOf(od), fill = a.size();
  auto st = stridesOf(a.dims);
  std::vector<int64_t> idx((size_t)std::max<int64_t>(n, 0)), cnt(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) {
      int64_t v = map[k][cnt[k]];
      if (v < 0) { off = fill; break; }
      off += v * st[k];
    }
    idx[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < od[k]) break;
      cnt[k] = 0;
    }
  }
  return idx;
}

/// `data` with update element e written to data element pos[e], or combined
/// with it by `red` (add, mul, max, min), in order: a later update of one
/// position sees the earlier ones, so duplicate indices accumulate.
StatusOr<Arr> scatterInto(const Arr &data, const Arr &upd, const std::vector<int64_t> &pos,
                          const std::string &red, llvm::StringRef op) {
  if (upd.dt != data.dt) return invalid(absl::StrCat(op.str(), ": updates and data differ in type"));
  if (red == "none") {
    Arr ext = data;
    appendElems(ext, upd, 0, (int64_t)pos.size());
    int64_t n = data.size();
    std::vector<int64_t> idx((size_t)n);
    for (int64_t k = 0; k < n; ++k) idx[k] = k;
    for (size_t e = 0; e < pos.size(); ++e) idx[pos[e]] = n + (int64_t)e;
    return takeElems(ext, data.dims, idx);
  }
  int how = red == "add" ? 0 : red == "mul" ? 1 : red == "max" ? 2 : red == "min" ? 3 : -1;
  if (how < 0)
    return invalid(absl::StrCat(op.str(), " reduction '", red,
                                "' (expected none, add, mul, max or min)"));
  Arr out = data;
  Status st = visitNumeric(out.kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    auto &o = out.template vec<T>();
    const auto &u = upd.template vec<T>();
    for (size_t e = 0; e < pos.size(); ++e) {
      T &x = o[pos[e]];
      T v = u[e];
      switch (how) {
      case 0: x = addWrap(x, v); break;
      case 1: x = mulWrap(x, v); break;
      case 2: if (!isNanV(x) && (isNanV(v) || v > x)) x = v; break;
      default: if (!isNanV(x) && (isNanV(v) || v < x)) x = v; break;
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

/// The `reduction` attribute of ScatterElements and ScatterND, checked
/// against the version in force (add and mul from 16, max and min from 18).
StatusOr<std::string> scatterReduction(const KernelCall &c) {
  std::string red = c.getString("reduction", "none");
  if ((red == "max" || red == "min") && !atLeast(c, 18))
    return invalid(absl::StrCat(c.opType.str(), " reduction '", red, "' first exists at opset 18"));
  return red;
}

using adapters::AttrDefault;

/// An int64 constant of shape [vals.size()] (or a scalar).
Value *int64Constant(Node &n, AdapterContext &c, llvm::StringRef base, std::vector<int64_t> vals,
                     bool scalar = false) {
  Tensor t;
  t.setDataType(DataType::Int64);
  if (!scalar) t.setDims({(int64_t)vals.size()});
  t.setTyped(Tensor::TypedField::Int64);
  t.int64Data.mut() = std::move(vals);
  return c.constant(n, base, std::move(t));
}

Value *emptyFloatConstant(Node &n, AdapterContext &c, llvm::StringRef base) {
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({0});
  t.setRaw(std::string());
  return c.constant(n, base, std::move(t));
}

/// The integer values of constant operand `i` (`what`: what opset c.to needs
/// it as, for the refusal).
absl::StatusOr<std::vector<int64_t>> constantInts(const Node &n, AdapterContext &c, unsigned i,
                                                  llvm::StringRef what) {
  auto v = adapters::constantOperandValues(n, c, i, what);
  if (!v.ok()) return v.status();
  std::vector<int64_t> out;
  for (double d : *v) {
    if (d != std::floor(d))
      return absl::FailedPreconditionError(absl::StrCat("operand #", i, " is not integral"));
    out.push_back((int64_t)d);
  }
  return out;
}

const Attribute *plainAttr(const Node &n, llvm::StringRef name, AttrKind k, absl::Status &err) {
  const Attribute *a = n.getAttr(name);
  if (a && (a->isReference() || a->kind() != k)) {
    err = absl::FailedPreconditionError(absl::StrCat(
        "attribute '", name.str(), "' is not a ", attrKindName(k).str(),
        " (or refers to a function attribute)"));
    return nullptr;
  }
  return a;
}

// Pad-2 renamed `paddings` (same layout: all begins, then all ends) `pads`.
template <const char *From, const char *To>
absl::Status renameAttr(Node &n, AdapterContext &c) {
  if (Attribute *a = n.getAttr(From); a && !c.checkOnly) a->setName(To);
  return absl::OkStatus();
}

constexpr char kPaddings[] = "paddings", kPads[] = "pads";

//===--- Concat ---===//

void concatRule(InferCtx &c) {
  int32_t el = -1;
  std::optional<Dims> out;
  int64_t axisAttr = c.getInt("axis", c.opset < 4 ? 1 : 0);
  int64_t axis = -1;
  bool rankKnown = false;
  unsigned first = 0;
  // Per dim, the first input with a known static size there.
  std::vector<int> staticFrom;
  bool reported = false;
  for (unsigned i = 0; i < c.numInputs(); ++i) {
    if (el < 0) el = c.inElem(i);
    auto s = c.inShape(i);
    if (!s) {
      continue;
    }
    if (!rankKnown) {
      auto a = normAxis(axisAttr, s->size());
      if (!a) return;
      axis = *a;
      rankKnown = true;
      first = i;
      staticFrom.assign(s->size(), -1);
      out = Dims(s->size(), nullptr);
      for (size_t k = 0; k < s->size(); ++k) (*out)[k] = (*s)[k];
      (*out)[axis] = c.c(0);
    } else if (s->size() != out->size()) {
      c.disagree("input " + std::to_string(first) + " " + typeStr(c, first) +
                 " has rank " + std::to_string(out->size()) + " but input " + std::to_string(i) +
                 " " + typeStr(c, i) + " has rank " + std::to_string(s->size()));
      return;
    }
    for (size_t k = 0; k < s->size(); ++k) {
      if ((int64_t)k == axis) continue;
      if (auto y = staticDim((*s)[k])) {
        int j = staticFrom[k];
        if (j < 0) {
          staticFrom[k] = (int)i;
        } else if (auto x = staticDim((*c.inShape(j))[k]); x && *x != *y && !reported) {
          reported = true;
          c.disagree("input " + std::to_string(j) + " " + typeStr(c, j) + " has " +
                     std::to_string(*x) + " at dim " + std::to_string(k) + " but input " +
                     std::to_string(i) + " " + typeStr(c, i) + " has " + std::to_string(*y) +
                     " (the axis is " + std::to_string(axis) + ")");
        }
      }
      const DimExpr *x = (*out)[k], *y = (*s)[k];
      if (!x) (*out)[k] = y;
      else if (x && y && x != y && x->isConstant() && !y->isConstant()) {
      } else if (x && y && x != y && !x->isConstant() && y->isConstant()) (*out)[k] = y;
    }
  }
  // The concatenated dim needs every input's shape.
  if (rankKnown) {
    // From the first input's dim, not from 0: each addition costs the size
    // of its operands (Note [Dim expression size limit]).
    const DimExpr *sum = nullptr;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      auto s = c.inShape(i);
      if (!s || !(*s)[axis]) {
        sum = nullptr;
        break;
      }
      sum = i == 0 ? (*s)[axis] : dimAdd(c.ctx, sum, (*s)[axis]);
    }
    (*out)[axis] = c.numInputs() ? sum : c.c(0);
  }
  c.setTensor(0, el, out);
  // Data: concatenation of 1-D shape tensors.
  if (rankKnown && out->size() == 1) {
    Dims data;
    for (unsigned i = 0; i < c.numInputs(); ++i) {
      const Dims *d = c.inData(i);
      if (!d) {
        auto s = c.inShape(i);
        auto k = s ? smallDim((*s)[0], 64) : std::nullopt;
        if (!k) return;
        data.insert(data.end(), *k, nullptr);
        continue;
      }
      data.insert(data.end(), d->begin(), d->end());
    }
    c.setOutData(0, std::move(data));
  }
}

/// Concat on stored bytes (Note [Data movement in bytes]) when every input
/// is movable and the shapes agree; nullopt sends the call to the
/// decoding path, which also reports what is wrong.
std::optional<StatusOr<std::vector<Tensor>>> concatBytes(const KernelCall &c) {
  std::vector<ByteView> vs;
  const Tensor *first = c.input(0);
  if (!first) return std::nullopt;
  for (unsigned k = 0; k < c.inputs.size(); ++k) {
    const Tensor *t = c.input(k);
    if (!t || t->dataType() != first->dataType() || t->dims().size() != first->dims().size())
      return std::nullopt;
    auto v = byteView(*t);
    if (!v) return std::nullopt;
    vs.push_back(*v);
  }
  int64_t r = (int64_t)first->dims().size();
  int64_t axisAttr = c.getInt("axis", (c.opset > 0 && c.opset < 4) ? 1 : INT64_MIN);
  auto axis = axisAttr == INT64_MIN ? std::nullopt : normAxis(axisAttr, r);
  if (!axis) return std::nullopt;
  std::vector<int64_t> od = first->dims();
  od[*axis] = 0;
  for (unsigned i = 0; i < c.inputs.size(); ++i) {
    const std::vector<int64_t> &d = c.input(i)->dims();
    for (int64_t k = 0; k < r; ++k)
      if (k != *axis && d[k] != od[k]) return std::nullopt;
    od[*axis] += d[*axis];
  }
  Status sz = checkOutputSize(c, first->dataType(), od);
  if (!sz.ok()) return StatusOr<std::vector<Tensor>>(sz);
  size_t es = vs[0].es;
  int64_t outer = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= od[k];
  std::string out((size_t)std::max<int64_t>(numElementsOf(od), 0) * es, '\0');
  char *dst = out.data();
  std::vector<size_t> chunk;
  for (unsigned i = 0; i < c.inputs.size(); ++i) {
    const std::vector<int64_t> &d = c.input(i)->dims();
    size_t n = es;
    for (int64_t k = *axis; k < r; ++k) n *= (size_t)d[k];
    chunk.push_back(n);
  }
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < vs.size(); ++i) {
      if (chunk[i]) std::memcpy(dst, vs[i].data + (size_t)o * chunk[i], chunk[i]);
      dst += chunk[i];
    }
  std::vector<Tensor> res;
  res.push_back(makeTensor(first->dataType(), std::move(od), std::move(out)));
  return StatusOr<std::vector<Tensor>>(std::move(res));
}

StatusOr<std::vector<Tensor>> kConcat(const KernelCall &c) {
  if (c.inputs.empty()) return invalid("Concat without inputs");
  if (auto r = concatBytes(c)) return std::move(*r);
  std::vector<Arr> ins;
  for (unsigned k = 0; k < c.inputs.size(); ++k) {
    auto a = inputArr(c, k);
    if (!a.ok()) return a.status();
    ins.push_back(std::move(*a));
  }
  int64_t r = ins[0].rank();
  int64_t axisAttr = c.getInt("axis", (c.opset > 0 && c.opset < 4) ? 1 : INT64_MIN);
  if (axisAttr == INT64_MIN) return invalid("Concat without axis");
  auto axis = normAxis(axisAttr, r);
  if (!axis) return invalid("Concat axis");
  std::vector<int64_t> od = ins[0].dims;
  od[*axis] = 0;
  for (const Arr &a : ins) {
    if (a.dt != ins[0].dt || a.rank() != r) return invalid("Concat operands");
    for (int64_t k = 0; k < r; ++k)
      if (k != *axis && a.dims[k] != od[k]) return invalid("Concat shapes");
    od[*axis] += a.dims[*axis];
  }
  Status sz = checkOutputSize(c, ins[0].dt, od);
  if (!sz.ok()) return sz;
  int64_t outer = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= od[k];
  Arr out;
  out.dt = ins[0].dt;
  out.dims = od;
  for (int64_t o = 0; o < outer; ++o)
    for (const Arr &a : ins) {
      int64_t chunk = 1;
      for (int64_t k = *axis; k < r; ++k) chunk *= a.dims[k];
      appendElems(out, a, o * chunk, chunk);
    }
  return one(out);
}

// Concat-4 made axis required; Concat-1 defaulted it to 1.
absl::Status concatUp4(Node &n, AdapterContext &c) {
  if (!c.checkOnly && !n.getAttr("axis")) n.newAttr("axis").setInt(1);
  return absl::OkStatus();
}

void registerConcat(OpRegistrar &r) {
  using adapters::noChange;
  r["Concat"].infer(concatRule).kernel(kConcat);
  r["Concat"].since(4).upgrade(concatUp4).downgrade(adapters::noChange);
}

//===--- Split ---===//

void splitRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  unsigned n = c.numOutputs();
  if (!in) {
    for (unsigned i = 0; i < n; ++i) c.setTensor(i, el, std::nullopt);
    return;
  }
  auto ax = normAxis(c.getInt("axis", 0), in->size());
  if (!ax) return;
  std::optional<std::vector<int64_t>> split;
  bool splitGiven;
  if (c.opset >= 13) {
    splitGiven = c.hasInput(1);
    if (splitGiven) split = c.inInts(1);
  } else {
    split = c.getInts("split");
    splitGiven = split.has_value();
    if (!splitGiven && c.opset == 2 && c.hasInput(1)) {
      splitGiven = true;
      split = c.inInts(1);
    }
  }
  const DimExpr *dim = (*in)[*ax];
  std::vector<const DimExpr *> sizes(n, nullptr);
  if (splitGiven) {
    if (split) {
      if (split->size() != n) return;
      for (unsigned i = 0; i < n; ++i) sizes[i] = c.c((*split)[i]);
    }
  } else if (int64_t parts = c.getInt("num_outputs", 0); parts > 0 || n > 0) {
    int64_t k = parts > 0 ? parts : n;
    if (dim) {
      // Equal parts (ceil), the last one possibly smaller (opset 18).
      const DimExpr *chunk = dimCeilDiv(c.ctx, dim, c.c(k));
      for (unsigned i = 0; i < n; ++i)
        sizes[i] = i + 1 < n ? chunk : dimSub(c.ctx, dim, dimMul(c.ctx, chunk, c.c(n - 1)));
      if (dim->isConstant() && dim->value() % k == 0)
        for (unsigned i = 0; i < n; ++i) sizes[i] = c.c(dim->value() / k);
      else if (!dim->isConstant() && c.opset < 18)
        for (unsigned i = 0; i < n; ++i) sizes[i] = dimFloorDiv(c.ctx, dim, c.c(k));
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    Dims o = *in;
    o[*ax] = sizes[i];
    c.setTensor(i, el, o);
  }
}

StatusOr<std::vector<Tensor>> kSplit(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("missing input #0");
  const std::vector<int64_t> &dims = in->dims();
  int64_t r = (int64_t)dims.size();
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("Split axis");
  int64_t dim = dims[*axis];
  std::vector<int64_t> split;
  if (c.opset >= 13 || c.opset <= 0) {
    if (c.input(1)) {
      auto s = intValues(*c.input(1));
      if (!s.ok()) return s.status();
      split = *s;
    }
  } else if (auto s = c.getInts("split")) {
    split = *s;
  } else if (c.input(1)) { // Split-2 and earlier took it as an input too
    auto s2 = intValues(*c.input(1));
    if (!s2.ok()) return s2.status();
    split = *s2;
  }
  if (split.empty()) {
    // The number of parts comes from the node's result count; an opset-18
    // num_outputs must agree with it. Checked before anything is allocated:
    // num_outputs = 2^31-1 on a one-result node must not build 2^31 sizes.
    int64_t parts = c.numOutputs;
    bool uneven = c.opset >= 18 && c.attr("num_outputs");
    if (uneven && c.getInt("num_outputs", 0) != parts)
      return invalid("Split num_outputs differs from the number of results");
    if (parts <= 0) return invalid("Split parts");
    if (uneven) {
      int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t k = 0; k < parts; ++k)
        split.push_back(std::max<int64_t>(0, std::min(chunk, dim - k * chunk)));
    } else {
      if (dim % parts) return invalid("Split not even");
      split.assign(parts, dim / parts);
    }
  }
  if (split.size() != c.numOutputs) return invalid("Split sizes");
  int64_t total = 0;
  for (int64_t s : split) {
    if (s < 0 || s > dim - total) return invalid("Split sizes"); // no overflow
    total += s;
  }
  if (total != dim) return invalid("Split sizes");
  // Note [Data movement in bytes]: parts cut from the stored bytes, else
  // from one decoded copy.
  std::optional<ByteView> v = byteView(*in);
  std::optional<Arr> a;
  if (!v) {
    auto d = fromTensor(*in);
    if (!d.ok()) return d.status();
    a = std::move(*d);
  }
  std::vector<Tensor> outs;
  int64_t pos = 0;
  for (int64_t s : split) {
    std::vector<AxisSlice> sl;
    for (int64_t k = 0; k < r; ++k)
      sl.push_back(k == *axis ? AxisSlice{pos, 1, s} : AxisSlice{0, 1, dims[k]});
    outs.push_back(v ? sliceBytes(*in, *v, sl) : toTensor(sliceArr(*a, sl)));
    pos += s;
  }
  return outs;
}

// Split-2 dropped the optional operand #1 (the sizes, of the input's type)
// for the attribute `split`.
absl::Status splitUp2(Node &n, AdapterContext &c) {
  if (n.numOperands() < 2 || !n.operand(1)) return absl::OkStatus();
  Value *v = n.operand(1);
  if (n.getAttr("split"))
    return absl::FailedPreconditionError(
        absl::StrCat("the node has both attribute 'split' and operand #1 ('", v->name().str(), "')"));
  Tensor scratch;
  const Tensor *t = constantOf(v, scratch);
  auto d = t ? t->values<double>() : absl::StatusOr<std::vector<double>>(absl::NotFoundError(""));
  std::vector<int64_t> sizes;
  if (d.ok())
    for (double x : *d) {
      if (x != std::floor(x) || x < 0 || x > 9.0e18) {
        d = absl::InvalidArgumentError("");
        break;
      }
      sizes.push_back((int64_t)x);
    }
  if (!d.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "operand #1 ('", v->name().str(),
        "') is not a constant of sizes; opset 2 needs it as attribute 'split'"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeOperand(1);
  adapters::eraseIfDeadConstant(v);
  n.newAttr("split").setInts(std::move(sizes));
  return absl::OkStatus();
}

// Split-13: the attribute `split` became the optional operand #1.
absl::Status splitUp13(Node &n, AdapterContext &c) {
  return adapters::intsAttrToOperand(n, c, "split", 1, /*dropEmpty=*/true);
}

absl::Status splitDown13(Node &n, AdapterContext &c) {
  return adapters::operandToIntsAttr(n, c, 1, "split", /*dropEmpty=*/true);
}

// Split-18 added num_outputs, which also allows an uneven last part
// (ceil(d/k) each, the rest last). Up: an equal split says how many parts.
// Down: num_outputs goes; the sizes become operand #1 when the axis' size is
// known and not a multiple of it, and an unknown size is refused.
absl::Status splitUp18(Node &n, AdapterContext &c) {
  if ((n.numOperands() > 1 && n.operand(1)) || n.getAttr("num_outputs") || c.checkOnly)
    return absl::OkStatus();
  n.newAttr("num_outputs").setInt(n.numResults());
  return absl::OkStatus();
}

absl::Status splitDown18(Node &n, AdapterContext &c) {
  const Attribute *a = n.getAttr("num_outputs");
  if (!a) return absl::OkStatus();
  if (a->isReference())
    return absl::FailedPreconditionError("attribute 'num_outputs' refers to a function attribute");
  if (n.numOperands() > 1 && n.operand(1))
    return absl::FailedPreconditionError("the node has both 'num_outputs' and operand #1");
  int64_t k = a->i;
  const Attribute *ax = n.getAttr("axis");
  int64_t axis = ax ? ax->i : 0;
  const Type *t = n.numOperands() ? (n.operand(0) ? n.operand(0)->type() : nullptr) : nullptr;
  int64_t rank = t ? t->rank() : -1;
  if (rank >= 0 && axis < 0) axis += rank;
  if (k <= 0 || rank < 0 || axis < 0 || axis >= rank || !t->dims()[axis].isKnown())
    return absl::FailedPreconditionError(absl::StrCat(
        "num_outputs=", k, " may split axis ", axis,
        " unevenly, and its size is unknown (infer shapes first)"));
  int64_t d = t->dims()[axis].value;
  int64_t chunk = (d + k - 1) / k;
  if (d % k != 0 && d - chunk * (k - 1) <= 0)
    return absl::FailedPreconditionError(
        absl::StrCat("num_outputs=", k, " does not split a size of ", d));
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("num_outputs");
  if (d % k == 0) return absl::OkStatus();
  std::vector<int64_t> sizes(k, chunk);
  sizes.back() = d - chunk * (k - 1);
  Tensor s;
  s.setDataType(DataType::Int64);
  s.setDims({k});
  s.setTyped(Tensor::TypedField::Int64);
  s.int64Data.mut() = std::move(sizes);
  Value *v = c.constant(n, "split", std::move(s));
  while (n.numOperands() < 1) n.addOperand(nullptr);
  n.insertOperand(1, v);
  return absl::OkStatus();
}

void registerSplit(OpRegistrar &r) {
  using adapters::noChange;
  r["Split"].infer(splitRule).kernel(kSplit).axis(AxisFact::AxisAttribute);
  r["Split"].since(13).upgrade(splitUp13).downgrade(splitDown13);
  r["Split"].since(18).upgrade(splitUp18).downgrade(splitDown18);
  r["Split"].since(2).upgrade(splitUp2).downgrade(adapters::noChange);
}

//===--- Slice ---===//

/// True if `e` cannot be negative (symbols stand for sizes).
bool nonNeg(const DimExpr *e) {
  if (!e) return false;
  switch (e->kind()) {
  case DimExpr::Kind::Constant:
    return e->value() >= 0;
  case DimExpr::Kind::Symbol:
    return true;
  case DimExpr::Kind::Add:
    if (e->value() < 0) return false;
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  case DimExpr::Kind::Mul:
    if (e->value() < 0) return false;
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  case DimExpr::Kind::FloorDiv:
  case DimExpr::Kind::Mod:
    return nonNeg(e->operands()[0]) && nonNeg(e->operands()[1]);
  case DimExpr::Kind::Min:
  case DimExpr::Kind::Max:
    for (const DimExpr *t : e->operands())
      if (!nonNeg(t)) return false;
    return true;
  }
  return false;
}

/// A Slice bound clamped the way the operator does it, symbolic if need be.
const DimExpr *clampIndex(Context &ctx, const DimExpr *v, const DimExpr *dim, int64_t step) {
  if (!dim || !v) return nullptr;
  const DimExpr *zero = dimConst(ctx, 0);
  if (v->isConstant()) {
    int64_t x = v->value();
    if (step > 0 && x >= 0) {
      if (x == 0) return zero;
      if (x >= ((int64_t)1 << 31) && !dim->isConstant()) return dim;
      return dimMin(ctx, {v, dim});
    }
    if (step < 0 && x >= ((int64_t)1 << 31)) return dimSub(ctx, dim, dimConst(ctx, 1));
    if (step < 0 && x <= -((int64_t)1 << 31)) return dimConst(ctx, -1);
    if (step > 0 && x <= -((int64_t)1 << 31)) return zero;
    const DimExpr *e = x < 0 ? dimAdd(ctx, dim, v) : v;
    if (step > 0) return dimMax(ctx, {e, zero});
    return dimMin(ctx, {dimMax(ctx, {e, dimConst(ctx, -1)}), dimSub(ctx, dim, dimConst(ctx, 1))});
  }
  // A symbolic bound: non-negative ones are used as they are.
  if (!nonNeg(v)) return nullptr;
  if (step > 0) return dimMin(ctx, {v, dim});
  return dimMin(ctx, {v, dimSub(ctx, dim, dimConst(ctx, 1))});
}

/// The values of a constant int operand read directly, INT64_MIN included
/// (shape data has no DimExpr for it).
std::optional<std::vector<int64_t>> constantInts(InferCtx &c, unsigned i) {
  const Tensor *t = c.inConstant(i);
  if (!t || t->dims().size() > 1) return std::nullopt;
  if (t->dataType() == DataType::Int64) {
    auto v = t->values<int64_t>();
    if (v.ok()) return std::vector<int64_t>(v->begin(), v->end());
  } else if (t->dataType() == DataType::Int32) {
    auto v = t->values<int32_t>();
    if (v.ok()) return std::vector<int64_t>(v->begin(), v->end());
  }
  return std::nullopt;
}

void sliceRule(InferCtx &c) {
  auto s = c.inShape(0);
  int32_t el = c.inElem(0);
  if (!s) return c.setTensor(0, el, std::nullopt);
  int64_t r = s->size();
  bool inputs = c.opset >= 10;
  std::optional<Dims> starts, ends;
  if (inputs) {
    if (const Dims *d = c.inData(1)) starts = *d;
    if (const Dims *d = c.inData(2)) ends = *d;
    // INT64_MIN has no DimExpr (its entry is null); as a bound it clamps
    // like INT64_MIN + 1 does, so a constant one is read as that.
    auto fillMin = [&](std::optional<Dims> &b, unsigned i) {
      if (!b) return;
      std::optional<std::vector<int64_t>> v;
      for (size_t k = 0; k < b->size(); ++k) {
        if ((*b)[k]) continue;
        if (!v) v = constantInts(c, i);
        if (v && v->size() == b->size() && (*v)[k] == INT64_MIN) (*b)[k] = c.c(INT64_MIN + 1);
      }
    };
    fillMin(starts, 1);
    fillMin(ends, 2);
  } else {
    auto toDims = [&](llvm::StringRef n) -> std::optional<Dims> {
      auto v = c.getInts(n);
      if (!v) return std::nullopt;
      Dims d;
      for (int64_t x : *v) d.push_back(c.c(x == INT64_MIN ? INT64_MIN + 1 : x)); // as above
      return d;
    };
    starts = toDims("starts");
    ends = toDims("ends");
  }
  std::optional<std::vector<int64_t>> axes, steps;
  bool axesGiven = inputs ? c.hasInput(3) : c.getInts("axes").has_value();
  bool stepsGiven = inputs && c.hasInput(4);
  if (axesGiven) axes = intsFrom(c, inputs, 3, "axes");
  if (stepsGiven) steps = c.inInts(4);
  if (stepsGiven && !steps) steps = constantInts(c, 4);
  if (!starts || !ends || (axesGiven && !axes) || (stepsGiven && !steps)) {
    // Which axes change is unknown (or their bounds are): the rank stays.
    Dims out(r, nullptr);
    if (axes && !stepsGiven) {
      out = *s;
      for (int64_t a : *axes) {
        auto n = normAxis(a, r);
        if (!n) return;
        out[*n] = nullptr;
      }
    }
    return c.setTensor(0, el, out);
  }
  size_t k = starts->size();
  if (ends->size() != k) return;
  if (!axes) {
    axes = std::vector<int64_t>(k);
    for (size_t i = 0; i < k; ++i) (*axes)[i] = i;
  }
  if (!steps) steps = std::vector<int64_t>(k, 1);
  if (axes->size() != k || steps->size() != k) return;
  Dims out = *s;
  for (size_t i = 0; i < k; ++i) {
    auto ax = normAxis((*axes)[i], r);
    int64_t st = (*steps)[i];
    if (!ax || st == 0) return;
    const DimExpr *dim = (*s)[*ax];
    const DimExpr *b = clampIndex(c.ctx, (*starts)[i], dim, st);
    const DimExpr *e = clampIndex(c.ctx, (*ends)[i], dim, st);
    const DimExpr *len = nullptr;
    // |step|; INT64_MIN's (2^63) is not an int64, but a span is at most
    // INT64_MAX, and ceil(span / 2^63) == ceil(span / (2^63 - 1)) there.
    int64_t ast = st > 0 ? st : (st == INT64_MIN ? INT64_MAX : -st);
    if (b && e) {
      const DimExpr *span = st > 0 ? dimSub(c.ctx, e, b) : dimSub(c.ctx, b, e);
      if (span && span->isConstant()) {
        // The count as the kernel computes it: never span + step - 1.
        int64_t n = span->value();
        len = c.c(n > 0 ? (n - 1) / ast + 1 : 0);
      } else if (span) {
        if (!nonNeg(span)) span = dimMax(c.ctx, {span, c.c(0)});
        // (DimExpr arithmetic is checked: an overflow gives an unknown dim.)
        len = dimCeilDiv(c.ctx, span, c.c(ast));
      }
    }
    out[*ax] = len;
  }
  c.setTensor(0, el, out);
  const Dims *data = c.inData(0);
  if (data && r == 1 && k == 1 && (*starts)[0] && (*ends)[0] && (*starts)[0]->isConstant() &&
      (*ends)[0]->isConstant()) {
    int64_t n = data->size(), st = (*steps)[0];
    int64_t b = (*starts)[0]->value(), e = (*ends)[0]->value();
    if (b < 0) b = b < -n ? -n - 1 : b + n;
    if (e < 0) e = e < -n ? -n - 1 : e + n;
    Dims res;
    // Stepping by counting, not by i += st (which overflows for huge steps).
    if (st > 0) {
      b = std::max<int64_t>(0, std::min(b, n));
      e = std::max<int64_t>(0, std::min(e, n));
      for (int64_t i = b; i < e; i = e - i > st ? i + st : e) res.push_back((*data)[i]);
    } else {
      uint64_t ast = 0 - (uint64_t)st;
      b = std::max<int64_t>(-1, std::min(b, n - 1));
      e = std::max<int64_t>(-1, std::min(e, n - 1));
      for (int64_t i = b; i > e; i = (uint64_t)(i - e) > ast ? i - (int64_t)ast : e)
        res.push_back((*data)[i]);
    }
    c.setOutData(0, std::move(res));
  }
}

StatusOr<std::vector<Tensor>> kSlice(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("missing input #0");
  const std::vector<int64_t> &dims = in->dims();
  int64_t r = (int64_t)dims.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset > 0 && c.opset < 10) {
    auto s = c.getInts("starts"), e = c.getInts("ends");
    if (!s || !e) return invalid("Slice-1 attributes");
    starts = *s;
    ends = *e;
    if (auto ax = c.getInts("axes")) axes = *ax;
  } else {
    if (!c.input(1) || !c.input(2)) return invalid("Slice inputs");
    auto s = intValues(*c.input(1)), e = intValues(*c.input(2));
    if (!s.ok()) return s.status();
    if (!e.ok()) return e.status();
    starts = *s;
    ends = *e;
    if (c.input(3)) {
      auto ax = intValues(*c.input(3));
      if (!ax.ok()) return ax.status();
      axes = *ax;
    }
    if (c.input(4)) {
      auto st = intValues(*c.input(4));
      if (!st.ok()) return st.status();
      steps = *st;
    }
  }
  if (starts.size() != ends.size()) return invalid("Slice starts/ends");
  if (axes.empty()) for (size_t k = 0; k < starts.size(); ++k) axes.push_back((int64_t)k);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return invalid("Slice sizes");
  std::vector<AxisSlice> sl;
  for (int64_t k = 0; k < r; ++k) sl.push_back({0, 1, dims[k]});
  std::vector<bool> seen(r, false);
  for (size_t j = 0; j < axes.size(); ++j) {
    auto ax = normAxis(axes[j], r);
    if (!ax || seen[*ax]) return invalid("Slice axis");
    seen[*ax] = true;
    int64_t dim = dims[*ax], step = steps[j];
    if (step == 0) return invalid("Slice step 0");
    int64_t s = starts[j], e = ends[j];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    // Clamped bounds lie in [-1, dim], so their difference cannot overflow;
    // the step can be anything (INT64_MAX, INT64_MIN): the count is
    // (span - 1) / |step| + 1 in unsigned arithmetic, never span + step - 1.
    int64_t len;
    uint64_t absStep = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      len = e > s ? (int64_t)(((uint64_t)(e - s) - 1) / absStep + 1) : 0;
    } else if (dim == 0) {
      len = 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      len = s > e ? (int64_t)(((uint64_t)(s - e) - 1) / absStep + 1) : 0;
    }
    // A one-element axis never moves by its step, and sliceArr multiplies
    // the step by a stride: keep it small so that cannot overflow.
    if (len <= 1) step = 1;
    sl[*ax] = {len > 0 ? s : 0, step, len};
  }
  std::vector<int64_t> od;
  for (auto &x : sl) od.push_back(x.len);
  Status sz = checkOutputSize(c, in->dataType(), od);
  if (!sz.ok()) return sz;
  if (auto v = byteView(*in)) { // Note [Data movement in bytes]
    std::vector<Tensor> res;
    res.push_back(sliceBytes(*in, *v, sl));
    return res;
  }
  auto a = fromTensor(*in);
  if (!a.ok()) return a.status();
  return one(sliceArr(*a, sl));
}

// Slice-10: starts, ends, axes became operands #1-#3 (int64) and steps #4
// was added.
absl::Status sliceUp10(Node &n, AdapterContext &c) {
  absl::Status err;
  const Attribute *a[3];
  const char *names[3] = {"starts", "ends", "axes"};
  for (int k = 0; k < 3; ++k) {
    a[k] = plainAttr(n, names[k], AttrKind::Ints, err);
    if (!err.ok()) return err;
  }
  if (!a[0] || !a[1]) return absl::FailedPreconditionError("no attribute 'starts' or 'ends'");
  if (n.numOperands() > 1) return absl::FailedPreconditionError("Slice-1 with operands beyond #0");
  if (c.checkOnly) return absl::OkStatus();
  for (int k = 0; k < 3; ++k) {
    if (!a[k]) continue;
    Value *v = int64Constant(n, c, names[k], std::vector<int64_t>(a[k]->ints.begin(), a[k]->ints.end()));
    n.addOperand(v);
    n.removeAttr(names[k]);
  }
  return absl::OkStatus();
}

absl::Status sliceDown10(Node &n, AdapterContext &c) {
  std::vector<int64_t> vals[3];
  const char *names[3] = {"starts", "ends", "axes"};
  for (unsigned k = 0; k < 3; ++k) {
    if (n.numOperands() <= k + 1 || !n.operand(k + 1)) {
      if (k < 2) return absl::FailedPreconditionError(absl::StrCat("no operand ", names[k]));
      continue;
    }
    auto v = constantInts(n, c, k + 1, absl::StrCat("attribute '", names[k], "'"));
    if (!v.ok()) return v.status();
    vals[k] = std::move(*v);
  }
  if (n.numOperands() > 4 && n.operand(4)) {
    auto st = constantInts(n, c, 4, "no steps (Slice-1 steps by 1)");
    if (!st.ok()) return st.status();
    for (int64_t v : *st)
      if (v != 1)
        return absl::FailedPreconditionError(
            absl::StrCat("a step of ", v, "; Slice-1 steps by 1 only"));
  }
  if (c.checkOnly) return absl::OkStatus();
  bool hasAxes = n.numOperands() > 3 && n.operand(3);
  for (unsigned k = 5; k-- > 1;) adapters::dropOperand(n, k);
  for (unsigned k = 0; k < 3; ++k)
    if (k < 2 || hasAxes) n.newAttr(names[k]).setInts(std::move(vals[k]));
  return absl::OkStatus();
}

void registerSlice(OpRegistrar &r) {
  r["Slice"].infer(sliceRule).kernel(kSlice).axis(AxisFact::AxesList);
  r["Slice"].since(10).upgrade(sliceUp10).downgrade(sliceDown10);
}

//===--- Gather ---===//

void gatherRule(InferCtx &c) {
  auto d = c.inShape(0), ix = c.inShape(1);
  int32_t el = c.inElem(0);
  if (!d || !ix) return c.setTensor(0, el, std::nullopt);
  auto ax = normAxis(c.getInt("axis", 0), d->size());
  if (!ax) return;
  Dims out(d->begin(), d->begin() + *ax);
  out.insert(out.end(), ix->begin(), ix->end());
  out.insert(out.end(), d->begin() + *ax + 1, d->end());
  c.setTensor(0, el, out);
  const Dims *data = c.inData(0);
  auto idx = c.inInts(1);
  if (data && idx && d->size() == 1 && ix->size() <= 1) {
    Dims r;
    int64_t n = data->size();
    for (int64_t i : *idx) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return;
      r.push_back((*data)[i]);
    }
    c.setOutData(0, std::move(r));
  }
}

StatusOr<std::vector<Tensor>> kGather(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("missing input #0");
  if (!c.input(1)) return invalid("Gather without indices");
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  const auto &idims = c.input(1)->dims();
  const std::vector<int64_t> &dims = in->dims();
  int64_t r = (int64_t)dims.size();
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("Gather axis");
  std::vector<int64_t> od(dims.begin(), dims.begin() + *axis);
  od.insert(od.end(), idims.begin(), idims.end());
  od.insert(od.end(), dims.begin() + *axis + 1, dims.end());
  Status sz = checkOutputSize(c, in->dataType(), od);
  if (!sz.ok()) return sz;
  int64_t dim = dims[*axis], outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= dims[k];
  for (int64_t k = *axis + 1; k < r; ++k) inner *= dims[k];
  if (auto v = byteView(*in)) { // Note [Data movement in bytes]: rows copied
    size_t row = (size_t)inner * v->es;
    std::string out((size_t)std::max<int64_t>(numElementsOf(od), 0) * v->es, '\0');
    char *dst = out.data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : *ind) {
        if (j < -dim || j >= dim) return invalid("Gather index out of range");
        if (j < 0) j += dim;
        if (row) std::memcpy(dst, v->data + (size_t)(o * dim + j) * row, row);
        dst += row;
      }
    std::vector<Tensor> res;
    res.push_back(makeTensor(in->dataType(), std::move(od), std::move(out)));
    return res;
  }
  auto a = fromTensor(*in);
  if (!a.ok()) return a.status();
  std::vector<int64_t> idx;
  idx.reserve((size_t)numElementsOf(od));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : *ind) {
      if (j < -dim || j >= dim) return invalid("Gather index out of range");
      if (j < 0) j += dim;
      for (int64_t i = 0; i < inner; ++i) idx.push_back((o * dim + j) * inner + i);
    }
  return one(takeElems(*a, od, idx));
}

void registerGather(OpRegistrar &r) {
  r["Gather"].infer(gatherRule).kernel(kGather);
}

//===--- GatherElements ---===//

StatusOr<std::vector<Tensor>> kGatherElements(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("GatherElements without indices");
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  std::vector<int64_t> od = c.input(1)->dims();
  int64_t r = a->rank();
  if ((int64_t)od.size() != r) return invalid("GatherElements rank");
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("GatherElements axis");
  auto ist = stridesOf(a->dims);
  int64_t n = numElementsOf(od);
  std::vector<int64_t> idx((size_t)n), cnt(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) {
      int64_t v = cnt[k];
      if (k == *axis) {
        v = (*ind)[e];
        int64_t dim = a->dims[k];
        if (v < -dim || v >= dim) return invalid("GatherElements index out of range");
        if (v < 0) v += dim;
      } else if (v >= a->dims[k]) {
        return invalid("GatherElements shape");
      }
      off += v * ist[k];
    }
    idx[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < od[k]) break;
      cnt[k] = 0;
    }
  }
  return one(takeElems(*a, od, idx));
}

void registerGatherElements(OpRegistrar &r) {
  r["GatherElements"] = [](InferCtx &c) {
    // The result has the indices' shape; data and indices have one rank.
    int64_t rd = c.inRank(0), ri = c.inRank(1);
    if (rd >= 0 && ri >= 0 && rd != ri) {
      c.disagree("data " + typeStr(c, 0) + " has rank " + std::to_string(rd) + " but indices " +
                 typeStr(c, 1) + " have rank " + std::to_string(ri) + " (GatherElements needs one)");
      return;
    }
    c.setTensor(0, c.inElem(0), c.inShape(1));
  };
  r["GatherElements"] = kGatherElements;
}

//===--- GatherND ---===//

StatusOr<std::vector<Tensor>> kGatherND(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("GatherND without indices");
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  const auto &idims = c.input(1)->dims();
  int64_t r = a->rank(), q = (int64_t)idims.size(), b = c.getInt("batch_dims", 0);
  if (q < 1) return invalid("GatherND indices must have rank 1 or more");
  if (b < 0 || b >= std::min(r, q))
    return invalid(absl::StrCat("GatherND batch_dims ", b, " outside [0, min(rank(data), "
                                "rank(indices)) = ", std::min(r, q), ")"));
  int64_t k = idims.back();
  if (k < 0 || k > r - b)
    return invalid(absl::StrCat("GatherND indices' last dim ", k, " exceeds rank(data) - "
                                "batch_dims = ", r - b));
  for (int64_t t = 0; t < b; ++t)
    if (idims[t] != a->dims[t])
      return invalid(absl::StrCat("GatherND batch dim #", t, ": data has ", a->dims[t],
                                  ", indices ", idims[t]));
  std::vector<int64_t> od(idims.begin(), idims.end() - 1);
  od.insert(od.end(), a->dims.begin() + b + k, a->dims.end());
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  auto st = stridesOf(a->dims);
  int64_t slice = numElementsOf(llvm::ArrayRef<int64_t>(a->dims).drop_front(b + k));
  int64_t batches = numElementsOf(llvm::ArrayRef<int64_t>(idims).take_front(b));
  int64_t perBatch = numElementsOf(llvm::ArrayRef<int64_t>(idims).slice(b, q - 1 - b));
  int64_t batchSize = b ? st[b - 1] : 0;
  std::vector<int64_t> idx;
  idx.reserve((size_t)numElementsOf(od));
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t j = 0; j < perBatch; ++j) {
      int64_t row = bi * perBatch + j, off = bi * batchSize;
      for (int64_t t = 0; t < k; ++t) {
        auto v = normIndex((*ind)[row * k + t], a->dims[b + t]);
        if (!v)
          return invalid(absl::StrCat("GatherND index ", (*ind)[row * k + t],
                                      " out of range for data dim #", b + t, " (",
                                      a->dims[b + t], ")"));
        off += *v * st[b + t];
      }
      for (int64_t s = 0; s < slice; ++s) idx.push_back(off + s);
    }
  return one(takeElems(*a, od, idx));
}

void registerGatherND(OpRegistrar &r) {
  using adapters::noChange;
  r["GatherND"] = [](InferCtx &c) {
    auto d = c.inShape(0), ix = c.inShape(1);
    if (!d || !ix || ix->empty()) return c.setTensor(0, c.inElem(0), std::nullopt);
    const DimExpr *last = ix->back();
    int64_t b = c.getInt("batch_dims", 0);
    if (!last || !last->isConstant()) return c.setTensor(0, c.inElem(0), std::nullopt);
    int64_t k = last->value();
    if (b + k > (int64_t)d->size()) return;
    Dims o(ix->begin(), ix->end() - 1);
    o.insert(o.end(), d->begin() + b + k, d->end());
    c.setTensor(0, c.inElem(0), o);
  };
  r["GatherND"] = kGatherND;
  r["GatherND"].since(12).upgrade(noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "GatherND", {{"batch_dims", AttrKind::Int, 0}});
  });
}

//===--- Scatter, ScatterElements ---===//

// Scatter (deprecated at 11) is ScatterElements-9 under another name.
StatusOr<std::vector<Tensor>> kScatterElements(const KernelCall &c) {
  llvm::StringRef op = c.opType;
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1) || !c.input(2)) return invalid(absl::StrCat(op.str(), " needs indices and updates"));
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  auto upd = inputArr(c, 2);
  if (!upd.ok()) return upd.status();
  const auto &idims = c.input(1)->dims();
  int64_t r = a->rank();
  if ((int64_t)idims.size() != r)
    return invalid(absl::StrCat(op.str(), ": indices have rank ", idims.size(), ", data ", r));
  if (upd->dims != idims) return invalid(absl::StrCat(op.str(), ": updates and indices differ in shape"));
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid(absl::StrCat(op.str(), " axis ", c.getInt("axis", 0), " out of range"));
  for (int64_t k = 0; k < r; ++k)
    if (k != *axis && idims[k] > a->dims[k])
      return invalid(absl::StrCat(op.str(), ": indices dim #", k, " (", idims[k],
                                  ") exceeds the data's (", a->dims[k], ")"));
  auto st = stridesOf(a->dims);
  int64_t n = upd->size(), dim = a->dims[*axis];
  std::vector<int64_t> pos((size_t)n), cnt(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) {
      int64_t v = cnt[k];
      if (k == *axis) {
        auto w = normIndex((*ind)[e], dim);
        if (!w)
          return invalid(absl::StrCat(op.str(), " index ", (*ind)[e], " out of range for axis ",
                                      *axis, " of size ", dim));
        v = *w;
      }
      off += v * st[k];
    }
    pos[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < idims[k]) break;
      cnt[k] = 0;
    }
  }
  auto red = scatterReduction(c);
  if (!red.ok()) return red.status();
  auto out = scatterInto(*a, *upd, pos, *red, op);
  if (!out.ok()) return out.status();
  return one(*out);
}

// ScatterElements/ScatterND-18 added the reductions max and min.
absl::Status scatterDown18(Node &n, AdapterContext &) {
  auto m = adapters::stringAttrOr(n, "reduction", "none");
  if (!m.ok()) return m.status();
  if (*m == "max" || *m == "min")
    return absl::FailedPreconditionError(
        absl::StrCat("reduction \"", *m, "\" first exists at opset 18"));
  return absl::OkStatus();
}

// Note [Replaced ops]: Scatter-11 and Upsample-10 are deprecated in favour of
// ScatterElements-11 and Resize-10, which have the same operands and
// attributes as Scatter-9 and Upsample-9. The deprecated entry's upgrade and
// the successor's first downgrade only change the op type
// (AdapterContext::newOpType, Note [Version adapters]).
absl::Status scatterToElements(Node &n, AdapterContext &c) {
  c.newOpType = "ScatterElements";
  if (!c.checkOnly) n.setOpType("ScatterElements");
  return absl::OkStatus();
}

absl::Status elementsToScatter(Node &n, AdapterContext &c) {
  // The pass's check of negative axes does not see this step (there is no
  // older ScatterElements).
  auto a = adapters::intAttrOr(n, "axis", 0);
  if (!a.ok()) return a.status();
  if (*a < 0)
    return absl::FailedPreconditionError(
        "a negative axis, which Scatter-9 may not accept (normalising it needs the rank; not "
        "done yet)");
  c.newOpType = "Scatter";
  if (!c.checkOnly) n.setOpType("Scatter");
  return absl::OkStatus();
}

void registerScatterElements(OpRegistrar &r) {
  using adapters::noChange;
  r["Scatter"] = sameAsInput;
  r["Scatter"] = kScatterElements;
  r["Scatter"].since(11).upgrade(scatterToElements);
  r["ScatterElements"] = sameAsInput;
  r["ScatterElements"] = kScatterElements;
  r["ScatterElements"].since(16).upgrade(noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "ScatterElements",
                                   {{"reduction", AttrKind::String, 0, "none"}});
  });
  r["ScatterElements"].since(18).upgrade(noChange).downgrade(scatterDown18);
  r["ScatterElements"].since(11).downgrade(elementsToScatter);
}

//===--- ScatterND ---===//

StatusOr<std::vector<Tensor>> kScatterND(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1) || !c.input(2)) return invalid("ScatterND needs indices and updates");
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  auto upd = inputArr(c, 2);
  if (!upd.ok()) return upd.status();
  const auto &idims = c.input(1)->dims();
  int64_t r = a->rank(), q = (int64_t)idims.size();
  if (q < 1) return invalid("ScatterND indices must have rank 1 or more");
  int64_t k = idims.back();
  if (k < 0 || k > r)
    return invalid(absl::StrCat("ScatterND indices' last dim ", k, " exceeds rank(data) ", r));
  std::vector<int64_t> ud(idims.begin(), idims.end() - 1);
  ud.insert(ud.end(), a->dims.begin() + k, a->dims.end());
  if (upd->dims != ud) return invalid("ScatterND updates' shape is not indices.shape[:-1] + data.shape[k:]");
  auto st = stridesOf(a->dims);
  int64_t slice = numElementsOf(llvm::ArrayRef<int64_t>(a->dims).drop_front(k));
  int64_t rows = numElementsOf(llvm::ArrayRef<int64_t>(idims).drop_back());
  std::vector<int64_t> pos;
  pos.reserve((size_t)upd->size());
  for (int64_t j = 0; j < rows; ++j) {
    int64_t off = 0;
    for (int64_t t = 0; t < k; ++t) {
      auto v = normIndex((*ind)[j * k + t], a->dims[t]);
      if (!v)
        return invalid(absl::StrCat("ScatterND index ", (*ind)[j * k + t],
                                    " out of range for data dim #", t, " (", a->dims[t], ")"));
      off += *v * st[t];
    }
    for (int64_t s = 0; s < slice; ++s) pos.push_back(off + s);
  }
  auto red = scatterReduction(c);
  if (!red.ok()) return red.status();
  auto out = scatterInto(*a, *upd, pos, *red, "ScatterND");
  if (!out.ok()) return out.status();
  return one(*out);
}

void registerScatterND(OpRegistrar &r) {
  using adapters::noChange;
  r["ScatterND"] = sameAsInput;
  r["ScatterND"] = kScatterND;
  r["ScatterND"].since(16).upgrade(noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "ScatterND", {{"reduction", AttrKind::String, 0, "none"}});
  });
  r["ScatterND"].since(18).upgrade(noChange).downgrade(scatterDown18);
}

//===--- TensorScatter ---===//

// Writes `update` into a copy of `past_cache` along `axis` from each batch
// row's write index (0 by default); mode circular wraps around the axis.
StatusOr<std::vector<Tensor>> kTensorScatter(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  auto upd = inputArr(c, 1);
  if (!upd.ok()) return upd.status();
  int64_t r = a->rank();
  auto axis = normAxis(c.getInt("axis", -2), r);
  if (!axis || *axis == 0)
    return invalid(absl::StrCat("TensorScatter axis ", c.getInt("axis", -2),
                                " must name a non-batch axis of the rank-", r, " cache"));
  std::string mode = c.getString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return invalid(absl::StrCat("TensorScatter mode '", mode, "' (expected linear or circular)"));
  if (upd->rank() != r) return invalid("TensorScatter update and past_cache differ in rank");
  for (int64_t k = 0; k < r; ++k)
    if (k == *axis ? upd->dims[k] > a->dims[k] : upd->dims[k] != a->dims[k])
      return invalid(absl::StrCat("TensorScatter update dim #", k, " (", upd->dims[k],
                                  ") does not fit past_cache's (", a->dims[k], ")"));
  int64_t batch = a->dims[0], maxLen = a->dims[*axis];
  std::vector<int64_t> w((size_t)batch, 0);
  if (c.input(2)) {
    auto v = intValues(*c.input(2));
    if (!v.ok()) return v.status();
    if ((int64_t)v->size() != batch)
      return invalid(absl::StrCat("TensorScatter write_indices has ", v->size(),
                                  " values for a batch of ", batch));
    w = *v;
  }
  auto st = stridesOf(a->dims);
  int64_t n = upd->size();
  std::vector<int64_t> pos((size_t)n), cnt(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) {
      int64_t v = cnt[k];
      if (k == *axis) {
        int64_t wi = w[cnt[0]];
        if (wi < 0 || (mode == "linear" && wi > maxLen - upd->dims[k]))
          return invalid(absl::StrCat("TensorScatter write index ", wi, " for batch row ",
                                      cnt[0], " does not fit ", upd->dims[k],
                                      " updates in an axis of ", maxLen));
        v = mode == "linear" ? wi + v : (wi % maxLen + v) % maxLen;
      }
      off += v * st[k];
    }
    pos[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < upd->dims[k]) break;
      cnt[k] = 0;
    }
  }
  auto out = scatterInto(*a, *upd, pos, "none", "TensorScatter");
  if (!out.ok()) return out.status();
  return one(*out);
}

void registerTensorScatter(OpRegistrar &r) {
  r["TensorScatter"].infer(sameAsInput).kernel(kTensorScatter);
}

//===--- Pad ---===//

void padRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  int64_t r = in->size();
  auto pads = c.opset >= 11 ? (c.hasInput(1) ? c.inInts(1) : std::nullopt)
                            : c.getInts(c.opset < 2 ? "paddings" : "pads");
  std::optional<std::vector<int64_t>> axes;
  if (c.opset >= 18 && c.hasInput(3)) {
    axes = c.inInts(3);
    if (!axes) return c.setTensor(0, el, Dims(r, nullptr));
  }
  if (!pads) return c.setTensor(0, el, Dims(r, nullptr));
  if (!axes) {
    axes = std::vector<int64_t>(r);
    for (int64_t i = 0; i < r; ++i) (*axes)[i] = i;
  }
  size_t k = axes->size();
  if (pads->size() != 2 * k) return;
  Dims out = *in;
  for (size_t i = 0; i < k; ++i) {
    auto ax = normAxis((*axes)[i], r);
    if (!ax) return;
    out[*ax] = dimAdd(c.ctx, out[*ax], dimAdd(c.ctx, c.c((*pads)[i]), c.c((*pads)[i + k])));
  }
  c.setTensor(0, el, out);
}

/// Input coordinate read by output coordinate `o` of an axis of `dim`
/// elements padded by `begin` in front, per Pad's mode; -1 for the constant.
/// Note [Pad modes]: reflect mirrors without repeating the edge (period
/// 2 * (dim - 1), so pads wider than the axis keep reflecting, as numpy's
/// pad does), edge repeats the edge, wrap is periodic.
int64_t padSource(int64_t o, int64_t begin, int64_t dim, llvm::StringRef mode) {
  int64_t in = o - begin;
  if (in >= 0 && in < dim) return in;
  if (mode == "constant") return -1;
  if (mode == "edge") return in < 0 ? 0 : dim - 1;
  if (mode == "wrap") return ((in % dim) + dim) % dim;
  if (dim == 1) return 0;
  int64_t m = 2 * (dim - 1), t = ((in % m) + m) % m;
  return t < dim ? t : m - t;
}

StatusOr<std::vector<Tensor>> kPad(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
  std::vector<int64_t> pads;
  if (atLeast(c, 11)) {
    if (!c.input(1)) return invalid("Pad without operand #1 (pads)");
    auto p = intValues(*c.input(1));
    if (!p.ok()) return p.status();
    pads = *p;
  } else {
    const char *name = c.opset < 2 ? "paddings" : "pads";
    auto p = c.getInts(name);
    if (!p) return invalid(absl::StrCat("Pad without attribute ", name));
    pads = *p;
  }
  std::vector<int64_t> axes;
  if (atLeast(c, 18) && c.input(3)) {
    auto v = intValues(*c.input(3));
    if (!v.ok()) return v.status();
    std::vector<bool> seen(r, false);
    for (int64_t x : *v) {
      auto ax = normAxis(x, r);
      if (!ax || seen[*ax])
        return invalid(absl::StrCat("Pad axes: ", x, ax ? " repeated" : " out of range for rank ",
                                    ax ? "" : std::to_string(r)));
      seen[*ax] = true;
      axes.push_back(*ax);
    }
  } else {
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  }
  size_t na = axes.size();
  if (pads.size() != 2 * na)
    return invalid(absl::StrCat("Pad pads has ", pads.size(), " values for ", na,
                                " axes (expected ", 2 * na, ")"));
  std::string mode = c.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(mode == "wrap" && atLeast(c, 19)))
    return invalid(absl::StrCat("Pad mode '", mode, "' (expected constant, reflect, edge",
                                atLeast(c, 19) ? " or wrap)" : " or, from opset 19, wrap)"));
  // The constant: operand #2 from opset 11 (empty name: 0), else the float
  // attribute `value`.
  Arr fill;
  if (atLeast(c, 11) && c.input(2)) {
    auto v = inputArr(c, 2);
    if (!v.ok()) return v.status();
    if (v->dt != a->dt || v->size() != 1)
      return invalid("Pad constant_value must be one element of the data's type");
    fill = std::move(*v);
  } else {
    auto v = scalarOf(a->dt, atLeast(c, 11) ? 0.0 : (double)c.getFloat("value", 0));
    if (!v.ok()) return v.status();
    fill = std::move(*v);
  }
  std::vector<int64_t> begin(r, 0), end(r, 0), od = a->dims;
  for (size_t j = 0; j < na; ++j) {
    int64_t ax = axes[j], b = pads[j], e = pads[j + na];
    int64_t d = a->dims[ax], o;
    if (__builtin_add_overflow(d, b, &o) || __builtin_add_overflow(o, e, &o) || o < 0)
      return invalid(absl::StrCat("Pad pads ", b, ", ", e, " on axis ", ax, " of size ", d,
                                  " give no valid size"));
    if (mode != "constant" && (b < 0 || e < 0) && (b > 0 || e > 0))
      return unsupported(absl::StrCat("Pad mode ", mode, " with a negative and a positive pad on "
                                      "axis ", ax));
    if (mode != "constant" && d == 0 && o > 0)
      return invalid(absl::StrCat("Pad mode ", mode, " on the empty axis ", ax));
    begin[ax] = b;
    end[ax] = e;
    od[ax] = o;
  }
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  // No per-axis maps for an empty result: one of its dims may be huge.
  if (numElementsOf(od) == 0) return one(Arr::make(a->dt, od));
  std::vector<std::vector<int64_t>> map(r);
  for (int64_t k = 0; k < r; ++k) {
    map[k].resize((size_t)od[k]);
    for (int64_t o = 0; o < od[k]; ++o) map[k][o] = padSource(o, begin[k], a->dims[k], mode);
  }
  Arr ext = withFill(*a, fill);
  return one(takeElems(ext, od, mappedOffsets(*a, od, map)));
}

// Pad-11: pads became operand #1 (int64), value operand #2 (a scalar of the
// data's type).
absl::Status padUp11(Node &n, AdapterContext &c) {
  absl::Status err;
  const Attribute *pads = plainAttr(n, "pads", AttrKind::Ints, err);
  if (!err.ok()) return err;
  const Attribute *value = plainAttr(n, "value", AttrKind::Float, err);
  if (!err.ok()) return err;
  if (!pads) return absl::FailedPreconditionError("no attribute 'pads'");
  DataType dt = adapters::operandElemType(n, 0);
  if (value && value->f != 0 && dt == DataType::Undefined)
    return absl::FailedPreconditionError(
        "the value becomes an operand of the data's element type, which is unknown (infer "
        "shapes first)");
  if (c.checkOnly) return absl::OkStatus();
  n.addOperand(int64Constant(n, c, "pads", std::vector<int64_t>(pads->ints.begin(), pads->ints.end())));
  if (value && value->f != 0) n.addOperand(adapters::scalarConstant(n, c, "value", dt, value->f));
  n.removeAttr("pads");
  n.removeAttr("value");
  return absl::OkStatus();
}

absl::Status padDown11(Node &n, AdapterContext &c) {
  auto pads = constantInts(n, c, 1, "attribute 'pads'");
  if (!pads.ok()) return pads.status();
  float value = 0;
  bool hasValue = n.numOperands() > 2 && n.operand(2);
  if (hasValue) {
    auto v = adapters::constantOperandValues(n, c, 2, "attribute 'value'");
    if (!v.ok()) return v.status();
    if (v->size() != 1) return absl::FailedPreconditionError("operand #2 (constant_value) is not one value");
    value = (float)(*v)[0];
    if ((double)value != (*v)[0] && !std::isnan((*v)[0]))
      return absl::FailedPreconditionError(absl::StrCat(
          "constant_value ", (*v)[0], " is not exactly a float, as attribute 'value' must be"));
  }
  if (n.numOperands() > 3 && n.operand(3))
    return absl::FailedPreconditionError("operand #3 (axes) does not exist at opset 2");
  if (c.checkOnly) return absl::OkStatus();
  adapters::dropOperand(n, 2);
  adapters::dropOperand(n, 1);
  n.newAttr("pads").setInts(std::move(*pads));
  if (hasValue && value != 0) n.newAttr("value").setFloat(value);
  return absl::OkStatus();
}

// Pad-19 added mode "wrap".
absl::Status padDown19(Node &n, AdapterContext &) {
  auto m = adapters::stringAttrOr(n, "mode", "constant");
  if (!m.ok()) return m.status();
  if (*m == "wrap") return absl::FailedPreconditionError("mode \"wrap\" first exists at opset 19");
  return absl::OkStatus();
}

void registerPad(OpRegistrar &r) {
  using adapters::noChange;
  r["Pad"].since(2).upgrade(renameAttr<kPaddings, kPads>).downgrade(renameAttr<kPads, kPaddings>);
  r["Pad"].infer(padRule).kernel(kPad);
  r["Pad"].since(11).upgrade(padUp11).downgrade(padDown11);
  r["Pad"].since(18).upgrade(noChange).downgrade(
      [](Node &n, AdapterContext &c) { return adapters::olderFormOnly(n, c, "Pad", {}); });
  r["Pad"].since(19).upgrade(noChange).downgrade(padDown19);
}

//===--- Tile ---===//

void tileRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  auto reps = c.inData(1);
  if (!in) return c.setTensor(0, el, std::nullopt);
  if (!reps || reps->size() != in->size()) return c.setTensor(0, el, Dims(in->size(), nullptr));
  Dims out;
  for (size_t i = 0; i < in->size(); ++i) out.push_back(dimMul(c.ctx, (*in)[i], (*reps)[i]));
  c.setTensor(0, el, out);
}

StatusOr<std::vector<Tensor>> kTile(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("Tile without repeats");
  auto rep = intValues(*c.input(1));
  if (!rep.ok()) return rep.status();
  int64_t r = a->rank();
  if ((int64_t)rep->size() != r) return invalid("Tile repeats");
  std::vector<int64_t> od(r);
  for (int64_t k = 0; k < r; ++k) {
    if ((*rep)[k] < 0) return invalid("Tile negative repeat");
    if (a->dims[k] && (*rep)[k] > INT64_MAX / a->dims[k])
      return absl::ResourceExhaustedError("Tile output dims overflow");
    od[k] = a->dims[k] * (*rep)[k];
  }
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  auto ist = stridesOf(a->dims);
  int64_t n = numElementsOf(od);
  std::vector<int64_t> idx((size_t)n), cnt(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t k = 0; k < r; ++k) off += (cnt[k] % a->dims[k]) * ist[k];
    idx[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < od[k]) break;
      cnt[k] = 0;
    }
  }
  return one(takeElems(*a, od, idx));
}

// Tile-6: Tile-1's scalar operands `tiles` and `axis` (of the input's type)
// became one int64 operand `repeats` with a count per axis.
absl::Status tileUp6(Node &n, AdapterContext &c) {
  if (n.numOperands() != 3 || !n.operand(1) || !n.operand(2))
    return absl::FailedPreconditionError("Tile-1 needs operands 'tiles' and 'axis'");
  int64_t vals[2];
  for (unsigned k = 1; k <= 2; ++k) {
    Tensor scratch;
    const Tensor *t = constantOf(n.operand(k), scratch);
    auto d = t && t->numElements() == 1 ? t->values<double>()
                                        : absl::StatusOr<std::vector<double>>(absl::NotFoundError(""));
    if (!d.ok() || (*d)[0] != std::floor((*d)[0]) || std::fabs((*d)[0]) > 1e15)
      return absl::FailedPreconditionError(absl::StrCat(
          "operand #", k, " ('", n.operand(k)->name().str(),
          "') is not a constant integral scalar; opset 6 needs it in the constant 'repeats'"));
    vals[k - 1] = (int64_t)(*d)[0];
  }
  const Type *t = n.operand(0) ? n.operand(0)->type() : nullptr;
  int64_t rank = t && t->hasShape() ? t->rank() : -1;
  if (rank < 0)
    return absl::FailedPreconditionError(
        "the rank of operand #0 is unknown; opset 6 needs a repeat count per axis (run "
        "infer-shapes first)");
  int64_t axis = vals[1] < 0 ? vals[1] + rank : vals[1];
  if (axis < 0 || axis >= rank || vals[0] < 0)
    return absl::FailedPreconditionError(absl::StrCat(
        "tiles=", vals[0], " along axis=", vals[1], " does not fit an input of rank ", rank));
  if (c.checkOnly) return absl::OkStatus();
  std::vector<int64_t> reps(rank, 1);
  reps[axis] = vals[0];
  Tensor rt;
  rt.setDataType(DataType::Int64);
  rt.setDims({rank});
  rt.setTyped(Tensor::TypedField::Int64);
  rt.int64Data.mut() = std::move(reps);
  Value *old[2] = {n.operand(1), n.operand(2)};
  Value *rv = adapters::newConstant(n, c, "repeats", std::move(rt));
  n.setOperands({n.operand(0), rv});
  for (int k = 0, e = old[0] == old[1] ? 1 : 2; k < e; ++k)
    adapters::eraseIfDeadConstant(old[k]);
  return absl::OkStatus();
}

// Down: repeats with at most one count other than 1 is one Tile-1 (several
// would need a chain of Tiles: not done).
absl::Status tileDown6(Node &n, AdapterContext &c) {
  Value *v = n.numOperands() > 1 ? n.operand(1) : nullptr;
  if (!v) return absl::FailedPreconditionError("no operand 'repeats'");
  Tensor scratch;
  const Tensor *t = constantOf(v, scratch);
  auto reps = t ? t->values<int64_t>()
                : absl::StatusOr<std::vector<int64_t>>(absl::NotFoundError(""));
  if (!reps.ok())
    return absl::FailedPreconditionError(absl::StrCat(
        "operand #1 ('", v->name().str(), "') is not a constant; opset ", c.to,
        " needs constant 'tiles' and 'axis'"));
  int64_t axis = 0, tiles = 1, others = 0;
  for (size_t i = 0; i < reps->size(); ++i)
    if ((*reps)[i] != 1) {
      axis = (int64_t)i;
      tiles = (*reps)[i];
      ++others;
    }
  if (others > 1)
    return absl::FailedPreconditionError(absl::StrCat(
        "repeats has ", others, " counts other than 1; Tile-1 repeats along one axis (a chain "
        "of Tiles is not done)"));
  const Type *in = n.operand(0) ? n.operand(0)->type() : nullptr;
  DataType dt = in && in->hasElemType() ? in->elemType() : DataType::Undefined;
  if (dt != DataType::Float && dt != DataType::Double && dt != DataType::Float16)
    return absl::FailedPreconditionError(absl::StrCat(
        "Tile-1's 'tiles' and 'axis' have the input's type, which must be a known float type, "
        "not ", in && in->hasElemType() ? dataTypeName(dt).str() : std::string("unknown")));
  if (c.checkOnly) return absl::OkStatus();
  Value *sc[2];
  int64_t vals[2] = {tiles, axis};
  const char *names[2] = {"tiles", "axis"};
  for (int k = 0; k < 2; ++k) {
    Tensor s;
    s.setDims({});
    if (dt == DataType::Double) {
      s.setDataType(DataType::Double);
      s.setTyped(Tensor::TypedField::Double);
      s.doubleData.mut() = {(double)vals[k]};
    } else {
      s.setDataType(DataType::Float);
      s.setTyped(Tensor::TypedField::Float);
      s.floatData.mut() = {(float)vals[k]};
    }
    sc[k] = c.constant(n, names[k], std::move(s));
  }
  n.setOperands({n.operand(0), sc[0], sc[1]});
  adapters::eraseIfDeadConstant(v);
  return absl::OkStatus();
}

void registerTile(OpRegistrar &r) {
  r["Tile"].infer(tileRule).kernel(kTile);
  r["Tile"].since(6).upgrade(tileUp6).downgrade(tileDown6);
}

//===--- Transpose ---===//

void transposeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  auto perm = c.getInts("perm");
  int64_t r = in->size();
  std::vector<int64_t> p(r);
  if (perm) {
    if ((int64_t)perm->size() != r) return;
    p = *perm;
  } else {
    for (int64_t i = 0; i < r; ++i) p[i] = r - 1 - i;
  }
  Dims out;
  std::vector<bool> seen(r, false);
  for (int64_t a : p) {
    auto n = normAxis(a, r);
    if (!n || seen[*n]) return;
    seen[*n] = true;
    out.push_back((*in)[*n]);
  }
  c.setTensor(0, el, out);
}

StatusOr<std::vector<Tensor>> kTranspose(const KernelCall &c) {
  const Tensor *in = c.input(0);
  if (!in) return invalid("missing input #0");
  const std::vector<int64_t> &dims = in->dims();
  int64_t r = (int64_t)dims.size();
  std::vector<int64_t> perm;
  if (auto p = c.getInts("perm")) perm = *p;
  else for (int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
  if ((int64_t)perm.size() != r) return invalid("Transpose perm");
  std::vector<bool> seen(r, false);
  std::vector<int64_t> od(r);
  for (int64_t k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= r || seen[perm[k]]) return invalid("Transpose perm");
    seen[perm[k]] = true;
    od[k] = dims[perm[k]];
  }
  auto ist = stridesOf(dims);
  std::vector<int64_t> st(r);
  for (int64_t k = 0; k < r; ++k) st[k] = ist[perm[k]];
  if (auto v = byteView(*in)) { // Note [Data movement in bytes]
    std::string out((size_t)std::max<int64_t>(numElementsOf(od), 0) * v->es, '\0');
    stridedCopy(v->data, 0, st, od, v->es, out.data());
    std::vector<Tensor> res;
    res.push_back(makeTensor(in->dataType(), std::move(od), std::move(out)));
    return res;
  }
  auto a = fromTensor(*in);
  if (!a.ok()) return a.status();
  int64_t n = a->size();
  std::vector<int64_t> idx((size_t)n), cnt(r, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < n; ++e) {
    idx[e] = off;
    for (int64_t k = r - 1; k >= 0; --k) {
      if (++cnt[k] < od[k]) { off += st[k]; break; }
      off -= st[k] * (cnt[k] - 1);
      cnt[k] = 0;
    }
  }
  return one(takeElems(*a, od, idx));
}

/// Note [Validity checks]: perm must be a permutation of 0 .. rank-1 (no
/// negative entries: ONNX refuses them too), as long as the declared rank.
std::string transposeValidity(const NodeContext &c) {
  auto perm = c.getInts("perm");
  if (!perm) return "";
  int64_t r = (int64_t)perm->size();
  auto in = declaredDims(c.node, 0);
  if (in) r = (int64_t)in->size();
  std::vector<bool> seen(perm->size(), false);
  for (size_t k = 0; k < perm->size(); ++k) {
    int64_t a = (*perm)[k];
    if (a < 0 || a >= (int64_t)perm->size() || a >= r)
      return absl::StrCat("attribute \"perm\": entry #", k, " is ", a, ", outside [0, ",
                          std::min<int64_t>(r, perm->size()) - 1, "]",
                          in ? absl::StrCat(" (input #0 has rank ", r, ")") : "");
    if (seen[a]) return absl::StrCat("attribute \"perm\": entry #", k, " repeats axis ", a);
    seen[a] = true;
  }
  if (in && (int64_t)perm->size() != r)
    return absl::StrCat("attribute \"perm\" has ", perm->size(), " entries, input #0 has rank ", r);
  return "";
}

void registerTranspose(OpRegistrar &r) {
  r["Transpose"].infer(transposeRule).kernel(kTranspose).validate(transposeValidity);
}

//===--- Compress ---===//

StatusOr<std::vector<Tensor>> kCompress(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("Compress without condition");
  auto cond = intValues(*c.input(1));
  if (!cond.ok()) return cond.status();
  std::vector<int64_t> idx, od;
  if (const Attribute *ax = c.attr("axis")) {
    auto axis = normAxis(ax->i, a->rank());
    if (!axis) return invalid("Compress axis");
    int64_t dim = a->dims[*axis], outer = 1, inner = 1;
    for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
    for (int64_t k = *axis + 1; k < a->rank(); ++k) inner *= a->dims[k];
    std::vector<int64_t> sel;
    for (int64_t j = 0; j < dim && j < (int64_t)cond->size(); ++j) if ((*cond)[j]) sel.push_back(j);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j : sel)
        for (int64_t i = 0; i < inner; ++i) idx.push_back((o * dim + j) * inner + i);
    od = a->dims;
    od[*axis] = (int64_t)sel.size();
  } else {
    for (int64_t j = 0; j < a->size() && j < (int64_t)cond->size(); ++j)
      if ((*cond)[j]) idx.push_back(j);
    od = {(int64_t)idx.size()};
  }
  return one(takeElems(*a, od, idx));
}

void registerCompress(OpRegistrar &r) {
  r["Compress"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    const Attribute *a = c.attr("axis");
    if (!in) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (!a) return c.setTensor(0, c.inElem(0), Dims{nullptr});
    auto ax = normAxis(a->i, in->size());
    if (!ax) return;
    (*in)[*ax] = nullptr;
    c.setTensor(0, c.inElem(0), in);
  };
  r["Compress"] = kCompress;
}

//===--- NonZero ---===//

StatusOr<std::vector<Tensor>> kNonZero(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  std::vector<int64_t> hits;
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    for (size_t k = 0; k < v.size(); ++k) if (v[k] != T(0)) hits.push_back((int64_t)k);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  // A scalar counts as one element of a 1-D tensor (onnxruntime, and numpy's
  // nonzero, which the ONNX reference calls): [1, 1] when it is nonzero.
  int64_t r = std::max<int64_t>(a->rank(), 1), n = (int64_t)hits.size();
  // rank x hits can be far more than the input (a rank-1000 tensor of ones).
  Status sz = checkOutputSize(c, DataType::Int64, {r, n});
  if (!sz.ok()) return sz;
  Arr out = Arr::make(DataType::Int64, {r, n});
  auto strides = a->rank() ? stridesOf(a->dims) : std::vector<int64_t>{1};
  for (int64_t h = 0; h < n; ++h) {
    int64_t rem = hits[h];
    for (int64_t k = 0; k < r; ++k) {
      out.i[k * n + h] = rem / strides[k];
      rem %= strides[k];
    }
  }
  return one(out);
}

void registerNonZero(OpRegistrar &r) {
  r["NonZero"] = [](InferCtx &c) {
    // A scalar input gives one row, like a 1-D input (see kNonZero).
    int64_t rank = c.inRank(0);
    c.setTensor(0, kInt64, Dims{rank >= 0 ? c.c(std::max<int64_t>(rank, 1)) : nullptr, nullptr});
  };
  r["NonZero"] = kNonZero;
}

//===--- OneHot ---===//

StatusOr<std::vector<Tensor>> kOneHot(const KernelCall &c) {
  if (!c.input(0) || !c.input(1) || !c.input(2)) return invalid("OneHot inputs");
  auto ind = c.input(0)->values<double>();
  auto depthV = c.input(1)->values<double>();
  auto vals = fromTensor(*c.input(2));
  if (!ind.ok()) return ind.status();
  if (!depthV.ok() || depthV->size() != 1) return invalid("OneHot depth");
  if (!vals.ok() || vals->size() != 2) return invalid("OneHot values");
  double depthD = (*depthV)[0];
  // Checked as a double: NaN or a value past 2^63 has no int64 value.
  if (!(depthD >= 1) || depthD > 9.0e18) return invalid("OneHot depth");
  int64_t depth = (int64_t)depthD;
  std::vector<int64_t> id = c.input(0)->dims();
  int64_t r = (int64_t)id.size() + 1;
  auto axis = normAxis(c.getInt("axis", -1), r);
  if (!axis) return invalid("OneHot axis");
  std::vector<int64_t> od = id;
  od.insert(od.begin() + *axis, depth);
  Status sz = checkOutputSize(c, vals->dt, od);
  if (!sz.ok()) return sz;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= id[k];
  for (int64_t k = *axis; k < (int64_t)id.size(); ++k) inner *= id[k];
  std::vector<int64_t> idx((size_t)numElementsOf(od), 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i) {
        double dv = (*ind)[o * inner + i];
        // Out-of-range (and NaN) indices select no position.
        int64_t v = std::isfinite(dv) && std::fabs(dv) < 9.0e18 ? (int64_t)dv : -1 - depth;
        if (v < 0) v += depth;
        idx[(o * depth + d) * inner + i] = v == d ? 1 : 0;
      }
  return one(takeElems(*vals, od, idx));
}

void registerOneHot(OpRegistrar &r) {
  r["OneHot"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int32_t el = c.inElem(2);
    if (!in) return c.setTensor(0, el, std::nullopt);
    int64_t rr = in->size() + 1;
    auto ax = normAxis(c.getInt("axis", -1), rr);
    if (!ax) return;
    const DimExpr *depth = nullptr;
    if (const Dims *d = c.inData(1); d && d->size() == 1) depth = (*d)[0];
    in->insert(in->begin() + *ax, depth);
    c.setTensor(0, el, in);
  };
  r["OneHot"] = kOneHot;
}

//===--- Trilu ---===//

StatusOr<std::vector<Tensor>> kTrilu(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->rank() < 2) return invalid("Trilu rank");
  int64_t k = 0;
  if (c.input(1)) {
    auto v = intValues(*c.input(1));
    if (!v.ok() || v->size() != 1) return invalid("Trilu k");
    k = (*v)[0];
  }
  bool upper = c.getInt("upper", 1) != 0;
  int64_t R = a->dims[a->rank() - 2], C = a->dims.back();
  int64_t n = a->size();
  std::vector<int64_t> idx((size_t)n);
  Arr zero = Arr::make(a->dt, {1});
  // Index n points at the appended zero.
  for (int64_t e = 0; e < n; ++e) {
    int64_t j = e % C, i = (e / C) % R;
    bool keep = upper ? (j - i >= k) : (j - i <= k);
    idx[e] = keep ? e : n;
  }
  Arr ext = *a;
  switch (ext.kind()) {
  case CK::F32: ext.f.push_back(0); break;
  case CK::F64: ext.d.push_back(0); break;
  case CK::I64: ext.i.push_back(0); break;
  case CK::U64: ext.u.push_back(0); break;
  case CK::Str: ext.s.push_back(""); break;
  default: return unsupported("Trilu type");
  }
  return one(takeElems(ext, a->dims, idx));
}

void registerTrilu(OpRegistrar &r) {
  r["Trilu"] = sameAsInput;
  r["Trilu"] = kTrilu;
}

//===--- TopK ---===//

// The k largest (or smallest) along an axis, in order; ties keep the lower
// index first, NaN counts as larger than every number (numpy's sort order).
StatusOr<std::vector<Tensor>> kTopK(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
  auto axis = normAxis(c.getInt("axis", -1), r);
  if (!axis) return invalid(absl::StrCat("TopK axis ", c.getInt("axis", -1), " out of range for rank ", r));
  int64_t k;
  if (atLeast(c, 10)) {
    if (!c.input(1)) return invalid("TopK without operand #1 (K)");
    auto v = intValues(*c.input(1));
    if (!v.ok()) return v.status();
    if (v->size() != 1) return invalid("TopK K must hold one value");
    k = (*v)[0];
  } else {
    if (!c.attr("k")) return invalid("TopK without attribute k");
    k = c.getInt("k", 0);
  }
  int64_t dim = a->dims[*axis];
  if (k < 0 || k > dim)
    return invalid(absl::StrCat("TopK k = ", k, " outside [0, ", dim, "] (axis ", *axis, ")"));
  bool largest = !atLeast(c, 11) || c.getInt("largest", 1) != 0;
  std::vector<int64_t> od = a->dims;
  od[*axis] = k;
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  int64_t outer = 1, inner = 1;
  for (int64_t t = 0; t < *axis; ++t) outer *= a->dims[t];
  for (int64_t t = *axis + 1; t < r; ++t) inner *= a->dims[t];
  Arr ind = Arr::make(DataType::Int64, od);
  std::vector<int64_t> idx((size_t)numElementsOf(od));
  Status st = visitNumeric(a->kind(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const auto &v = a->template vec<T>();
    std::vector<int64_t> order((size_t)dim);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * dim * inner + i;
        auto before = [&](int64_t p, int64_t q) {
          T x = v[base + p * inner], y = v[base + q * inner];
          bool nx = isNanV(x), ny = isNanV(y);
          if (nx || ny) return nx && ny ? p < q : (largest ? nx : ny);
          if (x != y) return largest ? x > y : x < y;
          return p < q;
        };
        for (int64_t j = 0; j < dim; ++j) order[j] = j;
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          int64_t out = (o * k + j) * inner + i;
          ind.i[out] = order[j];
          idx[out] = base + order[j] * inner;
        }
      }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  std::vector<Tensor> outs;
  outs.push_back(toTensor(takeElems(*a, od, idx)));
  outs.push_back(toTensor(ind));
  return outs;
}

// TopK-10: the attribute k became the operand K (int64, shape [1]).
absl::Status topkUp10(Node &n, AdapterContext &c) {
  absl::Status err;
  const Attribute *k = plainAttr(n, "k", AttrKind::Int, err);
  if (!err.ok()) return err;
  if (!k) return absl::FailedPreconditionError("no attribute 'k'");
  if (c.checkOnly) return absl::OkStatus();
  Value *v = int64Constant(n, c, "k", {k->i});
  n.removeAttr("k");
  n.addOperand(v);
  return absl::OkStatus();
}

absl::Status topkDown10(Node &n, AdapterContext &c) {
  auto k = constantInts(n, c, 1, "attribute 'k'");
  if (!k.ok()) return k.status();
  if (k->size() != 1) return absl::FailedPreconditionError("operand #1 (K) has not one element");
  if (c.checkOnly) return absl::OkStatus();
  adapters::dropOperand(n, 1);
  adapters::setIntAttr(n, "k", (*k)[0]);
  return absl::OkStatus();
}

void registerTopK(OpRegistrar &r) {
  using adapters::noChange;
  r["TopK"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    if (!in) {
      c.setTensor(0, c.inElem(0), std::nullopt);
      c.setTensor(1, kInt64, std::nullopt);
      return;
    }
    auto ax = normAxis(c.getInt("axis", -1), in->size());
    if (!ax) return;
    const DimExpr *k = nullptr;
    if (c.opset < 10) k = c.c(c.getInt("k", 0));
    else if (const Dims *d = c.inData(1); d && d->size() == 1) k = (*d)[0];
    (*in)[*ax] = k;
    c.setTensor(0, c.inElem(0), in);
    c.setTensor(1, kInt64, in);
  };
  r["TopK"] = kTopK;
  r["TopK"].since(10).upgrade(topkUp10).downgrade(topkDown10);
  r["TopK"].since(11).upgrade(noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "TopK",
                                   {{"largest", AttrKind::Int, 1}, {"sorted", AttrKind::Int, 1}});
  });
}

//===--- Unique ---===//

void uniqueRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  const Attribute *axis = c.attr("axis");
  if (!axis) {
    c.setTensor(0, el, Dims{nullptr});
    c.setTensor(1, kInt64, Dims{nullptr});
    // One inverse index per element of the flattened input.
    const DimExpr *n = nullptr;
    if (x) {
      n = c.c(1);
      for (const DimExpr *d : *x) n = dimMul(c.ctx, n, d);
    }
    c.setTensor(2, kInt64, Dims{n});
    c.setTensor(3, kInt64, Dims{nullptr});
    return;
  }
  if (!x) {
    c.setTensor(0, el, std::nullopt);
    for (unsigned i = 1; i < 4; ++i) c.setTensor(i, kInt64, Dims{nullptr});
    return;
  }
  auto ax = normAxis(axis->i, x->size());
  if (!ax) return;
  Dims y = *x;
  y[*ax] = nullptr;
  c.setTensor(0, el, y);
  c.setTensor(1, kInt64, Dims{nullptr});
  c.setTensor(2, kInt64, Dims{(*x)[*ax]});
  c.setTensor(3, kInt64, Dims{nullptr});
}

/// Three-way comparison of elements: NaN after every number and equal to
/// NaN (numpy's unique collapses NaNs).
template <typename T> int cmpElem(const T &x, const T &y) {
  if constexpr (std::is_floating_point_v<T>) {
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) return (int)nx - (int)ny;
  }
  return x < y ? -1 : y < x ? 1 : 0;
}

/// Unique over items: the elements of `v`, or with an axis its slices
/// (item j is elements (o * m + j) * inner + i, compared lexicographically
/// over o then i). Fills `perm` with the items in ascending order (stable),
/// and `start` with where each run of equal items begins in it.
template <typename T>
void uniqueRuns(const std::vector<T> &v, int64_t m, int64_t outer, int64_t inner,
                std::vector<int64_t> &perm, std::vector<int64_t> &start) {
  auto cmp = [&](int64_t p, int64_t q) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (int c3 = cmpElem(v[(o * m + p) * inner + i], v[(o * m + q) * inner + i])) return c3;
    return 0;
  };
  perm.resize((size_t)m);
  for (int64_t j = 0; j < m; ++j) perm[j] = j;
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
  for (int64_t j = 0; j < m; ++j)
    if (j == 0 || cmp(perm[j - 1], perm[j]) != 0) start.push_back(j);
}

StatusOr<std::vector<Tensor>> kUnique(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank(), m = a->size(), outer = 1, inner = 1, ax = -1;
  if (const Attribute *at = c.attr("axis")) {
    auto n = normAxis(at->i, r);
    if (!n) return invalid(absl::StrCat("Unique axis ", at->i, " out of range for rank ", r));
    ax = *n;
    m = a->dims[ax];
    for (int64_t t = 0; t < ax; ++t) outer *= a->dims[t];
    for (int64_t t = ax + 1; t < r; ++t) inner *= a->dims[t];
  }
  std::vector<int64_t> perm, start;
  switch (a->kind()) {
  case CK::F32: uniqueRuns(a->f, m, outer, inner, perm, start); break;
  case CK::F64: uniqueRuns(a->d, m, outer, inner, perm, start); break;
  case CK::I64: uniqueRuns(a->i, m, outer, inner, perm, start); break;
  case CK::U64: uniqueRuns(a->u, m, outer, inner, perm, start); break;
  case CK::Str: uniqueRuns(a->s, m, outer, inner, perm, start); break;
  default: return unsupported("Unique of this element type");
  }
  int64_t g = (int64_t)start.size();
  // Runs in ascending order, or (sorted = 0) in order of first occurrence;
  // the stable sort makes a run's first item its first occurrence.
  std::vector<int64_t> runs((size_t)g);
  for (int64_t j = 0; j < g; ++j) runs[j] = j;
  if (c.getInt("sorted", 1) == 0)
    std::sort(runs.begin(), runs.end(),
              [&](int64_t p, int64_t q) { return perm[start[p]] < perm[start[q]]; });
  Arr first = Arr::make(DataType::Int64, {g}), counts = Arr::make(DataType::Int64, {g});
  Arr inverse = Arr::make(DataType::Int64, {m});
  for (int64_t j = 0; j < g; ++j) {
    int64_t s = start[runs[j]], e = runs[j] + 1 < g ? start[runs[j] + 1] : m;
    first.i[j] = perm[s];
    counts.i[j] = e - s;
    for (int64_t t = s; t < e; ++t) inverse.i[perm[t]] = j;
  }
  std::vector<int64_t> od = ax < 0 ? std::vector<int64_t>{g} : a->dims, idx;
  if (ax >= 0) od[ax] = g;
  idx.reserve((size_t)(g * outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < g; ++j)
      for (int64_t i = 0; i < inner; ++i) idx.push_back((o * m + first.i[j]) * inner + i);
  std::vector<Tensor> outs;
  outs.push_back(toTensor(takeElems(*a, od, idx)));
  outs.push_back(toTensor(first));
  outs.push_back(toTensor(inverse));
  outs.push_back(toTensor(counts));
  return outs;
}

void registerUnique(OpRegistrar &r) {
  r["Unique"].infer(uniqueRule).kernel(kUnique);
}

//===--- DepthToSpace, SpaceToDepth ---===//

StatusOr<std::vector<Tensor>> depthSpace(const KernelCall &c, bool toSpace) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (a->rank() != 4) return invalid("needs 4-D");
  int64_t b = c.getInt("blocksize", 0);
  // b*b and H*b below must not overflow; no real block is this big.
  if (b <= 0 || b > (int64_t(1) << 20)) return invalid("blocksize");
  int64_t N = a->dims[0], C = a->dims[1], H = a->dims[2], W = a->dims[3];
  bool crd = c.getString("mode", "DCR") == "CRD";
  std::vector<int64_t> od, idx;
  if (toSpace) {
    if (C % (b * b)) return invalid("channels");
    int64_t oc = C / (b * b);
    od = {N, oc, H * b, W * b};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t y = 0; y < H * b; ++y)
          for (int64_t x = 0; x < W * b; ++x) {
            int64_t by = y % b, bx = x % b;
            int64_t ic = crd ? ch * b * b + by * b + bx : (by * b + bx) * oc + ch;
            idx.push_back(((n * C + ic) * H + y / b) * W + x / b);
          }
  } else {
    if (H % b || W % b) return invalid("spatial dims");
    int64_t oh = H / b, ow = W / b, oc = C * b * b;
    od = {N, oc, oh, ow};
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < oc; ++ch)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            int64_t ic = ch % C, blk = ch / C, by = blk / b, bx = blk % b;
            idx.push_back(((n * C + ic) * H + y * b + by) * W + x * b + bx);
          }
  }
  return one(takeElems(*a, od, idx));
}

StatusOr<std::vector<Tensor>> kDepthToSpace(const KernelCall &c) { return depthSpace(c, true); }

StatusOr<std::vector<Tensor>> kSpaceToDepth(const KernelCall &c) { return depthSpace(c, false); }

void registerDepthSpace(OpRegistrar &r) {
  using adapters::noChange;
  r["DepthToSpace"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int64_t b = c.getInt("blocksize", 0);
    if (!in || in->size() != 4 || b <= 0) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (b > (1 << 20)) return;
    Dims o = {(*in)[0], dimFloorDiv(c.ctx, (*in)[1], c.c(b * b)), dimMul(c.ctx, (*in)[2], c.c(b)),
              dimMul(c.ctx, (*in)[3], c.c(b))};
    c.setTensor(0, c.inElem(0), o);
  };
  r["DepthToSpace"] = kDepthToSpace;
  r["DepthToSpace"].since(11).upgrade(noChange).downgrade([](Node &n, AdapterContext &c) {
    return adapters::olderFormOnly(n, c, "DepthToSpace", {{"mode", AttrKind::String, 0, "DCR"}});
  });
  r["SpaceToDepth"] = [](InferCtx &c) {
    auto in = c.inShape(0);
    int64_t b = c.getInt("blocksize", 0);
    if (!in || in->size() != 4 || b <= 0) return c.setTensor(0, c.inElem(0), std::nullopt);
    if (b > (1 << 20)) return;
    Dims o = {(*in)[0], dimMul(c.ctx, (*in)[1], c.c(b * b)), dimFloorDiv(c.ctx, (*in)[2], c.c(b)),
              dimFloorDiv(c.ctx, (*in)[3], c.c(b))};
    c.setTensor(0, c.inElem(0), o);
  };
  r["SpaceToDepth"] = kSpaceToDepth;
}

//===--- ReverseSequence ---===//

StatusOr<std::vector<Tensor>> kReverseSequence(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("ReverseSequence without sequence_lens");
  auto lens = intValues(*c.input(1));
  if (!lens.ok()) return lens.status();
  int64_t r = a->rank(), bAx = c.getInt("batch_axis", 1), tAx = c.getInt("time_axis", 0);
  if (r < 2) return invalid(absl::StrCat("ReverseSequence input of rank ", r, " (needs 2 or more)"));
  if ((bAx != 0 && bAx != 1) || (tAx != 0 && tAx != 1) || bAx == tAx)
    return invalid(absl::StrCat("ReverseSequence batch_axis ", bAx, " and time_axis ", tAx,
                                " must be 0 and 1 in some order"));
  int64_t B = a->dims[bAx], T = a->dims[tAx];
  if ((int64_t)lens->size() != B)
    return invalid(absl::StrCat("ReverseSequence sequence_lens has ", lens->size(),
                                " values for a batch of ", B));
  for (int64_t b = 0; b < B; ++b)
    if ((*lens)[b] < 0 || (*lens)[b] > T)
      return invalid(absl::StrCat("ReverseSequence sequence_lens[", b, "] = ", (*lens)[b],
                                  " outside [0, ", T, "]"));
  auto st = stridesOf(a->dims);
  int64_t n = a->size();
  std::vector<int64_t> idx((size_t)n);
  for (int64_t e = 0; e < n; ++e) {
    int64_t t = (e / st[tAx]) % T, b = (e / st[bAx]) % B, len = (*lens)[b];
    idx[e] = t < len ? e + (len - 1 - 2 * t) * st[tAx] : e;
  }
  return one(takeElems(*a, a->dims, idx));
}

void registerReverseSequence(OpRegistrar &r) {
  r["ReverseSequence"] = sameAsInput;
  r["ReverseSequence"] = kReverseSequence;
}

//===--- Resize, Upsample ---===//

// Note [Resize sampling]
//   Each resized axis is sampled on its own (the interpolations are
//   separable), the most shrinking axis first. Output position y maps to
//   the input coordinate x by the coordinate_transformation_mode, where the
//   scale s is the given one or sizes / input, and the output "length" of
//   align_corners, pytorch_half_pixel and half_pixel_symmetric is s * in as
//   a real number (ONNX's reference; it differs from the integer size when
//   floor(s * in) is not s * in). Resize-10 and Upsample are asymmetric.
//   - nearest picks one input element: x when integral, else floor(x) or
//     floor(x) + 1 by nearest_mode; Resize-10 and Upsample round down when
//     the axis grows and up when it shrinks (onnxruntime's rule, which the
//     opset 10 -> 11 adapter keeps).
//   - linear and cubic weigh the taps floor(x) + i by a kernel of the
//     distance i - ratio, ratio = x - floor(x) in (0, 1] (an integral x
//     counts as 1 past the element before it): 1 - |d| for linear, Keys'
//     cubic with coefficient A for cubic. With antialias (opset 18) and
//     s < 1 the kernel is stretched by 1 / s over more taps and the weights
//     normalized. exclude_outside drops taps outside the input and
//     renormalizes; taps are then clamped into the input (edge values).
//   - tf_crop_and_resize samples the region roi; a position outside the
//     input gets extrapolation_value.
//   Integer results are rounded half to even and saturated to the type.

void resizeRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto in = c.inShape(0);
  if (!in) return c.setTensor(0, el, std::nullopt);
  int64_t r = in->size();
  bool isUpsample = c.node.opType() == "Upsample";
  // Inputs: Resize-10 / Upsample-9 (X, scales); Resize-11+ (X, roi, scales, sizes).
  unsigned scalesIdx = (c.opset >= 11 && !isUpsample) ? 2 : 1;
  unsigned sizesIdx = 3;
  std::optional<std::vector<int64_t>> axes = c.getInts("axes");
  auto axisList = [&]() {
    std::vector<int64_t> a;
    if (axes) {
      for (int64_t x : *axes) {
        auto n = normAxis(x, r);
        if (!n) return std::vector<int64_t>{};
        a.push_back(*n);
      }
    } else {
      for (int64_t i = 0; i < r; ++i) a.push_back(i);
    }
    return a;
  };
  std::vector<int64_t> ax = axisList();
  if (ax.empty() && r > 0) return;
  if (!isUpsample && c.opset >= 11 && c.hasInput(sizesIdx)) {
    const Dims *sz = c.inData(sizesIdx);
    if (!sz || sz->size() != ax.size()) return c.setTensor(0, el, Dims(r, nullptr));
    Dims out = *in;
    for (size_t i = 0; i < ax.size(); ++i) out[ax[i]] = (*sz)[i];
    return c.setTensor(0, el, out);
  }
  std::optional<std::vector<float>> scales;
  if (isUpsample && c.opset < 9) {
    if (const Attribute *a = c.attr("scales")) scales = a->floats;
  } else if (c.hasInput(scalesIdx)) {
    // Scales are float data; only constants give them.
    if (const Tensor *t = c.inConstant(scalesIdx); t && t->dataType() == DataType::Float)
      if (auto v = t->values<float>(); v.ok()) scales = *v;
    // Cropping resizes the roi, not the whole input.
    if (c.getString("coordinate_transformation_mode", "") == "tf_crop_and_resize")
      scales = std::nullopt;
  }
  if (!scales || scales->size() != ax.size()) return c.setTensor(0, el, Dims(r, nullptr));
  Dims out = *in;
  for (size_t i = 0; i < ax.size(); ++i) {
    const DimExpr *d = (*in)[ax[i]];
    if (!d || !d->isConstant()) {
      out[ax[i]] = (*scales)[i] == 1.0f ? d : nullptr;
      continue;
    }
    double v = std::floor((double)d->value() * (*scales)[i]);
    out[ax[i]] = v >= 0 && v < (double)((int64_t)1 << 40) ? c.c((int64_t)v) : nullptr;
  }
  c.setTensor(0, el, out);
}

/// The sampling of one resized axis: output position y reads input
/// positions idx[y * taps + t] with weights w[y * taps + t], or the
/// extrapolation value when outside[y].
struct ResizeAxis {
  int64_t axis = 0, in = 0, out = 0, taps = 1;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<char> outside;
};

struct ResizeMode {
  std::string mode, ctm, nearest;
  bool legacy = false, exclude = false, antialias = false;
  double cubicA = -0.75;
};

/// Keys' cubic convolution kernel with coefficient `A` at distance `x`.
double cubicKernel(double x, double A) {
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

/// Plans one axis (Note [Resize sampling]); roiStart/roiEnd for
/// tf_crop_and_resize.
ResizeAxis planResizeAxis(const ResizeMode &m, int64_t axis, int64_t in, int64_t out, double s,
                          double roiStart, double roiEnd) {
  ResizeAxis p;
  p.axis = axis;
  p.in = in;
  p.out = out;
  double W = (double)in, len = s * W;
  bool nearest = m.mode == "nearest";
  double sc = m.antialias ? std::min(s, 1.0) : 1.0;
  // Taps i in [lo, 1 - lo] around floor(x) (lo = 0 for linear, -1 for cubic
  // without antialias).
  int64_t lo = nearest ? 0
               : m.mode == "linear" ? (int64_t)std::floor(-1 / sc) + 1
                                    : (int64_t)std::floor(-2 / sc) + 1;
  p.taps = nearest ? 1 : 2 - 2 * lo;
  p.idx.resize((size_t)(out * p.taps));
  p.w.assign((size_t)(out * p.taps), 0.0);
  p.outside.assign((size_t)out, 0);
  for (int64_t y = 0; y < out; ++y) {
    double yd = (double)y, x;
    const std::string &ctm = m.ctm;
    if (ctm == "asymmetric") x = yd / s;
    else if (ctm == "align_corners") x = len == 1 ? 0 : yd * (W - 1) / (len - 1);
    else if (ctm == "pytorch_half_pixel") x = len == 1 ? -0.5 : (yd + 0.5) / s - 0.5;
    else if (ctm == "tf_half_pixel_for_nn") x = (yd + 0.5) / s;
    else if (ctm == "half_pixel_symmetric")
      x = W / 2 * (1 - (double)out / len) + (yd + 0.5) / s - 0.5;
    else if (ctm == "tf_crop_and_resize") {
      x = out == 1 ? (roiEnd - roiStart) * (W - 1) / 2
                   : yd * (roiEnd - roiStart) * (W - 1) / (double)(out - 1);
      x += roiStart * (W - 1);
      if (x < 0 || x > W - 1 || std::isnan(x)) {
        p.outside[y] = 1;
        for (int64_t t = 0; t < p.taps; ++t) p.idx[y * p.taps + t] = 0;
        continue;
      }
    } else x = (yd + 0.5) / s - 0.5; // half_pixel
    double fl = std::floor(x);
    // Coordinates far outside are clamped anyway; keep them in int64 range.
    double big = (double)in + 4 * (double)p.taps + 4;
    x = std::clamp(x, -big, big);
    fl = std::clamp(fl, -big, big);
    int64_t *ix = &p.idx[y * p.taps];
    double *w = &p.w[y * p.taps];
    if (nearest) {
      int64_t j;
      if (m.legacy) j = (int64_t)(s >= 1 ? fl : std::ceil(x));
      else if (x == fl) j = (int64_t)fl;
      else {
        double ratio = x - fl;
        bool up = m.nearest == "ceil" || (m.nearest == "round_prefer_ceil" && ratio >= 0.5) ||
                  (m.nearest == "round_prefer_floor" && ratio > 0.5);
        j = (int64_t)fl + up;
      }
      ix[0] = std::clamp<int64_t>(j, 0, in - 1);
      w[0] = 1;
      continue;
    }
    double ratio = x == fl ? 1.0 : x - fl;
    int64_t base = (int64_t)fl - (x == fl ? 1 : 0);
    double sum = 0;
    for (int64_t t = 0; t < p.taps; ++t) {
      double d = (double)(lo + t) - ratio;
      double v = m.mode == "linear" ? std::clamp(1 - std::fabs(d * sc), 0.0, 1.0)
                                    : cubicKernel(d * sc, m.cubicA);
      w[t] = v;
      sum += v;
    }
    if (m.antialias && sum != 0)
      for (int64_t t = 0; t < p.taps; ++t) w[t] /= sum;
    if (m.exclude) {
      double kept = 0;
      for (int64_t t = 0; t < p.taps; ++t) {
        int64_t j = base + lo + t;
        if (j < 0 || j >= in) w[t] = 0;
        kept += w[t];
      }
      if (kept != 0)
        for (int64_t t = 0; t < p.taps; ++t) w[t] /= kept;
    }
    for (int64_t t = 0; t < p.taps; ++t) ix[t] = std::clamp<int64_t>(base + lo + t, 0, in - 1);
  }
  return p;
}

/// One interpolating pass over axis p.axis of `src` (dims `dims`, updated)
/// into `dst`, which holds zeros (dims with p.out along the axis).
template <typename T>
void resizePassInto(const T *src, std::vector<int64_t> &dims, const ResizeAxis &p,
                    T extrapolation, T *dst) {
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < p.axis; ++k) outer *= dims[k];
  for (int64_t k = p.axis + 1; k < (int64_t)dims.size(); ++k) inner *= dims[k];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < p.out; ++y) {
      T *d = &dst[(size_t)((o * p.out + y) * inner)];
      if (p.outside[y]) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      for (int64_t t = 0; t < p.taps; ++t) {
        T w = (T)p.w[y * p.taps + t];
        if (w == T(0)) continue;
        const T *s = &src[(size_t)((o * p.in + p.idx[y * p.taps + t]) * inner)];
        for (int64_t i = 0; i < inner; ++i) d[i] += w * s[i];
      }
    }
  dims[p.axis] = p.out;
}

/// Elements after a pass over p.axis of a tensor of dims `dims`.
int64_t resizedSize(const std::vector<int64_t> &dims, const ResizeAxis &p) {
  int64_t n = p.out;
  for (int64_t k = 0; k < (int64_t)dims.size(); ++k)
    if (k != p.axis) n *= dims[k];
  return n;
}

/// resizePassInto into a fresh vector.
template <typename T>
std::vector<T> resizePass(const std::vector<T> &src, std::vector<int64_t> &dims,
                          const ResizeAxis &p, T extrapolation) {
  std::vector<T> dst((size_t)resizedSize(dims, p), T(0));
  resizePassInto<T>(src.data(), dims, p, extrapolation, dst.data());
  return dst;
}

/// Range of an integer element type as doubles (for saturation).
std::pair<double, double> intRange(DataType dt) {
  switch (dt) {
  case DataType::Bool: return {0, 1};
  case DataType::Int2: return {-2, 1};
  case DataType::Uint2: return {0, 3};
  case DataType::Int4: return {-8, 7};
  case DataType::Uint4: return {0, 15};
  case DataType::Int8: return {-128, 127};
  case DataType::Uint8: return {0, 255};
  case DataType::Int16: return {-32768, 32767};
  case DataType::Uint16: return {0, 65535};
  case DataType::Int32: return {-2147483648.0, 2147483647.0};
  case DataType::Uint32: return {0, 4294967295.0};
  case DataType::Uint64: return {0, 18446744073709549568.0};
  default: return {-9223372036854775808.0, 9223372036854774784.0};
  }
}

// Note [Nearest Resize in bytes]
//   Nearest Resize only moves elements (an output element is one input
//   element, or the extrapolation value outside a tf_crop_and_resize box),
//   so for the types whose stored bytes are their values (Note [Data
//   movement in bytes]) it copies X's stored bytes into the result's: no
//   decoded copy of X (a float per float16, an int64 per uint8 image), no
//   copy of it with the fill appended (withFill) and no int64 offset per
//   output element (mappedOffsets). Each output row (the last axis) adds
//   its per-element source offsets to the offset the leading axes give,
//   carried along the row-major walk; the fill is the extrapolation value
//   encoded as the decoding path encodes it. The same elements land in the
//   same places, so the result is the decoding path's, bit for bit but for
//   a float16/bfloat16 signalling NaN, which keeps its bits (as in Note
//   [Data movement in bytes]). Other types (bool, strings, float8, the
//   packed ones) and data that do not match their dims decode as before.

/// Nearest Resize of X (stored bytes `x`, dims `xd`) to `od`: output index
/// o along axis k reads input index map[k][o], or the fill (`fill`: one
/// element's bytes) where it is -1.
Tensor nearestFromBytes(const ByteView &x, DataType dt, const std::vector<int64_t> &xd,
                        const std::vector<int64_t> &od,
                        const std::vector<std::vector<int64_t>> &map, llvm::StringRef fill) {
  int64_t r = (int64_t)od.size(), n = numElementsOf(od);
  size_t es = x.es;
  std::string out((size_t)n * es, '\0');
  if (n == 0) return makeTensor(dt, od, std::move(out));
  std::vector<int64_t> st = stridesOf(xd);
  // Source offsets (in elements) per axis and output index; -1: the fill.
  std::vector<std::vector<int64_t>> off(r);
  for (int64_t k = 0; k < r; ++k) {
    off[k].resize((size_t)od[k]);
    for (int64_t o = 0; o < od[k]; ++o) off[k][o] = map[k][o] < 0 ? -1 : map[k][o] * st[k];
  }
  int64_t last = r ? od[r - 1] : 1;
  const std::vector<int64_t> one0 = {0};
  const std::vector<int64_t> &lastOff = r ? off[r - 1] : one0;
  std::vector<int64_t> idx((size_t)std::max<int64_t>(r - 1, 0), 0);
  char *dst = out.data();
  for (int64_t e = 0; e < n; e += last) {
    int64_t base = 0;
    bool outside = false;
    for (int64_t k = 0; k + 1 < r; ++k) {
      int64_t v = off[k][idx[k]];
      if (v < 0) outside = true;
      base += v;
    }
    for (int64_t j = 0; j < last; ++j, dst += es) {
      int64_t v = lastOff[j];
      const char *src = outside || v < 0 ? fill.data() : x.data + (size_t)(base + v) * es;
      std::memcpy(dst, src, es);
    }
    for (int64_t k = r - 2; k >= 0; --k) {
      if (++idx[k] < od[k]) break;
      idx[k] = 0;
    }
  }
  return makeTensor(dt, od, std::move(out));
}

StatusOr<std::vector<Tensor>> kResize(const KernelCall &c) {
  bool ups = c.opType == "Upsample";
  // Note [Resizing in place]
  //   A float X is read through its bytes (viewTensor) by the linear and
  //   cubic passes, and the last pass writes into the result's bytes
  //   (OutBuf): no decoded copy of X, no second copy of it before the first
  //   pass, no encoding of the result. The passes are the same, so are the
  //   values. Other element types decode X as before; nearest moves its
  //   stored bytes (Note [Nearest Resize in bytes]).
  const Tensor *xt = c.input(0);
  std::optional<InView<float>> xv;
  std::optional<Arr> xa;
  // Nearest moves X's stored bytes (Note [Nearest Resize in bytes]).
  std::optional<ByteView> xb;
  if (xt && c.getString("mode", "nearest") == "nearest") xb = byteView(*xt);
  if (!xb && xt && xt->dataType() == DataType::Float) {
    auto v = viewTensor<float>(*xt);
    if (!v.ok()) return v.status();
    xv = std::move(*v);
  } else if (!xb) {
    auto v = inputArr(c, 0);
    if (!v.ok()) return v.status();
    xa = std::move(*v);
  }
  const std::vector<int64_t> xdims = xb ? xt->dims() : xv ? xv->dims : xa->dims;
  DataType xdt = xb ? xt->dataType() : xv ? xv->dt : xa->dt;
  int64_t r = (int64_t)xdims.size();
  ResizeMode m;
  m.legacy = ups || (c.opset > 0 && c.opset < 11);
  m.mode = c.getString("mode", "nearest");
  // Scales or sizes, per axis of `axes`.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi;
  auto floatValues = [&](unsigned i) -> StatusOr<std::vector<double>> {
    return c.input(i)->values<double>();
  };
  if (ups && c.opset > 0 && c.opset < 7) {
    if (r != 4) return invalid(absl::StrCat("Upsample-1 input of rank ", r, " (needs NCHW)"));
    scales = {1, 1, c.getFloat("height_scale", 0), c.getFloat("width_scale", 0)};
    if (m.mode == "bilinear") m.mode = "linear";
  } else if (ups && c.opset > 0 && c.opset < 9) {
    auto s = c.getFloats("scales");
    if (!s) return invalid("Upsample without attribute scales");
    scales.assign(s->begin(), s->end());
  } else if (m.legacy) {
    if (!c.input(1)) return invalid(absl::StrCat(c.opType.str(), " without operand #1 (scales)"));
    auto s = floatValues(1);
    if (!s.ok()) return s.status();
    scales = *s;
  } else {
    if (c.input(2) && c.input(2)->numElements() > 0) {
      auto s = floatValues(2);
      if (!s.ok()) return s.status();
      scales = *s;
    }
    if (c.input(3) && c.input(3)->numElements() > 0) {
      auto s = intValues(*c.input(3));
      if (!s.ok()) return s.status();
      sizes = *s;
    }
    if (scales.empty() == sizes.empty())
      return invalid("Resize needs exactly one of scales (operand #2) and sizes (operand #3)");
    if (c.input(1) && c.input(1)->numElements() > 0) {
      auto v = floatValues(1);
      if (!v.ok()) return v.status();
      roi = *v;
    }
  }
  std::vector<int64_t> axes;
  if (auto v = atLeast(c, 18) && !ups ? c.getInts("axes") : std::nullopt) {
    std::vector<bool> seen(r, false);
    for (int64_t x : *v) {
      auto ax = normAxis(x, r);
      if (!ax || seen[*ax])
        return invalid(absl::StrCat("Resize axes: ", x, ax ? " repeated" : " out of range"));
      seen[*ax] = true;
      axes.push_back(*ax);
    }
  } else {
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  }
  size_t na = axes.size();
  const char *op = ups ? "Upsample" : "Resize";
  if (m.mode != "nearest" && m.mode != "linear" && !(m.mode == "cubic" && !m.legacy))
    return invalid(absl::StrCat(op, " mode '", m.mode, "' (expected nearest, linear",
                                m.legacy ? ")" : " or cubic)"));
  if (m.legacy) {
    m.ctm = "asymmetric";
  } else {
    m.ctm = c.getString("coordinate_transformation_mode", "half_pixel");
    const std::string &t = m.ctm;
    if (t != "half_pixel" && t != "pytorch_half_pixel" && t != "align_corners" &&
        t != "asymmetric" && t != "tf_crop_and_resize" &&
        !(t == "tf_half_pixel_for_nn" && c.opset > 0 && c.opset < 13) &&
        !(t == "half_pixel_symmetric" && atLeast(c, 19)))
      return invalid(absl::StrCat("Resize coordinate_transformation_mode '", t,
                                  "' is not one of opset ", c.opset, "'s"));
    m.nearest = c.getString("nearest_mode", "round_prefer_floor");
    if (m.nearest != "round_prefer_floor" && m.nearest != "round_prefer_ceil" &&
        m.nearest != "floor" && m.nearest != "ceil")
      return invalid(absl::StrCat("Resize nearest_mode '", m.nearest,
                                  "' (expected round_prefer_floor, round_prefer_ceil, floor or ceil)"));
    m.cubicA = c.getFloat("cubic_coeff_a", -0.75f);
    m.exclude = c.getInt("exclude_outside", 0) != 0;
    m.antialias = atLeast(c, 18) && c.getInt("antialias", 0) != 0;
  }
  std::string policy = atLeast(c, 18) && !ups ? c.getString("keep_aspect_ratio_policy", "stretch")
                                              : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return invalid(absl::StrCat("Resize keep_aspect_ratio_policy '", policy,
                                "' (expected stretch, not_larger or not_smaller)"));
  bool crop = m.ctm == "tf_crop_and_resize";
  if (crop && roi.size() != 2 * na)
    return invalid(absl::StrCat("Resize tf_crop_and_resize needs roi with ", 2 * na,
                                " values (has ", roi.size(), ")"));
  // Output sizes and the scale of each axis.
  std::vector<int64_t> od = xdims;
  std::vector<double> sc(na);
  if (!scales.empty()) {
    if (scales.size() != na)
      return invalid(absl::StrCat(op, " has ", scales.size(), " scales for ", na, " axes"));
    for (size_t j = 0; j < na; ++j) {
      double s = scales[j], in = (double)xdims[axes[j]];
      if (!(s > 0) || !std::isfinite(s))
        return invalid(absl::StrCat(op, " scale ", s, " for axis ", axes[j], " (must be > 0)"));
      double o = std::floor(in * (crop ? roi[j + na] - roi[j] : 1.0) * s);
      if (!(o >= 0) || o > 9.0e15)
        return invalid(absl::StrCat(op, " output size ", o, " for axis ", axes[j]));
      sc[j] = s;
      od[axes[j]] = (int64_t)o;
    }
  } else {
    if (sizes.size() != na)
      return invalid(absl::StrCat("Resize has ", sizes.size(), " sizes for ", na, " axes"));
    for (size_t j = 0; j < na; ++j) {
      if (sizes[j] < 0) return invalid(absl::StrCat("Resize size ", sizes[j], " for axis ", axes[j]));
      int64_t in = xdims[axes[j]];
      if (in == 0 && sizes[j] > 0)
        return invalid(absl::StrCat("Resize of the empty axis ", axes[j], " to ", sizes[j]));
      sc[j] = in ? (double)sizes[j] / (double)in : 1.0;
      od[axes[j]] = sizes[j];
    }
    if (policy != "stretch") {
      double s = sc[0];
      for (double v : sc) s = policy == "not_larger" ? std::min(s, v) : std::max(s, v);
      for (size_t j = 0; j < na; ++j) {
        sc[j] = s;
        od[axes[j]] = (int64_t)(s * (double)xdims[axes[j]] + 0.5);
      }
    }
  }
  Status sz = checkOutputSize(c, xdt, od);
  if (!sz.ok()) return sz;
  if (numElementsOf(od) == 0) return one(Arr::make(xdt, od));
  // Plans for the axes that shrink most first, so that no intermediate
  // result of the passes is bigger than the input or the output (growing
  // one axis before shrinking another could make it far bigger than both);
  // an axis kept as it is (scale 1, same size, whole roi) is skipped.
  std::vector<ResizeAxis> plans;
  std::vector<size_t> order(na);
  for (size_t j = 0; j < na; ++j) order[j] = j;
  auto growth = [&](size_t j) {
    return (double)od[axes[j]] / (double)std::max<int64_t>(xdims[axes[j]], 1);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t p, size_t q) { return growth(p) < growth(q); });
  for (size_t j : order) {
    int64_t ax = axes[j], in = xdims[ax], out = od[ax];
    double rs = crop ? roi[j] : 0, re = crop ? roi[j + na] : 1;
    if (out == in && std::fabs(sc[j] - 1) <= 1e-9 && rs == 0 && re == 1) continue;
    if (in == 0 || out == 0) {
      ResizeAxis p;
      p.axis = ax, p.in = in, p.out = out;
      plans.push_back(std::move(p));
      continue;
    }
    plans.push_back(planResizeAxis(m, ax, in, out, sc[j], rs, re));
  }
  if (m.mode != "nearest") {
    std::vector<int64_t> dims = xdims;
    for (const ResizeAxis &p : plans) {
      dims[p.axis] = p.out;
      if (Status st = checkOutputSize(c, xdt, dims); !st.ok()) return st;
    }
  }
  double extrap = crop ? c.getFloat("extrapolation_value", 0) : 0.0;
  if (m.mode == "nearest") {
    // One gather for all axes, any element type.
    std::vector<std::vector<int64_t>> map(r);
    for (int64_t k = 0; k < r; ++k) {
      map[k].resize((size_t)od[k]);
      for (int64_t o = 0; o < od[k]; ++o) map[k][o] = o;
    }
    for (const ResizeAxis &p : plans)
      for (int64_t y = 0; y < p.out; ++y) map[p.axis][y] = p.outside[y] ? -1 : p.idx[y];
    auto fill = scalarOf(xdt, extrap);
    if (!fill.ok()) return fill.status();
    if (xb) {
      Tensor ft = toTensor(*fill);
      auto fb = ft.bytes();
      if (!fb.ok() || fb->size() != xb->es) return invalid("Resize: the fill value does not encode");
      std::vector<Tensor> res;
      res.push_back(nearestFromBytes(*xb, xdt, xdims, od, map, *fb));
      return res;
    }
    if (!xa) {
      auto v = inputArr(c, 0);
      if (!v.ok()) return v.status();
      xa = std::move(*v);
    }
    return one(takeElems(withFill(*xa, *fill), od, mappedOffsets(*xa, od, map)));
  }
  if (xv) {
    // Note [Resizing in place]
    std::vector<int64_t> dims = xdims;
    OutBuf<float> out(xdt, od);
    if (plans.empty()) {
      std::copy(xv->data(), xv->data() + out.size(), out.data());
    } else {
      const float *src = xv->data();
      std::vector<float> cur;
      for (size_t k = 0; k < plans.size(); ++k) {
        if (k + 1 == plans.size()) {
          resizePassInto<float>(src, dims, plans[k], (float)extrap, out.data());
          break;
        }
        std::vector<float> next((size_t)resizedSize(dims, plans[k]), 0.0f);
        resizePassInto<float>(src, dims, plans[k], (float)extrap, next.data());
        cur = std::move(next);
        src = cur.data();
      }
    }
    std::vector<Tensor> res;
    res.push_back(out.take());
    return res;
  }
  const Arr *a = &*xa;
  CK kind = a->kind();
  if (kind == CK::F32) {
    std::vector<int64_t> dims = xdims;
    std::vector<float> v = a->f;
    for (const ResizeAxis &p : plans) v = resizePass<float>(v, dims, p, (float)extrap);
    Arr out;
    out.dt = xdt;
    out.dims = od;
    out.f = std::move(v);
    return one(out);
  }
  if (kind != CK::F64 && kind != CK::I64 && kind != CK::U64)
    return invalid(absl::StrCat(op, " mode ", m.mode, " needs a numeric element type"));
  auto d = convertArr(*a, DataType::Double);
  if (!d.ok()) return d.status();
  std::vector<int64_t> dims = xdims;
  std::vector<double> v = d->d;
  for (const ResizeAxis &p : plans) v = resizePass<double>(v, dims, p, extrap);
  Arr res;
  res.dt = DataType::Double;
  res.dims = od;
  if (kind != CK::F64) {
    auto [lo, hi] = intRange(xdt);
    for (double &x : v) x = std::isnan(x) ? 0 : std::clamp(std::nearbyint(x), lo, hi);
  }
  res.d = std::move(v);
  if (kind == CK::F64) {
    res.dt = xdt;
    return one(res);
  }
  auto back = convertArr(res, xdt);
  if (!back.ok()) return back.status();
  return one(*back);
}

// Upsample's scales from whichever form the node has: attribute `scales`, a
// constant float operand #1, or height_scale/width_scale.
std::optional<std::vector<float>> upsampleScales(const Node &n) {
  if (const Attribute *a = n.getAttr("scales"))
    if (!a->isReference() && a->kind() == AttrKind::Floats)
      return std::vector<float>(a->floats.begin(), a->floats.end());
  if (n.numOperands() > 1 && n.operand(1)) {
    Tensor scratch;
    const Tensor *t = constantOf(n.operand(1), scratch);
    if (t && t->dataType() == DataType::Float)
      if (auto v = t->values<double>(); v.ok()) return std::vector<float>(v->begin(), v->end());
    return std::nullopt;
  }
  const Attribute *h = n.getAttr("height_scale"), *w = n.getAttr("width_scale");
  if (h && w && !h->isReference() && !w->isReference() && h->kind() == AttrKind::Float &&
      w->kind() == AttrKind::Float)
    return std::vector<float>{1.f, 1.f, h->f, w->f};
  return std::nullopt;
}

// Upsample-7: Upsample-1's height_scale and width_scale (of an NCHW input)
// became `scales`, one per axis; mode "bilinear" became "linear".
absl::Status upsampleUp7(Node &n, AdapterContext &c) {
  const Attribute *h = n.getAttr("height_scale"), *w = n.getAttr("width_scale");
  for (const Attribute *a : {h, w})
    if (!a || a->isReference() || a->kind() != AttrKind::Float)
      return absl::FailedPreconditionError(
          "height_scale and width_scale must both be set, as floats");
  Attribute *mode = n.getAttr("mode");
  if (mode && mode->isReference())
    return absl::FailedPreconditionError("attribute 'mode' refers to a function attribute");
  if (c.checkOnly) return absl::OkStatus();
  std::vector<float> scales = {1.f, 1.f, h->f, w->f};
  n.removeAttr("height_scale");
  n.removeAttr("width_scale");
  n.newAttr("scales").setFloats(std::move(scales));
  if (mode && mode->kind() == AttrKind::String && mode->s == "bilinear") mode->setString("linear");
  return absl::OkStatus();
}

absl::Status upsampleDown7(Node &n, AdapterContext &c) {
  auto scales = upsampleScales(n);
  if (!scales)
    return absl::FailedPreconditionError("the scales are not a constant list of floats");
  if (scales->size() != 4 || (*scales)[0] != 1.f || (*scales)[1] != 1.f)
    return absl::FailedPreconditionError(
        "Upsample-1 scales only the last two axes of an NCHW input: scales must be [1, 1, h, w]");
  Attribute *mode = n.getAttr("mode");
  if (mode && (mode->isReference() || mode->kind() != AttrKind::String))
    return absl::FailedPreconditionError("attribute 'mode' is not a string");
  if (c.checkOnly) return absl::OkStatus();
  n.removeAttr("scales");
  n.newAttr("height_scale").setFloat((*scales)[2]);
  n.newAttr("width_scale").setFloat((*scales)[3]);
  if (mode && mode->s == "linear") mode->setString("bilinear");
  return absl::OkStatus();
}

// Upsample-9: `scales` became the float operand #1.
absl::Status upsampleUp9(Node &n, AdapterContext &c) {
  if (n.numOperands() > 1 && n.operand(1))
    return n.getAttr("scales") ? absl::FailedPreconditionError(
                                     "the node has both attribute 'scales' and operand #1")
                               : absl::OkStatus();
  auto scales = upsampleScales(n);
  if (!scales) return absl::FailedPreconditionError("no attribute 'scales' of floats");
  if (c.checkOnly) return absl::OkStatus();
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({(int64_t)scales->size()});
  t.setTyped(Tensor::TypedField::Float);
  t.floatData.mut() = std::move(*scales);
  n.removeAttr("scales");
  n.addOperand(adapters::newConstant(n, c, "scales", std::move(t)));
  return absl::OkStatus();
}

absl::Status upsampleDown9(Node &n, AdapterContext &c) {
  Value *v = n.numOperands() > 1 ? n.operand(1) : nullptr;
  if (!v) return absl::FailedPreconditionError("no operand 'scales'");
  auto scales = upsampleScales(n);
  if (!scales)
    return absl::FailedPreconditionError(absl::StrCat(
        "operand #1 ('", v->name().str(), "') is not a float constant; opset ", c.to,
        " needs it as attribute 'scales'"));
  if (c.checkOnly) return absl::OkStatus();
  n.removeOperand(1);
  adapters::eraseIfDeadConstant(v);
  n.newAttr("scales").setFloats(std::move(*scales));
  return absl::OkStatus();
}

absl::Status upsampleToResize(Node &n, AdapterContext &c) {
  c.newOpType = "Resize";
  if (!c.checkOnly) n.setOpType("Resize");
  return absl::OkStatus();
}

absl::Status resizeToUpsample(Node &n, AdapterContext &c) {
  c.newOpType = "Upsample";
  if (!c.checkOnly) n.setOpType("Upsample");
  return absl::OkStatus();
}

// Resize-11 added roi (operand #1, scales moves to #2), sizes, and the
// coordinate_transformation_mode (default half_pixel), nearest_mode,
// cubic_coeff_a, exclude_outside, extrapolation_value attributes. Resize-10
// (and Upsample) maps output x to input x / scale ("asymmetric"); its
// nearest takes floor when upsampling and ceil when downsampling (the
// reference of onnxruntime), so nearest needs constant scales all >= 1 or
// all <= 1 (or a node that was an Upsample, whose scales are >= 1).
absl::StatusOr<std::string> resize10Nearest(const Node &n, AdapterContext &c, unsigned scalesAt) {
  auto sc = adapters::constantOperandValues(n, c, scalesAt, "constant scales (to choose the "
                                            "nearest rounding)");
  if (!sc.ok()) return sc.status();
  bool up = true, down = true;
  for (double v : *sc) {
    up = up && v >= 1;
    down = down && v <= 1;
  }
  if (up) return std::string("floor");
  if (down) return std::string("ceil");
  return absl::FailedPreconditionError(
      "mode nearest with scales both above and below 1: Resize-10 rounds down when upsampling "
      "and up when downsampling, which no one nearest_mode of Resize-11 does");
}

absl::Status resizeUp11(Node &n, AdapterContext &c) {
  auto mode = adapters::stringAttrOr(n, "mode", "nearest");
  if (!mode.ok()) return mode.status();
  std::string nearest;
  if (*mode == "nearest") {
    // Upsample's scales are >= 1 by its definition.
    auto m = c.sourceOp == "Upsample" ? absl::StatusOr<std::string>("floor")
                                      : resize10Nearest(n, c, 1);
    if (!m.ok()) return m.status();
    nearest = *m;
  }
  if (n.numOperands() != 2 || !n.operand(1))
    return absl::FailedPreconditionError("Resize-10 without exactly two operands");
  if (c.checkOnly) return absl::OkStatus();
  Value *roi = emptyFloatConstant(n, c, "roi");
  n.insertOperand(1, roi);
  adapters::setStringAttr(n, "coordinate_transformation_mode", "asymmetric");
  if (!nearest.empty()) adapters::setStringAttr(n, "nearest_mode", nearest);
  return absl::OkStatus();
}

absl::Status resizeDown11(Node &n, AdapterContext &c) {
  auto mode = adapters::stringAttrOr(n, "mode", "nearest");
  if (!mode.ok()) return mode.status();
  auto ctm = adapters::stringAttrOr(n, "coordinate_transformation_mode", "half_pixel");
  if (!ctm.ok()) return ctm.status();
  if (*mode != "nearest" && *mode != "linear")
    return absl::FailedPreconditionError(absl::StrCat("mode ", *mode, " first exists at opset 11"));
  if (*ctm != "asymmetric")
    return absl::FailedPreconditionError(absl::StrCat(
        "coordinate_transformation_mode is ", *ctm, "; Resize-10 behaves as asymmetric only"));
  if (n.numOperands() > 3 && n.operand(3))
    return absl::FailedPreconditionError("operand #3 (sizes) first exists at opset 11");
  auto exclude = adapters::intAttrOr(n, "exclude_outside", 0);
  if (!exclude.ok()) return exclude.status();
  if (*exclude != 0)
    return absl::FailedPreconditionError("exclude_outside = 1 first exists at opset 11");
  if (*mode == "nearest") {
    auto m = resize10Nearest(n, c, 2);
    if (!m.ok()) return m.status();
    auto nm = adapters::stringAttrOr(n, "nearest_mode", "round_prefer_floor");
    if (!nm.ok()) return nm.status();
    if (*nm != *m)
      return absl::FailedPreconditionError(absl::StrCat(
          "nearest_mode is ", *nm, "; Resize-10 rounds as ", *m, " with these scales"));
  }
  if (n.numOperands() < 3 || !n.operand(2))
    return absl::FailedPreconditionError("no operand #2 (scales)");
  if (c.checkOnly) return absl::OkStatus();
  for (const char *a : {"coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                        "exclude_outside", "extrapolation_value"})
    n.removeAttr(a);
  adapters::dropOperand(n, 3);
  Value *roi = n.operand(1);
  n.removeOperand(1);
  if (Node *def = roi ? roi->definingNode() : nullptr;
      def && roi->useEmpty() && !roi->isGraphOutput() && isConstantNode(*def) && !def->hasUses())
    (void)def->erase();
  return absl::OkStatus();
}

// Resize-13 made roi and scales optional and dropped the mode
// tf_half_pixel_for_nn (x / scale + 0.5 / scale, where half_pixel is that
// - 0.5): rounding y is rounding y' = y - 0.5 one way up, so
// round_prefer_floor(y) = ceil(y') and floor(y) = round_prefer_ceil(y').
absl::Status resizeUp13(Node &n, AdapterContext &c) {
  auto ctm = adapters::stringAttrOr(n, "coordinate_transformation_mode", "half_pixel");
  if (!ctm.ok()) return ctm.status();
  if (*ctm != "tf_half_pixel_for_nn") return absl::OkStatus();
  auto mode = adapters::stringAttrOr(n, "mode", "nearest");
  if (!mode.ok()) return mode.status();
  auto nm = adapters::stringAttrOr(n, "nearest_mode", "round_prefer_floor");
  if (!nm.ok()) return nm.status();
  const char *to = *nm == "round_prefer_floor" ? "ceil" : *nm == "floor" ? "round_prefer_ceil" : "";
  if (*mode != "nearest" || !*to)
    return absl::FailedPreconditionError(absl::StrCat(
        "coordinate_transformation_mode tf_half_pixel_for_nn with mode ", *mode,
        " and nearest_mode ", *nm, " has no form at opset 13 (only nearest with "
        "round_prefer_floor or floor: half_pixel with ceil or round_prefer_ceil)"));
  if (c.checkOnly) return absl::OkStatus();
  adapters::setStringAttr(n, "coordinate_transformation_mode", "half_pixel");
  adapters::setStringAttr(n, "nearest_mode", to);
  return absl::OkStatus();
}

absl::Status resizeDown13(Node &n, AdapterContext &c) {
  if (c.checkOnly) return absl::OkStatus();
  bool hasRoi = n.numOperands() > 1 && n.operand(1);
  bool hasScales = n.numOperands() > 2 && n.operand(2);
  if (hasRoi && hasScales) return absl::OkStatus();
  while (n.numOperands() < 3) n.addOperand(nullptr);
  if (!hasRoi) n.setOperand(1, emptyFloatConstant(n, c, "roi"));
  if (!hasScales) n.setOperand(2, emptyFloatConstant(n, c, "scales"));
  return absl::OkStatus();
}

absl::Status resizeDown18(Node &n, AdapterContext &c) {
  return adapters::olderFormOnly(n, c, "Resize",
                                 {{"antialias", AttrKind::Int, 0},
                                  {"keep_aspect_ratio_policy", AttrKind::String, 0, "stretch"}});
}

// Resize-19 added coordinate_transformation_mode half_pixel_symmetric.
absl::Status resizeDown19(Node &n, AdapterContext &) {
  auto ctm = adapters::stringAttrOr(n, "coordinate_transformation_mode", "half_pixel");
  if (!ctm.ok()) return ctm.status();
  if (*ctm == "half_pixel_symmetric")
    return absl::FailedPreconditionError(
        "coordinate_transformation_mode half_pixel_symmetric first exists at opset 19");
  return absl::OkStatus();
}

void registerResize(OpRegistrar &r) {
  using adapters::noChange;
  r["Upsample"].since(7).upgrade(upsampleUp7).downgrade(upsampleDown7);
  r["Upsample"].since(9).upgrade(upsampleUp9).downgrade(upsampleDown9);
  r["Upsample"].infer(resizeRule).kernel(kResize);
  r["Upsample"].since(10).upgrade(upsampleToResize);
  r["Resize"].infer(resizeRule).kernel(kResize);
  r["Resize"].since(10).downgrade(resizeToUpsample);
  r["Resize"].since(11).upgrade(resizeUp11).downgrade(resizeDown11);
  r["Resize"].since(13).upgrade(resizeUp13).downgrade(resizeDown13);
  r["Resize"].since(18).upgrade(noChange).downgrade(resizeDown18);
  r["Resize"].since(19).upgrade(noChange).downgrade(resizeDown19);
}

//===--- CenterCropPad ---===//

void centerCropPadRule(InferCtx &c) {
  int32_t el = c.inElem(0);
  auto x = c.inShape(0);
  if (!x) return c.setTensor(0, el, std::nullopt);
  int64_t r = x->size();
  std::vector<int64_t> axes;
  if (auto a = c.getInts("axes")) {
    for (int64_t v : *a) {
      auto n = normAxis(v, r);
      if (!n) return;
      axes.push_back(*n);
    }
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const Dims *sh = c.inData(1);
  if (!sh || sh->size() != axes.size()) return c.setTensor(0, el, Dims(r, nullptr));
  Dims o = *x;
  for (size_t i = 0; i < axes.size(); ++i) o[axes[i]] = (*sh)[i];
  c.setTensor(0, el, o);
}

// Crops or zero-pads each listed axis to its new size around the centre;
// an odd difference puts the extra element at the end.
StatusOr<std::vector<Tensor>> kCenterCropPad(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("CenterCropPad without shape");
  auto shape = intValues(*c.input(1));
  if (!shape.ok()) return shape.status();
  int64_t r = a->rank();
  std::vector<int64_t> axes;
  if (auto v = c.getInts("axes")) {
    std::vector<bool> seen(r, false);
    for (int64_t x : *v) {
      auto ax = normAxis(x, r);
      if (!ax || seen[*ax])
        return invalid(absl::StrCat("CenterCropPad axes: ", x, ax ? " repeated" : " out of range"));
      seen[*ax] = true;
      axes.push_back(*ax);
    }
  } else {
    for (int64_t k = 0; k < r; ++k) axes.push_back(k);
  }
  if (shape->size() != axes.size())
    return invalid(absl::StrCat("CenterCropPad shape has ", shape->size(), " values for ",
                                axes.size(), " axes"));
  std::vector<int64_t> od = a->dims;
  for (size_t j = 0; j < axes.size(); ++j) {
    if ((*shape)[j] < 0) return invalid(absl::StrCat("CenterCropPad shape value ", (*shape)[j]));
    od[axes[j]] = (*shape)[j];
  }
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  if (numElementsOf(od) == 0) return one(Arr::make(a->dt, od));
  std::vector<std::vector<int64_t>> map(r);
  for (int64_t k = 0; k < r; ++k) {
    int64_t d = a->dims[k], s = od[k];
    // Output o reads input o + shift: shift > 0 crops, < 0 pads.
    int64_t shift = d >= s ? (d - s) / 2 : -((s - d) / 2);
    map[k].resize((size_t)s);
    for (int64_t o = 0; o < s; ++o) {
      int64_t in = o + shift;
      map[k][o] = in >= 0 && in < d ? in : -1;
    }
  }
  auto zero = scalarOf(a->dt, 0);
  if (!zero.ok()) return zero.status();
  return one(takeElems(withFill(*a, *zero), od, mappedOffsets(*a, od, map)));
}

void registerCenterCropPad(OpRegistrar &r) {
  r["CenterCropPad"].infer(centerCropPadRule).kernel(kCenterCropPad);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

} // namespace

void registerTensorOps(OpRegistrar &r) {
  for (auto *reg : {registerConcat, registerSplit, registerSlice, registerGather,
                    registerGatherElements, registerGatherND, registerScatterElements,
                    registerScatterND, registerTensorScatter, registerPad, registerTile,
                    registerTranspose, registerCompress, registerNonZero, registerOneHot,
                    registerTrilu, registerTopK, registerUnique, registerDepthSpace,
                    registerReverseSequence, registerResize, registerCenterCropPad})
    reg(r);
}

} // namespace onnxir
