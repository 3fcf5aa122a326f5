//===- Function.h - Model-local functions ---------------------------------===//
//
// A FunctionProto: identified by (domain, name, overload); a body Graph whose
// inputs are the formal inputs and whose outputs are the formal outputs; the
// attribute names it accepts and their defaults; opset imports. Nodes with a
// matching (domain, op_type, overload) are its call sites.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_FUNCTION_H
#define ONNXIR_IR_FUNCTION_H

#include "onnxir/IR/Graph.h"
#include "onnxir/Support/Export.h"

#include <memory>
#include <string>
#include <vector>

ONNXIR_API_BEGIN
namespace onnxir {

/// OperatorSetIdProto.
struct OpsetImport {
  std::string domain;
  int64_t version = 0;
  std::string extras;
};

class Function {
public:
  explicit Function(Context &ctx);
  ~Function();

  std::string name, domain, overload;
  std::string docString;
  Metadata metadata;
  std::vector<OpsetImport> opsetImports;
  /// FunctionProto.attribute: names of attributes without defaults.
  std::vector<std::string> attributeNames;
  /// FunctionProto.attribute_proto: attributes with defaults.
  std::vector<std::unique_ptr<Attribute>> attributeDefaults;
  std::string extras;

  /// The body: inputs, nodes, outputs (value_info of the function too).
  Graph &body() { return *body_; }
  const Graph &body() const { return *body_; }

  /// True if `n` calls this function.
  bool isCalledBy(const Node &n) const;
  /// `domain.name` or `domain.name:overload`, for messages.
  std::string qualifiedName() const;

private:
  std::unique_ptr<Graph> body_;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_FUNCTION_H
