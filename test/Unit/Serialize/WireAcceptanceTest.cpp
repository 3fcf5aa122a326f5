//===- WireAcceptanceTest.cpp - Both lifts accept what protobuf accepts ---===//
//
// Note [Wire acceptance] (lib/Serialize/WireFormat.h): varints written in
// more bytes than needed -- tags, lengths and values, at the top level, in
// nested messages and in initializers, in small files and in files of 8 MiB
// or more (the slim walk and the mapped path) -- are accepted by the wire
// lift and by the ModelProto lift exactly when protobuf's C++ reader accepts
// them (issue 31, item 9: tags and lengths of 6-10 bytes passed the wire
// lift, and an overlong initializer tag passed both lifts in big files).
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Serialize/WireReader.h"
#include "WireSwitch.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/onnx.pb.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <vector>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace onnxir;

namespace {

using testwire::WireSwitch;

// `v` as a varint of exactly `n` bytes (n >= its shortest form; bytes past
// ten may only be used to test rejection).
std::string over(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    uint8_t b = v & 0x7f;
    v = i < 9 ? v >> 7 : 0;
    s += char(b | (i < n - 1 ? 0x80 : 0));
  }
  return s;
}

// How each varint of one chosen field is written: the tag, the length (for
// length-delimited fields) or the value in `n` bytes.
enum class Part { Tag, Length, Value };
struct Where {
  int site = -1; // which field gets the long form (the order of make())
  Part part = Part::Tag;
  int n = 1;
};

class Maker {
public:
  explicit Maker(Where w) : w_(w) {}
  std::string key(uint32_t num, unsigned wt) {
    ++site_;
    fields_.push_back(num);
    return over((uint64_t)num << 3 | wt, hit(Part::Tag) ? w_.n : 1);
  }
  std::string len(uint32_t num, const std::string &payload) {
    std::string k = key(num, 2);
    int ln = hit(Part::Length) ? w_.n : 1;
    // Shortest form of the length when the payload is long.
    uint64_t l = payload.size();
    int need = 1;
    while (l >> (7 * need)) ++need;
    return k + over(l, std::max(ln, need)) + payload;
  }
  std::string val(uint32_t num, uint64_t v) {
    std::string k = key(num, 0);
    int need = 1;
    while (need < 10 && (v >> (7 * need))) ++need;
    return k + over(v, std::max(hit(Part::Value) ? w_.n : 1, need));
  }
  int sites() const { return site_ + 1; }
  uint32_t field(int site) const { return fields_[site]; }

private:
  bool hit(Part p) const { return site_ == w_.site && w_.part == p; }
  Where w_;
  int site_ = -1;
  std::vector<uint32_t> fields_;
};

// A valid model: Add(x, w) with an initializer w of `rawBytes` bytes of raw
// data (float[rawBytes / 4]) and a node attribute, every varint written by
// `m` (nested messages: graph > node > attribute, graph > initializer,
// graph > value_info > type > tensor_type > shape > dim).
std::string makeModel(Maker &m, size_t rawBytes) {
  std::string dimN = m.val(1, rawBytes / 4);
  auto vi = [&](const std::string &name) {
    std::string shape = m.len(1, dimN);
    std::string tt = m.val(1, 1) + m.len(2, shape);
    return m.len(1, name) + m.len(2, m.len(1, tt));
  };
  std::string attr = m.len(1, "alpha") + m.val(20, 2) + m.val(3, 5);
  std::string node = m.len(1, "x") + m.len(1, "w") + m.len(2, "y") + m.len(4, "Add") +
                     m.len(5, attr);
  std::string init = m.val(1, rawBytes / 4) + m.val(2, 1) + m.len(8, "w") +
                     m.len(9, std::string(rawBytes, '\x01'));
  std::string graph = m.len(1, node) + m.len(2, "g") + m.len(5, init) + m.len(11, vi("x")) +
                      m.len(12, vi("y"));
  std::string opset = m.len(1, "") + m.val(2, 17);
  return m.val(1, 8) + m.len(8, opset) + m.len(7, graph);
}

struct Verdicts {
  bool protobuf, wire, proto;
};

