//===- LoadReport.h - What the tools say about a model they loaded --------===//
//
// onnx-opt and onnxir-text check a model on load the same way and report
// it in the same words: the schema check's warnings, then the list of
// problems of a model they refuse. Header-only: the tools share no library
// of their own.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TOOLS_COMMON_LOADREPORT_H
#define ONNXIR_TOOLS_COMMON_LOADREPORT_H

#include "onnxir/Ops/SchemaVerifier.h"
#include "onnxir/IR/Verifier.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace onnxir {
namespace tools {

/// One line of "the model is invalid:": `\n  MESSAGE [kind]`.
inline std::string invalidLine(const Diagnostic &d) {
  return "\n  " + d.message + " [" + diagnosticKindName(d.kind) + "]";
}

/// Reports the schema check on load: its warnings go to `errs` as
/// `TOOL: warning: FILE: ...`. Returns the message of a model it refuses
/// (`FILE: the model is invalid:`, the problems, and that `structureFlag`
/// skips the schema checks when they are among them), "" if it accepts it.
inline std::string reportSchemaCheck(const SchemaCheckResult &r, llvm::StringRef tool,
                                     llvm::StringRef file, llvm::StringRef structureFlag,
                                     llvm::raw_ostream &errs) {
  for (const Diagnostic &d : r.warnings)
    errs << tool << ": warning: " << (d.located ? "" : file.str() + ": ") << d.message << "\n";
  if (r.moreWarnings)
    errs << tool << ": warning: " << file << ": " << r.moreWarnings
         << " more schema problems of these kinds (--verify=schema lists them)\n";
  if (r.errors.empty()) return "";
  std::string msg = file.str() + ": the model is invalid:";
  for (const Diagnostic &d : r.errors) msg += invalidLine(d);
  if (r.schemaErrors) msg += "\n(" + structureFlag.str() + " skips the operator schema checks)";
  return msg;
}

} // namespace tools
} // namespace onnxir

#endif
