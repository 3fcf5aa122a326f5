//===- InspectSupport.h - Pieces the views share (private) -----------------===//
#ifndef ONNXIR_LIB_INSPECT_INSPECTSUPPORT_H
#define ONNXIR_LIB_INSPECT_INSPECTSUPPORT_H

#include "onnxir/IR/Type.h"

#include "llvm/Support/JSON.h"

namespace onnxir::inspect {

/// `s` as valid UTF-8 (invalid bytes become U+FFFD): names are user data,
/// and JSON strings must be UTF-8.
std::string u8(llvm::StringRef s);
/// A type as JSON: null when unknown, else {kind, elem_type, shape, text}
/// (tensor kinds have elem_type and shape: known dims as integers, symbolic
/// ones as strings, unknown ones as null; shape null when unranked).
void writeType(llvm::json::OStream &j, const Type *t);
void writeTypeAttribute(llvm::json::OStream &j, llvm::StringRef key, const Type *t);

} // namespace onnxir::inspect

#endif
