//===- Sequences.cpp - The evaluator's sequence and optional ops ----------===//
//
// SequenceEmpty SequenceConstruct SequenceInsert SequenceAt SequenceErase
// SequenceLength SplitToSequence ConcatFromSequence SequenceMap, Optional
// OptionalHasElement OptionalGetElement, Identity of a sequence or an
// optional, and ai.onnx.ml's ZipMap and CastMap, which make and read maps
// (Note [Evaluator values], Evaluator.h; Note [ZipMap and CastMap]).
//
// Note [Sequence ops are evaluator built-ins]
// A kernel (Ops/Kernels.h) maps tensors to tensors, and constant folding
// runs the same kernels; a sequence or an optional is never a constant of
// the IR (an initializer is a tensor), so the folder could not use a kernel
// of these ops, and a second kernel kind on the op record would need the
// evaluator's value type below it, in the Ops layer, for the evaluator
// alone. So these ops run here, on the run's values, as If, Loop and Scan
// do; their type rules stay in lib/Ops/Sequence.cpp. SplitToSequence and
// ConcatFromSequence (without new_axis) call the registry's Split and
// Concat kernels, so the element arithmetic has one implementation. Errors
// name the operand or attribute; runNode adds the node.
//
//===----------------------------------------------------------------------===//
#include "EvalRun.h"

#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/Ops/Kernels.h"
#include "onnxir/Ops/OpRegistry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdlib>

