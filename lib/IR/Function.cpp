//===- Function.cpp -------------------------------------------------------===//
#include "onnxir/IR/Function.h"

#include "absl/strings/str_cat.h"

namespace onnxir {

Function::Function(Context &ctx) : body_(std::make_unique<Graph>(ctx)) {
  body_->function_ = this;
}

Function::~Function() = default;

bool Function::isCalledBy(const Node &n) const {
  return n.opType() == name && n.domain() == domain && n.overload() == overload;
}

std::string Function::qualifiedName() const {
  std::string s = domain.empty() ? name : absl::StrCat(domain, ".", name);
  if (!overload.empty()) absl::StrAppend(&s, ":", overload);
  return s;
}

} // namespace onnxir
