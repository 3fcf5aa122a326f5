//===- WireScan.h - Fail-fast check of a serialized ModelProto (internal) -===//
//
// Note [Wire pre-scan]
// protobuf reads a length-delimited field by trusting its length: a file of
// zero bytes, or a model cut short, is only refused after the parser (or the
// slim copy of Note [Slim parsing]) has walked, copied and allocated its way
// to the end. The pre-scan walks the wire format first, without allocating
// and without reading payload bytes: every tag must be a valid key (field
// number not 0, wire type 0, 1, 2, 3, 5, an end-group only closing its
// group), every varint at most 10 bytes, every length inside the enclosing
// message and under 2 GiB, every group closed. Those are exactly failures of
// protobuf's own parser, so the scan never refuses a file protobuf accepts
// (fields it does not know, or known fields of an unexpected wire type, are
// skipped as protobuf keeps them: as unknown fields). The scan descends into
// the known message fields of the ONNX schema (taken from the compiled
// descriptors).
//
// Quick mode only descends into messages of at least `minRecurse` bytes:
// the cost is one step per field of the few big messages (the model, its
// graph, big tensors), so it runs before every parse; an error inside a
// small message cannot make protobuf allocate much, and is located by a full
// scan (minRecurse 0) after protobuf failed.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_WIRESCAN_H
#define ONNXIR_LIB_SERIALIZE_WIRESCAN_H

#include "absl/status/status.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "onnxir/Support/Export.h"

#include <cstddef>
#include <cstdint>
#include <string>

// Exported from a shared libonnxir_Serialize for the unit tests (Note [Exported API]).
ONNXIR_API_BEGIN
namespace onnxir {
namespace detail {

/// Messages smaller than this are skipped by the quick pre-scan.
constexpr size_t kWireQuickMinRecurse = 64 * 1024;

/// Checks `bytes` as a serialized ModelProto (Note [Wire pre-scan]). On a
/// structural error returns InvalidArgument "SOURCE: not a valid ONNX model:
/// at byte N (PATH): WHAT", N being the offset in `bytes` of the bad tag,
/// varint or length. Messages nested deeper than `maxDepth` are not entered.
absl::Status scanModelWire(llvm::StringRef bytes, const std::string &source,
                           size_t minRecurse = 0, unsigned maxDepth = 1500);

/// How many scans (quick or full) this process ran: a debug counter for the
/// tests and measurements of Note [One pre-scan per load] (ModelLoad.cpp).
uint64_t wireScanCount();

/// Calls `fn` with the `location` of each external data entry of every
/// TensorProto in serialized ModelProto `bytes` (graphs, subgraphs,
/// attributes, functions: every message of the schema), reading nothing
/// else: how a save finds the data files of the model it replaces (Note
/// [Save transaction] in ModelFile.cpp). False on malformed bytes (groups
/// included). Counts as a scan.
bool scanExternalLocations(llvm::StringRef bytes, llvm::function_ref<void(llvm::StringRef)> fn);

} // namespace detail
} // namespace onnxir
ONNXIR_API_END

#endif
