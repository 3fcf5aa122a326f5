//===- DataType.h - ONNX tensor element types -----------------------------===//
//
// The 26 element types of TensorProto.DataType (IR version 14), their names
// and sizes, and conversions for the reduced-precision floating point kinds.
// Sub-byte types (int4, uint4, int2, uint2, float4e2m1) are stored packed,
// low bits first, as ONNX specifies.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_DATATYPE_H
#define ONNXIR_IR_DATATYPE_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

ONNXIR_API_BEGIN
namespace onnxir {

/// Element type of a tensor; numbers are those of TensorProto.DataType.
enum class DataType : int32_t {
  Undefined = 0,
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Uint16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  Uint32 = 12,
  Uint64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  Uint4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  Uint2 = 25,
  Int2 = 26,
};

/// Highest DataType number this build knows.
inline constexpr int32_t kMaxDataType = 26;

/// True if `v` names one of the element types above (Undefined excluded).
bool isKnownDataType(int32_t v);

/// The ONNX text-syntax name (`float`, `int64`, `bfloat16`, `float8e4m3fn`,
/// `uint4`, ...); "" for unknown numbers.
llvm::StringRef dataTypeName(DataType t);

/// Inverse of dataTypeName.
std::optional<DataType> dataTypeFromName(llvm::StringRef name);

/// Storage size in bits of one element (4 for int4, 2 for int2, 8 for
/// float8 kinds); 0 for String and Undefined.
unsigned dataTypeBits(DataType t);

/// Bytes needed to store `numElements` elements packed (rounded up for
/// sub-byte types). Not meaningful for String. Saturates at UINT64_MAX.
uint64_t dataTypeStorageBytes(DataType t, uint64_t numElements);

bool isFloatingPoint(DataType t);  ///< float, double, float16, bfloat16, float8*, float4
bool isSignedInteger(DataType t);  ///< int2..int64
bool isUnsignedInteger(DataType t); ///< uint2..uint64 (not bool)
bool isComplex(DataType t);

//===----------------------------------------------------------------------===//
// Reduced-precision float conversions (round to nearest even; NaN kept)
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBFloat16(float f);
/// Float8 and float4 kinds: `t` selects the format. `saturate` follows the
/// ONNX Cast semantics for out-of-range values.
float float8ToFloat(uint8_t v, DataType t);
uint8_t floatToFloat8(float f, DataType t, bool saturate = true);

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_DATATYPE_H
