//===- Npy.cpp - numpy's .npy files <-> tensors ---------------------------===//
#include "onnxir/Eval/Npy.h"

#include "onnxir/IR/DataType.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace onnxir {
namespace {

struct Descr {
  const char *code; // numpy's type code without the byte order
  DataType dt;
};
constexpr Descr kDescrs[] = {
    {"b1", DataType::Bool},    {"i1", DataType::Int8},    {"i2", DataType::Int16},
    {"i4", DataType::Int32},   {"i8", DataType::Int64},   {"u1", DataType::Uint8},
    {"u2", DataType::Uint16},  {"u4", DataType::Uint32},  {"u8", DataType::Uint64},
    {"f2", DataType::Float16}, {"f4", DataType::Float},   {"f8", DataType::Double},
};

absl::Status bad(llvm::StringRef why) {
  return absl::InvalidArgumentError(absl::StrCat("not a .npy file we read: ", why.str()));
}

/// The value text of `key` in the header dict ('descr': '<f4', ...).
std::optional<llvm::StringRef> field(llvm::StringRef header, llvm::StringRef key) {
  size_t at = header.find("'" + key.str() + "'");
  if (at == llvm::StringRef::npos) return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":")) return std::nullopt;
  return rest.ltrim();
}

} // namespace

absl::StatusOr<Tensor> parseNpy(llvm::StringRef bytes) {
  if (!startsWith(bytes, "\x93NUMPY") || bytes.size() < 10) return bad("no \\x93NUMPY magic");
  unsigned major = (unsigned char)bytes[6];
  size_t len, start;
  if (major == 1) {
    len = (unsigned char)bytes[8] | (size_t)(unsigned char)bytes[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    len = 0;
    for (int k = 0; k < 4; ++k) len |= (size_t)(unsigned char)bytes[8 + k] << (8 * k);
    start = 12;
  } else {
    return bad(absl::StrCat("format version ", major));
  }
  if (bytes.size() < start + len) return bad("truncated header");
  llvm::StringRef header = bytes.substr(start, len);
  llvm::StringRef data = bytes.drop_front(start + len);
  auto descr = field(header, "descr");
  auto fortran = field(header, "fortran_order");
  auto shape = field(header, "shape");
  if (!descr || !fortran || !shape) return bad("the header lacks descr, fortran_order or shape");
  if (startsWith(*fortran, "True")) return bad("Fortran order");
  if (descr->size() < 4 || ((*descr)[0] != '\'' && (*descr)[0] != '"'))
    return bad("descr is not a plain type string");
  char order = (*descr)[1];
  llvm::StringRef code = descr->substr(2, 2);
  std::optional<DataType> dt;
  for (const Descr &d : kDescrs)
    if (code == d.code) dt = d.dt;
  if (!dt || (order == '>' && dataTypeBits(*dt) > 8) || (order != '<' && order != '|' && order != '=' && order != '>'))
    return bad(absl::StrCat("element type ", descr->take_until([](char c) { return c == ','; }).str()));
  if (!shape->consume_front("(")) return bad("shape is not a tuple");
  std::vector<int64_t> dims;
  llvm::StringRef s = *shape;
  while (true) {
    s = s.ltrim();
    if (s.consume_front(")")) break;
    int64_t v;
    if (s.consumeInteger(10, v) || v < 0) return bad("shape is not a tuple of sizes");
    dims.push_back(v);
    s = s.ltrim();
    s.consume_front(",");
  }
  Tensor t;
  t.setDataType(*dt);
  t.setDims(dims);
  auto n = t.numElements();
  if (!n) return bad("shape overflows");
  uint64_t need = dataTypeStorageBytes(*dt, (uint64_t)*n);
  if (data.size() < need)
    return bad(absl::StrCat("data of ", data.size(), " bytes for ", need));
  t.setRaw(data.take_front(need).str());
  return t;
}

namespace {

// Note [Strings in .npy files]
//   numpy keeps text as fixed-width UTF-32 ('<Un': n code points an
//   element, shorter ones padded with zeros), so a string tensor is written
//   that way: each element's UTF-8 decoded to code points (a byte that is
//   not valid UTF-8 becomes U+FFFD), n the longest element's count (at
//   least 1, as numpy's own '<U1' for empty strings). Written only, for
//   onnxir-run's outputs (a ZipMap's string labels); reading them back is
//   numpy's business.

std::vector<uint32_t> codePoints(llvm::StringRef s) {
  std::vector<uint32_t> out;
  for (size_t k = 0; k < s.size();) {
    auto b = (uint8_t)s[k];
    size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1f : len == 3 ? b & 0x0f : b & 0x07;
    bool ok = len != 0 && k + len <= s.size();
    for (size_t j = 1; ok && j < len; ++j) {
      auto c = (uint8_t)s[k + j];
      ok = (c >> 6) == 2;
      cp = cp << 6 | (c & 0x3f);
    }
    if (!ok) {
      out.push_back(0xfffd);
      ++k;
      continue;
    }
    out.push_back(cp);
    k += len;
  }
  return out;
}

} // namespace

absl::StatusOr<std::string> writeNpy(const Tensor &t) {
  const char *code = nullptr;
  for (const Descr &d : kDescrs)
    if (d.dt == t.dataType()) code = d.code;
  std::string text, textCode; // Note [Strings in .npy files]
  if (t.dataType() == DataType::String) {
    auto strs = t.strings();
    if (!strs.ok()) return strs.status();
    std::vector<std::vector<uint32_t>> cps;
    size_t width = 1;
    for (const std::string &e : *strs) {
      cps.push_back(codePoints(e));
      width = std::max(width, cps.back().size());
    }
    for (const auto &c : cps)
      for (size_t k = 0; k < width; ++k) {
        uint32_t v = k < c.size() ? c[k] : 0;
        for (int b = 0; b < 4; ++b) text += (char)((v >> (8 * b)) & 0xff);
      }
    textCode = absl::StrCat("U", width);
    code = textCode.c_str();
  }
  if (!code)
    return absl::UnimplementedError(absl::StrCat(
        "a .npy file of element type ", dataTypeName(t.dataType()).str()));
  absl::StatusOr<llvm::StringRef> bytes = llvm::StringRef(text);
  if (t.dataType() != DataType::String) bytes = t.bytes();
  if (!bytes.ok()) return bytes.status();
  // numpy's tuple: (), (3,), (2, 3).
  std::string shape = "(";
  for (size_t k = 0; k < t.dims().size(); ++k)
    absl::StrAppend(&shape, k ? ", " : "", t.dims()[k]);
  shape += t.dims().size() == 1 ? ",)" : ")";
  bool ordered = t.dataType() == DataType::String || dataTypeBits(t.dataType()) > 8;
  std::string header = absl::StrCat("{'descr': '", ordered ? "<" : "|",
                                    code, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Padded with spaces and a newline so that the data starts 64-aligned.
  size_t fixed = 10;
  size_t total = (fixed + header.size() + 1 + 63) / 64 * 64;
  bool v2 = total - fixed > 65535;
  if (v2) total = (12 + header.size() + 1 + 63) / 64 * 64;
  size_t pre = v2 ? 12 : 10;
  header.append(total - pre - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += (char)(v2 ? 2 : 1);
  out += (char)0;
  size_t hl = header.size();
  for (size_t k = 0; k < (v2 ? 4u : 2u); ++k) out += (char)((hl >> (8 * k)) & 0xff);
  out += header;
  out.append(bytes->data(), bytes->size());
  return out;
}

} // namespace onnxir