Verdicts judge(const std::string &bytes, const std::string &dir) {
  Verdicts v;
  proto::ModelProto mp;
  v.protobuf = mp.ParseFromString(bytes);
  std::string path = dir + "/m.onnx";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  {
    WireSwitch on(true);
    v.wire = loadModel(path).ok();
  }
  {
    WireSwitch off(false);
    v.proto = loadModel(path).ok();
  }
  return v;
}

// `fields`: only sites of these field numbers (none: all), `lengths`: the
// byte counts tried.
void sweep(size_t rawBytes, const char *tag, std::vector<uint32_t> fields,
           std::vector<int> lengths, std::vector<Part> parts) {
  std::string dir = ::testing::TempDir() + "/wireacc." + tag + "." + std::to_string(::getpid());
  fs::create_directories(dir);
  Maker count(Where{});
  std::string plain = makeModel(count, rawBytes);
  Verdicts base = judge(plain, dir);
  ASSERT_TRUE(base.protobuf && base.wire && base.proto) << "the plain model must load";
  int accepted = 0, refused = 0;
  for (int site = 0; site < count.sites(); ++site) {
    if (!fields.empty() &&
        std::find(fields.begin(), fields.end(), count.field(site)) == fields.end())
      continue;
    for (Part part : parts)
      for (int n : lengths) {
        Maker m(Where{site, part, n});
        std::string bytes = makeModel(m, rawBytes);
        if (bytes == plain) continue; // this site has no such part
        Verdicts v = judge(bytes, dir);
        (v.protobuf ? accepted : refused)++;
        EXPECT_EQ(v.wire, v.protobuf) << tag << ": site " << site << ", part " << int(part)
                                      << ", " << n << " bytes: wire lift disagrees with protobuf";
        EXPECT_EQ(v.proto, v.protobuf) << tag << ": site " << site << ", part " << int(part)
                                       << ", " << n << " bytes: ModelProto lift disagrees";
      }
  }
  // Both verdicts occur (the sweep tests something).
  if (*std::min_element(lengths.begin(), lengths.end()) <= 5) {
    EXPECT_GT(accepted, 0);
  }
  EXPECT_GT(refused, 0);
  fs::remove_all(dir);
}

TEST(WireAcceptance, SmallFile) {
  sweep(16, "small", {}, {2, 5, 6, 9, 10, 11}, {Part::Tag, Part::Length, Part::Value});
}

// Over the slim threshold (8 MiB): the slim walk (model > graph > tensor)
// and the mapped raw data. The fields the slim walk reads: the graph (7),
// the initializer (5), its dims, type, name and raw data (1, 2, 8, 9).
TEST(WireAcceptance, BigFile) {
  sweep((8u << 20) + 64, "big", {1, 2, 5, 7, 8, 9}, {6}, {Part::Tag, Part::Length});
}

// What protobuf's reader accepts, stated (Note [Wire acceptance]); the
// sweeps above compare against the library itself.
TEST(WireAcceptance, TheRules) {
  auto parse = [](const std::string &b) {
    proto::ModelProto mp;
    return mp.ParseFromString(b);
  };
  // ir_version (field 1, varint): tag in 5 bytes yes, 6 no.
  EXPECT_TRUE(parse(over(8, 5) + over(8, 1)));
  EXPECT_FALSE(parse(over(8, 6) + over(8, 1)));
  // A 5-byte tag over 32 bits: its low 32 bits (8: ir_version).
  {
    proto::ModelProto mp;
    EXPECT_TRUE(mp.ParseFromString(std::string("\x88\x80\x80\x80\x10", 5) + over(7, 1)));
    EXPECT_EQ(mp.ir_version(), 7);
  }
  // Values: 10 bytes yes, 11 no.
  EXPECT_TRUE(parse(over(8, 1) + over(8, 10)));
  EXPECT_FALSE(parse(over(8, 1) + over(8, 11)));
  // producer_name (field 2, bytes): length in 5 bytes yes, 6 no.
  EXPECT_TRUE(parse(over(2 << 3 | 2, 1) + over(1, 5) + "a"));
  EXPECT_FALSE(parse(over(2 << 3 | 2, 1) + over(1, 6) + "a"));
}

} // namespace
