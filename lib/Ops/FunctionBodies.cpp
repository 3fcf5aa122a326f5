//===- FunctionBodies.cpp - The schemas' static function bodies as IR -----===//
//
// Note [Function bodies where schemas live] in onnxir/Ops/FunctionBodies.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Ops/FunctionBodies.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/Text/Text.h"

#include "absl/strings/str_cat.h"

#include <string>
#include <vector>

namespace onnxir {

namespace {

/// The schema's defaults, as a function's attribute defaults.
void addSchemaDefaults(const OpSchema &s, Function &f) {
  for (const AttributeSchema &a : s.attributes()) {
    if (!a.hasDefault) continue;
    auto d = std::make_unique<Attribute>(a.name.str());
    switch (a.kind) {
    case AttrKind::Int: d->setInt(a.defaultInt); break;
    case AttrKind::Float: d->setFloat((float)a.defaultFloat); break;
    case AttrKind::String: d->setString(a.defaultString.str()); break;
    case AttrKind::Ints: d->setInts(a.defaultInts); break;
    case AttrKind::Floats:
      d->setFloats(std::vector<float>(a.defaultFloats.begin(), a.defaultFloats.end()));
      break;
    case AttrKind::Strings: {
      std::vector<std::string> v;
      for (llvm::StringRef x : a.defaultStrings) v.push_back(x.str());
      d->setStrings(std::move(v));
      break;
    }
    default: continue; // a tensor default's value is not in the schema data
    }
    f.attributeDefaults.push_back(std::move(d));
  }
}

} // namespace

absl::StatusOr<Function *> parseFunctionBody(Model &m, const OpSchema &s, const FunctionBody &b) {
  auto f = parseFunctionText(m, b.text, absl::StrCat("<body of ", s.str(), ">"));
  if (!f.ok())
    return absl::InternalError(absl::StrCat("the function body of ", s.str(),
                                            " (opset ", b.opset, ") does not parse: ",
                                            f.status().message()));
  addSchemaDefaults(s, **f);
  return *f;
}

} // namespace onnxir
