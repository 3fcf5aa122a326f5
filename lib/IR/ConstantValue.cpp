//===- ConstantValue.cpp - The tensor a Constant node defines -------------===//
//
// Note [Constant values] in ConstantValue.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/ConstantValue.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Value.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>

namespace onnxir {

static const char *const kValueAttrs[] = {"value",        "sparse_value", "value_float",
                                          "value_floats", "value_int",    "value_ints",
                                          "value_string", "value_strings"};

bool isConstantValueAttr(llvm::StringRef name) {
  for (const char *k : kValueAttrs)
    if (name == k) return true;
  return false;
}

static absl::Status bad(const Attribute &a, llvm::StringRef what) {
  return absl::InvalidArgumentError(absl::StrCat("Constant attribute '", a.name(), "' ", what.str()));
}

static absl::Status densify(const SparseTensor &sp, Tensor &out) {
  const Tensor &vals = sp.values;
  DataType dt = vals.dataType();
  auto numel = [](const std::vector<int64_t> &dims) -> int64_t {
    int64_t n = 1;
    for (int64_t d : dims) {
      if (d < 0 || (d && n > INT64_MAX / d)) return -1;
      n *= d;
    }
    return n;
  };
  int64_t n = numel(sp.dims);
  if (n < 0) return absl::InvalidArgumentError("sparse_value has bad dims");
  auto idx = sp.indices.values<int64_t>();
  if (!idx.ok()) return idx.status();
  int64_t nnz = numel(vals.dims());
  if (nnz < 0 || vals.dims().size() != 1) return absl::InvalidArgumentError("sparse_value values are not 1-D");
  std::vector<int64_t> lin;
  if (sp.indices.dims().size() == 1) {
    lin = *idx;
  } else if (sp.indices.dims().size() == 2) {
    int64_t r = sp.indices.dims()[1];
    if (r != (int64_t)sp.dims.size()) return absl::InvalidArgumentError("sparse_value has bad indices");
    std::vector<int64_t> st(sp.dims.size(), 1);
    for (size_t j = sp.dims.size(); j-- > 1;) st[j - 1] = st[j] * sp.dims[j];
    for (int64_t k = 0; k < nnz && (k + 1) * r <= (int64_t)idx->size(); ++k) {
      int64_t o = 0;
      for (int64_t j = 0; j < r; ++j) o += (*idx)[k * r + j] * st[j];
      lin.push_back(o);
    }
  } else if (nnz != 0) {
    return absl::InvalidArgumentError("sparse_value has bad indices");
  }
  if ((int64_t)lin.size() != nnz) return absl::InvalidArgumentError("sparse_value has bad indices");
  for (int64_t o : lin)
    if (o < 0 || o >= n) return absl::InvalidArgumentError("sparse_value index out of range");
  out = Tensor();
  out.setDataTypeRaw(vals.dataTypeRaw());
  out.setDims(sp.dims);
  if (dt == DataType::String) {
    auto s = vals.strings();
    if (!s.ok()) return s.status();
    std::vector<std::string> d((size_t)n);
    for (int64_t k = 0; k < nnz; ++k) d[lin[k]] = (*s)[k];
    out.stringData = std::move(d);
    out.setTyped(Tensor::TypedField::String);
    return absl::OkStatus();
  }
  uint64_t es = dataTypeStorageBytes(dt, 1);
  if (es == 0 || dataTypeStorageBytes(dt, 2) != 2 * es)
    return absl::UnimplementedError(absl::StrCat(
        "sparse_value of element type ", dataTypeName(dt).str(),
        " (packed below a byte) is not densified; the Constant is left as it is"));
  auto b = vals.bytes();
  if (!b.ok()) return b.status();
  if (b->size() != es * (uint64_t)nnz) return absl::InvalidArgumentError("sparse_value values have the wrong size");
  std::string raw(es * (uint64_t)n, '\0');
  for (int64_t k = 0; k < nnz; ++k) std::memcpy(&raw[lin[k] * es], b->data() + k * es, es);
  out.setRaw(std::move(raw));
  return absl::OkStatus();
}

absl::StatusOr<const Tensor *> decodeConstantAttr(const Attribute &a, Tensor &scratch) {
  return decodeConstantAttr(a.name(), a, scratch);
}

absl::StatusOr<const Tensor *> decodeConstantAttr(llvm::StringRef name, const Attribute &a,
                                                  Tensor &scratch) {
  if (a.isReference()) return bad(a, "refers to a function attribute");
  AttrKind k = a.kind();
  if (name == "value") {
    if (k != AttrKind::Tensor || a.tensors.empty()) return bad(a, "is not a tensor");
    return a.tensors[0].get();
  }
  if (name == "sparse_value") {
    if (k != AttrKind::SparseTensor || a.sparseTensors.empty()) return bad(a, "is not a sparse tensor");
    if (auto s = densify(*a.sparseTensors[0], scratch); !s.ok())
      return bad(a, std::string(s.message()));
    return &scratch;
  }
  if (name == "value_float" && k == AttrKind::Float) {
    scratch = makeFloatTensor({}, {a.f});
  } else if (name == "value_floats" && k == AttrKind::Floats) {
    scratch = makeFloatTensor({(int64_t)a.floats.size()}, a.floats.get());
  } else if (name == "value_int" && k == AttrKind::Int) {
    scratch = makeInt64Tensor({}, {a.i});
  } else if (name == "value_ints" && k == AttrKind::Ints) {
    scratch = makeInt64Tensor({(int64_t)a.ints.size()}, a.ints);
  } else if ((name == "value_string" && k == AttrKind::String) ||
             (name == "value_strings" && k == AttrKind::Strings)) {
    scratch = Tensor();
    scratch.setDataType(DataType::String);
    if (k == AttrKind::String) {
      scratch.stringData = {a.s};
    } else {
      scratch.stringData = a.strings;
      scratch.setDims({(int64_t)a.strings.size()});
    }
    scratch.setTyped(Tensor::TypedField::String);
  } else if (isConstantValueAttr(name)) {
    return bad(a, "has the wrong type");
  } else {
    return bad(a, "is not a value attribute");
  }
  return &scratch;
}

absl::StatusOr<const Tensor *> constantValue(llvm::ArrayRef<const Attribute *> attrs,
                                             Tensor &scratch) {
  const Attribute *v = nullptr;
  for (const Attribute *a : attrs) {
    if (!isConstantValueAttr(a->name())) continue;
    if (v)
      return absl::InvalidArgumentError(absl::StrCat("Constant has two value attributes, '",
                                                     v->name(), "' and '", a->name(), "'"));
    v = a;
  }
  if (!v) return absl::InvalidArgumentError("Constant has no value attribute");
  return decodeConstantAttr(*v, scratch);
}

absl::StatusOr<const Tensor *> constantValue(const Node &n, Tensor &scratch) {
  llvm::SmallVector<const Attribute *, 2> attrs;
  for (unsigned i = 0; i < n.numAttributes(); ++i) attrs.push_back(&n.attribute(i));
  auto r = constantValue(attrs, scratch);
  if (!r.ok())
    return absl::Status(r.status().code(),
                        absl::StrCat("node '", n.name().str(), "' (", n.opType().str(), "): ",
                                     r.status().message()));
  return r;
}

absl::StatusOr<Tensor> constantValue(const Node &n) {
  Tensor scratch;
  auto r = constantValue(n, scratch);
  if (!r.ok()) return r.status();
  if (*r == &scratch) return scratch;
  Tensor t = **r;
  t.setName("");
  return t;
}

const Tensor *storedConstantValue(const Node &n) {
  const Attribute *v = nullptr;
  for (unsigned i = 0; i < n.numAttributes(); ++i) {
    const Attribute &a = n.attribute(i);
    if (!isConstantValueAttr(a.name())) continue;
    if (v) return nullptr;
    v = &a;
  }
  if (!v || v->name() != "value") return nullptr;
  Tensor unused; // `value` decodes in place
  auto r = decodeConstantAttr(*v, unused);
  return r.ok() ? *r : nullptr;
}

const Tensor *constantOf(const Value *v, Tensor &scratch) {
  if (!v) return nullptr;
  if (v->isConstantInitializer()) return v->initializer();
  const Node *d = v->definingNode();
  if (!d || !d->is("Constant")) return nullptr;
  auto r = constantValue(*d, scratch);
  return r.ok() ? *r : nullptr;
}

} // namespace onnxir