namespace onnxir {
namespace evalrun {
namespace {

const Attribute *findAttr(llvm::ArrayRef<const Attribute *> attrs, llvm::StringRef name) {
  for (const Attribute *a : attrs)
    if (a->name() == name) return a;
  return nullptr;
}

int64_t intAttr(llvm::ArrayRef<const Attribute *> attrs, llvm::StringRef name, int64_t dflt) {
  const Attribute *a = findAttr(attrs, name);
  return a ? a->i : dflt;
}

/// Why operand #i cannot be used as `want` ("a sequence", "a tensor"):
/// missing, or held as another kind (`isWanted` false); OK when it can.
absl::Status checkOperand(const std::vector<Held> &in, size_t i, llvm::StringRef what,
                          bool (Held::*isWanted)() const, llvm::StringRef want) {
  if (i >= in.size() || !in[i].present())
    return absl::InvalidArgumentError(absl::StrCat(what.str(), " is missing"));
  if (!(in[i].*isWanted)())
    return absl::InvalidArgumentError(
        absl::StrCat(what.str(), " is ", kindName(in[i]), ", not ", want.str()));
  return absl::OkStatus();
}

/// Operand #i as a sequence.
StatusOr<const Held *> sequenceOperand(const std::vector<Held> &in, size_t i,
                                       llvm::StringRef what) {
  if (auto s = checkOperand(in, i, what, &Held::isSequence, "a sequence"); !s.ok()) return s;
  return &in[i];
}

/// Operand #i as a tensor.
StatusOr<const Tensor *> tensorOperand(const std::vector<Held> &in, size_t i,
                                       llvm::StringRef what) {
  if (auto s = checkOperand(in, i, what, &Held::isTensor, "a tensor"); !s.ok()) return s;
  return in[i].t.get();
}

/// The position operand #i (absent: `dflt`) normalized into [0, size]
/// (`end` true: SequenceInsert may insert at the end) or [0, size - 1].
StatusOr<int64_t> position(const std::vector<Held> &in, size_t i, int64_t size, int64_t dflt,
                           bool end) {
  int64_t p = dflt;
  if (i < in.size() && in[i].present()) {
    auto t = tensorOperand(in, i, "position");
    if (!t.ok()) return t.status();
    DataType dt = (*t)->dataType();
    if (dt != DataType::Int32 && dt != DataType::Int64)
      return absl::InvalidArgumentError(absl::StrCat(
          "position is ", dataTypeName(dt).str(), ", not an int32 or int64 scalar"));
    auto v = (*t)->values<int64_t>();
    if (!v.ok()) return v.status();
    if (v->size() != 1)
      return absl::InvalidArgumentError(
          absl::StrCat("position has ", v->size(), " elements, not one"));
    p = (*v)[0];
  }
  int64_t hi = end ? size : size - 1;
  int64_t q = p < 0 ? p + size : p;
  if (q < 0 || q > hi)
    return absl::InvalidArgumentError(absl::StrCat("position ", p,
                                                   " is out of range for a sequence of ", size,
                                                   size == 1 ? " element" : " elements"));
  return q;
}

DataType elemTypeOf(const Held &h) { return h.isTensor() ? h.t->dataType() : h.elemType; }

/// Checks that `x` may join a sequence of element type `seq`.
Status checkJoins(DataType seq, const Held &x, llvm::StringRef what) {
  DataType et = elemTypeOf(x);
  if (seq != DataType::Undefined && et != DataType::Undefined && seq != et)
    return absl::InvalidArgumentError(absl::StrCat(what.str(), " is ", dataTypeName(et).str(),
                                                   ", the sequence's elements ",
                                                   dataTypeName(seq).str()));
  return absl::OkStatus();
}

std::string typeOf(const Tensor &t) {
  std::string s = dataTypeName(t.dataType()).str() + "[";
  for (size_t k = 0; k < t.dims().size(); ++k) s += (k ? "," : "") + std::to_string(t.dims()[k]);
  return s + "]";
}

Tensor int64Tensor(std::vector<int64_t> v) {
  Tensor t;
  t.setDataType(DataType::Int64);
  t.setDims({(int64_t)v.size()});
  t.setRaw(std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(int64_t)));
  return t;
}

/// The default domain's kernel of `op` at `version` (Split-13, Concat-13).
StatusOr<KernelFn> kernelOf(llvm::StringRef op, int64_t version) {
  const OpEntry *e = OpRegistry::get().lookup("", op, version);
  if (!e || !e->kernel)
    return absl::UnimplementedError(absl::StrCat("no kernel for ", op.str(), "-", version));
  return e->kernel;
}

// Note [ZipMap and CastMap]
//   ai.onnx.ml's two map ops run here, on map values (Note [Evaluator
//   values]), for the reason the sequence ops do.
//   - ZipMap: X, float [N, C] (or [C], one row), and C labels
//     (classlabels_int64s or classlabels_strings, exactly one) give N maps,
//     row n's map taking label c to X[n, c], in the labels' order.
//   - CastMap: a map of int64 keys to float or string values becomes a
//     [1, K] tensor of float, int64 or string (cast_to), the values in
//     ascending key order; DENSE packs the map's values (K = its size),
//     SPARSE puts each at its key's column of max_map (a key outside [0,
//     max_map) is an error), the others 0. The casts are onnxruntime's,
//     the one implementation to agree with: a string to float or int64
//     parses its leading number (an error when there is none), a float to
//     int64 truncates (an error out of range), a float to string is
//     printf's "%f", and a SPARSE string pad is "0.f" as onnxruntime's.

/// ZipMap (Note [ZipMap and CastMap]).
StatusOr<Held> zipMap(Run &run, llvm::ArrayRef<const Attribute *> attrs, const Tensor &x,
                      bool nondet) {
  const Attribute *ints = findAttr(attrs, "classlabels_int64s");
  const Attribute *strs = findAttr(attrs, "classlabels_strings");
  if ((ints != nullptr) == (strs != nullptr))
    return absl::InvalidArgumentError(
        "needs exactly one of classlabels_int64s and classlabels_strings");
  if (x.dataType() != DataType::Float)
    return absl::InvalidArgumentError("X must be a float tensor");
  const std::vector<int64_t> &d = x.dims();
  if (d.empty() || d.size() > 2)
    return absl::InvalidArgumentError("X must be [N, C] or [C]");
  int64_t c = d.back(), rows = d.size() == 2 ? d[0] : 1;
  int64_t labels = ints ? (int64_t)ints->ints.size() : (int64_t)strs->strings.get().size();
  if (c != labels)
    return absl::InvalidArgumentError(
        absl::StrCat("X has ", c, " columns for ", labels, " class labels"));
  auto v = x.values<float>();
  if (!v.ok()) return v.status();
  Tensor keys;
  if (ints) {
    keys = makeInt64Tensor({c}, ints->ints);
  } else {
    keys.setDataType(DataType::String);
    keys.setDims({c});
    keys.stringData.mut() = strs->strings.get();
    keys.setTyped(Tensor::TypedField::String);
  }
  Held k = Held::tensor(run.own(std::move(keys)), nondet);
  std::vector<Held> maps;
  for (int64_t n = 0; n < rows; ++n) {
    std::vector<float> row(v->begin() + n * c, v->begin() + (n + 1) * c);
    maps.push_back(Held::map(k, Held::tensor(run.own(makeFloatTensor({c}, row)), nondet), nondet));
  }
  return Held::sequence(std::move(maps), DataType::Float, nondet);
}

/// CastMap (Note [ZipMap and CastMap]).
StatusOr<Held> castMap(Run &run, llvm::ArrayRef<const Attribute *> attrs, const Held &m,
                       bool nondet) {
  const Attribute *toA = findAttr(attrs, "cast_to"), *formA = findAttr(attrs, "map_form");
  std::string to = toA ? toA->s : "TO_FLOAT", form = formA ? formA->s : "DENSE";
  int64_t maxMap = intAttr(attrs, "max_map", 1);
  if (to != "TO_FLOAT" && to != "TO_INT64" && to != "TO_STRING")
    return absl::InvalidArgumentError(
        absl::StrCat("cast_to \"", to, "\" is not TO_FLOAT, TO_INT64 or TO_STRING"));
  if (form != "DENSE" && form != "SPARSE")
    return absl::InvalidArgumentError(
        absl::StrCat("map_form \"", form, "\" is not DENSE or SPARSE"));
  if (form == "SPARSE" && maxMap <= 0)
    return absl::InvalidArgumentError("max_map must be positive for SPARSE");
  const Tensor &kt = *(*m.elems)[0].t, &vt = *(*m.elems)[1].t;
  if (kt.dataType() != DataType::Int64)
    return absl::InvalidArgumentError("the map's keys must be int64");
  if (vt.dataType() != DataType::Float && vt.dataType() != DataType::String)
    return absl::InvalidArgumentError("the map's values must be float or string");
  auto keys = kt.values<int64_t>();
  if (!keys.ok()) return keys.status();
  std::vector<float> fv;
  std::vector<std::string> sv;
  if (vt.dataType() == DataType::Float) {
    auto f = vt.values<float>();
    if (!f.ok()) return f.status();
    fv = std::move(*f);
  } else {
    auto st = vt.strings();
    if (!st.ok()) return st.status();
    sv = std::move(*st);
  }
  if (fv.size() + sv.size() != keys->size())
    return absl::InvalidArgumentError("the map has not one value per key");
  // Entries in ascending key order.
  std::vector<size_t> order(keys->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*keys)[a] < (*keys)[b]; });
  for (size_t i = 1; i < order.size(); ++i)
    if ((*keys)[order[i]] == (*keys)[order[i - 1]])
      return absl::InvalidArgumentError(
          absl::StrCat("the map has key ", (*keys)[order[i]], " twice"));
  int64_t width = form == "DENSE" ? (int64_t)order.size() : maxMap;
  if (run.options().maxBytes / 16 < (uint64_t)width)
    return absl::ResourceExhaustedError("CastMap's result exceeds the run's byte limit");
  // Column of each entry, in `order`.
  std::vector<int64_t> col(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    col[i] = form == "DENSE" ? (int64_t)i : (*keys)[order[i]];
    if (col[i] < 0 || col[i] >= width)
      return absl::InvalidArgumentError(
          absl::StrCat("key ", (*keys)[order[i]], " is outside [0, max_map = ", maxMap, ")"));
  }
  bool strings = vt.dataType() == DataType::String;
  auto noNumber = [&](size_t e) {
    return absl::InvalidArgumentError(absl::StrCat("the value \"", sv[e], "\" is no number"));
  };
  Tensor y;
  if (to == "TO_STRING") {
    std::vector<std::string> out((size_t)width, "0.f");
    for (size_t i = 0; i < order.size(); ++i) {
      size_t e = order[i];
      out[(size_t)col[i]] = strings ? sv[e] : absl::StrFormat("%f", fv[e]);
    }
    y.setDataType(DataType::String);
    y.setDims({1, width});
    y.stringData.mut() = std::move(out);
    y.setTyped(Tensor::TypedField::String);
  } else if (to == "TO_FLOAT") {
    std::vector<float> out((size_t)width, 0.0f);
    for (size_t i = 0; i < order.size(); ++i) {
      size_t e = order[i];
      float v = strings ? 0.0f : fv[e];
      if (strings) {
        char *end = nullptr;
        v = std::strtof(sv[e].c_str(), &end);
        if (end == sv[e].c_str()) return noNumber(e);
      }
      out[(size_t)col[i]] = v;
    }
    y = makeFloatTensor({1, width}, out);
  } else {
    std::vector<int64_t> out((size_t)width, 0);
    for (size_t i = 0; i < order.size(); ++i) {
      size_t e = order[i];
      int64_t v = 0;
      if (strings) {
        char *end = nullptr;
        v = std::strtoll(sv[e].c_str(), &end, 10);
        if (end == sv[e].c_str()) return noNumber(e);
      } else {
        if (!(fv[e] >= -0x1p63f && fv[e] < 0x1p63f))
          return absl::InvalidArgumentError(
              absl::StrCat("the value ", fv[e], " is outside int64"));
        v = (int64_t)fv[e];
      }
      out[(size_t)col[i]] = v;
    }
    y = makeInt64Tensor({1, width}, out);
  }
  return Held::tensor(run.own(std::move(y)), nondet);
}

} // namespace

