//===- WireFormat.h - Varints, tags and lengths as protobuf reads them ----===//
//
// Note [Wire acceptance]
// The one reader and writer of protobuf varints in lib/Serialize, used by the
// pre-scan (WireScan), the wire reader and lift, the slim loader (ModelLoad)
// and the lowerer (ProtoLower), so that every path accepts exactly what
// protobuf's C++ reader (libprotobuf, the ONNXIR_WIRE_LIFT=0 path) accepts:
//  - a value varint has at most 10 bytes; bits past the 64th in the tenth
//    byte are dropped (protobuf does the same), overlong encodings of small
//    values are fine;
//  - a tag has at most 5 bytes; bits past the 32nd are dropped (so
//    `88 80 80 80 10` is tag 8: libprotobuf reads it so);
//  - a length has at most 5 bytes and fits int32.
// Found empirically with crafted files (test/Unit/Serialize/
// WireAcceptanceTest.cpp checks both lifts against protobuf's verdict):
// tags and lengths of 6-10 bytes used to pass the wire lift (and the slim
// walk of files of 8 MiB or more, which rewrote them canonically before
// protobuf saw them) while protobuf refused them.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_LIB_SERIALIZE_WIREFORMAT_H
#define ONNXIR_LIB_SERIALIZE_WIREFORMAT_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxir {
namespace detail {

enum class WireRead {
  Ok,
  Truncated, ///< the data ends inside the varint
  TooLong,   ///< more bytes than protobuf reads for this kind of varint
  TooBig,    ///< the value does not fit (tags: 32 bits, lengths: int32)
};

/// Reads a varint of at most `maxBytes` bytes (the low 64 bits of it).
inline WireRead wireReadVarintN(const uint8_t *&p, const uint8_t *end, uint64_t &v,
                                int maxBytes) {
  if (p < end && *p < 0x80) {
    v = *p++;
    return WireRead::Ok;
  }
  v = 0;
  for (int i = 0; i < maxBytes; ++i) {
    if (p >= end) return WireRead::Truncated;
    uint8_t b = *p++;
    if (i < 10) v |= uint64_t(b & 0x7f) << (7 * i); // 7*9 = 63: the tenth byte's low bit
    if (!(b & 0x80)) return WireRead::Ok;
  }
  return WireRead::TooLong;
}

/// A value varint (wire type 0): at most 10 bytes.
inline WireRead wireReadValue(const uint8_t *&p, const uint8_t *end, uint64_t &v) {
  return wireReadVarintN(p, end, v, 10);
}

/// A field tag: at most 5 bytes, of which protobuf keeps the low 32 bits.
inline WireRead wireReadTag(const uint8_t *&p, const uint8_t *end, uint64_t &tag) {
  WireRead r = wireReadVarintN(p, end, tag, 5);
  tag &= 0xffffffffu;
  return r;
}

/// The length of a length-delimited field: at most 5 bytes, at most 2^31-1.
inline WireRead wireReadLength(const uint8_t *&p, const uint8_t *end, uint64_t &len) {
  WireRead r = wireReadVarintN(p, end, len, 5);
  if (r == WireRead::Ok && len > 0x7fffffffu) return WireRead::TooBig;
  return r;
}

/// Bytes of the canonical (shortest) encoding of `v`.
inline size_t wireVarintSize(uint64_t v) {
  // 1 + floor(bits / 7), bits >= 1.
  unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
  return (bits * 9 + 64) / 64;
}

/// Writes the canonical encoding of `v` at `p`; returns the end.
inline char *wireWriteVarint(char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = char(v | 0x80);
    v >>= 7;
  }
  *p++ = char(v);
  return p;
}

/// Appends the canonical encoding of `v`.
inline void wireAppendVarint(std::string &out, uint64_t v) {
  char buf[10];
  out.append(buf, size_t(wireWriteVarint(buf, v) - buf));
}

} // namespace detail
} // namespace onnxir

#endif
