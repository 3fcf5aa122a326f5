//===- ShapeOps.cpp - Shape manipulation and data movement kernels --------===//
//
// Identity, Constant, ConstantOfShape, Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Split, Slice, Gather, GatherElements, Expand,
// Tile, Range, with the attribute forms of older opsets and the input forms
// of newer ones. Data movement is expressed as "take element idx[k] of the
// input", which works for every element type.
//
//===----------------------------------------------------------------------===//
#include "KernelUtil.h"

#include "onnxir/IR/ConstantValue.h"

#include <algorithm>
#include <cmath>

namespace onnxir {
namespace kernels {

/// out[k] = a[idx[k]] with out's dims `dims` (shared with other kernel files).
Arr takeElems(const Arr &a, std::vector<int64_t> dims, const std::vector<int64_t> &idx) {
  Arr r;
  r.dt = a.dt;
  r.dims = std::move(dims);
  auto take = [&](auto &dst, const auto &src) {
    dst.resize(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) dst[k] = src[(size_t)idx[k]];
  };
  switch (a.kind()) {
  case CK::F32: take(r.f, a.f); break;
  case CK::F64: take(r.d, a.d); break;
  case CK::I64: take(r.i, a.i); break;
  case CK::U64: take(r.u, a.u); break;
  case CK::Str: take(r.s, a.s); break;
  default: break;
  }
  return r;
}

/// Appends the elements of `b` to `a` (same kind).
void appendElems(Arr &a, const Arr &b, int64_t from, int64_t count) {
  auto app = [&](auto &dst, const auto &src) {
    dst.insert(dst.end(), src.begin() + from, src.begin() + from + count);
  };
  switch (a.kind()) {
  case CK::F32: app(a.f, b.f); break;
  case CK::F64: app(a.d, b.d); break;
  case CK::I64: app(a.i, b.i); break;
  case CK::U64: app(a.u, b.u); break;
  case CK::Str: app(a.s, b.s); break;
  default: break;
  }
}

namespace {

StatusOr<std::vector<Tensor>> copyOut(const Tensor &t) {
  std::vector<Tensor> r;
  r.push_back(t);
  r.back().setName("");
  return r;
}

StatusOr<std::vector<Tensor>> kIdentity(const KernelCall &c) {
  if (!c.input(0)) return invalid("Identity without input");
  return copyOut(*c.input(0));
}

Arr int64Vec(std::vector<int64_t> v) {
  Arr a;
  a.dt = DataType::Int64;
  a.dims = {(int64_t)v.size()};
  a.i = std::move(v);
  return a;
}

Arr int64Scalar(int64_t v) {
  Arr a;
  a.dt = DataType::Int64;
  a.i = {v};
  return a;
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
  return one(takeElems(fill, *shape, std::vector<int64_t>((size_t)n, 0)));
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

StatusOr<std::vector<Tensor>> kSize(const KernelCall &c) {
  if (!c.input(0)) return invalid("Size without input");
  int64_t n = numElementsOf(c.input(0)->dims());
  if (n < 0) return invalid("bad dims");
  return one(int64Scalar(n));
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
  bool allowZero = c.getInt("allowzero", 0) != 0;
  const auto &idims = in->dims();
  int64_t inferred = -1, known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowZero) {
      if (k >= idims.size()) return invalid("Reshape 0 past the input rank");
      shape[k] = idims[k];
    }
    if (shape[k] == -1) {
      if (inferred >= 0) return invalid("two -1 in Reshape");
      inferred = (int64_t)k;
    } else if (shape[k] < 0) {
      return invalid("negative dim in Reshape");
    } else {
      if (shape[k] && known > INT64_MAX / shape[k]) return invalid("Reshape dims overflow");
      known *= shape[k];
    }
  }
  int64_t total = numElementsOf(idims);
  if (total < 0) return invalid("bad dims");
  if (inferred >= 0) {
    if (known == 0 || total % known) return invalid("Reshape cannot infer -1");
    shape[inferred] = total / known;
  }
  return reshapeTo(c, shape);
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

StatusOr<std::vector<Tensor>> kTranspose(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
  std::vector<int64_t> perm;
  if (auto p = c.getInts("perm")) perm = *p;
  else for (int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
  if ((int64_t)perm.size() != r) return invalid("Transpose perm");
  std::vector<bool> seen(r, false);
  std::vector<int64_t> od(r);
  for (int64_t k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= r || seen[perm[k]]) return invalid("Transpose perm");
    seen[perm[k]] = true;
    od[k] = a->dims[perm[k]];
  }
  auto ist = stridesOf(a->dims);
  std::vector<int64_t> st(r);
  for (int64_t k = 0; k < r; ++k) st[k] = ist[perm[k]];
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

StatusOr<std::vector<Tensor>> kConcat(const KernelCall &c) {
  if (c.inputs.empty()) return invalid("Concat without inputs");
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

StatusOr<std::vector<Tensor>> kSplit(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("Split axis");
  int64_t dim = a->dims[*axis];
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
  std::vector<Tensor> outs;
  int64_t pos = 0;
  for (int64_t s : split) {
    std::vector<AxisSlice> sl;
    for (int64_t k = 0; k < r; ++k)
      sl.push_back(k == *axis ? AxisSlice{pos, 1, s} : AxisSlice{0, 1, a->dims[k]});
    outs.push_back(toTensor(sliceArr(*a, sl)));
    pos += s;
  }
  return outs;
}

StatusOr<std::vector<Tensor>> kSlice(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  int64_t r = a->rank();
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
  for (int64_t k = 0; k < r; ++k) sl.push_back({0, 1, a->dims[k]});
  std::vector<bool> seen(r, false);
  for (size_t j = 0; j < axes.size(); ++j) {
    auto ax = normAxis(axes[j], r);
    if (!ax || seen[*ax]) return invalid("Slice axis");
    seen[*ax] = true;
    int64_t dim = a->dims[*ax], step = steps[j];
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
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  return one(sliceArr(*a, sl));
}

StatusOr<std::vector<Tensor>> kGather(const KernelCall &c) {
  auto a = inputArr(c, 0);
  if (!a.ok()) return a.status();
  if (!c.input(1)) return invalid("Gather without indices");
  auto ind = intValues(*c.input(1));
  if (!ind.ok()) return ind.status();
  const auto &idims = c.input(1)->dims();
  int64_t r = a->rank();
  auto axis = normAxis(c.getInt("axis", 0), r);
  if (!axis) return invalid("Gather axis");
  std::vector<int64_t> od(a->dims.begin(), a->dims.begin() + *axis);
  od.insert(od.end(), idims.begin(), idims.end());
  od.insert(od.end(), a->dims.begin() + *axis + 1, a->dims.end());
  Status sz = checkOutputSize(c, a->dt, od);
  if (!sz.ok()) return sz;
  int64_t dim = a->dims[*axis], outer = 1, inner = 1;
  for (int64_t k = 0; k < *axis; ++k) outer *= a->dims[k];
  for (int64_t k = *axis + 1; k < r; ++k) inner *= a->dims[k];
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

} // namespace

void registerShapeKernels(OpRegistrar &t) {
  t["Identity"] = kIdentity; t["Constant"] = kConstant;
  t["ConstantOfShape"] = kConstantOfShape; t["Shape"] = kShape; t["Size"] = kSize;
  t["Reshape"] = kReshape; t["Flatten"] = kFlatten; t["Squeeze"] = kSqueeze;
  t["Unsqueeze"] = kUnsqueeze; t["Transpose"] = kTranspose; t["Concat"] = kConcat;
  t["Split"] = kSplit; t["Slice"] = kSlice; t["Gather"] = kGather;
  t["GatherElements"] = kGatherElements; t["Expand"] = kExpand; t["Tile"] = kTile;
  t["Range"] = kRange;
}

} // namespace kernels
} // namespace onnxir