Held Held::map(Held keys, Held values, bool nondet) {
  Held h;
  h.kind = EvalValue::Kind::Map;
  h.elems =
      std::make_shared<const std::vector<Held>>(std::vector<Held>{std::move(keys), std::move(values)});
  h.nondet = nondet;
  return h;
}

StatusOr<std::vector<Held>> Run::runValueOp(const Node &n, Frame &f,
                                            llvm::ArrayRef<const Attribute *> attrs,
                                            const std::vector<Held> &in, int64_t opset,
                                            bool &handled) {
  llvm::StringRef op = n.opType();
  handled = true;
  bool nondet = false;
  for (const Held &h : in) nondet |= h.nondet;
  using One = std::vector<Held>;

  //===--- ZipMap, CastMap (ai.onnx.ml) ---===//
  if (n.domain() == "ai.onnx.ml") {
    if (op == "ZipMap") {
      auto x = tensorOperand(in, 0, "X");
      if (!x.ok()) return x.status();
      auto r = zipMap(*this, attrs, **x, nondet);
      if (!r.ok()) return r.status();
      return One{*r};
    }
    if (op == "CastMap") {
      if (auto s = checkOperand(in, 0, "X", &Held::isMap, "a map"); !s.ok()) return s;
      auto r = castMap(*this, attrs, in[0], nondet);
      if (!r.ok()) return r.status();
      return One{*r};
    }
    handled = false;
    return One{};
  }

  //===--- Identity ---===//
  if (op == "Identity") {
    if (in.empty() || in[0].isTensor() || !in[0].present()) {
      handled = false; // a tensor: the kernel's
      return One{};
    }
    return One{in[0]};
  }

  //===--- SequenceEmpty ---===//
  if (op == "SequenceEmpty") {
    int64_t dt = intAttr(attrs, "dtype", (int64_t)DataType::Float);
    if (dt <= 0 || dt > INT32_MAX)
      return absl::InvalidArgumentError(absl::StrCat("dtype ", dt, " is no tensor element type"));
    return One{Held::sequence({}, (DataType)dt, false)};
  }

  //===--- SequenceConstruct ---===//
  if (op == "SequenceConstruct") {
    if (in.empty()) return absl::InvalidArgumentError("SequenceConstruct has no inputs");
    std::vector<Held> elems;
    for (size_t k = 0; k < in.size(); ++k) {
      auto t = tensorOperand(in, k, absl::StrCat("input #", k));
      if (!t.ok()) return t.status();
      if ((*t)->dataType() != in[0].t->dataType())
        return absl::InvalidArgumentError(
            absl::StrCat("input #", k, " is ", dataTypeName((*t)->dataType()).str(),
                         ", input #0 ", dataTypeName(in[0].t->dataType()).str()));
      elems.push_back(in[k]);
    }
    return One{Held::sequence(std::move(elems), in[0].t->dataType(), nondet)};
  }

  //===--- SequenceInsert ---===//
  if (op == "SequenceInsert") {
    auto s = sequenceOperand(in, 0, "input_sequence");
    if (!s.ok()) return s.status();
    auto t = tensorOperand(in, 1, "tensor");
    if (!t.ok()) return t.status();
    if (Status st = checkJoins((*s)->elemType, in[1], "tensor"); !st.ok()) return st;
    int64_t size = (int64_t)(*s)->size();
    auto p = position(in, 2, size, size, true);
    if (!p.ok()) return p.status();
    std::vector<Held> elems = *(*s)->elems;
    elems.insert(elems.begin() + *p, in[1]);
    return One{Held::sequence(std::move(elems), (*t)->dataType(), nondet)};
  }

  //===--- SequenceAt ---===//
  if (op == "SequenceAt") {
    auto s = sequenceOperand(in, 0, "input_sequence");
    if (!s.ok()) return s.status();
    if (in.size() < 2 || !in[1].present())
      return absl::InvalidArgumentError("position is missing");
    auto p = position(in, 1, (int64_t)(*s)->size(), 0, false);
    if (!p.ok()) return p.status();
    Held h = (*(*s)->elems)[(size_t)*p];
    h.nondet |= nondet;
    return One{h};
  }

  //===--- SequenceErase ---===//
  if (op == "SequenceErase") {
    auto s = sequenceOperand(in, 0, "input_sequence");
    if (!s.ok()) return s.status();
    auto p = position(in, 1, (int64_t)(*s)->size(), -1, false);
    if (!p.ok()) return p.status();
    std::vector<Held> elems = *(*s)->elems;
    elems.erase(elems.begin() + *p);
    return One{Held::sequence(std::move(elems), (*s)->elemType, nondet)};
  }

  //===--- SequenceLength ---===//
  if (op == "SequenceLength") {
    auto s = sequenceOperand(in, 0, "input_sequence");
    if (!s.ok()) return s.status();
    return One{Held::tensor(own(scalarTensor(DataType::Int64, (int64_t)(*s)->size())), nondet)};
  }

  //===--- SplitToSequence ---===//
  if (op == "SplitToSequence") {
    auto x = tensorOperand(in, 0, "input");
    if (!x.ok()) return x.status();
    const std::vector<int64_t> &dims = (*x)->dims();
    int64_t rank = (int64_t)dims.size(), axis = intAttr(attrs, "axis", 0);
    if (axis < -rank || axis >= rank)
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    if (axis < 0) axis += rank;
    int64_t dim = dims[(size_t)axis];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (in.size() > 1 && in[1].present()) {
      auto st = tensorOperand(in, 1, "split");
      if (!st.ok()) return st.status();
      auto v = (*st)->values<int64_t>();
      if (!v.ok()) return v.status();
      if ((*st)->dims().empty()) { // one size: equal parts, the last may be smaller
        int64_t c = v->empty() ? 0 : (*v)[0];
        if (c <= 0)
          return absl::InvalidArgumentError(absl::StrCat("split is ", c, ", not positive"));
        for (int64_t at = 0; at < dim; at += c) sizes.push_back(std::min(c, dim - at));
      } else if ((*st)->dims().size() == 1) {
        int64_t total = 0;
        for (int64_t s : *v) {
          if (s < 0 || s > dim - total)
            return absl::InvalidArgumentError(absl::StrCat(
                "split sizes are negative or add up to more than dim ", axis, " (", dim, ")"));
          total += s;
        }
        if (total != dim)
          return absl::InvalidArgumentError(absl::StrCat("split sizes add up to ", total,
                                                         ", not dim ", axis, " (", dim, ")"));
        sizes = *v;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("split has rank ", (*st)->dims().size(), ", not 0 or 1"));
      }
    } else {
      sizes.assign((size_t)dim, 1);
      squeeze = intAttr(attrs, "keepdims", 1) == 0;
    }
    std::vector<Held> elems;
    if (!sizes.empty()) {
      auto kSplit = kernelOf("Split", 13);
      if (!kSplit.ok()) return kSplit.status();
      Attribute axisAttr("axis");
      axisAttr.setInt(axis);
      const Attribute *as[] = {&axisAttr};
      Tensor sizesT = int64Tensor(sizes);
      const Tensor *ins[] = {*x, &sizesT};
      KernelCall call("", "Split", 13, as);
      call.inputs = ins;
      call.numOutputs = (unsigned)sizes.size();
      call.maxOutputBytes = opts_.maxBytes;
      auto parts = (*kSplit)(call);
      if (!parts.ok()) return parts.status();
      for (Tensor &t : *parts) {
        if (squeeze) {
          std::vector<int64_t> d = t.dims();
          d.erase(d.begin() + axis);
          t.setDims(d);
        }
        elems.push_back(Held::tensor(own(std::move(t)), nondet));
      }
    }
    return One{Held::sequence(std::move(elems), (*x)->dataType(), nondet)};
  }

  //===--- ConcatFromSequence ---===//
  if (op == "ConcatFromSequence") {
    auto s = sequenceOperand(in, 0, "input_sequence");
    if (!s.ok()) return s.status();
    if ((*s)->size() == 0)
      return absl::InvalidArgumentError("input_sequence is empty: nothing to concatenate");
    std::vector<const Tensor *> items;
    for (size_t k = 0; k < (*s)->size(); ++k) {
      const Held &e = (*(*s)->elems)[k];
      if (!e.isTensor())
        return absl::InvalidArgumentError(
            absl::StrCat("element #", k, " is ", kindName(e), ", not a tensor"));
      items.push_back(e.t.get());
    }
    int64_t newAxis = intAttr(attrs, "new_axis", 0);
    if (newAxis != 0 && newAxis != 1)
      return absl::InvalidArgumentError(absl::StrCat("new_axis is ", newAxis, ", not 0 or 1"));
    const Attribute *axisA = findAttr(attrs, "axis");
    if (!axisA) return absl::InvalidArgumentError("attribute axis is missing");
    int64_t rank = (int64_t)items[0]->dims().size() + newAxis, axis = axisA->i;
    if (axis < -rank || axis >= rank || rank == 0)
      return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for rank ",
                                                     rank, newAxis ? " (with the new axis)" : ""));
    if (axis < 0) axis += rank;
    StatusOr<Tensor> out = absl::UnknownError("");
    if (newAxis) {
      for (size_t k = 1; k < items.size(); ++k)
        if (items[k]->dataType() != items[0]->dataType() || items[k]->dims() != items[0]->dims())
          return absl::InvalidArgumentError(absl::StrCat("element #", k, " is ",
                                                         typeOf(*items[k]), ", element #0 ",
                                                         typeOf(*items[0]),
                                                         ": new_axis stacks equal shapes"));
      uint64_t bytes = 0;
      for (const Tensor *t : items) bytes += tensorDataBytes(*t);
      if (bytes > opts_.maxBytes)
        return absl::ResourceExhaustedError(absl::StrCat(
            "a result of ", bytes, " bytes is over the limit of ", opts_.maxBytes, " bytes"));
      out = stack(items, axis);
    } else {
      auto kConcat = kernelOf("Concat", 13);
      if (!kConcat.ok()) return kConcat.status();
      Attribute axisAttr("axis");
      axisAttr.setInt(axis);
      const Attribute *as[] = {&axisAttr};
      KernelCall call("", "Concat", 13, as);
      call.inputs = items;
      call.maxOutputBytes = opts_.maxBytes;
      auto r = (*kConcat)(call);
      if (!r.ok()) return r.status();
      if (r->size() != 1) return absl::InternalError("Concat gave no single result");
      out = std::move((*r)[0]);
    }
    if (!out.ok()) return out.status();
    if (Status st = checkBudget(*out); !st.ok()) return st;
    return One{Held::tensor(own(std::move(*out)), nondet)};
  }

  //===--- SequenceMap ---===//
  if (op == "SequenceMap") return runSequenceMap(n, f, in);

  //===--- Optional ---===//
  if (op == "Optional") {
    if (in.empty() || !in[0].present()) {
      if (!findAttr(attrs, "type"))
        return absl::InvalidArgumentError("no input and no attribute type");
      return One{Held::optional(Held{}, false)};
    }
    if (in[0].isOptional())
      return absl::InvalidArgumentError("input is an optional, not a tensor or a sequence");
    return One{Held::optional(in[0], nondet)};
  }

  //===--- OptionalHasElement ---===//
  if (op == "OptionalHasElement") {
    bool has;
    if (in.empty() || !in[0].present()) {
      if (opset < 18) return absl::InvalidArgumentError("input is missing");
      has = false;
    } else if (in[0].isOptional()) {
      has = in[0].size() > 0;
    } else if (opset >= 18) {
      has = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "input is ", kindName(in[0]), ", not an optional (before OptionalHasElement-18)"));
    }
    return One{Held::tensor(own(scalarTensor(DataType::Bool, has)), nondet)};
  }

  //===--- OptionalGetElement ---===//
  if (op == "OptionalGetElement") {
    if (in.empty() || !in[0].present()) return absl::InvalidArgumentError("input is missing");
    if (in[0].isOptional()) {
      if (!in[0].size()) return absl::InvalidArgumentError("the optional input is empty");
      Held h = (*in[0].elems)[0];
      h.nondet |= nondet;
      return One{h};
    }
    if (opset < 18)
      return absl::InvalidArgumentError(absl::StrCat(
          "input is ", kindName(in[0]), ", not an optional (before OptionalGetElement-18)"));
    return One{in[0]};
  }

  handled = false;
  return One{};
}

