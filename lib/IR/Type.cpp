//===- Type.cpp - Type queries and printing -------------------------------===//
#include "onnxir/IR/Type.h"

#include "llvm/Support/raw_ostream.h"

namespace onnxir {

bool Type::isStatic() const {
  if (!hasShape_) return false;
  for (const Dim &d : dims_)
    if (!d.isKnown()) return false;
  return true;
}

std::optional<int64_t> Type::numElements() const {
  if (!hasShape_) return std::nullopt;
  int64_t n = 1;
  for (const Dim &d : dims_) {
    if (!d.isKnown() || d.value < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, d.value, &n)) return std::nullopt;
  }
  return n;
}

namespace {
void printElem(llvm::raw_ostream &os, int32_t e) {
  llvm::StringRef n = dataTypeName(static_cast<DataType>(e));
  if (n.empty() || e == 0) os << "elem" << e;
  else os << n;
}
// The text syntax's notation (docs/TextFormat.md): `float` is rank 0,
// `float[]` has no shape (unknown rank).
void printShape(llvm::raw_ostream &os, const Type &t) {
  if (!t.hasShape()) {
    os << "[]";
    return;
  }
  if (t.dims().empty()) return;
  os << '[';
  bool first = true;
  for (const Dim &d : t.dims()) {
    if (!first) os << ',';
    first = false;
    if (d.isKnown()) os << d.value;
    else if (d.isSymbolic()) os << d.param;
    else os << '?';
  }
  os << ']';
}
} // namespace

std::string Type::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  switch (kind_) {
  case Kind::Tensor:
    printElem(os, elem_);
    printShape(os, *this);
    break;
  case Kind::SparseTensor:
    os << "sparse_tensor(";
    printElem(os, elem_);
    printShape(os, *this);
    os << ')';
    break;
  case Kind::Sequence:
    os << "seq(" << (inner_ ? inner_->str() : "?") << ')';
    break;
  case Kind::Optional:
    os << "optional(" << (inner_ ? inner_->str() : "?") << ')';
    break;
  case Kind::Map:
    os << "map(";
    printElem(os, elem_);
    os << ", " << (inner_ ? inner_->str() : "?") << ')';
    break;
  case Kind::Opaque:
    os << "opaque(" << opaqueDomain_ << ", " << opaqueName_ << ')';
    break;
  case Kind::None:
    os << "none";
    break;
  }
  return os.str();
}

} // namespace onnxir
