//===- WireReader.cpp - Reading protobuf wire format in place -------------===//
#include "WireReader.h"
#include "ProtoCommon.h"

#include <atomic>
#include <cstdlib>

namespace onnxir {
namespace detail {

namespace {
bool initialWireLift() {
  const char *e = std::getenv("ONNXIR_WIRE_LIFT");
  return !(e && e[0] == '0');
}
std::atomic<bool> wireLiftOn{initialWireLift()};
} // namespace

bool wireLiftEnabled() { return wireLiftOn.load(std::memory_order_relaxed); }
void setWireLiftEnabled(bool on) { wireLiftOn.store(on, std::memory_order_relaxed); }

bool wireSlimTensor(const uint8_t *base, llvm::StringRef t, std::string &out,
                    std::optional<RawView> &view) {
  WireReader r(t);
  WireField f;
  while (r.next(f)) {
    if (f.number == 9 && f.type == kLen) {
      view = RawView{uint64_t(reinterpret_cast<const uint8_t *>(f.bytes.data()) - base),
                     uint64_t(f.bytes.size())};
      wireAppendVarint(out, (9 << 3) | kLen);
      wireAppendVarint(out, 0); // present, empty: the lifter takes the view
      continue;
    }
    out.append(reinterpret_cast<const char *>(f.begin), f.end - f.begin);
  }
  return !r.bad();
}

} // namespace detail
} // namespace onnxir
