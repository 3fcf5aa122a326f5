//===- WireSwitch.h - Choose the wire lift or the proto lift in a test ----===//
//
// Shared by the tests that run a load both ways: the lift straight from the
// wire bytes, and the one through a parsed ModelProto.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_TEST_UNIT_SERIALIZE_WIRESWITCH_H
#define ONNXIR_TEST_UNIT_SERIALIZE_WIRESWITCH_H

#include "../../../lib/Serialize/WireReader.h"

namespace onnxir {
namespace testwire {

/// Turns the wire lift on or off for its lifetime, then restores it.
struct WireSwitch {
  bool saved = detail::wireLiftEnabled();
  explicit WireSwitch(bool on) { detail::setWireLiftEnabled(on); }
  ~WireSwitch() { detail::setWireLiftEnabled(saved); }
};

} // namespace testwire
} // namespace onnxir

#endif