StatusOr<std::vector<Held>> Run::runSequenceMap(const Node &n, Frame &f,
                                                const std::vector<Held> &in) {
  const Graph *body = graphAttr(n, "body");
  if (!body) return absl::InvalidArgumentError("SequenceMap has no body");
  auto s = sequenceOperand(in, 0, "input_sequence");
  if (!s.ok()) return s.status();
  size_t len = (*s)->size();
  bool nondet = false;
  for (size_t k = 0; k < in.size(); ++k) {
    if (!in[k].present())
      return absl::InvalidArgumentError(absl::StrCat("additional input #", k - 1, " is missing"));
    if (in[k].isOptional())
      return absl::InvalidArgumentError(
          absl::StrCat(k ? absl::StrCat("additional input #", k - 1) : "input_sequence",
                       " is an optional"));
    if (in[k].isSequence() && in[k].size() != len)
      return absl::InvalidArgumentError(absl::StrCat("additional input #", k - 1, " has ",
                                                     in[k].size(), " elements, input_sequence ",
                                                     len));
    nondet |= in[k].nondet;
  }
  if (body->numInputs() != in.size() || body->numOutputs() != n.numResults())
    return absl::InvalidArgumentError(absl::StrCat(
        "the body has ", body->numInputs(), " inputs and ", body->numOutputs(),
        " outputs for ", in.size(), " operands and ", n.numResults(), " results"));
  std::vector<std::vector<Held>> outs(body->numOutputs());
  for (size_t i = 0; i < len; ++i) {
    std::vector<Held> bin;
    for (const Held &h : in) bin.push_back(h.isSequence() ? (*h.elems)[i] : h);
    auto r = runSubgraph(*body, f, bin);
    if (!r.ok()) return r.status();
    for (size_t k = 0; k < r->size(); ++k) outs[k].push_back((*r)[k]);
  }
  std::vector<Held> results;
  for (size_t k = 0; k < outs.size(); ++k) {
    DataType et = DataType::Undefined;
    for (size_t i = 0; i < outs[k].size(); ++i) {
      DataType ei = elemTypeOf(outs[k][i]);
      if (et == DataType::Undefined) et = ei;
      else if (ei != et)
        return absl::InvalidArgumentError(
            absl::StrCat("body output #", k, " is ", dataTypeName(ei).str(), " in iteration ",
                         i, ", ", dataTypeName(et).str(), " before"));
    }
    if (et == DataType::Undefined) // no iteration: the declared type
      if (const Type *t = body->output(k)->type(); t && t->isTensor() && t->hasElemType())
        et = t->elemType();
    results.push_back(Held::sequence(std::move(outs[k]), et, nondet));
  }
  return results;
}

} // namespace evalrun

EvalValue EvalValue::map(Tensor keys, Tensor values) {
  EvalValue v;
  v.kind = Kind::Map;
  v.elements.emplace_back(std::move(keys));
  v.elements.emplace_back(std::move(values));
  return v;
}

} // namespace onnxir
